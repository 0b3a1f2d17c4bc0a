//! Which provider the gateway uses, and how. Read once at start-up by the
//! binary (flags and environment) and passed down; nothing here reads the
//! environment itself.

use std::sync::Arc;
use std::time::Duration;

use super::offline::OfflineProvider;
use super::openai::{OpenAiConfig, OpenAiProvider};
use super::{ApiKey, LlmError, PriceTable, Provider};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProviderKind {
    /// Deterministic classical NLP; no model. The default.
    #[default]
    Offline,
    /// Any OpenAI-compatible endpoint.
    OpenAi,
}

impl ProviderKind {
    pub fn parse(s: &str) -> Result<ProviderKind, LlmError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "offline" | "" => Ok(ProviderKind::Offline),
            "openai" => Ok(ProviderKind::OpenAi),
            other => Err(LlmError::Config(format!("unknown provider \"{other}\" (use offline or openai)"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Offline => "offline",
            ProviderKind::OpenAi => "openai",
        }
    }
}

#[derive(Debug, Clone)]
pub struct LlmSettings {
    pub provider: ProviderKind,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    pub concurrency: usize,
    pub timeout: Duration,
    pub max_attempts: u32,
    pub embed_model: String,
    pub prices: PriceTable,
    /// Whether the "HTTP endpoint" RAG method, whose URL any member with
    /// edit rights sets, may call loopback, private and link-local
    /// addresses (see [`super::outbound`]). The owner's choice: a setting
    /// and `assay serve --allow-private-urls`; the LLM base URL itself is
    /// the owner's and may be any address.
    pub allow_private_urls: bool,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            provider: ProviderKind::Offline,
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key: None,
            concurrency: 8,
            timeout: Duration::from_secs(120),
            max_attempts: 6,
            embed_model: "text-embedding-3-small".into(),
            prices: default_prices(),
            allow_private_urls: false,
        }
    }
}

/// OpenAI's list prices (USD per 1M input/output tokens) for a few common
/// models, as published when this was written. Check your provider's and
/// override with `--llm-price` / `ASSAY_LLM_PRICE`; self-hosted models cost
/// what you say they cost (nothing, unless told).
pub fn default_prices() -> PriceTable {
    PriceTable::default()
        .with("gpt-4o-mini", 0.15, 0.60)
        .with("gpt-4o", 2.50, 10.00)
        .with("gpt-4.1-mini", 0.40, 1.60)
        .with("gpt-4.1", 2.00, 8.00)
        .with("text-embedding-3-small", 0.02, 0.0)
}

impl LlmSettings {
    /// How pages and the CLI name who answers: plainly not a model when offline.
    pub fn describe(&self) -> String {
        match self.provider {
            ProviderKind::Offline => "offline (no LLM)".into(),
            ProviderKind::OpenAi => format!("openai, {} at {}", self.model, self.base_url),
        }
    }

    /// The provider these settings describe.
    /// The endpoint settings model calls use (concurrency, timeout,
    /// attempts), without the key: also what other HTTP services Assay
    /// calls get (the "HTTP endpoint" RAG method).
    pub fn transport(&self) -> OpenAiConfig {
        let mut c = OpenAiConfig::new(&self.base_url, &self.model);
        c.concurrency = self.concurrency;
        c.timeout = self.timeout;
        c.max_attempts = self.max_attempts;
        c.public_only = !self.allow_private_urls;
        c
    }

    pub fn build_provider(&self) -> Result<Arc<dyn Provider>, LlmError> {
        Ok(match self.provider {
            ProviderKind::Offline => Arc::new(OfflineProvider::default()),
            ProviderKind::OpenAi => {
                let mut c = self.transport();
                c.api_key = self.api_key.clone();
                c.public_only = false;
                Arc::new(OpenAiProvider::new(c)?)
            }
        })
    }

    /// Parses `IN,OUT` (USD per 1M tokens) as the configured model's price.
    pub fn set_price(&mut self, spec: &str) -> Result<(), LlmError> {
        let parts: Vec<f64> =
            spec.split(',').map(|p| p.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| {
                LlmError::Config(format!(
                    "price must be INPUT,OUTPUT in USD per million tokens, e.g. 0.15,0.60 (not \"{spec}\")"
                ))
            })?;
        match parts[..] {
            [input, output] if input >= 0.0 && output >= 0.0 => {
                self.prices = std::mem::take(&mut self.prices).with(&self.model, input, output);
                Ok(())
            }
            _ => Err(LlmError::Config(format!(
                "price must be INPUT,OUTPUT in USD per million tokens, e.g. 0.15,0.60 (not \"{spec}\")"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_and_prices_parse_with_clear_errors() {
        assert_eq!(ProviderKind::parse("OpenAI").unwrap(), ProviderKind::OpenAi);
        assert_eq!(
            ProviderKind::parse("claude").unwrap_err().to_string(),
            "configuration: unknown provider \"claude\" (use offline or openai)"
        );
        let mut s = LlmSettings { model: "llama3".into(), ..Default::default() };
        s.set_price("0.1, 0.3").unwrap();
        assert!((s.prices.cost("llama3", 1_000_000, 1_000_000) - 0.4).abs() < 1e-12);
        assert!(s.set_price("free").is_err());
        assert!(s.set_price("1,2,3").is_err());
        let bad_url =
            LlmSettings { provider: ProviderKind::OpenAi, base_url: "localhost:8000".into(), ..Default::default() };
        assert!(bad_url.build_provider().is_err());
    }
}

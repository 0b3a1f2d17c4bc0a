//! Which provider the gateway uses, and how. Read once at start-up by the
//! binary (flags and environment) and passed down; nothing here reads the
//! environment itself.

use std::sync::Arc;
use std::time::Duration;

use super::offline::OfflineProvider;
use super::openai::{JsonMode, OpenAiConfig, OpenAiProvider};
use super::{ApiKey, CallStore, Gateway, LlmError, PriceTable, Provider};

pub use types::ProviderKind;

/// A provider's name as a user types it: any case, blank for the default.
pub fn parse_provider(s: &str) -> Result<ProviderKind, LlmError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "" => Ok(ProviderKind::Offline),
        name => ProviderKind::parse(name)
            .map_err(|_| LlmError::Config(format!("unknown provider \"{name}\" (use offline or openai)"))),
    }
}

/// Where the in-process MiniLM is unless the configuration says
/// ([`LlmSettings::minilm_dir`]), relative to the working directory;
/// `scripts/fetch-minilm` puts it there.
pub const DEFAULT_MINILM_DIR: &str = "data/models/all-MiniLM-L6-v2";

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
    /// Where the in-process all-MiniLM-L6-v2 is (its safetensors,
    /// tokenizer and config).
    pub minilm_dir: std::path::PathBuf,
    pub prices: PriceTable,
    /// Whether the "HTTP endpoint" RAG method, whose URL any member with
    /// edit rights sets, may call loopback, private and link-local
    /// addresses (see [`super::outbound`]). The owner's choice: a setting
    /// and `assay serve --allow-private-urls`; the LLM base URL itself is
    /// the owner's and may be any address.
    pub allow_private_urls: bool,
    /// The model's context window (`--llm-context`); `None`: the
    /// endpoint's word, else a safe default (see [`super::openai`]).
    pub context: Option<u64>,
    /// Reply budgets per task purpose (`--llm-max-tokens extract_graph=1500,…`),
    /// replacing the tasks' own.
    pub max_tokens: Vec<(String, u32)>,
    pub json_mode: JsonMode,
    /// Read replies as streams (`--llm-stream`; see [`super::openai`]).
    pub stream: bool,
    /// Send jobs' calls through the Batch API (`--llm-batch`; see
    /// [`super::batch`]): at its price, answered within its window. Calls
    /// outside jobs (a connection test) go live.
    pub batch: bool,
    /// The deployment's limit on model requests in flight, shared with its
    /// other processes (set by the runner on a shared database; `None`:
    /// `concurrency` is this process's alone).
    pub shared_limit: Option<super::openai::SharedLimitHandle>,
    /// The settings given as command-line flags (`provider`, `base_url`,
    /// `model`, `concurrency`): the most specific word, which an
    /// experiment manifest's `[llm]` does not override (flag >
    /// manifest > environment).
    pub pinned: Vec<&'static str>,
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
            minilm_dir: DEFAULT_MINILM_DIR.into(),
            prices: default_prices(),
            allow_private_urls: false,
            context: None,
            max_tokens: Vec::new(),
            json_mode: JsonMode::Auto,
            stream: false,
            batch: false,
            shared_limit: None,
            pinned: Vec::new(),
        }
    }
}

/// OpenAI's list prices (USD per 1M input/output tokens, and input read
/// from its prompt cache) for a few common models, as published when this
/// was written. Check your provider's and
/// override with `--llm-price` / `ASSAY_LLM_PRICE`; self-hosted models cost
/// what you say they cost (nothing, unless told).
pub fn default_prices() -> PriceTable {
    PriceTable::default()
        .with("gpt-4o-mini", 0.15, 0.60)
        .with_cached("gpt-4o-mini", 0.075)
        .with("gpt-4o", 2.50, 10.00)
        .with_cached("gpt-4o", 1.25)
        .with("gpt-4.1-mini", 0.40, 1.60)
        .with_cached("gpt-4.1-mini", 0.10)
        .with("gpt-4.1", 2.00, 8.00)
        .with_cached("gpt-4.1", 0.50)
        .with("text-embedding-3-small", 0.02, 0.0)
}

impl LlmSettings {
    /// How pages and the CLI name who answers: plainly not a model when offline.
    pub fn describe(&self) -> String {
        // As every page names who answered (`CallProvider::label`), with
        // where it is.
        match self.provider {
            ProviderKind::Offline => types::CallProvider::Offline.label(&self.model),
            ProviderKind::OpenAi => {
                let batch = if self.batches() { " (Batch API)" } else { "" };
                format!("{} at {}{batch}", types::CallProvider::OpenAi.label(&self.model), self.base_url)
            }
        }
    }

    /// Whether jobs' calls go through the Batch API (an endpoint's only).
    pub fn batches(&self) -> bool {
        self.batch && self.provider == ProviderKind::OpenAi
    }

    /// Items a job runs at once: the configured concurrency, or with the
    /// Batch API as many as a batch holds (each item's calls wait in its queue).
    pub fn job_concurrency(&self) -> usize {
        if self.batches() {
            super::batch::BatchSettings::default().max_requests
        } else {
            self.concurrency
        }
    }

    /// What `prompt` and `completion` tokens of `model` cost in a job: the
    /// price, or the Batch API's share of it.
    pub fn job_cost(&self, model: &str, prompt: u64, completion: u64) -> f64 {
        self.job_cost_cached(model, prompt, 0, completion)
    }

    /// [`Self::job_cost`] when `cached` of the prompt tokens are read from
    /// the provider's prefix cache (at the model's cached rate, where one is set).
    pub fn job_cost_cached(&self, model: &str, prompt: u64, cached: u64, completion: u64) -> f64 {
        let factor = if self.batches() { super::batch::PRICE_FACTOR } else { 1.0 };
        self.prices.cost_cached(model, prompt, cached, completion) * factor
    }

    /// The gateway a job's items call: [`Self::gateway`], through the
    /// Batch API when these settings say so, its batches kept in `journal`.
    pub fn job_gateway(
        &self,
        store: std::sync::Arc<dyn CallStore>,
        offline: fn() -> OfflineProvider,
        journal: Arc<dyn super::batch::BatchJournal>,
    ) -> Result<Gateway, LlmError> {
        if !self.batches() {
            return self.gateway(store, offline);
        }
        let settings = super::batch::BatchSettings::default();
        let provider =
            super::batch::BatchProvider::with_journal(OpenAiProvider::new(self.model_endpoint())?, settings, journal);
        Ok(self.gateway_over(Arc::new(provider), store))
    }

    /// The endpoint settings model calls use (concurrency, timeout,
    /// attempts), without the key: also what other HTTP services Assay
    /// calls get (the "HTTP endpoint" RAG method).
    pub fn transport(&self) -> OpenAiConfig {
        let mut c = OpenAiConfig::new(&self.base_url, &self.model);
        c.concurrency = self.concurrency;
        c.timeout = self.timeout;
        c.max_attempts = self.max_attempts;
        c.public_only = !self.allow_private_urls;
        c.context = self.context;
        c.json_mode = self.json_mode;
        c.stream = self.stream;
        c
    }

    /// A gateway over these settings' provider, writing to `store`, with
    /// their prices, embedding model and reply budgets. `offline` makes the
    /// offline provider with the tasks it should know (`crate::offline::provider`
    /// has every stage's); the LLM layer names no stage.
    pub fn gateway(
        &self,
        store: std::sync::Arc<dyn CallStore>,
        offline: fn() -> OfflineProvider,
    ) -> Result<Gateway, LlmError> {
        Ok(self.gateway_over(self.build_provider(offline)?, store))
    }

    /// A gateway over `provider` with these settings' prices, embedding
    /// model and reply budgets.
    fn gateway_over(&self, provider: Arc<dyn Provider>, store: Arc<dyn CallStore>) -> Gateway {
        let mut g = Gateway::new(provider, store, self.prices.clone()).with_embed_model(&self.embed_model);
        for (purpose, n) in &self.max_tokens {
            g = g.with_max_tokens(purpose, *n);
        }
        g
    }

    /// The model endpoint's settings: [`Self::transport`] with the key, and
    /// the deployment's limit on model requests (not a RAG endpoint's,
    /// which `transport` serves).
    fn model_endpoint(&self) -> OpenAiConfig {
        let mut c = self.transport();
        c.api_key = self.api_key.clone();
        c.public_only = false;
        c.shared_limit = self.shared_limit.clone();
        c
    }

    /// Whether the endpoint runs on this machine or the local network
    /// (a llama.cpp server, Ollama, vLLM on a lab box).
    pub fn is_local(&self) -> bool {
        let named_local = reqwest::Url::parse(&self.base_url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h == "localhost" || h.ends_with(".local") || h.ends_with(".localhost")))
            .unwrap_or(false);
        self.provider == ProviderKind::OpenAi && (named_local || super::outbound::check_url(&self.base_url).is_err())
    }

    /// Advice for an endpoint that answers one request at a time (`serial`,
    /// as [`answers_one_at_a_time`] measured): requests queued inside the
    /// server count against each one's timeout, and a queue of them only
    /// makes each wait longer.
    pub fn serial_advice(&self, serial: bool) -> Option<String> {
        if !serial || (self.concurrency <= 1 && self.timeout.as_secs() >= 300) {
            return None;
        }
        Some(format!(
            "This endpoint answers one request at a time: use concurrency 1 (now {}) and a timeout of at least 300 s \
             (now {} s), e.g. ASSAY_LLM_CONCURRENCY=1 ASSAY_LLM_TIMEOUT=300; otherwise requests wait inside the server \
             and time out while waiting.",
            self.concurrency,
            self.timeout.as_secs()
        ))
    }

    /// Parses `PURPOSE=N,PURPOSE=N` (e.g. `extract_graph=1500,judge_scores=400`)
    /// into the reply budgets.
    pub fn set_max_tokens(&mut self, spec: &str) -> Result<(), LlmError> {
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let parsed = part.split_once('=').and_then(|(p, n)| {
                let n = n.trim().parse::<u32>().ok().filter(|n| *n > 0)?;
                Some((p.trim().to_string(), n)).filter(|(p, _)| !p.is_empty())
            });
            let Some((purpose, n)) = parsed else {
                return Err(LlmError::Config(format!(
                    "max tokens must be PURPOSE=N, e.g. extract_graph=1500,judge_scores=400 (not \"{part}\")"
                )));
            };
            self.max_tokens.retain(|(p, _)| *p != purpose);
            self.max_tokens.push((purpose, n));
        }
        Ok(())
    }

    /// The provider these settings name (`offline` as [`Self::gateway`] says).
    pub fn build_provider(&self, offline: fn() -> OfflineProvider) -> Result<Arc<dyn Provider>, LlmError> {
        Ok(match self.provider {
            ProviderKind::Offline => Arc::new(offline()),
            ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(self.model_endpoint())?),
        })
    }

    /// Parses `IN,OUT[,CACHED]` (USD per 1M tokens; CACHED: input read
    /// from the provider's prompt cache, else at IN) as the configured
    /// model's price.
    pub fn set_price(&mut self, spec: &str) -> Result<(), LlmError> {
        let refused = || {
            LlmError::Config(format!(
                "price must be INPUT,OUTPUT[,CACHED_INPUT] in USD per million tokens, e.g. 0.15,0.60,0.075 (not \"{spec}\")"
            ))
        };
        let parts: Vec<f64> =
            spec.split(',').map(|p| p.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| refused())?;
        if parts.iter().any(|p| !p.is_finite() || *p < 0.0) {
            return Err(refused());
        }
        let prices = std::mem::take(&mut self.prices);
        self.prices = match parts[..] {
            [input, output] => prices.with(&self.model, input, output),
            [input, output, cached] => prices.with(&self.model, input, output).with_cached(&self.model, cached),
            _ => {
                self.prices = prices;
                return Err(refused());
            }
        };
        Ok(())
    }
}

/// Whether the endpoint behind `gateway` answers one request at a time:
/// a ping's latency (`one`, measured by the caller) against two pings sent
/// together (a server that queues takes about twice as long for the two).
/// A server that answers within 50 ms is not asked: queueing behind it
/// costs nothing worth advice.
pub async fn answers_one_at_a_time(gateway: &Gateway, one: std::time::Duration) -> Result<bool, LlmError> {
    use super::{CallContext, ChatRequest, Message};
    let ping = |n: u32| {
        let mut req = ChatRequest::new("ping", vec![Message::user(format!("Reply with the single word: pong ({n})"))]);
        req.max_tokens = Some(16);
        req
    };
    if one < std::time::Duration::from_millis(50) {
        return Ok(false);
    }
    let ctx = CallContext::default();
    let gateway = gateway.clone().without_cache();
    let started = std::time::Instant::now();
    let (two, three) = (ping(2), ping(3));
    let (a, b) = tokio::join!(gateway.chat(&two, &ctx), gateway.chat(&three, &ctx));
    a?;
    b?;
    Ok(started.elapsed().as_secs_f64() > 1.6 * one.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_and_prices_parse_with_clear_errors() {
        assert_eq!(parse_provider("OpenAI").unwrap(), ProviderKind::OpenAi);
        assert_eq!(
            parse_provider("claude").unwrap_err().to_string(),
            "configuration: unknown provider \"claude\" (use offline or openai)"
        );
        let mut s = LlmSettings { model: "llama3".into(), ..Default::default() };
        s.set_price("0.1, 0.3").unwrap();
        assert!((s.prices.cost("llama3", 1_000_000, 1_000_000) - 0.4).abs() < 1e-12);
        assert!(s.set_price("free").is_err());
        assert!(s.set_price("1,2,3,4").is_err());
        assert!(s.set_price("1,-2").is_err());
        // A cached-input rate: the cached share of the prompt at it.
        s.set_price("1,4,0.25").unwrap();
        assert!((s.prices.cost_cached("llama3", 1_000_000, 600_000, 0) - (0.4 + 0.15)).abs() < 1e-12);
        assert!((s.prices.cost("llama3", 1_000_000, 0) - 1.0).abs() < 1e-12);
        let bad_url =
            LlmSettings { provider: ProviderKind::OpenAi, base_url: "localhost:8000".into(), ..Default::default() };
        assert!(bad_url.build_provider(OfflineProvider::new).is_err());
    }
}

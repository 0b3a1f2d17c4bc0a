//! Settings saved from the web interface.

use super::{on_db, Db};
use engine::llm::settings::{LlmSettings, ProviderKind};
use engine::llm::ApiKey;
use serde::{Deserialize, Serialize};

use crate::error::{AppError, AppResult};

/// The LLM settings as stored (the key only when one was entered in the browser).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StoredLlm {
    pub provider: ProviderKind,
    pub base_url: String,
    pub model: String,
    pub concurrency: usize,
    pub timeout_secs: u64,
    /// The model's price (saved before cached input had a rate: `[IN, OUT]`).
    #[serde(default, deserialize_with = "types::llm::saved::read")]
    pub price: Option<types::llm::Price>,
    pub api_key: Option<String>,
    /// The HTTP method may call private addresses (added later: absent in
    /// older saves, which did not allow it).
    #[serde(default)]
    pub allow_private_urls: bool,
    /// The model's context window (absent: the endpoint's word or the default).
    #[serde(default)]
    pub context: Option<u64>,
}

impl StoredLlm {
    /// Applies the stored values over `base` (the flags and environment).
    pub fn apply(&self, base: &LlmSettings) -> LlmSettings {
        let mut s = LlmSettings {
            provider: self.provider,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            concurrency: self.concurrency.max(1),
            timeout: std::time::Duration::from_secs(self.timeout_secs.max(1)),
            api_key: self.api_key.clone().and_then(ApiKey::new).or_else(|| base.api_key.clone()),
            allow_private_urls: self.allow_private_urls || base.allow_private_urls,
            context: self.context.or(base.context),
            ..base.clone()
        };
        if let Some(p) = self.price {
            s.prices.0.insert(s.model.clone(), p);
        }
        s
    }
}

pub async fn load_llm(pool: &Db) -> AppResult<Option<StoredLlm>> {
    on_db!(pool, |db| {
        let value: Option<String> =
            sqlx::query_scalar("SELECT value FROM settings WHERE key = 'llm'").fetch_optional(db).await?;
        value.map(|v| serde_json::from_str(&v)).transpose().map_err(|e| {
            AppError::Invalid(format!("the saved LLM settings (settings key \"llm\") cannot be read: {e}"))
        })
    })
}

pub async fn save_llm(pool: &Db, stored: &StoredLlm) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES ('llm', $1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        )
        .bind(serde_json::to_string(stored).unwrap_or_default())
        .execute(db)
        .await?;
        Ok(())
    })
}

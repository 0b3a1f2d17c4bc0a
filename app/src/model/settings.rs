//! The LLM settings as the Settings page shows them.

use serde::{Deserialize, Serialize};

/// The LLM configuration as the browser may see it: never the key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmInfo {
    pub provider: types::ProviderKind,
    /// "offline (no LLM)", or "openai · MODEL at URL".
    pub label: String,
    /// The endpoint and model configured for `openai` (kept while offline).
    pub base_url: String,
    pub model: String,
    pub concurrency: i64,
    pub timeout_secs: i64,
    pub key_set: bool,
    /// The model's price (USD per 1M tokens), when known.
    pub price: Option<types::llm::Price>,
    /// The "HTTP endpoint" method may call private addresses.
    pub allow_private_urls: bool,
    /// The model's context window when set here or by `--llm-context`
    /// (else the endpoint's word or a default, see `llm ping`).
    #[serde(default)]
    pub context: Option<u64>,
}

//! What the server knows at run time: configuration read once at start-up,
//! and the state every request handler and server function reaches.

use crate::ssr::store::Db;
use axum::extract::FromRef;
use engine::corpus::ImportLimits;
use leptos::prelude::LeptosOptions;

use crate::error::{AppError, AppResult};
use crate::model::UploadLimits;

/// Server configuration, read once by the binary and passed down.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest request an upload may send, all files together.
    pub max_upload_bytes: u64,
    pub import: ImportLimits,
    /// The LLM settings from flags and environment, under any saved ones.
    pub llm_base: engine::llm::settings::LlmSettings,
    /// Everything but rater links needs the owner logged in (off only with
    /// `assay serve --no-login`, for a machine no one else reaches).
    pub require_login: bool,
    /// Mark cookies `Secure` even when the request does not show it came
    /// over HTTPS (a proxy that terminates TLS without `X-Forwarded-Proto`).
    pub secure_cookies: bool,
    /// How a variable the configuration names is read (a manifest's
    /// `llm.api_key_env`): the binary passes the process environment; by
    /// default nothing is found. The layers below never read it themselves.
    pub env: fn(&str) -> Option<String>,
    /// The address people reach this server at (`--base-url`, e.g.
    /// `https://assay.lab.example`): share and study links are shown under
    /// it. Without it, the request's own scheme and host are used.
    pub base_url: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        let import = ImportLimits::default();
        Config {
            max_upload_bytes: import.max_file_bytes,
            import,
            llm_base: Default::default(),
            require_login: true,
            secure_cookies: false,
            env: |_| None,
            base_url: None,
        }
    }
}

impl Config {
    pub fn upload_limits(&self) -> UploadLimits {
        UploadLimits { max_upload_bytes: self.max_upload_bytes, max_file_bytes: self.import.max_file_bytes }
    }
}

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub pool: Db,
    pub config: std::sync::Arc<Config>,
    /// The LLM settings in force; replaced when saved from the Settings page.
    pub llm: std::sync::Arc<std::sync::RwLock<std::sync::Arc<engine::llm::settings::LlmSettings>>>,
    pub jobs: std::sync::Arc<crate::ssr::jobs::JobManager>,
    /// Failed logins, for slowing down guessing.
    pub throttle: std::sync::Arc<crate::ssr::auth::Throttle>,
    /// New raters per address at open study links.
    pub raters: std::sync::Arc<crate::ssr::studies::RaterLimit>,
}

impl AppState {
    /// A snapshot of the LLM settings in force.
    pub fn llm(&self) -> std::sync::Arc<engine::llm::settings::LlmSettings> {
        self.llm.read().map(|s| s.clone()).unwrap_or_else(|p| p.into_inner().clone())
    }
}

/// The state, inside a server function.
pub fn app_state() -> AppResult<AppState> {
    leptos::prelude::use_context::<AppState>().ok_or_else(|| {
        tracing::error!("AppState missing from the server-function context");
        AppError::Internal
    })
}

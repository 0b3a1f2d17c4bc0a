//! The server-wide LLM settings and the connection test.

use leptos::prelude::*;

use crate::error::AppError;

use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::Request;

#[cfg(feature = "ssr")]
fn llm_info(llm: &engine::llm::settings::LlmSettings) -> LlmInfo {
    let offline = llm.provider == ProviderKind::Offline;
    LlmInfo {
        provider: llm.provider,
        label: llm.describe(),
        base_url: llm.base_url.clone(),
        model: llm.model.clone(),
        concurrency: llm.concurrency as i64,
        timeout_secs: llm.timeout.as_secs() as i64,
        key_set: llm.api_key.is_some(),
        price: if offline { None } else { llm.prices.0.get(&llm.model).copied() },
        allow_private_urls: llm.allow_private_urls,
        context: llm.context,
    }
}

#[cfg(feature = "ssr")]
use types::ProviderKind;

#[server(output = crate::codec::Json)]
pub async fn get_llm_info() -> Result<LlmInfo, AppError> {
    let call = Request::now()?;
    let info = llm_info(&call.state.llm());
    if call.caller.owner {
        return Ok(info);
    }
    // Members see which provider and model produce their results (the
    // pages say when it is offline), not where the server sends requests.
    let label = match info.provider {
        ProviderKind::Offline => info.label,
        _ => format!("{}, {}", info.provider, info.model),
    };
    Ok(LlmInfo { label, base_url: String::new(), key_set: false, allow_private_urls: false, ..info })
}

/// Saves the LLM settings (server-side) and puts them in force at once.
/// `api_key` empty keeps the current key; `clear_key` removes a stored one.
/// The key is never sent back.
#[server(output = crate::codec::Json)]
pub async fn save_llm_settings(
    provider: String,
    base_url: String,
    model: String,
    concurrency: String,
    timeout_secs: String,
    price: String,
    api_key: String,
    clear_key: Option<String>,
    allow_private_urls: Option<String>,
    #[server(default)] context: Option<String>,
) -> Result<LlmInfo, AppError> {
    let call = Request::now()?;
    call.require_owner("change the LLM settings")?;
    use crate::ssr::store::settings::{save_llm, StoredLlm};
    let state = call.state.clone();
    let invalid =
        |e: engine::llm::LlmError| AppError::Invalid(e.to_string().trim_start_matches("configuration: ").to_string());
    let kind = engine::llm::settings::parse_provider(&provider).map_err(invalid)?;
    let number =
        |field: &str, value: &str| {
            value.trim().parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                AppError::Invalid(format!("{field} must be a whole number of at least 1, not \"{value}\""))
            })
        };
    let previous = crate::ssr::store::settings::load_llm(&state.pool).await?;
    let mut stored = StoredLlm {
        provider: kind,
        base_url: base_url.trim().trim_end_matches('/').to_string(),
        model: model.trim().to_string(),
        concurrency: number("concurrency", &concurrency)? as usize,
        timeout_secs: number("timeout", &timeout_secs)?,
        price: None,
        api_key: if clear_key.is_some() { None } else { previous.and_then(|p| p.api_key) },
        allow_private_urls: allow_private_urls.is_some(),
        context: match context.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            None => None,
            Some(c) => Some(c.parse::<u64>().ok().filter(|n| *n >= 512).ok_or_else(|| {
                AppError::Invalid(format!(
                    "the context window must be a whole number of at least 512 tokens, not \"{c}\""
                ))
            })?),
        },
    };
    if !api_key.trim().is_empty() {
        stored.api_key = Some(api_key.trim().to_string());
    }
    if stored.model.is_empty() {
        return Err(AppError::Invalid("a model name is needed".into()));
    }
    // The base settings are the flags and environment the server started with.
    let mut applied = stored.apply(&state.config.llm_base);
    if !price.trim().is_empty() {
        applied.set_price(&price).map_err(invalid)?;
        stored.price = applied.prices.0.get(&applied.model).copied();
    }
    applied.build_provider(engine::offline::provider).map_err(invalid)?;
    save_llm(&state.pool, &stored).await?;
    *state.llm.write().map_err(|_| AppError::Internal)? = std::sync::Arc::new(applied);
    tracing::info!(provider = %stored.provider, model = %stored.model, "LLM settings saved");
    Ok(llm_info(&state.llm()))
}

/// Sends one tiny request through the gateway (never cached) and returns the
/// reply, or the exact error.
#[server(output = crate::codec::Json)]
pub async fn test_connection() -> Result<String, AppError> {
    let call = Request::now()?;
    call.require_owner("test the LLM connection")?;
    use engine::llm::{CallContext, ChatRequest, Message};
    let state = call.state.clone();
    let settings = engine::llm::settings::LlmSettings { max_attempts: 2, ..(*state.llm()).clone() };
    let store = std::sync::Arc::new(crate::ssr::store::calls::SqliteCallStore::new(state.pool.clone()));
    let gateway = settings
        .gateway(store, engine::offline::provider)
        .map_err(|e| AppError::Invalid(e.to_string()))?
        .without_cache();
    let mut req = ChatRequest::new("ping", vec![Message::user("Reply with the single word: pong")]);
    req.max_tokens = Some(16);
    match gateway.chat(&req, &CallContext::default()).await {
        Ok(r) => {
            let mut said = format!(
                "{} replied \"{}\" ({} prompt + {} completion tokens, {} ms, {} attempt{})",
                r.model,
                r.text,
                r.prompt_tokens,
                r.completion_tokens,
                r.latency_ms,
                r.attempts,
                if r.attempts == 1 { "" } else { "s" }
            );
            if let Some(c) = gateway.provider().context_window().await {
                said.push_str(&format!(". Context window: {c} tokens"));
            }
            // A server on this machine or network: does it answer one request at a time?
            if settings.is_local() {
                let one = std::time::Duration::from_millis(r.latency_ms);
                let serial = engine::llm::settings::answers_one_at_a_time(&gateway, one).await;
                if let Some(advice) = serial.ok().and_then(|s| settings.serial_advice(s)) {
                    said.push_str(&format!(". {advice}"));
                }
            }
            Ok(said)
        }
        Err(e) => Err(AppError::Invalid(format!("the call failed: {e}"))),
    }
}

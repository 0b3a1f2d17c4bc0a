//! `assay llm`: check the LLM configuration.

use anyhow::Context;
use app::ssr::store::Db;
use clap::Subcommand;
use engine::llm::settings::LlmSettings;
use engine::llm::{CallContext, ChatRequest, Message};
use serde_json::json;
use std::process::ExitCode;

use super::*;

#[derive(Subcommand, Debug)]
pub(super) enum LlmCommand {
    /// Send one tiny request (never cached) and print the reply, tokens and latency.
    Ping {
        #[arg(long, default_value = "Reply with the single word: pong")]
        message: String,
    },
}

/// "offline (no LLM)", or the model and where it runs.
pub(super) async fn ping(pool: Db, out: Output, llm: &LlmSettings, message: String) -> anyhow::Result<ExitCode> {
    // A connection test reports the exact error quickly: one retry at most.
    let store = std::sync::Arc::new(app::ssr::store::calls::SqliteCallStore::new(pool));
    let gateway =
        LlmSettings { max_attempts: 2, ..llm.clone() }.gateway(store, engine::offline::provider)?.without_cache();
    let mut req = ChatRequest::new("ping", vec![Message::user(message)]);
    req.max_tokens = Some(16);
    let reply = gateway.chat(&req, &CallContext::default()).await.context("LLM call failed")?;
    // A local server: does it answer one request at a time?
    let advice = if llm.is_local() {
        let one = std::time::Duration::from_millis(reply.latency_ms);
        engine::llm::settings::answers_one_at_a_time(&gateway, one)
            .await
            .ok()
            .and_then(|serial| llm.serial_advice(serial))
    } else {
        None
    };
    let context = gateway.provider().context_window().await;
    out.print(
        json!({"provider": reply.provider, "base_url": gateway.provider().base_url(), "model": reply.model, "reply": reply.text,
               "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
               "latency_ms": reply.latency_ms, "attempts": reply.attempts, "cost_usd": reply.cost_usd,
               "context_window": context, "advice": advice}),
        || {
            let mut s = format!(
                "{}\nreply: {}\n{} prompt + {} completion tokens, {} ms, {} attempt{}, ${:.6}",
                llm.describe(),
                reply.text,
                reply.prompt_tokens,
                reply.completion_tokens,
                reply.latency_ms,
                reply.attempts,
                if reply.attempts == 1 { "" } else { "s" },
                reply.cost_usd
            );
            if let Some(c) = context {
                s.push_str(&format!("\ncontext window: {c} tokens (prompts and reply budgets are fitted to it)"));
            }
            if let Some(a) = &advice {
                s.push_str(&format!("\nadvice: {a}"));
            }
            s
        },
    );
    Ok(ExitCode::SUCCESS)
}

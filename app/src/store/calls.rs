//! The LLM cache and call log in SQLite: `engine::llm::CallStore` for the
//! server and the CLI.

use engine::llm::{BoxFuture, CachedReply, CallRecord, CallStore};
use sqlx::SqlitePool;

pub struct SqliteCallStore {
    pool: SqlitePool,
}

impl SqliteCallStore {
    pub fn new(pool: SqlitePool) -> SqliteCallStore {
        SqliteCallStore { pool }
    }
}

fn store_error(e: sqlx::Error) -> String {
    tracing::error!(error = %e, "LLM call store");
    "the call log could not be written".to_string()
}

impl CallStore for SqliteCallStore {
    fn cached<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<CachedReply>, String>> {
        Box::pin(async move {
            let row: Option<(String, String, i64, i64)> =
                sqlx::query_as("SELECT reply, model, prompt_tokens, completion_tokens FROM llm_cache WHERE key = ?")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(store_error)?;
            Ok(row.map(|(text, model, p, c)| CachedReply {
                text,
                model,
                prompt_tokens: p as u64,
                completion_tokens: c as u64,
            }))
        })
    }

    fn record<'a>(&'a self, call: &'a CallRecord) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let mut tx = self.pool.begin().await.map_err(store_error)?;
            if let (Some(reply), false) = (&call.reply, call.cached) {
                sqlx::query(
                    "INSERT OR REPLACE INTO llm_cache (key, provider, model, reply, prompt_tokens, completion_tokens)
                     VALUES (?, ?, ?, ?, ?, ?)",
                )
                .bind(&call.key)
                .bind(&call.provider)
                .bind(&call.model)
                .bind(reply)
                .bind(call.prompt_tokens as i64)
                .bind(call.completion_tokens as i64)
                .execute(&mut *tx)
                .await
                .map_err(store_error)?;
            }
            // The prompt once per distinct text (judging repeats it per trial).
            let messages = serde_json::to_string(&call.messages).unwrap_or_default();
            let hash = crate::tokens::hash(&messages);
            sqlx::query("INSERT OR IGNORE INTO llm_messages (hash, messages) VALUES (?, ?)")
                .bind(&hash)
                .bind(&messages)
                .execute(&mut *tx)
                .await
                .map_err(store_error)?;
            sqlx::query(
                "INSERT INTO llm_calls (job_id, item, purpose, provider, base_url, model, sample, cache_key, prompt_hash,
                    messages, messages_hash, reply, error, prompt_tokens, completion_tokens, cost_usd, latency_ms,
                    attempts, cached)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(call.context.job_id)
            .bind(&call.context.item)
            .bind(&call.purpose)
            .bind(&call.provider)
            .bind(&call.base_url)
            .bind(&call.model)
            .bind(call.sample as i64)
            .bind(&call.key)
            .bind(&call.context.prompt_hash)
            .bind(&hash)
            .bind(&call.reply)
            .bind(&call.error)
            .bind(call.prompt_tokens as i64)
            .bind(call.completion_tokens as i64)
            .bind(call.cost_usd)
            .bind(call.latency_ms as i64)
            .bind(call.attempts as i64)
            .bind(call.cached)
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
            tx.commit().await.map_err(store_error)
        })
    }
}

//! The LLM cache and call log in SQLite: `engine::llm::CallStore` for the
//! server and the CLI.
//!
//! A job's store is *buffered* for free calls (offline, simulated): they
//! are kept in memory and written with the outcome of the next item the job
//! records, in that item's transaction (`SqliteJobStore::with_calls`), as
//! multi-row inserts, so judging's 50 offline calls per item cost one
//! transaction instead of 50. A *paid* reply (from an endpoint) is written
//! in its own transaction the moment it arrives, before anything else is
//! done with it: a process killed after that pays for it once only; only
//! the calls in flight at the kill (at most the configured concurrency)
//! are lost and paid again on resume. Replies waiting to be
//! written answer cache lookups from memory, and a lookup of a key the
//! cache does not hold (the store knows its keys' hashes) does not reach
//! SQLite at all.

use std::collections::HashMap;
use std::sync::Mutex;

use engine::llm::{BoxFuture, CachedReply, CallRecord, CallStore};
use engine::memo::quick_hash;
use sqlx::QueryBuilder;

use super::{on_db, Db};

/// Calls waiting to be written, at most this many (then written at once).
const MAX_PENDING: usize = 512;
/// Rows per INSERT statement (llm_calls binds 22 values per row; SQLite
/// takes at most 32,766 per statement).
const ROWS_PER_INSERT: usize = 400;

pub struct SqliteCallStore {
    pool: Db,
    /// `None`: every call is written as it is recorded.
    pending: Option<Mutex<Pending>>,
}

#[derive(Default)]
struct Pending {
    records: Vec<CallRecord>,
    /// Replies of pending (or being written) uncached calls, by cache key.
    replies: HashMap<String, CachedReply>,
    /// Hashes of every key in the cache (read when the store was made, then
    /// kept up to date): a key not among them is a miss without asking
    /// SQLite — on a fresh experiment, nearly every lookup. `None` on a
    /// database several processes write (PostgreSQL): there a reply another
    /// process cached meanwhile (an item whose claimant died after paying
    /// for its calls) must be found, not paid for again.
    keys: Option<std::collections::HashSet<u64>>,
}

impl SqliteCallStore {
    /// A store that writes each call as it is recorded.
    pub fn new(pool: Db) -> SqliteCallStore {
        SqliteCallStore { pool, pending: None }
    }

    /// A store that keeps calls until [`take`](Self::take)n with a job
    /// item, [`flush`](Self::flush)ed, or 512 are waiting.
    pub async fn buffered(pool: Db) -> Result<SqliteCallStore, sqlx::Error> {
        let keys = if pool.is_postgres() {
            None
        } else {
            let keys: Vec<String> =
                on_db!(&pool, |db| sqlx::query_scalar("SELECT key FROM llm_cache").fetch_all(db).await)?;
            Some(keys.iter().map(quick_hash).collect())
        };
        let pending = Pending { keys, ..Default::default() };
        Ok(SqliteCallStore { pool, pending: Some(Mutex::new(pending)) })
    }

    fn lock(&self) -> Option<std::sync::MutexGuard<'_, Pending>> {
        self.pending.as_ref().map(|p| p.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The calls waiting to be written (their replies still answer lookups
    /// until [`written`](Self::written)).
    pub fn take(&self) -> Vec<CallRecord> {
        self.lock().map(|mut p| std::mem::take(&mut p.records)).unwrap_or_default()
    }

    /// Keeps `call` to be written later; `None` if this store writes at
    /// once, else whether the buffer is full.
    fn keep(&self, call: CallRecord) -> Option<bool> {
        let mut p = self.lock()?;
        if let (Some(reply), false) = (&call.reply, call.cached) {
            if let Some(keys) = &mut p.keys {
                keys.insert(quick_hash(&call.key));
            }
            p.replies.insert(
                call.key.clone(),
                CachedReply {
                    text: reply.clone(),
                    model: call.model.clone(),
                    prompt_tokens: call.prompt_tokens,
                    completion_tokens: call.completion_tokens,
                    truncated: call.truncated,
                },
            );
        }
        p.records.push(call);
        Some(p.records.len() >= MAX_PENDING)
    }

    /// `records` are in the database: their replies are read from there now.
    pub fn written(&self, records: &[CallRecord]) {
        if let Some(mut p) = self.lock() {
            for r in records {
                p.replies.remove(&r.key);
            }
        }
    }

    /// `records` could not be written: they wait for the next write.
    pub fn restore(&self, mut records: Vec<CallRecord>) {
        if let Some(mut p) = self.lock() {
            records.append(&mut p.records);
            p.records = records;
        }
    }

    /// Writes every waiting call.
    pub async fn flush(&self) -> Result<(), String> {
        let records = self.take();
        if records.is_empty() {
            return Ok(());
        }
        let written = on_db!(&self.pool, |db| async {
            let mut tx = super::begin(db).await?;
            tx.write_calls(&records).await?;
            tx.commit().await
        }
        .await);
        match written {
            Ok(()) => {
                self.written(&records);
                Ok(())
            }
            Err(e) => {
                self.restore(records);
                Err(store_error(e))
            }
        }
    }
}

pub(crate) fn store_error(e: sqlx::Error) -> String {
    tracing::error!(error = %e, "LLM call store");
    format!("the call log could not be written ({})", crate::ssr::store::db_reason(&e))
}

super::connection_steps! {
    pub(crate) trait CallSteps {
        /// Writes calls to the log (and uncached replies to the cache), each
        /// distinct prompt once, in the caller's transaction.
async fn write_calls(&mut self, records: &[CallRecord]) -> Result<(), sqlx::Error> {
    if records.is_empty() {
        return Ok(());
    }
    // Judging repeats a prompt per trial and repeat: each text is kept once,
    // and serialised and hashed once per batch (a 64-bit hash of the
    // messages finds the repeats first).
    let mut by_messages: HashMap<u64, usize> = HashMap::new();
    let mut distinct: Vec<(String, String)> = Vec::new();
    let prompts: Vec<usize> = records
        .iter()
        .map(|call| {
            *by_messages.entry(quick_hash(&call.messages)).or_insert_with(|| {
                let messages = serde_json::to_string(&call.messages).unwrap_or_default();
                distinct.push((crate::ssr::tokens::hash(&messages), messages));
                distinct.len() - 1
            })
        })
        .collect();
    // One row per key (the last reply): an upsert may not touch a row twice.
    let mut fresh_by_key: HashMap<&str, &CallRecord> = HashMap::new();
    for call in records.iter().filter(|c| c.reply.is_some() && !c.cached && c.provider.is_model()) {
        fresh_by_key.insert(call.key.as_str(), call);
    }
    let mut fresh: Vec<&CallRecord> = fresh_by_key.into_values().collect();
    fresh.sort_by(|a, b| a.key.cmp(&b.key));
    for rows in fresh.chunks(ROWS_PER_INSERT) {
        let mut q = QueryBuilder::new(
            "INSERT INTO llm_cache (key, provider, model, reply, prompt_tokens, completion_tokens, truncated) ",
        );
        q.push_values(rows, |mut b, call| {
            b.push_bind(&call.key)
                .push_bind(call.provider.as_str())
                .push_bind(&call.model)
                .push_bind(call.reply.as_deref())
                .push_bind(call.prompt_tokens as i64)
                .push_bind(call.completion_tokens as i64)
                .push_bind(call.truncated);
        });
        q.push(
            " ON CONFLICT (key) DO UPDATE SET provider = excluded.provider, model = excluded.model,
              reply = excluded.reply, prompt_tokens = excluded.prompt_tokens,
              completion_tokens = excluded.completion_tokens, truncated = excluded.truncated,
              created_at = excluded.created_at",
        );
        q.build().execute(&mut *self).await?;
    }
    // In one order (by hash), as the cache's rows by key: two processes
    // writing the same rows at once then wait for each other, never on
    // each other (PostgreSQL would abort one as a deadlock).
    let mut inserted: Vec<&(String, String)> = distinct.iter().collect();
    inserted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for rows in inserted.chunks(ROWS_PER_INSERT) {
        // Only the prompts not stored yet are packed and written: judging
        // sends a prompt once per trial and repeat, across many batches.
        let mut q = QueryBuilder::new("SELECT hash FROM llm_messages WHERE hash IN (");
        let mut list = q.separated(", ");
        for (hash, _) in rows {
            list.push_bind(hash);
        }
        list.push_unseparated(")");
        let stored: std::collections::HashSet<String> =
            q.build_query_scalar().fetch_all(&mut *self).await?.into_iter().collect();
        let rows: Vec<&&(String, String)> = rows.iter().filter(|(hash, _)| !stored.contains(hash)).collect();
        if rows.is_empty() {
            continue;
        }
        let mut q = QueryBuilder::new("INSERT INTO llm_messages (hash, messages, messages_z) ");
        q.push_values(rows, |mut b, (hash, messages)| {
            // A long prompt packed (store::packed); the text column is NOT NULL.
            let (text, frame) = super::packed::pack(messages);
            b.push_bind(hash).push_bind(text.unwrap_or("")).push_bind(frame);
        });
        q.push(" ON CONFLICT (hash) DO NOTHING");
        q.build().execute(&mut *self).await?;
    }
    // A free call's reply is kept once by hash (see migration 34); a
    // model's stays on its row, as the record of what was paid for.
    let mut by_reply: HashMap<u64, usize> = HashMap::new();
    let mut replies: Vec<(String, &str)> = Vec::new();
    let reply_of: Vec<Option<usize>> = records
        .iter()
        .map(|call| {
            let reply = call.reply.as_deref().filter(|_| !call.provider.is_model())?;
            Some(*by_reply.entry(quick_hash(reply)).or_insert_with(|| {
                replies.push((crate::ssr::tokens::hash(reply), reply));
                replies.len() - 1
            }))
        })
        .collect();
    let mut stored: Vec<&(String, &str)> = replies.iter().collect();
    stored.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for rows in stored.chunks(ROWS_PER_INSERT) {
        let mut q = QueryBuilder::new("INSERT INTO llm_replies (hash, reply) ");
        q.push_values(rows, |mut b, (hash, reply)| {
            b.push_bind(hash).push_bind(*reply);
        });
        q.push(" ON CONFLICT (hash) DO NOTHING");
        q.build().execute(&mut *self).await?;
    }
    let logged: Vec<(&CallRecord, &String, Option<&String>)> = records
        .iter()
        .zip(prompts.iter().map(|&i| &distinct[i].0))
        .zip(reply_of.iter().map(|r| r.map(|i| &replies[i].0)))
        .map(|((call, messages), reply)| (call, messages, reply))
        .collect();
    for rows in logged.chunks(ROWS_PER_INSERT) {
        let mut q = QueryBuilder::new(
            "INSERT INTO llm_calls (job_id, item, purpose, provider, base_url, model, sample, cache_key, prompt_hash,
                messages, messages_hash, reply, reply_hash, error, prompt_tokens, completion_tokens, cached_tokens,
                cost_usd, latency_ms, attempts, cached, truncated) ",
        );
        q.push_values(rows, |mut b, (call, hash, reply_hash)| {
            let model = call.provider.is_model();
            b.push_bind(call.context.job_id)
                .push_bind(call.context.item.as_deref())
                .push_bind(&call.purpose)
                .push_bind(call.provider.as_str())
                .push_bind(&call.base_url)
                .push_bind(&call.model)
                .push_bind(call.sample as i64)
                .push_bind(if model { call.key.as_str() } else { "" })
                .push_bind(call.context.prompt_hash.as_deref())
                .push_bind("")
                .push_bind(*hash)
                .push_bind(call.reply.as_deref().filter(|_| model))
                .push_bind(reply_hash.map(String::as_str))
                .push_bind(call.error.as_deref())
                .push_bind(call.prompt_tokens as i64)
                .push_bind(call.completion_tokens as i64)
                .push_bind(call.cached_tokens as i64)
                .push_bind(call.cost_usd)
                .push_bind(call.latency_ms as i64)
                .push_bind(call.attempts as i64)
                .push_bind(call.cached)
                .push_bind(call.truncated);
        });
        q.build().execute(&mut *self).await?;
    }
    Ok(())
}
    }
}

impl CallStore for SqliteCallStore {
    fn cached<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<CachedReply>, String>> {
        Box::pin(async move {
            if let Some(p) = self.lock() {
                if let Some(hit) = p.replies.get(key) {
                    return Ok(Some(hit.clone()));
                }
                if p.keys.as_ref().is_some_and(|keys| !keys.contains(&quick_hash(key))) {
                    return Ok(None);
                }
            }
            let row: Option<(String, String, i64, i64, bool)> = on_db!(&self.pool, |db| sqlx::query_as(
                "SELECT reply, model, prompt_tokens, completion_tokens, truncated FROM llm_cache WHERE key = $1",
            )
            .bind(key)
            .fetch_optional(db)
            .await)
            .map_err(store_error)?;
            Ok(row.map(|(text, model, p, c, truncated)| CachedReply {
                text,
                model,
                prompt_tokens: p as u64,
                completion_tokens: c as u64,
                truncated,
            }))
        })
    }

    /// A paid reply is written at once, in its own transaction: a job
    /// killed mid-item then pays again only for the calls in flight (at
    /// most its concurrency), never for those its unfinished items had
    /// already made. Free replies (offline, simulated) wait in the buffer
    /// for their item's transaction, as do paid ones that could not be
    /// written now.
    ///
    /// The write is a task of its own: an item abandoned meanwhile (a
    /// cancel) drops its future, not the transaction half-way — that left
    /// a connection idle in its transaction, holding row locks, on
    /// PostgreSQL — and a reply paid for is kept either way.
    fn record(&self, call: CallRecord) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let mut call = call;
            if self.pending.is_none() || call.paid() {
                let pool = self.pool.clone();
                let task = tokio::spawn(async move {
                    let written = on_db!(&pool, |db| async {
                        let mut tx = super::begin(db).await?;
                        tx.write_calls(std::slice::from_ref(&call)).await?;
                        tx.commit().await
                    }
                    .await);
                    (written, call)
                });
                let written;
                (written, call) = task.await.map_err(|e| format!("the call log's writer stopped ({e})"))?;
                match written {
                    Ok(()) => {
                        if let Some(mut p) = self.lock() {
                            if let Some(keys) = &mut p.keys {
                                keys.insert(quick_hash(&call.key));
                            }
                        }
                        return Ok(());
                    }
                    Err(e) if self.pending.is_none() => return Err(store_error(e)),
                    Err(e) => {
                        store_error(e);
                    }
                }
            }
            if self.keep(call) == Some(true) {
                self.flush().await?;
            }
            Ok(())
        })
    }
}

/// `(new, cached)` LLM calls logged for a job.
pub async fn counts_of_job(pool: &Db, job_id: i64) -> crate::error::AppResult<(i64, i64)> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN cached THEN 0 ELSE 1 END), 0) AS BIGINT), CAST(COALESCE(SUM(CASE WHEN cached THEN 1 ELSE 0 END), 0) AS BIGINT) FROM llm_calls WHERE job_id = $1",
    )
    .bind(job_id)
    .fetch_one(db)
    .await?)
    })
}

/// The mean latency (ms) of the last 500 answered, uncached calls to
/// `provider`'s `model`, and how many that is (`None`: none yet).
pub async fn recent_latency(pool: &Db, provider: &str, model: &str) -> crate::error::AppResult<Option<(f64, i64)>> {
    on_db!(pool, |db| {
        let (mean, n): (Option<f64>, i64) = sqlx::query_as(
            "SELECT CAST(AVG(latency_ms) AS DOUBLE PRECISION), COUNT(*) FROM (SELECT latency_ms FROM llm_calls
           WHERE provider = $1 AND model = $2 AND NOT cached AND error IS NULL ORDER BY id DESC LIMIT 500) recent",
        )
        .bind(provider)
        .bind(model)
        .fetch_one(db)
        .await?;
        Ok(mean.filter(|_| n > 0).map(|m| (m, n)))
    })
}

/// The mean reply tokens of the last 500 answered calls for `purpose` by
/// `provider`'s `model` (a run's plan expects its replies as long).
pub async fn recent_completion(
    pool: &Db,
    provider: &str,
    model: &str,
    purpose: &str,
) -> crate::error::AppResult<Option<f64>> {
    on_db!(pool, |db| {
        let (mean, n): (Option<f64>, i64) = sqlx::query_as(
            "SELECT CAST(AVG(completion_tokens) AS DOUBLE PRECISION), COUNT(*) FROM (SELECT completion_tokens FROM llm_calls
           WHERE provider = $1 AND model = $2 AND purpose = $3 AND error IS NULL ORDER BY id DESC LIMIT 500) recent",
        )
        .bind(provider)
        .bind(model)
        .bind(purpose)
        .fetch_one(db)
        .await?;
        Ok(mean.filter(|_| n > 0))
    })
}

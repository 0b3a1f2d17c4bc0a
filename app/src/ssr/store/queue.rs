//! The shared queue of a job's items, for several processes on one
//! PostgreSQL database: each process claims items in batches —
//! `SELECT … FOR UPDATE SKIP LOCKED`, so two claimants never wait for or
//! take each other's rows — heartbeats its claims while it runs them, and
//! removes an item's row in the transaction that records its outcome, only
//! if its claim still stands. A claim whose heartbeat is older than the
//! timeout is free again: its process died, and another takes the item.
//! No item is run twice while its first claimant lives (it heartbeats far
//! more often than the timeout), and none is lost when it dies.
//!
//! A job runs in phases (an evaluation's alignment, then its judging): the
//! items of each are queued once, by whichever process gets there first
//! (`job_phases` remembers it, with that process's LLM), and claimed only
//! with their phase's name.
//!
//! The same functions work on SQLite (without row locks: its writers take
//! turns), where the in-process runner does not need them.

use super::{on_db, pick, Db};
use crate::error::{AppError, AppResult};

/// Rows per INSERT when a job's items are queued (3 values per row).
const ROWS_PER_INSERT: usize = 1000;

/// SQLite's time modifier for "`secs` seconds ago", which PostgreSQL's
/// `strftime` (migrations/postgres) reads as an interval.
fn ago(secs: u64) -> String {
    format!("-{secs} seconds")
}

/// Queues `keys` (in their order) as `phase` of `job_id`, unless that
/// phase was queued before (by this process or another): then nothing is
/// added. `llm` names the LLM the items are run with; a phase queued with
/// another is refused (one job's calls go to one model). Returns whether
/// this call queued the phase.
pub async fn enqueue(pool: &Db, job_id: i64, phase: &str, llm: &str, keys: &[String]) -> AppResult<bool> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        // Two processes queueing one phase: the second waits here for the
        // first's commit, then finds its row.
        let new = sqlx::query("INSERT INTO job_phases (job_id, phase, llm) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
            .bind(job_id)
            .bind(phase)
            .bind(llm)
            .execute(&mut *tx)
            .await?
            .rows_affected()
            == 1;
        if !new {
            let theirs: String = sqlx::query_scalar("SELECT llm FROM job_phases WHERE job_id = $1 AND phase = $2")
                .bind(job_id)
                .bind(phase)
                .fetch_one(&mut *tx)
                .await?;
            if theirs != llm {
                return Err(AppError::Conflict(format!(
                    "job {job_id} runs with {theirs}; this process has {llm}: give every process of a deployment the same LLM settings"
                )));
            }
            return Ok(false);
        }
        for (chunk_index, chunk) in keys.chunks(ROWS_PER_INSERT).enumerate() {
            let mut q = sqlx::QueryBuilder::new("INSERT INTO job_queue (job_id, phase, key, seq) ");
            q.push_values(chunk.iter().enumerate(), |mut b, (i, key)| {
                b.push_bind(job_id)
                    .push_bind(phase)
                    .push_bind(key)
                    .push_bind((chunk_index * ROWS_PER_INSERT + i) as i64);
            });
            q.push(" ON CONFLICT (job_id, key) DO NOTHING");
            q.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(true)
    })
}

/// Forgets a job's queued phases and claims: a job started (or resumed)
/// anew queues each phase's unfinished items again.
pub async fn reset(pool: &Db, job_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        sqlx::query("DELETE FROM job_queue WHERE job_id = $1").bind(job_id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM job_phases WHERE job_id = $1").bind(job_id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    })
}

/// Running jobs with items free to claim (unclaimed, or claimed by a
/// process whose heartbeat is older than `timeout_secs`): what a worker
/// looking for work joins.
pub async fn open_jobs(pool: &Db, timeout_secs: u64) -> AppResult<Vec<i64>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT q.job_id FROM job_queue q JOIN jobs j ON j.id = q.job_id
              WHERE j.status = 'running'
                AND (q.worker IS NULL OR q.heartbeat < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', $1))
              ORDER BY q.job_id",
        )
        .bind(ago(timeout_secs))
        .fetch_all(db)
        .await?)
    })
}

/// The claim, with SQLite's (no row locks: its writers take turns) or
/// PostgreSQL's locking clause.
macro_rules! claim_sql {
    ($lock:literal) => {
        concat!(
            "UPDATE job_queue SET worker = $2, heartbeat = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
              WHERE job_id = $1 AND key IN (
                SELECT key FROM job_queue
                 WHERE job_id = $1 AND phase = $5
                   AND (worker IS NULL OR heartbeat < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', $4))
                 ORDER BY seq LIMIT $3 ",
            $lock,
            ") RETURNING key, seq"
        )
    };
}

/// Claims up to `n` free items of `job_id`'s `phase` for `worker` —
/// unclaimed ones, or ones whose claim's heartbeat is older than
/// `timeout_secs` — in the job's order. Returns their keys in that order.
pub async fn claim(
    pool: &Db,
    job_id: i64,
    phase: &str,
    worker: &str,
    n: usize,
    timeout_secs: u64,
) -> AppResult<Vec<String>> {
    on_db!(pool, |db| {
        let sql = pick(db, claim_sql!(""), claim_sql!("FOR UPDATE SKIP LOCKED"));
        let mut claimed: Vec<(String, i64)> = sqlx::query_as(sql)
            .bind(job_id)
            .bind(worker)
            .bind(n as i64)
            .bind(ago(timeout_secs))
            .bind(phase)
            .fetch_all(db)
            .await?;
        claimed.sort_by_key(|(_, seq)| *seq);
        Ok(claimed.into_iter().map(|(key, _)| key).collect())
    })
}

/// Renews every claim `worker` holds; returns how many it holds.
pub async fn heartbeat(pool: &Db, worker: &str) -> AppResult<u64> {
    on_db!(pool, |db| {
        Ok(sqlx::query("UPDATE job_queue SET heartbeat = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE worker = $1")
            .bind(worker)
            .execute(db)
            .await?
            .rows_affected())
    })
}

/// Gives back `worker`'s claims on `job_id` (a cancel, a clean stop): others
/// take them at once, without waiting for the timeout.
pub async fn release(pool: &Db, job_id: i64, worker: &str) -> AppResult<u64> {
    on_db!(pool, |db| {
        Ok(sqlx::query("UPDATE job_queue SET worker = NULL, heartbeat = NULL WHERE job_id = $1 AND worker = $2")
            .bind(job_id)
            .bind(worker)
            .execute(db)
            .await?
            .rows_affected())
    })
}

/// The processes whose claims on `job_id` stand (a heartbeat within
/// `timeout_secs`): each one's worker id, the items it holds and the
/// seconds since its last heartbeat, busiest first.
pub async fn claimants(pool: &Db, job_id: i64, timeout_secs: u64) -> AppResult<Vec<(String, i64, f64)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT worker, COUNT(*),
                    (julianday(strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) - julianday(MAX(heartbeat))) * 86400.0
               FROM job_queue
              WHERE job_id = $1 AND worker IS NOT NULL
                AND heartbeat >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', $2)
              GROUP BY worker ORDER BY COUNT(*) DESC, worker",
        )
        .bind(job_id)
        .bind(ago(timeout_secs))
        .fetch_all(db)
        .await?)
    })
}

/// Items of `job_id`'s `phase` still queued (claimed or not).
pub async fn remaining(pool: &Db, job_id: i64, phase: &str) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM job_queue WHERE job_id = $1 AND phase = $2")
            .bind(job_id)
            .bind(phase)
            .fetch_one(db)
            .await?)
    })
}

/// Completes items in the caller's transaction (the one that records
/// their outcomes): removes those of `keys` whose claim `worker` still
/// holds and returns them; an item claimed since by another process (this
/// one's heartbeat lapsed) is not this process's to record.
pub async fn complete(pool: &Db, job_id: i64, worker: &str, keys: &[String]) -> AppResult<Vec<String>> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        let done = tx.complete_claims(job_id, worker, keys).await?;
        tx.commit().await?;
        Ok(done)
    })
}

super::connection_steps! {
    pub(crate) trait QueueSteps {
        async fn complete_claims(&mut self, job_id: i64, worker: &str, keys: &[String]) -> Result<Vec<String>, sqlx::Error> {
            let mut done = Vec::with_capacity(keys.len());
            for chunk in keys.chunks(ROWS_PER_INSERT) {
                let mut q = sqlx::QueryBuilder::new("DELETE FROM job_queue WHERE job_id = ");
                q.push_bind(job_id).push(" AND worker = ").push_bind(worker).push(" AND key IN (");
                let mut list = q.separated(", ");
                for key in chunk {
                    list.push_bind(key);
                }
                q.push(") RETURNING key");
                let removed: Vec<String> = q.build_query_scalar().fetch_all(&mut *self).await?;
                done.extend(removed);
            }
            Ok(done)
        }
    }
}

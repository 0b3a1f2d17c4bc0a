//! The deployment's LLM budget in the database (issue #26): the configured
//! concurrency is a total for every process on one PostgreSQL database, not
//! a number per process, so five workers do not send five times the load
//! to a rate-limited endpoint. Each request that may be in flight is a row
//! of `llm_slots`; a process leases rows (`FOR UPDATE SKIP LOCKED`: no
//! waiting on another's), renews its leases while it uses them, and gives
//! them back. A lease past its expiry is free again: its process died.
//! Leasing holds no connection or transaction open while a request runs.

use super::{on_db, pick, Db};
use crate::error::AppResult;

/// Makes sure the budget has `limit` slots (rows 0 … limit-1; slots beyond
/// a lowered limit are never leased again).
pub async fn ensure(pool: &Db, limit: usize) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut q = sqlx::QueryBuilder::new("INSERT INTO llm_slots (slot) ");
        q.push_values(0..limit.max(1) as i64, |mut b, slot| {
            b.push_bind(slot);
        });
        q.push(" ON CONFLICT (slot) DO NOTHING");
        q.build().execute(db).await?;
        Ok(())
    })
}

/// The lease, with SQLite's (no row locks) or PostgreSQL's locking clause.
macro_rules! lease_sql {
    ($lock:literal) => {
        concat!(
            "UPDATE llm_slots SET holder = $1, expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', $4)
              WHERE slot IN (
                SELECT slot FROM llm_slots
                 WHERE slot < $3 AND (holder IS NULL OR expires_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                 ORDER BY slot LIMIT $2 ",
            $lock,
            ") RETURNING slot"
        )
    };
}

/// Leases up to `want` free slots below `limit` to `holder` for
/// `lease_secs`; returns the slots leased (possibly none: the budget is
/// spent, by this process or others).
pub async fn lease(pool: &Db, holder: &str, want: usize, limit: usize, lease_secs: u64) -> AppResult<Vec<i64>> {
    on_db!(pool, |db| {
        let sql = pick(db, lease_sql!(""), lease_sql!("FOR UPDATE SKIP LOCKED"));
        let mut slots: Vec<i64> = sqlx::query_scalar(sql)
            .bind(holder)
            .bind(want as i64)
            .bind(limit as i64)
            .bind(format!("+{lease_secs} seconds"))
            .fetch_all(db)
            .await?;
        slots.sort_unstable();
        Ok(slots)
    })
}

/// Extends every lease `holder` has by `lease_secs`; returns how many it has.
pub async fn renew(pool: &Db, holder: &str, lease_secs: u64) -> AppResult<u64> {
    on_db!(pool, |db| {
        Ok(sqlx::query("UPDATE llm_slots SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', $2) WHERE holder = $1")
            .bind(holder)
            .bind(format!("+{lease_secs} seconds"))
            .execute(db)
            .await?
            .rows_affected())
    })
}

/// Gives back `slots` (those `holder` still has).
pub async fn give_back(pool: &Db, holder: &str, slots: &[i64]) -> AppResult<u64> {
    if slots.is_empty() {
        return Ok(0);
    }
    on_db!(pool, |db| {
        let mut q = sqlx::QueryBuilder::new("UPDATE llm_slots SET holder = NULL, expires_at = NULL WHERE holder = ");
        q.push_bind(holder).push(" AND slot IN (");
        let mut list = q.separated(", ");
        for slot in slots {
            list.push_bind(*slot);
        }
        q.push(")");
        Ok(q.build().execute(db).await?.rows_affected())
    })
}

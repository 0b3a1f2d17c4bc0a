//! The deployment's LLM budget in the database: the configured
//! concurrency is a total for every process on one PostgreSQL database, not
//! a number per process, so five workers do not send five times the load
//! to a rate-limited endpoint. Each request that may be in flight is a row
//! of `llm_slots`; a process leases rows (`FOR UPDATE SKIP LOCKED`: no
//! waiting on another's), renews its leases while it uses them, and gives
//! them back. A lease past its expiry is free again: its process died.
//! Leasing holds no connection or transaction open while a request runs.

use super::{on_db, pick, Db, Pool};
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
pub async fn lease(pool: &Pool, holder: &str, want: usize, limit: usize, lease_secs: u64) -> AppResult<Vec<i64>> {
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
pub async fn renew(pool: &Pool, holder: &str, lease_secs: u64) -> AppResult<u64> {
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
pub async fn give_back(pool: &Pool, holder: &str, slots: &[i64]) -> AppResult<u64> {
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

/// The deployment's LLM budget as this process holds it
/// (`engine::llm::openai::SharedLimit`): a request takes a slot this
/// process has leased and is not using, else leases one more, else waits
/// (for one of its own to come back, or another process's to be given
/// back). Slots idle for [`IDLE`] go back to the database for the other
/// processes; the leases of those held are renewed meanwhile, so a process
/// that dies frees its share when its leases lapse (after the claim
/// timeout, `Db::claim_timeout`).
pub struct DbLimit {
    /// Itself, for the lease tasks it spawns.
    me: std::sync::Weak<DbLimit>,
    /// The database's pool and this process's name and claim timeout on it
    /// (not the `Db`, which holds this budget: a cycle would keep both).
    pool: Pool,
    claimant: String,
    lease_secs: u64,
    limit: std::sync::atomic::AtomicUsize,
    /// Leased, not in use, and since when.
    free: std::sync::Mutex<Vec<(i64, std::time::Instant)>>,
    returned: tokio::sync::Notify,
    /// Requests waiting for a slot here.
    waiting: std::sync::atomic::AtomicUsize,
    /// Held by the one request that asks the database for slots (for as
    /// many as are waiting); the others wait for what it brings. (Every
    /// waiting request asking on its own, each every few milliseconds,
    /// kept PostgreSQL's two cores busy with leases that found nothing.)
    leasing: tokio::sync::Mutex<()>,
}

/// How long a slot may sit unused here before it goes back.
const IDLE: std::time::Duration = std::time::Duration::from_millis(50);
/// How often a process without a slot asks the database again.
const RETRY: std::time::Duration = std::time::Duration::from_millis(10);

impl DbLimit {
    /// This process's budget on `pool`'s database, its total set to
    /// `limit` (the configured concurrency; the last set is in force).
    /// (One per database a process uses: a test process uses many.)
    pub async fn of_process(pool: &Db, limit: usize) -> AppResult<std::sync::Arc<DbLimit>> {
        let limit = limit.max(1);
        ensure(pool, limit).await?;
        let (this, new) = {
            let mut budget = pool.here().budget.lock().unwrap_or_else(|e| e.into_inner());
            match &*budget {
                Some(this) => (this.clone(), false),
                None => {
                    let this = std::sync::Arc::new_cyclic(|me| DbLimit {
                        me: me.clone(),
                        pool: pool.pool().clone(),
                        claimant: pool.claimant().to_string(),
                        lease_secs: pool.claim_timeout(),
                        limit: limit.into(),
                        free: Default::default(),
                        returned: tokio::sync::Notify::new(),
                        waiting: 0.into(),
                        leasing: tokio::sync::Mutex::new(()),
                    });
                    *budget = Some(this.clone());
                    (this, true)
                }
            }
        };
        this.limit.store(limit, std::sync::atomic::Ordering::Relaxed);
        if new {
            tokio::spawn(keep(std::sync::Arc::downgrade(&this)));
        }
        Ok(this)
    }

    fn lease_secs(&self) -> u64 {
        self.lease_secs
    }
}

/// Gives idle slots back and renews the leases of those held, while the
/// budget lives.
async fn keep(limit: std::sync::Weak<DbLimit>) {
    let Some((lease_secs, holder)) = limit.upgrade().map(|l| (l.lease_secs(), l.claimant.clone())) else {
        return;
    };
    let holder = holder.as_str();
    let renew_every = std::time::Duration::from_millis(lease_secs * 1000 / 3);
    let mut renewed = std::time::Instant::now();
    loop {
        tokio::time::sleep(IDLE).await;
        let Some(limit) = limit.upgrade() else { return };
        let idle: Vec<i64> = {
            let mut free = limit.free.lock().unwrap_or_else(|e| e.into_inner());
            let (idle, kept): (Vec<_>, Vec<_>) = free.drain(..).partition(|(_, since)| since.elapsed() >= IDLE);
            *free = kept;
            idle.into_iter().map(|(slot, _)| slot).collect()
        };
        if let Err(e) = give_back(&limit.pool, holder, &idle).await {
            tracing::warn!(error = %e, "LLM slots could not be given back (their leases will lapse)");
        }
        if renewed.elapsed() >= renew_every {
            renewed = std::time::Instant::now();
            if let Err(e) = renew(&limit.pool, holder, lease_secs).await {
                tracing::warn!(error = %e, "LLM slots' leases could not be renewed");
            }
        }
    }
}

impl DbLimit {
    /// A slot leased here and not in use (slots above a lowered limit are
    /// not used again).
    fn take_free(&self, limit: usize) -> Option<i64> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.retain(|(slot, _)| (*slot as usize) < limit);
        free.pop().map(|(slot, _)| slot)
    }
}

impl engine::llm::openai::SharedLimit for DbLimit {
    fn acquire(&self) -> engine::llm::BoxFuture<'_, Result<i64, String>> {
        use std::sync::atomic::Ordering::Relaxed;
        /// Counts a request among the waiting while it is.
        struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Relaxed);
            }
        }
        Box::pin(async move {
            self.waiting.fetch_add(1, Relaxed);
            let _waiting = Waiting(&self.waiting);
            loop {
                let limit = self.limit.load(Relaxed);
                if let Some(slot) = self.take_free(limit) {
                    return Ok(slot);
                }
                let Ok(_asking) = self.leasing.try_lock() else {
                    tokio::select! {
                        _ = self.returned.notified() => {}
                        _ = tokio::time::sleep(RETRY) => {}
                    }
                    continue;
                };
                let want = self.waiting.load(Relaxed).clamp(1, limit);
                // The lease is a task of its own, which puts what it leased
                // among the free: a request abandoned meanwhile (a cancel)
                // loses no slot to a lease it never heard back from.
                let Some(this) = self.me.upgrade() else { return Err("the budget is gone".into()) };
                let leased = tokio::spawn(async move {
                    let leased = lease(&this.pool, &this.claimant, want, limit, this.lease_secs()).await?;
                    let now = std::time::Instant::now();
                    this.free.lock().unwrap_or_else(|e| e.into_inner()).extend(leased.iter().map(|s| (*s, now)));
                    this.returned.notify_waiters();
                    AppResult::Ok(leased.len())
                })
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
                if leased == 0 {
                    // Spent: ask again in a while (or take one of ours back).
                    tokio::select! {
                        _ = self.returned.notified() => {}
                        _ = tokio::time::sleep(RETRY) => {}
                    }
                }
            }
        })
    }

    fn release(&self, slot: i64) {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).push((slot, std::time::Instant::now()));
        self.returned.notify_one();
    }
}

#[cfg(test)]
mod tests {
    /// The budget a `Db` keeps does not keep the `Db`: once the last handle
    /// is dropped, the budget (and the rest of what the process kept about
    /// that database) goes with it.
    #[test]
    fn a_dropped_database_handle_frees_its_budget() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let path = std::env::temp_dir().join(format!("assay-slots-{}.db", std::process::id()));
            let db = super::super::open(&path).await.unwrap();
            let limit = super::DbLimit::of_process(&db, 2).await.unwrap();
            let budget = std::sync::Arc::downgrade(&limit);
            drop(limit);
            assert!(budget.upgrade().is_some(), "the handle keeps its budget");
            drop(db);
            assert!(budget.upgrade().is_none(), "the budget outlived its database handle");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
        });
    }
}

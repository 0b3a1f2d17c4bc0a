//! Jobs and their items in SQLite, and `engine::jobs::JobStore` over them.

use std::collections::HashSet;

use engine::jobs::{ItemOutcome, JobStore, Progress};
use engine::llm::BoxFuture;
use sqlx::FromRow;

use super::{on_db, Db};

use crate::error::{AppError, AppResult};
use crate::model::{CallView, ItemStatus, JobItemView, JobKind, JobStatus, JobView};

/// A running job whose heartbeat is older than this is shown as interrupted.
pub const STALE_AFTER_SECS: i64 = 30;

/// Creates a queued job (`crate::ssr::jobs::create` writes a kind's typed settings).
/// `parameters` are what anyone who reads the job sees; `secrets` (see
/// `engine::secret`), stored apart in the same row, only the runner reads.
pub async fn create_job(
    pool: &Db,
    project_id: i64,
    kind: JobKind,
    parameters: &serde_json::Value,
    secrets: Option<&str>,
    total: i64,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
            "INSERT INTO jobs (project_id, kind, parameters, secrets, total) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(project_id)
        .bind(kind.as_str())
        .bind(parameters.to_string())
        .bind(secrets)
        .bind(total)
        .fetch_one(db)
        .await?)
    })
}

/// A job's secrets as stored (the runner's alone: no view reads them).
pub async fn secrets(pool: &Db, job_id: i64) -> AppResult<Option<String>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar::<_, Option<String>>("SELECT secrets FROM jobs WHERE id = $1")
            .bind(job_id)
            .fetch_optional(db)
            .await?
            .flatten())
    })
}

/// Marks a job that is about to be resumed as queued (unless it runs), so a
/// page that asks right after the resume sees it coming, not as it was.
pub async fn mark_queued(pool: &Db, job_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("UPDATE jobs SET status = 'queued', error = NULL WHERE id = $1 AND status != 'running'")
            .bind(job_id)
            .execute(db)
            .await?;
        Ok(())
    })
}

/// A queued job whose run could not start: failed, with the reason.
pub async fn fail_queued(pool: &Db, job_id: i64, error: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "UPDATE jobs SET status = 'failed', error = $1, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
          WHERE id = $2 AND status = 'queued'",
        )
        .bind(error)
        .bind(job_id)
        .execute(db)
        .await?;
        Ok(())
    })
}

/// Marks a job as running in this process; `retrying`: this run retries
/// the failed items (every process on it then bypasses the cache). A run
/// that never ended (its process died) adds its time, to its last
/// heartbeat, to the job's work before this run starts.
pub async fn mark_running(pool: &Db, job_id: i64, retrying: bool) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "UPDATE jobs SET status = 'running', error = NULL, finished_at = NULL, runner_pid = $1, retrying = $2,
                worked_secs = worked_secs + COALESCE(
                    (julianday(COALESCE(heartbeat, run_started_at)) - julianday(run_started_at)) * 86400.0, 0),
                run_started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                started_at = COALESCE(started_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
                heartbeat = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
          WHERE id = $3",
        )
        .bind(std::process::id() as i64)
        .bind(retrying)
        .bind(job_id)
        .execute(db)
        .await?;
        Ok(())
    })
}

/// Whether a job's current run retries its failed items.
pub async fn retrying(pool: &Db, job_id: i64) -> AppResult<bool> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar::<_, bool>("SELECT retrying FROM jobs WHERE id = $1")
            .bind(job_id)
            .fetch_optional(db)
            .await?
            .unwrap_or(false))
    })
}

pub async fn heartbeat(pool: &Db, job_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "UPDATE jobs SET heartbeat = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = $1 AND status = 'running'",
        )
        .bind(job_id)
        .execute(db)
        .await?;
        Ok(())
    })
}

/// Ends a run: `done`, `failed` (with the error) or `cancelled`.
pub async fn mark_ended(pool: &Db, job_id: i64, status: JobStatus, error: Option<&str>) -> AppResult<()> {
    end(pool, job_id, status, error, false).await.map(|_| ())
}

/// Ends a run that is still running (not ended meanwhile by another
/// process of a shared deployment); returns whether it was running.
pub async fn mark_ended_if_running(pool: &Db, job_id: i64, status: JobStatus) -> AppResult<bool> {
    end(pool, job_id, status, None, true).await
}

/// Ends a run (only while it runs, with `only_running`); whether it did.
/// (A running job's error is NULL: the run's start cleared it.)
async fn end(pool: &Db, job_id: i64, status: JobStatus, error: Option<&str>, only_running: bool) -> AppResult<bool> {
    // The run's wall time joins the job's work, once (the run is then
    // over: `run_started_at` cleared).
    const END: &str = "UPDATE jobs SET status = $1, error = $2, runner_pid = NULL,
            worked_secs = worked_secs + COALESCE(
                (julianday(strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) - julianday(run_started_at)) * 86400.0, 0),
            run_started_at = NULL,
            finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = $3";
    let sql = if only_running { format!("{END} AND status = 'running'") } else { END.to_string() };
    on_db!(pool, |db| {
        let done = sqlx::query(&sql).bind(status.as_str()).bind(error).bind(job_id).execute(db).await?;
        Ok(done.rows_affected() == 1)
    })
}

#[derive(FromRow)]
struct JobRow {
    id: i64,
    project_id: Option<i64>,
    kind: String,
    parameters: String,
    status: String,
    total: i64,
    done: i64,
    failed: i64,
    tokens: i64,
    cost_usd: f64,
    error: Option<String>,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    runner_pid: Option<i64>,
    stale_secs: Option<f64>,
    elapsed_secs: Option<f64>,
}

const JOB_SELECT: &str =
    "SELECT id, project_id, kind, parameters, status, total, done, failed, tokens, cost_usd, error,
        created_at, started_at, finished_at, runner_pid,
        (julianday('now') - julianday(heartbeat)) * 86400.0 AS stale_secs,
        worked_secs + COALESCE((julianday(CASE
            WHEN status = 'running' AND heartbeat >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-30 seconds')
            THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') ELSE COALESCE(heartbeat, run_started_at) END)
          - julianday(run_started_at)) * 86400.0, 0) AS elapsed_secs
   FROM jobs";

/// Is the process that claimed a job still alive? (Linux: /proc; elsewhere
/// only the heartbeat decides.)
fn runner_alive(pid: Option<i64>) -> bool {
    match pid {
        Some(pid) if pid as u32 == std::process::id() => true,
        Some(pid) if std::path::Path::new("/proc").is_dir() => std::path::Path::new(&format!("/proc/{pid}")).exists(),
        _ => true,
    }
}

impl JobRow {
    /// `same_machine`: the database is a file of this machine (SQLite), so
    /// the runner's process id is one of its processes; on a shared server
    /// the runner may be another machine's, and only the heartbeat decides.
    fn view(self, same_machine: bool) -> AppResult<JobView> {
        let kind: JobKind = super::stored("jobs", self.id, &self.kind)?;
        let mut status: JobStatus = super::stored("jobs", self.id, &self.status)?;
        if status == JobStatus::Running
            && ((same_machine && !runner_alive(self.runner_pid))
                || self.stale_secs.unwrap_or(0.0) > STALE_AFTER_SECS as f64)
        {
            status = JobStatus::Interrupted;
        }
        Ok(JobView {
            id: self.id,
            project_id: self.project_id,
            kind,
            parameters: self.parameters,
            status,
            total: self.total,
            done: self.done,
            failed: self.failed,
            tokens: self.tokens,
            cost_usd: self.cost_usd,
            error: self.error,
            created_at: self.created_at,
            started_at: self.started_at,
            finished_at: self.finished_at,
            elapsed_secs: self.elapsed_secs.unwrap_or(0.0).max(0.0),
        })
    }
}

pub async fn get_job(pool: &Db, id: i64) -> AppResult<JobView> {
    on_db!(pool, |db| {
        let row: Option<JobRow> =
            sqlx::query_as(&format!("{JOB_SELECT} WHERE id = $1")).bind(id).fetch_optional(db).await?;
        let local = !pool.is_postgres();
        row.map(|r| r.view(local)).transpose()?.ok_or_else(|| AppError::NotFound(format!("no job with id {id}")))
    })
}

pub async fn list_jobs(pool: &Db, project_id: i64) -> AppResult<Vec<JobView>> {
    on_db!(pool, |db| {
        let rows: Vec<JobRow> = sqlx::query_as(&format!("{JOB_SELECT} WHERE project_id = $1 ORDER BY id DESC"))
            .bind(project_id)
            .fetch_all(db)
            .await?;
        let local = !pool.is_postgres();
        rows.into_iter().map(|r| r.view(local)).collect()
    })
}

/// Page `page` (from 1, clamped) of a project's jobs, newest first.
pub async fn jobs_page(pool: &Db, project_id: i64, page: i64) -> AppResult<crate::model::JobsPage> {
    use crate::model::JOBS_PER_PAGE;
    on_db!(pool, |db| {
        let (total,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM jobs WHERE project_id = $1").bind(project_id).fetch_one(db).await?;
        let (page, pages) = crate::model::paging(total, JOBS_PER_PAGE, page);
        let rows: Vec<JobRow> = sqlx::query_as(&format!(
            "{JOB_SELECT} WHERE project_id = $1 ORDER BY id DESC LIMIT {JOBS_PER_PAGE} OFFSET {}",
            (page - 1) * JOBS_PER_PAGE
        ))
        .bind(project_id)
        .fetch_all(db)
        .await?;
        let local = !pool.is_postgres();
        let jobs = rows.into_iter().map(|r| r.view(local)).collect::<AppResult<Vec<_>>>()?;
        Ok(crate::model::JobsPage { jobs, total, page, pages })
    })
}

/// The newest job of each kind of a project, newest first.
pub async fn latest_per_kind(pool: &Db, project_id: i64) -> AppResult<Vec<JobView>> {
    on_db!(pool, |db| {
        let rows: Vec<JobRow> = sqlx::query_as(&format!(
            "{JOB_SELECT} WHERE id IN (SELECT MAX(id) FROM jobs WHERE project_id = $1 GROUP BY kind) ORDER BY id DESC"
        ))
        .bind(project_id)
        .fetch_all(db)
        .await?;
        let local = !pool.is_postgres();
        rows.into_iter().map(|r| r.view(local)).collect()
    })
}

/// What a live view of a project's jobs would show changing, as a short
/// fingerprint (how many jobs, the newest, the last to end, and each
/// running job's progress), and whether any job runs.
pub async fn project_activity(pool: &Db, project_id: i64) -> AppResult<(String, bool)> {
    on_db!(pool, |db| {
        let (count, newest, ended): (i64, Option<i64>, Option<String>) =
            sqlx::query_as("SELECT COUNT(*), MAX(id), MAX(finished_at) FROM jobs WHERE project_id = $1")
                .bind(project_id)
                .fetch_one(db)
                .await?;
        let rows: Vec<JobRow> =
            sqlx::query_as(&format!("{JOB_SELECT} WHERE project_id = $1 AND status IN ('queued', 'running')"))
                .bind(project_id)
                .fetch_all(db)
                .await?;
        let local = !pool.is_postgres();
        let mut print = format!("{count}:{}:{}", newest.unwrap_or(0), ended.unwrap_or_default());
        let mut active = false;
        for j in rows.into_iter().map(|r| r.view(local)) {
            let j = j?;
            active |= j.status.is_active();
            print.push_str(&format!("|{}:{}:{}:{}:{}", j.id, j.status, j.done, j.failed, j.total));
        }
        Ok((print, active))
    })
}

/// A `job_items` row as read: key, status, result (as text or packed),
/// error, tokens, cost, finish time.
type ItemRow = (String, String, Option<String>, Option<Vec<u8>>, Option<String>, i64, f64, String);

/// The columns of an [`ItemRow`].
macro_rules! item_columns {
    () => {
        "key, status, result, result_z, error, tokens, cost_usd, finished_at"
    };
}

fn item_of(
    job_id: i64,
    (key, status, result, result_z, error, tokens, cost_usd, finished_at): ItemRow,
) -> AppResult<JobItemView> {
    let result = super::packed::unpack(result, result_z, &format!("job {job_id}'s item \"{key}\""))?;
    Ok(JobItemView {
        status: ItemStatus::parse(&status).unwrap_or(ItemStatus::Failed),
        key,
        result,
        error,
        tokens,
        cost_usd,
        finished_at,
        summary: String::new(),
    })
}

pub async fn job_items(pool: &Db, job_id: i64) -> AppResult<Vec<JobItemView>> {
    use futures_util::TryStreamExt;
    on_db!(pool, |db| {
        // Unpacked as they come: the frames are never all held beside the texts.
        let mut rows = sqlx::query_as::<_, ItemRow>(concat!(
            "SELECT ",
            item_columns!(),
            " FROM job_items WHERE job_id = $1 ORDER BY finished_at, key"
        ))
        .bind(job_id)
        .fetch(db);
        let mut items = Vec::new();
        while let Some(row) = rows.try_next().await? {
            items.push(item_of(job_id, row)?);
        }
        Ok(items)
    })
}

/// A page of a job's finished items (oldest first; `status`: only those),
/// results whole (`ssr::jobs::items_page` summarises them for the page).
pub async fn job_items_page(
    pool: &Db,
    job_id: i64,
    status: Option<ItemStatus>,
    page: i64,
) -> AppResult<crate::model::JobItemsPage> {
    on_db!(pool, |db| {
        use crate::model::ITEMS_PER_PAGE;
        let status = status.map(|s| s.to_string());
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM job_items WHERE job_id = $1 AND ($2 IS NULL OR status = $3)")
                .bind(job_id)
                .bind(&status)
                .bind(&status)
                .fetch_one(db)
                .await?;
        let (page, pages) = crate::model::paging(total, ITEMS_PER_PAGE, page);
        // The page's rows are picked by key alone, so the sort never carries
        // the results (an answer with all its contexts) through it.
        let rows: Vec<ItemRow> = sqlx::query_as(concat!(
            "SELECT ",
            item_columns!(),
            " FROM job_items
         WHERE job_id = $1 AND key IN (
            SELECT key FROM job_items WHERE job_id = $1 AND ($2 IS NULL OR status = $2)
            ORDER BY finished_at, key LIMIT $3 OFFSET $4)
         ORDER BY finished_at, key"
        ))
        .bind(job_id)
        .bind(&status)
        .bind(ITEMS_PER_PAGE)
        .bind((page - 1) * ITEMS_PER_PAGE)
        .fetch_all(db)
        .await?;
        let items = rows.into_iter().map(|r| item_of(job_id, r)).collect::<AppResult<_>>()?;
        Ok(crate::model::JobItemsPage { items, total, page, pages })
    })
}

/// One finished item, whole (its result as stored).
pub async fn job_item(pool: &Db, job_id: i64, key: &str) -> AppResult<JobItemView> {
    on_db!(pool, |db| {
        let row: Option<ItemRow> =
            sqlx::query_as(concat!("SELECT ", item_columns!(), " FROM job_items WHERE job_id = $1 AND key = $2"))
                .bind(job_id)
                .bind(key)
                .fetch_optional(db)
                .await?;
        row.map(|r| item_of(job_id, r))
            .unwrap_or_else(|| Err(AppError::NotFound(format!("job {job_id} has no finished item \"{key}\""))))
    })
}

/// A job's finished items: done, failed, tokens, cost (USD), and the
/// seconds from the first to finish to the last (none without items).
pub type ItemTotals = (i64, i64, i64, f64, Option<f64>);

/// A job's finished items in numbers ([`ItemTotals`]), and the failures'
/// commonest reasons.
pub async fn item_totals(pool: &Db, job_id: i64) -> AppResult<(ItemTotals, Vec<(String, i64)>)> {
    on_db!(pool, |db| {
        // The span in seconds by SQLite's own date arithmetic (the times are
        // stored as ISO 8601 UTC, `2026-12-01T10:04:12.345Z`).
        let totals: ItemTotals = sqlx::query_as(
            "SELECT COUNT(*) FILTER (WHERE status = 'done'), COUNT(*) FILTER (WHERE status = 'failed'),
                CAST(COALESCE(SUM(tokens), 0) AS BIGINT), COALESCE(SUM(cost_usd), 0.0),
                (julianday(MAX(finished_at)) - julianday(MIN(finished_at))) * 86400.0
         FROM job_items WHERE job_id = $1",
        )
        .bind(job_id)
        .fetch_one(db)
        .await?;
        let reasons: Vec<(String, i64)> = sqlx::query_as(
            "SELECT COALESCE(error, '(no reason recorded)'), COUNT(*) AS n FROM job_items
         WHERE job_id = $1 AND status = 'failed' GROUP BY 1 ORDER BY n DESC, 1 LIMIT 10",
        )
        .bind(job_id)
        .fetch_all(db)
        .await?;
        Ok((totals, reasons))
    })
}

/// The call log of one item of a job.
pub async fn item_calls(pool: &Db, job_id: i64, item: &str) -> AppResult<Vec<CallView>> {
    on_db!(pool, |db| {
        let rows: Vec<CallRow> = sqlx::query_as(
            "SELECT c.id, c.purpose, c.provider, c.model, c.sample, COALESCE(m.messages, c.messages) AS messages, m.messages_z,
                COALESCE(r.reply, c.reply) AS reply,
                c.error, c.prompt_tokens, c.completion_tokens, c.cost_usd, c.latency_ms, c.attempts, c.cached,
                c.prompt_hash, c.created_at
           FROM llm_calls c LEFT JOIN llm_messages m ON m.hash = c.messages_hash
                LEFT JOIN llm_replies r ON r.hash = c.reply_hash
          WHERE c.job_id = $1 AND c.item = $2 ORDER BY c.id",
        )
        .bind(job_id)
        .bind(item)
        .fetch_all(db)
        .await?;
        rows.into_iter().map(CallRow::view).collect()
    })
}

#[derive(FromRow)]
struct CallRow {
    id: i64,
    purpose: String,
    provider: String,
    model: String,
    sample: i64,
    messages: String,
    messages_z: Option<Vec<u8>>,
    reply: Option<String>,
    error: Option<String>,
    prompt_tokens: i64,
    completion_tokens: i64,
    cost_usd: f64,
    latency_ms: i64,
    attempts: i64,
    cached: bool,
    prompt_hash: Option<String>,
    created_at: String,
}

impl CallRow {
    fn view(self) -> AppResult<CallView> {
        let what = format!("call {}'s prompt", self.id);
        let text = super::packed::unpack(Some(self.messages), self.messages_z, &what)?.unwrap_or_default();
        let messages: Vec<engine::llm::Message> = serde_json::from_str(&text).unwrap_or_default();
        Ok(CallView {
            id: self.id,
            purpose: self.purpose,
            provider: super::stored("llm_calls", self.id, &self.provider)?,
            model: self.model,
            sample: self.sample,
            prompt: messages
                .iter()
                .map(|m| format!("[{}]\n{}", role_name(m.role), m.content))
                .collect::<Vec<_>>()
                .join("\n\n"),
            reply: self.reply,
            error: self.error,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            cost_usd: self.cost_usd,
            latency_ms: self.latency_ms,
            attempts: self.attempts,
            cached: self.cached,
            prompt_hash: self.prompt_hash,
            created_at: self.created_at,
        })
    }
}

fn role_name(role: engine::llm::Role) -> &'static str {
    match role {
        engine::llm::Role::System => "system",
        engine::llm::Role::User => "user",
        engine::llm::Role::Assistant => "assistant",
    }
}

super::connection_steps! {
    pub(crate) trait JobSteps {
        /// Writes what a job made into its parameters (`key`: its id), in the
        /// transaction that makes it, so the job's page links to it.
        async fn name_in_job(&mut self, job_id: i64, key: &str, id: i64) -> Result<(), sqlx::Error> {
            sqlx::query("UPDATE jobs SET parameters = json_set(parameters, '$.' || $1, $2) WHERE id = $3")
                .bind(key)
                .bind(id)
                .bind(job_id)
                .execute(&mut *self)
                .await?;
            Ok(())
        }
    }
}

/// `engine::jobs::JobStore` over the database.
pub struct SqliteJobStore {
    pool: Db,
    calls: Option<std::sync::Arc<crate::ssr::store::calls::SqliteCallStore>>,
    shared: Option<Claimant>,
}

/// This process as one of several on a shared queue.
struct Claimant {
    worker: String,
    /// The LLM its items are run with (`LlmSettings::fingerprint`).
    llm: String,
}

impl SqliteJobStore {
    pub fn new(pool: Db) -> SqliteJobStore {
        SqliteJobStore { pool, calls: None, shared: None }
    }

    /// Items are claimed from the database's queue (`store::queue`) as
    /// `worker`, run with `llm`, and recorded only while their claim stands.
    pub fn shared(mut self, worker: &str, llm: &str) -> SqliteJobStore {
        self.shared = Some(Claimant { worker: worker.to_string(), llm: llm.to_string() });
        self
    }

    /// Writes the calls `calls` holds with each item it records, in the
    /// item's transaction: an item recorded has its calls in the log.
    pub fn with_calls(mut self, calls: std::sync::Arc<crate::ssr::store::calls::SqliteCallStore>) -> SqliteJobStore {
        self.calls = Some(calls);
        self
    }
}

fn store_error(e: sqlx::Error) -> String {
    tracing::error!(error = %e, "job store");
    // The database's own words go with it: "database is locked", "disk is
    // full" tell the user what to do; nothing in them is secret.
    format!("the job's progress could not be written ({})", crate::ssr::store::db_reason(&e))
}

impl JobStore for SqliteJobStore {
    fn finished<'a>(&'a self, job_id: i64, include_failed: bool) -> BoxFuture<'a, Result<HashSet<String>, String>> {
        Box::pin(async move {
            let keys: Vec<String> = on_db!(&self.pool, |db| {
                sqlx::query_scalar("SELECT key FROM job_items WHERE job_id = $1 AND (status = 'done' OR $2)")
                    .bind(job_id)
                    .bind(include_failed)
                    .fetch_all(db)
                    .await
            })
            .map_err(store_error)?;
            Ok(keys.into_iter().collect())
        })
    }

    fn record_all<'a>(
        &'a self,
        job_id: i64,
        outcomes: &'a [(String, ItemOutcome)],
    ) -> BoxFuture<'a, Result<Progress, String>> {
        Box::pin(async move {
            let calls = self.calls.as_ref().map(|c| c.take()).unwrap_or_default();
            let written = self.write(job_id, outcomes, &calls).await;
            if let Some(store) = &self.calls {
                match &written {
                    Ok(_) => store.written(&calls),
                    Err(_) => store.restore(calls),
                }
            }
            written
        })
    }

    fn shared(&self) -> Option<&dyn engine::jobs::SharedQueue> {
        self.shared.as_ref().map(|_| self as &dyn engine::jobs::SharedQueue)
    }
}

impl engine::jobs::SharedQueue for SqliteJobStore {
    fn enqueue<'a>(&'a self, job_id: i64, phase: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let llm = self.shared.as_ref().map_or("", |c| c.llm.as_str());
            super::queue::enqueue(&self.pool, job_id, phase, llm, keys).await.map(|_| ()).map_err(|e| e.to_string())
        })
    }

    fn claim<'a>(&'a self, job_id: i64, phase: &'a str, n: usize) -> BoxFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move {
            let worker = self.shared.as_ref().map_or("", |c| c.worker.as_str());
            super::queue::claim(&self.pool, job_id, phase, worker, n, self.pool.claim_timeout())
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn remaining<'a>(&'a self, job_id: i64, phase: &'a str) -> BoxFuture<'a, Result<u64, String>> {
        Box::pin(async move {
            super::queue::remaining(&self.pool, job_id, phase).await.map(|n| n as u64).map_err(|e| e.to_string())
        })
    }
}

/// Rows per statement of a batch (job_items binds 7 values per row).
const ITEM_ROWS: usize = 256;

impl SqliteJobStore {
    /// One transaction: the waiting calls, the items, the job's counters.
    async fn write(
        &self,
        job_id: i64,
        outcomes: &[(String, ItemOutcome)],
        calls: &[engine::llm::CallRecord],
    ) -> Result<Progress, String> {
        use crate::ssr::store::calls::CallSteps;
        use crate::ssr::store::queue::QueueSteps;
        // Results packed before the transaction, so the writer's lock is not
        // held while they are (by key: the batch's last outcome of a key is
        // the one written).
        let packed: std::collections::HashMap<&str, (Option<&str>, Option<Vec<u8>>)> = outcomes
            .iter()
            .filter_map(|(key, o)| match o {
                ItemOutcome::Done { result, .. } => Some((key.as_str(), super::packed::pack(result))),
                ItemOutcome::Failed { .. } => None,
            })
            .collect();
        let (total, done, failed, tokens, cost) = on_db!(&self.pool, |db| {
            async {
            let mut packed = packed;
            let mut tx = super::begin(db).await.map_err(store_error)?;
            // On a shared queue, only the items whose claim this process
            // still holds are its to record (a claim that lapsed went to
            // another process, which records the item itself).
            let owned: Vec<(String, ItemOutcome)>;
            let outcomes = match &self.shared {
                None => outcomes,
                Some(c) => {
                    let keys: Vec<String> = outcomes.iter().map(|(k, _)| k.clone()).collect();
                    let kept: HashSet<String> =
                        tx.complete_claims(job_id, &c.worker, &keys).await.map_err(store_error)?.into_iter().collect();
                    owned = outcomes.iter().filter(|(k, _)| kept.contains(k)).cloned().collect();
                    &owned[..]
                }
            };
            tx.write_calls(calls).await.map_err(crate::ssr::store::calls::store_error)?;
            // Counters move by deltas against each item's previous outcome (a
            // retried item replaces its failure), so recording stays O(batch)
            // however large the job.
            let mut before: std::collections::HashMap<String, (bool, bool, i64, f64)> = Default::default();
            for rows in outcomes.chunks(ITEM_ROWS) {
                let mut q = sqlx::QueryBuilder::new(
                    "SELECT key, status = 'done', status = 'failed', tokens, cost_usd FROM job_items WHERE job_id = ",
                );
                q.push_bind(job_id).push(" AND key IN (");
                let mut keys = q.separated(", ");
                for (key, _) in rows {
                    keys.push_bind(key);
                }
                q.push(")");
                let found: Vec<(String, bool, bool, i64, f64)> =
                    q.build_query_as().fetch_all(&mut *tx).await.map_err(store_error)?;
                before.extend(found.into_iter().map(|(k, d, f, t, c)| (k, (d, f, t, c))));
            }
            let (mut done, mut failed, mut tokens, mut cost) = (0i64, 0i64, 0i64, 0f64);
            for (key, outcome) in outcomes {
                let is_done = matches!(outcome, ItemOutcome::Done { .. });
                let now = (is_done, !is_done, outcome.tokens() as i64, outcome.cost_usd());
                let was = before.insert(key.clone(), now).unwrap_or((false, false, 0, 0.0));
                done += i64::from(now.0) - i64::from(was.0);
                failed += i64::from(now.1) - i64::from(was.1);
                tokens += now.2 - was.2;
                cost += now.3 - was.3;
            }
            sqlx::query(
            "UPDATE jobs SET done = done + $1, failed = failed + $2, tokens = tokens + $3, cost_usd = cost_usd + $4,
                heartbeat = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
              WHERE id = $5",
        )
        .bind(done)
        .bind(failed)
        .bind(tokens)
        .bind(cost)
        .bind(job_id)
        .execute(&mut *tx)
        .await
        .map_err(store_error)?;
            // An upsert may touch a row once per statement: an item recorded
            // twice in one batch is written as its last outcome.
            let last: std::collections::HashMap<&str, usize> =
                outcomes.iter().enumerate().map(|(i, (key, _))| (key.as_str(), i)).collect();
            let rows: Vec<&(String, ItemOutcome)> =
                outcomes.iter().enumerate().filter(|(i, (key, _))| last[key.as_str()] == *i).map(|(_, o)| o).collect();
            for rows in rows.chunks(ITEM_ROWS) {
                let mut q = sqlx::QueryBuilder::new(
                    "INSERT INTO job_items (job_id, key, status, result, result_z, error, tokens, cost_usd) ",
                );
                q.push_values(rows, |mut b, (key, outcome)| {
                    let (status, (result, result_z), error) = match outcome {
                        ItemOutcome::Done { result, .. } => {
                            ("done", packed.remove(key.as_str()).unwrap_or((Some(result.as_str()), None)), None)
                        }
                        ItemOutcome::Failed { error, .. } => ("failed", (None, None), Some(error.as_str())),
                    };
                    b.push_bind(job_id)
                        .push_bind(key)
                        .push_bind(status)
                        .push_bind(result)
                        .push_bind(result_z)
                        .push_bind(error)
                        .push_bind(outcome.tokens() as i64)
                        .push_bind(outcome.cost_usd());
                });
                q.push(
                    " ON CONFLICT (job_id, key) DO UPDATE SET status = excluded.status, result = excluded.result,
                  result_z = excluded.result_z, error = excluded.error, tokens = excluded.tokens, cost_usd = excluded.cost_usd,
                  finished_at = excluded.finished_at",
                );
                q.build().execute(&mut *tx).await.map_err(store_error)?;
            }
            let (total, done, failed, tokens, cost): (i64, i64, i64, i64, f64) =
                sqlx::query_as("SELECT total, done, failed, tokens, cost_usd FROM jobs WHERE id = $1")
                    .bind(job_id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(store_error)?;
            tx.commit().await.map_err(store_error)?;
            Ok::<_, String>((total, done, failed, tokens, cost))
        }
        .await
        })?;
        Ok(Progress {
            total: total as u64,
            done: done as u64,
            failed: failed as u64,
            tokens: tokens as u64,
            cost_usd: cost,
        })
    }
}

pub async fn set_total(pool: &Db, job_id: i64, total: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("UPDATE jobs SET total = $1 WHERE id = $2").bind(total).bind(job_id).execute(db).await?;
        Ok(())
    })
}

/// At start-up: jobs this process id claims cannot be running (the id was
/// reused after a restart), so they are interrupted.
pub async fn interrupt_orphans(pool: &Db) -> AppResult<u64> {
    on_db!(pool, |db| {
        // On a shared server the process id may be another machine's
        // running job: there only a heartbeat staler than STALE_AFTER_SECS
        // (30 s) says a runner is gone.
        let done = if pool.is_postgres() {
            sqlx::query(
                "UPDATE jobs SET status = 'interrupted', runner_pid = NULL WHERE status = 'running'
                    AND (heartbeat IS NULL OR heartbeat < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-30 seconds'))",
            )
            .execute(db)
            .await?
        } else {
            sqlx::query(
                "UPDATE jobs SET status = 'interrupted', runner_pid = NULL WHERE status = 'running' AND runner_pid = $1",
            )
            .bind(std::process::id() as i64)
            .execute(db)
            .await?
        };
        // An experiment runs inside the server that started it.
        sqlx::query(
        "UPDATE experiments SET status = 'interrupted', error = 'the server stopped while it ran: start it again (finished stages are reused)'
          WHERE status = 'running'",
    )
    .execute(db)
    .await?;
        Ok(done.rows_affected())
    })
}

/// LLM calls logged for a job (cached ones included).
pub async fn item_call_count(pool: &Db, job_id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM llm_calls WHERE job_id = $1").bind(job_id).fetch_one(db).await?)
    })
}

/// Who answered a job's calls, as pages name it ("offline (no LLM)" or
/// "openai · MODEL"), if it made any.
pub async fn made_by(pool: &Db, job_id: i64) -> AppResult<Option<String>> {
    on_db!(pool, |db| {
        let row: Option<(i64, String, String)> =
            sqlx::query_as("SELECT id, provider, model FROM llm_calls WHERE job_id = $1 LIMIT 1")
                .bind(job_id)
                .fetch_optional(db)
                .await?;
        row.map(|(id, p, m)| Ok(super::stored::<types::CallProvider>("llm_calls", id, &p)?.label(&m))).transpose()
    })
}

/// A failure reason as it is counted: the parser's positions ("at line 1
/// column 523") and long tails dropped, so one cause is one reason.
pub fn reason_of(error: &str) -> String {
    let cut = error.find(" at line ").unwrap_or(error.len());
    let reason = error[..cut].trim();
    match reason.char_indices().nth(160) {
        Some((i, _)) => format!("{}…", &reason[..i]),
        None => reason.to_string(),
    }
}

/// What a job's model did ([`JobOutcome`]).
pub async fn outcome(pool: &Db, job_id: i64) -> AppResult<crate::model::JobOutcome> {
    outcome_of(pool, job_id, "%").await
}

/// What a job's model did in the items whose keys are `LIKE` `keys` (an
/// evaluation's judging items, `u-%`, apart from its alignment items).
pub async fn outcome_of(pool: &Db, job_id: i64, keys: &str) -> AppResult<crate::model::JobOutcome> {
    on_db!(pool, |db| {
        let (items, failed): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), CAST(COALESCE(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0) AS BIGINT) FROM job_items WHERE job_id = $1 AND key LIKE $2",
    )
    .bind(job_id)
    .bind(keys)
    .fetch_one(db)
    .await?;
        let errors: Vec<(String,)> = sqlx::query_as(
            "SELECT COALESCE(error, '') FROM job_items WHERE job_id = $1 AND status = 'failed' AND key LIKE $2",
        )
        .bind(job_id)
        .bind(keys)
        .fetch_all(db)
        .await?;
        let mut counts: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
        for (e,) in errors {
            *counts.entry(reason_of(&e)).or_default() += 1;
        }
        let mut reasons: Vec<(String, i64)> = counts.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        reasons.truncate(5);
        let (truncated, repaired): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(DISTINCT CASE WHEN truncated THEN item END),
                COUNT(DISTINCT CASE WHEN purpose LIKE '%\\_repair' ESCAPE '\\' THEN item END)
           FROM llm_calls WHERE job_id = $1 AND item IS NOT NULL AND item LIKE $2",
        )
        .bind(job_id)
        .bind(keys)
        .fetch_one(db)
        .await?;
        Ok(crate::model::JobOutcome {
            model: made_by(pool, job_id).await?,
            items,
            failed,
            truncated,
            repaired,
            reasons,
        })
    })
}

/// The latest job of `kind` over a question set (`parameters.set_id`).
pub async fn latest_for_set(pool: &Db, kind: JobKind, set_id: i64) -> AppResult<Option<i64>> {
    latest_where(pool, kind, "$.set_id", set_id).await
}

/// The latest job of `kind` over a study (`parameters.study_id`).
pub async fn latest_for_study(pool: &Db, kind: JobKind, study_id: i64) -> AppResult<Option<i64>> {
    latest_where(pool, kind, "$.study_id", study_id).await
}

async fn latest_where(pool: &Db, kind: JobKind, path: &str, id: i64) -> AppResult<Option<i64>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
        "SELECT id FROM jobs WHERE kind = $1 AND CAST(json_extract(parameters, $2) AS BIGINT) = $3 ORDER BY id DESC LIMIT 1",
    )
    .bind(kind.as_str())
    .bind(path)
    .bind(id)
    .fetch_optional(db)
    .await?)
    })
}

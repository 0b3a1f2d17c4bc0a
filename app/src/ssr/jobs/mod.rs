//! The job runner: the glue between the store and `engine::jobs`, shared
//! by the web server and the CLI so both run a job the same way (same
//! items, same gateway, same records).
//!
//! The runner knows no kind of job. Each stage implements [`Stage`] beside
//! its own code (its items, how they run, what is stored at the end), and
//! [`crate::ssr::stages`] maps each [`JobKind`] to its stage; callers hand
//! that map ([`Stages`]) to [`run`] and [`JobManager::new`]. A job's
//! settings are read once, typed ([`JobParams`]).

pub mod params;
mod summary;

use std::sync::Arc;
use std::time::Duration;

use crate::ssr::store::Db;
use engine::jobs::{ItemKey, Progress, RunEnd, WorkItem};
use engine::llm::settings::LlmSettings;
use engine::llm::{BoxFuture, Gateway};
use tokio_util::sync::CancellationToken;

pub use params::JobParams;
pub use summary::{items_page, job_summary};

use crate::error::{AppError, AppResult};
use crate::model::{JobKind, JobStatus, JobView};
use crate::ssr::store;
use crate::ssr::store::calls::SqliteCallStore;
use crate::ssr::store::jobs::SqliteJobStore;

/// A stage's items, to come.
pub type Items<'a> = BoxFuture<'a, AppResult<Vec<WorkItem>>>;
/// How a stage's run ended (`Err`: the job failed, with the reason), to come.
pub type Ended<'a> = BoxFuture<'a, AppResult<Result<RunEnd, String>>>;

/// One stage's job code, as the runner calls it.
pub trait Stage: Send + Sync {
    /// The job's items (on a resume, the same ones: the runner skips those done).
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, params: &'a JobParams) -> Items<'a>;

    /// Runs `items` (and any later phase of the job).
    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a>;

    /// Which items say whether the job made anything, when not all of them:
    /// a `LIKE` pattern of their keys and their name ("judging items").
    fn decisive_items(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// After every item finished: stores what the job made.
    fn finish<'a>(&'a self, _run: &'a Run<'a>) -> BoxFuture<'a, AppResult<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// Each job kind's stage.
pub type Stages = fn(JobKind) -> &'static dyn Stage;

/// A job as it runs: what its stage's code needs.
pub struct Run<'a> {
    pub pool: &'a Db,
    pub llm: &'a LlmSettings,
    /// The job's gateway (its calls are written with its items; without the
    /// cache when the job asked for none).
    pub gateway: &'a Gateway,
    pub job: &'a JobView,
    pub params: &'a JobParams,
    pub phase: Phase<'a>,
}

/// Creates (does not run) a job of `params`' kind with its settings; returns its id.
/// Secrets among the settings (a method's bearer token, an API key in its
/// body template: `engine::secret`) are stored apart, redacted in the
/// settings every reader sees, and put back only when the job runs.
pub async fn create(pool: &Db, project_id: i64, params: &JobParams, total: i64) -> AppResult<i64> {
    Ok(create_showing(pool, project_id, params, total).await?.0)
}

/// [`create`], returning also the settings as every reader sees them.
pub async fn create_showing(
    pool: &Db,
    project_id: i64,
    params: &JobParams,
    total: i64,
) -> AppResult<(i64, serde_json::Value)> {
    let (shown, secrets) = engine::secret::split(&params.to_json());
    let id =
        store::jobs::create_job(pool, project_id, params.kind(), &shown, secrets.to_stored().as_deref(), total).await?;
    Ok((id, shown))
}

impl Run<'_> {
    /// Runs every item with `work`, the configured concurrency at a time:
    /// the whole of most stages' runs.
    pub async fn each<W, Fut>(&self, items: Vec<WorkItem>, work: W) -> AppResult<Result<RunEnd, String>>
    where
        W: Fn(WorkItem) -> Fut + Sync,
        Fut: std::future::Future<Output = engine::jobs::ItemOutcome>,
    {
        Ok(self.phase.run(items, self.phase.concurrency, work).await)
    }
}

/// The project of a job that must have one.
pub fn project_of(job: &JobView) -> AppResult<i64> {
    job.project_id.ok_or_else(|| AppError::Invalid(format!("job {} has no project", job.id)))
}

/// The one reader of stored item results: the finished items of `items`
/// whose key `pick` chooses, each with its key and its result read as its
/// stage's record `T`. A result that cannot be read is an error naming its
/// item — never a row left out of a report in silence. (An evaluation's
/// items have keys of their own: `evaluations::Results`.)
pub fn done_results<I: engine::jobs::JobItem>(
    items: &[crate::model::JobItemView],
    pick: impl Fn(&ItemKey) -> bool,
) -> AppResult<Vec<(ItemKey, I::Outcome)>> {
    items
        .iter()
        .filter(|i| i.status == crate::model::ItemStatus::Done)
        .filter_map(|i| ItemKey::parse(&i.key).filter(|k| pick(k)).map(|k| (k, i)))
        .map(|(k, i)| Ok((k, read_result::<I>(i)?)))
        .collect()
}

/// One finished item's result as its stage's record `T` (see [`done_results`]).
pub fn read_result<I: engine::jobs::JobItem>(item: &crate::model::JobItemView) -> AppResult<I::Outcome> {
    engine::jobs::ItemOutcome::read::<I>(item.result.as_deref().unwrap_or(""))
        .map_err(|e| AppError::Failed(format!("item {}: {e}", item.key)))
}

/// How one run of a job runs its items: everything `engine::jobs::run`
/// needs besides the items and the work, so a job with several phases (the
/// graph's descriptions, the answers' reports or embeddings) passes one value.
pub struct Phase<'a> {
    pub job_id: i64,
    pub store: &'a dyn engine::jobs::JobStore,
    pub concurrency: usize,
    pub retry_failed: bool,
    pub cancel: &'a CancellationToken,
    pub on_progress: &'a (dyn Fn(Progress) + Send + Sync),
}

impl Phase<'_> {
    /// Runs `items` (those not yet done) with `work`, `concurrency` at a time.
    pub async fn run<W, Fut>(&self, items: Vec<WorkItem>, concurrency: usize, work: W) -> Result<RunEnd, String>
    where
        W: Fn(WorkItem) -> Fut + Sync,
        Fut: std::future::Future<Output = engine::jobs::ItemOutcome>,
    {
        engine::jobs::run(
            self.job_id,
            items,
            self.store,
            concurrency,
            self.retry_failed,
            self.cancel,
            self.on_progress,
            work,
        )
        .await
    }
}

/// Runs a job's unfinished items (all of them the first time; on resume,
/// those not yet done, and failed ones too when `retry_failed`). Returns
/// when the job finishes or `cancel` fires; the job's row says which.
///
/// On PostgreSQL the job's items go through the database's queue, so
/// other processes ([`join`]: `assay worker`, other servers) take part; a
/// cancel here ends the job for all of them.
pub async fn run(
    pool: &Db,
    llm: &LlmSettings,
    stages: Stages,
    job_id: i64,
    retry_failed: bool,
    cancel: CancellationToken,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
) -> AppResult<RunEnd> {
    run_as(pool, llm, stages, job_id, Role::Start { retry_failed }, cancel, on_progress).await
}

/// Runs this process's part of a job in `role`, catching a panic (a bug in
/// Assay) wherever it happens in the part: the process that started the
/// job marks it failed, saying so, rather than leaving it "running" with
/// no one running it (its page would wait for it forever); a process that
/// joined it leaves, its claims going back when its heartbeat stops. The
/// caller gets the panic's message either way, and its own bookkeeping
/// (`JobManager`'s running jobs) goes on.
#[allow(clippy::too_many_arguments)]
async fn run_as(
    pool: &Db,
    llm: &LlmSettings,
    stages: Stages,
    job_id: i64,
    role: Role,
    cancel: CancellationToken,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
) -> AppResult<RunEnd> {
    use futures_util::FutureExt;
    let part = run_part(pool, llm, stages, job_id, role, cancel, on_progress);
    match std::panic::AssertUnwindSafe(part).catch_unwind().await {
        Ok(end) => end,
        Err(panic) => {
            let what = panic_text(panic.as_ref());
            match role {
                Role::Start { .. } => Err(ended_by_panic(pool, job_id, what).await),
                Role::Join => {
                    tracing::error!(job_id, panic = %what, "this process's part of a shared job panicked; it leaves");
                    Err(AppError::Failed(format!(
                        "job {job_id}: this process's part failed inside Assay, a bug to report: {what}"
                    )))
                }
            }
        }
    }
}

/// A job whose run panicked ends failed, saying so. The error the caller
/// gets says the same.
async fn ended_by_panic(pool: &Db, job_id: i64, what: String) -> AppError {
    let error = format!("Assay failed inside the job, a bug to report: {what}");
    tracing::error!(job_id, %error, "a job's run panicked");
    if let Err(e) = store::jobs::mark_ended(pool, job_id, JobStatus::Failed, Some(&error)).await {
        tracing::error!(job_id, error = %e, "the job could not be marked failed");
    }
    AppError::Failed(format!("job {job_id} failed: {error}"))
}

/// A panic's message (a `&str` or a `String`, as `panic!` makes them).
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// Aborts its task when dropped: a job's heartbeat stops with its run,
/// however the run ends (a panic included).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Takes part in a job another process started, on a database several
/// share (PostgreSQL): runs the items this process claims, phase by phase,
/// until the job ends everywhere. `cancel` stops this process only: its
/// claims go back, and the job goes on elsewhere. Refused on SQLite.
pub async fn join(
    pool: &Db,
    llm: &LlmSettings,
    stages: Stages,
    job_id: i64,
    cancel: CancellationToken,
) -> AppResult<RunEnd> {
    if !pool.is_postgres() {
        return Err(AppError::Invalid("only a PostgreSQL database's jobs are shared by several processes".into()));
    }
    run_as(pool, llm, stages, job_id, Role::Join, cancel, &|_| {}).await
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Starts or resumes the job: a cancel here cancels it.
    Start { retry_failed: bool },
    /// Helps with a job that runs.
    Join,
}

/// The end of a job on a shared queue: one process, whichever claims it,
/// checks the items, stores what the job made and marks it ended.
const END_PHASE: &str = "end";

/// This process's part of a job in `role`, unguarded ([`run_as`] guards it).
async fn run_part(
    pool: &Db,
    llm: &LlmSettings,
    stages: Stages,
    job_id: i64,
    role: Role,
    cancel: CancellationToken,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
) -> AppResult<RunEnd> {
    let job = store::jobs::get_job(pool, job_id).await?;
    let shared = pool.is_postgres();
    let retry_failed = match role {
        Role::Start { retry_failed } => {
            if job.status == JobStatus::Running {
                return Err(AppError::Conflict(format!("job {job_id} is already running")));
            }
            if shared {
                // Earlier runs' phases and claims: this run queues its own.
                store::queue::reset(pool, job_id).await?;
            }
            retry_failed
        }
        // (A job whose every process died shows interrupted: a worker that
        // finds its items free takes it up.)
        Role::Join if !matches!(job.status, JobStatus::Running | JobStatus::Interrupted) => {
            return Ok(RunEnd::Cancelled);
        }
        Role::Join => false,
    };
    // On a shared database the configured concurrency is the deployment's
    // total: every process's model requests hold a slot of its budget.
    let shared_llm;
    let llm = if shared && llm.provider == engine::llm::settings::ProviderKind::OpenAi {
        let limit = store::slots::DbLimit::of_process(pool, llm.concurrency).await?;
        shared_llm = LlmSettings { shared_limit: Some(engine::llm::openai::SharedLimitHandle(limit)), ..llm.clone() };
        &shared_llm
    } else {
        llm
    };
    let secrets = store::jobs::secrets(pool, job_id).await?;
    let params = JobParams::with_secrets(&job, secrets.as_deref())?;
    let stage = stages(job.kind);
    let items = stage.items(pool, &job, &params).await?;
    if role != Role::Join {
        store::jobs::set_total(pool, job_id, items.len() as i64).await?;
    }
    // The job's calls are written with the items that made them.
    let calls = Arc::new(SqliteCallStore::buffered(pool.clone()).await?);
    let batches = Arc::new(store::batches::JobBatches::new(pool.clone(), job_id));
    let mut gateway = llm
        .job_gateway(calls.clone(), engine::offline::provider, batches)
        .map_err(|e| AppError::Invalid(e.to_string()))?;
    // A retry of failed items asks the model again: the cache would answer
    // them with the very replies that failed (unreadable, cut, refused).
    // Replies are still logged and cached; items done before are not rerun.
    // A process joining a retry (a worker on a shared database) takes the
    // same failed items from the queue: it asks the model again too.
    let retrying = match role {
        Role::Join => store::jobs::retrying(pool, job_id).await?,
        Role::Start { .. } => retry_failed,
    };
    if params.no_cache() || retrying {
        gateway = gateway.without_cache();
    }
    if role != Role::Join {
        store::jobs::mark_running(pool, job_id, retry_failed).await?;
    }
    let worker = pool.claimant();
    let heartbeat = AbortOnDrop(tokio::spawn(heartbeat(pool.clone(), job_id, shared.then(|| cancel.clone()))));
    let mut job_store = SqliteJobStore::new(pool.clone()).with_calls(calls.clone());
    if shared {
        job_store = job_store.shared(worker, &llm.describe());
    }
    let concurrency = llm.job_concurrency();
    let phase = Phase { job_id, store: &job_store, concurrency, retry_failed, cancel: &cancel, on_progress };
    let run = Run { pool, llm, gateway: &gateway, job: &job, params: &params, phase };
    let mut result = stage.execute(&run, items).await.unwrap_or_else(|e| Err(e.to_string()));
    if shared && matches!(result, Ok(RunEnd::Finished)) {
        // One process ends the job; the others wait for it to be ended.
        let ended = async {
            calls.flush().await?;
            engine::jobs::SharedQueue::enqueue(&job_store, job_id, END_PHASE, &[END_PHASE.to_string()]).await?;
            claim_the_end(pool, &job_store, job_id, &cancel).await
        };
        match ended.await {
            Ok(true) => {}
            Ok(false) => {
                drop(heartbeat);
                store::queue::release(pool, job_id, worker).await?;
                return Ok(if cancel.is_cancelled() { RunEnd::Cancelled } else { RunEnd::Finished });
            }
            Err(e) => result = Err(e),
        }
    }
    // A stage whose every item failed has nothing to give the next one:
    // the job fails, saying why (its items stay, to be retried).
    if matches!(result, Ok(RunEnd::Finished)) {
        if let Some(why) = every_item_failed(pool, job_id, stage.decisive_items()).await? {
            result = Err(why);
        }
    }
    if matches!(result, Ok(RunEnd::Finished)) {
        if let Err(e) = stage.finish(&run).await {
            result = Err(e.to_string());
        }
    }
    drop(heartbeat);
    // Calls made outside any item (or by items cancelled in flight).
    if let Err(e) = calls.flush().await {
        if result.is_ok() {
            result = Err(e);
        }
    }
    let ended = match &result {
        Ok(RunEnd::Finished) => store::jobs::mark_ended(pool, job_id, JobStatus::Done, None).await,
        // A process that joined leaves the job to the others.
        Ok(RunEnd::Cancelled) if role == Role::Join => Ok(()),
        // Nor does its failure end the job (a wrong LLM setting, a lost
        // connection): the others go on, and its claims go back.
        Err(e) if role == Role::Join => {
            tracing::warn!(job_id, error = %e, "left a shared job");
            Ok(())
        }
        Ok(RunEnd::Cancelled) => {
            store::jobs::mark_ended_if_running(pool, job_id, JobStatus::Cancelled).await.map(|_| ())
        }
        Err(e) => store::jobs::mark_ended(pool, job_id, JobStatus::Failed, Some(e)).await,
    };
    if shared {
        // The end's claim is done with; claims not run to their end (a
        // cancel) go back at once, for the others.
        if ended.is_ok() && matches!(result, Ok(RunEnd::Finished)) {
            store::queue::complete(pool, job_id, worker, &[END_PHASE.to_string()]).await?;
        }
        store::queue::release(pool, job_id, worker).await?;
    }
    ended?;
    result.map_err(|e| AppError::Failed(format!("job {job_id} failed: {e}")))
}

/// Waits for the end of a job whose items are all recorded: `true` when
/// this process claimed it (and must end the job), `false` when another
/// ended it (or this process was stopped).
async fn claim_the_end(
    pool: &Db,
    queue: &SqliteJobStore,
    job_id: i64,
    cancel: &CancellationToken,
) -> Result<bool, String> {
    use engine::jobs::SharedQueue;
    loop {
        if !queue.claim(job_id, END_PHASE, 1).await?.is_empty() {
            return Ok(true);
        }
        if queue.remaining(job_id, END_PHASE).await? == 0 {
            return Ok(false);
        }
        // Ended meanwhile (or cancelled) by another process?
        if store::jobs::get_job(pool, job_id).await.map_err(|e| e.to_string())?.status != JobStatus::Running {
            return Ok(false);
        }
        tokio::select! {
            _ = cancel.cancelled() => return Ok(false),
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// Keeps a running job's heartbeat; on a shared queue also this process's
/// claims', and stops this process's part (`stop`) when the job is no
/// longer running (cancelled, failed or ended by another process).
async fn heartbeat(pool: Db, job_id: i64, shared: Option<CancellationToken>) {
    let every = match &shared {
        Some(_) => Duration::from_millis((pool.claim_timeout() * 1000 / 5).clamp(200, 5000)),
        None => Duration::from_secs(5),
    };
    loop {
        tokio::time::sleep(every).await;
        let _ = store::jobs::heartbeat(&pool, job_id).await;
        if let Some(stop) = &shared {
            let _ = store::queue::heartbeat(&pool, pool.claimant()).await;
            if let Ok(job) = store::jobs::get_job(&pool, job_id).await {
                if job.status != JobStatus::Running {
                    stop.cancel();
                }
            }
        }
    }
}

/// "every one of its 7 items failed: the reply is not a question (7)", when
/// a job's items all failed; `decisive` (a key pattern and its name) counts
/// only those items (an evaluation's judging items: aligned answers with no
/// verdict are no evaluation).
pub async fn every_item_failed(pool: &Db, job_id: i64, decisive: Option<(&str, &str)>) -> AppResult<Option<String>> {
    let mut outcome = store::jobs::outcome(pool, job_id).await?;
    let mut what = "items";
    if let Some((pattern, name)) = decisive {
        let judging = store::jobs::outcome_of(pool, job_id, pattern).await?;
        if judging.items > 0 {
            outcome = judging;
            what = name;
        }
    }
    if outcome.items == 0 || outcome.failed < outcome.items {
        return Ok(None);
    }
    let reasons: Vec<String> = outcome.reasons.iter().map(|(r, n)| format!("{r} ({n})")).collect();
    let items = if outcome.items == 1 {
        format!("its one {}", what.trim_end_matches('s'))
    } else {
        format!("every one of its {} {what}", outcome.items)
    };
    Ok(Some(format!("{items} failed: {}", reasons.join("; "))))
}

/// Jobs the web server runs in the background, and how to cancel them.
pub struct JobManager {
    stages: Stages,
    running: std::sync::Mutex<std::collections::HashMap<i64, CancellationToken>>,
}

impl JobManager {
    pub fn new(stages: Stages) -> JobManager {
        JobManager { stages, running: Default::default() }
    }

    /// Counts `job_id` as running here, with the token that cancels it;
    /// `None` when it already runs here.
    fn enter(&self, job_id: i64) -> Option<CancellationToken> {
        let mut running = self.running.lock().unwrap();
        if running.contains_key(&job_id) {
            return None;
        }
        let token = CancellationToken::new();
        running.insert(job_id, token.clone());
        Some(token)
    }

    /// Starts (or resumes) a job in the background and returns at once.
    pub fn spawn(self: &Arc<Self>, pool: Db, llm: Arc<LlmSettings>, job_id: i64, retry_failed: bool) -> AppResult<()> {
        let token = self.enter(job_id).ok_or_else(|| AppError::Conflict(format!("job {job_id} is already running")))?;
        let manager = self.clone();
        tokio::spawn(async move {
            if let Err(e) = run(&pool, &llm, manager.stages, job_id, retry_failed, token, &|_| {}).await {
                tracing::warn!(job_id, error = %e, "job ended with an error");
                // A run that never started leaves its job queued: say why instead.
                let _ = store::jobs::fail_queued(&pool, job_id, &e.to_string()).await;
            }
            manager.running.lock().unwrap().remove(&job_id);
        });
        Ok(())
    }

    /// Runs a job here to its end (cancellable from its page like any
    /// other) and returns it as it ended.
    pub async fn run_to_end(
        &self,
        pool: Db,
        llm: Arc<LlmSettings>,
        job_id: i64,
        retry_failed: bool,
    ) -> AppResult<JobView> {
        let token = self.enter(job_id).ok_or_else(|| AppError::Conflict(format!("job {job_id} is already running")))?;
        let result = run(&pool, &llm, self.stages, job_id, retry_failed, token, &|_| {}).await;
        self.running.lock().unwrap().remove(&job_id);
        if let Err(e) = &result {
            let _ = store::jobs::fail_queued(&pool, job_id, &e.to_string()).await;
        }
        store::jobs::get_job(&pool, job_id).await
    }

    /// Joins a job another process runs on the shared database, in the
    /// background; `false` when it already runs here.
    pub fn spawn_join(self: &Arc<Self>, pool: Db, llm: Arc<LlmSettings>, job_id: i64) -> bool {
        let Some(token) = self.enter(job_id) else { return false };
        let manager = self.clone();
        tokio::spawn(async move {
            if let Err(e) = join(&pool, &llm, manager.stages, job_id, token).await {
                tracing::warn!(job_id, error = %e, "a shared job's part here ended with an error");
            }
            manager.running.lock().unwrap().remove(&job_id);
        });
        true
    }

    /// On a database several processes share (PostgreSQL): every
    /// `poll`, joins the running jobs that have items free to claim (new
    /// ones, or ones whose claimant died), with the settings `llm` gives
    /// then. At `stop`, this process's parts stop (their claims go back;
    /// the jobs go on elsewhere) and it returns when they have.
    pub async fn work_shared_queue(
        self: &Arc<Self>,
        pool: Db,
        llm: impl Fn() -> Arc<LlmSettings>,
        poll: Duration,
        stop: CancellationToken,
    ) {
        while !stop.is_cancelled() {
            match store::queue::open_jobs(&pool, pool.claim_timeout()).await {
                Ok(jobs) => {
                    for job_id in jobs {
                        if self.spawn_join(pool.clone(), llm(), job_id) {
                            tracing::info!(job_id, "joined a shared job");
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "the shared queue could not be read"),
            }
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(poll) => {}
            }
        }
        let tokens: Vec<CancellationToken> = self.running.lock().unwrap().values().cloned().collect();
        for token in tokens {
            token.cancel();
        }
        while !self.running.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Asks a running job to stop; returns whether it was running here.
    pub fn cancel(&self, job_id: i64) -> bool {
        match self.running.lock().unwrap().get(&job_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

//! Background jobs, their items and call logs.

use serde::{Deserialize, Serialize};

pub use types::{ItemStatus, JobKind, JobStatus};

/// A job, with its status as the user should see it (`interrupted` when the
/// process running it died).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobView {
    pub id: i64,
    pub project_id: Option<i64>,
    pub kind: JobKind,
    /// The job's settings as stored (JSON). Never sent to a browser: a
    /// question job's plan names thousands of items, and a method's
    /// parameters may hold a secret; the CLI prints them.
    #[serde(skip)]
    pub parameters: String,
    pub status: JobStatus,
    pub total: i64,
    pub done: i64,
    pub failed: i64,
    pub tokens: i64,
    pub cost_usd: f64,
    pub error: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Seconds from start to finish (or to now, while running).
    pub elapsed_secs: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobItemView {
    pub key: String,
    pub status: ItemStatus,
    /// The whole result (JSON); `None` in a page of items, which carries
    /// the summary instead (the result loads when asked for).
    pub result: Option<String>,
    pub error: Option<String>,
    pub tokens: i64,
    pub cost_usd: f64,
    pub finished_at: String,
    /// The result in a line: its fields, long texts as word counts, lists
    /// as their lengths.
    #[serde(default)]
    pub summary: String,
}

/// Jobs the Jobs page lists at once.
pub const JOBS_PER_PAGE: i64 = 50;

/// A page of a project's jobs, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobsPage {
    pub jobs: Vec<JobView>,
    pub total: i64,
    /// From 1.
    pub page: i64,
    pub pages: i64,
}

/// What a live view watches, as the server sees it now: a fingerprint that
/// changes whenever the view would show something new, and whether it is
/// still going (a job runs, an experiment runs, a study takes ratings).
/// A page stops watching once it is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveState {
    pub version: String,
    pub active: bool,
}

/// Items a job page shows at once.
pub const ITEMS_PER_PAGE: i64 = 50;

/// One page of a job's finished items (oldest first), with how many there
/// are in all (of the status asked for, if any).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobItemsPage {
    pub items: Vec<JobItemView>,
    pub total: i64,
    /// From 1.
    pub page: i64,
    pub pages: i64,
}

/// One logged LLM call, prompt and reply as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallView {
    pub id: i64,
    pub purpose: String,
    pub provider: types::CallProvider,
    pub model: String,
    pub sample: i64,
    pub prompt: String,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cost_usd: f64,
    pub latency_ms: i64,
    pub attempts: i64,
    pub cached: bool,
    pub prompt_hash: Option<String>,
    pub created_at: String,
}

/// A job with the items that failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobDetail {
    pub job: JobView,
    pub outcome: JobOutcome,
    /// The job's finished items in numbers and words (the items
    /// themselves load a page at a time).
    pub summary: Vec<(String, String)>,
    /// The failures' reasons, most frequent first, with their counts (at
    /// most 10).
    pub failure_reasons: Vec<(String, i64)>,
    /// The processes running the job's items now (a team deployment's
    /// database: `assay serve`, `assay worker`, the command that started
    /// it), busiest first; empty on SQLite, where one process runs a job.
    #[serde(default)]
    pub claimants: Vec<Claimant>,
    /// The batches the job sent through the Batch API (by id).
    #[serde(default)]
    pub batches: Vec<BatchView>,
}

/// A batch a job sent through the Batch API, as the provider last
/// reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchView {
    pub id: String,
    /// The provider's word (`validating`, `in_progress`, `completed`, …;
    /// another provider may use others).
    pub provider_status: String,
    pub completed: i64,
    pub failed: i64,
    pub total: i64,
    /// Its output has been read into the job's items.
    pub read: bool,
}

/// A process holding items of a running job (its claim's heartbeat is
/// within the claim timeout).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claimant {
    /// The machine's host name.
    pub host: String,
    pub pid: u32,
    /// Items it holds: running, or claimed and about to run.
    pub items: i64,
    /// Seconds since its last heartbeat.
    pub heartbeat_secs: f64,
}

impl Claimant {
    /// From a worker id, `host:pid:started` (as `store::queue::worker_id` makes it);
    /// a host name never has a colon, nor does the rest.
    pub fn from_worker(worker: &str, items: i64, heartbeat_secs: f64) -> Claimant {
        let mut parts = worker.rsplitn(3, ':');
        let _started = parts.next();
        let pid = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let host = parts.next().unwrap_or(worker).to_string();
        Claimant { host, pid, items, heartbeat_secs }
    }
}

/// What a job's model did, from its items and its call log: items that
/// failed, whose replies were cut by `max_tokens`, or that needed a repair
/// turn, with the commonest reasons for failing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobOutcome {
    /// Who answered ("openai · MODEL", "offline (no LLM)"), if anyone did.
    pub model: Option<String>,
    pub items: i64,
    pub failed: i64,
    pub truncated: i64,
    pub repaired: i64,
    /// Failure reasons, commonest first, with their counts (at most five).
    pub reasons: Vec<(String, i64)>,
}

impl JobOutcome {
    /// "2 of 8 items failed (the verdict has no Relevance score for Answer 1: 2); 3 cut at max_tokens; 1 repaired",
    /// or `None` when nothing went wrong.
    pub fn sentence(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.failed > 0 {
            let reasons: Vec<String> = self.reasons.iter().map(|(r, n)| format!("{r} ({n})")).collect();
            parts.push(format!("{} of {} items failed: {}", self.failed, self.items, reasons.join("; ")));
        }
        if self.truncated > 0 {
            parts.push(format!("{} of {} items had replies cut at max_tokens", self.truncated, self.items));
        }
        if self.repaired > 0 {
            parts.push(format!(
                "{} of {} items needed a repair turn for JSON of the wrong shape",
                self.repaired, self.items
            ));
        }
        (!parts.is_empty()).then(|| parts.join(". ") + ".")
    }
}

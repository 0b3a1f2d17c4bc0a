//! Live views without polling loops: a page that shows something still
//! going (a running job, an experiment, a study taking ratings) asks
//! [`wait`] for its next change. The request returns as soon as the
//! topic's fingerprint differs from the one the page last saw, when the
//! topic stops being active, or after [`LONG_POLL`]; the page then
//! refetches what changed and asks again, and stops asking once nothing
//! is active. An open tab on a finished job sends nothing at all.
//!
//! The fingerprints are cheap reads of the rows a page shows (the job's
//! progress, the project's running jobs, the experiment's status, the
//! study's ratings), checked every [`CHECK_EVERY`] while a request waits;
//! they see work done by any process on the database (the CLI, workers).

use std::time::Duration;

use crate::error::{AppError, AppResult};
use crate::model::LiveState;
use crate::ssr::store::{self, access::Obj, Db};

/// How long a request waits for a change before it answers "no change".
pub const LONG_POLL: Duration = Duration::from_secs(25);
/// How often a waiting request reads its topic's fingerprint: a job's
/// progress twice a second; a study's ratings, which people make, every
/// 2 s (an open study's page may stay open for days).
pub const CHECK_EVERY: Duration = Duration::from_millis(500);
pub const CHECK_STUDY_EVERY: Duration = Duration::from_secs(2);

/// What a live view watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// A project's jobs (a stage page's latest job, the Jobs page).
    Project(i64),
    Job(i64),
    Experiment(i64),
    /// A study's ratings and its LLM rater.
    Study(i64),
}

impl Topic {
    /// From the wire's name and id.
    pub fn parse(name: &str, id: i64) -> AppResult<Topic> {
        Ok(match name {
            "project" => Topic::Project(id),
            "job" => Topic::Job(id),
            "experiment" => Topic::Experiment(id),
            "study" => Topic::Study(id),
            _ => return Err(AppError::Invalid(format!("nothing to watch called \"{name}\""))),
        })
    }

    /// What reading it needs access to.
    pub fn object(self) -> Obj {
        match self {
            Topic::Project(id) => Obj::Project(id),
            Topic::Job(id) => Obj::Job(id),
            Topic::Experiment(id) => Obj::Experiment(id),
            Topic::Study(id) => Obj::Study(id),
        }
    }
}

/// The topic's state now.
pub async fn state(pool: &Db, topic: Topic) -> AppResult<LiveState> {
    let (version, active) = match topic {
        Topic::Project(id) => store::jobs::project_activity(pool, id).await?,
        Topic::Job(id) => {
            let j = store::jobs::get_job(pool, id).await?;
            (format!("{}:{}:{}:{}:{}", j.status, j.done, j.failed, j.total, j.tokens), j.status.is_active())
        }
        Topic::Experiment(id) => {
            let e = store::experiments::get(pool, id).await?;
            let (jobs, _) = store::jobs::project_activity(pool, e.project_id).await?;
            (format!("{}:{}|{jobs}", e.status, e.stage.unwrap_or_default()), e.status == "running")
        }
        Topic::Study(id) => {
            // (id, project, name, intro, summary, dimensions, target, is_open, …)
            let is_open = store::studies::get(pool, id).await?.7;
            let version = store::studies::results_version(pool, id).await?;
            // Its last part is the LLM rater's job: "id:status:done:failed".
            let rating =
                version.rsplit('|').next().is_some_and(|job| job.contains(":running:") || job.contains(":queued:"));
            (format!("{is_open}|{version}"), is_open || rating)
        }
    };
    Ok(LiveState { version, active })
}

/// Waits until the topic differs from `seen` (at once when `seen` is none),
/// is no longer active, or `max` has passed; then its state.
pub async fn wait(pool: &Db, topic: Topic, seen: Option<&str>, max: Duration) -> AppResult<LiveState> {
    let deadline = tokio::time::Instant::now() + max;
    let every = if matches!(topic, Topic::Study(_)) { CHECK_STUDY_EVERY } else { CHECK_EVERY };
    loop {
        let now = state(pool, topic).await?;
        if seen != Some(now.version.as_str()) || !now.active || tokio::time::Instant::now() + every > deadline {
            return Ok(now);
        }
        tokio::time::sleep(every).await;
    }
}

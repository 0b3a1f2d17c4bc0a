//! `assay job`: list, inspect and resume jobs.

use app::ssr::store::Db;
use clap::Subcommand;
use engine::llm::settings::LlmSettings;
use serde_json::json;
use std::process::ExitCode;

use super::*;

#[derive(Subcommand, Debug)]
pub(super) enum JobCommand {
    /// Jobs of a project, newest first.
    List { project: String },
    /// One job: status, counters, failed items.
    Show { id: i64 },
    /// Run a job's unfinished items (after an interruption or a cancel).
    Resume {
        id: i64,
        /// Also run again the items that failed.
        #[arg(long)]
        retry_failed: bool,
    },
    /// Stop a running job on a PostgreSQL database several processes
    /// share: every process working on it stops within a heartbeat; what
    /// finished is kept (resume it later). On SQLite a job runs in the
    /// process that started it: stop that process (Ctrl-C).
    Cancel { id: i64 },
}

pub(super) async fn job(pool: &Db, out: Output, llm: &LlmSettings, cmd: JobCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        JobCommand::List { project } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let jobs = app::ssr::store::jobs::list_jobs(pool, p.summary.id).await?;
            out.print(json!(jobs.iter().map(job_json).collect::<Vec<_>>()), || {
                if jobs.is_empty() {
                    format!("{} has no jobs", p.summary.name)
                } else {
                    jobs.iter().map(job_line).collect::<Vec<_>>().join("\n")
                }
            });
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Show { id } => {
            let j = app::ssr::store::jobs::get_job(pool, id).await?;
            let items = app::ssr::store::jobs::job_items(pool, id).await?;
            let failures: Vec<_> = items.iter().filter(|i| i.status == app::model::ItemStatus::Failed).collect();
            let outcome = app::ssr::store::jobs::outcome(pool, id).await?;
            let mut value = job_json(&j);
            value["failures"] =
                json!(failures.iter().map(|i| json!({"item": i.key, "error": i.error})).collect::<Vec<_>>());
            value["outcome"] = json!(outcome);
            out.print(value, || {
                let mut s = job_line(&j);
                if let Some(e) = &j.error {
                    s.push_str(&format!("\nerror: {e}"));
                }
                if let Some(m) = &outcome.model {
                    s.push_str(&format!("\nanswered by {m}"));
                }
                if let Some(said) = outcome.sentence() {
                    s.push_str(&format!("\n{said}"));
                }
                for f in &failures {
                    s.push_str(&format!("\n  failed {}: {}", f.key, f.error.as_deref().unwrap_or("")));
                }
                if matches!(j.status, app::model::JobStatus::Interrupted | app::model::JobStatus::Cancelled) {
                    s.push_str(&format!("\nresume with: assay job resume {}", j.id));
                }
                s
            });
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Resume { id, retry_failed } => run_job(pool, out, llm, id, retry_failed).await,
        JobCommand::Cancel { id } => {
            anyhow::ensure!(
                pool.is_postgres(),
                "job {id}: on SQLite a job runs in the process that started it (the web server, or a command): stop it there"
            );
            let j = app::ssr::store::jobs::get_job(pool, id).await?;
            let cancelled =
                app::ssr::store::jobs::mark_ended_if_running(pool, id, app::model::JobStatus::Cancelled).await?;
            anyhow::ensure!(cancelled, "job {id} is not running ({})", j.status);
            let after = app::ssr::store::jobs::get_job(pool, id).await?;
            out.print(job_json(&after), || {
                format!(
                    "{}
resume with: assay job resume {id}",
                    job_line(&after)
                )
            });
            Ok(ExitCode::SUCCESS)
        }
    }
}

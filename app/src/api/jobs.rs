//! Background jobs: listing, detail and call logs, resume, cancel, and the chunk-summaries job.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::store;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// A page of a project's jobs, newest first.
#[server(output = crate::codec::Json)]
pub async fn list_jobs(project_id: i64, page: i64) -> Result<JobsPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::jobs::jobs_page(&call.state.pool, project_id, page).await
}

/// The newest job of each kind of a project (what a stage page's job line
/// shows).
#[server(output = crate::codec::Json)]
pub async fn latest_jobs(project_id: i64) -> Result<Vec<JobView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::jobs::latest_per_kind(&call.state.pool, project_id).await
}

/// Waits for what a live view shows to change: `topic` is `project` (its
/// jobs), `job`, `experiment` or `study`, and `id` its id; answers when
/// its state differs from `seen`, when it is no longer active, or after
/// 25 s (see `ssr::live`).
#[server(output = crate::codec::Json)]
pub async fn watch(topic: String, id: i64, seen: Option<String>) -> Result<LiveState, AppError> {
    let call = Request::now()?;
    let topic = crate::ssr::live::Topic::parse(&topic, id)?;
    call.require(topic.object(), Need::Read).await?;
    crate::ssr::live::wait(&call.state.pool, topic, seen.as_deref(), crate::ssr::live::LONG_POLL).await
}

#[server(output = crate::codec::Json)]
pub async fn get_job_detail(id: i64) -> Result<JobDetail, AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(id), Need::Read).await?;
    let state = call.state.clone();
    let (summary, failure_reasons) = crate::ssr::jobs::job_summary(&state.pool, id).await?;
    let claimants = store::queue::claimants(&state.pool, id, state.pool.claim_timeout())
        .await?
        .into_iter()
        .map(|(worker, items, secs)| Claimant::from_worker(&worker, items, secs))
        .collect();
    Ok(JobDetail {
        job: store::jobs::get_job(&state.pool, id).await?,
        outcome: store::jobs::outcome(&state.pool, id).await?,
        summary,
        failure_reasons,
        claimants,
        batches: store::batches::of_job(&state.pool, id).await?,
    })
}

/// A page of a job's finished items, results summarised (`status`:
/// "done" or "failed" only; `page` from 1).
#[server(output = crate::codec::Json)]
pub async fn get_job_items(id: i64, page: i64, status: Option<String>) -> Result<JobItemsPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(id), Need::Read).await?;
    let status = match status.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(crate::model::ItemStatus::parse(s)?),
    };
    crate::ssr::jobs::items_page(&call.state.pool, id, status, page).await
}

/// One finished item with its whole result, as indented JSON (a text
/// result as it is): the browser shows it as sent, with no JSON code of
/// its own.
#[server(output = crate::codec::Json)]
pub async fn get_job_item(job_id: i64, item: String) -> Result<JobItemView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(job_id), Need::Read).await?;
    let mut i = store::jobs::job_item(&call.state.pool, job_id, &item).await?;
    i.result = i.result.map(|text| match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or(text),
        Err(_) => text,
    });
    Ok(i)
}

#[server(output = crate::codec::Json)]
pub async fn get_item_calls(job_id: i64, item: String) -> Result<Vec<CallView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(job_id), Need::Read).await?;
    store::jobs::item_calls(&call.state.pool, job_id, &item).await
}

/// Starts a job summarising every chunk of the project; returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_summaries(project_id: i64, no_cache: Option<String>) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let state = call.state.clone();
    let job = crate::ssr::graph::create_summaries(&state.pool, project_id, no_cache.is_some()).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

#[server(output = crate::codec::Json)]
pub async fn resume_job(id: i64, retry_failed: bool) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(id), Need::Edit).await?;
    let state = call.state.clone();
    let job = store::jobs::get_job(&state.pool, id).await?;
    if job.status == crate::model::JobStatus::Running {
        return Err(AppError::Conflict(format!("job {id} is already running")));
    }
    // Queued before the answer: the page's next look must see it as live
    // (the runner marks it running a moment later, on another task).
    store::jobs::mark_queued(&state.pool, id).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), id, retry_failed)
}

#[server(output = crate::codec::Json)]
pub async fn cancel_job(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(id), Need::Edit).await?;
    let state = call.state.clone();
    let here = state.jobs.cancel(id);
    // On a database several processes share, the job may run in others
    // (`assay worker`): its row tells them to stop.
    let elsewhere = state.pool.is_postgres()
        && store::jobs::mark_ended_if_running(&state.pool, id, crate::model::JobStatus::Cancelled).await?;
    if here || elsewhere {
        Ok(())
    } else {
        Err(AppError::Conflict(format!("job {id} is not running in this server")))
    }
}

//! Reference-based metrics runs (HieraRAG's metrics).

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// Starts a metrics run (seed 004) of answer sets over a question set:
/// `answer_sets` comma-separated ids. Returns the run's id; its page
/// follows the job.
#[server(output = crate::codec::Json)]
pub async fn start_metrics(
    set_id: i64,
    answer_sets: String,
    req: types::requests::MetricsRequest,
) -> Result<i64, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::QuestionSet(set_id), Need::Edit).await?;
    let ids: Vec<i64> = answer_sets
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>().map_err(|_| AppError::Invalid(format!("\"{s}\" is not an answer set id"))))
        .collect::<Result<_, _>>()?;
    call.require_in(project, ids.iter().map(|s| Obj::AnswerSet(*s))).await?;
    let state = call.state.clone();
    let (run, job) = crate::ssr::metrics::create(&state.pool, set_id, &ids, &req).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(run)
}

/// A project's metrics runs, newest first.
#[server(output = crate::codec::Json)]
pub async fn list_metrics_runs(project_id: i64) -> Result<Vec<MetricsRunView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let mut out = Vec::new();
    for row in crate::ssr::store::metrics::list(&call.state.pool, project_id).await? {
        out.push(crate::ssr::metrics::run_view(&call.state.pool, &row).await?);
    }
    Ok(out)
}

/// A metrics run and, once finished, its report.
#[server(output = crate::codec::Json)]
pub async fn get_metrics_run(run_id: i64) -> Result<MetricsRunPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::MetricsRun(run_id), Need::Read).await?;
    crate::ssr::metrics::page(&call.state.pool, run_id).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_metrics_run(run_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::MetricsRun(run_id), Need::Edit).await?;
    crate::ssr::store::metrics::delete(&call.state.pool, run_id).await
}

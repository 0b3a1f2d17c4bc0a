//! The knowledge graph: overview, explorer view, nodes and edges (also through a share link), and building it.

use leptos::prelude::*;

use crate::error::AppError;

use crate::model::*;
use types::requests::GraphRequest;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::state::app_state;
#[cfg(feature = "ssr")]
use crate::ssr::store;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// The graph's statistics; `None` when the project has no graph yet.
#[server(output = crate::codec::Json)]
pub async fn get_graph_overview(project_id: i64) -> Result<Option<GraphOverview>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let pool = &call.state.pool;
    store::projects::get_project(pool, project_id).await?;
    let mut overview = store::graph::overview(pool, project_id).await?;
    if let Some(o) = overview.as_mut() {
        o.imported_from = store::foreign::import_record(pool, project_id).await?.map(|r| r.line());
    }
    Ok(overview)
}

/// What the explorer draws: at most `limit` nodes, the highest-degree ones.
#[server(output = crate::codec::Json)]
pub async fn get_graph_view(project_id: i64, limit: u32) -> Result<GraphView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    if limit == 0 {
        return Err(AppError::Invalid("the node limit must be at least 1".into()));
    }
    store::graph::view(&call.state.pool, project_id, limit as usize).await
}

/// A shared graph's view, read through its share token (no account).
#[server(endpoint = "share/graph", output = crate::codec::Json)]
pub async fn get_shared_graph_view(token: String, limit: u32) -> Result<GraphView, AppError> {
    let pool = &app_state()?.pool;
    let project = crate::ssr::shares::graph_project(pool, &token).await?;
    if limit == 0 {
        return Err(AppError::Invalid("the node limit must be at least 1".into()));
    }
    store::graph::view(pool, project, limit as usize).await
}

/// A node of a shared graph; only nodes of the shared project.
#[server(endpoint = "share/graph_node", output = crate::codec::Json)]
pub async fn get_shared_graph_node(token: String, node_id: i64) -> Result<NodeDetail, AppError> {
    let pool = &app_state()?.pool;
    store::graph::node_detail(pool, crate::ssr::shares::graph_project(pool, &token).await?, node_id).await
}

/// An edge of a shared graph; only edges of the shared project.
#[server(endpoint = "share/graph_edge", output = crate::codec::Json)]
pub async fn get_shared_graph_edge(token: String, source: i64, target: i64) -> Result<EdgeDetail, AppError> {
    let pool = &app_state()?.pool;
    store::graph::edge_detail(pool, crate::ssr::shares::graph_project(pool, &token).await?, source, target).await
}

#[server(output = crate::codec::Json)]
pub async fn get_graph_node(project_id: i64, node_id: i64) -> Result<NodeDetail, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::graph::node_detail(&call.state.pool, project_id, node_id).await
}

#[server(output = crate::codec::Json)]
pub async fn get_graph_edge(project_id: i64, source: i64, target: i64) -> Result<EdgeDetail, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::graph::edge_detail(&call.state.pool, project_id, source, target).await
}

/// The price of what the graph form would start, before it does.
#[server(output = crate::codec::Json)]
pub async fn plan_graph_build(
    project_id: i64,
    no_cache: Option<String>,
    req: GraphRequest,
) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let _ = no_cache;
    let settings = req.checked()?;
    let (corpus, chunk_tokens) = crate::ssr::price::corpus(&call.state.pool, project_id).await?;
    let e = engine::experiment::graph_estimate(&corpus, chunk_tokens, settings.gleaning);
    let llm = call.state.llm();
    Ok(crate::ssr::price::timed(&call.state.pool, &llm, crate::ssr::price::one_stage(&llm, e, 0, false), false).await)
}

/// Starts building the project's graph (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_graph_build(
    project_id: i64,
    no_cache: Option<String>,
    req: GraphRequest,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let settings = req.checked()?;
    let state = call.state.clone();
    let job = crate::ssr::graph::create_graph(&state.pool, project_id, &settings, no_cache.is_some()).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

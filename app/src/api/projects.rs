//! Projects: listing, creating (empty or with the sample corpus), renaming, deleting.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::store;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// The projects the caller may see: all for the owner, a collaborator's own.
#[server(output = crate::codec::Json)]
pub async fn list_projects() -> Result<Vec<ProjectSummary>, AppError> {
    let call = Request::now()?;
    let pool = &call.state.pool;
    let mut all = store::projects::list_projects(pool).await?;
    if !call.caller.owner {
        let mine = store::access::member_projects(pool, call.caller.user_id).await?;
        all.retain(|p| mine.contains(&p.id));
    }
    Ok(all)
}

#[server(output = crate::codec::Json)]
pub async fn get_project(id: i64) -> Result<ProjectView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(id), Need::Read).await?;
    store::projects::get_project(&call.state.pool, id).await
}

#[server(output = crate::codec::Json)]
pub async fn create_project(name: String) -> Result<ProjectSummary, AppError> {
    let call = Request::now()?;
    call.require_owner("create projects")?;
    let settings = engine::chunk::ChunkSettings::default();
    Ok(store::projects::create_project(&call.state.pool, &name, &settings).await?.summary)
}

#[server(output = crate::codec::Json)]
pub async fn rename_project(id: i64, name: String) -> Result<ProjectSummary, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(id), Need::Edit).await?;
    Ok(store::projects::rename_project(&call.state.pool, id, &name).await?.summary)
}

#[server(output = crate::codec::Json)]
pub async fn delete_project(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require_owner("delete projects")?;
    store::projects::delete_project(&call.state.pool, id).await
}

/// Creates a project holding the sample corpus, named "Saltmere sample"
/// (or "Saltmere sample 2", … if that name is taken).
#[server(output = crate::codec::Json)]
pub async fn create_sample_project() -> Result<ProjectSummary, AppError> {
    let call = Request::now()?;
    call.require_owner("create projects")?;
    let state = call.state.clone();
    let settings = engine::chunk::ChunkSettings::default();
    let mut n = 1;
    let project = loop {
        let name = if n == 1 { "Saltmere sample".to_string() } else { format!("Saltmere sample {n}") };
        match store::projects::create_project(&state.pool, &name, &settings).await {
            Err(AppError::Conflict(_)) if n < 100 => n += 1,
            other => break other?,
        }
    };
    add_sample(&state, project.summary.id).await?;
    Ok(store::projects::get_project(&state.pool, project.summary.id).await?.summary)
}

/// Adds the sample corpus to an existing project.
#[server(output = crate::codec::Json)]
pub async fn load_sample(project_id: i64) -> Result<UploadReport, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    add_sample(&call.state.clone(), project_id).await
}

#[cfg(feature = "ssr")]
async fn add_sample(state: &crate::ssr::state::AppState, project_id: i64) -> Result<UploadReport, AppError> {
    let files: Vec<(String, Vec<u8>)> =
        engine::sample::sample_files().map(|(n, b)| (n.to_string(), b.to_vec())).collect();
    crate::ssr::ingest::add_files(&state.pool, project_id, &files, &state.config.import).await
}

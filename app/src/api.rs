//! Server functions: the browser's way into Assay. Each one checks its
//! input, calls the store or the engine, and maps errors; none holds logic
//! of its own.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::{state::app_state, store};

#[server]
pub async fn list_projects() -> Result<Vec<ProjectSummary>, AppError> {
    store::list_projects(&app_state()?.pool).await
}

#[server]
pub async fn get_project(id: i64) -> Result<ProjectView, AppError> {
    store::get_project(&app_state()?.pool, id).await
}

#[server]
pub async fn create_project(name: String) -> Result<ProjectSummary, AppError> {
    let settings = engine::chunk::ChunkSettings::default();
    Ok(store::create_project(&app_state()?.pool, &name, &settings).await?.summary)
}

#[server]
pub async fn rename_project(id: i64, name: String) -> Result<ProjectSummary, AppError> {
    Ok(store::rename_project(&app_state()?.pool, id, &name).await?.summary)
}

#[server]
pub async fn delete_project(id: i64) -> Result<(), AppError> {
    store::delete_project(&app_state()?.pool, id).await
}

/// Creates a project holding the sample corpus, named "Saltmere sample"
/// (or "Saltmere sample 2", … if that name is taken).
#[server]
pub async fn create_sample_project() -> Result<ProjectSummary, AppError> {
    let state = app_state()?;
    let settings = engine::chunk::ChunkSettings::default();
    let mut n = 1;
    let project = loop {
        let name = if n == 1 { "Saltmere sample".to_string() } else { format!("Saltmere sample {n}") };
        match store::create_project(&state.pool, &name, &settings).await {
            Err(AppError::Conflict(_)) if n < 100 => n += 1,
            other => break other?,
        }
    };
    add_sample(&state, project.summary.id).await?;
    Ok(store::get_project(&state.pool, project.summary.id).await?.summary)
}

/// Adds the sample corpus to an existing project.
#[server]
pub async fn load_sample(project_id: i64) -> Result<UploadReport, AppError> {
    add_sample(&app_state()?, project_id).await
}

#[cfg(feature = "ssr")]
async fn add_sample(state: &crate::state::AppState, project_id: i64) -> Result<UploadReport, AppError> {
    let files: Vec<(String, Vec<u8>)> =
        engine::sample::sample_files().map(|(n, b)| (n.to_string(), b.to_vec())).collect();
    store::add_files(&state.pool, project_id, &files, &state.config.import).await
}

#[server]
pub async fn get_upload_limits() -> Result<UploadLimits, AppError> {
    Ok(app_state()?.config.upload_limits())
}

#[server]
pub async fn list_documents(project_id: i64) -> Result<Vec<DocumentSummary>, AppError> {
    store::list_documents(&app_state()?.pool, project_id).await
}

#[server]
pub async fn get_document(id: i64) -> Result<DocumentView, AppError> {
    store::get_document(&app_state()?.pool, id).await
}

#[server]
pub async fn delete_document(id: i64) -> Result<(), AppError> {
    store::delete_document(&app_state()?.pool, id).await.map(|_| ())
}

#[server]
pub async fn set_chunking(
    project_id: i64,
    chunk_tokens: String,
    chunk_overlap: String,
    tokenizer: String,
) -> Result<ProjectView, AppError> {
    let number = |field: &str, value: &str| {
        value
            .trim()
            .parse::<usize>()
            .map_err(|_| AppError::Invalid(format!("{field} must be a whole number, not \"{value}\"")))
    };
    let settings = engine::chunk::ChunkSettings {
        chunk_tokens: number("chunk size", &chunk_tokens)?,
        overlap_tokens: number("overlap", &chunk_overlap)?,
        tokenizer: engine::chunk::Tokenizer::parse(&tokenizer)
            .ok_or_else(|| AppError::Invalid(format!("unknown tokenizer \"{tokenizer}\"")))?,
    };
    store::set_chunk_settings(&app_state()?.pool, project_id, settings).await
}

//! A project's documents: upload limits, listing, reading, deleting, chunking.

use leptos::prelude::*;

use crate::error::AppError;

use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::state::app_state;
#[cfg(feature = "ssr")]
use crate::ssr::store;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

#[server(output = crate::codec::Json)]
pub async fn get_upload_limits() -> Result<UploadLimits, AppError> {
    Ok(app_state()?.config.upload_limits())
}

#[server(output = crate::codec::Json)]
pub async fn list_documents(project_id: i64, page: i64) -> Result<DocumentsPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::documents::list_documents(&call.state.pool, project_id, page).await
}

#[server(output = crate::codec::Json)]
/// A document with part `part` (from 1) of its text.
pub async fn get_document(id: i64, part: i64) -> Result<DocumentView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Document(id), Need::Read).await?;
    store::documents::get_document(&call.state.pool, id, part).await
}

/// A document's chunks, in order, with the ids provenance links name.
#[server(output = crate::codec::Json)]
/// A page of a document's chunks; with `chunk`, the page holding it.
pub async fn get_document_chunks(id: i64, page: i64, chunk: Option<i64>) -> Result<crate::model::ChunksPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::Document(id), Need::Read).await?;
    store::documents::document_chunks(&call.state.pool, id, page, chunk).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_document(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Document(id), Need::Edit).await?;
    store::documents::delete_document(&call.state.pool, id).await.map(|_| ())
}

#[server(output = crate::codec::Json)]
pub async fn set_chunking(project_id: i64, req: types::requests::ChunkRequest) -> Result<ProjectView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    crate::ssr::ingest::set_chunk_settings(&call.state.pool, project_id, req).await
}

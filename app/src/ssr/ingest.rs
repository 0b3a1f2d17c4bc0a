//! Ingestion: uploaded files into a project's documents and chunks, a
//! benchmark's files into documents and a question set, and a project
//! re-chunked. Parsing and chunking are engine's
//! (`engine::corpus`, `engine::chunk`); what is stored, in one
//! transaction each, is the store's (`store::documents`).

use engine::chunk::{chunk_text, Bpe, ChunkSettings};
use engine::corpus::{import_files, ImportLimits};

use crate::error::{AppError, AppResult};
use crate::model::*;
use crate::ssr::store::{self, documents::Rechunked, Db};

/// Imports uploaded files into a project: parses them (engine), drops
/// documents whose text the project already holds, chunks the rest and
/// stores them all in one transaction. Refused files come back in
/// `skipped`; nothing already stored is touched.
pub async fn add_files(
    pool: &Db,
    project_id: i64,
    files: &[(String, Vec<u8>)],
    limits: &ImportLimits,
) -> AppResult<UploadReport> {
    let project = store::projects::get_project(pool, project_id).await?;
    let settings = store::projects::chunk_settings(&project);
    let outcome = import_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())), limits);
    let mut skipped: Vec<Rejection> = outcome.rejected;

    let existing = store::documents::content_hashes(pool, project_id).await?;
    let mut fresh = Vec::new();
    for doc in outcome.documents {
        match existing.get(&doc.content_hash) {
            Some(title) => skipped.push(Rejection {
                file: doc.source.clone(),
                reason: format!("duplicate: the project already has this text as \"{title}\""),
            }),
            None => fresh.push(doc),
        }
    }
    let room = (limits.max_documents as i64 - project.summary.documents).max(0) as usize;
    if fresh.len() > room {
        for doc in fresh.drain(room..) {
            skipped.push(Rejection {
                file: doc.source,
                reason: format!("over the limit of {} documents per project", limits.max_documents),
            });
        }
    }

    let prepared = store::documents::prepare(fresh, settings).await?;
    store::documents::insert_documents(pool, project_id, &prepared).await?;

    let after = store::projects::get_project(pool, project_id).await?;
    Ok(UploadReport {
        added: prepared.len() as i64,
        skipped,
        documents: after.summary.documents,
        tokens: after.summary.tokens,
        chunks: after.summary.chunks,
    })
}

/// Changes a project's chunking and re-chunks every document, in one transaction.
pub async fn set_chunk_settings(pool: &Db, project_id: i64, settings: ChunkSettings) -> AppResult<ProjectView> {
    settings.validate().map_err(|e| AppError::Invalid(e.to_string()))?;
    store::projects::get_project(pool, project_id).await?;
    if let Some(import) = store::foreign::import_record(pool, project_id).await? {
        return Err(AppError::Conflict(format!(
            "this project's chunks came with an imported {} index, whose graph names them: re-chunking would cut the graph from its sources",
            import.program
        )));
    }
    if store::foreign::has_foreign_chunks(pool, project_id).await? {
        return Err(AppError::Conflict(
            "this project's chunks came with an imported index: re-chunking would cut them from that system's ids"
                .into(),
        ));
    }
    let docs = store::documents::document_bodies(pool, project_id).await?;
    let rechunked = tokio::task::spawn_blocking(move || {
        docs.into_iter()
            .map(|(id, body)| Rechunked {
                id,
                tokens: settings.tokenizer.count(&body),
                chunks: chunk_text(&body, &settings).expect("validated above"),
                body,
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| {
        tracing::error!(error = %e, "re-chunking task failed");
        AppError::Internal
    })?;
    store::documents::replace_chunks(pool, project_id, &settings, &rechunked).await?;
    store::projects::get_project(pool, project_id).await
}

/// A benchmark's files as a user hands them over (the CLI's arguments, the
/// Questions page's form): `format` by name, the questions file, its corpus
/// file, column overrides (`role=col,…`) and the set's name (empty: the
/// format and the file's name). Read and checked here, stored by [`store::datasets::import`].
pub async fn import_dataset(
    pool: &Db,
    project_id: i64,
    format: &str,
    file: (&str, &[u8]),
    corpus: Option<(&str, &[u8])>,
    columns: &str,
    name: &str,
    limits: &ImportLimits,
) -> AppResult<store::datasets::DatasetReport> {
    let format = engine::datasets::Format::parse(format).ok_or_else(|| {
        let known: Vec<&str> = engine::datasets::Format::ALL.iter().map(|f| f.name()).collect();
        AppError::Invalid(format!("unknown benchmark format \"{format}\" (one of {})", known.join(", ")))
    })?;
    let columns = engine::datasets::Columns::default().with_overrides(columns).map_err(|e| AppError::Invalid(e.0))?;
    let data = engine::datasets::read(
        format,
        &engine::datasets::File { name: file.0, bytes: file.1 },
        corpus.map(|(name, bytes)| engine::datasets::File { name, bytes }).as_ref(),
        &columns,
    )
    .map_err(|e| AppError::Invalid(e.0))?;
    let name =
        if name.trim().is_empty() { format!("{} from {}", format.name(), file.0) } else { name.trim().to_string() };
    store::datasets::import(pool, project_id, format, data, (file.0, corpus.map(|c| c.0)), &name, limits).await
}

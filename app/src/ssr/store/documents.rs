//! A project's documents and their chunks: listing, reading, deleting,
//! and storing what ingestion ([`crate::ssr::ingest`]) parsed and chunked.

use std::collections::HashMap;

use engine::corpus::NewDocument;
use sqlx::FromRow;

use super::{begin, connection_steps, on_db, Db};
use crate::error::{AppError, AppResult};
use crate::model::*;

#[derive(FromRow)]
struct DocumentRow {
    id: i64,
    project_id: i64,
    title: String,
    source: String,
    chars: i64,
    tokens: i64,
    chunks: i64,
}

impl DocumentRow {
    fn summary(&self) -> DocumentSummary {
        DocumentSummary {
            id: self.id,
            title: self.title.clone(),
            source: self.source.clone(),
            chars: self.chars,
            tokens: self.tokens,
            chunks: self.chunks,
        }
    }
}

const DOCUMENT_SELECT: &str = "SELECT d.id, d.project_id, d.title, d.source, d.chars, d.tokens,
       (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id) AS chunks
  FROM documents d";

/// Page `page` (from 1, clamped) of a project's documents, oldest first.
pub async fn list_documents(pool: &Db, project_id: i64, page: i64) -> AppResult<crate::model::DocumentsPage> {
    use crate::model::DOCUMENTS_PER_PAGE;
    on_db!(pool, |db| {
        let (total,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM documents WHERE project_id = $1")
            .bind(project_id)
            .fetch_one(db)
            .await?;
        let (page, pages) = crate::model::paging(total, DOCUMENTS_PER_PAGE, page);
        let rows: Vec<DocumentRow> = sqlx::query_as(&format!(
            "{DOCUMENT_SELECT} WHERE d.project_id = $1 ORDER BY d.id LIMIT {DOCUMENTS_PER_PAGE} OFFSET {}",
            (page - 1) * DOCUMENTS_PER_PAGE
        ))
        .bind(project_id)
        .fetch_all(db)
        .await?;
        Ok(crate::model::DocumentsPage {
            documents: rows.iter().map(DocumentRow::summary).collect(),
            total,
            page,
            pages,
        })
    })
}

/// Where a text's parts end (byte offsets): each at most `max` characters,
/// cut after the last line break in its second half, else after the last
/// space there, else at `max` characters.
pub fn text_parts(text: &str, max: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        let Some((limit, _)) = rest.char_indices().nth(max) else {
            ends.push(text.len());
            break;
        };
        let window = &rest[..limit];
        let half = limit / 2;
        let cut = window
            .rfind('\n')
            .filter(|&i| i >= half)
            .or_else(|| window.rfind(' ').filter(|&i| i >= half))
            .map_or(limit, |i| i + 1);
        start += cut;
        ends.push(start);
    }
    if ends.is_empty() {
        ends.push(0);
    }
    ends
}

/// A document with part `part` (from 1, clamped) of its text.
pub async fn get_document(pool: &Db, id: i64, part: i64) -> AppResult<DocumentView> {
    on_db!(pool, |db| {
        #[derive(FromRow)]
        struct Full {
            #[sqlx(flatten)]
            row: DocumentRow,
            body: String,
            metadata: String,
            created_at: String,
        }
        let full: Option<Full> = sqlx::query_as(
            "SELECT d.id, d.project_id, d.title, d.source, d.chars, d.tokens, d.body, d.metadata, d.created_at,
                (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id) AS chunks
           FROM documents d WHERE d.id = $1",
        )
        .bind(id)
        .fetch_optional(db)
        .await?;
        let full = full.ok_or_else(|| AppError::NotFound(format!("no document with id {id}")))?;
        let metadata = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&full.metadata)
            .ok()
            .filter(|m| !m.is_empty())
            .and_then(|m| serde_json::to_string_pretty(&m).ok());
        let ends = text_parts(&full.body, crate::model::DOCUMENT_PART_CHARS);
        let parts = ends.len() as i64;
        let part = part.clamp(1, parts);
        let from = if part == 1 { 0 } else { ends[part as usize - 2] };
        let text = full.body[from..ends[part as usize - 1]].to_string();
        Ok(DocumentView {
            summary: full.row.summary(),
            project_id: full.row.project_id,
            text,
            part,
            parts,
            metadata,
            created_at: full.created_at,
        })
    })
}

pub async fn delete_document(pool: &Db, id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        let project: Option<i64> = sqlx::query_scalar("DELETE FROM documents WHERE id = $1 RETURNING project_id")
            .bind(id)
            .fetch_optional(db)
            .await?;
        project.ok_or_else(|| AppError::NotFound(format!("no document with id {id}")))
    })
}

pub use engine::corpus::ChunkedDocument as Prepared;

/// Token counts and chunks of new documents, with the project's settings,
/// computed before the transaction that stores them opens: CPU work, kept
/// off the async workers.
pub async fn prepare(docs: Vec<NewDocument>, settings: engine::chunk::ChunkSettings) -> AppResult<Vec<Prepared>> {
    tokio::task::spawn_blocking(move || engine::corpus::chunk_documents(docs, &settings))
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "chunking task failed");
            AppError::Internal
        })?
        .map_err(|e| AppError::Invalid(e.to_string()))
}

/// The content hashes of a project's documents, with each one's title.
pub async fn content_hashes(pool: &Db, project_id: i64) -> AppResult<HashMap<String, String>> {
    on_db!(pool, |db| {
        let existing: Vec<(String, String)> =
            sqlx::query_as("SELECT content_hash, title FROM documents WHERE project_id = $1")
                .bind(project_id)
                .fetch_all(db)
                .await?;
        Ok(existing.into_iter().collect())
    })
}

/// Stores `prepared` documents with their chunks in one transaction.
pub async fn insert_documents(pool: &Db, project_id: i64, prepared: &[Prepared]) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = begin(db).await?;
        for p in prepared {
            tx.insert_document(project_id, p).await?;
        }
        tx.commit().await?;
        Ok(())
    })
}

/// A project's documents' ids and texts.
pub async fn document_bodies(pool: &Db, project_id: i64) -> AppResult<Vec<(i64, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT id, body FROM documents WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// A document re-chunked: its id, its token count, its text, its chunks.
pub struct Rechunked {
    pub id: i64,
    pub tokens: usize,
    pub body: String,
    pub chunks: Vec<engine::chunk::Chunk>,
}

/// Sets a project's chunking and replaces every chunk of its documents
/// with `rechunked`'s, in one transaction.
pub async fn replace_chunks(
    pool: &Db,
    project_id: i64,
    settings: &engine::chunk::ChunkSettings,
    rechunked: &[Rechunked],
) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = begin(db).await?;
        sqlx::query("UPDATE projects SET chunk_tokens = $1, chunk_overlap = $2, tokenizer = $3 WHERE id = $4")
            .bind(settings.chunk_tokens as i64)
            .bind(settings.chunk_overlap as i64)
            .bind(settings.tokenizer.as_str())
            .bind(project_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM chunks WHERE project_id = $1").bind(project_id).execute(&mut *tx).await?;
        for r in rechunked {
            sqlx::query("UPDATE documents SET tokens = $1 WHERE id = $2")
                .bind(r.tokens as i64)
                .bind(r.id)
                .execute(&mut *tx)
                .await?;
            tx.insert_chunks(project_id, r.id, &r.body, &r.chunks).await?;
        }
        tx.commit().await?;
        Ok(())
    })
}

connection_steps! {
    pub(crate) trait DocumentSteps {
        /// Stores a document and its chunks; its id.
        async fn insert_document(&mut self, project_id: i64, p: &Prepared) -> AppResult<i64> {
            let doc = &p.doc;
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO documents (project_id, title, source, body, metadata, content_hash, chars, tokens)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .bind(project_id)
            .bind(&doc.title)
            .bind(&doc.source)
            .bind(&doc.text)
            .bind(serde_json::Value::Object(doc.metadata.clone()).to_string())
            .bind(&doc.content_hash)
            .bind(doc.text.chars().count() as i64)
            .bind(p.tokens as i64)
            .fetch_one(&mut *self)
            .await?;
            self.insert_chunks(project_id, id, &doc.text, &p.chunks).await?;
            Ok(id)
        }

        async fn insert_chunks(
            &mut self,
            project_id: i64,
            document_id: i64,
            text: &str,
            chunks: &[engine::chunk::Chunk],
        ) -> AppResult<()> {
            for c in chunks {
                sqlx::query(
                    "INSERT INTO chunks (project_id, document_id, idx, start_byte, end_byte, tokens, body)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(project_id)
                .bind(document_id)
                .bind(c.index as i64)
                .bind(c.start as i64)
                .bind(c.end as i64)
                .bind(c.tokens as i64)
                .bind(&text[c.start..c.end])
                .execute(&mut *self)
                .await?;
            }
            Ok(())
        }
    }
}

/// Changes a project's chunking and re-chunks every document, in one transaction.

/// page holding that chunk of the document instead.
pub async fn document_chunks(
    pool: &Db,
    document_id: i64,
    page: i64,
    chunk: Option<i64>,
) -> AppResult<crate::model::ChunksPage> {
    use crate::model::CHUNKS_PER_PAGE;
    on_db!(pool, |db| {
        let (total,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM chunks WHERE document_id = $1")
            .bind(document_id)
            .fetch_one(db)
            .await?;
        let (_, pages) = crate::model::paging(total, CHUNKS_PER_PAGE, 1);
        let page = match chunk {
            Some(c) => {
                let idx: Option<i64> = sqlx::query_scalar("SELECT idx FROM chunks WHERE id = $1 AND document_id = $2")
                    .bind(c)
                    .bind(document_id)
                    .fetch_optional(db)
                    .await?;
                idx.map_or(page, |i| i / CHUNKS_PER_PAGE + 1)
            }
            None => page,
        }
        .clamp(1, pages);
        let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!(
            "SELECT id, idx, tokens, body FROM chunks WHERE document_id = $1 ORDER BY idx LIMIT {CHUNKS_PER_PAGE} OFFSET {}",
            (page - 1) * CHUNKS_PER_PAGE
        ))
        .bind(document_id)
        .fetch_all(db)
        .await?;
        let chunks =
            rows.into_iter().map(|(id, idx, tokens, text)| crate::model::ChunkView { id, idx, tokens, text }).collect();
        Ok(crate::model::ChunksPage { chunks, total, page, pages })
    })
}

/// `(chunk id, text)` of every chunk of a project, in order.
pub async fn chunk_texts(pool: &Db, project_id: i64) -> AppResult<Vec<(i64, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT id, body FROM chunks WHERE project_id = $1 ORDER BY document_id, idx")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// Where each chunk of a project lies (its document and byte span), for
/// relevance at the document or passage unit.
pub async fn chunk_spans(
    pool: &Db,
    project_id: i64,
) -> AppResult<std::collections::HashMap<i64, engine::metrics::Span>> {
    on_db!(pool, |db| {
        let rows: Vec<(i64, i64, i64, i64)> =
            sqlx::query_as("SELECT id, document_id, start_byte, end_byte FROM chunks WHERE project_id = $1")
                .bind(project_id)
                .fetch_all(db)
                .await?;
        Ok(rows
            .into_iter()
            .map(|(id, document, start, end)| (id, engine::metrics::Span { document, start, end }))
            .collect())
    })
}

/// The text of every document of a project, in the order they were added.
/// A project's documents as (title, text), in upload order.
pub async fn document_titles_and_texts(pool: &Db, project_id: i64) -> AppResult<Vec<(String, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT title, body FROM documents WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

pub async fn document_texts(pool: &Db, project_id: i64) -> AppResult<Vec<String>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT body FROM documents WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

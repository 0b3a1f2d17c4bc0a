//! Another system's index stored as a project's corpus and graph: its documents, its chunks under their own ids, and its graph with
//! provenance to those chunks, in one transaction.

use std::collections::HashMap;

use engine::chunk::Bpe;
use engine::graph::foreign::{ForeignIndex, Tally};
use serde::{Deserialize, Serialize};

use super::graph::{GraphSteps, COMMUNITY_SEED};
use super::projects::get_project;
use super::{begin, on_db, Db};
use crate::error::{AppError, AppResult};

/// What an import stored, and how it accounts for the folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportReport {
    pub format: String,
    pub program: String,
    pub version: String,
    pub files_read: Vec<String>,
    pub tally: Tally,
    /// Chunks found verbatim in their document's text (their byte range
    /// is known, so the reader highlights them in place).
    pub chunks_located: usize,
    /// Documents whose text another document of the folder already had
    /// (stored once; both ids lead to it).
    pub duplicate_documents: usize,
    /// Communities stored: the system's own at `tally.community_level`, or
    /// those Assay computed when the folder has none.
    pub communities: usize,
    pub communities_from: String,
}

impl ImportReport {
    /// One line for the Graph page: where the graph came from, and its counts
    /// against the folder's.
    pub fn line(&self) -> String {
        let t = &self.tally;
        let mut parts = vec![format!(
            "a {} index ({}): {} entities → {} nodes, {} relations → {} edges, {} chunks of {} documents",
            self.program, self.version, t.entities, t.nodes, t.relations, t.edges, t.chunks, t.documents
        )];
        if t.relations_joined > 0 {
            parts.push(format!("{} relations joined another's edge (a reverse direction)", t.relations_joined));
        }
        if t.self_loops > 0 {
            parts.push(format!("{} relations of an entity to itself left out", t.self_loops));
        }
        if !t.renamed.is_empty() {
            parts.push(format!("{} entities kept apart under numbered names", t.renamed.len()));
        }
        if !t.unknown_chunks.is_empty() {
            parts.push(format!("{} chunk ids the folder does not hold", t.unknown_chunks.len()));
        }
        parts.push(match t.community_level {
            Some(level) if t.nodes_without_community > 0 => format!(
                "communities: {} of {}'s own (level {level}), the {} nodes it left out grouped by component",
                self.communities, self.program, t.nodes_without_community
            ),
            Some(level) => format!("communities: {} of {}'s own (level {level})", self.communities, self.program),
            None => format!("communities computed by Assay ({} has none)", self.program),
        });
        parts.join("; ")
    }
}

/// Stores `index` in the empty project `project_id`. Communities come from
/// the index at `level` (its coarsest when `None`) where it has any, and are
/// computed as for Assay's own graphs otherwise.
pub async fn import(pool: &Db, project_id: i64, index: ForeignIndex, level: Option<i64>) -> AppResult<ImportReport> {
    let project = get_project(pool, project_id).await?;
    if project.summary.documents > 0 {
        return Err(AppError::Conflict(format!(
            "project \"{}\" already holds {} documents: import {}'s index into a new, empty project (its graph names its own chunks)",
            project.summary.name,
            project.summary.documents,
            index.format.program()
        )));
    }
    if let Some(level) = level {
        let levels = index.community_levels();
        if !levels.contains(&level) {
            return Err(AppError::Invalid(format!(
                "the index has no communities at level {level} (its levels: {})",
                if levels.is_empty() {
                    "none".into()
                } else {
                    levels.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                }
            )));
        }
    }
    let tokenizer = project.chunking.tokenizer;
    // Token counts, hashes and chunk positions are CPU work.
    let prepared = tokio::task::spawn_blocking(move || prepare(index, tokenizer)).await.map_err(|e| {
        tracing::error!(error = %e, "import preparation failed");
        AppError::Internal
    })?;
    on_db!(pool, |db| {
        let mut tx = begin(db).await?;
        let mut doc_ids: HashMap<String, i64> = HashMap::new();
        let mut by_hash: HashMap<&str, i64> = HashMap::new();
        let mut duplicates = 0;
        for d in &prepared.documents {
            if let Some(&id) = by_hash.get(d.hash.as_str()) {
                doc_ids.insert(d.doc.id.clone(), id);
                duplicates += 1;
                continue;
            }
            let metadata = serde_json::json!({"external_id": d.doc.id, "imported_from": prepared.index.format.name()});
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO documents (project_id, title, source, body, metadata, content_hash, chars, tokens)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .bind(project_id)
            .bind(&d.doc.title)
            .bind(format!("{}:{}", prepared.index.format.name(), d.doc.id))
            .bind(&d.doc.text)
            .bind(metadata.to_string())
            .bind(&d.hash)
            .bind(d.doc.text.chars().count() as i64)
            .bind(d.tokens as i64)
            .fetch_one(&mut *tx)
            .await?;
            doc_ids.insert(d.doc.id.clone(), id);
            by_hash.insert(d.hash.as_str(), id);
        }
        let mut chunk_ids: HashMap<String, i64> = HashMap::new();
        let mut next_idx: HashMap<i64, i64> = HashMap::new();
        for (c, (start, end), tokens) in &prepared.chunks {
            let document_id = doc_ids[&c.document];
            let idx = next_idx.entry(document_id).or_insert(0);
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO chunks (project_id, document_id, idx, start_byte, end_byte, tokens, body, external_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .bind(project_id)
            .bind(document_id)
            .bind(*idx)
            .bind(*start as i64)
            .bind(*end as i64)
            .bind(*tokens as i64)
            .bind(&c.text)
            .bind(&c.id)
            .fetch_one(&mut *tx)
            .await?;
            *idx += 1;
            chunk_ids.insert(c.id.clone(), id);
        }
        let mut imported = prepared.index.to_graph(&chunk_ids, level);
        imported.tally.documents = prepared.documents.len();
        imported.tally.chunks = prepared.chunks.len();
        let (communities, from, count) = match &imported.communities {
            Some(c) => (c.of_node.clone(), format!("{}'s own", prepared.index.format.program()), c.reports.len()),
            None => {
                let computed = imported.graph.communities(COMMUNITY_SEED);
                let n = computed.values().collect::<std::collections::BTreeSet<_>>().len();
                (computed, format!("computed by Assay ({} has none)", prepared.index.format.program()), n)
            }
        };
        tx.put_graph(project_id, None, &imported.graph, &communities).await?;
        for r in imported.communities.iter().flat_map(|c| &c.reports) {
            sqlx::query(
                "INSERT INTO community_reports (project_id, community, job_id, title, summary, rating)
                 VALUES ($1, $2, NULL, $3, $4, $5)",
            )
            .bind(project_id)
            .bind(r.community as i64)
            .bind(&r.title)
            .bind(&r.summary)
            .bind(r.rating)
            .execute(&mut *tx)
            .await?;
        }
        let report = ImportReport {
            format: prepared.index.format.name().into(),
            program: prepared.index.format.program().into(),
            version: prepared.index.version.clone(),
            files_read: prepared.index.files_read.clone(),
            tally: imported.tally,
            chunks_located: prepared.located,
            duplicate_documents: duplicates,
            communities: count,
            communities_from: from,
        };
        sqlx::query("INSERT INTO graph_imports (project_id, format, version, report) VALUES ($1, $2, $3, $4)")
            .bind(project_id)
            .bind(&report.format)
            .bind(&report.version)
            .bind(serde_json::to_string(&report).unwrap_or_default())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(report)
    })
}

/// The import that made the project's graph, if it was imported.
pub async fn import_record(pool: &Db, project_id: i64) -> AppResult<Option<ImportReport>> {
    on_db!(pool, |db| {
        let report: Option<String> = sqlx::query_scalar("SELECT report FROM graph_imports WHERE project_id = $1")
            .bind(project_id)
            .fetch_optional(db)
            .await?;
        Ok(report.and_then(|r| serde_json::from_str(&r).ok()))
    })
}

/// Whether any of the project's chunks came with an imported index (they
/// must not be re-chunked: the graph names them).
pub async fn has_foreign_chunks(pool: &Db, project_id: i64) -> AppResult<bool> {
    on_db!(pool, |db| {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT id FROM chunks WHERE project_id = $1 AND external_id IS NOT NULL LIMIT 1")
                .bind(project_id)
                .fetch_optional(db)
                .await?;
        Ok(found.is_some())
    })
}

/// The project's chunks that came with an imported index: their id there →
/// their id here (the HTTP method's contexts are found by them).
pub async fn external_chunk_ids(pool: &Db, project_id: i64) -> AppResult<std::collections::HashMap<String, i64>> {
    on_db!(pool, |db| {
        let rows: Vec<(String, i64)> =
            sqlx::query_as("SELECT external_id, id FROM chunks WHERE project_id = $1 AND external_id IS NOT NULL")
                .bind(project_id)
                .fetch_all(db)
                .await?;
        Ok(rows.into_iter().collect())
    })
}

struct PreparedDocument {
    doc: engine::graph::foreign::ForeignDocument,
    hash: String,
    tokens: usize,
}

struct Prepared {
    index: ForeignIndex,
    documents: Vec<PreparedDocument>,
    /// Each chunk with its byte range in its document (0..0 where its text
    /// is not there verbatim) and its token count.
    chunks: Vec<(engine::graph::foreign::ForeignChunk, (usize, usize), usize)>,
    located: usize,
}

fn prepare(mut index: ForeignIndex, tokenizer: engine::chunk::Tokenizer) -> Prepared {
    let docs = std::mem::take(&mut index.documents);
    let chunks = std::mem::take(&mut index.chunks);
    let mut located = 0;
    let mut out_chunks = Vec::with_capacity(chunks.len());
    let texts: HashMap<&str, &str> = docs.iter().map(|d| (d.id.as_str(), d.text.as_str())).collect();
    let mut i = 0;
    while i < chunks.len() {
        let doc = chunks[i].document.clone();
        let j = chunks[i..].iter().position(|c| c.document != doc).map_or(chunks.len(), |k| i + k);
        let ranges = engine::graph::foreign::locate_chunks(
            texts.get(doc.as_str()).copied().unwrap_or(""),
            chunks[i..j].iter().map(|c| c.text.as_str()),
        );
        for (c, r) in chunks[i..j].iter().zip(ranges) {
            located += usize::from(r.is_some());
            let tokens = c.tokens.unwrap_or_else(|| tokenizer.count(&c.text));
            out_chunks.push((c.clone(), r.unwrap_or((0, 0)), tokens));
        }
        i = j;
    }
    let documents = docs
        .into_iter()
        .map(|doc| PreparedDocument {
            hash: engine::corpus::content_hash(&doc.text),
            tokens: tokenizer.count(&doc.text),
            doc,
        })
        .collect();
    // The index keeps what `to_graph` reads: entities, relations, communities.
    Prepared { index, documents, chunks: out_chunks, located }
}

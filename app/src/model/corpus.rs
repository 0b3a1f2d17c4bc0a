//! Projects and their documents.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectSummary {
    pub id: i64,
    pub name: String,
    /// ISO 8601, UTC.
    pub created_at: String,
    pub documents: i64,
    pub tokens: i64,
    pub chunks: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectView {
    pub summary: ProjectSummary,
    pub chunking: types::requests::ChunkRequest,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentSummary {
    pub id: i64,
    pub title: String,
    pub source: String,
    pub chars: i64,
    pub tokens: i64,
    pub chunks: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentView {
    pub summary: DocumentSummary,
    pub project_id: i64,
    /// Part `part` of the document's text (a page shows one part; parts end
    /// at a line's end, at most [`DOCUMENT_PART_CHARS`] characters each).
    pub text: String,
    /// From 1.
    pub part: i64,
    pub parts: i64,
    /// The record's other JSON fields, pretty-printed; `None` when there are none.
    pub metadata: Option<String>,
    pub created_at: String,
}

/// Documents the corpus page lists at once.
pub const DOCUMENTS_PER_PAGE: i64 = 50;

/// A page of a project's documents, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentsPage {
    pub documents: Vec<DocumentSummary>,
    pub total: i64,
    /// From 1.
    pub page: i64,
    pub pages: i64,
}

/// Characters of a document's text one page shows at most.
pub const DOCUMENT_PART_CHARS: usize = 30_000;

/// Chunks one page of a document's chunks shows.
pub const CHUNKS_PER_PAGE: i64 = 10;

/// A page of a document's chunks, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunksPage {
    pub chunks: Vec<ChunkView>,
    pub total: i64,
    /// From 1.
    pub page: i64,
    pub pages: i64,
}

/// One chunk of a document, as provenance links name it (`chunk ID`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkView {
    pub id: i64,
    /// Its position in the document, from 0.
    pub idx: i64,
    pub tokens: i64,
    pub text: String,
}

pub use types::corpus::Rejection;

/// The answer to an upload: what was added and skipped, and the corpus
/// totals after it (the shape of `assay corpus add --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadReport {
    pub added: i64,
    pub skipped: Vec<Rejection>,
    pub documents: i64,
    pub tokens: i64,
    pub chunks: i64,
}

/// Limits the upload form enforces before sending, so a user hears about a
/// too-large file before waiting for it to upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadLimits {
    pub max_upload_bytes: u64,
    pub max_file_bytes: u64,
}

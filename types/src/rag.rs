//! What a RAG method retrieves.

use serde::{Deserialize, Serialize};

/// One piece of retrieved context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// `chunk`, `entity`, `relation`, `report` or `point` (a global-search
    /// map point) from the built-in methods; imported answers bring their
    /// own kinds (`context` for plain text), so this set is open.
    pub kind: String,
    /// The chunk id, entity key, `a|b` relation key or community number.
    pub id: String,
    /// The method's score for it (BM25 score, PPR mass, rank …).
    pub score: f64,
    pub text: String,
}

impl Section {
    pub fn new(kind: &str, id: impl ToString, score: f64, text: impl Into<String>) -> Section {
        Section { kind: kind.into(), id: id.to_string(), score, text: text.into() }
    }
}

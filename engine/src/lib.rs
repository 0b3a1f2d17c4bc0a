//! Assay's domain library: everything Assay knows about corpora, knowledge
//! graphs, questions, RAG methods, judging and statistics.
//!
//! Architecture Invariant: this crate knows nothing of Leptos, axum or SQL
//! (it uses tokio's timers and synchronisation, and reqwest). It is driven
//! by the web server, the CLI and tests alike; storage is the caller's.
//!
//! # Layout
//! - [`corpus`]: turning uploaded files (`.txt`, `.md`, `.jsonl`, `.json`,
//!   `.zip`) into documents, with a named reason for every file refused.
//! - [`chunk`]: token counting (OpenAI-compatible BPE) and token-based
//!   chunking with overlap that never cuts a word.
//! - [`sample`]: the small corpus Assay ships for its demo.
//! - [`text`]: sentences, content words and highlighting, for the offline tasks.
//! - [`memo`]: a bounded memo of a pure function of texts.
//! - [`llm`]: the LLM gateway (every model call goes through it): providers
//!   (`openai`, `offline`), cache, accounting, call log, prompt helpers.
//! - [`jobs`]: running many items resumably, with failures as data.
//! - [`graph`]: the knowledge graph: extraction (and its LLM tasks),
//!   merging with provenance, communities, layout, the offline extractor.
//! - [`questions`]: question generation (graph, summary, hierarchical) and
//!   its diagnostics.
//! - [`rag`]: the built-in RAG methods, their answers and accounting.
//! - [`embed`]: text embeddings (MiniLM in process, or an endpoint).
//! - [`judge`]: pairwise judging: both protocols, alignment, the report.
//! - [`stats`]: quartiles, box plots, relative win rate, Wilcoxon, sign test, Holm.
//! - [`agreement`]: inter-rater agreement (Fleiss' κ, Krippendorff's α,
//!   Cohen's κ, Spearman's ρ).
//! - [`metrics`]: reference-based metrics (MAP, nDCG, recall, ROUGE-1, BLEU)
//!   and the granularity analysis of a category hierarchy.
//! - [`study`]: human studies' draws, orders and results, and the LLM rater.
//! - [`experiment`]: experiment manifests, their checks and estimates.
//! - [`offline`]: the offline provider with every stage's task registered.

pub mod agreement;
pub mod chunk;
pub mod corpus;
pub mod datasets;
pub mod embed;
pub mod experiment;
pub mod graph;
pub mod jobs;
pub mod judge;
pub mod llm;
pub mod memo;
pub mod metrics;
pub mod offline;
pub mod questions;
pub mod rag;
pub mod sample;
pub mod secret;
pub mod stats;
pub mod study;
pub mod text;

/// A request the engine refuses — a setting, a name, a file that is not
/// valid — with the reason, for the user who sent it. What crosses into the
/// app as this is the caller's mistake (HTTP 400); replies of a model that
/// cannot be read stay `String` errors of the stage that reads them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<String> for Invalid {
    fn from(s: String) -> Self {
        Invalid(s)
    }
}

impl From<types::requests::OutOfRange> for Invalid {
    fn from(e: types::requests::OutOfRange) -> Invalid {
        Invalid(e.to_string())
    }
}

impl From<types::Unknown> for Invalid {
    fn from(e: types::Unknown) -> Self {
        Invalid(e.to_string())
    }
}

impl From<&str> for Invalid {
    fn from(s: &str) -> Self {
        Invalid(s.to_string())
    }
}

impl From<Invalid> for String {
    fn from(e: Invalid) -> Self {
        e.0
    }
}

/// The reason, as text (`err.contains("…")` in a test, `&err` where a `&str` goes).
impl std::ops::Deref for Invalid {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<&str> for Invalid {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<str> for Invalid {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

/// The smallest text a chart draws, in px at the chart's own size (
/// pages show charts at that size, scrolled sideways on a phone rather
/// than shrunk, so nothing reads smaller).
pub const CHART_MIN_FONT: u32 = 11;

/// The line charts' series colours, in order (Tableau 10's first five):
/// a plan's curves, the granularity figure's dimensions.
pub const CHART_PALETTE: [plotters::style::RGBColor; 5] = [
    plotters::style::RGBColor(0x4e, 0x79, 0xa7),
    plotters::style::RGBColor(0xf2, 0x8e, 0x2b),
    plotters::style::RGBColor(0x59, 0xa1, 0x4f),
    plotters::style::RGBColor(0xb0, 0x7a, 0xa1),
    plotters::style::RGBColor(0x9c, 0x75, 0x5f),
];

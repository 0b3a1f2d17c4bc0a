//! Assay's domain library: everything Assay knows about corpora, knowledge
//! graphs, questions, RAG methods, judging and statistics.
//!
//! Architecture invariant: this crate knows nothing of Leptos, axum or SQL.
//! It is driven by the web server, the CLI and tests alike; storage is the
//! caller's business.
//!
//! # Layout
//! - [`corpus`]: turning uploaded files (`.txt`, `.md`, `.jsonl`, `.json`,
//!   `.zip`) into documents, with a named reason for every file refused.
//! - [`chunk`]: token counting (OpenAI-compatible BPE) and token-based
//!   chunking with overlap that never cuts a word.
//! - [`sample`]: the small corpus Assay ships for its demo.
//! - [`graph`]: the knowledge graph: extractions, merging with provenance,
//!   the offline extractor.
//! - [`jobs`]: running many items resumably, with failures as data.
//! - [`llm`]: the LLM gateway (every model call goes through it): providers
//!   (`openai`, `offline`), cache, accounting and call log.
//! - [`tasks`]: each LLM task's prompt, request and offline implementation.
//! - [`questions`]: question generation and its diagnostics.
//! - [`rag`]: the built-in RAG methods, their answers and accounting.
//! - [`embed`]: text embeddings (MiniLM in process, or an endpoint).
//! - [`judge`]: pairwise judging: the verdict rules of the unbiased and legacy protocols.
//! - [`stats`]: quartiles, box plots, relative win rate, Wilcoxon, sign test, Holm.
//! - [`metrics`]: reference-based metrics (MAP, nDCG, recall, ROUGE-1, BLEU)
//!   and the granularity analysis of a category hierarchy.

pub mod agreement;
pub mod chunk;
pub mod corpus;
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
pub mod stats;
pub mod study;
pub mod text;

//! Question generation (seed 000 §III, seed 004 §2).
//!
//! # Layout
//! - [`walk`]: random walks for subgraph-level questions.
//! - [`graph`]: graph-text-grounded questions (node, edge, subgraph).
//! - [`summary`]: the summary-based baseline (LightRAG's reproduce/Step_2).

pub mod graph;
pub mod summary;
pub mod walk;

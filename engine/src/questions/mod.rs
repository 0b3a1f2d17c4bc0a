//! Question generation (seed 000 §III, seed 004 §2).
//!
//! # Layout
//! - [`walk`]: random walks for subgraph-level questions.
//! - [`graph`]: graph-text-grounded questions (node, edge, subgraph).

pub mod graph;
pub mod walk;

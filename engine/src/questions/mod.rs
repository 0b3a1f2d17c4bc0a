//! Question generation (seed 000 §III, seed 004 §2). Work in progress: the
//! subgraph sampler comes first.
//!
//! # Layout
//! - [`walk`]: random walks for subgraph-level questions.

pub mod walk;

//! All of Assay's SQL, one module per concern: `db` (the handle, its
//! transactions, opening), `projects`, `documents` and the rest. Server
//! functions, the upload route, the CLI and tests call these functions;
//! nothing else in the workspace writes SQL, and nothing here decides what
//! is stored (that is the stages', and engine's).
//!
//! Architecture invariant: a change is one transaction. An upload either
//! stores all of its accepted documents with their chunks or nothing, so a
//! failure part-way never leaves a half-written corpus.

pub mod access;
pub mod answers;
pub mod backfill;
pub mod batches;
pub mod calls;
pub mod copy;
pub mod datasets;
pub mod db;
pub mod documents;
pub mod evaluations;
pub mod experiments;
pub mod foreign;
pub mod graph;
pub mod jobs;
pub mod metrics;
pub mod packed;
pub mod projects;
pub mod questions;
pub mod queue;
pub mod settings;
pub mod shares;
pub mod slots;
pub mod studies;
pub mod users;
pub mod vectors;

pub use db::*;

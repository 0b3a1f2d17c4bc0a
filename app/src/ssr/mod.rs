//! The server half of the app: what only `assay serve` and the CLI compile
//! (behind the `ssr` feature, so the browser's WASM build never sees sqlx,
//! tokio or the engine). The [`crate::api`] server functions and the
//! server crate's web routes and CLI call into it.
//!
//! # Layout
//! - [`state`]: configuration and the state every request reaches.
//! - [`auth`], [`access`], [`tokens`]: accounts and sessions, who may see and
//!   change which project, and the secrets behind study and share links.
//! - [`store`]: all SQL.
//! - [`jobs`]: the background-job runner (resumable, cancellable, with live
//!   progress), typed job settings, and the [`jobs::Stage`] each stage
//!   implements; [`stages`] maps each job kind to its stage.
//! - One module per stage, each with its job code, reports and exports:
//!   [`graph`], [`questions`], [`answers`], [`evaluation`], [`metrics`],
//!   [`study`], [`experiments`].
//! - [`share`]: read-only share links and the self-contained report files.
//! - [`csp`], [`preload`]: response headers of the HTML shell.

pub mod access;
pub mod answers;
pub mod auth;
pub mod csp;
pub mod evaluations;
pub mod experiments;
pub mod graph;
pub mod ingest;
pub mod jobs;
pub mod live;
pub mod metrics;
pub mod preload;
pub mod price;
pub mod questions;
pub mod shares;
pub mod stages;
pub mod state;
pub mod store;
pub mod studies;
pub mod tokens;

//! The server's integration tests, in one binary (one link of app, engine
//! and Leptos instead of one per file): the real `assay` binary and router
//! over real SQLite files, the real HTTP client against mock servers.
//! `real_model` is `#[ignore]`d: scripts/test runs it against SmolLM2
//! (`cargo test -p server --test it real_model -- --ignored`).

mod access;
mod answer_study;
mod answers;
mod auth;
mod cli;
mod common;
mod datasets;
mod eval;
mod experiment;
mod foreign;
mod graph;
mod http;
mod jobs;
mod layout;
mod llm;
mod metrics;
mod models;
mod paper;
mod peers_server;
mod postgres;
mod presets;
mod questions;
mod raters;
mod real_model;
mod requests;
mod secrets;
mod share;
mod spelling;
mod storage;
mod study;
mod study_import;
mod workers;

//! The engine's integration tests, one binary: a module per area, on the
//! real corpora in `../shared/corpora/`, the real `openai` client against
//! `mockllm`, and the reference values of `tests/fixtures/`.

mod batch;
mod common;
mod embed;
mod extraction;
mod gateway;
mod hierarag_human;
mod judge;
mod misbehaving;
mod questions;
mod rag;

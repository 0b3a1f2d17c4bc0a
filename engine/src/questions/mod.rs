//! Question generation (seed 000 §III, seed 004 §2).
//!
//! # Layout
//! - [`walk`]: random walks for subgraph-level questions.
//! - [`graph`]: graph-text-grounded questions (node, edge, subgraph).
//! - [`summary`]: the summary-based baseline (LightRAG's reproduce/Step_2).
//! - [`diagnostics`]: which graph entities a set's questions mention (Fig. 9).
//! - [`mentions`]: entities each question names, extracted by the LLM (Fig. 9's other way).
//! - [`relevance`]: question–retrieval relevance scores and their histogram (Fig. 10).
//! - [`hierarchy`]: questions with reference answers in hierarchical categories (seed 004).

pub mod diagnostics;
pub mod graph;
pub mod hierarchy;
pub mod relevance;
pub mod summary;
pub mod walk;

/// Registers question generation's offline tasks.
pub fn register_offline(p: &mut crate::llm::offline::OfflineProvider) {
    p.register(graph::NODE_PURPOSE, graph::offline_node);
    p.register(graph::EDGE_PURPOSE, graph::offline_edge);
    p.register(graph::SUBGRAPH_PURPOSE, graph::offline_subgraph);
    p.register(summary::PURPOSE, summary::offline);
    p.register(hierarchy::PURPOSE, hierarchy::offline);
    p.register(hierarchy::CHECK_PURPOSE, hierarchy::offline_check);
    p.register(relevance::PURPOSE, relevance::offline);
}

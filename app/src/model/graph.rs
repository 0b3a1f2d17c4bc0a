//! The knowledge graph: overview, explorer view, nodes and edges.

use serde::{Deserialize, Serialize};

/// A project's graph at a glance: the Graph page's statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphOverview {
    /// What the model's extraction replies were like, when something went
    /// wrong (failed, empty, cut or repaired chunks; types left out).
    #[serde(default)]
    pub extraction_note: Option<String>,
    pub nodes: i64,
    pub edges: i64,
    pub components: i64,
    pub largest_component: i64,
    pub communities: i64,
    /// `(degree, nodes with that degree)`, for every degree present.
    pub degree_histogram: Vec<(i64, i64)>,
    /// `(type, nodes of that type)`, most frequent first.
    pub types: Vec<(String, i64)>,
    /// The highest-degree nodes, highest first.
    pub top: Vec<NodeBrief>,
    /// The job that built the graph, and who answered its calls (`None`:
    /// no call logged — a graph imported from a file has no job).
    pub job_id: Option<i64>,
    pub provider: Option<types::CallProvider>,
    pub model: String,
    /// For a graph imported from another system's index: where from
    /// and how its entities, relations and chunks map to Assay's.
    #[serde(default)]
    pub imported_from: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeBrief {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub degree: i64,
}

/// What the explorer draws. Edges refer to positions in `nodes`; types to
/// positions in `types`. At most `limit` nodes (the highest-degree ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphView {
    pub nodes: Vec<ViewNode>,
    pub edges: Vec<(u32, u32)>,
    pub types: Vec<String>,
    pub total_nodes: i64,
    pub total_edges: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewNode {
    pub id: i64,
    pub name: String,
    pub kind: u16,
    pub community: i64,
    pub degree: u32,
    pub x: f32,
    pub y: f32,
}

/// A chunk shown as evidence, cut into segments; `true` marks a mention.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceChunk {
    pub chunk_id: i64,
    pub document_id: i64,
    pub document_title: String,
    pub segments: Vec<(String, bool)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeDetail {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub community: i64,
    pub description: String,
    /// Neighbours, strongest relation first.
    pub neighbours: Vec<NodeBrief>,
    pub sources: Vec<SourceChunk>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgeDetail {
    pub source: NodeBrief,
    pub target: NodeBrief,
    pub description: String,
    pub keywords: Vec<String>,
    pub weight: f64,
    pub sources: Vec<SourceChunk>,
}

//! A project's knowledge graph in SQLite.

use std::collections::{BTreeSet, HashMap};

use engine::graph::{Edge, KnowledgeGraph, Node};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

use crate::error::AppResult;

/// The seed of the stored communities, so a graph always gets the same ones.
pub const COMMUNITY_SEED: u64 = 42;

/// Replaces the project's graph with `graph` (and its communities), in one transaction.
pub async fn replace(pool: &SqlitePool, project_id: i64, job_id: i64, graph: &KnowledgeGraph) -> AppResult<()> {
    let communities = graph.communities(COMMUNITY_SEED);
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM graph_nodes WHERE project_id = ?").bind(project_id).execute(&mut *tx).await?;
    let mut ids: HashMap<&str, i64> = HashMap::new();
    for node in graph.nodes.values() {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO graph_nodes (project_id, job_id, key, name, type, description, source_chunks, community)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(project_id)
        .bind(job_id)
        .bind(&node.key)
        .bind(&node.name)
        .bind(&node.kind)
        .bind(node.descriptions.join("\n"))
        .bind(serde_json::to_string(&node.source_chunks).unwrap_or_default())
        .bind(communities.get(&node.key).copied().unwrap_or(0) as i64)
        .fetch_one(&mut *tx)
        .await?;
        ids.insert(node.key.as_str(), id);
    }
    for edge in graph.edges.values() {
        let (Some(&s), Some(&t)) = (ids.get(edge.source.as_str()), ids.get(edge.target.as_str())) else { continue };
        sqlx::query(
            "INSERT INTO graph_edges (project_id, source_id, target_id, description, keywords, weight, source_chunks)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(project_id)
        .bind(s)
        .bind(t)
        .bind(edge.descriptions.join("\n"))
        .bind(serde_json::to_string(&edge.keywords).unwrap_or_default())
        .bind(edge.weight)
        .bind(serde_json::to_string(&edge.source_chunks).unwrap_or_default())
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The export layout: nodes with ids; edges refer to node ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphExport {
    pub nodes: Vec<ExportNode>,
    pub edges: Vec<ExportEdge>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportNode {
    pub id: i64,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub description: String,
    pub source_chunk_ids: Vec<i64>,
    pub community: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportEdge {
    pub source: i64,
    pub target: i64,
    pub description: String,
    pub weight: f64,
    pub source_chunk_ids: Vec<i64>,
}

pub async fn export(pool: &SqlitePool, project_id: i64) -> AppResult<GraphExport> {
    let nodes: Vec<(i64, String, String, String, String, i64)> = sqlx::query_as(
        "SELECT id, name, type, description, source_chunks, community FROM graph_nodes WHERE project_id = ? ORDER BY id",
    )
    .bind(project_id)
    .fetch_all(pool)
    .await?;
    let edges: Vec<(i64, i64, String, f64, String)> = sqlx::query_as(
        "SELECT source_id, target_id, description, weight, source_chunks FROM graph_edges WHERE project_id = ? ORDER BY id",
    )
    .bind(project_id)
    .fetch_all(pool)
    .await?;
    let chunks = |s: &str| serde_json::from_str::<Vec<i64>>(s).unwrap_or_default();
    Ok(GraphExport {
        nodes: nodes
            .into_iter()
            .map(|(id, name, kind, description, src, community)| ExportNode {
                id,
                name,
                kind,
                description,
                source_chunk_ids: chunks(&src),
                community,
            })
            .collect(),
        edges: edges
            .into_iter()
            .map(|(source, target, description, weight, src)| ExportEdge {
                source,
                target,
                description,
                weight,
                source_chunk_ids: chunks(&src),
            })
            .collect(),
    })
}

/// The stored graph back in the engine's form (for its algorithms).
pub async fn load(pool: &SqlitePool, project_id: i64) -> AppResult<KnowledgeGraph> {
    let rows: Vec<(i64, String, String, String, String, String)> =
        sqlx::query_as("SELECT id, key, name, type, description, source_chunks FROM graph_nodes WHERE project_id = ?")
            .bind(project_id)
            .fetch_all(pool)
            .await?;
    let mut graph = KnowledgeGraph::default();
    let mut keys: HashMap<i64, String> = HashMap::new();
    for (id, key, name, kind, description, src) in rows {
        keys.insert(id, key.clone());
        let node =
            Node::restored(key.clone(), name, kind, description.lines().map(str::to_string).collect(), chunk_set(&src));
        graph.nodes.insert(key, node);
    }
    let edges: Vec<(i64, i64, String, String, f64, String)> = sqlx::query_as(
        "SELECT source_id, target_id, description, keywords, weight, source_chunks FROM graph_edges WHERE project_id = ?",
    )
    .bind(project_id)
    .fetch_all(pool)
    .await?;
    for (s, t, description, keywords, weight, src) in edges {
        let (Some(a), Some(b)) = (keys.get(&s), keys.get(&t)) else { continue };
        graph.edges.insert(
            (a.clone(), b.clone()),
            Edge {
                source: a.clone(),
                target: b.clone(),
                descriptions: description.lines().map(str::to_string).collect(),
                keywords: serde_json::from_str(&keywords).unwrap_or_default(),
                weight,
                source_chunks: chunk_set(&src),
            },
        );
    }
    Ok(graph)
}

fn chunk_set(json: &str) -> BTreeSet<i64> {
    serde_json::from_str(json).unwrap_or_default()
}

/// Distinct communities stored for the project's graph.
pub async fn community_count(pool: &SqlitePool, project_id: i64) -> AppResult<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(DISTINCT community) FROM graph_nodes WHERE project_id = ?")
        .bind(project_id)
        .fetch_one(pool)
        .await?)
}

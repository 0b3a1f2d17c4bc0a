//! A project's knowledge graph in SQLite.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{on_db, Db};
use engine::graph::{Edge, KnowledgeGraph, Node};

use crate::error::{AppError, AppResult};
use crate::model::{EdgeDetail, GraphOverview, GraphView, NodeBrief, NodeDetail, SourceChunk, ViewNode};
pub use engine::graph::export::{ExportEdge, ExportNode, GraphExport};

/// The seed of the stored communities, so a graph always gets the same ones.
pub const COMMUNITY_SEED: u64 = 42;

/// Replaces the project's graph with `graph` (and its communities), in one transaction.
/// `job_id` is the job that built it (`None` for an imported graph). The
/// explorer's layout is computed here, once.
pub async fn replace(pool: &Db, project_id: i64, job_id: Option<i64>, graph: &KnowledgeGraph) -> AppResult<()> {
    let communities = graph.communities(COMMUNITY_SEED);
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        tx.put_graph(project_id, job_id, graph, &communities).await?;
        tx.commit().await?;
        Ok(())
    })
}

super::connection_steps! {
    pub(crate) trait GraphSteps {
        /// Deletes the project's graph (its reports and import record with
        /// it) and stores `graph` with the given communities (node key →
        /// number) and a layout computed here.
        async fn put_graph(
            &mut self,
            project_id: i64,
            job_id: Option<i64>,
            graph: &KnowledgeGraph,
            communities: &BTreeMap<String, usize>,
        ) -> AppResult<()> {
            let positions = graph.positions(COMMUNITY_SEED);
            sqlx::query("DELETE FROM graph_nodes WHERE project_id = $1").bind(project_id).execute(&mut *self).await?;
            // Reports describe the old graph's communities; the import record its origin.
            sqlx::query("DELETE FROM community_reports WHERE project_id = $1").bind(project_id).execute(&mut *self).await?;
            sqlx::query("DELETE FROM graph_imports WHERE project_id = $1").bind(project_id).execute(&mut *self).await?;
            let mut ids: HashMap<&str, i64> = HashMap::new();
            for node in graph.nodes.values() {
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO graph_nodes (project_id, job_id, key, name, type, description, source_chunks, community, x, y)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                )
                .bind(project_id)
                .bind(job_id)
                .bind(&node.key)
                .bind(&node.name)
                .bind(&node.kind)
                .bind(node.descriptions.join("\n"))
                .bind(serde_json::to_string(&node.source_chunks).unwrap_or_default())
                .bind(communities.get(&node.key).copied().unwrap_or(0) as i64)
                .bind(positions.get(&node.key).map_or(0.0, |p| p[0]))
                .bind(positions.get(&node.key).map_or(0.0, |p| p[1]))
                .fetch_one(&mut *self)
                .await?;
                ids.insert(node.key.as_str(), id);
            }
            for edge in graph.edges.values() {
                let (Some(&s), Some(&t)) = (ids.get(edge.source.as_str()), ids.get(edge.target.as_str())) else { continue };
                sqlx::query(
                    "INSERT INTO graph_edges (project_id, source_id, target_id, description, keywords, weight, source_chunks)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(project_id)
                .bind(s)
                .bind(t)
                .bind(edge.descriptions.join("\n"))
                .bind(serde_json::to_string(&edge.keywords).unwrap_or_default())
                .bind(edge.weight)
                .bind(serde_json::to_string(&edge.source_chunks).unwrap_or_default())
                .execute(&mut *self)
                .await?;
            }
            Ok(())
        }
    }
}

pub async fn export(pool: &Db, project_id: i64) -> AppResult<GraphExport> {
    on_db!(pool, |db| {
        let nodes: Vec<(i64, String, String, String, String, i64)> = sqlx::query_as(
        "SELECT id, name, type, description, source_chunks, community FROM graph_nodes WHERE project_id = $1 ORDER BY id",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
        let edges: Vec<(i64, i64, String, f64, String)> = sqlx::query_as(
        "SELECT source_id, target_id, description, weight, source_chunks FROM graph_edges WHERE project_id = $1 ORDER BY id",
    )
    .bind(project_id)
    .fetch_all(db)
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
    })
}

/// The stored graph back in the engine's form (for its algorithms).
pub async fn load(pool: &Db, project_id: i64) -> AppResult<KnowledgeGraph> {
    on_db!(pool, |db| {
        let rows: Vec<(i64, String, String, String, String, String)> = sqlx::query_as(
            "SELECT id, key, name, type, description, source_chunks FROM graph_nodes WHERE project_id = $1",
        )
        .bind(project_id)
        .fetch_all(db)
        .await?;
        let mut graph = KnowledgeGraph::default();
        let mut keys: HashMap<i64, String> = HashMap::new();
        for (id, key, name, kind, description, src) in rows {
            keys.insert(id, key.clone());
            let node = Node::restored(
                key.clone(),
                name,
                kind,
                description.lines().map(str::to_string).collect(),
                chunk_set(&src),
            );
            graph.nodes.insert(key, node);
        }
        let edges: Vec<(i64, i64, String, String, f64, String)> = sqlx::query_as(
        "SELECT source_id, target_id, description, keywords, weight, source_chunks FROM graph_edges WHERE project_id = $1",
    )
    .bind(project_id)
    .fetch_all(db)
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
    })
}

fn chunk_set(json: &str) -> BTreeSet<i64> {
    serde_json::from_str(json).unwrap_or_default()
}

/// The names of the project's entities.
pub async fn entity_names(pool: &Db, project_id: i64) -> AppResult<Vec<String>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT name FROM graph_nodes WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// The stored graph's communities: node key → community number.
pub async fn communities(pool: &Db, project_id: i64) -> AppResult<BTreeMap<String, usize>> {
    on_db!(pool, |db| {
        let rows: Vec<(String, i64)> = sqlx::query_as("SELECT key, community FROM graph_nodes WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(db)
            .await?;
        Ok(rows.into_iter().map(|(k, c)| (k, c as usize)).collect())
    })
}

/// The community reports written for the current graph.
pub async fn reports(pool: &Db, project_id: i64) -> AppResult<Vec<engine::rag::CommunityReport>> {
    on_db!(pool, |db| {
        let rows: Vec<(i64, String, String, f64)> = sqlx::query_as(
            "SELECT community, title, summary, rating FROM community_reports WHERE project_id = $1 ORDER BY community",
        )
        .bind(project_id)
        .fetch_all(db)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(community, title, summary, rating)| engine::rag::CommunityReport {
                community: community as usize,
                title,
                summary,
                rating,
            })
            .collect())
    })
}

/// Stores community reports (replacing any of the same communities).
pub async fn save_reports(
    pool: &Db,
    project_id: i64,
    job_id: i64,
    reports: &[engine::rag::CommunityReport],
) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        for r in reports {
            sqlx::query(
                "INSERT INTO community_reports (project_id, community, job_id, title, summary, rating)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (project_id, community) DO UPDATE SET job_id = excluded.job_id, title = excluded.title,
                summary = excluded.summary, rating = excluded.rating",
            )
            .bind(project_id)
            .bind(r.community as i64)
            .bind(job_id)
            .bind(&r.title)
            .bind(&r.summary)
            .bind(r.rating)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    })
}

/// Distinct communities stored for the project's graph.
pub async fn community_count(pool: &Db, project_id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT COUNT(DISTINCT community) FROM graph_nodes WHERE project_id = $1")
            .bind(project_id)
            .fetch_one(db)
            .await?)
    })
}

type NodeRow = (i64, String, String, i64, f64, f64);

async fn node_rows(pool: &Db, project_id: i64) -> AppResult<Vec<NodeRow>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT id, name, type, community, x, y FROM graph_nodes WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

async fn edge_pairs(pool: &Db, project_id: i64) -> AppResult<Vec<(i64, i64)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT source_id, target_id FROM graph_edges WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// The Graph page's statistics; `None` when the project has no graph.
pub async fn overview(pool: &Db, project_id: i64) -> AppResult<Option<GraphOverview>> {
    on_db!(pool, |db| {
        let rows = node_rows(pool, project_id).await?;
        if rows.is_empty() {
            return Ok(None);
        }
        let edges = edge_pairs(pool, project_id).await?;
        let degree = engine::graph::stats::degrees(&edges);
        let nodes: Vec<engine::graph::stats::NodeRow> = rows
            .iter()
            .map(|(id, name, kind, community, ..)| engine::graph::stats::NodeRow {
                id: *id,
                name,
                kind,
                community: *community,
            })
            .collect();
        let stats = engine::graph::stats::statistics(&nodes, &edges, &degree, 15);
        let top = stats
            .top
            .iter()
            .map(|&i| NodeBrief {
                id: nodes[i].id,
                name: nodes[i].name.to_string(),
                kind: nodes[i].kind.to_string(),
                degree: degree.get(&nodes[i].id).copied().unwrap_or(0) as i64,
            })
            .collect();
        let job_id: Option<i64> = sqlx::query_scalar("SELECT job_id FROM graph_nodes WHERE project_id = $1 LIMIT 1")
            .bind(project_id)
            .fetch_one(db)
            .await?;
        let (provider, model) = match job_id {
            Some(job) => {
                match sqlx::query_as::<_, (i64, String, String)>(
                    "SELECT id, provider, model FROM llm_calls WHERE job_id = $1 LIMIT 1",
                )
                .bind(job)
                .fetch_optional(db)
                .await?
                {
                    Some((id, p, m)) => (Some(super::stored("llm_calls", id, &p)?), m),
                    None => (None, String::new()),
                }
            }
            // Imported from a file: no job, no call.
            None => (None, String::new()),
        };
        let extraction_note = match job_id {
            Some(job) => extraction_note(pool, job).await?,
            None => None,
        };
        Ok(Some(GraphOverview {
            // Filled in by the caller from `store::foreign::import_record`
            // (`foreign` builds on this module, not the other way round).
            imported_from: None,
            extraction_note,
            nodes: stats.nodes as i64,
            edges: stats.edges as i64,
            components: stats.components as i64,
            largest_component: stats.largest_component as i64,
            communities: stats.communities as i64,
            degree_histogram: stats.degree_histogram.iter().map(|&(d, n)| (d as i64, n as i64)).collect(),
            types: stats.types.into_iter().map(|(k, n)| (k, n as i64)).collect(),
            top,
            job_id,
            provider,
            model,
        }))
    })
}

/// What the explorer draws: the `limit` highest-degree nodes and the edges among them.
pub async fn view(pool: &Db, project_id: i64, limit: usize) -> AppResult<GraphView> {
    let rows = node_rows(pool, project_id).await?;
    let edges = edge_pairs(pool, project_id).await?;
    let degree = engine::graph::stats::degrees(&edges);
    let by_id: HashMap<i64, &NodeRow> = rows.iter().map(|r| (r.0, r)).collect();
    let ranked: Vec<&NodeRow> = engine::graph::stats::by_degree(rows.iter().map(|r| r.0), &degree, limit)
        .into_iter()
        .map(|id| by_id[&id])
        .collect();
    let mut types: Vec<String> = Vec::new();
    let mut index: HashMap<i64, u32> = HashMap::new();
    let mut nodes = Vec::with_capacity(ranked.len());
    for (i, (id, name, kind, community, x, y)) in ranked.into_iter().enumerate() {
        let kind = match types.iter().position(|t| t == kind) {
            Some(k) => k,
            None => {
                types.push(kind.clone());
                types.len() - 1
            }
        };
        index.insert(*id, i as u32);
        nodes.push(ViewNode {
            id: *id,
            name: name.clone(),
            kind: kind as u16,
            community: *community,
            degree: degree.get(id).copied().unwrap_or(0) as u32,
            x: *x as f32,
            y: *y as f32,
        });
    }
    let shown: Vec<(u32, u32)> = edges.iter().filter_map(|(s, t)| Some((*index.get(s)?, *index.get(t)?))).collect();
    Ok(GraphView { nodes, edges: shown, types, total_nodes: rows.len() as i64, total_edges: edges.len() as i64 })
}

/// Chunks as evidence, with `names` marked.
pub async fn sources(pool: &Db, chunk_ids: &[i64], names: &[&str], limit: usize) -> AppResult<Vec<SourceChunk>> {
    on_db!(pool, |db| {
        let wanted: Vec<i64> = chunk_ids.iter().take(limit).copied().collect();
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders = super::placeholders(1, wanted.len());
        let sql = format!(
            "SELECT c.id, c.document_id, d.title, c.body FROM chunks c JOIN documents d ON d.id = c.document_id
         WHERE c.id IN ({placeholders}) ORDER BY c.id"
        );
        let mut query = sqlx::query_as::<_, (i64, i64, String, String)>(&sql);
        for id in &wanted {
            query = query.bind(id);
        }
        // A chunk re-chunked away since the build has no text to show: it is simply absent.
        Ok(query
            .fetch_all(db)
            .await?
            .into_iter()
            .map(|(chunk_id, document_id, document_title, body)| SourceChunk {
                chunk_id,
                document_id,
                document_title,
                segments: engine::text::highlight(&body, names),
            })
            .collect())
    })
}

/// A node's degree, as SQL over the edge-end indexes (edges never loop).
const DEGREE: &str = "(SELECT COUNT(*) FROM graph_edges x WHERE x.source_id = n.id)
     + (SELECT COUNT(*) FROM graph_edges x WHERE x.target_id = n.id)";

/// Source chunks shown per node or edge, at most.
const SOURCE_LIMIT: usize = 20;

pub async fn node_detail(pool: &Db, project_id: i64, node_id: i64) -> AppResult<NodeDetail> {
    on_db!(pool, |db| {
        let row: Option<(String, String, String, i64, String)> = sqlx::query_as(
        "SELECT name, type, description, community, source_chunks FROM graph_nodes WHERE id = $1 AND project_id = $2",
    )
    .bind(node_id)
    .bind(project_id)
    .fetch_optional(db)
    .await?;
        let (name, kind, description, community, src) =
            row.ok_or_else(|| AppError::NotFound(format!("node {node_id} is not in this project's graph")))?;
        let neighbours: Vec<(i64, String, String, i64)> = sqlx::query_as(&format!(
            "SELECT n.id, n.name, n.type, {DEGREE} FROM graph_edges e
         JOIN graph_nodes n ON n.id = CASE WHEN e.source_id = $1 THEN e.target_id ELSE e.source_id END
         WHERE e.source_id = $1 OR e.target_id = $1 ORDER BY e.weight DESC, n.name"
        ))
        .bind(node_id)
        .fetch_all(db)
        .await?;
        let chunks: Vec<i64> = chunk_set(&src).into_iter().collect();
        Ok(NodeDetail {
            id: node_id,
            sources: sources(pool, &chunks, &[name.as_str()], SOURCE_LIMIT).await?,
            name,
            kind,
            community,
            description,
            neighbours: neighbours
                .into_iter()
                .map(|(id, name, kind, degree)| NodeBrief { id, name, kind, degree })
                .collect(),
        })
    })
}

async fn node_brief(pool: &Db, id: i64) -> AppResult<NodeBrief> {
    on_db!(pool, |db| {
        let (name, kind, degree): (String, String, i64) =
            sqlx::query_as(&format!("SELECT n.name, n.type, {DEGREE} FROM graph_nodes n WHERE n.id = $1"))
                .bind(id)
                .fetch_one(db)
                .await?;
        Ok(NodeBrief { id, name, kind, degree })
    })
}

pub async fn edge_detail(pool: &Db, project_id: i64, a: i64, b: i64) -> AppResult<EdgeDetail> {
    on_db!(pool, |db| {
        let row: Option<(i64, i64, String, String, f64, String)> = sqlx::query_as(
            "SELECT source_id, target_id, description, keywords, weight, source_chunks FROM graph_edges
         WHERE project_id = $1 AND ((source_id = $2 AND target_id = $3) OR (source_id = $4 AND target_id = $5))",
        )
        .bind(project_id)
        .bind(a)
        .bind(b)
        .bind(b)
        .bind(a)
        .fetch_optional(db)
        .await?;
        let (s, t, description, keywords, weight, src) =
            row.ok_or_else(|| AppError::NotFound(format!("nodes {a} and {b} are not related in this graph")))?;
        let (source, target) = (node_brief(pool, s).await?, node_brief(pool, t).await?);
        let chunks: Vec<i64> = chunk_set(&src).into_iter().collect();
        Ok(EdgeDetail {
            sources: sources(pool, &chunks, &[source.name.as_str(), target.name.as_str()], SOURCE_LIMIT).await?,
            source,
            target,
            description,
            keywords: serde_json::from_str(&keywords).unwrap_or_default(),
            weight,
        })
    })
}

/// The project's current graph nodes for these keys (a question's sampled
/// structure), in the keys' order, and the keys no longer in the graph.
pub async fn nodes_by_key(pool: &Db, project_id: i64, keys: &[String]) -> AppResult<(Vec<NodeBrief>, Vec<String>)> {
    on_db!(pool, |db| {
        if keys.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let placeholders = super::placeholders(2, keys.len());
        let sql =
        format!("SELECT n.key, n.id, n.name, n.type, {DEGREE} FROM graph_nodes n WHERE n.project_id = $1 AND n.key IN ({placeholders})");
        let mut query = sqlx::query_as::<_, (String, i64, String, String, i64)>(&sql).bind(project_id);
        for key in keys {
            query = query.bind(key);
        }
        let mut found: HashMap<String, NodeBrief> = query
            .fetch_all(db)
            .await?
            .into_iter()
            .map(|(key, id, name, kind, degree)| (key, NodeBrief { id, name, kind, degree }))
            .collect();
        let missing = keys.iter().filter(|k| !found.contains_key(*k)).cloned().collect();
        Ok((keys.iter().filter_map(|k| found.remove(k)).collect(), missing))
    })
}

/// What the model's extraction replies were like, in one paragraph ("12 of
/// 19 chunks gave no usable entities: replies were not readable JSON (7),
/// cut at max_tokens (5). …"), from the graph job's chunk items; `None`
/// when every chunk gave entities and nothing was cut or dropped.
pub async fn extraction_note(pool: &Db, job_id: i64) -> AppResult<Option<String>> {
    on_db!(pool, |db| {
        let rows: Vec<(String, String, Option<String>, Option<Vec<u8>>, Option<String>)> = sqlx::query_as(
            "SELECT key, status, result, result_z, error FROM job_items WHERE job_id = $1 AND key LIKE 'chunk-%'",
        )
        .bind(job_id)
        .fetch_all(db)
        .await?;
        let mut items = Vec::with_capacity(rows.len());
        for (key, status, result, result_z, error) in rows {
            let what = format!("job {job_id}'s item \"{key}\"");
            items.push((status, super::packed::unpack(result, result_z, &what)?, error));
        }
        let mut reasons: HashMap<String, i64> = HashMap::new();
        let (mut unusable, mut cut, mut repaired) = (0i64, 0i64, 0i64);
        let mut dropped: std::collections::BTreeMap<String, i64> = Default::default();
        for (status, result, error) in &items {
            if status == "failed" {
                unusable += 1;
                let e = error.as_deref().unwrap_or("");
                let reason = if e.contains("cut at max_tokens") {
                    "cut at max_tokens before any entry was complete".to_string()
                } else if e.starts_with("unreadable extraction") {
                    "replies were not readable JSON".to_string()
                } else {
                    crate::ssr::store::jobs::reason_of(e)
                };
                *reasons.entry(reason).or_default() += 1;
                continue;
            }
            let x = match result.as_deref().map(engine::jobs::ItemOutcome::read::<engine::graph::ChunkItem>) {
                Some(Ok(x)) => x,
                Some(Err(e)) => {
                    unusable += 1;
                    *reasons.entry(e).or_default() += 1;
                    continue;
                }
                None => continue,
            };
            if x.extraction.entities.is_empty() {
                unusable += 1;
                *reasons.entry("replies named no entity of the requested types".into()).or_default() += 1;
            }
            cut += i64::from(x.truncated_replies > 0);
            repaired += i64::from(x.repaired);
            for (kind, n) in x.dropped_types {
                *dropped.entry(kind).or_default() += i64::from(n);
            }
        }
        let mut parts = Vec::new();
        if unusable > 0 {
            let mut reasons: Vec<(String, i64)> = reasons.into_iter().collect();
            reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let listed: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} ({n})")).collect();
            parts.push(format!("{unusable} of {} chunks gave no usable entities: {}", items.len(), listed.join(", ")));
        }
        if cut > 0 {
            parts.push(format!("{cut} chunks had replies cut at max_tokens (their complete entries were kept)"));
        }
        if repaired > 0 {
            parts.push(format!("{repaired} chunks needed a repair turn for JSON of the wrong shape"));
        }
        if !dropped.is_empty() {
            let total: i64 = dropped.values().sum();
            let listed: Vec<String> = dropped.iter().map(|(k, n)| format!("{k} {n}")).collect();
            parts.push(format!("{total} entities of types not asked for were left out ({})", listed.join(", ")));
        }
        Ok((!parts.is_empty()).then(|| parts.join(". ") + "."))
    })
}

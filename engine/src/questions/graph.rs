//! Graph-text-grounded questions (seed 000 §III-A): node, edge and
//! subgraph level. [`plan`] samples the structures (seeded); each planned
//! question is one job item whose payload carries the structure's text and
//! its source chunks ([`item`]); [`run_item`] asks the LLM.
//!
//! - node: an entity (uniform, or weighted by degree), its description and
//!   its source chunks → a question about the entity's content;
//! - edge: a relation, both entities, its description and its source chunks
//!   → an inferential question about the relation;
//! - subgraph: a random walk of at least `min_hops` distinct edges
//!   ([`super::walk`]); the chunks behind its entities and relations are
//!   summarised one by one (the `summarise_chunk` task, so the summaries job
//!   and this share the cache), then the structure and the summaries → a
//!   question needing an overall understanding.
//!
//! Offline: template questions from the same structures (type-aware for
//! nodes; the walk's three highest-degree entities for subgraphs).

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::walk::{sample_walks, WalkError};
use crate::graph::summarise;
use crate::graph::KnowledgeGraph;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::prompt_hash;
use crate::llm::{CallContext, ChatRequest, Gateway, Message};

pub const NODE_PURPOSE: &str = "question_node";
pub const EDGE_PURPOSE: &str = "question_edge";
pub const SUBGRAPH_PURPOSE: &str = "question_subgraph";
pub const NODE_PROMPT: &str = include_str!("../../prompts/question_node.txt");
pub const EDGE_PROMPT: &str = include_str!("../../prompts/question_edge.txt");
pub const SUBGRAPH_PROMPT: &str = include_str!("../../prompts/question_subgraph.txt");

/// Source chunks given with a node or edge question, at most: drawn at
/// random (seeded) from all of the entity's or relation's source chunks, so
/// a character present throughout a novel is asked about from across it,
/// not from its opening pages (the early-document skew the paper blames on
/// the summary baseline). Three chunks of the default 1,200 tokens keep the
/// prompt within about 4,000 tokens.
pub const CHUNKS_PER_ITEM: usize = 3;
/// Seed 000 §III-A: "we will first generate summaries of the text chunks
/// corresponding to all entities and relations within the subgraph". Every
/// chunk is summarised; when their summaries exceed this many words they
/// are summarised again in batches (map–reduce) until they fit.
pub const SUMMARY_BUDGET_WORDS: usize = 1_500;
/// The most words of summaries one reduce step summarises at once.
const REDUCE_BATCH_WORDS: usize = 600;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Node,
    Edge,
    Subgraph,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Node => "node",
            Level::Edge => "edge",
            Level::Subgraph => "subgraph",
        }
    }
}

/// The graph questions' settings: the request, as the form, the CLI and a
/// manifest's `[[questions]]` give it.
pub type GraphQuestionSettings = types::requests::GraphQuestionsRequest;

/// One planned question: the sampled structure, by node keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub level: Level,
    /// Node keys: the entity, both ends, or the walk's distinct nodes.
    pub nodes: Vec<String>,
    pub edges: Vec<(String, String)>,
    /// The walk's path (subgraph level only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub walk: Vec<String>,
    /// Every chunk the structure was extracted from, in corpus order.
    pub source_chunk_ids: Vec<i64>,
    /// The chunks given to the LLM with the question: for a node or edge
    /// [`CHUNKS_PER_ITEM`] drawn from all of `source_chunk_ids`; for a
    /// subgraph all of them (each summarised). Plans made before this was
    /// recorded have none (their context was the first chunks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_chunk_ids: Vec<i64>,
}

impl Plan {
    /// The chunks the question's LLM call is given: `context_chunk_ids`, or
    /// for plans made before those were recorded, what was given then (the
    /// first 3 chunks of a node or edge, the first 30 of a subgraph).
    pub fn given_chunk_ids(&self) -> Vec<i64> {
        if self.context_chunk_ids.is_empty() {
            let cap = if self.level == Level::Subgraph { 30 } else { CHUNKS_PER_ITEM };
            self.source_chunk_ids.iter().copied().take(cap).collect()
        } else {
            self.context_chunk_ids.clone()
        }
    }
}

/// [`CHUNKS_PER_ITEM`] of `sources` drawn without replacement by a
/// generator seeded from the plan's seed and the structure's place, in
/// corpus order (ids grow with position).
fn context_of(sources: &[i64], seed: u64, place: u64) -> Vec<i64> {
    let mut rng = fastrand::Rng::with_seed(seed ^ place.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut picked: Vec<i64> = draw(sources.len(), CHUNKS_PER_ITEM.min(sources.len()), None, &mut rng)
        .into_iter()
        .map(|i| sources[i])
        .collect();
    picked.sort_unstable();
    picked
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("the project has no graph yet: build it first")]
    NoGraph,
    #[error("edge-level questions need a graph with relations; this one has none")]
    NoEdges,
    #[error(transparent)]
    Walk(#[from] WalkError),
}

/// `count` distinct indices below `n` (all of them, then again, if `count > n`),
/// uniformly or with the given weights (Efraimidis–Spirakis keys).
fn draw(n: usize, count: usize, weights: Option<&[f64]>, rng: &mut fastrand::Rng) -> Vec<usize> {
    let mut out = Vec::with_capacity(count);
    while out.len() < count && n > 0 {
        let mut keyed: Vec<(f64, usize)> = (0..n)
            .map(|i| {
                let u = rng.f64().max(f64::MIN_POSITIVE);
                let w = weights.map_or(1.0, |w| w[i].max(f64::MIN_POSITIVE));
                (u.powf(1.0 / w), i)
            })
            .collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.extend(keyed.into_iter().take(count - out.len()).map(|(_, i)| i));
    }
    out
}

/// The sampled structures of every question, in order: nodes, edges, subgraphs.
pub fn plan(graph: &KnowledgeGraph, s: &GraphQuestionSettings) -> Result<Vec<Plan>, PlanError> {
    if graph.nodes.is_empty() {
        return Err(PlanError::NoGraph);
    }
    if s.edge > 0 && graph.edges.is_empty() {
        return Err(PlanError::NoEdges);
    }
    let mut rng = fastrand::Rng::with_seed(s.seed);
    let keys: Vec<&String> = graph.nodes.keys().collect();
    let degree: HashMap<String, usize> = graph.by_degree().into_iter().collect();
    let weights: Vec<f64> = keys.iter().map(|k| degree[k.as_str()] as f64 + 1.0).collect();
    let mut out = Vec::new();
    for i in draw(keys.len(), s.node, s.degree_weighted.then_some(&weights[..]), &mut rng) {
        let node = &graph.nodes[keys[i]];
        let sources: Vec<i64> = node.source_chunks.iter().copied().collect();
        out.push(Plan {
            level: Level::Node,
            nodes: vec![node.key.clone()],
            edges: vec![],
            walk: vec![],
            context_chunk_ids: context_of(&sources, s.seed, out.len() as u64),
            source_chunk_ids: sources,
        });
    }
    let edges: Vec<&(String, String)> = graph.edges.keys().collect();
    for i in draw(edges.len(), s.edge, None, &mut rng) {
        let edge = &graph.edges[edges[i]];
        let sources: Vec<i64> = edge.source_chunks.iter().copied().collect();
        out.push(Plan {
            level: Level::Edge,
            nodes: vec![edge.source.clone(), edge.target.clone()],
            edges: vec![edges[i].clone()],
            walk: vec![],
            context_chunk_ids: context_of(&sources, s.seed, out.len() as u64),
            source_chunk_ids: sources,
        });
    }
    if s.subgraph > 0 {
        for walk in sample_walks(graph, s.subgraph, s.min_hops, rng.u64(..))? {
            let nodes: Vec<String> = walk.nodes().into_iter().map(str::to_string).collect();
            let mut chunks: BTreeSet<i64> = BTreeSet::new();
            for k in &nodes {
                chunks.extend(&graph.nodes[k].source_chunks);
            }
            for e in &walk.edges {
                chunks.extend(&graph.edges[e].source_chunks);
            }
            let sources: Vec<i64> = chunks.into_iter().collect();
            out.push(Plan {
                level: Level::Subgraph,
                nodes,
                edges: walk.edges.into_iter().collect(),
                walk: walk.path,
                context_chunk_ids: sources.clone(),
                source_chunk_ids: sources,
            });
        }
    }
    Ok(out)
}

/// A plan's work item: the structure's names, types and descriptions and
/// the texts of its context chunks (`chunks`: chunk id → text).
/// An entity as a question's prompt shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EntityText {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub description: String,
}

/// A relation as a question's prompt shows it, by its ends' names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RelationText {
    pub source: String,
    pub target: String,
    pub description: String,
}

/// A planned question's item: the plan with the graph's text of its
/// entities (best-connected first) and relations, and the chunks it is
/// given (a subgraph's, to summarise first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub plan: Plan,
    pub nodes: Vec<EntityText>,
    pub edges: Vec<RelationText>,
    pub chunks: Vec<String>,
}

/// What an item asked: the question, its plan and its prompt's hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    pub question: String,
    pub plan: Plan,
    pub prompt_hash: Option<String>,
}

pub fn item(graph: &KnowledgeGraph, plan: &Plan, chunks: &HashMap<i64, String>) -> Item {
    items(graph, std::slice::from_ref(plan), chunks).remove(0)
}

/// The items of `plans`, in order: the graph's degrees are counted once
/// for all of them (not once per question).
pub fn items(graph: &KnowledgeGraph, plans: &[Plan], chunks: &HashMap<i64, String>) -> Vec<Item> {
    let degree = graph.degrees();
    plans.iter().map(|plan| item_of(graph, &degree, plan, chunks)).collect()
}

fn item_of(graph: &KnowledgeGraph, degree: &HashMap<&str, usize>, plan: &Plan, chunks: &HashMap<i64, String>) -> Item {
    let mut nodes: Vec<&String> = plan.nodes.iter().collect();
    // Subgraphs list their best-connected entities first (the sort is stable: ties keep the plan's order).
    nodes.sort_by_key(|k| std::cmp::Reverse(degree.get(k.as_str()).copied().unwrap_or(0)));
    let node = |k: &String| {
        let n = &graph.nodes[k];
        EntityText { name: n.name.clone(), kind: n.kind.clone(), description: n.descriptions.join(" ") }
    };
    let name = |k: &String| graph.nodes.get(k).map_or(k.clone(), |n| n.name.clone());
    let given = plan.given_chunk_ids();
    Item {
        plan: plan.clone(),
        nodes: nodes.into_iter().map(node).collect(),
        edges: plan
            .edges
            .iter()
            .map(|(a, b)| RelationText {
                source: name(a),
                target: name(b),
                description: graph
                    .edges
                    .get(&(a.clone(), b.clone()))
                    .map(|e| e.descriptions.join(" "))
                    .unwrap_or_default(),
            })
            .collect(),
        chunks: given.iter().filter_map(|id| chunks.get(id)).cloned().collect(),
    }
}

fn passages(chunks: &[String]) -> String {
    chunks.iter().enumerate().map(|(i, c)| format!("[{}] {c}", i + 1)).collect::<Vec<_>>().join("\n\n")
}

/// The question request for a node or edge item, or for a subgraph item
/// given its chunk summaries.
pub fn request(item: &Item, summaries: &[String]) -> ChatRequest {
    let (nodes, edges, chunks) = (&item.nodes, &item.edges, &item.chunks);
    let entity = |n: &EntityText| format!("- {} ({}): {}", n.name, n.kind, n.description);
    let relation = |e: &RelationText| format!("- {} — {}: {}", e.source, e.target, e.description);
    let (purpose, prompt, user) = match item.plan.level {
        Level::Node => {
            let n = nodes.first().cloned().unwrap_or_default();
            let user = format!(
                "Entity: {} ({})\nDescription: {}\nPassages:\n<<<\n{}\n>>>",
                n.name,
                n.kind,
                n.description,
                passages(chunks)
            );
            (NODE_PURPOSE, NODE_PROMPT, user)
        }
        Level::Edge => {
            let e = edges.first().cloned().unwrap_or_default();
            let user = format!(
                "Relation: {} — {}\nDescription: {}\nEntities:\n{}\nPassages:\n<<<\n{}\n>>>",
                e.source,
                e.target,
                e.description,
                nodes.iter().map(entity).collect::<Vec<_>>().join("\n"),
                passages(chunks)
            );
            (EDGE_PURPOSE, EDGE_PROMPT, user)
        }
        Level::Subgraph => {
            let user = format!(
                "Entities: {}\nRelations:\n{}\nSummaries:\n<<<\n{}\n>>>",
                nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join("; "),
                edges.iter().map(relation).collect::<Vec<_>>().join("\n"),
                passages(summaries)
            );
            (SUBGRAPH_PURPOSE, SUBGRAPH_PROMPT, user)
        }
    };
    let mut req = ChatRequest::new(purpose, vec![Message::system(prompt.trim()), Message::user(user)]);
    req.max_tokens = Some(120);
    req
}

/// The question in a reply: its first non-empty line, without a
/// "Question:" label, numbering or quotes; it must end with `?`.
pub fn parse_question(reply: &str) -> Result<String, String> {
    let line = reply.lines().map(str::trim).find(|l| !l.is_empty()).ok_or("the reply is empty")?;
    let line = line.strip_prefix("Question:").or_else(|| line.strip_prefix("**Question:**")).unwrap_or(line).trim();
    let line = line.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ')' || c == '-').trim();
    let line = line.trim_matches(|c| c == '"' || c == '“' || c == '”' || c == '*').trim();
    if line.ends_with('?') && line.len() > 5 {
        Ok(line.to_string())
    } else {
        Err(format!("the reply is not a question: {}", crate::llm::outbound::excerpt(reply, 120)))
    }
}

/// Generates one planned question through the gateway. The result (JSON)
/// is the question with its plan.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let p: Item = match item.read() {
        Ok(p) => p,
        Err(error) => return ItemOutcome::failed(error),
    };
    let level = p.plan.level;
    let ctx = |template: &str| CallContext {
        job_id: Some(job_id),
        item: Some(item.key.clone()),
        prompt_hash: Some(prompt_hash(template)),
    };
    let (mut tokens, mut cost) = (0, 0.0);
    let mut summaries = Vec::new();
    if level == Level::Subgraph {
        for chunk in &p.chunks {
            match gateway.chat(&summarise::request(chunk), &ctx(summarise::PROMPT)).await {
                Ok(r) => {
                    tokens += r.prompt_tokens + r.completion_tokens;
                    cost += r.cost_usd;
                    summaries.push(r.text.trim().to_string());
                }
                Err(e) => return ItemOutcome::Failed { error: format!("summary: {e}"), tokens, cost_usd: cost },
            }
        }
        // Map–reduce: summaries over the budget are summarised again in
        // batches until they fit (each round shrinks them ~10×).
        for _round in 0..8 {
            if summaries.iter().map(|s| words(s)).sum::<usize>() <= SUMMARY_BUDGET_WORDS {
                break;
            }
            let mut reduced = Vec::new();
            for batch in batches(&summaries) {
                if batch.len() == 1 {
                    reduced.push(batch[0].clone());
                    continue;
                }
                match gateway.chat(&summarise::request(&batch.join("\n")), &ctx(summarise::PROMPT)).await {
                    Ok(r) => {
                        tokens += r.prompt_tokens + r.completion_tokens;
                        cost += r.cost_usd;
                        reduced.push(r.text.trim().to_string());
                    }
                    Err(e) => {
                        return ItemOutcome::Failed {
                            error: format!("summary of summaries: {e}"),
                            tokens,
                            cost_usd: cost,
                        }
                    }
                }
            }
            if reduced.len() == summaries.len() {
                break;
            }
            summaries = reduced;
        }
    }
    let req = request(&p, &summaries);
    let template = match level {
        Level::Node => NODE_PROMPT,
        Level::Edge => EDGE_PROMPT,
        Level::Subgraph => SUBGRAPH_PROMPT,
    };
    let reply = match gateway.chat(&req, &ctx(template)).await {
        Ok(r) => r,
        Err(e) => return ItemOutcome::Failed { error: e.to_string(), tokens, cost_usd: cost },
    };
    tokens += reply.prompt_tokens + reply.completion_tokens;
    cost += reply.cost_usd;
    match parse_question(&reply.text) {
        Ok(question) => ItemOutcome::done::<Item>(
            &Asked { question, plan: p.plan, prompt_hash: Some(prompt_hash(template)) },
            tokens,
            cost,
        ),
        Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: cost },
    }
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Consecutive summaries grouped into batches of at most
/// `REDUCE_BATCH_WORDS` words (a longer summary is a batch of its own).
fn batches(summaries: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut size = 0;
    for s in summaries {
        let n = words(s);
        match out.last_mut() {
            Some(b) if size + n <= REDUCE_BATCH_WORDS => {
                b.push(s.clone());
                size += n;
            }
            _ => {
                out.push(vec![s.clone()]);
                size = n;
            }
        }
    }
    out
}

fn header<'a>(req: &'a ChatRequest, label: &str) -> Option<&'a str> {
    req.messages.last()?.content.lines().find_map(|l| l.strip_prefix(label)).map(str::trim)
}

/// Offline node question: a template chosen by the entity's type.
pub fn offline_node(req: &ChatRequest) -> Result<String, String> {
    let entity = header(req, "Entity:").ok_or("no Entity: line in the request")?;
    let (name, kind) = entity.rsplit_once(" (").map_or((entity, ""), |(n, k)| (n, k.trim_end_matches(')')));
    Ok(match kind {
        "person" => format!("Who is {name}, and what does {name} do in the text?"),
        "location" => format!("What happens at {name}, and why does the place matter?"),
        "organization" => format!("What is {name}, and what part does it play in the events described?"),
        "event" => format!("What happened in {name}, and what came of it?"),
        _ => format!("What does the text say about {name}, and why is it important?"),
    })
}

/// Offline edge question: how the two are related, and why.
pub fn offline_edge(req: &ChatRequest) -> Result<String, String> {
    let relation = header(req, "Relation:").ok_or("no Relation: line in the request")?;
    let (a, b) = relation.split_once(" — ").ok_or("the Relation: line names no pair")?;
    Ok(format!("How is {a} connected to {b}, and what follows from that connection?"))
}

/// Offline subgraph question: how the walk's three best-connected entities fit together.
pub fn offline_subgraph(req: &ChatRequest) -> Result<String, String> {
    let entities = header(req, "Entities:").ok_or("no Entities: line in the request")?;
    let names: Vec<&str> = entities.split("; ").filter(|n| !n.is_empty()).take(3).collect();
    match names.as_slice() {
        [a, b, c] => Ok(format!("How do {a}, {b} and {c} fit together, and what larger story connects them?")),
        [a, b] => Ok(format!("How do {a} and {b} fit together, and what larger story connects them?")),
        _ => Err("a subgraph question needs at least two entities".into()),
    }
}

crate::job_items!(Item => Asked);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Entity, Extraction, Relation};
    use serde_json::json;

    fn sample_graph() -> KnowledgeGraph {
        let mut g = KnowledgeGraph::default();
        let people = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo"];
        for (c, pair) in people.windows(2).enumerate() {
            g.merge(
                c as i64 + 1,
                &Extraction {
                    entities: pair
                        .iter()
                        .map(|p| Entity {
                            name: p.to_string(),
                            kind: "person".into(),
                            description: format!("{p} lives in Saltmere."),
                        })
                        .collect(),
                    relations: vec![Relation {
                        source: pair[0].into(),
                        target: pair[1].into(),
                        description: format!("{} taught {}.", pair[0], pair[1]),
                        keywords: vec![],
                        strength: 1.0,
                    }],
                },
            );
        }
        g
    }

    #[test]
    fn plans_are_seeded_and_carry_their_structures_and_chunks() {
        let g = sample_graph();
        let s = GraphQuestionSettings { node: 4, edge: 3, subgraph: 2, min_hops: 4, ..Default::default() };
        let p = plan(&g, &s).unwrap();
        assert_eq!(p.iter().filter(|q| q.level == Level::Node).count(), 4);
        assert_eq!(p.iter().filter(|q| q.level == Level::Edge).count(), 3);
        assert_eq!(p.iter().filter(|q| q.level == Level::Subgraph).count(), 2);
        assert_eq!(plan(&g, &s).unwrap(), p, "seeded");
        let nodes: BTreeSet<&String> = p.iter().filter(|q| q.level == Level::Node).map(|q| &q.nodes[0]).collect();
        assert_eq!(nodes.len(), 4, "entities drawn without replacement");
        let edge = p.iter().find(|q| q.level == Level::Edge).unwrap();
        assert_eq!(edge.source_chunk_ids, g.edges[&edge.edges[0]].source_chunks.iter().copied().collect::<Vec<_>>());
        let sub = p.iter().find(|q| q.level == Level::Subgraph).unwrap();
        assert!(sub.edges.len() >= 4 && sub.walk.len() > sub.edges.len());
        assert!(sub.source_chunk_ids.len() >= 4);
        let too_many = GraphQuestionSettings { subgraph: 1, min_hops: 50, ..s };
        assert!(matches!(plan(&g, &too_many), Err(PlanError::Walk(WalkError::TooSmall { .. }))));
        assert_eq!(plan(&KnowledgeGraph::default(), &s), Err(PlanError::NoGraph));
    }

    /// "An entity mentioned across a long document gets context
    /// drawn from across it (the chunks' positions spread over the
    /// document, not the first three)".
    #[test]
    fn node_context_is_drawn_across_all_sources_not_the_first_three() {
        let mut g = KnowledgeGraph::default();
        let ada = Entity { name: "Ada".into(), kind: "person".into(), description: "Ada mends nets.".into() };
        for chunk in 1..=300 {
            g.merge(chunk, &Extraction { entities: vec![ada.clone()], relations: vec![] });
        }
        let mut positions = Vec::new();
        for seed in 0..100 {
            let s = GraphQuestionSettings { node: 1, edge: 0, subgraph: 0, seed, ..Default::default() };
            let p = &plan(&g, &s).unwrap()[0];
            assert_eq!(p.source_chunk_ids.len(), 300, "all of the entity's sources are kept");
            assert_eq!(p.context_chunk_ids.len(), CHUNKS_PER_ITEM);
            assert!(p.context_chunk_ids.windows(2).all(|w| w[0] < w[1]), "distinct, in corpus order");
            assert_eq!(p.given_chunk_ids(), p.context_chunk_ids);
            positions.extend(p.context_chunk_ids.iter().map(|c| *c as f64));
        }
        // Uniform over 1..=300: mean 150.5; 300 draws put it within ±20.
        let mean = positions.iter().sum::<f64>() / positions.len() as f64;
        assert!((mean - 150.5).abs() < 20.0, "mean position {mean}");
        let late = positions.iter().filter(|p| **p > 200.0).count();
        assert!(late > 60, "a third of the draws from the last third: {late} of 300");
        // The payload carries exactly those chunks' texts.
        let chunks: HashMap<i64, String> = (1..=300).map(|i| (i, format!("Chunk {i}."))).collect();
        let s = GraphQuestionSettings { node: 1, edge: 0, subgraph: 0, seed: 5, ..Default::default() };
        let p = &plan(&g, &s).unwrap()[0];
        let texts: Vec<String> = item(&g, p, &chunks).chunks;
        assert_eq!(texts, p.context_chunk_ids.iter().map(|c| format!("Chunk {c}.")).collect::<Vec<_>>());
        // A plan stored before context chunks were recorded was given its first three.
        let old: Plan = serde_json::from_value(json!({"level": "node", "nodes": ["ada"], "edges": [],
            "source_chunk_ids": [4, 9, 12, 40]}))
        .unwrap();
        assert_eq!(old.given_chunk_ids(), vec![4, 9, 12]);
    }

    /// Seed 000 §III-A summarises "the text chunks corresponding to all
    /// entities and relations within the subgraph": every chunk is
    /// summarised, and summaries beyond the budget are reduced in batches.
    #[tokio::test]
    async fn a_subgraph_summarises_every_chunk_and_reduces_what_exceeds_the_budget() {
        use std::sync::Arc;

        use crate::llm::{MemoryStore, PriceTable};
        let g = sample_graph();
        let s = GraphQuestionSettings { node: 0, edge: 0, subgraph: 1, min_hops: 3, ..Default::default() };
        let mut p = plan(&g, &s).unwrap().remove(0);
        assert_eq!(p.context_chunk_ids, p.source_chunk_ids, "a subgraph is given every source chunk");
        // 120 chunks, each summarised to about 30 words: 3,600 words > the budget.
        p.source_chunk_ids = (1..=120).collect();
        p.context_chunk_ids = p.source_chunk_ids.clone();
        let chunks: HashMap<i64, String> = (1..=120)
            .map(|i| {
                let sentence = format!(
                    "In the year {i} the wardens of Saltmere met Ada Pell and Bo Marsh at the harbour to mend the nets of the fleet before the storm of winter came down from the northern hills."
                );
                (i, format!("{sentence} {sentence}"))
            })
            .collect();
        let store = Arc::new(MemoryStore::default());
        let gw = Gateway::new(Arc::new(crate::offline::provider()), store.clone(), PriceTable::default());
        let item = WorkItem::new("q-0", &item(&g, &p, &chunks));
        let out = run_item(&gw, 1, item).await;
        assert!(matches!(out, ItemOutcome::Done { .. }), "{out:?}");
        let summaries = store.log().iter().filter(|c| c.purpose == summarise::PURPOSE).count();
        assert!(summaries > 120, "every chunk summarised, then reduced: {summaries} summary calls");
        let question = store.log().into_iter().find(|c| c.purpose == SUBGRAPH_PURPOSE).unwrap();
        assert!(question.reply.is_some());
        let given = crate::llm::prompt::delimited(&question.messages.last().unwrap().content).unwrap().to_string();
        assert!(words(&given) <= SUMMARY_BUDGET_WORDS + 50, "the question's summaries fit: {} words", words(&given));
        let lines = summaries - 120;
        assert!(lines <= 20, "a few reduce calls, not one per summary: {lines}");
        let reduced = batches(&vec!["word ".repeat(30); 120]);
        assert!(reduced.iter().all(|b| b.len() == 20), "600-word batches of 30-word summaries");
    }

    #[test]
    fn degree_weighting_favours_hubs() {
        // A star: the hub has degree 30, each leaf 1.
        let mut g = KnowledgeGraph::default();
        let relations = (0..30)
            .map(|i| Relation {
                source: "Hub".into(),
                target: format!("Leaf {i}"),
                description: String::new(),
                keywords: vec![],
                strength: 1.0,
            })
            .collect();
        g.merge(1, &Extraction { entities: vec![], relations });
        let s = |w, seed| GraphQuestionSettings {
            node: 1,
            edge: 0,
            subgraph: 0,
            degree_weighted: w,
            seed,
            ..Default::default()
        };
        let hub = |w| (0..200).filter(|seed| plan(&g, &s(w, *seed)).unwrap()[0].nodes[0] == "hub").count();
        // Weights: hub 30 + 1, each leaf 1 + 1: the hub's share is 31/91, about 68 of 200 draws.
        assert!(hub(true) > 40, "got {}", hub(true));
        assert!(hub(false) < 20, "uniform: about 1 in 31, got {}", hub(false));
    }

    #[test]
    fn prompts_carry_the_structure_and_offline_templates_read_it_back() {
        let g = sample_graph();
        let s = GraphQuestionSettings { node: 1, edge: 1, subgraph: 1, min_hops: 3, ..Default::default() };
        let chunks: HashMap<i64, String> = (1..=5).map(|i| (i, format!("Chunk {i} text."))).collect();
        let plans = plan(&g, &s).unwrap();
        let node = request(&item(&g, &plans[0], &chunks), &[]);
        let name = &g.nodes[&plans[0].nodes[0]].name;
        assert!(node.messages[1].content.starts_with(&format!("Entity: {name} (person)")));
        assert!(node.messages[1].content.contains("lives in Saltmere."));
        assert!(node.messages[1].content.contains("Chunk "));
        assert_eq!(offline_node(&node).unwrap(), format!("Who is {name}, and what does {name} do in the text?"));
        let edge = request(&item(&g, &plans[1], &chunks), &[]);
        assert!(edge.messages[1].content.contains("taught"));
        assert!(offline_edge(&edge).unwrap().starts_with("How is "));
        let sub = request(&item(&g, &plans[2], &chunks), &["A summary.".into()]);
        assert!(sub.messages[1].content.contains("[1] A summary."));
        assert!(offline_subgraph(&sub).unwrap().ends_with("what larger story connects them?"));
    }

    #[test]
    fn questions_are_read_from_replies_and_non_questions_refused() {
        for (reply, want) in [
            ("What did Ada teach Bo?", Ok("What did Ada teach Bo?")),
            ("\n Question: Why did Bo leave?\nBecause…", Ok("Why did Bo leave?")),
            ("1. \"How is Cy related to Di?\"", Ok("How is Cy related to Di?")),
            ("Ada taught Bo.", Err(())),
            ("   ", Err(())),
        ] {
            assert_eq!(parse_question(reply).map_err(|_| ()), want.map(str::to_string), "{reply:?}");
        }
    }
}

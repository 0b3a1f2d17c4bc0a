//! The LightRAG-style method (dual-level retrieval, LightRAG §3.2): the LLM
//! extracts low-level (entity) and high-level (theme) keywords from the
//! question (`engine/prompts/rag_keywords.txt`, LightRAG's JSON keys);
//! low-level keywords are matched to entities, high-level ones to
//! relations; the matched entities' one-hop neighbours and incident
//! relations join them, and the relations' endpoints; the context is the
//! entities' and relations' descriptions and the source chunks they cite,
//! each kind within its token budget (LightRAG's defaults: 4,000 each).
//!
//! Matching is BM25 over entity and relation texts ([`super::GraphIndex`]),
//! where LightRAG uses vector similarity: it needs no embedding model and
//! can be checked exactly. Modes: `local` (low-level only), `global`
//! (high-level only), `hybrid` (both; the default).
//!
//! Offline keywords: the question's capitalised names are low-level
//! keywords (its content words when it names none), its other content
//! words high-level.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{
    cited_chunks, entity_section, relation_section, within_budget, Corpus, GraphIndex, Meter, Method, Section,
};
use crate::graph::normalise_name;
use crate::llm::{BoxFuture, CallContext, ChatRequest, Gateway, Message};
use crate::text::words;

pub const PURPOSE: &str = "rag_keywords";
pub const PROMPT: &str = include_str!("../../prompts/rag_keywords.txt");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LightRagSettings {
    /// `local`, `global` or `hybrid`.
    pub mode: String,
    /// Entities (and relations) matched per keyword list (LightRAG's `top_k`).
    pub top_k: usize,
    pub entity_tokens: usize,
    pub relation_tokens: usize,
    pub chunk_tokens: usize,
}

impl Default for LightRagSettings {
    fn default() -> Self {
        LightRagSettings {
            mode: "hybrid".into(),
            top_k: 60,
            entity_tokens: 4000,
            relation_tokens: 4000,
            chunk_tokens: 4000,
        }
    }
}

/// A question's keywords.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Keywords {
    #[serde(default)]
    pub high_level_keywords: Vec<String>,
    #[serde(default)]
    pub low_level_keywords: Vec<String>,
}

pub fn request(question: &str) -> ChatRequest {
    let mut req = ChatRequest::new(
        PURPOSE,
        vec![Message::system(PROMPT.trim()), Message::user(format!("Question:\n<<<\n{question}\n>>>"))],
    );
    req.json = true;
    req.max_tokens = Some(300);
    req
}

/// The keywords of a reply. One list may be missing (a model that found
/// no high-level theme); a list may come as one comma-separated string;
/// placeholders ("...") are dropped. A reply with neither list fails.
pub fn parse_keywords(reply: &str) -> Result<Keywords, String> {
    let v = crate::llm::prompt::json_object(reply, "keyword reply")?;
    let list = |key: &str| -> Option<Vec<String>> {
        let items: Vec<String> = match v.get(key)? {
            serde_json::Value::Array(items) => items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect(),
            serde_json::Value::String(s) => s.split(',').map(str::to_string).collect(),
            _ => return None,
        };
        Some(items.into_iter().map(|k| k.trim().to_string()).filter(|k| k.chars().any(char::is_alphanumeric)).collect())
    };
    match (list("high_level_keywords"), list("low_level_keywords")) {
        (None, None) => Err("the keyword reply has neither high_level_keywords nor low_level_keywords".into()),
        (high, low) => {
            Ok(Keywords { high_level_keywords: high.unwrap_or_default(), low_level_keywords: low.unwrap_or_default() })
        }
    }
}

/// The offline keywords (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let question = crate::llm::prompt::delimited(message).unwrap_or("");
    let names = crate::graph::offline::names_in(question);
    let in_names: BTreeSet<String> = names.iter().flat_map(|n| words(n).collect::<Vec<_>>()).collect();
    let content: Vec<String> = words(question).collect();
    let high: Vec<String> = content.iter().filter(|w| !in_names.contains(*w)).cloned().collect();
    let low = if names.is_empty() { content.clone() } else { names };
    Ok(json!({ "high_level_keywords": high, "low_level_keywords": low }).to_string())
}

pub struct LightRag {
    corpus: Arc<Corpus>,
    index: GraphIndex,
    settings: LightRagSettings,
}

impl LightRag {
    pub fn new(corpus: Arc<Corpus>, settings: LightRagSettings) -> Result<LightRag, String> {
        if !matches!(settings.mode.as_str(), "local" | "global" | "hybrid") {
            return Err(format!("mode must be local, global or hybrid, not \"{}\"", settings.mode));
        }
        Ok(LightRag { index: GraphIndex::new(&corpus.graph), corpus, settings })
    }

    /// The context for given keywords (no LLM): see the module docs.
    pub fn context(&self, keywords: &Keywords) -> Vec<Section> {
        let graph = &self.corpus.graph;
        let s = &self.settings;
        // Entity key → score; relation key → score. Matched items keep their
        // BM25 score; added neighbours and relations score 0 and follow.
        let mut entities: BTreeMap<String, f64> = BTreeMap::new();
        let mut relations: BTreeMap<(String, String), f64> = BTreeMap::new();
        if s.mode != "global" && !keywords.low_level_keywords.is_empty() {
            let matched = self.index.entities(&keywords.low_level_keywords.join(" "), s.top_k);
            let keys: BTreeSet<&String> = matched.iter().map(|m| &m.0).collect();
            for (key, score) in &matched {
                entities.insert(key.clone(), *score);
            }
            for (edge_key, edge) in &graph.edges {
                if keys.contains(&edge.source) || keys.contains(&edge.target) {
                    relations.entry(edge_key.clone()).or_insert(0.0);
                    entities.entry(edge.source.clone()).or_insert(0.0);
                    entities.entry(edge.target.clone()).or_insert(0.0);
                }
            }
        }
        if s.mode != "local" && !keywords.high_level_keywords.is_empty() {
            for (key, score) in self.index.relations(&keywords.high_level_keywords.join(" "), s.top_k) {
                entities.entry(key.0.clone()).or_insert(0.0);
                entities.entry(key.1.clone()).or_insert(0.0);
                let e = relations.entry(key).or_insert(0.0);
                *e = e.max(score);
            }
        }
        // Matched first (by score), then the rest by degree / weight.
        let mut ranked_entities: Vec<(String, f64)> = entities.into_iter().collect();
        let degree = |k: &str| self.index.degree(k);
        ranked_entities.sort_by(|a, b| b.1.total_cmp(&a.1).then(degree(&b.0).cmp(&degree(&a.0))).then(a.0.cmp(&b.0)));
        let mut ranked_relations: Vec<((String, String), f64)> = relations.into_iter().collect();
        ranked_relations.sort_by(|a, b| {
            b.1.total_cmp(&a.1).then(graph.edges[&b.0].weight.total_cmp(&graph.edges[&a.0].weight)).then(a.0.cmp(&b.0))
        });
        let entity_sections = within_budget(
            ranked_entities.iter().filter_map(|(k, sc)| entity_section(graph, k, *sc)).collect(),
            s.entity_tokens,
        );
        let relation_sections = within_budget(
            ranked_relations.iter().filter_map(|(k, sc)| relation_section(graph, k, *sc)).collect(),
            s.relation_tokens,
        );
        // Chunks cited by the kept entities and relations, each citation counting 1.
        let cited = entity_sections
            .iter()
            .filter_map(|e| graph.nodes.get(&e.id).map(|n| (&n.source_chunks, 1.0)))
            .chain(relation_sections.iter().filter_map(|r| {
                let (a, b) = r.id.split_once('|')?;
                graph.edges.get(&(a.to_string(), b.to_string())).map(|e| (&e.source_chunks, 1.0))
            }));
        let chunk_sections = within_budget(cited_chunks(&self.corpus, cited), s.chunk_tokens);
        entity_sections.into_iter().chain(relation_sections).chain(chunk_sections).collect()
    }
}

impl Method for LightRag {
    fn name(&self) -> &'static str {
        "lightrag"
    }

    fn retrieve<'a>(
        &'a self,
        gateway: &'a Gateway,
        ctx: &'a CallContext,
        meter: &'a mut Meter,
        question: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Section>, String>> {
        Box::pin(async move {
            let mut keywords = meter.chat_parsed(gateway, ctx, PROMPT, &request(question), parse_keywords).await?;
            // Keys, not spellings: "the Queen" and "Queen" match alike.
            keywords.low_level_keywords.retain(|k| !normalise_name(k).is_empty());
            Ok(self.context(&keywords))
        })
    }
}

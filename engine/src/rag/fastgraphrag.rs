//! The FastGraphRAG-style method: the entities the question names (listed
//! by the LLM with the same prompt as the entity diagnostic,
//! `engine/prompts/question_entities.txt`) are matched to graph nodes by
//! name similarity (character-trigram Jaccard of normalised names, at least
//! `match_threshold`); personalized PageRank ([`super::ppr`], damping
//! `damping`) from those seeds ranks every node; the top entities, the
//! relations among them (by the sum of their ends' rank) and the chunks
//! they cite (by the summed rank of the citing entities) form the context.
//! When no name matches, the `fallback_seeds` entities BM25 finds for the
//! whole question seed the walk instead.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::ppr::Adjacency;
use super::{
    cited_chunks, entity_section, relation_section, within_budget, Corpus, GraphIndex, Meter, Method, Section,
};
use crate::graph::mentions;
use crate::graph::normalise_name;
use crate::llm::{BoxFuture, CallContext, Gateway};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FastGraphRagSettings {
    pub damping: f64,
    pub match_threshold: f64,
    pub fallback_seeds: usize,
    pub top_entities: usize,
    pub top_relations: usize,
    pub top_chunks: usize,
    /// Token budget of the whole context.
    pub context_tokens: usize,
}

impl Default for FastGraphRagSettings {
    fn default() -> Self {
        FastGraphRagSettings {
            damping: 0.85,
            match_threshold: 0.5,
            fallback_seeds: 3,
            top_entities: 20,
            top_relations: 40,
            top_chunks: 8,
            context_tokens: 8000,
        }
    }
}

/// Character trigrams of a normalised name, padded so short names have some.
fn trigrams(name: &str) -> HashSet<String> {
    let padded: Vec<char> = format!("  {} ", normalise_name(name)).chars().collect();
    padded.windows(3).map(|w| w.iter().collect()).collect()
}

/// Jaccard similarity of two names' trigrams.
pub fn name_similarity(a: &str, b: &str) -> f64 {
    let (x, y) = (trigrams(a), trigrams(b));
    let union = x.union(&y).count();
    if union == 0 {
        return 0.0;
    }
    x.intersection(&y).count() as f64 / union as f64
}

pub struct FastGraphRag {
    corpus: Arc<Corpus>,
    adjacency: Adjacency,
    keys: Vec<String>,
    position: HashMap<String, usize>,
    index: GraphIndex,
    settings: FastGraphRagSettings,
}

impl FastGraphRag {
    pub fn new(corpus: Arc<Corpus>, settings: FastGraphRagSettings) -> Result<FastGraphRag, String> {
        if !(0.0..1.0).contains(&settings.damping) {
            return Err(format!("damping must be in [0, 1), not {}", settings.damping));
        }
        let (adjacency, keys) = Adjacency::of_graph(&corpus.graph);
        let position = keys.iter().enumerate().map(|(i, k)| (k.clone(), i)).collect();
        Ok(FastGraphRag { index: GraphIndex::new(&corpus.graph), corpus, adjacency, keys, position, settings })
    }

    /// Seed nodes for the named entities: `(key, similarity)` per match.
    pub fn seeds(&self, names: &[String], question: &str) -> Vec<(String, f64)> {
        let mut seeds: Vec<(String, f64)> = Vec::new();
        for name in names {
            let best = self
                .corpus
                .graph
                .nodes
                .values()
                .map(|n| (n.key.clone(), name_similarity(name, &n.name)))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
            if let Some((key, sim)) = best.filter(|b| b.1 >= self.settings.match_threshold) {
                if !seeds.iter().any(|s| s.0 == key) {
                    seeds.push((key, sim));
                }
            }
        }
        if seeds.is_empty() {
            seeds = self
                .index
                .entities(question, self.settings.fallback_seeds)
                .into_iter()
                .map(|(k, _)| (k, 1.0))
                .collect();
        }
        seeds
    }

    /// PPR mass per node key from `seeds` (personalization ∝ similarity).
    pub fn ranks(&self, seeds: &[(String, f64)]) -> Vec<f64> {
        let mut p = vec![0.0; self.keys.len()];
        for (key, weight) in seeds {
            if let Some(&i) = self.position.get(key) {
                p[i] += weight;
            }
        }
        if p.iter().all(|v| *v == 0.0) {
            return vec![0.0; self.keys.len()];
        }
        self.adjacency.pagerank(&p, self.settings.damping, 1e-10, 200)
    }

    /// The context for seeds (no LLM): see the module docs.
    pub fn context(&self, seeds: &[(String, f64)]) -> Vec<Section> {
        let graph = &self.corpus.graph;
        let s = &self.settings;
        let ranks = self.ranks(seeds);
        let mut order: Vec<usize> = (0..self.keys.len()).filter(|&i| ranks[i] > 0.0).collect();
        order.sort_by(|&a, &b| ranks[b].total_cmp(&ranks[a]).then(a.cmp(&b)));
        order.truncate(s.top_entities);
        let top: BTreeSet<&str> = order.iter().map(|&i| self.keys[i].as_str()).collect();
        let rank_of = |k: &str| self.position.get(k).map_or(0.0, |&i| ranks[i]);
        let mut relations: Vec<(&(String, String), f64)> = graph
            .edges
            .keys()
            .filter(|(a, b)| top.contains(a.as_str()) && top.contains(b.as_str()))
            .map(|k| (k, rank_of(&k.0) + rank_of(&k.1)))
            .collect();
        relations.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        relations.truncate(s.top_relations);
        let mut chunks = cited_chunks(
            &self.corpus,
            order.iter().filter_map(|&i| graph.nodes.get(&self.keys[i]).map(|n| (&n.source_chunks, ranks[i]))),
        );
        chunks.truncate(s.top_chunks);
        let sections: Vec<Section> = order
            .iter()
            .filter_map(|&i| entity_section(graph, &self.keys[i], ranks[i]))
            .chain(relations.iter().filter_map(|(k, sc)| relation_section(graph, k, *sc)))
            .chain(chunks)
            .collect();
        within_budget(sections, s.context_tokens)
    }
}

impl Method for FastGraphRag {
    fn name(&self) -> &'static str {
        "fastgraphrag"
    }

    fn retrieve<'a>(
        &'a self,
        gateway: &'a Gateway,
        ctx: &'a CallContext,
        meter: &'a mut Meter,
        question: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Section>, String>> {
        Box::pin(async move {
            let reply = meter.chat(gateway, ctx, mentions::PROMPT, &mentions::request(question)).await?;
            let names = mentions::parse_entities(&reply)?;
            Ok(self.context(&self.seeds(&names, question)))
        })
    }
}

//! The knowledge graph (seed 000, §III-A "Knowledge graph construction").
//!
//! Extraction runs per chunk and yields an [`Extraction`]: entities (name,
//! type, description) and relations (source, target, description, keywords,
//! strength). [`KnowledgeGraph::merge`] folds extractions together: the same
//! entity from different chunks becomes one node (names normalised for case,
//! whitespace, punctuation, possessives and a leading article), descriptions
//! are combined, relations between the same pair merge with strengths added,
//! and every node and edge keeps the ids of the chunks it came from
//! (provenance), so any entity leads back to its source text.
//!
//! # Layout
//! - [`offline`]: the offline provider's extractor (classical NLP).
//! - [`parse`]: reading LLM extraction replies (JSON or LightRAG tuples).

pub mod describe;
pub mod export;
pub mod extract;
pub mod foreign;
pub mod layout;
pub mod mentions;
pub mod offline;
pub mod parse;
pub mod stats;
pub mod summarise;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::unionfind::UnionFind;
use serde::{Deserialize, Serialize};

/// A chunk's job item (its extraction, its one-sentence summary): the
/// chunk's text. The key is `chunk-ID`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkItem {
    pub text: String,
}

/// The entity types Assay asks for by default.
pub const DEFAULT_ENTITY_TYPES: &[&str] = &types::defaults::ENTITY_TYPES;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Relation {
    pub source: String,
    pub target: String,
    pub description: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    pub strength: f64,
}

/// What one chunk yielded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    pub entities: Vec<Entity>,
    pub relations: Vec<Relation>,
}

/// The key two mentions of one entity share: lower case, `'s` and
/// punctuation dropped, a leading article removed, whitespace collapsed.
/// "The Queen's", "the  QUEEN" and "Queen." all become `queen`.
pub fn normalise_name(name: &str) -> String {
    let lowered = name.to_lowercase().replace(['’', '‘'], "'");
    let words: Vec<String> = lowered
        .split_whitespace()
        .map(|w| {
            let w = w.strip_suffix("'s").unwrap_or(w);
            w.chars().filter(|c| c.is_alphanumeric() || *c == '-').collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let start = usize::from(words.len() > 1 && matches!(words[0].as_str(), "the" | "a" | "an"));
    words[start..].join(" ")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The normalised name: the node's identity.
    pub key: String,
    /// The most frequent surface form.
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// Distinct descriptions in the order they arrived.
    pub descriptions: Vec<String>,
    pub source_chunks: BTreeSet<i64>,
    /// Mentions per surface form, to choose `name` and `kind`.
    #[serde(skip)]
    forms: HashMap<String, usize>,
    #[serde(skip)]
    kinds: HashMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Node keys, ordered (`source < target`): relations are undirected here.
    pub source: String,
    pub target: String,
    pub descriptions: Vec<String>,
    pub keywords: BTreeSet<String>,
    /// Strengths added over every merged relation.
    pub weight: f64,
    pub source_chunks: BTreeSet<i64>,
}

/// The merged graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeGraph {
    pub nodes: BTreeMap<String, Node>,
    pub edges: BTreeMap<(String, String), Edge>,
}

impl Node {
    /// A node read back from storage.
    pub fn restored(
        key: String,
        name: String,
        kind: String,
        descriptions: Vec<String>,
        source_chunks: BTreeSet<i64>,
    ) -> Node {
        Node { key, name, kind, descriptions, source_chunks, forms: HashMap::new(), kinds: HashMap::new() }
    }
}

impl KnowledgeGraph {
    /// Folds one chunk's extraction into the graph. Relations whose ends are
    /// not among the entities create those entities (type `concept`).
    pub fn merge(&mut self, chunk_id: i64, extraction: &Extraction) {
        for e in &extraction.entities {
            self.add_entity(chunk_id, &e.name, &e.kind, &e.description);
        }
        for r in &extraction.relations {
            let (a, b) = (normalise_name(&r.source), normalise_name(&r.target));
            if a.is_empty() || b.is_empty() || a == b {
                continue;
            }
            for (key, name) in [(&a, &r.source), (&b, &r.target)] {
                if !self.nodes.contains_key(key) {
                    self.add_entity(chunk_id, name, "concept", "");
                }
            }
            let edge = self.edge_between(&a, &b);
            push_distinct(&mut edge.descriptions, &r.description);
            edge.keywords.extend(r.keywords.iter().map(|k| k.trim().to_lowercase()).filter(|k| !k.is_empty()));
            edge.weight += if r.strength.is_finite() && r.strength > 0.0 { r.strength } else { 1.0 };
            edge.source_chunks.insert(chunk_id);
        }
    }

    /// Folds node `from` into node `into`: its chunks, descriptions and
    /// type votes (not its names: `into` keeps its own), and its relations,
    /// which join `into`'s (a relation between the two is dropped).
    pub fn absorb(&mut self, from: &str, into: &str) {
        self.absorb_all(&[(from.to_string(), into.to_string())]);
    }

    /// Folds each `(from, into)` in turn, exactly as [`absorb`](Self::absorb)
    /// one after another would (the same nodes, edges and description
    /// order), each fold in the time of its node's relations rather than of
    /// the whole graph's: the relations touching each node are indexed once.
    pub fn absorb_all(&mut self, folds: &[(String, String)]) {
        if folds.is_empty() {
            return;
        }
        // Only the nodes folded away need their relations listed.
        let folded: HashSet<String> = folds.iter().map(|(from, _)| from.clone()).collect();
        let mut touching: HashMap<String, BTreeSet<(String, String)>> = HashMap::new();
        for pair in self.edges.keys() {
            for end in [&pair.0, &pair.1] {
                if folded.contains(end) {
                    touching.entry(end.clone()).or_default().insert(pair.clone());
                }
            }
        }
        for (from, into) in folds {
            if from == into || !self.nodes.contains_key(into) {
                continue;
            }
            let Some(gone) = self.nodes.remove(from) else { continue };
            let node = self.nodes.get_mut(into).expect("checked above");
            node.source_chunks.extend(gone.source_chunks);
            for d in &gone.descriptions {
                push_distinct(&mut node.descriptions, d);
            }
            for (kind, n) in gone.kinds {
                *node.kinds.entry(kind).or_default() += n;
            }
            node.kind = most_common(&node.kinds);
            // In key order, as a scan of all the edges would find them.
            for pair in touching.remove(from).unwrap_or_default() {
                let old = self.edges.remove(&pair).expect("indexed from the edges");
                let other = if pair.0 == *from { &pair.1 } else { &pair.0 };
                if let Some(theirs) = touching.get_mut(other) {
                    theirs.remove(&pair);
                }
                if other == into {
                    continue;
                }
                let edge = self.edge_between(into, other);
                for d in &old.descriptions {
                    push_distinct(&mut edge.descriptions, d);
                }
                edge.keywords.extend(old.keywords);
                edge.weight += old.weight;
                edge.source_chunks.extend(old.source_chunks);
                let key = (edge.source.clone(), edge.target.clone());
                for end in [into, other] {
                    if folded.contains(end) {
                        touching.entry(end.clone()).or_default().insert(key.clone());
                    }
                }
            }
        }
    }

    /// Each node's type chosen among its votes other than `fallback` when it
    /// has any: for an extractor whose `fallback` type means "no cue" (the
    /// offline one's `concept`), one chunk that says "person" outweighs
    /// many that said nothing.
    pub fn settle_kinds(&mut self, fallback: &str) {
        for node in self.nodes.values_mut() {
            let cued: HashMap<String, usize> =
                node.kinds.iter().filter(|(k, _)| k.as_str() != fallback).map(|(k, n)| (k.clone(), *n)).collect();
            if !cued.is_empty() {
                node.kind = most_common(&cued);
            }
        }
    }

    /// The edge between two node keys (either order), created empty if new.
    pub fn edge_between(&mut self, a: &str, b: &str) -> &mut Edge {
        let pair = if a < b { (a.to_string(), b.to_string()) } else { (b.to_string(), a.to_string()) };
        self.edges.entry(pair.clone()).or_insert_with(|| Edge {
            source: pair.0,
            target: pair.1,
            descriptions: Vec::new(),
            keywords: BTreeSet::new(),
            weight: 0.0,
            source_chunks: BTreeSet::new(),
        })
    }

    fn add_entity(&mut self, chunk_id: i64, name: &str, kind: &str, description: &str) {
        let key = normalise_name(name);
        if key.is_empty() {
            return;
        }
        let node = self.nodes.entry(key.clone()).or_insert_with(|| Node {
            key,
            name: name.trim().to_string(),
            kind: String::new(),
            descriptions: Vec::new(),
            source_chunks: BTreeSet::new(),
            forms: HashMap::new(),
            kinds: HashMap::new(),
        });
        *node.forms.entry(name.trim().to_string()).or_default() += 1;
        *node.kinds.entry(kind.trim().to_lowercase()).or_default() += 1;
        node.name = most_common(&node.forms);
        node.kind = most_common(&node.kinds);
        push_distinct(&mut node.descriptions, description);
        node.source_chunks.insert(chunk_id);
    }

    /// Every node's count of distinct neighbours, in one walk of the edges
    /// (nodes without edges are absent: degree 0).
    pub fn degrees(&self) -> HashMap<&str, usize> {
        let mut out: HashMap<&str, usize> = HashMap::with_capacity(self.nodes.len());
        for (a, b) in self.edges.keys() {
            *out.entry(a.as_str()).or_default() += 1;
            *out.entry(b.as_str()).or_default() += 1;
        }
        out
    }

    /// The graph in petgraph's form for its algorithms: node `i` is the
    /// `i`-th key of `self.nodes` (key order), edge weights are strengths.
    pub fn petgraph(&self) -> UnGraph<String, f64> {
        let index: HashMap<&str, NodeIndex> =
            self.nodes.keys().enumerate().map(|(i, k)| (k.as_str(), NodeIndex::new(i))).collect();
        let mut g = UnGraph::with_capacity(self.nodes.len(), self.edges.len());
        for k in self.nodes.keys() {
            g.add_node(k.clone());
        }
        for ((a, b), edge) in &self.edges {
            if let (Some(&i), Some(&j)) = (index.get(a.as_str()), index.get(b.as_str())) {
                g.add_edge(i, j, edge.weight);
            }
        }
        g
    }

    /// Node keys by degree, highest first (ties by name).
    pub fn by_degree(&self) -> Vec<(String, usize)> {
        let degrees = self.degrees();
        let mut ranked: Vec<(String, usize)> =
            self.nodes.keys().map(|k| (k.clone(), degrees.get(k.as_str()).copied().unwrap_or(0))).collect();
        ranked.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        ranked
    }

    /// How many nodes have each degree: `histogram[d]` nodes of degree `d`.
    pub fn degree_histogram(&self) -> Vec<usize> {
        let degrees = self.degrees();
        histogram(self.nodes.keys().map(|k| degrees.get(k.as_str()).copied().unwrap_or(0)))
    }

    /// Connected components, largest first, each as sorted node keys.
    pub fn components(&self) -> Vec<Vec<String>> {
        let g = self.petgraph();
        let labels = component_labels(g.node_count(), &index_pairs(&g));
        let mut groups: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for i in g.node_indices() {
            groups.entry(labels[i.index()]).or_default().push(g[i].clone());
        }
        let mut out: Vec<Vec<String>> = groups.into_values().collect();
        out.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        out
    }

    /// Explorer positions (see [`layout`]), seeded.
    pub fn positions(&self, seed: u64) -> BTreeMap<String, [f32; 2]> {
        let g = self.petgraph();
        let edges = index_pairs(&g);
        let pos = layout::layout(g.node_count(), &edges, layout::default_iterations(g.node_count()), seed);
        g.node_indices().map(|i| (g[i].clone(), pos[i.index()])).collect()
    }
}

impl KnowledgeGraph {
    /// Communities by the Leiden algorithm (modularity, edge weights,
    /// seeded so a graph always gets the same partition): node key →
    /// community number, numbered by size (0 is the largest). Nodes without
    /// edges are communities of their own.
    pub fn communities(&self, seed: u64) -> BTreeMap<String, usize> {
        let keys: Vec<&String> = self.nodes.keys().collect();
        let index: HashMap<&str, usize> = keys.iter().enumerate().map(|(i, k)| (k.as_str(), i)).collect();
        let mut builder = leiden_rs::GraphDataBuilder::new(keys.len());
        for ((a, b), edge) in &self.edges {
            if let (Some(&i), Some(&j)) = (index.get(a.as_str()), index.get(b.as_str())) {
                let _ = builder.add_edge(i, j, edge.weight.max(f64::MIN_POSITIVE));
            }
        }
        let raw: Vec<usize> = match builder.build().and_then(|g| {
            leiden_rs::Leiden::new(leiden_rs::LeidenConfig { seed: Some(seed), ..Default::default() }).run(&g)
        }) {
            Ok(out) => (0..keys.len()).map(|i| out.partition.community_of(i)).collect(),
            // An edgeless graph: every node alone.
            Err(_) => (0..keys.len()).collect(),
        };
        // Renumber by size, largest first; ties by the smallest member key.
        let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, c) in raw.iter().enumerate() {
            members.entry(*c).or_default().push(i);
        }
        let mut groups: Vec<Vec<usize>> = members.into_values().collect();
        groups.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| keys[a[0]].cmp(keys[b[0]])));
        let mut out = BTreeMap::new();
        for (n, group) in groups.iter().enumerate() {
            for &i in group {
                out.insert(keys[i].clone(), n);
            }
        }
        out
    }
}

/// The endpoints of every edge of `g` as node indices.
pub fn index_pairs(g: &UnGraph<String, f64>) -> Vec<(usize, usize)> {
    g.edge_indices().filter_map(|e| g.edge_endpoints(e)).map(|(a, b)| (a.index(), b.index())).collect()
}

/// Connected components of nodes `0..n` joined by `edges` (petgraph's
/// union–find): two nodes get the same label iff they are connected.
/// Pairs naming a node out of range are ignored.
pub fn component_labels(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut sets = UnionFind::new(n);
    for &(a, b) in edges.iter().filter(|(a, b)| *a < n && *b < n) {
        sets.union(a, b);
    }
    sets.into_labeling()
}

/// `out[v]` = how many of `values` equal `v`.
pub fn histogram(values: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let mut out = Vec::new();
    for v in values {
        if out.len() <= v {
            out.resize(v + 1, 0);
        }
        out[v] += 1;
    }
    out
}

fn push_distinct(list: &mut Vec<String>, text: &str) {
    let text = text.trim();
    if !text.is_empty() && !list.iter().any(|d| d == text) {
        list.push(text.to_string());
    }
}

/// The most frequent key; ties go to the lexicographically smallest, so the
/// result does not depend on arrival order.
fn most_common(counts: &HashMap<String, usize>) -> String {
    counts.iter().max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0))).map(|(k, _)| k.clone()).unwrap_or_default()
}

/// Registers the graph stage's offline tasks: chunk summaries, extraction
/// (and its gleaning turn), entity descriptions and question mentions.
pub fn register_offline(p: &mut crate::llm::offline::OfflineProvider) {
    p.register(summarise::PURPOSE, summarise::offline);
    p.register(extract::PURPOSE, extract::offline);
    p.register(extract::GLEAN_PURPOSE, extract::offline_glean);
    p.register(describe::PURPOSE, describe::offline);
    p.register(mentions::PURPOSE, mentions::offline);
}

crate::job_items!(ChunkItem => extract::ChunkExtraction);

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(name: &str, kind: &str, description: &str) -> Entity {
        Entity { name: name.into(), kind: kind.into(), description: description.into() }
    }

    fn relation(source: &str, target: &str, description: &str, strength: f64) -> Relation {
        Relation {
            source: source.into(),
            target: target.into(),
            description: description.into(),
            keywords: vec!["trade".into()],
            strength,
        }
    }

    #[test]
    fn names_normalise_for_case_space_punctuation_possessives_and_articles() {
        for (raw, key) in [
            ("The Queen's", "queen"),
            ("the  QUEEN", "queen"),
            ("Queen.", "queen"),
            ("Queen of Hearts", "queen of hearts"),
            ("Hollin Cross’s", "hollin cross"),
            ("Mock-Turtle", "mock-turtle"),
            ("The", "the"),
            ("  ", ""),
        ] {
            assert_eq!(normalise_name(raw), key, "{raw}");
        }
    }

    #[test]
    fn merging_joins_entities_and_relations_across_chunks_with_provenance() {
        let mut g = KnowledgeGraph::default();
        g.merge(
            1,
            &Extraction {
                entities: vec![
                    entity("Salt Guild", "organization", "Fixes salt prices."),
                    entity("Isobel Pell", "person", "First warden."),
                ],
                relations: vec![relation(
                    "Isobel Pell",
                    "Salt Guild",
                    "Isobel Pell was the guild's first warden.",
                    2.0,
                )],
            },
        );
        g.merge(
            7,
            &Extraction {
                entities: vec![
                    entity("the Salt Guild", "organization", "Meets at the Anchor Inn."),
                    entity("Hollin Cross", "location", ""),
                ],
                relations: vec![
                    relation("salt guild", "ISOBEL PELL", "She founded it.", 1.5),
                    relation("Salt Guild", "Hollin Cross", "The guild quarrelled with Hollin Cross.", 1.0),
                ],
            },
        );
        assert_eq!(g.nodes.len(), 3);
        let guild = &g.nodes["salt guild"];
        assert_eq!(guild.name, "Salt Guild");
        assert_eq!(guild.kind, "organization");
        assert_eq!(guild.descriptions, ["Fixes salt prices.", "Meets at the Anchor Inn."]);
        assert_eq!(guild.source_chunks.iter().copied().collect::<Vec<_>>(), [1, 7]);
        let edge = &g.edges[&("isobel pell".to_string(), "salt guild".to_string())];
        assert_eq!(edge.weight, 3.5, "strengths add");
        assert_eq!(edge.descriptions.len(), 2);
        assert_eq!(edge.source_chunks.iter().copied().collect::<Vec<_>>(), [1, 7]);
        let degrees = g.degrees();
        assert_eq!(degrees["salt guild"], 2);
        assert_eq!((degrees["isobel pell"], degrees["hollin cross"]), (1, 1));
        // Every node's degree is its count of distinct neighbours in petgraph's form.
        let pg = g.petgraph();
        for i in pg.node_indices() {
            assert_eq!(degrees.get(pg[i].as_str()).copied().unwrap_or(0), pg.neighbors(i).count(), "{}", pg[i]);
        }
        assert_eq!(g.by_degree()[0], ("salt guild".to_string(), 2));
        assert_eq!(g.degree_histogram(), [0, 2, 1], "two nodes of degree 1, one of degree 2");
        assert_eq!(g.components(), vec![vec!["hollin cross".to_string(), "isobel pell".into(), "salt guild".into()]]);
        g.merge(9, &Extraction { entities: vec![entity("Gull Point", "location", "")], relations: vec![] });
        assert_eq!(g.components().iter().map(Vec::len).collect::<Vec<_>>(), [3, 1]);
    }

    #[test]
    fn communities_split_two_cliques_joined_by_a_bridge_the_same_way_every_time() {
        let mut g = KnowledgeGraph::default();
        let mut relations = Vec::new();
        for group in [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]] {
            for (i, x) in group.iter().enumerate() {
                for y in &group[i + 1..] {
                    relations.push(relation(x, y, "close", 5.0));
                }
            }
        }
        relations.push(relation("a1", "b1", "bridge", 1.0));
        g.merge(1, &Extraction { entities: vec![entity("Loner", "concept", "")], relations });
        let c = g.communities(42);
        assert_eq!(c.len(), 9);
        assert!(["a2", "a3", "a4"].iter().all(|k| c[*k] == c["a1"]));
        assert!(["b2", "b3", "b4"].iter().all(|k| c[*k] == c["b1"]));
        assert_ne!(c["a1"], c["b1"]);
        assert_eq!(c["loner"], 2, "an isolated node is its own, smallest community");
        assert_eq!(g.communities(42), c, "seeded: the same partition every time");
    }

    #[test]
    fn relations_to_unknown_entities_create_them_and_self_loops_are_dropped() {
        let mut g = KnowledgeGraph::default();
        g.merge(
            3,
            &Extraction {
                entities: vec![],
                relations: vec![relation("A", "B", "x", 0.0), relation("A", "a", "self", 1.0)],
            },
        );
        assert_eq!(g.nodes.len(), 2);
        assert_eq!(g.nodes["a"].kind, "concept");
        assert_eq!(g.edges.len(), 1);
        assert_eq!(g.edges.values().next().unwrap().weight, 1.0, "a missing strength counts 1");
    }
}

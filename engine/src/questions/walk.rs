//! Subgraph sampling for subgraph-level questions (seed 000 §III-A): pick a
//! seed node, random-walk from it, and accept the walk once it has covered
//! at least `min_hops` distinct edges ("50 non-repeating hops in default");
//! a walk that does not get there within its step budget is discarded and
//! a new seed drawn. When no connected component has `min_hops` edges, no
//! walk can ever succeed: that is reported at once instead of retrying.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::graph::KnowledgeGraph;

/// The seed paper's default threshold.
pub const DEFAULT_MIN_HOPS: usize = types::defaults::MIN_HOPS;

/// A graph as adjacency lists over node indices (key order), for sampling.
pub struct Adjacency {
    pub keys: Vec<String>,
    pub neighbours: Vec<Vec<usize>>,
    /// Edges in each node's connected component.
    component_edges: Vec<usize>,
}

impl Adjacency {
    pub fn new(graph: &KnowledgeGraph) -> Adjacency {
        let g = graph.petgraph();
        let edges = crate::graph::index_pairs(&g);
        let keys: Vec<String> = g.node_indices().map(|i| g[i].clone()).collect();
        let mut neighbours = vec![Vec::new(); keys.len()];
        for &(i, j) in &edges {
            neighbours[i].push(j);
            neighbours[j].push(i);
        }
        let labels = crate::graph::component_labels(keys.len(), &edges);
        let mut per_label: HashMap<usize, usize> = HashMap::new();
        for &(i, _) in &edges {
            *per_label.entry(labels[i]).or_default() += 1;
        }
        let component_edges = labels.iter().map(|l| per_label.get(l).copied().unwrap_or(0)).collect();
        Adjacency { keys, neighbours, component_edges }
    }

    /// Edges of the largest component (by edges).
    pub fn largest_component_edges(&self) -> usize {
        self.component_edges.iter().copied().max().unwrap_or(0)
    }
}

/// An accepted walk: the nodes in visiting order (with repeats) and the
/// distinct edges it crossed, as ordered key pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Walk {
    pub path: Vec<String>,
    pub edges: BTreeSet<(String, String)>,
    /// Seeds drawn before this walk was accepted (1 = the first one).
    pub attempts: usize,
}

impl Walk {
    /// The distinct nodes of the walk, sorted.
    pub fn nodes(&self) -> BTreeSet<&str> {
        self.path.iter().map(String::as_str).collect()
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WalkError {
    #[error(
        "no connected component of the graph has {min_hops} edges (the largest has {largest}): a subgraph of {min_hops} distinct hops cannot be sampled; lower the minimum hops or build a denser graph"
    )]
    TooSmall { min_hops: usize, largest: usize },
    #[error("no walk reached {min_hops} distinct hops in {attempts} attempts")]
    GaveUp { min_hops: usize, attempts: usize },
}

/// Steps a walk may take per hop it needs before it is discarded.
const STEPS_PER_HOP: usize = 40;
/// Seeds tried before giving up (only reachable when qualifying components are tiny targets).
const MAX_ATTEMPTS: usize = 1_000;

/// One accepted walk of at least `min_hops` distinct edges, drawn with `rng`.
pub fn sample_walk(adj: &Adjacency, min_hops: usize, rng: &mut fastrand::Rng) -> Result<Walk, WalkError> {
    let largest = adj.largest_component_edges();
    if min_hops == 0 || adj.keys.is_empty() || largest < min_hops {
        return Err(WalkError::TooSmall { min_hops, largest });
    }
    for attempt in 1..=MAX_ATTEMPTS {
        let mut at = rng.usize(..adj.keys.len());
        // A seed in a component too small is a failed draw: resample.
        if adj.component_edges[at] < min_hops {
            continue;
        }
        let mut path = vec![at];
        let mut edges: BTreeSet<(usize, usize)> = BTreeSet::new();
        for _ in 0..min_hops * STEPS_PER_HOP {
            let next = adj.neighbours[at][rng.usize(..adj.neighbours[at].len())];
            edges.insert((at.min(next), at.max(next)));
            path.push(next);
            at = next;
            if edges.len() >= min_hops {
                let key = |i: usize| adj.keys[i].clone();
                return Ok(Walk {
                    path: path.into_iter().map(key).collect(),
                    edges: edges.into_iter().map(|(a, b)| (key(a), key(b))).collect(),
                    attempts: attempt,
                });
            }
        }
    }
    Err(WalkError::GaveUp { min_hops, attempts: MAX_ATTEMPTS })
}

/// `count` walks from one seed: the same seed gives the same walks.
pub fn sample_walks(graph: &KnowledgeGraph, count: usize, min_hops: usize, seed: u64) -> Result<Vec<Walk>, WalkError> {
    let adj = Adjacency::new(graph);
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count).map(|_| sample_walk(&adj, min_hops, &mut rng)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Extraction, Relation};

    fn graph(edges: &[(String, String)]) -> KnowledgeGraph {
        let mut g = KnowledgeGraph::default();
        let relations = edges
            .iter()
            .map(|(a, b)| Relation {
                source: a.clone(),
                target: b.clone(),
                description: String::new(),
                keywords: vec![],
                strength: 1.0,
            })
            .collect();
        g.merge(1, &Extraction { entities: vec![], relations });
        g
    }

    /// A ring of `n` nodes with chords, plus a separate triangle.
    fn ring_and_triangle(n: usize) -> KnowledgeGraph {
        let mut edges: Vec<(String, String)> = (0..n).map(|i| (format!("r{i}"), format!("r{}", (i + 1) % n))).collect();
        edges.extend((0..n).step_by(3).map(|i| (format!("r{i}"), format!("r{}", (i + n / 2) % n))));
        edges.extend([("t1", "t2"), ("t2", "t3"), ("t1", "t3")].map(|(a, b)| (a.to_string(), b.to_string())));
        graph(&edges)
    }

    #[test]
    fn every_accepted_walk_has_the_minimum_distinct_hops_and_follows_edges() {
        let g = ring_and_triangle(80);
        let walks = sample_walks(&g, 20, 50, 7).unwrap();
        assert_eq!(walks.len(), 20);
        for w in &walks {
            assert!(w.edges.len() >= 50, "{} hops", w.edges.len());
            for pair in w.path.windows(2) {
                let key = if pair[0] < pair[1] {
                    (pair[0].clone(), pair[1].clone())
                } else {
                    (pair[1].clone(), pair[0].clone())
                };
                assert!(g.edges.contains_key(&key), "the walk steps along edges");
            }
            assert!(w.nodes().iter().all(|k| k.starts_with('r')), "never in the 3-edge triangle");
        }
    }

    #[test]
    fn seeds_in_components_too_small_are_resampled() {
        // A 60-edge ring among 200 separate pairs: most seeds land in a pair.
        let mut edges: Vec<(String, String)> =
            (0..60).map(|i| (format!("r{i}"), format!("r{}", (i + 1) % 60))).collect();
        edges.extend((0..200).map(|i| (format!("p{i}a"), format!("p{i}b"))));
        let walks = sample_walks(&graph(&edges), 10, 50, 3).unwrap();
        assert!(walks.iter().all(|w| w.nodes().iter().all(|k| k.starts_with('r'))));
        assert!(walks.iter().map(|w| w.attempts).sum::<usize>() > 10, "some seeds were drawn again");
    }

    #[test]
    fn the_same_seed_gives_the_same_walks_and_another_seed_others() {
        let g = ring_and_triangle(80);
        assert_eq!(sample_walks(&g, 5, 50, 42).unwrap(), sample_walks(&g, 5, 50, 42).unwrap());
        assert_ne!(sample_walks(&g, 5, 50, 42).unwrap(), sample_walks(&g, 5, 50, 43).unwrap());
    }

    #[test]
    fn a_graph_without_a_large_enough_component_is_a_clear_error_not_a_hang() {
        let g = ring_and_triangle(20); // the ring has 20 + 7 = 27 edges
        let err = sample_walks(&g, 1, 50, 1).unwrap_err();
        assert_eq!(err, WalkError::TooSmall { min_hops: 50, largest: 27 });
        assert!(err.to_string().starts_with("no connected component of the graph has 50 edges (the largest has 27)"));
        assert!(sample_walks(&KnowledgeGraph::default(), 1, 50, 1).is_err());
        assert_eq!(sample_walks(&g, 3, 27, 1).unwrap().len(), 3, "exactly the component's edge count is reachable");
    }
}

//! Personalized PageRank over adjacency arrays (FastGraphRAG's retrieval):
//! the same definition as networkx's `pagerank(G, alpha, personalization,
//! weight="weight")` on an undirected weighted graph — each edge is walked
//! both ways with probability proportional to its weight, the walk restarts
//! at the personalization distribution with probability `1 − alpha`, and a
//! node without edges hands its mass to the personalization distribution.
//! Power iteration until the L1 change is below `tol`.

use std::collections::HashMap;

use crate::graph::KnowledgeGraph;

/// A graph as compressed adjacency arrays (both directions of each edge).
#[derive(Debug, Clone)]
pub struct Adjacency {
    offsets: Vec<usize>,
    targets: Vec<usize>,
    weights: Vec<f64>,
    /// Sum of the weights of each node's edges.
    strength: Vec<f64>,
}

impl Adjacency {
    /// From `n` nodes and weighted undirected edges `(a, b, w)`.
    pub fn new(n: usize, edges: &[(usize, usize, f64)]) -> Adjacency {
        let mut lists: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for &(a, b, w) in edges {
            lists[a].push((b, w));
            if a != b {
                lists[b].push((a, w));
            }
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let (mut targets, mut weights) = (Vec::new(), Vec::new());
        offsets.push(0);
        for list in &lists {
            for &(t, w) in list {
                targets.push(t);
                weights.push(w);
            }
            offsets.push(targets.len());
        }
        let strength = lists.iter().map(|l| l.iter().map(|e| e.1).sum()).collect();
        Adjacency { offsets, targets, weights, strength }
    }

    /// A knowledge graph's adjacency; node `i` is the `i`-th key in order.
    pub fn of_graph(graph: &KnowledgeGraph) -> (Adjacency, Vec<String>) {
        let keys: Vec<String> = graph.nodes.keys().cloned().collect();
        let index: HashMap<&str, usize> = keys.iter().enumerate().map(|(i, k)| (k.as_str(), i)).collect();
        let edges: Vec<(usize, usize, f64)> = graph
            .edges
            .iter()
            .filter_map(|((a, b), e)| Some((*index.get(a.as_str())?, *index.get(b.as_str())?, e.weight.max(1e-9))))
            .collect();
        (Adjacency::new(keys.len(), &edges), keys)
    }

    pub fn len(&self) -> usize {
        self.strength.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strength.is_empty()
    }

    /// Personalized PageRank from `personalization` (non-negative, any
    /// scale; all zero means uniform). Returns a distribution summing to 1.
    pub fn pagerank(&self, personalization: &[f64], alpha: f64, tol: f64, max_iter: usize) -> Vec<f64> {
        let n = self.len();
        if n == 0 {
            return Vec::new();
        }
        let total: f64 = personalization.iter().sum();
        let p: Vec<f64> =
            if total > 0.0 { personalization.iter().map(|v| v / total).collect() } else { vec![1.0 / n as f64; n] };
        let mut x = p.clone();
        let mut next = vec![0.0; n];
        for _ in 0..max_iter {
            let dangling: f64 = (0..n).filter(|&i| self.strength[i] == 0.0).map(|i| x[i]).sum();
            for (i, v) in next.iter_mut().enumerate() {
                *v = (alpha * dangling + (1.0 - alpha)) * p[i];
            }
            for u in 0..n {
                if self.strength[u] == 0.0 {
                    continue;
                }
                let share = alpha * x[u] / self.strength[u];
                for e in self.offsets[u]..self.offsets[u + 1] {
                    next[self.targets[e]] += share * self.weights[e];
                }
            }
            let change: f64 = x.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            std::mem::swap(&mut x, &mut next);
            if change < tol {
                break;
            }
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: networkx 3.6.1 `nx.pagerank(G, alpha=0.85,
    /// personalization={0: 1, 3: 2}, weight="weight", tol=1e-12,
    /// max_iter=1000)` on this graph (node 6 has no edges).
    #[test]
    fn matches_networkx_personalized_pagerank() {
        let edges = [(0, 1, 1.0), (1, 2, 2.0), (2, 0, 1.0), (2, 3, 0.5), (3, 4, 3.0), (4, 5, 1.0), (5, 3, 1.0)];
        let adj = Adjacency::new(7, &edges);
        let got = adj.pagerank(&[1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0], 0.85, 1e-14, 1000);
        let expected = REFERENCE;
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            assert!((g - e).abs() < 1e-6, "node {i}: {g} vs {e}");
        }
        assert!((got.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        // Restarting at the edgeless node 6 too: its mass returns to the
        // personalization distribution.
        let got = adj.pagerank(&[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0], 0.85, 1e-14, 1000);
        let expected = [
            0.14997886576,
            0.315404382176,
            0.249588256278,
            0.075367995152,
            0.053599621577,
            0.025626096448,
            0.130434782609,
        ];
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            assert!((g - e).abs() < 1e-6, "node {i}: {g} vs {e}");
        }
    }

    const REFERENCE: [f64; 7] =
        [0.12183760241, 0.12475926756, 0.150249413454, 0.294051326237, 0.209121123341, 0.099981266999, 0.0];
}

//! A stored graph's statistics, from its rows alone: what the Graph page
//! shows (components, communities, degrees, types, the best-connected
//! nodes) and the explorer's ranking by degree.

use std::collections::{HashMap, HashSet};

/// A node as stored: its id, name, type and community.
#[derive(Debug, Clone, Copy)]
pub struct NodeRow<'a> {
    pub id: i64,
    pub name: &'a str,
    pub kind: &'a str,
    pub community: i64,
}

/// The statistics of a graph of `nodes` joined by `edges` (pairs of ids).
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    pub nodes: usize,
    pub edges: usize,
    pub components: usize,
    pub largest_component: usize,
    pub communities: usize,
    /// `(degree, nodes of that degree)`, degrees with none left out.
    pub degree_histogram: Vec<(usize, usize)>,
    /// `(type, nodes)`, the most common first, then by name.
    pub types: Vec<(String, usize)>,
    /// Indices into `nodes` of the `top` best-connected: by degree, then name.
    pub top: Vec<usize>,
}

/// Each node's degree (edges at it, both ends counted); nodes without
/// edges are absent.
pub fn degrees(edges: &[(i64, i64)]) -> HashMap<i64, usize> {
    let mut degree: HashMap<i64, usize> = HashMap::new();
    for (s, t) in edges {
        *degree.entry(*s).or_default() += 1;
        *degree.entry(*t).or_default() += 1;
    }
    degree
}

/// The statistics of `nodes` and `edges`, with the `top` best-connected
/// nodes named; edges naming an unknown node join no component.
pub fn statistics(nodes: &[NodeRow<'_>], edges: &[(i64, i64)], degree: &HashMap<i64, usize>, top: usize) -> Statistics {
    let index: HashMap<i64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let pairs: Vec<(usize, usize)> = edges.iter().filter_map(|(s, t)| Some((*index.get(s)?, *index.get(t)?))).collect();
    let mut component_sizes: HashMap<usize, usize> = HashMap::new();
    for label in super::component_labels(nodes.len(), &pairs) {
        *component_sizes.entry(label).or_default() += 1;
    }
    let of = |id: i64| degree.get(&id).copied().unwrap_or(0);
    let histogram = super::histogram(nodes.iter().map(|n| of(n.id)));
    let communities: HashSet<i64> = nodes.iter().map(|n| n.community).collect();
    let mut ranked: Vec<usize> = (0..nodes.len()).collect();
    ranked.sort_by(|&a, &b| of(nodes[b].id).cmp(&of(nodes[a].id)).then_with(|| nodes[a].name.cmp(nodes[b].name)));
    ranked.truncate(top);
    let mut types: HashMap<&str, usize> = HashMap::new();
    for n in nodes {
        *types.entry(n.kind).or_default() += 1;
    }
    let mut types: Vec<(String, usize)> = types.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
    types.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Statistics {
        nodes: nodes.len(),
        edges: edges.len(),
        components: component_sizes.len(),
        largest_component: component_sizes.values().copied().max().unwrap_or(0),
        communities: communities.len(),
        degree_histogram: histogram.into_iter().enumerate().filter(|(_, n)| *n > 0).collect(),
        types,
        top: ranked,
    }
}

/// The ids of the `limit` best-connected nodes: by degree, then id.
pub fn by_degree(ids: impl IntoIterator<Item = i64>, degree: &HashMap<i64, usize>, limit: usize) -> Vec<i64> {
    let of = |id: &i64| degree.get(id).copied().unwrap_or(0);
    let mut ranked: Vec<i64> = ids.into_iter().collect();
    ranked.sort_by(|a, b| of(b).cmp(&of(a)).then(a.cmp(b)));
    ranked.truncate(limit);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_graph_counted_by_hand() {
        // 1–2–3 a path, 4 alone, 5–6 a pair; an edge to a node not stored.
        let n = |id, name, kind, community| NodeRow { id, name, kind, community };
        let nodes = [
            n(1, "b", "PERSON", 0),
            n(2, "a", "PERSON", 0),
            n(3, "c", "PLACE", 1),
            n(4, "d", "PERSON", 2),
            n(5, "e", "PLACE", 1),
            n(6, "f", "EVENT", 1),
        ];
        let edges = [(1, 2), (2, 3), (5, 6), (6, 99)];
        let degree = degrees(&edges);
        assert_eq!(degree[&2], 2);
        assert_eq!(degree[&6], 2);
        assert_eq!(degree.get(&4), None);
        let s = statistics(&nodes, &edges, &degree, 3);
        assert_eq!((s.nodes, s.edges, s.components, s.largest_component, s.communities), (6, 4, 3, 3, 3));
        assert_eq!(s.degree_histogram, [(0, 1), (1, 3), (2, 2)]);
        assert_eq!(s.types, [("PERSON".to_string(), 3), ("PLACE".to_string(), 2), ("EVENT".to_string(), 1)]);
        // Degree 2: "a" (id 2) before "f" (id 6) by name; then degree 1 by name: "b".
        assert_eq!(s.top.iter().map(|&i| nodes[i].name).collect::<Vec<_>>(), ["a", "f", "b"]);
        assert_eq!(by_degree(nodes.iter().map(|n| n.id), &degree, 4), [2, 6, 1, 3]);
    }
}

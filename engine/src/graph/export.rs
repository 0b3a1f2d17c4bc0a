//! The graph's file layout, shared by `assay graph export` and `import` and
//! by anything else that reads or writes graphs: nodes with ids, edges
//! referring to node ids; and GraphML with the same fields.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::{normalise_name, KnowledgeGraph, Node};

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
    #[serde(rename = "type", default = "concept")]
    pub kind: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub source_chunk_ids: Vec<i64>,
    /// Written on export; recomputed on import.
    #[serde(default)]
    pub community: i64,
}

fn concept() -> String {
    "concept".into()
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportEdge {
    pub source: i64,
    pub target: i64,
    #[serde(default)]
    pub description: String,
    #[serde(default = "one")]
    pub weight: f64,
    #[serde(default)]
    pub source_chunk_ids: Vec<i64>,
}

impl GraphExport {
    /// A graph in the export layout, read back as the engine's graph (for
    /// `assay graph import`): node names are normalised into keys as in
    /// extraction, so two nodes whose names normalise alike become one.
    pub fn to_graph(&self) -> Result<KnowledgeGraph, crate::Invalid> {
        let mut graph = KnowledgeGraph::default();
        let mut keys: HashMap<i64, String> = HashMap::new();
        for n in &self.nodes {
            let key = normalise_name(&n.name);
            if key.is_empty() {
                return Err(crate::Invalid::from(format!("node {} has an empty name", n.id)));
            }
            if keys.insert(n.id, key.clone()).is_some() {
                return Err(crate::Invalid::from(format!("node id {} appears twice", n.id)));
            }
            let descriptions: Vec<String> =
                n.description.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect();
            let chunks: BTreeSet<i64> = n.source_chunk_ids.iter().copied().collect();
            match graph.nodes.get_mut(&key) {
                Some(node) => {
                    node.descriptions.extend(descriptions);
                    node.source_chunks.extend(chunks);
                }
                None => {
                    let node = Node::restored(key.clone(), n.name.clone(), n.kind.clone(), descriptions, chunks);
                    graph.nodes.insert(key, node);
                }
            }
        }
        for (i, e) in self.edges.iter().enumerate() {
            let (Some(a), Some(b)) = (keys.get(&e.source), keys.get(&e.target)) else {
                return Err(crate::Invalid::from(format!(
                    "edge {} refers to node {} or {}, which is not among the nodes",
                    i + 1,
                    e.source,
                    e.target
                )));
            };
            if a == b {
                continue;
            }
            let edge = graph.edge_between(a, b);
            if !e.description.trim().is_empty() {
                edge.descriptions.push(e.description.trim().to_string());
            }
            edge.weight += if e.weight.is_finite() && e.weight > 0.0 { e.weight } else { 1.0 };
            edge.source_chunks.extend(e.source_chunk_ids.iter().copied());
        }
        Ok(graph)
    }

    /// GraphML with the same fields as the JSON export.
    pub fn to_graphml(&self) -> String {
        let mut s = String::from(concat!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
            "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n",
            "<key id=\"name\" for=\"node\" attr.name=\"name\" attr.type=\"string\"/>\n",
            "<key id=\"type\" for=\"node\" attr.name=\"type\" attr.type=\"string\"/>\n",
            "<key id=\"ndesc\" for=\"node\" attr.name=\"description\" attr.type=\"string\"/>\n",
            "<key id=\"nsrc\" for=\"node\" attr.name=\"source_chunk_ids\" attr.type=\"string\"/>\n",
            "<key id=\"community\" for=\"node\" attr.name=\"community\" attr.type=\"int\"/>\n",
            "<key id=\"edesc\" for=\"edge\" attr.name=\"description\" attr.type=\"string\"/>\n",
            "<key id=\"weight\" for=\"edge\" attr.name=\"weight\" attr.type=\"double\"/>\n",
            "<key id=\"esrc\" for=\"edge\" attr.name=\"source_chunk_ids\" attr.type=\"string\"/>\n",
            "<graph id=\"G\" edgedefault=\"undirected\">\n",
        ));
        let ids = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        for n in &self.nodes {
            s.push_str(&format!(
                "<node id=\"n{}\"><data key=\"name\">{}</data><data key=\"type\">{}</data><data key=\"ndesc\">{}</data><data key=\"nsrc\">{}</data><data key=\"community\">{}</data></node>\n",
                n.id, xml_escape(&n.name), xml_escape(&n.kind), xml_escape(&n.description), ids(&n.source_chunk_ids), n.community
            ));
        }
        for e in &self.edges {
            s.push_str(&format!(
                "<edge source=\"n{}\" target=\"n{}\"><data key=\"edesc\">{}</data><data key=\"weight\">{}</data><data key=\"esrc\">{}</data></edge>\n",
                e.source, e.target, xml_escape(&e.description), e.weight, ids(&e.source_chunk_ids)
            ));
        }
        s.push_str("</graph>\n</graphml>\n");
        s
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

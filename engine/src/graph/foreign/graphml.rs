//! LightRAG's and nano-graphrag's working folders.
//!
//! Both keep the graph in `graph_chunk_entity_relation.graphml` (networkx's
//! GraphML: node ids are entity names; `source_id` joins chunk ids with
//! `<SEP>`, as merged descriptions are joined) and the text in JSON
//! key-value stores: `kv_store_full_docs.json` (`{doc-id: {content, …}}`)
//! and `kv_store_text_chunks.json` (`{chunk-id: {content, full_doc_id,
//! chunk_order_index, tokens, …}}`). nano-graphrag (and LightRAG before
//! 1.0) quote and upper-case names (`"ALICE"`); LightRAG ≥ 1.2 keeps the
//! name as written and repeats it in `entity_id`. nano-graphrag adds its
//! communities: `clusters` on nodes and `kv_store_community_reports.json`.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::{
    split_field, ForeignChunk, ForeignCommunity, ForeignDocument, ForeignEntity, ForeignFiles, ForeignIndex,
    ForeignRelation, Format, Refused,
};

const GRAPH: &str = "graph_chunk_entity_relation.graphml";
const CHUNKS: &str = "kv_store_text_chunks.json";
const DOCS: &str = "kv_store_full_docs.json";
const STATUS: &str = "kv_store_doc_status.json";
const REPORTS: &str = "kv_store_community_reports.json";

/// One GraphML element's `data`, by attribute name.
type Attrs = HashMap<String, String>;

struct Graphml {
    node_keys: Vec<String>,
    edge_keys: Vec<String>,
    nodes: Vec<(String, Attrs)>,
    edges: Vec<(String, String, Attrs)>,
}

fn parse_graphml(bytes: &[u8]) -> Result<Graphml, Refused> {
    let text = std::str::from_utf8(bytes).map_err(|e| Refused(format!("{GRAPH} is not UTF-8 text: {e}")))?;
    let doc = roxmltree::Document::parse(text).map_err(|e| Refused(format!("{GRAPH} is not GraphML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "graphml" {
        return Err(Refused(format!("{GRAPH} is not GraphML: its root element is <{}>", root.tag_name().name())));
    }
    // key id → (for, attribute name)
    let mut keys: HashMap<String, (String, String)> = HashMap::new();
    for k in root.children().filter(|n| n.has_tag_name("key")) {
        let (Some(id), Some(name)) = (k.attribute("id"), k.attribute("attr.name")) else { continue };
        keys.insert(id.to_string(), (k.attribute("for").unwrap_or("all").to_string(), name.to_string()));
    }
    let names_for = |what: &str| -> Vec<String> {
        let mut v: Vec<String> =
            keys.values().filter(|(f, _)| f == what || f == "all").map(|(_, n)| n.clone()).collect();
        v.sort();
        v
    };
    let attrs = |el: roxmltree::Node| -> Attrs {
        el.children()
            .filter(|d| d.has_tag_name("data"))
            .filter_map(|d| {
                let key = d.attribute("key")?;
                let name = keys.get(key).map_or(key.to_string(), |(_, n)| n.clone());
                Some((name, d.text().unwrap_or("").to_string()))
            })
            .collect()
    };
    let Some(graph) = root.children().find(|n| n.has_tag_name("graph")) else {
        return Err(Refused(format!("{GRAPH} holds no <graph>")));
    };
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for el in graph.children().filter(roxmltree::Node::is_element) {
        match el.tag_name().name() {
            "node" => {
                let id = el.attribute("id").ok_or_else(|| Refused(format!("{GRAPH}: a node without an id")))?;
                nodes.push((id.to_string(), attrs(el)));
            }
            "edge" => {
                let (Some(s), Some(t)) = (el.attribute("source"), el.attribute("target")) else {
                    return Err(Refused(format!("{GRAPH}: an edge without a source or target")));
                };
                edges.push((s.to_string(), t.to_string(), attrs(el)));
            }
            _ => {}
        }
    }
    Ok(Graphml { node_keys: names_for("node"), edge_keys: names_for("edge"), nodes, edges })
}

/// A name or type as written, without the quotes nano-graphrag (and early
/// LightRAG) put around it.
fn unquote(s: &str) -> String {
    let t = s.trim();
    t.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(t).trim().to_string()
}

fn json_object<'a>(files: &'a ForeignFiles, name: &str) -> Result<serde_json::Map<String, Value>, Refused> {
    let bytes = files.get(name).ok_or_else(|| Refused(format!("{name} is missing")))?;
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Refused(format!("{name} is not a JSON object of records by id"))),
        Err(e) => Err(Refused(format!("{name} is not JSON: {e}"))),
    }
}

fn text_field(record: &Value, field: &str) -> Option<String> {
    record.get(field).and_then(Value::as_str).map(str::to_string)
}

/// Which writer made this graph, from the attributes it declares; refuses
/// a graph neither LightRAG nor nano-graphrag writes, or the other's when
/// `format` names one.
fn recognise(g: &Graphml, format: Format) -> Result<String, Refused> {
    let has = |keys: &[String], k: &str| keys.iter().any(|x| x == k);
    let missing: Vec<String> = ["entity_type", "description", "source_id"]
        .iter()
        .filter(|k| !has(&g.node_keys, k))
        .map(|k| format!("node {k}"))
        .chain(["description", "source_id"].iter().filter(|k| !has(&g.edge_keys, k)).map(|k| format!("edge {k}")))
        .collect();
    // An empty graph declares nothing: nothing to check.
    if !missing.is_empty() && !(g.nodes.is_empty() && g.edges.is_empty()) {
        return Err(Refused(format!(
            "{GRAPH} lacks the attributes {} writes ({}): it is from another program or an unknown version of it (it declares nodes: {}; edges: {})",
            format.program(),
            missing.join(", "),
            g.node_keys.join(", "),
            g.edge_keys.join(", ")
        )));
    }
    let keywords = has(&g.edge_keys, "keywords");
    let clusters = has(&g.node_keys, "clusters");
    let entity_id = has(&g.node_keys, "entity_id");
    match format {
        Format::LightRag if !keywords && (clusters || has(&g.edge_keys, "order")) && !g.edges.is_empty() => {
            Err(Refused(format!(
            "{GRAPH} looks like nano-graphrag's (edges without keywords, {}): import it as nano-graphrag's (--format nano-graphrag)",
            if clusters { "nodes with clusters" } else { "edges with order" }
        )))
        }
        Format::LightRag if entity_id => Ok("1.2 or later: names in entity_id".into()),
        Format::LightRag => Ok("before 1.2: quoted names".into()),
        Format::NanoGraphRag if entity_id || keywords => Err(Refused(format!(
            "{GRAPH} looks like LightRAG's ({}): import it as LightRAG's (--format lightrag)",
            if entity_id { "nodes with entity_id" } else { "edges with keywords" }
        ))),
        Format::NanoGraphRag if clusters => Ok("with communities".into()),
        Format::NanoGraphRag => Ok("no communities yet".into()),
        Format::GraphRag => Err(Refused("Microsoft GraphRAG's output is Parquet, not GraphML".into())),
    }
}

pub fn read(files: &ForeignFiles, format: Format) -> Result<ForeignIndex, Refused> {
    let graph = parse_graphml(files.get(GRAPH).ok_or_else(|| Refused(format!("{GRAPH} is missing")))?)?;
    let version = recognise(&graph, format)?;
    let mut files_read = vec![GRAPH.to_string(), DOCS.to_string(), CHUNKS.to_string()];

    // Documents: their text, and a title from the status store's file
    // path (LightRAG) or the text's first line.
    let docs = json_object(files, DOCS)?;
    let paths: HashMap<String, String> = match format {
        Format::LightRag if files.get(STATUS).is_some() => {
            files_read.push(STATUS.into());
            json_object(files, STATUS)?
                .into_iter()
                .filter_map(|(id, rec)| text_field(&rec, "file_path").map(|p| (id, p)))
                .collect()
        }
        _ => HashMap::new(),
    };
    let mut documents = Vec::with_capacity(docs.len());
    for (id, rec) in &docs {
        let text = text_field(rec, "content")
            .ok_or_else(|| Refused(format!("{DOCS}: document {id} has no \"content\" text")))?;
        let path = text_field(rec, "file_path").or_else(|| paths.get(id).cloned()).filter(|p| {
            let p = p.trim();
            !p.is_empty() && p != "unknown_source" && p != "no-file-path"
        });
        let title = path.unwrap_or_else(|| first_line(&text, id));
        documents.push(ForeignDocument { id: id.clone(), title, text });
    }

    let raw_chunks = json_object(files, CHUNKS)?;
    let mut chunks = Vec::with_capacity(raw_chunks.len());
    for (id, rec) in &raw_chunks {
        let text = text_field(rec, "content")
            .ok_or_else(|| Refused(format!("{CHUNKS}: chunk {id} has no \"content\" text")))?;
        let document = text_field(rec, "full_doc_id")
            .ok_or_else(|| Refused(format!("{CHUNKS}: chunk {id} names no document (\"full_doc_id\")")))?;
        if !docs.contains_key(&document) {
            return Err(Refused(format!(
                "{CHUNKS}: chunk {id} belongs to document {document}, which {DOCS} does not hold"
            )));
        }
        let order = rec.get("chunk_order_index").and_then(Value::as_u64).unwrap_or(0) as usize;
        let tokens = rec.get("tokens").and_then(Value::as_u64).map(|t| t as usize);
        chunks.push(ForeignChunk { id: id.clone(), document, order, text, tokens });
    }
    chunks.sort_by(|a, b| (&a.document, a.order, &a.id).cmp(&(&b.document, b.order, &b.id)));

    // Entities: the node id is the name (quoted by nano-graphrag);
    // LightRAG ≥ 1.2 repeats it in entity_id.
    let mut names: HashMap<String, String> = HashMap::new();
    let mut entities = Vec::with_capacity(graph.nodes.len());
    for (id, a) in &graph.nodes {
        let name = a.get("entity_id").map(|s| unquote(s)).filter(|s| !s.is_empty()).unwrap_or_else(|| unquote(id));
        names.insert(id.clone(), name.clone());
        entities.push(ForeignEntity {
            name,
            kind: a
                .get("entity_type")
                .map(|t| unquote(t).to_lowercase())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "unknown".into()),
            descriptions: a
                .get("description")
                .map(|d| split_field(d).iter().map(|d| unquote(d)).collect())
                .unwrap_or_default(),
            chunks: a.get("source_id").map(|s| split_field(s)).unwrap_or_default(),
        });
    }
    let name_of = |id: &str| names.get(id).cloned().unwrap_or_else(|| unquote(id));
    let relations = graph
        .edges
        .iter()
        .map(|(s, t, a)| ForeignRelation {
            source: name_of(s),
            target: name_of(t),
            descriptions: a
                .get("description")
                .map(|d| split_field(d).iter().map(|d| unquote(d)).collect())
                .unwrap_or_default(),
            keywords: a
                .get("keywords")
                .map(|k| {
                    split_field(k)
                        .iter()
                        .flat_map(|k| k.split(',').map(|w| unquote(w)))
                        .filter(|w| !w.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
            weight: a.get("weight").and_then(|w| w.trim().parse::<f64>().ok()).unwrap_or(1.0),
            chunks: a.get("source_id").map(|s| split_field(s)).unwrap_or_default(),
        })
        .collect();

    let communities = if format == Format::NanoGraphRag && files.get(REPORTS).is_some() {
        files_read.push(REPORTS.into());
        nano_communities(files, &graph, &names)?
    } else {
        Vec::new()
    };
    Ok(ForeignIndex { format, version, files_read, documents, chunks, entities, relations, communities })
}

fn first_line(text: &str, fallback: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or(fallback);
    let mut title: String = line.chars().take(80).collect();
    if title.len() < line.len() {
        title.push('…');
    }
    title
}

/// nano-graphrag's communities: each report's key is the cluster id; its
/// `level` and `nodes` (quoted names) and `report_json` (title, summary,
/// rating) come with it. Nodes' `clusters` attribute names the same ids.
fn nano_communities(
    files: &ForeignFiles,
    graph: &Graphml,
    names: &HashMap<String, String>,
) -> Result<Vec<ForeignCommunity>, Refused> {
    let reports = json_object(files, REPORTS)?;
    // Members by (level, cluster) from the nodes, for reports without `nodes`.
    let mut members: BTreeMap<(i64, String), Vec<String>> = BTreeMap::new();
    for (id, a) in &graph.nodes {
        let Some(raw) = a.get("clusters") else { continue };
        let Ok(Value::Array(list)) = serde_json::from_str::<Value>(raw) else { continue };
        for c in list {
            let level = c.get("level").and_then(Value::as_i64).unwrap_or(0);
            let cluster = match c.get("cluster") {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => continue,
            };
            members.entry((level, cluster)).or_default().push(names.get(id).cloned().unwrap_or_else(|| unquote(id)));
        }
    }
    let mut out = Vec::with_capacity(reports.len());
    for (id, rec) in &reports {
        let level = rec.get("level").and_then(Value::as_i64).unwrap_or(0);
        let entities: Vec<String> = match rec.get("nodes").and_then(Value::as_array) {
            Some(nodes) => nodes
                .iter()
                .filter_map(Value::as_str)
                .map(|n| names.get(n).cloned().unwrap_or_else(|| unquote(n)))
                .collect(),
            None => members.get(&(level, id.clone())).cloned().unwrap_or_default(),
        };
        let report = rec.get("report_json").cloned().unwrap_or(Value::Null);
        let title = text_field(&report, "title").or_else(|| text_field(rec, "title")).unwrap_or_default();
        let summary = text_field(&report, "summary").or_else(|| text_field(rec, "report_string")).unwrap_or_default();
        let rating = report.get("rating").and_then(Value::as_f64).unwrap_or(0.0);
        out.push(ForeignCommunity { id: id.clone(), level, entities, title, summary, rating });
    }
    out.sort_by(|a, b| (a.level, &a.id).cmp(&(b.level, &b.id)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(graph: &str, docs: &str, chunks: &str) -> ForeignFiles {
        ForeignFiles::new([
            (GRAPH.to_string(), graph.as_bytes().to_vec()),
            (DOCS.to_string(), docs.as_bytes().to_vec()),
            (CHUNKS.to_string(), chunks.as_bytes().to_vec()),
        ])
    }

    const LIGHTRAG_GRAPH: &str = r#"<?xml version='1.0' encoding='utf-8'?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
<key id="d0" for="node" attr.name="entity_id" attr.type="string"/>
<key id="d1" for="node" attr.name="entity_type" attr.type="string"/>
<key id="d2" for="node" attr.name="description" attr.type="string"/>
<key id="d3" for="node" attr.name="source_id" attr.type="string"/>
<key id="d4" for="edge" attr.name="weight" attr.type="double"/>
<key id="d5" for="edge" attr.name="description" attr.type="string"/>
<key id="d6" for="edge" attr.name="keywords" attr.type="string"/>
<key id="d7" for="edge" attr.name="source_id" attr.type="string"/>
<graph edgedefault="undirected">
<node id="Alice"><data key="d0">Alice</data><data key="d1">person</data><data key="d2">A girl.&lt;SEP&gt;Curious.</data><data key="d3">chunk-1&lt;SEP&gt;chunk-2</data></node>
<node id="Rabbit"><data key="d0">Rabbit</data><data key="d1">animal</data><data key="d2">White.</data><data key="d3">chunk-1</data></node>
<edge source="Alice" target="Rabbit"><data key="d4">2.0</data><data key="d5">follows</data><data key="d6">chase,curiosity</data><data key="d7">chunk-1</data></edge>
</graph></graphml>"#;

    const DOCS_JSON: &str = r#"{"doc-1": {"content": "Alice saw a rabbit.\nIt ran.", "file_path": "alice.txt"}}"#;
    const CHUNKS_JSON: &str = r#"{"chunk-2": {"tokens": 2, "content": "It ran.", "chunk_order_index": 1, "full_doc_id": "doc-1"},
        "chunk-1": {"tokens": 5, "content": "Alice saw a rabbit.", "chunk_order_index": 0, "full_doc_id": "doc-1"}}"#;

    #[test]
    fn a_lightrag_folder_reads_with_its_provenance() {
        let index = read(&folder(LIGHTRAG_GRAPH, DOCS_JSON, CHUNKS_JSON), Format::LightRag).unwrap();
        assert_eq!(index.version, "1.2 or later: names in entity_id");
        assert_eq!(index.documents[0].title, "alice.txt");
        assert_eq!(index.chunks.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["chunk-1", "chunk-2"]);
        assert_eq!(index.entities[0].descriptions, ["A girl.", "Curious."]);
        assert_eq!(index.entities[0].chunks, ["chunk-1", "chunk-2"]);
        assert_eq!(index.relations[0].keywords, ["chase", "curiosity"]);
        assert_eq!(index.relations[0].weight, 2.0);
    }

    #[test]
    fn a_folder_of_the_other_program_is_refused_with_the_right_format() {
        let nano = LIGHTRAG_GRAPH
            .replace("attr.name=\"keywords\"", "attr.name=\"order\"")
            .replace("attr.name=\"entity_id\"", "attr.name=\"clusters\"");
        let e = read(&folder(&nano, DOCS_JSON, CHUNKS_JSON), Format::LightRag).unwrap_err();
        assert!(e.0.contains("--format nano-graphrag"), "{e}");
        let e = read(&folder(LIGHTRAG_GRAPH, DOCS_JSON, CHUNKS_JSON), Format::NanoGraphRag).unwrap_err();
        assert!(e.0.contains("--format lightrag"), "{e}");
    }

    #[test]
    fn incomplete_or_unknown_folders_are_refused_with_the_reason() {
        let mut f = folder(LIGHTRAG_GRAPH, DOCS_JSON, CHUNKS_JSON);
        f.files.remove(DOCS);
        let e = read(&f, Format::LightRag).unwrap_err();
        assert!(e.0.contains("kv_store_full_docs.json is missing"), "{e}");
        let unknown = LIGHTRAG_GRAPH.replace("attr.name=\"source_id\"", "attr.name=\"origin\"");
        let e = read(&folder(&unknown, DOCS_JSON, CHUNKS_JSON), Format::LightRag).unwrap_err();
        assert!(e.0.contains("node source_id, edge source_id") && e.0.contains("unknown version"), "{e}");
        let orphan = CHUNKS_JSON.replace("\"full_doc_id\": \"doc-1\"}}", "\"full_doc_id\": \"doc-9\"}}");
        let e = read(&folder(LIGHTRAG_GRAPH, DOCS_JSON, &orphan), Format::LightRag).unwrap_err();
        assert!(e.0.contains("doc-9"), "{e}");
        let e = read(&folder("<graph/>", DOCS_JSON, CHUNKS_JSON), Format::LightRag).unwrap_err();
        assert!(e.0.contains("not GraphML"), "{e}");
    }
}

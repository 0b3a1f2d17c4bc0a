//! Indexes other GraphRAG systems built, read as they left them on disk, so
//! a graph someone already paid for is explored, questioned and judged
//! without a new extraction.
//!
//! A reader takes the folder's files by name ([`ForeignFiles`]: from a
//! directory or from a zip of it) and gives back a [`ForeignIndex`]: the
//! documents and chunks under the system's own ids, and the entities,
//! relations and (where the system made them) communities, each naming the
//! chunks it came from by those ids. [`ForeignIndex::to_graph`] turns it
//! into Assay's graph once the chunks are stored and have Assay ids, and
//! accounts for every entity and relation ([`Tally`]).
//!
//! # Layout
//! - [`graphml`]: LightRAG's and nano-graphrag's working folders (a GraphML
//!   graph whose `source_id`s, joined by `<SEP>`, name chunks in JSON
//!   key-value stores).
//! - [`parquet`]: Microsoft GraphRAG's output folder.

pub mod graphml;
pub mod parquet;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use super::{normalise_name, KnowledgeGraph, Node};

/// The separator LightRAG and nano-graphrag join `source_id`s and merged
/// descriptions with (`GRAPH_FIELD_SEP`).
pub const FIELD_SEP: &str = "<SEP>";

/// The largest index folder Assay reads (all its files together): the
/// stores of a few thousand documents, well under it.
pub const MAX_FOLDER_BYTES: u64 = 1 << 30;

/// How many times its own size a zip's index files may unpack to (JSON
/// and GraphML compress 5–20×), beyond [`ZIP_FLOOR`]: a zip bomb stops
/// there, whatever its headers claim.
pub const ZIP_RATIO: u64 = 100;
pub const ZIP_FLOOR: u64 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    LightRag,
    GraphRag,
    NanoGraphRag,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::LightRag, Format::GraphRag, Format::NanoGraphRag];

    pub fn name(self) -> &'static str {
        match self {
            Format::LightRag => "lightrag",
            Format::GraphRag => "graphrag",
            Format::NanoGraphRag => "nano-graphrag",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name.trim().to_ascii_lowercase())
    }

    /// The program that writes this format, for messages.
    pub fn program(self) -> &'static str {
        match self {
            Format::LightRag => "LightRAG",
            Format::GraphRag => "Microsoft GraphRAG",
            Format::NanoGraphRag => "nano-graphrag",
        }
    }

    /// The files the reader needs (`required`) and those it reads when
    /// present; nothing else in the folder is read (vector stores can be large).
    pub fn files(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Format::LightRag => (
                &["graph_chunk_entity_relation.graphml", "kv_store_text_chunks.json", "kv_store_full_docs.json"],
                &["kv_store_doc_status.json"],
            ),
            Format::NanoGraphRag => (
                &["graph_chunk_entity_relation.graphml", "kv_store_text_chunks.json", "kv_store_full_docs.json"],
                &["kv_store_community_reports.json"],
            ),
            Format::GraphRag => (
                &["documents.parquet", "text_units.parquet", "entities.parquet", "relationships.parquet"],
                &["communities.parquet", "community_reports.parquet"],
            ),
        }
    }
}

/// Why a folder cannot be imported. The message says what is wrong and,
/// where it can, what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

impl Refused {
    pub fn new(s: impl Into<String>) -> Refused {
        Refused(s.into())
    }
}

/// An index folder's files by name (the base name: a zip's top folder is
/// ignored), only those its format reads.
#[derive(Debug, Clone, Default)]
pub struct ForeignFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl ForeignFiles {
    pub fn new(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> ForeignFiles {
        ForeignFiles { files: files.into_iter().collect() }
    }

    /// The format's files from `path`: a zip of the folder (by its
    /// extension) or the folder itself. A refusal names the path.
    pub fn open(path: &Path, format: Format) -> Result<ForeignFiles, Refused> {
        let files = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip")) {
            let bytes = std::fs::read(path).map_err(|e| Refused(format!("cannot read {}: {e}", path.display())))?;
            ForeignFiles::from_zip(&bytes, format)
        } else {
            ForeignFiles::from_dir(path, format)
        };
        files.map_err(|e| Refused(format!("{}: {}", path.display(), e.0)))
    }

    /// The format's files from a directory.
    pub fn from_dir(dir: &Path, format: Format) -> Result<ForeignFiles, Refused> {
        if !dir.is_dir() {
            return Err(Refused(format!("{} is not a folder", dir.display())));
        }
        let (required, optional) = format.files();
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        for name in required.iter().chain(optional) {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let bytes = std::fs::read(&path).map_err(|e| Refused(format!("cannot read {}: {e}", path.display())))?;
            total += bytes.len() as u64;
            if total > MAX_FOLDER_BYTES {
                return Err(Refused(format!(
                    "the folder's files are larger than {} in all",
                    crate::corpus::human_bytes(MAX_FOLDER_BYTES)
                )));
            }
            files.insert(name.to_string(), bytes);
        }
        Ok(ForeignFiles { files })
    }

    /// The format's files from a zip of the folder (at its root or in one
    /// folder inside it). Members are read up to [`ZIP_RATIO`] times the
    /// zip's size (at least [`ZIP_FLOOR`], at most [`MAX_FOLDER_BYTES`]) in
    /// all, whatever their headers claim.
    pub fn from_zip(bytes: &[u8], format: Format) -> Result<ForeignFiles, Refused> {
        let cap = (bytes.len() as u64).saturating_mul(ZIP_RATIO).max(ZIP_FLOOR).min(MAX_FOLDER_BYTES);
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| Refused(format!("not a readable zip archive: {e}")))?;
        let (required, optional) = format.files();
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        for i in 0..archive.len() {
            let mut member = archive.by_index(i).map_err(|e| Refused(format!("member {i} of the zip: {e}")))?;
            if member.is_dir() {
                continue;
            }
            let path = member.name().replace('\\', "/");
            let base = path.rsplit('/').next().unwrap_or(&path).to_string();
            if !required.iter().chain(optional).any(|n| *n == base) {
                continue;
            }
            if files.contains_key(&base) {
                return Err(Refused(format!("the zip holds {base} twice; zip one index folder")));
            }
            let mut data = Vec::new();
            let room = cap - total;
            (&mut member)
                .take(room + 1)
                .read_to_end(&mut data)
                .map_err(|e| Refused(format!("{path} in the zip: {e}")))?;
            total += data.len() as u64;
            if total > cap {
                return Err(Refused(format!(
                    "refused: the zip's index files unpack to more than {} (at most {ZIP_RATIO}× the zip's {}, or {}: a zip bomb?); import the folder with `assay graph import` instead",
                    crate::corpus::human_bytes(cap),
                    crate::corpus::human_bytes(bytes.len() as u64),
                    crate::corpus::human_bytes(ZIP_FLOOR)
                )));
            }
            files.insert(base, data);
        }
        Ok(ForeignFiles { files })
    }

    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files.get(name).map(Vec::as_slice)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Refuses unless every file `format` requires is here, naming those missing.
    pub fn require(&self, format: Format) -> Result<(), Refused> {
        let (required, _) = format.files();
        let missing: Vec<&str> = required.iter().copied().filter(|n| !self.files.contains_key(*n)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Refused(format!(
            "this is not a complete {} folder: {} missing (it needs {})",
            format.program(),
            if missing.len() == 1 { format!("{} is", missing[0]) } else { format!("{} are", missing.join(", ")) },
            required.join(", ")
        )))
    }
}

/// A document as the system stored it.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignDocument {
    /// The system's id (`doc-…` for LightRAG, a hash for GraphRAG).
    pub id: String,
    pub title: String,
    pub text: String,
}

/// A chunk (text unit) as the system stored it.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignChunk {
    pub id: String,
    /// The id of its document.
    pub document: String,
    /// Its place in the document.
    pub order: usize,
    pub text: String,
    /// Its token count as the system counted it, where it says.
    pub tokens: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForeignEntity {
    pub name: String,
    pub kind: String,
    pub descriptions: Vec<String>,
    /// Chunk ids.
    pub chunks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForeignRelation {
    /// Entity names, as in [`ForeignEntity::name`].
    pub source: String,
    pub target: String,
    pub descriptions: Vec<String>,
    pub keywords: Vec<String>,
    pub weight: f64,
    pub chunks: Vec<String>,
}

/// A community the system found, with its report where it wrote one.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignCommunity {
    pub id: String,
    pub level: i64,
    /// Entity names.
    pub entities: Vec<String>,
    pub title: String,
    pub summary: String,
    pub rating: f64,
}

/// What a reader found in a folder.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignIndex {
    pub format: Format,
    /// The version the reader recognised, e.g. "1.2 or later: names in entity_id".
    pub version: String,
    /// The files it read.
    pub files_read: Vec<String>,
    pub documents: Vec<ForeignDocument>,
    pub chunks: Vec<ForeignChunk>,
    pub entities: Vec<ForeignEntity>,
    pub relations: Vec<ForeignRelation>,
    pub communities: Vec<ForeignCommunity>,
}

/// Every entity and relation of the folder, accounted for in the graph.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    pub documents: usize,
    pub chunks: usize,
    pub entities: usize,
    pub relations: usize,
    pub nodes: usize,
    pub edges: usize,
    /// Entities whose names normalise to another's key: kept as their own
    /// node under a numbered key (`name (2)`), listed here.
    pub renamed: Vec<String>,
    /// Relations that joined another's edge: the reverse direction of a
    /// directed pair (GraphRAG) or a repeated pair.
    pub relations_joined: usize,
    /// Relations from an entity to itself (Assay's graph has no loops).
    pub self_loops: usize,
    /// Relations naming an entity the folder does not hold (its node is
    /// created, type `concept`, as LightRAG's graph does).
    pub implied_entities: usize,
    /// References to chunk ids the folder does not hold.
    pub unknown_chunks: BTreeSet<String>,
    pub communities: usize,
    pub community_level: Option<i64>,
    /// Nodes in none of the imported communities (each component of them
    /// gets a community of its own).
    pub nodes_without_community: usize,
}

impl ForeignIndex {
    /// Assay's graph of this index, given the Assay id of each stored chunk
    /// (by the system's chunk id), with the tally that accounts for it, and
    /// the imported communities at `level` (node key → community number,
    /// reports by number) when the index has any.
    pub fn to_graph(&self, chunk_ids: &HashMap<String, i64>, level: Option<i64>) -> Imported {
        let mut graph = KnowledgeGraph::default();
        let mut tally = Tally {
            documents: self.documents.len(),
            chunks: self.chunks.len(),
            entities: self.entities.len(),
            relations: self.relations.len(),
            ..Tally::default()
        };
        let chunks_of = |ids: &[String], tally: &mut Tally| -> BTreeSet<i64> {
            ids.iter()
                .filter_map(|id| {
                    let found = chunk_ids.get(id).copied();
                    if found.is_none() {
                        tally.unknown_chunks.insert(id.clone());
                    }
                    found
                })
                .collect()
        };
        // The system's entity name → Assay's node key.
        let mut keys: HashMap<&str, String> = HashMap::new();
        for e in &self.entities {
            if keys.contains_key(e.name.as_str()) {
                // The same name twice: one entity, as the system treats it.
                let node = graph.nodes.get_mut(&keys[e.name.as_str()]).expect("inserted with its key");
                node.descriptions.extend(e.descriptions.iter().cloned());
                node.source_chunks.extend(chunks_of(&e.chunks, &mut tally));
                continue;
            }
            let key = unique_key(&graph, &e.name);
            if key != normalise_name(&e.name) {
                tally.renamed.push(e.name.clone());
            }
            let node = Node::restored(
                key.clone(),
                e.name.clone(),
                e.kind.clone(),
                e.descriptions.clone(),
                chunks_of(&e.chunks, &mut tally),
            );
            graph.nodes.insert(key.clone(), node);
            keys.insert(e.name.as_str(), key);
        }
        for r in &self.relations {
            let mut ends = Vec::with_capacity(2);
            for name in [&r.source, &r.target] {
                let key = match keys.get(name.as_str()) {
                    Some(k) => k.clone(),
                    None => {
                        let key = unique_key(&graph, name);
                        let node =
                            Node::restored(key.clone(), name.clone(), "concept".into(), Vec::new(), BTreeSet::new());
                        graph.nodes.insert(key.clone(), node);
                        keys.insert(name.as_str(), key.clone());
                        tally.implied_entities += 1;
                        key
                    }
                };
                ends.push(key);
            }
            if ends[0] == ends[1] {
                tally.self_loops += 1;
                continue;
            }
            let pair =
                if ends[0] < ends[1] { (ends[0].clone(), ends[1].clone()) } else { (ends[1].clone(), ends[0].clone()) };
            if graph.edges.contains_key(&pair) {
                tally.relations_joined += 1;
            }
            let src = chunks_of(&r.chunks, &mut tally);
            let edge = graph.edge_between(&ends[0], &ends[1]);
            for d in &r.descriptions {
                if !edge.descriptions.contains(d) {
                    edge.descriptions.push(d.clone());
                }
            }
            edge.keywords.extend(r.keywords.iter().map(|k| k.trim().to_lowercase()).filter(|k| !k.is_empty()));
            edge.weight += if r.weight.is_finite() && r.weight > 0.0 { r.weight } else { 1.0 };
            edge.source_chunks.extend(src);
        }
        tally.nodes = graph.nodes.len();
        tally.edges = graph.edges.len();
        let communities = self.communities_at(level, &keys, &graph, &mut tally);
        Imported { graph, tally, communities }
    }

    /// The levels the index's communities come in, coarsest first.
    pub fn community_levels(&self) -> Vec<i64> {
        self.communities.iter().map(|c| c.level).collect::<BTreeSet<_>>().into_iter().collect()
    }

    fn communities_at(
        &self,
        level: Option<i64>,
        keys: &HashMap<&str, String>,
        graph: &KnowledgeGraph,
        tally: &mut Tally,
    ) -> Option<ImportedCommunities> {
        let level = level.or_else(|| self.community_levels().first().copied())?;
        let chosen: Vec<&ForeignCommunity> = self.communities.iter().filter(|c| c.level == level).collect();
        if chosen.is_empty() {
            return None;
        }
        let mut of_node: BTreeMap<String, usize> = BTreeMap::new();
        let mut reports = Vec::new();
        for (number, c) in chosen.iter().enumerate() {
            for name in &c.entities {
                if let Some(key) = keys.get(name.as_str()) {
                    of_node.entry(key.clone()).or_insert(number);
                }
            }
            reports.push(ImportedReport {
                community: number,
                title: if c.title.trim().is_empty() { format!("Community {}", c.id) } else { c.title.clone() },
                summary: c.summary.clone(),
                rating: c.rating,
            });
        }
        // The rest (GraphRAG clusters only the largest component by
        // default): one community per connected component of them.
        let mut next = chosen.len();
        for component in graph.components() {
            let without: Vec<&String> = component.iter().filter(|k| !of_node.contains_key(*k)).collect();
            if without.is_empty() {
                continue;
            }
            tally.nodes_without_community += without.len();
            for key in without {
                of_node.insert(key.clone(), next);
            }
            next += 1;
        }
        tally.communities = chosen.len();
        tally.community_level = Some(level);
        Some(ImportedCommunities { of_node, reports })
    }
}

/// [`ForeignIndex::to_graph`]'s result.
#[derive(Debug, Clone)]
pub struct Imported {
    pub graph: KnowledgeGraph,
    pub tally: Tally,
    pub communities: Option<ImportedCommunities>,
}

/// Communities as the system found them: node key → community number, and
/// the reports it wrote (by the same numbers).
#[derive(Debug, Clone)]
pub struct ImportedCommunities {
    pub of_node: BTreeMap<String, usize>,
    pub reports: Vec<ImportedReport>,
}

/// A community's report as the system wrote it (the fields of
/// `rag::CommunityReport`, which `graph` does not import: `rag` builds on
/// `graph`).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedReport {
    pub community: usize,
    pub title: String,
    pub summary: String,
    /// 0–10 (GraphRAG's `rank`, nano-graphrag's `rating`).
    pub rating: f64,
}

/// `name`'s normalised key, numbered (`key (2)`, …) when another entity
/// already has it, so no entity of the folder disappears into another.
fn unique_key(graph: &KnowledgeGraph, name: &str) -> String {
    let mut base = normalise_name(name);
    if base.is_empty() {
        base = name.trim().to_lowercase();
    }
    if base.is_empty() {
        base = "unnamed".into();
    }
    if !graph.nodes.contains_key(&base) {
        return base;
    }
    (2..).map(|n| format!("{base} ({n})")).find(|k| !graph.nodes.contains_key(k)).expect("unbounded")
}

/// Splits a `<SEP>`-joined field into its distinct, non-empty parts in order.
pub fn split_field(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in value.split(FIELD_SEP).map(str::trim).filter(|p| !p.is_empty()) {
        if !out.iter().any(|o| o == part) {
            out.push(part.to_string());
        }
    }
    out
}

/// Reads the folder as `format`.
pub fn read(files: &ForeignFiles, format: Format) -> Result<ForeignIndex, Refused> {
    files.require(format)?;
    let index = match format {
        Format::LightRag | Format::NanoGraphRag => graphml::read(files, format),
        Format::GraphRag => parquet::read(files),
    }?;
    if let Some(what) = index.holding_nul() {
        return Err(Refused(format!(
            "{what} holds the character U+0000 (NUL), which Assay does not store (PostgreSQL cannot): remove it"
        )));
    }
    Ok(index)
}

impl ForeignIndex {
    /// The first text that holds U+0000, named.
    fn holding_nul(&self) -> Option<String> {
        let nul = |s: &str| s.contains('\0');
        self.documents
            .iter()
            .find(|d| nul(&d.text) || nul(&d.title) || nul(&d.id))
            .map(|d| format!("document {}", d.id))
            .or_else(|| self.chunks.iter().find(|c| nul(&c.text) || nul(&c.id)).map(|c| format!("chunk {}", c.id)))
            .or_else(|| {
                self.entities
                    .iter()
                    .find(|e| nul(&e.name) || nul(&e.kind) || e.descriptions.iter().any(|d| nul(d)))
                    .map(|e| format!("entity {}", e.name.replace('\0', "")))
            })
            .or_else(|| {
                self.relations
                    .iter()
                    .find(|r| {
                        r.descriptions.iter().chain(&r.keywords).any(|d| nul(d)) || nul(&r.source) || nul(&r.target)
                    })
                    .map(|r| format!("the relation {} – {}", r.source.replace('\0', ""), r.target.replace('\0', "")))
            })
            .or_else(|| {
                self.communities
                    .iter()
                    .find(|c| nul(&c.title) || nul(&c.summary))
                    .map(|c| format!("community {}", c.id))
            })
    }
}

/// Where each chunk lies in its document's text: the byte range of its
/// first occurrence at or after the previous chunk's start (chunks overlap),
/// or `None` where its text is not in the document verbatim.
pub fn locate_chunks<'a>(text: &str, chunks: impl IntoIterator<Item = &'a str>) -> Vec<Option<(usize, usize)>> {
    let mut from = 0;
    chunks
        .into_iter()
        .map(|c| {
            let found = text.get(from..).and_then(|rest| rest.find(c)).map(|i| from + i).or_else(|| text.find(c));
            found.map(|start| {
                from = start + c.len().min(1);
                (start, start + c.len())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zip_bomb_stops_at_its_ratio() {
        // 70 MB of one byte deflates to about 70 KB: over 100× and the 64 MB floor.
        let mut buf = Vec::new();
        {
            let mut w = zip::ZipWriter::new(std::io::Cursor::new(&mut buf));
            w.start_file("rag_storage/kv_store_full_docs.json", zip::write::SimpleFileOptions::default()).unwrap();
            let block = vec![b' '; 1 << 20];
            for _ in 0..70 {
                std::io::Write::write_all(&mut w, &block).unwrap();
            }
            w.finish().unwrap();
        }
        assert!(buf.len() < 1 << 20, "{}", buf.len());
        let e = ForeignFiles::from_zip(&buf, Format::LightRag).unwrap_err();
        assert!(e.0.contains("zip bomb"), "{e}");
    }

    #[test]
    fn fields_split_on_the_separator_dropping_repeats() {
        assert_eq!(split_field("chunk-a<SEP>chunk-b<SEP>chunk-a<SEP> "), vec!["chunk-a", "chunk-b"]);
        assert!(split_field("").is_empty());
    }

    #[test]
    fn overlapping_chunks_are_located_in_order() {
        let text = "one two three. one two three. four";
        let found = locate_chunks(text, ["one two three.", "one two three. four", "absent"]);
        assert_eq!(found, vec![Some((0, 14)), Some((15, 34)), None]);
    }

    fn entity(name: &str, chunks: &[&str]) -> ForeignEntity {
        ForeignEntity {
            name: name.into(),
            kind: "person".into(),
            descriptions: vec![format!("{name} is here")],
            chunks: chunks.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn every_entity_and_relation_is_accounted_for() {
        let index = ForeignIndex {
            format: Format::GraphRag,
            version: "test".into(),
            files_read: vec![],
            documents: vec![],
            chunks: vec![],
            entities: vec![entity("The Queen", &["c1"]), entity("QUEEN", &["c2"]), entity("Alice", &["c1", "gone"])],
            relations: vec![
                ForeignRelation {
                    source: "Alice".into(),
                    target: "The Queen".into(),
                    descriptions: vec!["meets".into()],
                    keywords: vec!["Court".into()],
                    weight: 2.0,
                    chunks: vec!["c1".into()],
                },
                ForeignRelation {
                    source: "The Queen".into(),
                    target: "Alice".into(),
                    descriptions: vec!["sentences".into()],
                    keywords: vec![],
                    weight: 1.0,
                    chunks: vec!["c2".into()],
                },
                ForeignRelation {
                    source: "Alice".into(),
                    target: "Alice".into(),
                    descriptions: vec![],
                    keywords: vec![],
                    weight: 1.0,
                    chunks: vec![],
                },
                ForeignRelation {
                    source: "Alice".into(),
                    target: "Hatter".into(),
                    descriptions: vec!["tea".into()],
                    keywords: vec![],
                    weight: 0.0,
                    chunks: vec!["c2".into()],
                },
            ],
            communities: vec![ForeignCommunity {
                id: "7".into(),
                level: 0,
                entities: vec!["Alice".into(), "The Queen".into()],
                title: "Court".into(),
                summary: "The court.".into(),
                rating: 6.5,
            }],
        };
        let ids: HashMap<String, i64> = [("c1".to_string(), 10), ("c2".to_string(), 20)].into();
        let out = index.to_graph(&ids, None);
        let t = &out.tally;
        assert_eq!((t.entities, t.nodes), (3, 4), "three entities and the implied Hatter");
        assert_eq!(t.renamed, vec!["QUEEN"]);
        assert!(out.graph.nodes.contains_key("queen (2)"));
        assert_eq!((t.relations, t.edges, t.relations_joined, t.self_loops, t.implied_entities), (4, 2, 1, 1, 1));
        assert_eq!(t.unknown_chunks, BTreeSet::from(["gone".to_string()]));
        let edge = &out.graph.edges[&("alice".to_string(), "queen".to_string())];
        assert_eq!(edge.descriptions, vec!["meets", "sentences"]);
        assert_eq!(edge.weight, 3.0);
        assert_eq!(edge.source_chunks, BTreeSet::from([10, 20]));
        let c = out.communities.expect("level 0 exists");
        assert_eq!(c.of_node["alice"], 0);
        assert_eq!(c.of_node["queen"], 0);
        assert_eq!(c.reports[0].title, "Court");
        // The Hatter's component holds Alice, already in 0: the Hatter alone
        // gets the next number; QUEEN (2), a component of its own, the one after.
        assert_eq!(c.of_node["hatter"], 1, "{:?}", c.of_node);
        assert_eq!(c.of_node["queen (2)"], 2);
        assert_eq!((t.communities, t.nodes_without_community, t.community_level), (1, 2, Some(0)));
    }
}

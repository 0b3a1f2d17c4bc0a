//! Importing another system's index at the papers' scale: a
//! LightRAG working folder as LightRAG 1.5 writes it, of 2,000 chunks of
//! real text (Sherlock Holmes, cut as LightRAG cuts: 1,200-token windows
//! over the documents, here by words), 20,000 entities and 40,000
//! relations whose `source_id`s name those chunks — about what LightRAG
//! extracts from UltraDomain's larger sets. Measures the engine's read
//! (`graph::foreign::read` + `to_graph`) in process, and `assay graph
//! import` end to end on a SQLite file (wall time and the process's peak
//! resident memory).
//!
//!     cargo bench -p server --bench foreign_import            (release)
//!     cargo bench -p server --bench foreign_import --profile dev

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

const DOCS: usize = 20;
const CHUNKS: usize = 2_000;
const ENTITIES: usize = 20_000;
const RELATIONS: usize = 40_000;

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The folder, written under `dir`; returns its size in bytes.
fn write_folder(dir: &std::path::Path) -> u64 {
    let novel = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/sherlock_holmes.txt"),
    )
    .unwrap();
    let words: Vec<&str> = novel.split_whitespace().collect();
    let per_chunk = 900; // ~1,200 tokens of English
    let mut rng = fastrand::Rng::with_seed(7);
    let mut docs = serde_json::Map::new();
    let mut chunks = serde_json::Map::new();
    let chunks_per_doc = CHUNKS / DOCS;
    for d in 0..DOCS {
        // Each document a different window of the novel (wrapping).
        let start = (d * 7_919) % words.len();
        let doc_words: Vec<&str> = (0..chunks_per_doc * per_chunk).map(|i| words[(start + i) % words.len()]).collect();
        let doc_id = format!("doc-{d:032x}");
        docs.insert(
            doc_id.clone(),
            serde_json::json!({"content": doc_words.join(" "), "file_path": format!("part-{d}.txt")}),
        );
        for c in 0..chunks_per_doc {
            let text = doc_words[c * per_chunk..(c + 1) * per_chunk].join(" ");
            chunks.insert(
                format!("chunk-{:032x}", d * chunks_per_doc + c),
                serde_json::json!({"tokens": 1200, "content": text, "chunk_order_index": c, "full_doc_id": doc_id, "file_path": format!("part-{d}.txt")}),
            );
        }
    }
    let chunk_ids: Vec<String> = chunks.keys().cloned().collect();
    let sources = |rng: &mut fastrand::Rng, n: usize| -> String {
        (0..n).map(|_| chunk_ids[rng.usize(..chunk_ids.len())].as_str()).collect::<Vec<_>>().join("&lt;SEP&gt;")
    };
    let mut g = String::from(
        "<?xml version='1.0' encoding='utf-8'?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\
         <key id=\"d6\" for=\"edge\" attr.name=\"source_id\" attr.type=\"string\"/>\
         <key id=\"d5\" for=\"edge\" attr.name=\"keywords\" attr.type=\"string\"/>\
         <key id=\"d4\" for=\"edge\" attr.name=\"description\" attr.type=\"string\"/>\
         <key id=\"d7\" for=\"edge\" attr.name=\"weight\" attr.type=\"double\"/>\
         <key id=\"d3\" for=\"node\" attr.name=\"source_id\" attr.type=\"string\"/>\
         <key id=\"d2\" for=\"node\" attr.name=\"description\" attr.type=\"string\"/>\
         <key id=\"d1\" for=\"node\" attr.name=\"entity_type\" attr.type=\"string\"/>\
         <key id=\"d0\" for=\"node\" attr.name=\"entity_id\" attr.type=\"string\"/>\
         <graph edgedefault=\"undirected\">\n",
    );
    let name =
        |i: usize| format!("Entity {i:05} {}", words[i % words.len()].trim_matches(|c: char| !c.is_alphanumeric()));
    for i in 0..ENTITIES {
        let n = xml(&name(i));
        let desc = xml(&words[(i * 13) % words.len()..][..40.min(words.len() - (i * 13) % words.len())].join(" "));
        let _ = write!(
            g,
            "<node id=\"{n}\"><data key=\"d0\">{n}</data><data key=\"d1\">{}</data><data key=\"d2\">{desc}&lt;SEP&gt;{desc}.</data><data key=\"d3\">{}</data></node>\n",
            ["person", "location", "organization", "event", "concept"][i % 5],
            sources(&mut rng, 1 + i % 4)
        );
    }
    let mut seen: HashMap<(usize, usize), ()> = HashMap::new();
    while seen.len() < RELATIONS {
        let (a, b) = (rng.usize(..ENTITIES), rng.usize(..ENTITIES));
        let key = (a.min(b), a.max(b));
        if a == b || seen.insert(key, ()).is_some() {
            continue;
        }
        let (weight, n_sources) = (1 + rng.usize(..9), 1 + rng.usize(..3));
        let src = sources(&mut rng, n_sources);
        let _ = write!(
            g,
            "<edge source=\"{}\" target=\"{}\"><data key=\"d7\">{}</data><data key=\"d4\">{} relates to {}</data><data key=\"d5\">kinship,plot</data><data key=\"d6\">{}</data></edge>\n",
            xml(&name(a)),
            xml(&name(b)),
            weight,
            xml(&name(a)),
            xml(&name(b)),
            src
        );
    }
    g.push_str("</graph></graphml>\n");
    std::fs::write(dir.join("graph_chunk_entity_relation.graphml"), &g).unwrap();
    let docs = serde_json::to_vec(&docs).unwrap();
    let chunks = serde_json::to_vec(&chunks).unwrap();
    std::fs::write(dir.join("kv_store_full_docs.json"), &docs).unwrap();
    std::fs::write(dir.join("kv_store_text_chunks.json"), &chunks).unwrap();
    (g.len() + docs.len() + chunks.len()) as u64
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("rag_storage");
    std::fs::create_dir(&folder).unwrap();
    let bytes = write_folder(&folder);
    println!(
        "LightRAG folder: {DOCS} documents, {CHUNKS} chunks, {ENTITIES} entities, {RELATIONS} relations, {:.1} MB",
        bytes as f64 / 1e6
    );

    use engine::graph::foreign::{read, ForeignFiles, Format};
    let mut reads = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let files = ForeignFiles::from_dir(&folder, Format::LightRag).unwrap();
        let index = read(&files, Format::LightRag).unwrap();
        let ids: HashMap<String, i64> =
            index.chunks.iter().enumerate().map(|(i, c)| (c.id.clone(), i as i64)).collect();
        let imported = index.to_graph(&ids, None);
        assert_eq!((imported.tally.nodes, imported.tally.edges), (ENTITIES, RELATIONS));
        reads.push(t.elapsed().as_secs_f64());
    }
    reads.sort_by(f64::total_cmp);
    println!("engine read + to_graph: median {:.2} s (of 3)", reads[1]);

    let assay = env!("CARGO_BIN_EXE_assay");
    let db = dir.path().join("import.db");
    assert!(Command::new(assay).args(["project", "create", "Big", "--db"]).arg(&db).status().unwrap().success());
    let t = Instant::now();
    // /usr/bin/time is not everywhere: the child's peak RSS from wait4.
    let child = Command::new(assay)
        .args(["graph", "import", "Big"])
        .arg(&folder)
        .args(["--format", "lightrag", "--db"])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = t.elapsed().as_secs_f64();
    assert_eq!(status, 0, "assay graph import failed");
    println!(
        "assay graph import (SQLite): {wall:.1} s wall, peak RSS {:.0} MB; database {:.0} MB",
        usage.ru_maxrss as f64 / 1024.0,
        std::fs::metadata(&db).unwrap().len() as f64 / 1e6
    );
}

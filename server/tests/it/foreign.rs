//! Other systems' indexes imported as a project's corpus and graph
//! from the folders the real programs wrote (engine/tests/fixtures/
//! peers, made by `scripts/peers --fixtures`): every entity, relation and
//! chunk accounted for against the files' own counts, provenance from each
//! node to the chunks its `source_id` names, the explorer's sources, graph
//! questions generated from the imported graph, and the refusals.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::common::{self, assay, json};

fn fixture(program: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/fixtures/peers").join(program)
}

/// The folder's own counts, read the way its program wrote them:
/// GraphML `<node>`s and `<edge>`s (networkx writes one element each), and
/// the chunk store's keys.
struct Own {
    nodes: usize,
    edges: usize,
    chunks: BTreeSet<String>,
    docs: usize,
    /// Each entity's `source_id` chunks, by node id.
    sources: HashMap<String, BTreeSet<String>>,
}

fn own_counts(dir: &Path) -> Own {
    let graphml = std::fs::read_to_string(dir.join("graph_chunk_entity_relation.graphml")).unwrap();
    let doc = roxmltree::Document::parse(&graphml).unwrap();
    let key_of = |name: &str| {
        doc.descendants()
            .find(|n| {
                n.has_tag_name("key") && n.attribute("attr.name") == Some(name) && n.attribute("for") == Some("node")
            })
            .and_then(|n| n.attribute("id"))
            .unwrap()
            .to_string()
    };
    let src = key_of("source_id");
    let mut sources = HashMap::new();
    for n in doc.descendants().filter(|n| n.has_tag_name("node")) {
        let ids = n
            .children()
            .find(|d| d.attribute("key") == Some(src.as_str()))
            .and_then(|d| d.text())
            .unwrap_or("")
            .split("<SEP>")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        sources.insert(n.attribute("id").unwrap().to_string(), ids);
    }
    let chunks: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(dir.join("kv_store_text_chunks.json")).unwrap()).unwrap();
    let docs: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(dir.join("kv_store_full_docs.json")).unwrap()).unwrap();
    Own {
        nodes: doc.descendants().filter(|n| n.has_tag_name("node")).count(),
        edges: doc.descendants().filter(|n| n.has_tag_name("edge")).count(),
        chunks: chunks.keys().cloned().collect(),
        docs: docs.len(),
        sources,
    }
}

async fn imports_whole(program: &str, format: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "f").await;
    let folder = fixture(program);
    let own = own_counts(&folder);
    assert!(own.nodes > 20 && own.edges > 20 && own.chunks.len() > 4, "the fixture is a real index");
    json(&assay(&db, &["--json", "project", "create", "Theirs"], &[]).await);
    let report = json(
        &assay(&db, &["--json", "graph", "import", "Theirs", folder.to_str().unwrap(), "--format", format], &[]).await,
    );
    let t = &report["tally"];
    eprintln!("{program}: {report}");
    assert_eq!(t["entities"].as_u64().unwrap() as usize, own.nodes, "every entity read");
    assert_eq!(t["relations"].as_u64().unwrap() as usize, own.edges, "every relation read");
    assert_eq!(t["chunks"].as_u64().unwrap() as usize, own.chunks.len());
    assert_eq!(t["documents"].as_u64().unwrap() as usize, own.docs);
    // networkx's graph is undirected and has one element per entity: one node each, one edge each.
    assert_eq!(t["nodes"], t["entities"]);
    assert_eq!(t["edges"], t["relations"]);
    assert_eq!(t["unknown_chunks"], serde_json::json!([]));
    assert_eq!(
        report["chunks_located"].as_u64().unwrap() as usize,
        own.chunks.len(),
        "their chunks lie in their documents"
    );
    assert!(report["files_read"].as_array().unwrap().len() >= 3);

    let pool = db.open().await;
    let stored = |sql: &'static str| common::scalar(&pool, sql, &[]);
    assert_eq!(stored("SELECT COUNT(*) FROM graph_nodes").await as usize, own.nodes);
    assert_eq!(stored("SELECT COUNT(*) FROM graph_edges").await as usize, own.edges);
    assert_eq!(stored("SELECT COUNT(*) FROM documents").await as usize, own.docs);
    let external: BTreeSet<String> =
        common::texts(&pool, "SELECT external_id FROM chunks ORDER BY id", &[]).await.into_iter().collect();
    assert_eq!(external, own.chunks, "every chunk stored under its own id");

    // Provenance: each node's chunks are exactly those its source_id names.
    let project = app::ssr::store::projects::find_project(&pool, "Theirs").await.unwrap();
    let export = app::ssr::store::graph::export(&pool, project.summary.id).await.unwrap();
    let by_id: HashMap<i64, String> = common::texts(&pool, "SELECT id || ' ' || external_id FROM chunks", &[])
        .await
        .into_iter()
        .map(|s| {
            let (id, ext) = s.split_once(' ').unwrap();
            (id.parse().unwrap(), ext.to_string())
        })
        .collect();
    let mut own_sources: Vec<&BTreeSet<String>> = own.sources.values().collect();
    own_sources.sort();
    let mut ours: Vec<BTreeSet<String>> =
        export.nodes.iter().map(|n| n.source_chunk_ids.iter().map(|c| by_id[c].clone()).collect()).collect();
    ours.sort();
    assert_eq!(ours.iter().collect::<Vec<_>>(), own_sources, "each node's chunks are its source_id's");
    for n in export.nodes.iter().take(5) {
        let detail = app::ssr::store::graph::node_detail(&pool, project.summary.id, n.id).await.unwrap();
        assert!(!detail.sources.is_empty(), "{} leads back to its text", n.name);
    }

    // Graph-grounded questions from the imported graph (offline provider).
    let set = json(
        &assay(
            &db,
            &[
                "--json",
                "questions",
                "generate",
                "graph",
                "Theirs",
                "--node",
                "3",
                "--edge",
                "3",
                "--subgraph",
                "2",
                "--min-hops",
                "5",
            ],
            &[],
        )
        .await,
    );
    assert_eq!(set["questions"].as_u64(), Some(8), "{set}");

    // Its chunks are the graph's: re-chunking (the Corpus page's) is refused, the chunks stay.
    let settings = engine::chunk::ChunkSettings {
        chunk_tokens: 300,
        chunk_overlap: 20,
        tokenizer: engine::chunk::Tokenizer::default(),
    };
    let e = app::ssr::ingest::set_chunk_settings(&pool, project.summary.id, settings).await.unwrap_err();
    assert!(e.to_string().contains("imported"), "{e}");
    assert_eq!(stored("SELECT COUNT(*) FROM chunks").await as usize, own.chunks.len());

    // A second import into the same project is refused: it holds documents now.
    let out = assay(&db, &["graph", "import", "Theirs", folder.to_str().unwrap(), "--format", format], &[]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("already holds"), "{}", String::from_utf8_lossy(&out.stderr));
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lightrag_folder_imports_with_every_entity_relation_and_chunk() {
    imports_whole("lightrag", "lightrag").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nano_graphrag_folder_imports_with_its_communities() {
    imports_whole("nano-graphrag", "nano-graphrag").await;
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "n").await;
    json(&assay(&db, &["--json", "project", "create", "Nano"], &[]).await);
    let folder = fixture("nano-graphrag");
    let report = json(
        &assay(&db, &["--json", "graph", "import", "Nano", folder.to_str().unwrap(), "--format", "nano-graphrag"], &[])
            .await,
    );
    let reports: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(folder.join("kv_store_community_reports.json")).unwrap()).unwrap();
    let level0 = reports.values().filter(|r| r["level"] == 0).count();
    assert_eq!(report["communities"].as_u64().unwrap() as usize, level0, "{report}");
    assert_eq!(report["tally"]["community_level"], 0);
    let pool = db.open().await;
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM community_reports", &[]).await as usize, level0);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_folder_imports_from_a_zip_and_bad_folders_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "z").await;
    json(&assay(&db, &["--json", "project", "create", "Zipped"], &[]).await);
    let folder = fixture("lightrag");
    // A zip of the folder, inside a top folder as `zip -r` makes it.
    let zip_path = dir.path().join("rag_storage.zip");
    {
        let mut w = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("rag_storage/{}", path.file_name().unwrap().to_str().unwrap());
            w.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
            std::io::Write::write_all(&mut w, &std::fs::read(&path).unwrap()).unwrap();
        }
        w.finish().unwrap();
    }
    let report = json(
        &assay(&db, &["--json", "graph", "import", "Zipped", zip_path.to_str().unwrap(), "--format", "lightrag"], &[])
            .await,
    );
    assert_eq!(report["tally"]["entities"].as_u64().unwrap() as usize, own_counts(&folder).nodes);

    // An incomplete folder: the missing file is named, nothing is stored.
    json(&assay(&db, &["--json", "project", "create", "Partial"], &[]).await);
    let partial = dir.path().join("partial");
    std::fs::create_dir(&partial).unwrap();
    for f in ["graph_chunk_entity_relation.graphml", "kv_store_text_chunks.json"] {
        std::fs::copy(folder.join(f), partial.join(f)).unwrap();
    }
    let refused = |out: std::process::Output| {
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = refused(
        assay(&db, &["graph", "import", "Partial", partial.to_str().unwrap(), "--format", "lightrag"], &[]).await,
    );
    assert!(e.contains("kv_store_full_docs.json is missing"), "{e}");
    // The other program's folder under the wrong name says which it is.
    let e = refused(
        assay(
            &db,
            &["graph", "import", "Partial", fixture("nano-graphrag").to_str().unwrap(), "--format", "lightrag"],
            &[],
        )
        .await,
    );
    assert!(e.contains("--format nano-graphrag"), "{e}");
    let e = refused(
        assay(&db, &["graph", "import", "Partial", folder.to_str().unwrap(), "--format", "graphrag"], &[]).await,
    );
    assert!(e.contains("documents.parquet") && e.contains("missing"), "{e}");
    let pool = db.open().await;
    let partial_id = app::ssr::store::projects::find_project(&pool, "Partial").await.unwrap().summary.id;
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM documents WHERE project_id = $1", &[partial_id]).await, 0);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_microsoft_graphrag_output_folder_imports_with_its_communities_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "g").await;
    let folder = fixture("graphrag");
    // The tables as pandas (GraphRAG's own reader) counts them, written with the fixture.
    let own: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.parent().unwrap().join("graphrag-counts.json")).unwrap()).unwrap();
    json(&assay(&db, &["--json", "project", "create", "Microsoft"], &[]).await);
    let report = json(
        &assay(&db, &["--json", "graph", "import", "Microsoft", folder.to_str().unwrap(), "--format", "graphrag"], &[])
            .await,
    );
    eprintln!("graphrag: {report}");
    let t = &report["tally"];
    assert_eq!(t["documents"], own["documents"]);
    assert_eq!(t["chunks"], own["text_units"]);
    assert_eq!(t["entities"], own["entities"]);
    assert_eq!(t["relations"], own["relationships"]);
    assert_eq!(t["nodes"], own["entities"], "GraphRAG's titles are unique: one node each");
    // Its relationships are directed: a pair both ways is one undirected edge.
    let edges = t["edges"].as_u64().unwrap();
    let joined = t["relations_joined"].as_u64().unwrap() + t["self_loops"].as_u64().unwrap();
    assert_eq!(edges + joined, own["relationships"].as_u64().unwrap());
    assert_eq!(t["unknown_chunks"], serde_json::json!([]));
    assert_eq!(report["chunks_located"], own["text_units"], "each text unit lies in its document");
    // Level 0's communities and their reports become the project's.
    assert_eq!(t["community_level"], 0);
    assert_eq!(report["communities"], own["communities_by_level"]["0"]);
    let clustered = own["entities"].as_u64().unwrap() - own["entities_in_level_0"].as_u64().unwrap();
    assert_eq!(t["nodes_without_community"].as_u64().unwrap(), clustered, "the rest grouped by component");

    let pool = db.open().await;
    let project = app::ssr::store::projects::find_project(&pool, "Microsoft").await.unwrap().summary.id;
    let reports = app::ssr::store::graph::reports(&pool, project).await.unwrap();
    assert_eq!(reports.len() as u64, own["communities_by_level"]["0"].as_u64().unwrap());
    assert!(reports.iter().all(|r| !r.title.is_empty() && !r.summary.is_empty()), "{reports:?}");
    let line = app::ssr::store::foreign::import_record(&pool, project).await.unwrap().unwrap().line();
    assert!(line.starts_with("a Microsoft GraphRAG index (1.0 or later"), "{line}");
    assert!(line.contains("4 relations joined another's edge"), "{line}");
    pool.close().await;

    // Level 1 on request; a level the index lacks is refused with the ones it has.
    json(&assay(&db, &["--json", "project", "create", "Level1"], &[]).await);
    let report = json(
        &assay(
            &db,
            &[
                "--json",
                "graph",
                "import",
                "Level1",
                folder.to_str().unwrap(),
                "--format",
                "graphrag",
                "--community-level",
                "1",
            ],
            &[],
        )
        .await,
    );
    assert_eq!(report["communities"], own["communities_by_level"]["1"]);
    json(&assay(&db, &["--json", "project", "create", "Level7"], &[]).await);
    let out = assay(
        &db,
        &["graph", "import", "Level7", folder.to_str().unwrap(), "--format", "graphrag", "--community-level", "7"],
        &[],
    )
    .await;
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("no communities at level 7 (its levels: 0, 1)"), "{e}");
}

/// `corpus.index` in a manifest: the index's documents, chunks and graph
/// are the experiment's (no graph job, no extraction), graph questions come
/// from its graph and methods answer over it; a second run reuses it all;
/// a bad index or format is refused before any work, naming the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_takes_another_systems_index_as_its_corpus_and_graph() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "m").await;
    let manifest = |index: &str, format: &str| {
        format!(
            r#"
name = "Their index"
[corpus]
index = "{index}"
index_format = "{format}"
[[questions]]
kind = "graph"
node = 2
edge = 2
subgraph = 1
min_hops = 4
[[methods]]
name = "bm25"
[[methods]]
name = "graphrag-global"
[evaluation]
sets = [1]
trials = 1
judge = "offline"
sanity = false
"#
        )
    };
    let folder = fixture("nano-graphrag");
    let file = dir.path().join("theirs.toml");
    std::fs::write(&file, manifest(folder.to_str().unwrap(), "nano-graphrag")).unwrap();
    let plan = json(&assay(&db, &["--json", "run", file.to_str().unwrap(), "--plan"], &[]).await);
    let planned: Vec<&str> = plan["stages"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert!(!planned.contains(&"graph"), "an imported graph is not extracted: {planned:?}");
    assert_eq!(plan["stages"][0]["how"].as_str().unwrap().split(',').next(), Some("2 documents"), "{plan}");

    let first = json(&assay(&db, &["--json", "run", file.to_str().unwrap()], &[]).await);
    let kinds: Vec<&str> = first["stages"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["corpus", "questions", "answers", "answers", "evaluation"], "{first}");
    let pool = db.open().await;
    let project = app::ssr::store::projects::find_project(&pool, "Their index").await.unwrap().summary.id;
    let record = app::ssr::store::foreign::import_record(&pool, project).await.unwrap().unwrap();
    assert_eq!((record.tally.entities, record.tally.relations, record.tally.chunks), (66, 60, 29));
    // graphrag-global answered from nano-graphrag's own reports, kept as
    // imported (no job wrote them); it wrote reports only for the
    // communities of the nodes nano-graphrag left unclustered.
    let imported = common::scalar(&pool, "SELECT COUNT(*) FROM community_reports WHERE job_id IS NULL", &[]).await;
    assert_eq!(imported as usize, record.communities);
    let theirs: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(folder.join("kv_store_community_reports.json")).unwrap()).unwrap();
    let titles =
        common::texts(&pool, "SELECT title FROM community_reports WHERE job_id IS NULL ORDER BY community", &[]).await;
    for t in &titles {
        assert!(theirs.values().any(|r| r["report_json"]["title"] == t.as_str()), "{t} is nano-graphrag's");
    }
    let written = common::scalar(&pool, "SELECT COUNT(*) FROM community_reports WHERE job_id IS NOT NULL", &[]).await;
    let reports = app::ssr::store::graph::reports(&pool, project).await.unwrap();
    assert_eq!(reports.len() as i64, imported + written);
    assert!(reports.iter().filter(|r| r.community < record.communities).all(|r| titles.contains(&r.title)));
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM jobs WHERE kind = 'graph'", &[]).await, 0);
    pool.close().await;

    let again = json(&assay(&db, &["--json", "run", file.to_str().unwrap()], &[]).await);
    assert!(again["stages"].as_array().unwrap().iter().all(|s| s["reused"] == true), "{again}");

    for (index, format, key) in [
        (folder.to_str().unwrap(), "lightrag2", "corpus.index_format: lightrag, graphrag or nano-graphrag"),
        ("/no/such/rag_storage", "lightrag", "corpus.index: no folder or zip /no/such/rag_storage"),
        (folder.to_str().unwrap(), "lightrag", "corpus.index: "),
    ] {
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, manifest(index, format).replace("Their index", "Other")).unwrap();
        let out = assay(&db, &["run", bad.to_str().unwrap()], &[]).await;
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(key), "{key}: {stderr}");
    }
}

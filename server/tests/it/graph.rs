//! `assay graph build` and `assay graph export` on a real SQLite file with
//! the offline provider, on Alice's Adventures in Wonderland.

use crate::common;
use crate::common::corpora;

use std::collections::HashMap;

use common::{assay, json};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_graph_of_alice_is_built_stored_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "g").await;
    json(&assay(&db, &["--json", "project", "create", "Alice"], &[]).await);
    let alice = corpora().join("alice_in_wonderland.txt");
    json(&assay(&db, &["--json", "corpus", "add", "Alice", alice.to_str().unwrap()], &[]).await);

    let built = json(&assay(&db, &["--json", "graph", "build", "Alice", "--gleaning", "1"], &[]).await);
    assert_eq!(built["status"], "done");
    let summaries = built["description_summaries"].as_u64().unwrap();
    assert!(summaries >= 3, "Alice and the most frequent characters are described in many chunks: {built}");
    assert_eq!(built["llm_calls"].as_u64().unwrap(), 78 + summaries, "39 chunks × (1 + 1 gleaning) + summaries");
    assert!(built["nodes"].as_u64().unwrap() > 100, "{built}");
    assert!(built["largest_component"].as_u64().unwrap() * 2 > built["nodes"].as_u64().unwrap(), "{built}");
    let communities = built["communities"].as_u64().unwrap();
    assert!(communities > built["components"].as_u64().unwrap(), "Leiden splits the large component: {built}");

    let export = json(&assay(&db, &["graph", "export", "Alice"], &[]).await);
    let nodes = export["nodes"].as_array().unwrap();
    let edges = export["edges"].as_array().unwrap();
    assert_eq!(nodes.len() as u64, built["nodes"].as_u64().unwrap());
    assert_eq!(edges.len() as u64, built["edges"].as_u64().unwrap());
    let names: HashMap<i64, &str> =
        nodes.iter().map(|n| (n["id"].as_i64().unwrap(), n["name"].as_str().unwrap())).collect();
    let mut degree: HashMap<&str, usize> = HashMap::new();
    for e in edges {
        for end in ["source", "target"] {
            let name = names.get(&e[end].as_i64().unwrap()).expect("edges refer to node ids");
            *degree.entry(name).or_default() += 1;
        }
        assert!(!e["source_chunk_ids"].as_array().unwrap().is_empty(), "edge provenance");
    }
    let top = degree.iter().max_by_key(|(_, d)| **d).unwrap();
    assert_eq!(*top.0, "Alice");
    let budget = engine::graph::describe::DEFAULT_BUDGET;
    for n in nodes {
        let tokens =
            engine::chunk::Bpe::count(engine::chunk::Tokenizer::Cl100kBase, n["description"].as_str().unwrap());
        assert!(tokens <= budget + 10, "{} has {tokens} tokens of description", n["name"]);
    }
    let hatter = nodes.iter().find(|n| n["name"] == "Hatter").unwrap();
    assert_eq!(hatter["type"], "person");
    assert!(!hatter["source_chunk_ids"].as_array().unwrap().is_empty());

    let graphml = assay(&db, &["graph", "export", "Alice", "--format", "graphml"], &[]).await;
    let text = String::from_utf8(graphml.stdout).unwrap();
    assert!(text.starts_with("<?xml") && text.trim_end().ends_with("</graphml>"));
    assert_eq!(text.matches("<node ").count(), nodes.len());
    assert_eq!(text.matches("<edge ").count(), edges.len());
    let most = nodes.iter().map(|n| n["community"].as_u64().unwrap()).max().unwrap();
    assert_eq!(most + 1, communities, "every community number is used, 0 the largest");

    // A second build gives the same graph (the offline stand-ins' replies
    // are made again, not cached).
    let again = json(&assay(&db, &["--json", "graph", "build", "Alice"], &[]).await);
    assert_eq!((again["nodes"].clone(), again["edges"].clone()), (built["nodes"].clone(), built["edges"].clone()));
    let pool = db.open().await;
    let from_cache = "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND cached = TRUE";
    assert_eq!(common::scalar(&pool, from_cache, &[again["job"].as_i64().unwrap()]).await, 0);

    // Resuming a finished graph job redoes nothing and keeps its counts:
    // the summary items follow from the extractions, not from the
    // already-summarised graph.
    let job = again["job"].as_i64().unwrap().to_string();
    json(&assay(&db, &["--json", "job", "resume", &job], &[]).await);
    let shown = json(&assay(&db, &["--json", "job", "show", &job], &[]).await);
    assert_eq!((shown["done"].clone(), shown["total"].clone()), (json!(39 + summaries), json!(39 + summaries)));
    let export_after = json(&assay(&db, &["graph", "export", "Alice"], &[]).await);
    assert_eq!(export_after["nodes"].as_array().unwrap().len(), nodes.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_is_imported_from_the_export_layout_and_bad_files_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "i").await;
    json(&assay(&db, &["--json", "project", "create", "Imported"], &[]).await);
    let file = dir.path().join("g.json");
    // Two names that normalise alike ("The Salt Guild", "salt guild") become one node.
    std::fs::write(
        &file,
        r#"{"nodes": [{"id": 10, "name": "The Salt Guild", "type": "organization"},
                      {"id": 11, "name": "salt guild"},
                      {"id": 12, "name": "Isobel Pell", "type": "person", "description": "First warden."}],
            "edges": [{"source": 12, "target": 10, "description": "warden of", "weight": 2},
                      {"source": 11, "target": 12, "description": "founded by"}]}"#,
    )
    .unwrap();
    let imported = json(&assay(&db, &["--json", "graph", "import", "Imported", file.to_str().unwrap()], &[]).await);
    assert_eq!((imported["nodes"].as_u64(), imported["edges"].as_u64()), (Some(2), Some(1)));
    let export = json(&assay(&db, &["graph", "export", "Imported"], &[]).await);
    assert_eq!(export["edges"][0]["weight"], 3.0, "weights of merged relations add (a missing one counts 1)");
    assert_eq!(export["edges"][0]["description"], "warden of\nfounded by");

    for (body, reason) in [
        ("not json", "is not a graph in the export layout"),
        (
            r#"{"nodes": [{"id": 1, "name": "A"}], "edges": [{"source": 1, "target": 2}]}"#,
            "edge 1 refers to node 1 or 2, which is not among the nodes",
        ),
        (r#"{"nodes": [{"id": 1, "name": "A"}, {"id": 1, "name": "B"}], "edges": []}"#, "node id 1 appears twice"),
        (r#"{"nodes": [{"id": 1, "name": " ... "}], "edges": []}"#, "node 1 has an empty name"),
    ] {
        std::fs::write(&file, body).unwrap();
        let out = assay(&db, &["graph", "import", "Imported", file.to_str().unwrap()], &[]).await;
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(reason), "{body}: {stderr}");
    }
    // The refused files changed nothing.
    let again = json(&assay(&db, &["graph", "export", "Imported"], &[]).await);
    assert_eq!(again, export);
}

//! `assay metrics run` on a real SQLite file with the in-process MiniLM:
//! a hierarchical question set with reference answers (sample corpus,
//! offline), BM25's answers and an imported answer set that repeats the
//! references word for word — which must score cosine 1, ROUGE-1 1 and
//! BLEU 100, with no retrieval metrics (it recorded no chunks) — and BM25's
//! retrieval metrics, per-category rows, granularity levels and the LV × QC
//! cells; wrong inputs are refused by name.

mod common;

use common::{assay, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_sets_are_scored_against_the_references() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let set = common::sample_hierarchical(&db, "QC,LV", 1).await;
    json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25"], &[]).await);
    // An answer set that repeats every reference answer.
    let pool = app::store::open(&db).await.unwrap();
    let questions = app::store::questions::list_questions(&pool, set.parse().unwrap()).await.unwrap();
    assert_eq!(questions.len(), 2 * (2 + 4) + 4, "QC and LV at 2 and 4 categories, and 4 factorial cells");
    let lines: Vec<String> = questions
        .iter()
        .map(|q| serde_json::json!({"question_id": q.id, "answer": q.reference_answer}).to_string())
        .collect();
    let file = dir.path().join("refs.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let imported = json(
        &assay(
            &db,
            &["--json", "answers", "import", "A", "--set", &set, "--name", "References", file.to_str().unwrap()],
            &[],
        )
        .await,
    );
    let refs_id = imported["answers_id"].to_string();

    let out = json(
        &assay(&db, &["--json", "metrics", "run", "A", "--set", &set, "--answers", &format!("1,{refs_id}")], &[]).await,
    );
    let sets = out["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 2);
    let (bm25, same) = (&sets[0], &sets[1]);
    // The references against themselves.
    let o = &same["overall"];
    assert_eq!(o["n"], questions.len());
    assert!((o["cs"].as_f64().unwrap() - 1.0).abs() < 1e-5, "{o}");
    let close = |v: &serde_json::Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(close(&o["rouge1"], 1.0) && close(&o["bleu"], 100.0) && close(&same["corpus_bleu"], 100.0), "{o}");
    assert!(o["map"].is_null() && o["recall"].is_null(), "imported answers record no retrieval");
    // BM25: retrieval against each question's source chunk, generation lower.
    let b = &bm25["overall"];
    let per_q = bm25["questions"].as_array().unwrap();
    let aps: Vec<f64> = per_q.iter().map(|q| q["ap"].as_f64().unwrap()).collect();
    assert!((b["map"].as_f64().unwrap() - aps.iter().sum::<f64>() / aps.len() as f64).abs() < 1e-12);
    assert!(aps.iter().all(|a| (0.0..=1.0).contains(a)) && b["recall"].as_f64().unwrap() > 0.5, "{b}");
    assert!(b["cs"].as_f64().unwrap() < 0.99 && b["rouge1"].as_f64().unwrap() < 1.0);
    let categories: Vec<&str> =
        bm25["per_category"].as_array().unwrap().iter().map(|c| c["group"].as_str().unwrap()).collect();
    assert!(categories.contains(&"QC/simple") && categories.contains(&"LV/distant × QC/complex"), "{categories:?}");
    let dims: Vec<&str> =
        bm25["granularity"].as_array().unwrap().iter().map(|d| d["dimension"].as_str().unwrap()).collect();
    assert_eq!(dims, ["LV", "QC"]);
    let qc = &bm25["granularity"][1];
    assert_eq!(
        qc["levels"].as_array().unwrap().iter().map(|l| l["categories"].as_i64().unwrap()).collect::<Vec<_>>(),
        [2, 4]
    );
    assert_eq!(qc["splits"].as_array().unwrap().len(), 2, "each coarse QC category and its two children");
    assert_eq!(bm25["factorial"].as_array().unwrap().len(), 4);

    // Refused by name.
    let graph_set = assay(&db, &["metrics", "run", "A", "--set", "99", "--answers", "1"], &[]).await;
    assert!(!graph_set.status.success());
    json(&assay(&db, &["--json", "project", "create", "B"], &[]).await);
    let other = assay(&db, &["metrics", "run", "B", "--set", &set, "--answers", "1"], &[]).await;
    assert!(String::from_utf8_lossy(&other.stderr).contains("belongs to another project"));
}

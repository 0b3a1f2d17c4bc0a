//! `assay metrics run` on a real SQLite file with the in-process MiniLM:
//! a hierarchical question set with reference answers (sample corpus,
//! offline), BM25's answers and an imported answer set that repeats the
//! references word for word — which must score cosine 1, ROUGE-1 1 and
//! BLEU 100, with no retrieval metrics (it recorded no chunks) — and BM25's
//! retrieval metrics, per-category rows, granularity levels and the LV × QC
//! table; the run is stored with its report and files, and a second run
//! over the same texts embeds nothing; wrong inputs are refused by name.
//! And seed 004's configuration — BM25, k = 10, over 512-token chunks of
//! real text — scored at each relevance unit against retrieval metrics
//! recomputed here from each answer's recorded chunks.

use crate::common;

use common::{assay, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_sets_are_scored_against_the_references() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "m").await;
    let set = common::sample_hierarchical(&db, "QC,LV", 1).await;
    json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25"], &[]).await);
    // An answer set that repeats every reference answer.
    let pool = db.open().await;
    let questions = app::ssr::store::questions::list_questions(&pool, set.parse().unwrap()).await.unwrap();
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
    // Table 4: the four cells in the hierarchy's order, gaps, pooled levels.
    let f = &bm25["factorial"];
    let cells: Vec<(String, String)> = f["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["lv"].as_str().unwrap().to_string(), c["qc"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        cells,
        [("similar", "simple"), ("similar", "complex"), ("distant", "simple"), ("distant", "complex")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    let cs = |v: &serde_json::Value| v["cs"].as_f64().unwrap();
    assert!(f["cells"][0]["gap"].is_null());
    assert!((f["cells"][1]["gap"].as_f64().unwrap() - (cs(&f["cells"][1]) - cs(&f["cells"][0]))).abs() < 1e-12);
    let pooled_similar = (cs(&f["cells"][0]) + cs(&f["cells"][1])) / 2.0; // one question per cell
    assert!((cs(&f["lv_pooled"][0]) - pooled_similar).abs() < 1e-12, "{f}");
    assert!((f["lv_effect"].as_f64().unwrap() - (cs(&f["lv_pooled"][0]) - cs(&f["lv_pooled"][1])).abs()).abs() < 1e-12);

    // The run is stored: listed, its files written; the report equals the run's.
    let run_id = out["run_id"].as_i64().unwrap();
    let listed = json(&assay(&db, &["--json", "metrics", "list", "A"], &[]).await);
    assert_eq!(listed[0]["id"], run_id);
    assert_eq!(listed[0]["finished"], true);
    let files = dir.path().join("files");
    let written = json(
        &assay(&db, &["--json", "metrics", "report", &run_id.to_string(), "--out", files.to_str().unwrap()], &[]).await,
    );
    let names: Vec<&str> = written["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    for name in ["questions.csv", "report.json", "report.html", "power-1.svg", "power-1.png", "tree-1-QC.png"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let csv = std::fs::read_to_string(files.join("questions.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * questions.len());
    let html = std::fs::read_to_string(files.join("report.html")).unwrap();
    assert!(
        html.contains("LV × QC") && html.contains("https://arxiv.org/abs/2606.12789") && html.contains("<svg"),
        "the HTML holds its tables and charts"
    );
    assert!(std::fs::read(files.join("power-1.png")).unwrap().starts_with(b"\x89PNG"));

    // Every text was embedded once: a second run embeds nothing and scores the same.
    let vectors: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM text_vectors").fetch_one(db).await).unwrap();
    assert!(vectors >= questions.len() as i64, "references and BM25's answers: {vectors}");
    let again = json(&assay(&db, &["--json", "metrics", "run", "A", "--set", &set, "--answers", "1"], &[]).await);
    assert_ne!(again["run_id"], out["run_id"]);
    assert_eq!(again["sets"][0]["overall"], bm25["overall"]);
    let embedded = common::packed_texts(
        &pool,
        "SELECT i.result, i.result_z FROM job_items i JOIN metrics_runs m ON m.job_id = i.job_id WHERE m.id = $1",
        &[again["run_id"].as_i64().unwrap()],
    )
    .await;
    assert!(!embedded.is_empty());
    for r in &embedded {
        assert_eq!(serde_json::from_str::<serde_json::Value>(r).unwrap()["embedded"], 0, "{r}");
    }
    let after: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM text_vectors").fetch_one(db).await).unwrap();
    assert_eq!(after, vectors);

    // Refused by name.
    let graph_set = assay(&db, &["metrics", "run", "A", "--set", "99", "--answers", "1"], &[]).await;
    assert!(!graph_set.status.success());
    json(&assay(&db, &["--json", "project", "create", "B"], &[]).await);
    let other = assay(&db, &["metrics", "run", "B", "--set", &set, "--answers", "1"], &[]).await;
    assert!(String::from_utf8_lossy(&other.stderr).contains("belongs to another project"));
}

/// Seed 004's retrieval configuration on real text: 512-token chunks (50
/// overlapping), BM25 with k = 10, over the UltraDomain slice and a
/// Christmas Carol (six documents). Every answer records its chunks (10, or
/// fewer when fewer share a term with the question), and each question's
/// AP, nDCG@10 and Recall@10 equal those recomputed here from that ranking
/// at each relevance unit: the source chunk, a chunk overlapping it (the
/// passage), or any chunk of its document (seed 004's unit, the default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bm25_top_10_over_512_token_chunks_at_each_relevance_unit() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "m").await;
    let corpora = format!("{}/../../shared/corpora", env!("CARGO_MANIFEST_DIR"));
    json(
        &assay(&db, &["--json", "project", "create", "C", "--chunk-tokens", "512", "--chunk-overlap", "50"], &[]).await,
    );
    for file in ["christmas_carol_stave1.txt", "ultradomain_mix_slice5.jsonl"] {
        let added = json(&assay(&db, &["--json", "corpus", "add", "C", &format!("{corpora}/{file}")], &[]).await);
        assert!(added.to_string().contains("chunks"), "{added}");
    }
    let args = [
        "--json",
        "questions",
        "generate",
        "hierarchical",
        "C",
        "--per-category",
        "2",
        "--levels",
        "2,4",
        "--dimensions",
        "QC,LV",
    ];
    let set = json(&assay(&db, &args, &[]).await)["set_id"].to_string();
    json(
        &assay(&db, &["--json", "answers", "generate", "C", "--set", &set, "--method", "bm25", "--param", "k=10"], &[])
            .await,
    );
    let pool = db.open().await;
    let spans: std::collections::HashMap<i64, (i64, i64, i64)> =
        app::on_db!(&pool, |db| sqlx::query_as::<_, (i64, i64, i64, i64)>(
            "SELECT id, document_id, start_byte, end_byte FROM chunks"
        )
        .fetch_all(db)
        .await)
        .unwrap()
        .into_iter()
        .map(|(id, d, s, e)| (id, (d, s, e)))
        .collect();
    let documents: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM documents").fetch_one(db).await).unwrap();
    assert_eq!(documents, 6);
    assert!(spans.len() > 30, "more than 30 chunks of 512 tokens: {}", spans.len());
    let questions = app::ssr::store::questions::list_questions(&pool, set.parse().unwrap()).await.unwrap();
    let answers = app::ssr::store::answers::list_answers(&pool, 1, None).await.unwrap();
    let mut maps = Vec::new();
    let mut per_unit: Vec<std::collections::HashMap<i64, f64>> = Vec::new();
    for unit in ["chunk", "passage", "document"] {
        let mut run = vec!["--json", "metrics", "run", "C", "--set", &set, "--answers", "1"];
        if unit != "document" {
            run.extend(["--unit", unit]);
        }
        let out = json(&assay(&db, &run, &[]).await);
        assert_eq!(out["relevance_unit"], unit, "the report states its unit");
        let scored = out["sets"][0]["questions"].as_array().unwrap();
        assert_eq!(scored.len(), questions.len());
        let mut full = 0;
        let mut aps = std::collections::HashMap::new();
        for q in scored {
            let id = q["question_id"].as_i64().unwrap();
            let question = questions.iter().find(|x| x.id == id).unwrap();
            let answer = answers.iter().find(|a| a.question_id == id).unwrap();
            let ranked: Vec<i64> =
                answer.contexts.iter().filter(|c| c.kind == "chunk").map(|c| c.id.parse().unwrap()).collect();
            assert!((1..=10).contains(&ranked.len()), "{ranked:?}");
            full += usize::from(ranked.len() == 10);
            let source = &question.source_chunk_ids;
            assert_eq!(source.len(), 1, "a hierarchical question comes from one chunk");
            let (sd, ss, se) = spans[&source[0]];
            // Whether the chunk at each rank matches the source, at this unit.
            let matches = |c: i64| {
                let (d, s, e) = spans[&c];
                match unit {
                    "chunk" => c == source[0],
                    "passage" => d == sd && s < se && ss < e,
                    _ => d == sd,
                }
            };
            // One relevant unit: the first matching rank is the hit.
            let first = ranked.iter().position(|c| matches(*c));
            let ap = first.map_or(0.0, |i| 1.0 / (i + 1) as f64);
            let ndcg = first.map_or(0.0, |i| 1.0 / ((i + 2) as f64).log2());
            let close = |v: &serde_json::Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-12;
            assert!(close(&q["ap"], ap), "{unit}: {q} vs AP {ap}");
            assert!(close(&q["ndcg"], ndcg), "{unit}: {q}");
            assert!(close(&q["recall"], f64::from(u8::from(first.is_some()))), "{unit}: {q}");
            aps.insert(id, ap);
        }
        assert!(full * 2 > scored.len(), "most questions get all 10: {full} of {}", scored.len());
        maps.push(out["sets"][0]["overall"]["map"].as_f64().unwrap());
        per_unit.push(aps);
    }
    // A coarser unit never scores a question lower; over this corpus it
    // scores the set higher.
    for (id, ap) in &per_unit[0] {
        assert!(per_unit[1][id] >= *ap && per_unit[2][id] >= per_unit[1][id], "question {id}");
    }
    println!("MAP at the chunk, passage and document units: {maps:?}");
    assert!(maps[2] > maps[0], "{maps:?}");

    // As published: the HieraRAG authors' code counts every
    // retrieved chunk of the source document as a hit — recomputed here
    // from the ranking — and the standard scores ride along as `other`.
    let files = dir.path().join("published");
    let run = ["--json", "metrics", "run", "C", "--set", &set, "--answers", "1", "--definitions", "as-published"];
    let out = json(&assay(&db, &[&run[..], &["--out", files.to_str().unwrap()]].concat(), &[]).await);
    assert_eq!(out["definitions"], "as-published", "the report states its definitions");
    let mut above_one = 0;
    for q in out["sets"][0]["questions"].as_array().unwrap() {
        let id = q["question_id"].as_i64().unwrap();
        let question = questions.iter().find(|x| x.id == id).unwrap();
        let answer = answers.iter().find(|a| a.question_id == id).unwrap();
        let source_doc = spans[&question.source_chunk_ids[0]].0;
        let hits: Vec<usize> = answer
            .contexts
            .iter()
            .filter(|c| c.kind == "chunk")
            .enumerate()
            .filter(|(_, c)| spans[&c.id.parse::<i64>().unwrap()].0 == source_doc)
            .map(|(i, _)| i + 1)
            .collect();
        let ap: f64 = hits.iter().enumerate().map(|(j, pos)| (j + 1) as f64 / *pos as f64).sum();
        let ndcg: f64 = hits.iter().map(|pos| 1.0 / ((pos + 1) as f64).log2()).sum();
        let close = |v: &serde_json::Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-12;
        assert!(close(&q["ap"], ap) && close(&q["ndcg"], ndcg) && close(&q["recall"], hits.len() as f64), "{q}");
        assert_eq!(q["other"]["definitions"], "standard");
        assert!(close(&q["other"]["ap"], per_unit[2][&id]), "{q}");
        above_one += usize::from(ap > 1.0);
    }
    assert!(above_one > 0, "a document retrieved as several chunks scores above 1");
    let csv = std::fs::read_to_string(files.join("questions.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",definitions"));
    assert!(csv.lines().skip(1).all(|l| l.ends_with(",as-published")), "{csv}");
    let html = std::fs::read_to_string(files.join("report.html")).unwrap();
    assert!(html.contains("Definitions: as published in the HieraRAG authors"), "the HTML report says so");
}

/// Without the embedding model every batch fails: the run ends with no
/// report and says why (no partial report), its page says so too; with the
/// model back, retrying the failed batches finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_its_model_fails_whole_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "m").await;
    let set = common::sample_hierarchical(&db, "QC", 0).await;
    json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25"], &[]).await);
    let missing = dir.path().join("no-model");
    let env = [("ASSAY_MINILM_DIR", missing.to_str().unwrap())];
    let failed = assay(&db, &["metrics", "run", "A", "--set", &set, "--answers", "1"], &env).await;
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("its one item failed") && stderr.contains("no-model"), "{stderr}");
    let pool = db.open().await;
    let run = app::ssr::store::metrics::list(&pool, 1).await.unwrap().remove(0);
    assert!(run.report.is_none(), "no partial report");
    let refused = app::ssr::metrics::report(&pool, run.id).await.unwrap_err().to_string();
    assert!(refused.contains("has no report yet") && refused.contains("failed"), "{refused}");
    let job = run.job_id.unwrap().to_string();
    json(&assay(&db, &["--json", "job", "resume", &job, "--retry-failed"], &[]).await);
    let report = app::ssr::metrics::report(&pool, run.id).await.unwrap();
    assert_eq!(report.sets[0].overall.n, 6, "QC at 2 and 4 categories, one question each");
}

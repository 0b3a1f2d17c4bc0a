//! `assay questions` on a real SQLite file with the offline provider: graph
//! questions for the sample corpus at every level with their provenance,
//! reproducible from the seed and the cache, exported as JSONL and CSV, and
//! a clear error when no subgraph can be large enough.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{assay, json};
use serde_json::Value;

async fn sample_with_graph(db: &common::TestDb) {
    json(&assay(db, &["--json", "project", "create", "Q"], &[]).await);
    json(&assay(db, &["--json", "corpus", "add", "Q", "--sample"], &[]).await);
    json(&assay(db, &["--json", "graph", "build", "Q"], &[]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graph_questions_at_every_level_keep_their_provenance_and_reproduce() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "q").await;
    sample_with_graph(&db).await;
    let args = [
        "--json",
        "questions",
        "generate",
        "graph",
        "Q",
        "--node",
        "6",
        "--edge",
        "5",
        "--subgraph",
        "3",
        "--min-hops",
        "20",
    ];
    let made = json(&assay(&db, &args, &[]).await);
    assert_eq!(made["status"], "done");
    assert_eq!(made["questions"], 14);
    assert_eq!(made["counts"], serde_json::json!({"node": 6, "edge": 5, "subgraph": 3}));
    let set = made["set_id"].as_i64().unwrap().to_string();

    let export = assay(&db, &["questions", "export", "Q", "--set", &set], &[]).await;
    let lines: Vec<Value> =
        String::from_utf8(export.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 14);
    let graph = json(&assay(&db, &["graph", "export", "Q"], &[]).await);
    let keys: BTreeSet<String> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| engine::graph::normalise_name(n["name"].as_str().unwrap()))
        .collect();
    for q in &lines {
        let text = q["question"].as_str().unwrap();
        assert!(text.ends_with('?'), "{text}");
        assert!(!q["source_chunk_ids"].as_array().unwrap().is_empty(), "provenance: {q}");
        assert_eq!(q["generator"], "graph");
        assert_eq!(q["seed"], 42);
        assert_eq!(q["prompt_hash"].as_str().unwrap().len(), 64);
        let nodes: Vec<&str> = q["nodes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        assert!(nodes.iter().all(|n| keys.contains(*n)), "sampled nodes are graph nodes: {q}");
        match q["level"].as_str().unwrap() {
            "node" => assert_eq!(nodes.len(), 1),
            "edge" => assert_eq!(q["edges"].as_array().unwrap().len(), 1),
            "subgraph" => {
                assert!(q["edges"].as_array().unwrap().len() >= 20, "at least the minimum distinct hops");
                assert!(q["walk"].as_array().unwrap().len() > 20);
            }
            other => panic!("level {other}"),
        }
    }
    let node_entities: BTreeSet<&str> =
        lines.iter().filter(|q| q["level"] == "node").map(|q| q["nodes"][0].as_str().unwrap()).collect();
    assert_eq!(node_entities.len(), 6, "entities are drawn without replacement");

    // The same seed gives the same questions, from the cache.
    let again = json(&assay(&db, &args, &[]).await);
    let export2 =
        assay(&db, &["questions", "export", "Q", "--set", &again["set_id"].as_i64().unwrap().to_string()], &[]).await;
    let strip = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("id");
        v
    };
    let lines2: Vec<Value> =
        String::from_utf8(export2.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.iter().map(strip).collect::<Vec<_>>(), lines2.iter().map(strip).collect::<Vec<_>>());
    let pool = db.open().await;
    // (The offline stand-ins' replies are made again, not cached.)
    let from_cache = "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND cached = TRUE";
    assert_eq!(common::scalar(&pool, from_cache, &[again["job"].as_i64().unwrap()]).await, 0);

    // Listing and CSV.
    let sets = json(&assay(&db, &["--json", "questions", "list", "Q"], &[]).await);
    assert_eq!(sets.as_array().unwrap().len(), 2);
    let csv = String::from_utf8(
        assay(&db, &["questions", "export", "Q", "--set", &set, "--format", "csv"], &[]).await.stdout,
    )
    .unwrap();
    assert!(csv.starts_with("id,question,level,category,expertise,reference_answer,source_chunk_ids,"));
    assert_eq!(csv.lines().count(), 15);

    // Export → import → export is lossless but for the ids, in both formats.
    for (format, ext) in [("jsonl", "jsonl"), ("csv", "csv")] {
        let file = dir.path().join(format!("set.{ext}"));
        let exported = assay(&db, &["questions", "export", "Q", "--set", &set, "--format", format], &[]).await;
        std::fs::write(&file, &exported.stdout).unwrap();
        let imported = json(&assay(&db, &["--json", "questions", "import", "Q", file.to_str().unwrap()], &[]).await);
        assert_eq!(imported["questions"], 14);
        let round = assay(&db, &["questions", "export", "Q", "--set", &imported["set_id"].to_string()], &[]).await;
        let lines3: Vec<Value> =
            String::from_utf8(round.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(
            lines3.iter().map(strip).collect::<Vec<_>>(),
            lines.iter().map(strip).collect::<Vec<_>>(),
            "{format}"
        );
    }
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"question\": \"Why?\"}\n{\"level\": \"node\"}\n").unwrap();
    let out = assay(&db, &["questions", "import", "Q", bad.to_str().unwrap()], &[]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2: missing field `question`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minimum_no_component_can_reach_is_refused_with_the_reason_and_makes_no_set() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "q").await;
    sample_with_graph(&db).await;
    let out =
        assay(&db, &["questions", "generate", "graph", "Q", "--subgraph", "1", "--min-hops", "100000"], &[]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no connected component of the graph has 100000 edges (the largest has"), "{stderr}");
    let sets = json(&assay(&db, &["--json", "questions", "list", "Q"], &[]).await);
    assert_eq!(sets, serde_json::json!([]));

    // Without a graph: say so.
    json(&assay(&db, &["--json", "project", "create", "Empty"], &[]).await);
    let out = assay(&db, &["questions", "generate", "graph", "Empty"], &[]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("the project has no graph yet: build it first"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_baseline_describes_heads_and_tails_and_its_lightrag_replica_drops_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "s").await;
    json(&assay(&db, &["--json", "project", "create", "Alice"], &[]).await);
    let alice = std::env::var_os("ASSAY_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"))
        .join("alice_in_wonderland.txt");
    json(&assay(&db, &["--json", "corpus", "add", "Alice", alice.to_str().unwrap()], &[]).await);

    let made = json(&assay(&db, &["--json", "questions", "generate", "summary", "Alice"], &[]).await);
    assert_eq!(made["questions"], 125, "5 users × 5 tasks × 5 questions");
    assert_eq!(made["counts"], serde_json::json!({"summary": 125}));
    assert_eq!(made["llm_calls"], 1);
    let small =
        ["--json", "questions", "generate", "summary", "Alice", "--users", "1", "--tasks", "1", "--per-task", "2"];
    let correct = json(&assay(&db, &small, &[]).await);
    let mut replica_args = small.to_vec();
    replica_args.push("--replicate-lightrag");
    let replica = json(&assay(&db, &replica_args, &[]).await);
    assert_eq!(replica["questions"], 2);

    let pool = db.open().await;
    let prompt = |job: &Value| {
        let pool = pool.clone();
        let job = job["job"].as_i64().unwrap();
        async move {
            let prompts = common::prompts(&pool, "c.job_id = $1", &[job]).await;
            assert_eq!(prompts.len(), 1, "one call");
            prompts.into_iter().next().unwrap()
        }
    };
    let (correct, replica) = (prompt(&correct).await, prompt(&replica).await);
    assert!(correct.contains("Alice was beginning to get very tired"), "the head");
    assert!(correct.contains("the happy summer days"), "the tail");
    assert!(correct.contains("identify 1 potential users"));
    // LightRAG's slices: tokens 1000–2000, and nothing from the end (issue #1203).
    assert!(!replica.contains("Alice was beginning to get very tired"));
    assert!(!replica.contains("the happy summer days"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hierarchical_questions_carry_reference_answers_per_category_and_the_check_drops_misfits() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "h").await;
    json(&assay(&db, &["--json", "project", "create", "H"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "H", "--sample"], &[]).await);
    let args = ["--json", "questions", "generate", "hierarchical", "H", "--per-category", "2", "--factorial", "2"];
    let made = json(&assay(&db, &args, &[]).await);
    assert_eq!(made["questions"], 2 * 3 * (2 + 4 + 8) + 2 * 4);
    for (level, n) in [("QC 2", 4), ("QC 4", 8), ("QC 8", 16), ("AT 8", 16), ("LV 4", 8), ("LV × QC", 8)] {
        assert_eq!(made["counts"][level], n, "{level}: {made}");
    }
    let set = made["set_id"].to_string();
    let export = assay(&db, &["questions", "export", "H", "--set", &set], &[]).await;
    let lines: Vec<Value> =
        String::from_utf8(export.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let novices = lines.iter().filter(|q| q["expertise"] == "novice").count();
    assert_eq!(novices * 2, lines.len(), "novice/expert 50/50");
    for q in &lines {
        assert!(!q["reference_answer"].as_str().unwrap().is_empty());
        assert_eq!(q["source_chunk_ids"].as_array().unwrap().len(), 1);
        let category = q["category"].as_str().unwrap();
        let depth = category.split(" × ").next().unwrap().matches('/').count();
        if q["level"] != "LV × QC" {
            assert_eq!(q["level"].as_str().unwrap(), format!("{} {}", &category[..2], 1 << depth));
        }
    }

    // With the adherence check, misfits are dropped and counted.
    let mut checked = args.to_vec();
    checked.push("--adherence-check");
    let made = json(&assay(&db, &checked, &[]).await);
    let kept = made["questions"].as_u64().unwrap();
    let sets = json(&assay(&db, &["--json", "questions", "list", "H"], &[]).await);
    let parameters: Value = serde_json::from_str(sets[1]["parameters"].as_str().unwrap()).unwrap();
    let dropped = parameters["dropped_by_adherence_check"].as_u64().unwrap();
    assert!(dropped > 0, "the offline lexical rule rejects some distant-vocabulary questions");
    assert_eq!(kept + dropped, 92);
    assert_eq!(made["llm_calls"], 92 * 2, "one question and one check per item");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relevance_of_bm25_context_is_scored_per_question_and_favours_graph_questions() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "r").await;
    sample_with_graph(&db).await;
    let graph = json(
        &assay(
            &db,
            &["--json", "questions", "generate", "graph", "Q", "--node", "10", "--edge", "10", "--subgraph", "0"],
            &[],
        )
        .await,
    );
    let summary = json(
        &assay(
            &db,
            &["--json", "questions", "generate", "summary", "Q", "--users", "2", "--tasks", "2", "--per-task", "5"],
            &[],
        )
        .await,
    );
    let svg = dir.path().join("rel.svg");
    let mut means = Vec::new();
    for set in [&graph, &summary] {
        let id = set["set_id"].to_string();
        let args = [
            "--json",
            "questions",
            "relevance",
            "Q",
            "--set",
            &id,
            "--retriever",
            "bm25",
            "--svg",
            svg.to_str().unwrap(),
        ];
        let r = json(&assay(&db, &args, &[]).await);
        assert_eq!(r["scored"], set["questions"]);
        assert_eq!(r["retriever"], "bm25");
        let hist: Vec<i64> = r["histogram"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
        assert_eq!(hist.len(), 6);
        assert_eq!(hist.iter().sum::<i64>(), set["questions"].as_i64().unwrap());
        let mean =
            hist.iter().enumerate().map(|(s, n)| s as i64 * n).sum::<i64>() as f64 / r["scored"].as_f64().unwrap();
        assert!((r["mean"].as_f64().unwrap() - mean).abs() < 1e-9, "the mean is the histogram's");
        assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
        means.push(mean);
    }
    // Seed 000 Fig. 10's finding, here with the offline rule on the sample corpus.
    assert!(means[0] > means[1], "graph-grounded questions find more relevant context: {means:?}");

    // The paper's retriever by default: FastGraphRAG, whose entity listing
    // is an LLM call of its own, counted with the item; the chunks it
    // returned are kept with each score.
    let id = graph["set_id"].to_string();
    let r = json(
        &assay(&db, &["--json", "questions", "relevance", "Q", "--set", &id, "--svg", svg.to_str().unwrap()], &[])
            .await,
    );
    assert_eq!((r["retriever"].as_str(), &r["scored"]), (Some("fastgraphrag"), &graph["questions"]), "{r}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("fastgraphrag context"));
    let pool = db.open().await;
    let job = r["job_id"].as_i64().unwrap();
    let purposes: Vec<String> = app::on_db!(&pool, |db| sqlx::query_scalar(
        "SELECT DISTINCT purpose FROM llm_calls WHERE job_id = $1 ORDER BY purpose"
    )
    .bind(job)
    .fetch_all(db)
    .await)
    .unwrap();
    assert_eq!(purposes.len(), 2, "the retriever's entity listing and the rating: {purposes:?}");
    assert!(purposes.contains(&engine::questions::relevance::PURPOSE.to_string()));
    // A graph retriever without a graph is refused with the way out.
    json(&assay(&db, &["--json", "project", "create", "Empty"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "Empty", "--sample"], &[]).await);
    let args =
        ["--json", "questions", "generate", "summary", "Empty", "--users", "1", "--tasks", "1", "--per-task", "2"];
    let none = json(&assay(&db, &args, &[]).await)["set_id"].to_string();
    let refused = assay(&db, &["questions", "relevance", "Empty", "--set", &none], &[]).await;
    assert!(String::from_utf8_lossy(&refused.stderr).contains("build the graph first, or choose bm25"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_own_hierarchy_is_used_and_a_malformed_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "o").await;
    let project = json(&assay(&db, &["--json", "project", "create", "O"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "O", "--sample"], &[]).await);
    let pool = db.open().await;
    let id = project["id"].as_i64().unwrap();
    let mut h = engine::questions::hierarchy::default_hierarchy();
    h.get_mut("QC").unwrap().categories[0].definition = "CUSTOM simple".into();
    app::ssr::store::questions::set_project_hierarchy(&pool, id, Some(&serde_json::to_string(&h).unwrap()))
        .await
        .unwrap();
    let mut broken = h.clone();
    broken.get_mut("AT").unwrap().categories.pop();
    let err =
        app::ssr::store::questions::set_project_hierarchy(&pool, id, Some(&serde_json::to_string(&broken).unwrap()))
            .await
            .unwrap_err();
    assert_eq!(err.to_string(), "AT: level 1 has 1 categories, not 2");

    let args = [
        "--json",
        "questions",
        "generate",
        "hierarchical",
        "O",
        "--per-category",
        "1",
        "--levels",
        "2",
        "--dimensions",
        "QC",
    ];
    let made = json(&assay(&db, &args, &[]).await);
    assert_eq!(made["questions"], 2);
    let prompts = common::prompts(&pool, "c.job_id = $1", &[made["job"].as_i64().unwrap()]).await;
    assert!(prompts.iter().any(|m| m.contains("CUSTOM simple")), "the project's definitions reach the prompt");
}

/// Seed 000 Fig. 9 both ways: the graph's names matched in the questions,
/// and each question's entities listed by the provider (a job, here the
/// offline name rule) — graph-grounded questions name more distinct
/// entities than summary-based ones either way; a second listing is
/// answered from the cache; the pie charts are written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entities_named_by_two_sets_are_counted_from_the_graph_or_listed_per_question() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "e").await;
    sample_with_graph(&db).await;
    let args = ["--json", "questions", "generate", "graph", "Q", "--node", "10", "--edge", "10", "--subgraph", "0"];
    let graph = json(&assay(&db, &args, &[]).await)["set_id"].to_string();
    let args = ["--json", "questions", "generate", "summary", "Q", "--users", "2", "--tasks", "2"];
    let summary = json(&assay(&db, &args, &[]).await)["set_id"].to_string();
    let svgs = dir.path().join("svg");
    std::fs::create_dir(&svgs).unwrap();
    let count = |source: &'static str| {
        let (db, graph, summary, svgs) = (db.clone(), graph.clone(), summary.clone(), svgs.clone());
        async move {
            let args = [
                "--json",
                "questions",
                "entities",
                "Q",
                "--set",
                &graph,
                "--set",
                &summary,
                "--source",
                source,
                "--svg-dir",
                svgs.to_str().unwrap(),
            ];
            json(&assay(&db, &args, &[]).await)
        }
    };

    let matched = count("graph").await;
    let listed = count("llm").await;
    for (stats, source) in [(&matched, "graph"), (&listed, "llm")] {
        let sets = stats.as_array().unwrap();
        assert_eq!(sets.len(), 2);
        for s in sets {
            assert_eq!(s["source"], source);
            assert_eq!(s["covered"], s["questions"], "every question counted: {s}");
            let top: i64 = s["top"].as_array().unwrap().iter().map(|t| t[1].as_i64().unwrap()).sum();
            assert!(top >= s["with_entity"].as_i64().unwrap(), "each naming question adds at least one mention");
            assert!(s["in_graph"].as_i64().unwrap() <= s["distinct"].as_i64().unwrap());
        }
        assert!(sets[0]["distinct"].as_i64() > sets[1]["distinct"].as_i64(), "{source}: {stats}");
    }
    assert_eq!(matched[0]["in_graph"], matched[0]["distinct"], "graph names are all in the graph");
    assert_eq!(listed[0]["made_by"], "offline (no LLM)", "the page and the CLI say no LLM listed them");
    assert!(listed[0]["job_id"].is_i64() && matched[0]["job_id"].is_null());
    let svg = std::fs::read_to_string(svgs.join(format!("entities-set-{graph}.svg"))).unwrap();
    assert!(svg.contains("listed by offline (no LLM)"), "the chart says how its entities were found");

    // The same listing again: a new job, the same entities (the offline
    // stand-in lists them again; a model's replies would come from the cache).
    let pool = db.open().await;
    let calls = |pool: app::ssr::store::Db| async move {
        app::on_db!(&pool, |db| sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM llm_calls WHERE purpose = 'question_entities' AND cached = FALSE",
        )
        .fetch_one(db)
        .await)
        .unwrap()
    };
    let before = calls(pool.clone()).await;
    assert!(before > 0);
    let again = count("llm").await;
    assert_eq!(calls(pool.clone()).await, 2 * before, "each question listed again");
    assert_eq!(again[0]["distinct"], listed[0]["distinct"]);
    assert_ne!(again[0]["job_id"], listed[0]["job_id"], "a new job");
}

/// The Questions page's forms post one request per generator: who may
/// start a set or price one, and a bad request refused naming its field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_questions_forms_requests_are_checked_by_caller_and_by_field() {
    use axum::http::StatusCode;
    use leptos::server_fn::ServerFn;
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "qforms").await;
    sample_with_graph(&db).await;
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let ana = common::member(&db, &router, &owner, "ana", Some("read")).await;
    let ed = common::member(&db, &router, &owner, "ed", Some("edit")).await;
    let cy = common::member(&db, &router, &owner, "cy", None).await;
    let graph = "project_id=1&req[node]=2&req[edge]=1&req[subgraph]=0&req[min_hops]=3&req[seed]=5";
    let summary = "project_id=1&req[users]=1&req[tasks]=2&req[per_task]=2&req[head]=100&req[tail]=100&req[count]=";
    let hierarchical = "project_id=1&req[per_category]=1&req[levels]=2&req[dimensions]=qc&req[factorial]=0";
    let (ok, forbidden, unauthorized) = (StatusCode::OK, StatusCode::FORBIDDEN, StatusCode::UNAUTHORIZED);
    let callers = [("reader", ana.as_str()), ("no rights", cy.as_str()), ("anonymous", ""), ("editor", ed.as_str())];
    for (path, form, planned) in [
        (app::api::PlanGraphQuestions::PATH, graph, 3),
        (app::api::PlanSummaryQuestions::PATH, summary, 4),
        (app::api::PlanHierarchicalQuestions::PATH, hierarchical, 2),
    ] {
        for ((caller, cookie), want) in callers.iter().zip([ok, forbidden, unauthorized, ok]) {
            let (got, _, body) = common::send_to(&router, common::post_as(path, form, cookie)).await;
            assert_eq!(got, want, "{path} as {caller}: {body}");
            if got == ok {
                let plan: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(plan["questions"], planned, "{path}: {body}");
            }
        }
    }
    for (path, form) in [
        (app::api::StartGraphQuestions::PATH, graph),
        (app::api::StartSummaryQuestions::PATH, summary),
        (app::api::StartHierarchicalQuestions::PATH, hierarchical),
    ] {
        for ((caller, cookie), want) in callers.iter().zip([forbidden, forbidden, unauthorized, ok]) {
            let (got, _, body) = common::send_to(&router, common::post_as(path, form, cookie)).await;
            assert_eq!(got, want, "{path} as {caller}: {body}");
            if got == ok {
                assert!(body.contains(r#""kind":"questions""#), "{path}: {body}");
            }
        }
    }
    common::refused_by_field(
        &router,
        &ed,
        &[
            (
                app::api::StartGraphQuestions::PATH,
                graph.replace("req[node]=2&req[edge]=1", "req[node]=0&req[edge]=0"),
                "node: ask for at least one node, edge or subgraph question",
            ),
            (
                app::api::StartGraphQuestions::PATH,
                graph.replace("req[node]=2", "req[node]=many"),
                "node: not a whole number in range",
            ),
            (
                app::api::StartSummaryQuestions::PATH,
                summary.replace("req[users]=1", "req[users]=0"),
                "users: must be from 1 to 20, not 0",
            ),
            (
                app::api::StartHierarchicalQuestions::PATH,
                hierarchical.replace("req[levels]=2", "req[levels]=3"),
                "levels: a level is 2, 4 or 8 categories, not 3",
            ),
        ],
    )
    .await;
}

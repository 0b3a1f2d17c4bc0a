//! `assay answers` on a real SQLite file with the offline provider: every
//! built-in method answers a graph question set (GraphRAG-style ones write
//! the community reports first, once), the cost table is the answers'
//! own accounting, a repeat is answered from the cache, and answers from
//! another system are imported (bad lines named, nothing half-imported)
//! and exported losslessly.

use crate::common;

use common::{assay, json};
use serde_json::Value;

/// The sample corpus with its graph and 12 graph questions; the set's id.
async fn sample_with_questions(db: &common::TestDb) -> String {
    json(&assay(db, &["--json", "project", "create", "A"], &[]).await);
    json(&assay(db, &["--json", "corpus", "add", "A", "--sample"], &[]).await);
    json(&assay(db, &["--json", "graph", "build", "A"], &[]).await);
    let args = [
        "--json",
        "questions",
        "generate",
        "graph",
        "A",
        "--node",
        "5",
        "--edge",
        "5",
        "--subgraph",
        "2",
        "--min-hops",
        "10",
    ];
    json(&assay(db, &args, &[]).await)["set_id"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_answers_and_the_cost_table_is_their_accounting() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "a").await;
    let set = sample_with_questions(&db).await;
    let pool = db.open().await;
    let mut lightrag = 0;
    for method in ["bm25", "lightrag", "fastgraphrag", "graphrag-local", "graphrag-global"] {
        let made = json(
            &assay(
                &db,
                &["--json", "answers", "generate", "A", "--set", &set, "--method", method, "--target-words", "30"],
                &[],
            )
            .await,
        );
        assert_eq!(made["status"], "done", "{method}: {made}");
        assert_eq!(made["count"], 12, "{method}");
        assert_eq!(made["made_by"], "offline (no LLM)");
        let id = made["answers_id"].as_i64().unwrap();
        if method == "lightrag" {
            lightrag = id;
        }
        // The table's average is the answers' own: tokens of the job's calls per question.
        let job_tokens: i64 = common::scalar(&pool, "SELECT CAST(SUM(prompt_tokens + completion_tokens) AS BIGINT) FROM llm_calls WHERE job_id = $1 AND purpose != 'community_report'", &[made["job"].as_i64().unwrap()]).await;
        assert!((made["avg_tokens"].as_f64().unwrap() - job_tokens as f64 / 12.0).abs() < 1e-6, "{method}");
        let answers = app::ssr::store::answers::list_answers(&pool, id, None).await.unwrap();
        assert!(answers.iter().all(|a| a.answer.split_whitespace().count() <= 30), "{method}: the target length");
        // Global search keeps no point when no report bears on the question.
        let with_context = answers.iter().filter(|a| !a.contexts.is_empty()).count();
        if method == "graphrag-global" {
            assert!(with_context > 0);
        } else {
            assert_eq!(with_context, 12, "{method}: every answer keeps its context");
        }
        let kinds: std::collections::BTreeSet<&str> =
            answers.iter().flat_map(|a| a.contexts.iter().map(|c| c.kind.as_str())).collect();
        let expected: &[&str] = match method {
            "bm25" => &["chunk"],
            "graphrag-global" => &["point"],
            "graphrag-local" => &["chunk", "entity", "relation", "report"],
            _ => &["chunk", "entity", "relation"],
        };
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), expected, "{method}");
    }
    // Reports were written once, by the first GraphRAG-style job.
    let report_jobs: Vec<i64> = app::on_db!(&pool, |db| sqlx::query_scalar(
        "SELECT DISTINCT job_id FROM llm_calls WHERE purpose = 'community_report'"
    )
    .fetch_all(db)
    .await)
    .unwrap();
    assert_eq!(report_jobs.len(), 1);
    let reports: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM community_reports").fetch_one(db).await)
            .unwrap();
    assert!(reports > 0);

    // A second run of a method: the offline stand-ins make the same
    // answers again (nothing of theirs is cached; a model's replies are).
    let again = json(
        &assay(
            &db,
            &["--json", "answers", "generate", "A", "--set", &set, "--method", "lightrag", "--target-words", "30"],
            &[],
        )
        .await,
    );
    let from_cache: i64 = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND cached = TRUE",
        &[again["job"].as_i64().unwrap()],
    )
    .await;
    assert_eq!(from_cache, 0);
    let texts = |id: i64| {
        let pool = pool.clone();
        async move {
            let mut a = app::ssr::store::answers::list_answers(&pool, id, None).await.unwrap();
            a.sort_by_key(|a| a.question_id);
            a.into_iter().map(|a| a.answer).collect::<Vec<_>>()
        }
    };
    assert_eq!(texts(again["answers_id"].as_i64().unwrap()).await, texts(lightrag).await);

    let table = json(&assay(&db, &["--json", "answers", "list", "A"], &[]).await);
    assert_eq!(table.as_array().unwrap().len(), 6);
    let bm25 = &table[0];
    assert_eq!((bm25["method"].as_str(), bm25["measured"].as_i64()), (Some("bm25"), Some(12)));
    assert!(table[1]["avg_llm_calls"].as_f64().unwrap() == 2.0, "LightRAG: keywords and the answer");

    // Rebuilding the graph drops the old graph's reports.
    json(&assay(&db, &["--json", "graph", "build", "A", "--gleaning", "0"], &[]).await);
    let reports: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM community_reports").fetch_one(db).await)
            .unwrap();
    assert_eq!(reports, 0);
}

/// An answer's retrieved context and its job item's result are stored
/// packed when long (`store::packed`: the text column empty or NULL, a
/// zstd frame beside it) and read back whole: the answers as listed and as
/// paged hold the very context texts the job's items recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_contexts_and_results_are_stored_packed_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "packed").await;
    let set = sample_with_questions(&db).await;
    let pool = db.open().await;
    let args = ["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25", "--param", "k=8"];
    let made = json(&assay(&db, &args, &[]).await);
    assert_eq!(made["status"], "done", "{made}");
    let (id, job) = (made["answers_id"].as_i64().unwrap(), made["job"].as_i64().unwrap());
    let packed = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM answers WHERE answer_set_id = $1 AND contexts_z IS NOT NULL AND contexts = ''",
        &[id],
    )
    .await;
    assert_eq!(packed, 12, "an answer's passages are past the 512 bytes kept as text");
    let packed_items = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM job_items WHERE job_id = $1 AND result_z IS NOT NULL AND result IS NULL",
        &[job],
    )
    .await;
    assert!(packed_items >= 12, "{packed_items} of the job's items are packed");
    let items = app::ssr::store::jobs::job_items(&pool, job).await.unwrap();
    let results: String = items.iter().filter_map(|i| i.result.clone()).collect();
    let answers = app::ssr::store::answers::list_answers(&pool, id, None).await.unwrap();
    assert_eq!(answers.len(), 12);
    for a in &answers {
        assert!(!a.contexts.is_empty(), "question {}", a.question_id);
        for c in &a.contexts {
            let quoted = serde_json::to_string(&c.text).unwrap();
            assert!(results.contains(&quoted), "a context of question {} is not in its job's results", a.question_id);
        }
    }
    // The answers page counts each answer's contexts through the frame.
    let page = app::ssr::store::answers::answer_page(&pool, id, Some(id), 1, "").await.unwrap();
    for row in &page.rows {
        let listed = answers.iter().find(|a| a.question_id == row.question_id).unwrap().contexts.len() as i64;
        assert_eq!((row.a.contexts, row.b.as_ref().map(|b| b.contexts)), (listed, Some(listed)));
    }
    // One item whole, as its page shows it.
    let one = app::ssr::store::jobs::job_item(&pool, job, &items[0].key).await.unwrap();
    assert_eq!(one.result, items[0].result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_from_elsewhere_import_with_bad_lines_named_and_export_losslessly() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "i").await;
    let set = sample_with_questions(&db).await;
    let export = assay(&db, &["questions", "export", "A", "--set", &set], &[]).await;
    let questions: Vec<Value> =
        String::from_utf8(export.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // By id for the first, by text for the rest, with accounting on some.
    let mut lines: Vec<String> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| {
            if i == 0 {
                serde_json::json!({"question_id": q["id"], "answer": "Mine.", "contexts": ["ctx a", "ctx b"],
                    "prompt_tokens": 900, "completion_tokens": 100, "latency_ms": 1500.0})
                .to_string()
            } else {
                serde_json::json!({"question": q["question"], "answer": format!("Answer {i}.")}).to_string()
            }
        })
        .collect();
    let good = dir.path().join("mine.jsonl");
    std::fs::write(&good, lines.join("\n")).unwrap();

    lines[3] = r#"{"question": "What is not asked?", "answer": "x"}"#.into();
    lines[5] = "{broken".into();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out =
        assay(&db, &["answers", "import", "A", "--set", &set, "--name", "My RAG", bad.to_str().unwrap()], &[]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 4: no question of this set has this text"), "{err}");
    assert!(err.contains("line 6: "), "{err}");
    let table = json(&assay(&db, &["--json", "answers", "list", "A"], &[]).await);
    assert_eq!(table, serde_json::json!([]), "nothing was imported");

    let made = json(
        &assay(
            &db,
            &["--json", "answers", "import", "A", "--set", &set, "--name", "My RAG", good.to_str().unwrap()],
            &[],
        )
        .await,
    );
    assert_eq!(made["count"], 12);
    let id = made["answers_id"].to_string();
    let table = json(&assay(&db, &["--json", "answers", "list", "A"], &[]).await);
    assert_eq!(table[0]["method"], "imported");
    assert_eq!(table[0]["measured"], 1, "only one line gave tokens");
    assert_eq!(table[0]["avg_tokens"], 1000.0);
    assert_eq!(table[0]["avg_query_ms"], 1500.0);

    // Export → import gives the same answers.
    for format in ["jsonl", "csv"] {
        let text = assay(&db, &["answers", "export", "A", "--answers", &id, "--format", format], &[]).await;
        let path = dir.path().join(format!("again.{format}"));
        std::fs::write(&path, &text.stdout).unwrap();
        let back = json(
            &assay(
                &db,
                &["--json", "answers", "import", "A", "--set", &set, "--name", format, path.to_str().unwrap()],
                &[],
            )
            .await,
        );
        let again = assay(
            &db,
            &["answers", "export", "A", "--answers", &back["answers_id"].to_string(), "--format", format],
            &[],
        )
        .await;
        assert_eq!(String::from_utf8_lossy(&again.stdout), String::from_utf8_lossy(&text.stdout), "{format}");
    }
}

/// NaiveRAG in process: the chunks are embedded once (a job's `embed-`
/// items), stored, and reused by the next NaiveRAG job, which embeds
/// nothing; without the model files, the job is refused before anything
/// is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naive_rag_embeds_the_chunks_once_and_reuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "n").await;
    let set = sample_with_questions(&db).await;
    let pool = db.open().await;
    let chunks: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM chunks").fetch_one(db).await).unwrap();
    let first = json(
        &assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "naive", "--param", "k=2"], &[])
            .await,
    );
    assert_eq!((first["status"].as_str(), first["count"].as_i64()), (Some("done"), Some(12)));
    assert_eq!(first["avg_llm_calls"], 1.0, "in-process embedding is no LLM call");
    let vectors: Vec<(i64, i64)> = app::on_db!(&pool, |db| sqlx::query_as(
        "SELECT COUNT(*), CAST(MIN(LENGTH(vector)) AS BIGINT) FROM chunk_vectors WHERE model = 'all-MiniLM-L6-v2'"
    )
    .fetch_all(db)
    .await)
    .unwrap();
    assert_eq!(vectors[0], (chunks, 384 * 4), "every chunk, 384 floats each");
    let embed_items: i64 = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM job_items WHERE job_id = $1 AND key LIKE 'embed-%'",
        &[first["job"].as_i64().unwrap()],
    )
    .await;
    assert_eq!(embed_items, 1, "five chunks, one batch");
    let answers =
        app::ssr::store::answers::list_answers(&pool, first["answers_id"].as_i64().unwrap(), None).await.unwrap();
    assert!(answers.iter().all(|a| a.contexts.len() == 2 && a.contexts[0].score >= a.contexts[1].score));

    let second =
        json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "naive"], &[]).await);
    let embed_items: i64 = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM job_items WHERE job_id = $1 AND key LIKE 'embed-%'",
        &[second["job"].as_i64().unwrap()],
    )
    .await;
    assert_eq!(embed_items, 0, "the stored vectors are reused");

    let sets_before = json(&assay(&db, &["--json", "answers", "list", "A"], &[]).await).as_array().unwrap().len();
    let out = assay(
        &db,
        &["answers", "generate", "A", "--set", &set, "--method", "naive"],
        &[("ASSAY_MINILM_DIR", "/nonexistent")],
    )
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("the MiniLM model is not at /nonexistent"));
    let sets_after = json(&assay(&db, &["--json", "answers", "list", "A"], &[]).await).as_array().unwrap().len();
    assert_eq!(sets_after, sets_before, "nothing was made");
}

/// NaiveRAG with the endpoint's embeddings, through the real client and
/// the mock server: chunk vectors stored under the endpoint's model, each
/// answer counting its embedding call and its answer call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naive_rag_with_endpoint_embeddings_counts_the_embedding_call() {
    let mock = mockllm::MockServer::start(mockllm::MockConfig::default()).await;
    let base = mock.base_url();
    let env = [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base.as_str()),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_EMBED_MODEL", "mock-embed"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "e").await;
    let set = sample_with_questions(&db).await;
    let made = json(
        &assay(
            &db,
            &[
                "--json",
                "answers",
                "generate",
                "A",
                "--set",
                &set,
                "--method",
                "naive",
                "--param",
                "embedder=endpoint",
                "--param",
                "k=1",
            ],
            &env,
        )
        .await,
    );
    assert_eq!(made["status"], "done", "{made}");
    assert_eq!(made["made_by"], "openai · mock-model");
    assert_eq!(made["avg_llm_calls"], 2.0, "the question's embedding and the answer");
    let pool = db.open().await;
    let (n, len): (i64, i64) = app::on_db!(&pool, |db| sqlx::query_as(
        "SELECT COUNT(*), CAST(MIN(LENGTH(vector)) AS BIGINT) FROM chunk_vectors WHERE model = 'openai:mock-embed'"
    )
    .fetch_one(db)
    .await)
    .unwrap();
    assert_eq!((n, len), (5, 8 * 4), "the mock's 8-dimensional vectors for the five chunks");
    let embed_calls: i64 = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND purpose = 'embed'",
        &[made["job"].as_i64().unwrap()],
    )
    .await;
    assert_eq!(embed_calls, 1 + 12, "one batch of chunks, then one per question");
}

/// The HTTP endpoint method against a small RAG service started here: each
/// question is POSTed with the body template filled in, a 500 is retried,
/// the answer, contexts and token counts are read by their pointers; a
/// pointer that finds nothing fails the items with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_method_posts_each_question_to_the_users_service() {
    use std::sync::{Arc, Mutex};

    use axum::routing::post;
    use axum::Json;

    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let recorded = seen.clone();
    let app = axum::Router::new().route(
        "/rag",
        post(move |Json(body): Json<Value>| {
            let recorded = recorded.clone();
            async move {
                let mut seen = recorded.lock().unwrap();
                let first_time = !seen.iter().any(|b| b["q"] == body["q"]);
                seen.push(body.clone());
                if first_time {
                    // Every question's first attempt fails: the client retries.
                    return (axum::http::StatusCode::INTERNAL_SERVER_ERROR, Json(serde_json::json!({"error": "busy"})));
                }
                let q = body["q"].as_str().unwrap_or("");
                (
                    axum::http::StatusCode::OK,
                    Json(serde_json::json!({"result": {"text": format!("Echo: {q}")}, "sources": ["doc a", {"text": "doc b"}],
                                            "usage": {"in": 100, "out": 7}})),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/rag", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "h").await;
    let set = sample_with_questions(&db).await;
    let url_param = format!("url=\"{url}\"");
    let args = [
        "--json",
        "answers",
        "generate",
        "A",
        "--set",
        &set,
        "--method",
        "http",
        "--name",
        "My service",
        "--param",
        &url_param,
        "--param",
        r#"body={"q": "{{question}}", "id": "{{question_id}}", "words": "{{target_words}}"}"#,
        "--param",
        "answer=/result/text",
        "--param",
        "contexts=/sources",
        "--param",
        "prompt_tokens=/usage/in",
        "--param",
        "completion_tokens=/usage/out",
        "--target-words",
        "50",
    ];
    let made = json(&assay(&db, &args, &[]).await);
    assert_eq!((made["status"].as_str(), made["count"].as_i64()), (Some("done"), Some(12)), "{made}");
    assert_eq!(made["avg_tokens"], 107.0);
    let pool = db.open().await;
    let answers =
        app::ssr::store::answers::list_answers(&pool, made["answers_id"].as_i64().unwrap(), None).await.unwrap();
    for a in &answers {
        assert_eq!(a.answer, format!("Echo: {}", a.question));
        assert_eq!(a.contexts.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["doc a", "doc b"]);
    }
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 24, "each question twice: a 500, then the answer");
        let ids: std::collections::BTreeSet<i64> = seen.iter().map(|b| b["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, answers.iter().map(|a| a.question_id).collect(), "{{question_id}} is Assay's question id");
        assert!(seen.iter().all(|b| b["words"] == 50));
    }

    // A pointer that finds nothing: every item fails at once with the reason.
    let bad = [
        "--json",
        "answers",
        "generate",
        "A",
        "--set",
        &set,
        "--method",
        "http",
        "--param",
        &url_param,
        "--param",
        r#"body={"q": "{{question}}"}"#,
        "--param",
        "answer=/nope",
    ];
    let out = assay(&db, &bad, &[]).await;
    let failed: i64 = app::on_db!(&pool, |db| sqlx::query_scalar(
        "SELECT COUNT(*) FROM job_items WHERE status = 'failed' AND error LIKE '%no answer at \"/nope\"%'",
    )
    .fetch_one(db)
    .await)
    .unwrap();
    assert_eq!(failed, 12, "{}", String::from_utf8_lossy(&out.stderr));
}

/// Answers go out at the model's default temperature (no `temperature` in
/// the request) unless the method's parameters set one, which is kept with
/// the answer set; a sanity check's second run samples: at the method's
/// temperature when above 0, else at the model's default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_temperature_is_a_method_setting_and_the_second_run_samples() {
    let mock = mockllm::MockServer::start(mockllm::MockConfig::default()).await;
    let base = mock.base_url();
    let env =
        [("ASSAY_LLM_PROVIDER", "openai"), ("ASSAY_LLM_BASE_URL", base.as_str()), ("ASSAY_LLM_MODEL", "mock-model")];
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "t").await;
    let set = sample_with_questions(&db).await;
    // The answer requests the mock answered since its last reset.
    let answer_bodies = |mock: &mockllm::MockServer| -> Vec<Value> {
        let bodies = mock.stats().answered.into_keys().map(|b| serde_json::from_str::<Value>(&b).unwrap());
        bodies.filter(|b| b["messages"].to_string().contains("Context:")).collect()
    };
    let generate = |extra: &'static [&'static str]| {
        let (db, set, env) = (db.clone(), set.clone(), env.clone());
        async move {
            let mut args = vec!["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25"];
            args.extend(extra);
            json(&assay(&db, &args, &env).await)
        }
    };
    let temperatures = |bodies: &[Value]| -> Vec<Option<f64>> {
        let mut t: Vec<Option<f64>> = bodies.iter().map(|b| b.get("temperature").and_then(Value::as_f64)).collect();
        t.dedup();
        t
    };
    let default = generate(&[]).await;
    assert_eq!(default["status"], "done", "{default}");
    let bodies = answer_bodies(&mock);
    assert_eq!(bodies.len(), 12);
    assert_eq!(temperatures(&bodies), [None], "the model's default: not sent");
    for (param, sent, second) in [("temperature=0", Some(0.0), None), ("temperature=0.7", Some(0.7), Some(0.7))] {
        mock.reset_stats();
        let made = match param {
            "temperature=0" => generate(&["--param", "temperature=0"]).await,
            _ => generate(&["--param", "temperature=0.7"]).await,
        };
        assert_eq!(made["status"], "done", "{made}");
        let bodies = answer_bodies(&mock);
        assert_eq!(bodies.len(), 12);
        assert_eq!(temperatures(&bodies), [sent], "{param}");
        let pool = db.open().await;
        let stored = app::ssr::store::answers::get_set(&pool, made["answers_id"].as_i64().unwrap()).await.unwrap();
        assert!(stored.parameters.contains("\"temperature\""), "{}", stored.parameters);
        // Its sanity check's second run (alignment off: no regenerations).
        mock.reset_stats();
        let id = made["answers_id"].to_string();
        let args = [
            "--json",
            "eval",
            "sanity",
            "A",
            "--set",
            &set,
            "--method",
            &id,
            "--judge",
            "offline",
            "--trials",
            "1",
            "--no-align",
        ];
        let sanity = json(&assay(&db, &args, &env).await);
        assert_eq!(sanity["status"], "done", "{sanity}");
        let bodies = answer_bodies(&mock);
        assert_eq!(bodies.len(), 12, "the second run's answers, not from the cache");
        assert_eq!(temperatures(&bodies), [second], "{param}: the second run samples");
    }
    // A temperature out of range is refused by name.
    let bad =
        assay(&db, &["answers", "generate", "A", "--set", &set, "--method", "bm25", "--param", "temperature=5"], &env)
            .await;
    assert!(String::from_utf8_lossy(&bad.stderr).contains("temperature must be a number from 0 to 2"));
}

/// The Answers form's price: the calls it plans are the calls the
/// run records, for each method; its prompt tokens are an estimate from
/// the project's chunks, within a factor of two of what was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answers_price_counts_the_calls_the_run_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "price").await;
    let set: i64 = common::sample_with_answers(&db, [3, 2, 1]).await.parse().unwrap();
    let pool = db.open().await;
    let llm = engine::llm::settings::LlmSettings::default();
    for set_row in app::ssr::store::answers::list_sets(&pool, 1).await.unwrap() {
        let req = types::requests::AnswersRequest::new(set_row.method.clone());
        let plan = app::ssr::answers::plan(&pool, &llm, set, &req).await.unwrap();
        assert!(!plan.paid && plan.paid_by.starts_with("free"), "{plan:?}");
        assert_eq!(plan.questions, 6);
        let stage = &plan.stages[0];
        let job = set_row.job_id.unwrap();
        let calls = common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1", &[job]).await;
        assert_eq!(stage.calls as i64, calls, "{}: planned {stage:?}", set_row.method);
        let prompt = common::scalar(
            &pool,
            "SELECT CAST(COALESCE(SUM(prompt_tokens), 0) AS BIGINT) FROM llm_calls WHERE job_id = $1",
            &[job],
        )
        .await;
        let planned = stage.prompt_tokens as i64;
        assert!(planned * 2 >= prompt && prompt * 2 >= planned, "{}: {prompt} sent, {planned} planned", set_row.method);
    }
    // A method the form does not know is named.
    let req = types::requests::AnswersRequest::new("bm26");
    let err = app::ssr::answers::plan(&pool, &llm, set, &req).await.unwrap_err().to_string();
    assert!(err.contains("unknown method \"bm26\""), "{err}");
}

/// Offline answers are a function of their inputs: two runs
/// with `--no-cache` over two novels give byte-identical answer sets, for
/// every built-in method (the extractive answerer summed its sentence
/// scores in a HashSet's order, which differs between runs; this guards
/// that and any other source of run-to-run difference).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_offline_runs_without_the_cache_answer_byte_for_byte_alike() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "det").await;
    json(&assay(&db, &["--json", "project", "create", "D"], &[]).await);
    for book in ["christmas_carol_stave1.txt", "alice_in_wonderland.txt"] {
        let path = common::corpora().join(book);
        json(&assay(&db, &["--json", "corpus", "add", "D", path.to_str().unwrap()], &[]).await);
    }
    json(&assay(&db, &["--json", "graph", "build", "D"], &[]).await);
    let args = ["--json", "questions", "generate", "hierarchical", "D", "--per-category", "12", "--dimensions", "QC"];
    let set = json(&assay(&db, &args, &[]).await)["set_id"].to_string();
    let pool = db.open().await;
    for method in ["bm25", "lightrag", "fastgraphrag", "graphrag-local", "graphrag-global", "naive"] {
        let mut runs: Vec<Vec<(i64, String)>> = Vec::new();
        for _ in 0..2 {
            let args = ["--json", "answers", "generate", "D", "--set", &set, "--method", method, "--no-cache"];
            let made = json(&assay(&db, &args, &[]).await);
            assert_eq!(made["status"], "done", "{method}: {made}");
            let answers = app::ssr::store::answers::list_answers(&pool, made["answers_id"].as_i64().unwrap(), None)
                .await
                .unwrap();
            runs.push(answers.into_iter().map(|a| (a.question_id, a.answer)).collect());
        }
        assert!(runs[0].len() >= 150, "{method}: {} answers", runs[0].len());
        let differ: Vec<i64> = runs[0].iter().zip(&runs[1]).filter(|(a, b)| a != b).map(|(a, _)| a.0).collect();
        assert!(
            differ.is_empty(),
            "{method}: {} of {} answers differ: questions {differ:?}",
            differ.len(),
            runs[0].len()
        );
    }
}

/// An answer written from little or no retrieved text is flagged — by
/// each answer, on the set (Answers page, cost table, `answers list`) and
/// in the report of an evaluation judging it — while a built-in method's
/// answers carry the size of what they retrieved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_resting_on_little_retrieved_text_are_flagged_on_the_page_the_table_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "thin").await;
    let set = sample_with_questions(&db).await;
    let pool = db.open().await;
    let bm25 = json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25"], &[]).await);
    let bm25_id = bm25["answers_id"].as_i64().unwrap();
    // The size stored is the retrieved text's, in characters.
    let answers = app::ssr::store::answers::list_answers(&pool, bm25_id, None).await.unwrap();
    let chars: i64 = answers.iter().flat_map(|a| &a.contexts).map(|c| c.text.chars().count() as i64).sum();
    assert!(chars > 12 * 400, "BM25 over the sample's chunks retrieves paragraphs: {chars}");
    let stored: i64 = common::scalar(
        &pool,
        "SELECT CAST(SUM(context_chars) AS BIGINT) FROM answers WHERE answer_set_id = $1",
        &[bm25_id],
    )
    .await;
    assert_eq!(stored, chars);
    assert_eq!(bm25["context"]["known"], 12);
    assert_eq!(bm25["context"]["thin"], 0);
    assert_eq!(bm25["context_flag"], Value::Null);

    // Imported answers: eight written from a word of context, two from
    // none reported (unknown, not "none"), two from a paragraph.
    let export = assay(&db, &["questions", "export", "A", "--set", &set], &[]).await;
    let lines: Vec<String> = String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let q: Value = serde_json::from_str(l).unwrap();
            let contexts = match i {
                0..=7 => serde_json::json!(["Scrooge."]),
                8 | 9 => serde_json::json!([]),
                _ => serde_json::json!(["Marley was dead: to begin with. ".repeat(20)]),
            };
            serde_json::json!({"question_id": q["id"], "answer": format!("Answer {i}."), "contexts": contexts})
                .to_string()
        })
        .collect();
    let file = dir.path().join("thin.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let thin = json(
        &assay(
            &db,
            &["--json", "answers", "import", "A", "--set", &set, "--name", "Thin", file.to_str().unwrap()],
            &[],
        )
        .await,
    )["answers_id"]
        .as_i64()
        .unwrap();
    let table = json(&assay(&db, &["--json", "answers", "list", "A"], &[]).await);
    let row = table.as_array().unwrap().iter().find(|r| r["answer_set_id"] == thin).unwrap();
    assert_eq!((row["context"]["known"].as_i64(), row["context"]["thin"].as_i64()), (Some(10), Some(8)));
    assert_eq!(row["context"]["none"], 0);
    let text = String::from_utf8(assay(&db, &["answers", "list", "A"], &[]).await.stdout).unwrap();
    assert!(
        text.contains(&format!("* #{thin}: 8 of 10 answers rest on under 400 characters of retrieved text")),
        "{text}"
    );

    // The page: the table's flag, the set's line, each thin answer's mark.
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let get = |uri: String| common::get_as(&uri, &owner);
    let (status, _, page) = common::send_to(&router, get(format!("/projects/1/answers?answers={thin}"))).await;
    assert_eq!(status, 200);
    assert!(page.contains("id=\"thin-context\""), "the cost table's list");
    assert!(page.contains(&format!("#{thin} Thin: 8 of 10 answers rest on under 400 characters")), "named in the list");
    assert!(page.contains("id=\"set-thin-context\""), "the shown set's line");
    assert_eq!(page.matches("class=\"warn thin-context\"").count(), 8, "each thin answer marked");
    let (_, _, page) = common::send_to(&router, get(format!("/projects/1/answers?answers={bm25_id}"))).await;
    assert!(!page.contains("id=\"set-thin-context\""), "BM25's answers are not flagged");

    // The report of an evaluation judging the two names the thin one only.
    let run = json(
        &assay(
            &db,
            &[
                "--json",
                "eval",
                "run",
                "A",
                "--set",
                &set,
                "--methods",
                &format!("{bm25_id},{thin}"),
                "--judge",
                "offline",
                "--trials",
                "1",
                "--repeats",
                "1",
                "--no-align",
            ],
            &[],
        )
        .await,
    );
    let flags = run["thin_context"].as_array().unwrap();
    assert_eq!(flags.len(), 1, "{run}");
    assert!(flags[0].as_str().unwrap().starts_with(&format!("#{thin} Thin: 8 of 10")), "{run}");
    let eval = run["evaluation_id"].as_i64().unwrap();
    let (status, _, page) = common::send_to(&router, get(format!("/projects/1/evaluations/{eval}"))).await;
    assert_eq!(status, 200);
    assert!(page.contains("id=\"report-thin-context\""));
    assert!(page.contains(&format!("#{thin} Thin: 8 of 10 answers rest on under 400 characters")));
}

/// Answer prompts begin with the method's fixed instructions: through an
/// endpoint with automatic prefix caching, the cost table says what share
/// of the input the provider read from its cache, and the cost is at the
/// cached-input rate for it (`--llm-price IN,OUT,CACHED`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cost_table_shows_the_providers_prefix_cache_and_prices_it() {
    let mock = mockllm::MockServer::start(mockllm::MockConfig { prefix_cache: Some(8), ..Default::default() }).await;
    let base = mock.base_url();
    let env = [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base.as_str()),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_LLM_PRICE", "1,2,0.25"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "prefix").await;
    let set = sample_with_questions(&db).await;
    let made =
        json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25"], &env).await);
    assert_eq!(made["status"], "done", "{made}");
    let pool = db.open().await;
    let job = made["job"].as_i64().unwrap();
    let sums = common::texts(
        &pool,
        "SELECT CAST(SUM(prompt_tokens) AS TEXT) || ' ' || CAST(SUM(cached_tokens) AS TEXT) || ' '
                || CAST(SUM(completion_tokens) AS TEXT) || ' ' || CAST(COUNT(*) AS TEXT)
         FROM llm_calls WHERE job_id = $1",
        &[job],
    )
    .await;
    let n: Vec<f64> = sums[0].split(' ').map(|x| x.parse().unwrap()).collect();
    let (prompt, cached, completion, calls) = (n[0], n[1], n[2], n[3]);
    assert_eq!(cached as u64, mock.stats().cached_tokens);
    assert!(cached > 0.0, "the instructions are shared: {sums:?}");
    let share = made["cached_input_share"].as_f64().unwrap();
    assert!((share - cached / prompt).abs() < 1e-9, "{made}");
    // Each answer's cost: the uncached input at 1, the cached at 0.25, the output at 2 (per 1M).
    let total = ((prompt - cached) * 1.0 + cached * 0.25 + completion * 2.0) / 1e6;
    let avg = made["avg_cost_usd"].as_f64().unwrap();
    assert!((avg * calls - total).abs() < 1e-12, "{avg} × {calls} against {total}");
}

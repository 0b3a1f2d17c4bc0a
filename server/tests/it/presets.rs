//! The HTTP method's presets: a LightRAG server, Microsoft
//! GraphRAG behind scripts/graphrag-serve, and a chat endpoint as the
//! no-retrieval baseline. Here against stand-ins that speak each program's
//! published request and reply shapes (LightRAG 1.5.7's `QueryRequest`,
//! `QueryResponse` and `QueryDataResponse`; graphrag-serve's reply) over a
//! project imported from the program's own index folder, so the contexts
//! come back under the program's chunk ids; `peers_server` runs the real
//! LightRAG server.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::common::{self, assay, json};

fn fixture(program: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/fixtures/peers").join(program)
}

/// What the stand-in saw: (path, X-API-Key, body).
type Seen = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

/// The stand-in's retrieval: the chunks sharing most words with the query
/// (its three best), then one chunk the index does not hold.
fn retrieve(chunks: &[(String, String)], query: &str) -> Vec<(String, String)> {
    let words: HashSet<String> =
        query.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 3).map(str::to_lowercase).collect();
    let mut scored: Vec<(usize, &(String, String))> = chunks
        .iter()
        .map(|c| (c.1.to_lowercase().split(|ch: char| !ch.is_alphanumeric()).filter(|w| words.contains(*w)).count(), c))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1 .0.cmp(&b.1 .0)));
    let mut out: Vec<(String, String)> = scored.into_iter().take(3).map(|(_, c)| c.clone()).collect();
    out.push(("chunk-not-in-the-index".into(), "A passage from a document this project never saw at all.".into()));
    out
}

async fn start(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}

/// A LightRAG server's `/query` and `/query/data` over the fixture's chunks.
async fn fake_lightrag(chunks: Vec<(String, String)>, seen: Seen) -> String {
    let record = |path: &'static str| {
        let seen = seen.clone();
        move |headers: HeaderMap, Json(body): Json<Value>| {
            let key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).map(str::to_string);
            seen.lock().unwrap().push((path.to_string(), key, body.clone()));
            body
        }
    };
    let (query, data) = (record("/query"), record("/query/data"));
    let for_data = chunks.clone();
    let router = Router::new()
        .route(
            "/query",
            post(move |h: HeaderMap, b: Json<Value>| async move {
                let body = query(h, b);
                Json(json!({"response": format!("LightRAG ({}) on: {}", body["mode"].as_str().unwrap_or(""), body["query"].as_str().unwrap_or("")), "references": null}))
            }),
        )
        .route(
            "/query/data",
            post(move |h: HeaderMap, b: Json<Value>| async move {
                let body = data(h, b);
                let found = retrieve(&for_data, body["query"].as_str().unwrap_or(""));
                Json(json!({
                    "status": "success",
                    "message": "Query executed successfully",
                    "data": {
                        "entities": [], "relationships": [],
                        "chunks": found.iter().enumerate().map(|(i, (id, text))| json!({
                            "content": text, "file_path": "alice.txt", "chunk_id": id, "reference_id": (i + 1).to_string()
                        })).collect::<Vec<_>>(),
                        "references": [{"reference_id": "1", "file_path": "alice.txt"}],
                    },
                    "metadata": {"query_mode": body["mode"], "keywords": {"high_level": [], "low_level": []}},
                }))
            }),
        );
    start(router).await
}

/// A hierarchical question set over project "Theirs" (references and
/// source chunks, offline): `per_category` at 2 categories; its id.
pub(crate) async fn hierarchical(db: &common::TestDb, per_category: u32) -> String {
    let n = per_category.to_string();
    let args = ["--json", "questions", "generate", "hierarchical", "Theirs", "--per-category", &n, "--levels", "2"];
    json(&assay(db, &[&args[..], &["--dimensions", "QC", "--factorial", "0"]].concat(), &[]).await)["set_id"]
        .to_string()
}

/// `assay answers generate PROJECT --set SET --method METHOD --param …`
/// (and more arguments); its JSON, or the failed run's output.
pub(crate) async fn answer(
    db: &common::TestDb,
    project: &str,
    set: &str,
    method: &str,
    params: &[&str],
    more: &[&str],
) -> std::process::Output {
    let mut args = vec!["--json", "answers", "generate", project, "--set", set, "--method", method];
    for p in params {
        args.extend(["--param", p]);
    }
    args.extend(more);
    assay(db, &args, &[]).await
}

/// Project "Theirs" imported from a fixture folder, and a hierarchical set.
async fn imported_with_questions(db: &common::TestDb, program: &str, format: &str) -> String {
    json(&assay(db, &["--json", "project", "create", "Theirs"], &[]).await);
    let folder = fixture(program);
    json(&assay(db, &["--json", "graph", "import", "Theirs", folder.to_str().unwrap(), "--format", format], &[]).await);
    hierarchical(db, 2).await
}

fn fixture_chunks(program: &str) -> Vec<(String, String)> {
    let store: serde_json::Map<String, Value> =
        serde_json::from_slice(&std::fs::read(fixture(program).join("kv_store_text_chunks.json")).unwrap()).unwrap();
    let mut chunks: Vec<(String, String)> =
        store.into_iter().map(|(id, v)| (id, v["content"].as_str().unwrap_or("").to_string())).collect();
    chunks.sort();
    chunks
}

/// The chunk ids the project keeps for the program's: external → ours.
async fn ours(pool: &app::ssr::store::Db) -> HashMap<String, i64> {
    let project = app::ssr::store::projects::find_project(pool, "Theirs").await.unwrap().summary.id;
    app::ssr::store::foreign::external_chunk_ids(pool, project).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lightrag_server_answers_and_its_retrieval_is_scored_under_its_own_chunk_ids() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "lr").await;
    let set = imported_with_questions(&db, "lightrag", "lightrag").await;
    let chunks = fixture_chunks("lightrag");
    let seen: Seen = Default::default();
    let url = fake_lightrag(chunks.clone(), seen.clone()).await;
    const KEY: &str = "lightrag-key-0123456789abcdef";
    let (url_param, key_param) = (format!("url=\"{url}\""), format!("api_key=\"{KEY}\""));
    let params = [url_param.as_str(), "mode=\"hybrid\"", "top_k=20", &key_param];
    let made = json(&answer(&db, "Theirs", &set, "lightrag-server", &params, &["--target-words", "40"]).await);
    let questions = made["count"].as_i64().unwrap();
    assert_eq!(made["status"], "done", "{made}");
    assert!(questions >= 4, "{made}");

    // Each question: /query/data, then /query, with LightRAG's own fields.
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len() as i64, 2 * questions);
        assert_eq!(seen.iter().filter(|s| s.0 == "/query/data").count() as i64, questions);
        for (_, key, body) in seen.iter() {
            assert_eq!(key.as_deref(), Some(KEY), "the key goes as X-API-Key");
            assert_eq!(body["mode"], "hybrid");
            assert_eq!(body["top_k"], 20);
            assert_eq!(body["user_prompt"], "Answer in about 40 words.");
            assert_eq!(body["include_references"], false);
            assert!(body.get("chunk_top_k").is_none(), "unset fields are the server's: {body}");
        }
    }

    // Their chunks are the project's; the one they lack stays a context.
    let pool = db.open().await;
    let ids = ours(&pool).await;
    let answers_id = made["answers_id"].as_i64().unwrap();
    let answers = app::ssr::store::answers::list_answers(&pool, answers_id, None).await.unwrap();
    for a in &answers {
        assert!(a.answer.starts_with("LightRAG (hybrid) on: "), "{}", a.answer);
        let expected: Vec<(String, String)> = retrieve(&chunks, &a.question)
            .into_iter()
            .map(|(id, _)| match ids.get(&id) {
                Some(ours) => ("chunk".to_string(), ours.to_string()),
                None => ("context".to_string(), id),
            })
            .collect();
        let got: Vec<(String, String)> = a.contexts.iter().map(|c| (c.kind.clone(), c.id.clone())).collect();
        assert_eq!(got, expected, "{}", a.question);
        assert_eq!(got[3].0, "context");
    }

    // The set's parameters keep the key out of sight.
    let sets = app::ssr::store::answers::list_sets(
        &pool,
        app::ssr::store::projects::find_project(&pool, "Theirs").await.unwrap().summary.id,
    )
    .await
    .unwrap();
    let shown = serde_json::to_string(&sets).unwrap();
    assert!(!shown.contains(KEY), "{shown}");

    // MAP, nDCG@10 and Recall@10 on LightRAG's retrieval, as the metrics
    // module scores the same ranking.
    let run = json(
        &assay(&db, &["--json", "metrics", "run", "Theirs", "--set", &set, "--answers", &answers_id.to_string()], &[])
            .await,
    );
    let report = app::ssr::metrics::report(&pool, run["run_id"].as_i64().unwrap()).await.unwrap();
    let project = app::ssr::store::projects::find_project(&pool, "Theirs").await.unwrap().summary.id;
    let spans = app::ssr::store::documents::chunk_spans(&pool, project).await.unwrap();
    let questions = app::ssr::store::questions::list_questions(&pool, set.parse().unwrap()).await.unwrap();
    let by_id: BTreeMap<i64, _> = answers.iter().map(|a| (a.question_id, a)).collect();
    let mut scored = 0;
    for q in &report.sets[0].questions {
        let question = questions.iter().find(|x| x.id == q.question_id).unwrap();
        let ranked: Vec<i64> = by_id[&q.question_id]
            .contexts
            .iter()
            .filter(|c| c.kind == "chunk")
            .map(|c| c.id.parse().unwrap())
            .collect();
        let (ranked, relevant) = engine::metrics::at_unit(
            engine::metrics::RelevanceUnit::Document,
            &ranked,
            &question.source_chunk_ids,
            &spans,
        );
        let ap = engine::metrics::average_precision(&ranked, &relevant);
        assert!((q.scores.ap.unwrap() - ap).abs() < 1e-12, "{} vs {ap}", q.scores.ap.unwrap());
        assert!(q.scores.ndcg.is_some() && q.scores.recall.is_some());
        scored += 1;
    }
    assert_eq!(scored as i64, made["count"].as_i64().unwrap());
    let mean_ap = report.sets[0].questions.iter().map(|q| q.scores.ap.unwrap()).sum::<f64>() / scored as f64;
    assert!(mean_ap > 0.0, "LightRAG's chunks found the questions' documents");
}

/// graphrag-serve's reply: the text units GraphRAG put in its prompt under
/// their ids in text_units.parquet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn microsoft_graphrag_answers_through_graphrag_serve_with_its_text_units() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "gr").await;
    let set = imported_with_questions(&db, "graphrag", "graphrag").await;
    let pool = db.open().await;
    let ids = ours(&pool).await;
    let units: Vec<(String, i64)> = ids.clone().into_iter().collect();
    let seen: Seen = Default::default();
    let record = seen.clone();
    let first = units[0].0.clone();
    let url = start(Router::new().route(
        "/query",
        post(move |headers: HeaderMap, Json(body): Json<Value>| {
            let first = first.clone();
            async move {
                let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_string);
                record.lock().unwrap().push(("/query".into(), auth, body.clone()));
                Json(json!({"response": format!("GraphRAG {}", body["method"].as_str().unwrap_or("")), "method": body["method"],
                            "contexts": [{"id": first, "text": "a text unit"}, {"id": "7", "text": "a unit it could not name"}],
                            "reports": [{"id": "3", "title": "Community 3", "text": "report"}]}))
            }
        }),
    ))
    .await;
    let url_param = format!("url=\"{url}/\"");
    let params =
        [url_param.as_str(), "method=\"drift\"", "community_level=1", "api_key=\"graphrag-bearer-0123456789\""];
    let made = json(&answer(&db, "Theirs", &set, "ms-graphrag", &params, &[]).await);
    assert_eq!(made["status"], "done", "{made}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len() as i64, made["count"].as_i64().unwrap(), "one request a question");
        for (_, auth, body) in seen.iter() {
            assert_eq!(auth.as_deref(), Some("Bearer graphrag-bearer-0123456789"));
            assert_eq!((body["method"].as_str(), body["community_level"].as_i64()), (Some("drift"), Some(1)));
            assert_eq!(body["response_type"], "Multiple Paragraphs");
        }
    }
    let answers =
        app::ssr::store::answers::list_answers(&pool, made["answers_id"].as_i64().unwrap(), None).await.unwrap();
    for a in &answers {
        assert_eq!(a.answer, "GraphRAG drift");
        let got: Vec<(&str, String)> = a.contexts.iter().map(|c| (c.kind.as_str(), c.id.clone())).collect();
        assert_eq!(got, [("chunk", units[0].1.to_string()), ("context", "7".to_string())]);
    }

    // A method GraphRAG lacks is refused before anything is sent.
    let out = answer(&db, "Theirs", &set, "ms-graphrag", &[&url_param, "method=\"deep\""], &[]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("method must be one of local, global, drift, basic"), "{err}");
}

/// Any OpenAI-compatible chat endpoint, no retrieval: the answers and the
/// tokens the endpoint counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_endpoint_is_the_no_retrieval_baseline() {
    let mock = mockllm::MockServer::start(mockllm::MockConfig::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "chat").await;
    let set = common::sample_hierarchical(&db, "QC", 0).await;
    let url_param = format!("url=\"{}\"", mock.base_url());
    let params = [url_param.as_str(), "model=\"mock-model\"", "temperature=0"];
    let made = json(&answer(&db, "A", &set, "chat-baseline", &params, &[]).await);
    assert_eq!(made["status"], "done", "{made}");
    let n = made["count"].as_u64().unwrap();
    assert_eq!(mock.stats().ok, n, "one chat request a question, nothing else");
    assert!(made["avg_tokens"].as_f64().unwrap() > 0.0, "the endpoint's usage is kept: {made}");
    let pool = db.open().await;
    let answers =
        app::ssr::store::answers::list_answers(&pool, made["answers_id"].as_i64().unwrap(), None).await.unwrap();
    assert!(answers.iter().all(|a| !a.answer.is_empty() && a.contexts.is_empty()));

    // Without a model the preset says so, and nothing is sent.
    let out = answer(&db, "A", &set, "chat-baseline", &[&url_param], &[]).await;
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("name the model"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mock.stats().ok, n);
}

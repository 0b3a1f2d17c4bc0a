//! `assay llm ping`: the offline default, and the real `openai` client
//! against the mock server, with the key kept out of every output and out of
//! the database.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::common;

use common::assay;
use mockllm::{MockConfig, MockServer};
use serde_json::Value;

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Everything in the database files, as text.
fn database_bytes(db: &Path) -> String {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", db.display())) {
            all.extend(bytes);
        }
    }
    String::from_utf8_lossy(&all).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_is_offline_by_default_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "a").await;
    let out = assay(&db, &["--json", "llm", "ping"], &[]).await;
    let v = json(&out);
    assert_eq!(v["provider"], "offline");
    assert_eq!(v["model"], "offline");
    assert!(v["reply"].as_str().unwrap().starts_with("pong (offline provider, no LLM)"), "{v}");
    let human = assay(&db, &["llm", "ping"], &[]).await;
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(text.starts_with("offline (no LLM)\nreply: pong"), "{text}");

    let pool = db.open().await;
    let logged: Vec<(String, String, bool)> =
        app::on_db!(&pool, |db| sqlx::query_as("SELECT provider, purpose, cached FROM llm_calls ORDER BY id")
            .fetch_all(db)
            .await)
        .unwrap();
    assert_eq!(
        logged,
        vec![("offline".into(), "ping".into(), false), ("offline".into(), "ping".into(), false)],
        "logged, never cached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_reaches_an_openai_compatible_endpoint_with_the_key_from_the_environment() {
    let key = "sk-cli-test-SECRET-9876";
    let mock = MockServer::start(MockConfig { api_key: Some(key.into()), ..Default::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("b.db"); // its bytes are read: SQLite only
    let base = mock.base_url();
    let env =
        [("ASSAY_LLM_PROVIDER", "openai"), ("ASSAY_LLM_BASE_URL", base.as_str()), ("ASSAY_LLM_MODEL", "mock-model")];

    let with_key: Vec<(&str, &str)> = env.iter().copied().chain([("ASSAY_LLM_API_KEY", key)]).collect();
    let out = assay(&db, &["--json", "llm", "ping", "--llm-price", "1,2"], &with_key).await;
    let v = json(&out);
    assert_eq!(v["provider"], "openai");
    assert_eq!(v["base_url"], base.as_str());
    assert_eq!(v["model"], "mock-model");
    assert_eq!(v["reply"], "Mock reply to: Reply with the single word: pong");
    // The mock's usage counts words: 6 in the prompt, 9 in its reply.
    assert_eq!((v["prompt_tokens"].as_u64(), v["completion_tokens"].as_u64()), (Some(6), Some(9)));
    assert_eq!(v["attempts"], 1);
    assert!((v["cost_usd"].as_f64().unwrap() - (6.0 * 1.0 + 9.0 * 2.0) / 1e6).abs() < 1e-12, "{v}");

    // OPENAI_API_KEY is the fallback; a ping is never answered from the cache.
    let fallback: Vec<(&str, &str)> = env.iter().copied().chain([("OPENAI_API_KEY", key)]).collect();
    json(&assay(&db, &["--json", "llm", "ping"], &fallback).await);
    assert_eq!(mock.stats().requests, 2);
    assert_eq!(mock.stats().unauthorized, 0);

    // A wrong key: one line on stderr, exit 1, the key nowhere.
    let wrong: Vec<(&str, &str)> = env.iter().copied().chain([("ASSAY_LLM_API_KEY", "sk-wrong-key-0000")]).collect();
    let out = assay(&db, &["llm", "ping"], &wrong).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(stderr, "error: LLM call failed: HTTP 401: Incorrect API key provided\n");

    let everything = format!("{}{}{}", String::from_utf8_lossy(&out.stdout), stderr, database_bytes(&db));
    assert!(everything.contains("Reply with the single word: pong"), "the call log is in the database");
    assert!(
        !everything.contains(key) && !everything.contains("sk-wrong-key-0000"),
        "a key leaked into output or the database"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_llm_settings_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "c").await;
    let out = assay(&db, &["llm", "ping", "--llm-provider", "claude"], &[]).await;
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: configuration: unknown provider \"claude\" (use offline or openai)\n"
    );
    let out = assay(&db, &["llm", "ping", "--llm-price", "cheap"], &[]).await;
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: configuration: price must be INPUT,OUTPUT[,CACHED_INPUT] in USD per million tokens, e.g. 0.15,0.60,0.075 (not \"cheap\")\n"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = assay(
        &db,
        &["llm", "ping", "--llm-provider", "openai", "--llm-base-url", &url, "--llm-timeout", "2"],
        &[("ASSAY_LLM_API_KEY", "")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: LLM call failed: connection failed:"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

/// `llm ping` against a local server that answers one request at a time
/// (llama.cpp's): it says so, and what to set; with those set it says
/// nothing more. It also names the context window the prompts are fitted to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_advises_concurrency_one_for_a_server_that_answers_one_request_at_a_time() {
    let mock = MockServer::start(MockConfig {
        latency: Duration::from_millis(150),
        one_at_a_time: true,
        context: Some(4096),
        advertise_context: true,
        ..Default::default()
    })
    .await;
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "p").await;
    let env =
        [("ASSAY_LLM_PROVIDER", "openai"), ("ASSAY_LLM_BASE_URL", base.as_str()), ("ASSAY_LLM_MODEL", "mock-model")];
    let v = json(&assay(&db, &["--json", "llm", "ping"], &env).await);
    assert_eq!(v["context_window"], 4096, "the endpoint's /v1/models says so");
    let advice = v["advice"].as_str().expect("advice for a serial server");
    assert!(advice.starts_with("This endpoint answers one request at a time: use concurrency 1 (now 8)"), "{advice}");
    let settled: Vec<(&str, &str)> =
        env.iter().copied().chain([("ASSAY_LLM_CONCURRENCY", "1"), ("ASSAY_LLM_TIMEOUT", "300")]).collect();
    let v = json(&assay(&db, &["--json", "llm", "ping"], &settled).await);
    assert_eq!(v["advice"], Value::Null);

    // A server that answers requests side by side gets no advice.
    let parallel = MockServer::start(MockConfig { latency: Duration::from_millis(150), ..Default::default() }).await;
    let base = parallel.base_url();
    let env =
        [("ASSAY_LLM_PROVIDER", "openai"), ("ASSAY_LLM_BASE_URL", base.as_str()), ("ASSAY_LLM_MODEL", "mock-model")];
    let v = json(&assay(&db, &["--json", "llm", "ping"], &env).await);
    assert_eq!(v["advice"], Value::Null);
    assert_eq!(v["context_window"], 8192, "nothing said: the default");
}

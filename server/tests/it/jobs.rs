//! Jobs through the CLI on a real SQLite file: the offline summaries job end
//! to end, and a job whose process is killed mid-way, resumed against the
//! mock server without paying twice for any finished item.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::corpora;

use common::{assay as run, assay_command as command};
use mockllm::{MockConfig, MockServer};
use serde_json::Value;

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "failed ({:?}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn project_with(db: &Path, extra: &[&str]) {
    json(&run(db, &["--json", "project", "create", "P"], &[]).await);
    let mut args = vec!["--json", "corpus", "add", "P", "--sample"];
    args.extend_from_slice(extra);
    json(&run(db, &args, &[]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_summaries_job_runs_to_the_end_and_logs_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let alice = corpora().join("alice_in_wonderland.txt");
    project_with(&db, &[alice.to_str().unwrap()]).await;
    let job = json(&run(&db, &["--json", "corpus", "summarise", "P"], &[]).await);
    assert_eq!(job["status"], "done");
    assert_eq!(job["total"], 44, "5 sample chunks and Alice's 39");
    assert_eq!(job["done"], 44);
    assert_eq!(job["failed"], 0);
    assert_eq!(job["cost_usd"], 0.0);
    let id = job["id"].as_i64().unwrap();

    let pool = app::ssr::store::open(&db).await.unwrap();
    let items = app::ssr::store::jobs::job_items(&pool, id).await.unwrap();
    assert_eq!(items.len(), 44);
    let first = &items.iter().find(|i| i.key == "chunk-1").unwrap();
    assert_eq!(first.status.as_str(), "done");
    let summary = first.result.as_deref().unwrap();
    let chunk: String =
        sqlx::query_scalar("SELECT body FROM chunks WHERE id = 1").fetch_one(pool.sqlite().unwrap()).await.unwrap();
    let flat = chunk.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(summary.trim_end_matches(" …")),
        "an extractive summary is a sentence of its chunk: {summary}"
    );

    // The job page's summary in numbers: the pace is the span from the
    // first item to finish to the last, by the database's date arithmetic
    // (here set across midnight: 44 items in 90 s, 43 gaps).
    for (sql, at) in [
        ("UPDATE job_items SET finished_at = ? WHERE job_id = ?", "2026-12-01T23:59:30.000Z"),
        ("UPDATE job_items SET finished_at = ? WHERE job_id = ? AND key = 'chunk-1'", "2026-12-01T23:59:00.000Z"),
        ("UPDATE job_items SET finished_at = ? WHERE job_id = ? AND key = 'chunk-2'", "2026-12-02T00:00:30.000Z"),
    ] {
        sqlx::query(sql).bind(at).bind(id).execute(pool.sqlite().unwrap()).await.unwrap();
    }
    let (rows, reasons) = app::ssr::jobs::job_summary(&pool, id).await.unwrap();
    assert!(reasons.is_empty());
    let pace = rows.iter().find(|(k, _)| k == "Pace").map(|(_, v)| v.as_str());
    assert_eq!(pace, Some("44 items in 1 min 30 s between the first and the last (2.1 s per item)"), "{rows:?}");
    assert_eq!(rows[0].1, "44 (44 done, 0 failed)");

    let calls = app::ssr::store::jobs::item_calls(&pool, id, "chunk-1").await.unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].provider, types::CallProvider::Offline);
    assert_eq!(calls[0].purpose, "summarise_chunk");
    assert_eq!(
        calls[0].prompt_hash.as_deref(),
        Some(engine::llm::prompt::prompt_hash(engine::graph::summarise::PROMPT).as_str())
    );
    assert!(calls[0].prompt.starts_with("[system]\nYou summarise passages"), "{}", calls[0].prompt);
    assert_eq!(calls[0].reply.as_deref(), Some(summary));
    // A provider this Assay does not know (a newer one's, or a hand edit)
    // is an error naming the row, not some default.
    let call_id = calls[0].id;
    sqlx::query("UPDATE llm_calls SET provider = 'anthropic' WHERE id = ?")
        .bind(call_id)
        .execute(pool.sqlite().unwrap())
        .await
        .unwrap();
    let e = app::ssr::store::jobs::item_calls(&pool, id, "chunk-1").await.unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "llm_calls row {call_id}: a call's provider must be offline, openai or simulated, not \"anthropic\""
        )),
        "{e}"
    );
    sqlx::query("UPDATE llm_calls SET provider = 'offline' WHERE id = ?")
        .bind(call_id)
        .execute(pool.sqlite().unwrap())
        .await
        .unwrap();

    let listed = json(&run(&db, &["--json", "job", "list", "P"], &[]).await);
    assert_eq!(listed[0]["id"], id);
    // The offline stand-ins' replies are made again, not cached: as fast
    // as a lookup, the same every time, free (a model's replies are cached:
    // `a_jobs_calls_are_written_with_the_item_that_made_them`).
    let again = json(&run(&db, &["--json", "corpus", "summarise", "P"], &[]).await);
    assert_eq!(again["done"], 44);
    let cached: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM llm_calls WHERE job_id = ? AND cached = 1")
        .bind(again["id"].as_i64().unwrap())
        .fetch_one(pool.sqlite().unwrap())
        .await
        .unwrap();
    assert_eq!(cached, 0);
    let rows: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM llm_cache").fetch_one(pool.sqlite().unwrap()).await.unwrap();
    assert_eq!(rows, 0, "no offline reply is kept in the cache");
    let again_calls = app::ssr::store::jobs::item_calls(&pool, again["id"].as_i64().unwrap(), "chunk-1").await.unwrap();
    assert_eq!(again_calls[0].reply, calls[0].reply, "the same reply, made again");
    // Logged compactly, as no provider was paid: the reply kept once by
    // its hash (both runs' calls point to one row), no cache key.
    let (inline, key, hash): (Option<String>, String, Option<String>) =
        sqlx::query_as("SELECT reply, cache_key, reply_hash FROM llm_calls WHERE id = ?")
            .bind(again_calls[0].id)
            .fetch_one(pool.sqlite().unwrap())
            .await
            .unwrap();
    assert_eq!((inline, key.as_str()), (None, ""), "an offline call's row holds no reply and no cache key");
    let hash = hash.expect("the reply's hash");
    assert_eq!(hash, app::ssr::tokens::hash(summary));
    let (pointing, stored): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM llm_calls WHERE reply_hash = $1), (SELECT COUNT(*) FROM llm_replies WHERE hash = $1)",
    )
    .bind(&hash)
    .fetch_one(pool.sqlite().unwrap())
    .await
    .unwrap();
    assert_eq!((pointing >= 2, stored), (true, 1), "{pointing} calls, {stored} stored replies");

    // --no-cache: the same job again, every call made anew.
    let fresh = json(&run(&db, &["--json", "corpus", "summarise", "P", "--no-cache"], &[]).await);
    let cached: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM llm_calls WHERE job_id = ? AND cached = 1")
        .bind(fresh["id"].as_i64().unwrap())
        .fetch_one(pool.sqlite().unwrap())
        .await
        .unwrap();
    assert_eq!((fresh["done"].as_i64(), cached), (Some(44), 0));
}

/// The environment that points `assay` at the mock, two calls at a time.
fn mock_env(base: &str) -> [(&'static str, &str); 4] {
    [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_LLM_CONCURRENCY", "2"),
    ]
}

/// Runs `assay ARGS` and kills it (SIGKILL) `grace` after `items` of its
/// job's items have finished.
async fn kill_after(
    db: &Path,
    pool: &app::ssr::store::Db,
    args: &[&str],
    env: &[(&str, &str)],
    items: i64,
    grace: Duration,
) {
    let mut child = command(db, args, env).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    loop {
        let finished: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM job_items").fetch_one(pool.sqlite().unwrap()).await.unwrap();
        if finished >= items {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the job made no progress");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(grace).await;
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_job_shows_interrupted_and_resumes_without_repeating_finished_calls() {
    let mock = MockServer::start(MockConfig { latency: Duration::from_millis(250), ..Default::default() }).await;
    let base = mock.base_url();
    let env = mock_env(&base);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let mix = corpora().join("ultradomain_mix_slice5.jsonl");
    project_with(&db, &[mix.to_str().unwrap()]).await;
    let pool = app::ssr::store::open(&db).await.unwrap();
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chunks").fetch_one(pool.sqlite().unwrap()).await.unwrap();
    assert!(total >= 15, "{total} chunks");

    kill_after(&db, &pool, &["corpus", "summarise", "P"], &env, 4, Duration::ZERO).await;

    let shown = json(&run(&db, &["--json", "job", "show", "1"], &env).await);
    assert_eq!(shown["status"], "interrupted");
    let done_before: i64 = shown["done"].as_i64().unwrap();
    assert!(done_before >= 4 && done_before < total, "{done_before} of {total}");
    let human = String::from_utf8(run(&db, &["job", "show", "1"], &env).await.stdout).unwrap();
    assert!(human.contains("resume with: assay job resume 1"), "{human}");

    // Which prompts belonged to items finished before the kill.
    let finished_prompts: Vec<String> = sqlx::query_scalar(
        "SELECT c.body FROM job_items i JOIN chunks c ON 'chunk-' || c.id = i.key WHERE i.job_id = 1 AND i.status = 'done'",
    )
    .fetch_all(pool.sqlite().unwrap())
    .await
    .unwrap();
    let finished_prompts: Vec<String> =
        finished_prompts.into_iter().map(|t| format!("Passage:\n<<<\n{t}\n>>>")).collect();

    let resumed = json(&run(&db, &["--json", "job", "resume", "1"], &env).await);
    assert_eq!(resumed["status"], "done");
    assert_eq!(resumed["done"].as_i64(), Some(total));
    let stats = mock.stats();
    for prompt in &finished_prompts {
        assert_eq!(stats.answered_prompts.get(prompt), Some(&1), "a finished item was asked again");
    }
    assert_eq!(stats.answered_prompts.len() as i64, total, "every item was answered");
    // At most the items in flight at the kill (concurrency 2) were asked twice.
    let repeated = stats.answered_prompts.values().filter(|&&n| n > 1).count();
    assert!(repeated <= 2, "{repeated} prompts repeated");
}

#[tokio::test]
async fn job_counters_follow_each_items_latest_outcome() {
    use engine::jobs::{ItemOutcome, JobStore};
    let dir = tempfile::tempdir().unwrap();
    let (pool, job) = summaries_job(&dir.path().join("c.db"), 3).await;
    let store = app::ssr::store::jobs::SqliteJobStore::new(pool.clone());
    let done = |tokens| ItemOutcome::Done { result: "ok".into(), tokens, cost_usd: 0.5 };
    let failed = ItemOutcome::Failed { error: "timeout".into(), tokens: 7, cost_usd: 0.25 };
    store.record(job, "a", &done(10)).await.unwrap();
    let p = store.record(job, "b", &failed).await.unwrap();
    assert_eq!((p.total, p.done, p.failed, p.tokens), (3, 1, 1, 17));
    assert!((p.cost_usd - 0.75).abs() < 1e-12);
    // Retrying b replaces its failure: the counters move by the difference.
    let p = store.record(job, "b", &done(20)).await.unwrap();
    assert_eq!((p.done, p.failed, p.tokens), (2, 0, 30));
    assert!((p.cost_usd - 1.0).abs() < 1e-12);
    let shown = app::ssr::store::jobs::get_job(&pool, job).await.unwrap();
    assert_eq!((shown.done, shown.failed, shown.tokens), (2, 0, 30));
    // A batch (the job runner's one writer): a new item and a replaced one,
    // in one transaction.
    let p = store.record_all(job, &[("c".to_string(), done(5)), ("a".to_string(), failed.clone())]).await.unwrap();
    assert_eq!((p.done, p.failed, p.tokens), (2, 1, 30 - 10 + 7 + 5));
    assert!((p.cost_usd - 1.25).abs() < 1e-12);
    let statuses: Vec<(String, String)> =
        sqlx::query_as("SELECT key, status FROM job_items WHERE job_id = ? ORDER BY key")
            .bind(job)
            .fetch_all(pool.sqlite().unwrap())
            .await
            .unwrap();
    let want = [("a", "failed"), ("b", "done"), ("c", "done")].map(|(k, s)| (k.to_string(), s.to_string()));
    assert_eq!(statuses, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobs_calls_are_written_with_the_item_that_made_them() {
    use engine::jobs::{ItemOutcome, JobStore};
    use engine::llm::{CallContext, ChatRequest, Gateway, Message, PriceTable};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let (pool, job) = summaries_job(&dir.path().join("b.db"), 2).await;
    let calls = Arc::new(app::ssr::store::calls::SqliteCallStore::buffered(pool.clone()).await.unwrap());
    let store = app::ssr::store::jobs::SqliteJobStore::new(pool.clone()).with_calls(calls.clone());
    // A model's replies are cached (the offline stand-ins' are not).
    let mock = mockllm::MockServer::start(mockllm::MockConfig::default()).await;
    let endpoint =
        engine::llm::openai::OpenAiProvider::new(engine::llm::openai::OpenAiConfig::new(mock.base_url(), "mock-model"))
            .unwrap();
    let gateway = Gateway::new(Arc::new(endpoint), calls.clone(), PriceTable::default());
    let logged = || async {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM llm_calls").fetch_one(pool.sqlite().unwrap()).await.unwrap();
        let cached: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM llm_cache").fetch_one(pool.sqlite().unwrap()).await.unwrap();
        (n, cached)
    };
    let ping = |text: &str| ChatRequest::new("ping", vec![Message::user(text.to_string())]);
    let ctx = |item: &str| CallContext { job_id: Some(job), item: Some(item.into()), prompt_hash: None };

    let first = gateway.chat(&ping("hello"), &ctx("a")).await.unwrap();
    assert!(!first.cached);
    // Waiting to be written, the reply already answers the same request.
    let again = gateway.chat(&ping("hello"), &ctx("a")).await.unwrap();
    assert!(again.cached && again.text == first.text);
    assert_eq!(logged().await, (1, 1), "the paid reply written as it came; the hit waits for its item");

    store.record(job, "a", &ItemOutcome::Done { result: "ok".into(), tokens: 1, cost_usd: 0.0 }).await.unwrap();
    assert_eq!(logged().await, (2, 1), "the item's two calls and one cached reply, with the item");
    let items = app::ssr::store::jobs::item_calls(&pool, job, "a").await.unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items.iter().filter(|c| c.cached).count(), 1);
    assert!(items.iter().all(|c| c.prompt.contains("hello")), "each call's prompt is read back");
    // A paid reply stays on its row, with its cache key: the record of
    // what the provider was paid for.
    let (reply, key, hash): (Option<String>, String, Option<String>) =
        sqlx::query_as("SELECT reply, cache_key, reply_hash FROM llm_calls WHERE NOT cached")
            .fetch_one(pool.sqlite().unwrap())
            .await
            .unwrap();
    assert_eq!((reply.as_deref(), key.len(), hash), (Some(first.text.as_str()), 64, None));
    assert!(items.iter().all(|c| c.reply.as_deref() == Some(first.text.as_str())));

    // A paid call outside any item is written at once too; the flush at
    // the job's end has nothing left.
    gateway.chat(&ping("bye"), &ctx("b")).await.unwrap();
    assert_eq!(logged().await, (3, 2));
    calls.flush().await.unwrap();
    assert_eq!(logged().await, (3, 2));
    // From the database now: the same request is a cache hit.
    assert!(gateway.chat(&ping("bye"), &ctx("b")).await.unwrap().cached);
    calls.flush().await.unwrap();
    // The offline stand-ins' calls (unpaid) wait for their item, and none
    // of their replies is cached.
    let offline = Gateway::new(Arc::new(engine::offline::provider()), calls.clone(), PriceTable::default());
    offline.chat(&ping("offline"), &ctx("c")).await.unwrap();
    assert!(!offline.chat(&ping("offline"), &ctx("c")).await.unwrap().cached);
    assert_eq!(logged().await, (4, 2), "not before their item");
    store.record(job, "c", &ItemOutcome::Done { result: "ok".into(), tokens: 1, cost_usd: 0.0 }).await.unwrap();
    assert_eq!(logged().await, (6, 2), "with their item, no cache row");
}

/// Items of several calls each (graph extraction with two gleaning rounds):
/// every paid reply is written as it arrives, so after a kill only the
/// calls in flight (at most the concurrency, 2) are paid for again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_multi_call_job_pays_again_only_for_calls_in_flight() {
    // Extraction replies as the offline extractor's, gleaning turns empty.
    let extract = |req: &Value| -> String {
        let last = req["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or("");
        let chat = engine::llm::ChatRequest::new("extract", vec![engine::llm::Message::user(last)]);
        engine::graph::extract::offline(&chat)
            .unwrap_or_else(|_| serde_json::to_string(&engine::graph::offline::extract("")).unwrap())
    };
    let config = MockConfig {
        latency: Duration::from_millis(200),
        responder: Some(mockllm::Responder(std::sync::Arc::new(extract))),
        ..Default::default()
    };
    let mock = MockServer::start(config).await;
    let base = mock.base_url();
    let env = mock_env(&base);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let mix = corpora().join("ultradomain_mix_slice5.jsonl");
    project_with(&db, &[mix.to_str().unwrap()]).await;
    let pool = app::ssr::store::open(&db).await.unwrap();
    // Mid-item: let a first call of the next items come back, then kill.
    let args = ["graph", "build", "P", "--gleaning", "2"];
    kill_after(&db, &pool, &args, &env, 2, Duration::from_millis(500)).await;
    let before = mock.stats().ok;

    let job: i64 = sqlx::query_scalar("SELECT MAX(id) FROM jobs").fetch_one(pool.sqlite().unwrap()).await.unwrap();
    let resumed = json(&run(&db, &["--json", "job", "resume", &job.to_string()], &env).await);
    assert_eq!(resumed["status"], "done", "{resumed}");
    let stats = mock.stats();
    // Each call's body is unique (a gleaning turn carries its chunk's
    // conversation): a body answered twice was paid for twice.
    let repeated: u64 = stats.answered.values().map(|&n| n.saturating_sub(1)).sum();
    let done: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM job_items WHERE job_id = ? AND status = 'done'")
        .bind(job)
        .fetch_one(pool.sqlite().unwrap())
        .await
        .unwrap();
    println!(
        "graph build (3 calls per chunk) killed after {before} calls; resumed to {} calls, {done} items done; {repeated} calls paid twice",
        stats.ok
    );
    assert!(before >= 6 && stats.ok > before, "the kill came mid-job ({before} of {} calls)", stats.ok);
    assert!(repeated <= 2, "{repeated} calls were paid for twice (at most the 2 in flight may be)");
}

/// A test stage of forty items (`k-0`…`k-39`), each taking `pause` ms,
/// that panics (a bug in Assay) on the items `panics` picks: its items go
/// out on the runner's threads, one panics, and the run gets the panic.
struct FortyItems {
    panics: fn(&str) -> bool,
    pause: u64,
}

impl app::ssr::jobs::Stage for FortyItems {
    fn items<'a>(
        &'a self,
        _: &'a app::ssr::store::Db,
        _: &'a app::model::JobView,
        _: &'a app::ssr::jobs::JobParams,
    ) -> app::ssr::jobs::Items<'a> {
        let items = (0..40).map(|i| engine::jobs::WorkItem { key: format!("k-{i}"), payload: Value::Null }).collect();
        Box::pin(async move { Ok(items) })
    }

    fn execute<'a>(
        &'a self,
        run: &'a app::ssr::jobs::Run<'a>,
        items: Vec<engine::jobs::WorkItem>,
    ) -> app::ssr::jobs::Ended<'a> {
        let (pause, panics) = (self.pause, self.panics);
        Box::pin(run.each(items, move |item| async move {
            tokio::time::sleep(Duration::from_millis(pause)).await;
            if panics(&item.key) {
                panic!("index 9 is out of bounds, on purpose");
            }
            engine::jobs::ItemOutcome::Done { result: "ok".into(), tokens: 1, cost_usd: 0.0 }
        }))
    }
}

fn panicking_stages(_: app::model::JobKind) -> &'static dyn app::ssr::jobs::Stage {
    fn at_17(key: &str) -> bool {
        key == "k-17"
    }
    static STAGE: FortyItems = FortyItems { panics: at_17, pause: 0 };
    &STAGE
}

/// A job whose run panics ends failed with the panic's message, where its
/// page shows it, instead of staying "running" with no one running it (its
/// page would wait for ever); the server that ran it goes on, and can run
/// the job again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_run_panics_ends_failed_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let (pool, job) = summaries_job(&dir.path().join("p.db"), 40).await;
    let manager = std::sync::Arc::new(app::ssr::jobs::JobManager::new(panicking_stages));
    let llm = std::sync::Arc::new(engine::llm::settings::LlmSettings::default());
    manager.spawn(pool.clone(), llm.clone(), job, false).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended = loop {
        let j = app::ssr::store::jobs::get_job(&pool, job).await.unwrap();
        if !j.status.is_active() {
            break j;
        }
        assert!(Instant::now() < deadline, "the job is still {} a minute after its run panicked", j.status);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(ended.status, app::model::JobStatus::Failed, "{ended:?}");
    let error = ended.error.unwrap_or_default();
    assert!(
        error.contains("Assay failed inside the job, a bug to report: index 9 is out of bounds, on purpose"),
        "{error}"
    );
    // No longer counted as running here: it can be started again.
    while let Err(e) = manager.spawn(pool.clone(), llm.clone(), job, false) {
        assert!(Instant::now() < deadline, "the job could not be started again: {e}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// On a shared database (PostgreSQL), a panic in the part of a job a
/// joining process runs (`assay worker`, another server) ends that part
/// only: the join returns the panic's message instead of unwinding into its
/// caller, the part's claims go back when its heartbeat stops, and the
/// process that started the job runs them and finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_joining_part_that_panics_leaves_and_the_job_finishes() {
    fn never(_: &str) -> bool {
        false
    }
    fn always(_: &str) -> bool {
        true
    }
    static SOUND: FortyItems = FortyItems { panics: never, pause: 150 };
    static BROKEN: FortyItems = FortyItems { panics: always, pause: 0 };
    let pg = common::pg_database().await;
    // Claims lapse 2 s after their heartbeat stops.
    let options = app::ssr::store::OpenOptions { claim_timeout: 2, ..Default::default() };
    let starter = app::ssr::store::open_target_with(&pg.url, options).await.unwrap();
    let joiner = app::ssr::store::open_target_with(&pg.url, options).await.unwrap();
    let job = summaries_job_in(&starter, 40).await;
    let manager = std::sync::Arc::new(app::ssr::jobs::JobManager::new(|_| &SOUND));
    let llm = std::sync::Arc::new(engine::llm::settings::LlmSettings::default());
    manager.spawn(starter.clone(), llm.clone(), job, false).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while app::ssr::store::jobs::get_job(&starter, job).await.unwrap().status != app::model::JobStatus::Running {
        assert!(Instant::now() < deadline, "the job never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let part = app::ssr::jobs::join(&joiner, &llm, |_| &BROKEN, job, Default::default()).await;
    let error = part.expect_err("the joining part's items panic").to_string();
    assert!(error.contains("part failed inside Assay, a bug to report: index 9 is out of bounds"), "{error}");
    let ended = loop {
        let j = app::ssr::store::jobs::get_job(&starter, job).await.unwrap();
        if !j.status.is_active() {
            break j;
        }
        assert!(Instant::now() < deadline, "the job is still {} a minute after it started", j.status);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!((ended.status, ended.done, ended.failed), (app::model::JobStatus::Done, 40, 0), "{ended:?}");
}

/// A SQLite file at `path` with a project and a summaries job of `total`
/// items (not run): the pool and the job's id.
async fn summaries_job(path: &Path, total: i64) -> (app::ssr::store::Db, i64) {
    let pool = app::ssr::store::open(path).await.unwrap();
    let job = summaries_job_in(&pool, total).await;
    (pool, job)
}

/// A project in `pool` with a summaries job of `total` items (not run): the job's id.
async fn summaries_job_in(pool: &app::ssr::store::Db, total: i64) -> i64 {
    let project = app::ssr::store::projects::create_project(pool, "P", &Default::default()).await.unwrap().summary.id;
    app::ssr::store::jobs::create_job(
        pool,
        project,
        app::model::JobKind::Summaries,
        &serde_json::json!({}),
        None,
        total,
    )
    .await
    .unwrap()
}

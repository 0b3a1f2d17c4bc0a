//! Judging throughput of a team deployment: one evaluation's
//! judge calls through the mock LLM server, run by the `assay` release
//! binary
//!   - as one process on SQLite (the laptop),
//!   - as one process on PostgreSQL (`assay eval run` alone),
//!   - as three processes on PostgreSQL (`assay eval run` and two
//!     `assay worker`s),
//! with the configured concurrency (64) the deployment's total, at the
//! mock's latency of 100 ms (bound: 64 / 0.1 s = 640 calls/s) and 10 ms
//! (6,400 calls/s). Each run is a fresh evaluation (`--no-cache`) of the
//! sample project's 12 questions × M trials, two calls per item (both
//! orders); the time is the job's own (started → finished, as its row
//! says), and the calls are the mock's count.
//!
//!   cargo bench -p server --bench workers
//!   (ASSAY_BIN: the binary, default target/release/assay; ASSAY_TEST_POSTGRES:
//!    an administrator's URL, default postgres://postgres@127.0.0.1:5432/postgres;
//!    BENCH_CALLS: calls per run at 100 ms, default 19,200 (30 s); BENCH_CALLS_10MS:
//!    at 10 ms, default 24,000; 0 leaves a latency out)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use mockllm::{MockConfig, MockServer, Responder};
use sqlx::Connection;

const CONCURRENCY: &str = "64";

fn assay(bin: &Path, db: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args).arg("--db").arg(db).env("ASSAY_LLM_PROVIDER", "offline");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("run the assay binary (ASSAY_BIN)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The sample project with BM25 and LightRAG answers to 12 graph questions
/// (offline); the question set's id.
fn sample(bin: &Path, db: &str) -> String {
    json(&mut assay(bin, db, &["--json", "project", "create", "A"], &[]));
    json(&mut assay(bin, db, &["--json", "corpus", "add", "A", "--sample"], &[]));
    json(&mut assay(bin, db, &["--json", "graph", "build", "A"], &[]));
    let generate = [
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
    let set = json(&mut assay(bin, db, &generate, &[]))["set_id"].to_string();
    for method in ["bm25", "lightrag"] {
        json(&mut assay(bin, db, &["--json", "answers", "generate", "A", "--set", &set, "--method", method], &[]));
    }
    set
}

struct Killed(Vec<Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One evaluation of `trials` trials with `workers` workers beside the
/// starting process: (seconds, calls answered).
async fn evaluate(bin: &Path, db: &str, set: &str, trials: u32, workers: usize, mock: &MockServer) -> (f64, u64) {
    let base = mock.base_url();
    let env = [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base.as_str()),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_LLM_CONCURRENCY", CONCURRENCY),
    ];
    let _workers = Killed(
        (0..workers)
            .map(|_| {
                assay(bin, db, &["worker", "--poll-ms", "50"], &env)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    // The workers are up (they print before polling).
    tokio::time::sleep(Duration::from_millis(500)).await;
    mock.reset_stats();
    let trials = trials.to_string();
    let args = [
        "--json",
        "eval",
        "run",
        "A",
        "--set",
        set,
        "--methods",
        "bm25,lightrag",
        "--judge",
        "llm",
        "--protocol",
        "unbiased",
        "--no-align",
        "--repeats",
        "1",
        "--no-cache",
        "--trials",
        &trials,
    ];
    let mut cmd = assay(bin, db, &args, &env);
    let out = tokio::task::spawn_blocking(move || json(&mut cmd)).await.unwrap();
    assert_eq!(out["status"], "done", "{out}");
    let job = out["job"].to_string();
    let shown = json(&mut assay(bin, db, &["--json", "job", "show", &job], &[]));
    (shown["elapsed_secs"].as_f64().unwrap(), mock.stats().ok)
}

/// Transactions committed in database `name` so far.
async fn commits(admin: &mut sqlx::PgConnection, name: &str) -> i64 {
    sqlx::query_scalar("SELECT xact_commit FROM pg_stat_database WHERE datname = $1")
        .bind(name)
        .fetch_one(admin)
        .await
        .unwrap()
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var_os("ASSAY_BIN").map(PathBuf::from).unwrap_or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
        target.join("release/assay")
    });
    let calls: u32 = std::env::var("BENCH_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(19_200);
    let admin =
        std::env::var("ASSAY_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let offline = Arc::new(engine::offline::provider());
        let respond = move |req: &serde_json::Value| offline.answer_body(req);
        let mock = MockServer::start(MockConfig {
            responder: Some(Responder(Arc::new(respond))),
            lean: true,
            ..Default::default()
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let sqlite = dir.path().join("one.db").display().to_string();
        let name = format!("assay_bench_workers_{}", std::process::id());
        let mut admin_conn = sqlx::PgConnection::connect(&admin).await.expect("PostgreSQL (ASSAY_TEST_POSTGRES)");
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin_conn).await.unwrap();
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin_conn).await.unwrap();
        let pg = match admin.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{name}"),
            None => panic!("ASSAY_TEST_POSTGRES: a URL ending in /DATABASE"),
        };
        let (set_sqlite, set_pg) = (sample(&bin, &sqlite), sample(&bin, &pg));
        let pg = pg.as_str();
        println!("judging through the mock, concurrency {CONCURRENCY} in all, {}", bin.display());
        let calls_10ms: u32 = std::env::var("BENCH_CALLS_10MS").ok().and_then(|v| v.parse().ok()).unwrap_or(24_000);
        for (latency_ms, calls) in [(100u64, calls), (10, calls_10ms)] {
            if calls == 0 {
                continue;
            }
            mock.set_latency(Duration::from_millis(latency_ms));
            let bound = 64.0 * 1000.0 / latency_ms as f64;
            // 12 questions, two calls per trial of each.
            let trials = (calls / 24).clamp(1, 1000);
            for (label, db, set, workers) in [
                ("SQLite, 1 process", sqlite.as_str(), set_sqlite.as_str(), 0),
                ("PostgreSQL, 1 process", pg, set_pg.as_str(), 0),
                ("PostgreSQL, 3 processes", pg, set_pg.as_str(), 2),
            ] {
                let before = commits(&mut admin_conn, &name).await;
                let (secs, answered) = evaluate(&bin, db, set, trials, workers, &mock).await;
                let rate = answered as f64 / secs;
                // PostgreSQL's counters are published within a second.
                tokio::time::sleep(Duration::from_millis(1500)).await;
                let per_item = if db == pg {
                    let items = (answered / 2).max(1) as f64;
                    format!("{:>5.2} transactions per item", (commits(&mut admin_conn, &name).await - before) as f64 / items)
                } else {
                    String::new()
                };
                println!(
                    "  {latency_ms:>3} ms  {label:<24} {answered:>6} calls in {secs:>6.2} s = {rate:>7.1} calls/s = {:>5.1} % of {bound:.0}/s  {per_item}",
                    100.0 * rate / bound
                );
            }
        }
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin_conn).await.unwrap();
    });
}

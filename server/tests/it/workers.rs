//! A team deployment: several `assay` processes on one
//! PostgreSQL database share a job's items through the database's queue.
//! Always on PostgreSQL (127.0.0.1:5432, `ASSAY_TEST_POSTGRES`), whichever
//! database the rest of the suite runs on.

use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;
use common::{assay, assay_command, json, sample_with_answers};
use mockllm::{MockConfig, MockServer, Responder};

/// `assay eval run`'s arguments for question set `set` of project A:
/// BM25 against LightRAG, judged by the LLM under the unbiased protocol
/// without length alignment, one draw per order: 12 questions × `trials`
/// items of two calls each.
fn evaluation(set: &str, trials: &str) -> Vec<String> {
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
        "--trials",
        trials,
    ];
    args.iter().map(|a| a.to_string()).collect()
}

/// The environment of a small deployment on the mock at `base`: 4
/// requests at once, claims lapsing after 3 s, 6 connections a process.
fn small_deployment(base: &str) -> [(&'static str, &str); 6] {
    [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_LLM_CONCURRENCY", "4"),
        ("ASSAY_CLAIM_TIMEOUT", "3"),
        ("ASSAY_DB_CONNECTIONS", "6"),
    ]
}

/// Held by each test here for its whole run: one deployment at a time.
/// Five `assay` processes open up to 12 connections each, and PostgreSQL
/// takes 100 in all; two deployments beside the rest of the suite ran out.
static ONE_DEPLOYMENT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A child process killed (and reaped) when dropped, however the test ends.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The process ids holding claims on the queue now (a claimant is named
/// `host:pid:start`).
async fn claimants(db: &app::ssr::store::Db) -> Vec<u32> {
    common::texts(db, "SELECT DISTINCT worker FROM job_queue WHERE worker IS NOT NULL", &[])
        .await
        .iter()
        .filter_map(|w| w.split(':').nth(1)?.parse().ok())
        .collect()
}

/// The report of evaluation `id` as `assay eval report` writes it: the
/// JSON without its creation time, and the pairs, trials and judgments CSVs.
async fn report(db: &str, id: i64, out: &std::path::Path) -> (serde_json::Value, Vec<Vec<u8>>) {
    json(&assay(db, &["--json", "eval", "report", &id.to_string(), "--out", out.to_str().unwrap()], &[]).await);
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    report["evaluation"].as_object_mut().unwrap().remove("created_at").unwrap();
    let tables = ["pairs.csv", "trials.csv", "judgments.csv"].iter().map(|f| std::fs::read(out.join(f)).unwrap());
    (report, tables.collect())
}

/// Three `assay worker`s and `assay serve` join an evaluation of 5,004
/// items (12 questions × 417 trials, two calls each) that `assay eval run`
/// starts on PostgreSQL, through the mock LLM server; one worker holding
/// claims is killed with SIGKILL mid-run. Every item ends done exactly
/// once, its claims go to the others after the timeout, no call is paid
/// twice but those in flight at the kill, and the report equals the one a
/// single process writes on SQLite. The configured concurrency (6) is the
/// deployment's: the mock never has more requests in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_an_evaluation_and_one_killed_loses_nothing() {
    let _deployment = ONE_DEPLOYMENT.lock().await;
    const TRIALS: &str = "417";
    const CONCURRENCY: u64 = 6;
    let dir = tempfile::tempdir().unwrap();
    let pg = common::pg_database().await;
    let set = sample_with_answers(&pg.url, [5, 5, 2]).await;
    let mock = common::slow_offline_mock(Duration::from_millis(15)).await;
    let base = mock.base_url();
    let concurrency = CONCURRENCY.to_string();
    let env = [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base.as_str()),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_LLM_CONCURRENCY", concurrency.as_str()),
        ("ASSAY_CLAIM_TIMEOUT", "3"),
        ("ASSAY_DB_CONNECTIONS", "6"),
    ];
    let spawn = |args: &[&str], log: &str| {
        let log = std::fs::File::create(dir.path().join(log)).unwrap();
        Process(assay_command(&pg.url, args, &env).stdout(Stdio::null()).stderr(log).spawn().unwrap())
    };
    let mut workers: Vec<Process> =
        (0..3).map(|w| spawn(&["worker", "--poll-ms", "100"], &format!("worker-{w}.log"))).collect();
    let web = spawn(&["serve", "--addr", "127.0.0.1:0"], "serve.log");
    let eval = evaluation(&set, TRIALS);
    let eval: Vec<&str> = eval.iter().map(String::as_str).collect();
    let started = Instant::now();
    let mut starter = assay_command(&pg.url, &eval, &env);
    let run = tokio::task::spawn_blocking(move || starter.output().unwrap());

    // Who takes part, and the kill: a worker holding claims, once 1,000
    // items are done.
    let pool = app::ssr::store::open_target(&pg.url).await.unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut killed = None;
    while !run.is_finished() {
        seen.extend(claimants(&pool).await);
        let done = common::scalar(&pool, "SELECT COUNT(*) FROM job_items", &[]).await;
        if killed.is_none() && done >= 1000 {
            let holding = claimants(&pool).await;
            if let Some(i) = workers.iter().position(|w| holding.contains(&w.0.id())) {
                workers[i].0.kill().unwrap();
                workers[i].0.wait().unwrap();
                killed = Some((i, done));
            }
        }
        assert!(started.elapsed() < Duration::from_secs(240), "the evaluation did not end");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let out = json(&run.await.unwrap());
    let shared_secs = started.elapsed().as_secs_f64();
    let (victim, done_at_kill) = killed.expect("a worker held claims after 1,000 items");
    assert_eq!(out["status"], "done", "{out}");
    let mut everyone: Vec<u32> = workers.iter().map(|w| w.0.id()).collect();
    everyone.push(web.0.id());
    assert!(
        everyone.iter().all(|pid| seen.contains(pid)),
        "every worker and the server took items: {seen:?} of {everyone:?}"
    );
    assert_eq!(seen.len(), 5, "and the process that started the job: {seen:?}");
    assert!(done_at_kill < 5004, "the kill came mid-run");

    // Every item done, once; the counters count each once.
    let job = out["job"].as_i64().unwrap();
    let items = "SELECT COUNT(*) FROM job_items WHERE job_id = $1 AND status = 'done'";
    assert_eq!(common::scalar(&pool, items, &[job]).await, 5004);
    let shown = app::ssr::store::jobs::get_job(&pool, job).await.unwrap();
    assert_eq!((shown.total, shown.done, shown.failed), (5004, 5004, 0));
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM job_queue", &[]).await, 0, "the queue is empty");

    // No call paid twice: each paid reply is logged once, and the mock
    // answered no more than those and the calls in flight at the kill.
    let paid = "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND NOT cached AND error IS NULL";
    let paid = common::scalar(&pool, paid, &[job]).await;
    let twice =
        "SELECT COUNT(*) FROM (SELECT cache_key FROM llm_calls WHERE job_id = $1 AND NOT cached AND error IS NULL
                  GROUP BY cache_key HAVING COUNT(*) > 1) twice";
    assert_eq!(common::scalar(&pool, twice, &[job]).await, 0, "a reply paid twice");
    assert_eq!(paid, 5004 * 2, "each item's two calls (both orders)");
    let stats = mock.stats();
    let answered = stats.ok as i64;
    // The configured concurrency is the deployment's total: five processes
    // with 6 each never had more than 6 requests at the endpoint.
    assert!(
        (2..=CONCURRENCY).contains(&stats.max_in_flight),
        "{} requests in flight at once, with a limit of {CONCURRENCY}",
        stats.max_in_flight
    );
    eprintln!(
        "shared evaluation: {:.1} s for 5,004 items by 5 processes, worker {victim} killed after {done_at_kill}; \
         {answered} calls answered, {paid} paid and logged, {} in flight at most",
        shared_secs, stats.max_in_flight
    );
    assert!(
        (paid..=paid + CONCURRENCY as i64).contains(&answered),
        "the mock answered {answered}; {paid} logged (worker {victim} killed with at most {CONCURRENCY} in flight)"
    );

    // The report is a single process's on SQLite.
    let sqlite = dir.path().join("one.db");
    let one_set = sample_with_answers(&sqlite, [5, 5, 2]).await;
    assert_eq!(one_set, set);
    let single = json(&assay(&sqlite, &eval, &env).await);
    assert_eq!(single["status"], "done", "{single}");
    let shared = report(&pg.url, out["evaluation_id"].as_i64().unwrap(), &dir.path().join("shared")).await;
    let alone =
        report(sqlite.to_str().unwrap(), single["evaluation_id"].as_i64().unwrap(), &dir.path().join("alone")).await;
    assert_eq!(shared.0, alone.0, "the same report");
    assert!(shared.1 == alone.1, "the same pairs, trials and judgments");
    drop(web);
}

/// `assay job cancel` on PostgreSQL stops a job in every process working on
/// it: the process that started it ends (exit 3, cancelled), the worker
/// gives its claims back and stays up for other jobs; what finished is
/// kept, and a resume runs only the rest — with the worker's help again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_reaches_every_process_and_a_resume_runs_the_rest() {
    let _deployment = ONE_DEPLOYMENT.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let pg = common::pg_database().await;
    let set = sample_with_answers(&pg.url, [5, 5, 2]).await;
    let mock = common::slow_offline_mock(Duration::from_millis(40)).await;
    let base = mock.base_url();
    let env = small_deployment(&base);
    let log = std::fs::File::create(dir.path().join("worker.log")).unwrap();
    let mut worker = Process(
        assay_command(&pg.url, &["worker", "--poll-ms", "100"], &env)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let eval = evaluation(&set, "100");
    let eval: Vec<&str> = eval.iter().map(String::as_str).collect();
    let mut starter = assay_command(&pg.url, &eval, &env);
    let run = tokio::task::spawn_blocking(move || starter.output().unwrap());
    let pool = app::ssr::store::open_target(&pg.url).await.unwrap();
    let started = Instant::now();
    let job = loop {
        let done = common::scalar(&pool, "SELECT COUNT(*) FROM job_items", &[]).await;
        if done >= 100 && claimants(&pool).await.contains(&worker.0.id()) {
            break common::scalar(&pool, "SELECT MAX(id) FROM jobs", &[]).await;
        }
        assert!(!run.is_finished() && started.elapsed() < Duration::from_secs(120), "no cancel point reached");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let cancelled = json(&assay(&pg.url, &["--json", "job", "cancel", &job.to_string()], &env).await);
    assert_eq!(cancelled["status"], "cancelled");
    let out = run.await.unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    // Within a heartbeat (0.6 s here) every claim is given back, and no
    // item is recorded after.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let held = "SELECT COUNT(*) FROM job_queue WHERE worker IS NOT NULL";
    assert_eq!(common::scalar(&pool, held, &[]).await, 0, "claims given back");
    let kept = common::scalar(&pool, "SELECT COUNT(*) FROM job_items", &[]).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM job_items", &[]).await, kept, "nothing ran after");
    assert!(kept < 1200, "{kept} of 1,200 kept");
    assert!(worker.0.try_wait().unwrap().is_none(), "the worker stays up");
    let refused = assay(&pg.url, &["job", "cancel", &job.to_string()], &env).await;
    let refused = String::from_utf8_lossy(&refused.stderr);
    assert!(refused.contains("is not running (cancelled)"), "{refused}");

    // The resume: the rest, once each, the worker taking part.
    let resumed = json(&assay(&pg.url, &["--json", "job", "resume", &job.to_string()], &env).await);
    assert_eq!(resumed["status"], "done", "{resumed}");
    assert_eq!((resumed["done"].as_i64(), resumed["total"].as_i64()), (Some(1200), Some(1200)));
    let paid = "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND NOT cached AND error IS NULL";
    assert_eq!(common::scalar(&pool, paid, &[job]).await, 2400, "each call paid once");
    assert!(mock.stats().ok <= 2400 + 4, "at most the 4 requests in flight at the cancel were abandoned");
}

/// A retry of failed items asks the model again in every process on
/// it. An evaluation whose judge first replies unreadably fails its items;
/// after the model mends its ways, `job resume --retry-failed` runs them
/// again with an `assay worker` taking part — and the worker, too, sends
/// them to the model instead of reading the failed replies from the cache
/// (before, its share failed again). The job's elapsed time is the two
/// runs' work, not the pause between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_joining_a_retry_asks_the_model_again() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let _deployment = ONE_DEPLOYMENT.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let pg = common::pg_database().await;
    let set = sample_with_answers(&pg.url, [5, 5, 2]).await;
    let unreadable = Arc::new(AtomicBool::new(true));
    let offline = Arc::new(engine::offline::provider());
    let on = unreadable.clone();
    let respond = move |req: &serde_json::Value| {
        if on.load(Ordering::SeqCst) && req["messages"].to_string().contains("Answer 2:") {
            "I would rather not say.".to_string()
        } else {
            offline.answer_body(req)
        }
    };
    let mock = MockServer::start(MockConfig {
        latency: Duration::from_millis(30),
        responder: Some(Responder(Arc::new(respond))),
        ..Default::default()
    })
    .await;
    let base = mock.base_url();
    let env = small_deployment(&base);
    let eval = evaluation(&set, "25");
    let eval: Vec<&str> = eval.iter().map(String::as_str).collect();
    let first = assay(&pg.url, &eval, &env).await;
    assert!(!first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let pool = app::ssr::store::open_target(&pg.url).await.unwrap();
    let job = common::scalar(&pool, "SELECT MAX(id) FROM jobs", &[]).await;
    let failed = common::scalar(&pool, "SELECT failed FROM jobs WHERE id = $1", &[job]).await;
    assert_eq!(failed, 300, "every judging item failed");
    let worked = app::ssr::store::jobs::get_job(&pool, job).await.unwrap().elapsed_secs;
    let cached = "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND cached";
    let cached_before = common::scalar(&pool, cached, &[job]).await;

    unreadable.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let log = std::fs::File::create(dir.path().join("worker.log")).unwrap();
    let worker = Process(
        assay_command(&pg.url, &["worker", "--poll-ms", "100"], &env)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let args = ["--json", "job", "resume", &job.to_string(), "--retry-failed"];
    let mut resume = assay_command(&pg.url, &args, &env);
    let began = Instant::now();
    let run = tokio::task::spawn_blocking(move || resume.output().unwrap());
    let mut joined = false;
    while !run.is_finished() {
        joined |= claimants(&pool).await.contains(&worker.0.id());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = began.elapsed().as_secs_f64();
    let out = run.await.unwrap();
    let after = json(&out);
    assert!(joined, "the worker took part in the retry");
    assert_eq!((after["status"].as_str(), after["failed"].as_i64()), (Some("done"), Some(0)), "{after}");
    assert_eq!(
        common::scalar(&pool, cached, &[job]).await,
        cached_before,
        "no process read a failed reply from the cache"
    );
    let elapsed = app::ssr::store::jobs::get_job(&pool, job).await.unwrap().elapsed_secs;
    assert!(elapsed > worked && elapsed <= worked + took + 0.5, "{elapsed} s: {worked} s, then {took} s of retry");
}

/// Sequential trials on a team deployment: `assay eval run
/// --sequential` and two workers walk the same looks — each process reads
/// a pair's course back from the stored verdicts — so the pair against
/// answers that say nothing stops after its first look, the rest go on,
/// every item is judged once, and the report is a single process's on
/// SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_walk_the_same_sequential_looks_as_a_single_process() {
    let _deployment = ONE_DEPLOYMENT.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let pg = common::pg_database().await;
    let set = sample_with_answers(&pg.url, [5, 5, 2]).await;
    let questions = common::blank_answers(&pg.url, &set, dir.path()).await;
    let mock = common::slow_offline_mock(Duration::from_millis(5)).await;
    let base = mock.base_url();
    let env = small_deployment(&base);
    let spawn = |args: &[&str], log: &str| {
        let log = std::fs::File::create(dir.path().join(log)).unwrap();
        Process(assay_command(&pg.url, args, &env).stdout(Stdio::null()).stderr(log).spawn().unwrap())
    };
    let workers: Vec<Process> =
        (0..2).map(|w| spawn(&["worker", "--poll-ms", "100"], &format!("worker-{w}.log"))).collect();
    let mut eval = evaluation(&set, "25");
    eval[7] = "bm25,lightrag,blank".into();
    eval.push("--sequential".into());
    let eval: Vec<&str> = eval.iter().map(String::as_str).collect();
    let mut starter = assay_command(&pg.url, &eval, &env);
    let run = tokio::task::spawn_blocking(move || starter.output().unwrap());
    let pool = app::ssr::store::open_target(&pg.url).await.unwrap();
    let mut seen = std::collections::HashSet::new();
    let started = Instant::now();
    while !run.is_finished() {
        seen.extend(claimants(&pool).await);
        assert!(started.elapsed() < Duration::from_secs(240), "the evaluation did not end");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = json(&run.await.unwrap());
    assert_eq!(out["status"], "done", "{out}");
    assert!(workers.iter().all(|w| seen.contains(&w.0.id())), "both workers took items: {seen:?}");
    let job = out["job"].as_i64().unwrap();
    let shown = app::ssr::store::jobs::get_job(&pool, job).await.unwrap();
    assert_eq!((shown.done, shown.failed), (shown.total, 0), "the bar ends full");
    let paid = "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND NOT cached AND error IS NULL";
    assert_eq!(common::scalar(&pool, paid, &[job]).await, shown.done * 2, "each item's two calls, once");
    let blank: Vec<&serde_json::Value> =
        out["pairs"].as_array().unwrap().iter().filter(|p| p["b_name"] == "blank").collect();
    assert_eq!(blank.len(), 2);
    for p in blank {
        assert_eq!(p["sequential"]["looks"].as_array().unwrap().len(), 1, "{p}");
        assert_eq!(p["trials"], 5);
    }
    assert!((shown.total as usize) < 3 * questions * 25, "{} of {} items", shown.total, 3 * questions * 25);
    // The same run by one process on SQLite: the same report.
    let sqlite = dir.path().join("one.db");
    assert_eq!(sample_with_answers(&sqlite, [5, 5, 2]).await, set);
    common::blank_answers(&sqlite, &set, dir.path()).await;
    let single = json(&assay(&sqlite, &eval, &env).await);
    let shared = report(&pg.url, out["evaluation_id"].as_i64().unwrap(), &dir.path().join("shared")).await;
    let alone =
        report(sqlite.to_str().unwrap(), single["evaluation_id"].as_i64().unwrap(), &dir.path().join("alone")).await;
    assert_eq!(shared.0, alone.0, "the same report");
    assert!(shared.1 == alone.1, "the same pairs, trials and judgments");
    drop(workers);
}

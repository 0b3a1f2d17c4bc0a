//! The whole pipeline on a real language model: the `assay`
//! binary pointed at an OpenAI-compatible endpoint serving a real model —
//! in CI, SmolLM2-135M under llama.cpp's server, which `scripts/test`
//! starts with `scripts/local-llm` on a free port and names in
//! `ASSAY_REAL_LLM_BASE_URL` and `ASSAY_REAL_LLM_MODEL`.
//!
//! On the sample corpus with small counts: the graph with gleaning, 4 graph
//! questions, answers from two methods, an unbiased evaluation with N = 1
//! and M = 2 judged by the model (one experiment manifest), then a
//! two-item LLM rating of a study. What it asserts holds for any model,
//! whatever it happens to say: every job ends (done, or failed with each
//! failed item's reason); nothing runs past its deadline; a run that stops
//! names its stage, its reasons and the next step; the report renders and
//! names the model; running it all again makes no new call.
//!
//! `#[ignore]`d: it needs the model. `cargo test -p server --test it
//! real_model -- --ignored` with the variables set runs it; without them it
//! fails, saying so.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use app::ssr::store::Db;
use serde_json::Value;

/// Longer than any honest command on this corpus takes on a slow CPU.
const DEADLINE: Duration = Duration::from_secs(1500);

struct Endpoint {
    base_url: String,
    model: String,
}

fn endpoint() -> Endpoint {
    let var = |k: &str| {
        std::env::var(k).unwrap_or_else(|_| {
            panic!("{k} is not set: start a model with scripts/local-llm --background and set ASSAY_REAL_LLM_BASE_URL and ASSAY_REAL_LLM_MODEL (scripts/test does)")
        })
    };
    Endpoint { base_url: var("ASSAY_REAL_LLM_BASE_URL"), model: var("ASSAY_REAL_LLM_MODEL") }
}

/// Runs `assay ARGS` against the database, killed at the deadline; returns
/// the exit code, stdout, stderr and the wall time.
fn assay(db: &Path, e: &Endpoint, args: &[&str]) -> (i32, String, String, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("ASSAY_DB")
        .env("ASSAY_LLM_PROVIDER", "openai")
        .env("ASSAY_LLM_BASE_URL", &e.base_url)
        .env("ASSAY_LLM_MODEL", &e.model)
        .env("ASSAY_LLM_CONCURRENCY", "1")
        .env("ASSAY_LLM_TIMEOUT", "300")
        .env("ASSAY_LLM_STREAM", "on")
        // Small reply budgets keep a 135M model's rambles short on 2 cores
        // (and exercise the per-task budgets and the cuts they make).
        .env(
            "ASSAY_LLM_MAX_TOKENS",
            "extract_graph=300,glean_graph=150,question_node=80,rag_keywords=120,answer=150,judge_scores=250,judge_scores_repair=250,judge_append=200,study_rate=200,study_rate_repair=200",
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start assay");
    let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            r.read_to_string(&mut s).ok();
            s
        })
    };
    let (out, err) = (read(Box::new(out)), read(Box::new(err)));
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > DEADLINE {
            child.kill().ok();
            panic!("assay {args:?} ran past its deadline of {} s", DEADLINE.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    (code, out.join().unwrap(), err.join().unwrap(), started.elapsed())
}

/// Every job ended, and every failed item says why.
async fn every_job_ended_with_reasons(pool: &Db) -> usize {
    let jobs: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT id, kind, status FROM jobs").fetch_all(pool.sqlite().unwrap()).await.unwrap();
    for (id, kind, status) in &jobs {
        assert!(matches!(status.as_str(), "done" | "failed"), "job {id} ({kind}) ended {status}");
        let unexplained: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM job_items WHERE job_id = ? AND status = 'failed' AND TRIM(COALESCE(error, '')) = ''",
        )
        .bind(id)
        .fetch_one(pool.sqlite().unwrap())
        .await
        .unwrap();
        assert_eq!(unexplained, 0, "job {id} ({kind}) has failed items without a reason");
        if status == "failed" {
            let error: Option<String> = sqlx::query_scalar("SELECT error FROM jobs WHERE id = ?")
                .bind(id)
                .fetch_one(pool.sqlite().unwrap())
                .await
                .unwrap();
            assert!(error.is_some_and(|e| !e.trim().is_empty()), "failed job {id} ({kind}) says why");
        }
    }
    jobs.len()
}

fn manifest(e: &Endpoint) -> String {
    format!(
        r#"name = "Real model"
[llm]
provider = "openai"
base_url = "{}"
model = "{}"
concurrency = 1
[corpus]
files = ["sample"]
[graph]
gleaning = 1
[[questions]]
kind = "graph"
node = 4
edge = 0
subgraph = 0
seed = 42
[[methods]]
name = "bm25"
[[methods]]
name = "lightrag"
[evaluation]
protocol = "unbiased"
trials = 2
repeats = 1
judge = "llm"
sanity = false
"#,
        e.base_url, e.model
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real model: scripts/test starts one (scripts/local-llm)"]
async fn the_pipeline_runs_on_a_real_model() {
    let e = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("assay.db");
    let path = dir.path().join("real.toml");
    std::fs::write(&path, manifest(&e)).unwrap();
    let out = dir.path().join("report");

    // The experiment: graph, questions, answers, evaluation.
    let (code, stdout, stderr, took) =
        assay(&db, &e, &["--json", "run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    eprintln!("first run: exit {code} in {:.1} s\n{stderr}", took.as_secs_f64());
    let summary: Value = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stdout}\n{stderr}"));
    for s in summary["stages"].as_array().unwrap() {
        eprintln!(
            "  {:<40} {:>6.1} s  {:>4} new calls",
            s["label"].as_str().unwrap(),
            s["seconds"].as_f64().unwrap(),
            s["new_calls"]
        );
    }
    let pool = app::ssr::store::open(&db).await.unwrap();
    let jobs = every_job_ended_with_reasons(&pool).await;
    assert!(jobs >= 1, "the run made jobs");
    let stopped = summary["stopped"].as_str().map(str::to_string);
    match &stopped {
        Some(why) => {
            // A stage the model could not do stops the run, saying which,
            // why, and what to do next; the report of what ran is written.
            assert_eq!(code, 3, "a stopped run exits 3");
            assert!(why.starts_with("stage \""), "{why}");
            assert!(why.contains("Next:"), "{why}");
            assert!(out.join("experiment.json").is_file());
        }
        None => assert_eq!(code, 0, "{stderr}"),
    }

    // The report renders and names the model.
    if let Some(&eval) = summary["evaluations"].as_array().and_then(|a| a.first()).and_then(|v| v.as_i64()).as_ref() {
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("evaluation-{eval}")).join("report.json")).unwrap(),
        )
        .unwrap();
        assert!(report.to_string().contains(&e.model), "the report names the model");
        let project = summary["project_id"].as_i64().unwrap();
        let page = render(&db, &format!("/projects/{project}/evaluations/{eval}")).await;
        assert!(page.contains(&e.model), "the evaluation page names the model");
        assert!(page.contains("id=\"judge-reading\""), "the page says how well the judge could be read");
    }

    // An LLM rating of a study of (at most) two questions of the first set.
    let set = summary["question_sets"][0].as_i64().unwrap();
    let questions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM questions WHERE set_id = ?")
        .bind(set)
        .fetch_one(pool.sqlite().unwrap())
        .await
        .unwrap();
    let mut study_jobs = Vec::new();
    if questions > 0 {
        let project = summary["project_id"].as_i64().unwrap().to_string();
        // The model may have written fewer questions than asked for: the
        // study takes at most the two there are.
        let take = questions.min(2);
        let (code, stdout, stderr, _) =
            assay(&db, &e, &["--json", "study", "create", &project, "--questions", &format!("{set}:{take}")]);
        assert_eq!(code, 0, "{stderr}");
        let study: Value = serde_json::from_str(&stdout).unwrap();
        let id = study["study_id"].as_i64().unwrap().to_string();
        for round in 0..2 {
            let (code, _, stderr, took) = assay(&db, &e, &["study", "rate", &id]);
            eprintln!("study rating, round {round}: exit {code} in {:.1} s\n{stderr}", took.as_secs_f64());
            let job: i64 =
                sqlx::query_scalar("SELECT MAX(id) FROM jobs").fetch_one(pool.sqlite().unwrap()).await.unwrap();
            let status: String = sqlx::query_scalar("SELECT status FROM jobs WHERE id = ?")
                .bind(job)
                .fetch_one(pool.sqlite().unwrap())
                .await
                .unwrap();
            // Exit 0 exactly when the job is done; a job whose every item
            // failed exits non-zero with its reasons.
            assert_eq!(code == 0, status == "done", "exit {code} for a job that ended {status}: {stderr}");
            if status == "failed" {
                assert!(stderr.contains("failed:"), "{stderr}");
            }
            study_jobs.push(job);
        }
        every_job_ended_with_reasons(&pool).await;
    }

    // The no-retrieval baseline (`chat-baseline`) against the
    // real OpenAI-compatible server: each question straight to its chat
    // endpoint, answered, the tokens it counted kept.
    if questions > 0 {
        let project = summary["project_id"].as_i64().unwrap().to_string();
        let (url, model) = (format!("url=\"{}\"", e.base_url), format!("model=\"{}\"", e.model));
        let args = ["--json", "answers", "generate", &project, "--set", &set.to_string(), "--method", "chat-baseline"];
        let (code, stdout, stderr, took) =
            assay(&db, &e, &[&args[..], &["--param", &url, "--param", &model, "--target-words", "20"]].concat());
        eprintln!("chat-baseline: exit {code} in {:.1} s", took.as_secs_f64());
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let made: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(made["status"], "done", "{made}");
        let id = made["answers_id"].as_i64().unwrap();
        let answers = app::ssr::store::answers::list_answers(&pool, id, None).await.unwrap();
        assert_eq!(answers.len() as i64, questions, "every question answered");
        assert!(answers.iter().all(|a| !a.answer.trim().is_empty() && a.contexts.is_empty()), "answers, no retrieval");
        assert!(made["avg_tokens"].as_f64().unwrap_or(0.0) > 0.0, "the server's usage counted: {made}");
    }

    // Everything again: every reply comes from the cache.
    let (code_again, stdout, stderr, took) =
        assay(&db, &e, &["--json", "run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    eprintln!("second run: exit {code_again} in {:.1} s", took.as_secs_f64());
    let again: Value = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stdout}\n{stderr}"));
    assert_eq!(again["new_calls"], 0, "the second run makes no new call: {again}");
    assert_eq!(code_again, code, "and ends as the first did");
    if let [first, second] = study_jobs[..] {
        let new: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM llm_calls WHERE job_id = ? AND cached = 0")
            .bind(second)
            .fetch_one(pool.sqlite().unwrap())
            .await
            .unwrap();
        let made: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM llm_calls WHERE job_id = ? AND cached = 0")
            .bind(first)
            .fetch_one(pool.sqlite().unwrap())
            .await
            .unwrap();
        assert!(made > 0, "the first rating asked the model");
        assert_eq!(new, 0, "rating the study again makes no new call");
    }
}

/// A page of `assay serve --no-login` over the database, as its HTML.
async fn render(db: &Path, path: &str) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_assay"))
        .arg("--db")
        .arg(db)
        .args(["serve", "--no-login", "--addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}{path}");
    let mut page = None;
    for _ in 0..100 {
        if let Ok(r) = reqwest::get(&url).await {
            page = Some(r.text().await.unwrap());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.kill().ok();
    server.wait().ok();
    page.expect("the server answered")
}

//! Models that misbehave, through the `assay` binary as a user runs it
//!: a model that rambles past `max_tokens`, one whose every
//! reply is unusable for a stage, and a closed pipe on the CLI's output.
//! The mock server plays the model; the SQLite file is real.

use crate::common;

use std::sync::Arc;

use common::{assay, json};
use mockllm::{MockConfig, MockServer, Responder};
use serde_json::Value;

/// The mock answers each task as the offline provider would, except the
/// purposes `unusable` names, which get a reply no parser accepts.
fn responder(unusable: &'static [&'static str]) -> Responder {
    let offline = engine::offline::provider();
    Responder(Arc::new(move |body: &Value| {
        let purpose = body["x_assay_purpose"].as_str().unwrap_or("");
        if unusable.iter().any(|p| purpose.starts_with(p)) {
            return "I am a helpful assistant. The Salt Guild is interesting".to_string();
        }
        offline.answer_body(body)
    }))
}

fn env(base: &str) -> [(&'static str, &str); 4] {
    [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_LLM_CONCURRENCY", "2"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rambling_model_builds_a_graph_and_the_job_says_its_replies_were_cut() {
    let mock =
        MockServer::start(MockConfig { rambling: true, responder: Some(responder(&[])), ..Default::default() }).await;
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "r").await;
    json(&assay(&db, &["--json", "project", "create", "P"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "P", "--sample"], &[]).await);
    let built = json(&assay(&db, &["--json", "graph", "build", "P", "--gleaning", "0"], &env(&base)).await);
    assert!(built["nodes"].as_i64().unwrap() > 10, "what the model finished before rambling is kept: {built}");
    let job = built["job"].as_i64().expect("the job's id");
    let shown = json(&assay(&db, &["--json", "job", "show", &job.to_string()], &[]).await);
    let outcome = &shown["outcome"];
    assert_eq!(outcome["items"], 5);
    assert_eq!(outcome["failed"], 0);
    assert_eq!(outcome["truncated"], 5, "every reply was cut at max_tokens: {outcome}");
    assert_eq!(outcome["model"], "openai · mock-model");
    let stats = mock.stats();
    assert_eq!(stats.without_max_tokens, 0, "every request carried max_tokens");
    // The Graph page's note says so.
    let pool = db.open().await;
    let note = app::ssr::store::graph::extraction_note(&pool, job).await.unwrap().unwrap();
    assert_eq!(note, "5 chunks had replies cut at max_tokens (their complete entries were kept).");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stage_whose_every_item_failed_fails_and_the_run_stops_there_saying_why() {
    let mock = MockServer::start(MockConfig { responder: Some(responder(&["question_"])), ..Default::default() }).await;
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "q").await;
    json(&assay(&db, &["--json", "project", "create", "P"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "P", "--sample"], &[]).await);
    json(&assay(&db, &["--json", "graph", "build", "P"], &env(&base)).await);

    // Every question reply is prose: the job fails, naming the reason.
    let out = assay(
        &db,
        &["questions", "generate", "graph", "P", "--node", "3", "--edge", "0", "--subgraph", "0"],
        &env(&base),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a stage with nothing usable exits non-zero");
    assert!(stderr.contains("every one of its 3 items failed: the reply is not a question"), "{stderr}");
    let pool = db.open().await;
    let (status, error): (String, Option<String>) =
        app::on_db!(&pool, |db| sqlx::query_as("SELECT status, error FROM jobs WHERE kind = 'questions'")
            .fetch_one(db)
            .await)
        .unwrap();
    assert_eq!(status, "failed");
    let error = error.unwrap();
    assert!(error.starts_with("every one of its 3 items failed: the reply is not a question"), "{error}");
    assert!(error.ends_with("(3)"), "one reason, counted: {error}");

    // The same as an experiment: it stops at the questions, says which
    // stage, why and what next, exits 3, and still writes its report.
    let manifest = dir.path().join("m.toml");
    std::fs::write(
        &manifest,
        format!(
            "name = \"Stops\"\n[llm]\nprovider = \"openai\"\nbase_url = \"{base}\"\nmodel = \"mock-model\"\n\
             [corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"graph\"\nnode = 3\nedge = 0\nsubgraph = 0\n\
             [[methods]]\nname = \"bm25\"\n"
        ),
    )
    .unwrap();
    let report = dir.path().join("report");
    let args = ["--json", "run", manifest.to_str().unwrap(), "--out", report.to_str().unwrap()];
    let out = assay(&db, &args, &env(&base)).await;
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let why = summary["stopped"].as_str().unwrap();
    assert!(why.starts_with("stage \"questions 1: graph\" stopped: job"), "{why}");
    assert!(why.contains("every one of its 3 items failed: the reply is not a question"), "{why}");
    assert!(why.contains("Next: see the job's items (its page, or `assay job show"), "{why}");
    let labels: Vec<&str> =
        summary["stages"].as_array().unwrap().iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(labels.len(), 2, "the corpus and the graph ran: {labels:?}");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("experiment.json")).unwrap()).unwrap();
    assert_eq!(written["stopped"], summary["stopped"]);
}

/// `assay job list P | head -1`: the reader goes away; the command ends
/// without a panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_pipe_ends_a_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "p").await;
    json(&assay(&db, &["--json", "project", "create", "P"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "P", "--sample"], &[]).await);
    for _ in 0..3 {
        json(&assay(&db, &["--json", "corpus", "summarise", "P"], &[]).await);
    }
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = common::assay_command(&db, &["job", "list", "P"], &[]);
    let out = cmd.stdout(writer).stderr(std::process::Stdio::piped()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

/// A model whose forced append adds nothing: every question is discarded
/// by length alignment, and the report says that this is why it has no
/// rates (not an empty table and nothing else).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_without_verdicts_says_why() {
    let stubborn = Responder(Arc::new(|body: &Value| {
        // judge_append: the answer back, nothing added.
        let last = body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or("");
        last.split("<<<\n").nth(1).and_then(|r| r.split("\n>>>").next()).unwrap_or("").to_string()
    }));
    let mock = MockServer::start(MockConfig { responder: Some(stubborn), ..Default::default() }).await;
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "v").await;
    let set = common::sample_with_answers(&db, [2, 0, 0]).await;
    let pool = db.open().await;
    let ids: Vec<i64> =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT id FROM questions WHERE set_id = $1 ORDER BY idx")
            .bind(set.parse::<i64>().unwrap())
            .fetch_all(db)
            .await)
        .unwrap();
    let lines = |words: usize| -> String {
        ids.iter()
            .map(|id| format!("{}\n", serde_json::json!({"question_id": id, "answer": "salt ".repeat(words)})))
            .collect()
    };
    for (name, words) in [("Short", 5), ("Long", 80)] {
        let file = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&file, lines(words)).unwrap();
        json(
            &assay(
                &db,
                &["--json", "answers", "import", "A", "--set", &set, "--name", name, file.to_str().unwrap()],
                &[],
            )
            .await,
        );
    }
    let args = [
        "--json",
        "eval",
        "run",
        "A",
        "--set",
        &set,
        "--methods",
        "Short,Long",
        "--trials",
        "2",
        "--repeats",
        "1",
        "--protocol",
        "unbiased",
    ];
    let v = json(&assay(&db, &args, &env(&base)).await);
    let said = v["no_verdict"].as_str().expect("a reason");
    assert!(said.starts_with("No question was judged: length alignment discarded 2 of 2"), "{said}");
    assert_eq!(v["judge_reading"], Value::Null, "no judging item: nothing to say of the judge");
}

/// A judge none of whose verdicts can be read: the evaluation fails (not
/// "done" with empty rates), exiting non-zero with the reasons.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evaluation_without_one_readable_verdict_fails_with_the_reasons() {
    let prose = Responder(Arc::new(|_: &Value| "Both answers are fine, I think.".to_string()));
    let mock = MockServer::start(MockConfig { responder: Some(prose), ..Default::default() }).await;
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "j").await;
    let set = common::sample_with_answers(&db, [2, 0, 0]).await;
    let args = [
        "eval",
        "run",
        "A",
        "--set",
        &set,
        "--methods",
        "bm25,lightrag",
        "--trials",
        "1",
        "--repeats",
        "1",
        "--protocol",
        "unbiased",
        "--no-align",
    ];
    let out = assay(&db, &args, &env(&base)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("every one of its 2 judging items failed: no JSON object in the verdict (2)"), "{stderr}");
}

//! The real LightRAG server (lightrag-hku 1.5.7's `lightrag-server`, from
//! the virtualenv `scripts/peers --install-only` keeps outside the clone)
//! answering a question set through the `lightrag-server` preset
//! — documents inserted through its own API against mockllm's peers
//! mode, its working folder imported as the project, hierarchical questions
//! over those chunks, answers in two of its modes with the chunks it
//! retrieved, and MAP, nDCG@10 and Recall@10 on them. Ignored in the plain
//! suite; `scripts/test` runs it after installing the server, and it says
//! why it is skipped where the server is not installed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{self, assay, json};

fn peers_home() -> PathBuf {
    std::env::var_os("ASSAY_PEERS_HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/var/tmp/assay-peers"))
}

/// The server's process, killed when the test ends (passed or not).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The first `chars` characters of a corpus text after its Gutenberg header.
fn text(name: &str, chars: usize) -> String {
    let raw = std::fs::read_to_string(common::corpora().join(name)).unwrap();
    let body =
        raw.split_once("*** START OF").map_or(raw.as_str(), |(_, rest)| rest.split_once('\n').map_or(rest, |r| r.1));
    body.trim().chars().take(chars).collect()
}

async fn get(client: &reqwest::Client, url: &str) -> Option<Value> {
    client.get(url).send().await.ok()?.json().await.ok()
}

/// Assay's mock OpenAI server answering as the peers' LLM and embedder.
async fn peers_mock() -> mockllm::MockServer {
    mockllm::MockServer::start(mockllm::MockConfig {
        responder: Some(mockllm::Responder(std::sync::Arc::new(mockllm::peers::respond))),
        ..Default::default()
    })
    .await
}

/// Starts `command` (its output in `log`) and waits until it answers
/// `/health` on `port`; fails with the log when it exits or has not
/// answered in 3 minutes. The process (killed when dropped) and its URL.
async fn serve(command: &mut std::process::Command, log: &std::path::Path, port: u16, what: &str) -> (Killed, String) {
    let file = std::fs::File::create(log).unwrap();
    let mut server = Killed(command.stdout(file.try_clone().unwrap()).stderr(file).spawn().unwrap());
    let url = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let said = || std::fs::read_to_string(log).unwrap_or_default();
    let started = Instant::now();
    while get(&client, &format!("{url}/health")).await.is_none() {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("{what} exited ({status}):\n{}", said());
        }
        assert!(started.elapsed() < Duration::from_secs(180), "{what} did not start:\n{}", said());
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    (server, url)
}

/// Project "Theirs" imported from the program's `folder` (two documents), a
/// hierarchical set of `per_category` a category over its chunks: the
/// pool, the set's id and the chunks under the program's own ids.
async fn imported(
    db: &common::TestDb,
    folder: &std::path::Path,
    format: &str,
    per_category: u32,
) -> (app::ssr::store::Db, String, std::collections::HashMap<String, i64>) {
    json(&assay(db, &["--json", "project", "create", "Theirs"], &[]).await);
    let args = ["--json", "graph", "import", "Theirs", folder.to_str().unwrap(), "--format", format];
    let report = json(&assay(db, &args, &[]).await);
    eprintln!("imported: {}", report["tally"]);
    assert_eq!(report["tally"]["documents"], 2);
    let set = crate::presets::hierarchical(db, per_category).await;
    let pool = db.open().await;
    let project = app::ssr::store::projects::find_project(&pool, "Theirs").await.unwrap().summary.id;
    let ours = app::ssr::store::foreign::external_chunk_ids(&pool, project).await.unwrap();
    assert!(ours.len() >= 4, "{ours:?}");
    (pool, set, ours)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs LightRAG's server: scripts/peers --install-only (scripts/test runs it)"]
async fn a_real_lightrag_server_answers_through_the_preset_and_its_retrieval_is_scored() {
    let home = peers_home();
    let bin = home.join("venv/bin/lightrag-server");
    if !bin.exists() {
        eprintln!("skipped: {} is not installed (scripts/peers --install-only installs it)", bin.display());
        return;
    }
    let mock = peers_mock().await;
    let dir = tempfile::tempdir().unwrap();
    let (work, input) = (dir.path().join("rag_storage"), dir.path().join("inputs"));
    std::fs::create_dir_all(&input).unwrap();
    let port = free_port();
    let base = mock.base_url();
    let mut command = std::process::Command::new(&bin);
    command
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .arg("--working-dir")
        .arg(&work)
        .arg("--input-dir")
        .arg(&input)
        .current_dir(dir.path())
        .envs([
            ("LLM_BINDING", "openai"),
            ("LLM_MODEL", "mock-model"),
            ("LLM_BINDING_HOST", base.as_str()),
            ("LLM_BINDING_API_KEY", "mock"),
            ("EMBEDDING_BINDING", "openai"),
            ("EMBEDDING_MODEL", "mock-embed"),
            ("EMBEDDING_DIM", "8"),
            ("EMBEDDING_BINDING_HOST", base.as_str()),
            ("EMBEDDING_BINDING_API_KEY", "mock"),
            ("EMBEDDING_USE_BASE64", "false"),
            ("CHUNK_SIZE", "400"),
            ("CHUNK_OVERLAP_SIZE", "40"),
            ("TIKTOKEN_CACHE_DIR", home.join("tiktoken").to_str().unwrap()),
            ("HF_HUB_OFFLINE", "1"),
            ("NO_PROXY", "127.0.0.1,localhost"),
        ]);
    let log = dir.path().join("lightrag-server.log");
    let server_log = || std::fs::read_to_string(dir.path().join("lightrag-server.log")).unwrap_or_default();
    let (_server, url) = serve(&mut command, &log, port, "lightrag-server").await;
    let client = reqwest::Client::new();
    let started = Instant::now();

    // Two documents through its own API, indexed against the mock.
    let texts = [text("alice_in_wonderland.txt", 9000), text("christmas_carol_stave1.txt", 9000)];
    let inserted = client
        .post(format!("{url}/documents/texts"))
        .json(&json!({"texts": texts, "file_sources": ["alice_in_wonderland.txt", "christmas_carol_stave1.txt"]}))
        .send()
        .await
        .unwrap();
    assert!(inserted.status().is_success(), "{}", inserted.text().await.unwrap());
    loop {
        let counts = get(&client, &format!("{url}/documents/status_counts")).await.unwrap_or_default();
        let pipeline = get(&client, &format!("{url}/documents/pipeline_status")).await.unwrap_or_default();
        let n = |s: &str| counts["status_counts"][s].as_u64().unwrap_or(0);
        assert_eq!(n("failed"), 0, "{counts}\n{}", server_log());
        if n("processed") == 2 && pipeline["busy"] == false {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(600), "indexing did not finish: {counts}\n{}", server_log());
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // Its working folder is the project: documents, chunks under LightRAG's ids, graph.
    let db = common::test_db(dir.path(), "peers").await;
    let (pool, set, ours) = imported(&db, &work, "lightrag", 5).await;

    let url_param = format!("url=\"{url}\"");
    let mut sets = Vec::new();
    for mode in ["naive", "hybrid"] {
        let mode_param = format!("mode=\"{mode}\"");
        let params = [url_param.as_str(), &mode_param];
        let made = json(
            &crate::presets::answer(&db, "Theirs", &set, "lightrag-server", &params, &["--target-words", "40"]).await,
        );
        assert_eq!(made["status"], "done", "{mode}: {made}\n{}", server_log());
        let id = made["answers_id"].as_i64().unwrap();
        let answers = app::ssr::store::answers::list_answers(&pool, id, None).await.unwrap();
        let mut chunks = 0;
        for a in &answers {
            assert!(!a.answer.trim().is_empty(), "{mode}: {}", a.question);
            // Every chunk LightRAG retrieved is one of its own: the project's.
            for c in &a.contexts {
                assert_eq!(c.kind, "chunk", "{mode}: a context not found among the chunks: {c:?}");
                assert!(ours.values().any(|v| v.to_string() == c.id));
                chunks += 1;
            }
        }
        assert!(chunks > 0, "{mode}: LightRAG retrieved no chunk at all");
        eprintln!("{mode}: {} answers, {chunks} chunks retrieved", answers.len());
        sets.push(id.to_string());
    }

    retrieval_scores(&db, &pool, &set, &sets, true).await;
}

/// A metrics run of the answer sets `sets` on `set`: MAP, nDCG@10 and
/// Recall@10 of what each system retrieved, in [0, 1], printed per set
/// (`every_question`: each question has them, not only some).
async fn retrieval_scores(
    db: &common::TestDb,
    pool: &app::ssr::store::Db,
    set: &str,
    sets: &[String],
    every_question: bool,
) {
    let args = ["--json", "metrics", "run", "Theirs", "--set", set, "--answers", &sets.join(",")];
    let run = json(&assay(db, &args, &[]).await);
    let report = app::ssr::metrics::report(pool, run["run_id"].as_i64().unwrap()).await.unwrap();
    assert_eq!(report.sets.len(), sets.len());
    for s in &report.sets {
        let scored: Vec<[f64; 3]> = s
            .questions
            .iter()
            .filter_map(|q| {
                let v = [q.scores.ap?, q.scores.ndcg?, q.scores.recall?];
                assert!(v.iter().all(|x| (0.0..=1.0).contains(x)), "{v:?}");
                Some(v)
            })
            .collect();
        assert!(!scored.is_empty(), "answer set {}: nothing scored", s.answer_set_id);
        if every_question {
            assert_eq!(scored.len(), s.questions.len(), "answer set {}: a question without scores", s.answer_set_id);
        }
        let mean = |i: usize| scored.iter().map(|v| v[i]).sum::<f64>() / scored.len() as f64;
        eprintln!(
            "answer set {}: MAP {:.3}, nDCG@10 {:.3}, Recall@10 {:.3} over {} questions",
            s.answer_set_id,
            mean(0),
            mean(1),
            mean(2),
            scored.len()
        );
    }
}

/// The path of a script in the repository's `scripts/`.
fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts").join(name)
}

/// Microsoft GraphRAG 3.3.0 (`graphrag`, from the virtualenv `scripts/peers
/// --with-graphrag` keeps outside the clone): an index built by its own CLI
/// against mockllm's peers mode, served by `scripts/graphrag-serve` (its
/// query API), its output folder imported as the project, and hierarchical
/// questions answered through the `ms-graphrag` preset by each of its four
/// searches — the text units local, drift and basic search put in their
/// prompts are the project's chunks, scored by MAP/nDCG/Recall; global
/// search reads community reports only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Microsoft GraphRAG: scripts/peers --with-graphrag (scripts/test runs it where it is installed)"]
async fn a_real_graphrag_index_answers_through_the_ms_graphrag_preset() {
    let home = peers_home();
    let (graphrag, python) = (home.join("venv-graphrag/bin/graphrag"), home.join("venv-graphrag/bin/python"));
    if !graphrag.exists() {
        eprintln!("skipped: {} is not installed (scripts/peers --with-graphrag installs it)", graphrag.display());
        return;
    }
    let mock = peers_mock().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("index");
    let offline = [
        ("TIKTOKEN_CACHE_DIR", home.join("tiktoken").to_str().unwrap().to_string()),
        ("HF_HUB_OFFLINE", "1".to_string()),
        ("NO_PROXY", "127.0.0.1,localhost".to_string()),
    ];
    // Its own CLI: `graphrag init`, the settings pointed at the mock, `graphrag index`.
    let corpora = common::corpora();
    let built = std::process::Command::new(&python)
        .arg(script("peers.d/build_index.py"))
        .args(["graphrag", out.to_str().unwrap(), &format!("{}", mock.base_url())])
        .arg(corpora.join("alice_in_wonderland.txt"))
        .arg(corpora.join("christmas_carol_stave1.txt"))
        .env("ASSAY_GRAPHRAG_BIN", &graphrag)
        .envs(offline.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "graphrag index failed:\n{}\n{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    let root = dir.path().join("index.root");

    let port = free_port();
    let mut command = std::process::Command::new(&python);
    command.arg(script("graphrag-serve")).arg("--root").arg(&root).args(["--port", &port.to_string()]);
    command.envs(offline.iter().map(|(k, v)| (*k, v.as_str())));
    let log = dir.path().join("graphrag-serve.log");
    let server_log = || std::fs::read_to_string(dir.path().join("graphrag-serve.log")).unwrap_or_default();
    let (_server, url) = serve(&mut command, &log, port, "graphrag-serve").await;

    // Its output folder is the project: documents, text units as chunks, graph, communities.
    let db = common::test_db(dir.path(), "graphrag").await;
    let (pool, set, ours) = imported(&db, &out, "graphrag", 3).await;

    let url_param = format!("url=\"{url}\"");
    let mut sets = Vec::new();
    for method in ["local", "global", "drift", "basic"] {
        let method_param = format!("method=\"{method}\"");
        let made =
            json(&crate::presets::answer(&db, "Theirs", &set, "ms-graphrag", &[&url_param, &method_param], &[]).await);
        assert_eq!(made["status"], "done", "{method}: {made}\n{}", server_log());
        let id = made["answers_id"].as_i64().unwrap();
        let answers = app::ssr::store::answers::list_answers(&pool, id, None).await.unwrap();
        let mut chunks = 0;
        for a in &answers {
            assert!(!a.answer.trim().is_empty(), "{method}: {}", a.question);
            for c in a.contexts.iter().filter(|c| c.kind == "chunk") {
                assert!(ours.values().any(|v| v.to_string() == c.id), "{method}: {c:?}");
                chunks += 1;
            }
        }
        eprintln!("{method}: {} answers, {chunks} text units in its prompts", answers.len());
        if method == "global" {
            continue; // community reports only
        }
        assert!(chunks > 0, "{method}: GraphRAG put no text unit in its prompt\n{}", server_log());
        sets.push(id.to_string());
    }

    retrieval_scores(&db, &pool, &set, &sets, false).await;
}

//! `assay run MANIFEST` end to end, offline, on a real text (the first
//! stave of *A Christmas Carol*) with small counts: every stage runs as a
//! job and every artifact of the report is written; a second run reuses
//! every stage, makes no LLM call and writes the same report. Invalid
//! manifests fail before any work starts (not even the database is
//! created), with a message that names the key.

use crate::common;

use common::{assay, json};

fn manifest(novel: &str) -> String {
    format!(
        r#"
name = "Carol"
[llm]
provider = "offline"
[corpus]
files = ["{novel}"]
chunk_tokens = 600
chunk_overlap = 50
[graph]
gleaning = 0
[[questions]]
kind = "graph"
node = 2
edge = 2
subgraph = 2
[[questions]]
kind = "hierarchical"
dimensions = ["QC", "LV"]
levels = [2]
per_category = 1
factorial = 1
[[methods]]
name = "bm25"
[[methods]]
name = "lightrag"
[evaluation]
sets = [1]
trials = 2
judge = "offline"
sanity = true
[metrics]
k = 10
bins = 2
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_runs_every_stage_and_a_second_run_makes_no_calls() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "e").await;
    let novel = format!("{}/../../shared/corpora/christmas_carol_stave1.txt", env!("CARGO_MANIFEST_DIR"));
    let file = dir.path().join("carol.toml");
    std::fs::write(&file, manifest(&novel)).unwrap();
    let out = dir.path().join("report");
    let first =
        json(&assay(&db, &["--json", "run", file.to_str().unwrap(), "--out", out.to_str().unwrap()], &[]).await);
    let stages = first["stages"].as_array().unwrap();
    let kinds: Vec<&str> = stages.iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "corpus",
            "graph",
            "questions",
            "questions",
            "answers",
            "answers",
            "answers",
            "answers",
            "sanity",
            "sanity",
            "evaluation",
            "metrics"
        ]
    );
    assert!(stages.iter().all(|s| s["reused"] == false));
    assert!(first["new_calls"].as_i64().unwrap() > 100, "{}", first["new_calls"]);
    let total: i64 = stages.iter().map(|s| s["new_calls"].as_i64().unwrap()).sum();
    assert_eq!(total, first["new_calls"].as_i64().unwrap());
    // Every artifact: the evaluation's and sanity checks' plots, tables and
    // reports; the metrics run's files; the experiment's summary.
    let eval = out.join(format!("evaluation-{}", first["evaluations"][0]));
    for f in [
        "report.json",
        "pairs.csv",
        "trials.csv",
        "judgments.csv",
        "box.svg",
        "box.png",
        "heatmap.svg",
        "legacy-heatmap.png",
    ] {
        assert!(eval.join(f).is_file(), "{f} in {}", eval.display());
    }
    for id in first["sanity_checks"].as_array().unwrap() {
        assert!(out.join(format!("sanity-{id}/report.json")).is_file());
    }
    let metrics = out.join(format!("metrics-{}", first["metrics_runs"][0]));
    let power = format!("power-{}.png", first["answer_sets"][1][0]);
    for f in ["questions.csv", "report.json", "report.html", power.as_str()] {
        assert!(metrics.join(f).is_file(), "{f} in {}", metrics.display());
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("experiment.json")).unwrap()).unwrap();
    assert_eq!(summary["new_calls"], first["new_calls"]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(eval.join("report.json")).unwrap()).unwrap();

    // Again: every stage reused, no call at all, the same report.
    let out2 = dir.path().join("again");
    let second =
        json(&assay(&db, &["--json", "run", file.to_str().unwrap(), "--out", out2.to_str().unwrap()], &[]).await);
    assert!(second["stages"].as_array().unwrap().iter().all(|s| s["reused"] == true), "{second}");
    assert_eq!((second["new_calls"].as_i64(), second["cached_calls"].as_i64()), (Some(0), Some(0)));
    assert_eq!(second["evaluations"], first["evaluations"]);
    let again: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out2.join(format!("evaluation-{}/report.json", first["evaluations"][0]))).unwrap(),
    )
    .unwrap();
    assert_eq!(again, report);
    let pool = db.open().await;
    let jobs: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM jobs").fetch_one(db).await).unwrap();
    assert_eq!(jobs as usize, stages.len() - 1, "one job per stage but the corpus, none the second time");

    // A changed stage runs again, and only what depends on it.
    std::fs::write(&file, manifest(&novel).replace("trials = 2", "trials = 3")).unwrap();
    let third = json(&assay(&db, &["--json", "run", file.to_str().unwrap()], &[]).await);
    let ran: Vec<&str> = third["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reused"] == false)
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["sanity", "sanity", "evaluation"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_manifests_fail_before_any_work_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("never.db");
    let novel = format!("{}/../../shared/corpora/christmas_carol_stave1.txt", env!("CARGO_MANIFEST_DIR"));
    let good = manifest(&novel);
    for (bad, key) in [
        (good.replace("name = \"lightrag\"", "name = \"lightrag2\""), "methods[1]: unknown method \"lightrag2\""),
        (good.replace("node = 2", "node = -2"), "questions[0].node: -2 is negative"),
        (good.replace(&novel, "/no/such/novel.txt"), "corpus.files[0]: no file /no/such/novel.txt"),
        (
            good.replace("judge = \"offline\"", "judge = \"gpt\""),
            "judge must be llm, offline or simulated, not \"gpt\"",
        ),
        (good.replace("[graph]", "[grahp]"), "unknown field `grahp`"),
    ] {
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, bad).unwrap();
        let out = assay(&db, &["run", file.to_str().unwrap()], &[]).await;
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(key), "{key}: {stderr}");
        assert!(!db.exists(), "nothing was started: no database");
    }
    let missing = assay(&db, &["run", "/no/such/manifest.toml"], &[]).await;
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read the manifest"));
}

/// The browser's corpus: another project's uploaded documents
/// (`corpus.project`), copied into the experiment's project; and the
/// wizard's choices turned into a manifest and read back unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_takes_a_projects_documents_and_the_wizards_choices_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "p").await;
    let novel = format!("{}/../../shared/corpora/christmas_carol_stave1.txt", env!("CARGO_MANIFEST_DIR"));
    json(&assay(&db, &["--json", "project", "create", "Uploaded"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "Uploaded", &novel], &[]).await);
    let file = dir.path().join("m.toml");
    std::fs::write(
        &file,
        "name = \"From a project\"\n[corpus]\nproject = \"Uploaded\"\n\
         [[questions]]\nkind = \"summary\"\nusers = 1\ntasks = 1\nper_task = 2\n[[methods]]\nname = \"bm25\"\n",
    )
    .unwrap();
    let run = json(&assay(&db, &["--json", "run", file.to_str().unwrap()], &[]).await);
    let stages = run["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 3, "corpus, questions, answers: {run}");
    let pool = db.open().await;
    let source = app::ssr::store::projects::find_project(&pool, "Uploaded").await.unwrap().summary;
    let copy = app::ssr::store::projects::find_project(&pool, "From a project").await.unwrap().summary;
    assert_eq!((copy.documents, copy.tokens), (source.documents, source.tokens), "the same text, copied");

    // The estimate sees that project's documents (one, of its tokens),
    // cut into the chunks the run then stored (the chunker's count).
    let m = engine::experiment::Manifest::parse(&std::fs::read_to_string(&file).unwrap(), dir.path()).unwrap();
    let size = app::ssr::experiments::run::corpus_size(&pool, &m, dir.path()).await.unwrap();
    assert_eq!(
        (size.documents as i64, size.tokens as i64, size.chunks as i64),
        (1, source.tokens, copy.chunks),
        "{size:?}"
    );
    // A missing project is named by its key.
    let missing = engine::experiment::Manifest {
        corpus: engine::experiment::CorpusSection { project: Some("Nope".into()), ..m.corpus.clone() },
        ..m.clone()
    };
    let err = app::ssr::experiments::run::corpus_size(&pool, &missing, dir.path()).await.unwrap_err().to_string();
    assert!(err.contains("corpus.project: no project named \"Nope\""), "{err}");

    // The wizard: its defaults as a manifest, read back into the same fields.
    let llm = engine::llm::settings::LlmSettings::default();
    let start = app::ssr::experiments::wizard::wizard_start(&pool, &llm).await.unwrap();
    assert!(start.projects.iter().any(|(n, d, _)| n == "Uploaded" && *d == 1));
    let text = app::ssr::experiments::wizard::manifest_of(&start.fields, &llm).unwrap();
    let back = engine::experiment::Manifest::parse_uploaded(&text).unwrap();
    let read = app::ssr::experiments::wizard::fields_of(&back, &start.fields);
    assert_eq!(read.fields, start.fields);
    assert!(read.not_shown.is_empty(), "{:?}", read.not_shown);
    let draft = app::ssr::experiments::wizard::draft(&pool, &llm, |_| None, &text).await;
    assert_eq!(draft.error, None);
    assert!(draft.offline && draft.cost_usd == 0.0);
    assert_eq!(draft.calls, draft.stages.iter().map(|s| s.calls).sum::<u64>());
    // What the form cannot show is named.
    let with_params = text.replace("name = \"bm25\"", "name = \"bm25\"\ntarget_words = 120");
    let read = app::ssr::experiments::wizard::fields_of(
        &engine::experiment::Manifest::parse_uploaded(&with_params).unwrap(),
        &start.fields,
    );
    assert_eq!(read.not_shown, vec!["methods[0] (bm25): its parameters".to_string()]);
    assert!(read.not_held.is_empty(), "{:?}", read.not_held);
    // The form holds each stage's request whole: a field changed, what it
    // does not show is still in the manifest it makes.
    let mut changed = read.fields.clone();
    changed.graph_questions.node = 7;
    let text = app::ssr::experiments::wizard::manifest_of(&changed, &llm).unwrap();
    let m = engine::experiment::Manifest::parse_uploaded(&text).unwrap();
    assert_eq!(m.methods[0].target_words, Some(120), "{text}");
    assert!(matches!(&m.questions[0], types::requests::QuestionsRequest::Graph(g) if g.node == 7));
    // What it cannot hold (a second set of one kind) is named apart.
    let twice = text.replace(
        "[[questions]]\nkind = \"graph\"",
        "[[questions]]\nkind = \"graph\"\nnode = 3\n\n[[questions]]\nkind = \"graph\"",
    );
    let read = app::ssr::experiments::wizard::fields_of(
        &engine::experiment::Manifest::parse_uploaded(&twice).unwrap(),
        &start.fields,
    );
    assert_eq!(read.fields.graph_questions.node, 3, "{twice}");
    assert_eq!(read.not_held, vec!["questions[1]: a second graph set".to_string()]);
    // A field the form could not read is the draft's error, not a default.
    let unread =
        app::model::WizardFields { unread: Some("levels: \"x\" is not a number".into()), ..start.fields.clone() };
    assert_eq!(app::ssr::experiments::wizard::manifest_of(&unread, &llm).unwrap_err(), "levels: \"x\" is not a number");
}

/// The same manifest on PostgreSQL (`--db postgres://…`) as on SQLite:
/// every stage runs there, the evaluation's and the metrics run's reports
/// are equal to SQLite's, and a second run reuses every stage there too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_on_postgresql_gives_the_sqlite_report() {
    let dir = tempfile::tempdir().unwrap();
    let novel = format!("{}/../../shared/corpora/christmas_carol_stave1.txt", env!("CARGO_MANIFEST_DIR"));
    let file = dir.path().join("carol.toml");
    std::fs::write(&file, manifest(&novel)).unwrap();
    let pg = common::pg_database().await;
    let sqlite = dir.path().join("s.db");
    let mut reports = Vec::new();
    for (db, out) in [(pg.url.as_str(), "pg"), (sqlite.to_str().unwrap(), "sqlite")] {
        let out = dir.path().join(out);
        let run =
            json(&assay(db, &["--json", "run", file.to_str().unwrap(), "--out", out.to_str().unwrap()], &[]).await);
        assert!(run["stages"].as_array().unwrap().iter().all(|s| s["reused"] == false), "{run}");
        let read = |f: String| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(out.join(&f)).unwrap_or_else(|e| panic!("{f}: {e}"))).unwrap()
        };
        let eval_dir = format!("evaluation-{}", run["evaluations"][0]);
        let mut evaluation = read(format!("{eval_dir}/report.json"));
        // When it was made is the one thing that differs.
        evaluation["evaluation"].as_object_mut().unwrap().remove("created_at").unwrap();
        let metrics = read(format!("metrics-{}/report.json", run["metrics_runs"][0]));
        let tables: Vec<Vec<u8>> = ["pairs.csv", "trials.csv", "judgments.csv"]
            .iter()
            .map(|f| std::fs::read(out.join(&eval_dir).join(f)).unwrap())
            .collect();
        reports.push((run["new_calls"].clone(), evaluation, metrics, tables));
    }
    assert_eq!(reports[0].0, reports[1].0, "the same calls");
    assert_eq!(reports[0].1, reports[1].1, "the same evaluation report");
    assert_eq!(reports[0].2, reports[1].2, "the same metrics report");
    assert!(reports[0].3 == reports[1].3, "the same pairs, trials and judgments");
    let again = json(&assay(&pg.url, &["--json", "run", file.to_str().unwrap()], &[]).await);
    assert!(again["stages"].as_array().unwrap().iter().all(|s| s["reused"] == true), "{again}");
    assert_eq!(again["new_calls"].as_i64(), Some(0));
}

/// The price before the run: `assay run --plan` (the wizard's
/// estimate) counts the calls a run then records — exactly for every stage
/// whose calls the run does not decide as it goes (questions, answers, a
/// sanity check, the judging), and as a bound where it does (chunk
/// summaries read from the cache, length alignment's regenerations).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_counts_the_calls_the_run_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "plan").await;
    let novel = format!("{}/../../shared/corpora/christmas_carol_stave1.txt", env!("CARGO_MANIFEST_DIR"));
    let file = dir.path().join("carol.toml");
    // The test manifest with summary questions too, answered by both methods.
    let text = manifest(&novel).replace(
        "[[methods]]\nname = \"bm25\"",
        "[[questions]]\nkind = \"summary\"\nusers = 2\ntasks = 2\nper_task = 2\n[[methods]]\nname = \"bm25\"",
    );
    std::fs::write(&file, &text).unwrap();
    let plan = json(&assay(&db, &["--json", "run", file.to_str().unwrap(), "--plan"], &[]).await);
    let run = json(&assay(&db, &["--json", "run", file.to_str().unwrap()], &[]).await);
    let pool = db.open().await;
    let planned = |label: &str| {
        plan["stages"].as_array().unwrap().iter().find(|s| s["label"] == label).unwrap_or_else(|| panic!("{label}"))
            ["calls"]
            .as_i64()
            .unwrap()
    };
    let mut compared = 0;
    for stage in run["stages"].as_array().unwrap() {
        let label = stage["label"].as_str().unwrap();
        let Some(job) = stage["job_id"].as_i64() else { continue };
        let count = |filter: &'static str| {
            let pool = pool.clone();
            async move {
                common::scalar(&pool, &format!("SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 {filter}"), &[job])
                    .await
            }
        };
        // Paid: each distinct request once, as a model is (the offline
        // stand-ins' repeats are made again; a model's come from the cache).
        let all = count("").await;
        let paid =
            common::scalar(&pool, "SELECT COUNT(DISTINCT messages_hash) FROM llm_calls WHERE job_id = $1", &[job])
                .await;
        match stage["kind"].as_str().unwrap() {
            // Long descriptions summarised: known once the graph is.
            "graph" => assert!(all >= planned(label), "{label}: {all} calls, planned {}", planned(label)),
            "questions" if label.ends_with("graph") => {
                // Each question, and each chunk summarised once for the subgraphs.
                assert!(paid <= planned(label), "{label}: {paid} paid calls, planned at most {}", planned(label));
                assert_eq!(count("AND purpose LIKE 'question%'").await, 6, "{label}");
            }
            "evaluation" => {
                let judged = count("AND purpose LIKE 'judge%'").await;
                assert_eq!(judged, planned(label), "{label}: the judging calls as planned");
            }
            _ => assert_eq!(all, planned(label), "{label}: the calls as planned"),
        }
        compared += 1;
    }
    assert!(compared >= 10, "{compared} stages compared");
    // With the run as a pilot: what the next run of this manifest can
    // decide, per evaluated set — its questions as planned × its M — and
    // still nothing is sent.
    let stage = run["stages"].as_array().unwrap().iter().find(|s| s["kind"] == "evaluation").unwrap();
    let job = stage["job_id"].as_i64().unwrap();
    let evaluation = common::scalar(&pool, "SELECT id FROM evaluations WHERE job_id = $1", &[job]).await.to_string();
    let calls = common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls", &[]).await;
    let args = ["--json", "run", file.to_str().unwrap(), "--plan", "--pilot", &evaluation, "--difference", "0.2"];
    let decided = json(&assay(&db, &args, &[]).await);
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls", &[]).await, calls, "a plan sends nothing");
    let sets = decided["decide"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "the manifest evaluates set 1 only");
    assert_eq!(sets[0]["questions_set"], 1);
    let graph_questions = 2 + 2 + 2; // node + edge + subgraph, as planned
    assert_eq!(sets[0]["plan"]["run"], serde_json::json!([graph_questions, 2]), "{decided}");
    assert!(sets[0]["plan"]["pairs"][0]["run"]["power"].is_number());
    let text = String::from_utf8(assay(&db, &args[1..], &[]).await.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "evaluation of questions 1: what it can decide, simulated from evaluation {evaluation}'s"
        )),
        "{text}"
    );
}

/// One order for the LLM settings: a manifest without
/// `[llm]` takes the environment's (`ASSAY_LLM_*`) and says so first — it
/// ran offline before, with only "offline" in its summary; one that names
/// the openai provider but no model takes `ASSAY_LLM_MODEL` — it failed
/// "llm.model: name the model" before; with nothing set anywhere, offline,
/// said as plainly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_without_llm_settings_takes_the_environments_and_says_so() {
    let mock = common::offline_mock(None).await;
    let base = mock.base_url();
    let env = common::mock_env(&base);
    let dir = tempfile::tempdir().unwrap();
    let body = "[corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"hierarchical\"\ndimensions = [\"QC\"]\n\
                levels = [2]\nper_category = 1\n[[methods]]\nname = \"bm25\"\n";
    let write = |name: &str, llm: &str| {
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, format!("name = \"{name}\"\n{llm}{body}")).unwrap();
        file
    };
    // No [llm], the environment names the mock: the run asks it.
    let db = dir.path().join("a.db");
    let out = assay(&db, &["run", write("Env", "").to_str().unwrap()], &env).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(
        first.starts_with("LLM: openai · mock-model at")
            && first.contains("the manifest has no [llm]: the model ASSAY_LLM_PROVIDER"),
        "{stderr}"
    );
    assert!(mock.stats().requests > 0, "the environment's model answered");
    // The openai provider named, its model not: ASSAY_LLM_MODEL's.
    let asked = mock.stats().requests;
    let db = dir.path().join("b.db");
    let out =
        assay(&db, &["--json", "run", write("Named", "[llm]\nprovider = \"openai\"\n").to_str().unwrap()], &env).await;
    let v = json(&out);
    assert!(v["llm"].as_str().unwrap().starts_with("openai · mock-model at"), "{v}");
    assert_eq!(v["llm_source"], serde_json::Value::Null, "the manifest named its provider");
    assert!(mock.stats().requests > asked);
    // One precedence: a flag over the manifest over the environment. The
    // manifest names its model: the environment's ASSAY_LLM_MODEL does not
    // replace it; --llm-model does, and the first line says so.
    let pinned =
        write("Pinned", &format!("[llm]\nprovider = \"openai\"\nmodel = \"manifest-model\"\nbase_url = \"{base}\"\n"));
    let db = dir.path().join("p.db");
    let plan = json(&assay(&db, &["--json", "run", pinned.to_str().unwrap(), "--plan"], &env).await);
    assert!(plan["llm"].as_str().unwrap().starts_with("openai · manifest-model at"), "{plan}");
    let out = assay(&db, &["run", pinned.to_str().unwrap(), "--plan", "--llm-model", "flag-model"], &env).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("LLM: openai · flag-model at")
            && stderr.contains("— --llm-model on the command line over the manifest's [llm]"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("answered by openai · flag-model at"));
    // `batch = true` in [llm]: the run's calls go through the Batch API (the
    // plan says so); --llm-batch off on the command line is the more specific word.
    let batched = write(
        "Batched",
        &format!("[llm]\nprovider = \"openai\"\nmodel = \"mock-model\"\nbase_url = \"{base}\"\nbatch = true\n"),
    );
    let plan = json(&assay(&db, &["--json", "run", batched.to_str().unwrap(), "--plan"], &env).await);
    assert!(plan["llm"].as_str().unwrap().ends_with("(Batch API)"), "{plan}");
    let out = assay(&db, &["run", batched.to_str().unwrap(), "--plan", "--llm-batch", "off"], &env).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().next().unwrap_or("");
    assert!(!first.contains("(Batch API)") && first.contains("--llm-batch on the command line over"), "{stderr}");
    // Nothing anywhere: offline, and the run says why.
    let db = dir.path().join("c.db");
    let out = assay(&db, &["run", write("Bare", "").to_str().unwrap()], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("LLM: offline (no LLM) — the manifest has no [llm] and ASSAY_LLM_PROVIDER is not set"),
        "{stderr}"
    );
}

/// A stopped manifest run again resumes its own stage:
/// before, each re-run made another empty question set and another failed
/// job ("0 questions" three times over three runs). Here a model that
/// answers nothing usable stops the questions stage twice; the project
/// keeps one set and one job, and once the model answers, the third run
/// finishes that same set by retrying its failed items.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_manifest_run_again_resumes_its_own_stage() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let useless = std::sync::Arc::new(AtomicBool::new(true));
    let mock = common::offline_mock(Some((useless.clone(), |_| true, "I cannot help with that."))).await;
    let base = mock.base_url();
    let env = common::mock_env(&base);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stops.toml");
    std::fs::write(
        &file,
        "name = \"Stops\"\n[corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"hierarchical\"\n\
         dimensions = [\"QC\"]\nlevels = [2]\nper_category = 1\n",
    )
    .unwrap();
    let db = dir.path().join("s.db");
    for _ in 0..2 {
        let out = assay(&db, &["run", file.to_str().unwrap()], &env).await;
        assert!(!out.status.success());
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(said.contains("stopped"), "{said}");
    }
    let pool = app::ssr::store::open(&db).await.unwrap();
    let sets = common::scalar(&pool, "SELECT COUNT(*) FROM question_sets", &[]).await;
    let jobs = common::scalar(&pool, "SELECT COUNT(*) FROM jobs WHERE kind = 'questions'", &[]).await;
    assert_eq!((sets, jobs), (1, 1), "one set and one job after two stopped runs");
    useless.store(false, Ordering::SeqCst);
    let v = json(&assay(&db, &["--json", "run", file.to_str().unwrap()], &env).await);
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM question_sets", &[]).await, 1, "{v}");
    let questions = common::scalar(&pool, "SELECT COUNT(*) FROM questions", &[]).await;
    assert_eq!(questions, 2, "QC's two coarse categories, one question each: {v}");
}

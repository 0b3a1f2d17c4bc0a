//! `assay eval` on a real SQLite file with the offline provider: two
//! methods judged under both protocols (every draw a call of its own; a
//! repeat answered from the cache), a sanity check with the bias lab's
//! judge (the unbiased protocol even, the legacy one not), the report
//! written to a directory and served as downloads, and bad requests refused
//! with the reason before any work starts.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{assay, json, sample_with_answers};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

fn failure(out: &std::process::Output) -> String {
    assert!(!out.status.success(), "should have failed: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_methods_are_judged_under_both_protocols_and_the_report_is_written_and_served() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "e").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    let run = [
        "--json",
        "eval",
        "run",
        "A",
        "--set",
        &set,
        "--methods",
        "bm25,lightrag",
        "--judge",
        "offline",
        "--trials",
        "3",
    ];
    let out = json(&assay(&db, &run, &[]).await);
    assert_eq!(out["status"], "done", "{out}");
    assert_eq!(out["judge"], "offline rubric judge (no LLM)");
    let pair = &out["pairs"][0];
    assert_eq!((pair["a_name"].as_str(), pair["b_name"].as_str()), (Some("bm25"), Some("lightrag")));
    assert_eq!(pair["questions"], 12);
    assert_eq!(pair["trials"], 3);
    for key in ["a_win", "tie", "b_win"] {
        let b = &pair[key];
        assert!(b["q1"].as_f64().unwrap() <= b["median"].as_f64().unwrap());
        assert!(b["median"].as_f64().unwrap() <= b["q3"].as_f64().unwrap());
    }
    let (a, t, b) = (
        pair["a_win"]["median"].as_f64().unwrap(),
        pair["tie"]["median"].as_f64().unwrap(),
        pair["b_win"]["median"].as_f64().unwrap(),
    );
    let relative = pair["relative_win_rate"].as_f64().unwrap();
    // The offline judge is deterministic: every trial alike, so the medians are one trial's rates.
    assert!((a + t + b - 1.0).abs() < 1e-9);
    assert!((relative - (a - b) / (a + b + t)).abs() < 1e-9);
    let discarded = pair["discarded"].as_u64().unwrap() as i64;
    assert!(pair["alignment_success"].as_f64().unwrap() > 0.0);

    // Every draw was a call: 2 orders × 2 repeats × 3 trials per aligned
    // question, one legacy call per question, none from the cache.
    let pool = db.open().await;
    let job = out["job"].as_i64().unwrap();
    let judged = 12 - discarded;
    let count = |purpose: &str| {
        let pool = pool.clone();
        let sql =
            format!("SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND purpose = '{purpose}' AND cached = FALSE");
        async move { common::scalar(&pool, &sql, &[job]).await }
    };
    assert_eq!(count("judge_scores").await, judged * 12);
    assert_eq!(count("judge_legacy").await, 12);
    assert_eq!(
        pair["calls"].as_i64().unwrap(),
        common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1", &[job]).await
    );
    assert!(out["tokens"].as_i64().unwrap() > 0);

    // The same evaluation again: the same verdicts (the offline judge's
    // replies are made again, not cached; a model's would come from the cache).
    let again = json(&assay(&db, &run, &[]).await);
    let pair2 = &again["pairs"][0];
    assert_eq!((pair2["calls"].clone(), pair2["cached_calls"].as_i64()), (pair["calls"].clone(), Some(0)), "{again}");
    assert_eq!(pair2["relative_win_rate"], pair["relative_win_rate"]);

    // The report on disk.
    let id = out["evaluation_id"].as_i64().unwrap();
    let report_dir = dir.path().join("report");
    let written = json(
        &assay(&db, &["--json", "eval", "report", &id.to_string(), "--out", report_dir.to_str().unwrap()], &[]).await,
    );
    let files: Vec<&str> = written["files"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for f in [
        "box.svg",
        "box.png",
        "heatmap.svg",
        "legacy-heatmap.png",
        "pairs.csv",
        "trials.csv",
        "judgments.csv",
        "report.json",
    ] {
        assert!(files.contains(&f), "{f} in {files:?}");
    }
    assert!(std::fs::read(report_dir.join("box.png")).unwrap().starts_with(b"\x89PNG"));
    let svg = std::fs::read_to_string(report_dir.join("box.svg")).unwrap();
    assert!(svg.contains("bm25 vs lightrag") && svg.contains("judged by offline rubric judge (no LLM)"));
    let judgments = std::fs::read_to_string(report_dir.join("judgments.csv")).unwrap();
    assert_eq!(judgments.lines().count() as i64, 1 + judged * 12, "a header and every judgment");
    let trials = std::fs::read_to_string(report_dir.join("trials.csv")).unwrap();
    assert_eq!(trials.lines().count(), 1 + 3);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["report"]["pairs"][0]["unbiased"]["relative"]["median"], pair["relative_win_rate"]);

    // The same downloads from the web server.
    let config = app::ssr::state::Config {
        max_upload_bytes: 1 << 20,
        import: engine::corpus::ImportLimits::new(1 << 20, 10),
        llm_base: Default::default(),
        require_login: false,
        secure_cookies: false,
        ..Default::default()
    };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);
    let get = |path: String| {
        let router = router.clone();
        async move {
            let resp = router.oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
            let (status, kind) =
                (resp.status(), resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()));
            (status, kind.unwrap_or_default(), resp.into_body().collect().await.unwrap().to_bytes().to_vec())
        }
    };
    let (status, kind, body) = get(format!("/api/evaluations/{id}/plots/heatmap.png")).await;
    assert_eq!((status, kind.as_str()), (StatusCode::OK, "image/png"));
    assert!(body.starts_with(b"\x89PNG"));
    let (status, _, body) = get(format!("/api/evaluations/{id}/tables/pairs.csv")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(String::from_utf8(body).unwrap(), std::fs::read_to_string(report_dir.join("pairs.csv")).unwrap());
    let (status, _, body) = get(format!("/api/evaluations/{id}/report.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["report"], report["report"]);
    assert_eq!(get(format!("/api/evaluations/{id}/plots/nothing.svg")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(get(format!("/api/evaluations/{id}/tables/nothing.csv")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(get("/api/evaluations/999/report.json".into()).await.0, StatusCode::NOT_FOUND);
    // The report page renders on the server with the judge named.
    let (status, _, page) = get(format!("/projects/1/evaluations/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(page).unwrap();
    // Its plots are linked, not inline: the browser fetches each.
    let box_plot = format!("/api/evaluations/{id}/plots/box.svg");
    assert!(
        page.contains("offline rubric judge (no LLM)") && page.contains(&format!("<img src=\"{box_plot}\"")),
        "{}",
        &page[..page.len().min(2000)]
    );
    assert!(!page.contains("<svg"), "no plot inline in the page");
    let (status, _, svg) = get(box_plot).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(svg).unwrap().starts_with("<svg"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sanity_check_with_a_position_biased_judge_is_even_only_under_the_unbiased_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "s").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    let args = [
        "--json",
        "eval",
        "sanity",
        "A",
        "--set",
        &set,
        "--method",
        "bm25",
        "--judge",
        "simulated",
        "--position-bias",
        "1",
        "--noise",
        "0",
        "--trials",
        "3",
    ];
    let out = json(&assay(&db, &args, &[]).await);
    assert_eq!(out["status"], "done", "{out}");
    assert_eq!(out["judge"], "simulated judge (bias lab, no LLM)");
    let s = &out["sanity"];
    // Identical answers (the offline method answers alike twice) and no
    // noise: each order's +1 cancels over both orders, every question ties.
    // (With noise, over more questions: engine/tests/it/judge.rs.)
    assert_eq!(s["even"], true, "{out}");
    assert_eq!(s["median_relative_win_rate"], 0.0);
    assert_eq!(out["pairs"][0]["tie"]["median"], 1.0);
    assert_eq!(out["bias"]["flip_rate"], 1.0, "every draw's winner is the first shown");
    assert!(s["legacy_relative_win_rate"].as_f64().unwrap() >= 0.7, "{out}");
    assert_eq!(out["pairs"][0]["b_name"], "bm25 (second run)");
    // The second run is an answer set of its own, made by the evaluation's job.
    let pool = db.open().await;
    let second = out["pairs"][0]["b"].as_i64().unwrap();
    let view = app::ssr::store::answers::get_set(&pool, second).await.unwrap();
    assert_eq!((view.method.as_str(), view.answers, view.job_id), ("bm25", 12, out["job"].as_i64()));
    // A sanity check of an imported set is refused: there is no method to answer again with.
    let file = dir.path().join("mine.jsonl");
    let answers = app::ssr::store::answers::list_answers(&pool, second, None).await.unwrap();
    let lines: Vec<String> = answers
        .iter()
        .map(|a| serde_json::json!({"question_id": a.question_id, "answer": a.answer}).to_string())
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let imported = json(
        &assay(
            &db,
            &["--json", "answers", "import", "A", "--set", &set, "--name", "mine", file.to_str().unwrap()],
            &[],
        )
        .await,
    );
    let id = imported["answers_id"].to_string();
    let refused = failure(&assay(&db, &["eval", "sanity", "A", "--set", &set, "--method", &id], &[]).await);
    assert!(refused.contains("imported"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_refused_with_the_reason_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "b").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    let cases: [(&[&str], &str); 7] = [
        (&["--methods", "bm25"], "at least two"),
        (&["--methods", "bm25,nothing"], "no answer set \"nothing\""),
        (&["--methods", "bm25,lightrag", "--trials", "0"], "trials"),
        (&["--methods", "bm25,lightrag", "--judge", "oracle"], "judge must be"),
        (&["--methods", "bm25,lightrag", "--noise", "-1"], "noise"),
        (&["--methods", "bm25,lightrag", "--judge-temperature", "3"], "judge_temperature: must be from 0 to 2, not 3"),
        (
            &["--methods", "bm25,lightrag", "--legacy-aspects", "ragas"],
            "the legacy aspects must be lightrag or graphrag, not \"ragas\"",
        ),
    ];
    for (extra, reason) in cases {
        let mut args = vec!["eval", "run", "A", "--set", &set];
        args.extend_from_slice(extra);
        let err = failure(&assay(&db, &args, &[]).await);
        assert!(err.contains(reason), "{extra:?}: {err}");
    }
    let pool = db.open().await;
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM evaluations WHERE project_id = $1", &[1]).await, 0);
    assert_eq!(
        common::scalar(&pool, "SELECT COUNT(*) FROM jobs WHERE kind = 'evaluation' AND project_id = $1", &[1]).await,
        0
    );
}

/// An evaluation stopped part-way resumes where it stopped: no item is
/// judged twice, and the report is the one an uninterrupted run gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_evaluation_resumes_without_judging_anything_twice() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "r").await;
    let set: i64 = sample_with_answers(&db, [5, 5, 2]).await.parse().unwrap();
    let pool = db.open().await;
    // The judge is a model behind an endpoint answering in 20 ms, two calls
    // at a time: the cancel at 20 items lands with most still to run (a
    // judge answering at once finished every item before the cancel could
    // take effect, now and then).
    let mock = common::slow_offline_mock(std::time::Duration::from_millis(20)).await;
    let llm = engine::llm::settings::LlmSettings {
        provider: engine::llm::settings::ProviderKind::OpenAi,
        base_url: mock.base_url(),
        model: "mock-model".into(),
        concurrency: 2,
        ..Default::default()
    };
    let req = |name: &str| app::ssr::evaluations::EvalRequest {
        question_set_id: set,
        answer_sets: vec![1, 2],
        pairs: vec![],
        settings: engine::judge::eval::Settings {
            judge: engine::judge::eval::JudgeKind::Llm,
            protocol: engine::judge::eval::Protocol::Unbiased,
            align: false,
            repeats: 1,
            trials: 4,
            ..Default::default()
        },
        name: Some(name.into()),
        no_cache: false,
    };
    let (job, id) = app::ssr::evaluations::create(&pool, &llm, &req("stopped")).await.unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let stop = cancel.clone();
    let end = app::ssr::jobs::run(&pool, &llm, app::ssr::stages::stage, job.id, false, cancel, &move |p| {
        if p.done >= 20 {
            stop.cancel();
        }
    })
    .await
    .unwrap();
    assert_eq!(end, engine::jobs::RunEnd::Cancelled);
    let partial = app::ssr::store::jobs::get_job(&pool, job.id).await.unwrap();
    assert!(partial.done >= 20 && partial.done < partial.total, "{partial:?}");
    let end = app::ssr::jobs::run(&pool, &llm, app::ssr::stages::stage, job.id, false, Default::default(), &|_| {})
        .await
        .unwrap();
    assert_eq!(end, engine::jobs::RunEnd::Finished);
    let after = app::ssr::store::jobs::get_job(&pool, job.id).await.unwrap();
    assert_eq!((after.status.as_str(), after.done, after.failed), ("done", after.total, 0));
    // Every judging draw went to the provider exactly once: an item cut
    // off by the cancel is judged again on resume, its finished draws
    // answered from the cache.
    let draws: Vec<(String, i64)> = app::on_db!(&pool, |db| sqlx::query_as(
        "SELECT item || '#' || sample, COUNT(*) FROM llm_calls
          WHERE job_id = $1 AND purpose = 'judge_scores' AND cached = FALSE GROUP BY item, sample",
    )
    .bind(job.id)
    .fetch_all(db)
    .await)
    .unwrap();
    assert!(
        !draws.is_empty() && draws.iter().all(|(_, n)| *n == 1),
        "a draw made twice: {:?}",
        draws.iter().find(|d| d.1 > 1)
    );
    // The same evaluation run straight through reports the same numbers.
    let (job2, id2) = app::ssr::evaluations::create(&pool, &llm, &req("straight")).await.unwrap();
    app::ssr::jobs::run(&pool, &llm, app::ssr::stages::stage, job2.id, false, Default::default(), &|_| {})
        .await
        .unwrap();
    let (_, resumed) = app::ssr::evaluations::report(&pool, id).await.unwrap();
    let (_, straight) = app::ssr::evaluations::report(&pool, id2).await.unwrap();
    assert_eq!(resumed.pairs, straight.pairs);
}

/// The price before the run is the run's: `eval run --plan` sends
/// nothing, and the run it plans then records exactly the judging calls and
/// prompt tokens the plan said (length alignment off: its regenerations are
/// the model's to decide); with alignment on, the calls fall in the plan's
/// range.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_of_a_run_is_what_the_run_then_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "plan").await;
    let set = sample_with_answers(&db, [4, 3, 1]).await;
    let pool = db.open().await;
    let base = ["--json", "eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag", "--judge", "offline"];
    for (extra, exact) in
        [(&["--trials", "3", "--repeats", "1", "--no-align"][..], true), (&["--trials", "2"][..], false)]
    {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let plan_args: Vec<&str> = args.iter().copied().chain(["--plan"]).collect();
        let calls_before = common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls", &[]).await;
        let plan = json(&assay(&db, &plan_args, &[]).await);
        assert_eq!(
            common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls", &[]).await,
            calls_before,
            "a plan sends nothing"
        );
        assert_eq!(plan["paid"], false, "{plan}");
        assert!(plan["paid_by"].as_str().unwrap().starts_with("free"), "{plan}");
        assert_eq!(plan["questions"], 8);
        let stages = plan["stages"].as_array().unwrap();
        let judging = stages.iter().find(|s| s["label"] == "evaluation: judging").unwrap();
        // 8 questions × (trials × repeats × 2 orders + 1 legacy verdict).
        let per_question = if exact { 3 * 2 + 1 } else { 2 * 2 * 2 + 1 };
        assert_eq!(judging["calls"], 8 * per_question, "{plan}");
        assert_eq!(plan["judgments"], judging["calls"]);

        let run = json(&assay(&db, &args, &[]).await);
        let job = run["job"].as_i64().unwrap();
        let recorded = |purpose_like: &'static str| {
            let pool = pool.clone();
            async move {
                let calls = common::scalar(
                    &pool,
                    &format!("SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND purpose LIKE '{purpose_like}'"),
                    &[job],
                )
                .await;
                let prompt = common::scalar(
                    &pool,
                    &format!(
                        "SELECT CAST(COALESCE(SUM(prompt_tokens), 0) AS BIGINT) FROM llm_calls WHERE job_id = $1 AND purpose LIKE '{purpose_like}'"
                    ),
                    &[job],
                )
                .await;
                (calls, prompt)
            }
        };
        let (calls, prompt) = recorded("judge%").await;
        assert_eq!(calls, judging["calls"].as_i64().unwrap(), "judging calls as planned");
        if exact {
            assert_eq!(judging["prompt_exact"], true);
            assert_eq!(prompt, judging["prompt_tokens"].as_i64().unwrap(), "prompt tokens as planned, to the token");
        } else {
            let align = stages.iter().find(|s| s["label"] == "evaluation: length alignment").unwrap();
            let (regenerated, _) = recorded("answer%").await;
            let (lo, hi) = (align["calls"].as_i64().unwrap(), align["calls_max"].as_i64().unwrap());
            assert!(lo <= hi, "{align}");
            assert!(regenerated <= hi, "alignment made {regenerated} calls, the plan said at most {hi}");
            // The judged answers are the aligned ones: the count is close, not exact.
            let planned = judging["prompt_tokens"].as_i64().unwrap();
            assert!((prompt - planned).abs() * 10 < planned, "prompt tokens {prompt} vs ≈ {planned}");
        }
    }
}

/// Judging requests go out without a temperature (the model's own default)
/// unless the evaluation sets one, which the report states; an evaluation
/// stored before the setting existed reads back as the 1.0 it ran at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judge_temperature_is_a_setting_sent_as_set_and_reported() {
    // The mock judges as the offline rubric judge would.
    let mock = common::offline_mock(None).await;
    let base = mock.base_url();
    let env = common::mock_env(&base);
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "jt").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    let judged = |mock: &mockllm::MockServer| -> Vec<Option<f64>> {
        let mut t: Vec<Option<f64>> = mock
            .stats()
            .answered
            .into_keys()
            .map(|b| serde_json::from_str::<Value>(&b).unwrap())
            .filter(|b| b["messages"].to_string().contains("Answer 2:"))
            .map(|b| b.get("temperature").and_then(Value::as_f64))
            .collect();
        assert!(!t.is_empty(), "the judge was called");
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        t.dedup();
        t
    };
    let run = |extra: &'static [&'static str]| {
        let (db, set, env) = (db.clone(), set.clone(), env.clone());
        async move {
            let mut args = ["--json", "eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag"].to_vec();
            args.extend(["--trials", "1", "--no-align"]);
            args.extend(extra);
            json(&assay(&db, &args, &env).await)
        }
    };
    mock.reset_stats();
    let default = run(&[]).await;
    assert_eq!(default["status"], "done", "{default}");
    assert_eq!(judged(&mock), [None], "none sent: the model's default");
    mock.reset_stats();
    let set_one = run(&["--judge-temperature", "0.3", "--no-cache"]).await;
    assert_eq!(set_one["status"], "done", "{set_one}");
    assert_eq!(judged(&mock).len(), 1);
    assert!((judged(&mock)[0].unwrap() - 0.3).abs() < 1e-6, "{:?}", judged(&mock));
    let pool = db.open().await;
    let views = app::ssr::evaluations::list(&pool, 1).await.unwrap();
    let texts: Vec<String> = views.iter().map(|v| v.settings_text()).collect();
    assert!(texts.iter().any(|t| t.contains("judge temperature the model's default (none sent)")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("judge temperature 0.3")), "{texts:?}");
    // A row stored before the setting existed: its settings lack the key.
    let id = views[0].id;
    common::execute(&pool, "UPDATE evaluations SET settings = '{\"trials\": 1}' WHERE id = $1", &[id]).await;
    let old = app::ssr::evaluations::get(&pool, id).await.unwrap();
    assert_eq!(old.settings.judge_temperature, Some(1.0));
    assert!(old.view.settings_text().contains("judge temperature 1"), "{}", old.view.settings_text());
}

/// The legacy protocol by name: LightRAG's three aspects by default,
/// GraphRAG's four (with Directness) on request — the judge is asked for
/// them, the report breaks the verdicts down by them, the settings say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_legacy_protocol_runs_lightrags_three_or_graphrags_four_aspects() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "la").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    for (variant, aspects) in [
        ("lightrag", &["Comprehensiveness", "Diversity", "Empowerment"][..]),
        ("graphrag", &["Comprehensiveness", "Diversity", "Empowerment", "Directness"][..]),
    ] {
        let mut args = ["--json", "eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag"].to_vec();
        args.extend(["--protocol", "legacy", "--judge", "offline", "--legacy-aspects", variant]);
        let out = json(&assay(&db, &args, &[]).await);
        assert_eq!(out["status"], "done", "{out}");
        let got: Vec<&str> = out["pairs"][0]["legacy"]["aspects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["aspect"].as_str().unwrap())
            .collect();
        assert_eq!(got, aspects, "{variant}");
        let settings = out["settings"].as_str().unwrap();
        assert!(settings.contains(&format!("{} aspects ({})", aspects.len(), aspects.join(", "))), "{settings}");
    }
    // The judge was asked for Directness only under the GraphRAG variant.
    let pool = db.open().await;
    let prompts = common::prompts(&pool, "c.purpose = 'judge_legacy'", &[]).await;
    assert_eq!(prompts.len(), 24);
    assert_eq!(prompts.iter().filter(|m| m.contains("**Directness**")).count(), 12);
}

/// Retrying failed items asks the model again: a judge
/// whose replies cannot be read fails the items; once it answers properly,
/// `job resume --retry-failed` sends their requests anew — before, the
/// cache answered them with the same unreadable replies and they failed
/// again with 0 requests sent. The unreadable replies stay in the call log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retrying_failed_items_asks_the_model_again() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let unreadable = std::sync::Arc::new(AtomicBool::new(true));
    let judging: fn(&Value) -> bool = |body| body["messages"].to_string().contains("Answer 2:");
    let mock = common::offline_mock(Some((unreadable.clone(), judging, "I would rather not say."))).await;
    let base = mock.base_url();
    let env = common::mock_env(&base);
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "retry").await;
    let set = sample_with_answers(&db, [2, 1, 1]).await;
    let args =
        ["--json", "eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag", "--trials", "1", "--no-align"];
    let first = assay(&db, &args, &env).await;
    let pool = db.open().await;
    let job = common::scalar(&pool, "SELECT MAX(id) FROM jobs WHERE kind = 'evaluation'", &[]).await;
    let failed = common::scalar(&pool, "SELECT failed FROM jobs WHERE id = $1", &[job]).await;
    assert!(failed > 0, "unreadable verdicts fail their items: {}", String::from_utf8_lossy(&first.stderr));
    let asked = mock.stats().requests;

    let worked = app::ssr::store::jobs::get_job(&pool, job).await.unwrap().elapsed_secs;

    unreadable.store(false, Ordering::SeqCst);
    // A pause between the runs is not work (331 s became 1,902 s).
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let began = std::time::Instant::now();
    let out = json(&assay(&db, &["--json", "job", "resume", &job.to_string(), "--retry-failed"], &env).await);
    let took = began.elapsed().as_secs_f64();
    let elapsed = app::ssr::store::jobs::get_job(&pool, job).await.unwrap().elapsed_secs;
    assert!(elapsed > worked && elapsed <= worked + took + 0.5, "{elapsed} s: {worked} s, then {took} s of retry");
    assert!(mock.stats().requests > asked, "the retry sent requests: {out}");
    assert_eq!(common::scalar(&pool, "SELECT failed FROM jobs WHERE id = $1", &[job]).await, 0, "{out}");
    assert_eq!(common::texts(&pool, "SELECT status FROM jobs WHERE id = $1", &[job]).await, ["done"]);
    // The unreadable replies are still in the call log.
    let kept = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND reply = 'I would rather not say.'",
        &[job],
    )
    .await;
    assert!(kept > 0, "the failed replies stay logged");
}

/// The evaluation's plan says how long the run would take on the
/// configured endpoint — its calls × the mean latency measured on the
/// model's last calls ÷ the concurrency — and says plainly when nothing
/// has been measured yet (the CLI's words are the form's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_says_how_long_the_run_would_take_from_the_measured_latency() {
    let offline = std::sync::Arc::new(engine::offline::provider());
    let respond = move |req: &Value| offline.answer_body(req);
    let mock = mockllm::MockServer::start(mockllm::MockConfig {
        latency: std::time::Duration::from_millis(60),
        responder: Some(mockllm::Responder(std::sync::Arc::new(respond))),
        ..Default::default()
    })
    .await;
    let base = mock.base_url();
    let mut env = common::mock_env(&base).to_vec();
    env.push(("ASSAY_LLM_CONCURRENCY", "2"));
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "time").await;
    let set = sample_with_answers(&db, [2, 1, 1]).await;
    let args = ["--json", "eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag", "--judge", "llm"];
    let plan_args: Vec<&str> = args.iter().copied().chain(["--plan"]).collect();
    let before = json(&assay(&db, &plan_args, &env).await);
    assert_eq!(before["time"], Value::Null, "nothing measured yet: {before}");
    let text = String::from_utf8(assay(&db, &plan_args[1..], &env).await.stdout).unwrap();
    assert!(text.contains("no time estimate yet: no call to this model has been measured"), "{text}");

    let small = ["--trials", "1", "--repeats", "1", "--no-align", "--protocol", "unbiased"];
    let first: Vec<&str> = args.iter().copied().chain(small).collect();
    json(&assay(&db, &first, &env).await);
    let pool = db.open().await;
    let fresh = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM llm_calls WHERE model = 'mock-model' AND NOT cached AND error IS NULL",
        &[],
    )
    .await;
    assert!(fresh > 0);
    let plan = json(&assay(&db, &plan_args, &env).await);
    let time = &plan["time"];
    assert_eq!(time["measured"].as_i64(), Some(fresh.min(500)), "{plan}");
    assert_eq!(time["concurrency"], 2);
    let latency = time["latency_ms"].as_f64().unwrap();
    assert!(latency >= 60.0, "the mock's 60 ms are in every call: {latency}");
    let calls: u64 = plan["stages"].as_array().unwrap().iter().map(|s| s["calls"].as_u64().unwrap()).sum();
    let expected = calls as f64 * latency / 1000.0 / 2.0;
    assert!((time["seconds"].as_f64().unwrap() - expected).abs() < 1e-6, "{plan}");
    let text = String::from_utf8(assay(&db, &plan_args[1..], &env).await.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "calls × {} ms (the mean of its last {fresh} answered calls) ÷ 2 at a time",
            latency.round()
        )),
        "{text}"
    );
}

/// The length-controlled win rate of a judge that likes long answers:
/// on the run's JSON and `eval show`, the report page, its CSV, the share
/// page; beside it, on the project's own page only, the relative win rate
/// length alignment gave the same pair in another evaluation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_length_controlled_win_rate_is_reported_beside_length_alignment() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "lc").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    let biased = ["--judge", "simulated", "--protocol", "unbiased", "--length-bias", "0.8", "--position-bias", "0.6"];
    let off =
        common::eval_run(&db, &set, "bm25,lightrag", &[&biased[..], &["--trials", "3", "--no-align"]].concat()).await;
    let id = off["evaluation_id"].as_i64().unwrap();
    let lc = &off["pairs"][0]["length_control"];
    let questions = off["pairs"][0]["questions"].as_u64().unwrap();
    // Every judgment: 3 trials × 2 orders × 2 repeats per question.
    assert_eq!(lc["judgments"].as_u64().unwrap(), questions * 12, "{lc}");
    assert_eq!(lc["position_fitted"], true);
    let paper = &lc["paper"];
    assert!(paper["length"].as_f64().unwrap() > 0.0, "the judge prefers the longer answer: {lc}");
    assert!(paper["position"].as_f64().unwrap() > 0.0, "and the one shown first: {lc}");
    let rate = paper["win_rate"].as_f64().unwrap();
    let (lo, hi) = (lc["paper_ci"][0].as_f64().unwrap(), lc["paper_ci"][1].as_f64().unwrap());
    assert!(lo <= rate && rate <= hi, "{lc}");
    assert!((paper["relative"].as_f64().unwrap() - (2.0 * rate - 1.0)).abs() < 1e-12);
    let code = lc["code"]["fit"]["win_rate"].as_f64().unwrap();
    assert!(code > 0.0 && code < 1.0);

    // `eval show` prints the same figures as the run did.
    let shown = String::from_utf8(assay(&db, &["eval", "show", &id.to_string()], &[]).await.stdout).unwrap();
    assert!(shown.contains("length-controlled win rate"), "{shown}");
    assert!(shown.contains(&format!("controlled {:.1}%", rate * 100.0)), "{shown}");
    let again = json(&assay(&db, &["--json", "eval", "show", &id.to_string()], &[]).await);
    assert_eq!(again["pairs"][0]["length_control"], *lc);

    // The report page and its CSV say the same.
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let page = format!("/projects/1/evaluations/{id}");
    let (status, _, html) = common::send_to(&router, common::get_as(&page, &owner)).await;
    assert_eq!(status, 200);
    assert!(html.contains("id=\"length-control-table\""), "the table");
    assert!(html.contains(&format!("{:.1}%", rate * 100.0)), "the paper fit's rate");
    assert!(html.contains("no aligned evaluation"), "no aligned evaluation of these answers yet");
    let (status, _, csv) =
        common::send_to(&router, common::get_as(&format!("/api/evaluations/{id}/tables/length-control.csv"), &owner))
            .await;
    assert_eq!(status, 200);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| row[head.iter().position(|h| *h == name).unwrap()].parse::<f64>().unwrap();
    assert!((cell("lc_win_rate_paper") - rate).abs() < 1e-6);
    assert!((cell("lc_win_rate_alpaca_eval") - code).abs() < 1e-6);
    assert_eq!(cell("judgments") as u64, questions * 12);

    // The same answers judged with length alignment: the page of the first
    // evaluation puts its relative win rate beside the regression's.
    let on = common::eval_run(&db, &set, "bm25,lightrag", &[&biased[..], &["--trials", "3"]].concat()).await;
    let aligned = on["evaluation_id"].as_i64().unwrap();
    let headline = on["pairs"][0]["relative_win_rate"].as_f64().unwrap();
    let (_, _, html) = common::send_to(&router, common::get_as(&page, &owner)).await;
    assert!(html.contains(&format!("(evaluation #{aligned})")), "the aligned evaluation named");
    assert!(html.contains(&app::format::signed(headline, 2)), "its relative win rate");
    // Each caller in turn: the page with the comparison and its CSV to
    // the project's readers and editors, nothing to the rest.
    let ana = common::member(&db, &router, &owner, "ana", Some("read")).await;
    let ed = common::member(&db, &router, &owner, "ed", Some("edit")).await;
    let cy = common::member(&db, &router, &owner, "cy", None).await;
    let ok = axum::http::StatusCode::OK;
    let (forbidden, see_other, unauthorized) =
        (axum::http::StatusCode::FORBIDDEN, axum::http::StatusCode::SEE_OTHER, axum::http::StatusCode::UNAUTHORIZED);
    common::readers(
        &router,
        &page,
        &format!("(evaluation #{aligned})"),
        &format!("/api/evaluations/{id}/tables/length-control.csv"),
        &[
            ("owner", &owner, ok, ok),
            ("reader", &ana, ok, ok),
            ("editor", &ed, ok, ok),
            ("no rights", &cy, forbidden, forbidden),
            ("anonymous", "", see_other, unauthorized),
        ],
    )
    .await;
    // The aligned evaluation's own page says its answers were aligned.
    let (_, _, own) =
        common::send_to(&router, common::get_as(&format!("/projects/1/evaluations/{aligned}"), &owner)).await;
    assert!(own.contains("id=\"length-control-aligned\"") && own.contains("(this evaluation)"));

    // Through a share link: the table, never the other evaluation.
    let share =
        json(&assay(&db, &["--json", "share", "create", "A", "--page", &format!("evaluation:{id}")], &[]).await);
    let token = share["token"].as_str().unwrap();
    let (status, _, shared) = common::send_to(&router, common::get_as(&format!("/share/{token}"), "")).await;
    assert_eq!(status, 200);
    assert!(shared.contains("id=\"length-control-table\""));
    assert!(!shared.contains(&format!("evaluation #{aligned}")), "another evaluation stays the project's");
    let (status, _, shared_csv) =
        common::send_to(&router, common::get_as(&format!("/api/share/{token}/tables/length-control.csv"), "")).await;
    assert_eq!((status, shared_csv), (axum::http::StatusCode::OK, csv));
}

/// Planning from a pilot: `eval run --plan --pilot` prints, beside the
/// price, what the run can decide — its interval's half-width and power,
/// and the questions other targets need — simulated from the pilot's
/// verdicts, and sends nothing, records nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_from_a_pilot_says_what_the_run_can_decide_and_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "pilot").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    let judge = ["--judge", "simulated", "--protocol", "unbiased", "--no-align"];
    let pilot = common::eval_run(&db, &set, "bm25,lightrag", &[&judge[..], &["--trials", "5"]].concat()).await;
    let pilot_id = pilot["evaluation_id"].as_i64().unwrap().to_string();
    let pool = db.open().await;
    let counts = |pool: app::ssr::store::Db| async move {
        (
            common::scalar(&pool, "SELECT COUNT(*) FROM evaluations", &[]).await,
            common::scalar(&pool, "SELECT COUNT(*) FROM jobs", &[]).await,
            common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls", &[]).await,
        )
    };
    let before = counts(pool.clone()).await;
    let plan_args = [&judge[..], &["--trials", "25", "--plan", "--pilot", &pilot_id, "--difference", "0.3"]].concat();
    let planned = common::eval_run(&db, &set, "bm25,lightrag", &plan_args).await;
    assert_eq!(counts(pool.clone()).await, before, "a plan runs nothing and sends nothing");
    let decide = &planned["decide"];
    assert_eq!(decide["pilot"].as_i64().unwrap().to_string(), pilot_id);
    let plan = &decide["pairs"][0];
    assert!(plan["curve_svg"].as_str().unwrap().contains("M = 25"), "the curve has a line per M");
    assert_eq!(plan["pilot_questions"], pilot["pairs"][0]["questions"], "every judged pilot question");
    let cells = plan["cells"].as_array().unwrap();
    // M = 1, 5 and the run's 25, each over the eight question counts.
    assert_eq!(cells.len(), 3 * engine::judge::plan::QUESTIONS.len());
    let hw = |q: u64, m: u64| {
        cells.iter().find(|c| c["questions"] == q && c["trials"] == m).unwrap()["half_width"].as_f64().unwrap()
    };
    assert!(hw(50, 25) > hw(6400, 25), "more questions, a narrower interval");
    let run = &plan["run"];
    assert_eq!(
        (run["questions"].as_u64(), run["trials"].as_u64()),
        (pilot["pairs"][0]["questions"].as_u64(), Some(25))
    );
    let power = run["power"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&power));
    // The text says the same, with the price first.
    let text = String::from_utf8(
        assay(&db, &[&["eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag"][..], &plan_args].concat(), &[])
            .await
            .stdout,
    )
    .unwrap();
    assert!(text.contains(&format!("simulated from evaluation {pilot_id}'s verdicts")), "{text}");
    assert!(
        text.contains(&format!("the headline's 95% interval ±{:.3}", run["half_width"].as_f64().unwrap())),
        "{text}"
    );
    // The difference is a size, taken in the direction the pilot leans.
    let reached = plan["difference_reached"].as_f64().unwrap();
    assert!((reached.abs() - 0.3).abs() < 1e-9 && reached.signum() == plan["pilot_effect"].as_f64().unwrap().signum());
    assert!(text.contains(&format!("for power 0.8 at a difference of {reached:.2}")), "{text}");
    // The same plan in the browser (the Evaluations form's fields, or a
    // report's "plan the next run"), each caller in turn.
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let decide = <app::api::DecideEvaluation as leptos::server_fn::ServerFn>::PATH;
    let form = format!("pilot={pilot_id}&question_set_id={set}&req[trials]=25&half_width=0.05&difference=0.3");
    let (status, _, body) = common::send_to(&router, common::post_as(decide, &form, &owner)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let web: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(web["run"], serde_json::json!([pilot["pairs"][0]["questions"], 25]), "the form's set × its M");
    assert_eq!(web["pairs"][0]["cells"], plan["cells"], "the page simulates what the CLI does");
    let typed = format!("pilot={pilot_id}&questions=800&req[trials]=5&half_width=0.05&difference=");
    let (_, _, body) = common::send_to(&router, common::post_as(decide, &typed, &owner)).await;
    let typed: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((&typed["run"], &typed["difference"]), (&serde_json::json!([800, 5]), &serde_json::Value::Null));
    assert!(typed["pairs"][0]["run"]["power"].is_null(), "no difference named, no power");
    for (form, status, said) in [
        (format!("pilot={pilot_id}&question_set_id=999&req[trials]=5&half_width=0.05"), StatusCode::NOT_FOUND, "999"),
        (format!("pilot={pilot_id}&questions=0&req[trials]=5&half_width=0.05"), StatusCode::BAD_REQUEST, "questions"),
        (format!("pilot={pilot_id}&questions=80&req[trials]=5&half_width=0"), StatusCode::BAD_REQUEST, "half-width"),
        (format!("pilot={pilot_id}&req[trials]=5&half_width=0.05"), StatusCode::BAD_REQUEST, "how many questions"),
    ] {
        let (got, _, body) = common::send_to(&router, common::post_as(decide, &form, &owner)).await;
        assert_eq!(got, status, "{form}: {body}");
        assert!(body.contains(said), "{form}: {body}");
    }
    let ana = common::member(&db, &router, &owner, "ana", Some("read")).await;
    let cy = common::member(&db, &router, &owner, "cy", None).await;
    let share =
        json(&assay(&db, &["--json", "share", "create", "A", "--page", &format!("evaluation:{pilot_id}")], &[]).await);
    let token = share["token"].as_str().unwrap().to_string();
    for (caller, cookie, status) in [
        ("owner", owner.as_str(), StatusCode::OK),
        ("reader", ana.as_str(), StatusCode::OK),
        ("no rights", cy.as_str(), StatusCode::FORBIDDEN),
        ("share token", token.as_str(), StatusCode::UNAUTHORIZED),
        ("anonymous", "", StatusCode::UNAUTHORIZED),
    ] {
        let (got, _, body) = common::send_to(&router, common::post_as(decide, &form, cookie)).await;
        assert_eq!(got, status, "{caller}: {body}");
        assert_eq!(body.contains("curve_svg"), status == StatusCode::OK, "{caller}");
    }
    // The experiment wizard plans a manifest's evaluations from it — the
    // wizard is the owner's alone.
    let wizard = <app::api::DecideExperiment as leptos::server_fn::ServerFn>::PATH;
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/experiment.toml")).unwrap();
    let fields = [("manifest", manifest.as_str()), ("pilot", &pilot_id), ("half_width", "0.05"), ("difference", "0.3")];
    let form = reqwest::Url::parse_with_params("http://x/", &fields).unwrap().query().unwrap().to_string();
    for (caller, cookie, status) in [
        ("owner", owner.as_str(), StatusCode::OK),
        ("reader", ana.as_str(), StatusCode::FORBIDDEN),
        ("share token", token.as_str(), StatusCode::UNAUTHORIZED),
        ("anonymous", "", StatusCode::UNAUTHORIZED),
    ] {
        let (got, _, body) = common::send_to(&router, common::post_as(wizard, &form, cookie)).await;
        assert_eq!(got, status, "{caller}: {body}");
        if status == StatusCode::OK {
            // sets = [1, 2]: 8 + 8 + 8 graph questions, 2 × 2 × 2 summary ones; M = 5.
            let sets: Vec<(usize, serde_json::Value)> = serde_json::from_str(&body).unwrap();
            let runs: Vec<(usize, &serde_json::Value)> = sets.iter().map(|(i, d)| (*i, &d["run"])).collect();
            assert_eq!(runs, [(1, &serde_json::json!([24, 5])), (2, &serde_json::json!([8, 5]))]);
        }
    }
    // The form offers the pilot; the report offers to plan from itself —
    // on the project's page, not through its share link.
    let (_, _, html) = common::send_to(&router, common::get_as("/projects/1/evaluations", &owner)).await;
    assert!(
        html.contains(r#"id="decide-pilot""#) && html.contains(&format!(r#"<option value="{pilot_id}">"#)),
        "{html}"
    );
    let (_, _, html) =
        common::send_to(&router, common::get_as(&format!("/projects/1/evaluations/{pilot_id}"), &ana)).await;
    assert!(html.contains(r#"id="plan-from-pilot""#));
    let (_, _, html) = common::send_to(&router, common::get_as(&format!("/share/{token}"), "")).await;
    assert!(
        html.contains(&format!("Evaluation #{pilot_id}")) && !html.contains("plan-from-pilot"),
        "not on a share page"
    );
    // Bad inputs are refused, naming what is wrong.
    let legacy = common::eval_run(&db, &set, "bm25,lightrag", &["--judge", "offline", "--protocol", "legacy"]).await;
    let legacy = legacy["evaluation_id"].as_i64().unwrap().to_string();
    for (args, said) in [
        (vec!["--plan", "--pilot", legacy.as_str()], "a pilot needs the unbiased protocol's trials"),
        (vec!["--plan", "--pilot", &pilot_id, "--half-width", "1.5"], "half-width must be between 0 and 1"),
        (vec!["--plan", "--pilot", "999"], "999"),
        (vec!["--pilot", &pilot_id], "--plan"),
    ] {
        let mut all = vec!["eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag"];
        all.extend(args);
        let out = assay(&db, &all, &[]).await;
        assert!(!out.status.success(), "{all:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{all:?}: {err}");
    }
}

/// Sequential trials: each pair is judged look by look and stops once
/// its verdict is settled — a method against answers that say nothing after
/// its first look (5 of 25 trials) — and reaches the verdict the same
/// statistic gives on all 25 trials of a fixed run, with fewer calls; the
/// report, its CSV, `eval show` and the price say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_trials_stop_a_settled_pair_and_reach_the_fixed_runs_verdicts() {
    use engine::judge::sequential::{self, Standing};
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "sequential").await;
    let set = sample_with_answers(&db, [5, 5, 2]).await;
    // Answers that say nothing: a pair no judge finds even.
    let questions = common::blank_answers(&db, &set, dir.path()).await;
    let judge = ["--judge", "simulated", "--protocol", "unbiased", "--no-align", "--trials", "25", "--repeats", "1"];
    let methods = "bm25,lightrag,blank";
    // The price first: at least the first look's calls, at most all M's.
    let plan = common::eval_run(&db, &set, methods, &[&judge[..], &["--sequential", "--plan"]].concat()).await;
    let judging =
        plan["stages"].as_array().unwrap().iter().find(|s| s["label"].as_str().unwrap().ends_with("judging")).unwrap();
    let all_m = (3 * questions * 25 * 2) as u64;
    assert_eq!((judging["calls"].as_u64(), judging["calls_max"].as_u64()), (Some(all_m / 5), Some(all_m)), "{judging}");
    let fixed = common::eval_run(&db, &set, methods, &judge).await;
    let seq = common::eval_run(&db, &set, methods, &[&judge[..], &["--sequential", "--no-cache"]].concat()).await;
    let pool = db.open().await;
    let calls = |id: &Value| {
        let pool = pool.clone();
        let id = id.as_i64().unwrap();
        async move {
            common::scalar(
                &pool,
                "SELECT COUNT(*) FROM job_items i JOIN evaluations e ON e.job_id = i.job_id \
                 WHERE e.id = $1 AND i.key LIKE 'u-%' AND i.status = 'done'",
                &[id],
            )
            .await
        }
    };
    let (fixed_items, seq_items) = (calls(&fixed["evaluation_id"]).await, calls(&seq["evaluation_id"]).await);
    assert_eq!(fixed_items as usize, 3 * questions * 25, "the fixed run judged every trial");
    assert!(seq_items < fixed_items, "{seq_items} of {fixed_items} trials judged");
    // Each pair: the sequential verdict is the fixed run's on the same statistic at M = 25.
    let e = app::ssr::evaluations::get(&pool, fixed["evaluation_id"].as_i64().unwrap()).await.unwrap();
    let (_, fixed_pairs) = app::ssr::evaluations::inputs(&pool, &e).await.unwrap();
    let mut made = 0;
    for p in seq["pairs"].as_array().unwrap() {
        let course: sequential::Course = serde_json::from_value(p["sequential"].clone()).unwrap();
        let input = fixed_pairs.iter().find(|i| Some(i.a) == p["a"].as_i64() && Some(i.b) == p["b"].as_i64()).unwrap();
        let at_m = sequential::look(
            &sequential::outcomes(&engine::judge::eval::trial_maps(input), 25),
            25,
            1,
            sequential::ALPHA,
            engine::judge::eval::EVEN,
        )
        .unwrap()
        .standing;
        if course.standing() != Standing::Open {
            assert_eq!(course.standing(), at_m, "{}: settled as all 25 trials say", p["b_name"]);
        }
        if p["b_name"] == "blank" {
            assert_eq!((course.standing(), course.trials(), course.looks.len()), (Standing::Differs, 5, 1), "{p}");
            assert!(course.looks[0].estimate > 0.5, "the method beats answers that say nothing");
        }
        assert_eq!(p["trials"].as_u64(), Some(u64::from(course.trials())), "the report reads the trials judged");
        made += course.calls;
        assert_eq!(course.calls_fixed, (questions * 25 * 2) as u64);
    }
    assert_eq!(made, seq_items as u64 * 2, "calls made: the trials judged × 2 orders");
    // The job's total is what it judged: its bar ends full.
    let job = seq["job"].as_i64().unwrap();
    let (done, total) = (
        common::scalar(&pool, "SELECT done FROM jobs WHERE id = $1", &[job]).await,
        common::scalar(&pool, "SELECT total FROM jobs WHERE id = $1", &[job]).await,
    );
    assert_eq!(done, total);
    // Shown: the page's table, the CSV's looks, eval show.
    let id = seq["evaluation_id"].as_i64().unwrap();
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let (_, _, html) = common::send_to(&router, common::get_as(&format!("/projects/1/evaluations/{id}"), &owner)).await;
    assert!(html.contains(r#"id="sequential-table""#) && html.contains("5 of 25 trials (look 1 of 5)"), "{html}");
    assert!(html.contains("M = 25 trials at most (sequential"), "the settings say so");
    let (status, _, csv) =
        common::send_to(&router, common::get_as(&format!("/api/evaluations/{id}/tables/sequential.csv"), &owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(csv.starts_with("a,b,a_name,b_name,look,trials,m,questions,estimate,low,high,z,standing"), "{csv}");
    assert!(csv.lines().any(|l| l.contains(",blank,1,5,25,") && l.contains(",differs,true,")), "{csv}");
    let show = String::from_utf8(assay(&db, &["eval", "show", &id.to_string()], &[]).await.stdout).unwrap();
    assert!(
        show.contains("sequential trials (each pair stopped")
            && show.contains("vs blank: differs after 5 of 25 trials"),
        "{show}"
    );
    // The legacy protocol has no trials to stop.
    let out = assay(
        &db,
        &["eval", "run", "A", "--set", &set, "--methods", methods, "--protocol", "legacy", "--sequential"],
        &[],
    )
    .await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("sequential: needs the unbiased protocol"));
    eprintln!("sequential: {seq_items} of {fixed_items} trials judged ({} calls)", made);
}

/// A jury: three simulated judges with different biases judge every
/// unbiased item — the plan counts their calls and the run makes exactly
/// those — the headline is their mean score, the report shows each judge's
/// verdicts, the majority's and their agreement, and, once answer-validation
/// studies of both answer sets have ratings, each judge's and the jury's
/// agreement with the people (here the people side with the jury on every
/// question: κ = 1). On the page (each caller as its rights say), the share
/// page (no study links), the CSVs and `eval show`; bad juries refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jury_judges_every_item_and_is_compared_with_each_judge_and_the_people() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "jury").await;
    let set = sample_with_answers(&db, [4, 3, 1]).await;
    let jury = "simulated:position=1.5,noise=1; simulated:length=0.8,noise=0.2";
    let args = [
        "--judge",
        "simulated",
        "--protocol",
        "unbiased",
        "--no-align",
        "--trials",
        "3",
        "--repeats",
        "1",
        "--jury",
        jury,
    ];
    let plan = common::eval_run(&db, &set, "bm25,lightrag", &[&args[..], &["--plan"]].concat()).await;
    let judging =
        plan["stages"].as_array().unwrap().iter().find(|s| s["label"] == "evaluation: judging").unwrap().clone();
    // 8 questions × 3 trials × 1 repeat × 2 orders × 3 judges.
    assert_eq!(judging["calls"], 8 * 3 * 2 * 3, "{judging}");
    assert!(judging["how"].as_str().unwrap().contains("× 3 judges (a jury:"), "{judging}");
    let run = common::eval_run(&db, &set, "bm25,lightrag", &args).await;
    let (id, job) = (run["evaluation_id"].as_i64().unwrap(), run["job"].as_i64().unwrap());
    let pool = db.open().await;
    let calls =
        common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND purpose LIKE 'judge%'", &[job])
            .await;
    assert_eq!(calls, judging["calls"].as_i64().unwrap(), "the run makes the calls the plan counted");
    // Judge 1's items keep their keys (u-A-B-Q-TTT); the jury's others end in -1, -2.
    for (judge, hyphens, end) in [(1, 4, "%"), (2, 5, "%-1"), (3, 5, "%-2")] {
        let items = common::scalar(
            &pool,
            &format!(
                "SELECT COUNT(*) FROM job_items WHERE job_id = $1 AND key LIKE 'u-%' AND key LIKE '{end}' \
                 AND LENGTH(key) - LENGTH(REPLACE(key, '-', '')) = {hyphens} AND status = 'done'"
            ),
            &[job],
        )
        .await;
        assert_eq!(items, 8 * 3, "judge {judge} judged every item");
    }
    assert!(run["judge"].as_str().unwrap().starts_with("a jury of 3: simulated judge"), "{}", run["judge"]);
    let j = &run["jury"];
    assert_eq!(j["rule"], "mean score");
    assert_eq!(j["judges"].as_array().unwrap().len(), 3);
    assert_eq!(j["items"], 8 * 3, "every item judged by all three");
    let kappa = j["fleiss_kappa"].as_f64().unwrap();
    assert!((-1.0..1.0).contains(&kappa), "judges with different biases disagree somewhere: {kappa}");
    assert_eq!(j["judges"][1]["label"], "judge 2: simulated:position=1.5,length=0.1,noise=1,seed=1");
    // The headline is the jury's mean score.
    assert_eq!(run["pairs"][0]["headline"]["a_win"], j["mean"]["pairs"][0]["headline"]["a_win"]);
    assert!(j["people"].is_null(), "no study yet");

    // People rate both answer sets' answers: the better-judged answer (by
    // the jury's mean score over trials) gets the higher correctness.
    let e = app::ssr::evaluations::get(&pool, id).await.unwrap();
    let (_, inputs) = app::ssr::evaluations::inputs(&pool, &e).await.unwrap();
    let diff = |q: i64| {
        let question = inputs[0].questions.iter().find(|x| x.id == q).unwrap();
        let ds: Vec<f64> = question
            .trials
            .values()
            .map(|js| engine::judge::verdict(js).map(|v| v.a_total - v.b_total).unwrap())
            .collect();
        ds.iter().sum::<f64>() / ds.len() as f64
    };
    let (a, b) = (inputs[0].a, inputs[0].b);
    for (answer_set, sign) in [(a, 1.0), (b, -1.0)] {
        let made = json(
            &assay(
                &db,
                &[
                    "--json",
                    "study",
                    "create",
                    "A",
                    "--kind",
                    "answers",
                    "--answers",
                    &answer_set.to_string(),
                    "--questions",
                    &format!("{set}:8"),
                    "--raters",
                    "2",
                ],
                &[],
            )
            .await,
        );
        let study = made["study_id"].as_i64().unwrap();
        let links = app::ssr::store::studies::links(&pool, study).await.unwrap();
        for (n, link) in links.iter().filter(|l| l.kind == types::LinkKind::Rater).enumerate() {
            let token = format!("jury-test-{study}-{n}");
            app::ssr::store::studies::insert_rater(&pool, study, link.id, &token, n as i64).await.unwrap();
            let rater = common::scalar(&pool, "SELECT MAX(id) FROM raters", &[]).await;
            for (item, ..) in app::ssr::store::studies::items(&pool, study).await.unwrap() {
                let q = common::scalar(&pool, "SELECT question_id FROM study_items WHERE id = $1", &[item]).await;
                let d = diff(q) * sign;
                let correctness = if d.abs() < 1e-9 {
                    1
                } else if d > 0.0 {
                    3
                } else {
                    1
                };
                app::ssr::store::studies::upsert_scores(&pool, rater, item, &[correctness, 0, 3, 0]).await.unwrap();
            }
        }
    }
    let shown = json(&assay(&db, &["--json", "eval", "show", &id.to_string()], &[]).await);
    let people = &shown["jury"]["people"];
    assert_eq!(people["dimension"], "Correctness");
    assert_eq!(people["studies"].as_array().unwrap().len(), 2);
    let rows = people["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "three judges and the jury");
    let jury_row = rows.last().unwrap();
    assert_eq!(jury_row["label"], "jury (mean score)");
    assert_eq!(jury_row["n"], 8);
    if rows.iter().any(|r| r["cohen_kappa"].is_null()) {
        panic!("every judge's κ is defined on 8 questions with varied winners: {people}");
    }
    assert!((jury_row["cohen_kappa"].as_f64().unwrap() - 1.0).abs() < 1e-12, "{jury_row}");
    assert!(jury_row["spearman"][0].as_f64().unwrap() > 0.5, "{jury_row}");
    let text = String::from_utf8(assay(&db, &["eval", "show", &id.to_string()], &[]).await.stdout).unwrap();
    assert!(text.contains("jury of 3 judges (headline: mean score)") && text.contains("Fleiss' κ"), "{text}");
    assert!(
        text.contains("agreement with the people") && text.contains("jury (mean score): Cohen's κ 1.000"),
        "{text}"
    );

    // The page, per caller; the CSVs; the share page names the studies without linking them.
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let ana = common::member(&db, &router, &owner, "ana", Some("read")).await;
    let ed = common::member(&db, &router, &owner, "ed", Some("edit")).await;
    let cy = common::member(&db, &router, &owner, "cy", None).await;
    let page = format!("/projects/1/evaluations/{id}");
    let (ok, forbidden) = (StatusCode::OK, StatusCode::FORBIDDEN);
    common::readers(
        &router,
        &page,
        r#"id="jury-table""#,
        &format!("/api/evaluations/{id}/tables/jury-agreement.csv"),
        &[
            ("owner", &owner, ok, ok),
            ("reader", &ana, ok, ok),
            ("editor", &ed, ok, ok),
            ("no rights", &cy, forbidden, forbidden),
            ("anonymous", "", StatusCode::SEE_OTHER, StatusCode::UNAUTHORIZED),
        ],
    )
    .await;
    let (_, _, html) = common::send_to(&router, common::get_as(&page, &ana)).await;
    assert!(html.contains(r#"id="jury-people""#) && html.contains("/projects/1/studies/"), "{html}");
    let (_, _, csv) =
        common::send_to(&router, common::get_as(&format!("/api/evaluations/{id}/tables/jury.csv"), &owner)).await;
    assert!(csv.starts_with("row,judge,a,b,items,median_trial,a_win,tie,b_win,relative_win_rate"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 5, "3 judges, mean score, majority — one pair");
    let (_, _, csv) =
        common::send_to(&router, common::get_as(&format!("/api/evaluations/{id}/tables/jury-agreement.csv"), &owner))
            .await;
    assert!(
        csv.contains("fleiss_kappa,judges (winners),")
            && csv.contains("cohen_kappa,jury (mean score) and the people,1,"),
        "{csv}"
    );
    let (_, _, csv) =
        common::send_to(&router, common::get_as(&format!("/api/evaluations/{id}/tables/judgments.csv"), &owner)).await;
    assert!(csv.lines().next().unwrap().ends_with(",judge"), "{csv}");
    assert_eq!(csv.lines().skip(1).filter(|l| l.ends_with(",3")).count(), 8 * 3 * 2, "judge 3's judgments");
    let share =
        json(&assay(&db, &["--json", "share", "create", "A", "--page", &format!("evaluation:{id}")], &[]).await);
    let token = share["token"].as_str().unwrap();
    let (status, _, html) = common::send_to(&router, common::get_as(&format!("/share/{token}"), "")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"id="jury-table""#) && html.contains(r#"id="jury-people""#), "{html}");
    assert!(!html.contains("/projects/1/studies/"), "a share page does not link the project's studies");

    // Bad juries are refused, naming what is wrong, before any work.
    for (extra, said) in [
        (vec!["--jury", "oracle"], "a juror is offline, llm[:MODEL] or simulated"),
        (vec!["--jury", "simulated:position=9"], "position must be between -5 and 5"),
        (vec!["--jury", "offline", "--protocol", "legacy"], "jury: judges the unbiased protocol's items"),
    ] {
        let mut all = vec!["eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag"];
        all.extend(extra);
        let out = assay(&db, &all, &[]).await;
        assert!(!out.status.success(), "{all:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{all:?}: {err}");
    }
    // The Evaluations form takes a jury too; a reader may not start one.
    let start = <app::api::StartEvaluation as leptos::server_fn::ServerFn>::PATH;
    let form = format!(
        "question_set_id={set}&answer_sets={a},{b}&pairs=&name=&req[protocol]=unbiased&req[trials]=1&req[repeats]=1\
         &req[tolerance]=10&req[adjustments]=0&req[align]=false&req[exchange]=true&req[judge]=simulated\
         &req[position_bias]=0&req[length_bias]=0&req[noise]=0.5&req[jury]=offline"
    );
    for (caller, cookie, status) in
        [("reader", ana.as_str(), StatusCode::FORBIDDEN), ("editor", ed.as_str(), StatusCode::OK)]
    {
        let (got, _, body) = common::send_to(&router, common::post_as(start, &form, cookie)).await;
        assert_eq!(got, status, "{caller}: {body}");
        if status == StatusCode::OK {
            assert!(body.contains("a jury of 2"), "{body}");
        }
    }
    let (got, _, body) = common::send_to(
        &router,
        common::post_as(start, &form.replace("req[jury]=offline", "req[jury]=judge%3Ax"), &ed),
    )
    .await;
    assert_eq!(got, StatusCode::BAD_REQUEST);
    assert!(body.contains("jury: a juror is offline"), "{body}");
    // A setting out of range is refused by the request, naming its field;
    // one that is no number at all where the arguments are read, naming it
    // too (the page's number fields are `required`: the browser says first).
    for (bad, said) in [
        ("req[trials]=0", "trials: must be a whole number from 1 to 1000, not 0"),
        ("req[judge_temperature]=3", "judge_temperature: must be from 0 to 2, not 3"),
        ("req[trials]=many", "the request's arguments could not be read: trials: not a whole number in range"),
        ("req[judge]=oracle", "judge must be llm, offline or simulated, not \\\"oracle\\\""),
    ] {
        let form = format!("question_set_id={set}&answer_sets={a},{b}&pairs=&name=&{bad}");
        let (got, _, body) = common::send_to(&router, common::post_as(start, &form, &ed)).await;
        assert_eq!(got, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert!(body.contains(said), "{bad}: {body}");
    }
}

/// The Batch API (`--llm-batch on`) against the mock: the same evaluation,
/// run live and through batches on two copies of one project, reaches the
/// same verdicts; the batches' calls are logged as live ones are, priced at
/// half, and the plan says so before anything is sent; no call went live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evaluation_through_the_batch_api_gives_the_live_verdicts_at_half_the_price() {
    // The endpoint wants a key: every upload, batch and poll carries it,
    // and no record, log line or output shows it.
    let key = "sk-batch-canary-4242";
    let offline = engine::offline::provider();
    let responder = mockllm::Responder(std::sync::Arc::new(move |body: &Value| offline.answer_body(body)));
    let mock = mockllm::MockServer::start(mockllm::MockConfig {
        responder: Some(responder),
        api_key: Some(key.into()),
        ..Default::default()
    })
    .await;
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for batch in ["off", "on"] {
        let db = common::test_db(dir.path(), &format!("batch-{batch}")).await;
        let set = sample_with_answers(&db, [3, 2, 1]).await;
        let env = [
            ("ASSAY_LLM_PROVIDER", "openai"),
            ("ASSAY_LLM_BASE_URL", base.as_str()),
            ("ASSAY_LLM_MODEL", "mock-model"),
            ("ASSAY_LLM_PRICE", "2,8"),
            ("ASSAY_LLM_BATCH", batch),
            ("ASSAY_LLM_API_KEY", key),
        ];
        let args = ["--json", "eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag", "--trials", "2"];
        let plan_args: Vec<&str> = args.iter().copied().chain(["--plan"]).collect();
        let plan = json(&assay(&db, &plan_args, &env).await);
        let said = plan["paid_by"].as_str().unwrap().contains("half of it through the Batch API");
        assert_eq!(said, batch == "on", "{plan}");
        mock.reset_stats();
        let output = assay(&db, &args, &env).await;
        let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(!printed.contains(key), "the key was printed");
        let out = json(&output);
        assert_eq!(out["status"], "done", "{out}");
        assert_eq!(mock.stats().unauthorized, 0, "every request carried the key");
        let job = out["job"].as_i64().unwrap();
        // The database as written (the process has ended: its WAL is folded in or beside it).
        if let common::TestDb::Sqlite(path) = &db {
            for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
                let name = file.file_name().to_string_lossy().to_string();
                if name.starts_with(&format!("batch-{batch}")) {
                    let bytes = std::fs::read(file.path()).unwrap();
                    assert!(!bytes.windows(key.len()).any(|w| w == key.as_bytes()), "the key is in {name}");
                }
            }
            assert!(path.exists());
        }
        let pool = db.open().await;
        let logged =
            common::scalar(&pool, "SELECT COUNT(*) FROM llm_calls WHERE job_id = $1 AND reply IS NOT NULL", &[job])
                .await;
        // The judges' calls and tokens, per task.
        let judging = common::texts(
            &pool,
            "SELECT purpose || ': ' || COUNT(*) || ' calls, ' || SUM(prompt_tokens) || ' + ' || SUM(completion_tokens)
             FROM llm_calls WHERE job_id = $1 AND purpose LIKE 'judge%' GROUP BY purpose ORDER BY purpose",
            &[job],
        )
        .await;
        // Each batch is in the job's record, read.
        let batches = common::scalar(&pool, "SELECT COUNT(*) FROM llm_batches WHERE job_id = $1", &[job]).await;
        let unread =
            common::scalar(&pool, "SELECT COUNT(*) FROM llm_batches WHERE job_id = $1 AND read = FALSE", &[job]).await;
        assert_eq!((batches, unread), (mock.stats().batches as i64, 0));
        // The job page's record of them: each answered in full and read.
        for b in app::ssr::store::batches::of_job(&pool, job).await.unwrap() {
            assert_eq!(
                (b.provider_status.as_str(), b.completed + b.failed, b.read),
                ("completed", b.total, true),
                "{b:?}"
            );
            assert!(b.total > 0);
        }
        let judging_cost: f64 = common::texts(
            &pool,
            "SELECT CAST(SUM(cost_usd) AS TEXT) FROM llm_calls WHERE job_id = $1 AND purpose LIKE 'judge%'",
            &[job],
        )
        .await[0]
            .parse()
            .unwrap();
        let plan_cost: f64 = plan["stages"].as_array().unwrap().iter().filter_map(|s| s["cost_usd"].as_f64()).sum();
        runs.push((out, plan_cost, logged, mock.stats(), (judging, judging_cost)));
    }
    let [(live, live_plan, live_logged, live_stats, live_judging), (batched, batch_plan, batch_logged, batch_stats, batch_judging)] =
        &runs[..]
    else {
        unreachable!()
    };
    // The same verdicts and statistics. (Not the same tokens: length
    // alignment's regenerated answers fit their context to the endpoint's
    // token ratio as measured from the replies so far, which arrive in
    // another order in rounds of batches than live.)
    let verdicts = |run: &Value| {
        let mut pairs = run["pairs"].clone();
        for p in pairs.as_array_mut().unwrap() {
            p.as_object_mut().unwrap().retain(|k, _| k != "tokens" && k != "cost_usd");
        }
        pairs
    };
    assert_eq!(verdicts(batched), verdicts(live), "the same verdicts");
    assert_eq!(batch_judging.0, live_judging.0, "the same judging calls");
    assert_eq!(batch_logged, live_logged, "every call logged");
    // The same calls at half the price (the regenerations' prompts aside, see above).
    let (live_cost, batch_cost) = (live_judging.1, batch_judging.1);
    assert!(live_cost > 0.0, "{live}");
    assert!((batch_cost - live_cost / 2.0).abs() < 1e-9, "judging: batch {batch_cost} against live {live_cost}");
    let (live_total, batch_total) = (live["cost_usd"].as_f64().unwrap(), batched["cost_usd"].as_f64().unwrap());
    assert!((batch_total / live_total - 0.5).abs() < 0.05, "in all: batch {batch_total} against live {live_total}");
    assert!(*live_plan > 0.0 && (batch_plan - live_plan / 2.0).abs() < 1e-6, "plans: {live_plan} and {batch_plan}");
    assert_eq!(live_stats.batches, 0);
    // Judging and length alignment's regenerations: a batch per round, none live.
    assert!(batch_stats.batches >= 1, "{batch_stats:?}");
    assert_eq!(batch_stats.requests, 0, "no call went live");
    assert_eq!(batch_stats.batch_requests as i64, *batch_logged);
}

/// The plan says what a provider's prefix cache may take off the price
/// (#45): a judging request goes out once per trial and repeat, the same
/// each time, so each send after the first may be read from the cache,
/// which serves a prefix of 1,024 tokens or more in steps of 128 (OpenAI's
/// rule). With long answers the plan's cacheable tokens are those of the
/// very requests the judging sends, counted here, and their saving is at
/// the model's cached rate; with short answers no prompt reaches the
/// minimum and the plan says none is expected. Nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_says_what_the_prefix_cache_may_save() {
    let mock = mockllm::MockServer::start(mockllm::MockConfig::default()).await;
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "pc").await;
    let set = sample_with_answers(&db, [2, 1, 1]).await;
    let export = assay(&db, &["questions", "export", "A", "--set", &set], &[]).await;
    let questions: Vec<String> = String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["question"].as_str().unwrap().to_string())
        .collect();
    // Two long answer sets, ≈700 tokens an answer.
    let long = |who: &str, q: usize| -> String {
        (0..40)
            .map(|i| format!("{who} notes point {i} of question {q}: the ledger's entry {i} was altered. "))
            .collect()
    };
    // And two of a sentence an answer.
    for who in ["Holmes", "Watson", "Brief", "Terse"] {
        let lines: Vec<String> = questions
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let answer = match who {
                    "Brief" | "Terse" => format!("{who}: the ledger was altered ({i})."),
                    _ => long(who, i),
                };
                serde_json::json!({"question": q, "answer": answer}).to_string()
            })
            .collect();
        let file = dir.path().join(format!("{who}.jsonl"));
        std::fs::write(&file, lines.join("\n")).unwrap();
        let args = ["--json", "answers", "import", "A", "--set", &set, "--name", who, file.to_str().unwrap()];
        json(&assay(&db, &args, &[]).await);
    }
    let env = [
        ("ASSAY_LLM_PROVIDER", "openai"),
        ("ASSAY_LLM_BASE_URL", base.as_str()),
        ("ASSAY_LLM_MODEL", "mock-model"),
        ("ASSAY_LLM_PRICE", "2,8,0.5"),
    ];
    let (trials, repeats) = (3u64, 2u64);
    // The plan of judging `methods`, as JSON or as the CLI's text; `how`:
    // the judge, trials and repeats.
    const PAPER: [&str; 6] = ["--judge", "llm", "--trials", "3", "--repeats", "2"];
    let plan_with = |methods: &'static str, text: bool, how: [&'static str; 6]| {
        let (db, set, env) = (db.clone(), set.clone(), env);
        async move {
            let mut args = vec!["eval", "run", "A", "--set", &set, "--methods", methods];
            args.extend(how);
            args.extend(["--no-align", "--protocol", "unbiased", "--plan"]);
            if !text {
                args.insert(0, "--json");
            }
            assay(&db, &args, &env).await
        }
    };
    let plan_of = |methods: &'static str, text: bool| plan_with(methods, text, PAPER);
    let plan = json(&plan_of("Holmes,Watson", false).await);
    let judging = plan["stages"].as_array().unwrap().iter().find(|s| s["label"] == "evaluation: judging").unwrap();
    // The requests the judging sends, both orders, counted as the gateway counts them.
    let count = |a: &str, b: &str, q: &str| {
        engine::llm::count_prompt_tokens(
            &engine::judge::scoring::request_with(types::JudgePrompt::Paper, q, a, b, 0).messages,
        )
    };
    let mut expected = 0;
    for (i, q) in questions.iter().enumerate() {
        let (a, b) = (long("Holmes", i), long("Watson", i));
        let (ab, ba) = (count(&a, &b, q), count(&b, &a, q));
        assert!(ab >= 1_024 && ba >= 1_024, "long answers make prompts past the cache's minimum: {ab}, {ba}");
        expected += (trials * repeats - 1) * (engine::llm::cacheable_prefix(ab) + engine::llm::cacheable_prefix(ba));
    }
    assert_eq!(judging["cacheable_tokens"], expected, "{judging}");
    let prompt = judging["prompt_tokens"].as_u64().unwrap();
    assert!(expected < prompt * 5 / 6, "at most five sends in six are served from the cache");
    // $2 a million prompt tokens, $0.50 read from the cache: $1.50 a million saved.
    let saving = judging["cache_saving_usd"].as_f64().unwrap();
    assert!((saving - expected as f64 * 1.5e-6).abs() < 1e-9, "{saving} for {expected} tokens");
    assert!(saving < judging["cost_usd"].as_f64().unwrap());
    let text = String::from_utf8(plan_of("Holmes,Watson", true).await.stdout).unwrap();
    let said = format!("Prompt cache: up to {} of the prompt tokens", app::format::int(expected as i64));
    assert!(text.contains(&said), "{text}");
    assert!(text.contains(&format!("up to {} less", app::format::usd(saving))), "{text}");

    // Answers of a sentence: no prompt reaches 1,024 tokens.
    let plan = json(&plan_of("Brief,Terse", false).await);
    let judging = plan["stages"].as_array().unwrap().iter().find(|s| s["label"] == "evaluation: judging").unwrap();
    assert_eq!(judging["cacheable_tokens"], 0, "{judging}");
    let text = String::from_utf8(plan_of("Brief,Terse", true).await.stdout).unwrap();
    assert!(text.contains("Prompt cache: no judging prompt reaches the 1,024 tokens"), "{text}");

    // Long answers, but each request sent once: nothing repeats.
    let once = ["--judge", "llm", "--trials", "1", "--repeats", "1"];
    let plan = json(&plan_with("Holmes,Watson", false, once).await);
    let judging = plan["stages"].as_array().unwrap().iter().find(|s| s["label"] == "evaluation: judging").unwrap();
    assert_eq!((judging["cacheable_tokens"].as_u64(), judging["resent_tokens"].as_u64()), (Some(0), Some(0)));
    let text = String::from_utf8(plan_with("Holmes,Watson", true, once).await.stdout).unwrap();
    assert!(text.contains("Prompt cache: each judging request is sent once (one trial, one repeat)"), "{text}");
    // The offline rubric judges while the plan is paid (answering again and
    // alignment would use the model): no judging prompt goes to the cache.
    let rubric = ["--judge", "offline", "--trials", "3", "--repeats", "2"];
    let text = String::from_utf8(plan_with("Holmes,Watson", true, rubric).await.stdout).unwrap();
    assert!(text.contains("Prompt cache: the judge calls no model"), "{text}");
    assert_eq!(mock.stats().ok, 0, "a plan sends nothing");
}

//! Question-rating studies on a real SQLite file: `assay study create`
//! draws questions and prints the links; raters use them with no account
//! through the running server (127.0.0.1:0) — 200 of them at once, 30
//! ratings each, every one stored exactly once; one submission per rater;
//! revoked links and closed studies refuse; results and CSV.

use crate::common;

use common::{assay, call, json, start_server as start};

/// The sample corpus with 10 graph questions; the set's id.
async fn sample_with_questions(db: &common::TestDb) -> String {
    json(&assay(db, &["--json", "project", "create", "A"], &[]).await);
    json(&assay(db, &["--json", "corpus", "add", "A", "--sample"], &[]).await);
    json(&assay(db, &["--json", "graph", "build", "A"], &[]).await);
    let args = [
        "--json",
        "questions",
        "generate",
        "graph",
        "A",
        "--node",
        "4",
        "--edge",
        "4",
        "--subgraph",
        "2",
        "--min-hops",
        "10",
    ];
    json(&assay(db, &args, &[]).await)["set_id"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_raters_at_once_store_exactly_their_six_thousand_ratings() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "s").await;
    let set = sample_with_questions(&db).await;
    let created = json(
        &assay(
            &db,
            &[
                "--json",
                "study",
                "create",
                "A",
                "--questions",
                &format!("{set}:10"),
                "--raters",
                "200",
                "--base-url",
                "http://example.test:9",
            ],
            &[],
        )
        .await,
    );
    let study = created["study_id"].as_i64().unwrap();
    assert_eq!(created["owner_url"], format!("http://example.test:9/projects/1/studies/{study}"));
    assert!(created["rater_url"].as_str().unwrap().starts_with("http://example.test:9/s/"));
    let links: Vec<String> = created["rater_urls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(links.len(), 200);
    assert!(links.iter().all(|t| t.len() == 48), "192-bit tokens");
    // Only hashes are stored.
    let pool = db.open().await;
    let stored: i64 =
        app::on_db!(&pool, |db| sqlx::query_scalar("SELECT COUNT(*) FROM study_links WHERE token_hash = $1")
            .bind(&links[0])
            .fetch_one(db)
            .await)
        .unwrap();
    assert_eq!(stored, 0, "a token is never stored as itself");

    let base = start(&db, dir.path()).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for (n, link) in links.iter().cloned().enumerate() {
        let (client, base) = (client.clone(), base.clone());
        tasks.spawn(async move {
            let (status, session) =
                call(&client, &base, "study/session", &[("link", link.clone()), ("rater", String::new())]).await;
            assert_eq!(status, 200, "{session}");
            let rater = session["rater"].as_str().unwrap().to_string();
            let items: Vec<i64> =
                session["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect();
            assert_eq!(items.len(), 10);
            assert!(session.to_string().find("graph").is_none(), "the source is hidden from raters");
            for (k, item) in items.iter().enumerate() {
                let scores = format!("{},{},{}", 1 + (n + k) % 5, 1 + (n * 3 + k) % 5, 5 - (k % 5));
                let (status, body) = call(
                    &client,
                    &base,
                    "study/rate",
                    &[("link", link.clone()), ("rater", rater.clone()), ("item", item.to_string()), ("scores", scores)],
                )
                .await;
                assert_eq!(status, 200, "{body}");
                assert_eq!(body, serde_json::json!([k + 1, 10]));
            }
            let (status, body) =
                call(&client, &base, "study/finish", &[("link", link.clone()), ("rater", rater.clone())]).await;
            assert_eq!(status, 200, "{body}");
            items
        });
    }
    let mut orders = std::collections::BTreeSet::new();
    while let Some(done) = tasks.join_next().await {
        orders.insert(done.unwrap());
    }
    assert!(orders.len() > 150, "orders are shuffled per rater ({} distinct)", orders.len());
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move { common::scalar(&pool, sql, &[study]).await }
    };
    assert_eq!(
        count("SELECT COUNT(*) FROM ratings r JOIN raters ra ON ra.id = r.rater_id WHERE ra.study_id = $1").await,
        6000
    );
    assert_eq!(count("SELECT COUNT(*) FROM raters WHERE study_id = $1 AND finished_at IS NOT NULL").await, 200);

    // One submission per rater: after finishing, nothing changes.
    let (status, session) =
        call(&client, &base, "study/session", &[("link", links[0].clone()), ("rater", String::new())]).await;
    assert_eq!((status, session["finished"].as_bool()), (200, Some(true)));
    let item = session["items"][0]["id"].as_i64().unwrap();
    let rater = session["rater"].as_str().unwrap().to_string();
    let form =
        [("link", links[0].clone()), ("rater", rater), ("item", item.to_string()), ("scores", "1,1,1".to_string())];
    let (status, body) = call(&client, &base, "study/rate", &form).await;
    assert_ne!(status, 200);
    assert!(body.to_string().contains("already submitted"), "{body}");

    // Results: 200 raters, all complete; agreement computed per dimension.
    let results = json(&assay(&db, &["study", "results", &study.to_string()], &[]).await);
    assert_eq!(results["results"]["raters"], 200);
    assert_eq!(results["results"]["completed"], 200);
    let dims = results["results"]["dimensions"].as_array().unwrap();
    assert_eq!(dims.len(), 3);
    assert_eq!(dims[0]["dimension"], "Comprehensibility");
    assert_eq!(dims[0]["agreement"]["fleiss_items"], 10);
    let csv = assay(&db, &["study", "results", &study.to_string(), "--format", "csv"], &[]).await;
    assert_eq!(String::from_utf8_lossy(&csv.stdout).lines().count(), 6001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_link_gives_each_browser_a_rater_resumes_it_and_refuses_when_revoked_or_closed() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "o").await;
    let set = sample_with_questions(&db).await;
    let created = json(
        &assay(
            &db,
            &[
                "--json",
                "study",
                "create",
                "A",
                "--questions",
                &format!("{set}:4"),
                "--attention",
                "1",
                "--expires-days",
                "2",
            ],
            &[],
        )
        .await,
    );
    let study = created["study_id"].as_i64().unwrap();
    let link = created["rater_url"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let base = start(&db, dir.path()).await;
    let client = reqwest::Client::new();
    let session = |rater: String| {
        let (client, base, link) = (client.clone(), base.clone(), link.clone());
        async move { call(&client, &base, "study/session", &[("link", link), ("rater", rater)]).await }
    };
    let (_, first) = session(String::new()).await;
    let (_, second) = session(String::new()).await;
    let rater = first["rater"].as_str().unwrap().to_string();
    assert_ne!(Some(rater.as_str()), second["rater"].as_str(), "two browsers, two raters");
    assert_eq!(first["items"].as_array().unwrap().len(), 5, "4 questions and the attention check");
    let item = first["items"][0]["id"].as_i64().unwrap();
    let rate = |scores: &str| {
        let form = [
            ("link", link.clone()),
            ("rater", rater.clone()),
            ("item", item.to_string()),
            ("scores", scores.to_string()),
        ];
        let (client, base) = (client.clone(), base.clone());
        async move { call(&client, &base, "study/rate", &form).await }
    };
    assert_eq!(rate("5,4,3").await.0, 200);
    assert_eq!(rate("4,4,3").await.0, 200, "back and change: replaced");
    let (status, body) = rate("6,1,1").await;
    assert!(status != 200 && body.to_string().contains("1 to 5"), "{body}");
    // Resumed after a reload: the same rater, the rating kept.
    let (_, again) = session(rater.clone()).await;
    assert_eq!(again["rater"].as_str(), Some(rater.as_str()));
    assert_eq!(again["ratings"], serde_json::json!([[item, [4, 4, 3]]]));
    assert_eq!(again["items"], first["items"], "the same order");
    // Finishing early is refused with what is missing.
    let (status, body) =
        call(&client, &base, "study/finish", &[("link", link.clone()), ("rater", rater.clone())]).await;
    assert!(status != 200 && body.to_string().contains("4 of 5 items are not rated yet"), "{body}");
    // Closed: the session says so, ratings are refused.
    let pool = db.open().await;
    app::ssr::studies::set_open(&pool, study, false).await.unwrap();
    let (_, closed) = session(String::new()).await;
    assert_eq!((closed["is_open"].as_bool(), closed["items"].as_array().map(Vec::len)), (Some(false), Some(0)));
    let (status, body) = rate("3,3,3").await;
    assert!(status != 200 && body.to_string().contains("closed"), "{body}");
    // The links expire: two days from now, and once that time has passed they open nothing.
    let expires =
        common::texts(&pool, "SELECT expires_at FROM study_links WHERE study_id = $1 AND kind = 'open'", &[study])
            .await
            .remove(0);
    let in_two_days: String =
        common::texts(&pool, "SELECT substr(strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+2 days'), 1, 10)", &[])
            .await
            .remove(0);
    assert!(expires.starts_with(&in_two_days), "{expires}");
    common::execute(
        &pool,
        "UPDATE study_links SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 minute') WHERE study_id = $1",
        &[study],
    )
    .await;
    let (status, body) = session(rater.clone()).await;
    assert!(status != 200 && body.to_string().contains("does not exist or was withdrawn"), "expired: {body}");
    common::execute(&pool, "UPDATE study_links SET expires_at = NULL WHERE study_id = $1", &[study]).await;
    // Revoked: the link is gone, for everyone.
    app::ssr::studies::set_open(&pool, study, true).await.unwrap();
    let link_id =
        common::scalar(&pool, "SELECT id FROM study_links WHERE study_id = $1 AND kind = 'open'", &[study]).await;
    app::ssr::studies::revoke_link(&pool, link_id).await.unwrap();
    let (status, body) = session(rater.clone()).await;
    assert!(status != 200 && body.to_string().contains("does not exist or was withdrawn"), "{body}");
    let (status, _) =
        call(&client, &base, "study/session", &[("link", "0".repeat(48)), ("rater", String::new())]).await;
    assert_ne!(status, 200, "a guessed token opens nothing");
}

/// `assay study hierarag-judging` on the HieraRAG authors' own
/// `human_judging/` files (committed unchanged): every figure their scripts
/// wrote, recomputed, beside the value their files hold; a folder that is
/// not one is refused with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authors_human_judging_folder_reads_and_gives_their_figures() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "hj").await;
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../engine/tests/fixtures/hierarag_human");
    let out = json(&assay(&db, &["--json", "study", "hierarag-judging", folder], &[]).await);
    let figures = out["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 13);
    for f in figures {
        let (ours, theirs) = (f["as_published"].as_f64().unwrap(), f["authors"].as_f64().unwrap());
        // correlation_stat.txt keeps 3 decimals; the rest are full precision.
        let tolerance = if f["source"].as_str().unwrap().contains("3 decimals") { 5e-4 } else { 1e-12 };
        assert!((ours - theirs).abs() <= tolerance, "{f}");
    }
    let kappa = figures.iter().find(|f| f["figure"] == "iaa_correctness").unwrap();
    assert!((kappa["authors"].as_f64().unwrap() - 0.4713656387665197).abs() < 1e-15);
    // The standard reading differs where a missing score counted as 0.
    let acceptable = figures.iter().find(|f| f["figure"] == "pct_acceptable_answers").unwrap();
    assert!(acceptable["standard"].as_f64().unwrap() > acceptable["as_published"].as_f64().unwrap());
    // The table a reader sees.
    let text = assay(&db, &["study", "hierarag-judging", folder], &[]).await;
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    for line in
        ["2 annotators", "110 questions, 30 shared, 56 category picks", "iaa_correctness", "QC: 27.3% of 22 picks"]
    {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    let refused = assay(&db, &["study", "hierarag-judging", dir.path().to_str().unwrap()], &[]).await;
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("completed_human") && err.contains("expected the annotators' completed workbooks"), "{err}");
}

//! Read-only share links through the real router, login required: a share
//! token opens its page and that page's own downloads (no account), the
//! report as one self-contained HTML file, nothing else — no other page,
//! no owner route, no other kind's files; withdrawn, it is a 404 at once.

use crate::common;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::{assay, json, sample_with_answers};
use http_body_util::BodyExt;
use tower::ServiceExt;

async fn get(router: &axum::Router, path: &str, cookie: Option<&str>) -> (StatusCode, String, Vec<u8>) {
    let mut r = Request::get(path);
    if let Some(c) = cookie {
        r = r.header(header::COOKIE, format!("assay_session={c}"));
    }
    let resp = router.clone().oneshot(r.body(Body::empty()).unwrap()).await.unwrap();
    let kind = resp.headers().get(header::CONTENT_TYPE).map_or(String::new(), |v| v.to_str().unwrap().to_string());
    (resp.status(), kind, resp.into_body().collect().await.unwrap().to_bytes().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_link_opens_its_page_and_its_files_only_until_withdrawn() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "share").await;
    let set = sample_with_answers(&db, [3, 2, 1]).await;
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
        "2",
    ];
    let eval = json(&assay(&db, &run, &[]).await)["evaluation_id"].as_i64().unwrap();
    let study = json(&assay(&db, &["--json", "study", "create", "A", "--questions", &format!("{set}:3")], &[]).await)
        ["study_id"]
        .as_i64()
        .unwrap();
    let share = |page: String| {
        let db = db.clone();
        async move {
            let out = json(
                &assay(&db, &["--json", "share", "create", "A", "--page", &page, "--base-url", "http://x.test"], &[])
                    .await,
            );
            assert!(out["url"].as_str().unwrap().starts_with("http://x.test/share/"));
            out["token"].as_str().unwrap().to_string()
        }
    };
    let eval_token = share(format!("evaluation:{eval}")).await;
    let study_token = share(format!("study:{study}")).await;

    let pool = db.open().await;
    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);

    // The shared report renders with no account, the judge named, no links into the project.
    let (status, _, page) = get(&router, &format!("/share/{eval_token}"), None).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(page).unwrap();
    let box_plot = format!("/api/share/{eval_token}/plots/box.svg");
    assert!(
        page.contains("offline rubric judge (no LLM)") && page.contains(&format!("<img src=\"{box_plot}\"")),
        "{}",
        &page[..page.len().min(1500)]
    );
    let (status, _, svg) = get(&router, &box_plot, None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(svg).unwrap().starts_with("<svg"), "the shared plot, with no account");
    assert!(!page.contains("/projects/1/"), "nothing of the project is linked from a shared page");
    assert!(!page.contains("id=\"share-panel\""), "no share controls");
    // Its own downloads, through the token.
    let (status, kind, body) = get(&router, &format!("/api/share/{eval_token}/plots/box.png"), None).await;
    assert_eq!((status, kind.as_str()), (StatusCode::OK, "image/png"));
    assert!(body.starts_with(b"\x89PNG"));
    let (status, _, body) = get(&router, &format!("/api/share/{eval_token}/tables/pairs.csv"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(body).unwrap().starts_with("a,b,a_name"));
    let (status, _, body) = get(&router, &format!("/api/share/{eval_token}/report.json"), None).await;
    assert_eq!(status, StatusCode::OK);
    let report: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(report["evaluation"]["id"], eval);
    // The report as one HTML file: the plots inline, the data inside, nothing fetched.
    let (status, kind, body) = get(&router, &format!("/api/share/{eval_token}/report.html"), None).await;
    assert_eq!((status, kind.as_str()), (StatusCode::OK, "text/html; charset=utf-8"));
    let html = String::from_utf8(body).unwrap();
    assert!(html.matches("<svg").count() >= 5, "box, heatmaps and the pair's bars inline");
    assert!(html.contains("id=\"assay-data\"") && html.contains("bm25 vs lightrag"));
    for external in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(external), "the file needs nothing from elsewhere: {external}");
    }
    // The drill-down through the link: the pair's questions a page at
    // a time, one question's judgments; only its own pair and questions, and
    // nothing through another kind's link or a guessed one.
    let pairs = &report["report"]["pairs"];
    let (a, b) = (pairs[0]["a"].as_i64().unwrap(), pairs[0]["b"].as_i64().unwrap());
    let (status, page1) =
        post(&router, "/api/share/drill_questions", &format!("token={eval_token}&a={a}&b={b}&page=1")).await;
    assert_eq!(status, StatusCode::OK, "{page1}");
    assert_eq!(page1["total"], 6);
    let question = page1["questions"][0]["id"].as_i64().unwrap();
    let (status, drill) =
        post(&router, "/api/share/drill", &format!("token={eval_token}&a={a}&b={b}&question={question}")).await;
    assert_eq!(status, StatusCode::OK, "{drill}");
    assert_eq!(drill["judgments"].as_array().unwrap().len(), 2 * 2 * 2, "2 trials × 2 repeats × 2 orders");
    for (what, form) in [
        ("a pair not judged", format!("token={eval_token}&a={b}&b={a}&question={question}")),
        ("a question of no question set of it", format!("token={eval_token}&a={a}&b={b}&question=999999")),
        ("another kind's link", format!("token={study_token}&a={a}&b={b}&question={question}")),
        ("a guessed link", format!("token={}&a={a}&b={b}&question={question}", "0".repeat(48))),
    ] {
        let (status, body) = post(&router, "/api/share/drill", &form).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {body}");
        assert!(!body.to_string().contains("judgments"), "{what}");
    }
    let (status, _) =
        post(&router, "/api/share/drill_questions", &format!("token={study_token}&a={a}&b={b}&page=1")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A study's share opens the study's results and its files.
    let (status, _, page) = get(&router, &format!("/share/{study_token}"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(page).unwrap().contains("Comprehensibility"));
    assert_eq!(get(&router, &format!("/api/share/{study_token}/ratings.csv"), None).await.0, StatusCode::OK);

    // Nothing else: not another kind's files, not owner routes, not another id.
    assert_eq!(get(&router, &format!("/api/share/{study_token}/plots/box.svg"), None).await.0, StatusCode::NOT_FOUND);
    for path in [format!("/api/evaluations/{eval}/report.json"), format!("/projects/1/evaluations/{eval}"), "/".into()]
    {
        let (status, ..) = get(&router, &path, Some(&eval_token)).await;
        assert!(status == StatusCode::UNAUTHORIZED || status == StatusCode::SEE_OTHER, "{path}: {status}");
    }
    let (status, ..) = get(&router, &format!("/api/share/{}/report.json", "0".repeat(48)), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a guessed token opens nothing");

    // Withdrawn: 404 at once, page and files.
    json(&assay(&db, &["--json", "share", "revoke", &eval_token], &[]).await);
    assert_eq!(get(&router, &format!("/share/{eval_token}"), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(get(&router, &format!("/api/share/{eval_token}/report.json"), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        get(&router, &format!("/share/{study_token}"), None).await.0,
        StatusCode::OK,
        "the other link still works"
    );

    // An expiring link works until its time, then is a 404.
    let out = json(
        &assay(
            &db,
            &["--json", "share", "create", "A", "--page", &format!("study:{study}"), "--expires-days", "7"],
            &[],
        )
        .await,
    );
    let expiring = out["token"].as_str().unwrap().to_string();
    assert_eq!(get(&router, &format!("/share/{expiring}"), None).await.0, StatusCode::OK);
    common::execute(
        &pool,
        "UPDATE shares SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 minute') WHERE id = $1",
        &[out["share_id"].as_i64().unwrap()],
    )
    .await;
    assert_eq!(get(&router, &format!("/share/{expiring}"), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(get(&router, &format!("/api/share/{expiring}/ratings.csv"), None).await.0, StatusCode::NOT_FOUND);
    let refused =
        assay(&db, &["share", "create", "A", "--page", &format!("study:{study}"), "--expires-days", "0"], &[]).await;
    assert!(!refused.status.success());
}

/// A server function call through the router; (status, JSON).
async fn post(router: &axum::Router, path: &str, form: &str) -> (StatusCode, serde_json::Value) {
    post_with(router, path, form, &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_set_and_a_graph_explorer_are_shared_and_reach_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "share2").await;
    let set = sample_with_answers(&db, [3, 2, 1]).await;
    // A second project with its own graph: a share of A must not reach it.
    json(&assay(&db, &["--json", "project", "create", "B"], &[]).await);
    json(&assay(&db, &["--json", "corpus", "add", "B", "--sample"], &[]).await);
    json(&assay(&db, &["--json", "graph", "build", "B"], &[]).await);
    json(&assay(&db, &["--json", "questions", "relevance", "A", "--set", &set], &[]).await);
    let share = |page: &str| {
        let (db, page) = (db.clone(), page.to_string());
        async move {
            json(&assay(&db, &["--json", "share", "create", "A", "--page", &page], &[]).await)["token"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let set_token = share(&format!("questions:{set}")).await;
    let graph_token = share("graph:1").await;
    let refused = assay(&db, &["share", "create", "A", "--page", "graph:2"], &[]).await;
    assert!(String::from_utf8_lossy(&refused.stderr).contains("belongs to another project"));

    let pool = db.open().await;
    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);

    // The question set: its questions, its diagnostics' charts, its files.
    let (status, _, page) = get(&router, &format!("/share/{set_token}"), None).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(page).unwrap();
    let questions = app::ssr::store::questions::list_questions(&pool, set.parse().unwrap()).await.unwrap();
    assert_eq!(questions.len(), 6);
    for q in &questions {
        let escaped = q.question.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
        assert!(page.contains(&escaped) || page.contains(&q.question), "{}", q.question);
    }
    assert!(page.contains("Entities the questions mention") && page.contains("Relevance of retrieved context"));
    // Its charts linked, fetched through the token, as SVG and PNG; none of another kind's.
    for chart in ["entities", "relevance"] {
        let svg = format!("/api/share/{set_token}/plots/{chart}.svg");
        assert!(page.contains(&format!("<img src=\"{svg}\"")), "{chart} linked");
        let (status, _, body) = get(&router, &svg, None).await;
        assert_eq!(status, StatusCode::OK, "{chart}");
        assert!(String::from_utf8(body).unwrap().starts_with("<svg"), "{chart}");
        let (status, kind, _) = get(&router, &format!("/api/share/{set_token}/plots/{chart}.png"), None).await;
        assert_eq!((status, kind.as_str()), (StatusCode::OK, "image/png"), "{chart}");
    }
    assert_eq!(get(&router, &format!("/api/share/{set_token}/plots/box.svg"), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        get(&router, &format!("/api/share/{graph_token}/plots/entities.svg"), None).await.0,
        StatusCode::NOT_FOUND
    );
    assert!(!page.contains("/projects/1/") && !page.contains("id=\"share-panel\""), "read-only, nothing else linked");
    let (status, _, body) = get(&router, &format!("/api/share/{set_token}/questions.jsonl"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(String::from_utf8(body).unwrap().lines().count(), 6);
    let (status, _, body) = get(&router, &format!("/api/share/{set_token}/report.html"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(body).unwrap().matches("<svg").count() >= 2, "both charts inline");
    assert_eq!(get(&router, &format!("/api/share/{set_token}/ratings.csv"), None).await.0, StatusCode::NOT_FOUND);

    // The graph: the page, and the explorer's data through the token only.
    let (status, _, page) = get(&router, &format!("/share/{graph_token}"), None).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("id=\"graph-stats\"") && page.contains(&format!("/share/{graph_token}?node=")));
    assert!(!page.contains("/projects/1/"));
    let (status, view) = post(&router, "/api/share/graph", &format!("token={graph_token}&limit=100")).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let node = view["nodes"][0]["id"].as_i64().unwrap();
    let (status, detail) = post(&router, "/api/share/graph_node", &format!("token={graph_token}&node_id={node}")).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert!(detail["sources"].as_array().is_some_and(|s| !s.is_empty()));
    // Another project's node, by changing the id: not found.
    let other: i64 =
        common::scalar(&pool, "SELECT id FROM graph_nodes WHERE project_id = 2 ORDER BY id LIMIT 1", &[]).await;
    let (status, body) = post(&router, "/api/share/graph_node", &format!("token={graph_token}&node_id={other}")).await;
    assert_ne!(status, StatusCode::OK);
    assert!(body.to_string().contains("not in this project's graph"), "{body}");
    // The question set's token does not open the graph.
    let (status, _) = post(&router, "/api/share/graph", &format!("token={set_token}&limit=100")).await;
    assert_ne!(status, StatusCode::OK);

    // Each kind's page is read through its own server function (the browser
    // loads only that kind's code): the page names its kind for hydration,
    // and a token of another kind opens nothing through the others.
    assert!(page.contains("data-share-kind=\"graph\""));
    let (status, kind) = post(&router, "/api/share/kind", &format!("token={set_token}")).await;
    assert_eq!((status, kind), (StatusCode::OK, serde_json::json!("questions")));
    let (status, overview) = post(&router, "/api/share/graph_overview", &format!("token={graph_token}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(overview["nodes"].as_u64().is_some_and(|n| n > 0), "{overview}");
    for (path, token) in [
        ("/api/share/graph_overview", &set_token),
        ("/api/share/experiment", &graph_token),
        ("/api/share/get", &graph_token),
    ] {
        let (status, body) = post(&router, path, &format!("token={token}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    }
    let (status, _) = post(&router, "/api/share/kind", &format!("token={}", "0".repeat(48))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // The graph as a file through its share: project 1's nodes (by their
    // ids; B has the same sample corpus, so the same names), none of B's;
    // the question set's token opens no graph file.
    let ids = |project: i64| {
        let pool = pool.clone();
        async move {
            app::on_db!(&pool, |db| sqlx::query_scalar::<_, i64>(
                "SELECT id FROM graph_nodes WHERE project_id = $1 ORDER BY id"
            )
            .bind(project)
            .fetch_all(db)
            .await)
            .unwrap()
        }
    };
    let (a_ids, b_ids) = (ids(1).await, ids(2).await);
    assert!(!a_ids.is_empty() && !b_ids.is_empty());
    for file in ["graph.json", "graph.graphml"] {
        let (status, kind, body) = get(&router, &format!("/api/share/{graph_token}/{file}"), None).await;
        assert_eq!(status, StatusCode::OK, "{file}");
        assert!(kind.starts_with(if file == "graph.json" { "application/json" } else { "application/graphml+xml" }));
        let body = String::from_utf8(body).unwrap();
        let got: Vec<i64> = if file == "graph.json" {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            v["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect()
        } else {
            body.match_indices("<node id=\"n")
                .map(|(i, _)| {
                    let rest = &body[i + 11..];
                    rest[..rest.find('"').unwrap()].parse().unwrap()
                })
                .collect()
        };
        assert_eq!(got, a_ids, "{file}: project 1's nodes, and only them");
        assert_eq!(get(&router, &format!("/api/share/{set_token}/{file}"), None).await.0, StatusCode::NOT_FOUND);
    }
    // Withdrawn: the explorer's data and the files stop at once.
    json(&assay(&db, &["--json", "share", "revoke", &graph_token], &[]).await);
    assert_eq!(get(&router, &format!("/api/share/{graph_token}/graph.json"), None).await.0, StatusCode::NOT_FOUND);
    assert_ne!(post(&router, "/api/share/graph", &format!("token={graph_token}&limit=100")).await.0, StatusCode::OK);
    assert_eq!(get(&router, &format!("/share/{graph_token}"), None).await.0, StatusCode::NOT_FOUND);
}

/// A server function call with request headers; (status, JSON).
async fn post_with(
    router: &axum::Router,
    path: &str,
    form: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, serde_json::Value) {
    let mut r = Request::post(path).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let resp = router.clone().oneshot(r.body(Body::from(form.to_string())).unwrap()).await.unwrap();
    let status = resp.status();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_and_study_links_are_shown_as_absolute_urls() {
    use leptos::server_fn::ServerFn;
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "links").await;
    let set = sample_with_answers(&db, [3, 2, 1]).await;
    let study = json(&assay(&db, &["--json", "study", "create", "A", "--questions", &format!("{set}:3")], &[]).await)
        ["study_id"]
        .as_i64()
        .unwrap();
    let pool = db.open().await;
    let owner = app::ssr::auth::create_user(&pool, "owner", "correct horse battery", types::Role::Owner).await.unwrap();
    let session = format!("assay_session={}", app::ssr::auth::new_session(&pool, owner).await.unwrap());
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = |base_url: Option<&str>| {
        let config = app::ssr::state::Config { base_url: base_url.map(str::to_string), ..Default::default() };
        server::web::router(pool.clone(), config, Default::default(), options.clone())
    };
    let share = app::api::CreateShare::PATH;
    let link = app::api::AddStudyLink::PATH;
    let share_form = "kind=questions&page_id=".to_string() + &set;
    let link_form = format!("id={study}&kind=rater");
    let token = |url: &str, prefix: &str| {
        let rest = url.strip_prefix(prefix).unwrap_or_else(|| panic!("{url} does not start with {prefix}"));
        assert_eq!(rest.len(), 48, "{url}");
        assert!(rest.chars().all(|c| c.is_ascii_hexdigit()), "{url}");
    };

    // Under the scheme and host the request came to (a TLS proxy's header counts).
    let direct = router(None);
    let (status, url) =
        post_with(&direct, share, &share_form, &[("host", "assay.lab:8080"), ("cookie", &session)]).await;
    assert_eq!(status, StatusCode::OK, "{url}");
    token(url.as_str().unwrap(), "http://assay.lab:8080/share/");
    let proxied = [("host", "assay.example"), ("x-forwarded-proto", "https"), ("cookie", &session)];
    let (_, url) = post_with(&direct, link, &link_form, &proxied).await;
    token(url.as_str().unwrap(), "https://assay.example/s/");
    // A host that is not a plain name is not echoed: the path alone.
    let (_, url) =
        post_with(&direct, share, &share_form, &[("host", "evil.test\"><script>"), ("cookie", &session)]).await;
    token(url.as_str().unwrap(), "/share/");
    // `--base-url` wins over the request's host.
    let configured = router(Some("https://assay.lab.example/base"));
    let (_, url) = post_with(&configured, share, &share_form, &[("host", "10.0.0.5:3000"), ("cookie", &session)]).await;
    token(url.as_str().unwrap(), "https://assay.lab.example/base/share/");
    // The links work: the share opens, the rater link answers.
    let page = url.as_str().unwrap().trim_start_matches("https://assay.lab.example/base").to_string();
    assert_eq!(get(&configured, &page, None).await.0, StatusCode::OK);
}

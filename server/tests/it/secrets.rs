//! A member's secret reaches no reader: an editor gives the
//! HTTP method a bearer token and an API key in its body template, through
//! the browser's server function and through the CLI; the service gets
//! both on every request, and then every read path — each server function
//! a read-only member may call, on each object the run made, every page
//! and file route, the CLI's `--json`, and the share link's page, files
//! and API for an anonymous visitor — is scanned for the secrets' bytes.

use crate::common::{self, assay, json};
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use std::sync::{Arc, Mutex};

/// Tokens long enough that their redaction shows their last four characters.
const WEB_TOKEN: &str = "CANARYWEB-5b2d40687f3a9c1e";
const CLI_TOKEN: &str = "CANARYCLI-0d9e8f7a6b5c4d3e";
const BODY_KEY: &str = "CANARYBODY-1a2b3c4d5e6f7a8b";
/// A key in the service's address (`?api_key=…`), sent by the web path.
const URL_KEY: &str = "CANARYURL-9e8d7c6b5a4f3e2d";
/// What no response may hold: each secret without its last four characters.
const SECRETS: [&str; 4] =
    ["CANARYWEB-5b2d40687f3a", "CANARYCLI-0d9e8f7a6b5c", "CANARYBODY-1a2b3c4d5e6f", "CANARYURL-9e8d7c6b5a4f"];

async fn send(router: &axum::Router, req: Request<Body>) -> (StatusCode, String) {
    let (status, _, body) = common::send_to(router, req).await;
    (status, body)
}

fn post(path: &str, form: &str, cookie: &str) -> Request<Body> {
    Request::post(path)
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, format!("assay_session={cookie}"))
        .body(Body::from(form.to_string()))
        .unwrap()
}

fn get(path: &str, cookie: &str) -> Request<Body> {
    Request::get(path)
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::COOKIE, format!("assay_session={cookie}"))
        .body(Body::empty())
        .unwrap()
}

fn assert_clean(what: &str, body: &str) {
    for s in SECRETS {
        assert!(!body.contains(s), "{what} holds a secret ({s}…): {}", &body[..body.len().min(400)]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_methods_secrets_reach_no_reader_anywhere() {
    use leptos::server_fn::ServerFn;
    // The user's RAG service: answers only with the right token and key,
    // and records what it was sent.
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let recorded = seen.clone();
    let service = axum::Router::new().route(
        "/rag",
        axum::routing::post(
            move |uri: axum::http::Uri,
                  headers: axum::http::HeaderMap,
                  axum::Json(body): axum::Json<serde_json::Value>| {
                let recorded = recorded.clone();
                async move {
                    let auth =
                        headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
                    recorded.lock().unwrap().push((auth.clone(), body["key"].as_str().unwrap_or("").to_string()));
                    let query = uri.query().unwrap_or("");
                    let ok = ((auth == format!("Bearer {WEB_TOKEN}") && query == format!("api_key={URL_KEY}"))
                        || (auth == format!("Bearer {CLI_TOKEN}") && query.is_empty()))
                        && body["key"] == BODY_KEY;
                    if !ok {
                        return (StatusCode::UNAUTHORIZED, axum::Json(serde_json::json!({"error": "who are you?"})));
                    }
                    let q = body["q"].as_str().unwrap_or("");
                    (StatusCode::OK, axum::Json(serde_json::json!({"answer": format!("The service says: {q}")})))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/rag", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, service).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "secrets").await;
    let set = common::sample_with_answers(&db, [2, 1, 1]).await;
    let env = [("ASSAY_PASSWORD", "correct horse battery")];
    json(&assay(&db, &["--json", "user", "create", "owner"], &env).await);
    let session = |name: &'static str| {
        let db = db.clone();
        async move {
            json(&assay(&db, &["--json", "user", "session", name], &[]).await)["token"].as_str().unwrap().to_string()
        }
    };
    let owner = session("owner").await;
    let pool = db.open().await;
    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let llm = engine::llm::settings::LlmSettings { allow_private_urls: true, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, llm, options);
    // The owner makes an editor and a reader of project A.
    for name in ["ed", "reader"] {
        let form = format!("name={name}&password=correct+horse+battery");
        let (status, body) = send(&router, post(app::api::CreateMember::PATH, &form, &owner)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    json(&assay(&db, &["--json", "user", "grant", "ed", "A", "--access", "edit"], &[]).await);
    json(&assay(&db, &["--json", "user", "grant", "reader", "A", "--access", "read"], &[]).await);
    let (ed, reader) = (session("ed").await, session("reader").await);

    // Through the browser's server function: the editor, no name given.
    let params = serde_json::json!({
        "url": format!("{url}?api_key={URL_KEY}"), "bearer_token": WEB_TOKEN, "answer": "/answer",
        "body": {"q": "{{question}}", "key": BODY_KEY},
    });
    let form = format!(
        "question_set_id={set}&req[name]=http&req[params]={}&name=&req[target_words]=",
        percent_encoding::utf8_percent_encode(&params.to_string(), percent_encoding::NON_ALPHANUMERIC)
    );
    let (status, body) = send(&router, post(app::api::StartAnswers::PATH, &form, &ed)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_clean("start_answers' reply", &body);
    let web_job: serde_json::Value = serde_json::from_str(&body).unwrap();
    let web_job = web_job["id"].as_i64().unwrap();
    for _ in 0..600 {
        if !app::ssr::store::jobs::get_job(&pool, web_job).await.unwrap().status.is_active() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let job = app::ssr::store::jobs::get_job(&pool, web_job).await.unwrap();
    assert_eq!((job.status, job.done, job.failed), (app::model::JobStatus::Done, job.total, 0), "{:?}", job.error);

    // Settings copied from what a reader is shown carry redactions: refused
    // with the place named, no job and no answer set made, nothing sent.
    let copied = serde_json::json!({
        "url": url, "bearer_token": "••••NARY", "answer": "/answer", "body": {"q": "{{question}}", "key": BODY_KEY},
    });
    let form = format!(
        "question_set_id={set}&req[name]=http&req[params]={}&name=&req[target_words]=",
        percent_encoding::utf8_percent_encode(&copied.to_string(), percent_encoding::NON_ALPHANUMERIC)
    );
    let (status, body) = send(&router, post(app::api::StartAnswers::PATH, &form, &ed)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("/bearer_token") && body.contains("redaction"), "{body}");

    // Through the CLI, a token in a parameter of its own.
    let cli_params = [
        format!("url=\"{url}\""),
        format!("bearer_token=\"{CLI_TOKEN}\""),
        format!(r#"body={{"q": "{{{{question}}}}", "key": "{BODY_KEY}"}}"#),
    ];
    let mut args = vec!["--json", "answers", "generate", "A", "--set", &set, "--method", "http"];
    for p in &cli_params {
        args.extend(["--param", p]);
    }
    let out = assay(&db, &args, &[]).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_clean("the CLI's --json", &stdout);
    let made = json(&out);
    assert_eq!(made["status"], "done", "{made}");
    // The service got the secrets with every request.
    {
        let seen = seen.lock().unwrap();
        assert!(seen.len() >= 2 * made["count"].as_i64().unwrap() as usize, "{} requests", seen.len());
        assert!(seen.iter().all(|(auth, key)| auth.starts_with("Bearer CANARY") && key == BODY_KEY));
    }

    // Both answer sets judged, and the evaluation shared.
    let sets = app::ssr::store::answers::list_sets(&pool, 1).await.unwrap();
    let http: Vec<String> = sets.iter().filter(|s| s.method == "http").map(|s| s.id.to_string()).collect();
    assert_eq!(http.len(), 2);
    for s in sets.iter().filter(|s| s.method == "http") {
        assert_eq!(s.name.trim(), s.name);
        assert!(!s.name.contains("••••") && !s.name.contains("bearer"), "a secret is no part of a name: {}", s.name);
    }
    let methods = http.join(",");
    let run =
        ["--json", "eval", "run", "A", "--set", &set, "--methods", &methods, "--judge", "offline", "--trials", "1"];
    let eval = json(&assay(&db, &run, &[]).await)["evaluation_id"].as_i64().unwrap();
    let share =
        json(&assay(&db, &["--json", "share", "create", "A", "--page", &format!("evaluation:{eval}")], &[]).await);
    let token = share["token"].as_str().unwrap().to_string();
    for (what, args) in [
        ("answers list", vec!["--json", "answers", "list", "A"]),
        ("job list", vec!["--json", "job", "list", "A"]),
        ("job show", vec!["--json", "job", "show", &web_job.to_string()]),
    ] {
        let out = assay(&db, &args, &[]).await;
        assert_clean(what, &String::from_utf8_lossy(&out.stdout));
    }

    // Every server function a reader may call, on each object the run made
    // (each id in turn in every argument that names one).
    let jobs: Vec<i64> = common::texts(&pool, "SELECT CAST(id AS TEXT) FROM jobs ORDER BY id", &[])
        .await
        .iter()
        .map(|i| i.parse().unwrap())
        .collect();
    let mut ids: Vec<i64> = jobs.clone();
    ids.extend(http.iter().map(|s| s.parse::<i64>().unwrap()));
    ids.push(eval);
    ids.sort_unstable();
    ids.dedup();
    let mut scanned = 0;
    for (path, _) in leptos::server_fn::axum::server_fn_paths() {
        if path.starts_with("/api/auth/") || path.starts_with("/api/study/") {
            continue;
        }
        for id in &ids {
            let form = format!(
                "id={id}&project_id=1&set_id={set}&question_set_id={set}&job_id={id}&answer_set_id={id}&compare={id}\
                 &evaluation_id={id}&page=1&limit=50&question_id=1&topic=job&answer_sets={methods}&pairs=&protocol=both\
                 &trials=1&repeats=1&tolerance=10&adjustments=3&judge=offline&position_bias=0&length_bias=0&noise=0&name=\
                 &req[protocol]=both&req[trials]=1&req[repeats]=1&req[judge]=offline&req[noise]=0"
            );
            let (_, body) = send(&router, post(path, &form, &reader)).await;
            assert_clean(&format!("{path} (id {id}) for the reader"), &body);
            scanned += 1;
        }
    }
    // The scan reads the places the secrets were: the reader sees the
    // sets' parameters, with the redactions where the secrets stood.
    let (status, body) = send(&router, post(app::api::ListAnswerSets::PATH, "project_id=1", &reader)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("••••9c1e"), "the web set's token, redacted: {body}");
    assert!(body.contains("••••7a8b"), "the body's key, redacted: {body}");
    // The pages and files of the project, for the reader and the owner.
    let mut pages = vec![
        "/projects/1/answers".to_string(),
        "/projects/1/jobs".to_string(),
        "/projects/1/evaluations".to_string(),
        format!("/projects/1/evaluations/{eval}"),
        "/api/projects/1/answers/cost.svg".to_string(),
    ];
    for j in &jobs {
        pages.push(format!("/projects/1/jobs/{j}"));
    }
    for s in &http {
        pages.push(format!("/projects/1/answers?set={s}"));
        pages.push(format!("/api/projects/1/answers/{s}/export"));
    }
    for file in ["report.json", "report.html", "tables/pairs.csv", "tables/estimates.csv", "tables/cost.csv"] {
        pages.push(format!("/api/evaluations/{eval}/{file}"));
    }
    for cookie in [&reader, &owner] {
        for p in &pages {
            let (status, body) = send(&router, get(p, cookie)).await;
            assert!(status.is_success() || status == StatusCode::NOT_FOUND, "{p}: {status}");
            assert_clean(p, &body);
            scanned += 1;
        }
    }
    // The share link, for an anonymous visitor: its page, files and API.
    let mut shared = vec![format!("/share/{token}")];
    for file in ["report.json", "report.html", "tables/pairs.csv", "tables/cost.csv"] {
        shared.push(format!("/api/share/{token}/{file}"));
    }
    for p in &shared {
        let (status, body) = send(&router, get(p, "")).await;
        assert!(status.is_success() || status == StatusCode::NOT_FOUND, "{p}: {status}");
        assert_clean(p, &body);
        scanned += 1;
    }
    for (path, _) in leptos::server_fn::axum::server_fn_paths() {
        if !path.starts_with("/api/share/") {
            continue;
        }
        let form = format!("token={token}&pair=0&question_id=1&page=1&a={}&b={}", http[0], http[1]);
        let (_, body) = send(&router, post(path, &form, "")).await;
        assert_clean(path, &body);
        scanned += 1;
    }
    // The secrets are in the database once each, in the jobs' own column.
    let stored: Vec<String> = common::texts(&pool, "SELECT secrets FROM jobs WHERE secrets IS NOT NULL", &[]).await;
    assert_eq!(stored.len(), 2, "the two http jobs hold their secrets apart");
    let params: Vec<String> = common::texts(&pool, "SELECT parameters FROM jobs", &[]).await;
    params.iter().for_each(|p| assert_clean("jobs.parameters", p));
    println!("{scanned} responses scanned: no secret in any");
}

/// A database an earlier version wrote (before `jobs.secrets`) holds a
/// method's token in its job's and answer set's parameters, the set's
/// generated name, an experiment's manifest, and errors that named the
/// address: opening it moves each secret apart, as a new run stores it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_databases_secrets_are_moved_apart_when_it_opens() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "old-secrets").await;
    let pool = db.open().await;
    let address = format!("http://127.0.0.1:9/rag?api_key={URL_KEY}");
    let raw = serde_json::json!({
        "url": address, "bearer_token": WEB_TOKEN, "answer": "/answer",
        "body": {"q": "{{question}}", "key": BODY_KEY},
    });
    let job_params = serde_json::json!({"set_id": 1, "method": "http", "params": raw, "no_cache": false});
    let set_params = serde_json::json!({"params": raw, "target_words": null});
    let name = format!("http (url={address}, bearer_token={WEB_TOKEN})");
    let error = format!("error sending request for url ({address})");
    let manifest =
        format!("[project]\nname = \"A\"\n\n[[answers]]\nmethod = \"http\"\nbearer_token = \"{CLI_TOKEN}\"\n");
    let statements: Vec<(&str, Vec<String>)> = vec![
        ("INSERT INTO projects (name) VALUES ('A')", vec![]),
        ("INSERT INTO question_sets (project_id, kind, name) VALUES (1, 'imported', 'q')", vec![]),
        (
            "INSERT INTO jobs (project_id, kind, parameters, status, error) VALUES (1, 'answers', $1, 'failed', $2)",
            vec![job_params.to_string(), error.clone()],
        ),
        (
            "INSERT INTO job_items (job_id, key, status, error, tokens, cost_usd) VALUES (1, 'q1', 'failed', $1, 0, 0)",
            vec![error.clone()],
        ),
        (
            "INSERT INTO answer_sets (project_id, question_set_id, job_id, name, method, parameters)
             VALUES (1, 1, 1, $1, 'http', $2)",
            vec![name.clone(), set_params.to_string()],
        ),
        (
            "INSERT INTO experiments (project_id, name, manifest, plan, llm, offline, status, error)
             VALUES (1, 'old run', $1, '{}', '{}', TRUE, 'failed', $2)",
            vec![manifest.clone(), format!("answers failed: {error}")],
        ),
    ];
    for (sql, binds) in &statements {
        app::on_db!(&pool, |d| {
            let mut q = sqlx::query(sql);
            for b in binds {
                q = q.bind(b);
            }
            q.execute(d).await.unwrap();
        });
    }
    // As it was: the secrets in plain sight (the scan below can see them).
    let everything =
        "SELECT parameters FROM jobs UNION ALL SELECT error FROM jobs UNION ALL SELECT error FROM job_items \
                      UNION ALL SELECT name FROM answer_sets UNION ALL SELECT parameters FROM answer_sets \
                      UNION ALL SELECT manifest FROM experiments UNION ALL SELECT error FROM experiments";
    let before = common::texts(&pool, everything, &[]).await.join("\n");
    for s in SECRETS {
        assert!(before.contains(s), "the old database holds {s}…");
    }
    drop(pool);

    // Opened by this version.
    let pool = db.open().await;
    let after = common::texts(&pool, everything, &[]).await;
    after.iter().for_each(|t| assert_clean("a reader's column after the backfill", t));
    let set = app::ssr::store::answers::get_set(&pool, 1).await.unwrap();
    assert_eq!(set.name, "http (url=http://127.0.0.1:9/rag?api_key=••••3e2d, bearer_token=••••9c1e)");
    let jobs = app::ssr::store::jobs::list_jobs(&pool, 1).await.unwrap();
    assert_eq!(
        jobs[0].error.as_deref(),
        Some("error sending request for url (http://127.0.0.1:9/rag?api_key=••••3e2d)")
    );
    // The runner gets the very settings back.
    let stored = app::ssr::store::jobs::secrets(&pool, 1).await.unwrap();
    let secrets = engine::secret::Secrets::from_stored(stored.as_deref()).unwrap();
    let mut shown: serde_json::Value =
        serde_json::from_str(&common::texts(&pool, "SELECT parameters FROM jobs", &[]).await[0]).unwrap();
    secrets.apply(&mut shown);
    assert_eq!(shown, job_params);
    // Once is enough: the next open finds nothing to move.
    let again = app::ssr::store::backfill::secrets(&pool).await.unwrap();
    assert_eq!(again, app::ssr::store::backfill::Backfilled::default());
}

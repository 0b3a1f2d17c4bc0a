//! Storage that cannot lie: a full disk, made deterministic with SQLite's
//! `PRAGMA max_page_count`, through the real upload route over a real
//! SQLite file. Uploads are answered "added" or refused (503, "disk is
//! full"); no pooled connection keeps a transaction open after a failed
//! commit; once space is freed the next uploads succeed; and after a clean
//! shutdown and a reopen every acknowledged document is there and no
//! refused one is.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

const BOUNDARY: &str = "assay-storage-boundary";

/// Text of about 12 KB that compresses poorly and differs per `seed`.
fn text(seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = format!("Document {seed}.\n");
    while out.len() < 12_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let word: String = (0..3 + (x % 6)).map(|i| (b'a' + ((x >> (i * 5)) % 26) as u8) as char).collect();
        out.push_str(&word);
        out.push(if x % 11 == 0 { '\n' } else { ' ' });
    }
    out
}

async fn upload(router: &axum::Router, project: i64, i: u64) -> (StatusCode, Value) {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"doc_{i}.txt\"\r\nContent-Type: text/plain\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(text(i).as_bytes());
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    let req = Request::post(format!("/api/projects/{project}/upload"))
        .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
        .body(Body::from(body))
        .unwrap();
    let resp = router.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("full.db");
    // The project, and ballast that fills most of the room.
    let (project, ballast, pages) = {
        let pool = app::ssr::store::open(&db).await.unwrap();
        let project =
            app::ssr::store::projects::create_project(&pool, "P", &Default::default()).await.unwrap().summary.id;
        let ballast =
            app::ssr::store::projects::create_project(&pool, "ballast", &Default::default()).await.unwrap().summary.id;
        let files: Vec<(String, Vec<u8>)> = (1000..1030).map(|i| (format!("b{i}.txt"), text(i).into_bytes())).collect();
        app::ssr::ingest::add_files(&pool, ballast, &files, &Default::default()).await.unwrap();
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(pool.sqlite().unwrap()).await.unwrap();
        pool.close().await;
        (project, ballast, pages as u64)
    };
    // Room for a few more documents, then the disk is "full".
    let pool = app::ssr::store::open_with(&db, Some(pages + 60)).await.unwrap();
    let config = app::ssr::state::Config { require_login: false, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);

    let (mut acknowledged, mut refused) = (Vec::new(), Vec::new());
    let mut i = 0;
    while refused.len() < 6 {
        i += 1;
        assert!(i < 200, "the disk never filled");
        let (status, body) = upload(&router, project, i).await;
        match status {
            StatusCode::OK => {
                assert_eq!(body["added"], 1, "{body}");
                acknowledged.push(i);
            }
            StatusCode::SERVICE_UNAVAILABLE => {
                assert!(body["error"].as_str().unwrap_or("").contains("disk is full"), "{body}");
                refused.push(i);
            }
            other => panic!("upload {i}: {other} {body}"),
        }
        // Every pooled connection sees exactly what was acknowledged: none
        // is left inside a transaction holding rows nobody committed.
        for _ in 0..10 {
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM documents WHERE project_id = ?")
                .bind(project)
                .fetch_one(pool.sqlite().unwrap())
                .await
                .unwrap();
            assert_eq!(n as usize, acknowledged.len(), "after upload {i}");
        }
    }
    assert!(!acknowledged.is_empty(), "nothing fitted before the disk was full");

    // Space is freed: the next uploads all succeed.
    app::ssr::store::projects::delete_project(&pool, ballast).await.unwrap();
    for _ in 0..6 {
        i += 1;
        let (status, body) = upload(&router, project, i).await;
        assert_eq!(status, StatusCode::OK, "upload {i} after space was freed: {body}");
        acknowledged.push(i);
    }
    drop(router);
    pool.close().await;

    // After a clean shutdown: exactly the acknowledged documents.
    let pool = app::ssr::store::open(&db).await.unwrap();
    let titles: Vec<String> = sqlx::query_scalar("SELECT title FROM documents WHERE project_id = ? ORDER BY id")
        .bind(project)
        .fetch_all(pool.sqlite().unwrap())
        .await
        .unwrap();
    let expected: Vec<String> = acknowledged.iter().map(|i| format!("doc {i}")).collect();
    assert_eq!(titles, expected);
    for r in &refused {
        assert!(!titles.contains(&format!("doc {r}")));
    }
    println!(
        "disk-full: {} acknowledged, all present after restart; {} refused, none present",
        acknowledged.len(),
        refused.len()
    );
}

/// Two processes' worth of writers on one file (two pools, as the server
/// and a CLI job would be): 800 job items recorded by 16 tasks and 20
/// uploads, all at once. Every write transaction takes the write lock
/// first (`BEGIN IMMEDIATE`) and waits for it (`busy_timeout`), so none
/// fails with "database is locked", and every counter adds up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_from_two_pools_never_see_database_is_locked() {
    use engine::jobs::{ItemOutcome, JobStore};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.db");
    let server = app::ssr::store::open(&db).await.unwrap();
    let cli = app::ssr::store::open(&db).await.unwrap();
    let project =
        app::ssr::store::projects::create_project(&server, "P", &Default::default()).await.unwrap().summary.id;
    let jobs = [
        app::ssr::store::jobs::create_job(
            &server,
            project,
            app::model::JobKind::Summaries,
            &serde_json::json!({}),
            None,
            400,
        )
        .await
        .unwrap(),
        app::ssr::store::jobs::create_job(
            &cli,
            project,
            app::model::JobKind::Summaries,
            &serde_json::json!({}),
            None,
            400,
        )
        .await
        .unwrap(),
    ];
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..16u32 {
        let pool = if t % 2 == 0 { server.clone() } else { cli.clone() };
        let job = jobs[(t % 2) as usize];
        tasks.spawn(async move {
            let store = app::ssr::store::jobs::SqliteJobStore::new(pool);
            for i in 0..50 {
                let outcome = ItemOutcome::Done { result: "ok".into(), tokens: 3, cost_usd: 0.0 };
                store.record(job, &format!("t{t}-i{i}"), &outcome).await.map_err(|e| format!("record: {e}"))?;
            }
            Ok::<(), String>(())
        });
    }
    for t in 0..2u64 {
        let pool = if t == 0 { server.clone() } else { cli.clone() };
        tasks.spawn(async move {
            for i in 0..10 {
                let files = vec![(format!("d{t}_{i}.txt"), text(100 + t * 10 + i).into_bytes())];
                app::ssr::ingest::add_files(&pool, project, &files, &Default::default())
                    .await
                    .map_err(|e| format!("upload: {e}"))?;
            }
            Ok(())
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap().unwrap();
    }
    for job in jobs {
        let (done, tokens): (i64, i64) = sqlx::query_as("SELECT done, tokens FROM jobs WHERE id = ?")
            .bind(job)
            .fetch_one(server.sqlite().unwrap())
            .await
            .unwrap();
        assert_eq!((done, tokens), (400, 1200));
    }
    let docs: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM documents").fetch_one(cli.sqlite().unwrap()).await.unwrap();
    assert_eq!(docs, 20);
}

/// A closed set's name a row stores that Assay does not know (a newer
/// Assay's, or a hand edit) is an error naming the table, the row and the
/// value — read through the same store functions the pages use — never
/// some default.
#[tokio::test]
async fn an_unknown_stored_name_fails_naming_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = super::common::test_db(dir.path(), "names").await;
    let set: i64 = super::common::sample_with_answers(&db, [2, 1, 0]).await.parse().unwrap();
    let pool = db.open().await;
    use super::common::{execute, scalar};
    use app::ssr::store;
    let refused = |e: app::error::AppError, table: &str, id: i64, value: &str| {
        let text = e.to_string();
        assert!(text.contains(&format!("{table} row {id}")) && text.contains(&format!("\"{value}\"")), "{text}");
    };

    // A job: its kind and its status.
    let job = scalar(&pool, "SELECT MIN(id) FROM jobs", &[]).await;
    let kind = store::jobs::get_job(&pool, job).await.unwrap().kind;
    execute(&pool, "UPDATE jobs SET kind = 'grpah' WHERE id = $1", &[job]).await;
    refused(store::jobs::get_job(&pool, job).await.unwrap_err(), "jobs", job, "grpah");
    let restore = format!("UPDATE jobs SET kind = '{kind}', status = 'paused' WHERE id = $1");
    execute(&pool, &restore, &[job]).await;
    refused(store::jobs::get_job(&pool, job).await.unwrap_err(), "jobs", job, "paused");

    // A question set's kind.
    assert_eq!(store::questions::get_set(&pool, set).await.unwrap().kind, types::QuestionSetKind::Graph);
    execute(&pool, "UPDATE question_sets SET kind = 'handmade' WHERE id = $1", &[set]).await;
    refused(store::questions::get_set(&pool, set).await.unwrap_err(), "question_sets", set, "handmade");
    execute(&pool, "UPDATE question_sets SET kind = 'graph' WHERE id = $1", &[set]).await;

    // A share link's page: its holder gets the error, not another page.
    let (share, token) = app::ssr::shares::create(&pool, types::ShareKind::Questions, set, None).await.unwrap();
    assert_eq!(app::ssr::shares::open(&pool, &token).await.unwrap(), (types::ShareKind::Questions, set));
    execute(&pool, "UPDATE shares SET page_kind = 'dashboard' WHERE id = $1", &[share]).await;
    refused(app::ssr::shares::open(&pool, &token).await.unwrap_err(), "shares", share, "dashboard");

    // An account's role: the session that would have been the owner's is refused.
    let owner = app::ssr::auth::create_user(&pool, "owner", "correct horse battery", types::Role::Owner).await.unwrap();
    let session = app::ssr::auth::new_session(&pool, owner).await.unwrap();
    let role = app::ssr::auth::session_user(&pool, &session).await.unwrap().unwrap().role;
    assert_eq!(role, types::Role::Owner);
    execute(&pool, "UPDATE users SET role = 'admin' WHERE id = $1", &[owner]).await;
    refused(app::ssr::auth::session_user(&pool, &session).await.unwrap_err(), "users", owner, "admin");
    refused(store::access::users(&pool).await.unwrap_err(), "users", owner, "admin");
}

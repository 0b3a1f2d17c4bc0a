//! The web server's routes, driven through the real router (`oneshot`)
//! over a real SQLite file: pages render on the server with the hydration
//! scripts, and the multipart upload route stores, refuses and limits.

use crate::common;
use app::ssr::store::Db;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

struct Harness {
    _dir: tempfile::TempDir,
    _db: common::TestDb,
    pool: Db,
    router: axum::Router,
}

async fn harness(max_upload_bytes: u64) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "http").await;
    let pool = db.open().await;
    let config = app::ssr::state::Config {
        max_upload_bytes,
        import: engine::corpus::ImportLimits::new(max_upload_bytes, 1000),
        llm_base: Default::default(),
        require_login: false,
        secure_cookies: false,
        ..Default::default()
    };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);
    Harness { _dir: dir, _db: db, pool, router }
}

const BOUNDARY: &str = "assay-test-boundary-7f3a";

fn multipart(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, data) in files {
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
        );
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn send(router: &axum::Router, req: Request<Body>) -> (StatusCode, Vec<u8>) {
    let resp = router.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    (status, resp.into_body().collect().await.unwrap().to_bytes().to_vec())
}

async fn upload(h: &Harness, project: i64, files: &[(&str, &[u8])]) -> (StatusCode, Value) {
    let req = Request::post(format!("/api/projects/{project}/upload"))
        .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
        .body(Body::from(multipart(files)))
        .unwrap();
    let (status, body) = send(&h.router, req).await;
    (status, serde_json::from_slice(&body).unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&body))))
}

async fn project(h: &Harness, name: &str) -> i64 {
    app::ssr::store::projects::create_project(&h.pool, name, &Default::default()).await.unwrap().summary.id
}

#[tokio::test]
async fn home_page_is_server_rendered_with_hydration_scripts() {
    let h = harness(1 << 20).await;
    project(&h, "Rendered <Project>").await;
    let (status, body) = send(&h.router, Request::get("/").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let html = String::from_utf8(body).unwrap();
    assert!(html.contains("<h1>Projects</h1>"), "{html}");
    assert!(html.contains("/pkg/assay_bg.wasm"), "the page loads the WASM bundle");
    assert!(html.contains("Rendered &lt;Project&gt;"), "names are escaped, never markup");
    let (status, _) = send(&h.router, Request::get("/no/such/page").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A static file's response carries none of a page's headers, whatever
/// reactive owner the worker thread holds as current when it is served.
/// (leptos_axum's `file_and_error_handler` served files inside
/// `Owner::new()`, a child of the thread's current owner, and applied the
/// `ResponseOptions` it found there: a page still rendering on the same
/// thread lost its Content-Security-Policy, or a login's Set-Cookie, to the
/// file — seen as a shared page served under the no-script policy.)
#[tokio::test]
async fn a_static_file_never_takes_the_headers_of_a_page_rendering_beside_it() {
    use axum::http::header;
    use leptos::prelude::{provide_context, Owner};
    let h = harness(1 << 20).await;
    std::fs::write(h._dir.path().join("favicon.svg"), "<svg xmlns=\"http://www.w3.org/2000/svg\"/>").unwrap();
    // A page's owner, current on this (the test's only) thread, with the
    // headers it means to send.
    let page = Owner::new_root(None);
    let options = leptos_axum::ResponseOptions::default();
    page.with(|| provide_context(options.clone()));
    options.insert_header(header::SET_COOKIE, "assay_session=the-owners-session".parse().unwrap());
    options.insert_header(header::CONTENT_SECURITY_POLICY, "default-src 'self'".parse().unwrap());
    page.set();
    let resp = h.router.clone().oneshot(Request::get("/favicon.svg").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get(header::SET_COOKIE).is_none(), "the page's cookie went out with the file");
    let csp = resp.headers().get(header::CONTENT_SECURITY_POLICY).unwrap().to_str().unwrap().to_string();
    assert_eq!(csp, app::ssr::csp::OTHER, "a file gets the policy under which nothing runs");
    // The page keeps its headers for its own response.
    let kept = options.0.read().unwrap().headers.clone();
    assert_eq!(kept.get(header::SET_COOKIE).unwrap(), "assay_session=the-owners-session");
    assert_eq!(kept.get(header::CONTENT_SECURITY_POLICY).unwrap(), "default-src 'self'");
    // An address nothing serves: the app's page, 404, with a page's policy.
    let resp = h.router.clone().oneshot(Request::get("/no/such/file.txt").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert!(resp.headers().get(header::SET_COOKIE).is_none());
    let csp = resp.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_string();
    let nonce = csp.split("'nonce-").nth(1).and_then(|r| r.split('\'').next()).expect("a page's nonce").to_string();
    let body = String::from_utf8(resp.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert!(body.contains("Page not found"));
    assert_eq!(body.matches(&format!("nonce=\"{nonce}\"")).count(), body.matches("<script").count(), "{body}");
    page.unset();
}

#[tokio::test]
async fn upload_stores_good_files_and_names_bad_ones() {
    let h = harness(1 << 20).await;
    let id = project(&h, "Up").await;
    let (status, report) =
        upload(&h, id, &[("a.txt", b"The Queen of Hearts made tarts."), ("b.jsonl", b"{\"context\": 1}\n")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(report["added"], 1);
    assert_eq!(report["documents"], 1);
    assert_eq!(report["skipped"][0]["file"], "b.jsonl");
    assert_eq!(report["skipped"][0]["reason"], "malformed line 1: \"context\" must be a string, found a number");
    let docs = app::ssr::store::documents::list_documents(&h.pool, id, 1).await.unwrap().documents;
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].title, "a");
    assert_eq!(docs[0].chunks, 1);
}

#[tokio::test]
async fn an_upload_over_the_limit_is_refused_whole_and_stores_nothing() {
    let h = harness(64 * 1024).await;
    let id = project(&h, "Limits").await;
    let big = vec![b'x'; 200 * 1024];
    let (status, body) = upload(&h, id, &[("small.txt", b"fits"), ("big.txt", &big)]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        body["error"],
        "The upload is larger than the limit of 64.0 KB per upload; upload the files in smaller groups."
    );
    assert_eq!(app::ssr::store::documents::list_documents(&h.pool, id, 1).await.unwrap().total, 0);
}

#[tokio::test]
async fn upload_errors_are_json_with_a_message() {
    let h = harness(1 << 20).await;
    let (status, body) = upload(&h, 999, &[("a.txt", b"text")]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "no project with id 999");
    let id = project(&h, "Empty").await;
    let (status, body) = upload(&h, id, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "The upload held no files.");
}

#[tokio::test]
async fn deleting_a_project_deletes_everything_it_owns() {
    let h = harness(1 << 20).await;
    let keep = project(&h, "Keep").await;
    let gone = project(&h, "Gone").await;
    upload(&h, keep, &[("k.txt", b"kept text")]).await;
    upload(&h, gone, &[("g1.txt", b"gone one"), ("g2.txt", b"gone two")]).await;
    app::ssr::store::projects::delete_project(&h.pool, gone).await.unwrap();
    let counts: (i64, i64) = (
        common::scalar(&h.pool, "SELECT COUNT(*) FROM documents", &[]).await,
        common::scalar(&h.pool, "SELECT COUNT(*) FROM chunks", &[]).await,
    );
    assert_eq!(counts, (1, 1), "only Keep's document and chunk remain");
}

#[tokio::test]
async fn rechunking_replaces_every_chunk_in_one_go() {
    let h = harness(4 << 20).await;
    let id = project(&h, "Rechunk").await;
    let alice = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/alice_in_wonderland.txt"),
    )
    .unwrap();
    let (_, report) = upload(&h, id, &[("alice.txt", &alice)]).await;
    assert_eq!(report["chunks"], 39);
    let settings = engine::chunk::ChunkSettings {
        chunk_tokens: 512,
        chunk_overlap: 50,
        tokenizer: engine::chunk::Tokenizer::Cl100kBase,
    };
    let view = app::ssr::ingest::set_chunk_settings(&h.pool, id, settings).await.unwrap();
    assert_eq!(view.chunking.chunk_tokens, 512);
    assert!(view.summary.chunks > 72, "36,780 tokens in chunks of at most 512: {}", view.summary.chunks);
    let max: i64 = common::scalar(&h.pool, "SELECT MAX(tokens) FROM chunks WHERE project_id = $1", &[id]).await;
    assert!(max <= 512);
    let bad = engine::chunk::ChunkSettings { chunk_tokens: 8, ..settings };
    assert!(matches!(
        app::ssr::ingest::set_chunk_settings(&h.pool, id, bad).await,
        Err(app::error::AppError::Invalid(_))
    ));
}

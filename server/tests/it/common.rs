//! Helpers shared by the server integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `assay ARGS --db DB` with the LLM environment cleared, then `env` set:
/// tests never pick up the developer's own provider or key. `db`: an
/// SQLite file, or a PostgreSQL URL ([`pg_database`]).
pub fn assay_command(db: &(impl AsRef<std::ffi::OsStr> + ?Sized), args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assay"));
    cmd.args(args).arg("--db").arg(db);
    for var in [
        "ASSAY_LLM_PROVIDER",
        "ASSAY_LLM_BASE_URL",
        "ASSAY_LLM_MODEL",
        "ASSAY_LLM_API_KEY",
        "OPENAI_API_KEY",
        "ASSAY_LLM_PRICE",
        "ASSAY_LLM_CONCURRENCY",
        "ASSAY_LLM_TIMEOUT",
        "ASSAY_LLM_CONTEXT",
        "ASSAY_LLM_MAX_TOKENS",
        "ASSAY_LLM_JSON_MODE",
        "ASSAY_LLM_STREAM",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs it off the async runtime's threads, so a mock server in the same
/// test keeps answering.
pub async fn assay(db: &(impl AsRef<std::ffi::OsStr> + ?Sized), args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = assay_command(db, args, env);
    tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap()
}

/// The PostgreSQL server the tests use (every development machine and CI
/// run has one: 127.0.0.1:5432, trust authentication), as an administrator.
pub fn pg_admin_url() -> String {
    std::env::var("ASSAY_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A fresh, empty PostgreSQL database for one test, dropped with the value.
pub struct PgDatabase {
    pub url: String,
    name: String,
}

pub async fn pg_database() -> PgDatabase {
    use sqlx::Connection;
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("assay_test_{}_{n}", std::process::id());
    let admin = pg_admin_url();
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("the tests need PostgreSQL at {admin} (ASSAY_TEST_POSTGRES): {e}"));
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut conn).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await.unwrap();
    let mut url = url::Url::parse(&admin).unwrap();
    url.set_path(&name);
    PgDatabase { url: url.to_string(), name }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let (admin, name) = (pg_admin_url(), self.name.clone());
        // Its own thread and runtime: Drop may run inside a test's runtime.
        let _ = std::thread::spawn(move || {
            use sqlx::Connection;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                    let _ =
                        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut conn).await;
                }
            });
        })
        .join();
    }
}

/// Which database the tests that can run on either use: SQLite, or
/// PostgreSQL when `ASSAY_TEST_DB=postgres` (scripts/test's second pass).
pub fn on_postgres() -> bool {
    std::env::var("ASSAY_TEST_DB").is_ok_and(|v| v == "postgres")
}

/// A test's database: the file `dir/NAME.db`, or a fresh PostgreSQL
/// database ([`on_postgres`]). `--db` takes it as it is (`AsRef<OsStr>`).
#[derive(Clone)]
pub enum TestDb {
    Sqlite(PathBuf),
    Postgres(std::sync::Arc<PgDatabase>, std::ffi::OsString),
}

pub async fn test_db(dir: &Path, name: &str) -> TestDb {
    if on_postgres() {
        let pg = pg_database().await;
        let url = pg.url.clone().into();
        TestDb::Postgres(std::sync::Arc::new(pg), url)
    } else {
        TestDb::Sqlite(dir.join(format!("{name}.db")))
    }
}

impl TestDb {
    pub async fn open(&self) -> app::ssr::store::Db {
        match self {
            TestDb::Sqlite(path) => app::ssr::store::open(path).await.unwrap(),
            TestDb::Postgres(pg, _) => app::ssr::store::open_target(&pg.url).await.unwrap(),
        }
    }
}

impl AsRef<std::ffi::OsStr> for TestDb {
    fn as_ref(&self) -> &std::ffi::OsStr {
        match self {
            TestDb::Sqlite(path) => path.as_os_str(),
            TestDb::Postgres(_, url) => url,
        }
    }
}

/// One integer from the database: `sql` with `$1…` bound to `binds`.
pub async fn scalar(pool: &app::ssr::store::Db, sql: &str, binds: &[i64]) -> i64 {
    app::on_db!(pool, |db| {
        let mut q = sqlx::query_scalar::<_, i64>(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.fetch_one(db).await.unwrap()
    })
}

/// Runs a statement: `sql` with `$1…` bound to `binds`.
pub async fn execute(pool: &app::ssr::store::Db, sql: &str, binds: &[i64]) {
    app::on_db!(pool, |db| {
        let mut q = sqlx::query(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.execute(db).await.unwrap();
    })
}

/// Every row's text column: `sql` with `$1…` bound to `binds`.
pub async fn texts(pool: &app::ssr::store::Db, sql: &str, binds: &[i64]) -> Vec<String> {
    app::on_db!(pool, |db| {
        let mut q = sqlx::query_scalar::<_, String>(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.fetch_all(db).await.unwrap()
    })
}

/// Texts stored packed or not (`store::packed`): `sql` selects a text
/// column and its frame column, `$1…` bound to `binds`; each row's text.
pub async fn packed_texts(pool: &app::ssr::store::Db, sql: &str, binds: &[i64]) -> Vec<String> {
    let rows: Vec<(Option<String>, Option<Vec<u8>>)> = app::on_db!(pool, |db| {
        let mut q = sqlx::query_as::<_, (Option<String>, Option<Vec<u8>>)>(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.fetch_all(db).await.unwrap()
    });
    rows.into_iter()
        .map(|(text, frame)| app::ssr::store::packed::unpack(text, frame, "a row").unwrap().unwrap_or_default())
        .collect()
}

/// The prompts (messages' JSON) of the calls `filter` picks (a condition
/// on `c`, the call log; `$1…` bound to `binds`), in call order, wherever
/// and however each is stored.
pub async fn prompts(pool: &app::ssr::store::Db, filter: &str, binds: &[i64]) -> Vec<String> {
    let sql = format!(
        "SELECT COALESCE(NULLIF(c.messages, ''), m.messages), m.messages_z FROM llm_calls c
           LEFT JOIN llm_messages m ON m.hash = c.messages_hash WHERE {filter} ORDER BY c.id"
    );
    packed_texts(pool, &sql, binds).await
}

/// What a router answered a request: its status, headers and body (as
/// text); a request that takes a minute fails the test, naming itself.
pub async fn send_to(
    router: &axum::Router,
    req: axum::http::Request<axum::body::Body>,
) -> (axum::http::StatusCode, axum::http::HeaderMap, String) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let what = format!("{} {}", req.method(), req.uri());
    let answer = async {
        let resp = router.clone().oneshot(req).await.unwrap();
        let (status, headers) = (resp.status(), resp.headers().clone());
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        (status, headers, String::from_utf8_lossy(&bytes).into_owned())
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), answer)
        .await
        .unwrap_or_else(|_| panic!("{what} did not answer in 60 s"))
}

/// A GET of `path` with the session cookie `cookie`.
pub fn get_as(path: &str, cookie: &str) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::get(path)
        .header(axum::http::header::COOKIE, format!("assay_session={cookie}"))
        .body(axum::body::Body::empty())
        .unwrap()
}

/// A POST of the form `form` (a server function's arguments) with the
/// session cookie `cookie`.
pub fn post_as(path: &str, form: &str, cookie: &str) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::post(path)
        .header(axum::http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(axum::http::header::COOKIE, format!("assay_session={cookie}"))
        .body(axum::body::Body::from(form.to_string()))
        .unwrap()
}

/// `assay --json eval run A --set SET --methods METHODS EXTRA…`'s JSON:
/// an evaluation of project A's question set `set`.
pub async fn eval_run(
    db: &(impl AsRef<std::ffi::OsStr> + ?Sized),
    set: &str,
    methods: &str,
    extra: &[&str],
) -> serde_json::Value {
    let mut args = vec!["--json", "eval", "run", "A", "--set", set, "--methods", methods];
    args.extend_from_slice(extra);
    json(&assay(db, &args, &[]).await)
}

/// The JSON a successful `assay --json …` printed.
pub fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "failed ({:?}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Project "A": the sample corpus, its graph, graph questions (`levels`:
/// node, edge, subgraph counts) and BM25 and LightRAG answers to them; the
/// question set's id.
pub async fn sample_with_answers(db: &(impl AsRef<std::ffi::OsStr> + ?Sized), levels: [u32; 3]) -> String {
    json(&assay(db, &["--json", "project", "create", "A"], &[]).await);
    json(&assay(db, &["--json", "corpus", "add", "A", "--sample"], &[]).await);
    json(&assay(db, &["--json", "graph", "build", "A"], &[]).await);
    let [n, e, s] = levels.map(|x| x.to_string());
    let args = [
        "--json",
        "questions",
        "generate",
        "graph",
        "A",
        "--node",
        &n,
        "--edge",
        &e,
        "--subgraph",
        &s,
        "--min-hops",
        "10",
    ];
    let set = json(&assay(db, &args, &[]).await)["set_id"].to_string();
    for method in ["bm25", "lightrag"] {
        json(&assay(db, &["--json", "answers", "generate", "A", "--set", &set, "--method", method], &[]).await);
    }
    set
}

/// The server on 127.0.0.1:0 over the database (login required, so only
/// public links work without a session); its base URL.
pub async fn start_server(db: &TestDb, dir: &Path) -> String {
    let pool = db.open().await;
    let config = app::ssr::state::Config {
        max_upload_bytes: 1 << 20,
        import: engine::corpus::ImportLimits::new(1 << 20, 10),
        llm_base: Default::default(),
        require_login: true,
        secure_cookies: false,
        ..Default::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = server::web::leptos_options(dir, addr);
    let router = server::web::router(pool, config, Default::default(), options);
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

/// A server function call over HTTP; (status, JSON).
pub async fn call(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    form: &[(&str, String)],
) -> (u16, serde_json::Value) {
    let resp = client.post(format!("{base}/api/{path}")).form(form).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

/// Answers that say nothing ("No idea.") to every question of project A's
/// set `set`, imported as the answer set "blank": a method no judge finds
/// even with the others.
pub async fn blank_answers(db: &(impl AsRef<std::ffi::OsStr> + ?Sized), set: &str, dir: &Path) -> usize {
    let export = assay(db, &["questions", "export", "A", "--set", set], &[]).await;
    let lines: Vec<String> = String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let q: serde_json::Value = serde_json::from_str(l).unwrap();
            serde_json::json!({"question_id": q["id"], "answer": "No idea."}).to_string()
        })
        .collect();
    let file = dir.join("blank.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    json(
        &assay(db, &["--json", "answers", "import", "A", "--set", set, "--name", "blank", file.to_str().unwrap()], &[])
            .await,
    );
    lines.len()
}

/// Project "A": the sample corpus and a hierarchical question set (one
/// question per category at 2 and 4 categories of `dimensions`, and
/// `factorial` per LV × QC cell), generated offline; the set's id.
pub async fn sample_hierarchical(
    db: &(impl AsRef<std::ffi::OsStr> + ?Sized),
    dimensions: &str,
    factorial: u32,
) -> String {
    json(&assay(db, &["--json", "project", "create", "A"], &[]).await);
    json(&assay(db, &["--json", "corpus", "add", "A", "--sample"], &[]).await);
    let factorial = factorial.to_string();
    let args = [
        "--json",
        "questions",
        "generate",
        "hierarchical",
        "A",
        "--per-category",
        "1",
        "--levels",
        "2,4",
        "--dimensions",
        dimensions,
        "--factorial",
        &factorial,
    ];
    json(&assay(db, &args, &[]).await)["set_id"].to_string()
}

/// The real corpora (`../shared/corpora`, or `ASSAY_CORPORA`).
pub fn corpora() -> PathBuf {
    std::env::var_os("ASSAY_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora"))
}

/// A router behind the login over `db`, and the session token of its
/// owner `owner` (made here).
pub async fn owner_router(db: &TestDb, dir: &Path) -> (axum::Router, String) {
    json(&assay(db, &["--json", "user", "create", "owner"], &[("ASSAY_PASSWORD", "correct horse battery")]).await);
    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let options = server::web::leptos_options(dir, "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(db.open().await, config, Default::default(), options);
    let owner =
        json(&assay(db, &["--json", "user", "session", "owner"], &[]).await)["token"].as_str().unwrap().to_string();
    (router, owner)
}

/// A member made as the owner makes one, with `access` ("read", "edit" or
/// none) to project 1; their session token.
pub async fn member(db: &TestDb, router: &axum::Router, owner: &str, name: &str, access: Option<&str>) -> String {
    use axum::http::{header, Request, StatusCode};
    let form = |path: &str, body: String| {
        Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::COOKIE, format!("assay_session={owner}"))
            .body(axum::body::Body::from(body))
            .unwrap()
    };
    let create = <app::api::CreateMember as leptos::server_fn::ServerFn>::PATH;
    let (status, _, body) = send_to(router, form(create, format!("name={name}&password=correct+horse+battery"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    if let Some(access) = access {
        let set = <app::api::SetMemberAccess as leptos::server_fn::ServerFn>::PATH;
        let (status, _, b) = send_to(router, form(set, format!("user_id={body}&project_id=1&access={access}"))).await;
        assert_eq!(status, StatusCode::OK, "{b}");
    }
    json(&assay(db, &["--json", "user", "session", name], &[]).await)["token"].as_str().unwrap().to_string()
}

/// Each caller in turn reads a page and one of its files: `(caller,
/// session cookie, the page's status, the file's)`; the page shows
/// `marker` exactly when it answers 200.
pub async fn readers(
    router: &axum::Router,
    page: &str,
    marker: &str,
    file: &str,
    callers: &[(&str, &str, axum::http::StatusCode, axum::http::StatusCode)],
) {
    use axum::http::StatusCode;
    let get = get_as;
    for (caller, cookie, page_status, file_status) in callers {
        let (status, _, body) = send_to(router, get(page, cookie)).await;
        assert_eq!(status, *page_status, "{caller}: {page}");
        assert_eq!(body.contains(marker), status == StatusCode::OK, "{caller}: {marker} on {page}");
        assert_eq!(send_to(router, get(file, cookie)).await.0, *file_status, "{caller}: {file}");
    }
}

/// A mock endpoint answering as the offline provider does — except that,
/// while `misbehave` holds, the requests `picked` chooses get `reply`
/// (a model that answers unreadably, then mends its ways).
pub async fn offline_mock(
    misbehave: Option<(std::sync::Arc<std::sync::atomic::AtomicBool>, fn(&serde_json::Value) -> bool, &'static str)>,
) -> mockllm::MockServer {
    let offline = engine::offline::provider();
    let responder = mockllm::Responder(std::sync::Arc::new(move |body: &serde_json::Value| match &misbehave {
        Some((on, picked, reply)) if on.load(std::sync::atomic::Ordering::SeqCst) && picked(body) => reply.to_string(),
        _ => offline.answer_body(body),
    }));
    mockllm::MockServer::start(mockllm::MockConfig { responder: Some(responder), ..Default::default() }).await
}

/// A mock endpoint answering each task as the offline provider would (so
/// judging through it is deterministic, and runs compare), each reply after
/// `latency`.
pub async fn slow_offline_mock(latency: std::time::Duration) -> mockllm::MockServer {
    let offline = std::sync::Arc::new(engine::offline::provider());
    let respond = move |req: &serde_json::Value| offline.answer_body(req);
    mockllm::MockServer::start(mockllm::MockConfig {
        latency,
        responder: Some(mockllm::Responder(std::sync::Arc::new(respond))),
        ..Default::default()
    })
    .await
}

/// The environment pointing `assay` at a mock endpoint at `base`.
pub fn mock_env(base: &str) -> [(&'static str, &str); 3] {
    [("ASSAY_LLM_PROVIDER", "openai"), ("ASSAY_LLM_BASE_URL", base), ("ASSAY_LLM_MODEL", "mock-model")]
}

/// A project "P" with an imported question set "Q" of `questions`, made
/// through the store: (project id, set id).
pub async fn project_with_questions(pool: &app::ssr::store::Db, questions: &[&str]) -> (i64, i64) {
    let project = app::ssr::store::projects::create_project(pool, "P", &Default::default()).await.unwrap().summary.id;
    let set = app::ssr::store::questions::create_set(
        pool,
        project,
        None,
        types::QuestionSetKind::Imported,
        "Q",
        &serde_json::json!({}),
    )
    .await
    .unwrap();
    for q in questions {
        app::ssr::store::questions::add_question(pool, set, q, None, None).await.unwrap();
    }
    (project, set)
}

/// Each `(path, form, message)`: the form posted to the server function at
/// `path` as `cookie` is refused as a bad request whose reply holds `message`.
pub async fn refused_by_field(router: &axum::Router, cookie: &str, cases: &[(&str, String, &str)]) {
    for (path, form, said) in cases {
        let (got, _, body) = send_to(router, post_as(path, form, cookie)).await;
        assert_eq!(got, axum::http::StatusCode::BAD_REQUEST, "{form}: {body}");
        assert!(body.contains(said), "{form}: {body}");
    }
}

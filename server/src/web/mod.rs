//! The web server: Leptos pages and server functions, the static site
//! (WASM, JS, CSS), and the multipart upload route.

mod answers;
mod auth;
mod evaluations;
mod experiments;
pub mod granted;
mod metrics;
mod shares;
mod studies;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use app::error::AppError;
use app::model::UploadReport;
use app::ssr::state::{AppState, Config};
use app::ssr::store::Db;
use axum::extract::{DefaultBodyLimit, Multipart, Path, Query, State};
use axum::handler::Handler;
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, on, MethodFilter, MethodRouter};
use axum::{Json, Router};
use granted::Granted;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};

/// Where the built site (`pkg/` with the WASM, JS and CSS) is looked for
/// when `--site` and `ASSAY_SITE` are not given: `target/<profile>/assay`
/// finds `target/site`, which is where `scripts/build` puts it.
pub fn default_site_root() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(|t| t.join("site")))
        .filter(|p| p.join("pkg").is_dir())
        .unwrap_or_else(|| PathBuf::from("target/site"))
}

pub fn leptos_options(site_root: &std::path::Path, addr: SocketAddr) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name("assay")
        .site_root(site_root.display().to_string())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build()
}

/// The whole application as a router, ready to serve. `llm` is what is in
/// force at start: the flags and environment (`config.llm_base`) with any
/// settings saved from the browser applied.
pub fn router(pool: Db, config: Config, llm: engine::llm::settings::LlmSettings, options: LeptosOptions) -> Router {
    let max_upload = config.max_upload_bytes;
    let state = AppState {
        leptos_options: options,
        pool,
        config: Arc::new(config),
        llm: Arc::new(std::sync::RwLock::new(Arc::new(llm))),
        jobs: Arc::new(app::ssr::jobs::JobManager::new(app::ssr::stages::stage)),
        throttle: Arc::new(app::ssr::auth::Throttle::default()),
        raters: Arc::new(app::ssr::studies::RaterLimit::default()),
    };
    if state.pool.is_postgres() {
        // A database several processes share: this server also takes part
        // in jobs others started (as `assay worker` does).
        let (jobs, pool, shared) = (state.jobs.clone(), state.pool.clone(), state.clone());
        tokio::spawn(async move {
            let llm = move || shared.llm();
            jobs.work_shared_queue(pool, llm, std::time::Duration::from_secs(1), Default::default()).await;
        });
    }
    // Generated once per process: generating runs the app with resource
    // loading suppressed by a process-wide flag (leptos_server's
    // `SuppressResourceLoad`), and a resource first polled meanwhile, by a
    // page another router of this process is rendering, stays pending for
    // good (leptos-rs/leptos#4773): the test processes build many routers
    // while others serve pages.
    static ROUTES: std::sync::OnceLock<Vec<leptos_axum::AxumRouteListing>> = std::sync::OnceLock::new();
    let routes = ROUTES.get_or_init(|| generate_route_list(app::App)).clone();
    let shell_options = state.leptos_options.clone();
    // The plain routes of a project's objects, each behind the check of
    // the ids the router decoded (`granted`).
    let plain = plain_routes(max_upload)
        .into_iter()
        .fold(Router::new(), |r, (_, path, handler)| r.route(path, handler))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), granted::authorize));
    let pages = Router::new()
        .route("/api/share/{token}/{file}", get(shares::file))
        .route("/api/share/{token}/{part}/{file}", get(shares::part))
        // A fresh nonce per page for Leptos's inline scripts (see app::ssr::csp).
        .leptos_routes_with_context(&state, routes, page_nonce, move || app::shell(shell_options.clone()))
        // Server functions take forms and small JSON; files go through the
        // plain routes, under the upload limit. Larger bodies get 413.
        // Server functions read their bodies under axum's default limit
        // (2 MB); it is set to the one limit stated here, so a body is
        // either read whole or refused with 413, never cut into a 500.
        .layer(DefaultBodyLimit::max(SERVER_FN_BODY_LIMIT))
        .layer(axum::middleware::from_fn(limit_body));
    Router::new()
        .merge(plain)
        .merge(pages)
        .fallback(static_or_not_found)
        .layer(axum::middleware::from_fn(error_status))
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::guard))
        .layer(axum::middleware::from_fn(security_headers))
        // Pages, the WASM bundle (4.8 MB → 1.7 MB) and JSON go out gzipped
        // to browsers that ask; images are left as they are.
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(state)
}

/// Anything no route takes: a file of the site (the WASM bundle, the
/// stylesheet, `public/`), else the app's "not found" page with status 404.
///
/// Not `leptos_axum::file_and_error_handler`: it serves a file inside
/// `Owner::new()` and applies the `ResponseOptions` it finds in context.
/// That owner's parent is whatever reactive owner the worker thread holds
/// as current, which can be a page still rendering on that thread: the file
/// then took that page's headers (`mem::take`) — its Content-Security-Policy,
/// or a Set-Cookie — and the page went out without them (seen as a shared
/// page served under the no-script policy, 1 load in 2 of the graph share
/// test in a debug build). A file's response here is the file's alone.
async fn static_or_not_found(State(state): State<AppState>, req: axum::extract::Request) -> Response {
    use tower::ServiceExt;
    let mut file_req = axum::http::Request::builder().uri(req.uri().clone());
    if let Some(v) = req.headers().get(header::ACCEPT_ENCODING) {
        file_req = file_req.header(header::ACCEPT_ENCODING, v);
    }
    let Ok(file_req) = file_req.body(axum::body::Body::empty()) else {
        return error(StatusCode::BAD_REQUEST, "not a valid address".into());
    };
    let dir =
        tower_http::services::ServeDir::new(&*state.leptos_options.site_root).precompressed_gzip().precompressed_br();
    match dir.oneshot(file_req).await {
        Ok(res) if res.status() != StatusCode::NOT_FOUND => res.map(axum::body::Body::new),
        _ => {
            // The app's own page for an address it does not know (its
            // router's fallback sets the 404), rendered like every page.
            let options = state.leptos_options.clone();
            let render = leptos_axum::render_app_to_stream_with_context(
                {
                    let state = state.clone();
                    move || {
                        leptos::prelude::provide_context(state.clone());
                        page_nonce();
                    }
                },
                move || app::shell(options.clone()),
            );
            let mut res = render(req).await;
            if res.status() == StatusCode::OK {
                *res.status_mut() = StatusCode::NOT_FOUND;
            }
            res
        }
    }
}

/// Where a page's nonce is left for [`security_headers`] (a request
/// extension, so it belongs to this request alone).
#[derive(Clone, Default)]
struct NonceSlot(Arc<std::sync::Mutex<Option<String>>>);

/// The context every page renders with: a fresh nonce for Leptos's inline
/// scripts, also left in the request's [`NonceSlot`], from which the header
/// layer writes the page's Content-Security-Policy. The policy does not
/// travel through Leptos's `ResponseOptions`: those were seen applied to
/// another request's response (see [`static_or_not_found`]), and a page
/// without its policy gets the one under which nothing runs.
fn page_nonce() {
    use leptos::prelude::use_context;
    leptos::nonce::provide_nonce();
    if let (Some(parts), Some(nonce)) = (use_context::<axum::http::request::Parts>(), leptos::nonce::use_nonce()) {
        if let Some(slot) = parts.extensions.get::<NonceSlot>() {
            *slot.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(nonce.to_string());
        }
    }
}

/// Headers on every response: no framing (clickjacking), no MIME sniffing,
/// no `Referer` (share and study tokens are in URLs), and a
/// Content-Security-Policy — a page Leptos rendered gets the page policy
/// with the nonce its render left in the request ([`NonceSlot`]); anything
/// else gets the policy under which nothing runs.
async fn security_headers(mut req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let slot = NonceSlot::default();
    req.extensions_mut().insert(slot.clone());
    let mut resp = next.run(req).await;
    let nonce = slot.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    let h = resp.headers_mut();
    // A page Leptos rendered: its policy, with the nonce its scripts carry.
    let html = h.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| t.starts_with("text/html"));
    if let (true, Some(nonce)) = (html, nonce) {
        if let Ok(v) = header::HeaderValue::from_str(&app::ssr::csp::page(&nonce)) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, header::HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, header::HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, header::HeaderValue::from_static("no-referrer"));
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(header::CONTENT_SECURITY_POLICY, header::HeaderValue::from_static(app::ssr::csp::OTHER));
    }
    resp
}

/// The largest body a server function or page request may send.
pub const SERVER_FN_BODY_LIMIT: usize = 8 * 1024 * 1024;

/// Bodies over [`SERVER_FN_BODY_LIMIT`] get 413 whether or not they declare
/// their length: a declared length over the limit is refused unread, a
/// chunked body is read up to the limit and refused there (a server
/// function would otherwise see a cut body and answer 500).
///
/// One text model for both databases: PostgreSQL cannot store U+0000 in
/// text, SQLite can, and a lab must be able to move between them. So a
/// page's address or a server function's body holding a NUL (raw, or
/// form-encoded as `%00`) is refused here with 400 and the reason, the
/// same on both, before anything reads it.
async fn limit_body(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let too_large =
        || error(StatusCode::PAYLOAD_TOO_LARGE, format!("The request is larger than {} bytes.", SERVER_FN_BODY_LIMIT));
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > SERVER_FN_BODY_LIMIT as u64) {
        return too_large();
    }
    if req.uri().query().is_some_and(holds_nul) || holds_nul(req.uri().path()) {
        return nul_refused();
    }
    let (parts, body) = req.into_parts();
    match axum::body::to_bytes(body, SERVER_FN_BODY_LIMIT).await {
        Ok(bytes) if holds_nul_bytes(&bytes) => nul_refused(),
        Ok(bytes) => next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))).await,
        Err(_) => too_large(),
    }
}

/// Whether URL-encoded text holds U+0000 (`%00`).
fn holds_nul(encoded: &str) -> bool {
    holds_nul_bytes(encoded.as_bytes())
}

/// Whether a body holds U+0000, raw or form-encoded (`%00`; a typed "%00"
/// is sent as `%2500`, so this is only ever a NUL).
fn holds_nul_bytes(bytes: &[u8]) -> bool {
    bytes.contains(&0) || bytes.windows(3).any(|w| w == b"%00")
}

fn nul_refused() -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "The request holds the character U+0000 (NUL), which Assay does not store (PostgreSQL cannot): remove it."
            .into(),
    )
}

/// A plain route: its method, path and handler.
type PlainRoute = (Method, &'static str, MethodRouter<AppState>);

fn route<H: Handler<T, AppState>, T: 'static>(method: Method, path: &'static str, handler: H) -> PlainRoute {
    let filter = MethodFilter::try_from(method.clone()).expect("plain routes use GET or POST");
    (method, path, on(filter, handler))
}

/// Every plain route behind the login. The router is made from this list
/// alone, and each path parameter's name says what it names, which
/// `granted::authorize` checks before the handler runs (handlers take its
/// [`Granted`]); the access test walks the list.
fn plain_routes(max_upload: u64) -> Vec<PlainRoute> {
    let (m, p, upload) = route(Method::POST, "/api/projects/{project}/upload", upload);
    let (gm, gp, graph_import) = route(Method::POST, "/api/projects/{project}/graph-import", graph_import);
    let (sm, sp, study_import) = route(Method::POST, "/api/projects/{project}/studies/import", studies::import);
    vec![
        // Multipart framing adds a little to the files' own size.
        (m, p, upload.layer(DefaultBodyLimit::max(max_upload as usize + 64 * 1024))),
        route(Method::GET, "/api/projects/{project}/questions/{question_set}/export", export_questions),
        route(Method::POST, "/api/projects/{project}/questions/import", import_questions),
        route(Method::GET, "/api/projects/{project}/questions/{question_set}/entities.svg", entities_svg),
        route(Method::GET, "/api/projects/{project}/questions/{question_set}/relevance.svg", relevance_svg),
        route(Method::POST, "/api/projects/{project}/answers/import", answers::import),
        route(Method::GET, "/api/projects/{project}/answers/{answer_set}/export", answers::export),
        route(Method::GET, "/api/projects/{project}/answers/cost.svg", answers::cost_svg),
        route(Method::GET, "/api/projects/{project}/graph/{file}", graph_file),
        (gm, gp, graph_import.layer(DefaultBodyLimit::max(max_upload as usize + 64 * 1024))),
        (sm, sp, study_import.layer(DefaultBodyLimit::max(max_upload as usize + 64 * 1024))),
        route(Method::GET, "/api/metrics/{metrics_run}/{file}", metrics::file),
        route(Method::GET, "/api/experiments/{experiment}/{file}", experiments::file),
        route(Method::GET, "/api/evaluations/{evaluation}/plots/{file}", evaluations::plot),
        route(Method::GET, "/api/evaluations/{evaluation}/tables/{file}", evaluations::table),
        route(Method::GET, "/api/evaluations/{evaluation}/{file}", evaluations::report),
        route(Method::GET, "/api/studies/{study}/{file}", studies::file),
    ]
}

/// The plain routes behind the login: (method, path template).
pub fn plain_paths() -> Vec<(Method, &'static str)> {
    plain_routes(0).into_iter().map(|(m, p, _)| (m, p)).collect()
}

/// Serves until Ctrl-C or SIGTERM.
pub async fn serve(listener: tokio::net::TcpListener, router: Router) -> std::io::Result<()> {
    axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(shutdown_signal())
        .await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// `POST /api/projects/{id}/upload`: multipart, one part per file (field
/// name `files`). Answers an [`UploadReport`], or `{"error": "..."}`.
async fn upload(State(state): State<AppState>, granted: Granted, mut multipart: Multipart) -> Response {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    loop {
        match multipart.next_field().await {
            Ok(Some(field)) => {
                let name = field.file_name().or(field.name()).unwrap_or("unnamed").to_string();
                match field.bytes().await {
                    Ok(bytes) => files.push((name, bytes.to_vec())),
                    Err(e) => return multipart_error(e, &state.config),
                }
            }
            Ok(None) => break,
            Err(e) => return multipart_error(e, &state.config),
        }
    }
    if files.is_empty() {
        return error(StatusCode::BAD_REQUEST, "The upload held no files.".into());
    }
    match app::ssr::ingest::add_files(&state.pool, granted.project, &files, &state.config.import).await {
        Ok(report) => Json::<UploadReport>(report).into_response(),
        Err(e) => app_error(e),
    }
}

#[derive(serde::Deserialize)]
struct ExportQuery {
    format: Option<String>,
}

impl ExportQuery {
    /// `jsonl` (the default), `csv`, or one of `more` (another tool's
    /// layout), else a 400 saying so.
    fn format(self, more: &[&str]) -> Result<String, Response> {
        match self.format.as_deref().unwrap_or("jsonl") {
            f if f == "jsonl" || f == "csv" || more.contains(&f) => Ok(f.to_string()),
            other => {
                let known: Vec<&str> = ["jsonl", "csv"].iter().chain(more).copied().collect();
                Err(error(StatusCode::BAD_REQUEST, format!("unknown format \"{other}\": {}", known.join(", "))))
            }
        }
    }
}

/// `GET /api/projects/{id}/questions/{set}/export?format=jsonl|csv|lightrag`:
/// the set as a file to download (`lightrag`: `queries-set-N.txt`, the lines
/// LightRAG's `reproduce/` scripts read).
async fn export_questions(
    State(state): State<AppState>,
    _: Granted,
    Path((_, set)): Path<(i64, i64)>,
    Query(q): Query<ExportQuery>,
) -> Response {
    let format = match q.format(&["lightrag"]) {
        Ok(f) => f,
        Err(response) => return response,
    };
    let questions = match app::ssr::store::questions::list_questions(&state.pool, set).await {
        Ok(q) => q,
        Err(e) => return app_error(e),
    };
    match format.as_str() {
        "csv" => download(app::ssr::questions::io::to_csv(&questions), "csv", &format!("questions-set-{set}")),
        "lightrag" => download(app::ssr::questions::io::to_lightrag(&questions), "txt", &format!("queries-set-{set}")),
        _ => download(app::ssr::questions::io::to_jsonl(&questions), "jsonl", &format!("questions-set-{set}")),
    }
}

/// `GET /api/projects/{id}/questions/{set}/entities.svg[?source=graph|llm]`:
/// the set's top-10 entity pie chart.
async fn entities_svg(
    State(state): State<AppState>,
    _: Granted,
    Path((_, set)): Path<(i64, i64)>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let source = match query.get("source").filter(|s| !s.is_empty()).map(|s| types::EntitySource::parse(s)) {
        None => types::EntitySource::Graph,
        Some(Ok(s)) => s,
        Some(Err(e)) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    match app::ssr::questions::diagnostics::set_entities(&state.pool, set, source).await {
        Ok(Some(e)) => svg(e.svg()),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no LLM has listed the entities of question set {set} yet")),
        Err(e) => app_error(e),
    }
}

/// `GET /api/projects/{id}/questions/{set}/relevance.svg`: the histogram
/// of the set's latest relevance scores.
async fn relevance_svg(State(state): State<AppState>, _: Granted, Path((_, set)): Path<(i64, i64)>) -> Response {
    let view = match app::ssr::store::questions::get_set(&state.pool, set).await {
        Ok(v) => v,
        Err(e) => return app_error(e),
    };
    match app::ssr::questions::diagnostics::set_relevance(&state.pool, set).await {
        Ok(Some((job, scores))) => match app::ssr::questions::diagnostics::retriever_of(&state.pool, job).await {
            Ok(retriever) => svg(app::ssr::questions::diagnostics::relevance_svg(&view, &retriever, &scores)),
            Err(e) => app_error(e),
        },
        Ok(None) => error(StatusCode::NOT_FOUND, format!("question set {set} has not been scored for relevance")),
        Err(e) => app_error(e),
    }
}

/// `POST /api/projects/{id}/questions/import`: a multipart form with a
/// `file` (.jsonl or .csv), an optional `name`, and optionally a benchmark
/// `format` (ultradomain, graphrag-bench, multihop-rag, table) with its
/// `corpus` file and `columns`. Answers with a redirect to the Questions page
/// showing the new set (and, for a benchmark, what was imported), or the
/// reason it was refused (a plain form: it works without the WASM).
async fn import_questions(State(state): State<AppState>, granted: Granted, multipart: Multipart) -> Response {
    let id = granted.project;
    let page = |query: &[(&str, &str)]| redirect(&format!("/projects/{id}/questions"), query);
    let (mut files, fields) = match read_form_files(multipart, false).await {
        Ok(f) => f,
        Err(e) => return page(&[("import_error", &e)]),
    };
    let Some((file_name, bytes)) = files.remove("file") else {
        return page(&[("import_error", "choose a .jsonl or .csv file")]);
    };
    let name = fields.get("name").cloned().unwrap_or_default();
    let format = fields.get("format").map(String::as_str).filter(|f| !f.is_empty() && *f != "assay");
    if let Some(format) = format {
        let corpus = files.remove("corpus");
        let result = app::ssr::ingest::import_dataset(
            &state.pool,
            id,
            format,
            (&file_name, &bytes),
            corpus.as_ref().map(|(n, b)| (n.as_str(), b.as_slice())),
            fields.get("columns").map_or("", String::as_str),
            &name,
            &state.config.import,
        )
        .await;
        return match result {
            Ok(report) => {
                let line = report.line();
                match report.set_id {
                    Some(set) => page(&[("set", &set.to_string()), ("imported", &line)]),
                    None => page(&[("imported", &line)]),
                }
            }
            Err(e) => page(&[("import_error", &e.to_string())]),
        };
    }
    let result = async {
        let questions = app::ssr::questions::io::parse(&file_name, &bytes)?;
        let name = if name.is_empty() { format!("Imported from {file_name}") } else { name };
        let set = app::ssr::store::questions::import_set(&state.pool, id, &name, &file_name, &questions).await?;
        Ok::<i64, AppError>(set)
    }
    .await;
    match result {
        Ok(set) => page(&[("set", &set.to_string())]),
        Err(e) => page(&[("import_error", &e.to_string())]),
    }
}

/// `POST /api/projects/{id}/graph-import`: a multipart form with a `file`
/// (a zip of another system's index folder), its `format` (lightrag,
/// graphrag, nano-graphrag) and optionally a `community_level`. Imports its
/// documents, chunks and graph into the (empty) project and redirects to the
/// Graph page, or back to it with the reason it was refused.
async fn graph_import(State(state): State<AppState>, granted: Granted, multipart: Multipart) -> Response {
    let id = granted.project;
    let page = |query: &[(&str, &str)]| redirect(&format!("/projects/{id}/graph"), query);
    let (file, fields) = match read_form_with(multipart, true).await {
        Ok(f) => f,
        Err(e) => return page(&[("import_error", &e)]),
    };
    let Some((_, bytes)) = file else { return page(&[("import_error", "choose a .zip of the index folder")]) };
    let result = async {
        let format = fields
            .get("format")
            .and_then(|f| engine::graph::foreign::Format::parse(f))
            .ok_or_else(|| AppError::Invalid("choose the system that wrote the folder".into()))?;
        let level = match fields.get("community_level").map(|l| l.trim()).filter(|l| !l.is_empty()) {
            Some(l) => Some(
                l.parse::<i64>()
                    .map_err(|_| AppError::Invalid(format!("community level \"{l}\" is not a whole number")))?,
            ),
            None => None,
        };
        let index = tokio::task::spawn_blocking(move || {
            let files = engine::graph::foreign::ForeignFiles::from_zip(&bytes, format)?;
            engine::graph::foreign::read(&files, format)
        })
        .await
        .map_err(|_| AppError::Internal)?
        .map_err(|e| AppError::Invalid(e.to_string()))?;
        app::ssr::store::foreign::import(&state.pool, id, index, level).await
    }
    .await;
    match result {
        Ok(_) => page(&[("imported", "1")]),
        Err(e) => page(&[("import_error", &e.to_string())]),
    }
}

/// A plain form's file (name and bytes, if one was chosen) and its other
/// fields (trimmed text), or why the upload could not be read.
async fn read_form(multipart: Multipart) -> Result<(Option<(String, Vec<u8>)>, HashMap<String, String>), String> {
    read_form_with(multipart, false).await
}

/// [`read_form`], the file a binary one (a zip) when `binary_file`: NUL
/// bytes are refused in the other fields only (the file's texts are checked
/// when they are read out of it).
async fn read_form_with(
    multipart: Multipart,
    binary_file: bool,
) -> Result<(Option<(String, Vec<u8>)>, HashMap<String, String>), String> {
    let (mut files, fields) = read_form_files(multipart, binary_file).await?;
    Ok((files.remove("file"), fields))
}

/// A form's files (by field name: the file's name and bytes; a file field
/// left empty is absent) and its other fields.
type FormFiles = HashMap<String, (String, Vec<u8>)>;

async fn read_form_files(
    mut multipart: Multipart,
    binary_file: bool,
) -> Result<(FormFiles, HashMap<String, String>), String> {
    let (mut files, mut fields) = (HashMap::new(), HashMap::new());
    loop {
        match multipart.next_field().await {
            Ok(Some(field)) => {
                let field_name = field.name().unwrap_or("").to_string();
                let is_file = field.file_name().is_some();
                let file_name = field.file_name().unwrap_or("").to_string();
                let bytes = field.bytes().await.map_err(|_| "the file could not be read".to_string())?;
                if let Some(at) = nul_in_upload(&bytes).filter(|_| !(binary_file && field_name == "file")) {
                    let what = if is_file { format!("{file_name} holds") } else { format!("{field_name} holds") };
                    return Err(format!(
                        "{what} the character U+0000 (NUL) at byte {at}, which Assay does not store (PostgreSQL \
                         cannot): remove it"
                    ));
                }
                if is_file || field_name == "file" {
                    if !file_name.is_empty() {
                        files.insert(field_name, (file_name, bytes.to_vec()));
                    }
                } else {
                    fields.insert(field_name, String::from_utf8_lossy(&bytes).trim().to_string());
                }
            }
            Ok(None) => return Ok((files, fields)),
            Err(e) => return Err(format!("the upload could not be read: {}", e.body_text())),
        }
    }
}

/// Where an imported file or form field holds U+0000: a raw NUL byte, or
/// JSON's escape `\u0000` (one not itself escaped: `\\u0000` is a
/// backslash and text). The same refusal on both databases (one text model).
fn nul_in_upload(bytes: &[u8]) -> Option<usize> {
    if let Some(at) = bytes.iter().position(|b| *b == 0) {
        return Some(at);
    }
    let mut from = 0;
    while let Some(i) = bytes[from..].windows(6).position(|w| w == b"\\u0000") {
        let at = from + i;
        let backslashes = bytes[..at].iter().rev().take_while(|b| **b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A 303 to a page with a query (how the plain forms answer).
fn redirect(path: &str, query: &[(&str, &str)]) -> Response {
    let q = form_urlencoded::Serializer::new(String::new()).extend_pairs(query).finish();
    (StatusCode::SEE_OTHER, [(header::LOCATION, format!("{path}?{q}"))]).into_response()
}

/// A file to download: `format` is `jsonl` or `csv`.
/// `body` as the attachment `stem.ext`.
fn download(body: String, ext: &str, stem: &str) -> Response {
    let mime = match ext {
        "csv" => "text/csv; charset=utf-8",
        "json" => "application/json; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/x-ndjson; charset=utf-8",
    };
    let disposition = format!("attachment; filename=\"{stem}.{ext}\"");
    ([(header::CONTENT_TYPE, mime.to_string()), (header::CONTENT_DISPOSITION, disposition)], body).into_response()
}

/// `GET /api/projects/{id}/graph/graph.json|graph.graphml`: the project's
/// knowledge graph as a file (the layout `assay graph export` writes and
/// `assay graph import` reads).
async fn graph_file(State(state): State<AppState>, granted: Granted, Path((_, file)): Path<(i64, String)>) -> Response {
    graph_download(&state.pool, granted.project, &file).await
}

/// A project's graph as `graph.json` or `graph.graphml` (also a shared graph's).
pub(crate) async fn graph_download(pool: &app::ssr::store::Db, project: i64, file: &str) -> Response {
    let (mime, json) = match file {
        "graph.json" => ("application/json; charset=utf-8", true),
        "graph.graphml" => ("application/graphml+xml; charset=utf-8", false),
        other => return error(StatusCode::NOT_FOUND, format!("no \"{other}\": graph.json or graph.graphml")),
    };
    match app::ssr::store::graph::export(pool, project).await {
        Ok(export) => {
            let body = if json {
                match serde_json::to_string(&export) {
                    Ok(s) => s,
                    Err(e) => return app_error(app::error::internal("writing the graph as JSON", e)),
                }
            } else {
                export.to_graphml()
            };
            let disposition = format!("attachment; filename=\"project-{project}-{file}\"");
            ([(header::CONTENT_TYPE, mime.to_string()), (header::CONTENT_DISPOSITION, disposition)], body)
                .into_response()
        }
        Err(e) => app_error(e),
    }
}

/// An SVG image response.
fn svg(body: String) -> Response {
    ([(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8".to_string())], body).into_response()
}

fn multipart_error(e: axum::extract::multipart::MultipartError, config: &Config) -> Response {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "The upload is larger than the limit of {} per upload; upload the files in smaller groups.",
                engine::corpus::human_bytes(config.max_upload_bytes)
            ),
        );
    }
    tracing::warn!(error = %e, "unreadable multipart upload");
    error(e.status(), format!("The upload could not be read: {}", e.body_text()))
}

/// Leptos answers a server function's error with 500 unless the function
/// set a status; this gives each [`AppError`] its own (a user's mistake is
/// 400, 404, 409, 413 or 429, never 500). The error's JSON is unchanged.
async fn error_status(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let resp = next.run(req).await;
    if resp.status() != StatusCode::INTERNAL_SERVER_ERROR
        || !resp.headers().contains_key(leptos::server_fn::error::SERVER_FN_ERROR_HEADER)
    {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
    if let Ok(e) = serde_json::from_slice::<AppError>(&bytes) {
        parts.status = status_of(&e);
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

fn app_error(e: AppError) -> Response {
    error(status_of(&e), e.to_string())
}

/// The HTTP status of an error.
fn status_of(e: &AppError) -> StatusCode {
    StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn error(status: StatusCode, message: String) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}

//! An OpenAI-compatible mock server for Assay's tests and benchmarks.
//!
//! It serves `POST /v1/chat/completions` and `POST /v1/embeddings` on
//! 127.0.0.1 (port 0 by default) and can be told to misbehave, in given
//! proportions: answer slowly, 429 with `Retry-After`, 500, hang past the
//! client's timeout, send malformed JSON, truncate the body, or drop the
//! connection. Faults are drawn from a seeded generator per request, so a
//! run is reproducible.
//!
//! Two modes play a model that misbehaves in its replies rather than its
//! transport: **rambling** ignores `max_tokens` and never closes its JSON
//! (the reply goes on until the server's own limit, `finish_reason:
//! length`), and a **small context** refuses (400, OpenAI's
//! `context_length_exceeded`) any request whose prompt and `max_tokens`
//! exceed it, optionally saying its size in `GET /v1/models` as vLLM does.
//!
//! It also serves the Batch API (`POST /v1/files` with `purpose=batch`,
//! `POST /v1/batches`, `GET /v1/batches/ID`, `GET /v1/files/ID/content`):
//! each line of a batch's file is answered as the same chat request would
//! be live (faults aside; a `custom_id` of the form `TASK-N` is read as
//! the request's `X-Assay-Purpose`), the batch reported `in_progress` for
//! `batch_polls` status requests before it is `completed`.
//!
//! It counts what it sees: requests, successful replies, requests in flight
//! (and the most at once), and how often each distinct request body was
//! answered successfully — which lets a test prove that a resumed job paid
//! for no call twice.
//!
//! This crate exists only for tests and benches; nothing in Assay's shipped
//! binary depends on it.

pub mod peers;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

/// Proportions (0.0–1.0) of requests that meet each fault. They are drawn
/// in this order from one uniform number, so they must sum to at most 1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Faults {
    /// 429 Too Many Requests with a `Retry-After` header.
    pub rate_limited: f64,
    /// 500 Internal Server Error.
    pub server_error: f64,
    /// No answer for `hang`: the client's timeout must fire.
    pub timeout: f64,
    /// 200 with a body that is not JSON.
    pub malformed: f64,
    /// 200 whose body stops half-way.
    pub truncated: f64,
    /// The connection closes before any response.
    pub dropped: f64,
}

impl Faults {
    /// The same proportion of every fault, `total` in all.
    pub fn spread(total: f64) -> Faults {
        let each = total / 6.0;
        Faults {
            rate_limited: each,
            server_error: each,
            timeout: each,
            malformed: each,
            truncated: each,
            dropped: each,
        }
    }
}

/// Canned replies: given a chat request's JSON body, the reply text.
#[derive(Clone)]
pub struct Responder(pub Arc<dyn Fn(&Value) -> String + Send + Sync>);

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

#[derive(Debug, Clone)]
pub struct MockConfig {
    /// Added to every answer.
    pub latency: Duration,
    pub faults: Faults,
    /// Seconds sent in `Retry-After` with a 429.
    pub retry_after_secs: u64,
    /// How long a "timeout" fault hangs.
    pub hang: Duration,
    /// When set, requests must carry `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// Leave `usage` out of replies (the client must count tokens itself).
    pub omit_usage: bool,
    pub seed: u64,
    /// Replaces the echo reply of chat completions. It sees the request's
    /// body with the `X-Assay-Purpose` header's task in `x_assay_purpose`.
    pub responder: Option<Responder>,
    /// Keep no per-body counts (`answered`, `answered_prompts`): a long
    /// benchmark's distinct prompts would fill the memory.
    pub lean: bool,
    /// Compose a chat reply as its request arrives and send it when the
    /// latency is over, as a server with a fixed latency would; by default
    /// the latency is waited first (then a request its client dropped
    /// meanwhile is never composed, counted or shown to the responder).
    /// With it, a benchmark's wave of replies due at one instant is sent at
    /// that instant, not one composition after another.
    pub compose_first: bool,
    /// Ignore `max_tokens` and never close a JSON reply (see the crate docs).
    pub rambling: bool,
    /// Refuse requests whose prompt words plus `max_tokens` exceed this.
    pub context: Option<u64>,
    /// Say the context in `GET /v1/models` (`max_model_len`).
    pub advertise_context: bool,
    /// Refuse `response_format` (400), as endpoints without JSON mode do.
    pub refuse_json_mode: bool,
    /// Answer chat requests one at a time, as a llama.cpp server does: the
    /// others wait (their latency included) for their turn.
    pub one_at_a_time: bool,
    /// Status requests a batch answers `in_progress` before `completed`.
    pub batch_polls: u32,
    /// Automatic prefix caching, as OpenAI's: a prompt's longest prefix
    /// (in whole blocks of this many words) that an earlier prompt began
    /// with is reported as `usage.prompt_tokens_details.cached_tokens`.
    pub prefix_cache: Option<usize>,
    /// A rate limit per window, said in every chat reply's
    /// `x-ratelimit-*` headers as OpenAI says it; a request past it is a
    /// 429 with `Retry-After` (counted in `rate_limited`).
    pub rate_limit: Option<RateLimit>,
}

/// Requests and tokens (prompt words plus `max_tokens`) per window.
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    pub requests: u64,
    pub tokens: u64,
    pub window: Duration,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            latency: Duration::ZERO,
            faults: Faults::default(),
            retry_after_secs: 1,
            hang: Duration::from_secs(30),
            api_key: None,
            omit_usage: false,
            lean: false,
            compose_first: false,
            seed: 7,
            responder: None,
            rambling: false,
            context: None,
            advertise_context: false,
            refuse_json_mode: false,
            one_at_a_time: false,
            batch_polls: 1,
            prefix_cache: None,
            rate_limit: None,
        }
    }
}

/// What the server has seen so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub requests: u64,
    pub ok: u64,
    pub max_in_flight: u64,
    /// Faults injected, by name.
    pub faults: HashMap<&'static str, u64>,
    /// Successful answers per distinct request body (by its text).
    pub answered: HashMap<String, u64>,
    /// Successful answers per last message content (the item's prompt).
    pub answered_prompts: HashMap<String, u64>,
    /// `Authorization` headers that did not match the configured key.
    pub unauthorized: u64,
    /// Time spent composing chat replies (the responder included; the
    /// configured latency and faults not): the mock's own time.
    pub busy: Duration,
    /// Requests refused for exceeding the context.
    pub over_context: u64,
    /// Requests that carried `response_format`.
    pub with_json_mode: u64,
    /// The largest `max_tokens` seen, and requests that sent none.
    pub max_tokens_seen: u64,
    pub without_max_tokens: u64,
    /// Batches created, and the requests in them.
    pub batches: u64,
    pub batch_requests: u64,
    /// Prompt tokens reported as read from the prefix cache.
    pub cached_tokens: u64,
    /// Requests refused for exceeding the rate limit, and the fewest
    /// requests and tokens any reply said were left.
    pub rate_limited: u64,
    pub least_remaining_requests: Option<u64>,
    pub least_remaining_tokens: Option<u64>,
}

struct Shared {
    /// Held while a chat request is answered, when they go one at a time.
    turn: tokio::sync::Mutex<()>,
    config: Mutex<MockConfig>,
    counter: AtomicU64,
    in_flight: AtomicU64,
    stats: Mutex<Stats>,
    /// Uploaded and written files by id, and batches by id (with the
    /// status requests each has left before it completes).
    files: Mutex<HashMap<String, String>>,
    batches: Mutex<HashMap<String, (Value, u32)>>,
    /// Hashes of the prompts' prefixes at whole blocks (`prefix_cache`).
    prefixes: Mutex<std::collections::HashSet<u64>>,
    /// The rate limit's window: when it began, requests and tokens in it.
    window: Mutex<(std::time::Instant, u64, u64)>,
}

/// A running mock server. Dropping it stops the server.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockServer {
    /// Starts on 127.0.0.1 at a free port.
    pub async fn start(config: MockConfig) -> MockServer {
        MockServer::start_on("127.0.0.1:0".parse().unwrap(), config).await
    }

    /// Starts on a given loopback address.
    pub async fn start_on(addr: SocketAddr, config: MockConfig) -> MockServer {
        assert!(addr.ip().is_loopback(), "the mock serves on loopback only");
        let listener = tokio::net::TcpListener::bind(addr).await.expect("bind the mock's address");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            turn: tokio::sync::Mutex::new(()),
            config: Mutex::new(config),
            counter: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            stats: Mutex::new(Stats::default()),
            files: Mutex::new(HashMap::new()),
            batches: Mutex::new(HashMap::new()),
            prefixes: Mutex::new(std::collections::HashSet::new()),
            window: Mutex::new((std::time::Instant::now(), 0, 0)),
        });
        let app = Router::new()
            .route("/v1/models", axum::routing::get(models))
            .route("/v1/chat/completions", post(chat))
            .route("/v1/embeddings", post(embeddings))
            .merge(
                // The Batch API: every route behind the key.
                Router::new()
                    .route("/v1/files", post(upload_file))
                    .route("/v1/files/{id}/content", axum::routing::get(file_content))
                    .route("/v1/batches", post(create_batch))
                    .route("/v1/batches/{id}", axum::routing::get(get_batch))
                    .route_layer(axum::middleware::from_fn_with_state(shared.clone(), require_key)),
            )
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockServer { addr, shared, task }
    }

    /// The base URL a client is configured with: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn stats(&self) -> Stats {
        self.shared.stats.lock().unwrap().clone()
    }

    pub fn reset_stats(&self) {
        *self.shared.stats.lock().unwrap() = Stats::default();
    }

    pub fn set_faults(&self, faults: Faults) {
        self.shared.config.lock().unwrap().faults = faults;
    }

    pub fn set_latency(&self, latency: Duration) {
        self.shared.config.lock().unwrap().latency = latency;
    }

    /// Requests being answered now (a request whose client hung up is no
    /// longer counted once the server notices).
    pub fn in_flight(&self) -> u64 {
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// Every batch created so far completes at its next status request.
    pub fn finish_batches(&self) {
        for (_, left) in self.shared.batches.lock().unwrap().values_mut() {
            *left = 0;
        }
    }

    pub fn set_rambling(&self, rambling: bool) {
        self.shared.config.lock().unwrap().rambling = rambling;
    }
}

/// `GET /v1/models`: the one model, with its context when advertised.
async fn models(State(shared): State<Arc<Shared>>) -> Response {
    let config = shared.config.lock().unwrap().clone();
    let mut model = json!({"id": "mock-model", "object": "model", "owned_by": "mockllm"});
    if let (Some(c), true) = (config.context, config.advertise_context) {
        model["max_model_len"] = json!(c);
    }
    Json(json!({"object": "list", "data": [model]})).into_response()
}

fn not_found(what: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"error": {"message": format!("No such {what}"), "type": "invalid_request_error"}})),
    )
        .into_response()
}

fn authorized(shared: &Shared, headers: &HeaderMap) -> bool {
    let key = shared.config.lock().unwrap().api_key.clone();
    let ok =
        key.is_none_or(|k| headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {k}")));
    if !ok {
        shared.stats.lock().unwrap().unauthorized += 1;
    }
    ok
}

fn unauthorized() -> Response {
    (StatusCode::UNAUTHORIZED, Json(json!({"error": {"message": "Incorrect API key provided"}}))).into_response()
}

/// The key check of routes that do nothing else before it.
async fn require_key(
    State(shared): State<Arc<Shared>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if !authorized(&shared, request.headers()) {
        return unauthorized();
    }
    next.run(request).await
}

/// `POST /v1/files`: a multipart upload (`purpose`, `file`); the file's record.
async fn upload_file(State(shared): State<Arc<Shared>>, mut form: axum::extract::Multipart) -> Response {
    let (mut purpose, mut content, mut name) = (String::new(), None, String::new());
    while let Ok(Some(field)) = form.next_field().await {
        match field.name() {
            Some("purpose") => purpose = field.text().await.unwrap_or_default(),
            Some("file") => {
                name = field.file_name().unwrap_or("upload").to_string();
                content = field.text().await.ok();
            }
            _ => {}
        }
    }
    let Some(content) = content.filter(|_| purpose == "batch") else {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "a file with purpose=batch is required"}})))
            .into_response();
    };
    let id = format!("file-{}", shared.counter.fetch_add(1, Ordering::SeqCst));
    let bytes = content.len();
    shared.files.lock().unwrap().insert(id.clone(), content);
    Json(json!({"id": id, "object": "file", "bytes": bytes, "filename": name, "purpose": "batch"})).into_response()
}

/// `GET /v1/files/ID/content`.
async fn file_content(
    State(shared): State<Arc<Shared>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    match shared.files.lock().unwrap().get(&id) {
        Some(text) => text.clone().into_response(),
        None => not_found("file"),
    }
}

/// `POST /v1/batches`: every line of the input file answered at once, as
/// its chat request would be live (without faults or latency); the output
/// (and the failed lines') files written; the batch reported in progress
/// for `batch_polls` status requests.
async fn create_batch(State(shared): State<Arc<Shared>>, Json(req): Json<Value>) -> Response {
    let Some(input) = req["input_file_id"].as_str().and_then(|f| shared.files.lock().unwrap().get(f).cloned()) else {
        return not_found("file");
    };
    let config = shared.config.lock().unwrap().clone();
    let (mut output, mut errors, mut done, mut failed) = (String::new(), String::new(), 0u64, 0u64);
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        let custom = entry["custom_id"].clone();
        let body = entry["body"].to_string();
        // Assay names each request `TASK-N`: the task is what a live
        // request says in `X-Assay-Purpose`.
        let mut task = HeaderMap::new();
        if let Some(value) = custom.as_str().and_then(|c| c.rsplit_once('-')).and_then(|(p, _)| p.parse().ok()) {
            task.insert("x-assay-purpose", value);
        }
        let response = compose(&shared, &task, config.clone(), &body, false, false);
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
        let reply: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let record = json!({"id": format!("batch_req_{}", done + failed), "custom_id": custom,
                            "response": {"status_code": status, "body": reply}, "error": null});
        if status == 200 {
            done += 1;
            output += &(record.to_string() + "\n");
        } else {
            failed += 1;
            errors += &(record.to_string() + "\n");
        }
    }
    let n = shared.counter.fetch_add(1, Ordering::SeqCst);
    let (output_id, error_id) = (format!("file-out-{n}"), format!("file-err-{n}"));
    {
        let mut files = shared.files.lock().unwrap();
        files.insert(output_id.clone(), output);
        files.insert(error_id.clone(), errors);
    }
    {
        let mut stats = shared.stats.lock().unwrap();
        stats.batches += 1;
        stats.batch_requests += done + failed;
    }
    let id = format!("batch_{n}");
    let batch = json!({
        "id": id, "object": "batch", "endpoint": req["endpoint"], "input_file_id": req["input_file_id"],
        "completion_window": req["completion_window"], "status": "in_progress",
        "output_file_id": output_id, "error_file_id": if failed > 0 { json!(error_id) } else { Value::Null },
        "request_counts": {"total": done + failed, "completed": done, "failed": failed},
    });
    let polls = config.batch_polls;
    let shown = if polls == 0 { completed(&batch) } else { in_progress(&batch) };
    shared.batches.lock().unwrap().insert(id, (batch, polls));
    Json(shown).into_response()
}

fn completed(batch: &Value) -> Value {
    let mut b = batch.clone();
    b["status"] = json!("completed");
    b
}

fn in_progress(batch: &Value) -> Value {
    let mut b = batch.clone();
    b["status"] = json!("in_progress");
    b["output_file_id"] = Value::Null;
    b["error_file_id"] = Value::Null;
    b["request_counts"]["completed"] = json!(0);
    b["request_counts"]["failed"] = json!(0);
    b
}

/// `GET /v1/batches/ID`.
async fn get_batch(
    State(shared): State<Arc<Shared>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    let mut batches = shared.batches.lock().unwrap();
    let Some((batch, left)) = batches.get_mut(&id) else { return not_found("batch") };
    if *left > 0 {
        *left -= 1;
        return Json(in_progress(batch)).into_response();
    }
    Json(completed(batch)).into_response()
}

/// Words a rambling model adds: far past any sensible `max_tokens`.
const RAMBLE_WORDS: usize = 3000;

/// The reply `text` as a rambling model writes it: a JSON reply loses its
/// closing brace and runs on in an unclosed string; prose repeats itself.
fn ramble(text: &str) -> String {
    let trimmed = text.trim_end();
    match trimmed.strip_suffix('}') {
        Some(open) if trimmed.starts_with('{') => {
            let sep = if open.trim_end().ends_with('{') { "" } else { ", " };
            format!("{open}{sep}\"notes\": \"{}", "and moreover the passage says ".repeat(RAMBLE_WORDS / 5))
        }
        _ => format!("{text} {}", "And so it went on. ".repeat(RAMBLE_WORDS / 5)),
    }
}

/// Decrements the in-flight count however the handler ends (even when the
/// client hangs up and the handler is dropped).
struct InFlight<'a>(&'a Shared);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

fn enter(shared: &Shared) -> InFlight<'_> {
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    let mut stats = shared.stats.lock().unwrap();
    stats.requests += 1;
    stats.max_in_flight = stats.max_in_flight.max(now);
    InFlight(shared)
}

/// splitmix64: a uniform number in [0, 1) for request `n`.
fn uniform(seed: u64, n: u64) -> f64 {
    let mut z = seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    RateLimited,
    ServerError,
    Timeout,
    Malformed,
    Truncated,
    Dropped,
}

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::RateLimited => "rate_limited",
            Fault::ServerError => "server_error",
            Fault::Timeout => "timeout",
            Fault::Malformed => "malformed",
            Fault::Truncated => "truncated",
            Fault::Dropped => "dropped",
        }
    }
}

fn draw(f: &Faults, u: f64) -> Option<Fault> {
    let table = [
        (f.rate_limited, Fault::RateLimited),
        (f.server_error, Fault::ServerError),
        (f.timeout, Fault::Timeout),
        (f.malformed, Fault::Malformed),
        (f.truncated, Fault::Truncated),
        (f.dropped, Fault::Dropped),
    ];
    let mut acc = 0.0;
    for (p, fault) in table {
        acc += p;
        if u < acc {
            return Some(fault);
        }
    }
    None
}

/// When a reply waits out the configured latency.
#[derive(Clone, Copy, PartialEq)]
enum Wait {
    /// Before anything else is done.
    First,
    /// Composed first, then sent when the latency since its arrival is
    /// over ([`MockConfig::compose_first`]). A fault waits before it is
    /// sent, too.
    Composed,
    /// Not here (a stream waits inside its body).
    No,
}

/// Runs the checks and faults common to both endpoints. `Ok` means answer
/// normally, at the instant it carries ([`Wait::Composed`]), if any.
async fn misbehave(
    shared: &Shared,
    headers: &HeaderMap,
    wait: Wait,
) -> Result<(MockConfig, Option<std::time::Instant>), Response> {
    let arrived = std::time::Instant::now();
    let config = shared.config.lock().unwrap().clone();
    if let Some(key) = &config.api_key {
        let sent = headers.get("authorization").and_then(|v| v.to_str().ok());
        if sent != Some(&format!("Bearer {key}")) {
            shared.stats.lock().unwrap().unauthorized += 1;
            return Err((
                StatusCode::UNAUTHORIZED,
                Json(json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})),
            )
                .into_response());
        }
    }
    let due = (wait != Wait::No && !config.latency.is_zero()).then(|| arrived + config.latency);
    if let (Some(due), Wait::First) = (due, wait) {
        sleep_until_exactly(due).await;
    }
    let n = shared.counter.fetch_add(1, Ordering::SeqCst);
    let Some(fault) = draw(&config.faults, uniform(config.seed, n)) else {
        return Ok((config, due.filter(|_| wait == Wait::Composed)));
    };
    if let (Some(due), Wait::Composed) = (due, wait) {
        sleep_until_exactly(due).await;
    }
    *shared.stats.lock().unwrap().faults.entry(fault.name()).or_default() += 1;
    Err(match fault {
        Fault::RateLimited => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", config.retry_after_secs.to_string())],
            Json(json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}})),
        )
            .into_response(),
        Fault::ServerError => {
            (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({"error": {"message": "The server had an error"}})))
                .into_response()
        }
        Fault::Timeout => {
            tokio::time::sleep(config.hang).await;
            (StatusCode::GATEWAY_TIMEOUT, "too late").into_response()
        }
        Fault::Malformed => {
            (StatusCode::OK, [("content-type", "application/json")], "{\"choices\": [ not json").into_response()
        }
        Fault::Truncated => {
            // Promise 400 bytes, send 20, then fail the stream: hyper cuts the connection.
            let chunks: Vec<Result<&'static [u8], std::io::Error>> =
                vec![Ok(b"{\"id\": \"mock\", \"choi"), Err(std::io::Error::other("truncated on purpose"))];
            Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "application/json")
                .header("content-length", "400")
                .body(Body::from_stream(futures_util::stream::iter(chunks)))
                .unwrap()
        }
        Fault::Dropped => {
            let chunks: Vec<Result<&'static [u8], std::io::Error>> =
                vec![Err(std::io::Error::other("dropped on purpose"))];
            Response::builder()
                .status(StatusCode::OK)
                .header("content-length", "100")
                .body(Body::from_stream(futures_util::stream::iter(chunks)))
                .unwrap()
        }
    })
}

/// A rough token count for `usage` (the mock is not a tokenizer).
/// The words of `prompt`'s longest whole-block prefix an earlier prompt
/// began with; every whole-block prefix of it is remembered.
fn cached_prefix(shared: &Shared, prompt: &str, block: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut seen = shared.prefixes.lock().unwrap();
    let (mut cached, mut hit) = (0, true);
    for (i, w) in words.iter().enumerate() {
        w.hash(&mut hasher);
        if (i + 1) % block == 0 {
            let h = hasher.finish();
            if hit && seen.contains(&h) {
                cached = i + 1;
            } else {
                hit = false;
            }
            seen.insert(h);
        }
    }
    cached as u64
}

fn rough_tokens(text: &str) -> u64 {
    text.split_whitespace().count().max(1) as u64
}

async fn chat(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    let _guard = enter(&shared);
    // A streamed reply waits for its turn and its latency inside the stream,
    // after the headers, as llama.cpp's server does (keep-alive comments
    // meanwhile).
    let parsed = serde_json::from_str::<Value>(&body).unwrap_or(Value::Null);
    let streamed = parsed["stream"].as_bool().unwrap_or(false);
    let serial = shared.config.lock().unwrap().one_at_a_time;
    let _turn = if serial && !streamed { Some(shared.turn.lock().await) } else { None };
    let wait = match (streamed, shared.config.lock().unwrap().compose_first) {
        (true, _) => Wait::No,
        (false, true) => Wait::Composed,
        (false, false) => Wait::First,
    };
    let limit = shared.config.lock().unwrap().rate_limit;
    let said = match limit.map(|l| count_against(&shared, l, &parsed)) {
        None => None,
        Some(Ok(said)) => Some(said),
        Some(Err(refused)) => return refused,
    };
    let (config, due) = match misbehave(&shared, &headers, wait).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let mut response = compose(&shared, &headers, config, &body, streamed, serial);
    if let Some(said) = said {
        response.headers_mut().extend(said);
    }
    if let Some(due) = due {
        sleep_until_exactly(due).await;
    }
    response
}

/// Counts a request against the rate limit's window: the headers saying
/// what is left, or the 429 past it.
fn count_against(shared: &Shared, limit: RateLimit, req: &Value) -> Result<HeaderMap, Response> {
    let asked = rough_tokens(&prompt_text(req["messages"].as_array().map_or(&[], Vec::as_slice)))
        + req["max_tokens"].as_u64().unwrap_or(0);
    let now = std::time::Instant::now();
    let mut w = shared.window.lock().unwrap();
    if now >= w.0 + limit.window {
        *w = (now, 0, 0);
    }
    let reset = (w.0 + limit.window).saturating_duration_since(now);
    let reset_text = format!("{}ms", reset.as_micros().div_ceil(1000).max(1));
    if w.1 + 1 > limit.requests || w.2 + asked > limit.tokens {
        shared.stats.lock().unwrap().rate_limited += 1;
        let mut r = (
            StatusCode::TOO_MANY_REQUESTS,
            Json(json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}})),
        )
            .into_response();
        r.headers_mut().insert("retry-after", format!("{:.3}", reset.as_secs_f64()).parse().unwrap());
        return Err(r);
    }
    w.1 += 1;
    w.2 += asked;
    let (left_requests, left_tokens) = (limit.requests - w.1, limit.tokens - w.2);
    drop(w);
    {
        let mut stats = shared.stats.lock().unwrap();
        stats.least_remaining_requests =
            Some(stats.least_remaining_requests.map_or(left_requests, |l| l.min(left_requests)));
        stats.least_remaining_tokens = Some(stats.least_remaining_tokens.map_or(left_tokens, |l| l.min(left_tokens)));
    }
    let mut h = HeaderMap::new();
    for (name, value) in [
        ("x-ratelimit-limit-requests", limit.requests.to_string()),
        ("x-ratelimit-limit-tokens", limit.tokens.to_string()),
        ("x-ratelimit-remaining-requests", left_requests.to_string()),
        ("x-ratelimit-remaining-tokens", left_tokens.to_string()),
        ("x-ratelimit-reset-requests", reset_text.clone()),
        ("x-ratelimit-reset-tokens", reset_text.clone()),
    ] {
        h.insert(name, value.parse().unwrap());
    }
    Ok(h)
}

/// A request's messages' texts, one after another (what the mock counts
/// and answers).
fn prompt_text(messages: &[Value]) -> String {
    messages.iter().filter_map(|m| m["content"].as_str()).collect::<Vec<_>>().join("\n")
}

/// A chat request's reply (or its error), as it is to be sent.
fn compose(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    config: MockConfig,
    body: &str,
    streamed: bool,
    serial: bool,
) -> Response {
    let composing = std::time::Instant::now();
    let Ok(req) = serde_json::from_str::<Value>(body) else {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "request body is not JSON"}})))
            .into_response();
    };
    let Some(messages) = req.get("messages").and_then(Value::as_array) else {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "'messages' is required"}})))
            .into_response();
    };
    let prompt = prompt_text(messages);
    let max_tokens = req.get("max_tokens").and_then(Value::as_u64);
    let json_mode = req.get("response_format").is_some();
    if json_mode {
        shared.stats.lock().unwrap().with_json_mode += 1;
        if config.refuse_json_mode {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": "Unsupported parameter: 'response_format' is not supported with this model.", "type": "invalid_request_error"}})),
            )
                .into_response();
        }
    }
    {
        let mut stats = shared.stats.lock().unwrap();
        match max_tokens {
            Some(m) => stats.max_tokens_seen = stats.max_tokens_seen.max(m),
            None => stats.without_max_tokens += 1,
        }
    }
    if let Some(limit) = config.context {
        let asked = rough_tokens(&prompt) + max_tokens.unwrap_or(0);
        if asked > limit {
            shared.stats.lock().unwrap().over_context += 1;
            let message = format!(
                "This model's maximum context length is {limit} tokens. However, you requested {asked} tokens ({} in the messages, {} in the completion). Please reduce the length of the messages or completion.",
                rough_tokens(&prompt),
                max_tokens.unwrap_or(0)
            );
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}})),
            )
                .into_response();
        }
    }
    let last = messages.last().and_then(|m| m.get("content")).and_then(Value::as_str).unwrap_or("");
    let text = if let Some(Responder(respond)) = &config.responder {
        let mut req = req.clone();
        if let Some(p) = headers.get("x-assay-purpose").and_then(|v| v.to_str().ok()) {
            req["x_assay_purpose"] = json!(p);
        }
        respond(&req)
    } else if req.pointer("/response_format/type").and_then(Value::as_str) == Some("json_object") {
        json!({"echo": last.chars().take(60).collect::<String>()}).to_string()
    } else {
        format!("Mock reply to: {}", last.chars().take(60).collect::<String>())
    };
    let (text, finish_reason) = if config.rambling {
        (ramble(&text), "length")
    } else {
        // A reply longer than `max_tokens` is cut there, as a model's is.
        match max_tokens {
            Some(m) if rough_tokens(&text) > m => {
                (text.split_whitespace().take(m as usize).collect::<Vec<_>>().join(" "), "length")
            }
            _ => (text, "stop"),
        }
    };
    {
        let mut stats = shared.stats.lock().unwrap();
        stats.ok += 1;
        if !config.lean {
            *stats.answered.entry(body.to_string()).or_default() += 1;
            *stats.answered_prompts.entry(last.to_string()).or_default() += 1;
        }
    }
    let model = req.get("model").and_then(Value::as_str).unwrap_or("mock-model");
    let mut reply = json!({
        "id": format!("mock-{}", shared.counter.load(Ordering::SeqCst)),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
    });
    if !config.omit_usage {
        let (p, c) = (rough_tokens(&prompt), rough_tokens(&text));
        reply["usage"] = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
        if let Some(block) = config.prefix_cache {
            let cached = cached_prefix(shared, &prompt, block.max(1)).min(p);
            reply["usage"]["prompt_tokens_details"] = json!({"cached_tokens": cached});
            shared.stats.lock().unwrap().cached_tokens += cached;
        }
    }
    shared.stats.lock().unwrap().busy += composing.elapsed();
    if streamed {
        let usage = (!config.omit_usage && req.pointer("/stream_options/include_usage") == Some(&json!(true)))
            .then(|| reply["usage"].clone());
        return stream_reply(shared.clone(), config, model.to_string(), text, finish_reason, usage, serial);
    }
    Json(reply).into_response()
}

/// Counts a stream as in flight until its body is dropped (sent, or its
/// client gone).
struct StreamGuard(Arc<Shared>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The reply as server-sent events, one word per chunk: keep-alive
/// comments while it waits for its turn, then its latency, the words, the
/// finish reason, the usage when asked for, `[DONE]`. Rambling, the words
/// never end (until the client goes).
fn stream_reply(
    shared: Arc<Shared>,
    config: MockConfig,
    model: String,
    text: String,
    finish_reason: &'static str,
    usage: Option<Value>,
    serial: bool,
) -> Response {
    shared.in_flight.fetch_add(1, Ordering::SeqCst);
    let guard = StreamGuard(shared.clone());
    let chunk = move |delta: Value, finish: Option<&str>| {
        let c = json!({"object": "chat.completion.chunk", "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(16);
    tokio::spawn(async move {
        let _guard = guard;
        let _turn = if serial {
            let mut waiting = std::pin::pin!(shared.turn.lock());
            loop {
                tokio::select! {
                    turn = &mut waiting => break Some(turn),
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {
                        if tx.send(Ok(": ping\n\n".into())).await.is_err() {
                            return;
                        }
                    }
                }
            }
        } else {
            None
        };
        if !config.latency.is_zero() {
            sleep_until_exactly(std::time::Instant::now() + config.latency).await;
        }
        let words: Vec<String> = text.split_inclusive(' ').map(str::to_string).collect();
        let endless = config.rambling;
        let mut i = 0usize;
        loop {
            let word = if i < words.len() {
                words[i].clone()
            } else if endless && i < 1_000_000 {
                "and on ".to_string()
            } else {
                break;
            };
            if tx.send(Ok(chunk(json!({"content": word}), None))).await.is_err() {
                return; // the client went away
            }
            i += 1;
            if endless {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        let mut tail = vec![chunk(json!({}), Some(finish_reason))];
        if let Some(u) = usage {
            tail.push(format!("data: {}\n\n", json!({"object": "chat.completion.chunk", "choices": [], "usage": u})));
        }
        tail.push("data: [DONE]\n\n".into());
        for t in tail {
            if tx.send(Ok(t)).await.is_err() {
                return;
            }
        }
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

async fn embeddings(State(shared): State<Arc<Shared>>, headers: HeaderMap, Json(req): Json<Value>) -> Response {
    let _guard = enter(&shared);
    if let Err(r) = misbehave(&shared, &headers, Wait::First).await {
        return r;
    }
    let inputs: Vec<String> = match req.get("input") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => {
            return (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "'input' is required"}})))
                .into_response()
        }
    };
    shared.stats.lock().unwrap().ok += 1;
    // Deterministic 8-dimensional vectors from the text's bytes.
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut v = [0f64; 8];
            for (j, b) in text.bytes().enumerate() {
                v[j % 8] += b as f64;
            }
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
            json!({"object": "embedding", "index": i, "embedding": v.iter().map(|x| x / norm).collect::<Vec<_>>()})
        })
        .collect();
    let tokens: u64 = inputs.iter().map(|t| rough_tokens(t)).sum();
    Json(json!({"object": "list", "data": data, "model": req.get("model").cloned().unwrap_or(json!("mock-embed")),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_draws_follow_the_proportions() {
        let f = Faults::spread(0.2);
        let n = 20_000;
        let faulty = (0..n).filter(|i| draw(&f, uniform(7, *i)).is_some()).count();
        let share = faulty as f64 / n as f64;
        assert!((share - 0.2).abs() < 0.01, "{share}");
    }
}

/// Waits until `deadline`, as closely as the machine allows. tokio's timer
/// has millisecond ticks and rounds a deadline up to the next one: a reply
/// at 100 ms latency reached a keep-alive client after 102.1 ms (median; 0.22
/// ms at latency 0), which a benchmark at the Little's-law bound (calls ×
/// latency ÷ concurrency) would count as the client's overhead. One thread
/// keeps the deadlines and sleeps on a condition variable until the
/// earliest (the kernel's high-resolution timer): 100.9-101.1 ms.
async fn sleep_until_exactly(deadline: std::time::Instant) {
    let (done, woken) = tokio::sync::oneshot::channel();
    Alarms::get().add(deadline, done);
    let _ = woken.await;
}

struct Alarms {
    queue: Mutex<std::collections::BinaryHeap<Alarm>>,
    changed: std::sync::Condvar,
}

struct Alarm {
    deadline: std::time::Instant,
    done: tokio::sync::oneshot::Sender<()>,
}

impl PartialEq for Alarm {
    fn eq(&self, other: &Self) -> bool {
        self.deadline == other.deadline
    }
}
impl Eq for Alarm {}
impl PartialOrd for Alarm {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Alarm {
    /// The earliest deadline first out of the (max-)heap.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.deadline.cmp(&self.deadline)
    }
}

impl Alarms {
    fn get() -> &'static Alarms {
        static ALARMS: Alarms =
            Alarms { queue: Mutex::new(std::collections::BinaryHeap::new()), changed: std::sync::Condvar::new() };
        static RINGER: std::sync::Once = std::sync::Once::new();
        RINGER.call_once(|| {
            std::thread::Builder::new()
                .name("mockllm-alarms".into())
                .spawn(|| ALARMS.ring())
                .expect("a thread for the mock's latency");
        });
        &ALARMS
    }

    fn add(&self, deadline: std::time::Instant, done: tokio::sync::oneshot::Sender<()>) {
        self.queue.lock().unwrap().push(Alarm { deadline, done });
        self.changed.notify_one();
    }

    fn ring(&self) {
        let mut queue = self.queue.lock().unwrap();
        loop {
            let now = std::time::Instant::now();
            while queue.peek().is_some_and(|a| a.deadline <= now) {
                let _ = queue.pop().expect("peeked").done.send(());
            }
            queue = match queue.peek().map(|a| a.deadline - now) {
                Some(wait) => self.changed.wait_timeout(queue, wait).unwrap().0,
                None => self.changed.wait(queue).unwrap(),
            };
        }
    }
}

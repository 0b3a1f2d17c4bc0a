//! The Batch API (OpenAI's, and the providers that offer the same shape):
//! requests that need no answer at once — judging, question generation,
//! graph extraction — sent as one file, answered within the provider's
//! window at [`PRICE_FACTOR`] of the price.
//!
//! [`BatchProvider`] is a [`Provider`]: a job's items call the gateway as
//! they always do, and each call waits in a queue. When no new request has
//! come for `gather` (the job's items are all waiting) or `max_requests`
//! are queued, the queue is written as a JSONL file (`custom_id`, `method`,
//! `url`, `body` per line), uploaded (`POST /files`, `purpose=batch`), a
//! batch is created (`POST /batches`, `completion_window`), polled (`GET
//! /batches/ID`, soon, then less and less often) until it ends, and its output file (`GET
//! /files/ID/content`) answers each waiting call, which the gateway then
//! caches and logs as it does a live reply (priced at the batch rate). A
//! request the batch failed, or that is missing from its output, fails its
//! call with the provider's reason; a batch that failed, expired or was
//! cancelled fails all of its calls.
//!
//! Items whose later calls depend on earlier replies (gleaning, length
//! alignment) send one batch per round of calls.
//!
//! With a [`BatchJournal`] (the job's record), every batch sent is written
//! down, with the hashes of its requests' bodies, before anything waits on
//! it, and marked read once its output is. A job interrupted meanwhile
//! (cancelled, the process killed) and resumed sends none of those requests
//! again: the resumed provider follows the batches left unread, and a call
//! whose body is in one waits for that batch's answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use super::openai::{parse_reply, OpenAiProvider};
use super::{BoxFuture, CallProvider, ChatRequest, Failure, LlmError, Provider, ProviderReply};

/// What a batched call costs against a live one: OpenAI's Batch API is half
/// the price (and so are the others that copy it).
pub const PRICE_FACTOR: f64 = 0.5;

/// How requests are gathered into batches and the batches followed.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSettings {
    /// A batch is sent once no request has come for this long.
    pub gather: Duration,
    /// ... or once this many are queued (OpenAI's limit is 50,000).
    pub max_requests: usize,
    /// The first wait between two requests for a batch's status; each
    /// later wait is twice the last, up to `poll`.
    pub first_poll: Duration,
    /// The longest wait between two status requests.
    pub poll: Duration,
    /// The provider's completion window (`24h` at OpenAI).
    pub window: String,
}

impl Default for BatchSettings {
    fn default() -> Self {
        BatchSettings {
            gather: Duration::from_millis(500),
            max_requests: 50_000,
            first_poll: Duration::from_millis(250),
            poll: Duration::from_secs(30),
            window: "24h".into(),
        }
    }
}

/// A batch's progress, as the provider reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchStatus {
    pub id: String,
    pub status: String,
    pub completed: u64,
    pub failed: u64,
    pub total: u64,
}

/// A batch sent for a job: its id, and each request's `custom_id` with the
/// hash of its body ([`body_hash`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentBatch {
    pub id: String,
    pub requests: Vec<(String, String)>,
}

/// Where a job keeps the batches it sent ([`BatchProvider::with_journal`]).
pub trait BatchJournal: Send + Sync {
    /// The batches sent and not yet read.
    fn pending(&self) -> BoxFuture<'_, Result<Vec<SentBatch>, String>>;
    /// Records a batch just created.
    fn sent<'a>(&'a self, batch: &'a SentBatch) -> BoxFuture<'a, Result<(), String>>;
    /// Records that a batch's output was read (or that it ended without one).
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>>;
    /// Records a batch's progress as the provider reported it (when it changed).
    fn progress<'a>(&'a self, _status: &'a BatchStatus) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// A [`BatchJournal`] in memory (tests, and a run that keeps no record).
#[derive(Default)]
pub struct MemoryJournal {
    batches: Mutex<Vec<(SentBatch, bool)>>,
}

impl MemoryJournal {
    /// Every batch recorded, and whether it was read.
    pub fn all(&self) -> Vec<(SentBatch, bool)> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl BatchJournal for MemoryJournal {
    fn pending(&self) -> BoxFuture<'_, Result<Vec<SentBatch>, String>> {
        let pending = self.all().into_iter().filter(|(_, read)| !read).map(|(b, _)| b).collect();
        Box::pin(async move { Ok(pending) })
    }
    fn sent<'a>(&'a self, batch: &'a SentBatch) -> BoxFuture<'a, Result<(), String>> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner()).push((batch.clone(), false));
        Box::pin(async { Ok(()) })
    }
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>> {
        for (b, read) in self.batches.lock().unwrap_or_else(|e| e.into_inner()).iter_mut() {
            if b.id == id {
                *read = true;
            }
        }
        Box::pin(async { Ok(()) })
    }
}

/// A request body's identity across processes: SHA-256 of its JSON text.
pub fn body_hash(body: &Value) -> String {
    super::hex(&Sha256::digest(body.to_string().as_bytes()))
}

type Answer = Result<ProviderReply, Failure>;
type Waiting = oneshot::Sender<Answer>;
/// A batch's output and errors: each request's reply body, or why it failed.
type Lines = HashMap<String, Result<String, LlmError>>;

struct Queue {
    /// Each request's task, body and caller.
    pending: Vec<(String, Value, Waiting)>,
    /// A sender of batches is running.
    sending: bool,
    next_id: u64,
}

/// Batches left unread by an earlier run, followed by this one. One body
/// may be several lines (a judgment's repeats are identical requests, each
/// its own sample): the k-th call with a body gets the k-th line.
#[derive(Default)]
struct Following {
    /// Lines of followed batches not yet given to a call, by body hash.
    slots: HashMap<String, usize>,
    /// Calls waiting for a followed batch, by body hash, in arrival order,
    /// each with its request (its reply is read against it, as a live one).
    waiting: HashMap<String, std::collections::VecDeque<(Waiting, Value)>>,
    /// Lines of followed batches that ended before their call came: the
    /// `custom_id` and the line (or why the batch gave none).
    answered: HashMap<String, std::collections::VecDeque<(String, Option<Result<String, LlmError>>)>>,
}

/// A [`Provider`] that answers chat requests through the Batch API of an
/// OpenAI-compatible endpoint (see the module docs).
pub struct BatchProvider {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: OpenAiProvider,
    settings: BatchSettings,
    queue: Mutex<Queue>,
    /// Batches sent or followed so far, newest last, as last polled.
    batches: Mutex<Vec<BatchStatus>>,
    journal: Option<Arc<dyn BatchJournal>>,
    /// The journal's unread batches, read once, at the first call.
    resumed: tokio::sync::OnceCell<()>,
    following: Mutex<Following>,
    /// The tasks sending and following batches: stopped with the provider
    /// (its job ended or cancelled), so that a batch in flight stays unread
    /// in the journal for the job's resumption to follow.
    tasks: Mutex<Vec<tokio::task::AbortHandle>>,
}

impl Drop for BatchProvider {
    fn drop(&mut self) {
        for task in self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
            task.abort();
        }
    }
}

impl BatchProvider {
    pub fn new(endpoint: OpenAiProvider, settings: BatchSettings) -> BatchProvider {
        BatchProvider::with(endpoint, settings, None)
    }

    /// Records every batch in `journal`, and follows those it holds unread.
    pub fn with_journal(
        endpoint: OpenAiProvider,
        settings: BatchSettings,
        journal: Arc<dyn BatchJournal>,
    ) -> BatchProvider {
        BatchProvider::with(endpoint, settings, Some(journal))
    }

    fn with(
        endpoint: OpenAiProvider,
        settings: BatchSettings,
        journal: Option<Arc<dyn BatchJournal>>,
    ) -> BatchProvider {
        BatchProvider {
            inner: Arc::new(Inner {
                endpoint,
                settings,
                queue: Mutex::new(Queue { pending: Vec::new(), sending: false, next_id: 0 }),
                batches: Mutex::new(Vec::new()),
                journal,
                resumed: tokio::sync::OnceCell::new(),
                following: Mutex::new(Following::default()),
                tasks: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The batches sent or followed so far, as last polled.
    pub fn batches(&self) -> Vec<BatchStatus> {
        self.inner.batches.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let handle = tokio::spawn(task);
        self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()).push(handle.abort_handle());
    }

    /// Follows the journal's unread batches (once).
    async fn resume(&self) {
        let Some(journal) = self.inner.journal.clone() else { return };
        self.inner
            .resumed
            .get_or_init(|| async {
                let pending = match journal.pending().await {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!(error = %e, "the job's batches could not be read: their requests go again");
                        return;
                    }
                };
                for batch in pending {
                    {
                        let mut f = self.inner.following.lock().unwrap_or_else(|e| e.into_inner());
                        for (_, hash) in &batch.requests {
                            *f.slots.entry(hash.clone()).or_default() += 1;
                        }
                    }
                    tracing::info!(batch = %batch.id, requests = batch.requests.len(), "following a batch sent before");
                    self.spawn(follow(self.inner.clone(), batch));
                }
            })
            .await;
    }

    /// `tx` answered from a followed batch (now, or when it ends), or given back.
    fn from_followed(&self, body: &Value, tx: Waiting) -> Option<Waiting> {
        let mut f = self.inner.following.lock().unwrap_or_else(|e| e.into_inner());
        if f.slots.is_empty() {
            return Some(tx);
        }
        let hash = body_hash(body);
        match f.slots.get_mut(&hash) {
            Some(n) if *n > 0 => *n -= 1,
            _ => return Some(tx),
        }
        match f.answered.get_mut(&hash).and_then(|a| a.pop_front()) {
            Some((custom, line)) => {
                let _ = tx.send(answer_of(line, &custom, body));
            }
            None => f.waiting.entry(hash).or_default().push_back((tx, body.clone())),
        }
        None
    }
}

impl Provider for BatchProvider {
    fn context_window(&self) -> BoxFuture<'_, Option<u64>> {
        self.inner.endpoint.context_window()
    }
    fn name(&self) -> CallProvider {
        self.inner.endpoint.name()
    }
    fn base_url(&self) -> &str {
        self.inner.endpoint.base_url()
    }
    fn default_model(&self) -> &str {
        self.inner.endpoint.default_model()
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ProviderReply, Failure>> {
        Box::pin(async move {
            self.resume().await;
            let body = self.inner.endpoint.chat_body(req);
            let (tx, rx) = oneshot::channel();
            if let Some(tx) = self.from_followed(&body, tx) {
                let start = {
                    let mut q = self.inner.queue.lock().unwrap_or_else(|e| e.into_inner());
                    q.pending.push((req.purpose.clone(), body, tx));
                    !std::mem::replace(&mut q.sending, true)
                };
                if start {
                    self.spawn(send_batches(self.inner.clone()));
                }
            }
            rx.await.unwrap_or_else(|_| {
                Err(Failure { error: LlmError::Batch("the batch sender stopped".into()), attempts: 1 })
            })
        })
    }
}

/// Sends the queue as batches until it stays empty.
async fn send_batches(inner: Arc<Inner>) {
    loop {
        // Gather: wait until no request has come for `gather`.
        let mut seen = usize::MAX;
        loop {
            let now = inner.queue.lock().unwrap_or_else(|e| e.into_inner()).pending.len();
            if now == seen || now >= inner.settings.max_requests {
                break;
            }
            seen = now;
            tokio::time::sleep(inner.settings.gather).await;
        }
        let (taken, first_id) = {
            let mut q = inner.queue.lock().unwrap_or_else(|e| e.into_inner());
            if q.pending.is_empty() {
                q.sending = false;
                return;
            }
            let n = q.pending.len().min(inner.settings.max_requests);
            let taken: Vec<(String, Value, Waiting)> = q.pending.drain(..n).collect();
            let first = q.next_id;
            q.next_id += taken.len() as u64;
            (taken, first)
        };
        // `TASK-N`: the output file says which task each line was.
        let bodies: Vec<(String, Value)> = taken
            .iter()
            .enumerate()
            .map(|(i, (task, body, _))| (format!("{task}-{}", first_id + i as u64), body.clone()))
            .collect();
        let mut lines = match run_batch(&inner, &bodies).await {
            Ok(lines) => lines,
            Err(e) => {
                let message = e.to_string();
                for (_, _, waiting) in taken {
                    let _ = waiting.send(Err(Failure { error: LlmError::Batch(message.clone()), attempts: 1 }));
                }
                continue;
            }
        };
        for ((id, body), (_, _, waiting)) in bodies.iter().zip(taken) {
            let _ = waiting.send(answer_of(lines.remove(id), id, body));
        }
    }
}

/// A call's answer from its batch's line (`body`: the request, for the
/// model's name when the reply has none).
fn answer_of(line: Option<Result<String, LlmError>>, id: &str, body: &Value) -> Answer {
    match line {
        Some(Ok(text)) => parse_reply(&text, body)
            .map(|r| ProviderReply { batched: true, ..r })
            .map_err(|error| Failure { error, attempts: 1 }),
        Some(Err(error)) => Err(Failure { error, attempts: 1 }),
        None => Err(Failure { error: LlmError::Batch(format!("{id} is not in the batch's output")), attempts: 1 }),
    }
}

/// Follows a batch an earlier run sent: answers the calls waiting for its
/// requests, and keeps the answers of calls yet to come.
async fn follow(inner: Arc<Inner>, batch: SentBatch) {
    let outcome = collect(&inner, &batch.id, batch.requests.len()).await;
    {
        let mut f = inner.following.lock().unwrap_or_else(|e| e.into_inner());
        for (custom, hash) in &batch.requests {
            let line = match &outcome {
                Ok(lines) => lines.get(custom).cloned(),
                Err(e) => Some(Err(e.clone())),
            };
            match f.waiting.get_mut(hash).and_then(|w| w.pop_front()) {
                Some((waiting, body)) => {
                    let _ = waiting.send(answer_of(line, custom, &body));
                }
                None => f.answered.entry(hash.clone()).or_default().push_back((custom.clone(), line)),
            }
        }
    }
    if let Some(journal) = &inner.journal {
        if let Err(e) = journal.read(&batch.id).await {
            tracing::warn!(batch = %batch.id, error = %e, "the batch could not be marked read");
        }
    }
}

/// One batch from upload to output, recorded in the journal before it is
/// waited for and marked read after.
async fn run_batch(inner: &Inner, bodies: &[(String, Value)]) -> Result<Lines, LlmError> {
    let id = submit(inner, bodies).await?;
    if let Some(journal) = &inner.journal {
        let sent =
            SentBatch { id: id.clone(), requests: bodies.iter().map(|(c, b)| (c.clone(), body_hash(b))).collect() };
        journal.sent(&sent).await.map_err(|e| LlmError::Batch(format!("batch {id} could not be recorded: {e}")))?;
    }
    let lines = collect(inner, &id, bodies.len()).await;
    if let Some(journal) = &inner.journal {
        if let Err(e) = journal.read(&id).await {
            tracing::warn!(batch = %id, error = %e, "the batch could not be marked read");
        }
    }
    lines
}

/// Uploads `bodies` as a JSONL file and creates their batch; its id.
async fn submit(inner: &Inner, bodies: &[(String, Value)]) -> Result<String, LlmError> {
    let endpoint = &inner.endpoint;
    let jsonl: String = bodies
        .iter()
        .map(|(id, body)| {
            json!({"custom_id": id, "method": "POST", "url": "/v1/chat/completions", "body": body}).to_string() + "\n"
        })
        .collect();
    let file = endpoint.upload_batch_file("assay-batch.jsonl", &jsonl).await?;
    let created = endpoint
        .api(
            reqwest::Method::POST,
            "batches",
            Some(&json!({"input_file_id": file, "endpoint": "/v1/chat/completions", "completion_window": inner.settings.window})),
        )
        .await?;
    let batch = read_json(&created)?;
    let id = batch["id"].as_str().ok_or_else(|| LlmError::Parse("the created batch has no id".into()))?.to_string();
    tracing::info!(batch = %id, requests = bodies.len(), "batch sent");
    Ok(id)
}

/// Polls batch `id` (of `requests`) until it ends, soon and then less
/// often; its output and errors by `custom_id`.
async fn collect(inner: &Inner, id: &str, requests: usize) -> Result<Lines, LlmError> {
    let endpoint = &inner.endpoint;
    let mut wait = inner.settings.first_poll.min(inner.settings.poll);
    let batch = loop {
        let batch = read_json(&endpoint.api(reqwest::Method::GET, &format!("batches/{id}"), None).await?)?;
        let status = BatchStatus {
            id: id.to_string(),
            status: batch["status"].as_str().unwrap_or("").to_string(),
            completed: batch.pointer("/request_counts/completed").and_then(Value::as_u64).unwrap_or(0),
            failed: batch.pointer("/request_counts/failed").and_then(Value::as_u64).unwrap_or(0),
            total: batch.pointer("/request_counts/total").and_then(Value::as_u64).unwrap_or(requests as u64),
        };
        let changed = {
            let mut batches = inner.batches.lock().unwrap_or_else(|e| e.into_inner());
            match batches.iter_mut().find(|b| b.id == id) {
                Some(b) if *b == status => false,
                Some(b) => {
                    *b = status.clone();
                    true
                }
                None => {
                    batches.push(status.clone());
                    true
                }
            }
        };
        if let (true, Some(journal)) = (changed, &inner.journal) {
            if let Err(e) = journal.progress(&status).await {
                tracing::warn!(batch = %id, error = %e, "the batch's progress could not be recorded");
            }
        }
        match status.status.as_str() {
            "completed" => break batch,
            "failed" | "expired" | "cancelled" | "cancelling" => {
                let why = batch
                    .pointer("/errors/data/0/message")
                    .and_then(Value::as_str)
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                return Err(LlmError::Batch(format!("batch {id} {}{why}", status.status)));
            }
            _ => {}
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(inner.settings.poll);
    };
    let mut out = HashMap::new();
    for key in ["error_file_id", "output_file_id"] {
        let Some(file) = batch[key].as_str().filter(|f| !f.is_empty()) else { continue };
        let text = endpoint.api(reqwest::Method::GET, &format!("files/{file}/content"), None).await?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v = read_json(line)?;
            let Some(custom) = v["custom_id"].as_str() else { continue };
            let status = v.pointer("/response/status_code").and_then(Value::as_u64).unwrap_or(0);
            let answer = if status == 200 {
                Ok(v.pointer("/response/body").map(Value::to_string).unwrap_or_default())
            } else {
                let message = v
                    .pointer("/response/body/error/message")
                    .or_else(|| v.pointer("/error/message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                Err(LlmError::Http { status: status as u16, message: message.chars().take(200).collect() })
            };
            out.insert(custom.to_string(), answer);
        }
    }
    Ok(out)
}

fn read_json(text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text).map_err(|e| LlmError::Parse(format!("{e} in a Batch API reply")))
}

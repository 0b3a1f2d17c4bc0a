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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::openai::{parse_reply, OpenAiProvider};
use super::{BoxFuture, ChatRequest, Failure, LlmError, Provider, ProviderReply};

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
    /// How long after a batch is created its status is first asked for;
    /// each later wait is twice the last, up to `poll`.
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

type Waiting = oneshot::Sender<Result<ProviderReply, Failure>>;

struct Queue {
    /// Each request's task, body and caller.
    pending: Vec<(String, Value, Waiting)>,
    /// A sender of batches is running.
    sending: bool,
    next_id: u64,
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
    /// Batches sent so far, newest last (for progress and the job's record).
    batches: Mutex<Vec<BatchStatus>>,
}

impl BatchProvider {
    pub fn new(endpoint: OpenAiProvider, settings: BatchSettings) -> BatchProvider {
        BatchProvider {
            inner: Arc::new(Inner {
                endpoint,
                settings,
                queue: Mutex::new(Queue { pending: Vec::new(), sending: false, next_id: 0 }),
                batches: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The batches sent so far, as last polled.
    pub fn batches(&self) -> Vec<BatchStatus> {
        self.inner.batches.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Provider for BatchProvider {
    fn context_window(&self) -> BoxFuture<'_, Option<u64>> {
        self.inner.endpoint.context_window()
    }
    fn name(&self) -> &str {
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
            let body = self.inner.endpoint.chat_body(req);
            let (tx, rx) = oneshot::channel();
            let start = {
                let mut q = self.inner.queue.lock().unwrap_or_else(|e| e.into_inner());
                q.pending.push((req.purpose.clone(), body, tx));
                !std::mem::replace(&mut q.sending, true)
            };
            if start {
                tokio::spawn(send_batches(self.inner.clone()));
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
        let mut replies = match run_batch(&inner, &bodies).await {
            Ok(replies) => replies,
            Err(e) => {
                let message = e.to_string();
                for (_, _, waiting) in taken {
                    let _ = waiting.send(Err(Failure { error: LlmError::Batch(message.clone()), attempts: 1 }));
                }
                continue;
            }
        };
        for ((id, body), (_, _, waiting)) in bodies.iter().zip(taken) {
            let answer = match replies.remove(id) {
                Some(Ok(text)) => parse_reply(&text, body)
                    .map(|r| ProviderReply { batched: true, ..r })
                    .map_err(|error| Failure { error, attempts: 1 }),
                Some(Err(error)) => Err(Failure { error, attempts: 1 }),
                None => {
                    Err(Failure { error: LlmError::Batch(format!("{id} is not in the batch's output")), attempts: 1 })
                }
            };
            let _ = waiting.send(answer);
        }
    }
}

/// One batch from upload to output: each request's reply body (or why it
/// failed), by `custom_id`.
async fn run_batch(
    inner: &Inner,
    bodies: &[(String, Value)],
) -> Result<HashMap<String, Result<String, LlmError>>, LlmError> {
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
    let mut batch = read_json(&created)?;
    let id = batch["id"].as_str().ok_or_else(|| LlmError::Parse("the created batch has no id".into()))?.to_string();
    tracing::info!(batch = %id, requests = bodies.len(), "batch sent");
    let mut wait = inner.settings.first_poll.min(inner.settings.poll);
    loop {
        let status = BatchStatus {
            id: id.clone(),
            status: batch["status"].as_str().unwrap_or("").to_string(),
            completed: batch.pointer("/request_counts/completed").and_then(Value::as_u64).unwrap_or(0),
            failed: batch.pointer("/request_counts/failed").and_then(Value::as_u64).unwrap_or(0),
            total: batch.pointer("/request_counts/total").and_then(Value::as_u64).unwrap_or(bodies.len() as u64),
        };
        {
            let mut batches = inner.batches.lock().unwrap_or_else(|e| e.into_inner());
            match batches.iter_mut().find(|b| b.id == id) {
                Some(b) => *b = status.clone(),
                None => batches.push(status.clone()),
            }
        }
        match status.status.as_str() {
            "completed" => break,
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
        batch = read_json(&endpoint.api(reqwest::Method::GET, &format!("batches/{id}"), None).await?)?;
    }
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

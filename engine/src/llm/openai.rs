//! The `openai` provider: any OpenAI-compatible chat-completions endpoint
//! (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio) over reqwest.
//!
//! - At most `concurrency` requests are in flight (a semaphore; a permit is
//!   held only while a request is on the wire, not during back-off).
//! - Each attempt has `timeout`; up to `max_attempts` attempts are made.
//! - Retried: 429, 5xx, timeouts, connection failures (refused, reset,
//!   closed early, truncated bodies) and bodies that do not parse. Not
//!   retried: other 4xx (a wrong key or model will not get better).
//! - Back-off is exponential with full jitter (a uniform wait between 0 and
//!   `min(max_backoff, base_backoff · 2^(attempt-1))`), except that a
//!   `Retry-After` header is honoured: the wait is then at least what the
//!   server asked for.
//! - Token counts come from the reply's `usage`; when a server sends none,
//!   they are counted with tiktoken (`cl100k_base`).
//! - The model's context window: the configured one (`--llm-context`), else
//!   what `GET /models` says (vLLM's `max_model_len`, llama.cpp's `n_ctx`,
//!   `context_length`), else 128k for OpenAI's own models and
//!   [`DEFAULT_CONTEXT`] for any other. A server's "context exceeded" error
//!   is [`LlmError::ContextExceeded`], never retried.
//! - JSON mode (`response_format: json_object`) is sent when a task asks
//!   for JSON ([`JsonMode::Auto`]); an endpoint that refuses the field is
//!   asked again without it, and from then on never with it.
//! - Streaming (`stream`, for local servers such as llama.cpp's): the reply
//!   is read as it is generated. The attempt's timeout then counts from the
//!   first token, not from when the request was queued inside a server that
//!   answers one request at a time (its keep-alive comments are not
//!   tokens; a request that never starts still fails, after ten timeouts);
//!   a reply running far past `max_tokens` (a server that ignores the
//!   field) is cut here; and a request given up closes its connection
//!   while the model generates, so the server stops generating for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::sync::Semaphore;

use super::ratelimit::{self, RateGate, Reading};
use super::{
    count_prompt_tokens, ApiKey, BoxFuture, CallProvider, ChatRequest, EmbedReply, Failure, LlmError, Provider,
    ProviderReply,
};
use crate::chunk::{Bpe, Tokenizer};

/// Settings of an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Up to and including `/v1`, e.g. `https://api.openai.com/v1` or `http://localhost:8000/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    pub concurrency: usize,
    pub timeout: Duration,
    pub max_attempts: u32,
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    /// Refuse loopback, private and link-local addresses, and follow no
    /// redirect (for URLs a member chose; see [`super::outbound`]).
    pub public_only: bool,
    /// The model's context window in tokens; `None`: ask the endpoint.
    pub context: Option<u64>,
    pub json_mode: JsonMode,
    /// Read replies as a stream (see the module docs).
    pub stream: bool,
    /// A limit on requests in flight shared with other processes (a team
    /// deployment): each request also holds one of its slots on the wire.
    pub shared_limit: Option<SharedLimitHandle>,
    /// Headers sent with every request besides the bearer key (an `http`
    /// method's, e.g. LightRAG's `X-API-Key`); their values are kept like a key.
    pub headers: Vec<(String, ApiKey)>,
}

/// A limit on requests in flight that several processes share (
/// the configured concurrency is a total for the deployment, kept in its
/// database). A request holds a slot while it is on the wire, beside its
/// permit of this process's own semaphore, and gives it back after.
pub trait SharedLimit: Send + Sync {
    /// Waits for a free slot and holds it; its number.
    fn acquire(&self) -> BoxFuture<'_, Result<i64, String>>;
    /// Gives a slot back (at once, without waiting).
    fn release(&self, slot: i64);
}

/// A [`SharedLimit`] in the settings.
#[derive(Clone)]
pub struct SharedLimitHandle(pub Arc<dyn SharedLimit>);

impl std::fmt::Debug for SharedLimitHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedLimit")
    }
}

/// A slot of a [`SharedLimit`], given back when dropped (however the
/// request ends).
struct HeldSlot<'a>(&'a dyn SharedLimit, i64);

impl Drop for HeldSlot<'_> {
    fn drop(&mut self) {
        self.0.release(self.1);
    }
}

/// A request's permit, rate-gate admission and shared slot (see
/// `OpenAiProvider::admit`); fields drop in declaration order, the slot
/// first.
struct OnTheWire<'a> {
    _slot: Option<HeldSlot<'a>>,
    _admitted: super::ratelimit::Admitted<'a>,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

/// The context window assumed when neither the settings nor the endpoint
/// say: what llama.cpp servers and most current open models offer, and
/// below every model OpenAI serves.
pub const DEFAULT_CONTEXT: u64 = 8192;

/// Whether requests that want JSON carry `response_format: json_object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonMode {
    /// Sent, unless the endpoint refuses it once (then never again).
    #[default]
    Auto,
    /// Always sent.
    On,
    /// Never sent; the prompt's instructions alone ask for JSON.
    Off,
}

impl JsonMode {
    pub fn parse(s: &str) -> Result<JsonMode, LlmError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(JsonMode::Auto),
            "on" => Ok(JsonMode::On),
            "off" => Ok(JsonMode::Off),
            other => Err(LlmError::Config(format!("JSON mode must be auto, on or off, not \"{other}\""))),
        }
    }
}

impl OpenAiConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            model: model.into(),
            api_key: None,
            concurrency: 8,
            timeout: Duration::from_secs(120),
            max_attempts: 6,
            base_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(60),
            public_only: false,
            context: None,
            json_mode: JsonMode::Auto,
            stream: false,
            shared_limit: None,
            headers: Vec::new(),
        }
    }
}

pub struct OpenAiProvider {
    config: OpenAiConfig,
    client: reqwest::Client,
    permits: Arc<Semaphore>,
    /// The context window, once known.
    context: tokio::sync::OnceCell<u64>,
    /// The endpoint refused `response_format` once.
    json_refused: AtomicBool,
    /// What the endpoint's rate-limit headers leave (see [`super::ratelimit`]).
    gate: RateGate,
}

impl OpenAiProvider {
    pub fn new(config: OpenAiConfig) -> Result<OpenAiProvider, LlmError> {
        if config.concurrency == 0 {
            return Err(LlmError::Config("concurrency must be at least 1".into()));
        }
        if config.max_attempts == 0 {
            return Err(LlmError::Config("max attempts must be at least 1".into()));
        }
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base URL must start with http:// or https://, not \"{}\"",
                config.base_url
            )));
        }
        let mut builder = reqwest::Client::builder().pool_max_idle_per_host(config.concurrency);
        if config.public_only {
            super::outbound::check_url(&config.base_url).map_err(LlmError::Config)?;
            // Names resolve to checked addresses only; no redirect or proxy
            // may take the request somewhere that was not checked.
            builder = builder
                .dns_resolver(Arc::new(super::outbound::GuardedResolver))
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy();
        }
        let client = builder.build().map_err(|e| LlmError::Config(e.to_string()))?;
        let permits = Arc::new(Semaphore::new(config.concurrency));
        Ok(OpenAiProvider {
            config,
            client,
            permits,
            context: tokio::sync::OnceCell::new(),
            json_refused: AtomicBool::new(false),
            gate: RateGate::default(),
        })
    }

    /// The `chat/completions` body of `req` (not streamed).
    pub(crate) fn chat_body(&self, req: &ChatRequest) -> serde_json::Value {
        let mut body = json!({
            "model": req.model.as_deref().unwrap_or(&self.config.model),
            "messages": req.messages,
        });
        if let Some(t) = req.temperature {
            // As written (0.7), not widened from f32 (0.699999988…).
            body["temperature"] = json!(t.to_string().parse::<f64>().unwrap_or(f64::from(t)));
        }
        if let Some(max) = req.max_tokens {
            body["max_tokens"] = json!(max);
        }
        let json_mode = match self.config.json_mode {
            JsonMode::On => true,
            JsonMode::Off => false,
            JsonMode::Auto => !self.json_refused.load(Ordering::Relaxed),
        };
        if req.json && json_mode {
            body["response_format"] = json!({"type": "json_object"});
        }
        body
    }

    /// One request to the endpoint's other APIs (files, batches), with the
    /// retries, key and headers of chat requests: `POST` with a JSON body,
    /// or `GET` without one; the reply's text.
    pub(crate) async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<String, LlmError> {
        self.retrying(path, || async {
            let mut request = self
                .client
                .request(method.clone(), format!("{}/{path}", self.config.base_url))
                .timeout(self.config.timeout);
            if let Some(b) = body {
                request = request.json(b);
            }
            self.send_api(request).await
        })
        .await
        .map(|(text, _)| text)
        .map_err(|f| f.error)
    }

    /// Uploads `jsonl` as a file for the Batch API (`POST /files`,
    /// `purpose=batch`); the file's id.
    pub(crate) async fn upload_batch_file(&self, name: &str, jsonl: &str) -> Result<String, LlmError> {
        let text = self
            .retrying("files", || async {
                let part = reqwest::multipart::Part::text(jsonl.to_string())
                    .file_name(name.to_string())
                    .mime_str("application/jsonl")
                    .map_err(|e| (LlmError::Config(e.to_string()), None))?;
                let form = reqwest::multipart::Form::new().text("purpose", "batch").part("file", part);
                let request = self
                    .client
                    .post(format!("{}/files", self.config.base_url))
                    .timeout(self.config.timeout)
                    .multipart(form);
                self.send_api(request).await
            })
            .await
            .map_err(|f| f.error)?
            .0;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| LlmError::Parse(format!("{e} in {}", preview(&text))))?;
        v["id"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| LlmError::Parse(format!("the uploaded file has no id: {}", preview(&text))))
    }

    /// `request` with the key and the configured headers.
    fn authorized(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key.expose());
        }
        for (name, value) in &self.config.headers {
            request = request.header(name.as_str(), value.expose());
        }
        request
    }

    /// Sends a request built for the other APIs with the key and headers.
    async fn send_api(&self, request: reqwest::RequestBuilder) -> Result<String, (LlmError, Option<Duration>)> {
        let response = self.authorized(request).send().await.map_err(|e| (self.transport_error(e), None))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| (self.transport_error(e), None))?;
        if !status.is_success() {
            return Err((LlmError::Http { status: status.as_u16(), message: error_message(&text) }, None));
        }
        Ok(text)
    }

    /// What `GET /models` says of the model's context, if anything.
    async fn probe_context(&self) -> Option<u64> {
        let mut request = self.client.get(format!("{}/models", self.config.base_url)).timeout(Duration::from_secs(10));
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key.expose());
        }
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let list: serde_json::Value = response.json().await.ok()?;
        let models = list["data"].as_array()?;
        let entry = models
            .iter()
            .find(|m| m["id"].as_str() == Some(self.config.model.as_str()))
            .or_else(|| (models.len() == 1).then(|| &models[0]))?;
        ["/max_model_len", "/context_length", "/context_window", "/meta/n_ctx", "/meta/n_ctx_train"]
            .iter()
            .find_map(|p| entry.pointer(p).and_then(serde_json::Value::as_u64))
            .filter(|n| *n > 0)
    }

    /// The context window when nothing says otherwise.
    fn assumed_context(&self) -> u64 {
        let m = self.config.model.as_str();
        let openai = self.config.base_url.starts_with("https://api.openai.com/");
        if openai && ["gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o1", "o3", "o4"].iter().any(|p| m.starts_with(p)) {
            128_000
        } else {
            DEFAULT_CONTEXT
        }
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// What the rate-limit gate has held back, and what the endpoint last
    /// said was left.
    pub fn rate_stats(&self) -> super::ratelimit::GateStats {
        self.gate.stats()
    }

    /// A slot of the deployment's shared limit, when there is one.
    async fn shared_slot(&self) -> Result<Option<HeldSlot<'_>>, (LlmError, Option<Duration>)> {
        let Some(SharedLimitHandle(limit)) = &self.config.shared_limit else { return Ok(None) };
        let slot =
            limit.acquire().await.map_err(|e| (LlmError::Config(format!("the shared LLM budget: {e}")), None))?;
        Ok(Some(HeldSlot(limit.as_ref(), slot)))
    }

    /// What a request holds while it is on the wire, taken in one order:
    /// this process's permit, then the rate gate's admission (a request
    /// waiting for the provider's budget holds no shared slot), then the
    /// deployment's shared slot. Dropped together when the attempt ends.
    async fn admit(&self, body: &serde_json::Value) -> Result<OnTheWire<'_>, (LlmError, Option<Duration>)> {
        let permit = self.permits.acquire().await.map_err(|_| (LlmError::Cancelled, None))?;
        let admitted = self.gate.admit(rate_tokens(body)).await;
        let slot = self.shared_slot().await?;
        Ok(OnTheWire { _slot: slot, _admitted: admitted, _permit: permit })
    }

    /// One attempt: the body of a 2xx reply, or an error and the server's `Retry-After`.
    async fn post(&self, path: &str, body: &serde_json::Value) -> Result<String, (LlmError, Option<Duration>)> {
        self.post_for(path, body, None).await
    }

    /// POSTs `body`; with `purpose`, the request says which task it is in
    /// an `X-Assay-Purpose` header (for a proxy's logs, or the mock server
    /// answering each task as the offline provider does).
    async fn post_for(
        &self,
        path: &str,
        body: &serde_json::Value,
        purpose: Option<&str>,
    ) -> Result<String, (LlmError, Option<Duration>)> {
        let _on_the_wire = self.admit(body).await?;
        let url =
            if path.is_empty() { self.config.base_url.clone() } else { format!("{}/{path}", self.config.base_url) };
        let mut request = self.client.post(url).timeout(self.config.timeout).json(body);
        if let Some(p) = purpose {
            request = request.header("x-assay-purpose", p);
        }
        let response = self.authorized(request).send().await.map_err(|e| (self.transport_error(e), None))?;
        let status = response.status();
        self.gate.read(Reading::of(response.headers()));
        let retry_after = ratelimit::retry_after(response.headers());
        let text = response.text().await.map_err(|e| (self.transport_error(e), None))?;
        if !status.is_success() {
            let message = error_message(&text);
            if mentions_context_overflow(&text) {
                return Err((LlmError::ContextExceeded(message), None));
            }
            return Err((LlmError::Http { status: status.as_u16(), message }, retry_after));
        }
        Ok(text)
    }

    /// `body` to `chat/completions`, with retries: the reply and the attempts it took.
    async fn send_chat(&self, req: &ChatRequest, body: &serde_json::Value) -> Result<(ProviderReply, u32), Failure> {
        self.retrying(&req.purpose, || async {
            if self.config.stream {
                return self.post_stream(body, &req.purpose, req.max_tokens).await;
            }
            let text = self.post_for("chat/completions", body, Some(&req.purpose)).await?;
            parse_reply(&text, body).map_err(|e| (e, None))
        })
        .await
    }

    /// One streamed attempt at `chat/completions`: the reply assembled from
    /// its chunks (see the module docs for the timing and the cut).
    async fn post_stream(
        &self,
        body: &serde_json::Value,
        purpose: &str,
        max_tokens: Option<u32>,
    ) -> Result<ProviderReply, (LlmError, Option<Duration>)> {
        let _on_the_wire = self.admit(body).await?;
        let timeout = self.config.timeout;
        let queued_until = tokio::time::Instant::now() + timeout.saturating_mul(10);
        let request = self
            .client
            .post(format!("{}/chat/completions", self.config.base_url))
            .header("x-assay-purpose", purpose)
            .json(body);
        let request = self.authorized(request);
        let timed_out = || (LlmError::Timeout(timeout.as_secs()), None);
        let mut response = match tokio::time::timeout_at(queued_until, request.send()).await {
            Err(_) => return Err(timed_out()),
            Ok(r) => r.map_err(|e| (self.transport_error(e), None))?,
        };
        let status = response.status();
        self.gate.read(Reading::of(response.headers()));
        if !status.is_success() {
            let retry_after = ratelimit::retry_after(response.headers());
            let text = match tokio::time::timeout_at(queued_until, response.text()).await {
                Err(_) => return Err(timed_out()),
                Ok(t) => t.map_err(|e| (self.transport_error(e), None))?,
            };
            let message = error_message(&text);
            if mentions_context_overflow(&text) {
                return Err((LlmError::ContextExceeded(message), None));
            }
            return Err((LlmError::Http { status: status.as_u16(), message }, retry_after));
        }
        // A server that ignores max_tokens is cut a little past it.
        let cap = max_tokens.map(|m| m as usize + m as usize / 10 + 8);
        let mut reply = Streamed::default();
        let mut pending: Vec<u8> = Vec::new();
        let mut deadline = queued_until;
        loop {
            let chunk = match tokio::time::timeout_at(deadline, response.chunk()).await {
                Err(_) => return Err(timed_out()),
                Ok(c) => c.map_err(|e| (self.transport_error(e), None))?,
            };
            let Some(chunk) = chunk else { break };
            pending.extend_from_slice(&chunk);
            while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                let Some(data) = line.trim().strip_prefix("data:") else { continue };
                let data = data.trim();
                if data == "[DONE]" {
                    reply.done = true;
                    continue;
                }
                let waiting = !reply.started;
                reply.read(data).map_err(|e| (e, None))?;
                if waiting && reply.started {
                    // The model is working on it: from now on, the timeout.
                    deadline = tokio::time::Instant::now() + timeout;
                }
            }
            if reply.done {
                break;
            }
            if cap.is_some_and(|c| reply.chunks > c) {
                // Dropping the response closes the connection: the server stops.
                reply.finish_reason = Some("length".into());
                break;
            }
        }
        if !reply.done && reply.finish_reason.is_none() {
            return Err((LlmError::Connection("the stream ended before the reply did".into()), None));
        }
        let messages: Vec<super::Message> = serde_json::from_value(body["messages"].clone()).unwrap_or_default();
        let (prompt_tokens, completion_tokens, cached_tokens) = match reply.usage {
            Some(usage) => usage,
            // llama.cpp sends one chunk per token.
            None => (count_prompt_tokens(&messages), reply.chunks as u64, 0),
        };
        Ok(ProviderReply {
            text: reply.text,
            model: reply.model.unwrap_or_else(|| body["model"].as_str().unwrap_or_default().to_string()),
            prompt_tokens,
            completion_tokens,
            cached_tokens,
            attempts: 1,
            finish_reason: reply.finish_reason,
            batched: false,
        })
    }

    /// POSTs `body` to the base URL itself (any JSON service, e.g. a user's
    /// own RAG endpoint) with the same permits, timeout, retries and
    /// back-off as model calls; `parse` reads a 2xx reply (its error is
    /// retried like a malformed model reply). Returns the value and the attempts.
    pub async fn post_json<T>(
        &self,
        purpose: &str,
        body: &serde_json::Value,
        parse: impl Fn(&str) -> Result<T, LlmError>,
    ) -> Result<(T, u32), Failure> {
        self.retrying(purpose, || async {
            let text = self.post("", body).await?;
            parse(&text).map_err(|e| (e, None))
        })
        .await
    }

    /// Runs `attempt` until it succeeds, fails for good, or runs out of
    /// attempts, backing off in between. Returns the value and the attempts used.
    async fn retrying<T, F, Fut>(&self, purpose: &str, attempt: F) -> Result<(T, u32), Failure>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, (LlmError, Option<Duration>)>>,
    {
        let mut n = 1;
        loop {
            match attempt().await {
                Ok(value) => return Ok((value, n)),
                Err((error, retry_after)) => {
                    if !error.is_retryable() || n >= self.config.max_attempts {
                        tracing::warn!(purpose, attempt = n, %error, "LLM call failed");
                        return Err(Failure { error, attempts: n });
                    }
                    let wait = self.backoff(n, retry_after);
                    tracing::debug!(purpose, attempt = n, %error, wait_ms = wait.as_millis() as u64, "retrying LLM call");
                    tokio::time::sleep(wait).await;
                    n += 1;
                }
            }
        }
    }

    fn transport_error(&self, e: reqwest::Error) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout(self.config.timeout.as_secs())
        } else if let Some(refusal) = super::outbound::refusal_in(&e) {
            // Not retried: the address will not become public.
            LlmError::Config(refusal)
        } else {
            // Connect errors, resets, early closes, truncated bodies. The
            // chain is walked for the cause. The URL the message names may
            // carry a credential (an `http` method's `?key=…`): redacted.
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                message = format!("{message}: {s}");
                source = s.source();
            }
            if let Some(url) = e.url().map(|u| u.as_str().to_string()) {
                if let Some(shown) = crate::secret::redact_url(&url) {
                    message = message.replace(&url, &shown);
                }
            }
            LlmError::Connection(message)
        }
    }

    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self.config.base_backoff.saturating_mul(1u32 << (attempt - 1).min(20));
        let cap = exp.min(self.config.max_backoff);
        let jitter = cap.mul_f64(fastrand::f64());
        match retry_after {
            Some(wait) => wait.max(jitter),
            None => jitter,
        }
    }
}

/// A streamed reply as its chunks arrive.
#[derive(Default)]
struct Streamed {
    text: String,
    model: Option<String>,
    /// Chunks that carried content (one token each, for llama.cpp).
    chunks: usize,
    /// A first chunk arrived: generation has begun.
    started: bool,
    finish_reason: Option<String>,
    usage: Option<(u64, u64, u64)>,
    done: bool,
}

impl Streamed {
    /// Reads one `data:` payload.
    fn read(&mut self, data: &str) -> Result<(), LlmError> {
        let v: serde_json::Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Parse(format!("{e} in a streamed chunk: {}", preview(data))))?;
        if let Some(message) = v.pointer("/error/message").and_then(|m| m.as_str()) {
            return Err(LlmError::Connection(format!("the stream reported an error: {}", preview(message))));
        }
        self.started = true;
        if let Some(m) = v["model"].as_str() {
            self.model.get_or_insert_with(|| m.to_string());
        }
        if let Some(choice) = v["choices"].get(0) {
            if let Some(piece) = choice.pointer("/delta/content").and_then(|c| c.as_str()) {
                self.text.push_str(piece);
                self.chunks += 1;
            }
            if let Some(r) = choice["finish_reason"].as_str() {
                self.finish_reason = Some(r.to_string());
            }
        }
        if let (Some(p), Some(c)) = (v.pointer("/usage/prompt_tokens"), v.pointer("/usage/completion_tokens")) {
            if let (Some(p), Some(c)) = (p.as_u64(), c.as_u64()) {
                let cached = v.pointer("/usage/prompt_tokens_details/cached_tokens").and_then(|c| c.as_u64());
                self.usage = Some((p, c, cached.unwrap_or(0).min(p)));
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct Completion {
    model: Option<String>,
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
    /// OpenAI's, vLLM's and others': the prompt tokens read from the
    /// provider's prefix cache (billed at its cached-input rate).
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

pub(crate) fn parse_reply(text: &str, body: &serde_json::Value) -> Result<ProviderReply, LlmError> {
    let completion: Completion =
        serde_json::from_str(text).map_err(|e| LlmError::Parse(format!("{e} in {}", preview(text))))?;
    let choice = completion.choices.into_iter().next();
    let finish_reason = choice.as_ref().and_then(|c| c.finish_reason.clone());
    let content = choice
        .and_then(|c| c.message.content)
        .ok_or_else(|| LlmError::Parse("the reply has no choices[0].message.content".into()))?;
    let model = completion.model.unwrap_or_else(|| body["model"].as_str().unwrap_or_default().to_string());
    let (prompt_tokens, completion_tokens, cached_tokens) = match completion.usage {
        Some(u) => {
            let cached = u.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0);
            (u.prompt_tokens, u.completion_tokens, cached.min(u.prompt_tokens))
        }
        None => {
            let messages: Vec<super::Message> = serde_json::from_value(body["messages"].clone()).unwrap_or_default();
            (count_prompt_tokens(&messages), Tokenizer::Cl100kBase.count(&content) as u64, 0)
        }
    };
    Ok(ProviderReply {
        text: content,
        model,
        prompt_tokens,
        completion_tokens,
        cached_tokens,
        attempts: 1,
        finish_reason,
        batched: false,
    })
}

/// About how many tokens a request asks of a tokens-per-minute budget: its
/// messages (a token per 3 characters, more than any English text has)
/// and its reply budget, as providers count it.
fn rate_tokens(body: &serde_json::Value) -> u64 {
    let chars: usize = body["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["content"].as_str()).map(str::len).sum())
        .unwrap_or(0);
    let reply = body["max_tokens"].as_u64().or_else(|| body["max_completion_tokens"].as_u64()).unwrap_or(0);
    (chars as u64).div_ceil(3) + reply
}

/// Whether an error body says the request exceeds the model's context
/// (OpenAI's and vLLM's `context_length_exceeded`, llama.cpp's "exceed
/// context window", Ollama's and others' wordings).
fn mentions_context_overflow(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("context_length_exceeded")
        || b.contains("maximum context length")
        || b.contains("exceed context window")
        || b.contains("exceeds the context")
        || b.contains("context window")
        || b.contains("context length")
}

/// Whether a 400 says the endpoint does not take `response_format`.
fn refuses_json_mode(error: &LlmError) -> bool {
    matches!(error, LlmError::Http { status: 400 | 422, message } if message.to_ascii_lowercase().contains("response_format"))
}

/// The `error.message` of an OpenAI-style error body, or the start of the body.
fn error_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        // The service's own message, as it wrote it (at most 200 characters).
        .and_then(|v| v.pointer("/error/message").and_then(|m| m.as_str()).map(|m| m.chars().take(200).collect()))
        .unwrap_or_else(|| preview(body))
}

/// A remote body in an error: at most 200 characters, escaped (it may be
/// anything, and it ends up in pages and logs).
fn preview(text: &str) -> String {
    super::outbound::excerpt(text, 200)
}

#[derive(Deserialize)]
struct EmbeddingList {
    data: Vec<EmbeddingItem>,
    model: Option<String>,
    usage: Option<EmbeddingUsage>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    index: usize,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct EmbeddingUsage {
    prompt_tokens: u64,
}

fn parse_embeddings(text: &str, inputs: &[String], model: &str) -> Result<EmbedReply, LlmError> {
    let list: EmbeddingList =
        serde_json::from_str(text).map_err(|e| LlmError::Parse(format!("{e} in {}", preview(text))))?;
    if list.data.len() != inputs.len() {
        return Err(LlmError::Parse(format!("{} embeddings for {} inputs", list.data.len(), inputs.len())));
    }
    let mut data = list.data;
    data.sort_by_key(|d| d.index);
    let prompt_tokens = match list.usage {
        Some(u) => u.prompt_tokens,
        None => inputs.iter().map(|i| Tokenizer::Cl100kBase.count(i) as u64).sum(),
    };
    Ok(EmbedReply {
        vectors: data.into_iter().map(|d| d.embedding).collect(),
        model: list.model.unwrap_or_else(|| model.to_string()),
        prompt_tokens,
        attempts: 1,
    })
}

impl Provider for OpenAiProvider {
    fn embed<'a>(&'a self, model: &'a str, inputs: &'a [String]) -> BoxFuture<'a, Result<EmbedReply, Failure>> {
        Box::pin(async move {
            let body = json!({ "model": model, "input": inputs });
            let (mut reply, attempts) = self
                .retrying("embed", || async {
                    let text = self.post("embeddings", &body).await?;
                    parse_embeddings(&text, inputs, model).map_err(|e| (e, None))
                })
                .await?;
            reply.attempts = attempts;
            Ok(reply)
        })
    }

    fn name(&self) -> CallProvider {
        CallProvider::OpenAi
    }

    fn base_url(&self) -> &str {
        &self.config.base_url
    }

    fn default_model(&self) -> &str {
        &self.config.model
    }

    fn context_window(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async move {
            if let Some(c) = self.config.context {
                return Some(c);
            }
            Some(
                *self
                    .context
                    .get_or_init(|| async { self.probe_context().await.unwrap_or(self.assumed_context()) })
                    .await,
            )
        })
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ProviderReply, Failure>> {
        Box::pin(async move {
            let mut body = self.chat_body(req);
            if self.config.stream {
                body["stream"] = json!(true);
                body["stream_options"] = json!({"include_usage": true});
            }
            let with_format = body.get("response_format").is_some();
            let first = self.send_chat(req, &body).await;
            let (mut reply, attempts) = match first {
                Err(f) if with_format && self.config.json_mode == JsonMode::Auto && refuses_json_mode(&f.error) => {
                    tracing::info!(model = %self.config.model, error = %f.error, "the endpoint refuses JSON mode; asking without it");
                    self.json_refused.store(true, Ordering::Relaxed);
                    body.as_object_mut().map(|o| o.remove("response_format"));
                    let (reply, more) = self
                        .send_chat(req, &body)
                        .await
                        .map_err(|g| Failure { attempts: g.attempts + f.attempts, ..g })?;
                    (reply, more + f.attempts)
                }
                other => other?,
            };
            reply.attempts = attempts;
            Ok(reply)
        })
    }
}

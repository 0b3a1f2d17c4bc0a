//! The real `openai` client against the OpenAI-compatible mock server
//! (mockllm, on 127.0.0.1:0), through the gateway.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{ApiKey, CallContext, ChatRequest, Gateway, LlmError, MemoryStore, Message, PriceTable};
use mockllm::{Faults, MockConfig, MockServer};

fn config(mock: &MockServer) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(mock.base_url(), "mock-model");
    c.base_backoff = Duration::from_millis(2);
    c.max_backoff = Duration::from_millis(40);
    c.timeout = Duration::from_millis(500);
    c
}

fn gateway(c: OpenAiConfig, store: Arc<MemoryStore>) -> Gateway {
    let prices = PriceTable::default().with("mock-model", 1.0, 2.0);
    Gateway::new(Arc::new(OpenAiProvider::new(c).unwrap()), store, prices)
}

fn item(i: usize) -> ChatRequest {
    ChatRequest::new(
        "test",
        vec![Message::system("You answer briefly."), Message::user(format!("Question number {i}?"))],
    )
}

#[tokio::test]
async fn a_call_returns_text_tokens_cost_and_sends_the_key() {
    let mock = MockServer::start(MockConfig { api_key: Some("sk-test-key".into()), ..Default::default() }).await;
    let mut c = config(&mock);
    c.api_key = ApiKey::new("sk-test-key");
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(c, store.clone());
    let reply = gw.chat(&item(1), &CallContext::default()).await.unwrap();
    assert_eq!(reply.text, "Mock reply to: Question number 1?");
    assert_eq!(reply.provider, types::CallProvider::OpenAi);
    assert_eq!(reply.model, "mock-model");
    assert_eq!((reply.prompt_tokens, reply.completion_tokens), (6, 6), "the mock's usage: words of prompt and reply");
    assert!((reply.cost_usd - (6.0 * 1.0 + 6.0 * 2.0) / 1e6).abs() < 1e-12);
    assert_eq!(reply.attempts, 1);
    assert_eq!(mock.stats().unauthorized, 0);

    // A wrong key is a 401: reported at once, not retried.
    let mut wrong = config(&mock);
    wrong.api_key = ApiKey::new("sk-wrong");
    let err = gateway(wrong, store.clone()).chat(&item(2), &CallContext::default()).await.unwrap_err();
    assert_eq!(err, LlmError::Http { status: 401, message: "Incorrect API key provided".into() });
    assert_eq!(store.log().last().unwrap().attempts, 1);
}

#[tokio::test]
async fn without_usage_tokens_are_counted_with_tiktoken() {
    let mock = MockServer::start(MockConfig { omit_usage: true, ..Default::default() }).await;
    let gw = gateway(config(&mock), Arc::new(MemoryStore::default()));
    let reply =
        gw.chat(&ChatRequest::new("t", vec![Message::user("hello world")]), &CallContext::default()).await.unwrap();
    // "hello world" + 3 framing + 3 primer; "Mock reply to: hello world" is 6 cl100k tokens.
    assert_eq!(reply.prompt_tokens, 8);
    assert_eq!(
        reply.completion_tokens,
        engine::chunk::Bpe::count(engine::chunk::Tokenizer::Cl100kBase, "Mock reply to: hello world") as u64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_twenty_percent_faults_every_item_ends_succeeded_or_failed_none_lost_or_duplicated() {
    let mock = MockServer::start(MockConfig {
        faults: Faults::spread(0.2),
        hang: Duration::from_secs(2),
        retry_after_secs: 0,
        ..Default::default()
    })
    .await;
    let mut c = config(&mock);
    c.concurrency = 16;
    c.timeout = Duration::from_millis(300);
    let store = Arc::new(MemoryStore::default());
    let gw = Arc::new(gateway(c, store.clone()));
    let n = 1000;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let gw = gw.clone();
        tasks.spawn(async move {
            (i, gw.chat(&item(i), &CallContext { item: Some(i.to_string()), ..Default::default() }).await)
        });
    }
    let mut outcomes = vec![None; n];
    while let Some(done) = tasks.join_next().await {
        let (i, result) = done.unwrap();
        assert!(outcomes[i].is_none(), "item {i} finished twice");
        outcomes[i] = Some(result.map(|r| r.text));
    }
    let ok = outcomes.iter().filter(|o| matches!(o, Some(Ok(_)))).count();
    let failed = outcomes.iter().filter(|o| matches!(o, Some(Err(_)))).count();
    assert_eq!(ok + failed, n, "every item ended");
    for (i, o) in outcomes.iter().enumerate() {
        if let Some(Ok(text)) = o {
            assert_eq!(text, &format!("Mock reply to: Question number {i}?"), "item {i} got its own answer");
        }
    }
    // One log entry per item; the server answered each request body successfully at most once.
    let log = store.log();
    assert_eq!(log.len(), n);
    let stats = mock.stats();
    assert!(stats.answered.values().all(|&c| c == 1), "a body was answered twice");
    assert_eq!(stats.answered.len(), ok);
    let injected: u64 = stats.faults.values().sum();
    assert!(injected > 150, "faults were injected: {:?}", stats.faults);
    assert_eq!(stats.faults.len(), 6, "every kind of fault occurred: {:?}", stats.faults);
    // The client never has more than 16 requests outstanding, but the server
    // may count more: a request the client abandoned at its timeout is still
    // "in flight" at the server until its 2 s hang ends. So the bound here is
    // 16 plus the hangs; `concurrency_never_exceeds_the_limit` checks the
    // exact limit where nothing is abandoned.
    let hangs = stats.faults.get("timeout").copied().unwrap_or(0);
    assert!(stats.max_in_flight <= 16 + hangs, "in flight: {} with {hangs} hangs", stats.max_in_flight);
    // Retries recovered: at 20% faults and 6 attempts, failures are rare.
    assert!(ok >= n - 2, "{ok} of {n} succeeded");
    assert!(log.iter().any(|r| r.attempts > 1), "some calls needed retries");
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let mock = MockServer::start(MockConfig {
        faults: Faults { rate_limited: 1.0, ..Default::default() },
        retry_after_secs: 1,
        ..Default::default()
    })
    .await;
    let mut c = config(&mock);
    c.max_attempts = 2;
    let store = Arc::new(MemoryStore::default());
    let started = Instant::now();
    let err = gateway(c, store.clone()).chat(&item(1), &CallContext::default()).await.unwrap_err();
    let waited = started.elapsed();
    assert_eq!(err, LlmError::Http { status: 429, message: "Rate limit reached".into() });
    assert_eq!(mock.stats().requests, 2);
    assert_eq!(store.log()[0].attempts, 2);
    // Back-off alone is at most 2 ms here; the server asked for 1 s.
    assert!(waited >= Duration::from_secs(1), "waited only {waited:?}");
}

#[tokio::test]
async fn a_second_identical_run_makes_no_calls_and_costs_nothing() {
    let mock = MockServer::start(MockConfig::default()).await;
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(config(&mock), store.clone());
    let first: f64 = futures_cost(&gw, 50).await;
    assert!(first > 0.0);
    assert_eq!(mock.stats().requests, 50);
    mock.reset_stats();
    let second = futures_cost(&gw, 50).await;
    assert_eq!(second, 0.0);
    assert_eq!(mock.stats().requests, 0, "every answer came from the cache");
    assert!(store.log()[50..].iter().all(|r| r.cached));

    // A new sample index is a new draw; the cache can also be bypassed.
    let mut resample = item(0);
    resample.sample = 1;
    gw.chat(&resample, &CallContext::default()).await.unwrap();
    assert_eq!(mock.stats().requests, 1);
    let bypass = gateway(config(&mock), store.clone()).without_cache();
    assert!(!bypass.chat(&item(0), &CallContext::default()).await.unwrap().cached);
    assert_eq!(mock.stats().requests, 2);
}

async fn futures_cost(gw: &Gateway, n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        total += gw.chat(&item(i), &CallContext::default()).await.unwrap().cost_usd;
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_never_exceeds_the_limit() {
    let mock = MockServer::start(MockConfig { latency: Duration::from_millis(50), ..Default::default() }).await;
    let mut c = config(&mock);
    c.concurrency = 4;
    let gw = Arc::new(gateway(c, Arc::new(MemoryStore::default())));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..40 {
        let gw = gw.clone();
        tasks.spawn(async move { gw.chat(&item(i), &CallContext::default()).await.unwrap() });
    }
    while tasks.join_next().await.is_some() {}
    assert_eq!(mock.stats().max_in_flight, 4);
}

#[tokio::test]
async fn a_closed_port_is_a_connection_error_after_all_attempts() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut c = OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
    c.max_attempts = 3;
    c.base_backoff = Duration::from_millis(1);
    let store = Arc::new(MemoryStore::default());
    let err = gateway(c, store.clone()).chat(&item(1), &CallContext::default()).await.unwrap_err();
    assert!(matches!(err, LlmError::Connection(_)), "{err:?}");
    assert_eq!(store.log()[0].attempts, 3);
}

/// A tracing writer that keeps everything logged.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn keys_never_appear_in_logs_errors_or_debug_output() {
    let secret = "sk-live-DO-NOT-LEAK-4242";
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber =
        tracing_subscriber::fmt().with_max_level(tracing::Level::TRACE).with_writer(move || writer.clone()).finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let mock = MockServer::start(MockConfig {
        api_key: Some("another-key".into()),
        faults: Faults { server_error: 0.5, ..Default::default() },
        ..Default::default()
    })
    .await;
    let mut c = config(&mock);
    c.api_key = ApiKey::new(secret);
    c.max_attempts = 3;
    let debug = format!("{c:?}");
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(c, store.clone());
    let mut errors = String::new();
    for i in 0..5 {
        if let Err(e) = gw.chat(&item(i), &CallContext::default()).await {
            errors.push_str(&format!("{e} {e:?}\n"));
        }
    }
    let logged = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(!logged.is_empty(), "something was logged");
    assert!(!errors.is_empty(), "calls failed with a wrong key");
    let records = serde_json::to_string(&store.log()).unwrap();
    for (what, text) in [("log", &logged), ("errors", &errors), ("debug", &debug), ("call records", &records)] {
        assert!(!text.contains(secret), "the key leaked into {what}");
    }
}

#[tokio::test]
async fn embeddings_come_back_in_order_cached_and_retried() {
    let mock =
        MockServer::start(MockConfig { faults: Faults { malformed: 0.3, ..Default::default() }, ..Default::default() })
            .await;
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(config(&mock), store.clone()).with_embed_model("mock-embed");
    let inputs: Vec<String> = ["the Queen of Hearts", "the Mock Turtle", "a white rabbit with a watch"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let first = gw.embed(&inputs, &CallContext::default()).await.unwrap();
    assert_eq!(first.vectors.len(), 3);
    assert!(first.vectors.iter().all(|v| v.len() == 8));
    for v in &first.vectors {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "unit vectors from the mock: {norm}");
    }
    assert_ne!(first.vectors[0], first.vectors[1]);
    assert_eq!(first.prompt_tokens, 4 + 3 + 6, "the mock's usage: words of the inputs");
    assert!(!first.cached);
    let requests = mock.stats().requests;
    let second = gw.embed(&inputs, &CallContext::default()).await.unwrap();
    assert!(second.cached);
    assert_eq!(second.vectors, first.vectors);
    assert_eq!(mock.stats().requests, requests, "answered from the cache");
    let log = store.log();
    assert_eq!(log[0].purpose, "embed");
    assert_eq!(log[0].model, "mock-embed");
}

/// A local server that answers one request at a time: the time a request
/// waits for its turn in the client's queue is not counted against its
/// timeout (each attempt's clock starts when it is sent).
#[tokio::test]
async fn the_timeout_counts_from_sending_not_from_queueing() {
    let mock = MockServer::start(MockConfig { latency: Duration::from_millis(300), ..Default::default() }).await;
    let mut c = config(&mock);
    c.concurrency = 1;
    c.timeout = Duration::from_millis(500);
    c.max_attempts = 1;
    let gw = gateway(c, Arc::new(MemoryStore::default()));
    let started = Instant::now();
    let (one, two, three) = (item(1), item(2), item(3));
    let ctx = CallContext::default();
    let (a, b, d) = tokio::join!(gw.chat(&one, &ctx), gw.chat(&two, &ctx), gw.chat(&three, &ctx));
    // The third waited ~600 ms in the queue, more than its 500 ms timeout.
    assert!(started.elapsed() >= Duration::from_millis(900));
    for r in [a, b, d] {
        assert_eq!(r.unwrap().attempts, 1);
    }
    assert_eq!(mock.stats().max_in_flight, 1);
}

/// A timed-out request closes its connection: the server sees the client
/// go and can stop working for it (the mock's handler is dropped), rather
/// than answering into the void while retries queue behind it.
#[tokio::test]
async fn a_timed_out_request_closes_its_connection() {
    let mock = MockServer::start(MockConfig {
        faults: Faults { timeout: 1.0, ..Default::default() },
        hang: Duration::from_secs(10),
        ..Default::default()
    })
    .await;
    let mut c = config(&mock);
    c.timeout = Duration::from_millis(200);
    c.max_attempts = 1;
    let gw = gateway(c, Arc::new(MemoryStore::default()));
    let err = gw.chat(&item(1), &CallContext::default()).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while mock.in_flight() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(mock.in_flight(), 0, "the server still works for a request its client gave up");
}

/// Identical requests at once (two items needing the same keywords): the
/// endpoint is asked once, the others wait and read its reply from the
/// cache (logged as cached, costing nothing); a request that differs (its
/// own sample) is its own call. Fresh and cached counts no longer depend on
/// which finished first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_requests_in_flight_at_once_make_one_call() {
    let mock = MockServer::start(MockConfig { latency: Duration::from_millis(150), ..Default::default() }).await;
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(config(&mock), store.clone());
    let mut other = item(7);
    other.sample = 1;
    let ctx = CallContext::default();
    let same = item(7);
    let replies =
        futures_util::future::join_all((0..5).map(|_| gw.chat(&same, &ctx)).chain([gw.chat(&other, &ctx)])).await;
    let replies: Vec<_> = replies.into_iter().map(Result::unwrap).collect();
    assert!(replies.iter().all(|r| r.text == "Mock reply to: Question number 7?"));
    assert_eq!(mock.stats().ok, 2, "one call for the five identical requests, one for the other sample");
    assert_eq!(replies[..5].iter().filter(|r| !r.cached).count(), 1, "one of the five was asked");
    assert!(replies[..5].iter().filter(|r| r.cached).all(|r| r.cost_usd == 0.0));
    assert!(!replies[5].cached);
    let log = store.log();
    assert_eq!((log.len(), log.iter().filter(|c| c.cached).count()), (6, 4), "each request logged, 4 as cached");

    // A failed call leaves the key to the next request: it asks again.
    let down = MockServer::start(MockConfig { latency: Duration::from_millis(100), ..Default::default() }).await;
    down.set_faults(Faults { server_error: 1.0, ..Faults::default() });
    let mut c = config(&down);
    c.max_attempts = 1;
    let gw = gateway(c, Arc::new(MemoryStore::default()));
    let same = item(8);
    let (a, b) = tokio::join!(gw.chat(&same, &ctx), gw.chat(&same, &ctx));
    assert!(a.is_err() && b.is_err());
    assert_eq!(down.stats().faults.values().sum::<u64>(), 2, "the waiter asked after the first failed");
}

/// The mock's two timings. By default it waits out the latency first, so a
/// request its client gave up meanwhile is never composed, shown to the
/// responder or counted. With `compose_first` (the judging benchmark's) it
/// composes a reply as the request arrives and sends it when the latency is
/// over: still no sooner, and a fault waits as long.
#[tokio::test]
async fn the_mock_composes_first_only_when_asked_and_never_answers_sooner() {
    let latency = Duration::from_millis(200);
    for compose_first in [false, true] {
        let seen: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let responder = {
            let seen = seen.clone();
            mockllm::Responder(Arc::new(move |_: &serde_json::Value| {
                seen.lock().unwrap().push(Instant::now());
                "composed".to_string()
            }))
        };
        let mock =
            MockServer::start(MockConfig { latency, compose_first, responder: Some(responder), ..Default::default() })
                .await;
        let client = reqwest::Client::new();
        let url = format!("{}/chat/completions", mock.base_url());
        let body = serde_json::json!({"model": "mock-model", "messages": [{"role": "user", "content": "Hello?"}]});

        let sent = Instant::now();
        let reply: serde_json::Value = client.post(&url).json(&body).send().await.unwrap().json().await.unwrap();
        let answered = sent.elapsed();
        assert_eq!(reply["choices"][0]["message"]["content"], "composed");
        assert!(answered >= latency, "compose_first {compose_first}: answered after {answered:?}");
        let composed = seen.lock().unwrap()[0] - sent;
        if compose_first {
            assert!(composed < latency / 2, "composed {composed:?} after the request, not at its arrival");
        } else {
            assert!(composed >= latency, "composed {composed:?} after the request, before the latency was over");
        }

        // A request given up half-way through the latency.
        let gave_up = tokio::time::timeout(latency / 2, client.post(&url).json(&body).send()).await;
        assert!(gave_up.is_err(), "no reply before the latency");
        tokio::time::sleep(latency).await;
        let composed = seen.lock().unwrap().len();
        assert_eq!(composed, if compose_first { 2 } else { 1 }, "compose_first {compose_first}: composed {composed}");
        assert_eq!(mock.stats().ok, if compose_first { 2 } else { 1 });

        // A fault waits out the latency too.
        mock.set_faults(Faults { server_error: 1.0, ..Default::default() });
        let sent = Instant::now();
        let status = client.post(&url).json(&body).send().await.unwrap().status();
        assert_eq!(status.as_u16(), 500);
        assert!(sent.elapsed() >= latency, "compose_first {compose_first}: a fault after {:?}", sent.elapsed());
    }
}

/// Judging prompts begin with what every call shares (the rubric), so a
/// provider's automatic prefix caching applies; the tokens it read from
/// its cache are logged and priced at the cached-input rate — streamed
/// or not.
#[tokio::test]
async fn a_judges_shared_rubric_is_read_from_the_providers_prefix_cache_at_its_rate() {
    let rubric_words = engine::judge::scoring::PROMPT.split_whitespace().count() as u64;
    for stream in [false, true] {
        let mock = MockServer::start(MockConfig { prefix_cache: Some(16), ..Default::default() }).await;
        let mut c = config(&mock);
        c.stream = stream;
        let store = Arc::new(MemoryStore::default());
        let prices = PriceTable::default().with("mock-model", 1.0, 2.0).with_cached("mock-model", 0.25);
        let gw = Gateway::new(Arc::new(OpenAiProvider::new(c).unwrap()), store.clone(), prices.clone());
        let first = engine::judge::scoring::request("What is salt?", "A mineral.", "A rock.", 0);
        let second = engine::judge::scoring::request("Who wrote Emma?", "Jane Austen.", "Austen.", 0);
        let ctx = CallContext::default();
        let a = gw.chat(&first, &ctx).await.unwrap();
        let b = gw.chat(&second, &ctx).await.unwrap();
        let log = store.log();
        assert_eq!(log[0].cached_tokens, 0, "the first prompt finds nothing cached");
        // The second shares the rubric: its whole 16-word blocks are cached.
        let cached = log[1].cached_tokens;
        assert!(
            cached >= rubric_words / 16 * 16 && cached < b.prompt_tokens,
            "stream {stream}: {cached} of {}",
            b.prompt_tokens
        );
        assert_eq!(mock.stats().cached_tokens, cached);
        let full = prices.cost("mock-model", b.prompt_tokens, b.completion_tokens);
        let want = prices.cost_cached("mock-model", b.prompt_tokens, cached, b.completion_tokens);
        assert!((b.cost_usd - want).abs() < 1e-15 && want < full, "stream {stream}: {} against {want}", b.cost_usd);
        assert!((want - (full - cached as f64 * 0.75 / 1e6)).abs() < 1e-15);
        assert!((a.cost_usd - prices.cost("mock-model", a.prompt_tokens, a.completion_tokens)).abs() < 1e-15);
    }
}

/// Concurrency follows the endpoint's rate-limit headers: with 16 allowed
/// and 5 requests (or fewer tokens) left per window, no request is ever
/// refused for the limit — none is sent past what a reply said was left —
/// and every call succeeds at its first attempt.
#[tokio::test]
async fn concurrency_follows_the_rate_limit_headers_and_never_exceeds_them() {
    for (requests, tokens) in [(5, 1_000_000), (1_000, 60)] {
        let limit = mockllm::RateLimit { requests, tokens, window: Duration::from_millis(300) };
        let mock = MockServer::start(MockConfig { rate_limit: Some(limit), ..Default::default() }).await;
        let mut c = config(&mock);
        c.concurrency = 16;
        c.timeout = Duration::from_secs(5);
        let provider = Arc::new(OpenAiProvider::new(c).unwrap());
        let gw = Gateway::new(provider.clone(), Arc::new(MemoryStore::default()), PriceTable::default());
        let started = Instant::now();
        let replies = futures_util::future::join_all((0..30).map(|i| {
            let gw = gw.clone();
            async move { gw.chat(&item(i), &CallContext::default()).await }
        }))
        .await;
        let elapsed = started.elapsed();
        let stats = mock.stats();
        assert!(replies.iter().all(|r| r.as_ref().is_ok_and(|r| r.attempts == 1)), "{limit:?}: {replies:?}");
        assert_eq!(stats.rate_limited, 0, "{limit:?}: a request went past the stated budget");
        assert_eq!(stats.requests, 30);
        if requests == 5 {
            assert!(stats.max_in_flight <= 5, "{stats:?}");
            assert_eq!(stats.least_remaining_requests, Some(0), "the budget was used to the end");
            // Six windows' worth: the calls waited for five resets.
            assert!(elapsed >= Duration::from_millis(5 * 300), "{elapsed:?}");
        }
        let held = provider.rate_stats();
        assert!(held.held > 0, "{limit:?}: {held:?}");
    }
}

/// Without rate-limit headers (a llama.cpp server) the configured
/// concurrency alone limits: after the first reply, all go at once.
#[tokio::test]
async fn without_rate_limit_headers_the_configured_concurrency_holds() {
    let mock = MockServer::start(MockConfig { latency: Duration::from_millis(50), ..Default::default() }).await;
    let mut c = config(&mock);
    c.concurrency = 8;
    c.timeout = Duration::from_secs(5);
    let gw = gateway(c, Arc::new(MemoryStore::default()));
    let replies = futures_util::future::join_all((0..24).map(|i| {
        let gw = gw.clone();
        async move { gw.chat(&item(i), &CallContext::default()).await }
    }))
    .await;
    assert!(replies.iter().all(Result::is_ok));
    assert_eq!(mock.stats().max_in_flight, 8);
}

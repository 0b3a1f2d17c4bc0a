//! Replies a real model gives on a bad day, from the mock server's
//! misbehaving modes, through the real `openai` client and the gateway:
//! a model that rambles past `max_tokens` and never closes its JSON, a
//! small context window (said in `/v1/models`, or only in a 400), an
//! endpoint without JSON mode, and JSON of the wrong shape.

use std::sync::Arc;
use std::time::Duration;

use engine::jobs::{ItemOutcome, WorkItem};
use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{CallContext, ChatRequest, Gateway, LlmError, MemoryStore, Message, PriceTable};
use mockllm::{MockConfig, MockServer, Responder};
use serde_json::Value;

fn gateway(mock: &MockServer, store: Arc<MemoryStore>) -> Gateway {
    let mut c = OpenAiConfig::new(mock.base_url(), "mock-model");
    c.base_backoff = Duration::from_millis(2);
    c.max_backoff = Duration::from_millis(20);
    c.timeout = Duration::from_secs(5);
    Gateway::new(Arc::new(OpenAiProvider::new(c).unwrap()), store, PriceTable::default())
}

/// The mock answers each task as the offline provider does.
fn offline_responder() -> Responder {
    let offline = engine::offline::provider();
    Responder(Arc::new(move |body: &Value| offline.answer_body(body)))
}

const PASSAGE: &str = "Ebenezer Scrooge kept the counting-house in London. Bob Cratchit worked for Scrooge in London. \
    Jacob Marley, the partner of Scrooge, had died seven years before. Scrooge met the Ghost of Christmas Past.";

#[tokio::test]
async fn a_rambling_model_is_cut_and_what_it_finished_is_kept() {
    let mock =
        MockServer::start(MockConfig { rambling: true, responder: Some(offline_responder()), ..Default::default() })
            .await;
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(&mock, store.clone());

    // Extraction: the reply never closes; the entities before the cut stay.
    let settings = engine::graph::extract::ExtractSettings { gleaning: 0, ..Default::default() };
    let item = WorkItem { key: "chunk-1".into(), payload: serde_json::json!({ "text": PASSAGE }) };
    let outcome = engine::graph::extract::run_item(&gw, 1, item, &settings).await;
    let ItemOutcome::Done { result, .. } = outcome else { panic!("extraction failed: {outcome:?}") };
    let x: engine::graph::extract::ChunkExtraction = serde_json::from_str(&result).unwrap();
    let names: Vec<&str> = x.extraction.entities.iter().map(|e| e.name.as_str()).collect();
    assert!(names.contains(&"Scrooge") || names.contains(&"Ebenezer Scrooge"), "{names:?}");
    assert_eq!(x.truncated_replies, 1, "the reply is recorded as cut");
    let log = store.log();
    assert!(log[0].truncated, "the call log says the reply was cut");
    assert_eq!(mock.stats().without_max_tokens, 0, "every request carries max_tokens");
    assert_eq!(mock.stats().max_tokens_seen, u64::from(engine::graph::extract::MAX_TOKENS));

    // The judge: its verdict is complete before the ramble, and reads.
    let req = engine::judge::scoring::request("Who is Scrooge?", "A miser in London.", "Scrooge.", 0);
    let reply = gw.chat(&req, &CallContext::default()).await.unwrap();
    assert!(reply.truncated);
    let (j, _) = engine::judge::scoring::parse(&reply.text, engine::judge::Order::AFirst, 0).unwrap();
    assert_eq!(j.a, engine::judge::scoring::rubric("Who is Scrooge?", "A miser in London."));

    // A cached cut reply stays flagged.
    let again = gw.chat(&req, &CallContext::default()).await.unwrap();
    assert!(again.cached && again.truncated);
}

fn long_prompt(words: usize) -> ChatRequest {
    let mut req = ChatRequest::new("answer", vec![Message::user("word ".repeat(words))]);
    req.max_tokens = Some(300);
    req
}

#[tokio::test]
async fn an_advertised_small_context_is_respected_before_any_call() {
    let mock =
        MockServer::start(MockConfig { context: Some(1000), advertise_context: true, ..Default::default() }).await;
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(&mock, store.clone());

    // Fits as asked.
    // (Long enough to teach the gateway the endpoint's tokens per cl100k token.)
    gw.chat(&long_prompt(300), &CallContext::default()).await.unwrap();
    assert_eq!(mock.stats().max_tokens_seen, 300);
    // Leaves less room than asked: the reply's budget shrinks to fit.
    let reply = gw.chat(&long_prompt(650), &CallContext::default()).await.unwrap();
    assert!(!reply.text.is_empty());
    let stats = mock.stats();
    assert_eq!(stats.over_context, 0, "nothing sent beyond the context");
    let sent: Vec<Value> = stats.answered.keys().map(|b| serde_json::from_str(b).unwrap()).collect();
    let budget = sent
        .iter()
        .find(|b| b["messages"][0]["content"].as_str().unwrap().len() > 3000)
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .unwrap();
    assert!((256..300).contains(&budget), "the reply's budget shrank to what is left: {budget}");
    // Does not fit at all: refused here, with the sizes, and never sent.
    let requests = mock.stats().requests;
    let err = gw.chat(&long_prompt(2000), &CallContext::default()).await.unwrap_err();
    let LlmError::ContextOverflow { prompt, context, .. } = err.clone() else { panic!("{err:?}") };
    assert_eq!(context, 1000);
    assert!(prompt > 2000, "the estimate counts at least the words: {prompt}");
    assert!(err
        .to_string()
        .starts_with(&format!("prompt of {prompt} tokens does not fit the model's context of 1000")));
    assert_eq!(mock.stats().requests, requests, "a prompt that cannot fit is never sent");
    assert_eq!(store.log().last().unwrap().error.as_deref(), Some(err.to_string().as_str()), "the refusal is logged");
}

#[tokio::test]
async fn a_servers_context_error_is_reported_as_such_and_not_retried() {
    // The context is not advertised: the default window (8192) lets the
    // request go, and the server refuses it.
    let mock = MockServer::start(MockConfig { context: Some(500), ..Default::default() }).await;
    let gw = gateway(&mock, Arc::new(MemoryStore::default()));
    let err = gw.chat(&long_prompt(1000), &CallContext::default()).await.unwrap_err();
    assert!(matches!(err, LlmError::ContextExceeded(_)), "{err:?}");
    assert!(err.to_string().contains("maximum context length is 500 tokens"), "{err}");
    assert_eq!(mock.stats().requests, 1, "not retried");
}

#[tokio::test]
async fn an_endpoint_without_json_mode_is_asked_without_it_from_then_on() {
    let mock = MockServer::start(MockConfig { refuse_json_mode: true, ..Default::default() }).await;
    let gw = gateway(&mock, Arc::new(MemoryStore::default()));
    let mut req = ChatRequest::new("t", vec![Message::user("Reply in JSON.")]);
    req.json = true;
    req.max_tokens = Some(50);
    let reply = gw.chat(&req, &CallContext::default()).await.unwrap();
    assert_eq!(reply.text, "Mock reply to: Reply in JSON.", "asked again without response_format");
    req.sample = 1;
    gw.chat(&req, &CallContext::default()).await.unwrap();
    let stats = mock.stats();
    assert_eq!(stats.with_json_mode, 1, "refused once, never sent again");
    assert_eq!(stats.requests, 3);
}

#[tokio::test]
async fn json_of_the_wrong_shape_gets_one_repair_turn() {
    // The judge forgets an aspect the first time; the repair turn's reply is whole.
    let responder = Responder(Arc::new(|body: &Value| {
        let repair = body["x_assay_purpose"].as_str().unwrap_or("").ends_with("_repair");
        let scores = serde_json::json!({"Comprehensiveness": 4, "Relevance": 3, "Empowerment": 2, "Directness": 5});
        let mut verdict = serde_json::json!({"Answer 1": scores, "Answer 2": scores, "reasoning": "r"});
        if !repair {
            verdict["Answer 2"].as_object_mut().unwrap().remove("Relevance");
        }
        verdict.to_string()
    }));
    let mock = MockServer::start(MockConfig { responder: Some(responder), ..Default::default() }).await;
    let store = Arc::new(MemoryStore::default());
    let gw = gateway(&mock, store.clone());
    let item = WorkItem {
        key: "q1-t0".into(),
        payload: serde_json::to_value(engine::judge::protocol::UnbiasedItem::new(
            "Who is Scrooge?",
            "A miser.",
            "A man.",
            0,
            1,
        ))
        .unwrap(),
    };
    let outcome = engine::judge::protocol::run_unbiased_item(&gw, 1, item).await;
    assert!(matches!(outcome, ItemOutcome::Done { .. }), "{outcome:?}");
    // Each draw (both orders go out together) its call, then its repair.
    for sample in [0, 1] {
        let purposes: Vec<String> =
            store.log().iter().filter(|c| c.sample == sample).map(|c| c.purpose.clone()).collect();
        assert_eq!(purposes, ["judge_scores", "judge_scores_repair"], "draw {sample}");
    }
    assert_eq!(store.log().len(), 4);
    // Every request went out at the judge's temperature of the time (1.0,
    // as stored evaluations ran), the repair turns too.
    let temperatures: Vec<Option<f64>> = mock
        .stats()
        .answered
        .into_keys()
        .map(|b| serde_json::from_str::<Value>(&b).unwrap().get("temperature").and_then(Value::as_f64))
        .collect();
    assert_eq!(temperatures, [Some(1.0); 4]);
    // Under an evaluation's settings (the default: none sent), the repair
    // turns go out as their task does.
    mock.reset_stats();
    let judging = engine::judge::eval::Settings::default().judging(gateway(&mock, Arc::new(MemoryStore::default())));
    let item = WorkItem {
        key: "q1-t0".into(),
        payload: serde_json::to_value(engine::judge::protocol::UnbiasedItem::new(
            "Who is Scrooge?",
            "A miser.",
            "A man.",
            0,
            1,
        ))
        .unwrap(),
    };
    assert!(matches!(engine::judge::protocol::run_unbiased_item(&judging, 1, item).await, ItemOutcome::Done { .. }));
    let sent: Vec<(String, Option<f64>)> = mock
        .stats()
        .answered
        .into_keys()
        .map(|b| {
            let v: Value = serde_json::from_str(&b).unwrap();
            (v["messages"].as_array().unwrap().len().to_string(), v.get("temperature").and_then(Value::as_f64))
        })
        .collect();
    assert_eq!(sent.len(), 4, "two calls and two repair turns");
    assert!(sent.iter().all(|(_, t)| t.is_none()), "{sent:?}");
    // The repair turn shows the model its reply and the parser's reason.
    let log = store.log();
    let repair = &log.iter().find(|c| c.purpose == "judge_scores_repair").unwrap().messages;
    assert_eq!(repair.len(), 4);
    assert!(repair[3].content.contains("the verdict has no Relevance score for Answer 2"), "{}", repair[3].content);

    // Still wrong after the repair: the item fails with the parser's reason.
    let always_wrong = Responder(Arc::new(|_: &Value| r#"{"Answer 1": {}, "Answer 2": {}}"#.to_string()));
    let mock = MockServer::start(MockConfig { responder: Some(always_wrong), ..Default::default() }).await;
    let gw = gateway(&mock, Arc::new(MemoryStore::default()));
    let item = WorkItem {
        key: "q1-t0".into(),
        payload: serde_json::to_value(engine::judge::protocol::UnbiasedItem::new("Q?", "A.", "B.", 0, 1)).unwrap(),
    };
    let ItemOutcome::Failed { error, .. } = engine::judge::protocol::run_unbiased_item(&gw, 1, item).await else {
        panic!("a verdict without scores cannot be used")
    };
    assert_eq!(error, "the verdict has no Comprehensiveness score for Answer 1 (also after a repair turn)");
    // Both orders go out together: each draw its call and one repair turn, no more.
    assert_eq!(mock.stats().requests, 4, "one repair turn per draw, no more");
}

fn streaming(mock: &MockServer, concurrency: usize, timeout: Duration) -> Gateway {
    let mut c = OpenAiConfig::new(mock.base_url(), "mock-model");
    c.stream = true;
    c.concurrency = concurrency;
    c.timeout = timeout;
    c.max_attempts = 1;
    Gateway::new(Arc::new(OpenAiProvider::new(c).unwrap()), Arc::new(MemoryStore::default()), PriceTable::default())
}

/// A streamed reply is the reply: the same text, its finish reason and the
/// usage the server sent with the stream.
#[tokio::test]
async fn a_streamed_reply_reads_as_the_whole_one() {
    let mock = MockServer::start(MockConfig { responder: Some(offline_responder()), ..Default::default() }).await;
    let req = engine::judge::scoring::request("Who is Scrooge?", "A miser in London.", "Scrooge.", 0);
    let whole = gateway(&mock, Arc::new(MemoryStore::default())).chat(&req, &CallContext::default()).await.unwrap();
    let streamed = streaming(&mock, 2, Duration::from_secs(5)).chat(&req, &CallContext::default()).await.unwrap();
    assert_eq!(streamed.text, whole.text);
    assert_eq!((streamed.prompt_tokens, streamed.completion_tokens), (whole.prompt_tokens, whole.completion_tokens));
    assert!(!streamed.truncated);
}

/// A server that ignores `max_tokens` and never stops: the client cuts the
/// stream a little past the budget, marks the reply cut, and closes the
/// connection, which ends the server's work for it.
#[tokio::test]
async fn an_endless_stream_is_cut_past_max_tokens_and_its_connection_closed() {
    let mock = MockServer::start(MockConfig { rambling: true, ..Default::default() }).await;
    let gw = streaming(&mock, 1, Duration::from_secs(5));
    let mut req = ChatRequest::new("t", vec![Message::user("Tell me everything.")]);
    req.max_tokens = Some(50);
    let reply = gw.chat(&req, &CallContext::default()).await.unwrap();
    assert!(reply.truncated, "cut at the budget");
    let words = reply.text.split_whitespace().count();
    assert!((50..=70).contains(&words), "cut a little past 50 tokens: {words}");
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while mock.in_flight() > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(mock.in_flight(), 0, "the server still streams to a client that left");
}

/// A server that answers one request at a time, three requests at once,
/// each taking 300 ms to generate, a timeout of 450 ms: streamed, the time
/// the third waits inside the server (600 ms) is not counted and all three
/// succeed; not streamed, the server's queue counts and the third times out.
#[tokio::test]
async fn streamed_the_timeout_counts_from_the_first_token_not_the_servers_queue() {
    let mock = MockServer::start(MockConfig {
        latency: Duration::from_millis(300),
        one_at_a_time: true,
        ..Default::default()
    })
    .await;
    let ask = |gw: Gateway| async move {
        let reqs = ["one", "two", "three"].map(|t| ChatRequest::new("t", vec![Message::user(t)]));
        let ctx = CallContext::default();
        let (a, b, c) = tokio::join!(gw.chat(&reqs[0], &ctx), gw.chat(&reqs[1], &ctx), gw.chat(&reqs[2], &ctx));
        [a, b, c].into_iter().filter(|r| matches!(r, Err(LlmError::Timeout(_)))).count()
    };
    assert_eq!(ask(streaming(&mock, 3, Duration::from_millis(450))).await, 0, "streamed: none timed out");
    let mut c = OpenAiConfig::new(mock.base_url(), "mock-model");
    c.concurrency = 3;
    c.timeout = Duration::from_millis(450);
    c.max_attempts = 1;
    let whole = Gateway::new(
        Arc::new(OpenAiProvider::new(c).unwrap()),
        Arc::new(MemoryStore::default()),
        PriceTable::default(),
    );
    assert!(ask(whole).await >= 1, "not streamed, the server's queue counts against the timeout");
}

/// An answer's context larger than a small model's window: its least
/// relevant end is cut so the prompt fits, and the answer says so.
#[tokio::test]
async fn an_answers_context_is_cut_to_the_window() {
    let mock =
        MockServer::start(MockConfig { context: Some(1500), advertise_context: true, ..Default::default() }).await;
    let gw = gateway(&mock, Arc::new(MemoryStore::default()));
    let context: String =
        (1..=200).map(|i| format!("[chunk {i}] Scrooge counted coins in the counting-house, number {i}.\n")).collect();
    let mut meter = engine::llm::Meter::default();
    let answer =
        engine::rag::answer::generate(&gw, &CallContext::default(), &mut meter, "Who counted?", &context, None).await;
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(meter.context_cut_calls, 1);
    assert_eq!(mock.stats().over_context, 0, "the prompt sent fits");
    let sent: Vec<Value> = mock.stats().answered.keys().map(|b| serde_json::from_str(b).unwrap()).collect();
    let prompt = sent[0]["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("[chunk 1] ") && !prompt.contains("[chunk 200] "), "the first chunks are kept");
}

/// The forced append of a long answer into a small window: the model is
/// shown the answer's longest ending that fits (the append re-writes what
/// it is shown), and the words before it are put back in front.
#[tokio::test]
async fn the_forced_append_shows_the_answers_ending_when_all_of_it_does_not_fit() {
    let appender = Responder(Arc::new(|body: &Value| {
        let last = body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or("");
        let missing: usize = last
            .lines()
            .find_map(|l| l.strip_prefix("Words to add: "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        let shown = last.split("<<<\n").nth(1).and_then(|r| r.split("\n>>>").next()).unwrap_or("");
        format!("{shown} {}", "more ".repeat(missing).trim_end())
    }));
    let mock = MockServer::start(MockConfig {
        responder: Some(appender),
        context: Some(1200),
        advertise_context: true,
        ..Default::default()
    })
    .await;
    let gw = gateway(&mock, Arc::new(MemoryStore::default()));
    let a: String = (0..300).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let b = "long ".repeat(500).trim_end().to_string();
    let payload =
        serde_json::to_value(engine::judge::protocol::AlignItem::new("What happened?", &a, &b, 10, 0)).unwrap();
    let item = WorkItem { key: "al-1-2-1".into(), payload };
    let outcome = engine::judge::protocol::run_align_item(&gw, 1, item, [None, None]).await;
    let ItemOutcome::Done { result, .. } = outcome else { panic!("{outcome:?}") };
    let r: Value = serde_json::from_str(&result).unwrap();
    let aligned = r["a"].as_str().unwrap();
    assert!(aligned.starts_with(&a), "the answer stays whole, in front");
    assert_eq!(aligned.split_whitespace().count(), 500, "lengthened by the missing words");
    assert_eq!(r["alignment"], serde_json::json!({"Forced": 0}));
    let stats = mock.stats();
    assert_eq!(stats.over_context, 0, "nothing sent beyond the window");
    let sent: Vec<Value> = stats.answered.keys().map(|b| serde_json::from_str(b).unwrap()).collect();
    let shown = sent[0]["messages"][1]["content"].as_str().unwrap();
    assert!(!shown.contains("w0 ") && shown.contains("w299"), "only the answer's ending was shown");
}

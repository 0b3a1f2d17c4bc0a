//! Judging throughput (issue 7): 150 questions × one pair of methods under
//! the unbiased protocol with N = 2 repeats per order and M = 25 trials —
//! 3,750 job items of 4 scoring calls each, 15,000 calls — through the real
//! `openai` client to the mock server answering every call in 100 ms, 64
//! calls in flight. Little's law bounds the wall time at 15,000 / 640 =
//! 23.4 s. Reports the wall time, the fraction of the bound, the CPU per
//! call (job runner, protocol, parsing, client and mock together) and the
//! peak RSS; checks every item was judged and every call was fresh.
//! `cargo bench -p engine --bench judge` (BENCH_QUESTIONS, BENCH_TRIALS to scale).

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::judge::protocol::{payload, run_unbiased_item};
use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{BoxFuture, CachedReply, CallRecord, CallStore, Gateway, PriceTable};
use mockllm::{MockConfig, MockServer, Responder};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

mod common;
use common::cpu_and_rss;

fn main() {
    let env = |k: &str, d: u32| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (questions, trials, repeats) = (env("BENCH_QUESTIONS", 150), env("BENCH_TRIALS", 25), 2u32);
    let concurrency = 64;
    let latency = Duration::from_millis(100);
    let calls = (questions * trials * repeats * 2) as usize;
    // A judge that scores by the answers' lengths: a valid reply for every request.
    let reply = |req: &Value| {
        let user = req["messages"][1]["content"].as_str().unwrap_or("");
        let n = (user.len() % 5) as u64;
        let scores = json!({"Comprehensiveness": n, "Relevance": 3, "Empowerment": 4 - n.min(4), "Directness": 2});
        json!({"Answer 1": scores, "Answer 2": scores, "reasoning": "benchmark"}).to_string()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mock =
            MockServer::start(MockConfig { latency, responder: Some(Responder(Arc::new(reply))), ..Default::default() })
                .await;
        let mut config = OpenAiConfig::new(mock.base_url(), "mock-model");
        config.concurrency = concurrency;
        let log = Arc::new(CountingStore::default());
        let gw = Gateway::new(Arc::new(OpenAiProvider::new(config).unwrap()), log.clone(), PriceTable::default());
        let answer = |q: u32, side: &str| {
            format!("Answer {side} to question {q}: the Salt Guild of Saltmere met every spring; Ada Pell led it for {} years.", q % 40)
        };
        let items: Vec<WorkItem> = (0..trials)
            .flat_map(|t| {
                (0..questions).map(move |q| WorkItem {
                    key: format!("u-1-2-{q}-{t:03}"),
                    payload: payload(&format!("What did the Guild do in year {q}?"), &answer(q, "A"), &answer(q, "B"), t, repeats),
                })
            })
            .collect();
        let n_items = items.len();
        let store = MemoryJobStore::default();
        let keys: Vec<String> = items.iter().map(|i| i.key.clone()).collect();
        // cl100k's tables load once per process, on the first count (the
        // server at its first call; here before the clock starts).
        let loading = Instant::now();
        engine::chunk::Tokenizer::Cl100kBase.count("warm up");
        let tokenizer_ms = loading.elapsed().as_secs_f64() * 1e3;
        let (cpu0, _) = cpu_and_rss();
        let started = Instant::now();
        run(1, items, &store, concurrency, false, &CancellationToken::new(), &|_| {}, |item| {
            run_unbiased_item(&gw, 1, item)
        })
        .await
        .unwrap();
        let elapsed = started.elapsed();
        let (cpu1, rss_kb) = cpu_and_rss();
        let judged = keys.iter().filter(|k| matches!(store.outcome(1, k), Some(ItemOutcome::Done { .. }))).count();
        assert_eq!(judged, n_items, "every item judged");
        let fresh = log.fresh.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(fresh, calls, "every draw a call of its own");
        let bound = calls as f64 * latency.as_secs_f64() / concurrency as f64;
        println!(
            "judge: {questions} questions × {trials} trials × {repeats} repeats × 2 orders = {calls} calls, {n_items} items; mock latency {} ms, {concurrency} in flight",
            latency.as_millis()
        );
        println!("  wall time          {:.2} s (bound {bound:.1} s: {:.1}% of it)", elapsed.as_secs_f64(), 100.0 * bound / elapsed.as_secs_f64());
        println!("  (cl100k tokenizer loaded before the clock started: {tokenizer_ms:.0} ms, once per process)");
        println!("  throughput         {:.1} calls/s", calls as f64 / elapsed.as_secs_f64());
        println!("  CPU per call       {:.1} µs (runner, protocol, parsing, client and mock together)", (cpu1 - cpu0).as_secs_f64() * 1e6 / calls as f64);
        println!("  peak RSS           {:.1} MB", rss_kb as f64 / 1024.0);
    });
}

/// The call log as the app keeps it in memory: the replies cache, and a
/// count of the calls; the records themselves go to the database there (the
/// engine's `MemoryStore` keeps every prompt, 60 MB at 15,000 calls: that
/// would measure the test double, not judging).
#[derive(Default)]
struct CountingStore {
    cache: std::sync::Mutex<std::collections::HashMap<String, CachedReply>>,
    fresh: std::sync::atomic::AtomicUsize,
}

impl CallStore for CountingStore {
    fn cached<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<CachedReply>, String>> {
        Box::pin(async move { Ok(self.cache.lock().unwrap().get(key).cloned()) })
    }

    fn record(&self, call: CallRecord) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            if let (Some(text), false) = (call.reply, call.cached) {
                self.fresh.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let reply = CachedReply {
                    text,
                    model: call.model,
                    prompt_tokens: call.prompt_tokens,
                    completion_tokens: call.completion_tokens,
                    truncated: call.truncated,
                };
                self.cache.lock().unwrap().insert(call.key, reply);
            }
            Ok(())
        })
    }
}

//! Judging throughput (issue 7): 150 questions × one pair of methods under
//! the unbiased protocol with N = 2 repeats per order and M = 25 trials —
//! 3,750 job items of 4 scoring calls each, 15,000 calls — through the real
//! `openai` client to the mock server answering every call in 100 ms, 64
//! calls in flight. Little's law bounds the wall time at 15,000 / 640 =
//! 23.4 s. Reports the wall time, the fraction of the bound, the CPU per
//! call (job runner, protocol, parsing, client and mock together) and the
//! peak RSS; checks every item was judged and every call was fresh.
//!
//! The reference: a bare reqwest client sending the very request bodies
//! Assay sent, as many at a time, to the same mock in the same process,
//! and reading the replies, nothing more. On a 2-core VM the kernel's
//! wake-ups and the loopback round trips alone keep any client above the
//! bound (the requirement: ≤ 1.32 s of 800 calls; the bare client took
//! 1.316-1.324 s on an Intel Xeon VM, 2026-12-03), so Assay's own cost is
//! its time over the bare client's. Rounds alternate (BENCH_ROUNDS of
//! each, default 3: medians reported); a round's wall time includes a new
//! client's connections and, for Assay, asking the server for the context
//! window.
//! `cargo bench -p engine --bench judge` (BENCH_QUESTIONS, BENCH_TRIALS to scale).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::judge::protocol::{run_unbiased_item, UnbiasedItem};
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
    let rounds = env("BENCH_ROUNDS", 3).max(1) as usize;
    let concurrency = 64;
    let latency = Duration::from_millis(100);
    let calls = (questions * trials * repeats * 2) as usize;
    // The request bodies Assay sent, kept (from its second round) for the
    // bare client to send alike.
    static SENT: Mutex<Option<Vec<String>>> = Mutex::new(None);
    // A judge that scores by the answers' lengths: a valid reply for every request.
    let reply = |req: &Value| {
        if let Some(sent) = SENT.lock().unwrap().as_mut() {
            sent.push(req.to_string());
        }
        let user = req["messages"][1]["content"].as_str().unwrap_or("");
        let n = (user.len() % 5) as u64;
        let scores = json!({"Comprehensiveness": n, "Relevance": 3, "Empowerment": 4 - n.min(4), "Directness": 2});
        json!({"Answer 1": scores, "Answer 2": scores, "reasoning": "benchmark"}).to_string()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mock =
            MockServer::start(MockConfig {
                latency,
                responder: Some(Responder(Arc::new(reply))),
                // No copy of every prompt in the mock's statistics: the
                // peak RSS is then the client's.
                lean: true,
                // Each reply composed as its request arrives and sent 100 ms
                // after: 64 replies due at one instant go out at it.
                compose_first: true,
                ..Default::default()
            })
            .await;
        // cl100k's tables load once per process, on the first count (the
        // server at its first call; here before the clock starts).
        let loading = Instant::now();
        engine::chunk::Bpe::count(engine::chunk::Tokenizer::Cl100kBase, "warm up");
        let tokenizer_ms = loading.elapsed().as_secs_f64() * 1e3;
        let bound = calls as f64 * latency.as_secs_f64() / concurrency as f64;
        println!(
            "judge: {questions} questions × {trials} trials × {repeats} repeats × 2 orders = {calls} calls, {} items; mock latency {} ms, {concurrency} in flight",
            questions * trials,
            latency.as_millis()
        );
        println!("  (cl100k tokenizer loaded before the clock started: {tokenizer_ms:.0} ms, once per process)");

        // Round 1: Assay alone (its CPU and peak RSS are this round's).
        let (cpu0, _) = cpu_and_rss();
        let first = judge_round(&mock, questions, trials, repeats, concurrency).await;
        let (cpu1, rss_kb) = cpu_and_rss();
        let mut assay = vec![first];
        let mut bare = Vec::new();
        let mut bare_cpu = Duration::ZERO;
        // Then Assay and a bare client in turn: the bare client sends the
        // very bodies Assay sent, `concurrency` at a time, and reads each
        // reply, nothing else (no runner, protocol, parsing, cache or
        // store): the time this machine and this mock allow any client.
        if rounds > 1 {
            *SENT.lock().unwrap() = Some(Vec::with_capacity(calls));
            assay.push(judge_round(&mock, questions, trials, repeats, concurrency).await);
            let bodies = Arc::new(SENT.lock().unwrap().take().expect("the bodies kept"));
            assert_eq!(bodies.len(), calls, "every body kept");
            while bare.len() < rounds {
                let (c0, _) = cpu_and_rss();
                bare.push(bare_round(&mock, &bodies, concurrency).await);
                bare_cpu += cpu_and_rss().0 - c0;
                if assay.len() < rounds {
                    assay.push(judge_round(&mock, questions, trials, repeats, concurrency).await);
                }
            }
        }
        let secs = |v: &[Duration]| v.iter().map(|d| format!("{:.3}", d.as_secs_f64())).collect::<Vec<_>>().join(", ");
        let median = |v: &[Duration]| {
            let mut v = v.to_vec();
            v.sort();
            v[v.len() / 2].as_secs_f64()
        };
        let a = median(&assay);
        println!("  Assay, {} round(s)  {} s; median {a:.3} s = {:.1}% of the bound {bound:.2} s", assay.len(), secs(&assay), 100.0 * bound / a);
        if !bare.is_empty() {
            let b = median(&bare);
            println!("  bare client         {} s; median {b:.3} s = {:.1}% of the bound", secs(&bare), 100.0 * bound / b);
            println!("  bare client's CPU   {:.1} µs per call (client and mock)", bare_cpu.as_secs_f64() * 1e6 / (calls * bare.len()) as f64);
            println!("  Assay / bare client {:.3} (Assay's throughput {:.1}% of the bare client's)", a / b, 100.0 * b / a);
        }
        println!("  throughput         {:.1} calls/s (median round)", calls as f64 / a);
        println!("  CPU per call       {:.1} µs (round 1: runner, protocol, parsing, client and mock together)", (cpu1 - cpu0).as_secs_f64() * 1e6 / calls as f64);
        println!("  peak RSS           {:.1} MB (after round 1)", rss_kb as f64 / 1024.0);
    });
}

/// One judging job through the real `openai` client (a new one: new
/// connections, the context window asked of the server): its wall time.
/// Checks every item was judged and every draw was a call of its own.
async fn judge_round(mock: &MockServer, questions: u32, trials: u32, repeats: u32, concurrency: usize) -> Duration {
    let mut config = OpenAiConfig::new(mock.base_url(), "mock-model");
    config.concurrency = concurrency;
    let log = Arc::new(CountingStore::default());
    let gw = Gateway::new(Arc::new(OpenAiProvider::new(config).unwrap()), log.clone(), PriceTable::default());
    let answer = |q: u32, side: &str| {
        format!(
            "Answer {side} to question {q}: the Salt Guild of Saltmere met every spring; Ada Pell led it for {} years.",
            q % 40
        )
    };
    let items: Vec<WorkItem> = (0..trials)
        .flat_map(|t| {
            (0..questions).map(move |q| WorkItem {
                key: format!("u-1-2-{q}-{t:03}"),
                payload: serde_json::to_value(UnbiasedItem::new(
                    &format!("What did the Guild do in year {q}?"),
                    &answer(q, "A"),
                    &answer(q, "B"),
                    t,
                    repeats,
                ))
                .unwrap(),
            })
        })
        .collect();
    let n_items = items.len();
    let store = MemoryJobStore::default();
    let keys: Vec<String> = items.iter().map(|i| i.key.clone()).collect();
    let started = Instant::now();
    run(1, items, &store, concurrency, false, &CancellationToken::new(), &|_| {}, |item| {
        run_unbiased_item(&gw, 1, item)
    })
    .await
    .unwrap();
    let elapsed = started.elapsed();
    let judged = keys.iter().filter(|k| matches!(store.outcome(1, k), Some(ItemOutcome::Done { .. }))).count();
    assert_eq!(judged, n_items, "every item judged");
    let calls = (questions * trials * repeats * 2) as usize;
    assert_eq!(log.fresh.load(std::sync::atomic::Ordering::SeqCst), calls, "every draw a call of its own");
    elapsed
}

/// `bodies` POSTed to the mock by a plain reqwest client (a new one),
/// `concurrency` tasks taking the next body as each reply is read.
async fn bare_round(mock: &MockServer, bodies: &Arc<Vec<String>>, concurrency: usize) -> Duration {
    let client = reqwest::Client::builder().pool_max_idle_per_host(concurrency).build().unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, url, bodies, next) = (client.clone(), url.clone(), bodies.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(body) = bodies.get(i) else { break };
                    let response = client
                        .post(&url)
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await
                        .unwrap();
                    assert!(response.status().is_success());
                    response.text().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    started.elapsed()
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

//! Gateway throughput: 5,000 calls through the real `openai` client to the
//! mock server answering with 100 ms latency, at concurrency 64.
//! Little's law bounds throughput at 64 / 0.1 s = 640 calls/s; this reports
//! the fraction achieved, the gateway's CPU time per call and the peak RSS
//! of the process (client, gateway and mock together).
//! `cargo bench -p engine --bench gateway`

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{CallContext, ChatRequest, Gateway, MemoryStore, Message, PriceTable};
use mockllm::{MockConfig, MockServer};

mod common;
use common::cpu_and_rss;

fn main() {
    let calls: usize = std::env::var("BENCH_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(5000);
    let concurrency = 64;
    let latency = Duration::from_millis(100);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mock = MockServer::start(MockConfig { latency, ..Default::default() }).await;
        let mut config = OpenAiConfig::new(mock.base_url(), "mock-model");
        config.concurrency = concurrency;
        let gw = Arc::new(Gateway::new(
            Arc::new(OpenAiProvider::new(config).unwrap()),
            Arc::new(MemoryStore::default()),
            PriceTable::default(),
        ));
        // Warm the connection pool.
        let mut warm = tokio::task::JoinSet::new();
        for i in 0..concurrency {
            let gw = gw.clone();
            warm.spawn(async move { gw.chat(&req(1_000_000 + i), &CallContext::default()).await.unwrap() });
        }
        while warm.join_next().await.is_some() {}

        let (cpu0, _) = cpu_and_rss();
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..calls {
            let gw = gw.clone();
            tasks.spawn(async move { gw.chat(&req(i), &CallContext::default()).await.unwrap() });
        }
        while let Some(r) = tasks.join_next().await {
            r.unwrap();
        }
        let elapsed = started.elapsed();
        let (cpu1, rss_kb) = cpu_and_rss();
        let rate = calls as f64 / elapsed.as_secs_f64();
        let bound = concurrency as f64 / latency.as_secs_f64();
        println!("gateway: {calls} calls at concurrency {concurrency}, mock latency {} ms", latency.as_millis());
        println!("  elapsed            {:.2} s", elapsed.as_secs_f64());
        println!(
            "  throughput         {rate:.1} calls/s = {:.1}% of the Little's-law bound ({bound:.0}/s)",
            100.0 * rate / bound
        );
        println!(
            "  CPU per call       {:.1} µs (client, gateway, cache and mock together)",
            (cpu1 - cpu0).as_secs_f64() * 1e6 / calls as f64
        );
        println!("  peak RSS           {:.1} MB", rss_kb as f64 / 1024.0);
        assert_eq!(mock.stats().ok as usize, calls + concurrency);
    });
}

fn req(i: usize) -> ChatRequest {
    ChatRequest::new(
        "bench",
        vec![Message::user(format!("Benchmark question {i}: which answer is more comprehensive?"))],
    )
}

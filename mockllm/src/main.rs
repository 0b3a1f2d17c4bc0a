//! `mockllm ADDR [LATENCY_MS] [FAULT_RATE] [MODE]`: the mock server as a
//! process, for browser tests (Playwright starts it beside `assay serve`).
//! MODE: `rambling`, or `context=N` (a small context, advertised in
//! `/v1/models`), or `context=N,hidden` (not advertised), or `prefix=N`
//! (automatic prefix caching in blocks of N words, reported as
//! `usage.prompt_tokens_details.cached_tokens`).

use std::time::Duration;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:3189".into()).parse().expect("ADDR like 127.0.0.1:3189");
    let latency: u64 = args.next().map(|v| v.parse().expect("LATENCY_MS")).unwrap_or(0);
    let faults: f64 = args.next().map(|v| v.parse().expect("FAULT_RATE")).unwrap_or(0.0);
    let mut config = mockllm::MockConfig {
        latency: Duration::from_millis(latency),
        faults: mockllm::Faults::spread(faults),
        ..Default::default()
    };
    match args.next().as_deref() {
        None | Some("") => {}
        Some("rambling") => config.rambling = true,
        Some("peers") => config.responder = Some(mockllm::Responder(std::sync::Arc::new(mockllm::peers::respond))),
        Some(mode) if mode.starts_with("prefix=") => {
            config.prefix_cache = Some(mode["prefix=".len()..].parse().expect("prefix=N (words a cached block holds)"));
        }
        Some(mode) => {
            let spec =
                mode.strip_prefix("context=").expect("MODE: rambling, peers, context=N, context=N,hidden or prefix=N");
            let (n, hidden) = spec.split_once(',').map_or((spec, false), |(n, h)| (n, h == "hidden"));
            config.context = Some(n.parse().expect("context=N"));
            config.advertise_context = !hidden;
        }
    }
    let server = mockllm::MockServer::start_on(addr, config).await;
    println!("mockllm at {} (latency {latency} ms, faults {faults})", server.base_url());
    tokio::signal::ctrl_c().await.ok();
}

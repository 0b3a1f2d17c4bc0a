//! Knowledge-graph construction:
//! 1. offline extraction and merging of Christmas Carol (stave one) and
//!    Alice: wall time and peak RSS;
//! 2. the LLM path's framework overhead: the whole extraction job (one
//!    gleaning turn) through the real `openai` client to the mock server
//!    answering at once with realistic JSON, at concurrency 16: wall time
//!    and call count;
//! 3. the explorer's layout (done once when a graph is stored): Alice's
//!    offline graph and a synthetic 5,000-node, 20,000-edge graph (planted
//!    partition, as the browser benchmark's fixture).
//! `cargo bench -p engine --bench graph`

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::chunk::{chunk_text, ChunkSettings};
use engine::graph::extract::{run_item, ChunkExtraction, ExtractSettings};
use engine::graph::KnowledgeGraph;
use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{Gateway, MemoryStore, PriceTable};
use mockllm::{MockConfig, MockServer, Responder};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

fn peak_rss_mb() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

fn corpus(name: &str) -> String {
    let dir = std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into());
    std::fs::read_to_string(format!("{dir}/{name}")).unwrap().replace("\r\n", "\n")
}

fn offline(name: &str) {
    let text = corpus(name);
    let started = Instant::now();
    let mut graph = KnowledgeGraph::default();
    let chunks = chunk_text(&text, &ChunkSettings::default()).unwrap();
    for c in &chunks {
        graph.merge(c.index as i64, &engine::graph::offline::extract(&text[c.start..c.end]));
    }
    let elapsed = started.elapsed();
    println!(
        "offline  {name:32} {:>3} chunks → {:>4} nodes, {:>4} edges in {:>7.1} ms (peak RSS so far {:.1} MB)",
        chunks.len(),
        graph.nodes.len(),
        graph.edges.len(),
        elapsed.as_secs_f64() * 1e3,
        peak_rss_mb()
    );
}

/// The mock's reply: the offline extractor's JSON for the passage; nothing on gleaning.
fn realistic(req: &Value) -> String {
    let messages = req["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"].as_str().unwrap();
    if last.starts_with("Some entities") {
        return r#"{"entities": [], "relations": []}"#.into();
    }
    let passage = engine::llm::prompt::delimited(last).unwrap_or("");
    serde_json::to_string(&engine::graph::offline::extract(passage)).unwrap()
}

async fn through_mock(name: &str) {
    let text = corpus(name);
    let chunks = chunk_text(&text, &ChunkSettings::default()).unwrap();
    let items: Vec<WorkItem> = chunks
        .iter()
        .map(|c| WorkItem {
            key: format!("chunk-{}", c.index),
            payload: serde_json::json!({"text": &text[c.start..c.end]}),
        })
        .collect();
    let mock =
        MockServer::start(MockConfig { responder: Some(Responder(Arc::new(realistic))), ..Default::default() }).await;
    let mut config = OpenAiConfig::new(mock.base_url(), "mock-model");
    config.concurrency = 16;
    let gw = Gateway::new(
        Arc::new(OpenAiProvider::new(config).unwrap()),
        Arc::new(MemoryStore::default()),
        PriceTable::default(),
    );
    let settings = ExtractSettings::default();
    let store = MemoryJobStore::default();
    let started = Instant::now();
    run(1, items.clone(), &store, 16, false, &CancellationToken::new(), &|_| {}, |item| {
        run_item(&gw, 1, item, &settings)
    })
    .await
    .unwrap();
    let mut graph = KnowledgeGraph::default();
    for (i, item) in items.iter().enumerate() {
        if let Some(ItemOutcome::Done { result, .. }) = store.outcome(1, &item.key) {
            graph.merge(i as i64, &serde_json::from_str::<ChunkExtraction>(&result).unwrap().extraction);
        }
    }
    let elapsed: Duration = started.elapsed();
    println!(
        "llm path {name:32} {:>3} chunks, {} calls → {} nodes in {:.2} s ({:.1} ms per call, mock answering at once)",
        items.len(),
        mock.stats().ok,
        graph.nodes.len(),
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e3 / mock.stats().ok as f64
    );
}

/// 5,000 nodes in communities of 100, 20,000 distinct edges, 85% inside a community.
fn planted_partition(nodes: usize, edges: usize) -> Vec<(usize, usize)> {
    let mut rng = fastrand::Rng::with_seed(42);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(edges);
    while out.len() < edges {
        let a = rng.usize(..nodes);
        let b = if rng.f64() < 0.85 {
            a / 100 * 100 + rng.usize(..100.min(nodes - a / 100 * 100))
        } else {
            rng.usize(..nodes)
        };
        if a != b && seen.insert((a.min(b), a.max(b))) {
            out.push((a, b));
        }
    }
    out
}

fn layouts() {
    let text = corpus("alice_in_wonderland.txt");
    let mut graph = KnowledgeGraph::default();
    for c in &chunk_text(&text, &ChunkSettings::default()).unwrap() {
        graph.merge(c.index as i64, &engine::graph::offline::extract(&text[c.start..c.end]));
    }
    let started = Instant::now();
    let positions = graph.positions(42);
    println!(
        "layout   alice (offline graph)              {:>5} nodes, {:>5} edges in {:>7.1} ms",
        positions.len(),
        graph.edges.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    let (n, m) = (5_000, 20_000);
    let edges = planted_partition(n, m);
    let iterations = engine::graph::layout::default_iterations(n);
    let started = Instant::now();
    let pos = engine::graph::layout::layout(n, &edges, iterations, 42);
    println!(
        "layout   synthetic planted partition         {:>5} nodes, {:>5} edges in {:>7.1} ms ({iterations} iterations; peak RSS so far {:.1} MB)",
        pos.len(),
        m,
        started.elapsed().as_secs_f64() * 1e3,
        peak_rss_mb()
    );
}

fn main() {
    layouts();
    offline("christmas_carol_stave1.txt");
    offline("alice_in_wonderland.txt");
    offline("sherlock_holmes.txt");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        through_mock("christmas_carol_stave1.txt").await;
        through_mock("alice_in_wonderland.txt").await;
        through_mock("sherlock_holmes.txt").await;
    });
}

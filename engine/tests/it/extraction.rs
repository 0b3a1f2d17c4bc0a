//! Graph extraction as a job through the real `openai` client, against the
//! mock server with canned extraction replies.

use std::sync::Arc;

use engine::graph::describe;
use engine::graph::extract::{run_item, ChunkExtraction, ExtractSettings};
use engine::graph::KnowledgeGraph;
use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{Gateway, MemoryStore, PriceTable};
use mockllm::{MockConfig, MockServer, Responder};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// First turn: one entity named after the passage's chunk label, related to
/// "Saltmere". A gleaning turn: one more entity.
fn canned(req: &Value) -> String {
    let messages = req["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"].as_str().unwrap();
    let passage = messages[1]["content"].as_str().unwrap();
    if messages[0]["content"].as_str().unwrap().starts_with("You maintain a knowledge graph") {
        let count = passage.lines().filter(|l| l.starts_with("- ")).count();
        return format!("Saltmere is a fishing village ({count} descriptions merged).");
    }
    let label = passage.split_whitespace().find(|w| w.starts_with("chunk")).unwrap_or("chunk?").trim_end_matches('.');
    if last.starts_with("Some entities") {
        let turn = messages.len() / 2;
        format!(
            r#"{{"entities": [{{"name": "Gleaned {label} {turn}", "type": "concept", "description": "found late"}}], "relations": []}}"#
        )
    } else {
        format!(
            r#"```json
{{"entities": [{{"name": "Entity {label}", "type": "person", "description": "from {label}"}}, {{"name": "Saltmere", "type": "location", "description": "a village by the sea, as {label} tells at some length"}}],
 "relations": [{{"source": "Entity {label}", "target": "Saltmere", "description": "lives in", "keywords": "home", "strength": 3}}]}}
```"#
        )
    }
}

fn items() -> Vec<WorkItem> {
    (1..=3)
        .map(|i| WorkItem {
            key: format!("chunk-{i}"),
            payload: serde_json::json!({ "text": format!("This is chunk{i}. It mentions Saltmere.") }),
        })
        .collect()
}

/// Both phases of a graph job: extraction per chunk, then summaries of
/// merged descriptions over the budget.
async fn build(gw: &Gateway, settings: &ExtractSettings) -> KnowledgeGraph {
    let store = MemoryJobStore::default();
    run(1, items(), &store, 4, false, &CancellationToken::new(), &|_| {}, |item| run_item(gw, 1, item, settings))
        .await
        .unwrap();
    let mut graph = merged(&store);
    let targets = describe::items(&graph, settings.summary_budget);
    run(1, targets.clone(), &store, 4, false, &CancellationToken::new(), &|_| {}, |item| {
        describe::run_item(gw, 1, item)
    })
    .await
    .unwrap();
    for t in &targets {
        match store.outcome(1, &t.key).unwrap() {
            ItemOutcome::Done { result, .. } => assert!(describe::apply(&mut graph, &t.item_key().unwrap(), &result)),
            ItemOutcome::Failed { error, .. } => panic!("{} failed: {error}", t.key),
        }
    }
    graph
}

fn merged(store: &MemoryJobStore) -> KnowledgeGraph {
    let mut graph = KnowledgeGraph::default();
    for (i, item) in items().iter().enumerate() {
        match store.outcome(1, &item.key).unwrap() {
            ItemOutcome::Done { result, .. } => {
                let chunk: ChunkExtraction = serde_json::from_str(&result).unwrap();
                graph.merge(i as i64 + 1, &chunk.extraction);
            }
            ItemOutcome::Failed { error, .. } => panic!("{} failed: {error}", item.key),
        }
    }
    graph
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extraction_makes_chunks_times_one_plus_gleaning_calls_and_rebuilds_from_cache() {
    let mock =
        MockServer::start(MockConfig { responder: Some(Responder(Arc::new(canned))), ..Default::default() }).await;
    let cache = Arc::new(MemoryStore::default());
    let gw = Gateway::new(
        Arc::new(OpenAiProvider::new(OpenAiConfig::new(mock.base_url(), "mock-model")).unwrap()),
        cache.clone(),
        PriceTable::default(),
    );

    // Saltmere's three descriptions (about 16 tokens each) exceed a budget of 30.
    let one = ExtractSettings { gleaning: 1, summary_budget: 30, ..Default::default() };
    let graph = build(&gw, &one).await;
    assert_eq!(mock.stats().ok, 3 * (1 + 1) + 1, "chunks × (1 + gleaning) extractions + one summary");
    assert_eq!(graph.nodes["saltmere"].descriptions, ["Saltmere is a fishing village (3 descriptions merged)."]);
    assert_eq!(graph.nodes.len(), 3 + 1 + 3, "an entity per chunk, Saltmere once, a gleaned entity per chunk");
    let saltmere = &graph.nodes["saltmere"];
    assert_eq!(saltmere.source_chunks.iter().copied().collect::<Vec<_>>(), [1, 2, 3], "provenance");
    assert_eq!(graph.degrees()["saltmere"], 3);
    assert!(graph.nodes.contains_key("gleaned chunk2 2"));

    // A second build is answered from the cache; a second gleaning turn costs only the new turn.
    mock.reset_stats();
    assert_eq!(build(&gw, &one).await, graph);
    assert_eq!(mock.stats().requests, 0);
    let two = ExtractSettings { gleaning: 2, ..one.clone() };
    let deeper = build(&gw, &two).await;
    assert_eq!(mock.stats().requests, 3, "only the second gleaning turn of each chunk is new");
    assert_eq!(deeper.nodes.len(), graph.nodes.len() + 3);
}

#[tokio::test]
async fn an_unreadable_first_reply_fails_the_item_with_its_reason() {
    let (_mock, gw, _) = crate::common::replying(|_| "Sorry, I can't.".to_string(), PriceTable::default()).await;
    let outcome = run_item(&gw, 1, items().remove(0), &ExtractSettings::default()).await;
    match outcome {
        ItemOutcome::Failed { error, .. } => {
            assert_eq!(error, "unreadable extraction: no JSON object and no delimited records in the reply")
        }
        other => panic!("{other:?}"),
    }
}

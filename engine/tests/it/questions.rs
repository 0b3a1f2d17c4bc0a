//! Graph-text-grounded question generation through the real `openai`
//! client against the mock server: each level's prompt carries the sampled
//! entity or relation text and its source chunks (read back from the call
//! log); subgraph items summarise their chunks first; replies that are not
//! questions fail their item.

use std::collections::HashMap;

use engine::graph::{Entity, Extraction, KnowledgeGraph, Relation};
use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::llm::PriceTable;
use engine::questions::graph::{item, plan, run_item, GraphQuestionSettings, Level};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A chain of six villagers, one chunk per link.
fn graph() -> (KnowledgeGraph, HashMap<i64, String>) {
    let people = ["Ada Pell", "Bo Marsh", "Cy Lisle", "Di Ashby", "Ed Vane", "Flo Hart"];
    let mut g = KnowledgeGraph::default();
    let mut chunks = HashMap::new();
    for (i, pair) in people.windows(2).enumerate() {
        let id = i as i64 + 1;
        chunks.insert(id, format!("Chunk {id}: {} taught {} to mend nets at Saltmere.", pair[0], pair[1]));
        g.merge(
            id,
            &Extraction {
                entities: pair
                    .iter()
                    .map(|p| Entity {
                        name: p.to_string(),
                        kind: "person".into(),
                        description: format!("{p} is a net-mender."),
                    })
                    .collect(),
                relations: vec![Relation {
                    source: pair[0].into(),
                    target: pair[1].into(),
                    description: format!("{} taught {} to mend nets.", pair[0], pair[1]),
                    keywords: vec![],
                    strength: 2.0,
                }],
            },
        );
    }
    (g, chunks)
}

/// Questions for question prompts, a sentence for chunk summaries.
fn canned(req: &Value) -> String {
    let system = req["messages"][0]["content"].as_str().unwrap();
    if system.starts_with("You summarise passages") {
        "A summary sentence.".into()
    } else {
        "Question: Why did the village teach net-mending?".into()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_level_prompts_with_its_structure_and_source_chunks() {
    let (_mock, gw, log) = crate::common::replying(canned, PriceTable::default()).await;
    let (g, chunks) = graph();
    let settings = GraphQuestionSettings { node: 2, edge: 2, subgraph: 1, min_hops: 4, ..Default::default() };
    let plans = plan(&g, &settings).unwrap();
    let items: Vec<WorkItem> =
        plans.iter().enumerate().map(|(i, p)| WorkItem::new(format!("q-{i}"), &item(&g, p, &chunks))).collect();
    let store = MemoryJobStore::default();
    run(1, items.clone(), &store, 4, false, &CancellationToken::new(), &|_| {}, |item| run_item(&gw, 1, item))
        .await
        .unwrap();

    let calls = log.log();
    for (i, p) in plans.iter().enumerate() {
        let key = format!("q-{i}");
        let mine: Vec<_> = calls.iter().filter(|c| c.context.item.as_deref() == Some(key.as_str())).collect();
        let question = mine.last().unwrap();
        let prompt = &question.messages[1].content;
        match p.level {
            Level::Node => {
                let node = &g.nodes[&p.nodes[0]];
                assert_eq!(question.purpose, "question_node");
                assert!(prompt.contains(&format!("Entity: {} (person)", node.name)), "{prompt}");
                assert!(prompt.contains(&format!("{} is a net-mender.", node.name)));
                for id in &p.source_chunk_ids {
                    assert!(prompt.contains(&chunks[id]), "node prompt carries chunk {id}");
                }
            }
            Level::Edge => {
                let edge = &g.edges[&p.edges[0]];
                assert_eq!(question.purpose, "question_edge");
                assert!(prompt.contains(&edge.descriptions[0]), "{prompt}");
                assert!(prompt.contains(&chunks[&p.source_chunk_ids[0]]));
            }
            Level::Subgraph => {
                assert_eq!(question.purpose, "question_subgraph");
                let summaries: Vec<_> = mine.iter().filter(|c| c.purpose == "summarise_chunk").collect();
                assert_eq!(summaries.len(), p.source_chunk_ids.len(), "one summary per chunk behind the walk");
                for id in &p.source_chunk_ids {
                    assert!(summaries.iter().any(|c| c.messages[1].content.contains(&chunks[id])));
                }
                assert!(prompt.contains("[1] A summary sentence."));
                assert!(p.edges.len() >= 4);
                for (a, b) in &p.edges {
                    assert!(
                        prompt.contains(&g.edges[&(a.clone(), b.clone())].descriptions[0]),
                        "relation in the prompt"
                    );
                }
            }
        }
        match store.outcome(1, &key).unwrap() {
            ItemOutcome::Done { result, .. } => {
                let r: Value = serde_json::from_str(&result).unwrap();
                assert_eq!(r["question"], "Why did the village teach net-mending?");
                assert_eq!(r["plan"]["level"], serde_json::to_value(p.level).unwrap());
            }
            ItemOutcome::Failed { error, .. } => panic!("{key}: {error}"),
        }
    }
}

#[tokio::test]
async fn a_reply_that_is_not_a_question_fails_the_item() {
    let (_mock, gw, _) = crate::common::replying(|_| "Ada taught Bo.".to_string(), PriceTable::default()).await;
    let (g, chunks) = graph();
    let plans = plan(&g, &GraphQuestionSettings { node: 1, edge: 0, subgraph: 0, ..Default::default() }).unwrap();
    let outcome = run_item(&gw, 1, WorkItem::new("q-0", &item(&g, &plans[0], &chunks))).await;
    match outcome {
        ItemOutcome::Failed { error, .. } => assert!(error.starts_with("the reply is not a question"), "{error}"),
        other => panic!("{other:?}"),
    }
}

/// The LLM's entity lists (seed 000 §V-A): the question goes to the
/// endpoint inside the prompt, the listed entities come back as the item's
/// result, and a reply with no list fails the item with the reason.
#[tokio::test]
async fn the_llm_lists_each_questions_entities_and_a_reply_without_a_list_fails() {
    use engine::graph::mentions;
    let reply = |req: &Value| {
        let prompt = req["messages"][1]["content"].as_str().unwrap();
        if prompt.contains("Saltmere") {
            r#"{"entities": ["Ada Pell", "Saltmere"]}"#.to_string()
        } else {
            "I cannot tell.".to_string()
        }
    };
    let (_mock, gw, log) = crate::common::replying(reply, PriceTable::default()).await;
    let item = |key: &str, question: &str| WorkItem {
        key: key.into(),
        payload: serde_json::json!({ "question_id": 7, "question": question }),
    };
    let question = "How did Ada Pell learn her trade at Saltmere?";
    match mentions::run_item(&gw, 3, item("m-7", question)).await {
        ItemOutcome::Done { result, tokens, .. } => {
            let r: Value = serde_json::from_str(&result).unwrap();
            assert_eq!(r["entities"], serde_json::json!(["Ada Pell", "Saltmere"]));
            assert_eq!(r["question_id"], 7);
            assert!(tokens > 0);
        }
        other => panic!("{other:?}"),
    }
    let call = &log.log()[0];
    assert_eq!(call.purpose, mentions::PURPOSE);
    assert!(call.messages[1].content.contains(question), "the question is in the prompt");
    assert_eq!(call.context.item.as_deref(), Some("m-7"));
    match mentions::run_item(&gw, 3, item("m-8", "What happened next?")).await {
        ItemOutcome::Failed { error, .. } => assert_eq!(error, "no JSON object in the reply"),
        other => panic!("{other:?}"),
    }
}

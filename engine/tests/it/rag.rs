//! The built-in RAG methods on a small hand-made graph and corpus: each
//! retrieves what its definition says (LightRAG-style exactly the one-hop
//! neighbours, FastGraphRAG-style ranked by personalized PageRank,
//! GraphRAG-style reports of the matched communities), every method answers
//! through the offline provider, and through the real `openai` client
//! against the mock server an answer's tokens are the sum of its logged
//! calls.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use engine::graph::{Entity, Extraction, KnowledgeGraph, Relation};
use engine::llm::{CallContext, Gateway, MemoryStore, PriceTable};
use engine::rag::fastgraphrag::{FastGraphRag, FastGraphRagSettings};
use engine::rag::graphrag::{self, GraphRag, GraphRagSettings};
use engine::rag::lightrag::{Keywords, LightRag, LightRagSettings};
use engine::rag::{method, CommunityReport, Corpus};
use serde_json::{json, Value};

/// Two villages joined by one bridge: Saltmere (Ada — Bo — Cy, a triangle
/// with the Guild) and Hollin (Di — Ed — Flo), Cy — Di the bridge. One
/// chunk per relation.
fn corpus() -> Corpus {
    let relations = [
        ("Ada Pell", "Bo Marsh", "Ada Pell taught Bo Marsh to mend nets."),
        ("Bo Marsh", "Cy Lisle", "Bo Marsh sold salt to Cy Lisle."),
        ("Ada Pell", "Salt Guild", "Ada Pell led the Salt Guild of Saltmere."),
        ("Bo Marsh", "Salt Guild", "Bo Marsh paid dues to the Salt Guild."),
        ("Cy Lisle", "Di Ashby", "Cy Lisle carried letters to Di Ashby across the river."),
        ("Di Ashby", "Ed Vane", "Di Ashby married Ed Vane at Hollin."),
        ("Ed Vane", "Flo Hart", "Ed Vane built the mill for Flo Hart."),
    ];
    let mut graph = KnowledgeGraph::default();
    let mut chunks = Vec::new();
    for (i, (a, b, text)) in relations.iter().enumerate() {
        let id = i as i64 + 1;
        chunks.push((id, format!("{text} It was a cold year in the valley.")));
        let entity = |name: &str| Entity {
            name: name.to_string(),
            kind: if name.contains("Guild") { "organization".into() } else { "person".into() },
            description: format!("{name} appears in the story of the valley."),
        };
        graph.merge(
            id,
            &Extraction {
                entities: vec![entity(a), entity(b)],
                relations: vec![Relation {
                    source: a.to_string(),
                    target: b.to_string(),
                    description: text.to_string(),
                    keywords: vec![],
                    strength: 1.0 + i as f64 % 3.0,
                }],
            },
        );
    }
    let saltmere = ["ada pell", "bo marsh", "cy lisle", "salt guild"];
    let communities: BTreeMap<String, usize> =
        graph.nodes.keys().map(|k| (k.clone(), usize::from(!saltmere.contains(&k.as_str())))).collect();
    Corpus::new(chunks, graph, communities)
}

fn offline() -> Gateway {
    Gateway::new(Arc::new(engine::offline::provider()), Arc::new(MemoryStore::default()), PriceTable::default())
}

fn keys(sections: &[engine::rag::Section], kind: &str) -> BTreeSet<String> {
    sections.iter().filter(|s| s.kind == kind).map(|s| s.id.clone()).collect()
}

#[test]
fn lightrag_local_takes_the_matched_entities_and_exactly_their_one_hop_neighbours() {
    let c = Arc::new(corpus());
    let m =
        LightRag::new(c.clone(), LightRagSettings { mode: "local".into(), top_k: 1, ..Default::default() }).unwrap();
    let kw = Keywords { low_level_keywords: vec!["Cy Lisle".into()], high_level_keywords: vec!["marriage".into()] };
    let ctx = m.context(&kw);
    // Cy's neighbours are Bo and Di; not Ada, the Guild (two hops) or Ed.
    assert_eq!(keys(&ctx, "entity"), BTreeSet::from(["bo marsh".into(), "cy lisle".into(), "di ashby".into()]));
    assert_eq!(keys(&ctx, "relation"), BTreeSet::from(["bo marsh|cy lisle".into(), "cy lisle|di ashby".into()]));
    assert_eq!(ctx.iter().find(|s| s.kind == "entity").unwrap().id, "cy lisle", "the matched entity first");
    // Bo cites chunks 1, 2 and 4, Cy 2 and 5, Di 5 and 6; Ada's chunk 3 with the Guild is not among them.
    assert_eq!(
        keys(&ctx, "chunk"),
        BTreeSet::from(["1".into(), "2".into(), "4".into(), "5".into(), "6".into()]),
        "chunks cited by the kept entities and relations"
    );
    // Global mode follows the high-level keywords to relations instead.
    let m = LightRag::new(c, LightRagSettings { mode: "global".into(), top_k: 1, ..Default::default() }).unwrap();
    let ctx = m.context(&Keywords { high_level_keywords: vec!["married".into()], ..kw });
    assert_eq!(keys(&ctx, "relation"), BTreeSet::from(["di ashby|ed vane".into()]));
    assert_eq!(keys(&ctx, "entity"), BTreeSet::from(["di ashby".into(), "ed vane".into()]));
}

#[test]
fn lightrag_budgets_cut_each_kind_of_context() {
    let c = Arc::new(corpus());
    let s =
        LightRagSettings { mode: "local".into(), top_k: 3, entity_tokens: 20, chunk_tokens: 0, ..Default::default() };
    let ctx = LightRag::new(c, s)
        .unwrap()
        .context(&Keywords { low_level_keywords: vec!["Bo Marsh".into()], high_level_keywords: vec![] });
    let entity_tokens: usize = ctx
        .iter()
        .filter(|s| s.kind == "entity")
        .map(|s| engine::chunk::Bpe::count(engine::chunk::Tokenizer::Cl100kBase, &s.text))
        .sum();
    assert!(entity_tokens <= 20 && entity_tokens > 0, "{entity_tokens}");
    assert!(keys(&ctx, "chunk").is_empty());
}

#[test]
fn fastgraphrag_seeds_by_name_and_ranks_by_personalized_pagerank() {
    let c = Arc::new(corpus());
    let m = FastGraphRag::new(c.clone(), FastGraphRagSettings { top_entities: 4, ..Default::default() }).unwrap();
    let seeds = m.seeds(&["Ed Vane".into(), "the ferryman".into()], "");
    assert_eq!(seeds.len(), 1, "only Ed Vane matches a node: {seeds:?}");
    assert_eq!(seeds[0].0, "ed vane");
    let ctx = m.context(&seeds);
    let entities: Vec<&str> = ctx.iter().filter(|s| s.kind == "entity").map(|s| s.id.as_str()).collect();
    assert_eq!(entities[0], "ed vane", "the seed ranks first");
    assert_eq!(entities.len(), 4);
    // Di (whose other edge, to Cy, is strong) outranks Cy and Flo.
    assert_eq!(entities, ["ed vane", "di ashby", "cy lisle", "flo hart"]);
    // Each entity's score is its mass in the seed's PPR vector, best first.
    let ranks = m.ranks(&seeds);
    let position: Vec<&String> = c.graph.nodes.keys().collect();
    for s in ctx.iter().filter(|s| s.kind == "entity") {
        let i = position.iter().position(|k| **k == s.id).unwrap();
        assert_eq!(s.score, ranks[i]);
    }
    let scores: Vec<f64> = ctx.iter().filter(|s| s.kind == "entity").map(|s| s.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]));
    assert!((ranks.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    // Relations only among the top entities.
    for r in keys(&ctx, "relation") {
        let (a, b) = r.split_once('|').unwrap();
        assert!(entities.contains(&a) && entities.contains(&b), "{r}");
    }
    // No name matches: BM25 over the entities seeds the walk.
    let fallback = m.seeds(&[], "Who led the guild?");
    assert_eq!(fallback[0].0, "salt guild");
}

#[test]
fn graphrag_local_brings_the_reports_of_the_matched_communities() {
    let c = corpus();
    let reports = [
        CommunityReport { community: 0, title: "Saltmere".into(), summary: "Salt and nets.".into(), rating: 8.0 },
        CommunityReport {
            community: 1,
            title: "Hollin".into(),
            summary: "The mill and a wedding.".into(),
            rating: 5.0,
        },
    ];
    assert!(GraphRag::new(Arc::new(corpus()), GraphRagSettings::default()).is_err(), "no reports, no GraphRAG");
    let m =
        GraphRag::new(Arc::new(c.with_reports(reports)), GraphRagSettings { top_k: 1, ..Default::default() }).unwrap();
    let ctx = m.local_context("Who built the mill for Flo Hart?");
    assert_eq!(keys(&ctx, "report"), BTreeSet::from(["1".into()]));
    assert_eq!(ctx[0].kind, "report", "reports come first");
    assert!(keys(&ctx, "entity").contains("flo hart"));
    assert_eq!(keys(&ctx, "chunk"), BTreeSet::from(["7".into()]));
}

#[test]
fn offline_reports_name_the_best_connected_members() {
    let c = corpus();
    let groups = graphrag::reportable(&c.graph, &c.communities);
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[&0][0], "bo marsh", "Bo has the most relations in Saltmere");
    let reply = graphrag::offline_report(&graphrag::report_request(&c.graph, 0, &groups[&0])).unwrap();
    let report = graphrag::parse_report(0, &reply).unwrap();
    assert!(report.title.starts_with("Bo Marsh and "), "{}", report.title);
    assert!((report.rating - (2.0 * 5f64.ln() * 10.0).round() / 10.0).abs() < 1e-9, "4 members: {}", report.rating);
    assert!(graphrag::parse_report(0, "{\"summary\": \"x\"}").unwrap_err().contains("no title"));
}

/// Every method answers offline; an answer keeps its context and its calls.
#[tokio::test]
async fn every_method_answers_offline_within_its_target_length() {
    let gw = offline();
    let c = corpus();
    let groups = graphrag::reportable(&c.graph, &c.communities);
    let ctx = CallContext::default();
    let mut reports = Vec::new();
    for (community, members) in &groups {
        let reply = gw.chat(&graphrag::report_request(&c.graph, *community, members), &ctx).await.unwrap();
        reports.push(graphrag::parse_report(*community, &reply.text).unwrap());
    }
    let c = Arc::new(c.with_reports(reports));
    for (name, _) in method::METHODS {
        if method::needs_vectors(name) || engine::rag::presets::is_remote(name) {
            continue; // NaiveRAG: tests/embed.rs; the HTTP method and its presets: server/tests/it/http.rs
        }
        let m = method::build(name, &Value::Null, c.clone(), Default::default()).unwrap();
        let a = m.answer(&gw, &ctx, "Who taught Bo Marsh to mend nets?", Some(12)).await.unwrap();
        assert_eq!(a.words(), 12, "{name}: {:?}", a.answer);
        assert!(!a.contexts.is_empty(), "{name} retrieved nothing");
        assert!(a.meter.llm_calls >= 1 && a.meter.prompt_tokens > 0, "{name}: {:?}", a.meter);
        assert!(a.query_ms >= a.retrieval_ms);
        if *name != "graphrag-global" {
            assert!(a.answer.contains("taught Bo Marsh") || a.answer.contains("Bo Marsh"), "{name}: {}", a.answer);
        }
    }
}

/// Through the `openai` client: the answer's tokens are the sum of the
/// calls the log holds for it, and the prompt carries the target length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answers_tokens_add_up_over_its_logged_calls() {
    let reply = |req: &Value| {
        let system = req["messages"][0]["content"].as_str().unwrap();
        if system.starts_with("You extract search keywords") {
            json!({"high_level_keywords": ["teaching"], "low_level_keywords": ["Bo Marsh"]}).to_string()
        } else {
            "Ada Pell taught him.".to_string()
        }
    };
    let (_mock, gw, log) = crate::common::replying(reply, PriceTable::default().with("mock-model", 1.0, 2.0)).await;
    let m = method::build("lightrag", &Value::Null, Arc::new(corpus()), Default::default()).unwrap();
    let ctx = CallContext { job_id: Some(9), item: Some("a-1".into()), prompt_hash: None };
    let a = m.answer(&gw, &ctx, "Who taught Bo Marsh?", Some(40)).await.unwrap();
    assert_eq!(a.answer, "Ada Pell taught him.");
    let calls = log.log();
    assert_eq!(calls.len(), 2, "keywords, then the answer");
    assert_eq!(a.meter.llm_calls, 2);
    assert_eq!(a.meter.prompt_tokens, calls.iter().map(|c| c.prompt_tokens).sum::<u64>());
    assert_eq!(a.meter.completion_tokens, calls.iter().map(|c| c.completion_tokens).sum::<u64>());
    assert!((a.meter.cost_usd - calls.iter().map(|c| c.cost_usd).sum::<f64>()).abs() < 1e-12);
    assert!(a.meter.cost_usd > 0.0);
    assert!(calls.iter().all(|c| c.context.item.as_deref() == Some("a-1") && c.context.prompt_hash.is_some()));
    let answer_prompt = &calls[1].messages[1].content;
    assert!(answer_prompt.contains("Answer in about 40 words."));
    assert!(answer_prompt.contains("Ada Pell taught Bo Marsh to mend nets."), "the context reaches the prompt");
    // The logged latencies fit inside the query time.
    assert!(a.query_ms + 1.0 >= calls.iter().map(|c| c.latency_ms as f64).sum::<f64>());
}

//! Retrieval and RAG methods: the reference methods seed 000 compares
//! (§VI: NaiveRAG, LightRAG, FastGraphRAG, Microsoft GraphRAG) and seed
//! 004's BM25 pipeline, behind one trait, [`Method`].
//!
//! A method answers a question over a [`Corpus`] (the project's chunks,
//! knowledge graph, communities and community reports): it retrieves
//! context ([`Section`]s), then asks the LLM to answer from it with the
//! shared answer prompt ([`answer`]), which takes an optional target length
//! in words (the length alignment of the judging protocol needs it). Every
//! LLM call's tokens, the retrieval time and the whole query time are kept
//! in the [`Answer`].
//!
//! # Layout
//! - [`answer`]: the answer prompt, its offline (extractive) version, and
//!   the token accounting ([`crate::llm::Meter`]).
//! - [`naive`]: NaiveRAG, dense retrieval by embedding similarity.
//! - [`bm25`]: the BM25 index and the BM25 method.
//! - [`lightrag`]: dual-level keywords → entities and relations → context.
//! - [`fastgraphrag`]: question entities → personalized PageRank ([`ppr`]).
//! - [`graphrag`]: community reports; local and global search.
//! - [`http`]: a user's own RAG service over HTTP; [`presets`]: LightRAG's
//!   server, Microsoft GraphRAG and a chat endpoint as named settings of it.
//! - [`method`]: building a method from its name and parameters.
//! - [`cost`]: the cost chart (seed 000 Table II).

pub mod answer;
pub mod bm25;
pub mod cost;
pub mod fastgraphrag;
pub mod graphrag;
pub mod http;
pub mod lightrag;
pub mod method;
pub mod naive;
pub mod ppr;
pub mod presets;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::graph::KnowledgeGraph;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::Meter;
use crate::llm::{BoxFuture, CallContext, Gateway};

pub use answer::Answer;
pub use types::rag::Section;

/// Characters of retrieved text under which an answer is said to rest on
/// little retrieved context: about a short paragraph, 60–80 words —
/// less than one chunk of the default size. Such an answer is close to the
/// model answering from the question alone, and its verdicts say little
/// about the method's retrieval.
pub const THIN_CONTEXT_CHARS: usize = 400;

/// Characters of retrieved text in `sections` (what the method put before
/// the model, or what a service reported it retrieved).
pub fn context_chars(sections: &[Section]) -> usize {
    sections.iter().map(|s| s.text.chars().count()).sum()
}

/// The context as the answer prompt shows it: sections grouped by kind in a
/// fixed order, each line tagged with what it is.
pub fn format_context(sections: &[Section]) -> String {
    let mut out = String::new();
    for (kind, title) in [
        ("point", "Key points from community reports"),
        ("report", "Community reports"),
        ("entity", "Entities"),
        ("relation", "Relationships"),
        ("chunk", "Sources"),
    ] {
        let of_kind: Vec<&Section> = sections.iter().filter(|s| s.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        out.push_str(&format!("-----{title}-----\n"));
        for s in of_kind {
            out.push_str(&format!("[{kind} {}] {}\n", s.id, s.text.trim()));
        }
    }
    out
}

/// The chunk ids among `sections`, in order (what retrieval metrics judge).
pub fn chunk_ids(sections: &[Section]) -> Vec<i64> {
    sections.iter().filter(|s| s.kind == "chunk").filter_map(|s| s.id.parse().ok()).collect()
}

/// Keeps sections, in order, while their texts fit in `budget` tokens.
pub fn within_budget(sections: Vec<Section>, budget: usize) -> Vec<Section> {
    let mut used = 0;
    let mut out = Vec::new();
    for s in sections {
        // (Remembered: the same chunks come back for question after question.)
        let n = crate::llm::content_tokens(&s.text) as usize;
        if used + n > budget {
            break;
        }
        used += n;
        out.push(s);
    }
    out
}

/// A community's report (GraphRAG-style indexing, [`graphrag`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommunityReport {
    pub community: usize,
    pub title: String,
    pub summary: String,
    /// 0–10: how important the community is (GraphRAG's `rating`).
    pub rating: f64,
}

/// What the methods work over.
#[derive(Debug, Default)]
pub struct Corpus {
    /// `(chunk id, text)` in corpus order.
    pub chunks: Vec<(i64, String)>,
    pub graph: KnowledgeGraph,
    /// Node key → community number.
    pub communities: BTreeMap<String, usize>,
    /// Community number → report (empty until the reports are written).
    pub reports: BTreeMap<usize, CommunityReport>,
    chunk_index: HashMap<i64, usize>,
}

impl Corpus {
    pub fn new(chunks: Vec<(i64, String)>, graph: KnowledgeGraph, communities: BTreeMap<String, usize>) -> Corpus {
        let chunk_index = chunks.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
        Corpus { chunks, graph, communities, reports: BTreeMap::new(), chunk_index }
    }

    pub fn with_reports(mut self, reports: impl IntoIterator<Item = CommunityReport>) -> Corpus {
        self.reports = reports.into_iter().map(|r| (r.community, r)).collect();
        self
    }

    pub fn chunk(&self, id: i64) -> Option<&str> {
        self.chunk_index.get(&id).map(|&i| self.chunks[i].1.as_str())
    }
}

/// An entity as context: `NAME (type): descriptions`.
pub fn entity_section(graph: &KnowledgeGraph, key: &str, score: f64) -> Option<Section> {
    let n = graph.nodes.get(key)?;
    Some(Section::new("entity", key, score, format!("{} ({}): {}", n.name, n.kind, n.descriptions.join(" "))))
}

/// A relation as context: `A — B: descriptions (keywords: …)`.
pub fn relation_section(graph: &KnowledgeGraph, key: &(String, String), score: f64) -> Option<Section> {
    let e = graph.edges.get(key)?;
    let name = |k: &str| graph.nodes.get(k).map_or(k.to_string(), |n| n.name.clone());
    let keywords = if e.keywords.is_empty() {
        String::new()
    } else {
        format!(" (keywords: {})", e.keywords.iter().cloned().collect::<Vec<_>>().join(", "))
    };
    let text = format!("{} — {}: {}{keywords}", name(&e.source), name(&e.target), e.descriptions.join(" "));
    Some(Section::new("relation", format!("{}|{}", e.source, e.target), score, text))
}

/// Chunks cited by the given weighted items (an entity's or relation's
/// `source_chunks` with the item's weight), best total first, ties by id.
pub fn cited_chunks<'a>(corpus: &Corpus, cited: impl IntoIterator<Item = (&'a BTreeSet<i64>, f64)>) -> Vec<Section> {
    let mut score: BTreeMap<i64, f64> = BTreeMap::new();
    for (chunks, weight) in cited {
        for id in chunks {
            *score.entry(*id).or_default() += weight;
        }
    }
    let mut ranked: Vec<(i64, f64)> = score.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().filter_map(|(id, s)| Some(Section::new("chunk", id, s, corpus.chunk(id)?))).collect()
}

/// BM25 over the graph's entities (name, type and descriptions) and
/// relations (names, keywords and descriptions): how the graph methods
/// match keywords and questions to the graph without embeddings.
pub struct GraphIndex {
    pub entities: bm25::Bm25Index,
    pub entity_keys: Vec<String>,
    pub relations: bm25::Bm25Index,
    pub relation_keys: Vec<(String, String)>,
    /// Each entity's distinct neighbours (absent: none), counted once.
    degrees: HashMap<String, usize>,
}

impl GraphIndex {
    pub fn new(graph: &KnowledgeGraph) -> GraphIndex {
        let entity_keys: Vec<String> = graph.nodes.keys().cloned().collect();
        let entity_docs: Vec<String> = graph
            .nodes
            .values()
            .map(|n| format!("{} {} {} {}", n.name, n.name, n.kind, n.descriptions.join(" ")))
            .collect();
        let relation_keys: Vec<(String, String)> = graph.edges.keys().cloned().collect();
        let relation_docs: Vec<String> =
            graph.edges.keys().filter_map(|k| relation_section(graph, k, 0.0)).map(|s| s.text).collect();
        let position = |docs: &[String]| -> bm25::Bm25Index {
            bm25::Bm25Index::new(docs.iter().enumerate().map(|(i, d)| (i as i64, d.as_str())))
        };
        let degrees = graph.degrees().into_iter().map(|(k, d)| (k.to_string(), d)).collect();
        GraphIndex {
            entities: position(&entity_docs),
            entity_keys,
            relations: position(&relation_docs),
            relation_keys,
            degrees,
        }
    }

    /// An entity's distinct neighbours in the graph the index was built on.
    pub fn degree(&self, key: &str) -> usize {
        self.degrees.get(key).copied().unwrap_or(0)
    }

    /// The `k` entities best matching `query`, `(key, score)`.
    pub fn entities(&self, query: &str, k: usize) -> Vec<(String, f64)> {
        self.entities.search(query, k).into_iter().map(|(i, s)| (self.entity_keys[i as usize].clone(), s)).collect()
    }

    /// The `k` relations best matching `query`, `(key, score)`.
    pub fn relations(&self, query: &str, k: usize) -> Vec<((String, String), f64)> {
        self.relations.search(query, k).into_iter().map(|(i, s)| (self.relation_keys[i as usize].clone(), s)).collect()
    }
}

/// A RAG method: answers a question over its corpus.
pub trait Method: Send + Sync {
    /// The method's name (`bm25`, `lightrag`, …).
    fn name(&self) -> &'static str;

    /// Retrieves the context for `question` (may call the LLM, e.g. for
    /// keywords, through `meter`).
    fn retrieve<'a>(
        &'a self,
        gateway: &'a Gateway,
        ctx: &'a CallContext,
        meter: &'a mut Meter,
        question: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Section>, String>>;

    /// Answers `question`: retrieval, then the answer prompt over the
    /// context. GraphRAG's global search overrides this (map-reduce).
    fn answer<'a>(
        &'a self,
        gateway: &'a Gateway,
        ctx: &'a CallContext,
        question: &'a str,
        target_words: Option<usize>,
    ) -> BoxFuture<'a, Result<Answer, String>> {
        Box::pin(async move {
            let started = std::time::Instant::now();
            let mut meter = Meter::default();
            let sections = self.retrieve(gateway, ctx, &mut meter, question).await?;
            let retrieval_ms = started.elapsed().as_secs_f64() * 1000.0;
            let text =
                answer::generate(gateway, ctx, &mut meter, question, &format_context(&sections), target_words).await?;
            Ok(Answer::new(text, sections, meter, retrieval_ms, started))
        })
    }
}

/// One question's answers-job item (key `a-QID`; a sanity check's second
/// run, `again-QID`): the question and the answer's target length, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub question_id: i64,
    pub question: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_words: Option<usize>,
}

/// What an answer item stores: the [`Answer`] with its question's id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    pub question_id: i64,
    #[serde(flatten)]
    pub answer: Answer,
}

/// Answers one question's [`Item`] with `method`. (A failed answer's
/// partial calls stay in the call log; the item reports no tokens.)
pub async fn run_item(method: &dyn Method, gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let Item { question_id, question, target_words } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let ctx = CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    match method.answer(gateway, &ctx, &question, target_words).await {
        Ok(answer) => {
            let tokens = answer.meter.prompt_tokens + answer.meter.completion_tokens;
            let cost_usd = answer.meter.cost_usd;
            ItemOutcome::done::<Item>(&Answered { question_id, answer }, tokens, cost_usd)
        }
        Err(error) => ItemOutcome::failed(error),
    }
}

/// Registers the RAG methods' offline tasks: the shared answer prompt,
/// LightRAG's keywords and GraphRAG's community reports and map step.
pub fn register_offline(p: &mut crate::llm::offline::OfflineProvider) {
    p.register(answer::PURPOSE, answer::offline);
    p.register(lightrag::PURPOSE, lightrag::offline);
    p.register(graphrag::REPORT_PURPOSE, graphrag::offline_report);
    p.register(graphrag::MAP_PURPOSE, graphrag::offline_map);
}

crate::job_items!(Item => Answered);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_groups_sections_by_kind_and_the_budget_cuts_in_order() {
        let sections = vec![
            Section::new("chunk", 7, 1.0, "Chunk seven."),
            Section::new("entity", "alice", 0.5, "ALICE (person): a girl."),
            Section::new("chunk", 3, 0.9, "Chunk three."),
        ];
        assert_eq!(
            format_context(&sections),
            "-----Entities-----\n[entity alice] ALICE (person): a girl.\n-----Sources-----\n[chunk 7] Chunk seven.\n[chunk 3] Chunk three.\n"
        );
        assert_eq!(chunk_ids(&sections), [7, 3]);
        let n: Vec<usize> =
            sections.iter().map(|s| crate::chunk::Bpe::count(crate::chunk::Tokenizer::Cl100kBase, &s.text)).collect();
        assert_eq!(within_budget(sections.clone(), n[0] + n[1]).len(), 2);
        let kept = within_budget(sections, n[0] + n[1] - 1);
        assert_eq!(kept.len(), 1, "the second does not fit, and nothing after it is taken: {kept:?}");
    }
}

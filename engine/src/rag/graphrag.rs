//! The GraphRAG-style method (Microsoft GraphRAG, Edge et al. 2024) over
//! the graph's Leiden communities (one level).
//!
//! - **Indexing**: one LLM report per community of at least
//!   [`MIN_COMMUNITY`] entities (`engine/prompts/community_report.txt`:
//!   title, summary, 0–10 rating, findings), from its entities' and
//!   relations' descriptions within [`REPORT_INPUT_TOKENS`]. Offline: the
//!   title names the two best-connected members; the summary is their
//!   descriptions' first sentences, extractively; the rating grows with
//!   the community's size (`min(10, 2·ln(1 + entities))`) — stated rules,
//!   not an LLM's judgement.
//! - **Local search**: the `top_k` entities BM25 matches to the question,
//!   the reports of their communities (most matched first), the relations
//!   touching them (by weight) and the chunks they cite, within shares of
//!   the token budget (reports 25%, entities and relations 25%, chunks 50%).
//! - **Global search**: map — the reports, most important first, in
//!   batches within `map_tokens`, each batch asked for key points with a
//!   0–100 score (`engine/prompts/global_map.txt`); reduce — points with a
//!   score above 0, best first, within `reduce_tokens`, are the context of
//!   the shared answer prompt. Offline map: a report's best sentence for
//!   the question, scored by the share of the question's content words the
//!   report holds.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{
    cited_chunks, entity_section, relation_section, within_budget, CommunityReport, Corpus, GraphIndex, Meter, Method,
    Section,
};
use crate::chunk::{Bpe, Tokenizer};
use crate::graph::KnowledgeGraph;
use crate::jobs::one_call;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::delimited;
use crate::llm::{BoxFuture, CallContext, ChatRequest, Gateway, Message};
use crate::text::sentences;
use crate::text::words;

pub const REPORT_PURPOSE: &str = "community_report";
pub const REPORT_PROMPT: &str = include_str!("../../prompts/community_report.txt");
pub const MAP_PURPOSE: &str = "global_map";
pub const MAP_PROMPT: &str = include_str!("../../prompts/global_map.txt");
/// Communities smaller than this get no report.
pub const MIN_COMMUNITY: usize = 2;
/// Token budget of a report's input (entities and relations).
pub const REPORT_INPUT_TOKENS: usize = 6000;

/// Communities that get a report, with their member keys (best connected first).
pub fn reportable(graph: &KnowledgeGraph, communities: &BTreeMap<String, usize>) -> BTreeMap<usize, Vec<String>> {
    let mut members: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (key, c) in communities {
        if graph.nodes.contains_key(key) {
            members.entry(*c).or_default().push(key.clone());
        }
    }
    members.retain(|_, m| m.len() >= MIN_COMMUNITY);
    let degrees = graph.degrees();
    let degree = |k: &str| degrees.get(k).copied().unwrap_or(0);
    for m in members.values_mut() {
        m.sort_by(|a, b| degree(b).cmp(&degree(a)).then_with(|| a.cmp(b)));
    }
    members
}

/// The report request of one community.
pub fn report_request(graph: &KnowledgeGraph, community: usize, members: &[String]) -> ChatRequest {
    let set: BTreeSet<&str> = members.iter().map(String::as_str).collect();
    let entities: Vec<Section> = members.iter().filter_map(|k| entity_section(graph, k, 0.0)).collect();
    let relations: Vec<Section> = graph
        .edges
        .keys()
        .filter(|(a, b)| set.contains(a.as_str()) && set.contains(b.as_str()))
        .filter_map(|k| relation_section(graph, k, 0.0))
        .collect();
    let input = within_budget(entities.into_iter().chain(relations).collect(), REPORT_INPUT_TOKENS);
    let user = format!("Community {community}:\n<<<\n{}\n>>>", super::format_context(&input).trim_end());
    let mut req = ChatRequest::new(REPORT_PURPOSE, vec![Message::system(REPORT_PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(1500);
    req
}

/// A report from a reply.
pub fn parse_report(community: usize, reply: &str) -> Result<CommunityReport, String> {
    let v = crate::llm::prompt::json_object(reply, "report")?;
    let title = v["title"].as_str().filter(|t| !t.trim().is_empty()).ok_or("the report has no title")?;
    let mut summary = v["summary"].as_str().unwrap_or("").trim().to_string();
    for f in v["findings"].as_array().into_iter().flatten() {
        let line = [f["summary"].as_str().unwrap_or(""), f["explanation"].as_str().unwrap_or("")].join(" ");
        if !line.trim().is_empty() {
            summary.push_str(&format!("\n{}", line.trim()));
        }
    }
    if summary.is_empty() {
        return Err("the report has no summary".into());
    }
    let rating = v["rating"].as_f64().unwrap_or(0.0).clamp(0.0, 10.0);
    Ok(CommunityReport { community, title: title.trim().to_string(), summary, rating })
}

/// The offline report (see the module docs).
pub fn offline_report(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let body = delimited(message).ok_or("the request has no community")?;
    let entities: Vec<(&str, &str)> = body
        .lines()
        .filter_map(|l| l.strip_prefix("[entity "))
        .filter_map(|l| l.split_once("] "))
        .map(|(_, text)| text.split_once(": ").unwrap_or((text, "")))
        .collect();
    let name = |s: &str| s.rsplit_once(" (").map_or(s, |(n, _)| n).to_string();
    let title = match entities.as_slice() {
        [] => "An empty community".to_string(),
        [one] => name(one.0),
        [a, b, ..] => format!("{} and {}", name(a.0), name(b.0)),
    };
    let summary: Vec<&str> = entities.iter().filter_map(|(_, d)| sentences(d).into_iter().next()).take(6).collect();
    let rating = (2.0 * (1.0 + entities.len() as f64).ln()).min(10.0);
    Ok(json!({
        "title": title,
        "summary": summary.join(" "),
        "rating": (rating * 10.0).round() / 10.0,
        "rating_explanation": format!("offline: {} entities", entities.len()),
        "findings": [],
    })
    .to_string())
}

/// One community's report item (key `report-N`): the community and its
/// members (node keys). The result is the [`CommunityReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportItem {
    pub community: usize,
    pub members: Vec<String>,
}

/// Writes one community's report ([`ReportItem`]) through the gateway.
pub async fn run_report_item(graph: &KnowledgeGraph, gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let ReportItem { community, members } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let req = report_request(graph, community, &members);
    one_call::<ReportItem>(gateway, job_id, &item, REPORT_PROMPT, &req, |reply| parse_report(community, reply)).await
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GraphRagSettings {
    /// `local` or `global`.
    pub mode: String,
    /// Local: entities matched to the question.
    pub top_k: usize,
    /// Local: the whole context's budget.
    pub context_tokens: usize,
    /// Global: reports per map call.
    pub map_tokens: usize,
    /// Global: the points given to the answer.
    pub reduce_tokens: usize,
}

impl Default for GraphRagSettings {
    fn default() -> Self {
        GraphRagSettings {
            mode: "local".into(),
            top_k: 10,
            context_tokens: 8000,
            map_tokens: 4000,
            reduce_tokens: 4000,
        }
    }
}

pub struct GraphRag {
    corpus: Arc<Corpus>,
    index: GraphIndex,
    settings: GraphRagSettings,
}

impl GraphRag {
    pub fn new(corpus: Arc<Corpus>, settings: GraphRagSettings) -> Result<GraphRag, String> {
        if !matches!(settings.mode.as_str(), "local" | "global") {
            return Err(format!("mode must be local or global, not \"{}\"", settings.mode));
        }
        if corpus.reports.is_empty() {
            return Err("the project has no community reports yet: GraphRAG indexing writes them first".into());
        }
        Ok(GraphRag { index: GraphIndex::new(&corpus.graph), corpus, settings })
    }

    fn report_section(r: &CommunityReport, score: f64) -> Section {
        Section::new("report", r.community, score, format!("{}: {}", r.title, r.summary.replace('\n', " ")))
    }

    /// Local search's context (no LLM): see the module docs.
    pub fn local_context(&self, question: &str) -> Vec<Section> {
        let graph = &self.corpus.graph;
        let budget = self.settings.context_tokens;
        let matched = self.index.entities(question, self.settings.top_k);
        let keys: BTreeSet<&str> = matched.iter().map(|m| m.0.as_str()).collect();
        // Reports of the matched entities' communities, most matched first.
        let mut hits: BTreeMap<usize, usize> = BTreeMap::new();
        for (key, _) in &matched {
            if let Some(c) = self.corpus.communities.get(key) {
                *hits.entry(*c).or_default() += 1;
            }
        }
        let mut reports: Vec<(&CommunityReport, usize)> =
            hits.iter().filter_map(|(c, n)| Some((self.corpus.reports.get(c)?, *n))).collect();
        reports.sort_by(|a, b| {
            b.1.cmp(&a.1).then(b.0.rating.total_cmp(&a.0.rating)).then(a.0.community.cmp(&b.0.community))
        });
        let reports =
            within_budget(reports.iter().map(|(r, n)| Self::report_section(r, *n as f64)).collect(), budget / 4);
        let mut relations: Vec<(&(String, String), f64)> = graph
            .edges
            .iter()
            .filter(|((a, b), _)| keys.contains(a.as_str()) || keys.contains(b.as_str()))
            .map(|(k, e)| (k, e.weight))
            .collect();
        relations.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        let graph_part = within_budget(
            matched
                .iter()
                .filter_map(|(k, s)| entity_section(graph, k, *s))
                .chain(relations.iter().filter_map(|(k, w)| relation_section(graph, k, *w)))
                .collect(),
            budget / 4,
        );
        let chunks = within_budget(
            cited_chunks(
                &self.corpus,
                matched.iter().filter_map(|(k, s)| Some((&graph.nodes.get(k)?.source_chunks, *s))),
            ),
            budget / 2,
        );
        reports.into_iter().chain(graph_part).chain(chunks).collect()
    }

    /// Global search's map batches: reports, most important first, grouped
    /// within `map_tokens` (a report larger than that goes alone).
    pub fn map_batches(&self) -> Vec<Vec<&CommunityReport>> {
        let mut reports: Vec<&CommunityReport> = self.corpus.reports.values().collect();
        reports.sort_by(|a, b| b.rating.total_cmp(&a.rating).then(a.community.cmp(&b.community)));
        let mut batches: Vec<Vec<&CommunityReport>> = Vec::new();
        let mut used = 0;
        for r in reports {
            let n = Tokenizer::Cl100kBase.count(&r.summary) + Tokenizer::Cl100kBase.count(&r.title);
            match batches.last_mut() {
                Some(batch) if used + n <= self.settings.map_tokens => {
                    batch.push(r);
                    used += n;
                }
                _ => {
                    batches.push(vec![r]);
                    used = n;
                }
            }
        }
        batches
    }
}

pub fn map_request(question: &str, reports: &[&CommunityReport]) -> ChatRequest {
    let sections: Vec<Section> = reports.iter().map(|r| GraphRag::report_section(r, r.rating)).collect();
    let user = format!("Question: {question}\nReports:\n<<<\n{}\n>>>", super::format_context(&sections).trim_end());
    let mut req = ChatRequest::new(MAP_PURPOSE, vec![Message::system(MAP_PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(1000);
    req
}

/// Points `(description, score)` from a map reply.
pub fn parse_points(reply: &str) -> Result<Vec<(String, f64)>, String> {
    let v = crate::llm::prompt::json_object(reply, "map reply")?;
    let points = v["points"].as_array().ok_or("the map reply has no \"points\" list")?;
    Ok(points
        .iter()
        .filter_map(|p| Some((p["description"].as_str()?.trim().to_string(), p["score"].as_f64().unwrap_or(0.0))))
        .filter(|(d, _)| !d.is_empty())
        .collect())
}

/// The offline map (see the module docs).
pub fn offline_map(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let question = message.lines().find_map(|l| l.strip_prefix("Question: ")).unwrap_or("");
    let asked: HashSet<String> = words(question).collect();
    let mut points = Vec::new();
    for line in delimited(message).unwrap_or("").lines().filter(|l| l.starts_with("[report ")) {
        let text = line.split_once("] ").map_or(line, |(_, t)| t);
        let present: HashSet<String> = words(text).collect();
        let share = asked.iter().filter(|w| present.contains(*w)).count() as f64 / asked.len().max(1) as f64;
        let best =
            sentences(text).into_iter().max_by_key(|s| words(s).filter(|w| asked.contains(w)).count()).unwrap_or(text);
        points.push(json!({ "description": best, "score": (share * 100.0).round() }));
    }
    Ok(json!({ "points": points }).to_string())
}

impl Method for GraphRag {
    fn name(&self) -> &'static str {
        if self.settings.mode == "global" {
            "graphrag-global"
        } else {
            "graphrag-local"
        }
    }

    /// Local: the context. Global: the map phase, whose points (kind
    /// `point`, id = the batch's communities) are the reduce's context.
    fn retrieve<'a>(
        &'a self,
        gateway: &'a Gateway,
        ctx: &'a CallContext,
        meter: &'a mut Meter,
        question: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Section>, String>> {
        Box::pin(async move {
            if self.settings.mode == "local" {
                return Ok(self.local_context(question));
            }
            let mut points: Vec<Section> = Vec::new();
            for batch in self.map_batches() {
                let reply = meter.chat(gateway, ctx, MAP_PROMPT, &map_request(question, &batch)).await?;
                let ids: Vec<String> = batch.iter().map(|r| r.community.to_string()).collect();
                for (description, score) in parse_points(&reply)? {
                    points.push(Section::new("point", ids.join(","), score, description));
                }
            }
            points.retain(|p| p.score > 0.0);
            points.sort_by(|a, b| b.score.total_cmp(&a.score));
            Ok(within_budget(points, self.settings.reduce_tokens))
        })
    }
}

crate::job_items!(ReportItem => CommunityReport);

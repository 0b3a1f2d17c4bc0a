//! Knowledge-graph extraction from one chunk (seed 000 §III-A), with
//! gleaning: after the first reply, the model is told that entities were
//! missed and asked to add them, up to `gleaning` more turns (the paper's
//! "deeper mining"; LightRAG's default is one).
//!
//! The first reply must parse (else the item fails with the reason); a
//! gleaning reply that does not parse adds nothing and is noted in the
//! item's result. Offline, the first turn runs the classical extractor and
//! gleaning adds nothing (the extractor finds what it can in one pass).

use serde::{Deserialize, Serialize};

use crate::graph::parse::{parse_extraction, parse_extraction_read};
use crate::graph::Extraction;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::{delimited, prompt_hash};
use crate::llm::{CallContext, ChatRequest, Gateway, Message};

pub const PURPOSE: &str = "extract_graph";
pub const GLEAN_PURPOSE: &str = "glean_graph";
pub const PROMPT: &str = include_str!("../../prompts/extract_graph.txt");
pub const GLEAN_PROMPT: &str = include_str!("../../prompts/glean_graph.txt");
/// Reply budgets: a chunk of ~1,200 tokens names a few dozen entities and
/// relations (≈40 tokens each); a gleaning turn adds fewer. A reply cut at
/// the budget keeps its complete entries (see [`crate::llm::json`]).
pub const MAX_TOKENS: u32 = 2000;
pub const GLEAN_MAX_TOKENS: u32 = 1000;

/// What extraction is asked to do (follow-up turns, entity types, the
/// description budget): the graph stage's request, as the form, the CLI
/// and a manifest's `[graph]` give it.
pub type ExtractSettings = types::requests::GraphRequest;

/// The first turn's request.
pub fn request(text: &str, settings: &ExtractSettings) -> ChatRequest {
    let system = PROMPT.trim().replace("{entity_types}", &settings.entity_types.join(", "));
    let mut req =
        ChatRequest::new(PURPOSE, vec![Message::system(system), Message::user(format!("Passage:\n<<<\n{text}\n>>>"))]);
    req.json = true;
    req.max_tokens = Some(MAX_TOKENS);
    req
}

/// The conversation after `previous` was answered with `reply`: one more gleaning turn.
pub fn glean_request(previous: &ChatRequest, reply: &str) -> ChatRequest {
    let mut req = previous.clone();
    req.purpose = GLEAN_PURPOSE.to_string();
    req.messages.push(Message::assistant(reply));
    req.messages.push(Message::user(GLEAN_PROMPT.trim()));
    req.max_tokens = Some(GLEAN_MAX_TOKENS);
    req
}

/// Types a model often uses for one of Assay's (a "character" is a person).
const TYPE_SYNONYMS: &[(&str, &[&str])] = &[
    ("person", &["character", "people", "human", "individual", "man", "woman", "persons"]),
    ("organization", &["organisation", "company", "group", "institution", "agency", "org", "organizations"]),
    ("location", &["place", "city", "country", "region", "geo", "building", "area", "locations"]),
    ("event", &["occasion", "incident", "events"]),
    ("concept", &["idea", "theme", "topic", "concepts"]),
    ("object", &["item", "thing", "artifact", "artefact", "objects"]),
];

/// Keeps the entities of the requested `types` (a synonym counts as its
/// type: "character" is "person" when "person" was asked for) and drops
/// the rest with the relations that name them; returns the dropped
/// entities' types with their counts.
pub fn settle_types(x: &mut Extraction, types: &[String]) -> std::collections::BTreeMap<String, u32> {
    let wanted: std::collections::HashSet<String> = types.iter().map(|t| t.trim().to_lowercase()).collect();
    let mut dropped_names = std::collections::HashSet::new();
    let mut dropped = std::collections::BTreeMap::new();
    x.entities.retain_mut(|e| {
        let kind = e.kind.trim().to_lowercase();
        let settled = if wanted.contains(&kind) {
            Some(kind.clone())
        } else {
            TYPE_SYNONYMS
                .iter()
                .find(|(t, others)| wanted.contains(*t) && others.contains(&kind.as_str()))
                .map(|(t, _)| t.to_string())
        };
        match settled {
            Some(k) => {
                e.kind = k;
                true
            }
            None => {
                *dropped.entry(if kind.is_empty() { "(none)".to_string() } else { kind }).or_insert(0) += 1;
                dropped_names.insert(crate::graph::normalise_name(&e.name));
                false
            }
        }
    });
    x.relations.retain(|r| {
        !dropped_names.contains(&crate::graph::normalise_name(&r.source))
            && !dropped_names.contains(&crate::graph::normalise_name(&r.target))
    });
    dropped
}

/// What an extraction item stores: the chunk's combined extraction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkExtraction {
    pub extraction: Extraction,
    /// Gleaning turns whose reply could not be read.
    pub unreadable_gleanings: u32,
    /// Made by the offline extractor: the graph's short names are then
    /// resolved across chunks ([`crate::graph::offline::resolve_aliases`]),
    /// as a language model would name one character one way.
    #[serde(default)]
    pub offline: bool,
    /// Replies cut by `max_tokens` (their complete entries were kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated_replies: u32,
    /// Entities dropped for a type that was not asked for, by type.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub dropped_types: std::collections::BTreeMap<String, u32>,
    /// The first reply was JSON of the wrong shape and was given a repair turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repaired: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Extracts one chunk item ([`ChunkItem`](crate::graph::ChunkItem)) through the gateway.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem, settings: &ExtractSettings) -> ItemOutcome {
    let crate::graph::ChunkItem { text } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let text = text.as_str();
    let ctx =
        CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: Some(prompt_hash(PROMPT)) };
    let (mut tokens, mut cost) = (0, 0.0);
    let mut req = request(text, settings);
    let first = match gateway.chat_parsed(&req, &ctx, parse_extraction_read).await {
        Ok(p) => p,
        Err((e, _)) => return ItemOutcome::Failed { error: e.to_string(), tokens, cost_usd: cost },
    };
    for r in &first.replies {
        tokens += r.prompt_tokens + r.completion_tokens;
        cost += r.cost_usd;
    }
    let reply = first.replies.last().expect("a parsed call has a reply").clone();
    let mut combined = match first.value {
        Ok((x, _)) => ChunkExtraction {
            extraction: x,
            offline: reply.provider == types::CallProvider::Offline,
            truncated_replies: u32::from(reply.truncated),
            repaired: first.repaired,
            ..Default::default()
        },
        Err(reason) => {
            let cut = if reply.truncated { " (the reply was cut at max_tokens)" } else { "" };
            return ItemOutcome::Failed {
                error: format!("unreadable extraction: {reason}{cut}"),
                tokens,
                cost_usd: cost,
            };
        }
    };
    let mut last = reply.text;
    let glean_ctx = CallContext { prompt_hash: Some(prompt_hash(GLEAN_PROMPT)), ..ctx };
    for _ in 0..settings.gleaning {
        req = glean_request(&req, &last);
        let reply = match gateway.chat(&req, &glean_ctx).await {
            Ok(r) => r,
            Err(e) => return ItemOutcome::Failed { error: format!("gleaning: {e}"), tokens, cost_usd: cost },
        };
        tokens += reply.prompt_tokens + reply.completion_tokens;
        cost += reply.cost_usd;
        combined.truncated_replies += u32::from(reply.truncated);
        match parse_extraction(&reply.text) {
            Ok(x) => {
                combined.extraction.entities.extend(x.entities);
                combined.extraction.relations.extend(x.relations);
            }
            Err(_) => combined.unreadable_gleanings += 1,
        }
        last = reply.text;
    }
    if !combined.offline {
        combined.dropped_types = settle_types(&mut combined.extraction, &settings.entity_types);
    }
    ItemOutcome::done::<crate::graph::ChunkItem>(&combined, tokens, cost)
}

/// The offline provider's first turn: the classical extractor, as JSON.
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let text = delimited(message).ok_or("the request has no <<< >>> delimited passage")?;
    serde_json::to_string(&crate::graph::offline::extract(text)).map_err(|e| e.to_string())
}

/// The offline provider's gleaning turn: nothing more to add.
pub fn offline_glean(_req: &ChatRequest) -> Result<String, String> {
    Ok(r#"{"entities": [], "relations": []}"#.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gleaning_continues_the_conversation() {
        let settings = ExtractSettings {
            gleaning: 2,
            entity_types: vec!["person".into(), "location".into()],
            ..Default::default()
        };
        let first = request("Alice met the Queen.", &settings);
        assert!(first.messages[0].content.contains("of these types: person, location."));
        assert!(first.json);
        let second = glean_request(&first, "{\"entities\": []}");
        assert_eq!(second.purpose, GLEAN_PURPOSE);
        assert_eq!(second.messages.len(), 4);
        assert_eq!(second.messages[2].content, "{\"entities\": []}");
        assert!(second.messages[3].content.starts_with("Some entities and relations in the passage were missed"));
    }

    #[test]
    fn the_offline_reply_parses_back() {
        let reply = offline(&request(
            "Then Alice followed the White Rabbit. Alice saw the White Rabbit again.",
            &ExtractSettings::default(),
        ))
        .unwrap();
        let x = parse_extraction(&reply).unwrap();
        let names: Vec<&str> = x.entities.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["Alice", "White Rabbit"]);
        assert_eq!(x.relations.len(), 1);
        assert_eq!(x.relations[0].strength, 2.0);
    }

    #[test]
    fn types_outside_the_list_are_settled_or_dropped() {
        let mut x = parse_extraction(
            r#"{"entities": [{"name": "Scrooge", "type": "Character"}, {"name": "London", "type": "location"},
                {"name": "Fog", "type": "weather"}, {"name": "Gruel", "type": "food"}, {"name": "Ebenezer", "type": "person"}],
               "relations": [{"source": "Scrooge", "target": "London", "description": "lives in"},
                {"source": "Fog", "target": "London", "description": "covers"}]}"#,
        )
        .unwrap();
        let dropped = settle_types(&mut x, &["person".into(), "location".into()]);
        let kept: Vec<(&str, &str)> = x.entities.iter().map(|e| (e.name.as_str(), e.kind.as_str())).collect();
        assert_eq!(kept, [("Scrooge", "person"), ("London", "location"), ("Ebenezer", "person")]);
        assert_eq!(dropped.into_iter().collect::<Vec<_>>(), [("food".to_string(), 1), ("weather".to_string(), 1)]);
        assert_eq!(x.relations.len(), 1, "the relation naming a dropped entity goes with it");
        assert_eq!(x.relations[0].target, "London");
    }
}

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

use super::{delimited, prompt_hash};
use crate::graph::parse::parse_extraction;
use crate::graph::{Extraction, DEFAULT_ENTITY_TYPES};
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::{CallContext, ChatRequest, Gateway, Message};

pub const PURPOSE: &str = "extract_graph";
pub const GLEAN_PURPOSE: &str = "glean_graph";
pub const PROMPT: &str = include_str!("../../prompts/extract_graph.txt");
pub const GLEAN_PROMPT: &str = include_str!("../../prompts/glean_graph.txt");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractSettings {
    /// Follow-up turns asking for missed entities.
    pub gleaning: u32,
    pub entity_types: Vec<String>,
    /// Merged descriptions longer than this many tokens are summarised
    /// (see [`super::describe`]).
    #[serde(default = "default_budget")]
    pub summary_budget: usize,
}

fn default_budget() -> usize {
    super::describe::DEFAULT_BUDGET
}

impl Default for ExtractSettings {
    fn default() -> Self {
        ExtractSettings {
            gleaning: 1,
            entity_types: DEFAULT_ENTITY_TYPES.iter().map(|t| t.to_string()).collect(),
            summary_budget: default_budget(),
        }
    }
}

/// The first turn's request.
pub fn request(text: &str, settings: &ExtractSettings) -> ChatRequest {
    let system = PROMPT.trim().replace("{entity_types}", &settings.entity_types.join(", "));
    let mut req =
        ChatRequest::new(PURPOSE, vec![Message::system(system), Message::user(format!("Passage:\n<<<\n{text}\n>>>"))]);
    req.json = true;
    req
}

/// The conversation after `previous` was answered with `reply`: one more gleaning turn.
pub fn glean_request(previous: &ChatRequest, reply: &str) -> ChatRequest {
    let mut req = previous.clone();
    req.purpose = GLEAN_PURPOSE.to_string();
    req.messages.push(Message::assistant(reply));
    req.messages.push(Message::user(GLEAN_PROMPT.trim()));
    req
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
}

/// Extracts one chunk item (`payload.text`) through the gateway.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem, settings: &ExtractSettings) -> ItemOutcome {
    let text = item.payload.get("text").and_then(|t| t.as_str()).unwrap_or_default();
    let ctx =
        CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: Some(prompt_hash(PROMPT)) };
    let (mut tokens, mut cost) = (0, 0.0);
    let mut req = request(text, settings);
    let reply = match gateway.chat(&req, &ctx).await {
        Ok(r) => r,
        Err(e) => return ItemOutcome::Failed { error: e.to_string(), tokens, cost_usd: cost },
    };
    tokens += reply.prompt_tokens + reply.completion_tokens;
    cost += reply.cost_usd;
    let mut combined = match parse_extraction(&reply.text) {
        Ok(x) => ChunkExtraction { extraction: x, unreadable_gleanings: 0, offline: reply.provider == "offline" },
        Err(reason) => {
            return ItemOutcome::Failed { error: format!("unreadable extraction: {reason}"), tokens, cost_usd: cost }
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
        match parse_extraction(&reply.text) {
            Ok(x) => {
                combined.extraction.entities.extend(x.entities);
                combined.extraction.relations.extend(x.relations);
            }
            Err(_) => combined.unreadable_gleanings += 1,
        }
        last = reply.text;
    }
    ItemOutcome::Done { result: serde_json::to_string(&combined).unwrap_or_default(), tokens, cost_usd: cost }
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
}

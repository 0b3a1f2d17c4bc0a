//! Entities named by a question, extracted by the LLM (seed 000 §V-A: the
//! paper had an LLM list the entities each question mentions, then counted
//! the distinct ones per set — 64 against 11; the counting is
//! [`crate::questions::diagnostics::mention_distribution`]). FastGraphRAG
//! asks the same of a query. The alternative to matching
//! the graph's entity names ([`crate::questions::diagnostics::entity_distribution`]):
//! it also finds entities the graph missed, and does not depend on how the
//! graph spelled them. The prompt is `engine/prompts/question_entities.txt`.
//!
//! Offline: the names in the question by the offline extractor's rule
//! ([`crate::graph::offline::names_in`]: runs of capitalised words).

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::jobs::one_call;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::delimited;
use crate::llm::{ChatRequest, Gateway, Message};

pub const PURPOSE: &str = "question_entities";
pub const PROMPT: &str = include_str!("../../prompts/question_entities.txt");

pub fn request(question: &str) -> ChatRequest {
    let user = format!("Question:\n<<<\n{question}\n>>>");
    let mut req = ChatRequest::new(PURPOSE, vec![Message::system(PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(200);
    req
}

/// The entities in a reply: `{"entities": [...]}`, tolerating prose around
/// it; blank names are dropped.
pub fn parse_entities(reply: &str) -> Result<Vec<String>, String> {
    let v = crate::llm::prompt::json_object(reply, "reply")?;
    let list = v["entities"].as_array().ok_or("the reply has no \"entities\" list")?;
    list.iter()
        .map(|e| e.as_str().map(|s| s.trim().to_string()).ok_or_else(|| format!("an entity is not a string: {e}")))
        .filter(|e| e.as_ref().map_or(true, |s| !s.is_empty()))
        .collect()
}

/// One question's job item (key `m-QID`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub question_id: i64,
    pub question: String,
}

/// What an item stores: the entities its question names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mentioned {
    pub question_id: i64,
    pub entities: Vec<String>,
}

/// Lists the entities one question names through the gateway.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let Item { question_id, question } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    one_call::<Item>(gateway, job_id, &item, PROMPT, &request(&question), |reply| {
        let entities = parse_entities(reply)?;
        Ok(Mentioned { question_id, entities })
    })
    .await
}

/// The offline rule (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let question = delimited(message).unwrap_or("");
    Ok(json!({ "entities": crate::graph::offline::names_in(question) }).to_string())
}

crate::job_items!(Item => Mentioned);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_with_prose_around_and_blank_names_dropped() {
        assert_eq!(
            parse_entities("Sure: {\"entities\": [\"Alice\", \" Mock Turtle \", \"\"]} done").unwrap(),
            ["Alice", "Mock Turtle"]
        );
        assert_eq!(parse_entities("{\"entities\": []}").unwrap(), Vec::<String>::new());
        assert!(parse_entities("no idea").unwrap_err().contains("no JSON"));
        assert!(parse_entities("{\"names\": []}").unwrap_err().contains("\"entities\""));
        assert!(parse_entities("{\"entities\": [3]}").unwrap_err().contains("not a string"));
    }

    #[test]
    fn offline_lists_the_capitalised_names_but_not_the_question_word() {
        let reply = offline(&request("Why does the Mock Turtle weep when Alice and the Gryphon visit him?")).unwrap();
        assert_eq!(parse_entities(&reply).unwrap(), ["Mock Turtle", "Alice", "Gryphon"]);
        let reply = offline(&request("Describe the role of the Queen of Hearts.")).unwrap();
        assert_eq!(parse_entities(&reply).unwrap(), ["Queen of Hearts"]);
    }
}

//! Entities named by questions, extracted by the LLM (seed 000 §V-A: the
//! paper had an LLM list the entities each question mentions, then counted
//! the distinct ones per set — 64 against 11). The alternative to matching
//! the graph's entity names ([`super::diagnostics::entity_distribution`]):
//! it also finds entities the graph missed, and does not depend on how the
//! graph spelled them. The prompt is `engine/prompts/question_entities.txt`.
//!
//! Offline: the names in the question by the offline extractor's rule
//! ([`crate::graph::offline::names_in`]: runs of capitalised words).

use std::collections::{BTreeMap, HashMap};

use serde_json::json;

use super::diagnostics::EntityDistribution;
use crate::graph::normalise_name;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::{ChatRequest, Gateway, Message};
use crate::tasks::{delimited, one_call};

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
    let v = crate::tasks::json_object(reply, "reply")?;
    let list = v["entities"].as_array().ok_or("the reply has no \"entities\" list")?;
    list.iter()
        .map(|e| e.as_str().map(|s| s.trim().to_string()).ok_or_else(|| format!("an entity is not a string: {e}")))
        .filter(|e| e.as_ref().map_or(true, |s| !s.is_empty()))
        .collect()
}

/// One question's item: `payload` holds `question_id` and `question`.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let p = &item.payload;
    let req = request(p["question"].as_str().unwrap_or(""));
    one_call(gateway, job_id, &item, PROMPT, &req, |reply| {
        let entities = parse_entities(reply)?;
        Ok(json!({ "question_id": p["question_id"], "entities": entities }).to_string())
    })
    .await
}

/// The offline rule (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let question = delimited(message).unwrap_or("");
    Ok(json!({ "entities": crate::graph::offline::names_in(question) }).to_string())
}

/// The distribution of extracted entities over a set: `per_question` holds
/// each question's list. Names are grouped by their normalised key (case,
/// articles, plurals as [`normalise_name`] folds them), each counted once
/// per question; a group is labelled with the graph's name for that key
/// when `graph_names` has one, else with its most frequent spelling.
pub fn distribution(per_question: &[Vec<String>], graph_names: &[&str]) -> EntityDistribution {
    let graph: HashMap<String, &str> = graph_names.iter().map(|n| (normalise_name(n), *n)).collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut spellings: HashMap<String, BTreeMap<String, usize>> = HashMap::new();
    let mut with_entity = 0;
    for names in per_question {
        let mut keys: Vec<String> = Vec::new();
        for name in names {
            let key = normalise_name(name);
            if !key.is_empty() {
                *spellings.entry(key.clone()).or_default().entry(name.trim().to_string()).or_default() += 1;
                keys.push(key);
            }
        }
        keys.sort_unstable();
        keys.dedup();
        with_entity += usize::from(!keys.is_empty());
        for key in keys {
            *counts.entry(key).or_default() += 1;
        }
    }
    let label = |key: &str| -> String {
        if let Some(name) = graph.get(key) {
            return name.to_string();
        }
        // Most frequent spelling; ties to the alphabetically first.
        let forms = &spellings[key];
        let top = forms.values().max().copied().unwrap_or(0);
        forms.iter().find(|(_, n)| **n == top).map(|(f, _)| f.clone()).unwrap_or_else(|| key.to_string())
    };
    let in_graph = counts.keys().filter(|k| graph.contains_key(*k)).count();
    let mut counts: Vec<(String, usize)> = counts.iter().map(|(k, c)| (label(k), *c)).collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    EntityDistribution { questions: per_question.len(), with_entity, distinct: counts.len(), in_graph, counts }
}

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
    fn names_are_grouped_by_key_labelled_by_the_graph_else_the_usual_spelling() {
        let per_question = vec![
            vec!["the Queen".to_string(), "Alice".into(), "alice".into()],
            vec!["Queen".into(), "Cheshire cat".into()],
            vec!["Cheshire Cat".into(), "Cheshire Cat".into()],
            vec![],
        ];
        let d = distribution(&per_question, &["Alice", "Queen", "Hatter"]);
        assert_eq!((d.questions, d.with_entity, d.distinct, d.in_graph), (4, 3, 3, 2));
        assert_eq!(
            d.counts,
            [("Cheshire Cat".to_string(), 2), ("Queen".into(), 2), ("Alice".into(), 1)],
            "Alice once though named twice; the cat under its usual spelling; the Queen under the graph's"
        );
    }

    #[test]
    fn offline_lists_the_capitalised_names_but_not_the_question_word() {
        let reply = offline(&request("Why does the Mock Turtle weep when Alice and the Gryphon visit him?")).unwrap();
        assert_eq!(parse_entities(&reply).unwrap(), ["Mock Turtle", "Alice", "Gryphon"]);
        let reply = offline(&request("Describe the role of the Queen of Hearts.")).unwrap();
        assert_eq!(parse_entities(&reply).unwrap(), ["Queen of Hearts"]);
    }
}

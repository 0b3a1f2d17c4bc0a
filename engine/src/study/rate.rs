//! The LLM rater of a human study: the same items and rubric the human
//! raters see (dimensions, definitions, the label of every point, the
//! category choices), one call per item, so its scores can be set beside
//! the humans' (Cohen's κ, Spearman's ρ: `study::llm_agreement`).
//!
//! Offline: transparent rules per known dimension, each stated in the
//! reply's reason — Comprehensibility 5 minus a point for each of: no
//! question mark at the end, fewer than 5 words, more than 30 words, a word
//! repeated three times; Specificity 1 + the question's proper names + a
//! quarter of its content words, at most 5; Answerability the share of the
//! question's content words found in the passage, mapped onto the scale;
//! Correctness the share of the answer's content words found in the
//! passage, mapped onto the scale; Hallucination by the share *not* found
//! (≤ 20% none, ≤ 50% minor, more severe); a category choice by the most
//! words shared between the question and the choice's name and
//! definition. A dimension with no rule gets its scale's middle, and says
//! so.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::jobs::one_call;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::delimited;
use crate::llm::{ChatRequest, Message};
use crate::study::Dimension;
use crate::text::words;

pub const PURPOSE: &str = "study_rate";
pub const PROMPT: &str = include_str!("../../prompts/study_rate.txt");

/// A category a choice dimension offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub path: String,
    pub definition: String,
}

/// What the LLM rater reads for one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateItem {
    pub item_id: i64,
    pub question: String,
    #[serde(default)]
    pub answer: Option<String>,
    #[serde(default)]
    pub passage: Option<String>,
    #[serde(default)]
    pub choices: Vec<Choice>,
}

fn rubric(dimensions: &[Dimension], item: &RateItem) -> Value {
    let dims: Vec<Value> = dimensions
        .iter()
        .map(|d| {
            if d.choice {
                json!({
                    "name": d.name,
                    "definition": d.definition,
                    "choices": item.choices.iter().enumerate()
                        .map(|(i, c)| format!("{} — {}: {}", i + 1, c.path, c.definition)).collect::<Vec<_>>(),
                })
            } else {
                json!({
                    "name": d.name,
                    "definition": d.definition,
                    "scale": d.labels.iter().enumerate()
                        .map(|(i, l)| format!("{} — {l}", d.min as usize + i)).collect::<Vec<_>>(),
                })
            }
        })
        .collect();
    json!({ "dimensions": dims, "question": item.question, "answer": item.answer, "passage": item.passage })
}

/// The request for one item: the rubric and the item as JSON between the
/// `<<<` `>>>` markers.
pub fn request(dimensions: &[Dimension], item: &RateItem) -> ChatRequest {
    let body = serde_json::to_string_pretty(&rubric(dimensions, item)).unwrap_or_default();
    let user = format!("Rate this item.\n<<<\n{body}\n>>>");
    let mut req = ChatRequest::new(PURPOSE, vec![Message::system(PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(300);
    req
}

/// The scores in a reply, one per dimension in order (a choice's as its
/// 0-based index), and the reason; a missing or off-scale score is an error
/// that names the dimension.
pub fn parse(reply: &str, dimensions: &[Dimension], choices: usize) -> Result<(Vec<u8>, String), String> {
    let v = crate::llm::prompt::json_object(reply, "rating")?;
    let scores = v["scores"].as_object().ok_or("the rating has no \"scores\" object")?;
    let lower: HashMap<String, &Value> = scores.iter().map(|(k, v)| (k.trim().to_lowercase(), v)).collect();
    let mut out = Vec::new();
    for d in dimensions {
        let raw = lower
            .get(&d.name.to_lowercase())
            .and_then(|x| x.as_f64().or_else(|| x.as_str().and_then(|s| s.trim().parse().ok())))
            .ok_or_else(|| format!("the rating gives no number for \"{}\"", d.name))?;
        if raw.fract() != 0.0 || raw < 0.0 {
            return Err(format!("\"{}\": {raw} is not a point of the scale", d.name));
        }
        let score = if d.choice { raw as i64 - 1 } else { raw as i64 };
        if score < 0 || score > u8::MAX as i64 || !d.accepts(score as u8, choices) {
            return Err(if d.choice {
                format!("\"{}\": {raw} is not one of the {choices} choices", d.name)
            } else {
                format!("\"{}\": {raw} is outside {}–{}", d.name, d.min, d.max())
            });
        }
        out.push(score as u8);
    }
    Ok((out, v["reason"].as_str().unwrap_or("").to_string()))
}

/// One study item's rating-job item (key `s-ITEMID`): the study's
/// dimensions and what the rater reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub dimensions: Vec<Dimension>,
    pub item: RateItem,
}

/// What a rating item stores: one score per dimension, in the study's
/// order (a choice's as its 0-based index), and the rater's reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rated {
    pub item_id: i64,
    pub scores: Vec<u8>,
    #[serde(default)]
    pub reason: String,
}

/// Rates one study [`Item`] through the gateway.
pub async fn run_item(gateway: &crate::llm::Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let Item { dimensions, item: rate } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let req = request(&dimensions, &rate);
    one_call::<Item>(gateway, job_id, &item, PROMPT, &req, |reply| {
        let (scores, reason) = parse(reply, &dimensions, rate.choices.len())?;
        Ok(Rated { item_id: rate.item_id, scores, reason })
    })
    .await
}

fn on_scale(share: f64, lo: f64, hi: f64) -> f64 {
    (lo + share.clamp(0.0, 1.0) * (hi - lo)).round()
}

fn share_found(text: &str, passage: &HashSet<String>) -> (usize, usize) {
    let asked: Vec<String> = words(text).collect();
    (asked.iter().filter(|w| passage.contains(*w)).count(), asked.len())
}

/// The offline rules (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let v: Value = serde_json::from_str(delimited(message).ok_or("no item between the markers")?)
        .map_err(|e| format!("unreadable item: {e}"))?;
    let question = v["question"].as_str().unwrap_or("");
    let answer = v["answer"].as_str().unwrap_or("");
    let passage: HashSet<String> = words(v["passage"].as_str().unwrap_or("")).collect();
    let mut scores = serde_json::Map::new();
    let mut reasons = Vec::new();
    for d in v["dimensions"].as_array().into_iter().flatten() {
        let name = d["name"].as_str().unwrap_or("");
        if let Some(choices) = d["choices"].as_array() {
            let asked: HashSet<String> = words(question).collect();
            let overlap = |c: &str| words(&c.replace(['_', '/'], " ")).filter(|w| asked.contains(w)).count();
            let best = choices
                .iter()
                .enumerate()
                .max_by_key(|(i, c)| (overlap(c.as_str().unwrap_or("")), std::cmp::Reverse(*i)))
                .map_or(1, |(i, _)| i + 1);
            scores.insert(name.into(), json!(best));
            reasons.push(format!("{name}: choice {best} shares the most words with the question"));
            continue;
        }
        let scale = d["scale"].as_array().map_or(0, Vec::len);
        let lo = d["scale"][0].as_str().and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok()).unwrap_or(1.0);
        let hi = lo + scale.saturating_sub(1) as f64;
        let (score, why) = match name.to_lowercase().as_str() {
            "comprehensibility" => {
                let n = question.split_whitespace().count();
                let mut counts: HashMap<String, usize> = HashMap::new();
                for w in question.split_whitespace() {
                    *counts.entry(w.to_lowercase()).or_default() += 1;
                }
                let penalties = [!question.trim_end().ends_with('?'), n < 5, n > 30, counts.values().any(|c| *c >= 3)];
                let lost = penalties.iter().filter(|p| **p).count() as f64;
                (hi - lost, format!("{lost} of 4 penalties (no '?', under 5 words, over 30, a repeated word)"))
            }
            "specificity" => {
                let names =
                    question.split_whitespace().skip(1).filter(|w| w.starts_with(|c: char| c.is_uppercase())).count();
                let content = words(question).count();
                let s = lo + names as f64 + (content / 4) as f64;
                (s, format!("{names} proper names and {content} content words"))
            }
            "answerability" => {
                let (found, of) = share_found(question, &passage);
                let s = on_scale(found as f64 / of.max(1) as f64, lo, hi);
                (s, format!("{found} of {of} question words are in the passage"))
            }
            "correctness" => {
                let (found, of) = share_found(answer, &passage);
                let s = on_scale(found as f64 / of.max(1) as f64, lo, hi);
                (s, format!("{found} of {of} answer words are in the passage"))
            }
            "hallucination" => {
                let (found, of) = share_found(answer, &passage);
                let unsupported = 1.0 - found as f64 / of.max(1) as f64;
                let s = if unsupported <= 0.2 {
                    lo
                } else if unsupported <= 0.5 {
                    lo + 1.0
                } else {
                    hi
                };
                (s, format!("{:.0}% of the answer's words are not in the passage", unsupported * 100.0))
            }
            _ => (((lo + hi) / 2.0).floor(), "no offline rule: the middle of the scale".into()),
        };
        scores.insert(name.into(), json!(score.clamp(lo, hi) as i64));
        reasons.push(format!("{name}: {why}"));
    }
    Ok(json!({ "scores": scores, "reason": format!("offline rules — {}", reasons.join("; ")) }).to_string())
}

crate::job_items!(Item => Rated);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::{answer_dimensions, default_dimensions};

    fn item(question: &str, answer: Option<&str>, passage: &str) -> RateItem {
        RateItem {
            item_id: 7,
            question: question.into(),
            answer: answer.map(String::from),
            passage: Some(passage.into()),
            choices: vec![
                Choice { path: "QC/simple".into(), definition: "a single fact stated in one place".into() },
                Choice { path: "QC/complex".into(), definition: "compare and combine several facts".into() },
            ],
        }
    }

    #[test]
    fn offline_rules_score_every_dimension_on_its_own_scale() {
        let passage = "Scrooge kept Marley's name above the warehouse door for years after Marley died.";
        let dims = default_dimensions();
        let it = item("Whose name did Scrooge keep above the warehouse door?", None, passage);
        let reply = offline(&request(&dims, &it)).unwrap();
        let (scores, reason) = parse(&reply, &dims, 2).unwrap();
        // No penalty; 1 + 1 name + ⌊7 content words / 4⌋; 5 of 7 words
        // found ("whose" and "keep" are not): 1 + 4 · 5/7 = 3.9 → 4.
        assert_eq!(scores, vec![5, 3, 4], "{reason}");
        assert!(reason.starts_with("offline rules"));

        let dims = answer_dimensions();
        let good = item(
            "Which facts about the warehouse door can be compared?",
            Some("Marley's name stayed above the warehouse door."),
            passage,
        );
        let (scores, _) = parse(&offline(&request(&dims, &good)).unwrap(), &dims, 2).unwrap();
        assert_eq!(scores[0], 3, "every answer word is in the passage");
        assert_eq!(scores[1], 0, "nothing unsupported");
        assert_eq!(scores[3], 1, "'compared' matches the complex choice's words");
        let bad = item("Why?", Some("Tiny Tim sang carols in the snowy street at midnight."), passage);
        let (scores, _) = parse(&offline(&request(&dims, &bad)).unwrap(), &dims, 2).unwrap();
        assert_eq!((scores[0], scores[1]), (0, 2), "nothing found: wrong and severe");
    }

    #[test]
    fn replies_are_checked_against_each_scale() {
        let dims = answer_dimensions();
        let ok = r#"{"scores": {"correctness": 2, "Hallucination": "0", "Answerability": 3, "Category": 2}, "reason": "fine"}"#;
        assert_eq!(parse(ok, &dims, 2), Ok((vec![2, 0, 3, 1], "fine".into())));
        let over = r#"{"scores": {"Correctness": 4, "Hallucination": 0, "Answerability": 3, "Category": 1}}"#;
        assert_eq!(parse(over, &dims, 2).unwrap_err(), "\"Correctness\": 4 is outside 0–3");
        let choice = r#"{"scores": {"Correctness": 1, "Hallucination": 0, "Answerability": 3, "Category": 3}}"#;
        assert_eq!(parse(choice, &dims, 2).unwrap_err(), "\"Category\": 3 is not one of the 2 choices");
        let missing = r#"{"scores": {"Correctness": 1}}"#;
        assert!(parse(missing, &dims, 2).unwrap_err().contains("no number for \"Hallucination\""));
    }
}

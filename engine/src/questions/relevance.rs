//! Question–retrieval relevance (seed 000 §V-B, Fig. 10): retrieve context
//! for each question of a set — with FastGraphRAG by default, as the paper
//! ("We used FGRAG to retrieve contexts"), or any built-in method's
//! retrieval, or BM25's top k chunks — and have the LLM rate
//! 0–5 how relevant the context is to answering it; the scores' histogram
//! per set shows whether a set's questions can be answered from the corpus
//! at all. The rubric is in `engine/prompts/relevance.txt`.
//!
//! Offline: a transparent rule — the share of the question's content words
//! found in the context, times 5, rounded.

use std::collections::HashSet;

use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::jobs::one_call;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::delimited;
use crate::llm::{ChatRequest, Gateway, Message};
use crate::text::words;

pub const PURPOSE: &str = "question_relevance";
pub const PROMPT: &str = include_str!("../../prompts/relevance.txt");
/// Chunks retrieved per question by default (BM25).
pub const DEFAULT_K: usize = 5;
/// The paper's retriever for Fig. 10.
pub const DEFAULT_RETRIEVER: &str = "fastgraphrag";

/// One question's job item (key `r-QID`). With BM25 the context is
/// retrieved when the items are made (`context`, `chunk_ids`); a built-in
/// method retrieves when the item runs, and the two stay empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub question_id: i64,
    pub question: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunk_ids: Vec<i64>,
}

/// What an item stores: the score, the chunks the context came from and,
/// for a built-in method, its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub score: u8,
    #[serde(default)]
    pub chunk_ids: Vec<i64>,
    pub question_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retriever: Option<String>,
}

/// Retrieves with `method`, then rates the context: one question's
/// [`Item`]. The retrieval's calls (a method's keyword or entity listing)
/// count with the item.
pub async fn run_item_retrieving(
    method: &dyn crate::rag::Method,
    gateway: &Gateway,
    job_id: i64,
    item: WorkItem,
) -> ItemOutcome {
    let Item { question_id, question, .. } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let question = question.as_str();
    let ctx = crate::llm::CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    let mut meter = crate::llm::Meter::default();
    let sections = match method.retrieve(gateway, &ctx, &mut meter, question).await {
        Ok(s) => s,
        Err(e) => {
            let tokens = meter.prompt_tokens + meter.completion_tokens;
            return ItemOutcome::Failed { error: format!("retrieval: {e}"), tokens, cost_usd: meter.cost_usd };
        }
    };
    let context = crate::rag::format_context(&sections);
    let judged = meter.chat(gateway, &ctx, PROMPT, &request(question, &context)).await.and_then(|r| parse_score(&r));
    let tokens = meter.prompt_tokens + meter.completion_tokens;
    match judged {
        Ok(score) => ItemOutcome::done::<Item>(
            &Scored {
                score,
                chunk_ids: crate::rag::chunk_ids(&sections),
                question_id,
                retriever: Some(method.name().to_string()),
            },
            tokens,
            meter.cost_usd,
        ),
        Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: meter.cost_usd },
    }
}

pub fn request(question: &str, context: &str) -> ChatRequest {
    let user = format!("Question: {question}\nContext:\n<<<\n{context}\n>>>");
    let mut req = ChatRequest::new(PURPOSE, vec![Message::system(PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(120);
    req
}

/// The score in a reply: `{"score": n}` (0–5), tolerating prose around it.
pub fn parse_score(reply: &str) -> Result<u8, String> {
    let v = crate::llm::prompt::json_object(reply, "verdict")?;
    let score = v["score"].as_f64().ok_or("the verdict has no numeric score")?;
    if !(0.0..=5.0).contains(&score) || score.fract() != 0.0 {
        return Err(format!("the score {score} is not a whole number from 0 to 5"));
    }
    Ok(score as u8)
}

/// Rates one question's [`Item`] with the context retrieved when it was made.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let Item { question_id, question, context, chunk_ids } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    one_call::<Item>(gateway, job_id, &item, PROMPT, &request(&question, &context), |reply| {
        Ok(Scored { score: parse_score(reply)?, chunk_ids: chunk_ids.clone(), question_id, retriever: None })
    })
    .await
}

/// The offline rule (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let question = message.lines().find_map(|l| l.strip_prefix("Question: ")).unwrap_or("");
    let context: HashSet<String> = words(delimited(message).unwrap_or("")).collect();
    let asked: Vec<String> = words(question).collect();
    let found = asked.iter().filter(|w| context.contains(*w)).count();
    let share = found as f64 / asked.len().max(1) as f64;
    let score = (share * 5.0).round() as u8;
    Ok(json!({ "score": score, "reason": format!("offline: {found} of {} content words of the question are in the context", asked.len()) }).to_string())
}

/// Counts of scores 0..=5.
pub fn histogram(scores: &[u8]) -> [usize; 6] {
    let mut h = [0; 6];
    for &s in scores {
        h[(s as usize).min(5)] += 1;
    }
    h
}

/// Fig. 10's histogram as SVG: questions per relevance score.
pub fn histogram_svg(title: &str, counts: &[usize; 6]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 360)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let top = counts.iter().copied().max().unwrap_or(0).max(1) as u32;
        if let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(44)
            .build_cartesian_2d((0u32..5u32).into_segmented(), 0u32..top + top / 10 + 1)
        {
            let _ = chart
                .configure_mesh()
                .disable_x_mesh()
                .light_line_style(WHITE)
                .x_desc("relevance score (0–5)")
                .y_desc("questions")
                .axis_desc_style(("sans-serif", 13))
                .draw();
            let _ = chart.draw_series(
                Histogram::vertical(&chart)
                    .style(RGBColor(0x4e, 0x79, 0xa7).filled())
                    .margin(8)
                    .data(counts.iter().enumerate().map(|(s, n)| (s as u32, *n as u32))),
            );
        }
        let _ = root.present();
    }
    svg
}

crate::job_items!(Item => Scored);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_read_and_out_of_range_ones_refused() {
        assert_eq!(parse_score("```json\n{\"score\": 4, \"reason\": \"most\"}\n```"), Ok(4));
        assert_eq!(parse_score("{\"score\": 0}"), Ok(0));
        assert!(parse_score("{\"score\": 6}").unwrap_err().contains("not a whole number from 0 to 5"));
        assert!(parse_score("{\"score\": 2.5}").is_err());
        assert!(parse_score("high").is_err());
    }

    #[test]
    fn the_offline_rule_scores_word_overlap_and_the_histogram_counts() {
        let req = request(
            "Who was the first warden of the Salt Guild?",
            "Isobel Pell was the first warden of the Salt Guild.",
        );
        let v: serde_json::Value = serde_json::from_str(&offline(&req).unwrap()).unwrap();
        assert_eq!(v["score"], 5, "{v}");
        let req = request("Who painted the ceiling?", "Isobel Pell was the first warden of the Salt Guild.");
        let v: serde_json::Value = serde_json::from_str(&offline(&req).unwrap()).unwrap();
        assert_eq!(v["score"], 0);
        assert_eq!(histogram(&[0, 5, 5, 3]), [1, 0, 0, 1, 0, 2]);
        let svg = histogram_svg("Set 1", &[1, 0, 0, 1, 0, 2]);
        assert!(svg.starts_with("<svg") && svg.contains("Set 1") && svg.contains("relevance score"));
        assert!(svg.matches("<rect").count() >= 4, "bars are drawn");
    }
}

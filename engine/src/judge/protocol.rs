//! One question's judging as a job item, for each protocol. An unbiased item
//! is one question in one trial: both orders × `repeats` scoring calls
//! (each draw its own `sample`: `(trial · repeats + repeat) · 2 + order`), then the
//! verdict. A legacy item is one question, A first, one call.

use serde_json::json;

use super::{legacy, scoring, verdict, Judgment, Order};
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::{CallContext, Gateway};
use crate::rag::Meter;

/// The payload of a judging item.
pub fn payload(question: &str, a: &str, b: &str, trial: u32, repeats: u32) -> serde_json::Value {
    json!({ "question": question, "a": a, "b": b, "trial": trial, "repeats": repeats })
}

fn fields(item: &WorkItem) -> (&str, &str, &str, u32, u32) {
    let p = &item.payload;
    let text = |k: &str| p[k].as_str().unwrap_or("");
    let number = |k: &str, d: u64| p[k].as_u64().unwrap_or(d) as u32;
    (text("question"), text("a"), text("b"), number("trial", 0), number("repeats", 2))
}

/// Judges one question in one trial under the unbiased protocol.
pub async fn run_unbiased_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let (question, a, b, trial, repeats) = fields(&item);
    let ctx = CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    let mut meter = Meter::default();
    let mut judgments: Vec<Judgment> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    for repeat in 0..repeats {
        for order in [Order::AFirst, Order::BFirst] {
            let (first, second) = if order == Order::AFirst { (a, b) } else { (b, a) };
            // Each draw its own sample, the order included: between identical
            // answers (a method against itself) AB and BA are the same text.
            let draw = (trial * repeats + repeat) * 2 + u32::from(order == Order::BFirst);
            let req = scoring::request(question, first, second, draw);
            let judged = match meter.chat(gateway, &ctx, scoring::PROMPT, &req).await {
                Ok(reply) => scoring::parse(&reply, order, repeat),
                Err(e) => Err(e),
            };
            match judged {
                Ok((j, why)) => {
                    judgments.push(j);
                    reasons.push(why);
                }
                Err(error) => {
                    return ItemOutcome::Failed {
                        error,
                        tokens: meter.prompt_tokens + meter.completion_tokens,
                        cost_usd: meter.cost_usd,
                    }
                }
            }
        }
    }
    let v = verdict(&judgments).expect("at least one judgment when repeats > 0");
    ItemOutcome::Done {
        result: json!({ "trial": trial, "judgments": judgments, "reasoning": reasons, "verdict": v }).to_string(),
        tokens: meter.prompt_tokens + meter.completion_tokens,
        cost_usd: meter.cost_usd,
    }
}

/// Judges one question under the legacy protocol (A first, one call).
pub async fn run_legacy_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let (question, a, b, trial, _) = fields(&item);
    let ctx = CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    let mut meter = Meter::default();
    let judged = match meter.chat(gateway, &ctx, legacy::PROMPT, &legacy::request(question, a, b, trial)).await {
        Ok(reply) => legacy::parse(&reply),
        Err(e) => Err(e),
    };
    let tokens = meter.prompt_tokens + meter.completion_tokens;
    match judged {
        Ok(j) => ItemOutcome::Done {
            result: json!({ "trial": trial, "legacy": j }).to_string(),
            tokens,
            cost_usd: meter.cost_usd,
        },
        Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: meter.cost_usd },
    }
}

//! One question's judging as a job item, for each protocol. An unbiased item
//! is one question in one trial: both orders × `repeats` scoring calls
//! (each draw its own `sample`: `(trial · repeats + repeat) · 2 + order`), then the
//! verdict. A legacy item is one question, A first, one call.

use serde_json::json;

use super::legacy::Aspects;
use super::scoring::{JudgePrompt, PromptText};
use super::{legacy, scoring, verdict, Judgment, Order};
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::Meter;
use crate::llm::{CallContext, Gateway};

/// The payload of a judging item (both orders judged, the paper's prompt).
pub fn payload(question: &str, a: &str, b: &str, trial: u32, repeats: u32) -> serde_json::Value {
    unbiased_payload(JudgePrompt::Paper, question, a, b, trial, repeats, true)
}

/// The payload of an unbiased judging item with its scoring prompt; without
/// `exchange` only the A-first order is judged (position exchange switched
/// off, to show what it removes). Items stored without a prompt were
/// planned before the choice existed ([`scoring::prompt_before_choice`]).
pub fn unbiased_payload(
    prompt: JudgePrompt,
    question: &str,
    a: &str,
    b: &str,
    trial: u32,
    repeats: u32,
    exchange: bool,
) -> serde_json::Value {
    json!({
        "question": question, "a": a, "b": b, "trial": trial, "repeats": repeats, "exchange": exchange,
        "prompt": prompt.as_str(),
    })
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
    let orders: &[Order] =
        if item.payload["exchange"] == json!(false) { &[Order::AFirst] } else { &[Order::AFirst, Order::BFirst] };
    let prompt = item.payload["prompt"]
        .as_str()
        .map_or(Ok(scoring::prompt_before_choice()), JudgePrompt::parse)
        .unwrap_or(JudgePrompt::Paper);
    let ctx = CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    // The item's draws go out together (the gateway's limit bounds the
    // calls in flight across all items): one after another, an item would
    // take 2 × repeats latencies and the judging could not reach the
    // Little's-law bound of calls × latency ÷ concurrency.
    // Results keep the draws' order: repeat by repeat, A first then B first.
    let draws = (0..repeats).flat_map(|repeat| orders.iter().map(move |&order| (repeat, order)));
    let judged = futures_util::future::join_all(draws.map(|(repeat, order)| {
        let ctx = &ctx;
        async move {
            let (first, second) = if order == Order::AFirst { (a, b) } else { (b, a) };
            // Each draw its own sample, the order included: between identical
            // answers (a method against itself) AB and BA are the same text.
            let draw = (trial * repeats + repeat) * 2 + u32::from(order == Order::BFirst);
            let req = scoring::request_with(prompt, question, first, second, draw);
            let mut meter = Meter::default();
            let judged = meter
                .chat_parsed(gateway, ctx, prompt.text(), &req, |reply| scoring::parse(reply, order, repeat))
                .await;
            (meter, judged)
        }
    }))
    .await;
    let mut meter = Meter::default();
    let mut judgments: Vec<Judgment> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    let mut failure = None;
    for (m, judged) in judged {
        meter.absorb(&m);
        match judged {
            Ok((j, why)) => {
                judgments.push(j);
                reasons.push(why);
            }
            Err(error) => failure = failure.or(Some(error)),
        }
    }
    if let Some(error) = failure {
        return ItemOutcome::Failed {
            error,
            tokens: meter.prompt_tokens + meter.completion_tokens,
            cost_usd: meter.cost_usd,
        };
    }
    let v = verdict(&judgments).expect("at least one judgment when repeats > 0");
    ItemOutcome::Done {
        result: json!({ "trial": trial, "judgments": judgments, "reasoning": reasons, "verdict": v }).to_string(),
        tokens: meter.prompt_tokens + meter.completion_tokens,
        cost_usd: meter.cost_usd,
    }
}

/// The payload of a legacy item: the pair and the variant's aspects
/// (items stored without one were LightRAG's three).
pub fn legacy_payload(variant: legacy::LegacyAspects, question: &str, a: &str, b: &str) -> serde_json::Value {
    let mut p = payload(question, a, b, 0, 1);
    p["legacy_aspects"] = json!(variant.as_str());
    p
}

/// Judges one question under the legacy protocol (A first, one call).
pub async fn run_legacy_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let (question, a, b, trial, _) = fields(&item);
    let variant = item.payload["legacy_aspects"]
        .as_str()
        .map_or(Ok(legacy::LegacyAspects::Lightrag), legacy::LegacyAspects::parse)
        .unwrap_or_default();
    let ctx = CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    let mut meter = Meter::default();
    let req = legacy::request_with(variant, question, a, b, trial);
    let judged =
        meter.chat_parsed(gateway, &ctx, variant.prompt(), &req, |reply| legacy::parse_with(variant, reply)).await;
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

/// The payload of a length-alignment item: the pair as generated, and
/// whether each side can be regenerated (built-in methods can; imported
/// answers cannot).
pub fn align_payload(question: &str, a: &str, b: &str, tolerance: usize, max_adjustments: u32) -> serde_json::Value {
    json!({ "question": question, "a": a, "b": b, "tolerance": tolerance, "max_adjustments": max_adjustments })
}

/// The part of `answer` the forced append shows the model: all of it, or,
/// when the append's prompt and reply (the answer re-written plus the
/// missing words) would not fit the model's context, its longest ending
/// that does — the words before it are returned apart, to be put back in
/// front of the reply. `(words not shown, words shown)`.
async fn append_excerpt(
    gateway: &Gateway,
    question: &str,
    answer: &str,
    missing: usize,
) -> Result<(String, String), String> {
    if gateway.fits(&super::align::append_request(question, answer, missing)).await {
        return Ok((String::new(), answer.to_string()));
    }
    let words: Vec<&str> = answer.split_whitespace().collect();
    let ending = |k: usize| words[words.len() - k..].join(" ");
    // The longest ending that fits, by halving (each test is one count).
    let (mut lo, mut hi) = (0, words.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if gateway.fits(&super::align::append_request(question, &ending(mid), missing)).await {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return Err(format!(
            "the forced append of {missing} words does not fit the model's context even with one word of the answer shown"
        ));
    }
    Ok((words[..words.len() - lo].join(" "), ending(lo)))
}

/// Aligns one question's pair (seed 000 §IV-B, [`super::align`]):
/// regeneration by each side's own method where given (`methods[0]` for A,
/// `[1]` for B; each regeneration's calls counted), then the forced append.
/// The result holds both answers as they will be judged, how they were
/// aligned, and the word counts before and after.
pub async fn run_align_item(
    gateway: &Gateway,
    job_id: i64,
    item: WorkItem,
    methods: [Option<(&dyn crate::rag::Method, &Gateway)>; 2],
) -> ItemOutcome {
    let p = &item.payload;
    let text = |k: &str| p[k].as_str().unwrap_or("").to_string();
    let (question, a, b) = (text("question"), text("a"), text("b"));
    let tolerance = p["tolerance"].as_u64().unwrap_or(super::align::DEFAULT_TOLERANCE as u64) as usize;
    let max_adjustments = p["max_adjustments"].as_u64().unwrap_or(super::align::DEFAULT_ADJUSTMENTS as u64) as u32;
    let ctx = CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    let meter = std::sync::Mutex::new(Meter::default());
    let before = [super::align::words(&a), super::align::words(&b)];
    let regenerate = |side: usize, target: usize| {
        let (question, ctx, meter) = (&question, &ctx, &meter);
        async move {
            // Each side regenerates through its own gateway (its answers' temperature).
            let Some((method, gateway)) = methods[side] else { return Ok(None) };
            let answer = method.answer(gateway, ctx, question, Some(target)).await?;
            meter.lock().unwrap_or_else(|e| e.into_inner()).absorb(&answer.meter);
            Ok(Some(answer.answer))
        }
    };
    let append = |_side: usize, answer: String, missing: usize| {
        let (question, ctx, meter) = (&question, &ctx, &meter);
        async move {
            let mut local = Meter::default();
            let (head, shown) = append_excerpt(gateway, question, &answer, missing).await?;
            let req = super::align::append_request(question, &shown, missing);
            let out = local.chat(gateway, ctx, super::align::APPEND_PROMPT, &req).await;
            meter.lock().unwrap_or_else(|e| e.into_inner()).absorb(&local);
            // The words not shown go back in front of the lengthened end.
            out.map(|reply| if head.is_empty() { reply } else { format!("{head} {reply}") })
        }
    };
    let aligned = super::align::align(a, b, tolerance, max_adjustments, regenerate, append).await;
    let m = meter.into_inner().unwrap_or_else(|e| e.into_inner());
    let tokens = m.prompt_tokens + m.completion_tokens;
    match aligned {
        Ok((a, b, how)) => ItemOutcome::Done {
            result: json!({
                "a": a, "b": b, "alignment": how,
                "words_before": before,
                "words": [super::align::words(&a), super::align::words(&b)],
                "calls": m.llm_calls, "cached_calls": m.cached_calls,
            })
            .to_string(),
            tokens,
            cost_usd: m.cost_usd,
        },
        Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: m.cost_usd },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::llm::{MemoryStore, PriceTable};

    /// Seed 000 §IV-C asks the LLM "to give a score to an answer in each
    /// evaluation aspect" with "detailed text instructions" (Table I): the
    /// paper's prompt is the rubric alone, and it is the default. The
    /// content-only variant is a choice, and items say which one they ran.
    #[tokio::test]
    async fn the_paper_prompt_is_the_default_and_items_run_the_prompt_they_name() {
        assert_eq!(super::super::eval::Settings::default().judge_prompt, JudgePrompt::Paper);
        assert!(!scoring::PROMPT.contains("not merits"));
        assert!(scoring::PROMPT_CONTENT_ONLY.contains("their order and their length are not merits"));
        assert_eq!(
            scoring::PROMPT_CONTENT_ONLY.replace(
                " Judge only the answers' content; their order and their length are not merits in themselves.",
                ""
            ),
            scoring::PROMPT,
            "the variant differs by that one sentence"
        );
        // Settings stored before the choice existed ran the content-only prompt.
        let old: super::super::eval::Settings = serde_json::from_str(r#"{"trials": 3}"#).unwrap();
        assert_eq!(old.judge_prompt, JudgePrompt::ContentOnly);

        let store = Arc::new(MemoryStore::default());
        let gw = Gateway::new(Arc::new(crate::offline::provider()), store.clone(), PriceTable::default());
        let (q, a, b) = ("Who mended the nets?", "Ada Pell mended them in 1790.", "Someone did.");
        let mut plain = unbiased_payload(JudgePrompt::Paper, q, a, b, 0, 2, true);
        plain.as_object_mut().unwrap().remove("prompt");
        for (payload, want) in [
            (unbiased_payload(JudgePrompt::Paper, q, a, b, 0, 2, true), JudgePrompt::Paper),
            (unbiased_payload(JudgePrompt::ContentOnly, q, a, b, 0, 2, true), JudgePrompt::ContentOnly),
            (plain, JudgePrompt::ContentOnly),
        ] {
            let before = store.log().len();
            let out = run_unbiased_item(&gw, 1, WorkItem { key: "u-1-2-3-000".into(), payload }).await;
            assert!(matches!(out, ItemOutcome::Done { .. }), "{out:?}");
            let calls = &store.log()[before..];
            assert_eq!(calls.len(), 4, "2 orders × 2 repeats");
            assert!(calls.iter().all(|c| c.context.prompt_hash.as_deref() == Some(want.hash().as_str())), "{want:?}");
        }
        assert_ne!(JudgePrompt::Paper.hash(), JudgePrompt::ContentOnly.hash());
    }
}

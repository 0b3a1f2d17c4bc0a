//! One question's judging as a job item, for each protocol. An unbiased item
//! is one question in one trial: both orders × `repeats` scoring calls
//! (each draw its own `sample`: `(trial · repeats + repeat) · 2 + order`), then the
//! verdict. A legacy item is one question, A first, one call.

use serde::{Deserialize, Serialize};

use super::legacy::Aspects;
use super::scoring::{JudgePrompt, PromptText};
use super::{legacy, scoring, verdict, Judgment, Order};
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::Meter;
use crate::llm::{CallContext, Gateway};

/// An unbiased judging item: one question of a pair in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnbiasedItem {
    pub question: String,
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub trial: u32,
    /// Judgments per order (N).
    #[serde(default = "two")]
    pub repeats: u32,
    /// Both orders judged; without it only A first (position exchange
    /// switched off, to show what it removes).
    #[serde(default = "yes")]
    pub exchange: bool,
    /// The scoring prompt. Items stored without one were planned before
    /// the choice existed ([`scoring::prompt_before_choice`]).
    #[serde(default = "scoring::prompt_before_choice")]
    pub prompt: JudgePrompt,
}

fn two() -> u32 {
    2
}
fn yes() -> bool {
    true
}

impl UnbiasedItem {
    /// Both orders judged `repeats` times, the paper's prompt.
    pub fn new(question: &str, a: &str, b: &str, trial: u32, repeats: u32) -> UnbiasedItem {
        UnbiasedItem {
            question: question.into(),
            a: a.into(),
            b: b.into(),
            trial,
            repeats,
            exchange: true,
            prompt: JudgePrompt::Paper,
        }
    }
}

/// What an unbiased item found: each draw's judgment with the judge's
/// reasons (in the same order), and the trial's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnbiasedResult {
    pub trial: u32,
    pub judgments: Vec<Judgment>,
    #[serde(default, with = "folded_texts")]
    pub reasoning: Vec<String>,
    pub verdict: super::Verdict,
}

/// A list of texts as stored: each distinct text once and every entry's
/// index among them (`{"texts": [..], "of": [..]}`), where texts repeat —
/// an offline or deterministic judge gives all of a trial's repeats in one
/// order the same reasons, which written out whole were most of an
/// evaluation's stored results. A list without repeats, and results stored
/// before, are a plain list.
mod folded_texts {
    use std::collections::HashMap;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Folded<'a> {
        texts: Vec<&'a str>,
        of: Vec<u32>,
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Plain(Vec<String>),
        Folded { texts: Vec<String>, of: Vec<u32> },
    }

    pub fn serialize<S: Serializer>(list: &[String], s: S) -> Result<S::Ok, S::Error> {
        let mut index: HashMap<&str, u32> = HashMap::new();
        let mut texts = Vec::new();
        let of: Vec<u32> = list
            .iter()
            .map(|t| {
                *index.entry(t.as_str()).or_insert_with(|| {
                    texts.push(t.as_str());
                    texts.len() as u32 - 1
                })
            })
            .collect();
        if texts.len() == list.len() {
            list.serialize(s)
        } else {
            Folded { texts, of }.serialize(s)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        match Stored::deserialize(d)? {
            Stored::Plain(list) => Ok(list),
            Stored::Folded { texts, of } => of
                .iter()
                .map(|&i| {
                    texts.get(i as usize).cloned().ok_or_else(|| {
                        D::Error::custom(format!("reason {i} is not among the {} stored texts", texts.len()))
                    })
                })
                .collect(),
        }
    }
}

/// A legacy judging item: one question of a pair, A first, one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegacyItem {
    pub question: String,
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub trial: u32,
    /// The variant's aspects; items stored without one were LightRAG's three.
    #[serde(default)]
    pub legacy_aspects: legacy::LegacyAspects,
}

impl LegacyItem {
    pub fn new(legacy_aspects: legacy::LegacyAspects, question: &str, a: &str, b: &str) -> LegacyItem {
        LegacyItem { question: question.into(), a: a.into(), b: b.into(), trial: 0, legacy_aspects }
    }
}

/// What a legacy item found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegacyResult {
    #[serde(default)]
    pub trial: u32,
    pub legacy: super::LegacyJudgment,
}

/// A length-alignment item: one question's pair as generated, the
/// tolerance and the regenerations allowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignItem {
    pub question: String,
    pub a: String,
    pub b: String,
    #[serde(default = "default_tolerance")]
    pub tolerance: usize,
    #[serde(default = "default_adjustments")]
    pub max_adjustments: u32,
}

fn default_tolerance() -> usize {
    super::align::DEFAULT_TOLERANCE
}
fn default_adjustments() -> u32 {
    super::align::DEFAULT_ADJUSTMENTS
}

impl AlignItem {
    pub fn new(question: &str, a: &str, b: &str, tolerance: usize, max_adjustments: u32) -> AlignItem {
        AlignItem { question: question.into(), a: a.into(), b: b.into(), tolerance, max_adjustments }
    }
}

/// A pair as it will be judged: both answers, how they were aligned, the
/// word counts before and after, and the regenerations' calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignResult {
    pub a: String,
    pub b: String,
    pub alignment: super::align::Alignment,
    pub words_before: [usize; 2],
    pub words: [usize; 2],
    #[serde(default)]
    pub calls: u32,
    #[serde(default)]
    pub cached_calls: u32,
}

/// Judges one question in one trial under the unbiased protocol.
pub async fn run_unbiased_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let it: UnbiasedItem = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let (question, a, b, trial, repeats, prompt) =
        (it.question.as_str(), it.a.as_str(), it.b.as_str(), it.trial, it.repeats, it.prompt);
    let orders: &[Order] = if it.exchange { &[Order::AFirst, Order::BFirst] } else { &[Order::AFirst] };
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
    let Some(verdict) = verdict(&judgments) else {
        return ItemOutcome::failed(format!("item {}: it asks for no judgments (repeats = 0)", item.key));
    };
    ItemOutcome::done::<UnbiasedItem>(
        &UnbiasedResult { trial, judgments, reasoning: reasons, verdict },
        meter.prompt_tokens + meter.completion_tokens,
        meter.cost_usd,
    )
}

/// Judges one question under the legacy protocol (A first, one call).
pub async fn run_legacy_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let it: LegacyItem = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let (question, a, b, trial, variant) =
        (it.question.as_str(), it.a.as_str(), it.b.as_str(), it.trial, it.legacy_aspects);
    let ctx = CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: None };
    let mut meter = Meter::default();
    let req = legacy::request_with(variant, question, a, b, trial);
    let judged =
        meter.chat_parsed(gateway, &ctx, variant.prompt(), &req, |reply| legacy::parse_with(variant, reply)).await;
    let tokens = meter.prompt_tokens + meter.completion_tokens;
    match judged {
        Ok(legacy) => ItemOutcome::done::<LegacyItem>(&LegacyResult { trial, legacy }, tokens, meter.cost_usd),
        Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: meter.cost_usd },
    }
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
    let AlignItem { question, a, b, tolerance, max_adjustments } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
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
        Ok((a, b, alignment)) => {
            let words = [super::align::words(&a), super::align::words(&b)];
            let result = AlignResult {
                a,
                b,
                alignment,
                words_before: before,
                words,
                calls: m.llm_calls,
                cached_calls: m.cached_calls,
            };
            ItemOutcome::done::<AlignItem>(&result, tokens, m.cost_usd)
        }
        Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: m.cost_usd },
    }
}

crate::job_items!(UnbiasedItem => UnbiasedResult, LegacyItem => LegacyResult, AlignItem => AlignResult);

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::llm::{MemoryStore, PriceTable};

    /// Repeated reasons are stored once each with every judgment's index;
    /// distinct ones, and results stored before, as a plain list; an index
    /// past the texts is refused by name.
    #[test]
    fn repeated_reasons_are_stored_once_and_read_back_whole() {
        let one = Judgment { order: super::super::Order::AFirst, repeat: 0, a: [1; 4], b: [2; 4], judge: 0 };
        let verdict = super::super::verdict(&[one]).unwrap();
        let result = |reasoning: Vec<&str>| UnbiasedResult {
            trial: 1,
            judgments: Vec::new(),
            reasoning: reasoning.into_iter().map(String::from).collect(),
            verdict: verdict.clone(),
        };
        let repeated = result(vec!["same", "same", "other", "same"]);
        let stored = serde_json::to_value(&repeated).unwrap();
        assert_eq!(stored["reasoning"], serde_json::json!({"texts": ["same", "other"], "of": [0, 0, 1, 0]}));
        assert_eq!(serde_json::from_value::<UnbiasedResult>(stored).unwrap(), repeated);
        let distinct = result(vec!["one", "two"]);
        let stored = serde_json::to_value(&distinct).unwrap();
        assert_eq!(stored["reasoning"], serde_json::json!(["one", "two"]));
        assert_eq!(serde_json::from_value::<UnbiasedResult>(stored).unwrap(), distinct);
        let mut bad = serde_json::to_value(&repeated).unwrap();
        bad["reasoning"]["of"][2] = serde_json::json!(5);
        let e = serde_json::from_value::<UnbiasedResult>(bad).unwrap_err().to_string();
        assert!(e.contains("reason 5 is not among the 2 stored texts"), "{e}");
        let mut without = serde_json::to_value(&distinct).unwrap();
        without.as_object_mut().unwrap().remove("reasoning");
        assert!(serde_json::from_value::<UnbiasedResult>(without).unwrap().reasoning.is_empty());
    }

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
        let item = |prompt| WorkItem::new("u-1-2-3-000", &UnbiasedItem { prompt, ..UnbiasedItem::new(q, a, b, 0, 2) });
        let mut plain = item(JudgePrompt::Paper);
        plain.payload.as_object_mut().unwrap().remove("prompt");
        for (item, want) in [
            (item(JudgePrompt::Paper), JudgePrompt::Paper),
            (item(JudgePrompt::ContentOnly), JudgePrompt::ContentOnly),
            (plain, JudgePrompt::ContentOnly),
        ] {
            let before = store.log().len();
            let out = run_unbiased_item(&gw, 1, item).await;
            assert!(matches!(out, ItemOutcome::Done { .. }), "{out:?}");
            let calls = &store.log()[before..];
            assert_eq!(calls.len(), 4, "2 orders × 2 repeats");
            assert!(calls.iter().all(|c| c.context.prompt_hash.as_deref() == Some(want.hash().as_str())), "{want:?}");
        }
        // A payload that is not an item fails, naming why, and calls nothing.
        let before = store.log().len();
        let mut bad = item(JudgePrompt::Paper);
        bad.payload["prompt"] = serde_json::json!("poetic");
        let out = run_unbiased_item(&gw, 1, bad).await;
        let ItemOutcome::Failed { error, .. } = out else { panic!("{out:?}") };
        assert!(
            error.starts_with("item u-1-2-3-000: its payload cannot be read") && error.contains("poetic"),
            "{error}"
        );
        bad = item(JudgePrompt::Paper);
        bad.payload.as_object_mut().unwrap().remove("b");
        let out = run_legacy_item(&gw, 1, WorkItem { key: "l-1-2-3".into(), payload: bad.payload }).await;
        assert!(matches!(&out, ItemOutcome::Failed { error, .. } if error.contains("missing field `b`")), "{out:?}");
        assert_eq!(store.log().len(), before);
        assert_ne!(JudgePrompt::Paper.hash(), JudgePrompt::ContentOnly.hash());
    }
}

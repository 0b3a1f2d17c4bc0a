//! The price of an evaluation before it runs: from the very answers
//! it will judge, the calls each stage makes — exactly, but for length
//! alignment, whose regenerations the model's replies decide — the
//! prompts' tokens, counted on the prompts the judging sends (the same
//! requests, the same count the gateway records), the replies' tokens
//! expected, and what that costs with the configured model's price. Who
//! answers is said plainly: the offline provider and the simulated judge
//! cost nothing, and nothing is sent anywhere.

use std::collections::HashMap;

use engine::judge::eval::{JudgeKind, Settings};
use engine::judge::{legacy, scoring};
use engine::llm::settings::{LlmSettings, ProviderKind};
use engine::llm::{count_prompt_tokens, ChatRequest};

use super::{answers_of, checked, EvalRequest};
use crate::error::AppResult;
use crate::model::{AnswerSetView, PlanStage, RunPlan};
use crate::ssr::store::{self, Db};

/// A judge's reply when no recent reply of the model says otherwise: four
/// scores per answer and a sentence of reasons.
const VERDICT_TOKENS: f64 = 120.0;
/// A legacy verdict's reply: a winner and a reason per aspect.
const LEGACY_TOKENS: f64 = 150.0;

/// Who answers a stage's calls.
#[derive(Clone, Copy, PartialEq)]
enum Answerer {
    /// The configured LLM (an answer again, a regeneration, an LLM judge).
    Model,
    /// The offline rubric or the simulated judge: nothing is called.
    Free,
}

struct Pricing<'a> {
    llm: &'a LlmSettings,
    judge: JudgeKind,
}

impl Pricing<'_> {
    fn judge(&self) -> Answerer {
        match self.judge {
            JudgeKind::Llm if self.llm.provider != ProviderKind::Offline => Answerer::Model,
            _ => Answerer::Free,
        }
    }
    fn model(&self) -> Answerer {
        if self.llm.provider == ProviderKind::Offline {
            Answerer::Free
        } else {
            Answerer::Model
        }
    }
    /// What a jury's juror costs for `prompt` and `completion` tokens: nothing
    /// unless it is the configured LLM, then its model's price (`None`:
    /// no price set for that model).
    fn juror_cost(&self, juror: &engine::judge::jury::Juror, prompt: u64, completion: u64) -> Option<f64> {
        match self.juror_model(juror) {
            None => Some(0.0),
            Some(model) => self.llm.prices.0.contains_key(model).then(|| self.llm.job_cost(model, prompt, completion)),
        }
    }
    /// The model a juror calls; `None` when it calls none (the offline
    /// rubric, the simulated judge, the offline provider).
    fn juror_model<'a>(&'a self, juror: &'a engine::judge::jury::Juror) -> Option<&'a str> {
        (juror.judge == JudgeKind::Llm && self.llm.provider != ProviderKind::Offline)
            .then(|| juror.model.as_deref().unwrap_or(&self.llm.model))
    }
    /// What `cached` of a juror's `prompt` tokens save when read from the
    /// provider's prefix cache: `None` when it calls no model or its model
    /// has no cached rate set.
    fn juror_cache_saving(&self, juror: &engine::judge::jury::Juror, prompt: u64, cached: u64) -> Option<f64> {
        let model = self.juror_model(juror)?;
        self.llm.prices.0.get(model)?.cached_input_per_m?;
        Some(self.llm.job_cost(model, prompt, 0) - self.llm.job_cost_cached(model, prompt, cached, 0))
    }
    fn cost(&self, who: Answerer, prompt: u64, completion: u64) -> Option<f64> {
        match who {
            Answerer::Free => Some(0.0),
            Answerer::Model => self
                .llm
                .prices
                .0
                .contains_key(&self.llm.model)
                .then(|| self.llm.job_cost(&self.llm.model, prompt, completion)),
        }
    }
}

/// The mean reply tokens of the model's recent calls for `purpose`, else
/// `typical`.
async fn reply_tokens(pool: &Db, llm: &LlmSettings, judge: JudgeKind, purpose: &str, typical: f64) -> f64 {
    let (provider, model) = match (judge, llm.provider) {
        (JudgeKind::Simulated, _) => ("simulated", ""),
        (JudgeKind::Offline, _) | (JudgeKind::Llm, ProviderKind::Offline) => {
            ("offline", engine::llm::offline::OFFLINE_MODEL)
        }
        (JudgeKind::Llm, _) => (llm.provider.as_str(), llm.model.as_str()),
    };
    store::calls::recent_completion(pool, provider, model, purpose).await.ok().flatten().unwrap_or(typical)
}

/// The judging of `pairs` over `questions` (`(id, text)`) with `answers`
/// (set → question → text): its alignment stage (when on) and its judging
/// stage, labelled with `name`; `regen`: the prompt and reply tokens of one
/// answer as the sets' methods made them (a regeneration's, estimated).
#[allow(clippy::too_many_arguments)]
fn judging_stages(
    name: &str,
    settings: &Settings,
    questions: &[(i64, String)],
    answers: &HashMap<i64, HashMap<i64, String>>,
    pairs: &[(i64, i64)],
    sets: &[AnswerSetView],
    pricing: &Pricing,
    (verdict, legacy_reply): (f64, f64),
    regen: (f64, f64),
) -> (Vec<PlanStage>, u64) {
    let words = engine::judge::align::words;
    let unbiased = settings.protocol.unbiased();
    let orders: u64 = if settings.exchange { 2 } else { 1 };
    // Every judge of a jury makes each unbiased item's draws.
    let judges = u64::from(settings.judge_count());
    let draws = u64::from(settings.trials) * u64::from(settings.repeats) * orders;
    let (mut calls, mut prompt, mut exact, mut legacy_calls) = (0u64, 0u64, true, 0u64);
    // A draw's request goes out trials × repeats times the same: each after
    // the first may be read from the provider's prefix cache.
    let (mut cacheable, mut resent) = (0u64, 0u64);
    let mut legacy_prompt = 0u64;
    let (mut outside, mut regenerable) = (0u64, 0u64);
    let count = |req: ChatRequest| count_prompt_tokens(&req.messages);
    for (a, b) in pairs {
        let regen = [*a, *b].iter().filter(|s| sets.iter().any(|x| x.id == **s && x.method != "imported")).count();
        for (qid, question) in questions {
            let (Some(x), Some(y)) = (answers.get(a).and_then(|m| m.get(qid)), answers.get(b).and_then(|m| m.get(qid)))
            else {
                continue;
            };
            if unbiased {
                let (wx, wy) = (words(x), words(y));
                let needs = settings.align && wx.abs_diff(wy) > settings.tolerance;
                // Judged as they are, or (aligned) the shorter at the
                // longer's length: counted with the longer on both sides.
                let (first, second) = if needs {
                    exact = false;
                    outside += 1;
                    regenerable += u64::from(regen > 0);
                    let longer = if wx >= wy { x } else { y };
                    (longer, longer)
                } else {
                    (x, y)
                };
                let ab = count(scoring::request_with(settings.judge_prompt, question, first, second, 0));
                let ba = if settings.exchange {
                    count(scoring::request_with(settings.judge_prompt, question, second, first, 0))
                } else {
                    0
                };
                let per_draw = u64::from(settings.trials) * u64::from(settings.repeats);
                prompt += (ab + ba) * per_draw;
                let again = per_draw.saturating_sub(1);
                resent += again * (ab + ba);
                cacheable += again * (engine::llm::cacheable_prefix(ab) + engine::llm::cacheable_prefix(ba));
                calls += draws;
            }
            if settings.protocol.legacy() {
                legacy_calls += 1;
                legacy_prompt += count(legacy::request_with(settings.legacy_aspects, question, x, y, 0));
            }
        }
    }
    // One judge's unbiased calls and tokens (`calls`, `prompt`), then the jury's.
    let one_completion = (calls as f64 * verdict).round() as u64;
    let legacy_completion = (legacy_calls as f64 * legacy_reply).round() as u64;
    let one_calls = calls;
    let jurors = settings.judges();
    let cost = jurors
        .iter()
        .map(|j| pricing.juror_cost(j, prompt, one_completion))
        .chain(std::iter::once(pricing.cost(pricing.judge(), legacy_prompt, legacy_completion)))
        .sum::<Option<f64>>();
    // Only the jurors that call a model send prompts a cache could serve.
    let calling = jurors.iter().filter(|j| pricing.juror_model(j).is_some()).count() as u64;
    let cache_saving =
        jurors.iter().filter_map(|j| pricing.juror_cache_saving(j, prompt, cacheable)).reduce(|a, b| a + b);
    let (cacheable, resent) = (cacheable * calling, resent * calling);
    calls *= judges;
    prompt = prompt * judges + legacy_prompt;
    let judged = calls + legacy_calls;
    let completion = one_completion * judges + legacy_completion;
    let mut stages = Vec::new();
    if settings.align && unbiased {
        // Each pair outside the tolerance: at least one regeneration, at
        // most every adjustment then the forced append; the sets' own
        // answers' size stands in for each regenerated one's.
        let max = outside * (u64::from(settings.max_adjustments) + 1);
        let (p, c) = ((regenerable as f64 * regen.0).round() as u64, (regenerable as f64 * regen.1).round() as u64);
        stages.push(PlanStage {
            label: format!("{name}: length alignment"),
            calls: regenerable,
            calls_max: max,
            prompt_tokens: p,
            prompt_exact: false,
            completion_tokens: c,
            cost_usd: pricing.cost(pricing.model(), p, c),
            how: format!(
                "{} of {} of answers differ by more than {} words: each is regenerated up to {} times, then \
                 forced (the model's replies decide how many calls)",
                crate::format::int(outside as i64),
                crate::format::count(judged_questions(questions, answers, pairs) as i64, "pair"),
                settings.tolerance,
                settings.max_adjustments
            ),
            ..Default::default()
        });
    }
    let mut how = Vec::new();
    if unbiased {
        how.push(format!(
            "{} answer pairs (questions × pairs) × {} draws ({} × {} × {orders} order{})",
            crate::format::int((one_calls / draws.max(1)) as i64),
            draws,
            crate::format::count(settings.trials as i64, "trial"),
            crate::format::count(settings.repeats as i64, "repeat"),
            if orders == 1 { "" } else { "s" }
        ));
        if judges > 1 {
            how.push(format!("× {judges} judges (a jury: {})", engine::judge::jury::jury_text(&jurors)));
        }
    }
    if settings.protocol.legacy() {
        how.push(format!("{} legacy verdicts (one per question and pair)", crate::format::int(legacy_calls as i64)));
    }
    // Sequential trials stop a settled pair after its first look: at
    // least that look's calls, at most all M trials' (tokens and price at most).
    let least = if settings.sequential && unbiased {
        let first = engine::judge::sequential::schedule(settings.trials)[0];
        how.push(format!(
            "sequential trials: each pair stops once its verdict is settled, after {first} to {} trials",
            settings.trials
        ));
        calls / u64::from(settings.trials.max(1)) * u64::from(first) + legacy_calls
    } else {
        judged
    };
    stages.push(PlanStage {
        label: format!("{name}: judging"),
        calls: least,
        calls_max: judged,
        prompt_tokens: prompt,
        prompt_exact: exact,
        completion_tokens: completion,
        cost_usd: cost,
        how: how.join("; "),
        cacheable_tokens: cacheable,
        cache_saving_usd: cache_saving,
        resent_tokens: resent,
        judged_by_model: calling > 0,
    });
    (stages, judged)
}

fn judged_questions(
    questions: &[(i64, String)],
    answers: &HashMap<i64, HashMap<i64, String>>,
    pairs: &[(i64, i64)],
) -> usize {
    pairs
        .iter()
        .map(|(a, b)| {
            questions
                .iter()
                .filter(|(q, _)| {
                    answers.get(a).is_some_and(|m| m.contains_key(q))
                        && answers.get(b).is_some_and(|m| m.contains_key(q))
                })
                .count()
        })
        .sum()
}

/// The plan of `req`, with a sanity check first of each of `sanity` (the
/// answer sets whose method has never been checked, when the form asks).
pub async fn plan(pool: &Db, llm: &LlmSettings, req: &EvalRequest, sanity: &[i64]) -> AppResult<RunPlan> {
    let (set, sets, pairs) = checked(pool, req).await?;
    let questions: Vec<(i64, String)> =
        store::questions::list_questions(pool, set.id).await?.into_iter().map(|q| (q.id, q.question)).collect();
    let answers = answers_of(pool, &req.answer_sets).await?;
    let s = &req.settings;
    let pricing = Pricing { llm, judge: s.judge };
    let replies = (
        reply_tokens(pool, llm, s.judge, scoring::PURPOSE, VERDICT_TOKENS).await,
        reply_tokens(pool, llm, s.judge, legacy::PURPOSE, LEGACY_TOKENS).await,
    );
    let mut stages = Vec::new();
    let mut judgments = 0;
    for id in sanity {
        let Some(one) = sets.iter().find(|x| x.id == *id) else { continue };
        let cost = store::answers::cost_of(pool, *id).await?;
        let n = one.answers as f64;
        let (p, c) = (
            (cost.avg_prompt_tokens.unwrap_or(0.0) * n).round() as u64,
            (cost.avg_completion_tokens.unwrap_or(0.0) * n).round() as u64,
        );
        let again = (cost.avg_llm_calls.unwrap_or(1.0) * n).round() as u64;
        stages.push(PlanStage {
            label: format!("sanity check of {}: answering again", one.name),
            calls: again,
            calls_max: again,
            prompt_tokens: p,
            prompt_exact: false,
            completion_tokens: c,
            cost_usd: pricing.cost(pricing.model(), p, c),
            how: format!(
                "{} questions answered again by {} (tokens as its first run's)",
                crate::format::int(one.answers),
                one.method
            ),
            ..Default::default()
        });
        // Judged against itself under both protocols; its second answers
        // are not written yet, so its first stand in for them.
        let mut check = s.clone();
        check.sanity = true;
        check.protocol = engine::judge::eval::Protocol::Both;
        let mut own = HashMap::new();
        if let Some(a) = answers.get(id) {
            own.insert(*id, a.clone());
            own.insert(-id, a.clone());
        }
        let twin = AnswerSetView { id: -id, ..one.clone() };
        let per_answer = (cost.avg_prompt_tokens.unwrap_or(0.0), cost.avg_completion_tokens.unwrap_or(0.0));
        let (mut more, judged) = judging_stages(
            &format!("sanity check of {}", one.name),
            &check,
            &questions,
            &own,
            &[(*id, -id)],
            &[one.clone(), twin],
            &pricing,
            replies,
            per_answer,
        );
        for st in &mut more {
            st.prompt_exact = false;
        }
        judgments += judged;
        stages.extend(more);
    }
    let mut regen = (0.0, 0.0);
    for one in &sets {
        let cost = store::answers::cost_of(pool, one.id).await?;
        regen.0 += cost.avg_prompt_tokens.unwrap_or(0.0) / sets.len() as f64;
        regen.1 += cost.avg_completion_tokens.unwrap_or(0.0) / sets.len() as f64;
    }
    let (more, judged) = judging_stages("evaluation", s, &questions, &answers, &pairs, &sets, &pricing, replies, regen);
    judgments += judged;
    stages.extend(more);
    let (paid_by, paid) = match (s.judge, llm.provider) {
        (_, ProviderKind::Offline) if s.judge != JudgeKind::Simulated => (
            "free: the offline provider and its rubric judge answer in process; nothing is sent to a model".to_string(),
            false,
        ),
        (JudgeKind::Simulated, _) => (
            "nothing is called: the simulated judge (bias lab) scores in process".to_string() + match llm.provider {
                ProviderKind::Offline => "",
                _ => "; answering again and length alignment use the configured model",
            },
            llm.provider != ProviderKind::Offline && (!sanity.is_empty() || s.align),
        ),
        (JudgeKind::Offline, _) => (
            "the offline rubric judge scores in process (free); answering again and length alignment use the configured model".to_string(),
            true,
        ),
        (JudgeKind::Llm, _) => (crate::ssr::price::priced_by(llm), true),
    };
    let plan = RunPlan { stages, paid_by, paid, questions: set.questions, judgments, time: None };
    Ok(crate::ssr::price::timed(pool, llm, plan, false).await)
}

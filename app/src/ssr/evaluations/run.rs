//! Creating and running an evaluation job.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ssr::store::Db;
use engine::jobs::{ItemKey, RunEnd, WorkItem};
use engine::judge::eval::{self, JudgeKind, Key, Settings};
use engine::judge::protocol;
use engine::llm::settings::LlmSettings;
use engine::llm::Gateway;

use super::*;
use crate::error::{AppError, AppResult};
use crate::model::JobView;
use crate::ssr::jobs::params::EvaluationParams;
use crate::ssr::jobs::{self, Ended, Items, JobParams, Run, Stage};
use crate::ssr::store;

/// What an evaluation is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalRequest {
    pub question_set_id: i64,
    /// The compared answer sets (two or more).
    pub answer_sets: Vec<i64>,
    /// The pairs to judge, `(A, B)`; empty: every pair, in the given order.
    pub pairs: Vec<(i64, i64)>,
    pub settings: Settings,
    pub name: Option<String>,
    pub no_cache: bool,
}

/// Who judges, as the report states it.
/// A jury: "a jury of N: " and each judge's label, `; `-separated (a
/// juror at the configured endpoint under its own model named so).
pub fn judge_label(settings: &Settings, llm: &LlmSettings) -> String {
    let first = one_judge_label(settings.judge, None, llm);
    if settings.jury.is_empty() {
        return first;
    }
    let rest: Vec<String> = settings
        .jury
        .iter()
        .map(|j| match j.judge {
            JudgeKind::Simulated => format!("simulated judge ({})", j.spec()),
            _ => one_judge_label(j.judge, j.model.as_deref(), llm),
        })
        .collect();
    format!("a jury of {}: {first}; {}", settings.judge_count(), rest.join("; "))
}

fn one_judge_label(judge: JudgeKind, model: Option<&str>, llm: &LlmSettings) -> String {
    match judge {
        JudgeKind::Offline => "offline rubric judge (no LLM)".into(),
        JudgeKind::Simulated => "simulated judge (bias lab, no LLM)".into(),
        JudgeKind::Llm => match (llm.provider, model) {
            (engine::llm::settings::ProviderKind::Offline, _) => "offline rubric judge (no LLM configured)".into(),
            // Named as everywhere else (the call log, the jobs, the answers).
            (_, None) => llm.describe(),
            (_, Some(m)) => LlmSettings { model: m.to_string(), ..llm.clone() }.describe(),
        },
    }
}

/// What an evaluation request names, checked: its question set, its answer
/// sets (each of that question set, none twice, at least two) and its
/// pairs (every pair when none are named).
pub(super) async fn checked(
    pool: &Db,
    req: &EvalRequest,
) -> AppResult<(crate::model::QuestionSetView, Vec<crate::model::AnswerSetView>, Vec<(i64, i64)>)> {
    req.settings.validate().map_err(AppError::from)?;
    let set = store::questions::get_set(pool, req.question_set_id).await?;
    let mut sets = Vec::new();
    for id in &req.answer_sets {
        if sets.iter().any(|s: &crate::model::AnswerSetView| s.id == *id) {
            return Err(AppError::Invalid(format!("answer set {id} is listed twice")));
        }
        let s = store::answers::get_set(pool, *id).await?;
        if s.question_set_id != set.id {
            return Err(AppError::Invalid(format!(
                "answer set {id} ({}) answers another question set, not {}",
                s.name, set.id
            )));
        }
        if s.answers == 0 && !req.settings.sanity {
            return Err(AppError::Invalid(format!("answer set {id} ({}) has no answers yet", s.name)));
        }
        sets.push(s);
    }
    if sets.len() < 2 {
        return Err(AppError::Invalid("an evaluation compares at least two answer sets".into()));
    }
    let pairs: Vec<(i64, i64)> = if req.pairs.is_empty() {
        let ids: Vec<i64> = sets.iter().map(|s| s.id).collect();
        ids.iter().enumerate().flat_map(|(i, a)| ids[i + 1..].iter().map(move |b| (*a, *b))).collect()
    } else {
        for (a, b) in &req.pairs {
            if a == b || !req.answer_sets.contains(a) || !req.answer_sets.contains(b) {
                return Err(AppError::Invalid(format!(
                    "pair {a}–{b}: a pair joins two different answer sets of the evaluation"
                )));
            }
        }
        req.pairs.clone()
    };
    Ok((set, sets, pairs))
}

/// Creates (does not run) an evaluation's job and the evaluation. Returns
/// the job and the evaluation's id.
pub async fn create(pool: &Db, llm: &LlmSettings, req: &EvalRequest) -> AppResult<(JobView, i64)> {
    let (set, sets, pairs) = checked(pool, req).await?;
    let params = JobParams::Evaluation(EvaluationParams { no_cache: req.no_cache, set_id: set.id });
    // Its items as the run will plan them (`execute`'s `planned`): a
    // sanity check's second answers, then per pair and question the
    // alignment, one item per trial, the legacy verdict — so the total a
    // page shows from the start is the one the run keeps (it shrinks only
    // by pairs length alignment discards).
    let st = &req.settings;
    let unbiased = st.protocol.unbiased();
    let per_question = u64::from(st.align && unbiased)
        + if unbiased { u64::from(st.trials) * u64::from(st.judge_count()) } else { 0 }
        + u64::from(st.protocol.legacy());
    let again = if st.sanity { set.questions as u64 } else { 0 };
    let total = again + set.questions as u64 * per_question * pairs.len() as u64;
    let job = jobs::create(pool, set.project_id, &params, total as i64).await?;
    let name = req.name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| {
        let names: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
        if req.settings.sanity {
            format!("Sanity check: {}", names[0])
        } else {
            names.join(" vs ")
        }
    });
    let id = store::evaluations::insert(
        pool,
        &store::evaluations::NewEvaluation {
            project_id: set.project_id,
            question_set_id: set.id,
            job_id: job,
            name: name.trim(),
            settings: &serde_json::to_value(&req.settings).unwrap_or_default(),
            answer_sets: &req.answer_sets,
            pairs: &pairs,
            judge: &judge_label(&req.settings, llm),
        },
    )
    .await?;
    Ok((store::jobs::get_job(pool, job).await?, id))
}

/// Creates (does not run) a sanity check of an answer set's method: the
/// evaluation job first answers the questions again with the same method
/// and parameters (a second answer set, without the cache), then judges
/// the two under both protocols.
pub async fn create_sanity(
    pool: &Db,
    llm: &LlmSettings,
    answer_set_id: i64,
    mut settings: Settings,
) -> AppResult<(JobView, i64)> {
    let first = store::answers::get_set(pool, answer_set_id).await?;
    if first.method == "imported" {
        return Err(AppError::Invalid(format!(
            "answer set {answer_set_id} ({}) was imported: a sanity check answers the questions again with the set's method, and an imported set has none here",
            first.name
        )));
    }
    if first.answers == 0 {
        return Err(AppError::Invalid(format!("answer set {answer_set_id} ({}) has no answers yet", first.name)));
    }
    settings.sanity = true;
    settings.protocol = eval::Protocol::Both;
    let parameters: serde_json::Value = serde_json::from_str(&first.parameters).unwrap_or_default();
    let second = store::answers::create_set(
        pool,
        first.project_id,
        first.question_set_id,
        None,
        &format!("{} (second run)", first.name),
        &first.method,
        &parameters,
    )
    .await?;
    let req = EvalRequest {
        question_set_id: first.question_set_id,
        answer_sets: vec![first.id, second],
        pairs: vec![],
        settings,
        name: None,
        no_cache: false,
    };
    let created = create(pool, llm, &req).await;
    match created {
        Ok((job, id)) => {
            store::answers::set_job(pool, second, job.id).await?;
            Ok((job, id))
        }
        Err(e) => {
            store::answers::delete_set(pool, second).await?;
            Err(e)
        }
    }
}

/// Of `sets`, those whose method (name and parameters) has never been
/// sanity-checked in their project — the ones an evaluation checks first
/// by default. Imported sets have no method to check.
pub async fn never_checked(pool: &Db, sets: &[i64]) -> AppResult<Vec<i64>> {
    let mut out = Vec::new();
    for id in sets {
        let s = store::answers::get_set(pool, *id).await?;
        if s.method == "imported" || s.answers == 0 {
            continue;
        }
        let checked = store::evaluations::sanity_checked(pool, s.project_id).await?;
        let already = checked.iter().any(|(m, p)| *m == s.method && *p == s.parameters);
        if !already && !out.iter().any(|o: &(String, String, i64)| o.0 == s.method && o.1 == s.parameters) {
            out.push((s.method.clone(), s.parameters.clone(), s.id));
        }
    }
    Ok(out.into_iter().map(|o| o.2).collect())
}

/// The first phase's items: a sanity check's second answers (`again-QID`)
/// while its second set is empty; the rest are planned by [`execute`] as
/// each phase's results come in.
async fn items(pool: &Db, job: &JobView) -> AppResult<Vec<WorkItem>> {
    let e = of_job(pool, job.id).await?;
    if !e.settings.sanity {
        return Ok(Vec::new());
    }
    let second = e.answer_sets.get(1).copied().unwrap_or_default();
    if store::answers::get_set(pool, second).await?.answers > 0 {
        return Ok(Vec::new());
    }
    Ok(store::questions::list_questions(pool, e.view.question_set_id)
        .await?
        .into_iter()
        .map(|q| {
            let item = engine::rag::Item { question_id: q.id, question: q.question, target_words: None };
            WorkItem::new(ItemKey::Again(q.id), &item)
        })
        .collect())
}

/// A judge's gateway: the job's own for the configured LLM (under the
/// juror's model, if it names one), else the offline rubric or the
/// simulated judge over the same call log; its requests at the
/// evaluation's judging temperature.
fn judge_gateway(
    gateway: &Gateway,
    llm: &LlmSettings,
    settings: &Settings,
    juror: &engine::judge::jury::Juror,
    no_cache: bool,
) -> Gateway {
    let provider: Arc<dyn engine::llm::Provider> = match juror.judge {
        JudgeKind::Llm => {
            let g = gateway.clone();
            return settings.judging(match &juror.model {
                Some(m) => g.with_chat_model(m),
                None => g,
            });
        }
        JudgeKind::Offline => Arc::new(engine::offline::provider()),
        JudgeKind::Simulated => Arc::new(engine::judge::simulated::SimulatedJudge::new(juror.biases)),
    };
    let g = Gateway::new(provider, gateway.store(), llm.prices.clone());
    settings.judging(if no_cache { g.without_cache() } else { g })
}

/// Runs an evaluation job: the sanity check's second answers (stored in
/// its second set), then per pair and question the length alignment, the
/// unbiased trials over the aligned answers (discarded pairs are not
/// judged) and the legacy verdict over the answers as generated.
async fn execute(run: &Run<'_>, first: Vec<WorkItem>) -> AppResult<Result<RunEnd, String>> {
    let (pool, gateway, llm, job, phase) = (run.pool, run.gateway, run.llm, run.job, &run.phase);
    let e = of_job(pool, job.id).await?;
    let no_cache = run.params.evaluation(job.id)?.no_cache;
    let project = e.view.project_id;
    let mut methods: HashMap<i64, Box<dyn engine::rag::Method>> = HashMap::new();
    // A set whose method sets its answers' temperature regenerates at it.
    let mut temperatures: HashMap<i64, f32> = HashMap::new();
    let mut gateways: HashMap<i64, Gateway> = HashMap::new();
    // The sets' own methods answer again (a sanity check's second run) and
    // regenerate for length alignment; without either, no corpus is loaded.
    let answers_again = e.settings.sanity || (e.settings.align && e.settings.protocol.unbiased());
    let corpus = if answers_again { Some(Arc::new(crate::ssr::answers::corpus(pool, project).await?)) } else { None };
    let built = if corpus.is_some() { e.answer_sets.as_slice() } else { &[] };
    let mut sets = Vec::new();
    for id in built {
        sets.push(store::answers::get_set(pool, *id).await?);
    }
    let secrets = crate::ssr::answers::secrets_of_sets(pool, &sets).await?;
    for s in &sets {
        let (id, corpus) = (&s.id, corpus.clone().expect("loaded when there are methods to build"));
        if s.method == "imported" {
            continue;
        }
        let described: serde_json::Value = serde_json::from_str(&s.parameters).unwrap_or_default();
        let mut params = if described["params"].is_object() { described["params"].clone() } else { described };
        if let Some(secrets) = secrets.get(id) {
            // The method runs with its secrets; the set shows their redactions.
            let mut wrapped = serde_json::json!({ "params": params });
            secrets.apply(&mut wrapped);
            params = wrapped["params"].take();
        }
        match crate::ssr::answers::build_method(pool, gateway, llm, project, corpus.clone(), &s.method, &params).await?
        {
            Ok(m) => {
                methods.insert(*id, m);
                if let Ok(Some(t)) = engine::rag::method::answer_temperature(&params) {
                    temperatures.insert(*id, t);
                    gateways.insert(*id, gateway.clone().with_temperature(engine::rag::answer::PURPOSE, Some(t)));
                }
            }
            // Regeneration needs it; a sanity check cannot go without it.
            Err(err) if e.settings.sanity => return Ok(Err(err)),
            Err(_) => {}
        }
    }
    let mut total = store::jobs::job_items(pool, job.id)
        .await?
        .iter()
        .filter(|i| matches!(ItemKey::parse(&i.key), Some(ItemKey::Again(_))))
        .count();
    if !first.is_empty() {
        // A sanity check's second run: the same method, fresh calls.
        let second = e.answer_sets[1];
        let fresh = llm
            .gateway(gateway.store(), engine::offline::provider)
            .map_err(|err| AppError::Invalid(err.to_string()))?
            .without_cache()
            // The second run samples, as a user's second run would: the
            // method's temperature when it sets one above 0, else the model's
            // default (seed 000 ran the same method twice and got two sets).
            .with_temperature(engine::rag::answer::PURPOSE, temperatures.get(&second).copied().filter(|t| *t > 0.0));
        let Some(method) = methods.get(&second) else {
            return Ok(Err(format!("answer set {second} has no method to answer with")));
        };
        total = first.len();
        store::jobs::set_total(pool, job.id, total as i64).await?;
        let end = phase
            .run(first, phase.concurrency, |item| engine::rag::run_item(method.as_ref(), &fresh, job.id, item))
            .await;
        if !matches!(end, Ok(RunEnd::Finished)) {
            return Ok(end);
        }
        crate::ssr::answers::store_answers(pool, job.id, |k| matches!(k, ItemKey::Again(_)), None).await?;
    }

    let questions = store::questions::list_questions(pool, e.view.question_set_id).await?;
    let answers = answers_of(pool, &e.answer_sets).await?;
    let both = |a: i64, b: i64, q: i64| -> Option<(&String, &String)> {
        Some((answers.get(&a)?.get(&q)?, answers.get(&b)?.get(&q)?))
    };
    let s = &e.settings;
    // The legacy verdicts are the first judge's; every judge of a jury
    // judges each unbiased item.
    let judges: Vec<Gateway> = s.judges().iter().map(|j| judge_gateway(gateway, llm, s, j, no_cache)).collect();
    let judges = &judges;

    // Alignment.
    let mut align_items = Vec::new();
    if s.align && s.protocol.unbiased() {
        for (a, b) in &e.pairs {
            for q in &questions {
                if let Some((x, y)) = both(*a, *b, q.id) {
                    align_items.push(WorkItem::new(
                        Key::Align { a: *a, b: *b, question: q.id }.to_string(),
                        &protocol::AlignItem::new(&q.question, x, y, s.tolerance, s.max_adjustments),
                    ));
                }
            }
        }
    }
    let judged_pairs: usize =
        e.pairs.iter().map(|(a, b)| questions.iter().filter(|q| both(*a, *b, q.id).is_some()).count()).sum();
    let planned = |aligned: usize| {
        total
            + align_items.len()
            + if s.protocol.unbiased() { aligned * (s.trials * s.judge_count()) as usize } else { 0 }
            + if s.protocol.legacy() { judged_pairs } else { 0 }
    };
    store::jobs::set_total(pool, job.id, planned(judged_pairs) as i64).await?;
    if !align_items.is_empty() {
        let end = phase
            .run(align_items.clone(), phase.concurrency, |item| {
                let key = Key::parse(&item.key);
                let (a, b) = key.map_or((0, 0), |k| k.pair());
                let pick = |id: i64| Some((methods.get(&id)?.as_ref(), gateways.get(&id).unwrap_or(gateway)));
                protocol::run_align_item(gateway, job.id, item, [pick(a), pick(b)])
            })
            .await;
        if !matches!(end, Ok(RunEnd::Finished)) {
            return Ok(end);
        }
    }
    let results = super::Results::of(&store::jobs::job_items(pool, job.id).await?)?;

    // The judging: per pair and question the answers to judge (aligned,
    // or as generated), then the items — all M trials at once, or with
    // sequential trials look by look.
    let mut judged_answers: Vec<((i64, i64), &crate::model::QuestionView, (String, String))> = Vec::new();
    let mut legacy_items = Vec::new();
    for (a, b) in &e.pairs {
        for q in &questions {
            let Some((x, y)) = both(*a, *b, q.id) else { continue };
            if s.protocol.unbiased() {
                let judged: Option<(String, String)> = if s.align {
                    // A failed alignment (its item says why) is not judged either.
                    results.align(*a, *b, q.id).filter(|r| r.alignment.succeeded()).map(|r| (r.a.clone(), r.b.clone()))
                } else {
                    Some((x.clone(), y.clone()))
                };
                if let Some(pair) = judged {
                    judged_answers.push(((*a, *b), q, pair));
                }
            }
            if s.protocol.legacy() {
                legacy_items.push(WorkItem::new(
                    Key::Legacy { a: *a, b: *b, question: q.id }.to_string(),
                    &protocol::LegacyItem::new(s.legacy_aspects, &q.question, x, y),
                ));
            }
        }
    }
    let aligned_count = judged_answers.len();
    // The draws of trials 0..t of each pair (`upto`): which pair and
    // question, trial and judge — the items themselves, each holding its
    // question and both answers, are made a slice at a time.
    let draws_upto = |upto: &dyn Fn((i64, i64)) -> u32| {
        let mut draws: Vec<(usize, u32, u32)> = Vec::new();
        for (i, (pair, ..)) in judged_answers.iter().enumerate() {
            for t in 0..upto(*pair) {
                draws.extend((0..s.judge_count()).map(|judge| (i, t, judge)));
            }
        }
        draws
    };
    let make_item = |&(i, t, judge): &(usize, u32, u32)| {
        let (pair, q, (ja, jb)) = &judged_answers[i];
        let item = protocol::UnbiasedItem {
            prompt: s.judge_prompt,
            exchange: s.exchange,
            ..protocol::UnbiasedItem::new(&q.question, ja, jb, t, s.repeats)
        };
        WorkItem::new(Key::Unbiased { a: pair.0, b: pair.1, question: q.id, trial: t, judge }.to_string(), &item)
    };
    // Through the Batch API, every item at once: a slice waits for its
    // batch (minutes to hours at a provider) before the next is sent.
    let at_once = if llm.batches() { usize::MAX } else { JUDGED_AT_ONCE };
    let judge_items = |judging: Vec<WorkItem>| {
        phase.run(judging, phase.concurrency, |item| {
            let judge = match Key::parse(&item.key) {
                Some(Key::Unbiased { judge, .. }) => judges.get(judge as usize).unwrap_or(&judges[0]),
                _ => &judges[0],
            };
            let work: engine::llm::BoxFuture<'_, engine::jobs::ItemOutcome> = if item.key.starts_with("l-") {
                Box::pin(protocol::run_legacy_item(judge, job.id, item))
            } else {
                Box::pin(protocol::run_unbiased_item(judge, job.id, item))
            };
            work
        })
    };
    if !(s.sequential && s.protocol.unbiased()) {
        store::jobs::set_total(pool, job.id, planned(aligned_count) as i64).await?;
        return Ok(in_slices(&draws_upto(&|_| s.trials), at_once, &make_item, &legacy_items, judge_items).await);
    }
    // Sequential trials: every pair judged to the first look; after each
    // look, a pair whose verdict is settled stops, the others go on to the
    // next. The course is read back from the stored verdicts as the report
    // reads it (`engine::judge::sequential::course`), so a resumed or
    // joined job walks the same looks and judges the same items.
    let per_pair = |pair: (i64, i64)| judged_answers.iter().filter(|(p, ..)| *p == pair).count();
    let mut reached: HashMap<(i64, i64), u32> = e.pairs.iter().map(|p| (*p, 0)).collect();
    let mut open: Vec<(i64, i64)> = e.pairs.clone();
    // The job's items at most: the looks so far, and M for the pairs still
    // open (it shrinks as pairs settle).
    let most = |open: &[(i64, i64)], reached: &HashMap<(i64, i64), u32>| {
        let unbiased: usize = e
            .pairs
            .iter()
            .map(|p| per_pair(*p) * (if open.contains(p) { s.trials } else { reached[p] } * s.judge_count()) as usize)
            .sum();
        (total + align_items.len() + unbiased + if s.protocol.legacy() { judged_pairs } else { 0 }) as i64
    };
    for t in engine::judge::sequential::schedule(s.trials) {
        for p in &open {
            reached.insert(*p, t);
        }
        store::jobs::set_total(pool, job.id, most(&open, &reached)).await?;
        let draws = draws_upto(&|p| reached.get(&p).copied().unwrap_or(0));
        let end = in_slices(&draws, at_once, &make_item, &legacy_items, judge_items).await;
        if !matches!(end, Ok(RunEnd::Finished)) {
            return Ok(end);
        }
        // The judging items' verdicts alone (not the answers' texts again).
        let results = super::Results::of(&store::jobs::job_items(pool, job.id).await?)?;
        open.retain(|p| {
            let maps: Vec<_> = judged_answers
                .iter()
                .filter(|(pair, ..)| pair == p)
                .map(|(_, q, _)| super::report::trials_of(&results, s, *p, q.id))
                .collect();
            let maps: Vec<_> = maps.iter().collect();
            engine::judge::sequential::course(&maps, s.trials, eval::EVEN).standing()
                == engine::judge::sequential::Standing::Open
        });
        store::jobs::set_total(pool, job.id, most(&open, &reached)).await?;
        if open.is_empty() {
            break;
        }
    }
    Ok(Ok(RunEnd::Finished))
}

/// Judging items made, and run, at most this many at a time (unless they go
/// through the Batch API): each holds its
/// question and both answers (≈ 2.5 KB as JSON), and seed 000's 45,000 made
/// at once were 120 MB of the run's peak memory.
const JUDGED_AT_ONCE: usize = 4096;

/// Runs the judging `draws` `at_once` at a time (each slice's items made by
/// `make` just before it runs), then the legacy items; stops at the first
/// slice that does not finish. Every process of a shared queue cuts the
/// same slices, so each is a phase all of them join.
async fn in_slices<D, Fut>(
    draws: &[D],
    at_once: usize,
    make: impl Fn(&D) -> WorkItem,
    legacy: &[WorkItem],
    run: impl Fn(Vec<WorkItem>) -> Fut,
) -> Result<RunEnd, String>
where
    Fut: std::future::Future<Output = Result<RunEnd, String>>,
{
    let slices = draws.chunks(at_once.max(1)).map(|slice| slice.iter().map(&make).collect::<Vec<_>>());
    let legacy = (!legacy.is_empty()).then(|| legacy.to_vec());
    let mut ran = false;
    for items in slices.chain(legacy) {
        ran = true;
        let end = run(items).await;
        if !matches!(end, Ok(RunEnd::Finished)) {
            return end;
        }
    }
    // Nothing to judge: the phase still runs (and ends) as one of no items.
    if !ran {
        return run(Vec::new()).await;
    }
    Ok(RunEnd::Finished)
}

/// The evaluation job. Whether it judged anything is decided by its judging
/// items (`u-…`, `l-…`): aligned answers with no verdict are no evaluation.
pub struct EvaluationStage;

impl Stage for EvaluationStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, _: &'a JobParams) -> Items<'a> {
        Box::pin(items(pool, job))
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(execute(run, items))
    }

    fn decisive_items(&self) -> Option<(&'static str, &'static str)> {
        Some(("_-%", "judging items"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Judging runs a slice of draws at a time, in order, then the legacy
    /// items; a slice that does not finish ends it there; nothing to judge
    /// is still one (empty) run.
    #[tokio::test]
    async fn judging_runs_a_slice_at_a_time_then_the_legacy_items() {
        let make = |d: &u32| WorkItem::new(format!("u-{d}"), &protocol::UnbiasedItem::new("q", "a", "b", *d, 2));
        let legacy = vec![WorkItem::new("l-1".to_string(), &protocol::UnbiasedItem::new("q", "a", "b", 0, 2))];
        let draws: Vec<u32> = (0..10).collect();
        let seen = std::sync::Mutex::new(Vec::<Vec<String>>::new());
        let stop_at = std::sync::Mutex::new(usize::MAX);
        let run = |items: Vec<WorkItem>| {
            let mut seen = seen.lock().unwrap();
            seen.push(items.iter().map(|i| i.key.clone()).collect());
            let end = if seen.len() >= *stop_at.lock().unwrap() { RunEnd::Cancelled } else { RunEnd::Finished };
            async move { Ok(end) }
        };
        assert_eq!(in_slices(&draws, 4, make, &legacy, &run).await, Ok(RunEnd::Finished));
        let keys = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(keys.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 2, 1]);
        assert_eq!(keys.concat(), (0..10).map(|d| format!("u-{d}")).chain(["l-1".to_string()]).collect::<Vec<_>>());

        *stop_at.lock().unwrap() = 2;
        assert_eq!(in_slices(&draws, 4, make, &legacy, &run).await, Ok(RunEnd::Cancelled));
        assert_eq!(std::mem::take(&mut *seen.lock().unwrap()).len(), 2, "no slice after the one cancelled");

        *stop_at.lock().unwrap() = usize::MAX;
        assert_eq!(in_slices(&[] as &[u32], 4, make, &[], &run).await, Ok(RunEnd::Finished));
        assert_eq!(*seen.lock().unwrap(), [Vec::<String>::new()], "one run of no items");
    }
}

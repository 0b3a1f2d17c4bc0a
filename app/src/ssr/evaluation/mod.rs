//! Evaluations over the store: creating the job that judges a question
//! set's answer sets in pairs, running it (a sanity check first answers the
//! questions again; then length alignment, the unbiased trials and the
//! legacy verdicts), and the report and drill-down computed from its items;
//! shared by the server functions, the web routes and the CLI.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use engine::jobs::{RunEnd, WorkItem};
use engine::judge::align::Alignment;
use engine::judge::eval::{self, Contender, JudgeKind, Key, PairInput, QuestionInput, Report, Settings};
use engine::judge::{protocol, Judgment, LegacyJudgment, Order, Outcome};
use engine::llm::settings::LlmSettings;
use engine::llm::Gateway;
use serde_json::json;
use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::format::pct;
use crate::model::{
    DrillQuestionView, DrillView, EvaluationReportView, EvaluationView, JobItemView, JobView, JudgmentView, PairRowView,
};
use crate::ssr::jobs::Phase;
use crate::ssr::store;

/// The job kind.
pub const EVALUATION: &str = "evaluation";

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
pub fn judge_label(settings: &Settings, llm: &LlmSettings) -> String {
    match settings.judge {
        JudgeKind::Offline => "offline rubric judge (no LLM)".into(),
        JudgeKind::Simulated => "simulated judge (bias lab, no LLM)".into(),
        JudgeKind::Llm => match llm.provider {
            engine::llm::settings::ProviderKind::Offline => "offline rubric judge (no LLM configured)".into(),
            _ => format!("{} · {}", llm.base_url, llm.model),
        },
    }
}

fn biases_label(settings: &Settings) -> Option<String> {
    (settings.judge == JudgeKind::Simulated).then(|| {
        let b = settings.biases;
        format!(
            "position {:+}, length {:+} per 10 words, noise {}, seed {}",
            b.position, b.length_per_10_words, b.noise, b.seed
        )
    })
}

/// Creates (does not run) an evaluation's job and the evaluation. Returns
/// the job and the evaluation's id.
pub async fn create(pool: &SqlitePool, llm: &LlmSettings, req: &EvalRequest) -> AppResult<(JobView, i64)> {
    req.settings.validate().map_err(AppError::Invalid)?;
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
    let parameters = json!({ "no_cache": req.no_cache, "set_id": set.id });
    let per_pair =
        set.questions as u64 * (u64::from(req.settings.align) + 1 + u64::from(req.settings.protocol.legacy()));
    let job =
        store::jobs::create_job(pool, set.project_id, EVALUATION, &parameters, (per_pair * pairs.len() as u64) as i64)
            .await?;
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
    pool: &SqlitePool,
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
pub async fn never_checked(pool: &SqlitePool, sets: &[i64]) -> AppResult<Vec<i64>> {
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

/// An evaluation's stored row.
#[derive(Debug, Clone)]
pub struct Stored {
    pub view: EvaluationView,
    pub settings: Settings,
    pub answer_sets: Vec<i64>,
    pub pairs: Vec<(i64, i64)>,
}

async fn stored_of(pool: &SqlitePool, row: store::evaluations::Row) -> AppResult<Stored> {
    let (id, project_id, question_set_id, question_set, job_id, name, settings, sets, pairs, judge, created_at) = row;
    let settings: Settings = serde_json::from_str(&settings).unwrap_or_default();
    let answer_sets: Vec<i64> = serde_json::from_str(&sets).unwrap_or_default();
    let pairs: Vec<(i64, i64)> = serde_json::from_str(&pairs).unwrap_or_default();
    let mut contenders = Vec::new();
    for s in &answer_sets {
        contenders.push(store::answers::get_set(pool, *s).await.map_or(format!("set {s} (deleted)"), |s| s.name));
    }
    let job = match job_id {
        Some(j) => store::jobs::get_job(pool, j).await.ok(),
        None => None,
    };
    let view = EvaluationView {
        id,
        project_id,
        question_set_id,
        question_set,
        job_id,
        name,
        judge,
        protocol: serde_json::to_value(settings.protocol)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        trials: settings.trials,
        repeats: settings.repeats,
        tolerance: settings.tolerance as u32,
        align: settings.align,
        exchange: settings.exchange,
        sanity: settings.sanity,
        judge_prompt: settings.judge_prompt.name().to_string(),
        judge_prompt_hash: settings.judge_prompt.hash()[..12].to_string(),
        biases: biases_label(&settings),
        contenders,
        pairs: pairs.len(),
        status: job.as_ref().map_or("unknown".into(), |j| j.status.clone()),
        done: job.as_ref().map_or(0, |j| j.done),
        total: job.as_ref().map_or(0, |j| j.total),
        tokens: job.as_ref().map_or(0, |j| j.tokens),
        cost_usd: job.as_ref().map_or(0.0, |j| j.cost_usd),
        created_at,
    };
    Ok(Stored { view, settings, answer_sets, pairs })
}

pub async fn get(pool: &SqlitePool, id: i64) -> AppResult<Stored> {
    stored_of(pool, store::evaluations::get(pool, id).await?).await
}

pub async fn list(pool: &SqlitePool, project_id: i64) -> AppResult<Vec<EvaluationView>> {
    let mut out = Vec::new();
    for r in store::evaluations::list(pool, project_id).await? {
        out.push(stored_of(pool, r).await?.view);
    }
    Ok(out)
}

pub async fn of_job(pool: &SqlitePool, job_id: i64) -> AppResult<Stored> {
    get(pool, store::evaluations::of_job(pool, job_id).await?).await
}

pub async fn delete(pool: &SqlitePool, id: i64) -> AppResult<()> {
    store::evaluations::delete(pool, id).await
}

/// The first phase's items: a sanity check's second answers (`again-QID`)
/// while its second set is empty; the rest are planned by [`execute`] as
/// each phase's results come in.
pub async fn items(pool: &SqlitePool, job: &JobView) -> AppResult<Vec<WorkItem>> {
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
        .map(|q| WorkItem {
            key: format!("again-{}", q.id),
            payload: json!({ "question_id": q.id, "question": q.question }),
        })
        .collect())
}

/// The judge's gateway: the job's own for the configured LLM, else the
/// offline rubric or the simulated judge over the same call log.
fn judge_gateway(gateway: &Gateway, llm: &LlmSettings, settings: &Settings, no_cache: bool) -> Option<Gateway> {
    let provider: Arc<dyn engine::llm::Provider> = match settings.judge {
        JudgeKind::Llm => return None,
        JudgeKind::Offline => Arc::new(engine::offline::provider()),
        JudgeKind::Simulated => Arc::new(engine::judge::simulated::SimulatedJudge::new(settings.biases)),
    };
    let g = Gateway::new(provider, gateway.store(), llm.prices.clone());
    Some(if no_cache { g.without_cache() } else { g })
}

/// Each compared set's answers by question id.
async fn answers_of(pool: &SqlitePool, sets: &[i64]) -> AppResult<HashMap<i64, HashMap<i64, String>>> {
    let mut out = HashMap::new();
    for s in sets {
        out.insert(*s, store::answers::texts(pool, *s).await?.into_iter().collect());
    }
    Ok(out)
}

fn done_results(items: &[JobItemView]) -> HashMap<Key, serde_json::Value> {
    items
        .iter()
        .filter(|i| i.status == "done")
        .filter_map(|i| Some((Key::parse(&i.key)?, serde_json::from_str(i.result.as_deref()?).ok()?)))
        .collect()
}

/// Runs an evaluation job: the sanity check's second answers (stored in
/// its second set), then per pair and question the length alignment, the
/// unbiased trials over the aligned answers (discarded pairs are not
/// judged) and the legacy verdict over the answers as generated.
pub async fn execute(
    pool: &SqlitePool,
    gateway: &Gateway,
    llm: &LlmSettings,
    job: &JobView,
    first: Vec<WorkItem>,
    phase: &Phase<'_>,
) -> AppResult<Result<RunEnd, String>> {
    let e = of_job(pool, job.id).await?;
    let parameters: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
    let no_cache = parameters["no_cache"].as_bool() == Some(true);
    let project = e.view.project_id;
    let transport = llm.transport();
    let mut methods: HashMap<i64, Box<dyn engine::rag::Method>> = HashMap::new();
    // A set whose method sets its answers' temperature regenerates at it.
    let mut temperatures: HashMap<i64, f32> = HashMap::new();
    let mut gateways: HashMap<i64, Gateway> = HashMap::new();
    // The sets' own methods answer again (a sanity check's second run) and
    // regenerate for length alignment; without either, no corpus is loaded.
    let answers_again = e.settings.sanity || (e.settings.align && e.settings.protocol.unbiased());
    let corpus = if answers_again { Some(Arc::new(crate::ssr::answers::corpus(pool, project).await?)) } else { None };
    let built = if corpus.is_some() { e.answer_sets.as_slice() } else { &[] };
    for id in built {
        let corpus = corpus.clone().expect("loaded when there are methods to build");
        let s = store::answers::get_set(pool, *id).await?;
        if s.method == "imported" {
            continue;
        }
        let described: serde_json::Value = serde_json::from_str(&s.parameters).unwrap_or_default();
        let params = if described["params"].is_object() { described["params"].clone() } else { described };
        match crate::ssr::answers::build_method(pool, gateway, &transport, project, corpus.clone(), &s.method, &params)
            .await?
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
    let mut total = store::jobs::job_items(pool, job.id).await?.iter().filter(|i| i.key.starts_with("again-")).count();
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
        crate::ssr::answers::store_answers(pool, job.id, "again-", None).await?;
    }

    let questions = store::questions::list_questions(pool, e.view.question_set_id).await?;
    let answers = answers_of(pool, &e.answer_sets).await?;
    let both = |a: i64, b: i64, q: i64| -> Option<(&String, &String)> {
        Some((answers.get(&a)?.get(&q)?, answers.get(&b)?.get(&q)?))
    };
    let s = &e.settings;
    let judge = judge_gateway(gateway, llm, s, no_cache);
    let judge = judge.as_ref().unwrap_or(gateway);

    // Alignment.
    let mut align_items = Vec::new();
    if s.align && s.protocol.unbiased() {
        for (a, b) in &e.pairs {
            for q in &questions {
                if let Some((x, y)) = both(*a, *b, q.id) {
                    align_items.push(WorkItem {
                        key: Key::Align { a: *a, b: *b, question: q.id }.to_string(),
                        payload: protocol::align_payload(&q.question, x, y, s.tolerance, s.max_adjustments),
                    });
                }
            }
        }
    }
    let judged_pairs: usize =
        e.pairs.iter().map(|(a, b)| questions.iter().filter(|q| both(*a, *b, q.id).is_some()).count()).sum();
    let planned = |aligned: usize| {
        total
            + align_items.len()
            + if s.protocol.unbiased() { aligned * s.trials as usize } else { 0 }
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
    let results = done_results(&store::jobs::job_items(pool, job.id).await?);

    // The judging items.
    let mut judging = Vec::new();
    let mut aligned_count = 0;
    for (a, b) in &e.pairs {
        for q in &questions {
            let Some((x, y)) = both(*a, *b, q.id) else { continue };
            if s.protocol.unbiased() {
                let judged: Option<(String, String)> = if s.align {
                    // A failed alignment (its item says why) is not judged either.
                    results
                        .get(&Key::Align { a: *a, b: *b, question: q.id })
                        .filter(|r| r["alignment"] != json!("Discarded"))
                        .map(|r| (r["a"].as_str().unwrap_or("").to_string(), r["b"].as_str().unwrap_or("").to_string()))
                } else {
                    Some((x.clone(), y.clone()))
                };
                if let Some((ja, jb)) = judged {
                    aligned_count += 1;
                    for t in 0..s.trials {
                        judging.push(WorkItem {
                            key: Key::Unbiased { a: *a, b: *b, question: q.id, trial: t }.to_string(),
                            payload: protocol::unbiased_payload(
                                s.judge_prompt,
                                &q.question,
                                &ja,
                                &jb,
                                t,
                                s.repeats,
                                s.exchange,
                            ),
                        });
                    }
                }
            }
            if s.protocol.legacy() {
                judging.push(WorkItem {
                    key: Key::Legacy { a: *a, b: *b, question: q.id }.to_string(),
                    payload: protocol::payload(&q.question, x, y, 0, 1),
                });
            }
        }
    }
    store::jobs::set_total(pool, job.id, planned(aligned_count) as i64).await?;
    Ok(phase
        .run(judging, phase.concurrency, |item| {
            let work: engine::llm::BoxFuture<'_, engine::jobs::ItemOutcome> = if item.key.starts_with("l-") {
                Box::pin(protocol::run_legacy_item(judge, job.id, item))
            } else {
                Box::pin(protocol::run_unbiased_item(judge, job.id, item))
            };
            work
        })
        .await)
}

/// Everything judged so far, as the report's input.
pub async fn inputs(pool: &SqlitePool, e: &Stored) -> AppResult<(Vec<Contender>, Vec<PairInput>)> {
    let items = match e.view.job_id {
        Some(j) => store::jobs::job_items(pool, j).await?,
        None => Vec::new(),
    };
    let results = done_results(&items);
    let questions = store::questions::list_questions(pool, e.view.question_set_id).await?;
    let answers = answers_of(pool, &e.answer_sets).await?;
    let mut contenders = Vec::new();
    for id in &e.answer_sets {
        let (name, method) = match store::answers::get_set(pool, *id).await {
            Ok(s) => (s.name, s.method),
            Err(_) => (format!("set {id} (deleted)"), String::new()),
        };
        contenders.push(Contender { set_id: *id, name, method });
    }
    let words = |t: &str| engine::judge::align::words(t);
    let mut pairs = Vec::new();
    for (a, b) in &e.pairs {
        let mut qs = Vec::new();
        for q in &questions {
            let (Some(x), Some(y)) =
                (answers.get(a).and_then(|m| m.get(&q.id)), answers.get(b).and_then(|m| m.get(&q.id)))
            else {
                continue;
            };
            let aligned = results.get(&Key::Align { a: *a, b: *b, question: q.id });
            let alignment: Option<Alignment> =
                aligned.and_then(|r| serde_json::from_value(r["alignment"].clone()).ok());
            let judged_words = aligned
                .and_then(|r| Some((r["words"][0].as_u64()? as usize, r["words"][1].as_u64()? as usize)))
                .unwrap_or((words(x), words(y)));
            let mut trials = BTreeMap::new();
            for t in 0..e.settings.trials {
                if let Some(r) = results.get(&Key::Unbiased { a: *a, b: *b, question: q.id, trial: t }) {
                    if let Ok(js) = serde_json::from_value::<Vec<Judgment>>(r["judgments"].clone()) {
                        trials.insert(t, js);
                    }
                }
            }
            let legacy: Option<LegacyJudgment> = results
                .get(&Key::Legacy { a: *a, b: *b, question: q.id })
                .and_then(|r| serde_json::from_value(r["legacy"].clone()).ok());
            qs.push(QuestionInput {
                id: q.id,
                level: q.level.clone().or_else(|| q.category.clone()),
                alignment,
                raw_words: (words(x), words(y)),
                words: judged_words,
                trials,
                legacy,
            });
        }
        pairs.push(PairInput { a: *a, b: *b, questions: qs });
    }
    Ok((contenders, pairs))
}

/// An evaluation, its judgments and their report, read and computed once
/// for everything drawn from them (page, plots, tables, JSON, HTML).
pub struct Snapshot {
    pub stored: Stored,
    pub pairs: Vec<PairInput>,
    pub report: Report,
}

/// The snapshot of an evaluation (of what is judged so far while it runs).
pub async fn snapshot(pool: &SqlitePool, id: i64) -> AppResult<Snapshot> {
    let stored = get(pool, id).await?;
    let (contenders, pairs) = inputs(pool, &stored).await?;
    let report = eval::report(&stored.settings, &contenders, &pairs);
    Ok(Snapshot { stored, pairs, report })
}

/// The report of an evaluation.
pub async fn report(pool: &SqlitePool, id: i64) -> AppResult<(Stored, Report)> {
    let s = snapshot(pool, id).await?;
    Ok((s.stored, s.report))
}

/// The report's plots: name → SVG. Names: `box`, `heatmap`,
/// `legacy-heatmap`, and per pair `aspects-A-B`, `levels-A-B`, `legacy-A-B`.
pub fn plots(e: &Stored, r: &Report) -> Vec<(String, String)> {
    use engine::judge::plots;
    let by = format!("judged by {}", e.view.judge);
    let mut out = vec![
        ("box".to_string(), plots::box_plots_svg("Win and tie rates over trials (unbiased protocol)", &by, &r.pairs)),
        (
            "heatmap".to_string(),
            plots::heatmap_svg(
                "Relative win rate, unbiased protocol (median over trials)",
                &by,
                &r.contenders,
                &r.matrix,
            ),
        ),
    ];
    if e.settings.protocol.legacy() {
        out.push((
            "legacy-heatmap".into(),
            plots::heatmap_svg(
                "Relative win rate, legacy protocol (A shown first, a winner forced)",
                &by,
                &r.contenders,
                &r.legacy_matrix,
            ),
        ));
    }
    for p in &r.pairs {
        let legend = (p.a_name.as_str(), p.b_name.as_str());
        let tag = format!("{}-{}", p.a, p.b);
        let mut aspects = Vec::new();
        let mut levels = Vec::new();
        let mut side = Vec::new();
        if let Some(u) = &p.unbiased {
            for b in &u.aspects {
                aspects.push((b.label.clone(), b.rates, format!("n = {}", b.n)));
            }
            for b in &u.levels {
                levels.push((b.label.clone(), b.rates, format!("n = {}", b.n)));
            }
            // The pair's headline: the median trial's rates (as the table).
            side.push((
                "unbiased (median trial)".to_string(),
                u.headline,
                format!("rel. {}", crate::format::signed(u.headline_relative, 2)),
            ));
        }
        if let Some(l) = &p.legacy {
            side.insert(
                0,
                (
                    "legacy (A first, forced)".to_string(),
                    l.overall.rates,
                    format!("rel. {}", crate::format::signed(l.overall.relative, 2)),
                ),
            );
            for b in &l.aspects {
                aspects.push((format!("{} (legacy)", b.label), b.rates, format!("n = {}", b.n)));
            }
        }
        let title = |what: &str| format!("{what}: {} vs {}", p.a_name, p.b_name);
        out.push((format!("aspects-{tag}"), plots::stacked_svg(&title("Per aspect"), legend, &aspects)));
        out.push((format!("levels-{tag}"), plots::stacked_svg(&title("Per question level"), legend, &levels)));
        out.push((format!("legacy-{tag}"), plots::stacked_svg(&title("Legacy vs unbiased"), legend, &side)));
    }
    out
}

/// The report as the page shows it.
pub async fn report_view(pool: &SqlitePool, id: i64) -> AppResult<EvaluationReportView> {
    report_view_of(pool, snapshot(pool, id).await?).await
}

/// The page's view of a snapshot.
pub async fn report_view_of(pool: &SqlitePool, s: Snapshot) -> AppResult<EvaluationReportView> {
    let (e, r) = (s.stored, s.report);
    let svgs: HashMap<String, String> = plots(&e, &r).into_iter().collect();
    let svg = |k: &str| svgs.get(k).cloned().unwrap_or_default();
    let pairs = r
        .pairs
        .iter()
        .map(|p| {
            let u = p.unbiased.as_ref();
            let tag = format!("{}-{}", p.a, p.b);
            PairRowView {
                a: p.a,
                b: p.b,
                a_name: p.a_name.clone(),
                b_name: p.b_name.clone(),
                questions: p.questions,
                aligned: (p.alignment.as_is, p.alignment.regenerated, p.alignment.forced, p.alignment.discarded),
                alignment_success: p.alignment.success_rate,
                trials: u.map_or(0, |u| u.trials.len()),
                median_trial: u.map(|u| u.median_trial),
                a_win: u.map(|u| (u.headline.a_win, u.a_win_ci)),
                tie: u.map(|u| (u.headline.tie, u.tie_ci)),
                b_win: u.map(|u| (u.headline.b_win, u.b_win_ci)),
                relative: u.map(|u| (u.headline_relative, u.relative_ci)),
                mean_difference: u.map(|u| u.mean_difference),
                wilcoxon: u.and_then(|u| u.wilcoxon.as_ref()).map(|t| (t.p_value, t.p_holm)),
                sign: u.and_then(|u| u.sign.as_ref()).map(|t| (t.p_value, t.p_holm)),
                legacy: p.legacy.as_ref().map(|l| (l.overall.rates.a_win, l.overall.rates.b_win, l.overall.relative)),
                aspects_svg: svg(&format!("aspects-{tag}")),
                levels_svg: svg(&format!("levels-{tag}")),
                legacy_svg: svg(&format!("legacy-{tag}")),
            }
        })
        .collect();
    let sanity = r.sanity.as_ref().map(|s| {
        let unbiased = s.sentence();
        let legacy = match (s.legacy_a_win, s.legacy_b_win) {
            (Some(a), Some(b)) => format!(
                " The legacy protocol on the same pair: first run {} / second run {} (the paper saw 90% / 10%).",
                pct(a),
                pct(b)
            ),
            _ => String::new(),
        };
        let test = r
            .pairs
            .first()
            .and_then(|p| p.unbiased.as_ref()?.wilcoxon.as_ref())
            .map(|t| {
                format!(
                    " Over questions, Wilcoxon p = {:.3}: the difference between the two runs is {}significant at 0.05.",
                    t.p_value,
                    if t.p_value < 0.05 { "" } else { "not " }
                )
            })
            .unwrap_or_default();
        (format!("{unbiased}{legacy}{test}"), s.even)
    });
    let b = &r.bias;
    let rate = |v: Option<f64>| v.map_or("—".to_string(), pct);
    let bias = vec![
        (
            "Verdict flips when the order swaps".into(),
            rate(b.flip_rate),
            format!("{} draws judged in both orders", b.exchanged_draws),
        ),
        (
            "The answer shown first wins".into(),
            rate(b.first_shown_wins),
            format!("{} judgments with a winner", b.decided_judgments),
        ),
        (
            "The longer answer wins (as judged)".into(),
            rate(b.longer_wins),
            format!("{} judgments between unequal lengths", b.length_decided),
        ),
        ("Legacy: the first-shown answer wins".into(), rate(b.legacy_first_wins), "one verdict per question".into()),
        (
            "Legacy: the longer answer wins".into(),
            rate(b.legacy_longer_wins),
            format!("{} verdicts between unequal lengths", b.legacy_length_decided),
        ),
        (
            "Spread of a pair's win rate across trials (std)".into(),
            b.trial_std_mean
                .map_or("—".into(), |m| format!("{m:.3} mean, {:.3} largest", b.trial_std_max.unwrap_or(m))),
            format!("{} pairs", r.pairs.len()),
        ),
    ];
    let (calls, cached_calls): (i64, i64) = match e.view.job_id {
        Some(j) => store::evaluations::call_counts(pool, j).await?,
        None => (0, 0),
    };
    // The judging items (`u-…`, `l-…`), not the alignment's (`al-…`).
    let judging = match e.view.job_id {
        Some(j) => Some(store::jobs::outcome_of(pool, j, "_-%").await?),
        None => None,
    };
    let judge_reading = match (e.settings.judge, &judging) {
        (JudgeKind::Llm, Some(o)) => judge_reading(o, b.flip_rate, b.exchanged_draws),
        _ => None,
    };
    let no_verdict = no_verdict(&e, &r, judging.as_ref());
    Ok(EvaluationReportView {
        box_svg: svg("box"),
        heatmap_svg: svg("heatmap"),
        legacy_heatmap_svg: svgs.get("legacy-heatmap").cloned(),
        evaluation: e.view,
        pairs,
        sanity,
        bias,
        calls,
        cached_calls,
        judge_reading,
        no_verdict,
    })
}

/// Why a finished evaluation has no rates at all, when it has none: every
/// question discarded by length alignment, or no verdict readable.
pub fn no_verdict(e: &Stored, r: &Report, judging: Option<&crate::model::JobOutcome>) -> Option<String> {
    let finished = matches!(e.view.status.as_str(), "done" | "failed");
    if !finished || r.pairs.iter().any(|p| p.unbiased.is_some() || p.legacy.is_some()) {
        return None;
    }
    let questions: usize = r.pairs.iter().map(|p| p.questions).sum();
    let discarded: usize = r.pairs.iter().map(|p| p.alignment.discarded).sum();
    let judged = judging.map_or(0, |o| o.items);
    Some(if judged == 0 && discarded > 0 {
        format!(
            "No question was judged: length alignment discarded {discarded} of {questions} (their answers stayed more than \
             {} words apart after regeneration and the forced append). A model that follows the length instruction, a larger \
             tolerance, or alignment off (to see what it removes) would let them be judged.",
            e.settings.tolerance
        )
    } else if judged > 0 && judging.is_some_and(|o| o.failed == o.items) {
        format!(
            "No verdict could be read: every one of the {judged} judging items failed (see the judge's line above)."
        )
    } else {
        "No verdict: nothing was judged.".to_string()
    })
}

/// How well an LLM judge could be read, in words, and whether the report's
/// rates are in doubt (most items failed, or none was read).
pub fn judge_reading(o: &crate::model::JobOutcome, flip_rate: Option<f64>, exchanged: usize) -> Option<(String, bool)> {
    let model = o.model.clone()?;
    if o.items == 0 {
        return None;
    }
    let read = o.items - o.failed;
    let mut said =
        format!("The judge, {model}: {read} of {} items read ({}).", o.items, pct(read as f64 / o.items as f64));
    if let Some(more) = o.sentence() {
        said.push(' ');
        said.push_str(&more);
    }
    if let Some(f) = flip_rate {
        said.push_str(&format!(
            " Position consistency: the verdict stays the same when the order swaps in {} of {exchanged} draws.",
            pct(1.0 - f)
        ));
    }
    let poor = read * 2 < o.items;
    if poor {
        said.push_str(
            " Most verdicts could not be used, so the rates below rest on few judgments (or none): a more capable judge model, \
             a larger reply budget (--llm-max-tokens judge_scores=N) or the other JSON mode (--llm-json-mode) may help.",
        );
    }
    Some((said, poor))
}

fn outcome_name(o: Outcome, a: &str, b: &str) -> String {
    match o {
        Outcome::A => a.to_string(),
        Outcome::B => b.to_string(),
        Outcome::Tie => "tie".to_string(),
    }
}

fn alignment_name(a: Option<Alignment>, on: bool) -> String {
    match a {
        None if !on => "alignment off".into(),
        None => "not aligned yet".into(),
        Some(Alignment::AsIs) => "within tolerance as generated".into(),
        Some(Alignment::Regenerated(n)) => format!("regenerated ({n}×)"),
        Some(Alignment::Forced(n)) => format!("forced append (after {n} regenerations)"),
        Some(Alignment::Discarded) => "discarded: still outside the tolerance".into(),
    }
}

/// A pair's questions for the drill-down list.
pub async fn drill_questions(pool: &SqlitePool, id: i64, a: i64, b: i64) -> AppResult<Vec<DrillQuestionView>> {
    let e = get(pool, id).await?;
    if !e.pairs.contains(&(a, b)) {
        return Err(AppError::NotFound(format!("evaluation {id} has no pair {a}–{b}")));
    }
    let (contenders, pairs) = inputs(pool, &e).await?;
    let name = |s: i64| contenders.iter().find(|c| c.set_id == s).map_or(String::new(), |c| c.name.clone());
    let texts: HashMap<i64, String> = store::questions::list_questions(pool, e.view.question_set_id)
        .await?
        .into_iter()
        .map(|q| (q.id, q.question))
        .collect();
    let pair = pairs.into_iter().find(|p| (p.a, p.b) == (a, b)).map(|p| p.questions).unwrap_or_default();
    Ok(pair
        .into_iter()
        .map(|q| {
            let outcomes: Vec<Outcome> =
                q.trials.values().filter_map(|js| Some(engine::judge::verdict(js)?.outcome)).collect();
            let count = |o: Outcome| outcomes.iter().filter(|x| **x == o).count();
            DrillQuestionView {
                id: q.id,
                question: texts.get(&q.id).cloned().unwrap_or_default(),
                level: q.level,
                a_wins: count(Outcome::A),
                ties: count(Outcome::Tie),
                b_wins: count(Outcome::B),
                alignment: alignment_name(q.alignment, e.settings.align),
                legacy: q.legacy.map(|l| outcome_name(l.overall, &name(a), &name(b))),
            }
        })
        .collect())
}

/// One question of a pair: both answers as generated and as judged, every
/// judgment in both orders with its scores and reasoning, each trial's
/// verdict and the legacy verdict.
pub async fn drill(pool: &SqlitePool, id: i64, a: i64, b: i64, question: i64) -> AppResult<DrillView> {
    let e = get(pool, id).await?;
    if !e.pairs.contains(&(a, b)) {
        return Err(AppError::NotFound(format!("evaluation {id} has no pair {a}–{b}")));
    }
    let (_, q) = store::questions::get_question(pool, question).await?;
    if store::questions::owner(pool, question).await?.0 != e.view.question_set_id {
        return Err(AppError::NotFound(format!("question {question} is not in evaluation {id}'s question set")));
    }
    let items = match e.view.job_id {
        Some(j) => store::jobs::job_items(pool, j).await?,
        None => Vec::new(),
    };
    let results = done_results(&items);
    let answer = |set: i64| async move {
        store::answers::list_answers(pool, set, Some(question))
            .await
            .ok()
            .and_then(|v| v.into_iter().next())
            .map(|a| a.answer)
    };
    let (a_raw, b_raw) = (answer(a).await.unwrap_or_default(), answer(b).await.unwrap_or_default());
    let aligned = results.get(&Key::Align { a, b, question });
    let text =
        |k: &str, raw: &str| aligned.and_then(|r| r[k].as_str().map(String::from)).unwrap_or_else(|| raw.to_string());
    let set_name =
        |s: i64| async move { store::answers::get_set(pool, s).await.map_or(format!("set {s}"), |s| s.name) };
    let (a_name, b_name) = (set_name(a).await, set_name(b).await);
    let mut judgments = Vec::new();
    let mut verdicts = Vec::new();
    for t in 0..e.settings.trials {
        let key = Key::Unbiased { a, b, question, trial: t };
        let Some(r) = results.get(&key) else { continue };
        let js: Vec<Judgment> = serde_json::from_value(r["judgments"].clone()).unwrap_or_default();
        let reasons: Vec<String> = serde_json::from_value(r["reasoning"].clone()).unwrap_or_default();
        if let Some(v) = engine::judge::verdict(&js) {
            verdicts.push((t, v.a_total, v.b_total, outcome_name(v.outcome, &a_name, &b_name)));
        }
        for (i, j) in js.into_iter().enumerate() {
            judgments.push(JudgmentView {
                trial: t,
                repeat: j.repeat,
                order: if j.order == Order::AFirst { "A first".into() } else { "B first".into() },
                a: j.a,
                b: j.b,
                reasoning: reasons.get(i).cloned().unwrap_or_default(),
                item: key.to_string(),
            });
        }
    }
    let legacy = results.get(&Key::Legacy { a, b, question }).and_then(|r| {
        let l: LegacyJudgment = serde_json::from_value(r["legacy"].clone()).ok()?;
        Some((
            outcome_name(l.overall, &a_name, &b_name),
            engine::judge::LEGACY_ASPECTS
                .iter()
                .zip(l.aspects)
                .map(|(n, o)| (n.to_string(), outcome_name(o, &a_name, &b_name)))
                .collect(),
        ))
    });
    let alignment: Option<Alignment> = aligned.and_then(|r| serde_json::from_value(r["alignment"].clone()).ok());
    Ok(DrillView {
        question_id: question,
        question: q.question,
        level: q.level.or(q.category),
        a_judged: text("a", &a_raw),
        b_judged: text("b", &b_raw),
        a_raw,
        b_raw,
        a_name,
        b_name,
        alignment: alignment_name(alignment, e.settings.align),
        judgments,
        verdicts,
        legacy,
        job_id: e.view.job_id,
    })
}

/// The report's tables.
pub const TABLES: [&str; 6] = crate::model::EVAL_TABLES;

/// What judging (and aligning) one pair cost.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PairCost {
    pub calls: i64,
    pub cached: i64,
    pub tokens: i64,
    pub cost_usd: f64,
}

/// Per pair, the calls of its items (from the call log) and their tokens and cost.
pub async fn pair_costs(pool: &SqlitePool, e: &Stored) -> AppResult<HashMap<(i64, i64), PairCost>> {
    let Some(job) = e.view.job_id else { return Ok(HashMap::new()) };
    let rows = store::evaluations::item_costs(pool, job).await?;
    let mut out: HashMap<(i64, i64), PairCost> = HashMap::new();
    for (item, calls, cached, tokens, cost) in rows {
        if let Some(k) = Key::parse(&item) {
            let c = out.entry(k.pair()).or_default();
            c.calls += calls;
            c.cached += cached;
            c.tokens += tokens;
            c.cost_usd += cost;
        }
    }
    Ok(out)
}

/// The report's tables as CSV: `pairs`, `trials`, `aspects`, `levels`,
/// `judgments` (every judgment), `alignment` (per question).
pub fn table_csv(s: &Snapshot, table: &str) -> AppResult<String> {
    let r = &s.report;
    let mut w = csv::Writer::from_writer(Vec::new());
    // Shortest round-trip decimals: small p-values keep their digits.
    let f = crate::format::csv_number;
    let o = |v: Option<f64>| v.map_or(String::new(), f);
    let csv_err = |e: csv::Error| AppError::Invalid(e.to_string());
    match table {
        "pairs" => {
            w.write_record([
                "a",
                "b",
                "a_name",
                "b_name",
                "questions",
                "trials",
                "a_win_median",
                "a_win_q1",
                "a_win_q3",
                "tie_median",
                "tie_q1",
                "tie_q3",
                "b_win_median",
                "b_win_q1",
                "b_win_q3",
                "relative_median",
                "median_trial",
                "a_win",
                "a_win_ci_low",
                "a_win_ci_high",
                "tie",
                "tie_ci_low",
                "tie_ci_high",
                "b_win",
                "b_win_ci_low",
                "b_win_ci_high",
                "relative",
                "relative_ci_low",
                "relative_ci_high",
                "mean_total_difference",
                "wilcoxon_p",
                "wilcoxon_p_holm",
                "sign_p",
                "sign_p_holm",
                "legacy_a_win",
                "legacy_b_win",
                "legacy_relative",
                "as_is",
                "regenerated",
                "forced",
                "discarded",
                "alignment_success",
            ])
            .map_err(csv_err)?;
            for p in &r.pairs {
                let u = p.unbiased.as_ref();
                let bx = |g: fn(&eval::UnbiasedSummary) -> &engine::stats::BoxStats| {
                    u.map(g).map_or([String::new(), String::new(), String::new()], |b| [f(b.median), f(b.q1), f(b.q3)])
                };
                let (aw, tw, bw) = (bx(|u| &u.a_win), bx(|u| &u.tie), bx(|u| &u.b_win));
                let ci = |g: fn(&eval::UnbiasedSummary) -> (f64, (f64, f64))| {
                    u.map(g).map_or([String::new(), String::new(), String::new()], |(v, (l, h))| [f(v), f(l), f(h)])
                };
                let (ac, tc, bc, rc) = (
                    ci(|u| (u.headline.a_win, u.a_win_ci)),
                    ci(|u| (u.headline.tie, u.tie_ci)),
                    ci(|u| (u.headline.b_win, u.b_win_ci)),
                    ci(|u| (u.headline_relative, u.relative_ci)),
                );
                let test = |t: Option<&eval::PairedTest>| {
                    t.map_or([String::new(), String::new()], |t| [f(t.p_value), f(t.p_holm)])
                };
                let (wt, st) = (test(u.and_then(|u| u.wilcoxon.as_ref())), test(u.and_then(|u| u.sign.as_ref())));
                let l = p.legacy.as_ref();
                let mut row = vec![
                    p.a.to_string(),
                    p.b.to_string(),
                    p.a_name.clone(),
                    p.b_name.clone(),
                    p.questions.to_string(),
                    u.map_or(0, |u| u.trials.len()).to_string(),
                ];
                row.extend(aw);
                row.extend(tw);
                row.extend(bw);
                row.push(o(u.map(|u| u.relative.median)));
                row.push(u.map_or(String::new(), |u| u.median_trial.to_string()));
                row.extend(ac);
                row.extend(tc);
                row.extend(bc);
                row.extend(rc);
                row.push(o(u.map(|u| u.mean_difference)));
                row.extend(wt);
                row.extend(st);
                row.push(o(l.map(|l| l.overall.rates.a_win)));
                row.push(o(l.map(|l| l.overall.rates.b_win)));
                row.push(o(l.map(|l| l.overall.relative)));
                let al = &p.alignment;
                row.extend([al.as_is, al.regenerated, al.forced, al.discarded].map(|n| n.to_string()));
                row.push(o(al.success_rate));
                w.write_record(&row).map_err(csv_err)?;
            }
        }
        "trials" => {
            w.write_record(["a", "b", "trial", "a_win", "tie", "b_win", "relative"]).map_err(csv_err)?;
            for p in &r.pairs {
                for (t, rates) in p.unbiased.iter().flat_map(|u| u.trials.iter().enumerate()) {
                    w.write_record([
                        p.a.to_string(),
                        p.b.to_string(),
                        t.to_string(),
                        f(rates.a_win),
                        f(rates.tie),
                        f(rates.b_win),
                        f(rates.relative()),
                    ])
                    .map_err(csv_err)?;
                }
            }
        }
        "aspects" | "levels" => {
            w.write_record([
                "a",
                "b",
                "protocol",
                if table == "aspects" { "aspect" } else { "level" },
                "n",
                "a_win",
                "tie",
                "b_win",
                "relative",
            ])
            .map_err(csv_err)?;
            for p in &r.pairs {
                let mut rows: Vec<(&str, &eval::Breakdown)> = Vec::new();
                if let Some(u) = &p.unbiased {
                    rows.extend(
                        (if table == "aspects" { &u.aspects } else { &u.levels }).iter().map(|b| ("unbiased", b)),
                    );
                }
                if table == "aspects" {
                    if let Some(l) = &p.legacy {
                        rows.extend(l.aspects.iter().chain([&l.overall]).map(|b| ("legacy", b)));
                    }
                }
                for (protocol, b) in rows {
                    w.write_record([
                        p.a.to_string(),
                        p.b.to_string(),
                        protocol.to_string(),
                        b.label.clone(),
                        b.n.to_string(),
                        f(b.rates.a_win),
                        f(b.rates.tie),
                        f(b.rates.b_win),
                        f(b.relative),
                    ])
                    .map_err(csv_err)?;
                }
            }
        }
        "judgments" | "alignment" => {
            let pairs = s.pairs.as_slice();
            if table == "judgments" {
                let mut head = vec![
                    "a".to_string(),
                    "b".into(),
                    "question_id".into(),
                    "trial".into(),
                    "repeat".into(),
                    "order".into(),
                ];
                head.extend(engine::judge::ASPECTS.iter().map(|x| format!("a_{}", x.to_lowercase())));
                head.extend(engine::judge::ASPECTS.iter().map(|x| format!("b_{}", x.to_lowercase())));
                w.write_record(&head).map_err(csv_err)?;
                for p in pairs {
                    for q in &p.questions {
                        for (t, js) in &q.trials {
                            for j in js {
                                let mut row = vec![
                                    p.a.to_string(),
                                    p.b.to_string(),
                                    q.id.to_string(),
                                    t.to_string(),
                                    j.repeat.to_string(),
                                    if j.order == Order::AFirst { "AB".into() } else { "BA".into() },
                                ];
                                row.extend(j.a.iter().chain(&j.b).map(|s| s.to_string()));
                                w.write_record(&row).map_err(csv_err)?;
                            }
                        }
                    }
                }
            } else {
                w.write_record([
                    "a",
                    "b",
                    "question_id",
                    "level",
                    "a_words_generated",
                    "b_words_generated",
                    "a_words_judged",
                    "b_words_judged",
                    "alignment",
                    "legacy_winner",
                ])
                .map_err(csv_err)?;
                for p in pairs {
                    for q in &p.questions {
                        let how = q.alignment.map_or(String::new(), |a| match a {
                            Alignment::AsIs => "as_is".into(),
                            Alignment::Regenerated(n) => format!("regenerated_{n}"),
                            Alignment::Forced(n) => format!("forced_after_{n}"),
                            Alignment::Discarded => "discarded".into(),
                        });
                        let legacy = q.legacy.as_ref().map_or(String::new(), |l| format!("{:?}", l.overall));
                        w.write_record([
                            p.a.to_string(),
                            p.b.to_string(),
                            q.id.to_string(),
                            q.level.clone().unwrap_or_default(),
                            q.raw_words.0.to_string(),
                            q.raw_words.1.to_string(),
                            q.words.0.to_string(),
                            q.words.1.to_string(),
                            how,
                            legacy,
                        ])
                        .map_err(csv_err)?;
                    }
                }
            }
        }
        other => {
            return Err(AppError::NotFound(format!(
                "no table \"{other}\": pairs, trials, aspects, levels, judgments or alignment"
            )))
        }
    }
    String::from_utf8(w.into_inner().map_err(|e| AppError::Invalid(e.to_string()))?).map_err(|_| AppError::Internal)
}

/// The whole report as JSON: the evaluation, its settings and judge, and
/// every computed number.
pub fn report_json(s: &Snapshot) -> serde_json::Value {
    json!({ "evaluation": s.stored.view, "report": s.report })
}

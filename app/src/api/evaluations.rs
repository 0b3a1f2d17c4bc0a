//! Evaluations: starting (and the sanity check), the report and its drill-down.

use leptos::prelude::*;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use super::form::{number, whole};
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

#[server(output = crate::codec::Json)]
pub async fn list_evaluations(project_id: i64) -> Result<Vec<EvaluationView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    crate::ssr::evaluations::list(&call.state.pool, project_id).await
}

/// Reads the evaluation form's judging settings.
#[cfg(feature = "ssr")]
#[allow(clippy::too_many_arguments)]
fn eval_settings(
    protocol: &str,
    trials: &str,
    repeats: &str,
    tolerance: &str,
    adjustments: &str,
    align: bool,
    exchange: bool,
    judge: &str,
    position_bias: &str,
    length_bias: &str,
    noise: &str,
    judge_prompt: Option<&str>,
    judge_temperature: Option<&str>,
    legacy_aspects: Option<&str>,
    sequential: bool,
    jury: Option<&str>,
) -> Result<engine::judge::eval::Settings, AppError> {
    use engine::judge::eval::{JudgeKind, Protocol, Settings};
    let biases = engine::judge::simulated::Biases {
        position: number("position bias", position_bias, -5.0, 5.0)?,
        length_per_10_words: number("length bias", length_bias, -5.0, 5.0)?,
        noise: number("noise", noise, 0.0, 5.0)?,
        seed: 0,
    };
    let s = Settings {
        protocol: Protocol::parse(protocol).map_err(AppError::from)?,
        trials: whole("trials", trials, 1, 1000)? as u32,
        repeats: whole("repeats per order", repeats, 1, 20)? as u32,
        tolerance: whole("tolerance (words)", tolerance, 0, 10_000)? as usize,
        max_adjustments: whole("adjustments", adjustments, 0, 10)? as u32,
        align,
        exchange,
        judge: JudgeKind::parse(judge).map_err(AppError::from)?,
        biases,
        sanity: false,
        judge_prompt: match judge_prompt.filter(|p| !p.is_empty()) {
            Some(p) => engine::judge::scoring::JudgePrompt::parse(p).map_err(AppError::from)?,
            None => engine::judge::scoring::JudgePrompt::Paper,
        },
        judge_temperature: match judge_temperature.map(str::trim).filter(|t| !t.is_empty() && *t != "default") {
            Some(t) => Some(number("judge temperature", t, 0.0, 2.0)? as f32),
            None => None,
        },
        legacy_aspects: engine::judge::legacy::LegacyAspects::parse(legacy_aspects.unwrap_or(""))
            .map_err(AppError::from)?,
        sequential,
        // A simulated juror's unnamed biases are the form's; each its own seed.
        jury: engine::judge::jury::parse_jury(jury.unwrap_or(""), biases)
            .map_err(|e| AppError::Invalid(format!("jury: {}", e.0)))?,
    };
    s.validate().map_err(AppError::from)?;
    Ok(s)
}

/// Starts an evaluation (a job). `answer_sets`: comma-separated ids;
/// `pairs`: empty for every pair, else `A:B` comma-separated. With
/// `sanity_first`, each compared method never sanity-checked in the
/// project gets its sanity check too (a job of its own).
#[server(output = crate::codec::Json)]
#[allow(clippy::too_many_arguments)]
pub async fn start_evaluation(
    question_set_id: i64,
    answer_sets: String,
    pairs: String,
    protocol: String,
    trials: String,
    repeats: String,
    tolerance: String,
    adjustments: String,
    align: Option<String>,
    exchange: Option<String>,
    judge: String,
    position_bias: String,
    length_bias: String,
    noise: String,
    name: String,
    sanity_first: Option<String>,
    no_cache: Option<String>,
    #[server(default)] judge_prompt: Option<String>,
    #[server(default)] judge_temperature: Option<String>,
    #[server(default)] legacy_aspects: Option<String>,
    #[server(default)] sequential: Option<String>,
    #[server(default)] jury: Option<String>,
) -> Result<EvaluationView, AppError> {
    let call = Request::now()?;
    let form = EvaluationForm {
        question_set_id,
        answer_sets,
        pairs,
        protocol,
        trials,
        repeats,
        tolerance,
        adjustments,
        align,
        exchange,
        judge,
        position_bias,
        length_bias,
        noise,
        name,
        no_cache,
        judge_prompt,
        judge_temperature,
        legacy_aspects,
        sequential,
        jury,
    };
    let req = form.request(&call, Need::Edit).await?;
    let state = call.state.clone();
    let llm = state.llm();
    let (job, id) = crate::ssr::evaluations::create(&state.pool, &llm, &req).await?;
    state.jobs.spawn(state.pool.clone(), llm.clone(), job.id, false)?;
    if sanity_first.is_some() {
        for set in crate::ssr::evaluations::never_checked(&state.pool, &req.answer_sets).await? {
            let (job, _) = crate::ssr::evaluations::create_sanity(&state.pool, &llm, set, req.settings.clone()).await?;
            state.jobs.spawn(state.pool.clone(), llm.clone(), job.id, false)?;
        }
    }
    Ok(crate::ssr::evaluations::get(&state.pool, id).await?.view)
}

/// The price of what the Evaluations form would start, before it does
/// (the same fields as [`start_evaluation`]): calls, tokens and cost per
/// stage, with the sanity checks it would add.
#[server(output = crate::codec::Json)]
#[allow(clippy::too_many_arguments)]
pub async fn plan_evaluation(
    question_set_id: i64,
    answer_sets: String,
    pairs: String,
    protocol: String,
    trials: String,
    repeats: String,
    tolerance: String,
    adjustments: String,
    align: Option<String>,
    exchange: Option<String>,
    judge: String,
    position_bias: String,
    length_bias: String,
    noise: String,
    name: String,
    sanity_first: Option<String>,
    no_cache: Option<String>,
    #[server(default)] judge_prompt: Option<String>,
    #[server(default)] judge_temperature: Option<String>,
    #[server(default)] legacy_aspects: Option<String>,
    #[server(default)] sequential: Option<String>,
    #[server(default)] jury: Option<String>,
) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    let form = EvaluationForm {
        question_set_id,
        answer_sets,
        pairs,
        protocol,
        trials,
        repeats,
        tolerance,
        adjustments,
        align,
        exchange,
        judge,
        position_bias,
        length_bias,
        noise,
        name,
        no_cache,
        judge_prompt,
        judge_temperature,
        legacy_aspects,
        sequential,
        jury,
    };
    let req = form.request(&call, Need::Read).await?;
    let state = call.state.clone();
    let sanity = match sanity_first {
        Some(_) => crate::ssr::evaluations::never_checked(&state.pool, &req.answer_sets).await?,
        None => Vec::new(),
    };
    crate::ssr::evaluations::plan(&state.pool, &state.llm(), &req, &sanity).await
}

/// What a run can decide, simulated from a pilot evaluation's verdicts
///; nothing is sent to a model. The run is the Evaluations form's
/// (`question_set_id`'s questions × `trials`) or, from a report, the
/// `questions` typed there. Read access to the pilot (and the question set,
/// which must be the pilot's project's) is enough: it starts nothing.
#[server(output = crate::codec::Json)]
pub async fn decide_evaluation(
    pilot: i64,
    #[server(default)] question_set_id: Option<i64>,
    #[server(default)] questions: Option<String>,
    trials: String,
    half_width: String,
    #[server(default)] difference: Option<String>,
) -> Result<DecideView, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::Evaluation(pilot), Need::Read).await?;
    let questions = match (question_set_id, questions.as_deref().map(str::trim).filter(|q| !q.is_empty())) {
        (Some(set), _) => {
            call.require_in(project, [Obj::QuestionSet(set)]).await?;
            crate::ssr::store::questions::get_set(&call.state.pool, set).await?.questions.max(0) as usize
        }
        (None, Some(q)) => whole("questions", q, 1, 1_000_000)? as usize,
        (None, None) => return Err(AppError::Invalid("say how many questions the run would have".into())),
    };
    let trials = whole("trials", &trials, 1, 1000)? as usize;
    let half_width = number("half-width", &half_width, 0.0, 1.0)?;
    let difference = match difference.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) => Some(number("difference to detect", d, 0.0, 2.0)?),
        None => None,
    };
    crate::ssr::evaluations::decide(&call.state.pool, pilot, (questions, trials), half_width, difference).await
}

/// The Evaluations form's fields, as both of its server functions read them.
#[cfg(feature = "ssr")]
struct EvaluationForm {
    question_set_id: i64,
    answer_sets: String,
    pairs: String,
    protocol: String,
    trials: String,
    repeats: String,
    tolerance: String,
    adjustments: String,
    align: Option<String>,
    exchange: Option<String>,
    judge: String,
    position_bias: String,
    length_bias: String,
    noise: String,
    name: String,
    no_cache: Option<String>,
    judge_prompt: Option<String>,
    judge_temperature: Option<String>,
    legacy_aspects: Option<String>,
    sequential: Option<String>,
    jury: Option<String>,
}

#[cfg(feature = "ssr")]
impl EvaluationForm {
    /// The request the form makes, its sets checked for the caller (`need`
    /// on the question set and each answer set, of one project).
    async fn request(self, call: &Request, need: Need) -> Result<crate::ssr::evaluations::EvalRequest, AppError> {
        let project = call.require(Obj::QuestionSet(self.question_set_id), need).await?;
        let ids = |text: &str, what: &str| -> Result<Vec<i64>, AppError> {
            text.split([',', ':'])
                .filter(|t| !t.trim().is_empty())
                .map(|t| {
                    t.trim()
                        .parse::<i64>()
                        .map_err(|_| AppError::Invalid(format!("{what}: \"{t}\" is not an answer set id")))
                })
                .collect()
        };
        let sets = ids(&self.answer_sets, "answer sets")?;
        call.require_in(project, sets.iter().map(|s| Obj::AnswerSet(*s))).await?;
        let mut chosen = Vec::new();
        for pair in self.pairs.split(',').filter(|p| !p.trim().is_empty()) {
            match ids(pair, "pairs")?.as_slice() {
                [a, b] => chosen.push((*a, *b)),
                _ => return Err(AppError::Invalid(format!("pairs: \"{pair}\" is not A:B"))),
            }
        }
        let settings = eval_settings(
            &self.protocol,
            &self.trials,
            &self.repeats,
            &self.tolerance,
            &self.adjustments,
            self.align.is_some(),
            self.exchange.is_some(),
            &self.judge,
            &self.position_bias,
            &self.length_bias,
            &self.noise,
            self.judge_prompt.as_deref(),
            self.judge_temperature.as_deref(),
            self.legacy_aspects.as_deref(),
            self.sequential.is_some(),
            self.jury.as_deref(),
        )?;
        Ok(crate::ssr::evaluations::EvalRequest {
            question_set_id: self.question_set_id,
            answer_sets: sets,
            pairs: chosen,
            settings,
            name: Some(self.name).filter(|n| !n.trim().is_empty()),
            no_cache: self.no_cache.is_some(),
        })
    }
}

/// One click: a sanity check of an answer set's method with the paper's
/// defaults and the chosen judge.
#[server(output = crate::codec::Json)]
pub async fn start_sanity(answer_set_id: i64, judge: String) -> Result<EvaluationView, AppError> {
    let call = Request::now()?;
    call.require(Obj::AnswerSet(answer_set_id), Need::Edit).await?;
    let settings = engine::judge::eval::Settings {
        judge: engine::judge::eval::JudgeKind::parse(&judge).map_err(AppError::from)?,
        ..Default::default()
    };
    let state = call.state.clone();
    let llm = state.llm();
    let (job, id) = crate::ssr::evaluations::create_sanity(&state.pool, &llm, answer_set_id, settings).await?;
    state.jobs.spawn(state.pool.clone(), llm, job.id, false)?;
    Ok(crate::ssr::evaluations::get(&state.pool, id).await?.view)
}

#[server(output = crate::codec::Json)]
pub async fn delete_evaluation(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Evaluation(id), Need::Edit).await?;
    crate::ssr::evaluations::delete(&call.state.pool, id).await
}

#[server(output = crate::codec::Json)]
pub async fn get_evaluation_report(id: i64) -> Result<EvaluationReportView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Evaluation(id), Need::Read).await?;
    let mut v = crate::ssr::evaluations::report_view(&call.state.pool, id, false).await?;
    // The project's readers may see its other evaluations: the length
    // alignment of the same answers beside the regression.
    crate::ssr::evaluations::compare_with_aligned(&call.state.pool, &mut v).await;
    Ok(v)
}

#[server(output = crate::codec::Json)]
pub async fn get_drill_questions(id: i64, a: i64, b: i64, page: i64) -> Result<DrillQuestionsPage, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::Evaluation(id), Need::Read).await?;
    call.require_in(project, [Obj::AnswerSet(a), Obj::AnswerSet(b)]).await?;
    crate::ssr::evaluations::drill_questions(&call.state.pool, id, a, b, page).await
}

#[server(output = crate::codec::Json)]
pub async fn get_drill(id: i64, a: i64, b: i64, question: i64) -> Result<DrillView, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::Evaluation(id), Need::Read).await?;
    call.require_in(project, [Obj::AnswerSet(a), Obj::AnswerSet(b), Obj::Question(question)]).await?;
    crate::ssr::evaluations::drill(&call.state.pool, id, a, b, question).await
}

//! Evaluations: starting (and the sanity check), the report and its drill-down.

use leptos::prelude::*;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use super::form::{number, whole};
use crate::model::*;
use types::requests::EvaluationRequest;

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

/// Starts an evaluation (a job). `answer_sets`: comma-separated ids;
/// `pairs`: empty for every pair, else `A:B` comma-separated; `req`: how it
/// judges (the form's fields `req[protocol]`, `req[trials]`, …). With
/// `sanity_first`, each compared method never sanity-checked in the
/// project gets its sanity check too (a job of its own).
#[server(output = crate::codec::Json)]
pub async fn start_evaluation(
    question_set_id: i64,
    answer_sets: String,
    pairs: String,
    name: String,
    sanity_first: Option<String>,
    no_cache: Option<String>,
    req: EvaluationRequest,
) -> Result<EvaluationView, AppError> {
    let call = Request::now()?;
    let form = EvaluationForm { question_set_id, answer_sets, pairs, name, no_cache, req };
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
pub async fn plan_evaluation(
    question_set_id: i64,
    answer_sets: String,
    pairs: String,
    name: String,
    sanity_first: Option<String>,
    no_cache: Option<String>,
    req: EvaluationRequest,
) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    let form = EvaluationForm { question_set_id, answer_sets, pairs, name, no_cache, req };
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
/// (`question_set_id`'s questions × `req[trials]`) or, from a report, the
/// `questions` typed there. Read access to the pilot (and the question set,
/// which must be the pilot's project's) is enough: it starts nothing.
#[server(output = crate::codec::Json)]
pub async fn decide_evaluation(
    pilot: i64,
    #[server(default)] question_set_id: Option<i64>,
    #[server(default)] questions: Option<String>,
    #[server(default)] req: EvaluationRequest,
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
    req.validate()?;
    let trials = req.trials as usize;
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
    name: String,
    no_cache: Option<String>,
    req: EvaluationRequest,
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
        Ok(crate::ssr::evaluations::EvalRequest {
            question_set_id: self.question_set_id,
            answer_sets: sets,
            pairs: chosen,
            settings: engine::judge::eval::Settings::from_request(&self.req)?,
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

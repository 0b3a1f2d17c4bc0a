//! Answer sets: the built-in methods, answering (a job), the cost table.

use leptos::prelude::*;

use crate::error::AppError;
use types::requests::AnswersRequest;

use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::store;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// A built-in RAG method for the Answers page.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MethodInfo {
    pub name: String,
    pub about: String,
    /// Default parameters as pretty JSON.
    pub defaults: String,
    /// What its parameters mean, where the form explains them (the HTTP
    /// method and its presets): `(field, meaning)`.
    pub fields: Vec<(String, String)>,
}

#[server(output = crate::codec::Json)]
pub async fn answer_methods() -> Result<Vec<MethodInfo>, AppError> {
    Ok(engine::rag::method::METHODS
        .iter()
        .map(|(name, about)| MethodInfo {
            name: name.to_string(),
            about: about.to_string(),
            defaults: serde_json::to_string_pretty(&engine::rag::method::defaults(name).unwrap_or_default())
                .unwrap_or_default(),
            fields: engine::rag::presets::fields(name).iter().map(|(f, m)| (f.to_string(), m.to_string())).collect(),
        })
        .collect())
}

#[server(output = crate::codec::Json)]
pub async fn list_answer_sets(project_id: i64) -> Result<Vec<AnswerSetView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::answers::list_sets(&call.state.pool, project_id).await
}

/// The cost table (seed 000 Table II) of a project's answer sets.
#[server(output = crate::codec::Json)]
pub async fn get_cost_table(project_id: i64) -> Result<Vec<CostRow>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::answers::cost_table(&call.state.pool, project_id).await
}

/// A page of an answer set's answers (without their contexts), each
/// beside the same question's answer in `compare` — a set over the same
/// question set. `search`: only questions containing it.
#[server(output = crate::codec::Json)]
pub async fn get_answer_page(
    answer_set_id: i64,
    compare: Option<i64>,
    page: i64,
    search: Option<String>,
) -> Result<AnswerPairsPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::AnswerSet(answer_set_id), Need::Read).await?;
    if let Some(b) = compare {
        call.require(Obj::AnswerSet(b), Need::Read).await?;
        let (sa, sb) = (
            store::answers::get_set(&call.state.pool, answer_set_id).await?,
            store::answers::get_set(&call.state.pool, b).await?,
        );
        if sa.question_set_id != sb.question_set_id {
            return Err(AppError::Invalid(format!(
                "answer sets {answer_set_id} and {b} answer different question sets (#{} and #{})",
                sa.question_set_id, sb.question_set_id
            )));
        }
    }
    store::answers::answer_page(&call.state.pool, answer_set_id, compare, page, search.as_deref().unwrap_or("")).await
}

/// One answer whole: its text, the context it was given, its accounting.
#[server(output = crate::codec::Json)]
pub async fn get_answer(answer_set_id: i64, question_id: i64) -> Result<AnswerView, AppError> {
    let call = Request::now()?;
    call.require(Obj::AnswerSet(answer_set_id), Need::Read).await?;
    store::answers::list_answers(&call.state.pool, answer_set_id, Some(question_id)).await?.pop().ok_or_else(|| {
        AppError::NotFound(format!("answer set {answer_set_id} has no answer to question {question_id}"))
    })
}

#[server(output = crate::codec::Json)]
pub async fn delete_answer_set(answer_set_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::AnswerSet(answer_set_id), Need::Edit).await?;
    store::answers::delete_set(&call.state.pool, answer_set_id).await
}

/// The price of what the Answers form would start, before it does (the
/// form's fields as [`start_answers`] reads them; the name and the cache
/// box change nothing in it).
#[server(output = crate::codec::Json)]
pub async fn plan_answers(question_set_id: i64, req: AnswersRequest) -> Result<crate::model::RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(question_set_id), Need::Read).await?;
    crate::ssr::answers::plan(&call.state.pool, &call.state.llm(), question_set_id, &req).await
}

/// The form's fields as a job: a blank name is none.
#[cfg(feature = "ssr")]
fn answers_job(
    question_set_id: i64,
    name: String,
    no_cache: Option<String>,
    request: AnswersRequest,
) -> crate::ssr::answers::AnswersJob {
    let name = Some(name).filter(|n| !n.trim().is_empty());
    crate::ssr::answers::AnswersJob { question_set_id, request, name, no_cache: no_cache.is_some() }
}

/// Starts answering a question set with a built-in method (a job): the
/// request's `req[name]` (the method), `req[params]` (the text of a JSON object;
/// missing parameters take the method's defaults) and `req[target_words]`
/// (blank for none).
#[server(output = crate::codec::Json)]
pub async fn start_answers(
    question_set_id: i64,
    name: String,
    no_cache: Option<String>,
    req: AnswersRequest,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(question_set_id), Need::Edit).await?;
    let job = answers_job(question_set_id, name, no_cache, req);
    let state = call.state.clone();
    let (job, _) = crate::ssr::answers::create(&state.pool, &job, &state.llm().minilm_dir).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

//! Question sets: listing, editing, provenance, generation (graph, summary, hierarchical), diagnostics (mentions, relevance) and the category hierarchy.

use leptos::prelude::*;

use crate::error::AppError;

use crate::model::*;
#[cfg(feature = "ssr")]
use types::requests::QuestionsRequest;
use types::requests::{GraphQuestionsRequest, HierarchicalQuestionsRequest, SummaryQuestionsRequest};

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::store;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

#[server(output = crate::codec::Json)]
pub async fn list_question_sets(project_id: i64) -> Result<Vec<QuestionSetView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let pool = &call.state.pool;
    store::projects::get_project(pool, project_id).await?;
    store::questions::list_sets(pool, project_id).await
}

/// A page of a set's questions: those of `level` (a level or category)
/// whose text contains `search`, when given.
#[server(output = crate::codec::Json)]
pub async fn list_set_questions(
    set_id: i64,
    page: i64,
    level: Option<String>,
    search: Option<String>,
) -> Result<QuestionsPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Read).await?;
    store::questions::question_page(
        &call.state.pool,
        set_id,
        page,
        QUESTIONS_PER_PAGE,
        level.as_deref().unwrap_or(""),
        search.as_deref().unwrap_or(""),
    )
    .await
}

/// A question's sampled structure in the current graph and its source texts.
#[server(output = crate::codec::Json)]
pub async fn get_question_provenance(question_id: i64) -> Result<QuestionProvenance, AppError> {
    let call = Request::now()?;
    call.require(Obj::Question(question_id), Need::Read).await?;
    let pool = &call.state.pool;
    let (project, question) = store::questions::get_question(pool, question_id).await?;
    let (nodes, missing) = store::graph::nodes_by_key(pool, project, &question.nodes).await?;
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    // The passages the question's LLM was given when recorded; else the
    // first of its sources.
    let shown = question.context_chunk_ids.clone().unwrap_or_else(|| question.source_chunk_ids.clone());
    let sources = store::graph::sources(pool, &shown, &names, 30).await?;
    Ok(QuestionProvenance { question, nodes, missing, sources })
}

/// The price of what a questions form would start, before it does:
/// `req` estimated over the project's stored chunks (the caller's rights
/// on the project checked before).
#[cfg(feature = "ssr")]
async fn questions_price(call: &Request, project_id: i64, req: QuestionsRequest) -> Result<RunPlan, AppError> {
    let req = req.checked()?;
    let (corpus, chunk_tokens) = crate::ssr::price::corpus(&call.state.pool, project_id).await?;
    let label = format!("questions: {}", req.kind());
    let n = engine::experiment::planned(&req) as i64;
    let e = engine::experiment::questions_estimate(&req, label, &corpus, chunk_tokens);
    let llm = call.state.llm();
    Ok(crate::ssr::price::timed(&call.state.pool, &llm, crate::ssr::price::one_stage(&llm, e, n, false), false).await)
}

/// Starts a questions job for `req` (the caller's rights on the project
/// checked before); returns at once.
#[cfg(feature = "ssr")]
async fn start_questions(
    call: &Request,
    project_id: i64,
    req: QuestionsRequest,
    no_cache: bool,
) -> Result<JobView, AppError> {
    let state = call.state.clone();
    let (job, _) = crate::ssr::questions::run::create(&state.pool, project_id, req.checked()?, None, no_cache).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

/// The price of what the graph questions form would start.
#[server(output = crate::codec::Json)]
pub async fn plan_graph_questions(project_id: i64, req: GraphQuestionsRequest) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    questions_price(&call, project_id, QuestionsRequest::Graph(req)).await
}

/// The price of what the summary questions form would start.
#[server(output = crate::codec::Json)]
pub async fn plan_summary_questions(project_id: i64, req: SummaryQuestionsRequest) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    questions_price(&call, project_id, QuestionsRequest::Summary(req)).await
}

/// The price of what the hierarchical questions form would start.
#[server(output = crate::codec::Json)]
pub async fn plan_hierarchical_questions(
    project_id: i64,
    req: HierarchicalQuestionsRequest,
) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    questions_price(&call, project_id, QuestionsRequest::Hierarchical(req)).await
}

/// Starts generating graph-text-grounded questions (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_graph_questions(
    project_id: i64,
    no_cache: Option<String>,
    req: GraphQuestionsRequest,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    start_questions(&call, project_id, QuestionsRequest::Graph(req), no_cache.is_some()).await
}

/// Starts generating the summary-based baseline set (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_summary_questions(
    project_id: i64,
    no_cache: Option<String>,
    req: SummaryQuestionsRequest,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    start_questions(&call, project_id, QuestionsRequest::Summary(req), no_cache.is_some()).await
}

/// Starts writing questions with reference answers in hierarchical
/// categories (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_hierarchical_questions(
    project_id: i64,
    no_cache: Option<String>,
    req: HierarchicalQuestionsRequest,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    start_questions(&call, project_id, QuestionsRequest::Hierarchical(req), no_cache.is_some()).await
}

#[server(output = crate::codec::Json)]
pub async fn edit_question(question_id: i64, text: String) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Question(question_id), Need::Edit).await?;
    store::questions::update_question(&call.state.pool, question_id, &text).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_question(question_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Question(question_id), Need::Edit).await?;
    store::questions::delete_question(&call.state.pool, question_id).await.map(|_| ())
}

#[server(output = crate::codec::Json)]
pub async fn add_question(
    set_id: i64,
    question: String,
    level: String,
    reference_answer: String,
) -> Result<i64, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Edit).await?;
    store::questions::add_question(&call.state.pool, set_id, &question, Some(&level), Some(&reference_answer)).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_question_set(set_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Edit).await?;
    store::questions::delete_set(&call.state.pool, set_id).await
}

/// The entities a set's questions mention: `entity_source` `graph` (the graph's
/// names matched) or `llm` (listed by the LLM; `None` until a job has).
#[server(output = crate::codec::Json)]
pub async fn question_set_entities(
    set_id: i64,
    entity_source: types::EntitySource,
) -> Result<Option<EntityStats>, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Read).await?;
    Ok(crate::ssr::questions::diagnostics::set_entities(&call.state.pool, set_id, entity_source)
        .await?
        .map(|e| e.stats()))
}

/// Starts having the LLM list the entities each question of a set names (a job).
#[server(output = crate::codec::Json)]
pub async fn start_mentions(set_id: i64) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Edit).await?;
    let state = call.state.clone();
    let job = crate::ssr::questions::run::create_mentions(&state.pool, set_id, false).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

/// The latest relevance scores of a set, if it was scored.
#[server(output = crate::codec::Json)]
pub async fn question_set_relevance(set_id: i64) -> Result<Option<RelevanceStats>, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Read).await?;
    let pool = &call.state.pool;
    let set = store::questions::get_set(pool, set_id).await?;
    match crate::ssr::questions::diagnostics::set_relevance(pool, set_id).await? {
        Some((job, scores)) => Ok(Some(
            crate::ssr::questions::diagnostics::relevance_stats(pool, set_id, job, &scores, set.questions).await?,
        )),
        None => Ok(None),
    }
}

/// Starts scoring how relevant a retriever's context (FastGraphRAG by default, as seed 000 Fig. 10) is to a set's questions (a job).
#[server(output = crate::codec::Json)]
pub async fn start_relevance(
    set_id: i64,
    k: u32,
    #[server(default)] retriever: Option<String>,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Edit).await?;
    let state = call.state.clone();
    let retriever = retriever.filter(|r| !r.is_empty());
    let retriever = retriever.as_deref().unwrap_or(engine::questions::relevance::DEFAULT_RETRIEVER);
    let job = crate::ssr::questions::run::create_relevance(&state.pool, set_id, k as usize, retriever, false).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

/// The project's question-category hierarchy as JSON, and whether it is the
/// project's own (otherwise the shipped default).
#[server(output = crate::codec::Json)]
pub async fn get_question_hierarchy(project_id: i64) -> Result<(String, bool), AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let pool = &call.state.pool;
    Ok(match store::questions::project_hierarchy(pool, project_id).await? {
        Some(h) => (serde_json::to_string_pretty(&h).unwrap_or_default(), true),
        None => (
            serde_json::to_string_pretty(&engine::questions::hierarchy::default_hierarchy()).unwrap_or_default(),
            false,
        ),
    })
}

/// Saves the project's own hierarchy (checked), or with `reset`, goes back to the default.
#[server(output = crate::codec::Json)]
pub async fn save_question_hierarchy(project_id: i64, json: String, reset: Option<String>) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let pool = &call.state.pool;
    let value = if reset.is_some() { None } else { Some(json.as_str()) };
    store::questions::set_project_hierarchy(pool, project_id, value).await
}

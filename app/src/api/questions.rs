//! Question sets: listing, editing, provenance, generation (graph, summary, hierarchical), diagnostics (mentions, relevance) and the category hierarchy.

use leptos::prelude::*;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use super::form::whole;
use crate::model::*;

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

/// The graph questions form's fields as settings.
#[cfg(feature = "ssr")]
fn graph_question_settings(
    node: &str,
    edge: &str,
    subgraph: &str,
    min_hops: &str,
    seed: &str,
    degree_weighted: bool,
) -> Result<engine::questions::graph::GraphQuestionSettings, AppError> {
    let settings = engine::questions::graph::GraphQuestionSettings {
        node: whole("node questions", node, 0, 10_000)? as usize,
        edge: whole("edge questions", edge, 0, 10_000)? as usize,
        subgraph: whole("subgraph questions", subgraph, 0, 10_000)? as usize,
        min_hops: whole("minimum hops", min_hops, 1, 100_000)? as usize,
        degree_weighted,
        seed: whole("seed", seed, 0, u64::MAX)?,
    };
    if settings.node + settings.edge + settings.subgraph == 0 {
        return Err(AppError::Invalid("ask for at least one question".into()));
    }
    Ok(settings)
}

/// The price of what a questions form would start, before it does:
/// `section` estimated over the project's stored chunks (the caller's
/// rights on the project checked before).
#[cfg(feature = "ssr")]
async fn questions_price(
    call: &Request,
    project_id: i64,
    section: engine::experiment::QuestionsSection,
) -> Result<RunPlan, AppError> {
    let (corpus, chunk_tokens) = crate::ssr::price::corpus(&call.state.pool, project_id).await?;
    let label = format!("questions: {}", section.kind());
    let n = section.planned() as i64;
    let e = engine::experiment::questions_estimate(&section, label, &corpus, chunk_tokens);
    let llm = call.state.llm();
    Ok(crate::ssr::price::timed(&call.state.pool, &llm, crate::ssr::price::one_stage(&llm, e, n, false), false).await)
}

/// The price of what the graph questions form would start.
#[server(output = crate::codec::Json)]
#[allow(clippy::too_many_arguments)]
pub async fn plan_graph_questions(
    project_id: i64,
    node: String,
    edge: String,
    subgraph: String,
    min_hops: String,
    seed: String,
    degree_weighted: Option<String>,
    no_cache: Option<String>,
) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let _ = no_cache;
    let s = graph_question_settings(&node, &edge, &subgraph, &min_hops, &seed, degree_weighted.is_some())?;
    let section = engine::experiment::QuestionsSection::Graph {
        node: s.node,
        edge: s.edge,
        subgraph: s.subgraph,
        min_hops: s.min_hops,
        degree_weighted: s.degree_weighted,
        seed: s.seed,
    };
    questions_price(&call, project_id, section).await
}

/// The price of what the summary questions form would start.
#[server(output = crate::codec::Json)]
#[allow(clippy::too_many_arguments)]
pub async fn plan_summary_questions(
    project_id: i64,
    users: String,
    tasks: String,
    per_task: String,
    head: String,
    tail: String,
    replicate_lightrag: Option<String>,
    no_cache: Option<String>,
    #[server(default)] count: Option<String>,
) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let _ = no_cache;
    let s = summary_settings(&users, &tasks, &per_task, &head, &tail, replicate_lightrag.is_some(), count.as_deref())?;
    let section = engine::experiment::QuestionsSection::Summary {
        users: s.users,
        tasks: s.tasks,
        per_task: s.questions,
        head: s.head,
        tail: s.tail,
        replicate_lightrag: s.replicate_lightrag,
        count: s.count,
    };
    questions_price(&call, project_id, section).await
}

/// The price of what the hierarchical questions form would start.
#[server(output = crate::codec::Json)]
#[allow(clippy::too_many_arguments)]
pub async fn plan_hierarchical_questions(
    project_id: i64,
    per_category: String,
    levels: String,
    dimensions: String,
    factorial: String,
    seed: String,
    adherence_check: Option<String>,
    no_cache: Option<String>,
) -> Result<RunPlan, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let _ = no_cache;
    let s = hierarchical_settings(&per_category, &levels, &dimensions, &factorial, &seed, adherence_check.is_some())?;
    let section = engine::experiment::QuestionsSection::Hierarchical {
        dimensions: s.dimensions,
        levels: s.levels,
        per_category: Some(s.per_category),
        factorial: s.factorial_per_cell,
        adherence_check: s.adherence_check,
        seed: s.seed,
    };
    questions_price(&call, project_id, section).await
}

/// Starts generating graph-text-grounded questions (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_graph_questions(
    project_id: i64,
    node: String,
    edge: String,
    subgraph: String,
    min_hops: String,
    seed: String,
    degree_weighted: Option<String>,
    no_cache: Option<String>,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let settings = graph_question_settings(&node, &edge, &subgraph, &min_hops, &seed, degree_weighted.is_some())?;
    let state = call.state.clone();
    let (job, _) =
        crate::ssr::questions::run::create_graph_questions(&state.pool, project_id, &settings, no_cache.is_some())
            .await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
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

/// The summary questions form's fields as settings.
#[cfg(feature = "ssr")]
fn summary_settings(
    users: &str,
    tasks: &str,
    per_task: &str,
    head: &str,
    tail: &str,
    replicate_lightrag: bool,
    count: Option<&str>,
) -> Result<engine::questions::summary::SummarySettings, AppError> {
    let count = match count.map(str::trim).filter(|c| !c.is_empty()) {
        Some(c) => Some(whole("exact number of questions", c, 1, 2000)? as usize),
        None => None,
    };
    Ok(engine::questions::summary::SummarySettings {
        users: whole("users", users, 1, 20)? as usize,
        tasks: whole("tasks", tasks, 1, 20)? as usize,
        questions: whole("questions per task", per_task, 1, 20)? as usize,
        head: whole("head tokens", head, 0, 100_000)? as usize,
        tail: whole("tail tokens", tail, 0, 100_000)? as usize,
        replicate_lightrag,
        count,
    })
}

/// Starts generating the summary-based baseline set (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_summary_questions(
    project_id: i64,
    users: String,
    tasks: String,
    per_task: String,
    head: String,
    tail: String,
    replicate_lightrag: Option<String>,
    no_cache: Option<String>,
    #[server(default)] count: Option<String>,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let settings =
        summary_settings(&users, &tasks, &per_task, &head, &tail, replicate_lightrag.is_some(), count.as_deref())?;
    let state = call.state.clone();
    let (job, _) =
        crate::ssr::questions::run::create_summary_questions(&state.pool, project_id, &settings, no_cache.is_some())
            .await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

/// The hierarchical questions form's fields as settings.
#[cfg(feature = "ssr")]
fn hierarchical_settings(
    per_category: &str,
    levels: &str,
    dimensions: &str,
    factorial: &str,
    seed: &str,
    adherence_check: bool,
) -> Result<engine::questions::hierarchy::HierarchicalSettings, AppError> {
    let levels = levels
        .split(',')
        .map(|l| l.trim().parse::<usize>().map_err(|_| AppError::Invalid(format!("levels: \"{l}\" is not a number"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(engine::questions::hierarchy::HierarchicalSettings {
        dimensions: dimensions.split(',').map(|d| d.trim().to_uppercase()).filter(|d| !d.is_empty()).collect(),
        levels,
        per_category: whole("questions per category", per_category, 0, 1_000)? as usize,
        factorial_per_cell: whole("questions per factorial cell", factorial, 0, 10_000)? as usize,
        adherence_check,
        seed: whole("seed", seed, 0, u64::MAX)?,
    })
}

/// Starts writing questions with reference answers in hierarchical
/// categories (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_hierarchical_questions(
    project_id: i64,
    per_category: String,
    levels: String,
    dimensions: String,
    factorial: String,
    seed: String,
    adherence_check: Option<String>,
    no_cache: Option<String>,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let settings =
        hierarchical_settings(&per_category, &levels, &dimensions, &factorial, &seed, adherence_check.is_some())?;
    let state = call.state.clone();
    let (job, _) = crate::ssr::questions::run::create_hierarchical_questions(
        &state.pool,
        project_id,
        &settings,
        None,
        no_cache.is_some(),
    )
    .await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

/// The entities a set's questions mention: `source` `graph` (the graph's
/// names matched) or `llm` (listed by the LLM; `None` until a job has).
#[server(output = crate::codec::Json)]
pub async fn question_set_entities(set_id: i64, source: String) -> Result<Option<EntityStats>, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Read).await?;
    let source = crate::ssr::questions::diagnostics::EntitySource::parse(&source)?;
    Ok(crate::ssr::questions::diagnostics::set_entities(&call.state.pool, set_id, source).await?.map(|e| e.stats()))
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

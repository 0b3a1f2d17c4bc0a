//! Server functions: the browser's way into Assay. Each one checks its
//! input, calls the store or the engine, and maps errors; none holds logic
//! of its own.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::state::app_state;
#[cfg(feature = "ssr")]
use crate::ssr::store;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// A whole number from a form field, within `min..=max`, or the reason it is not.
#[cfg(feature = "ssr")]
fn whole(field: &str, value: &str, min: u64, max: u64) -> Result<u64, AppError> {
    value.trim().parse::<u64>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| {
        let range = if max == u64::MAX { format!("of at least {min}") } else { format!("from {min} to {max}") };
        AppError::Invalid(format!("{field} must be a whole number {range}, not \"{value}\""))
    })
}

/// The projects the caller may see: all for the owner, a collaborator's own.
#[server(output = crate::codec::Json)]
pub async fn list_projects() -> Result<Vec<ProjectSummary>, AppError> {
    let call = Request::now()?;
    let pool = &call.state.pool;
    let mut all = store::list_projects(pool).await?;
    if !call.caller.owner {
        let mine = store::access::member_projects(pool, call.caller.user_id).await?;
        all.retain(|p| mine.contains(&p.id));
    }
    Ok(all)
}

#[server(output = crate::codec::Json)]
pub async fn get_project(id: i64) -> Result<ProjectView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(id), Need::Read).await?;
    store::get_project(&call.state.pool, id).await
}

#[server(output = crate::codec::Json)]
pub async fn create_project(name: String) -> Result<ProjectSummary, AppError> {
    let call = Request::now()?;
    call.require_owner("create projects")?;
    let settings = engine::chunk::ChunkSettings::default();
    Ok(store::create_project(&call.state.pool, &name, &settings).await?.summary)
}

#[server(output = crate::codec::Json)]
pub async fn rename_project(id: i64, name: String) -> Result<ProjectSummary, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(id), Need::Edit).await?;
    Ok(store::rename_project(&call.state.pool, id, &name).await?.summary)
}

#[server(output = crate::codec::Json)]
pub async fn delete_project(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require_owner("delete projects")?;
    store::delete_project(&call.state.pool, id).await
}

/// Creates a project holding the sample corpus, named "Saltmere sample"
/// (or "Saltmere sample 2", … if that name is taken).
#[server(output = crate::codec::Json)]
pub async fn create_sample_project() -> Result<ProjectSummary, AppError> {
    let call = Request::now()?;
    call.require_owner("create projects")?;
    let state = call.state.clone();
    let settings = engine::chunk::ChunkSettings::default();
    let mut n = 1;
    let project = loop {
        let name = if n == 1 { "Saltmere sample".to_string() } else { format!("Saltmere sample {n}") };
        match store::create_project(&state.pool, &name, &settings).await {
            Err(AppError::Conflict(_)) if n < 100 => n += 1,
            other => break other?,
        }
    };
    add_sample(&state, project.summary.id).await?;
    Ok(store::get_project(&state.pool, project.summary.id).await?.summary)
}

/// Adds the sample corpus to an existing project.
#[server(output = crate::codec::Json)]
pub async fn load_sample(project_id: i64) -> Result<UploadReport, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    add_sample(&call.state.clone(), project_id).await
}

#[cfg(feature = "ssr")]
async fn add_sample(state: &crate::ssr::state::AppState, project_id: i64) -> Result<UploadReport, AppError> {
    let files: Vec<(String, Vec<u8>)> =
        engine::sample::sample_files().map(|(n, b)| (n.to_string(), b.to_vec())).collect();
    store::add_files(&state.pool, project_id, &files, &state.config.import).await
}

#[server(output = crate::codec::Json)]
pub async fn get_upload_limits() -> Result<UploadLimits, AppError> {
    Ok(app_state()?.config.upload_limits())
}

#[server(output = crate::codec::Json)]
pub async fn list_documents(project_id: i64) -> Result<Vec<DocumentSummary>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::list_documents(&call.state.pool, project_id).await
}

#[server(output = crate::codec::Json)]
pub async fn get_document(id: i64) -> Result<DocumentView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Document(id), Need::Read).await?;
    store::get_document(&call.state.pool, id).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_document(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Document(id), Need::Edit).await?;
    store::delete_document(&call.state.pool, id).await.map(|_| ())
}

#[server(output = crate::codec::Json)]
pub async fn set_chunking(
    project_id: i64,
    chunk_tokens: String,
    chunk_overlap: String,
    tokenizer: String,
) -> Result<ProjectView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let number = |field: &str, value: &str| {
        value
            .trim()
            .parse::<usize>()
            .map_err(|_| AppError::Invalid(format!("{field} must be a whole number, not \"{value}\"")))
    };
    let settings = engine::chunk::ChunkSettings {
        chunk_tokens: number("chunk size", &chunk_tokens)?,
        overlap_tokens: number("overlap", &chunk_overlap)?,
        tokenizer: engine::chunk::Tokenizer::parse(&tokenizer)
            .ok_or_else(|| AppError::Invalid(format!("unknown tokenizer \"{tokenizer}\"")))?,
    };
    store::set_chunk_settings(&call.state.pool, project_id, settings).await
}

#[cfg(feature = "ssr")]
fn llm_info(llm: &engine::llm::settings::LlmSettings) -> LlmInfo {
    use engine::llm::settings::ProviderKind;
    let offline = llm.provider == ProviderKind::Offline;
    LlmInfo {
        provider: llm.provider.name().to_string(),
        label: llm.describe(),
        base_url: llm.base_url.clone(),
        model: llm.model.clone(),
        concurrency: llm.concurrency as i64,
        timeout_secs: llm.timeout.as_secs() as i64,
        key_set: llm.api_key.is_some(),
        price: if offline { None } else { llm.prices.0.get(&llm.model).map(|p| (p.input_per_m, p.output_per_m)) },
        allow_private_urls: llm.allow_private_urls,
        context: llm.context,
    }
}

#[server(output = crate::codec::Json)]
pub async fn get_llm_info() -> Result<LlmInfo, AppError> {
    let call = Request::now()?;
    let info = llm_info(&call.state.llm());
    if call.caller.owner {
        return Ok(info);
    }
    // Members see which provider and model produce their results (the
    // pages say when it is offline), not where the server sends requests.
    let label = match info.provider.as_str() {
        "offline" => info.label,
        _ => format!("{}, {}", info.provider, info.model),
    };
    Ok(LlmInfo { label, base_url: String::new(), key_set: false, allow_private_urls: false, ..info })
}

/// Saves the LLM settings (server-side) and puts them in force at once.
/// `api_key` empty keeps the current key; `clear_key` removes a stored one.
/// The key is never sent back.
#[server(output = crate::codec::Json)]
pub async fn save_llm_settings(
    provider: String,
    base_url: String,
    model: String,
    concurrency: String,
    timeout_secs: String,
    price: String,
    api_key: String,
    clear_key: Option<String>,
    allow_private_urls: Option<String>,
    #[server(default)] context: Option<String>,
) -> Result<LlmInfo, AppError> {
    let call = Request::now()?;
    call.require_owner("change the LLM settings")?;
    use crate::ssr::store::settings::{save_llm, StoredLlm};
    let state = call.state.clone();
    let invalid =
        |e: engine::llm::LlmError| AppError::Invalid(e.to_string().trim_start_matches("configuration: ").to_string());
    let kind = engine::llm::settings::ProviderKind::parse(&provider).map_err(invalid)?;
    let number =
        |field: &str, value: &str| {
            value.trim().parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                AppError::Invalid(format!("{field} must be a whole number of at least 1, not \"{value}\""))
            })
        };
    let previous = crate::ssr::store::settings::load_llm(&state.pool).await?;
    let mut stored = StoredLlm {
        provider: kind.name().to_string(),
        base_url: base_url.trim().trim_end_matches('/').to_string(),
        model: model.trim().to_string(),
        concurrency: number("concurrency", &concurrency)? as usize,
        timeout_secs: number("timeout", &timeout_secs)?,
        price: None,
        api_key: if clear_key.is_some() { None } else { previous.and_then(|p| p.api_key) },
        allow_private_urls: allow_private_urls.is_some(),
        context: match context.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            None => None,
            Some(c) => Some(c.parse::<u64>().ok().filter(|n| *n >= 512).ok_or_else(|| {
                AppError::Invalid(format!(
                    "the context window must be a whole number of at least 512 tokens, not \"{c}\""
                ))
            })?),
        },
    };
    if !api_key.trim().is_empty() {
        stored.api_key = Some(api_key.trim().to_string());
    }
    if stored.model.is_empty() {
        return Err(AppError::Invalid("a model name is needed".into()));
    }
    // The base settings are the flags and environment the server started with.
    let mut applied = stored.apply(&state.config.llm_base);
    if !price.trim().is_empty() {
        applied.set_price(&price).map_err(invalid)?;
        stored.price = applied.prices.0.get(&applied.model).map(|p| (p.input_per_m, p.output_per_m));
    }
    applied.build_provider(engine::offline::provider).map_err(invalid)?;
    save_llm(&state.pool, &stored).await?;
    *state.llm.write().map_err(|_| AppError::Internal)? = std::sync::Arc::new(applied);
    tracing::info!(provider = %stored.provider, model = %stored.model, "LLM settings saved");
    Ok(llm_info(&state.llm()))
}

/// Sends one tiny request through the gateway (never cached) and returns the
/// reply, or the exact error.
#[server(output = crate::codec::Json)]
pub async fn test_connection() -> Result<String, AppError> {
    let call = Request::now()?;
    call.require_owner("test the LLM connection")?;
    use engine::llm::{CallContext, ChatRequest, Message};
    let state = call.state.clone();
    let settings = engine::llm::settings::LlmSettings { max_attempts: 2, ..(*state.llm()).clone() };
    let store = std::sync::Arc::new(crate::ssr::store::calls::SqliteCallStore::new(state.pool.clone()));
    let gateway = settings
        .gateway(store, engine::offline::provider)
        .map_err(|e| AppError::Invalid(e.to_string()))?
        .without_cache();
    let mut req = ChatRequest::new("ping", vec![Message::user("Reply with the single word: pong")]);
    req.max_tokens = Some(16);
    match gateway.chat(&req, &CallContext::default()).await {
        Ok(r) => {
            let mut said = format!(
                "{} replied \"{}\" ({} prompt + {} completion tokens, {} ms, {} attempt{})",
                r.model,
                r.text,
                r.prompt_tokens,
                r.completion_tokens,
                r.latency_ms,
                r.attempts,
                if r.attempts == 1 { "" } else { "s" }
            );
            if let Some(c) = gateway.provider().context_window().await {
                said.push_str(&format!(". Context window: {c} tokens"));
            }
            // A server on this machine or network: does it answer one request at a time?
            if settings.is_local() {
                let one = std::time::Duration::from_millis(r.latency_ms);
                let serial = engine::llm::settings::answers_one_at_a_time(&gateway, one).await;
                if let Some(advice) = serial.ok().and_then(|s| settings.serial_advice(s)) {
                    said.push_str(&format!(". {advice}"));
                }
            }
            Ok(said)
        }
        Err(e) => Err(AppError::Invalid(format!("the call failed: {e}"))),
    }
}

#[server(output = crate::codec::Json)]
pub async fn list_jobs(project_id: i64) -> Result<Vec<JobView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::jobs::list_jobs(&call.state.pool, project_id).await
}

#[server(output = crate::codec::Json)]
pub async fn get_job_detail(id: i64) -> Result<JobDetail, AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(id), Need::Read).await?;
    let state = call.state.clone();
    Ok(JobDetail {
        job: store::jobs::get_job(&state.pool, id).await?,
        items: store::jobs::job_items(&state.pool, id).await?,
        outcome: store::jobs::outcome(&state.pool, id).await?,
    })
}

#[server(output = crate::codec::Json)]
pub async fn get_item_calls(job_id: i64, item: String) -> Result<Vec<CallView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(job_id), Need::Read).await?;
    store::jobs::item_calls(&call.state.pool, job_id, &item).await
}

/// Starts a job summarising every chunk of the project; returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_summaries(project_id: i64, no_cache: Option<String>) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let state = call.state.clone();
    let job = crate::ssr::jobs::create_summaries(&state.pool, project_id, no_cache.is_some()).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

#[server(output = crate::codec::Json)]
pub async fn resume_job(id: i64, retry_failed: bool) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(id), Need::Edit).await?;
    let state = call.state.clone();
    let job = store::jobs::get_job(&state.pool, id).await?;
    if job.status == "running" {
        return Err(AppError::Conflict(format!("job {id} is already running")));
    }
    // Queued before the answer: the page's next look must see it as live
    // (the runner marks it running a moment later, on another task).
    store::jobs::mark_queued(&state.pool, id).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), id, retry_failed)
}

#[server(output = crate::codec::Json)]
pub async fn cancel_job(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Job(id), Need::Edit).await?;
    let state = call.state.clone();
    if state.jobs.cancel(id) {
        Ok(())
    } else {
        Err(AppError::Conflict(format!("job {id} is not running in this server")))
    }
}

/// The graph's statistics; `None` when the project has no graph yet.
#[server(output = crate::codec::Json)]
pub async fn get_graph_overview(project_id: i64) -> Result<Option<GraphOverview>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let pool = &call.state.pool;
    store::get_project(pool, project_id).await?;
    store::graph::overview(pool, project_id).await
}

/// What the explorer draws: at most `limit` nodes, the highest-degree ones.
#[server(output = crate::codec::Json)]
pub async fn get_graph_view(project_id: i64, limit: u32) -> Result<GraphView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    if limit == 0 {
        return Err(AppError::Invalid("the node limit must be at least 1".into()));
    }
    store::graph::view(&call.state.pool, project_id, limit as usize).await
}

/// A shared graph's view, read through its share token (no account).
#[server(endpoint = "share/graph", output = crate::codec::Json)]
pub async fn get_shared_graph_view(token: String, limit: u32) -> Result<GraphView, AppError> {
    let pool = &app_state()?.pool;
    let project = crate::ssr::share::graph_project(pool, &token).await?;
    if limit == 0 {
        return Err(AppError::Invalid("the node limit must be at least 1".into()));
    }
    store::graph::view(pool, project, limit as usize).await
}

/// A node of a shared graph; only nodes of the shared project.
#[server(endpoint = "share/graph_node", output = crate::codec::Json)]
pub async fn get_shared_graph_node(token: String, node_id: i64) -> Result<NodeDetail, AppError> {
    let pool = &app_state()?.pool;
    store::graph::node_detail(pool, crate::ssr::share::graph_project(pool, &token).await?, node_id).await
}

/// An edge of a shared graph; only edges of the shared project.
#[server(endpoint = "share/graph_edge", output = crate::codec::Json)]
pub async fn get_shared_graph_edge(token: String, source: i64, target: i64) -> Result<EdgeDetail, AppError> {
    let pool = &app_state()?.pool;
    store::graph::edge_detail(pool, crate::ssr::share::graph_project(pool, &token).await?, source, target).await
}

#[server(output = crate::codec::Json)]
pub async fn get_graph_node(project_id: i64, node_id: i64) -> Result<NodeDetail, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::graph::node_detail(&call.state.pool, project_id, node_id).await
}

#[server(output = crate::codec::Json)]
pub async fn get_graph_edge(project_id: i64, source: i64, target: i64) -> Result<EdgeDetail, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    store::graph::edge_detail(&call.state.pool, project_id, source, target).await
}

/// Starts building the project's graph (a job); returns at once.
#[server(output = crate::codec::Json)]
pub async fn start_graph_build(
    project_id: i64,
    gleaning: String,
    entity_types: String,
    summary_budget: String,
    no_cache: Option<String>,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let gleaning = whole("gleaning", &gleaning, 0, u64::MAX)?;
    if gleaning > 5 {
        return Err(AppError::Invalid(format!("gleaning is at most 5 turns, not {gleaning}")));
    }
    let types: Vec<String> =
        entity_types.split(',').map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()).collect();
    if types.is_empty() {
        return Err(AppError::Invalid("name at least one entity type".into()));
    }
    let settings = engine::graph::extract::ExtractSettings {
        gleaning: gleaning as u32,
        entity_types: types,
        summary_budget: whole("summary budget", &summary_budget, 50, u64::MAX)? as usize,
    };
    let state = call.state.clone();
    let job = crate::ssr::jobs::create_graph(&state.pool, project_id, &settings, no_cache.is_some()).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

#[server(output = crate::codec::Json)]
pub async fn list_question_sets(project_id: i64) -> Result<Vec<QuestionSetView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let pool = &call.state.pool;
    store::get_project(pool, project_id).await?;
    store::questions::list_sets(pool, project_id).await
}

#[server(output = crate::codec::Json)]
pub async fn list_set_questions(set_id: i64) -> Result<Vec<QuestionView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(set_id), Need::Read).await?;
    store::questions::list_questions(&call.state.pool, set_id).await
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
    let settings = engine::questions::graph::GraphQuestionSettings {
        node: whole("node questions", &node, 0, 10_000)? as usize,
        edge: whole("edge questions", &edge, 0, 10_000)? as usize,
        subgraph: whole("subgraph questions", &subgraph, 0, 10_000)? as usize,
        min_hops: whole("minimum hops", &min_hops, 1, 100_000)? as usize,
        degree_weighted: degree_weighted.is_some(),
        seed: whole("seed", &seed, 0, u64::MAX)?,
    };
    if settings.node + settings.edge + settings.subgraph == 0 {
        return Err(AppError::Invalid("ask for at least one question".into()));
    }
    let state = call.state.clone();
    let (job, _) =
        crate::ssr::jobs::create_graph_questions(&state.pool, project_id, &settings, no_cache.is_some()).await?;
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
    let count = match count.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        Some(c) => Some(whole("exact number of questions", c, 1, 2000)? as usize),
        None => None,
    };
    let settings = engine::questions::summary::SummarySettings {
        users: whole("users", &users, 1, 20)? as usize,
        tasks: whole("tasks", &tasks, 1, 20)? as usize,
        questions: whole("questions per task", &per_task, 1, 20)? as usize,
        head: whole("head tokens", &head, 0, 100_000)? as usize,
        tail: whole("tail tokens", &tail, 0, 100_000)? as usize,
        replicate_lightrag: replicate_lightrag.is_some(),
        count,
    };
    let state = call.state.clone();
    let (job, _) =
        crate::ssr::jobs::create_summary_questions(&state.pool, project_id, &settings, no_cache.is_some()).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
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
    let levels = levels
        .split(',')
        .map(|l| l.trim().parse::<usize>().map_err(|_| AppError::Invalid(format!("levels: \"{l}\" is not a number"))))
        .collect::<Result<Vec<_>, _>>()?;
    let settings = engine::questions::hierarchy::HierarchicalSettings {
        dimensions: dimensions.split(',').map(|d| d.trim().to_uppercase()).filter(|d| !d.is_empty()).collect(),
        levels,
        per_category: whole("questions per category", &per_category, 0, 1_000)? as usize,
        factorial_per_cell: whole("questions per factorial cell", &factorial, 0, 10_000)? as usize,
        adherence_check: adherence_check.is_some(),
        seed: whole("seed", &seed, 0, u64::MAX)?,
    };
    let state = call.state.clone();
    let (job, _) =
        crate::ssr::jobs::create_hierarchical_questions(&state.pool, project_id, &settings, None, no_cache.is_some())
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
    let job = crate::ssr::jobs::create_mentions(&state.pool, set_id, false).await?;
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
    let job = crate::ssr::jobs::create_relevance(&state.pool, set_id, k as usize, retriever, false).await?;
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

/// A built-in RAG method for the Answers page.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MethodInfo {
    pub name: String,
    pub about: String,
    /// Default parameters as pretty JSON.
    pub defaults: String,
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

#[server(output = crate::codec::Json)]
pub async fn get_answers(answer_set_id: i64) -> Result<Vec<AnswerView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::AnswerSet(answer_set_id), Need::Read).await?;
    store::answers::list_answers(&call.state.pool, answer_set_id, None).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_answer_set(answer_set_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::AnswerSet(answer_set_id), Need::Edit).await?;
    store::answers::delete_set(&call.state.pool, answer_set_id).await
}

/// Starts answering a question set with a built-in method (a job).
/// `params`: a JSON object of parameters (missing ones take the defaults);
/// `target_words`: empty for none.
#[server(output = crate::codec::Json)]
pub async fn start_answers(
    question_set_id: i64,
    method: String,
    params: String,
    name: String,
    target_words: String,
    no_cache: Option<String>,
) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::QuestionSet(question_set_id), Need::Edit).await?;
    let params: serde_json::Value = if params.trim().is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&params).map_err(|e| AppError::Invalid(format!("the parameters are not JSON: {e}")))?
    };
    let target_words = match target_words.trim() {
        "" => None,
        t => Some(whole("target length in words", t, 1, 10_000)? as usize),
    };
    let req = crate::ssr::answers::AnswerRequest {
        question_set_id,
        method,
        params,
        name: Some(name).filter(|n| !n.trim().is_empty()),
        target_words,
        no_cache: no_cache.is_some(),
    };
    let state = call.state.clone();
    let (job, _) = crate::ssr::answers::create(&state.pool, &req).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

#[server(output = crate::codec::Json)]
pub async fn list_evaluations(project_id: i64) -> Result<Vec<EvaluationView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    crate::ssr::evaluation::list(&call.state.pool, project_id).await
}

/// A number from a form field within `min..=max`, or the reason it is not.
#[cfg(feature = "ssr")]
fn number(field: &str, value: &str, min: f64, max: f64) -> Result<f64, AppError> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && (min..=max).contains(n))
        .ok_or_else(|| AppError::Invalid(format!("{field} must be a number from {min} to {max}, not \"{value}\"")))
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
) -> Result<engine::judge::eval::Settings, AppError> {
    use engine::judge::eval::{JudgeKind, Protocol, Settings};
    let s = Settings {
        protocol: Protocol::parse(protocol).map_err(AppError::Invalid)?,
        trials: whole("trials", trials, 1, 1000)? as u32,
        repeats: whole("repeats per order", repeats, 1, 20)? as u32,
        tolerance: whole("tolerance (words)", tolerance, 0, 10_000)? as usize,
        max_adjustments: whole("adjustments", adjustments, 0, 10)? as u32,
        align,
        exchange,
        judge: JudgeKind::parse(judge).map_err(AppError::Invalid)?,
        biases: engine::judge::simulated::Biases {
            position: number("position bias", position_bias, -5.0, 5.0)?,
            length_per_10_words: number("length bias", length_bias, -5.0, 5.0)?,
            noise: number("noise", noise, 0.0, 5.0)?,
            seed: 0,
        },
        sanity: false,
        judge_prompt: match judge_prompt.filter(|p| !p.is_empty()) {
            Some(p) => engine::judge::scoring::JudgePrompt::parse(p).map_err(AppError::Invalid)?,
            None => engine::judge::scoring::JudgePrompt::Paper,
        },
    };
    s.validate().map_err(AppError::Invalid)?;
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
) -> Result<EvaluationView, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::QuestionSet(question_set_id), Need::Edit).await?;
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
    let sets = ids(&answer_sets, "answer sets")?;
    call.require_in(project, sets.iter().map(|s| Obj::AnswerSet(*s))).await?;
    let mut chosen = Vec::new();
    for pair in pairs.split(',').filter(|p| !p.trim().is_empty()) {
        match ids(pair, "pairs")?.as_slice() {
            [a, b] => chosen.push((*a, *b)),
            _ => return Err(AppError::Invalid(format!("pairs: \"{pair}\" is not A:B"))),
        }
    }
    let settings = eval_settings(
        &protocol,
        &trials,
        &repeats,
        &tolerance,
        &adjustments,
        align.is_some(),
        exchange.is_some(),
        &judge,
        &position_bias,
        &length_bias,
        &noise,
        judge_prompt.as_deref(),
    )?;
    let state = call.state.clone();
    let llm = state.llm();
    let req = crate::ssr::evaluation::EvalRequest {
        question_set_id,
        answer_sets: sets.clone(),
        pairs: chosen,
        settings: settings.clone(),
        name: Some(name).filter(|n| !n.trim().is_empty()),
        no_cache: no_cache.is_some(),
    };
    let (job, id) = crate::ssr::evaluation::create(&state.pool, &llm, &req).await?;
    state.jobs.spawn(state.pool.clone(), llm.clone(), job.id, false)?;
    if sanity_first.is_some() {
        for set in crate::ssr::evaluation::never_checked(&state.pool, &sets).await? {
            let (job, _) = crate::ssr::evaluation::create_sanity(&state.pool, &llm, set, settings.clone()).await?;
            state.jobs.spawn(state.pool.clone(), llm.clone(), job.id, false)?;
        }
    }
    Ok(crate::ssr::evaluation::get(&state.pool, id).await?.view)
}

/// One click: a sanity check of an answer set's method with the paper's
/// defaults and the chosen judge.
#[server(output = crate::codec::Json)]
pub async fn start_sanity(answer_set_id: i64, judge: String) -> Result<EvaluationView, AppError> {
    let call = Request::now()?;
    call.require(Obj::AnswerSet(answer_set_id), Need::Edit).await?;
    let settings = engine::judge::eval::Settings {
        judge: engine::judge::eval::JudgeKind::parse(&judge).map_err(AppError::Invalid)?,
        ..Default::default()
    };
    let state = call.state.clone();
    let llm = state.llm();
    let (job, id) = crate::ssr::evaluation::create_sanity(&state.pool, &llm, answer_set_id, settings).await?;
    state.jobs.spawn(state.pool.clone(), llm, job.id, false)?;
    Ok(crate::ssr::evaluation::get(&state.pool, id).await?.view)
}

#[server(output = crate::codec::Json)]
pub async fn delete_evaluation(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Evaluation(id), Need::Edit).await?;
    crate::ssr::evaluation::delete(&call.state.pool, id).await
}

#[server(output = crate::codec::Json)]
pub async fn get_evaluation_report(id: i64) -> Result<EvaluationReportView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Evaluation(id), Need::Read).await?;
    crate::ssr::evaluation::report_view(&call.state.pool, id).await
}

#[server(output = crate::codec::Json)]
pub async fn get_drill_questions(id: i64, a: i64, b: i64) -> Result<Vec<DrillQuestionView>, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::Evaluation(id), Need::Read).await?;
    call.require_in(project, [Obj::AnswerSet(a), Obj::AnswerSet(b)]).await?;
    crate::ssr::evaluation::drill_questions(&call.state.pool, id, a, b).await
}

#[server(output = crate::codec::Json)]
pub async fn get_drill(id: i64, a: i64, b: i64, question: i64) -> Result<DrillView, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::Evaluation(id), Need::Read).await?;
    call.require_in(project, [Obj::AnswerSet(a), Obj::AnswerSet(b), Obj::Question(question)]).await?;
    crate::ssr::evaluation::drill(&call.state.pool, id, a, b, question).await
}

/// A new study's links (each token shown only now: only its hash is kept).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CreatedStudy {
    pub study_id: i64,
    /// `/s/TOKEN`: the open link (a rater per browser).
    pub open_path: String,
    /// `/s/TOKEN` per rater.
    pub rater_paths: Vec<String>,
}

#[server(output = crate::codec::Json)]
pub async fn list_studies(project_id: i64) -> Result<Vec<StudyView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    crate::ssr::study::list(&call.state.pool, project_id).await
}

/// The default dimensions of a question study and of an answer-validation
/// study, as the JSON the designer edits.
#[server(output = crate::codec::Json)]
pub async fn default_study_dimensions() -> Result<(String, String), AppError> {
    use engine::study::Kind;
    let json = |k: Kind| serde_json::to_string_pretty(&k.default_dimensions()).unwrap_or_default();
    Ok((json(Kind::Questions), json(Kind::Answers)))
}

/// Creates a study. `draws`: `SET:N` comma-separated; `kind`: questions or
/// answers; `answers`: an answer set's id, or empty for reference answers;
/// `dimensions`: JSON (empty: the kind's defaults).
#[server(output = crate::codec::Json)]
#[allow(clippy::too_many_arguments)]
pub async fn create_study(
    project_id: i64,
    name: String,
    draws: String,
    intro: String,
    corpus_summary: String,
    attention_checks: String,
    target_raters: String,
    rater_links: String,
    seed: String,
    expires_days: String,
    #[server(default)] kind: String,
    #[server(default)] answers: String,
    #[server(default)] dimensions: String,
    #[server(default)] per_rater_only: String,
) -> Result<CreatedStudy, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let kind = engine::study::Kind::parse(if kind.trim().is_empty() { "questions" } else { kind.trim() })
        .map_err(AppError::Invalid)?;
    let dimensions: Option<Vec<engine::study::Dimension>> = match dimensions.trim() {
        "" => None,
        d => Some(serde_json::from_str(d).map_err(|e| AppError::Invalid(format!("dimensions: {e}")))?),
    };
    let mut parsed = Vec::new();
    for part in draws.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (set, n) =
            part.split_once(':').ok_or_else(|| AppError::Invalid(format!("questions: \"{part}\" is not SET:COUNT")))?;
        let set = whole("question set", set, 1, i64::MAX as u64)? as i64;
        parsed.push((set, whole("questions to draw", n, 1, 10_000)? as usize));
    }
    call.require_in(project_id, parsed.iter().map(|(s, _)| Obj::QuestionSet(*s))).await?;
    let req = crate::ssr::study::StudyRequest {
        project_id,
        name,
        draws: parsed,
        dimensions,
        kind,
        answers: match answers.trim() {
            "" | "reference" => None,
            a => Some(whole("answer set", a, 1, i64::MAX as u64)? as i64),
        },
        intro,
        corpus_summary,
        attention_checks: whole("attention checks", &attention_checks, 0, 5)? as usize,
        target_raters: match target_raters.trim() {
            "" => None,
            t => Some(whole("target raters", t, 1, 100_000)? as i64),
        },
        rater_links: whole("per-rater links", &rater_links, 0, 1000)? as usize,
        open_link: per_rater_only.trim().is_empty(),
        seed: if seed.trim().is_empty() { 42 } else { whole("seed", &seed, 0, u64::MAX)? },
        expires_days: match expires_days.trim() {
            "" => None,
            d => Some(whole("days until the links expire", d, 1, 3650)? as u32),
        },
    };
    call.require_in(project_id, req.answers.map(Obj::AnswerSet)).await?;
    let created = crate::ssr::study::create(&call.state.pool, &req).await?;
    Ok(CreatedStudy {
        study_id: created.study_id,
        open_path: if created.open_token.is_empty() { String::new() } else { format!("/s/{}", created.open_token) },
        rater_paths: created.rater_tokens.iter().map(|t| format!("/s/{t}")).collect(),
    })
}

#[server(output = crate::codec::Json)]
pub async fn set_study_open(id: i64, open: bool) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    crate::ssr::study::set_open(&call.state.pool, id, open).await
}

/// A new link for a study (`kind`: open or rater); its path, shown once.
#[server(output = crate::codec::Json)]
pub async fn add_study_link(id: i64, kind: String) -> Result<String, AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    let label = if kind == "open" { "open link" } else { "rater link" };
    Ok(format!("/s/{}", crate::ssr::study::add_link(&call.state.pool, id, &kind, label).await?))
}

#[server(output = crate::codec::Json)]
pub async fn revoke_study_link(link_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::StudyLink(link_id), Need::Edit).await?;
    crate::ssr::study::revoke_link(&call.state.pool, link_id).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_study(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    crate::ssr::study::delete(&call.state.pool, id).await
}

/// Starts the LLM rater on a study's items (a job), with the rubric the humans read.
#[server(output = crate::codec::Json)]
pub async fn start_study_rating(id: i64) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    let state = call.state.clone();
    let job = crate::ssr::study::create_llm_rating(&state.pool, id, false).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

#[server(output = crate::codec::Json)]
pub async fn get_study_results(id: i64) -> Result<StudyResultsView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Read).await?;
    crate::ssr::study::results_view(&call.state.pool, id).await
}

/// A rater's session at a study link (no account; `rater`: the browser's
/// own token at an open link, or empty).
#[server(endpoint = "study/session", output = crate::codec::Json)]
pub async fn study_session(link: String, rater: String) -> Result<RaterSession, AppError> {
    let state = app_state()?;
    let cookie = CookieOptions::now();
    let parts = use_context::<axum::http::request::Parts>();
    // The browser's rater at this link: the page's own token, else the
    // HttpOnly cookie (which survives the page's storage being cleared).
    let name = rater_cookie_name(&link);
    let from_cookie = parts
        .as_ref()
        .and_then(|p| p.headers.get(axum::http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(|c| {
            c.split(';').filter_map(|c| c.trim().split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        });
    let rater = Some(rater.trim().to_string()).filter(|r| !r.is_empty()).or(from_cookie);
    let addr = parts
        .as_ref()
        .and_then(|p| p.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>())
        .map_or("?".to_string(), |a| a.0.ip().to_string());
    let session =
        crate::ssr::study::session(&state.pool, &link, rater.as_deref(), |link_id| state.raters.admit(link_id, &addr))
            .await?;
    if !session.rater.is_empty() {
        cookie.send_named(&name, &session.rater, 180 * 86_400, "/");
    }
    Ok(session)
}

/// The rater cookie's name for a study link: a fingerprint of the link,
/// so each link keeps its own rater and the name gives the link away not.
#[cfg(feature = "ssr")]
fn rater_cookie_name(link: &str) -> String {
    format!("assay_rater_{}", &crate::ssr::tokens::hash(link.trim())[..16])
}

/// A rater's scores for one item: `scores` comma-separated, one per dimension.
#[server(endpoint = "study/rate", output = crate::codec::Json)]
pub async fn study_rate(link: String, rater: String, item: i64, scores: String) -> Result<(i64, i64), AppError> {
    let scores: Vec<u8> = scores
        .split(',')
        .map(|s| s.trim().parse::<u8>().map_err(|_| AppError::Invalid(format!("\"{s}\" is not a score"))))
        .collect::<Result<_, _>>()?;
    crate::ssr::study::rate(&app_state()?.pool, &link, &rater, item, &scores).await
}

#[server(endpoint = "study/finish", output = crate::codec::Json)]
pub async fn study_finish(link: String, rater: String) -> Result<(), AppError> {
    crate::ssr::study::finish(&app_state()?.pool, &link, &rater).await
}

/// Who is logged in (`None`: nobody), and whether an owner exists yet.
#[server(endpoint = "auth/whoami", output = crate::codec::Json)]
pub async fn whoami() -> Result<(Option<String>, bool), AppError> {
    let state = app_state()?;
    let owner = crate::ssr::auth::has_owner(&state.pool).await?;
    let headers: Option<axum::http::HeaderMap> = leptos_axum::extract().await.ok();
    let token = headers
        .as_ref()
        .and_then(|h| h.get(axum::http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(crate::ssr::auth::token_in)
        .map(str::to_string);
    let user = match token {
        Some(t) => crate::ssr::auth::session_user(&state.pool, &t).await?.map(|u| u.1),
        None => None,
    };
    Ok((user, owner))
}

/// How to set the session cookie on this request's response, read at the
/// server function's first poll (the context is not there after an await).
#[cfg(feature = "ssr")]
struct CookieOptions {
    response: Option<leptos_axum::ResponseOptions>,
    secure: bool,
}

#[cfg(feature = "ssr")]
impl CookieOptions {
    fn now() -> CookieOptions {
        let over_https = use_context::<axum::http::request::Parts>()
            .is_some_and(|p| crate::ssr::auth::came_over_https(&p.headers, &p.uri));
        let forced = app_state().is_ok_and(|s| s.config.secure_cookies);
        CookieOptions { response: use_context::<leptos_axum::ResponseOptions>(), secure: over_https || forced }
    }

    /// Sets another HttpOnly cookie (a rater's token), for `path`.
    fn send_named(&self, name: &str, value: &str, max_age: i64, path: &str) {
        let secure = if self.secure { "; Secure" } else { "" };
        let c = format!("{name}={value}; Path={path}; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}");
        if let (Some(resp), Ok(v)) = (&self.response, axum::http::HeaderValue::from_str(&c)) {
            resp.append_header(axum::http::header::SET_COOKIE, v);
        }
    }

    /// Sets the session cookie (`None`: clears it).
    fn send(&self, token: Option<&str>) {
        if let Some(resp) = &self.response {
            if let Ok(v) = axum::http::HeaderValue::from_str(&crate::ssr::auth::set_cookie_secure(token, self.secure)) {
                resp.append_header(axum::http::header::SET_COOKIE, v);
            }
        }
    }
}

/// First run: creates the owner account and logs it in. Refused once an
/// owner exists.
#[server(endpoint = "auth/setup", output = crate::codec::Json)]
pub async fn setup_owner(name: String, password: String, confirm: String) -> Result<(), AppError> {
    let state = app_state()?;
    let cookie = CookieOptions::now();
    if crate::ssr::auth::has_owner(&state.pool).await? {
        return Err(AppError::Conflict("this Assay already has an owner: log in instead".into()));
    }
    if password != confirm {
        return Err(AppError::Invalid("the two passwords differ".into()));
    }
    // The database allows one owner only: of concurrent first-run setups,
    // one creates it and the others get this same conflict.
    let id = crate::ssr::auth::create_user(&state.pool, &name, &password, "owner").await?;
    cookie.send(Some(&crate::ssr::auth::new_session(&state.pool, id).await?));
    Ok(())
}

/// Logs in; failed attempts are slowed per name and per address.
#[server(endpoint = "auth/login", output = crate::codec::Json)]
pub async fn login(name: String, password: String) -> Result<(), AppError> {
    let state = app_state()?;
    let cookie = CookieOptions::now();
    let addr: Option<axum::extract::ConnectInfo<std::net::SocketAddr>> = leptos_axum::extract().await.ok();
    let addr = addr.map_or("?".into(), |a| a.0.ip().to_string());
    let attempt = match state.throttle.begin(&name, &addr) {
        Ok(a) => a,
        Err(wait) => {
            return Err(AppError::TooMany(format!(
                "too many failed logins from this address: try again in {} s",
                wait.as_secs_f64().ceil() as u64
            )))
        }
    };
    attempt.pace().await;
    match crate::ssr::auth::verify(&state.pool, &name, &password).await? {
        Some(id) => {
            state.throttle.succeeded(&name, &addr);
            cookie.send(Some(&crate::ssr::auth::new_session(&state.pool, id).await?));
            Ok(())
        }
        None => {
            if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
                resp.set_status(axum::http::StatusCode::UNAUTHORIZED);
            }
            Err(AppError::Invalid("wrong name or password".into()))
        }
    }
}

#[server(endpoint = "auth/logout", output = crate::codec::Json)]
pub async fn logout() -> Result<(), AppError> {
    let state = app_state()?;
    let cookie = CookieOptions::now();
    let headers: Option<axum::http::HeaderMap> = leptos_axum::extract().await.ok();
    if let Some(t) = headers
        .as_ref()
        .and_then(|h| h.get(axum::http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(crate::ssr::auth::token_in)
    {
        crate::ssr::auth::end_session(&state.pool, t).await?;
    }
    cookie.send(None);
    Ok(())
}

/// Makes a read-only share link for a page (`kind`: evaluation or study);
/// its path, shown once.
#[server(output = crate::codec::Json)]
pub async fn create_share(kind: String, page_id: i64, expires_days: Option<u32>) -> Result<String, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(crate::ssr::share::project_of(&call.state.pool, &kind, page_id).await?), Need::Edit)
        .await?;
    if expires_days == Some(0) {
        return Err(AppError::Invalid("a link that expires lasts at least one day".into()));
    }
    let (_, token) = crate::ssr::share::create(&call.state.pool, &kind, page_id, expires_days).await?;
    Ok(format!("/share/{token}"))
}

/// A page's share links: (id, created, withdrawn).
#[server(output = crate::codec::Json)]
pub async fn list_shares(kind: String, page_id: i64) -> Result<Vec<(i64, String, bool)>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(crate::ssr::share::project_of(&call.state.pool, &kind, page_id).await?), Need::Read)
        .await?;
    crate::ssr::store::shares::of_page(&call.state.pool, &kind, page_id).await
}

#[server(output = crate::codec::Json)]
pub async fn revoke_share(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Share(id), Need::Edit).await?;
    crate::ssr::store::shares::revoke(&call.state.pool, id).await
}

/// What a share link opens: "evaluation", "study", "questions", "metrics",
/// "experiment" or "graph" (no account). An unknown, withdrawn or expired
/// link is a 404, and so is the page showing it.
#[server(endpoint = "share/kind", output = crate::codec::Json)]
pub async fn get_shared_kind(token: String) -> Result<String, AppError> {
    shared(crate::ssr::share::open(&app_state()?.pool, &token).await.map(|(kind, _)| kind))
}

/// The report a share link opens (an evaluation's, a study's results, a
/// question set, a metrics run), read-only (no account).
#[server(endpoint = "share/get", output = crate::codec::Json)]
pub async fn get_shared(token: String) -> Result<SharedView, AppError> {
    shared(crate::ssr::share::view(&app_state()?.pool, &token).await)
}

/// The experiment's report a share link opens, read-only (no account).
#[server(endpoint = "share/experiment", output = crate::codec::Json)]
pub async fn get_shared_experiment(token: String) -> Result<ExperimentReportView, AppError> {
    shared(crate::ssr::share::experiment(&app_state()?.pool, &token).await)
}

/// The overview of the graph a share link opens (no account); the explorer
/// reads the graph itself through `get_shared_graph_view`.
#[server(endpoint = "share/graph_overview", output = crate::codec::Json)]
pub async fn get_shared_graph(token: String) -> Result<Option<GraphOverview>, AppError> {
    shared(crate::ssr::share::graph(&app_state()?.pool, &token).await)
}

/// A shared page's reply: "not found" is the response's 404.
#[cfg(feature = "ssr")]
fn shared<T>(r: Result<T, AppError>) -> Result<T, AppError> {
    if matches!(r, Err(AppError::NotFound(_))) {
        if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(axum::http::StatusCode::NOT_FOUND);
        }
    }
    r
}

/// Every account with its project rights (the owner only).
#[server(output = crate::codec::Json)]
pub async fn list_users() -> Result<Vec<UserView>, AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    Ok(store::access::users(&call.state.pool)
        .await?
        .into_iter()
        .map(|((id, name, role, created_at), projects)| UserView { id, name, role, created_at, projects })
        .collect())
}

/// A collaborator's account (the owner only). Their rights start empty.
#[server(output = crate::codec::Json)]
pub async fn create_member(name: String, password: String) -> Result<i64, AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    crate::ssr::auth::create_user(&call.state.pool, &name, &password, "member").await
}

/// Deletes a collaborator's account (the owner only).
#[server(output = crate::codec::Json)]
pub async fn delete_member(user_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    store::access::delete_member(&call.state.pool, user_id).await
}

/// Sets a collaborator's rights on a project: `read`, `edit` or `none`
/// (the owner only).
#[server(output = crate::codec::Json)]
pub async fn set_member_access(user_id: i64, project_id: i64, access: String) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    let pool = &call.state.pool;
    crate::ssr::access::set_access(pool, user_id, project_id, &access).await
}

/// Starts a metrics run (seed 004) of answer sets over a question set:
/// `answer_sets` comma-separated ids. Returns the run's id; its page
/// follows the job.
#[server(output = crate::codec::Json)]
pub async fn start_metrics(
    set_id: i64,
    answer_sets: String,
    k: u32,
    bins: u32,
    #[server(default)] unit: Option<String>,
) -> Result<i64, AppError> {
    let call = Request::now()?;
    let project = call.require(Obj::QuestionSet(set_id), Need::Edit).await?;
    let ids: Vec<i64> = answer_sets
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>().map_err(|_| AppError::Invalid(format!("\"{s}\" is not an answer set id"))))
        .collect::<Result<_, _>>()?;
    call.require_in(project, ids.iter().map(|s| Obj::AnswerSet(*s))).await?;
    let state = call.state.clone();
    let unit = match unit.as_deref().filter(|u| !u.is_empty()) {
        Some(u) => engine::metrics::RelevanceUnit::parse(u).map_err(AppError::Invalid)?,
        None => engine::metrics::RelevanceUnit::Document,
    };
    let (run, job) = crate::ssr::metrics::create(&state.pool, set_id, &ids, k as usize, bins as usize, unit).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(run)
}

/// A project's metrics runs, newest first.
#[server(output = crate::codec::Json)]
pub async fn list_metrics_runs(project_id: i64) -> Result<Vec<MetricsRunView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    let mut out = Vec::new();
    for row in crate::ssr::store::metrics::list(&call.state.pool, project_id).await? {
        out.push(crate::ssr::metrics::run_view(&call.state.pool, &row).await?);
    }
    Ok(out)
}

/// A metrics run and, once finished, its report.
#[server(output = crate::codec::Json)]
pub async fn get_metrics_run(run_id: i64) -> Result<MetricsRunPage, AppError> {
    let call = Request::now()?;
    call.require(Obj::MetricsRun(run_id), Need::Read).await?;
    crate::ssr::metrics::page(&call.state.pool, run_id).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_metrics_run(run_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::MetricsRun(run_id), Need::Edit).await?;
    crate::ssr::store::metrics::delete(&call.state.pool, run_id).await
}

/// The "New experiment" wizard's defaults (the papers'), the projects whose
/// documents an experiment may use, the built-in methods and the LLM.
#[server(output = crate::codec::Json)]
pub async fn experiment_wizard() -> Result<WizardStart, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    crate::ssr::experiments::wizard::wizard_start(&call.state.pool, &call.state.llm()).await
}

/// The wizard's choices (`fields`: `WizardFields` as JSON) as a manifest,
/// with its estimate of calls, tokens and cost, or what is wrong.
#[server(output = crate::codec::Json)]
pub async fn draft_experiment(fields: String) -> Result<ExperimentDraft, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    let f: WizardFields =
        serde_json::from_str(&fields).map_err(|e| AppError::Invalid(format!("the wizard's choices: {e}")))?;
    let llm = call.state.llm();
    match crate::ssr::experiments::wizard::manifest_of(&f, &llm) {
        Ok(text) => Ok(crate::ssr::experiments::wizard::draft(&call.state.pool, &llm, &text).await),
        Err(e) => Ok(crate::ssr::experiments::wizard::refused("", e)),
    }
}

/// A manifest's estimate (an imported or edited manifest), or what is wrong.
#[server(output = crate::codec::Json)]
pub async fn draft_manifest(manifest: String) -> Result<ExperimentDraft, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    Ok(crate::ssr::experiments::wizard::draft(&call.state.pool, &call.state.llm(), &manifest).await)
}

/// An imported manifest in the wizard's fields, naming what they cannot show.
#[server(output = crate::codec::Json)]
pub async fn import_manifest(manifest: String) -> Result<ImportedManifest, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    let m = engine::experiment::Manifest::parse_uploaded(&manifest).map_err(|e| AppError::Invalid(e.0))?;
    let start = crate::ssr::experiments::wizard::wizard_start(&call.state.pool, &call.state.llm()).await?;
    Ok(crate::ssr::experiments::wizard::fields_of(&m, &start.fields))
}

/// Starts an experiment from its manifest; returns (project id, experiment id).
#[server(output = crate::codec::Json)]
pub async fn start_experiment(manifest: String) -> Result<(i64, i64), AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    crate::ssr::experiments::wizard::start(&call.state, &manifest).await
}

/// An experiment: its stages (planned, running, done) and, as they finish,
/// the report gathering theirs.
#[server(output = crate::codec::Json)]
pub async fn get_experiment(experiment_id: i64) -> Result<ExperimentReportView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Experiment(experiment_id), Need::Read).await?;
    crate::ssr::experiments::wizard::report(&call.state.pool, experiment_id).await
}

/// Experiments started in the browser, newest first: (id, project, name, status, started).
#[server(output = crate::codec::Json)]
pub async fn list_experiments() -> Result<Vec<(i64, i64, String, String, String)>, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    crate::ssr::experiments::wizard::list_all(&call.state.pool).await
}

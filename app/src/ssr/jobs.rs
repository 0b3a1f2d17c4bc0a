//! Creating and running jobs: the glue between the store and
//! `engine::jobs`, shared by the web server and the CLI so both run a job
//! the same way (same items, same gateway, same records).

use std::sync::Arc;
use std::time::Duration;

use engine::jobs::{Progress, RunEnd, WorkItem};
use engine::llm::settings::LlmSettings;
use serde_json::json;
use sqlx::SqlitePool;
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, AppResult};
use crate::model::{JobItemView, JobView};
use crate::ssr::store;
use crate::ssr::store::calls::SqliteCallStore;
use crate::ssr::store::jobs::SqliteJobStore;

/// One-sentence summaries of every chunk of a project.
pub const SUMMARIES: &str = "summaries";
/// The knowledge graph of a project: extraction per chunk, then merging.
pub const GRAPH: &str = "graph";
/// A question set: one item per planned question.
pub const QUESTIONS: &str = "questions";
/// Question–retrieval relevance of a set: one item per question.
pub const RELEVANCE: &str = "relevance";

/// Entities each question of a set names, extracted by the LLM: one item
/// per question.
pub const MENTIONS: &str = "mentions";

/// Creates (does not run) the job that has the LLM list the entities each
/// question of a set names.
pub async fn create_mentions(pool: &SqlitePool, set_id: i64, no_cache: bool) -> AppResult<JobView> {
    let set = store::questions::get_set(pool, set_id).await?;
    if set.questions == 0 {
        return Err(AppError::Invalid(format!("question set {set_id} has no questions")));
    }
    let parameters = json!({ "no_cache": no_cache, "set_id": set_id });
    let id = store::jobs::create_job(pool, set.project_id, MENTIONS, &parameters, set.questions).await?;
    store::jobs::get_job(pool, id).await
}

/// Creates (does not run) the job that scores how relevant the context
/// `retriever` finds (a built-in method's retrieval; `bm25`: the top `k`
/// chunks) is to each question of a set.
pub async fn create_relevance(
    pool: &SqlitePool,
    set_id: i64,
    k: usize,
    retriever: &str,
    no_cache: bool,
) -> AppResult<JobView> {
    let set = store::questions::get_set(pool, set_id).await?;
    if set.questions == 0 {
        return Err(AppError::Invalid(format!("question set {set_id} has no questions")));
    }
    if k == 0 {
        return Err(AppError::Invalid("retrieve at least one chunk per question".into()));
    }
    if retriever == "http" || engine::rag::method::defaults(retriever).is_err() {
        return Err(AppError::Invalid(format!(
            "the retriever must be a built-in method (fastgraphrag, lightrag, naive, bm25, graphrag-local, …), not \"{retriever}\""
        )));
    }
    if engine::rag::method::needs_graph(retriever) && store::graph::load(pool, set.project_id).await?.nodes.is_empty() {
        return Err(AppError::Invalid(format!(
            "{retriever} retrieves from the knowledge graph: build the graph first, or choose bm25"
        )));
    }
    let parameters = json!({ "no_cache": no_cache, "set_id": set_id, "k": k, "retriever": retriever });
    let id = store::jobs::create_job(pool, set.project_id, RELEVANCE, &parameters, set.questions).await?;
    store::jobs::get_job(pool, id).await
}

/// Plans graph-text-grounded questions from the project's stored graph and
/// creates (does not run) the job that asks for them, with the empty set it
/// fills. Returns the job and the set's id.
pub async fn create_graph_questions(
    pool: &SqlitePool,
    project_id: i64,
    settings: &engine::questions::graph::GraphQuestionSettings,
    no_cache: bool,
) -> AppResult<(JobView, i64)> {
    store::get_project(pool, project_id).await?;
    let graph = store::graph::load(pool, project_id).await?;
    let plans = engine::questions::graph::plan(&graph, settings).map_err(|e| AppError::Invalid(e.to_string()))?;
    let described = json!({ "generator": "graph", "settings": settings });
    let parameters = json!({ "no_cache": no_cache, "generator": "graph", "settings": settings, "plans": plans });
    let id = store::jobs::create_job(pool, project_id, QUESTIONS, &parameters, plans.len() as i64).await?;
    let name = format!(
        "Graph questions: {} node, {} edge, {} subgraph (seed {})",
        settings.node, settings.edge, settings.subgraph, settings.seed
    );
    let set = store::questions::create_set(pool, project_id, Some(id), "graph", &name, &described).await?;
    Ok((store::jobs::get_job(pool, id).await?, set))
}

/// Creates (does not run) the job that asks for summary-based questions
/// (the LightRAG baseline), with the empty set it fills.
pub async fn create_summary_questions(
    pool: &SqlitePool,
    project_id: i64,
    settings: &engine::questions::summary::SummarySettings,
    no_cache: bool,
) -> AppResult<(JobView, i64)> {
    store::get_project(pool, project_id).await?;
    if store::document_texts(pool, project_id).await?.is_empty() {
        return Err(AppError::Invalid("the project has no documents yet: add a corpus first".into()));
    }
    if settings.users * settings.tasks * settings.questions == 0 {
        return Err(AppError::Invalid("users, tasks and questions per task must each be at least 1".into()));
    }
    let described = json!({ "generator": "summary", "settings": settings });
    let parameters = json!({ "no_cache": no_cache, "generator": "summary", "settings": settings });
    let id = store::jobs::create_job(pool, project_id, QUESTIONS, &parameters, 1).await?;
    let name = format!(
        "Summary-based questions: {} users × {} tasks × {}{}",
        settings.users,
        settings.tasks,
        settings.questions,
        if settings.replicate_lightrag { " (LightRAG replica)" } else { "" }
    );
    let set = store::questions::create_set(pool, project_id, Some(id), "summary", &name, &described).await?;
    Ok((store::jobs::get_job(pool, id).await?, set))
}

/// Creates (does not run) the job that writes questions with reference
/// answers in hierarchical categories (seed 004), with the empty set it
/// fills. `hierarchy`: given (from a file), else the project's own, else
/// the shipped default.
pub async fn create_hierarchical_questions(
    pool: &SqlitePool,
    project_id: i64,
    settings: &engine::questions::hierarchy::HierarchicalSettings,
    hierarchy: Option<engine::questions::hierarchy::Hierarchy>,
    no_cache: bool,
) -> AppResult<(JobView, i64)> {
    store::get_project(pool, project_id).await?;
    // The given one (a file), else the project's own, else the shipped one.
    let hierarchy = match hierarchy {
        Some(h) => h,
        None => store::questions::project_hierarchy(pool, project_id)
            .await?
            .unwrap_or_else(engine::questions::hierarchy::default_hierarchy),
    };
    let chunk_ids: Vec<i64> = store::chunk_texts(pool, project_id).await?.into_iter().map(|(id, _)| id).collect();
    let plans = engine::questions::hierarchy::plan(&hierarchy, settings, &chunk_ids).map_err(AppError::Invalid)?;
    if plans.is_empty() {
        return Err(AppError::Invalid("the settings ask for no questions".into()));
    }
    let described = json!({ "generator": "hierarchical", "settings": settings, "hierarchy": hierarchy });
    let parameters = json!({ "no_cache": no_cache, "generator": "hierarchical", "settings": settings,
                             "hierarchy": hierarchy, "plans": plans });
    let id = store::jobs::create_job(pool, project_id, QUESTIONS, &parameters, plans.len() as i64).await?;
    let name = format!(
        "Hierarchical questions: {} × levels {:?}, {} per category{} (seed {})",
        settings.dimensions.join("/"),
        settings.levels,
        settings.per_category,
        if settings.factorial_per_cell > 0 {
            format!(", LV × QC factorial {} per cell", settings.factorial_per_cell)
        } else {
            String::new()
        },
        settings.seed
    );
    let set = store::questions::create_set(pool, project_id, Some(id), "hierarchical", &name, &described).await?;
    Ok((store::jobs::get_job(pool, id).await?, set))
}

/// A planned question's item key: in plan order when sorted.
fn question_key(index: usize) -> String {
    format!("q-{index:05}")
}

/// Writes a finished questions job's questions into its set, in plan order.
async fn store_questions(pool: &SqlitePool, job: &JobView, parameters: &serde_json::Value) -> AppResult<()> {
    let set = store::questions::set_of_job(pool, job.id).await?;
    let mut items = store::jobs::job_items(pool, job.id).await?;
    items.retain(|i| i.status == "done");
    items.sort_by(|a, b| a.key.cmp(&b.key));
    let results: Vec<serde_json::Value> =
        items.iter().filter_map(|i| serde_json::from_str(i.result.as_deref()?).ok()).collect();
    let questions: Vec<store::questions::NewQuestion> = if parameters["generator"] == "hierarchical" {
        let seed = parameters["settings"]["seed"].as_i64();
        let kept: Vec<&serde_json::Value> = results.iter().filter(|r| r["dropped"] != json!(true)).collect();
        let mut described = parameters.clone();
        if let Some(o) = described.as_object_mut() {
            o.remove("no_cache");
            o.remove("plans");
        }
        described["dropped_by_adherence_check"] = json!(results.len() - kept.len());
        store::questions::set_parameters(pool, set, &described).await?;
        kept.into_iter()
            .filter_map(|r| {
                let planned: engine::questions::hierarchy::Planned =
                    serde_json::from_value(r["planned"].clone()).ok()?;
                // "QC 8" (a dimension at a granularity) or "LV × QC" (a factorial cell).
                let level = if planned.categories.len() > 1 {
                    planned.categories.iter().filter_map(|c| c.split('/').next()).collect::<Vec<_>>().join(" × ")
                } else {
                    let c = &planned.categories[0];
                    format!("{} {}", c.split('/').next().unwrap_or(""), 1 << c.matches('/').count())
                };
                Some(store::questions::NewQuestion {
                    question: r["question"].as_str()?.to_string(),
                    level: Some(level),
                    category: Some(planned.categories.join(" × ")),
                    expertise: Some(planned.expertise),
                    reference_answer: r["answer"].as_str().map(str::to_string),
                    source_chunk_ids: vec![planned.chunk_id],
                    generator: "hierarchical".into(),
                    prompt_hash: r["prompt_hash"].as_str().map(str::to_string),
                    seed,
                    ..Default::default()
                })
            })
            .collect()
    } else if parameters["generator"] == "summary" {
        let r = results.first().cloned().unwrap_or_default();
        let asked: Vec<engine::questions::summary::SummaryQuestion> =
            serde_json::from_value(r["questions"].clone()).unwrap_or_default();
        // The users' and tasks' descriptions go with the set.
        let mut described = parameters.clone();
        described.as_object_mut().map(|o| o.remove("no_cache"));
        described["users"] = json!(asked
            .iter()
            .map(|q| (q.user.to_string(), q.user_description.clone()))
            .collect::<std::collections::BTreeMap<_, _>>());
        described["tasks"] = json!(asked
            .iter()
            .map(|q| (format!("{}/{}", q.user, q.task), q.task_description.clone()))
            .collect::<std::collections::BTreeMap<_, _>>());
        store::questions::set_parameters(pool, set, &described).await?;
        asked
            .into_iter()
            .map(|q| store::questions::NewQuestion {
                question: q.question,
                level: Some("summary".into()),
                category: Some(format!("user {} / task {}", q.user, q.task)),
                generator: "summary".into(),
                prompt_hash: r["prompt_hash"].as_str().map(str::to_string),
                ..Default::default()
            })
            .collect()
    } else {
        let seed = parameters["settings"]["seed"].as_i64();
        results
            .iter()
            .filter_map(|r| {
                let plan: engine::questions::graph::Plan = serde_json::from_value(r["plan"].clone()).ok()?;
                Some(store::questions::NewQuestion {
                    question: r["question"].as_str()?.to_string(),
                    level: Some(plan.level.name().to_string()),
                    context_chunk_ids: Some(plan.given_chunk_ids()),
                    source_chunk_ids: plan.source_chunk_ids,
                    nodes: plan.nodes,
                    edges: plan.edges,
                    walk: plan.walk,
                    generator: "graph".into(),
                    prompt_hash: r["prompt_hash"].as_str().map(str::to_string),
                    seed,
                    ..Default::default()
                })
            })
            .collect()
    };
    if questions.is_empty() {
        // (Every adherence check failing, or a summary reply with no questions.)
        return Err(AppError::Invalid(format!(
            "no question came out of {} finished item{}: nothing was stored in the set",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        )));
    }
    store::questions::replace_questions(pool, set, &questions).await
}

/// Creates (does not run) a graph job for a project.
pub async fn create_graph(
    pool: &SqlitePool,
    project_id: i64,
    settings: &engine::graph::extract::ExtractSettings,
    no_cache: bool,
) -> AppResult<JobView> {
    store::get_project(pool, project_id).await?;
    let chunks = store::chunk_texts(pool, project_id).await?;
    if chunks.is_empty() {
        return Err(AppError::Invalid("the project has no chunks yet: add documents to its corpus first".into()));
    }
    let parameters = json!({ "no_cache": no_cache, "gleaning": settings.gleaning, "entity_types": settings.entity_types,
                "summary_budget": settings.summary_budget });
    let id = store::jobs::create_job(pool, project_id, GRAPH, &parameters, chunks.len() as i64).await?;
    store::jobs::get_job(pool, id).await
}

/// Merges a graph job's finished extraction items into one graph, as
/// extracted (no description summaries applied).
fn extracted_graph(items: &[JobItemView]) -> engine::graph::KnowledgeGraph {
    let mut graph = engine::graph::KnowledgeGraph::default();
    // In chunk order, not the order items finished in: descriptions are
    // combined in arrival order, and the summaries' cache keys depend on it.
    let mut extractions: Vec<(i64, &str)> = items
        .iter()
        .filter_map(|i| Some((i.key.strip_prefix("chunk-")?.parse().ok()?, i.result.as_deref()?)))
        .collect();
    extractions.sort_unstable_by_key(|(chunk, _)| *chunk);
    let mut offline = false;
    for (chunk, result) in extractions {
        if let Ok(x) = serde_json::from_str::<engine::graph::extract::ChunkExtraction>(result) {
            graph.merge(chunk, &x.extraction);
            offline |= x.offline;
        }
    }
    if offline {
        engine::graph::offline::resolve_aliases(&mut graph);
    }
    graph
}

/// Puts a graph job's finished description summaries in place.
fn apply_summaries(graph: &mut engine::graph::KnowledgeGraph, items: &[JobItemView]) {
    for item in items.iter().filter(|i| i.status == "done" && !i.key.starts_with("chunk-")) {
        engine::graph::describe::apply(graph, &item.key, item.result.as_deref().unwrap_or(""));
    }
}

/// Creates (does not run) a summaries job for a project. With `no_cache`,
/// every call goes to the provider even when a cached reply exists.
pub async fn create_summaries(pool: &SqlitePool, project_id: i64, no_cache: bool) -> AppResult<JobView> {
    store::get_project(pool, project_id).await?;
    let chunks = store::chunk_texts(pool, project_id).await?;
    if chunks.is_empty() {
        return Err(AppError::Invalid("the project has no chunks yet: add documents to its corpus first".into()));
    }
    let id =
        store::jobs::create_job(pool, project_id, SUMMARIES, &json!({ "no_cache": no_cache }), chunks.len() as i64)
            .await?;
    store::jobs::get_job(pool, id).await
}

async fn items(pool: &SqlitePool, job: &JobView) -> AppResult<Vec<WorkItem>> {
    match job.kind.as_str() {
        SUMMARIES | GRAPH => {
            let project = job.project_id.ok_or_else(|| AppError::Invalid(format!("job {} has no project", job.id)))?;
            Ok(store::chunk_texts(pool, project)
                .await?
                .into_iter()
                .map(|(id, text)| WorkItem { key: format!("chunk-{id}"), payload: json!({ "text": text }) })
                .collect())
        }
        RELEVANCE => {
            let project = job.project_id.ok_or_else(|| AppError::Invalid(format!("job {} has no project", job.id)))?;
            let parameters: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
            let set = parameters["set_id"].as_i64().unwrap_or_default();
            let k = parameters["k"].as_u64().unwrap_or(engine::questions::relevance::DEFAULT_K as u64) as usize;
            if parameters["retriever"].as_str().is_some_and(|r| r != "bm25") {
                // A method retrieves when the item runs (it may call the LLM).
                return Ok(store::questions::list_questions(pool, set)
                    .await?
                    .into_iter()
                    .map(|q| WorkItem {
                        key: format!("r-{}", q.id),
                        payload: json!({ "question_id": q.id, "question": q.question }),
                    })
                    .collect());
            }
            let chunks = store::chunk_texts(pool, project).await?;
            let index = engine::rag::bm25::Bm25Index::new(chunks.iter().map(|(id, t)| (*id, t.as_str())));
            let text: std::collections::HashMap<i64, &str> = chunks.iter().map(|(id, t)| (*id, t.as_str())).collect();
            Ok(store::questions::list_questions(pool, set)
                .await?
                .into_iter()
                .map(|q| {
                    let hits = index.search(&q.question, k);
                    let context: Vec<&str> = hits.iter().filter_map(|(id, _)| text.get(id).copied()).collect();
                    WorkItem {
                        key: format!("r-{}", q.id),
                        payload: json!({
                            "question_id": q.id,
                            "question": q.question,
                            "context": context.join("\n\n"),
                            "chunk_ids": hits.iter().map(|h| h.0).collect::<Vec<_>>(),
                        }),
                    }
                })
                .collect())
        }
        crate::ssr::answers::ANSWERS => crate::ssr::answers::items(pool, job).await,
        crate::ssr::evaluation::EVALUATION => crate::ssr::evaluation::items(pool, job).await,
        crate::ssr::study::STUDY_RATING => crate::ssr::study::llm_rating_items(pool, job).await,
        crate::ssr::metrics::METRICS => crate::ssr::metrics::items(pool, job).await,
        MENTIONS => {
            let parameters: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
            let set = parameters["set_id"].as_i64().unwrap_or_default();
            Ok(store::questions::list_questions(pool, set)
                .await?
                .into_iter()
                .map(|q| WorkItem {
                    key: format!("m-{}", q.id),
                    payload: json!({ "question_id": q.id, "question": q.question }),
                })
                .collect())
        }
        QUESTIONS => {
            let project = job.project_id.ok_or_else(|| AppError::Invalid(format!("job {} has no project", job.id)))?;
            let parameters: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
            let unreadable =
                |e: serde_json::Error| AppError::Invalid(format!("job {} has unreadable settings: {e}", job.id));
            if parameters["generator"] == "hierarchical" {
                let hierarchy: engine::questions::hierarchy::Hierarchy =
                    serde_json::from_value(parameters["hierarchy"].clone()).map_err(unreadable)?;
                let plans: Vec<engine::questions::hierarchy::Planned> =
                    serde_json::from_value(parameters["plans"].clone()).map_err(unreadable)?;
                let chunks: std::collections::HashMap<i64, String> =
                    store::chunk_texts(pool, project).await?.into_iter().collect();
                return Ok(plans
                    .iter()
                    .enumerate()
                    .map(|(i, p)| WorkItem {
                        key: format!("h-{i:05}"),
                        payload: engine::questions::hierarchy::payload(
                            &hierarchy,
                            p,
                            chunks.get(&p.chunk_id).map_or("", String::as_str),
                        ),
                    })
                    .collect());
            }
            if parameters["generator"] == "summary" {
                let settings: engine::questions::summary::SummarySettings =
                    serde_json::from_value(parameters["settings"].clone()).map_err(unreadable)?;
                let documents = store::document_texts(pool, project).await?;
                let texts: Vec<&str> = documents.iter().map(String::as_str).collect();
                let description = engine::questions::summary::describe_dataset(&texts, &settings);
                return Ok(vec![engine::questions::summary::item(&description, &settings)]);
            }
            let plans: Vec<engine::questions::graph::Plan> =
                serde_json::from_value(parameters["plans"].clone()).map_err(unreadable)?;
            let graph = store::graph::load(pool, project).await?;
            let chunks: std::collections::HashMap<i64, String> =
                store::chunk_texts(pool, project).await?.into_iter().collect();
            Ok(plans
                .iter()
                .enumerate()
                .map(|(i, plan)| WorkItem {
                    key: question_key(i),
                    payload: engine::questions::graph::payload(&graph, plan, &chunks),
                })
                .collect())
        }
        other => Err(AppError::Invalid(format!("job {} is of an unknown kind \"{other}\"", job.id))),
    }
}

/// How one run of a job runs its items: everything `engine::jobs::run`
/// needs besides the items and the work, so a job with several phases (the
/// graph's descriptions, the answers' reports or embeddings) passes one value.
pub struct Phase<'a> {
    pub job_id: i64,
    pub store: &'a dyn engine::jobs::JobStore,
    pub concurrency: usize,
    pub retry_failed: bool,
    pub cancel: &'a CancellationToken,
    pub on_progress: &'a (dyn Fn(Progress) + Send + Sync),
}

impl Phase<'_> {
    /// Runs `items` (those not yet done) with `work`, `concurrency` at a time.
    pub async fn run<W, Fut>(&self, items: Vec<WorkItem>, concurrency: usize, work: W) -> Result<RunEnd, String>
    where
        W: Fn(WorkItem) -> Fut,
        Fut: std::future::Future<Output = engine::jobs::ItemOutcome>,
    {
        engine::jobs::run(
            self.job_id,
            items,
            self.store,
            concurrency,
            self.retry_failed,
            self.cancel,
            self.on_progress,
            work,
        )
        .await
    }
}

/// Runs a job's unfinished items (all of them the first time; on resume,
/// those not yet done, and failed ones too when `retry_failed`). Returns
/// when the job finishes or `cancel` fires; the job's row says which.
pub async fn run(
    pool: &SqlitePool,
    llm: &LlmSettings,
    job_id: i64,
    retry_failed: bool,
    cancel: CancellationToken,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
) -> AppResult<RunEnd> {
    let job = store::jobs::get_job(pool, job_id).await?;
    if job.status == "running" {
        return Err(AppError::Conflict(format!("job {job_id} is already running")));
    }
    let items = items(pool, &job).await?;
    store::jobs::set_total(pool, job_id, items.len() as i64).await?;
    // The job's calls are written with the items that made them.
    let calls = Arc::new(SqliteCallStore::buffered(pool.clone()).await?);
    let mut gateway =
        llm.gateway(calls.clone(), engine::offline::provider).map_err(|e| AppError::Invalid(e.to_string()))?;
    let parameters: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
    if parameters["no_cache"].as_bool() == Some(true) {
        gateway = gateway.without_cache();
    }
    store::jobs::mark_running(pool, job_id).await?;

    let beat_pool = pool.clone();
    let heartbeat = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let _ = store::jobs::heartbeat(&beat_pool, job_id).await;
        }
    });
    let extract = engine::graph::extract::ExtractSettings {
        gleaning: parameters["gleaning"].as_u64().unwrap_or(1) as u32,
        entity_types: serde_json::from_value(parameters["entity_types"].clone())
            .unwrap_or_else(|_| engine::graph::extract::ExtractSettings::default().entity_types),
        summary_budget: parameters["summary_budget"]
            .as_u64()
            .map_or(engine::graph::describe::DEFAULT_BUDGET, |b| b as usize),
    };
    let job_store = SqliteJobStore::new(pool.clone()).with_calls(calls.clone());
    let adherence = parameters["settings"]["adherence_check"].as_bool() == Some(true);
    let graph_job = job.kind == GRAPH;
    let chunk_count = items.len();
    let phase =
        Phase { job_id, store: &job_store, concurrency: llm.concurrency, retry_failed, cancel: &cancel, on_progress };
    let mut result = if job.kind == crate::ssr::answers::ANSWERS {
        crate::ssr::answers::execute(pool, &gateway, &llm.transport(), &job, items, &phase)
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    } else if job.kind == crate::ssr::evaluation::EVALUATION {
        crate::ssr::evaluation::execute(pool, &gateway, llm, &job, items, &phase)
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    } else if job.kind == RELEVANCE && parameters["retriever"].as_str().is_some_and(|r| r != "bm25") {
        let retriever = parameters["retriever"].as_str().unwrap_or(engine::questions::relevance::DEFAULT_RETRIEVER);
        let project = job.project_id.unwrap_or_default();
        let corpus = std::sync::Arc::new(crate::ssr::answers::corpus(pool, project).await?);
        let built = crate::ssr::answers::build_method(
            pool,
            &gateway,
            &llm.transport(),
            project,
            corpus,
            retriever,
            &serde_json::Value::Null,
        )
        .await?;
        match built {
            Ok(method) => {
                phase
                    .run(items, llm.concurrency, |item| {
                        engine::questions::relevance::run_item_retrieving(method.as_ref(), &gateway, job_id, item)
                    })
                    .await
            }
            Err(e) => Err(e),
        }
    } else if job.kind == crate::ssr::metrics::METRICS {
        // In-process embedding uses every core already: one batch at a time.
        let k = parameters["k"].as_u64().unwrap_or(10) as usize;
        phase.run(items, 1, |item| crate::ssr::metrics::run_item(pool, item, k)).await
    } else {
        phase
            .run(items, llm.concurrency, |item| {
                let work: engine::llm::BoxFuture<'_, engine::jobs::ItemOutcome> = match job.kind.as_str() {
                    GRAPH => Box::pin(engine::graph::extract::run_item(&gateway, job_id, item, &extract)),
                    RELEVANCE => Box::pin(engine::questions::relevance::run_item(&gateway, job_id, item)),
                    MENTIONS => Box::pin(engine::graph::mentions::run_item(&gateway, job_id, item)),
                    crate::ssr::study::STUDY_RATING => Box::pin(engine::study::rate::run_item(&gateway, job_id, item)),
                    QUESTIONS if item.key.starts_with("h-") => {
                        Box::pin(engine::questions::hierarchy::run_item(&gateway, job_id, item, adherence))
                    }
                    QUESTIONS if item.key == "summary" => {
                        Box::pin(engine::questions::summary::run_item(&gateway, job_id, item))
                    }
                    QUESTIONS => Box::pin(engine::questions::graph::run_item(&gateway, job_id, item)),
                    _ => Box::pin(engine::graph::summarise::run_item(&gateway, job_id, item)),
                };
                work
            })
            .await
    };
    // A stage whose every item failed has nothing to give the next one:
    // the job fails, saying why (its items stay, to be retried).
    if matches!(result, Ok(RunEnd::Finished)) {
        if let Some(why) = every_item_failed(pool, job_id, &job.kind).await? {
            result = Err(why);
        }
    }
    if matches!(result, Ok(RunEnd::Finished)) && graph_job {
        // Second phase: summarise merged descriptions over the budget. The
        // items follow from the extractions alone (never from a graph with
        // some summaries applied), so a resumed job finds the same ones,
        // skips those already done, and its total stays right.
        let second: AppResult<Result<RunEnd, String>> = async {
            let mut graph = extracted_graph(&store::jobs::job_items(pool, job_id).await?);
            let targets = engine::graph::describe::items(&graph, extract.summary_budget);
            store::jobs::set_total(pool, job_id, (chunk_count + targets.len()) as i64).await?;
            let end = phase
                .run(targets, llm.concurrency, |item| engine::graph::describe::run_item(&gateway, job_id, item))
                .await;
            if matches!(end, Ok(RunEnd::Finished)) {
                let project =
                    job.project_id.ok_or_else(|| AppError::Invalid(format!("job {} has no project", job.id)))?;
                apply_summaries(&mut graph, &store::jobs::job_items(pool, job_id).await?);
                store::graph::replace(pool, project, Some(job.id), &graph).await?;
            }
            Ok(end)
        }
        .await;
        result = second.unwrap_or_else(|e| Err(e.to_string()));
    }
    if matches!(result, Ok(RunEnd::Finished)) && job.kind == crate::ssr::metrics::METRICS {
        if let Err(e) = crate::ssr::metrics::finish(pool, &store::jobs::get_job(pool, job_id).await?).await {
            result = Err(e.to_string());
        }
    }
    if matches!(result, Ok(RunEnd::Finished)) && job.kind == QUESTIONS {
        if let Err(e) = store_questions(pool, &job, &parameters).await {
            result = Err(e.to_string());
        }
    }
    heartbeat.abort();
    // Calls made outside any item (or by items cancelled in flight).
    if let Err(e) = calls.flush().await {
        if result.is_ok() {
            result = Err(e);
        }
    }
    match result {
        Ok(RunEnd::Finished) => store::jobs::mark_ended(pool, job_id, "done", None).await?,
        Ok(RunEnd::Cancelled) => store::jobs::mark_ended(pool, job_id, "cancelled", None).await?,
        Err(e) => {
            store::jobs::mark_ended(pool, job_id, "failed", Some(&e)).await?;
            return Err(AppError::Invalid(format!("job {job_id} failed: {e}")));
        }
    }
    result.map_err(|_| AppError::Internal)
}

/// "every one of its 7 items failed: the reply is not a question (7)", when
/// a job's items all failed. An evaluation is judged by its judging items
/// (`u-…`, `l-…`): aligned answers with no verdict are no evaluation.
async fn every_item_failed(pool: &SqlitePool, job_id: i64, kind: &str) -> AppResult<Option<String>> {
    let mut outcome = store::jobs::outcome(pool, job_id).await?;
    let mut what = "items";
    if kind == crate::ssr::evaluation::EVALUATION {
        let judging = store::jobs::outcome_of(pool, job_id, "_-%").await?;
        if judging.items > 0 {
            outcome = judging;
            what = "judging items";
        }
    }
    if outcome.items == 0 || outcome.failed < outcome.items {
        return Ok(None);
    }
    let reasons: Vec<String> = outcome.reasons.iter().map(|(r, n)| format!("{r} ({n})")).collect();
    let items = if outcome.items == 1 {
        format!("its one {}", what.trim_end_matches('s'))
    } else {
        format!("every one of its {} {what}", outcome.items)
    };
    Ok(Some(format!("{items} failed: {}", reasons.join("; "))))
}

/// Jobs the web server runs in the background, and how to cancel them.
#[derive(Default)]
pub struct JobManager {
    running: std::sync::Mutex<std::collections::HashMap<i64, CancellationToken>>,
}

impl JobManager {
    /// Starts (or resumes) a job in the background and returns at once.
    pub fn spawn(
        self: &Arc<Self>,
        pool: SqlitePool,
        llm: Arc<LlmSettings>,
        job_id: i64,
        retry_failed: bool,
    ) -> AppResult<()> {
        let token = CancellationToken::new();
        {
            let mut running = self.running.lock().unwrap();
            if running.contains_key(&job_id) {
                return Err(AppError::Conflict(format!("job {job_id} is already running")));
            }
            running.insert(job_id, token.clone());
        }
        let manager = self.clone();
        tokio::spawn(async move {
            if let Err(e) = run(&pool, &llm, job_id, retry_failed, token, &|_| {}).await {
                tracing::warn!(job_id, error = %e, "job ended with an error");
                // A run that never started leaves its job queued: say why instead.
                let _ = store::jobs::fail_queued(&pool, job_id, &e.to_string()).await;
            }
            manager.running.lock().unwrap().remove(&job_id);
        });
        Ok(())
    }

    /// Runs a job here to its end (cancellable from its page like any
    /// other) and returns it as it ended.
    pub async fn run_to_end(&self, pool: SqlitePool, llm: Arc<LlmSettings>, job_id: i64) -> AppResult<JobView> {
        let token = CancellationToken::new();
        {
            let mut running = self.running.lock().unwrap();
            if running.contains_key(&job_id) {
                return Err(AppError::Conflict(format!("job {job_id} is already running")));
            }
            running.insert(job_id, token.clone());
        }
        let result = run(&pool, &llm, job_id, false, token, &|_| {}).await;
        self.running.lock().unwrap().remove(&job_id);
        if let Err(e) = &result {
            let _ = store::jobs::fail_queued(&pool, job_id, &e.to_string()).await;
        }
        store::jobs::get_job(&pool, job_id).await
    }

    /// Asks a running job to stop; returns whether it was running here.
    pub fn cancel(&self, job_id: i64) -> bool {
        match self.running.lock().unwrap().get(&job_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

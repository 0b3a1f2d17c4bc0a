//! The questions stage's jobs: generating a question set (graph-grounded,
//! the summary baseline or hierarchical), the LLM's list of the entities
//! each question names, and the relevance of retrieved context.

use std::collections::HashMap;

use crate::ssr::store::Db;
use engine::jobs::{ItemKey, WorkItem};
use engine::llm::BoxFuture;
use engine::questions::relevance;
use serde_json::json;
use types::requests::QuestionsRequest;

use crate::error::{AppError, AppResult};
use crate::model::JobView;
use crate::ssr::jobs::params::{Generator, MentionsParams, QuestionsParams, RelevanceParams};
use crate::ssr::jobs::{self, project_of, Ended, Items, JobParams, Run, Stage};
use crate::ssr::store;

/// Creates (does not run) the job that has the LLM list the entities each
/// question of a set names.
pub async fn create_mentions(pool: &Db, set_id: i64, no_cache: bool) -> AppResult<JobView> {
    let set = store::questions::get_set(pool, set_id).await?;
    if set.questions == 0 {
        return Err(AppError::Invalid(format!("question set {set_id} has no questions")));
    }
    let params = JobParams::Mentions(MentionsParams { no_cache, set_id });
    let id = jobs::create(pool, set.project_id, &params, set.questions).await?;
    store::jobs::get_job(pool, id).await
}

/// Creates (does not run) the job that scores how relevant the context
/// `retriever` finds (a built-in method's retrieval; `bm25`: the top `k`
/// chunks) is to each question of a set.
pub async fn create_relevance(pool: &Db, set_id: i64, k: usize, retriever: &str, no_cache: bool) -> AppResult<JobView> {
    let set = store::questions::get_set(pool, set_id).await?;
    if set.questions == 0 {
        return Err(AppError::Invalid(format!("question set {set_id} has no questions")));
    }
    if k == 0 {
        return Err(AppError::Invalid("retrieve at least one chunk per question".into()));
    }
    if engine::rag::presets::is_remote(retriever) || engine::rag::method::defaults(retriever).is_err() {
        return Err(AppError::Invalid(format!(
            "the retriever must be a built-in method (fastgraphrag, lightrag, naive, bm25, graphrag-local, …), not \"{retriever}\""
        )));
    }
    if engine::rag::method::needs_graph(retriever) && store::graph::load(pool, set.project_id).await?.nodes.is_empty() {
        return Err(AppError::Invalid(format!(
            "{retriever} retrieves from the knowledge graph: build the graph first, or choose bm25"
        )));
    }
    let params = JobParams::Relevance(RelevanceParams { no_cache, set_id, k, retriever: retriever.to_string() });
    let id = jobs::create(pool, set.project_id, &params, set.questions).await?;
    store::jobs::get_job(pool, id).await
}

/// Creates (does not run) the job that generates the question set `req`
/// asks for (checked: [`QuestionsRequest::checked`]), with the empty set it
/// fills. Returns the job and the set's id. `hierarchy`: a hierarchical
/// set's categories, given (from a file); else the project's own, else the
/// shipped default.
pub async fn create(
    pool: &Db,
    project_id: i64,
    req: QuestionsRequest,
    hierarchy: Option<engine::questions::hierarchy::Hierarchy>,
    no_cache: bool,
) -> AppResult<(JobView, i64)> {
    match req {
        QuestionsRequest::Graph(s) => create_graph_questions(pool, project_id, &s, no_cache).await,
        QuestionsRequest::Summary(s) => create_summary_questions(pool, project_id, &s, no_cache).await,
        QuestionsRequest::Hierarchical(s) => {
            create_hierarchical_questions(pool, project_id, &s, hierarchy, no_cache).await
        }
    }
}

/// Plans graph-text-grounded questions from the project's stored graph and
/// creates (does not run) the job that asks for them, with the empty set it
/// fills.
async fn create_graph_questions(
    pool: &Db,
    project_id: i64,
    settings: &engine::questions::graph::GraphQuestionSettings,
    no_cache: bool,
) -> AppResult<(JobView, i64)> {
    store::projects::get_project(pool, project_id).await?;
    let graph = store::graph::load(pool, project_id).await?;
    let plans = engine::questions::graph::plan(&graph, settings).map_err(|e| AppError::Invalid(e.to_string()))?;
    let described = json!({ "generator": "graph", "settings": settings });
    let total = plans.len() as i64;
    let params = JobParams::Questions(QuestionsParams {
        no_cache,
        generator: Generator::Graph { settings: settings.clone(), plans },
    });
    let id = jobs::create(pool, project_id, &params, total).await?;
    let name = format!(
        "Graph questions: {} node, {} edge, {} subgraph (seed {})",
        settings.node, settings.edge, settings.subgraph, settings.seed
    );
    let set =
        store::questions::create_set(pool, project_id, Some(id), types::QuestionSetKind::Graph, &name, &described)
            .await?;
    Ok((store::jobs::get_job(pool, id).await?, set))
}

/// Creates (does not run) the job that asks for summary-based questions
/// (the LightRAG baseline), with the empty set it fills.
async fn create_summary_questions(
    pool: &Db,
    project_id: i64,
    settings: &engine::questions::summary::SummarySettings,
    no_cache: bool,
) -> AppResult<(JobView, i64)> {
    store::projects::get_project(pool, project_id).await?;
    if store::documents::document_texts(pool, project_id).await?.is_empty() {
        return Err(AppError::Invalid("the project has no documents yet: add a corpus first".into()));
    }
    let described = json!({ "generator": "summary", "settings": settings });
    let params = JobParams::Questions(QuestionsParams {
        no_cache,
        generator: Generator::Summary { settings: settings.clone() },
    });
    let id = jobs::create(pool, project_id, &params, 1).await?;
    let name = format!(
        "Summary-based questions: {} users × {} tasks × {}{}",
        settings.users,
        settings.tasks,
        settings.per_task,
        if settings.replicate_lightrag { " (LightRAG replica)" } else { "" }
    );
    let set =
        store::questions::create_set(pool, project_id, Some(id), types::QuestionSetKind::Summary, &name, &described)
            .await?;
    Ok((store::jobs::get_job(pool, id).await?, set))
}

/// Creates (does not run) the job that writes questions with reference
/// answers in hierarchical categories (the HieraRAG paper's), with the
/// empty set it fills.
async fn create_hierarchical_questions(
    pool: &Db,
    project_id: i64,
    settings: &engine::questions::hierarchy::HierarchicalSettings,
    hierarchy: Option<engine::questions::hierarchy::Hierarchy>,
    no_cache: bool,
) -> AppResult<(JobView, i64)> {
    store::projects::get_project(pool, project_id).await?;
    // The given one (a file), else the project's own, else the shipped one.
    let hierarchy = match hierarchy {
        Some(h) => h,
        None => store::questions::project_hierarchy(pool, project_id)
            .await?
            .unwrap_or_else(engine::questions::hierarchy::default_hierarchy),
    };
    let chunk_ids: Vec<i64> =
        store::documents::chunk_texts(pool, project_id).await?.into_iter().map(|(id, _)| id).collect();
    let plans = engine::questions::hierarchy::plan(&hierarchy, settings, &chunk_ids).map_err(AppError::from)?;
    if plans.is_empty() {
        return Err(AppError::Invalid("the settings ask for no questions".into()));
    }
    let described = json!({ "generator": "hierarchical", "settings": settings, "hierarchy": hierarchy });
    let total = plans.len() as i64;
    let params = JobParams::Questions(QuestionsParams {
        no_cache,
        generator: Generator::Hierarchical { settings: settings.clone(), hierarchy, plans },
    });
    let id = jobs::create(pool, project_id, &params, total).await?;
    let name = format!(
        "Hierarchical questions: {} × levels {:?}, {} per category{} (seed {})",
        settings.dimensions.join("/"),
        settings.levels,
        settings.questions_per_category(),
        if settings.factorial > 0 {
            format!(", LV × QC factorial {} per cell", settings.factorial)
        } else {
            String::new()
        },
        settings.seed
    );
    let set = store::questions::create_set(
        pool,
        project_id,
        Some(id),
        types::QuestionSetKind::Hierarchical,
        &name,
        &described,
    )
    .await?;
    Ok((store::jobs::get_job(pool, id).await?, set))
}

/// Writes a finished questions job's questions into its set, in plan order.
async fn store_questions(pool: &Db, job: &JobView, params: &QuestionsParams) -> AppResult<()> {
    let parameters = JobParams::Questions(params.clone()).to_json();
    let set = store::questions::set_of_job(pool, job.id).await?;
    let mut items = store::jobs::job_items(pool, job.id).await?;
    items.sort_by(|a, b| a.key.cmp(&b.key));
    // Each finished item's result as its generator's record, in key order.
    fn read<I: engine::jobs::JobItem>(items: &[crate::model::JobItemView]) -> AppResult<Vec<I::Outcome>> {
        Ok(jobs::done_results::<I>(items, |_| true)?.into_iter().map(|(_, r)| r).collect())
    }
    let questions: Vec<store::questions::NewQuestion> = match &params.generator {
        Generator::Hierarchical { settings, .. } => {
            let results = read::<engine::questions::hierarchy::Item>(&items)?;
            let seed = Some(settings.seed as i64);
            let kept: Vec<_> = results.iter().filter(|r| !r.dropped).collect();
            let mut described = parameters.clone();
            if let Some(o) = described.as_object_mut() {
                o.remove("no_cache");
                o.remove("plans");
            }
            described["dropped_by_adherence_check"] = json!(results.len() - kept.len());
            store::questions::set_parameters(pool, set, &described).await?;
            kept.into_iter()
                .map(|r| {
                    let planned = r.planned.clone();
                    // "QC 8" (a dimension at a granularity) or "LV × QC" (a factorial cell).
                    let level = if planned.categories.len() > 1 {
                        planned.categories.iter().filter_map(|c| c.split('/').next()).collect::<Vec<_>>().join(" × ")
                    } else {
                        let c = &planned.categories[0];
                        format!("{} {}", c.split('/').next().unwrap_or(""), 1 << c.matches('/').count())
                    };
                    store::questions::NewQuestion {
                        question: r.question.clone(),
                        level: Some(level),
                        category: Some(planned.categories.join(" × ")),
                        expertise: Some(planned.expertise),
                        reference_answer: Some(r.answer.clone()),
                        source_chunk_ids: vec![planned.chunk_id],
                        generator: types::Generator::new(types::QuestionWriter::Hierarchical),
                        prompt_hash: r.prompt_hash.clone(),
                        seed,
                        ..Default::default()
                    }
                })
                .collect()
        }
        Generator::Summary { .. } => {
            let proposed = read::<engine::questions::summary::Item>(&items)?.into_iter().next();
            let (asked, prompt_hash) = proposed.map_or((Vec::new(), None), |p| (p.questions, p.prompt_hash));
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
                    generator: types::Generator::new(types::QuestionWriter::Summary),
                    prompt_hash: prompt_hash.clone(),
                    ..Default::default()
                })
                .collect()
        }
        Generator::Graph { settings, .. } => {
            let seed = Some(settings.seed as i64);
            read::<engine::questions::graph::Item>(&items)?
                .into_iter()
                .map(|r| store::questions::NewQuestion {
                    question: r.question,
                    level: Some(r.plan.level.name().to_string()),
                    context_chunk_ids: Some(r.plan.given_chunk_ids()),
                    source_chunk_ids: r.plan.source_chunk_ids,
                    nodes: r.plan.nodes,
                    edges: r.plan.edges,
                    walk: r.plan.walk,
                    generator: types::Generator::new(types::QuestionWriter::Graph),
                    prompt_hash: r.prompt_hash,
                    seed,
                    ..Default::default()
                })
                .collect()
        }
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

/// The question-set job: one item per planned question (`q-…` graph,
/// `h-…` hierarchical), or the one `summary` item.
pub struct QuestionsStage;

impl Stage for QuestionsStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, params: &'a JobParams) -> Items<'a> {
        Box::pin(async move {
            let project = project_of(job)?;
            Ok(match &params.questions(job.id)?.generator {
                Generator::Hierarchical { hierarchy, plans, .. } => {
                    let chunks: HashMap<i64, String> =
                        store::documents::chunk_texts(pool, project).await?.into_iter().collect();
                    plans
                        .iter()
                        .enumerate()
                        .map(|(i, p)| {
                            let text = chunks.get(&p.chunk_id).map_or("", String::as_str);
                            WorkItem::new(
                                ItemKey::Hierarchical(i),
                                &engine::questions::hierarchy::item(hierarchy, p, text),
                            )
                        })
                        .collect()
                }
                Generator::Summary { settings } => {
                    let documents = store::documents::document_texts(pool, project).await?;
                    let texts: Vec<&str> = documents.iter().map(String::as_str).collect();
                    let description = engine::questions::summary::describe_dataset(&texts, settings);
                    vec![engine::questions::summary::item(&description, settings)]
                }
                Generator::Graph { plans, .. } => {
                    let graph = store::graph::load(pool, project).await?;
                    let chunks: HashMap<i64, String> =
                        store::documents::chunk_texts(pool, project).await?.into_iter().collect();
                    engine::questions::graph::items(&graph, plans, &chunks)
                        .iter()
                        .enumerate()
                        .map(|(i, item)| WorkItem::new(ItemKey::Question(i), item))
                        .collect()
                }
            })
        })
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move {
            let (gateway, job_id) = (run.gateway, run.job.id);
            let generator = &run.params.questions(job_id)?.generator;
            let adherence = match generator {
                Generator::Hierarchical { settings, .. } => settings.adherence_check,
                _ => false,
            };
            run.each(items, |item| {
                let work: BoxFuture<'_, engine::jobs::ItemOutcome> = match generator {
                    Generator::Hierarchical { .. } => {
                        Box::pin(engine::questions::hierarchy::run_item(gateway, job_id, item, adherence))
                    }
                    Generator::Summary { .. } => Box::pin(engine::questions::summary::run_item(gateway, job_id, item)),
                    Generator::Graph { .. } => Box::pin(engine::questions::graph::run_item(gateway, job_id, item)),
                };
                work
            })
            .await
        })
    }

    fn finish<'a>(&'a self, run: &'a Run<'a>) -> BoxFuture<'a, AppResult<()>> {
        Box::pin(async move { store_questions(run.pool, run.job, run.params.questions(run.job.id)?).await })
    }
}

/// The job listing the entities each question of a set names: one item per question, `m-QID`.
pub struct MentionsStage;

impl Stage for MentionsStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, params: &'a JobParams) -> Items<'a> {
        Box::pin(async move {
            let set = params.mentions(job.id)?.set_id;
            Ok(store::questions::list_questions(pool, set)
                .await?
                .into_iter()
                .map(|q| {
                    let item = engine::graph::mentions::Item { question_id: q.id, question: q.question };
                    WorkItem::new(ItemKey::Mentions(q.id), &item)
                })
                .collect())
        })
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move {
            let (gateway, job_id) = (run.gateway, run.job.id);
            run.each(items, |item| engine::graph::mentions::run_item(gateway, job_id, item)).await
        })
    }
}

/// The job scoring the relevance of retrieved context to each question of
/// a set: one item per question, `r-QID`. BM25's top chunks are found when
/// the items are made; a built-in method retrieves when each item runs (it
/// may call the LLM).
pub struct RelevanceStage;

impl Stage for RelevanceStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, params: &'a JobParams) -> Items<'a> {
        Box::pin(async move {
            let project = project_of(job)?;
            let p = params.relevance(job.id)?;
            let questions = store::questions::list_questions(pool, p.set_id).await?;
            if p.retriever != "bm25" {
                return Ok(questions
                    .into_iter()
                    .map(|q| {
                        let item = relevance::Item {
                            question_id: q.id,
                            question: q.question,
                            context: String::new(),
                            chunk_ids: vec![],
                        };
                        WorkItem::new(ItemKey::Relevance(q.id), &item)
                    })
                    .collect());
            }
            let chunks = store::documents::chunk_texts(pool, project).await?;
            let index = engine::rag::bm25::Bm25Index::new(chunks.iter().map(|(id, t)| (*id, t.as_str())));
            let text: HashMap<i64, &str> = chunks.iter().map(|(id, t)| (*id, t.as_str())).collect();
            Ok(questions
                .into_iter()
                .map(|q| {
                    let hits = index.search(&q.question, p.k);
                    let context: Vec<&str> = hits.iter().filter_map(|(id, _)| text.get(id).copied()).collect();
                    let item = relevance::Item {
                        question_id: q.id,
                        question: q.question,
                        context: context.join("\n\n"),
                        chunk_ids: hits.iter().map(|h| h.0).collect(),
                    };
                    WorkItem::new(ItemKey::Relevance(q.id), &item)
                })
                .collect())
        })
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move {
            let (gateway, job_id) = (run.gateway, run.job.id);
            let p = run.params.relevance(job_id)?;
            if p.retriever == "bm25" {
                return run.each(items, |item| engine::questions::relevance::run_item(gateway, job_id, item)).await;
            }
            let project = project_of(run.job)?;
            let corpus = std::sync::Arc::new(crate::ssr::answers::corpus(run.pool, project).await?);
            let built = crate::ssr::answers::build_method(
                run.pool,
                gateway,
                run.llm,
                project,
                corpus,
                &p.retriever,
                &serde_json::Value::Null,
            )
            .await?;
            Ok(match built {
                Ok(method) => {
                    run.each(items, |item| {
                        engine::questions::relevance::run_item_retrieving(method.as_ref(), gateway, job_id, item)
                    })
                    .await?
                }
                Err(e) => Err(e),
            })
        })
    }
}

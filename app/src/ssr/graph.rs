//! The graph stage's jobs: the knowledge graph of a project (extraction
//! per chunk, merged; then the merged descriptions over the budget
//! summarised) and one-sentence summaries of every chunk.

use crate::ssr::store::Db;
use engine::graph::extract::ChunkExtraction;
use engine::jobs::{ItemKey, RunEnd, WorkItem};

use crate::error::{AppError, AppResult};
use crate::model::{JobItemView, JobView};
use crate::ssr::jobs::params::{GraphParams, SummariesParams};
use crate::ssr::jobs::{self, project_of, Ended, Items, JobParams, Run, Stage};
use crate::ssr::store;

/// Creates (does not run) a graph job for a project.
pub async fn create_graph(
    pool: &Db,
    project_id: i64,
    settings: &engine::graph::extract::ExtractSettings,
    no_cache: bool,
) -> AppResult<JobView> {
    store::projects::get_project(pool, project_id).await?;
    let chunks = store::documents::chunk_texts(pool, project_id).await?;
    if chunks.is_empty() {
        return Err(AppError::Invalid("the project has no chunks yet: add documents to its corpus first".into()));
    }
    let params = JobParams::Graph(GraphParams { no_cache, request: settings.clone() });
    let id = jobs::create(pool, project_id, &params, chunks.len() as i64).await?;
    store::jobs::get_job(pool, id).await
}

/// Merges a graph job's finished extraction items into one graph, as
/// extracted (no description summaries applied). A stored extraction that
/// cannot be read stops the job naming its item, rather than leaving the
/// chunk out of the graph in silence.
fn extracted_graph(items: &[JobItemView]) -> AppResult<engine::graph::KnowledgeGraph> {
    let mut graph = engine::graph::KnowledgeGraph::default();
    // In chunk order, not the order items finished in: descriptions are
    // combined in arrival order, and the summaries' cache keys depend on it.
    let mut extractions: Vec<(i64, ChunkExtraction)> =
        jobs::done_results::<engine::graph::ChunkItem>(items, |k| matches!(k, ItemKey::Chunk(_)))?
            .into_iter()
            .filter_map(|(key, x)| match key {
                ItemKey::Chunk(id) => Some((id, x)),
                _ => None,
            })
            .collect();
    extractions.sort_unstable_by_key(|(chunk, _)| *chunk);
    let mut offline = false;
    for (chunk, x) in extractions {
        graph.merge(chunk, &x.extraction);
        offline |= x.offline;
    }
    if offline {
        engine::graph::offline::resolve_aliases(&mut graph);
    }
    Ok(graph)
}

/// Puts a graph job's finished description summaries in place.
fn apply_summaries(graph: &mut engine::graph::KnowledgeGraph, items: &[JobItemView]) -> AppResult<()> {
    let pick = |k: &ItemKey| matches!(k, ItemKey::Node(_) | ItemKey::Edge(..));
    for (key, summary) in jobs::done_results::<engine::graph::describe::Item>(items, pick)? {
        engine::graph::describe::apply(graph, &key, &summary);
    }
    Ok(())
}

/// Creates (does not run) a summaries job for a project. With `no_cache`,
/// every call goes to the provider even when a cached reply exists.
pub async fn create_summaries(pool: &Db, project_id: i64, no_cache: bool) -> AppResult<JobView> {
    store::projects::get_project(pool, project_id).await?;
    let chunks = store::documents::chunk_texts(pool, project_id).await?;
    if chunks.is_empty() {
        return Err(AppError::Invalid("the project has no chunks yet: add documents to its corpus first".into()));
    }
    let params = JobParams::Summaries(SummariesParams { no_cache });
    let id = jobs::create(pool, project_id, &params, chunks.len() as i64).await?;
    store::jobs::get_job(pool, id).await
}

/// One item per chunk of the project, `chunk-ID`, made from its text by `item`.
async fn chunk_items<I: engine::jobs::JobItem>(
    pool: &Db,
    job: &JobView,
    item: fn(String) -> I,
) -> AppResult<Vec<WorkItem>> {
    Ok(store::documents::chunk_texts(pool, project_of(job)?)
        .await?
        .into_iter()
        .map(|(id, text)| WorkItem::new(ItemKey::Chunk(id), &item(text)))
        .collect())
}

/// The knowledge-graph job.
pub struct GraphStage;

impl Stage for GraphStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, _: &'a JobParams) -> Items<'a> {
        Box::pin(chunk_items(pool, job, |text| engine::graph::ChunkItem { text }))
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move {
            let extract = run.params.graph(run.job.id)?.request.clone();
            let (pool, job_id, gateway) = (run.pool, run.job.id, run.gateway);
            let chunk_count = items.len();
            let end = run
                .phase
                .run(items, run.phase.concurrency, |item| {
                    engine::graph::extract::run_item(gateway, job_id, item, &extract)
                })
                .await;
            if !matches!(end, Ok(RunEnd::Finished)) {
                return Ok(end);
            }
            // With no extraction there is nothing to describe or store.
            if let Some(why) = jobs::every_item_failed(pool, job_id, None).await? {
                return Ok(Err(why));
            }
            // Second phase: summarise merged descriptions over the budget. The
            // items follow from the extractions alone (never from a graph with
            // some summaries applied), so a resumed job finds the same ones,
            // skips those already done, and its total stays right.
            let mut graph = extracted_graph(&store::jobs::job_items(pool, job_id).await?)?;
            let targets = engine::graph::describe::items(&graph, extract.summary_budget);
            store::jobs::set_total(pool, job_id, (chunk_count + targets.len()) as i64).await?;
            let end = run
                .phase
                .run(targets, run.phase.concurrency, |item| engine::graph::describe::run_item(gateway, job_id, item))
                .await;
            if matches!(end, Ok(RunEnd::Finished)) {
                apply_summaries(&mut graph, &store::jobs::job_items(pool, job_id).await?)?;
                store::graph::replace(pool, project_of(run.job)?, Some(job_id), &graph).await?;
            }
            Ok(end)
        })
    }
}

/// The chunk-summaries job.
pub struct SummariesStage;

impl Stage for SummariesStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, _: &'a JobParams) -> Items<'a> {
        Box::pin(chunk_items(pool, job, |text| engine::graph::summarise::Item { text }))
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move {
            let (job_id, gateway) = (run.job.id, run.gateway);
            run.each(items, |item| engine::graph::summarise::run_item(gateway, job_id, item)).await
        })
    }
}

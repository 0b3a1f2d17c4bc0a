//! Question-set diagnostics over the store: the entities a set mentions —
//! the project's graph names matched in the questions, or the entities an
//! LLM listed per question (a `mentions` job) — and the relevance of
//! retrieved context (a `relevance` job); for the server functions, the SVG
//! routes and the CLI alike.

use crate::ssr::store::Db;
use engine::questions::diagnostics::{entity_distribution, pie_svg, EntityDistribution};

use crate::error::{AppError, AppResult};
use crate::model::{EntityStats, QuestionSetView, RelevanceStats};
use crate::ssr::store;

pub use types::EntitySource;

/// A set's entity mentions as found by one source.
pub struct SetEntities {
    pub set: QuestionSetView,
    pub source: EntitySource,
    pub distribution: EntityDistribution,
    /// For [`EntitySource::Llm`]: the job, and who answered it.
    pub job: Option<(i64, Option<String>)>,
}

/// The results of a job's finished items, as the stage's result record.
async fn done_results<I: engine::jobs::JobItem>(pool: &Db, job_id: i64) -> AppResult<Vec<I::Outcome>> {
    let items = store::jobs::job_items(pool, job_id).await?;
    Ok(crate::ssr::jobs::done_results::<I>(&items, |_| true)?.into_iter().map(|(_, r)| r).collect())
}

/// The entities a set's questions mention. `None` for
/// [`EntitySource::Llm`] when no LLM has listed them yet.
pub async fn set_entities(pool: &Db, set_id: i64, source: EntitySource) -> AppResult<Option<SetEntities>> {
    let set = store::questions::get_set(pool, set_id).await?;
    let names = store::graph::entity_names(pool, set.project_id).await?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    match source {
        EntitySource::Graph => {
            if names.is_empty() {
                return Err(AppError::Invalid(
                    "the project has no graph yet: entities are matched against it (or have the LLM list them)".into(),
                ));
            }
            let questions = store::questions::list_questions(pool, set_id).await?;
            let texts: Vec<&str> = questions.iter().map(|q| q.question.as_str()).collect();
            let distribution = entity_distribution(&texts, &refs);
            Ok(Some(SetEntities { set, source, distribution, job: None }))
        }
        EntitySource::Llm => {
            let Some(job) = store::jobs::latest_for_set(pool, crate::model::JobKind::Mentions, set_id).await? else {
                return Ok(None);
            };
            let per_question: Vec<Vec<String>> = done_results::<engine::graph::mentions::Item>(pool, job)
                .await?
                .into_iter()
                .map(|r| r.entities)
                .collect();
            let distribution = engine::questions::diagnostics::mention_distribution(&per_question, &refs);
            let made_by = store::jobs::made_by(pool, job).await?;
            Ok(Some(SetEntities { set, source, distribution, job: Some((job, made_by)) }))
        }
    }
}

impl SetEntities {
    pub fn stats(&self) -> EntityStats {
        let d = &self.distribution;
        EntityStats {
            set_id: self.set.id,
            set_name: self.set.name.clone(),
            source: self.source,
            job_id: self.job.as_ref().map(|j| j.0),
            made_by: self.job.as_ref().and_then(|j| j.1.clone()),
            questions: self.set.questions,
            covered: d.questions as i64,
            with_entity: d.with_entity as i64,
            distinct: d.distinct as i64,
            in_graph: d.in_graph as i64,
            top_share: d.top_share(),
            top: d.top(10).into_iter().map(|(n, c)| (n, c as i64)).collect(),
        }
    }

    /// The top-10 entity pie chart (Fig. 9) as SVG; its title says how the
    /// entities were found.
    pub fn svg(&self) -> String {
        let d = &self.distribution;
        let how = match &self.job {
            None => "graph names matched".to_string(),
            Some((_, Some(who))) => format!("listed by {who}"),
            Some((_, None)) => "listed per question".to_string(),
        };
        pie_svg(
            &format!("{}\n{} distinct entities in {} questions ({how})", self.set.name, d.distinct, d.questions),
            &d.top(10),
        )
    }
}

/// Relevance scores of a set from its latest relevance job (the job and
/// the scores of the questions it finished), if it has one.
pub async fn set_relevance(pool: &Db, set_id: i64) -> AppResult<Option<(i64, Vec<u8>)>> {
    let Some(job) = store::jobs::latest_for_set(pool, crate::model::JobKind::Relevance, set_id).await? else {
        return Ok(None);
    };
    let scores =
        done_results::<engine::questions::relevance::Item>(pool, job).await?.into_iter().map(|r| r.score).collect();
    Ok(Some((job, scores)))
}

/// The retriever a relevance job scored (jobs before the choice: BM25).
pub async fn retriever_of(pool: &Db, job_id: i64) -> AppResult<String> {
    let job = store::jobs::get_job(pool, job_id).await?;
    let parameters: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
    Ok(parameters["retriever"].as_str().unwrap_or("bm25").to_string())
}

pub async fn relevance_stats(
    pool: &Db,
    set_id: i64,
    job_id: i64,
    scores: &[u8],
    questions: i64,
) -> AppResult<RelevanceStats> {
    let histogram = engine::questions::relevance::histogram(scores);
    Ok(RelevanceStats {
        set_id,
        job_id,
        retriever: retriever_of(pool, job_id).await?,
        made_by: store::jobs::made_by(pool, job_id).await?,
        scored: scores.len() as i64,
        questions,
        mean: scores.iter().map(|s| *s as f64).sum::<f64>() / scores.len().max(1) as f64,
        histogram: histogram.iter().map(|n| *n as i64).collect(),
    })
}

pub fn relevance_svg(set: &QuestionSetView, retriever: &str, scores: &[u8]) -> String {
    engine::questions::relevance::histogram_svg(
        &format!("Set {}: relevance of the {retriever} context, {} questions", set.id, scores.len()),
        &engine::questions::relevance::histogram(scores),
    )
}

//! Question-set diagnostics over the store: the entities a set mentions,
//! matched against the project's current graph (for the server functions,
//! the SVG route and the CLI alike).

use engine::questions::diagnostics::{entity_distribution, pie_svg, EntityDistribution};
use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::model::{EntityStats, QuestionSetView, RelevanceStats};
use crate::store;

/// Entities of the project's graph mentioned by a set's questions.
pub async fn set_entities(pool: &SqlitePool, set_id: i64) -> AppResult<(QuestionSetView, EntityDistribution)> {
    let set = store::questions::get_set(pool, set_id).await?;
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM graph_nodes WHERE project_id = ?")
        .bind(set.project_id)
        .fetch_all(pool)
        .await?;
    if names.is_empty() {
        return Err(AppError::Invalid("the project has no graph yet: entities are matched against it".into()));
    }
    let questions = store::questions::list_questions(pool, set_id).await?;
    let texts: Vec<&str> = questions.iter().map(|q| q.question.as_str()).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    Ok((set, entity_distribution(&texts, &refs)))
}

pub fn stats(set: &QuestionSetView, d: &EntityDistribution) -> EntityStats {
    EntityStats {
        set_id: set.id,
        set_name: set.name.clone(),
        questions: d.questions as i64,
        with_entity: d.with_entity as i64,
        distinct: d.distinct as i64,
        top_share: d.top_share(),
        top: d.top(10).into_iter().map(|(n, c)| (n, c as i64)).collect(),
    }
}

/// The set's top-10 entity pie chart (Fig. 9) as SVG.
pub fn entities_svg(set: &QuestionSetView, d: &EntityDistribution) -> String {
    pie_svg(&format!("{} — {} distinct entities in {} questions", set.name, d.distinct, d.questions), &d.top(10))
}

/// Relevance scores of a set from its latest relevance job (the job and
/// the scores of the questions it finished), if it has one.
pub async fn set_relevance(pool: &SqlitePool, set_id: i64) -> AppResult<Option<(i64, Vec<u8>)>> {
    let job: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM jobs WHERE kind = 'relevance' AND json_extract(parameters, '$.set_id') = ? ORDER BY id DESC LIMIT 1",
    )
    .bind(set_id)
    .fetch_optional(pool)
    .await?;
    let Some(job) = job else { return Ok(None) };
    let scores = store::jobs::job_items(pool, job)
        .await?
        .into_iter()
        .filter(|i| i.status == "done")
        .filter_map(|i| serde_json::from_str::<serde_json::Value>(i.result.as_deref()?).ok()?["score"].as_u64())
        .map(|s| s as u8)
        .collect();
    Ok(Some((job, scores)))
}

pub fn relevance_stats(set_id: i64, job_id: i64, scores: &[u8], questions: i64) -> RelevanceStats {
    let histogram = engine::questions::relevance::histogram(scores);
    RelevanceStats {
        set_id,
        job_id,
        scored: scores.len() as i64,
        questions,
        mean: scores.iter().map(|s| *s as f64).sum::<f64>() / scores.len().max(1) as f64,
        histogram: histogram.iter().map(|n| *n as i64).collect(),
    }
}

pub fn relevance_svg(set: &QuestionSetView, scores: &[u8]) -> String {
    engine::questions::relevance::histogram_svg(
        &format!("Set {}: relevance of BM25 context, {} questions", set.id, scores.len()),
        &engine::questions::relevance::histogram(scores),
    )
}

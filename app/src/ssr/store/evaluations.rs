//! Evaluations in SQLite: their rows, and the call-log figures their
//! reports show. (The judgments are the evaluation job's items.)

use super::jobs::JobSteps;
use super::{on_db, Db};

use crate::error::{AppError, AppResult};

/// An evaluation's row: id, project, question set and its name, job, name,
/// settings JSON, answer sets JSON, pairs JSON, judge, created.
pub type Row = (i64, i64, i64, String, Option<i64>, String, String, String, String, String, String);

const SELECT: &str =
    "SELECT e.id, e.project_id, e.question_set_id, q.name, e.job_id, e.name, e.settings, e.answer_sets,
        e.pairs, e.judge, e.created_at FROM evaluations e JOIN question_sets q ON q.id = e.question_set_id";

/// What a new evaluation row holds.
pub struct NewEvaluation<'a> {
    pub project_id: i64,
    pub question_set_id: i64,
    pub job_id: i64,
    pub name: &'a str,
    pub settings: &'a serde_json::Value,
    pub answer_sets: &'a [i64],
    pub pairs: &'a [(i64, i64)],
    pub judge: &'a str,
}

/// Inserts an evaluation and records its id in its job's parameters.
pub async fn insert(pool: &Db, e: &NewEvaluation<'_>) -> AppResult<i64> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO evaluations (project_id, question_set_id, job_id, name, settings, answer_sets, pairs, judge)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(e.project_id)
        .bind(e.question_set_id)
        .bind(e.job_id)
        .bind(e.name)
        .bind(e.settings.to_string())
        .bind(serde_json::to_string(e.answer_sets).unwrap_or_default())
        .bind(serde_json::to_string(e.pairs).unwrap_or_default())
        .bind(e.judge)
        .fetch_one(&mut *tx)
        .await?;
        tx.name_in_job(e.job_id, "evaluation_id", id).await?;
        tx.commit().await?;
        Ok(id)
    })
}

pub async fn get(pool: &Db, id: i64) -> AppResult<Row> {
    on_db!(pool, |db| {
        let row: Option<Row> = sqlx::query_as(&format!("{SELECT} WHERE e.id = $1")).bind(id).fetch_optional(db).await?;
        row.ok_or_else(|| AppError::NotFound(format!("evaluation {id} does not exist")))
    })
}

pub async fn list(pool: &Db, project_id: i64) -> AppResult<Vec<Row>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(&format!("{SELECT} WHERE e.project_id = $1 ORDER BY e.id DESC"))
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// The evaluation a job runs.
pub async fn of_job(pool: &Db, job_id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        let id: Option<i64> =
            sqlx::query_scalar("SELECT id FROM evaluations WHERE job_id = $1").bind(job_id).fetch_optional(db).await?;
        id.ok_or_else(|| AppError::NotFound(format!("job {job_id} runs no evaluation")))
    })
}

pub async fn delete(pool: &Db, id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("DELETE FROM evaluations WHERE id = $1").bind(id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("evaluation {id} does not exist")));
        }
        Ok(())
    })
}

/// `(method, parameters)` of every answer set a project's sanity checks checked.
pub async fn sanity_checked(pool: &Db, project_id: i64) -> AppResult<Vec<(String, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT a.method, a.parameters FROM evaluations e JOIN answer_sets a
            ON a.id = CAST(json_extract(e.answer_sets, '$[0]') AS BIGINT)
          WHERE e.project_id = $1 AND CAST(json_extract(e.settings, '$.sanity') AS BIGINT) = 1 ORDER BY e.id",
        )
        .bind(project_id)
        .fetch_all(db)
        .await?)
    })
}

/// A job's calls and how many came from the cache.
pub async fn call_counts(pool: &Db, job_id: i64) -> AppResult<(i64, i64)> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT COUNT(*), CAST(COALESCE(SUM(CASE WHEN cached THEN 1 ELSE 0 END), 0) AS BIGINT) FROM llm_calls WHERE job_id = $1")
        .bind(job_id)
        .fetch_one(db)
        .await?)
    })
}

/// Per item of a job: calls, cached calls, tokens, cost.
pub async fn item_costs(pool: &Db, job_id: i64) -> AppResult<Vec<(String, i64, i64, i64, f64)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT item, COUNT(*), CAST(COALESCE(SUM(CASE WHEN cached THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS BIGINT),
                COALESCE(SUM(cost_usd), 0.0)
           FROM llm_calls WHERE job_id = $1 AND item IS NOT NULL GROUP BY item",
        )
        .bind(job_id)
        .fetch_all(db)
        .await?)
    })
}

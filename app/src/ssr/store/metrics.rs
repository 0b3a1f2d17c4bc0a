//! Metrics runs in SQLite: their rows and, once their job is done, their
//! reports. (The scores per question are the run's job items.)

use super::jobs::JobSteps;
use super::{on_db, Db};

use crate::error::{AppError, AppResult};

/// A run's row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Row {
    pub id: i64,
    pub project_id: i64,
    pub question_set_id: i64,
    pub question_set: String,
    pub job_id: Option<i64>,
    pub answer_sets: String,
    pub k: i64,
    pub bins: i64,
    pub report: Option<String>,
    pub created_at: String,
}

impl Row {
    pub fn answer_set_ids(&self) -> Vec<i64> {
        serde_json::from_str(&self.answer_sets).unwrap_or_default()
    }
}

const SELECT: &str = "SELECT m.id, m.project_id, m.question_set_id, q.name AS question_set, m.job_id, m.answer_sets,
    m.k, m.bins, m.report, m.created_at FROM metrics_runs m JOIN question_sets q ON q.id = m.question_set_id";

/// Inserts a run and records its id in its job's parameters.
pub async fn insert(
    pool: &Db,
    project_id: i64,
    set_id: i64,
    job_id: i64,
    answer_sets: &[i64],
    k: usize,
    bins: usize,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO metrics_runs (project_id, question_set_id, job_id, answer_sets, k, bins)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(project_id)
        .bind(set_id)
        .bind(job_id)
        .bind(serde_json::to_string(answer_sets).unwrap_or_default())
        .bind(k as i64)
        .bind(bins as i64)
        .fetch_one(&mut *tx)
        .await?;
        tx.name_in_job(job_id, "run_id", id).await?;
        tx.commit().await?;
        Ok(id)
    })
}

pub async fn get(pool: &Db, id: i64) -> AppResult<Row> {
    on_db!(pool, |db| {
        let row: Option<Row> = sqlx::query_as(&format!("{SELECT} WHERE m.id = $1")).bind(id).fetch_optional(db).await?;
        row.ok_or_else(|| AppError::NotFound(format!("metrics run {id} does not exist")))
    })
}

pub async fn list(pool: &Db, project_id: i64) -> AppResult<Vec<Row>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(&format!("{SELECT} WHERE m.project_id = $1 ORDER BY m.id DESC"))
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

pub async fn save_report(pool: &Db, id: i64, report: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("UPDATE metrics_runs SET report = $1 WHERE id = $2").bind(report).bind(id).execute(db).await?;
        Ok(())
    })
}

pub async fn delete(pool: &Db, id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("DELETE FROM metrics_runs WHERE id = $1").bind(id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("metrics run {id} does not exist")));
        }
        Ok(())
    })
}

//! Experiments (a manifest's run, stage by stage) and the stages a
//! project's experiments finished, by fingerprint, for reuse.

use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};

/// An experiment's row.
#[derive(sqlx::FromRow)]
pub struct Row {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub manifest: String,
    pub plan: String,
    pub llm: String,
    pub offline: bool,
    pub status: String,
    pub stage: Option<String>,
    pub job_id: Option<i64>,
    /// Stage label → its finished job, as the run goes.
    pub jobs: String,
    pub outcome: Option<String>,
    pub error: Option<String>,
    pub created_at: String,
    pub finished_at: Option<String>,
}

/// A new, running experiment; its id.
pub async fn insert(
    pool: &SqlitePool,
    project_id: i64,
    name: &str,
    manifest: &str,
    plan: &str,
    llm: &str,
    offline: bool,
) -> AppResult<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO experiments (project_id, name, manifest, plan, llm, offline) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(project_id)
    .bind(name)
    .bind(manifest)
    .bind(plan)
    .bind(llm)
    .bind(offline)
    .fetch_one(pool)
    .await?)
}

/// The stage running now and its job.
pub async fn set_stage(pool: &SqlitePool, id: i64, label: &str, job_id: i64) -> AppResult<()> {
    stage_update(pool, "UPDATE experiments SET stage = ?, job_id = ? WHERE id = ?", id, label, job_id).await
}

/// Records a stage's finished job (its calls and cost show at once).
pub async fn record_job(pool: &SqlitePool, id: i64, label: &str, job_id: i64) -> AppResult<()> {
    let sql = "UPDATE experiments SET jobs = json_set(jobs, '$.\"' || ? || '\"', ?) WHERE id = ?";
    stage_update(pool, sql, id, label, job_id).await
}

async fn stage_update(pool: &SqlitePool, sql: &str, id: i64, label: &str, job_id: i64) -> AppResult<()> {
    sqlx::query(sql).bind(label).bind(job_id).bind(id).execute(pool).await?;
    Ok(())
}

/// Ends a run: its status (`done`, `failed`), outcome (JSON) and error.
pub async fn finish(
    pool: &SqlitePool,
    id: i64,
    status: &str,
    outcome: Option<&str>,
    error: Option<&str>,
) -> AppResult<()> {
    sqlx::query(
        "UPDATE experiments SET status = ?, outcome = ?, error = ?, stage = NULL,
            finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?",
    )
    .bind(status)
    .bind(outcome)
    .bind(error)
    .bind(id)
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn get(pool: &SqlitePool, id: i64) -> AppResult<Row> {
    sqlx::query_as("SELECT * FROM experiments WHERE id = ?")
        .bind(id)
        .fetch_optional(pool)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("experiment {id} does not exist")))
}

/// Every experiment, newest first: (id, project id, name, status, created).
pub async fn list_all(pool: &SqlitePool) -> AppResult<Vec<(i64, i64, String, String, String)>> {
    Ok(sqlx::query_as("SELECT id, project_id, name, status, created_at FROM experiments ORDER BY id DESC LIMIT 50")
        .fetch_all(pool)
        .await?)
}

/// The object and job of a finished stage with this fingerprint in the project.
pub async fn known_stage(
    pool: &SqlitePool,
    project_id: i64,
    fingerprint: &str,
) -> AppResult<Option<(i64, Option<i64>)>> {
    Ok(sqlx::query_as("SELECT object_id, job_id FROM experiment_stages WHERE project_id = ? AND fingerprint = ?")
        .bind(project_id)
        .bind(fingerprint)
        .fetch_optional(pool)
        .await?)
}

/// Remembers a finished stage's object and job by its fingerprint.
pub async fn remember_stage(
    pool: &SqlitePool,
    project_id: i64,
    fingerprint: &str,
    object_id: i64,
    job_id: Option<i64>,
) -> AppResult<()> {
    sqlx::query(
        "INSERT OR REPLACE INTO experiment_stages (project_id, fingerprint, object_id, job_id) VALUES (?, ?, ?, ?)",
    )
    .bind(project_id)
    .bind(fingerprint)
    .bind(object_id)
    .bind(job_id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Whether the object a stage of `kind` made is still there.
pub async fn object_exists(pool: &SqlitePool, kind: &str, id: i64) -> AppResult<bool> {
    let table = match kind {
        "questions" => "question_sets",
        "answers" => "answer_sets",
        "evaluation" | "sanity" => "evaluations",
        "metrics" => "metrics_runs",
        _ => "projects",
    };
    let found: Option<i64> =
        sqlx::query_scalar(&format!("SELECT id FROM {table} WHERE id = ?")).bind(id).fetch_optional(pool).await?;
    Ok(found.is_some())
}

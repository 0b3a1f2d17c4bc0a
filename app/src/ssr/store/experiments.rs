//! Experiments (a manifest's run, stage by stage) and the stages a
//! project's experiments finished, by fingerprint, for reuse.

use super::{on_db, Db};

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
    pool: &Db,
    project_id: i64,
    name: &str,
    manifest: &str,
    plan: &str,
    llm: &str,
    offline: bool,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
        "INSERT INTO experiments (project_id, name, manifest, plan, llm, offline) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(project_id)
    .bind(name)
    .bind(manifest)
    .bind(plan)
    .bind(llm)
    .bind(offline)
    .fetch_one(db)
    .await?)
    })
}

/// The stage running now and its job.
pub async fn set_stage(pool: &Db, id: i64, label: &str, job_id: i64) -> AppResult<()> {
    stage_update(pool, "UPDATE experiments SET stage = $1, job_id = $2 WHERE id = $3", id, label, job_id).await
}

/// Records a stage's finished job (its calls and cost show at once).
pub async fn record_job(pool: &Db, id: i64, label: &str, job_id: i64) -> AppResult<()> {
    let sql = "UPDATE experiments SET jobs = json_set(jobs, '$.\"' || $1 || '\"', $2) WHERE id = $3";
    stage_update(pool, sql, id, label, job_id).await
}

async fn stage_update(pool: &Db, sql: &str, id: i64, label: &str, job_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(sql).bind(label).bind(job_id).bind(id).execute(db).await?;
        Ok(())
    })
}

/// Ends a run: its status (`done`, `failed`), outcome (JSON) and error.
pub async fn finish(
    pool: &Db,
    id: i64,
    status: types::ExperimentStatus,
    outcome: Option<&str>,
    error: Option<&str>,
) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "UPDATE experiments SET status = $1, outcome = $2, error = $3, stage = NULL,
            finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = $4",
        )
        .bind(status.as_str())
        .bind(outcome)
        .bind(error)
        .bind(id)
        .execute(db)
        .await?;
        Ok(())
    })
}

pub async fn get(pool: &Db, id: i64) -> AppResult<Row> {
    on_db!(pool, |db| {
        sqlx::query_as("SELECT * FROM experiments WHERE id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("experiment {id} does not exist")))
    })
}

/// The 50 newest experiments, newest first.
pub async fn list_all(pool: &Db) -> AppResult<Vec<crate::model::ExperimentBrief>> {
    let rows: Vec<(i64, i64, String, String, String)> = on_db!(pool, |db| {
        sqlx::query_as("SELECT id, project_id, name, status, created_at FROM experiments ORDER BY id DESC LIMIT 50")
            .fetch_all(db)
            .await
    })?;
    rows.into_iter()
        .map(|(id, project_id, name, status, created_at)| {
            let status = super::stored("experiments", id, &status)?;
            Ok(crate::model::ExperimentBrief { id, project_id, name, status, created_at })
        })
        .collect()
}

/// The object and job of a finished stage with this fingerprint in the project.
pub async fn known_stage(pool: &Db, project_id: i64, fingerprint: &str) -> AppResult<Option<(i64, Option<i64>)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT object_id, job_id FROM experiment_stages WHERE project_id = $1 AND fingerprint = $2")
            .bind(project_id)
            .bind(fingerprint)
            .fetch_optional(db)
            .await?)
    })
}

/// Remembers a finished stage's object and job by its fingerprint.
pub async fn remember_stage(
    pool: &Db,
    project_id: i64,
    fingerprint: &str,
    object_id: i64,
    job_id: Option<i64>,
) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "INSERT INTO experiment_stages (project_id, fingerprint, object_id, job_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, fingerprint) DO UPDATE SET object_id = excluded.object_id,
            job_id = excluded.job_id, created_at = excluded.created_at",
        )
        .bind(project_id)
        .bind(fingerprint)
        .bind(object_id)
        .bind(job_id)
        .execute(db)
        .await?;
        Ok(())
    })
}

/// Whether the object a stage of `kind` made is still there.
pub async fn object_exists(pool: &Db, kind: types::StageKind, id: i64) -> AppResult<bool> {
    use types::StageKind;
    on_db!(pool, |db| {
        let table = match kind {
            StageKind::Questions => "question_sets",
            StageKind::Answers => "answer_sets",
            StageKind::Evaluation | StageKind::Sanity => "evaluations",
            StageKind::Metrics => "metrics_runs",
            StageKind::Corpus | StageKind::Graph => "projects",
        };
        let found: Option<i64> =
            sqlx::query_scalar(&format!("SELECT id FROM {table} WHERE id = $1")).bind(id).fetch_optional(db).await?;
        Ok(found.is_some())
    })
}

//! The batches a job sent through the Batch API: its
//! [`BatchJournal`](engine::llm::batch::BatchJournal), so that a resumed job
//! follows the batches left unread instead of sending their requests again.

use engine::llm::batch::{BatchJournal, BatchStatus, SentBatch};
use engine::llm::BoxFuture;

use super::{on_db, Db};

/// One job's batches.
pub struct JobBatches {
    pool: Db,
    job_id: i64,
}

impl JobBatches {
    pub fn new(pool: Db, job_id: i64) -> JobBatches {
        JobBatches { pool, job_id }
    }
}

impl BatchJournal for JobBatches {
    fn pending(&self) -> BoxFuture<'_, Result<Vec<SentBatch>, String>> {
        Box::pin(async move {
            let rows: Vec<(String, String)> = on_db!(&self.pool, |db| {
                sqlx::query_as(
                    "SELECT batch_id, requests FROM llm_batches WHERE job_id = $1 AND read = $2 ORDER BY batch_id",
                )
                .bind(self.job_id)
                .bind(false)
                .fetch_all(db)
                .await
            })
            .map_err(|e| e.to_string())?;
            rows.into_iter()
                .map(|(id, requests)| {
                    let requests = serde_json::from_str(&requests).map_err(|e| format!("batch {id}: {e}"))?;
                    Ok(SentBatch { id, requests })
                })
                .collect()
        })
    }

    fn sent<'a>(&'a self, batch: &'a SentBatch) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let requests = serde_json::to_string(&batch.requests).map_err(|e| e.to_string())?;
            on_db!(&self.pool, |db| {
                sqlx::query("INSERT INTO llm_batches (job_id, batch_id, requests) VALUES ($1, $2, $3)")
                    .bind(self.job_id)
                    .bind(&batch.id)
                    .bind(&requests)
                    .execute(db)
                    .await
                    .map(drop)
            })
            .map_err(|e| e.to_string())
        })
    }

    fn progress<'a>(&'a self, s: &'a BatchStatus) -> BoxFuture<'a, Result<(), String>> {
        let counts = Some((s.completed as i64, s.failed as i64, s.total as i64));
        Box::pin(self.update(&s.id, Some(&s.status), counts, None))
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.update(id, None, None, Some(true)))
    }
}

impl JobBatches {
    /// Sets what is given of one batch's row (the provider's status, its
    /// answered/failed/total counts, whether its output was read), keeping
    /// the rest.
    async fn update(
        &self,
        id: &str,
        status: Option<&str>,
        counts: Option<(i64, i64, i64)>,
        read: Option<bool>,
    ) -> Result<(), String> {
        let (completed, failed, total) = match counts {
            Some((c, f, t)) => (Some(c), Some(f), Some(t)),
            None => (None, None, None),
        };
        on_db!(&self.pool, |db| {
            sqlx::query(
                "UPDATE llm_batches SET status = COALESCE($1, status), completed = COALESCE($2, completed),
                    failed = COALESCE($3, failed), total = COALESCE($4, total), read = COALESCE($5, read)
                 WHERE job_id = $6 AND batch_id = $7",
            )
            .bind(status)
            .bind(completed)
            .bind(failed)
            .bind(total)
            .bind(read)
            .bind(self.job_id)
            .bind(id)
            .execute(db)
            .await
            .map(drop)
        })
        .map_err(|e| e.to_string())
    }
}

/// A job's batches with their last reported progress (by id).
pub async fn of_job(pool: &Db, job_id: i64) -> crate::error::AppResult<Vec<crate::model::BatchView>> {
    let rows: Vec<(String, String, i64, i64, i64, bool)> = on_db!(pool, |db| {
        sqlx::query_as(
            "SELECT batch_id, status, completed, failed, total, read FROM llm_batches WHERE job_id = $1 ORDER BY batch_id",
        )
        .bind(job_id)
        .fetch_all(db)
        .await
    })?;
    Ok(rows
        .into_iter()
        .map(|(id, provider_status, completed, failed, total, read)| crate::model::BatchView {
            id,
            provider_status,
            completed,
            failed,
            total,
            read,
        })
        .collect())
}

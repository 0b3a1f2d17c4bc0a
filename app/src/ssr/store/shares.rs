//! Share links in SQLite (tokens arrive hashed: `app::tokens`).

use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};

/// A share; with `expires_days` it stops working that many days from now.
pub async fn insert(
    pool: &SqlitePool,
    project_id: i64,
    token_hash: &str,
    kind: &str,
    page_id: i64,
    expires_days: Option<u32>,
) -> AppResult<i64> {
    let expires =
        expires_days.map_or("NULL".to_string(), |d| format!("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+{d} days')"));
    Ok(sqlx::query_scalar(&format!(
        "INSERT INTO shares (project_id, token_hash, page_kind, page_id, expires_at) VALUES (?, ?, ?, ?, {expires}) RETURNING id"
    ))
    .bind(project_id)
    .bind(token_hash)
    .bind(kind)
    .bind(page_id)
    .fetch_one(pool)
    .await?)
}

/// A live share: (page kind, page id).
pub async fn live(pool: &SqlitePool, token_hash: &str) -> AppResult<Option<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT page_kind, page_id FROM shares
          WHERE token_hash = ? AND revoked = 0 AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
    )
    .bind(token_hash)
    .fetch_optional(pool)
    .await?)
}

/// A page's shares: (id, created, withdrawn).
pub async fn of_page(pool: &SqlitePool, kind: &str, page_id: i64) -> AppResult<Vec<(i64, String, bool)>> {
    Ok(sqlx::query_as("SELECT id, created_at, revoked FROM shares WHERE page_kind = ? AND page_id = ? ORDER BY id")
        .bind(kind)
        .bind(page_id)
        .fetch_all(pool)
        .await?)
}

pub async fn revoke(pool: &SqlitePool, id: i64) -> AppResult<()> {
    let done = sqlx::query("UPDATE shares SET revoked = 1 WHERE id = ?").bind(id).execute(pool).await?;
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound(format!("share {id} does not exist")));
    }
    Ok(())
}

pub async fn revoke_by_hash(pool: &SqlitePool, token_hash: &str) -> AppResult<()> {
    let done = sqlx::query("UPDATE shares SET revoked = 1 WHERE token_hash = ?").bind(token_hash).execute(pool).await?;
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound("no share link with that token".into()));
    }
    Ok(())
}

//! Share links in SQLite (tokens arrive hashed: `app::tokens`).

use super::{on_db, Db};

use crate::error::{AppError, AppResult};

/// A share; with `expires_days` it stops working that many days from now.
pub async fn insert(
    pool: &Db,
    project_id: i64,
    token_hash: &str,
    kind: types::ShareKind,
    page_id: i64,
    expires_days: Option<u32>,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        let expires =
            expires_days.map_or("NULL".to_string(), |d| format!("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+{d} days')"));
        Ok(sqlx::query_scalar(&format!(
        "INSERT INTO shares (project_id, token_hash, page_kind, page_id, expires_at) VALUES ($1, $2, $3, $4, {expires}) RETURNING id"
    ))
    .bind(project_id)
    .bind(token_hash)
    .bind(kind.as_str())
    .bind(page_id)
    .fetch_one(db)
    .await?)
    })
}

/// A live share: (page kind, page id).
pub async fn live(pool: &Db, token_hash: &str) -> AppResult<Option<(types::ShareKind, i64)>> {
    let row: Option<(i64, String, i64)> = on_db!(pool, |db| {
        Ok::<_, crate::error::AppError>(sqlx::query_as(
        "SELECT id, page_kind, page_id FROM shares
          WHERE token_hash = $1 AND revoked = FALSE AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
    )
    .bind(token_hash)
    .fetch_optional(db)
    .await?)
    })?;
    row.map(|(id, kind, page)| Ok((super::stored("shares", id, &kind)?, page))).transpose()
}

/// A page's shares: (id, created, withdrawn).
pub async fn of_page(pool: &Db, kind: types::ShareKind, page_id: i64) -> AppResult<Vec<crate::model::ShareLink>> {
    let rows: Vec<(i64, String, bool)> = on_db!(pool, |db| {
        Ok::<_, AppError>(
            sqlx::query_as(
                "SELECT id, created_at, revoked FROM shares WHERE page_kind = $1 AND page_id = $2 ORDER BY id",
            )
            .bind(kind.as_str())
            .bind(page_id)
            .fetch_all(db)
            .await?,
        )
    })?;
    Ok(rows.into_iter().map(|(id, created, revoked)| crate::model::ShareLink { id, created, revoked }).collect())
}

pub async fn revoke(pool: &Db, id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("UPDATE shares SET revoked = TRUE WHERE id = $1").bind(id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("share {id} does not exist")));
        }
        Ok(())
    })
}

pub async fn revoke_by_hash(pool: &Db, token_hash: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        let done =
            sqlx::query("UPDATE shares SET revoked = TRUE WHERE token_hash = $1").bind(token_hash).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound("no share link with that token".into()));
        }
        Ok(())
    })
}

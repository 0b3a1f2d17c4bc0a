//! Accounts and login sessions in SQLite (hashing and tokens: `crate::ssr::auth`).

use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};

pub async fn has_owner(pool: &SqlitePool) -> AppResult<bool> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'owner'").fetch_one(pool).await?;
    Ok(n > 0)
}

/// Inserts an account with its password hash; a taken name is a conflict.
pub async fn insert(pool: &SqlitePool, name: &str, password_hash: &str, role: &str) -> AppResult<i64> {
    sqlx::query_scalar("INSERT INTO users (name, password_hash, role) VALUES (?, ?, ?) RETURNING id")
        .bind(name)
        .bind(password_hash)
        .bind(role)
        .fetch_one(pool)
        .await
        .map_err(|e| match e {
            // The partial unique index `users_one_owner`: a second owner,
            // e.g. from concurrent first-run setups.
            sqlx::Error::Database(d) if d.is_unique_violation() && d.message().contains("users.role") => {
                AppError::Conflict("this Assay already has an owner: log in instead".into())
            }
            sqlx::Error::Database(d) if d.is_unique_violation() => {
                AppError::Conflict(format!("there is already a user \"{name}\""))
            }
            other => other.into(),
        })
}

/// `(id, password hash)` of the account with this name.
pub async fn by_name(pool: &SqlitePool, name: &str) -> AppResult<Option<(i64, String)>> {
    Ok(sqlx::query_as("SELECT id, password_hash FROM users WHERE name = ?").bind(name).fetch_optional(pool).await?)
}

pub async fn insert_session(pool: &SqlitePool, token_hash: &str, user_id: i64, days: i64) -> AppResult<()> {
    sqlx::query(&format!(
        "INSERT INTO sessions (token_hash, user_id, expires_at)
         VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+{days} days'))"
    ))
    .bind(token_hash)
    .bind(user_id)
    .execute(pool)
    .await?;
    Ok(())
}

/// The user of an unexpired session: (id, name, role).
pub async fn session_user(pool: &SqlitePool, token_hash: &str) -> AppResult<Option<(i64, String, String)>> {
    Ok(sqlx::query_as(
        "SELECT u.id, u.name, u.role FROM sessions s JOIN users u ON u.id = s.user_id
          WHERE s.token_hash = ? AND s.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
    )
    .bind(token_hash)
    .fetch_optional(pool)
    .await?)
}

pub async fn delete_session(pool: &SqlitePool, token_hash: &str) -> AppResult<()> {
    sqlx::query("DELETE FROM sessions WHERE token_hash = ?").bind(token_hash).execute(pool).await?;
    Ok(())
}

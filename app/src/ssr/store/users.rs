//! Accounts and login sessions in SQLite (hashing and tokens: `crate::ssr::auth`).

use super::{on_db, Db};

use crate::error::{AppError, AppResult};

pub async fn has_owner(pool: &Db) -> AppResult<bool> {
    on_db!(pool, |db| {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'owner'").fetch_one(db).await?;
        Ok(n > 0)
    })
}

/// Inserts an account with its password hash; a taken name is a conflict.
pub async fn insert(pool: &Db, name: &str, password_hash: &str, role: &str) -> AppResult<i64> {
    on_db!(pool, |db| {
        sqlx::query_scalar("INSERT INTO users (name, password_hash, role) VALUES ($1, $2, $3) RETURNING id")
            .bind(name)
            .bind(password_hash)
            .bind(role)
            .fetch_one(db)
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
    })
}

/// `(id, password hash)` of the account with this name.
pub async fn by_name(pool: &Db, name: &str) -> AppResult<Option<(i64, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT id, password_hash FROM users WHERE name = $1").bind(name).fetch_optional(db).await?)
    })
}

pub async fn insert_session(pool: &Db, token_hash: &str, user_id: i64, days: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(&format!(
            "INSERT INTO sessions (token_hash, user_id, expires_at)
         VALUES ($1, $2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+{days} days'))"
        ))
        .bind(token_hash)
        .bind(user_id)
        .execute(db)
        .await?;
        Ok(())
    })
}

/// The user of an unexpired session: (id, name, role).
pub async fn session_user(pool: &Db, token_hash: &str) -> AppResult<Option<(i64, String, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT u.id, u.name, u.role FROM sessions s JOIN users u ON u.id = s.user_id
          WHERE s.token_hash = $1 AND s.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        )
        .bind(token_hash)
        .fetch_optional(db)
        .await?)
    })
}

pub async fn delete_session(pool: &Db, token_hash: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("DELETE FROM sessions WHERE token_hash = $1").bind(token_hash).execute(db).await?;
        Ok(())
    })
}

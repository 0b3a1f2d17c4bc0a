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
/// The account a live session belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionUser {
    pub id: i64,
    pub name: String,
    pub role: types::Role,
}

pub async fn session_user(pool: &Db, token_hash: &str) -> AppResult<Option<SessionUser>> {
    let row: Option<(i64, String, String)> = on_db!(pool, |db| {
        Ok::<_, crate::error::AppError>(
            sqlx::query_as(
                "SELECT u.id, u.name, u.role FROM sessions s JOIN users u ON u.id = s.user_id
          WHERE s.token_hash = $1 AND s.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            )
            .bind(token_hash)
            .fetch_optional(db)
            .await?,
        )
    })?;
    row.map(|(id, name, role)| Ok(SessionUser { id, name, role: super::stored("users", id, &role)? })).transpose()
}

pub async fn delete_session(pool: &Db, token_hash: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("DELETE FROM sessions WHERE token_hash = $1").bind(token_hash).execute(db).await?;
        Ok(())
    })
}

/// The time now, as every timestamp here is written.
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// The SQL time `secs` seconds ago, as the login tables store times: a
/// window that started before it has ended.
fn window_ago(secs: u64) -> String {
    format!("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-{secs} seconds')")
}

/// Counts one password check for `account` (a login name, lower-cased)
/// from a browser the account does not know, unless `limit` were counted
/// in the current window of `window_secs` (fixed windows, one row per
/// account, updated in one statement: concurrent attempts from any number
/// of processes never get more than `limit` checks between them).
/// `Err(seconds until the window ends)` when the limit is reached.
pub async fn count_untrusted_attempt(
    pool: &Db,
    account: &str,
    limit: i64,
    window_secs: u64,
) -> AppResult<Result<(), u64>> {
    let stale = window_ago(window_secs);
    let counted: Option<i64> = on_db!(pool, |db| {
        let counted: Option<i64> = sqlx::query_scalar(&format!(
            "INSERT INTO login_limits (account, failures, window_start) VALUES ($1, 1, {NOW})
             ON CONFLICT (account) DO UPDATE SET
               failures = CASE WHEN login_limits.window_start < {stale} THEN 1 ELSE login_limits.failures + 1 END,
               window_start = CASE WHEN login_limits.window_start < {stale} THEN {NOW}
                                   ELSE login_limits.window_start END
             WHERE login_limits.window_start < {stale} OR login_limits.failures < $2
             RETURNING failures"
        ))
        .bind(account)
        .bind(limit)
        .fetch_optional(db)
        .await?;
        // Any name may be tried, an account or not: when a window starts,
        // rows of ended windows go, so the table holds one window's names
        // at most.
        if counted == Some(1) {
            sqlx::query(&format!("DELETE FROM login_limits WHERE window_start < {stale}")).execute(db).await?;
        }
        counted
    });
    if counted.is_some() {
        return Ok(Ok(()));
    }
    let left: Option<f64> = on_db!(pool, |db| {
        sqlx::query_scalar(&format!(
            "SELECT {window_secs}.0 - (julianday({NOW}) - julianday(window_start)) * 86400.0
               FROM login_limits WHERE account = $1"
        ))
        .bind(account)
        .fetch_optional(db)
        .await?
    });
    Ok(Err(left.unwrap_or(1.0).ceil().max(1.0) as u64))
}

/// A check [`count_untrusted_attempt`] counted found the right password:
/// it is not a failure.
pub async fn take_back_untrusted(pool: &Db, account: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "UPDATE login_limits SET failures = CASE WHEN failures > 0 THEN failures - 1 ELSE 0 END WHERE account = $1",
        )
        .bind(account)
        .execute(db)
        .await?;
        Ok(())
    })
}

/// Whether `token_hash` is a browser that logged in as `name` before.
pub async fn is_device_of(pool: &Db, token_hash: &str, name: &str) -> AppResult<bool> {
    on_db!(pool, |db| {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM login_devices d JOIN users u ON u.id = d.user_id
              WHERE d.token_hash = $1 AND u.name = $2",
        )
        .bind(token_hash)
        .bind(name)
        .fetch_one(db)
        .await?;
        Ok(n > 0)
    })
}

/// Counts one password check from a known browser, unless `limit` were
/// counted in its current window (then the browser is treated as unknown).
pub async fn count_device_attempt(pool: &Db, token_hash: &str, limit: i64, window_secs: u64) -> AppResult<bool> {
    let fresh = format!("(window_start IS NULL OR window_start < {})", window_ago(window_secs));
    on_db!(pool, |db| {
        let counted: Option<i64> = sqlx::query_scalar(&format!(
            "UPDATE login_devices SET
               failures = CASE WHEN {fresh} THEN 1 ELSE failures + 1 END,
               window_start = CASE WHEN {fresh} THEN {NOW} ELSE window_start END
             WHERE token_hash = $1 AND ({fresh} OR failures < $2)
             RETURNING failures"
        ))
        .bind(token_hash)
        .bind(limit)
        .fetch_optional(db)
        .await?;
        Ok(counted.is_some())
    })
}

/// A known browser's check found the right password.
pub async fn take_back_device(pool: &Db, token_hash: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "UPDATE login_devices SET failures = CASE WHEN failures > 0 THEN failures - 1 ELSE 0 END
              WHERE token_hash = $1",
        )
        .bind(token_hash)
        .execute(db)
        .await?;
        Ok(())
    })
}

/// Remembers a browser that logged in as `user_id`; an account keeps its
/// `keep` newest browsers.
pub async fn remember_device(pool: &Db, token_hash: &str, user_id: i64, keep: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
            "INSERT INTO login_devices (token_hash, user_id) VALUES ($1, $2) ON CONFLICT (token_hash) DO NOTHING",
        )
        .bind(token_hash)
        .bind(user_id)
        .execute(db)
        .await?;
        sqlx::query(
            "DELETE FROM login_devices WHERE user_id = $1 AND token_hash NOT IN (
               SELECT token_hash FROM login_devices WHERE user_id = $1 ORDER BY created_at DESC LIMIT $2)",
        )
        .bind(user_id)
        .bind(keep)
        .execute(db)
        .await?;
        Ok(())
    })
}

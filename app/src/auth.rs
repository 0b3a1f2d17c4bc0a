//! The owner account and login sessions. Passwords are hashed with
//! argon2id (the crate's defaults: 19 MiB, 2 passes); a login makes a
//! random session token, kept by the browser in an HttpOnly, SameSite=Strict
//! cookie and by Assay only as a SHA-256 hash, valid for 30 days. Failed
//! logins are throttled per account name and per client address.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::tokens::{hash, new_token};

/// The session cookie's name.
pub const COOKIE: &str = "assay_session";
/// How long a session lasts.
pub const SESSION_DAYS: i64 = 30;
/// The shortest password accepted.
pub const MIN_PASSWORD: usize = 10;

pub async fn has_owner(pool: &SqlitePool) -> AppResult<bool> {
    crate::store::users::has_owner(pool).await
}

fn hash_password(password: &str) -> AppResult<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| AppError::Internal)?;
    let salt = SaltString::encode_b64(&bytes).map_err(|_| AppError::Internal)?;
    Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| {
        tracing::error!(error = %e, "password hashing failed");
        AppError::Internal
    })
}

/// Creates an account (`role`: owner or collaborator).
pub async fn create_user(pool: &SqlitePool, name: &str, password: &str, role: &str) -> AppResult<i64> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 {
        return Err(AppError::Invalid("the user name must be 1 to 100 characters".into()));
    }
    if password.chars().count() < MIN_PASSWORD {
        return Err(AppError::Invalid(format!("the password must be at least {MIN_PASSWORD} characters")));
    }
    crate::store::users::insert(pool, name, &hash_password(password)?, role).await
}

/// Checks a name and password; `Some(user id)` when they match.
pub async fn verify(pool: &SqlitePool, name: &str, password: &str) -> AppResult<Option<i64>> {
    let Some((id, stored)) = crate::store::users::by_name(pool, name.trim()).await? else {
        // The same work as a real check, so timing does not tell names apart.
        let _ = hash_password(password);
        return Ok(None);
    };
    let parsed = PasswordHash::new(&stored).map_err(|_| AppError::Internal)?;
    Ok(Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok().then_some(id))
}

/// A new session for a user; its token (for the cookie).
pub async fn new_session(pool: &SqlitePool, user_id: i64) -> AppResult<String> {
    let token = new_token()?;
    crate::store::users::insert_session(pool, &hash(&token), user_id, SESSION_DAYS).await?;
    Ok(token)
}

/// The user a session token belongs to, while it is valid: (id, name, role).
pub async fn session_user(pool: &SqlitePool, token: &str) -> AppResult<Option<(i64, String, String)>> {
    crate::store::users::session_user(pool, &hash(token)).await
}

pub async fn end_session(pool: &SqlitePool, token: &str) -> AppResult<()> {
    crate::store::users::delete_session(pool, &hash(token)).await
}

/// The session token in a `Cookie` header, if any.
pub fn token_in(cookie_header: &str) -> Option<&str> {
    cookie_header.split(';').filter_map(|c| c.trim().split_once('=')).find(|(k, _)| *k == COOKIE).map(|(_, v)| v)
}

/// The `Set-Cookie` value for a session (`None`: clear it).
pub fn set_cookie(token: Option<&str>) -> String {
    match token {
        Some(t) => format!("{COOKIE}={t}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}", SESSION_DAYS * 86_400),
        None => format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    }
}

/// Failed logins per key (an account name, a client address): after
/// `FREE` failures within the window, each further attempt must wait
/// twice as long as the last (1 s, 2 s, 4 s … up to 5 minutes).
#[derive(Default)]
pub struct Throttle {
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl Throttle {
    pub const FREE: u32 = 5;
    const WINDOW: Duration = Duration::from_secs(15 * 60);

    /// How long `key` must still wait before another attempt, if at all.
    pub fn wait(&self, key: &str) -> Option<Duration> {
        let map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let (n, last) = *map.get(key)?;
        if n < Self::FREE || last.elapsed() > Self::WINDOW {
            return None;
        }
        let delay = Duration::from_secs((1u64 << (n - Self::FREE).min(8)).min(300));
        delay.checked_sub(last.elapsed())
    }

    pub fn failed(&self, key: &str) {
        let mut map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let e = map.entry(key.to_string()).or_insert((0, Instant::now()));
        if e.1.elapsed() > Self::WINDOW {
            e.0 = 0;
        }
        e.0 += 1;
        e.1 = Instant::now();
    }

    pub fn succeeded(&self, key: &str) {
        self.failures.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_frees_five_failures_then_doubles_the_wait() {
        let t = Throttle::default();
        for _ in 0..Throttle::FREE - 1 {
            t.failed("owner");
        }
        assert_eq!(t.wait("owner"), None);
        t.failed("owner");
        let first = t.wait("owner").unwrap();
        assert!(first <= Duration::from_secs(1) && first > Duration::from_millis(900));
        t.failed("owner");
        assert!(t.wait("owner").unwrap() > Duration::from_millis(1900));
        assert_eq!(t.wait("someone else"), None);
        t.succeeded("owner");
        assert_eq!(t.wait("owner"), None);
    }

    #[test]
    fn the_cookie_is_http_only_and_same_site_strict_and_read_back() {
        let c = set_cookie(Some("abc"));
        assert!(c.starts_with("assay_session=abc;") && c.contains("HttpOnly") && c.contains("SameSite=Strict"));
        assert!(set_cookie(None).contains("Max-Age=0"));
        assert_eq!(token_in("theme=dark; assay_session=abc; x=1"), Some("abc"));
        assert_eq!(token_in("theme=dark"), None);
    }
}

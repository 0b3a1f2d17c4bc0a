//! The owner account and login sessions. Passwords are hashed with
//! argon2id (the crate's defaults: 19 MiB, 2 passes); a login makes a
//! random session token, kept by the browser in an HttpOnly, SameSite=Strict
//! cookie and by Assay only as a SHA-256 hash, valid for 30 days. Failed
//! logins are throttled per account name and per client address.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::ssr::store::Db;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

use crate::error::{AppError, AppResult};
use crate::ssr::tokens::{hash, new_token};

/// The session cookie's name.
pub const COOKIE: &str = "assay_session";
/// How long a session lasts.
pub const SESSION_DAYS: i64 = 30;
/// The shortest password accepted.
pub const MIN_PASSWORD: usize = 10;

pub async fn has_owner(pool: &Db) -> AppResult<bool> {
    crate::ssr::store::users::has_owner(pool).await
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
pub async fn create_user(pool: &Db, name: &str, password: &str, role: &str) -> AppResult<i64> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 {
        return Err(AppError::Invalid("the user name must be 1 to 100 characters".into()));
    }
    if password.chars().count() < MIN_PASSWORD {
        return Err(AppError::Invalid(format!("the password must be at least {MIN_PASSWORD} characters")));
    }
    crate::ssr::store::users::insert(pool, name, &hash_password(password)?, role).await
}

/// Checks a name and password; `Some(user id)` when they match.
pub async fn verify(pool: &Db, name: &str, password: &str) -> AppResult<Option<i64>> {
    let Some((id, stored)) = crate::ssr::store::users::by_name(pool, name.trim()).await? else {
        // The same work as a real check, so timing does not tell names apart.
        let _ = hash_password(password);
        return Ok(None);
    };
    let parsed = PasswordHash::new(&stored).map_err(|_| AppError::Internal)?;
    Ok(Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok().then_some(id))
}

/// A new session for a user; its token (for the cookie).
pub async fn new_session(pool: &Db, user_id: i64) -> AppResult<String> {
    let token = new_token()?;
    crate::ssr::store::users::insert_session(pool, &hash(&token), user_id, SESSION_DAYS).await?;
    Ok(token)
}

/// The user a session token belongs to, while it is valid: (id, name, role).
pub async fn session_user(pool: &Db, token: &str) -> AppResult<Option<(i64, String, String)>> {
    crate::ssr::store::users::session_user(pool, &hash(token)).await
}

pub async fn end_session(pool: &Db, token: &str) -> AppResult<()> {
    crate::ssr::store::users::delete_session(pool, &hash(token)).await
}

/// The session token in a `Cookie` header, if any.
pub fn token_in(cookie_header: &str) -> Option<&str> {
    cookie_header.split(';').filter_map(|c| c.trim().split_once('=')).find(|(k, _)| *k == COOKIE).map(|(_, v)| v)
}

/// The `Set-Cookie` value for a session (`None`: clear it).
pub fn set_cookie(token: Option<&str>) -> String {
    set_cookie_secure(token, false)
}

/// [`set_cookie`], with `Secure` when the browser reached Assay over HTTPS
/// (the cookie then never travels over plain HTTP).
pub fn set_cookie_secure(token: Option<&str>, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    match token {
        Some(t) => {
            format!("{COOKIE}={t}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}", SESSION_DAYS * 86_400)
        }
        None => format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    }
}

/// Whether a request came over HTTPS: its URI's scheme, or a reverse
/// proxy's `X-Forwarded-Proto: https` / `Forwarded: proto=https`.
pub fn came_over_https(headers: &axum::http::HeaderMap, uri: &axum::http::Uri) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    uri.scheme_str() == Some("https")
        || header("x-forwarded-proto").split(',').next().map(str::trim) == Some("https")
        || header("forwarded").split([';', ',']).any(|p| p.trim() == "proto=https")
}

/// Failed logins. Two limits, so that guessing is slow and the right
/// password is never locked out:
///
/// - per (account name, client address): `FREE` attempts, then each
///   further attempt must wait twice as long as the last (1 s, 2 s, 4 s …
///   up to 15 minutes), refused with 429 meanwhile. One address guessing
///   cannot lock out the owner logging in from another.
/// - per account name, over every address: past `NAME_FREE` failures in the
///   window, attempts for that name are taken one at a time, `NAME_PACE`
///   apart (slowed, never refused), which bounds guessing from many
///   addresses to one per `NAME_PACE` without refusing anyone.
///
/// An attempt is counted when it starts ([`Throttle::begin`]), not when
/// its password check ends, so a burst of concurrent guesses gets exactly
/// `FREE` checked; a success takes its own attempt back.
#[derive(Default)]
pub struct Throttle {
    pairs: Mutex<HashMap<(String, String), (u32, Instant)>>,
    names: Mutex<HashMap<String, (u32, Instant, std::sync::Arc<tokio::sync::Mutex<()>>)>>,
}

/// An attempt [`Throttle::begin`] let through: wait on [`Attempt::pace`]
/// before checking the password.
#[derive(Debug)]
pub struct Attempt {
    pace: Option<std::sync::Arc<tokio::sync::Mutex<()>>>,
}

impl Attempt {
    /// Waits for this name's turn when it is being guessed from many
    /// addresses (at most one check per `NAME_PACE`).
    pub async fn pace(&self) {
        if let Some(turn) = &self.pace {
            let _turn = turn.lock().await;
            tokio::time::sleep(Throttle::NAME_PACE).await;
        }
    }
}

impl Throttle {
    pub const FREE: u32 = 5;
    pub const NAME_FREE: u32 = 20;
    pub const NAME_PACE: Duration = Duration::from_secs(1);
    const WINDOW: Duration = Duration::from_secs(15 * 60);
    const MAX_WAIT: Duration = Duration::from_secs(15 * 60);

    fn key(name: &str, addr: &str) -> (String, String) {
        (name.trim().to_lowercase(), addr.to_string())
    }

    /// Starts an attempt to log in as `name` from `addr`: `Err(wait)` while
    /// this pair must wait; otherwise the attempt is counted (as a failure,
    /// until [`Throttle::succeeded`]).
    pub fn begin(&self, name: &str, addr: &str) -> Result<Attempt, Duration> {
        let key = Self::key(name, addr);
        {
            let mut pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner());
            let e = pairs.entry(key.clone()).or_insert((0, Instant::now()));
            if e.1.elapsed() > Self::WINDOW {
                e.0 = 0;
            }
            if e.0 >= Self::FREE {
                let delay = Duration::from_secs(1u64 << (e.0 - Self::FREE).min(20)).min(Self::MAX_WAIT);
                if let Some(left) = delay.checked_sub(e.1.elapsed()).filter(|d| !d.is_zero()) {
                    return Err(left);
                }
            }
            e.0 += 1;
            e.1 = Instant::now();
        }
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        let e = names.entry(key.0).or_insert_with(|| (0, Instant::now(), Default::default()));
        if e.1.elapsed() > Self::WINDOW {
            e.0 = 0;
        }
        e.0 += 1;
        e.1 = Instant::now();
        Ok(Attempt { pace: (e.0 > Self::NAME_FREE).then(|| e.2.clone()) })
    }

    /// The password was right: this pair starts afresh, and the name's
    /// count gets this attempt back.
    pub fn succeeded(&self, name: &str, addr: &str) {
        let key = Self::key(name, addr);
        self.pairs.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
        if let Some(e) = self.names.lock().unwrap_or_else(|e| e.into_inner()).get_mut(&key.0) {
            e.0 = e.0.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_is_per_name_and_address_and_doubles_the_wait() {
        let t = Throttle::default();
        for _ in 0..Throttle::FREE {
            assert!(t.begin("owner", "10.0.0.9").is_ok());
        }
        let first = t.begin("Owner", "10.0.0.9").unwrap_err();
        assert!(first <= Duration::from_secs(1) && first > Duration::from_millis(900), "{first:?}");
        // Another address, another name: not held up.
        assert!(t.begin("owner", "192.0.2.1").is_ok());
        assert!(t.begin("ana", "10.0.0.9").is_ok());
        t.succeeded("owner", "10.0.0.9");
        assert!(t.begin("owner", "10.0.0.9").is_ok());
    }

    #[tokio::test]
    async fn a_name_guessed_from_many_addresses_is_paced_never_refused() {
        let t = Throttle::default();
        for i in 0..Throttle::NAME_FREE {
            assert!(t.begin("owner", &format!("198.51.100.{i}")).unwrap().pace.is_none());
        }
        let paced = t.begin("owner", "203.0.113.7").expect("never refused");
        let started = Instant::now();
        paced.pace().await;
        assert!(started.elapsed() >= Throttle::NAME_PACE);
        assert!(t.begin("ana", "203.0.113.7").unwrap().pace.is_none());
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

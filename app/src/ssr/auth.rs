//! The owner account and login sessions. Passwords are hashed with
//! argon2id (the crate's defaults: 19 MiB, 2 passes); a login makes a
//! random session token, kept by the browser in an HttpOnly, SameSite=Strict
//! cookie and by Assay only as a SHA-256 hash, valid for 30 days. Failed
//! logins are limited per account (in the database), per known browser and
//! per client address: see [`Throttle`].

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
pub async fn create_user(pool: &Db, name: &str, password: &str, role: types::Role) -> AppResult<i64> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 {
        return Err(AppError::Invalid("the user name must be 1 to 100 characters".into()));
    }
    if password.chars().count() < MIN_PASSWORD {
        return Err(AppError::Invalid(format!("the password must be at least {MIN_PASSWORD} characters")));
    }
    crate::ssr::store::users::insert(pool, name, &hash_password(password)?, role.as_str()).await
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
pub async fn session_user(pool: &Db, token: &str) -> AppResult<Option<crate::ssr::store::users::SessionUser>> {
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

/// Failed logins, in three parts, so that guessing is slow
/// wherever it comes from and the rightful user is never locked out by it:
///
/// - per account, over every address and every process on the database: a
///   browser the account does not know gets [`ACCOUNT_FREE`] password
///   checks per [`LOGIN_WINDOW_SECS`] between all such browsers; past them,
///   such attempts are refused with 429 without a check (at most 40 checks
///   an hour, whatever the number of addresses or processes).
/// - per known browser: a browser that logged in to the account before
///   holds a device cookie (a random token, stored as its hash: OWASP's
///   device-cookie scheme, with the database in place of a signature) and
///   has [`DEVICE_FREE`] checks of its own per window, whatever the
///   account's count; past them it is treated as unknown.
/// - per (account, address), in this process: [`Throttle::FREE`] attempts,
///   then each further one must wait twice as long as the last (1 s, 2 s,
///   4 s … up to 15 minutes), refused with 429 meanwhile — one address
///   soon stops costing password checks.
///
/// An attempt is counted when it starts, not when its check ends, so a
/// burst of concurrent guesses gets exactly the free checks; a success
/// takes its own attempt back.
#[derive(Default)]
pub struct Throttle {
    pairs: Mutex<HashMap<(String, String), (u32, Instant)>>,
}

/// Password checks per account per window from browsers it does not know.
pub const ACCOUNT_FREE: i64 = 10;
/// Password checks per known browser per window.
pub const DEVICE_FREE: i64 = 5;
/// The window of both counts.
pub const LOGIN_WINDOW_SECS: u64 = 15 * 60;
/// The browsers an account remembers (the newest).
pub const DEVICES_KEPT: i64 = 20;
/// The device cookie's name, and how long a browser is remembered.
pub const DEVICE_COOKIE: &str = "assay_device";
pub const DEVICE_DAYS: i64 = 365;

/// An account's key in the shared count.
pub fn account_key(name: &str) -> String {
    name.trim().to_lowercase()
}

/// The device token in a `Cookie` header, if any.
pub fn device_in(cookie_header: &str) -> Option<&str> {
    cookie_header
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == DEVICE_COOKIE)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

/// The `Set-Cookie` value for a device token: sent back to the login
/// endpoints only.
pub fn set_device_cookie(token: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{DEVICE_COOKIE}={token}; Path=/api/auth; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        DEVICE_DAYS * 86_400
    )
}

impl Throttle {
    pub const FREE: u32 = 5;
    const WINDOW: Duration = Duration::from_secs(15 * 60);
    const MAX_WAIT: Duration = Duration::from_secs(15 * 60);

    fn key(name: &str, addr: &str) -> (String, String) {
        (account_key(name), addr.to_string())
    }

    /// Starts an attempt to log in as `name` from `addr`: `Err(wait)` while
    /// this pair must wait; otherwise the attempt is counted (as a failure,
    /// until [`Throttle::succeeded`]).
    pub fn begin(&self, name: &str, addr: &str) -> Result<(), Duration> {
        let mut pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner());
        // Forget what is over (the map stays as small as the window's guessing).
        if pairs.len() > 10_000 {
            pairs.retain(|_, e| e.1.elapsed() <= Self::WINDOW);
        }
        let e = pairs.entry(Self::key(name, addr)).or_insert((0, Instant::now()));
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
        Ok(())
    }

    /// The password was right: this pair starts afresh.
    pub fn succeeded(&self, name: &str, addr: &str) {
        self.pairs.lock().unwrap_or_else(|e| e.into_inner()).remove(&Self::key(name, addr));
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

    #[test]
    fn the_device_cookie_goes_to_the_login_endpoints_only_and_is_read_back() {
        let c = set_device_cookie("d3v", true);
        assert!(c.starts_with("assay_device=d3v;") && c.contains("Path=/api/auth;") && c.contains("HttpOnly"));
        assert!(c.contains("SameSite=Strict") && c.ends_with("; Secure"));
        assert_eq!(device_in("assay_session=abc; assay_device=d3v"), Some("d3v"));
        assert_eq!(device_in("assay_device="), None);
        assert_eq!(device_in("assay_session=abc"), None);
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

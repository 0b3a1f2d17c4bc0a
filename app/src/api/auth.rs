//! Accounts and sessions: who is logged in, first-run setup, login, logout.

use leptos::prelude::*;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::ssr::state::app_state;

/// Who is logged in (`None`: nobody), and whether an owner exists yet.
#[server(endpoint = "auth/whoami", output = crate::codec::Json)]
pub async fn whoami() -> Result<(Option<String>, bool), AppError> {
    let state = app_state()?;
    let owner = crate::ssr::auth::has_owner(&state.pool).await?;
    let headers: Option<axum::http::HeaderMap> = leptos_axum::extract().await.ok();
    let token = headers
        .as_ref()
        .and_then(|h| h.get(axum::http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(crate::ssr::auth::token_in)
        .map(str::to_string);
    let user = match token {
        Some(t) => crate::ssr::auth::session_user(&state.pool, &t).await?.map(|u| u.name),
        None => None,
    };
    Ok((user, owner))
}

/// How to set the session cookie on this request's response, read at the
/// server function's first poll (the context is not there after an await).
#[cfg(feature = "ssr")]
pub(super) struct CookieOptions {
    response: Option<leptos_axum::ResponseOptions>,
    secure: bool,
}

#[cfg(feature = "ssr")]
impl CookieOptions {
    pub(super) fn now() -> CookieOptions {
        let over_https = use_context::<axum::http::request::Parts>()
            .is_some_and(|p| crate::ssr::auth::came_over_https(&p.headers, &p.uri));
        let forced = app_state().is_ok_and(|s| s.config.secure_cookies);
        CookieOptions { response: use_context::<leptos_axum::ResponseOptions>(), secure: over_https || forced }
    }

    fn append(&self, cookie: String) {
        if let (Some(resp), Ok(v)) = (&self.response, axum::http::HeaderValue::from_str(&cookie)) {
            resp.append_header(axum::http::header::SET_COOKIE, v);
        }
    }

    /// Sets another HttpOnly cookie (a rater's token), for `path`.
    pub(super) fn send_named(&self, name: &str, value: &str, max_age: i64, path: &str) {
        let secure = if self.secure { "; Secure" } else { "" };
        self.append(format!("{name}={value}; Path={path}; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"));
    }

    /// Sets the device cookie (a browser that logged in: `ssr::auth::Throttle`).
    fn send_device(&self, token: &str) {
        self.append(crate::ssr::auth::set_device_cookie(token, self.secure));
    }

    /// Sets the session cookie (`None`: clears it).
    fn send(&self, token: Option<&str>) {
        self.append(crate::ssr::auth::set_cookie_secure(token, self.secure));
    }
}

/// First run: creates the owner account and logs it in. Refused once an
/// owner exists.
#[server(endpoint = "auth/setup", output = crate::codec::Json)]
pub async fn setup_owner(name: String, password: String, confirm: String) -> Result<(), AppError> {
    let state = app_state()?;
    let cookie = CookieOptions::now();
    if crate::ssr::auth::has_owner(&state.pool).await? {
        return Err(AppError::Conflict("this Assay already has an owner: log in instead".into()));
    }
    if password != confirm {
        return Err(AppError::Invalid("the two passwords differ".into()));
    }
    // The database allows one owner only: of concurrent first-run setups,
    // one creates it and the others get this same conflict.
    let id = crate::ssr::auth::create_user(&state.pool, &name, &password, types::Role::Owner).await?;
    cookie.send(Some(&crate::ssr::auth::new_session(&state.pool, id).await?));
    Ok(())
}

/// Logs in; failed attempts are limited per account, per known browser and
/// per address (`crate::ssr::auth::Throttle`).
#[server(endpoint = "auth/login", output = crate::codec::Json)]
pub async fn login(name: String, password: String) -> Result<(), AppError> {
    use crate::ssr::auth::{self as auth, LOGIN_WINDOW_SECS};
    use crate::ssr::store::users;
    let state = app_state()?;
    let cookie = CookieOptions::now();
    let addr: Option<axum::extract::ConnectInfo<std::net::SocketAddr>> = leptos_axum::extract().await.ok();
    let addr = addr.map_or("?".into(), |a| a.0.ip().to_string());
    let headers: Option<axum::http::HeaderMap> = leptos_axum::extract().await.ok();
    let device = headers
        .as_ref()
        .and_then(|h| h.get(axum::http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(auth::device_in)
        .map(crate::ssr::tokens::hash);
    let account = auth::account_key(&name);
    // A browser that logged in as this account before has checks of its
    // own; guessing elsewhere does not take them.
    let known = match device {
        Some(d)
            if users::is_device_of(&state.pool, &d, name.trim()).await?
                && users::count_device_attempt(&state.pool, &d, auth::DEVICE_FREE, LOGIN_WINDOW_SECS).await? =>
        {
            Some(d)
        }
        _ => None,
    };
    if known.is_none() {
        if let Err(wait) = state.throttle.begin(&name, &addr) {
            return Err(AppError::TooMany(format!(
                "too many failed logins from this address: try again in {} s",
                wait.as_secs_f64().ceil() as u64
            )));
        }
        if let Err(left) =
            users::count_untrusted_attempt(&state.pool, &account, auth::ACCOUNT_FREE, LOGIN_WINDOW_SECS).await?
        {
            return Err(AppError::TooMany(format!(
                "too many failed logins to this account: try again in {left} s, or from a browser that has \
                 logged in to it before"
            )));
        }
    }
    match auth::verify(&state.pool, &name, &password).await? {
        Some(id) => {
            let device = match known {
                Some(d) => {
                    users::take_back_device(&state.pool, &d).await?;
                    None
                }
                None => {
                    state.throttle.succeeded(&name, &addr);
                    users::take_back_untrusted(&state.pool, &account).await?;
                    // This browser is known from now on.
                    let token = crate::ssr::tokens::new_token()?;
                    users::remember_device(&state.pool, &crate::ssr::tokens::hash(&token), id, auth::DEVICES_KEPT)
                        .await?;
                    Some(token)
                }
            };
            cookie.send(Some(&auth::new_session(&state.pool, id).await?));
            if let Some(token) = device {
                cookie.send_device(&token);
            }
            Ok(())
        }
        None => {
            if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
                resp.set_status(axum::http::StatusCode::UNAUTHORIZED);
            }
            Err(AppError::Invalid("wrong name or password".into()))
        }
    }
}

#[server(endpoint = "auth/logout", output = crate::codec::Json)]
pub async fn logout() -> Result<(), AppError> {
    let state = app_state()?;
    let cookie = CookieOptions::now();
    let headers: Option<axum::http::HeaderMap> = leptos_axum::extract().await.ok();
    if let Some(t) = headers
        .as_ref()
        .and_then(|h| h.get(axum::http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(crate::ssr::auth::token_in)
    {
        crate::ssr::auth::end_session(&state.pool, t).await?;
    }
    cookie.send(None);
    Ok(())
}

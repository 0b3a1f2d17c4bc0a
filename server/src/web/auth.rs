//! The login guard: every request but the rater links, the login and
//! first-run pages and static files needs the owner's session (unless the
//! server runs with `--no-login`). Pages without one are sent to the login
//! (or, before an owner exists, the first-run) page; API calls get 401.
//! Signed in, the request carries its [`Caller`]; a collaborator's pages and
//! plain routes of a project need their rights on it (server functions
//! check for themselves: `app::ssr::access`).
//! State-changing requests must come from Assay's own pages: a cross-site
//! `Origin` (or `Sec-Fetch-Site`) is refused with 403 — with the SameSite=Strict
//! cookie, the CSRF defence.

use app::ssr::access::{Caller, Need};
use app::ssr::state::AppState;
use app::ssr::store::access::Obj;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error;

/// Paths anyone may reach.
fn public(path: &str) -> bool {
    path == "/login"
        || path == "/setup"
        || path.starts_with("/s/")
        || path.starts_with("/share/")
        || path.starts_with("/api/share/")
        || path.starts_with("/api/study/")
        || path.starts_with("/api/auth/")
        || path.starts_with("/pkg/")
        || (!path.starts_with("/api/") && path.rsplit('/').next().is_some_and(|last| last.contains('.')))
}

/// Whether a state-changing request comes from this site.
fn same_site(req: &Request) -> bool {
    let headers = req.headers();
    // `Origin: null` is what a browser sends for a form POST from a page
    // with `Referrer-Policy: no-referrer` (ours): Sec-Fetch-Site decides.
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()).filter(|o| *o != "null") {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
        let origin_host = origin.split("://").nth(1).unwrap_or("");
        return !host.is_empty() && origin_host == host;
    }
    match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        Some(site) => site == "same-origin" || site == "none",
        // `Origin: null` alone: an opaque origin (a sandboxed frame); refused.
        None if headers.contains_key(header::ORIGIN) => false,
        // Neither header: not a browser's cross-site request (curl, scripts).
        None => true,
    }
}

/// What a page needs, from its path once percent-decoded (as the page's
/// router decodes it): `/projects/{id}/…` names the project (reading for
/// GET, changing otherwise); the accounts page is the owner's. The data on
/// a page comes from server functions, which check for themselves, and the
/// plain `/api/` routes are checked by `granted` on the ids the router
/// decoded: this is the early, friendly refusal of a page. A segment that
/// is still encoded after decoding (`%2532`) is refused outright.
fn needs(path: &str, changes: bool) -> Page {
    let Ok(decoded) = percent_encoding::percent_decode_str(path).decode_utf8() else {
        return Page::Malformed;
    };
    let parts: Vec<&str> = decoded.trim_start_matches('/').split('/').collect();
    let need = if changes { Need::Edit } else { Need::Read };
    match parts.as_slice() {
        ["users", ..] => Page::Owners,
        ["projects", id, ..] => match id.parse::<i64>() {
            Ok(p) => Page::Project(Obj::Project(p), need),
            Err(_) if id.contains('%') => Page::Malformed,
            Err(_) => Page::Open,
        },
        _ => Page::Open,
    }
}

/// What a path needs of its caller.
#[derive(Debug, PartialEq)]
enum Page {
    /// Nothing the guard checks (server functions and routes check their own).
    Open,
    /// The owner's alone (the accounts page).
    Owners,
    /// A project's page.
    Project(Obj, Need),
    /// Not valid UTF-8 once decoded, or encoded twice: refused for everyone.
    Malformed,
}

/// A refusal: JSON for the API, a short page for a browser's page request.
fn refuse(path: &str, e: app::error::AppError) -> Response {
    if path.starts_with("/api/") {
        return super::app_error(e);
    }
    let status = super::status_of(&e);
    let text = e.to_string().replace('&', "&amp;").replace('<', "&lt;");
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Assay</title>\
         <link rel=\"stylesheet\" href=\"/pkg/assay.css\"></head><body><main class=\"page\"><h1>{}</h1>\
         <p>{text}.</p><p><a href=\"/\">Back to your projects</a></p></main></body></html>",
        match status {
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::BAD_REQUEST => "Not a valid address",
            _ => "Not for you",
        }
    );
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

/// Lets the request on as `caller` if its path allows it.
async fn admit(state: &AppState, caller: Caller, mut req: Request, next: Next) -> Response {
    let changes = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let path = req.uri().path().to_string();
    match needs(&path, changes) {
        Page::Malformed => {
            return refuse(&path, app::error::AppError::Invalid("this address is not a valid path".into()));
        }
        Page::Owners if !caller.owner => {
            return refuse(&path, app::error::AppError::Forbidden("only the owner can manage accounts".into()));
        }
        // The owner may do everything: a missing project is the page's to say.
        Page::Project(obj, need) if !caller.owner => {
            if let Err(e) = app::ssr::access::check(&state.pool, &caller, obj, need).await {
                return refuse(&path, e);
            }
        }
        _ => {}
    }
    req.extensions_mut().insert(caller);
    next.run(req).await
}

pub async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let changes = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if changes && !same_site(&req) {
        return error(StatusCode::FORBIDDEN, "a request from another site was refused".into());
    }
    let path = req.uri().path().to_string();
    if !state.config.require_login {
        // Without a login, a page on another site could still drive this
        // server from the user's browser by pointing its own name at
        // 127.0.0.1 (DNS rebinding); such requests carry that name as Host.
        if !loopback_host(&req) {
            return error(
                StatusCode::FORBIDDEN,
                "this Assay runs without login (--no-login) and answers only requests addressed to localhost, \
                 127.0.0.1 or [::1]; to serve other names, run it with the owner login"
                    .into(),
            );
        }
        return admit(&state, Caller::open_server(), req, next).await;
    }
    if public(&path) {
        return next.run(req).await;
    }
    let token = req
        .headers()
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(app::ssr::auth::token_in)
        .map(str::to_string);
    if let Some(t) = token {
        match app::ssr::auth::session_user(&state.pool, &t).await {
            Ok(Some(u)) => {
                let caller = Caller { user_id: u.id, name: u.name, owner: u.role == types::Role::Owner };
                return admit(&state, caller, req, next).await;
            }
            Ok(None) => {}
            Err(e) => return super::app_error(e),
        }
    }
    if path.starts_with("/api/") {
        return error(StatusCode::UNAUTHORIZED, "log in as the owner first".into());
    }
    let owner = app::ssr::auth::has_owner(&state.pool).await.unwrap_or(true);
    let to = if owner {
        let query = req.uri().query().map(|q| format!("{path}?{q}")).unwrap_or(path);
        format!("/login?next={}", form_urlencoded::byte_serialize(query.as_bytes()).collect::<String>())
    } else {
        "/setup".to_string()
    };
    (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response()
}

/// Whether the request names a loopback host (`Host`, or the URI's
/// authority over HTTP/2). No host at all (HTTP/1.0) is taken as local:
/// every browser sends one.
fn loopback_host(req: &Request) -> bool {
    let host = match req.uri().host() {
        Some(h) => h.to_string(),
        None => match req.headers().get(header::HOST).map(|v| v.to_str()) {
            None => return true,
            Some(Err(_)) => return false,
            Some(Ok(h)) => h.to_string(),
        },
    };
    is_loopback_name(&host)
}

/// `localhost`, a loopback IP literal, with or without a port.
fn is_loopback_name(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else if host.matches(':').count() == 1 {
        host.split(':').next().unwrap_or("")
    } else {
        host
    };
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost")
        || name.to_ascii_lowercase().ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_pass_without_login() {
        for h in [
            "localhost",
            "localhost:3000",
            "LOCALHOST.",
            "127.0.0.1:3000",
            "127.1.2.3",
            "[::1]:3000",
            "[::1]",
            "app.localhost",
        ] {
            assert!(is_loopback_name(h), "{h}");
        }
        for h in [
            "evil.example",
            "evil.example:3000",
            "127.0.0.1.evil.example",
            "192.168.1.5:3000",
            "[::2]",
            "localhost.evil.example",
            "",
        ] {
            assert!(!is_loopback_name(h), "{h}");
        }
    }

    #[test]
    fn a_page_s_project_is_read_from_its_decoded_path() {
        for p in ["/projects/2/corpus", "/projects/%32/corpus", "/projects/02/corpus", "/projects/+2/corpus"] {
            assert_eq!(needs(p, false), Page::Project(Obj::Project(2), Need::Read), "{p}");
        }
        assert_eq!(needs("/projects/%2532/corpus", true), Page::Malformed);
        assert_eq!(needs("/%75sers", false), Page::Owners);
        assert_eq!(needs("/api/metrics/3/report.json", false), Page::Open);
    }

    #[test]
    fn rater_links_login_and_static_files_are_public_and_nothing_else() {
        for p in [
            "/login",
            "/setup",
            "/s/abc",
            "/share/abc",
            "/api/share/abc/report.json",
            "/api/study/rate",
            "/api/auth/login",
            "/pkg/assay.js",
            "/favicon.ico",
        ] {
            assert!(public(p), "{p}");
        }
        for p in [
            "/",
            "/projects/1/corpus",
            "/api/list_projects123",
            "/api/evaluations/1/report.json",
            "/api/studies/1/chart.svg",
            "/api/metrics/1/report.html",
        ] {
            assert!(!public(p), "{p}");
        }
    }
}

//! The login guard: every request but the rater links, the login and
//! first-run pages and static files needs the owner's session (unless the
//! server runs with `--no-login`). Pages without one are sent to the login
//! (or, before an owner exists, the first-run) page; API calls get 401.
//! Signed in, the request carries its [`Caller`]; a collaborator's pages and
//! plain routes of a project need their rights on it (server functions
//! check for themselves: `app::access`).
//! State-changing requests must come from Assay's own pages: a cross-site
//! `Origin` (or `Sec-Fetch-Site`) is refused with 403 — with the SameSite=Strict
//! cookie, the CSRF defence.

use app::access::{Caller, Need};
use app::state::AppState;
use app::store::access::Obj;
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
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
        let origin_host = origin.split("://").nth(1).unwrap_or("");
        return !host.is_empty() && origin_host == host;
    }
    match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        Some(site) => site == "same-origin" || site == "none",
        // Neither header: not a browser's cross-site request (curl, scripts).
        None => true,
    }
}

/// What a plain route or page of a project needs, from its path:
/// `/projects/{id}/…` and `/api/projects/{id}/…` name the project (reading
/// for GET, changing otherwise), `/api/evaluations/{id}/…`,
/// `/api/studies/{id}/…`, `/api/metrics/{id}/…` and `/api/experiments/{id}/…` their object
/// (downloads: reading); the accounts page is the owner's. Server functions
/// check for themselves.
fn needs(path: &str, changes: bool) -> Option<Result<(Obj, Need), ()>> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let id = |i: usize| parts.get(i).and_then(|x| x.parse::<i64>().ok());
    let need = if changes { Need::Edit } else { Need::Read };
    match parts.as_slice() {
        ["users", ..] => Some(Err(())),
        ["projects", _, ..] => id(1).map(|p| Ok((Obj::Project(p), need))),
        ["api", "projects", _, ..] => id(2).map(|p| Ok((Obj::Project(p), need))),
        ["api", "evaluations", _, ..] => id(2).map(|e| Ok((Obj::Evaluation(e), Need::Read))),
        ["api", "studies", _, ..] => id(2).map(|s| Ok((Obj::Study(s), Need::Read))),
        ["api", "metrics", _, ..] => id(2).map(|m| Ok((Obj::MetricsRun(m), Need::Read))),
        ["api", "experiments", _, ..] => id(2).map(|x| Ok((Obj::Experiment(x), Need::Read))),
        _ => None,
    }
}

/// A refusal: JSON for the API, a short page for a browser's page request.
fn refuse(path: &str, e: app::error::AppError) -> Response {
    if path.starts_with("/api/") {
        return super::app_error(e);
    }
    let status = match e {
        app::error::AppError::NotFound(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::FORBIDDEN,
    };
    let text = e.to_string().replace('&', "&amp;").replace('<', "&lt;");
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Assay</title>\
         <link rel=\"stylesheet\" href=\"/pkg/assay.css\"></head><body><main class=\"page\"><h1>{}</h1>\
         <p>{text}.</p><p><a href=\"/\">Back to your projects</a></p></main></body></html>",
        if status == StatusCode::NOT_FOUND { "Not found" } else { "Not for you" }
    );
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

/// Lets the request on as `caller` if its path allows it.
async fn admit(state: &AppState, caller: Caller, mut req: Request, next: Next) -> Response {
    let changes = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let path = req.uri().path().to_string();
    match needs(&path, changes) {
        Some(Err(())) if !caller.owner => {
            return refuse(&path, app::error::AppError::Forbidden("only the owner can manage accounts".into()));
        }
        // The owner may do everything: a missing project is the page's to say.
        Some(Ok((obj, need))) if !caller.owner => {
            if let Err(e) = app::access::check(&state.pool, &caller, obj, need).await {
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
        return admit(&state, Caller::open_server(), req, next).await;
    }
    if public(&path) {
        return next.run(req).await;
    }
    let token = req
        .headers()
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(app::auth::token_in)
        .map(str::to_string);
    if let Some(t) = token {
        match app::auth::session_user(&state.pool, &t).await {
            Ok(Some((user_id, name, role))) => {
                return admit(&state, Caller { user_id, name, owner: role == "owner" }, req, next).await
            }
            Ok(None) => {}
            Err(e) => return super::app_error(e),
        }
    }
    if path.starts_with("/api/") {
        return error(StatusCode::UNAUTHORIZED, "log in as the owner first".into());
    }
    let owner = app::auth::has_owner(&state.pool).await.unwrap_or(true);
    let to = if owner {
        let query = req.uri().query().map(|q| format!("{path}?{q}")).unwrap_or(path);
        format!("/login?next={}", form_urlencoded::byte_serialize(query.as_bytes()).collect::<String>())
    } else {
        "/setup".to_string()
    };
    (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metrics_run_s_files_need_reading_its_project() {
        assert!(matches!(needs("/api/metrics/3/report.json", false), Some(Ok((Obj::MetricsRun(3), Need::Read)))));
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

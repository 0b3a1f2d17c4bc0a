//! Access to the plain routes, decided on what the router decoded.
//!
//! Every plain route behind the login is built from [`super::plain_routes`]
//! and runs behind [`authorize`], a route layer: it runs after axum matched
//! the route, so it reads the path parameters exactly as the handler will
//! (percent-decoded once, by the router), never the raw path. Each
//! parameter's *name* says what it names ([`object`]): `{project}`,
//! `{question_set}`, `{answer_set}`, `{evaluation}`, `{study}`,
//! `{metrics_run}`, `{experiment}`; `{file}` names a file. A parameter the
//! table does not know refuses the request (fail closed), so a new route
//! is checked by construction or not served at all. Every id must exist
//! and all of them must belong to one project (a child of another project
//! is "not found"), which the caller must be allowed to read (GET, HEAD)
//! or change (anything else). Handlers take the outcome as [`Granted`],
//! which only this layer makes: a handler mounted without it answers 500.

use app::error::AppError;
use app::ssr::access::{Caller, Need};
use app::ssr::state::AppState;
use app::ssr::store::access::Obj;
use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use super::{app_error, error};

/// What a path parameter of a plain route names, by the parameter's name:
/// `Some(None)` a file name (no object), `None` a name the guard does not
/// know.
pub fn object(param: &str) -> Option<Option<fn(i64) -> Obj>> {
    Some(Some(match param {
        "project" => Obj::Project,
        "question_set" => Obj::QuestionSet,
        "answer_set" => Obj::AnswerSet,
        "evaluation" => Obj::Evaluation,
        "study" => Obj::Study,
        "metrics_run" => Obj::MetricsRun,
        "experiment" => Obj::Experiment,
        "file" => return Some(None),
        _ => return None,
    }))
}

/// What the route layer established: the project every id of the path
/// belongs to, who asked, and what they were allowed.
#[derive(Debug, Clone)]
pub struct Granted {
    pub project: i64,
    pub caller: Caller,
    pub need: Need,
}

impl<S: Send + Sync> FromRequestParts<S> for Granted {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<Granted>().cloned().ok_or_else(|| {
            tracing::error!(path = %parts.uri.path(), "a plain route is mounted without its access check");
            error(StatusCode::INTERNAL_SERVER_ERROR, "this route is not configured for access checks".into())
        })
    }
}

/// The route layer: checks the caller (put in the request by the login
/// guard) against every id the matched route decoded, then hands the
/// request on with its [`Granted`].
pub async fn authorize(State(state): State<AppState>, params: RawPathParams, mut req: Request, next: Next) -> Response {
    let Some(caller) = req.extensions().get::<Caller>().cloned() else {
        return error(StatusCode::UNAUTHORIZED, "log in first".into());
    };
    let need = if matches!(*req.method(), Method::GET | Method::HEAD) { Need::Read } else { Need::Edit };
    match project_of_params(&state, &params).await {
        Ok(project) => match app::ssr::access::check(&state.pool, &caller, Obj::Project(project), need).await {
            Ok(_) => {
                req.extensions_mut().insert(Granted { project, caller, need });
                next.run(req).await
            }
            Err(e) => app_error(e),
        },
        Err(e) => app_error(e),
    }
}

/// The one project all ids of a route's parameters belong to.
async fn project_of_params(state: &AppState, params: &RawPathParams) -> Result<i64, AppError> {
    let mut project: Option<(i64, Obj)> = None;
    for (name, value) in params {
        let Some(kind) = object(name) else {
            tracing::error!(param = name, "a plain route has a parameter the access check does not know");
            return Err(AppError::Forbidden(format!("the parameter {{{name}}} of this route is not checked")));
        };
        let Some(kind) = kind else { continue };
        // The same parse as the handler's `Path<i64>`.
        let id: i64 = value.parse().map_err(|_| AppError::Invalid(format!("\"{value}\" is not an id")))?;
        let obj = kind(id);
        let p = app::ssr::store::access::project_of(&state.pool, obj).await?;
        match project {
            None => project = Some((p, obj)),
            Some((q, parent)) if q != p => {
                return Err(AppError::NotFound(format!("{obj} is not in {parent}")));
            }
            Some(_) => {}
        }
    }
    match project {
        Some((p, _)) => Ok(p),
        None => {
            tracing::error!("a plain route names no project");
            Err(AppError::Forbidden("this route names no project".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plain_route_parameter_names_something_the_guard_checks() {
        for (_, path) in super::super::plain_paths() {
            let mut names_a_project = false;
            for name in path.split('/').filter_map(|s| s.strip_prefix('{')?.strip_suffix('}')) {
                let kind = object(name).unwrap_or_else(|| panic!("{path}: {{{name}}} is not in the table"));
                names_a_project |= kind.is_some();
            }
            assert!(names_a_project, "{path} names no object");
        }
    }
}

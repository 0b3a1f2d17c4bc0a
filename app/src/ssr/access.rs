//! Who may do what. The owner may do everything. A collaborator (an account
//! with the `member` role) sees only the projects the owner made them a
//! member of, and changes only those where their access is `edit`;
//! accounts, projects themselves and the LLM settings are the owner's
//! alone. The login guard puts the request's [`Caller`] in its extensions;
//! every server function names what it touches ([`Obj`]) and what it needs
//! ([`Need`]), and [`require`] answers 403 otherwise. (A server run with
//! `--no-login` has no accounts: every caller is the owner.)

use crate::ssr::store::Db;

use crate::error::{AppError, AppResult};
use crate::ssr::store::access::{self, Obj};

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user_id: i64,
    pub name: String,
    pub owner: bool,
}

impl Caller {
    /// Everyone, on a server that runs without the login.
    pub fn open_server() -> Caller {
        Caller { user_id: 0, name: "owner".into(), owner: true }
    }
}

/// What a request needs of a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Read,
    Edit,
}

/// Whether `caller` may `need` the project `obj` belongs to; its id if so.
pub async fn check(pool: &Db, caller: &Caller, obj: Obj, need: Need) -> AppResult<i64> {
    let project = access::project_of(pool, obj).await?;
    if caller.owner {
        return Ok(project);
    }
    match (access::membership(pool, caller.user_id, project).await?.as_deref(), need) {
        (Some("edit"), _) | (Some("read"), Need::Read) => Ok(project),
        (Some(_), Need::Edit) => Err(AppError::Forbidden(format!(
            "you may read project {project} but not change it: ask the owner for edit access"
        ))),
        _ => Err(AppError::Forbidden(format!("you have no access to project {project}"))),
    }
}

/// Refused unless the caller is the owner.
pub fn owner(caller: &Caller, what: &str) -> AppResult<()> {
    if caller.owner {
        Ok(())
    } else {
        Err(AppError::Forbidden(format!("only the owner can {what}")))
    }
}

/// What a server function knows of its request: the state, the caller and
/// the response, read at its first poll — after an `.await` the reactive
/// context is not there in every case (server-side rendering), so a server
/// function reads it once, at the top, and uses this afterwards.
pub struct Request {
    pub state: crate::ssr::state::AppState,
    pub caller: Caller,
    response: Option<leptos_axum::ResponseOptions>,
}

impl Request {
    /// The current request (its caller set by the login guard).
    pub fn now() -> AppResult<Request> {
        use leptos::prelude::use_context;
        let state = crate::ssr::state::app_state()?;
        let response = use_context::<leptos_axum::ResponseOptions>();
        let caller = use_context::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Caller>().cloned());
        match caller {
            Some(caller) => Ok(Request { state, caller, response }),
            None => {
                let e = AppError::Forbidden("log in first".into());
                forbidden_status(&response, &e);
                Err(e)
            }
        }
    }

    /// `path` (`/share/…`, `/s/…`) as an absolute URL people can open from
    /// elsewhere: under the configured base URL, else under the scheme and
    /// host this request came to (a host that is not a plain host name or
    /// address is not echoed: the path alone is returned then).
    pub fn absolute(&self, path: &str) -> String {
        if let Some(base) = self.state.config.base_url.as_deref().filter(|b| !b.is_empty()) {
            return format!("{}{path}", base.trim_end_matches('/'));
        }
        let Some(parts) = leptos::prelude::use_context::<axum::http::request::Parts>() else {
            return path.to_string();
        };
        let host = parts
            .headers
            .get(axum::http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| parts.uri.authority().map(|a| a.as_str()))
            .unwrap_or("");
        let plain = !host.is_empty()
            && host.len() <= 255
            && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
        if !plain {
            return path.to_string();
        }
        let scheme = if crate::ssr::auth::came_over_https(&parts.headers, &parts.uri) { "https" } else { "http" };
        format!("{scheme}://{host}{path}")
    }

    /// Refused (403) unless the caller may `need` the project of `obj`; the
    /// project's id if so.
    pub async fn require(&self, obj: Obj, need: Need) -> AppResult<i64> {
        let result = check(&self.state.pool, &self.caller, obj, need).await;
        if let Err(e) = &result {
            forbidden_status(&self.response, e);
        }
        result
    }

    /// Refused (404) unless each of `children` belongs to `project` (which
    /// [`Request::require`] allowed): the check of a child's id named next
    /// to its parent's.
    pub fn require_in(
        &self,
        project: i64,
        children: impl IntoIterator<Item = Obj>,
    ) -> impl std::future::Future<Output = AppResult<()>> + Send + '_ {
        // Collected before the future: an iterator with a borrowing closure
        // inside a server function's future is not `Send` for every lifetime.
        let children: Vec<Obj> = children.into_iter().collect();
        async move {
            for child in children {
                access::require_in(&self.state.pool, project, child).await?;
            }
            Ok(())
        }
    }

    /// Refused (403) unless the caller is the owner.
    pub fn require_owner(&self, what: &str) -> AppResult<()> {
        let result = owner(&self.caller, what);
        if let Err(e) = &result {
            forbidden_status(&self.response, e);
        }
        result
    }
}

fn forbidden_status(response: &Option<leptos_axum::ResponseOptions>, e: &AppError) {
    if let (Some(resp), AppError::Forbidden(_)) = (response, e) {
        resp.set_status(axum::http::StatusCode::FORBIDDEN);
    }
}

/// Gives a collaborator `read` or `edit` rights on a project, or takes
/// them away (`none`); the owner's account has every right already.
pub async fn set_access(pool: &Db, user: i64, project: i64, access: &str) -> AppResult<()> {
    match access::user_role(pool, user).await? {
        None => return Err(AppError::NotFound(format!("there is no user {user}"))),
        Some(types::Role::Owner) => return Err(AppError::Invalid("the owner has every right already".into())),
        _ => {}
    }
    access::project_of(pool, Obj::Project(project)).await?;
    let access = match access.trim() {
        "none" | "" => None,
        name => Some(
            types::Access::parse(name)
                .map_err(|_| AppError::Invalid(format!("access is read, edit or none, not \"{name}\"")))?,
        ),
    };
    access::set_membership(pool, user, project, access).await
}

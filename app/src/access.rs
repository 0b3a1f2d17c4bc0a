//! Who may do what. The owner may do everything. A collaborator (an account
//! with the `member` role) sees only the projects the owner made them a
//! member of, and changes only those where their access is `edit`;
//! accounts, projects themselves and the LLM settings are the owner's
//! alone. The login guard puts the request's [`Caller`] in its extensions;
//! every server function names what it touches ([`Obj`]) and what it needs
//! ([`Need`]), and [`require`] answers 403 otherwise. (A server run with
//! `--no-login` has no accounts: every caller is the owner.)

use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::store::access::{self, Obj};

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
pub async fn check(pool: &SqlitePool, caller: &Caller, obj: Obj, need: Need) -> AppResult<i64> {
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

/// The caller of the current server-function request.
pub async fn caller() -> AppResult<Caller> {
    let found: Option<axum::Extension<Caller>> = leptos_axum::extract().await.ok();
    found.map(|e| e.0).ok_or_else(|| AppError::Forbidden("log in first".into()))
}

fn forbidden_status(e: &AppError) {
    if matches!(e, AppError::Forbidden(_)) {
        if let Some(resp) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(axum::http::StatusCode::FORBIDDEN);
        }
    }
}

/// In a server function: refused (403) unless the caller may `need` the
/// project of `obj`; the project's id if so.
pub async fn require(obj: Obj, need: Need) -> AppResult<i64> {
    let pool = crate::state::app_state()?.pool;
    let result = match caller().await {
        Ok(c) => check(&pool, &c, obj, need).await,
        Err(e) => Err(e),
    };
    if let Err(e) = &result {
        forbidden_status(e);
    }
    result
}

/// In a server function: refused (403) unless the caller is the owner.
pub async fn require_owner(what: &str) -> AppResult<Caller> {
    let result = caller().await.and_then(|c| owner(&c, what).map(|_| c));
    if let Err(e) = &result {
        forbidden_status(e);
    }
    result
}

/// Gives a collaborator `read` or `edit` rights on a project, or takes
/// them away (`none`); the owner's account has every right already.
pub async fn set_access(pool: &SqlitePool, user: i64, project: i64, access: &str) -> AppResult<()> {
    match access::user_role(pool, user).await?.as_deref() {
        None => return Err(AppError::NotFound(format!("there is no user {user}"))),
        Some("owner") => return Err(AppError::Invalid("the owner has every right already".into())),
        _ => {}
    }
    access::project_of(pool, Obj::Project(project)).await?;
    let access = match access.trim() {
        "read" => Some("read"),
        "edit" => Some("edit"),
        "none" | "" => None,
        other => return Err(AppError::Invalid(format!("access is read, edit or none, not \"{other}\""))),
    };
    access::set_membership(pool, user, project, access).await
}

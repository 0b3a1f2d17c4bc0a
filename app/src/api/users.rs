//! Collaborator accounts and their project rights (the owner only).

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::Request;
#[cfg(feature = "ssr")]
use crate::ssr::store;

/// Every account with its project rights (the owner only).
#[server(output = crate::codec::Json)]
pub async fn list_users() -> Result<Vec<UserView>, AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    store::access::users(&call.state.pool).await
}

/// A collaborator's account (the owner only). Their rights start empty.
#[server(output = crate::codec::Json)]
pub async fn create_member(name: String, password: String) -> Result<i64, AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    crate::ssr::auth::create_user(&call.state.pool, &name, &password, types::Role::Member).await
}

/// Deletes a collaborator's account (the owner only).
#[server(output = crate::codec::Json)]
pub async fn delete_member(user_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    store::access::delete_member(&call.state.pool, user_id).await
}

/// Sets a collaborator's rights on a project: `read`, `edit` or `none`
/// (the owner only).
#[server(output = crate::codec::Json)]
pub async fn set_member_access(user_id: i64, project_id: i64, access: String) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require_owner("manage accounts")?;
    let pool = &call.state.pool;
    crate::ssr::access::set_access(pool, user_id, project_id, &access).await
}

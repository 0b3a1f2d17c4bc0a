//! Read-only share links: making, listing, withdrawing, and what a link opens.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::state::app_state;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// Makes a read-only share link for a page (`kind`: evaluation or study);
/// its path, shown once.
#[server(output = crate::codec::Json)]
pub async fn create_share(kind: types::ShareKind, page_id: i64, expires_days: Option<u32>) -> Result<String, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(crate::ssr::shares::project_of(&call.state.pool, kind, page_id).await?), Need::Edit)
        .await?;
    if expires_days == Some(0) {
        return Err(AppError::Invalid("a link that expires lasts at least one day".into()));
    }
    let (_, token) = crate::ssr::shares::create(&call.state.pool, kind, page_id, expires_days).await?;
    Ok(call.absolute(&format!("/share/{token}")))
}

/// A page's share links.
#[server(output = crate::codec::Json)]
pub async fn list_shares(kind: types::ShareKind, page_id: i64) -> Result<Vec<ShareLink>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(crate::ssr::shares::project_of(&call.state.pool, kind, page_id).await?), Need::Read)
        .await?;
    crate::ssr::store::shares::of_page(&call.state.pool, kind, page_id).await
}

#[server(output = crate::codec::Json)]
pub async fn revoke_share(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Share(id), Need::Edit).await?;
    crate::ssr::store::shares::revoke(&call.state.pool, id).await
}

/// What a share link opens (no account). An unknown, withdrawn or expired
/// link is a 404, and so is the page showing it.
#[server(endpoint = "share/kind", output = crate::codec::Json)]
pub async fn get_shared_kind(token: String) -> Result<types::ShareKind, AppError> {
    shared(crate::ssr::shares::open(&app_state()?.pool, &token).await.map(|(kind, _)| kind))
}

/// The report a share link opens (an evaluation's, a study's results, a
/// question set, a metrics run), read-only (no account).
#[server(endpoint = "share/get", output = crate::codec::Json)]
pub async fn get_shared(token: String) -> Result<SharedView, AppError> {
    shared(crate::ssr::shares::view(&app_state()?.pool, &token).await)
}

/// Page `page` of the questions of the set a share link opens (no account).
#[server(endpoint = "share/questions", output = crate::codec::Json)]
pub async fn get_shared_questions(token: String, page: i64) -> Result<QuestionsPage, AppError> {
    shared(crate::ssr::shares::question_page(&app_state()?.pool, &token, page).await)
}

/// Page `page` of a pair's questions in the drill-down of the evaluation a
/// share link opens (no account).
#[server(endpoint = "share/drill_questions", output = crate::codec::Json)]
pub async fn get_shared_drill_questions(
    token: String,
    a: i64,
    b: i64,
    page: i64,
) -> Result<DrillQuestionsPage, AppError> {
    shared(crate::ssr::shares::drill_questions(&app_state()?.pool, &token, a, b, page).await)
}

/// One question's judgments in the evaluation a share link opens (no
/// account; the call logs stay the project's).
#[server(endpoint = "share/drill", output = crate::codec::Json)]
pub async fn get_shared_drill(token: String, a: i64, b: i64, question: i64) -> Result<DrillView, AppError> {
    shared(crate::ssr::shares::drill(&app_state()?.pool, &token, a, b, question).await)
}

/// The experiment's report a share link opens, read-only (no account).
#[server(endpoint = "share/experiment", output = crate::codec::Json)]
pub async fn get_shared_experiment(token: String) -> Result<ExperimentReportView, AppError> {
    shared(crate::ssr::shares::experiment(&app_state()?.pool, &token).await)
}

/// The overview of the graph a share link opens (no account); the explorer
/// reads the graph itself through `get_shared_graph_view`.
#[server(endpoint = "share/graph_overview", output = crate::codec::Json)]
pub async fn get_shared_graph(token: String) -> Result<Option<GraphOverview>, AppError> {
    shared(crate::ssr::shares::graph(&app_state()?.pool, &token).await)
}

/// A shared page's reply: "not found" is the response's 404.
#[cfg(feature = "ssr")]
fn shared<T>(r: Result<T, AppError>) -> Result<T, AppError> {
    if matches!(r, Err(AppError::NotFound(_))) {
        if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
            resp.set_status(axum::http::StatusCode::NOT_FOUND);
        }
    }
    r
}

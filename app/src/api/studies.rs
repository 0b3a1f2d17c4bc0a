//! Human studies: creating and managing them, their links, the LLM rater, the results, and the rater's side at a link.

use leptos::prelude::*;

use crate::error::AppError;

use crate::model::*;
use types::requests::StudyRequest;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::state::app_state;
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

#[cfg(feature = "ssr")]
use super::auth::CookieOptions;

/// A new study's links (each token shown only now: only its hash is kept).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CreatedStudy {
    pub study_id: i64,
    /// `https://HOST/s/TOKEN`: the open link (a rater per browser).
    pub open_url: String,
    /// `https://HOST/s/TOKEN` per rater.
    pub rater_urls: Vec<String>,
}

#[server(output = crate::codec::Json)]
pub async fn list_studies(project_id: i64) -> Result<Vec<StudyView>, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Read).await?;
    crate::ssr::studies::list(&call.state.pool, project_id).await
}

/// The default dimensions of a question study and of an answer-validation
/// study, as the JSON the designer edits.
#[server(output = crate::codec::Json)]
pub async fn default_study_dimensions() -> Result<(String, String), AppError> {
    use engine::study::Kind;
    let json = |k: Kind| serde_json::to_string_pretty(&engine::study::kind_dimensions(k)).unwrap_or_default();
    Ok((json(Kind::Questions), json(Kind::Answers)))
}

/// Creates a study: the request's fields (`req[questions]`: `SET:N`
/// comma-separated; `req[answers]`: an answer set's id, or `reference`),
/// its name and `dimensions` as JSON (empty: the kind's own).
#[server(output = crate::codec::Json)]
pub async fn create_study(
    project_id: i64,
    name: String,
    #[server(default)] dimensions: String,
    req: StudyRequest,
) -> Result<CreatedStudy, AppError> {
    let call = Request::now()?;
    call.require(Obj::Project(project_id), Need::Edit).await?;
    let dimensions: Option<Vec<engine::study::Dimension>> = match dimensions.trim() {
        "" => None,
        d => Some(serde_json::from_str(d).map_err(|e| AppError::Invalid(format!("dimensions: {e}")))?),
    };
    req.validate().map_err(|e| AppError::Invalid(e.to_string()))?;
    call.require_in(project_id, req.questions.iter().map(|d| Obj::QuestionSet(d.set))).await?;
    call.require_in(project_id, req.answers.map(Obj::AnswerSet)).await?;
    let spec = crate::ssr::studies::StudySpec { project_id, name, request: req, dimensions };
    let created = crate::ssr::studies::create(&call.state.pool, &spec).await?;
    Ok(CreatedStudy {
        study_id: created.study_id,
        open_url: if created.open_token.is_empty() {
            String::new()
        } else {
            call.absolute(&format!("/s/{}", created.open_token))
        },
        rater_urls: created.rater_tokens.iter().map(|t| call.absolute(&format!("/s/{t}"))).collect(),
    })
}

#[server(output = crate::codec::Json)]
pub async fn set_study_open(id: i64, open: bool) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    crate::ssr::studies::set_open(&call.state.pool, id, open).await
}

/// A new link for a study (`kind`: open or rater); its path, shown once.
#[server(output = crate::codec::Json)]
pub async fn add_study_link(id: i64, kind: String) -> Result<String, AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    let label = if kind == "open" { "open link" } else { "rater link" };
    Ok(call.absolute(&format!("/s/{}", crate::ssr::studies::add_link(&call.state.pool, id, &kind, label).await?)))
}

#[server(output = crate::codec::Json)]
pub async fn revoke_study_link(link_id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::StudyLink(link_id), Need::Edit).await?;
    crate::ssr::studies::revoke_link(&call.state.pool, link_id).await
}

#[server(output = crate::codec::Json)]
pub async fn delete_study(id: i64) -> Result<(), AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    crate::ssr::studies::delete(&call.state.pool, id).await
}

/// Starts the LLM rater on a study's items (a job), with the rubric the humans read.
#[server(output = crate::codec::Json)]
pub async fn start_study_rating(id: i64) -> Result<JobView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Edit).await?;
    let state = call.state.clone();
    let job = crate::ssr::studies::create_llm_rating(&state.pool, id, false).await?;
    state.jobs.spawn(state.pool.clone(), state.llm(), job.id, false)?;
    Ok(job)
}

#[server(output = crate::codec::Json)]
pub async fn get_study_results(id: i64) -> Result<StudyResultsView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Study(id), Need::Read).await?;
    crate::ssr::studies::results_view(&call.state.pool, id).await
}

/// A rater's session at a study link (no account; `rater`: the browser's
/// own token at an open link, or empty).
#[server(endpoint = "study/session", output = crate::codec::Json)]
pub async fn study_session(link: String, rater: String) -> Result<RaterSession, AppError> {
    let state = app_state()?;
    let cookie = CookieOptions::now();
    let parts = use_context::<axum::http::request::Parts>();
    // The browser's rater at this link: the page's own token, else the
    // HttpOnly cookie (which survives the page's storage being cleared).
    let name = rater_cookie_name(&link);
    let from_cookie = parts
        .as_ref()
        .and_then(|p| p.headers.get(axum::http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(|c| {
            c.split(';').filter_map(|c| c.trim().split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        });
    let rater = Some(rater.trim().to_string()).filter(|r| !r.is_empty()).or(from_cookie);
    let addr = parts
        .as_ref()
        .and_then(|p| p.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>())
        .map_or("?".to_string(), |a| a.0.ip().to_string());
    let session = crate::ssr::studies::session(&state.pool, &link, rater.as_deref(), |link_id| {
        state.raters.admit(link_id, &addr)
    })
    .await?;
    if !session.rater.is_empty() {
        cookie.send_named(&name, &session.rater, 180 * 86_400, "/");
    }
    Ok(session)
}

/// The rater cookie's name for a study link: a fingerprint of the link,
/// so each link keeps its own rater and the name gives the link away not.
#[cfg(feature = "ssr")]
fn rater_cookie_name(link: &str) -> String {
    format!("assay_rater_{}", &crate::ssr::tokens::hash(link.trim())[..16])
}

/// A rater's scores for one item: `scores` comma-separated, one per dimension.
#[server(endpoint = "study/rate", output = crate::codec::Json)]
pub async fn study_rate(link: String, rater: String, item: i64, scores: String) -> Result<(i64, i64), AppError> {
    let scores: Vec<u8> = scores
        .split(',')
        .map(|s| s.trim().parse::<u8>().map_err(|_| AppError::Invalid(format!("\"{s}\" is not a score"))))
        .collect::<Result<_, _>>()?;
    crate::ssr::studies::rate(&app_state()?.pool, &link, &rater, item, &scores).await
}

#[server(endpoint = "study/finish", output = crate::codec::Json)]
pub async fn study_finish(link: String, rater: String) -> Result<(), AppError> {
    crate::ssr::studies::finish(&app_state()?.pool, &link, &rater).await
}

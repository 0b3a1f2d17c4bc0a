//! An experiment's downloads: its outcome (every stage, its job, calls,
//! tokens, cost) as JSON and the manifest it ran. The same reach a share
//! link's holder through `web::shares`.

use app::ssr::state::AppState;
use app::ssr::store::Db;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::app_error;

/// `experiment.json` or `manifest.toml` of experiment `id`.
pub async fn file_of(pool: &Db, id: i64, file: &str) -> Response {
    let attachment = |ext: &str| format!("attachment; filename=\"experiment-{id}.{ext}\"");
    match file {
        "experiment.json" => match app::ssr::experiments::wizard::outcome_json(pool, id).await {
            Ok(v) => (
                [
                    (header::CONTENT_TYPE, "application/json".to_string()),
                    (header::CONTENT_DISPOSITION, attachment("json")),
                ],
                serde_json::to_string_pretty(&v).unwrap_or_default(),
            )
                .into_response(),
            Err(e) => app_error(e),
        },
        "manifest.toml" => match app::ssr::experiments::wizard::manifest(pool, id).await {
            Ok(text) => (
                [
                    (header::CONTENT_TYPE, "application/toml; charset=utf-8".to_string()),
                    (header::CONTENT_DISPOSITION, attachment("toml")),
                ],
                text,
            )
                .into_response(),
            Err(e) => app_error(e),
        },
        other => app_error(app::error::AppError::NotFound(format!("no \"{other}\": experiment.json or manifest.toml"))),
    }
}

/// `GET /api/experiments/{id}/{file}`.
pub async fn file(State(state): State<AppState>, _: super::Granted, Path((id, file)): Path<(i64, String)>) -> Response {
    file_of(&state.pool, id, &file).await
}

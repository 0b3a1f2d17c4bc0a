//! What a share link's holder may download: exactly the shared page's own
//! files, found through the token (no id in the address to change).

use app::state::AppState;
use axum::extract::{Path, State};
use axum::response::Response;

use super::app_error;

/// `GET /api/share/{token}/{file}` (report.json, report.html, chart.svg …).
pub async fn file(State(state): State<AppState>, Path((token, file)): Path<(String, String)>) -> Response {
    match app::share::open(&state.pool, &token).await {
        Ok((kind, id)) if kind == "evaluation" => super::evaluations::report_of(&state.pool, id, &file).await,
        Ok((_, id)) => super::studies::file_of(&state.pool, id, &file).await,
        Err(e) => app_error(e),
    }
}

/// `GET /api/share/{token}/plots/{file}` and `/tables/{file}` of a shared evaluation.
pub async fn part(
    State(state): State<AppState>,
    Path((token, part, file)): Path<(String, String, String)>,
) -> Response {
    match app::share::open(&state.pool, &token).await {
        Ok((kind, id)) if kind == "evaluation" && part == "plots" => {
            super::evaluations::plot_of(&state.pool, id, &file).await
        }
        Ok((kind, id)) if kind == "evaluation" && part == "tables" => {
            super::evaluations::table_of(&state.pool, id, &file).await
        }
        Ok(_) => app_error(app::error::AppError::NotFound(format!("this shared page has no {part}/{file}"))),
        Err(e) => app_error(e),
    }
}

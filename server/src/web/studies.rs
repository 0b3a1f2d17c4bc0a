//! A study's downloads: every rating as CSV, the results chart as SVG or PNG.

use app::state::AppState;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{app_error, download, error, svg};

/// `GET /api/studies/{id}/ratings.csv`.
pub async fn ratings_csv(State(state): State<AppState>, Path(id): Path<i64>) -> Response {
    match app::study::ratings_csv(&state.pool, id).await {
        Ok(body) => download(body, "csv", &format!("study-{id}-ratings")),
        Err(e) => app_error(e),
    }
}

/// `GET /api/studies/{id}/chart.svg|.png`.
pub async fn chart(State(state): State<AppState>, Path((id, file)): Path<(i64, String)>) -> Response {
    let body = match app::study::results_view(&state.pool, id).await {
        Ok(v) => v.chart_svg,
        Err(e) => return app_error(e),
    };
    match file.as_str() {
        "chart.svg" => svg(body),
        "chart.png" => match crate::png::svg_to_png(&body, 2.0) {
            Ok(png) => ([(header::CONTENT_TYPE, "image/png")], png).into_response(),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
        },
        other => error(StatusCode::NOT_FOUND, format!("no \"{other}\": chart.svg or chart.png")),
    }
}

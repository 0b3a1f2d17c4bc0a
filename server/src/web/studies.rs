//! A study's downloads: every rating as CSV, the results chart as SVG or
//! PNG, the results as one HTML file. (Also reached through share links.)

use app::ssr::state::AppState;
use app::ssr::store::Db;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{app_error, download, error, svg};

/// `chart.svg`, `chart.png`, `ratings.csv` or `report.html` of study `id`.
pub async fn file_of(pool: &Db, id: i64, file: &str) -> Response {
    match file {
        "ratings.csv" => match app::ssr::study::ratings_csv(pool, id).await {
            Ok(body) => download(body, "csv", &format!("study-{id}-ratings")),
            Err(e) => app_error(e),
        },
        "report.html" => match crate::report_html::html(pool, "study", id).await {
            Ok(h) => (
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
                    (header::CONTENT_DISPOSITION, format!("attachment; filename=\"study-{id}.html\"")),
                ],
                h,
            )
                .into_response(),
            Err(e) => app_error(e),
        },
        "chart.svg" | "chart.png" => {
            let body = match app::ssr::study::results_view(pool, id).await {
                Ok(v) => v.chart_svg,
                Err(e) => return app_error(e),
            };
            if file == "chart.svg" {
                svg(body)
            } else {
                super::evaluations::png(&body, format!("attachment; filename=\"study-{id}-chart.png\""))
            }
        }
        other => {
            error(StatusCode::NOT_FOUND, format!("no \"{other}\": chart.svg, chart.png, ratings.csv or report.html"))
        }
    }
}

/// `GET /api/studies/{id}/{file}`.
pub async fn file(State(state): State<AppState>, _: super::Granted, Path((id, file)): Path<(i64, String)>) -> Response {
    file_of(&state.pool, id, &file).await
}

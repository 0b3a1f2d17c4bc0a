//! A metrics run's downloads: every question's scores as CSV, the report as
//! JSON or one self-contained HTML file, each chart as SVG or PNG. The same
//! answers reach a share link's holder through `web::shares`.

use app::ssr::state::AppState;
use app::ssr::store::Db;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{app_error, download, error, svg};

/// `questions.csv`, `report.json`, `report.html`, or a chart `NAME.svg|png`
/// (`power-SET`, `tree-SET-DIMENSION`) of metrics run `id`.
pub async fn file_of(pool: &Db, id: i64, file: &str) -> Response {
    let report = match app::ssr::metrics::report(pool, id).await {
        Ok(r) => r,
        Err(e) => return app_error(e),
    };
    let attachment = |ext: &str| format!("attachment; filename=\"metrics-{id}.{ext}\"");
    match file {
        "questions.csv" => {
            download(app::ssr::metrics::questions_csv(&report), "csv", &format!("metrics-{id}-questions"))
        }
        "report.json" => (
            [(header::CONTENT_TYPE, "application/json".to_string()), (header::CONTENT_DISPOSITION, attachment("json"))],
            serde_json::to_string_pretty(&app::ssr::metrics::report_json(&report)).unwrap_or_default(),
        )
            .into_response(),
        "report.html" => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
                (header::CONTENT_DISPOSITION, attachment("html")),
            ],
            crate::report_html::metrics_html(
                &app::ssr::metrics::view(&report),
                &app::ssr::metrics::report_json(&report),
            ),
        )
            .into_response(),
        chart => {
            let Some((name, ext)) = chart.rsplit_once('.').filter(|(_, e)| matches!(*e, "svg" | "png")) else {
                return error(
                    StatusCode::NOT_FOUND,
                    format!("no \"{chart}\": questions.csv, report.json, report.html or a chart NAME.svg|png"),
                );
            };
            let Some((_, body)) = app::ssr::metrics::charts(&report).into_iter().find(|(n, _)| n == name) else {
                return error(StatusCode::NOT_FOUND, format!("metrics run {id} has no chart \"{name}\""));
            };
            let disposition = format!("attachment; filename=\"metrics-{id}-{name}.{ext}\"");
            if ext == "svg" {
                let mut response = svg(body);
                response.headers_mut().insert(header::CONTENT_DISPOSITION, disposition.parse().expect("ASCII"));
                return response;
            }
            super::evaluations::png(&body, disposition)
        }
    }
}

/// `GET /api/metrics/{id}/{file}`.
pub async fn file(State(state): State<AppState>, _: super::Granted, Path((id, file)): Path<(i64, String)>) -> Response {
    file_of(&state.pool, id, &file).await
}

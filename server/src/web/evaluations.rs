//! An evaluation report's downloads: each plot as SVG or PNG, each table as
//! CSV, the whole report as JSON.

use app::state::AppState;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{app_error, download, error, svg};

/// `GET /api/evaluations/{id}/plots/{name}.svg|.png`.
pub async fn plot(State(state): State<AppState>, Path((id, file)): Path<(i64, String)>) -> Response {
    let Some((name, ext)) = file.rsplit_once('.').filter(|(_, e)| matches!(*e, "svg" | "png")) else {
        return error(StatusCode::NOT_FOUND, format!("no plot \"{file}\": ask for NAME.svg or NAME.png"));
    };
    let (e, r) = match app::evaluation::report(&state.pool, id).await {
        Ok(x) => x,
        Err(e) => return app_error(e),
    };
    let Some((_, body)) = app::evaluation::plots(&e, &r).into_iter().find(|(n, _)| n == name) else {
        return error(StatusCode::NOT_FOUND, format!("evaluation {id} has no plot \"{name}\""));
    };
    let disposition = format!("attachment; filename=\"evaluation-{id}-{name}.{ext}\"");
    if ext == "svg" {
        let mut response = svg(body);
        response.headers_mut().insert(header::CONTENT_DISPOSITION, disposition.parse().expect("ASCII"));
        return response;
    }
    match crate::png::svg_to_png(&body, 2.0) {
        Ok(png) => ([(header::CONTENT_TYPE, "image/png".to_string()), (header::CONTENT_DISPOSITION, disposition)], png)
            .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// `GET /api/evaluations/{id}/tables/{name}.csv`.
pub async fn table(State(state): State<AppState>, Path((id, file)): Path<(i64, String)>) -> Response {
    let Some(name) = file.strip_suffix(".csv") else {
        return error(StatusCode::NOT_FOUND, format!("no table \"{file}\": ask for NAME.csv"));
    };
    match app::evaluation::table_csv(&state.pool, id, name).await {
        Ok(body) => download(body, "csv", &format!("evaluation-{id}-{name}")),
        Err(e) => app_error(e),
    }
}

/// `GET /api/evaluations/{id}/report.json`.
pub async fn report_json(State(state): State<AppState>, Path(id): Path<i64>) -> Response {
    match app::evaluation::report_json(&state.pool, id).await {
        Ok(v) => {
            let disposition = format!("attachment; filename=\"evaluation-{id}.json\"");
            (
                [(header::CONTENT_TYPE, "application/json".to_string()), (header::CONTENT_DISPOSITION, disposition)],
                serde_json::to_string_pretty(&v).unwrap_or_default(),
            )
                .into_response()
        }
        Err(e) => app_error(e),
    }
}

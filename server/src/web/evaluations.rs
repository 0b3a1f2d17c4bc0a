//! An evaluation report's downloads: each plot as SVG or PNG, each table as
//! CSV, the whole report as JSON or as one self-contained HTML file. The
//! same answers reach a share link's holder through `web::shares`.

use app::ssr::state::AppState;
use app::ssr::store::Db;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{app_error, download, error, svg};

/// A plot `NAME.svg` or `NAME.png` of evaluation `id`.
pub async fn plot_of(pool: &Db, id: i64, file: &str) -> Response {
    let Some((name, ext)) = file.rsplit_once('.').filter(|(_, e)| matches!(*e, "svg" | "png")) else {
        return error(StatusCode::NOT_FOUND, format!("no plot \"{file}\": ask for NAME.svg or NAME.png"));
    };
    let snapshot = match app::ssr::evaluations::snapshot(pool, id).await {
        Ok(x) => x,
        Err(e) => return app_error(e),
    };
    let Some((_, body)) = snapshot.plots().iter().find(|(n, _)| n == name).cloned() else {
        return error(StatusCode::NOT_FOUND, format!("evaluation {id} has no plot \"{name}\""));
    };
    let disposition = format!("attachment; filename=\"evaluation-{id}-{name}.{ext}\"");
    if ext == "svg" {
        let mut response = svg(body);
        response.headers_mut().insert(header::CONTENT_DISPOSITION, disposition.parse().expect("ASCII"));
        return response;
    }
    png(&body, disposition)
}

/// PNG of an SVG, as a download.
pub fn png(body: &str, disposition: String) -> Response {
    match crate::png::svg_to_png(body, 2.0) {
        Ok(png) => ([(header::CONTENT_TYPE, "image/png".to_string()), (header::CONTENT_DISPOSITION, disposition)], png)
            .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// A table `NAME.csv` of evaluation `id`.
pub async fn table_of(pool: &Db, id: i64, file: &str) -> Response {
    let Some(name) = file.strip_suffix(".csv") else {
        return error(StatusCode::NOT_FOUND, format!("no table \"{file}\": ask for NAME.csv"));
    };
    match app::ssr::evaluations::snapshot(pool, id).await.and_then(|s| app::ssr::evaluations::table_csv(&s, name)) {
        Ok(body) => download(body, "csv", &format!("evaluation-{id}-{name}")),
        Err(e) => app_error(e),
    }
}

/// `report.json` or `report.html` of evaluation `id`.
pub async fn report_of(pool: &Db, id: i64, file: &str) -> Response {
    let result = match file {
        "report.json" => app::ssr::evaluations::snapshot(pool, id).await.map(|s| {
            (
                "application/json",
                serde_json::to_string_pretty(&app::ssr::evaluations::report_json(&s)).unwrap_or_default(),
            )
        }),
        "report.html" => crate::report_html::html(pool, types::ShareKind::Evaluation, id)
            .await
            .map(|h| ("text/html; charset=utf-8", h)),
        other => return error(StatusCode::NOT_FOUND, format!("no \"{other}\": report.json or report.html")),
    };
    match result {
        Ok((kind, body)) => {
            let disposition =
                format!("attachment; filename=\"evaluation-{id}.{}\"", file.rsplit('.').next().unwrap_or(""));
            ([(header::CONTENT_TYPE, kind.to_string()), (header::CONTENT_DISPOSITION, disposition)], body)
                .into_response()
        }
        Err(e) => app_error(e),
    }
}

/// `GET /api/evaluations/{id}/plots/{name}.svg|.png`.
pub async fn plot(State(state): State<AppState>, _: super::Granted, Path((id, file)): Path<(i64, String)>) -> Response {
    plot_of(&state.pool, id, &file).await
}

/// `GET /api/evaluations/{id}/tables/{name}.csv`.
pub async fn table(
    State(state): State<AppState>,
    _: super::Granted,
    Path((id, file)): Path<(i64, String)>,
) -> Response {
    table_of(&state.pool, id, &file).await
}

/// `GET /api/evaluations/{id}/report.json|.html`.
pub async fn report(
    State(state): State<AppState>,
    _: super::Granted,
    Path((id, file)): Path<(i64, String)>,
) -> Response {
    report_of(&state.pool, id, &file).await
}

//! What a share link's holder may download: exactly the shared page's own
//! files, found through the token (no id in the address to change).

use app::ssr::state::AppState;
use axum::extract::{Path, State};
use axum::response::Response;
use types::ShareKind;

use super::app_error;

/// `GET /api/share/{token}/{file}` (report.json, report.html, chart.svg …).
pub async fn file(State(state): State<AppState>, Path((token, file)): Path<(String, String)>) -> Response {
    match app::ssr::shares::open(&state.pool, &token).await {
        Ok((kind, id)) if kind == ShareKind::Evaluation => super::evaluations::report_of(&state.pool, id, &file).await,
        Ok((kind, id)) if kind == ShareKind::Study => super::studies::file_of(&state.pool, id, &file).await,
        Ok((kind, id)) if kind == ShareKind::Questions => questions_file(&state.pool, id, &file).await,
        Ok((kind, id)) if kind == ShareKind::Metrics => super::metrics::file_of(&state.pool, id, &file).await,
        Ok((kind, id)) if kind == ShareKind::Experiment => super::experiments::file_of(&state.pool, id, &file).await,
        Ok((kind, id)) if kind == ShareKind::Graph => super::graph_download(&state.pool, id, &file).await,
        Ok(_) => app_error(app::error::AppError::NotFound(format!("this shared page has no {file}"))),
        Err(e) => app_error(e),
    }
}

/// `questions.jsonl`, `questions.csv` or `report.html` of a shared question set.
async fn questions_file(pool: &app::ssr::store::Db, set: i64, file: &str) -> Response {
    use axum::response::IntoResponse;
    let questions = match app::ssr::store::questions::list_questions(pool, set).await {
        Ok(q) => q,
        Err(e) => return app_error(e),
    };
    match file {
        "questions.jsonl" => {
            super::download(app::ssr::questions::io::to_jsonl(&questions), "jsonl", &format!("questions-set-{set}"))
        }
        "questions.csv" => {
            super::download(app::ssr::questions::io::to_csv(&questions), "csv", &format!("questions-set-{set}"))
        }
        "report.html" => match crate::report_html::html(pool, types::ShareKind::Questions, set).await {
            Ok(h) => (
                [
                    (axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
                    (
                        axum::http::header::CONTENT_DISPOSITION,
                        format!("attachment; filename=\"questions-set-{set}.html\""),
                    ),
                ],
                h,
            )
                .into_response(),
            Err(e) => app_error(e),
        },
        other => app_error(app::error::AppError::NotFound(format!(
            "no \"{other}\": questions.jsonl, questions.csv or report.html"
        ))),
    }
}

/// `GET /api/share/{token}/plots/{file}` and `/tables/{file}` of a shared
/// evaluation; `/plots/entities|relevance.svg|png` of a shared question set.
pub async fn part(
    State(state): State<AppState>,
    Path((token, part, file)): Path<(String, String, String)>,
) -> Response {
    match app::ssr::shares::open(&state.pool, &token).await {
        Ok((kind, id)) if kind == ShareKind::Evaluation && part == "plots" => {
            super::evaluations::plot_of(&state.pool, id, &file).await
        }
        Ok((kind, id)) if kind == ShareKind::Evaluation && part == "tables" => {
            super::evaluations::table_of(&state.pool, id, &file).await
        }
        Ok((kind, set)) if kind == ShareKind::Questions && part == "plots" => {
            question_plot(&state.pool, set, &file).await
        }
        Ok(_) => app_error(app::error::AppError::NotFound(format!("this shared page has no {part}/{file}"))),
        Err(e) => app_error(e),
    }
}

/// A shared question set's chart: `entities` (the graph's names its
/// questions mention) or `relevance` (its retrieval relevance), as SVG or PNG.
async fn question_plot(pool: &app::ssr::store::Db, set: i64, file: &str) -> Response {
    let shared = match app::ssr::shares::questions(pool, set, true).await {
        Ok(q) => q,
        Err(e) => return app_error(e),
    };
    let (name, ext) = file.rsplit_once('.').unwrap_or((file, ""));
    let figure = match name {
        "entities" => shared.entities.map(|(_, f)| f),
        "relevance" => shared.relevance.map(|(_, f)| f),
        _ => None,
    };
    let Some(app::model::Figure::Inline(svg)) = figure else {
        return app_error(app::error::AppError::NotFound(format!("this shared question set has no chart \"{file}\"")));
    };
    let disposition = format!("attachment; filename=\"questions-set-{set}-{name}.{ext}\"");
    match ext {
        "svg" => {
            let mut response = super::svg(svg);
            response.headers_mut().insert(axum::http::header::CONTENT_DISPOSITION, disposition.parse().expect("ASCII"));
            response
        }
        "png" => super::evaluations::png(&svg, disposition),
        _ => app_error(app::error::AppError::NotFound(format!("no \"{file}\": NAME.svg or NAME.png"))),
    }
}

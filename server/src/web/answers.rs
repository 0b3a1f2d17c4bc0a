//! The Answers page's plain routes: importing answers from a file, exporting
//! an answer set, and the cost chart.

use app::error::AppError;
use app::ssr::state::AppState;
use axum::extract::{Multipart, Path, Query, State};
use axum::response::Response;

use super::{app_error, download, read_form, redirect, svg, ExportQuery, Granted};

/// `POST /api/projects/{id}/answers/import`: a multipart form with a `file`
/// (.jsonl or .csv), the question set `set` and a `name`. Redirects to the
/// Answers page showing the new set, or the reason it was refused.
pub async fn import(State(state): State<AppState>, granted: Granted, multipart: Multipart) -> Response {
    let id = granted.project;
    let page = |query: &[(&str, &str)]| redirect(&format!("/projects/{id}/answers"), query);
    let (file, fields) = match read_form(multipart).await {
        Ok(f) => f,
        Err(e) => return page(&[("import_error", &e)]),
    };
    let Some((file_name, bytes)) = file else { return page(&[("import_error", "choose a .jsonl or .csv file")]) };
    let result = async {
        let set: i64 = fields
            .get("set")
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| AppError::Invalid("choose the question set the answers are for".into()))?;
        let questions = app::ssr::store::questions::get_set(&state.pool, set).await?;
        if questions.project_id != id {
            return Err(AppError::NotFound(format!("question set {set} is not in project {id}")));
        }
        let name = fields.get("name").cloned().unwrap_or_default();
        app::ssr::answers::import(&state.pool, set, &name, &file_name, &bytes).await
    }
    .await;
    match result {
        Ok(answers) => page(&[("answers", &answers.to_string())]),
        Err(e) => page(&[("import_error", &e.to_string())]),
    }
}

/// `GET /api/projects/{id}/answers/{set}/export?format=jsonl|csv|lightrag|graphrag-bench`
/// (`lightrag`: `result-set-N.json`; `graphrag-bench`: `predictions-set-N.json`).
pub async fn export(
    State(state): State<AppState>,
    _: Granted,
    Path((_, set)): Path<(i64, i64)>,
    Query(q): Query<ExportQuery>,
) -> Response {
    let format = match q.format(&["lightrag", "graphrag-bench"]) {
        Ok(f) => f,
        Err(response) => return response,
    };
    if format == "lightrag" || format == "graphrag-bench" {
        return match app::ssr::answers::io::benchmark_file(&state.pool, set, &format).await {
            Ok(body) => {
                let stem = if format == "lightrag" { "result-set" } else { "predictions-set" };
                download(body, "json", &format!("{stem}-{set}"))
            }
            Err(e) => app_error(e),
        };
    }
    match app::ssr::store::answers::list_answers(&state.pool, set, None).await {
        Ok(list) => {
            let body = if format == "csv" {
                app::ssr::answers::io::to_csv(&list)
            } else {
                app::ssr::answers::io::to_jsonl(&list)
            };
            download(body, &format, &format!("answers-set-{set}"))
        }
        Err(e) => app_error(e),
    }
}

/// `GET /api/projects/{id}/answers/cost.svg`: tokens and query time per
/// question for every answer set (seed 000 Table II as a chart), but a
/// sanity check's second runs (they belong to their check).
pub async fn cost_svg(State(state): State<AppState>, granted: Granted) -> Response {
    match app::ssr::store::answers::cost_table(&state.pool, granted.project).await {
        Ok(rows) => {
            let bars: Vec<engine::rag::cost::CostBar> = rows
                .iter()
                .filter(|r| r.sanity_of.is_none())
                .map(|r| {
                    (format!("#{} {}", r.answer_set_id, r.name), r.avg_tokens, r.avg_query_ms.map(|ms| ms / 1000.0))
                })
                .collect();
            svg(engine::rag::cost::chart_svg("Average cost per question", &bars))
        }
        Err(e) => app_error(e),
    }
}

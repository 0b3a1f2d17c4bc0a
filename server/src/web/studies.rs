//! A study's downloads: every rating as CSV, the results chart as SVG or
//! PNG, the results as one HTML file. (Also reached through share links.)

use app::ssr::state::AppState;
use app::ssr::store::Db;
use axum::extract::{Multipart, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{app_error, download, error, svg};

/// `chart.svg`, `chart.png`, `ratings.csv`, `judging.csv` (an imported
/// study's figures as its authors compute them) or `report.html` of study `id`.
pub async fn file_of(pool: &Db, id: i64, file: &str) -> Response {
    match file {
        "ratings.csv" => match app::ssr::studies::ratings_csv(pool, id).await {
            Ok(body) => download(body, "csv", &format!("study-{id}-ratings")),
            Err(e) => app_error(e),
        },
        "judging.csv" => match app::ssr::studies::judging_csv(pool, id).await {
            Ok(body) => download(body, "csv", &format!("study-{id}-judging")),
            Err(e) => app_error(e),
        },
        "report.html" => match crate::report_html::html(pool, types::ShareKind::Study, id).await {
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
            let body = match app::ssr::studies::results_view(pool, id).await {
                Ok(v) => v.chart_svg,
                Err(e) => return app_error(e),
            };
            if file == "chart.svg" {
                svg(body)
            } else {
                super::evaluations::png(&body, format!("attachment; filename=\"study-{id}-chart.png\""))
            }
        }
        other => error(
            StatusCode::NOT_FOUND,
            format!("no \"{other}\": chart.svg, chart.png, ratings.csv, judging.csv or report.html"),
        ),
    }
}

/// `GET /api/studies/{id}/{file}`.
pub async fn file(State(state): State<AppState>, _: super::Granted, Path((id, file)): Path<(i64, String)>) -> Response {
    file_of(&state.pool, id, &file).await
}

/// `POST /api/projects/{project}/studies/import`: a multipart form with the
/// HieraRAG authors' human-judging files (`files`: a zip of their
/// `human_judging/` folder, or its workbooks, `shared_questions_list.csv`
/// and, for their figures, `complete_analysis_results.json`,
/// `human_annotation_results_summary.json`, `correlation_stat.txt`) and an
/// optional `name`. Redirects to the new study's results, or back to the
/// Studies page with the reason nothing was imported.
pub async fn import(State(state): State<AppState>, granted: super::Granted, mut multipart: Multipart) -> Response {
    use engine::study::hierarag_judging::{files_of_zip, Inputs};
    let id = granted.project;
    let back = |e: &str| super::redirect(&format!("/projects/{id}/studies"), &[("import_error", e)]);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut name = String::new();
    loop {
        match multipart.next_field().await {
            Ok(Some(field)) => {
                let field_name = field.name().unwrap_or("").to_string();
                let file_name = field.file_name().map(str::to_string);
                let Ok(bytes) = field.bytes().await else { return back("the upload could not be read") };
                match file_name {
                    Some(f) if !f.is_empty() => files.push((f, bytes.to_vec())),
                    Some(_) => {}
                    None if field_name == "name" => {
                        if bytes.contains(&0) {
                            return back("the name holds the character U+0000 (NUL): remove it");
                        }
                        name = String::from_utf8_lossy(&bytes).trim().to_string();
                    }
                    None => {}
                }
            }
            Ok(None) => break,
            Err(e) => return back(&format!("the upload could not be read: {}", e.body_text())),
        }
    }
    if files.is_empty() {
        return back("choose the authors' files: a zip of their human_judging folder, or its workbooks and CSV");
    }
    let read = tokio::task::spawn_blocking(move || {
        let mut all = Vec::new();
        for (n, b) in files {
            if n.to_ascii_lowercase().ends_with(".zip") {
                all.extend(files_of_zip(&b)?);
            } else {
                all.push((n, b));
            }
        }
        Inputs::from_files(&all, "the upload")
    })
    .await;
    let inputs = match read {
        Ok(Ok(inputs)) => inputs,
        Ok(Err(e)) => return back(&e.to_string()),
        Err(_) => return back("the files could not be read"),
    };
    match app::ssr::studies::import_hierarag(&state.pool, id, &name, inputs).await {
        Ok(made) => super::redirect(&format!("/projects/{id}/studies/{}", made.study_id), &[("imported", &made.line)]),
        Err(e) => back(&e.to_string()),
    }
}

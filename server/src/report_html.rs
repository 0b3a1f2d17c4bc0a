//! Reports as one self-contained HTML file (the "One HTML file" download
//! and `assay … --out` files): the report page's own view, rendered by the
//! same component the page uses (with no link), the app's stylesheet, and the
//! data as JSON — so the file and the page cannot drift apart.

use app::error::{AppError, AppResult};
use app::model::{EvaluationReportView, MetricsView, SharedQuestions, StudyResultsView};
use app::ssr::store::Db;
use leptos::prelude::{ClassAttribute, ElementChild, GlobalAttributes};

/// The app's own stylesheet, inlined into the one-file exports.
const STYLE: &str = include_str!("../../style/assay.css");

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A report view rendered to HTML on the server, as the page renders it.
fn rendered<V: leptos::prelude::IntoView + 'static>(view: impl FnOnce() -> V) -> String {
    use leptos::prelude::*;
    let owner = Owner::new();
    owner.with(|| view().into_view().to_html())
}

/// One self-contained HTML file: the page's own view (rendered by the same
/// component, with no link) and stylesheet, and the data as JSON — nothing
/// fetched from anywhere.
fn page(title: &str, body: &str, data: &serde_json::Value) -> String {
    // The data rides along as JSON; `</` is escaped so it cannot end the script.
    let json = data.to_string().replace("</", "<\\/");
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\
         <body><main class=\"page standalone\">{body}<p class=\"small muted\">Exported by Assay.</p></main>\
         <script type=\"application/json\" id=\"assay-data\">{json}</script></body></html>",
        escape(title)
    )
}

/// An evaluation's report as one HTML file: the report page's view with its
/// inline SVG plots and tables, then its paper view, and the whole report
/// as JSON.
pub fn evaluation_html(r: &EvaluationReportView, data: &serde_json::Value) -> String {
    let (project_id, view) = (r.evaluation.project_id, r.clone());
    let body = rendered(move || {
        let (paper, box_plot, heatmap) = (view.paper.clone(), view.box_plot.clone(), view.heatmap.clone());
        let has_paper = !paper.boxes.is_empty();
        leptos::view! {
            <app::pages::evaluations::Report project_id r=view standalone=true/>
            // The paper view follows, its plots inline like the report's.
            {has_paper.then(|| leptos::view! {
                <section class="paper-view" id="paper-view">
                    <h1>"Paper view: Zeng et al.'s Figs. 14–17"</h1>
                    <app::pages::paper::PaperFigures p=paper base=String::new() box_plot heatmap/>
                </section>
            })}
        }
    });
    page(&format!("Evaluation: {}", r.evaluation.name), &body, data)
}

/// A study's results as one HTML file.
pub fn study_html(r: &StudyResultsView) -> String {
    let view = r.clone();
    let body = rendered(move || leptos::view! { <app::pages::studies::Results r=view standalone=true/> });
    page(&format!("Study: {}", r.study.name), &body, &serde_json::to_value(r).unwrap_or_default())
}

/// A metrics run's report as one HTML file.
pub fn metrics_html(v: &MetricsView, data: &serde_json::Value) -> String {
    let view = v.clone();
    let body = rendered(move || leptos::view! { <app::pages::metrics::Results v=view standalone=true/> });
    page(&format!("Metrics run {}", v.run_id), &body, data)
}

/// A question set with its diagnostics as one HTML file.
pub fn questions_html(q: &SharedQuestions) -> String {
    let view = q.clone();
    let body = rendered(move || {
        leptos::view! { <app::pages::share::SharedSet q=view token=String::new() standalone=true/> }
    });
    page(&format!("Question set: {}", q.set.name), &body, &serde_json::to_value(q).unwrap_or_default())
}

/// The one-file report of a page of `kind`.
pub async fn html(pool: &Db, kind: types::ShareKind, id: i64) -> AppResult<String> {
    use types::ShareKind;
    match kind {
        ShareKind::Evaluation => {
            let snapshot = app::ssr::evaluations::snapshot(pool, id).await?;
            let data = app::ssr::evaluations::report_json(&snapshot);
            Ok(evaluation_html(&app::ssr::evaluations::report_view_of(pool, snapshot, true).await?, &data))
        }
        ShareKind::Questions => Ok(questions_html(&app::ssr::shares::questions(pool, id, true).await?)),
        ShareKind::Study => Ok(study_html(&app::ssr::studies::results_view(pool, id).await?)),
        ShareKind::Metrics => {
            let r = app::ssr::metrics::report(pool, id).await?;
            Ok(metrics_html(&app::ssr::metrics::view(&r), &app::ssr::metrics::report_json(&r)))
        }
        other @ (ShareKind::Experiment | ShareKind::Graph) => {
            Err(AppError::NotFound(format!("a {other} page has no HTML export")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_data_cannot_close_its_script_and_text_is_escaped() {
        let html = page("a <b>", "<p>x</p>", &serde_json::json!({"s": "</script><script>alert(1)</script>"}));
        assert!(html.contains("<title>a &lt;b&gt;</title>"));
        assert_eq!(html.matches("</script>").count(), 1, "{html}");
    }
}

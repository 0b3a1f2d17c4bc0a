//! Read-only share links to a report page (an evaluation's report, a
//! study's results, a question set with its diagnostics, a metrics run, a
//! project's graph explorer), and the report as one self-contained HTML file.
//! A share token opens exactly its page: nothing else of the project, no
//! edit controls, no settings or keys; withdrawing it makes it 404 at once.

use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::format::pct;
use crate::model::{
    EvaluationReportView, ExperimentReportView, GraphOverview, MetricsView, SharedQuestions, SharedView,
    StudyResultsView,
};
use crate::ssr::store;
use crate::ssr::tokens::{hash, new_token};

/// The project a shareable page belongs to: an evaluation (its id), a
/// study (its id), a question set (its id), a project's graph explorer (the
/// project's id); refused for any other kind, or a graph not built yet.
pub async fn project_of(pool: &SqlitePool, kind: &str, page_id: i64) -> AppResult<i64> {
    Ok(match kind {
        "evaluation" => crate::ssr::evaluation::get(pool, page_id).await?.view.project_id,
        "study" => crate::ssr::study::view(pool, page_id).await?.project_id,
        "questions" => store::questions::get_set(pool, page_id).await?.project_id,
        "metrics" => {
            let run = store::metrics::get(pool, page_id).await?;
            if run.report.is_none() {
                return Err(AppError::Invalid(format!("metrics run {page_id} has not finished: nothing to share yet")));
            }
            run.project_id
        }
        "experiment" => {
            let v = crate::ssr::experiments::wizard::view(pool, page_id).await?;
            if v.status != "done" {
                return Err(AppError::Invalid(format!(
                    "experiment {page_id} has not finished: nothing to share yet"
                )));
            }
            v.project_id
        }
        "graph" => {
            store::get_project(pool, page_id).await?;
            if store::graph::overview(pool, page_id).await?.is_none() {
                return Err(AppError::Invalid(format!("project {page_id} has no graph to share yet")));
            }
            page_id
        }
        other => {
            return Err(AppError::Invalid(format!(
                "a share link is for an evaluation, a study, a question set (questions), a metrics run (metrics), an experiment or a graph, not \"{other}\""
            )))
        }
    })
}

/// Makes a share link for a page; (share id, token — shown once).
/// With `expires_days` the link stops working that many days from now.
pub async fn create(
    pool: &SqlitePool,
    kind: &str,
    page_id: i64,
    expires_days: Option<u32>,
) -> AppResult<(i64, String)> {
    let project = project_of(pool, kind, page_id).await?;
    let token = new_token()?;
    let id = store::shares::insert(pool, project, &hash(&token), kind, page_id, expires_days).await?;
    Ok((id, token))
}

/// The page a token opens: (kind, id). Unknown, withdrawn and expired are all 404.
pub async fn open(pool: &SqlitePool, token: &str) -> AppResult<(String, i64)> {
    store::shares::live(pool, &hash(token.trim())).await?.ok_or_else(not_found)
}

pub async fn view(pool: &SqlitePool, token: &str) -> AppResult<SharedView> {
    let (kind, id) = open(pool, token).await?;
    Ok(match kind.as_str() {
        "evaluation" => {
            SharedView { evaluation: Some(crate::ssr::evaluation::report_view(pool, id).await?), ..Default::default() }
        }
        "study" => SharedView { study: Some(crate::ssr::study::results_view(pool, id).await?), ..Default::default() },
        "questions" => SharedView { questions: Some(questions(pool, id).await?), ..Default::default() },
        "metrics" => SharedView {
            metrics: Some(crate::ssr::metrics::view(&crate::ssr::metrics::report(pool, id).await?)),
            ..Default::default()
        },
        _ => return Err(not_found()),
    })
}

/// The experiment a token shares; any other token is "not found".
pub async fn experiment(pool: &SqlitePool, token: &str) -> AppResult<ExperimentReportView> {
    crate::ssr::experiments::wizard::report(pool, opened(pool, token, "experiment").await?).await
}

/// The overview of the graph a token shares; any other token is "not found".
pub async fn graph(pool: &SqlitePool, token: &str) -> AppResult<Option<GraphOverview>> {
    store::graph::overview(pool, graph_project(pool, token).await?).await
}

/// A question set as shared: its questions and diagnostics.
pub async fn questions(pool: &SqlitePool, set_id: i64) -> AppResult<SharedQuestions> {
    use crate::ssr::questions::diagnostics::{
        relevance_stats, relevance_svg, set_entities, set_relevance, EntitySource,
    };
    let set = store::questions::get_set(pool, set_id).await?;
    // Entities need the graph; a set shared before its project has one has none.
    let entities = set_entities(pool, set_id, EntitySource::Graph).await.ok().flatten().map(|e| (e.stats(), e.svg()));
    let relevance = match set_relevance(pool, set_id).await? {
        Some((job, scores)) if !scores.is_empty() => {
            let stats = relevance_stats(pool, set_id, job, &scores, set.questions).await?;
            let svg = relevance_svg(&set, &stats.retriever, &scores);
            Some((stats, svg))
        }
        _ => None,
    };
    Ok(SharedQuestions { questions: store::questions::list_questions(pool, set_id).await?, set, entities, relevance })
}

/// The project whose graph a token shares; any other token is "not found".
pub async fn graph_project(pool: &SqlitePool, token: &str) -> AppResult<i64> {
    opened(pool, token, "graph").await
}

/// The id of the page of kind `kind` a token opens; a token of any other
/// kind is "not found", like a withdrawn one.
async fn opened(pool: &SqlitePool, token: &str, kind: &str) -> AppResult<i64> {
    match open(pool, token).await? {
        (k, id) if k == kind => Ok(id),
        _ => Err(not_found()),
    }
}

fn not_found() -> AppError {
    AppError::NotFound("this shared page does not exist or was withdrawn".into())
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;color:#1d2430;max-width:72rem;margin:2rem auto;padding:0 1rem;line-height:1.5}\
table{border-collapse:collapse;margin:0.6rem 0;font-size:0.9rem}td,th{border:1px solid #dde3ea;padding:0.3rem 0.5rem;text-align:left}\
th{background:#f6f8fa}.note{background:#fff4e0;border:1px solid #f0c36d;padding:0.4rem 0.7rem;border-radius:6px}\
figure{margin:1rem 0}.muted{color:#5f6b7a;font-size:0.85rem}";

fn page(title: &str, body: &str, data: &serde_json::Value) -> String {
    // The data rides along as JSON; `</` is escaped so it cannot end the script.
    let json = data.to_string().replace("</", "<\\/");
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>{body}\
         <script type=\"application/json\" id=\"assay-data\">{json}</script></body></html>",
        escape(title)
    )
}

/// An evaluation's report as one HTML file: inline SVG plots, the tables,
/// and the whole report as JSON — nothing fetched from anywhere.
pub fn evaluation_html(r: &EvaluationReportView, data: &serde_json::Value) -> String {
    let e = &r.evaluation;
    let mut b = format!("<h1>Evaluation: {}</h1>", escape(&e.name));
    b += &format!(
        "<p class=\"{}\">Judged by <strong>{}</strong>{}</p>",
        if e.judge.contains("no LLM") { "note" } else { "" },
        escape(&e.judge),
        e.biases.as_ref().map_or(String::new(), |x| format!(" — biases: {}", escape(x)))
    );
    b += &format!(
        "<p class=\"muted\">Question set {}: {} · {} protocol · M = {} trials · N = {} per order · length alignment {} · position exchange {} · scoring prompt {} (sha256 {}) · {} tokens · ${:.4} · exported by Assay</p>",
        e.question_set_id,
        escape(&e.question_set),
        escape(&e.protocol),
        e.trials,
        e.repeats,
        if e.align { "on" } else { "off" },
        if e.exchange { "on" } else { "off" },
        escape(&e.judge_prompt),
        escape(&e.judge_prompt_hash),
        e.tokens,
        e.cost_usd
    );
    if let Some((text, _)) = &r.sanity {
        b += &format!("<p><strong>{}</strong></p>", escape(text));
    }
    b += &format!("<h2>Win and tie rates over trials</h2><figure>{}</figure>", r.box_svg);
    b += "<table><tr><th>A vs B</th><th>Questions</th><th>A wins [95% CI]</th><th>Tie</th><th>B wins</th><th>Relative [95% CI]</th><th>Wilcoxon p (Holm)</th><th>Legacy A / B</th><th>Aligned</th></tr>";
    let rate = |v: Option<(f64, (f64, f64))>| v.map_or("—".into(), |(m, ci)| crate::format::pct_ci(m, ci));
    for p in &r.pairs {
        b += &format!(
            "<tr><td>{} vs {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&p.a_name),
            escape(&p.b_name),
            p.questions,
            rate(p.a_win),
            rate(p.tie),
            rate(p.b_win),
            p.relative.map_or("—".into(), |(x, ci)| crate::format::signed_ci(x, ci)),
            p.wilcoxon.map_or("—".into(), |(x, h)| format!("{x:.3e} ({h:.3e})")),
            p.legacy.map_or("—".into(), |(a, bb, rel)| format!("{} / {} ({})", pct(a), pct(bb), crate::format::signed(rel, 2))),
            p.alignment_success.map_or("off".into(), pct),
        );
    }
    b += "</table>";
    b += &format!("<h2>Relative win rate</h2><figure>{}</figure>", r.heatmap_svg);
    if let Some(l) = &r.legacy_heatmap_svg {
        b += &format!("<figure>{l}</figure>");
    }
    for p in &r.pairs {
        b += &format!(
            "<h3>{} vs {}</h3><figure>{}</figure><figure>{}</figure><figure>{}</figure>",
            escape(&p.a_name),
            escape(&p.b_name),
            p.legacy_svg,
            p.aspects_svg,
            p.levels_svg
        );
    }
    b += "<h2>Bias audit of the judge</h2><table>";
    for (what, value, n) in &r.bias {
        b += &format!(
            "<tr><td>{}</td><td>{}</td><td class=\"muted\">{}</td></tr>",
            escape(what),
            escape(value),
            escape(n)
        );
    }
    b += "</table>";
    page(&format!("Evaluation: {}", e.name), &b, data)
}

/// A study's results as one HTML file.
pub fn study_html(r: &StudyResultsView) -> String {
    let s = &r.study;
    let mut b = format!("<h1>Study: {}</h1>", escape(&s.name));
    b += &format!(
        "<p class=\"muted\">{} raters, {} completed, {} left out for a missed attention check · {} questions · exported by Assay</p>",
        r.raters, r.completed, r.failed_attention, s.items
    );
    b += &format!("<figure>{}</figure>", r.chart_svg);
    for (title, rows) in [("Per source", &r.by_source), ("Per level", &r.by_level)] {
        b += &format!("<h2>{title}</h2><table><tr><th>Dimension</th><th>Group</th><th>n</th><th>Mean</th><th>95% interval</th><th>Ratings per point, lowest first</th></tr>");
        for x in rows.iter() {
            b += &format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
                escape(&x.dimension),
                escape(&x.group),
                x.n,
                x.mean,
                x.ci.map_or("—".into(), |(l, h)| format!("{l:.2}–{h:.2}")),
                x.distribution.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" · ")
            );
        }
        b += "</table>";
    }
    b += "<h2>Agreement</h2><table><tr><th>Dimension</th><th>Fleiss' κ</th><th>Items</th><th>Krippendorff's α (ordinal)</th></tr>";
    for (d, k, n, a) in &r.agreement {
        b += &format!(
            "<tr><td>{}</td><td>{}</td><td>{n}</td><td>{}</td></tr>",
            escape(d),
            k.map_or("—".into(), |k| format!("{k:.3}")),
            a.map_or("—".into(), |a| format!("{a:.3}"))
        );
    }
    b += "</table>";
    if !r.category.is_empty() {
        b += "<h2>Category agreement with the generator</h2><table><tr><th>Questions</th><th>Picks</th><th>Exact</th><th>Chance</th><th>Exact or parent</th><th>Chance</th></tr>";
        for c in &r.category {
            b += &format!(
                "<tr><td>{}</td><td>{}</td><td>{:.1}%</td><td>{:.1}%</td><td>{:.1}%</td><td>{:.1}%</td></tr>",
                escape(&c.group),
                c.picks,
                c.exact * 100.0,
                c.exact_chance * 100.0,
                c.parent * 100.0,
                c.parent_chance * 100.0
            );
        }
        b += "</table>";
    }
    if let Some(l) = &r.llm {
        b += &format!(
            "<h2>Humans and the LLM</h2><p>LLM rater: {} (job {}, {}/{})</p><table><tr><th>Dimension</th><th>Items</th><th>Cohen's κ</th><th>Humans</th><th>Spearman's ρ</th></tr>",
            escape(&l.rater),
            l.job_id,
            l.done,
            l.total
        );
        for a in &l.rows {
            b += &format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&a.dimension),
                a.items,
                a.kappa.map_or("—".into(), |k| format!("{k:.3}")),
                a.humans,
                a.spearman.map_or("—".into(), |k| format!("{k:.3}"))
            );
        }
        b += "</table>";
    }
    page(&format!("Study: {}", s.name), &b, &serde_json::to_value(r).unwrap_or_default())
}

fn opt3(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.3}"))
}

/// A metrics run as one HTML file: seed 004's tables, the charts inline,
/// and the report (without per-question rows) as JSON.
pub fn metrics_html(v: &MetricsView, data: &serde_json::Value) -> String {
    let k = v.k;
    let mut b = format!("<h1>Metrics run {}</h1>", v.run_id);
    b += &format!(
        "<p class=\"muted\">Question set {} · embeddings: {} · k = {k} · NMI over {} quantile bins of CS · BLEU as sacrebleu (13a, exp smoothing), ROUGE-1 F1 as rouge-score · exported by Assay</p>",
        v.question_set_id,
        escape(&v.embedding_model),
        v.bins
    );
    let means = |m: &crate::model::MetricsMeansView| {
        format!(
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.2}</td>",
            m.n,
            opt3(m.map),
            opt3(m.ndcg),
            opt3(m.recall),
            m.cs,
            m.rouge1,
            m.bleu
        )
    };
    let head =
        format!("<th>n</th><th>MAP</th><th>nDCG@{k}</th><th>Recall@{k}</th><th>CS</th><th>ROUGE-1</th><th>BLEU</th>");
    b += &format!("<h2>Overall (seed 004 Table 1)</h2><table><tr><th>Answer set</th>{head}<th>corpus BLEU</th></tr>");
    for s in &v.sets {
        b += &format!(
            "<tr><td>#{} {} ({})</td>{}<td>{:.2}</td></tr>",
            s.answer_set_id,
            escape(&s.name),
            escape(&s.method),
            means(&s.overall),
            s.corpus_bleu
        );
    }
    b += "</table>";
    for s in &v.sets {
        b += &format!("<h2>#{} {}</h2><h3>Granularity (seed 004 Table 2)</h3>", s.answer_set_id, escape(&s.name));
        b += "<table><tr><th>Dimension</th><th>Categories</th><th>Questions</th><th>Discriminative power [95% CI]</th><th>noise floor</th><th>Change</th><th>NMI [95% CI]</th><th>noise floor</th><th></th><th>Splits into it: ρ</th></tr>";
        let ci = |v: Option<(f64, f64)>| v.map_or(String::new(), |(l, h)| format!(" [{l:.4}, {h:.4}]"));
        let floor = |v: Option<f64>| v.map_or("—".to_string(), |f| format!("{f:.4}"));
        for g in &s.granularity {
            b += &format!(
                "<tr><td>{}</td><td>{}</td><td>{}{}</td><td>{:.4}{}</td><td>{}</td><td>{}</td><td>{:.4}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&g.dimension),
                g.categories,
                g.questions,
                g.warning.as_ref().map_or(String::new(), |w| format!(" ⚠ {}", escape(w))),
                g.power,
                ci(g.power_ci),
                floor(g.power_floor),
                g.change.map_or("—".into(), |c| crate::format::signed(c, 4)),
                g.nmi,
                ci(g.nmi_ci),
                floor(g.nmi_floor),
                if g.optimal { "optimal" } else { "" },
                g.splits_in.iter().map(|(r, v)| format!("{r:.2} ({v})")).collect::<Vec<_>>().join(", ")
            );
        }
        b += &format!("</table><figure>{}</figure>", s.power_svg);
        b += "<h3>Splits: Coherence Ratio</h3><table><tr><th>Parent</th><th>Children</th><th>σ sib</th><th>δ vert</th><th>ρ</th><th></th></tr>";
        for x in &s.splits {
            b += &format!(
                "<tr><td>{}</td><td>{}</td><td>{:.4}</td><td>{:.4}</td><td>{:.2}</td><td>{}</td></tr>",
                escape(&x.parent),
                escape(&x.children.join(", ")),
                x.sigma_sib,
                x.delta_vert,
                x.rho,
                escape(&x.verdict)
            );
        }
        b += "</table>";
        for (_, svg) in &s.trees {
            b += &format!("<figure>{svg}</figure>");
        }
        if let Some(f) = &s.factorial {
            b += "<h3>LV × QC (seed 004 Table 4)</h3><table><tr><th>LV</th><th>QC</th><th>n</th><th>MAP</th><th>CS</th><th>Gap</th></tr>";
            for r in f.cells.iter().chain(&f.pooled) {
                b += &format!(
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td></tr>",
                    escape(r.lv.as_deref().unwrap_or("(pooled)")),
                    escape(r.qc.as_deref().unwrap_or("(pooled)")),
                    r.n,
                    opt3(r.map),
                    r.cs,
                    r.gap.map_or("—".into(), |g| crate::format::signed(g, 3))
                );
            }
            b += &format!(
                "</table><p>Main effects on CS: LV Δ = {}, QC Δ = {}</p>",
                opt3(f.lv_effect),
                opt3(f.qc_effect)
            );
        }
        b += &format!("<h3>Per category</h3><table><tr><th>Category</th>{head}</tr>");
        for c in &s.per_category {
            b += &format!("<tr><td>{}</td>{}</tr>", escape(&c.group), means(c));
        }
        b += "</table>";
    }
    page(&format!("Metrics run {}", v.run_id), &b, data)
}

/// The self-contained HTML of a shared page.
/// A question set as one HTML file: its diagnostics' charts and every
/// question with its level or category and reference answer.
pub fn questions_html(q: &SharedQuestions) -> String {
    let mut b = format!("<h1>Question set: {}</h1>", escape(&q.set.name));
    b += &format!(
        "<p class=\"muted\">{} questions · {} · {} · exported by Assay</p>",
        q.set.questions,
        escape(&q.set.kind),
        escape(&q.set.counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", "))
    );
    if let Some((e, svg)) = &q.entities {
        b += &format!(
            "<h2>Entities the questions mention</h2><p>{} distinct in {} questions; {} with an entity; the most mentioned takes {}.</p><figure>{svg}</figure>",
            e.distinct,
            e.covered,
            e.with_entity,
            pct(e.top_share)
        );
    }
    if let Some((r, svg)) = &q.relevance {
        b += &format!(
            "<h2>Relevance of retrieved context</h2><p>{} of {} questions scored, mean {:.2} (0–5){}.</p><figure>{svg}</figure>",
            r.scored,
            r.questions,
            r.mean,
            r.made_by.as_ref().map_or(String::new(), |m| format!(", by {}", escape(m)))
        );
    }
    b += "<h2>Questions</h2><table><tr><th>#</th><th>Question</th><th>Level or category</th><th>Reference answer</th></tr>";
    for (i, x) in q.questions.iter().enumerate() {
        b += &format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(&x.question),
            escape(x.level.as_deref().or(x.category.as_deref()).unwrap_or("")),
            escape(x.reference_answer.as_deref().unwrap_or(""))
        );
    }
    b += "</table>";
    page(&format!("Question set: {}", q.set.name), &b, &serde_json::to_value(q).unwrap_or_default())
}

pub async fn html(pool: &SqlitePool, kind: &str, id: i64) -> AppResult<String> {
    match kind {
        "evaluation" => {
            let snapshot = crate::ssr::evaluation::snapshot(pool, id).await?;
            let data = crate::ssr::evaluation::report_json(&snapshot);
            Ok(evaluation_html(&crate::ssr::evaluation::report_view_of(pool, snapshot).await?, &data))
        }
        "questions" => Ok(questions_html(&questions(pool, id).await?)),
        "study" => Ok(study_html(&crate::ssr::study::results_view(pool, id).await?)),
        "metrics" => {
            let r = crate::ssr::metrics::report(pool, id).await?;
            Ok(metrics_html(&crate::ssr::metrics::view(&r), &crate::ssr::metrics::report_json(&r)))
        }
        other => Err(AppError::NotFound(format!("a {other} page has no HTML export"))),
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

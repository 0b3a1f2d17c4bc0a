//! A metrics run's stored report as the Metrics page and its charts show it.

use crate::ssr::store::Db;
use engine::metrics::factorial::{self};
use engine::metrics::granularity::{self};
use engine::metrics::RelevanceUnit;

use super::*;
use crate::error::{AppError, AppResult};
use crate::model::{MetricsRunPage, MetricsRunView};
use crate::ssr::store;
/// A run's stored report; refused while its job has not finished.
pub async fn report(pool: &Db, run_id: i64) -> AppResult<Report> {
    let run = store::metrics::get(pool, run_id).await?;
    let Some(text) = run.report else {
        let state = match run.job_id {
            Some(j) => {
                let job = store::jobs::get_job(pool, j).await?;
                format!("its job {j} is {} ({}/{})", job.status, job.done, job.total)
            }
            None => "its job was deleted".into(),
        };
        return Err(AppError::Conflict(format!("metrics run {run_id} has no report yet: {state}")));
    };
    parse(run_id, &text)
}

fn parse(run_id: i64, text: &str) -> AppResult<Report> {
    serde_json::from_str(text).map_err(|e| AppError::Invalid(format!("metrics run {run_id}: unreadable report: {e}")))
}

/// A run as its list shows it.
pub async fn run_view(pool: &Db, row: &store::metrics::Row) -> AppResult<MetricsRunView> {
    let mut answer_sets = Vec::new();
    for a in row.answer_set_ids() {
        let label = match store::answers::get_set(pool, a).await {
            Ok(s) => format!("{} ({})", s.name, s.method),
            Err(_) => "(deleted)".into(),
        };
        answer_sets.push((a, label));
    }
    let job = match row.job_id {
        Some(j) => store::jobs::get_job(pool, j).await.ok(),
        None => None,
    };
    Ok(MetricsRunView {
        id: row.id,
        project_id: row.project_id,
        question_set_id: row.question_set_id,
        question_set: row.question_set.clone(),
        answer_sets,
        k: row.k as usize,
        bins: row.bins as usize,
        relevance_unit: job.as_ref().map_or(RelevanceUnit::Chunk, |j| metrics_choices(j).0),
        job,
        finished: row.report.is_some(),
        created_at: row.created_at.clone(),
    })
}

/// A run's page: the run and, once finished, its report as the page shows it.
pub async fn page(pool: &Db, run_id: i64) -> AppResult<MetricsRunPage> {
    let mut row = store::metrics::get(pool, run_id).await?;
    let mut run = run_view(pool, &row).await?;
    // The job is read after the run's row: it may have ended in between,
    // its report stored (a job stores it before it is marked done). Read
    // the row again then: an ended job is never shown without its report
    // (the page stops following a job that has ended).
    if row.report.is_none() && run.job.as_ref().is_some_and(|j| !j.status.is_active()) {
        row = store::metrics::get(pool, run_id).await?;
        run.finished = row.report.is_some();
    }
    // The row holds the report: read once, not again through `report`.
    let report = row.report.as_deref().map(|text| parse(run_id, text)).transpose()?;
    let mut view = report.as_ref().map(|r| view(r).linked());
    if let Some(v) = view.as_mut() {
        v.documents = Some(store::projects::get_project(pool, row.project_id).await?.summary.documents);
    }
    // ρ against human category agreement, when a validation study exists.
    if let (Some(r), Some(v)) = (&report, view.as_mut()) {
        if let Some((study, picks)) =
            crate::ssr::studies::category_picks(pool, row.project_id, row.question_set_id).await?
        {
            for (s, sv) in r.sets.iter().zip(v.sets.iter_mut()) {
                sv.rho_agreement = granularity::rho_agreement(&s.granularity, &picks).map(|c| (study, c.r, c.p, c.n));
            }
        }
    }
    Ok(MetricsRunPage { run, view })
}

/// Every chart of a report: (file name without extension, SVG).
pub fn charts(r: &Report) -> Vec<(String, String)> {
    let v = view(r);
    v.sets
        .into_iter()
        .flat_map(|s| {
            let id = s.answer_set_id;
            std::iter::once((format!("power-{id}"), s.power))
                .chain(s.trees.into_iter().map(move |(d, figure)| (format!("tree-{id}-{d}"), figure)))
                .filter_map(|(name, figure)| match figure {
                    crate::model::Figure::Inline(svg) => Some((name, svg)),
                    crate::model::Figure::Linked => None,
                })
        })
        .collect()
}

/// The report as the Metrics page shows it, with its charts.
pub fn view(r: &Report) -> crate::model::MetricsView {
    use crate::model::{GranularityRow, SetMetricsView, SplitRow};
    crate::model::MetricsView {
        run_id: r.run_id,
        question_set_id: r.question_set_id,
        k: r.k,
        bins: r.bins,
        relevance_unit: r.relevance_unit,
        definitions: r.definitions,
        definitions_note: r.definitions.describe().to_string(),
        embedding_model: r.embedding_model.clone(),
        sets: r
            .sets
            .iter()
            .map(|s| SetMetricsView {
                answer_set_id: s.answer_set_id,
                name: s.name.clone(),
                method: s.method.clone(),
                overall: s.overall.clone(),
                corpus_bleu: s.corpus_bleu,
                per_category: s.per_category.clone(),
                granularity: s
                    .granularity
                    .iter()
                    .flat_map(|d| {
                        d.levels.iter().enumerate().map(|(i, l)| GranularityRow {
                            dimension: d.dimension.clone(),
                            categories: l.categories,
                            questions: l.questions,
                            power: l.discriminative_power,
                            change: l.change,
                            nmi: l.nmi,
                            power_ci: l.power_ci,
                            power_floor: l.power_floor,
                            nmi_ci: l.nmi_ci,
                            nmi_floor: l.nmi_floor,
                            warning: l.warning(),
                            mean_rho: if i == 0 { d.mean_rho } else { None },
                            optimal: d.optimal == Some(l.categories),
                            optimal_label: (d.optimal == Some(l.categories)).then(|| {
                                let lo = l.power_ci.map_or(l.discriminative_power, |c| c.0);
                                let reached: Vec<String> = d
                                    .levels
                                    .iter()
                                    .filter(|o| o.categories != l.categories && o.discriminative_power >= lo)
                                    .map(|o| o.categories.to_string())
                                    .collect();
                                if reached.is_empty() {
                                    "optimal".to_string()
                                } else {
                                    format!("highest, its interval reaching level {}", reached.join(", "))
                                }
                            }),
                            splits_in: granularity::splits_into(d, l.categories)
                                .map(|x| (x.rho, x.verdict().to_string()))
                                .collect(),
                        })
                    })
                    .collect(),
                splits: s
                    .granularity
                    .iter()
                    .flat_map(|d| {
                        d.splits.iter().map(|x| SplitRow {
                            dimension: d.dimension.clone(),
                            parent: x.parent.clone(),
                            children: x.children.clone(),
                            sigma_sib: x.sigma_sib,
                            delta_vert: x.delta_vert,
                            rho: x.rho,
                            rho_ci: x.rho_ci,
                            verdict: x.verdict().into(),
                        })
                    })
                    .collect(),
                factorial: s.factorial.as_ref().map(factorial_view),
                coarse: s.coarse.clone(),
                power: crate::model::Figure::Inline(granularity::power_chart_svg(
                    &format!("{} — discriminative power by level", s.name),
                    &s.granularity,
                )),
                trees: s
                    .granularity
                    .iter()
                    .map(|d| (d.dimension.clone(), crate::model::Figure::Inline(granularity::tree_svg(d))))
                    .collect(),
                rho_agreement: None,
            })
            .collect(),
        documents: None,
    }
}

fn factorial_view(f: &factorial::Factorial) -> crate::model::FactorialView {
    crate::model::FactorialView {
        cells: f.cells.clone(),
        pooled: f.lv_pooled.iter().chain(&f.qc_pooled).cloned().collect(),
        lv_effect: f.lv_effect,
        qc_effect: f.qc_effect,
    }
}

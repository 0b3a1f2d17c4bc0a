//! A study's results: per dimension and source the means with intervals,
//! distributions and agreement, and the LLM rater's agreement with the humans.

use std::collections::HashMap;

use crate::ssr::store::Db;
use engine::study::{self, Dimension};

use super::*;
use crate::error::AppResult;
use crate::model::{LlmRatingView, StudyResultsView, StudySummaryRow, StudyView};
use crate::ssr::store;
/// A study's items as the results read them.
pub(super) async fn result_items(pool: &Db, id: i64) -> AppResult<Vec<study::Item>> {
    Ok(store::studies::result_items(pool, id)
        .await?
        .into_iter()
        .map(|(id, source, level, attention, category, choices)| study::Item {
            id,
            source,
            level,
            attention: attention.map(|a| a as u8),
            category,
            choices: parse_choices(choices.as_deref()).into_iter().map(|c| c.path).collect(),
        })
        .collect())
}

/// The category picks of the newest study drawn from question set
/// `set_id` that asks raters for the category: (study, [(the generator's
/// category, whether the rater picked it)]), attention checks aside.
pub async fn category_picks(pool: &Db, project_id: i64, set_id: i64) -> AppResult<Option<(i64, Vec<(String, bool)>)>> {
    for id in store::studies::drawn_from(pool, project_id, set_id).await? {
        let Some(choice) = dimensions_of(pool, id).await?.iter().position(|d| d.choice) else { continue };
        let items: HashMap<i64, study::Item> = result_items(pool, id).await?.into_iter().map(|i| (i.id, i)).collect();
        let picks: Vec<(String, bool)> = human_ratings(pool, id)
            .await?
            .iter()
            .filter(|r| r.dimension == choice)
            .filter_map(|r| {
                let item = items.get(&r.item).filter(|i| i.attention.is_none())?;
                let category = item.category.clone()?;
                let picked = item.choices.get(r.score as usize)?;
                Some((category.clone(), *picked == category))
            })
            .collect();
        if !picks.is_empty() {
            return Ok(Some((id, picks)));
        }
    }
    Ok(None)
}

/// A study's results, computed from its rows read once: the study, its
/// dimensions, the results, and the latest LLM rater's agreement with the
/// humans.
pub struct Computed {
    pub view: StudyView,
    pub dimensions: Vec<Dimension>,
    pub results: study::Results,
    pub llm: Option<LlmRatingView>,
}

/// The results of a study.
pub async fn results(pool: &Db, id: i64) -> AppResult<Computed> {
    let view = view(pool, id).await?;
    let dimensions = dimensions_of(pool, id).await?;
    let items = result_items(pool, id).await?;
    let ratings = human_ratings(pool, id).await?;
    let results = study::results(&items, &dimensions, &ratings);
    let llm = llm_view(pool, id, &items, &dimensions, &ratings).await?;
    Ok(Computed { view, dimensions, results, llm })
}

async fn human_ratings(pool: &Db, id: i64) -> AppResult<Vec<study::Rating>> {
    Ok(store::studies::all_ratings(pool, id)
        .await?
        .into_iter()
        .map(|(rater, item, d, s)| study::Rating { rater, item, dimension: d as usize, score: s as u8 })
        .collect())
}

/// The latest LLM-rating job of a study and its agreement with the humans.
async fn llm_view(
    pool: &Db,
    id: i64,
    items: &[study::Item],
    dims: &[Dimension],
    humans: &[study::Rating],
) -> AppResult<Option<LlmRatingView>> {
    let Some(job_id) = store::jobs::latest_for_study(pool, crate::model::JobKind::StudyRating, id).await? else {
        return Ok(None);
    };
    let job = store::jobs::get_job(pool, job_id).await?;
    let llm = llm_ratings(pool, job_id).await?;
    let rows = study::llm_agreement(items, dims, humans, &llm);
    Ok(Some(LlmRatingView {
        job_id,
        status: job.status,
        done: job.done,
        total: job.total,
        rater: store::jobs::made_by(pool, job_id).await?.unwrap_or_else(|| "no calls yet".into()),
        rows,
    }))
}

/// The LLM rater's scores from its job's finished items.
pub async fn llm_ratings(pool: &Db, job_id: i64) -> AppResult<Vec<study::Rating>> {
    let items = store::jobs::job_items(pool, job_id).await?;
    let rated = crate::ssr::jobs::done_results::<engine::study::rate::Item>(&items, |k| {
        matches!(k, engine::jobs::ItemKey::Rating(_))
    })?;
    Ok(rated
        .into_iter()
        .flat_map(|(_, r)| {
            let item = r.item_id;
            r.scores.into_iter().enumerate().map(move |(dimension, score)| study::Rating {
                rater: 0,
                item,
                dimension,
                score,
            })
        })
        .collect())
}

const _: () = assert!(engine::study::MIN_RATERS_FOR_INTERVAL == crate::model::MIN_RATERS_FOR_INTERVAL);

pub async fn results_view(pool: &Db, id: i64) -> AppResult<StudyResultsView> {
    let Computed { view: v, dimensions: dims, results: r, llm } = results(pool, id).await?;
    let rows = |pick: fn(&study::DimensionResults) -> &Vec<study::Summary>| -> Vec<StudySummaryRow> {
        r.dimensions
            .iter()
            .flat_map(|d| {
                pick(d).iter().map(|s| StudySummaryRow {
                    dimension: d.dimension.clone(),
                    group: s.group.clone(),
                    n: s.n,
                    raters: s.raters,
                    mean: s.mean,
                    ci: s.ci,
                    clipped: s.clipped,
                    distribution: s.distribution.clone(),
                })
            })
            .collect()
    };
    let what = if v.kind == types::StudyKind::Answers { "answer source" } else { "question source" };
    Ok(StudyResultsView {
        by_source: rows(|d| &d.by_source),
        by_level: rows(|d| &d.by_level),
        agreement: r
            .dimensions
            .iter()
            .map(|d| {
                (
                    d.dimension.clone(),
                    d.agreement.fleiss_kappa,
                    d.agreement.fleiss_items,
                    d.agreement.krippendorff_alpha,
                )
            })
            .collect(),
        chart_svg: study::chart_svg(&format!("{} — mean score per dimension and {what}", v.name), &dims, &r),
        raters: r.raters,
        open_link_raters: store::studies::open_link_raters(pool, id).await?,
        completed: r.completed,
        failed_attention: r.failed_attention,
        category_agreement: r.category.as_ref().map(|(a, _)| (a.fleiss_kappa, a.fleiss_items, a.krippendorff_alpha)),
        category: r.category.iter().flat_map(|(_, rows)| rows.iter().cloned()).collect(),
        llm,
        imported: imported_view(pool, id).await?,
        study: v,
    })
}

//! Evaluations over the store, shared by the server functions, the web
//! routes and the CLI: [`run`] creates the job that judges a question set's
//! answer sets in pairs and runs it (a sanity check first answers the
//! questions again; then length alignment, the unbiased trials and the
//! legacy verdicts); [`report`] computes the report, plots and drill-down
//! from its items; [`export`] writes its tables (CSV) and JSON. Here: the
//! stored evaluation every part reads.

mod export;
mod paper;
mod plan;
mod report;
mod run;

pub use export::*;
pub use paper::*;
pub use plan::*;
pub use report::*;
pub use run::*;

use std::collections::HashMap;

use crate::ssr::jobs::read_result;
use crate::ssr::store::Db;
use engine::judge::eval::{JudgeKind, Key, Settings};
use engine::judge::protocol;

use crate::error::{AppError, AppResult};
use crate::model::{EvaluationView, JobItemView};
use crate::ssr::store;

/// An evaluation's stored row.
#[derive(Debug, Clone)]
pub struct Stored {
    pub view: EvaluationView,
    pub settings: Settings,
    pub answer_sets: Vec<i64>,
    pub pairs: Vec<(i64, i64)>,
}

async fn stored_of(pool: &Db, row: store::evaluations::Row) -> AppResult<Stored> {
    let (id, project_id, question_set_id, question_set, job_id, name, settings, sets, pairs, judge, created_at) = row;
    let settings: Settings = serde_json::from_str(&settings)
        .map_err(|e| AppError::Invalid(format!("evaluation {id}: its stored settings cannot be read ({e})")))?;
    let answer_sets: Vec<i64> = serde_json::from_str(&sets).unwrap_or_default();
    let pairs: Vec<(i64, i64)> = serde_json::from_str(&pairs).unwrap_or_default();
    let mut contenders = Vec::new();
    for s in &answer_sets {
        contenders.push(store::answers::get_set(pool, *s).await.map_or(format!("set {s} (deleted)"), |s| s.name));
    }
    let job = match job_id {
        Some(j) => store::jobs::get_job(pool, j).await.ok(),
        None => None,
    };
    let view = EvaluationView {
        id,
        project_id,
        question_set_id,
        question_set,
        job_id,
        name,
        judge,
        protocol: settings.protocol,
        trials: settings.trials,
        repeats: settings.repeats,
        tolerance: settings.tolerance as u32,
        align: settings.align,
        exchange: settings.exchange,
        sanity: settings.sanity,
        judge_prompt: settings.judge_prompt,
        judge_prompt_hash: engine::judge::scoring::PromptText::hash(settings.judge_prompt)[..12].to_string(),
        judge_temperature: settings.temperature_text(),
        legacy_aspects: engine::judge::legacy::Aspects::describe(settings.legacy_aspects),
        biases: biases_label(&settings),
        contenders,
        sequential: settings.sequential,
        judges: settings.judge_count(),
        pairs: pairs.len(),
        status: job.as_ref().map(|j| j.status),
        done: job.as_ref().map_or(0, |j| j.done),
        failed: job.as_ref().map_or(0, |j| j.failed),
        total: job.as_ref().map_or(0, |j| j.total),
        tokens: job.as_ref().map_or(0, |j| j.tokens),
        cost_usd: job.as_ref().map_or(0.0, |j| j.cost_usd),
        created_at,
    };
    Ok(Stored { view, settings, answer_sets, pairs })
}

pub async fn get(pool: &Db, id: i64) -> AppResult<Stored> {
    stored_of(pool, store::evaluations::get(pool, id).await?).await
}

pub async fn list(pool: &Db, project_id: i64) -> AppResult<Vec<EvaluationView>> {
    let mut out = Vec::new();
    for r in store::evaluations::list(pool, project_id).await? {
        out.push(stored_of(pool, r).await?.view);
    }
    Ok(out)
}

pub async fn of_job(pool: &Db, job_id: i64) -> AppResult<Stored> {
    get(pool, store::evaluations::of_job(pool, job_id).await?).await
}

pub async fn delete(pool: &Db, id: i64) -> AppResult<()> {
    store::evaluations::delete(pool, id).await
}

pub(super) fn biases_label(settings: &Settings) -> Option<String> {
    (settings.judge == JudgeKind::Simulated).then(|| {
        let b = settings.biases;
        format!(
            "position {:+}, length {:+} per 10 words, noise {}, seed {}",
            b.position, b.length_per_10_words, b.noise, b.seed
        )
    })
}

/// Each compared set's answers by question id.
pub(super) async fn answers_of(pool: &Db, sets: &[i64]) -> AppResult<HashMap<i64, HashMap<i64, String>>> {
    let mut out = HashMap::new();
    for s in sets {
        out.insert(*s, store::answers::texts(pool, *s).await?.into_iter().collect());
    }
    Ok(out)
}

/// An evaluation job's finished items, each read as its result record: the
/// one place its stored results are read (one that cannot be read is left
/// out, as an unfinished item is).
#[derive(Default)]
pub(super) struct Results {
    align: HashMap<Key, protocol::AlignResult>,
    unbiased: HashMap<Key, protocol::UnbiasedResult>,
    legacy: HashMap<Key, protocol::LegacyResult>,
}

impl Results {
    /// The finished items' results by key; one that cannot be read is an
    /// error naming its item (see [`crate::ssr::jobs::read_result`]).
    pub(super) fn of(items: &[JobItemView]) -> AppResult<Results> {
        let mut out = Results::default();
        for item in items.iter().filter(|i| i.status == crate::model::ItemStatus::Done) {
            let Some(key) = Key::parse(&item.key) else { continue };
            match key {
                Key::Align { .. } => out.align.insert(key, read_result::<protocol::AlignItem>(item)?).map(drop),
                Key::Unbiased { .. } => {
                    out.unbiased.insert(key, read_result::<protocol::UnbiasedItem>(item)?).map(drop)
                }
                Key::Legacy { .. } => out.legacy.insert(key, read_result::<protocol::LegacyItem>(item)?).map(drop),
            };
        }
        Ok(out)
    }

    /// The pair `(a, b)`'s answers to `question` as aligned.
    pub(super) fn align(&self, a: i64, b: i64, question: i64) -> Option<&protocol::AlignResult> {
        self.align.get(&Key::Align { a, b, question })
    }

    /// One judge's judgments of one trial.
    pub(super) fn unbiased(
        &self,
        (a, b): (i64, i64),
        question: i64,
        trial: u32,
        judge: u32,
    ) -> Option<&protocol::UnbiasedResult> {
        self.unbiased.get(&Key::Unbiased { a, b, question, trial, judge })
    }

    pub(super) fn legacy(&self, a: i64, b: i64, question: i64) -> Option<&protocol::LegacyResult> {
        self.legacy.get(&Key::Legacy { a, b, question })
    }
}

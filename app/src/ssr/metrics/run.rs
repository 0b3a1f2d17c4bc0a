//! Creating and running a metrics job, and computing its report when it ends.

use std::collections::{BTreeMap, HashMap};

use crate::ssr::store::Db;
use engine::jobs::{ItemKey, ItemOutcome, WorkItem};
use engine::metrics::factorial::{self, Observation};
use engine::metrics::granularity::{self, Scored};
use engine::metrics::score::{self, EmbeddingCache, Pair};
use engine::metrics::text;
use engine::metrics::{Definitions, RelevanceUnit};
use serde::{Deserialize, Serialize};
use types::requests::MetricsRequest;

use super::*;
use crate::error::{AppError, AppResult};
use crate::model::JobView;
use crate::ssr::jobs::params::MetricsParams;
use crate::ssr::jobs::{self, Ended, Items, JobParams, Run, Stage};
use crate::ssr::store;
/// One question to score: its id, category and pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Planned {
    question_id: i64,
    category: Option<String>,
    pair: Pair,
}

/// Each answer set's questions to score (those with a reference and an
/// answer), after checking the request.
async fn plan(pool: &Db, set_id: i64, answer_sets: &[i64], unit: RelevanceUnit) -> AppResult<Vec<(i64, Vec<Planned>)>> {
    if answer_sets.is_empty() {
        return Err(AppError::Invalid("choose at least one answer set".into()));
    }
    let questions = store::questions::list_questions(pool, set_id).await?;
    let with_reference: Vec<_> =
        questions.iter().filter(|q| q.reference_answer.as_deref().is_some_and(|r| !r.trim().is_empty())).collect();
    if with_reference.is_empty() {
        return Err(AppError::Invalid(format!(
            "question set {set_id} has no reference answers: generate hierarchical questions, or import a set with them"
        )));
    }
    let spans = store::documents::chunk_spans(pool, store::questions::get_set(pool, set_id).await?.project_id).await?;
    let mut out = Vec::new();
    for &a in answer_sets {
        let aset = store::answers::get_set(pool, a).await?;
        if aset.question_set_id != set_id {
            return Err(AppError::Invalid(format!(
                "answer set {a} answers question set {}, not {set_id}",
                aset.question_set_id
            )));
        }
        let answers: HashMap<i64, crate::model::AnswerView> =
            store::answers::list_answers(pool, a, None).await?.into_iter().map(|x| (x.question_id, x)).collect();
        let planned: Vec<Planned> = with_reference
            .iter()
            .filter_map(|q| {
                let x = answers.get(&q.id)?;
                let chunks: Vec<i64> =
                    x.contexts.iter().filter(|c| c.kind == "chunk").filter_map(|c| c.id.parse().ok()).collect();
                let (ranked, relevant) = engine::metrics::at_unit(unit, &chunks, &q.source_chunk_ids, &spans);
                let mut relevant: Vec<i64> = relevant.into_iter().collect();
                relevant.sort_unstable();
                Some(Planned {
                    question_id: q.id,
                    category: q.category.clone(),
                    pair: Pair {
                        reference: q.reference_answer.clone().unwrap_or_default(),
                        answer: x.answer.clone(),
                        ranked: ranked.clone(),
                        relevant,
                    },
                })
            })
            .collect();
        if planned.is_empty() {
            return Err(AppError::Invalid(format!("answer set {a} answers none of the questions with a reference")));
        }
        out.push((a, planned));
    }
    Ok(out)
}

/// Checks a request and creates its run and job (not started); (run id, job).
pub async fn create(pool: &Db, set_id: i64, answer_sets: &[i64], req: &MetricsRequest) -> AppResult<(i64, JobView)> {
    req.validate()?;
    let MetricsRequest { k, bins, unit, definitions } = *req;
    let set = store::questions::get_set(pool, set_id).await?;
    let planned = plan(pool, set_id, answer_sets, unit).await?;
    let total: usize = planned.iter().map(|(_, p)| p.len().div_ceil(BATCH)).sum();
    let params = JobParams::Metrics(MetricsParams {
        set_id,
        answer_sets: answer_sets.to_vec(),
        k,
        bins,
        unit,
        definitions,
        run_id: None,
    });
    let job = jobs::create(pool, set.project_id, &params, total as i64).await?;
    let run = store::metrics::insert(pool, set.project_id, set_id, job, answer_sets, k, bins).await?;
    Ok((run, store::jobs::get_job(pool, job).await?))
}

/// The job's items: per answer set, its questions in batches of [`BATCH`]
/// (by answer length; the order is the same on every resume).
async fn items(pool: &Db, p: &MetricsParams) -> AppResult<Vec<WorkItem>> {
    let unit = p.unit;
    Ok(plan(pool, p.set_id, &p.answer_sets, unit)
        .await?
        .into_iter()
        .flat_map(|(a, mut planned)| {
            // Batches of answers of like length: an embedding batch is
            // padded to its longest text (the report orders by question).
            planned.sort_by_key(|p| (p.pair.answer.len(), p.question_id));
            planned
                .chunks(BATCH)
                .enumerate()
                .map(|(i, batch)| {
                    WorkItem::new(
                        ItemKey::Scores { answer_set: a, batch: i },
                        &Batch { answer_set_id: a, questions: batch.to_vec() },
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect())
}

/// A metrics job item (key `ms-SET-NNNNN`): a batch of one answer set's
/// questions, each with its answer and reference.
#[derive(Serialize, Deserialize)]
struct Batch {
    answer_set_id: i64,
    questions: Vec<Planned>,
}

/// What a batch stores: its questions' scores, and how many texts it embedded.
#[derive(Serialize, Deserialize)]
struct BatchScores {
    embedded: usize,
    questions: Vec<QuestionMetrics>,
}

engine::job_items!(Batch => BatchScores);

/// Scores one batch: texts with a stored vector are not embedded again;
/// new vectors are stored. The result is the batch's [`QuestionMetrics`].
async fn run_item(pool: &Db, minilm_dir: &std::path::Path, item: WorkItem, k: usize) -> ItemOutcome {
    let outcome: Result<BatchScores, String> = async {
        let Batch { questions: planned, .. } = item.read::<Batch>()?;
        let texts: Vec<&str> =
            planned.iter().flat_map(|p| [p.pair.reference.as_str(), p.pair.answer.as_str()]).collect();
        let mut cache = EmbeddingCache::new();
        for (t, v) in store::vectors::texts(pool, MODEL, &texts).await.map_err(|e| e.to_string())? {
            cache.insert(t, v);
        }
        let model = crate::ssr::answers::minilm(minilm_dir)?;
        let owned: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let (cache, embedded) = tokio::task::spawn_blocking(move || {
            let embedded = cache.fill(&model, owned.iter().map(String::as_str));
            (cache, embedded)
        })
        .await
        .map_err(|e| e.to_string())?;
        let embedded = embedded?;
        let new: Vec<(&str, &[f32])> = embedded.iter().filter_map(|t| cache.get(t).map(|v| (t.as_str(), v))).collect();
        store::vectors::save_texts(pool, MODEL, &new).await.map_err(|e| e.to_string())?;
        let scored: Vec<QuestionMetrics> = planned
            .iter()
            .map(|p| QuestionMetrics {
                question_id: p.question_id,
                category: p.category.clone(),
                scores: score::score(&p.pair, &cache, k),
            })
            .collect();
        Ok(BatchScores { embedded: embedded.len(), questions: scored })
    }
    .await;
    match outcome {
        Ok(scored) => ItemOutcome::done::<Batch>(&scored, 0, 0.0),
        Err(error) => ItemOutcome::failed(error),
    }
}

/// The levels of a dimension's coarsest categories in the hierarchy's
/// order (the project's own, or the default).
async fn coarse_order(pool: &Db, project_id: i64, dimension: &str) -> Vec<String> {
    let h = store::questions::project_hierarchy(pool, project_id)
        .await
        .ok()
        .flatten()
        .unwrap_or_else(engine::questions::hierarchy::default_hierarchy);
    h.get(dimension).map(|d| d.categories.iter().map(|c| c.name.clone()).collect()).unwrap_or_default()
}

/// Computes a finished job's report from its items and stores it with its run.
async fn finish(pool: &Db, job: &JobView) -> AppResult<()> {
    // The run's id was recorded after the job was made: read it afresh.
    let job = &store::jobs::get_job(pool, job.id).await?;
    let p = JobParams::of(job)?;
    let run_id = p.metrics(job.id)?.run_id.ok_or_else(|| AppError::Invalid(format!("job {} has no run", job.id)))?;
    let run = store::metrics::get(pool, run_id).await?;
    let items = store::jobs::job_items(pool, job.id).await?;
    // A report over some of the questions would not say so: none until every batch is scored.
    if let Some(failed) = items.iter().find(|i| i.status == crate::model::ItemStatus::Failed) {
        let n = items.iter().filter(|i| i.status == crate::model::ItemStatus::Failed).count();
        return Err(AppError::Invalid(format!(
            "{n} of {} batches failed ({}: {}); retry the failed items to finish the report",
            items.len(),
            failed.key,
            failed.error.as_deref().unwrap_or("no error recorded")
        )));
    }
    let mut by_set: BTreeMap<i64, Vec<QuestionMetrics>> = BTreeMap::new();
    for (key, scored) in jobs::done_results::<Batch>(&items, |k| matches!(k, ItemKey::Scores { .. }))? {
        if let ItemKey::Scores { answer_set, .. } = key {
            by_set.entry(answer_set).or_default().extend(scored.questions);
        }
    }
    let references: HashMap<i64, String> = store::questions::list_questions(pool, run.question_set_id)
        .await?
        .into_iter()
        .filter_map(|q| Some((q.id, q.reference_answer?)))
        .collect();
    let (unit, definitions) = metrics_choices(job);
    let lv_order = coarse_order(pool, run.project_id, "LV").await;
    let qc_order = coarse_order(pool, run.project_id, "QC").await;
    let mut sets = Vec::new();
    for a in run.answer_set_ids() {
        let aset = store::answers::get_set(pool, a).await?;
        let mut per_question = by_set.remove(&a).unwrap_or_default();
        per_question.sort_by_key(|q| q.question_id);
        for q in per_question.iter_mut() {
            q.scores = q.scores.under(definitions);
        }
        let answers: HashMap<i64, String> = store::answers::texts(pool, a).await?.into_iter().collect();
        let mut set = aggregate(&aset, per_question, &answers, &references, run.bins as usize, &lv_order, &qc_order);
        if definitions == Definitions::AsPublished {
            // The authors' NMI in front; their code has no interval or floor.
            for l in set.granularity.iter_mut().flat_map(|d| d.levels.iter_mut()) {
                if let Some(nmi) = l.nmi_published {
                    l.nmi = nmi;
                    (l.nmi_ci, l.nmi_floor) = (None, None);
                }
            }
        }
        sets.push(set);
    }
    let report = Report {
        run_id,
        question_set_id: run.question_set_id,
        k: run.k as usize,
        bins: run.bins as usize,
        relevance_unit: unit,
        definitions,
        embedding_model: format!("{MODEL} (in process)"),
        sets,
    };
    store::metrics::save_report(pool, run_id, &serde_json::to_string(&report).map_err(|_| AppError::Internal)?).await
}

/// One answer set's means, granularity analysis and factorial table.
fn aggregate(
    aset: &crate::model::AnswerSetView,
    per_question: Vec<QuestionMetrics>,
    answers: &HashMap<i64, String>,
    references: &HashMap<i64, String>,
    bins: usize,
    lv_order: &[String],
    qc_order: &[String],
) -> SetMetrics {
    let all: Vec<&QuestionMetrics> = per_question.iter().collect();
    let mut by_category: BTreeMap<String, Vec<&QuestionMetrics>> = BTreeMap::new();
    for q in &per_question {
        by_category.entry(q.category.clone().unwrap_or_else(|| "(none)".into())).or_default().push(q);
    }
    let scored: Vec<Scored> = per_question
        .iter()
        .filter_map(|q| Some(Scored { category: q.category.clone()?, score: q.scores.cs }))
        .collect();
    // LV × QC questions: a category naming one of each ("LV/similar × QC/simple").
    let observations: Vec<Observation> = per_question
        .iter()
        .filter_map(|q| {
            let c = q.category.as_deref().filter(|c| c.contains(" × "))?;
            let level = |d: &str| {
                c.split(" × ")
                    .find_map(|p| p.strip_prefix(&format!("{d}/")))
                    .map(|p| p.split('/').next().unwrap_or(p).to_string())
            };
            Some(Observation { lv: level("LV")?, qc: level("QC")?, ap: q.scores.ap, cs: q.scores.cs })
        })
        .collect();
    SetMetrics {
        answer_set_id: aset.id,
        name: aset.name.clone(),
        method: aset.method.clone(),
        overall: means("all", &all),
        corpus_bleu: text::corpus_bleu(
            per_question.iter().filter_map(|q| {
                Some((answers.get(&q.question_id)?.as_str(), references.get(&q.question_id)?.as_str()))
            }),
        ),
        per_category: by_category.iter().map(|(c, qs)| means(c, qs)).collect(),
        granularity: granularity::analyse(&scored, bins),
        coarse: granularity::coarse_table(
            &per_question
                .iter()
                .filter_map(|q| Some((q.category.clone()?, q.scores.ap, q.scores.cs)))
                .collect::<Vec<_>>(),
        ),
        factorial: (!observations.is_empty()).then(|| factorial::table(&observations, lv_order, qc_order)),
        questions: per_question,
    }
}

/// The metrics job: embedding in process uses every core already, so its
/// batches run one at a time; the report is computed and stored at the end.
pub struct MetricsStage;

impl Stage for MetricsStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, params: &'a JobParams) -> Items<'a> {
        Box::pin(async move { items(pool, params.metrics(job.id)?).await })
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move {
            let k = run.params.metrics(run.job.id)?.k;
            Ok(run.phase.run(items, 1, |item| run_item(run.pool, &run.llm.minilm_dir, item, k)).await)
        })
    }

    fn finish<'a>(&'a self, run: &'a Run<'a>) -> engine::llm::BoxFuture<'a, AppResult<()>> {
        Box::pin(finish(run.pool, run.job))
    }
}

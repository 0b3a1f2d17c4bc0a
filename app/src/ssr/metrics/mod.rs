//! Reference-based metrics of answer sets over a question set with
//! reference answers (seed 004 §2.3–2.4): per answer set and question,
//! retrieval against the question's source chunks (AP, nDCG@k, Recall@k —
//! for methods that record the chunks they retrieved) and the answer
//! against the reference (cosine similarity of all-MiniLM-L6-v2
//! embeddings, ROUGE-1 F1, sentence BLEU), their means overall and per
//! category, corpus BLEU, the granularity analysis of the cosine
//! similarities, and seed 004's LV × QC factorial table.
//!
//! A run is a job (kind `metrics`): one item per batch of [`BATCH`]
//! questions of one answer set, so it shows progress, can be cancelled and
//! resumed; each text is embedded once ever (`text_vectors`) and reused by
//! every later run. When the job is done the report is computed from its
//! items and stored with the run (`metrics_runs`), for the page, its
//! downloads and share links.

use std::collections::{BTreeMap, HashMap};

use engine::jobs::{ItemOutcome, WorkItem};
use engine::metrics::factorial::{self, Observation};
use engine::metrics::granularity::{self, DimensionAnalysis, Scored};
use engine::metrics::score::{self, EmbeddingCache, Pair, PairScores};
use engine::metrics::text;
use engine::metrics::RelevanceUnit;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::model::{JobView, MetricsRunPage, MetricsRunView};
use crate::ssr::store;

/// The job kind.
pub const METRICS: &str = "metrics";
/// Questions per job item.
pub const BATCH: usize = 32;
/// The model vectors are stored under.
const MODEL: &str = "all-MiniLM-L6-v2";

/// One question's metrics for one answer set (the scores flattened into
/// the same object: `ap`, `ndcg`, `recall`, `cs`, `rouge1`, `bleu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionMetrics {
    pub question_id: i64,
    pub category: Option<String>,
    #[serde(flatten)]
    pub scores: PairScores,
}

/// Means of a group of questions (the page's own type: nothing to convert).
pub type Means = crate::model::MetricsMeansView;

/// One answer set's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetMetrics {
    pub answer_set_id: i64,
    pub name: String,
    pub method: String,
    pub overall: Means,
    pub corpus_bleu: f64,
    pub per_category: Vec<Means>,
    pub granularity: Vec<DimensionAnalysis>,
    /// Seed 004 Table 4, when the set has LV × QC questions.
    pub factorial: Option<factorial::Factorial>,
    pub questions: Vec<QuestionMetrics>,
}

/// The report of a metrics run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub run_id: i64,
    pub question_set_id: i64,
    pub k: usize,
    pub bins: usize,
    /// What a retrieved chunk had to match to count as relevant (runs
    /// before issue #21 used the source chunk).
    #[serde(default = "chunk_unit")]
    pub relevance_unit: RelevanceUnit,
    pub embedding_model: String,
    pub sets: Vec<SetMetrics>,
}

fn chunk_unit() -> RelevanceUnit {
    RelevanceUnit::Chunk
}

/// A job's relevance unit: its parameters' `unit`, or the source chunk for
/// jobs made before the choice existed.
fn unit_of(parameters: &serde_json::Value) -> RelevanceUnit {
    parameters["unit"].as_str().and_then(|u| RelevanceUnit::parse(u).ok()).unwrap_or(RelevanceUnit::Chunk)
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

fn mean_opt(v: &[Option<f64>]) -> Option<f64> {
    let known: Vec<f64> = v.iter().flatten().copied().collect();
    (!known.is_empty()).then(|| mean(known.into_iter()))
}

fn means(group: &str, qs: &[&QuestionMetrics]) -> Means {
    Means {
        group: group.to_string(),
        n: qs.len(),
        map: mean_opt(&qs.iter().map(|q| q.scores.ap).collect::<Vec<_>>()),
        ndcg: mean_opt(&qs.iter().map(|q| q.scores.ndcg).collect::<Vec<_>>()),
        recall: mean_opt(&qs.iter().map(|q| q.scores.recall).collect::<Vec<_>>()),
        cs: mean(qs.iter().map(|q| q.scores.cs)),
        rouge1: mean(qs.iter().map(|q| q.scores.rouge1)),
        bleu: mean(qs.iter().map(|q| q.scores.bleu)),
    }
}

/// One question to score: its id, category and pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Planned {
    question_id: i64,
    category: Option<String>,
    pair: Pair,
}

/// Each answer set's questions to score (those with a reference and an
/// answer), after checking the request.
async fn plan(
    pool: &SqlitePool,
    set_id: i64,
    answer_sets: &[i64],
    unit: RelevanceUnit,
) -> AppResult<Vec<(i64, Vec<Planned>)>> {
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
    let spans = store::chunk_spans(pool, store::questions::get_set(pool, set_id).await?.project_id).await?;
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
pub async fn create(
    pool: &SqlitePool,
    set_id: i64,
    answer_sets: &[i64],
    k: usize,
    bins: usize,
    unit: RelevanceUnit,
) -> AppResult<(i64, JobView)> {
    if k == 0 || bins < 2 {
        return Err(AppError::Invalid("k must be at least 1 and bins at least 2".into()));
    }
    let set = store::questions::get_set(pool, set_id).await?;
    let planned = plan(pool, set_id, answer_sets, unit).await?;
    let total: usize = planned.iter().map(|(_, p)| p.len().div_ceil(BATCH)).sum();
    let job = store::jobs::create_job(
        pool,
        set.project_id,
        METRICS,
        &json!({ "set_id": set_id, "answer_sets": answer_sets, "k": k, "bins": bins, "unit": unit.name() }),
        total as i64,
    )
    .await?;
    let run = store::metrics::insert(pool, set.project_id, set_id, job, answer_sets, k, bins).await?;
    Ok((run, store::jobs::get_job(pool, job).await?))
}

/// The job's items: per answer set, its questions in batches of [`BATCH`]
/// (by answer length; the order is the same on every resume).
pub async fn items(pool: &SqlitePool, job: &JobView) -> AppResult<Vec<WorkItem>> {
    let p: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
    let set = p["set_id"].as_i64().unwrap_or_default();
    let sets: Vec<i64> = serde_json::from_value(p["answer_sets"].clone()).unwrap_or_default();
    Ok(plan(pool, set, &sets, unit_of(&p))
        .await?
        .into_iter()
        .flat_map(|(a, mut planned)| {
            // Batches of answers of like length: an embedding batch is
            // padded to its longest text (the report orders by question).
            planned.sort_by_key(|p| (p.pair.answer.len(), p.question_id));
            planned
                .chunks(BATCH)
                .enumerate()
                .map(|(i, batch)| WorkItem {
                    key: format!("ms-{a}-{i:05}"),
                    payload: json!({ "answer_set_id": a, "questions": batch }),
                })
                .collect::<Vec<_>>()
        })
        .collect())
}

/// Scores one batch: texts with a stored vector are not embedded again;
/// new vectors are stored. The result is the batch's [`QuestionMetrics`].
pub async fn run_item(pool: &SqlitePool, item: WorkItem, k: usize) -> ItemOutcome {
    let outcome: Result<String, String> = async {
        let planned: Vec<Planned> =
            serde_json::from_value(item.payload["questions"].clone()).map_err(|e| format!("unreadable item: {e}"))?;
        let texts: Vec<&str> =
            planned.iter().flat_map(|p| [p.pair.reference.as_str(), p.pair.answer.as_str()]).collect();
        let mut cache = EmbeddingCache::new();
        for (t, v) in store::vectors::texts(pool, MODEL, &texts).await.map_err(|e| e.to_string())? {
            cache.insert(t, v);
        }
        let model = crate::ssr::answers::minilm()?;
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
        serde_json::to_string(&json!({ "embedded": embedded.len(), "questions": scored })).map_err(|e| e.to_string())
    }
    .await;
    match outcome {
        Ok(result) => ItemOutcome::Done { result, tokens: 0, cost_usd: 0.0 },
        Err(error) => ItemOutcome::Failed { error, tokens: 0, cost_usd: 0.0 },
    }
}

/// The levels of a dimension's coarsest categories in the hierarchy's
/// order (the project's own, or the default).
async fn coarse_order(pool: &SqlitePool, project_id: i64, dimension: &str) -> Vec<String> {
    let h = store::questions::project_hierarchy(pool, project_id)
        .await
        .ok()
        .flatten()
        .unwrap_or_else(engine::questions::hierarchy::default_hierarchy);
    h.get(dimension).map(|d| d.categories.iter().map(|c| c.name.clone()).collect()).unwrap_or_default()
}

/// Computes a finished job's report from its items and stores it with its run.
pub async fn finish(pool: &SqlitePool, job: &JobView) -> AppResult<()> {
    let p: serde_json::Value = serde_json::from_str(&job.parameters).unwrap_or_default();
    let run_id = p["run_id"].as_i64().ok_or_else(|| AppError::Invalid(format!("job {} has no run", job.id)))?;
    let run = store::metrics::get(pool, run_id).await?;
    let items = store::jobs::job_items(pool, job.id).await?;
    // A report over some of the questions would not say so: none until every batch is scored.
    if let Some(failed) = items.iter().find(|i| i.status == "failed") {
        let n = items.iter().filter(|i| i.status == "failed").count();
        return Err(AppError::Invalid(format!(
            "{n} of {} batches failed ({}: {}); retry the failed items to finish the report",
            items.len(),
            failed.key,
            failed.error.as_deref().unwrap_or("no error recorded")
        )));
    }
    let mut by_set: BTreeMap<i64, Vec<QuestionMetrics>> = BTreeMap::new();
    for item in items {
        let Some(a) = item.key.strip_prefix("ms-").and_then(|k| k.split('-').next()).and_then(|a| a.parse().ok())
        else {
            continue;
        };
        let result: serde_json::Value =
            serde_json::from_str(item.result.as_deref().unwrap_or("{}")).unwrap_or_default();
        let qs: Vec<QuestionMetrics> = serde_json::from_value(result["questions"].clone()).unwrap_or_default();
        by_set.entry(a).or_default().extend(qs);
    }
    let references: HashMap<i64, String> = store::questions::list_questions(pool, run.question_set_id)
        .await?
        .into_iter()
        .filter_map(|q| Some((q.id, q.reference_answer?)))
        .collect();
    let lv_order = coarse_order(pool, run.project_id, "LV").await;
    let qc_order = coarse_order(pool, run.project_id, "QC").await;
    let mut sets = Vec::new();
    for a in run.answer_set_ids() {
        let aset = store::answers::get_set(pool, a).await?;
        let mut per_question = by_set.remove(&a).unwrap_or_default();
        per_question.sort_by_key(|q| q.question_id);
        let answers: HashMap<i64, String> = store::answers::texts(pool, a).await?.into_iter().collect();
        sets.push(aggregate(&aset, per_question, &answers, &references, run.bins as usize, &lv_order, &qc_order));
    }
    let report = Report {
        run_id,
        question_set_id: run.question_set_id,
        k: run.k as usize,
        bins: run.bins as usize,
        relevance_unit: unit_of(&p),
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
        factorial: (!observations.is_empty()).then(|| factorial::table(&observations, lv_order, qc_order)),
        questions: per_question,
    }
}

/// A run's stored report; refused while its job has not finished.
pub async fn report(pool: &SqlitePool, run_id: i64) -> AppResult<Report> {
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
pub async fn run_view(pool: &SqlitePool, row: &store::metrics::Row) -> AppResult<MetricsRunView> {
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
        relevance_unit: job
            .as_ref()
            .map_or(RelevanceUnit::Chunk, |j| unit_of(&serde_json::from_str(&j.parameters).unwrap_or_default()))
            .name()
            .to_string(),
        job,
        finished: row.report.is_some(),
        created_at: row.created_at.clone(),
    })
}

/// A run's page: the run and, once finished, its report as the page shows it.
pub async fn page(pool: &SqlitePool, run_id: i64) -> AppResult<MetricsRunPage> {
    let row = store::metrics::get(pool, run_id).await?;
    // The row holds the report: read once, not again through `report`.
    let report = row.report.as_deref().map(|text| parse(run_id, text)).transpose()?;
    let mut view = report.as_ref().map(view);
    // ρ against human category agreement, when a validation study exists.
    if let (Some(r), Some(v)) = (&report, view.as_mut()) {
        if let Some((study, picks)) =
            crate::ssr::study::category_picks(pool, row.project_id, row.question_set_id).await?
        {
            for (s, sv) in r.sets.iter().zip(v.sets.iter_mut()) {
                sv.rho_agreement = granularity::rho_agreement(&s.granularity, &picks).map(|c| (study, c.r, c.p, c.n));
            }
        }
    }
    Ok(MetricsRunPage { run: run_view(pool, &row).await?, view })
}

/// Every chart of a report: (file name without extension, SVG).
pub fn charts(r: &Report) -> Vec<(String, String)> {
    let v = view(r);
    v.sets
        .into_iter()
        .flat_map(|s| {
            let id = s.answer_set_id;
            std::iter::once((format!("power-{id}"), s.power_svg))
                .chain(s.trees.into_iter().map(move |(d, svg)| (format!("tree-{id}-{d}"), svg)))
        })
        .collect()
}

/// The whole report as JSON (without every question's scores: those are the CSV).
pub fn report_json(r: &Report) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(sets) = v["sets"].as_array_mut() {
        for s in sets {
            if let Some(o) = s.as_object_mut() {
                o.remove("questions");
            }
        }
    }
    v
}

/// The report as the Metrics page shows it, with its charts.
pub fn view(r: &Report) -> crate::model::MetricsView {
    use crate::model::{GranularityRow, SetMetricsView, SplitRow};
    crate::model::MetricsView {
        run_id: r.run_id,
        question_set_id: r.question_set_id,
        k: r.k,
        bins: r.bins,
        relevance_unit: r.relevance_unit.name().to_string(),
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
                power_svg: granularity::power_chart_svg(
                    &format!("{} — discriminative power by level", s.name),
                    &s.granularity,
                ),
                trees: s.granularity.iter().map(|d| (d.dimension.clone(), granularity::tree_svg(d))).collect(),
                rho_agreement: None,
            })
            .collect(),
    }
}

fn factorial_view(f: &factorial::Factorial) -> crate::model::FactorialView {
    let row = |g: &factorial::Group| crate::model::FactorialRow {
        lv: g.lv.clone(),
        qc: g.qc.clone(),
        n: g.n,
        map: g.map,
        cs: g.cs,
        gap: g.gap,
    };
    crate::model::FactorialView {
        cells: f.cells.iter().map(row).collect(),
        pooled: f.lv_pooled.iter().chain(&f.qc_pooled).map(row).collect(),
        lv_effect: f.lv_effect,
        qc_effect: f.qc_effect,
    }
}

/// Every question's metrics as CSV: answer set, question, category, AP,
/// nDCG, recall, CS, ROUGE-1, BLEU.
pub fn questions_csv(r: &Report) -> String {
    let mut out = String::from("answer_set,question_id,category,ap,ndcg,recall,cs,rouge1,bleu\n");
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    for s in &r.sets {
        for q in &s.questions {
            let category = q.category.clone().unwrap_or_default().replace('"', "\"\"");
            out += &format!(
                "{},{},\"{category}\",{},{},{},{},{},{}\n",
                s.answer_set_id,
                q.question_id,
                num(q.scores.ap),
                num(q.scores.ndcg),
                num(q.scores.recall),
                q.scores.cs,
                q.scores.rouge1,
                q.scores.bleu
            );
        }
    }
    out
}

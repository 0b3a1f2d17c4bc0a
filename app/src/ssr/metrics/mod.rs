//! Reference-based metrics of answer sets over a question set with
//! reference answers (seed 004 §2.3–2.4): per answer set and question,
//! retrieval against the question's source chunks (AP, nDCG@k, Recall@k —
//! for methods that record the chunks they retrieved) and the answer
//! against the reference (cosine similarity of all-MiniLM-L6-v2
//! embeddings, ROUGE-1 F1, sentence BLEU), their means overall and per
//! category, corpus BLEU, the granularity analysis of the cosine
//! similarities, and seed 004's LV × QC factorial table.
//!
//! A run is a job (kind `metrics`, [`run`]): one item per batch of [`BATCH`]
//! questions of one answer set, so it shows progress, can be cancelled and
//! resumed; each text is embedded once ever (`text_vectors`) and reused by
//! every later run. When the job is done the report is computed from its
//! items and stored with the run (`metrics_runs`), for the page ([`report`]),
//! its downloads ([`export`]) and share links. Here: the report's types.

mod export;
mod report;
mod run;

pub use export::*;
pub use report::*;
pub use run::*;

use engine::metrics::factorial::{self};
use engine::metrics::granularity::DimensionAnalysis;
use engine::metrics::score::PairScores;
use engine::metrics::{Definitions, RelevanceUnit};
use serde::{Deserialize, Serialize};

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
    /// Seed 004 Table 1: each dimension's coarse-level questions, MAP, CS
    /// and Range (older runs lack it).
    #[serde(default)]
    pub coarse: Vec<engine::metrics::granularity::CoarseRow>,
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
    /// What a retrieved chunk had to match to count as relevant (older runs
    /// used the source chunk).
    #[serde(default = "chunk_unit")]
    pub relevance_unit: RelevanceUnit,
    /// Whose definitions the numbers follow (older runs: standard).
    #[serde(default)]
    pub definitions: Definitions,
    pub embedding_model: String,
    pub sets: Vec<SetMetrics>,
}

fn chunk_unit() -> RelevanceUnit {
    RelevanceUnit::Chunk
}

/// A job's relevance unit and definitions, as its settings stored them:
/// the source chunk and the standard definitions for jobs made before
/// either choice existed, or whose settings do not read.
fn metrics_choices(job: &crate::model::JobView) -> (RelevanceUnit, Definitions) {
    let params = crate::ssr::jobs::JobParams::of(job).ok();
    let metrics = params.as_ref().and_then(|p| p.metrics(job.id).ok());
    metrics.map_or((RelevanceUnit::Chunk, Definitions::Standard), |m| (m.unit, m.definitions))
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

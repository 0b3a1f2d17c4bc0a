//! What each kind of job is asked to do, as stored in its row: the kind in
//! `jobs.kind`, these settings as JSON in `jobs.parameters`. One typed
//! value per kind ([`JobParams`]), read once when the job runs; a missing
//! field that has no default is an error naming the job, never a silent 0.
//!
//! Field names and defaults are those of the JSON written before these
//! types existed, so the jobs of an older database still read (a relevance
//! job from before the choice of retriever scored BM25's top chunks; a
//! metrics run from before the relevance unit judged chunks).

use serde::{Deserialize, Serialize};

use crate::error::{AppError, AppResult};
use crate::model::{JobKind, JobView};

/// A job's settings, tagged by its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "parameters", rename_all = "snake_case")]
pub enum JobParams {
    Summaries(SummariesParams),
    Graph(GraphParams),
    Questions(QuestionsParams),
    Relevance(RelevanceParams),
    Mentions(MentionsParams),
    Answers(AnswersParams),
    Evaluation(EvaluationParams),
    StudyRating(StudyRatingParams),
    Metrics(MetricsParams),
}

impl JobParams {
    pub fn kind(&self) -> JobKind {
        match self {
            JobParams::Summaries(_) => JobKind::Summaries,
            JobParams::Graph(_) => JobKind::Graph,
            JobParams::Questions(_) => JobKind::Questions,
            JobParams::Relevance(_) => JobKind::Relevance,
            JobParams::Mentions(_) => JobKind::Mentions,
            JobParams::Answers(_) => JobKind::Answers,
            JobParams::Evaluation(_) => JobKind::Evaluation,
            JobParams::StudyRating(_) => JobKind::StudyRating,
            JobParams::Metrics(_) => JobKind::Metrics,
        }
    }

    /// Every call goes to the provider even when a cached reply exists.
    pub fn no_cache(&self) -> bool {
        match self {
            JobParams::Summaries(p) => p.no_cache,
            JobParams::Graph(p) => p.no_cache,
            JobParams::Questions(p) => p.no_cache,
            JobParams::Relevance(p) => p.no_cache,
            JobParams::Mentions(p) => p.no_cache,
            JobParams::Answers(p) => p.no_cache,
            JobParams::Evaluation(p) => p.no_cache,
            JobParams::StudyRating(p) => p.no_cache,
            JobParams::Metrics(_) => false,
        }
    }

    /// The settings alone, as `jobs.parameters` stores them.
    pub fn to_json(&self) -> serde_json::Value {
        let mut tagged = serde_json::to_value(self).unwrap_or_default();
        tagged.get_mut("parameters").map(serde_json::Value::take).unwrap_or_default()
    }

    /// A stored job's settings as the runner needs them: with its secrets
    /// (stored apart, see [`crate::ssr::jobs::create`]) back in their places.
    pub fn with_secrets(job: &JobView, secrets: Option<&str>) -> AppResult<JobParams> {
        let secrets = engine::secret::Secrets::from_stored(secrets)
            .map_err(|e| AppError::Invalid(format!("job {} ({}): {e}", job.id, job.kind)))?;
        if secrets.is_empty() {
            return JobParams::of(job);
        }
        let mut parameters: serde_json::Value = serde_json::from_str(&job.parameters)
            .map_err(|e| AppError::Invalid(format!("job {} ({}) has unreadable settings: {e}", job.id, job.kind)))?;
        secrets.apply(&mut parameters);
        JobParams::of(&JobView { parameters: parameters.to_string(), ..job.clone() })
    }

    /// A stored job's settings as shown (secrets redacted).
    pub fn of(job: &JobView) -> AppResult<JobParams> {
        let unreadable = |e: &dyn std::fmt::Display| {
            AppError::Invalid(format!("job {} ({}) has unreadable settings: {e}", job.id, job.kind))
        };
        let mut parameters: serde_json::Value = if job.parameters.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(&job.parameters).map_err(|e| unreadable(&e))?
        };
        // Questions jobs from before the other generators named none.
        if job.kind == JobKind::Questions && parameters.get("generator").is_none() {
            parameters["generator"] = "graph".into();
        }
        serde_json::from_value(serde_json::json!({ "kind": job.kind, "parameters": parameters }))
            .map_err(|e| unreadable(&e))
    }
}

/// The job's settings if it is of this kind, else an error naming both.
macro_rules! params_of {
    ($fn:ident, $variant:ident, $ty:ty) => {
        impl JobParams {
            pub fn $fn(&self, job_id: i64) -> AppResult<&$ty> {
                match self {
                    JobParams::$variant(p) => Ok(p),
                    other => Err(AppError::Invalid(format!(
                        "job {job_id} is a {} job, not {}",
                        other.kind(),
                        JobKind::$variant
                    ))),
                }
            }
        }
    };
}
params_of!(summaries, Summaries, SummariesParams);
params_of!(graph, Graph, GraphParams);
params_of!(questions, Questions, QuestionsParams);
params_of!(relevance, Relevance, RelevanceParams);
params_of!(mentions, Mentions, MentionsParams);
params_of!(answers, Answers, AnswersParams);
params_of!(evaluation, Evaluation, EvaluationParams);
params_of!(study_rating, StudyRating, StudyRatingParams);
params_of!(metrics, Metrics, MetricsParams);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummariesParams {
    #[serde(default)]
    pub no_cache: bool,
}

/// A graph job's request, stored as its keys beside `no_cache` (the
/// layout jobs stored before the request type had).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphParams {
    #[serde(default)]
    pub no_cache: bool,
    #[serde(flatten)]
    pub request: types::requests::GraphRequest,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionsParams {
    #[serde(default)]
    pub no_cache: bool,
    #[serde(flatten)]
    pub generator: Generator,
}

/// Which generator a questions job runs, with its settings and plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "generator", rename_all = "snake_case")]
pub enum Generator {
    /// Graph-text-grounded questions (seed 000 §III-A).
    Graph { settings: engine::questions::graph::GraphQuestionSettings, plans: Vec<engine::questions::graph::Plan> },
    /// The summary-based baseline (LightRAG's).
    Summary { settings: engine::questions::summary::SummarySettings },
    /// Questions with reference answers in hierarchical categories (seed 004).
    Hierarchical {
        settings: engine::questions::hierarchy::HierarchicalSettings,
        hierarchy: engine::questions::hierarchy::Hierarchy,
        plans: Vec<engine::questions::hierarchy::Planned>,
    },
}

fn default_k() -> usize {
    engine::questions::relevance::DEFAULT_K
}

fn bm25() -> String {
    "bm25".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceParams {
    #[serde(default)]
    pub no_cache: bool,
    pub set_id: i64,
    #[serde(default = "default_k")]
    pub k: usize,
    /// A built-in method whose retrieval is scored, or `bm25` (the top `k` chunks).
    #[serde(default = "bm25")]
    pub retriever: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MentionsParams {
    #[serde(default)]
    pub no_cache: bool,
    pub set_id: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswersParams {
    #[serde(default)]
    pub no_cache: bool,
    pub set_id: i64,
    pub method: String,
    /// The method's parameters, resolved (every default filled in).
    #[serde(default)]
    pub params: serde_json::Value,
    #[serde(default)]
    pub target_words: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationParams {
    #[serde(default)]
    pub no_cache: bool,
    pub set_id: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyRatingParams {
    #[serde(default)]
    pub no_cache: bool,
    pub study_id: i64,
}

fn ten() -> usize {
    10
}

fn chunk() -> types::RelevanceUnit {
    types::RelevanceUnit::Chunk
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsParams {
    pub set_id: i64,
    pub answer_sets: Vec<i64>,
    #[serde(default = "ten")]
    pub k: usize,
    #[serde(default)]
    pub bins: usize,
    /// What retrieval is judged against (`chunk` before the choice existed).
    #[serde(default = "chunk")]
    pub unit: types::RelevanceUnit,
    /// Whose definitions (`standard` before the choice existed).
    #[serde(default)]
    pub definitions: types::Definitions,
    /// The run the job fills, recorded once the run exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(kind: JobKind, parameters: &str) -> JobView {
        JobView {
            id: 7,
            project_id: Some(1),
            kind,
            parameters: parameters.into(),
            status: crate::model::JobStatus::Queued,
            total: 0,
            done: 0,
            failed: 0,
            tokens: 0,
            cost_usd: 0.0,
            error: None,
            created_at: String::new(),
            started_at: None,
            finished_at: None,
            elapsed_secs: 0.0,
        }
    }

    #[test]
    fn stored_settings_read_back_with_the_old_defaults() {
        // A relevance job from before the choice of retriever.
        let p = JobParams::of(&job(JobKind::Relevance, r#"{"no_cache":false,"set_id":3}"#)).unwrap();
        let r = p.relevance(7).unwrap();
        assert_eq!((r.set_id, r.k, r.retriever.as_str()), (3, 5, "bm25"));
        // A graph job written with every field, and one with none.
        let g = JobParams::of(&job(JobKind::Graph, r#"{"no_cache":true}"#)).unwrap();
        assert!(g.no_cache());
        assert_eq!(g.graph(7).unwrap().request.gleaning, 1);
        // The settings alone go back into the row, and read the same.
        let again = JobParams::of(&job(JobKind::Relevance, &p.to_json().to_string())).unwrap();
        assert_eq!(again, p);
        assert!(p.to_json().get("kind").is_none());
    }

    #[test]
    fn a_missing_field_is_an_error_naming_the_job_not_a_zero() {
        let err = JobParams::of(&job(JobKind::Mentions, r#"{"no_cache":false}"#)).unwrap_err().to_string();
        assert!(err.contains("job 7 (mentions)") && err.contains("set_id"), "{err}");
        let p = JobParams::of(&job(JobKind::Mentions, r#"{"set_id":2}"#)).unwrap();
        let err = p.graph(7).unwrap_err().to_string();
        assert!(err.contains("job 7 is a mentions job, not graph"), "{err}");
    }
}

//! Experiments: the wizard, drafts, stages and the report.

use serde::{Deserialize, Serialize};
use types::requests::{
    AnswersRequest, ChunkRequest, EvaluationRequest, GraphQuestionsRequest, GraphRequest, HierarchicalQuestionsRequest,
    MetricsRequest, SummaryQuestionsRequest,
};
use types::{ExperimentStatus, StageKind, StageState};

use super::{EvaluationReportView, GraphOverview, JobView, MetricsView, ProjectSummary, QuestionSetView};

/// The "New experiment" wizard's choices: each stage's request whole (the
/// manifest's tables), the form showing their common settings. An imported
/// manifest's other settings are held here too, so they are kept when a
/// field changes. The server turns them into a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WizardFields {
    pub name: String,
    pub llm: WizardLlm,
    pub corpus: WizardCorpus,
    /// The project whose documents are the corpus (with [`WizardCorpus::Project`]).
    pub corpus_project: String,
    pub chunking: ChunkRequest,
    pub graph: GraphRequest,
    pub ask_graph: bool,
    pub graph_questions: GraphQuestionsRequest,
    pub ask_summary: bool,
    pub summary_questions: SummaryQuestionsRequest,
    pub ask_hierarchical: bool,
    pub hierarchical_questions: HierarchicalQuestionsRequest,
    /// The methods, each with its parameters.
    pub methods: Vec<AnswersRequest>,
    pub evaluate: bool,
    /// How it judges: the manifest's `[evaluation]` table, whole.
    pub evaluation: EvaluationRequest,
    /// The question sets evaluated, by position from 1 (empty: all).
    #[serde(default)]
    pub evaluation_sets: Vec<usize>,
    pub sanity: bool,
    pub metrics: bool,
    /// How answers are scored against the references (with `metrics`).
    pub metrics_request: MetricsRequest,
    /// What a text field held that is not what it asks for (levels
    /// "2, x"), shown as the draft's error until it is corrected.
    #[serde(default)]
    pub unread: Option<String>,
}

types::closed_set! {
    /// Who answers an experiment's LLM calls: the offline provider
    /// (classical-NLP stand-ins, no LLM) or the LLM configured on the
    /// Settings page.
    pub enum WizardLlm ("who answers the LLM calls") {
        Offline = "offline",
        Configured = "settings",
    }
}

types::closed_set! {
    /// Which documents an experiment reads: the sample corpus shipped with
    /// Assay, or a project's uploaded documents.
    pub enum WizardCorpus ("corpus") {
        Sample = "sample",
        Project = "project",
    }
}

/// What the wizard starts from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WizardStart {
    pub fields: WizardFields,
    /// Projects with documents, whose corpus an experiment may use: (name, documents, tokens).
    pub projects: Vec<(String, i64, i64)>,
    /// Built-in methods: (name, description).
    pub methods: Vec<(String, String)>,
    /// The LLM configured on the Settings page, described.
    pub configured_llm: String,
    pub configured_is_offline: bool,
    /// Finished evaluations under the unbiased protocol, a plan's pilots
    ///, newest first: (id, "project · #id name (M = …)").
    #[serde(default)]
    pub pilots: Vec<(i64, String)>,
}

/// A stage's expected work, before the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageEstimateView {
    pub kind: StageKind,
    pub label: String,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
    pub how: String,
}

/// The wizard's choices as a manifest, with its estimate (or what is wrong).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentDraft {
    pub manifest: String,
    pub error: Option<String>,
    pub stages: Vec<StageEstimateView>,
    pub calls: u64,
    pub tokens: u64,
    pub cost_usd: f64,
    /// Who would answer: "offline (no LLM)" or the model.
    pub llm: String,
    pub offline: bool,
    /// Prices known for the model (else cost shows as unknown).
    pub priced: bool,
    /// The time the calls would take: calls × the model's measured mean
    /// latency ÷ the concurrency. `None` until a call to it was measured.
    #[serde(default)]
    pub time: Option<TimeEstimate>,
}

/// How long the calls of an experiment would take, and from what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeEstimate {
    pub seconds: f64,
    /// The mean latency of the last `measured` answered, uncached calls.
    pub latency_ms: f64,
    pub measured: i64,
    pub concurrency: usize,
    /// The offline provider's in-process work was measured (the CPU, not
    /// an endpoint, bounds it).
    #[serde(default)]
    pub offline: bool,
}

impl TimeEstimate {
    /// `calls` (at least, at most) in time, in words: the headline ("About
    /// 2 h 10 min", "Under a second"), how it is counted, and whether it
    /// runs an hour or more.
    pub fn describe(&self, calls: (u64, u64)) -> (String, String, bool) {
        use crate::format;
        let per_call = self.latency_ms / 1000.0 / self.concurrency.max(1) as f64;
        let (lo, hi) = (calls.0 as f64 * per_call, calls.1 as f64 * per_call);
        let span = |s: f64| if s < 1.0 { "under a second".to_string() } else { format::duration(s) };
        let headline = if hi < 1.0 {
            "Under a second".to_string()
        } else if calls.1 > calls.0 {
            format!("About {} to {}", span(lo), span(hi))
        } else {
            format!("About {}", span(lo))
        };
        let how = format!(
            "on this endpoint: {} calls × {} ms (the mean of its last {} answered calls) ÷ {} at a time{}",
            format::int(calls.0 as i64),
            format::int(self.latency_ms.round() as i64),
            format::int(self.measured),
            self.concurrency,
            if self.offline { "; offline work is in-process, so the CPU bounds it" } else { "" }
        );
        (headline, how, hi >= 3600.0)
    }
}

/// An imported manifest in the wizard's fields, with what the form holds
/// but does not show (kept when a field changes) and what it cannot hold
/// (run while the manifest is as imported, dropped when a field changes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedManifest {
    pub fields: WizardFields,
    pub not_shown: Vec<String>,
    #[serde(default)]
    pub not_held: Vec<String>,
}

/// One stage of an experiment: planned, running, done or reused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentStageView {
    pub kind: StageKind,
    pub label: String,
    pub state: StageState,
    pub planned_calls: u64,
    pub how: String,
    pub job: Option<JobView>,
    pub new_calls: i64,
    pub cached_calls: i64,
    pub tokens: i64,
    pub cost_usd: f64,
    pub seconds: f64,
    /// The object the stage made (question set, answer set, evaluation, metrics run).
    pub object_id: Option<i64>,
}

/// An experiment as the list of them shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentBrief {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub status: ExperimentStatus,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentView {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub status: ExperimentStatus,
    pub error: Option<String>,
    pub llm: String,
    pub offline: bool,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub stages: Vec<ExperimentStageView>,
    pub new_calls: i64,
    pub cached_calls: i64,
    pub tokens: i64,
    pub cost_usd: f64,
    pub manifest: String,
}

/// Cost per method (seed 000's cost table): its answer sets' and the judge's share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodCostView {
    pub method: String,
    pub answers: i64,
    pub calls: i64,
    pub tokens: i64,
    pub cost_usd: f64,
    pub seconds: f64,
}

/// An experiment's report: every stage's report gathered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentReportView {
    pub experiment: ExperimentView,
    pub corpus: ProjectSummary,
    pub graph: Option<GraphOverview>,
    pub question_sets: Vec<QuestionSetView>,
    pub methods: Vec<MethodCostView>,
    pub evaluations: Vec<EvaluationReportView>,
    /// Each sanity check: (method, its sentence, even?).
    pub sanity: Vec<(String, String, Option<bool>)>,
    pub metrics: Vec<MetricsView>,
}

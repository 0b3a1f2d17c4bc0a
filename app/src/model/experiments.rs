//! Experiments: the wizard, drafts, stages and the report.

use serde::{Deserialize, Serialize};
use types::{ExperimentStatus, StageKind, StageState};

use super::{EvaluationReportView, GraphOverview, JobView, MetricsView, ProjectSummary, QuestionSetView};

/// The "New experiment" wizard's choices: the manifest's common settings
/// (`engine::experiment::Manifest`), flat for a form. The server fills the
/// defaults (the papers') and turns them into a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WizardFields {
    pub name: String,
    /// `offline`, or `settings` (the LLM configured on the Settings page).
    pub llm: String,
    /// `sample`, or `project` (the documents of `corpus_project`).
    pub corpus: String,
    pub corpus_project: String,
    pub chunk_tokens: u32,
    pub chunk_overlap: u32,
    pub gleaning: u32,
    pub graph_questions: bool,
    pub node: u32,
    pub edge: u32,
    pub subgraph: u32,
    pub summary_questions: bool,
    pub users: u32,
    pub tasks: u32,
    pub per_task: u32,
    pub hierarchical_questions: bool,
    /// Comma-separated, e.g. "QC, AT, LV".
    pub dimensions: String,
    /// Comma-separated category counts, e.g. "2, 4, 8".
    pub levels: String,
    pub per_category: u32,
    pub methods: Vec<String>,
    pub evaluate: bool,
    /// How it judges: the manifest's `[evaluation]` table, whole (the
    /// wizard shows the protocol, trials, repeats, corrections and judge;
    /// an imported manifest's other settings are kept as they are).
    pub evaluation: types::requests::EvaluationRequest,
    pub sanity: bool,
    pub metrics: bool,
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

/// An imported manifest in the wizard's fields; what the form cannot show
/// is named (the manifest itself is run as imported until a field changes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedManifest {
    pub fields: WizardFields,
    pub not_shown: Vec<String>,
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

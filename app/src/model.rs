//! Data the browser sees: the DTOs server functions return. Row types of
//! the store are separate (`store`), so the schema can change without
//! changing what crosses the wire.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectSummary {
    pub id: i64,
    pub name: String,
    /// ISO 8601, UTC.
    pub created_at: String,
    pub documents: i64,
    pub tokens: i64,
    pub chunks: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectView {
    pub summary: ProjectSummary,
    pub chunk_tokens: i64,
    pub chunk_overlap: i64,
    pub tokenizer: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentSummary {
    pub id: i64,
    pub title: String,
    pub source: String,
    pub chars: i64,
    pub tokens: i64,
    pub chunks: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentView {
    pub summary: DocumentSummary,
    pub project_id: i64,
    pub text: String,
    /// The record's other JSON fields, pretty-printed; `None` when there are none.
    pub metadata: Option<String>,
    pub created_at: String,
}

/// A file or record that was not stored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

/// The answer to an upload: what was added and skipped, and the corpus
/// totals after it (the shape of `assay corpus add --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadReport {
    pub added: i64,
    pub skipped: Vec<Skipped>,
    pub documents: i64,
    pub tokens: i64,
    pub chunks: i64,
}

/// Limits the upload form enforces before sending, so a user hears about a
/// too-large file before waiting for it to upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadLimits {
    pub max_upload_bytes: u64,
    pub max_file_bytes: u64,
}

/// A job, with its status as the user should see it (`interrupted` when the
/// process running it died).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobView {
    pub id: i64,
    pub project_id: Option<i64>,
    pub kind: String,
    pub parameters: String,
    pub status: String,
    pub total: i64,
    pub done: i64,
    pub failed: i64,
    pub tokens: i64,
    pub cost_usd: f64,
    pub error: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Seconds from start to finish (or to now, while running).
    pub elapsed_secs: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobItemView {
    pub key: String,
    pub status: String,
    pub result: Option<String>,
    pub error: Option<String>,
    pub tokens: i64,
    pub cost_usd: f64,
    pub finished_at: String,
}

/// One logged LLM call, prompt and reply as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallView {
    pub id: i64,
    pub purpose: String,
    pub provider: String,
    pub model: String,
    pub sample: i64,
    pub prompt: String,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cost_usd: f64,
    pub latency_ms: i64,
    pub attempts: i64,
    pub cached: bool,
    pub prompt_hash: Option<String>,
    pub created_at: String,
}

/// How a call's provider is named on pages: the offline provider plainly
/// as not a language model.
pub fn provider_label(provider: &str, model: &str) -> String {
    if provider == "offline" {
        "offline (no LLM)".to_string()
    } else if provider == "simulated" {
        "simulated judge (bias lab, no LLM)".to_string()
    } else {
        format!("{provider} · {model}")
    }
}

/// The LLM configuration as the browser may see it: never the key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmInfo {
    /// `offline` or `openai`.
    pub provider: String,
    /// "offline (no LLM)", or "openai, MODEL at URL".
    pub label: String,
    /// The endpoint and model configured for `openai` (kept while offline).
    pub base_url: String,
    pub model: String,
    pub concurrency: i64,
    pub timeout_secs: i64,
    pub key_set: bool,
    /// USD per 1M input/output tokens of the model, when known.
    pub price: Option<(f64, f64)>,
    /// The "HTTP endpoint" method may call private addresses.
    pub allow_private_urls: bool,
    /// The model's context window when set here or by `--llm-context`
    /// (else the endpoint's word or a default, see `llm ping`).
    #[serde(default)]
    pub context: Option<u64>,
}

/// A job with the items that failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobDetail {
    pub job: JobView,
    pub items: Vec<JobItemView>,
    pub outcome: JobOutcome,
}

/// What a job's model did, from its items and its call log: items that
/// failed, whose replies were cut by `max_tokens`, or that needed a repair
/// turn, with the commonest reasons for failing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobOutcome {
    /// Who answered ("openai · MODEL", "offline (no LLM)"), if anyone did.
    pub model: Option<String>,
    pub items: i64,
    pub failed: i64,
    pub truncated: i64,
    pub repaired: i64,
    /// Failure reasons, commonest first, with their counts (at most five).
    pub reasons: Vec<(String, i64)>,
}

impl JobOutcome {
    /// "2 of 8 items failed (the verdict has no Relevance score for Answer 1: 2); 3 cut at max_tokens; 1 repaired",
    /// or `None` when nothing went wrong.
    pub fn sentence(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.failed > 0 {
            let reasons: Vec<String> = self.reasons.iter().map(|(r, n)| format!("{r} ({n})")).collect();
            parts.push(format!("{} of {} items failed: {}", self.failed, self.items, reasons.join("; ")));
        }
        if self.truncated > 0 {
            parts.push(format!("{} of {} items had replies cut at max_tokens", self.truncated, self.items));
        }
        if self.repaired > 0 {
            parts.push(format!(
                "{} of {} items needed a repair turn for JSON of the wrong shape",
                self.repaired, self.items
            ));
        }
        (!parts.is_empty()).then(|| parts.join(". ") + ".")
    }
}

/// A project's graph at a glance: the Graph page's statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphOverview {
    /// What the model's extraction replies were like, when something went
    /// wrong (failed, empty, cut or repaired chunks; types left out).
    #[serde(default)]
    pub extraction_note: Option<String>,
    pub nodes: i64,
    pub edges: i64,
    pub components: i64,
    pub largest_component: i64,
    pub communities: i64,
    /// `(degree, nodes with that degree)`, for every degree present.
    pub degree_histogram: Vec<(i64, i64)>,
    /// `(type, nodes of that type)`, most frequent first.
    pub types: Vec<(String, i64)>,
    /// The highest-degree nodes, highest first.
    pub top: Vec<NodeBrief>,
    /// The job that built the graph, and the provider its calls went to
    /// (`offline`, `openai`, or `imported` for a graph brought from a file).
    pub job_id: Option<i64>,
    pub provider: String,
    pub model: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeBrief {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub degree: i64,
}

/// What the explorer draws. Edges refer to positions in `nodes`; types to
/// positions in `types`. At most `limit` nodes (the highest-degree ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphView {
    pub nodes: Vec<ViewNode>,
    pub edges: Vec<(u32, u32)>,
    pub types: Vec<String>,
    pub total_nodes: i64,
    pub total_edges: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewNode {
    pub id: i64,
    pub name: String,
    pub kind: u16,
    pub community: i64,
    pub degree: u32,
    pub x: f32,
    pub y: f32,
}

/// A chunk shown as evidence, cut into segments; `true` marks a mention.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceChunk {
    pub chunk_id: i64,
    pub document_id: i64,
    pub document_title: String,
    pub segments: Vec<(String, bool)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeDetail {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub community: i64,
    pub description: String,
    /// Neighbours, strongest relation first.
    pub neighbours: Vec<NodeBrief>,
    pub sources: Vec<SourceChunk>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgeDetail {
    pub source: NodeBrief,
    pub target: NodeBrief,
    pub description: String,
    pub keywords: Vec<String>,
    pub weight: f64,
    pub sources: Vec<SourceChunk>,
}

/// A question set with its counts per level (graph sets) or category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionSetView {
    pub id: i64,
    pub project_id: i64,
    pub job_id: Option<i64>,
    pub kind: String,
    pub name: String,
    pub parameters: String,
    pub created_at: String,
    pub questions: i64,
    /// `(level or category, questions)`.
    pub counts: Vec<(String, i64)>,
    /// The provider and model the generating job's calls went to (none for
    /// an imported set).
    pub provider: Option<String>,
    pub model: Option<String>,
}

/// One question with its provenance (the JSONL export's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionView {
    pub id: i64,
    pub question: String,
    pub level: Option<String>,
    pub category: Option<String>,
    pub expertise: Option<String>,
    pub reference_answer: Option<String>,
    pub source_chunk_ids: Vec<i64>,
    /// The chunks given to the LLM that wrote the question (`None`: not recorded).
    #[serde(default)]
    pub context_chunk_ids: Option<Vec<i64>>,
    /// Node keys of the sampled structure.
    pub nodes: Vec<String>,
    pub edges: Vec<(String, String)>,
    pub walk: Vec<String>,
    pub generator: String,
    pub prompt_hash: Option<String>,
    pub seed: Option<i64>,
}

/// Where a question came from: its sampled nodes as they are in the current
/// graph (for the explorer), keys no longer there, and its source texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionProvenance {
    pub question: QuestionView,
    pub nodes: Vec<NodeBrief>,
    pub missing: Vec<String>,
    pub sources: Vec<SourceChunk>,
}

/// The entities a question set mentions (seed 000 Fig. 9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityStats {
    pub set_id: i64,
    pub set_name: String,
    /// `graph` (the graph's names matched in the text) or `llm` (entities
    /// the LLM listed per question, a `mentions` job).
    pub source: String,
    /// The `mentions` job, for `llm`.
    pub job_id: Option<i64>,
    /// Who listed the entities, for `llm`: "offline (no LLM)" or "openai · MODEL".
    pub made_by: Option<String>,
    pub questions: i64,
    /// Questions whose entities are known (all, for `graph`; those the job
    /// has finished, for `llm`).
    pub covered: i64,
    pub with_entity: i64,
    pub distinct: i64,
    /// Distinct entities that are entities of the graph.
    pub in_graph: i64,
    /// Share of all mentions taken by the most mentioned entity.
    pub top_share: f64,
    /// The ten most mentioned entities, then "other".
    pub top: Vec<(String, i64)>,
}

/// Question–retrieval relevance of a set (seed 000 Fig. 10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceStats {
    pub set_id: i64,
    pub job_id: i64,
    /// The method whose retrieval was scored (`fastgraphrag`, the paper's; `bm25`, …).
    pub retriever: String,
    /// Who scored: "offline (no LLM)" or "openai · MODEL".
    pub made_by: Option<String>,
    pub scored: i64,
    pub questions: i64,
    pub mean: f64,
    /// Questions per score 0..=5.
    pub histogram: Vec<i64>,
}

/// One method instance's answers to a question set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerSetView {
    pub id: i64,
    pub project_id: i64,
    pub question_set_id: i64,
    pub job_id: Option<i64>,
    pub name: String,
    /// A built-in method's name, or `imported`.
    pub method: String,
    /// The method's full parameters as JSON.
    pub parameters: String,
    pub created_at: String,
    pub answers: i64,
    /// Who answered: "offline (no LLM)", "openai · MODEL", or none (imported).
    pub made_by: Option<String>,
}

/// A retrieved piece of context (see `engine::rag::Section`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextView {
    pub kind: String,
    pub id: String,
    pub score: f64,
    pub text: String,
}

/// One answer with its context and accounting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerView {
    pub id: i64,
    pub question_id: i64,
    pub question: String,
    pub answer: String,
    pub contexts: Vec<ContextView>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
    pub llm_calls: Option<i64>,
    pub retrieval_ms: Option<f64>,
    pub query_ms: Option<f64>,
    /// The model's reply was cut at its `max_tokens`.
    #[serde(default)]
    pub truncated: bool,
}

/// One row of the cost table (seed 000 Table II): averages per answered
/// question of an answer set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostRow {
    pub answer_set_id: i64,
    pub name: String,
    pub method: String,
    /// The set's parameters as JSON.
    pub parameters: String,
    pub answers: i64,
    /// Answers whose accounting is known (imported ones may not say).
    pub measured: i64,
    pub avg_tokens: Option<f64>,
    pub avg_prompt_tokens: Option<f64>,
    pub avg_completion_tokens: Option<f64>,
    pub avg_llm_calls: Option<f64>,
    pub avg_query_ms: Option<f64>,
    pub avg_retrieval_ms: Option<f64>,
    pub avg_cost_usd: Option<f64>,
    pub made_by: Option<String>,
}

/// An evaluation as lists and headers show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationView {
    pub id: i64,
    pub project_id: i64,
    pub question_set_id: i64,
    pub question_set: String,
    pub job_id: Option<i64>,
    pub name: String,
    /// Who judged, as the report states it.
    pub judge: String,
    pub protocol: String,
    pub trials: u32,
    pub repeats: u32,
    pub tolerance: u32,
    pub align: bool,
    pub exchange: bool,
    pub sanity: bool,
    /// The unbiased protocol's scoring prompt ("paper" or "content-only")
    /// and the first 12 hex digits of its SHA-256 (as in the call log).
    pub judge_prompt: String,
    pub judge_prompt_hash: String,
    /// The simulated judge's biases, when it judged: "position +0.3, …".
    pub biases: Option<String>,
    /// The compared answer sets' names, in order.
    pub contenders: Vec<String>,
    pub pairs: usize,
    /// The job's status and progress.
    pub status: String,
    pub done: i64,
    pub total: i64,
    pub tokens: i64,
    pub cost_usd: f64,
    pub created_at: String,
}

/// One pair's row of an evaluation report, numbers as computed (rates in
/// 0–1); the page formats them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRowView {
    pub a: i64,
    pub b: i64,
    pub a_name: String,
    pub b_name: String,
    pub questions: usize,
    /// As is, regenerated, forced, discarded; success rate (`None`: alignment off).
    pub aligned: (usize, usize, usize, usize),
    pub alignment_success: Option<f64>,
    /// Unbiased: trials; the median trial (by relative win rate) and its
    /// A-win, tie and B-win rates and relative win rate, each with its 95%
    /// bootstrap interval over questions (see `engine::judge::eval::UnbiasedSummary`).
    pub trials: usize,
    pub median_trial: Option<u32>,
    pub a_win: Option<(f64, (f64, f64))>,
    pub tie: Option<(f64, (f64, f64))>,
    pub b_win: Option<(f64, (f64, f64))>,
    pub relative: Option<(f64, (f64, f64))>,
    /// Mean total-score difference A − B; Wilcoxon and sign test p (raw, Holm).
    pub mean_difference: Option<f64>,
    pub wilcoxon: Option<(f64, f64)>,
    pub sign: Option<(f64, f64)>,
    /// Legacy: A's and B's win rates, relative.
    pub legacy: Option<(f64, f64, f64)>,
    /// Stacked-bar SVGs: per aspect, per level, legacy beside unbiased.
    pub aspects_svg: String,
    pub levels_svg: String,
    pub legacy_svg: String,
}

/// An evaluation's report as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationReportView {
    pub evaluation: EvaluationView,
    pub box_svg: String,
    pub heatmap_svg: String,
    pub legacy_heatmap_svg: Option<String>,
    pub pairs: Vec<PairRowView>,
    /// The sanity check's sentence, and whether it came out even.
    pub sanity: Option<(String, Option<bool>)>,
    /// The bias audit: (what, value, how many it counts).
    pub bias: Vec<(String, String, String)>,
    /// How well a language-model judge could be read (its items that
    /// failed, were cut or repaired, and its position consistency), and
    /// whether that is poor enough to doubt the rates; `None` for the
    /// offline and simulated judges.
    #[serde(default)]
    pub judge_reading: Option<(String, bool)>,
    /// Why the report has no rates at all, when it has none.
    #[serde(default)]
    pub no_verdict: Option<String>,
    /// Calls of the evaluation itself: made, answered from the cache.
    pub calls: i64,
    pub cached_calls: i64,
}

/// One question of a pair in the drill-down list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrillQuestionView {
    pub id: i64,
    pub question: String,
    pub level: Option<String>,
    /// Over the trials: A wins, ties, B wins; "discarded" etc. when not judged.
    pub a_wins: usize,
    pub ties: usize,
    pub b_wins: usize,
    pub alignment: String,
    pub legacy: Option<String>,
}

/// One judgment in the drill-down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgmentView {
    pub trial: u32,
    pub repeat: u32,
    /// "A first" or "B first".
    pub order: String,
    pub a: [u8; 4],
    pub b: [u8; 4],
    pub reasoning: String,
    /// The job item whose call log holds it.
    pub item: String,
}

/// One question of a pair, everything judged about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrillView {
    pub question_id: i64,
    pub question: String,
    pub level: Option<String>,
    pub a_name: String,
    pub b_name: String,
    /// As generated, and as judged (after alignment).
    pub a_raw: String,
    pub b_raw: String,
    pub a_judged: String,
    pub b_judged: String,
    pub alignment: String,
    pub judgments: Vec<JudgmentView>,
    /// Per trial: (trial, A's total, B's total, outcome).
    pub verdicts: Vec<(u32, f64, f64, String)>,
    /// The legacy verdict: overall, and per aspect.
    pub legacy: Option<(String, Vec<(String, String)>)>,
    pub job_id: Option<i64>,
}

/// An evaluation report's CSV tables.
pub const EVAL_TABLES: [&str; 6] = ["pairs", "trials", "aspects", "levels", "judgments", "alignment"];
/// The unbiased protocol's aspects (as `engine::judge::ASPECTS`, for the browser).
pub const ASPECT_NAMES: [&str; 4] = ["Comprehensiveness", "Relevance", "Empowerment", "Directness"];

/// A study as the owner sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyView {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub intro: String,
    pub corpus_summary: String,
    pub dimensions: Vec<DimensionView>,
    pub items: i64,
    pub attention_checks: i64,
    pub target_raters: Option<i64>,
    pub raters: i64,
    pub completed: i64,
    pub is_open: bool,
    /// The links: (id, kind "open" | "rater", label, revoked).
    pub links: Vec<(i64, String, Option<String>, bool)>,
    pub created_at: String,
    /// "questions" (Likert ratings of questions) or "answers" (answer validation).
    pub kind: String,
    /// An answer-validation study's answers: "reference", or "answers:ID".
    pub answer_source: Option<String>,
}

/// A rated dimension, its definition and its points' labels (the first
/// scores `min`); a `choice` dimension offers each item's own choices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DimensionView {
    pub name: String,
    pub definition: String,
    pub labels: Vec<String>,
    pub min: u8,
    pub choice: bool,
}

/// One item as a rater sees it: the question, and in an answer-validation
/// study the answer, the source passage and the categories to choose from
/// `(path, definition)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RaterItem {
    pub id: i64,
    pub text: String,
    pub answer: Option<String>,
    pub context: Option<String>,
    pub choices: Vec<(String, String)>,
}

/// What a rater's browser needs: the study (never its sources), the
/// items in this rater's order, the ratings given so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaterSession {
    pub study: String,
    pub intro: String,
    pub corpus_summary: String,
    pub dimensions: Vec<DimensionView>,
    pub is_open: bool,
    /// The rater's own token (to keep in the browser for an open link).
    pub rater: String,
    /// The items in this rater's order.
    pub items: Vec<RaterItem>,
    /// Item id → its scores per dimension so far (`None`: not yet).
    pub ratings: Vec<(i64, Vec<Option<u8>>)>,
    pub finished: bool,
}

/// One group's mean, 95% interval and distribution for the results page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudySummaryRow {
    pub dimension: String,
    pub group: String,
    pub n: usize,
    pub mean: f64,
    pub ci: Option<(f64, f64)>,
    /// Ratings per point of the scale, lowest first.
    pub distribution: Vec<usize>,
}

/// Category agreement with the generator's label (seed 004 §2.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryRow {
    pub group: String,
    pub picks: usize,
    pub exact: f64,
    pub parent: f64,
    pub exact_chance: f64,
    pub parent_chance: f64,
}

/// The LLM rater's agreement with the humans on one dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmAgreementRow {
    pub dimension: String,
    pub items: usize,
    pub spearman: Option<f64>,
    pub kappa: Option<f64>,
    pub humans: usize,
    pub exact: f64,
}

/// The latest LLM-rater job of a study and its agreement with the humans.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRatingView {
    pub job_id: i64,
    pub status: String,
    pub done: i64,
    pub total: i64,
    /// Who rated: "offline (no LLM)" or "openai · MODEL".
    pub rater: String,
    pub rows: Vec<LlmAgreementRow>,
}

/// A study's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyResultsView {
    pub study: StudyView,
    pub raters: usize,
    /// Raters who rated at least one item through an open link.
    pub open_link_raters: i64,
    pub completed: usize,
    pub failed_attention: usize,
    pub by_source: Vec<StudySummaryRow>,
    pub by_level: Vec<StudySummaryRow>,
    /// Per dimension: Fleiss' κ (and over how many items), Krippendorff's α.
    pub agreement: Vec<(String, Option<f64>, usize, Option<f64>)>,
    pub chart_svg: String,
    /// An answer-validation study's category picks: raters' agreement
    /// (Fleiss' κ, items, Krippendorff's α nominal) and with the generator.
    pub category_agreement: Option<(Option<f64>, usize, Option<f64>)>,
    pub category: Vec<CategoryRow>,
    pub llm: Option<LlmRatingView>,
}

/// A question set shared read-only: the set, its questions with their
/// provenance fields, and its diagnostics (entities the questions mention,
/// as the graph's names matched; relevance of retrieved context, when a
/// relevance job scored it) with their charts inline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedQuestions {
    pub set: QuestionSetView,
    pub questions: Vec<QuestionView>,
    pub entities: Option<(EntityStats, String)>,
    pub relevance: Option<(RelevanceStats, String)>,
}

/// A report shared read-only by link: one of these. (A shared experiment
/// and a shared graph are read through their own server functions, so the
/// browser's code for those pages is not loaded with these.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedView {
    pub evaluation: Option<EvaluationReportView>,
    pub study: Option<StudyResultsView>,
    pub questions: Option<SharedQuestions>,
    pub metrics: Option<MetricsView>,
}

/// An account as the owner's Users page shows it: role `owner` or
/// `member`, and a member's rights `(project id, "read" | "edit")`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserView {
    pub id: i64,
    pub name: String,
    pub role: String,
    pub created_at: String,
    pub projects: Vec<(i64, String)>,
}

/// Means of a group of questions on the reference-based metrics (retrieval
/// `None` when the method recorded no chunks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsMeansView {
    pub group: String,
    pub n: usize,
    pub map: Option<f64>,
    pub ndcg: Option<f64>,
    pub recall: Option<f64>,
    pub cs: f64,
    pub rouge1: f64,
    pub bleu: f64,
}

/// One dimension at one level of the granularity analysis (seed 004 Table 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GranularityRow {
    pub dimension: String,
    pub categories: usize,
    pub questions: usize,
    pub power: f64,
    pub change: Option<f64>,
    pub nmi: f64,
    /// 95% bootstrap intervals and noise floors (labels permuted; see
    /// `engine::metrics::granularity::LevelStats`).
    pub power_ci: Option<(f64, f64)>,
    pub power_floor: Option<f64>,
    pub nmi_ci: Option<(f64, f64)>,
    pub nmi_floor: Option<f64>,
    /// Too few questions per category to compare levels, said why.
    pub warning: Option<String>,
    /// The dimension's mean Coherence Ratio (on its first level's row).
    pub mean_rho: Option<f64>,
    /// The level with the highest discriminative power in its dimension.
    pub optimal: bool,
    /// The Coherence Ratio of each split into this level (a parent one
    /// level up and its children here): `(ρ, verdict)`.
    pub splits_in: Vec<(f64, String)>,
}

/// A split and its Coherence Ratio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitRow {
    pub dimension: String,
    pub parent: String,
    pub children: Vec<String>,
    pub sigma_sib: f64,
    pub delta_vert: f64,
    pub rho: f64,
    pub rho_ci: Option<(f64, f64)>,
    pub verdict: String,
}

/// An answer set's metrics as the Metrics page shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetMetricsView {
    pub answer_set_id: i64,
    pub name: String,
    pub method: String,
    pub overall: MetricsMeansView,
    pub corpus_bleu: f64,
    pub per_category: Vec<MetricsMeansView>,
    pub granularity: Vec<GranularityRow>,
    pub splits: Vec<SplitRow>,
    /// The LV × QC table (seed 004 Table 4), when the set has factorial questions.
    pub factorial: Option<FactorialView>,
    pub power_svg: String,
    /// One hierarchy drawing per dimension: `(dimension, SVG)`.
    pub trees: Vec<(String, String)>,
    /// The point-biserial correlation of ρ with human category agreement
    /// (seed 004 §4), when a validation study was drawn from the set:
    /// `(study, r_pb, p, n)`.
    #[serde(default)]
    pub rho_agreement: Option<(i64, f64, f64, usize)>,
}

/// A row of the LV × QC table: a cell (both levels) or a level pooled
/// over the other factor (one level); `gap` is its CS minus the first
/// level's (simple → complex within an LV level; between pooled levels).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactorialRow {
    pub lv: Option<String>,
    pub qc: Option<String>,
    pub n: usize,
    pub map: Option<f64>,
    pub cs: f64,
    pub gap: Option<f64>,
}

/// Seed 004 Table 4: the cells, the main effects (each level pooled), and
/// each factor's effect Δ (largest minus smallest pooled CS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactorialView {
    pub cells: Vec<FactorialRow>,
    pub pooled: Vec<FactorialRow>,
    pub lv_effect: Option<f64>,
    pub qc_effect: Option<f64>,
}

/// A metrics run as its list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsRunView {
    pub id: i64,
    pub project_id: i64,
    pub question_set_id: i64,
    pub question_set: String,
    /// `(id, "name (method)")` of each answer set scored.
    pub answer_sets: Vec<(i64, String)>,
    pub k: usize,
    pub bins: usize,
    /// `document`, `passage` or `chunk` (see `engine::metrics::RelevanceUnit`).
    pub relevance_unit: String,
    pub job: Option<JobView>,
    pub finished: bool,
    pub created_at: String,
}

/// A metrics run and, once finished, its report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsRunPage {
    pub run: MetricsRunView,
    pub view: Option<MetricsView>,
}

/// A metrics run: the question set, its settings, each answer set's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsView {
    pub run_id: i64,
    pub question_set_id: i64,
    pub k: usize,
    pub bins: usize,
    pub relevance_unit: String,
    pub embedding_model: String,
    pub sets: Vec<SetMetricsView>,
}

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
    /// `unbiased`, `legacy` or `both`.
    pub protocol: String,
    pub trials: u32,
    pub repeats: u32,
    pub align: bool,
    pub exchange: bool,
    /// `llm` (the experiment's LLM), `offline` (the rubric) or `simulated`.
    pub judge: String,
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
}

/// A stage's expected work, before the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageEstimateView {
    pub kind: String,
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
    pub kind: String,
    pub label: String,
    /// waiting, running, done, reused, failed.
    pub state: String,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentView {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    /// running, done, failed, interrupted.
    pub status: String,
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

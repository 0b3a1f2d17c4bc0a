//! Human studies: setup, the rater's session, results.

use serde::{Deserialize, Serialize};

use super::JobStatus;

/// A study as the owner sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyView {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub intro: String,
    pub corpus_summary: String,
    pub dimensions: Vec<Dimension>,
    pub items: i64,
    pub attention_checks: i64,
    pub target_raters: Option<i64>,
    pub raters: i64,
    pub completed: i64,
    pub is_open: bool,
    pub links: Vec<LinkView>,
    pub created_at: String,
    pub kind: types::StudyKind,
    /// An answer-validation study's answers: "reference", or "answers:ID".
    pub answer_source: Option<String>,
}

/// A study's link (its token is shown once, when made, and never kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkView {
    pub id: i64,
    pub kind: types::LinkKind,
    pub label: Option<String>,
    /// Withdrawn: it opens nothing any more.
    pub revoked: bool,
}

pub use types::study::{CategoryAgreement, Dimension, FigureRow, LlmAgreement};

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
    pub dimensions: Vec<Dimension>,
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
    /// Ratings, and the raters they came from.
    pub n: usize,
    pub raters: usize,
    pub mean: f64,
    /// The 95% interval (from 3 raters on), clipped to the scale, and
    /// whether it was.
    pub ci: Option<(f64, f64)>,
    pub clipped: bool,
    /// Ratings per point of the scale, lowest first.
    pub distribution: Vec<usize>,
}

/// Raters a group needs before its interval is shown (the engine's
/// `study::MIN_RATERS_FOR_INTERVAL`, which `ssr::studies` checks is the same).
pub const MIN_RATERS_FOR_INTERVAL: usize = 3;

/// The latest LLM-rater job of a study and its agreement with the humans.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRatingView {
    pub job_id: i64,
    pub status: JobStatus,
    pub done: i64,
    pub total: i64,
    /// Who rated: "offline (no LLM)" or "openai · MODEL".
    pub rater: String,
    pub rows: Vec<LlmAgreement>,
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
    pub category: Vec<CategoryAgreement>,
    pub llm: Option<LlmRatingView>,
    /// An imported study's figures as its authors' scripts compute them.
    #[serde(default)]
    pub imported: Option<JudgingImportView>,
}

/// The HieraRAG authors' human-judging figures of an imported study: each
/// as their scripts compute it (Assay's code), the value their own output
/// files hold (where imported) and the standard reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgingImportView {
    pub workbooks: Vec<String>,
    pub rows_per_workbook: Vec<usize>,
    /// Questions both rated (κ's), unique questions (the shares'), picks
    /// (category agreement's).
    pub shared: usize,
    pub questions: usize,
    pub picks: usize,
    pub rows: Vec<FigureRow>,
}

//! What share links open.

use serde::{Deserialize, Serialize};

use super::{
    EntityStats, EvaluationReportView, MetricsView, QuestionSetView, QuestionsPage, RelevanceStats, StudyResultsView,
};

/// A question set shared read-only: the set, its questions with their
/// provenance fields, and its diagnostics (entities the questions mention,
/// as the graph's names matched; relevance of retrieved context, when a
/// relevance job scored it) with their charts inline.
/// One of a page's share links, as its owner's panel lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareLink {
    pub id: i64,
    pub created: String,
    /// Withdrawn: it answers 404.
    pub revoked: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedQuestions {
    pub set: QuestionSetView,
    /// The first page of its questions (every question in the one-file
    /// report); the page reads the others with `get_shared_questions`.
    pub questions: QuestionsPage,
    /// With their charts: inline in the one-file report, linked on the page.
    pub entities: Option<(EntityStats, super::Figure)>,
    pub relevance: Option<(RelevanceStats, super::Figure)>,
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

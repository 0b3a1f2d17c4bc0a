//! Which stage runs each kind of job: the one place that knows them all
//! (the runner, [`crate::ssr::jobs`], knows none). Handed to
//! [`crate::ssr::jobs::run`] and [`crate::ssr::jobs::JobManager::new`].

use crate::model::JobKind;
use crate::ssr::jobs::Stage;

/// The stage that runs jobs of `kind`.
pub fn stage(kind: JobKind) -> &'static dyn Stage {
    match kind {
        JobKind::Summaries => &crate::ssr::graph::SummariesStage,
        JobKind::Graph => &crate::ssr::graph::GraphStage,
        JobKind::Questions => &crate::ssr::questions::run::QuestionsStage,
        JobKind::Relevance => &crate::ssr::questions::run::RelevanceStage,
        JobKind::Mentions => &crate::ssr::questions::run::MentionsStage,
        JobKind::Answers => &crate::ssr::answers::AnswersStage,
        JobKind::Evaluation => &crate::ssr::evaluations::EvaluationStage,
        JobKind::StudyRating => &crate::ssr::studies::StudyRatingStage,
        JobKind::Metrics => &crate::ssr::metrics::MetricsStage,
    }
}

//! What judging reports: a run-size plan's cells, the methods' ranking, a jury's agreement with people.

use serde::{Deserialize, Serialize};

/// What one size of run can decide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub questions: usize,
    pub trials: usize,
    /// Half-width of the headline's 95% interval, in the pilot's world.
    pub half_width: f64,
    /// Power to detect the plan's smallest difference (`None` without one).
    pub power: Option<f64>,
}

/// One method's place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub set_id: i64,
    pub name: String,
    /// Log-strength (natural log, mean 0 over the methods).
    pub theta: f64,
    /// 1000 + 400 θ / ln 10, and its 95% bootstrap interval.
    pub score: f64,
    pub ci: (f64, f64),
    /// By score (1 = best), and the arenas' upper-bound rank.
    pub rank: usize,
    pub rank_ub: usize,
    /// Verdicts won (a tie counting ½) and taken part in.
    pub wins: f64,
    pub battles: usize,
}

/// The ranking of an evaluation's methods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// Best first.
    pub rows: Vec<RankRow>,
    pub battles: usize,
    pub questions: usize,
    /// Resamples that gave finite scores (of [`RESAMPLES`]).
    pub resamples: usize,
    /// Why there are no scores, when there are none.
    pub note: Option<String>,
}

/// One judge's (or the jury's) agreement with the people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeopleRow {
    pub label: String,
    /// Questions both answers of which the people rated and the judge judged.
    pub n: usize,
    /// Cohen's κ (unweighted) on the winners (A, tie, B).
    pub cohen_kappa: Option<f64>,
    /// Spearman's ρ on the differences, and its two-sided p-value.
    pub spearman: Option<(f64, f64)>,
}

/// Agreement with an answer-validation study's raters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct People {
    /// The studies the ratings came from.
    pub studies: Vec<i64>,
    /// The rated dimension compared (the mean over raters per answer).
    pub dimension: String,
    pub rows: Vec<PeopleRow>,
}

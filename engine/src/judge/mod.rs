//! Judging answers in pairs (seed 000 §IV). This first part holds the
//! verdict rules both protocols share; the prompts, the judges (LLM, offline
//! rubric, simulated) and length alignment build on it.
//!
//! **Unbiased** (seed 000 §IV-B, §IV-C): each answer gets a 0–5 score per
//! aspect — Comprehensiveness, Relevance, Empowerment, Directness — in every
//! judgment; a judgment is one order (A first, or B first) and one repeat.
//! An answer's aspect score is the mean over both orders and all repeats,
//! its total the sum over aspects; the higher total wins and **equal totals
//! are a tie**. Over the questions of one trial this gives win, tie and loss
//! rates.
//!
//! **Legacy** (LightRAG, GraphRAG): one order, A first; the judge names a
//! winner per aspect (Comprehensiveness, Diversity, Empowerment) and an
//! overall winner; no ties, one trial.

pub mod align;
pub mod eval;
pub mod jury;
pub mod legacy;
pub mod length_control;
pub mod paper;
pub mod plan;
pub mod plots;
pub mod protocol;
pub mod ranking;
pub mod scoring;
pub mod sequential;
pub mod simulated;

use serde::{Deserialize, Serialize};

/// The unbiased protocol's aspects, in score order.
pub const ASPECTS: [&str; 4] = ["Comprehensiveness", "Relevance", "Empowerment", "Directness"];
/// The legacy protocol's aspects.
pub const LEGACY_ASPECTS: [&str; 3] = ["Comprehensiveness", "Diversity", "Empowerment"];
/// The GraphRAG paper's four (seed 000 §II names them): LightRAG's and Directness.
pub const LEGACY_ASPECTS_GRAPHRAG: [&str; 4] = ["Comprehensiveness", "Diversity", "Empowerment", "Directness"];

/// Which answer was shown first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Order {
    AFirst,
    BFirst,
}

/// One judgment of a pair: both answers' 0–5 scores per aspect (always
/// stored as A's and B's, whatever the order they were shown in).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgment {
    pub order: Order,
    pub repeat: u32,
    pub a: [u8; 4],
    pub b: [u8; 4],
    /// Which of a jury's judges gave it ([`jury`]): 0, the evaluation's
    /// first judge (the only one without a jury; not stored for it).
    #[serde(default, skip_serializing_if = "is_first_judge")]
    pub judge: u32,
}

fn is_first_judge(judge: &u32) -> bool {
    *judge == 0
}

/// Who won a question (or an aspect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    A,
    B,
    Tie,
}

/// One question's verdict from its judgments in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Mean score per aspect over every order and repeat.
    pub a_aspects: [f64; 4],
    pub b_aspects: [f64; 4],
    pub a_total: f64,
    pub b_total: f64,
    pub outcome: Outcome,
    /// Per aspect, who had the higher mean (ties allowed).
    pub aspect_outcomes: [Outcome; 4],
}

fn compare(a: f64, b: f64) -> Outcome {
    // Means over the same number of judgments of whole numbers: compare the
    // sums exactly, not floats that differ by rounding.
    if (a - b).abs() < 1e-9 {
        Outcome::Tie
    } else if a > b {
        Outcome::A
    } else {
        Outcome::B
    }
}

/// The unbiased verdict of one question from its judgments (both orders,
/// every repeat). `None` without judgments.
pub fn verdict(judgments: &[Judgment]) -> Option<Verdict> {
    if judgments.is_empty() {
        return None;
    }
    let n = judgments.len() as f64;
    let mut a_aspects = [0.0; 4];
    let mut b_aspects = [0.0; 4];
    for j in judgments {
        for k in 0..4 {
            a_aspects[k] += j.a[k] as f64 / n;
            b_aspects[k] += j.b[k] as f64 / n;
        }
    }
    let (a_total, b_total): (f64, f64) = (a_aspects.iter().sum(), b_aspects.iter().sum());
    let aspect_outcomes = std::array::from_fn(|k| compare(a_aspects[k], b_aspects[k]));
    Some(Verdict { a_aspects, b_aspects, a_total, b_total, outcome: compare(a_total, b_total), aspect_outcomes })
}

/// Win, tie and loss rates of A over a trial's outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    pub a_win: f64,
    pub tie: f64,
    pub b_win: f64,
}

impl Rates {
    pub fn of(outcomes: &[Outcome]) -> Option<Rates> {
        if outcomes.is_empty() {
            return None;
        }
        let n = outcomes.len() as f64;
        let count = |o: Outcome| outcomes.iter().filter(|x| **x == o).count() as f64 / n;
        Some(Rates { a_win: count(Outcome::A), tie: count(Outcome::Tie), b_win: count(Outcome::B) })
    }

    /// Seed 000's relative win rate of A over B.
    pub fn relative(&self) -> f64 {
        crate::stats::relative_win_rate(self.a_win, self.b_win, self.tie).unwrap_or(0.0)
    }
}

/// Per question, its verdict in each trial it was judged in.
pub type Verdicts = Vec<std::collections::BTreeMap<u32, Outcome>>;

/// The median trial of `verdicts` restricted to the questions `pick`
/// yields (with repetition): (trial, its rates). Trials ordered by
/// relative win rate, then by number; the lower middle for an even count.
/// `trials`: every trial judged, ascending.
pub fn median_trial(verdicts: &Verdicts, trials: &[u32], pick: impl Iterator<Item = usize>) -> Option<(u32, Rates)> {
    let mut counts = vec![[0u32; 3]; trials.len()];
    for q in pick {
        for (t, o) in &verdicts[q] {
            let k = trials.partition_point(|x| x < t);
            counts[k][match o {
                Outcome::A => 0,
                Outcome::Tie => 1,
                Outcome::B => 2,
            }] += 1;
        }
    }
    let mut judged: Vec<(f64, u32, Rates)> = counts
        .iter()
        .zip(trials)
        .filter(|(c, _)| c.iter().sum::<u32>() > 0)
        .map(|(c, t)| {
            let n = c.iter().sum::<u32>() as f64;
            let r = Rates { a_win: c[0] as f64 / n, tie: c[1] as f64 / n, b_win: c[2] as f64 / n };
            (r.relative(), *t, r)
        })
        .collect();
    if judged.is_empty() {
        return None;
    }
    judged.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (_, t, r) = judged[(judged.len() - 1) / 2];
    Some((t, r))
}

/// The trials `verdicts` judged, ascending.
pub fn trials_of(verdicts: &Verdicts) -> Vec<u32> {
    verdicts.iter().flat_map(|q| q.keys().copied()).collect::<std::collections::BTreeSet<_>>().into_iter().collect()
}

/// A legacy judgment: a winner per legacy aspect and overall, A shown first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegacyJudgment {
    /// In the order of its variant's aspects ([`legacy::Aspects::names`]).
    pub aspects: Vec<Outcome>,
    pub overall: Outcome,
    /// Which aspects were asked for (judgments stored before the choice
    /// existed: LightRAG's three).
    #[serde(default)]
    pub variant: legacy::LegacyAspects,
}

impl LegacyJudgment {
    /// The legacy protocol allows no ties: a judge that answers "tie" (or
    /// nothing usable) is read as choosing the answer shown first, as a
    /// forced choice between "Answer 1" and "Answer 2" does in practice.
    pub fn forced(variant: legacy::LegacyAspects, aspects: Vec<Outcome>, overall: Outcome) -> LegacyJudgment {
        let force = |o: Outcome| if o == Outcome::Tie { Outcome::A } else { o };
        LegacyJudgment { aspects: aspects.into_iter().map(force).collect(), overall: force(overall), variant }
    }

    /// Each aspect's name with its winner.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, Outcome)> + '_ {
        use legacy::Aspects;
        self.variant.names().iter().copied().zip(self.aspects.iter().copied())
    }
}

/// Registers the judge's offline tasks: aspect scores, the legacy verdict
/// and the length-alignment append.
pub fn register_offline(p: &mut crate::llm::offline::OfflineProvider) {
    p.register(scoring::PURPOSE, scoring::offline);
    p.register(legacy::PURPOSE, legacy::offline);
    p.register(align::APPEND_PURPOSE, align::offline_append);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(order: Order, repeat: u32, a: [u8; 4], b: [u8; 4]) -> Judgment {
        Judgment { order, repeat, a, b, judge: 0 }
    }

    #[test]
    fn scores_average_over_orders_and_repeats_and_equal_totals_tie() {
        // A is favoured when first and B when first: the biases cancel.
        let js = [
            j(Order::AFirst, 0, [5, 4, 4, 3], [3, 4, 3, 3]),
            j(Order::BFirst, 0, [3, 4, 3, 3], [5, 4, 4, 3]),
            j(Order::AFirst, 1, [4, 4, 4, 3], [4, 4, 3, 3]),
            j(Order::BFirst, 1, [4, 4, 3, 3], [4, 4, 4, 3]),
        ];
        let v = verdict(&js).unwrap();
        assert_eq!(v.a_aspects, [4.0, 4.0, 3.5, 3.0]);
        assert_eq!(v.b_aspects, [4.0, 4.0, 3.5, 3.0]);
        assert_eq!((v.a_total, v.b_total, v.outcome), (14.5, 14.5, Outcome::Tie));
        assert_eq!(v.aspect_outcomes, [Outcome::Tie; 4]);
        // One point more for B in one judgment decides it, and its aspect.
        let mut js2 = js.to_vec();
        js2[3].b[3] = 4;
        let v = verdict(&js2).unwrap();
        assert_eq!(v.outcome, Outcome::B);
        assert_eq!(v.aspect_outcomes, [Outcome::Tie, Outcome::Tie, Outcome::Tie, Outcome::B]);
        assert!((v.b_total - 14.75).abs() < 1e-12);
        assert_eq!(verdict(&[]), None);
    }

    #[test]
    fn rates_and_the_relative_win_rate_over_a_trial() {
        let outcomes = [Outcome::A, Outcome::A, Outcome::A, Outcome::B, Outcome::Tie];
        let r = Rates::of(&outcomes).unwrap();
        assert_eq!((r.a_win, r.tie, r.b_win), (0.6, 0.2, 0.2));
        assert!((r.relative() - 0.4).abs() < 1e-12);
        assert_eq!(Rates::of(&[]), None);
    }

    #[test]
    fn the_legacy_protocol_forces_a_winner_toward_the_first_answer() {
        let l = LegacyJudgment::forced(
            legacy::LegacyAspects::Lightrag,
            vec![Outcome::B, Outcome::Tie, Outcome::A],
            Outcome::Tie,
        );
        assert_eq!(l.aspects, [Outcome::B, Outcome::A, Outcome::A]);
        assert_eq!(l.overall, Outcome::A);
    }
}

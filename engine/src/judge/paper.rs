//! Seed 000's results figures as the paper lays them out (§VI-C): Fig. 14,
//! each pair's win, tie and loss rates over the trials as boxes (each
//! rate's own median, quartiles and whiskers); Fig. 15, per aspect; Fig. 16,
//! the relative-win-rate matrix (row minus column); Fig. 17, per question
//! level with every pair in one panel and their average. The numbers are
//! the report's ([`super::eval::Report`]); this module only regroups them —
//! Fig. 17 by level rather than by pair, with the unweighted mean over the
//! pairs that the paper's "average win rate … across the four baseline
//! model pairs" takes.

use serde::{Deserialize, Serialize};

use super::eval::{Breakdown, Report};
use super::Rates;

/// One pair's bar in a level's panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelPair {
    pub a_name: String,
    pub b_name: String,
    /// Pooled over the trials and the level's questions.
    pub breakdown: Breakdown,
}

/// One panel of Fig. 17: a question level, every pair judged on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelPanel {
    pub level: String,
    pub pairs: Vec<LevelPair>,
    /// The unweighted mean over the pairs of each rate (what the paper
    /// averages); its relative win rate is A wins − B wins of the mean.
    pub mean: Rates,
}

/// The paper's order of levels: node, edge, subgraph, then any other in
/// name order (a set imported with its own levels), "(none)" last.
fn level_rank(level: &str) -> (u8, String) {
    let rank = match level {
        "node" => 0,
        "edge" => 1,
        "subgraph" => 2,
        "(none)" => 4,
        _ => 3,
    };
    (rank, level.to_string())
}

/// Fig. 17's panels: per question level, the pairs of the unbiased
/// protocol that have questions of it. Empty when the unbiased protocol
/// was not run.
pub fn level_panels(report: &Report) -> Vec<LevelPanel> {
    let mut levels: Vec<String> = report
        .pairs
        .iter()
        .filter_map(|p| p.unbiased.as_ref())
        .flat_map(|u| u.levels.iter().map(|b| b.label.clone()))
        .collect();
    levels.sort_by_key(|l| level_rank(l));
    levels.dedup();
    levels
        .into_iter()
        .map(|level| {
            let pairs: Vec<LevelPair> = report
                .pairs
                .iter()
                .filter_map(|p| {
                    let b = p.unbiased.as_ref()?.levels.iter().find(|b| b.label == level)?;
                    Some(LevelPair { a_name: p.a_name.clone(), b_name: p.b_name.clone(), breakdown: b.clone() })
                })
                .collect();
            let mean = mean_rates(pairs.iter().map(|p| &p.breakdown.rates));
            LevelPanel { level, pairs, mean }
        })
        .collect()
}

/// The unweighted mean of rates (each pair counts once, whatever its
/// number of questions); all zero for none.
pub fn mean_rates<'a>(rates: impl Iterator<Item = &'a Rates>) -> Rates {
    let (mut sum, mut n) = (Rates { a_win: 0.0, tie: 0.0, b_win: 0.0 }, 0.0);
    for r in rates {
        sum.a_win += r.a_win;
        sum.tie += r.tie;
        sum.b_win += r.b_win;
        n += 1.0;
    }
    if n > 0.0 {
        sum.a_win /= n;
        sum.tie /= n;
        sum.b_win /= n;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::eval::{AlignmentSummary, PairReport, UnbiasedSummary};
    use crate::stats::BoxStats;

    fn rates(a_win: f64, tie: f64, b_win: f64) -> Rates {
        Rates { a_win, tie, b_win }
    }

    fn level(label: &str, n: usize, r: Rates) -> Breakdown {
        Breakdown { label: label.into(), n, relative: r.relative(), rates: r }
    }

    fn pair(a: &str, b: &str, levels: Vec<Breakdown>) -> PairReport {
        let flat = BoxStats::of(&[0.5]).unwrap();
        PairReport {
            a: 1,
            b: 2,
            a_name: a.into(),
            b_name: b.into(),
            questions: 10,
            alignment: AlignmentSummary::default(),
            unbiased: Some(UnbiasedSummary {
                trials: vec![],
                a_win: flat.clone(),
                tie: flat.clone(),
                b_win: flat.clone(),
                relative: flat,
                median_trial: 0,
                headline: rates(0.5, 0.0, 0.5),
                headline_relative: 0.0,
                a_win_ci: (0.0, 1.0),
                tie_ci: (0.0, 1.0),
                b_win_ci: (0.0, 1.0),
                relative_ci: (-1.0, 1.0),
                mean_difference: 0.0,
                wilcoxon: None,
                sign: None,
                aspects: vec![],
                levels,
                trial_std: 0.0,
            }),
            legacy: None,
            length_control: None,
            sequential: None,
        }
    }

    #[test]
    fn panels_follow_the_papers_level_order_and_average_the_pairs_unweighted() {
        let report = Report {
            pairs: vec![
                pair(
                    "lightrag",
                    "naive",
                    vec![
                        level("edge", 10, rates(0.5, 0.2, 0.3)),
                        level("node", 30, rates(0.6, 0.2, 0.2)),
                        level("subgraph", 5, rates(0.2, 0.2, 0.6)),
                    ],
                ),
                pair(
                    "fgrag",
                    "naive",
                    vec![level("node", 2, rates(0.0, 0.0, 1.0)), level("special", 4, rates(1.0, 0.0, 0.0))],
                ),
            ],
            ..Report::default()
        };
        let panels = level_panels(&report);
        let names: Vec<&str> = panels.iter().map(|p| p.level.as_str()).collect();
        assert_eq!(names, ["node", "edge", "subgraph", "special"]);
        let node = &panels[0];
        assert_eq!(node.pairs.len(), 2);
        assert_eq!((node.pairs[0].a_name.as_str(), node.pairs[1].a_name.as_str()), ("lightrag", "fgrag"));
        // Unweighted: (0.6 + 0.0) / 2, not (0.6·30 + 0·2) / 32.
        assert!((node.mean.a_win - 0.3).abs() < 1e-12 && (node.mean.b_win - 0.6).abs() < 1e-12);
        assert!((node.mean.tie - 0.1).abs() < 1e-12);
        assert_eq!(panels[1].pairs.len(), 1);
        assert_eq!(panels[1].mean, rates(0.5, 0.2, 0.3));
        assert!(level_panels(&Report::default()).is_empty());
    }
}

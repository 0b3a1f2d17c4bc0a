//! Sequential trials: judge a pair's questions a few trials at a
//! time and stop the pair once its verdict is settled, instead of always
//! paying for all M trials.
//!
//! **The looks.** M trials are split into up to [`LOOKS`] looks of about
//! equal size (M = 25: after 5, 10, 15, 20 and 25 trials). At each look
//! every question of the pair has the same number of trials judged.
//!
//! **The statistic.** Per question, the mean over its trials so far of the
//! verdict's score (+1 A wins, 0 tie, −1 B wins): an unbiased estimate of
//! that question's P(A) − P(B). The pair's estimate θ̂ is their mean over
//! the questions — the relative win rate averaged over trials, the quantity
//! seed 000's per-trial relative win rates scatter around — with the normal
//! interval θ̂ ± z · s / √n, s the sample standard deviation of the
//! per-question means (the questions are the independent units; more
//! trials shrink only the judge's part of s).
//!
//! **Error control under repeated looks: α-spending by Bonferroni.** Each
//! of the K looks spends α/K: its interval is at level 1 − α/K, z =
//! Φ⁻¹(1 − α/(2K)). By the union bound, the chance that *any* look's
//! interval misses θ is at most α, whatever the correlation between looks
//! (Lan & DeMets, 1983, "Discrete sequential boundaries for clinical
//! trials", Biometrika 70(3) — the constant spending function α·k/K
//! spends exactly this; Bonferroni's bound makes it valid without the
//! independent-increments assumption that O'Brien–Fleming boundaries need,
//! which does not hold here: the questions' own spread does not shrink with
//! more trials). It is conservative; the tests check by simulation that the
//! false-verdict rate over 2,000 null experiments stays at or below α.
//!
//! **The verdict**, as the sanity check states it: the interval inside the
//! equivalence band ±[`super::eval::EVEN`] — *even*; entirely outside it —
//! *differs* (by more than the band, towards the side it lies on); across
//! its edge — *open*, judged on. A pair still open at M ends open. A false
//! verdict is "differs" for a pair that is truly even (|θ| inside the band)
//! or "even" for one that truly differs by the band or more: either needs
//! an interval that misses θ.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::{Judgment, Outcome};

/// At most this many looks per pair.
pub const LOOKS: u32 = 5;

/// The error rate spent over all looks.
pub const ALPHA: f64 = 0.05;

/// The trial counts at which a pair is looked at: M split into
/// min(M, [`LOOKS`]) looks of about equal size, the last at M.
pub fn schedule(m: u32) -> Vec<u32> {
    let k = m.clamp(1, LOOKS);
    (1..=k).map(|i| (m * i).div_ceil(k)).collect()
}

/// The critical value of one look's interval when `looks` looks share `alpha`.
pub fn z(alpha: f64, looks: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::new(0.0, 1.0).expect("standard normal").inverse_cdf(1.0 - alpha / (2.0 * looks.max(1) as f64))
}

pub use types::Standing;

/// One look at a pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// Trials judged per question so far.
    pub trials: u32,
    pub questions: usize,
    /// θ̂ and its interval at this look's level.
    pub estimate: f64,
    pub interval: (f64, f64),
    pub standing: Standing,
}

/// Looks at a pair after `trials` trials per question: `per_question`
/// holds each question's verdicts (the first `trials` of them are used;
/// questions with fewer are left out), `looks` the number of looks that
/// share `alpha`, `band` the equivalence band. `None` without two questions.
pub fn look(per_question: &[Vec<Outcome>], trials: u32, looks: usize, alpha: f64, band: f64) -> Option<Look> {
    let t = trials as usize;
    let means: Vec<f64> = per_question
        .iter()
        .filter(|q| q.len() >= t && t > 0)
        .map(|q| q[..t].iter().map(|o| score(*o)).sum::<f64>() / t as f64)
        .collect();
    look_at(&means, trials, looks, alpha, band)
}

/// A look from the questions' mean scores after `trials` trials.
fn look_at(means: &[f64], trials: u32, looks: usize, alpha: f64, band: f64) -> Option<Look> {
    let n = means.len();
    if n < 2 {
        return None;
    }
    let estimate = means.iter().sum::<f64>() / n as f64;
    let sd = crate::stats::sample_sd(means).unwrap_or(0.0);
    let half = z(alpha, looks) * sd / (n as f64).sqrt();
    let (lo, hi) = (estimate - half, estimate + half);
    Some(Look { trials, questions: n, estimate, interval: (lo, hi), standing: standing((lo, hi), band) })
}

/// Where an interval stands against the band ±`band`: inside it, entirely
/// outside it, or across its edge (the sanity check's verdict too).
pub fn standing((lo, hi): (f64, f64), band: f64) -> Standing {
    let eps = 1e-12;
    if lo >= -band - eps && hi <= band + eps {
        Standing::Even
    } else if hi < -band - eps || lo > band + eps {
        Standing::Differs
    } else {
        Standing::Open
    }
}

/// One verdict drawn from a question's shares (A, tie, B) with `u` uniform in [0, 1).
pub fn draw(shares: &[f64; 3], u: f64) -> Outcome {
    if u < shares[0] {
        Outcome::A
    } else if u < shares[0] + shares[1] {
        Outcome::Tie
    } else {
        Outcome::B
    }
}

/// A simulated world of 400 questions whose P(A) − P(B) scatter around
/// `theta` (tie shares 10–60%, each question's difference spread ±0.4 of
/// what its ties leave, re-centred so their mean is `theta`, clamped to
/// what is possible): the tests' and the bench's world.
pub fn world(theta: f64, seed: u64) -> Vec<[f64; 3]> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let raw: Vec<(f64, f64)> = (0..400)
        .map(|_| {
            let tie = 0.1 + 0.5 * rng.f64();
            (tie, (rng.f64() - 0.5) * 0.8 * (1.0 - tie))
        })
        .collect();
    let mean = raw.iter().map(|r| r.1).sum::<f64>() / raw.len() as f64;
    raw.iter()
        .map(|&(tie, d)| {
            let d = (d - mean + theta).clamp(-(1.0 - tie), 1.0 - tie);
            [(1.0 - tie + d) / 2.0, tie, (1.0 - tie - d) / 2.0]
        })
        .collect()
}

fn score(o: Outcome) -> f64 {
    match o {
        Outcome::A => 1.0,
        Outcome::Tie => 0.0,
        Outcome::B => -1.0,
    }
}

/// A pair's sequential course: each look taken, in order, up to the first
/// settled one (or M); `m` the trials a fixed run would judge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Course {
    pub m: u32,
    pub looks: Vec<Look>,
    /// Judging calls made for the looks taken, and what all M trials of
    /// the same questions would have made.
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub calls_fixed: u64,
}

impl Course {
    /// Trials judged per question when the pair stopped.
    pub fn trials(&self) -> u32 {
        self.looks.last().map_or(0, |l| l.trials)
    }
    /// The standing it stopped at.
    pub fn standing(&self) -> Standing {
        self.looks.last().map_or(Standing::Open, |l| l.standing)
    }
    /// Whether it stopped before M.
    pub fn stopped_early(&self) -> bool {
        self.trials() < self.m
    }
}

/// A pair's judgments, per question its trials' (trial → judgments), as
/// `eval::trial_maps` lists them.
pub type Trials<'a> = [&'a BTreeMap<u32, Vec<Judgment>>];

/// Each question's verdicts of trials `0..through`, in trial order (a
/// trial whose item failed has none, and leaves its question out of the
/// looks that need it).
pub fn outcomes(questions: &Trials<'_>, through: u32) -> Vec<Vec<Outcome>> {
    questions
        .iter()
        .filter(|q| !q.is_empty())
        .map(|q| q.range(..through).filter_map(|(_, js)| super::verdict(js)).map(|v| v.outcome).collect())
        .collect()
}

/// A pair's course as the evaluation job walks it: the looks of
/// [`schedule`]`(m)` in order, each once some question has its trials
/// judged, stopping at the first settled one. The job judges the next
/// look's trials only for a pair whose course is still open; the report
/// reads the same course back from the stored verdicts.
pub fn course(questions: &Trials<'_>, m: u32, band: f64) -> Course {
    let plan = schedule(m);
    let mut looks = Vec::new();
    for &t in &plan {
        let reached = questions.iter().any(|q| q.contains_key(&(t - 1)));
        if !reached {
            break;
        }
        let Some(l) = look(&outcomes(questions, t), t, plan.len(), ALPHA, band) else { break };
        let settled = l.standing != Standing::Open;
        looks.push(l);
        if settled {
            break;
        }
    }
    let through = looks.last().map_or(0, |l: &Look| l.trials);
    let judged = questions.iter().filter(|q| !q.is_empty());
    let per_trial = judged.clone().flat_map(|q| q.values()).map(|js| js.len() as u64).max().unwrap_or(0);
    Course {
        m,
        calls: judged.clone().flat_map(|q| q.range(..through)).map(|(_, js)| js.len() as u64).sum(),
        calls_fixed: judged.count() as u64 * u64::from(m) * per_trial,
        looks,
    }
}

/// Simulates `experiments` sequential runs of `questions` questions drawn
/// from `world` (per question: P(A wins), P(tie), P(B wins)) and returns,
/// per run, the standing it stopped at and the trials it judged — the
/// error-rate check of the tests and the bench. It looks as [`course`]
/// does, keeping running sums instead of re-reading the verdicts.
pub fn simulate(
    world: &[[f64; 3]],
    questions: usize,
    m: u32,
    band: f64,
    experiments: usize,
    seed: u64,
) -> Vec<(Standing, u32)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let plan = schedule(m);
    let mut sums = vec![0.0f64; questions];
    let mut means = vec![0.0f64; questions];
    (0..experiments)
        .map(|_| {
            let picked: Vec<&[f64; 3]> = (0..questions).map(|_| &world[rng.usize(..world.len())]).collect();
            sums.iter_mut().for_each(|s| *s = 0.0);
            let mut judged = 0u32;
            let mut last = (Standing::Open, 0);
            for &t in &plan {
                for (sum, s) in sums.iter_mut().zip(&picked) {
                    for _ in judged..t {
                        *sum += score(draw(s, rng.f64()));
                    }
                }
                judged = t;
                for (mean, sum) in means.iter_mut().zip(&sums) {
                    *mean = sum / t as f64;
                }
                let Some(l) = look_at(&means, t, plan.len(), ALPHA, band) else { break };
                last = (l.standing, t);
                if l.standing != Standing::Open {
                    break;
                }
            }
            last
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The equivalence band the evaluations use (`eval::EVEN`).
    const EVEN: f64 = 0.05;

    #[test]
    fn the_looks_split_m_evenly_and_end_at_m() {
        assert_eq!(schedule(25), vec![5, 10, 15, 20, 25]);
        assert_eq!(schedule(3), vec![1, 2, 3]);
        assert_eq!(schedule(12), vec![3, 5, 8, 10, 12]);
        assert_eq!(schedule(1), vec![1]);
        // Φ⁻¹(1 − 0.05/10) = 2.5758 (scipy.stats.norm.ppf(0.995)).
        assert!((z(0.05, 5) - 2.575_829_303_549).abs() < 1e-9);
        assert!((z(0.05, 1) - 1.959_963_984_540).abs() < 1e-9);
    }

    /// Over 2,000 simulated null experiments the false-verdict rate stays
    /// at or below α: a truly even pair (θ = 0) judged against a band of 0
    /// (the strictest null: any "differs" is false, and "even" is never
    /// possible) — the rate is above 0, so the check can fail; and a pair
    /// at the band's edge (θ = EVEN, not inside it), judged against the
    /// band: "even" is false.
    #[test]
    fn the_false_verdict_rate_stays_at_or_below_alpha_under_repeated_looks() {
        let null = world(0.0, 1);
        let mean = null.iter().map(|s| s[0] - s[2]).sum::<f64>() / null.len() as f64;
        assert!(mean.abs() < 1e-9, "{mean}");
        let runs = simulate(&null, 200, 25, 0.0, 2_000, 7);
        let false_differs = runs.iter().filter(|r| r.0 == Standing::Differs).count() as f64 / 2_000.0;
        assert!(false_differs > 0.0 && false_differs <= ALPHA, "false 'differs' rate {false_differs}");
        let edge = world(EVEN, 2);
        let runs = simulate(&edge, 1_000, 25, EVEN, 2_000, 8);
        let false_even = runs.iter().filter(|r| r.0 == Standing::Even).count() as f64 / 2_000.0;
        assert!(false_even <= ALPHA, "false 'even' rate {false_even}");
        // Each look spending the full α instead: five looks reject the exact
        // null more often than the spent schedule.
        let mut rng = fastrand::Rng::with_seed(11);
        let unspent = (0..500)
            .filter(|_| {
                let v: Vec<Vec<Outcome>> = (0..200)
                    .map(|_| {
                        let s = null[rng.usize(..null.len())];
                        (0..25).map(|_| draw(&s, rng.f64())).collect()
                    })
                    .collect();
                schedule(25).iter().any(|&t| look(&v, t, 1, ALPHA, 0.0).unwrap().standing == Standing::Differs)
            })
            .count() as f64
            / 500.0;
        assert!(unspent > false_differs, "unspent looks {unspent} vs spent {false_differs}");
    }

    /// A look by hand: per-question mean scores 0.25, −0.5, 1 → θ̂ = 0.25,
    /// s = 0.75, half-width z(0.05, 5) · 0.75 / √3.
    #[test]
    fn a_look_is_the_mean_of_question_means_with_a_spent_normal_interval() {
        use Outcome::{Tie, A, B};
        let v = vec![vec![A, A, B, Tie, B], vec![B, B, Tie, Tie], vec![A, A, A, A]];
        let l = look(&v, 4, 5, ALPHA, EVEN).unwrap();
        assert_eq!((l.trials, l.questions), (4, 3));
        assert!((l.estimate - 0.25).abs() < 1e-12);
        let half = 2.575_829_303_549 * 0.75 / 3f64.sqrt();
        assert!((l.interval.0 - (0.25 - half)).abs() < 1e-9 && (l.interval.1 - (0.25 + half)).abs() < 1e-9);
        assert_eq!(l.standing, Standing::Open);
        // A question without its 4th trial is left out of the look.
        let short = vec![vec![A, A, B, Tie], vec![B, B, Tie], vec![A, A, A, A]];
        assert_eq!(look(&short, 4, 5, ALPHA, EVEN).unwrap().questions, 2);
    }

    #[test]
    fn a_clear_difference_stops_at_the_first_look() {
        let clear = world(0.5, 4);
        let runs = simulate(&clear, 100, 25, EVEN, 200, 5);
        assert!(runs.iter().all(|r| r.0 == Standing::Differs && r.1 == 5), "{:?}", &runs[..5]);
        // A near-even pair with few questions cannot be settled: all 25.
        let runs = simulate(&world(0.0, 6), 30, 25, EVEN, 200, 7);
        let open = runs.iter().filter(|r| r.0 == Standing::Open && r.1 == 25).count();
        assert!(open >= 190, "{open} of 200 ran all 25 trials and stayed open");
    }

    fn pair(verdicts: &[Vec<Outcome>]) -> Vec<BTreeMap<u32, Vec<Judgment>>> {
        use crate::judge::Order;
        let judged = |o: Outcome| {
            let (a, b) = match o {
                Outcome::A => ([4, 4, 4, 4], [3, 3, 3, 3]),
                Outcome::Tie => ([3, 3, 3, 3], [3, 3, 3, 3]),
                Outcome::B => ([3, 3, 3, 3], [4, 4, 4, 4]),
            };
            vec![Judgment { order: Order::AFirst, repeat: 0, a, b, judge: 0 }]
        };
        verdicts.iter().map(|v| v.iter().enumerate().map(|(t, o)| (t as u32, judged(*o))).collect()).collect()
    }

    fn maps(p: &[BTreeMap<u32, Vec<Judgment>>]) -> Vec<&BTreeMap<u32, Vec<Judgment>>> {
        p.iter().collect()
    }

    #[test]
    fn a_course_looks_in_order_and_stops_at_the_first_settled_look() {
        use Outcome::{Tie, A, B};
        // Five trials judged: the first look (5 of 25) is taken.
        let mixed: Vec<Vec<Outcome>> = (0..40).map(|q| (0..5).map(|t| [A, B, Tie][(q + t) % 3]).collect()).collect();
        let c = course(&maps(&pair(&mixed)), 25, EVEN);
        assert_eq!((c.looks.len(), c.trials(), c.standing()), (1, 5, Standing::Open));
        assert!(c.stopped_early(), "open, and only 5 of 25 judged so far");
        // All A on every question: settled "differs" at the first look; the
        // trials judged past it (none should be) are not looked at.
        let clear = vec![vec![A; 10]; 3];
        let c = course(&maps(&pair(&clear)), 25, EVEN);
        assert_eq!((c.looks.len(), c.standing(), c.trials()), (1, Standing::Differs, 5));
        // One judgment per trial here: 3 questions × 5 trials made, of 3 × 25.
        assert_eq!((c.calls, c.calls_fixed), (15, 75));
        // Nothing judged: no look.
        assert!(course(&maps(&pair(&[vec![], vec![]])), 25, EVEN).looks.is_empty());
    }
}

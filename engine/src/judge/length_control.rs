//! The length-controlled win rate: AlpacaEval 2's correction of
//! a judge's preference for longer answers by a regression instead of by
//! regenerating answers (Dubois, Galambosi, Liang & Hashimoto, 2024,
//! "Length-Controlled AlpacaEval: A Simple Way to Debias Automatic
//! Evaluators", arXiv:2404.04475).
//!
//! Each judgment of the unbiased protocol (one order, one repeat, one trial)
//! is an observation: A's preference `y` (1 when A's total score is higher,
//! ½ on equal totals, 0 when lower). A logistic model predicts it from
//!
//! * the **length difference** as AlpacaEval 2 enters it: tanh(Δ / sd(Δ)),
//!   Δ = A's words − B's words as judged, sd over the pair's judgments;
//! * the **position**: +1 when A was shown first, −1 when B was (Assay's
//!   addition: AlpacaEval randomises the order and has no term for it);
//! * the **pair**: a constant, the effect of interest.
//!
//! The length-controlled win rate is the model's prediction with the
//! length difference at 0 and the position at 0 (the mean of the two
//! orders on the logit scale): σ(w_pair) — A's chance of being preferred
//! over B at equal length, ties counted half, as AlpacaEval's win rate; its
//! relative win rate (seed 000's, A wins − B wins) is 2σ(w_pair) − 1.
//!
//! Two fits, as everywhere in Assay a metric both as its paper defines it
//! and as its authors' code computes it:
//!
//! * **the paper's**: the model fitted by maximum likelihood (the paper's
//!   GLM, §3, with no instruction-difficulty term — Assay has no pool of
//!   other models' judgments of the same questions to estimate it from);
//!   its 95% interval resamples questions (a question's judgments share
//!   its answers, so they are not independent);
//! * **AlpacaEval's code** (`alpaca_eval.metrics.glm_winrate`,
//!   `fit_LogisticRegressionCV`, the `length_controlled_minimal` formula):
//!   the same observations duplicated once per class with the preference
//!   as sample weight, an **L1-penalised** logistic regression without a
//!   separate intercept (liblinear), its C chosen from 10 values
//!   (10⁻⁴ … 10⁴) by 5-fold group cross-validation (each judgment a group,
//!   folds as scikit-learn's `GroupKFold` makes them) on the log loss, then
//!   refitted on everything. The penalty shrinks the pair's coefficient
//!   towards 0 — towards a 50% win rate — when the data are few.
//!
//! Both are solved exactly here (Newton's method; coordinate descent with
//! exact one-dimensional steps for the L1 problem), and the observations
//! are first pooled by their features (length difference, position; and
//! cross-validation fold): the log loss of fractional labels is linear in
//! the label, so a pool's mean preference, weighted by its size, gives the
//! same loss.

use serde::{Deserialize, Serialize};

/// One judgment as the regression sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// The question it judged (the interval resamples questions).
    pub question: i64,
    /// A's preference: 1, ½ (equal totals) or 0.
    pub preference: f64,
    /// A's words − B's words, as judged.
    pub delta_words: f64,
    /// Whether A was shown first.
    pub a_first: bool,
}

/// The C values AlpacaEval's cross-validation chooses from: scikit-learn's
/// `LogisticRegressionCV` default, `np.logspace(-4, 4, 10)`.
pub fn cs() -> [f64; 10] {
    std::array::from_fn(|i| 10f64.powf(-4.0 + 8.0 * i as f64 / 9.0))
}

/// Folds of AlpacaEval's cross-validation.
pub const FOLDS: usize = 5;

/// Resamples of the questions for the paper fit's interval.
pub const RESAMPLES: usize = 400;

/// A fitted model: its weights on (length, position, pair) and the
/// length-controlled win rate they give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// Weight on tanh(Δ / sd): positive when the judge prefers the longer.
    pub length: f64,
    /// Weight on the position: positive when it prefers the answer shown first.
    pub position: f64,
    /// The pair's weight.
    pub pair: f64,
    /// σ(pair): A preferred at equal length and balanced order, ties half.
    pub win_rate: f64,
    /// 2 · win_rate − 1: seed 000's relative win rate at equal length.
    pub relative: f64,
}

impl Fit {
    fn of(w: [f64; 3]) -> Fit {
        let win_rate = sigmoid(w[2]);
        Fit { length: w[0], position: w[1], pair: w[2], win_rate, relative: 2.0 * win_rate - 1.0 }
    }
}

/// AlpacaEval's fit: the L1-penalised model at the C its cross-validation chose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeFit {
    pub fit: Fit,
    /// The C chosen (inverse penalty strength).
    pub c: f64,
    /// The summed held-out score (negative mean log loss) per C, in [`cs`] order.
    pub scores: Vec<f64>,
}

/// One pair's length-controlled win rate, both fits, beside the raw one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LengthControl {
    /// Judgments the regression saw.
    pub judgments: usize,
    pub questions: usize,
    /// A's mean preference over them (ties half): AlpacaEval's raw win rate.
    pub raw_win_rate: f64,
    /// 2 · raw − 1.
    pub raw_relative: f64,
    /// sd(Δ) in words (`None`: every judgment had the same difference, so
    /// there is no length term).
    pub length_sd: Option<f64>,
    /// Whether the position term was fitted (both orders were judged).
    pub position_fitted: bool,
    /// The paper's fit (`None` with `why` when the maximum-likelihood fit
    /// has no finite solution: one side preferred in every judgment).
    pub paper: Option<Fit>,
    /// 95% interval of the paper fit's win rate, questions resampled.
    pub paper_ci: Option<(f64, f64)>,
    pub code: Option<CodeFit>,
    pub why: Option<String>,
}

fn sigmoid(x: f64) -> f64 {
    // np.exp(-np.logaddexp(0, -x)), as AlpacaEval's `_logistic`.
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// log(1 + e^x), stably.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// Observations pooled by their features: (features, judgments, summed preference).
#[derive(Debug, Clone, Default)]
struct Pooled {
    rows: Vec<([f64; 3], f64, f64)>,
}

impl Pooled {
    fn dot(w: &[f64; 3], x: &[f64; 3]) -> f64 {
        w[0] * x[0] + w[1] * x[1] + w[2] * x[2]
    }

    /// Σ n · CE(p̄, σ(w·x)) = Σ [n · softplus(w·x) − s · (w·x)].
    fn loss(&self, w: &[f64; 3]) -> f64 {
        self.rows
            .iter()
            .map(|(x, n, s)| {
                let z = Self::dot(w, x);
                n * softplus(z) - s * z
            })
            .sum()
    }

    fn gradient_hessian(&self, w: &[f64; 3]) -> ([f64; 3], [[f64; 3]; 3]) {
        let (mut g, mut h) = ([0.0; 3], [[0.0; 3]; 3]);
        for (x, n, s) in &self.rows {
            let q = sigmoid(Self::dot(w, x));
            let r = n * q - s;
            let v = n * q * (1.0 - q);
            for i in 0..3 {
                g[i] += r * x[i];
                for j in 0..3 {
                    h[i][j] += v * x[i] * x[j];
                }
            }
        }
        (g, h)
    }
}

/// The features of a judgment: tanh(Δ / sd) (0 without an sd), the
/// position (0 when it is not fitted), 1.
fn features(o: &Observation, sd: Option<f64>, position: bool) -> [f64; 3] {
    let length = sd.map_or(0.0, |sd| (o.delta_words / sd).tanh());
    let pos = if !position {
        0.0
    } else if o.a_first {
        1.0
    } else {
        -1.0
    };
    [length, pos, 1.0]
}

/// A pool's key: the length feature's bits and the position's sign.
type Key = (u64, i8);

/// Judgments and preferences summed per pool: (n, Σ preference).
type Counts = Vec<(f64, f64)>;

/// The observations pooled once: the distinct feature rows, the counts per
/// row over all judgments and per cross-validation fold, and each
/// question's (row, n, Σ preference) — one pass over the judgments, so a
/// pair's half a million cost little, and resamples add up a question's
/// one or two pools instead of its judgments.
struct Tables {
    xs: Vec<[f64; 3]>,
    all: Counts,
    folds: Vec<Counts>,
    questions: Vec<Vec<(usize, f64, f64)>>,
}

impl Tables {
    fn of(obs: &[Observation], sd: Option<f64>, position: bool) -> Tables {
        let mut t = Tables { xs: Vec::new(), all: Vec::new(), folds: vec![Vec::new(); FOLDS], questions: Vec::new() };
        let mut rows: std::collections::HashMap<Key, usize> = Default::default();
        let mut slots: std::collections::HashMap<i64, usize> = Default::default();
        let n = obs.len();
        // Judgments come grouped by question: the last one's row and slot.
        let mut last: Option<(i64, u64, bool, usize, usize)> = None;
        for (i, o) in obs.iter().enumerate() {
            let (row, slot) = match last {
                Some((q, d, f, row, slot)) if q == o.question && d == o.delta_words.to_bits() && f == o.a_first => {
                    (row, slot)
                }
                _ => {
                    let x = features(o, sd, position);
                    let row = *rows.entry((x[0].to_bits(), x[1] as i8)).or_insert_with(|| {
                        t.xs.push(x);
                        t.all.push((0.0, 0.0));
                        t.folds.iter_mut().for_each(|f| f.push((0.0, 0.0)));
                        t.xs.len() - 1
                    });
                    let slot = *slots.entry(o.question).or_insert_with(|| {
                        t.questions.push(Vec::new());
                        t.questions.len() - 1
                    });
                    (row, slot)
                }
            };
            last = Some((o.question, o.delta_words.to_bits(), o.a_first, row, slot));
            t.all[row].0 += 1.0;
            t.all[row].1 += o.preference;
            // scikit-learn's GroupKFold, one judgment a group (see [`group_folds`]).
            let fold = &mut t.folds[(n - 1 - i) % FOLDS][row];
            fold.0 += 1.0;
            fold.1 += o.preference;
            let q = &mut t.questions[slot];
            match q.iter_mut().find(|e| e.0 == row) {
                Some(e) => {
                    e.1 += 1.0;
                    e.2 += o.preference;
                }
                None => q.push((row, 1.0, o.preference)),
            }
        }
        t
    }

    /// The pools with judgments in them, from counts per row.
    fn pooled(&self, counts: impl Iterator<Item = (f64, f64)>) -> Pooled {
        Pooled { rows: self.xs.iter().zip(counts).filter(|(_, c)| c.0 > 0.5).map(|(x, c)| (*x, c.0, c.1)).collect() }
    }
}

/// Solves the 3×3 system `h · d = g` (`None` when singular).
fn solve(h: [[f64; 3]; 3], g: [f64; 3], active: [bool; 3]) -> Option<[f64; 3]> {
    let idx: Vec<usize> = (0..3).filter(|i| active[*i]).collect();
    let n = idx.len();
    let mut a: Vec<Vec<f64>> = idx
        .iter()
        .map(|&i| {
            let mut row: Vec<f64> = idx.iter().map(|&j| h[i][j]).collect();
            row.push(g[i]);
            row
        })
        .collect();
    for c in 0..n {
        let p = (c..n).max_by(|x, y| a[*x][c].abs().total_cmp(&a[*y][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        for r in 0..n {
            if r != c {
                let f = a[r][c] / a[c][c];
                for k in c..=n {
                    a[r][k] -= f * a[c][k];
                }
            }
        }
    }
    let mut d = [0.0; 3];
    for (k, &i) in idx.iter().enumerate() {
        d[i] = a[k][n] / a[k][k];
    }
    Some(d)
}

/// The maximum-likelihood weights (Newton's method with step halving);
/// `None` when they run off to infinity (the data are separable).
fn maximum_likelihood(p: &Pooled, active: [bool; 3]) -> Option<[f64; 3]> {
    // Weights that push a pool's fitted preference within 10⁻⁶ of 0 or 1
    // (|w·x| > 13.8, the features being at most 1 in size) only arise when
    // the judgments are (quasi-)separated and the weights run off.
    let finite = |w: [f64; 3]| p.rows.iter().all(|(x, ..)| Pooled::dot(&w, x).abs() < 13.8).then_some(w);
    let mut w = [0.0; 3];
    let mut loss = p.loss(&w);
    for _ in 0..200 {
        let (g, h) = p.gradient_hessian(&w);
        if (0..3).filter(|i| active[*i]).all(|i| g[i].abs() < 1e-11 * (1.0 + loss.abs())) {
            return finite(w);
        }
        let d = solve(h, g, active)?;
        let mut step = 1.0;
        loop {
            let next = [w[0] - step * d[0], w[1] - step * d[1], w[2] - step * d[2]];
            let l = p.loss(&next);
            if l <= loss + 1e-15 * loss.abs() {
                w = next;
                loss = l;
                break;
            }
            step /= 2.0;
            if step < 1e-12 {
                return finite(w);
            }
        }
        if p.rows.iter().any(|(x, ..)| Pooled::dot(&w, x).abs() > 40.0) {
            return None;
        }
    }
    finite(w)
}

/// Minimises ‖w‖₁ + C · loss(w) by proximal Newton steps (as liblinear's
/// newGLMNET does): each step minimises the smooth part's quadratic model
/// plus the L1 term exactly (coordinate descent on three coordinates, each
/// a soft threshold), then a backtracking line search on the objective.
fn l1_fit(p: &Pooled, c: f64, active: [bool; 3]) -> [f64; 3] {
    let l1 = |w: &[f64; 3]| w.iter().map(|x| x.abs()).sum::<f64>();
    let objective = |w: &[f64; 3]| l1(w) + c * p.loss(w);
    let mut w = [0.0; 3];
    let mut f = objective(&w);
    for _ in 0..500 {
        let (g, h) = p.gradient_hessian(&w);
        let (g, h) = (g.map(|x| c * x), h.map(|r| r.map(|x| c * x)));
        // The subproblem: min_d g·d + ½ dᵀHd + ‖w + d‖₁.
        let mut d = [0.0; 3];
        for _ in 0..10_000 {
            let mut moved: f64 = 0.0;
            for j in (0..3).filter(|j| active[*j] && h[*j][*j] > 0.0) {
                let a = h[j][j];
                let b = g[j] + (0..3).filter(|k| *k != j).map(|k| h[j][k] * d[k]).sum::<f64>();
                let u = w[j] - b / a;
                let z = u.signum() * (u.abs() - 1.0 / a).max(0.0);
                let next = z - w[j];
                moved = moved.max((next - d[j]).abs());
                d[j] = next;
            }
            if moved <= 1e-15 * (1.0 + l1(&w)) {
                break;
            }
        }
        let mut wd = [0.0; 3];
        for j in 0..3 {
            wd[j] = w[j] + d[j];
        }
        let decrease = (0..3).map(|j| g[j] * d[j]).sum::<f64>() + l1(&wd) - l1(&w);
        if d.iter().all(|x| x.abs() < 1e-14 * (1.0 + l1(&w))) || decrease > -1e-15 * (1.0 + f.abs()) {
            break;
        }
        let mut step = 1.0;
        loop {
            let next = [w[0] + step * d[0], w[1] + step * d[1], w[2] + step * d[2]];
            let fnext = objective(&next);
            if fnext <= f + 0.01 * step * decrease || step < 1e-10 {
                w = next;
                f = fnext;
                break;
            }
            step /= 2.0;
        }
    }
    w
}

/// The fold scikit-learn's `GroupKFold(5)` puts each of `n` equal-sized
/// groups in: groups taken largest first (all equal: the last first, as
/// `argsort(sizes)[::-1]` orders equal sizes), each into the fold with the
/// fewest samples so far (the first of equals).
pub fn group_folds(n: usize) -> Vec<usize> {
    (0..n).map(|i| (n - 1 - i) % FOLDS).collect()
}

/// AlpacaEval's held-out score of `w` on a fold: minus the mean log loss of
/// its judgments (probabilities clipped to [1e-15, 1 − 1e-15], as its
/// `logloss`).
fn held_out_score(w: &[f64; 3], test: &Pooled) -> f64 {
    let eps = 1e-15;
    let (mut sum, mut n) = (0.0, 0.0);
    for (x, m, s) in &test.rows {
        let q = sigmoid(Pooled::dot(w, x)).clamp(eps, 1.0 - eps);
        sum += s * q.ln() + (m - s) * (1.0 - q).ln();
        n += m;
    }
    sum / n
}

/// The fit AlpacaEval's code makes of these observations.
fn code_fit(t: &Tables, active: [bool; 3]) -> CodeFit {
    let cs = cs();
    let mut scores = vec![0.0; cs.len()];
    for held in &t.folds {
        if held.iter().all(|c| c.0 < 0.5) {
            continue;
        }
        let train = t.pooled(t.all.iter().zip(held).map(|(a, h)| (a.0 - h.0, a.1 - h.1)));
        let test = t.pooled(held.iter().copied());
        for (i, c) in cs.iter().enumerate() {
            scores[i] += held_out_score(&l1_fit(&train, *c, active), &test);
        }
    }
    // The first of the best, as numpy's argmax.
    let best = (0..cs.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b });
    CodeFit { fit: Fit::of(l1_fit(&t.pooled(t.all.iter().copied()), cs[best], active)), c: cs[best], scores }
}

/// The length-controlled win rate of one pair from its judgments (in a
/// fixed order: the cross-validation folds follow it). `None` without any.
pub fn length_control(obs: &[Observation], seed: u64) -> Option<LengthControl> {
    if obs.is_empty() {
        return None;
    }
    let n = obs.len() as f64;
    let raw = obs.iter().map(|o| o.preference).sum::<f64>() / n;
    let deltas: Vec<f64> = obs.iter().map(|o| o.delta_words).collect();
    let sd = crate::stats::sample_sd(&deltas).filter(|sd| *sd > 0.0);
    let position = obs.iter().any(|o| o.a_first) && obs.iter().any(|o| !o.a_first);
    let active = [sd.is_some(), position, true];
    let tables = Tables::of(obs, sd, position);
    let all = tables.pooled(tables.all.iter().copied());
    let separable = obs.iter().all(|o| o.preference == 1.0) || obs.iter().all(|o| o.preference == 0.0);
    let paper = if separable { None } else { maximum_likelihood(&all, active).map(Fit::of) };
    let why = paper.is_none().then(|| {
        if separable {
            "one answer was preferred in every judgment, so the regression has no finite fit (its win rate is 0% or \
             100% whatever the lengths)"
        } else {
            "length and position together predict every judgment exactly, so the regression has no finite fit \
             (too few judgments, or one side nearly always preferred)"
        }
        .to_string()
    });
    let paper_ci = paper.as_ref().map(|fit| {
        // Questions resampled with replacement, the regression refitted.
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut rates = Vec::with_capacity(RESAMPLES);
        let questions = &tables.questions;
        let mut counts: Counts = vec![(0.0, 0.0); tables.xs.len()];
        for _ in 0..RESAMPLES {
            counts.iter_mut().for_each(|c| *c = (0.0, 0.0));
            for _ in 0..questions.len() {
                for (row, n, s) in &questions[rng.usize(..questions.len())] {
                    counts[*row].0 += n;
                    counts[*row].1 += s;
                }
            }
            let p = tables.pooled(counts.iter().copied());
            // A resample in which one side always won has no finite fit:
            // its rate is that side's 100%.
            let rate = maximum_likelihood(&p, active).map(|w| sigmoid(w[2])).unwrap_or_else(|| {
                let s: f64 = p.rows.iter().map(|r| r.2).sum();
                let m: f64 = p.rows.iter().map(|r| r.1).sum();
                if s * 2.0 > m {
                    1.0
                } else {
                    0.0
                }
            });
            rates.push(rate);
        }
        rates.sort_by(f64::total_cmp);
        let lo = crate::stats::quantile(&rates, 0.025).unwrap_or(fit.win_rate).min(fit.win_rate);
        let hi = crate::stats::quantile(&rates, 0.975).unwrap_or(fit.win_rate).max(fit.win_rate);
        (lo, hi)
    });
    Some(LengthControl {
        judgments: obs.len(),
        questions: tables.questions.len(),
        raw_win_rate: raw,
        raw_relative: 2.0 * raw - 1.0,
        length_sd: sd,
        position_fitted: position,
        paper,
        paper_ci,
        code: Some(code_fit(&tables, active)),
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(question: i64, preference: f64, delta_words: f64, a_first: bool) -> Observation {
        Observation { question, preference, delta_words, a_first }
    }

    #[test]
    fn the_grid_of_c_is_scikit_learns() {
        let c = cs();
        assert!((c[0] - 1e-4).abs() < 1e-18 && (c[9] - 1e4).abs() < 1e-9);
        assert!((c[1] - 0.000_774_263_682_681_127_2).abs() < 1e-15);
    }

    #[test]
    fn folds_go_round_from_the_last_group() {
        assert_eq!(group_folds(7), [1, 0, 4, 3, 2, 1, 0]);
    }

    #[test]
    fn a_judge_that_only_likes_length_leaves_an_even_pair_even() {
        // A is longer on half the questions, B on the other half; the
        // judge prefers the longer answer 80% of the time, whatever else.
        let mut o = Vec::new();
        for q in 0..200 {
            let delta = if q % 2 == 0 { 60.0 } else { -60.0 };
            for k in 0..10 {
                let longer_wins = k < 8;
                let a_wins = (delta > 0.0) == longer_wins;
                o.push(obs(q, if a_wins { 1.0 } else { 0.0 }, delta, k % 2 == 0));
            }
        }
        let lc = length_control(&o, 1).unwrap();
        let paper = lc.paper.unwrap();
        assert!((lc.raw_win_rate - 0.5).abs() < 1e-12);
        assert!((paper.win_rate - 0.5).abs() < 1e-9, "{paper:?}");
        assert!(paper.length > 1.0, "the longer preferred: {paper:?}");
        // Now A is the longer one on 3 questions in 4: its raw rate rises
        // with the length, the controlled one stays near even.
        let mut o = Vec::new();
        for q in 0..200 {
            let delta = if q % 4 != 0 { 60.0 } else { -60.0 };
            for k in 0..10 {
                let a_wins = (delta > 0.0) == (k < 8);
                o.push(obs(q, if a_wins { 1.0 } else { 0.0 }, delta, k % 2 == 0));
            }
        }
        let lc = length_control(&o, 1).unwrap();
        assert!(lc.raw_win_rate > 0.6, "{lc:?}");
        let paper = lc.paper.unwrap();
        assert!((paper.win_rate - 0.5).abs() < 0.02, "{paper:?}");
        let (lo, hi) = lc.paper_ci.unwrap();
        assert!(lo < paper.win_rate && paper.win_rate < hi && lo < 0.5 && hi > 0.5, "{lo} {hi}");
        let code = lc.code.unwrap();
        assert!((code.fit.win_rate - 0.5).abs() < 0.03, "{code:?}");
    }

    #[test]
    fn a_judge_preferring_the_first_shown_is_corrected_by_the_position_term() {
        // A better (wins 70% at equal length), but the first-shown answer
        // gets a boost; orders balanced: the pair's rate is unchanged, the
        // position weight positive.
        let mut o = Vec::new();
        for q in 0..100 {
            for k in 0..20 {
                let a_first = k % 2 == 0;
                let a_wins = if a_first { k < 18 } else { k < 10 };
                o.push(obs(q, if a_wins { 1.0 } else { 0.0 }, (q % 7) as f64 - 3.0, a_first));
            }
        }
        let lc = length_control(&o, 1).unwrap();
        assert!(lc.position_fitted);
        let p = lc.paper.unwrap();
        assert!(p.position > 0.5, "{p:?}");
        assert!(p.win_rate > 0.6, "{p:?}");
    }

    #[test]
    fn one_side_winning_everything_has_no_finite_fit_and_says_so() {
        let o: Vec<_> = (0..20).map(|q| obs(q, 1.0, q as f64, q % 2 == 0)).collect();
        let lc = length_control(&o, 1).unwrap();
        assert!(lc.paper.is_none() && lc.why.is_some());
        // The penalised fit is finite: it is why AlpacaEval's code has one.
        let code = lc.code.unwrap();
        assert!(code.fit.win_rate > 0.5 && code.fit.win_rate < 1.0, "{code:?}");
    }

    #[test]
    fn the_l1_fit_satisfies_its_optimality_conditions() {
        let o: Vec<_> = (0..300)
            .map(|i| obs(i / 3, [1.0, 0.5, 0.0][(i * 7 % 5 % 3) as usize], ((i * 13) % 41) as f64 - 15.0, i % 2 == 0))
            .collect();
        let sd = crate::stats::sample_sd(&o.iter().map(|x| x.delta_words).collect::<Vec<_>>());
        let t = Tables::of(&o, sd, true);
        let p = t.pooled(t.all.iter().copied());
        for c in [0.001, 0.05, 1.0, 100.0] {
            let w = l1_fit(&p, c, [true, true, true]);
            let (g, _) = p.gradient_hessian(&w);
            for j in 0..3 {
                let cg = c * g[j];
                if w[j] == 0.0 {
                    assert!(cg.abs() <= 1.0 + 1e-9, "C {c}, coordinate {j}: {cg}");
                } else {
                    assert!((cg + w[j].signum()).abs() < 1e-8, "C {c}, coordinate {j}: {cg} at {}", w[j]);
                }
            }
        }
    }
}

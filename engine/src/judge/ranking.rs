//! Ranking many methods at once: Bradley–Terry scores from every pairwise
//! verdict of an evaluation (Bradley & Terry, 1952), as Chatbot Arena and
//! Arena-Hard-Auto rank models (Chiang et al., 2024; FastChat's
//! `compute_mle_elo`): P(i beats j) = e^θi / (e^θi + e^θj), fitted by
//! maximum likelihood, **a tie counting half a win for each side** (FastChat
//! counts a win twice and a tie once in both directions — the same
//! likelihood up to a factor). Scores are shown on the Elo-like scale the
//! arenas use, 1000 + 400 · θ / ln 10 (θ centred on 0), so 400 points are
//! 10:1 odds.
//!
//! The battles are the unbiased protocol's verdicts: one per pair, question
//! and trial (after position exchange and repeats). The 95% intervals
//! resample **questions** (each with all its pairs' and trials' verdicts),
//! not single verdicts: a question's 25 trials are not 25 independent
//! battles. Rank (UB) is the arenas' "upper-bound rank": 1 + the number of
//! methods whose interval lies wholly above this one's.

use super::Outcome;
use crate::stats;
pub use types::judge::{RankRow, Ranking};

/// Bootstrap resamples of the questions for the intervals.
pub const RESAMPLES: usize = 1_000;

/// Win counts: `w[i][j]` is how often `i` beat `j`, a tie adding ½ to both.
pub type Tally = Vec<Vec<f64>>;

/// Adds one verdict of `a` against `b` to a tally.
pub fn add(w: &mut Tally, a: usize, b: usize, outcome: Outcome, times: f64) {
    match outcome {
        Outcome::A => w[a][b] += times,
        Outcome::B => w[b][a] += times,
        Outcome::Tie => {
            w[a][b] += times / 2.0;
            w[b][a] += times / 2.0;
        }
    }
}

/// Why a tally has no finite maximum-likelihood scores, if it has none:
/// the "beat or tied" graph must be strongly connected (Zermelo, 1929;
/// Hunter, 2004) — else some group won (or lost) every comparison with
/// the rest and its score runs to infinity.
pub fn unidentifiable(w: &Tally) -> Option<String> {
    let n = w.len();
    if n < 2 {
        return Some("fewer than two methods were compared".into());
    }
    let reach = |forward: bool| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..n {
                let edge = if forward { w[i][j] } else { w[j][i] };
                if !seen[j] && edge > 0.0 {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen
    };
    let (down, up) = (reach(true), reach(false));
    if down.iter().chain(&up).all(|s| *s) {
        return None;
    }
    Some(
        "some methods won (or lost) every comparison with the others, so their Bradley–Terry scores are unbounded"
            .into(),
    )
}

fn log_likelihood(w: &Tally, theta: &[f64]) -> f64 {
    let mut l = 0.0;
    for i in 0..w.len() {
        for j in 0..w.len() {
            if i != j && w[i][j] > 0.0 {
                // log σ(θi − θj), stably.
                let d = theta[i] - theta[j];
                l -= w[i][j] * if d > 0.0 { (-d).exp().ln_1p() } else { -d + d.exp().ln_1p() };
            }
        }
    }
    l
}

/// The maximum-likelihood log-strengths θ (natural log, mean 0), by
/// Newton's method with step halving; `None` where they do not exist
/// ([`unidentifiable`]).
pub fn fit(w: &Tally) -> Option<Vec<f64>> {
    if unidentifiable(w).is_some() {
        return None;
    }
    let n = w.len();
    let mut theta = vec![0.0; n];
    let mut current = log_likelihood(w, &theta);
    for _ in 0..500 {
        // Gradient and Hessian in θ1…θn−1 (θ0 held at 0).
        let m = n - 1;
        let mut g = vec![0.0; m];
        let mut h = vec![vec![0.0; m]; m];
        for i in 0..n {
            for j in 0..n {
                let games = if i == j { 0.0 } else { w[i][j] + w[j][i] };
                if games == 0.0 {
                    continue;
                }
                let p = 1.0 / (1.0 + (theta[j] - theta[i]).exp());
                if i > 0 {
                    g[i - 1] += w[i][j] - games * p;
                    h[i - 1][i - 1] += games * p * (1.0 - p);
                    if j > 0 {
                        h[i - 1][j - 1] -= games * p * (1.0 - p);
                    }
                }
            }
        }
        let step = solve(h, g)?;
        let mut scale = 1.0;
        loop {
            let next: Vec<f64> =
                std::iter::once(0.0).chain(theta[1..].iter().zip(&step).map(|(t, s)| t + scale * s)).collect();
            let l = log_likelihood(w, &next);
            if l >= current - 1e-15 * current.abs() || scale < 1e-9 {
                let moved = step.iter().map(|s| (s * scale).abs()).fold(0.0, f64::max);
                theta = next;
                current = l;
                if moved < 1e-13 {
                    let mean = theta.iter().sum::<f64>() / n as f64;
                    return Some(theta.iter().map(|t| t - mean).collect());
                }
                break;
            }
            scale /= 2.0;
        }
    }
    let mean = theta.iter().sum::<f64>() / n as f64;
    Some(theta.iter().map(|t| t - mean).collect())
}

/// Solves `h · x = g` (h symmetric positive definite here) by Gaussian
/// elimination with partial pivoting.
fn solve(mut h: Vec<Vec<f64>>, mut g: Vec<f64>) -> Option<Vec<f64>> {
    let m = g.len();
    for c in 0..m {
        let p = (c..m).max_by(|a, b| h[*a][c].abs().total_cmp(&h[*b][c].abs()))?;
        if h[p][c].abs() < 1e-300 {
            return None;
        }
        h.swap(c, p);
        g.swap(c, p);
        for r in c + 1..m {
            let f = h[r][c] / h[c][c];
            for k in c..m {
                h[r][k] -= f * h[c][k];
            }
            g[r] -= f * g[c];
        }
    }
    let mut x = vec![0.0; m];
    for r in (0..m).rev() {
        let s: f64 = (r + 1..m).map(|k| h[r][k] * x[k]).sum();
        x[r] = (g[r] - s) / h[r][r];
    }
    Some(x)
}

/// θ on the arenas' Elo-like scale.
pub fn elo(theta: f64) -> f64 {
    1000.0 + 400.0 * theta / std::f64::consts::LN_10
}

/// One question's verdicts: `(a, b, outcome)` with `a`, `b` indexes of
/// the methods, once per pair and trial.
pub type QuestionVerdicts = Vec<(usize, usize, Outcome)>;

/// Ranks `methods` (set id, name) from each question's verdicts; the
/// intervals resample the questions with `seed`.
pub fn rank(methods: &[(i64, String)], questions: &[QuestionVerdicts], seed: u64) -> Ranking {
    let n = methods.len();
    // Per question, its verdicts counted per pair (a question's trials
    // resample together): (a, b, [A wins, ties, B wins]).
    let counted: Vec<Vec<(usize, usize, [f64; 3])>> = questions
        .iter()
        .map(|q| {
            let mut c: Vec<(usize, usize, [f64; 3])> = Vec::new();
            for (a, b, o) in q {
                let k = match o {
                    Outcome::A => 0,
                    Outcome::Tie => 1,
                    Outcome::B => 2,
                };
                match c.iter_mut().find(|x| (x.0, x.1) == (*a, *b)) {
                    Some(x) => x.2[k] += 1.0,
                    None => {
                        let mut v = [0.0; 3];
                        v[k] = 1.0;
                        c.push((*a, *b, v));
                    }
                }
            }
            c
        })
        .collect();
    let tally_of = |pick: &mut dyn Iterator<Item = usize>| {
        let mut w = vec![vec![0.0; n]; n];
        for q in pick {
            for (a, b, [wins, ties, losses]) in &counted[q] {
                w[*a][*b] += wins + ties / 2.0;
                w[*b][*a] += losses + ties / 2.0;
            }
        }
        w
    };
    let w = tally_of(&mut (0..questions.len()));
    let battles = questions.iter().map(Vec::len).sum();
    let Some(theta) = fit(&w) else {
        return Ranking { battles, questions: questions.len(), note: unidentifiable(&w), ..Default::default() };
    };
    let mut draws: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut rng = fastrand::Rng::with_seed(seed);
    let q = questions.len();
    for _ in 0..RESAMPLES {
        let wb = tally_of(&mut (0..q).map(|_| rng.usize(..q)));
        if let Some(t) = fit(&wb) {
            for (d, x) in draws.iter_mut().zip(t) {
                d.push(elo(x));
            }
        }
    }
    let resamples = draws.first().map_or(0, Vec::len);
    let mut rows: Vec<RankRow> = methods
        .iter()
        .enumerate()
        .map(|(i, (set_id, name))| {
            let score = elo(theta[i]);
            let lo = stats::quantile(&draws[i], 0.025).unwrap_or(score);
            let hi = stats::quantile(&draws[i], 0.975).unwrap_or(score);
            let mut battles_i = 0;
            for qv in questions {
                battles_i += qv.iter().filter(|(a, b, _)| *a == i || *b == i).count();
            }
            RankRow {
                set_id: *set_id,
                name: name.clone(),
                theta: theta[i],
                score,
                ci: (lo.min(score), hi.max(score)),
                rank: 0,
                rank_ub: 0,
                wins: (0..n).map(|j| w[i][j]).sum(),
                battles: battles_i,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.score.total_cmp(&a.score));
    let bounds: Vec<(f64, f64)> = rows.iter().map(|r| r.ci).collect();
    for (k, r) in rows.iter_mut().enumerate() {
        r.rank = k + 1;
        r.rank_ub = 1 + bounds.iter().filter(|(lo, _)| *lo > r.ci.1).count();
    }
    Ranking { rows, battles, questions: questions.len(), resamples, note: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_methods_score_the_log_odds_of_their_win_share() {
        // 30 wins, 10 losses: θ1 − θ2 = ln 3.
        let w = vec![vec![0.0, 30.0], vec![10.0, 0.0]];
        let t = fit(&w).unwrap();
        assert!((t[0] - t[1] - 3f64.ln()).abs() < 1e-12, "{t:?}");
        assert!((t[0] + t[1]).abs() < 1e-15);
        // Ties are half wins: 20 wins, 20 ties, 0 losses ≡ 30 to 10.
        let mut w2 = vec![vec![0.0; 2]; 2];
        add(&mut w2, 0, 1, Outcome::A, 20.0);
        add(&mut w2, 0, 1, Outcome::Tie, 20.0);
        assert_eq!(fit(&w2).unwrap(), t);
    }

    #[test]
    fn a_method_that_never_lost_has_no_finite_score() {
        let w = vec![vec![0.0, 5.0, 2.0], vec![0.0, 0.0, 3.0], vec![0.0, 1.0, 0.0]];
        assert!(fit(&w).is_none());
        assert!(unidentifiable(&w).unwrap().contains("unbounded"));
        let r = rank(&[(1, "a".into()), (2, "b".into()), (3, "c".into())], &[vec![(0, 1, Outcome::A)]], 1);
        assert!(r.rows.is_empty() && r.note.is_some());
    }
}

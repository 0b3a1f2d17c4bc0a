//! The statistics of the evaluation reports (seed 000 §IV-C and what it
//! lacks), each with the definition it follows so results can be
//! reproduced elsewhere:
//! - [`quantile`]: linear interpolation between order statistics (numpy's
//!   default `method="linear"`, Hyndman–Fan type 7);
//! - [`BoxStats`]: median, quartiles, whiskers at the farthest points within
//!   1.5 IQR of the quartiles (Tukey), and the points beyond (seed 000 Fig. 3);
//! - [`relative_win_rate`]: (A_win − B_win) / (A_win + B_win + Tie), seed
//!   000's Fig. 16 definition;
//! - [`bootstrap_mean_ci`]: percentile bootstrap interval of a mean
//!   (seeded resampling over questions);
//! - [`wilcoxon`]: the signed-rank test, zeros dropped (`zero_method =
//!   "wilcox"`), average ranks for ties, normal approximation with the tie
//!   correction and no continuity correction (scipy's `method="approx"`,
//!   `correction=False`); two-sided;
//! - [`sign_test`]: exact two-sided binomial test at p = 1/2 (scipy's
//!   `binomtest`), zeros dropped;
//! - [`holm`]: Holm's step-down adjustment of p-values.

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// The `q` quantile (0–1) of `values` by linear interpolation (numpy's
/// default). `None` for no values.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    Some(v[lo] + (h - lo as f64) * (v[hi] - v[lo]))
}

/// A box plot's numbers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BoxStats {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    /// The lowest and highest values within 1.5 IQR of the quartiles.
    pub whisker_low: f64,
    pub whisker_high: f64,
    pub outliers: Vec<f64>,
}

impl BoxStats {
    pub fn of(values: &[f64]) -> Option<BoxStats> {
        let (q1, median, q3) = (quantile(values, 0.25)?, quantile(values, 0.5)?, quantile(values, 0.75)?);
        let reach = 1.5 * (q3 - q1);
        let inside = |v: &&f64| **v >= q1 - reach && **v <= q3 + reach;
        let whisker_low = values.iter().filter(inside).copied().fold(f64::INFINITY, f64::min);
        let whisker_high = values.iter().filter(inside).copied().fold(f64::NEG_INFINITY, f64::max);
        let mut outliers: Vec<f64> = values.iter().filter(|v| !inside(v)).copied().collect();
        outliers.sort_by(f64::total_cmp);
        Some(BoxStats { q1, median, q3, whisker_low, whisker_high, outliers })
    }
}

/// (A_win − B_win) / (A_win + B_win + Tie): +1 when A always wins, −1 when
/// B always does, 0 when even or all ties (seed 000 Fig. 16). `None` when
/// there is nothing to compare.
pub fn relative_win_rate(a_wins: f64, b_wins: f64, ties: f64) -> Option<f64> {
    let total = a_wins + b_wins + ties;
    (total > 0.0).then(|| (a_wins - b_wins) / total)
}

/// The sample standard deviation (n − 1 in the denominator, as pandas'
/// `.std()` and numpy's `ddof=1`); `None` for fewer than two values.
pub fn sample_sd(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    Some((values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64).sqrt())
}

/// The percentile bootstrap interval (level e.g. 0.95) of the mean of
/// `values`, from `resamples` resamples with replacement drawn by a seeded
/// generator (scipy's `bootstrap(..., method="percentile")`; its interval
/// differs only by resampling noise). `None` for no values.
pub fn bootstrap_mean_ci(values: &[f64], level: f64, resamples: usize, seed: u64) -> Option<(f64, f64)> {
    if values.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = values.len();
    let means: Vec<f64> =
        (0..resamples).map(|_| (0..n).map(|_| values[rng.usize(..n)]).sum::<f64>() / n as f64).collect();
    let tail = (1.0 - level) / 2.0;
    Some((quantile(&means, tail)?, quantile(&means, 1.0 - tail)?))
}

/// A two-sided test's outcome.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TestResult {
    pub statistic: f64,
    pub p_value: f64,
    /// Non-zero differences the test used.
    pub n: usize,
}

/// Average ranks (1-based) of `values`, ties sharing their mean rank.
pub(crate) fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Wilcoxon signed-rank test on paired differences (see the module docs).
/// `None` when every difference is zero.
pub fn wilcoxon(differences: &[f64]) -> Option<TestResult> {
    let d: Vec<f64> = differences.iter().copied().filter(|x| *x != 0.0).collect();
    let n = d.len();
    if n == 0 {
        return None;
    }
    let abs: Vec<f64> = d.iter().map(|x| x.abs()).collect();
    let r = ranks(&abs);
    let plus: f64 = d.iter().zip(&r).filter(|(x, _)| **x > 0.0).map(|(_, r)| r).sum();
    let minus: f64 = d.iter().zip(&r).filter(|(x, _)| **x < 0.0).map(|(_, r)| r).sum();
    let statistic = plus.min(minus);
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    // Tie correction: Σ (t³ − t) / 48 over groups of equal |d|.
    let mut sorted = abs.clone();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|v| **v == sorted[i]).count();
        let t = j as f64;
        ties += t * t * t - t;
        i += j;
    }
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties / 48.0;
    let z = if var > 0.0 { (statistic - mean) / var.sqrt() } else { 0.0 };
    let normal = Normal::new(0.0, 1.0).expect("standard normal");
    let p_value = (2.0 * normal.cdf(-z.abs())).min(1.0);
    Some(TestResult { statistic, p_value, n })
}

/// Exact two-sided sign test: `positive` of `n` non-zero differences were
/// positive (see the module docs).
pub fn sign_test(positive: u64, n: u64) -> Option<TestResult> {
    if n == 0 {
        return None;
    }
    let b = Binomial::new(0.5, n).expect("p = 1/2");
    let k = positive.min(n - positive);
    // P(X ≤ k) + P(X ≥ n − k), symmetric at p = 1/2.
    let p_value = if 2 * k == n { 1.0 } else { (2.0 * b.cdf(k)).min(1.0) };
    Some(TestResult { statistic: positive as f64, p_value, n: n as usize })
}

/// Holm's step-down adjusted p-values, in the input's order.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (k, &i) in order.iter().enumerate() {
        running = running.max(((m - k) as f64 * p_values[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values: numpy 2.4.6 / scipy 1.17.1, computed once.
    const X: [f64; 11] = [0.62, 0.55, 0.71, 0.48, 0.66, 0.59, 0.90, 0.52, 0.61, 0.57, 0.12];
    const D: [f64; 15] = [1.5, -0.5, 2.0, 0.0, 3.0, -1.0, 2.5, 0.5, 1.0, -2.0, 4.0, 1.5, 0.0, 2.0, -0.5];

    #[test]
    fn quartiles_and_whiskers_match_numpy() {
        // np.quantile(X, [0.25, 0.5, 0.75]) with the default linear method.
        let b = BoxStats::of(&X).unwrap();
        assert!((b.q1 - 0.535).abs() < 1e-12 && (b.median - 0.59).abs() < 1e-12 && (b.q3 - 0.64).abs() < 1e-12);
        assert_eq!((b.whisker_low, b.whisker_high), (0.48, 0.71));
        assert_eq!(b.outliers, [0.12, 0.90]);
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[3.0], 0.25), Some(3.0));
    }

    #[test]
    fn wilcoxon_matches_scipy_approx() {
        // scipy.stats.wilcoxon(D, zero_method='wilcox', correction=False, method='approx')
        let r = wilcoxon(&D).unwrap();
        assert_eq!((r.statistic, r.n), (17.5, 13));
        assert!((r.p_value - 0.04966953589289581).abs() < 1e-9, "{}", r.p_value);
        assert_eq!(wilcoxon(&[0.0, 0.0]), None);
    }

    #[test]
    fn sign_test_matches_scipy_binomtest() {
        // scipy.stats.binomtest(9, 12, 0.5).pvalue
        let r = sign_test(9, 12).unwrap();
        assert!((r.p_value - 0.14599609375).abs() < 1e-12, "{}", r.p_value);
        assert_eq!(sign_test(3, 12).unwrap().p_value, r.p_value, "symmetric");
        assert_eq!(sign_test(6, 12).unwrap().p_value, 1.0);
        assert_eq!(sign_test(0, 0), None);
    }

    #[test]
    fn holm_adjusts_step_down_and_keeps_order() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.20]);
        for (a, e) in adj.iter().zip([0.04, 0.09, 0.09, 0.2]) {
            assert!((a - e).abs() < 1e-12, "{adj:?}");
        }
    }

    #[test]
    fn the_bootstrap_interval_agrees_with_scipy_within_resampling_noise() {
        // scipy.stats.bootstrap((wins,), np.mean, n_resamples=200000, method='percentile'):
        // (0.51667, 0.75) for 38 wins of 60. Tolerance: one question (1/60).
        let wins: Vec<f64> = (0..60).map(|i| if i < 38 { 1.0 } else { 0.0 }).collect();
        let (lo, hi) = bootstrap_mean_ci(&wins, 0.95, 20_000, 7).unwrap();
        assert!((lo - 0.516_666_666_7).abs() <= 1.0 / 60.0 + 1e-9, "{lo}");
        assert!((hi - 0.75).abs() <= 1.0 / 60.0 + 1e-9, "{hi}");
        assert_eq!(bootstrap_mean_ci(&wins, 0.95, 20_000, 7), Some((lo, hi)), "seeded: the same interval");
        assert_eq!(bootstrap_mean_ci(&[], 0.95, 10, 1), None);
    }

    #[test]
    fn relative_win_rate_follows_the_papers_definition() {
        assert_eq!(relative_win_rate(9.0, 1.0, 0.0), Some(0.8));
        assert_eq!(relative_win_rate(4.0, 4.0, 2.0), Some(0.0));
        assert_eq!(relative_win_rate(0.0, 0.0, 5.0), Some(0.0));
        assert_eq!(relative_win_rate(0.0, 0.0, 0.0), None);
    }
}

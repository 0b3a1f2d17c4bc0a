//! Agreement between raters (human studies, seed 000 §V-C and seed 004
//! §2.5), each with the definition it follows:
//! - [`fleiss_kappa`]: Fleiss (1971), κ = (P̄ − P̄ₑ) / (1 − P̄ₑ) over subjects
//!   each rated by the same number of raters (statsmodels' `fleiss_kappa`,
//!   `method="fleiss"`);
//! - [`krippendorff_alpha`]: Krippendorff's α = 1 − (n − 1) Σ o_ck δ_ck /
//!   Σ n_c n_k δ_ck from the coincidence matrix, with nominal, ordinal or
//!   interval distances, any number of raters per unit, units with fewer than
//!   two ratings left out (the `krippendorff` package's `alpha`);
//! - [`cohen_kappa`]: Cohen's κ between two raters, unweighted or with linear
//!   or quadratic weights on the labels' positions (scikit-learn's
//!   `cohen_kappa_score`);
//! - [`spearman`]: Spearman's ρ (Pearson's r of average ranks) with the
//!   two-sided p-value of t = ρ √((n − 2) / (1 − ρ²)) on n − 2 degrees of
//!   freedom (scipy's `spearmanr`).

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Fleiss' κ from `counts[subject][category]` (how many raters put the
/// subject in the category). `None` unless every subject has the same
/// number (≥ 2) of ratings and the ratings are not all in one category.
pub fn fleiss_kappa(counts: &[Vec<u32>]) -> Option<f64> {
    let raters = counts.first()?.iter().sum::<u32>() as f64;
    if raters < 2.0 || counts.iter().any(|row| row.iter().sum::<u32>() as f64 != raters) {
        return None;
    }
    let subjects = counts.len() as f64;
    let categories = counts[0].len();
    let p_bar = counts
        .iter()
        .map(|row| (row.iter().map(|&n| (n as f64) * (n as f64)).sum::<f64>() - raters) / (raters * (raters - 1.0)))
        .sum::<f64>()
        / subjects;
    let p_e: f64 = (0..categories)
        .map(|j| {
            let p = counts.iter().map(|row| row.get(j).copied().unwrap_or(0) as f64).sum::<f64>() / (subjects * raters);
            p * p
        })
        .sum();
    if (1.0 - p_e).abs() < 1e-15 {
        return None;
    }
    Some((p_bar - p_e) / (1.0 - p_e))
}

/// The level of measurement Krippendorff's α assumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Nominal,
    Ordinal,
    Interval,
}

/// Krippendorff's α over `units`, each the list of ratings it received
/// (missing ones left out). `domain`: the possible values in order (for
/// ordinal data, e.g. 1..=5 for a Likert scale); `None`: the values seen.
/// `None` when fewer than two pairable ratings exist or every rating is the
/// same.
pub fn krippendorff_alpha(units: &[Vec<f64>], level: Level, domain: Option<&[f64]>) -> Option<f64> {
    let mut values: Vec<f64> = match domain {
        Some(d) => d.to_vec(),
        None => units.iter().flatten().copied().collect(),
    };
    values.sort_by(f64::total_cmp);
    values.dedup();
    let index = |v: f64| values.iter().position(|x| *x == v);
    let k = values.len();
    // The coincidence matrix.
    let mut o = vec![vec![0.0; k]; k];
    for unit in units.iter().filter(|u| u.len() >= 2) {
        let m = unit.len() as f64;
        let mut n_u = vec![0.0; k];
        for v in unit {
            n_u[index(*v)?] += 1.0;
        }
        for c in 0..k {
            for d in 0..k {
                let same = if c == d { 1.0 } else { 0.0 };
                o[c][d] += n_u[c] * (n_u[d] - same) / (m - 1.0);
            }
        }
    }
    let n_c: Vec<f64> = o.iter().map(|row| row.iter().sum()).collect();
    let n: f64 = n_c.iter().sum();
    if n < 2.0 {
        return None;
    }
    let delta = |c: usize, d: usize| -> f64 {
        match level {
            Level::Nominal => f64::from(c != d),
            Level::Interval => (values[c] - values[d]).powi(2),
            Level::Ordinal => {
                let (lo, hi) = (c.min(d), c.max(d));
                (n_c[lo..=hi].iter().sum::<f64>() - (n_c[c] + n_c[d]) / 2.0).powi(2)
            }
        }
    };
    let (mut observed, mut expected) = (0.0, 0.0);
    for c in 0..k {
        for d in 0..k {
            let dl = delta(c, d);
            observed += o[c][d] * dl;
            expected += n_c[c] * n_c[d] * dl;
        }
    }
    if expected == 0.0 {
        return None;
    }
    Some(1.0 - (n - 1.0) * observed / expected)
}

/// How Cohen's κ weighs disagreements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    None,
    Linear,
    Quadratic,
}

/// Cohen's κ between two raters' labels of the same items. `None` for no
/// items, lengths that differ, or chance agreement of 1.
pub fn cohen_kappa(a: &[i64], b: &[i64], weights: Weights) -> Option<f64> {
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let labels: Vec<i64> = {
        let mut l: Vec<i64> = a.iter().chain(b).copied().collect();
        l.sort_unstable();
        l.dedup();
        l
    };
    let at: BTreeMap<i64, usize> = labels.iter().enumerate().map(|(i, l)| (*l, i)).collect();
    let k = labels.len();
    let mut confusion = vec![vec![0.0; k]; k];
    for (x, y) in a.iter().zip(b) {
        confusion[at[x]][at[y]] += 1.0;
    }
    let total = a.len() as f64;
    let rows: Vec<f64> = confusion.iter().map(|r| r.iter().sum()).collect();
    let cols: Vec<f64> = (0..k).map(|j| confusion.iter().map(|r| r[j]).sum()).collect();
    let w = |i: usize, j: usize| -> f64 {
        let d = i.abs_diff(j) as f64;
        match weights {
            Weights::None => f64::from(i != j),
            Weights::Linear => d,
            Weights::Quadratic => d * d,
        }
    };
    let (mut observed, mut expected) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            observed += w(i, j) * confusion[i][j];
            expected += w(i, j) * rows[i] * cols[j] / total;
        }
    }
    if expected == 0.0 {
        return None;
    }
    Some(1.0 - observed / expected)
}

/// Spearman's ρ and its two-sided p-value. `None` for fewer than 3 pairs,
/// lengths that differ, or a constant side.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let n = a.len();
    if n < 3 || n != b.len() {
        return None;
    }
    let (ra, rb) = (crate::stats::ranks(a), crate::stats::ranks(b));
    let mean = (n as f64 + 1.0) / 2.0;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        sab += (x - mean) * (y - mean);
        saa += (x - mean).powi(2);
        sbb += (y - mean).powi(2);
    }
    if saa == 0.0 || sbb == 0.0 {
        return None;
    }
    let rho = (sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0);
    let df = n as f64 - 2.0;
    let p = if (1.0 - rho.abs()) < 1e-15 {
        0.0
    } else {
        let t = rho * (df / ((1.0 + rho) * (1.0 - rho))).sqrt();
        let dist = StudentsT::new(0.0, 1.0, df).ok()?;
        2.0 * dist.cdf(-t.abs())
    };
    Some((rho, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values computed once (scripts/refs/agreement_refs.py: statsmodels
    // 0.15.0, krippendorff 0.9.0, scikit-learn 1.9.1, scipy 1.17.1).
    const WIKI: [[u32; 5]; 10] = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ];

    #[test]
    fn fleiss_kappa_matches_the_worked_example_and_statsmodels() {
        let counts: Vec<Vec<u32>> = WIKI.iter().map(|r| r.to_vec()).collect();
        let k = fleiss_kappa(&counts).unwrap();
        assert!((k - 0.20993070442195522).abs() < 1e-12, "{k}");
        assert!((k - 0.210).abs() < 5e-4);
        // Unequal raters per subject, or one rater: not defined.
        assert_eq!(fleiss_kappa(&[vec![1, 1], vec![2, 1]]), None);
        assert_eq!(fleiss_kappa(&[vec![1, 0]]), None);
        // Perfect agreement on varied subjects: 1.
        assert_eq!(fleiss_kappa(&[vec![3, 0], vec![0, 3]]), Some(1.0));
    }

    /// 4 raters × 8 items of a 1–5 scale, two ratings missing, as units.
    fn likert_units() -> Vec<Vec<f64>> {
        let nan = f64::NAN;
        let raters = [
            [1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 4.0, 1.0],
            [1.0, 2.0, 3.0, 3.0, 2.0, 2.0, 4.0, 1.0],
            [nan, 3.0, 3.0, 3.0, 2.0, 3.0, 4.0, 2.0],
            [1.0, 2.0, 3.0, 4.0, 2.0, 1.0, 5.0, nan],
        ];
        (0..8).map(|u| raters.iter().map(|r| r[u]).filter(|v| !v.is_nan()).collect()).collect()
    }

    #[test]
    fn krippendorff_alpha_matches_the_reference_package_at_each_level() {
        let units = likert_units();
        let domain = [1.0, 2.0, 3.0, 4.0, 5.0];
        let ordinal = krippendorff_alpha(&units, Level::Ordinal, Some(&domain)).unwrap();
        assert!((ordinal - 0.7896209649611416).abs() < 1e-12, "{ordinal}");
        let nominal = krippendorff_alpha(&units, Level::Nominal, None).unwrap();
        assert!((nominal - 0.5109126984126985).abs() < 1e-12, "{nominal}");
        let interval = krippendorff_alpha(&units, Level::Interval, None).unwrap();
        assert!((interval - 0.7904492617027961).abs() < 1e-12, "{interval}");
        // A unit rated once adds nothing; all ratings equal: undefined.
        let mut more = units.clone();
        more.push(vec![5.0]);
        assert_eq!(krippendorff_alpha(&more, Level::Ordinal, Some(&domain)), Some(ordinal));
        assert_eq!(krippendorff_alpha(&[vec![2.0, 2.0], vec![2.0, 2.0]], Level::Nominal, None), None);
    }

    #[test]
    fn cohen_kappa_and_spearman_match_scikit_learn_and_scipy() {
        let a = [1, 2, 3, 3, 2, 1, 4, 1, 5, 5, 3, 2];
        let b = [1, 2, 3, 4, 2, 2, 4, 1, 4, 5, 2, 2];
        for (w, expected) in [
            (Weights::None, 0.5826086956521739),
            (Weights::Linear, 0.7735849056603773),
            (Weights::Quadratic, 0.9032258064516129),
        ] {
            let k = cohen_kappa(&a, &b, w).unwrap();
            assert!((k - expected).abs() < 1e-12, "{w:?}: {k}");
        }
        let (fa, fb): (Vec<f64>, Vec<f64>) =
            (a.iter().map(|x| *x as f64).collect(), b.iter().map(|x| *x as f64).collect());
        let (rho, p) = spearman(&fa, &fb).unwrap();
        assert!((rho - 0.9065959795808342).abs() < 1e-12, "{rho}");
        assert!((p - 4.777957671271153e-05).abs() < 1e-12, "{p}");
        assert_eq!(cohen_kappa(&[], &[], Weights::None), None);
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    }
}

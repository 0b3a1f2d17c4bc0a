//! Information measures shared by the standard and the as-published
//! definitions: entropy and mutual information of labelings (nats), and
//! the authors' NMI with pandas' equal-width bins.

use std::collections::BTreeMap;

/// Shannon entropy in nats of the counts over `n` items.
pub fn entropy(counts: impl Iterator<Item = usize>, n: f64) -> f64 {
    counts.filter(|c| *c > 0).map(|c| c as f64 / n).map(|p| -p * p.ln()).sum()
}

/// Mutual information in nats from the counts of two labelings and of
/// their pairs over `n` items (scikit-learn's `mutual_info_score`; never
/// below 0).
pub fn mutual_information<A: Ord, B: Ord>(
    ca: &BTreeMap<A, usize>,
    cb: &BTreeMap<B, usize>,
    joint: &BTreeMap<(A, B), usize>,
    n: f64,
) -> f64 {
    joint
        .iter()
        .map(|((x, y), c)| {
            let p = *c as f64 / n;
            p * (p / ((ca[x] as f64 / n) * (cb[y] as f64 / n))).ln()
        })
        .sum::<f64>()
        .max(0.0)
}

/// `pd.cut(values, bins=n, labels=False)`: `n` equal-width bins over the
/// values' range, right-closed, the lowest edge lowered by 0.1% of the range
/// so the minimum falls in bin 0 (a range of zero widened by 0.1% of the
/// value each way). The authors cut the cosine similarities of a whole run
/// at once, before grouping them by dimension and level.
pub fn equal_width_bins(values: &[f64], n: usize) -> Vec<usize> {
    let n = n.max(1);
    let (Some(mn), Some(mx)) = (values.iter().copied().reduce(f64::min), values.iter().copied().reduce(f64::max))
    else {
        return Vec::new();
    };
    let (lo, hi) = if mn == mx {
        let widen = |v: f64| if v != 0.0 { 0.001 * v.abs() } else { 0.001 };
        (mn - widen(mn), mx + widen(mx))
    } else {
        (mn, mx)
    };
    // np.linspace(lo, hi, n + 1): start + i·step, the last edge exactly hi.
    let step = (hi - lo) / n as f64;
    let mut edges: Vec<f64> = (0..=n).map(|i| i as f64 * step + lo).collect();
    edges[n] = hi;
    if mn != mx {
        edges[0] -= (mx - mn) * 0.001;
    }
    // searchsorted(side="left") − 1: x in (e[i], e[i+1]] is bin i.
    values.iter().map(|&x| edges.partition_point(|&e| e < x).saturating_sub(1).min(n - 1)).collect()
}

/// The authors' "normalized MI" of a level: scikit-learn's
/// `mutual_info_score(category, bin)` divided by the entropy of the
/// categories alone (scipy's `entropy` of their frequencies), 0 when that
/// entropy is 0 — not scikit-learn's NMI, which divides by the mean of
/// both entropies.
pub fn mi_over_category_entropy<C: Ord + Clone>(categories: &[C], bins: &[usize]) -> f64 {
    let n = categories.len().min(bins.len());
    if n == 0 {
        return 0.0;
    }
    let mut ca: BTreeMap<C, usize> = BTreeMap::new();
    let mut cb: BTreeMap<usize, usize> = BTreeMap::new();
    let mut joint: BTreeMap<(C, usize), usize> = BTreeMap::new();
    for (c, b) in categories.iter().zip(bins).take(n) {
        *ca.entry(c.clone()).or_default() += 1;
        *cb.entry(*b).or_default() += 1;
        *joint.entry((c.clone(), *b)).or_default() += 1;
    }
    let h = entropy(ca.values().copied(), n as f64);
    if h > 0.0 {
        mutual_information(&ca, &cb, &joint, n as f64) / h
    } else {
        0.0
    }
}

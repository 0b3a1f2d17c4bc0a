//! How fine a question hierarchy should be (seed 004 §2.4): per dimension
//! and granularity level (2, 4, 8 categories), the mean score per category,
//! the **discriminative power** (standard deviation of the per-category
//! means — the population one, numpy's default), the **normalised mutual
//! information** between category and performance bin (scikit-learn's
//! arithmetic normalisation; bins are quantile bins of the scores, numpy's
//! linear quantiles), and per split (a parent and its children) the
//! **Coherence Ratio** ρ = σ_sib / (δ_vert + ε), ε = 0.001: σ_sib the
//! standard deviation of the children's means, δ_vert the absolute
//! difference between the parent's mean and the mean of the children's
//! means; ρ > 2 well-structured, ρ < 1 poor.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::information::{entropy, mutual_information};
pub use types::metrics::{CategoryMean, CoarseRow};

/// The Coherence Ratio's ε (seed 004, footnote 3).
pub const EPSILON: f64 = 0.001;

/// Questions per category below which a level's numbers carry a warning:
/// the smallest cell of seed 004's Table 2. At 10 per category the noise of
/// a category mean (≈0.03–0.05 in CS) exceeds most of the paper's DiscPow
/// values (0.007–0.053).
pub const MIN_PER_CATEGORY: usize = types::defaults::MIN_PER_CATEGORY;
/// Bootstrap resamples (questions resampled within each category) for the
/// intervals of DiscPow, NMI and ρ, and label permutations for the noise floor.
pub const RESAMPLES: usize = 500;

/// The population standard deviation (0 for fewer than one value).
pub fn population_std(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()
}

/// numpy's `quantile(values, q)` with its default linear interpolation.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Each value's quantile bin of `bins`: the number of the inner edges
/// (quantiles 1/bins … (bins−1)/bins) at or below it — numpy's
/// `searchsorted(quantile(v, arange(1, bins) / bins), v, side="right")`.
pub fn quantile_bins(values: &[f64], bins: usize) -> Vec<usize> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let edges: Vec<f64> = (1..bins.max(1)).map(|i| quantile(&sorted, i as f64 / bins as f64)).collect();
    values.iter().map(|v| edges.iter().filter(|e| **e <= *v).count()).collect()
}

/// scikit-learn's `normalized_mutual_info_score(a, b)` (arithmetic mean of
/// the entropies; 1 when both labelings are one cluster; 0 when the mutual
/// information is 0).
pub fn nmi<A: Ord + Clone, B: Ord + Clone>(a: &[A], b: &[B]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 1.0;
    }
    let mut ca: BTreeMap<A, usize> = BTreeMap::new();
    let mut cb: BTreeMap<B, usize> = BTreeMap::new();
    let mut joint: BTreeMap<(A, B), usize> = BTreeMap::new();
    for (x, y) in a.iter().zip(b).take(n) {
        *ca.entry(x.clone()).or_default() += 1;
        *cb.entry(y.clone()).or_default() += 1;
        *joint.entry((x.clone(), y.clone())).or_default() += 1;
    }
    if ca.len() == 1 && cb.len() == 1 {
        return 1.0;
    }
    let nf = n as f64;
    let mi = mutual_information(&ca, &cb, &joint, nf);
    if mi == 0.0 {
        return 0.0;
    }
    let (ha, hb) = (entropy(ca.values().copied(), nf), entropy(cb.values().copied(), nf));
    mi / ((ha + hb) / 2.0)
}

/// One scored question: its category path below the dimension code
/// (`QC/simple/factual_lookup`: depth 1 coarse, 2 medium, 3 fine) and its
/// score (cosine similarity of its answer to the reference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub category: String,
    pub score: f64,
}

/// One dimension at one granularity level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelStats {
    pub dimension: String,
    /// Categories at this level: 2, 4, 8 (a dimension without
    /// sub-categories, such as Question Phrasing: its own count).
    pub categories: usize,
    /// The level's depth below the dimension: 1 coarse, 2 medium, 3 fine.
    #[serde(default)]
    pub depth: usize,
    pub questions: usize,
    pub means: Vec<CategoryMean>,
    pub discriminative_power: f64,
    /// Discriminative power minus the coarser level's.
    pub change: Option<f64>,
    pub nmi: f64,
    /// 95% bootstrap intervals (questions resampled within their category;
    /// each contains its estimate).
    #[serde(default)]
    pub power_ci: Option<(f64, f64)>,
    #[serde(default)]
    pub nmi_ci: Option<(f64, f64)>,
    /// The noise floor: the 95th percentile of the same statistics with
    /// the category labels permuted among the level's questions (what
    /// categories with no effect at all would show with these sizes).
    #[serde(default)]
    pub power_floor: Option<f64>,
    #[serde(default)]
    pub nmi_floor: Option<f64>,
    /// The fewest questions in one of the level's categories.
    #[serde(default)]
    pub min_per_category: usize,
    /// NMI as the HieraRAG authors' code computes it
    /// ([`super::information::mi_over_category_entropy`] over 5 equal-width
    /// bins of the whole answer set's similarities). Their code leaves out
    /// levels under 10 questions; Assay computes those too (the level's
    /// warning says it is small).
    #[serde(default)]
    pub nmi_published: Option<f64>,
}

impl LevelStats {
    /// Whether the discriminative power stands above its noise floor.
    pub fn above_floor(&self) -> Option<bool> {
        self.power_floor.map(|f| self.discriminative_power > f)
    }

    /// A warning when categories are too small to compare levels.
    pub fn warning(&self) -> Option<String> {
        (self.min_per_category < MIN_PER_CATEGORY).then(|| {
            format!(
                "{} question{} in the smallest category (fewer than the HieraRAG paper's {MIN_PER_CATEGORY}): the category means' noise can exceed the differences between levels",
                self.min_per_category,
                if self.min_per_category == 1 { "" } else { "s" }
            )
        })
    }
}

/// A parent category and its children.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub parent: String,
    pub children: Vec<String>,
    pub sigma_sib: f64,
    pub delta_vert: f64,
    pub rho: f64,
    /// 95% bootstrap interval of ρ (see [`LevelStats::power_ci`]).
    #[serde(default)]
    pub rho_ci: Option<(f64, f64)>,
}

impl Split {
    /// "well-structured" (ρ > 2), "poor" (ρ < 1) or "moderate" — said of
    /// the interval where there is one (a label that respects it): the
    /// whole interval above 2, below 1 or between them; an interval across
    /// a threshold is "uncertain".
    pub fn verdict(&self) -> &'static str {
        let (lo, hi) = self.rho_ci.unwrap_or((self.rho, self.rho));
        if lo > 2.0 {
            "well-structured"
        } else if hi < 1.0 {
            "poor"
        } else if lo >= 1.0 && hi <= 2.0 {
            "moderate"
        } else {
            "uncertain"
        }
    }
}

/// A dimension's analysis and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DimensionAnalysis {
    pub dimension: String,
    pub levels: Vec<LevelStats>,
    pub splits: Vec<Split>,
    /// The level (categories) with the highest discriminative power.
    pub optimal: Option<usize>,
    /// The mean Coherence Ratio of the dimension's splits (seed 004
    /// reports it per dimension, e.g. "QC mean: 0.40").
    #[serde(default)]
    pub mean_rho: Option<f64>,
}

fn depth(path: &str) -> usize {
    path.matches('/').count()
}

/// The splits into the level of `categories` (2, 4, 8): those whose parent
/// is one level coarser — the coherence of the children that level adds.
pub fn splits_into(a: &DimensionAnalysis, categories: usize) -> impl Iterator<Item = &Split> {
    let d = categories.max(1).trailing_zeros() as usize;
    a.splits.iter().filter(move |s| d >= 2 && depth(&s.parent) == d - 1)
}

/// The analysis of scored questions, per dimension; `bins` quantile bins
/// for the mutual information. Each number comes with its bootstrap
/// interval and each level with its noise floor (seeded: the same scores
/// give the same intervals).
pub fn analyse(items: &[Scored], bins: usize) -> Vec<DimensionAnalysis> {
    let mut out = point(items, bins);
    uncertainty(&mut out, items, bins, RESAMPLES, 0x5eed_0004);
    published_nmi(&mut out, items);
    out
}

/// Each level's [`LevelStats::nmi_published`]: the authors cut the
/// similarities of all the set's questions into 5 equal-width bins at once
/// (`pd.cut(df['cosine_sim'], bins=5)`), then per dimension and level
/// divide the mutual information of category and bin by the category
/// entropy (for levels of 10 questions or more; here for every level).
fn published_nmi(out: &mut [DimensionAnalysis], items: &[Scored]) {
    let scores: Vec<f64> = items.iter().map(|s| s.score).collect();
    let bins = super::information::equal_width_bins(&scores, 5);
    for d in out.iter_mut() {
        for l in d.levels.iter_mut() {
            let (labels, binned): (Vec<&str>, Vec<usize>) = items
                .iter()
                .zip(&bins)
                .filter(|(s, _)| {
                    !s.category.contains(" × ")
                        && s.category.split('/').next() == Some(d.dimension.as_str())
                        && depth(&s.category) == l.depth
                })
                .map(|(s, b)| (s.category.as_str(), *b))
                .unzip();
            l.nmi_published =
                (!labels.is_empty()).then(|| super::information::mi_over_category_entropy(&labels, &binned));
        }
    }
}

/// (DiscPow, NMI) of one level's questions: (category, score) pairs.
fn level_numbers(at: &[(&str, f64)], bins: usize) -> (f64, f64) {
    let mut cats: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for (c, s) in at {
        let e = cats.entry(c).or_default();
        e.0 += s;
        e.1 += 1;
    }
    let means: Vec<f64> = cats.values().map(|(s, n)| s / *n as f64).collect();
    let scores: Vec<f64> = at.iter().map(|(_, s)| *s).collect();
    let labels: Vec<&str> = at.iter().map(|(c, _)| *c).collect();
    (population_std(&means), nmi(&labels, &quantile_bins(&scores, bins)))
}

/// The percentile interval of `draws` widened to hold `estimate`.
fn interval(draws: &mut [f64], estimate: f64) -> Option<(f64, f64)> {
    if draws.is_empty() {
        return None;
    }
    draws.sort_by(f64::total_cmp);
    Some((quantile(draws, 0.025).min(estimate), quantile(draws, 0.975).max(estimate)))
}

/// Bootstrap intervals (questions resampled within their category, so
/// every category keeps its size), noise floors (labels permuted among a
/// level's questions) and per-category minimums, filled into `out`.
fn uncertainty(out: &mut [DimensionAnalysis], items: &[Scored], bins: usize, resamples: usize, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut by_cat: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in items {
        by_cat.entry(s.category.as_str()).or_default().push(s.score);
    }
    // Bootstrap: the whole analysis again on each resample.
    let mut power: BTreeMap<(String, usize), Vec<f64>> = BTreeMap::new();
    let mut info: BTreeMap<(String, usize), Vec<f64>> = BTreeMap::new();
    let mut rho: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for _ in 0..resamples {
        let resample: Vec<Scored> = by_cat
            .iter()
            .flat_map(|(c, scores)| {
                (0..scores.len())
                    .map(|_| Scored { category: c.to_string(), score: scores[rng.usize(..scores.len())] })
                    .collect::<Vec<_>>()
            })
            .collect();
        for d in point(&resample, bins) {
            for l in &d.levels {
                power.entry((d.dimension.clone(), l.categories)).or_default().push(l.discriminative_power);
                info.entry((d.dimension.clone(), l.categories)).or_default().push(l.nmi);
            }
            for s in &d.splits {
                rho.entry((d.dimension.clone(), s.parent.clone())).or_default().push(s.rho);
            }
        }
    }
    for d in out.iter_mut() {
        for l in d.levels.iter_mut() {
            let key = (d.dimension.clone(), l.categories);
            l.power_ci = power.get_mut(&key).and_then(|v| interval(v, l.discriminative_power));
            l.nmi_ci = info.get_mut(&key).and_then(|v| interval(v, l.nmi));
            l.min_per_category = l.means.iter().map(|m| m.n).min().unwrap_or(0);
            // The noise floor: labels permuted among the level's questions.
            let depth_of = l.depth;
            let at: Vec<(&str, f64)> = items
                .iter()
                .filter(|s| s.category.starts_with(&format!("{}/", d.dimension)) && depth(&s.category) == depth_of)
                .filter(|s| !s.category.contains(" × "))
                .map(|s| (s.category.as_str(), s.score))
                .collect();
            let mut labels: Vec<&str> = at.iter().map(|(c, _)| *c).collect();
            let (mut p, mut i) = (Vec::with_capacity(resamples), Vec::with_capacity(resamples));
            for _ in 0..resamples {
                rng.shuffle(&mut labels);
                let permuted: Vec<(&str, f64)> = labels.iter().zip(&at).map(|(c, (_, s))| (*c, *s)).collect();
                let (pw, mi) = level_numbers(&permuted, bins);
                p.push(pw);
                i.push(mi);
            }
            p.sort_by(f64::total_cmp);
            i.sort_by(f64::total_cmp);
            l.power_floor = (!p.is_empty()).then(|| quantile(&p, 0.95));
            l.nmi_floor = (!i.is_empty()).then(|| quantile(&i, 0.95));
        }
        for s in d.splits.iter_mut() {
            s.rho_ci = rho.get_mut(&(d.dimension.clone(), s.parent.clone())).and_then(|v| interval(v, s.rho));
        }
    }
}

/// The point estimates of [`analyse`].
fn point(items: &[Scored], bins: usize) -> Vec<DimensionAnalysis> {
    let mut by_dim: BTreeMap<String, Vec<&Scored>> = BTreeMap::new();
    for s in items.iter().filter(|s| depth(&s.category) >= 1 && !s.category.contains(" × ")) {
        by_dim.entry(s.category.split('/').next().unwrap_or("").to_string()).or_default().push(s);
    }
    by_dim
        .into_iter()
        .map(|(dimension, scored)| {
            // Per category: its questions' scores.
            let mut cats: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for s in &scored {
                cats.entry(s.category.clone()).or_default().push(s.score);
            }
            let mean_of = |c: &str| cats.get(c).map(|v| v.iter().sum::<f64>() / v.len() as f64);
            let mut levels: Vec<LevelStats> = Vec::new();
            for d in 1..=3 {
                let at: Vec<&Scored> = scored.iter().copied().filter(|s| depth(&s.category) == d).collect();
                if at.is_empty() {
                    continue;
                }
                let means: Vec<CategoryMean> = cats
                    .iter()
                    .filter(|(c, _)| depth(c) == d)
                    .map(|(c, v)| CategoryMean {
                        category: c.clone(),
                        n: v.len(),
                        mean: v.iter().sum::<f64>() / v.len() as f64,
                    })
                    .collect();
                let power = population_std(&means.iter().map(|m| m.mean).collect::<Vec<_>>());
                let scores: Vec<f64> = at.iter().map(|s| s.score).collect();
                let labels: Vec<&str> = at.iter().map(|s| s.category.as_str()).collect();
                let binned = quantile_bins(&scores, bins);
                let change = levels.last().filter(|l| l.depth == d - 1).map(|l| power - l.discriminative_power);
                levels.push(LevelStats {
                    dimension: dimension.clone(),
                    // 2, 4, 8 by depth; a flat dimension's level its own count.
                    categories: (1usize << d).max(means.len()),
                    depth: d,
                    questions: at.len(),
                    means,
                    discriminative_power: power,
                    change,
                    nmi: nmi(&labels, &binned),
                    power_ci: None,
                    nmi_ci: None,
                    power_floor: None,
                    nmi_floor: None,
                    min_per_category: 0,
                    nmi_published: None,
                });
            }
            // Splits: each category with questions of its own and children with questions.
            let mut splits = Vec::new();
            for parent in cats.keys().filter(|c| depth(c) < 3) {
                let children: Vec<&String> = cats
                    .keys()
                    .filter(|c| depth(c) == depth(parent) + 1 && c.starts_with(&format!("{parent}/")))
                    .collect();
                let (Some(pm), false) = (mean_of(parent), children.is_empty()) else { continue };
                let child_means: Vec<f64> = children.iter().filter_map(|c| mean_of(c)).collect();
                let sigma = population_std(&child_means);
                let delta = (pm - child_means.iter().sum::<f64>() / child_means.len() as f64).abs();
                splits.push(Split {
                    parent: parent.clone(),
                    children: children.into_iter().cloned().collect(),
                    sigma_sib: sigma,
                    delta_vert: delta,
                    rho: sigma / (delta + EPSILON),
                    rho_ci: None,
                });
            }
            let optimal = levels
                .iter()
                .max_by(|a, b| a.discriminative_power.total_cmp(&b.discriminative_power))
                .map(|l| l.categories);
            let mean_rho =
                (!splits.is_empty()).then(|| splits.iter().map(|s| s.rho).sum::<f64>() / splits.len() as f64);
            DimensionAnalysis { dimension, levels, splits, optimal, mean_rho }
        })
        .collect()
}

/// Table 1 from (category path, AP, CS) per question: each dimension's
/// questions at the coarse level (`QC/simple`; factorial cells left out).
pub fn coarse_table(items: &[(String, Option<f64>, f64)]) -> Vec<CoarseRow> {
    let mut by_dim: BTreeMap<&str, Vec<&(String, Option<f64>, f64)>> = BTreeMap::new();
    for it in items.iter().filter(|it| depth(&it.0) == 1 && !it.0.contains(" × ")) {
        by_dim.entry(it.0.split('/').next().unwrap_or("")).or_default().push(it);
    }
    by_dim
        .into_iter()
        .map(|(dim, qs)| {
            let mut cats: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
            for q in &qs {
                cats.entry(q.0.as_str()).or_default().push(q.2);
            }
            let means: Vec<CategoryMean> = cats
                .iter()
                .map(|(c, v)| CategoryMean {
                    category: c.to_string(),
                    n: v.len(),
                    mean: v.iter().sum::<f64>() / v.len() as f64,
                })
                .collect();
            let (lo, hi) =
                means.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), m| (l.min(m.mean), h.max(m.mean)));
            let aps: Vec<f64> = qs.iter().filter_map(|q| q.1).collect();
            CoarseRow {
                dimension: dim.to_string(),
                categories: means.len(),
                questions: qs.len(),
                map: (!aps.is_empty()).then(|| aps.iter().sum::<f64>() / aps.len() as f64),
                cs: qs.iter().map(|q| q.2).sum::<f64>() / qs.len() as f64,
                range: hi - lo,
                means,
            }
        })
        .collect()
}

/// The point-biserial correlation of a binary outcome with a number, and
/// its two-sided p-value (Student's t with n − 2 degrees of freedom), as
/// scipy's `pointbiserialr`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointBiserial {
    pub r: f64,
    pub p: f64,
    pub n: usize,
}

/// r_pb of `flags` with `values` (pairs in order); `None` with fewer than
/// three pairs or when either side does not vary.
pub fn point_biserial(flags: &[bool], values: &[f64]) -> Option<PointBiserial> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let n = flags.len().min(values.len());
    if n < 3 {
        return None;
    }
    let x: Vec<f64> = flags[..n].iter().map(|f| f64::from(u8::from(*f))).collect();
    let y = &values[..n];
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n as f64;
    let (mx, my) = (mean(&x), mean(y));
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    let r = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let df = (n - 2) as f64;
    let p = if r.abs() >= 1.0 {
        0.0
    } else {
        let t = r * (df / (1.0 - r * r)).sqrt();
        2.0 * StudentsT::new(0.0, 1.0, df).ok()?.sf(t.abs())
    };
    Some(PointBiserial { r, p, n })
}

/// Seed 004 §4: "The correlation between Coherence Ratio and human
/// agreement (r_pb = 0.24) suggests that our metric captures true semantic
/// split boundaries" (p = 0.21, n = 60). Each pick of a validation study
/// (the generator's category, whether the rater chose it) is paired with
/// the ρ of the split that made that category (its parent's split); picks
/// of coarse categories, which no split makes, are left out.
pub fn rho_agreement(analyses: &[DimensionAnalysis], picks: &[(String, bool)]) -> Option<PointBiserial> {
    let rho_of = |category: &str| {
        analyses.iter().flat_map(|a| &a.splits).find(|s| s.children.iter().any(|c| c == category)).map(|s| s.rho)
    };
    let (flags, values): (Vec<bool>, Vec<f64>) =
        picks.iter().filter_map(|(c, agreed)| Some((*agreed, rho_of(c)?))).unzip();
    point_biserial(&flags, &values)
}

/// Seed 004's granularity figure as SVG: discriminative power by level (2,
/// 4, 8 categories), a line per dimension, the value at each point (labels
/// of close values pushed apart), the legend beside the plot.
pub fn power_chart_svg(title: &str, analyses: &[DimensionAnalysis]) -> String {
    use plotters::prelude::*;
    let palette = crate::CHART_PALETTE;
    let top =
        analyses.iter().flat_map(|a| a.levels.iter().map(|l| l.discriminative_power)).fold(0.0f64, f64::max).max(0.01)
            * 1.25;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (600, 340)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let (plot, legend) = root.split_horizontally(510);
        for (k, a) in analyses.iter().enumerate() {
            let colour = palette[k % palette.len()];
            let y = 60 + 22 * k as i32;
            let _ = legend.draw(&PathElement::new(vec![(4, y), (24, y)], colour.stroke_width(2)));
            let _ = legend.draw(&Circle::new((14, y), 4, colour.filled()));
            let _ = legend.draw(&Text::new(a.dimension.clone(), (30, y - 7), ("sans-serif", 13).into_font()));
        }
        // Value labels: per level, lowest first, each at least `gap` above the last.
        let gap = top * 0.055;
        let mut labels: Vec<(f64, f64, f64)> = Vec::new(); // (x, y, label y)
        let mut xs: Vec<f64> =
            analyses.iter().flat_map(|a| a.levels.iter().map(|l| (l.categories as f64).log2())).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        for x in xs {
            let mut ys: Vec<f64> = analyses
                .iter()
                .flat_map(|a| a.levels.iter())
                .filter(|l| (l.categories as f64).log2() == x)
                .map(|l| l.discriminative_power)
                .collect();
            ys.sort_by(f64::total_cmp);
            let mut last = f64::NEG_INFINITY;
            for y in ys {
                let at = (y + top * 0.03).max(last + gap);
                labels.push((x, y, at));
                last = at;
            }
        }
        if let Ok(mut chart) = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d(0.5f64..3.5f64, 0f64..top)
        {
            let _ = chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(3)
                .x_label_formatter(&|x| match x.round() as i32 {
                    1 => "2".into(),
                    2 => "4".into(),
                    3 => "8".into(),
                    _ => String::new(),
                })
                .x_desc("categories at the level")
                .y_desc("discriminative power (σ of category mean CS)")
                .axis_desc_style(("sans-serif", 12))
                .draw();
            for (k, a) in analyses.iter().enumerate() {
                let colour = palette[k % palette.len()];
                let points: Vec<(f64, f64)> =
                    a.levels.iter().map(|l| ((l.categories as f64).log2(), l.discriminative_power)).collect();
                let _ = chart.draw_series(std::iter::once(PathElement::new(points.clone(), colour.stroke_width(2))));
                let _ = chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, colour.filled())));
                let _ = chart.draw_series(points.iter().filter_map(|(x, y)| {
                    let (_, _, at) = labels.iter().find(|(lx, ly, _)| lx == x && ly == y)?;
                    Some(Text::new(
                        format!("{y:.3}"),
                        (*x + 0.06, *at),
                        ("sans-serif", crate::CHART_MIN_FONT).into_font().color(&colour),
                    ))
                }));
            }
        }
        let _ = root.present();
    }
    svg
}

/// A dimension's hierarchy as SVG: every category with its questions' mean
/// CS, each split's parent coloured by its Coherence Ratio (green ρ > 2,
/// amber 1–2, red ρ < 1; grey without a split) with ρ written under it.
pub fn tree_svg(a: &DimensionAnalysis) -> String {
    use plotters::prelude::*;
    let means: BTreeMap<&str, (usize, f64)> =
        a.levels.iter().flat_map(|l| l.means.iter().map(|m| (m.category.as_str(), (m.n, m.mean)))).collect();
    // Leaves (the deepest categories) spread across; parents centred above.
    let mut cats: Vec<&str> = means.keys().copied().collect();
    cats.sort();
    let deepest = cats.iter().map(|c| depth(c)).max().unwrap_or(1);
    let leaves: Vec<&str> = cats.iter().copied().filter(|c| depth(c) == deepest).collect();
    let (col, row) = (150i32, 92i32);
    let width = (leaves.len().max(1) as i32 * col + 40).max(420);
    let height = 98 + (deepest as i32 - 1) * row;
    let x_of = |c: &str| -> i32 {
        let under: Vec<usize> = leaves
            .iter()
            .enumerate()
            .filter(|(_, l)| **l == c || l.starts_with(&format!("{c}/")))
            .map(|(i, _)| i)
            .collect();
        let mid = if under.is_empty() { 0.0 } else { under.iter().sum::<usize>() as f64 / under.len() as f64 };
        20 + (mid * col as f64) as i32 + col / 2
    };
    let y_of = |c: &str| 40 + (depth(c) as i32 - 1) * row + 20;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let font = |size: u32| ("sans-serif", size.max(crate::CHART_MIN_FONT)).into_font().color(&BLACK);
        let _ = root.draw(&Text::new(
            format!("{}: mean CS per category; splits coloured by ρ (green > 2, amber 1–2, red < 1)", a.dimension),
            (10, 8),
            font(13),
        ));
        for c in &cats {
            if let Some(parent) = c.rsplit_once('/').map(|p| p.0).filter(|p| means.contains_key(p)) {
                let _ = root.draw(&PathElement::new(
                    vec![(x_of(parent), y_of(parent) + 22), (x_of(c), y_of(c) - 4)],
                    RGBColor(0xbb, 0xbb, 0xbb),
                ));
            }
        }
        for c in &cats {
            let (x, y) = (x_of(c), y_of(c));
            let split = a.splits.iter().find(|s| s.parent == *c);
            let fill = match split.map(|s| s.rho) {
                Some(r) if r > 2.0 => RGBColor(0xc8, 0xe6, 0xc9),
                Some(r) if r < 1.0 => RGBColor(0xf8, 0xc9, 0xc4),
                Some(_) => RGBColor(0xff, 0xe0, 0xa3),
                None => RGBColor(0xee, 0xee, 0xee),
            };
            let _ = root.draw(&Rectangle::new([(x - col / 2 + 6, y - 4), (x + col / 2 - 6, y + 22)], fill.filled()));
            let name = c.rsplit('/').next().unwrap_or(c).replace('_', " ");
            let short: String = name.chars().take(20).collect();
            let (n, mean) = means[c];
            let _ = root.draw(&Text::new(short, (x - col / 2 + 10, y - 1), font(10)));
            let _ = root.draw(&Text::new(format!("CS {mean:.3} · n {n}"), (x - col / 2 + 10, y + 10), font(9)));
            if let Some(s) = split {
                let _ = root.draw(&Text::new(format!("ρ {:.2}", s.rho), (x - 18, y + 26), font(10)));
            }
        }
        let _ = root.present();
    }
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scores for a QC hierarchy (2 coarse, 4 medium, 8 fine categories)
    /// with `per` questions in each category of each level: fine category
    /// k has mean `base + effect · k / 7`, plus uniform noise ±`noise`.
    fn hierarchy(per: usize, effect: f64, noise: f64, seed: u64) -> Vec<Scored> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut out = Vec::new();
        for k in 0..8usize {
            let (coarse, medium) = (k / 4, k / 2);
            let paths =
                [format!("QC/c{coarse}"), format!("QC/c{coarse}/m{medium}"), format!("QC/c{coarse}/m{medium}/f{k}")];
            for path in paths.iter().skip(0) {
                // Each level gets its own questions; coarse and medium ones
                // are shared out over their fine categories.
                let share = match path.matches('/').count() {
                    1 => per.div_ceil(4),
                    2 => per.div_ceil(2),
                    _ => per,
                };
                for _ in 0..share {
                    let mean = 0.5 + effect * k as f64 / 7.0;
                    out.push(Scored { category: path.clone(), score: mean + noise * (2.0 * rng.f64() - 1.0) });
                }
            }
        }
        out
    }

    /// DiscPow, NMI and ρ with bootstrap intervals and a noise
    /// floor; a warning below seed 004's 38 questions per category.
    #[test]
    fn granularity_numbers_carry_intervals_a_noise_floor_and_a_warning() {
        // A real effect at the paper's scale: above the floor, no warning.
        let real = analyse(&hierarchy(40, 0.2, 0.05, 1), 4);
        let qc = &real[0];
        for l in &qc.levels {
            let (lo, hi) = l.power_ci.unwrap();
            assert!(lo <= l.discriminative_power && l.discriminative_power <= hi);
            let (lo, hi) = l.nmi_ci.unwrap();
            assert!(lo <= l.nmi && l.nmi <= hi);
            assert_eq!(
                l.above_floor(),
                Some(true),
                "{} categories: {} vs floor {:?}",
                l.categories,
                l.discriminative_power,
                l.power_floor
            );
            assert!(l.min_per_category >= 40 && l.warning().is_none());
        }
        for sp in &qc.splits {
            let (lo, hi) = sp.rho_ci.unwrap();
            assert!(lo <= sp.rho && sp.rho <= hi);
        }
        let mean = qc.splits.iter().map(|s| s.rho).sum::<f64>() / qc.splits.len() as f64;
        assert!((qc.mean_rho.unwrap() - mean).abs() < 1e-12);
        // No effect at all, 10 per category: the powers are noise. The
        // floor grows with the number of categories — which is why the
        // finest level "wins" on noise alone — and a warning says so.
        let null = analyse(&hierarchy(10, 0.0, 0.2, 2), 4);
        let levels = &null[0].levels;
        assert!(levels.iter().all(|l| l.warning().is_some_and(|w| w.contains("fewer than the HieraRAG paper's 38"))));
        assert!(levels[2].power_floor.unwrap() > levels[0].power_floor.unwrap(), "{levels:?}");
        assert!(levels.iter().filter(|l| l.above_floor() == Some(true)).count() <= 1, "{levels:?}");
        // Seeded: the same scores give the same intervals.
        assert_eq!(analyse(&hierarchy(10, 0.0, 0.2, 2), 4), null);
    }

    /// scipy 1.x `pointbiserialr(b, x)`: r = 0.571320075917926,
    /// p = 0.052325197706321824 (tolerance 1e-9).
    #[test]
    fn point_biserial_equals_scipy() {
        let x = [3.31, 0.4, 0.4, 2.1, 1.2, 0.9, 2.5, 0.3, 1.7, 0.8, 2.2, 0.5];
        let b = [1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1].map(|v| v == 1);
        let r = point_biserial(&b, &x).unwrap();
        assert!((r.r - 0.571320075917926).abs() < 1e-9 && (r.p - 0.052325197706321824).abs() < 1e-9, "{r:?}");
        assert_eq!(r.n, 12);
        assert!(point_biserial(&[true, true, true], &[1.0, 2.0, 3.0]).is_none(), "no variation in the flags");
        // Picks are paired with the ρ of the split that made their category.
        let analyses = analyse(&hierarchy(10, 0.2, 0.05, 3), 4);
        let split = &analyses[0].splits.iter().find(|s| s.parent == "QC/c0").unwrap();
        let other = &analyses[0].splits.iter().find(|s| s.parent == "QC/c1").unwrap();
        let picks = vec![
            (split.children[0].clone(), true),
            (split.children[1].clone(), true),
            (other.children[0].clone(), false),
            (other.children[1].clone(), false),
            ("QC/c0".to_string(), true),
        ];
        let got = rho_agreement(&analyses, &picks).unwrap();
        assert_eq!(got.n, 4, "the coarse pick has no split");
        let want = point_biserial(&[true, true, false, false], &[split.rho, split.rho, other.rho, other.rho]).unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn quantile_bins_and_nmi_equal_numpy_and_scikit_learn() {
        // scripts/refs/metrics_refs.py (numpy, scikit-learn 1.9.1).
        let scores = [0.61, 0.72, 0.55, 0.80, 0.66, 0.59, 0.91, 0.47, 0.70, 0.73, 0.52, 0.88];
        let bins = quantile_bins(&scores, 4);
        assert_eq!(bins, [1, 2, 0, 3, 1, 1, 3, 0, 2, 2, 0, 3]);
        let cats = ["a", "a", "a", "b", "b", "b", "c", "c", "c", "d", "d", "d"];
        assert!((nmi(&cats, &bins) - 0.29085208297275505).abs() < 1e-9);
        assert_eq!(nmi(&["x", "x"], &[0, 0]), 1.0, "one cluster each: a perfect match");
        assert_eq!(nmi(&["x", "y"], &[0, 0]), 0.0);
        assert!((nmi(&["x", "y", "x"], &[5, 6, 5]) - 1.0).abs() < 1e-12);
    }

    /// Seed 004 Table 1's Range is max − min of the coarse categories'
    /// mean CS; a flat dimension (Question Phrasing, 4 coarse categories)
    /// is a level of its own count in the granularity table.
    #[test]
    fn the_coarse_table_has_the_range_and_a_flat_dimension_its_own_count() {
        let q = |c: &str, ap: Option<f64>, cs: f64| (c.to_string(), ap, cs);
        let items = vec![
            q("QC/simple", Some(1.0), 0.8),
            q("QC/simple", Some(0.5), 0.6),
            q("QC/complex", None, 0.5),
            q("QC/simple/single_fact", Some(0.0), 0.1),
            q("LV/similar × QC/simple", Some(0.0), 0.0),
            q("QP/concise", Some(1.0), 0.9),
            q("QP/verbose", Some(1.0), 0.7),
            q("QP/short_query", Some(0.0), 0.4),
            q("QP/long_query", Some(0.0), 0.6),
        ];
        let rows = coarse_table(&items);
        assert_eq!(rows.iter().map(|r| r.dimension.as_str()).collect::<Vec<_>>(), ["QC", "QP"]);
        let qc = &rows[0];
        assert_eq!((qc.categories, qc.questions), (2, 3));
        assert!((qc.map.unwrap() - 0.75).abs() < 1e-12, "the question without a ranking left out");
        assert!((qc.cs - (0.8 + 0.6 + 0.5) / 3.0).abs() < 1e-12);
        assert!((qc.range - (0.7 - 0.5)).abs() < 1e-12);
        let qp = &rows[1];
        assert_eq!((qp.categories, qp.questions), (4, 4));
        assert!((qp.range - 0.5).abs() < 1e-12);
        let scored: Vec<Scored> = items.iter().map(|(c, _, cs)| Scored { category: c.clone(), score: *cs }).collect();
        let analysis = analyse(&scored, 2);
        let qp_levels: Vec<(usize, usize)> = analysis
            .iter()
            .find(|d| d.dimension == "QP")
            .unwrap()
            .levels
            .iter()
            .map(|l| (l.categories, l.depth))
            .collect();
        assert_eq!(qp_levels, [(4, 1)]);
        let qc_levels: Vec<(usize, usize)> = analysis[0].levels.iter().map(|l| (l.categories, l.depth)).collect();
        assert_eq!(qc_levels, [(2, 1), (4, 2)]);
    }

    #[test]
    fn discriminative_power_and_coherence_on_a_hand_made_hierarchy() {
        let s = |c: &str, v: f64| Scored { category: c.into(), score: v };
        let items = [
            s("QC/s", 0.6),
            s("QC/s", 0.6),
            s("QC/c", 0.8),
            s("QC/s/a", 0.5),
            s("QC/s/b", 0.7),
            s("QC/c/d", 0.9),
            s("QC/c/e", 0.9),
            s("LV/x × QC/s", 0.1), // a factorial cell: not a level of either
        ];
        let a = analyse(&items, 2);
        assert_eq!(a.len(), 1);
        let qc = &a[0];
        assert_eq!(qc.levels.iter().map(|l| l.categories).collect::<Vec<_>>(), [2, 4]);
        // Means .6 and .8: σ = 0.1. Means .5, .7, .9, .9: σ = √0.0275.
        assert!((qc.levels[0].discriminative_power - 0.1).abs() < 1e-12);
        assert!((qc.levels[1].discriminative_power - 0.0275f64.sqrt()).abs() < 1e-12);
        assert!((qc.levels[1].change.unwrap() - (0.0275f64.sqrt() - 0.1)).abs() < 1e-12);
        assert_eq!(qc.optimal, Some(4));
        // QC/s: children .5 and .7 (σ .1) around the parent's .6 (δ 0): ρ = 100.
        let s = qc.splits.iter().find(|x| x.parent == "QC/s").unwrap();
        assert!((s.rho - 100.0).abs() < 1e-9 && s.verdict() == "well-structured", "{s:?}");
        // QC/c: equal children (σ 0) away from the parent (δ .1): ρ = 0.
        let c = qc.splits.iter().find(|x| x.parent == "QC/c").unwrap();
        assert!(c.rho.abs() < 1e-12 && (c.delta_vert - 0.1).abs() < 1e-12 && c.verdict() == "poor");
        // Both splits make the 4-category level; none makes the coarsest.
        assert_eq!(splits_into(qc, 4).count(), 2);
        assert_eq!(splits_into(qc, 2).count(), 0);
        assert_eq!(population_std(&[]), 0.0);
        let chart = power_chart_svg("QC", &a);
        assert!(
            chart.starts_with("<svg") && chart.contains("0.100") && chart.contains("0.166"),
            "the values at the points"
        );
        let tree = tree_svg(qc);
        for text in ["ρ 100.00", "ρ 0.00", "CS 0.600 · n 2", "CS 0.900 · n 1"] {
            assert!(tree.contains(text), "{text}");
        }
    }
}

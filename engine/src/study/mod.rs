//! Human studies of generated questions (seed 000 §V-C): which questions a
//! study shows (a seeded draw from each question set, plus optional
//! attention checks), the order each rater sees them in, and the results —
//! mean and 95% interval per dimension per question source and per level,
//! score distributions, and agreement (Fleiss' κ and Krippendorff's α for
//! ordinal data) per dimension.

pub mod hierarag_judging;
pub mod rate;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::agreement::{fleiss_kappa, krippendorff_alpha, Level};

pub use types::study::{CategoryAgreement, Dimension, LlmAgreement};
pub use types::StudyKind as Kind;

/// A kind's dimensions by default.
pub fn kind_dimensions(kind: Kind) -> Vec<Dimension> {
    match kind {
        Kind::Questions => default_dimensions(),
        Kind::Answers => answer_dimensions(),
    }
}

/// Seed 000 §V-C's three dimensions, with its definitions.
pub fn default_dimensions() -> Vec<Dimension> {
    vec![
        Dimension::scale(
            "Comprehensibility",
            "Question grammar and clarity. Low: severe grammatical errors or ambiguity; high: fluent, well-structured and easy to understand.",
            1,
            &["incomprehensible", "hard to follow", "understandable", "clear", "perfectly clear"],
        ),
        Dimension::scale(
            "Specificity",
            "How clearly the question defines its scope, target and requirements. Low: vague or missing key elements; high: clear boundaries and precise wording.",
            1,
            &["vague", "loose", "somewhat specific", "specific", "precise"],
        ),
        Dimension::scale(
            "Answerability",
            "Whether the question can be fully answered from the source text alone. Low: not supported by the text or needs outside knowledge; high: directly and sufficiently answered by the text.",
            1,
            &["not from the text", "barely", "partly", "mostly", "fully from the text"],
        ),
    ]
}

/// The name of an answer-validation study's correctness dimension (what a
/// jury's agreement with the people compares).
pub const CORRECTNESS: &str = "Correctness";

/// The name of the category-pick dimension of an answer-validation study.
pub const CATEGORY: &str = "Category";

/// Seed 004 §2.5's annotation: answer correctness 0–3, hallucination
/// severity 0–2, question answerability 0–3, and the category the rater
/// thinks the question belongs to.
pub fn answer_dimensions() -> Vec<Dimension> {
    vec![
        Dimension::scale(
            CORRECTNESS,
            "Is the answer correct, judged against the source passage? 2 or more is acceptable.",
            0,
            &["wrong", "partly correct", "mostly correct", "fully correct"],
        ),
        Dimension::scale(
            "Hallucination",
            "Does the answer state things the source passage does not support? 0 is hallucination-free.",
            0,
            &["none", "minor", "severe"],
        ),
        Dimension::scale(
            "Answerability",
            "Can the question be answered from the source passage alone?",
            0,
            &["not at all", "barely", "mostly", "fully"],
        ),
        Dimension {
            name: CATEGORY.into(),
            definition: "Which category does the question belong to? Pick the one whose definition fits it best."
                .into(),
            labels: Vec::new(),
            min: 0,
            choice: true,
        },
    ]
}

/// A question a study may show: its id, text, where it came from (the
/// question set's generator or name) and its level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub question_id: i64,
    pub text: String,
    pub source: String,
    pub level: Option<String>,
}

/// `count` of `candidates`, drawn without replacement by a generator seeded
/// with `seed` (all of them when there are fewer), in their original order.
/// The draw is spread evenly over the candidates' levels (15 from a graph
/// set: 5 node, 5 edge, 5 subgraph, as seed 000's study), a level with too
/// few giving its share to the others.
pub fn draw(candidates: &[Candidate], count: usize, seed: u64) -> Vec<Candidate> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut levels: BTreeMap<Option<String>, Vec<usize>> = BTreeMap::new();
    for (i, c) in candidates.iter().enumerate() {
        levels.entry(c.level.clone()).or_default().push(i);
    }
    for group in levels.values_mut() {
        rng.shuffle(group);
    }
    // Round-robin over the levels until `count` are taken or none is left.
    let mut picked = Vec::new();
    let mut groups: Vec<std::collections::VecDeque<usize>> = levels.into_values().map(Into::into).collect();
    while picked.len() < count && groups.iter().any(|g| !g.is_empty()) {
        for g in groups.iter_mut() {
            if picked.len() < count {
                if let Some(i) = g.pop_front() {
                    picked.push(i);
                }
            }
        }
    }
    picked.sort_unstable();
    picked.into_iter().map(|i| candidates[i].clone()).collect()
}

/// The text of attention check `n`: it asks for one score on every dimension.
pub fn attention_check(n: usize) -> (String, u8) {
    let expected = [2u8, 4, 1, 5, 3][n % 5];
    (format!("This is an attention check: please choose {expected} for every dimension of this item."), expected)
}

/// The order (positions into the study's items) a rater sees them in: a
/// shuffle seeded by the rater.
pub fn order_for(rater_seed: u64, items: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items).collect();
    fastrand::Rng::with_seed(rater_seed).shuffle(&mut order);
    order
}

/// A stored item as the results read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: i64,
    pub source: String,
    pub level: Option<String>,
    /// An attention check's expected score (`None` for a real question).
    pub attention: Option<u8>,
    /// The generator's category path (`QC/simple/factual_lookup`), for
    /// the category agreement of an answer-validation study.
    #[serde(default)]
    pub category: Option<String>,
    /// The category paths a choice dimension offers for this item.
    #[serde(default)]
    pub choices: Vec<String>,
}

/// One rating: rater, item, dimension index, score (a choice
/// dimension's: the index of the choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rating {
    pub rater: i64,
    pub item: i64,
    pub dimension: usize,
    pub score: u8,
}

/// Raters a group's ratings must come from before its interval is shown:
/// with fewer, the spread is one or two people's habits, not the
/// population's, and a t interval over a handful of ratings runs off the
/// scale (two ratings of 1 and 5 give −20.4 to 26.4).
pub const MIN_RATERS_FOR_INTERVAL: usize = 3;

/// Mean and 95% interval of a group of ratings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub group: String,
    /// Ratings, and the raters they came from.
    pub n: usize,
    #[serde(default)]
    pub raters: usize,
    pub mean: f64,
    /// mean ± t(0.975, n − 1) · s / √n over the ratings, clipped to the
    /// scale (a mean cannot leave it); `None` with fewer than
    /// [`MIN_RATERS_FOR_INTERVAL`] raters or fewer than 2 ratings.
    pub ci: Option<(f64, f64)>,
    /// Whether the interval was clipped at an end of the scale.
    #[serde(default)]
    pub clipped: bool,
    /// How many ratings gave each point of the scale, lowest first.
    pub distribution: Vec<usize>,
}

/// mean ± t(0.975, n − 1) · s / √n of `scores` (`None` for fewer than 2).
fn t_interval(scores: &[u8], mean: f64) -> Option<(f64, f64)> {
    let n = scores.len();
    (n >= 2).then(|| {
        let sd = (scores.iter().map(|s| (*s as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).map_or(1.96, |d| d.inverse_cdf(0.975));
        let half = t * sd / (n as f64).sqrt();
        (mean - half, mean + half)
    })
}

/// A group's summary from its (rater, score) ratings.
fn summary(group: &str, ratings: &[(i64, u8)], d: &Dimension) -> Option<Summary> {
    if ratings.is_empty() {
        return None;
    }
    let scores: Vec<u8> = ratings.iter().map(|r| r.1).collect();
    let raters = ratings.iter().map(|r| r.0).collect::<std::collections::BTreeSet<_>>().len();
    let n = scores.len();
    let mean = scores.iter().map(|s| *s as f64).sum::<f64>() / n as f64;
    let (lo, hi) = (f64::from(d.min), f64::from(d.max()));
    let raw = t_interval(&scores, mean).filter(|_| raters >= MIN_RATERS_FOR_INTERVAL);
    let clipped = raw.is_some_and(|(l, h)| l < lo || h > hi);
    let ci = raw.map(|(l, h)| (l.max(lo), h.min(hi)));
    let mut distribution = vec![0; d.labels.len()];
    for s in &scores {
        if let Some(slot) = s.checked_sub(d.min).and_then(|i| distribution.get_mut(i as usize)) {
            *slot += 1;
        }
    }
    Some(Summary { group: group.to_string(), n, raters, mean, ci, clipped, distribution })
}

/// Agreement on one dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Fleiss' κ over the items rated by the most common number of raters
    /// (it needs equal numbers), and how many items that is.
    pub fleiss_kappa: Option<f64>,
    pub fleiss_items: usize,
    /// Krippendorff's α, ordinal, over every item with two or more ratings
    /// (nominal for a choice dimension).
    pub krippendorff_alpha: Option<f64>,
}

/// A dimension's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DimensionResults {
    pub dimension: String,
    pub by_source: Vec<Summary>,
    pub by_level: Vec<Summary>,
    pub agreement: Agreement,
}

/// A study's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub raters: usize,
    /// Raters who rated every item of the study.
    pub completed: usize,
    /// Raters left out for missing an attention check.
    pub failed_attention: usize,
    /// The scale dimensions' results.
    pub dimensions: Vec<DimensionResults>,
    /// A choice dimension's agreement among raters (Fleiss' κ over the
    /// categories picked) and with the generator.
    #[serde(default)]
    pub category: Option<(Agreement, Vec<CategoryAgreement>)>,
}

/// The parent of a category path (`QC/simple/x` → `QC/simple`); a coarse
/// category (`QC/simple`) is its own.
fn parent(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some((p, _)) if p.contains('/') => p,
        _ => path,
    }
}

/// The granularity level of a category path: `QC 2 categories` for
/// `QC/simple`, 4 one level down, 8 at the finest.
pub fn level_of(path: &str) -> String {
    let depth = path.matches('/').count();
    let dim = path.split('/').next().unwrap_or("");
    format!("{dim} {} categories", 1usize << depth.min(6))
}

fn agreement_of(per_item: &BTreeMap<i64, Vec<i64>>, domain: &[i64], level: Level) -> Agreement {
    let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
    for v in per_item.values().filter(|v| v.len() >= 2) {
        *sizes.entry(v.len()).or_default() += 1;
    }
    let modal = sizes.iter().max_by_key(|(size, count)| (**count, **size)).map(|(s, _)| *s);
    let fleiss_rows: Vec<Vec<u32>> = per_item
        .values()
        .filter(|v| Some(v.len()) == modal)
        .map(|v| domain.iter().map(|s| v.iter().filter(|x| *x == s).count() as u32).collect())
        .collect();
    let units: Vec<Vec<f64>> = per_item.values().map(|v| v.iter().map(|s| *s as f64).collect()).collect();
    let domain_f: Vec<f64> = domain.iter().map(|d| *d as f64).collect();
    Agreement {
        fleiss_kappa: fleiss_kappa(&fleiss_rows),
        fleiss_items: fleiss_rows.len(),
        krippendorff_alpha: krippendorff_alpha(&units, level, Some(&domain_f)),
    }
}

/// Ratings by raters who passed every attention check, of real items.
fn kept<'a>(items: &BTreeMap<i64, &Item>, ratings: &'a [Rating]) -> (Vec<&'a Rating>, usize) {
    let failed: std::collections::BTreeSet<i64> = ratings
        .iter()
        .filter(|r| items.get(&r.item).and_then(|i| i.attention).is_some_and(|e| e != r.score))
        .map(|r| r.rater)
        .collect();
    let kept = ratings
        .iter()
        .filter(|r| !failed.contains(&r.rater) && items.get(&r.item).is_some_and(|i| i.attention.is_none()))
        .collect();
    (kept, failed.len())
}

/// The results of a study from its items, dimensions and ratings. Raters
/// who gave an attention check another score than it asked for are left
/// out of everything (and counted).
pub fn results(items: &[Item], dimensions: &[Dimension], ratings: &[Rating]) -> Results {
    let by_id: BTreeMap<i64, &Item> = items.iter().map(|i| (i.id, i)).collect();
    let raters: std::collections::BTreeSet<i64> = ratings.iter().map(|r| r.rater).collect();
    let mut rated: BTreeMap<i64, std::collections::BTreeSet<i64>> = BTreeMap::new();
    for r in ratings {
        rated.entry(r.rater).or_default().insert(r.item);
    }
    let completed = rated.values().filter(|s| s.len() == items.len()).count();
    let (kept, failed) = kept(&by_id, ratings);
    let mut dimension_results = Vec::new();
    let mut category = None;
    for (d, dim) in dimensions.iter().enumerate() {
        let of_d: Vec<&&Rating> = kept.iter().filter(|r| r.dimension == d).collect();
        if dim.choice {
            category = Some(category_results(&by_id, &of_d));
            continue;
        }
        let mut sources: BTreeMap<String, Vec<(i64, u8)>> = BTreeMap::new();
        let mut levels: BTreeMap<String, Vec<(i64, u8)>> = BTreeMap::new();
        let mut per_item: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        for r in &of_d {
            let item = by_id[&r.item];
            sources.entry(item.source.clone()).or_default().push((r.rater, r.score));
            levels.entry(item.level.clone().unwrap_or_else(|| "(none)".into())).or_default().push((r.rater, r.score));
            per_item.entry(r.item).or_default().push(r.score as i64);
        }
        let domain: Vec<i64> = (dim.min..=dim.max()).map(i64::from).collect();
        dimension_results.push(DimensionResults {
            dimension: dim.name.clone(),
            by_source: sources.iter().filter_map(|(g, s)| summary(g, s, dim)).collect(),
            by_level: levels.iter().filter_map(|(g, s)| summary(g, s, dim)).collect(),
            agreement: agreement_of(&per_item, &domain, Level::Ordinal),
        });
    }
    Results { raters: raters.len(), completed, failed_attention: failed, dimensions: dimension_results, category }
}

/// Every category any item offers, sorted: a pick's label is its position here.
fn category_names<'a>(items: impl IntoIterator<Item = &'a Item>) -> Vec<String> {
    let mut names: Vec<String> = items.into_iter().flat_map(|i| i.choices.iter().cloned()).collect();
    names.sort();
    names.dedup();
    names
}

fn category_results(items: &BTreeMap<i64, &Item>, ratings: &[&&Rating]) -> (Agreement, Vec<CategoryAgreement>) {
    // Raters' agreement: the categories picked, as labels.
    let names = category_names(items.values().copied());
    let code = |item: &Item, score: u8| -> Option<i64> {
        let picked = item.choices.get(score as usize)?;
        names.binary_search(picked).ok().map(|i| i as i64)
    };
    let mut per_item: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    let mut groups: BTreeMap<String, [f64; 5]> = BTreeMap::new();
    for r in ratings {
        let item = items[&r.item];
        if let Some(c) = code(item, r.score) {
            per_item.entry(r.item).or_default().push(c);
        }
        let (Some(label), Some(picked)) = (item.category.as_deref(), item.choices.get(r.score as usize)) else {
            continue;
        };
        let k = item.choices.len().max(1) as f64;
        let siblings = if parent(label) == label {
            1
        } else {
            item.choices.iter().filter(|c| parent(c) == parent(label)).count().max(1)
        };
        let row = [
            1.0,
            (picked == label) as u8 as f64,
            (picked == label || (parent(label) != label && parent(picked) == parent(label))) as u8 as f64,
            1.0 / k,
            siblings as f64 / k,
        ];
        for g in ["all".to_string(), level_of(label)] {
            let acc = groups.entry(g).or_default();
            for (a, x) in acc.iter_mut().zip(row) {
                *a += x;
            }
        }
    }
    let domain: Vec<i64> = (0..names.len() as i64).collect();
    let agreement = agreement_of(&per_item, &domain, Level::Nominal);
    let mut rows: Vec<CategoryAgreement> = groups
        .into_iter()
        .map(|(group, [n, exact, parent, ec, pc])| CategoryAgreement {
            group,
            picks: n as usize,
            exact: exact / n,
            parent: parent / n,
            exact_chance: ec / n,
            parent_chance: pc / n,
        })
        .collect();
    // "all" first, then the levels in order.
    rows.sort_by_key(|r| (r.group != "all", r.group.clone()));
    (agreement, rows)
}

/// The LLM rater's agreement with the human raters, per dimension; `llm`
/// holds the LLM's ratings (its `rater` field is ignored).
pub fn llm_agreement(items: &[Item], dimensions: &[Dimension], humans: &[Rating], llm: &[Rating]) -> Vec<LlmAgreement> {
    use crate::agreement::{cohen_kappa, spearman, Weights};
    let by_id: BTreeMap<i64, &Item> = items.iter().map(|i| (i.id, i)).collect();
    let (kept, _) = kept(&by_id, humans);
    let names = category_names(items);
    dimensions
        .iter()
        .enumerate()
        .map(|(d, dim)| {
            // For a choice, compare the categories picked, not positions.
            let value = |r: &Rating| -> Option<i64> {
                let item = by_id.get(&r.item)?;
                if dim.choice {
                    let picked = item.choices.get(r.score as usize)?;
                    names.binary_search(picked).ok().map(|i| i as i64)
                } else {
                    Some(r.score as i64)
                }
            };
            let machine: BTreeMap<i64, i64> = llm
                .iter()
                .filter(|r| r.dimension == d && by_id.get(&r.item).is_some_and(|i| i.attention.is_none()))
                .filter_map(|r| Some((r.item, value(r)?)))
                .collect();
            let mut per_item: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            let mut per_human: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
            for r in kept.iter().filter(|r| r.dimension == d) {
                let (Some(v), Some(m)) = (value(r), machine.get(&r.item)) else { continue };
                per_item.entry(r.item).or_default().push(v);
                per_human.entry(r.rater).or_default().push((*m, v));
            }
            let (mut xs, mut ys, mut same) = (Vec::new(), Vec::new(), 0usize);
            for (item, v) in &per_item {
                let m = machine[item];
                xs.push(m as f64);
                ys.push(v.iter().sum::<i64>() as f64 / v.len() as f64);
                let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
                for x in v {
                    *counts.entry(*x).or_default() += 1;
                }
                let top = counts.values().copied().max().unwrap_or(0);
                same += counts.get(&m).is_some_and(|c| *c == top) as usize;
            }
            let weights = if dim.choice { Weights::None } else { Weights::Quadratic };
            let kappas: Vec<f64> = per_human
                .values()
                .filter(|pairs| pairs.len() >= 2)
                .filter_map(|pairs| {
                    let (a, b): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
                    cohen_kappa(&a, &b, weights)
                })
                .collect();
            LlmAgreement {
                dimension: dim.name.clone(),
                items: per_item.len(),
                spearman: if dim.choice { None } else { spearman(&xs, &ys).map(|(rho, _)| rho) },
                kappa: (!kappas.is_empty()).then(|| kappas.iter().sum::<f64>() / kappas.len() as f64),
                humans: kappas.len(),
                exact: if per_item.is_empty() { 0.0 } else { same as f64 / per_item.len() as f64 },
            }
        })
        .collect()
}

/// Seed 000 Fig. 11 as SVG: per dimension, a bar per question source with
/// its mean score and 95% interval, the value written above; the axis runs
/// over the dimensions' scales (1–5 for Likert, 0–3 for answer ratings).
pub fn chart_svg(title: &str, dimensions: &[Dimension], results: &Results) -> String {
    use plotters::prelude::*;
    let scales: Vec<&Dimension> = dimensions.iter().filter(|d| !d.choice).collect();
    let lo = scales.iter().map(|d| d.min).min().unwrap_or(1) as f64;
    let hi = (scales.iter().map(|d| d.max()).max().unwrap_or(5) as f64).max(lo + 1.0);
    let sources: Vec<String> = {
        let mut s: Vec<String> =
            results.dimensions.iter().flat_map(|d| d.by_source.iter().map(|x| x.group.clone())).collect();
        s.sort();
        s.dedup();
        s
    };
    let palette = [
        RGBColor(0x4e, 0x79, 0xa7),
        RGBColor(0xf2, 0x8e, 0x2b),
        RGBColor(0x59, 0xa1, 0x4f),
        RGBColor(0xb0, 0x7a, 0xa1),
    ];
    let (group_w, plot_h, left, top) = (60 + 46 * sources.len().max(1) as i32, 240i32, 50i32, 70i32);
    let width = (left + group_w * results.dimensions.len().max(1) as i32 + 20).max(480);
    let height = top + plot_h + 50;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let font = |size: u32| ("sans-serif", size.max(crate::CHART_MIN_FONT)).into_font().color(&BLACK);
        let _ = root.draw(&Text::new(title.to_string(), (12, 8), font(15)));
        let mut x = left;
        for (k, s) in sources.iter().enumerate() {
            let _ = root.draw(&Rectangle::new([(x, 34), (x + 12, 46)], palette[k % palette.len()].filled()));
            let _ = root.draw(&Text::new(s.clone(), (x + 16, 34), font(11)));
            x += 28 + 7 * s.chars().count() as i32;
        }
        let y_of = |v: f64| top + plot_h - (((v - lo) / (hi - lo)).clamp(0.0, 1.0) * plot_h as f64).round() as i32;
        for tick in lo as i32..=hi as i32 {
            let y = y_of(tick as f64);
            let _ = root.draw(&PathElement::new(vec![(left, y), (width - 10, y)], RGBColor(0xdd, 0xdd, 0xdd)));
            let _ = root.draw(&Text::new(tick.to_string(), (left - 16, y - 6), font(10)));
        }
        if results.dimensions.iter().all(|d| d.by_source.is_empty()) {
            let _ = root.draw(&Text::new("no ratings yet".to_string(), (left + 10, top + plot_h / 2), font(13)));
        }
        for (g, d) in results.dimensions.iter().enumerate() {
            let x0 = left + g as i32 * group_w + 20;
            let _ = root.draw(&Text::new(d.dimension.clone(), (x0, top + plot_h + 10), font(12)));
            for (k, s) in sources.iter().enumerate() {
                let Some(sum) = d.by_source.iter().find(|x| &x.group == s) else { continue };
                let bx = x0 + k as i32 * 46;
                let _ = root.draw(&Rectangle::new(
                    [(bx, y_of(sum.mean)), (bx + 36, y_of(lo))],
                    palette[k % palette.len()].filled(),
                ));
                if let Some((lo, hi)) = sum.ci {
                    let c = bx + 18;
                    let ink = RGBColor(0x33, 0x33, 0x33);
                    if y_of(lo) != y_of(hi) {
                        let _ = root.draw(&PathElement::new(vec![(c, y_of(lo)), (c, y_of(hi))], ink));
                    }
                    for v in [lo, hi] {
                        let _ = root.draw(&PathElement::new(vec![(c - 6, y_of(v)), (c + 6, y_of(v))], ink));
                    }
                }
                let _ = root.draw(&Text::new(
                    format!("{:.2}", sum.mean),
                    (bx + 4, y_of(sum.ci.map_or(sum.mean, |c| c.1)) - 14),
                    font(10),
                ));
            }
        }
        let _ = root.present();
    }
    svg
}

/// Registers the study's offline task: the LLM rater.
pub fn register_offline(p: &mut crate::llm::offline::OfflineProvider) {
    p.register(rate::PURPOSE, rate::offline);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates(n: usize, source: &str) -> Vec<Candidate> {
        (0..n)
            .map(|i| Candidate { question_id: i as i64, text: format!("Q{i}?"), source: source.into(), level: None })
            .collect()
    }

    #[test]
    fn draws_are_seeded_without_replacement_and_orders_differ_by_rater() {
        let c = candidates(40, "graph");
        let a = draw(&c, 15, 7);
        assert_eq!(a.len(), 15);
        assert_eq!(a, draw(&c, 15, 7), "the same seed, the same questions");
        assert_ne!(a, draw(&c, 15, 8));
        let ids: std::collections::BTreeSet<i64> = a.iter().map(|q| q.question_id).collect();
        assert_eq!(ids.len(), 15, "no question twice");
        assert_eq!(draw(&c, 100, 1).len(), 40);
        // Spread over levels: 15 of 40 (node 20, edge 15, subgraph 5) → 5 each.
        let levelled: Vec<Candidate> = c
            .iter()
            .enumerate()
            .map(|(i, q)| Candidate {
                level: Some(
                    if i < 20 {
                        "node"
                    } else if i < 35 {
                        "edge"
                    } else {
                        "subgraph"
                    }
                    .into(),
                ),
                ..q.clone()
            })
            .collect();
        let spread = draw(&levelled, 15, 3);
        for level in ["node", "edge", "subgraph"] {
            assert_eq!(spread.iter().filter(|q| q.level.as_deref() == Some(level)).count(), 5, "{level}");
        }
        // 18 of them: subgraph has only 5, the others share the rest.
        let more = draw(&levelled, 18, 3);
        assert_eq!(more.iter().filter(|q| q.level.as_deref() == Some("subgraph")).count(), 5);
        assert_eq!(more.len(), 18);
        let (o1, o2) = (order_for(1, 30), order_for(2, 30));
        assert_ne!(o1, o2);
        let mut sorted = o1.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..30).collect::<Vec<_>>(), "a permutation");
    }

    #[test]
    fn results_average_per_source_with_a_t_interval_and_leave_out_failed_attention() {
        let items = vec![
            Item {
                id: 1,
                source: "graph".into(),
                level: Some("node".into()),
                attention: None,
                category: None,
                choices: vec![],
            },
            Item {
                id: 2,
                source: "graph".into(),
                level: Some("edge".into()),
                attention: None,
                category: None,
                choices: vec![],
            },
            Item {
                id: 3,
                source: "summary".into(),
                level: Some("summary".into()),
                attention: None,
                category: None,
                choices: vec![],
            },
            Item { id: 4, source: "check".into(), level: None, attention: Some(2), category: None, choices: vec![] },
        ];
        let r = |rater, item, score| Rating { rater, item, dimension: 0, score };
        let ratings = vec![
            r(1, 1, 5),
            r(1, 2, 4),
            r(1, 3, 2),
            r(1, 4, 2),
            r(2, 1, 5),
            r(2, 2, 5),
            r(2, 3, 3),
            r(2, 4, 2),
            r(3, 1, 5),
            r(3, 2, 4),
            r(3, 3, 2),
            r(3, 4, 2),
            // Rater 4 missed the check: left out.
            r(4, 1, 1),
            r(4, 2, 1),
            r(4, 3, 5),
            r(4, 4, 5),
        ];
        let dims = &default_dimensions()[..1];
        let res = results(&items, dims, &ratings);
        assert_eq!((res.raters, res.completed, res.failed_attention), (4, 4, 1));
        let d = &res.dimensions[0];
        let graph = &d.by_source[0];
        assert_eq!((graph.group.as_str(), graph.n), ("graph", 6));
        assert!((graph.mean - 28.0 / 6.0).abs() < 1e-12);
        // scipy.stats.t.interval(0.95, 5, loc=x.mean(), scale=scipy.stats.sem(x)), x = [5,4,5,5,5,4]:
        // 4.124740432502177 to 5.208592900831157, its top clipped to the scale's 5.
        let (lo, hi) = graph.ci.unwrap();
        assert!((lo - 4.124740432502177).abs() < 1e-9 && hi == 5.0, "{lo} {hi}");
        assert_eq!(graph.distribution, [0, 0, 0, 2, 4]);
        assert_eq!((graph.raters, graph.clipped), (3, true));
        assert!(res.category.is_none());
        assert_eq!(d.by_source[1].group, "summary");
        assert_eq!(d.by_level.iter().map(|s| s.group.as_str()).collect::<Vec<_>>(), ["edge", "node", "summary"]);
        // Agreement over the three kept raters on three items.
        assert_eq!(d.agreement.fleiss_items, 3);
        let counts = vec![vec![0, 0, 0, 0, 3], vec![0, 0, 0, 2, 1], vec![0, 2, 1, 0, 0]];
        assert_eq!(d.agreement.fleiss_kappa, fleiss_kappa(&counts));
        assert!(d.agreement.krippendorff_alpha.unwrap() > 0.8);
        let svg = chart_svg("Study", dims, &res);
        for text in ["Comprehensibility", "graph", "summary", "4.67", "2.33"] {
            assert!(svg.contains(text), "{text}");
        }
    }

    #[test]
    fn an_interval_needs_three_raters_and_stays_on_the_scale() {
        let items: Vec<Item> = (1..=2)
            .map(|id| Item {
                id,
                source: "graph".into(),
                level: None,
                attention: None,
                category: None,
                choices: vec![],
            })
            .collect();
        let r = |rater, item, score| Rating { rater, item, dimension: 0, score };
        let dims = &default_dimensions()[..1];
        // Two raters, far apart: scipy's t interval of [1, 5, 1, 5] is
        // 3 ± 3.182·2.309/2 = −0.67 to 6.67; with two raters none is shown.
        let two = vec![r(1, 1, 1), r(1, 2, 5), r(2, 1, 1), r(2, 2, 5)];
        let s = &results(&items, dims, &two).dimensions[0].by_source[0];
        assert_eq!((s.n, s.raters, s.ci), (4, 2, None));
        // A third rater: shown, clipped to 1–5 (raw 0.70 to 5.30 for
        // [1,5,1,5,1,5], scipy.stats.t.interval(0.95, 5, 3, sem)).
        let three = [two, vec![r(3, 1, 1), r(3, 2, 5)]].concat();
        let s = &results(&items, dims, &three).dimensions[0].by_source[0];
        assert_eq!((s.n, s.raters, s.ci, s.clipped), (6, 3, Some((1.0, 5.0)), true));
        // Within the scale, nothing is clipped.
        let near = vec![r(1, 1, 3), r(1, 2, 4), r(2, 1, 4), r(2, 2, 4), r(3, 1, 3), r(3, 2, 4)];
        let s = &results(&items, dims, &near).dimensions[0].by_source[0];
        let (lo, hi) = s.ci.unwrap();
        assert!(!s.clipped && lo > 1.0 && hi < 5.0 && lo < s.mean && s.mean < hi);
    }

    fn item(id: i64, category: &str, choices: &[&str]) -> Item {
        Item {
            id,
            source: "reference".into(),
            level: Some(level_of(category)),
            attention: None,
            category: Some(category.into()),
            choices: choices.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn category_picks_agree_exactly_or_by_parent_against_chance() {
        let fine = ["QC/simple/a", "QC/simple/b", "QC/complex/c", "QC/complex/d"];
        let items = vec![item(1, "QC/simple/a", &fine), item(2, "QC/simple", &["QC/simple", "QC/complex"])];
        let dims = answer_dimensions();
        let pick = |rater, item, score| Rating { rater, item, dimension: 3, score };
        let mut ratings =
            vec![pick(1, 1, 0), pick(2, 1, 1), pick(3, 1, 2), pick(1, 2, 0), pick(2, 2, 1), pick(3, 2, 0)];
        for r in 1..=3 {
            ratings.push(Rating { rater: r, item: 1, dimension: 0, score: 3 });
        }
        let res = results(&items, &dims, &ratings);
        assert_eq!(res.dimensions.len(), 3, "the scale dimensions only");
        let corr = &res.dimensions[0];
        assert_eq!(corr.by_source[0].distribution, vec![0, 0, 0, 3], "0–3: four points");
        let (agreement, rows) = res.category.unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // all: 6 picks; exact a, simple, simple → 3; parent adds b → 4.
        let all = &rows[0];
        assert_eq!((all.group.as_str(), all.picks), ("all", 6));
        assert!(close(all.exact, 0.5) && close(all.parent, 4.0 / 6.0), "{all:?}");
        assert!(close(all.exact_chance, 0.375) && close(all.parent_chance, 0.5), "{all:?}");
        let fine_row = rows.iter().find(|r| r.group == "QC 4 categories").unwrap();
        assert!(close(fine_row.exact, 1.0 / 3.0) && close(fine_row.parent, 2.0 / 3.0));
        let coarse = rows.iter().find(|r| r.group == "QC 2 categories").unwrap();
        assert!(close(coarse.exact, 2.0 / 3.0) && close(coarse.parent, coarse.exact), "coarse: exact only");
        assert_eq!(agreement.fleiss_items, 2);
        assert!(agreement.fleiss_kappa.is_some());
    }

    #[test]
    fn an_llm_rater_is_compared_with_each_human() {
        let items: Vec<Item> = (1..=5).map(|i| item(i, "QC/simple", &["QC/simple", "QC/complex"])).collect();
        let dims = answer_dimensions();
        let (l, a, b) = ([3u8, 2, 1, 1, 2], [3u8, 2, 0, 1, 3], [3u8, 1, 0, 2, 2]);
        let mut humans = Vec::new();
        let mut llm = Vec::new();
        for i in 0..5 {
            let item = i as i64 + 1;
            humans.push(Rating { rater: 1, item, dimension: 0, score: a[i] });
            humans.push(Rating { rater: 2, item, dimension: 0, score: b[i] });
            llm.push(Rating { rater: 0, item, dimension: 0, score: l[i] });
            // Category: humans pick simple; the LLM agrees on three of five.
            humans.push(Rating { rater: 1, item, dimension: 3, score: 0 });
            llm.push(Rating { rater: 0, item, dimension: 3, score: (i >= 3) as u8 });
        }
        let out = llm_agreement(&items, &dims, &humans, &llm);
        let c = &out[0];
        assert_eq!((c.items, c.humans), (5, 2));
        // scripts/refs/agreement_refs.py: scipy spearmanr, sklearn cohen_kappa_score(weights="quadratic").
        assert!((c.spearman.unwrap() - 0.8651809126974003).abs() < 1e-12, "{c:?}");
        assert!((c.kappa.unwrap() - 0.7129065040650406).abs() < 1e-12, "{c:?}");
        // Humans' most common score per item: 3, {2,1}, 0, {1,2}, {3,2} → the LLM matches on 1, 2, 4, 5.
        assert!((c.exact - 0.8).abs() < 1e-12);
        let cat = &out[3];
        assert_eq!((cat.items, cat.spearman), (5, None));
        assert!((cat.exact - 0.6).abs() < 1e-12);
        assert!(out[1].items == 0 && out[1].kappa.is_none(), "nothing rated on hallucination");
    }
}

//! Human studies of generated questions (seed 000 §V-C): which questions a
//! study shows (a seeded draw from each question set, plus optional
//! attention checks), the order each rater sees them in, and the results —
//! mean and 95% interval per dimension per question source and per level,
//! score distributions, and agreement (Fleiss' κ and Krippendorff's α for
//! ordinal data) per dimension.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::agreement::{fleiss_kappa, krippendorff_alpha, Level};

/// One rated dimension: its name, the definition raters read, and a label
/// for each point of the 5-point scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dimension {
    pub name: String,
    pub definition: String,
    pub labels: [String; 5],
}

/// Seed 000 §V-C's three dimensions, with its definitions.
pub fn default_dimensions() -> Vec<Dimension> {
    let labels = |l: [&str; 5]| l.map(String::from);
    vec![
        Dimension {
            name: "Comprehensibility".into(),
            definition: "Question grammar and clarity. Low: severe grammatical errors or ambiguity; high: fluent, well-structured and easy to understand.".into(),
            labels: labels(["incomprehensible", "hard to follow", "understandable", "clear", "perfectly clear"]),
        },
        Dimension {
            name: "Specificity".into(),
            definition: "How clearly the question defines its scope, target and requirements. Low: vague or missing key elements; high: clear boundaries and precise wording.".into(),
            labels: labels(["vague", "loose", "somewhat specific", "specific", "precise"]),
        },
        Dimension {
            name: "Answerability".into(),
            definition: "Whether the question can be fully answered from the source text alone. Low: not supported by the text or needs outside knowledge; high: directly and sufficiently answered by the text.".into(),
            labels: labels(["not from the text", "barely", "partly", "mostly", "fully from the text"]),
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
}

/// One rating: rater, item, dimension index, score 1–5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rating {
    pub rater: i64,
    pub item: i64,
    pub dimension: usize,
    pub score: u8,
}

/// Mean and 95% interval of a group of ratings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub group: String,
    pub n: usize,
    pub mean: f64,
    /// mean ± t(0.975, n − 1) · s / √n over the ratings (`None` for n < 2).
    pub ci: Option<(f64, f64)>,
    /// How many ratings gave 1, 2, 3, 4, 5.
    pub distribution: [usize; 5],
}

fn summary(group: &str, scores: &[u8]) -> Option<Summary> {
    if scores.is_empty() {
        return None;
    }
    let n = scores.len();
    let mean = scores.iter().map(|s| *s as f64).sum::<f64>() / n as f64;
    let ci = (n >= 2).then(|| {
        let sd = (scores.iter().map(|s| (*s as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).map_or(1.96, |d| d.inverse_cdf(0.975));
        let half = t * sd / (n as f64).sqrt();
        (mean - half, mean + half)
    });
    let mut distribution = [0; 5];
    for s in scores {
        if (1..=5).contains(s) {
            distribution[*s as usize - 1] += 1;
        }
    }
    Some(Summary { group: group.to_string(), n, mean, ci, distribution })
}

/// Agreement on one dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Fleiss' κ over the items rated by the most common number of raters
    /// (it needs equal numbers), and how many items that is.
    pub fleiss_kappa: Option<f64>,
    pub fleiss_items: usize,
    /// Krippendorff's α, ordinal, over every item with two or more ratings.
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
    pub dimensions: Vec<DimensionResults>,
}

/// The results of a study from its items and ratings. Raters who gave an
/// attention check another score than it asked for are left out of
/// everything (and counted).
pub fn results(items: &[Item], dimensions: usize, ratings: &[Rating], names: &[String]) -> Results {
    let by_id: BTreeMap<i64, &Item> = items.iter().map(|i| (i.id, i)).collect();
    let raters: std::collections::BTreeSet<i64> = ratings.iter().map(|r| r.rater).collect();
    let failed: std::collections::BTreeSet<i64> = ratings
        .iter()
        .filter(|r| by_id.get(&r.item).and_then(|i| i.attention).is_some_and(|e| e != r.score))
        .map(|r| r.rater)
        .collect();
    let mut rated: BTreeMap<i64, std::collections::BTreeSet<i64>> = BTreeMap::new();
    for r in ratings {
        rated.entry(r.rater).or_default().insert(r.item);
    }
    let completed = rated.values().filter(|s| s.len() == items.len()).count();
    let kept: Vec<&Rating> = ratings
        .iter()
        .filter(|r| !failed.contains(&r.rater) && by_id.get(&r.item).is_some_and(|i| i.attention.is_none()))
        .collect();
    let dimension_results = (0..dimensions)
        .map(|d| {
            let of_d: Vec<&&Rating> = kept.iter().filter(|r| r.dimension == d).collect();
            let mut sources: BTreeMap<String, Vec<u8>> = BTreeMap::new();
            let mut levels: BTreeMap<String, Vec<u8>> = BTreeMap::new();
            let mut per_item: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
            for r in &of_d {
                let item = by_id[&r.item];
                sources.entry(item.source.clone()).or_default().push(r.score);
                levels.entry(item.level.clone().unwrap_or_else(|| "(none)".into())).or_default().push(r.score);
                per_item.entry(r.item).or_default().push(r.score);
            }
            // Fleiss: the items with the most common number of ratings.
            let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
            for v in per_item.values().filter(|v| v.len() >= 2) {
                *sizes.entry(v.len()).or_default() += 1;
            }
            let modal = sizes.iter().max_by_key(|(size, count)| (**count, **size)).map(|(s, _)| *s);
            let fleiss_rows: Vec<Vec<u32>> = per_item
                .values()
                .filter(|v| Some(v.len()) == modal)
                .map(|v| (1..=5u8).map(|s| v.iter().filter(|x| **x == s).count() as u32).collect())
                .collect();
            let units: Vec<Vec<f64>> = per_item.values().map(|v| v.iter().map(|s| *s as f64).collect()).collect();
            DimensionResults {
                dimension: names.get(d).cloned().unwrap_or_else(|| format!("dimension {d}")),
                by_source: sources.iter().filter_map(|(g, s)| summary(g, s)).collect(),
                by_level: levels.iter().filter_map(|(g, s)| summary(g, s)).collect(),
                agreement: Agreement {
                    fleiss_kappa: fleiss_kappa(&fleiss_rows),
                    fleiss_items: fleiss_rows.len(),
                    krippendorff_alpha: krippendorff_alpha(&units, Level::Ordinal, Some(&[1.0, 2.0, 3.0, 4.0, 5.0])),
                },
            }
        })
        .collect();
    Results { raters: raters.len(), completed, failed_attention: failed.len(), dimensions: dimension_results }
}

/// Seed 000 Fig. 11 as SVG: per dimension, a bar per question source with
/// its mean score (1–5 axis) and 95% interval, the value written above.
pub fn chart_svg(title: &str, results: &Results) -> String {
    use plotters::prelude::*;
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
        let font = |size: u32| ("sans-serif", size).into_font().color(&BLACK);
        let _ = root.draw(&Text::new(title.to_string(), (12, 8), font(15)));
        let mut x = left;
        for (k, s) in sources.iter().enumerate() {
            let _ = root.draw(&Rectangle::new([(x, 34), (x + 12, 46)], palette[k % palette.len()].filled()));
            let _ = root.draw(&Text::new(s.clone(), (x + 16, 34), font(11)));
            x += 28 + 7 * s.chars().count() as i32;
        }
        let y_of = |v: f64| top + plot_h - (((v - 1.0) / 4.0).clamp(0.0, 1.0) * plot_h as f64).round() as i32;
        for tick in 1..=5 {
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
                    [(bx, y_of(sum.mean)), (bx + 36, y_of(1.0))],
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
            Item { id: 1, source: "graph".into(), level: Some("node".into()), attention: None },
            Item { id: 2, source: "graph".into(), level: Some("edge".into()), attention: None },
            Item { id: 3, source: "summary".into(), level: Some("summary".into()), attention: None },
            Item { id: 4, source: "check".into(), level: None, attention: Some(2) },
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
        let res = results(&items, 1, &ratings, &["Comprehensibility".into()]);
        assert_eq!((res.raters, res.completed, res.failed_attention), (4, 4, 1));
        let d = &res.dimensions[0];
        let graph = &d.by_source[0];
        assert_eq!((graph.group.as_str(), graph.n), ("graph", 6));
        assert!((graph.mean - 28.0 / 6.0).abs() < 1e-12);
        // scipy.stats.t.interval(0.95, 5, loc=x.mean(), scale=scipy.stats.sem(x)), x = [5,4,5,5,5,4].
        let (lo, hi) = graph.ci.unwrap();
        assert!((lo - 4.124740432502177).abs() < 1e-9 && (hi - 5.208592900831157).abs() < 1e-9, "{lo} {hi}");
        assert_eq!(graph.distribution, [0, 0, 0, 2, 4]);
        assert_eq!(d.by_source[1].group, "summary");
        assert_eq!(d.by_level.iter().map(|s| s.group.as_str()).collect::<Vec<_>>(), ["edge", "node", "summary"]);
        // Agreement over the three kept raters on three items.
        assert_eq!(d.agreement.fleiss_items, 3);
        let counts = vec![vec![0, 0, 0, 0, 3], vec![0, 0, 0, 2, 1], vec![0, 2, 1, 0, 0]];
        assert_eq!(d.agreement.fleiss_kappa, fleiss_kappa(&counts));
        assert!(d.agreement.krippendorff_alpha.unwrap() > 0.8);
        let svg = chart_svg("Study", &res);
        for text in ["Comprehensibility", "graph", "summary", "4.67", "2.33"] {
            assert!(svg.contains(text), "{text}");
        }
    }
}

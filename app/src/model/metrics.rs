//! Reference-based metrics runs and their report.

use serde::{Deserialize, Serialize};

use super::JobView;

/// Means of a group of questions on the reference-based metrics (retrieval
/// `None` when the method recorded no chunks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsMeansView {
    pub group: String,
    pub n: usize,
    pub map: Option<f64>,
    pub ndcg: Option<f64>,
    pub recall: Option<f64>,
    pub cs: f64,
    pub rouge1: f64,
    pub bleu: f64,
}

/// HieraRAG's Table 3 from a set's per-category means: per dimension, its
/// fine categories (three levels down, factorial cells left out) by CS,
/// highest first — the top two and the bottom two (all of them when there
/// are four or fewer).
pub fn fine_extremes(per_category: &[MetricsMeansView]) -> Vec<(String, Vec<MetricsMeansView>)> {
    let mut by_dim: std::collections::BTreeMap<String, Vec<MetricsMeansView>> = Default::default();
    for c in per_category.iter().filter(|c| c.group.matches('/').count() == 3 && !c.group.contains(" × ")) {
        by_dim.entry(c.group.split('/').next().unwrap_or("").to_string()).or_default().push(c.clone());
    }
    by_dim
        .into_iter()
        .map(|(d, mut v)| {
            v.sort_by(|a, b| b.cs.total_cmp(&a.cs).then_with(|| a.group.cmp(&b.group)));
            if v.len() > 4 {
                v.drain(2..v.len() - 2);
            }
            (d, v)
        })
        .collect()
}

/// One dimension at one level of the granularity analysis (seed 004 Table 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GranularityRow {
    pub dimension: String,
    pub categories: usize,
    pub questions: usize,
    pub power: f64,
    pub change: Option<f64>,
    pub nmi: f64,
    /// 95% bootstrap intervals and noise floors (labels permuted; see
    /// `engine::metrics::granularity::LevelStats`).
    pub power_ci: Option<(f64, f64)>,
    pub power_floor: Option<f64>,
    pub nmi_ci: Option<(f64, f64)>,
    pub nmi_floor: Option<f64>,
    /// Too few questions per category to compare levels, said why.
    pub warning: Option<String>,
    /// The dimension's mean Coherence Ratio (on its first level's row).
    pub mean_rho: Option<f64>,
    /// The level with the highest discriminative power in its dimension.
    pub optimal: bool,
    /// What the page calls it: "optimal" when its interval is above every
    /// other level's discriminative power, else "highest, within …'s reach"
    /// (a label that respects the interval).
    #[serde(default)]
    pub optimal_label: Option<String>,
    /// The Coherence Ratio of each split into this level (a parent one
    /// level up and its children here): `(ρ, verdict)`.
    pub splits_in: Vec<(f64, String)>,
}

/// A split and its Coherence Ratio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitRow {
    pub dimension: String,
    pub parent: String,
    pub children: Vec<String>,
    pub sigma_sib: f64,
    pub delta_vert: f64,
    pub rho: f64,
    pub rho_ci: Option<(f64, f64)>,
    pub verdict: String,
}

/// An answer set's metrics as the Metrics page shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetMetricsView {
    pub answer_set_id: i64,
    pub name: String,
    pub method: String,
    pub overall: MetricsMeansView,
    pub corpus_bleu: f64,
    pub per_category: Vec<MetricsMeansView>,
    pub granularity: Vec<GranularityRow>,
    /// Seed 004 Table 1: per dimension at the coarse level.
    #[serde(default)]
    pub coarse: Vec<CoarseRow>,
    pub splits: Vec<SplitRow>,
    /// The LV × QC table (seed 004 Table 4), when the set has factorial questions.
    pub factorial: Option<FactorialView>,
    /// Discriminative power by level.
    pub power: super::Figure,
    /// One hierarchy drawing per dimension: `(dimension, drawing)`.
    pub trees: Vec<(String, super::Figure)>,
    /// The point-biserial correlation of ρ with human category agreement
    /// (seed 004 §4), when a validation study was drawn from the set:
    /// `(study, r_pb, p, n)`.
    #[serde(default)]
    pub rho_agreement: Option<(i64, f64, f64, usize)>,
}

pub use types::metrics::{CategoryMean, CoarseRow, Group};

/// Seed 004 Table 4: the cells, the main effects (each level pooled), and
/// each factor's effect Δ (largest minus smallest pooled CS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactorialView {
    pub cells: Vec<Group>,
    pub pooled: Vec<Group>,
    pub lv_effect: Option<f64>,
    pub qc_effect: Option<f64>,
}

/// A metrics run as its list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsRunView {
    pub id: i64,
    pub project_id: i64,
    pub question_set_id: i64,
    pub question_set: String,
    /// `(id, "name (method)")` of each answer set scored.
    pub answer_sets: Vec<(i64, String)>,
    pub k: usize,
    pub bins: usize,
    pub relevance_unit: types::RelevanceUnit,
    pub job: Option<JobView>,
    pub finished: bool,
    pub created_at: String,
}

/// A metrics run and, once finished, its report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsRunPage {
    pub run: MetricsRunView,
    pub view: Option<MetricsView>,
}

/// A metrics run: the question set, its settings, each answer set's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsView {
    pub run_id: i64,
    pub question_set_id: i64,
    pub k: usize,
    pub bins: usize,
    pub relevance_unit: types::RelevanceUnit,
    /// Whose definitions, and what that means for the numbers.
    #[serde(default)]
    pub definitions: types::Definitions,
    #[serde(default)]
    pub definitions_note: String,
    pub embedding_model: String,
    pub sets: Vec<SetMetricsView>,
    /// The corpus' documents when the page was drawn: at the document unit
    /// with no more documents than `k`, retrieval metrics say little.
    #[serde(default)]
    pub documents: Option<i64>,
}

impl MetricsView {
    /// Why the retrieval metrics say little here, when they do: the
    /// document unit over a corpus of no more documents than `k`.
    pub fn unit_warning(&self) -> Option<String> {
        let n = self.documents?;
        (self.relevance_unit == types::RelevanceUnit::Document && n <= self.k as i64).then(|| {
            format!(
                "This corpus has {n} document{}, no more than the {} chunks retrieved: at the document unit nearly \
                 every retrieved chunk is of the right document whatever the retriever does, so MAP, nDCG@{k} and \
                 Recall@{k} say little here. The passage or chunk unit tells retrievers apart.",
                if n == 1 { "" } else { "s" },
                self.k,
                k = self.k
            )
        })
    }

    /// The view with its charts linked rather than inline (a page's: the
    /// browser fetches each chart on its own).
    pub fn linked(mut self) -> MetricsView {
        for s in &mut self.sets {
            s.power = super::Figure::Linked;
            for (_, t) in &mut s.trees {
                *t = super::Figure::Linked;
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(group: &str, cs: f64) -> MetricsMeansView {
        MetricsMeansView { group: group.into(), n: 1, map: None, ndcg: None, recall: None, cs, rouge1: 0.0, bleu: 0.0 }
    }

    /// Table 3: per dimension the fine categories' top two and bottom two by CS.
    #[test]
    fn fine_extremes_are_the_top_two_and_bottom_two_fine_categories() {
        let mut cats: Vec<MetricsMeansView> =
            (0..8).map(|i| m(&format!("QC/c{}/m{}/f{i}", i / 4, i / 2), 0.5 + i as f64 / 100.0)).collect();
        cats.push(m("QC/c0", 0.99));
        cats.push(m("LV/s × QC/c0", 0.01));
        cats.extend([m("AT/a/b/x", 0.3), m("AT/a/b/y", 0.4)]);
        let e = fine_extremes(&cats);
        let names =
            |d: usize| e[d].1.iter().map(|c| c.group.rsplit('/').next().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!((e[0].0.as_str(), e[1].0.as_str()), ("AT", "QC"));
        assert_eq!(names(0), ["y", "x"], "four or fewer: all, by CS");
        assert_eq!(names(1), ["f7", "f6", "f1", "f0"]);
    }
}

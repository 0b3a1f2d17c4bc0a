//! HieraRAG's tables: the factorial cells and the coarse categories.

use serde::{Deserialize, Serialize};

/// A cell, or a pooled level: n, MAP (mean AP over the questions that have
/// one) and mean CS; `gap` as the module says (`None` for the first level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub lv: Option<String>,
    pub qc: Option<String>,
    pub n: usize,
    pub map: Option<f64>,
    pub cs: f64,
    pub gap: Option<f64>,
}

/// A category's questions and mean score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryMean {
    pub category: String,
    pub n: usize,
    pub mean: f64,
}

/// One dimension's row of HieraRAG's Table 1 (RQ1, "Coarse-level
/// dimension comparison"): its coarse-level questions, their mean MAP and
/// CS, and the **Range** — max(CS) − min(CS) over the coarse categories'
/// mean CS, as the authors' `analyze_rq2` computes `performance_range`
/// (not the discriminative power: the paper notes Range ≠ DiscPow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoarseRow {
    pub dimension: String,
    pub categories: usize,
    pub questions: usize,
    /// Over the questions whose method recorded a ranking.
    pub map: Option<f64>,
    pub cs: f64,
    pub range: f64,
    pub means: Vec<CategoryMean>,
}

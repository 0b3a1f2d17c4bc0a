//! Human studies: the dimensions rated, and agreement figures.

use serde::{Deserialize, Serialize};

/// One rated dimension: its name, the definition raters read, and a label
/// for each point of its scale — points score `min`, `min + 1`, … (Zeng
/// et al.'s Likert scales run 1–5; HieraRAG's answer ratings 0–3 and 0–2). A
/// `choice` dimension has no scale: the rater picks one of the item's own
/// choices (the category a question belongs to), scored by its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dimension {
    pub name: String,
    pub definition: String,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default = "one")]
    pub min: u8,
    #[serde(default)]
    pub choice: bool,
}

fn one() -> u8 {
    1
}

impl Dimension {
    /// A scale dimension whose points score `min`, `min + 1`, ….
    pub fn scale(name: &str, definition: &str, min: u8, labels: &[&str]) -> Dimension {
        Dimension {
            name: name.into(),
            definition: definition.into(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
            min,
            choice: false,
        }
    }

    /// The highest score (for a choice dimension: the last choice's index).
    pub fn max(&self) -> u8 {
        self.min + self.labels.len().saturating_sub(1) as u8
    }

    /// Whether `score` is a point of this dimension (a choice dimension:
    /// an index into the item's `choices` of length `choices`).
    pub fn accepts(&self, score: u8, choices: usize) -> bool {
        if self.choice {
            (score as usize) < choices
        } else {
            (self.min..=self.max()).contains(&score)
        }
    }
}

/// How often raters picked the generator's category (HieraRAG §2.5),
/// overall and per granularity level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryAgreement {
    /// "all", or a level such as "QC 8 categories".
    pub group: String,
    /// Picks of items with a generator label.
    pub picks: usize,
    /// Share of picks equal to the generator's category.
    pub exact: f64,
    /// Share of picks equal to it or a sibling under the same parent
    /// category (at the coarse level, where the parent is the dimension
    /// itself, only the exact category counts).
    pub parent: f64,
    /// What picking at random would give: the mean of 1 / choices, and of
    /// (choices under the label's parent) / choices.
    pub exact_chance: f64,
    pub parent_chance: f64,
}

/// How an LLM rater's scores agree with the humans' on one dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmAgreement {
    pub dimension: String,
    /// Items both the LLM and at least one (kept) human rated.
    pub items: usize,
    /// Spearman's ρ between the LLM's score and the humans' mean score per
    /// item (`None` for a choice dimension or fewer than 3 items).
    pub spearman: Option<f64>,
    /// Cohen's κ between the LLM and each human over the items both rated
    /// (quadratic weights on a scale, none on a choice), averaged over the
    /// humans, and how many humans that is.
    pub kappa: Option<f64>,
    pub humans: usize,
    /// Share of items where the LLM gave the humans' most common score.
    pub exact: f64,
}

/// One line of [`Analysis::rows`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureRow {
    pub figure: String,
    pub as_published: Option<f64>,
    pub authors: Option<f64>,
    pub standard: Option<f64>,
    pub source: String,
}

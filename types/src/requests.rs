//! What a stage is asked to do, declared once for its three entry points:
//! the page's form (the server function takes the request whole, its
//! fields named `req[trials]`, …), the CLI (`#[command(flatten)]`, with the
//! `cli` feature) and the experiment manifest (the stage's table). A new
//! setting is a field here; `validate` is the one place its range is
//! checked. Which sets a stage works on is the caller's (ids on a form,
//! names on the command line, positions in a manifest), not the request's.

use serde::{Deserialize, Serialize};

use crate::{
    defaults, Definitions, JudgeKind, JudgePrompt, LegacyAspects, Protocol, RelevanceUnit, StudyKind, Tokenizer,
};

/// A request's setting out of range: the field, as the form, the CLI and
/// the manifest name it, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfRange {
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for OutOfRange {}

/// How an evaluation judges: the protocol (the Unbiased GraphRAG
/// Evaluation paper's, the legacy one, or both), its trials and
/// corrections, who judges and with which prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct EvaluationRequest {
    /// unbiased (length alignment, position exchange, trials), legacy (one
    /// verdict per question, as LightRAG and GraphRAG judge) or both.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Protocol::Both))]
    pub protocol: Protocol,
    /// Whole judgments repeated as independent draws (M).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::TRIALS))]
    #[serde(deserialize_with = "read::trials")]
    pub trials: u32,
    /// Judgments per order in each trial (N).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::REPEATS))]
    #[serde(deserialize_with = "read::repeats")]
    pub repeats: u32,
    /// Length alignment's tolerance in words.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::TOLERANCE))]
    #[serde(deserialize_with = "read::tolerance")]
    pub tolerance: usize,
    /// Regenerations before the forced append.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::ADJUSTMENTS))]
    #[serde(deserialize_with = "read::adjustments")]
    pub adjustments: u32,
    /// Length alignment (`--no-align` switches it off, to see what it removes).
    #[cfg_attr(feature = "cli", arg(long = "no-align", action = clap::ArgAction::SetFalse))]
    pub align: bool,
    /// Position exchange, AB and BA (`--no-exchange`: A is always shown first).
    #[cfg_attr(feature = "cli", arg(long = "no-exchange", action = clap::ArgAction::SetFalse))]
    pub exchange: bool,
    /// llm (the configured provider), offline (the rubric judge) or
    /// simulated (the bias lab).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = JudgeKind::Llm))]
    pub judge: JudgeKind,
    /// Simulated judge: points added to each aspect of the answer shown first.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::POSITION_BIAS, allow_negative_numbers = true))]
    #[serde(deserialize_with = "read::position_bias")]
    pub position_bias: f64,
    /// Simulated judge: points per 10 words the answer is longer than the other.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::LENGTH_BIAS, allow_negative_numbers = true))]
    #[serde(deserialize_with = "read::length_bias")]
    pub length_bias: f64,
    /// Simulated judge: standard deviation of the noise, in points.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::NOISE, allow_negative_numbers = true))]
    #[serde(deserialize_with = "read::noise")]
    pub noise: f64,
    /// Simulated judge: the noise's seed.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    #[serde(deserialize_with = "read::seed")]
    pub seed: u64,
    /// The scoring prompt: paper (the paper's rubric, the default) or
    /// content-only (adds "order and length are not merits").
    #[cfg_attr(feature = "cli", arg(long, default_value_t = JudgePrompt::Paper))]
    pub judge_prompt: JudgePrompt,
    /// The judge's temperature (0–2). Left out: none is sent, the model's
    /// own default.
    #[cfg_attr(feature = "cli", arg(long))]
    pub judge_temperature: Option<f32>,
    /// The legacy protocol's aspects: lightrag (LightRAG's 3, the default)
    /// or graphrag (the GraphRAG paper's 4, with Directness).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = LegacyAspects::Lightrag))]
    pub legacy_aspects: LegacyAspects,
    /// Sequential trials: judge each pair look by look (M split into up
    /// to 5 looks) and stop it once its verdict is settled.
    #[cfg_attr(feature = "cli", arg(long))]
    pub sequential: bool,
    /// A jury: judges besides the first, each a spec — offline, llm:MODEL
    /// (another model at the configured endpoint), simulated or
    /// simulated:position=0.6,length=0,noise=1,seed=3 — `;`-separated on
    /// the command line and the form. Each judges every unbiased item; the
    /// headline is their mean score.
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ';'))]
    #[serde(deserialize_with = "specs")]
    pub jury: Vec<String>,
}

impl Default for EvaluationRequest {
    fn default() -> EvaluationRequest {
        EvaluationRequest {
            protocol: Protocol::Both,
            trials: defaults::TRIALS,
            repeats: defaults::REPEATS,
            tolerance: defaults::TOLERANCE,
            adjustments: defaults::ADJUSTMENTS,
            align: true,
            exchange: true,
            judge: JudgeKind::Llm,
            position_bias: defaults::POSITION_BIAS,
            length_bias: defaults::LENGTH_BIAS,
            noise: defaults::NOISE,
            seed: 0,
            judge_prompt: JudgePrompt::Paper,
            judge_temperature: None,
            legacy_aspects: LegacyAspects::Lightrag,
            sequential: false,
            jury: Vec::new(),
        }
    }
}

impl EvaluationRequest {
    /// Every range and combination the request must respect, checked here
    /// once for the form, the CLI, the manifest and stored settings. The
    /// jurors' specs are read by the engine, which knows them.
    pub fn validate(&self) -> Result<(), OutOfRange> {
        let bad = |field, message: String| Err(OutOfRange { field, message });
        let unbiased = self.protocol.unbiased();
        if unbiased && !(1..=1000).contains(&self.trials) {
            return bad("trials", format!("must be a whole number from 1 to 1000, not {}", self.trials));
        }
        if unbiased && !(1..=20).contains(&self.repeats) {
            return bad("repeats", format!("must be a whole number from 1 to 20, not {}", self.repeats));
        }
        if self.tolerance > 10_000 {
            return bad("tolerance", format!("must be at most 10000 words, not {}", self.tolerance));
        }
        if self.adjustments > 10 {
            return bad("adjustments", format!("must be at most 10, not {}", self.adjustments));
        }
        for (field, v, low) in [
            ("position_bias", self.position_bias, -5.0),
            ("length_bias", self.length_bias, -5.0),
            ("noise", self.noise, 0.0),
        ] {
            if !v.is_finite() || !(low..=5.0).contains(&v) {
                return bad(field, format!("must be a number from {low} to 5, not {v}"));
            }
        }
        if let Some(t) = self.judge_temperature.filter(|t| !t.is_finite() || !(0.0..=2.0).contains(t)) {
            return bad("judge_temperature", format!("must be from 0 to 2, not {t}"));
        }
        if self.sequential && !unbiased {
            return bad("sequential", "needs the unbiased protocol: the legacy one has no trials".into());
        }
        let jurors = self.jury.iter().filter(|s| !s.trim().is_empty()).count();
        if jurors > 0 && !unbiased {
            return bad("jury", "judges the unbiased protocol's items: choose unbiased or both".into());
        }
        if jurors + 1 > defaults::MOST_JUDGES {
            return bad(
                "jury",
                format!(
                    "has at most {} judges, the first among them: {jurors} jurors is too many",
                    defaults::MOST_JUDGES
                ),
            );
        }
        Ok(())
    }
}

/// How a project's knowledge graph is extracted from its chunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct GraphRequest {
    /// Follow-up turns asking the model for missed entities (0–5).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::GLEANING))]
    #[serde(deserialize_with = "read::gleaning")]
    pub gleaning: u32,
    /// The entity types to extract, comma-separated on the command line
    /// and the form (case and spaces do not matter).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_values_t = defaults::ENTITY_TYPES.map(String::from)))]
    #[serde(deserialize_with = "names")]
    pub entity_types: Vec<String>,
    /// Merged descriptions longer than this many tokens are summarised by
    /// the LLM (at least 50).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::SUMMARY_BUDGET))]
    #[serde(deserialize_with = "read::summary_budget")]
    pub summary_budget: usize,
}

impl Default for GraphRequest {
    fn default() -> GraphRequest {
        GraphRequest {
            gleaning: defaults::GLEANING,
            entity_types: defaults::ENTITY_TYPES.map(String::from).to_vec(),
            summary_budget: defaults::SUMMARY_BUDGET,
        }
    }
}

impl GraphRequest {
    /// The request as extraction uses it: entity types trimmed, lower
    /// case, each once; then checked ([`GraphRequest::validate`]).
    pub fn checked(mut self) -> Result<GraphRequest, OutOfRange> {
        let mut seen = Vec::new();
        for t in self.entity_types.iter().map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()) {
            if !seen.contains(&t) {
                seen.push(t);
            }
        }
        self.entity_types = seen;
        self.validate()?;
        Ok(self)
    }

    pub fn validate(&self) -> Result<(), OutOfRange> {
        let bad = |field, message: String| Err(OutOfRange { field, message });
        if self.gleaning > 5 {
            return bad("gleaning", format!("is at most 5 turns, not {}", self.gleaning));
        }
        if self.entity_types.iter().all(|t| t.trim().is_empty()) {
            return bad("entity_types", "name at least one entity type".into());
        }
        if self.summary_budget < 50 {
            return bad("summary_budget", format!("must be at least 50 tokens, not {}", self.summary_budget));
        }
        Ok(())
    }
}

/// How answer sets are scored against a question set's reference answers
/// (the HieraRAG paper's metrics).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct MetricsRequest {
    /// The rank cut-off of nDCG and Recall (the paper's @10).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::METRICS_K))]
    #[serde(deserialize_with = "read::k")]
    pub k: usize,
    /// Quantile bins of the cosine similarity for the mutual information (at least 2).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::METRICS_BINS))]
    #[serde(deserialize_with = "read::bins")]
    pub bins: usize,
    /// What a retrieved chunk must match to count as relevant: document
    /// (the paper's: the question's source document), passage (a chunk
    /// overlapping the source chunk) or chunk (the source chunk itself).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = RelevanceUnit::Document))]
    pub unit: RelevanceUnit,
    /// Whose definitions: standard (textbook: trec_eval, rouge-score,
    /// sacrebleu, scikit-learn) or as-published (the HieraRAG authors'
    /// code: document hits counted per chunk, so AP can exceed 1; stemmed
    /// ROUGE-1; NLTK method-4 BLEU on 0–1; MI over H(category)).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Definitions::Standard))]
    pub definitions: Definitions,
}

impl Default for MetricsRequest {
    fn default() -> MetricsRequest {
        MetricsRequest {
            k: defaults::METRICS_K,
            bins: defaults::METRICS_BINS,
            unit: RelevanceUnit::Document,
            definitions: Definitions::Standard,
        }
    }
}

impl MetricsRequest {
    pub fn validate(&self) -> Result<(), OutOfRange> {
        if !(1..=1000).contains(&self.k) {
            return Err(OutOfRange { field: "k", message: format!("must be from 1 to 1000, not {}", self.k) });
        }
        if !(2..=100).contains(&self.bins) {
            return Err(OutOfRange { field: "bins", message: format!("must be from 2 to 100, not {}", self.bins) });
        }
        Ok(())
    }
}

/// Graph-text-grounded questions (the Unbiased GraphRAG Evaluation
/// paper's §III-A): the project's graph's entities (node), relations (edge)
/// and random walks (subgraph) sampled, each asked about with its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct GraphQuestionsRequest {
    /// Node-level questions.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::QUESTIONS_PER_LEVEL))]
    #[serde(deserialize_with = "read::node")]
    pub node: usize,
    /// Edge-level questions.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::QUESTIONS_PER_LEVEL))]
    #[serde(deserialize_with = "read::edge")]
    pub edge: usize,
    /// Subgraph-level questions.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::QUESTIONS_PER_LEVEL))]
    #[serde(deserialize_with = "read::subgraph")]
    pub subgraph: usize,
    /// Distinct edges a subgraph's random walk must cover.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::MIN_HOPS))]
    #[serde(deserialize_with = "read::min_hops")]
    pub min_hops: usize,
    /// Sample entities with probability proportional to degree + 1
    /// (default: uniformly).
    #[cfg_attr(feature = "cli", arg(long))]
    pub degree_weighted: bool,
    /// The sampling's seed.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::QUESTION_SEED))]
    #[serde(deserialize_with = "read::seed")]
    pub seed: u64,
}

impl Default for GraphQuestionsRequest {
    fn default() -> GraphQuestionsRequest {
        GraphQuestionsRequest {
            node: defaults::QUESTIONS_PER_LEVEL,
            edge: defaults::QUESTIONS_PER_LEVEL,
            subgraph: defaults::QUESTIONS_PER_LEVEL,
            min_hops: defaults::MIN_HOPS,
            degree_weighted: false,
            seed: defaults::QUESTION_SEED,
        }
    }
}

impl GraphQuestionsRequest {
    pub fn validate(&self) -> Result<(), OutOfRange> {
        for (field, n) in [("node", self.node), ("edge", self.edge), ("subgraph", self.subgraph)] {
            if n > 10_000 {
                return Err(OutOfRange { field, message: format!("is at most 10000 questions, not {n}") });
            }
        }
        if self.node + self.edge + self.subgraph == 0 {
            return Err(OutOfRange {
                field: "node",
                message: "ask for at least one node, edge or subgraph question".into(),
            });
        }
        if !(1..=100_000).contains(&self.min_hops) {
            return Err(OutOfRange {
                field: "min_hops",
                message: format!("must be from 1 to 100000 edges, not {}", self.min_hops),
            });
        }
        Ok(())
    }
}

/// The summary-based baseline (LightRAG's): the documents' heads and tails
/// in one call, then users × tasks × questions from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct SummaryQuestionsRequest {
    /// Potential users (1–20).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::SUMMARY_USERS))]
    #[serde(deserialize_with = "read::users")]
    pub users: usize,
    /// Tasks per user (1–20).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::SUMMARY_TASKS))]
    #[serde(deserialize_with = "read::tasks")]
    pub tasks: usize,
    /// Questions per (user, task) (1–20).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::SUMMARY_PER_TASK))]
    #[serde(alias = "questions", deserialize_with = "read::per_task")]
    pub per_task: usize,
    /// GPT-2 tokens from the start of each document.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::SUMMARY_HEAD))]
    #[serde(deserialize_with = "read::head")]
    pub head: usize,
    /// GPT-2 tokens from the end of each document.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::SUMMARY_TAIL))]
    #[serde(deserialize_with = "read::tail")]
    pub tail: usize,
    /// LightRAG's exact slices, with its bug (LightRAG issue #1203).
    #[cfg_attr(feature = "cli", arg(long))]
    pub replicate_lightrag: bool,
    /// Exactly this many questions (1–2000): enough are asked per task,
    /// then kept in turn from every user's tasks, so none is favoured (the
    /// paper compared 150 graph questions with 150 of these). Left out:
    /// users × tasks × per task. (Last, and written as null when left
    /// out, as a run's stage fingerprint has always had it.)
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(deserialize_with = "read::count")]
    pub count: Option<usize>,
}

impl Default for SummaryQuestionsRequest {
    fn default() -> SummaryQuestionsRequest {
        SummaryQuestionsRequest {
            users: defaults::SUMMARY_USERS,
            tasks: defaults::SUMMARY_TASKS,
            per_task: defaults::SUMMARY_PER_TASK,
            head: defaults::SUMMARY_HEAD,
            tail: defaults::SUMMARY_TAIL,
            replicate_lightrag: false,
            count: None,
        }
    }
}

impl SummaryQuestionsRequest {
    pub fn validate(&self) -> Result<(), OutOfRange> {
        for (field, n) in [("users", self.users), ("tasks", self.tasks), ("per_task", self.per_task)] {
            if !(1..=20).contains(&n) {
                return Err(OutOfRange { field, message: format!("must be from 1 to 20, not {n}") });
            }
        }
        if let Some(n) = self.count.filter(|n| !(1..=2000).contains(n)) {
            return Err(OutOfRange { field: "count", message: format!("must be from 1 to 2000 questions, not {n}") });
        }
        for (field, n) in [("head", self.head), ("tail", self.tail)] {
            if n > 100_000 {
                return Err(OutOfRange { field, message: format!("is at most 100000 tokens, not {n}") });
            }
        }
        Ok(())
    }

    /// Questions asked per task: enough to reach `count` when it is set.
    pub fn asked_per_task(&self) -> usize {
        match self.count {
            Some(n) => n.div_ceil((self.users * self.tasks).max(1)).max(1),
            None => self.per_task,
        }
    }

    /// The questions the set will hold.
    pub fn planned(&self) -> usize {
        self.count.unwrap_or(self.users * self.tasks * self.per_task)
    }
}

/// Questions with reference answers in the HieraRAG paper's hierarchical
/// categories, written over a chunk of the category's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct HierarchicalQuestionsRequest {
    /// Dimensions, comma-separated on the command line and the form (QC,
    /// AT, LV; case does not matter).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_values_t = defaults::DIMENSIONS.map(String::from)))]
    #[serde(deserialize_with = "names")]
    pub dimensions: Vec<String>,
    /// Granularity levels, as categories per level (2, 4, 8),
    /// comma-separated on the command line and the form.
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_values_t = defaults::LEVELS))]
    #[serde(deserialize_with = "read::levels")]
    pub levels: Vec<usize>,
    /// Questions per category (0–1000). Left out: 38, the paper's scale,
    /// when levels are compared (more than one); else 10, a pilot.
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(deserialize_with = "read::per_category", skip_serializing_if = "Option::is_none")]
    pub per_category: Option<usize>,
    /// Questions per cell of the LV × QC factorial design (0: none).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    #[serde(alias = "factorial_per_cell", deserialize_with = "read::factorial")]
    pub factorial: usize,
    /// Ask the LLM whether each pair fits its category; drop misfits.
    #[cfg_attr(feature = "cli", arg(long))]
    pub adherence_check: bool,
    /// The sampling's seed (chunks and expertise).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::QUESTION_SEED))]
    #[serde(deserialize_with = "read::seed")]
    pub seed: u64,
}

impl Default for HierarchicalQuestionsRequest {
    fn default() -> HierarchicalQuestionsRequest {
        HierarchicalQuestionsRequest {
            dimensions: defaults::DIMENSIONS.map(String::from).to_vec(),
            levels: defaults::LEVELS.to_vec(),
            per_category: None,
            factorial: 0,
            adherence_check: false,
            seed: defaults::QUESTION_SEED,
        }
    }
}

impl HierarchicalQuestionsRequest {
    /// The request as generation uses it: dimensions trimmed, upper case,
    /// each once; then checked ([`HierarchicalQuestionsRequest::validate`]).
    pub fn checked(mut self) -> Result<HierarchicalQuestionsRequest, OutOfRange> {
        let mut seen = Vec::new();
        for d in self.dimensions.iter().map(|d| d.trim().to_uppercase()).filter(|d| !d.is_empty()) {
            if !seen.contains(&d) {
                seen.push(d);
            }
        }
        self.dimensions = seen;
        self.validate()?;
        Ok(self)
    }

    pub fn validate(&self) -> Result<(), OutOfRange> {
        let bad = |field, message: String| Err(OutOfRange { field, message });
        if self.dimensions.iter().all(|d| d.trim().is_empty()) {
            return bad("dimensions", "name at least one (QC, AT, LV)".into());
        }
        if self.levels.is_empty() {
            return bad("levels", "name at least one (2, 4 or 8 categories)".into());
        }
        if let Some(l) = self.levels.iter().find(|l| !defaults::LEVELS.contains(l)) {
            return bad("levels", format!("a level is 2, 4 or 8 categories, not {l}"));
        }
        if let Some(n) = self.per_category.filter(|n| *n > 1000) {
            return bad("per_category", format!("is at most 1000 questions, not {n}"));
        }
        if self.factorial > 10_000 {
            return bad("factorial", format!("is at most 10000 questions a cell, not {}", self.factorial));
        }
        Ok(())
    }

    /// Questions per category: as asked, or the default for the levels.
    pub fn questions_per_category(&self) -> usize {
        self.per_category.unwrap_or(if self.levels.len() > 1 {
            defaults::MIN_PER_CATEGORY
        } else {
            defaults::PILOT_PER_CATEGORY
        })
    }
}

/// One question set to generate, by its generator: a manifest's
/// `[[questions]]` entry (`kind = "graph"` and the generator's settings)
/// and what a questions job stores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum QuestionsRequest {
    Graph(GraphQuestionsRequest),
    Summary(SummaryQuestionsRequest),
    Hierarchical(HierarchicalQuestionsRequest),
}

impl QuestionsRequest {
    pub fn kind(&self) -> &'static str {
        match self {
            QuestionsRequest::Graph(_) => "graph",
            QuestionsRequest::Summary(_) => "summary",
            QuestionsRequest::Hierarchical(_) => "hierarchical",
        }
    }

    /// The request as generation uses it, or the field out of range.
    pub fn checked(self) -> Result<QuestionsRequest, OutOfRange> {
        Ok(match self {
            QuestionsRequest::Graph(g) => {
                g.validate()?;
                QuestionsRequest::Graph(g)
            }
            QuestionsRequest::Summary(s) => {
                s.validate()?;
                QuestionsRequest::Summary(s)
            }
            QuestionsRequest::Hierarchical(h) => QuestionsRequest::Hierarchical(h.checked()?),
        })
    }
}

/// How a project cuts its documents into chunks: the corpus page's
/// chunking, `assay project create`, a manifest's `[corpus]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct ChunkRequest {
    /// Chunk size in tokens (LightRAG: 1200, HieraRAG: 512).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::CHUNK_TOKENS))]
    #[serde(deserialize_with = "read::chunk_tokens")]
    pub chunk_tokens: usize,
    /// Overlap between neighbouring chunks, in tokens.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::CHUNK_OVERLAP))]
    #[serde(alias = "overlap_tokens", deserialize_with = "read::chunk_overlap")]
    pub chunk_overlap: usize,
    /// cl100k_base or o200k_base.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Tokenizer::Cl100kBase))]
    pub tokenizer: Tokenizer,
}

impl Default for ChunkRequest {
    fn default() -> ChunkRequest {
        ChunkRequest {
            chunk_tokens: defaults::CHUNK_TOKENS,
            chunk_overlap: defaults::CHUNK_OVERLAP,
            tokenizer: Tokenizer::Cl100kBase,
        }
    }
}

impl ChunkRequest {
    pub fn validate(&self) -> Result<(), OutOfRange> {
        if !(16..=32768).contains(&self.chunk_tokens) {
            let message = format!("must be from 16 to 32768 tokens, not {}", self.chunk_tokens);
            return Err(OutOfRange { field: "chunk_tokens", message });
        }
        let most = (self.chunk_tokens - 1) / 2;
        if self.chunk_overlap > most {
            let message =
                format!("must be smaller than half the chunk size ({most} tokens at most), not {}", self.chunk_overlap);
            return Err(OutOfRange { field: "chunk_overlap", message });
        }
        Ok(())
    }
}

/// Answers to a question set from a built-in RAG method: which method,
/// its parameters (missing ones take the method's defaults) and a length
/// to ask for. A manifest's `[[methods]]` entry, where the method has
/// always been `name` — so it is `req[name]` on the form too, and
/// `--method` on the command line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AnswersRequest {
    /// The method: `assay answers methods` lists them.
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(rename = "name")]
    pub method: String,
    /// A method parameter, `NAME=VALUE` (the value as JSON where it
    /// parses, else text); repeat for more. A table in a manifest, the
    /// text of a JSON object on the form.
    #[cfg_attr(feature = "cli", arg(long = "param", value_name = "NAME=VALUE"))]
    #[serde(default, with = "param_table")]
    pub params: Vec<Param>,
    /// Ask every answer for about this many words.
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(default, deserialize_with = "read::target_words", skip_serializing_if = "Option::is_none")]
    pub target_words: Option<usize>,
}

/// Equal when they ask for the same: parameters in any order (a manifest's
/// table is sorted, a command line's are in the order given).
impl PartialEq for AnswersRequest {
    fn eq(&self, other: &AnswersRequest) -> bool {
        let AnswersRequest { method, params: _, target_words } = self;
        (method, target_words, self.params_json()) == (&other.method, &other.target_words, other.params_json())
    }
}

impl AnswersRequest {
    pub fn new(method: impl Into<String>) -> AnswersRequest {
        AnswersRequest { method: method.into(), params: Vec::new(), target_words: None }
    }

    pub fn validate(&self) -> Result<(), OutOfRange> {
        if self.method.trim().is_empty() {
            return Err(OutOfRange { field: "method", message: "choose a method".into() });
        }
        if let Some(p) = self.params.iter().find(|p| p.name.trim().is_empty()) {
            return Err(OutOfRange {
                field: "params",
                message: format!("a parameter has no name (value {})", p.value),
            });
        }
        match self.target_words {
            Some(n) if !(1..=10_000).contains(&n) => {
                Err(OutOfRange { field: "target_words", message: format!("must be from 1 to 10000 words, not {n}") })
            }
            _ => Ok(()),
        }
    }

    /// The parameters as one JSON object (a name given twice: the last).
    pub fn params_json(&self) -> serde_json::Value {
        serde_json::Value::Object(self.params.iter().map(|p| (p.name.clone(), p.value.clone())).collect())
    }
}

/// One parameter of a method.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub value: serde_json::Value,
}

impl Param {
    /// The entries of a JSON object as parameters (anything else: none).
    pub fn from_object(object: &serde_json::Value) -> Vec<Param> {
        let entries = object.as_object().into_iter().flatten();
        entries.map(|(name, value)| Param { name: name.clone(), value: value.clone() }).collect()
    }
}

impl std::str::FromStr for Param {
    type Err = String;
    /// `NAME=VALUE`, the value as JSON where it parses, else text.
    fn from_str(pair: &str) -> Result<Param, String> {
        let (name, value) = pair.split_once('=').ok_or_else(|| format!("{pair}: expected NAME=VALUE"))?;
        let value = serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        Ok(Param { name: name.trim().to_string(), value })
    }
}

/// Parameters read from a table (name → value) or from the text of a JSON
/// object (the form's box; blank is none), and written as that text: a
/// posted form carries every value as text, so a table written into one
/// (`req[params][k]=3`, as the hydrated page encodes its request) would
/// come back with `"3"` for `3`. (A manifest writes them as a table:
/// `Manifest::to_toml`.)
mod param_table {
    use serde::de::{Error, MapAccess, Visitor};
    use serde::{Deserializer, Serializer};

    use super::Param;

    pub fn serialize<S: Serializer>(params: &[Param], s: S) -> Result<S::Ok, S::Error> {
        let object: serde_json::Map<String, serde_json::Value> =
            params.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
        s.serialize_str(&serde_json::Value::Object(object).to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Param>, D::Error> {
        struct Table;
        impl<'de> Visitor<'de> for Table {
            type Value = Vec<Param>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of parameters, or the text of a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Param>, A::Error> {
                let mut out = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, serde_json::Value>()? {
                    out.push(Param { name, value });
                }
                Ok(out)
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Vec<Param>, E> {
                if v.trim().is_empty() {
                    return Ok(Vec::new());
                }
                match serde_json::from_str::<serde_json::Value>(v) {
                    Ok(serde_json::Value::Object(m)) => {
                        Ok(m.into_iter().map(|(name, value)| Param { name, value }).collect())
                    }
                    Ok(other) => Err(E::custom(format!("params: must be a JSON object, not {other}"))),
                    Err(e) => Err(E::custom(format!("params: not JSON: {e}"))),
                }
            }
            fn visit_unit<E: Error>(self) -> Result<Vec<Param>, E> {
                Ok(Vec::new())
            }
        }
        d.deserialize_any(Table)
    }
}

/// A Likert study (the Unbiased GraphRAG Evaluation paper's user study,
/// §V-C; HieraRAG's answer validation, §2.5): what raters rate, drawn from
/// which question sets, with which checks and links. Its name and its
/// dimensions (a JSON file on the command line, a JSON box on the form)
/// are the caller's, beside the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default)]
pub struct StudyRequest {
    /// questions: raters score questions on Likert dimensions; answers:
    /// raters validate answers — correctness 0–3, hallucination 0–2,
    /// answerability 0–3, category.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = StudyKind::Questions))]
    pub kind: StudyKind,
    /// `SET:N[,SET:N...]`: draw N questions from each question set.
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', required = true, value_name = "SET:N"))]
    #[serde(deserialize_with = "draws")]
    pub questions: Vec<Draw>,
    /// With kind answers: an answer set over the drawn question set
    /// (default: the questions' reference answers).
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(deserialize_with = "read::answers", skip_serializing_if = "Option::is_none")]
    pub answers: Option<i64>,
    /// Shown to raters first.
    #[cfg_attr(feature = "cli", arg(long, default_value = ""))]
    pub intro: String,
    /// A few sentences about the corpus, shown with the questions so
    /// raters can judge whether they can be answered from it.
    #[cfg_attr(feature = "cli", arg(long, default_value = ""))]
    pub corpus_summary: String,
    /// Attention-check items (0–5; none in an answer-validation study).
    #[cfg_attr(feature = "cli", arg(long = "attention", default_value_t = 0))]
    #[serde(deserialize_with = "read::attention_checks")]
    pub attention_checks: usize,
    /// The raters wanted (the study's progress counts toward it).
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(deserialize_with = "read::target_raters", skip_serializing_if = "Option::is_none")]
    pub target_raters: Option<usize>,
    /// Per-rater links to make (besides the open link).
    #[cfg_attr(feature = "cli", arg(long = "raters", default_value_t = 0))]
    #[serde(deserialize_with = "read::rater_links")]
    pub rater_links: usize,
    /// Make no open link: only the per-rater links rate, so no one rates
    /// twice by clearing a browser (needs per-rater links).
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_open_link: bool,
    /// The draw's seed.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = defaults::STUDY_SEED))]
    #[serde(deserialize_with = "read::seed")]
    pub seed: u64,
    /// The links stop working this many days from now (default: never).
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(deserialize_with = "read::expires_days", skip_serializing_if = "Option::is_none")]
    pub expires_days: Option<usize>,
}

impl Default for StudyRequest {
    fn default() -> StudyRequest {
        StudyRequest {
            kind: StudyKind::Questions,
            questions: Vec::new(),
            answers: None,
            intro: String::new(),
            corpus_summary: String::new(),
            attention_checks: 0,
            target_raters: None,
            rater_links: 0,
            no_open_link: false,
            seed: defaults::STUDY_SEED,
            expires_days: None,
        }
    }
}

impl StudyRequest {
    pub fn validate(&self) -> Result<(), OutOfRange> {
        let bad = |field, message: String| Err(OutOfRange { field, message });
        if self.questions.is_empty() {
            return bad("questions", "draw questions from at least one set (SET:N)".into());
        }
        if let Some(d) = self.questions.iter().find(|d| !(1..=10_000).contains(&d.count)) {
            return bad(
                "questions",
                format!("draw 1 to 10000 questions from a set, not {} from set {}", d.count, d.set),
            );
        }
        if self.kind == StudyKind::Questions && self.answers.is_some() {
            return bad("answers", "answers are rated in an answer-validation study (kind answers)".into());
        }
        if self.attention_checks > defaults::MOST_ATTENTION_CHECKS {
            return bad("attention_checks", format!("at most 5, not {}", self.attention_checks));
        }
        if self.kind == StudyKind::Answers && self.attention_checks > 0 {
            return bad("attention_checks", "attention checks are for question-rating studies".into());
        }
        if let Some(t) = self.target_raters.filter(|t| !(1..=100_000).contains(t)) {
            return bad("target_raters", format!("must be from 1 to 100000, not {t}"));
        }
        if self.rater_links > 1000 {
            return bad("rater_links", format!("at most 1000 per-rater links, not {}", self.rater_links));
        }
        if self.no_open_link && self.rater_links == 0 {
            return bad("rater_links", "a study without an open link needs at least one per-rater link".into());
        }
        if let Some(d) = self.expires_days.filter(|d| !(1..=3650).contains(d)) {
            return bad("expires_days", format!("must be from 1 to 3650 days, not {d}"));
        }
        Ok(())
    }
}

/// Questions drawn from one set: `SET:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draw {
    pub set: i64,
    pub count: usize,
}

impl std::str::FromStr for Draw {
    type Err = String;
    fn from_str(text: &str) -> Result<Draw, String> {
        let (set, n) = text.split_once(':').ok_or_else(|| format!("\"{text}\" is not SET:N"))?;
        let set = set.trim().parse().ok().filter(|s| *s >= 1).ok_or_else(|| format!("\"{set}\" is not a set id"))?;
        let count = n.trim().parse().map_err(|_| format!("\"{n}\" is not a count"))?;
        Ok(Draw { set, count })
    }
}

impl std::fmt::Display for Draw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.set, self.count)
    }
}

impl Serialize for Draw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Draw {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Draw, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// Draws from a list or from one comma-separated text (the form's field),
/// a bad one named.
fn draws<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Draw>, D::Error> {
    split(d, &[','])?
        .iter()
        .map(|t| t.parse().map_err(|e| serde::de::Error::custom(format!("questions: {e}"))))
        .collect()
}

/// Numbers read from a number or from its text (a posted form sends text),
/// a value that is neither refused naming its field — serde's own error
/// would not say which field, and the form's reader cannot add it.
mod read {
    use serde::de::{Deserializer, Error, Visitor};

    /// A number in any of the forms a deserializer may hand over.
    struct Loose;

    enum Number {
        Whole(u64),
        Negative(i64),
        Real(f64),
        Text(String),
    }

    impl<'de> Visitor<'de> for Loose {
        type Value = Number;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number")
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<Number, E> {
            Ok(Number::Whole(v))
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<Number, E> {
            Ok(if v >= 0 { Number::Whole(v as u64) } else { Number::Negative(v) })
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<Number, E> {
            Ok(Number::Real(v))
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<Number, E> {
            Ok(Number::Text(v.trim().to_string()))
        }
        /// Nothing (a null): as a blank field.
        fn visit_unit<E: Error>(self) -> Result<Number, E> {
            Ok(Number::Text(String::new()))
        }
    }

    fn number_to_whole<T: TryFrom<u64>>(n: Number) -> Option<T> {
        let n = match n {
            Number::Whole(n) => Some(n),
            Number::Real(x) if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) => Some(x as u64),
            Number::Text(t) => t.parse::<u64>().ok(),
            Number::Negative(_) | Number::Real(_) => None,
        };
        n.and_then(|n| T::try_from(n).ok())
    }

    fn whole<'de, D: Deserializer<'de>, T: TryFrom<u64>>(d: D, field: &str) -> Result<T, D::Error> {
        number_to_whole(d.deserialize_any(Loose)?)
            .ok_or_else(|| D::Error::custom(format!("{field}: not a whole number in range")))
    }

    fn real<'de, D: Deserializer<'de>>(d: D, field: &str) -> Result<f64, D::Error> {
        let x = match d.deserialize_any(Loose)? {
            Number::Whole(n) => Some(n as f64),
            Number::Negative(n) => Some(n as f64),
            Number::Real(x) => Some(x),
            Number::Text(t) => t.parse::<f64>().ok(),
        };
        x.filter(|x| x.is_finite()).ok_or_else(|| D::Error::custom(format!("{field}: not a number")))
    }

    /// A whole number, or nothing: absent, or blank text (a form's empty field).
    fn optional<'de, D: Deserializer<'de>>(d: D, field: &str) -> Result<Option<usize>, D::Error> {
        match d.deserialize_any(Loose)? {
            Number::Text(t) if t.is_empty() => Ok(None),
            n => number_to_whole(n)
                .map(Some)
                .ok_or_else(|| D::Error::custom(format!("{field}: not a whole number in range"))),
        }
    }

    /// An answer set's id, or nothing: absent, blank or `reference` (the
    /// form's choice of the questions' reference answers).
    pub fn answers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        match d.deserialize_any(Loose)? {
            Number::Text(t) if t.is_empty() || t == "reference" => Ok(None),
            n => number_to_whole::<i64>(n)
                .filter(|id| *id >= 1)
                .map(Some)
                .ok_or_else(|| D::Error::custom("answers: not an answer set's id")),
        }
    }

    /// Whole numbers from a list (of numbers or their texts), or from one
    /// text separated by commas (a form's field).
    pub fn levels<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<usize>, D::Error> {
        struct Level(usize);
        impl<'de> serde::Deserialize<'de> for Level {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Level, D::Error> {
                whole(d, "levels").map(Level)
            }
        }
        struct Levels;
        impl<'de> Visitor<'de> for Levels {
            type Value = Vec<usize>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of whole numbers, or one text of them separated by commas")
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Vec<usize>, E> {
                v.split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(|n| n.parse().map_err(|_| E::custom(format!("levels: \"{n}\" is not a whole number"))))
                    .collect()
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<usize>, A::Error> {
                let mut out = Vec::new();
                while let Some(Level(n)) = seq.next_element()? {
                    out.push(n);
                }
                Ok(out)
            }
        }
        d.deserialize_any(Levels)
    }

    macro_rules! fields {
        ($($name:ident: $how:ident -> $t:ty),* $(,)?) => {
            $(pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                $how(d, stringify!($name))
            })*
        };
    }

    fields! {
        trials: whole -> u32,
        repeats: whole -> u32,
        tolerance: whole -> usize,
        adjustments: whole -> u32,
        seed: whole -> u64,
        gleaning: whole -> u32,
        summary_budget: whole -> usize,
        k: whole -> usize,
        bins: whole -> usize,
        node: whole -> usize,
        edge: whole -> usize,
        subgraph: whole -> usize,
        min_hops: whole -> usize,
        users: whole -> usize,
        tasks: whole -> usize,
        per_task: whole -> usize,
        head: whole -> usize,
        tail: whole -> usize,
        factorial: whole -> usize,
        count: optional -> Option<usize>,
        target_words: optional -> Option<usize>,
        chunk_tokens: whole -> usize,
        chunk_overlap: whole -> usize,
        target_raters: optional -> Option<usize>,
        expires_days: optional -> Option<usize>,
        attention_checks: whole -> usize,
        rater_links: whole -> usize,
        per_category: optional -> Option<usize>,
        position_bias: real -> f64,
        length_bias: real -> f64,
        noise: real -> f64,
    }
}

/// Names from a list or from one comma-separated text (a form's field).
fn names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    split(d, &[','])
}

/// A list of specs from a list (a manifest's array, the form's indexed
/// fields) or from one text, `;`- or line-separated (the form's textarea);
/// blank entries dropped.
fn specs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    split(d, &[';', '\n'])
}

/// A list from a list, or from one text split at `by`; entries trimmed,
/// blank ones dropped.
fn split<'de, D: serde::Deserializer<'de>>(d: D, by: &'static [char]) -> Result<Vec<String>, D::Error> {
    #[derive(Clone, Copy)]
    struct Split(&'static [char]);
    impl<'de> serde::de::Visitor<'de> for Split {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list, or one text of its entries separated by {:?}", self.0)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Vec<String>, E> {
            Ok(v.split(self.0).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Vec<String>, E> {
            Ok(Vec::new())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(s) = seq.next_element::<String>()? {
                out.extend(self.visit_str::<A::Error>(&s)?);
            }
            Ok(out)
        }
    }
    d.deserialize_any(Split(by))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_valid_and_reads_back_from_nothing() {
        let d = EvaluationRequest::default();
        d.validate().unwrap();
        assert_eq!(serde_json::from_str::<EvaluationRequest>("{}").unwrap(), d);
        let back: EvaluationRequest = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn a_jury_reads_from_a_list_or_from_one_text() {
        let one: EvaluationRequest = serde_json::from_str(r#"{"jury": "offline; simulated:noise=1\nllm:x"}"#).unwrap();
        let list: EvaluationRequest =
            serde_json::from_str(r#"{"jury": ["offline", "simulated:noise=1", "llm:x"]}"#).unwrap();
        assert_eq!(one.jury, ["offline", "simulated:noise=1", "llm:x"]);
        assert_eq!(one, list);
        let blank: EvaluationRequest = serde_json::from_str(r#"{"jury": " ; "}"#).unwrap();
        assert!(blank.jury.is_empty());
    }

    #[test]
    fn each_range_names_its_field() {
        let d = EvaluationRequest::default();
        let field = |r: EvaluationRequest| r.validate().unwrap_err().field;
        assert_eq!(field(EvaluationRequest { trials: 0, ..d.clone() }), "trials");
        assert_eq!(field(EvaluationRequest { repeats: 21, ..d.clone() }), "repeats");
        assert_eq!(field(EvaluationRequest { tolerance: 10_001, ..d.clone() }), "tolerance");
        assert_eq!(field(EvaluationRequest { adjustments: 11, ..d.clone() }), "adjustments");
        assert_eq!(field(EvaluationRequest { position_bias: f64::NAN, ..d.clone() }), "position_bias");
        assert_eq!(field(EvaluationRequest { noise: -0.1, ..d.clone() }), "noise");
        assert_eq!(field(EvaluationRequest { judge_temperature: Some(2.5), ..d.clone() }), "judge_temperature");
        let legacy = EvaluationRequest { protocol: Protocol::Legacy, ..d.clone() };
        assert_eq!(field(EvaluationRequest { sequential: true, ..legacy.clone() }), "sequential");
        assert_eq!(field(EvaluationRequest { jury: vec!["offline".into()], ..legacy.clone() }), "jury");
        assert_eq!(
            field(EvaluationRequest { jury: vec!["offline".into(); defaults::MOST_JUDGES], ..d.clone() }),
            "jury"
        );
        // The legacy protocol has no trials: their count is not its to check.
        EvaluationRequest { trials: 0, repeats: 0, ..legacy }.validate().unwrap();
        let e = EvaluationRequest { trials: 0, ..d }.validate().unwrap_err();
        assert_eq!(e.to_string(), "trials: must be a whole number from 1 to 1000, not 0");
    }

    #[test]
    fn a_graph_request_reads_its_types_from_a_list_or_a_text_and_checks_them() {
        let r: GraphRequest = serde_json::from_str(r#"{"entity_types": " Person, place ,,person"}"#).unwrap();
        assert_eq!(r.entity_types, ["Person", "place", "person"]);
        assert_eq!(r.clone().checked().unwrap().entity_types, ["person", "place"]);
        assert_eq!(serde_json::from_str::<GraphRequest>("{}").unwrap(), GraphRequest::default());
        let field = |r: GraphRequest| r.checked().unwrap_err().field;
        assert_eq!(field(GraphRequest { gleaning: 6, ..r.clone() }), "gleaning");
        assert_eq!(field(GraphRequest { entity_types: vec![" ".into()], ..r.clone() }), "entity_types");
        assert_eq!(field(GraphRequest { summary_budget: 49, ..r }), "summary_budget");
    }

    #[test]
    fn a_number_reads_from_a_number_or_its_text_and_a_bad_one_names_its_field() {
        let r: EvaluationRequest =
            serde_json::from_str(r#"{"trials": "7", "repeats": 3, "noise": "1.5", "position_bias": -1}"#).unwrap();
        assert_eq!((r.trials, r.repeats, r.noise, r.position_bias), (7, 3, 1.5, -1.0));
        let e = |json: &str| serde_json::from_str::<EvaluationRequest>(json).unwrap_err().to_string();
        assert!(
            e(r#"{"trials": "many"}"#).starts_with("trials: not a whole number in range"),
            "{}",
            e(r#"{"trials": "many"}"#)
        );
        assert!(e(r#"{"trials": -1}"#).starts_with("trials: not a whole number"));
        assert!(e(r#"{"trials": 2.5}"#).starts_with("trials: not a whole number"));
        assert!(e(r#"{"trials": 5000000000}"#).starts_with("trials: not a whole number in range"));
        assert!(e(r#"{"noise": "loud"}"#).starts_with("noise: not a number"));
        let g = serde_json::from_str::<GraphRequest>(r#"{"summary_budget": "lots"}"#).unwrap_err().to_string();
        assert!(g.starts_with("summary_budget: not a whole number"), "{g}");
    }

    #[test]
    fn a_questions_request_is_tagged_by_its_generator_and_each_range_names_its_field() {
        let q: QuestionsRequest = serde_json::from_str(r#"{"kind": "graph", "node": "3", "edge": 0}"#).unwrap();
        assert_eq!(q, QuestionsRequest::Graph(GraphQuestionsRequest { node: 3, edge: 0, ..Default::default() }));
        assert_eq!(q.kind(), "graph");
        let field = |q: QuestionsRequest| q.checked().unwrap_err().field;
        let g = GraphQuestionsRequest::default();
        assert_eq!(
            field(QuestionsRequest::Graph(GraphQuestionsRequest { node: 0, edge: 0, subgraph: 0, ..g.clone() })),
            "node"
        );
        assert_eq!(field(QuestionsRequest::Graph(GraphQuestionsRequest { min_hops: 0, ..g })), "min_hops");
        let s = SummaryQuestionsRequest::default();
        assert_eq!(field(QuestionsRequest::Summary(SummaryQuestionsRequest { tasks: 0, ..s.clone() })), "tasks");
        assert_eq!(
            field(QuestionsRequest::Summary(SummaryQuestionsRequest { count: Some(2001), ..s.clone() })),
            "count"
        );
        assert_eq!(field(QuestionsRequest::Summary(SummaryQuestionsRequest { tail: 100_001, ..s.clone() })), "tail");
        let h = HierarchicalQuestionsRequest::default();
        assert_eq!(
            field(QuestionsRequest::Hierarchical(HierarchicalQuestionsRequest { levels: vec![2, 3], ..h.clone() })),
            "levels"
        );
        assert_eq!(
            field(QuestionsRequest::Hierarchical(HierarchicalQuestionsRequest {
                dimensions: vec![" ".into()],
                ..h.clone()
            })),
            "dimensions"
        );
        assert_eq!(
            field(QuestionsRequest::Hierarchical(HierarchicalQuestionsRequest {
                per_category: Some(1001),
                ..h.clone()
            })),
            "per_category"
        );
        // Dimensions read from a text, upper-cased once each.
        let r: HierarchicalQuestionsRequest =
            serde_json::from_str(r#"{"dimensions": "qc, lv, QC", "levels": "2, 8"}"#).unwrap();
        let r = r.checked().unwrap();
        assert_eq!(
            (r.dimensions.as_slice(), r.levels.as_slice()),
            (&["QC".to_string(), "LV".to_string()][..], &[2, 8][..])
        );
        // Unset per category: the paper's scale when levels are compared, a pilot's for one.
        assert_eq!(r.questions_per_category(), defaults::MIN_PER_CATEGORY);
        assert_eq!(HierarchicalQuestionsRequest { levels: vec![4], ..r }.questions_per_category(), 10);
        // An exact count: enough per task to reach it.
        let c = SummaryQuestionsRequest { count: Some(150), ..s };
        assert_eq!((c.asked_per_task(), c.planned()), (6, 150));
    }

    /// Settings stored by questions jobs before the request type (the
    /// engine's field names then) still read.
    #[test]
    fn stored_settings_of_earlier_jobs_read() {
        let s: SummaryQuestionsRequest = serde_json::from_str(
            r#"{"head": 1000, "tail": 1000, "users": 2, "tasks": 3, "questions": 4, "replicate_lightrag": false, "count": null}"#,
        )
        .unwrap();
        assert_eq!((s.users, s.tasks, s.per_task, s.count), (2, 3, 4, None));
        let h: HierarchicalQuestionsRequest = serde_json::from_str(
            r#"{"dimensions": ["QC"], "levels": [2], "per_category": 38, "factorial_per_cell": 5, "adherence_check": true, "seed": 1}"#,
        )
        .unwrap();
        assert_eq!((h.per_category, h.factorial, h.adherence_check), (Some(38), 5, true));
    }
}

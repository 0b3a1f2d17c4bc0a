//! The defaults a run gets when a setting is left alone — the same for the
//! CLI, the manifest, the forms and the help texts (a test checks every help
//! text names its default).

/// M, trials: the Unbiased GraphRAG Evaluation paper's (§IV-B).
pub const TRIALS: u32 = 25;
/// N, judgments per order: the same paper's (§IV-B).
pub const REPEATS: u32 = 2;
/// Length alignment's tolerance, in words.
pub const TOLERANCE: usize = 10;
/// Regenerations before the forced append.
pub const ADJUSTMENTS: u32 = 3;
/// The bias lab's simulated judge: points for the answer shown first,
/// points per 10 words longer, and the noise's standard deviation.
pub const POSITION_BIAS: f64 = 0.3;
pub const LENGTH_BIAS: f64 = 0.1;
pub const NOISE: f64 = 0.5;
/// k of nDCG@k and Recall@k (HieraRAG's @10).
pub const METRICS_K: usize = 10;
/// Equal-frequency bins of the cosine similarity.
pub const METRICS_BINS: usize = 4;
/// Judges in a jury at most, the first judge among them.
pub const MOST_JUDGES: usize = 8;
/// Graph extraction: follow-up turns asking the model for missed entities.
pub const GLEANING: u32 = 1;
/// The entity types extraction asks for (LightRAG's, with concept and object).
pub const ENTITY_TYPES: [&str; 6] = ["person", "organization", "location", "event", "concept", "object"];
/// Merged entity descriptions longer than this many tokens are summarised.
pub const SUMMARY_BUDGET: usize = 500;
/// Graph questions per level (node, edge, subgraph): the Unbiased GraphRAG
/// Evaluation paper's 50.
pub const QUESTIONS_PER_LEVEL: usize = 50;
/// Distinct edges a subgraph question's random walk must cover.
pub const MIN_HOPS: usize = 50;
/// The seed a question generator samples with.
pub const QUESTION_SEED: u64 = 42;
/// Summary questions: LightRAG's 5 users × 5 tasks × 5 questions.
pub const SUMMARY_USERS: usize = 5;
pub const SUMMARY_TASKS: usize = 5;
pub const SUMMARY_PER_TASK: usize = 5;
/// Tokens from each document's head and tail the summary prompt is given.
pub const SUMMARY_HEAD: usize = 1000;
pub const SUMMARY_TAIL: usize = 1000;
/// The HieraRAG hierarchy's dimensions and granularity levels (categories
/// per level).
pub const DIMENSIONS: [&str; 3] = ["QC", "AT", "LV"];
pub const LEVELS: [usize; 3] = [2, 4, 8];
/// Questions per category when levels are compared: HieraRAG's smallest
/// cell, below which discriminative power between levels means little.
pub const MIN_PER_CATEGORY: usize = 38;
/// Questions per category for a one-level pilot.
pub const PILOT_PER_CATEGORY: usize = 10;

/// A study's draw seed.
pub const STUDY_SEED: u64 = 42;
/// A study's attention-check items, at most.
pub const MOST_ATTENTION_CHECKS: usize = 5;

/// Chunk size in tokens (LightRAG's; HieraRAG uses 512).
pub const CHUNK_TOKENS: usize = 1200;
/// Overlap between neighbouring chunks, in tokens (LightRAG's).
pub const CHUNK_OVERLAP: usize = 100;

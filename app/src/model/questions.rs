//! Question sets, questions, provenance and diagnostics.

use serde::{Deserialize, Serialize};

use super::{NodeBrief, SourceChunk};

/// A question set with its counts per level (graph sets) or category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionSetView {
    pub id: i64,
    pub project_id: i64,
    pub job_id: Option<i64>,
    pub kind: types::QuestionSetKind,
    pub name: String,
    pub parameters: String,
    pub created_at: String,
    pub questions: i64,
    /// `(level or category, questions)`.
    pub counts: Vec<(String, i64)>,
    /// The provider and model the generating job's calls went to (none for
    /// an imported set).
    pub provider: Option<types::CallProvider>,
    pub model: Option<String>,
}

/// One question with its provenance (the JSONL export's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionView {
    pub id: i64,
    pub question: String,
    pub level: Option<String>,
    pub category: Option<String>,
    pub expertise: Option<String>,
    pub reference_answer: Option<String>,
    pub source_chunk_ids: Vec<i64>,
    /// The chunks given to the LLM that wrote the question (`None`: not recorded).
    #[serde(default)]
    pub context_chunk_ids: Option<Vec<i64>>,
    /// Passages a benchmark file says answer it (imported; empty: none).
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Node keys of the sampled structure.
    pub nodes: Vec<String>,
    pub edges: Vec<(String, String)>,
    pub walk: Vec<String>,
    /// Who wrote it, and whether a person edited it since (`graph+edited`;
    /// `imported` for a file's question that names no generator Assay knows).
    pub generator: types::Generator,
    pub prompt_hash: Option<String>,
    pub seed: Option<i64>,
}

/// Where a question came from: its sampled nodes as they are in the current
/// graph (for the explorer), keys no longer there, and its source texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionProvenance {
    pub question: QuestionView,
    pub nodes: Vec<NodeBrief>,
    pub missing: Vec<String>,
    pub sources: Vec<SourceChunk>,
}

/// The entities a question set mentions (seed 000 Fig. 9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityStats {
    pub set_id: i64,
    pub set_name: String,
    /// `graph` (the graph's names matched in the text) or `llm` (entities
    /// the LLM listed per question, a `mentions` job).
    pub source: types::EntitySource,
    /// The `mentions` job, for `llm`.
    pub job_id: Option<i64>,
    /// Who listed the entities, for `llm`: "offline (no LLM)" or "openai · MODEL".
    pub made_by: Option<String>,
    pub questions: i64,
    /// Questions whose entities are known (all, for `graph`; those the job
    /// has finished, for `llm`).
    pub covered: i64,
    pub with_entity: i64,
    pub distinct: i64,
    /// Distinct entities that are entities of the graph.
    pub in_graph: i64,
    /// Share of all mentions taken by the most mentioned entity.
    pub top_share: f64,
    /// The ten most mentioned entities, then "other".
    pub top: Vec<(String, i64)>,
}

/// Question–retrieval relevance of a set (seed 000 Fig. 10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceStats {
    pub set_id: i64,
    pub job_id: i64,
    /// The method whose retrieval was scored (`fastgraphrag`, the paper's; `bm25`, …).
    pub retriever: String,
    /// Who scored: "offline (no LLM)" or "openai · MODEL".
    pub made_by: Option<String>,
    pub scored: i64,
    pub questions: i64,
    pub mean: f64,
    /// Questions per score 0..=5.
    pub histogram: Vec<i64>,
}

/// Questions a page of a set shows at once.
pub const QUESTIONS_PER_PAGE: i64 = 25;

/// A page of a question set's questions (in the set's order), of those
/// matching the level and text asked for; `total` counts those.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionsPage {
    pub questions: Vec<QuestionView>,
    pub total: i64,
    /// From 1.
    pub page: i64,
    pub pages: i64,
}

//! Answer sets, answers with their contexts, the cost table.

use serde::{Deserialize, Serialize};

/// One method instance's answers to a question set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerSetView {
    pub id: i64,
    pub project_id: i64,
    pub question_set_id: i64,
    pub job_id: Option<i64>,
    pub name: String,
    /// A built-in method's name, or `imported`.
    pub method: String,
    /// The method's full parameters as JSON.
    pub parameters: String,
    pub created_at: String,
    pub answers: i64,
    /// Who answered: "offline (no LLM)", "openai · MODEL", "your service
    /// (METHOD)" (the HTTP method and its presets), or none (imported).
    pub made_by: Option<String>,
    /// A sanity check's second run: the evaluation (the check) that made
    /// it. Such a set belongs to its check: lists show it under the check,
    /// and no default choice or "every method" includes it.
    #[serde(default)]
    pub sanity_of: Option<i64>,
}

pub use types::rag::Section;

/// One answer with its context and accounting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerView {
    pub id: i64,
    pub question_id: i64,
    pub question: String,
    pub answer: String,
    pub contexts: Vec<Section>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
    pub llm_calls: Option<i64>,
    pub retrieval_ms: Option<f64>,
    pub query_ms: Option<f64>,
    /// The model's reply was cut at its `max_tokens`.
    #[serde(default)]
    pub truncated: bool,
}

/// One row of the cost table (seed 000 Table II): averages per answered
/// question of an answer set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostRow {
    pub answer_set_id: i64,
    /// The question set it answered.
    #[serde(default)]
    pub question_set_id: i64,
    pub name: String,
    pub method: String,
    /// The set's parameters as JSON.
    pub parameters: String,
    pub answers: i64,
    /// Answers whose accounting is known (imported ones may not say).
    pub measured: i64,
    pub avg_tokens: Option<f64>,
    pub avg_prompt_tokens: Option<f64>,
    pub avg_completion_tokens: Option<f64>,
    pub avg_llm_calls: Option<f64>,
    pub avg_query_ms: Option<f64>,
    pub avg_retrieval_ms: Option<f64>,
    pub avg_cost_usd: Option<f64>,
    /// The share of the set's paid prompt tokens the provider read from
    /// its prefix cache (and billed at its cached-input rate); `None`: no
    /// call of Assay's made the answers.
    #[serde(default)]
    pub cached_input_share: Option<f64>,
    pub made_by: Option<String>,
    /// A sanity check's second run (see [`AnswerSetView::sanity_of`]).
    #[serde(default)]
    pub sanity_of: Option<i64>,
    /// How much retrieved text the answers rest on.
    #[serde(default)]
    pub context: ContextSize,
}

/// Characters of retrieved text under which an answer rests on little
/// context (`engine::rag::THIN_CONTEXT_CHARS`; the WASM build has no
/// engine, a test keeps the two equal).
pub const THIN_CONTEXT_CHARS: i64 = 400;

/// How much retrieved text an answer set's answers were given: an
/// answer written from little or none is close to the model answering
/// from the question alone, whatever the method is called.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextSize {
    /// Answers whose retrieved text is known (an import or a service may
    /// not report it).
    pub known: i64,
    /// Mean characters of retrieved text over those.
    pub avg_chars: Option<f64>,
    /// Answers given under [`THIN_CONTEXT_CHARS`] characters.
    pub thin: i64,
    /// Answers given none.
    pub none: i64,
    /// The method retrieves nothing by design (the no-retrieval baseline).
    #[serde(default)]
    pub by_design: bool,
    /// Answers whose retrieved text is not known: imported without it, or
    /// from a service that reported none.
    #[serde(default)]
    pub unreported: i64,
}

impl ContextSize {
    /// The flag a set carries when some of its answers rest on little or no
    /// retrieved text, in words; `None` when none does.
    pub fn flag(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.thin > 0 {
            let none = match self.none {
                0 => String::new(),
                n if n == self.thin => " — none at all".to_string(),
                n => format!(" ({} with none)", crate::format::int(n)),
            };
            let why = if self.by_design { ": the no-retrieval baseline, by design".to_string() } else { String::new() };
            parts.push(format!(
                "{} of {} answers rest on under {THIN_CONTEXT_CHARS} characters of retrieved text{none}{why}",
                crate::format::int(self.thin),
                crate::format::int(self.known),
            ));
        }
        if self.unreported > 0 {
            let (n, its, they) = match self.unreported {
                1 => ("1 answer".to_string(), "its", "it was"),
                n => (format!("{} answers", crate::format::int(n)), "their", "they were"),
            };
            parts.push(format!(
                "{n} came without {its} retrieved text (imported so, or the service reported none): how much {they} \
                 written from is not known"
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// Whether the flag is a warning: a tenth or more of the answers, and
    /// not a baseline that retrieves nothing by design.
    pub fn warns(&self) -> bool {
        !self.by_design && self.thin > 0 && self.thin * 10 >= self.known
    }
}

/// Answers a page of the Answers page shows at once.
pub const ANSWERS_PER_PAGE: i64 = 20;

/// Characters of an answer a page shows before "show all" (the rest, and
/// the retrieved context, load when the answer is opened).
pub const ANSWER_PREVIEW_CHARS: usize = 600;

/// An answer as a list shows it: the first [`ANSWER_PREVIEW_CHARS`] of its
/// text, its size and accounting; the whole text and its context load when
/// it is opened ([`AnswerView`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerBrief {
    pub id: i64,
    /// The answer's beginning, cut at a word; the whole answer when short.
    pub preview: String,
    /// Whether `preview` is the whole answer.
    pub whole: bool,
    pub words: i64,
    /// Pieces of retrieved context the answer was given.
    pub contexts: i64,
    /// Characters of retrieved text, when known.
    #[serde(default)]
    pub context_chars: Option<i64>,
    pub tokens: Option<i64>,
    pub query_ms: Option<f64>,
    pub truncated: bool,
}

/// One question of a page: its answer in the set shown, and in the set
/// beside it when one is chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerPairRow {
    pub question_id: i64,
    pub question: String,
    pub a: AnswerBrief,
    pub b: Option<AnswerBrief>,
}

/// A page of an answer set's answers (question order), with the set beside
/// it; `total` counts the answers matching the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerPairsPage {
    pub rows: Vec<AnswerPairRow>,
    pub total: i64,
    /// From 1.
    pub page: i64,
    pub pages: i64,
}

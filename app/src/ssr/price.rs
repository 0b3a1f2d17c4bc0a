//! The price of what a form would start, before it does (#39): one stage's
//! estimate (`engine::experiment`'s, over the project's stored chunks)
//! priced with the configured model, and who answers said plainly.

use engine::experiment::{CorpusSize, StageEstimate};
use engine::llm::settings::{LlmSettings, ProviderKind};

use crate::error::AppResult;
use crate::model::{PlanStage, RunPlan};
use crate::ssr::store::{self, Db};

/// The project's corpus and its chunks' configured size, as an estimate reads them.
pub async fn corpus(pool: &Db, project_id: i64) -> AppResult<(CorpusSize, usize)> {
    let project = store::get_project(pool, project_id).await?;
    Ok((store::corpus_size(pool, &project).await?, project.chunk_tokens.max(1) as usize))
}

/// `e` as a plan: priced at the configured model's price, free when the
/// offline provider answers or `by_service` (the HTTP method: the user's
/// own service answers, Assay calls no model).
pub fn one_stage(llm: &LlmSettings, e: StageEstimate, questions: i64, by_service: bool) -> RunPlan {
    let offline = llm.provider == ProviderKind::Offline;
    let paid = !offline && !by_service;
    let cost = if paid {
        llm.prices.0.contains_key(&llm.model).then(|| llm.prices.cost(&llm.model, e.prompt_tokens, e.completion_tokens))
    } else {
        Some(0.0)
    };
    let paid_by = if by_service {
        "your service answers: Assay calls no model".to_string()
    } else if offline {
        "free: the offline provider answers in process; nothing is sent to a model".to_string()
    } else if let Some(p) = llm.prices.0.get(&llm.model) {
        format!(
            "{} at ${:.2} / ${:.2} per million prompt / reply tokens",
            llm.describe(),
            p.input_per_m,
            p.output_per_m
        )
    } else {
        format!("{} (no price set: Settings takes one)", llm.describe())
    };
    RunPlan {
        stages: vec![PlanStage {
            label: e.label,
            calls: e.calls,
            calls_max: e.calls,
            prompt_tokens: e.prompt_tokens,
            prompt_exact: false,
            completion_tokens: e.completion_tokens,
            cost_usd: cost,
            how: e.how,
        }],
        paid_by,
        paid,
        questions,
        judgments: 0,
    }
}

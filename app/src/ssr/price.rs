//! The price of what a form would start, before it does: one stage's
//! estimate (`engine::experiment`'s, over the project's stored chunks)
//! priced with the configured model, and who answers said plainly.

use engine::experiment::{CorpusSize, StageEstimate};
use engine::llm::settings::{LlmSettings, ProviderKind};

use crate::error::AppResult;
use crate::model::{PlanStage, RunPlan, TimeEstimate};
use crate::ssr::store::{self, Db};

/// The project's corpus and its chunks' configured size, as an estimate reads them.
pub async fn corpus(pool: &Db, project_id: i64) -> AppResult<(CorpusSize, usize)> {
    let project = store::projects::get_project(pool, project_id).await?;
    Ok((store::projects::corpus_size(pool, &project).await?, project.chunking.chunk_tokens.max(1)))
}

/// Who answers a paid plan, at what price ("openai · MODEL at URL at $0.15
/// / $0.60 per million prompt / reply tokens", and the Batch API's half).
pub fn priced_by(llm: &LlmSettings) -> String {
    match llm.prices.0.get(&llm.model) {
        Some(p) => {
            let batch = if llm.batches() { ", half of it through the Batch API" } else { "" };
            format!(
                "{} at ${:.2} / ${:.2} per million prompt / reply tokens{batch}",
                llm.describe(),
                p.input_per_m,
                p.output_per_m
            )
        }
        None => format!("{} (no price set: Settings takes one)", llm.describe()),
    }
}

/// `e` as a plan: priced at the configured model's price, free when the
/// offline provider answers or `by_service` (the HTTP method: the user's
/// own service answers, Assay calls no model).
pub fn one_stage(llm: &LlmSettings, e: StageEstimate, questions: i64, by_service: bool) -> RunPlan {
    let offline = llm.provider == ProviderKind::Offline;
    let paid = !offline && !by_service;
    let cost = if paid {
        llm.prices.0.contains_key(&llm.model).then(|| llm.job_cost(&llm.model, e.prompt_tokens, e.completion_tokens))
    } else {
        Some(0.0)
    };
    let paid_by = if by_service {
        "your service answers: Assay calls no model".to_string()
    } else if offline {
        "free: the offline provider answers in process; nothing is sent to a model".to_string()
    } else {
        priced_by(llm)
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
            ..Default::default()
        }],
        paid_by,
        paid,
        questions,
        judgments: 0,
        time: None,
    }
}

/// How long `calls` calls would take on the configured endpoint: calls ×
/// the mean latency of its last answered, uncached calls ÷ the
/// concurrency (the calls go out that many at a time, so this is the wall
/// time when the endpoint keeps up; a server answering one request at a
/// time shows it in the latency itself). `None` until a call to the model
/// was measured.
pub async fn time_of(pool: &Db, llm: &LlmSettings, calls: u64) -> Option<TimeEstimate> {
    let offline = llm.provider == ProviderKind::Offline;
    let model = if offline { engine::llm::offline::OFFLINE_MODEL } else { llm.model.as_str() };
    let (latency_ms, measured) = store::calls::recent_latency(pool, llm.provider.as_str(), model).await.ok()??;
    let concurrency = llm.concurrency.max(1);
    Some(TimeEstimate {
        seconds: calls as f64 * latency_ms / 1000.0 / concurrency as f64,
        latency_ms,
        measured,
        concurrency,
        offline,
    })
}

/// `plan` with the time its calls would take ([`time_of`]); none when
/// the user's own service answers (its speed is not Assay's to measure).
pub async fn timed(pool: &Db, llm: &LlmSettings, mut plan: RunPlan, by_service: bool) -> RunPlan {
    if !by_service {
        plan.time = time_of(pool, llm, plan.calls().0).await;
    }
    plan
}

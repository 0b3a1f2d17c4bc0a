//! The LLM tasks of Assay's stages: for each, the prompt (a file under
//! `engine/prompts/`, whose hash is logged with every call), how a request is
//! built, and the `offline` provider's classical-NLP implementation.

pub mod describe;
pub mod extract;
pub mod rate;
pub mod summarise;

use sha2::{Digest, Sha256};

use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::offline::OfflineProvider;
use crate::llm::{CallContext, ChatRequest, Gateway};

/// Registers every task's offline implementation.
pub fn register_offline(provider: &mut OfflineProvider) {
    provider.register(summarise::PURPOSE, summarise::offline);
    provider.register(extract::PURPOSE, extract::offline);
    provider.register(extract::GLEAN_PURPOSE, extract::offline_glean);
    provider.register(describe::PURPOSE, describe::offline);
    use crate::questions::graph as q;
    provider.register(q::NODE_PURPOSE, q::offline_node);
    provider.register(q::EDGE_PURPOSE, q::offline_edge);
    provider.register(q::SUBGRAPH_PURPOSE, q::offline_subgraph);
    use crate::questions::summary;
    provider.register(summary::PURPOSE, summary::offline);
    use crate::questions::hierarchy;
    provider.register(hierarchy::PURPOSE, hierarchy::offline);
    provider.register(hierarchy::CHECK_PURPOSE, hierarchy::offline_check);
    use crate::questions::relevance;
    provider.register(relevance::PURPOSE, relevance::offline);
    use crate::questions::mentions;
    provider.register(mentions::PURPOSE, mentions::offline);
    use crate::rag;
    provider.register(rag::answer::PURPOSE, rag::answer::offline);
    provider.register(rag::lightrag::PURPOSE, rag::lightrag::offline);
    provider.register(rag::graphrag::REPORT_PURPOSE, rag::graphrag::offline_report);
    provider.register(rag::graphrag::MAP_PURPOSE, rag::graphrag::offline_map);
    use crate::judge::scoring;
    provider.register(scoring::PURPOSE, scoring::offline);
    use crate::judge::legacy;
    provider.register(legacy::PURPOSE, legacy::offline);
    use crate::judge::align;
    provider.register(align::APPEND_PURPOSE, align::offline_append);
    provider.register(rate::PURPOSE, rate::offline);
}

/// A job item that is one call: sends `req` (made from the prompt file
/// `template`, whose hash is logged) and turns the reply into the item's
/// result with `parse`, whose error fails the item; tokens and cost are
/// kept either way.
pub async fn one_call(
    gateway: &Gateway,
    job_id: i64,
    item: &WorkItem,
    template: &str,
    req: &ChatRequest,
    parse: impl Fn(&str) -> Result<String, String>,
) -> ItemOutcome {
    let ctx =
        CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: Some(prompt_hash(template)) };
    match gateway.chat_parsed(req, &ctx, parse).await {
        Ok(parsed) => {
            let tokens = parsed.replies.iter().map(|r| r.prompt_tokens + r.completion_tokens).sum();
            let cost_usd = parsed.replies.iter().map(|r| r.cost_usd).sum();
            match parsed.value {
                Ok(result) => ItemOutcome::Done { result, tokens, cost_usd },
                Err(error) => ItemOutcome::Failed { error, tokens, cost_usd },
            }
        }
        Err((e, _)) => ItemOutcome::Failed { error: e.to_string(), tokens: 0, cost_usd: 0.0 },
    }
}

/// The JSON object in a reply (code fences and prose around it tolerated;
/// a reply cut mid-object keeps its complete elements, see
/// [`crate::llm::json`]); `what` names it in the errors ("no JSON object in
/// the verdict", "unreadable verdict: …").
pub fn json_object(reply: &str, what: &str) -> Result<serde_json::Value, String> {
    crate::llm::json::object(reply, what).map(|(v, _)| v)
}

/// Hex SHA-256 of a prompt template, stored with each call made from it.
pub fn prompt_hash(template: &str) -> String {
    Sha256::digest(template.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The text between the `<<<` and `>>>` markers that prompts put around
/// their input, so offline implementations can find it.
pub fn delimited(message: &str) -> Option<&str> {
    let start = message.find("<<<\n")? + 4;
    let end = message.rfind("\n>>>")?;
    (start <= end).then(|| &message[start..end])
}

//! The accounting of a group of calls (one answer, one judged pair):
//! tokens, cost, cached, truncated, repaired and context-cut calls.

use serde::{Deserialize, Serialize};

use super::prompt::prompt_hash;
use super::{CallContext, ChatReply, ChatRequest, Gateway};

/// Tokens, cost and calls of one answer (or any group of calls), over all its LLM calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meter {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
    pub llm_calls: u32,
    /// Of those, answered from the cache.
    pub cached_calls: u32,
    /// Replies cut by `max_tokens`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated_calls: u32,
    /// Replies of the wrong shape that were given a repair turn.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repaired_calls: u32,
    /// Prompts whose context was cut to fit the model's context window.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_cut_calls: u32,
    /// The answer itself (not a keyword or map call) was cut at its budget.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answer_cut: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Meter {
    pub fn add(&mut self, reply: &ChatReply) {
        self.prompt_tokens += reply.prompt_tokens;
        self.completion_tokens += reply.completion_tokens;
        self.cost_usd += reply.cost_usd;
        self.llm_calls += 1;
        self.cached_calls += u32::from(reply.cached);
        self.truncated_calls += u32::from(reply.truncated);
    }

    /// Adds another meter's calls to this one.
    pub fn absorb(&mut self, other: &Meter) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cost_usd += other.cost_usd;
        self.llm_calls += other.llm_calls;
        self.cached_calls += other.cached_calls;
        self.truncated_calls += other.truncated_calls;
        self.repaired_calls += other.repaired_calls;
        self.context_cut_calls += other.context_cut_calls;
    }

    /// Sends `req` (from the prompt file `template`) and counts it.
    pub async fn chat(
        &mut self,
        gateway: &Gateway,
        ctx: &CallContext,
        template: &str,
        req: &ChatRequest,
    ) -> Result<String, String> {
        let ctx = CallContext { prompt_hash: Some(prompt_hash(template)), ..ctx.clone() };
        let reply = gateway.chat(req, &ctx).await.map_err(|e| e.to_string())?;
        self.add(&reply);
        Ok(reply.text)
    }

    /// Sends `req` and reads the reply with `parse`, with one repair turn
    /// for JSON of the wrong shape ([`Gateway::chat_parsed`]); counts every call.
    pub async fn chat_parsed<T>(
        &mut self,
        gateway: &Gateway,
        ctx: &CallContext,
        template: &str,
        req: &ChatRequest,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, String> {
        let ctx = CallContext { prompt_hash: Some(prompt_hash(template)), ..ctx.clone() };
        match gateway.chat_parsed(req, &ctx, parse).await {
            Ok(parsed) => {
                parsed.replies.iter().for_each(|r| self.add(r));
                self.repaired_calls += u32::from(parsed.repaired);
                parsed.value
            }
            Err((e, replies)) => {
                replies.iter().for_each(|r| self.add(r));
                Err(e.to_string())
            }
        }
    }
}

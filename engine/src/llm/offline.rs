//! The `offline` provider: deterministic classical-NLP stand-ins for each
//! LLM task, so Assay works out of the box with no model.
//!
//! Each task (extraction, question generation, answering, judging) registers
//! a function under its `purpose`: each stage's `register_offline` adds its
//! own, and `crate::offline::provider` gathers them all, so this layer names
//! no stage. A
//! request is answered by the function registered for its purpose, or
//! refused with [`LlmError::Unsupported`]. Accounting is the same as for a
//! real model (tokens counted with `cl100k_base` as if the prompt had been
//! sent), so every page and report works; the provider's name, `offline`,
//! travels with every result, and the UI labels it "offline (no LLM)".

use std::collections::HashMap;
use std::sync::Arc;

use super::{count_prompt_tokens, BoxFuture, CallProvider, ChatRequest, Failure, LlmError, Provider, ProviderReply};

/// A task's offline implementation: the request in, the reply text out.
pub type OfflineTask = Arc<dyn Fn(&ChatRequest) -> Result<String, String> + Send + Sync>;

/// The model name offline replies carry.
pub const OFFLINE_MODEL: &str = "offline";

#[derive(Clone)]
pub struct OfflineProvider {
    tasks: HashMap<String, OfflineTask>,
}

impl OfflineProvider {
    /// A provider that knows only `ping` (the connection test); the stages
    /// register the rest. (No `Default`: a default that silently knew no
    /// task would be a trap.)
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        let mut p = OfflineProvider { tasks: HashMap::new() };
        p.register("ping", |req| {
            let asked = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
            Ok(format!("pong (offline provider, no LLM): received {} characters", asked.chars().count()))
        });
        p
    }

    pub fn register(
        &mut self,
        purpose: &str,
        task: impl Fn(&ChatRequest) -> Result<String, String> + Send + Sync + 'static,
    ) {
        self.tasks.insert(purpose.to_string(), Arc::new(task));
    }

    /// The reply text to `req`, as `chat` gives it (without accounting).
    pub fn answer(&self, req: &ChatRequest) -> Result<String, String> {
        let task =
            self.tasks.get(&req.purpose).ok_or_else(|| LlmError::Unsupported(req.purpose.clone()).to_string())?;
        task(req)
    }

    /// The reply text to an OpenAI-style chat request's body, as this
    /// provider would give it, or `offline: <why not>`: what a mock server
    /// answers when it stands in for a model (its task from
    /// `x_assay_purpose`, where mockllm puts the `X-Assay-Purpose` header).
    pub fn answer_body(&self, body: &serde_json::Value) -> String {
        let purpose = body["x_assay_purpose"].as_str().unwrap_or("");
        let messages: Vec<super::Message> = serde_json::from_value(body["messages"].clone()).unwrap_or_default();
        self.answer(&ChatRequest::new(purpose, messages)).unwrap_or_else(|e| format!("offline: {e}"))
    }

    pub fn purposes(&self) -> Vec<&str> {
        let mut p: Vec<&str> = self.tasks.keys().map(String::as_str).collect();
        p.sort();
        p
    }
}

impl Provider for OfflineProvider {
    fn name(&self) -> CallProvider {
        CallProvider::Offline
    }

    fn base_url(&self) -> &str {
        ""
    }

    fn default_model(&self) -> &str {
        OFFLINE_MODEL
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ProviderReply, Failure>> {
        Box::pin(async move {
            let task = self
                .tasks
                .get(&req.purpose)
                .ok_or_else(|| Failure { error: LlmError::Unsupported(req.purpose.clone()), attempts: 1 })?;
            let text = task(req).map_err(|e| Failure { error: LlmError::Parse(e), attempts: 1 })?;
            Ok(ProviderReply {
                prompt_tokens: count_prompt_tokens(&req.messages),
                completion_tokens: super::content_tokens(&text),
                text,
                model: OFFLINE_MODEL.to_string(),
                attempts: 1,
                finish_reason: Some("stop".into()),
                batched: false,
                cached_tokens: 0,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{CallContext, Gateway, MemoryStore, Message, PriceTable};

    #[tokio::test]
    async fn offline_calls_are_accounted_like_real_ones_and_made_again() {
        let store = Arc::new(MemoryStore::default());
        let gw = Gateway::new(Arc::new(OfflineProvider::new()), store.clone(), PriceTable::default());
        let req = ChatRequest::new("ping", vec![Message::user("hello world")]);
        let first = gw.chat(&req, &CallContext::default()).await.unwrap();
        assert_eq!(first.provider, types::CallProvider::Offline);
        assert_eq!(first.model, "offline");
        assert!(first.text.starts_with("pong (offline provider, no LLM)"));
        assert_eq!(first.prompt_tokens, 8);
        assert!(!first.cached);
        // Not cached: the same reply made again (as fast as a lookup, and free).
        let second = gw.chat(&req, &CallContext::default()).await.unwrap();
        assert!(!second.cached);
        assert_eq!(second.text, first.text);
        assert_eq!(store.log().len(), 2);

        let unknown = ChatRequest::new("summarise", vec![Message::user("x")]);
        let err = gw.chat(&unknown, &CallContext::default()).await.unwrap_err();
        assert_eq!(err.to_string(), "the offline provider has no implementation for purpose \"summarise\"");
        assert_eq!(store.log().last().unwrap().error.as_deref(), Some(err.to_string().as_str()));
    }
}

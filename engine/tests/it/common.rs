//! What several test modules set up alike.

use std::sync::Arc;

use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{Gateway, MemoryStore, PriceTable};
use mockllm::{MockConfig, MockServer, Responder};
use serde_json::Value;

/// A mock endpoint answering with `reply`, the real `openai` client's
/// gateway to it (model "mock-model", `prices`), and its call log.
pub async fn replying(
    reply: impl Fn(&Value) -> String + Send + Sync + 'static,
    prices: PriceTable,
) -> (MockServer, Gateway, Arc<MemoryStore>) {
    let mock =
        MockServer::start(MockConfig { responder: Some(Responder(Arc::new(reply))), ..Default::default() }).await;
    let log = Arc::new(MemoryStore::default());
    let gw = Gateway::new(
        Arc::new(OpenAiProvider::new(OpenAiConfig::new(mock.base_url(), "mock-model")).unwrap()),
        log.clone(),
        prices,
    );
    (mock, gw, log)
}

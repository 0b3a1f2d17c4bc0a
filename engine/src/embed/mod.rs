//! Text embeddings for dense retrieval (NaiveRAG) and the similarity
//! metrics: all-MiniLM-L6-v2 in process ([`minilm`]), or an
//! OpenAI-compatible `/v1/embeddings` endpoint through the gateway (logged
//! and cached like every call).

pub mod minilm;

use std::sync::Arc;

use crate::llm::Meter;
use crate::llm::{CallContext, Gateway};

/// Where embeddings come from.
#[derive(Clone)]
pub enum Embedder {
    /// all-MiniLM-L6-v2 in process.
    MiniLm(Arc<minilm::MiniLm>),
    /// The gateway's embedding model (`/v1/embeddings`).
    Endpoint,
}

impl Embedder {
    /// The name vectors are stored under, so vectors of different models never mix.
    pub fn model_name(&self, gateway: &Gateway) -> String {
        match self {
            Embedder::MiniLm(_) => "all-MiniLM-L6-v2".into(),
            Embedder::Endpoint => format!("{}:{}", gateway.provider().name(), gateway.embed_model()),
        }
    }

    /// Embeddings of `texts` (unit length for MiniLM; as the endpoint gives
    /// them otherwise). An endpoint call is counted in `meter` (its tokens
    /// and cost; in-process embedding costs no tokens).
    pub async fn embed(
        &self,
        gateway: &Gateway,
        ctx: &CallContext,
        texts: &[String],
        meter: Option<&mut Meter>,
    ) -> Result<Vec<Vec<f32>>, String> {
        match self {
            Embedder::MiniLm(model) => {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                model.embed(&refs).map_err(|e| e.to_string())
            }
            Embedder::Endpoint => {
                let r = gateway.embed(texts, ctx).await.map_err(|e| e.to_string())?;
                if let Some(m) = meter {
                    m.prompt_tokens += r.prompt_tokens;
                    m.cost_usd += r.cost_usd;
                    m.llm_calls += 1;
                    m.cached_calls += u32::from(r.cached);
                }
                Ok(r.vectors)
            }
        }
    }
}

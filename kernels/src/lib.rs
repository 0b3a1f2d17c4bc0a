//! Numeric kernels for in-process MiniLM (`engine::embed::minilm`), where a
//! profile of the forward pass found scalar `erff` (GELU) and `expf`
//! (softmax) calls between the matrix products.
//!
//! Both are written as straight-line arithmetic over slices, which the
//! compiler vectorises: 16 lanes under AVX-512, 8 under AVX2 + FMA (chosen
//! at run time, the build targets baseline x86-64), 4 otherwise. Accuracy, checked by the
//! tests against libm over the ranges the model meets:
//! - [`exp`]: Cephes' `expf` reduction and polynomial, ≤ 2 ulp.
//! - [`erf`]: Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5 × 10⁻⁷ in
//!   exact arithmetic), ≤ 5 × 10⁻⁷ evaluated in f32; [`gelu`] is then
//!   within 2 × 10⁻⁷ · max(|x|, 1) of x · Φ(x) — libm's `erff` is within
//!   6 × 10⁻⁸ — and the model's vectors stay equal to the reference's
//!   (`engine/benches/minilm.rs` prints the least cosine).
//!
//! [`gemm`]: MiniLM's dense layers with AVX-512, over weights packed once.
//!
//! A crate of its own so dev builds (tests, the browser suite's server)
//! compile it optimised, like the other numeric crates.

pub mod gemm;

/// e^x for x in [-87, 88] (clamped beyond: 1.6 × 10⁻³⁸ … 1.65 × 10³⁸).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts, so n · ln 2 is exact in the first.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding 1.5 · 2²³ rounds to an integer without a rounding instruction
    // (baseline x86-64 has none); the integer is then in the low bits.
    const MAGIC: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let t = x * LOG2E + MAGIC;
    let n = t - MAGIC;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 5.000_000_1e-1;
    let e = p * r * r + r + 1.0;
    let scale = f32::from_bits(((t.to_bits() as i32 - MAGIC.to_bits() as i32 + 127) << 23) as u32);
    e * scale
}

/// erf(x), absolute error ≤ 5 × 10⁻⁷ (Abramowitz & Stegun 7.1.26 in f32).
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152) * t + 1.421_413_8) * t - 0.284_496_74) * t + 0.254_829_6) * t;
    let y = 1.0 - poly * exp(-a * a);
    y.copysign(x)
}

/// GELU in its exact form, x · Φ(x) = ½ x (1 + erf(x / √2)).
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// Each value replaced by its [`gelu`].
pub fn gelu_in_place(values: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { gelu_avx512(values) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { gelu_avx2(values) };
    }
    gelu_any(values)
}

#[inline(always)]
fn gelu_any(values: &mut [f32]) {
    for v in values.iter_mut() {
        *v = gelu(*v);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gelu_avx2(values: &mut [f32]) {
    gelu_any(values)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gelu_avx512(values: &mut [f32]) {
    gelu_any(values)
}

/// Softmax over `row[..live]`, in place; `row[live..]` (padding the
/// attention must not see) becomes 0. `live` ≥ 1.
pub fn softmax_prefix(row: &mut [f32], live: usize) {
    assert!(live >= 1 && live <= row.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { softmax_avx512(row, live) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { softmax_avx2(row, live) };
    }
    softmax_any::<8>(row, live)
}

/// `LANES`: the vector width the compiler is to fill (8 for AVX2, 16 for AVX-512).
#[inline(always)]
fn softmax_any<const LANES: usize>(row: &mut [f32], live: usize) {
    let (seen, padding) = row.split_at_mut(live);
    // Lane-wise maxima and sums: a single accumulator would keep the
    // compiler from vectorising (f32 addition is not associative).
    let mut max = [f32::NEG_INFINITY; LANES];
    let mut chunks = seen.chunks_exact(LANES);
    for c in &mut chunks {
        for (m, &v) in max.iter_mut().zip(c) {
            *m = if v > *m { v } else { *m };
        }
    }
    let mut top = max.iter().fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a });
    for &v in chunks.remainder() {
        top = if v > top { v } else { top };
    }
    let mut sum = [0f32; LANES];
    let mut chunks = seen.chunks_exact_mut(LANES);
    for c in &mut chunks {
        for (s, v) in sum.iter_mut().zip(c.iter_mut()) {
            *v = exp(*v - top);
            *s += *v;
        }
    }
    let mut total: f32 = sum.iter().sum();
    for v in chunks.into_remainder() {
        *v = exp(*v - top);
        total += *v;
    }
    let inverse = 1.0 / total;
    for v in seen.iter_mut() {
        *v *= inverse;
    }
    padding.fill(0.0);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_avx2(row: &mut [f32], live: usize) {
    softmax_any::<8>(row, live)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn softmax_avx512(row: &mut [f32], live: usize) {
    softmax_any::<16>(row, live)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_is_within_two_ulp_of_libm() {
        let mut worst = 0;
        let mut x = -87.0f32;
        while x < 88.0 {
            worst = worst.max(ulps(exp(x), libm::expf(x)));
            x += 0.001_3;
        }
        assert!(worst <= 2, "{worst} ulp");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) > 0.0 && exp(-1000.0) < 2e-38, "clamped, not zero or NaN");
    }

    #[test]
    fn erf_and_gelu_are_within_the_stated_error_of_libm() {
        let (mut erf_worst, mut gelu_worst) = (0f64, 0f64);
        let mut x = -10.0f32;
        while x < 10.0 {
            erf_worst = erf_worst.max((erf(x) as f64 - libm::erf(x as f64)).abs());
            let exact = 0.5 * x as f64 * (1.0 + libm::erf(x as f64 / std::f64::consts::SQRT_2));
            // Relative to the larger of |x| and 1 (GELU is ≈ x for large x, ≈ 0 for negative).
            gelu_worst = gelu_worst.max((gelu(x) as f64 - exact).abs() / (x.abs() as f64).max(1.0));
            x += 0.000_7;
        }
        // Measured: 4.9e-7 and 1.8e-7.
        assert!(erf_worst <= 5e-7, "erf off by {erf_worst:e}");
        assert!(gelu_worst <= 2e-7, "gelu off by {gelu_worst:e}");
        assert_eq!(erf(0.0), 0.0);
        let mut out = [-3.0f32, 0.0, 3.0];
        gelu_in_place(&mut out);
        assert!((out[0] + 0.004_049_7).abs() < 1e-6 && out[1] == 0.0 && (out[2] - 2.995_950_3).abs() < 1e-6, "{out:?}");
    }

    #[test]
    fn softmax_prefix_matches_the_plain_formula_and_zeroes_padding() {
        for len in [1usize, 7, 8, 9, 31, 256] {
            for live in [1, len / 2 + 1, len] {
                let row: Vec<f32> = (0..len).map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.7).collect();
                let mut got = row.clone();
                softmax_prefix(&mut got, live);
                let max = row[..live].iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64;
                let sum: f64 = row[..live].iter().map(|&v| (v as f64 - max).exp()).sum();
                for i in 0..len {
                    let want = if i < live { (row[i] as f64 - max).exp() / sum } else { 0.0 };
                    assert!(
                        (got[i] as f64 - want).abs() <= 1e-6 * want.max(1e-3),
                        "len {len} live {live} [{i}]: {} vs {want}",
                        got[i]
                    );
                }
            }
        }
    }
}

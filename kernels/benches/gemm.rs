//! MiniLM's dense layers through `kernels::gemm` (AVX-512 where the CPU has
//! it): GFLOP/s per shape on one thread, for a pass of 2,048 tokens (the
//! encoder's `TOKENS_PER_PASS`), per second of this thread's CPU time (so
//! other work on the machine does not lower it) and of wall time, beside
//! the CPU's own peak of fused multiply-adds measured the same way.
//! `cargo bench -p kernels --bench gemm`.

use std::time::Instant;

use kernels::gemm::{fast, PackedLinear};

/// This thread's CPU time in seconds (user + system, 10 ms ticks).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Runs `f` (doing `flops` each time) for at least 2 s of CPU time:
/// GFLOP/s per CPU second and per wall second.
fn rate(flops: f64, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let (cpu0, wall0) = (cpu_seconds(), Instant::now());
    let mut runs = 0;
    while cpu_seconds() - cpu0 < 2.0 {
        f();
        runs += 1;
    }
    let total = flops * runs as f64 / 1e9;
    (total / (cpu_seconds() - cpu0), total / wall0.elapsed().as_secs_f64())
}

fn main() {
    let m = 2048;
    println!("dense layers, {m} rows, one thread; AVX-512 kernel: {}", fast());
    #[cfg(target_arch = "x86_64")]
    if fast() {
        let (cpu, _) = rate(24.0 * 32.0 * 1e6, || {
            // SAFETY: the CPU has AVX-512F.
            unsafe { peak() }
        });
        println!("  the CPU's peak (independent fused multiply-adds): {cpu:.1} GFLOP/s per CPU second");
    }
    for (name, n, k) in [
        ("query+key+value", 1152, 384),
        ("attention out", 384, 384),
        ("intermediate", 1536, 384),
        ("output", 384, 1536),
    ] {
        let w: Vec<f32> = (0..n * k).map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5).collect();
        let x: Vec<f32> = (0..m * k).map(|i| ((i * 104_729) % 1000) as f32 / 1000.0 - 0.5).collect();
        let packed = PackedLinear::new(&w, &vec![0.1; n], n, k);
        let mut y = vec![0f32; m * n];
        let (cpu, wall) = rate(2.0 * (m * n * k) as f64, || {
            packed.forward(&x, m, &mut y);
            std::hint::black_box(&mut y);
        });
        println!("  {name:<16} {m} × {n:>4} × {k:>4}: {cpu:>6.1} GFLOP/s per CPU second, {wall:>6.1} per wall second");
    }
    // The fused attention over the same pass: 8 sequences of 256 tokens,
    // 12 heads of 32; two products of 256 × 256 × 32 per head and sequence.
    let (batch, len, heads, head) = (8, 256, 12, 32);
    let qkv: Vec<f32> =
        (0..batch * len * 3 * heads * head).map(|i| ((i * 7919) % 1000) as f32 / 4000.0 - 0.125).collect();
    let mut context = vec![0f32; batch * len * heads * head];
    let flops = (batch * heads * 2 * 2 * len * len * head) as f64;
    let (cpu, wall) = rate(flops, || {
        kernels::gemm::attention(&qkv, batch, len, heads, head, &[len; 8], &mut context);
        std::hint::black_box(&mut context);
    });
    println!("  attention        {batch} × {len} tokens, {heads} heads of {head}: {cpu:>6.1} GFLOP/s per CPU second, {wall:>6.1} per wall second (softmax included)");
}

/// 10⁶ steps of 24 independent 16-lane fused multiply-adds.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn peak() {
    use std::arch::x86_64::*;
    let (b, c) = (_mm512_set1_ps(1.000_000_1), _mm512_set1_ps(0.999_999));
    let mut acc = [_mm512_setzero_ps(); 24];
    for _ in 0..1_000_000 {
        for a in acc.iter_mut() {
            *a = _mm512_fmadd_ps(*a, b, c);
        }
    }
    std::hint::black_box(&acc);
}

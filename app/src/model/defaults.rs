//! The defaults the forms start from and the help texts name, in one table.
//! The browser's code has no engine, so they are written here once; on the
//! server each is checked at compile time to be the engine's own (the
//! default a run gets when the form's field is left alone, and the CLI's),
//! and a test checks every help text names its default.

/// M, trials (engine `judge::eval::DEFAULT_TRIALS`).
pub const TRIALS: u32 = 25;
/// N, judgments per order.
pub const REPEATS: u32 = 2;
/// Length alignment's tolerance, in words.
pub const TOLERANCE: usize = 10;
/// Regenerations before the forced append.
pub const ADJUSTMENTS: u32 = 3;
/// The bias lab's simulated judge.
pub const POSITION_BIAS: f64 = 0.3;
pub const LENGTH_BIAS: f64 = 0.1;
pub const NOISE: f64 = 0.5;
/// k of nDCG@k and Recall@k.
pub const METRICS_K: usize = 10;
/// Equal-frequency bins of the cosine similarity.
pub const METRICS_BINS: usize = 4;

#[cfg(feature = "ssr")]
const _: () = {
    use engine::judge::{align, eval};
    assert!(TRIALS == eval::DEFAULT_TRIALS);
    assert!(REPEATS == eval::DEFAULT_REPEATS);
    assert!(TOLERANCE == align::DEFAULT_TOLERANCE);
    assert!(ADJUSTMENTS == align::DEFAULT_ADJUSTMENTS);
    assert!(POSITION_BIAS.to_bits() == eval::DEFAULT_POSITION_BIAS.to_bits());
    assert!(LENGTH_BIAS.to_bits() == eval::DEFAULT_LENGTH_BIAS.to_bits());
    assert!(NOISE.to_bits() == eval::DEFAULT_NOISE.to_bits());
    assert!(METRICS_K == engine::metrics::DEFAULT_K);
    assert!(METRICS_BINS == engine::metrics::DEFAULT_BINS);
};

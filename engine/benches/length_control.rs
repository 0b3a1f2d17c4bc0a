//! The cost of the length-controlled win rate (`engine::judge::length_control`)
//! of one pair at the papers' size and beyond: 5,040 questions × M = 25
//! trials × 2 orders × N = 2 repeats = 504,000 judgments (both fits: the
//! paper's with 400 question resamples, alpaca_eval's 5-fold
//! cross-validation over 10 values of C), and 20,000 questions (2 million
//! judgments). The report computes it once per pair per snapshot.
//! `cargo bench -p engine --bench length_control` (BENCH_ROUNDS, default 3:
//! the median round is reported).

use std::time::Instant;

use engine::judge::length_control::{length_control, Observation};

fn judgments(questions: i64) -> Vec<Observation> {
    let mut rng = fastrand::Rng::with_seed(11);
    let mut out = Vec::with_capacity(questions as usize * 100);
    for q in 0..questions {
        // Word counts of two answers, as a real pair's differ.
        let delta = rng.i64(-250..=250) as f64;
        for _trial in 0..25 {
            for a_first in [true, false] {
                for _repeat in 0..2 {
                    let z = 0.2 + 1.1 * (delta / 120.0).tanh() + if a_first { 0.4 } else { -0.4 };
                    let p = 1.0 / (1.0 + (-z).exp());
                    let u = rng.f64();
                    let preference = if u < 0.15 {
                        0.5
                    } else if u < 0.15 + 0.85 * p {
                        1.0
                    } else {
                        0.0
                    };
                    out.push(Observation { question: q, preference, delta_words: delta, a_first });
                }
            }
        }
    }
    out
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    for questions in [5_040i64, 20_000] {
        let obs = judgments(questions);
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..rounds {
            let t = Instant::now();
            last = length_control(&obs, 1);
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let lc = last.unwrap();
        let paper = lc.paper.as_ref().unwrap();
        let code = lc.code.as_ref().unwrap();
        assert!(paper.length > 0.5 && paper.position > 0.2, "the simulated biases are found");
        println!(
            "length control, {} questions, {} judgments: {:.3} s (median of {rounds}); raw {:.4}, paper {:.4} [{:.4}, {:.4}], \
             alpaca_eval {:.4} (C = {:.4})",
            questions,
            lc.judgments,
            times[times.len() / 2],
            lc.raw_win_rate,
            paper.win_rate,
            lc.paper_ci.unwrap().0,
            lc.paper_ci.unwrap().1,
            code.fit.win_rate,
            code.c
        );
    }
}

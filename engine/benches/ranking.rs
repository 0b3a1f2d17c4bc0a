//! The cost of ranking an evaluation's methods (Bradley–Terry with 1,000
//! question resamples, `engine::judge::ranking::rank`) at the papers' size
//! and beyond: 4 methods (6 pairs) × 5,040 questions × M = 25 trials =
//! 756,000 verdicts, and 8 methods (28 pairs) × 5,040 × 25 = 3.5 million.
//! The report computes it once per snapshot of an evaluation.
//! `cargo bench -p engine --bench ranking` (BENCH_ROUNDS, default 3: the
//! median round is reported).

use std::time::Instant;

use engine::judge::ranking::{rank, QuestionVerdicts};
use engine::judge::Outcome;

fn verdicts(methods: usize, questions: usize, trials: usize) -> Vec<QuestionVerdicts> {
    let mut rng = fastrand::Rng::with_seed(7);
    let strength: Vec<f64> = (0..methods).map(|m| m as f64 * 0.15).collect();
    (0..questions)
        .map(|_| {
            let mut v = Vec::new();
            for a in 0..methods {
                for b in a + 1..methods {
                    for _ in 0..trials {
                        let p = 1.0 / (1.0 + (strength[b] - strength[a]).exp());
                        let u = rng.f64();
                        v.push((
                            a,
                            b,
                            if u < 0.2 {
                                Outcome::Tie
                            } else if u < 0.2 + 0.8 * p {
                                Outcome::A
                            } else {
                                Outcome::B
                            },
                        ));
                    }
                }
            }
            v
        })
        .collect()
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    for methods in [4usize, 8] {
        let qs = verdicts(methods, 5_040, 25);
        let names: Vec<(i64, String)> = (0..methods).map(|m| (m as i64, format!("m{m}"))).collect();
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..rounds {
            let t = Instant::now();
            last = Some(rank(&names, &qs, 1));
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let r = last.unwrap();
        assert_eq!(r.resamples, engine::judge::ranking::RESAMPLES);
        assert_eq!(r.rows[0].name, format!("m{}", methods - 1), "the strongest ranks first");
        println!(
            "ranking: {methods} methods, {} verdicts over {} questions, {} resamples: median {:.3} s of {rounds} rounds ({})",
            r.battles,
            r.questions,
            r.resamples,
            times[times.len() / 2],
            times.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(", ")
        );
    }
}

//! The cost of a jury's report (`engine::judge::jury`) at the papers'
//! size and beyond: one pair × 5,040 questions × M = 25 trials × N = 2
//! repeats × 2 orders, judged by 3 and by 5 judges (756,000 and 1.26
//! million judgments): each judge's verdicts and median trial, the jury's
//! by mean score and by majority, Fleiss' κ and Krippendorff's α over the
//! 126,000 items, and the agreement with people who rated both answers of
//! every question. The report computes it once per snapshot.
//! `cargo bench -p engine --bench jury` (BENCH_ROUNDS, default 3: the
//! median round is reported).

use std::collections::BTreeMap;
use std::time::Instant;

use engine::judge::jury::{jury, people, PairJudgments};
use engine::judge::{Judgment, Order};

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    let (questions, trials) = (5_040i64, 25u32);
    for judges in [3u32, 5] {
        let mut rng = fastrand::Rng::with_seed(43);
        let quality: Vec<(f64, f64)> = (0..questions).map(|_| (rng.f64() * 3.0 + 1.0, rng.f64() * 3.0 + 1.0)).collect();
        let score = |rng: &mut fastrand::Rng, q: f64, bias: f64| -> [u8; 4] {
            std::array::from_fn(|_| (q + bias + rng.f64() * 2.0 - 1.0).round().clamp(0.0, 5.0) as u8)
        };
        let maps: Vec<BTreeMap<u32, Vec<Judgment>>> = quality
            .iter()
            .map(|(qa, qb)| {
                (0..trials)
                    .map(|t| {
                        let mut js = Vec::new();
                        for judge in 0..judges {
                            let bias = judge as f64 * 0.3;
                            for repeat in 0..2 {
                                for order in [Order::AFirst, Order::BFirst] {
                                    let (ba, bb) = if order == Order::AFirst { (bias, 0.0) } else { (0.0, bias) };
                                    js.push(Judgment {
                                        order,
                                        repeat,
                                        a: score(&mut rng, *qa, ba),
                                        b: score(&mut rng, *qb, bb),
                                        judge,
                                    });
                                }
                            }
                        }
                        (t, js)
                    })
                    .collect()
            })
            .collect();
        let pairs =
            [PairJudgments { a: 1, b: 2, questions: maps.iter().enumerate().map(|(q, m)| (q as i64, m)).collect() }];
        let human: BTreeMap<(i64, i64), f64> = quality
            .iter()
            .enumerate()
            .flat_map(|(q, (qa, qb))| [((1, q as i64), qa - 1.0), ((2, q as i64), qb - 1.0)])
            .collect();
        let labels: Vec<String> = (0..judges).map(|j| format!("judge {}", j + 1)).collect();
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..rounds {
            let t = Instant::now();
            let mut j = jury(&labels, &pairs).unwrap();
            j.people = people(&labels, &pairs, &human, "Correctness", vec![1]);
            times.push(t.elapsed().as_secs_f64());
            last = Some(j);
        }
        times.sort_by(f64::total_cmp);
        let j = last.unwrap();
        assert_eq!(j.items, (questions * trials as i64) as usize);
        let people = j.people.as_ref().unwrap();
        assert!(people.rows.iter().all(|r| r.n == questions as usize));
        println!(
            "jury: {judges} judges, {} judgments over {} items: median {:.3} s of {rounds} rounds ({}); κ {:.3}, α {:.3}, jury's ρ with people {:.3}",
            questions as u64 * u64::from(trials) * 4 * u64::from(judges),
            j.items,
            times[times.len() / 2],
            times.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(", "),
            j.fleiss_kappa.unwrap_or(f64::NAN),
            j.krippendorff_alpha.unwrap_or(f64::NAN),
            people.rows.last().unwrap().spearman.map_or(f64::NAN, |s| s.0),
        );
    }
}

//! Sequential trials (`engine::judge::sequential`) against the fixed M = 25
//! on simulated worlds: per true relative win rate θ and question count,
//! over many experiments, the verdicts each reaches (even / differs / open),
//! how often they agree, the false-verdict rate, and the share of trials
//! sequential judging needed. Also the
//! time one sequential course takes to decide at the papers' size.
//! `cargo bench -p engine --bench sequential` (EXPERIMENTS, default 2000).

use std::time::Instant;

use engine::judge::eval::EVEN;
use engine::judge::sequential::{draw, look, schedule, world, Standing, ALPHA};
use engine::judge::Outcome;

fn main() {
    let experiments: usize = std::env::var("EXPERIMENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    const M: u32 = 25;
    let plan = schedule(M);
    println!("M = {M}, looks at {plan:?}, α = {ALPHA} spent over {} looks, band ±{EVEN}", plan.len());
    println!(
        "{:>6} {:>6} {:>10} {:>24} {:>24} {:>9} {:>9} {:>8}",
        "θ", "n", "true", "sequential even/diff/open", "fixed M even/diff/open", "agree", "false", "trials"
    );
    for &n in &[200usize, 1000, 5040] {
        for &theta in &[0.0, EVEN, 0.1, 0.2, 0.4] {
            let w = world(theta, 1);
            let truth = w.iter().map(|s| s[0] - s[2]).sum::<f64>() / w.len() as f64;
            let mut rng = fastrand::Rng::with_seed(7);
            let (mut seq, mut fixed, mut agree, mut false_v, mut trials) = ([0usize; 3], [0usize; 3], 0, 0, 0u64);
            let idx = |s: Standing| match s {
                Standing::Even => 0,
                Standing::Differs => 1,
                Standing::Open => 2,
            };
            let runs = if n > 1000 { experiments / 4 } else { experiments };
            for _ in 0..runs {
                let verdicts: Vec<Vec<Outcome>> = (0..n)
                    .map(|_| {
                        let s = w[rng.usize(..w.len())];
                        (0..M).map(|_| draw(&s, rng.f64())).collect()
                    })
                    .collect();
                let mut stop = (Standing::Open, M);
                for &t in &plan {
                    let l = look(&verdicts, t, plan.len(), ALPHA, EVEN).unwrap();
                    stop = (l.standing, t);
                    if l.standing != Standing::Open {
                        break;
                    }
                }
                let at_m = look(&verdicts, M, 1, ALPHA, EVEN).unwrap().standing;
                seq[idx(stop.0)] += 1;
                fixed[idx(at_m)] += 1;
                agree += usize::from(stop.0 == at_m);
                trials += u64::from(stop.1);
                // False: "differs" for a pair inside the band, "even" for one not inside it.
                let inside = truth.abs() < EVEN - 1e-9;
                false_v +=
                    usize::from((inside && stop.0 == Standing::Differs) || (!inside && stop.0 == Standing::Even));
            }
            let pct = |c: usize| format!("{:.1}", 100.0 * c as f64 / runs as f64);
            println!(
                "{theta:>6.2} {n:>6} {truth:>10.4} {:>24} {:>24} {:>8}% {:>8}% {:>7.1}%",
                format!("{}/{}/{}", pct(seq[0]), pct(seq[1]), pct(seq[2])),
                format!("{}/{}/{}", pct(fixed[0]), pct(fixed[1]), pct(fixed[2])),
                pct(agree),
                pct(false_v),
                100.0 * trials as f64 / (runs as f64 * M as f64)
            );
        }
    }
    // The cost of a look at the papers' size: 5,040 questions × 25 trials.
    let mut rng = fastrand::Rng::with_seed(5);
    let verdicts: Vec<Vec<Outcome>> =
        (0..5040).map(|_| (0..M).map(|_| [Outcome::A, Outcome::Tie, Outcome::B][rng.usize(..3)]).collect()).collect();
    let started = Instant::now();
    let rounds = 200;
    for _ in 0..rounds {
        std::hint::black_box(look(&verdicts, M, plan.len(), ALPHA, EVEN));
    }
    println!(
        "one look over 5,040 questions × 25 trials: {:.3} ms",
        started.elapsed().as_secs_f64() * 1e3 / rounds as f64
    );
}

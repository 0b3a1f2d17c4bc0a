//! Planning an evaluation before paying for it: what a run of
//! Q questions × M trials can decide, simulated from a pilot's per-question
//! outcomes.
//!
//! The headline of a pair is seed 000's: per trial, the relative win rate
//! over the questions (A wins − B wins, over all); the median over the
//! trials. A simulated experiment draws Q questions with replacement from
//! the pilot's, and for each question M verdicts from that question's own
//! pilot verdicts (its win/tie/loss shares); its headline is computed as the
//! report computes it. Over [`EXPERIMENTS`] such experiments:
//!
//! * the **half-width** of the headline's 95% interval is half the distance
//!   between the 2.5th and 97.5th percentiles of the simulated headlines
//!   (the spread the report's question-bootstrap interval estimates);
//! * the **power** to detect a smallest difference δ is the share of
//!   experiments whose interval excludes 0 on δ's side (|headline| above the
//!   half-width, same sign), in a world where the pair truly differs by δ:
//!   each question's outcome shares exponentially tilted, p(o) ∝ p(o)·e^{λ·s}
//!   with s = +1, 0, −1 for an A win, a tie, a B win, λ chosen so the mean
//!   over questions of P(A) − P(B) is δ. δ is a size: the world
//!   differs by it in the direction the pilot leans (A's when even).
//!   Before tilting, each question's shares get half a verdict of each
//!   outcome ((count + ½) / (trials + 1½)): a question the pilot saw
//!   decided the same way in every trial — a deterministic judge's every
//!   question — could not move otherwise. It makes the power world a
//!   little noisier than the pilot: the power estimate errs low. (Without
//!   it, questions all ties would stay ties and cap what δ can be:
//!   `difference_reached` says what the tilt reached.)
//!
//! Nothing here calls a model: it is arithmetic on the pilot's verdicts.

use serde::{Deserialize, Serialize};

use super::Outcome;
pub use types::judge::Cell;

/// Simulated experiments per cell of the plan.
pub const EXPERIMENTS: usize = 200;

/// The question counts a plan tries.
pub const QUESTIONS: [usize; 8] = [50, 100, 200, 400, 800, 1_600, 3_200, 6_400];

/// Power a plan aims for.
pub const POWER: f64 = 0.8;

/// One question's outcome shares in the pilot: (A wins, ties, B wins).
pub type Shares = [f64; 3];

/// Each pilot question's shares over its trials.
pub fn shares(questions: &[Vec<Outcome>]) -> Vec<Shares> {
    questions
        .iter()
        .filter(|q| !q.is_empty())
        .map(|q| {
            let n = q.len() as f64;
            let c = |o: Outcome| q.iter().filter(|x| **x == o).count() as f64 / n;
            [c(Outcome::A), c(Outcome::Tie), c(Outcome::B)]
        })
        .collect()
}

/// Each pilot question's shares with half a verdict of each outcome added
/// (so exponential tilting can move a question decided the same way in
/// every trial).
pub fn smoothed(questions: &[Vec<Outcome>]) -> Vec<Shares> {
    questions
        .iter()
        .filter(|q| !q.is_empty())
        .map(|q| {
            let n = q.len() as f64 + 1.5;
            let c = |o: Outcome| (q.iter().filter(|x| **x == o).count() as f64 + 0.5) / n;
            [c(Outcome::A), c(Outcome::Tie), c(Outcome::B)]
        })
        .collect()
}

/// The pilot's mean P(A) − P(B): the relative win rate it estimates.
pub fn effect(shares: &[Shares]) -> f64 {
    shares.iter().map(|s| s[0] - s[2]).sum::<f64>() / shares.len().max(1) as f64
}

fn tilt(s: &Shares, lambda: f64) -> Shares {
    let (a, t, b) = (s[0] * lambda.exp(), s[1], s[2] * (-lambda).exp());
    let z = a + t + b;
    [a / z, t / z, b / z]
}

/// The pilot's shares tilted so their effect is `delta` (as near as the
/// questions that are all ties allow).
pub fn tilted(shares: &[Shares], delta: f64) -> Vec<Shares> {
    let at = |l: f64| effect(&shares.iter().map(|s| tilt(s, l)).collect::<Vec<_>>());
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if at(mid) < delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let l = (lo + hi) / 2.0;
    shares.iter().map(|s| tilt(s, l)).collect()
}

/// The simulated headlines of `EXPERIMENTS` experiments of `questions` ×
/// `trials` drawn from `shares`, sorted.
fn headlines(shares: &[Shares], questions: usize, trials: usize, rng: &mut fastrand::Rng) -> Vec<f64> {
    let mut out = Vec::with_capacity(EXPERIMENTS);
    let mut picked: Vec<&Shares> = Vec::with_capacity(questions);
    let mut per_trial = vec![0.0; trials];
    for _ in 0..EXPERIMENTS {
        picked.clear();
        picked.extend((0..questions).map(|_| &shares[rng.usize(..shares.len())]));
        for r in per_trial.iter_mut() {
            let mut sum = 0i64;
            for s in &picked {
                let u = rng.f64();
                if u < s[0] {
                    sum += 1;
                } else if u >= s[0] + s[1] {
                    sum -= 1;
                }
            }
            *r = sum as f64 / questions as f64;
        }
        per_trial.sort_by(f64::total_cmp);
        // The lower middle for an even count, as the report's median trial.
        out.push(per_trial[(trials - 1) / 2]);
    }
    out.sort_by(f64::total_cmp);
    out
}

fn half_width(sorted: &[f64]) -> f64 {
    let q = |p: f64| crate::stats::quantile(sorted, p).unwrap_or(0.0);
    (q(0.975) - q(0.025)) / 2.0
}

/// A plan for one pair from its pilot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairPlan {
    /// Pilot questions it simulates from, and the effect they show.
    pub pilot_questions: usize,
    pub pilot_effect: f64,
    /// The smallest difference to detect, as asked, and as the pilot's
    /// all-tie questions allow it (the tilt cannot move a tie).
    pub difference: Option<f64>,
    pub difference_reached: Option<f64>,
    /// Every (questions, trials) tried, questions ascending per M.
    pub cells: Vec<Cell>,
    /// Per M: the fewest questions tried whose half-width is at most the
    /// target (`None`: none of those tried).
    pub questions_for_half_width: Vec<(usize, Option<usize>)>,
    /// Per M: the fewest questions tried with power at least [`POWER`].
    pub questions_for_power: Vec<(usize, Option<usize>)>,
    /// The run asked for (its questions and M): its half-width and power.
    pub run: Option<Cell>,
}

/// What runs of `trials` (each M) over the question counts in
/// [`QUESTIONS`] (and the run asked for, `run`) can decide for a pair
/// whose pilot verdicts are `pilot` (per question, per trial): the
/// half-width of the headline's interval and, with `difference`, the power
/// to detect it. `None` without pilot verdicts.
pub fn plan(
    pilot: &[Vec<Outcome>],
    trials: &[usize],
    target_half_width: f64,
    difference: Option<f64>,
    run: Option<(usize, usize)>,
    seed: u64,
) -> Option<PairPlan> {
    let world = shares(pilot);
    if world.is_empty() {
        return None;
    }
    // The difference in the direction the pilot leans, from its smoothed shares.
    let toward = if effect(&world) < 0.0 { -1.0 } else { 1.0 };
    let difference = difference.map(|d| d.abs() * toward);
    let shifted = difference.map(|d| tilted(&smoothed(pilot), d));
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut cell = |questions: usize, m: usize| {
        let half = half_width(&headlines(&world, questions, m, &mut rng));
        let power = shifted.as_ref().zip(difference).map(|(s, d)| {
            let est = headlines(s, questions, m, &mut rng);
            let h = half_width(&est);
            est.iter().filter(|e| e.abs() > h && e.signum() == d.signum()).count() as f64 / est.len() as f64
        });
        Cell { questions, trials: m, half_width: half, power }
    };
    let mut cells = Vec::new();
    for &m in trials {
        for &q in &QUESTIONS {
            cells.push(cell(q, m.max(1)));
        }
    }
    let run = run.map(|(q, m)| cell(q.max(1), m.max(1)));
    let first = |m: usize, ok: &dyn Fn(&Cell) -> bool| {
        (m, cells.iter().filter(|c| c.trials == m).find(|c| ok(c)).map(|c| c.questions))
    };
    let questions_for_half_width = trials.iter().map(|&m| first(m, &|c| c.half_width <= target_half_width)).collect();
    let questions_for_power = if difference.is_some() {
        trials.iter().map(|&m| first(m, &|c| c.power.is_some_and(|p| p >= POWER))).collect()
    } else {
        Vec::new()
    };
    Some(PairPlan {
        pilot_questions: world.len(),
        pilot_effect: effect(&world),
        difference,
        difference_reached: shifted.as_ref().map(|s| effect(s)),
        cells,
        questions_for_half_width,
        questions_for_power,
        run,
    })
}

/// A plan's curve as SVG: the half-width of the headline's 95% interval
/// against the number of questions (log scale), a line per M, with the
/// target half-width dashed and the run asked for marked.
pub fn curve_svg(title: &str, plan: &PairPlan, target_half_width: f64) -> String {
    use plotters::prelude::*;
    let palette = crate::CHART_PALETTE;
    let mut ms: Vec<usize> = plan.cells.iter().map(|c| c.trials).collect();
    ms.sort_unstable();
    ms.dedup();
    let top =
        plan.cells.iter().chain(plan.run.iter()).map(|c| c.half_width).fold(target_half_width, f64::max).max(0.01)
            * 1.1;
    // x: doublings above the fewest questions tried (QUESTIONS double).
    let x_of = |q: usize| (q.max(1) as f64 / QUESTIONS[0] as f64).log2();
    let (lo, hi) = (-0.3, x_of(QUESTIONS[QUESTIONS.len() - 1]) + 0.3);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 320)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let (area, legend) = root.split_horizontally(470);
        for (k, m) in ms.iter().enumerate() {
            let colour = palette[k % palette.len()];
            let y = 50 + 22 * k as i32;
            let _ = legend.draw(&PathElement::new(vec![(4, y), (24, y)], colour.stroke_width(2)));
            let _ = legend.draw(&Text::new(format!("M = {m}"), (30, y - 7), ("sans-serif", 13).into_font()));
        }
        let y = 50 + 22 * ms.len() as i32;
        let _ = legend.draw(&PathElement::new(vec![(4, y), (24, y)], BLACK.stroke_width(1)));
        let _ = legend.draw(&Text::new(format!("±{target_half_width}"), (30, y - 7), ("sans-serif", 13).into_font()));
        if let Ok(mut chart) = ChartBuilder::on(&area)
            .caption(title, ("sans-serif", 14))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(50)
            .build_cartesian_2d(lo..hi, 0f64..top)
        {
            let _ = chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(QUESTIONS.len())
                .x_label_formatter(&|x| {
                    let i = x.round();
                    match QUESTIONS.get(i as usize) {
                        Some(q) if (x - i).abs() < 1e-6 && i >= 0.0 => q.to_string(),
                        _ => String::new(),
                    }
                })
                .x_desc("questions (log scale)")
                .y_desc("half-width of the 95% interval")
                .axis_desc_style(("sans-serif", 12))
                .label_style(("sans-serif", crate::CHART_MIN_FONT))
                .draw();
            // The target, dashed.
            let dashes = (0..24).map(|i| {
                let x0 = lo + (hi - lo) * i as f64 / 24.0;
                PathElement::new(
                    vec![(x0, target_half_width), (x0 + (hi - lo) / 48.0, target_half_width)],
                    BLACK.stroke_width(1),
                )
            });
            let _ = chart.draw_series(dashes);
            for (k, m) in ms.iter().enumerate() {
                let colour = palette[k % palette.len()];
                let points: Vec<(f64, f64)> =
                    plan.cells.iter().filter(|c| c.trials == *m).map(|c| (x_of(c.questions), c.half_width)).collect();
                let _ = chart.draw_series(std::iter::once(PathElement::new(points.clone(), colour.stroke_width(2))));
                let _ = chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, colour.filled())));
            }
            if let Some(r) = &plan.run {
                let x = x_of(r.questions).clamp(lo, hi);
                let _ = chart.draw_series(std::iter::once(Cross::new((x, r.half_width), 6, BLACK.stroke_width(2))));
                let _ = chart.draw_series(std::iter::once(Text::new(
                    "this run",
                    (x, r.half_width + top * 0.05),
                    ("sans-serif", crate::CHART_MIN_FONT).into_font(),
                )));
            }
        }
        let _ = root.present();
    }
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pilot of 60 questions: A wins 3 in 5 of each question's 5 trials.
    fn pilot() -> Vec<Vec<Outcome>> {
        (0..60)
            .map(|q| {
                (0..5)
                    .map(|t| match (q + t) % 5 {
                        0 | 1 | 2 => Outcome::A,
                        3 => Outcome::Tie,
                        _ => Outcome::B,
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_half_width_shrinks_as_one_over_root_questions() {
        let p = plan(&pilot(), &[1, 25], 0.05, None, Some((300, 25)), 3).unwrap();
        assert!((p.pilot_effect - 0.4).abs() < 1e-12);
        let hw = |q: usize, m: usize| p.cells.iter().find(|c| c.questions == q && c.trials == m).unwrap().half_width;
        // With M = 1, a question's verdict varies: the interval is wider
        // than with the median of 25 trials.
        assert!(hw(400, 1) > hw(400, 25));
        // Four times the questions, about half the width.
        let ratio = hw(100, 1) / hw(400, 1);
        assert!((1.6..2.5).contains(&ratio), "{ratio}");
        // Binomial arithmetic for M = 1: sd of a verdict's score is
        // √(0.8 − 0.4²) = 0.8, so the half-width over 400 questions is
        // about 1.96 · 0.8 / 20 = 0.078.
        assert!((hw(400, 1) - 0.078).abs() < 0.015, "{}", hw(400, 1));
        let needed = p.questions_for_half_width.iter().find(|(m, _)| *m == 1).unwrap().1.unwrap();
        assert!(needed >= 800 && needed <= 1600, "{needed}");
        assert!(p.run.unwrap().half_width < hw(200, 25));
    }

    #[test]
    fn power_rises_with_questions_and_a_null_world_finds_nothing() {
        let p = plan(&pilot(), &[5], 0.05, Some(0.1), None, 5).unwrap();
        assert!((p.difference_reached.unwrap() - 0.1).abs() < 1e-9);
        let power: Vec<f64> = p.cells.iter().map(|c| c.power.unwrap()).collect();
        assert!(power[0] < 0.5 && *power.last().unwrap() > 0.95, "{power:?}");
        let needed = p.questions_for_power[0].1.unwrap();
        assert!((200..=1600).contains(&needed), "{needed}");
        // δ = 0: the "power" is the false-verdict rate, near 5% (2.5% on a side).
        let null = plan(&pilot(), &[5], 0.05, Some(1e-9), None, 7).unwrap();
        for c in &null.cells {
            assert!(c.power.unwrap() <= 0.08, "{c:?}");
        }
    }

    #[test]
    fn all_tie_questions_cap_the_difference() {
        let mut p = pilot();
        p.truncate(30);
        p.extend((0..30).map(|_| vec![Outcome::Tie; 5]));
        let t = tilted(&shares(&p), 0.9);
        assert!(effect(&t) <= 0.5 + 1e-9, "half the questions can never be won");
    }

    #[test]
    fn the_curve_draws_a_line_per_m_and_marks_the_run() {
        let p = plan(&pilot(), &[1, 5], 0.05, None, Some((300, 5)), 3).unwrap();
        let svg = curve_svg("A vs B", &p, 0.05);
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("M = 1") && svg.contains("M = 5") && svg.contains("this run"));
        assert!(svg.contains("6400") && svg.contains("±0.05"));
    }

    /// A deterministic judge's pilot (every question decided the same way in
    /// every trial) still has a power world; the difference follows the
    /// pilot's lean (here B's).
    #[test]
    fn a_deterministic_pilot_leaning_to_b_is_tilted_towards_b() {
        let pilot: Vec<Vec<Outcome>> =
            (0..60).map(|q| vec![if q % 3 == 0 { Outcome::A } else { Outcome::B }; 3]).collect();
        let p = plan(&pilot, &[3], 0.05, Some(0.3), None, 1).unwrap();
        assert!((p.pilot_effect + 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(p.difference, Some(-0.3));
        assert!((p.difference_reached.unwrap() + 0.3).abs() < 1e-9);
        let last = p.cells.last().unwrap();
        assert!(last.power.unwrap() > 0.95, "{last:?}");
    }
}

//! The paper view of an evaluation report (seed 000 §VI-C, Figs. 14–17):
//! the report's numbers regrouped as the paper lays its figures out, with
//! the plots only this view draws (Fig. 17's panels, one per question
//! level, every pair in each).

use engine::judge::eval::{Breakdown, Report};
use engine::judge::paper::{level_panels, LevelPanel};
use engine::judge::plots;
use engine::stats::BoxStats;

use crate::model::{BoxView, Figure, PaperBoxRow, PaperPanel, PaperView, RatesRow};

/// Fig. 17's panels' plot names and their SVG: `paper-level-K`, K from 0
/// in the panels' order (node, edge, subgraph, then other levels).
pub fn level_plots(r: &Report) -> Vec<(String, String)> {
    level_panels(r)
        .iter()
        .enumerate()
        .map(|(k, panel)| {
            let title = format!("Per question level: {}", panel.level);
            let svg = plots::stacked_svg(&title, ("first-named", "second-named"), &level_bars(panel));
            (format!("paper-level-{k}"), svg)
        })
        .collect()
}

fn level_bars(panel: &LevelPanel) -> Vec<plots::StackedRow> {
    let mut bars: Vec<plots::StackedRow> = panel
        .pairs
        .iter()
        .map(|p| (format!("{} vs {}", p.a_name, p.b_name), p.breakdown.rates, format!("n = {}", p.breakdown.n)))
        .collect();
    bars.push(("mean of the pairs".into(), panel.mean, crate::format::count(panel.pairs.len() as i64, "pair")));
    bars
}

fn box_view(b: &BoxStats) -> BoxView {
    BoxView {
        low: b.whisker_low,
        q1: b.q1,
        median: b.median,
        q3: b.q3,
        high: b.whisker_high,
        outliers: b.outliers.len(),
    }
}

fn row(b: &Breakdown) -> RatesRow {
    RatesRow {
        label: b.label.clone(),
        a_win: b.rates.a_win,
        tie: b.rates.tie,
        b_win: b.rates.b_win,
        relative: b.relative,
        n: b.n,
        pair: None,
    }
}

/// The paper view of report `r`; `svg` gives a plot by name as the page
/// shows it (inline or linked), `None` where it was not drawn.
pub fn paper_view(r: &Report, svg: impl Fn(&str) -> Option<Figure>) -> PaperView {
    let unbiased: Vec<_> = r.pairs.iter().filter_map(|p| Some((p, p.unbiased.as_ref()?))).collect();
    if unbiased.is_empty() {
        return PaperView::default();
    }
    let boxes = unbiased
        .iter()
        .map(|(p, u)| PaperBoxRow {
            a_name: p.a_name.clone(),
            b_name: p.b_name.clone(),
            trials: u.trials.len(),
            a_win: box_view(&u.a_win),
            tie: box_view(&u.tie),
            b_win: box_view(&u.b_win),
            relative: box_view(&u.relative),
            median_trial: u.median_trial,
            headline: (u.headline.a_win, u.headline.tie, u.headline.b_win, u.headline_relative),
        })
        .collect();
    let aspects = unbiased
        .iter()
        .map(|(p, u)| {
            let plot = format!("aspects-{}-{}", p.a, p.b);
            PaperPanel {
                title: format!("{} vs {}", p.a_name, p.b_name),
                figure: svg(&plot),
                plot,
                rows: u.aspects.iter().map(row).collect(),
                pair: Some((p.a_name.clone(), p.b_name.clone())),
            }
        })
        .collect();
    let matrix = r.contenders.iter().zip(&r.matrix).map(|(c, values)| (c.name.clone(), values.clone())).collect();
    let levels = level_panels(r)
        .iter()
        .enumerate()
        .map(|(k, panel)| {
            let plot = format!("paper-level-{k}");
            let mut rows: Vec<RatesRow> = panel
                .pairs
                .iter()
                .map(|p| RatesRow {
                    label: format!("{} vs {}", p.a_name, p.b_name),
                    pair: Some((p.a_name.clone(), p.b_name.clone())),
                    ..row(&p.breakdown)
                })
                .collect();
            rows.push(RatesRow {
                label: "mean of the pairs".into(),
                a_win: panel.mean.a_win,
                tie: panel.mean.tie,
                b_win: panel.mean.b_win,
                relative: panel.mean.relative(),
                n: panel.pairs.len(),
                pair: None,
            });
            PaperPanel { title: panel.level.clone(), figure: svg(&plot), plot, rows, pair: None }
        })
        .collect();
    PaperView { boxes, aspects, matrix, levels }
}

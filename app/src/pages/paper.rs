//! The paper view of an evaluation (`…/evaluations/:eval?view=paper`, and
//! the same on a share link): seed 000's results figures as §VI-C lays them
//! out — Fig. 14 (each rate's box over the trials), Fig. 15 (per aspect),
//! Fig. 16 (the relative-win-rate matrix), Fig. 17 (per question level,
//! every pair in a panel and their mean) — each with the numbers it draws
//! and a caption that names its statistic.

use leptos::prelude::*;

use crate::components::Plot;
use crate::format::{pct, signed};
use crate::model::{BoxView, PaperPanel, PaperView, RatesRow};

fn whisker_text(b: &BoxView) -> String {
    let beyond = match b.outliers {
        0 => String::new(),
        1 => ", 1 trial beyond".into(),
        n => format!(", {n} trials beyond"),
    };
    format!("{} [{}–{}] ({}–{}{beyond})", pct(b.median), pct(b.q1), pct(b.q3), pct(b.low), pct(b.high))
}

/// Whether the median trial's relative win rate is the median of the
/// trials' (an odd number of trials) or may differ from it (even).
fn median_note(trials: usize) -> String {
    if trials % 2 == 1 {
        format!("with an odd number of trials ({trials} here) it is also the median of the trials' relative win rates.")
    } else {
        format!("with an even number of trials ({trials} here) the median trial is the lower middle one, so it can differ from the median of the trials' relative win rates (Fig. 14's middle line).")
    }
}

fn relative_text(b: &BoxView) -> String {
    format!("{} [{}, {}]", signed(b.median, 2), signed(b.q1, 2), signed(b.q3, 2))
}

#[component]
fn RatesTable(rows: Vec<RatesRow>, first: &'static str, count: &'static str) -> impl IntoView {
    view! {
        <div class="table-scroll">
            <table class="grid paper-rates">
                <thead><tr>
                    <th>{first}</th><th class="num">"A wins"</th><th class="num">"Tie"</th><th class="num">"B wins"</th>
                    <th class="num">"Relative"</th><th class="num">{count}</th>
                </tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| view! {
                        <tr>
                            <td>{r.label}</td><td class="num">{pct(r.a_win)}</td><td class="num">{pct(r.tie)}</td>
                            <td class="num">{pct(r.b_win)}</td><td class="num">{signed(r.relative, 2)}</td>
                            <td class="num">{crate::format::int(r.n as i64)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

#[component]
fn Panel(base: String, panel: PaperPanel, alt: String, first: &'static str, count: &'static str) -> impl IntoView {
    let name = panel.plot.clone();
    view! {
        <section class="paper-panel" data-panel=panel.plot>
            <h3>{panel.title}</h3>
            {panel.figure.map(|figure| view! { <Plot base name figure alt/> })}
            <RatesTable rows=panel.rows first count/>
        </section>
    }
}

/// A figure's panels side by side, each with its table.
#[component]
fn Panels(
    base: String,
    panels: Vec<PaperPanel>,
    what: &'static str,
    first: &'static str,
    count: &'static str,
) -> impl IntoView {
    view! {
        <div class="plots-row">
            {panels.into_iter().map(|panel| {
                let alt = format!("{what}: {}", panel.title);
                view! { <Panel base=base.clone() panel alt first count/> }
            }).collect_view()}
        </div>
    }
}

/// The paper view's figures (under the report's heading and settings).
#[component]
pub fn PaperFigures(
    p: PaperView,
    base: String,
    box_plot: Option<crate::model::Figure>,
    heatmap: Option<crate::model::Figure>,
) -> impl IntoView {
    if p.boxes.is_empty() {
        return view! {
            <p class="notice" id="paper-none">"The paper's figures are the unbiased protocol's (trials, aspects, levels); this evaluation ran the legacy protocol only. Its verdicts are on the full report."</p>
        }
        .into_any();
    }
    let trials = p.boxes.first().map_or(0, |b| b.trials);
    view! {
        <p class="small" id="paper-headline-note">"The full report's headline table is the " <strong>"median trial"</strong>
            " (the trials ordered by relative win rate, the middle one): one trial's A wins, ties and B wins, adding up to 100%. The figures below are drawn as the paper draws them; each caption names the statistic it shows, and the numbers under each figure are the ones it draws."</p>

        <section class="paper-figure" id="fig14">
            <h2>"Fig. 14 · One-to-one comparison"</h2>
            {box_plot.map(|figure| view! { <Plot base=base.clone() name="box".into() figure alt="Win, tie and loss rates over trials, one panel per pair"/> })}
            <p class="caption small">{format!("Each box is one rate over the {trials} trials: the thick line is that rate's own median, the box its quartiles, the whiskers the lowest and highest trial within 1.5 IQR of them, circles the trials beyond. The three medians are each rate's own — they need not add up to 100% nor come from one trial; the last column is the median trial, the full report's headline.")}</p>
            <div class="table-scroll">
                <table class="grid" id="fig14-table">
                    <thead><tr>
                        <th>"A vs B"</th><th class="num">"Trials"</th>
                        <th>"A wins: median [Q1–Q3] (whiskers)"</th><th>"Tie"</th><th>"B wins"</th>
                        <th>"Relative: median [Q1, Q3]"</th><th>"Median trial: A · tie · B (relative)"</th>
                    </tr></thead>
                    <tbody>
                        {p.boxes.iter().map(|b| {
                            let (a, t, w, rel) = b.headline;
                            view! {
                                <tr>
                                    <td>{format!("{} vs {}", b.a_name, b.b_name)}</td>
                                    <td class="num">{b.trials}</td>
                                    <td class="small">{whisker_text(&b.a_win)}</td>
                                    <td class="small">{whisker_text(&b.tie)}</td>
                                    <td class="small">{whisker_text(&b.b_win)}</td>
                                    <td class="small">{relative_text(&b.relative)}</td>
                                    <td class="small">{format!("#{}: {} · {} · {} ({})", b.median_trial, pct(a), pct(t), pct(w), signed(rel, 2))}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        </section>

        <section class="paper-figure" id="fig15">
            <h2>"Fig. 15 · Per aspect of answer quality"</h2>
            <p class="caption small">"Each aspect's win, tie and loss rates pooled over the trials and questions: every aspect verdict of every trial counts once (with every question judged in every trial, the mean of the trials' rates). Ties are an aspect's equal scores. Rows marked (legacy), where the legacy protocol also ran, are its single A-first verdict per question."</p>
            <Panels base=base.clone() panels=p.aspects what="Per aspect" first="Aspect" count="Verdicts"/>
        </section>

        <section class="paper-figure" id="fig16">
            <h2>"Fig. 16 · Relative win rate (row minus column)"</h2>
            {heatmap.map(|figure| view! { <Plot base=base.clone() name="heatmap".into() figure alt="Relative win rate of the row's method over the column's"/> })}
            <p class="caption small">{format!("(row wins − column wins) / (row wins + column wins + ties) of the median trial; {} A positive value: the row's method is ahead. One evaluation, one data set — the paper's figure averages three.", median_note(trials))}</p>
            <div class="table-scroll">
                <table class="grid" id="fig16-table">
                    <thead><tr><th>"Row over column"</th>
                        {p.matrix.iter().map(|(name, _)| view! { <th class="num">{name.clone()}</th> }).collect_view()}
                    </tr></thead>
                    <tbody>
                        {p.matrix.iter().map(|(name, values)| view! {
                            <tr><td>{name.clone()}</td>
                                {values.iter().map(|v| view! { <td class="num">{v.map_or("—".into(), |v| signed(v, 2))}</td> }).collect_view()}
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        </section>

        <section class="paper-figure" id="fig17">
            <h2>"Fig. 17 · Per question level"</h2>
            <p class="caption small">"One panel per question level: each pair's rates pooled over the trials and the level's questions (n: verdicts), and, last, the unweighted mean over the pairs (each pair counts once; n: pairs) — the paper's \"average win rate … across the model pairs\". Blue: the first-named method of the row wins. The paper's figure averages three data sets as well."</p>
            {p.levels.is_empty().then(|| view! { <p class="muted small">"The questions carry no level."</p> })}
            <Panels base=base.clone() panels=p.levels what="Per question level" first="Pair" count="n"/>
        </section>
    }
    .into_any()
}

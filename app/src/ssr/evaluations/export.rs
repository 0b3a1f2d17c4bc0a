//! An evaluation's downloads: the report's tables as CSV, the whole report
//! as JSON, and what each pair's judging cost.

use std::collections::HashMap;

use crate::ssr::store::Db;
use engine::judge::align::Alignment;
use engine::judge::eval::{self, Key};
use engine::judge::Order;
use serde_json::json;

use super::*;
use crate::error::internal;
use crate::error::{AppError, AppResult};
use crate::ssr::store;
/// The report's tables.
pub const TABLES: [&str; 12] = crate::model::EVAL_TABLES;

/// What judging (and aligning) one pair cost.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PairCost {
    pub calls: i64,
    pub cached: i64,
    pub tokens: i64,
    pub cost_usd: f64,
}

/// Per pair, the calls of its items (from the call log) and their tokens and cost.
pub async fn pair_costs(pool: &Db, e: &Stored) -> AppResult<HashMap<(i64, i64), PairCost>> {
    let Some(job) = e.view.job_id else { return Ok(HashMap::new()) };
    let rows = store::evaluations::item_costs(pool, job).await?;
    let mut out: HashMap<(i64, i64), PairCost> = HashMap::new();
    for (item, calls, cached, tokens, cost) in rows {
        if let Some(k) = Key::parse(&item) {
            let c = out.entry(k.pair()).or_default();
            c.calls += calls;
            c.cached += cached;
            c.tokens += tokens;
            c.cost_usd += cost;
        }
    }
    Ok(out)
}

/// The report's tables as CSV: `pairs`, `trials`, `aspects`, `levels`,
/// `judgments` (every judgment), `alignment` (per question).
pub fn table_csv(s: &Snapshot, table: &str) -> AppResult<String> {
    let r = &s.report;
    let mut w = csv::Writer::from_writer(Vec::new());
    // Shortest round-trip decimals: small p-values keep their digits.
    let f = crate::format::csv_number;
    let o = |v: Option<f64>| v.map_or(String::new(), f);
    let csv_err = |e: csv::Error| internal("writing a CSV table", e);
    match table {
        "pairs" => {
            w.write_record([
                "a",
                "b",
                "a_name",
                "b_name",
                "questions",
                "trials",
                "a_win_median",
                "a_win_q1",
                "a_win_q3",
                "tie_median",
                "tie_q1",
                "tie_q3",
                "b_win_median",
                "b_win_q1",
                "b_win_q3",
                "relative_median",
                "median_trial",
                "a_win",
                "a_win_ci_low",
                "a_win_ci_high",
                "tie",
                "tie_ci_low",
                "tie_ci_high",
                "b_win",
                "b_win_ci_low",
                "b_win_ci_high",
                "relative",
                "relative_ci_low",
                "relative_ci_high",
                "mean_total_difference",
                "wilcoxon_p",
                "wilcoxon_p_holm",
                "sign_p",
                "sign_p_holm",
                "legacy_a_win",
                "legacy_b_win",
                "legacy_relative",
                "as_is",
                "regenerated",
                "forced",
                "discarded",
                "alignment_success",
            ])
            .map_err(csv_err)?;
            for p in &r.pairs {
                let u = p.unbiased.as_ref();
                let bx = |g: fn(&eval::UnbiasedSummary) -> &engine::stats::BoxStats| {
                    u.map(g).map_or([String::new(), String::new(), String::new()], |b| [f(b.median), f(b.q1), f(b.q3)])
                };
                let (aw, tw, bw) = (bx(|u| &u.a_win), bx(|u| &u.tie), bx(|u| &u.b_win));
                let ci = |g: fn(&eval::UnbiasedSummary) -> (f64, (f64, f64))| {
                    u.map(g).map_or([String::new(), String::new(), String::new()], |(v, (l, h))| [f(v), f(l), f(h)])
                };
                let (ac, tc, bc, rc) = (
                    ci(|u| (u.headline.a_win, u.a_win_ci)),
                    ci(|u| (u.headline.tie, u.tie_ci)),
                    ci(|u| (u.headline.b_win, u.b_win_ci)),
                    ci(|u| (u.headline_relative, u.relative_ci)),
                );
                let test = |t: Option<&eval::PairedTest>| {
                    t.map_or([String::new(), String::new()], |t| [f(t.p_value), f(t.p_holm)])
                };
                let (wt, st) = (test(u.and_then(|u| u.wilcoxon.as_ref())), test(u.and_then(|u| u.sign.as_ref())));
                let l = p.legacy.as_ref();
                let mut row = vec![
                    p.a.to_string(),
                    p.b.to_string(),
                    p.a_name.clone(),
                    p.b_name.clone(),
                    p.questions.to_string(),
                    u.map_or(0, |u| u.trials.len()).to_string(),
                ];
                row.extend(aw);
                row.extend(tw);
                row.extend(bw);
                row.push(o(u.map(|u| u.relative.median)));
                row.push(u.map_or(String::new(), |u| u.median_trial.to_string()));
                row.extend(ac);
                row.extend(tc);
                row.extend(bc);
                row.extend(rc);
                row.push(o(u.map(|u| u.mean_difference)));
                row.extend(wt);
                row.extend(st);
                row.push(o(l.map(|l| l.overall.rates.a_win)));
                row.push(o(l.map(|l| l.overall.rates.b_win)));
                row.push(o(l.map(|l| l.overall.relative)));
                let al = &p.alignment;
                row.extend([al.as_is, al.regenerated, al.forced, al.discarded].map(|n| n.to_string()));
                row.push(o(al.success_rate));
                w.write_record(&row).map_err(csv_err)?;
            }
        }
        "trials" => {
            w.write_record(["a", "b", "trial", "a_win", "tie", "b_win", "relative"]).map_err(csv_err)?;
            for p in &r.pairs {
                for (t, rates) in p.unbiased.iter().flat_map(|u| u.trials.iter().enumerate()) {
                    w.write_record([
                        p.a.to_string(),
                        p.b.to_string(),
                        t.to_string(),
                        f(rates.a_win),
                        f(rates.tie),
                        f(rates.b_win),
                        f(rates.relative()),
                    ])
                    .map_err(csv_err)?;
                }
            }
        }
        "aspects" | "levels" => {
            w.write_record([
                "a",
                "b",
                "protocol",
                if table == "aspects" { "aspect" } else { "level" },
                "n",
                "a_win",
                "tie",
                "b_win",
                "relative",
            ])
            .map_err(csv_err)?;
            for p in &r.pairs {
                let mut rows: Vec<(&str, &eval::Breakdown)> = Vec::new();
                if let Some(u) = &p.unbiased {
                    rows.extend(
                        (if table == "aspects" { &u.aspects } else { &u.levels }).iter().map(|b| ("unbiased", b)),
                    );
                }
                if table == "aspects" {
                    if let Some(l) = &p.legacy {
                        rows.extend(l.aspects.iter().chain([&l.overall]).map(|b| ("legacy", b)));
                    }
                }
                for (protocol, b) in rows {
                    w.write_record([
                        p.a.to_string(),
                        p.b.to_string(),
                        protocol.to_string(),
                        b.label.clone(),
                        b.n.to_string(),
                        f(b.rates.a_win),
                        f(b.rates.tie),
                        f(b.rates.b_win),
                        f(b.relative),
                    ])
                    .map_err(csv_err)?;
                }
            }
        }
        "ranking" => {
            // Bradley–Terry scores (engine::judge::ranking), best first.
            w.write_record([
                "rank",
                "rank_upper_bound",
                "set_id",
                "name",
                "score",
                "score_low",
                "score_high",
                "theta",
                "wins",
                "battles",
            ])
            .map_err(csv_err)?;
            for x in r.ranking.iter().flat_map(|k| &k.rows) {
                w.write_record([
                    x.rank.to_string(),
                    x.rank_ub.to_string(),
                    x.set_id.to_string(),
                    x.name.clone(),
                    f(x.score),
                    f(x.ci.0),
                    f(x.ci.1),
                    f(x.theta),
                    f(x.wins),
                    x.battles.to_string(),
                ])
                .map_err(csv_err)?;
            }
        }
        "length-control" => {
            // The length-controlled win rate per pair (engine::judge::length_control).
            w.write_record([
                "a",
                "b",
                "a_name",
                "b_name",
                "judgments",
                "questions",
                "raw_win_rate",
                "lc_win_rate_paper",
                "lc_paper_low",
                "lc_paper_high",
                "length_weight",
                "position_weight",
                "pair_weight",
                "lc_win_rate_alpaca_eval",
                "alpaca_eval_c",
                "length_sd_words",
                "note",
            ])
            .map_err(csv_err)?;
            let o = |x: Option<f64>| x.map_or(String::new(), f);
            for p in &r.pairs {
                let Some(lc) = &p.length_control else { continue };
                let fit = lc.paper.as_ref();
                w.write_record([
                    p.a.to_string(),
                    p.b.to_string(),
                    p.a_name.clone(),
                    p.b_name.clone(),
                    lc.judgments.to_string(),
                    lc.questions.to_string(),
                    f(lc.raw_win_rate),
                    o(fit.map(|x| x.win_rate)),
                    o(lc.paper_ci.map(|c| c.0)),
                    o(lc.paper_ci.map(|c| c.1)),
                    o(fit.map(|x| x.length)),
                    o(fit.filter(|_| lc.position_fitted).map(|x| x.position)),
                    o(fit.map(|x| x.pair)),
                    o(lc.code.as_ref().map(|c| c.fit.win_rate)),
                    o(lc.code.as_ref().map(|c| c.c)),
                    o(lc.length_sd),
                    lc.why.clone().unwrap_or_default(),
                ])
                .map_err(csv_err)?;
            }
        }
        "sequential" => {
            // Sequential trials: each look a pair took (engine::judge::sequential).
            w.write_record([
                "a",
                "b",
                "a_name",
                "b_name",
                "look",
                "trials",
                "m",
                "questions",
                "estimate",
                "low",
                "high",
                "z",
                "standing",
                "stopped_here",
                "calls",
                "calls_fixed_m",
            ])
            .map_err(csv_err)?;
            for p in &r.pairs {
                let Some(c) = &p.sequential else { continue };
                let z = engine::judge::sequential::z(
                    engine::judge::sequential::ALPHA,
                    engine::judge::sequential::schedule(c.m).len(),
                );
                for (i, l) in c.looks.iter().enumerate() {
                    let last = i + 1 == c.looks.len();
                    w.write_record([
                        p.a.to_string(),
                        p.b.to_string(),
                        p.a_name.clone(),
                        p.b_name.clone(),
                        (i + 1).to_string(),
                        l.trials.to_string(),
                        c.m.to_string(),
                        l.questions.to_string(),
                        f(l.estimate),
                        f(l.interval.0),
                        f(l.interval.1),
                        f(z),
                        l.standing.as_str().to_string(),
                        last.to_string(),
                        if last { c.calls.to_string() } else { String::new() },
                        if last { c.calls_fixed.to_string() } else { String::new() },
                    ])
                    .map_err(csv_err)?;
                }
            }
        }
        "jury" => {
            // A jury: each judge's and the jury's verdicts per pair.
            w.write_record([
                "row",
                "judge",
                "a",
                "b",
                "items",
                "median_trial",
                "a_win",
                "tie",
                "b_win",
                "relative_win_rate",
            ])
            .map_err(csv_err)?;
            if let Some(j) = &r.jury {
                for row in j.judges.iter().chain([&j.mean, &j.majority]) {
                    for p in &row.pairs {
                        w.write_record([
                            row.label.clone(),
                            row.judge.map_or(String::new(), |k| (k + 1).to_string()),
                            p.a.to_string(),
                            p.b.to_string(),
                            p.items.to_string(),
                            p.median_trial.to_string(),
                            f(p.headline.a_win),
                            f(p.headline.tie),
                            f(p.headline.b_win),
                            f(p.relative),
                        ])
                        .map_err(csv_err)?;
                    }
                }
            }
        }
        "jury-agreement" => {
            // The jury's agreement: between its judges, and with the people.
            w.write_record(["statistic", "between", "value", "p_value", "n"]).map_err(csv_err)?;
            if let Some(j) = &r.jury {
                let n = j.items.to_string();
                w.write_record(["fleiss_kappa", "judges (winners)", &o(j.fleiss_kappa), "", &n]).map_err(csv_err)?;
                w.write_record([
                    "krippendorff_alpha_interval",
                    "judges (score differences)",
                    &o(j.krippendorff_alpha),
                    "",
                    &n,
                ])
                .map_err(csv_err)?;
                for p in j.people.iter().flat_map(|p| &p.rows) {
                    let with = format!("{} and the people", p.label);
                    let n = p.n.to_string();
                    w.write_record(["cohen_kappa", &with, &o(p.cohen_kappa), "", &n]).map_err(csv_err)?;
                    w.write_record([
                        "spearman_rho",
                        &with,
                        &o(p.spearman.map(|s| s.0)),
                        &o(p.spearman.map(|s| s.1)),
                        &n,
                    ])
                    .map_err(csv_err)?;
                }
            }
        }
        "paper" => {
            // The paper view's numbers, figure by figure, each row naming
            // its statistic (see `pages::paper`).
            w.write_record([
                "figure",
                "label",
                "a_name",
                "b_name",
                "statistic",
                "a_win",
                "tie",
                "b_win",
                "relative",
                "n",
            ])
            .map_err(csv_err)?;
            let v = super::paper_view(r, |_| None);
            let mut rows: Vec<[String; 10]> = Vec::new();
            // A rate left out (`None`) and a count not given are empty cells.
            let row =
                |fig: &str, label: &str, a: &str, b: &str, stat: &str, rates: [Option<f64>; 4], n: Option<usize>| {
                    let [a_win, tie, b_win, relative] = rates.map(|x| x.map_or(String::new(), f));
                    let n = n.map_or(String::new(), |n| n.to_string());
                    [fig.into(), label.into(), a.into(), b.into(), stat.into(), a_win, tie, b_win, relative, n]
                };
            for b in &v.boxes {
                let stats: [(&str, fn(&crate::model::BoxView) -> f64); 5] = [
                    ("whisker low", |x| x.low),
                    ("q1", |x| x.q1),
                    ("median", |x| x.median),
                    ("q3", |x| x.q3),
                    ("whisker high", |x| x.high),
                ];
                for (name, of) in stats {
                    let each = [of(&b.a_win), of(&b.tie), of(&b.b_win), of(&b.relative)].map(Some);
                    rows.push(row(
                        "14",
                        "",
                        &b.a_name,
                        &b.b_name,
                        &format!("each rate's {name} over trials"),
                        each,
                        Some(b.trials),
                    ));
                }
                let (a, t, w, rel) = b.headline;
                let stat = format!("median trial (#{})", b.median_trial);
                rows.push(row("14", "", &b.a_name, &b.b_name, &stat, [a, t, w, rel].map(Some), Some(b.trials)));
            }
            let pooled = |fig: &str, panels: &[crate::model::PaperPanel], rows: &mut Vec<[String; 10]>| {
                for panel in panels {
                    for x in &panel.rows {
                        let rates = [x.a_win, x.tie, x.b_win, x.relative].map(Some);
                        let pooled = "pooled over trials and questions";
                        let (label, pair, stat) = match (&panel.pair, &x.pair) {
                            (Some(pair), _) => (x.label.as_str(), Some(pair), pooled),
                            (None, Some(pair)) => (panel.title.as_str(), Some(pair), pooled),
                            (None, None) => (panel.title.as_str(), None, "unweighted mean over pairs (n: pairs)"),
                        };
                        let (a, b) = pair.map_or(("", ""), |(a, b)| (a.as_str(), b.as_str()));
                        rows.push(row(fig, label, a, b, stat, rates, Some(x.n)));
                    }
                }
            };
            pooled("15", &v.aspects, &mut rows);
            for (name, values) in &v.matrix {
                for ((column, _), value) in v.matrix.iter().zip(values) {
                    if let Some(rel) = value {
                        // Only the relative win rate: the rates are left empty.
                        let rates = [None, None, None, Some(*rel)];
                        rows.push(row("16", "", name, column, "median trial's relative win rate", rates, None));
                    }
                }
            }
            pooled("17", &v.levels, &mut rows);
            for r in rows {
                w.write_record(r).map_err(csv_err)?;
            }
        }
        "judgments" | "alignment" => {
            let pairs = s.pairs.as_slice();
            if table == "judgments" {
                let mut head = vec![
                    "a".to_string(),
                    "b".into(),
                    "question_id".into(),
                    "trial".into(),
                    "repeat".into(),
                    "order".into(),
                ];
                head.extend(engine::judge::ASPECTS.iter().map(|x| format!("a_{}", x.to_lowercase())));
                head.extend(engine::judge::ASPECTS.iter().map(|x| format!("b_{}", x.to_lowercase())));
                // Which judge (1 = the evaluation's first; a jury's others after).
                head.push("judge".into());
                w.write_record(&head).map_err(csv_err)?;
                for p in pairs {
                    for q in &p.questions {
                        for (t, js) in &q.trials {
                            for j in js {
                                let mut row = vec![
                                    p.a.to_string(),
                                    p.b.to_string(),
                                    q.id.to_string(),
                                    t.to_string(),
                                    j.repeat.to_string(),
                                    if j.order == Order::AFirst { "AB".into() } else { "BA".into() },
                                ];
                                row.extend(j.a.iter().chain(&j.b).map(|s| s.to_string()));
                                row.push((j.judge + 1).to_string());
                                w.write_record(&row).map_err(csv_err)?;
                            }
                        }
                    }
                }
            } else {
                w.write_record([
                    "a",
                    "b",
                    "question_id",
                    "level",
                    "a_words_generated",
                    "b_words_generated",
                    "a_words_judged",
                    "b_words_judged",
                    "alignment",
                    "legacy_winner",
                ])
                .map_err(csv_err)?;
                for p in pairs {
                    for q in &p.questions {
                        let how = q.alignment.map_or(String::new(), |a| match a {
                            Alignment::AsIs => "as_is".into(),
                            Alignment::Regenerated(n) => format!("regenerated_{n}"),
                            Alignment::Forced(n) => format!("forced_after_{n}"),
                            Alignment::Discarded => "discarded".into(),
                        });
                        let legacy = q.legacy.as_ref().map_or(String::new(), |l| format!("{:?}", l.overall));
                        w.write_record([
                            p.a.to_string(),
                            p.b.to_string(),
                            q.id.to_string(),
                            q.level.clone().unwrap_or_default(),
                            q.raw_words.0.to_string(),
                            q.raw_words.1.to_string(),
                            q.words.0.to_string(),
                            q.words.1.to_string(),
                            how,
                            legacy,
                        ])
                        .map_err(csv_err)?;
                    }
                }
            }
        }
        other => {
            return Err(AppError::NotFound(format!(
                "no table \"{other}\": pairs, trials, aspects, levels, judgments or alignment"
            )))
        }
    }
    String::from_utf8(w.into_inner().map_err(|e| internal("writing a CSV table", e))?).map_err(|_| AppError::Internal)
}

/// The whole report as JSON: the evaluation, its settings and judge, and
/// every computed number.
pub fn report_json(s: &Snapshot) -> serde_json::Value {
    json!({ "evaluation": s.stored.view, "report": s.report })
}

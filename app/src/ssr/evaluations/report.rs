//! An evaluation's report, computed once from its items (a snapshot), as
//! the page, the plots and the drill-down show it.

use std::collections::{BTreeMap, HashMap};

use crate::ssr::store::Db;
use engine::judge::align::Alignment;
use engine::judge::eval::{self, Contender, JudgeKind, Key, PairInput, QuestionInput, Report};
use engine::judge::{Judgment, LegacyJudgment, Order, Outcome};

use super::*;
use crate::error::{AppError, AppResult};
use crate::format::pct;
use crate::model::JobStatus;
use crate::model::{DrillQuestionView, DrillView, EvaluationReportView, Figure, JudgmentView, PairRowView};
use crate::ssr::store;
/// Everything judged so far, as the report's input.
pub async fn inputs(pool: &Db, e: &Stored) -> AppResult<(Vec<Contender>, Vec<PairInput>)> {
    let items = match e.view.job_id {
        Some(j) => store::jobs::job_items(pool, j).await?,
        None => Vec::new(),
    };
    let results = Results::of(&items)?;
    let questions = store::questions::list_questions(pool, e.view.question_set_id).await?;
    let answers = answers_of(pool, &e.answer_sets).await?;
    let mut contenders = Vec::new();
    for id in &e.answer_sets {
        let (name, method) = match store::answers::get_set(pool, *id).await {
            Ok(s) => (s.name, s.method),
            Err(_) => (format!("set {id} (deleted)"), String::new()),
        };
        contenders.push(Contender { set_id: *id, name, method });
    }
    let words = |t: &str| engine::judge::align::words(t);
    let mut pairs = Vec::new();
    for (a, b) in &e.pairs {
        let mut qs = Vec::new();
        for q in &questions {
            let (Some(x), Some(y)) =
                (answers.get(a).and_then(|m| m.get(&q.id)), answers.get(b).and_then(|m| m.get(&q.id)))
            else {
                continue;
            };
            let aligned = results.align(*a, *b, q.id);
            let alignment: Option<Alignment> = aligned.map(|r| r.alignment);
            let judged_words = aligned.map_or((words(x), words(y)), |r| (r.words[0], r.words[1]));
            let trials = trials_of(&results, &e.settings, (*a, *b), q.id);
            let legacy: Option<LegacyJudgment> = results.legacy(*a, *b, q.id).map(|r| r.legacy.clone());
            qs.push(QuestionInput {
                id: q.id,
                level: q.level.clone().or_else(|| q.category.clone()),
                alignment,
                raw_words: (words(x), words(y)),
                words: judged_words,
                trials,
                legacy,
            });
        }
        pairs.push(PairInput { a: *a, b: *b, questions: qs });
    }
    Ok((contenders, pairs))
}

/// One question's unbiased judgments in a pair, per trial, from the job's
/// done items (`results`): a jury's judges' judgments together, each
/// marked with its judge.
pub(super) fn trials_of(
    results: &Results,
    settings: &eval::Settings,
    (a, b): (i64, i64),
    question: i64,
) -> BTreeMap<u32, Vec<Judgment>> {
    let mut trials = BTreeMap::new();
    for t in 0..settings.trials {
        let mut all: Option<Vec<Judgment>> = None;
        for judge in 0..settings.judge_count() {
            if let Some(r) = results.unbiased((a, b), question, t, judge) {
                all.get_or_insert_with(Vec::new).extend(r.judgments.iter().map(|j| Judgment { judge, ..j.clone() }));
            }
        }
        if let Some(js) = all {
            trials.insert(t, js);
        }
    }
    trials
}

/// An evaluation, its judgments and their report, read and computed once
/// for everything drawn from them (page, plots, tables, JSON, HTML).
pub struct Snapshot {
    pub stored: Stored,
    pub pairs: Vec<PairInput>,
    pub report: Report,
    /// Its plots, drawn the first time they are asked for (a page's
    /// images each ask; at the papers' sizes there are 20 of them).
    drawn: std::sync::OnceLock<Vec<(String, String)>>,
    /// Its job's calls (all, cached) and its judging items' outcome, read
    /// the first time a view asks: they change only with the job's
    /// progress, which is part of the snapshot's key (at the papers' sizes
    /// they are 150,000 call rows to count).
    counts: tokio::sync::OnceCell<((i64, i64), Option<crate::model::JobOutcome>)>,
    /// Its answer sets resting on little retrieved text ([`thin_context`]),
    /// read the first time a view asks: the sets' answers are part of the
    /// snapshot's key.
    thin: tokio::sync::OnceCell<Vec<(String, bool)>>,
}

impl Snapshot {
    /// Its plots: name → SVG (see [`plots`]).
    pub fn plots(&self) -> &[(String, String)] {
        self.drawn.get_or_init(|| plots(&self.stored, &self.report))
    }
}

/// The last snapshots computed are remembered on the database's handle
/// (`Db::remember`), each with what it was computed from: at the papers'
/// sizes (5,040 questions, 6 pairs, 120,000 judgments) a report takes
/// seconds to compute, and a page draws it, its plots, its drill-down and
/// its downloads from the same one.
const SNAPSHOTS_KEPT: usize = 2;
const SNAPSHOT: &str = "evaluation snapshot";

/// What a snapshot is computed from, in a line: the evaluation as stored
/// (its job's status and progress among it) and its answer sets' names and
/// sizes. Judgments only change through its job.
async fn snapshot_key(pool: &Db, stored: &Stored) -> AppResult<String> {
    let mut key = format!("{:?}|{:?}|{:?}", stored.view, stored.settings, stored.pairs);
    for id in &stored.answer_sets {
        match store::answers::get_set(pool, *id).await {
            Ok(s) => key.push_str(&format!("|{}:{}:{}", s.id, s.name, s.answers)),
            Err(_) => key.push_str(&format!("|{id}:deleted")),
        }
    }
    if !stored.settings.jury.is_empty() {
        // A jury's agreement with the people follows their ratings.
        for study in store::studies::ids(pool, stored.view.project_id).await? {
            key.push_str(&format!("|study {study}:{}", store::studies::results_version(pool, study).await?));
        }
    }
    Ok(key)
}

/// The snapshot of an evaluation (of what is judged so far while it runs):
/// the last one computed while nothing it is computed from changed, else
/// a new one (computed off the async runtime's threads).
pub async fn snapshot(pool: &Db, id: i64) -> AppResult<std::sync::Arc<Snapshot>> {
    let stored = get(pool, id).await?;
    let key = snapshot_key(pool, &stored).await?;
    type Kept = (String, std::sync::Arc<Snapshot>);
    if let Some(hit) = pool.recall::<Kept>(SNAPSHOT, &id.to_string()).filter(|kept| kept.0 == key) {
        return Ok(hit.1.clone());
    }
    let (contenders, pairs) = inputs(pool, &stored).await?;
    let people = if stored.settings.jury.is_empty() { None } else { people_of(pool, &stored).await? };
    let fresh = tokio::task::spawn_blocking(move || {
        let mut report = eval::report(&stored.settings, &contenders, &pairs);
        if let (Some(jury), Some((human, studies))) = (report.jury.as_mut(), people) {
            jury.people = engine::judge::jury::people(
                &eval::judge_labels(&stored.settings),
                &eval::jury_pairs(&pairs),
                &human,
                engine::study::CORRECTNESS,
                studies,
            );
        }
        std::sync::Arc::new(Snapshot {
            stored,
            pairs,
            report,
            drawn: Default::default(),
            counts: Default::default(),
            thin: Default::default(),
        })
    })
    .await
    .map_err(|_| AppError::Internal)?;
    pool.remember::<Kept>(SNAPSHOT, id.to_string(), std::sync::Arc::new((key, fresh.clone())), SNAPSHOTS_KEPT);
    Ok(fresh)
}

/// The people's ratings of the evaluation's answers: of each
/// answer-validation study of its project that rated one of its answer
/// sets, the raters' mean correctness per question, by (set, question)
/// (a set rated by several studies: the mean over all their ratings);
/// `None` when no such study has ratings.
pub async fn people_of(pool: &Db, e: &Stored) -> AppResult<Option<(BTreeMap<(i64, i64), f64>, Vec<i64>)>> {
    let mut sums: BTreeMap<(i64, i64), (f64, i64)> = BTreeMap::new();
    let mut studies = Vec::new();
    for study in store::studies::ids(pool, e.view.project_id).await? {
        let row = store::studies::get(pool, study).await?;
        let set = row.10.as_deref().and_then(|s| s.strip_prefix("answers:")).and_then(|s| s.parse::<i64>().ok());
        let Some(set) = set.filter(|s| row.9 == "answers" && e.answer_sets.contains(s)) else { continue };
        let dims: Vec<engine::study::Dimension> = serde_json::from_str(&row.5).unwrap_or_default();
        let Some(d) = dims.iter().position(|d| d.name == engine::study::CORRECTNESS) else { continue };
        let means = store::studies::answer_means(pool, study, d as i64).await?;
        if !means.is_empty() {
            studies.push(study);
        }
        for (q, mean, n) in means {
            let e = sums.entry((set, q)).or_default();
            e.0 += mean * n as f64;
            e.1 += n;
        }
    }
    if sums.is_empty() {
        return Ok(None);
    }
    studies.sort_unstable();
    Ok(Some((sums.into_iter().map(|(k, (s, n))| (k, s / n as f64)).collect(), studies)))
}

/// The report of an evaluation.
pub async fn report(pool: &Db, id: i64) -> AppResult<(Stored, Report)> {
    let s = snapshot(pool, id).await?;
    Ok((s.stored.clone(), s.report.clone()))
}

/// The report's plots: name → SVG. Names: `box`, `heatmap`,
/// `legacy-heatmap`, per pair `aspects-A-B`, `levels-A-B`, `legacy-A-B`,
/// and the paper view's per-level panels `paper-level-K`.
pub fn plots(e: &Stored, r: &Report) -> Vec<(String, String)> {
    use engine::judge::plots;
    let by = format!("judged by {}", e.view.judge);
    let mut out = Vec::new();
    // Only the plots of the protocols that ran: a legacy-only evaluation
    // has no trials to box and no unbiased matrix.
    if e.settings.protocol.unbiased() {
        out.push((
            "box".to_string(),
            plots::box_plots_svg("Win and tie rates over trials (unbiased protocol)", &by, &r.pairs),
        ));
        out.push((
            "heatmap".to_string(),
            plots::heatmap_svg(
                "Relative win rate, unbiased protocol (the median trial's)",
                &by,
                &r.contenders,
                &r.matrix,
            ),
        ));
        out.extend(super::level_plots(r));
    }
    if e.settings.protocol.legacy() {
        out.push((
            "legacy-heatmap".into(),
            plots::heatmap_svg(
                "Relative win rate, legacy protocol (A shown first, a winner forced)",
                &by,
                &r.contenders,
                &r.legacy_matrix,
            ),
        ));
    }
    for p in &r.pairs {
        let legend = (p.a_name.as_str(), p.b_name.as_str());
        let tag = format!("{}-{}", p.a, p.b);
        let mut aspects = Vec::new();
        let mut levels = Vec::new();
        let mut side = Vec::new();
        if let Some(u) = &p.unbiased {
            for b in &u.aspects {
                aspects.push((b.label.clone(), b.rates, format!("n = {}", b.n)));
            }
            for b in &u.levels {
                levels.push((b.label.clone(), b.rates, format!("n = {}", b.n)));
            }
            // The pair's headline: the median trial's rates (as the table).
            side.push((
                "unbiased (median trial)".to_string(),
                u.headline,
                format!("rel. {}", crate::format::signed(u.headline_relative, 2)),
            ));
        }
        if let Some(l) = &p.legacy {
            side.insert(
                0,
                (
                    "legacy (A first, forced)".to_string(),
                    l.overall.rates,
                    format!("rel. {}", crate::format::signed(l.overall.relative, 2)),
                ),
            );
            for b in &l.aspects {
                aspects.push((format!("{} (legacy)", b.label), b.rates, format!("n = {}", b.n)));
            }
        }
        let title = |what: &str| format!("{what}: {} vs {}", p.a_name, p.b_name);
        if !aspects.is_empty() {
            out.push((format!("aspects-{tag}"), plots::stacked_svg(&title("Per aspect"), legend, &aspects)));
        }
        if !levels.is_empty() {
            out.push((format!("levels-{tag}"), plots::stacked_svg(&title("Per question level"), legend, &levels)));
        }
        if e.settings.protocol.unbiased() && e.settings.protocol.legacy() {
            out.push((format!("legacy-{tag}"), plots::stacked_svg(&title("Legacy vs unbiased"), legend, &side)));
        }
    }
    out
}

/// The report as the page shows it (`inline`: with its plots' SVG, for a
/// page that cannot link to them; else linked).
pub async fn report_view(pool: &Db, id: i64, inline: bool) -> AppResult<EvaluationReportView> {
    report_view_of(pool, snapshot(pool, id).await?, inline).await
}

/// The page's view of a snapshot.
pub async fn report_view_of(pool: &Db, s: std::sync::Arc<Snapshot>, inline: bool) -> AppResult<EvaluationReportView> {
    let (e, r) = (s.stored.clone(), &s.report);
    // Inline, a copy of the drawn SVG; linked, only its name's presence.
    let svg = |k: &str| {
        s.plots().iter().find(|(name, svg)| name == k && !svg.is_empty()).map(|(_, svg)| {
            if inline {
                Figure::Inline(svg.clone())
            } else {
                Figure::Linked
            }
        })
    };
    let pairs = r
        .pairs
        .iter()
        .map(|p| {
            let u = p.unbiased.as_ref();
            let tag = format!("{}-{}", p.a, p.b);
            PairRowView {
                a: p.a,
                b: p.b,
                a_name: p.a_name.clone(),
                b_name: p.b_name.clone(),
                questions: p.questions,
                aligned: (p.alignment.as_is, p.alignment.regenerated, p.alignment.forced, p.alignment.discarded),
                alignment_success: p.alignment.success_rate,
                trials: u.map_or(0, |u| u.trials.len()),
                median_trial: u.map(|u| u.median_trial),
                a_win: u.map(|u| (u.headline.a_win, u.a_win_ci)),
                tie: u.map(|u| (u.headline.tie, u.tie_ci)),
                b_win: u.map(|u| (u.headline.b_win, u.b_win_ci)),
                relative: u.map(|u| (u.headline_relative, u.relative_ci)),
                medians: u.map(|u| (u.a_win.median, u.tie.median, u.b_win.median)),
                mean_difference: u.map(|u| u.mean_difference),
                wilcoxon: u.and_then(|u| u.wilcoxon.as_ref()).map(|t| (t.p_value, t.p_holm)),
                sign: u.and_then(|u| u.sign.as_ref()).map(|t| (t.p_value, t.p_holm)),
                legacy: p.legacy.as_ref().map(|l| (l.overall.rates.a_win, l.overall.rates.b_win, l.overall.relative)),
                aspects_plot: svg(&format!("aspects-{tag}")),
                levels_plot: svg(&format!("levels-{tag}")),
                legacy_plot: svg(&format!("legacy-{tag}")),
            }
        })
        .collect();
    let sanity = r.sanity.as_ref().map(|s| {
        let unbiased = s.sentence();
        let legacy = match (s.legacy_a_win, s.legacy_b_win) {
            (Some(a), Some(b)) => format!(
                " The legacy protocol on the same pair: first run {} / second run {} (the paper saw 90% / 10%).",
                pct(a),
                pct(b)
            ),
            _ => String::new(),
        };
        let test = r
            .pairs
            .first()
            .and_then(|p| p.unbiased.as_ref()?.wilcoxon.as_ref())
            // One rule per sentence: the verdict is the interval's; the
            // test is reported as what it is, not as a second verdict.
            .map(|t| {
                format!(
                    " For reference, a Wilcoxon test over questions of any difference between the two runs' scores gives p = {:.3}; the verdict above rests on the interval alone.",
                    t.p_value
                )
            })
            .unwrap_or_default();
        (format!("{unbiased}{legacy}{test}"), s.even)
    });
    let b = &r.bias;
    let rate = |v: Option<f64>| v.map_or("—".to_string(), pct);
    let (unbiased, legacy) = (e.settings.protocol.unbiased(), e.settings.protocol.legacy());
    let mut bias: Vec<(String, String, String)> = Vec::new();
    if unbiased {
        if e.settings.exchange {
            bias.push((
                "Verdict flips when the order swaps".into(),
                rate(b.flip_rate),
                format!("{} draws judged in both orders", b.exchanged_draws),
            ));
        }
        bias.push((
            "The answer shown first wins".into(),
            rate(b.first_shown_wins),
            format!("{} judgments with a winner", b.decided_judgments),
        ));
        bias.push((
            "The longer answer wins (as judged)".into(),
            rate(b.longer_wins),
            format!("{} judgments between unequal lengths", b.length_decided),
        ));
    }
    if legacy {
        bias.push((
            "Legacy: the first-shown answer wins".into(),
            rate(b.legacy_first_wins),
            format!("{} verdicts, one per question", b.legacy_verdicts),
        ));
        bias.push((
            "Legacy: the longer answer wins".into(),
            rate(b.legacy_longer_wins),
            format!("{} verdicts between unequal lengths", b.legacy_length_decided),
        ));
    }
    if unbiased {
        bias.push((
            "Spread of a pair's win rate across trials (std)".into(),
            b.trial_std_mean
                .map_or("—".into(), |m| format!("{m:.3} mean, {:.3} largest", b.trial_std_max.unwrap_or(m))),
            crate::format::count(r.pairs.len() as i64, "pair"),
        ));
    }
    let bias_verdicts = b.verdicts(e.settings.align && unbiased, e.settings.exchange && unbiased, e.settings.tolerance);
    let ((calls, cached_calls), judging) = s
        .counts
        .get_or_try_init(|| async {
            AppResult::Ok(match e.view.job_id {
                Some(j) => (
                    store::evaluations::call_counts(pool, j).await?,
                    // The judging items (`u-…`, `l-…`), not the alignment's (`al-…`).
                    Some(store::jobs::outcome_of(pool, j, "_-%").await?),
                ),
                None => ((0, 0), None),
            })
        })
        .await?
        .clone();
    let judge_reading = match (e.settings.judge, &judging) {
        (JudgeKind::Llm, Some(o)) => judge_reading(o, b.flip_rate, b.exchanged_draws, false),
        _ => None,
    };
    let no_verdict = no_verdict(&e, &r, judging.as_ref());
    let thin_context = s.thin.get_or_try_init(|| thin_context(pool, &e)).await?.clone();
    let paper = super::paper_view(r, &svg);
    let ranking = r.ranking.clone();
    let length_control = length_control_rows(&e, r);
    let sequential = sequential_rows(r);
    let jury = r.jury.as_ref().map(|j| jury_view(r, j));
    Ok(EvaluationReportView {
        jury,
        length_control,
        sequential,
        ranking,
        box_plot: svg("box"),
        heatmap: svg("heatmap"),
        legacy_heatmap: svg("legacy-heatmap"),
        evaluation: e.view,
        pairs,
        sanity,
        bias,
        bias_verdicts,
        calls,
        cached_calls,
        judge_reading,
        no_verdict,
        thin_context,
        paper,
    })
}

/// A jury's verdicts and agreement, as the page shows them.
fn jury_view(r: &Report, j: &engine::judge::jury::Jury) -> crate::model::JuryView {
    let mut pairs: Vec<(i64, i64)> = Vec::new();
    for p in j.judges.iter().chain([&j.mean, &j.majority]).flat_map(|r| &r.pairs) {
        if !pairs.contains(&(p.a, p.b)) {
            pairs.push((p.a, p.b));
        }
    }
    let name = |(a, b): (i64, i64)| {
        r.pairs
            .iter()
            .find(|p| (p.a, p.b) == (a, b))
            .map_or(format!("{a} vs {b}"), |p| format!("{} vs {}", p.a_name, p.b_name))
    };
    let rows = j
        .judges
        .iter()
        .chain([&j.mean, &j.majority])
        .map(|row| crate::model::JuryRowView {
            label: row.label.clone(),
            jury: row.judge.is_none(),
            cells: pairs
                .iter()
                .map(|(a, b)| {
                    row.pairs.iter().find(|p| (p.a, p.b) == (*a, *b)).map(|p| crate::model::JuryCell {
                        a_win: p.headline.a_win,
                        tie: p.headline.tie,
                        b_win: p.headline.b_win,
                        relative: p.relative,
                        items: p.items,
                    })
                })
                .collect(),
        })
        .collect();
    crate::model::JuryView {
        rule: j.rule.clone(),
        pairs: pairs.iter().map(|p| name(*p)).collect(),
        rows,
        items: j.items,
        fleiss_kappa: j.fleiss_kappa,
        krippendorff_alpha: j.krippendorff_alpha,
        people: j.people.clone(),
    }
}

/// Each pair's course under sequential trials.
fn sequential_rows(r: &Report) -> Vec<crate::model::SequentialRow> {
    r.pairs
        .iter()
        .filter_map(|p| {
            let c = p.sequential.as_ref()?;
            let last = c.looks.last();
            Some(crate::model::SequentialRow {
                a_name: p.a_name.clone(),
                b_name: p.b_name.clone(),
                questions: last.map_or(0, |l| l.questions),
                trials: c.trials(),
                m: c.m,
                looks: c.looks.len(),
                of_looks: engine::judge::sequential::schedule(c.m).len(),
                standing: c.standing(),
                estimate: last.map_or(0.0, |l| l.estimate),
                interval: last.map_or((0.0, 0.0), |l| l.interval),
                calls: c.calls,
                calls_fixed: c.calls_fixed,
            })
        })
        .collect()
}

/// Each pair's length-controlled win rate, and the relative win rate length
/// alignment by regeneration gave the same pair when this evaluation
/// aligned (see [`compare_with_aligned`] for another's).
fn length_control_rows(e: &Stored, r: &Report) -> Vec<crate::model::LengthControlRow> {
    r.pairs
        .iter()
        .filter_map(|p| {
            let lc = p.length_control.as_ref()?;
            let alignment = if e.settings.align {
                p.unbiased.as_ref().map(|u| ("this evaluation".to_string(), u.headline_relative))
            } else {
                None
            };
            Some(crate::model::LengthControlRow {
                a: p.a,
                b: p.b,
                a_name: p.a_name.clone(),
                b_name: p.b_name.clone(),
                judgments: lc.judgments,
                questions: lc.questions,
                raw: lc.raw_win_rate,
                paper: lc.paper.as_ref().map(|f| f.win_rate),
                paper_ci: lc.paper_ci,
                code: lc.code.as_ref().map(|c| c.fit.win_rate),
                code_c: lc.code.as_ref().map(|c| c.c),
                length_weight: lc.paper.as_ref().map(|f| f.length),
                position_weight: lc.paper.as_ref().filter(|_| lc.position_fitted).map(|f| f.position),
                why: lc.why.clone(),
                alignment,
                aligned_here: e.settings.align,
            })
        })
        .collect()
}

/// On the project's own report page (its readers may open every evaluation
/// of the project; a share link's holder may not, so never through one):
/// for an evaluation that did not align lengths, the relative win rate the
/// newest finished evaluation of the same questions and answer sets that
/// did align gave each pair — the expensive correction beside the cheap one
/// on the same answers.
pub async fn compare_with_aligned(pool: &Db, v: &mut EvaluationReportView) {
    if v.length_control.is_empty() || v.length_control.iter().any(|r| r.aligned_here) {
        return;
    }
    let Some((id, other)) = aligned_sibling(pool, v).await else { return };
    for row in &mut v.length_control {
        row.alignment = other.report.pairs.iter().find_map(|q| {
            let u = q.unbiased.as_ref()?;
            let sign = if (q.a, q.b) == (row.a, row.b) {
                1.0
            } else if (q.a, q.b) == (row.b, row.a) {
                -1.0
            } else {
                return None;
            };
            Some((format!("evaluation #{id}"), sign * u.headline_relative))
        });
    }
}

/// The newest finished evaluation of the same questions and answer sets
/// that aligned lengths under the unbiased protocol, with its report.
async fn aligned_sibling(pool: &Db, v: &EvaluationReportView) -> Option<(i64, std::sync::Arc<Snapshot>)> {
    let e = &v.evaluation;
    let here = get(pool, e.id).await.ok()?;
    let others = store::evaluations::list(pool, e.project_id).await.ok()?;
    for (id, _, question_set, _, _, _, settings, sets, ..) in others {
        if id == e.id || question_set != e.question_set_id {
            continue;
        }
        let (Ok(settings), Ok(sets)) =
            (serde_json::from_str::<eval::Settings>(&settings), serde_json::from_str::<Vec<i64>>(&sets))
        else {
            continue;
        };
        if !settings.align || !settings.protocol.unbiased() || !here.answer_sets.iter().all(|s| sets.contains(s)) {
            continue;
        }
        let Ok(stored) = get(pool, id).await else { continue };
        if matches!(stored.view.status, Some(JobStatus::Done)) {
            return Some((id, snapshot(pool, id).await.ok()?));
        }
    }
    None
}

/// The contenders of an evaluation some of whose answers rest on little or
/// no retrieved text: `(sentence, warns)` per flagged set.
pub async fn thin_context(pool: &Db, e: &Stored) -> AppResult<Vec<(String, bool)>> {
    let mut out = Vec::new();
    for id in &e.answer_sets {
        // A deleted set has nothing left to measure.
        let Ok(c) = store::answers::cost_of(pool, *id).await else { continue };
        if let Some(f) = c.context.flag() {
            out.push((format!("#{} {}: {f}", c.answer_set_id, c.name), c.context.warns()));
        }
    }
    Ok(out)
}

/// Why a finished evaluation has no rates at all, when it has none: every
/// question discarded by length alignment, or no verdict readable.
pub fn no_verdict(e: &Stored, r: &Report, judging: Option<&crate::model::JobOutcome>) -> Option<String> {
    let finished = matches!(e.view.status, Some(JobStatus::Done | JobStatus::Failed));
    if !finished || r.pairs.iter().any(|p| p.unbiased.is_some() || p.legacy.is_some()) {
        return None;
    }
    let questions: usize = r.pairs.iter().map(|p| p.questions).sum();
    let discarded: usize = r.pairs.iter().map(|p| p.alignment.discarded).sum();
    let judged = judging.map_or(0, |o| o.items);
    Some(if judged == 0 && discarded > 0 {
        format!(
            "No question was judged: length alignment discarded {discarded} of {questions} (their answers stayed more than \
             {} words apart after regeneration and the forced append). A model that follows the length instruction, a larger \
             tolerance, or alignment off (to see what it removes) would let them be judged.",
            e.settings.tolerance
        )
    } else if judged > 0 && judging.is_some_and(|o| o.failed == o.items) {
        format!(
            "No verdict could be read: every one of the {judged} judging items failed (see the judge's line above)."
        )
    } else {
        "No verdict: nothing was judged.".to_string()
    })
}

/// How well an LLM judge could be read, in words, and whether the report's
/// rates are in doubt (most items failed, or none was read).
/// `on_cli`: the advice names the command line's flags; on a page, the
/// server's settings (a page cannot pass a flag).
pub fn judge_reading(
    o: &crate::model::JobOutcome,
    flip_rate: Option<f64>,
    exchanged: usize,
    on_cli: bool,
) -> Option<(String, bool)> {
    let model = o.model.clone()?;
    if o.items == 0 {
        return None;
    }
    let read = o.items - o.failed;
    let mut said =
        format!("The judge, {model}: {read} of {} items read ({}).", o.items, pct(read as f64 / o.items as f64));
    if let Some(more) = o.sentence() {
        said.push(' ');
        said.push_str(&more);
    }
    if let Some(f) = flip_rate {
        said.push_str(&format!(
            " Position consistency: the verdict stays the same when the order swaps in {} of {exchanged} draws.",
            pct(1.0 - f)
        ));
    }
    let poor = read * 2 < o.items;
    if poor {
        let how = if on_cli {
            "(--llm-max-tokens judge_scores=N, --llm-json-mode on|off)"
        } else {
            "(set where the server is started: ASSAY_LLM_MAX_TOKENS=judge_scores=N, ASSAY_LLM_JSON_MODE=on|off)"
        };
        said.push_str(&format!(
            " Most verdicts could not be used, so the rates below rest on few judgments (or none): a more capable judge model \
             (Settings), a larger reply budget or the other JSON mode {how} may help."
        ));
    }
    Some((said, poor))
}

fn outcome_name(o: Outcome, a: &str, b: &str) -> String {
    match o {
        Outcome::A => a.to_string(),
        Outcome::B => b.to_string(),
        Outcome::Tie => "tie".to_string(),
    }
}

fn alignment_name(a: Option<Alignment>, on: bool) -> String {
    match a {
        None if !on => "alignment off".into(),
        None => "not aligned yet".into(),
        Some(Alignment::AsIs) => "within tolerance as generated".into(),
        Some(Alignment::Regenerated(n)) => format!("regenerated ({n}×)"),
        Some(Alignment::Forced(n)) => format!("forced append (after {n} regenerations)"),
        Some(Alignment::Discarded) => "discarded: still outside the tolerance".into(),
    }
}

/// Page `page` (from 1, clamped) of a pair's questions for the drill-down list.
pub async fn drill_questions(
    pool: &Db,
    id: i64,
    a: i64,
    b: i64,
    page: i64,
) -> AppResult<crate::model::DrillQuestionsPage> {
    use crate::model::DRILL_PER_PAGE;
    // The snapshot's inputs: reading 120,000 judgments again for each page
    // of the list took seconds.
    let snap = snapshot(pool, id).await?;
    let e = &snap.stored;
    if !e.pairs.contains(&(a, b)) {
        return Err(AppError::NotFound(format!("evaluation {id} has no pair {a}–{b}")));
    }
    let contenders = &snap.report.contenders;
    let name = |s: i64| contenders.iter().find(|c| c.set_id == s).map_or(String::new(), |c| c.name.clone());
    let pair = snap.pairs.iter().find(|p| (p.a, p.b) == (a, b)).map_or(&[][..], |p| &p.questions[..]);
    let total = pair.len() as i64;
    let (page, pages) = crate::model::paging(total, DRILL_PER_PAGE, page);
    let shown: Vec<_> =
        pair.iter().skip(((page - 1) * DRILL_PER_PAGE) as usize).take(DRILL_PER_PAGE as usize).collect();
    // The texts of this page's questions only.
    let mut texts: HashMap<i64, String> = HashMap::new();
    for q in &shown {
        texts.insert(q.id, store::questions::get_question(pool, q.id).await?.1.question);
    }
    let questions = shown
        .into_iter()
        .map(|q| {
            let outcomes: Vec<Outcome> =
                q.trials.values().filter_map(|js| Some(engine::judge::verdict(js)?.outcome)).collect();
            let count = |o: Outcome| outcomes.iter().filter(|x| **x == o).count();
            DrillQuestionView {
                id: q.id,
                question: texts.get(&q.id).cloned().unwrap_or_default(),
                level: q.level.clone(),
                a_wins: count(Outcome::A),
                ties: count(Outcome::Tie),
                b_wins: count(Outcome::B),
                alignment: alignment_name(q.alignment, e.settings.align),
                legacy: q.legacy.as_ref().map(|l| outcome_name(l.overall, &name(a), &name(b))),
            }
        })
        .collect();
    Ok(crate::model::DrillQuestionsPage { questions, total, page, pages })
}

/// One question of a pair: both answers as generated and as judged, every
/// judgment in both orders with its scores and reasoning, each trial's
/// verdict and the legacy verdict.
pub async fn drill(pool: &Db, id: i64, a: i64, b: i64, question: i64) -> AppResult<DrillView> {
    let e = get(pool, id).await?;
    if !e.pairs.contains(&(a, b)) {
        return Err(AppError::NotFound(format!("evaluation {id} has no pair {a}–{b}")));
    }
    let (_, q) = store::questions::get_question(pool, question).await?;
    if store::questions::owner(pool, question).await?.0 != e.view.question_set_id {
        return Err(AppError::NotFound(format!("question {question} is not in evaluation {id}'s question set")));
    }
    // Only this question's items of the pair, each by its key (a job of
    // 5,040 questions × 6 pairs holds 120,000).
    let mut items = Vec::new();
    if let Some(j) = e.view.job_id {
        let keys = std::iter::once(Key::Align { a, b, question })
            .chain((0..e.settings.trials).flat_map(|trial| {
                (0..e.settings.judge_count()).map(move |judge| Key::Unbiased { a, b, question, trial, judge })
            }))
            .chain(std::iter::once(Key::Legacy { a, b, question }));
        for key in keys {
            match store::jobs::job_item(pool, j, &key.to_string()).await {
                Ok(item) => items.push(item),
                Err(AppError::NotFound(_)) => {}
                Err(err) => return Err(err),
            }
        }
    }
    let results = Results::of(&items)?;
    let answer = |set: i64| async move {
        store::answers::list_answers(pool, set, Some(question))
            .await
            .ok()
            .and_then(|v| v.into_iter().next())
            .map(|a| a.answer)
    };
    let (a_raw, b_raw) = (answer(a).await.unwrap_or_default(), answer(b).await.unwrap_or_default());
    let aligned = results.align(a, b, question);
    let set_name =
        |s: i64| async move { store::answers::get_set(pool, s).await.map_or(format!("set {s}"), |s| s.name) };
    let (a_name, b_name) = (set_name(a).await, set_name(b).await);
    let mut judgments = Vec::new();
    let mut verdicts = Vec::new();
    for t in 0..e.settings.trials {
        // The trial's verdict: over every judge's judgments (a jury's mean score).
        let mut all: Vec<Judgment> = Vec::new();
        for judge in 0..e.settings.judge_count() {
            let key = Key::Unbiased { a, b, question, trial: t, judge };
            let Some(r) = results.unbiased((a, b), question, t, judge) else { continue };
            let reasons = &r.reasoning;
            for (i, j) in r.judgments.iter().cloned().enumerate() {
                judgments.push(JudgmentView {
                    trial: t,
                    repeat: j.repeat,
                    order: if j.order == Order::AFirst { "A first".into() } else { "B first".into() },
                    a: j.a,
                    b: j.b,
                    reasoning: reasons.get(i).cloned().unwrap_or_default(),
                    item: key.to_string(),
                });
                all.push(j);
            }
        }
        if let Some(v) = engine::judge::verdict(&all) {
            verdicts.push((t, v.a_total, v.b_total, outcome_name(v.outcome, &a_name, &b_name)));
        }
    }
    let legacy = results.legacy(a, b, question).map(|r| {
        let l = &r.legacy;
        (
            outcome_name(l.overall, &a_name, &b_name),
            l.named().map(|(n, o)| (n.to_string(), outcome_name(o, &a_name, &b_name))).collect(),
        )
    });
    let alignment: Option<Alignment> = aligned.map(|r| r.alignment);
    Ok(DrillView {
        question_id: question,
        question: q.question,
        level: q.level.or(q.category),
        a_judged: aligned.map_or_else(|| a_raw.clone(), |r| r.a.clone()),
        b_judged: aligned.map_or_else(|| b_raw.clone(), |r| r.b.clone()),
        a_raw,
        b_raw,
        a_name,
        b_name,
        alignment: alignment_name(alignment, e.settings.align),
        judgments,
        verdicts,
        legacy,
        job_id: e.view.job_id,
    })
}

// The browser's copy of the most questions a plan tries is the engine's.
const _: () =
    assert!(engine::judge::plan::QUESTIONS[engine::judge::plan::QUESTIONS.len() - 1] == crate::model::DECIDE_MOST);

/// What a run can decide, planned from a pilot evaluation: per pair
/// the pilot judged under the unbiased protocol, its per-question verdicts
/// simulated at other sizes (`engine::judge::plan`). `run`: the run asked
/// for (its questions, M). Nothing is sent to a model.
pub async fn decide(
    pool: &Db,
    pilot: i64,
    run: (usize, usize),
    half_width: f64,
    difference: Option<f64>,
) -> AppResult<crate::model::DecideView> {
    if !(half_width > 0.0 && half_width < 1.0) {
        return Err(AppError::Invalid(format!("the interval half-width must be between 0 and 1, not {half_width}")));
    }
    if let Some(d) = difference.filter(|d| !(*d > 0.0 && *d < 2.0)) {
        return Err(AppError::Invalid(format!("the difference to detect must be between 0 and 2, not {d}")));
    }
    if run.0 == 0 || run.1 == 0 || run.1 > 1000 {
        return Err(AppError::Invalid(format!(
            "a run needs at least one question and 1 to 1,000 trials, not {} × {}",
            run.0, run.1
        )));
    }
    let s = snapshot(pool, pilot).await?;
    if !s.stored.settings.protocol.unbiased() {
        return Err(AppError::Invalid(format!(
            "evaluation #{pilot} ran only the legacy protocol: a pilot needs the unbiased protocol's trials"
        )));
    }
    let mut trials = vec![1, 5, run.1];
    trials.sort_unstable();
    trials.dedup();
    let mut pairs = Vec::new();
    for (p, r) in s.pairs.iter().zip(&s.report.pairs) {
        let verdicts: Vec<Vec<Outcome>> = p
            .questions
            .iter()
            .map(|q| q.trials.values().filter_map(|js| engine::judge::verdict(js)).map(|v| v.outcome).collect())
            .collect();
        let seed = (p.a as u64) << 32 ^ p.b as u64;
        let (a_name, b_name) = (r.a_name.clone(), r.b_name.clone());
        let trials = trials.clone();
        let view = tokio::task::spawn_blocking(move || {
            engine::judge::plan::plan(&verdicts, &trials, half_width, difference, Some(run), seed)
                .map(|plan| crate::model::PairDecideView::new(a_name, b_name, plan, half_width))
        })
        .await
        .map_err(|_| AppError::Internal)?;
        pairs.extend(view);
    }
    if pairs.is_empty() {
        return Err(AppError::Invalid(format!("evaluation #{pilot} has no judged question to plan from yet")));
    }
    Ok(crate::model::DecideView {
        pilot,
        pilot_name: s.stored.view.name.clone(),
        experiments: engine::judge::plan::EXPERIMENTS,
        half_width,
        difference,
        run,
        power: engine::judge::plan::POWER,
        pairs,
    })
}

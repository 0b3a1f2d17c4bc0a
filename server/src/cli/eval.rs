//! `assay eval …`: evaluations (the unbiased judging protocol and the
//! legacy one), sanity checks, and reports written to a directory.

use std::path::PathBuf;
use std::process::ExitCode;

use app::ssr::store::Db;
use clap::{Args, Subcommand};
use engine::judge::eval::Settings;
use engine::llm::settings::LlmSettings;
use serde_json::json;
use types::requests::EvaluationRequest;

use super::{execute_job, job_line, Output};

/// `--plan --pilot EVAL`: what the planned run can decide, for
/// `assay eval run` and `assay run`.
#[derive(Args, Debug)]
pub struct PilotArgs {
    /// With --plan: an earlier evaluation to plan from (a small first
    /// run, say): what this run can decide — its interval's half-width
    /// and power — and the questions and trials other targets need,
    /// simulated from the pilot's verdicts.
    #[arg(long, requires = "plan")]
    pub pilot: Option<i64>,
    /// With --pilot: the interval half-width to aim for.
    #[arg(long, default_value_t = 0.05, requires = "pilot")]
    pub half_width: f64,
    /// With --pilot: the smallest difference in relative win rate to
    /// detect (a size, in the direction the pilot leans; power is shown
    /// for it).
    #[arg(long, requires = "pilot")]
    pub difference: Option<f64>,
}

/// What the planned run can decide, from its pilot.
pub(super) fn decide_text(d: &app::model::DecideView) -> String {
    use app::format::{int, signed};
    use app::model::DecideView;
    let (questions, trials) = d.run;
    let mut lines = vec![format!(
        "what it can decide, simulated from evaluation {}'s verdicts ({} experiments per size; nothing is sent):",
        d.pilot, d.experiments
    )];
    for p in &d.pairs {
        lines.push(format!(
            "  {} vs {} (pilot: {} questions, relative win rate {}):",
            p.a_name,
            p.b_name,
            int(p.pilot_questions as i64),
            signed(p.pilot_effect, 2)
        ));
        if let Some(r) = &p.run {
            let power = match (r.power, p.difference_reached) {
                (Some(power), Some(d)) => format!("; power {power:.2} to detect a difference of {d:.2}"),
                _ => String::new(),
            };
            lines.push(format!(
                "    this run ({} questions × {trials} trials): the headline's 95% interval ±{:.3}{power}",
                int(questions as i64),
                r.half_width
            ));
        }
        lines.push(format!("    for ±{}: {}", d.half_width, DecideView::needs(&p.questions_for_half_width)));
        if let Some(diff) = p.difference_reached {
            lines.push(format!(
                "    for power {} at a difference of {diff:.2}: {}",
                d.power,
                DecideView::needs(&p.questions_for_power)
            ));
        }
        let ms: Vec<usize> = p.questions_for_half_width.iter().map(|(m, _)| *m).collect();
        lines.push(format!(
            "    {:>9}  {}",
            "questions",
            ms.iter().map(|m| format!("{:>14}", format!("M = {m}"))).collect::<String>()
        ));
        for q in engine::judge::plan::QUESTIONS {
            let row: String = ms
                .iter()
                .map(|m| {
                    let c = p.cells.iter().find(|c| c.questions == q && c.trials == *m);
                    let text = c.map_or(String::new(), |c| match c.power {
                        Some(power) => format!("±{:.3} ({:.0}%)", c.half_width, power * 100.0),
                        None => format!("±{:.3}", c.half_width),
                    });
                    format!("{text:>14}")
                })
                .collect();
            lines.push(format!("    {:>9}  {row}", int(q as i64)));
        }
    }
    if d.difference.is_some() {
        lines.push("  (±: the 95% interval's half-width; %: power to detect the difference)".to_string());
    }
    lines.join("\n")
}

/// The length-controlled win rate per pair, a line each.
fn length_control_lines(pairs: &[engine::judge::eval::PairReport]) -> Vec<String> {
    use app::format::pct1;
    let mut lines = Vec::new();
    for p in pairs {
        let Some(lc) = &p.length_control else { continue };
        if lines.is_empty() {
            lines.push(
                "length-controlled win rate (AlpacaEval 2's regression on length difference and position; ties half):"
                    .to_string(),
            );
        }
        let paper = match (&lc.paper, lc.paper_ci) {
            (Some(f), Some((lo, hi))) => format!("{} [{}, {}]", pct1(f.win_rate), pct1(lo), pct1(hi)),
            (Some(f), None) => pct1(f.win_rate),
            (None, _) => format!("none ({})", lc.why.as_deref().unwrap_or("no finite fit")),
        };
        let code = lc.code.as_ref().map_or("—".to_string(), |c| format!("{} (C = {:.4})", pct1(c.fit.win_rate), c.c));
        let weights = lc.paper.as_ref().map_or(String::new(), |f| {
            let position = if lc.position_fitted {
                format!(", position {}", app::format::signed(f.position, 2))
            } else {
                String::new()
            };
            format!("; weights: length {}{position}", app::format::signed(f.length, 2))
        });
        lines.push(format!(
            "  {} vs {}: raw {}, controlled {paper}, AlpacaEval's code {code}{weights} — {} judgments",
            p.a_name,
            p.b_name,
            pct1(lc.raw_win_rate),
            app::format::int(lc.judgments as i64)
        ));
    }
    lines
}

/// Sequential trials: where each pair stopped, and the calls saved.
fn sequential_lines(pairs: &[engine::judge::eval::PairReport]) -> Vec<String> {
    use app::format::{int, signed};
    let courses: Vec<_> = pairs.iter().filter_map(|p| Some((p, p.sequential.as_ref()?))).collect();
    if courses.is_empty() {
        return Vec::new();
    }
    let (calls, fixed) = courses.iter().fold((0, 0), |(c, f), (_, x)| (c + x.calls, f + x.calls_fixed));
    let mut lines = vec![format!(
        "sequential trials (each pair stopped once its interval, α spent over the looks, lay inside or outside ±{}): \
         {} judging calls of {} with all M — {} saved",
        engine::judge::eval::EVEN,
        int(calls as i64),
        int(fixed as i64),
        int(fixed.saturating_sub(calls) as i64)
    )];
    for (p, c) in courses {
        let (estimate, (lo, hi)) = c.looks.last().map_or((0.0, (0.0, 0.0)), |l| (l.estimate, l.interval));
        lines.push(format!(
            "  {} vs {}: {} after {} of {} trials ({} [{}, {}]); {} calls of {}",
            p.a_name,
            p.b_name,
            c.standing().as_str(),
            c.trials(),
            c.m,
            signed(estimate, 2),
            signed(lo, 2),
            signed(hi, 2),
            int(c.calls as i64),
            int(c.calls_fixed as i64)
        ));
    }
    lines
}

/// A jury's verdicts and agreement, as `eval show` prints them.
pub fn jury_lines(
    jury: Option<&engine::judge::jury::Jury>,
    reports: &[engine::judge::eval::PairReport],
) -> Vec<String> {
    use app::format::{pct, signed};
    let Some(j) = jury else { return Vec::new() };
    let name = |a: i64, b: i64| {
        reports
            .iter()
            .find(|p| (p.a, p.b) == (a, b))
            .map_or(format!("{a} vs {b}"), |p| format!("{} vs {}", p.a_name, p.b_name))
    };
    let p_value = |p: f64| if p < 0.001 { format!("{p:.1e}") } else { format!("{p:.3}") };
    let fixed = |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{x:.3}"));
    let mut lines = vec![format!(
        "jury of {} judges (headline: {}); agreement over {} items judged by all: Fleiss' κ {} on the winners, \
         Krippendorff's α (interval) {} on the score differences",
        j.judges.len(),
        j.rule,
        app::format::int(j.items as i64),
        fixed(j.fleiss_kappa),
        fixed(j.krippendorff_alpha)
    )];
    for row in j.judges.iter().chain([&j.mean, &j.majority]) {
        let pairs: Vec<String> = row
            .pairs
            .iter()
            .map(|p| {
                format!(
                    "{} {} / {} / {} (relative {})",
                    name(p.a, p.b),
                    pct(p.headline.a_win),
                    pct(p.headline.tie),
                    pct(p.headline.b_win),
                    signed(p.relative, 2)
                )
            })
            .collect();
        lines.push(format!("  {}: {}", row.label, pairs.join("; ")));
    }
    if let Some(people) = &j.people {
        lines.push(format!(
            "agreement with the people (answer-validation stud{} {}, {} per answer):",
            if people.studies.len() == 1 { "y" } else { "ies" },
            people.studies.iter().map(|s| format!("#{s}")).collect::<Vec<_>>().join(", "),
            people.dimension
        ));
        for r in &people.rows {
            lines.push(format!(
                "  {}: Cohen's κ {}, Spearman's ρ {} over {} questions",
                r.label,
                fixed(r.cohen_kappa),
                r.spearman.map_or("—".to_string(), |(rho, p)| format!("{rho:.3} (p = {})", p_value(p))),
                r.n
            ));
        }
    }
    lines
}

#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// Judge a question set's answer sets in pairs (a job; resumable).
    Run {
        project: String,
        /// The question set.
        #[arg(long)]
        set: i64,
        /// The answer sets to compare: ids, names or method names, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        methods: Vec<String>,
        /// Only these pairs (`A:B`, comma-separated; default: every pair).
        #[arg(long, value_delimiter = ',')]
        pairs: Vec<String>,
        /// How it judges: the same request as the Evaluations form and a
        /// manifest's [evaluation] table.
        #[command(flatten)]
        judge: EvaluationRequest,
        #[arg(long)]
        name: Option<String>,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
        /// Print what the run would send — calls, tokens and price per
        /// stage — and stop: nothing runs and nothing is sent.
        #[arg(long)]
        plan: bool,
        #[command(flatten)]
        pilot: PilotArgs,
    },
    /// Judge a method against a second answer set of itself under both
    /// protocols: the unbiased one should find them even.
    Sanity {
        project: String,
        #[arg(long)]
        set: i64,
        /// The answer set (id or name) or method whose latest set is checked.
        #[arg(long)]
        method: String,
        #[command(flatten)]
        judge: EvaluationRequest,
    },
    /// A project's evaluations.
    List { project: String },
    /// An evaluation's results in the terminal (or as JSON with --json): the
    /// summary `eval run` prints when it ends — per pair, the headline rates
    /// with their intervals, the length-controlled win rate, the ranking.
    Show { id: i64 },
    /// Write an evaluation's report: every plot as SVG and PNG, every table
    /// as CSV, and the whole report as JSON.
    Report {
        id: i64,
        #[arg(long)]
        out: PathBuf,
    },
}

/// The answer sets of `set` named by `token`: an id, a set's name, or a
/// method (its latest set).
async fn resolve_set(pool: &Db, project: i64, set: i64, token: &str) -> anyhow::Result<i64> {
    let sets: Vec<app::model::AnswerSetView> = app::ssr::store::answers::list_sets(pool, project)
        .await?
        .into_iter()
        .filter(|s| s.question_set_id == set)
        .collect();
    let token = token.trim();
    if let Ok(id) = token.parse::<i64>() {
        if sets.iter().any(|s| s.id == id) {
            return Ok(id);
        }
        anyhow::bail!("answer set {id} does not answer question set {set}");
    }
    // By method, the latest set a user made: a sanity check's second run
    // belongs to its check (by name or id it can still be named).
    if let Some(s) = sets
        .iter()
        .rev()
        .find(|s| s.name == token)
        .or_else(|| sets.iter().rev().find(|s| s.method == token && s.sanity_of.is_none()))
    {
        return Ok(s.id);
    }
    let known: Vec<String> = sets.iter().map(|s| format!("{} ({})", s.id, s.name)).collect();
    anyhow::bail!(
        "no answer set \"{token}\" for question set {set}; it has: {}",
        if known.is_empty() { "none — generate answers first".into() } else { known.join(", ") }
    )
}

fn triple(b: &engine::stats::BoxStats) -> serde_json::Value {
    json!({ "median": b.median, "q1": b.q1, "q3": b.q3 })
}

async fn summary(pool: &Db, out: Output, id: i64, job: &app::model::JobView) -> anyhow::Result<serde_json::Value> {
    let (e, r) = app::ssr::evaluations::report(pool, id).await?;
    let costs = app::ssr::evaluations::pair_costs(pool, &e).await?;
    let pairs: Vec<serde_json::Value> = r
        .pairs
        .iter()
        .map(|p| {
            let u = p.unbiased.as_ref();
            let c = costs.get(&(p.a, p.b)).cloned().unwrap_or_default();
            json!({
                "a": p.a, "b": p.b, "a_name": p.a_name, "b_name": p.b_name, "questions": p.questions,
                "trials": u.map(|u| u.trials.len()),
                "a_win": u.map(|u| triple(&u.a_win)), "tie": u.map(|u| triple(&u.tie)), "b_win": u.map(|u| triple(&u.b_win)),
                "relative_win_rate": u.map(|u| u.headline_relative),
                "median_trial": u.map(|u| u.median_trial),
                "headline": u.map(|u| json!({"a_win": u.headline.a_win, "tie": u.headline.tie, "b_win": u.headline.b_win,
                    "relative": u.headline_relative})),
                "a_win_ci": u.map(|u| u.a_win_ci), "tie_ci": u.map(|u| u.tie_ci), "b_win_ci": u.map(|u| u.b_win_ci),
                "relative_ci": u.map(|u| u.relative_ci),
                "wilcoxon_p_holm": u.and_then(|u| u.wilcoxon.as_ref()).map(|t| t.p_holm),
                "legacy": p.legacy.as_ref().map(|l| json!({"a_win": l.overall.rates.a_win, "b_win": l.overall.rates.b_win,
                    "relative_win_rate": l.overall.relative,
                    "aspects": l.aspects.iter().map(|a| json!({"aspect": a.label, "a_win": a.rates.a_win,
                        "b_win": a.rates.b_win, "relative_win_rate": a.relative})).collect::<Vec<_>>()})),
                "alignment_success": p.alignment.success_rate, "discarded": p.alignment.discarded,
                "length_control": p.length_control,
                "sequential": p.sequential,
                "calls": c.calls, "cached_calls": c.cached, "tokens": c.tokens, "cost_usd": c.cost_usd,
            })
        })
        .collect();
    let sanity = r.sanity.as_ref().map(|s| {
        json!({"even": s.even, "verdict": s.verdict, "median_relative_win_rate": s.median_relative,
               "interval": s.interval, "questions": s.questions, "questions_needed": s.questions_needed,
               "sentence": s.sentence(), "legacy_a_win": s.legacy_a_win,
               "legacy_b_win": s.legacy_b_win, "legacy_relative_win_rate": s.legacy_relative})
    });
    let outcome = app::ssr::store::jobs::outcome(pool, job.id).await?;
    // The judging items' (not the alignment's).
    let judging = app::ssr::store::jobs::outcome_of(pool, job.id, "_-%").await?;
    let reading = match e.settings.judge {
        engine::judge::eval::JudgeKind::Llm => {
            app::ssr::evaluations::judge_reading(&judging, r.bias.flip_rate, r.bias.exchanged_draws, true)
        }
        _ => None,
    };
    let no_verdict = app::ssr::evaluations::no_verdict(&e, &r, Some(&judging));
    let thin_context = app::ssr::evaluations::thin_context(pool, &e).await?;
    let value = json!({"evaluation_id": id, "job": job.id, "status": job.status, "judge": e.view.judge,
                       "settings": e.view.settings_text(),
                       "failed": job.failed, "tokens": job.tokens, "cost_usd": job.cost_usd,
                       "pairs": pairs, "sanity": sanity, "bias": r.bias, "outcome": outcome,
                       "judge_reading": reading.as_ref().map(|(s, poor)| json!({"sentence": s, "rates_in_doubt": poor})),
                       "no_verdict": no_verdict, "ranking": r.ranking, "jury": r.jury,
                       "thin_context": thin_context.iter().map(|(s, _)| s).collect::<Vec<_>>()});
    if !out.json {
        use app::format::pct;
        let mut lines = vec![job_line(job), format!("evaluation {id} ({}) judged by {}", e.view.name, e.view.judge)];
        for p in &r.pairs {
            let mut line = format!("  {} vs {}: ", p.a_name, p.b_name);
            if let Some(u) = &p.unbiased {
                line += &format!(
                    "unbiased over {} trials, median trial {}: {} wins {}, tie {}, {} wins {}; relative {}",
                    u.trials.len(),
                    u.median_trial,
                    p.a_name,
                    app::format::pct_ci(u.headline.a_win, u.a_win_ci),
                    app::format::pct_ci(u.headline.tie, u.tie_ci),
                    p.b_name,
                    app::format::pct_ci(u.headline.b_win, u.b_win_ci),
                    app::format::signed_ci(u.headline_relative, u.relative_ci)
                );
            }
            if let Some(l) = &p.legacy {
                line += &format!(
                    "{}legacy: {} / {} (relative {})",
                    if p.unbiased.is_some() { "; " } else { "" },
                    pct(l.overall.rates.a_win),
                    pct(l.overall.rates.b_win),
                    app::format::signed(l.overall.relative, 2)
                );
            }
            if p.unbiased.is_none() && p.legacy.is_none() {
                line += "no verdict could be read for this pair";
            }
            if let Some(s) = p.alignment.success_rate {
                line += &format!("; aligned {} ({} discarded)", pct(s), p.alignment.discarded);
            }
            lines.push(line);
        }
        if let Some((said, _)) = &reading {
            lines.push(said.clone());
        }
        if let Some(said) = &no_verdict {
            lines.push(said.clone());
        }
        for (said, _) in &thin_context {
            lines.push(format!("little retrieved text: {said}"));
        }
        if let Some(s) = &r.sanity {
            lines.push(format!("sanity: {}", s.sentence()));
        }
        lines.extend(length_control_lines(&r.pairs));
        lines.extend(sequential_lines(&r.pairs));
        lines.extend(jury_lines(r.jury.as_ref(), &r.pairs));
        if let Some(k) = r.ranking.as_ref().filter(|k| k.rows.len() > 2 || k.note.is_some()) {
            match &k.note {
                Some(note) => lines.push(format!("ranking (Bradley–Terry): {note}")),
                None => {
                    lines.push(format!(
                        "ranking (Bradley–Terry, 1000 + 400·log10 odds; 95% interval over {} resamples of {} questions):",
                        k.resamples, k.questions
                    ));
                    for x in &k.rows {
                        lines.push(format!(
                            "  {}. {} {:.0} [{:.0}, {:.0}] rank (UB) {}",
                            x.rank, x.name, x.score, x.ci.0, x.ci.1, x.rank_ub
                        ));
                    }
                }
            }
        }
        println!("{}", lines.join("\n"));
    } else {
        println!("{}", serde_json::to_string_pretty(&value)?);
    }
    Ok(value)
}

pub async fn run(pool: &Db, out: Output, llm: &LlmSettings, cmd: EvalCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        EvalCommand::Run {
            project,
            set,
            methods,
            pairs,
            judge,
            name,
            no_cache,
            plan,
            pilot: PilotArgs { pilot, half_width, difference },
        } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let questions = app::ssr::store::questions::get_set(pool, set).await?;
            if questions.project_id != p.summary.id {
                anyhow::bail!("question set {set} belongs to another project");
            }
            let mut answer_sets = Vec::new();
            for m in &methods {
                answer_sets.push(resolve_set(pool, p.summary.id, set, m).await?);
            }
            let mut chosen = Vec::new();
            for pair in &pairs {
                let (a, b) = pair.split_once(':').ok_or_else(|| anyhow::anyhow!("--pairs {pair}: expected A:B"))?;
                chosen.push((
                    resolve_set(pool, p.summary.id, set, a).await?,
                    resolve_set(pool, p.summary.id, set, b).await?,
                ));
            }
            let req = app::ssr::evaluations::EvalRequest {
                question_set_id: set,
                answer_sets,
                pairs: chosen,
                settings: Settings::from_request(&judge)?,
                name,
                no_cache,
            };
            if plan {
                let price = app::ssr::evaluations::plan(pool, llm, &req, &[]).await?;
                let mut value = serde_json::to_value(&price)?;
                let mut text = plan_text(&price);
                if let Some(pilot) = pilot {
                    let e = app::ssr::evaluations::get(pool, pilot).await?;
                    if e.view.project_id != p.summary.id {
                        anyhow::bail!("evaluation {pilot} belongs to another project");
                    }
                    let run = (questions.questions.max(0) as usize, req.settings.trials as usize);
                    let decided = app::ssr::evaluations::decide(pool, pilot, run, half_width, difference).await?;
                    value["decide"] = serde_json::to_value(&decided)?;
                    text.push('\n');
                    text.push_str(&decide_text(&decided));
                }
                out.print(value, || text.clone());
                return Ok(ExitCode::SUCCESS);
            }
            let (job, id) = app::ssr::evaluations::create(pool, llm, &req).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
            summary(pool, out, id, &after).await?;
            Ok(code)
        }
        EvalCommand::Sanity { project, set, method, judge } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let first = resolve_set(pool, p.summary.id, set, &method).await?;
            let (job, id) =
                app::ssr::evaluations::create_sanity(pool, llm, first, Settings::from_request(&judge)?).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
            summary(pool, out, id, &after).await?;
            Ok(code)
        }
        EvalCommand::List { project } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let list = app::ssr::evaluations::list(pool, p.summary.id).await?;
            out.print(json!(list), || {
                let mut lines =
                    vec![format!("{:>5}  {:<40} {:<9} {:>11}  {}", "id", "evaluation", "status", "progress", "judge")];
                for e in &list {
                    lines.push(format!(
                        "{:>5}  {:<40} {:<9} {:>11}  {}",
                        e.id,
                        e.name.chars().take(40).collect::<String>(),
                        e.status.map_or("unknown".to_string(), |s| s.to_string()),
                        format!("{}/{}", e.done, e.total),
                        e.judge
                    ));
                }
                lines.join("\n")
            });
            Ok(ExitCode::SUCCESS)
        }
        EvalCommand::Show { id } => {
            let e = app::ssr::evaluations::get(pool, id).await?;
            let job = e.view.job_id.ok_or_else(|| anyhow::anyhow!("evaluation {id} has no job"))?;
            let job = app::ssr::store::jobs::get_job(pool, job).await?;
            summary(pool, out, id, &job).await?;
            Ok(ExitCode::SUCCESS)
        }
        EvalCommand::Report { id, out: dir } => {
            let written = write_report(pool, id, &dir).await?;
            out.print(json!({"evaluation_id": id, "dir": dir, "files": written}), || {
                format!("evaluation {id}: {} files written to {}", written.len(), dir.display())
            });
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes evaluation `id`'s report into `dir`: every plot as SVG and PNG,
/// every table as CSV, report.json. Returns the files' names.
pub(super) async fn write_report(pool: &Db, id: i64, dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let snapshot = app::ssr::evaluations::snapshot(pool, id).await?;
    let mut written = Vec::new();
    let mut write = |name: String, bytes: &[u8]| -> anyhow::Result<()> {
        let path = dir.join(&name);
        std::fs::write(&path, bytes).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        written.push(name);
        Ok(())
    };
    for (name, svg) in app::ssr::evaluations::plots(&snapshot.stored, &snapshot.report) {
        write(format!("{name}.png"), &crate::png::svg_to_png(&svg, 2.0).map_err(anyhow::Error::msg)?)?;
        write(format!("{name}.svg"), svg.as_bytes())?;
    }
    for table in app::ssr::evaluations::TABLES {
        write(format!("{table}.csv"), app::ssr::evaluations::table_csv(&snapshot, table)?.as_bytes())?;
    }
    let report = app::ssr::evaluations::report_json(&snapshot);
    write("report.json".into(), serde_json::to_string_pretty(&report)?.as_bytes())?;
    Ok(written)
}

/// A run's plan as lines: the totals, who answers, then each stage.
pub(super) fn plan_text(p: &app::model::RunPlan) -> String {
    let int = |n: u64| app::format::int(n as i64);
    let range = |a: u64, b: u64| if a == b { int(a) } else { format!("{}–{}", int(a), int(b)) };
    let (calls, max) = p.calls();
    let cost = |c: Option<f64>| match (p.paid, c) {
        (false, _) => "free".to_string(),
        (true, Some(c)) => app::format::usd(c),
        (true, None) => "price unknown".to_string(),
    };
    let mut lines = vec![
        format!("{} calls · {} tokens · {} (nothing sent)", range(calls, max), int(p.tokens()), cost(p.cost_usd())),
        p.paid_by.clone(),
    ];
    // How long it would take on this endpoint.
    lines.push(match &p.time {
        Some(t) => {
            let (headline, how, _) = t.describe((calls, max));
            format!("{headline} {how}")
        }
        None => "no time estimate yet: no call to this model has been measured".to_string(),
    });
    for s in &p.stages {
        lines.push(format!(
            "  {}: {} calls, {}{} prompt + ≈ {} reply tokens, {} — {}",
            s.label,
            range(s.calls, s.calls_max),
            if s.prompt_exact { "" } else { "≈ " },
            int(s.prompt_tokens),
            int(s.completion_tokens),
            cost(s.cost_usd),
            s.how
        ));
    }
    lines.extend(p.cache_note());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use engine::experiment::Manifest;
    use types::{JudgeKind, JudgePrompt, LegacyAspects, Protocol};

    use super::*;
    use crate::cli::{Cli, Command};

    /// One request that differs from the defaults wherever it can.
    fn asked() -> EvaluationRequest {
        EvaluationRequest {
            protocol: Protocol::Unbiased,
            trials: 7,
            repeats: 3,
            tolerance: 15,
            adjustments: 2,
            align: false,
            exchange: false,
            judge: JudgeKind::Simulated,
            position_bias: -0.5,
            length_bias: 0.25,
            noise: 1.5,
            seed: 4,
            judge_prompt: JudgePrompt::ContentOnly,
            judge_temperature: Some(0.5),
            legacy_aspects: LegacyAspects::Graphrag,
            sequential: true,
            jury: vec!["offline".into(), "simulated:position=0.6,length=0,noise=1".into()],
        }
    }

    fn from_command_line(options: &[&str]) -> EvaluationRequest {
        let args = ["assay", "eval", "run", "p", "--set", "1", "--methods", "a,b"].iter().chain(options);
        match Cli::try_parse_from(args).unwrap().command {
            Command::Eval(EvalCommand::Run { judge, .. }) => judge,
            other => panic!("{other:?}"),
        }
    }

    fn from_form(body: &str) -> app::api::evaluations::StartEvaluation {
        // As the server function reads a posted form (non-strict: brackets
        // may arrive percent-encoded).
        serde_qs::Config::new(5, false).deserialize_str(body).unwrap()
    }

    fn from_manifest(table: &str) -> EvaluationRequest {
        let text = format!(
            "name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\n\
             [[methods]]\nname = \"lightrag\"\n[evaluation]\n{table}"
        );
        Manifest::parse_uploaded(&text).unwrap().evaluation.unwrap().request
    }

    /// The one request of the Evaluations form, `assay eval run` and a
    /// manifest's [evaluation]: the same values read the same from each,
    /// and what each leaves out is the same default.
    #[test]
    fn an_evaluation_request_reads_the_same_from_the_form_the_command_line_and_a_manifest() {
        let want = asked();
        let cli = from_command_line(&[
            "--protocol",
            "unbiased",
            "--trials",
            "7",
            "--repeats",
            "3",
            "--tolerance",
            "15",
            "--adjustments",
            "2",
            "--no-align",
            "--no-exchange",
            "--judge",
            "simulated",
            "--position-bias",
            "-0.5",
            "--length-bias",
            "0.25",
            "--noise",
            "1.5",
            "--seed",
            "4",
            "--judge-prompt",
            "content-only",
            "--judge-temperature",
            "0.5",
            "--legacy-aspects",
            "graphrag",
            "--sequential",
            "--jury",
            "offline;simulated:position=0.6,length=0,noise=1",
        ]);
        assert_eq!(cli, want);

        // The form as the browser posts it: every field text, the boxes on
        // by default as hidden fields, the jury's textarea one text.
        let posted = from_form(
            "question_set_id=3&answer_sets=1%2C2&pairs=&name=&req%5Bprotocol%5D=unbiased&req[trials]=7\
             &req[repeats]=3&req[tolerance]=15&req[adjustments]=2&req[align]=false&req[exchange]=false\
             &req[sequential]=true&req[judge]=simulated&req[judge_prompt]=content-only\
             &req[legacy_aspects]=graphrag&req[judge_temperature]=0.5&req[position_bias]=-0.5\
             &req[length_bias]=0.25&req[noise]=1.5&req[seed]=4\
             &req[jury]=offline%3B%20simulated%3Aposition%3D0.6%2Clength%3D0%2Cnoise%3D1%0A",
        );
        assert_eq!((posted.question_set_id, posted.answer_sets.as_str()), (3, "1,2"));
        assert_eq!(posted.req, want);
        // And as the page sends it once hydrated (read from the form, then
        // encoded again by the server function's client).
        let sent = serde_qs::to_string(&posted).unwrap();
        assert_eq!(from_form(&sent).req, want, "{sent}");

        // The manifest: the table written by hand, and as `Manifest::to_toml`
        // (the wizard's export) writes it.
        let table = "protocol = \"unbiased\"\ntrials = 7\nrepeats = 3\ntolerance = 15\nadjustments = 2\n\
                     align = false\nexchange = false\njudge = \"simulated\"\nposition_bias = -0.5\n\
                     length_bias = 0.25\nnoise = 1.5\nseed = 4\njudge_prompt = \"content-only\"\n\
                     judge_temperature = 0.5\nlegacy_aspects = \"graphrag\"\nsequential = true\n\
                     jury = [\"offline\", \"simulated:position=0.6,length=0,noise=1\"]\n";
        assert_eq!(from_manifest(table), want);
        let mut m = Manifest::parse_uploaded(&format!(
            "name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\n\
             [[methods]]\nname = \"lightrag\"\n[evaluation]\n{table}"
        ))
        .unwrap();
        m.evaluation.as_mut().unwrap().sanity = false;
        let back = Manifest::parse_uploaded(&m.to_toml()).unwrap().evaluation.unwrap();
        assert_eq!((back.request, back.sanity), (want.clone(), false));

        // All three give the same settings, and the settings their request
        // back (a juror's spec written out whole: its seed, its place).
        let settings = Settings::from_request(&want).unwrap();
        assert_eq!(EvaluationRequest { jury: want.jury.clone(), ..settings.request() }, want);
        assert_eq!(settings.request().jury[1], "simulated:position=0.6,length=0,noise=1,seed=2");
        assert_eq!(Settings::from_request(&settings.request()).unwrap(), settings);

        // Left out: the same defaults everywhere (clap's, serde's, the form's).
        let d = EvaluationRequest::default();
        assert_eq!(from_command_line(&[]), d);
        assert_eq!(from_manifest(""), d);
        assert_eq!(from_form("question_set_id=3&answer_sets=1,2&pairs=&name=&req[trials]=25").req, d);
    }

    /// A value out of range is refused by the request, naming the field as
    /// each entry point names it.
    #[test]
    fn a_bad_evaluation_request_names_its_field() {
        let e = Settings::from_request(&from_command_line(&["--trials", "0"])).unwrap_err();
        assert_eq!(e.0, "trials: must be a whole number from 1 to 1000, not 0");
        let e = Manifest::parse_uploaded(
            "name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\n\
             [[methods]]\nname = \"lightrag\"\n[evaluation]\nrepeats = 21\n",
        )
        .unwrap_err();
        assert_eq!(e.0, "evaluation.repeats: must be a whole number from 1 to 20, not 21");
        assert!(Cli::try_parse_from(["assay", "eval", "run", "p", "--set", "1", "--methods", "a,b", "--judge", "gpt"])
            .unwrap_err()
            .to_string()
            .contains("judge must be llm, offline or simulated, not \"gpt\""));
    }
}

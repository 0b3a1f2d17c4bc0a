//! `assay run MANIFEST`: an experiment manifest (`examples/experiment.toml`)
//! run stage by stage as jobs (a progress bar each), reusing every stage
//! already computed with identical settings, then its report written to
//! `--out DIR`: per evaluation and sanity check its plots (SVG, PNG),
//! tables (CSV) and report.json, per metrics run its files, and
//! experiment.json with every stage's calls.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use app::ssr::store::Db;
use clap::Args;
use engine::experiment::Manifest;
use engine::llm::settings::LlmSettings;
use serde_json::json;

use super::Output;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The experiment manifest (TOML).
    pub manifest: PathBuf,
    /// Write the report into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print what the run would send — calls, tokens and price per stage,
    /// the corpus chunked as the run would — and stop: nothing runs and
    /// nothing is sent.
    #[arg(long)]
    pub plan: bool,
    #[command(flatten)]
    pub pilot: super::eval::PilotArgs,
}

/// Reads and checks the manifest (before the database is opened: a bad
/// manifest leaves nothing behind).
pub fn load(args: &RunArgs) -> anyhow::Result<Manifest> {
    Ok(Manifest::load(&args.manifest)?)
}

pub async fn run(
    pool: &Db,
    out: Output,
    base_llm: &LlmSettings,
    m: Manifest,
    args: RunArgs,
) -> anyhow::Result<ExitCode> {
    let llm = app::ssr::experiments::run::llm_settings(&m, base_llm, crate::cli::process_env);
    let source = app::ssr::experiments::run::llm_source(&m, &llm, crate::cli::process_env);
    if let Some(said) = &source {
        if !out.json {
            eprintln!("LLM: {} — {said}", llm.describe());
        }
    }
    let base = args.manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    if args.plan {
        return plan(pool, out, base_llm, &m, &args, &base).await;
    }
    let started = std::time::Instant::now();
    let outcome = app::ssr::experiments::run::run(pool, &llm, &m, &base, |job, label, retry| {
        let llm = llm.clone();
        async move {
            if !out.json {
                eprintln!("\n== {label}");
            }
            match super::execute_job(pool, out, &llm, job, retry).await {
                Ok((_, after)) => Ok(after),
                // A job that ended failed is the run's to report (the stage,
                // its reasons, the next step); one that never ran is an error.
                Err(e) => match app::ssr::store::jobs::get_job(pool, job).await {
                    Ok(after) if after.status == app::model::JobStatus::Failed => Ok(after),
                    _ => Err(app::error::AppError::Invalid(format!("{label}: {e:#}"))),
                },
            }
        }
    })
    .await?;
    let mut files = Vec::new();
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        for (kind, ids) in [("evaluation", &outcome.evaluations), ("sanity", &outcome.sanity_checks)] {
            for id in ids {
                let sub = format!("{kind}-{id}");
                for f in super::eval::write_report(pool, *id, &dir.join(&sub)).await? {
                    files.push(format!("{sub}/{f}"));
                }
            }
        }
        for run in &outcome.metrics_runs {
            let sub = format!("metrics-{run}");
            for f in super::metrics::write_files(&app::ssr::metrics::report(pool, *run).await?, &dir.join(&sub))? {
                files.push(format!("{sub}/{f}"));
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let summary = json!({
        "experiment": m.name,
        "project_id": outcome.project_id,
        "llm": llm.describe(),
        "llm_source": source,
        "stages": outcome.stages,
        "question_sets": outcome.question_sets,
        "answer_sets": outcome.answer_sets,
        "evaluations": outcome.evaluations,
        "sanity_checks": outcome.sanity_checks,
        "metrics_runs": outcome.metrics_runs,
        "new_calls": outcome.new_calls,
        "cached_calls": outcome.cached_calls,
        "seconds": seconds,
        "files": files,
        "stopped": outcome.stopped,
    });
    if let Some(dir) = &args.out {
        let path = dir.join("experiment.json");
        std::fs::write(&path, serde_json::to_string_pretty(&summary)?)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    out.print(summary, || {
        let mut lines =
            vec![format!("experiment \"{}\" (project {}) with {}", m.name, outcome.project_id, llm.describe())];
        lines.push(format!(
            "  {:<44} {:>7} {:>6} {:>9} {:>7} {:>8}",
            "stage", "", "job", "new calls", "cached", "seconds"
        ));
        for s in &outcome.stages {
            lines.push(format!(
                "  {:<44} {:>7} {:>6} {:>9} {:>7} {:>8.1}",
                s.label,
                if s.reused { "reused" } else { "ran" },
                s.job_id.map_or("—".into(), |j| j.to_string()),
                s.new_calls,
                s.cached_calls,
                s.seconds
            ));
        }
        lines.push(format!(
            "  total: {} new calls, {} cached, {seconds:.1} s{}",
            outcome.new_calls,
            outcome.cached_calls,
            args.out.as_ref().map_or(String::new(), |d| format!("; report in {}", d.display()))
        ));
        if let Some(why) = &outcome.stopped {
            lines.push(format!("stopped: {why}"));
        }
        lines.join("\n")
    });
    if let Some(why) = &outcome.stopped {
        if out.json {
            eprintln!("stopped: {why}");
        }
        // 3, as a job that did not finish.
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// `assay run --plan`: the estimate the wizard shows, printed.
async fn plan(
    pool: &Db,
    out: Output,
    base_llm: &LlmSettings,
    m: &Manifest,
    args: &RunArgs,
    base: &Path,
) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.manifest).unwrap_or_default();
    let d = app::ssr::experiments::wizard::estimate(pool, base_llm, crate::cli::process_env, &text, m, base).await;
    if let Some(e) = &d.error {
        anyhow::bail!("{e}");
    }
    let int = |n: u64| app::format::int(n as i64);
    let price = |c: f64| {
        if d.offline {
            "free (offline)".to_string()
        } else if d.priced {
            app::format::usd(c)
        } else {
            "unpriced".into()
        }
    };
    // From a pilot: what each evaluated set's run can decide.
    let decided = match args.pilot.pilot {
        Some(pilot) => {
            app::ssr::experiments::wizard::decide(pool, m, pilot, args.pilot.half_width, args.pilot.difference).await?
        }
        None => Vec::new(),
    };
    let mut value = serde_json::to_value(&d)?;
    if !decided.is_empty() {
        value["decide"] =
            json!(decided.iter().map(|(i, d)| json!({"questions_set": i, "plan": d})).collect::<Vec<_>>());
    }
    out.print(value, || {
        let mut lines = vec![
            format!("{} calls · {} tokens · {} (nothing sent)", int(d.calls), int(d.tokens), price(d.cost_usd)),
            format!("answered by {}", d.llm),
            match &d.time {
                Some(t) => {
                    let (headline, how, _) = t.describe((d.calls, d.calls));
                    format!("{headline} {how}")
                }
                None => "no time estimate yet: no call to this model has been measured".to_string(),
            },
        ];
        for s in &d.stages {
            lines.push(format!(
                "  {}: {} calls, {} prompt + {} reply tokens, {} — {}",
                s.label,
                int(s.calls),
                int(s.prompt_tokens),
                int(s.completion_tokens),
                price(s.cost_usd),
                s.how
            ));
        }
        for (i, d) in &decided {
            lines.push(format!("evaluation of questions {i}: {}", super::eval::decide_text(d)));
        }
        lines.join("\n")
    });
    Ok(ExitCode::SUCCESS)
}

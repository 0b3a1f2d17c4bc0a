//! `assay metrics …`: reference-based metrics of answer sets (HieraRAG):
//! MAP, nDCG@k, Recall@k, cosine similarity, ROUGE-1 and BLEU, overall and
//! per category, the granularity analysis and the LV × QC table. A run is
//! a job (progress on stderr; Ctrl-C cancels, `assay job resume` goes on)
//! stored with its report; `--out DIR` writes its files.

use std::path::PathBuf;
use std::process::ExitCode;

use engine::llm::settings::LlmSettings;

use app::ssr::store::Db;
use clap::Subcommand;

use super::Output;

#[derive(Subcommand, Debug)]
pub enum MetricsCommand {
    /// Score answer sets against the question set's reference answers.
    Run {
        project: String,
        /// The question set (with reference answers).
        #[arg(long)]
        set: i64,
        /// Answer sets over it, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        answers: Vec<i64>,
        /// How it scores: the same request as the Metrics page and a
        /// manifest's [metrics] table.
        #[command(flatten)]
        req: types::requests::MetricsRequest,
        /// Also write every question's scores (CSV), the report (JSON,
        /// HTML) and the charts (SVG, PNG) into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// A project's metrics runs.
    List { project: String },
    /// Writes a finished run's files into a folder.
    Report {
        id: i64,
        #[arg(long)]
        out: PathBuf,
    },
}

/// Writes a report's files into `dir`; their names.
pub(super) fn write_files(report: &app::ssr::metrics::Report, dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("questions.csv".into(), app::ssr::metrics::questions_csv(report).into_bytes()),
        ("report.json".into(), serde_json::to_vec_pretty(&app::ssr::metrics::report_json(report))?),
        (
            "report.html".into(),
            crate::report_html::metrics_html(&app::ssr::metrics::view(report), &app::ssr::metrics::report_json(report))
                .into_bytes(),
        ),
    ];
    for (name, svg) in app::ssr::metrics::charts(report) {
        files.push((format!("{name}.png"), crate::png::svg_to_png(&svg, 2.0).map_err(anyhow::Error::msg)?));
        files.push((format!("{name}.svg"), svg.into_bytes()));
    }
    let mut written = Vec::new();
    for (name, bytes) in files {
        let path = dir.join(&name);
        std::fs::write(&path, bytes).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        written.push(name);
    }
    Ok(written)
}

fn opt(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.3}"))
}

pub async fn run(pool: &Db, out: Output, llm: &LlmSettings, cmd: MetricsCommand) -> anyhow::Result<ExitCode> {
    let (project, set, answers, req, dir) = match cmd {
        MetricsCommand::Run { project, set, answers, req, out } => (project, set, answers, req, out),
        MetricsCommand::List { project } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let mut runs = Vec::new();
            for row in app::ssr::store::metrics::list(pool, p.summary.id).await? {
                runs.push(app::ssr::metrics::run_view(pool, &row).await?);
            }
            out.print(serde_json::to_value(&runs)?, || {
                runs.iter()
                    .map(|r| {
                        format!(
                            "run {} · question set {} ({}) · answer sets {} · k {} · {} bins · {} · {}",
                            r.id,
                            r.question_set_id,
                            r.question_set,
                            r.answer_sets.iter().map(|(id, _)| id.to_string()).collect::<Vec<_>>().join(","),
                            r.k,
                            r.bins,
                            if r.finished {
                                "done".to_string()
                            } else {
                                r.job.as_ref().map_or("no job".into(), |j| j.status.to_string())
                            },
                            r.created_at
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            return Ok(ExitCode::SUCCESS);
        }
        MetricsCommand::Report { id, out: dir } => {
            let written = write_files(&app::ssr::metrics::report(pool, id).await?, &dir)?;
            out.print(serde_json::json!({ "dir": dir, "files": written }), || {
                format!("{} files in {}: {}", written.len(), dir.display(), written.join(", "))
            });
            return Ok(ExitCode::SUCCESS);
        }
    };
    let p = app::ssr::store::projects::find_project(pool, &project).await?;
    if app::ssr::store::questions::get_set(pool, set).await?.project_id != p.summary.id {
        anyhow::bail!("question set {set} belongs to another project");
    }
    let (run_id, job) = app::ssr::metrics::create(pool, set, &answers, &req).await?;
    let k = req.k;
    // A failed job is reported below with its error and how to go on.
    let _ = super::execute_job(pool, out, llm, job.id, false).await;
    let after = app::ssr::store::jobs::get_job(pool, job.id).await?;
    if after.status != app::model::JobStatus::Done {
        anyhow::bail!(
            "metrics run {run_id}: job {} {} at {}/{}{} — `assay job resume {} [--retry-failed]` goes on",
            job.id,
            after.status,
            after.done,
            after.total,
            after.error.as_deref().map_or(String::new(), |e| format!(" ({e})")),
            job.id
        );
    }
    let report = app::ssr::metrics::report(pool, run_id).await?;
    if let Some(dir) = &dir {
        let written = write_files(&report, dir)?;
        if !out.json {
            eprintln!("{} files in {}", written.len(), dir.display());
        }
    }
    out.print(serde_json::to_value(&report)?, || {
        let mut lines = vec![format!(
            "metrics run {run_id} · question set {set} · embeddings: {} · k = {} · {} quantile bins · relevance at the {} unit",
            report.embedding_model,
            req.k,
            req.bins,
            report.relevance_unit
        ), report.definitions.describe().to_string()];
        for s in &report.sets {
            let o = &s.overall;
            lines.push(format!(
                "\nanswer set {} ({}, {}): {} questions · MAP {} · nDCG@{k} {} · Recall@{k} {} · CS {:.3} · ROUGE-1 {:.3} · BLEU {:.2} (corpus {:.2})",
                s.answer_set_id, s.name, s.method, o.n, opt(o.map), opt(o.ndcg), opt(o.recall), o.cs, o.rouge1, o.bleu, s.corpus_bleu
            ));
            lines.push(format!("  {:<44} {:>4} {:>6} {:>6} {:>7} {:>6}", "category", "n", "MAP", "CS", "ROUGE-1", "BLEU"));
            for c in &s.per_category {
                lines.push(format!(
                    "  {:<44} {:>4} {:>6} {:>6.3} {:>7.3} {:>6.2}",
                    c.group, c.n, opt(c.map), c.cs, c.rouge1, c.bleu
                ));
            }
            if !s.coarse.is_empty() {
                lines.push(format!("  {:<6} {:>10} {:>9} {:>6} {:>6} {:>6}  (Table 1: coarse level)", "dim", "categories", "questions", "MAP", "CS", "Range"));
                for c in &s.coarse {
                    lines.push(format!(
                        "  {:<6} {:>10} {:>9} {:>6} {:>6.3} {:>6.3}",
                        c.dimension, c.categories, c.questions, opt(c.map), c.cs, c.range
                    ));
                }
            }
            let extremes = app::model::fine_extremes(&s.per_category);
            if !extremes.is_empty() {
                lines.push("  fine categories by CS, top 2 and bottom 2 (Table 3):".into());
                for (d, rows) in &extremes {
                    for c in rows {
                        lines.push(format!("    {d:<4} {:<44} {:>4} {:>6} {:>6.3}", c.group, c.n, opt(c.map), c.cs));
                    }
                }
            }
            for d in &s.granularity {
                let coherence: Vec<String> = d
                    .optimal
                    .map(|o| {
                        engine::metrics::granularity::splits_into(d, o)
                            .map(|x| format!("{} ρ {:.2} ({})", x.parent, x.rho, x.verdict()))
                            .collect()
                    })
                    .unwrap_or_default();
                lines.push(format!(
                    "  {} granularity (optimal: {} categories{})",
                    d.dimension,
                    d.optimal.unwrap_or(0),
                    if coherence.is_empty() { String::new() } else { format!("; its splits: {}", coherence.join(", ")) }
                ));
                for l in &d.levels {
                    let ci = |v: Option<(f64, f64)>| v.map_or(String::new(), |(a, b)| format!(" [{a:.4}, {b:.4}]"));
                    lines.push(format!(
                        "    {} categories: discriminative power {:.4}{}{} (noise floor {}) · NMI {:.4}{} · {} questions{}",
                        l.categories,
                        l.discriminative_power,
                        ci(l.power_ci),
                        l.change.map_or(String::new(), |c| format!(" ({})", app::format::signed(c, 4))),
                        l.power_floor.map_or("—".into(), |f| format!("{f:.4}")),
                        l.nmi,
                        ci(l.nmi_ci),
                        l.questions,
                        l.warning().map_or(String::new(), |w| format!(" — {w}"))
                    ));
                }
                for sp in &d.splits {
                    lines.push(format!("    split {}: ρ {:.2} ({})", sp.parent, sp.rho, sp.verdict()));
                }
            }
            if let Some(f) = &s.factorial {
                lines.push(format!("  {:<12} {:<12} {:>4} {:>6} {:>6} {:>7}", "LV", "QC", "n", "MAP", "CS", "gap"));
                for g in f.cells.iter().chain(&f.lv_pooled).chain(&f.qc_pooled) {
                    lines.push(format!(
                        "  {:<12} {:<12} {:>4} {:>6} {:>6.3} {:>7}",
                        g.lv.as_deref().unwrap_or("(pooled)"),
                        g.qc.as_deref().unwrap_or("(pooled)"),
                        g.n,
                        opt(g.map),
                        g.cs,
                        g.gap.map_or("—".into(), |x| app::format::signed(x, 3))
                    ));
                }
                lines.push(format!("  main effects on CS: LV Δ {} · QC Δ {}", opt(f.lv_effect), opt(f.qc_effect)));
            }
        }
        lines.join("\n")
    });
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use engine::experiment::Manifest;
    use types::requests::MetricsRequest;
    use types::{Definitions, RelevanceUnit};

    use super::*;
    use crate::cli::{Cli, Command};

    fn from_command_line(options: &[&str]) -> MetricsRequest {
        let args = ["assay", "metrics", "run", "p", "--set", "1", "--answers", "2,3"].iter().chain(options);
        match Cli::try_parse_from(args).unwrap().command {
            Command::Metrics(MetricsCommand::Run { req, .. }) => req,
            other => panic!("{other:?}"),
        }
    }

    fn from_manifest(table: &str) -> Result<MetricsRequest, String> {
        let text = format!(
            "name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"hierarchical\"\n[[methods]]\nname = \"bm25\"\n[metrics]\n{table}"
        );
        Manifest::parse_uploaded(&text).map(|m| m.metrics.unwrap()).map_err(|e| e.0)
    }

    /// The Metrics page (which sends the request as its server function's
    /// `req`), `assay metrics run` and a manifest's [metrics] read one
    /// request the same, and leave out the same defaults.
    #[test]
    fn a_metrics_request_reads_the_same_from_the_page_the_command_line_and_a_manifest() {
        let want =
            MetricsRequest { k: 5, bins: 3, unit: RelevanceUnit::Passage, definitions: Definitions::AsPublished };
        let cli = from_command_line(&["--k", "5", "--bins", "3", "--unit", "passage", "--definitions", "as-published"]);
        assert_eq!(cli, want);
        let page = app::api::metrics::StartMetrics { set_id: 1, answer_sets: "2,3".into(), req: want.clone() };
        let sent = serde_qs::to_string(&page).unwrap();
        let read: app::api::metrics::StartMetrics = serde_qs::Config::new(5, false).deserialize_str(&sent).unwrap();
        assert_eq!(read.req, want, "{sent}");
        let table = "k = 5\nbins = 3\nunit = \"passage\"\ndefinitions = \"as-published\"\n";
        assert_eq!(from_manifest(table).unwrap(), want);

        let d = MetricsRequest::default();
        assert_eq!(from_command_line(&[]), d);
        assert_eq!(from_manifest("").unwrap(), d);

        assert_eq!(from_manifest("bins = 1\n").unwrap_err(), "metrics.bins: must be from 2 to 100, not 1");
        assert_eq!(from_manifest("units = \"chunk\"\n").unwrap_err(), "metrics: unknown key \"units\"");
        let e = from_manifest("unit = \"page\"\n").unwrap_err();
        assert!(e.contains("the relevance unit must be document, passage or chunk, not \"page\""), "{e}");
    }
}

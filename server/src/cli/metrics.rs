//! `assay metrics …`: reference-based metrics of answer sets (seed 004):
//! MAP, nDCG@k, Recall@k, cosine similarity, ROUGE-1 and BLEU, overall and
//! per category, the granularity analysis and the LV × QC table.

use std::process::ExitCode;

use clap::Subcommand;
use sqlx::SqlitePool;

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
        /// The rank cut-off of nDCG and Recall.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Quantile bins of the cosine similarity for the mutual information.
        #[arg(long, default_value_t = 4)]
        bins: usize,
    },
}

fn opt(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.3}"))
}

pub async fn run(pool: &SqlitePool, out: Output, cmd: MetricsCommand) -> anyhow::Result<ExitCode> {
    let MetricsCommand::Run { project, set, answers, k, bins } = cmd;
    let p = app::store::find_project(pool, &project).await?;
    if app::store::questions::get_set(pool, set).await?.project_id != p.summary.id {
        anyhow::bail!("question set {set} belongs to another project");
    }
    let report = app::metrics::run(pool, set, &answers, k, bins).await?;
    out.print(serde_json::to_value(&report)?, || {
        let mut lines = vec![format!(
            "question set {set} · embeddings: {} · k = {k} · {bins} quantile bins",
            report.embedding_model
        )];
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
            for d in &s.granularity {
                lines.push(format!("  {} granularity (optimal: {} categories)", d.dimension, d.optimal.unwrap_or(0)));
                for l in &d.levels {
                    lines.push(format!(
                        "    {} categories: discriminative power {:.4}{} · NMI {:.4} · {} questions",
                        l.categories,
                        l.discriminative_power,
                        l.change.map_or(String::new(), |c| format!(" ({c:+.4})")),
                        l.nmi,
                        l.questions
                    ));
                }
                for sp in &d.splits {
                    lines.push(format!("    split {}: ρ {:.2} ({})", sp.parent, sp.rho, sp.verdict()));
                }
            }
            for c in &s.factorial {
                lines.push(format!("  {} × {}: n {} · MAP {} · CS {:.3}", c.lv, c.qc, c.means.n, opt(c.means.map), c.means.cs));
            }
        }
        lines.join("\n")
    });
    Ok(ExitCode::SUCCESS)
}

//! `assay db`: move everything between an SQLite file and PostgreSQL.

use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use serde_json::json;

use super::Output;

#[derive(Subcommand, Debug)]
pub(super) enum DbCommand {
    /// Copy every project, corpus, graph, question, answer, judgment, call
    /// (and the LLM cache), study, account and share link from one database
    /// into another, new and empty one, and check the counts: an SQLite
    /// file into PostgreSQL when a lab moves to a team server, or back.
    Copy {
        /// The source: an SQLite file or a postgres:// URL.
        #[arg(long, value_name = "PATH|URL")]
        from: String,
        /// The target (created and migrated if needed; must hold no rows).
        #[arg(long, value_name = "PATH|URL")]
        to: String,
        /// Remove U+0000 (NUL) characters from the rows that hold them (an
        /// SQLite database written before they were refused may), listing
        /// those rows; without it such a copy is refused and names them.
        #[arg(long)]
        strip_nul: bool,
    },
}

pub(super) async fn run(out: Output, cmd: DbCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DbCommand::Copy { from, to, strip_nul } => {
            let (shown_from, shown_to) = (crate::shown_db(&from), crate::shown_db(&to));
            anyhow::ensure!(
                app::ssr::store::is_postgres_url(&from) || std::path::Path::new(&from).is_file(),
                "--from {shown_from}: no such SQLite file"
            );
            let source = app::ssr::store::open_target(&from).await.with_context(|| shown_from.clone())?;
            let target = app::ssr::store::open_target(&to).await.with_context(|| shown_to.clone())?;
            let quiet = out.json;
            let started = std::time::Instant::now();
            let copied = app::ssr::store::copy::copy(&source, &target, strip_nul, &|table, rows| {
                if !quiet {
                    eprintln!("  {table}: {rows} rows");
                }
            })
            .await?;
            let repaired = copied.repaired;
            let copied = copied.tables;
            let total: i64 = copied.iter().map(|(_, n)| n).sum();
            out.print(
                json!({
                    "from": shown_from,
                    "to": shown_to,
                    "rows": total,
                    "tables": copied.iter().map(|(t, n)| json!({"table": t, "rows": n})).collect::<Vec<_>>(),
                    "seconds": started.elapsed().as_secs_f64(),
                    "nul_stripped": repaired,
                }),
                || {
                    let mut line = format!(
                        "copied {total} rows in {} tables from {shown_from} to {shown_to} in {:.1} s; every table's count checked",
                        copied.len(),
                        started.elapsed().as_secs_f64()
                    );
                    if !repaired.is_empty() {
                        line.push_str(&format!(
                            "\nU+0000 removed from {} rows: {}",
                            repaired.len(),
                            app::ssr::store::copy::shown_rows(&repaired)
                        ));
                    }
                    line
                },
            );
            source.close().await;
            target.close().await;
            Ok(ExitCode::SUCCESS)
        }
    }
}

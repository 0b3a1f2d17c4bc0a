//! `assay corpus`: add documents to a project's corpus and inspect it.

use anyhow::bail;
use app::model::{Rejection, UploadReport};
use app::ssr::store::Db;
use clap::Subcommand;
use engine::llm::settings::LlmSettings;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

use super::*;

#[derive(Subcommand, Debug)]
pub(super) enum CorpusCommand {
    /// Add files (.txt, .md, .jsonl, .json, .zip) to a project's corpus.
    Add {
        /// Project name or id.
        project: String,
        files: Vec<PathBuf>,
        /// Add Assay's sample corpus.
        #[arg(long)]
        sample: bool,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Documents, tokens and chunks of a project's corpus.
    Stats { project: String },
    /// Summarise every chunk in one sentence (a job; resumable).
    Summarise {
        project: String,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
}

pub(super) async fn corpus(pool: &Db, out: Output, llm: &LlmSettings, cmd: CorpusCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CorpusCommand::Summarise { project, no_cache } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let job = app::ssr::graph::create_summaries(pool, p.summary.id, no_cache).await?;
            return run_job(pool, out, llm, job.id, false).await;
        }
        CorpusCommand::Add { project, files, sample, limits } => {
            if files.is_empty() && !sample {
                bail!("name the files to add, or --sample for the sample corpus");
            }
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let mut loaded: Vec<(String, Vec<u8>)> = Vec::new();
            let mut unreadable = Vec::new();
            for path in &files {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string());
                match std::fs::read(path) {
                    Ok(bytes) => loaded.push((name, bytes)),
                    Err(e) => unreadable
                        .push(Rejection { file: path.display().to_string(), reason: format!("cannot read: {e}") }),
                }
            }
            if sample {
                loaded.extend(engine::sample::sample_files().map(|(n, b)| (n.to_string(), b.to_vec())));
            }
            let mut report = app::ssr::ingest::add_files(pool, p.summary.id, &loaded, &limits.config().import).await?;
            report.skipped.splice(0..0, unreadable);
            print_report(out, &p.summary.name, &report);
            // Every file refused and nothing added: a script should notice.
            if report.added == 0 && !report.skipped.is_empty() {
                return Ok(ExitCode::from(2));
            }
        }
        CorpusCommand::Stats { project } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            out.print(
                json!({"project": p.summary.name, "documents": p.summary.documents, "tokens": p.summary.tokens,
                       "chunks": p.summary.chunks, "chunk_tokens": p.chunking.chunk_tokens, "chunk_overlap": p.chunking.chunk_overlap,
                       "tokenizer": p.chunking.tokenizer}),
                || {
                    format!(
                        "{}: {} documents, {} tokens, {} chunks ({} tokens, {} overlap, {})",
                        p.summary.name,
                        app::format::int(p.summary.documents),
                        app::format::int(p.summary.tokens),
                        app::format::int(p.summary.chunks),
                        p.chunking.chunk_tokens,
                        p.chunking.chunk_overlap,
                        p.chunking.tokenizer
                    )
                },
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn print_report(out: Output, project: &str, r: &UploadReport) {
    out.print(
        json!({"added": r.added, "skipped": r.skipped, "documents": r.documents, "tokens": r.tokens, "chunks": r.chunks}),
        || {
            let mut s = format!("Added {} document{} to {project}", r.added, if r.added == 1 { "" } else { "s" });
            for k in &r.skipped {
                s.push_str(&format!("\n  skipped {}: {}", k.file, k.reason));
            }
            s.push_str(&format!(
                "\nCorpus: {} documents, {} tokens, {} chunks",
                app::format::int(r.documents),
                app::format::int(r.tokens),
                app::format::int(r.chunks)
            ));
            s
        },
    );
}

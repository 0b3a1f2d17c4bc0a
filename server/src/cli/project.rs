//! `assay project`: create, list, rename and delete projects.

use anyhow::bail;
use app::model::ProjectView;
use app::ssr::store::Db;
use clap::Subcommand;
use engine::chunk::{ChunkSettings, Tokenizer};
use serde_json::json;
use std::process::ExitCode;

use super::*;

#[derive(Subcommand, Debug)]
pub(super) enum ProjectCommand {
    /// Create a project.
    Create {
        name: String,
        /// Chunk size in tokens (LightRAG: 1200, HieraRAG: 512).
        #[arg(long, default_value_t = 1200)]
        chunk_tokens: usize,
        /// Overlap between neighbouring chunks, in tokens.
        #[arg(long, default_value_t = 100)]
        chunk_overlap: usize,
        /// cl100k_base or o200k_base.
        #[arg(long, default_value = "cl100k_base")]
        tokenizer: String,
    },
    /// List projects.
    List,
    /// Rename a project (PROJECT is a name or id).
    Rename { project: String, new_name: String },
    /// Delete a project and everything it owns.
    Delete { project: String },
}

pub(super) fn project_json(p: &ProjectView) -> serde_json::Value {
    json!({
        "id": p.summary.id,
        "name": p.summary.name,
        "created_at": p.summary.created_at,
        "documents": p.summary.documents,
        "tokens": p.summary.tokens,
        "chunks": p.summary.chunks,
        "chunk_tokens": p.chunk_tokens,
        "chunk_overlap": p.chunk_overlap,
        "tokenizer": p.tokenizer,
    })
}

pub(super) async fn project(pool: &Db, out: Output, cmd: ProjectCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ProjectCommand::Create { name, chunk_tokens, chunk_overlap, tokenizer } => {
            let Some(tokenizer) = Tokenizer::parse(&tokenizer) else {
                bail!("unknown tokenizer \"{tokenizer}\" (use cl100k_base or o200k_base)");
            };
            let settings = ChunkSettings { chunk_tokens, overlap_tokens: chunk_overlap, tokenizer };
            let p = app::ssr::store::projects::create_project(pool, &name, &settings).await?;
            out.print(project_json(&p), || format!("Created project {} (id {})", p.summary.name, p.summary.id));
        }
        ProjectCommand::List => {
            let list = app::ssr::store::projects::list_projects(pool).await?;
            let value = json!(list
                .iter()
                .map(|p| json!({"id": p.id, "name": p.name, "created_at": p.created_at, "documents": p.documents, "tokens": p.tokens, "chunks": p.chunks}))
                .collect::<Vec<_>>());
            out.print(value, || {
                if list.is_empty() {
                    return "No projects. Create one with: assay project create NAME".into();
                }
                let mut s = format!(
                    "{:>4}  {:<32} {:>9} {:>10} {:>7}  {}",
                    "id", "name", "documents", "tokens", "chunks", "created"
                );
                for p in &list {
                    s.push_str(&format!(
                        "\n{:>4}  {:<32} {:>9} {:>10} {:>7}  {}",
                        p.id,
                        p.name,
                        p.documents,
                        p.tokens,
                        p.chunks,
                        app::format::timestamp(&p.created_at)
                    ));
                }
                s
            });
        }
        ProjectCommand::Rename { project, new_name } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let renamed = app::ssr::store::projects::rename_project(pool, p.summary.id, &new_name).await?;
            out.print(project_json(&renamed), || format!("Renamed {} to {}", p.summary.name, renamed.summary.name));
        }
        ProjectCommand::Delete { project } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            app::ssr::store::projects::delete_project(pool, p.summary.id).await?;
            out.print(json!({"deleted": p.summary.id, "name": p.summary.name}), || {
                format!("Deleted project {} and its {} documents", p.summary.name, p.summary.documents)
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

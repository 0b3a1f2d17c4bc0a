//! `assay project`: create, list, rename and delete projects.

use app::model::ProjectView;
use app::ssr::store::Db;
use clap::Subcommand;

use serde_json::json;
use std::process::ExitCode;

use super::*;

#[derive(Subcommand, Debug)]
pub(super) enum ProjectCommand {
    /// Create a project.
    Create {
        name: String,
        #[command(flatten)]
        chunking: types::requests::ChunkRequest,
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
        "chunk_tokens": p.chunking.chunk_tokens,
        "chunk_overlap": p.chunking.chunk_overlap,
        "tokenizer": p.chunking.tokenizer,
    })
}

pub(super) async fn project(pool: &Db, out: Output, cmd: ProjectCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ProjectCommand::Create { name, chunking } => {
            let p = app::ssr::store::projects::create_project(pool, &name, &chunking).await?;
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

#[cfg(test)]
mod tests {
    use clap::Parser;
    use engine::experiment::Manifest;
    use types::requests::ChunkRequest;
    use types::Tokenizer;

    use super::*;
    use crate::cli::{Cli, Command};

    fn from_command_line(options: &[&str]) -> Result<ChunkRequest, String> {
        let head = ["assay", "project", "create", "p"];
        match Cli::try_parse_from(head.iter().chain(options)).map_err(|e| e.to_string())?.command {
            Command::Project(ProjectCommand::Create { chunking, .. }) => Ok(chunking),
            other => panic!("{other:?}"),
        }
    }

    fn from_manifest(table: &str) -> Result<ChunkRequest, String> {
        let text = format!("name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n{table}");
        let m = Manifest::parse_uploaded(&text).map_err(|e| e.0)?;
        assert_eq!(Manifest::parse_uploaded(&m.to_toml()).map_err(|e| e.0)?, m, "{}", m.to_toml());
        Ok(m.corpus.chunking)
    }

    /// A project's chunking reads the same from the Corpus page's form (as
    /// posted and as the hydrated page encodes it), `assay project create`
    /// and a manifest's [corpus] table; the defaults alike (LightRAG's).
    #[test]
    fn the_chunking_reads_the_same_from_the_form_the_command_line_and_a_manifest() {
        let want = ChunkRequest { chunk_tokens: 512, chunk_overlap: 50, tokenizer: Tokenizer::O200kBase };
        let cli = ["--chunk-tokens", "512", "--chunk-overlap", "50", "--tokenizer", "o200k_base"];
        assert_eq!(from_command_line(&cli).unwrap(), want);
        let body = "project_id=2&req%5Bchunk_tokens%5D=512&req[chunk_overlap]=50&req[tokenizer]=o200k_base";
        let posted: app::api::SetChunking = serde_qs::Config::new(5, false).deserialize_str(body).unwrap();
        assert_eq!((posted.project_id, posted.req), (2, want));
        let again: app::api::SetChunking =
            serde_qs::Config::new(5, false).deserialize_str(&serde_qs::to_string(&posted).unwrap()).unwrap();
        assert_eq!(again.req, want);
        let table = "chunk_tokens = 512\nchunk_overlap = 50\ntokenizer = \"o200k_base\"\n";
        assert_eq!(from_manifest(table).unwrap(), want);

        let defaults = ChunkRequest::default();
        assert_eq!(
            (defaults.chunk_tokens, defaults.chunk_overlap, defaults.tokenizer),
            (1200, 100, Tokenizer::Cl100kBase)
        );
        assert_eq!(from_command_line(&[]).unwrap(), defaults);
        assert_eq!(from_manifest("").unwrap(), defaults);

        let e = from_command_line(&["--tokenizer", "gpt2"]).unwrap_err();
        assert!(e.contains("the tokenizer must be cl100k_base or o200k_base, not \"gpt2\""), "{e}");
        let e = from_manifest("chunk_tokens = \"big\"\n").unwrap_err();
        assert!(e.contains("chunk_tokens: not a whole number in range"), "{e}");
    }
}

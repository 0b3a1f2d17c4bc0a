//! `assay graph`: build and export the knowledge graph.

use app::ssr::store::Db;
use clap::Subcommand;
use engine::llm::settings::LlmSettings;
use serde_json::json;
use std::process::ExitCode;
use types::requests::GraphRequest;

use super::*;

#[derive(Subcommand, Debug)]
pub(super) enum GraphCommand {
    /// Extract entities and relations from every chunk and merge them (a job; resumable).
    Build {
        project: String,
        /// How it extracts: the same request as the Graph page's form and a
        /// manifest's [graph] table.
        #[command(flatten)]
        req: GraphRequest,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// Replace the project's graph with one from a file in the export's JSON layout
    /// (node names are normalised into keys; communities and layout are computed),
    /// or, with --format, import another system's index folder (or a zip of it)
    /// into an empty project: its documents, its chunks and its graph.
    Import {
        project: String,
        /// A JSON file in the export layout; with --format, the index folder or a .zip of it.
        path: std::path::PathBuf,
        /// The system that wrote the folder: lightrag, graphrag (Microsoft GraphRAG's
        /// output folder) or nano-graphrag.
        #[arg(long, value_parser = ["lightrag", "graphrag", "nano-graphrag"])]
        format: Option<String>,
        /// Which of the index's community levels become the project's communities
        /// (default: its coarsest). Microsoft GraphRAG and nano-graphrag only.
        #[arg(long)]
        community_level: Option<i64>,
    },
    /// Print the graph to stdout.
    Export {
        project: String,
        #[arg(long, value_parser = ["json", "graphml"], default_value = "json")]
        format: String,
    },
}

pub(super) async fn graph(pool: &Db, out: Output, llm: &LlmSettings, cmd: GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Build { project, req, no_cache } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let settings = req.checked()?;
            // What the build will send, before it does (the chunk count
            // decides the calls).
            if !out.json {
                let (corpus, chunk_tokens) = app::ssr::price::corpus(pool, p.summary.id).await?;
                let e = engine::experiment::graph_estimate(&corpus, chunk_tokens, settings.gleaning);
                eprintln!("graph build: {} extraction calls — {}", e.calls, e.how);
            }
            let job = app::ssr::graph::create_graph(pool, p.summary.id, &settings, no_cache).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
            let note = app::ssr::store::graph::extraction_note(pool, after.id).await?;
            let graph = app::ssr::store::graph::load(pool, p.summary.id).await?;
            let components = graph.components();
            let calls: i64 = app::ssr::store::jobs::item_call_count(pool, after.id).await?;
            let largest = components.first().map_or(0, Vec::len);
            let communities = app::ssr::store::graph::community_count(pool, p.summary.id).await?;
            let summaries = app::ssr::store::jobs::job_items(pool, after.id)
                .await?
                .iter()
                .filter(|i| !i.key.starts_with("chunk-") && i.status == app::model::ItemStatus::Done)
                .count();
            out.print(
                json!({"job": after.id, "description_summaries": summaries, "status": after.status, "nodes": graph.nodes.len(), "edges": graph.edges.len(),
                       "components": components.len(), "largest_component": largest, "communities": communities,
                       "llm_calls": calls, "tokens": after.tokens, "cost_usd": after.cost_usd, "failed_chunks": after.failed,
                       "extraction_note": note}),
                || {
                    let mut text = format!(
                        "{}\ngraph: {} nodes, {} edges, {} components (largest {largest}), {communities} communities, {summaries} descriptions summarised, {calls} LLM calls",
                        job_line(&after),
                        graph.nodes.len(),
                        graph.edges.len(),
                        components.len()
                    );
                    // What the page says of the model's replies.
                    if let Some(note) = &note {
                        text += &format!("\n{note}");
                    }
                    text
                },
            );
            Ok(code)
        }
        GraphCommand::Import { project, path, format: Some(format), community_level } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let format = engine::graph::foreign::Format::parse(&format).expect("clap checked the value");
            let files = engine::graph::foreign::ForeignFiles::open(&path, format).map_err(|e| anyhow::anyhow!(e.0))?;
            let index =
                engine::graph::foreign::read(&files, format).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let report = app::ssr::store::foreign::import(pool, p.summary.id, index, community_level).await?;
            out.print(serde_json::to_value(&report)?, || import_summary(&report, &p.summary.name));
            Ok(ExitCode::SUCCESS)
        }
        GraphCommand::Import { project, path: file, format: None, community_level } => {
            if community_level.is_some() {
                anyhow::bail!(
                    "--community-level goes with --format: a graph in Assay's export layout gets communities computed"
                );
            }
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let text =
                std::fs::read_to_string(&file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
            let export: engine::graph::export::GraphExport = serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{} is not a graph in the export layout: {e}", file.display()))?;
            let graph = export.to_graph().map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            app::ssr::store::graph::replace(pool, p.summary.id, None, &graph).await?;
            let communities = app::ssr::store::graph::community_count(pool, p.summary.id).await?;
            out.print(
                json!({"nodes": graph.nodes.len(), "edges": graph.edges.len(), "communities": communities}),
                || {
                    format!(
                        "imported {} nodes, {} edges into {} ({communities} communities)",
                        graph.nodes.len(),
                        graph.edges.len(),
                        p.summary.name
                    )
                },
            );
            Ok(ExitCode::SUCCESS)
        }
        GraphCommand::Export { project, format } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let export = app::ssr::store::graph::export(pool, p.summary.id).await?;
            let text = if format == "graphml" {
                export.to_graphml()
            } else {
                format!("{}\n", serde_json::to_string(&export)?)
            };
            write_stdout(&text)
        }
    }
}

/// What an import of another system's index stored, in words: the counts
/// against the folder's, and everything that did not map one to one.
pub(crate) fn import_summary(r: &app::ssr::store::foreign::ImportReport, project: &str) -> String {
    let t = &r.tally;
    let mut lines = vec![
        format!("imported a {} index into {project} ({})", r.program, r.version),
        format!("read: {}", r.files_read.join(", ")),
        format!(
            "documents: {} ({} stored{}), chunks: {} ({} found verbatim in their document)",
            t.documents,
            t.documents - r.duplicate_documents,
            if r.duplicate_documents > 0 {
                format!(", {} with the same text as another", r.duplicate_documents)
            } else {
                String::new()
            },
            t.chunks,
            r.chunks_located
        ),
        format!("entities: {} -> {} nodes; relations: {} -> {} edges", t.entities, t.nodes, t.relations, t.edges),
    ];
    if !t.renamed.is_empty() {
        lines.push(format!(
            "  {} entities kept apart under numbered keys (their names normalise like another's): {}",
            t.renamed.len(),
            t.renamed.join(", ")
        ));
    }
    if t.implied_entities > 0 {
        lines.push(format!("  {} nodes named only by relations (type concept)", t.implied_entities));
    }
    if t.relations_joined > 0 {
        lines.push(format!(
            "  {} relations joined another's edge (the reverse direction or the same pair)",
            t.relations_joined
        ));
    }
    if t.self_loops > 0 {
        lines.push(format!("  {} relations from an entity to itself left out", t.self_loops));
    }
    if !t.unknown_chunks.is_empty() {
        lines.push(format!("  {} chunk ids named by the graph are not in the folder's chunks", t.unknown_chunks.len()));
    }
    lines.push(match t.community_level {
        Some(level) => format!(
            "communities: {} at level {level}, {} ({} nodes outside them grouped by component)",
            r.communities, r.communities_from, t.nodes_without_community
        ),
        None => format!("communities: {}, {}", r.communities, r.communities_from),
    });
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use engine::experiment::Manifest;

    use super::*;
    use crate::cli::{Cli, Command};

    fn from_command_line(options: &[&str]) -> GraphRequest {
        let args = ["assay", "graph", "build", "p"].iter().chain(options);
        match Cli::try_parse_from(args).unwrap().command {
            Command::Graph(GraphCommand::Build { req, .. }) => req,
            other => panic!("{other:?}"),
        }
    }

    fn from_manifest(table: &str) -> Result<GraphRequest, String> {
        let text = format!("name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n[graph]\n{table}");
        Manifest::parse_uploaded(&text).map(|m| m.graph).map_err(|e| e.0)
    }

    /// The Graph page's form, `assay graph build` and a manifest's [graph]
    /// read one request the same, and leave out the same defaults.
    #[test]
    fn a_graph_request_reads_the_same_from_the_form_the_command_line_and_a_manifest() {
        let want = GraphRequest { gleaning: 2, entity_types: vec!["person".into(), "ship".into()], summary_budget: 80 };
        let cli = from_command_line(&["--gleaning", "2", "--entity-types", "Person, ship", "--summary-budget", "80"]);
        assert_eq!(cli.checked().unwrap(), want);
        let posted: app::api::graph::StartGraphBuild = serde_qs::Config::new(5, false)
            .deserialize_str(
                "project_id=4&req[gleaning]=2&req[entity_types]=Person%2C%20ship%2C&req[summary_budget]=80",
            )
            .unwrap();
        assert_eq!((posted.project_id, posted.req.checked().unwrap()), (4, want.clone()));
        let table = "gleaning = 2\nentity_types = [\"Person\", \"ship\"]\nsummary_budget = 80\n";
        assert_eq!(from_manifest(table).unwrap().checked().unwrap(), want);
        assert_eq!(
            from_manifest("entity_types = \"person, ship\"\ngleaning = 2\nsummary_budget = 80\n").unwrap(),
            want
        );

        let d = GraphRequest::default();
        assert_eq!(from_command_line(&[]), d);
        assert_eq!(from_manifest("").unwrap(), d);

        // Out of range: refused by name wherever it comes from.
        assert_eq!(
            from_command_line(&["--gleaning", "6"]).checked().unwrap_err().to_string(),
            "gleaning: is at most 5 turns, not 6"
        );
        assert_eq!(
            from_manifest("summary_budget = 10\n").unwrap_err(),
            "graph.summary_budget: must be at least 50 tokens, not 10"
        );
        assert_eq!(from_manifest("glean = 1\n").unwrap_err(), "graph: unknown key \"glean\"");
    }
}

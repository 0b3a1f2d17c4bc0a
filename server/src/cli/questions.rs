//! `assay questions`: generate (graph, summary, hierarchical), list, score, import and export question sets.

use app::ssr::store::Db;
use clap::Subcommand;
use engine::llm::settings::LlmSettings;
use serde_json::json;
use std::process::ExitCode;
use types::requests::{GraphQuestionsRequest, HierarchicalQuestionsRequest, QuestionsRequest, SummaryQuestionsRequest};

use super::*;

#[derive(Subcommand, Debug)]
pub(super) enum QuestionsCommand {
    /// Generate a question set (a job; resumable): `graph`, `summary` or
    /// `hierarchical`, each with its own settings.
    #[command(subcommand)]
    Generate(Generate),
    /// List a project's question sets, or the questions of one set.
    List {
        project: String,
        #[arg(long)]
        set: Option<i64>,
    },
    /// Score how relevant BM25's top-k chunks are to each question of a set,
    /// 0–5 by the LLM (a job), and print the histogram.
    Relevance {
        project: String,
        #[arg(long)]
        set: i64,
        /// BM25's chunks per question (with `--retriever bm25`).
        #[arg(long, default_value_t = engine::questions::relevance::DEFAULT_K)]
        k: usize,
        /// Whose retrieval is scored: a built-in method (`fastgraphrag`, the
        /// paper's; `lightrag`, `naive`, `graphrag-local`, …) or `bm25`.
        #[arg(long, default_value = engine::questions::relevance::DEFAULT_RETRIEVER)]
        retriever: String,
        /// Write the histogram as SVG to this file.
        #[arg(long)]
        svg: Option<std::path::PathBuf>,
    },
    /// The entities the questions of one or more sets mention (Zeng et al.
    /// Fig. 9): distinct count and top 10 per set, side by side.
    Entities {
        project: String,
        /// A set to count (repeat to compare sets).
        #[arg(long = "set", required = true)]
        sets: Vec<i64>,
        /// `graph`: match the graph's entity names in the questions; `llm`:
        /// have the LLM list each question's entities (a job per set).
        #[arg(long, default_value_t = types::EntitySource::Graph)]
        source: types::EntitySource,
        /// Write each set's pie chart to DIR/entities-set-ID.svg.
        #[arg(long)]
        svg_dir: Option<std::path::PathBuf>,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// Add a question set from a .jsonl or .csv file (the export's fields; only
    /// `question` is required), or a benchmark's questions with its corpus:
    /// `--format ultradomain|graphrag-bench|multihop-rag|table` (documents the
    /// project lacks are added; evidence and gold documents become each
    /// question's source chunks).
    Import {
        project: String,
        file: std::path::PathBuf,
        /// The set's name (default: the file's name).
        #[arg(long)]
        name: Option<String>,
        /// The file's layout: assay (this tool's export), ultradomain,
        /// graphrag-bench, multihop-rag or table.
        #[arg(long, default_value = "assay", value_parser = ["assay", "ultradomain", "graphrag-bench", "multihop-rag", "table"])]
        format: String,
        /// The benchmark's corpus file (graphrag-bench: Corpus/<subset>.json;
        /// multihop-rag: corpus.json; table: a CSV/JSONL of documents).
        #[arg(long)]
        corpus: Option<std::path::PathBuf>,
        /// For --format table: role=column pairs where the names differ
        /// (question, reference, category, evidence, context, document,
        /// doc_key, doc_title, doc_text), e.g. "question=Query,reference=Gold".
        #[arg(long, default_value = "")]
        columns: String,
        #[command(flatten)]
        limits: super::serve::LimitArgs,
    },
    /// Print a set's questions to stdout.
    Export {
        project: String,
        #[arg(long)]
        set: i64,
        /// jsonl, csv, or lightrag (the "- Question N: …" lines LightRAG's
        /// reproduce/ scripts read).
        #[arg(long, value_parser = ["jsonl", "csv", "lightrag"], default_value = "jsonl")]
        format: String,
    },
}

/// The question generators.
#[derive(Subcommand, Debug)]
pub(super) enum Generate {
    /// Graph-text-grounded questions (Zeng et al. §III-A): sample the project's
    /// knowledge graph's entities (node), relations (edge) and random walks
    /// (subgraph), and ask about each with its source text.
    Graph {
        project: String,
        #[command(flatten)]
        req: GraphQuestionsRequest,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// The LightRAG/MGRAG baseline: the documents' heads and tails, then
    /// users × tasks × questions from one call.
    Summary {
        project: String,
        #[command(flatten)]
        req: SummaryQuestionsRequest,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// Questions with reference answers in the hierarchical categories of
    /// HieraRAG (QC, AT, LV at 2, 4 and 8 categories).
    Hierarchical {
        project: String,
        #[command(flatten)]
        req: HierarchicalQuestionsRequest,
        /// A hierarchy in the layout of engine/data/hierarchy.json.
        #[arg(long)]
        hierarchy: Option<std::path::PathBuf>,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
}

impl Generate {
    /// The project, the request, the hierarchy's file and `--no-cache`.
    fn parts(self) -> (String, QuestionsRequest, Option<std::path::PathBuf>, bool) {
        match self {
            Generate::Graph { project, req, no_cache } => (project, QuestionsRequest::Graph(req), None, no_cache),
            Generate::Summary { project, req, no_cache } => (project, QuestionsRequest::Summary(req), None, no_cache),
            Generate::Hierarchical { project, req, hierarchy, no_cache } => {
                (project, QuestionsRequest::Hierarchical(req), hierarchy, no_cache)
            }
        }
    }
}

pub(super) async fn questions(
    pool: &Db,
    out: Output,
    llm: &LlmSettings,
    cmd: QuestionsCommand,
) -> anyhow::Result<ExitCode> {
    match cmd {
        QuestionsCommand::Generate(generator) => {
            let (project, req, hierarchy, no_cache) = generator.parts();
            let req = req.checked()?;
            let hierarchy = hierarchy.map(|path| json_file(&path, "--hierarchy")).transpose()?;
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let (job, set) = app::ssr::questions::run::create(pool, p.summary.id, req, hierarchy, no_cache).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
            let view = app::ssr::store::questions::get_set(pool, set).await?;
            let calls = app::ssr::store::jobs::item_call_count(pool, after.id).await?;
            let counts: serde_json::Map<String, serde_json::Value> =
                view.counts.iter().map(|(k, n)| (k.clone(), json!(n))).collect();
            out.print(
                json!({"set_id": set, "job": after.id, "status": after.status, "questions": view.questions,
                       "counts": counts, "failed": after.failed, "llm_calls": calls, "tokens": after.tokens,
                       "cost_usd": after.cost_usd}),
                || {
                    let per: Vec<String> = view.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
                    format!(
                        "{}\nset {set}: {} questions ({}), {calls} LLM calls",
                        job_line(&after),
                        view.questions,
                        per.join(", ")
                    )
                },
            );
            Ok(code)
        }
        QuestionsCommand::List { project, set } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            match set {
                None => {
                    let sets = app::ssr::store::questions::list_sets(pool, p.summary.id).await?;
                    out.print(json!(sets), || {
                        if sets.is_empty() {
                            return format!("{} has no question sets", p.summary.name);
                        }
                        sets.iter()
                            .map(|s| {
                                let per: Vec<String> = s.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
                                format!("set {}: {} · {} questions ({})", s.id, s.name, s.questions, per.join(", "))
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    });
                }
                Some(set) => {
                    let qs = set_questions(pool, p.summary.id, set).await?;
                    out.print(json!(qs), || {
                        qs.iter()
                            .map(|q| {
                                format!(
                                    "{:>6} [{}] {}",
                                    q.id,
                                    q.level.as_deref().or(q.category.as_deref()).unwrap_or("-"),
                                    q.question
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    });
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        QuestionsCommand::Entities { project, sets, source, svg_dir, no_cache } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let mut code = ExitCode::SUCCESS;
            let mut found = Vec::new();
            for set in sets {
                let view = app::ssr::store::questions::get_set(pool, set).await?;
                if view.project_id != p.summary.id {
                    anyhow::bail!("question set {set} belongs to another project");
                }
                if source == types::EntitySource::Llm {
                    let job = app::ssr::questions::run::create_mentions(pool, set, no_cache).await?;
                    let (c, _) = execute_job(pool, out, llm, job.id, false).await?;
                    if c != ExitCode::SUCCESS {
                        code = c;
                    }
                }
                let entities = app::ssr::questions::diagnostics::set_entities(pool, set, source)
                    .await?
                    .ok_or_else(|| anyhow::anyhow!("no entities were listed for set {set}"))?;
                if let Some(dir) = &svg_dir {
                    let path = dir.join(format!("entities-set-{set}.svg"));
                    std::fs::write(&path, entities.svg())
                        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
                }
                found.push(entities.stats());
            }
            out.print(json!(found), || {
                found
                    .iter()
                    .map(|s| {
                        let top: Vec<String> = s.top.iter().map(|(n, c)| format!("{n} {c}")).collect();
                        format!(
                            "set {} ({}): {} distinct entities ({} in the graph); {} of {} questions name one{}\n  top: {}",
                            s.set_id,
                            s.set_name,
                            s.distinct,
                            s.in_graph,
                            s.with_entity,
                            s.covered,
                            s.made_by.as_ref().map(|w| format!("; listed by {w}")).unwrap_or_default(),
                            top.join(", ")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            Ok(code)
        }
        QuestionsCommand::Relevance { project, set, k, retriever, svg } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let view = app::ssr::store::questions::get_set(pool, set).await?;
            if view.project_id != p.summary.id {
                anyhow::bail!("question set {set} belongs to another project");
            }
            let job = app::ssr::questions::run::create_relevance(pool, set, k, &retriever, false).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
            let (_, scores) =
                app::ssr::questions::diagnostics::set_relevance(pool, set).await?.unwrap_or((after.id, Vec::new()));
            let stats =
                app::ssr::questions::diagnostics::relevance_stats(pool, set, after.id, &scores, view.questions).await?;
            if let Some(path) = &svg {
                std::fs::write(path, app::ssr::questions::diagnostics::relevance_svg(&view, &stats.retriever, &scores))
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            }
            out.print(json!(stats), || {
                format!(
                    "{}\nrelevance of the {} context: mean {:.2} over {} questions; per score 0–5: {:?}",
                    job_line(&after),
                    if stats.retriever == "bm25" { format!("BM25 (k = {k})") } else { stats.retriever.clone() },
                    stats.mean,
                    stats.scored,
                    stats.histogram
                )
            });
            Ok(code)
        }
        QuestionsCommand::Import { project, file, name, format, corpus, columns, limits } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let read = |path: &std::path::Path| -> anyhow::Result<(String, Vec<u8>)> {
                let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
                Ok((path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), bytes))
            };
            let (file_name, bytes) = read(&file)?;
            if format != "assay" {
                let corpus = corpus.as_deref().map(read).transpose()?;
                let report = app::ssr::ingest::import_dataset(
                    pool,
                    p.summary.id,
                    &format,
                    (&file_name, &bytes),
                    corpus.as_ref().map(|(n, b)| (n.as_str(), b.as_slice())),
                    &columns,
                    name.as_deref().unwrap_or(""),
                    &limits.config().import,
                )
                .await?;
                out.print(serde_json::to_value(&report)?, || {
                    let set = report.set_id.map(|s| format!("set {s}: ")).unwrap_or_default();
                    format!("{set}{} into {}", report.line(), p.summary.name)
                });
                return Ok(ExitCode::SUCCESS);
            }
            if corpus.is_some() {
                anyhow::bail!(
                    "--corpus goes with a benchmark --format (ultradomain, graphrag-bench, multihop-rag, table)"
                );
            }
            let questions = app::ssr::questions::io::parse(&file_name, &bytes)?;
            let name = name.unwrap_or_else(|| format!("Imported from {file_name}"));
            let set = app::ssr::store::questions::import_set(pool, p.summary.id, &name, &file_name, &questions).await?;
            out.print(json!({"set_id": set, "questions": questions.len()}), || {
                format!("set {set}: {} questions imported into {}", questions.len(), p.summary.name)
            });
            Ok(ExitCode::SUCCESS)
        }
        QuestionsCommand::Export { project, set, format } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let qs = set_questions(pool, p.summary.id, set).await?;
            let text = match format.as_str() {
                "csv" => app::ssr::questions::io::to_csv(&qs),
                "lightrag" => app::ssr::questions::io::to_lightrag(&qs),
                _ => app::ssr::questions::io::to_jsonl(&qs),
            };
            write_stdout(&text)
        }
    }
}

/// A set's questions, after checking the set belongs to the project.
pub(super) async fn set_questions(
    pool: &Db,
    project_id: i64,
    set: i64,
) -> anyhow::Result<Vec<app::model::QuestionView>> {
    let view = app::ssr::store::questions::get_set(pool, set).await?;
    if view.project_id != project_id {
        anyhow::bail!("question set {set} belongs to another project");
    }
    Ok(app::ssr::store::questions::list_questions(pool, set).await?)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use engine::experiment::Manifest;
    use serde::de::DeserializeOwned;

    use super::*;
    use crate::cli::{Cli, Command};

    fn from_command_line(generator: &str, options: &[&str]) -> QuestionsRequest {
        let head = ["assay", "questions", "generate", generator, "p"];
        let args = head.iter().chain(options);
        match Cli::try_parse_from(args).unwrap().command {
            Command::Questions(QuestionsCommand::Generate(g)) => g.parts().1,
            other => panic!("{other:?}"),
        }
    }

    /// As the server function reads a posted form (non-strict: brackets may
    /// arrive percent-encoded).
    fn from_form<F: DeserializeOwned>(body: &str) -> Result<F, String> {
        serde_qs::Config::new(5, false).deserialize_str(body).map_err(|e| e.to_string())
    }

    fn from_manifest(table: &str) -> Result<QuestionsRequest, String> {
        let text = format!("name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n[[questions]]\n{table}");
        let m = Manifest::parse_uploaded(&text).map_err(|e| e.0)?;
        // And as `Manifest::to_toml` (the wizard's export) writes it.
        assert_eq!(Manifest::parse_uploaded(&m.to_toml()).map_err(|e| e.0)?, m, "{}", m.to_toml());
        Ok(m.questions[0].clone())
    }

    /// Each generator's request reads the same from the Questions page's
    /// form (as posted, and as the hydrated page encodes it again), `assay
    /// questions generate` and a manifest's [[questions]], and each leaves
    /// out the same defaults.
    #[test]
    fn a_questions_request_reads_the_same_from_the_form_the_command_line_and_a_manifest() {
        use app::api::questions::{StartGraphQuestions, StartHierarchicalQuestions, StartSummaryQuestions};

        let graph =
            GraphQuestionsRequest { node: 3, edge: 0, subgraph: 2, min_hops: 4, degree_weighted: true, seed: 7 };
        let want = QuestionsRequest::Graph(graph.clone());
        let cli =
            ["--node", "3", "--edge", "0", "--subgraph", "2", "--min-hops", "4", "--degree-weighted", "--seed", "7"];
        assert_eq!(from_command_line("graph", &cli).checked().unwrap(), want);
        let posted: StartGraphQuestions = from_form(
            "project_id=4&req%5Bnode%5D=3&req[edge]=0&req[subgraph]=2&req[min_hops]=4&req[degree_weighted]=true&req[seed]=7",
        )
        .unwrap();
        assert_eq!((posted.project_id, &posted.req), (4, &graph));
        let again: StartGraphQuestions = from_form(&serde_qs::to_string(&posted).unwrap()).unwrap();
        assert_eq!(again.req, graph);
        let table =
            "kind = \"graph\"\nnode = 3\nedge = 0\nsubgraph = 2\nmin_hops = 4\ndegree_weighted = true\nseed = 7\n";
        assert_eq!(from_manifest(table).unwrap(), want);

        let summary = SummaryQuestionsRequest {
            users: 3,
            tasks: 2,
            per_task: 4,
            head: 10,
            tail: 20,
            replicate_lightrag: true,
            count: Some(9),
        };
        let want = QuestionsRequest::Summary(summary.clone());
        let cli = [
            "--users",
            "3",
            "--tasks",
            "2",
            "--per-task",
            "4",
            "--head",
            "10",
            "--tail",
            "20",
            "--replicate-lightrag",
            "--count",
            "9",
        ];
        assert_eq!(from_command_line("summary", &cli).checked().unwrap(), want);
        let body = "project_id=4&req[users]=3&req[tasks]=2&req[per_task]=4&req[head]=10&req[tail]=20\
                    &req[replicate_lightrag]=true&req[count]=9";
        let posted: StartSummaryQuestions = from_form(body).unwrap();
        assert_eq!(posted.req, summary);
        let again: StartSummaryQuestions = from_form(&serde_qs::to_string(&posted).unwrap()).unwrap();
        assert_eq!(again.req, summary);
        // The form's "Exactly" box left blank: no count.
        let blank: StartSummaryQuestions = from_form(&body.replace("req[count]=9", "req[count]=")).unwrap();
        assert_eq!(blank.req, SummaryQuestionsRequest { count: None, ..summary.clone() });
        let table = "kind = \"summary\"\nusers = 3\ntasks = 2\nper_task = 4\nhead = 10\ntail = 20\n\
                     replicate_lightrag = true\ncount = 9\n";
        assert_eq!(from_manifest(table).unwrap(), want);

        let hierarchical = HierarchicalQuestionsRequest {
            dimensions: vec!["QC".into(), "LV".into()],
            levels: vec![2, 8],
            per_category: Some(5),
            factorial: 3,
            adherence_check: true,
            seed: 9,
        };
        let want = QuestionsRequest::Hierarchical(hierarchical.clone());
        let cli = [
            "--dimensions",
            "qc, LV",
            "--levels",
            "2,8",
            "--per-category",
            "5",
            "--factorial",
            "3",
            "--adherence-check",
            "--seed",
            "9",
        ];
        assert_eq!(from_command_line("hierarchical", &cli).checked().unwrap(), want);
        let posted: StartHierarchicalQuestions = from_form(
            "project_id=4&req[dimensions]=qc%2C%20LV&req[levels]=2%2C8&req[per_category]=5&req[factorial]=3\
             &req[adherence_check]=true&req[seed]=9",
        )
        .unwrap();
        assert_eq!(QuestionsRequest::Hierarchical(posted.req.clone()).checked().unwrap(), want);
        let again: StartHierarchicalQuestions = from_form(&serde_qs::to_string(&posted).unwrap()).unwrap();
        assert_eq!(again.req, posted.req);
        let table = "kind = \"hierarchical\"\ndimensions = [\"qc\", \"LV\"]\nlevels = [2, 8]\nper_category = 5\n\
                     factorial = 3\nadherence_check = true\nseed = 9\n";
        assert_eq!(from_manifest(table).unwrap().checked().unwrap(), want);

        // What each leaves out is the same default.
        for (kind, d) in [
            ("graph", QuestionsRequest::Graph(Default::default())),
            ("summary", QuestionsRequest::Summary(Default::default())),
            ("hierarchical", QuestionsRequest::Hierarchical(Default::default())),
        ] {
            assert_eq!(from_command_line(kind, &[]), d, "{kind}");
            assert_eq!(from_manifest(&format!("kind = \"{kind}\"\n")).unwrap(), d, "{kind}");
        }
        let posted: StartSummaryQuestions = from_form("project_id=4&req[users]=5").unwrap();
        assert_eq!(posted.req, SummaryQuestionsRequest::default());

        // Out of range, or no number: refused naming the field, wherever it comes from.
        let e = from_command_line("hierarchical", &["--levels", "2,3"]).checked().unwrap_err();
        assert_eq!(e.to_string(), "levels: a level is 2, 4 or 8 categories, not 3");
        assert_eq!(
            from_manifest("kind = \"summary\"\nusers = 30\n").unwrap_err(),
            "questions[0].users: must be from 1 to 20, not 30"
        );
        let e = from_manifest("kind = \"graph\"\nnode = 0\nedge = 0\nsubgraph = 0\n").unwrap_err();
        assert_eq!(e, "questions[0].node: ask for at least one node, edge or subgraph question");
        let e = from_form::<StartGraphQuestions>("project_id=4&req[node]=many").unwrap_err();
        assert!(e.contains("node: not a whole number in range"), "{e}");
        let e = from_form::<StartHierarchicalQuestions>("project_id=4&req[levels]=2%2Cfour").unwrap_err();
        assert!(e.contains("levels: \"four\" is not a whole number"), "{e}");
        let e = from_manifest("kind = \"graph\"\nnodes = 3\n").unwrap_err();
        assert!(e.contains("nodes"), "{e}");
    }
}

//! `assay questions`: generate (graph, summary, hierarchical), list, score, import and export question sets.

use app::ssr::store::Db;
use clap::Subcommand;
use engine::llm::settings::LlmSettings;
use serde_json::json;
use std::process::ExitCode;

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
        #[arg(long, default_value = "graph", value_parser = ["graph", "llm"])]
        source: String,
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
        /// Node-level questions.
        #[arg(long, default_value_t = 50)]
        node: usize,
        /// Edge-level questions.
        #[arg(long, default_value_t = 50)]
        edge: usize,
        /// Subgraph-level questions.
        #[arg(long, default_value_t = 50)]
        subgraph: usize,
        /// Distinct edges a subgraph's random walk must cover.
        #[arg(long, default_value_t = engine::questions::walk::DEFAULT_MIN_HOPS)]
        min_hops: usize,
        /// Sample entities with probability proportional to degree + 1 (default: uniformly).
        #[arg(long)]
        degree_weighted: bool,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// The LightRAG/MGRAG baseline: the documents' heads and tails, then
    /// users × tasks × questions from one call.
    Summary {
        project: String,
        /// Potential users.
        #[arg(long, default_value_t = 5)]
        users: usize,
        /// Tasks per user.
        #[arg(long, default_value_t = 5)]
        tasks: usize,
        /// Questions per (user, task).
        #[arg(long, default_value_t = 5)]
        per_task: usize,
        /// Exactly this many questions (enough are asked per task, then kept
        /// in turn from every user's tasks).
        #[arg(long)]
        count: Option<usize>,
        /// GPT-2 tokens from the start of each document.
        #[arg(long, default_value_t = 1000)]
        head: usize,
        /// GPT-2 tokens from the end of each document.
        #[arg(long, default_value_t = 1000)]
        tail: usize,
        /// LightRAG's exact slices, with its bug (issue #1203).
        #[arg(long)]
        replicate_lightrag: bool,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// Questions with reference answers in the hierarchical categories of
    /// HieraRAG (QC, AT, LV at 2, 4 and 8 categories).
    Hierarchical {
        project: String,
        /// Questions per category (unset: 38, HieraRAG's scale, when more
        /// than one level is asked for; else 10).
        #[arg(long)]
        per_category: Option<usize>,
        /// Granularity levels (categories per level), comma-separated.
        #[arg(long, default_value = "2,4,8")]
        levels: String,
        /// Dimensions, comma-separated.
        #[arg(long, default_value = "QC,AT,LV")]
        dimensions: String,
        /// Questions per cell of the LV × QC factorial design (0: none).
        #[arg(long, default_value_t = 0)]
        factorial: usize,
        /// Ask the LLM whether each pair fits its category; drop misfits.
        #[arg(long)]
        adherence_check: bool,
        /// A hierarchy in the layout of engine/data/hierarchy.json.
        #[arg(long)]
        hierarchy: Option<std::path::PathBuf>,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
}

pub(super) async fn questions(
    pool: &Db,
    out: Output,
    llm: &LlmSettings,
    cmd: QuestionsCommand,
) -> anyhow::Result<ExitCode> {
    match cmd {
        QuestionsCommand::Generate(generator) => {
            let (job, set) = match generator {
                Generate::Hierarchical {
                    project,
                    per_category,
                    levels,
                    dimensions,
                    factorial,
                    adherence_check,
                    hierarchy,
                    seed,
                    no_cache,
                } => {
                    let p = app::ssr::store::projects::find_project(pool, &project).await?;
                    let levels = levels
                        .split(',')
                        .map(|l| {
                            l.trim().parse::<usize>().map_err(|_| anyhow::anyhow!("--levels: \"{l}\" is not a number"))
                        })
                        .collect::<anyhow::Result<Vec<_>>>()?;
                    let hierarchy = match hierarchy {
                        Some(path) => {
                            let text = std::fs::read_to_string(&path)
                                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
                            Some(
                                serde_json::from_str(&text)
                                    .map_err(|e| anyhow::anyhow!("{} is not a hierarchy: {e}", path.display()))?,
                            )
                        }
                        None => None,
                    };
                    let settings = engine::questions::hierarchy::HierarchicalSettings {
                        dimensions: comma_list(&dimensions, str::to_uppercase),
                        per_category: per_category.unwrap_or_else(|| engine::experiment::default_per_category(&levels)),
                        levels,
                        factorial_per_cell: factorial,
                        adherence_check,
                        seed,
                    };
                    app::ssr::questions::run::create_hierarchical_questions(
                        pool,
                        p.summary.id,
                        &settings,
                        hierarchy,
                        no_cache,
                    )
                    .await?
                }
                Generate::Summary {
                    project,
                    users,
                    tasks,
                    per_task,
                    count,
                    head,
                    tail,
                    replicate_lightrag,
                    no_cache,
                } => {
                    let p = app::ssr::store::projects::find_project(pool, &project).await?;
                    let settings = engine::questions::summary::SummarySettings {
                        head,
                        tail,
                        users,
                        tasks,
                        questions: per_task,
                        replicate_lightrag,
                        count,
                    };
                    app::ssr::questions::run::create_summary_questions(pool, p.summary.id, &settings, no_cache).await?
                }
                Generate::Graph { project, node, edge, subgraph, min_hops, degree_weighted, seed, no_cache } => {
                    let p = app::ssr::store::projects::find_project(pool, &project).await?;
                    let settings = engine::questions::graph::GraphQuestionSettings {
                        node,
                        edge,
                        subgraph,
                        min_hops,
                        degree_weighted,
                        seed,
                    };
                    app::ssr::questions::run::create_graph_questions(pool, p.summary.id, &settings, no_cache).await?
                }
            };
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
            let source = app::ssr::questions::diagnostics::EntitySource::parse(&source)?;
            let mut code = ExitCode::SUCCESS;
            let mut found = Vec::new();
            for set in sets {
                let view = app::ssr::store::questions::get_set(pool, set).await?;
                if view.project_id != p.summary.id {
                    anyhow::bail!("question set {set} belongs to another project");
                }
                if source == app::ssr::questions::diagnostics::EntitySource::Llm {
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
                let report = app::ssr::store::datasets::import_files(
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

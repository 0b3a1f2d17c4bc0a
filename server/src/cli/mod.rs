//! The `assay` command line. `serve` starts the web server; the other
//! subcommands run the same operations headless, for scripts and CI.
//!
//! Global options (`--db`, `--json`) go before or after the subcommand.
//! With `--json`, a command prints one JSON value on stdout and nothing
//! else; errors always go to stderr as one line, with a non-zero exit.

mod answers;
mod eval;
mod experiment;
mod metrics;
mod share;
mod study;
mod user;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use app::model::{JobView, ProjectView, Skipped, UploadReport};
use app::ssr::state::Config;
use clap::{Args, Parser, Subcommand};
use engine::chunk::{ChunkSettings, Tokenizer};
use engine::llm::settings::{LlmSettings, ProviderKind};
use engine::llm::{ApiKey, CallContext, ChatRequest, Message};
use serde_json::json;
use sqlx::SqlitePool;

#[derive(Parser, Debug)]
#[command(name = "assay", version, about = "Assay: an unbiased evaluation workbench for GraphRAG methods")]
pub struct Cli {
    /// SQLite database file (created if missing).
    #[arg(long, global = true, env = "ASSAY_DB", value_name = "PATH")]
    db: Option<PathBuf>,
    /// Print machine-readable JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(subcommand)]
    command: Command,
}

/// Which LLM the gateway uses. The API key is read from the environment
/// only (`ASSAY_LLM_API_KEY`, else `OPENAI_API_KEY`): keys on a command
/// line end up in shell history and process lists.
#[derive(Args, Debug, Clone)]
struct LlmArgs {
    /// offline (no model; the default) or openai (any OpenAI-compatible endpoint).
    #[arg(long = "llm-provider", global = true, env = "ASSAY_LLM_PROVIDER", default_value = "offline")]
    llm_provider: String,
    /// Base URL up to /v1: https://api.openai.com/v1, http://localhost:8000/v1 (vLLM), http://localhost:11434/v1 (Ollama).
    #[arg(
        long = "llm-base-url",
        global = true,
        env = "ASSAY_LLM_BASE_URL",
        default_value = "https://api.openai.com/v1"
    )]
    llm_base_url: String,
    #[arg(long = "llm-model", global = true, env = "ASSAY_LLM_MODEL", default_value = "gpt-4o-mini")]
    llm_model: String,
    /// Most requests in flight at once.
    #[arg(long = "llm-concurrency", global = true, env = "ASSAY_LLM_CONCURRENCY", default_value_t = 8)]
    llm_concurrency: usize,
    /// Seconds before one attempt times out.
    #[arg(long = "llm-timeout", global = true, env = "ASSAY_LLM_TIMEOUT", default_value_t = 120)]
    llm_timeout: u64,
    /// The model's price as INPUT,OUTPUT in USD per million tokens (overrides the built-in list).
    #[arg(long = "llm-price", global = true, env = "ASSAY_LLM_PRICE")]
    llm_price: Option<String>,
    /// Embedding model for /v1/embeddings.
    #[arg(long = "embed-model", global = true, env = "ASSAY_EMBED_MODEL", default_value = "text-embedding-3-small")]
    embed_model: String,
    /// Where the in-process MiniLM (all-MiniLM-L6-v2) is (default:
    /// data/models/all-MiniLM-L6-v2; scripts/fetch-minilm puts it there).
    #[arg(long = "minilm-dir", global = true, env = "ASSAY_MINILM_DIR", value_name = "DIR")]
    minilm_dir: Option<std::path::PathBuf>,
    /// The model's context window in tokens (default: what the endpoint's
    /// /models says, else 8192; 128k for OpenAI's models). Prompts and
    /// reply budgets are fitted to it; what cannot fit is refused before
    /// any call.
    #[arg(long = "llm-context", global = true, env = "ASSAY_LLM_CONTEXT")]
    llm_context: Option<u64>,
    /// Reply budgets per task, replacing the built-in ones: PURPOSE=N,…
    /// (e.g. extract_graph=1500,judge_scores=400; README lists the tasks).
    #[arg(long = "llm-max-tokens", global = true, env = "ASSAY_LLM_MAX_TOKENS")]
    llm_max_tokens: Option<String>,
    /// JSON mode (response_format): auto (sent, dropped if the endpoint refuses it), on, or off.
    #[arg(long = "llm-json-mode", global = true, env = "ASSAY_LLM_JSON_MODE", default_value = "auto")]
    llm_json_mode: String,
    /// Read replies as streams: for a local server that answers one request
    /// at a time (llama.cpp), the timeout then counts from the first token,
    /// and a request given up stops the server generating for it.
    #[arg(long = "llm-stream", global = true, env = "ASSAY_LLM_STREAM", default_value = "off", value_parser = ["on", "off"])]
    llm_stream: String,
}

impl LlmArgs {
    fn settings(&self) -> anyhow::Result<LlmSettings> {
        let key = std::env::var("ASSAY_LLM_API_KEY")
            .ok()
            .filter(|k| !k.trim().is_empty())
            .or_else(|| std::env::var("OPENAI_API_KEY").ok());
        let mut settings = LlmSettings {
            provider: ProviderKind::parse(&self.llm_provider)?,
            base_url: self.llm_base_url.trim_end_matches('/').to_string(),
            model: self.llm_model.clone(),
            api_key: key.and_then(ApiKey::new),
            concurrency: self.llm_concurrency,
            timeout: std::time::Duration::from_secs(self.llm_timeout),
            embed_model: self.embed_model.clone(),
            // Commands run by the machine's operator: any address.
            allow_private_urls: true,
            ..LlmSettings::default()
        };
        if let Some(price) = &self.llm_price {
            settings.set_price(price)?;
        }
        if let Some(spec) = &self.llm_max_tokens {
            settings.set_max_tokens(spec)?;
        }
        if let Some(c) = self.llm_context {
            anyhow::ensure!(c >= 512, "--llm-context must be at least 512 tokens (not {c})");
            settings.context = Some(c);
        }
        settings.json_mode = engine::llm::openai::JsonMode::parse(&self.llm_json_mode)?;
        settings.stream = self.llm_stream == "on";
        Ok(settings)
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start the web interface.
    Serve(ServeArgs),
    /// Create, list, rename and delete projects.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Add documents to a project's corpus and inspect it.
    #[command(subcommand)]
    Corpus(CorpusCommand),
    /// Check the LLM configuration.
    #[command(subcommand)]
    Llm(LlmCommand),
    /// Inspect and resume jobs.
    #[command(subcommand)]
    Job(JobCommand),
    /// Build and export the knowledge graph.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Generate, list and export question sets.
    #[command(subcommand)]
    Questions(QuestionsCommand),
    /// Answer question sets with built-in RAG methods, import answers from
    /// elsewhere, export them, and see the cost table.
    #[command(subcommand)]
    Answers(answers::AnswersCommand),
    /// Judge answer sets in pairs (the unbiased protocol and the legacy
    /// one), sanity-check a method against itself, write reports.
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// Reference-based metrics of answer sets (seed 004): MAP, nDCG, Recall,
    /// cosine similarity, ROUGE-1, BLEU, and the granularity analysis.
    #[command(subcommand)]
    Metrics(metrics::MetricsCommand),
    /// Run an experiment manifest end to end (examples/experiment.toml):
    /// every stage as a job, reusing what identical settings computed.
    Run(experiment::RunArgs),
    /// Human studies: create one with rater links, have the LLM rate it, read its results.
    #[command(subcommand)]
    Study(study::StudyCommand),
    /// Read-only share links to report pages.
    #[command(subcommand)]
    Share(share::ShareCommand),
    /// The owner account: create it, or start a session for scripts.
    #[command(subcommand)]
    User(user::UserCommand),
}

#[derive(Subcommand, Debug)]
enum QuestionsCommand {
    /// Generate a question set (a job; resumable). `graph` samples the
    /// project's knowledge graph: entities (node), relations (edge) and random
    /// walks (subgraph). `summary` is the LightRAG/MGRAG baseline: documents'
    /// heads and tails, then users × tasks × questions from one call.
    /// `hierarchical` writes questions with reference answers in the
    /// categories of seed 004 (QC, AT, LV at 2, 4 and 8 categories).
    Generate {
        project: String,
        #[arg(long, value_parser = ["graph", "summary", "hierarchical"], default_value = "graph")]
        kind: String,
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
        /// Summary kind: potential users.
        #[arg(long, default_value_t = 5)]
        users: usize,
        /// Summary kind: tasks per user.
        #[arg(long, default_value_t = 5)]
        tasks: usize,
        /// Summary kind: questions per (user, task).
        #[arg(long, default_value_t = 5)]
        per_task: usize,
        /// Summary kind: exactly this many questions (enough are asked per
        /// task, then kept in turn from every user's tasks).
        #[arg(long)]
        count: Option<usize>,
        /// Summary kind: GPT-2 tokens from the start of each document.
        #[arg(long, default_value_t = 1000)]
        head: usize,
        /// Summary kind: GPT-2 tokens from the end of each document.
        #[arg(long, default_value_t = 1000)]
        tail: usize,
        /// Summary kind: LightRAG's exact slices, with its bug (issue #1203).
        #[arg(long)]
        replicate_lightrag: bool,
        /// Hierarchical kind: questions per category (unset: 38, seed 004's
        /// scale, when more than one level is asked for; else 10).
        #[arg(long)]
        per_category: Option<usize>,
        /// Hierarchical kind: granularity levels (categories per level), comma-separated.
        #[arg(long, default_value = "2,4,8")]
        levels: String,
        /// Hierarchical kind: dimensions, comma-separated.
        #[arg(long, default_value = "QC,AT,LV")]
        dimensions: String,
        /// Hierarchical kind: questions per cell of the LV × QC factorial design (0: none).
        #[arg(long, default_value_t = 0)]
        factorial: usize,
        /// Hierarchical kind: ask the LLM whether each pair fits its category; drop misfits.
        #[arg(long)]
        adherence_check: bool,
        /// Hierarchical kind: a hierarchy in the layout of engine/data/hierarchy.json.
        #[arg(long)]
        hierarchy: Option<std::path::PathBuf>,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
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
    /// The entities the questions of one or more sets mention (seed 000
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
    /// `question` is required).
    Import {
        project: String,
        file: std::path::PathBuf,
        /// The set's name (default: the file's name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Print a set's questions to stdout.
    Export {
        project: String,
        #[arg(long)]
        set: i64,
        #[arg(long, value_parser = ["jsonl", "csv"], default_value = "jsonl")]
        format: String,
    },
}

#[derive(Subcommand, Debug)]
enum GraphCommand {
    /// Extract entities and relations from every chunk and merge them (a job; resumable).
    Build {
        project: String,
        /// Follow-up turns asking the model for missed entities.
        #[arg(long, default_value_t = 1)]
        gleaning: u32,
        /// Entity types, comma-separated.
        #[arg(long, default_value = "person,organization,location,event,concept,object")]
        entity_types: String,
        /// Merged descriptions longer than this many tokens are summarised by the LLM.
        #[arg(long, default_value_t = engine::graph::describe::DEFAULT_BUDGET)]
        summary_budget: usize,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// Replace the project's graph with one from a file in the export's JSON layout
    /// (node names are normalised into keys; communities and layout are computed).
    Import { project: String, file: std::path::PathBuf },
    /// Print the graph to stdout.
    Export {
        project: String,
        #[arg(long, value_parser = ["json", "graphml"], default_value = "json")]
        format: String,
    },
}

#[derive(Subcommand, Debug)]
enum LlmCommand {
    /// Send one tiny request (never cached) and print the reply, tokens and latency.
    Ping {
        #[arg(long, default_value = "Reply with the single word: pong")]
        message: String,
    },
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ASSAY_ADDR", default_value = "127.0.0.1:3000")]
    addr: SocketAddr,
    /// Directory of the built site (holds pkg/ with the WASM, JS and CSS).
    #[arg(long, env = "ASSAY_SITE", value_name = "DIR")]
    site: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Serve without the owner login: anyone who reaches the address can
    /// change everything. Only for a machine no one else can reach.
    #[arg(long)]
    no_login: bool,
    /// Let the "HTTP endpoint" RAG method (whose URL project members set)
    /// call loopback, private and link-local addresses, e.g. a RAG
    /// service on this machine. Off by default; also a Settings option.
    #[arg(long, env = "ASSAY_ALLOW_PRIVATE_URLS")]
    allow_private_urls: bool,
    /// Mark cookies Secure on every response. Without it they are Secure
    /// when the request came over HTTPS (`X-Forwarded-Proto: https` from a
    /// reverse proxy counts).
    #[arg(long, env = "ASSAY_SECURE_COOKIES")]
    secure_cookies: bool,
}

#[derive(Args, Debug, Clone)]
struct LimitArgs {
    /// Largest upload in MB (all files of one upload together), and largest single file.
    #[arg(long, env = "ASSAY_MAX_UPLOAD_MB", default_value_t = 200)]
    max_upload_mb: u64,
    /// Most documents one project may hold.
    #[arg(long, env = "ASSAY_MAX_DOCUMENTS", default_value_t = 100_000)]
    max_documents: usize,
}

impl LimitArgs {
    fn config(&self) -> Config {
        let bytes = self.max_upload_mb * 1024 * 1024;
        Config {
            max_upload_bytes: bytes,
            import: engine::corpus::ImportLimits::new(bytes, self.max_documents),
            llm_base: LlmSettings::default(),
            require_login: true,
            secure_cookies: false,
            env: process_env,
        }
    }
}

/// The process environment, as the configuration hands it down.
pub(crate) fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

#[derive(Subcommand, Debug)]
enum ProjectCommand {
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

#[derive(Subcommand, Debug)]
enum CorpusCommand {
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

#[derive(Subcommand, Debug)]
enum JobCommand {
    /// Jobs of a project, newest first.
    List { project: String },
    /// One job: status, counters, failed items.
    Show { id: i64 },
    /// Run a job's unfinished items (after an interruption or a cancel).
    Resume {
        id: i64,
        /// Also run again the items that failed.
        #[arg(long)]
        retry_failed: bool,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve(_)) {
        // `assay job list | head -1`: a closed pipe ends a command quietly,
        // as it ends any Unix tool, instead of a panic in `println!` (Rust
        // ignores SIGPIPE by default). The web server keeps that default.
        // SAFETY: setting a signal's disposition before any thread starts.
        #[cfg(unix)]
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    init_tracing(matches!(cli.command, Command::Serve(_)));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

fn one_line(e: &anyhow::Error) -> String {
    e.chain().map(|c| c.to_string()).collect::<Vec<_>>().join(": ").replace('\n', " ")
}

fn init_tracing(serving: bool) {
    // Commands print their own one-line errors; logs add only what is worse.
    let default = if serving { "info,sqlx=warn,leptos_axum=warn" } else { "error" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("ASSAY_LOG").unwrap_or_else(|_| default.into());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &cli.llm.minilm_dir {
        app::ssr::answers::set_minilm_dir(dir.clone());
    }
    // A manifest is checked before the database is opened or created.
    let manifest = match &cli.command {
        Command::Run(args) => Some(experiment::load(args)?),
        _ => None,
    };
    let db = cli.db.clone().unwrap_or_else(crate::default_db_path);
    let pool = app::ssr::store::open(&db).await.with_context(|| format!("{}", db.display()))?;
    let out = Output { json: cli.json };
    let llm = cli.llm.settings()?;
    match cli.command {
        Command::Serve(args) => serve(pool, &db, &llm, args).await,
        Command::Project(cmd) => project(&pool, out, cmd).await,
        Command::Corpus(cmd) => corpus(&pool, out, &llm, cmd).await,
        Command::Llm(LlmCommand::Ping { message }) => ping(pool, out, &llm, message).await,
        Command::Job(cmd) => job(&pool, out, &llm, cmd).await,
        Command::Graph(cmd) => graph(&pool, out, &llm, cmd).await,
        Command::Questions(cmd) => questions(&pool, out, &llm, cmd).await,
        Command::Answers(cmd) => answers::run(&pool, out, &llm, cmd).await,
        Command::Eval(cmd) => eval::run(&pool, out, &llm, cmd).await,
        Command::Study(cmd) => study::run(&pool, out, &llm, cmd).await,
        Command::Metrics(cmd) => metrics::run(&pool, out, &llm, cmd).await,
        Command::User(cmd) => user::run(&pool, out, cmd).await,
        Command::Share(cmd) => share::run(&pool, out, cmd).await,
        Command::Run(args) => {
            let m = manifest.ok_or_else(|| anyhow::anyhow!("the manifest was not read"))?;
            experiment::run(&pool, out, &llm, m, args).await
        }
    }
}

fn job_json(j: &JobView) -> serde_json::Value {
    serde_json::to_value(j).unwrap_or_default()
}

fn job_line(j: &JobView) -> String {
    format!(
        "job {} ({}): {} · {}/{} done, {} failed · {} tokens · ${:.4} · {:.1} s",
        j.id,
        j.kind,
        j.status,
        app::format::int(j.done),
        app::format::int(j.total),
        app::format::int(j.failed),
        app::format::int(j.tokens),
        j.cost_usd,
        j.elapsed_secs
    )
}

async fn job(pool: &SqlitePool, out: Output, llm: &LlmSettings, cmd: JobCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        JobCommand::List { project } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            let jobs = app::ssr::store::jobs::list_jobs(pool, p.summary.id).await?;
            out.print(json!(jobs.iter().map(job_json).collect::<Vec<_>>()), || {
                if jobs.is_empty() {
                    format!("{} has no jobs", p.summary.name)
                } else {
                    jobs.iter().map(job_line).collect::<Vec<_>>().join("\n")
                }
            });
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Show { id } => {
            let j = app::ssr::store::jobs::get_job(pool, id).await?;
            let items = app::ssr::store::jobs::job_items(pool, id).await?;
            let failures: Vec<_> = items.iter().filter(|i| i.status == app::model::ItemStatus::Failed).collect();
            let outcome = app::ssr::store::jobs::outcome(pool, id).await?;
            let mut value = job_json(&j);
            value["failures"] =
                json!(failures.iter().map(|i| json!({"item": i.key, "error": i.error})).collect::<Vec<_>>());
            value["outcome"] = json!(outcome);
            out.print(value, || {
                let mut s = job_line(&j);
                if let Some(e) = &j.error {
                    s.push_str(&format!("\nerror: {e}"));
                }
                if let Some(m) = &outcome.model {
                    s.push_str(&format!("\nanswered by {m}"));
                }
                if let Some(said) = outcome.sentence() {
                    s.push_str(&format!("\n{said}"));
                }
                for f in &failures {
                    s.push_str(&format!("\n  failed {}: {}", f.key, f.error.as_deref().unwrap_or("")));
                }
                if matches!(j.status, app::model::JobStatus::Interrupted | app::model::JobStatus::Cancelled) {
                    s.push_str(&format!("\nresume with: assay job resume {}", j.id));
                }
                s
            });
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Resume { id, retry_failed } => run_job(pool, out, llm, id, retry_failed).await,
    }
}

async fn graph(pool: &SqlitePool, out: Output, llm: &LlmSettings, cmd: GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Build { project, gleaning, entity_types, summary_budget, no_cache } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            let settings = engine::graph::extract::ExtractSettings {
                gleaning,
                entity_types: comma_list(&entity_types, str::to_lowercase),
                summary_budget,
            };
            let job = app::ssr::graph::create_graph(pool, p.summary.id, &settings, no_cache).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
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
                       "llm_calls": calls, "tokens": after.tokens, "cost_usd": after.cost_usd, "failed_chunks": after.failed}),
                || {
                    format!(
                        "{}\ngraph: {} nodes, {} edges, {} components (largest {largest}), {communities} communities, {summaries} descriptions summarised, {calls} LLM calls",
                        job_line(&after),
                        graph.nodes.len(),
                        graph.edges.len(),
                        components.len()
                    )
                },
            );
            Ok(code)
        }
        GraphCommand::Import { project, file } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
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
            let p = app::ssr::store::find_project(pool, &project).await?;
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

async fn questions(
    pool: &SqlitePool,
    out: Output,
    llm: &LlmSettings,
    cmd: QuestionsCommand,
) -> anyhow::Result<ExitCode> {
    match cmd {
        QuestionsCommand::Generate {
            project,
            kind,
            node,
            edge,
            subgraph,
            min_hops,
            degree_weighted,
            seed,
            users,
            tasks,
            per_task,
            count,
            head,
            tail,
            replicate_lightrag,
            per_category,
            levels,
            dimensions,
            factorial,
            adherence_check,
            hierarchy,
            no_cache,
        } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            let (job, set) = if kind == "hierarchical" {
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
            } else if kind == "summary" {
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
            } else {
                let settings = engine::questions::graph::GraphQuestionSettings {
                    node,
                    edge,
                    subgraph,
                    min_hops,
                    degree_weighted,
                    seed,
                };
                app::ssr::questions::run::create_graph_questions(pool, p.summary.id, &settings, no_cache).await?
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
            let p = app::ssr::store::find_project(pool, &project).await?;
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
            let p = app::ssr::store::find_project(pool, &project).await?;
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
            let p = app::ssr::store::find_project(pool, &project).await?;
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
        QuestionsCommand::Import { project, file, name } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            let bytes = std::fs::read(&file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
            let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let questions = app::ssr::questions::io::parse(&file_name, &bytes)?;
            let name = name.unwrap_or_else(|| format!("Imported from {file_name}"));
            let set = app::ssr::store::questions::import_set(pool, p.summary.id, &name, &file_name, &questions).await?;
            out.print(json!({"set_id": set, "questions": questions.len()}), || {
                format!("set {set}: {} questions imported into {}", questions.len(), p.summary.name)
            });
            Ok(ExitCode::SUCCESS)
        }
        QuestionsCommand::Export { project, set, format } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            let qs = set_questions(pool, p.summary.id, set).await?;
            let text = if format == "csv" {
                app::ssr::questions::io::to_csv(&qs)
            } else {
                app::ssr::questions::io::to_jsonl(&qs)
            };
            write_stdout(&text)
        }
    }
}

/// A set's questions, after checking the set belongs to the project.
async fn set_questions(pool: &SqlitePool, project_id: i64, set: i64) -> anyhow::Result<Vec<app::model::QuestionView>> {
    let view = app::ssr::store::questions::get_set(pool, set).await?;
    if view.project_id != project_id {
        anyhow::bail!("question set {set} belongs to another project");
    }
    Ok(app::ssr::store::questions::list_questions(pool, set).await?)
}

/// Runs a job in the foreground and prints the job.
async fn run_job(
    pool: &SqlitePool,
    out: Output,
    llm: &LlmSettings,
    id: i64,
    retry_failed: bool,
) -> anyhow::Result<ExitCode> {
    let (code, after) = execute_job(pool, out, llm, id, retry_failed).await?;
    let mut value = job_json(&after);
    value["outcome"] = json!(app::ssr::store::jobs::outcome(pool, id).await?);
    out.print(value, || job_line(&after));
    Ok(code)
}

/// Runs a job in the foreground with a progress bar (plain lines when
/// stderr is not a terminal). Ctrl-C cancels; what finished is kept.
/// Returns the exit code and the job afterwards.
async fn execute_job(
    pool: &SqlitePool,
    out: Output,
    llm: &LlmSettings,
    id: i64,
    retry_failed: bool,
) -> anyhow::Result<(ExitCode, JobView)> {
    use std::io::IsTerminal;
    let before = app::ssr::store::jobs::get_job(pool, id).await?;
    if !out.json {
        eprintln!("job {} ({}) with {}", id, before.kind, llm.describe());
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let terminal = std::io::stderr().is_terminal() && !out.json;
    let bar = indicatif::ProgressBar::new(before.total.max(0) as u64);
    if terminal {
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} · {per_sec} · eta {eta} · {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let step = (before.total / 20).max(1) as u64;
    let quiet = out.json;
    let report = move |p: engine::jobs::Progress| {
        let finished = p.done + p.failed;
        bar.set_length(p.total);
        bar.set_position(finished);
        bar.set_message(format!("{} failed · {} tokens · ${:.4}", p.failed, p.tokens, p.cost_usd));
        if !terminal && !quiet && (finished % step == 0 || finished == p.total) {
            eprintln!("{finished}/{} done, {} failed, {} tokens, ${:.4}", p.total, p.failed, p.tokens, p.cost_usd);
        }
    };
    let result = app::ssr::jobs::run(pool, llm, app::ssr::stages::stage, id, retry_failed, cancel, &report).await;
    ctrl_c.abort();
    // What the model did, said before anything else ends the command.
    if !out.json {
        if let Some(said) = app::ssr::store::jobs::outcome(pool, id).await.ok().and_then(|o| o.sentence()) {
            eprintln!("{said}");
        }
    }
    result?;
    let after = app::ssr::store::jobs::get_job(pool, id).await?;
    let code = if after.status == app::model::JobStatus::Done { ExitCode::SUCCESS } else { ExitCode::from(3) };
    Ok((code, after))
}

/// "offline (no LLM)", or the model and where it runs.
async fn ping(pool: SqlitePool, out: Output, llm: &LlmSettings, message: String) -> anyhow::Result<ExitCode> {
    // A connection test reports the exact error quickly: one retry at most.
    let store = std::sync::Arc::new(app::ssr::store::calls::SqliteCallStore::new(pool));
    let gateway =
        LlmSettings { max_attempts: 2, ..llm.clone() }.gateway(store, engine::offline::provider)?.without_cache();
    let mut req = ChatRequest::new("ping", vec![Message::user(message)]);
    req.max_tokens = Some(16);
    let reply = gateway.chat(&req, &CallContext::default()).await.context("LLM call failed")?;
    // A local server: does it answer one request at a time?
    let advice = if llm.is_local() {
        let one = std::time::Duration::from_millis(reply.latency_ms);
        engine::llm::settings::answers_one_at_a_time(&gateway, one)
            .await
            .ok()
            .and_then(|serial| llm.serial_advice(serial))
    } else {
        None
    };
    let context = gateway.provider().context_window().await;
    out.print(
        json!({"provider": reply.provider, "base_url": gateway.provider().base_url(), "model": reply.model, "reply": reply.text,
               "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
               "latency_ms": reply.latency_ms, "attempts": reply.attempts, "cost_usd": reply.cost_usd,
               "context_window": context, "advice": advice}),
        || {
            let mut s = format!(
                "{}\nreply: {}\n{} prompt + {} completion tokens, {} ms, {} attempt{}, ${:.6}",
                llm.describe(),
                reply.text,
                reply.prompt_tokens,
                reply.completion_tokens,
                reply.latency_ms,
                reply.attempts,
                if reply.attempts == 1 { "" } else { "s" },
                reply.cost_usd
            );
            if let Some(c) = context {
                s.push_str(&format!("\ncontext window: {c} tokens (prompts and reply budgets are fitted to it)"));
            }
            if let Some(a) = &advice {
                s.push_str(&format!("\nadvice: {a}"));
            }
            s
        },
    );
    Ok(ExitCode::SUCCESS)
}

async fn serve(pool: SqlitePool, db: &std::path::Path, llm: &LlmSettings, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let site = args.site.unwrap_or_else(crate::web::default_site_root);
    if !site.join("pkg").join("assay_bg.wasm").is_file() {
        tracing::warn!(site = %site.display(), "no built WASM under the site directory: pages will render but not hydrate (run scripts/build)");
    }
    let listener =
        tokio::net::TcpListener::bind(args.addr).await.with_context(|| format!("cannot listen on {}", args.addr))?;
    let addr = listener.local_addr()?;
    let options = crate::web::leptos_options(&site, addr);
    let orphans = app::ssr::store::jobs::interrupt_orphans(&pool).await?;
    if orphans > 0 {
        tracing::info!(orphans, "jobs left running by an earlier process are marked interrupted");
    }
    let mut config = args.limits.config();
    let mut llm = llm.clone();
    // The shell's other commands run as the operator, who may call any
    // address; the web server serves members, who may not unless allowed.
    llm.allow_private_urls = args.allow_private_urls;
    let llm = &llm;
    config.llm_base = llm.clone();
    config.require_login = !args.no_login;
    config.secure_cookies = args.secure_cookies;
    if args.no_login {
        println!("Owner login is OFF (--no-login): anyone who reaches {addr} can change everything.");
    } else if !app::ssr::auth::has_owner(&pool).await? {
        println!(
            "No owner yet: open http://{addr}/setup to create the owner account (or run `assay user create NAME`)."
        );
    }
    let in_force = match app::ssr::store::settings::load_llm(&pool).await? {
        Some(saved) => saved.apply(llm),
        None => llm.clone(),
    };
    println!("LLM provider: {}", in_force.describe());
    let router = crate::web::router(pool, config, in_force, options);
    println!("Assay is running at http://{addr}  (database: {})", db.display());
    crate::web::serve(listener, router).await?;
    Ok(ExitCode::SUCCESS)
}

/// The non-empty items of a comma-separated option, trimmed and mapped.
fn comma_list(s: &str, map: impl Fn(&str) -> String) -> Vec<String> {
    s.split(',').map(|t| map(t.trim())).filter(|t| !t.is_empty()).collect()
}

/// Writes an export to stdout. A reader that stops early (`| head`) is
/// not an error.
fn write_stdout(text: &str) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

#[derive(Clone, Copy)]
struct Output {
    json: bool,
}

impl Output {
    fn print(&self, value: serde_json::Value, human: impl FnOnce() -> String) {
        if self.json {
            println!("{value}");
        } else {
            println!("{}", human());
        }
    }
}

fn project_json(p: &ProjectView) -> serde_json::Value {
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

async fn project(pool: &SqlitePool, out: Output, cmd: ProjectCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ProjectCommand::Create { name, chunk_tokens, chunk_overlap, tokenizer } => {
            let Some(tokenizer) = Tokenizer::parse(&tokenizer) else {
                bail!("unknown tokenizer \"{tokenizer}\" (use cl100k_base or o200k_base)");
            };
            let settings = ChunkSettings { chunk_tokens, overlap_tokens: chunk_overlap, tokenizer };
            let p = app::ssr::store::create_project(pool, &name, &settings).await?;
            out.print(project_json(&p), || format!("Created project {} (id {})", p.summary.name, p.summary.id));
        }
        ProjectCommand::List => {
            let list = app::ssr::store::list_projects(pool).await?;
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
            let p = app::ssr::store::find_project(pool, &project).await?;
            let renamed = app::ssr::store::rename_project(pool, p.summary.id, &new_name).await?;
            out.print(project_json(&renamed), || format!("Renamed {} to {}", p.summary.name, renamed.summary.name));
        }
        ProjectCommand::Delete { project } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            app::ssr::store::delete_project(pool, p.summary.id).await?;
            out.print(json!({"deleted": p.summary.id, "name": p.summary.name}), || {
                format!("Deleted project {} and its {} documents", p.summary.name, p.summary.documents)
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn corpus(pool: &SqlitePool, out: Output, llm: &LlmSettings, cmd: CorpusCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CorpusCommand::Summarise { project, no_cache } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            let job = app::ssr::graph::create_summaries(pool, p.summary.id, no_cache).await?;
            return run_job(pool, out, llm, job.id, false).await;
        }
        CorpusCommand::Add { project, files, sample, limits } => {
            if files.is_empty() && !sample {
                bail!("name the files to add, or --sample for the sample corpus");
            }
            let p = app::ssr::store::find_project(pool, &project).await?;
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
                        .push(Skipped { file: path.display().to_string(), reason: format!("cannot read: {e}") }),
                }
            }
            if sample {
                loaded.extend(engine::sample::sample_files().map(|(n, b)| (n.to_string(), b.to_vec())));
            }
            let mut report = app::ssr::store::add_files(pool, p.summary.id, &loaded, &limits.config().import).await?;
            report.skipped.splice(0..0, unreadable);
            print_report(out, &p.summary.name, &report);
            // Every file refused and nothing added: a script should notice.
            if report.added == 0 && !report.skipped.is_empty() {
                return Ok(ExitCode::from(2));
            }
        }
        CorpusCommand::Stats { project } => {
            let p = app::ssr::store::find_project(pool, &project).await?;
            out.print(
                json!({"project": p.summary.name, "documents": p.summary.documents, "tokens": p.summary.tokens,
                       "chunks": p.summary.chunks, "chunk_tokens": p.chunk_tokens, "chunk_overlap": p.chunk_overlap, "tokenizer": p.tokenizer}),
                || {
                    format!(
                        "{}: {} documents, {} tokens, {} chunks ({} tokens, {} overlap, {})",
                        p.summary.name,
                        app::format::int(p.summary.documents),
                        app::format::int(p.summary.tokens),
                        app::format::int(p.summary.chunks),
                        p.chunk_tokens,
                        p.chunk_overlap,
                        p.tokenizer
                    )
                },
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(out: Output, project: &str, r: &UploadReport) {
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

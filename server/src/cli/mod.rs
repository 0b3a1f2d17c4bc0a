//! The `assay` command line. `serve` starts the web server; the other
//! subcommands run the same operations headless, for scripts and CI.
//!
//! Global options (`--db`, `--json`) go before or after the subcommand.
//! With `--json`, a command prints one JSON value on stdout and nothing
//! else; errors always go to stderr as one line, with a non-zero exit.

mod answers;
mod corpus;
mod db;
mod eval;
mod experiment;
mod graph;
mod job;
mod llm;
mod metrics;
mod project;
mod questions;
mod serve;
mod share;
mod study;
mod user;
mod worker;

use std::process::ExitCode;

use anyhow::Context;

use app::model::JobView;

use clap::{Args, Parser, Subcommand};

use engine::llm::settings::LlmSettings;

use engine::llm::ApiKey;

use serde_json::json;

use app::ssr::store::Db;

use corpus::{corpus, CorpusCommand};
use graph::{graph, GraphCommand};
use job::{job, JobCommand};
use llm::{ping, LlmCommand};
use project::{project, ProjectCommand};
use questions::{questions, QuestionsCommand};
use serve::{serve, LimitArgs, ServeArgs};

#[derive(Parser, Debug)]
#[command(name = "assay", version, about = "Assay: an unbiased evaluation workbench for GraphRAG methods")]
pub struct Cli {
    /// The database: an SQLite file (created if missing; the default is
    /// data/assay.db) or a PostgreSQL URL, postgres://user@host/dbname,
    /// for a team's server with several processes (docs/deploy.md).
    #[arg(long, global = true, env = "ASSAY_DB", value_name = "PATH|URL")]
    db: Option<String>,
    /// PostgreSQL: connections this process opens at most (the server's
    /// `max_connections`, 100 by default, is shared by every process).
    #[arg(long, global = true, env = "ASSAY_DB_CONNECTIONS", default_value_t = app::ssr::store::PG_CONNECTIONS)]
    db_connections: u32,
    /// PostgreSQL: seconds a claim on a shared job's item stands without a
    /// heartbeat before another process may take the item (at least 1).
    #[arg(long = "claim-timeout", global = true, env = "ASSAY_CLAIM_TIMEOUT", default_value_t = app::ssr::store::CLAIM_TIMEOUT)]
    claim_timeout: u64,
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
    /// The model's price as INPUT,OUTPUT[,CACHED_INPUT] in USD per million tokens (overrides the built-in
    /// list; CACHED_INPUT: prompt tokens the provider read from its prefix cache, else at INPUT).
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
    /// Send jobs' model calls through the provider's Batch API: half the
    /// price at OpenAI, answered within its 24 h window (calls outside jobs
    /// go live).
    #[arg(long = "llm-batch", global = true, env = "ASSAY_LLM_BATCH", default_value = "off", value_parser = ["on", "off"])]
    llm_batch: String,
    /// Which settings came as flags (from the parse's value sources).
    #[arg(skip)]
    pinned: Vec<&'static str>,
}

impl LlmArgs {
    fn settings(&self) -> anyhow::Result<LlmSettings> {
        let key = std::env::var("ASSAY_LLM_API_KEY")
            .ok()
            .filter(|k| !k.trim().is_empty())
            .or_else(|| std::env::var("OPENAI_API_KEY").ok());
        let mut settings = LlmSettings {
            provider: engine::llm::settings::parse_provider(&self.llm_provider)?,
            base_url: self.llm_base_url.trim_end_matches('/').to_string(),
            model: self.llm_model.clone(),
            api_key: key.and_then(ApiKey::new),
            concurrency: self.llm_concurrency,
            timeout: std::time::Duration::from_secs(self.llm_timeout),
            embed_model: self.embed_model.clone(),
            minilm_dir: self.minilm_dir.clone().unwrap_or_else(crate::default_minilm_dir),
            // Commands run by the machine's operator: any address.
            allow_private_urls: true,
            pinned: self.pinned.clone(),
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
        settings.batch = self.llm_batch == "on";
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
    /// Reference-based metrics of answer sets (HieraRAG): MAP, nDCG, Recall,
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
    /// Move a whole database: an SQLite file into PostgreSQL, or back.
    #[command(subcommand)]
    Db(db::DbCommand),
    /// Take part in the jobs of a PostgreSQL database several processes
    /// share: no web interface, any number of them, on any machine that
    /// reaches the database (docs/deploy.md).
    Worker(worker::WorkerArgs),
}

/// The process environment, as the configuration hands it down.
pub(crate) fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

pub fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // The LLM settings given as flags, not by the environment or a default
    // (global flags' values and sources reach the top level's matches).
    let on_command_line = |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    cli.llm.pinned = [
        ("llm_provider", "provider"),
        ("llm_base_url", "base_url"),
        ("llm_model", "model"),
        ("llm_concurrency", "concurrency"),
        ("llm_batch", "batch"),
    ]
    .into_iter()
    .filter(|(id, _)| on_command_line(id))
    .map(|(_, field)| field)
    .collect();
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
    // A manifest is checked before the database is opened or created.
    let manifest = match &cli.command {
        Command::Run(args) => Some(experiment::load(args)?),
        _ => None,
    };
    let out = Output { json: cli.json };
    // `db copy` names its own two databases.
    if let Command::Db(cmd) = cli.command {
        return db::run(out, cmd).await;
    }
    let db = cli.db.clone().unwrap_or_else(|| crate::default_db_path().display().to_string());
    let shown = crate::shown_db(&db);
    let options = app::ssr::store::OpenOptions { connections: cli.db_connections, claim_timeout: cli.claim_timeout };
    let pool = app::ssr::store::open_target_with(&db, options).await.with_context(|| shown.clone())?;
    let llm = cli.llm.settings()?;
    match cli.command {
        Command::Serve(args) => serve(pool, &shown, &llm, args).await,
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
        Command::Worker(args) => worker::run(pool, &shown, &llm, args).await,
        Command::Db(_) => unreachable!("handled before the database is opened"),
    }
}

fn job_json(j: &JobView) -> serde_json::Value {
    let mut v = serde_json::to_value(j).unwrap_or_default();
    v["parameters"] = j.parameters.clone().into();
    v
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

/// Runs a job in the foreground and prints the job.
async fn run_job(pool: &Db, out: Output, llm: &LlmSettings, id: i64, retry_failed: bool) -> anyhow::Result<ExitCode> {
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
    pool: &Db,
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
        // The pace is this run's (items finished since it started), in the
        // message: indicatif's own rate reads "0.0/s" for a slow model.
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} finished · eta {eta} · {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let step = (before.total / 20).max(1) as u64;
    let quiet = out.json;
    // Items finished before this run: a retry runs the failed ones again.
    let earlier = (before.done + if retry_failed { 0 } else { before.failed }).max(0) as u64;
    let started = std::time::Instant::now();
    let report = move |p: engine::jobs::Progress| {
        let finished = p.done + p.failed;
        let pace = app::format::pace(finished.saturating_sub(earlier), started.elapsed().as_secs_f64());
        bar.set_length(p.total);
        bar.set_position(finished);
        bar.set_message(format!(
            "{} done, {} failed · {pace} · {} tokens · ${:.4}",
            p.done, p.failed, p.tokens, p.cost_usd
        ));
        if !terminal && !quiet && (finished % step == 0 || finished == p.total) {
            eprintln!(
                "{finished}/{} finished ({} done, {} failed) · {pace} · {} tokens, ${:.4}",
                p.total, p.done, p.failed, p.tokens, p.cost_usd
            );
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

/// The JSON file an option names, read as a `T`; what is wrong names the
/// option and the file.
fn json_file<T: serde::de::DeserializeOwned>(path: &std::path::Path, option: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{option} {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{option} {}: {e}", path.display()))
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

//! `assay worker`: a process with no web interface that takes part in the
//! jobs of a PostgreSQL database several processes share (docs/deploy.md).
//! It joins every running job with items free to claim — new ones, or
//! those a dead process held — runs them under the configured LLM
//! settings, and at Ctrl-C or SIGTERM gives its claims back and stops; the
//! jobs go on in the other processes.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use app::ssr::store::Db;
use clap::Args;
use engine::llm::settings::LlmSettings;
use tokio_util::sync::CancellationToken;

#[derive(Args, Debug)]
pub(super) struct WorkerArgs {
    /// How often to look for jobs to join, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    poll_ms: u64,
}

pub(super) async fn run(pool: Db, db: &str, llm: &LlmSettings, args: WorkerArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        pool.is_postgres(),
        "assay worker needs a PostgreSQL database (--db postgres://…): an SQLite file's jobs run in the process that starts them"
    );
    // As `serve`: the settings saved from the browser, over the flags.
    // A server's flags are its configuration, not a manifest's override:
    // a manifest uploaded in the browser says its own [llm].
    let llm = &LlmSettings { pinned: Vec::new(), ..llm.clone() };
    let in_force = match app::ssr::store::settings::load_llm(&pool).await? {
        Some(saved) => saved.apply(llm),
        None => llm.clone(),
    };
    let in_force = Arc::new(in_force);
    eprintln!(
        "assay worker {} on {db}: LLM {}, {} requests at once; claims lapse after {} s without a heartbeat",
        pool.claimant(),
        in_force.describe(),
        in_force.concurrency,
        pool.claim_timeout()
    );
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let terminated = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminated => {}
        }
        eprintln!("stopping: giving this worker's claims back");
        on_signal.cancel();
    });
    let manager = Arc::new(app::ssr::jobs::JobManager::new(app::ssr::stages::stage));
    manager.work_shared_queue(pool, move || in_force.clone(), Duration::from_millis(args.poll_ms.max(10)), stop).await;
    Ok(ExitCode::SUCCESS)
}

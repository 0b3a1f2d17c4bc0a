//! Helpers shared by the CLI integration tests.

use std::path::Path;
use std::process::{Command, Output};

/// `assay ARGS --db DB` with the LLM environment cleared, then `env` set:
/// tests never pick up the developer's own provider or key.
pub fn assay_command(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assay"));
    cmd.args(args).arg("--db").arg(db);
    for var in [
        "ASSAY_LLM_PROVIDER",
        "ASSAY_LLM_BASE_URL",
        "ASSAY_LLM_MODEL",
        "ASSAY_LLM_API_KEY",
        "OPENAI_API_KEY",
        "ASSAY_LLM_PRICE",
        "ASSAY_LLM_CONCURRENCY",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs it off the async runtime's threads, so a mock server in the same
/// test keeps answering.
pub async fn assay(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = assay_command(db, args, env);
    tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap()
}

/// The JSON a successful `assay --json …` printed.
#[allow(dead_code)] // not every test file reads JSON
pub fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "failed ({:?}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

//! Seed 000's experiment (`examples/unbiased-sherlock.toml`: graph, 150 graph
//! and 125 summary questions, 4 methods, the unbiased protocol over 6 pairs
//! with N = 2, M = 25) run by the `assay` release binary through the
//! OpenAI-compatible mock server at zero latency — every call an HTTP
//! request through the real client. The mock answers each task as the
//! offline provider would (it reads the task from the `X-Assay-Purpose`
//! header), so the pipeline runs through; its own time composing replies
//! is summed, and what is left of the wall time is Assay's overhead:
//! (wall − mock's time) / calls.
//!
//!   cargo bench -p server --bench mock_pipeline   (ASSAY_BIN: the binary; default target/release/assay)

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use mockllm::{MockConfig, MockServer, Responder};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var_os("ASSAY_BIN").map(PathBuf::from).unwrap_or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
        target.join("release/assay")
    });
    let corpora =
        std::env::var_os("ASSAY_CORPORA").map(PathBuf::from).unwrap_or_else(|| root.join("../shared/corpora"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let offline = Arc::new(engine::offline::provider());
        let respond = move |req: &serde_json::Value| offline.answer_body(req);
        let mock = MockServer::start(MockConfig {
            responder: Some(Responder(Arc::new(respond))),
            lean: true,
            ..Default::default()
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let manifest = std::fs::read_to_string(root.join("examples/unbiased-sherlock.toml"))
            .unwrap()
            .replace("../../shared/corpora/sherlock_holmes.txt", &corpora.join("sherlock_holmes.txt").display().to_string())
            .replace(
                "[llm]\nprovider = \"offline\"",
                &format!("[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"mock\"", mock.base_url()),
            )
            .replace("judge = \"offline\"", "judge = \"llm\"");
        assert!(manifest.contains("provider = \"openai\""), "the example's [llm] section changed");
        let file = dir.path().join("seed000-mock.toml");
        std::fs::write(&file, manifest).unwrap();
        let db = dir.path().join("m.db");
        let started = Instant::now();
        let command = (bin.clone(), db.clone(), file.clone());
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new(&command.0)
                .args(["--db", command.1.to_str().unwrap(), "--json", "run", command.2.to_str().unwrap()])
                .env("ASSAY_LLM_PROVIDER", "")
                .output()
        })
        .await
        .unwrap()
        .expect("run the assay binary (ASSAY_BIN)");
        let wall = started.elapsed();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let stats = mock.stats();
        println!("seed 000 through the mock server (zero latency), {}", bin.display());
        for s in run["stages"].as_array().unwrap() {
            println!(
                "  {:<44} {:>8} new {:>7} cached {:>7.1} s",
                s["label"].as_str().unwrap_or(""),
                s["new_calls"],
                s["cached_calls"],
                s["seconds"].as_f64().unwrap_or(0.0)
            );
        }
        let calls = stats.ok.max(1);
        let own = wall.saturating_sub(stats.busy);
        println!(
            "wall {:.1} s; mock requests answered {}; the mock's own time {:.1} s; Assay's time {:.1} s = {:.0} µs per call",
            wall.as_secs_f64(),
            stats.ok,
            stats.busy.as_secs_f64(),
            own.as_secs_f64(),
            own.as_secs_f64() * 1e6 / calls as f64
        );
    });
}

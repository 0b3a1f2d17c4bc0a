//! Where ingestion's time goes, phase by phase (issue #40):
//! `cargo run --release -p engine --example ingest_phases -- 1048576`.
use engine::chunk::{chunk_text, ChunkSettings, Tokenizer};
use std::time::Instant;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let text = "ab".repeat(n / 2);
    let t = Instant::now();
    let tokens = Tokenizer::Cl100kBase.count(&text);
    let count = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let chunks = chunk_text(&text, &ChunkSettings::default()).unwrap();
    let chunk = t.elapsed().as_secs_f64();
    println!("{n} bytes: count {tokens} tokens in {count:.3} s; {} chunks in {chunk:.3} s", chunks.len());
}

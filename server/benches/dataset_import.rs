//! A benchmark's files at and beyond the papers' scale: a
//! GraphRAG-Bench pair as its repository lays it out — a corpus of 20
//! novels of 45,000 words each (windows of Sherlock Holmes, ~1.2 M tokens;
//! GraphRAG-Bench's novel subset is 20 books) and 5,000 questions of its
//! four types (its novel subset has 2,010), each with a quoted sentence of
//! evidence. Measures the engine's read and evidence location in process,
//! then `assay questions import` end to end on a SQLite file, answering the
//! set with BM25, and the exports LightRAG's and GraphRAG-Bench's tools read
//! (wall time and each process's peak resident memory).
//!
//!     cargo bench -p server --bench dataset_import            (release)
//!     cargo bench -p server --bench dataset_import --profile dev

use std::process::Command;
use std::time::Instant;

const NOVELS: usize = 20;
const WORDS: usize = 45_000;
const QUESTIONS: usize = 5_000;
const TYPES: [&str; 4] = ["Fact Retrieval", "Complex Reasoning", "Contextual Summarize", "Creative Generation"];

/// (questions file, corpus file) under `dir`.
fn write_files(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, Vec<String>) {
    let novel = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/sherlock_holmes.txt"),
    )
    .unwrap();
    let words: Vec<&str> = novel.split_whitespace().collect();
    let mut rng = fastrand::Rng::with_seed(11);
    let texts: Vec<Vec<&str>> = (0..NOVELS)
        .map(|n| {
            let start = (n * 7_919) % words.len();
            (0..WORDS).map(|i| words[(start + i) % words.len()]).collect()
        })
        .collect();
    let corpus: Vec<serde_json::Value> = texts
        .iter()
        .enumerate()
        .map(|(n, t)| serde_json::json!({"corpus_name": format!("Novel-{n}"), "context": t.join(" ")}))
        .collect();
    let mut evidence = Vec::new();
    let questions: Vec<serde_json::Value> = (0..QUESTIONS)
        .map(|i| {
            let n = rng.usize(..NOVELS);
            let at = rng.usize(..WORDS - 20);
            let quote = texts[n][at..at + 14].join(" ");
            evidence.push(quote.clone());
            serde_json::json!({
                "id": format!("Novel-{n}-{i:05}"),
                "source": format!("Novel-{n}"),
                "question": format!("Question {i} about \"{}\"?", texts[n][at..at + 5].join(" ")),
                "answer": texts[n][at + 5..at + 12].join(" "),
                "question_type": TYPES[i % TYPES.len()],
                "evidence": [quote],
            })
        })
        .collect();
    let q = dir.join("novel_questions.json");
    let c = dir.join("novel.json");
    std::fs::write(&q, serde_json::to_vec(&questions).unwrap()).unwrap();
    std::fs::write(&c, serde_json::to_vec(&corpus).unwrap()).unwrap();
    (q, c, evidence)
}

/// Runs `assay ARGS --db DB`: (wall seconds, peak RSS in MB, stdout).
fn timed(db: &std::path::Path, args: &[&str]) -> (f64, f64, Vec<u8>) {
    let t = Instant::now();
    let out_path = db.with_extension(format!("out{}", fastrand::u32(..)));
    let child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .arg("--db")
        .arg(db)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .spawn()
        .unwrap();
    // /usr/bin/time is not everywhere: the child's peak RSS from wait4.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(status, 0, "assay {args:?} failed");
    let out = std::fs::read(&out_path).unwrap();
    (t.elapsed().as_secs_f64(), usage.ru_maxrss as f64 / 1024.0, out)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (q, c, evidence) = write_files(dir.path());
    println!(
        "GraphRAG-Bench files: {NOVELS} novels × {WORDS} words ({:.1} MB), {QUESTIONS} questions ({:.1} MB)",
        std::fs::metadata(&c).unwrap().len() as f64 / 1e6,
        std::fs::metadata(&q).unwrap().len() as f64 / 1e6
    );

    // The engine alone: read both files, index 1,200-token chunks, locate.
    let (qb, cb) = (std::fs::read(&q).unwrap(), std::fs::read(&c).unwrap());
    let t = Instant::now();
    let data = engine::datasets::read(
        engine::datasets::Format::GraphRagBench,
        &engine::datasets::File { name: "novel_questions.json", bytes: &qb },
        Some(&engine::datasets::File { name: "novel.json", bytes: &cb }),
        &Default::default(),
    )
    .unwrap();
    let read = t.elapsed().as_secs_f64();
    let chunks: Vec<(i64, String)> = data
        .documents
        .iter()
        .flat_map(|d| {
            d.text.split_whitespace().collect::<Vec<_>>().chunks(900).map(|w| w.join(" ")).collect::<Vec<_>>()
        })
        .enumerate()
        .map(|(i, t)| (i as i64, t))
        .collect();
    let t = Instant::now();
    let index = engine::datasets::EvidenceIndex::new(chunks.iter().map(|(i, t)| (*i, t.as_str())));
    let indexed = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let located = evidence.iter().filter(|e| !index.locate(std::slice::from_ref(*e), None).is_empty()).count();
    println!(
        "engine: read {read:.2} s; evidence index over {} chunks {indexed:.2} s; {QUESTIONS} locates {:.2} s ({located} located)",
        chunks.len(),
        t.elapsed().as_secs_f64()
    );

    let db = dir.path().join("bench.db");
    timed(&db, &["project", "create", "Bench"]);
    let (wall, rss, out) = timed(
        &db,
        &[
            "--json",
            "questions",
            "import",
            "Bench",
            q.to_str().unwrap(),
            "--format",
            "graphrag-bench",
            "--corpus",
            c.to_str().unwrap(),
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    println!(
        "assay questions import: {wall:.1} s wall, peak RSS {rss:.0} MB — {} documents, {} chunks, {} questions, evidence located for {}",
        report["documents_added"], report["chunks_added"], report["questions"], report["evidence_located"]
    );
    let set = report["set_id"].to_string();
    let (wall, rss, out) = timed(&db, &["--json", "answers", "generate", "Bench", "--set", &set, "--method", "bm25"]);
    let answers: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let answer_set = answers["answers_id"].to_string();
    println!("assay answers generate (bm25, offline): {wall:.1} s wall, peak RSS {rss:.0} MB");
    let (wall, rss, out) = timed(&db, &["questions", "export", "Bench", "--set", &set, "--format", "lightrag"]);
    println!("questions export --format lightrag: {wall:.2} s, peak RSS {rss:.0} MB, {:.1} MB", out.len() as f64 / 1e6);
    for format in ["lightrag", "graphrag-bench"] {
        let (wall, rss, out) =
            timed(&db, &["answers", "export", "Bench", "--answers", &answer_set, "--format", format]);
        let list: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(list.as_array().map(Vec::len), Some(QUESTIONS));
        println!(
            "answers export --format {format}: {wall:.2} s, peak RSS {rss:.0} MB, {:.1} MB",
            out.len() as f64 / 1e6
        );
    }
    let (wall, rss, _) = timed(&db, &["--json", "metrics", "run", "Bench", "--set", &set, "--answers", &answer_set]);
    println!("assay metrics run (MAP/nDCG/Recall against the evidence): {wall:.1} s wall, peak RSS {rss:.0} MB");
}

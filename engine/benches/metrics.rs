//! Reference-based metrics over 5,000 question–answer pairs drawn from a
//! real novel (`sherlock_holmes.txt`): each reference two consecutive
//! sentences, its answer the three sentences from the second on (so they
//! overlap as a fair answer does), its retrieval BM25's top 10 of the
//! novel's 512-token chunks (seed 004's configuration) for the reference,
//! and as relevant the chunk the reference came from; categories spread
//! over a 2/4/8 hierarchy and an LV × QC design. One timed run (a bench
//! binary, not criterion: a run embeds ~10,000 texts):
//!   1. every metric, embedding included (all-MiniLM-L6-v2 in process);
//!   2. the same again with the embeddings computed once reused (the cache
//!      a second run loads from storage): no text embedded;
//!   3. the granularity analysis and the factorial table.
//!
//! Wall time per phase and the process's peak RSS.
//! `cargo bench -p engine --bench metrics`

#[path = "common/mod.rs"]
mod common;

use std::time::Instant;

use common::cpu_and_rss;
use engine::chunk::{chunk_text, ChunkSettings};
use engine::embed::minilm::MiniLm;
use engine::metrics::factorial::{self, Observation};
use engine::metrics::granularity::{self, Scored};
use engine::metrics::score::{score_all, EmbeddingCache, Pair};
use engine::rag::bm25::Bm25Index;

const PAIRS: usize = 5_000;

fn main() {
    let dir = std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into());
    let text = std::fs::read_to_string(format!("{dir}/sherlock_holmes.txt")).unwrap().replace("\r\n", "\n");
    let model_dir = std::env::var_os("ASSAY_MINILM_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../data/models/all-MiniLM-L6-v2"))
    });
    let model = MiniLm::load(&model_dir).unwrap_or_else(|e| panic!("{e}"));

    let chunks =
        chunk_text(&text, &ChunkSettings { chunk_tokens: 512, chunk_overlap: 50, ..Default::default() }).unwrap();
    let index = Bm25Index::new(chunks.iter().map(|c| (c.index as i64, &text[c.start..c.end])));
    // Sentences with the chunk each starts in.
    let mut sentences: Vec<(String, i64)> = Vec::new();
    let mut offset = 0;
    for piece in text.split_inclusive(['.', '?', '!']) {
        let s = piece.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.split(' ').count() >= 4 {
            let chunk = chunks.iter().rev().find(|c| c.start <= offset).map_or(0, |c| c.index as i64);
            sentences.push((s, chunk));
        }
        offset += piece.len();
    }
    assert!(sentences.len() > PAIRS + 4, "{} sentences", sentences.len());
    let started = Instant::now();
    let pairs: Vec<Pair> = (0..PAIRS)
        .map(|i| {
            let reference = format!("{} {}", sentences[i].0, sentences[i + 1].0);
            let ranked = index.search(&reference, 10).into_iter().map(|(id, _)| id).collect();
            Pair {
                answer: format!("{} {} {}", sentences[i + 1].0, sentences[i + 2].0, sentences[i + 3].0),
                reference,
                ranked,
                relevant: vec![sentences[i].1],
            }
        })
        .collect();
    let words: usize = pairs.iter().map(|p| p.reference.split(' ').count() + p.answer.split(' ').count()).sum();
    println!(
        "{PAIRS} pairs from {} sentences of sherlock_holmes.txt ({} chunks of 512 tokens; {:.1} words per text); BM25 top 10 in {:.2} s",
        sentences.len(),
        chunks.len(),
        words as f64 / (2 * PAIRS) as f64,
        started.elapsed().as_secs_f64()
    );

    let (cpu0, _) = cpu_and_rss();
    let started = Instant::now();
    let mut cache = EmbeddingCache::new();
    let scores = score_all(&pairs, &model, &mut cache, 10).unwrap();
    let first = started.elapsed();
    let (cpu1, rss1) = cpu_and_rss();
    println!(
        "1. all metrics, embedding included: {:.1} s ({} texts embedded, {:.0} texts/s; CPU {:.1} s) · peak RSS {:.0} MB",
        first.as_secs_f64(),
        cache.embedded,
        cache.embedded as f64 / first.as_secs_f64(),
        (cpu1 - cpu0).as_secs_f64(),
        rss1 as f64 / 1024.0
    );

    let started = Instant::now();
    let before = cache.embedded;
    let again = score_all(&pairs, &model, &mut cache, 10).unwrap();
    let second = started.elapsed();
    assert_eq!(again, scores);
    println!(
        "2. again with the embeddings reused: {:.2} s ({} texts embedded; {:.1} µs per pair)",
        second.as_secs_f64(),
        cache.embedded - before,
        second.as_secs_f64() * 1e6 / PAIRS as f64
    );

    let started = Instant::now();
    let scored: Vec<Scored> = scores
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let fine = ["a", "b", "c", "d", "e", "f", "g", "h"][i % 8];
            let path = match i % 3 {
                0 => format!("QC/{}", ["simple", "complex"][i % 2]),
                1 => format!("QC/{}/{}", ["simple", "complex"][i % 2], ["m1", "m2"][i / 2 % 2]),
                _ => format!("QC/{}/{}/{fine}", ["simple", "complex"][i % 2], ["m1", "m2"][i / 2 % 2]),
            };
            Scored { category: path, score: s.cs }
        })
        .collect();
    let analysis = granularity::analyse(&scored, 4);
    let obs: Vec<Observation> = scores
        .iter()
        .enumerate()
        .map(|(i, s)| Observation {
            lv: ["similar", "distant"][i % 2].into(),
            qc: ["simple", "complex"][i / 2 % 2].into(),
            ap: s.ap,
            cs: s.cs,
        })
        .collect();
    let table = factorial::table(&obs, &[], &[]);
    let third = started.elapsed();
    let (_, rss) = cpu_and_rss();
    let mean = |f: &dyn Fn(&engine::metrics::score::PairScores) -> f64| {
        scores.iter().map(f).sum::<f64>() / scores.len() as f64
    };
    println!(
        "3. granularity ({} levels, {} splits) and factorial ({} cells): {:.1} ms",
        analysis[0].levels.len(),
        analysis[0].splits.len(),
        table.cells.len(),
        third.as_secs_f64() * 1e3
    );
    println!(
        "means: MAP {:.3} · Recall@10 {:.3} · CS {:.3} · ROUGE-1 {:.3} · BLEU {:.2}",
        mean(&|s| s.ap.unwrap_or(0.0)),
        mean(&|s| s.recall.unwrap_or(0.0)),
        mean(&|s| s.cs),
        mean(&|s| s.rouge1),
        mean(&|s| s.bleu)
    );
    println!("total {:.1} s · peak RSS {:.0} MB", (first + second + third).as_secs_f64(), rss as f64 / 1024.0);
}

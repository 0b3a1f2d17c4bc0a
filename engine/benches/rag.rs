//! Retrieval latency per question of each built-in method (no LLM: the
//! context each would hand the answer prompt) on a graph built offline from
//! a novel (`sherlock_holmes.txt`, 512-token chunks, seed 004's BM25
//! configuration), and all-MiniLM-L6-v2 throughput (sentences per second,
//! batches of 32 chunk-length passages). Python sentence-transformers'
//! throughput on the same passages is measured by `scripts/bench` when a
//! Python with it is given (`ASSAY_ST_PYTHON`).
//! `cargo bench -p engine --bench rag`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use engine::chunk::{chunk_text, ChunkSettings};
use engine::embed::minilm::MiniLm;
use engine::graph::KnowledgeGraph;
use engine::rag::bm25::Bm25Method;
use engine::rag::fastgraphrag::{FastGraphRag, FastGraphRagSettings};
use engine::rag::graphrag::{GraphRag, GraphRagSettings};
use engine::rag::lightrag::{Keywords, LightRag, LightRagSettings};
use engine::rag::naive::NaiveRag;
use engine::rag::{CommunityReport, Corpus};

fn corpus(name: &str) -> String {
    let dir = std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into());
    std::fs::read_to_string(format!("{dir}/{name}")).unwrap().replace("\r\n", "\n")
}

fn minilm() -> MiniLm {
    let dir = std::env::var_os("ASSAY_MINILM_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../data/models/all-MiniLM-L6-v2"))
    });
    MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"))
}

const QUESTIONS: [&str; 4] = [
    "What did Sherlock Holmes deduce about Irene Adler?",
    "How is the red-headed league connected to the pawnbroker's shop?",
    "Why does Holmes distrust the official police?",
    "What role does Dr. Watson play in the adventures?",
];

fn bench(c: &mut Criterion) {
    let text = corpus("sherlock_holmes.txt");
    let settings = ChunkSettings { chunk_tokens: 512, chunk_overlap: 50, ..Default::default() };
    let chunks = chunk_text(&text, &settings).unwrap();
    let mut graph = KnowledgeGraph::default();
    let started = Instant::now();
    let pairs: Vec<(i64, String)> =
        chunks.iter().map(|ch| (ch.index as i64, text[ch.start..ch.end].to_string())).collect();
    for (id, body) in &pairs {
        graph.merge(*id, &engine::graph::offline::extract(body));
    }
    let communities = graph.communities(7);
    println!(
        "sherlock_holmes.txt: {} chunks, offline graph {} nodes / {} edges / {} communities in {:.1} s",
        pairs.len(),
        graph.nodes.len(),
        graph.edges.len(),
        communities.values().max().map_or(0, |m| m + 1),
        started.elapsed().as_secs_f64()
    );
    let reports: Vec<CommunityReport> = engine::rag::graphrag::reportable(&graph, &communities)
        .keys()
        .map(|&c| CommunityReport {
            community: c,
            title: format!("community {c}"),
            summary: "A community.".into(),
            rating: 5.0,
        })
        .collect();
    let corpus = Arc::new(Corpus::new(pairs.clone(), graph, communities).with_reports(reports));

    let mut group = c.benchmark_group("retrieval per question");
    let bm25 = Bm25Method::new(corpus.clone(), 10);
    group.bench_function("bm25 (k = 10)", |b| {
        b.iter(|| QUESTIONS.iter().map(|q| bm25.chunks(black_box(q)).len()).sum::<usize>())
    });
    let light = LightRag::new(corpus.clone(), LightRagSettings::default()).unwrap();
    let keywords: Vec<Keywords> = QUESTIONS
        .iter()
        .map(|q| {
            let reply = engine::rag::lightrag::offline(&engine::rag::lightrag::request(q)).unwrap();
            engine::rag::lightrag::parse_keywords(&reply).unwrap()
        })
        .collect();
    group.bench_function("lightrag (hybrid, top_k 60)", |b| {
        b.iter(|| keywords.iter().map(|k| light.context(black_box(k)).len()).sum::<usize>())
    });
    let fast = FastGraphRag::new(corpus.clone(), FastGraphRagSettings::default()).unwrap();
    let names: Vec<Vec<String>> = QUESTIONS.iter().map(|q| engine::graph::offline::names_in(q)).collect();
    group.bench_function("fastgraphrag (seeds + PPR)", |b| {
        b.iter(|| {
            QUESTIONS.iter().zip(&names).map(|(q, n)| fast.context(&fast.seeds(black_box(n), q)).len()).sum::<usize>()
        })
    });
    let local = GraphRag::new(corpus.clone(), GraphRagSettings::default()).unwrap();
    group.bench_function("graphrag-local", |b| {
        b.iter(|| QUESTIONS.iter().map(|q| local.local_context(black_box(q)).len()).sum::<usize>())
    });
    let model = Arc::new(minilm());
    let texts: Vec<&str> = pairs.iter().map(|p| p.1.as_str()).collect();
    let vectors: Vec<(i64, Vec<f32>)> = texts
        .chunks(32)
        .flat_map(|b| model.embed(b).unwrap())
        .zip(pairs.iter().map(|p| p.0))
        .map(|(v, id)| (id, v))
        .collect();
    let naive = NaiveRag::new(corpus.clone(), vectors, engine::embed::Embedder::MiniLm(model.clone()), 5);
    group.bench_function("naive (MiniLM question + cosine top 5)", |b| {
        b.iter(|| {
            QUESTIONS.iter().map(|q| naive.nearest(&model.embed(&[black_box(q)]).unwrap()[0]).len()).sum::<usize>()
        })
    });
    group.finish();

    // MiniLM throughput: passages as they are embedded for NaiveRAG.
    let sample: Vec<&str> = texts.iter().take(128).copied().collect();
    let started = Instant::now();
    for b in sample.chunks(32) {
        black_box(model.embed(b).unwrap());
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "MiniLM (Rust, candle): {} passages of 512 cl100k tokens (truncated at 256 model tokens), batch 32: {:.1} passages/s",
        sample.len(),
        sample.len() as f64 / secs
    );
    let short: Vec<&str> = QUESTIONS.iter().cycle().take(128).copied().collect();
    let started = Instant::now();
    for b in short.chunks(32) {
        black_box(model.embed(b).unwrap());
    }
    println!(
        "MiniLM (Rust, candle): 128 questions, batch 32: {:.1} sentences/s",
        128.0 / started.elapsed().as_secs_f64()
    );
    if let Ok(path) = std::env::var("ASSAY_BENCH_PASSAGES") {
        std::fs::write(path, serde_json::to_string(&sample).unwrap()).unwrap();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);

//! Corpus import and chunking on the real novels in ../shared/corpora:
//! `cargo bench -p engine --bench corpus`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use engine::chunk::{chunk_text, Bpe, ChunkSettings, Tokenizer};
use engine::corpus::{import_files, ImportLimits};

fn read(name: &str) -> Vec<u8> {
    let dir = std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into());
    std::fs::read(format!("{dir}/{name}")).unwrap()
}

fn corpus(c: &mut Criterion) {
    let alice = read("alice_in_wonderland.txt");
    let sherlock = read("sherlock_holmes.txt");
    let mix = read("ultradomain_mix_slice5.jsonl");
    let alice_text = String::from_utf8(alice.clone()).unwrap().replace("\r\n", "\n");
    let sherlock_text = String::from_utf8(sherlock.clone()).unwrap().replace("\r\n", "\n");

    let mut g = c.benchmark_group("import");
    g.throughput(Throughput::Bytes((alice.len() + mix.len()) as u64));
    g.bench_function("alice+ultradomain", |b| {
        b.iter(|| import_files([("alice.txt", &alice[..]), ("mix.jsonl", &mix[..])], &ImportLimits::default()))
    });
    g.finish();

    let mut g = c.benchmark_group("tokens");
    g.throughput(Throughput::Bytes(sherlock_text.len() as u64));
    g.bench_function("count sherlock cl100k", |b| b.iter(|| Tokenizer::Cl100kBase.count(&sherlock_text)));
    g.finish();

    let mut g = c.benchmark_group("chunk");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(alice_text.len() as u64));
    g.bench_function("alice 1200/100", |b| b.iter(|| chunk_text(&alice_text, &ChunkSettings::default()).unwrap()));
    g.throughput(Throughput::Bytes(sherlock_text.len() as u64));
    let hiera = ChunkSettings { chunk_tokens: 512, chunk_overlap: 50, tokenizer: Tokenizer::Cl100kBase };
    g.bench_function("sherlock 512/50", |b| b.iter(|| chunk_text(&sherlock_text, &hiera).unwrap()));
    g.finish();
}

criterion_group!(benches, corpus);
criterion_main!(benches);

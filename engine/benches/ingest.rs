//! Ingestion in time linear in the text: counting and chunking
//! texts text-splitter took quadratic time on (one unbroken word, `abab…`,
//! CJK without punctuation), beside prose, at 64 KB … 8 MB:
//! `cargo bench -p engine --bench ingest`. Each measurement is what an
//! upload does with a document: its token count, then its chunks.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use engine::chunk::{chunk_text, Bpe, ChunkSettings, Tokenizer};

fn read(name: &str) -> String {
    let dir = std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into());
    std::fs::read_to_string(format!("{dir}/{name}")).unwrap().replace("\r\n", "\n")
}

/// `n` bytes of `pattern`'s text (whole characters).
fn text(pattern: &str, n: usize, prose: &str) -> String {
    let mut t = match pattern {
        "abab" => "ab".repeat(n / 2 + 1),
        "one word" => (0..n).map(|i| (b'a' + ((i * 7919 + i / 3) % 26) as u8) as char).collect(),
        "han" => "中文字".repeat(n / 9 + 1),
        _ => prose.repeat(n / prose.len() + 1),
    };
    let mut cut = n.min(t.len());
    while !t.is_char_boundary(cut) {
        cut -= 1;
    }
    t.truncate(cut);
    t
}

fn ingest(c: &mut Criterion) {
    let prose = read("sherlock_holmes.txt");
    let settings = ChunkSettings::default();
    let mut g = c.benchmark_group("ingest");
    g.sample_size(10);
    for pattern in ["abab", "one word", "han", "prose"] {
        for kb in [64usize, 256, 1024, 4096, 8192] {
            let t = text(pattern, kb << 10, &prose);
            g.throughput(Throughput::Bytes(t.len() as u64));
            g.bench_with_input(BenchmarkId::new(pattern, kb), &t, |b, t| {
                b.iter(|| (Tokenizer::Cl100kBase.count(t), chunk_text(t, &settings).unwrap().len()))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, ingest);
criterion_main!(benches);

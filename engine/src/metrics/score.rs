//! Scoring question–answer pairs against their references in bulk: every
//! metric of [`super`] for each pair, with each distinct text embedded once
//! (batches of [`BATCH`] through all-MiniLM-L6-v2) and its vector kept in
//! an [`EmbeddingCache`] the caller may fill from storage beforehand and
//! save afterwards, so a second run over the same texts embeds nothing.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{average_precision, cosine, ndcg_at, recall_at, text, Definitions};
use crate::embed::minilm::MiniLm;

/// Texts per embedding batch.
pub const BATCH: usize = 32;

/// One answer to score: the reference it is held against, and for
/// retrieval the chunk ids the method ranked (best first) and the
/// question's source chunk ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub reference: String,
    pub answer: String,
    #[serde(default)]
    pub ranked: Vec<i64>,
    #[serde(default)]
    pub relevant: Vec<i64>,
}

/// The metrics of one pair. Retrieval metrics are `None` when the method
/// recorded no ranking or the question no source chunks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairScores {
    pub ap: Option<f64>,
    pub ndcg: Option<f64>,
    pub recall: Option<f64>,
    /// Cosine similarity of the answer's and the reference's embeddings.
    pub cs: f64,
    /// ROUGE-1 F1 (rouge-score's tokenizer, no stemming).
    pub rouge1: f64,
    /// Sentence BLEU (sacrebleu's defaults: 13a, exp smoothing).
    pub bleu: f64,
    /// The same pair under the other definitions: as the HieraRAG
    /// authors' code scores it when the fields above are the standard ones,
    /// and the other way round ([`PairScores::under`]). Runs stored before
    /// both were scored have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<OtherScores>,
}

/// A pair's scores under `definitions`: as published
/// ([`super::published`]: every retrieved chunk of a gold document a hit —
/// at the document unit a score can exceed 1 —, ROUGE-1 with stemming,
/// NLTK's method-4 sentence BLEU on a 0–1 scale) or standard.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OtherScores {
    pub definitions: Definitions,
    pub ap: Option<f64>,
    pub ndcg: Option<f64>,
    pub recall: Option<f64>,
    pub rouge1: f64,
    pub bleu: f64,
}

/// Vectors by text (the exact text: a changed answer is a new text).
#[derive(Debug, Default, Clone)]
pub struct EmbeddingCache {
    vectors: HashMap<String, Vec<f32>>,
    /// Texts embedded by this cache (not loaded into it).
    pub embedded: usize,
}

impl EmbeddingCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds known vectors (from storage).
    pub fn insert(&mut self, text: String, vector: Vec<f32>) {
        self.vectors.insert(text, vector);
    }

    pub fn get(&self, text: &str) -> Option<&[f32]> {
        self.vectors.get(text).map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Embeds every text of `texts` not in the cache yet, [`BATCH`] at a
    /// time; returns the texts embedded now (for the caller to store).
    pub fn fill<'a>(
        &mut self,
        model: &MiniLm,
        texts: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<String>, String> {
        let mut seen = HashSet::new();
        let mut missing: Vec<&str> =
            texts.into_iter().filter(|t| !self.vectors.contains_key(*t) && seen.insert(*t)).collect();
        // A batch is padded to its longest text: batching texts of like
        // length wastes the least work.
        missing.sort_by_key(|t| t.len());
        for batch in missing.chunks(BATCH) {
            let out = model.embed(batch).map_err(|e| e.to_string())?;
            for (t, v) in batch.iter().zip(out) {
                self.vectors.insert(t.to_string(), v);
            }
        }
        self.embedded += missing.len();
        Ok(missing.into_iter().map(str::to_string).collect())
    }
}

/// The metrics of one pair whose two texts are in `cache` (nDCG and recall
/// at `k`). Panics if a text was never embedded: call
/// [`EmbeddingCache::fill`] first.
pub fn score(pair: &Pair, cache: &EmbeddingCache, k: usize) -> PairScores {
    let relevant: HashSet<i64> = pair.relevant.iter().copied().collect();
    let retrieval = !pair.ranked.is_empty() && !relevant.is_empty();
    let vector = |t: &str| cache.get(t).unwrap_or_else(|| panic!("no embedding for {t:?}: fill the cache first"));
    PairScores {
        ap: retrieval.then(|| average_precision(&pair.ranked, &relevant)),
        ndcg: retrieval.then(|| ndcg_at(&pair.ranked, &relevant, k)),
        recall: retrieval.then(|| recall_at(&pair.ranked, &relevant, k)),
        cs: cosine(vector(&pair.reference), vector(&pair.answer)),
        rouge1: text::rouge1(&pair.reference, &pair.answer).f1,
        bleu: text::sentence_bleu(&pair.answer, &pair.reference),
        other: Some(published(pair, &relevant, k)),
    }
}

impl PairScores {
    /// These scores with `definitions` in front: under the other
    /// definitions the fields trade places with [`PairScores::other`]
    /// (cosine similarity is the same under both). Unchanged when already
    /// so, or when there is no other (an older run).
    pub fn under(self, definitions: Definitions) -> PairScores {
        let Some(o) = self.other.filter(|o| o.definitions == definitions) else { return self };
        let front = match definitions {
            Definitions::Standard => Definitions::AsPublished,
            Definitions::AsPublished => Definitions::Standard,
        };
        PairScores {
            ap: o.ap,
            ndcg: o.ndcg,
            recall: o.recall,
            cs: self.cs,
            rouge1: o.rouge1,
            bleu: o.bleu,
            other: Some(OtherScores {
                definitions: front,
                ap: self.ap,
                ndcg: self.ndcg,
                recall: self.recall,
                rouge1: self.rouge1,
                bleu: self.bleu,
            }),
        }
    }
}

/// The pair under the authors' definitions (`ranked` as the run's unit
/// gives it: at the document unit, each chunk's document, repeats kept).
fn published(pair: &Pair, relevant: &HashSet<i64>, k: usize) -> OtherScores {
    let top = &pair.ranked[..pair.ranked.len().min(k)];
    let r = (!pair.ranked.is_empty()).then(|| super::published::retrieval(top, relevant)).flatten();
    OtherScores {
        definitions: Definitions::AsPublished,
        ap: r.map(|r| r.ap),
        ndcg: r.map(|r| r.ndcg),
        recall: r.map(|r| r.recall),
        rouge1: text::rouge1_stemmed(&pair.reference, &pair.answer).f1,
        bleu: super::published::bleu_method4(&pair.reference, &pair.answer),
    }
}

/// Every pair's metrics: embeds the texts `cache` lacks, then scores.
pub fn score_all(
    pairs: &[Pair],
    model: &MiniLm,
    cache: &mut EmbeddingCache,
    k: usize,
) -> Result<Vec<PairScores>, String> {
    cache.fill(model, pairs.iter().flat_map(|p| [p.reference.as_str(), p.answer.as_str()]))?;
    Ok(pairs.iter().map(|p| score(p, cache, k)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authors_definitions_count_every_chunk_of_a_gold_document() {
        let mut cache = EmbeddingCache::new();
        cache.insert("Running dogs ran.".into(), vec![1.0, 0.0]);
        cache.insert("The dog runs.".into(), vec![1.0, 1.0]);
        // At the document unit: documents 7, 7, 3, 7 retrieved, 7 gold.
        let pair = Pair {
            reference: "Running dogs ran.".into(),
            answer: "The dog runs.".into(),
            ranked: vec![7, 7, 3, 7],
            relevant: vec![7],
        };
        let s = score(&pair, &cache, 10);
        let p = s.other.unwrap();
        assert_eq!(p.definitions, Definitions::AsPublished);
        assert_eq!(s.ap, Some(1.0), "standard: the document once");
        assert!((p.ap.unwrap() - (1.0 + 1.0 + 0.75)).abs() < 1e-12, "as published: three hits over one gold document");
        assert!((p.recall.unwrap() - 3.0).abs() < 1e-12);
        // Stemmed ROUGE-1 matches "dog"/"dogs" and "runs"/"running"; unstemmed only nothing.
        assert_eq!(s.rouge1, 0.0);
        assert!((p.rouge1 - 2.0 * (2.0 / 3.0) * (2.0 / 3.0) / (4.0 / 3.0)).abs() < 1e-12, "{}", p.rouge1);
        // In front and back again.
        let front = s.under(Definitions::AsPublished);
        assert_eq!((front.ap, front.rouge1, front.cs), (p.ap, p.rouge1, s.cs));
        assert_eq!(front.other.unwrap().definitions, Definitions::Standard);
        assert_eq!(front.other.unwrap().ap, Some(1.0));
        assert_eq!(front.under(Definitions::Standard), s);
        assert_eq!(s.under(Definitions::Standard), s);
    }

    #[test]
    fn scores_from_cached_vectors() {
        let mut cache = EmbeddingCache::new();
        cache.insert("the cat sat on the mat".into(), vec![1.0, 0.0, 0.0]);
        cache.insert("a cat sat".into(), vec![1.0, 1.0, 0.0]);
        let pair = Pair {
            reference: "the cat sat on the mat".into(),
            answer: "a cat sat".into(),
            ranked: vec![4, 9, 2],
            relevant: vec![2, 4],
        };
        let s = score(&pair, &cache, 10);
        assert!((s.cs - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        assert!((s.ap.unwrap() - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(s.recall, Some(1.0));
        // ROUGE-1: 2 of the answer's 3 tokens, 2 of the reference's 6.
        assert!((s.rouge1 - 2.0 * (2.0 / 3.0) * (2.0 / 6.0) / (2.0 / 3.0 + 2.0 / 6.0)).abs() < 1e-12);
        let none = score(&Pair { ranked: vec![], ..pair }, &cache, 10);
        assert_eq!((none.ap, none.ndcg, none.recall), (None, None, None));
    }
}

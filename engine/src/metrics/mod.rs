//! Reference-based metrics (seed 004 §2.3–2.4): retrieval against each
//! question's source chunks (average precision, nDCG@k, Recall@k), answers
//! against reference answers (cosine similarity of embeddings, ROUGE-1,
//! BLEU), and how informative a category hierarchy is (`granularity`:
//! discriminative power, normalised mutual information, Coherence Ratio).
//! Every function names the definition it follows; the tests hold values
//! computed once with scikit-learn, sacrebleu and rouge-score
//! (`scripts/refs/metrics_refs.py`).

pub mod factorial;
pub mod granularity;
pub mod information;
pub mod porter;
pub mod published;
pub mod score;
pub mod text;

use std::collections::{HashMap, HashSet};

/// k of nDCG@k and Recall@k: the HieraRAG paper's ("nDCG@10, and Recall@10", §2.4);
/// equal-frequency bins of the cosine similarity for NMI (the paper gives
/// no number; 4 is ours).
pub use types::defaults::{METRICS_BINS as DEFAULT_BINS, METRICS_K as DEFAULT_K};

/// Which definitions a metrics run reports: the textbook ones
/// (the default), or as the HieraRAG authors' released code computes them
/// ([`published`]), so a number can be set beside the paper's.
pub use types::Definitions;

/// What a retrieved chunk must match to count as relevant.
///
/// Seed 004 judges retrieval against each question's source **document**:
/// "Each question includes a DataMorgana-generated reference answer and
/// source document ID to evaluate retrieval and generation quality", and
/// "MAP …, nDCG@10, and Recall@10 measure whether ground-truth documents
/// appear in top-10 results". So that is the default. `passage` counts a chunk that overlaps the source chunk's span
/// (a neighbour cut with overlap carries the same passage); `chunk` counts
/// only the source chunk itself (stricter than the paper; Assay's only
/// unit in early versions).
pub use types::RelevanceUnit;

/// Where a chunk lies: its document and its byte span there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub document: i64,
    pub start: i64,
    pub end: i64,
}

/// A ranking of chunk ids and the relevant chunk ids, restated at `unit`
/// for [`average_precision`], [`ndcg_at`] and [`recall_at`]:
/// - chunk: as given;
/// - document: every chunk becomes its document; the relevant documents
///   are those of the relevant chunks (a second chunk of a found document
///   is a miss at its rank, as the metrics count each id once);
/// - passage: a retrieved chunk overlapping a relevant chunk's span in the
///   same document becomes that relevant chunk (each found once).
///
/// Chunks without a known span keep an id no relevant unit has.
pub fn at_unit(
    unit: RelevanceUnit,
    ranked: &[i64],
    relevant: &[i64],
    spans: &HashMap<i64, Span>,
) -> (Vec<i64>, HashSet<i64>) {
    let unknown = |i: usize| -(i as i64) - 1;
    match unit {
        RelevanceUnit::Chunk => (ranked.to_vec(), relevant.iter().copied().collect()),
        RelevanceUnit::Document => {
            let docs: HashSet<i64> = relevant.iter().filter_map(|c| spans.get(c).map(|s| s.document)).collect();
            let ranked =
                ranked.iter().enumerate().map(|(i, c)| spans.get(c).map_or(unknown(i), |s| s.document)).collect();
            (ranked, docs)
        }
        RelevanceUnit::Passage => {
            let sources: Vec<(i64, Span)> = relevant.iter().filter_map(|c| Some((*c, *spans.get(c)?))).collect();
            let ranked = ranked
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if relevant.contains(c) {
                        return *c;
                    }
                    let Some(s) = spans.get(c) else { return unknown(i) };
                    sources
                        .iter()
                        .find(|(_, r)| r.document == s.document && s.start < r.end && r.start < s.end)
                        .map_or(*c, |(id, _)| *id)
                })
                .collect();
            (ranked, relevant.iter().copied().collect())
        }
    }
}

/// Average precision of one ranked retrieval against the relevant ids, as
/// trec_eval's `map` counts it: the mean, over **all** relevant ids, of the
/// precision at the rank where each is retrieved (0 for one never
/// retrieved). Equal to scikit-learn's `average_precision_score` when every
/// relevant id is in the ranking. 0 when nothing is relevant.
pub fn average_precision(ranked: &[i64], relevant: &HashSet<i64>) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let mut seen = HashSet::new();
    let (mut hits, mut sum) = (0usize, 0.0);
    for (i, id) in ranked.iter().enumerate() {
        if relevant.contains(id) && seen.insert(*id) {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    sum / relevant.len() as f64
}

/// nDCG@k with binary gains and the log2(rank + 1) discount (Järvelin and
/// Kekäläinen; scikit-learn's `ndcg_score` with `k`): the DCG of the top k
/// over the DCG of an ideal ranking with all relevant ids first. 0 when
/// nothing is relevant.
pub fn ndcg_at(ranked: &[i64], relevant: &HashSet<i64>, k: usize) -> f64 {
    let discount = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let mut seen = HashSet::new();
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, id)| relevant.contains(id) && seen.insert(**id))
        .map(|(i, _)| discount(i))
        .sum();
    let ideal: f64 = (0..relevant.len().min(k)).map(discount).sum();
    if ideal == 0.0 {
        0.0
    } else {
        dcg / ideal
    }
}

/// Recall@k: the share of the relevant ids found in the top k. 0 when
/// nothing is relevant.
pub fn recall_at(ranked: &[i64], relevant: &HashSet<i64>, k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let found: HashSet<&i64> = ranked.iter().take(k).filter(|id| relevant.contains(id)).collect();
    found.len() as f64 / relevant.len() as f64
}

/// Cosine similarity of two vectors (0 when either is all zeros).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (*x as f64, *y as f64);
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // scripts/refs/metrics_refs.py (scikit-learn 1.9.1).
    const RANKED: [i64; 12] = [7, 2, 3, 9, 5, 11, 1, 8, 6, 4, 40, 12];

    fn relevant() -> HashSet<i64> {
        [3, 7, 11, 40].into_iter().collect()
    }

    /// A hand-made corpus: document 10 cut into chunks 1 [0,100), 2
    /// [80,180), 3 [160,260) (20 bytes of overlap), document 20 into chunks
    /// 4 [0,100) and 5 [80,180). The question came from chunk 3; the
    /// ranking is 4, 1, 2, 5, 3.
    #[test]
    fn relevance_at_the_document_passage_and_chunk_units() {
        let spans: HashMap<i64, Span> =
            [(1, 10, 0, 100), (2, 10, 80, 180), (3, 10, 160, 260), (4, 20, 0, 100), (5, 20, 80, 180)]
                .into_iter()
                .map(|(id, document, start, end)| (id, Span { document, start, end }))
                .collect();
        let ranked = [4, 1, 2, 5, 3];
        let ap = |unit| {
            let (r, rel) = at_unit(unit, &ranked, &[3], &spans);
            (average_precision(&r, &rel), recall_at(&r, &rel, 2), ndcg_at(&r, &rel, 10))
        };
        // Chunk: only chunk 3, at rank 5.
        assert_eq!(ap(RelevanceUnit::Chunk), (0.2, 0.0, 1.0 / 6f64.log2()));
        // Passage: chunk 2 overlaps chunk 3's span (160–180): a hit at rank 3;
        // chunk 1 does not overlap it; chunk 3 itself later is the same passage.
        let (r, rel) = at_unit(RelevanceUnit::Passage, &ranked, &[3], &spans);
        assert_eq!((r, rel), (vec![4, 1, 3, 5, 3], HashSet::from([3])));
        assert_eq!(ap(RelevanceUnit::Passage), (1.0 / 3.0, 0.0, 1.0 / 4f64.log2()));
        // Document: chunk 1 is of the source document: a hit at rank 2.
        let (r, rel) = at_unit(RelevanceUnit::Document, &ranked, &[3], &spans);
        assert_eq!((r, rel), (vec![20, 10, 10, 20, 10], HashSet::from([10])));
        assert_eq!(ap(RelevanceUnit::Document), (0.5, 1.0, 1.0 / 3f64.log2()));
        // A chunk of unknown span never matches.
        let (r, _) = at_unit(RelevanceUnit::Document, &[99], &[3], &spans);
        assert!(r[0] < 0);
        assert_eq!(RelevanceUnit::default(), RelevanceUnit::Document);
        assert_eq!(RelevanceUnit::parse("passage"), Ok(RelevanceUnit::Passage));
    }

    #[test]
    fn retrieval_metrics_equal_scikit_learn() {
        assert!((average_precision(&RANKED, &relevant()) - 0.6325757575757576).abs() < 1e-9);
        assert!((ndcg_at(&RANKED, &relevant(), 10) - 0.7246262544989284).abs() < 1e-9);
        assert!((recall_at(&RANKED, &relevant(), 10) - 0.75).abs() < 1e-12, "40 is 11th");
        // A relevant id never retrieved counts 0 in AP (trec_eval), and the
        // ideal DCG still expects it.
        let partial = [7, 2, 3];
        assert!((average_precision(&partial, &relevant()) - (1.0 + 2.0 / 3.0) / 4.0).abs() < 1e-12);
        let ideal = 1.0 + 1.0 / 3f64.log2() + 0.5 + 1.0 / 5f64.log2();
        assert!((ndcg_at(&partial, &relevant(), 10) - (1.0 + 0.5) / ideal).abs() < 1e-12);
        // Duplicates in a ranking count once; nothing relevant scores 0.
        assert!(
            (average_precision(&[7, 7, 3, 11, 40], &relevant()) - (1.0 + 2.0 / 3.0 + 3.0 / 4.0 + 4.0 / 5.0) / 4.0)
                .abs()
                < 1e-12
        );
        assert_eq!(average_precision(&RANKED, &HashSet::new()), 0.0);
        assert_eq!(ndcg_at(&RANKED, &HashSet::new(), 10), 0.0);
        assert_eq!(recall_at(&[], &relevant(), 10), 0.0);
    }

    #[test]
    fn cosine_of_vectors() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 1.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert!((cosine(&[0.3, -0.2, 0.9], &[0.3, -0.2, 0.9]) - 1.0).abs() < 1e-6);
    }
}

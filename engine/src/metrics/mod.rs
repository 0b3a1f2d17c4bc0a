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
pub mod score;
pub mod text;

use std::collections::HashSet;

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

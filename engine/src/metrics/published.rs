//! The HieraRAG authors' released code, where it computes a metric
//! differently from its textbook definition ("as-published"):
//! `fensorechase/rag-diverse-benchmarks-synthetic-qa`,
//! `rag_system/generate/complete_analysis.py` and `compute_rag_metrics.py`.
//! Bug for bug: these exist so a number can be put beside the paper's, not
//! because they are right. The standard definitions are in [`super`] and
//! [`super::granularity`]; `scripts/refs/published_refs.py` runs the
//! authors' functions, copied verbatim, on the inputs the tests use.

use std::collections::HashSet;
use std::hash::Hash;

pub use super::information::{equal_width_bins, mi_over_category_entropy};

/// MAP, nDCG@10 and Recall@10 of one question as `compute_retrieval_metrics`
/// computes them: `retrieved` is the document id of each retrieved chunk in
/// rank order (repeats kept), cut at 10; a position is a hit whenever its
/// document is gold — so a document retrieved as three chunks is three hits
/// — and AP's sum of precisions at hits is divided by the number of gold
/// documents. `None` without gold documents (the code skips the question);
/// zeros when nothing was retrieved.
pub fn retrieval<D: Eq + Hash>(retrieved: &[D], gold: &HashSet<D>) -> Option<RetrievalScores> {
    if gold.is_empty() {
        return None;
    }
    let top = &retrieved[..retrieved.len().min(10)];
    let g = gold.len() as f64;
    let hits: Vec<usize> = top.iter().enumerate().filter(|(_, d)| gold.contains(d)).map(|(i, _)| i + 1).collect();
    // precisions = [len([r for r in hits if r <= pos]) / pos for pos in hits]
    let ap = hits.iter().enumerate().map(|(j, &pos)| (j + 1) as f64 / pos as f64).sum::<f64>() / g;
    let idcg: f64 = (0..gold.len().min(10)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
    let dcg: f64 = hits.iter().map(|&pos| 1.0 / ((pos + 1) as f64).log2()).sum();
    Some(RetrievalScores { ap, ndcg: if idcg > 0.0 { dcg / idcg } else { 0.0 }, recall: hits.len() as f64 / g })
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalScores {
    pub ap: f64,
    pub ndcg: f64,
    pub recall: f64,
}

/// Sentence BLEU as the HieraRAG authors computed it
/// (`compute_bleu`): NLTK's `sentence_bleu([reference.lower().split()],
/// generated.lower().split(), smoothing_function=SmoothingFunction().method4)`
/// — whitespace tokens, n-grams up to 4 weighted 1/4, the brevity penalty
/// against the one reference, and Chen & Cherry's method 4 for n-gram
/// orders without a match (the i-th such precision becomes
/// ln(len) / (2^i · 5 · total)); 0 without a matching unigram. On NLTK's
/// 0–1 scale, not sacrebleu's 0–100.
pub fn bleu_method4(reference: &str, generated: &str) -> f64 {
    let r: Vec<String> = reference.to_lowercase().split_whitespace().map(str::to_string).collect();
    let h: Vec<String> = generated.to_lowercase().split_whitespace().map(str::to_string).collect();
    let mut p: Vec<(usize, usize)> = Vec::with_capacity(4);
    for n in 1..=4 {
        let (hc, rc) = (ngram_counts(&h, n), ngram_counts(&r, n));
        let matched: usize = hc.iter().map(|(g, c)| (*c).min(rc.get(g).copied().unwrap_or(0))).sum();
        p.push((matched, hc.values().sum::<usize>().max(1)));
    }
    if p[0].0 == 0 {
        return 0.0;
    }
    let (hl, rl) = (h.len() as f64, r.len() as f64);
    let bp = if hl > rl { 1.0 } else { (1.0 - rl / hl).exp() };
    let mut nth_zero = 1;
    let mut sum = 0.0;
    for (matched, total) in p {
        let pi = if matched == 0 && h.len() > 1 {
            let smoothed = 1.0 / (2f64.powi(nth_zero) * 5.0 / hl.ln()) / total as f64;
            nth_zero += 1;
            smoothed
        } else {
            matched as f64 / total as f64
        };
        if pi > 0.0 {
            sum += 0.25 * pi.ln();
        }
    }
    bp * sum.exp()
}

/// The n-grams of `tokens` with their counts (none when it is shorter).
fn ngram_counts(tokens: &[String], n: usize) -> std::collections::HashMap<&[String], usize> {
    let mut m = std::collections::HashMap::new();
    if tokens.len() >= n {
        for g in tokens.windows(n) {
            *m.entry(g).or_default() += 1;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scripts/refs/published_refs.py`: the authors' functions on these inputs.
    fn refs() -> serde_json::Value {
        serde_json::from_str(include_str!("../../tests/fixtures/published_refs.json")).unwrap()
    }

    #[test]
    fn retrieval_equals_the_authors_code_including_scores_above_one() {
        let cases: [(&[&str], &[&str]); 6] = [
            (&["a", "a", "b", "c", "a"], &["a"]),
            (&["c", "a", "d", "b", "a", "e", "f", "g", "h", "i", "b", "a"], &["a", "b"]),
            (&[], &["x"]),
            (&["c"], &["a", "b", "c"]),
            (&["z", "y"], &["a"]),
            (
                &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"],
                &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"],
            ),
        ];
        let refs = refs();
        for (i, (retrieved, gold)) in cases.iter().enumerate() {
            let gold: HashSet<&str> = gold.iter().copied().collect();
            let got = retrieval(retrieved, &gold).unwrap();
            let want: Vec<f64> = refs["retrieval"][i].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            for (g, w) in [got.ap, got.ndcg, got.recall].iter().zip(&want) {
                assert!((g - w).abs() <= 1e-12, "case {i}: {got:?} vs {want:?}");
            }
        }
        // A document retrieved as three chunks: three hits, AP 2.6 (> 1).
        assert!(retrieval(&["a", "a", "b", "c", "a"], &HashSet::from(["a"])).unwrap().ap > 1.0);
        assert_eq!(retrieval::<&str>(&["a"], &HashSet::new()), None);
    }

    /// `scripts/refs/published_text_refs.py`: NLTK's stems and the authors'
    /// compute_rouge / compute_bleu on sentence pairs of two novels.
    fn text_refs() -> serde_json::Value {
        serde_json::from_str(include_str!("../../tests/fixtures/published_text_refs.json")).unwrap()
    }

    #[test]
    fn porter_stems_every_word_of_two_novels_as_nltk_does() {
        let refs = text_refs();
        let (words, stems) = (refs["words"].as_array().unwrap(), refs["stems"].as_array().unwrap());
        assert!(words.len() > 3000);
        let wrong: Vec<String> = words
            .iter()
            .zip(stems)
            .map(|(w, s)| (w.as_str().unwrap(), s.as_str().unwrap()))
            .filter(|(w, s)| super::super::porter::stem(w) != *s)
            .map(|(w, s)| format!("{w}: {} (NLTK {s})", super::super::porter::stem(w)))
            .collect();
        assert!(wrong.is_empty(), "{} of {} differ: {:?}", wrong.len(), words.len(), &wrong[..wrong.len().min(20)]);
    }

    #[test]
    fn stemmed_rouge1_and_method4_bleu_equal_the_authors_code() {
        let refs = text_refs();
        let pairs = refs["pairs"].as_array().unwrap();
        assert!(pairs.len() > 200);
        let (mut differ_rouge, mut differ_bleu) = (0, 0);
        for p in pairs {
            let (reference, generated) = (p[0].as_str().unwrap(), p[1].as_str().unwrap());
            let rouge = crate::metrics::text::rouge1_stemmed(reference, generated).f1;
            let bleu = bleu_method4(reference, generated);
            let (want_rouge, want_bleu) = (p[2].as_f64().unwrap(), p[3].as_f64().unwrap());
            assert!(
                (rouge - want_rouge).abs() <= 1e-12,
                "ROUGE-1 {rouge} vs {want_rouge}: {reference:?} / {generated:?}"
            );
            assert!((bleu - want_bleu).abs() <= 1e-12, "BLEU {bleu} vs {want_bleu}: {reference:?} / {generated:?}");
            // How far the standard definitions are (sacrebleu 0–100, no stemming).
            differ_rouge += usize::from((crate::metrics::text::rouge1(reference, generated).f1 - rouge).abs() > 1e-9);
            differ_bleu +=
                usize::from((crate::metrics::text::sentence_bleu(generated, reference) / 100.0 - bleu).abs() > 1e-9);
        }
        assert!(differ_rouge > 0 && differ_bleu > 0, "the definitions differ on these pairs");
    }

    #[test]
    fn bins_and_mi_over_category_entropy_equal_pandas_and_the_authors_code() {
        let refs = refs();
        let cos: Vec<f64> = refs["cos"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let cats: Vec<String> = refs["cats"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
        let want_bins: Vec<usize> =
            refs["bins"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        let bins = equal_width_bins(&cos, 5);
        assert_eq!(bins, want_bins, "pd.cut(bins=5, labels=False)");
        for (group, range) in [("coarse", 0..30), ("medium", 30..60)] {
            let (c, b) = (&cats[range.clone()], &bins[range]);
            let got = mi_over_category_entropy(c, b);
            let want = refs["nmi"][group].as_f64().unwrap();
            assert!((got - want).abs() <= 1e-12, "{group}: {got} vs {want}");
            // Not scikit-learn's NMI (arithmetic mean of both entropies).
            let standard = crate::metrics::granularity::nmi(c, b);
            assert!((standard - got).abs() > 1e-3, "{group}: the two definitions coincide here");
        }
        // Through the granularity analysis: the set's similarities binned at
        // once, then each level's categories against their bins.
        let items: Vec<crate::metrics::granularity::Scored> = cats
            .iter()
            .zip(&cos)
            .enumerate()
            .map(|(i, (c, s))| crate::metrics::granularity::Scored {
                category: if i < 30 { format!("QC/{c}") } else { format!("QC/x/{c}") },
                score: *s,
            })
            .collect();
        let analysis = crate::metrics::granularity::analyse(&items, 4);
        for (level, group) in [(2, "coarse"), (4, "medium")] {
            let l = analysis[0].levels.iter().find(|l| l.categories == level).unwrap();
            let want = refs["nmi"][group].as_f64().unwrap();
            assert!((l.nmi_published.unwrap() - want).abs() <= 1e-12, "{group}: {:?} vs {want}", l.nmi_published);
        }
        let flat: Vec<usize> =
            refs["flat_bins"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        assert_eq!(equal_width_bins(&[0.5, 0.5, 0.5], 5), flat);
    }
}

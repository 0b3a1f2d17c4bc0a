//! Answer-vs-reference text metrics with the definitions of the tools the
//! field reports with: ROUGE-1 as Google's `rouge-score` computes it
//! (lowercase, every run of characters other than a–z and 0–9 a separator,
//! no stemming; F1 of clipped unigram overlap), and BLEU as `sacrebleu` 2.x
//! does by default (the `13a` tokenizer, n-grams up to 4, one reference,
//! brevity penalty, **`exp` smoothing**: the k-th zero n-gram precision
//! becomes 1 / (2^k · total); sentence BLEU with effective order, corpus
//! BLEU without). Scores are on sacrebleu's 0–100 scale.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;

/// Precision, recall and F1 of a ROUGE score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prf {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// rouge-score's tokens; with `stemmed`, those longer than 3 characters
/// through NLTK's Porter stemmer (`use_stemmer=True`).
fn rouge_tokens(text: &str, stemmed: bool) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(|t| if stemmed && t.len() > 3 { super::porter::stem(t) } else { t.to_string() })
        .collect()
}

fn counts<T: std::hash::Hash + Eq + Clone>(items: &[T]) -> HashMap<T, usize> {
    let mut m = HashMap::new();
    for x in items {
        *m.entry(x.clone()).or_insert(0) += 1;
    }
    m
}

/// ROUGE-1 of `hypothesis` against `reference` (rouge-score's
/// `RougeScorer(["rouge1"]).score(reference, hypothesis)`).
pub fn rouge1(reference: &str, hypothesis: &str) -> Prf {
    rouge1_with(reference, hypothesis, false)
}

/// ROUGE-1 with stemming, as the HieraRAG authors computed it
/// (`RougeScorer(["rouge1"], use_stemmer=True)`).
pub fn rouge1_stemmed(reference: &str, hypothesis: &str) -> Prf {
    rouge1_with(reference, hypothesis, true)
}

fn rouge1_with(reference: &str, hypothesis: &str, stemmed: bool) -> Prf {
    let (r, h) = (counts(&rouge_tokens(reference, stemmed)), counts(&rouge_tokens(hypothesis, stemmed)));
    let overlap: usize = h.iter().map(|(t, n)| (*n).min(r.get(t).copied().unwrap_or(0))).sum();
    let (hn, rn): (usize, usize) = (h.values().sum(), r.values().sum());
    let precision = overlap as f64 / hn.max(1) as f64;
    let recall = overlap as f64 / rn.max(1) as f64;
    let f1 = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
    Prf { precision, recall, f1 }
}

/// sacrebleu's `13a` tokenizer (mteval-v13a.pl).
pub fn tokenize_13a(line: &str) -> Vec<String> {
    static RULES: OnceLock<[(Regex, &'static str); 4]> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("a fixed pattern");
        [
            // Punctuation and symbols of the Western languages, spaced out.
            (re(r"([\x7B-\x7E\x5B-\x60\x20-\x26\x28-\x2B\x3A-\x40/])"), " $1 "),
            // Period and comma unless preceded by a digit …
            (re(r"([^0-9])([.,])"), "$1 $2 "),
            // … unless followed by a digit.
            (re(r"([.,])([^0-9])"), " $1 $2"),
            // A dash after a digit.
            (re(r"([0-9])(-)"), "$1 $2 "),
        ]
    });
    let mut s = line.replace("<skipped>", "").replace("-\n", "").replace('\n', " ");
    if s.contains('&') {
        s = s.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    }
    let mut s = format!(" {s} ");
    for (re, to) in rules.iter() {
        s = re.replace_all(&s, *to).into_owned();
    }
    s.split_whitespace().map(str::to_string).collect()
}

/// A hypothesis's BLEU statistics against one reference: clipped matches
/// and totals per n-gram order 1–4, and the two lengths.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BleuStats {
    pub correct: [usize; 4],
    pub total: [usize; 4],
    pub hyp_len: usize,
    pub ref_len: usize,
}

impl std::ops::AddAssign for BleuStats {
    fn add_assign(&mut self, o: BleuStats) {
        for n in 0..4 {
            self.correct[n] += o.correct[n];
            self.total[n] += o.total[n];
        }
        self.hyp_len += o.hyp_len;
        self.ref_len += o.ref_len;
    }
}

fn ngrams(tokens: &[String], n: usize) -> HashMap<&[String], usize> {
    let mut m = HashMap::new();
    if tokens.len() >= n {
        for w in tokens.windows(n) {
            *m.entry(w).or_insert(0) += 1;
        }
    }
    m
}

pub fn bleu_stats(hypothesis: &str, reference: &str) -> BleuStats {
    let (h, r) = (tokenize_13a(hypothesis), tokenize_13a(reference));
    let mut s = BleuStats { hyp_len: h.len(), ref_len: r.len(), ..Default::default() };
    for n in 1..=4 {
        let (hg, rg) = (ngrams(&h, n), ngrams(&r, n));
        s.total[n - 1] = h.len().saturating_sub(n - 1);
        s.correct[n - 1] = hg.iter().map(|(g, c)| (*c).min(rg.get(g).copied().unwrap_or(0))).sum();
    }
    s
}

/// BLEU from statistics (sacrebleu's `compute_bleu` with `exp` smoothing).
pub fn bleu_from(s: &BleuStats, effective_order: bool) -> f64 {
    // sacrebleu 2.x: "Early stop if there are no matches (#141)" — with no
    // matching n-gram of any order the score is 0, not a smoothed value.
    if s.correct.iter().all(|c| *c == 0) {
        return 0.0;
    }
    let mut precisions = [0.0f64; 4];
    let mut smooth = 1.0;
    let mut order = 4;
    for n in 0..4 {
        if s.total[n] == 0 {
            break;
        }
        if effective_order {
            order = n + 1;
        }
        if s.correct[n] == 0 {
            smooth *= 2.0;
            precisions[n] = 100.0 / (smooth * s.total[n] as f64);
        } else {
            precisions[n] = 100.0 * s.correct[n] as f64 / s.total[n] as f64;
        }
    }
    let bp = if s.hyp_len < s.ref_len {
        if s.hyp_len > 0 {
            (1.0 - s.ref_len as f64 / s.hyp_len as f64).exp()
        } else {
            0.0
        }
    } else {
        1.0
    };
    let log = |p: f64| if p == 0.0 { -9_999_999_999.0 } else { p.ln() };
    bp * (precisions[..order].iter().map(|p| log(*p)).sum::<f64>() / order as f64).exp()
}

/// Sentence BLEU (sacrebleu's `sentence_bleu(hypothesis, [reference])`).
pub fn sentence_bleu(hypothesis: &str, reference: &str) -> f64 {
    bleu_from(&bleu_stats(hypothesis, reference), true)
}

/// Corpus BLEU over pairs `(hypothesis, reference)` (sacrebleu's
/// `corpus_bleu(hypotheses, [references])`): statistics summed, then one score.
pub fn corpus_bleu<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> f64 {
    let mut total = BleuStats::default();
    for (h, r) in pairs {
        total += bleu_stats(h, r);
    }
    bleu_from(&total, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (hypothesis, reference) and their values from
    /// scripts/refs/metrics_refs.py: rouge-score 0.1.2 (precision, recall,
    /// F1) and sacrebleu 2.5.1 sentence BLEU.
    const CASES: [(&str, &str, [f64; 3], f64); 5] = [
        (
            "The Salt Guild fixed prices for the whole coast.",
            "The Salt Guild once fixed salt prices for the whole coast.",
            [1.0, 0.8181818181818182, 0.9],
            55.313456015212466,
        ),
        (
            "In 1849, the railway reached Hollin Cross -- but never Saltmere!",
            "The railway reached Hollin Cross in 1849 but not Saltmere.",
            [0.9, 0.9, 0.9],
            22.242469397936766,
        ),
        (
            "Price: 3.5 shillings, 1,000 barrels; R&amp;D costs (est.) rose.",
            "It cost 3.5 shillings for 1,000 barrels and R&D rose.",
            [0.6923076923076923, 0.6923076923076923, 0.6923076923076923],
            13.23007976179665,
        ),
        (
            "Yes.",
            "The answer is yes, the wardens met every September.",
            [1.0, 0.1111111111111111, 0.19999999999999998],
            0.5554498269121152,
        ),
        (
            "Café owners in Zürich aren't sure",
            "cafe owners in zurich are not sure",
            [0.375, 0.42857142857142855, 0.39999999999999997],
            15.207218222740094,
        ),
    ];

    #[test]
    fn rouge1_and_bleu_equal_rouge_score_and_sacrebleu() {
        for (h, r, [p, rc, f], bleu) in CASES {
            let got = rouge1(r, h);
            assert!(
                (got.precision - p).abs() < 1e-9 && (got.recall - rc).abs() < 1e-9 && (got.f1 - f).abs() < 1e-9,
                "{h}: {got:?}"
            );
            let b = sentence_bleu(h, r);
            assert!((b - bleu).abs() < 1e-9, "{h}: {b} vs {bleu}");
        }
        let corpus = corpus_bleu(CASES.iter().map(|(h, r, ..)| (*h, *r)));
        assert!((corpus - 24.270945133133274).abs() < 1e-9, "{corpus}");
    }

    #[test]
    fn the_13a_tokenizer_splits_like_mteval() {
        assert_eq!(
            tokenize_13a("Price: 3.5 shillings, 1,000 barrels; R&amp;D costs (est.) rose.").join(" "),
            "Price : 3.5 shillings , 1,000 barrels ; R & D costs ( est . ) rose ."
        );
        assert_eq!(tokenize_13a("1849-1911 well-known"), ["1849", "-", "1911", "well-known"]);
        assert!(tokenize_13a("  ").is_empty());
        assert_eq!(sentence_bleu("", "a reference"), 0.0);
    }

    /// sacrebleu 2.5.1 returns 0 when no n-gram of any order matches (its
    /// "early stop if there are no matches", #141) and smooths otherwise;
    /// values from `sacrebleu.sentence_bleu(h, [r]).score`.
    #[test]
    fn sentence_bleu_without_a_matching_token_is_zero_as_sacrebleu() {
        for (h, r, want) in [
            ("blue green", "red yellow orange", 0.0),
            ("Nobody knows.", "The wardens met every September in Saltmere.", 5.197112497172873),
            ("Saltmere", "The wardens met in Saltmere.", 0.673794699908547),
        ] {
            let got = sentence_bleu(h, r);
            assert!((got - want).abs() < 1e-9, "{h}: {got} vs {want}");
        }
        assert_eq!(corpus_bleu([("blue green", "red yellow orange")]), 0.0);
        assert_eq!(rouge1("", "").f1, 0.0);
    }
}

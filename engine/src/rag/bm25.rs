//! BM25 over a project's chunks, hand-written so its scores match a
//! reference exactly: Lucene's variant (the one tantivy and Elasticsearch
//! use), `idf = ln(1 + (N − n + 0.5) / (n + 0.5))` and
//! `tf / (tf + k1 · (1 − b + b · dl / avgdl))` per query token, k1 = 1.2,
//! b = 0.75 — checked against `bm25s` (method "lucene") to 1e-6 (bm25s
//! computes in 32-bit floats; the formula is the same). Seed 004's
//! configuration is k = 10 over 512-token chunks.
//!
//! [`Bm25Method`] is the RAG method over it.
//!
//! Tokens: lower-cased words, English stop-words and one-letter words
//! dropped, no stemming (stated, so scores can be reproduced elsewhere).

use std::collections::HashMap;

use crate::text::words;

pub const K1: f64 = 1.2;
pub const B: f64 = 0.75;

/// The analyser: see the module docs.
pub fn tokenize(text: &str) -> Vec<String> {
    words(text).collect()
}

pub struct Bm25Index {
    ids: Vec<i64>,
    lengths: Vec<f64>,
    average: f64,
    /// Token → (document position, term frequency).
    postings: HashMap<String, Vec<(u32, u32)>>,
    k1: f64,
    b: f64,
}

impl Bm25Index {
    /// An index of `(id, text)` documents with the default analyser.
    pub fn new<'a>(docs: impl IntoIterator<Item = (i64, &'a str)>) -> Bm25Index {
        Bm25Index::from_tokens(docs.into_iter().map(|(id, t)| (id, tokenize(t))).collect(), K1, B)
    }

    /// An index of already-tokenised documents.
    pub fn from_tokens(docs: Vec<(i64, Vec<String>)>, k1: f64, b: f64) -> Bm25Index {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut ids = Vec::with_capacity(docs.len());
        let mut lengths = Vec::with_capacity(docs.len());
        for (pos, (id, tokens)) in docs.into_iter().enumerate() {
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in &tokens {
                *tf.entry(t.clone()).or_default() += 1;
            }
            for (t, n) in tf {
                postings.entry(t).or_default().push((pos as u32, n));
            }
            ids.push(id);
            lengths.push(tokens.len() as f64);
        }
        let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Bm25Index { ids, lengths, average, postings, k1, b }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The score of every document for already-tokenised query tokens (a
    /// repeated token counts again), in index order.
    pub fn scores(&self, query: &[String]) -> Vec<f64> {
        let n = self.ids.len() as f64;
        let mut out = vec![0.0; self.ids.len()];
        for token in query {
            let Some(list) = self.postings.get(token) else { continue };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let (tf, dl) = (tf as f64, self.lengths[doc as usize]);
                out[doc as usize] += idf * tf / (tf + self.k1 * (1.0 - self.b + self.b * dl / self.average));
            }
        }
        out
    }

    /// The `k` best documents for a query, as `(id, score)`, best first
    /// (ties by position); documents scoring 0 are left out.
    pub fn search(&self, query: &str, k: usize) -> Vec<(i64, f64)> {
        let scores = self.scores(&tokenize(query));
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().enumerate().filter(|(_, s)| *s > 0.0).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(k);
        ranked.into_iter().map(|(i, s)| (self.ids[i], s)).collect()
    }
}

/// The BM25 method (seed 004 §2.3): the top `k` chunks of the corpus by
/// BM25 as context (seed 004: k = 10 over 512-token chunks — the chunk size
/// is the project's setting).
pub struct Bm25Method {
    index: Bm25Index,
    corpus: std::sync::Arc<super::Corpus>,
    k: usize,
}

impl Bm25Method {
    pub fn new(corpus: std::sync::Arc<super::Corpus>, k: usize) -> Bm25Method {
        let index = Bm25Index::new(corpus.chunks.iter().map(|(id, t)| (*id, t.as_str())));
        Bm25Method { index, corpus, k }
    }

    /// The top `k` chunks for `query` as sections.
    pub fn chunks(&self, query: &str) -> Vec<super::Section> {
        self.index
            .search(query, self.k)
            .into_iter()
            .map(|(id, score)| super::Section::new("chunk", id, score, self.corpus.chunk(id).unwrap_or("")))
            .collect()
    }
}

impl super::Method for Bm25Method {
    fn name(&self) -> &'static str {
        "bm25"
    }

    fn retrieve<'a>(
        &'a self,
        _gateway: &'a crate::llm::Gateway,
        _ctx: &'a crate::llm::CallContext,
        _meter: &'a mut super::Meter,
        question: &'a str,
    ) -> crate::llm::BoxFuture<'a, Result<Vec<super::Section>, String>> {
        Box::pin(std::future::ready(Ok(self.chunks(question))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// Reference: bm25s 0.3.16 (float32), `BM25(method="lucene", k1=1.2, b=0.75)` on
    /// these whitespace-tokenised documents and queries.
    #[test]
    fn scores_match_the_lucene_reference_of_bm25s() {
        let docs = [
            "the salt guild fixed the price of salt in saltmere",
            "isobel pell was the first warden of the salt guild",
            "the lighthouse on gull point was built after the wreck",
            "the river oll floods the marsh every spring",
            "saltmere oysters were sent by cart to hollin cross",
        ];
        let index = Bm25Index::from_tokens(docs.iter().enumerate().map(|(i, d)| (i as i64, split(d))).collect(), K1, B);
        let expected: [(&str, [f64; 5]); 4] = [
            ("salt guild warden", [0.9253320694, 1.3897256851, 0.0, 0.0, 0.0]),
            ("lighthouse wreck", [0.0, 0.0, 1.2281967402, 0.0, 0.0]),
            ("saltmere salt", [0.9253320694, 0.3878136575, 0.0, 0.0, 0.4049904644]),
            ("unknown words", [0.0; 5]),
        ];
        for (query, want) in expected {
            let got = index.scores(&split(query));
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-6, "{query}: {got:?} vs {want:?}");
            }
        }
    }

    #[test]
    fn search_ranks_by_score_and_drops_non_matches() {
        let index = Bm25Index::new([
            (10, "The Salt Guild fixed the price of salt."),
            (11, "Isobel Pell was the first warden of the Salt Guild."),
            (12, "The lighthouse was built after the wreck."),
        ]);
        assert_eq!(index.len(), 3);
        let hits = index.search("Who was the warden of the Salt Guild?", 10);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [11, 10]);
        assert!(hits[0].1 > hits[1].1);
        assert_eq!(index.search("Who?", 10), []);
        assert_eq!(index.search("salt", 1).len(), 1);
    }
}

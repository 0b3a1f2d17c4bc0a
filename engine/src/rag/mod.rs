//! Retrieval and RAG methods. So far: the BM25 index ([`bm25`]), used by the
//! question–retrieval relevance diagnostic; the methods of the answers
//! stage come next.

pub mod bm25;

//! Token counting and token-based chunking.
//!
//! Tokens are counted with an OpenAI BPE (`cl100k_base` by default, as
//! LightRAG's `tiktoken` tokenizer; `o200k_base` for newer models), through
//! tiktoken-rs, whose vocabularies are compiled in (nothing is downloaded).
//! Chunking uses text-splitter with that tokenizer as its sizer: it packs
//! the largest semantic units (paragraphs, then sentences, then words) that
//! fit the chunk size, so a boundary never falls inside a word, and it
//! overlaps neighbouring chunks by up to the configured number of tokens.
//! Defaults are LightRAG's (1200 tokens, 100 overlap); HieraRAG uses 512.

use serde::{Deserialize, Serialize};
use text_splitter::{ChunkConfig, TextSplitter};
use tiktoken_rs::CoreBPE;

/// The BPE vocabularies Assay counts tokens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Tokenizer {
    /// GPT-3.5/GPT-4 family; LightRAG's default.
    #[default]
    Cl100kBase,
    /// GPT-4o family.
    O200kBase,
}

impl Tokenizer {
    pub const ALL: [Tokenizer; 2] = [Tokenizer::Cl100kBase, Tokenizer::O200kBase];

    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Cl100kBase => "cl100k_base",
            Tokenizer::O200kBase => "o200k_base",
        }
    }

    pub fn parse(name: &str) -> Option<Tokenizer> {
        Tokenizer::ALL.into_iter().find(|t| t.name() == name)
    }

    fn bpe(self) -> &'static CoreBPE {
        match self {
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }

    /// Number of tokens in `text` (special-token text counted as ordinary text).
    pub fn count(self, text: &str) -> usize {
        self.bpe().encode_ordinary(text).len()
    }
}

/// How a project cuts its documents into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkSettings {
    pub chunk_tokens: usize,
    pub overlap_tokens: usize,
    pub tokenizer: Tokenizer,
}

impl Default for ChunkSettings {
    fn default() -> Self {
        ChunkSettings { chunk_tokens: 1200, overlap_tokens: 100, tokenizer: Tokenizer::Cl100kBase }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkSettingsError {
    #[error("chunk size must be between 16 and 32768 tokens, not {0}")]
    Size(usize),
    #[error("overlap must be smaller than half the chunk size ({max} tokens at most), not {overlap}")]
    Overlap { overlap: usize, max: usize },
}

impl ChunkSettings {
    pub fn validate(&self) -> Result<(), ChunkSettingsError> {
        if !(16..=32768).contains(&self.chunk_tokens) {
            return Err(ChunkSettingsError::Size(self.chunk_tokens));
        }
        let max = (self.chunk_tokens - 1) / 2;
        if self.overlap_tokens > max {
            return Err(ChunkSettingsError::Overlap { overlap: self.overlap_tokens, max });
        }
        Ok(())
    }
}

/// One chunk of a document: its byte range in the document's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Position in the document, from 0.
    pub index: usize,
    /// Byte offsets into the document text; `text[start..end]` is the chunk.
    pub start: usize,
    pub end: usize,
    pub tokens: usize,
}

/// Cuts `text` into chunks of at most `settings.chunk_tokens` tokens.
/// Leading and trailing whitespace of each chunk is left out of its range.
pub fn chunk_text(text: &str, settings: &ChunkSettings) -> Result<Vec<Chunk>, ChunkSettingsError> {
    settings.validate()?;
    let config = ChunkConfig::new(settings.chunk_tokens)
        .with_sizer(settings.tokenizer.bpe())
        .with_overlap(settings.overlap_tokens)
        .expect("overlap validated to be below the chunk size");
    let splitter = TextSplitter::new(config);
    Ok(splitter
        .chunk_indices(text)
        .enumerate()
        .map(|(index, (start, piece))| Chunk {
            index,
            start,
            end: start + piece.len(),
            tokens: settings.tokenizer.count(piece),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> String {
        let raw = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/corpora/alice_in_wonderland.txt"
        ))
        .unwrap();
        raw.replace("\r\n", "\n")
    }

    #[test]
    fn counts_match_tiktoken_reference() {
        // Published token ids (OpenAI's tiktoken README and cookbook):
        // cl100k_base "hello world" -> [15339, 1917]; o200k_base -> [24912, 2375].
        assert_eq!(Tokenizer::Cl100kBase.bpe().encode_ordinary("hello world"), vec![15339, 1917]);
        assert_eq!(Tokenizer::O200kBase.bpe().encode_ordinary("hello world"), vec![24912, 2375]);
        assert_eq!(Tokenizer::Cl100kBase.count("hello world"), 2);
        assert_eq!(Tokenizer::Cl100kBase.count(""), 0);
    }

    #[test]
    fn chunks_respect_size_and_words_and_cover_the_text() {
        let text = alice();
        let settings = ChunkSettings::default();
        let chunks = chunk_text(&text, &settings).unwrap();
        let total = Tokenizer::Cl100kBase.count(&text);
        // Every chunk fits 1200 tokens, and semantic packing fills them at
        // least half on average (Alice: 36,780 tokens in 40 chunks).
        assert!(chunks.len() >= total / 1200, "{} chunks for {total} tokens", chunks.len());
        assert!(chunks.len() <= total / 600, "{} chunks for {total} tokens", chunks.len());
        for c in &chunks {
            assert!(c.tokens <= 1200, "chunk {} has {} tokens", c.index, c.tokens);
            let piece = &text[c.start..c.end];
            // No word cut: each boundary touches whitespace, punctuation or the text's end.
            let before = text[..c.start].chars().next_back();
            let after = text[c.end..].chars().next();
            assert!(
                before.is_none_or(|ch| !ch.is_alphanumeric()) || !piece.starts_with(char::is_alphanumeric),
                "chunk {} starts inside a word",
                c.index
            );
            assert!(
                after.is_none_or(|ch| !ch.is_alphanumeric()) || !piece.ends_with(char::is_alphanumeric),
                "chunk {} ends inside a word",
                c.index
            );
        }
        // Consecutive chunks overlap or touch: nothing but whitespace is left out.
        for pair in chunks.windows(2) {
            let gap = &text[pair[0].end.min(pair[1].start)..pair[1].start];
            assert!(
                pair[1].start <= pair[0].end || gap.trim().is_empty(),
                "text lost between chunks {} and {}",
                pair[0].index,
                pair[1].index
            );
        }
        assert!(text[..chunks[0].start].trim().is_empty());
        assert!(text[chunks.last().unwrap().end..].trim().is_empty());
    }

    #[test]
    fn smaller_chunks_with_overlap_repeat_text() {
        let text = alice();
        let settings = ChunkSettings { chunk_tokens: 512, overlap_tokens: 64, tokenizer: Tokenizer::Cl100kBase };
        let chunks = chunk_text(&text, &settings).unwrap();
        let overlapping = chunks.windows(2).filter(|p| p[1].start < p[0].end).count();
        assert!(overlapping * 2 > chunks.len(), "only {overlapping} of {} chunk pairs overlap", chunks.len());
    }

    #[test]
    fn bad_settings_are_refused_with_a_reason() {
        let s = ChunkSettings { chunk_tokens: 100, overlap_tokens: 60, tokenizer: Tokenizer::Cl100kBase };
        assert_eq!(
            chunk_text("x", &s).unwrap_err().to_string(),
            "overlap must be smaller than half the chunk size (49 tokens at most), not 60"
        );
        let s = ChunkSettings { chunk_tokens: 4, ..s };
        assert!(matches!(s.validate(), Err(ChunkSettingsError::Size(4))));
    }
}

//! A chunker linear in the text's length, for the texts text-splitter
//! takes quadratic time on.
//!
//! text-splitter measures a semantic unit whole before it descends to the
//! next level, once per chunk inside it: a "sentence" of 1 MB (one word of
//! 1 MB, `abab…`, a long run of CJK characters without punctuation, a file
//! without full stops) is tokenised again for each of its hundreds of
//! chunks — 10 s for 256 KB here, 54 s for 1 MB. Real prose
//! keeps every sentence far below a chunk and is chunked by text-splitter
//! as before ([`needs_packer`] decides, in linear time).
//!
//! The packer keeps text-splitter's rule — each chunk ends at the highest
//! boundary that still fits (paragraph, line, sentence, word, character) —
//! and finds it from one tokenisation of the whole text: each chunk is a
//! scan of its own bytes, so the whole is O(length). A chunk's count is
//! then taken on its own text, as every chunk's is, and a chunk over the
//! limit (tokens that merge differently at its edges) is cut again a little
//! earlier.

use tiktoken_rs::CoreBPE;
use unicode_segmentation::UnicodeSegmentation;

use super::{Bpe, Chunk, ChunkSettings};

/// Boundary levels, from none to the strongest.
const CHAR: u8 = 1;
const WORD: u8 = 2;
const SENTENCE: u8 = 3;
const LINE: u8 = 4;
const PARAGRAPH: u8 = 5;

/// Whether `text` holds a sentence (in Unicode's sense, UAX #29) longer
/// than four chunks' worth of bytes at the most (4 bytes a token): a unit
/// text-splitter would measure again for each of its chunks.
pub(super) fn needs_packer(text: &str, settings: &ChunkSettings) -> bool {
    let limit = settings.chunk_tokens * 4;
    text.len() > limit && text.split_sentence_bounds().any(|s| s.len() > limit)
}

/// The boundary level at each byte offset of `text` (0: no boundary; the
/// offset `text.len()` is a paragraph boundary).
fn levels(text: &str) -> Vec<u8> {
    let mut at = vec![0u8; text.len() + 1];
    for (i, _) in text.char_indices() {
        at[i] = CHAR;
    }
    for (i, _) in text.split_word_bound_indices() {
        at[i] = WORD;
    }
    for (i, _) in text.split_sentence_bound_indices() {
        at[i] = SENTENCE;
    }
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            let after = i + 1;
            let blank = bytes[..i].iter().rev().take_while(|c| **c == b' ' || **c == b'\t' || **c == b'\r').count();
            let paragraph = i >= blank + 1 && bytes[i - blank - 1] == b'\n';
            at[after] = at[after].max(if paragraph { PARAGRAPH } else { LINE });
        }
    }
    at[0] = PARAGRAPH;
    at[text.len()] = PARAGRAPH;
    at
}

/// The byte offset where each token of `text` starts, and the text's length
/// last (tokens of one piece of `text` as the BPE splits it; a token that
/// ends inside a character moves its end to the character's end).
fn token_starts(text: &str, bpe: &CoreBPE) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 3 + 1);
    for (offset, part) in super::segments(text) {
        let mut at = offset;
        for bytes in bpe._decode_native_and_split(bpe.encode_ordinary(part)) {
            starts.push(at);
            at += bytes.len();
        }
    }
    starts.push(text.len());
    starts
}

/// Cuts `text` into chunks of at most `settings.chunk_tokens` tokens, each
/// ending at the strongest boundary that fits, neighbours overlapping by at
/// most `settings.chunk_overlap` tokens (from a word boundary on).
pub(super) fn chunk(text: &str, settings: &ChunkSettings, bpe: &CoreBPE) -> Vec<Chunk> {
    let level = levels(text);
    let starts = token_starts(text, bpe);
    let n = text.len();
    let ws = |i: usize| text[i..].chars().next().is_some_and(char::is_whitespace);
    // The first token starting at or after byte `b`.
    let token_at = |b: usize| starts.partition_point(|&s| s < b);
    let mut chunks = Vec::new();
    let mut start = 0usize;
    let mut last_end = 0usize;
    while start < n {
        while start < n && ws(start) {
            start += text[start..].chars().next().map_or(1, char::len_utf8);
        }
        if start >= n {
            break;
        }
        // Where this chunk's own text begins: past the previous chunk's end
        // and any whitespace after it.
        let mut first = start.max(last_end);
        while first < n && ws(first) {
            first += text[first..].chars().next().map_or(1, char::len_utf8);
        }
        if first >= n {
            break;
        }
        let mut budget = settings.chunk_tokens;
        let chunk = loop {
            let limit = starts[(token_at(start) + budget).min(starts.len() - 1)];
            // The strongest boundary in (first, limit], the last of its level.
            let mut best = (0u8, 0usize);
            for i in (first + 1..=limit).rev() {
                if level[i] > best.0 {
                    best = (level[i], i);
                    if level[i] == PARAGRAPH {
                        break;
                    }
                }
            }
            let mut end = if best.0 == 0 {
                // Not one character fits: take one.
                (first + 1..=n).find(|&i| level[i] > 0).unwrap_or(n)
            } else {
                best.1
            };
            while text[..end].chars().next_back().is_some_and(char::is_whitespace) {
                end -= text[..end].chars().next_back().map_or(1, char::len_utf8);
            }
            let tokens = settings.tokenizer.count(&text[start..end]);
            if tokens <= settings.chunk_tokens || budget <= 1 {
                break Chunk { index: chunks.len(), start, end, tokens };
            }
            budget = budget.saturating_sub((tokens - settings.chunk_tokens).max(1)).max(1);
        };
        last_end = chunk.end;
        chunks.push(chunk);
        if last_end >= n || text[last_end..].trim().is_empty() {
            break;
        }
        // The next chunk starts at the earliest word boundary that leaves
        // at most `overlap` tokens of this one's end (inside one unbroken
        // word, at the earliest character), else where this one ended.
        let back = starts[token_at(last_end).saturating_sub(settings.chunk_overlap)];
        let from = back.max(start + 1);
        let earliest = |at_least: u8| (from..last_end).find(|&i| level[i] >= at_least && !ws(i));
        start = earliest(WORD).or_else(|| earliest(CHAR)).unwrap_or(last_end);
    }
    chunks
}

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

mod packer;

use serde::{Deserialize, Serialize};
use text_splitter::{ChunkConfig, TextSplitter};
use tiktoken_rs::CoreBPE;

/// The BPE vocabularies Assay counts tokens with.
pub use types::Tokenizer;

/// Counting with a [`Tokenizer`] (the vocabulary is the types crate's
/// closed set; tiktoken is the engine's).
pub trait Bpe {
    fn bpe(self) -> &'static CoreBPE;
    /// Number of tokens in `text` (special-token text counted as ordinary
    /// text): tiktoken's count, except that a run of more than
    /// [`MAX_RUN`] bytes without a break (see [`segments`]) is counted in
    /// pieces of that size.
    fn count(self, text: &str) -> usize;
}

impl Bpe for Tokenizer {
    fn bpe(self) -> &'static CoreBPE {
        match self {
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }

    fn count(self, text: &str) -> usize {
        let bpe = self.bpe();
        segments(text).map(|(_, s)| bpe.encode_ordinary(s).len()).sum()
    }
}

/// The longest run of text (no change between whitespace and the rest)
/// that is encoded whole. tiktoken merges one piece of n bytes in
/// O(n log n) with a heap of n entries: one unbroken word of 8 MB took
/// 13 s to count and chunk, much of it cache misses in that heap. Prose
/// never has such a run (the corpora's longest is a few hundred bytes), so
/// its counts are tiktoken's exactly; a longer run is cut at a character
/// boundary every `MAX_RUN` bytes, which can change its count by about a
/// token per cut.
pub const MAX_RUN: usize = 1024;

/// `text` as (offset, part) in order, cut only inside runs longer than
/// [`MAX_RUN`]: prose is one part, the whole text.
pub fn segments(text: &str) -> impl Iterator<Item = (usize, &str)> {
    // Lazily, with no list of cuts: token counts call this on every chunk.
    let mut chars = text.char_indices();
    let (mut from, mut run_start, mut run_ws, mut ended) = (0, 0, None, false);
    std::iter::from_fn(move || {
        if ended {
            return None;
        }
        for (i, c) in chars.by_ref() {
            let ws = c.is_whitespace();
            if run_ws != Some(ws) {
                run_ws = Some(ws);
                run_start = i;
            } else if i - run_start >= MAX_RUN {
                run_start = i;
                let part = (from, &text[from..i]);
                from = i;
                return Some(part);
            }
        }
        ended = true;
        // The rest (the empty text is one empty part).
        (text.len() > from || text.is_empty()).then(|| (from, &text[from..]))
    })
}

/// text-splitter's sizer: tokens as [`Tokenizer::count`] counts them.
struct Sizer(Tokenizer);

impl text_splitter::ChunkSizer for Sizer {
    fn size(&self, chunk: &str) -> usize {
        self.0.count(chunk)
    }
}

/// How a project cuts its documents into chunks: the request, validated
/// by [`ChunkRequest::validate`](types::requests::ChunkRequest::validate).
pub type ChunkSettings = types::requests::ChunkRequest;
/// Chunking settings out of range, by field.
pub type ChunkSettingsError = types::requests::OutOfRange;

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
///
/// Prose goes through text-splitter; a text with a "sentence" of more than
/// four chunks' bytes (one unbroken word, a run without full stops) goes
/// through [`packer`], which keeps the rule in time linear in the text's
/// length, where text-splitter's grows with its square.
pub fn chunk_text(text: &str, settings: &ChunkSettings) -> Result<Vec<Chunk>, ChunkSettingsError> {
    settings.validate()?;
    let chunks = split(text, settings)?;
    Ok(merge_slivers(text, chunks, settings))
}

/// Chunks under this share of the chunk size (a tenth, at least 8 tokens)
/// are slivers: a heading, an illustration's mark between runs of blank
/// lines (Project Gutenberg's "STAVE ONE\n\n\n[Illustration]\n\n\n\n\n"),
/// which text-splitter cuts off as units of their own because a run of
/// blank lines ranks above a paragraph break.
pub fn sliver_tokens(settings: &ChunkSettings) -> usize {
    (settings.chunk_tokens / 10).max(8)
}

/// Merges each sliver into the chunk after it (the last one into the chunk
/// before), wherever the two fit in the chunk size together; a sliver next
/// to full chunks stays as it is. Chunks are renumbered.
fn merge_slivers(text: &str, chunks: Vec<Chunk>, settings: &ChunkSettings) -> Vec<Chunk> {
    let (small, limit) = (sliver_tokens(settings), settings.chunk_tokens);
    let joined = |a: &Chunk, b: &Chunk| {
        let (start, end) = (a.start.min(b.start), a.end.max(b.end));
        Chunk { index: 0, start, end, tokens: settings.tokenizer.count(&text[start..end]) }
    };
    let mut out: Vec<Chunk> = Vec::with_capacity(chunks.len());
    let mut carry: Option<Chunk> = None;
    for c in chunks {
        let c = match carry.take() {
            Some(s) => {
                let m = joined(&s, &c);
                if m.tokens <= limit {
                    m
                } else {
                    out.push(s);
                    c
                }
            }
            None => c,
        };
        if c.tokens < small {
            carry = Some(c);
        } else {
            out.push(c);
        }
    }
    if let Some(s) = carry {
        match out.last() {
            Some(prev) if joined(prev, &s).tokens <= limit => {
                let m = joined(prev, &s);
                *out.last_mut().expect("a last chunk") = m;
            }
            _ => out.push(s),
        }
    }
    for (i, c) in out.iter_mut().enumerate() {
        c.index = i;
    }
    out
}

fn split(text: &str, settings: &ChunkSettings) -> Result<Vec<Chunk>, ChunkSettingsError> {
    if packer::needs_packer(text, settings) {
        return Ok(packer::chunk(text, settings, settings.tokenizer.bpe()));
    }
    let config = ChunkConfig::new(settings.chunk_tokens)
        .with_sizer(Sizer(settings.tokenizer))
        .with_overlap(settings.chunk_overlap)
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
    fn prose_is_counted_whole_and_long_runs_in_pieces() {
        let text = alice();
        assert_eq!(segments(&text).count(), 1);
        assert_eq!(Tokenizer::Cl100kBase.count(&text), Tokenizer::Cl100kBase.bpe().encode_ordinary(&text).len());
        let long = format!("start {} end", "ab".repeat(1500));
        let parts: Vec<(usize, &str)> = segments(&long).collect();
        assert_eq!(parts.len(), 3, "{:?}", parts.iter().map(|p| (p.0, p.1.len())).collect::<Vec<_>>());
        assert_eq!(parts.iter().map(|p| p.1).collect::<String>(), long);
        assert!(parts.windows(2).all(|w| w[0].0 + w[0].1.len() == w[1].0));
        // Within a token a cut: the count moves by no more than one per cut.
        let exact = Tokenizer::Cl100kBase.bpe().encode_ordinary(&long).len();
        assert!(Tokenizer::Cl100kBase.count(&long).abs_diff(exact) <= 2);
        assert_eq!(segments("").count(), 1);
    }

    #[test]
    fn chunks_respect_size_and_words_and_cover_the_text() {
        let text = alice();
        let settings = ChunkSettings::default();
        assert!(!packer::needs_packer(&text, &settings), "a novel goes through text-splitter");
        assert_sound(&text, &chunk_text(&text, &settings).unwrap(), &settings);
        // The linear packer, on the same novel, keeps the same promises.
        let packed = packer::chunk(&text, &settings, settings.tokenizer.bpe());
        assert_sound(&text, &packed, &settings);
        for (c, t) in packed.iter().zip(chunks_of(&text, &packed)) {
            assert_eq!(c.tokens, Tokenizer::Cl100kBase.count(t), "chunk {}'s count is its own text's", c.index);
        }
    }

    fn chunks_of<'a>(text: &'a str, chunks: &[Chunk]) -> Vec<&'a str> {
        chunks.iter().map(|c| &text[c.start..c.end]).collect()
    }

    /// Every chunk fits, semantic packing fills them at least half on
    /// average (Alice: 36,780 tokens in 40 chunks), no word is cut, and
    /// nothing but whitespace is left out between chunks or at the ends.
    fn assert_sound(text: &str, chunks: &[Chunk], settings: &ChunkSettings) {
        let max = settings.chunk_tokens;
        let total = settings.tokenizer.count(text);
        assert!(chunks.len() >= total / max, "{} chunks for {total} tokens", chunks.len());
        assert!(chunks.len() <= total / (max / 2), "{} chunks for {total} tokens", chunks.len());
        for c in chunks {
            assert!(c.tokens <= max, "chunk {} has {} tokens", c.index, c.tokens);
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

    /// Texts text-splitter takes quadratic time on go through the packer,
    /// which chunks them soundly (one unbroken word has no word boundary
    /// to respect: only the sizes, coverage and overlap are asserted).
    #[test]
    fn texts_without_sentences_are_packed_soundly() {
        let settings = ChunkSettings { chunk_tokens: 512, chunk_overlap: 50, tokenizer: Tokenizer::Cl100kBase };
        let n = 96 << 10;
        for (name, text) in [
            ("abab", "ab".repeat(n / 2)),
            ("one word", (0..n).map(|i| (b'a' + ((i * 7919 + i / 3) % 26) as u8) as char).collect::<String>()),
            ("han", "中文字".repeat(n / 9)),
            ("no full stop", "lorem ipsum dolor ".repeat(n / 18)),
        ] {
            assert!(packer::needs_packer(&text, &settings), "{name}");
            let chunks = chunk_text(&text, &settings).unwrap();
            assert!(chunks.len() >= settings.tokenizer.count(&text) / 512, "{name}: {} chunks", chunks.len());
            for c in &chunks {
                assert!(c.tokens <= 512 && c.tokens > 0, "{name}: chunk {} has {} tokens", c.index, c.tokens);
                assert_eq!(c.tokens, settings.tokenizer.count(&text[c.start..c.end]), "{name}");
            }
            for p in chunks.windows(2) {
                assert!(p[1].start > p[0].start && p[1].end > p[0].end, "{name}: chunks go forward");
                assert!(p[1].start <= p[0].end || text[p[0].end..p[1].start].trim().is_empty(), "{name}: text lost");
            }
            let overlapping = chunks.windows(2).filter(|p| p[1].start < p[0].end).count();
            assert!(overlapping * 2 > chunks.len(), "{name}: {overlapping} of {} pairs overlap", chunks.len());
            assert_eq!((chunks[0].start, chunks.last().unwrap().end), (0, text.trim_end().len()), "{name}");
        }
        // Where the text has words, no chunk cuts one.
        let text = "lorem ipsum dolor ".repeat(n / 18);
        for c in chunk_text(&text, &settings).unwrap() {
            assert!(c.start == 0 || text[..c.start].ends_with(' '), "chunk {} starts inside a word", c.index);
            assert!(
                text[c.end..].starts_with(' ') || c.end == text.trim_end().len(),
                "chunk {} ends inside one",
                c.index
            );
        }
    }

    /// Project Gutenberg's headings between runs of blank lines:
    /// the first 30 KB of A Christmas Carol made 9 chunks, two of them the
    /// headings alone (9 and 5 tokens); now 7, none a sliver, the whole text
    /// still covered in order.
    #[test]
    fn headings_between_blank_runs_join_their_neighbours() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/christmas_carol_stave1.txt");
        let text = std::fs::read_to_string(path).unwrap();
        let mut end = 30_000;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let slice = &text[..end];
        let settings = ChunkSettings::default();
        let chunks = chunk_text(slice, &settings).unwrap();
        assert_eq!(chunks.len(), 7);
        assert!(chunks.iter().all(|c| c.tokens >= sliver_tokens(&settings)), "{chunks:?}");
        assert!(slice[chunks[0].start..chunks[0].end].starts_with("STAVE ONE"));
        assert!(slice[chunks[0].start..chunks[0].end].contains("Marley was dead"), "the heading joined its stave");
        assert_sound(slice, &chunks, &settings);
        // A sliver between two full chunks has nowhere to go: it stays.
        let tiny = ChunkSettings { chunk_tokens: 16, chunk_overlap: 0, ..Default::default() };
        let text = format!("{}\n\n\n\nSTAVE TWO\n\n\n\n{}", vec!["word"; 15].join(" "), vec!["word"; 15].join(" "));
        let chunks = chunk_text(&text, &tiny).unwrap();
        assert_sound(&text, &chunks, &tiny);
        assert!(chunks.iter().all(|c| c.tokens <= 16));
    }

    /// Every document of the shipped corpora is prose: text-splitter's, as before.
    #[test]
    fn the_corpora_go_through_text_splitter() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let docs: Vec<String> = if path.extension().is_some_and(|e| e == "jsonl") {
                text.lines()
                    .filter_map(|l| {
                        serde_json::from_str::<serde_json::Value>(l).ok()?["context"].as_str().map(String::from)
                    })
                    .collect()
            } else {
                vec![text]
            };
            for d in docs {
                for s in [
                    ChunkSettings::default(),
                    ChunkSettings { chunk_tokens: 512, chunk_overlap: 50, ..Default::default() },
                ] {
                    assert!(!packer::needs_packer(&d, &s), "{} at {} tokens", path.display(), s.chunk_tokens);
                }
            }
        }
    }

    #[test]
    fn smaller_chunks_with_overlap_repeat_text() {
        let text = alice();
        let settings = ChunkSettings { chunk_tokens: 512, chunk_overlap: 64, tokenizer: Tokenizer::Cl100kBase };
        let chunks = chunk_text(&text, &settings).unwrap();
        let overlapping = chunks.windows(2).filter(|p| p[1].start < p[0].end).count();
        assert!(overlapping * 2 > chunks.len(), "only {overlapping} of {} chunk pairs overlap", chunks.len());
    }

    #[test]
    fn bad_settings_are_refused_with_a_reason() {
        let s = ChunkSettings { chunk_tokens: 100, chunk_overlap: 60, tokenizer: Tokenizer::Cl100kBase };
        assert_eq!(
            chunk_text("x", &s).unwrap_err().to_string(),
            "chunk_overlap: must be smaller than half the chunk size (49 tokens at most), not 60"
        );
        let s = ChunkSettings { chunk_tokens: 4, ..s };
        assert_eq!(s.validate().unwrap_err().to_string(), "chunk_tokens: must be from 16 to 32768 tokens, not 4");
    }
}

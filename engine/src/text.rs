//! Plain-text helpers shared by the offline implementations.

/// Sentences: split after `.`, `!` or `?` (and closing quotes) followed by
/// whitespace, and at blank lines.
/// Whether `before` ends with a title written with a full stop ("Mr",
/// "Mrs", "Dr", "St", "Ms", "Messrs", "Prof"): "Mr. Holmes" is one sentence.
fn after_title(before: &str) -> bool {
    let last = before.rsplit(|c: char| !c.is_alphabetic()).next().unwrap_or("");
    matches!(last, "Mr" | "Mrs" | "Ms" | "Dr" | "St" | "Messrs" | "Prof")
}

pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(pos, ch)) in chars.iter().enumerate() {
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let end_mark = matches!(ch, '.' | '!' | '?')
            && next.is_none_or(|c| c.is_whitespace() || c == '"' || c == '\'' || c == '”')
            && !(ch == '.' && after_title(&text[start..pos]));
        let blank_line = ch == '\n' && next == Some('\n');
        if end_mark || blank_line {
            let mut end = pos + ch.len_utf8();
            // Keep a closing quote with its sentence.
            if let Some(&(qpos, q)) = chars.get(i + 1).filter(|(_, c)| matches!(c, '"' | '\'' | '”')) {
                end = qpos + q.len_utf8();
            }
            let s = text[start..end.min(text.len())].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = end.min(text.len());
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "for", "from", "had", "has", "have", "he", "her", "him", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "one", "or", "our", "out", "said", "she", "so",
    "some", "than", "that", "the", "their", "them", "then", "there", "they", "this", "to", "up", "very", "was", "we",
    "were", "what", "when", "which", "who", "will", "with", "would", "you", "your",
];

/// The content words of a text, lower-cased: split at anything but letters,
/// digits and apostrophes; one-letter words and common English stop words
/// dropped. Shared by the offline implementations and the lexical retrievers.
pub fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| w.chars().count() > 1 && !STOPWORDS.contains(&w.as_str()))
}

/// Hashes of every run of `n` consecutive words (lower-cased, split at
/// anything but letters and digits): where two texts share runs, one quotes
/// the other. A text shorter than `n` words is one run of all its words.
pub fn word_runs(text: &str, n: usize) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let words: Vec<String> =
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    let n = n.max(1).min(words.len());
    if n == 0 {
        return Vec::new();
    }
    words
        .windows(n)
        .map(|w| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            w.hash(&mut h);
            h.finish()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_on_end_marks_and_blank_lines() {
        let s = sentences("Alice sat down. \"Who are you?\" said the Caterpillar.\n\nChapter Two\nShe ran");
        assert_eq!(s, ["Alice sat down.", "\"Who are you?\"", "said the Caterpillar.", "Chapter Two\nShe ran"]);
        // A title's full stop ends no sentence.
        assert_eq!(
            sentences("Mr. Holmes rang. Dr. Watson came, and Mrs. Hudson. The end."),
            ["Mr. Holmes rang.", "Dr. Watson came, and Mrs. Hudson.", "The end."]
        );
    }
}

/// `text` cut into segments, `true` marking whole-word, case-insensitive
/// (ASCII) occurrences of any of `names`; longer names win where they overlap.
/// Concatenating the segments gives `text` back. (For many texts against the
/// same names, prepare a [`Highlighter`] once.)
pub fn highlight(text: &str, names: &[&str]) -> Vec<(String, bool)> {
    Highlighter::new(names).highlight(text)
}

/// [`highlight`] with its names prepared once: one automaton finds every
/// occurrence of every name in one pass over a text (5,040 questions
/// against a graph's 1,356 names took seconds searched name by name).
pub struct Highlighter {
    automaton: Option<aho_corasick::AhoCorasick>,
}

impl Highlighter {
    pub fn new(names: &[&str]) -> Highlighter {
        let mut names: Vec<String> =
            names.iter().map(|n| n.trim().to_ascii_lowercase()).filter(|n| !n.is_empty()).collect();
        // Longest first: a name's pattern index is its rank.
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        names.dedup();
        let automaton = (!names.is_empty())
            .then(|| aho_corasick::AhoCorasick::builder().ascii_case_insensitive(true).build(&names).ok())
            .flatten();
        Highlighter { automaton }
    }

    /// `text` cut into segments as [`highlight`] cuts it.
    pub fn highlight(&self, text: &str) -> Vec<(String, bool)> {
        let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
        // Every whole-word occurrence; then, longest name first and each
        // name's occurrences left to right, kept unless it overlaps one kept
        // before — what trying the names one after another keeps.
        let mut found: Vec<(usize, usize, usize)> = match &self.automaton {
            None => Vec::new(),
            Some(a) => a
                .find_overlapping_iter(text)
                .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
                .filter(|&(_, s, e)| !is_word(text[..s].chars().next_back()) && !is_word(text[e..].chars().next()))
                .collect(),
        };
        found.sort_unstable();
        let mut marks: Vec<(usize, usize)> = Vec::new();
        for (_, start, end) in found {
            if !marks.iter().any(|&(s, e)| start < e && s < end) {
                marks.push((start, end));
            }
        }
        segments(text, marks)
    }
}

/// `text` cut at `marks` (byte spans, not overlapping): the marked spans
/// and the text between them, in order; concatenated, `text` again.
fn segments(text: &str, mut marks: Vec<(usize, usize)>) -> Vec<(String, bool)> {
    marks.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for (s, e) in marks {
        if s > at {
            out.push((text[at..s].to_string(), false));
        }
        out.push((text[s..e].to_string(), true));
        at = e;
    }
    if at < text.len() || out.is_empty() {
        out.push((text[at..].to_string(), false));
    }
    out
}

#[cfg(test)]
mod highlight_tests {
    use super::highlight;

    #[test]
    fn whole_word_mentions_are_marked_longest_first_and_the_text_is_kept() {
        let text = "The Mock Turtle sighed. “Turtles!” said the Queen’s mock turtle to Alice.";
        let segs = highlight(text, &["Mock Turtle", "Turtle"]);
        assert_eq!(segs.iter().map(|(s, _)| s.as_str()).collect::<String>(), text);
        let marked: Vec<&str> = segs.iter().filter(|(_, m)| *m).map(|(s, _)| s.as_str()).collect();
        assert_eq!(marked, ["Mock Turtle", "mock turtle"], "not inside “Turtles”, not twice");
        assert_eq!(highlight("", &["x"]), [(String::new(), false)]);
        assert_eq!(highlight("abc", &[]), [("abc".to_string(), false)]);
    }

    /// The name-by-name search the automaton replaced, as it was.
    fn name_by_name(text: &str, names: &[&str]) -> Vec<(String, bool)> {
        let lower = text.to_ascii_lowercase();
        let mut names: Vec<String> =
            names.iter().map(|n| n.trim().to_ascii_lowercase()).filter(|n| !n.is_empty()).collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        names.dedup();
        let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
        let mut marks: Vec<(usize, usize)> = Vec::new();
        for name in &names {
            let mut from = 0;
            while let Some(found) = lower[from..].find(name.as_str()) {
                let (start, end) = (from + found, from + found + name.len());
                let clear = !is_word(text[..start].chars().next_back()) && !is_word(text[end..].chars().next());
                if clear && !marks.iter().any(|&(s, e)| start < e && s < end) {
                    marks.push((start, end));
                }
                from = start + lower[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        super::segments(text, marks)
    }

    #[test]
    fn the_automaton_marks_what_the_name_by_name_search_marked() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/alice_in_wonderland.txt");
        let text = std::fs::read_to_string(path).expect("the shared corpora");
        let names = [
            "Alice",
            "Mock Turtle",
            "Turtle",
            "Mock",
            "Queen",
            "Queen of Hearts",
            "Hearts",
            "the",
            "Hatter",
            "March Hare",
            "Hare",
            "White Rabbit",
            "Rabbit",
            "Cat",
            "Cheshire Cat",
            "Dormouse",
            "Gryphon",
            "King",
            "a",
            "I",
            "said the",
            "the Queen",
        ];
        let prepared = super::Highlighter::new(&names);
        let mut marked = 0;
        for paragraph in text.split("\r\n\r\n") {
            let got = prepared.highlight(paragraph);
            assert_eq!(got, name_by_name(paragraph, &names), "{paragraph}");
            marked += got.iter().filter(|(_, m)| *m).count();
        }
        assert!(marked > 3_000, "{marked} mentions marked");
    }
}

//! Plain-text helpers shared by the offline implementations.

/// Sentences: split after `.`, `!` or `?` (and closing quotes) followed by
/// whitespace, and at blank lines.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(pos, ch)) in chars.iter().enumerate() {
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let end_mark = matches!(ch, '.' | '!' | '?')
            && next.is_none_or(|c| c.is_whitespace() || c == '"' || c == '\'' || c == '”');
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_on_end_marks_and_blank_lines() {
        let s = sentences("Alice sat down. \"Who are you?\" said the Caterpillar.\n\nChapter Two\nShe ran");
        assert_eq!(s, ["Alice sat down.", "\"Who are you?\"", "said the Caterpillar.", "Chapter Two\nShe ran"]);
    }
}

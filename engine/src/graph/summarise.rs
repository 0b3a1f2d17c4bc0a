//! One-sentence summaries of chunks. Seed 000 (§III-A) summarises the text
//! chunks behind a sampled subgraph before asking for subgraph-level
//! questions; the summaries job makes them for a whole corpus.
//!
//! Offline implementation: extractive. The sentence whose content words are
//! most frequent in the chunk (score = sum of the words' chunk frequencies
//! over the square root of the sentence's length, so long sentences do not
//! win by length alone), trimmed to 40 words.

use std::collections::HashMap;

use crate::jobs::{one_call, ItemOutcome, WorkItem};
use crate::llm::prompt::delimited;
use crate::llm::{ChatRequest, Gateway, Message};
use crate::text::{sentences, words};

pub const PURPOSE: &str = "summarise_chunk";
pub const PROMPT: &str = include_str!("../../prompts/summarise_chunk.txt");

pub fn request(text: &str) -> ChatRequest {
    let mut req = ChatRequest::new(
        PURPOSE,
        vec![Message::system(PROMPT.trim()), Message::user(format!("Passage:\n<<<\n{text}\n>>>"))],
    );
    req.max_tokens = Some(80);
    req
}

/// A chunk's summary item: the chunk's text (key `chunk-ID`). The outcome is
/// the summary's text.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Item {
    pub text: String,
}

crate::text_job_items!(Item);

/// Summarises one chunk [`Item`] through the gateway.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let Item { text } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    one_call::<Item>(gateway, job_id, &item, PROMPT, &request(&text), |reply| Ok(reply.trim().to_string())).await
}

/// The extractive summary of a text (see the module docs).
pub fn extractive(text: &str) -> String {
    let mut freq: HashMap<String, f64> = HashMap::new();
    for w in words(text) {
        *freq.entry(w).or_default() += 1.0;
    }
    let best = sentences(text)
        .into_iter()
        // Fragments left by a mid-sentence "?" or "!" start with punctuation.
        .filter(|s| {
            s.split_whitespace().count() >= 4 && s.starts_with(|c: char| c.is_alphanumeric() || "\"'“‘".contains(c))
        })
        .map(|s| {
            let ws: Vec<String> = words(s).collect();
            let score =
                ws.iter().map(|w| freq.get(w).copied().unwrap_or(0.0)).sum::<f64>() / (ws.len().max(1) as f64).sqrt();
            (score, s)
        })
        .fold(None::<(f64, &str)>, |best, cur| match best {
            Some(b) if b.0 >= cur.0 => Some(b),
            _ => Some(cur),
        });
    let sentence = best.map(|(_, s)| s).unwrap_or_else(|| text.trim());
    let flat: Vec<&str> = sentence.split_whitespace().collect();
    if flat.len() > 40 {
        format!("{} …", flat[..40].join(" "))
    } else {
        flat.join(" ")
    }
}

/// The offline provider's implementation of this task.
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let text = delimited(message).ok_or("the request has no <<< >>> delimited passage")?;
    Ok(extractive(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_central_sentence_wins() {
        // salt, saltmere and pans each occur twice, all in the second sentence.
        let text = "It was cold. Salt from the Saltmere pans was prized by the Saltmere guild, which kept the salt pans in repair. \
                    The herring boats came in. Gulls cried.";
        assert_eq!(
            extractive(text),
            "Salt from the Saltmere pans was prized by the Saltmere guild, which kept the salt pans in repair."
        );
        // Fragments that begin with punctuation are not candidates.
        let text = "'Which way?', holding her hand on her head, Alice felt which way she was growing. \
                    Alice was surprised to find that she stayed the same size.";
        assert_eq!(extractive(text), "Alice was surprised to find that she stayed the same size.");
        // Ties go to the earlier sentence.
        assert_eq!(extractive("Red boats sail home. Blue boats sail home."), "Red boats sail home.");
    }

    #[test]
    fn offline_summaries_of_the_sample_name_its_subjects() {
        let (_, text) = crate::sample::SAMPLE_FILES[2];
        let summary = offline(&request(text)).unwrap();
        assert!(summary.split_whitespace().count() <= 41, "{summary}");
        // A sentence of the text itself (extractive), cut at 40 words.
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(summary.trim_end_matches(" …")), "{summary}");
        assert!(summary.starts_with("She refused to build on the Long Tongue"), "{summary}");
        assert_eq!(summary, offline(&request(text)).unwrap(), "deterministic");
    }
}

//! The answer prompt every method shares (`engine/prompts/answer.txt`),
//! with an optional target length in words.
//!
//! Offline: an extractive answer — the context's sentences ranked by the
//! question's content words they contain (each word weighted by how rare it
//! is in the context), taken best first up to the length (the target, else
//! [`DEFAULT_WORDS`]), each sentence once, and shown in context order; with a target the answer
//! is cut or kept to exactly that many words when the context has them.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::Section;
use crate::llm::prompt::{delimited, prompt_hash};
use crate::llm::{count_prompt_tokens, CallContext, ChatRequest, Gateway, Message, Meter};
use crate::text::sentences;
use crate::text::words;

pub const PURPOSE: &str = "answer";
pub const PROMPT: &str = include_str!("../../prompts/answer.txt");
/// Words of an offline answer when no target is given.
pub const DEFAULT_WORDS: usize = 150;

/// A method's answer to one question, with what it retrieved and cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub answer: String,
    pub contexts: Vec<Section>,
    #[serde(flatten)]
    pub meter: Meter,
    /// Time to retrieve the context (including keyword calls).
    pub retrieval_ms: f64,
    /// Time for the whole answer.
    pub query_ms: f64,
}

impl Answer {
    pub fn new(answer: String, contexts: Vec<Section>, meter: Meter, retrieval_ms: f64, started: Instant) -> Answer {
        Answer { answer, contexts, meter, retrieval_ms, query_ms: started.elapsed().as_secs_f64() * 1000.0 }
    }

    pub fn words(&self) -> usize {
        self.answer.split_whitespace().count()
    }
}

/// The length instruction of the prompt.
fn length_instruction(target_words: Option<usize>) -> String {
    match target_words {
        Some(n) => format!("Answer in about {n} words."),
        None => "Answer in one to three paragraphs.".into(),
    }
}

pub fn request(question: &str, context: &str, target_words: Option<usize>) -> ChatRequest {
    let user = format!("Question: {question}\n{}\nContext:\n<<<\n{context}\n>>>", length_instruction(target_words));
    let mut req = ChatRequest::new(PURPOSE, vec![Message::system(PROMPT.trim()), Message::user(user)]);
    req.max_tokens = Some(target_words.map_or(1024, |n| (n as u32 * 2).max(256)));
    // The model's own default temperature (seed 000's methods answered as
    // their systems do; a method's `temperature` parameter sets another,
    // see `rag::method::answer_temperature`).
    req.temperature = None;
    req
}

/// Asks for the answer to `question` from `context`.
pub async fn generate(
    gateway: &Gateway,
    ctx: &CallContext,
    meter: &mut Meter,
    question: &str,
    context: &str,
    target_words: Option<usize>,
) -> Result<String, String> {
    let mut req = request(question, context, target_words);
    if let Some(room) = gateway.prompt_room(PURPOSE, req.max_tokens.unwrap_or(0)).await {
        let fits = |c: &str| count_prompt_tokens(&request(question, c, target_words).messages) as usize <= room;
        if !fits(context) {
            // The context's items come best first: the last ones go.
            let lines: Vec<&str> = context.lines().collect();
            let lo = crate::llm::most_that_fit(lines.len(), |k| fits(&lines[..k].join("\n")));
            if lo == 0 {
                return Err(format!(
                    "the question and instructions alone leave no room for context in the model's window ({room} tokens for the prompt)"
                ));
            }
            req = request(question, &lines[..lo].join("\n"), target_words);
            meter.context_cut_calls += 1;
        }
    }
    let ctx = CallContext { prompt_hash: Some(prompt_hash(PROMPT)), ..ctx.clone() };
    let reply = gateway.chat(&req, &ctx).await.map_err(|e| e.to_string())?;
    meter.add(&reply);
    meter.answer_cut |= reply.truncated;
    let text = reply.text;
    match text.trim() {
        "" => Err("the model returned an empty answer".into()),
        t => Ok(t.to_string()),
    }
}

/// The target length in a request's user message, if it has one.
pub fn target_of(message: &str) -> Option<usize> {
    let rest = message.split("Answer in about ").nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

/// The extractive answer (see the module docs).
pub fn extractive(question: &str, context: &str, target_words: Option<usize>) -> String {
    // The context's items: a tagged line ("[entity …]", "[chunk 12] …")
    // starts one, the untagged lines after it (a chunk's wrapped text)
    // continue it, so a sentence broken across lines stays whole.
    let mut items: Vec<String> = Vec::new();
    for line in context.lines() {
        if line.starts_with("-----") {
            items.push(String::new());
        } else if line.starts_with('[') || items.is_empty() {
            items.push(strip_tag(line).to_string());
        } else if let Some(last) = items.last_mut() {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    // Each sentence once: an entity's description often repeats its chunk's
    // words, whole or cut short ("…"); a sentence contained in one already
    // taken (or containing it) is the same sentence.
    //
    // Two sentences are the same when the shorter equals the longer or, of
    // six words or more, is contained in it. Each kept sentence carries its
    // word count and a prepared searcher: the test runs for every pair, and
    // preparing a searcher per pair (`str::contains`) was a third of an
    // offline experiment's time.
    struct Kept {
        key: String,
        words: usize,
        finder: memchr::memmem::Finder<'static>,
    }
    let mut kept: Vec<Kept> = Vec::new();
    let candidates: Vec<&str> = items
        .iter()
        .flat_map(|l| sentences(l))
        .filter(|s| s.split_whitespace().count() >= 3)
        .filter(|s| {
            let key = format!(" {} ", comparable(s));
            let words = key.split_whitespace().count();
            let mut finder: Option<memchr::memmem::Finder<'static>> = None;
            let same = |k: &Kept, finder: &mut Option<memchr::memmem::Finder<'static>>| {
                if k.key.len() <= key.len() {
                    // The kept one is the shorter (or as long).
                    k.key == key || k.words >= 6 && k.finder.find(key.as_bytes()).is_some()
                } else {
                    words >= 6
                        && finder
                            .get_or_insert_with(|| memchr::memmem::Finder::new(key.as_bytes()).into_owned())
                            .find(k.key.as_bytes())
                            .is_some()
                }
            };
            if kept.iter().any(|k| same(k, &mut finder)) {
                return false;
            }
            let finder = finder.unwrap_or_else(|| memchr::memmem::Finder::new(key.as_bytes()).into_owned());
            kept.push(Kept { key, words, finder });
            true
        })
        .collect();
    if candidates.is_empty() {
        return "The retrieved context holds nothing to answer this question from.".into();
    }
    // Rarer words of the question weigh more: idf over the candidate sentences.
    let n = candidates.len() as f64;
    let mut df: HashMap<String, f64> = HashMap::new();
    for s in &candidates {
        for w in words(s).collect::<HashSet<_>>() {
            *df.entry(w).or_default() += 1.0;
        }
    }
    // In a fixed order: the scores are sums of floats, and a HashSet's
    // order differs from run to run — so would near-ties between sentences
    // (6 of 150 offline answers changed between two runs).
    let asked: std::collections::BTreeSet<String> = words(question).collect();
    let mut ranked: Vec<(usize, f64)> = candidates
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let present: HashSet<String> = words(s).collect();
            let score: f64 = asked
                .iter()
                .filter(|w| present.contains(*w))
                .map(|w| (1.0 + n / df.get(w).copied().unwrap_or(1.0)).ln())
                .sum();
            (i, score)
        })
        .collect();
    // Best first; ties in context order.
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let limit = target_words.unwrap_or(DEFAULT_WORDS).max(1);
    let mut chosen: Vec<usize> = Vec::new();
    let mut count = 0;
    for (i, _) in ranked {
        if count >= limit {
            break;
        }
        count += candidates[i].split_whitespace().count();
        chosen.push(i);
    }
    chosen.sort_unstable();
    let words_out: Vec<&str> = chosen.iter().flat_map(|&i| candidates[i].split_whitespace()).collect();
    // With a target, exactly that many words where the context has them.
    let cut = target_words.map_or(words_out.len(), |t| words_out.len().min(t));
    words_out[..cut].join(" ")
}

/// A context line's text: without its `[kind id]` tag, and for entities
/// and relations without the `NAME (type): ` or `A — B: ` head, so their
/// descriptions read (and compare) like the source sentences they repeat.
/// A sentence as compared for repeats: lower-case words, no punctuation,
/// no trailing "…" of a cut description.
fn comparable(sentence: &str) -> String {
    sentence
        .trim_end_matches('…')
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn strip_tag(line: &str) -> &str {
    let Some(rest) = line.strip_prefix('[') else { return line };
    let Some(end) = rest.find("] ") else { return line };
    let (tag, text) = (&rest[..end], &rest[end + 2..]);
    if tag.starts_with("entity ") || tag.starts_with("relation ") {
        if let Some(head) = text.find(": ") {
            return &text[head + 2..];
        }
    }
    text
}

/// The offline provider's answer (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let question = message.lines().find_map(|l| l.strip_prefix("Question: ")).unwrap_or("");
    let context = delimited(message).unwrap_or("");
    Ok(extractive(question, context, target_of(message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extractive_answer_takes_the_best_sentences_once_in_context_order() {
        let context = "-----Entities-----\n\
            [entity ada pell] Ada Pell (person): Ada Pell taught Bo Marsh to mend nets.\n\
            -----Sources-----\n\
            [chunk 1] It was a cold year. Ada Pell taught Bo Marsh to mend nets. The herring came late.\n\
            [chunk 2] Bo Marsh later sold nets at Saltmere market.\n";
        let answer = extractive("Who taught Bo Marsh to mend nets?", context, None);
        assert_eq!(
            answer,
            "Ada Pell taught Bo Marsh to mend nets. It was a cold year. The herring came late. Bo Marsh later sold nets at Saltmere market.",
            "the repeated sentence once, without the entity's head; all four fit in the default length, in context order"
        );
        assert_eq!(extractive("Who taught Bo Marsh to mend nets?", context, Some(5)), "Ada Pell taught Bo Marsh");
        assert_eq!(
            extractive("Who taught Bo Marsh to mend nets?", context, Some(500)).split_whitespace().count(),
            25,
            "no more than the context has (8 + 5 + 4 + 8 words)"
        );
        assert!(extractive("anything", "", Some(10)).starts_with("The retrieved context holds nothing"));
    }

    /// Offline LightRAG answers repeated a sentence (19 of 84 on
    /// the UltraDomain slice and a Christmas Carol): a chunk's sentence
    /// wrapped over lines, and a description holding it whole or cut short.
    #[test]
    fn a_sentence_wrapped_over_lines_or_cut_short_is_answered_once() {
        let context = "-----Entities-----\n\
            [entity scrooge] Scrooge (person): Scrooge never painted out Old Marley's name over the warehouse door, years afterwards…\n\
            -----Relations-----\n\
            [relation scrooge — marley] Scrooge never painted out Old Marley's name over the warehouse door.\n\
            -----Sources-----\n\
            [chunk 3] Scrooge never painted out Old Marley's name. There it stood, years\n\
            afterwards, above the warehouse door: Scrooge and Marley. The firm was\n\
            known as Scrooge and Marley.\n";
        let answer = extractive("Whose name stood over the warehouse door?", context, Some(500));
        let said: Vec<String> = sentences(&answer).iter().map(|s| comparable(s)).collect();
        for (i, a) in said.iter().enumerate() {
            for b in &said[i + 1..] {
                assert!(!a.contains(b.as_str()) && !b.contains(a.as_str()), "repeated: {a:?} / {b:?} in {answer:?}");
            }
        }
        assert!(
            answer.contains("There it stood, years afterwards, above the warehouse door: Scrooge and Marley."),
            "{answer}"
        );
        assert!(
            answer.contains("The firm was known as Scrooge and Marley."),
            "one sentence across two lines: {answer}"
        );
    }

    #[test]
    fn the_target_length_reaches_the_prompt_and_the_offline_answer() {
        let req = request("Who taught Bo?", "[chunk 1] Ada Pell taught Bo Marsh to mend nets at Saltmere.", Some(4));
        assert_eq!(target_of(&req.messages[1].content), Some(4));
        assert_eq!(offline(&req).unwrap(), "Ada Pell taught Bo");
        let free = request("Who taught Bo?", "x", None);
        assert_eq!(target_of(&free.messages[1].content), None);
        assert!(free.messages[1].content.contains("Answer in one to three paragraphs."));
    }
}

//! The unbiased protocol's scoring request (`engine/prompts/judge_scores.txt`:
//! a 0–5 rubric per aspect, Table I's for Directness and the other three
//! written the same way) and the reading of its reply. One request judges
//! one order of a pair; `sample` tells repeats and trials apart so the cache
//! keeps them as independent draws.

use super::{Judgment, Order, ASPECTS};
use crate::llm::{ChatRequest, Message};

pub const PURPOSE: &str = "judge_scores";
/// The paper's procedure (seed 000 §IV-C, "we ask the LLM to give a score
/// to an answer in each evaluation aspect and provide detailed text
/// instructions to the LLM for scoring", Table I's rubric): the rubric and
/// nothing else.
pub const PROMPT: &str = include_str!("../../prompts/judge_scores.txt");
/// The same rubric plus one sentence the paper does not have: "Judge only
/// the answers' content; their order and their length are not merits in
/// themselves." It may lower position and length bias by instruction; the
/// protocol's own measures (exchange, alignment, trials) are what the paper
/// evaluates, so this is a named variant, never the default.
pub const PROMPT_CONTENT_ONLY: &str = include_str!("../../prompts/judge_scores_content_only.txt");

/// Which scoring prompt an evaluation uses (recorded with it; the report
/// names it and its hash): declared in `types`, its text here.
pub use types::JudgePrompt;

/// A scoring prompt's text and hash.
pub trait PromptText {
    fn text(self) -> &'static str;
    /// SHA-256 of the prompt's text, as every call of the log records it.
    fn hash(self) -> String;
}

impl PromptText for JudgePrompt {
    fn text(self) -> &'static str {
        match self {
            JudgePrompt::Paper => PROMPT,
            JudgePrompt::ContentOnly => PROMPT_CONTENT_ONLY,
        }
    }

    fn hash(self) -> String {
        crate::llm::prompt::prompt_hash(self.text())
    }
}

/// Evaluations stored before the choice existed ran the content-only
/// prompt; their settings read back as such.
pub fn prompt_before_choice() -> JudgePrompt {
    JudgePrompt::ContentOnly
}

/// A judging request of either protocol: the question and two answers as
/// Answer 1 and Answer 2 ([`parts`] reads them back). Repeats and trials are
/// independent draws: sampled (temperature 1, the APIs' default), each with
/// its own `sample` so the cache keeps them apart.
pub fn pair_request(
    purpose: &str,
    prompt: &str,
    question: &str,
    first: &str,
    second: &str,
    sample: u32,
    max_tokens: u32,
) -> ChatRequest {
    let user = format!("Question: {question}\n\nAnswer 1:\n<<<\n{first}\n>>>\n\nAnswer 2:\n<<<\n{second}\n>>>");
    let mut req = ChatRequest::new(purpose, vec![Message::system(prompt.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(max_tokens);
    req.sample = sample;
    req.temperature = Some(1.0);
    req
}

/// The request judging `first` and `second` (as Answer 1 and Answer 2)
/// with the paper's prompt.
pub fn request(question: &str, first: &str, second: &str, sample: u32) -> ChatRequest {
    request_with(JudgePrompt::Paper, question, first, second, sample)
}

/// The request judging `first` and `second` with the chosen prompt.
pub fn request_with(prompt: JudgePrompt, question: &str, first: &str, second: &str, sample: u32) -> ChatRequest {
    pair_request(PURPOSE, prompt.text(), question, first, second, sample, 400)
}

/// The scores in a reply, mapped back to A and B by the order they were
/// shown in, and the judge's reasoning.
pub fn parse(reply: &str, order: Order, repeat: u32) -> Result<(Judgment, String), String> {
    let v = crate::llm::prompt::json_object(reply, "verdict")?;
    let scores = |answer: &str| -> Result<[u8; 4], String> {
        let mut out = [0u8; 4];
        for (k, aspect) in ASPECTS.iter().enumerate() {
            let s =
                v[answer][aspect].as_f64().ok_or_else(|| format!("the verdict has no {aspect} score for {answer}"))?;
            if !(0.0..=5.0).contains(&s) || s.fract() != 0.0 {
                return Err(format!("{answer}'s {aspect} score {s} is not a whole number from 0 to 5"));
            }
            out[k] = s as u8;
        }
        Ok(out)
    };
    let (first, second) = (scores("Answer 1")?, scores("Answer 2")?);
    let (a, b) = match order {
        Order::AFirst => (first, second),
        Order::BFirst => (second, first),
    };
    let reasoning = v["reasoning"].as_str().unwrap_or("").to_string();
    Ok((Judgment { order, repeat, a, b, judge: 0 }, reasoning))
}

/// The offline rubric judge's scores of one answer: stated rules over
/// words, so they can be checked by hand (and have no position bias: each
/// answer is scored alone).
/// - Comprehensiveness: distinct content words, one point per 15 (max 5).
/// - Relevance: the share of the question's content words the answer uses, × 5.
/// - Empowerment: sentences carrying a specific (a number or a capitalised
///   name after the first word), one point each (max 5).
/// - Directness: the share of the question's content words in the answer's
///   first sentence, × 5.
pub fn rubric(question: &str, answer: &str) -> [u8; 4] {
    // Each answer is scored once per trial and repeat, against each method.
    static SCORED: std::sync::OnceLock<crate::memo::Memo<[u8; 4]>> = std::sync::OnceLock::new();
    SCORED.get_or_init(|| crate::memo::Memo::new(16_384)).get_or(&[question, answer], || score(question, answer))
}

fn score(question: &str, answer: &str) -> [u8; 4] {
    use std::collections::HashSet;

    use crate::text::words;
    let asked: HashSet<String> = words(question).collect();
    let used: HashSet<String> = words(answer).collect();
    let share = |present: &HashSet<String>| {
        if asked.is_empty() {
            0.0
        } else {
            asked.iter().filter(|w| present.contains(*w)).count() as f64 / asked.len() as f64
        }
    };
    let sentences = crate::text::sentences(answer);
    let first: HashSet<String> = sentences.first().map(|s| words(s).collect()).unwrap_or_default();
    let specific = sentences
        .iter()
        .filter(|s| {
            s.split_whitespace()
                .skip(1)
                .any(|w| w.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit()))
        })
        .count();
    let points = |x: f64| x.round().clamp(0.0, 5.0) as u8;
    [points(used.len() as f64 / 15.0), points(share(&used) * 5.0), points(specific as f64), points(share(&first) * 5.0)]
}

/// The question, Answer 1 and Answer 2 of a [`request`]'s user message.
pub fn parts(message: &str) -> (&str, &str, &str) {
    let question = message.lines().find_map(|l| l.strip_prefix("Question: ")).unwrap_or("");
    let answer = |label: &str| -> &str {
        message.split(&format!("{label}:\n<<<\n")).nth(1).and_then(|rest| rest.split("\n>>>").next()).unwrap_or("")
    };
    (question, answer("Answer 1"), answer("Answer 2"))
}

/// The offline provider's judge: [`rubric`] for each answer of the request.
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let (question, first, second) = parts(message);
    let answer = |label: &str| if label == "Answer 1" { first } else { second };
    let scored = |label: &str| {
        let s = rubric(question, answer(label));
        serde_json::json!({ "Comprehensiveness": s[0], "Relevance": s[1], "Empowerment": s[2], "Directness": s[3] })
    };
    Ok(serde_json::json!({
        "Answer 1": scored("Answer 1"),
        "Answer 2": scored("Answer 2"),
        "reasoning": "offline rubric: distinct content words, the question's words used, sentences with specifics, the question's words in the first sentence",
    })
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = r#"Here: {"Answer 1": {"Comprehensiveness": 4, "Relevance": 5, "Empowerment": 3, "Directness": 4},
        "Answer 2": {"Comprehensiveness": 2, "Relevance": 4, "Empowerment": 2, "Directness": 5}, "reasoning": "1 covers more."}"#;

    #[test]
    fn scores_map_back_to_a_and_b_by_the_order_shown() {
        let (j, why) = parse(REPLY, Order::AFirst, 0).unwrap();
        assert_eq!((j.a, j.b), ([4, 5, 3, 4], [2, 4, 2, 5]));
        assert_eq!(why, "1 covers more.");
        let (j, _) = parse(REPLY, Order::BFirst, 1).unwrap();
        assert_eq!((j.a, j.b, j.repeat), ([2, 4, 2, 5], [4, 5, 3, 4], 1), "B was Answer 1");
    }

    #[test]
    fn missing_or_out_of_range_scores_are_refused_by_name() {
        let missing = r#"{"Answer 1": {"Comprehensiveness": 4}, "Answer 2": {}}"#;
        assert_eq!(parse(missing, Order::AFirst, 0).unwrap_err(), "the verdict has no Relevance score for Answer 1");
        let high = REPLY.replace("\"Directness\": 5", "\"Directness\": 6");
        assert!(parse(&high, Order::AFirst, 0).unwrap_err().contains("Answer 2's Directness score 6"));
        assert!(parse("I prefer the first.", Order::AFirst, 0).is_err());
    }

    #[test]
    fn the_offline_rubric_scores_each_answer_alone_by_stated_rules() {
        let q = "Who taught Bo Marsh to mend nets at Saltmere?";
        let good = "Ada Pell taught Bo Marsh to mend nets at Saltmere. She learned it in 1790 from her father. \
                    The Salt Guild paid her for the lessons.";
        let vague = "Someone taught him something once.";
        let s = rubric(q, good);
        // 6 content words asked (taught, bo, marsh, mend, nets, saltmere); all used,
        // all in the first sentence; three sentences with a specific.
        assert_eq!(s, [1, 5, 3, 5], "{s:?}");
        assert_eq!(rubric(q, vague), [0, 1, 0, 1]);
        // The offline judge gives each answer its own rubric, whatever the order.
        let ab = offline(&request(q, good, vague, 0)).unwrap();
        let (j, _) = parse(&ab, Order::AFirst, 0).unwrap();
        let ba = offline(&request(q, vague, good, 0)).unwrap();
        let (k, _) = parse(&ba, Order::BFirst, 0).unwrap();
        assert_eq!((j.a, j.b), (k.a, k.b));
        assert_eq!(j.a, s);
    }

    #[test]
    fn the_request_carries_the_rubric_both_answers_and_its_draw() {
        let r = request("Who?", "Ada.", "Bo.", 7);
        assert!(r.messages[0].content.contains("The answer is exceptionally direct, precisely and specifically addressing the question without any ambiguity."));
        assert!(
            r.messages[1].content.contains("Answer 1:\n<<<\nAda.\n>>>")
                && r.messages[1].content.contains("Answer 2:\n<<<\nBo.\n>>>")
        );
        assert_eq!((r.sample, r.purpose.as_str()), (7, PURPOSE));
    }
}

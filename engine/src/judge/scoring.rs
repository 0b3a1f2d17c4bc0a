//! The unbiased protocol's scoring request (`engine/prompts/judge_scores.txt`:
//! a 0–5 rubric per aspect, Table I's for Directness and the other three
//! written the same way) and the reading of its reply. One request judges
//! one order of a pair; `sample` tells repeats and trials apart so the cache
//! keeps them as independent draws.

use serde_json::Value;

use super::{Judgment, Order, ASPECTS};
use crate::llm::{ChatRequest, Message};

pub const PURPOSE: &str = "judge_scores";
pub const PROMPT: &str = include_str!("../../prompts/judge_scores.txt");

/// The request judging `first` and `second` (as Answer 1 and Answer 2).
pub fn request(question: &str, first: &str, second: &str, sample: u32) -> ChatRequest {
    let user = format!("Question: {question}\n\nAnswer 1:\n<<<\n{first}\n>>>\n\nAnswer 2:\n<<<\n{second}\n>>>");
    let mut req = ChatRequest::new(PURPOSE, vec![Message::system(PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(400);
    // Repeats and trials are independent draws: sampled (temperature 1, the
    // APIs' default), each with its own `sample` so the cache keeps them apart.
    req.sample = sample;
    req.temperature = 1.0;
    req
}

/// The scores in a reply, mapped back to A and B by the order they were
/// shown in, and the judge's reasoning.
pub fn parse(reply: &str, order: Order, repeat: u32) -> Result<(Judgment, String), String> {
    let start = reply.find('{').ok_or("no JSON object in the verdict")?;
    let end = reply.rfind('}').ok_or("no JSON object in the verdict")?;
    let v: Value = serde_json::from_str(&reply[start..=end]).map_err(|e| format!("unreadable verdict: {e}"))?;
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
    Ok((Judgment { order, repeat, a, b }, reasoning))
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

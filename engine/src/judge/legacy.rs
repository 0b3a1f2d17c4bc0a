//! The legacy protocol's request and reply (what the LightRAG and GraphRAG
//! papers did; the prompt follows LightRAG's evaluation prompt,
//! `engine/prompts/judge_legacy.txt`): A always shown first, a winner per
//! aspect (Comprehensiveness, Diversity, Empowerment) and overall, no ties.
//! Offline: the rubric totals decide, the first answer on equal totals (the
//! forced choice); the simulated judge applies its biases to the same rule.

use serde_json::Value;

use super::{LegacyJudgment, Outcome, LEGACY_ASPECTS};
use crate::llm::ChatRequest;

pub const PURPOSE: &str = "judge_legacy";
pub const PROMPT: &str = include_str!("../../prompts/judge_legacy.txt");

/// The request with A as Answer 1 and B as Answer 2 (the fixed order).
pub fn request(question: &str, a: &str, b: &str, sample: u32) -> ChatRequest {
    super::scoring::pair_request(PURPOSE, PROMPT, question, a, b, sample, 600)
}

/// The answer a reply names as the winner of `key`. A reply that names
/// neither answer, or both ("Both", "tie", "Answer 1 and Answer 2", an
/// empty string) is unreadable under a protocol without ties: the item
/// fails rather than counting as a win for Answer 1 — forcing it to the
/// first answer would add exactly the position bias the paper measures.
fn winner(v: &Value, key: &str) -> Result<Outcome, String> {
    let w = v[key]["Winner"].as_str().or_else(|| v[key].as_str()).ok_or_else(|| format!("no winner for {key}"))?;
    let lower = w.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let has = |names: &[&str]| words.iter().any(|t| names.contains(t));
    // The digit decides when there is one ("Answer 2 is the better one");
    // the words only when no digit is given ("the first answer").
    let (one, two) = match (has(&["1"]), has(&["2"])) {
        (false, false) => (has(&["one", "first"]), has(&["two", "second"])),
        digits => digits,
    };
    match (one, two) {
        (true, false) => Ok(Outcome::A),
        (false, true) => Ok(Outcome::B),
        _ => Err(format!("unreadable verdict: the winner for {key} is {w:?}, not Answer 1 or Answer 2")),
    }
}

/// The winners in a reply (the protocol has no ties; see [`winner`]).
pub fn parse(reply: &str) -> Result<LegacyJudgment, String> {
    let v = crate::llm::prompt::json_object(reply, "verdict")?;
    let aspects = [winner(&v, LEGACY_ASPECTS[0])?, winner(&v, LEGACY_ASPECTS[1])?, winner(&v, LEGACY_ASPECTS[2])?];
    Ok(LegacyJudgment::forced(aspects, winner(&v, "Overall Winner")?))
}

/// A reply naming `first_wins` (Answer 1) or not for every aspect.
pub fn reply_for(first_wins: bool) -> String {
    let w = if first_wins { "Answer 1" } else { "Answer 2" };
    let part = serde_json::json!({"Winner": w, "Explanation": "by the rubric's totals"});
    serde_json::json!({"Comprehensiveness": part, "Diversity": part, "Empowerment": part, "Overall Winner": part})
        .to_string()
}

/// The offline legacy judge (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let (question, first, second) = super::scoring::parts(message);
    let total = |a: &str| super::scoring::rubric(question, a).iter().map(|s| *s as u32).sum::<u32>();
    Ok(reply_for(total(first) >= total(second)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn winners_are_read_and_an_unreadable_winner_fails_the_item() {
        let reply = |empowerment: &str| {
            format!(
                r#"{{"Comprehensiveness": {{"Winner": "Answer 2", "Explanation": "."}},
            "Diversity": {{"Winner": "answer one", "Explanation": "."}}, "Empowerment": {{"Winner": "{empowerment}", "Explanation": "."}},
            "Overall Winner": "Answer 2"}}"#
            )
        };
        let j = parse(&reply("Answer 1")).unwrap();
        assert_eq!(j.aspects, [Outcome::B, Outcome::A, Outcome::A]);
        assert_eq!(parse(&reply("Answer 2 is the better one")).unwrap().aspects[2], Outcome::B);
        assert_eq!(j.overall, Outcome::B);
        // Not a win for Answer 1: a failed judgment, with the reply's words.
        for unreadable in ["Both", "", "Tie", "Answer 1 and Answer 2", "neither"] {
            let e = parse(&reply(unreadable)).unwrap_err();
            assert!(e.contains("unreadable verdict") && e.contains("Empowerment"), "{unreadable}: {e}");
        }
        assert!(parse(r#"{"Diversity": {}}"#).unwrap_err().contains("no winner for Comprehensiveness"));
    }

    #[test]
    fn offline_the_higher_rubric_total_wins_and_equal_totals_go_to_the_first() {
        let q = "Who taught Bo Marsh to mend nets?";
        let good = "Ada Pell taught Bo Marsh to mend nets in 1790.";
        let poor = "Someone did.";
        assert_eq!(parse(&offline(&request(q, good, poor, 0)).unwrap()).unwrap().overall, Outcome::A);
        assert_eq!(parse(&offline(&request(q, poor, good, 0)).unwrap()).unwrap().overall, Outcome::B);
        assert_eq!(parse(&offline(&request(q, good, good, 0)).unwrap()).unwrap().overall, Outcome::A);
    }
}

//! The legacy protocol's request and reply (what the LightRAG and GraphRAG
//! papers did): A always shown first, a winner per aspect and overall, no
//! ties. Two variants, by name ([`LegacyAspects`]): `lightrag`, LightRAG's
//! evaluation prompt with its three aspects (Comprehensiveness, Diversity,
//! Empowerment; `engine/prompts/judge_legacy.txt`), and `graphrag`, the
//! GraphRAG paper's four (Directness added, with its definition;
//! `judge_legacy_graphrag.txt`) — seed 000 §II describes the latter.
//! Offline: the rubric totals decide, the first answer on equal totals (the
//! forced choice); the simulated judge applies its biases to the same rule.

use serde_json::Value;

use super::{LegacyJudgment, Outcome, LEGACY_ASPECTS, LEGACY_ASPECTS_GRAPHRAG};
use crate::llm::ChatRequest;

pub const PURPOSE: &str = "judge_legacy";
pub const PROMPT: &str = include_str!("../../prompts/judge_legacy.txt");
pub const PROMPT_GRAPHRAG: &str = include_str!("../../prompts/judge_legacy_graphrag.txt");

/// Which aspects the legacy judge picks winners on: declared in `types`,
/// its aspects and prompt here.
pub use types::LegacyAspects;

/// A legacy variant's aspects, prompt and description.
pub trait Aspects {
    fn names(self) -> &'static [&'static str];
    fn prompt(self) -> &'static str;
    /// In words, as reports state it.
    fn describe(self) -> String;
}

impl Aspects for LegacyAspects {
    fn names(self) -> &'static [&'static str] {
        match self {
            LegacyAspects::Lightrag => &LEGACY_ASPECTS,
            LegacyAspects::Graphrag => &LEGACY_ASPECTS_GRAPHRAG,
        }
    }

    fn prompt(self) -> &'static str {
        match self {
            LegacyAspects::Lightrag => PROMPT,
            LegacyAspects::Graphrag => PROMPT_GRAPHRAG,
        }
    }

    fn describe(self) -> String {
        let who = match self {
            LegacyAspects::Lightrag => "LightRAG's",
            LegacyAspects::Graphrag => "GraphRAG's",
        };
        format!("{who} {} aspects ({})", self.names().len(), self.names().join(", "))
    }
}

/// The variant a request was made with (its system prompt).
fn aspects_of_request(req: &ChatRequest) -> LegacyAspects {
    let system = req.messages.first().map(|m| m.content.as_str()).unwrap_or("");
    if system.contains("**Directness**") {
        LegacyAspects::Graphrag
    } else {
        LegacyAspects::Lightrag
    }
}

/// The request with A as Answer 1 and B as Answer 2 (the fixed order),
/// LightRAG's three aspects.
pub fn request(question: &str, a: &str, b: &str, sample: u32) -> ChatRequest {
    request_with(LegacyAspects::Lightrag, question, a, b, sample)
}

/// The request of a variant.
pub fn request_with(variant: LegacyAspects, question: &str, a: &str, b: &str, sample: u32) -> ChatRequest {
    super::scoring::pair_request(PURPOSE, variant.prompt(), question, a, b, sample, 600)
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

/// The winners in a reply to LightRAG's prompt (the protocol has no ties;
/// see [`winner`]).
pub fn parse(reply: &str) -> Result<LegacyJudgment, String> {
    parse_with(LegacyAspects::Lightrag, reply)
}

/// The winners in a reply to a variant's prompt: every one of its aspects.
pub fn parse_with(variant: LegacyAspects, reply: &str) -> Result<LegacyJudgment, String> {
    let v = crate::llm::prompt::json_object(reply, "verdict")?;
    let aspects = variant.names().iter().map(|a| winner(&v, a)).collect::<Result<Vec<_>, _>>()?;
    Ok(LegacyJudgment::forced(variant, aspects, winner(&v, "Overall Winner")?))
}

/// A reply naming `first_wins` (Answer 1) or not for every aspect of the
/// variant the request asked for.
pub fn reply_for(req: &ChatRequest, first_wins: bool) -> String {
    let w = if first_wins { "Answer 1" } else { "Answer 2" };
    let part = serde_json::json!({"Winner": w, "Explanation": "by the rubric's totals"});
    let mut reply = serde_json::Map::new();
    for a in aspects_of_request(req).names() {
        reply.insert(a.to_string(), part.clone());
    }
    reply.insert("Overall Winner".into(), part);
    serde_json::Value::Object(reply).to_string()
}

/// The offline legacy judge (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let (question, first, second) = super::scoring::parts(message);
    let total = |a: &str| super::scoring::rubric(question, a).iter().map(|s| *s as u32).sum::<u32>();
    Ok(reply_for(req, total(first) >= total(second)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two variants by name: LightRAG's three aspects and GraphRAG's
    /// four; the offline judge answers the variant its prompt asks for,
    /// and a reply missing an aspect of the variant fails by name.
    #[test]
    fn the_lightrag_and_graphrag_variants_ask_for_and_read_their_aspects() {
        assert_eq!(LegacyAspects::default(), LegacyAspects::Lightrag);
        assert_eq!(LegacyAspects::parse("graphrag").unwrap().names().len(), 4);
        assert_eq!(
            LegacyAspects::parse("ragas").unwrap_err().to_string(),
            "the legacy aspects must be lightrag or graphrag, not \"ragas\""
        );
        assert!(PROMPT_GRAPHRAG
            .contains("**Directness**: How specifically and clearly does the answer address the question?"));
        assert!(!PROMPT.contains("Directness"));
        for variant in [LegacyAspects::Lightrag, LegacyAspects::Graphrag] {
            let req = request_with(variant, "Who mended the nets?", "Ada Pell mended them in 1790.", "Someone.", 0);
            let j = parse_with(variant, &offline(&req).unwrap()).unwrap();
            assert_eq!(j.variant, variant);
            let named: Vec<&str> = j.named().map(|(n, _)| n).collect();
            assert_eq!(named, variant.names());
            assert!(j.aspects.iter().all(|o| *o == Outcome::A), "{j:?}");
        }
        let three = offline(&request("Q?", "a", "b", 0)).unwrap();
        assert_eq!(parse_with(LegacyAspects::Graphrag, &three).unwrap_err(), "no winner for Directness");
        // A judgment stored before the choice reads back as LightRAG's.
        let old: LegacyJudgment = serde_json::from_str(r#"{"aspects": ["A", "B", "A"], "overall": "B"}"#).unwrap();
        assert_eq!(old.variant, LegacyAspects::Lightrag);
        assert_eq!(old.named().map(|(n, _)| n).collect::<Vec<_>>(), LEGACY_ASPECTS);
    }

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

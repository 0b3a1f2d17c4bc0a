//! Replies for other GraphRAG systems' prompts (`mockllm ADDR 0 0 peers`),
//! so LightRAG, nano-graphrag and Microsoft GraphRAG build real index
//! folders against the mock: entity and relation rows in each
//! one's tuple format, "NO" to their "anything missed?" loops, community
//! reports as the JSON they parse, query keywords as LightRAG's JSON.
//!
//! The extraction is a plain heuristic, deterministic for a text: runs of
//! capitalised words that do not only open a sentence are entities (typed
//! by a title before them or a place word), and two entities in one
//! sentence are related, described by that sentence.

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// The reply to one chat request.
pub fn respond(req: &Value) -> String {
    let messages = req.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let content = |m: &Value| m.get("content").and_then(Value::as_str).unwrap_or("").to_string();
    let system = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        .map(content)
        .collect::<Vec<_>>()
        .join("\n");
    let last = messages.last().map(content).unwrap_or_default();

    // LightRAG ≥ 1.5: rows `entity<|#|>…`, `relation<|#|>…`.
    if last.contains("---Input Text---") && last.contains("```") {
        let text = between(&last, "```\n", "\n```").unwrap_or(&last);
        let json = last.contains("JSON") || system.contains("\"entities\"");
        return if json { lightrag_json(text) } else { lightrag_rows(text) };
    }
    if last.starts_with("---Task---\nBased on the last extraction task") {
        return "<|COMPLETE|>".into();
    }
    // LightRAG's query keywords.
    if last.contains("high_level_keywords") || system.contains("high_level_keywords") {
        let all = format!("{system}\n{last}");
        let query = all.rsplit("User Query:").next().unwrap_or("").lines().next().unwrap_or("").trim().to_string();
        return keywords(&query);
    }
    // nano-graphrag's and Microsoft GraphRAG's extraction: `("entity"<|>…)##`.
    if last.contains("-Real Data-") && last.contains("Text:") && last.contains("Entity_types") {
        let data = last.rsplit("-Real Data-").next().unwrap_or(&last);
        let types: Vec<String> = data
            .lines()
            .find_map(|l| l.strip_prefix("Entity_types:"))
            .map(|t| {
                t.trim()
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|t| t.trim().to_lowercase())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let text = last.rsplit("Text:").next().unwrap_or("");
        let text = text.split("######################").next().unwrap_or(text);
        let quoted = last.contains("(\"entity\"<|>\"");
        return classic_rows(text, quoted, &types);
    }
    if last.starts_with("MANY entities were missed") {
        return "<|COMPLETE|>".into();
    }
    if last.contains("Answer YES | NO") || last.contains("Answer Y if there are still entities") {
        return "NO".into();
    }
    // Microsoft GraphRAG's searches that want JSON back: DRIFT's primer and
    // its local steps, global search's map step.
    let all = format!("{system}\n{last}");
    if all.contains("'intermediate_answer': str") {
        return json!({"intermediate_answer": "# Mock primer\nWhat the community reports say.", "score": 50,
                      "follow_up_queries": ["Who is named in the reports?"]})
        .to_string();
    }
    if all.contains("'follow_up_queries': List[str]") {
        return json!({"response": "Mock step answer [Data: Sources (0)].", "score": 50, "follow_up_queries": []})
            .to_string();
    }
    if all.contains("\"points\": [") {
        return json!({"points": [{"description": "Mock point [Data: Reports (0)]", "score": 50}]}).to_string();
    }
    // Community reports (nano-graphrag and Microsoft GraphRAG).
    if last.contains("\"findings\"") || system.contains("\"findings\"") {
        let all = format!("{system}\n{last}");
        return community_report(&all);
    }
    // Description summaries and answers.
    format!("Mock reply to: {}", last.chars().take(60).collect::<String>())
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = s.find(open)? + open.len();
    let end = s[start..].find(close)? + start;
    Some(&s[start..end])
}

const OPENERS: &[&str] = &[
    "The", "A", "An", "It", "He", "She", "They", "We", "I", "You", "But", "And", "Or", "So", "Then", "When", "If",
    "In", "On", "At", "As", "This", "That", "There", "What", "Why", "How", "Who", "Oh", "Yes", "No", "Well", "Now",
    "Not", "Of", "For", "With", "By", "To", "After", "Before", "Chapter", "CHAPTER", "Her", "His", "Its", "My", "Our",
    "Your", "Their", "Do", "Don't", "Alas", "Here", "Which", "While", "Still", "Just", "Perhaps", "Very", "One",
    "Some", "All",
];
const TITLES: &[&str] =
    &["Mr", "Mrs", "Miss", "Sir", "Lady", "Lord", "King", "Queen", "Duchess", "Duke", "Dr", "Doctor"];
const PLACE_WORDS: &[&str] = &["in", "at", "to", "from", "near"];

struct Found {
    entities: BTreeMap<String, (String, String)>, // name → (type, description)
    relations: Vec<(String, String, String)>,     // source, target, sentence
}

fn sentences(text: &str) -> Vec<&str> {
    text.split_inclusive(['.', '!', '?', '\n']).map(str::trim).filter(|s| s.len() > 3).collect()
}

/// A word without surrounding punctuation or a possessive `'s`.
fn clean_word(w: &str) -> &str {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(w);
    w.trim_matches(|c: char| !c.is_alphanumeric())
}

fn capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase) && w.chars().count() > 1 && !w.starts_with("I'")
}

/// Entities and relations of a text, deterministically: runs of
/// capitalised words; a run that opens its sentence (or is shouted in
/// capitals) counts only if it also appears inside a sentence somewhere.
/// Two entities in one sentence or in neighbouring sentences are related.
fn find(text: &str) -> Found {
    let mut found = Found { entities: BTreeMap::new(), relations: Vec::new() };
    // (sentence index, name, opens its sentence, kind)
    let mut runs: Vec<(usize, String, bool, &'static str)> = Vec::new();
    let all = sentences(text);
    for (si, sentence) in all.iter().enumerate() {
        let words: Vec<&str> = sentence.split_whitespace().collect();
        let first = words.iter().position(|w| !clean_word(w).is_empty()).unwrap_or(0);
        let mut i = 0;
        while i < words.len() {
            let w = clean_word(words[i]);
            if !capitalised(w) {
                i += 1;
                continue;
            }
            let mut run = vec![w];
            let mut j = i + 1;
            while j < words.len() && !words[j - 1].ends_with([',', ';', ':', '"', '.', '!', '?', '\'']) {
                let n = clean_word(words[j]);
                if capitalised(n) {
                    run.push(n);
                    j += 1;
                } else {
                    break;
                }
            }
            // "The Queen": the article is not part of the name.
            let mut at = i;
            while run.len() > 1 && OPENERS.contains(&run[0]) {
                run.remove(0);
                at += 1;
            }
            let shouted = run.iter().all(|r| r.chars().all(|c| !c.is_lowercase()));
            if (run.len() == 1 && OPENERS.contains(&run[0])) || shouted {
                i = j;
                continue;
            }
            let before = if at > 0 { clean_word(words[at - 1]) } else { "" };
            let kind = if TITLES.contains(&run[0])
                || TITLES.contains(&before)
                || words.get(j).is_some_and(|n| clean_word(n) == "said")
            {
                "Person"
            } else if PLACE_WORDS.contains(&before.to_lowercase().as_str()) {
                "Location"
            } else {
                "Concept"
            };
            runs.push((si, run.join(" "), at == first, kind));
            i = j;
        }
    }
    let inside: std::collections::HashSet<&str> = runs.iter().filter(|r| !r.2).map(|r| r.1.as_str()).collect();
    let mut by_sentence: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (si, name, opens, kind) in &runs {
        if *opens && !inside.contains(name.as_str()) {
            continue;
        }
        let description: String = all[*si].chars().take(200).collect();
        found.entities.entry(name.clone()).or_insert((kind.to_string(), description));
        let here = by_sentence.entry(*si).or_default();
        if !here.contains(name) {
            here.push(name.clone());
        }
    }
    // At most 20 entities a chunk (the first met), the relations between those.
    let mut kept: Vec<String> = Vec::new();
    for names in by_sentence.values() {
        for n in names {
            if kept.len() < 20 && !kept.contains(n) {
                kept.push(n.clone());
            }
        }
    }
    found.entities.retain(|n, _| kept.contains(n));
    for (si, names) in &by_sentence {
        let next: Vec<String> = by_sentence.get(&(si + 1)).cloned().unwrap_or_default();
        let span = if next.is_empty() { all[*si].to_string() } else { format!("{} {}", all[*si], all[si + 1]) };
        let pool: Vec<&String> = names.iter().chain(next.iter()).collect();
        for a in 0..names.len() {
            for b in a + 1..pool.len() {
                let (s, t) = (pool[a], pool[b]);
                if s == t || !found.entities.contains_key(s) || !found.entities.contains_key(t) {
                    continue;
                }
                if found.relations.len() < 30
                    && !found.relations.iter().any(|(x, y, _)| (x == s && y == t) || (x == t && y == s))
                {
                    found.relations.push((s.clone(), t.clone(), span.chars().take(200).collect()));
                }
            }
        }
    }
    found
}

fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace(['"', '<', '>', '|', '#'], "'")
}

fn lightrag_rows(text: &str) -> String {
    let f = find(text);
    let mut out = String::new();
    for (name, (kind, desc)) in &f.entities {
        out.push_str(&format!("entity<|#|>{name}<|#|>{kind}<|#|>{name} appears where the text says: {}\n", flat(desc)));
    }
    for (s, t, sentence) in &f.relations {
        out.push_str(&format!(
            "relation<|#|>{s}<|#|>{t}<|#|>co-occurrence,scene<|#|>{s} and {t} meet in: {}\n",
            flat(sentence)
        ));
    }
    out.push_str("<|COMPLETE|>");
    out
}

fn lightrag_json(text: &str) -> String {
    let f = find(text);
    json!({
        "entities": f.entities.iter().map(|(n, (k, d))| json!({"name": n, "type": k, "description": flat(d)})).collect::<Vec<_>>(),
        "relationships": f.relations.iter().map(|(s, t, d)| json!({"source": s, "target": t, "keywords": "co-occurrence, scene", "description": flat(d)})).collect::<Vec<_>>(),
    })
    .to_string()
}

/// nano-graphrag quotes every field (`"ALICE"`); Microsoft GraphRAG's
/// prompt writes names bare and upper-cased.
fn classic_rows(text: &str, quoted: bool, types: &[String]) -> String {
    let f = find(text);
    let q = |s: &str| if quoted { format!("\"{s}\"") } else { s.to_string() };
    // The prompt's own types: a person as `person`, a place as `geo` or
    // `location`, the rest as `concept`, else `event`, else the first.
    let typed = |kind: &str| -> String {
        let wanted: &[&str] = match kind {
            "Person" => &["person"],
            "Location" => &["geo", "location"],
            _ => &["concept", "event"],
        };
        wanted
            .iter()
            .find(|w| types.iter().any(|t| t == *w))
            .map(|w| w.to_string())
            .or_else(|| types.first().cloned())
            .unwrap_or_else(|| kind.to_lowercase())
    };
    let mut rows = Vec::new();
    for (name, (kind, desc)) in &f.entities {
        rows.push(format!(
            "(\"entity\"<|>{}<|>{}<|>{})",
            q(&name.to_uppercase()),
            q(&typed(kind).to_uppercase()),
            q(&format!("{name} appears where the text says: {}", flat(desc)))
        ));
    }
    for (s, t, sentence) in &f.relations {
        rows.push(format!(
            "(\"relationship\"<|>{}<|>{}<|>{}<|>{})",
            q(&s.to_uppercase()),
            q(&t.to_uppercase()),
            q(&format!("{s} and {t} meet in: {}", flat(sentence))),
            2
        ));
    }
    format!("{}<|COMPLETE|>", rows.join("##\n"))
}

fn keywords(query: &str) -> String {
    let words: Vec<&str> = query.split_whitespace().map(clean_word).filter(|w| w.len() > 3).collect();
    let low: Vec<&str> = words.iter().copied().filter(|w| w.chars().next().is_some_and(char::is_uppercase)).collect();
    let high: Vec<&str> = words.iter().copied().filter(|w| !low.contains(w)).take(4).collect();
    json!({"high_level_keywords": high, "low_level_keywords": low}).to_string()
}

fn community_report(prompt: &str) -> String {
    // The first entities named in the real data's tables (after the
    // prompt's worked example) title the report.
    let data = prompt.rsplit("Text:").next().unwrap_or(prompt);
    let names: Vec<String> = data
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells.len() >= 3 && cells[0].trim().parse::<u64>().is_ok())
                .then(|| cells[1].trim().trim_matches('"').to_string())
        })
        .filter(|n| !n.is_empty())
        .take(3)
        .collect();
    let title =
        if names.is_empty() { "A community".to_string() } else { format!("The community of {}", names.join(", ")) };
    json!({
        "title": title,
        "summary": format!("{title}: entities that appear together in the text."),
        "rating": (names.len() as f64 * 2.5).min(10.0),
        "rating_explanation": "Rated by how many entities the report names.",
        "findings": names.iter().map(|n| json!({"summary": format!("{n} is a member"), "explanation": format!("{n} appears with the others.")})).collect::<Vec<_>>(),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_are_capitalised_runs_and_relations_share_a_sentence() {
        let f = find("The Queen shouted at Alice in Wonderland. Then the Hatter laughed. Suddenly it rained. 'Nobody VERY said.' Later the Dodo ran.");
        assert_eq!(f.entities.keys().collect::<Vec<_>>(), ["Alice", "Dodo", "Hatter", "Queen", "Wonderland"]);
        assert_eq!(f.entities["Wonderland"].0, "Location");
        assert_eq!(f.entities["Queen"].0, "Person");
        assert!(f.relations.iter().any(|(s, t, _)| s == "Queen" && t == "Alice"));
        assert!(f.relations.iter().any(|(s, t, _)| s == "Alice" && t == "Hatter"), "neighbouring sentences");
        assert!(!f.relations.iter().any(|(s, t, _)| s == "Dodo" || t == "Dodo"), "not two sentences apart");
    }

    #[test]
    fn each_program_gets_its_own_format() {
        let lightrag = json!({"messages": [{"role": "user", "content": "---Input Text---\n```\nThen Alice met the Queen.\n```\n---Output---"}]});
        let reply = respond(&lightrag);
        assert!(reply.contains("entity<|#|>Alice<|#|>") && reply.ends_with("<|COMPLETE|>"), "{reply}");
        let nano = json!({"messages": [{"role": "user", "content": "-Real Data-\nEntity_types: person,geo\nText: Then Alice met the Queen.\n######################\nOutput:\n(\"entity\"<|>\"x\""}]});
        assert!(respond(&nano).contains("(\"entity\"<|>\"ALICE\"<|>\"PERSON\""), "{}", respond(&nano));
        let graphrag = json!({"messages": [{"role": "user", "content": "Format each entity as (\"entity\"<|><entity_name>\n-Real Data-\nEntity_types: organization,person,geo,event\nText: Then Alice met the Queen.\n######################\nOutput:"}]});
        assert!(respond(&graphrag).contains("(\"entity\"<|>ALICE<|>EVENT<|>"), "{}", respond(&graphrag));
        let report =
            json!({"messages": [{"role": "user", "content": "\"findings\"\nid,entity,description\n1,ALICE,a girl\n"}]});
        let v: Value = serde_json::from_str(&respond(&report)).unwrap();
        assert_eq!(v["title"], "The community of ALICE");
    }
}

//! Reading an LLM's extraction reply. Two layouts are accepted:
//!
//! - **JSON** (what Assay's prompt asks for): `{"entities": [{"name", "type",
//!   "description"}], "relations": [{"source", "target", "description",
//!   "keywords", "strength"}]}`; `relationships` is accepted for `relations`,
//!   `keywords` may be a list or a comma-separated string, `strength` a
//!   number or a numeric string (missing: 1).
//! - **LightRAG's delimited tuples**: records separated by `##` or new lines,
//!   fields by `<|>` (older releases) or `<|#|>` (newer), e.g.
//!   `("entity"<|>"Alice"<|>"person"<|>"A girl.")##`. A relation with a
//!   numeric fifth field is `source, target, description, keywords,
//!   strength` (older); with four fields, `source, target, keywords,
//!   description` (newer).
//!
//! Junk around the reply (prose, code fences, `<|COMPLETE|>`) is tolerated.
//! A reply that yields nothing parseable is an error with a reason, which
//! the job records as the item's failure.

use serde_json::Value;

use super::{Entity, Extraction, Relation};
use crate::llm::json::Read;

/// Parses an extraction reply in either layout.
pub fn parse_extraction(reply: &str) -> Result<Extraction, String> {
    parse_extraction_read(reply).map(|(x, _)| x)
}

/// Parses an extraction reply in either layout, and says whether a JSON
/// reply had to be cut back to its last complete element (a reply cut by
/// `max_tokens`, or one that never closed its object): what was complete
/// before the cut is kept.
pub fn parse_extraction_read(reply: &str) -> Result<(Extraction, Read), String> {
    let trimmed = reply.trim();
    if trimmed.is_empty() {
        return Err("the reply is empty".into());
    }
    if trimmed.contains("<|>") || trimmed.contains("<|#|>") {
        return parse_tuples(trimmed).map(|x| (x, Read::Whole));
    }
    parse_json(trimmed)
}

fn parse_json(reply: &str) -> Result<(Extraction, Read), String> {
    if !reply.contains('{') {
        return Err("no JSON object and no delimited records in the reply".into());
    }
    let (value, read) = crate::llm::json::object(reply, "extraction")?;
    let entities = value.get("entities").and_then(Value::as_array).cloned().unwrap_or_default();
    let relations = value
        .get("relations")
        .or_else(|| value.get("relationships"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if value.get("entities").is_none() && value.get("relations").is_none() && value.get("relationships").is_none() {
        return Err("the JSON has neither \"entities\" nor \"relations\"".into());
    }
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(|s| s.trim().to_string()).unwrap_or_default();
    let mut out = Extraction::default();
    for e in &entities {
        let name = text(e, "name");
        // Empty, or the prompt's own placeholder ("...") copied back.
        if !name.chars().any(char::is_alphanumeric) {
            continue;
        }
        out.entities.push(Entity { name, kind: text(e, "type").to_lowercase(), description: text(e, "description") });
    }
    for r in &relations {
        let (source, target) = (text(r, "source"), text(r, "target"));
        if !source.chars().any(char::is_alphanumeric) || !target.chars().any(char::is_alphanumeric) {
            continue;
        }
        let keywords = match r.get("keywords") {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            Some(Value::String(s)) => split_keywords(s),
            _ => Vec::new(),
        };
        let strength = match r.get("strength") {
            Some(Value::Number(n)) => n.as_f64().unwrap_or(1.0),
            Some(Value::String(s)) => s.trim().parse().unwrap_or(1.0),
            _ => 1.0,
        };
        out.relations.push(Relation { source, target, description: text(r, "description"), keywords, strength });
    }
    Ok((out, read))
}

fn split_keywords(s: &str) -> Vec<String> {
    s.split(',').map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).collect()
}

fn clean_field(f: &str) -> String {
    f.trim().trim_matches(|c| c == '(' || c == ')').trim().trim_matches('"').trim().to_string()
}

fn parse_tuples(reply: &str) -> Result<Extraction, String> {
    let delimiter = if reply.contains("<|#|>") { "<|#|>" } else { "<|>" };
    let mut out = Extraction::default();
    let mut records = 0;
    for record in reply.split("##").flat_map(|r| r.split('\n')) {
        let record = record.replace("<|COMPLETE|>", "");
        let record = record.trim();
        if !record.contains(delimiter) {
            continue;
        }
        let fields: Vec<String> = record.split(delimiter).map(clean_field).collect();
        match fields[0].to_lowercase().as_str() {
            "entity" if fields.len() >= 4 => {
                records += 1;
                out.entities.push(Entity {
                    name: fields[1].clone(),
                    kind: fields[2].to_lowercase(),
                    description: fields[3..].join(" ").trim().to_string(),
                });
            }
            "relationship" | "relation" if fields.len() >= 5 => {
                records += 1;
                let numeric = fields.get(5).and_then(|s| s.parse::<f64>().ok());
                let (description, keywords, strength) = match numeric {
                    Some(strength) => (fields[3].clone(), split_keywords(&fields[4]), strength),
                    None => (fields[4..].join(" "), split_keywords(&fields[3]), 1.0),
                };
                out.relations.push(Relation {
                    source: fields[1].clone(),
                    target: fields[2].clone(),
                    description,
                    keywords,
                    strength,
                });
            }
            _ => {}
        }
    }
    if records == 0 {
        return Err("delimited records found, but none is a complete entity or relationship".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (case, reply, Ok((entities, relations)) or Err(start of the reason)).
    const CASES: &[(&str, &str, Result<(usize, usize), &str>)] = &[
        (
            "well-formed JSON",
            r#"{"entities": [{"name": "Alice", "type": "Person", "description": "A girl."}, {"name": "Queen", "type": "person", "description": "Rules."}],
                "relations": [{"source": "Alice", "target": "Queen", "description": "Plays croquet.", "keywords": ["croquet"], "strength": 7}]}"#,
            Ok((2, 1)),
        ),
        (
            "fenced JSON with prose around it",
            "Here is the extraction:\n```json\n{\"entities\": [{\"name\": \"Hatter\", \"type\": \"person\", \"description\": \"Mad.\"}], \"relationships\": []}\n```\nDone.",
            Ok((1, 0)),
        ),
        (
            "keywords as a string, strength as a string",
            r#"{"entities": [], "relations": [{"source": "A", "target": "B", "description": "d", "keywords": "x, y", "strength": "2.5"}]}"#,
            Ok((0, 1)),
        ),
        (
            "LightRAG tuples, older layout",
            "(\"entity\"<|>\"Alice\"<|>\"person\"<|>\"A curious girl.\")##\n(\"entity\"<|>\"White Rabbit\"<|>\"person\"<|>\"Late.\")##\n(\"relationship\"<|>\"Alice\"<|>\"White Rabbit\"<|>\"Alice follows the Rabbit.\"<|>\"pursuit, curiosity\"<|>9)##\n<|COMPLETE|>",
            Ok((2, 1)),
        ),
        (
            "LightRAG tuples, newer layout",
            "entity<|#|>Scrooge<|#|>person<|#|>A miser.\nentity<|#|>Marley<|#|>person<|#|>His dead partner.\nrelation<|#|>Scrooge<|#|>Marley<|#|>partnership<|#|>They were partners.\n<|COMPLETE|>",
            Ok((2, 1)),
        ),
        ("JSON cut by max_tokens: the complete entities kept", r#"{"entities": [{"name": "Alice", "type": "person"}, {"name": "Bob", "ty"#, Ok((1, 0))),
        ("JSON cut before anything completed", r#"{"entities": [{"name": "Ali"#, Err("unreadable extraction: the object is not closed")),
        ("garbage", "I'm sorry, I cannot help with that.", Err("no JSON object and no delimited records")),
        ("empty", "   ", Err("the reply is empty")),
        ("JSON of another shape", r#"{"answer": 42}"#, Err("the JSON has neither")),
        ("tuples all incomplete", "(\"entity\"<|>\"Alice\")##", Err("delimited records found, but none is a complete entity or relationship")),
    ];

    #[test]
    fn extraction_replies_parse_or_fail_with_a_reason() {
        for (case, reply, expected) in CASES {
            match (parse_extraction(reply), expected) {
                (Ok(x), Ok((e, r))) => assert_eq!((x.entities.len(), x.relations.len()), (*e, *r), "{case}"),
                (Err(reason), Err(start)) => assert!(reason.starts_with(start), "{case}: {reason}"),
                (got, _) => panic!("{case}: unexpected {got:?}"),
            }
        }
    }

    #[test]
    fn fields_are_read_into_the_right_places() {
        let x = parse_extraction(CASES[3].1).unwrap();
        assert_eq!(
            x.entities[1],
            Entity { name: "White Rabbit".into(), kind: "person".into(), description: "Late.".into() }
        );
        assert_eq!(x.relations[0].description, "Alice follows the Rabbit.");
        assert_eq!(x.relations[0].keywords, ["pursuit", "curiosity"]);
        assert_eq!(x.relations[0].strength, 9.0);
        let newer = parse_extraction(CASES[4].1).unwrap();
        assert_eq!(newer.relations[0].description, "They were partners.");
        assert_eq!(newer.relations[0].keywords, ["partnership"]);
        let json = parse_extraction(CASES[0].1).unwrap();
        assert_eq!(json.entities[0].kind, "person", "types are lower-cased");
        assert_eq!(json.relations[0].strength, 7.0);
        let strings = parse_extraction(CASES[2].1).unwrap();
        assert_eq!(
            (strings.relations[0].keywords.clone(), strings.relations[0].strength),
            (vec!["x".to_string(), "y".to_string()], 2.5)
        );
    }
}

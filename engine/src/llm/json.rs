//! Reading the JSON object in a model's reply, tolerantly.
//!
//! Real models wrap their JSON in prose or code fences, and a reply cut by
//! `max_tokens` (or a model that never closes its object) ends mid-value.
//! [`object`] takes the object from the first `{`; when it does not parse
//! as written, it is cut back to the last complete element and closed, so
//! what the model finished before the cut is kept, and the caller learns
//! that it was cut ([`Read::Cut`]).

use serde_json::Value;

/// How the object was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// As the model wrote it.
    Whole,
    /// Cut back to its last complete element and closed.
    Cut,
}

/// The JSON object in `reply` (prose and code fences around it tolerated),
/// and whether it had to be cut back. `what` names it in the errors
/// ("no JSON object in the verdict", "unreadable verdict: …").
pub fn object(reply: &str, what: &str) -> Result<(Value, Read), String> {
    let start = reply.find('{').ok_or_else(|| format!("no JSON object in the {what}"))?;
    let text = &reply[start..];
    // As written: the first `{` to the last `}`.
    let first_error = match text.rfind('}') {
        Some(end) => match serde_json::from_str::<Value>(&text[..=end]) {
            Ok(v) if v.is_object() => return Ok((v, Read::Whole)),
            Ok(_) => format!("no JSON object in the {what}"),
            Err(e) => format!("unreadable {what}: {e}"),
        },
        None => format!("unreadable {what}: the object is not closed"),
    };
    // The longest prefix that ends after a complete element, closed.
    match closed_prefix(text) {
        Some(v) => Ok((v, Read::Cut)),
        None => Err(first_error),
    }
}

/// The object made of `text`'s longest prefix ending after a complete
/// element, with its open arrays and objects closed. Cuts fall between the
/// elements of an array or between the top object's members, never inside
/// a nested object: a half-written entity or score table is left out, not
/// kept without its later fields.
fn closed_prefix(text: &str) -> Option<Value> {
    // Cut points: just before a `,` or just after a closing bracket, outside
    // strings, with the brackets open there.
    let may_cut = |stack: &[u8]| stack.len() == 1 || stack.last() == Some(&b']');
    let mut cuts: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut stack: Vec<u8> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, &c) in text.as_bytes().iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'}' | b']' => {
                stack.pop();
                if stack.is_empty() {
                    // The object closed here; what follows is not ours.
                    cuts.push((i + 1, Vec::new()));
                    break;
                }
                if may_cut(&stack) {
                    cuts.push((i + 1, stack.clone()));
                }
            }
            b',' if may_cut(&stack) => cuts.push((i, stack.clone())),
            _ => {}
        }
    }
    // The latest cuts first; a few dozen tries bound the work on a long ramble.
    for (at, open) in cuts.into_iter().rev().take(64) {
        let mut candidate = text[..at].trim_end().to_string();
        candidate.extend(open.iter().rev().map(|&b| b as char));
        if let Ok(v) = serde_json::from_str::<Value>(&candidate) {
            if v.is_object() {
                return Some(v);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_object_reads_as_written() {
        let (v, read) = object("Sure! ```json\n{\"a\": [1, 2], \"b\": \"x}\"}\n``` done", "reply").unwrap();
        assert_eq!(read, Read::Whole);
        assert_eq!(v["a"][1], 2);
        assert_eq!(v["b"], "x}");
    }

    /// A reply cut by `max_tokens` keeps its complete elements.
    #[test]
    fn a_cut_reply_keeps_what_was_finished() {
        let reply = r#"{"entities": [{"name": "Scrooge", "type": "person"}, {"name": "Marley", "type": "per"#;
        let (v, read) = object(reply, "extraction").unwrap();
        assert_eq!(read, Read::Cut);
        assert_eq!(v["entities"].as_array().unwrap().len(), 1);
        assert_eq!(v["entities"][0]["name"], "Scrooge");

        // Cut inside a string with an escaped quote and a comma in it.
        let reply = r#"{"a": 1, "b": "say \"hi, there"#;
        assert_eq!(object(reply, "reply").unwrap().0, serde_json::json!({"a": 1}));

        // A model that repeats itself and never closes the object.
        let ramble = format!("{{\"entities\": [{}", r#"{"name": "Bob", "type": "person"}, "#.repeat(500));
        let (v, read) = object(&ramble, "extraction").unwrap();
        assert_eq!(read, Read::Cut);
        assert_eq!(v["entities"].as_array().unwrap().len(), 500);
    }

    #[test]
    fn nothing_usable_is_an_error_with_the_reason() {
        assert_eq!(object("I cannot do that.", "verdict").unwrap_err(), "no JSON object in the verdict");
        assert_eq!(
            object("{\"Answer 1\": {\"Rel", "verdict").unwrap_err(),
            "unreadable verdict: the object is not closed"
        );
        assert!(object("{ not json }", "verdict").unwrap_err().starts_with("unreadable verdict: key must be a string"));
    }
}

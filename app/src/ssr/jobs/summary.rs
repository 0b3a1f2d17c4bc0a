//! A job's results in words and numbers: an item's result in one line
//! (its fields, long texts as word counts, lists as their lengths), and
//! the job's finished items summed up.

use crate::ssr::store::Db;
use serde_json::Value;

use crate::error::AppResult;
use crate::format;
use crate::ssr::store;

/// Fields an item's line names at most.
const FIELDS: usize = 6;

/// An item's stored result (JSON, or any text) in one line: `answer: 87
/// words · contexts: 5 · tokens: 1,234`.
fn summarise_result(result: &str) -> String {
    match serde_json::from_str::<Value>(result) {
        Ok(Value::Object(map)) => {
            let mut parts: Vec<String> = map
                .iter()
                .take(FIELDS)
                .map(|(k, v)| {
                    match (k.as_str(), serde_json::from_value::<engine::judge::align::Alignment>(v.clone())) {
                        // Length alignment's outcome in words, not as the enum it is stored as.
                        ("alignment", Ok(a)) => format!("alignment: {}", a.describe()),
                        _ => format!("{}: {}", k.replace('_', " "), value(v)),
                    }
                })
                .collect();
            if map.len() > FIELDS {
                parts.push(format!("and {} more fields", map.len() - FIELDS));
            }
            parts.join(" · ")
        }
        Ok(v) => value(&v),
        Err(_) => text(result),
    }
}

fn value(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => format::int(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format::int(f as i64),
            (None, Some(f)) => format!("{f:.3}"),
            _ => n.to_string(),
        },
        Value::String(s) => text(s),
        // A few numbers (the two answers' words) as they are.
        Value::Array(a) if (2..=4).contains(&a.len()) && a.iter().all(Value::is_number) => {
            a.iter().map(value).collect::<Vec<_>>().join(", ")
        }
        Value::Array(a) => format!("{} item{}", format::int(a.len() as i64), if a.len() == 1 { "" } else { "s" }),
        // A list stored folded (judge reasons: each distinct text once and
        // every entry's index) by its length, as the list it is.
        Value::Object(o)
            if o.len() == 2
                && o.get("texts").is_some_and(Value::is_array)
                && o.get("of").is_some_and(Value::is_array) =>
        {
            let (of, texts) = (o["of"].as_array().map_or(0, Vec::len), o["texts"].as_array().map_or(0, Vec::len));
            format!(
                "{} item{} ({} distinct)",
                format::int(of as i64),
                if of == 1 { "" } else { "s" },
                format::int(texts as i64)
            )
        }
        Value::Object(o) => {
            // A nested object by its few scalar fields (a verdict's totals
            // and outcome), else by its size.
            let scalars: Vec<String> = o
                .iter()
                .filter(|(_, v)| v.is_number() || v.is_boolean() || v.as_str().is_some_and(|s| s.chars().count() <= 24))
                .take(3)
                .map(|(k, v)| format!("{} {}", k.replace('_', " "), value(v)))
                .collect();
            if scalars.is_empty() {
                format!("{{{} fields}}", o.len())
            } else {
                format!("{{{}}}", scalars.join(", "))
            }
        }
    }
}

/// A short text as it is; a long one as its first words and its length.
fn text(s: &str) -> String {
    let words = s.split_whitespace().count();
    if words <= 12 && s.chars().count() <= 80 {
        return format!("\"{}\"", s.trim());
    }
    let head: String = s.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
    format!("\"{}…\" ({} words)", head.chars().take(60).collect::<String>(), format::int(words as i64))
}

/// A page of a job's finished items as the job page lists them: each
/// result summarised in a line, not sent whole.
pub async fn items_page(
    pool: &Db,
    job_id: i64,
    status: Option<crate::model::ItemStatus>,
    page: i64,
) -> AppResult<crate::model::JobItemsPage> {
    let mut p = store::jobs::job_items_page(pool, job_id, status, page).await?;
    for item in &mut p.items {
        item.summary = item.result.take().as_deref().map(summarise_result).unwrap_or_default();
    }
    Ok(p)
}

/// A job's finished items in numbers: how many, done and failed, tokens
/// and cost in all and per item, and how fast they finished; and the
/// failures' reasons, commonest first.
pub async fn job_summary(pool: &Db, job_id: i64) -> AppResult<(Vec<(String, String)>, Vec<(String, i64)>)> {
    let ((done, failed, tokens, cost, span), reasons) = store::jobs::item_totals(pool, job_id).await?;
    let finished = done + failed;
    let mut rows = vec![(
        "Items finished".to_string(),
        format!("{} ({} done, {} failed)", format::int(finished), format::int(done), format::int(failed)),
    )];
    if finished > 0 {
        rows.push((
            "Tokens".into(),
            format!(
                "{} in all, {} per item",
                format::int(tokens),
                format::int((tokens as f64 / finished as f64).round() as i64)
            ),
        ));
        rows.push((
            "Cost".into(),
            format!("{} in all, {} per item", format::usd(cost), format::usd(cost / finished as f64)),
        ));
    }
    if finished > 1 {
        if let Some(s) = span.filter(|s| *s > 0.0) {
            rows.push((
                "Pace".into(),
                format!(
                    "{} items in {} between the first and the last ({})",
                    format::int(finished),
                    format::duration(s),
                    format::pace((finished - 1) as u64, s)
                ),
            ));
        }
    }
    Ok((rows, reasons))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_reads_in_one_line() {
        let long = "word ".repeat(87);
        let r =
            serde_json::json!({"answer": long, "contexts": [1, 2, 3, 4, 5], "tokens": 1234, "score": 0.5, "ok": true});
        assert_eq!(
            summarise_result(&r.to_string()),
            "answer: \"word word word word word word word word…\" (87 words) · contexts: 5 items · tokens: 1,234 · score: 0.500 · ok: yes"
        );
        assert_eq!(summarise_result("plain reply"), "\"plain reply\"");
        assert_eq!(summarise_result("[1]"), "1 item");
        let verdict =
            r#"{"trial":0,"verdict":{"a_aspects":[5.0,2.0],"a_total":12.0,"b_total":13.0,"outcome":"B","extra":1}}"#;
        assert_eq!(summarise_result(verdict), "trial: 0 · verdict: {a total 12, b total 13, outcome \"B\"}");
        let folded = r#"{"trial":1,"reasoning":{"texts":["same","other"],"of":[0,0,1,0]}}"#;
        assert_eq!(summarise_result(folded), "trial: 1 · reasoning: 4 items (2 distinct)");
        assert_eq!(
            summarise_result(r#"{"alignment":{"Forced":3},"words":[60,58]}"#),
            "alignment: forced to length after 3 regenerations · words: 60, 58"
        );
        assert_eq!(summarise_result(r#"{"alignment":"AsIs"}"#), "alignment: within tolerance as generated");
        let wide: serde_json::Map<String, Value> = (0..8).map(|i| (format!("f{i}"), Value::from(i))).collect();
        assert!(summarise_result(&Value::Object(wide).to_string()).ends_with("and 2 more fields"));
    }
}

//! A metrics report's downloads: JSON and every question's scores as CSV.

use super::*;
/// The whole report as JSON (without every question's scores: those are the CSV).
pub fn report_json(r: &Report) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(sets) = v["sets"].as_array_mut() {
        for s in sets {
            if let Some(o) = s.as_object_mut() {
                o.remove("questions");
            }
        }
    }
    v
}

/// Every question's metrics as CSV: answer set, question, category, AP,
/// nDCG, recall, CS, ROUGE-1, BLEU, and the definitions they follow.
pub fn questions_csv(r: &Report) -> String {
    let mut out = String::from("answer_set,question_id,category,ap,ndcg,recall,cs,rouge1,bleu,definitions\n");
    let definitions = r.definitions.as_str();
    // Fixed precision (6 decimals, `crate::format::csv_number`), never 0.30000000000000004.
    let f = crate::format::csv_number;
    let num = |x: Option<f64>| x.map_or(String::new(), f);
    for s in &r.sets {
        for q in &s.questions {
            let category = q.category.clone().unwrap_or_default().replace('"', "\"\"");
            out += &format!(
                "{},{},\"{category}\",{},{},{},{},{},{},{definitions}\n",
                s.answer_set_id,
                q.question_id,
                num(q.scores.ap),
                num(q.scores.ndcg),
                num(q.scores.recall),
                f(q.scores.cs),
                f(q.scores.rouge1),
                f(q.scores.bleu)
            );
        }
    }
    out
}

//! Answer sets as files, for `assay answers import/export` and the browser.
//!
//! JSONL, one object per line: `question_id` or `question` (matched by id
//! within the question set, else by exact text), `answer`, and optionally
//! `contexts` (a list of strings, or of `{kind, id, score, text}` objects as
//! the export writes them), `prompt_tokens`, `completion_tokens`,
//! `latency_ms`. CSV: the same columns, `contexts` as a JSON list. Every
//! unmatched or malformed line is reported by its number, and then nothing
//! is imported.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::{AppError, AppResult};
use crate::model::{AnswerView, QuestionView, Section};
use crate::ssr::store::answers::NewAnswer;

pub const CSV_COLUMNS: [&str; 7] =
    ["question_id", "question", "answer", "contexts", "prompt_tokens", "completion_tokens", "latency_ms"];

/// How many line errors a refusal lists before "and N more".
const SHOWN_ERRORS: usize = 20;

/// One line of an answers file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    #[serde(default)]
    pub question_id: Option<i64>,
    #[serde(default)]
    pub question: Option<String>,
    pub answer: String,
    #[serde(default)]
    pub contexts: Vec<ContextItem>,
    #[serde(default)]
    pub prompt_tokens: Option<i64>,
    #[serde(default)]
    pub completion_tokens: Option<i64>,
    #[serde(default)]
    pub latency_ms: Option<f64>,
}

/// A context as a plain string or as the export's object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ContextItem {
    Text(String),
    Section(Section),
}

impl ContextItem {
    fn view(self, index: usize) -> Section {
        match self {
            ContextItem::Text(text) => Section { kind: "context".into(), id: index.to_string(), score: 0.0, text },
            ContextItem::Section(v) => v,
        }
    }
}

fn record_of(a: &AnswerView) -> Record {
    Record {
        question_id: Some(a.question_id),
        question: Some(a.question.clone()),
        answer: a.answer.clone(),
        contexts: a.contexts.iter().cloned().map(ContextItem::Section).collect(),
        prompt_tokens: a.prompt_tokens,
        completion_tokens: a.completion_tokens,
        latency_ms: a.query_ms,
    }
}

pub fn to_jsonl(answers: &[AnswerView]) -> String {
    answers.iter().map(|a| format!("{}\n", serde_json::to_string(&record_of(a)).unwrap_or_default())).collect()
}

pub fn to_csv(answers: &[AnswerView]) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    let _ = w.write_record(CSV_COLUMNS);
    let opt = |v: Option<String>| v.unwrap_or_default();
    for a in answers {
        let r = record_of(a);
        let _ = w.write_record([
            opt(r.question_id.map(|v| v.to_string())),
            opt(r.question),
            r.answer,
            serde_json::to_string(&r.contexts).unwrap_or_default(),
            opt(r.prompt_tokens.map(|v| v.to_string())),
            opt(r.completion_tokens.map(|v| v.to_string())),
            opt(r.latency_ms.map(|v| v.to_string())),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The records of a `.jsonl` or `.csv` file with their line numbers, and
/// the lines that could not be read.
fn read(file_name: &str, text: &str) -> AppResult<(Vec<(usize, Record)>, Vec<String>)> {
    let lower = file_name.to_lowercase();
    let mut records = Vec::new();
    let mut errors = Vec::new();
    if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            match serde_json::from_str::<Record>(line) {
                Ok(r) => records.push((i + 1, r)),
                Err(e) => errors.push(format!("line {}: {e}", i + 1)),
            }
        }
    } else if lower.ends_with(".csv") {
        let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
        let headers = reader.headers().map_err(|e| AppError::Invalid(format!("line 1: {e}")))?.clone();
        let column = |name: &str| headers.iter().position(|h| h.trim() == name);
        if column("answer").is_none() {
            return Err(AppError::Invalid("line 1: the CSV has no \"answer\" column".into()));
        }
        if column("question_id").is_none() && column("question").is_none() {
            return Err(AppError::Invalid(
                "line 1: the CSV has neither a \"question_id\" nor a \"question\" column".into(),
            ));
        }
        for (i, row) in reader.records().enumerate() {
            let line = i + 2;
            let parsed = row.map_err(|e| e.to_string()).and_then(|row| {
                let get = |name: &str| column(name).and_then(|c| row.get(c)).map(str::trim).filter(|s| !s.is_empty());
                let number = |name: &str| -> Result<Option<f64>, String> {
                    get(name).map(|v| v.parse::<f64>().map_err(|e| format!("{name}: {e}"))).transpose()
                };
                let whole = |name: &str| -> Result<Option<i64>, String> {
                    get(name).map(|v| v.parse::<i64>().map_err(|e| format!("{name}: {e}"))).transpose()
                };
                Ok(Record {
                    question_id: whole("question_id")?,
                    question: get("question").map(str::to_string),
                    answer: get("answer").unwrap_or("").to_string(),
                    contexts: match get("contexts") {
                        Some(c) => serde_json::from_str(c).map_err(|e| format!("contexts: {e}"))?,
                        None => Vec::new(),
                    },
                    prompt_tokens: whole("prompt_tokens")?,
                    completion_tokens: whole("completion_tokens")?,
                    latency_ms: number("latency_ms")?,
                })
            });
            match parsed {
                Ok(r) => records.push((line, r)),
                Err(e) => errors.push(format!("line {line}: {e}")),
            }
        }
    } else {
        return Err(AppError::Invalid(format!("{file_name}: answers are read from .jsonl or .csv files")));
    }
    Ok((records, errors))
}

/// Reads an answers file against the questions of a set: every answer
/// matched to one question, or the refusal listing each bad line.
pub fn parse(file_name: &str, bytes: &[u8], questions: &[QuestionView]) -> AppResult<Vec<NewAnswer>> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| AppError::Invalid(format!("{file_name} is not UTF-8 (byte {})", e.valid_up_to())))?;
    let (records, mut errors) = read(file_name, text)?;
    let ids: HashSet<i64> = questions.iter().map(|q| q.id).collect();
    let mut by_text: HashMap<&str, Vec<i64>> = HashMap::new();
    for q in questions {
        by_text.entry(q.question.trim()).or_default().push(q.id);
    }
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let mut out = Vec::new();
    for (line, r) in records {
        let matched = match (r.question_id, r.question.as_deref().map(str::trim)) {
            (Some(id), _) if ids.contains(&id) => Ok(id),
            (Some(id), _) => Err(format!("question {id} is not in this question set")),
            (None, Some(text)) => match by_text.get(text).map(Vec::as_slice) {
                Some([id]) => Ok(*id),
                Some(_) => Err("the question's text is in the set more than once: give its question_id".into()),
                None => Err("no question of this set has this text".into()),
            },
            (None, None) => Err("neither question_id nor question is given".into()),
        };
        let id = match matched {
            Ok(id) => id,
            Err(e) => {
                errors.push(format!("line {line}: {e}"));
                continue;
            }
        };
        if r.answer.trim().is_empty() {
            errors.push(format!("line {line}: the answer is empty"));
            continue;
        }
        if let Some(first) = seen.insert(id, line) {
            errors.push(format!("line {line}: question {id} was already answered on line {first}"));
            continue;
        }
        if let Some(bad) = [r.prompt_tokens, r.completion_tokens].into_iter().flatten().find(|t| *t < 0) {
            errors.push(format!("line {line}: a token count is negative ({bad})"));
            continue;
        }
        out.push(NewAnswer {
            question_id: id,
            answer: r.answer.trim().to_string(),
            contexts: r.contexts.into_iter().enumerate().map(|(i, c)| c.view(i)).collect(),
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            query_ms: r.latency_ms,
            ..Default::default()
        });
    }
    if !errors.is_empty() {
        let more = errors.len().saturating_sub(SHOWN_ERRORS);
        errors.truncate(SHOWN_ERRORS);
        if more > 0 {
            errors.push(format!("and {more} more"));
        }
        return Err(AppError::Invalid(format!("{file_name} was not imported: {}", errors.join("; "))));
    }
    if out.is_empty() {
        return Err(AppError::Invalid(format!("{file_name} holds no answers")));
    }
    Ok(out)
}

/// An answer set as a file another tool reads: `lightrag` (the result list
/// LightRAG's `reproduce/Step_3.py` writes and `batch_eval.py` reads) or
/// `graphrag-bench` (the predictions GraphRAG-Bench's evaluators read, with
/// each question's type, reference answer, evidence and gold document).
pub async fn benchmark_file(pool: &crate::ssr::store::Db, set: i64, format: &str) -> AppResult<String> {
    use crate::ssr::store;
    let view = store::answers::get_set(pool, set).await?;
    let answers = store::answers::list_answers(pool, set, None).await?;
    match format {
        "lightrag" => {
            Ok(engine::datasets::lightrag_results(answers.iter().map(|a| (a.question.as_str(), a.answer.as_str()))))
        }
        "graphrag-bench" => {
            let questions = store::questions::list_questions(pool, view.question_set_id).await?;
            let by_id: HashMap<i64, &QuestionView> = questions.iter().map(|q| (q.id, q)).collect();
            let firsts: HashSet<i64> = questions.iter().filter_map(|q| q.source_chunk_ids.first().copied()).collect();
            let titles = store::datasets::chunk_titles(pool, view.project_id, &firsts).await?;
            let rows: Vec<engine::datasets::Prediction> = answers
                .iter()
                .filter_map(|a| {
                    let q = by_id.get(&a.question_id)?;
                    Some(engine::datasets::Prediction {
                        id: a.question_id.to_string(),
                        question: &a.question,
                        source: q.source_chunk_ids.first().and_then(|c| titles.get(c)).cloned().unwrap_or_default(),
                        contexts: a.contexts.iter().map(|c| c.text.as_str()).collect(),
                        evidence: &q.evidence,
                        question_type: q.category.as_deref().or(q.level.as_deref()).unwrap_or(""),
                        answer: &a.answer,
                        ground_truth: q.reference_answer.as_deref().unwrap_or(""),
                    })
                })
                .collect();
            Ok(engine::datasets::graphrag_bench_predictions(&rows))
        }
        other => Err(AppError::Invalid(format!("unknown format \"{other}\": lightrag or graphrag-bench"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn questions() -> Vec<QuestionView> {
        ["Who taught Bo?", "Where is Saltmere?", "Who taught Bo?  "]
            .iter()
            .enumerate()
            .map(|(i, q)| QuestionView {
                id: 10 + i as i64,
                question: q.to_string(),
                level: None,
                category: None,
                expertise: None,
                reference_answer: None,
                source_chunk_ids: vec![],
                context_chunk_ids: None,
                evidence: Vec::new(),
                nodes: vec![],
                edges: vec![],
                walk: vec![],
                generator: types::Generator::new(types::QuestionWriter::Graph),
                prompt_hash: None,
                seed: None,
            })
            .collect()
    }

    fn view(n: &NewAnswer, q: &str) -> AnswerView {
        AnswerView {
            id: 0,
            question_id: n.question_id,
            question: q.into(),
            answer: n.answer.clone(),
            contexts: n.contexts.clone(),
            prompt_tokens: n.prompt_tokens,
            completion_tokens: n.completion_tokens,
            cost_usd: None,
            llm_calls: None,
            retrieval_ms: None,
            query_ms: n.query_ms,
            truncated: false,
        }
    }

    #[test]
    fn answers_match_by_id_or_text_and_round_trip_through_both_formats() {
        let qs = questions();
        let file = concat!(
            r#"{"question_id": 10, "answer": "Ada.", "contexts": ["Ada taught Bo."], "prompt_tokens": 120, "completion_tokens": 8, "latency_ms": 812.5}"#,
            "\n\n",
            r#"{"question": " Where is Saltmere?", "answer": "On the coast."}"#,
            "\n"
        );
        let got = parse("mine.jsonl", file.as_bytes(), &qs).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].question_id, got[1].question_id), (10, 11));
        assert_eq!(got[0].contexts[0].text, "Ada taught Bo.");
        assert_eq!((got[0].prompt_tokens, got[0].query_ms), (Some(120), Some(812.5)));
        assert_eq!(got[1].prompt_tokens, None, "unknown stays unknown");
        let views: Vec<AnswerView> = got.iter().map(|n| view(n, "")).collect();
        for (name, text) in [("a.jsonl", to_jsonl(&views)), ("a.csv", to_csv(&views))] {
            let back = parse(name, text.as_bytes(), &qs).unwrap();
            assert_eq!(back, got, "{name} round trip");
        }
    }

    #[test]
    fn every_bad_line_is_named_and_nothing_is_imported() {
        let qs = questions();
        let file = [
            r#"{"question_id": 10, "answer": "Ada."}"#,
            r#"{"question_id": 99, "answer": "?"}"#,
            r#"{"question": "Who taught Bo?", "answer": "Ada."}"#,
            r#"{"question": "Who is Cy?", "answer": "A carter."}"#,
            r#"{"question_id": 11, "answer": "  "}"#,
            r#"{"question_id": 10, "answer": "Again."}"#,
            r#"not json"#,
            r#"{"question_id": 11, "answer": "x", "prompt_tokens": -3}"#,
        ]
        .join("\n");
        let err = parse("bad.jsonl", file.as_bytes(), &qs).unwrap_err().to_string();
        for expected in [
            "line 2: question 99 is not in this question set",
            "line 3: the question's text is in the set more than once",
            "line 4: no question of this set has this text",
            "line 5: the answer is empty",
            "line 6: question 10 was already answered on line 1",
            "line 7: expected ident",
            "line 8: a token count is negative (-3)",
        ] {
            assert!(err.contains(expected), "{expected} in {err}");
        }
        assert!(err.starts_with("bad.jsonl was not imported: "));
        let csv = "question_id,answer,prompt_tokens\n10,Ada.,lots\n";
        assert!(parse("a.csv", csv.as_bytes(), &qs)
            .unwrap_err()
            .to_string()
            .contains("line 2: prompt_tokens: invalid digit"));
        assert!(parse("a.txt", b"x", &qs).unwrap_err().to_string().contains(".jsonl or .csv"));
    }
}

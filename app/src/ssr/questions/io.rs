//! Question sets as files, for `assay questions export/import` and the
//! browser: JSONL (one object per line with the fields of [`QuestionView`])
//! and CSV (the same columns; chunk ids space-separated, node keys joined
//! by ` | `, edges as JSON). Everything but `id`, which the database
//! assigns, survives an export and an import.

use serde::Deserialize;
use types::Generator;

use crate::error::{AppError, AppResult};
use crate::model::QuestionView;
use crate::ssr::store::questions::NewQuestion;

pub const CSV_COLUMNS: [&str; 15] = [
    "id",
    "question",
    "level",
    "category",
    "expertise",
    "reference_answer",
    "source_chunk_ids",
    "nodes",
    "edges",
    "walk",
    "generator",
    "prompt_hash",
    "seed",
    "context_chunk_ids",
    "evidence",
];

pub fn to_jsonl(qs: &[QuestionView]) -> String {
    qs.iter().map(|q| format!("{}\n", serde_json::to_string(q).unwrap_or_default())).collect()
}

pub fn to_csv(qs: &[QuestionView]) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    let _ = w.write_record(CSV_COLUMNS);
    for q in qs {
        let _ = w.write_record([
            q.id.to_string(),
            q.question.clone(),
            q.level.clone().unwrap_or_default(),
            q.category.clone().unwrap_or_default(),
            q.expertise.clone().unwrap_or_default(),
            q.reference_answer.clone().unwrap_or_default(),
            q.source_chunk_ids.iter().map(i64::to_string).collect::<Vec<_>>().join(" "),
            q.nodes.join(" | "),
            serde_json::to_string(&q.edges).unwrap_or_default(),
            q.walk.join(" | "),
            q.generator.to_string(),
            q.prompt_hash.clone().unwrap_or_default(),
            q.seed.map(|s| s.to_string()).unwrap_or_default(),
            q.context_chunk_ids
                .as_ref()
                .map_or(String::new(), |c| c.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")),
            if q.evidence.is_empty() { String::new() } else { serde_json::to_string(&q.evidence).unwrap_or_default() },
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The questions as LightRAG's `reproduce/` scripts read them
/// (`- Question N: …`, one line each).
pub fn to_lightrag(qs: &[QuestionView]) -> String {
    engine::datasets::lightrag_queries(qs.iter().map(|q| q.question.as_str()))
}

/// A question as a file gives it: only `question` is required.
#[derive(Debug, Deserialize)]
struct Record {
    question: String,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    expertise: Option<String>,
    #[serde(default)]
    reference_answer: Option<String>,
    #[serde(default)]
    source_chunk_ids: Vec<i64>,
    #[serde(default)]
    nodes: Vec<String>,
    #[serde(default)]
    edges: Vec<(String, String)>,
    #[serde(default)]
    walk: Vec<String>,
    #[serde(default)]
    generator: Option<String>,
    #[serde(default)]
    prompt_hash: Option<String>,
    #[serde(default)]
    seed: Option<i64>,
    #[serde(default)]
    context_chunk_ids: Option<Vec<i64>>,
    #[serde(default)]
    evidence: Vec<String>,
}

impl Record {
    fn into_new(self, line: usize) -> AppResult<NewQuestion> {
        let question = self.question.trim().to_string();
        if question.is_empty() {
            return Err(AppError::Invalid(format!("line {line}: the question is empty")));
        }
        let some = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        Ok(NewQuestion {
            question,
            level: some(self.level),
            category: some(self.category),
            expertise: some(self.expertise),
            reference_answer: some(self.reference_answer),
            source_chunk_ids: self.source_chunk_ids,
            context_chunk_ids: self.context_chunk_ids,
            evidence: self.evidence,
            nodes: self.nodes,
            edges: self.edges,
            walk: self.walk,
            // A generator Assay does not know (another tool's name) reads as
            // `imported`: the question came from this file.
            generator: some(self.generator).and_then(|g| Generator::parse(&g).ok()).unwrap_or_default(),
            prompt_hash: some(self.prompt_hash),
            seed: self.seed,
        })
    }
}

/// Reads a `.jsonl` or `.csv` file of questions; a bad line is refused with
/// its number and reason, and nothing is read.
pub fn parse(file_name: &str, bytes: &[u8]) -> AppResult<Vec<NewQuestion>> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| AppError::Invalid(format!("{file_name} is not UTF-8 (byte {})", e.valid_up_to())))?;
    let lower = file_name.to_lowercase();
    let out = if lower.ends_with(".csv") {
        parse_csv(text)?
    } else if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
        parse_jsonl(text)?
    } else {
        return Err(AppError::Invalid(format!("{file_name}: questions are read from .jsonl or .csv files")));
    };
    if out.is_empty() {
        return Err(AppError::Invalid(format!("{file_name} holds no questions")));
    }
    Ok(out)
}

fn parse_jsonl(text: &str) -> AppResult<Vec<NewQuestion>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let record: Record =
            serde_json::from_str(line).map_err(|e| AppError::Invalid(format!("line {}: {e}", i + 1)))?;
        out.push(record.into_new(i + 1)?);
    }
    Ok(out)
}

fn parse_csv(text: &str) -> AppResult<Vec<NewQuestion>> {
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| AppError::Invalid(format!("line 1: {e}")))?.clone();
    let column = |name: &str| headers.iter().position(|h| h.trim() == name);
    if column("question").is_none() {
        return Err(AppError::Invalid("line 1: the CSV has no \"question\" column".into()));
    }
    let mut out = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let line = i + 2;
        let row = row.map_err(|e| AppError::Invalid(format!("line {line}: {e}")))?;
        let get = |name: &str| column(name).and_then(|c| row.get(c)).unwrap_or("").to_string();
        let opt = |name: &str| Some(get(name)).filter(|s| !s.is_empty());
        let keys = |name: &str| -> Vec<String> {
            get(name).split(" | ").map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
        };
        let invalid = |what: &str, e: &dyn std::fmt::Display| AppError::Invalid(format!("line {line}: {what}: {e}"));
        let record = Record {
            question: get("question"),
            level: opt("level"),
            category: opt("category"),
            expertise: opt("expertise"),
            reference_answer: opt("reference_answer"),
            source_chunk_ids: get("source_chunk_ids")
                .split_whitespace()
                .map(|s| s.parse::<i64>().map_err(|e| invalid("source_chunk_ids", &e)))
                .collect::<AppResult<_>>()?,
            nodes: keys("nodes"),
            edges: match opt("edges") {
                Some(e) => serde_json::from_str(&e).map_err(|e| invalid("edges", &e))?,
                None => Vec::new(),
            },
            walk: keys("walk"),
            generator: opt("generator"),
            prompt_hash: opt("prompt_hash"),
            seed: opt("seed").map(|s| s.parse().map_err(|e| invalid("seed", &e))).transpose()?,
            context_chunk_ids: opt("context_chunk_ids")
                .map(|c| {
                    c.split_whitespace()
                        .map(|s| s.parse::<i64>().map_err(|e| invalid("context_chunk_ids", &e)))
                        .collect::<AppResult<Vec<i64>>>()
                })
                .transpose()?,
            evidence: match opt("evidence") {
                Some(e) => serde_json::from_str(&e).map_err(|e| invalid("evidence", &e))?,
                None => Vec::new(),
            },
        };
        out.push(record.into_new(line)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::QuestionWriter;

    fn sample() -> Vec<QuestionView> {
        vec![
            QuestionView {
                id: 7,
                question: "How is Ada, \"the warden\", related to Bo?\nTwo lines.".into(),
                level: Some("edge".into()),
                category: None,
                expertise: None,
                reference_answer: None,
                source_chunk_ids: vec![3, 12],
                context_chunk_ids: Some(vec![12]),
                evidence: vec![],
                nodes: vec!["ada".into(), "bo marsh".into()],
                edges: vec![("ada".into(), "bo marsh".into())],
                walk: vec![],
                generator: Generator::new(QuestionWriter::Graph),
                prompt_hash: Some("ab".repeat(32)),
                seed: Some(42),
            },
            QuestionView {
                id: 8,
                question: "What is salt?".into(),
                level: None,
                category: Some("QC/simple/extractive_span".into()),
                expertise: Some("novice".into()),
                reference_answer: Some("A mineral, à la française.".into()),
                source_chunk_ids: vec![],
                context_chunk_ids: None,
                evidence: vec!["Salt is a mineral, \"halite\".".into(), "Second, passage".into()],
                nodes: vec![],
                edges: vec![],
                walk: vec!["a".into(), "b".into(), "a".into()],
                generator: Generator::parse("hierarchical+edited").unwrap(),
                prompt_hash: None,
                seed: None,
            },
        ]
    }

    /// What an import stores, as a view again (ids as exported).
    fn back(qs: Vec<NewQuestion>, ids: &[i64]) -> Vec<QuestionView> {
        qs.into_iter()
            .zip(ids)
            .map(|(q, id)| QuestionView {
                id: *id,
                question: q.question,
                level: q.level,
                category: q.category,
                expertise: q.expertise,
                reference_answer: q.reference_answer,
                source_chunk_ids: q.source_chunk_ids,
                context_chunk_ids: q.context_chunk_ids,
                evidence: q.evidence,
                nodes: q.nodes,
                edges: q.edges,
                walk: q.walk,
                generator: q.generator,
                prompt_hash: q.prompt_hash,
                seed: q.seed,
            })
            .collect()
    }

    #[test]
    fn jsonl_and_csv_round_trip_losslessly() {
        let qs = sample();
        assert_eq!(back(parse("set.jsonl", to_jsonl(&qs).as_bytes()).unwrap(), &[7, 8]), qs);
        assert_eq!(back(parse("set.csv", to_csv(&qs).as_bytes()).unwrap(), &[7, 8]), qs);
    }

    #[test]
    fn bad_files_are_refused_with_the_line_and_reason() {
        let cases: [(&str, &str, &str); 6] = [
            ("a.jsonl", "{\"question\": \"Why?\"}\nnot json\n", "line 2: expected"),
            ("a.jsonl", "{\"question\": \"  \"}\n", "line 1: the question is empty"),
            ("a.jsonl", "\n\n", "a.jsonl holds no questions"),
            ("a.csv", "level\nnode\n", "line 1: the CSV has no \"question\" column"),
            ("a.csv", "question,seed\nWhy?,forty\n", "line 2: seed: invalid digit"),
            ("a.txt", "Why?", "a.txt: questions are read from .jsonl or .csv files"),
        ];
        for (name, body, want) in cases {
            let err = parse(name, body.as_bytes()).unwrap_err().to_string();
            assert!(err.starts_with(want), "{name} {body:?}: {err}");
        }
        let minimal = parse("m.jsonl", b"{\"question\": \"Why?\", \"id\": 99, \"extra\": true}\n").unwrap();
        assert_eq!(minimal[0].generator, Generator::new(QuestionWriter::Imported));
        let foreign = parse("f.jsonl", b"{\"question\": \"Why?\", \"generator\": \"gpt-4\"}\n").unwrap();
        assert_eq!(foreign[0].generator, Generator::new(QuestionWriter::Imported));
    }
}

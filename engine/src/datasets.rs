//! The field's benchmark files, in and out.
//!
//! In: a corpus with its questions, reference answers and — where the format
//! has them — categories, evidence and gold documents, from
//! - **UltraDomain** (LightRAG's evaluation data): JSONL, one object per line
//!   with `context` (the document), `input` (the question), `answers`,
//!   `label` (the domain, kept as the category), `context_id`, `_id`; a line
//!   without `input` is a document only (LightRAG's `reproduce/` uses just
//!   the contexts);
//! - **GraphRAG-Bench**: a question file (a JSON list or JSONL of `id`,
//!   `source`, `question`, `answer`, `question_type`, `evidence`) and its
//!   corpus (`corpus_name`, `context`); `question_type` becomes the category,
//!   `source` the gold document;
//! - **MultiHop-RAG**: `MultiHopRAG.json` (`query`, `answer`, `question_type`,
//!   `evidence_list` of `title`, `url`, `fact`) and `corpus.json` (`title`,
//!   `url`, `body`, …); the evidence's articles are the gold documents;
//! - **a table**: CSV or JSONL with named columns (see [`Columns`]), a
//!   document per row (`context`) or a separate corpus file.
//!
//! Gold documents are named by their key in the file (GraphRAG-Bench's
//! `corpus_name`, MultiHop-RAG's `url`, UltraDomain's `context_id`); the
//! caller resolves keys the file's corpus lacks against the project's
//! documents by title. Where a question has evidence, [`EvidenceIndex`]
//! finds the chunks that quote it.
//!
//! Out: [`lightrag_queries`] and [`lightrag_results`] (the files LightRAG's
//! `reproduce/` scripts and `batch_eval.py` read) and
//! [`graphrag_bench_predictions`] (the list GraphRAG-Bench's
//! `generation_eval.py` and `retrieval_eval.py` read).

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

/// A benchmark file's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    UltraDomain,
    GraphRagBench,
    MultiHopRag,
    Table,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::UltraDomain, Format::GraphRagBench, Format::MultiHopRag, Format::Table];

    pub fn name(self) -> &'static str {
        match self {
            Format::UltraDomain => "ultradomain",
            Format::GraphRagBench => "graphrag-bench",
            Format::MultiHopRag => "multihop-rag",
            Format::Table => "table",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Format::UltraDomain => "UltraDomain JSONL (LightRAG's evaluation data)",
            Format::GraphRagBench => "GraphRAG-Bench questions + corpus",
            Format::MultiHopRag => "MultiHop-RAG queries + corpus",
            Format::Table => "CSV or JSONL with named columns",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s.trim().to_lowercase())
    }
}

/// A document of the file's corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// How the questions name it.
    pub key: String,
    pub title: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Question {
    pub question: String,
    pub reference: Option<String>,
    pub category: Option<String>,
    /// Passages the format says answer it (quoted from the gold documents).
    pub evidence: Vec<String>,
    /// Keys of its gold documents.
    pub gold: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dataset {
    pub documents: Vec<Doc>,
    pub questions: Vec<Question>,
    /// Documents given twice (same key) and kept once.
    pub repeated_documents: usize,
}

/// Which column holds what in a table (the first name found wins).
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    pub question: Vec<String>,
    pub reference: Vec<String>,
    pub category: Vec<String>,
    pub evidence: Vec<String>,
    /// A document's text on the question's row.
    pub context: Vec<String>,
    /// The key of the question's gold document (in the corpus file), or of
    /// the row's `context`.
    pub document: Vec<String>,
    /// In a corpus file: a document's key, title and text.
    pub doc_key: Vec<String>,
    pub doc_title: Vec<String>,
    pub doc_text: Vec<String>,
}

impl Default for Columns {
    fn default() -> Self {
        let v = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
        Columns {
            question: v(&["question", "query", "input"]),
            reference: v(&["reference_answer", "answer", "reference", "ground_truth", "gold_answer", "answers"]),
            category: v(&["category", "question_type", "type", "label"]),
            evidence: v(&["evidence", "evidence_list", "supporting_facts"]),
            context: v(&["context", "passage"]),
            document: v(&["document", "doc_id", "document_id", "source", "context_id", "title"]),
            doc_key: v(&["id", "doc_id", "document_id", "corpus_name", "url", "title"]),
            doc_title: v(&["title", "corpus_name", "name", "id"]),
            doc_text: v(&["text", "body", "context", "content"]),
        }
    }
}

impl Columns {
    /// Applies `role=column` overrides (`question=Query,reference=Gold`):
    /// the named column is the only one read for that role.
    pub fn with_overrides(mut self, spec: &str) -> Result<Columns, DatasetError> {
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (role, column) =
                pair.split_once('=').ok_or_else(|| DatasetError(format!("columns: \"{pair}\" is not role=column")))?;
            let slot = match role.trim() {
                "question" => &mut self.question,
                "reference" | "answer" => &mut self.reference,
                "category" => &mut self.category,
                "evidence" => &mut self.evidence,
                "context" => &mut self.context,
                "document" => &mut self.document,
                "doc_key" => &mut self.doc_key,
                "doc_title" => &mut self.doc_title,
                "doc_text" => &mut self.doc_text,
                other => {
                    return Err(DatasetError(format!(
                        "columns: unknown role \"{other}\" (question, reference, category, evidence, context, \
                         document, doc_key, doc_title, doc_text)"
                    )))
                }
            };
            *slot = vec![column.trim().to_string()];
        }
        Ok(self)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DatasetError(pub String);

impl std::fmt::Display for DatasetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DatasetError {}

fn err<T>(msg: impl Into<String>) -> Result<T, DatasetError> {
    Err(DatasetError(msg.into()))
}

/// A file as given: its name (for messages and its kind) and bytes.
pub struct File<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// Reads `questions` (and `corpus`, where the format keeps it apart) into a
/// dataset. A bad record is refused with its file, record number and reason,
/// and nothing is read.
pub fn read(
    format: Format,
    questions: &File,
    corpus: Option<&File>,
    columns: &Columns,
) -> Result<Dataset, DatasetError> {
    let rows = records(questions)?;
    let corpus_records = corpus.map(records).transpose()?;
    let mut out = Builder::default();
    match format {
        Format::UltraDomain => {
            if corpus.is_some() {
                return err("ultradomain: the contexts are in the question file; give no corpus file");
            }
            for (n, r) in rows.iter().enumerate() {
                let at = || format!("{} record {}", questions.name, n + 1);
                let context = string(r, "context").ok_or_else(|| DatasetError(format!("{}: no \"context\"", at())))?;
                let key = string(r, "context_id")
                    .or_else(|| string(r, "id"))
                    .unwrap_or_else(|| format!("context-{:016x}", fingerprint(&context)));
                let title = match string(r, "label") {
                    Some(label) => format!("{label} {key}"),
                    None => key.clone(),
                };
                out.doc(Doc { key: key.clone(), title, text: context });
                if let Some(q) = string(r, "input") {
                    out.questions.push(Question {
                        question: q,
                        reference: answers(r.get("answers").or_else(|| r.get("answer"))),
                        category: string(r, "label"),
                        evidence: Vec::new(),
                        gold: vec![key],
                    });
                }
            }
        }
        Format::GraphRagBench => {
            let Some(corpus_records) = &corpus_records else {
                return err("graphrag-bench: give the corpus file too (Datasets/Corpus/<subset>.json, objects of \
                     corpus_name and context)");
            };
            for (n, r) in corpus_records.iter().enumerate() {
                let at = format!("{} record {}", corpus.map_or("", |c| c.name), n + 1);
                let (Some(name), Some(text)) = (string(r, "corpus_name"), string(r, "context")) else {
                    return err(format!("{at}: a corpus entry needs \"corpus_name\" and \"context\""));
                };
                out.doc(Doc { key: name.clone(), title: name, text });
            }
            for (n, r) in rows.iter().enumerate() {
                let at = format!("{} record {}", questions.name, n + 1);
                let Some(q) = string(r, "question") else { return err(format!("{at}: no \"question\"")) };
                out.questions.push(Question {
                    question: q,
                    reference: answers(r.get("answer")),
                    category: string(r, "question_type"),
                    evidence: texts(r.get("evidence")),
                    gold: string(r, "source").into_iter().collect(),
                });
            }
        }
        Format::MultiHopRag => {
            let Some(corpus_records) = &corpus_records else {
                return err("multihop-rag: give the corpus file too (corpus.json, objects of title, url and body)");
            };
            let mut by_title = HashMap::new();
            for (n, r) in corpus_records.iter().enumerate() {
                let at = format!("{} record {}", corpus.map_or("", |c| c.name), n + 1);
                let (Some(title), Some(body)) = (string(r, "title"), string(r, "body")) else {
                    return err(format!("{at}: an article needs \"title\" and \"body\""));
                };
                let key = string(r, "url").unwrap_or_else(|| title.clone());
                by_title.entry(title.clone()).or_insert_with(|| key.clone());
                out.doc(Doc { key, title, text: body });
            }
            for (n, r) in rows.iter().enumerate() {
                let at = format!("{} record {}", questions.name, n + 1);
                let Some(q) = string(r, "query") else { return err(format!("{at}: no \"query\"")) };
                let list = r.get("evidence_list").and_then(Value::as_array).cloned().unwrap_or_default();
                let mut gold = Vec::new();
                let mut evidence = Vec::new();
                for e in &list {
                    let key = string(e, "url")
                        .filter(|u| out.keys.contains_key(u))
                        .or_else(|| string(e, "title").map(|t| by_title.get(&t).cloned().unwrap_or(t)));
                    if let Some(key) = key {
                        if !gold.contains(&key) {
                            gold.push(key);
                        }
                    }
                    evidence.extend(string(e, "fact"));
                }
                out.questions.push(Question {
                    question: q,
                    reference: answers(r.get("answer")),
                    category: string(r, "question_type"),
                    evidence,
                    gold,
                });
            }
        }
        Format::Table => {
            if let (Some(corpus), Some(docs)) = (corpus, &corpus_records) {
                for (n, r) in docs.iter().enumerate() {
                    let at = format!("{} record {}", corpus.name, n + 1);
                    let Some(text) = first(r, &columns.doc_text) else {
                        return err(format!("{at}: no document text (columns {})", columns.doc_text.join(", ")));
                    };
                    let key = first(r, &columns.doc_key).unwrap_or_else(|| format!("row-{}", n + 1));
                    let title = first(r, &columns.doc_title).unwrap_or_else(|| key.clone());
                    out.doc(Doc { key, title, text });
                }
            }
            if let Some(r) = rows.first() {
                if first(r, &columns.question).is_none() && !has_any(r, &columns.question) {
                    return err(format!(
                        "{}: no question column (looked for {})",
                        questions.name,
                        columns.question.join(", ")
                    ));
                }
            }
            for (n, r) in rows.iter().enumerate() {
                let at = format!("{} record {}", questions.name, n + 1);
                let Some(q) = first(r, &columns.question) else { return err(format!("{at}: the question is empty")) };
                let mut gold = Vec::new();
                if let Some(text) = first(r, &columns.context) {
                    let key =
                        first(r, &columns.document).unwrap_or_else(|| format!("context-{:016x}", fingerprint(&text)));
                    out.doc(Doc { key: key.clone(), title: key.clone(), text });
                    gold.push(key);
                } else if let Some(key) = first(r, &columns.document) {
                    gold.push(key);
                }
                out.questions.push(Question {
                    question: q,
                    reference: columns.reference.iter().find_map(|c| answers(r.get(c.as_str()))),
                    category: first(r, &columns.category),
                    evidence: columns
                        .evidence
                        .iter()
                        .map(|c| texts(r.get(c.as_str())))
                        .find(|e| !e.is_empty())
                        .unwrap_or_default(),
                    gold,
                });
            }
        }
    }
    let data = out.finish();
    if data.documents.is_empty() && data.questions.is_empty() {
        return err(format!("{} holds neither documents nor questions", questions.name));
    }
    Ok(data)
}

#[derive(Default)]
struct Builder {
    documents: Vec<Doc>,
    keys: HashMap<String, usize>,
    questions: Vec<Question>,
    repeated: usize,
}

impl Builder {
    fn doc(&mut self, d: Doc) {
        if self.keys.contains_key(&d.key) {
            self.repeated += 1;
        } else {
            self.keys.insert(d.key.clone(), self.documents.len());
            self.documents.push(d);
        }
    }

    fn finish(self) -> Dataset {
        Dataset { documents: self.documents, questions: self.questions, repeated_documents: self.repeated }
    }
}

/// A file's records: a JSON list, JSONL, or CSV (by its name; a `.json`
/// file may also be JSONL).
fn records(file: &File) -> Result<Vec<Value>, DatasetError> {
    let text = std::str::from_utf8(file.bytes)
        .map_err(|e| DatasetError(format!("{} is not UTF-8 (byte {})", file.name, e.valid_up_to())))?;
    let text = text.trim_start_matches('\u{feff}');
    let lower = file.name.to_lowercase();
    if lower.ends_with(".csv") || lower.ends_with(".tsv") {
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(if lower.ends_with(".tsv") { b'\t' } else { b',' })
            .from_reader(text.as_bytes());
        let headers: Vec<String> = reader
            .headers()
            .map_err(|e| DatasetError(format!("{} line 1: {e}", file.name)))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let mut out = Vec::new();
        for (i, row) in reader.records().enumerate() {
            let row = row.map_err(|e| DatasetError(format!("{} line {}: {e}", file.name, i + 2)))?;
            let object: Map<String, Value> =
                headers.iter().zip(row.iter()).map(|(h, v)| (h.clone(), Value::String(v.to_string()))).collect();
            out.push(Value::Object(object));
        }
        return Ok(out);
    }
    if !(lower.ends_with(".json") || lower.ends_with(".jsonl") || lower.ends_with(".ndjson")) {
        return err(format!("{}: benchmark files are read from .json, .jsonl or .csv", file.name));
    }
    if text.trim_start().starts_with('[') {
        let value: Value =
            serde_json::from_str(text).map_err(|e| DatasetError(format!("{}: not a JSON list: {e}", file.name)))?;
        let Value::Array(items) = value else { unreachable!("starts with [") };
        return check_objects(file.name, items, "item");
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| DatasetError(format!("{} line {}: {e}", file.name, i + 1)))?;
        if !v.is_object() {
            return err(format!("{} line {}: not a JSON object", file.name, i + 1));
        }
        out.push(v);
    }
    Ok(out)
}

fn check_objects(name: &str, items: Vec<Value>, what: &str) -> Result<Vec<Value>, DatasetError> {
    match items.iter().position(|v| !v.is_object()) {
        Some(i) => err(format!("{name} {what} {}: not a JSON object", i + 1)),
        None => Ok(items),
    }
}

/// A field as trimmed, non-empty text (numbers as written).
fn string(r: &Value, field: &str) -> Option<String> {
    match r.get(field)? {
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn first(r: &Value, fields: &[String]) -> Option<String> {
    fields.iter().find_map(|f| string(r, f))
}

fn has_any(r: &Value, fields: &[String]) -> bool {
    fields.iter().any(|f| r.get(f.as_str()).is_some())
}

/// A reference answer: a string, or a list of them (joined by blank lines).
fn answers(v: Option<&Value>) -> Option<String> {
    let joined = texts(v).join("\n\n");
    Some(joined).filter(|s| !s.is_empty())
}

/// Passages: a string, a list of strings, or a list of objects with a
/// `fact`/`text`; a string holding a JSON list is that list (CSV cells).
fn texts(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.starts_with('[') {
                if let Ok(list @ Value::Array(_)) = serde_json::from_str::<Value>(s) {
                    return texts(Some(&list));
                }
            }
            Some(s.to_string()).filter(|s| !s.is_empty()).into_iter().collect()
        }
        Some(Value::Array(items)) => items
            .iter()
            .flat_map(|i| match i {
                Value::Object(_) => string(i, "fact").or_else(|| string(i, "text")).into_iter().collect(),
                other => texts(Some(other)),
            })
            .collect(),
        Some(Value::Number(n)) => vec![n.to_string()],
        _ => Vec::new(),
    }
}

fn fingerprint(text: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(text.as_bytes());
    u64::from_be_bytes(d[..8].try_into().expect("8 bytes"))
}

/// Runs of this many words tie evidence to chunks.
const EVIDENCE_RUN: usize = 5;

/// Where evidence is quoted among a project's chunks: every 5-word run of
/// every chunk, indexed once.
pub struct EvidenceIndex {
    /// Chunk ids in the order given.
    ids: Vec<i64>,
    runs: HashMap<u64, Vec<u32>>,
}

impl EvidenceIndex {
    pub fn new<'a>(chunks: impl IntoIterator<Item = (i64, &'a str)>) -> EvidenceIndex {
        let mut ids = Vec::new();
        let mut runs: HashMap<u64, Vec<u32>> = HashMap::new();
        for (i, (id, text)) in chunks.into_iter().enumerate() {
            ids.push(id);
            let mut seen = HashSet::new();
            for r in crate::text::word_runs(text, EVIDENCE_RUN) {
                if seen.insert(r) {
                    runs.entry(r).or_default().push(i as u32);
                }
            }
        }
        EvidenceIndex { ids, runs }
    }

    /// The chunks (in the index's order; only those in `within` when given)
    /// that quote any of `evidence`: a chunk holding at least 30% of a
    /// passage's 5-word runs (a passage cut by a chunk boundary lands in
    /// both chunks). Empty when none does.
    pub fn locate(&self, evidence: &[String], within: Option<&HashSet<i64>>) -> Vec<i64> {
        let mut hit = HashSet::new();
        for e in evidence {
            let runs: HashSet<u64> = crate::text::word_runs(e, EVIDENCE_RUN).into_iter().collect();
            let mut shared: HashMap<u32, usize> = HashMap::new();
            for r in &runs {
                for &c in self.runs.get(r).map(Vec::as_slice).unwrap_or(&[]) {
                    *shared.entry(c).or_default() += 1;
                }
            }
            for (c, n) in shared {
                if n * 10 >= runs.len() * 3 && within.is_none_or(|w| w.contains(&self.ids[c as usize])) {
                    hit.insert(c);
                }
            }
        }
        let mut hit: Vec<u32> = hit.into_iter().collect();
        hit.sort_unstable();
        hit.into_iter().map(|c| self.ids[c as usize]).collect()
    }
}

/// A question as LightRAG's `reproduce/` scripts take it: one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The questions as `reproduce/Step_2.py` leaves them and `Step_3.py` and
/// `batch_eval.py` read them (`- Question N: …`, one per line).
pub fn lightrag_queries<'a>(questions: impl IntoIterator<Item = &'a str>) -> String {
    questions.into_iter().enumerate().map(|(i, q)| format!("- Question {}: {}\n", i + 1, one_line(q))).collect()
}

/// Answers as `reproduce/Step_3.py` writes them and `batch_eval.py` reads
/// them: a JSON list of `{"query", "result"}` in the queries' order.
pub fn lightrag_results<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let list: Vec<Value> = pairs.into_iter().map(|(q, a)| json!({ "query": one_line(q), "result": a })).collect();
    serde_json::to_string_pretty(&list).unwrap_or_default()
}

/// One answered question for GraphRAG-Bench's evaluators, under its field
/// names.
#[derive(serde::Serialize)]
pub struct Prediction<'a> {
    pub id: String,
    pub question: &'a str,
    /// The gold document's name (GraphRAG-Bench's `source`).
    pub source: String,
    #[serde(rename = "context")]
    pub contexts: Vec<&'a str>,
    pub evidence: &'a [String],
    pub question_type: &'a str,
    #[serde(rename = "generated_answer")]
    pub answer: &'a str,
    pub ground_truth: &'a str,
}

/// The list `Examples/run_*.py` write and `Evaluation/generation_eval.py`
/// and `retrieval_eval.py` read (grouped there by `question_type`); compact,
/// written straight from the rows (5,000 answers with their contexts are
/// hundreds of MB).
pub fn graphrag_bench_predictions(rows: &[Prediction]) -> String {
    serde_json::to_string(rows).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<'a>(name: &'a str, text: &'a str) -> File<'a> {
        File { name, bytes: text.as_bytes() }
    }

    #[test]
    fn ultradomain_lines_are_documents_and_questions() {
        let text = concat!(
            r#"{"input": "What does the farmer plant?", "context": "The farmer plants maize in spring.", "answers": ["Maize."], "length": 6, "context_id": "agri-1", "_id": "a", "label": "agriculture"}"#,
            "\n",
            r#"{"input": "When?", "context": "The farmer plants maize in spring.", "answers": "In spring.", "context_id": "agri-1", "label": "agriculture"}"#,
            "\n",
            r#"{"id": 7, "context": "A contexts-only line, as reproduce/Step_0 reads."}"#,
            "\n"
        );
        let d = read(Format::UltraDomain, &file("agriculture.jsonl", text), None, &Columns::default()).unwrap();
        assert_eq!(d.documents.len(), 2);
        assert_eq!(d.repeated_documents, 1);
        assert_eq!(d.documents[0].title, "agriculture agri-1");
        assert_eq!(d.documents[1].key, "7");
        assert_eq!(d.questions.len(), 2);
        assert_eq!(d.questions[0].reference.as_deref(), Some("Maize."));
        assert_eq!(d.questions[1].reference.as_deref(), Some("In spring."));
        assert_eq!(d.questions[0].category.as_deref(), Some("agriculture"));
        assert_eq!(d.questions[0].gold, ["agri-1"]);
        let e = read(Format::UltraDomain, &file("a.jsonl", "{\"input\": \"Q?\"}\n"), None, &Columns::default());
        assert_eq!(e.unwrap_err().0, "a.jsonl record 1: no \"context\"");
    }

    #[test]
    fn graphrag_bench_needs_its_corpus_and_keeps_types_and_evidence() {
        let qs = r#"[{"id": "Novel-1", "source": "Novel-44557", "question": "Which plant?", "answer": "Cornish heath",
                      "question_type": "Fact Retrieval", "evidence": ["Erica vagans, the Cornish heath"]},
                     {"id": "Novel-2", "source": "Novel-44557", "question": "Retell it.", "answer": "…",
                      "question_type": "Creative Generation", "evidence": null}]"#;
        let corpus = r#"[{"corpus_name": "Novel-44557", "context": "Erica vagans, the Cornish heath, grows here."}]"#;
        let none = read(Format::GraphRagBench, &file("q.json", qs), None, &Columns::default()).unwrap_err();
        assert!(none.0.starts_with("graphrag-bench: give the corpus file too"), "{none}");
        let d =
            read(Format::GraphRagBench, &file("q.json", qs), Some(&file("novel.json", corpus)), &Columns::default())
                .unwrap();
        assert_eq!(d.documents[0].key, "Novel-44557");
        assert_eq!(d.questions[0].category.as_deref(), Some("Fact Retrieval"));
        assert_eq!(d.questions[0].evidence, ["Erica vagans, the Cornish heath"]);
        assert!(d.questions[1].evidence.is_empty());
        assert_eq!(d.questions[1].gold, ["Novel-44557"]);
    }

    #[test]
    fn multihop_rag_evidence_names_its_articles() {
        let corpus = r#"[{"title": "Apple unveils", "author": "A", "source": "TechCrunch", "published_at": "2023-10-01",
                          "category": "technology", "url": "https://t.example/1", "body": "Apple unveiled a phone."},
                         {"title": "Phone sales", "url": "https://t.example/2", "body": "Sales of phones rose."}]"#;
        let qs = r#"[{"query": "Did Apple unveil a phone before sales rose?", "answer": "Yes",
                      "question_type": "temporal_query",
                      "evidence_list": [{"title": "Apple unveils", "url": "https://t.example/1", "fact": "Apple unveiled a phone."},
                                        {"title": "Phone sales", "url": "https://elsewhere/2", "fact": "Sales of phones rose."}]},
                     {"query": "Who won?", "answer": "Insufficient information.", "question_type": "null_query", "evidence_list": []}]"#;
        let d = read(
            Format::MultiHopRag,
            &file("MultiHopRAG.json", qs),
            Some(&file("corpus.json", corpus)),
            &Columns::default(),
        )
        .unwrap();
        assert_eq!(d.documents.len(), 2);
        assert_eq!(d.questions[0].gold, ["https://t.example/1", "https://t.example/2"]);
        assert_eq!(d.questions[0].evidence.len(), 2);
        assert_eq!(d.questions[1].category.as_deref(), Some("null_query"));
        assert!(d.questions[1].gold.is_empty());
    }

    #[test]
    fn tables_read_named_columns_and_overrides() {
        let csv = "Query,Gold,Kind,context\nWhat grows?,Heath,fact,Heath grows on the cliffs.\nWhy?,Salt,why,\n";
        let cols = Columns::default().with_overrides("question=Query, reference=Gold, category=Kind").unwrap();
        let d = read(Format::Table, &file("t.csv", csv), None, &cols).unwrap();
        assert_eq!(d.documents.len(), 1);
        assert_eq!(d.questions.len(), 2);
        assert_eq!(d.questions[0].reference.as_deref(), Some("Heath"));
        assert_eq!(d.questions[0].category.as_deref(), Some("fact"));
        assert_eq!(d.questions[0].gold.len(), 1);
        assert!(d.questions[1].gold.is_empty());
        let missing = read(Format::Table, &file("t.csv", csv), None, &Columns::default()).unwrap_err();
        assert_eq!(missing.0, "t.csv: no question column (looked for question, query, input)");
        assert!(Columns::default().with_overrides("colour=x").unwrap_err().0.contains("unknown role \"colour\""));
        let bad = read(Format::Table, &file("t.txt", "q"), None, &Columns::default()).unwrap_err();
        assert_eq!(bad.0, "t.txt: benchmark files are read from .json, .jsonl or .csv");
        let corpus = "id,title,text\nd1,Cliffs,Heath grows on the cliffs.\n";
        let qs = "{\"question\": \"What grows?\", \"document\": \"d1\", \"evidence\": \"[\\\"Heath grows\\\"]\"}\n";
        let d = read(Format::Table, &file("q.jsonl", qs), Some(&file("c.csv", corpus)), &Columns::default()).unwrap();
        assert_eq!((d.documents[0].title.as_str(), d.questions[0].gold[0].as_str()), ("Cliffs", "d1"));
        assert_eq!(d.questions[0].evidence, ["Heath grows"]);
    }

    #[test]
    fn evidence_lands_in_the_chunks_that_quote_it() {
        let chunks = [
            (10, "It was a dark night. The warden locked the gate at nine and went home along the shore."),
            (11, "along the shore. In the morning the gate stood open and the sheep were gone from the fold."),
            (12, "Nothing else happened that year in the village by the sea."),
        ];
        let index = EvidenceIndex::new(chunks);
        // Quoted whole, across a boundary, not at all.
        assert_eq!(index.locate(&["The warden locked the gate at nine".into()], None), [10]);
        let across =
            ["The warden locked the gate at nine and went home along the shore. In the morning the gate stood open"
                .to_string()];
        assert_eq!(index.locate(&across, None), [10, 11]);
        assert_eq!(index.locate(&across, Some(&HashSet::from([11, 12]))), [11]);
        assert!(index.locate(&["Pirates came from the north with swords".into()], None).is_empty());
        assert!(index.locate(&[], None).is_empty());
    }

    #[test]
    fn lightrag_files_read_back_with_its_own_pattern() {
        let qs = ["How does the warden\nfeel?", "Why **salt**?"];
        let text = lightrag_queries(qs);
        // reproduce/Step_3.py and batch_eval.py: re.findall(r"- Question \d+: (.+)", data)
        let re = regex::Regex::new(r"- Question \d+: (.+)").unwrap();
        let found: Vec<&str> = re.captures_iter(&text).map(|c| c.get(1).unwrap().as_str()).collect();
        assert_eq!(found, ["How does the warden feel?", "Why **salt**?"]);
        let results: Value =
            serde_json::from_str(&lightrag_results([(qs[0], "Calm.\nVery."), (qs[1], "Taste.")])).unwrap();
        assert_eq!(results[0]["result"], "Calm.\nVery.");
        assert_eq!(results[1]["query"], "Why **salt**?");
    }
}

//! A benchmark's corpus and questions into a project (`engine::datasets`
//! reads the files): the documents the project lacks are chunked with its
//! settings and stored, the questions become an `imported` set whose source
//! chunks are those quoting the question's evidence — or all chunks of its
//! gold documents where it has none — so MAP, nDCG and Recall score
//! retrieval against the benchmark's own ground truth. One transaction.

use std::collections::{HashMap, HashSet};

use engine::corpus::{ImportLimits, NewDocument};
use engine::datasets::{Dataset, EvidenceIndex, Format};
use serde::{Deserialize, Serialize};
use types::QuestionWriter;

use super::documents::{prepare as prepare_documents, DocumentSteps};
use super::projects::{chunk_settings, get_project};
use super::questions::{NewQuestion, QuestionSteps};
use super::{begin, on_db, Db};
use crate::error::{AppError, AppResult};

/// What an import did, every question and document accounted for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetReport {
    pub format: String,
    /// The new question set (none when the file held documents only).
    pub set_id: Option<i64>,
    pub documents_added: i64,
    /// The file's documents the project already held (same text).
    pub documents_present: i64,
    /// Documents the file gave more than once (kept once).
    pub documents_repeated: i64,
    pub chunks_added: i64,
    pub questions: i64,
    pub with_reference: i64,
    /// Questions per category, in first-seen order.
    pub categories: Vec<(String, i64)>,
    /// Questions whose evidence was found in their documents' chunks.
    pub evidence_located: i64,
    /// Questions with evidence found nowhere (their gold documents' chunks
    /// are their sources).
    pub evidence_unlocated: i64,
    /// Questions with no source chunks (no gold document found, no evidence
    /// located): MAP, nDCG and Recall skip them.
    pub without_sources: i64,
    /// Gold document names found neither in the file nor in the project (up
    /// to 5).
    pub unknown_documents: Vec<String>,
}

impl DatasetReport {
    pub fn line(&self) -> String {
        let mut parts = vec![format!(
            "{} documents added ({} chunks), {} already in the project",
            self.documents_added, self.chunks_added, self.documents_present
        )];
        if self.documents_repeated > 0 {
            parts.push(format!("{} repeated in the file", self.documents_repeated));
        }
        if self.questions > 0 {
            let per: Vec<String> = self.categories.iter().map(|(c, n)| format!("{n} {c}")).collect();
            parts.push(format!(
                "{} questions ({}{} with a reference answer)",
                self.questions,
                if per.is_empty() { String::new() } else { format!("{}; ", per.join(", ")) },
                self.with_reference
            ));
            parts.push(format!(
                "evidence located for {}, not found for {}; {} without source chunks",
                self.evidence_located, self.evidence_unlocated, self.without_sources
            ));
        } else {
            parts.push("no questions".into());
        }
        if !self.unknown_documents.is_empty() {
            parts.push(format!("unknown documents: {}", self.unknown_documents.join(", ")));
        }
        parts.join("; ")
    }
}

/// Stores `data` (read from `file`, with `corpus`) in the project; the
/// questions become a set named `name`.
pub async fn import(
    pool: &Db,
    project_id: i64,
    format: Format,
    data: Dataset,
    files: (&str, Option<&str>),
    name: &str,
    limits: &ImportLimits,
) -> AppResult<DatasetReport> {
    let project = get_project(pool, project_id).await?;
    let settings = chunk_settings(&project);
    on_db!(pool, |db| {
        let existing: Vec<(i64, String, String)> =
            sqlx::query_as("SELECT id, content_hash, title FROM documents WHERE project_id = $1 ORDER BY id")
                .bind(project_id)
                .fetch_all(db)
                .await?;
        let by_hash: HashMap<&str, i64> = existing.iter().map(|(id, h, _)| (h.as_str(), *id)).collect();
        let mut by_title: HashMap<&str, i64> = HashMap::new();
        for (id, _, title) in &existing {
            by_title.entry(title.as_str()).or_insert(*id);
        }

        // The file's documents: those the project has by text, and the new.
        let mut key_hash: Vec<(String, String)> = Vec::new();
        let mut fresh: Vec<NewDocument> = Vec::new();
        let mut fresh_hashes = HashSet::new();
        let mut present = 0;
        for d in data.documents {
            let doc = NewDocument::new(
                d.title,
                format!("{}:{} {}", format.name(), files.1.unwrap_or(files.0), d.key),
                d.text,
                serde_json::Map::from_iter([
                    ("dataset_key".to_string(), d.key.clone().into()),
                    ("imported_from".to_string(), format.name().into()),
                ]),
            );
            key_hash.push((d.key, doc.content_hash.clone()));
            if by_hash.contains_key(doc.content_hash.as_str()) {
                present += 1;
            } else if fresh_hashes.insert(doc.content_hash.clone()) {
                fresh.push(doc);
            }
        }
        let room = (limits.max_documents as i64 - project.summary.documents).max(0) as usize;
        if fresh.len() > room {
            return Err(AppError::Invalid(format!(
                "the file adds {} documents; the project holds {} of at most {}: nothing was imported",
                fresh.len(),
                project.summary.documents,
                limits.max_documents
            )));
        }

        let prepared = prepare_documents(fresh, settings).await?;

        let mut tx = begin(db).await?;
        let mut chunks_added = 0;
        let mut new_by_hash: HashMap<&str, i64> = HashMap::new();
        for p in &prepared {
            let id = tx.insert_document(project_id, p).await?;
            chunks_added += p.chunks.len() as i64;
            new_by_hash.insert(p.doc.content_hash.as_str(), id);
        }
        // A key names the document with its text (two keys, one text: one document).
        let key_doc: HashMap<String, i64> = key_hash
            .into_iter()
            .filter_map(|(key, hash)| {
                by_hash.get(hash.as_str()).or_else(|| new_by_hash.get(hash.as_str())).map(|id| (key, *id))
            })
            .collect();

        let mut report = DatasetReport {
            format: format.name().into(),
            set_id: None,
            documents_added: prepared.len() as i64,
            documents_present: present,
            documents_repeated: data.repeated_documents as i64,
            chunks_added,
            questions: data.questions.len() as i64,
            with_reference: 0,
            categories: Vec::new(),
            evidence_located: 0,
            evidence_unlocated: 0,
            without_sources: 0,
            unknown_documents: Vec::new(),
        };

        if !data.questions.is_empty() {
            let chunks: Vec<(i64, i64, String)> = sqlx::query_as(
                "SELECT id, document_id, body FROM chunks WHERE project_id = $1 ORDER BY document_id, idx",
            )
            .bind(project_id)
            .fetch_all(&mut *tx)
            .await?;
            let mut doc_chunks: HashMap<i64, Vec<i64>> = HashMap::new();
            for (id, doc, _) in &chunks {
                doc_chunks.entry(*doc).or_default().push(*id);
            }
            let resolve = |key: &str| key_doc.get(key).copied().or_else(|| by_title.get(key).copied());
            let any_evidence = data.questions.iter().any(|q| !q.evidence.is_empty());
            // Where every question with evidence names a gold document that
            // has chunks, its evidence is sought only there: index those.
            let evidence_docs: Option<HashSet<i64>> = data
                .questions
                .iter()
                .filter(|q| !q.evidence.is_empty())
                .map(|q| {
                    let docs: Vec<i64> =
                        q.gold.iter().filter_map(|k| resolve(k)).filter(|d| doc_chunks.contains_key(d)).collect();
                    (!docs.is_empty()).then_some(docs)
                })
                .collect::<Option<Vec<_>>>()
                .map(|v| v.into_iter().flatten().collect());
            let index = any_evidence.then(|| {
                EvidenceIndex::new(
                    chunks
                        .iter()
                        .filter(|(_, doc, _)| evidence_docs.as_ref().map_or(true, |d| d.contains(doc)))
                        .map(|(id, _, body)| (*id, body.as_str())),
                )
            });

            let mut categories: Vec<(String, i64)> = Vec::new();
            let mut questions = Vec::with_capacity(data.questions.len());
            for q in data.questions {
                let mut gold_chunks: Vec<i64> = Vec::new();
                for key in &q.gold {
                    match resolve(key) {
                        Some(doc) => gold_chunks.extend(doc_chunks.get(&doc).into_iter().flatten()),
                        None => {
                            if report.unknown_documents.len() < 5 && !report.unknown_documents.contains(key) {
                                report.unknown_documents.push(key.clone());
                            }
                        }
                    }
                }
                let mut sources = Vec::new();
                if let (Some(index), false) = (&index, q.evidence.is_empty()) {
                    let within: HashSet<i64> = gold_chunks.iter().copied().collect();
                    sources = index.locate(&q.evidence, (!within.is_empty()).then_some(&within));
                    if sources.is_empty() {
                        report.evidence_unlocated += 1;
                    } else {
                        report.evidence_located += 1;
                    }
                }
                if sources.is_empty() {
                    sources = gold_chunks;
                }
                if sources.is_empty() {
                    report.without_sources += 1;
                }
                if q.reference.is_some() {
                    report.with_reference += 1;
                }
                if let Some(c) = &q.category {
                    match categories.iter_mut().find(|(k, _)| k == c) {
                        Some((_, n)) => *n += 1,
                        None => categories.push((c.clone(), 1)),
                    }
                }
                questions.push(NewQuestion {
                    question: q.question,
                    category: q.category,
                    reference_answer: q.reference,
                    source_chunk_ids: sources,
                    evidence: q.evidence,
                    generator: types::Generator::new(match format {
                        Format::UltraDomain => QuestionWriter::UltraDomain,
                        Format::GraphRagBench => QuestionWriter::GraphRagBench,
                        Format::MultiHopRag => QuestionWriter::MultiHopRag,
                        Format::Table => QuestionWriter::Table,
                    }),
                    ..Default::default()
                });
            }
            report.categories = categories;
            let parameters = serde_json::json!({
                "file": files.0,
                "corpus": files.1,
                "format": format.name(),
            });
            let set: i64 = sqlx::query_scalar(
                "INSERT INTO question_sets (project_id, kind, name, parameters) VALUES ($1, 'imported', $2, $3) RETURNING id",
            )
            .bind(project_id)
            .bind(name)
            .bind(parameters.to_string())
            .fetch_one(&mut *tx)
            .await?;
            tx.insert_questions(set, &questions).await?;
            report.set_id = Some(set);
        }
        tx.commit().await?;
        Ok(report)
    })
}

/// The title of each chunk's document, for the chunks given.
pub async fn chunk_titles(pool: &Db, project_id: i64, chunk_ids: &HashSet<i64>) -> AppResult<HashMap<i64, String>> {
    let (Some(&low), Some(&high)) = (chunk_ids.iter().min(), chunk_ids.iter().max()) else {
        return Ok(HashMap::new());
    };
    // The ids' range, not the project's every chunk (an answer set's
    // contexts cluster: the chunks of the documents a benchmark added).
    on_db!(pool, |db| {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT c.id, d.title FROM chunks c JOIN documents d ON d.id = c.document_id \
             WHERE c.project_id = $1 AND c.id BETWEEN $2 AND $3",
        )
        .bind(project_id)
        .bind(low)
        .bind(high)
        .fetch_all(db)
        .await?;
        Ok(rows.into_iter().filter(|(id, _)| chunk_ids.contains(id)).collect())
    })
}

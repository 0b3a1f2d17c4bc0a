//! Microsoft GraphRAG's output folder (1.0 and later): Parquet tables
//! `documents`, `text_units`, `entities`, `relationships`, and when the
//! index made them `communities` and `community_reports`.
//!
//! Rows are read with the `parquet` crate's record API (no Arrow: the
//! tables are small and row-shaped) and turned into JSON objects, so a
//! column is found by name whatever Parquet type pandas gave it. Entities
//! are named by `title`, relationships by their ends' titles, text units
//! name their documents (`document_ids`, a list; `document_id` in 3.x) and
//! entities and relationships name their text units (`text_unit_ids`).
//! Communities list their entities by id (`entity_ids`) at a `level`; the
//! reports carry `title`, `summary` and `rank` (GraphRAG's rating).

use std::collections::HashMap;

use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::{Map, Value};

use super::{
    ForeignChunk, ForeignCommunity, ForeignDocument, ForeignEntity, ForeignFiles, ForeignIndex, ForeignRelation,
    Format, Refused,
};

type Row = Map<String, Value>;

/// A table's rows as JSON objects, refusing when a column it needs is absent.
fn table(files: &ForeignFiles, name: &str, needs: &[&str]) -> Result<Vec<Row>, Refused> {
    let bytes = files.get(name).ok_or_else(|| Refused(format!("{name} is missing")))?;
    let reader = SerializedFileReader::new(bytes::Bytes::copy_from_slice(bytes))
        .map_err(|e| Refused(format!("{name} is not a Parquet file Assay can read: {e}")))?;
    let columns: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields()
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    let missing: Vec<&str> = needs.iter().copied().filter(|n| !columns.iter().any(|c| c == n)).collect();
    if !missing.is_empty() {
        return Err(Refused(format!(
            "{name} has no column {}: it is not from a Microsoft GraphRAG version Assay knows (1.0 or later); its columns are {}",
            missing.join(", "),
            columns.join(", ")
        )));
    }
    let rows = reader.get_row_iter(None).map_err(|e| Refused(format!("{name}: {e}")))?;
    rows.map(|r| match r {
        Ok(row) => match row.to_json_value() {
            Value::Object(m) => Ok(m),
            _ => Err(Refused(format!("{name}: a row that is not a record"))),
        },
        Err(e) => Err(Refused(format!("{name}: {e}"))),
    })
    .collect()
}

fn text(row: &Row, col: &str) -> String {
    match row.get(col) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// A list column's strings (numbers as text); a lone string as one item.
fn list(row: &Row, col: &str) -> Vec<String> {
    match row.get(col) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                v => Some(v.to_string()),
            })
            .collect(),
        Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

fn number(row: &Row, col: &str) -> Option<f64> {
    match row.get(col) {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

pub fn read(files: &ForeignFiles) -> Result<ForeignIndex, Refused> {
    let mut files_read: Vec<String> =
        ["documents.parquet", "text_units.parquet", "entities.parquet", "relationships.parquet"]
            .map(String::from)
            .into();
    let docs = table(files, "documents.parquet", &["id", "text"])?;
    let units = table(files, "text_units.parquet", &["id", "text"])?;
    let ents = table(files, "entities.parquet", &["id", "title", "description", "text_unit_ids"])?;
    let rels = table(files, "relationships.parquet", &["source", "target", "description", "text_unit_ids"])?;

    let documents: Vec<ForeignDocument> = docs
        .iter()
        .map(|d| {
            let id = text(d, "id");
            let title = Some(text(d, "title")).filter(|t| !t.trim().is_empty()).unwrap_or_else(|| id.clone());
            ForeignDocument { id, title, text: text(d, "text") }
        })
        .collect();
    // A unit's document: its own column (3.x: document_id; earlier:
    // document_ids), else the document whose text_unit_ids list it.
    let mut unit_doc: HashMap<String, (String, usize)> = HashMap::new();
    for d in &docs {
        for (i, u) in list(d, "text_unit_ids").into_iter().enumerate() {
            unit_doc.entry(u).or_insert((text(d, "id"), i));
        }
    }
    let mut chunks = Vec::with_capacity(units.len());
    for (i, u) in units.iter().enumerate() {
        let id = text(u, "id");
        let own = list(u, "document_id").into_iter().chain(list(u, "document_ids")).next();
        let (document, order) = match (own, unit_doc.get(&id)) {
            (Some(doc), Some((_, order))) => (doc, *order),
            (Some(doc), None) => (doc, i),
            (None, Some((doc, order))) => (doc.clone(), *order),
            (None, None) => {
                return Err(Refused(format!(
                    "text_units.parquet: text unit {id} names no document, and no document lists it"
                )))
            }
        };
        if !documents.iter().any(|d| d.id == document) {
            return Err(Refused(format!("text_units.parquet: text unit {id} belongs to document {document}, which documents.parquet does not hold")));
        }
        let tokens = number(u, "n_tokens").map(|n| n as usize);
        chunks.push(ForeignChunk { id, document, order, text: text(u, "text"), tokens });
    }
    chunks.sort_by(|a, b| (&a.document, a.order, &a.id).cmp(&(&b.document, b.order, &b.id)));

    let mut title_of: HashMap<String, String> = HashMap::new();
    let entities: Vec<ForeignEntity> = ents
        .iter()
        .map(|e| {
            title_of.insert(text(e, "id"), text(e, "title"));
            ForeignEntity {
                name: text(e, "title"),
                kind: Some(text(e, "type").to_lowercase())
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or_else(|| "unknown".into()),
                descriptions: Some(text(e, "description")).filter(|d| !d.trim().is_empty()).into_iter().collect(),
                chunks: list(e, "text_unit_ids"),
            }
        })
        .collect();
    let relations: Vec<ForeignRelation> = rels
        .iter()
        .map(|r| ForeignRelation {
            source: text(r, "source"),
            target: text(r, "target"),
            descriptions: Some(text(r, "description")).filter(|d| !d.trim().is_empty()).into_iter().collect(),
            keywords: Vec::new(),
            weight: number(r, "weight").unwrap_or(1.0),
            chunks: list(r, "text_unit_ids"),
        })
        .collect();

    let mut communities = Vec::new();
    if files.get("communities.parquet").is_some() {
        files_read.push("communities.parquet".into());
        let rows = table(files, "communities.parquet", &["community", "level", "entity_ids"])?;
        let mut reports: HashMap<String, Row> = HashMap::new();
        if files.get("community_reports.parquet").is_some() {
            files_read.push("community_reports.parquet".into());
            for r in table(files, "community_reports.parquet", &["community", "title", "summary"])? {
                reports.insert(text(&r, "community"), r);
            }
        }
        for c in &rows {
            let id = text(c, "community");
            let report = reports.get(&id);
            communities.push(ForeignCommunity {
                level: number(c, "level").unwrap_or(0.0) as i64,
                entities: list(c, "entity_ids").iter().filter_map(|e| title_of.get(e).cloned()).collect(),
                title: report.map(|r| text(r, "title")).unwrap_or_else(|| text(c, "title")),
                summary: report.map(|r| text(r, "summary")).unwrap_or_default(),
                rating: report.and_then(|r| number(r, "rank")).unwrap_or(0.0),
                id,
            });
        }
        communities.sort_by(|a, b| {
            (a.level, a.id.parse::<i64>().unwrap_or(i64::MAX), &a.id).cmp(&(
                b.level,
                b.id.parse::<i64>().unwrap_or(i64::MAX),
                &b.id,
            ))
        });
    }
    let version = format!(
        "1.0 or later: {}",
        if units.first().is_some_and(|u| u.contains_key("document_id")) {
            "text units with document_id (3.x)"
        } else {
            "text units with document_ids"
        }
    );
    Ok(ForeignIndex {
        format: Format::GraphRag,
        version,
        files_read,
        documents,
        chunks,
        entities,
        relations,
        communities,
    })
}

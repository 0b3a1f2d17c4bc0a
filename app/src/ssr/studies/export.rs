//! A study's ratings as CSV.

use crate::ssr::store::Db;

use super::*;
use crate::error::internal;
use crate::error::{AppError, AppResult};
use crate::ssr::store;
/// Every rating as CSV: rater, item, question id, source, level, dimension, score.
pub async fn ratings_csv(pool: &Db, id: i64) -> AppResult<String> {
    let v = view(pool, id).await?;
    let rows = store::studies::csv_rows(pool, id).await?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| internal("writing a CSV table", e);
    w.write_record([
        "rater",
        "item",
        "question_id",
        "source",
        "level",
        "attention_check",
        "dimension",
        "score",
        "rated_at",
    ])
    .map_err(err)?;
    for (rater, item, q, source, level, attention, d, score, at, choices) in rows {
        let dimension = v.dimensions.get(d as usize);
        let dim = dimension.map_or(d.to_string(), |x| x.name.clone());
        // A category pick is written as the category's path.
        let score = match dimension {
            Some(x) if x.choice => {
                parse_choices(choices.as_deref()).get(score as usize).map_or(score.to_string(), |c| c.path.clone())
            }
            _ => score.to_string(),
        };
        w.write_record([
            rater.to_string(),
            item.to_string(),
            q.map_or(String::new(), |q| q.to_string()),
            source,
            level.unwrap_or_default(),
            attention.map_or(String::new(), |a| a.to_string()),
            dim,
            score,
            at,
        ])
        .map_err(err)?;
    }
    String::from_utf8(w.into_inner().map_err(|e| internal("writing a CSV table", e))?).map_err(|_| AppError::Internal)
}

/// An imported study's figures as its authors' scripts compute them, as
/// CSV: figure, Assay's value as published, the authors' file's value,
/// the standard reading, where the figure comes from (full precision).
pub async fn judging_csv(pool: &Db, id: i64) -> AppResult<String> {
    let Some(view) = imported_view(pool, id).await? else {
        return Err(AppError::NotFound(format!("study {id} was not imported from the authors' annotations")));
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| internal("writing a CSV table", e);
    w.write_record(["figure", "as_published", "authors_file", "standard", "source"]).map_err(err)?;
    let num = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for r in view.rows {
        w.write_record([r.figure, num(r.as_published), num(r.authors), num(r.standard), r.source]).map_err(err)?;
    }
    String::from_utf8(w.into_inner().map_err(|e| internal("writing a CSV table", e))?).map_err(|_| AppError::Internal)
}

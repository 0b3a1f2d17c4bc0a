//! Secrets written before they were kept apart: a database
//! made before `jobs.secrets` holds a method's token in its job's
//! parameters, its answer set's parameters and generated name, an
//! experiment's manifest, and an error that named the address. When such a
//! database opens, each secret is moved where a new run puts it — the job's
//! own column, redactions in the parameters and the manifest — and every
//! free text that held it shows the redaction instead.
//!
//! A read finds whether there is anything to do; the write (one
//! transaction) runs only then, so an up-to-date database opens without
//! taking the write lock.

use engine::secret::{self, Secrets};
use serde_json::Value;

use super::{begin, on_db, Db};
use crate::error::AppResult;

/// The free texts that may hold a secret written before: what a reader of
/// the object sees, by table and column.
const FREE_TEXT: [(&str, &str); 8] = [
    ("answer_sets", "name"),
    ("jobs", "error"),
    ("job_items", "error"),
    ("experiments", "name"),
    ("experiments", "manifest"),
    ("experiments", "plan"),
    ("experiments", "error"),
    ("question_sets", "name"),
];

/// What the backfill changed: rows whose settings had secrets moved out,
/// and free texts rewritten.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Backfilled {
    pub settings: u64,
    pub texts: u64,
}

/// Secrets in JSON settings (a job's or an answer set's parameters), by row.
fn in_settings(rows: Vec<(i64, String)>) -> Vec<(i64, Value, Secrets)> {
    rows.into_iter()
        .filter_map(|(id, text)| {
            let value: Value = serde_json::from_str(&text).ok()?;
            let (shown, secrets) = secret::split(&value);
            (!secrets.is_empty()).then_some((id, shown, secrets))
        })
        .collect()
}

/// Moves every secret of an old database out of what readers see (see the
/// module's text); nothing when there is none.
pub async fn secrets(pool: &Db) -> AppResult<Backfilled> {
    on_db!(pool, |db| {
        const JOBS: &str = "SELECT id, parameters FROM jobs WHERE secrets IS NULL";
        const SETS: &str = "SELECT id, parameters FROM answer_sets";
        const MANIFESTS: &str = "SELECT id, manifest FROM experiments";
        let manifests_with_secrets = |rows: Vec<(i64, String)>| -> Vec<(i64, String, Secrets)> {
            rows.into_iter()
                .filter_map(|(id, text)| {
                    let found = secret::toml_secrets(&text);
                    (!found.is_empty()).then(|| (id, secret::redact_toml(&text), found))
                })
                .collect()
        };
        // The read: most opens end here.
        let any = !in_settings(sqlx::query_as(JOBS).fetch_all(db).await?).is_empty()
            || !in_settings(sqlx::query_as(SETS).fetch_all(db).await?).is_empty()
            || !manifests_with_secrets(sqlx::query_as(MANIFESTS).fetch_all(db).await?).is_empty();
        if !any {
            return Ok(Backfilled::default());
        }
        let mut tx = begin(db).await?;
        let mut done = Backfilled::default();
        let mut scrubs = Vec::new();
        for (id, shown, found) in in_settings(sqlx::query_as(JOBS).fetch_all(&mut *tx).await?) {
            sqlx::query("UPDATE jobs SET parameters = $1, secrets = $2 WHERE id = $3")
                .bind(shown.to_string())
                .bind(found.to_stored())
                .bind(id)
                .execute(&mut *tx)
                .await?;
            scrubs.extend(found.scrubs());
            done.settings += 1;
        }
        for (id, shown, found) in in_settings(sqlx::query_as(SETS).fetch_all(&mut *tx).await?) {
            sqlx::query("UPDATE answer_sets SET parameters = $1 WHERE id = $2")
                .bind(shown.to_string())
                .bind(id)
                .execute(&mut *tx)
                .await?;
            scrubs.extend(found.scrubs());
            done.settings += 1;
        }
        for (id, shown, found) in manifests_with_secrets(sqlx::query_as(MANIFESTS).fetch_all(&mut *tx).await?) {
            sqlx::query("UPDATE experiments SET manifest = $1 WHERE id = $2")
                .bind(shown)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            scrubs.extend(found.scrubs());
            done.settings += 1;
        }
        // Longest first, so an address is replaced whole before its parts.
        scrubs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
        scrubs.dedup();
        for (found, shown) in &scrubs {
            for (table, column) in FREE_TEXT {
                let sql = format!(
                    "UPDATE {table} SET {column} = REPLACE({column}, $1, $2) WHERE {column} <> REPLACE({column}, $1, $2)"
                );
                done.texts += sqlx::query(&sql).bind(found).bind(shown).execute(&mut *tx).await?.rows_affected();
            }
        }
        tx.commit().await?;
        tracing::warn!(
            settings = done.settings,
            texts = done.texts,
            "secrets written before they were kept apart moved out of what readers see"
        );
        Ok(done)
    })
}

//! `assay db copy`: every row of one database into another — SQLite to
//! PostgreSQL when a lab moves to a team server, PostgreSQL to SQLite to
//! take a project home — with the counts verified table by table.
//!
//! Tables are copied in an order that satisfies their foreign keys, with
//! their ids, in one transaction on the target (a failure leaves it empty),
//! streamed from the source in batches. The target must be empty: a copy
//! never merges two databases' ids. PostgreSQL's id sequences are moved past
//! the copied ids afterwards.

use futures_util::TryStreamExt;
use sqlx::{QueryBuilder, Row};

use super::{on_db, Db};
use crate::error::{AppError, AppResult};

/// A column's type, as both schemas store it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Real,
    Text,
    Bool,
    Bytes,
}
use Kind::*;

/// A table as the copy reads and writes it.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    /// Its primary key: the order rows are read in.
    pub key: &'static [&'static str],
    /// Whether `id` is PostgreSQL's identity column (its sequence is moved on).
    pub identity: bool,
    pub columns: &'static [(&'static str, Kind)],
}

/// One value of a row, whichever database it came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
    Bytes(Vec<u8>),
}

/// Rows per INSERT: llm_calls has 22 columns, SQLite takes 32,766 values
/// per statement and PostgreSQL 65,535.
const BATCH: usize = 500;

/// Every table Assay keeps (not sqlx's migration log), parents before
/// children. A test checks this list against both schemas.
pub const TABLES: &[Table] = &[
    Table {
        name: "projects",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("name", Text),
            ("created_at", Text),
            ("chunk_tokens", Int),
            ("chunk_overlap", Int),
            ("tokenizer", Text),
            ("question_hierarchy", Text),
        ],
    },
    Table {
        name: "users",
        key: &["id"],
        identity: true,
        columns: &[("id", Int), ("name", Text), ("password_hash", Text), ("role", Text), ("created_at", Text)],
    },
    Table {
        name: "sessions",
        key: &["token_hash"],
        identity: false,
        columns: &[("token_hash", Text), ("user_id", Int), ("created_at", Text), ("expires_at", Text)],
    },
    Table {
        name: "login_limits",
        key: &["account"],
        identity: false,
        columns: &[("account", Text), ("failures", Int), ("window_start", Text)],
    },
    Table {
        name: "login_devices",
        key: &["token_hash"],
        identity: false,
        columns: &[
            ("token_hash", Text),
            ("user_id", Int),
            ("created_at", Text),
            ("failures", Int),
            ("window_start", Text),
        ],
    },
    Table {
        name: "settings",
        key: &["key"],
        identity: false,
        columns: &[("key", Text), ("value", Text), ("updated_at", Text)],
    },
    Table {
        name: "project_members",
        key: &["user_id", "project_id"],
        identity: false,
        columns: &[("user_id", Int), ("project_id", Int), ("access", Text)],
    },
    Table {
        name: "documents",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("title", Text),
            ("source", Text),
            ("body", Text),
            ("metadata", Text),
            ("content_hash", Text),
            ("chars", Int),
            ("tokens", Int),
            ("created_at", Text),
        ],
    },
    Table {
        name: "chunks",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("document_id", Int),
            ("idx", Int),
            ("start_byte", Int),
            ("end_byte", Int),
            ("tokens", Int),
            ("body", Text),
            ("external_id", Text),
        ],
    },
    Table {
        name: "chunk_vectors",
        key: &["chunk_id", "model"],
        identity: false,
        columns: &[("chunk_id", Int), ("model", Text), ("vector", Bytes)],
    },
    Table {
        name: "jobs",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("kind", Text),
            ("parameters", Text),
            ("secrets", Text),
            ("status", Text),
            ("total", Int),
            ("done", Int),
            ("failed", Int),
            ("tokens", Int),
            ("cost_usd", Real),
            ("error", Text),
            ("created_at", Text),
            ("started_at", Text),
            ("finished_at", Text),
            ("runner_pid", Int),
            ("heartbeat", Text),
            ("retrying", Bool),
            ("worked_secs", Real),
            ("run_started_at", Text),
        ],
    },
    Table {
        name: "job_queue",
        key: &["job_id", "key"],
        identity: false,
        columns: &[
            ("job_id", Int),
            ("phase", Text),
            ("key", Text),
            ("seq", Int),
            ("worker", Text),
            ("heartbeat", Text),
        ],
    },
    Table {
        name: "job_phases",
        key: &["job_id", "phase"],
        identity: false,
        columns: &[("job_id", Int), ("phase", Text), ("llm", Text)],
    },
    Table {
        name: "llm_batches",
        key: &["job_id", "batch_id"],
        identity: false,
        columns: &[
            ("job_id", Int),
            ("batch_id", Text),
            ("requests", Text),
            ("read", Bool),
            ("status", Text),
            ("completed", Int),
            ("failed", Int),
            ("total", Int),
        ],
    },
    Table {
        name: "llm_slots",
        key: &["slot"],
        identity: false,
        columns: &[("slot", Int), ("holder", Text), ("expires_at", Text)],
    },
    Table {
        name: "llm_cache",
        key: &["key"],
        identity: false,
        columns: &[
            ("key", Text),
            ("provider", Text),
            ("model", Text),
            ("reply", Text),
            ("prompt_tokens", Int),
            ("completion_tokens", Int),
            ("created_at", Text),
            ("truncated", Bool),
        ],
    },
    Table {
        name: "llm_messages",
        key: &["hash"],
        identity: false,
        columns: &[("hash", Text), ("messages", Text), ("messages_z", Bytes)],
    },
    Table { name: "llm_replies", key: &["hash"], identity: false, columns: &[("hash", Text), ("reply", Text)] },
    Table {
        name: "llm_calls",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("job_id", Int),
            ("item", Text),
            ("purpose", Text),
            ("provider", Text),
            ("base_url", Text),
            ("model", Text),
            ("sample", Int),
            ("cache_key", Text),
            ("prompt_hash", Text),
            ("messages", Text),
            ("reply", Text),
            ("error", Text),
            ("prompt_tokens", Int),
            ("completion_tokens", Int),
            ("cached_tokens", Int),
            ("cost_usd", Real),
            ("latency_ms", Int),
            ("attempts", Int),
            ("cached", Bool),
            ("created_at", Text),
            ("messages_hash", Text),
            ("truncated", Bool),
            ("reply_hash", Text),
        ],
    },
    Table {
        name: "job_items",
        key: &["job_id", "key"],
        identity: false,
        columns: &[
            ("job_id", Int),
            ("key", Text),
            ("status", Text),
            ("result", Text),
            ("error", Text),
            ("tokens", Int),
            ("cost_usd", Real),
            ("finished_at", Text),
            ("result_z", Bytes),
        ],
    },
    Table {
        name: "graph_nodes",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("job_id", Int),
            ("key", Text),
            ("name", Text),
            ("type", Text),
            ("description", Text),
            ("source_chunks", Text),
            ("community", Int),
            ("x", Real),
            ("y", Real),
        ],
    },
    Table {
        name: "graph_edges",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("source_id", Int),
            ("target_id", Int),
            ("description", Text),
            ("keywords", Text),
            ("weight", Real),
            ("source_chunks", Text),
        ],
    },
    Table {
        name: "community_reports",
        key: &["project_id", "community"],
        identity: false,
        columns: &[
            ("project_id", Int),
            ("community", Int),
            ("job_id", Int),
            ("title", Text),
            ("summary", Text),
            ("rating", Real),
        ],
    },
    Table {
        name: "graph_imports",
        key: &["project_id"],
        identity: false,
        columns: &[("project_id", Int), ("format", Text), ("version", Text), ("report", Text), ("created_at", Text)],
    },
    Table {
        name: "question_sets",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("job_id", Int),
            ("kind", Text),
            ("name", Text),
            ("parameters", Text),
            ("created_at", Text),
        ],
    },
    Table {
        name: "questions",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("set_id", Int),
            ("idx", Int),
            ("question", Text),
            ("level", Text),
            ("category", Text),
            ("expertise", Text),
            ("reference_answer", Text),
            ("source_chunk_ids", Text),
            ("nodes", Text),
            ("edges", Text),
            ("walk", Text),
            ("generator", Text),
            ("prompt_hash", Text),
            ("seed", Int),
            ("context_chunk_ids", Text),
            ("evidence", Text),
        ],
    },
    Table {
        name: "answer_sets",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("question_set_id", Int),
            ("job_id", Int),
            ("name", Text),
            ("method", Text),
            ("parameters", Text),
            ("created_at", Text),
        ],
    },
    Table {
        name: "answers",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("answer_set_id", Int),
            ("question_id", Int),
            ("answer", Text),
            ("contexts", Text),
            ("prompt_tokens", Int),
            ("completion_tokens", Int),
            ("cost_usd", Real),
            ("llm_calls", Int),
            ("cached_calls", Int),
            ("retrieval_ms", Real),
            ("query_ms", Real),
            ("target_words", Int),
            ("truncated", Bool),
            ("context_chars", Int),
            ("contexts_z", Bytes),
        ],
    },
    Table {
        name: "evaluations",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("question_set_id", Int),
            ("job_id", Int),
            ("name", Text),
            ("settings", Text),
            ("answer_sets", Text),
            ("pairs", Text),
            ("judge", Text),
            ("created_at", Text),
        ],
    },
    Table {
        name: "metrics_runs",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("question_set_id", Int),
            ("job_id", Int),
            ("answer_sets", Text),
            ("k", Int),
            ("bins", Int),
            ("report", Text),
            ("created_at", Text),
        ],
    },
    Table {
        name: "text_vectors",
        key: &["model", "hash"],
        identity: false,
        columns: &[("model", Text), ("hash", Text), ("vector", Bytes)],
    },
    Table {
        name: "experiment_stages",
        key: &["project_id", "fingerprint"],
        identity: false,
        columns: &[
            ("project_id", Int),
            ("fingerprint", Text),
            ("object_id", Int),
            ("job_id", Int),
            ("created_at", Text),
        ],
    },
    Table {
        name: "experiments",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("name", Text),
            ("manifest", Text),
            ("plan", Text),
            ("llm", Text),
            ("offline", Bool),
            ("status", Text),
            ("stage", Text),
            ("job_id", Int),
            ("jobs", Text),
            ("outcome", Text),
            ("error", Text),
            ("created_at", Text),
            ("finished_at", Text),
        ],
    },
    Table {
        name: "studies",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("name", Text),
            ("intro", Text),
            ("corpus_summary", Text),
            ("dimensions", Text),
            ("draws", Text),
            ("seed", Int),
            ("target_raters", Int),
            ("is_open", Bool),
            ("created_at", Text),
            ("kind", Text),
            ("answer_source", Text),
            ("imported", Text),
        ],
    },
    Table {
        name: "study_items",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("study_id", Int),
            ("idx", Int),
            ("question_id", Int),
            ("text", Text),
            ("source", Text),
            ("level", Text),
            ("attention", Int),
            ("answer", Text),
            ("context", Text),
            ("category", Text),
            ("choices", Text),
        ],
    },
    Table {
        name: "study_links",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("study_id", Int),
            ("token_hash", Text),
            ("kind", Text),
            ("label", Text),
            ("revoked", Bool),
            ("expires_at", Text),
            ("created_at", Text),
        ],
    },
    Table {
        name: "raters",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("study_id", Int),
            ("link_id", Int),
            ("token_hash", Text),
            ("order_seed", Int),
            ("started_at", Text),
            ("finished_at", Text),
        ],
    },
    Table {
        name: "ratings",
        key: &["rater_id", "item_id", "dimension"],
        identity: false,
        columns: &[("rater_id", Int), ("item_id", Int), ("dimension", Int), ("score", Int), ("rated_at", Text)],
    },
    Table {
        name: "shares",
        key: &["id"],
        identity: true,
        columns: &[
            ("id", Int),
            ("project_id", Int),
            ("token_hash", Text),
            ("page_kind", Text),
            ("page_id", Int),
            ("revoked", Bool),
            ("expires_at", Text),
            ("created_at", Text),
        ],
    },
];

/// Reads a row's columns as `table` declares them (a macro: the row's type
/// is each driver's own).
macro_rules! read_row {
    ($row:expr, $table:expr) => {{
        let row = &$row;
        let mut values = Vec::with_capacity($table.columns.len());
        for (i, (_, kind)) in $table.columns.iter().enumerate() {
            let value = match kind {
                Int => row.try_get::<Option<i64>, _>(i)?.map(Value::Int),
                Real => row.try_get::<Option<f64>, _>(i)?.map(Value::Real),
                Text => row.try_get::<Option<String>, _>(i)?.map(Value::Text),
                Bool => row.try_get::<Option<bool>, _>(i)?.map(Value::Bool),
                Bytes => row.try_get::<Option<Vec<u8>>, _>(i)?.map(Value::Bytes),
            };
            values.push(value.unwrap_or(Value::Null));
        }
        values
    }};
}

fn select(table: &Table) -> String {
    let columns: Vec<&str> = table.columns.iter().map(|(c, _)| *c).collect();
    format!("SELECT {} FROM {} ORDER BY {}", columns.join(", "), table.name, table.key.join(", "))
}

/// Rows per table in [`TABLES`]' order, read on one connection (inside a
/// transaction: its snapshot).
macro_rules! counts_on {
    ($conn:expr) => {{
        let mut out: Vec<(&'static str, i64)> = Vec::with_capacity(TABLES.len());
        for t in TABLES {
            let sql = format!("SELECT COUNT(*) FROM {}", t.name);
            let n: i64 = sqlx::query_scalar(&sql).fetch_one(&mut *$conn).await?;
            out.push((t.name, n));
        }
        out
    }};
}

/// Rows per table, in [`TABLES`]' order.
pub async fn counts(pool: &Db) -> AppResult<Vec<(&'static str, i64)>> {
    on_db!(pool, |db| {
        let mut conn = db.acquire().await?;
        Ok(counts_on!(conn))
    })
}

/// Every row of `table`, in key order (for comparing two databases).
pub async fn rows(pool: &Db, table: &Table) -> AppResult<Vec<Vec<Value>>> {
    let sql = select(table);
    let mut out = Vec::new();
    on_db!(pool, |db| {
        let mut stream = sqlx::query(&sql).fetch(db);
        while let Some(row) = stream.try_next().await? {
            out.push(read_row!(row, table));
        }
    });
    Ok(out)
}

super::connection_steps! {
    trait CopySteps {
        async fn insert_rows(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<(), sqlx::Error> {
            if rows.is_empty() {
                return Ok(());
            }
            let columns: Vec<&str> = table.columns.iter().map(|(c, _)| *c).collect();
            let mut q = QueryBuilder::new(format!("INSERT INTO {} ({}) ", table.name, columns.join(", ")));
            q.push_values(rows, |mut b, row| {
                for (value, (_, kind)) in row.iter().zip(table.columns) {
                    match (value, kind) {
                        (Value::Int(v), _) => b.push_bind(*v),
                        (Value::Real(v), _) => b.push_bind(*v),
                        (Value::Text(v), _) => b.push_bind(v.clone()),
                        (Value::Bool(v), _) => b.push_bind(*v),
                        (Value::Bytes(v), _) => b.push_bind(v.clone()),
                        (Value::Null, Int) => b.push_bind(None::<i64>),
                        (Value::Null, Real) => b.push_bind(None::<f64>),
                        (Value::Null, Text) => b.push_bind(None::<String>),
                        (Value::Null, Bool) => b.push_bind(None::<bool>),
                        (Value::Null, Bytes) => b.push_bind(None::<Vec<u8>>),
                    };
                }
            });
            q.build().execute(&mut *self).await?;
            Ok(())
        }
    }
}

/// Copies every row of `from` into `to` (which must hold none), then
/// checks that each table holds as many rows in both; `progress` hears
/// each table's name and rows as it is done. Returns the rows per table.
///
/// The source is read in one snapshot, so a database in use (raters
/// rating, people logging in) copies as it was at one moment: SQLite in
/// one read transaction (WAL keeps its snapshot while others write),
/// PostgreSQL in one `REPEATABLE READ READ ONLY` transaction. The counts
/// are compared inside both transactions, before the target's commit: on
/// any failure the target's transaction rolls back and it stays empty.
///
/// Text PostgreSQL cannot store (U+0000, which an SQLite database written
/// by early versions may hold) is found row by row: without `strip_nul` the
/// copy is refused naming the rows (nothing is written); with it each such
/// character is removed and the rows are listed in [`Copied::repaired`].
pub async fn copy(from: &Db, to: &Db, strip_nul: bool, progress: &(dyn Fn(&str, i64) + Sync)) -> AppResult<Copied> {
    let occupied: Vec<String> =
        counts(to).await?.into_iter().filter(|(_, n)| *n > 0).map(|(t, n)| format!("{t} ({n})")).collect();
    if !occupied.is_empty() {
        return Err(AppError::Conflict(format!(
            "the target database is not empty: {}; copy into a new, empty database",
            occupied.join(", ")
        )));
    }
    on_db!(to, |target| {
        on_db!(from, |source| {
            let mut snapshot = source.begin().await?;
            if from.is_postgres() {
                sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    .execute(&mut *snapshot)
                    .await?;
            }
            // The snapshot starts at its first read.
            let before = counts_on!(snapshot);
            let mut tx = super::begin(target).await?;
            let mut nul_rows: Vec<String> = Vec::new();
            for table in TABLES {
                let sql = select(table);
                let mut batch: Vec<Vec<Value>> = Vec::with_capacity(BATCH);
                let mut copied = 0i64;
                let mut stream = sqlx::query(&sql).fetch(&mut *snapshot);
                while let Some(row) = stream.try_next().await? {
                    let mut values = read_row!(row, table);
                    let with_nul = nul_columns(&mut values, table, strip_nul);
                    if !with_nul.is_empty() {
                        nul_rows.push(describe_row(table, &values, &with_nul));
                    }
                    if !strip_nul && !nul_rows.is_empty() {
                        // The copy is refused below: the rest is read only
                        // to name every such row (nothing more is written,
                        // so no row misses one it refers to).
                        continue;
                    }
                    batch.push(values);
                    if batch.len() == BATCH {
                        tx.insert_rows(table, &batch).await.map_err(|e| copy_error(table, e))?;
                        copied += batch.len() as i64;
                        batch.clear();
                    }
                }
                drop(stream);
                if !strip_nul && !nul_rows.is_empty() {
                    continue;
                }
                tx.insert_rows(table, &batch).await.map_err(|e| copy_error(table, e))?;
                copied += batch.len() as i64;
                progress(table.name, copied);
            }
            if !strip_nul && !nul_rows.is_empty() {
                // `tx` rolls back as it is dropped: the target stays empty.
                return Err(AppError::Invalid(format!(
                    "{} rows hold U+0000 (a NUL character), which PostgreSQL cannot store: {}; nothing was \
                     written. Copy again with --strip-nul to remove those characters (the rows are listed)",
                    nul_rows.len(),
                    shown_rows(&nul_rows)
                )));
            }
            if to.is_postgres() {
                for table in TABLES.iter().filter(|t| t.identity) {
                    let sql = format!(
                        "SELECT setval(pg_get_serial_sequence('{0}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM {0}",
                        table.name
                    );
                    sqlx::query(&sql).execute(&mut *tx).await?;
                }
            }
            let after = counts_on!(tx);
            let differ: Vec<String> = before
                .iter()
                .zip(&after)
                .filter(|(a, b)| a.1 != b.1)
                .map(|((t, a), (_, b))| format!("{t}: {a} in the source, {b} copied"))
                .collect();
            if !differ.is_empty() {
                // `tx` rolls back as it is dropped: the target stays empty.
                return Err(AppError::Failed(format!(
                    "the copy's counts differ: {}; nothing was written",
                    differ.join("; ")
                )));
            }
            tx.commit().await?;
            snapshot.rollback().await?;
            Ok(Copied { tables: after, repaired: nul_rows })
        })
    })
}

/// What a copy wrote.
#[derive(Debug)]
pub struct Copied {
    /// Rows per table, in [`TABLES`]' order (checked against the source's).
    pub tables: Vec<(&'static str, i64)>,
    /// The rows whose U+0000 characters were removed (`--strip-nul`): the
    /// table, the row's key and the columns.
    pub repaired: Vec<String>,
}

/// The text columns of `values` that hold U+0000, each such character
/// removed when `strip`.
fn nul_columns(values: &mut [Value], table: &Table, strip: bool) -> Vec<&'static str> {
    let mut found = Vec::new();
    for (value, (column, _)) in values.iter_mut().zip(table.columns) {
        if let Value::Text(text) = value {
            if text.contains('\0') {
                found.push(*column);
                if strip {
                    text.retain(|c| c != '\0');
                }
            }
        }
    }
    found
}

/// "documents id=3 (text, title)": a row by its key, and the columns named.
fn describe_row(table: &Table, values: &[Value], columns: &[&str]) -> String {
    let key: Vec<String> = table
        .key
        .iter()
        .filter_map(|k| {
            let i = table.columns.iter().position(|(c, _)| c == k)?;
            Some(match &values[i] {
                Value::Int(v) => format!("{k}={v}"),
                Value::Text(v) => format!("{k}={v:?}"),
                other => format!("{k}={other:?}"),
            })
        })
        .collect();
    format!("{} {} ({})", table.name, key.join(" "), columns.join(", "))
}

/// The first rows of a list, and how many more.
pub fn shown_rows(rows: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut out = rows.iter().take(SHOWN).cloned().collect::<Vec<_>>().join("; ");
    if rows.len() > SHOWN {
        out.push_str(&format!("; and {} more", rows.len() - SHOWN));
    }
    out
}

fn copy_error(table: &Table, e: sqlx::Error) -> AppError {
    AppError::Failed(format!("copying {}: {}", table.name, super::db_reason(&e)))
}

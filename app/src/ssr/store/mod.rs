//! All of Assay's SQL. Server functions, the upload route, the CLI and
//! tests call these functions; nothing else in the workspace writes SQL.
//!
//! Architecture invariant: a change is one transaction. An upload either
//! stores all of its accepted documents with their chunks or nothing, so a
//! failure part-way never leaves a half-written corpus.

pub mod access;
pub mod answers;
pub mod backfill;
pub mod calls;
pub mod copy;
pub mod datasets;
pub mod evaluations;
pub mod experiments;
pub mod foreign;
pub mod graph;
pub mod jobs;
pub mod metrics;
pub mod questions;
pub mod queue;
pub mod settings;
pub mod shares;
pub mod slots;
pub mod studies;
pub mod users;
pub mod vectors;

use std::path::Path;
use std::str::FromStr;

use engine::chunk::{chunk_text, ChunkSettings, Tokenizer};
use engine::corpus::{import_files, ImportLimits, NewDocument};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{FromRow, SqlitePool};

use crate::error::{AppError, AppResult};
use crate::model::*;

/// The database Assay keeps everything in: an SQLite file (the embedded
/// default: one process, one laptop) or a PostgreSQL server (a team's:
/// several `assay serve` and `assay worker` processes on one database).
///
/// Every store function takes a `&Db` and is written once: its body runs
/// under [`on_db!`], which type-checks it against each driver, so the same
/// statements go to SQLite and to PostgreSQL. The statements are written
/// in the SQL both accept (`$1` parameters, `ON CONFLICT`, `RETURNING`,
/// `CAST(SUM(..) AS BIGINT)`); PostgreSQL's schema defines `strftime` and
/// `julianday` as SQLite has them (migrations/postgres), and the few
/// statements that cannot be shared pick their dialect with [`pick`].
#[derive(Clone, Debug)]
pub enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Db {
    /// The SQLite pool, for code that is SQLite's alone (tests that read a
    /// file directly, the storage-failure tests).
    pub fn sqlite(&self) -> Option<&SqlitePool> {
        match self {
            Db::Sqlite(pool) => Some(pool),
            Db::Postgres(_) => None,
        }
    }

    pub fn postgres(&self) -> Option<&PgPool> {
        match self {
            Db::Postgres(pool) => Some(pool),
            Db::Sqlite(_) => None,
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }

    /// "SQLite" or "PostgreSQL", for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "SQLite",
            Db::Postgres(_) => "PostgreSQL",
        }
    }

    pub async fn close(&self) {
        match self {
            Db::Sqlite(pool) => pool.close().await,
            Db::Postgres(pool) => pool.close().await,
        }
    }
}

impl From<SqlitePool> for Db {
    fn from(pool: SqlitePool) -> Db {
        Db::Sqlite(pool)
    }
}

impl From<PgPool> for Db {
    fn from(pool: PgPool) -> Db {
        Db::Postgres(pool)
    }
}

/// Runs `$body` with `$db` bound to the database's own pool: the body is
/// compiled once per driver, so one text serves SQLite and PostgreSQL.
/// `$pool` (a `&Db`) stays in scope for calls to other store functions.
#[macro_export]
macro_rules! on_db {
    ($pool:expr, |$db:ident| $body:expr) => {
        match $pool {
            $crate::ssr::store::Db::Sqlite($db) => $body,
            $crate::ssr::store::Db::Postgres($db) => $body,
        }
    };
}
pub use crate::on_db;

/// What differs between the two pools that a shared body needs: the write
/// transaction's start, and the dialect of the few statements that differ.
pub trait Backend: Sync {
    type Database: sqlx::Database;
    const POSTGRES: bool;
    fn begin_write(
        &self,
    ) -> impl std::future::Future<Output = Result<sqlx::Transaction<'static, Self::Database>, sqlx::Error>> + Send;
}

impl Backend for SqlitePool {
    type Database = sqlx::Sqlite;
    const POSTGRES: bool = false;
    /// `BEGIN IMMEDIATE` takes SQLite's write lock at the start, waiting up
    /// to [`BUSY_TIMEOUT`] for another writer: a deferred transaction that
    /// has read cannot wait for the lock when it first writes (SQLite
    /// answers SQLITE_BUSY at once, whatever the timeout), which is how a
    /// long job used to fail with "database is locked" on an idle machine.
    fn begin_write(
        &self,
    ) -> impl std::future::Future<Output = Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error>> + Send {
        self.begin_with("BEGIN IMMEDIATE")
    }
}

impl Backend for PgPool {
    type Database = sqlx::Postgres;
    const POSTGRES: bool = true;
    /// PostgreSQL's rows lock as they are written; READ COMMITTED, its default.
    fn begin_write(
        &self,
    ) -> impl std::future::Future<Output = Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error>> + Send {
        self.begin()
    }
}

/// A write transaction. Every write transaction of the store begins here.
pub async fn begin<P: Backend>(pool: &P) -> Result<sqlx::Transaction<'static, P::Database>, sqlx::Error> {
    pool.begin_write().await
}

/// The statement for this pool's dialect, where SQLite's and PostgreSQL's
/// cannot be one text (JSON functions, upserts of a whole row).
pub fn pick<P: Backend>(_pool: &P, sqlite: &'static str, postgres: &'static str) -> &'static str {
    if P::POSTGRES {
        postgres
    } else {
        sqlite
    }
}

/// Steps of a transaction shared by several store functions, written once
/// and implemented for both drivers' connections: inside a transaction
/// `tx`, `tx.insert_chunks(…)` runs the step on whichever database `tx`
/// belongs to. (A generic function over `sqlx::Database` would need a
/// bound per bound type, and its future is not provably `Send`.)
macro_rules! connection_steps {
    ($vis:vis trait $trait:ident {
        $( $(#[$meta:meta])* async fn $name:ident(&mut $self:ident $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty $body:block )*
    }) => {
        $vis trait $trait {
            $( $(#[$meta])* fn $name(&mut $self $(, $arg: $ty)*) -> impl std::future::Future<Output = $ret> + Send; )*
        }
        impl $trait for sqlx::SqliteConnection {
            $( async fn $name(&mut $self $(, $arg: $ty)*) -> $ret $body )*
        }
        impl $trait for sqlx::PgConnection {
            $( async fn $name(&mut $self $(, $arg: $ty)*) -> $ret $body )*
        }
    };
}
pub(crate) use connection_steps;

/// `$from, $from+1, …`: `n` numbered parameters for an `IN (…)` list.
pub fn placeholders(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// How long a statement waits for another connection's write lock before
/// SQLite answers "database is locked".
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Opens the database `target` names — a `postgres://` (or
/// `postgresql://`) URL, else an SQLite file path (created if needed) —
/// and applies its migrations.
pub async fn open_target(target: &str) -> Result<Db, OpenError> {
    open_target_with(target, PG_CONNECTIONS).await
}

/// [`open_target`], with at most `connections` to PostgreSQL (SQLite's
/// pool is its own).
pub async fn open_target_with(target: &str, connections: u32) -> Result<Db, OpenError> {
    if is_postgres_url(target) {
        open_postgres(target, connections).await
    } else {
        ready(Db::Sqlite(open_sqlite(Path::new(target), None).await?)).await
    }
}

/// A database just migrated, with the secrets an older version wrote where
/// readers see them moved apart ([`backfill::secrets`]).
async fn ready(db: Db) -> Result<Db, OpenError> {
    backfill::secrets(&db).await.map_err(|e| OpenError::Backfill(e.to_string()))?;
    Ok(db)
}

pub fn is_postgres_url(target: &str) -> bool {
    let lower = target.trim().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// Connections per process to PostgreSQL by default (`--db-connections`;
/// the server allows 100 by default: a web process and six workers).
pub const PG_CONNECTIONS: u32 = 12;

/// Connects to PostgreSQL at `url` with at most `connections` and applies
/// its migrations.
pub async fn open_postgres(url: &str, connections: u32) -> Result<Db, OpenError> {
    let options = PgConnectOptions::from_str(url.trim())?.application_name("assay");
    let pool = PgPoolOptions::new()
        .max_connections(connections.max(2))
        .acquire_timeout(BUSY_TIMEOUT)
        .connect_with(options)
        .await?;
    sqlx::migrate!("../migrations/postgres").run(&pool).await?;
    ready(Db::Postgres(pool)).await
}

/// Opens (creating if needed) the SQLite file at `path` and applies the
/// migrations. The parent directory is created too.
pub async fn open(path: &Path) -> Result<Db, OpenError> {
    ready(Db::Sqlite(open_sqlite(path, None).await?)).await
}

/// [`open`], with every connection limited to `max_pages` pages of the
/// database (`PRAGMA max_page_count`): a full disk, made to order, for the
/// tests that prove nothing acknowledged is lost when writes fail.
pub async fn open_with(path: &Path, max_pages: Option<u64>) -> Result<Db, OpenError> {
    ready(Db::Sqlite(open_sqlite(path, max_pages).await?)).await
}

async fn open_sqlite(path: &Path, max_pages: Option<u64>) -> Result<SqlitePool, OpenError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| OpenError::Dir(dir.display().to_string(), e))?;
    }
    let mut options = SqliteConnectOptions::from_str("sqlite:")?
        .filename(path)
        .create_if_missing(true)
        .foreign_keys(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT);
    if let Some(pages) = max_pages {
        options = options.pragma("max_page_count", pages.to_string());
    }
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .after_release(|conn, _| Box::pin(async move { clean(conn).await }))
        .connect_with(options)
        .await?;
    sqlx::migrate!("../migrations/sqlite").run(&pool).await?;
    Ok(pool)
}

/// Whether a connection may go back to the pool: only outside any
/// transaction. A failed statement, COMMIT or ROLLBACK (a full disk, an
/// I/O error) can leave SQLite inside a transaction, or sqlx counting one
/// SQLite already rolled back; the next user of such a connection would
/// write into a transaction nobody commits (and see rows nobody else
/// does). Such a connection is closed and the pool opens a fresh one.
async fn clean(conn: &mut sqlx::SqliteConnection) -> Result<bool, sqlx::Error> {
    use sqlx::TransactionManager;
    let depth = sqlx::sqlite::SqliteTransactionManager::get_transaction_depth(conn);
    let mut handle = conn.lock_handle().await?;
    // SAFETY: the handle is locked for us, so no other thread uses the
    // connection; sqlite3_get_autocommit only reads its state.
    let autocommit = unsafe { libsqlite3_sys::sqlite3_get_autocommit(handle.as_raw_handle().as_ptr()) } != 0;
    if depth != 0 || !autocommit {
        tracing::warn!(depth, autocommit, "a connection left inside a transaction is closed, not reused");
        return Ok(false);
    }
    Ok(true)
}

/// What the database said, for a message: the database's own text for a
/// database error ("database is locked", "database or disk is full"),
/// else the kind of failure (a pool timeout, a closed pool).
pub fn db_reason(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Database(d) => d.message().to_string(),
        sqlx::Error::PoolTimedOut => "no database connection became free in time".into(),
        sqlx::Error::PoolClosed => "the database was closed".into(),
        other => other.to_string(),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot create the database directory {0}: {1}")]
    Dir(String, std::io::Error),
    #[error("cannot open the database: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("cannot apply database migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("cannot move the secrets an earlier version stored out of what readers see: {0}")]
    Backfill(String),
}

// ---------------------------------------------------------------- projects

#[derive(FromRow)]
struct ProjectRow {
    id: i64,
    name: String,
    created_at: String,
    chunk_tokens: i64,
    chunk_overlap: i64,
    tokenizer: String,
    documents: i64,
    tokens: i64,
    chunks: i64,
}

impl ProjectRow {
    fn summary(&self) -> ProjectSummary {
        ProjectSummary {
            id: self.id,
            name: self.name.clone(),
            created_at: self.created_at.clone(),
            documents: self.documents,
            tokens: self.tokens,
            chunks: self.chunks,
        }
    }

    fn view(self) -> ProjectView {
        ProjectView {
            summary: self.summary(),
            chunk_tokens: self.chunk_tokens,
            chunk_overlap: self.chunk_overlap,
            tokenizer: self.tokenizer,
        }
    }
}

const PROJECT_SELECT: &str = "SELECT p.id, p.name, p.created_at, p.chunk_tokens, p.chunk_overlap, p.tokenizer,
       (SELECT COUNT(*) FROM documents d WHERE d.project_id = p.id) AS documents,
       (SELECT CAST(COALESCE(SUM(d.tokens), 0) AS BIGINT) FROM documents d WHERE d.project_id = p.id) AS tokens,
       (SELECT COUNT(*) FROM chunks c WHERE c.project_id = p.id) AS chunks
  FROM projects p";

pub async fn list_projects(pool: &Db) -> AppResult<Vec<ProjectSummary>> {
    on_db!(pool, |db| {
        let rows: Vec<ProjectRow> =
            sqlx::query_as(&format!("{PROJECT_SELECT} ORDER BY p.created_at DESC, p.id DESC")).fetch_all(db).await?;
        Ok(rows.iter().map(ProjectRow::summary).collect())
    })
}

/// A project's corpus as an estimate reads it: documents, their tokens,
/// chunks and the chunks' tokens added up.
pub async fn corpus_size(pool: &Db, p: &ProjectView) -> AppResult<engine::experiment::CorpusSize> {
    let project_id = p.summary.id;
    let chunk_tokens: i64 = on_db!(pool, |db| {
        sqlx::query_scalar::<_, i64>(
            "SELECT CAST(COALESCE(SUM(c.tokens), 0) AS BIGINT) FROM chunks c
               JOIN documents d ON d.id = c.document_id WHERE d.project_id = $1",
        )
        .bind(project_id)
        .fetch_one(db)
        .await?
    });
    Ok(engine::experiment::CorpusSize {
        documents: p.summary.documents.max(0) as usize,
        tokens: p.summary.tokens.max(0) as u64,
        chunks: p.summary.chunks.max(0) as u64,
        chunk_tokens: chunk_tokens.max(0) as u64,
    })
}

pub async fn get_project(pool: &Db, id: i64) -> AppResult<ProjectView> {
    on_db!(pool, |db| {
        let row: Option<ProjectRow> =
            sqlx::query_as(&format!("{PROJECT_SELECT} WHERE p.id = $1")).bind(id).fetch_optional(db).await?;
        row.map(ProjectRow::view).ok_or_else(|| AppError::NotFound(format!("no project with id {id}")))
    })
}

/// Finds a project by id or by name (names are matched case-insensitively).
pub async fn find_project(pool: &Db, name_or_id: &str) -> AppResult<ProjectView> {
    on_db!(pool, |db| {
        let row: Option<ProjectRow> =
            sqlx::query_as(&format!("{PROJECT_SELECT} WHERE lower(p.name) = lower($1) ORDER BY p.id LIMIT 1"))
                .bind(name_or_id.trim())
                .fetch_optional(db)
                .await?;
        match (row, name_or_id.trim().parse::<i64>()) {
            (Some(row), _) => Ok(row.view()),
            (None, Ok(id)) => get_project(pool, id).await,
            (None, Err(_)) => Err(AppError::NotFound(format!("no project named \"{}\"", name_or_id.trim()))),
        }
    })
}

/// Project names: 1 to 100 characters, not blank, no control characters.
pub fn validate_name(name: &str) -> AppResult<String> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AppError::Invalid("a project needs a name".into()));
    }
    if name.chars().count() > 100 {
        return Err(AppError::Invalid("a project name has at most 100 characters".into()));
    }
    if name.chars().any(char::is_control) {
        return Err(AppError::Invalid("a project name cannot contain control characters".into()));
    }
    Ok(name.to_string())
}

fn name_conflict(e: sqlx::Error, name: &str) -> AppError {
    match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => {
            AppError::Conflict(format!("a project named \"{name}\" already exists"))
        }
        _ => e.into(),
    }
}

pub async fn create_project(pool: &Db, name: &str, settings: &ChunkSettings) -> AppResult<ProjectView> {
    on_db!(pool, |db| {
        let name = validate_name(name)?;
        settings.validate().map_err(|e| AppError::Invalid(e.to_string()))?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO projects (name, chunk_tokens, chunk_overlap, tokenizer) VALUES ($1, $2, $3, $4) RETURNING id",
        )
        .bind(&name)
        .bind(settings.chunk_tokens as i64)
        .bind(settings.overlap_tokens as i64)
        .bind(settings.tokenizer.name())
        .fetch_one(db)
        .await
        .map_err(|e| name_conflict(e, &name))?;
        get_project(pool, id).await
    })
}

pub async fn rename_project(pool: &Db, id: i64, name: &str) -> AppResult<ProjectView> {
    on_db!(pool, |db| {
        let name = validate_name(name)?;
        let done = sqlx::query("UPDATE projects SET name = $1 WHERE id = $2")
            .bind(&name)
            .bind(id)
            .execute(db)
            .await
            .map_err(|e| name_conflict(e, &name))?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("no project with id {id}")));
        }
        get_project(pool, id).await
    })
}

/// Deletes a project and everything it owns.
pub async fn delete_project(pool: &Db, id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("DELETE FROM projects WHERE id = $1").bind(id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("no project with id {id}")));
        }
        Ok(())
    })
}

fn chunk_settings(project: &ProjectView) -> ChunkSettings {
    ChunkSettings {
        chunk_tokens: project.chunk_tokens as usize,
        overlap_tokens: project.chunk_overlap as usize,
        tokenizer: Tokenizer::parse(&project.tokenizer).unwrap_or_default(),
    }
}

// --------------------------------------------------------------- documents

#[derive(FromRow)]
struct DocumentRow {
    id: i64,
    project_id: i64,
    title: String,
    source: String,
    chars: i64,
    tokens: i64,
    chunks: i64,
}

impl DocumentRow {
    fn summary(&self) -> DocumentSummary {
        DocumentSummary {
            id: self.id,
            title: self.title.clone(),
            source: self.source.clone(),
            chars: self.chars,
            tokens: self.tokens,
            chunks: self.chunks,
        }
    }
}

const DOCUMENT_SELECT: &str = "SELECT d.id, d.project_id, d.title, d.source, d.chars, d.tokens,
       (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id) AS chunks
  FROM documents d";

/// Page `page` (from 1, clamped) of a project's documents, oldest first.
pub async fn list_documents(pool: &Db, project_id: i64, page: i64) -> AppResult<crate::model::DocumentsPage> {
    use crate::model::DOCUMENTS_PER_PAGE;
    on_db!(pool, |db| {
        let (total,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM documents WHERE project_id = $1")
            .bind(project_id)
            .fetch_one(db)
            .await?;
        let (page, pages) = crate::model::paging(total, DOCUMENTS_PER_PAGE, page);
        let rows: Vec<DocumentRow> = sqlx::query_as(&format!(
            "{DOCUMENT_SELECT} WHERE d.project_id = $1 ORDER BY d.id LIMIT {DOCUMENTS_PER_PAGE} OFFSET {}",
            (page - 1) * DOCUMENTS_PER_PAGE
        ))
        .bind(project_id)
        .fetch_all(db)
        .await?;
        Ok(crate::model::DocumentsPage {
            documents: rows.iter().map(DocumentRow::summary).collect(),
            total,
            page,
            pages,
        })
    })
}

/// Where a text's parts end (byte offsets): each at most `max` characters,
/// cut after the last line break in its second half, else after the last
/// space there, else at `max` characters.
pub fn text_parts(text: &str, max: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        let Some((limit, _)) = rest.char_indices().nth(max) else {
            ends.push(text.len());
            break;
        };
        let window = &rest[..limit];
        let half = limit / 2;
        let cut = window
            .rfind('\n')
            .filter(|&i| i >= half)
            .or_else(|| window.rfind(' ').filter(|&i| i >= half))
            .map_or(limit, |i| i + 1);
        start += cut;
        ends.push(start);
    }
    if ends.is_empty() {
        ends.push(0);
    }
    ends
}

/// A document with part `part` (from 1, clamped) of its text.
pub async fn get_document(pool: &Db, id: i64, part: i64) -> AppResult<DocumentView> {
    on_db!(pool, |db| {
        #[derive(FromRow)]
        struct Full {
            #[sqlx(flatten)]
            row: DocumentRow,
            body: String,
            metadata: String,
            created_at: String,
        }
        let full: Option<Full> = sqlx::query_as(
            "SELECT d.id, d.project_id, d.title, d.source, d.chars, d.tokens, d.body, d.metadata, d.created_at,
                (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id) AS chunks
           FROM documents d WHERE d.id = $1",
        )
        .bind(id)
        .fetch_optional(db)
        .await?;
        let full = full.ok_or_else(|| AppError::NotFound(format!("no document with id {id}")))?;
        let metadata = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&full.metadata)
            .ok()
            .filter(|m| !m.is_empty())
            .and_then(|m| serde_json::to_string_pretty(&m).ok());
        let ends = text_parts(&full.body, crate::model::DOCUMENT_PART_CHARS);
        let parts = ends.len() as i64;
        let part = part.clamp(1, parts);
        let from = if part == 1 { 0 } else { ends[part as usize - 2] };
        let text = full.body[from..ends[part as usize - 1]].to_string();
        Ok(DocumentView {
            summary: full.row.summary(),
            project_id: full.row.project_id,
            text,
            part,
            parts,
            metadata,
            created_at: full.created_at,
        })
    })
}

pub async fn delete_document(pool: &Db, id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        let project: Option<i64> = sqlx::query_scalar("DELETE FROM documents WHERE id = $1 RETURNING project_id")
            .bind(id)
            .fetch_optional(db)
            .await?;
        project.ok_or_else(|| AppError::NotFound(format!("no document with id {id}")))
    })
}

/// A document with its chunks, computed before the transaction opens.
struct Prepared {
    doc: NewDocument,
    tokens: usize,
    chunks: Vec<engine::chunk::Chunk>,
}

/// Token counts and chunks of new documents, with the project's settings:
/// CPU work, kept off the async workers.
async fn prepare_documents(docs: Vec<NewDocument>, settings: ChunkSettings) -> AppResult<Vec<Prepared>> {
    tokio::task::spawn_blocking(move || {
        docs.into_iter()
            .map(|doc| {
                let tokens = settings.tokenizer.count(&doc.text);
                let chunks = chunk_text(&doc.text, &settings).expect("project settings are validated on write");
                Prepared { doc, tokens, chunks }
            })
            .collect()
    })
    .await
    .map_err(|e| {
        tracing::error!(error = %e, "chunking task failed");
        AppError::Internal
    })
}

/// Imports uploaded files into a project: parses them (engine), drops
/// documents whose text the project already holds, chunks the rest and
/// stores them all in one transaction. Refused files come back in
/// `skipped`; nothing already stored is touched.
pub async fn add_files(
    pool: &Db,
    project_id: i64,
    files: &[(String, Vec<u8>)],
    limits: &ImportLimits,
) -> AppResult<UploadReport> {
    on_db!(pool, |db| {
        let project = get_project(pool, project_id).await?;
        let settings = chunk_settings(&project);
        let outcome = import_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())), limits);
        let mut skipped: Vec<Skipped> =
            outcome.rejected.into_iter().map(|r| Skipped { file: r.file, reason: r.reason }).collect();

        let existing: Vec<(String, String)> =
            sqlx::query_as("SELECT content_hash, title FROM documents WHERE project_id = $1")
                .bind(project_id)
                .fetch_all(db)
                .await?;
        let existing: std::collections::HashMap<String, String> = existing.into_iter().collect();
        let mut fresh = Vec::new();
        for doc in outcome.documents {
            match existing.get(&doc.content_hash) {
                Some(title) => skipped.push(Skipped {
                    file: doc.source.clone(),
                    reason: format!("duplicate: the project already has this text as \"{title}\""),
                }),
                None => fresh.push(doc),
            }
        }
        let room = (limits.max_documents as i64 - project.summary.documents).max(0) as usize;
        if fresh.len() > room {
            for doc in fresh.drain(room..) {
                skipped.push(Skipped {
                    file: doc.source,
                    reason: format!("over the limit of {} documents per project", limits.max_documents),
                });
            }
        }

        let prepared = prepare_documents(fresh, settings).await?;

        let mut tx = begin(db).await?;
        for p in &prepared {
            tx.insert_document(project_id, p).await?;
        }
        tx.commit().await?;

        let after = get_project(pool, project_id).await?;
        Ok(UploadReport {
            added: prepared.len() as i64,
            skipped,
            documents: after.summary.documents,
            tokens: after.summary.tokens,
            chunks: after.summary.chunks,
        })
    })
}

connection_steps! {
    trait DocumentSteps {
        /// Stores a document and its chunks; its id.
        async fn insert_document(&mut self, project_id: i64, p: &Prepared) -> AppResult<i64> {
            let doc = &p.doc;
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO documents (project_id, title, source, body, metadata, content_hash, chars, tokens)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .bind(project_id)
            .bind(&doc.title)
            .bind(&doc.source)
            .bind(&doc.text)
            .bind(serde_json::Value::Object(doc.metadata.clone()).to_string())
            .bind(&doc.content_hash)
            .bind(doc.text.chars().count() as i64)
            .bind(p.tokens as i64)
            .fetch_one(&mut *self)
            .await?;
            self.insert_chunks(project_id, id, &doc.text, &p.chunks).await?;
            Ok(id)
        }

        async fn insert_chunks(
            &mut self,
            project_id: i64,
            document_id: i64,
            text: &str,
            chunks: &[engine::chunk::Chunk],
        ) -> AppResult<()> {
            for c in chunks {
                sqlx::query(
                    "INSERT INTO chunks (project_id, document_id, idx, start_byte, end_byte, tokens, body)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(project_id)
                .bind(document_id)
                .bind(c.index as i64)
                .bind(c.start as i64)
                .bind(c.end as i64)
                .bind(c.tokens as i64)
                .bind(&text[c.start..c.end])
                .execute(&mut *self)
                .await?;
            }
            Ok(())
        }
    }
}

/// Changes a project's chunking and re-chunks every document, in one transaction.
pub async fn set_chunk_settings(pool: &Db, project_id: i64, settings: ChunkSettings) -> AppResult<ProjectView> {
    on_db!(pool, |db| {
        settings.validate().map_err(|e| AppError::Invalid(e.to_string()))?;
        get_project(pool, project_id).await?;
        if let Some(import) = foreign::import_record(pool, project_id).await? {
            return Err(AppError::Conflict(format!(
                "this project's chunks came with an imported {} index, whose graph names them: re-chunking would cut the graph from its sources",
                import.program
            )));
        }
        if foreign::has_foreign_chunks(pool, project_id).await? {
            return Err(AppError::Conflict(
                "this project's chunks came with an imported index: re-chunking would cut them from that system's ids"
                    .into(),
            ));
        }
        let docs: Vec<(i64, String)> = sqlx::query_as("SELECT id, body FROM documents WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(db)
            .await?;
        let rechunked = tokio::task::spawn_blocking(move || {
            docs.into_iter()
                .map(|(id, body)| {
                    let chunks = chunk_text(&body, &settings).expect("validated above");
                    (id, body, chunks)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "re-chunking task failed");
            AppError::Internal
        })?;
        let mut tx = begin(db).await?;
        sqlx::query("UPDATE projects SET chunk_tokens = $1, chunk_overlap = $2, tokenizer = $3 WHERE id = $4")
            .bind(settings.chunk_tokens as i64)
            .bind(settings.overlap_tokens as i64)
            .bind(settings.tokenizer.name())
            .bind(project_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM chunks WHERE project_id = $1").bind(project_id).execute(&mut *tx).await?;
        for (id, body, chunks) in &rechunked {
            sqlx::query("UPDATE documents SET tokens = $1 WHERE id = $2")
                .bind(settings.tokenizer.count(body) as i64)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            tx.insert_chunks(project_id, *id, body, chunks).await?;
        }
        tx.commit().await?;
        get_project(pool, project_id).await
    })
}

/// A document's chunks in order: (id, index, tokens, text).
/// Page `page` (from 1, clamped) of a document's chunks; with `chunk`, the
/// page holding that chunk of the document instead.
pub async fn document_chunks(
    pool: &Db,
    document_id: i64,
    page: i64,
    chunk: Option<i64>,
) -> AppResult<crate::model::ChunksPage> {
    use crate::model::CHUNKS_PER_PAGE;
    on_db!(pool, |db| {
        let (total,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM chunks WHERE document_id = $1")
            .bind(document_id)
            .fetch_one(db)
            .await?;
        let (_, pages) = crate::model::paging(total, CHUNKS_PER_PAGE, 1);
        let page = match chunk {
            Some(c) => {
                let idx: Option<i64> = sqlx::query_scalar("SELECT idx FROM chunks WHERE id = $1 AND document_id = $2")
                    .bind(c)
                    .bind(document_id)
                    .fetch_optional(db)
                    .await?;
                idx.map_or(page, |i| i / CHUNKS_PER_PAGE + 1)
            }
            None => page,
        }
        .clamp(1, pages);
        let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!(
            "SELECT id, idx, tokens, body FROM chunks WHERE document_id = $1 ORDER BY idx LIMIT {CHUNKS_PER_PAGE} OFFSET {}",
            (page - 1) * CHUNKS_PER_PAGE
        ))
        .bind(document_id)
        .fetch_all(db)
        .await?;
        let chunks =
            rows.into_iter().map(|(id, idx, tokens, text)| crate::model::ChunkView { id, idx, tokens, text }).collect();
        Ok(crate::model::ChunksPage { chunks, total, page, pages })
    })
}

/// `(chunk id, text)` of every chunk of a project, in order.
pub async fn chunk_texts(pool: &Db, project_id: i64) -> AppResult<Vec<(i64, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT id, body FROM chunks WHERE project_id = $1 ORDER BY document_id, idx")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// Where each chunk of a project lies (its document and byte span), for
/// relevance at the document or passage unit.
pub async fn chunk_spans(
    pool: &Db,
    project_id: i64,
) -> AppResult<std::collections::HashMap<i64, engine::metrics::Span>> {
    on_db!(pool, |db| {
        let rows: Vec<(i64, i64, i64, i64)> =
            sqlx::query_as("SELECT id, document_id, start_byte, end_byte FROM chunks WHERE project_id = $1")
                .bind(project_id)
                .fetch_all(db)
                .await?;
        Ok(rows
            .into_iter()
            .map(|(id, document, start, end)| (id, engine::metrics::Span { document, start, end }))
            .collect())
    })
}

/// The text of every document of a project, in the order they were added.
/// A project's documents as (title, text), in upload order.
pub async fn document_titles_and_texts(pool: &Db, project_id: i64) -> AppResult<Vec<(String, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT title, body FROM documents WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

pub async fn document_texts(pool: &Db, project_id: i64) -> AppResult<Vec<String>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT body FROM documents WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// A search's `LIKE` pattern: case-folded, its `%`, `_` and `\` escaped.
pub(crate) fn like_pattern(search: &str) -> String {
    let mut p = String::from("%");
    for c in search.trim().to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

//! The database handle and what every store function is written with:
//! [`Db`] (an SQLite file or a PostgreSQL server, and what this process
//! keeps about it), [`on_db!`], write transactions, the dialect pick,
//! opening and migrating.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use super::backfill;

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
pub struct Db {
    pool: Pool,
    here: Arc<Here>,
}

/// The database's own pool.
#[derive(Clone, Debug)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
    /// Itself: `on_db!` runs on a `Pool` as on a `Db` (what holds only
    /// the pool — the LLM budget the `Db` keeps — cannot hold the `Db`).
    pub fn pool(&self) -> &Pool {
        self
    }
}

/// What this process keeps about one database it opened: its name as a
/// claimant of shared job items and LLM slots, how long its claims stand
/// without a heartbeat, its share of the deployment's LLM budget, and its
/// memos (results it computed from the database, kept while their inputs
/// stay the same). Passed down with the `Db`, so nothing of it is a
/// process-wide static.
pub struct Here {
    /// This process as a claimant: host, process id and the time the
    /// database was opened (a process id is reused after a restart; the
    /// pair is not).
    claimant: String,
    /// Seconds a claim stands without a heartbeat before another process
    /// may take its item (claimants heartbeat five times as often).
    claim_timeout: u64,
    /// The LLM budget as this process holds it ([`super::slots::DbLimit`]),
    /// made when a job first needs it.
    pub(super) budget: std::sync::Mutex<Option<Arc<super::slots::DbLimit>>>,
    memos: std::sync::Mutex<Vec<Memo>>,
}

/// One remembered result: what it is (`kind`), the key its inputs make,
/// the value.
struct Memo {
    kind: &'static str,
    key: String,
    value: Arc<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for Here {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Here").field("claimant", &self.claimant).field("claim_timeout", &self.claim_timeout).finish()
    }
}

/// How long a claim stands without a heartbeat unless configured
/// (`assay serve --claim-timeout`).
pub const CLAIM_TIMEOUT: u64 = 30;

impl Here {
    fn new(claim_timeout: u64) -> Here {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Here {
            claimant: format!("{}:{}:{}", host.trim(), std::process::id(), started.as_micros()),
            claim_timeout: claim_timeout.max(1),
            budget: Default::default(),
            memos: Default::default(),
        }
    }
}

impl Db {
    fn new(pool: Pool) -> Db {
        Db { pool, here: Arc::new(Here::new(CLAIM_TIMEOUT)) }
    }

    /// This handle with claims that lapse after `secs` seconds without a
    /// heartbeat: set as it is opened ([`OpenOptions`]), before it is shared.
    fn with_claim_timeout(self, secs: u64) -> Db {
        Db { pool: self.pool, here: Arc::new(Here::new(secs)) }
    }

    /// The database's own pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// This process as a claimant of the database's shared job items.
    pub fn claimant(&self) -> &str {
        &self.here.claimant
    }

    /// Seconds a claim stands without a heartbeat.
    pub fn claim_timeout(&self) -> u64 {
        self.here.claim_timeout
    }

    pub(super) fn here(&self) -> &Here {
        &self.here
    }

    /// What was remembered of `kind` under `key` on this database, if it is
    /// still kept.
    pub fn recall<T: std::any::Any + Send + Sync>(&self, kind: &'static str, key: &str) -> Option<Arc<T>> {
        let memos = self.here.memos.lock().unwrap_or_else(|e| e.into_inner());
        let hit = memos.iter().find(|m| m.kind == kind && m.key == key)?;
        hit.value.clone().downcast::<T>().ok()
    }

    /// Remembers `value` of `kind` under `key`, keeping the `keep` newest of
    /// that kind.
    pub fn remember<T: std::any::Any + Send + Sync>(
        &self,
        kind: &'static str,
        key: String,
        value: Arc<T>,
        keep: usize,
    ) {
        let mut memos = self.here.memos.lock().unwrap_or_else(|e| e.into_inner());
        memos.retain(|m| !(m.kind == kind && m.key == key));
        memos.insert(0, Memo { kind, key, value });
        let mut seen = 0;
        memos.retain(|m| {
            if m.kind != kind {
                return true;
            }
            seen += 1;
            seen <= keep
        });
    }

    /// The SQLite pool, for code that is SQLite's alone (tests that read a
    /// file directly, the storage-failure tests).
    pub fn sqlite(&self) -> Option<&SqlitePool> {
        match &self.pool {
            Pool::Sqlite(pool) => Some(pool),
            Pool::Postgres(_) => None,
        }
    }

    pub fn postgres(&self) -> Option<&PgPool> {
        match &self.pool {
            Pool::Postgres(pool) => Some(pool),
            Pool::Sqlite(_) => None,
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.pool, Pool::Postgres(_))
    }

    /// "SQLite" or "PostgreSQL", for messages.
    pub fn kind(&self) -> &'static str {
        match self.pool {
            Pool::Sqlite(_) => "SQLite",
            Pool::Postgres(_) => "PostgreSQL",
        }
    }

    pub async fn close(&self) {
        match &self.pool {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }
}

impl From<SqlitePool> for Db {
    fn from(pool: SqlitePool) -> Db {
        Db::new(Pool::Sqlite(pool))
    }
}

impl From<PgPool> for Db {
    fn from(pool: PgPool) -> Db {
        Db::new(Pool::Postgres(pool))
    }
}

/// Runs `$body` with `$db` bound to the database's own pool: the body is
/// compiled once per driver, so one text serves SQLite and PostgreSQL.
/// `$pool` (a `&Db`) stays in scope for calls to other store functions.
#[macro_export]
macro_rules! on_db {
    ($pool:expr, |$db:ident| $body:expr) => {
        match $pool.pool() {
            $crate::ssr::store::Pool::Sqlite($db) => $body,
            $crate::ssr::store::Pool::Postgres($db) => $body,
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

/// A closed set's value from the name a row stores: an unknown name (a
/// newer Assay's, or an edited database) is an error naming the table, the
/// row and the value — never read as some default.
pub fn stored<T: types::ClosedSet>(table: &str, id: i64, name: &str) -> crate::error::AppResult<T> {
    T::parse(name).map_err(|e| {
        crate::error::AppError::Invalid(format!("{table} row {id}: {e} (written by a newer Assay, or edited by hand?)"))
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

/// How long a statement waits for another connection's write lock before
/// SQLite answers "database is locked".
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Opens the database `target` names — a `postgres://` (or
/// `postgresql://`) URL, else an SQLite file path (created if needed) —
/// and applies its migrations.
pub async fn open_target(target: &str) -> Result<Db, OpenError> {
    open_target_with(target, OpenOptions::default()).await
}

/// How a process opens its database, read once where the configuration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Connections to PostgreSQL at most (SQLite's pool is its own).
    pub connections: u32,
    /// Seconds a job item's claim stands without a heartbeat.
    pub claim_timeout: u64,
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions { connections: PG_CONNECTIONS, claim_timeout: CLAIM_TIMEOUT }
    }
}

/// [`open_target`], with `options`.
pub async fn open_target_with(target: &str, options: OpenOptions) -> Result<Db, OpenError> {
    let db = if is_postgres_url(target) {
        open_postgres(target, options.connections).await?
    } else {
        ready(Db::from(open_sqlite(Path::new(target), None).await?)).await?
    };
    Ok(db.with_claim_timeout(options.claim_timeout))
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
    ready(Db::from(pool)).await
}

/// Opens (creating if needed) the SQLite file at `path` and applies the
/// migrations. The parent directory is created too.
pub async fn open(path: &Path) -> Result<Db, OpenError> {
    ready(Db::from(open_sqlite(path, None).await?)).await
}

/// [`open`], with every connection limited to `max_pages` pages of the
/// database (`PRAGMA max_page_count`): a full disk, made to order, for the
/// tests that prove nothing acknowledged is lost when writes fail.
pub async fn open_with(path: &Path, max_pages: Option<u64>) -> Result<Db, OpenError> {
    ready(Db::from(open_sqlite(path, max_pages).await?)).await
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

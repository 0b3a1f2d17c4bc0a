//! Projects: a corpus and everything made from it.

use engine::chunk::{ChunkSettings, Tokenizer};
use sqlx::FromRow;

use super::{on_db, Db};
use crate::error::{AppError, AppResult};
use crate::model::*;

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

    /// The project as pages and jobs read it; a tokenizer Assay does not
    /// have (a damaged row) is an error naming the project.
    fn view(self) -> AppResult<ProjectView> {
        let tokenizer = Tokenizer::parse(&self.tokenizer)
            .map_err(|e| AppError::Invalid(format!("project {}: its stored chunking: {e}", self.id)))?;
        let chunking = ChunkSettings {
            chunk_tokens: self.chunk_tokens as usize,
            chunk_overlap: self.chunk_overlap as usize,
            tokenizer,
        };
        Ok(ProjectView { summary: self.summary(), chunking })
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
        row.map(ProjectRow::view).ok_or_else(|| AppError::NotFound(format!("no project with id {id}")))?
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
            (Some(row), _) => row.view(),
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
        .bind(settings.chunk_overlap as i64)
        .bind(settings.tokenizer.as_str())
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

/// A project's chunking.
pub fn chunk_settings(project: &ProjectView) -> ChunkSettings {
    project.chunking
}

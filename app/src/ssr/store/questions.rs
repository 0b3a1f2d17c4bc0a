//! Question sets and questions in SQLite.

use super::{on_db, Db};

use crate::error::{AppError, AppResult};
use crate::model::{QuestionSetView, QuestionView, QuestionsPage};

/// A question about to be stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewQuestion {
    pub question: String,
    pub level: Option<String>,
    pub category: Option<String>,
    pub expertise: Option<String>,
    pub reference_answer: Option<String>,
    pub source_chunk_ids: Vec<i64>,
    /// The chunks given to the LLM that wrote the question (`None`: not
    /// recorded — imported, or from before this was kept).
    pub context_chunk_ids: Option<Vec<i64>>,
    /// Passages a benchmark file says answer it.
    pub evidence: Vec<String>,
    pub nodes: Vec<String>,
    pub edges: Vec<(String, String)>,
    pub walk: Vec<String>,
    pub generator: types::Generator,
    pub prompt_hash: Option<String>,
    pub seed: Option<i64>,
}

pub async fn create_set(
    pool: &Db,
    project_id: i64,
    job_id: Option<i64>,
    kind: types::QuestionSetKind,
    name: &str,
    parameters: &serde_json::Value,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
        "INSERT INTO question_sets (project_id, job_id, kind, name, parameters) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(project_id)
    .bind(job_id)
    .bind(kind.as_str())
    .bind(name)
    .bind(parameters.to_string())
    .fetch_one(db)
    .await?)
    })
}

/// Replaces a set's questions with `questions` (in order), in one transaction.
pub async fn replace_questions(pool: &Db, set_id: i64, questions: &[NewQuestion]) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        sqlx::query("DELETE FROM questions WHERE set_id = $1").bind(set_id).execute(&mut *tx).await?;
        tx.insert_questions(set_id, questions).await?;
        tx.commit().await?;
        Ok(())
    })
}

/// A new set of kind `imported` holding `questions`, in one transaction.
pub async fn import_set(
    pool: &Db,
    project_id: i64,
    name: &str,
    file_name: &str,
    questions: &[NewQuestion],
) -> AppResult<i64> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        let set: i64 = sqlx::query_scalar(
        "INSERT INTO question_sets (project_id, kind, name, parameters) VALUES ($1, 'imported', $2, $3) RETURNING id",
    )
    .bind(project_id)
    .bind(name)
    .bind(serde_json::json!({ "file": file_name }).to_string())
    .fetch_one(&mut *tx)
    .await?;
        tx.insert_questions(set, questions).await?;
        tx.commit().await?;
        Ok(set)
    })
}

super::connection_steps! {
    pub(super) trait QuestionSteps {
        async fn insert_questions(
    &mut self,
    set_id: i64,
    questions: &[NewQuestion],
) -> AppResult<()> {
    for (idx, q) in questions.iter().enumerate() {
        sqlx::query(
            "INSERT INTO questions (set_id, idx, question, level, category, expertise, reference_answer,
                                    source_chunk_ids, nodes, edges, walk, generator, prompt_hash, seed,
                                    context_chunk_ids, evidence)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(set_id)
        .bind(idx as i64)
        .bind(&q.question)
        .bind(&q.level)
        .bind(&q.category)
        .bind(&q.expertise)
        .bind(&q.reference_answer)
        .bind(json(&q.source_chunk_ids))
        .bind(json(&q.nodes))
        .bind(json(&q.edges))
        .bind(json(&q.walk))
        .bind(q.generator.to_string())
        .bind(&q.prompt_hash)
        .bind(q.seed)
        .bind(q.context_chunk_ids.as_ref().map(json))
        .bind(Some(&q.evidence).filter(|e| !e.is_empty()).map(json))
        .execute(&mut *self)
        .await?;
    }
    Ok(())
}
    }
}

/// A list as JSON text, for binding.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

type SetRow = (i64, i64, Option<i64>, String, String, String, String, i64, Option<String>, Option<String>);

const SET_COLUMNS: &str = "s.id, s.project_id, s.job_id, s.kind, s.name, s.parameters, s.created_at,
     (SELECT COUNT(*) FROM questions q WHERE q.set_id = s.id),
     (SELECT provider FROM llm_calls c WHERE c.job_id = s.job_id LIMIT 1),
     (SELECT model FROM llm_calls c WHERE c.job_id = s.job_id LIMIT 1)";

async fn set_view(pool: &Db, row: SetRow) -> AppResult<QuestionSetView> {
    on_db!(pool, |db| {
        let (id, project_id, job_id, kind, name, parameters, created_at, questions, provider, model) = row;
        let counts: Vec<(String, i64)> = sqlx::query_as(
            "SELECT COALESCE(level, category, 'other'), COUNT(*) FROM questions WHERE set_id = $1
         GROUP BY 1 ORDER BY MIN(idx)",
        )
        .bind(id)
        .fetch_all(db)
        .await?;
        Ok(QuestionSetView {
            id,
            project_id,
            job_id,
            kind: super::stored("question_sets", id, &kind)?,
            name,
            parameters,
            created_at,
            questions,
            counts,
            provider: provider.map(|p| super::stored("question_sets", id, &p)).transpose()?,
            model,
        })
    })
}

pub async fn list_sets(pool: &Db, project_id: i64) -> AppResult<Vec<QuestionSetView>> {
    on_db!(pool, |db| {
        let rows: Vec<SetRow> =
            sqlx::query_as(&format!("SELECT {SET_COLUMNS} FROM question_sets s WHERE s.project_id = $1 ORDER BY s.id"))
                .bind(project_id)
                .fetch_all(db)
                .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            out.push(set_view(pool, row).await?);
        }
        Ok(out)
    })
}

pub async fn get_set(pool: &Db, set_id: i64) -> AppResult<QuestionSetView> {
    on_db!(pool, |db| {
        let row: Option<SetRow> = sqlx::query_as(&format!("SELECT {SET_COLUMNS} FROM question_sets s WHERE s.id = $1"))
            .bind(set_id)
            .fetch_optional(db)
            .await?;
        set_view(pool, row.ok_or_else(|| AppError::NotFound(format!("question set {set_id} does not exist")))?).await
    })
}

/// The set a job fills.
pub async fn set_of_job(pool: &Db, job_id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        sqlx::query_scalar("SELECT id FROM question_sets WHERE job_id = $1")
            .bind(job_id)
            .fetch_optional(db)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("job {job_id} fills no question set")))
    })
}

type QuestionRow = (
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
);

const QUESTION_COLUMNS: &str = "id, question, level, category, expertise, reference_answer, source_chunk_ids, nodes,
     edges, walk, generator, prompt_hash, seed, context_chunk_ids, evidence";

fn view(row: QuestionRow) -> AppResult<QuestionView> {
    let (
        id,
        question,
        level,
        category,
        expertise,
        reference_answer,
        src,
        nodes,
        edges,
        walk,
        generator,
        prompt_hash,
        seed,
        context,
        evidence,
    ) = row;
    let generator = types::Generator::parse(&generator).map_err(|e| {
        AppError::Invalid(format!("questions row {id}: {e} (written by a newer Assay, or edited by hand?)"))
    })?;
    Ok(QuestionView {
        id,
        question,
        level,
        category,
        expertise,
        reference_answer,
        source_chunk_ids: serde_json::from_str(&src).unwrap_or_default(),
        context_chunk_ids: context.and_then(|c| serde_json::from_str(&c).ok()),
        evidence: evidence.and_then(|e| serde_json::from_str(&e).ok()).unwrap_or_default(),
        nodes: serde_json::from_str(&nodes).unwrap_or_default(),
        edges: serde_json::from_str(&edges).unwrap_or_default(),
        walk: serde_json::from_str(&walk).unwrap_or_default(),
        generator,
        prompt_hash,
        seed,
    })
}

pub async fn list_questions(pool: &Db, set_id: i64) -> AppResult<Vec<QuestionView>> {
    on_db!(pool, |db| {
        let rows: Vec<QuestionRow> =
            sqlx::query_as(&format!("SELECT {QUESTION_COLUMNS} FROM questions WHERE set_id = $1 ORDER BY idx"))
                .bind(set_id)
                .fetch_all(db)
                .await?;
        rows.into_iter().map(view).collect()
    })
}

/// Page `page` (from 1, `per_page` at a time) of a set's questions in the
/// set's order: those of `level` (a level, else a category; "" for all)
/// whose text contains `search` ("" for all).
pub async fn question_page(
    pool: &Db,
    set_id: i64,
    page: i64,
    per_page: i64,
    level: &str,
    search: &str,
) -> AppResult<QuestionsPage> {
    const MATCHING: &str = "FROM questions WHERE set_id = $1 AND ($2 = '' OR COALESCE(level, category, 'other') = $2)
        AND ($3 = '' OR LOWER(question) LIKE $4 ESCAPE '\\')";
    let search = search.trim();
    let pattern = super::like_pattern(search);
    let per_page = per_page.max(1);
    on_db!(pool, |db| {
        let (total,): (i64,) = sqlx::query_as(&format!("SELECT COUNT(*) {MATCHING}"))
            .bind(set_id)
            .bind(level)
            .bind(search)
            .bind(&pattern)
            .fetch_one(db)
            .await?;
        let (page, pages) = crate::model::paging(total, per_page, page);
        let rows: Vec<QuestionRow> = sqlx::query_as(&format!(
            "SELECT {QUESTION_COLUMNS} {MATCHING} ORDER BY idx, id LIMIT {per_page} OFFSET {}",
            (page - 1) * per_page
        ))
        .bind(set_id)
        .bind(level)
        .bind(search)
        .bind(&pattern)
        .fetch_all(db)
        .await?;
        Ok(QuestionsPage { questions: rows.into_iter().map(view).collect::<AppResult<_>>()?, total, page, pages })
    })
}

/// The set a question belongs to, and the set's project.
pub async fn owner(pool: &Db, question_id: i64) -> AppResult<(i64, i64)> {
    on_db!(pool, |db| {
        sqlx::query_as(
            "SELECT s.id, s.project_id FROM questions q JOIN question_sets s ON s.id = q.set_id WHERE q.id = $1",
        )
        .bind(question_id)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("question {question_id} does not exist")))
    })
}

fn checked_text(text: &str) -> AppResult<String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AppError::Invalid("a question cannot be empty".into()));
    }
    if text.chars().count() > 2_000 {
        return Err(AppError::Invalid("a question is at most 2,000 characters".into()));
    }
    Ok(text.to_string())
}

/// Edits a question's text. Its provenance stays; a generated question's
/// generator gains `+edited`, so the set says a person changed it.
pub async fn update_question(pool: &Db, question_id: i64, text: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        let text = checked_text(text)?;
        owner(pool, question_id).await?;
        sqlx::query(
            "UPDATE questions SET question = $1,
            generator = CASE WHEN generator = 'manual' OR generator LIKE '%+edited' OR question = $2 THEN generator
                             ELSE generator || '+edited' END
         WHERE id = $3",
        )
        .bind(&text)
        .bind(&text)
        .bind(question_id)
        .execute(db)
        .await?;
        Ok(())
    })
}

pub async fn delete_question(pool: &Db, question_id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        let (set, _) = owner(pool, question_id).await?;
        sqlx::query("DELETE FROM questions WHERE id = $1").bind(question_id).execute(db).await?;
        Ok(set)
    })
}

/// Adds a question written by hand at the end of a set.
pub async fn add_question(
    pool: &Db,
    set_id: i64,
    text: &str,
    level: Option<&str>,
    reference_answer: Option<&str>,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        let text = checked_text(text)?;
        get_set(pool, set_id).await?;
        let id = sqlx::query_scalar(
            "INSERT INTO questions (set_id, idx, question, level, reference_answer, generator)
         VALUES ($1, (SELECT COALESCE(MAX(idx), -1) + 1 FROM questions WHERE set_id = $1), $2, $3, $4, 'manual')
         RETURNING id",
        )
        .bind(set_id)
        .bind(&text)
        .bind(level.map(str::trim).filter(|l| !l.is_empty()))
        .bind(reference_answer.map(str::trim).filter(|a| !a.is_empty()))
        .fetch_one(db)
        .await?;
        Ok(id)
    })
}

pub async fn delete_set(pool: &Db, set_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("DELETE FROM question_sets WHERE id = $1").bind(set_id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("question set {set_id} does not exist")));
        }
        Ok(())
    })
}

/// A question and the project it belongs to.
pub async fn get_question(pool: &Db, question_id: i64) -> AppResult<(i64, QuestionView)> {
    on_db!(pool, |db| {
        let (_, project) = owner(pool, question_id).await?;
        let row: QuestionRow = sqlx::query_as(&format!("SELECT {QUESTION_COLUMNS} FROM questions WHERE id = $1"))
            .bind(question_id)
            .fetch_one(db)
            .await?;
        Ok((project, view(row)?))
    })
}

/// Replaces a set's parameters (what made it).
pub async fn set_parameters(pool: &Db, set_id: i64, parameters: &serde_json::Value) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("UPDATE question_sets SET parameters = $1 WHERE id = $2")
            .bind(parameters.to_string())
            .bind(set_id)
            .execute(db)
            .await?;
        Ok(())
    })
}

/// The project's question-category hierarchy, if it has its own.
pub async fn project_hierarchy(
    pool: &Db,
    project_id: i64,
) -> AppResult<Option<engine::questions::hierarchy::Hierarchy>> {
    on_db!(pool, |db| {
        let text: Option<Option<String>> = sqlx::query_scalar("SELECT question_hierarchy FROM projects WHERE id = $1")
            .bind(project_id)
            .fetch_optional(db)
            .await?;
        let text = text.ok_or_else(|| AppError::NotFound(format!("project {project_id} does not exist")))?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    })
}

/// Saves (after checking its shape) or, with `None`, removes the project's
/// own hierarchy.
pub async fn set_project_hierarchy(pool: &Db, project_id: i64, json: Option<&str>) -> AppResult<()> {
    on_db!(pool, |db| {
        let value = match json {
            Some(text) => {
                let h: engine::questions::hierarchy::Hierarchy = serde_json::from_str(text).map_err(|e| {
                    AppError::Invalid(format!("the hierarchy is not valid JSON in the expected layout: {e}"))
                })?;
                engine::questions::hierarchy::validate(&h).map_err(AppError::from)?;
                Some(serde_json::to_string_pretty(&h).unwrap_or_default())
            }
            None => None,
        };
        let done = sqlx::query("UPDATE projects SET question_hierarchy = $1 WHERE id = $2")
            .bind(value)
            .bind(project_id)
            .execute(db)
            .await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("project {project_id} does not exist")));
        }
        Ok(())
    })
}

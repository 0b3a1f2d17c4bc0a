//! Answer sets and answers in SQLite, and the cost table over them.

use std::collections::HashMap;

use sqlx::FromRow;

use super::{on_db, Db};

use crate::error::{AppError, AppResult};
use crate::model::{
    AnswerBrief, AnswerPairRow, AnswerPairsPage, AnswerSetView, AnswerView, ContextSize, CostRow, Section,
    ANSWERS_PER_PAGE, ANSWER_PREVIEW_CHARS,
};

/// An answer about to be stored. Accounting is `None` when an imported
/// file did not give it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewAnswer {
    pub question_id: i64,
    pub answer: String,
    pub contexts: Vec<Section>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
    pub llm_calls: Option<i64>,
    pub cached_calls: Option<i64>,
    pub retrieval_ms: Option<f64>,
    pub query_ms: Option<f64>,
    pub target_words: Option<i64>,
    /// The reply was cut at its `max_tokens`.
    pub truncated: bool,
    /// Whether an empty `contexts` means "retrieved nothing" (a built-in
    /// method) rather than "not reported" (an import, a service).
    pub contexts_known: bool,
}

impl NewAnswer {
    /// Characters of retrieved text, when known (see [`NewAnswer::contexts_known`]).
    pub fn context_chars(&self) -> Option<i64> {
        (self.contexts_known || !self.contexts.is_empty())
            .then(|| self.contexts.iter().map(|c| c.text.chars().count() as i64).sum())
    }

    /// A method's answer (`method`: the set's).
    pub fn of(question_id: i64, a: &engine::rag::Answer, method: &str, target_words: Option<usize>) -> NewAnswer {
        NewAnswer {
            question_id,
            answer: a.answer.clone(),
            contexts: a.contexts.clone(),
            prompt_tokens: Some(a.meter.prompt_tokens as i64),
            completion_tokens: Some(a.meter.completion_tokens as i64),
            cost_usd: Some(a.meter.cost_usd),
            llm_calls: Some(a.meter.llm_calls as i64),
            cached_calls: Some(a.meter.cached_calls as i64),
            retrieval_ms: Some(a.retrieval_ms),
            query_ms: Some(a.query_ms),
            target_words: target_words.map(|t| t as i64),
            truncated: a.meter.answer_cut,
            contexts_known: engine::rag::presets::reports_context(method),
        }
    }
}

pub async fn create_set(
    pool: &Db,
    project_id: i64,
    question_set_id: i64,
    job_id: Option<i64>,
    name: &str,
    method: &str,
    parameters: &serde_json::Value,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
            "INSERT INTO answer_sets (project_id, question_set_id, job_id, name, method, parameters)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(project_id)
        .bind(question_set_id)
        .bind(job_id)
        .bind(name)
        .bind(method)
        .bind(parameters.to_string())
        .fetch_one(db)
        .await?)
    })
}

/// Replaces a set's answers with `answers`, in one transaction.
pub async fn replace_answers(pool: &Db, set_id: i64, answers: &[NewAnswer]) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        // Two processes of a shared job storing the same answers take
        // turns (PostgreSQL; SQLite's writers always do): the second's
        // delete then sees the first's rows, and the set holds one copy.
        let lock = super::pick(
            db,
            "SELECT id FROM answer_sets WHERE id = $1",
            "SELECT id FROM answer_sets WHERE id = $1 FOR UPDATE",
        );
        sqlx::query(lock).bind(set_id).fetch_optional(&mut *tx).await?;
        sqlx::query("DELETE FROM answers WHERE answer_set_id = $1").bind(set_id).execute(&mut *tx).await?;
        tx.insert_answers(set_id, answers).await?;
        tx.commit().await?;
        Ok(())
    })
}

super::connection_steps! {
    trait AnswerSteps {
        async fn insert_answers(
    &mut self,
    set_id: i64,
    answers: &[NewAnswer],
) -> AppResult<()> {
    for a in answers {
        let contexts = serde_json::to_string(&a.contexts).unwrap_or_else(|_| "[]".into());
        let (text, frame) = super::packed::pack(&contexts);
        sqlx::query(
            "INSERT INTO answers (answer_set_id, question_id, answer, contexts, contexts_z, prompt_tokens,
                 completion_tokens, cost_usd, llm_calls, cached_calls, retrieval_ms, query_ms, target_words,
                 truncated, context_chars)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(set_id)
        .bind(a.question_id)
        .bind(&a.answer)
        // Long contexts packed (store::packed); the text column is NOT NULL.
        .bind(text.unwrap_or(""))
        .bind(frame)
        .bind(a.prompt_tokens)
        .bind(a.completion_tokens)
        .bind(a.cost_usd)
        .bind(a.llm_calls)
        .bind(a.cached_calls)
        .bind(a.retrieval_ms)
        .bind(a.query_ms)
        .bind(a.target_words)
        .bind(a.truncated)
        .bind(a.context_chars())
        .execute(&mut *self)
        .await?;
    }
    Ok(())
}
    }
}

/// A new answer set holding `answers` (an import), in one transaction.
pub async fn import_set(
    pool: &Db,
    project_id: i64,
    question_set_id: i64,
    name: &str,
    parameters: &serde_json::Value,
    answers: &[NewAnswer],
) -> AppResult<i64> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO answer_sets (project_id, question_set_id, name, method, parameters)
         VALUES ($1, $2, $3, 'imported', $4) RETURNING id",
        )
        .bind(project_id)
        .bind(question_set_id)
        .bind(name)
        .bind(parameters.to_string())
        .fetch_one(&mut *tx)
        .await?;
        tx.insert_answers(id, answers).await?;
        tx.commit().await?;
        Ok(id)
    })
}

#[derive(FromRow)]
struct SetRow {
    id: i64,
    project_id: i64,
    question_set_id: i64,
    job_id: Option<i64>,
    name: String,
    method: String,
    parameters: String,
    created_at: String,
    answers: i64,
    provider: Option<String>,
    model: Option<String>,
    sanity_of: Option<i64>,
}

impl SetRow {
    fn view(self) -> AppResult<AnswerSetView> {
        // A service's answers are its own: no call of Assay's made them.
        let made_by = match &self.provider {
            Some(p) => Some(
                super::stored::<types::CallProvider>("answer_sets", self.id, p)?.label(&self.model.unwrap_or_default()),
            ),
            None if engine::rag::presets::is_remote(&self.method) => Some(format!("your service ({})", self.method)),
            // A built-in method's set whose job has made no call yet (
            // not "imported").
            None if self.method != "imported" => Some(match self.job_id {
                Some(j) => format!("not answered yet (job #{j})"),
                None => "not answered yet".to_string(),
            }),
            None => None,
        };
        Ok(AnswerSetView {
            id: self.id,
            project_id: self.project_id,
            question_set_id: self.question_set_id,
            job_id: self.job_id,
            name: self.name,
            method: self.method,
            parameters: self.parameters,
            created_at: self.created_at,
            answers: self.answers,
            made_by,
            sanity_of: self.sanity_of,
        })
    }
}

const SET_SELECT: &str = "SELECT s.id, s.project_id, s.question_set_id, s.job_id, s.name, s.method, s.parameters,
     s.created_at, (SELECT COUNT(*) FROM answers a WHERE a.answer_set_id = s.id) AS answers,
     (SELECT provider FROM llm_calls c WHERE c.job_id = s.job_id AND c.purpose = 'answer' LIMIT 1) AS provider,
     (SELECT model FROM llm_calls c WHERE c.job_id = s.job_id AND c.purpose = 'answer' LIMIT 1) AS model,
     (SELECT e.id FROM evaluations e WHERE s.job_id IS NOT NULL AND e.job_id = s.job_id
        AND CAST(json_extract(e.settings, '$.sanity') AS BIGINT) = 1 ORDER BY e.id LIMIT 1) AS sanity_of
     FROM answer_sets s";

pub async fn list_sets(pool: &Db, project_id: i64) -> AppResult<Vec<AnswerSetView>> {
    on_db!(pool, |db| {
        let rows: Vec<SetRow> = sqlx::query_as(&format!("{SET_SELECT} WHERE s.project_id = $1 ORDER BY s.id"))
            .bind(project_id)
            .fetch_all(db)
            .await?;
        rows.into_iter().map(SetRow::view).collect()
    })
}

pub async fn get_set(pool: &Db, set_id: i64) -> AppResult<AnswerSetView> {
    on_db!(pool, |db| {
        let row: Option<SetRow> =
            sqlx::query_as(&format!("{SET_SELECT} WHERE s.id = $1")).bind(set_id).fetch_optional(db).await?;
        row.ok_or_else(|| AppError::NotFound(format!("answer set {set_id} does not exist")))?.view()
    })
}

pub async fn set_of_job(pool: &Db, job_id: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        sqlx::query_scalar("SELECT id FROM answer_sets WHERE job_id = $1")
            .bind(job_id)
            .fetch_optional(db)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("job {job_id} fills no answer set")))
    })
}

/// Records the job that fills a set (a sanity check's second run).
pub async fn set_job(pool: &Db, set_id: i64, job_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("UPDATE answer_sets SET job_id = $1 WHERE id = $2").bind(job_id).bind(set_id).execute(db).await?;
        Ok(())
    })
}

pub async fn delete_set(pool: &Db, set_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("DELETE FROM answer_sets WHERE id = $1").bind(set_id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("answer set {set_id} does not exist")));
        }
        Ok(())
    })
}

#[derive(FromRow)]
struct AnswerRow {
    id: i64,
    question_id: i64,
    question: String,
    answer: String,
    contexts: String,
    contexts_z: Option<Vec<u8>>,
    prompt_tokens: Option<i64>,
    completion_tokens: Option<i64>,
    cost_usd: Option<f64>,
    llm_calls: Option<i64>,
    retrieval_ms: Option<f64>,
    query_ms: Option<f64>,
    truncated: bool,
    context_chars: Option<i64>,
}

/// A set's answer texts by question, `(question id, answer)` — without
/// the contexts and accounting [`list_answers`] reads.
pub async fn texts(pool: &Db, set_id: i64) -> AppResult<Vec<(i64, String)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT question_id, answer FROM answers WHERE answer_set_id = $1")
            .bind(set_id)
            .fetch_all(db)
            .await?)
    })
}

/// A set's answers in question order (`question_id`: only that question's).
pub async fn list_answers(pool: &Db, set_id: i64, question_id: Option<i64>) -> AppResult<Vec<AnswerView>> {
    on_db!(pool, |db| {
        let rows: Vec<AnswerRow> = sqlx::query_as(
            "SELECT a.id, a.question_id, q.question, a.answer, a.contexts, a.contexts_z, a.prompt_tokens,
                a.completion_tokens, a.cost_usd, a.llm_calls, a.retrieval_ms, a.query_ms, a.truncated, a.context_chars
         FROM answers a JOIN questions q ON q.id = a.question_id
         WHERE a.answer_set_id = $1 AND ($2 IS NULL OR a.question_id = $3) ORDER BY q.idx, q.id",
        )
        .bind(set_id)
        .bind(question_id)
        .bind(question_id)
        .fetch_all(db)
        .await?;
        rows.into_iter()
            .map(|mut r| {
                Ok(AnswerView {
                    contexts: serde_json::from_str(&r.contexts_text()?).unwrap_or_default(),
                    id: r.id,
                    question_id: r.question_id,
                    question: r.question,
                    answer: r.answer,
                    prompt_tokens: r.prompt_tokens,
                    completion_tokens: r.completion_tokens,
                    cost_usd: r.cost_usd,
                    llm_calls: r.llm_calls,
                    retrieval_ms: r.retrieval_ms,
                    query_ms: r.query_ms,
                    truncated: r.truncated,
                })
            })
            .collect()
    })
}

/// `text`'s first `chars` characters, cut back to the last word boundary
/// when that falls in its second half, and whether that is all of it.
pub fn preview(text: &str, chars: usize) -> (String, bool) {
    match text.char_indices().nth(chars) {
        None => (text.to_string(), true),
        Some((end, _)) => {
            let head = &text[..end];
            let cut = head.rfind(char::is_whitespace).filter(|&i| i > end / 2).unwrap_or(end);
            (format!("{}…", head[..cut].trim_end()), false)
        }
    }
}

impl AnswerRow {
    /// Its contexts' JSON, unpacked where stored packed (taken out of the row).
    fn contexts_text(&mut self) -> AppResult<String> {
        let what = format!("answer {}'s retrieved context", self.id);
        let (text, frame) = (std::mem::take(&mut self.contexts), self.contexts_z.take());
        Ok(super::packed::unpack(Some(text), frame, &what)?.unwrap_or_default())
    }

    fn brief(&mut self) -> AppResult<AnswerBrief> {
        let (preview, whole) = preview(&self.answer, ANSWER_PREVIEW_CHARS);
        let contexts =
            serde_json::from_str::<Vec<serde::de::IgnoredAny>>(&self.contexts_text()?).map_or(0, |c| c.len());
        Ok(AnswerBrief {
            id: self.id,
            preview,
            whole,
            words: self.answer.split_whitespace().count() as i64,
            contexts: contexts as i64,
            context_chars: self.context_chars,
            tokens: self.prompt_tokens.zip(self.completion_tokens).map(|(p, c)| p + c),
            query_ms: self.query_ms,
            truncated: self.truncated,
        })
    }
}

/// Page `page` (from 1) of set `a`'s answers in question order — those
/// whose question contains `search`, when given — each beside its
/// question's answer in set `b`. Answers are briefs: the text's beginning
/// and its size, without the retrieved context ([`list_answers`] reads an
/// answer whole).
pub async fn answer_page(pool: &Db, a: i64, b: Option<i64>, page: i64, search: &str) -> AppResult<AnswerPairsPage> {
    const COLUMNS: &str = "a.id, a.question_id, q.question, a.answer, a.contexts, a.contexts_z, a.prompt_tokens,
        a.completion_tokens, a.cost_usd, a.llm_calls, a.retrieval_ms, a.query_ms, a.truncated, a.context_chars";
    const MATCHING: &str = "FROM answers a JOIN questions q ON q.id = a.question_id
        WHERE a.answer_set_id = $1 AND ($2 = '' OR LOWER(q.question) LIKE $3 ESCAPE '\\')";
    let pattern = super::like_pattern(search);
    let search = search.trim();
    on_db!(pool, |db| {
        let (total,): (i64,) = sqlx::query_as(&format!("SELECT COUNT(*) {MATCHING}"))
            .bind(a)
            .bind(search)
            .bind(&pattern)
            .fetch_one(db)
            .await?;
        let (page, pages) = crate::model::paging(total, ANSWERS_PER_PAGE, page);
        let window = format!(
            "{MATCHING} ORDER BY q.idx, q.id LIMIT {ANSWERS_PER_PAGE} OFFSET {}",
            (page - 1) * ANSWERS_PER_PAGE
        );
        let left: Vec<AnswerRow> = sqlx::query_as(&format!("SELECT {COLUMNS} {window}"))
            .bind(a)
            .bind(search)
            .bind(&pattern)
            .fetch_all(db)
            .await?;
        let right: Vec<AnswerRow> = match b {
            None => Vec::new(),
            Some(b) => {
                sqlx::query_as(&format!(
                    "SELECT {} FROM answers b JOIN questions q ON q.id = b.question_id
                     WHERE b.answer_set_id = $4 AND b.question_id IN (SELECT a.question_id {window})",
                    COLUMNS.replace("a.", "b.")
                ))
                .bind(a)
                .bind(search)
                .bind(&pattern)
                .bind(b)
                .fetch_all(db)
                .await?
            }
        };
        let mut right: HashMap<i64, AnswerRow> = right.into_iter().map(|r| (r.question_id, r)).collect();
        let rows = left
            .into_iter()
            .map(|mut l| {
                Ok(AnswerPairRow {
                    a: l.brief()?,
                    b: right.remove(&l.question_id).map(|mut r| r.brief()).transpose()?,
                    question_id: l.question_id,
                    question: l.question,
                })
            })
            .collect::<AppResult<_>>()?;
        Ok(AnswerPairsPage { rows, total, page, pages })
    })
}

/// The cost table (seed 000 Table II) of a project's answer sets: per set,
/// each average over the answers that give that figure (SQL's `AVG` skips
/// the unknown); `measured` counts those with known tokens.
pub async fn cost_table(pool: &Db, project_id: i64) -> AppResult<Vec<CostRow>> {
    let mut rows = Vec::new();
    for s in list_sets(pool, project_id).await? {
        rows.push(cost_row(pool, s).await?);
    }
    Ok(rows)
}

/// One answer set's row of the cost table.
pub async fn cost_of(pool: &Db, set_id: i64) -> AppResult<CostRow> {
    cost_row(pool, get_set(pool, set_id).await?).await
}

/// A set's per-answer figures, averaged in one pass over its answers.
#[derive(FromRow)]
struct SetFigures {
    measured: i64,
    tokens: Option<f64>,
    prompt: Option<f64>,
    completion: Option<f64>,
    calls: Option<f64>,
    query_ms: Option<f64>,
    retrieval_ms: Option<f64>,
    cost: Option<f64>,
    context_known: i64,
    context_avg: Option<f64>,
    context_thin: Option<i64>,
    context_none: Option<i64>,
    context_unreported: i64,
    provider_cached: Option<f64>,
    provider_prompt: Option<f64>,
}

async fn cost_row(pool: &Db, s: AnswerSetView) -> AppResult<CostRow> {
    let f: SetFigures = on_db!(pool, |db| sqlx::query_as(
        "SELECT COUNT(prompt_tokens + completion_tokens) AS measured,
            CAST(AVG(prompt_tokens + completion_tokens) AS DOUBLE PRECISION) AS tokens,
            CAST(AVG(prompt_tokens) AS DOUBLE PRECISION) AS prompt,
            CAST(AVG(completion_tokens) AS DOUBLE PRECISION) AS completion,
            CAST(AVG(llm_calls) AS DOUBLE PRECISION) AS calls,
            AVG(query_ms) AS query_ms, AVG(retrieval_ms) AS retrieval_ms, AVG(cost_usd) AS cost,
            COUNT(context_chars) AS context_known,
            CAST(AVG(context_chars) AS DOUBLE PRECISION) AS context_avg,
            CAST(SUM(CASE WHEN context_chars < $2 THEN 1 ELSE 0 END) AS BIGINT) AS context_thin,
            CAST(SUM(CASE WHEN context_chars = 0 THEN 1 ELSE 0 END) AS BIGINT) AS context_none,
            COUNT(*) - COUNT(context_chars) AS context_unreported,
            (SELECT CAST(SUM(cached_tokens) AS DOUBLE PRECISION) FROM llm_calls
             WHERE job_id = $3 AND cached = FALSE AND (reply IS NOT NULL OR reply_hash IS NOT NULL)) AS provider_cached,
            (SELECT CAST(SUM(prompt_tokens) AS DOUBLE PRECISION) FROM llm_calls
             WHERE job_id = $3 AND cached = FALSE AND (reply IS NOT NULL OR reply_hash IS NOT NULL)) AS provider_prompt
         FROM answers WHERE answer_set_id = $1",
    )
    .bind(s.id)
    .bind(crate::model::THIN_CONTEXT_CHARS)
    .bind(s.job_id)
    .fetch_one(db)
    .await)?;
    // The provider's prefix cache, over the calls it answered (not Assay's
    // cache): none for a set no job wrote.
    let cached_input_share = match (f.provider_cached, f.provider_prompt) {
        (Some(c), Some(p)) if p > 0.0 => Some(c / p),
        _ => None,
    };
    let context = ContextSize {
        known: f.context_known,
        avg_chars: f.context_avg,
        thin: f.context_thin.unwrap_or(0),
        none: f.context_none.unwrap_or(0),
        by_design: !engine::rag::presets::retrieves(&s.method),
        unreported: f.context_unreported,
    };
    Ok(CostRow {
        context,
        answer_set_id: s.id,
        question_set_id: s.question_set_id,
        name: s.name,
        method: s.method,
        parameters: s.parameters,
        answers: s.answers,
        measured: f.measured,
        avg_tokens: f.tokens,
        avg_prompt_tokens: f.prompt,
        avg_completion_tokens: f.completion,
        avg_llm_calls: f.calls,
        avg_query_ms: f.query_ms,
        avg_retrieval_ms: f.retrieval_ms,
        avg_cost_usd: f.cost,
        cached_input_share,
        made_by: s.made_by,
        sanity_of: s.sanity_of,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_threshold_is_the_engines() {
        assert_eq!(crate::model::THIN_CONTEXT_CHARS, engine::rag::THIN_CONTEXT_CHARS as i64);
    }

    #[test]
    fn a_context_size_is_known_for_built_in_methods_and_reported_contexts_only() {
        let ctx = |t: &str| Section { kind: "chunk".into(), id: "1".into(), score: 1.0, text: t.into() };
        let mut a = NewAnswer { contexts: vec![ctx("Ada é"), ctx("Bo")], ..Default::default() };
        assert_eq!(a.context_chars(), Some(7), "characters, not bytes");
        a.contexts.clear();
        assert_eq!(a.context_chars(), None, "an import that reported none: unknown");
        a.contexts_known = true;
        assert_eq!(a.context_chars(), Some(0), "a built-in method that retrieved nothing");
        assert!(engine::rag::presets::reports_context("lightrag"));
        assert!(engine::rag::presets::reports_context("chat-baseline"));
        assert!(!engine::rag::presets::reports_context("lightrag-server"));
    }

    #[test]
    fn the_flag_counts_thin_answers_and_names_a_baseline_by_design() {
        use crate::model::ContextSize;
        let c =
            ContextSize { known: 5000, avg_chars: Some(900.0), thin: 1200, none: 120, by_design: false, unreported: 0 };
        assert_eq!(
            c.flag().unwrap(),
            "1,200 of 5,000 answers rest on under 400 characters of retrieved text (120 with none)"
        );
        assert!(c.warns());
        let few = ContextSize { thin: 10, none: 0, ..c.clone() };
        assert!(few.flag().is_some() && !few.warns(), "under a tenth: noted, not a warning");
        assert_eq!(ContextSize { thin: 0, ..c.clone() }.flag(), None);
        let base = ContextSize { known: 12, avg_chars: Some(0.0), thin: 12, none: 12, by_design: true, unreported: 0 };
        assert_eq!(
            base.flag().unwrap(),
            "12 of 12 answers rest on under 400 characters of retrieved text — none at all: the no-retrieval baseline, by design"
        );
        assert!(!base.warns());
        // Answers that came without their retrieved text are counted apart,
        // with or without thin ones beside them; they never warn.
        let imported = ContextSize { known: 0, avg_chars: None, thin: 0, none: 0, by_design: false, unreported: 1 };
        assert_eq!(
            imported.flag().unwrap(),
            "1 answer came without its retrieved text (imported so, or the service reported none): how much it was written \
             from is not known"
        );
        assert!(!imported.warns());
        let both = ContextSize { unreported: 300, ..few };
        assert_eq!(
            both.flag().unwrap(),
            "10 of 5,000 answers rest on under 400 characters of retrieved text; 300 answers came without their retrieved \
             text (imported so, or the service reported none): how much they were written from is not known"
        );
        assert!(!both.warns());
    }
}

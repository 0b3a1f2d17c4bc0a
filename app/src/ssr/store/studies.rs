//! Studies in SQLite: the study, its items, links, raters and ratings.
//! (Tokens arrive here already hashed: `app::tokens`.)

use super::{on_db, Db};

use crate::error::{AppError, AppResult};

/// A study's row: id, project, name, intro, corpus summary, dimensions
/// JSON, target raters, open, created, kind, answer source.
pub type StudyRow = (i64, i64, String, String, String, String, Option<i64>, bool, String, String, Option<String>);

/// What a new study row holds.
pub struct NewStudy<'a> {
    pub project_id: i64,
    pub name: &'a str,
    pub intro: &'a str,
    pub corpus_summary: &'a str,
    pub dimensions: &'a str,
    pub draws: &'a str,
    pub seed: i64,
    pub target_raters: Option<i64>,
    pub kind: types::StudyKind,
    pub answer_source: Option<&'a str>,
}

/// An imported study's annotators and their scores: each annotator a
/// withdrawn link of kind `imported` (labelled with its file; no token to
/// it exists) with one finished rater, and their ratings
/// `(annotator, item index, dimension, score)`; the import's inputs as JSON.
pub struct ImportedRatings<'a> {
    /// Per annotator: the link's and the rater's (random, unusable) token
    /// hashes and the label.
    pub annotators: Vec<(String, String, String)>,
    pub ratings: Vec<(usize, usize, usize, u8)>,
    pub inputs: &'a str,
}

/// A study item as stored.
#[derive(Debug, Clone, Default)]
pub struct NewItem {
    /// None for an attention check.
    pub question_id: Option<i64>,
    pub text: String,
    pub source: String,
    pub level: Option<String>,
    /// An attention check's expected score.
    pub attention: Option<i64>,
    pub answer: Option<String>,
    pub context: Option<String>,
    pub category: Option<String>,
    /// JSON `[{"path", "definition"}]`.
    pub choices: Option<String>,
}

/// Inserts a study with its items (in order) and links `(token hash, kind, label)`, in one transaction.
pub async fn insert(
    pool: &Db,
    s: &NewStudy<'_>,
    items: &[NewItem],
    links: &[(String, types::LinkKind, String)],
) -> AppResult<i64> {
    insert_with(pool, s, items, links, None).await
}

/// [`insert`], with an import's annotators and ratings (closed: no one
/// rates an import through Assay unless the owner adds a link).
pub async fn insert_with(
    pool: &Db,
    s: &NewStudy<'_>,
    items: &[NewItem],
    links: &[(String, types::LinkKind, String)],
    imported: Option<&ImportedRatings<'_>>,
) -> AppResult<i64> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        let id: i64 = sqlx::query_scalar(
        "INSERT INTO studies (project_id, name, intro, corpus_summary, dimensions, draws, seed, target_raters, kind, answer_source)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
    )
    .bind(s.project_id)
    .bind(s.name)
    .bind(s.intro)
    .bind(s.corpus_summary)
    .bind(s.dimensions)
    .bind(s.draws)
    .bind(s.seed)
    .bind(s.target_raters)
    .bind(s.kind.as_str())
    .bind(s.answer_source)
    .fetch_one(&mut *tx)
    .await?;
        let mut item_ids = Vec::with_capacity(items.len());
        for (idx, i) in items.iter().enumerate() {
            let item: i64 = sqlx::query_scalar(
            "INSERT INTO study_items (study_id, idx, question_id, text, source, level, attention, answer, context, category, choices)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
        )
        .bind(id)
        .bind(idx as i64)
        .bind(i.question_id)
        .bind(&i.text)
        .bind(&i.source)
        .bind(&i.level)
        .bind(i.attention)
        .bind(&i.answer)
        .bind(&i.context)
        .bind(&i.category)
        .bind(&i.choices)
        .fetch_one(&mut *tx)
        .await?;
            item_ids.push(item);
        }
        for (hash, kind, label) in links {
            sqlx::query("INSERT INTO study_links (study_id, token_hash, kind, label) VALUES ($1, $2, $3, $4)")
                .bind(id)
                .bind(hash)
                .bind(kind.as_str())
                .bind(label)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(imp) = imported {
            sqlx::query("UPDATE studies SET imported = $1, is_open = $2 WHERE id = $3")
                .bind(imp.inputs)
                .bind(false)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            let mut raters = Vec::with_capacity(imp.annotators.len());
            for (n, (link_hash, rater_hash, label)) in imp.annotators.iter().enumerate() {
                let link: i64 = sqlx::query_scalar(
                    "INSERT INTO study_links (study_id, token_hash, kind, label, revoked) VALUES ($1, $2, 'imported', $3, $4) RETURNING id",
                )
                .bind(id)
                .bind(link_hash)
                .bind(label)
                .bind(true)
                .fetch_one(&mut *tx)
                .await?;
                let rater: i64 = sqlx::query_scalar(
                    "INSERT INTO raters (study_id, link_id, token_hash, order_seed, finished_at)
                     VALUES ($1, $2, $3, $4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) RETURNING id",
                )
                .bind(id)
                .bind(link)
                .bind(rater_hash)
                .bind(n as i64)
                .fetch_one(&mut *tx)
                .await?;
                raters.push(rater);
            }
            for (annotator, item, dimension, score) in &imp.ratings {
                let (Some(rater), Some(item)) = (raters.get(*annotator), item_ids.get(*item)) else {
                    return Err(AppError::Invalid(format!(
                        "a rating names annotator {annotator} or item {item}, which the import lacks"
                    )));
                };
                sqlx::query("INSERT INTO ratings (rater_id, item_id, dimension, score) VALUES ($1, $2, $3, $4)")
                    .bind(rater)
                    .bind(item)
                    .bind(*dimension as i64)
                    .bind(i64::from(*score))
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(id)
    })
}

pub async fn get(pool: &Db, id: i64) -> AppResult<StudyRow> {
    on_db!(pool, |db| {
        let row: Option<StudyRow> = sqlx::query_as(
        "SELECT id, project_id, name, intro, corpus_summary, dimensions, target_raters, is_open, created_at, kind, answer_source
           FROM studies WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
        row.ok_or_else(|| AppError::NotFound(format!("study {id} does not exist")))
    })
}

/// An imported study's inputs (JSON), `None` for a study rated in Assay.
pub async fn imported(pool: &Db, id: i64) -> AppResult<Option<String>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT imported FROM studies WHERE id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?
            .flatten())
    })
}

/// Items, attention checks among them, raters, raters who finished.
pub async fn counts(pool: &Db, id: i64) -> AppResult<(i64, i64, i64, i64)> {
    on_db!(pool, |db| {
        let (items, attention): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COUNT(attention) FROM study_items WHERE study_id = $1")
                .bind(id)
                .fetch_one(db)
                .await?;
        let (raters, completed): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COUNT(finished_at) FROM raters WHERE study_id = $1")
                .bind(id)
                .fetch_one(db)
                .await?;
        Ok((items, attention, raters, completed))
    })
}

/// What a study's results are made of, as a string that changes whenever
/// they do: its human ratings (how many, the latest, how many raters) and
/// its latest LLM rating job's progress. One query: the results page polls
/// it while raters may be at work.
pub async fn results_version(pool: &Db, study: i64) -> AppResult<String> {
    on_db!(pool, |db| {
        let (n, last, raters, llm): (i64, Option<String>, i64, Option<String>) = sqlx::query_as(
        "SELECT COUNT(r.rater_id), MAX(r.rated_at),
                (SELECT COUNT(*) FROM raters WHERE study_id = $1),
                (SELECT id || ':' || status || ':' || done || ':' || failed FROM jobs
                  WHERE kind = $2 AND CAST(json_extract(parameters, '$.study_id') AS BIGINT) = $1 ORDER BY id DESC LIMIT 1)
         FROM ratings r JOIN raters ra ON ra.id = r.rater_id WHERE ra.study_id = $1",
    )
    .bind(study)
    .bind(crate::model::JobKind::StudyRating.as_str())
    .fetch_one(db)
    .await?;
        Ok(format!("{n}:{}:{raters}|{}", last.unwrap_or_default(), llm.unwrap_or_default()))
    })
}

/// A study's links: (id, kind, label, withdrawn).
pub async fn links(pool: &Db, id: i64) -> AppResult<Vec<crate::model::LinkView>> {
    let rows: Vec<(i64, String, Option<String>, bool)> = on_db!(pool, |db| {
        sqlx::query_as("SELECT id, kind, label, revoked FROM study_links WHERE study_id = $1 ORDER BY id")
            .bind(id)
            .fetch_all(db)
            .await
    })?;
    rows.into_iter()
        .map(|(id, kind, label, revoked)| {
            Ok(crate::model::LinkView { id, kind: super::stored("study_links", id, &kind)?, label, revoked })
        })
        .collect()
}

pub async fn ids(pool: &Db, project_id: i64) -> AppResult<Vec<i64>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT id FROM studies WHERE project_id = $1 ORDER BY id DESC")
            .bind(project_id)
            .fetch_all(db)
            .await?)
    })
}

/// A project's studies that drew items from question set `set_id`, newest first.
pub async fn drawn_from(pool: &Db, project_id: i64, set_id: i64) -> AppResult<Vec<i64>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
            "SELECT s.id FROM studies s WHERE s.project_id = $1
           AND EXISTS (SELECT 1 FROM json_each(s.draws) d WHERE CAST(json_extract(d.value, '$.set_id') AS BIGINT) = $2)
         ORDER BY s.id DESC",
        )
        .bind(project_id)
        .bind(set_id)
        .fetch_all(db)
        .await?)
    })
}

pub async fn set_open(pool: &Db, id: i64, open: bool) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("UPDATE studies SET is_open = $1 WHERE id = $2").bind(open).bind(id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("study {id} does not exist")));
        }
        Ok(())
    })
}

pub async fn insert_link(pool: &Db, id: i64, token_hash: &str, kind: types::LinkKind, label: &str) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query("INSERT INTO study_links (study_id, token_hash, kind, label) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(token_hash)
            .bind(kind.as_str())
            .bind(label)
            .execute(db)
            .await?;
        Ok(())
    })
}

/// Makes every link of a study expire `days` from now.
pub async fn expire_links_in(pool: &Db, study: i64, days: u32) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(&format!(
        "UPDATE study_links SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+{days} days') WHERE study_id = $1"
    ))
        .bind(study)
        .execute(db)
        .await?;
        Ok(())
    })
}

pub async fn revoke_link(pool: &Db, link_id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("UPDATE study_links SET revoked = TRUE WHERE id = $1").bind(link_id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("link {link_id} does not exist")));
        }
        Ok(())
    })
}

pub async fn delete(pool: &Db, id: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("DELETE FROM studies WHERE id = $1").bind(id).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("study {id} does not exist")));
        }
        Ok(())
    })
}

/// A live link (not withdrawn, not expired): (link id, study id, kind).
pub async fn live_link(pool: &Db, token_hash: &str) -> AppResult<Option<(i64, i64, types::LinkKind)>> {
    let row: Option<(i64, i64, String)> = on_db!(pool, |db| {
        Ok::<_, AppError>(sqlx::query_as(
        "SELECT id, study_id, kind FROM study_links
          WHERE token_hash = $1 AND revoked = FALSE AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
    )
    .bind(token_hash)
    .fetch_optional(db)
    .await?)
    })?;
    row.map(|(id, study, kind)| Ok((id, study, super::stored("study_links", id, &kind)?))).transpose()
}

/// A rater at a link: (id, finished at, order seed).
pub async fn rater(
    pool: &Db,
    token_hash: &str,
    study: i64,
    link: i64,
) -> AppResult<Option<(i64, Option<String>, i64)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT id, finished_at, order_seed FROM raters WHERE token_hash = $1 AND study_id = $2 AND link_id = $3",
        )
        .bind(token_hash)
        .bind(study)
        .bind(link)
        .fetch_optional(db)
        .await?)
    })
}

/// Adds a rater (or finds the one a concurrent request just added).
/// Raters of a study who came through an open link and rated something.
pub async fn open_link_raters(pool: &Db, study: i64) -> AppResult<i64> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM raters r JOIN study_links l ON l.id = r.link_id
          WHERE r.study_id = $1 AND l.kind = 'open' AND EXISTS (SELECT 1 FROM ratings x WHERE x.rater_id = r.id)",
        )
        .bind(study)
        .fetch_one(db)
        .await?)
    })
}

pub async fn insert_rater(pool: &Db, study: i64, link: i64, token_hash: &str, seed: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        sqlx::query(
        "INSERT INTO raters (study_id, link_id, token_hash, order_seed) VALUES ($1, $2, $3, $4) ON CONFLICT(token_hash) DO NOTHING",
    )
    .bind(study)
    .bind(link)
    .bind(token_hash)
    .bind(seed)
    .execute(db)
    .await?;
        Ok(())
    })
}

/// What a rater (or the LLM rater) reads of an item: id, text, answer,
/// source passage, choices JSON.
pub type RaterItemRow = (i64, String, Option<String>, Option<String>, Option<String>);

/// A study's items in their stored order.
pub async fn items(pool: &Db, study: i64) -> AppResult<Vec<RaterItemRow>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT id, text, answer, context, choices FROM study_items WHERE study_id = $1 ORDER BY idx",
        )
        .bind(study)
        .fetch_all(db)
        .await?)
    })
}

/// A rater's ratings: (item, dimension, score).
pub async fn ratings_of(pool: &Db, rater: i64) -> AppResult<Vec<(i64, i64, i64)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as("SELECT item_id, dimension, score FROM ratings WHERE rater_id = $1")
            .bind(rater)
            .fetch_all(db)
            .await?)
    })
}

/// An item of the study: `Some(its choices JSON)`, or `None` when the
/// study has no such item.
pub async fn item_choices(pool: &Db, study: i64, item: i64) -> AppResult<Option<Option<String>>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT choices FROM study_items WHERE id = $1 AND study_id = $2")
            .bind(item)
            .bind(study)
            .fetch_optional(db)
            .await?)
    })
}

/// A rater's scores for an item (one per dimension), replacing earlier
/// ones, in one transaction that first holds the rater's row while it is
/// unfinished: a rating racing the rater's finish lands before it or is
/// refused (409), never after it.
pub async fn upsert_scores(pool: &Db, rater: i64, item: i64, scores: &[u8]) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        let open = sqlx::query("UPDATE raters SET finished_at = finished_at WHERE id = $1 AND finished_at IS NULL")
            .bind(rater)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if open == 0 {
            return Err(AppError::Conflict("you have already submitted this study: thank you".into()));
        }
        for (d, s) in scores.iter().enumerate() {
            sqlx::query(
            "INSERT INTO ratings (rater_id, item_id, dimension, score) VALUES ($1, $2, $3, $4)
             ON CONFLICT(rater_id, item_id, dimension) DO UPDATE SET score = excluded.score, rated_at = excluded.rated_at",
        )
        .bind(rater)
        .bind(item)
        .bind(d as i64)
        .bind(*s as i64)
        .execute(&mut *tx)
        .await?;
        }
        tx.commit().await?;
        Ok(())
    })
}

/// Items a rater has rated, and of how many.
pub async fn progress(pool: &Db, study: i64, rater: i64) -> AppResult<(i64, i64)> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT (SELECT COUNT(DISTINCT item_id) FROM ratings WHERE rater_id = $1),
                (SELECT COUNT(*) FROM study_items WHERE study_id = $2)",
        )
        .bind(rater)
        .bind(study)
        .fetch_one(db)
        .await?)
    })
}

/// Marks a rater finished. The row is held first and the time taken by a
/// second statement, so the finish is stamped after every rating that
/// held the row before it (PostgreSQL stamps a statement's start, which a
/// wait for the row would otherwise precede).
pub async fn finish(pool: &Db, rater: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let mut tx = super::begin(db).await?;
        sqlx::query("UPDATE raters SET finished_at = finished_at WHERE id = $1 AND finished_at IS NULL")
            .bind(rater)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "UPDATE raters SET finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = $1 AND finished_at IS NULL",
        )
        .bind(rater)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    })
}

/// An item as the results read it: id, source, level, attention score,
/// category, choices JSON.
pub type ResultItemRow = (i64, String, Option<String>, Option<i64>, Option<String>, Option<String>);

pub async fn result_items(pool: &Db, study: i64) -> AppResult<Vec<ResultItemRow>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT id, source, level, attention, category, choices FROM study_items WHERE study_id = $1",
        )
        .bind(study)
        .fetch_all(db)
        .await?)
    })
}

/// Every rating of a study: (rater, item, dimension, score).
pub async fn all_ratings(pool: &Db, study: i64) -> AppResult<Vec<(i64, i64, i64, i64)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
        "SELECT r.rater_id, r.item_id, r.dimension, r.score FROM ratings r JOIN raters ra ON ra.id = r.rater_id WHERE ra.study_id = $1",
    )
    .bind(study)
    .fetch_all(db)
    .await?)
    })
}

/// A rating as the CSV lists it (with the item's choices JSON last).
pub type CsvRow = (i64, i64, Option<i64>, String, Option<String>, Option<i64>, i64, i64, String, Option<String>);

pub async fn csv_rows(pool: &Db, study: i64) -> AppResult<Vec<CsvRow>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
        "SELECT r.rater_id, r.item_id, i.question_id, i.source, i.level, i.attention, r.dimension, r.score, r.rated_at, i.choices
           FROM ratings r JOIN study_items i ON i.id = r.item_id WHERE i.study_id = $1 ORDER BY r.rater_id, i.idx, r.dimension",
    )
    .bind(study)
    .fetch_all(db)
    .await?)
    })
}

/// An answer-validation study's people's mean score per question on
/// dimension `dimension` (attention checks left out): (question, mean,
/// ratings).
pub async fn answer_means(pool: &Db, study: i64, dimension: i64) -> AppResult<Vec<(i64, f64, i64)>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_as(
            "SELECT i.question_id, AVG(CAST(r.score AS DOUBLE PRECISION)), COUNT(*)
               FROM study_items i JOIN ratings r ON r.item_id = i.id
              WHERE i.study_id = $1 AND i.attention IS NULL AND i.question_id IS NOT NULL AND r.dimension = $2
              GROUP BY i.question_id",
        )
        .bind(study)
        .bind(dimension)
        .fetch_all(db)
        .await?)
    })
}

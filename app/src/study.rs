//! Question-rating studies over the store (seed 000 §V-C): creating one (a
//! seeded draw from question sets, attention checks, links), the rater's
//! side at a link (a session, ratings, finishing), and the results; shared
//! by the server functions and the CLI. Rater links need no account: their
//! tokens are random (192 bits), stored only as SHA-256 hashes, revocable.

use engine::study::{self, Candidate, Dimension};
use serde_json::json;
use sqlx::SqlitePool;

use crate::error::{AppError, AppResult};
use crate::model::{DimensionView, RaterSession, StudyResultsView, StudySummaryRow, StudyView};
use crate::store;
use crate::tokens::{hash, new_token};

/// What a new study is asked to be.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyRequest {
    pub project_id: i64,
    pub name: String,
    /// `(question set, how many to draw)`.
    pub draws: Vec<(i64, usize)>,
    /// `None`: seed 000's three.
    pub dimensions: Option<Vec<Dimension>>,
    pub intro: String,
    pub corpus_summary: String,
    pub attention_checks: usize,
    pub target_raters: Option<i64>,
    /// Per-rater links to make besides the open link.
    pub rater_links: usize,
    pub seed: u64,
    /// The links stop working this many days from now (`None`: never).
    pub expires_days: Option<u32>,
}

/// A new study's id and its links' tokens (shown once: only hashes are kept).
#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    pub study_id: i64,
    pub open_token: String,
    pub rater_tokens: Vec<String>,
}

fn dims_view(d: &[Dimension]) -> Vec<DimensionView> {
    d.iter()
        .map(|d| DimensionView { name: d.name.clone(), definition: d.definition.clone(), labels: d.labels.to_vec() })
        .collect()
}

pub async fn create(pool: &SqlitePool, req: &StudyRequest) -> AppResult<Created> {
    store::get_project(pool, req.project_id).await?;
    if req.name.trim().is_empty() {
        return Err(AppError::Invalid("give the study a name".into()));
    }
    let dimensions = req.dimensions.clone().unwrap_or_else(study::default_dimensions);
    if dimensions.is_empty() || dimensions.len() > 10 {
        return Err(AppError::Invalid("a study rates 1 to 10 dimensions".into()));
    }
    if let Some(d) = dimensions.iter().find(|d| d.name.trim().is_empty()) {
        return Err(AppError::Invalid(format!("every dimension needs a name (\"{}\")", d.definition)));
    }
    if req.draws.is_empty() {
        return Err(AppError::Invalid("choose at least one question set to draw from".into()));
    }
    let mut items: Vec<Candidate> = Vec::new();
    for (i, (set_id, count)) in req.draws.iter().enumerate() {
        let set = store::questions::get_set(pool, *set_id).await?;
        if set.project_id != req.project_id {
            return Err(AppError::Invalid(format!("question set {set_id} is in another project")));
        }
        if *count == 0 {
            return Err(AppError::Invalid(format!("draw at least one question from set {set_id}")));
        }
        if *count > set.questions as usize {
            return Err(AppError::Invalid(format!(
                "question set {set_id} has {} questions, fewer than the {count} asked for",
                set.questions
            )));
        }
        let candidates: Vec<Candidate> = store::questions::list_questions(pool, *set_id)
            .await?
            .into_iter()
            .map(|q| Candidate {
                question_id: q.id,
                text: q.question,
                source: format!("#{} {}", set.id, set.kind),
                level: q.level.or(q.category),
            })
            .collect();
        items.extend(study::draw(&candidates, *count, req.seed.wrapping_add(i as u64)));
    }
    if req.attention_checks > 5 {
        return Err(AppError::Invalid("at most 5 attention checks".into()));
    }
    let mut rows: Vec<store::studies::NewItem> =
        items.iter().map(|q| (Some(q.question_id), q.text.clone(), q.source.clone(), q.level.clone(), None)).collect();
    for n in 0..req.attention_checks {
        let (text, expected) = study::attention_check(n);
        rows.push((None, text, "attention check".into(), None, Some(expected as i64)));
    }
    let open_token = new_token()?;
    let mut links = vec![(hash(&open_token), "open", "open link".to_string())];
    let mut rater_tokens = Vec::new();
    for n in 0..req.rater_links {
        let t = new_token()?;
        links.push((hash(&t), "rater", format!("rater {}", n + 1)));
        rater_tokens.push(t);
    }
    let dims_json = serde_json::to_string(&dimensions).unwrap_or_default();
    let draws_json =
        json!(req.draws.iter().map(|(s, c)| json!({"set_id": s, "count": c})).collect::<Vec<_>>()).to_string();
    let new = store::studies::NewStudy {
        project_id: req.project_id,
        name: req.name.trim(),
        intro: &req.intro,
        corpus_summary: &req.corpus_summary,
        dimensions: &dims_json,
        draws: &draws_json,
        seed: req.seed as i64,
        target_raters: req.target_raters,
    };
    let id = store::studies::insert(pool, &new, &rows, &links).await?;
    if let Some(days) = req.expires_days {
        store::studies::expire_links_in(pool, id, days).await?;
    }
    Ok(Created { study_id: id, open_token, rater_tokens })
}

async fn dimensions_of(pool: &SqlitePool, id: i64) -> AppResult<Vec<Dimension>> {
    let row = store::studies::get(pool, id).await?;
    serde_json::from_str(&row.5).map_err(|_| AppError::Internal)
}

pub async fn view(pool: &SqlitePool, id: i64) -> AppResult<StudyView> {
    let (id, project_id, name, intro, corpus_summary, dimensions, target_raters, is_open, created_at) =
        store::studies::get(pool, id).await?;
    let dimensions: Vec<Dimension> = serde_json::from_str(&dimensions).unwrap_or_default();
    let (items, attention, raters, completed) = store::studies::counts(pool, id).await?;
    Ok(StudyView {
        id,
        project_id,
        name,
        intro,
        corpus_summary,
        dimensions: dims_view(&dimensions),
        items: items - attention,
        attention_checks: attention,
        target_raters,
        raters,
        completed,
        is_open,
        links: store::studies::links(pool, id).await?,
        created_at,
    })
}

pub async fn list(pool: &SqlitePool, project_id: i64) -> AppResult<Vec<StudyView>> {
    let mut out = Vec::new();
    for id in store::studies::ids(pool, project_id).await? {
        out.push(view(pool, id).await?);
    }
    Ok(out)
}

pub async fn set_open(pool: &SqlitePool, id: i64, open: bool) -> AppResult<()> {
    store::studies::set_open(pool, id, open).await
}

/// A new per-rater link (or open link); its token, shown once.
pub async fn add_link(pool: &SqlitePool, id: i64, kind: &str, label: &str) -> AppResult<String> {
    view(pool, id).await?;
    if kind != "open" && kind != "rater" {
        return Err(AppError::Invalid(format!("a link is open or rater, not \"{kind}\"")));
    }
    let t = new_token()?;
    store::studies::insert_link(pool, id, &hash(&t), kind, label).await?;
    Ok(t)
}

pub async fn revoke_link(pool: &SqlitePool, link_id: i64) -> AppResult<()> {
    store::studies::revoke_link(pool, link_id).await
}

pub async fn delete(pool: &SqlitePool, id: i64) -> AppResult<()> {
    store::studies::delete(pool, id).await
}

/// The link a token opens: (link id, study id, kind). Unknown, revoked and
/// expired links are all "not found": a guess learns nothing.
async fn link(pool: &SqlitePool, token: &str) -> AppResult<(i64, i64, String)> {
    store::studies::live_link(pool, &hash(token.trim()))
        .await?
        .ok_or_else(|| AppError::NotFound("this study link does not exist or was withdrawn".into()))
}

/// The rater a request speaks for: `(rater id, finished, order seed)`.
async fn rater_of(pool: &SqlitePool, study: i64, link_id: i64, rater: &str) -> AppResult<(i64, bool, i64)> {
    let row = store::studies::rater(pool, &hash(rater.trim()), study, link_id).await?;
    row.map(|(id, f, seed)| (id, f.is_some(), seed))
        .ok_or_else(|| AppError::NotFound("this rater is not known at this link".into()))
}

/// Opens (or resumes) a rater's session at a link. A per-rater link is its
/// own rater; at an open link the browser's `rater` token resumes its
/// session, and a browser without one gets a new rater.
pub async fn session(pool: &SqlitePool, token: &str, rater: Option<&str>) -> AppResult<RaterSession> {
    let (link_id, study_id, kind) = link(pool, token).await?;
    let s = view(pool, study_id).await?;
    let rater_token = if kind == "rater" { token.trim().to_string() } else { rater.unwrap_or("").trim().to_string() };
    let known = if rater_token.is_empty() { None } else { rater_of(pool, study_id, link_id, &rater_token).await.ok() };
    let (rater_token, (rater_id, finished, seed)) = match known {
        Some(r) => (rater_token, r),
        None if !s.is_open => {
            return Ok(RaterSession {
                study: s.name,
                intro: String::new(),
                corpus_summary: String::new(),
                dimensions: Vec::new(),
                is_open: false,
                rater: String::new(),
                items: Vec::new(),
                ratings: Vec::new(),
                finished: false,
            })
        }
        None => {
            let t = if kind == "rater" { rater_token } else { new_token()? };
            let seed = random_seed();
            store::studies::insert_rater(pool, study_id, link_id, &hash(&t), seed).await?;
            let r = rater_of(pool, study_id, link_id, &t).await?;
            (t, r)
        }
    };
    let items = store::studies::items(pool, study_id).await?;
    let order = study::order_for(seed as u64, items.len());
    let items: Vec<(i64, String)> = order.into_iter().map(|i| items[i].clone()).collect();
    let rows = store::studies::ratings_of(pool, rater_id).await?;
    let dims = s.dimensions.len();
    let mut ratings: Vec<(i64, Vec<u8>)> = Vec::new();
    for (item, d, score) in rows {
        let at = match ratings.iter().position(|(i, _)| *i == item) {
            Some(p) => p,
            None => {
                ratings.push((item, vec![0; dims]));
                ratings.len() - 1
            }
        };
        if let Some(slot) = ratings[at].1.get_mut(d as usize) {
            *slot = score as u8;
        }
    }
    Ok(RaterSession {
        study: s.name,
        intro: s.intro,
        corpus_summary: s.corpus_summary,
        dimensions: s.dimensions,
        is_open: s.is_open,
        rater: rater_token,
        items,
        ratings,
        finished,
    })
}

fn random_seed() -> i64 {
    let mut b = [0u8; 8];
    let _ = getrandom::fill(&mut b);
    (u64::from_le_bytes(b) >> 1) as i64
}

async fn open_rater(pool: &SqlitePool, token: &str, rater: &str) -> AppResult<(i64, i64, usize)> {
    let (link_id, study_id, kind) = link(pool, token).await?;
    let rater = if kind == "rater" { token } else { rater };
    let (rater_id, finished, _) = rater_of(pool, study_id, link_id, rater).await?;
    let open = store::studies::get(pool, study_id).await?.7;
    if !open {
        return Err(AppError::Conflict("this study is closed".into()));
    }
    if finished {
        return Err(AppError::Conflict("you have already submitted this study: thank you".into()));
    }
    Ok((study_id, rater_id, dimensions_of(pool, study_id).await?.len()))
}

/// Records a rater's scores for one item (one per dimension, 1–5),
/// replacing earlier ones for it. Returns how many items the rater has
/// rated, and of how many.
pub async fn rate(pool: &SqlitePool, token: &str, rater: &str, item: i64, scores: &[u8]) -> AppResult<(i64, i64)> {
    let (study_id, rater_id, dims) = open_rater(pool, token, rater).await?;
    if scores.len() != dims || scores.iter().any(|s| !(1..=5).contains(s)) {
        return Err(AppError::Invalid(format!("give {dims} scores from 1 to 5, one per dimension")));
    }
    if !store::studies::has_item(pool, study_id, item).await? {
        return Err(AppError::NotFound(format!("item {item} is not in this study")));
    }
    store::studies::upsert_scores(pool, rater_id, item, scores).await?;
    progress(pool, study_id, rater_id).await
}

async fn progress(pool: &SqlitePool, study_id: i64, rater_id: i64) -> AppResult<(i64, i64)> {
    store::studies::progress(pool, study_id, rater_id).await
}

/// Submits a rater's study: every item must be rated; afterwards nothing
/// changes (one submission per rater).
pub async fn finish(pool: &SqlitePool, token: &str, rater: &str) -> AppResult<()> {
    let (study_id, rater_id, _) = open_rater(pool, token, rater).await?;
    let (done, total) = progress(pool, study_id, rater_id).await?;
    if done < total {
        return Err(AppError::Invalid(format!("{} of {total} items are not rated yet", total - done)));
    }
    store::studies::finish(pool, rater_id).await
}

/// The results of a study.
pub async fn results(pool: &SqlitePool, id: i64) -> AppResult<(StudyView, study::Results)> {
    let v = view(pool, id).await?;
    let items: Vec<study::Item> = store::studies::result_items(pool, id)
        .await?
        .into_iter()
        .map(|(id, source, level, attention)| study::Item { id, source, level, attention: attention.map(|a| a as u8) })
        .collect();
    let ratings: Vec<study::Rating> = store::studies::all_ratings(pool, id)
        .await?
        .into_iter()
        .map(|(rater, item, d, s)| study::Rating { rater, item, dimension: d as usize, score: s as u8 })
        .collect();
    let names: Vec<String> = v.dimensions.iter().map(|d| d.name.clone()).collect();
    let r = study::results(&items, names.len(), &ratings, &names);
    Ok((v, r))
}

pub async fn results_view(pool: &SqlitePool, id: i64) -> AppResult<StudyResultsView> {
    let (v, r) = results(pool, id).await?;
    let rows = |pick: fn(&study::DimensionResults) -> &Vec<study::Summary>| -> Vec<StudySummaryRow> {
        r.dimensions
            .iter()
            .flat_map(|d| {
                pick(d).iter().map(|s| StudySummaryRow {
                    dimension: d.dimension.clone(),
                    group: s.group.clone(),
                    n: s.n,
                    mean: s.mean,
                    ci: s.ci,
                    distribution: s.distribution,
                })
            })
            .collect()
    };
    Ok(StudyResultsView {
        by_source: rows(|d| &d.by_source),
        by_level: rows(|d| &d.by_level),
        agreement: r
            .dimensions
            .iter()
            .map(|d| {
                (
                    d.dimension.clone(),
                    d.agreement.fleiss_kappa,
                    d.agreement.fleiss_items,
                    d.agreement.krippendorff_alpha,
                )
            })
            .collect(),
        chart_svg: study::chart_svg(&format!("{} — mean score per dimension and question source", v.name), &r),
        raters: r.raters,
        completed: r.completed,
        failed_attention: r.failed_attention,
        study: v,
    })
}

/// Every rating as CSV: rater, item, question id, source, level, dimension, score.
pub async fn ratings_csv(pool: &SqlitePool, id: i64) -> AppResult<String> {
    let v = view(pool, id).await?;
    let rows = store::studies::csv_rows(pool, id).await?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| AppError::Invalid(e.to_string());
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
    for (rater, item, q, source, level, attention, d, score, at) in rows {
        let dim = v.dimensions.get(d as usize).map_or(d.to_string(), |x| x.name.clone());
        w.write_record([
            rater.to_string(),
            item.to_string(),
            q.map_or(String::new(), |q| q.to_string()),
            source,
            level.unwrap_or_default(),
            attention.map_or(String::new(), |a| a.to_string()),
            dim,
            score.to_string(),
            at,
        ])
        .map_err(err)?;
    }
    String::from_utf8(w.into_inner().map_err(|e| AppError::Invalid(e.to_string()))?).map_err(|_| AppError::Internal)
}

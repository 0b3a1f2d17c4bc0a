//! Running a study: creating it, its links, the rater's session at a link,
//! and the LLM rater's job.

use std::collections::HashMap;

use crate::ssr::store::Db;
use engine::study::rate::{Choice, RateItem};
use engine::study::{self, Candidate, Dimension, Kind};
use serde_json::json;
use types::requests::{Draw, StudyRequest};
use types::{LinkKind, StudyKind};

use super::*;
use crate::error::{AppError, AppResult};
use crate::model::{JobView, RaterItem, RaterSession, StudyView};
use crate::ssr::jobs::params::StudyRatingParams;
use crate::ssr::jobs::{self, Ended, Items, JobParams, Run, Stage};
use crate::ssr::store;
use crate::ssr::tokens::{hash, new_token};
use engine::jobs::WorkItem;

/// A study as asked for: its project and name, the request and its
/// dimensions (`None`: the kind's own — the paper's three Likert scales,
/// or HieraRAG's answer validation).
#[derive(Debug, Clone, PartialEq)]
pub struct StudySpec {
    pub project_id: i64,
    pub name: String,
    pub request: StudyRequest,
    pub dimensions: Option<Vec<Dimension>>,
}

/// A new study's id and its links' tokens (shown once: only hashes are kept).
#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    pub study_id: i64,
    /// Empty when the study has no open link.
    pub open_token: String,
    pub rater_tokens: Vec<String>,
}

/// Checks a study's dimensions: 1 to 10, named uniquely, each scale with
/// 2 to 11 points from 0–10 up, choices only when rating answers.
pub fn check_dimensions(dimensions: &[Dimension], kind: Kind) -> AppResult<()> {
    if dimensions.is_empty() || dimensions.len() > 10 {
        return Err(AppError::Invalid("a study rates 1 to 10 dimensions".into()));
    }
    let mut names = std::collections::HashSet::new();
    for d in dimensions {
        if d.name.trim().is_empty() {
            return Err(AppError::Invalid(format!("every dimension needs a name (\"{}\")", d.definition)));
        }
        if !names.insert(d.name.trim().to_lowercase()) {
            return Err(AppError::Invalid(format!("the dimension \"{}\" is named twice", d.name)));
        }
        if d.choice {
            if kind != Kind::Answers {
                return Err(AppError::Invalid(format!(
                    "\"{}\" is a category choice: only answer-validation studies have one",
                    d.name
                )));
            }
        } else if !(2..=11).contains(&d.labels.len()) || d.min > 10 {
            return Err(AppError::Invalid(format!(
                "\"{}\": a scale has 2 to 11 labelled points starting at 0 to 10",
                d.name
            )));
        }
    }
    Ok(())
}

/// What an answer-validation item carries besides its question.
#[derive(Default, Clone)]
struct Extras {
    answer: Option<String>,
    context: Option<String>,
    category: Option<String>,
    choices: Vec<Choice>,
}

/// A question's category choices: the categories at its label's level in
/// its dimension of the set's hierarchy (`None` for no single category).
fn choices_for(h: &engine::questions::hierarchy::Hierarchy, category: &str) -> Option<Vec<Choice>> {
    if category.contains(" × ") {
        return None;
    }
    let (code, path) = category.split_once('/')?;
    let depth = path.matches('/').count();
    let dim = h.get(code)?;
    let level = engine::questions::hierarchy::at_level(dim, depth);
    level.iter().any(|(p, _)| p == path).then(|| {
        level.iter().map(|(p, c)| Choice { path: format!("{code}/{p}"), definition: c.definition.clone() }).collect()
    })
}

/// The candidates of one draw of an answer-validation study: the set's
/// questions that have an answer (the reference answer, or the answer
/// set's), with their source passage and category choices.
async fn answer_candidates(
    pool: &Db,
    set: &crate::model::QuestionSetView,
    answers: Option<i64>,
    chunks: &HashMap<i64, String>,
) -> AppResult<(Vec<Candidate>, HashMap<i64, Extras>)> {
    let (source, texts): (String, Option<HashMap<i64, String>>) = match answers {
        Some(a) => {
            let aset = store::answers::get_set(pool, a).await?;
            if aset.question_set_id != set.id {
                return Err(AppError::Invalid(format!(
                    "answer set {a} answers question set {}, not {}",
                    aset.question_set_id, set.id
                )));
            }
            (format!("answers #{a} {}", aset.method), Some(store::answers::texts(pool, a).await?.into_iter().collect()))
        }
        None => ("reference answers".into(), None),
    };
    let hierarchy: engine::questions::hierarchy::Hierarchy = serde_json::from_str::<serde_json::Value>(&set.parameters)
        .ok()
        .and_then(|p| serde_json::from_value(p["hierarchy"].clone()).ok())
        .unwrap_or_else(engine::questions::hierarchy::default_hierarchy);
    let mut candidates = Vec::new();
    let mut extras = HashMap::new();
    for q in store::questions::list_questions(pool, set.id).await? {
        let answer = match &texts {
            Some(t) => t.get(&q.id).cloned(),
            None => q.reference_answer.clone(),
        };
        let Some(answer) = answer.filter(|a| !a.trim().is_empty()) else { continue };
        let context: Vec<&str> = q.source_chunk_ids.iter().filter_map(|c| chunks.get(c).map(String::as_str)).collect();
        let choices = q.category.as_deref().and_then(|c| choices_for(&hierarchy, c));
        let category = choices.as_ref().and(q.category.clone());
        candidates.push(Candidate {
            question_id: q.id,
            text: q.question.clone(),
            source: source.clone(),
            level: category.as_deref().map(study::level_of).or(q.level.clone()),
        });
        extras.insert(
            q.id,
            Extras {
                answer: Some(answer),
                context: (!context.is_empty()).then(|| context.join("\n\n")),
                category,
                choices: choices.unwrap_or_default(),
            },
        );
    }
    Ok((candidates, extras))
}

pub async fn create(pool: &Db, spec: &StudySpec) -> AppResult<Created> {
    let req = &spec.request;
    req.validate().map_err(|e| AppError::Invalid(e.to_string()))?;
    store::projects::get_project(pool, spec.project_id).await?;
    if spec.name.trim().is_empty() {
        return Err(AppError::Invalid("give the study a name".into()));
    }
    let mut dimensions = spec.dimensions.clone().unwrap_or_else(|| engine::study::kind_dimensions(req.kind));
    check_dimensions(&dimensions, req.kind)?;
    let chunks: HashMap<i64, String> = if req.kind == Kind::Answers {
        store::documents::chunk_texts(pool, spec.project_id).await?.into_iter().collect()
    } else {
        HashMap::new()
    };
    let mut items: Vec<Candidate> = Vec::new();
    let mut extras: HashMap<i64, Extras> = HashMap::new();
    for (i, &Draw { set: set_id, count }) in req.questions.iter().enumerate() {
        let set = store::questions::get_set(pool, set_id).await?;
        if set.project_id != spec.project_id {
            return Err(AppError::Invalid(format!("question set {set_id} is in another project")));
        }
        let candidates: Vec<Candidate> = if req.kind == Kind::Answers {
            let (c, e) = answer_candidates(pool, &set, req.answers, &chunks).await?;
            extras.extend(e);
            c
        } else {
            store::questions::list_questions(pool, set_id)
                .await?
                .into_iter()
                .map(|q| Candidate {
                    question_id: q.id,
                    text: q.question,
                    source: format!("#{} {}", set.id, set.kind),
                    level: q.level.or(q.category),
                })
                .collect()
        };
        if count > candidates.len() {
            let what = if req.kind == Kind::Answers { " with an answer" } else { "" };
            return Err(AppError::Invalid(format!(
                "question set {set_id} has {} questions{what}, fewer than the {count} asked for",
                candidates.len()
            )));
        }
        items.extend(study::draw(&candidates, count, req.seed.wrapping_add(i as u64)));
    }
    // A category pick needs every item to have a single category.
    if req.kind == Kind::Answers {
        if let Some(q) = items.iter().find(|q| extras.get(&q.question_id).is_none_or(|e| e.choices.is_empty())) {
            if spec.dimensions.as_ref().is_some_and(|d| d.iter().any(|d| d.choice)) {
                return Err(AppError::Invalid(format!(
                    "a category choice needs questions with one hierarchical category each; question {} has none",
                    q.question_id
                )));
            }
            dimensions.retain(|d| !d.choice);
        }
    }
    let mut rows: Vec<store::studies::NewItem> = items
        .iter()
        .map(|q| {
            let e = extras.remove(&q.question_id).unwrap_or_default();
            store::studies::NewItem {
                question_id: Some(q.question_id),
                text: q.text.clone(),
                source: q.source.clone(),
                level: q.level.clone(),
                attention: None,
                answer: e.answer,
                context: e.context,
                category: e.category,
                choices: (!e.choices.is_empty()).then(|| serde_json::to_string(&e.choices).unwrap_or_default()),
            }
        })
        .collect();
    for n in 0..req.attention_checks {
        let (text, expected) = study::attention_check(n);
        rows.push(store::studies::NewItem {
            text,
            source: "attention check".into(),
            attention: Some(expected as i64),
            ..Default::default()
        });
    }
    let open_link = !req.no_open_link;
    let open_token = if open_link { new_token()? } else { String::new() };
    let mut links = Vec::new();
    if open_link {
        links.push((hash(&open_token), LinkKind::Open, "open link".to_string()));
    }
    let mut rater_tokens = Vec::new();
    for n in 0..req.rater_links {
        let t = new_token()?;
        links.push((hash(&t), LinkKind::Rater, format!("rater {}", n + 1)));
        rater_tokens.push(t);
    }
    let dims_json = serde_json::to_string(&dimensions).unwrap_or_default();
    let draws_json =
        json!(req.questions.iter().map(|d| json!({"set_id": d.set, "count": d.count})).collect::<Vec<_>>()).to_string();
    let answer_source =
        (req.kind == Kind::Answers).then(|| req.answers.map_or("reference".to_string(), |a| format!("answers:{a}")));
    let new = store::studies::NewStudy {
        project_id: spec.project_id,
        name: spec.name.trim(),
        intro: &req.intro,
        corpus_summary: &req.corpus_summary,
        dimensions: &dims_json,
        draws: &draws_json,
        seed: req.seed as i64,
        target_raters: req.target_raters.map(|t| t as i64),
        kind: req.kind,
        answer_source: answer_source.as_deref(),
    };
    let id = store::studies::insert(pool, &new, &rows, &links).await?;
    if let Some(days) = req.expires_days {
        store::studies::expire_links_in(pool, id, days as u32).await?;
    }
    Ok(Created { study_id: id, open_token, rater_tokens })
}

pub(super) async fn dimensions_of(pool: &Db, id: i64) -> AppResult<Vec<Dimension>> {
    let row = store::studies::get(pool, id).await?;
    serde_json::from_str(&row.5).map_err(|_| AppError::Internal)
}

pub async fn view(pool: &Db, id: i64) -> AppResult<StudyView> {
    let (
        id,
        project_id,
        name,
        intro,
        corpus_summary,
        dimensions,
        target_raters,
        is_open,
        created_at,
        kind,
        answer_source,
    ) = store::studies::get(pool, id).await?;
    let dimensions: Vec<Dimension> = serde_json::from_str(&dimensions)
        .map_err(|e| AppError::Invalid(format!("study {id}: its stored dimensions cannot be read ({e})")))?;
    let kind = store::stored("studies", id, &kind)?;
    let (items, attention, raters, completed) = store::studies::counts(pool, id).await?;
    Ok(StudyView {
        id,
        project_id,
        name,
        intro,
        corpus_summary,
        dimensions: dimensions.clone(),
        items: items - attention,
        attention_checks: attention,
        target_raters,
        raters,
        completed,
        is_open,
        links: store::studies::links(pool, id).await?,
        created_at,
        kind,
        answer_source,
    })
}

pub async fn list(pool: &Db, project_id: i64) -> AppResult<Vec<StudyView>> {
    let mut out = Vec::new();
    for id in store::studies::ids(pool, project_id).await? {
        out.push(view(pool, id).await?);
    }
    Ok(out)
}

pub async fn set_open(pool: &Db, id: i64, open: bool) -> AppResult<()> {
    store::studies::set_open(pool, id, open).await
}

/// A new per-rater link (or open link); its token, shown once.
pub async fn add_link(pool: &Db, id: i64, kind: &str, label: &str) -> AppResult<String> {
    view(pool, id).await?;
    let kind = match LinkKind::parse(kind) {
        Ok(k @ (LinkKind::Open | LinkKind::Rater)) => k,
        _ => return Err(AppError::Invalid(format!("a link is open or rater, not \"{kind}\""))),
    };
    let t = new_token()?;
    store::studies::insert_link(pool, id, &hash(&t), kind, label).await?;
    Ok(t)
}

pub async fn revoke_link(pool: &Db, link_id: i64) -> AppResult<()> {
    store::studies::revoke_link(pool, link_id).await
}

pub async fn delete(pool: &Db, id: i64) -> AppResult<()> {
    store::studies::delete(pool, id).await
}

/// The link a token opens: (link id, study id, kind). Unknown, revoked and
/// expired links are all "not found": a guess learns nothing.
async fn link(pool: &Db, token: &str) -> AppResult<(i64, i64, LinkKind)> {
    store::studies::live_link(pool, &hash(token.trim()))
        .await?
        .ok_or_else(|| AppError::NotFound("this study link does not exist or was withdrawn".into()))
}

/// The rater a request speaks for: `(rater id, finished, order seed)`.
async fn rater_of(pool: &Db, study: i64, link_id: i64, rater: &str) -> AppResult<(i64, bool, i64)> {
    let row = store::studies::rater(pool, &hash(rater.trim()), study, link_id).await?;
    row.map(|(id, f, seed)| (id, f.is_some(), seed))
        .ok_or_else(|| AppError::NotFound("this rater is not known at this link".into()))
}

/// New raters one address may start at one open link per hour: enough for
/// a lab behind one NAT, few enough that one person cannot pose as a crowd.
pub const NEW_RATERS_PER_ADDRESS: u32 = 30;

/// How many new raters each address started at each open link this hour.
#[derive(Default)]
pub struct RaterLimit {
    started: std::sync::Mutex<HashMap<(i64, String), (u32, std::time::Instant)>>,
}

impl RaterLimit {
    const WINDOW: std::time::Duration = std::time::Duration::from_secs(3600);

    /// Counts a new rater from `addr` at `link`; refused past the limit.
    pub fn admit(&self, link: i64, addr: &str) -> AppResult<()> {
        let mut m = self.started.lock().unwrap_or_else(|e| e.into_inner());
        let e = m.entry((link, addr.to_string())).or_insert((0, std::time::Instant::now()));
        if e.1.elapsed() > Self::WINDOW {
            *e = (0, std::time::Instant::now());
        }
        if e.0 >= NEW_RATERS_PER_ADDRESS {
            return Err(AppError::TooMany(format!(
                "{NEW_RATERS_PER_ADDRESS} raters already started at this link from your address within the hour; \
                 ask the study's owner for a per-rater link"
            )));
        }
        e.0 += 1;
        Ok(())
    }
}

/// Opens (or resumes) a rater's session at a link. A per-rater link is its
/// own rater; at an open link the browser's `rater` token (kept by the
/// page and in an HttpOnly cookie) resumes its session, and a browser
/// without one gets a new rater, if `new_rater` admits it.
pub async fn session(
    pool: &Db,
    token: &str,
    rater: Option<&str>,
    new_rater: impl FnOnce(i64) -> AppResult<()>,
) -> AppResult<RaterSession> {
    let (link_id, study_id, kind) = link(pool, token).await?;
    let s = view(pool, study_id).await?;
    let rater_token =
        if kind == LinkKind::Rater { token.trim().to_string() } else { rater.unwrap_or("").trim().to_string() };
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
            if kind != LinkKind::Rater {
                new_rater(link_id)?;
            }
            let t = if kind == LinkKind::Rater { rater_token } else { new_token()? };
            let seed = random_seed();
            store::studies::insert_rater(pool, study_id, link_id, &hash(&t), seed).await?;
            let r = rater_of(pool, study_id, link_id, &t).await?;
            (t, r)
        }
    };
    let items = rater_items(pool, study_id).await?;
    let order = study::order_for(seed as u64, items.len());
    let items: Vec<RaterItem> = order.into_iter().map(|i| items[i].clone()).collect();
    let rows = store::studies::ratings_of(pool, rater_id).await?;
    let dims = s.dimensions.len();
    let mut ratings: Vec<(i64, Vec<Option<u8>>)> = Vec::new();
    for (item, d, score) in rows {
        let at = match ratings.iter().position(|(i, _)| *i == item) {
            Some(p) => p,
            None => {
                ratings.push((item, vec![None; dims]));
                ratings.len() - 1
            }
        };
        if let Some(slot) = ratings[at].1.get_mut(d as usize) {
            *slot = Some(score as u8);
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

pub(super) fn parse_choices(json: Option<&str>) -> Vec<Choice> {
    json.and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default()
}

/// A study's items as raters read them, in stored order.
async fn rater_items(pool: &Db, study_id: i64) -> AppResult<Vec<RaterItem>> {
    Ok(store::studies::items(pool, study_id)
        .await?
        .into_iter()
        .map(|(id, text, answer, context, choices)| RaterItem {
            id,
            text,
            answer,
            context,
            choices: parse_choices(choices.as_deref()).into_iter().map(|c| (c.path, c.definition)).collect(),
        })
        .collect())
}

fn random_seed() -> i64 {
    let mut b = [0u8; 8];
    let _ = getrandom::fill(&mut b);
    (u64::from_le_bytes(b) >> 1) as i64
}

async fn open_rater(pool: &Db, token: &str, rater: &str) -> AppResult<(i64, i64, Vec<Dimension>)> {
    let (link_id, study_id, kind) = link(pool, token).await?;
    let rater = if kind == LinkKind::Rater { token } else { rater };
    let (rater_id, finished, _) = rater_of(pool, study_id, link_id, rater).await?;
    let open = store::studies::get(pool, study_id).await?.7;
    if !open {
        return Err(AppError::Conflict("this study is closed".into()));
    }
    if finished {
        return Err(AppError::Conflict("you have already submitted this study: thank you".into()));
    }
    Ok((study_id, rater_id, dimensions_of(pool, study_id).await?))
}

/// Records a rater's scores for one item (one per dimension, each a point
/// of its scale, or a choice's index), replacing earlier ones for it.
/// Returns how many items the rater has rated, and of how many.
pub async fn rate(pool: &Db, token: &str, rater: &str, item: i64, scores: &[u8]) -> AppResult<(i64, i64)> {
    let (study_id, rater_id, dims) = open_rater(pool, token, rater).await?;
    let Some(choices) = store::studies::item_choices(pool, study_id, item).await? else {
        return Err(AppError::NotFound(format!("item {item} is not in this study")));
    };
    let choices = parse_choices(choices.as_deref()).len();
    if scores.len() != dims.len() {
        return Err(AppError::Invalid(format!("give {} scores, one per dimension", dims.len())));
    }
    if let Some((d, s)) = dims.iter().zip(scores).find(|(d, s)| !d.accepts(**s, choices)) {
        return Err(AppError::Invalid(if d.choice {
            format!("{}: {s} is not one of the {choices} choices", d.name)
        } else {
            format!("{}: {s} is not a score from {} to {}", d.name, d.min, d.max())
        }));
    }
    store::studies::upsert_scores(pool, rater_id, item, scores).await?;
    progress(pool, study_id, rater_id).await
}

async fn progress(pool: &Db, study_id: i64, rater_id: i64) -> AppResult<(i64, i64)> {
    store::studies::progress(pool, study_id, rater_id).await
}

/// Submits a rater's study: every item must be rated; afterwards nothing
/// changes (one submission per rater).
pub async fn finish(pool: &Db, token: &str, rater: &str) -> AppResult<()> {
    let (study_id, rater_id, _) = open_rater(pool, token, rater).await?;
    let (done, total) = progress(pool, study_id, rater_id).await?;
    if done < total {
        return Err(AppError::Invalid(format!("{} of {total} items are not rated yet", total - done)));
    }
    store::studies::finish(pool, rater_id).await
}

/// Creates (does not run) the job that has the configured LLM rate every
/// item of a study (attention checks aside) with the rubric the humans
/// read: one item per study item.
pub async fn create_llm_rating(pool: &Db, id: i64, no_cache: bool) -> AppResult<JobView> {
    let v = view(pool, id).await?;
    if v.items == 0 {
        return Err(AppError::Invalid(format!("study {id} has no items to rate")));
    }
    let params = JobParams::StudyRating(StudyRatingParams { no_cache, study_id: id });
    let job = jobs::create(pool, v.project_id, &params, v.items).await?;
    store::jobs::get_job(pool, job).await
}

/// The LLM-rating job's items: what a human rater reads of each item (for
/// a question study, the corpus summary stands as the passage — the humans
/// read it, not the chunks).
async fn llm_rating_items(pool: &Db, p: &StudyRatingParams) -> AppResult<Vec<engine::jobs::WorkItem>> {
    let id = p.study_id;
    let v = view(pool, id).await?;
    let dimensions = dimensions_of(pool, id).await?;
    let attention: std::collections::HashSet<i64> =
        result_items(pool, id).await?.into_iter().filter(|i| i.attention.is_some()).map(|i| i.id).collect();
    Ok(store::studies::items(pool, id)
        .await?
        .into_iter()
        .filter(|(item, ..)| !attention.contains(item))
        .map(|(item, text, answer, context, choices)| {
            let passage = if v.kind == StudyKind::Questions {
                (!v.corpus_summary.is_empty()).then(|| v.corpus_summary.clone())
            } else {
                context
            };
            let rate =
                RateItem { item_id: item, question: text, answer, passage, choices: parse_choices(choices.as_deref()) };
            WorkItem::new(
                engine::jobs::ItemKey::Rating(item),
                &engine::study::rate::Item { dimensions: dimensions.clone(), item: rate },
            )
        })
        .collect())
}

/// The LLM rater's job.
pub struct StudyRatingStage;

impl Stage for StudyRatingStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, params: &'a JobParams) -> Items<'a> {
        Box::pin(async move { llm_rating_items(pool, params.study_rating(job.id)?).await })
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move {
            let (gateway, job_id) = (run.gateway, run.job.id);
            run.each(items, |item| engine::study::rate::run_item(gateway, job_id, item)).await
        })
    }
}

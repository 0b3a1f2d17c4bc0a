//! Read-only share links to a report page (an evaluation's report, a
//! study's results, a question set with its diagnostics, a metrics run, a
//! project's graph explorer); the one-file HTML export is `server::report_html`.
//! A share token opens exactly its page: nothing else of the project, no
//! edit controls, no settings or keys; withdrawing it makes it 404 at once.

use crate::ssr::store::Db;
use types::ShareKind;

use crate::error::{AppError, AppResult};
use crate::model::{ExperimentReportView, GraphOverview, SharedQuestions, SharedView};
use crate::ssr::store;
use crate::ssr::tokens::{hash, new_token};

/// The project a shareable page belongs to: an evaluation (its id), a
/// study (its id), a question set (its id), a project's graph explorer (the
/// project's id); refused for any other kind, or a graph not built yet.
pub async fn project_of(pool: &Db, kind: ShareKind, page_id: i64) -> AppResult<i64> {
    Ok(match kind {
        ShareKind::Evaluation => crate::ssr::evaluations::get(pool, page_id).await?.view.project_id,
        ShareKind::Study => crate::ssr::studies::view(pool, page_id).await?.project_id,
        ShareKind::Questions => store::questions::get_set(pool, page_id).await?.project_id,
        ShareKind::Metrics => {
            let run = store::metrics::get(pool, page_id).await?;
            if run.report.is_none() {
                return Err(AppError::Invalid(format!("metrics run {page_id} has not finished: nothing to share yet")));
            }
            run.project_id
        }
        ShareKind::Experiment => {
            let v = crate::ssr::experiments::wizard::view(pool, page_id).await?;
            if v.status != types::ExperimentStatus::Done {
                return Err(AppError::Invalid(format!("experiment {page_id} has not finished: nothing to share yet")));
            }
            v.project_id
        }
        ShareKind::Graph => {
            store::projects::get_project(pool, page_id).await?;
            if store::graph::overview(pool, page_id).await?.is_none() {
                return Err(AppError::Invalid(format!("project {page_id} has no graph to share yet")));
            }
            page_id
        }
    })
}

/// Makes a share link for a page; (share id, token — shown once).
/// With `expires_days` the link stops working that many days from now.
pub async fn create(pool: &Db, kind: ShareKind, page_id: i64, expires_days: Option<u32>) -> AppResult<(i64, String)> {
    let project = project_of(pool, kind, page_id).await?;
    let token = new_token()?;
    let id = store::shares::insert(pool, project, &hash(&token), kind, page_id, expires_days).await?;
    Ok((id, token))
}

/// The page a token opens: (kind, id). Unknown, withdrawn and expired are all 404.
pub async fn open(pool: &Db, token: &str) -> AppResult<(ShareKind, i64)> {
    store::shares::live(pool, &hash(token.trim())).await?.ok_or_else(not_found)
}

pub async fn view(pool: &Db, token: &str) -> AppResult<SharedView> {
    let (kind, id) = open(pool, token).await?;
    Ok(match kind {
        ShareKind::Evaluation => SharedView {
            evaluation: Some(crate::ssr::evaluations::report_view(pool, id, false).await?),
            ..Default::default()
        },
        ShareKind::Study => {
            SharedView { study: Some(crate::ssr::studies::results_view(pool, id).await?), ..Default::default() }
        }
        ShareKind::Questions => SharedView { questions: Some(questions(pool, id, false).await?), ..Default::default() },
        ShareKind::Metrics => {
            let report = crate::ssr::metrics::report(pool, id).await?;
            let mut v = crate::ssr::metrics::view(&report).linked();
            let project = store::questions::get_set(pool, report.question_set_id).await?.project_id;
            v.documents = Some(store::projects::get_project(pool, project).await?.summary.documents);
            SharedView { metrics: Some(v), ..Default::default() }
        }
        _ => return Err(not_found()),
    })
}

/// The experiment a token shares; any other token is "not found".
pub async fn experiment(pool: &Db, token: &str) -> AppResult<ExperimentReportView> {
    crate::ssr::experiments::wizard::report(pool, opened(pool, token, ShareKind::Experiment).await?).await
}

/// The overview of the graph a token shares; any other token is "not found".
pub async fn graph(pool: &Db, token: &str) -> AppResult<Option<GraphOverview>> {
    store::graph::overview(pool, graph_project(pool, token).await?).await
}

/// A question set as shared: its diagnostics and its first page of
/// questions (`whole`: every question, for the one-file report).
pub async fn questions(pool: &Db, set_id: i64, whole: bool) -> AppResult<SharedQuestions> {
    use crate::ssr::questions::diagnostics::{
        relevance_stats, relevance_svg, set_entities, set_relevance, EntitySource,
    };
    let set = store::questions::get_set(pool, set_id).await?;
    // Entities need the graph; a set shared before its project has one has none.
    // Charts inline in the one-file report, linked on the page.
    let figure = |svg: String| if whole { crate::model::Figure::Inline(svg) } else { crate::model::Figure::Linked };
    let entities =
        set_entities(pool, set_id, EntitySource::Graph).await.ok().flatten().map(|e| (e.stats(), figure(e.svg())));
    let relevance = match set_relevance(pool, set_id).await? {
        Some((job, scores)) if !scores.is_empty() => {
            let stats = relevance_stats(pool, set_id, job, &scores, set.questions).await?;
            let svg = relevance_svg(&set, &stats.retriever, &scores);
            Some((stats, figure(svg)))
        }
        _ => None,
    };
    let per_page = if whole { set.questions.max(1) } else { crate::model::QUESTIONS_PER_PAGE };
    let questions = store::questions::question_page(pool, set_id, 1, per_page, "", "").await?;
    Ok(SharedQuestions { questions, set, entities, relevance })
}

/// Page `page` of the questions of the set a token shares.
pub async fn question_page(pool: &Db, token: &str, page: i64) -> AppResult<crate::model::QuestionsPage> {
    let set_id = opened(pool, token, ShareKind::Questions).await?;
    store::questions::question_page(pool, set_id, page, crate::model::QUESTIONS_PER_PAGE, "", "").await
}

/// Page `page` of a pair's drill-down questions of the evaluation a token
/// shares (the pair checked to be the evaluation's); any other token is
/// "not found".
pub async fn drill_questions(
    pool: &Db,
    token: &str,
    a: i64,
    b: i64,
    page: i64,
) -> AppResult<crate::model::DrillQuestionsPage> {
    let id = opened(pool, token, ShareKind::Evaluation).await?;
    crate::ssr::evaluations::drill_questions(pool, id, a, b, page).await
}

/// One question's judgments of the evaluation a token shares (the pair
/// and the question checked to be the evaluation's).
pub async fn drill(pool: &Db, token: &str, a: i64, b: i64, question: i64) -> AppResult<crate::model::DrillView> {
    let id = opened(pool, token, ShareKind::Evaluation).await?;
    crate::ssr::evaluations::drill(pool, id, a, b, question).await
}

/// The project whose graph a token shares; any other token is "not found".
pub async fn graph_project(pool: &Db, token: &str) -> AppResult<i64> {
    opened(pool, token, ShareKind::Graph).await
}

/// The id of the page of kind `kind` a token opens; a token of any other
/// kind is "not found", like a withdrawn one.
async fn opened(pool: &Db, token: &str, kind: ShareKind) -> AppResult<i64> {
    match open(pool, token).await? {
        (k, id) if k == kind => Ok(id),
        _ => Err(not_found()),
    }
}

fn not_found() -> AppError {
    AppError::NotFound("this shared page does not exist or was withdrawn".into())
}

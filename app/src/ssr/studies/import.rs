//! Studies imported from another team's annotations: the HieraRAG
//! authors' human judging (their `human_judging/` folder) as an
//! answer-validation study — a question per `qa_id`, an annotator per
//! workbook, the same three scales and the category pick — whose results
//! page shows Assay's standard reading beside the figures the authors'
//! scripts compute, recomputed from the stored inputs on every view.

use engine::study::hierarag_judging::{Analysis, Inputs};
use engine::study::{self, Kind};
use serde_json::json;

use crate::error::{AppError, AppResult};
use crate::model::JudgingImportView;
use crate::ssr::store::{self, Db};
use crate::ssr::tokens::{hash, new_token};

/// How an imported study names its answers.
pub const HIERARAG_SOURCE: &str = "imported: the HieraRAG authors' reference answers, as their annotators judged them";

/// What an import made.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedStudy {
    pub study_id: i64,
    pub questions: usize,
    pub annotators: usize,
    pub ratings: usize,
    pub line: String,
}

/// Imports the authors' human judging into project `project_id` as a
/// closed answer-validation study; `name` empty names it after the import.
pub async fn import_hierarag(pool: &Db, project_id: i64, name: &str, inputs: Inputs) -> AppResult<ImportedStudy> {
    store::projects::get_project(pool, project_id).await?;
    let as_study = inputs.as_study().map_err(|e| AppError::Invalid(e.to_string()))?;
    let dimensions = engine::study::kind_dimensions(Kind::Answers);
    let max_choice = as_study.items.iter().map(|i| i.choices.len()).max().unwrap_or(0);
    if max_choice > 21 {
        return Err(AppError::Invalid(format!(
            "a question offers {max_choice} categories to pick from; a study stores at most 21"
        )));
    }
    let items: Vec<store::studies::NewItem> = as_study
        .items
        .iter()
        .map(|i| store::studies::NewItem {
            question_id: None,
            text: i.question.clone(),
            source: i.rq.clone(),
            level: i.category.as_deref().map(study::level_of),
            attention: None,
            answer: (!i.answer.is_empty()).then(|| i.answer.clone()),
            context: (!i.context.is_empty()).then(|| i.context.clone()),
            category: i.category.clone(),
            choices: Some(
                json!(i.choices.iter().map(|p| json!({"path": p, "definition": ""})).collect::<Vec<_>>()).to_string(),
            ),
        })
        .collect();
    let mut annotators = Vec::new();
    for book in &inputs.workbooks {
        annotators.push((hash(&new_token()?), hash(&new_token()?), book.clone()));
    }
    let ratings: Vec<(usize, usize, usize, u8)> = as_study
        .ratings
        .iter()
        .flat_map(|r| r.scores.iter().enumerate().filter_map(move |(d, s)| Some((r.annotator, r.item, d, (*s)?))))
        .collect();
    let stored = serde_json::to_string(&inputs).map_err(|_| AppError::Internal)?;
    let name = match name.trim() {
        "" => format!("HieraRAG human judging ({} annotators)", inputs.workbooks.len()),
        n => n.to_string(),
    };
    let dims_json = serde_json::to_string(&dimensions).map_err(|_| AppError::Internal)?;
    let new = store::studies::NewStudy {
        project_id,
        name: &name,
        intro: "Imported from the HieraRAG authors' annotation workbooks; no one rates it through Assay.",
        corpus_summary: "",
        dimensions: &dims_json,
        draws: "[]",
        seed: 0,
        target_raters: None,
        kind: Kind::Answers,
        answer_source: Some(HIERARAG_SOURCE),
    };
    let imported = store::studies::ImportedRatings { annotators, ratings, inputs: &stored };
    let id = store::studies::insert_with(pool, &new, &items, &[], Some(&imported)).await?;
    let mut line = format!(
        "imported {} questions rated by {} annotators ({} ratings, {} questions shared)",
        items.len(),
        inputs.workbooks.len(),
        imported.ratings.len(),
        inputs.shared.len()
    );
    if as_study.repeated_rows > 0 {
        line += &format!("; {} repeated rows kept once (the first, as the scripts read them)", as_study.repeated_rows);
    }
    if as_study.picks_elsewhere + as_study.picks_unknown > 0 {
        line += &format!(
            "; {} category picks outside the question's dimension, {} outside the authors' hierarchy (added to that question's choices)",
            as_study.picks_elsewhere, as_study.picks_unknown
        );
    }
    Ok(ImportedStudy {
        study_id: id,
        questions: items.len(),
        annotators: inputs.workbooks.len(),
        ratings: imported.ratings.len(),
        line,
    })
}

/// An imported study's figures as the authors' scripts compute them, from
/// its stored inputs (`None` for a study rated in Assay).
pub async fn imported_analysis(pool: &Db, id: i64) -> AppResult<Option<Analysis>> {
    let Some(json) = store::studies::imported(pool, id).await? else { return Ok(None) };
    let inputs: Inputs = serde_json::from_str(&json).map_err(|e| {
        tracing::error!(study = id, error = %e, "an imported study's inputs do not read");
        AppError::Internal
    })?;
    Ok(Some(inputs.analyse(std::path::PathBuf::from("(imported)"))))
}

/// The view of [`imported_analysis`].
pub async fn imported_view(pool: &Db, id: i64) -> AppResult<Option<JudgingImportView>> {
    Ok(imported_analysis(pool, id).await?.map(|a| JudgingImportView {
        rows: a.rows(),
        workbooks: a.workbooks.clone(),
        rows_per_workbook: a.annotations.iter().map(Vec::len).collect(),
        shared: a.summary.shared,
        questions: a.summary.questions,
        picks: a.summary.picks,
    }))
}

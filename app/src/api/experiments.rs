//! Experiments: the wizard's defaults, drafts and imports of manifests, starting one, and its page.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::*;

#[cfg(feature = "ssr")]
use crate::ssr::access::{Need, Request};
#[cfg(feature = "ssr")]
use crate::ssr::store::access::Obj;

/// The "New experiment" wizard's defaults (the papers'), the projects whose
/// documents an experiment may use, the built-in methods and the LLM;
/// with `project` (opened from inside a project), that project's
/// documents chosen as the corpus.
#[server(output = crate::codec::Json)]
pub async fn experiment_wizard(project: Option<i64>) -> Result<WizardStart, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    let mut start = crate::ssr::experiments::wizard::wizard_start(&call.state.pool, &call.state.llm()).await?;
    if let Some(id) = project {
        let p = crate::ssr::store::projects::get_project(&call.state.pool, id).await?;
        if start.projects.iter().any(|(name, ..)| *name == p.summary.name) {
            start.fields.corpus = WizardCorpus::Project;
            start.fields.corpus_project = p.summary.name.clone();
            start.fields.name = format!("{} experiment", p.summary.name);
        }
    }
    Ok(start)
}

/// The wizard's choices (`fields`: `WizardFields` as JSON) as a manifest,
/// with its estimate of calls, tokens and cost, or what is wrong.
#[server(output = crate::codec::Json)]
pub async fn draft_experiment(fields: String) -> Result<ExperimentDraft, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    let f: WizardFields =
        serde_json::from_str(&fields).map_err(|e| AppError::Invalid(format!("the wizard's choices: {e}")))?;
    let llm = call.state.llm();
    match crate::ssr::experiments::wizard::manifest_of(&f, &llm) {
        Ok(text) => {
            Ok(crate::ssr::experiments::wizard::draft(&call.state.pool, &llm, call.state.config.env, &text).await)
        }
        Err(e) => Ok(crate::ssr::experiments::wizard::refused("", e)),
    }
}

/// What each evaluation of `manifest` can decide, planned from the
/// pilot evaluation `pilot` (the wizard is the owner's, who reads every
/// evaluation): per evaluated question set, its planned questions × M.
#[server(output = crate::codec::Json)]
pub async fn decide_experiment(
    manifest: String,
    pilot: i64,
    half_width: String,
    #[server(default)] difference: Option<String>,
) -> Result<Vec<(usize, DecideView)>, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    call.require(Obj::Evaluation(pilot), Need::Read).await?;
    let m = engine::experiment::Manifest::parse_uploaded(&manifest).map_err(|e| AppError::Invalid(e.0))?;
    let half_width = super::form::number("half-width", &half_width, 0.0, 1.0)?;
    let difference = match difference.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) => Some(super::form::number("difference to detect", d, 0.0, 2.0)?),
        None => None,
    };
    crate::ssr::experiments::wizard::decide(&call.state.pool, &m, pilot, half_width, difference).await
}

/// A manifest's estimate (an imported or edited manifest), or what is wrong.
#[server(output = crate::codec::Json)]
pub async fn draft_manifest(manifest: String) -> Result<ExperimentDraft, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    Ok(crate::ssr::experiments::wizard::draft(&call.state.pool, &call.state.llm(), call.state.config.env, &manifest)
        .await)
}

/// An imported manifest in the wizard's fields, naming what they cannot show.
#[server(output = crate::codec::Json)]
pub async fn import_manifest(manifest: String) -> Result<ImportedManifest, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    let m = engine::experiment::Manifest::parse_uploaded(&manifest).map_err(|e| AppError::Invalid(e.0))?;
    let start = crate::ssr::experiments::wizard::wizard_start(&call.state.pool, &call.state.llm()).await?;
    Ok(crate::ssr::experiments::wizard::fields_of(&m, &start.fields))
}

/// Starts an experiment from its manifest; returns (project id, experiment id).
#[server(output = crate::codec::Json)]
pub async fn start_experiment(manifest: String) -> Result<(i64, i64), AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    crate::ssr::experiments::wizard::start(&call.state, &manifest).await
}

/// An experiment: its stages (planned, running, done) and, as they finish,
/// the report gathering theirs.
#[server(output = crate::codec::Json)]
pub async fn get_experiment(experiment_id: i64) -> Result<ExperimentReportView, AppError> {
    let call = Request::now()?;
    call.require(Obj::Experiment(experiment_id), Need::Read).await?;
    crate::ssr::experiments::wizard::report(&call.state.pool, experiment_id).await
}

/// Experiments started in the browser, newest first.
#[server(output = crate::codec::Json)]
pub async fn list_experiments() -> Result<Vec<ExperimentBrief>, AppError> {
    let call = Request::now()?;
    call.require_owner("run experiments")?;
    crate::ssr::experiments::wizard::list_all(&call.state.pool).await
}

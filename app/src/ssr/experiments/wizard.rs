//! Experiments in the browser: the "New experiment" wizard's choices as a
//! manifest (and back, for an imported one), its estimate before it runs,
//! the run itself in the background ([`super::run`], every stage's
//! job through the server's job manager, so each job's page can follow or
//! cancel it), and the experiment's page: one progress view for all stages,
//! then the report gathering every stage's.

use crate::ssr::store::Db;
use engine::experiment::{EvaluationSection, Manifest};
use engine::llm::settings::{LlmSettings, ProviderKind};
use types::requests::{
    AnswersRequest, ChunkRequest, EvaluationRequest, GraphQuestionsRequest, GraphRequest, HierarchicalQuestionsRequest,
    MetricsRequest, QuestionsRequest, SummaryQuestionsRequest,
};
use types::{ExperimentStatus, JudgeKind, Protocol, StageKind, StageState};

use crate::error::{AppError, AppResult};
use crate::model::{
    ExperimentDraft, ExperimentReportView, ExperimentStageView, ExperimentView, ImportedManifest, JobView,
    MethodCostView, StageEstimateView, WizardCorpus, WizardFields, WizardLlm, WizardStart,
};
use crate::ssr::state::AppState;
use crate::ssr::store;

/// The wizard's defaults: the papers' (seed 000's experiment on the sample).
pub async fn wizard_start(pool: &Db, llm: &LlmSettings) -> AppResult<WizardStart> {
    let eval = EvaluationSection::default();
    let fields = WizardFields {
        name: "Experiment".into(),
        llm: if llm.provider == ProviderKind::Offline { WizardLlm::Offline } else { WizardLlm::Configured },
        corpus: WizardCorpus::Sample,
        corpus_project: String::new(),
        chunking: ChunkRequest::default(),
        graph: GraphRequest::default(),
        ask_graph: true,
        graph_questions: GraphQuestionsRequest::default(),
        ask_summary: true,
        summary_questions: SummaryQuestionsRequest::default(),
        ask_hierarchical: false,
        hierarchical_questions: HierarchicalQuestionsRequest {
            per_category: Some(types::defaults::MIN_PER_CATEGORY),
            ..Default::default()
        },
        methods: ["bm25", "lightrag", "fastgraphrag", "graphrag-local"].map(AnswersRequest::new).to_vec(),
        evaluate: true,
        evaluation: EvaluationRequest { protocol: Protocol::Unbiased, ..eval.request },
        evaluation_sets: Vec::new(),
        sanity: eval.sanity,
        metrics: false,
        metrics_request: MetricsRequest::default(),
        unread: None,
    };
    let all = store::projects::list_projects(pool).await?;
    let mut pilots = Vec::new();
    for p in &all {
        for e in crate::ssr::evaluations::list(pool, p.id).await? {
            if !e.sanity && e.unbiased() && matches!(e.status, Some(crate::model::JobStatus::Done)) {
                pilots.push((e.id, format!("{} · #{} {} (M = {})", p.name, e.id, e.name, e.trials)));
            }
        }
    }
    pilots.sort_by(|a, b| b.0.cmp(&a.0));
    let projects = all.into_iter().filter(|p| p.documents > 0).map(|p| (p.name, p.documents, p.tokens)).collect();
    Ok(WizardStart {
        fields,
        projects,
        methods: engine::rag::method::METHODS
            .iter()
            .filter(|(n, _)| !engine::rag::presets::is_remote(n))
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect(),
        configured_llm: llm.describe(),
        configured_is_offline: llm.provider == ProviderKind::Offline,
        pilots,
    })
}

/// What each evaluation of manifest `m` can decide, planned from the
/// pilot evaluation `pilot`: per evaluated question set (its position from
/// 1), its questions as planned × the evaluation's M. Nothing is sent.
pub async fn decide(
    pool: &Db,
    m: &engine::experiment::Manifest,
    pilot: i64,
    half_width: f64,
    difference: Option<f64>,
) -> AppResult<Vec<(usize, crate::model::DecideView)>> {
    let Some(e) = &m.evaluation else {
        return Err(AppError::Invalid("the manifest has no [evaluation] to plan".into()));
    };
    let sets: Vec<usize> = if e.sets.is_empty() { (1..=m.questions.len()).collect() } else { e.sets.clone() };
    let mut out = Vec::new();
    for i in sets {
        let Some(q) = m.questions.get(i.wrapping_sub(1)) else { continue };
        let run = (engine::experiment::planned(q).max(1), e.request.trials as usize);
        out.push((i, crate::ssr::evaluations::decide(pool, pilot, run, half_width, difference).await?));
    }
    Ok(out)
}

/// The wizard's choices as a manifest's text (checked as `assay run` checks it).
pub fn manifest_of(f: &WizardFields, configured: &LlmSettings) -> Result<String, String> {
    if let Some(unread) = &f.unread {
        return Err(unread.clone());
    }
    let mut llm = engine::experiment::LlmSection::default();
    if f.llm == WizardLlm::Configured && configured.provider == ProviderKind::OpenAi {
        llm.provider = Some(ProviderKind::OpenAi);
        llm.base_url = Some(configured.base_url.clone());
        llm.model = Some(configured.model.clone());
        // The configured LLM's Batch API setting, written down.
        llm.batch = configured.batches().then_some(true);
    }
    let questions = [
        f.ask_graph.then(|| QuestionsRequest::Graph(f.graph_questions.clone())),
        f.ask_summary.then(|| QuestionsRequest::Summary(f.summary_questions.clone())),
        f.ask_hierarchical.then(|| QuestionsRequest::Hierarchical(f.hierarchical_questions.clone())),
    ];
    let project = f.corpus == WizardCorpus::Project;
    let m = Manifest {
        name: f.name.trim().to_string(),
        llm,
        corpus: engine::experiment::CorpusSection {
            files: if project { Vec::new() } else { vec!["sample".into()] },
            project: project.then(|| f.corpus_project.clone()),
            index: None,
            index_format: None,
            community_level: None,
            chunking: f.chunking,
        },
        graph: f.graph.clone(),
        questions: questions.into_iter().flatten().collect(),
        methods: f.methods.clone(),
        evaluation: f.evaluate.then(|| EvaluationSection {
            request: f.evaluation.clone(),
            sets: f.evaluation_sets.clone(),
            sanity: f.sanity,
        }),
        metrics: f.metrics.then(|| f.metrics_request.clone()),
    };
    let text = format!(
        "# Exported from Assay's \"New experiment\" wizard. Run it with:\n#   assay run THIS_FILE --out report/\n\n{}",
        m.to_toml()
    );
    Manifest::parse_uploaded(&text).map_err(|e| e.0)?;
    Ok(text)
}

/// A manifest in the wizard's fields: each stage's request whole, naming
/// what the form holds without showing it, and what it cannot hold.
pub fn fields_of(m: &Manifest, defaults: &WizardFields) -> ImportedManifest {
    let mut f = defaults.clone();
    let (mut not_shown, mut not_held) = (Vec::new(), Vec::new());
    f.name = m.name.clone();
    f.llm = match m.llm.provider {
        Some(ProviderKind::OpenAi) => WizardLlm::Configured,
        Some(ProviderKind::Offline) => WizardLlm::Offline,
        // No [llm]: the run takes the configured LLM, as the form's default does.
        None => defaults.llm,
    };
    if m.llm.provider == Some(ProviderKind::OpenAi) {
        not_held.push(format!(
            "llm: {} at {} (the form runs the configured LLM)",
            m.llm.model.clone().unwrap_or_default(),
            m.llm.base_url.clone().unwrap_or_default()
        ));
    }
    if let Some(b) = m.llm.batch {
        not_held.push(format!("llm: batch = {b} (the form runs the configured LLM with its own Batch API setting)"));
    }
    if m.corpus.index.is_some() || !m.corpus.files.iter().all(|file| file == "sample") {
        not_held.push("corpus: its files or index (the form reads the sample or a project)".into());
    }
    match &m.corpus.project {
        Some(p) => {
            f.corpus = WizardCorpus::Project;
            f.corpus_project = p.clone();
        }
        None => f.corpus = WizardCorpus::Sample,
    }
    f.chunking = m.corpus.chunking;
    if f.chunking.tokenizer != types::Tokenizer::default() {
        not_shown.push(format!("corpus: the tokenizer {}", f.chunking.tokenizer));
    }
    f.graph = m.graph.clone();
    if m.graph != (GraphRequest { gleaning: f.graph.gleaning, ..Default::default() }) {
        not_shown.push("graph: entity types and summary budget".into());
    }
    (f.ask_graph, f.ask_summary, f.ask_hierarchical) = (false, false, false);
    for (i, q) in m.questions.iter().enumerate() {
        match q {
            QuestionsRequest::Graph(g) if !f.ask_graph => {
                f.ask_graph = true;
                f.graph_questions = g.clone();
                let shown =
                    GraphQuestionsRequest { node: g.node, edge: g.edge, subgraph: g.subgraph, ..Default::default() };
                if *g != shown {
                    not_shown.push(format!("questions[{i}]: minimum hops, sampling and seed"));
                }
            }
            QuestionsRequest::Summary(s) if !f.ask_summary => {
                f.ask_summary = true;
                f.summary_questions = s.clone();
                let shown = SummaryQuestionsRequest {
                    users: s.users,
                    tasks: s.tasks,
                    per_task: s.per_task,
                    ..Default::default()
                };
                if *s != shown {
                    not_shown.push(format!("questions[{i}]: head, tail, count and the LightRAG replica"));
                }
            }
            QuestionsRequest::Hierarchical(h) if !f.ask_hierarchical => {
                f.ask_hierarchical = true;
                f.hierarchical_questions = h.clone();
                if h.factorial > 0 {
                    not_shown.push(format!("questions[{i}].factorial = {}", h.factorial));
                }
                if h.adherence_check || h.seed != types::defaults::QUESTION_SEED {
                    not_shown.push(format!("questions[{i}]: the adherence check and seed"));
                }
            }
            other => not_held.push(format!("questions[{i}]: a second {} set", other.kind())),
        }
    }
    f.methods = m.methods.clone();
    for (i, x) in m.methods.iter().enumerate() {
        if !x.params.is_empty() || x.target_words.is_some() {
            not_shown.push(format!("methods[{i}] ({}): its parameters", x.method));
        }
    }
    f.evaluate = m.evaluation.is_some();
    if let Some(e) = &m.evaluation {
        f.evaluation = e.request.clone();
        f.evaluation_sets = e.sets.clone();
        f.sanity = e.sanity;
        if !e.sets.is_empty() {
            not_shown.push(format!("evaluation.sets = {:?}", e.sets));
        }
        // What the wizard shows, the rest left at the defaults.
        let r = &e.request;
        let shown = EvaluationRequest {
            protocol: r.protocol,
            trials: r.trials,
            repeats: r.repeats,
            align: r.align,
            exchange: r.exchange,
            judge: r.judge,
            ..EvaluationRequest::default()
        };
        if shown != *r {
            not_shown.push("evaluation: its other settings".into());
        }
    }
    f.metrics = m.metrics.is_some();
    if let Some(x) = &m.metrics {
        f.metrics_request = x.clone();
        if *x != MetricsRequest::default() {
            not_shown.push("metrics: its settings".into());
        }
    }
    ImportedManifest { fields: f, not_shown, not_held }
}

/// A draft that cannot run, saying why.
pub fn refused(text: &str, error: String) -> ExperimentDraft {
    ExperimentDraft { error: Some(error), ..blank(text) }
}

fn blank(text: &str) -> ExperimentDraft {
    ExperimentDraft {
        manifest: text.to_string(),
        error: None,
        stages: Vec::new(),
        calls: 0,
        tokens: 0,
        cost_usd: 0.0,
        llm: String::new(),
        offline: true,
        priced: false,
        time: None,
    }
}

/// A manifest's estimate before it runs (or what is wrong with it).
pub async fn draft(
    pool: &Db,
    configured: &LlmSettings,
    env: fn(&str) -> Option<String>,
    text: &str,
) -> ExperimentDraft {
    match Manifest::parse_uploaded(text) {
        Ok(m) => estimate(pool, configured, env, text, &m, std::path::Path::new(".")).await,
        Err(e) => refused(text, e.0),
    }
}

/// The estimate of `m` (parsed from `text`; its files relative to `base`):
/// what the wizard shows and `assay run --plan` prints.
pub async fn estimate(
    pool: &Db,
    configured: &LlmSettings,
    env: fn(&str) -> Option<String>,
    text: &str,
    m: &Manifest,
    base: &std::path::Path,
) -> ExperimentDraft {
    let mut d = blank(text);
    let llm = crate::ssr::experiments::run::llm_settings(m, configured, env);
    d.llm = llm.describe();
    d.offline = llm.provider == ProviderKind::Offline;
    d.priced = !d.offline && llm.prices.0.contains_key(&llm.model);
    let corpus = match crate::ssr::experiments::run::corpus_size(pool, m, base).await {
        Ok(t) => t,
        Err(e) => return ExperimentDraft { error: Some(e.to_string()), ..d },
    };
    for s in m.estimate(&corpus) {
        // The offline provider and the rubric judge cost nothing.
        let judged_offline = matches!(s.kind, StageKind::Evaluation | StageKind::Sanity)
            && m.evaluation.as_ref().is_some_and(|e| e.request.judge != JudgeKind::Llm);
        let cost = if d.offline || judged_offline {
            0.0
        } else {
            llm.job_cost(&llm.model, s.prompt_tokens, s.completion_tokens)
        };
        d.calls += s.calls;
        d.tokens += s.prompt_tokens + s.completion_tokens;
        d.cost_usd += cost;
        d.stages.push(StageEstimateView {
            kind: s.kind,
            label: s.label,
            calls: s.calls,
            prompt_tokens: s.prompt_tokens,
            completion_tokens: s.completion_tokens,
            cost_usd: cost,
            how: s.how,
        });
    }
    d.time = crate::ssr::price::time_of(pool, &llm, d.calls).await;
    d
}

/// Starts a manifest in the background: creates (or finds) its project
/// and the experiment's row at once; returns (project id, experiment id).
pub async fn start(state: &AppState, text: &str) -> AppResult<(i64, i64)> {
    let m = Manifest::parse_uploaded(text).map_err(|e| AppError::Invalid(e.0))?;
    let pool = state.pool.clone();
    let configured = state.llm();
    let llm = crate::ssr::experiments::run::llm_settings(&m, &configured, state.config.env);
    let d = estimate(&pool, &configured, state.config.env, text, &m, std::path::Path::new(".")).await;
    if let Some(e) = d.error {
        return Err(AppError::Invalid(e));
    }
    let project_id = crate::ssr::experiments::run::project(&pool, &m).await?;
    let plan = serde_json::to_string(&d.stages).unwrap_or_default();
    // The manifest as readers of the experiment see it: its secrets (a
    // method's token) redacted; the run itself uses `m`, with them.
    let shown = engine::secret::redact_toml(text);
    let id = store::experiments::insert(&pool, project_id, &m.name, &shown, &plan, &d.llm, d.offline).await?;
    let jobs = state.jobs.clone();
    tokio::spawn(async move {
        let llm = std::sync::Arc::new(llm);
        let result =
            crate::ssr::experiments::run::run(&pool, &llm, &m, std::path::Path::new("."), |job, label, retry| {
                let (pool, llm, jobs) = (pool.clone(), llm.clone(), jobs.clone());
                async move {
                    store::experiments::set_stage(&pool, id, &label, job).await?;
                    let after = jobs.run_to_end(pool.clone(), llm, job, retry).await?;
                    // Its calls and cost show at once, before the run's outcome.
                    store::experiments::record_job(&pool, id, &label, job).await?;
                    Ok(after)
                }
            })
            .await;
        let (status, outcome, error) = match result {
            Ok(o) if o.stopped.is_some() => {
                (ExperimentStatus::Failed, serde_json::to_string(&o).ok(), o.stopped.clone())
            }
            Ok(o) => (ExperimentStatus::Done, serde_json::to_string(&o).ok(), None),
            Err(e) => (ExperimentStatus::Failed, None, Some(e.to_string())),
        };
        let _ = store::experiments::finish(&pool, id, status, outcome.as_deref(), error.as_deref()).await;
    });
    Ok((project_id, id))
}

use store::experiments::Row;

/// A finished run's outcome as stored; unreadable is an error naming the run.
fn outcome_of(r: &Row) -> AppResult<Option<crate::ssr::experiments::run::Outcome>> {
    r.outcome
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| AppError::Invalid(format!("experiment {}: its stored outcome cannot be read ({e})", r.id)))
}

async fn row(pool: &Db, id: i64) -> AppResult<Row> {
    store::experiments::get(pool, id).await
}

/// The project an experiment belongs to.
pub async fn project_of(pool: &Db, id: i64) -> AppResult<i64> {
    Ok(row(pool, id).await?.project_id)
}

/// An experiment's stages: the plan, with what ran (or runs) filled in.
pub async fn view(pool: &Db, id: i64) -> AppResult<ExperimentView> {
    view_of(pool, row(pool, id).await?).await
}

async fn view_of(pool: &Db, r: Row) -> AppResult<ExperimentView> {
    let plan: Vec<StageEstimateView> = serde_json::from_str(&r.plan)
        .map_err(|e| AppError::Invalid(format!("experiment {}: its stored plan cannot be read ({e})", r.id)))?;
    let status: ExperimentStatus = store::stored("experiments", r.id, &r.status)?;
    let outcome = outcome_of(&r)?;
    let current = r.stage.as_deref().and_then(|s| plan.iter().position(|p| p.label == s));
    let finished: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&r.jobs).unwrap_or_default();
    let mut stages = Vec::new();
    for (i, p) in plan.iter().enumerate() {
        let ran = outcome.as_ref().and_then(|o| o.stages.iter().find(|s| s.label == p.label));
        let mut v = ExperimentStageView {
            kind: p.kind,
            label: p.label.clone(),
            state: StageState::Waiting,
            planned_calls: p.calls,
            how: p.how.clone(),
            job: None,
            new_calls: 0,
            cached_calls: 0,
            tokens: 0,
            cost_usd: 0.0,
            seconds: 0.0,
            object_id: None,
        };
        if let Some(s) = ran {
            v.state = if s.reused { StageState::Reused } else { StageState::Done };
            (v.new_calls, v.cached_calls, v.seconds, v.object_id) =
                (s.new_calls, s.cached_calls, s.seconds, Some(s.object_id));
            if let Some(j) = s.job_id {
                let job = store::jobs::get_job(pool, j).await.ok();
                if let Some(job) = &job {
                    if !s.reused {
                        (v.tokens, v.cost_usd) = (job.tokens, job.cost_usd);
                    }
                }
                v.job = job;
            }
        } else if let Some(j) = finished.get(&p.label).and_then(|j| j.as_i64()) {
            v.state = StageState::Done;
            (v.new_calls, v.cached_calls) = crate::ssr::experiments::run::calls(pool, j).await?;
            if let Ok(job) = store::jobs::get_job(pool, j).await {
                (v.tokens, v.cost_usd, v.seconds) = (job.tokens, job.cost_usd, job.elapsed_secs);
                v.job = Some(job);
            }
        } else if outcome.is_none() {
            v.state = match current {
                Some(c) if i < c => StageState::Done,
                Some(c) if i == c => {
                    if status == ExperimentStatus::Running {
                        StageState::Running
                    } else {
                        StageState::Failed
                    }
                }
                _ => StageState::Waiting,
            };
            if Some(i) == current {
                v.job = match r.job_id {
                    Some(j) => store::jobs::get_job(pool, j).await.ok(),
                    None => None,
                };
            }
        }
        stages.push(v);
    }
    let totals = |f: fn(&ExperimentStageView) -> i64| stages.iter().map(f).sum::<i64>();
    Ok(ExperimentView {
        id: r.id,
        project_id: r.project_id,
        name: r.name,
        status,
        error: r.error,
        llm: r.llm,
        offline: r.offline,
        created_at: r.created_at,
        finished_at: r.finished_at,
        new_calls: totals(|s| s.new_calls),
        cached_calls: totals(|s| s.cached_calls),
        tokens: totals(|s| s.tokens),
        cost_usd: stages.iter().map(|s| s.cost_usd).sum(),
        stages,
        manifest: r.manifest,
    })
}

/// Every experiment, newest first: (id, project id, name, status, created).
pub async fn list_all(pool: &Db) -> AppResult<Vec<crate::model::ExperimentBrief>> {
    store::experiments::list_all(pool).await
}

/// The report: the stages' reports gathered (what has finished so far).
pub async fn report(pool: &Db, id: i64) -> AppResult<ExperimentReportView> {
    let r = row(pool, id).await?;
    let outcome = outcome_of(&r)?;
    let experiment = view_of(pool, r).await?;
    let corpus = store::projects::get_project(pool, experiment.project_id).await?.summary;
    let graph = store::graph::overview(pool, experiment.project_id).await?;
    let mut question_sets = Vec::new();
    let mut methods: Vec<MethodCostView> = Vec::new();
    let mut evaluations = Vec::new();
    let mut sanity = Vec::new();
    let mut metrics = Vec::new();
    if let Some(o) = &outcome {
        for s in &o.question_sets {
            question_sets.push(store::questions::get_set(pool, *s).await?);
        }
        for sets in &o.answer_sets {
            for a in sets {
                let set = store::answers::get_set(pool, *a).await?;
                let stage = experiment.stages.iter().find(|s| s.kind == StageKind::Answers && s.object_id == Some(*a));
                let job: Option<&JobView> = stage.and_then(|s| s.job.as_ref());
                let calls = match job {
                    Some(j) => store::jobs::item_call_count(pool, j.id).await?,
                    None => 0,
                };
                let entry = match methods.iter_mut().find(|m| m.method == set.method) {
                    Some(e) => e,
                    None => {
                        methods.push(MethodCostView {
                            method: set.method.clone(),
                            answers: 0,
                            calls: 0,
                            tokens: 0,
                            cost_usd: 0.0,
                            seconds: 0.0,
                        });
                        methods.last_mut().expect("just pushed")
                    }
                };
                entry.answers += set.answers;
                entry.calls += calls;
                if let Some(j) = job {
                    entry.tokens += j.tokens;
                    entry.cost_usd += j.cost_usd;
                    entry.seconds += j.elapsed_secs;
                }
            }
        }
        for e in &o.evaluations {
            evaluations.push(crate::ssr::evaluations::report_view(pool, *e, true).await?);
        }
        for s in &o.sanity_checks {
            let v = crate::ssr::evaluations::report_view(pool, *s, false).await?;
            if let Some((text, even)) = v.sanity {
                sanity.push((v.evaluation.name.clone(), text, even));
            }
        }
        for m in &o.metrics_runs {
            metrics.push(crate::ssr::metrics::view(&crate::ssr::metrics::report(pool, *m).await?));
        }
    }
    Ok(ExperimentReportView { experiment, corpus, graph, question_sets, methods, evaluations, sanity, metrics })
}

/// The outcome as JSON (what `assay run --json` prints, less timings of files).
pub async fn outcome_json(pool: &Db, id: i64) -> AppResult<serde_json::Value> {
    let r = row(pool, id).await?;
    let outcome = r.outcome.as_deref().and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok());
    let v = view_of(pool, r).await?;
    Ok(serde_json::json!({
        "experiment": v.name,
        "id": v.id,
        "project_id": v.project_id,
        "status": v.status,
        "created_at": v.created_at,
        "finished_at": v.finished_at,
        "llm": v.llm,
        "stages": v.stages,
        "outcome": outcome,
        "new_calls": v.new_calls,
        "cached_calls": v.cached_calls,
        "tokens": v.tokens,
        "cost_usd": v.cost_usd,
    }))
}

/// The manifest as it was run.
pub async fn manifest(pool: &Db, id: i64) -> AppResult<String> {
    Ok(row(pool, id).await?.manifest)
}

//! Running an experiment manifest (`engine::experiment`): every stage in
//! order — project and corpus, graph, question sets, answers, evaluations
//! (with sanity checks), metrics — each as the same job the pages and CLI
//! commands create, run through the caller's job runner (the CLI's shows a
//! progress bar per stage).
//!
//! **Reuse.** Each stage has a fingerprint: its kind, its settings and the
//! ids of what it takes in. `experiment_stages` maps a project's
//! fingerprints to the object made and its job; a stage whose fingerprint
//! is known, whose object still exists and whose job finished is not run
//! again, so a finished manifest re-runs with no job and no LLM call. (A
//! stage that does run still finds earlier identical calls in the LLM
//! cache: those count as cached calls.)

use std::path::Path;

use crate::ssr::store::Db;
use engine::chunk::Bpe;
use engine::experiment::{label, Manifest, QuestionsRequest, StageKind};
use serde::{Deserialize, Serialize};
use serde_json::json;

use engine::llm::settings::{LlmSettings, ProviderKind};

use crate::error::{AppError, AppResult};
use crate::model::{JobStatus, JobView};
use crate::ssr::store;

/// One stage as run (or reused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub kind: StageKind,
    pub label: String,
    /// What it made: a question set, answer set, evaluation or metrics run id
    /// (the project's for corpus and graph).
    pub object_id: i64,
    pub job_id: Option<i64>,
    /// Reused from an earlier run: no job ran.
    pub reused: bool,
    /// LLM calls this run made (not answered from the cache).
    pub new_calls: i64,
    pub cached_calls: i64,
    pub seconds: f64,
}

/// What a run made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub project_id: i64,
    pub stages: Vec<Stage>,
    /// Per `[[questions]]` entry: its set id.
    pub question_sets: Vec<i64>,
    /// Per question set (same order): its answer sets, in `[[methods]]` order.
    pub answer_sets: Vec<Vec<i64>>,
    pub evaluations: Vec<i64>,
    pub sanity_checks: Vec<i64>,
    pub metrics_runs: Vec<i64>,
    pub new_calls: i64,
    pub cached_calls: i64,
    /// Why the run stopped before its end (the stage, its reasons and the
    /// next step); `None` when every stage finished.
    #[serde(default)]
    pub stopped: Option<String>,
}

/// A stage's fingerprint: canonical JSON of what determines its result.
fn fingerprint(kind: StageKind, what: serde_json::Value) -> String {
    json!({ "stage": kind.as_str(), "with": what }).to_string()
}

/// `(new, cached)` LLM calls logged for a job.
pub(crate) async fn calls(pool: &Db, job_id: i64) -> AppResult<(i64, i64)> {
    store::calls::counts_of_job(pool, job_id).await
}

struct Runner<'a, F> {
    pool: &'a Db,
    project_id: i64,
    run_job: F,
    stages: Vec<Stage>,
}

impl<F, Fut> Runner<'_, F>
where
    F: Fn(i64, String, bool) -> Fut,
    Fut: std::future::Future<Output = AppResult<JobView>>,
{
    /// The object of a known, finished stage with this fingerprint.
    async fn known(&self, kind: StageKind, print: &str) -> AppResult<Option<(i64, Option<i64>)>> {
        let row = store::experiments::known_stage(self.pool, self.project_id, print).await?;
        let Some((object, job)) = row else { return Ok(None) };
        if !store::experiments::object_exists(self.pool, kind, object).await? {
            return Ok(None);
        }
        if let Some(j) = job {
            match store::jobs::get_job(self.pool, j).await {
                Ok(job) if job.status == JobStatus::Done => {}
                _ => return Ok(None),
            }
        }
        Ok(Some((object, job)))
    }

    /// The object and job of a stage this manifest started before and
    /// that stopped (its job failed, was cancelled or interrupted): run
    /// again, it resumes that job, retrying its failed items, instead of
    /// making another empty set and another job.
    async fn stopped(&self, kind: StageKind, print: &str) -> AppResult<Option<(i64, i64)>> {
        let Some((object, Some(job))) = store::experiments::known_stage(self.pool, self.project_id, print).await?
        else {
            return Ok(None);
        };
        if !store::experiments::object_exists(self.pool, kind, object).await? {
            return Ok(None);
        }
        Ok(match store::jobs::get_job(self.pool, job).await {
            Ok(j) if !matches!(j.status, JobStatus::Done | JobStatus::Running) => Some((object, job)),
            _ => None,
        })
    }

    async fn remember(&self, print: &str, object: i64, job: Option<i64>) -> AppResult<()> {
        store::experiments::remember_stage(self.pool, self.project_id, print, object, job).await
    }

    /// Reuses the stage's object, or creates its job with `create` (→ job,
    /// object) and runs it; a job that does not finish stops the run.
    async fn stage<C>(&mut self, kind: StageKind, label: String, what: serde_json::Value, create: C) -> AppResult<i64>
    where
        C: std::future::Future<Output = AppResult<(JobView, i64)>>,
    {
        let print = fingerprint(kind, what);
        let started = std::time::Instant::now();
        if let Some((object, job)) = self.known(kind, &print).await? {
            self.stages.push(Stage {
                kind,
                label,
                object_id: object,
                job_id: job,
                reused: true,
                new_calls: 0,
                cached_calls: 0,
                seconds: started.elapsed().as_secs_f64(),
            });
            return Ok(object);
        }
        // A stage made before and stopped resumes its own job; a new one is
        // remembered before it runs, so a stopped run's re-run finds it.
        let (job, object, resumed) = match self.stopped(kind, &print).await? {
            Some((object, job)) => (store::jobs::get_job(self.pool, job).await?, object, true),
            None => {
                let (job, object) = create.await?;
                self.remember(&print, object, Some(job.id)).await?;
                (job, object, false)
            }
        };
        let after = (self.run_job)(job.id, label.clone(), resumed).await?;
        if after.status != JobStatus::Done {
            return Err(AppError::Invalid(format!(
                "stage \"{label}\" stopped: job {} ended {}{}. Next: see the job's items (its page, or `assay job show {}`), \
                 change what failed them (a more capable model, a larger reply budget or context window), and run the \
                 manifest again: finished stages are reused, and this stage's failed items are sent to the model again",
                after.id,
                after.status,
                after.error.map_or(String::new(), |e| format!(" ({e})")),
                after.id,
            )));
        }
        let (new_calls, cached_calls) = calls(self.pool, job.id).await?;
        self.stages.push(Stage {
            kind,
            label,
            object_id: object,
            job_id: Some(job.id),
            reused: false,
            new_calls,
            cached_calls,
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(object)
    }
}

/// The project of the manifest: found by name (its chunking must match) or created.
pub async fn project(pool: &Db, m: &Manifest) -> AppResult<i64> {
    let settings = m.corpus.chunking;
    match store::projects::find_project(pool, &m.name).await {
        Ok(p) => {
            if p.chunking != settings {
                let c = p.chunking;
                return Err(AppError::Invalid(format!(
                    "corpus: project \"{}\" exists with chunks of {} tokens, overlap {}, {}: name the experiment differently or use its chunking",
                    m.name, c.chunk_tokens, c.chunk_overlap, c.tokenizer
                )));
            }
            Ok(p.summary.id)
        }
        Err(AppError::NotFound(_)) => Ok(store::projects::create_project(pool, &m.name, &settings).await?.summary.id),
        Err(e) => Err(e),
    }
}

/// The documents of another project, as files to add (`corpus.project`).
async fn documents_of(pool: &Db, name: &str) -> AppResult<Vec<(String, Vec<u8>)>> {
    let project = match store::projects::find_project(pool, name).await {
        Ok(p) => p,
        Err(AppError::NotFound(_)) => {
            return Err(AppError::Invalid(format!("corpus.project: no project named \"{name}\"")))
        }
        Err(e) => return Err(e),
    };
    let docs = store::documents::document_titles_and_texts(pool, project.summary.id).await?;
    if docs.is_empty() {
        return Err(AppError::Invalid(format!("corpus.project: project \"{name}\" has no documents")));
    }
    // Their text as extracted; the title keeps the document's name.
    Ok(docs.into_iter().map(|(title, body)| (format!("{title}.txt"), body.into_bytes())).collect())
}

/// The corpus' size as the run would store it (its chunks counted by the
/// chunker with the manifest's chunking), for the estimate: the sample's,
/// the files' or the named project's documents. The last few are kept:
/// the wizard asks again at every change of a field.
pub async fn corpus_size(pool: &Db, m: &Manifest, base: &Path) -> AppResult<engine::experiment::CorpusSize> {
    let settings = m.corpus.chunking;
    if let Some((path, format)) = m.index_path(base) {
        // The index's own documents and chunks, as they will be stored.
        let index = read_index(path, format).await?;
        let tokenizer = settings.tokenizer;
        return tokio::task::spawn_blocking(move || engine::experiment::CorpusSize {
            documents: index.documents.len(),
            tokens: index.documents.iter().map(|d| tokenizer.count(&d.text) as u64).sum(),
            chunks: index.chunks.len() as u64,
            chunk_tokens: index
                .chunks
                .iter()
                .map(|c| c.tokens.unwrap_or_else(|| tokenizer.count(&c.text)) as u64)
                .sum(),
        })
        .await
        .map_err(|_| AppError::Internal);
    }
    let mut files: Vec<(String, Vec<u8>)> = match &m.corpus.project {
        Some(name) => documents_of(pool, name).await?,
        None => Vec::new(),
    };
    for (i, path) in m.corpus_paths(base).into_iter().enumerate() {
        match path {
            None => files.extend(engine::sample::sample_files().map(|(n, b)| (n.to_string(), b.to_vec()))),
            Some(p) => {
                let bytes = std::fs::read(&p)
                    .map_err(|e| AppError::Invalid(format!("corpus.files[{i}]: cannot read {}: {e}", p.display())))?;
                let name = p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
                files.push((name, bytes));
            }
        }
    }
    let mut key = format!("{settings:?}");
    for (name, bytes) in &files {
        key.push_str(&format!("|{name}:{}", crate::ssr::tokens::hash(&String::from_utf8_lossy(bytes))));
    }
    const SIZE: &str = "corpus size";
    if let Some(size) = pool.recall::<engine::experiment::CorpusSize>(SIZE, &key) {
        return Ok(*size);
    }
    let size = tokio::task::spawn_blocking(move || {
        engine::experiment::CorpusSize::measure(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())), &settings)
    })
    .await
    .map_err(|_| AppError::Internal)?;
    pool.remember(SIZE, key, std::sync::Arc::new(size), 4);
    Ok(size)
}

/// The manifest's LLM over `base` (prices, timeouts and retries stay
/// `base`'s). The key: from the environment variable `llm.api_key_env`
/// names when it names one, else `base`'s own (the server's settings), else
/// `OPENAI_API_KEY`, each read with `env` (the configuration's reader).
pub fn llm_settings(m: &Manifest, base: &LlmSettings, env: fn(&str) -> Option<String>) -> LlmSettings {
    let mut llm = base.clone();
    match m.llm.provider {
        // No provider in the manifest: the environment's or the saved
        // settings' (`base`), as they are.
        None => {}
        Some(ProviderKind::OpenAi) => {
            llm.provider = ProviderKind::OpenAi;
            if let Some(url) = &m.llm.base_url {
                llm.base_url = url.clone();
            }
            if let Some(model) = &m.llm.model {
                llm.model = model.clone();
            }
            let from_env = |var: &str| env(var).and_then(engine::llm::ApiKey::new);
            llm.api_key = match &m.llm.api_key_env {
                Some(var) => from_env(var),
                None => base.api_key.clone().or_else(|| from_env("OPENAI_API_KEY")),
            };
        }
        Some(ProviderKind::Offline) => llm.provider = ProviderKind::Offline,
    }
    if let Some(c) = m.llm.concurrency {
        llm.concurrency = c;
    }
    if let Some(b) = m.llm.batch {
        llm.batch = b;
    }
    // A flag is the most specific word: the manifest does not override it.
    for field in &base.pinned {
        match *field {
            "provider" => llm.provider = base.provider,
            "base_url" => llm.base_url = base.base_url.clone(),
            "model" => llm.model = base.model.clone(),
            "concurrency" => llm.concurrency = base.concurrency,
            "batch" => llm.batch = base.batch,
            _ => {}
        }
    }
    // The key goes with the provider in force.
    if base.pinned.contains(&"provider") && m.llm.provider != Some(base.provider) {
        llm.api_key = base.api_key.clone();
    }
    llm
}

/// The flags that override a manifest's `[llm]` values, as `--llm-model`
/// …, for the run's first line; empty when none differs.
fn overriding_flags(m: &Manifest, base: &LlmSettings) -> Vec<String> {
    let mut flags = Vec::new();
    for field in &base.pinned {
        let (flag, differs) = match *field {
            "provider" => ("--llm-provider", m.llm.provider.is_some_and(|p| p != base.provider)),
            "base_url" => ("--llm-base-url", m.llm.base_url.as_ref().is_some_and(|u| *u != base.base_url)),
            "model" => ("--llm-model", m.llm.model.as_ref().is_some_and(|v| *v != base.model)),
            "concurrency" => ("--llm-concurrency", m.llm.concurrency.is_some_and(|c| c != base.concurrency)),
            "batch" => ("--llm-batch", m.llm.batch.is_some_and(|b| b != base.batch)),
            _ => continue,
        };
        if differs {
            flags.push(flag.to_string());
        }
    }
    flags
}

/// Where a manifest's LLM settings came from, when not from the manifest
/// itself: a sentence for the run's first line.
pub fn llm_source(m: &Manifest, llm: &LlmSettings, env: fn(&str) -> Option<String>) -> Option<String> {
    if m.llm.provider.is_some() {
        let flags = overriding_flags(m, llm);
        return (!flags.is_empty()).then(|| {
            format!(
                "{} on the command line over the manifest's [llm] (a flag is the most specific word)",
                flags.join(", ")
            )
        });
    }
    let from_env = env("ASSAY_LLM_PROVIDER").is_some_and(|p| !p.trim().is_empty());
    let from_flag = llm.pinned.contains(&"provider");
    Some(match (llm.provider, from_flag, from_env) {
        (ProviderKind::Offline, true, _) => "the manifest has no [llm]: offline, as --llm-provider says".into(),
        (_, true, _) => "the manifest has no [llm]: the model the --llm-* flags name".into(),
        (ProviderKind::Offline, false, true) => "the manifest has no [llm]: offline, as ASSAY_LLM_PROVIDER says".into(),
        (ProviderKind::Offline, false, false) => {
            "the manifest has no [llm] and ASSAY_LLM_PROVIDER is not set: offline (no model)".into()
        }
        (_, false, true) => "the manifest has no [llm]: the model ASSAY_LLM_PROVIDER and ASSAY_LLM_* name".into(),
        (_, false, false) => "the manifest has no [llm]: the configured model (the saved settings)".into(),
    })
}

/// Another system's index (`corpus.index`): a folder or a zip of it, read.
async fn read_index(
    path: std::path::PathBuf,
    format: engine::graph::foreign::Format,
) -> AppResult<engine::graph::foreign::ForeignIndex> {
    tokio::task::spawn_blocking(move || {
        let files = engine::graph::foreign::ForeignFiles::open(&path, format).map_err(|e| e.0)?;
        engine::graph::foreign::read(&files, format).map_err(|e| e.to_string())
    })
    .await
    .map_err(|_| AppError::Internal)?
    .map_err(|e| AppError::Invalid(format!("corpus.index: {e}")))
}

/// Runs every stage of `m` (corpus files resolved against `base`);
/// `run_job(job, stage label, retry failed items)` runs a job to its end and returns it (the
/// CLI: in the foreground with a progress bar).
pub async fn run<F, Fut>(
    pool: &Db,
    llm: &engine::llm::settings::LlmSettings,
    m: &Manifest,
    base: &Path,
    run_job: F,
) -> AppResult<Outcome>
where
    F: Fn(i64, String, bool) -> Fut,
    Fut: std::future::Future<Output = AppResult<JobView>>,
{
    let project_id = project(pool, m).await?;
    let mut r = Runner { pool, project_id, run_job, stages: Vec::new() };

    // Corpus: the files' contents decide; a project holds one corpus.
    let started = std::time::Instant::now();
    let mut files: Vec<(String, Vec<u8>)> = match &m.corpus.project {
        Some(name) => documents_of(pool, name).await?,
        None => Vec::new(),
    };
    for (i, path) in m.corpus_paths(base).into_iter().enumerate() {
        match path {
            None => files.extend(engine::sample::sample_files().map(|(n, b)| (n.to_string(), b.to_vec()))),
            Some(p) => {
                let bytes = std::fs::read(&p)
                    .map_err(|e| AppError::Invalid(format!("corpus.files[{i}]: cannot read {}: {e}", p.display())))?;
                let name = p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
                files.push((name, bytes));
            }
        }
    }
    let index = match m.index_path(base) {
        Some((path, format)) => Some(read_index(path, format).await?),
        None => None,
    };
    let mut hashes: Vec<String> =
        files.iter().map(|(n, b)| format!("{n}:{}", crate::ssr::tokens::hash(&String::from_utf8_lossy(b)))).collect();
    if let Some(index) = &index {
        // The index's texts and graph decide, as files' contents do.
        hashes.push(format!("index:{}:{}", index.format.name(), crate::ssr::tokens::hash(&format!("{index:?}"))));
        hashes.push(format!("community_level:{:?}", m.corpus.community_level));
    }
    let print = fingerprint(StageKind::Corpus, json!(hashes));
    let reused = r.known(StageKind::Corpus, &print).await?.is_some();
    if let (false, Some(index)) = (reused, index) {
        store::foreign::import(pool, project_id, index, m.corpus.community_level).await?;
        r.remember(&print, project_id, None).await?;
    } else if !reused {
        let project = store::projects::get_project(pool, project_id).await?;
        if project.summary.documents > 0 {
            return Err(AppError::Invalid(format!(
                "corpus: project \"{}\" already holds other documents: name the experiment differently",
                m.name
            )));
        }
        let limits = engine::corpus::ImportLimits::new(1 << 30, 100_000);
        let report = crate::ssr::ingest::add_files(pool, project_id, &files, &limits).await?;
        if let Some(s) = report.skipped.first() {
            return Err(AppError::Invalid(format!("corpus.files: {} was refused: {}", s.file, s.reason)));
        }
        r.remember(&print, project_id, None).await?;
    }
    r.stages.push(Stage {
        kind: StageKind::Corpus,
        label: label::CORPUS.into(),
        object_id: project_id,
        job_id: None,
        reused,
        new_calls: 0,
        cached_calls: 0,
        seconds: started.elapsed().as_secs_f64(),
    });
    // Everything after the corpus depends on it.
    let corpus = print;

    // A stage that fails stops the run; what ran is still reported, with
    // the stage, the reason and what to do next.
    let mut made = Made::default();
    let result: AppResult<()> = async {
        if m.needs_graph() && m.corpus.index.is_none() {
            let settings = m.graph.clone().checked()?;
            r.stage(StageKind::Graph, label::GRAPH.into(), json!({ "corpus": corpus, "settings": settings }), async {
                Ok((crate::ssr::graph::create_graph(pool, project_id, &settings, false).await?, project_id))
            })
            .await?;
        }

        for (i, q) in m.questions.iter().enumerate() {
            let label = label::questions(i, q);
            let what =
                json!({ "corpus": corpus, "graph": m.needs_graph().then(|| m.graph.clone().checked().ok()).flatten(), "questions": q });
            let set = r
                .stage(StageKind::Questions, label, what, async {
                    let q = q.clone().checked().map_err(|e| AppError::Invalid(format!("questions[{i}].{e}")))?;
                    crate::ssr::questions::run::create(pool, project_id, q, None, false).await
                })
                .await?;
            made.question_sets.push(set);
        }

        for (i, &set) in made.question_sets.iter().enumerate() {
            let mut of_set = Vec::new();
            for method in &m.methods {
                let params =
                    engine::rag::method::resolve(&method.method, &method.params_json()).map_err(AppError::from)?;
                let label = label::answers(&method.method, i);
                let what = json!({ "set": set, "method": method.method, "params": params, "target_words": method.target_words });
                let job = crate::ssr::answers::AnswersJob {
                    question_set_id: set,
                    request: method.clone(),
                    name: None,
                    no_cache: false,
                };
                of_set.push(
                    r.stage(StageKind::Answers, label, what, crate::ssr::answers::create(pool, &job, &llm.minilm_dir))
                        .await?,
                );
            }
            made.answer_sets.push(of_set);
        }

        if let Some(e) = &m.evaluation {
            let settings = e.settings().map_err(AppError::from)?;
            let chosen: Vec<usize> =
                if e.sets.is_empty() { (1..=made.question_sets.len()).collect() } else { e.sets.clone() };
            for (n, position) in chosen.iter().enumerate() {
                let set = made.question_sets[position - 1];
                let sets = &made.answer_sets[position - 1];
                // Sanity checks on the first evaluated set: each method against itself.
                if e.sanity && n == 0 {
                    for (a, method) in sets.iter().zip(&m.methods) {
                        let label = label::sanity(&method.method);
                        let what = json!({ "answer_set": a, "settings": settings });
                        let id = r
                            .stage(StageKind::Sanity, label, what, async {
                                crate::ssr::evaluations::create_sanity(pool, llm, *a, settings.clone()).await
                            })
                            .await?;
                        made.sanity_checks.push(id);
                    }
                }
                let label = label::evaluation(*position, sets.len());
                let what = json!({ "set": set, "made.answer_sets": sets, "settings": settings });
                let req = crate::ssr::evaluations::EvalRequest {
                    question_set_id: set,
                    answer_sets: sets.clone(),
                    pairs: Vec::new(),
                    settings: settings.clone(),
                    name: Some(format!("{} — questions {position}", m.name)),
                    no_cache: false,
                };
                made.evaluations.push(
                    r.stage(StageKind::Evaluation, label, what, crate::ssr::evaluations::create(pool, llm, &req))
                        .await?,
                );
            }
        }

        if let Some(mx) = &m.metrics {
            for (i, q) in m.questions.iter().enumerate() {
                if !matches!(q, QuestionsRequest::Hierarchical(_)) {
                    continue;
                }
                let (set, sets) = (made.question_sets[i], made.answer_sets[i].clone());
                let label = label::metrics(i);
                mx.validate()?;
                let mut what =
                    json!({ "set": set, "made.answer_sets": sets, "k": mx.k, "bins": mx.bins, "unit": mx.unit });
                // (Standard runs keep the fingerprint they had before the choice.)
                if mx.definitions != engine::metrics::Definitions::Standard {
                    what["definitions"] = json!(mx.definitions);
                }
                let run = r
                    .stage(StageKind::Metrics, label, what, async {
                        let (run, job) =
                            crate::ssr::metrics::create(pool, set, &sets, mx).await?;
                        Ok((job, run))
                    })
                    .await?;
                made.metrics_runs.push(run);
            }
        }

        Ok(())
    }
    .await;
    let stopped = match result {
        Ok(()) => None,
        Err(e) => Some(e.to_string()),
    };
    let Made { question_sets, answer_sets, evaluations, sanity_checks, metrics_runs } = made;
    let (new_calls, cached_calls) = r.stages.iter().fold((0, 0), |(n, c), s| (n + s.new_calls, c + s.cached_calls));
    Ok(Outcome {
        project_id,
        stages: r.stages,
        question_sets,
        answer_sets,
        evaluations,
        sanity_checks,
        metrics_runs,
        new_calls,
        cached_calls,
        stopped,
    })
}

/// What the stages made so far.
#[derive(Default)]
struct Made {
    question_sets: Vec<i64>,
    answer_sets: Vec<Vec<i64>>,
    evaluations: Vec<i64>,
    sanity_checks: Vec<i64>,
    metrics_runs: Vec<i64>,
}

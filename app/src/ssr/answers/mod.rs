//! The answers stage over the store: creating the job that answers a
//! question set with a built-in method, running it (GraphRAG-style methods
//! first write any missing community reports), and storing its answers;
//! shared by the server functions and the CLI. [`io`]: importing answers
//! from the user's own system and exporting them.

pub mod io;

use std::sync::Arc;

use crate::ssr::store::Db;
use engine::jobs::{ItemKey, ItemOutcome, RunEnd, WorkItem};
use engine::llm::Gateway;
use engine::rag::{method, Corpus};
use serde_json::json;
use types::requests::{AnswersRequest, Param};

use crate::error::{AppError, AppResult};
use crate::model::JobView;
use crate::ssr::jobs::params::AnswersParams;
use crate::ssr::jobs::{self, project_of, Ended, Items, JobParams, Phase, Run, Stage};
use crate::ssr::store;
use crate::ssr::store::answers::NewAnswer;

/// An answers job as asked for: the question set, the request (method,
/// parameters, length), the answer set's name and whether to send every
/// call to the provider.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswersJob {
    pub question_set_id: i64,
    pub request: AnswersRequest,
    /// A name for the answer set (else one from the method and parameters).
    pub name: Option<String>,
    pub no_cache: bool,
}

/// The request, or its field out of range as the caller's mistake.
fn checked(req: &AnswersRequest) -> AppResult<&AnswersRequest> {
    req.validate().map_err(|e| AppError::Invalid(e.to_string()))?;
    Ok(req)
}

/// The default name of a set: the method, and the parameters that differ
/// from its defaults.
fn set_name(method_name: &str, params: &serde_json::Value) -> String {
    let defaults = method::defaults(method_name).unwrap_or_default();
    // A secret is never part of a name, not even redacted, at any depth.
    let params = engine::secret::without_secrets(params);
    let changed: Vec<String> = params
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| defaults.get(k.as_str()) != Some(v) && k.as_str() != "mode")
        .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string)))
        .collect();
    if changed.is_empty() {
        method_name.to_string()
    } else {
        format!("{method_name} ({})", changed.join(", "))
    }
}

/// The price of answering a question set as `req` asks, before anything
/// runs: its calls (exact, but for GraphRAG's community reports,
/// made once a project), the prompts' tokens from the project's chunks,
/// the method's context and the prompt template, replies of the target
/// length, and their cost with the configured model's price.
pub async fn plan(
    pool: &Db,
    llm: &engine::llm::settings::LlmSettings,
    question_set_id: i64,
    req: &AnswersRequest,
) -> AppResult<crate::model::RunPlan> {
    let req = checked(req)?;
    let set = store::questions::get_set(pool, question_set_id).await?;
    let params = method::resolve(&req.method, &req.params_json()).map_err(AppError::from)?;
    let (corpus, chunk_tokens) = crate::ssr::price::corpus(pool, set.project_id).await?;
    let resolved = AnswersRequest { params: Param::from_object(&params), ..req.clone() };
    let label = format!("answers: {} on {}", req.method, set.name);
    let n = set.questions.max(0) as u64;
    let e = engine::experiment::answers_estimate(&resolved, n, label, &corpus, chunk_tokens);
    let by_service = engine::rag::presets::is_remote(&req.method);
    let plan = crate::ssr::price::one_stage(llm, e, set.questions, by_service);
    Ok(crate::ssr::price::timed(pool, llm, plan, by_service).await)
}

/// Creates (does not run) the job answering a question set, with the empty
/// answer set it fills. Returns the job and the set's id.
/// `minilm_dir` is where the in-process MiniLM is (`LlmSettings::minilm_dir`):
/// a dense method embedding with it is refused when the model is missing.
pub async fn create(pool: &Db, job: &AnswersJob, minilm_dir: &std::path::Path) -> AppResult<(JobView, i64)> {
    let req = checked(&job.request)?;
    let set = store::questions::get_set(pool, job.question_set_id).await?;
    if set.questions == 0 {
        return Err(AppError::Invalid(format!("question set {} has no questions", set.id)));
    }
    let params = method::resolve(&req.method, &req.params_json()).map_err(AppError::from)?;
    // Settings copied from what a reader is shown carry redactions, not
    // secrets: the method would be sent the dots.
    if let Some(at) = engine::secret::redaction_in(&params) {
        return Err(AppError::Invalid(format!(
            "the parameter at {at} holds a redaction (••••), as Assay shows a secret to readers, not the secret \
             itself: give the token or key"
        )));
    }
    if method::needs_graph(&req.method) && store::graph::overview(pool, set.project_id).await?.is_none() {
        return Err(AppError::Invalid(format!("{} needs the knowledge graph: build it first", req.method)));
    }
    if method::needs_vectors(&req.method) && params["embedder"] == "minilm" {
        if !minilm_dir.join("model.safetensors").is_file() {
            let missing = engine::embed::minilm::MiniLmError::Missing(minilm_dir.to_path_buf());
            return Err(AppError::Invalid(missing.to_string()));
        }
    }
    let params_of_job = JobParams::Answers(AnswersParams {
        no_cache: job.no_cache,
        set_id: set.id,
        method: req.method.clone(),
        params: params.clone(),
        target_words: req.target_words,
    });
    // What readers of the set see: its parameters with any secret redacted,
    // as its job shows them (the job keeps the secrets apart).
    let (id, mut shown_job) = jobs::create_showing(pool, set.project_id, &params_of_job, set.questions).await?;
    let shown = shown_job["params"].take();
    let name = job.name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| set_name(&req.method, &params));
    let described = json!({ "params": shown, "target_words": req.target_words });
    let answer_set =
        match store::answers::create_set(pool, set.project_id, set.id, Some(id), name.trim(), &req.method, &described)
            .await
        {
            Ok(s) => s,
            Err(e) => {
                // A job whose start failed is never left queued.
                store::jobs::fail_queued(pool, id, &format!("its answer set could not be made: {e}")).await?;
                return Err(e);
            }
        };
    Ok((store::jobs::get_job(pool, id).await?, answer_set))
}

/// The secrets each answer set's method runs with, by set: those its
/// answers job stored apart (`jobs::create`); a set made by no such job (a
/// sanity check's second run) takes those of a set among `sets` with the
/// same method and shown parameters. Sets without secrets are left out.
pub async fn secrets_of_sets(
    pool: &Db,
    sets: &[crate::model::AnswerSetView],
) -> AppResult<std::collections::HashMap<i64, engine::secret::Secrets>> {
    let mut own = std::collections::HashMap::new();
    for s in sets {
        let Some(job) = s.job_id else { continue };
        let stored = store::jobs::secrets(pool, job).await?;
        let secrets = engine::secret::Secrets::from_stored(stored.as_deref())
            .map_err(|e| AppError::Invalid(format!("answer set {} ({}): {e}", s.id, s.name)))?;
        if !secrets.is_empty() {
            own.insert(s.id, secrets);
        }
    }
    let mut all = own.clone();
    for s in sets.iter().filter(|s| !own.contains_key(&s.id)) {
        let twin =
            sets.iter().find(|t| own.contains_key(&t.id) && t.method == s.method && t.parameters == s.parameters);
        if let Some(t) = twin {
            all.insert(s.id, own[&t.id].clone());
        }
    }
    Ok(all)
}

/// The project's corpus as the methods read it (reports included).
pub async fn corpus(pool: &Db, project_id: i64) -> AppResult<Corpus> {
    let chunks = store::documents::chunk_texts(pool, project_id).await?;
    let graph = store::graph::load(pool, project_id).await?;
    let communities = store::graph::communities(pool, project_id).await?;
    let reports = store::graph::reports(pool, project_id).await?;
    Ok(Corpus::new(chunks, graph, communities).with_reports(reports))
}

/// The job's items: first the community reports still missing (for
/// GraphRAG-style methods), `report-N`; then one per question, `a-QID`.
async fn items(pool: &Db, job: &JobView, p: &AnswersParams) -> AppResult<Vec<WorkItem>> {
    let project = project_of(job)?;
    let mut items = Vec::new();
    if method::needs_reports(&p.method) {
        let graph = store::graph::load(pool, project).await?;
        let communities = store::graph::communities(pool, project).await?;
        let written: std::collections::HashSet<usize> =
            store::graph::reports(pool, project).await?.into_iter().map(|r| r.community).collect();
        for (community, members) in engine::rag::graphrag::reportable(&graph, &communities) {
            if !written.contains(&community) {
                let item = engine::rag::graphrag::ReportItem { community, members };
                items.push(WorkItem::new(ItemKey::Report(community), &item));
            }
        }
    }
    for q in store::questions::list_questions(pool, p.set_id).await? {
        let item = engine::rag::Item { question_id: q.id, question: q.question, target_words: p.target_words };
        items.push(WorkItem::new(ItemKey::Answer(q.id), &item));
    }
    Ok(items)
}

/// Runs an answers job's items: the reports (stored as soon as they are
/// all done) or the chunk vectors the method needs, then the answers with
/// the method built over the corpus, then stores the answers in the job's
/// set.
async fn execute(run: &Run<'_>, p: &AnswersParams, items: Vec<WorkItem>) -> AppResult<Result<RunEnd, String>> {
    let (pool, gateway, job, phase) = (run.pool, run.gateway, run.job, &run.phase);
    let llm = run.llm;
    let project = project_of(job)?;
    let planned = items.len();
    let (reports, answers): (Vec<WorkItem>, Vec<WorkItem>) =
        items.into_iter().partition(|i| matches!(i.item_key(), Some(ItemKey::Report(_))));
    // Loaded once: the reports are written from its graph, the method reads all of it.
    let mut corpus = corpus(pool, project).await?;
    if !reports.is_empty() {
        let graph = &corpus.graph;
        let end = phase
            .run(reports, phase.concurrency, |item| {
                engine::rag::graphrag::run_report_item(graph, gateway, job.id, item)
            })
            .await;
        if !matches!(end, Ok(RunEnd::Finished)) {
            return Ok(end);
        }
        let items = store::jobs::job_items(pool, job.id).await?;
        let written: Vec<engine::rag::CommunityReport> =
            jobs::done_results::<engine::rag::graphrag::ReportItem>(&items, |k| matches!(k, ItemKey::Report(_)))?
                .into_iter()
                .map(|(_, r)| r)
                .collect();
        store::graph::save_reports(pool, project, job.id, &written).await?;
        corpus = corpus.with_reports(store::graph::reports(pool, project).await?);
    }
    let name = p.method.as_str();
    if method::needs_vectors(name) {
        let embedder = match embedder(&p.params, &llm.minilm_dir) {
            Ok(e) => e,
            Err(e) => return Ok(Err(e)),
        };
        let end = embed_chunks(pool, gateway, job, project, &embedder, planned, phase).await?;
        if !matches!(end, Ok(RunEnd::Finished)) {
            return Ok(end);
        }
    }
    let m = match build_method(pool, gateway, llm, project, Arc::new(corpus), name, &p.params).await? {
        Ok(m) => m,
        Err(e) => return Ok(Err(e)),
    };
    // The method's answer temperature, when its parameters set one.
    let gateway = &match method::answer_temperature(&p.params) {
        Ok(Some(t)) => gateway.clone().with_temperature(engine::rag::answer::PURPOSE, Some(t)),
        Ok(None) => gateway.clone(),
        Err(e) => return Ok(Err(e.into())),
    };
    let end =
        phase.run(answers, phase.concurrency, |item| engine::rag::run_item(m.as_ref(), gateway, job.id, item)).await;
    if matches!(end, Ok(RunEnd::Finished)) {
        store_answers(pool, job.id, |k| matches!(k, ItemKey::Answer(_)), p.target_words).await?;
    }
    Ok(end)
}

/// A built-in method over a loaded corpus. Dense retrieval reads the chunk
/// vectors stored for its model (embedded by the answers job that needed
/// them first). `Err` inside: the method cannot be built as asked.
pub async fn build_method(
    pool: &Db,
    gateway: &Gateway,
    llm: &engine::llm::settings::LlmSettings,
    project: i64,
    corpus: Arc<Corpus>,
    name: &str,
    params: &serde_json::Value,
) -> AppResult<Result<Box<dyn engine::rag::Method>, String>> {
    let dense = if method::needs_vectors(name) {
        let embedder = match embedder(params, &llm.minilm_dir) {
            Ok(e) => e,
            Err(e) => return Ok(Err(e)),
        };
        let model = embedder.model_name(gateway);
        Some(method::DenseIndex { vectors: store::vectors::load(pool, project, &model).await?, embedder })
    } else {
        None
    };
    let external_chunks = if engine::rag::presets::is_remote(name) {
        store::foreign::external_chunk_ids(pool, project).await?
    } else {
        Default::default()
    };
    let extras = method::Extras { dense, transport: Some(llm.transport()), external_chunks };
    Ok(method::build(name, params, corpus, extras).map_err(String::from))
}

/// The in-process MiniLM in `dir`, loaded on first use and shared.
pub(crate) fn minilm(dir: &std::path::Path) -> Result<Arc<engine::embed::minilm::MiniLm>, String> {
    engine::embed::minilm::shared(dir).map_err(|e| e.to_string())
}

/// The embedder a NaiveRAG configuration asks for.
fn embedder(params: &serde_json::Value, minilm_dir: &std::path::Path) -> Result<engine::embed::Embedder, String> {
    match params["embedder"].as_str().unwrap_or("minilm") {
        "endpoint" => Ok(engine::embed::Embedder::Endpoint),
        "minilm" => Ok(engine::embed::Embedder::MiniLm(minilm(minilm_dir)?)),
        other => Err(format!("naive: embedder must be minilm or endpoint, not \"{other}\"")),
    }
}

/// Chunks embedded per item.
const EMBED_BATCH: usize = 32;

/// An embedding job item (key `embed-FIRSTID`): a batch of chunks and their texts.
#[derive(serde::Serialize, serde::Deserialize)]
struct EmbedBatch {
    chunks: Vec<i64>,
    texts: Vec<String>,
}

/// What an embedding item stores.
#[derive(serde::Serialize, serde::Deserialize)]
struct Embedded {
    embedded: usize,
    model: String,
}

engine::job_items!(EmbedBatch => Embedded);

/// Embeds the project's chunks that have no vector for the embedder's model
/// yet (items `embed-<first chunk id>`, 32 chunks each), storing each
/// batch's vectors as it finishes: they are computed once per corpus and
/// model, and every later answer set reuses them.
async fn embed_chunks(
    pool: &Db,
    gateway: &Gateway,
    job: &JobView,
    project: i64,
    embedder: &engine::embed::Embedder,
    planned: usize,
    phase: &Phase<'_>,
) -> AppResult<Result<RunEnd, String>> {
    let model = embedder.model_name(gateway);
    let missing = store::vectors::missing(pool, project, &model).await?;
    let batches: Vec<WorkItem> = missing
        .chunks(EMBED_BATCH)
        .map(|b| {
            let batch =
                EmbedBatch { chunks: b.iter().map(|c| c.0).collect(), texts: b.iter().map(|c| c.1.clone()).collect() };
            WorkItem::new(ItemKey::Embed(b[0].0), &batch)
        })
        .collect();
    // The job's total: its planned items, batches embedded by an earlier
    // run of it (resumed), and these.
    let earlier = store::jobs::job_items(pool, job.id)
        .await?
        .iter()
        .filter(|i| matches!(ItemKey::parse(&i.key), Some(ItemKey::Embed(_))))
        .count();
    if earlier + batches.len() > 0 {
        store::jobs::set_total(pool, job.id, (planned + earlier + batches.len()) as i64).await?;
    }
    if batches.is_empty() {
        return Ok(Ok(RunEnd::Finished));
    }
    // One batch at a time: in-process embedding uses every core already.
    Ok(phase
        .run(batches, 1, |item| {
            let model = model.clone();
            async move {
                let EmbedBatch { chunks: ids, texts } = match item.read() {
                    Ok(b) => b,
                    Err(e) => return ItemOutcome::failed(e),
                };
                let ctx =
                    engine::llm::CallContext { job_id: Some(job.id), item: Some(item.key.clone()), prompt_hash: None };
                let mut meter = engine::llm::Meter::default();
                let vectors = match embedder {
                    // CPU-bound: off the async threads.
                    engine::embed::Embedder::MiniLm(m) => {
                        let m = m.clone();
                        tokio::task::spawn_blocking(move || {
                            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                            m.embed(&refs).map_err(|e| e.to_string())
                        })
                        .await
                        .unwrap_or_else(|e| Err(e.to_string()))
                    }
                    endpoint => endpoint.embed(gateway, &ctx, &texts, Some(&mut meter)).await,
                };
                let tokens = meter.prompt_tokens;
                match vectors {
                    Ok(v) if v.len() == ids.len() => {
                        let pairs: Vec<(i64, Vec<f32>)> = ids.into_iter().zip(v).collect();
                        match store::vectors::save(pool, &model, &pairs).await {
                            Ok(()) => ItemOutcome::done::<EmbedBatch>(
                                &Embedded { embedded: pairs.len(), model: model.clone() },
                                tokens,
                                meter.cost_usd,
                            ),
                            Err(e) => ItemOutcome::Failed { error: e.to_string(), tokens, cost_usd: meter.cost_usd },
                        }
                    }
                    Ok(v) => ItemOutcome::Failed {
                        error: format!("{} vectors for {} chunks", v.len(), ids.len()),
                        tokens,
                        cost_usd: meter.cost_usd,
                    },
                    Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: meter.cost_usd },
                }
            }
        })
        .await)
}

/// Writes a finished job's answers into its set.
/// (Also a sanity check's second run: its items are `again-QID`, its set the
/// one its evaluation job fills.)
pub(crate) async fn store_answers(
    pool: &Db,
    job_id: i64,
    pick: fn(&ItemKey) -> bool,
    target_words: Option<usize>,
) -> AppResult<()> {
    let set = store::answers::set_of_job(pool, job_id).await?;
    let method = store::answers::get_set(pool, set).await?.method;
    let items = store::jobs::job_items(pool, job_id).await?;
    let answers: Vec<NewAnswer> = jobs::done_results::<engine::rag::Item>(&items, pick)?
        .into_iter()
        .map(|(_, a)| NewAnswer::of(a.question_id, &a.answer, &method, target_words))
        .collect();
    store::answers::replace_answers(pool, set, &answers).await
}

/// Imports answers from a file for a question set, as a new answer set.
pub async fn import(pool: &Db, question_set_id: i64, name: &str, file_name: &str, bytes: &[u8]) -> AppResult<i64> {
    let set = store::questions::get_set(pool, question_set_id).await?;
    if name.trim().is_empty() {
        return Err(AppError::Invalid("give the imported answers a name (the system that wrote them)".into()));
    }
    let questions = store::questions::list_questions(pool, set.id).await?;
    let answers = crate::ssr::answers::io::parse(file_name, bytes, &questions)?;
    let parameters = json!({ "file": file_name });
    store::answers::import_set(pool, set.project_id, set.id, name.trim(), &parameters, &answers).await
}

/// The answers job.
pub struct AnswersStage;

impl Stage for AnswersStage {
    fn items<'a>(&'a self, pool: &'a Db, job: &'a JobView, params: &'a JobParams) -> Items<'a> {
        Box::pin(async move { items(pool, job, params.answers(job.id)?).await })
    }

    fn execute<'a>(&'a self, run: &'a Run<'a>, items: Vec<WorkItem>) -> Ended<'a> {
        Box::pin(async move { execute(run, run.params.answers(run.job.id)?, items).await })
    }
}

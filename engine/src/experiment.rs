//! An experiment manifest (TOML): one file that names every stage of an
//! experiment — the corpus and its chunking, the graph extraction, the
//! question generators and their counts, the RAG methods and their
//! parameters, the evaluation protocol and judge, the metrics, and the LLM
//! provider — so that `assay run MANIFEST` (and the browser's wizard)
//! reproduce it. `examples/experiment.toml` is a commented example.
//!
//! [`Manifest::parse`] reads and checks a manifest before any work starts:
//! an unknown key, a wrong type or a negative count is refused by TOML
//! decoding with the key's line and name; the checks here name the key of
//! anything else that cannot run (an unknown method, a missing file, an
//! evaluation with fewer than two methods, …).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::judge::eval::{EvaluationRequest, Settings};
pub use types::requests::QuestionsRequest;
use types::requests::{AnswersRequest, ChunkRequest, GraphRequest, MetricsRequest};
pub use types::StageKind;

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The experiment's name, also its project's.
    pub name: String,
    #[serde(default)]
    pub llm: LlmSection,
    pub corpus: CorpusSection,
    /// Graph extraction (built when a question generator or a method needs it).
    #[serde(default)]
    pub graph: GraphRequest,
    #[serde(default)]
    pub questions: Vec<QuestionsRequest>,
    #[serde(default)]
    #[serde(serialize_with = "methods_as_tables")]
    pub methods: Vec<AnswersRequest>,
    pub evaluation: Option<EvaluationSection>,
    /// Reference-based metrics (the HieraRAG paper's) of every set with
    /// reference answers.
    pub metrics: Option<MetricsRequest>,
}

/// Who answers the LLM calls. The API key is never in the manifest: it is
/// read from the environment variable `api_key_env` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSection {
    /// `offline` (no model) or `openai` (any OpenAI-compatible endpoint);
    /// empty (no `[llm]`, or no `provider` in it): the configured settings
    /// the run is given — the CLI's `--llm-*` flags or `ASSAY_LLM_*`, the
    /// browser's saved settings — else offline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<types::ProviderKind>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub concurrency: Option<usize>,
    /// Send the jobs' calls through the endpoint's Batch API (half the
    /// price, answered within 24 h); `--llm-batch` / `ASSAY_LLM_BATCH` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<bool>,
}

impl Default for LlmSection {
    fn default() -> Self {
        LlmSection { provider: None, base_url: None, model: None, api_key_env: None, concurrency: None, batch: None }
    }
}

/// The documents and how they are chunked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusSection {
    /// Files (relative to the manifest's folder), or `"sample"` for the
    /// built-in sample corpus.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Or: the documents of this project (as uploaded in the browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Or: another system's index folder (or a zip of it), relative to the
    /// manifest's folder: its documents and chunks are the corpus and its
    /// graph the graph, nothing extracted again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// The system that wrote `index`: lightrag, graphrag or nano-graphrag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_format: Option<String>,
    /// Which of the index's community levels become the project's (its coarsest by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub community_level: Option<i64>,
    /// `chunk_tokens`, `chunk_overlap`, `tokenizer`.
    #[serde(flatten)]
    pub chunking: ChunkRequest,
}

/// A corpus' size as a run stores it: its documents, their tokens, and
/// their chunks as the chunker cuts them (the estimate's chunk count
/// is the chunker's, not a formula's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusSize {
    pub documents: usize,
    pub tokens: u64,
    pub chunks: u64,
    /// The chunks' tokens added up (overlaps counted in each chunk): what
    /// extraction and chunk summaries send.
    #[serde(default)]
    pub chunk_tokens: u64,
}

impl CorpusSize {
    /// A chunk's mean tokens (`fallback` for a corpus measured without them).
    fn mean_chunk(&self, fallback: u64) -> u64 {
        if self.chunks == 0 || self.chunk_tokens == 0 {
            fallback
        } else {
            self.chunk_tokens.div_ceil(self.chunks)
        }
    }
}

impl CorpusSize {
    /// Files as an upload reads them (refused ones left out, repeated
    /// texts once), each document chunked with `settings`.
    pub fn measure<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        settings: &crate::chunk::ChunkSettings,
    ) -> CorpusSize {
        let limits = crate::corpus::ImportLimits::new(1 << 30, 1_000_000);
        let read = crate::corpus::import_files(files, &limits);
        let mut size = CorpusSize::default();
        for doc in &read.documents {
            size.documents += 1;
            size.tokens += crate::chunk::Bpe::count(settings.tokenizer, &doc.text) as u64;
            if let Ok(chunks) = crate::chunk::chunk_text(&doc.text, settings) {
                size.chunks += chunks.len() as u64;
                size.chunk_tokens += chunks.iter().map(|c| c.tokens as u64).sum::<u64>();
            }
        }
        size
    }
}

/// How many questions `q` asks for (summary: users × tasks × per task, or
/// its count; hierarchical: categories of the shipped hierarchy × per
/// category, + 4 × the factorial cells').
pub fn planned(q: &QuestionsRequest) -> usize {
    match q {
        QuestionsRequest::Graph(g) => g.node + g.edge + g.subgraph,
        QuestionsRequest::Summary(s) => s.planned(),
        QuestionsRequest::Hierarchical(h) => {
            // Categories per dimension in the shipped hierarchy: a flat
            // one (QP) at its coarse level only.
            let shipped = crate::questions::hierarchy::shipped();
            let categories: usize = h
                .dimensions
                .iter()
                .map(|d| d.trim().to_uppercase())
                .map(|d| match shipped.get(&d).filter(|d| crate::questions::hierarchy::is_flat(d)) {
                    Some(flat) if h.levels.contains(&2) => flat.categories.len(),
                    Some(_) => 0,
                    None => h.levels.iter().sum::<usize>(),
                })
                .sum();
            categories * h.questions_per_category() + 4 * h.factorial
        }
    }
}

/// The evaluation of every question set (or those `sets` names) over every
/// pair of methods: the table is an [`EvaluationRequest`] (the paper's
/// defaults) with the two keys only a manifest has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationSection {
    /// Positions (from 1) in `[[questions]]` of the sets to evaluate; empty: all.
    #[serde(default)]
    pub sets: Vec<usize>,
    /// Sanity-check each method against itself first.
    #[serde(default = "yes")]
    pub sanity: bool,
    #[serde(flatten)]
    pub request: EvaluationRequest,
}

fn yes() -> bool {
    true
}

impl Default for EvaluationSection {
    fn default() -> Self {
        EvaluationSection { sets: Vec::new(), sanity: true, request: EvaluationRequest::default() }
    }
}

impl EvaluationSection {
    /// The judge's settings, or what is wrong, naming the key.
    pub fn settings(&self) -> Result<Settings, crate::Invalid> {
        Settings::from_request(&self.request).map_err(|e| crate::Invalid(format!("evaluation.{e}")))
    }
}

/// Stage labels, the same in a run's progress, its plan and its estimate.
pub mod label {
    use super::QuestionsRequest;

    pub const CORPUS: &str = "corpus";
    pub const GRAPH: &str = "graph";

    /// The `i`-th (from 0) `[[questions]]` entry.
    pub fn questions(i: usize, q: &QuestionsRequest) -> String {
        format!("questions {}: {}", i + 1, q.kind())
    }
    pub fn answers(method: &str, i: usize) -> String {
        format!("answers: {method} on questions {}", i + 1)
    }
    pub fn sanity(method: &str) -> String {
        format!("sanity: {method} against itself")
    }
    /// `position` from 1, as in `evaluation.sets`.
    pub fn evaluation(position: usize, methods: usize) -> String {
        format!("evaluation: questions {position}, {methods} methods")
    }
    pub fn metrics(i: usize) -> String {
        format!("metrics: questions {}", i + 1)
    }
}

/// An answer's tokens: the method's target length, or a typical answer's.
fn answer_tokens(m: &AnswersRequest) -> u64 {
    m.target_words.map_or(ANSWER_TOKENS, |w| (w as u64 * 4).div_ceil(3))
}

/// LLM calls a method makes per answer.
fn per_answer(m: &AnswersRequest) -> u64 {
    match m.method.as_str() {
        "lightrag" => 2,
        name if crate::rag::presets::is_remote(name) => 0,
        _ => 1,
    }
}

/// Extracting the graph of a corpus of `corpus`' size, cut into chunks of
/// at most `chunk_tokens`, with `gleaning` follow-up passes.
pub fn graph_estimate(corpus: &CorpusSize, chunk_tokens: usize, gleaning: u32) -> StageEstimate {
    let (size, chunks) = (chunk_tokens as u64, corpus.chunks);
    let chunk = corpus.mean_chunk(size);
    let passes = 1 + gleaning as u64;
    StageEstimate {
        kind: StageKind::Graph,
        label: label::GRAPH.into(),
        calls: chunks * passes,
        // A gleaning pass sends the conversation so far again, with its
        // own request.
        prompt_tokens: chunks
            * (passes * (chunk + template(crate::graph::extract::PROMPT))
                + (passes - 1) * (size / 3 + template(crate::graph::extract::GLEAN_PROMPT))),
        completion_tokens: chunks * passes * (size / 3),
        how: format!(
            "{} chunks × {passes} extraction pass{} (1 + gleaning); long descriptions add summaries",
            thousands(chunks),
            if passes == 1 { "" } else { "es" }
        ),
    }
}

/// Generating the questions `q` asks for over a corpus of `corpus`' size.
pub fn questions_estimate(
    q: &QuestionsRequest,
    label: String,
    corpus: &CorpusSize,
    chunk_tokens: usize,
) -> StageEstimate {
    let chunks = corpus.chunks;
    let chunk = corpus.mean_chunk(chunk_tokens as u64);
    let n = planned(q) as u64;
    let (calls, prompt, completion, how) = match q {
        QuestionsRequest::Graph(types::requests::GraphQuestionsRequest { node, edge, subgraph, .. }) => {
            // A node or edge question is given up to 3 of its chunks; a
            // subgraph's every chunk is summarised first (each chunk once:
            // later questions read the cache).
            let summaries = if *subgraph > 0 { chunks } else { 0 };
            let given = crate::questions::graph::CHUNKS_PER_ITEM as u64 * chunk;
            use crate::questions::graph::{EDGE_PROMPT, NODE_PROMPT, SUBGRAPH_PROMPT};
            let prompt = *node as u64 * (given + template(NODE_PROMPT))
                + *edge as u64 * (given + template(EDGE_PROMPT))
                + *subgraph as u64 * (2_000 + template(SUBGRAPH_PROMPT))
                + summaries * (chunk + template(crate::graph::summarise::PROMPT));
            let how = if summaries > 0 {
                format!(
                    "one call per question (its node, edge or subgraph with their text), + up to {} chunk summaries \
                     for the subgraphs (each chunk once)",
                    thousands(summaries)
                )
            } else {
                "one call per question (its node or edge with its text)".to_string()
            };
            (n + summaries, prompt, n * 60 + summaries * 150, how)
        }
        QuestionsRequest::Summary(types::requests::SummaryQuestionsRequest {
            users,
            tasks,
            per_task,
            head,
            tail,
            ..
        }) => (
            1,
            corpus.tokens.min(corpus.documents as u64 * (head + tail) as u64)
                + template(crate::questions::summary::PROMPT),
            (users * tasks * per_task) as u64 * 40,
            format!("1 call: the documents' heads and tails → {users} users × {tasks} tasks × {per_task} questions"),
        ),
        QuestionsRequest::Hierarchical(types::requests::HierarchicalQuestionsRequest { adherence_check, .. }) => {
            let prompt = n * (chunk + template(crate::questions::hierarchy::PROMPT));
            if *adherence_check {
                // Each question checked against its category by one more call.
                let check = n * (template(crate::questions::hierarchy::CHECK_PROMPT) + 200);
                (
                    2 * n,
                    prompt + check,
                    n * 80,
                    "one call per question over its chunk, + one adherence check each".into(),
                )
            } else {
                (n, prompt, n * 60, "one call per question, over its chunk".to_string())
            }
        }
    };
    StageEstimate {
        kind: StageKind::Questions,
        label,
        calls,
        prompt_tokens: prompt,
        completion_tokens: completion,
        how,
    }
}

/// Answering `n` questions with the method `m` over a corpus of `corpus`'
/// size (its parameters given or defaults).
pub fn answers_estimate(
    m: &AnswersRequest,
    n: u64,
    label: String,
    corpus: &CorpusSize,
    chunk_tokens: usize,
) -> StageEstimate {
    let chunk = corpus.mean_chunk(chunk_tokens as u64);
    let how = match m.method.as_str() {
        "lightrag" => format!("{} questions × 2 (keywords, answer)", thousands(n)),
        name if crate::rag::presets::is_remote(name) => "answered by your service: no LLM call from Assay".into(),
        "graphrag-local" | "graphrag-global" => {
            format!("{} questions × 1, + a report per graph community (known once the graph exists)", thousands(n))
        }
        _ => format!("{} questions × 1", thousands(n)),
    };
    // The answer's prompt, and LightRAG's keywords call first (the question
    // alone in its template).
    let answer_prompt = match m.method.as_str() {
        name if crate::rag::presets::is_remote(name) => 0,
        _ => n * (context_tokens(m, corpus.chunks, chunk) + template(crate::rag::answer::PROMPT)),
    };
    let keywords = if m.method == "lightrag" { n * (template(crate::rag::lightrag::PROMPT) + 30) } else { 0 };
    StageEstimate {
        kind: StageKind::Answers,
        label,
        calls: n * per_answer(m),
        prompt_tokens: answer_prompt + keywords,
        completion_tokens: if crate::rag::presets::is_remote(&m.method) {
            0
        } else {
            n * answer_tokens(m) + keywords / 4
        },
        how,
    }
}

/// The retrieved context a method puts in an answer's prompt: the chunks
/// it takes (BM25 and naive: `k`) or its token budgets (the graph methods),
/// at most the whole corpus.
fn context_tokens(m: &AnswersRequest, chunks: u64, chunk: u64) -> u64 {
    let p = m.params_json();
    let param = |name: &str, default: u64| p.get(name).and_then(serde_json::Value::as_u64).unwrap_or(default);
    let corpus = chunks * chunk;
    match m.method.as_str() {
        "bm25" => param("k", 10).min(chunks) * chunk,
        "naive" => param("k", 5).min(chunks) * chunk,
        // Entities' and relations' descriptions are the graph's text, not
        // the corpus': their budgets fill whatever the corpus' size.
        "lightrag" => {
            param("entity_tokens", 4_000) + param("relation_tokens", 4_000) + param("chunk_tokens", 4_000).min(corpus)
        }
        "graphrag-local" | "graphrag-global" | "fastgraphrag" => param("context_tokens", 8_000).min(corpus.max(1)),
        _ => CONTEXT_TOKENS.min(corpus.max(1)),
    }
}

/// A stage's expected LLM work before it runs, by formula from the
/// manifest and the corpus' size (`how` says which). Real counts differ:
/// length alignment's regenerations, graph descriptions long enough to be
/// summarised and community reports depend on what earlier stages make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageEstimate {
    pub kind: StageKind,
    pub label: String,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub how: String,
}

/// A prompt template's own tokens (its instructions and format), counted
/// as the gateway counts a prompt.
fn template(prompt: &str) -> u64 {
    crate::chunk::Bpe::count(crate::chunk::Tokenizer::Cl100kBase, prompt) as u64
}
/// An answer's tokens when a method gives no target length (~150 words).
const ANSWER_TOKENS: u64 = 200;
/// Retrieved context a method puts in its prompt.
const CONTEXT_TOKENS: u64 = 2_000;
/// A judge's reply: four scores per answer and a sentence of reasons.
const VERDICT_TOKENS: u64 = 120;

impl Manifest {
    /// Every stage in the order a run takes them, with its expected calls
    /// and tokens, for a corpus of `corpus`'s size.
    pub fn estimate(&self, corpus: &CorpusSize) -> Vec<StageEstimate> {
        let size = self.corpus.chunking.chunk_tokens as u64;
        let chunks = corpus.chunks;
        // A chunk's tokens as the chunker cut this corpus.
        let chunk = corpus.mean_chunk(size);
        let mut out = vec![StageEstimate {
            kind: StageKind::Corpus,
            label: label::CORPUS.into(),
            calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            how: format!(
                "{} documents, {} tokens: {} chunks (as the chunker cuts them)",
                thousands(corpus.documents as u64),
                thousands(corpus.tokens),
                thousands(chunks)
            ),
        }];
        // An imported index brings its graph: nothing to extract.
        if self.needs_graph() && self.corpus.index.is_none() {
            out.push(graph_estimate(corpus, self.corpus.chunking.chunk_tokens, self.graph.gleaning));
        }
        for (i, q) in self.questions.iter().enumerate() {
            out.push(questions_estimate(q, label::questions(i, q), corpus, self.corpus.chunking.chunk_tokens));
        }
        for (i, q) in self.questions.iter().enumerate() {
            for m in &self.methods {
                let label = label::answers(&m.method, i);
                out.push(answers_estimate(m, planned(q) as u64, label, corpus, self.corpus.chunking.chunk_tokens));
            }
        }
        // Totals: calls, and the prompts' and replies' tokens of them all.
        let mut push = |kind: StageKind, label: String, calls: u64, prompt: u64, completion: u64, how: String| {
            out.push(StageEstimate { kind, label, calls, prompt_tokens: prompt, completion_tokens: completion, how })
        };
        if let Some(section) = &self.evaluation {
            let e = &section.request;
            let orders = if e.exchange { 2 } else { 1 };
            let (unbiased, legacy) = (e.protocol.unbiased(), e.protocol.legacy());
            let per_question = if unbiased { (e.trials * e.repeats * orders) as u64 } else { 0 } + legacy as u64;
            // Both answers and the question in the judge's template: the
            // scoring rubric for the unbiased protocol, the legacy one's.
            let judge_template = if unbiased {
                template(crate::judge::scoring::PROMPT)
            } else {
                use crate::judge::legacy::Aspects;
                template(e.legacy_aspects.prompt())
            };
            let judge_prompt = |a: u64| 2 * a + judge_template + 40;
            let sets: Vec<usize> =
                if section.sets.is_empty() { (1..=self.questions.len()).collect() } else { section.sets.clone() };
            let avg_answer = if self.methods.is_empty() {
                ANSWER_TOKENS
            } else {
                self.methods.iter().map(answer_tokens).sum::<u64>() / self.methods.len() as u64
            };
            for (k, &position) in sets.iter().enumerate() {
                let Some(q) = self.questions.get(position - 1) else { continue };
                let n = planned(q) as u64;
                if section.sanity && k == 0 {
                    for m in &self.methods {
                        let calls = n * (per_answer(m) + per_question);
                        // Answered again (its context in each prompt), then judged.
                        let again = n
                            * per_answer(m).min(1)
                            * (context_tokens(m, chunks, chunk) + template(crate::rag::answer::PROMPT));
                        push(
                            StageKind::Sanity,
                            label::sanity(&m.method),
                            calls,
                            again + n * per_question * judge_prompt(answer_tokens(m)),
                            n * per_question * VERDICT_TOKENS + n * answer_tokens(m),
                            format!("{n} questions × ({} answer again + {per_question} verdicts)", per_answer(m)),
                        );
                    }
                }
                let methods = self.methods.len() as u64;
                let pairs = methods * methods.saturating_sub(1) / 2;
                let how = format!(
                    "{pairs} pairs × {n} questions × {per_question} verdicts ({}{}); length alignment adds regenerations",
                    if unbiased {
                        format!("{} trials × {} repeats × {orders} orders", e.trials, e.repeats)
                    } else {
                        String::new()
                    },
                    if legacy { " + 1 legacy" } else { "" }
                );
                let calls = pairs * n * per_question;
                push(
                    StageKind::Evaluation,
                    label::evaluation(position, self.methods.len()),
                    calls,
                    calls * judge_prompt(avg_answer),
                    calls * VERDICT_TOKENS,
                    how,
                );
            }
        }
        if self.metrics.is_some() {
            for (i, q) in self.questions.iter().enumerate() {
                if matches!(q, QuestionsRequest::Hierarchical(_)) {
                    push(
                        StageKind::Metrics,
                        label::metrics(i),
                        0,
                        0,
                        0,
                        "embeddings in process (MiniLM): no LLM call".into(),
                    );
                }
            }
        }
        out
    }
}

/// A manifest file's text could not be used: the message names the key.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestError(pub String);

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ManifestError {}

impl Manifest {
    /// Reads and checks a manifest; relative corpus paths are resolved
    /// against `base` (the manifest's folder) and must exist.
    pub fn parse(text: &str, base: &Path) -> Result<Manifest, ManifestError> {
        let raw: toml::Table = toml::from_str(text).map_err(|e| ManifestError(format!("invalid manifest: {e}")))?;
        // Every whole number in a manifest is a count, size or seed: a
        // negative one is named by its key before the typed reading (whose
        // message would name only the table it is in).
        let raw = toml::Value::Table(raw);
        if let Some((key, v)) = negative(&raw, "") {
            return Err(ManifestError(format!("{key}: {v} is negative; counts, sizes and seeds are 0 or more")));
        }
        let m: Manifest = toml::from_str(text).map_err(|e| ManifestError(format!("invalid manifest: {e}")))?;
        // A stage's table is its request (flattened beside a manifest's own
        // keys, which serde cannot deny unknown keys through; read from a
        // form too, which posts every request's fields): a key the request
        // did not read, a misspelling, is named.
        let given = |table: &str| raw.get(table);
        let list = |table: &str| raw.get(table).and_then(toml::Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let unknown = [
            ("corpus".to_string(), unread(given("corpus"), &m.corpus)),
            ("graph".to_string(), unread(given("graph"), &m.graph)),
            ("evaluation".to_string(), m.evaluation.as_ref().and_then(|e| unread(given("evaluation"), e))),
            ("metrics".to_string(), m.metrics.as_ref().and_then(|x| unread(given("metrics"), x))),
        ]
        .into_iter()
        .chain(
            list("questions")
                .iter()
                .zip(&m.questions)
                .enumerate()
                .map(|(i, (t, q))| (format!("questions[{i}]"), unread(Some(t), q))),
        )
        .chain(
            list("methods")
                .iter()
                .zip(&m.methods)
                .enumerate()
                .map(|(i, (t, a))| (format!("methods[{i}]"), unread(Some(t), a))),
        );
        for (table, key) in unknown {
            if let Some(key) = key {
                return Err(ManifestError(format!("{table}: unknown key \"{key}\"")));
            }
        }
        m.check(base).map_err(ManifestError)?;
        Ok(m)
    }

    /// Parses a manifest given in the browser: its corpus is the sample or
    /// a project's documents (a server's files are not the browser's to name).
    pub fn parse_uploaded(text: &str) -> Result<Manifest, ManifestError> {
        let files: Option<Vec<String>> = toml::from_str::<toml::Table>(text).ok().and_then(|t| {
            t.get("corpus")?
                .get("files")?
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        });
        if toml::from_str::<toml::Table>(text)
            .ok()
            .is_some_and(|t| t.get("corpus").and_then(|c| c.get("index")).is_some())
        {
            return Err(ManifestError(
                "corpus.index: an index folder is on the server's disk; import it on the Graph page, or run this manifest with `assay run`".into(),
            ));
        }
        if let Some((i, f)) = files.iter().flatten().enumerate().find(|(_, f)| *f != "sample") {
            return Err(ManifestError(format!(
                "corpus.files[{i}]: \"{f}\" — in the browser a corpus is \"sample\" or corpus.project (a project's uploaded documents); files on disk are for `assay run`"
            )));
        }
        Manifest::parse(text, Path::new("."))
    }

    /// Reads the file at `path` and parses it.
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ManifestError(format!("cannot read the manifest {}: {e}", path.display())))?;
        Manifest::parse(&text, path.parent().unwrap_or(Path::new(".")))
    }

    /// The manifest as TOML (what the wizard exports).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }

    /// The corpus files to read, resolved against `base`; `None` for the sample.
    pub fn corpus_paths(&self, base: &Path) -> Vec<Option<PathBuf>> {
        self.corpus
            .files
            .iter()
            .map(|f| (f != "sample").then(|| if Path::new(f).is_absolute() { PathBuf::from(f) } else { base.join(f) }))
            .collect()
    }

    /// `corpus.index` resolved against `base`, with its format.
    pub fn index_path(&self, base: &Path) -> Option<(PathBuf, crate::graph::foreign::Format)> {
        let index = self.corpus.index.as_ref()?;
        let format = crate::graph::foreign::Format::parse(self.corpus.index_format.as_deref()?)?;
        Some((if Path::new(index).is_absolute() { PathBuf::from(index) } else { base.join(index) }, format))
    }

    /// Whether any stage needs the knowledge graph.
    pub fn needs_graph(&self) -> bool {
        self.questions.iter().any(|q| matches!(q, QuestionsRequest::Graph(_)))
            || self.methods.iter().any(|m| crate::rag::method::needs_graph(&m.method))
    }

    fn check(&self, base: &Path) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("name: give the experiment a name".into());
        }
        self.graph.clone().checked().map_err(|e| format!("graph.{e}"))?;
        if self.llm.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err("llm.model: name the model, or leave the line out to take ASSAY_LLM_MODEL's".into());
        }
        if self.llm.concurrency == Some(0) {
            return Err("llm.concurrency: at least 1".into());
        }
        if let Some(index) = &self.corpus.index {
            if self.corpus.project.is_some() || !self.corpus.files.is_empty() {
                return Err(
                    "corpus.index: the index brings its own documents; name no files or project beside it".into()
                );
            }
            let format = self.corpus.index_format.as_deref().unwrap_or("");
            if crate::graph::foreign::Format::parse(format).is_none() {
                return Err(format!(
                    "corpus.index_format: lightrag, graphrag or nano-graphrag (the system that wrote {index}), not \"{format}\""
                ));
            }
            let (path, _) = self.index_path(base).expect("checked above");
            if !path.exists() {
                return Err(format!("corpus.index: no folder or zip {}", path.display()));
            }
        } else if self.corpus.index_format.is_some() || self.corpus.community_level.is_some() {
            return Err("corpus.index_format / community_level: they go with corpus.index (an index folder)".into());
        }
        match (&self.corpus.project, self.corpus.files.is_empty()) {
            _ if self.corpus.index.is_some() => {}
            (None, true) => {
                return Err(
                    "corpus.files: name at least one file, or \"sample\" (or corpus.project: a project's documents)"
                        .into(),
                )
            }
            (Some(_), false) => return Err("corpus.project: either files or a project's documents, not both".into()),
            (Some(p), true) if p.trim() == self.name.trim() => {
                return Err(
                    "corpus.project: the experiment's own project; name another project whose documents to use".into()
                )
            }
            _ => {}
        }
        for (i, path) in self.corpus_paths(base).iter().enumerate() {
            if let Some(p) = path {
                if !p.is_file() {
                    return Err(format!("corpus.files[{i}]: no file {}", p.display()));
                }
            }
        }
        self.corpus.chunking.validate().map_err(|e| format!("corpus.{e}"))?;
        for (i, q) in self.questions.iter().enumerate() {
            q.clone().checked().map_err(|e| format!("questions[{i}].{e}"))?;
            if planned(q) == 0 {
                return Err(format!("questions[{i}]: a {} set of 0 questions", q.kind()));
            }
        }
        for (i, m) in self.methods.iter().enumerate() {
            m.validate().map_err(|e| format!("methods[{i}].{e}"))?;
            crate::rag::method::resolve(&m.method, &m.params_json()).map_err(|e| format!("methods[{i}]: {e}"))?;
        }
        if let Some(e) = &self.evaluation {
            e.settings()?;
            if self.methods.len() < 2 {
                return Err("evaluation: compare at least two [[methods]]".into());
            }
            if self.questions.is_empty() {
                return Err("evaluation: there are no [[questions]] to evaluate on".into());
            }
            if let Some(s) = e.sets.iter().find(|s| **s == 0 || **s > self.questions.len()) {
                return Err(format!(
                    "evaluation.sets: {s} is not a position in [[questions]] (1 to {})",
                    self.questions.len()
                ));
            }
        }
        if let Some(m) = &self.metrics {
            m.validate().map_err(|e| format!("metrics.{e}"))?;
            if !self.questions.iter().any(|q| matches!(q, QuestionsRequest::Hierarchical(_))) {
                return Err("metrics: they need reference answers: add a hierarchical [[questions]] set".into());
            }
            if self.methods.is_empty() {
                return Err("metrics: there are no [[methods]] to score".into());
            }
        }
        Ok(())
    }
}

/// The methods as a manifest writes them: each request with its
/// parameters as a table (a request writes them as the text of a JSON
/// object, which a form carries unchanged), none when there are none.
fn methods_as_tables<S: serde::Serializer>(methods: &[AnswersRequest], s: S) -> Result<S::Ok, S::Error> {
    let tables = methods.iter().map(|m| {
        let mut table = serde_json::to_value(m).expect("a request is JSON");
        let object = table.as_object_mut().expect("a request is an object");
        match m.params_json() {
            serde_json::Value::Object(p) if p.is_empty() => object.remove("params"),
            p => object.insert("params".into(), p),
        };
        table
    });
    s.collect_seq(tables)
}

/// The first key of `given` (a stage's table) that `read` (what was read
/// from it) does not write back. An empty list or table sets nothing, and
/// a record may leave one out when it writes itself: not named.
fn unread(given: Option<&toml::Value>, read: &impl Serialize) -> Option<String> {
    let read = toml::Table::try_from(read).ok()?;
    let empty = |v: &toml::Value| v.as_array().is_some_and(Vec::is_empty) || v.as_table().is_some_and(|t| t.is_empty());
    given?.as_table()?.iter().find(|(k, v)| !read.contains_key(*k) && !empty(v)).map(|(k, _)| k.clone())
}

/// The first negative integer in `v` and its key path (`questions[0].node`).
fn negative(v: &toml::Value, path: &str) -> Option<(String, i64)> {
    match v {
        toml::Value::Integer(i) if *i < 0 => Some((path.to_string(), *i)),
        toml::Value::Table(t) => {
            t.iter().find_map(|(k, v)| negative(v, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") }))
        }
        toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| negative(v, &format!("{path}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::eval::Protocol;

    const EXAMPLE: &str = include_str!("../../examples/experiment.toml");

    fn here() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
    }

    #[test]
    fn the_example_parses_with_its_defaults() {
        let m = Manifest::parse(EXAMPLE, &here()).unwrap();
        assert_eq!(m.llm.provider, Some(types::ProviderKind::Offline));
        assert_eq!(m.corpus.files, ["sample"]);
        assert!(m.needs_graph());
        assert_eq!(m.methods.len(), 4);
        let e = m.evaluation.as_ref().unwrap().settings().unwrap();
        assert_eq!((e.repeats, e.protocol), (2, Protocol::Both));
        // The TOML it exports reads back the same.
        assert_eq!(Manifest::parse(&m.to_toml(), &here()).unwrap(), m);
    }

    /// Seed 004's configuration as a preset: 512-token chunks, BM25 top
    /// 10, 38 questions per category, relevance at the document unit.
    #[test]
    fn the_seed_004_preset_is_the_papers_configuration() {
        let m = Manifest::parse(include_str!("../../examples/hierarag-ultradomain.toml"), &here()).unwrap();
        assert_eq!((m.corpus.chunking.chunk_tokens, m.corpus.chunking.chunk_overlap), (512, 0));
        assert_eq!(m.methods.len(), 1);
        assert_eq!((m.methods[0].method.as_str(), m.methods[0].params_json()["k"].as_u64()), ("bm25", Some(10)));
        let metrics = m.metrics.as_ref().unwrap();
        assert_eq!((metrics.k, metrics.unit.as_str()), (10, "document"));
        let QuestionsRequest::Hierarchical(h) = &m.questions[0] else { panic!("{:?}", m.questions[0]) };
        assert_eq!(h.per_category, Some(38));
        // RQ1's four dimensions (Table 1): QC, AT, LV at 2, 4, 8 and QP's 4
        // coarse categories, 38 each, and the factorial's 4 cells of 250.
        assert_eq!(h.dimensions.len(), 4);
        assert_eq!(planned(&m.questions[0]), (3 * 14 + 4) * 38 + 4 * 250);
        // Unset, comparing levels takes the paper's scale; one level, a pilot's 10.
        let unset = |levels: Vec<usize>| {
            types::requests::HierarchicalQuestionsRequest { per_category: None, levels, ..h.clone() }
                .questions_per_category()
        };
        assert_eq!((unset(vec![2, 4, 8]), unset(vec![4])), (38, 10));
        assert_eq!(Manifest::parse(&m.to_toml(), &here()).unwrap(), m);
    }

    fn error(text: &str) -> String {
        Manifest::parse(text, &here()).unwrap_err().0
    }

    #[test]
    fn the_estimate_counts_seed_000s_calls_by_its_formula() {
        let m = Manifest::parse(
            "name = \"s\"\n[corpus]\nfiles = [\"sample\"]\n[graph]\ngleaning = 1\n\
             [[questions]]\nkind = \"graph\"\n[[questions]]\nkind = \"summary\"\n\
             [[methods]]\nname = \"bm25\"\n[[methods]]\nname = \"lightrag\"\n\
             [[methods]]\nname = \"fastgraphrag\"\n[[methods]]\nname = \"graphrag-local\"\n\
             [evaluation]\nprotocol = \"unbiased\"\ntrials = 25\nrepeats = 2\nsanity = false\n",
            &here(),
        )
        .unwrap();
        // Two documents of 3,000 tokens in all, cut into 4 chunks of 3,200
        // tokens between them (the overlaps).
        let e = m.estimate(&CorpusSize { documents: 2, tokens: 3000, chunks: 4, chunk_tokens: 3200 });
        let stage = |label: &str| e.iter().find(|s| s.label == label).unwrap();
        let calls = |label: &str| stage(label).calls;
        assert_eq!(calls("graph"), 4 * 2, "4 chunks × (1 + gleaning)");
        let (extract, glean) = (template(crate::graph::extract::PROMPT), template(crate::graph::extract::GLEAN_PROMPT));
        assert!(extract > 100 && glean > 20, "{extract} {glean}");
        assert_eq!(
            stage("graph").prompt_tokens,
            2 * (3200 + 4 * extract) + 4 * (1200 / 3 + glean),
            "each pass sends every chunk; the gleaning pass the first reply and its request too"
        );
        assert_eq!(calls("questions 1: graph"), 150 + 4, "150 questions + each chunk summarised once for subgraphs");
        assert_eq!(calls("questions 2: summary"), 1, "one call proposes every user, task and question");
        assert_eq!(
            stage("questions 2: summary").prompt_tokens,
            3000 + template(crate::questions::summary::PROMPT),
            "short documents: whole"
        );
        // BM25 takes its k = 10 chunks, of a 4-chunk corpus all 4 (800 tokens each).
        assert_eq!(
            stage("answers: bm25 on questions 1").prompt_tokens,
            150 * (4 * 800 + template(crate::rag::answer::PROMPT))
        );
        assert_eq!(calls("answers: lightrag on questions 2"), 125 * 2);
        // Seed 000 §VI: 6 pairs × 150 questions × 25 trials × 2 repeats × 2 orders.
        assert_eq!(calls("evaluation: questions 1, 4 methods"), 90_000);
        assert_eq!(calls("evaluation: questions 2, 4 methods"), 75_000);
        assert_eq!(e.len(), 1 + 1 + 2 + 8 + 2, "the stages in a run's order");
        assert_eq!(e[0].label, label::CORPUS);
    }

    #[test]
    fn bad_manifests_are_refused_naming_the_key() {
        let base = "name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n";
        let with = |extra: &str| format!("{base}{extra}");
        let e = error(&with("[[questions]]\nkind = \"graph\"\nnode = -5\n"));
        assert!(e.starts_with("questions[0].node: -5 is negative"), "{e}");
        let e = error(&with("[[methods]]\nname = \"bm26\"\n"));
        assert!(e.contains("methods[0]") && e.contains("unknown method \"bm26\""), "{e}");
        let e = error(&with("[[methods]]\nname = \"bm25\"\nparams = { kk = 3 }\n"));
        assert!(e.contains("methods[0]") && e.contains("kk"), "{e}");
        let e = error("name = \"x\"\n[corpus]\nfiles = [\"no-such-novel.txt\"]\n");
        assert!(e.contains("corpus.files[0]") && e.contains("no-such-novel.txt"), "{e}");
        let e = error(&with("[llm]\nprovider = \"anthropic\"\n"));
        assert!(e.contains("line 5") && e.contains("provider must be offline or openai, not \"anthropic\""), "{e}");
        let e = error(&with("[grpah]\ngleaning = 0\n"));
        assert!(e.contains("unknown field") && e.contains("grpah"), "{e}");
        let e = error(&with("[[questions]]\nkind = \"graph\"\nnodes = 3\n"));
        assert!(e.contains("nodes"), "{e}");
        let e = error(&with(
            "[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\n[evaluation]\njudge = \"gpt\"\n",
        ));
        // The table and the set's names (a flattened table's error has no key path).
        assert!(
            e.contains("[evaluation]") && e.contains("judge must be llm, offline or simulated, not \"gpt\""),
            "{e}"
        );
        let e = error(&with("[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\n[evaluation]\n"));
        assert!(e.contains("at least two [[methods]]"), "{e}");
        // A jury: each juror a spec; a bad one named, and only with the unbiased protocol.
        let section = |request| EvaluationSection { request, ..Default::default() };
        let jury = EvaluationRequest { jury: vec!["offline".into(), "simulated:noise=1".into()], ..Default::default() };
        let jury = section(jury);
        let s = jury.settings().unwrap();
        assert_eq!((s.judge_count(), s.jury[1].biases.noise, s.jury[1].biases.seed), (3, 1.0, 2));
        let e =
            section(EvaluationRequest { jury: vec!["oracle".into()], ..Default::default() }).settings().unwrap_err();
        assert!(e.0.starts_with("evaluation.jury: a juror is offline, llm[:MODEL] or simulated"), "{e}");
        let e = section(EvaluationRequest { protocol: Protocol::Legacy, ..jury.request }).settings().unwrap_err();
        assert_eq!(e.0, "evaluation.jury: judges the unbiased protocol's items: choose unbiased or both");
        // A key the table does not have is refused by name (serde's flatten cannot).
        let e = error(&with(
            "[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\n[[methods]]\nname = \"naive\"\n[evaluation]\ntrails = 3\n",
        ));
        assert_eq!(e, "evaluation: unknown key \"trails\"");
        let e = error(&with("[[questions]]\nkind = \"graph\"\nnode = 0\nedge = 0\nsubgraph = 0\n"));
        assert_eq!(e, "questions[0].node: ask for at least one node, edge or subgraph question");
        let e = error(&with("[[questions]]\nkind = \"hierarchical\"\nper_category = 0\n"));
        assert_eq!(e, "questions[0]: a hierarchical set of 0 questions");
        // The same for every stage's table.
        let e = error(&with("[[questions]]\nkind = \"summary\"\n[[questions]]\nkind = \"graph\"\nhops = 3\n"));
        assert_eq!(e, "questions[1]: unknown key \"hops\"");
        assert_eq!(error(&with("[graph]\nglean = 1\n")), "graph: unknown key \"glean\"");
        let corpus = |table: &str| error(&format!("name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n{table}"));
        assert_eq!(corpus("chunk_token = 512\n"), "corpus: unknown key \"chunk_token\"");
        assert_eq!(
            corpus("chunk_tokens = 512\nchunk_overlap = 300\n"),
            "corpus.chunk_overlap: must be smaller than half the chunk size (255 tokens at most), not 300"
        );
        let e = corpus("tokenizer = \"gpt2\"\n");
        assert!(e.contains("the tokenizer must be cl100k_base or o200k_base, not \"gpt2\""), "{e}");
        let e = error(&with("[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\ntarget_word = 80\n"));
        assert_eq!(e, "methods[0]: unknown key \"target_word\"");
        let e = error(&with("[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\ntarget_words = 0\n"));
        assert_eq!(e, "methods[0].target_words: must be from 1 to 10000 words, not 0");
        let e = error(&with("[[questions]]\nkind = \"graph\"\n[[methods]]\nname = \"bm25\"\n[metrics]\n"));
        assert!(e.contains("metrics") && e.contains("hierarchical"), "{e}");
        let e = error("[corpus]\nfiles = [\"sample\"]\n");
        assert!(e.contains("name"), "{e}");
        // Another system's index: with its format, alone, and only from disk.
        let e = error("name = \"x\"\n[corpus]\nindex = \"src\"\nindex_format = \"lightrag2\"\n");
        assert!(e.starts_with("corpus.index_format: lightrag, graphrag or nano-graphrag"), "{e}");
        let e = error("name = \"x\"\n[corpus]\nfiles = [\"sample\"]\nindex = \"src\"\nindex_format = \"lightrag\"\n");
        assert!(e.contains("name no files or project beside it"), "{e}");
        let e = error("name = \"x\"\n[corpus]\nfiles = [\"sample\"]\ncommunity_level = 1\n");
        assert!(e.contains("they go with corpus.index"), "{e}");
        let e = error("name = \"x\"\n[corpus]\nindex = \"no-such-index\"\nindex_format = \"graphrag\"\n");
        assert!(e.starts_with("corpus.index: no folder or zip") && e.contains("no-such-index"), "{e}");
        let m =
            Manifest::parse("name = \"x\"\n[corpus]\nindex = \".\"\nindex_format = \"graphrag\"\n", &here()).unwrap();
        assert_eq!(
            m.index_path(&here()).map(|(p, f)| (p.is_dir(), f)),
            Some((true, crate::graph::foreign::Format::GraphRag))
        );
        let e = Manifest::parse_uploaded("name = \"x\"\n[corpus]\nindex = \".\"\nindex_format = \"graphrag\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("import it on the Graph page"), "{e}");
    }
}

/// `n` with thousands separators ("198,259").
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

//! Running a job: many independent items (one chunk to summarise, one pair
//! of answers to judge, …), each of which makes LLM calls.
//!
//! - Each item's outcome is written as soon as it finishes, so a job killed
//!   at any point resumes with only the unfinished items; with the gateway's
//!   cache, repeated calls inside a half-finished item cost nothing either.
//!   One writer writes them: the outcomes that finished while it wrote the
//!   last batch go in the next, in one transaction ([`JobStore::record_all`]),
//!   so a job of 40,000 quick items does not pay 40,000 commits and the
//!   thread hand-offs of each. A process killed between an
//!   item's end and its batch's commit does that item again (its paid calls
//!   are in the cache already).
//! - A failed item is data ([`ItemOutcome::Failed`]), never a crash: the job
//!   goes on and the failure is listed, to be retried later.
//! - At most `concurrency` items run at once.
//! - Cancelling stops new items at once and abandons the ones in flight
//!   (their requests are dropped); what finished is kept.
//! - Progress (done, failed, tokens, cost) is reported after every batch written.
//! - Several processes may run one job (a team's database): the store then
//!   has a [`SharedQueue`], each phase's items are claimed from it, and an
//!   outcome is recorded only while its claim stands.
//!
//! Storage is the caller's: [`JobStore`] (SQLite in the web app).

use std::collections::HashSet;
use std::future::Future;

use futures_util::stream::StreamExt;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::llm::prompt::prompt_hash;
use crate::llm::{BoxFuture, CallContext, ChatRequest, Gateway};

/// What a job item is about, by stage: its key, stored and shown as text
/// (`chunk-12`, `a-345`, `ms-7-00003`). An evaluation's keys are its own
/// ([`crate::judge::eval::Key`]); [`ItemKey::parse`] reads every other.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKey {
    /// A chunk's extraction or one-sentence summary: `chunk-ID`.
    Chunk(i64),
    /// A merged entity's description summary: `node:KEY`.
    Node(String),
    /// A merged relation's description summary: `edge:SOURCE|TARGET`
    /// (node keys never hold `|`).
    Edge(String, String),
    /// A planned graph question, by its place in the plan: `q-NNNNN`.
    Question(usize),
    /// A planned hierarchical question: `h-NNNNN`.
    Hierarchical(usize),
    /// The summary-based set's one call: `summary`.
    Summary,
    /// The entities a question names: `m-QID`.
    Mentions(i64),
    /// The relevance of a question's retrieved context: `r-QID`.
    Relevance(i64),
    /// A question's answer: `a-QID`.
    Answer(i64),
    /// A sanity check's second answer to a question: `again-QID`.
    Again(i64),
    /// A community's report: `report-N`.
    Report(usize),
    /// A batch of chunks embedded, named by its first chunk: `embed-ID`.
    Embed(i64),
    /// A batch of one answer set's questions scored: `ms-SET-NNNNN`.
    Scores { answer_set: i64, batch: usize },
    /// A study item the LLM rates: `s-ITEM`.
    Rating(i64),
}

impl std::fmt::Display for ItemKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ItemKey::Chunk(id) => write!(f, "chunk-{id}"),
            ItemKey::Node(key) => write!(f, "node:{key}"),
            ItemKey::Edge(a, b) => write!(f, "edge:{a}|{b}"),
            ItemKey::Question(n) => write!(f, "q-{n:05}"),
            ItemKey::Hierarchical(n) => write!(f, "h-{n:05}"),
            ItemKey::Summary => f.write_str("summary"),
            ItemKey::Mentions(q) => write!(f, "m-{q}"),
            ItemKey::Relevance(q) => write!(f, "r-{q}"),
            ItemKey::Answer(q) => write!(f, "a-{q}"),
            ItemKey::Again(q) => write!(f, "again-{q}"),
            ItemKey::Report(c) => write!(f, "report-{c}"),
            ItemKey::Embed(id) => write!(f, "embed-{id}"),
            ItemKey::Scores { answer_set, batch } => write!(f, "ms-{answer_set}-{batch:05}"),
            ItemKey::Rating(item) => write!(f, "s-{item}"),
        }
    }
}

impl From<ItemKey> for String {
    fn from(key: ItemKey) -> String {
        key.to_string()
    }
}

impl ItemKey {
    /// The key a stored text names (`None` for an evaluation's or an unknown one).
    pub fn parse(key: &str) -> Option<ItemKey> {
        if key == "summary" {
            return Some(ItemKey::Summary);
        }
        if let Some(k) = key.strip_prefix("node:") {
            return Some(ItemKey::Node(k.to_string()));
        }
        if let Some((a, b)) = key.strip_prefix("edge:").and_then(|k| k.split_once('|')) {
            return Some(ItemKey::Edge(a.to_string(), b.to_string()));
        }
        let (kind, rest) = key.split_once('-')?;
        Some(match kind {
            "chunk" => ItemKey::Chunk(rest.parse().ok()?),
            "q" => ItemKey::Question(rest.parse().ok()?),
            "h" => ItemKey::Hierarchical(rest.parse().ok()?),
            "m" => ItemKey::Mentions(rest.parse().ok()?),
            "r" => ItemKey::Relevance(rest.parse().ok()?),
            "a" => ItemKey::Answer(rest.parse().ok()?),
            "again" => ItemKey::Again(rest.parse().ok()?),
            "report" => ItemKey::Report(rest.parse().ok()?),
            "embed" => ItemKey::Embed(rest.parse().ok()?),
            "ms" => {
                let (set, batch) = rest.split_once('-')?;
                ItemKey::Scores { answer_set: set.parse().ok()?, batch: batch.parse().ok()? }
            }
            "s" => ItemKey::Rating(rest.parse().ok()?),
            _ => return None,
        })
    }
}

/// A stage's item record and the record its work ends with, paired for
/// the compiler: an item is made ([`WorkItem::new`]), read
/// ([`WorkItem::read`]), ended ([`ItemOutcome::done`], [`one_call`]) and
/// its stored result read back ([`ItemOutcome::read`]) only through its
/// `JobItem`, so a stage cannot write one record and read another.
pub trait JobItem: Serialize + DeserializeOwned {
    /// What one item's work ends with.
    type Outcome;

    /// The outcome as stored: its JSON (a stage whose result is prose
    /// stores the prose).
    fn store(outcome: &Self::Outcome) -> String;

    /// A stored outcome read back.
    fn load(stored: &str) -> Result<Self::Outcome, String>;
}

/// Implements [`JobItem`] for item records whose outcome is stored as its JSON.
#[macro_export]
macro_rules! job_items {
    ($($item:ty => $outcome:ty),+ $(,)?) => {$(
        impl $crate::jobs::JobItem for $item {
            type Outcome = $outcome;
            fn store(outcome: &$outcome) -> String {
                ::serde_json::to_string(outcome).expect("a result record is JSON")
            }
            fn load(stored: &str) -> Result<$outcome, String> {
                ::serde_json::from_str(stored).map_err(|e| format!("a stored result cannot be read: {e}"))
            }
        }
    )+};
}

/// Implements [`JobItem`] for item records whose outcome is prose, stored
/// as it is (a description's or a chunk's summary).
#[macro_export]
macro_rules! text_job_items {
    ($($item:ty),+ $(,)?) => {$(
        impl $crate::jobs::JobItem for $item {
            type Outcome = String;
            fn store(outcome: &String) -> String {
                outcome.clone()
            }
            fn load(stored: &str) -> Result<String, String> {
                Ok(stored.to_string())
            }
        }
    )+};
}

/// One unit of work: a stable key (unique in its job) and what the work needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkItem {
    pub key: String,
    pub payload: serde_json::Value,
}

impl WorkItem {
    /// An item whose payload is `payload`, a stage's item record.
    pub fn new<I: JobItem>(key: impl Into<String>, payload: &I) -> WorkItem {
        WorkItem { key: key.into(), payload: serde_json::to_value(payload).expect("an item record is JSON") }
    }

    /// The key as what it names (`None` for an evaluation's key).
    pub fn item_key(&self) -> Option<ItemKey> {
        ItemKey::parse(&self.key)
    }

    /// The payload as its stage's item record: the one way item code reads
    /// it. A payload that is not one (a hand-edited or damaged row) is the
    /// item's failure, named, rather than a default read in silence.
    pub fn read<I: JobItem>(&self) -> Result<I, String> {
        I::deserialize(&self.payload).map_err(|e| format!("item {}: its payload cannot be read: {e}", self.key))
    }
}

/// How an item ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ItemOutcome {
    Done { result: String, tokens: u64, cost_usd: f64 },
    Failed { error: String, tokens: u64, cost_usd: f64 },
}

impl ItemOutcome {
    /// Done with `result`, item `I`'s outcome (stored as `I` stores it).
    pub fn done<I: JobItem>(result: &I::Outcome, tokens: u64, cost_usd: f64) -> ItemOutcome {
        ItemOutcome::Done { result: I::store(result), tokens, cost_usd }
    }

    /// Failed before anything was spent: a payload that cannot be read, a
    /// call refused before it went out.
    pub fn failed(error: impl Into<String>) -> ItemOutcome {
        ItemOutcome::Failed { error: error.into(), tokens: 0, cost_usd: 0.0 }
    }

    /// A stored result as item `I`'s outcome.
    pub fn read<I: JobItem>(result: &str) -> Result<I::Outcome, String> {
        I::load(result)
    }

    pub fn tokens(&self) -> u64 {
        match self {
            ItemOutcome::Done { tokens, .. } | ItemOutcome::Failed { tokens, .. } => *tokens,
        }
    }
    pub fn cost_usd(&self) -> f64 {
        match self {
            ItemOutcome::Done { cost_usd, .. } | ItemOutcome::Failed { cost_usd, .. } => *cost_usd,
        }
    }
}

/// Counters of a job, after each item.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub total: u64,
    pub done: u64,
    pub failed: u64,
    pub tokens: u64,
    pub cost_usd: f64,
}

/// Where a job's items are recorded.
pub trait JobStore: Send + Sync {
    /// Keys of items already finished (done, or failed when `include_failed`).
    fn finished<'a>(&'a self, job_id: i64, include_failed: bool) -> BoxFuture<'a, Result<HashSet<String>, String>>;
    /// Records items' outcomes (an item recorded before is replaced) and
    /// updates the job's counters, atomically: all of them or none.
    fn record_all<'a>(
        &'a self,
        job_id: i64,
        outcomes: &'a [(String, ItemOutcome)],
    ) -> BoxFuture<'a, Result<Progress, String>>;

    /// Records one item's outcome ([`record_all`](Self::record_all) of one).
    fn record<'a>(
        &'a self,
        job_id: i64,
        key: &'a str,
        outcome: &'a ItemOutcome,
    ) -> BoxFuture<'a, Result<Progress, String>> {
        Box::pin(async move { self.record_all(job_id, &[(key.to_string(), outcome.clone())]).await })
    }

    /// The queue this store's processes share, if it has one (else the
    /// items are this process's alone).
    fn shared(&self) -> Option<&dyn SharedQueue> {
        None
    }
}

/// A queue of a job's items that several processes share (a team
/// deployment's database): a process runs the items it claims
/// from it, not those of a list of its own. Every process that joins a job
/// computes the same items for each phase (they are made from what the
/// database holds); the first to get to a phase queues its unfinished
/// items, and a claim stands while its process lives. The store's
/// [`JobStore::record_all`] then records only the items this process
/// still holds the claim of, removing them from the queue in the same
/// transaction.
pub trait SharedQueue: Send + Sync {
    /// Queues `keys` as `phase` of the job, unless the phase was queued
    /// before (by any process).
    fn enqueue<'a>(&'a self, job_id: i64, phase: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), String>>;
    /// Claims up to `n` free items of the phase; their keys, in order.
    fn claim<'a>(&'a self, job_id: i64, phase: &'a str, n: usize) -> BoxFuture<'a, Result<Vec<String>, String>>;
    /// Items of the phase not yet recorded (claimed or free).
    fn remaining<'a>(&'a self, job_id: i64, phase: &'a str) -> BoxFuture<'a, Result<u64, String>>;
}

/// A phase's name in a [`SharedQueue`]: a digest of every key of its items
/// (finished or not), so every process that computes the same phase names
/// it alike, and phases of one job never share a name.
pub fn phase_name(items: &[WorkItem]) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for item in items {
        hash.update(item.key.as_bytes());
        hash.update([0u8]);
    }
    hash.finalize().iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// How often a process with nothing to claim asks again whether its phase
/// is over (its last items run elsewhere, or wait for a dead claim to lapse).
const IDLE_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Outcomes written in one transaction, at most.
pub const MAX_BATCH: usize = 256;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunEnd {
    /// Every item finished (some may have failed).
    Finished,
    Cancelled,
}

/// Runs the unfinished items of a job. `items` is the job's whole item list;
/// those already recorded as done (and, unless `retry_failed`, as failed)
/// are skipped. `work` does one item; `on_progress` hears every change.
///
/// On a multi-threaded runtime the items are driven from one thread per
/// core ([`shards`]), each with its share of `concurrency`, taking the next
/// item from one queue: an item's own work (an offline stand-in's text
/// processing, hashing and copying prompts, parsing replies) is CPU work,
/// and a single task would keep it on one core however many there are
///. Items waiting on an endpoint cost those threads nothing.
pub async fn run<W, Fut>(
    job_id: i64,
    items: Vec<WorkItem>,
    store: &dyn JobStore,
    concurrency: usize,
    retry_failed: bool,
    cancel: &CancellationToken,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
    work: W,
) -> Result<RunEnd, String>
where
    W: Fn(WorkItem) -> Fut + Sync,
    Fut: Future<Output = ItemOutcome>,
{
    let finished = store.finished(job_id, !retry_failed).await?;
    let source = match store.shared() {
        None => Source::Local(Queue::new(items.into_iter().filter(|i| !finished.contains(&i.key)).collect())),
        Some(queue) => {
            let phase = phase_name(&items);
            let keys: Vec<String> =
                items.iter().filter(|i| !finished.contains(&i.key)).map(|i| i.key.clone()).collect();
            queue.enqueue(job_id, &phase, &keys).await?;
            Source::Shared(Claims {
                queue,
                job_id,
                phase,
                items: items.into_iter().map(|i| (i.key.clone(), i)).collect(),
                claimed: Default::default(),
                error: Default::default(),
            })
        }
    };
    let pending = source.len_hint();
    // The writer failing stops the items.
    let stop = cancel.child_token();
    let (sender, outcomes) = tokio::sync::mpsc::unbounded_channel::<(String, ItemOutcome)>();
    let writer = write_outcomes(job_id, store, outcomes, &stop, on_progress);
    let concurrency = concurrency.max(1);
    let shards = shards(concurrency, pending);
    let queue = source;
    let written = if shards <= 1 {
        // One task: the items and the writer polled together, so the items
        // go on while a batch is written (an item may itself hold the
        // database's write lock for a moment, writing a paid reply, and
        // must be polled to let it go).
        let items = drive(&queue, concurrency, &work, &stop, sender);
        let ((), written) = futures_util::join!(items, writer);
        written
    } else {
        let runtime = tokio::runtime::Handle::current();
        // This thread waits for the others: it hands its runtime duties to
        // another first (and writes the outcomes meanwhile).
        tokio::task::block_in_place(|| {
            std::thread::scope(|scope| {
                let threads: Vec<_> = (0..shards)
                    .map(|shard| {
                        // Concurrency shared out: 64 over 2 cores is 32 and 32.
                        let limit = concurrency / shards + usize::from(shard < concurrency % shards);
                        let (queue, work, stop, sender, runtime) = (&queue, &work, &stop, sender.clone(), &runtime);
                        std::thread::Builder::new()
                            .name(format!("assay-job-{job_id}-{shard}"))
                            .spawn_scoped(scope, move || runtime.block_on(drive(queue, limit, work, stop, sender)))
                            .expect("a thread for a job's items")
                    })
                    .collect();
                drop(sender);
                let written = runtime.block_on(writer);
                // An item's panic (a bug) goes on with its own message,
                // not the scope's "a scoped thread panicked".
                for thread in threads {
                    if let Err(panic) = thread.join() {
                        std::panic::resume_unwind(panic);
                    }
                }
                written
            })
        })
    };
    written?;
    if let Source::Shared(claims) = &queue {
        if let Some(e) = claims.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(e);
        }
    }
    Ok(if cancel.is_cancelled() { RunEnd::Cancelled } else { RunEnd::Finished })
}

/// Threads to drive `pending` items over: one per core on a multi-threaded
/// runtime, fewer when there are fewer items in flight than cores; 1 (the
/// calling task) on a single-threaded runtime, which no thread may block.
fn shards(concurrency: usize, pending: usize) -> usize {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi = Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if !multi || pending < 2 {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(concurrency).min(pending)
}

/// The items still to start, shared by the threads that run them.
struct Queue {
    items: std::sync::Mutex<std::vec::IntoIter<WorkItem>>,
}

impl Queue {
    fn new(items: Vec<WorkItem>) -> Queue {
        Queue { items: std::sync::Mutex::new(items.into_iter()) }
    }

    fn next(&self) -> Option<WorkItem> {
        self.items.lock().unwrap_or_else(|e| e.into_inner()).next()
    }
}

/// Where a run's items come from: this process's list, or a shared queue.
enum Source<'a> {
    Local(Queue),
    Shared(Claims<'a>),
}

/// A phase's items as claimed from a [`SharedQueue`].
struct Claims<'a> {
    queue: &'a dyn SharedQueue,
    job_id: i64,
    phase: String,
    /// Every item of the phase, by key (a claimed key may be one this
    /// process counted as finished: a failed item another retries).
    items: std::collections::HashMap<String, WorkItem>,
    /// Claimed, not yet started.
    claimed: std::sync::Mutex<std::collections::VecDeque<String>>,
    /// Why claiming stopped, when the queue failed.
    error: std::sync::Mutex<Option<String>>,
}

impl Source<'_> {
    /// Items there may be to run here (to size the threads).
    fn len_hint(&self) -> usize {
        match self {
            Source::Local(q) => q.items.lock().unwrap_or_else(|e| e.into_inner()).len(),
            Source::Shared(c) => c.items.len(),
        }
    }

    /// The next item to run; `None` when there are no more (or at `stop`).
    /// From a shared queue: claims `batch` at a time; with none free but
    /// some not yet recorded (running elsewhere, or held by a claim that
    /// will lapse), waits and asks again.
    fn next<'s>(&'s self, batch: usize, stop: &'s CancellationToken) -> BoxFuture<'s, Option<WorkItem>> {
        let claims = match self {
            Source::Local(q) => {
                let next = if stop.is_cancelled() { None } else { q.next() };
                return Box::pin(std::future::ready(next));
            }
            Source::Shared(c) => c,
        };
        Box::pin(claims.next(batch, stop))
    }
}

impl Claims<'_> {
    async fn next(&self, batch: usize, stop: &CancellationToken) -> Option<WorkItem> {
        let claims = self;
        let fail = |e: String| {
            *claims.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
            stop.cancel();
            None
        };
        loop {
            if stop.is_cancelled() {
                return None;
            }
            let next = claims.claimed.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
            if let Some(key) = next {
                match claims.items.get(&key) {
                    Some(item) => return Some(item.clone()),
                    None => {
                        return fail(format!("the shared queue gave item \"{key}\", which this phase does not have"))
                    }
                }
            }
            match claims.queue.claim(claims.job_id, &claims.phase, batch).await {
                Ok(keys) if !keys.is_empty() => {
                    claims.claimed.lock().unwrap_or_else(|e| e.into_inner()).extend(keys);
                    continue;
                }
                Ok(_) => {}
                Err(e) => return fail(e),
            }
            match claims.queue.remaining(claims.job_id, &claims.phase).await {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return fail(e),
            }
            tokio::select! {
                _ = stop.cancelled() => return None,
                _ = tokio::time::sleep(IDLE_POLL) => {}
            }
        }
    }
}

/// The items of a [`Source`] as a stream, one [`Source::next`] at a time.
/// (A struct, not `stream::unfold` over a closure: the compiler cannot
/// prove that closure's futures `Send` for every lifetime, as a job's
/// boxed future must be.)
struct ItemStream<'a> {
    source: &'a Source<'a>,
    batch: usize,
    stop: &'a CancellationToken,
    next: Option<BoxFuture<'a, Option<WorkItem>>>,
}

impl futures_util::Stream for ItemStream<'_> {
    type Item = WorkItem;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<WorkItem>> {
        let this = &mut *self;
        let (source, batch, stop) = (this.source, this.batch, this.stop);
        let next = this.next.get_or_insert_with(|| source.next(batch, stop));
        let polled = next.as_mut().poll(cx);
        if polled.is_ready() {
            this.next = None;
        }
        polled
    }
}

/// Runs items from `queue`, `limit` at a time, and sends each outcome to the
/// writer; stops taking items at `stop` and abandons those in flight.
async fn drive<W, Fut>(
    queue: &Source<'_>,
    limit: usize,
    work: &W,
    stop: &CancellationToken,
    sender: tokio::sync::mpsc::UnboundedSender<(String, ItemOutcome)>,
) where
    W: Fn(WorkItem) -> Fut,
    Fut: Future<Output = ItemOutcome>,
{
    // Claims from a shared queue come a quarter of the limit at a time: a
    // round trip per few items, and few held here while waiting for room.
    let batch = (limit / 4).clamp(1, 64);
    let finished = ItemStream { source: queue, batch, stop, next: None }
        .map(|item| {
            let key = item.key.clone();
            let fut = work(item);
            async move {
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => None,
                    outcome = fut => Some((key, outcome)),
                }
            }
        })
        .buffer_unordered(limit.max(1));
    let mut finished = std::pin::pin!(finished);
    while let Some(Some(done)) = finished.next().await {
        if sender.send(done).is_err() || stop.is_cancelled() {
            break;
        }
    }
}

/// The one writer: records the outcomes that finished while it wrote the
/// last batch, up to [`MAX_BATCH`] at once, until every sender is gone.
async fn write_outcomes(
    job_id: i64,
    store: &dyn JobStore,
    mut outcomes: tokio::sync::mpsc::UnboundedReceiver<(String, ItemOutcome)>,
    stop: &CancellationToken,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
) -> Result<(), String> {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while outcomes.recv_many(&mut batch, MAX_BATCH).await > 0 {
        match store.record_all(job_id, &batch).await {
            Ok(progress) => on_progress(progress),
            Err(e) => {
                stop.cancel();
                return Err(e);
            }
        }
        batch.clear();
    }
    Ok(())
}

/// An in-memory [`JobStore`], for tests and one-off runs.
#[derive(Default)]
pub struct MemoryJobStore {
    items: std::sync::Mutex<std::collections::HashMap<(i64, String), ItemOutcome>>,
    total: std::sync::Mutex<std::collections::HashMap<i64, u64>>,
}

impl MemoryJobStore {
    pub fn set_total(&self, job_id: i64, total: u64) {
        self.total.lock().unwrap().insert(job_id, total);
    }

    pub fn outcome(&self, job_id: i64, key: &str) -> Option<ItemOutcome> {
        self.items.lock().unwrap().get(&(job_id, key.to_string())).cloned()
    }
}

impl JobStore for MemoryJobStore {
    fn finished<'a>(&'a self, job_id: i64, include_failed: bool) -> BoxFuture<'a, Result<HashSet<String>, String>> {
        Box::pin(async move {
            Ok(self
                .items
                .lock()
                .unwrap()
                .iter()
                .filter(|((j, _), o)| *j == job_id && (include_failed || matches!(o, ItemOutcome::Done { .. })))
                .map(|((_, k), _)| k.clone())
                .collect())
        })
    }

    fn record_all<'a>(
        &'a self,
        job_id: i64,
        outcomes: &'a [(String, ItemOutcome)],
    ) -> BoxFuture<'a, Result<Progress, String>> {
        Box::pin(async move {
            let mut items = self.items.lock().unwrap();
            for (key, outcome) in outcomes {
                items.insert((job_id, key.clone()), outcome.clone());
            }
            let mut p =
                Progress { total: self.total.lock().unwrap().get(&job_id).copied().unwrap_or(0), ..Default::default() };
            for ((j, _), o) in items.iter() {
                if *j != job_id {
                    continue;
                }
                match o {
                    ItemOutcome::Done { .. } => p.done += 1,
                    ItemOutcome::Failed { .. } => p.failed += 1,
                }
                p.tokens += o.tokens();
                p.cost_usd += o.cost_usd();
            }
            Ok(p)
        })
    }
}

/// A job item that is one call: sends `req` (made from the prompt file
/// `template`, whose hash is logged) and turns the reply into the item's
/// outcome of item `I` with `parse`, whose error fails the item; tokens
/// and cost are kept either way.
pub async fn one_call<I: JobItem>(
    gateway: &Gateway,
    job_id: i64,
    item: &WorkItem,
    template: &str,
    req: &ChatRequest,
    parse: impl Fn(&str) -> Result<I::Outcome, String>,
) -> ItemOutcome {
    let ctx =
        CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: Some(prompt_hash(template)) };
    match gateway.chat_parsed(req, &ctx, |reply| parse(reply).map(|o| I::store(&o))).await {
        Ok(parsed) => {
            let tokens = parsed.replies.iter().map(|r| r.prompt_tokens + r.completion_tokens).sum();
            let cost_usd = parsed.replies.iter().map(|r| r.cost_usd).sum();
            match parsed.value {
                Ok(result) => ItemOutcome::Done { result, tokens, cost_usd },
                Err(error) => ItemOutcome::Failed { error, tokens, cost_usd },
            }
        }
        Err((e, _)) => ItemOutcome::failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_is_stored_and_read_back_as_its_item_says() {
        // Prose (a description's summary) is stored as it is, as stored
        // rows of earlier jobs have it; a record is stored as its JSON.
        type Described = crate::graph::describe::Item;
        let prose = ItemOutcome::done::<Described>(&"Alice is curious.".to_string(), 3, 0.0);
        assert!(matches!(&prose, ItemOutcome::Done { result, tokens: 3, .. } if result == "Alice is curious."));
        assert_eq!(ItemOutcome::read::<Described>("Alice is curious.").unwrap(), "Alice is curious.");
        type Rating = crate::study::rate::Item;
        let rated = crate::study::rate::Rated { item_id: 4, scores: vec![3, 1], reason: "clear".into() };
        let ItemOutcome::Done { result, .. } = ItemOutcome::done::<Rating>(&rated, 1, 0.0) else { unreachable!() };
        assert_eq!(serde_json::from_str::<serde_json::Value>(&result).unwrap()["scores"], serde_json::json!([3, 1]));
        assert_eq!(ItemOutcome::read::<Rating>(&result).unwrap(), rated);
        let err = ItemOutcome::read::<Rating>("{\"item_id\": \"four\"}").unwrap_err();
        assert!(err.starts_with("a stored result cannot be read"), "{err}");
    }

    #[test]
    fn every_item_key_reads_back_from_its_text() {
        let keys = [
            ItemKey::Chunk(12),
            ItemKey::Node("mock turtle".into()),
            ItemKey::Edge("alice".into(), "the queen".into()),
            ItemKey::Question(7),
            ItemKey::Hierarchical(8),
            ItemKey::Summary,
            ItemKey::Mentions(3),
            ItemKey::Relevance(4),
            ItemKey::Answer(5),
            ItemKey::Again(5),
            ItemKey::Report(0),
            ItemKey::Embed(33),
            ItemKey::Scores { answer_set: 2, batch: 3 },
            ItemKey::Rating(9),
        ];
        let texts: Vec<String> = keys.iter().map(ItemKey::to_string).collect();
        let want = [
            "chunk-12",
            "node:mock turtle",
            "edge:alice|the queen",
            "q-00007",
            "h-00008",
            "summary",
            "m-3",
            "r-4",
            "a-5",
            "again-5",
            "report-0",
            "embed-33",
            "ms-2-00003",
            "s-9",
        ];
        assert_eq!(texts, want, "the stored texts of earlier jobs");
        for (key, text) in keys.iter().zip(&texts) {
            assert_eq!(ItemKey::parse(text).as_ref(), Some(key), "{text}");
        }
        for other in ["u-1-2-3-000", "al-1-2-3", "chunk-x", "a-", "ms-2", "item-1", ""] {
            assert_eq!(ItemKey::parse(other), None, "{other}");
        }
    }
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    fn items(n: usize) -> Vec<WorkItem> {
        (0..n).map(|i| WorkItem { key: format!("item-{i}"), payload: serde_json::json!(i) }).collect()
    }

    /// Fails items whose number is divisible by 7.
    async fn work(item: WorkItem, calls: &AtomicUsize) -> ItemOutcome {
        calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(2)).await;
        let n = item.payload.as_u64().unwrap();
        if n % 7 == 0 {
            ItemOutcome::Failed { error: format!("item {n} is unlucky"), tokens: 1, cost_usd: 0.0 }
        } else {
            ItemOutcome::Done { result: format!("result {n}"), tokens: 10, cost_usd: 0.001 }
        }
    }

    #[tokio::test]
    async fn failures_are_recorded_and_the_job_goes_on() {
        let store = MemoryJobStore::default();
        store.set_total(1, 50);
        let calls = AtomicUsize::new(0);
        let last = Mutex::new(Progress::default());
        let end = run(1, items(50), &store, 8, false, &CancellationToken::new(), &|p| *last.lock().unwrap() = p, |i| {
            work(i, &calls)
        })
        .await
        .unwrap();
        assert_eq!(end, RunEnd::Finished);
        let p = *last.lock().unwrap();
        assert_eq!((p.total, p.done, p.failed), (50, 42, 8));
        assert_eq!(p.tokens, 42 * 10 + 8);
        assert_eq!(
            store.outcome(1, "item-14"),
            Some(ItemOutcome::Failed { error: "item 14 is unlucky".into(), tokens: 1, cost_usd: 0.0 })
        );
    }

    #[tokio::test]
    async fn resuming_skips_finished_items_and_retrying_redoes_only_failures() {
        let store = MemoryJobStore::default();
        let calls = AtomicUsize::new(0);
        let cancel = CancellationToken::new();
        // Cancel once 20 items are written.
        let end = run(
            2,
            items(60),
            &store,
            4,
            false,
            &cancel,
            &|p| {
                if p.done + p.failed >= 20 {
                    cancel.cancel();
                }
            },
            |i| work(i, &calls),
        )
        .await
        .unwrap();
        assert_eq!(end, RunEnd::Cancelled);
        let finished_first = store.finished(2, true).await.unwrap().len();
        // The batch that crossed 20 is kept whole; the items in flight at
        // the cancel (at most 4) are abandoned, none starts after it.
        assert!((20..20 + 2 * 4).contains(&finished_first), "{finished_first} kept");
        assert!(calls.load(Ordering::SeqCst) <= finished_first + 4, "no item started after the cancel");

        let resumed_calls = AtomicUsize::new(0);
        run(2, items(60), &store, 4, false, &CancellationToken::new(), &|_| {}, |i| work(i, &resumed_calls))
            .await
            .unwrap();
        assert_eq!(resumed_calls.load(Ordering::SeqCst), 60 - finished_first, "finished items are not redone");
        assert_eq!(store.finished(2, true).await.unwrap().len(), 60);

        let retried = AtomicUsize::new(0);
        run(2, items(60), &store, 4, true, &CancellationToken::new(), &|_| {}, |i| work(i, &retried)).await.unwrap();
        assert_eq!(retried.load(Ordering::SeqCst), 9, "only the 9 failed items (0, 7, …, 56) are retried");
    }

    /// On a multi-threaded runtime the items are spread over the cores, the
    /// concurrency limit holding across them, each item run and written once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn items_run_on_every_core_under_one_limit() {
        let store = MemoryJobStore::default();
        store.set_total(4, 300);
        let (in_flight, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let threads = Mutex::new(std::collections::HashSet::new());
        let runs = Mutex::new(std::collections::HashMap::<String, usize>::new());
        let last = Mutex::new(Progress::default());
        let end =
            run(4, items(300), &store, 6, false, &CancellationToken::new(), &|p| *last.lock().unwrap() = p, |item| {
                let (in_flight, most, threads, runs) = (&in_flight, &most, &threads, &runs);
                async move {
                    most.fetch_max(in_flight.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                    *runs.lock().unwrap().entry(item.key.clone()).or_default() += 1;
                    // Work for the CPU, then a wait (an endpoint's latency).
                    let spin = std::time::Instant::now();
                    while spin.elapsed() < Duration::from_micros(200) {
                        std::hint::spin_loop();
                    }
                    threads.lock().unwrap().insert(std::thread::current().id());
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    ItemOutcome::Done { result: item.key, tokens: 1, cost_usd: 0.0 }
                }
            })
            .await
            .unwrap();
        assert_eq!(end, RunEnd::Finished);
        let p = *last.lock().unwrap();
        assert_eq!((p.total, p.done, p.failed, p.tokens), (300, 300, 0, 300));
        assert!(runs.lock().unwrap().values().all(|&n| n == 1) && runs.lock().unwrap().len() == 300);
        assert!(most.load(Ordering::SeqCst) <= 6, "{} in flight", most.load(Ordering::SeqCst));
        assert_eq!(
            store.outcome(4, "item-299").unwrap(),
            ItemOutcome::Done { result: "item-299".into(), tokens: 1, cost_usd: 0.0 }
        );
        if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
            assert!(threads.lock().unwrap().len() >= 2, "items ran on one thread only");
        }
    }

    /// A job of 10 long items, 4 at a time, cancelled after 100 ms: it ends
    /// at once, cancelled, no item started after the cancel, none recorded.
    async fn cancelled_after_100_ms_ends_at_once(job_id: i64) {
        let store = MemoryJobStore::default();
        let cancel = CancellationToken::new();
        let started = Arc::new(AtomicUsize::new(0));
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c2.cancel();
        });
        let t0 = std::time::Instant::now();
        let end = run(job_id, items(10), &store, 4, false, &cancel, &|_| {}, |_| {
            let started = started.clone();
            async move {
                started.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(30)).await;
                ItemOutcome::Done { result: String::new(), tokens: 0, cost_usd: 0.0 }
            }
        })
        .await
        .unwrap();
        assert_eq!(end, RunEnd::Cancelled);
        assert!(t0.elapsed() < Duration::from_secs(1), "cancel took {:?}", t0.elapsed());
        assert_eq!(started.load(Ordering::SeqCst), 4, "the limit of 4 filled, no new item started after the cancel");
        assert!(store.finished(job_id, true).await.unwrap().is_empty());
    }

    /// The same on the threads of a multi-threaded runtime: each thread's
    /// items are abandoned, and the threads end, at the cancel.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancelling_stops_every_thread_at_once() {
        cancelled_after_100_ms_ends_at_once(5).await;
    }

    #[tokio::test]
    async fn cancelling_abandons_items_in_flight_at_once() {
        cancelled_after_100_ms_ends_at_once(3).await;
    }

    /// A job's queue shared by several runners, in memory: phases queued
    /// once, claims by runner, outcomes kept only while claimed.
    #[derive(Default)]
    struct Shared {
        jobs: MemoryJobStore,
        /// Per phase: its keys in order, and each claimed key's claimant.
        phases: Mutex<std::collections::HashMap<String, (Vec<String>, std::collections::HashMap<String, usize>)>>,
    }

    /// One runner's view of [`Shared`].
    struct Runner(Arc<Shared>, usize);

    impl JobStore for Runner {
        fn finished<'a>(&'a self, job_id: i64, include_failed: bool) -> BoxFuture<'a, Result<HashSet<String>, String>> {
            self.0.jobs.finished(job_id, include_failed)
        }
        fn record_all<'a>(
            &'a self,
            job_id: i64,
            outcomes: &'a [(String, ItemOutcome)],
        ) -> BoxFuture<'a, Result<Progress, String>> {
            let mut mine = Vec::new();
            for (keys, claims) in self.0.phases.lock().unwrap().values_mut() {
                for (key, outcome) in outcomes {
                    if claims.get(key) == Some(&self.1) {
                        claims.remove(key);
                        keys.retain(|k| k != key);
                        mine.push((key.clone(), outcome.clone()));
                    }
                }
            }
            Box::pin(async move { self.0.jobs.record_all(job_id, &mine).await })
        }
        fn shared(&self) -> Option<&dyn SharedQueue> {
            Some(self)
        }
    }

    impl SharedQueue for Runner {
        fn enqueue<'a>(&'a self, _: i64, phase: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), String>> {
            self.0
                .phases
                .lock()
                .unwrap()
                .entry(phase.to_string())
                .or_insert_with(|| (keys.to_vec(), Default::default()));
            Box::pin(async { Ok(()) })
        }
        fn claim<'a>(&'a self, _: i64, phase: &'a str, n: usize) -> BoxFuture<'a, Result<Vec<String>, String>> {
            let mut phases = self.0.phases.lock().unwrap();
            let (keys, claims) = phases.get_mut(phase).expect("queued");
            let free: Vec<String> = keys.iter().filter(|k| !claims.contains_key(*k)).take(n).cloned().collect();
            for k in &free {
                claims.insert(k.clone(), self.1);
            }
            Box::pin(async move { Ok(free) })
        }
        fn remaining<'a>(&'a self, _: i64, phase: &'a str) -> BoxFuture<'a, Result<u64, String>> {
            let left = self.0.phases.lock().unwrap().get(phase).map_or(0, |(keys, _)| keys.len() as u64);
            Box::pin(async move { Ok(left) })
        }
    }

    /// Three runners on one shared queue: each item runs once, on one of
    /// them, every runner takes some, and each returns only when the
    /// phase is over everywhere — also one that joins after the others
    /// finished it (it runs nothing).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runners_sharing_a_queue_run_each_item_once() {
        let shared = Arc::new(Shared::default());
        shared.jobs.set_total(6, 200);
        let runs = Arc::new(Mutex::new(std::collections::HashMap::<String, Vec<usize>>::new()));
        let runner = |who: usize| {
            let (shared, runs) = (shared.clone(), runs.clone());
            async move {
                let store = Runner(shared, who);
                run(6, items(200), &store, 4, false, &CancellationToken::new(), &|_| {}, |item| {
                    let runs = runs.clone();
                    async move {
                        runs.lock().unwrap().entry(item.key.clone()).or_default().push(who);
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        ItemOutcome::Done { result: item.key, tokens: 1, cost_usd: 0.0 }
                    }
                })
                .await
            }
        };
        // Tasks of their own, as processes are: a run on a multi-threaded
        // runtime blocks its task while its threads drive the items.
        let tasks = [0, 1, 2].map(|who| tokio::spawn(runner(who)));
        for task in tasks {
            assert_eq!(task.await.unwrap(), Ok(RunEnd::Finished));
        }
        let runs = runs.lock().unwrap().clone();
        assert_eq!(runs.len(), 200);
        assert!(runs.values().all(|who| who.len() == 1), "an item ran twice");
        for who in 0..3 {
            assert!(runs.values().any(|w| w[0] == who), "runner {who} ran nothing");
        }
        assert_eq!(shared.jobs.finished(6, true).await.unwrap().len(), 200);
        let late = AtomicUsize::new(0);
        let store = Runner(shared.clone(), 3);
        let end = run(6, items(200), &store, 4, false, &CancellationToken::new(), &|_| {}, |item| {
            late.fetch_add(1, Ordering::SeqCst);
            async move { ItemOutcome::Done { result: item.key, tokens: 1, cost_usd: 0.0 } }
        })
        .await;
        assert_eq!((end, late.load(Ordering::SeqCst)), (Ok(RunEnd::Finished), 0));
    }
}

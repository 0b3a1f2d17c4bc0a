//! Running a job: many independent items (one chunk to summarise, one pair
//! of answers to judge, …), each of which makes LLM calls.
//!
//! - Each item's outcome is written the moment it finishes, so a job killed
//!   at any point resumes with only the unfinished items; with the gateway's
//!   cache, repeated calls inside a half-finished item cost nothing either.
//! - A failed item is data ([`ItemOutcome::Failed`]), never a crash: the job
//!   goes on and the failure is listed, to be retried later.
//! - At most `concurrency` items run at once.
//! - Cancelling stops new items at once and abandons the ones in flight
//!   (their requests are dropped); what finished is kept.
//! - Progress (done, failed, tokens, cost) is reported after every item.
//!
//! Storage is the caller's: [`JobStore`] (SQLite in the web app).

use std::collections::HashSet;
use std::future::Future;

use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::llm::prompt::prompt_hash;
use crate::llm::{BoxFuture, CallContext, ChatRequest, Gateway};

/// One unit of work: a stable key (unique in its job) and what the work needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkItem {
    pub key: String,
    pub payload: serde_json::Value,
}

/// How an item ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ItemOutcome {
    Done { result: String, tokens: u64, cost_usd: f64 },
    Failed { error: String, tokens: u64, cost_usd: f64 },
}

impl ItemOutcome {
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
    /// Records an item's outcome and updates the job's counters, atomically.
    fn record<'a>(
        &'a self,
        job_id: i64,
        key: &'a str,
        outcome: &'a ItemOutcome,
    ) -> BoxFuture<'a, Result<Progress, String>>;
}

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
    W: Fn(WorkItem) -> Fut,
    Fut: Future<Output = ItemOutcome>,
{
    let finished = store.finished(job_id, !retry_failed).await?;
    let pending: Vec<WorkItem> = items.into_iter().filter(|i| !finished.contains(&i.key)).collect();
    // Each item records its own outcome inside its future. The loop below
    // must never await anything itself: while it waits, the stream is not
    // polled, so items in flight are suspended — possibly mid-transaction,
    // holding the database's write lock the loop would be waiting for.
    let mut outcomes = stream::iter(pending)
        .map(|item| {
            let key = item.key.clone();
            let fut = work(item);
            async move {
                let outcome = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return None,
                    outcome = fut => outcome,
                };
                Some(store.record(job_id, &key, &outcome).await)
            }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some(next) = outcomes.next().await {
        let Some(progress) = next else { break };
        on_progress(progress?);
        if cancel.is_cancelled() {
            break;
        }
    }
    Ok(if cancel.is_cancelled() { RunEnd::Cancelled } else { RunEnd::Finished })
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

    fn record<'a>(
        &'a self,
        job_id: i64,
        key: &'a str,
        outcome: &'a ItemOutcome,
    ) -> BoxFuture<'a, Result<Progress, String>> {
        Box::pin(async move {
            let mut items = self.items.lock().unwrap();
            items.insert((job_id, key.to_string()), outcome.clone());
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
/// result with `parse`, whose error fails the item; tokens and cost are
/// kept either way.
pub async fn one_call(
    gateway: &Gateway,
    job_id: i64,
    item: &WorkItem,
    template: &str,
    req: &ChatRequest,
    parse: impl Fn(&str) -> Result<String, String>,
) -> ItemOutcome {
    let ctx =
        CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: Some(prompt_hash(template)) };
    match gateway.chat_parsed(req, &ctx, parse).await {
        Ok(parsed) => {
            let tokens = parsed.replies.iter().map(|r| r.prompt_tokens + r.completion_tokens).sum();
            let cost_usd = parsed.replies.iter().map(|r| r.cost_usd).sum();
            match parsed.value {
                Ok(result) => ItemOutcome::Done { result, tokens, cost_usd },
                Err(error) => ItemOutcome::Failed { error, tokens, cost_usd },
            }
        }
        Err((e, _)) => ItemOutcome::Failed { error: e.to_string(), tokens: 0, cost_usd: 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        // Cancel after 20 items have finished.
        let seen = AtomicUsize::new(0);
        let end = run(
            2,
            items(60),
            &store,
            4,
            false,
            &cancel,
            &|_| {
                if seen.fetch_add(1, Ordering::SeqCst) + 1 == 20 {
                    cancel.cancel();
                }
            },
            |i| work(i, &calls),
        )
        .await
        .unwrap();
        assert_eq!(end, RunEnd::Cancelled);
        let finished_first = store.finished(2, true).await.unwrap().len();
        assert_eq!(finished_first, 20, "what finished is kept, nothing after the cancel");

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

    #[tokio::test]
    async fn cancelling_abandons_items_in_flight_at_once() {
        let store = MemoryJobStore::default();
        let cancel = CancellationToken::new();
        let started = Arc::new(AtomicUsize::new(0));
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c2.cancel();
        });
        let t0 = std::time::Instant::now();
        let end = run(3, items(10), &store, 4, false, &cancel, &|_| {}, |_| {
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
        assert_eq!(started.load(Ordering::SeqCst), 4, "no new item started after the cancel");
        assert!(store.finished(3, true).await.unwrap().is_empty());
    }
}

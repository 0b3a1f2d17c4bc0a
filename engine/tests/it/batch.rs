//! The Batch API against the mock server: an unbiased evaluation sent as
//! batches gives the very verdicts the same evaluation sent live gives, at
//! half the price, in one batch per round of calls; a request the batch
//! refuses fails its call with the provider's reason; a job cancelled while
//! its batch is out, then resumed, follows that batch and sends nothing
//! again.

use std::sync::Arc;
use std::time::Duration;

use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::judge::protocol::{run_unbiased_item, UnbiasedItem};
use engine::llm::batch::{BatchProvider, BatchSettings, MemoryJournal};
use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::llm::{Gateway, MemoryStore, PriceTable, Provider};
use mockllm::{MockConfig, MockServer, Responder};
use tokio_util::sync::CancellationToken;

const TRIALS: u32 = 3;

/// The mock judges as the offline provider does.
fn offline_judge() -> Responder {
    let offline = engine::offline::provider();
    Responder(Arc::new(move |body: &serde_json::Value| offline.answer_body(body)))
}

fn items() -> Vec<WorkItem> {
    let mut items = Vec::new();
    for t in 0..TRIALS {
        for i in 0..8 {
            let q = format!("Who kept the lighthouse at Saltmere in year {i}?");
            let a = format!("Isobel Pell kept the Saltmere lighthouse in year {i}, and wrote its log each night.");
            let b = format!("A keeper, in year {i}.");
            let item = UnbiasedItem::new(&q, &a, &b, t, 2);
            items.push(WorkItem::new(format!("u-1-2-{i}-{t:03}"), &item));
        }
    }
    items
}

/// Each item's result (or error) in key order, and the calls' total cost.
async fn judge(provider: Arc<dyn Provider>, concurrency: usize) -> (Vec<Result<String, String>>, f64, usize) {
    let log = Arc::new(MemoryStore::default());
    let prices = PriceTable::default().with("mock-model", 2.0, 8.0);
    let gw = Gateway::new(provider, log.clone(), prices);
    let store = MemoryJobStore::default();
    let items = items();
    let keys: Vec<String> = items.iter().map(|i| i.key.clone()).collect();
    run(1, items, &store, concurrency, false, &CancellationToken::new(), &|_| {}, |item| {
        run_unbiased_item(&gw, 1, item)
    })
    .await
    .unwrap();
    let results = keys
        .iter()
        .map(|k| match store.outcome(1, k).unwrap() {
            ItemOutcome::Done { result, .. } => Ok(result),
            ItemOutcome::Failed { error, .. } => Err(error),
        })
        .collect();
    let calls = log.log();
    (results, calls.iter().map(|c| c.cost_usd).sum(), calls.len())
}

fn endpoint(mock: &MockServer) -> OpenAiProvider {
    let mut c = OpenAiConfig::new(mock.base_url(), "mock-model");
    c.concurrency = 8;
    OpenAiProvider::new(c).unwrap()
}

fn quick() -> BatchSettings {
    BatchSettings {
        gather: Duration::from_millis(100),
        first_poll: Duration::from_millis(10),
        poll: Duration::from_millis(20),
        ..BatchSettings::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evaluation_sent_as_batches_gives_the_live_verdicts_at_half_the_price() {
    let mock =
        MockServer::start(MockConfig { responder: Some(offline_judge()), batch_polls: 2, ..Default::default() }).await;
    let (live, live_cost, live_calls) = judge(Arc::new(endpoint(&mock)), 8).await;
    let live_requests = mock.stats().ok;
    assert!(live.iter().all(Result::is_ok), "{live:?}");
    assert_eq!(mock.stats().batches, 0);

    mock.reset_stats();
    let batch = Arc::new(BatchProvider::new(endpoint(&mock), quick()));
    let (batched, batch_cost, batch_calls) = judge(batch.clone(), 1000).await;
    let stats = mock.stats();
    assert_eq!(batched, live, "the same verdicts, item by item");
    assert_eq!(batch_calls, live_calls);
    // Every call went in a batch (one round: no alignment), none live.
    assert_eq!((stats.batches, stats.batch_requests, stats.requests), (1, live_requests, 0));
    assert!(live_cost > 0.0);
    assert!((batch_cost - live_cost / 2.0).abs() < 1e-9, "batch {batch_cost} against live {live_cost}");
    let sent = batch.batches();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].status.as_str(), sent[0].completed, sent[0].total),
        ("completed", live_requests, live_requests)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_batch_refuses_fails_its_call_with_the_providers_reason() {
    // A context of 20 words: every judging prompt is over it.
    let mock =
        MockServer::start(MockConfig { responder: Some(offline_judge()), context: Some(20), ..Default::default() })
            .await;
    let batch = Arc::new(BatchProvider::new(endpoint(&mock), quick()));
    let (results, cost, _) = judge(batch, 1000).await;
    assert_eq!(cost, 0.0);
    for r in &results {
        let error = r.as_ref().unwrap_err();
        assert!(error.contains("HTTP 400") && error.contains("maximum context length"), "{error}");
    }
    assert_eq!(mock.stats().over_context, results.len() as u64 * 4, "each item's four judgments were refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_resumed_follows_the_batch_it_sent_and_sends_nothing_again() {
    // Batches stay in progress until the test lets them finish.
    let mock =
        MockServer::start(MockConfig { responder: Some(offline_judge()), batch_polls: u32::MAX, ..Default::default() })
            .await;
    let journal = Arc::new(MemoryJournal::default());
    {
        let provider = Arc::new(BatchProvider::with_journal(endpoint(&mock), quick(), journal.clone()));
        let gw = Gateway::new(provider, Arc::new(MemoryStore::default()), PriceTable::default());
        let store = MemoryJobStore::default();
        let cancel = CancellationToken::new();
        // Cancelled once its batch is recorded (a process killed would do as well).
        let watch = {
            let (journal, cancel) = (journal.clone(), cancel.clone());
            tokio::spawn(async move {
                while journal.all().is_empty() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                cancel.cancel();
            })
        };
        run(1, items(), &store, 1000, false, &cancel, &|_| {}, |item| run_unbiased_item(&gw, 1, item)).await.unwrap();
        watch.await.unwrap();
        let done =
            items().iter().filter(|i| matches!(store.outcome(1, &i.key), Some(ItemOutcome::Done { .. }))).count();
        assert_eq!(done, 0, "nothing answered yet");
    }
    let recorded = journal.all();
    assert_eq!(recorded.len(), 1);
    assert!(!recorded[0].1, "the batch is unread");
    let sent = mock.stats().batch_requests;
    assert_eq!(sent as usize, recorded[0].0.requests.len());

    mock.finish_batches();
    let resumed = Arc::new(BatchProvider::with_journal(endpoint(&mock), quick(), journal.clone()));
    let (results, _, calls) = judge(resumed.clone(), 1000).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(calls as u64, sent, "every call answered from the batch sent before");
    assert_eq!((mock.stats().batches, mock.stats().batch_requests), (1, sent), "nothing sent again");
    assert!(journal.all()[0].1, "the batch is read");
    assert_eq!(resumed.batches()[0].id, recorded[0].0.id);
    // The verdicts a live run gives.
    let (live, _, _) = judge(Arc::new(endpoint(&mock)), 8).await;
    assert_eq!(results, live);
}

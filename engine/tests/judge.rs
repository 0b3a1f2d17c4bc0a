//! The bias lab reproduces seed 000's sanity check: a method against itself
//! (the same answers on both sides) judged by a simulated judge with a
//! strong first-position preference and noise. The legacy protocol (A always
//! first, a forced winner) hands A a relative win rate of at least 0.7; the
//! unbiased protocol (both orders, two repeats, ties) keeps the median over
//! trials within ±0.05; and turning position exchange off brings the bias
//! back.

use std::sync::Arc;

use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::judge::protocol::{payload, run_legacy_item, run_unbiased_item};
use engine::judge::simulated::{Biases, SimulatedJudge};
use engine::judge::{verdict, Judgment, LegacyJudgment, Order, Outcome, Rates};
use engine::llm::{Gateway, MemoryStore, PriceTable};
use tokio_util::sync::CancellationToken;

const QUESTIONS: usize = 30;
const TRIALS: u32 = 9;

fn pairs() -> Vec<(String, String)> {
    (0..QUESTIONS)
        .map(|i| {
            let q = format!("What happened to the boat number {i} at Saltmere harbour?");
            let a = format!(
                "The boat number {i} was built at the Pell yard in {}. It sailed from Saltmere harbour and was lost in a storm.",
                1700 + i
            );
            (q, a)
        })
        .collect()
}

async fn results(gw: &Gateway, items: Vec<WorkItem>, legacy: bool) -> Vec<serde_json::Value> {
    let store = MemoryJobStore::default();
    let keys: Vec<String> = items.iter().map(|i| i.key.clone()).collect();
    run(1, items, &store, 8, false, &CancellationToken::new(), &|_| {}, |item| async {
        if legacy {
            run_legacy_item(gw, 1, item).await
        } else {
            run_unbiased_item(gw, 1, item).await
        }
    })
    .await
    .unwrap();
    keys.iter()
        .map(|k| match store.outcome(1, k).unwrap() {
            ItemOutcome::Done { result, .. } => serde_json::from_str(&result).unwrap(),
            ItemOutcome::Failed { error, .. } => panic!("{k}: {error}"),
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    engine::stats::quantile(&v, 0.5).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unbiased_protocol_judges_a_method_even_with_itself_where_the_legacy_one_does_not() {
    let judge = SimulatedJudge::new(Biases { position: 1.0, length_per_10_words: 0.0, noise: 0.5, seed: 11 });
    let log = Arc::new(MemoryStore::default());
    let gw = Gateway::new(Arc::new(judge), log.clone(), PriceTable::default());
    let pairs = pairs();

    // Legacy: one trial, A first.
    let items: Vec<WorkItem> = pairs
        .iter()
        .enumerate()
        .map(|(i, (q, a))| WorkItem { key: format!("l-{i}"), payload: payload(q, a, a, 0, 1) })
        .collect();
    let legacy: Vec<Outcome> = results(&gw, items, true)
        .await
        .iter()
        .map(|r| serde_json::from_value::<LegacyJudgment>(r["legacy"].clone()).unwrap().overall)
        .collect();
    let legacy_rate = Rates::of(&legacy).unwrap().relative();
    assert!(legacy_rate >= 0.7, "legacy relative win rate of the first-placed side: {legacy_rate}");

    // Unbiased: both orders, two repeats, trials.
    let mut items = Vec::new();
    for t in 0..TRIALS {
        for (i, (q, a)) in pairs.iter().enumerate() {
            items.push(WorkItem { key: format!("t{t}-q{i}"), payload: payload(q, a, a, t, 2) });
        }
    }
    let judged = results(&gw, items, false).await;
    let per_trial = |f: &dyn Fn(&[Judgment]) -> Outcome| -> Vec<f64> {
        (0..TRIALS)
            .map(|t| {
                let outcomes: Vec<Outcome> = judged
                    .iter()
                    .filter(|r| r["trial"] == t)
                    .map(|r| f(&serde_json::from_value::<Vec<Judgment>>(r["judgments"].clone()).unwrap()))
                    .collect();
                assert_eq!(outcomes.len(), QUESTIONS);
                Rates::of(&outcomes).unwrap().relative()
            })
            .collect()
    };
    let unbiased = median(per_trial(&|js| verdict(js).unwrap().outcome));
    assert!(unbiased.abs() <= 0.05, "unbiased median relative win rate: {unbiased}");
    // Position exchange off (only the A-first judgments): the bias returns.
    let one_order = median(per_trial(&|js| {
        let first: Vec<Judgment> = js.iter().filter(|j| j.order == Order::AFirst).cloned().collect();
        verdict(&first).unwrap().outcome
    }));
    assert!(one_order >= 0.7, "without position exchange: {one_order}");
    // Every draw was a call of its own: 2 orders × 2 repeats × questions × trials, none from the cache.
    let fresh = log.log().iter().filter(|c| c.purpose == "judge_scores" && !c.cached).count();
    assert_eq!(fresh, 4 * QUESTIONS * TRIALS as usize);
}

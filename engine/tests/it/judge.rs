//! The bias lab reproduces seed 000's sanity check: a method against itself
//! (the same answers on both sides) judged by a simulated judge with a
//! strong first-position preference and noise. The legacy protocol (A always
//! first, a forced winner) hands A a relative win rate of at least 0.7; the
//! unbiased protocol (both orders, two repeats, ties) keeps the median over
//! trials within ±0.05; and turning position exchange off brings the bias
//! back. With a length preference too, and the first-placed side the longer,
//! length alignment is what keeps the verdict even: off, the bias returns.
//!
//! Length alignment against the `openai` client and a mock server: a pair
//! within the tolerance is left alone, one is fixed by regeneration, one by
//! the forced append, one is discarded, and the success rate says so.

use std::sync::Arc;

use engine::jobs::{run, ItemOutcome, MemoryJobStore, WorkItem};
use engine::judge::protocol::{run_legacy_item, run_unbiased_item, UnbiasedItem};
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

/// The legacy protocol's relative win rate of A over `(question, A, B)`.
async fn legacy_relative(gw: &Gateway, pairs: &[(String, String, String)]) -> f64 {
    let items: Vec<WorkItem> = pairs
        .iter()
        .enumerate()
        .map(|(i, (q, a, b))| WorkItem {
            key: format!("l-{i}"),
            payload: serde_json::to_value(UnbiasedItem::new(q, a, b, 0, 1)).unwrap(),
        })
        .collect();
    let legacy: Vec<Outcome> = results(gw, items, true)
        .await
        .iter()
        .map(|r| serde_json::from_value::<LegacyJudgment>(r["legacy"].clone()).unwrap().overall)
        .collect();
    Rates::of(&legacy).unwrap().relative()
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
    let same: Vec<(String, String, String)> = pairs.iter().map(|(q, a)| (q.clone(), a.clone(), a.clone())).collect();
    let legacy_rate = legacy_relative(&gw, &same).await;
    assert!(legacy_rate >= 0.7, "legacy relative win rate of the first-placed side: {legacy_rate}");

    // Unbiased: both orders, two repeats, trials.
    let mut items = Vec::new();
    for t in 0..TRIALS {
        for (i, (q, a)) in pairs.iter().enumerate() {
            items.push(WorkItem {
                key: format!("t{t}-q{i}"),
                payload: serde_json::to_value(UnbiasedItem::new(q, a, a, t, 2)).unwrap(),
            });
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

use std::collections::BTreeMap;

use engine::judge::align::{words, Alignment};
use engine::judge::eval::{self, PairInput, QuestionInput, Settings};
use engine::judge::protocol::{run_align_item, AlignItem};
use engine::llm::openai::{OpenAiConfig, OpenAiProvider};
use engine::rag::{method, Corpus};
use mockllm::{MockConfig, MockServer, Responder};
use serde_json::{json, Value};

fn text(n: usize) -> String {
    (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn length_alignment_leaves_regenerates_forces_or_discards_through_the_openai_client() {
    // The mock: an answer request gets the words it asks for, except for
    // "Q3" (always 30); an append request gets the missing words, except
    // for "Q4" (5 only).
    let reply = |req: &Value| {
        let user = req["messages"][1]["content"].as_str().unwrap_or("");
        let question = user.lines().find_map(|l| l.strip_prefix("Question: ")).unwrap_or("");
        if let Some(missing) = user.lines().find_map(|l| l.strip_prefix("Words to add: ")) {
            let answer = engine::llm::prompt::delimited(user).unwrap_or("");
            let n: usize = if question.contains("Q4") { 5 } else { missing.trim().parse().unwrap() };
            return format!("{answer} {}", text(n));
        }
        let asked: usize = user
            .split("Answer in about ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(10);
        text(if question.contains("Q3") {
            30
        } else if question.contains("Q5") {
            // Q5's model overshoots: three times what it is asked for.
            3 * asked
        } else {
            asked
        })
    };
    let (mock, gw, log) = crate::common::replying(reply, PriceTable::default()).await;
    let corpus = Corpus::new(
        vec![(1, "The Salt Guild met at Saltmere every spring.".into()), (2, "Ada Pell led the Guild.".into())],
        Default::default(),
        BTreeMap::new(),
    );
    let bm25 = method::build("bm25", &Value::Null, Arc::new(corpus), Default::default()).unwrap();
    // (question, A's words, B's words, A regenerable)
    let cases = [
        ("Q1 who met?", 50, 55, true),
        ("Q2 who led?", 20, 100, true),
        ("Q3 when?", 20, 100, true),
        ("Q4 where?", 20, 100, false),
        ("Q5 why?", 20, 60, true),
    ];
    let mut questions = Vec::new();
    for (i, (q, wa, wb, regenerable)) in cases.iter().enumerate() {
        let item = WorkItem {
            key: format!("al-1-2-{i}"),
            payload: serde_json::to_value(AlignItem::new(q, &text(*wa), &text(*wb), 10, 3)).unwrap(),
        };
        let methods = [regenerable.then_some((bm25.as_ref(), &gw)), None];
        let result: Value = match run_align_item(&gw, 1, item, methods).await {
            ItemOutcome::Done { result, .. } => serde_json::from_str(&result).unwrap(),
            ItemOutcome::Failed { error, .. } => panic!("{q}: {error}"),
        };
        let alignment: Alignment = serde_json::from_value(result["alignment"].clone()).unwrap();
        questions.push((alignment, result));
    }
    let how: Vec<Alignment> = questions.iter().map(|q| q.0).collect();
    assert_eq!(
        how,
        [
            Alignment::AsIs,
            Alignment::Regenerated(1),
            Alignment::Forced(3),
            Alignment::Discarded,
            Alignment::Regenerated(1)
        ]
    );
    // As judged: Q2's A now 100 words; Q3's A 30 + 70 appended; Q4 short by 75.
    let judged =
        |i: usize| (questions[i].1["words"][0].as_u64().unwrap(), questions[i].1["words"][1].as_u64().unwrap());
    assert_eq!(
        [judged(0), judged(1), judged(2), judged(3), judged(4)],
        [(50, 55), (100, 100), (100, 100), (25, 100), (60, 60)],
        "Q5's overshoot (180 words) trimmed to the longer answer's 60, never a new target"
    );
    assert_eq!(questions[2].1["a"].as_str().map(words), Some(100));
    // The calls: none for Q1; one answer for Q2; three answers asking for
    // 100, then 170, then 200 words (what was missed on top, at most twice
    // the target), and the append, for Q3; the append alone for Q4; one
    // answer for Q5, asked for the longer answer's 60 words.
    let calls = log.log();
    let asked: Vec<String> = calls
        .iter()
        .filter(|c| c.context.item.as_deref() == Some("al-1-2-2"))
        .map(|c| {
            c.messages[1]
                .content
                .lines()
                .find(|l| l.starts_with("Answer in about") || l.starts_with("Words to add"))
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(
        asked,
        ["Answer in about 100 words.", "Answer in about 170 words.", "Answer in about 200 words.", "Words to add: 70"]
    );
    let per_item = |k: &str| calls.iter().filter(|c| c.context.item.as_deref() == Some(k)).count();
    assert_eq!([per_item("al-1-2-0"), per_item("al-1-2-1"), per_item("al-1-2-3"), per_item("al-1-2-4")], [0, 1, 1, 1]);
    assert_eq!(mock.stats().requests as usize, calls.len());
    // The report's success rate: 4 of 5 within the tolerance in the end.
    let pair = PairInput {
        a: 1,
        b: 2,
        questions: questions
            .iter()
            .enumerate()
            .map(|(i, (a, _))| QuestionInput { id: i as i64, alignment: Some(*a), ..Default::default() })
            .collect(),
    };
    let r = eval::report(&Settings::default(), &[], &[pair]);
    let summary = &r.pairs[0].alignment;
    assert_eq!((summary.as_is, summary.regenerated, summary.forced, summary.discarded), (1, 2, 1, 1));
    assert_eq!(summary.success_rate, Some(0.8));
}

/// Five sentences, each with a name: the rubric's Empowerment is capped,
/// so repeating the answer's own words adds no quality, only length.
fn rich_answer(i: usize) -> String {
    format!(
        "The boat {i} was built by Ada Pell. It sailed from Saltmere. Bo Marsh owned it later. \
         The Guild taxed it in {}. It sank near Hollin in a storm.",
        1700 + i
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_length_preference_length_alignment_is_what_keeps_the_verdict_even() {
    let judge = SimulatedJudge::new(Biases { position: 1.0, length_per_10_words: 0.5, noise: 0.5, seed: 5 });
    let gw = Gateway::new(Arc::new(judge), Arc::new(MemoryStore::default()), PriceTable::default());
    let mut aligned = Vec::new();
    let mut raw = Vec::new();
    for i in 0..QUESTIONS {
        let q = format!("What happened to the boat {i}?");
        let b = rich_answer(i);
        // A: the same answer padded with its own words (what the offline append does), 40 words longer.
        let own: Vec<&str> = b.split_whitespace().collect();
        let a = format!("{b} {}", own.iter().cycle().take(40).copied().collect::<Vec<_>>().join(" "));
        assert_eq!(words(&a), words(&b) + 40);
        let item = WorkItem {
            key: format!("al-{i}"),
            payload: serde_json::to_value(AlignItem::new(&q, &a, &b, 10, 3)).unwrap(),
        };
        let r: Value = match run_align_item(&gw, 1, item, [None, None]).await {
            ItemOutcome::Done { result, .. } => serde_json::from_str(&result).unwrap(),
            ItemOutcome::Failed { error, .. } => panic!("{error}"),
        };
        assert_eq!(r["alignment"], json!({"Forced": 0}), "imported answers: the forced append only");
        aligned.push((q.clone(), r["a"].as_str().unwrap().to_string(), r["b"].as_str().unwrap().to_string()));
        raw.push((q, a, b));
    }
    // Legacy over the answers as generated: A first and longer.
    let legacy_rate = legacy_relative(&gw, &raw).await;
    assert!(legacy_rate >= 0.7, "legacy, first-placed and longer: {legacy_rate}");

    // The unbiased protocol over aligned and over unaligned answers.
    let median_relative = |judged: Vec<Value>| -> f64 {
        let mut per_q: Vec<QuestionInput> =
            (0..QUESTIONS).map(|i| QuestionInput { id: i as i64, ..Default::default() }).collect();
        for (k, r) in judged.iter().enumerate() {
            let js: Vec<Judgment> = serde_json::from_value(r["judgments"].clone()).unwrap();
            per_q[k % QUESTIONS].trials.insert(r["trial"].as_u64().unwrap() as u32, js);
        }
        let report = eval::report(&Settings::default(), &[], &[PairInput { a: 1, b: 2, questions: per_q }]);
        report.pairs[0].unbiased.as_ref().unwrap().relative.median
    };
    let trial_items = |pairs: &[(String, String, String)]| -> Vec<WorkItem> {
        (0..TRIALS)
            .flat_map(|t| {
                pairs.iter().enumerate().map(move |(i, (q, a, b))| WorkItem {
                    key: format!("u-{t}-{i}"),
                    payload: serde_json::to_value(UnbiasedItem::new(q, a, b, t, 2)).unwrap(),
                })
            })
            .collect()
    };
    let even = median_relative(results(&gw, trial_items(&aligned), false).await);
    assert!(even.abs() <= 0.05, "unbiased with length alignment: {even}");
    let unaligned = median_relative(results(&gw, trial_items(&raw), false).await);
    assert!(unaligned >= 0.7, "length alignment off, the longer side wins again: {unaligned}");
}

/// Bradley–Terry scores equal choix's maximum-likelihood fit of the same
/// win counts (scripts/refs/bradley_terry_refs.py, choix 0.4.1) to 1e-6.
#[test]
fn bradley_terry_scores_equal_choix_on_the_same_win_counts() {
    let refs = fixture("bradley_terry_refs.json");
    let cases = refs["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for case in cases {
        let w: Vec<Vec<f64>> = serde_json::from_value(case["w"].clone()).unwrap();
        let theirs: Vec<f64> = serde_json::from_value(case["theta"].clone()).unwrap();
        let ours = engine::judge::ranking::fit(&w).expect("identifiable");
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert!((a - b).abs() < 1e-6, "{}: method {i}: Assay {a} vs choix {b}", case["name"]);
        }
    }
}

/// The ranking of an evaluation: every pair's verdicts per question and
/// trial are its battles; the order, the upper-bound ranks and intervals
/// follow from the scores; resampling questions keeps the scores inside.
#[test]
fn an_evaluations_ranking_orders_the_methods_by_their_verdicts() {
    use engine::judge::ranking::rank;
    use engine::judge::Outcome;
    let methods: Vec<(i64, String)> = vec![(10, "weak".into()), (11, "strong".into()), (12, "middle".into())];
    // 60 questions; strong beats weak 3 in 4, middle sits between.
    let questions: Vec<Vec<(usize, usize, Outcome)>> = (0..60)
        .map(|q| {
            let o = |k: usize| match (q + k) % 4 {
                0 => Outcome::B,
                1 => Outcome::Tie,
                _ => Outcome::A,
            };
            vec![(1, 0, o(0)), (2, 0, o(1)), (1, 2, o(2))]
        })
        .collect();
    let r = rank(&methods, &questions, 9);
    assert_eq!(r.battles, 180);
    assert_eq!(r.questions, 60);
    assert_eq!(r.resamples, engine::judge::ranking::RESAMPLES);
    let names: Vec<&str> = r.rows.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["strong", "middle", "weak"]);
    assert_eq!(r.rows.iter().map(|x| x.rank).collect::<Vec<_>>(), [1, 2, 3]);
    for x in &r.rows {
        assert!(x.ci.0 <= x.score && x.score <= x.ci.1, "{x:?}");
        assert_eq!(x.battles, 120);
        let above = r.rows.iter().filter(|y| y.ci.0 > x.ci.1).count();
        assert_eq!(x.rank_ub, 1 + above);
    }
    // Scores are 1000 + 400 θ / ln 10 with θ centred.
    let mean: f64 = r.rows.iter().map(|x| x.theta).sum::<f64>() / 3.0;
    assert!(mean.abs() < 1e-12);
    assert!((r.rows[0].score - (1000.0 + 400.0 * r.rows[0].theta / std::f64::consts::LN_10)).abs() < 1e-9);
    // Wins count a tie as half: strong's 45 wins + 15 ties... over its 120 battles.
    let strong = &r.rows[0];
    let expected: f64 = questions
        .iter()
        .flatten()
        .filter(|(a, b, _)| *a == 1 || *b == 1)
        .map(|(a, _, o)| match (o, *a == 1) {
            (Outcome::Tie, _) => 0.5,
            (Outcome::A, true) | (Outcome::B, false) => 1.0,
            _ => 0.0,
        })
        .sum();
    assert_eq!(strong.wins, expected);
}

/// The length-controlled win rate equals alpaca_eval's own code
/// (`fit_LogisticRegressionCV`, 0.6.6, scikit-learn 1.9.1) on the same
/// judgments (scripts/refs/length_control_refs.py): the folds, the C its
/// cross-validation chose, the held-out scores and the weights to 1e-6 of
/// liblinear run to tol 1e-12, and its win rate to 1e-4 of liblinear at its
/// default tol 1e-4 (what AlpacaEval reports); the paper's
/// maximum-likelihood fit equals scikit-learn's unpenalised one to 1e-6,
/// and has none where the judgments are separable.
#[test]
fn the_length_controlled_win_rate_equals_alpaca_evals_code_on_the_same_judgments() {
    use engine::judge::length_control::{group_folds, length_control, Observation};
    let refs = fixture("length_control_refs.json");
    let cases = refs["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    let close =
        |a: f64, b: f64, tol: f64, what: &str| assert!((a - b).abs() < tol, "{what}: Assay {a} vs reference {b}");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let obs: Vec<Observation> = case["observations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| Observation {
                question: o[0].as_i64().unwrap(),
                preference: o[1].as_f64().unwrap(),
                delta_words: o[2].as_f64().unwrap(),
                a_first: o[3].as_bool().unwrap(),
            })
            .collect();
        let folds: Vec<usize> = serde_json::from_value(case["folds"].clone()).unwrap();
        assert_eq!(group_folds(obs.len()), folds, "{name}: GroupKFold's folds");
        let lc = length_control(&obs, 1).unwrap();
        close(lc.raw_win_rate, case["raw_win_rate"].as_f64().unwrap(), 1e-12, name);
        let code = lc.code.as_ref().unwrap();
        let tight = &case["tight_tol"];
        close(code.c, tight["c"].as_f64().unwrap(), 1e-9, &format!("{name}: C"));
        for (i, s) in tight["scores"].as_array().unwrap().iter().enumerate() {
            close(code.scores[i], s.as_f64().unwrap(), 1e-6, &format!("{name}: held-out score at C #{i}"));
        }
        let w = tight["weights"].as_array().unwrap();
        close(code.fit.length, w[0].as_f64().unwrap(), 1e-6, &format!("{name}: length weight"));
        close(code.fit.position, w[1].as_f64().unwrap(), 1e-6, &format!("{name}: position weight"));
        close(code.fit.pair, w[2].as_f64().unwrap(), 1e-6, &format!("{name}: pair weight"));
        close(code.fit.win_rate, tight["win_rate"].as_f64().unwrap(), 1e-6, &format!("{name}: LC win rate"));
        let default = &case["default_tol"];
        assert_eq!(code.c, default["c"].as_f64().unwrap(), "{name}: the same C at liblinear's default tol");
        close(
            code.fit.win_rate,
            default["win_rate"].as_f64().unwrap(),
            1e-4,
            &format!("{name}: LC win rate (default tol)"),
        );
        let mle = &case["maximum_likelihood"];
        let mw = mle["weights"].as_array().unwrap();
        match &lc.paper {
            Some(p) => {
                close(p.length, mw[0].as_f64().unwrap(), 1e-6, &format!("{name}: ML length weight"));
                close(p.position, mw[1].as_f64().unwrap(), 1e-6, &format!("{name}: ML position weight"));
                close(p.pair, mw[2].as_f64().unwrap(), 1e-6, &format!("{name}: ML pair weight"));
                close(p.win_rate, mle["win_rate"].as_f64().unwrap(), 1e-6, &format!("{name}: ML win rate"));
                let (lo, hi) = lc.paper_ci.unwrap();
                assert!(lo <= p.win_rate && p.win_rate <= hi && hi - lo < 0.5, "{name}: {lo} {hi}");
            }
            None => {
                // scikit-learn stops at its tolerance with weights running off.
                assert!(mw.iter().any(|w| w.as_f64().unwrap().abs() > 10.0), "{name}: {mle}");
                assert!(lc.why.is_some());
            }
        }
        assert_eq!(lc.position_fitted, !name.contains("always first"), "{name}");
    }
}

/// A reference fixture from `tests/fixtures` (made by `scripts/refs/`).
fn fixture(name: &str) -> serde_json::Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap()
}

/// A jury equals its references on the same judgments
/// (scripts/refs/jury_refs.py): three judges with different position
/// biases and noise, one leaving items unjudged, over two pairs — each
/// judge's and the jury's median-trial rates (mean score and majority),
/// Fleiss' κ on the winners (statsmodels), Krippendorff's α on the score
/// differences (the krippendorff package), and each judge's and the jury's
/// Cohen's κ (scikit-learn) and Spearman's ρ (scipy) with the people.
#[test]
fn a_jury_equals_statsmodels_krippendorff_scikit_learn_and_scipy() {
    use engine::judge::jury::{self, Juror};
    let refs = fixture("jury_refs.json");
    let close =
        |a: f64, b: f64, tol: f64, what: &str| assert!((a - b).abs() <= tol, "{what}: Assay {a} vs reference {b}");
    let mut pairs: Vec<PairInput> = Vec::new();
    for j in refs["judgments"].as_array().unwrap() {
        let n = |k: &str| j[k].as_i64().unwrap();
        let scores = |k: &str| -> [u8; 4] {
            let v: Vec<u8> = j[k].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u8).collect();
            v.try_into().unwrap()
        };
        let (a, b, q) = (n("a"), n("b"), n("question"));
        if !pairs.iter().any(|p| (p.a, p.b) == (a, b)) {
            pairs.push(PairInput { a, b, questions: Vec::new() });
        }
        let pair = pairs.iter_mut().find(|p| (p.a, p.b) == (a, b)).unwrap();
        if !pair.questions.iter().any(|x| x.id == q) {
            pair.questions.push(QuestionInput { id: q, ..Default::default() });
        }
        let question = pair.questions.iter_mut().find(|x| x.id == q).unwrap();
        question.trials.entry(n("trial") as u32).or_default().push(Judgment {
            order: if j["order"] == "AFirst" { Order::AFirst } else { Order::BFirst },
            repeat: n("repeat") as u32,
            a: scores("a_scores"),
            b: scores("b_scores"),
            judge: n("judge") as u32,
        });
    }
    let judges = refs["judges"].as_u64().unwrap() as usize;
    let biases = Settings::default().biases;
    let settings = Settings {
        protocol: eval::Protocol::Unbiased,
        trials: 3,
        jury: vec![Juror { judge: eval::JudgeKind::Simulated, model: None, biases }; judges - 1],
        ..Settings::default()
    };
    let contenders: Vec<eval::Contender> =
        [1, 2, 3].map(|id| eval::Contender { set_id: id, name: format!("m{id}"), method: "x".into() }).to_vec();
    let report = eval::report(&settings, &contenders, &pairs);
    let jury = report.jury.expect("three judges make a jury");
    let e = &refs["expected"];
    let check_row = |row: &jury::JudgeRow, want: &serde_json::Value, what: &str| {
        let want = want.as_array().unwrap();
        assert_eq!(row.pairs.len(), want.len(), "{what}");
        for (p, w) in row.pairs.iter().zip(want) {
            assert_eq!((p.a, p.b), (w["a"].as_i64().unwrap(), w["b"].as_i64().unwrap()), "{what}");
            assert_eq!(p.items, w["items"].as_u64().unwrap() as usize, "{what}");
            assert_eq!(p.median_trial, w["median_trial"].as_u64().unwrap() as u32, "{what}");
            for (got, key) in [(p.headline.a_win, "a_win"), (p.headline.tie, "tie"), (p.headline.b_win, "b_win")] {
                close(got, w[key].as_f64().unwrap(), 1e-12, &format!("{what} {}–{} {key}", p.a, p.b));
            }
        }
    };
    assert_eq!(jury.judges.len(), judges);
    for (k, row) in jury.judges.iter().enumerate() {
        check_row(row, &e["judges"][k], &format!("judge {}", k + 1));
    }
    check_row(&jury.mean, &e["mean"], "jury (mean score)");
    check_row(&jury.majority, &e["majority"], "jury (majority)");
    // The headline is the jury's mean score.
    for (p, m) in report.pairs.iter().zip(&jury.mean.pairs) {
        assert_eq!(p.unbiased.as_ref().unwrap().headline, m.headline);
    }
    assert_eq!(jury.items, e["items"].as_u64().unwrap() as usize);
    close(jury.fleiss_kappa.unwrap(), e["fleiss_kappa"].as_f64().unwrap(), 1e-12, "Fleiss' κ");
    close(jury.krippendorff_alpha.unwrap(), e["krippendorff_alpha"].as_f64().unwrap(), 1e-9, "Krippendorff's α");

    let human: BTreeMap<(i64, i64), f64> = refs["human"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| ((h[0].as_i64().unwrap(), h[1].as_i64().unwrap()), h[2].as_f64().unwrap()))
        .collect();
    let people =
        jury::people(&eval::judge_labels(&settings), &eval::jury_pairs(&pairs), &human, "Correctness", vec![9])
            .expect("rated answers");
    assert_eq!(people.rows.len(), judges + 1);
    for (row, want) in people.rows.iter().zip(e["people"].as_array().unwrap()) {
        assert_eq!(row.n, want["n"].as_u64().unwrap() as usize, "{}", row.label);
        close(row.cohen_kappa.unwrap(), want["cohen_kappa"].as_f64().unwrap(), 1e-12, &row.label);
        let (rho, p) = row.spearman.unwrap();
        close(rho, want["spearman_rho"].as_f64().unwrap(), 1e-12, &row.label);
        // The p-values are of order 1e-20: relative to themselves.
        let want_p = want["spearman_p"].as_f64().unwrap();
        close(p, want_p, 1e-6 * want_p, &format!("{}: p", row.label));
    }
    assert_eq!(people.rows.last().unwrap().label, "jury (mean score)");
}

/// A jury's LLM jurors are other models at the same OpenAI-compatible
/// endpoint: the gateway sends a judging request that names no model
/// to the juror's, the call log and the cache key follow it, and each
/// juror's judgments are its model's.
#[tokio::test]
async fn a_jurors_requests_go_to_its_own_model_at_the_same_endpoint() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log_models = seen.clone();
    let reply = move |req: &Value| {
        let model = req["model"].as_str().unwrap_or("").to_string();
        log_models.lock().unwrap().push(model.clone());
        // The partial judge always prefers the answer shown first; the mock model scores both 3.
        let (first, second) = if model == "partial-judge" { (5, 1) } else { (3, 3) };
        let scores = |s: u8| json!({"Comprehensiveness": s, "Relevance": s, "Empowerment": s, "Directness": s});
        json!({"Answer 1": scores(first), "Answer 2": scores(second), "reasoning": model}).to_string()
    };
    let mock =
        MockServer::start(MockConfig { responder: Some(Responder(Arc::new(reply))), ..Default::default() }).await;
    let log = Arc::new(MemoryStore::default());
    let first = Gateway::new(
        Arc::new(OpenAiProvider::new(OpenAiConfig::new(mock.base_url(), "mock-model")).unwrap()),
        log.clone(),
        PriceTable::default(),
    );
    let juror = first.clone().with_chat_model("partial-judge");
    let item = |key: &str| WorkItem {
        key: key.into(),
        payload: serde_json::to_value(UnbiasedItem::new("Who led the Guild?", "Ada Pell.", "Someone.", 0, 1)).unwrap(),
    };
    let mut judged = Vec::new();
    for (gw, key) in [(&first, "u-1-2-3-000"), (&juror, "u-1-2-3-000-1")] {
        match run_unbiased_item(gw, 7, item(key)).await {
            ItemOutcome::Done { result, .. } => {
                let v: Value = serde_json::from_str(&result).unwrap();
                judged.push(serde_json::from_value::<Vec<Judgment>>(v["judgments"].clone()).unwrap());
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(*seen.lock().unwrap(), ["mock-model", "mock-model", "partial-judge", "partial-judge"]);
    let models: Vec<String> = log.log().iter().map(|c| c.model.clone()).collect();
    assert_eq!(
        models,
        ["mock-model", "mock-model", "partial-judge", "partial-judge"],
        "the call log names each juror's model"
    );
    assert!(judged[0].iter().all(|j| j.a == [3; 4] && j.b == [3; 4]));
    // The partial juror prefers whichever answer is shown first: A in AB, B in BA — exchanged, a tie.
    assert_eq!((judged[1][0].a, judged[1][0].b), ([5; 4], [1; 4]));
    assert_eq!((judged[1][1].a, judged[1][1].b), ([1; 4], [5; 4]));
    assert_eq!(verdict(&judged[1]).unwrap().outcome, Outcome::Tie);
    // A second ask of the juror is answered from its own cache entries, not the first judge's.
    let before = seen.lock().unwrap().len();
    assert!(matches!(run_unbiased_item(&juror, 7, item("u-1-2-3-000-1")).await, ItemOutcome::Done { .. }));
    assert_eq!(seen.lock().unwrap().len(), before, "cached under the juror's model");
}

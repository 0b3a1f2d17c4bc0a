//! Juries of judges. Verga et al. (2024), "Replacing Judges with
//! Juries: Evaluating LLM Generations with a Panel of Diverse Models"
//! (arXiv:2404.18796), pool the verdicts of several smaller judges (their
//! PoLL) and find the panel agrees better with people than one large
//! judge, and carries less of any one model's bias.
//!
//! In Assay an evaluation's first judge is its `judge` setting; a jury adds
//! [`Juror`]s (the configured endpoint under another model name, the
//! offline rubric, or the bias lab's simulated judges with their own
//! biases). Each judges every unbiased item — the same prompts, orders,
//! repeats and trials — and its judgments carry its index
//! ([`super::Judgment::judge`]). What the report shows:
//! - **the jury's verdict by mean score** (the rule the evaluation's
//!   headline uses): an item's verdict from the mean of every judge's
//!   aspect scores, i.e. [`super::verdict`] over all the judges'
//!   judgments together (each judge gives the same number);
//! - **the jury's verdict by majority** (PoLL's max voting): each judge's
//!   own verdict of the item, the outcome more than half of them gave,
//!   else a tie;
//! - each judge's own verdicts (its median trial's rates, as the headline);
//! - inter-judge agreement: **Fleiss' κ** (Fleiss 1971) on the items'
//!   winners (A, tie, B; items every judge judged) and **Krippendorff's α**
//!   (interval) on the items' score differences (A's total − B's);
//! - with an answer-validation study of both answer sets of a pair,
//!   agreement with the people, per judge and for the jury: **Cohen's κ**
//!   (unweighted) on each question's winner (the judge's mean total
//!   difference over trials against the raters' mean correctness
//!   difference, both signed, zero a tie) and **Spearman's ρ** on the two
//!   differences.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::simulated::Biases;
use super::{median_trial, trials_of, verdict, Judgment, Outcome, Rates, Verdict, Verdicts};
use crate::agreement::{cohen_kappa, fleiss_kappa, krippendorff_alpha, spearman, Level, Weights};

pub use types::judge::{People, PeopleRow};
pub use types::JudgeKind;

/// A jury's judges at most, the evaluation's first judge among them.
pub use types::defaults::MOST_JUDGES;

/// The rule the jury's headline verdict follows.
pub const RULE: &str = "mean score";

/// A judge a jury adds to the evaluation's first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Juror {
    pub judge: JudgeKind,
    /// For an LLM juror: the model asked at the configured endpoint
    /// (`None`: the configured model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// For a simulated juror: its biases.
    pub biases: Biases,
}

impl Juror {
    /// A juror from its spec: `offline`, `llm`, `llm:MODEL`, `simulated` or
    /// `simulated:position=P,length=L,noise=N,seed=S` (unnamed biases
    /// `defaults`'). Refuses anything else, naming it.
    pub fn parse(spec: &str, defaults: Biases) -> Result<Juror, crate::Invalid> {
        let spec = spec.trim();
        let (kind, rest) = spec.split_once(':').map_or((spec, None), |(k, r)| (k.trim(), Some(r.trim())));
        let judge = JudgeKind::parse(kind).map_err(|_| {
            crate::Invalid::from(format!("a juror is offline, llm[:MODEL] or simulated[:…], not \"{spec}\""))
        })?;
        let mut juror = Juror { judge, model: None, biases: defaults };
        match (judge, rest) {
            (_, None) => {}
            (JudgeKind::Offline, Some(_)) => {
                return Err(crate::Invalid::from(format!("the offline juror takes no settings: \"{spec}\"")))
            }
            (JudgeKind::Llm, Some(model)) => {
                if model.is_empty() || model.len() > 200 || model.chars().any(|c| c.is_control() || c == ';') {
                    return Err(crate::Invalid::from(format!("\"{spec}\": name a model after \"llm:\"")));
                }
                juror.model = Some(model.to_string());
            }
            (JudgeKind::Simulated, Some(settings)) => {
                for part in settings.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let (name, value) = part
                        .split_once('=')
                        .ok_or_else(|| crate::Invalid::from(format!("\"{part}\" in \"{spec}\": write name=value")))?;
                    let number = |v: &str| {
                        v.trim().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| {
                            crate::Invalid::from(format!("\"{part}\" in \"{spec}\": {} is not a number", v.trim()))
                        })
                    };
                    match name.trim() {
                        "position" => juror.biases.position = number(value)?,
                        "length" => juror.biases.length_per_10_words = number(value)?,
                        "noise" => juror.biases.noise = number(value)?,
                        "seed" => {
                            juror.biases.seed = value.trim().parse().map_err(|_| {
                                crate::Invalid::from(format!("\"{part}\" in \"{spec}\": a seed is a whole number"))
                            })?
                        }
                        other => {
                            return Err(crate::Invalid::from(format!(
                                "\"{other}\" in \"{spec}\": a simulated juror sets position, length, noise or seed"
                            )))
                        }
                    }
                }
                let b = juror.biases;
                for (name, v) in [("position", b.position), ("length", b.length_per_10_words), ("noise", b.noise)] {
                    if v.abs() > 5.0 || (name == "noise" && v < 0.0) {
                        return Err(crate::Invalid::from(format!(
                            "\"{spec}\": {name} must be between {} and 5, not {v}",
                            if name == "noise" { "0" } else { "-5" }
                        )));
                    }
                }
            }
        }
        Ok(juror)
    }

    /// Its spec, as [`Juror::parse`] reads it back.
    pub fn spec(&self) -> String {
        match (self.judge, &self.model) {
            (JudgeKind::Offline, _) => "offline".into(),
            (JudgeKind::Llm, None) => "llm".into(),
            (JudgeKind::Llm, Some(m)) => format!("llm:{m}"),
            (JudgeKind::Simulated, _) => {
                let b = self.biases;
                format!(
                    "simulated:position={},length={},noise={},seed={}",
                    b.position, b.length_per_10_words, b.noise, b.seed
                )
            }
        }
    }
}

/// A jury from its specs, as the request lists them (blank ones skipped;
/// how many there may be is the request's to check). A simulated juror's unnamed biases are `defaults`', its seed by default
/// its place in the jury (1, 2, …): two simulated judges never draw alike
/// unless told to.
pub fn parse_jury<S: AsRef<str>>(specs: &[S], defaults: Biases) -> Result<Vec<Juror>, crate::Invalid> {
    specs
        .iter()
        .map(|s| s.as_ref().trim())
        .filter(|s| !s.is_empty())
        .enumerate()
        .map(|(i, s)| Juror::parse(s, Biases { seed: i as u64 + 1, ..defaults }))
        .collect()
}

/// A jury's specs in one line (`; `-separated), as [`parse_jury`] reads it.
pub fn jury_text(jurors: &[Juror]) -> String {
    jurors.iter().map(Juror::spec).collect::<Vec<_>>().join("; ")
}

/// One pair's unbiased judgments as the jury reads them: per question
/// (its id), trial → every judge's judgments.
pub struct PairJudgments<'a> {
    pub a: i64,
    pub b: i64,
    pub questions: Vec<(i64, &'a BTreeMap<u32, Vec<Judgment>>)>,
}

/// One judge's (or the jury's) verdicts on one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgePair {
    pub a: i64,
    pub b: i64,
    /// (question, trial) items with a verdict.
    pub items: usize,
    /// The median trial and its rates, as the report's headline.
    pub median_trial: u32,
    pub headline: Rates,
    pub relative: f64,
}

/// One judge's (or a jury rule's) verdicts on every pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRow {
    /// The judge's index (`None`: a jury rule's row).
    pub judge: Option<u32>,
    pub label: String,
    pub pairs: Vec<JudgePair>,
}

/// A jury's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Jury {
    /// The rule of the jury's headline verdict ([`RULE`]).
    pub rule: String,
    /// Each judge's verdicts, the first judge first.
    pub judges: Vec<JudgeRow>,
    /// The jury's verdicts by mean score (the report's headline's) and by majority.
    pub mean: JudgeRow,
    pub majority: JudgeRow,
    /// Items (pair, question, trial) every judge judged: what κ and α count.
    pub items: usize,
    pub fleiss_kappa: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
    /// Agreement with the people (`None`: no answer-validation study of a pair's two answer sets).
    #[serde(default)]
    pub people: Option<People>,
}

/// The judgments of `judge` among `judgments`.
fn of_judge(judgments: &[Judgment], judge: u32) -> Vec<Judgment> {
    judgments.iter().filter(|j| j.judge == judge).cloned().collect()
}

/// Per question and trial, each judge's verdict (`None`: not judged by it).
type ItemVerdicts = Vec<BTreeMap<u32, Vec<Option<Verdict>>>>;

fn item_verdicts(pair: &PairJudgments, judges: usize) -> ItemVerdicts {
    pair.questions
        .iter()
        .map(|(_, trials)| {
            trials.iter().map(|(t, js)| (*t, (0..judges as u32).map(|j| verdict(&of_judge(js, j))).collect())).collect()
        })
        .collect()
}

/// The majority of `outcomes` (more than half of them), else a tie.
pub fn majority(outcomes: &[Outcome]) -> Outcome {
    for o in [Outcome::A, Outcome::B, Outcome::Tie] {
        if outcomes.iter().filter(|x| **x == o).count() * 2 > outcomes.len() {
            return o;
        }
    }
    Outcome::Tie
}

fn row(judge: Option<u32>, label: &str, pairs: &[PairJudgments], verdicts: &[Verdicts]) -> JudgeRow {
    JudgeRow {
        judge,
        label: label.to_string(),
        pairs: pairs
            .iter()
            .zip(verdicts)
            .filter_map(|(p, v)| {
                let (median_trial, headline) = median_trial(v, &trials_of(v), 0..v.len())?;
                Some(JudgePair {
                    a: p.a,
                    b: p.b,
                    items: v.iter().map(BTreeMap::len).sum(),
                    median_trial,
                    relative: headline.relative(),
                    headline,
                })
            })
            .collect(),
    }
}

/// The jury's report over `pairs`, its judges named by `labels` (the
/// first judge's first). `None` with fewer than two judges.
pub fn jury(labels: &[String], pairs: &[PairJudgments]) -> Option<Jury> {
    let k = labels.len();
    if k < 2 {
        return None;
    }
    let items: Vec<ItemVerdicts> = pairs.iter().map(|p| item_verdicts(p, k)).collect();
    let pick = |f: &dyn Fn(&[Option<Verdict>], &[Judgment]) -> Option<Outcome>| -> Vec<Verdicts> {
        pairs
            .iter()
            .zip(&items)
            .map(|(p, iv)| {
                p.questions
                    .iter()
                    .zip(iv)
                    .map(|((_, trials), per_trial)| {
                        per_trial
                            .iter()
                            .filter_map(|(t, vs)| Some((*t, f(vs, trials.get(t).map_or(&[][..], |js| js))?)))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    };
    let judges = (0..k)
        .map(|j| {
            let v = pick(&|vs, _| vs[j].as_ref().map(|v| v.outcome));
            row(Some(j as u32), &labels[j], pairs, &v)
        })
        .collect();
    let mean = pick(&|_, js| verdict(js).map(|v| v.outcome));
    let majority_verdicts = pick(&|vs, _| {
        let outcomes: Vec<Outcome> = vs.iter().flatten().map(|v| v.outcome).collect();
        (!outcomes.is_empty()).then(|| majority(&outcomes))
    });
    // Agreement over the items every judge judged (κ) and over every item (α).
    let mut counts: Vec<Vec<u32>> = Vec::new();
    let mut units: Vec<Vec<f64>> = Vec::new();
    for per_trial in items.iter().flatten().flat_map(|q| q.values()) {
        let judged: Vec<&Verdict> = per_trial.iter().flatten().collect();
        units.push(judged.iter().map(|v| v.a_total - v.b_total).collect());
        if judged.len() == k {
            let mut c = vec![0u32; 3];
            for v in &judged {
                c[outcome_index(v.outcome)] += 1;
            }
            counts.push(c);
        }
    }
    Some(Jury {
        rule: RULE.into(),
        judges,
        mean: row(None, "jury (mean score)", pairs, &mean),
        majority: row(None, "jury (majority)", pairs, &majority_verdicts),
        items: counts.len(),
        fleiss_kappa: fleiss_kappa(&counts),
        krippendorff_alpha: krippendorff_alpha(&units, Level::Interval, None),
        people: None,
    })
}

fn outcome_index(o: Outcome) -> usize {
    match o {
        Outcome::A => 0,
        Outcome::Tie => 1,
        Outcome::B => 2,
    }
}

/// A signed difference as a winner label: 1 (A), 0 (tie), −1 (B).
fn label(d: f64) -> i64 {
    if d.abs() < 1e-9 {
        0
    } else if d > 0.0 {
        1
    } else {
        -1
    }
}

/// Agreement of each judge (`labels`) and of the jury (mean score) with
/// the people: `human[(answer set, question)]` is the raters' mean score
/// of that answer on `dimension`. A question counts where the people rated
/// both of a pair's answers and the judge judged it. `None` when no
/// question does.
pub fn people(
    labels: &[String],
    pairs: &[PairJudgments],
    human: &BTreeMap<(i64, i64), f64>,
    dimension: &str,
    studies: Vec<i64>,
) -> Option<People> {
    let k = labels.len();
    // Per judge (and the jury last): (judge's difference, people's difference).
    let mut diffs: Vec<Vec<(f64, f64)>> = vec![Vec::new(); k + 1];
    for p in pairs {
        for (q, trials) in &p.questions {
            let (Some(ha), Some(hb)) = (human.get(&(p.a, *q)), human.get(&(p.b, *q))) else { continue };
            let people = ha - hb;
            for (j, out) in diffs.iter_mut().enumerate() {
                let per_trial: Vec<f64> = trials
                    .values()
                    .filter_map(|js| {
                        let v = if j == k { verdict(js) } else { verdict(&of_judge(js, j as u32)) }?;
                        Some(v.a_total - v.b_total)
                    })
                    .collect();
                if !per_trial.is_empty() {
                    out.push((per_trial.iter().sum::<f64>() / per_trial.len() as f64, people));
                }
            }
        }
    }
    if diffs.iter().all(Vec::is_empty) {
        return None;
    }
    let rows = diffs
        .iter()
        .enumerate()
        .map(|(j, d)| {
            let (judge, people): (Vec<f64>, Vec<f64>) = d.iter().copied().unzip();
            let (jl, pl): (Vec<i64>, Vec<i64>) = d.iter().map(|(x, y)| (label(*x), label(*y))).unzip();
            PeopleRow {
                label: if j == k { "jury (mean score)".into() } else { labels[j].clone() },
                n: d.len(),
                cohen_kappa: cohen_kappa(&jl, &pl, Weights::None),
                spearman: spearman(&judge, &people),
            }
        })
        .collect();
    Some(People { studies, dimension: dimension.into(), rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Order;

    fn defaults() -> Biases {
        Biases { position: 0.3, length_per_10_words: 0.1, noise: 0.5, seed: 0 }
    }

    #[test]
    fn jurors_parse_from_their_specs_and_back() {
        let jury = parse_jury(
            &["simulated:position=0.8, noise=1", "llm:qwen2.5-7b-instruct", " offline ", "simulated"],
            defaults(),
        )
        .unwrap();
        assert_eq!(jury.len(), 4);
        assert_eq!(jury[0].judge, JudgeKind::Simulated);
        assert_eq!(jury[0].biases, Biases { position: 0.8, length_per_10_words: 0.1, noise: 1.0, seed: 1 });
        assert_eq!(jury[1].model.as_deref(), Some("qwen2.5-7b-instruct"));
        assert_eq!(jury[2].judge, JudgeKind::Offline);
        assert_eq!(jury[3].biases, Biases { seed: 4, ..defaults() });
        let text = jury_text(&jury);
        assert_eq!(parse_jury(&text.split("; ").collect::<Vec<_>>(), defaults()).unwrap(), jury);
        assert_eq!(parse_jury(&["  "], defaults()).unwrap(), vec![]);
        for bad in ["judge", "offline:x", "llm:", "simulated:position", "simulated:bias=1", "simulated:noise=-1"] {
            let e = parse_jury(&[bad], defaults()).unwrap_err();
            assert!(!e.0.is_empty(), "{bad}");
        }
    }

    #[test]
    fn a_majority_needs_more_than_half() {
        use Outcome::*;
        assert_eq!(majority(&[A, A, B]), A);
        assert_eq!(majority(&[A, B, Tie]), Tie);
        assert_eq!(majority(&[B, B, Tie, Tie]), Tie);
        assert_eq!(majority(&[B, B, B, Tie]), B);
    }

    fn j(judge: u32, order: Order, a: [u8; 4], b: [u8; 4]) -> Judgment {
        Judgment { order, repeat: 0, a, b, judge }
    }

    #[test]
    fn the_jury_pools_scores_and_votes_and_judges_that_agree_score_one() {
        // Three judges, two questions, one trial: judge 2 is the odd one out
        // on question 1 and decides the mean there.
        let q1: BTreeMap<u32, Vec<Judgment>> = [(
            0,
            vec![
                j(0, Order::AFirst, [4; 4], [3; 4]),
                j(1, Order::AFirst, [4; 4], [3; 4]),
                j(2, Order::AFirst, [0; 4], [5; 4]),
            ],
        )]
        .into();
        let q2: BTreeMap<u32, Vec<Judgment>> = [(
            0,
            vec![
                j(0, Order::AFirst, [2; 4], [3; 4]),
                j(1, Order::AFirst, [2; 4], [3; 4]),
                j(2, Order::AFirst, [2; 4], [3; 4]),
            ],
        )]
        .into();
        let labels: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let pairs = [PairJudgments { a: 1, b: 2, questions: vec![(10, &q1), (11, &q2)] }];
        let jury = jury(&labels, &pairs).unwrap();
        assert_eq!(jury.items, 2);
        assert_eq!(jury.judges[0].pairs[0].headline, Rates { a_win: 0.5, tie: 0.0, b_win: 0.5 });
        assert_eq!(jury.judges[2].pairs[0].headline.b_win, 1.0);
        // Mean: q1 A 8/3·4 vs B 11/3·4 → B; majority: A.
        assert_eq!(jury.mean.pairs[0].headline.b_win, 1.0);
        assert_eq!(jury.majority.pairs[0].headline, Rates { a_win: 0.5, tie: 0.0, b_win: 0.5 });
        assert!(jury.fleiss_kappa.unwrap() < 1.0);
        // People: B better on both.
        let human: BTreeMap<(i64, i64), f64> = [((1, 10), 1.0), ((2, 10), 2.5), ((1, 11), 0.5), ((2, 11), 3.0)].into();
        let people = people(&labels, &pairs, &human, "Correctness", vec![7]).unwrap();
        assert_eq!(people.rows.len(), 4);
        assert_eq!(people.rows[2].n, 2);
        assert_eq!(people.rows[2].cohen_kappa, None, "every label the same: κ undefined");
        assert_eq!(people.rows[0].n, 2);
        let one = [(0u32, vec![j(0, Order::AFirst, [1; 4], [2; 4])])].into();
        assert!(super::jury(&labels[..1], &[PairJudgments { a: 1, b: 2, questions: vec![(1, &one)] }]).is_none());
    }
}

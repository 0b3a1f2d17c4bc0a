//! The HieraRAG authors' human-judging analysis (seed 004 §2.5 and §4) as
//! their released scripts compute it, read from their own files
//! (`rag_system/human_judging/` of `fensorechase/rag-diverse-benchmarks-
//! synthetic-qa`):
//! - `completed_human/COMPLETED_*.xlsx`: each annotator's workbook, a row
//!   per question–answer pair (`qa_id`, `dimension`, `granularity`,
//!   `category_name`, `needs_category_validation`, `answer_correctness`
//!   0–3, `hallucination_score` 0–2, `question_answerability` 0–3,
//!   `category_validation`: the category the annotator picked);
//! - `annotate_files/shared_questions_list.csv`: the questions every
//!   annotator rated;
//! - `complete_analysis_results.json`: the analysis results, whose
//!   `calibration` holds each split's Coherence Ratio.
//!
//! [`summary`] is `7_human_agreement_anaysis.py` (its
//! `human_annotation_results_summary.json`), [`coherence_agreement`] is
//! `9_plot_cr_human_correlation.py` (`correlation_stat.txt`) and
//! `analyze_metric_correlation` of `8_analyze_system_human_metric_
//! correlation.py` (`human_metric_validation`). Their choices, kept because
//! they move the numbers, each beside the standard reading Assay's own
//! studies use ([`Summary::standard`]):
//! - Fleiss' κ pairs the annotators' rows by position after sorting the
//!   shared questions by id, and counts a missing score as category 0 (the
//!   standard: leave a question out unless every annotator scored it);
//! - the shares (acceptable, no hallucination, answerable) are over the
//!   unique questions (the first annotator's row where both rated one), a
//!   missing score counting as not acceptable (standard: over scored rows);
//! - category agreement counts the annotator's pick as "hierarchical" when
//!   it is a child of the generator's category, over every row that asked
//!   for a pick, both annotators' rows of a shared question counted;
//! - the Coherence Ratio correlation pairs the *two annotators' agreement
//!   with each other* (not with the generator) with the ratio of the
//!   question's split: script 9 maps each label to one split (a parent's
//!   label to its own split, a child's to its parent's; where a label is a
//!   child in two dimensions the later one wins, as Python's dict update
//!   does), script 8 counts a question once for every split whose parent or
//!   children include its label. Two empty picks are not equal (pandas'
//!   NaN), two "Please leave cell blank" are.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agreement::fleiss_kappa;
use crate::metrics::granularity::{point_biserial, PointBiserial};
use crate::Invalid;
pub use types::study::FigureRow;

/// One row of an annotator's workbook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub qa_id: String,
    pub dimension: String,
    pub granularity: String,
    pub category_name: String,
    pub needs_category_validation: bool,
    pub answer_correctness: Option<f64>,
    pub hallucination_score: Option<f64>,
    pub question_answerability: Option<f64>,
    pub category_validation: Option<String>,
    pub question: String,
    /// The research question the row belongs to (`RQ1`…), the generator's
    /// reference answer and the passage it was drawn from, as the
    /// annotator read them (empty where the workbook has no such column).
    #[serde(default)]
    pub rq: String,
    #[serde(default)]
    pub reference_answer: String,
    #[serde(default)]
    pub source_document: String,
}

/// The medium → fine splits script 7 checks "hierarchical" agreement on.
const SCRIPT7_HIERARCHY: &[(&str, &[&str])] = &[
    ("single_fact", &["extractive_span", "entity_extraction"]),
    ("multi_fact_local", &["multi_span_aggregation", "paraphrasing_required"]),
    ("cross_section_synthesis", &["single_hop_inference", "multi_hop_reasoning"]),
    ("comparative_analysis", &["comparative_synthesis", "comparative_synthesis_concepts"]),
    ("short_span_extraction", &["entity_extraction", "phrase_extraction"]),
    ("list_or_enumeration", &["unordered_list", "ordered_sequence"]),
    ("summary_or_explanation", &["condensed_summary", "sentence_extraction"]),
    ("synthesis_or_analysis", &["analytical_synthesis", "explanatory_synthesis"]),
    ("exact_terminology", &["verbatim_terminology", "high_lexical_overlap"]),
    ("partial_overlap", &["moderate_lexical_overlap", "moderate_low_lexical_overlap"]),
    ("synonym_substitution", &["low_lexical_overlap", "synonym_based_rephrase"]),
    ("conceptual_rephrase", &["domain_shift_terminology", "abstraction_level_shift"]),
];

/// Every split of the three dimensions (scripts 8 and 9), in their order:
/// the coarse → medium ones, then the medium → fine ones of script 7.
fn splits_of(dimension: &str) -> Vec<(&'static str, &'static [&'static str])> {
    let coarse: &[(&str, &[&str])] = match dimension {
        "question_complexity" => &[
            ("simple", &["single_fact", "multi_fact_local"]),
            ("complex", &["cross_section_synthesis", "comparative_analysis"]),
        ],
        "question_answertype" => &[
            ("extractive", &["short_span_extraction", "list_or_enumeration"]),
            ("abstractive", &["summary_or_explanation", "synthesis_or_analysis"]),
        ],
        "question_linguisticvariation" => &[
            ("similar_to_document", &["exact_terminology", "partial_overlap"]),
            ("distant_from_document", &["synonym_substitution", "conceptual_rephrase"]),
        ],
        _ => &[],
    };
    let medium = match dimension {
        "question_complexity" => &SCRIPT7_HIERARCHY[0..4],
        "question_answertype" => &SCRIPT7_HIERARCHY[4..8],
        "question_linguisticvariation" => &SCRIPT7_HIERARCHY[8..12],
        _ => &[],
    };
    coarse.iter().chain(medium).copied().collect()
}

const DIMENSIONS: [&str; 3] = ["question_complexity", "question_answertype", "question_linguisticvariation"];

/// A split's Coherence Ratio from the analysis results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitRatio {
    pub dimension: String,
    pub parent: String,
    /// `coarse_to_medium` or `medium_to_fine`.
    pub level: String,
    pub coherence_ratio: f64,
}

/// The answer-quality and category figures of script 7.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub iaa_correctness: Option<f64>,
    pub iaa_hallucination: Option<f64>,
    pub iaa_answerability: Option<f64>,
    pub pct_acceptable_answers: f64,
    pub pct_no_hallucination: f64,
    pub pct_answerable: f64,
    pub category_exact_agreement: f64,
    pub category_hierarchical_agreement: f64,
    pub category_combined_agreement: f64,
    /// Shared questions κ is over; unique questions the shares are over;
    /// picks the category agreement is over.
    pub shared: usize,
    pub questions: usize,
    pub picks: usize,
    /// Exact + hierarchical agreement per dimension (QC, AT, LV) and its picks.
    pub by_dimension: Vec<(String, f64, usize)>,
}

/// The same figures under the standard reading (see the module's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandardSummary {
    pub iaa_correctness: Option<f64>,
    pub iaa_hallucination: Option<f64>,
    pub iaa_answerability: Option<f64>,
    /// Questions every annotator scored, per score.
    pub iaa_items: [usize; 3],
    pub pct_acceptable_answers: f64,
    pub pct_no_hallucination: f64,
    pub pct_answerable: f64,
}

/// Which score of a row.
#[derive(Clone, Copy)]
enum Score {
    Correctness,
    Hallucination,
    Answerability,
}

impl Score {
    fn of(self, a: &Annotation) -> Option<f64> {
        match self {
            Score::Correctness => a.answer_correctness,
            Score::Hallucination => a.hallucination_score,
            Score::Answerability => a.question_answerability,
        }
    }

    fn categories(self) -> usize {
        match self {
            Score::Hallucination => 3,
            _ => 4,
        }
    }
}

fn id_set(ids: &[String]) -> HashSet<&str> {
    ids.iter().map(String::as_str).collect()
}

/// Rows by question id, the first of each id (as a linear `find` would).
fn first_by_id(rows: &[Annotation]) -> HashMap<&str, &Annotation> {
    let mut by_id = HashMap::new();
    for a in rows {
        by_id.entry(a.qa_id.as_str()).or_insert(a);
    }
    by_id
}

/// Each annotator's rows of the shared questions, sorted by id (pandas'
/// `sort_values('qa_id')`, stable).
fn shared_rows<'a>(annotators: &'a [Vec<Annotation>], shared: &[String]) -> Vec<Vec<&'a Annotation>> {
    let shared = id_set(shared);
    annotators
        .iter()
        .map(|rows| {
            let mut v: Vec<&Annotation> = rows.iter().filter(|a| shared.contains(a.qa_id.as_str())).collect();
            v.sort_by(|a, b| a.qa_id.cmp(&b.qa_id));
            v
        })
        .collect()
}

/// Script 7's κ: row i of every annotator's sorted shared rows is one
/// subject; a missing score counts as category 0.
fn kappa_as_published(rows: &[Vec<&Annotation>], score: Score) -> Option<f64> {
    let items = rows.iter().map(|r| r.len()).min()?;
    let table: Vec<Vec<u32>> = (0..items)
        .map(|i| {
            let mut counts = vec![0u32; score.categories()];
            for r in rows {
                let v = score.of(r[i]).map_or(0, |x| x as i64 as usize);
                *counts.get_mut(v)? += 1;
            }
            Some(counts)
        })
        .collect::<Option<_>>()?;
    fleiss_kappa(&table)
}

/// The standard κ: a shared question counts when every annotator scored it.
fn kappa_standard(annotators: &[Vec<Annotation>], shared: &[String], score: Score) -> (Option<f64>, usize) {
    let by_id: Vec<HashMap<&str, &Annotation>> = annotators.iter().map(|rows| first_by_id(rows)).collect();
    let table: Vec<Vec<u32>> = shared
        .iter()
        .filter_map(|id| {
            let mut counts = vec![0u32; score.categories()];
            for rows in &by_id {
                let v = score.of(rows.get(id.as_str())?)?;
                *counts.get_mut(v as usize)? += 1;
            }
            Some(counts)
        })
        .collect();
    (fleiss_kappa(&table), table.len())
}

/// The first row of each question over the annotators in order (pandas'
/// `concat(...).drop_duplicates(subset='qa_id')`).
fn unique_rows(annotators: &[Vec<Annotation>]) -> Vec<&Annotation> {
    let mut seen = std::collections::HashSet::new();
    annotators.iter().flatten().filter(|a| seen.insert(a.qa_id.as_str())).collect()
}

fn pct(rows: &[&Annotation], score: Score, ok: impl Fn(f64) -> bool, skip_missing: bool) -> f64 {
    let scored: Vec<Option<f64>> = rows.iter().map(|a| score.of(a)).filter(|v| !skip_missing || v.is_some()).collect();
    if scored.is_empty() {
        return f64::NAN;
    }
    scored.iter().filter(|v| v.is_some_and(&ok)).count() as f64 / scored.len() as f64 * 100.0
}

/// Script 7's agreement type of a row that asked for a pick.
fn agreement_type(a: &Annotation) -> &'static str {
    let Some(picked) = a.category_validation.as_deref() else {
        return "no_validation";
    };
    if picked == a.category_name {
        return "exact";
    }
    if SCRIPT7_HIERARCHY.iter().any(|(p, children)| *p == a.category_name && children.contains(&picked)) {
        return "hierarchical";
    }
    if SCRIPT7_HIERARCHY.iter().any(|(_, c)| c.contains(&a.category_name.as_str()) && c.contains(&picked)) {
        return "sibling";
    }
    "mismatch"
}

/// Script 7's figures from the annotators' rows (in the order the script
/// concatenates them) and the shared questions.
pub fn summary(annotators: &[Vec<Annotation>], shared: &[String]) -> Summary {
    let rows = shared_rows(annotators, shared);
    let unique = unique_rows(annotators);
    let typed: Vec<(&Annotation, &str)> = annotators
        .iter()
        .flatten()
        .filter(|a| a.needs_category_validation)
        .map(|a| (a, agreement_type(a)))
        .filter(|(_, t)| *t != "no_validation")
        .collect();
    let share = |of: &[&(&Annotation, &str)], t: &str| {
        of.iter().filter(|(_, x)| *x == t).count() as f64 / of.len().max(1) as f64 * 100.0
    };
    let all: Vec<&(&Annotation, &str)> = typed.iter().collect();
    let by_dimension = ["QC", "AT", "LV"]
        .iter()
        .filter_map(|d| {
            let of: Vec<&(&Annotation, &str)> = typed.iter().filter(|(a, _)| a.dimension == *d).collect();
            (!of.is_empty()).then(|| (d.to_string(), share(&of, "exact") + share(&of, "hierarchical"), of.len()))
        })
        .collect();
    let (exact, hierarchical) = (share(&all, "exact"), share(&all, "hierarchical"));
    Summary {
        iaa_correctness: kappa_as_published(&rows, Score::Correctness),
        iaa_hallucination: kappa_as_published(&rows, Score::Hallucination),
        iaa_answerability: kappa_as_published(&rows, Score::Answerability),
        pct_acceptable_answers: pct(&unique, Score::Correctness, |v| v >= 2.0, false),
        pct_no_hallucination: pct(&unique, Score::Hallucination, |v| v == 0.0, false),
        pct_answerable: pct(&unique, Score::Answerability, |v| v >= 2.0, false),
        category_exact_agreement: exact,
        category_hierarchical_agreement: hierarchical,
        category_combined_agreement: exact + hierarchical,
        shared: rows.iter().map(|r| r.len()).min().unwrap_or(0),
        questions: unique.len(),
        picks: typed.len(),
        by_dimension,
    }
}

/// The standard reading of the same data.
pub fn standard(annotators: &[Vec<Annotation>], shared: &[String]) -> StandardSummary {
    let unique = unique_rows(annotators);
    let k =
        [Score::Correctness, Score::Hallucination, Score::Answerability].map(|s| kappa_standard(annotators, shared, s));
    StandardSummary {
        iaa_correctness: k[0].0,
        iaa_hallucination: k[1].0,
        iaa_answerability: k[2].0,
        iaa_items: [k[0].1, k[1].1, k[2].1],
        pct_acceptable_answers: pct(&unique, Score::Correctness, |v| v >= 2.0, true),
        pct_no_hallucination: pct(&unique, Score::Hallucination, |v| v == 0.0, true),
        pct_answerable: pct(&unique, Score::Answerability, |v| v >= 2.0, true),
    }
}

/// One split's row of script 8's table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitAgreement {
    pub split: String,
    pub coherence_ratio: f64,
    /// Share of its questions the two annotators picked alike.
    pub agreed: f64,
    pub n: usize,
}

/// The Coherence Ratio against the annotators' agreement, both ways.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoherenceAgreement {
    /// Script 9 (`correlation_stat.txt`): a point per shared question.
    pub per_question: Option<PointBiserial>,
    /// Script 8 (`human_metric_validation`): a point per question per
    /// split it validates.
    pub per_split: Option<PointBiserial>,
    /// Script 8's table, highest ratio first.
    pub splits: Vec<SplitAgreement>,
    /// The standard reading (Assay's `rho_agreement`): each pick of a fine
    /// or medium category paired with its parent split's ratio, agreement
    /// meaning the pick equals the generator's category.
    pub with_generator: Option<PointBiserial>,
}

/// The two annotators' picks of the shared questions: (generator's
/// category, whether the picks are equal), in the first annotator's order
/// (pandas' inner join on `qa_id`).
fn paired(first: &[Annotation], second: &[Annotation], shared: &[String]) -> Vec<(String, bool)> {
    let (shared, second) = (id_set(shared), first_by_id(second));
    first
        .iter()
        .filter(|a| shared.contains(a.qa_id.as_str()))
        .filter_map(|a| {
            let b = second.get(a.qa_id.as_str())?;
            let agreed = matches!((&a.category_validation, &b.category_validation), (Some(x), Some(y)) if x == y);
            Some((a.category_name.trim().to_string(), agreed))
        })
        .collect()
}

/// Scripts 8 and 9 over the first two annotators, with the splits' ratios.
pub fn coherence_agreement(
    annotators: &[Vec<Annotation>],
    shared: &[String],
    ratios: &[SplitRatio],
) -> CoherenceAgreement {
    let ratio = |dim: &str, parent: &str| {
        ratios.iter().find(|r| r.dimension == dim && r.parent == parent).map(|r| r.coherence_ratio)
    };
    let (first, second) = match annotators {
        [a, b, ..] => (a.as_slice(), b.as_slice()),
        _ => (&[][..], &[][..]),
    };
    let pairs = paired(first, second, shared);
    // Script 9: every label to one split, later entries overwriting.
    let mut split_of: HashMap<&str, (&str, &str)> = HashMap::new();
    for dim in DIMENSIONS {
        for (parent, children) in splits_of(dim) {
            split_of.insert(parent, (dim, parent));
            for c in children {
                split_of.insert(c, (dim, parent));
            }
        }
    }
    let (flags, values): (Vec<bool>, Vec<f64>) = pairs
        .iter()
        .filter_map(|(label, agreed)| {
            let (dim, parent) = split_of.get(label.as_str())?;
            Some((*agreed, ratio(dim, parent)?))
        })
        .unzip();
    let per_question = point_biserial(&flags, &values);
    // Script 8: each split (in the results' order) takes every question
    // whose label is its parent or one of its children.
    let mut points: Vec<(String, f64, bool)> = Vec::new();
    for r in ratios {
        let children: Vec<&str> =
            splits_of(&r.dimension).into_iter().find(|(p, _)| *p == r.parent).map_or(vec![], |(_, c)| c.to_vec());
        for (label, agreed) in &pairs {
            if *label == r.parent || children.contains(&label.as_str()) {
                points.push((r.parent.clone(), r.coherence_ratio, *agreed));
            }
        }
    }
    let per_split = point_biserial(
        &points.iter().map(|p| p.2).collect::<Vec<_>>(),
        &points.iter().map(|p| p.1).collect::<Vec<_>>(),
    );
    let mut table: BTreeMap<&str, (f64, usize, usize)> = BTreeMap::new();
    for (split, cr, agreed) in &points {
        let e = table.entry(split.as_str()).or_insert((*cr, 0, 0));
        e.1 += usize::from(*agreed);
        e.2 += 1;
    }
    let mut splits: Vec<SplitAgreement> = table
        .into_iter()
        .map(|(s, (cr, agreed, n))| SplitAgreement {
            split: s.to_string(),
            coherence_ratio: cr,
            agreed: agreed as f64 / n as f64,
            n,
        })
        .collect();
    splits.sort_by(|a, b| b.coherence_ratio.total_cmp(&a.coherence_ratio));
    // The standard reading: agreement with the generator, per pick.
    let parent_ratio = |label: &str| {
        DIMENSIONS.iter().find_map(|dim| {
            splits_of(dim).into_iter().find(|(_, c)| c.contains(&label)).and_then(|(p, _)| ratio(dim, p))
        })
    };
    let (flags, values): (Vec<bool>, Vec<f64>) = annotators
        .iter()
        .flatten()
        .filter(|a| a.needs_category_validation)
        .filter_map(|a| {
            let picked = a.category_validation.as_deref()?;
            Some((picked == a.category_name, parent_ratio(&a.category_name)?))
        })
        .unzip();
    CoherenceAgreement { per_question, per_split, splits, with_generator: point_biserial(&flags, &values) }
}

/// The splits' Coherence Ratios from `complete_analysis_results.json`.
pub fn ratios_from(results: &serde_json::Value) -> Result<Vec<SplitRatio>, Invalid> {
    let calibration = results.get("calibration").and_then(|c| c.as_object()).ok_or_else(|| {
        Invalid::from("the analysis results have no \"calibration\" object (the splits' Coherence Ratios)")
    })?;
    let mut out = Vec::new();
    for (dim, splits) in calibration {
        for (parent, v) in splits.as_object().into_iter().flatten() {
            let cr = v.get("coherence_ratio").and_then(|x| x.as_f64()).ok_or_else(|| {
                Invalid::from(format!("calibration.{dim}.{parent} has no numeric \"coherence_ratio\""))
            })?;
            let level = v.get("level").and_then(|x| x.as_str()).unwrap_or("").to_string();
            out.push(SplitRatio { dimension: dim.clone(), parent: parent.clone(), level, coherence_ratio: cr });
        }
    }
    Ok(out)
}

/// A cell as pandas reads it: text, a number, a flag, or nothing (an
/// empty cell or an empty string).
fn cell_text(c: &calamine::Data) -> Option<String> {
    use calamine::Data;
    match c {
        Data::Empty => None,
        Data::String(s) if s.is_empty() => None,
        Data::String(s) => Some(s.clone()),
        Data::Float(f) => Some(f.to_string()),
        Data::Int(i) => Some(i.to_string()),
        Data::Bool(b) => Some(if *b { "True" } else { "False" }.into()),
        other => Some(other.to_string()),
    }
}

fn cell_number(c: &calamine::Data, what: &str, row: usize) -> Result<Option<f64>, Invalid> {
    use calamine::Data;
    match c {
        Data::Empty => Ok(None),
        Data::String(s) if s.trim().is_empty() => Ok(None),
        Data::Float(f) => Ok(Some(*f)),
        Data::Int(i) => Ok(Some(*i as f64)),
        Data::String(s) => {
            s.trim().parse().map(Some).map_err(|_| Invalid::from(format!("row {row}: {what} is \"{s}\", not a number")))
        }
        other => Err(Invalid::from(format!("row {row}: {what} is {other:?}, not a number"))),
    }
}

/// An annotator's workbook (its first sheet, a header row naming the
/// columns above).
pub fn read_workbook(path: &Path) -> Result<Vec<Annotation>, Invalid> {
    let bytes = std::fs::read(path).map_err(|e| Invalid::from(format!("{}: {e}", path.display())))?;
    read_workbook_bytes(&path.display().to_string(), &bytes)
}

/// [`read_workbook`] from the workbook's bytes; `name` names it in errors.
pub fn read_workbook_bytes(name: &str, bytes: &[u8]) -> Result<Vec<Annotation>, Invalid> {
    use calamine::Reader;
    let mut book = calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes))
        .map_err(|e| Invalid::from(format!("{name}: {e}")))?;
    let sheet = book
        .worksheet_range_at(0)
        .ok_or_else(|| Invalid::from(format!("{name} has no sheet")))?
        .map_err(|e| Invalid::from(format!("{name}: {e}")))?;
    let mut rows = sheet.rows();
    let header: Vec<String> =
        rows.next().map(|r| r.iter().map(|c| cell_text(c).unwrap_or_default()).collect()).unwrap_or_default();
    let col = |n: &str| {
        header.iter().position(|h| h.trim() == n).ok_or_else(|| Invalid::from(format!("{name} has no \"{n}\" column")))
    };
    let [id, rq, dim, gran, cat, needs, correct, halluc, answerable, picked, question] = [
        "qa_id",
        "rq",
        "dimension",
        "granularity",
        "category_name",
        "needs_category_validation",
        "answer_correctness",
        "hallucination_score",
        "question_answerability",
        "category_validation",
        "question",
    ]
    .map(col);
    let (id, dim, gran, cat, needs) = (id?, dim?, gran?, cat?, needs?);
    let (correct, halluc, answerable, picked, question) = (correct?, halluc?, answerable?, picked?, question?);
    // Shown to raters of an imported study; absent columns leave them empty.
    let (rq, answer, document) = (rq.ok(), col("reference_answer").ok(), col("source_document").ok());
    let mut out = Vec::new();
    for (i, r) in rows.enumerate() {
        let row = i + 2;
        let get = |c: usize| r.get(c).unwrap_or(&calamine::Data::Empty);
        let text = |c: Option<usize>| c.and_then(|c| cell_text(get(c))).unwrap_or_default();
        let Some(qa_id) = cell_text(get(id)) else { continue };
        let needs = match get(needs) {
            calamine::Data::Bool(b) => *b,
            other => matches!(cell_text(other).as_deref(), Some("True" | "TRUE" | "true" | "1")),
        };
        out.push(Annotation {
            qa_id: qa_id.trim().to_string(),
            dimension: cell_text(get(dim)).unwrap_or_default(),
            granularity: cell_text(get(gran)).unwrap_or_default(),
            category_name: cell_text(get(cat)).unwrap_or_default(),
            needs_category_validation: needs,
            answer_correctness: cell_number(get(correct), "answer_correctness", row)?,
            hallucination_score: cell_number(get(halluc), "hallucination_score", row)?,
            question_answerability: cell_number(get(answerable), "question_answerability", row)?,
            category_validation: cell_text(get(picked)),
            question: cell_text(get(question)).unwrap_or_default(),
            rq: text(rq),
            reference_answer: text(answer),
            source_document: text(document),
        });
    }
    if out.is_empty() {
        return Err(Invalid::from(format!("{name} has no annotated rows")));
    }
    Ok(out)
}

/// The shared questions' ids (the CSV's `qa_id` column, trimmed).
pub fn read_shared(path: &Path) -> Result<Vec<String>, Invalid> {
    let bytes = std::fs::read(path).map_err(|e| Invalid::from(format!("{}: {e}", path.display())))?;
    read_shared_bytes(&path.display().to_string(), &bytes)
}

/// [`read_shared`] from the file's bytes.
pub fn read_shared_bytes(name: &str, bytes: &[u8]) -> Result<Vec<String>, Invalid> {
    let mut r = csv::Reader::from_reader(bytes);
    let headers = r.headers().map_err(|e| Invalid::from(format!("{name}: {e}")))?.clone();
    let col = headers
        .iter()
        .position(|h| h.trim() == "qa_id")
        .ok_or_else(|| Invalid::from(format!("{name} has no \"qa_id\" column")))?;
    r.records()
        .map(|rec| {
            rec.map(|rec| rec.get(col).unwrap_or("").trim().to_string())
                .map_err(|e| Invalid::from(format!("{name}: {e}")))
        })
        .collect()
}

/// The authors' own outputs, where the folder holds them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Published {
    /// `human_annotation_results_summary.json`, key → value.
    pub summary: Vec<(String, f64)>,
    /// `correlation_stat.txt`'s r and p (3 decimals).
    pub correlation_stat: Option<(f64, f64)>,
    /// `complete_analysis_results.json`'s `human_metric_validation` r and p.
    pub metric_validation: Option<(f64, f64)>,
}

/// What a `human_judging` folder holds, read: every figure is computed
/// from this alone (an imported study keeps it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// The workbooks read, in order (sorted by name, as the scripts' glob).
    pub workbooks: Vec<String>,
    pub annotations: Vec<Vec<Annotation>>,
    pub shared: Vec<String>,
    pub ratios: Vec<SplitRatio>,
    pub published: Published,
}

/// The files of a `human_judging` folder Assay reads, by base name.
pub const SHARED_FILE: &str = "shared_questions_list.csv";
pub const RESULTS_FILE: &str = "complete_analysis_results.json";
pub const SUMMARY_FILE: &str = "human_annotation_results_summary.json";
pub const CORRELATION_FILE: &str = "correlation_stat.txt";

/// Whether a base name is one of the files [`Inputs::from_files`] reads.
pub fn is_input(base: &str) -> bool {
    (base.starts_with("COMPLETED_") && base.ends_with(".xlsx"))
        || [SHARED_FILE, RESULTS_FILE, SUMMARY_FILE, CORRELATION_FILE].contains(&base)
}

/// At most this many bytes of a folder's files in all (the authors' folder
/// is 0.45 MB).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

impl Inputs {
    /// Reads a `human_judging` folder laid out as the authors' repository
    /// (see the module's text).
    pub fn from_folder(folder: &Path) -> Result<Inputs, Invalid> {
        let dir = folder.join("completed_human");
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            Invalid::from(format!("{}: {e} (expected the annotators' completed workbooks there)", dir.display()))
        })?;
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            let Some(base) = path.file_name().and_then(|n| n.to_str()).filter(|b| is_input(b)) else { continue };
            let bytes = std::fs::read(&path).map_err(|e| Invalid::from(format!("{}: {e}", path.display())))?;
            files.push((base.to_string(), bytes));
        }
        for rel in
            [format!("annotate_files/{SHARED_FILE}"), RESULTS_FILE.into(), SUMMARY_FILE.into(), CORRELATION_FILE.into()]
        {
            if let Ok(bytes) = std::fs::read(folder.join(&rel)) {
                files.push((rel.rsplit('/').next().unwrap_or(&rel).to_string(), bytes));
            }
        }
        Inputs::from_files(&files, &dir.display().to_string())
    }

    /// Reads the folder's files given by base name (uploaded, or from a
    /// zip: [`files_of_zip`]); `place` names where the workbooks were
    /// looked for, in errors. Needs two `COMPLETED_*.xlsx` workbooks and
    /// the shared questions' list; the analysis results (the splits'
    /// Coherence Ratios) and the authors' outputs are read where given.
    pub fn from_files(files: &[(String, Vec<u8>)], place: &str) -> Result<Inputs, Invalid> {
        let base = |n: &str| n.rsplit(['/', '\\']).next().unwrap_or(n).to_string();
        let mut books: Vec<(String, &[u8])> = files
            .iter()
            .map(|(n, b)| (base(n), b.as_slice()))
            .filter(|(n, _)| n.starts_with("COMPLETED_") && n.ends_with(".xlsx"))
            .collect();
        books.sort_by(|a, b| a.0.cmp(&b.0));
        if books.len() < 2 {
            return Err(Invalid::from(format!(
                "{place} holds {} COMPLETED_*.xlsx workbook(s); agreement needs two annotators",
                books.len()
            )));
        }
        if let Some(w) = books.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Invalid::from(format!("{} is given twice; give each annotator's workbook once", w[0].0)));
        }
        let file = |want: &str| files.iter().find(|(n, _)| base(n) == want).map(|(_, b)| b.as_slice());
        let annotations = books.iter().map(|(n, b)| read_workbook_bytes(n, b)).collect::<Result<Vec<_>, _>>()?;
        let shared = match file(SHARED_FILE) {
            Some(b) => read_shared_bytes(SHARED_FILE, b)?,
            None => {
                return Err(Invalid::from(format!(
                    "{SHARED_FILE} is missing (annotate_files/ of the folder): the questions both annotators rated"
                )))
            }
        };
        let text = |want: &str| file(want).map(|b| String::from_utf8_lossy(b).into_owned());
        let results: Option<serde_json::Value> = match text(RESULTS_FILE) {
            Some(t) => Some(serde_json::from_str(&t).map_err(|e| Invalid::from(format!("{RESULTS_FILE}: {e}")))?),
            None => None,
        };
        let ratios = match &results {
            Some(v) => ratios_from(v)?,
            None => vec![],
        };
        let mut published = Published::default();
        if let Some(serde_json::Value::Object(m)) =
            text(SUMMARY_FILE).and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        {
            published.summary = m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()?))).collect();
        }
        if let Some(t) = text(CORRELATION_FILE) {
            let num = |key: &str| {
                t.split(',').find_map(|part| part.trim().strip_prefix(key).and_then(|v| v.trim().parse::<f64>().ok()))
            };
            published.correlation_stat = num("r=").zip(num("p="));
        }
        if let Some(h) = results.as_ref().and_then(|v| v.get("human_metric_validation")) {
            let f = |k: &str| h.get(k).and_then(|x| x.as_f64());
            published.metric_validation = f("correlation_r").zip(f("correlation_p"));
        }
        Ok(Inputs { workbooks: books.into_iter().map(|(n, _)| n).collect(), annotations, shared, ratios, published })
    }

    /// Every figure the inputs allow; `folder` says where they came from.
    pub fn analyse(self, folder: PathBuf) -> Analysis {
        Analysis {
            folder,
            workbooks: self.workbooks,
            summary: summary(&self.annotations, &self.shared),
            standard: standard(&self.annotations, &self.shared),
            coherence: coherence_agreement(&self.annotations, &self.shared, &self.ratios),
            annotations: self.annotations,
            shared: self.shared,
            ratios: self.ratios,
            published: self.published,
        }
    }
}

/// The folder's files from a zip of it (members anywhere in it, by base
/// name; other members skipped), read up to [`MAX_INPUT_BYTES`] in all
/// whatever their headers claim.
pub fn files_of_zip(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
    use std::io::Read;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| Invalid::from(format!("not a readable zip archive: {e}")))?;
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let mut total = 0u64;
    for i in 0..archive.len() {
        let mut member = archive.by_index(i).map_err(|e| Invalid::from(format!("member {i} of the zip: {e}")))?;
        let path = member.name().replace('\\', "/");
        let base = path.rsplit('/').next().unwrap_or(&path).to_string();
        if member.is_dir() || !is_input(&base) || path.contains("__MACOSX") {
            continue;
        }
        if out.iter().any(|(n, _)| *n == base) {
            return Err(Invalid::from(format!("the zip holds {base} twice; zip one human_judging folder")));
        }
        let mut data = Vec::new();
        (&mut member)
            .take(MAX_INPUT_BYTES - total + 1)
            .read_to_end(&mut data)
            .map_err(|e| Invalid::from(format!("{path} in the zip: {e}")))?;
        total += data.len() as u64;
        if total > MAX_INPUT_BYTES {
            return Err(Invalid::from(format!(
                "the zip's files unpack to more than {} MB; the authors' folder is under 1 MB",
                MAX_INPUT_BYTES >> 20
            )));
        }
        out.push((base, data));
    }
    Ok(out)
}

/// Everything read from a `human_judging` folder and computed from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub folder: PathBuf,
    /// The workbooks read, in order.
    pub workbooks: Vec<String>,
    pub annotations: Vec<Vec<Annotation>>,
    pub shared: Vec<String>,
    pub ratios: Vec<SplitRatio>,
    pub summary: Summary,
    pub standard: StandardSummary,
    pub coherence: CoherenceAgreement,
    pub published: Published,
}

/// Reads a `human_judging` folder laid out as the authors' repository
/// (see the module's text) and computes every figure its files allow.
pub fn analyse(folder: &Path) -> Result<Analysis, Invalid> {
    Ok(Inputs::from_folder(folder)?.analyse(folder.to_path_buf()))
}

impl Analysis {
    /// Each figure: its name, Assay's value as published, the authors'
    /// value where their outputs are in the folder, the standard reading
    /// where it differs, and where the figure comes from.
    pub fn rows(&self) -> Vec<FigureRow> {
        let s = &self.summary;
        let st = &self.standard;
        let theirs = |k: &str| self.published.summary.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        let row = |name: &str, ours: Option<f64>, authors: Option<f64>, standard: Option<f64>, source: &str| {
            FigureRow { figure: name.to_string(), as_published: ours, authors, standard, source: source.to_string() }
        };
        let s7 = "7_human_agreement_anaysis.py → human_annotation_results_summary.json";
        let script7 = [
            ("iaa_correctness", s.iaa_correctness, st.iaa_correctness),
            ("iaa_hallucination", s.iaa_hallucination, st.iaa_hallucination),
            ("iaa_answerability", s.iaa_answerability, st.iaa_answerability),
            ("pct_acceptable_answers", Some(s.pct_acceptable_answers), Some(st.pct_acceptable_answers)),
            ("pct_no_hallucination", Some(s.pct_no_hallucination), Some(st.pct_no_hallucination)),
            ("pct_answerable", Some(s.pct_answerable), Some(st.pct_answerable)),
            ("category_exact_agreement", Some(s.category_exact_agreement), None),
            ("category_hierarchical_agreement", Some(s.category_hierarchical_agreement), None),
            ("category_combined_agreement", Some(s.category_combined_agreement), None),
        ];
        let mut rows: Vec<FigureRow> =
            script7.into_iter().map(|(name, ours, standard)| row(name, ours, theirs(name), standard, s7)).collect();
        let c = &self.coherence;
        let standard = c.with_generator;
        for (points, ours, authors, source) in [
            (
                "per question",
                c.per_question,
                self.published.correlation_stat,
                "9_plot_cr_human_correlation.py → correlation_stat.txt (3 decimals)",
            ),
            (
                "per split",
                c.per_split,
                self.published.metric_validation,
                "8_analyze_system_human_metric_correlation.py → complete_analysis_results.json human_metric_validation",
            ),
        ] {
            let name = |stat: &str| format!("coherence_vs_agreement {stat} ({points})");
            rows.push(row(&name("r"), ours.map(|p| p.r), authors.map(|x| x.0), standard.map(|p| p.r), source));
            rows.push(row(&name("p"), ours.map(|p| p.p), authors.map(|x| x.1), standard.map(|p| p.p), source));
        }
        rows
    }
}

/// The annotators' pick that means "no pick" (the workbooks' template text).
const NO_PICK: &str = "Please leave cell blank";

/// The dimension code of the workbooks (`QC`) to the scripts' name.
fn long_name(code: &str) -> Option<&'static str> {
    match code {
        "QC" => Some("question_complexity"),
        "AT" => Some("question_answertype"),
        "LV" => Some("question_linguisticvariation"),
        _ => None,
    }
}

/// Every category path of a dimension in the authors' hierarchy (the
/// scripts' splits): `QC/simple`, `QC/simple/single_fact`,
/// `QC/simple/single_fact/extractive_span`, …, coarse to fine.
pub fn category_paths(code: &str) -> Vec<String> {
    let Some(dim) = long_name(code) else { return vec![] };
    let splits = splits_of(dim);
    let mut out = Vec::new();
    for (coarse, mediums) in &splits[..2.min(splits.len())] {
        out.push(format!("{code}/{coarse}"));
        for m in *mediums {
            out.push(format!("{code}/{coarse}/{m}"));
            if let Some((_, fines)) = splits.iter().find(|(p, _)| p == m) {
                out.extend(fines.iter().map(|f| format!("{code}/{coarse}/{m}/{f}")));
            }
        }
    }
    out
}

/// A question of the imported study: the row the first annotator who
/// rated it wrote, its category path in the authors' hierarchy, and the
/// category paths a pick may name.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyItem {
    pub qa_id: String,
    pub question: String,
    pub answer: String,
    pub context: String,
    /// `RQ1`… (the study's "source").
    pub rq: String,
    pub category: Option<String>,
    pub choices: Vec<String>,
}

/// One annotator's scores of one question: correctness 0–3,
/// hallucination 0–2, answerability 0–3 and the index of the category
/// picked among the item's choices (each `None` where the cell is empty).
#[derive(Debug, Clone, PartialEq)]
pub struct StudyRating {
    pub annotator: usize,
    pub item: usize,
    pub scores: [Option<u8>; 4],
}

/// The workbooks as an answer-validation study (Assay's own kind: the same
/// three scales and a category pick): a question per `qa_id`, an annotator
/// per workbook. What does not fit is counted, never dropped silently.
#[derive(Debug, Clone, PartialEq)]
pub struct AsStudy {
    pub items: Vec<StudyItem>,
    pub ratings: Vec<StudyRating>,
    /// Rows repeating a question the same annotator already rated (the
    /// first row counts, as the scripts' lookups by id take it).
    pub repeated_rows: usize,
    /// Picks naming a category outside the question's dimension (added to
    /// its choices) or outside the hierarchy (kept by name).
    pub picks_elsewhere: usize,
    pub picks_unknown: usize,
}

fn path_in(paths: &[String], name: &str) -> Option<String> {
    paths.iter().find(|p| p.rsplit('/').next() == Some(name)).cloned()
}

impl Inputs {
    /// The annotations as an Assay study; a score off its scale refuses
    /// the import, naming the workbook, the question and the value.
    pub fn as_study(&self) -> Result<AsStudy, Invalid> {
        let all: Vec<String> = ["QC", "AT", "LV"].iter().flat_map(|c| category_paths(c)).collect();
        let mut out =
            AsStudy { items: vec![], ratings: vec![], repeated_rows: 0, picks_elsewhere: 0, picks_unknown: 0 };
        let mut index: HashMap<String, usize> = HashMap::new();
        for (annotator, rows) in self.annotations.iter().enumerate() {
            let mut seen: HashSet<&str> = HashSet::new();
            for a in rows {
                if !seen.insert(a.qa_id.as_str()) {
                    out.repeated_rows += 1;
                    continue;
                }
                let item = *index.entry(a.qa_id.clone()).or_insert_with(|| {
                    let choices = category_paths(&a.dimension);
                    out.items.push(StudyItem {
                        qa_id: a.qa_id.clone(),
                        question: a.question.clone(),
                        answer: a.reference_answer.clone(),
                        context: a.source_document.clone(),
                        rq: if a.rq.is_empty() { "imported".into() } else { a.rq.clone() },
                        category: path_in(&choices, &a.category_name),
                        choices,
                    });
                    out.items.len() - 1
                });
                let book = &self.workbooks[annotator];
                let point = |v: Option<f64>, what: &str, max: u8| -> Result<Option<u8>, Invalid> {
                    match v {
                        None => Ok(None),
                        Some(x) if x.fract() == 0.0 && (0.0..=max as f64).contains(&x) => Ok(Some(x as u8)),
                        Some(x) => Err(Invalid::from(format!(
                            "{book}, question {}: {what} is {x}, not a point of its 0–{max} scale",
                            a.qa_id
                        ))),
                    }
                };
                let pick = match a.category_validation.as_deref().map(str::trim) {
                    Some(p) if a.needs_category_validation && !p.is_empty() && p != NO_PICK => {
                        let choices = &mut out.items[item].choices;
                        let path = match path_in(choices, p) {
                            Some(path) => path,
                            None => {
                                let path = match path_in(&all, p) {
                                    Some(path) => {
                                        out.picks_elsewhere += 1;
                                        path
                                    }
                                    None => {
                                        out.picks_unknown += 1;
                                        format!("{}/{p}", a.dimension)
                                    }
                                };
                                choices.push(path.clone());
                                path
                            }
                        };
                        let at = choices.iter().position(|c| *c == path).unwrap_or_default();
                        Some(u8::try_from(at).map_err(|_| Invalid::from("more than 255 category choices"))?)
                    }
                    _ => None,
                };
                out.ratings.push(StudyRating {
                    annotator,
                    item,
                    scores: [
                        point(a.answer_correctness, "answer_correctness", 3)?,
                        point(a.hallucination_score, "hallucination_score", 2)?,
                        point(a.question_answerability, "question_answerability", 3)?,
                        pick,
                    ],
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(id: &str, cat: &str, picked: Option<&str>, c: Option<f64>) -> Annotation {
        Annotation {
            qa_id: id.into(),
            dimension: "QC".into(),
            granularity: "medium".into(),
            category_name: cat.into(),
            needs_category_validation: picked.is_some(),
            answer_correctness: c,
            hallucination_score: Some(0.0),
            question_answerability: Some(3.0),
            category_validation: picked.map(String::from),
            question: String::new(),
            rq: String::new(),
            reference_answer: String::new(),
            source_document: String::new(),
        }
    }

    #[test]
    fn a_missing_score_is_category_zero_as_published_and_left_out_as_standard() {
        // Two annotators, three shared questions; the first left one score out.
        let a = vec![ann("q1", "x", None, Some(3.0)), ann("q2", "x", None, None), ann("q3", "x", None, Some(2.0))];
        let b = vec![ann("q1", "x", None, Some(3.0)), ann("q2", "x", None, Some(0.0)), ann("q3", "x", None, Some(2.0))];
        let shared = vec!["q1".to_string(), "q2".into(), "q3".into()];
        let s = summary(&[a.clone(), b.clone()], &shared);
        // As published: (0,0) counts as agreement, so κ = 1.
        assert_eq!(s.iaa_correctness, Some(1.0));
        // 2 of 3 unique rows ≥ 2 (the missing one counts as not acceptable).
        assert!((s.pct_acceptable_answers - 200.0 / 3.0).abs() < 1e-12);
        let st = standard(&[a, b], &shared);
        assert_eq!(st.iaa_items[0], 2);
        assert_eq!(st.pct_acceptable_answers, 100.0);
    }

    #[test]
    fn agreement_types_follow_script_7() {
        assert_eq!(agreement_type(&ann("q", "single_fact", Some("single_fact"), None)), "exact");
        assert_eq!(agreement_type(&ann("q", "single_fact", Some("entity_extraction"), None)), "hierarchical");
        assert_eq!(agreement_type(&ann("q", "extractive_span", Some("entity_extraction"), None)), "sibling");
        assert_eq!(agreement_type(&ann("q", "simple", Some("single_fact"), None)), "mismatch");
        assert_eq!(agreement_type(&ann("q", "simple", None, None)), "no_validation");
    }

    #[test]
    fn script_9_maps_a_label_that_is_a_child_twice_to_the_later_split() {
        // entity_extraction is a child of QC's single_fact and of AT's
        // short_span_extraction; Python's dict keeps the later (AT).
        let ratios = vec![
            SplitRatio {
                dimension: "question_complexity".into(),
                parent: "single_fact".into(),
                level: String::new(),
                coherence_ratio: 1.0,
            },
            SplitRatio {
                dimension: "question_answertype".into(),
                parent: "short_span_extraction".into(),
                level: String::new(),
                coherence_ratio: 5.0,
            },
            SplitRatio {
                dimension: "question_complexity".into(),
                parent: "simple".into(),
                level: String::new(),
                coherence_ratio: 2.0,
            },
        ];
        let rows = |picks: [&str; 4]| {
            ["q1", "q2", "q3", "q4"]
                .iter()
                .zip(["entity_extraction", "single_fact", "simple", "entity_extraction"])
                .zip(picks)
                .map(|((id, cat), p)| ann(id, cat, Some(p), Some(3.0)))
                .collect::<Vec<_>>()
        };
        let a = rows(["a", "b", "c", "d"]);
        let b = rows(["a", "x", "c", "y"]);
        let shared: Vec<String> = ["q1", "q2", "q3", "q4"].iter().map(|s| s.to_string()).collect();
        let c = coherence_agreement(&[a, b], &shared, &ratios);
        // Points: (agreed, 5.0), (no, 1.0), (agreed, 2.0), (no, 5.0).
        let want = point_biserial(&[true, false, true, false], &[5.0, 1.0, 2.0, 5.0]).unwrap();
        assert_eq!(c.per_question, Some(want));
        // Script 8: single_fact takes q2 and both entity_extraction rows,
        // short_span_extraction both entity_extraction rows, simple q3 and q2.
        let n: usize = c.splits.iter().map(|s| s.n).sum();
        assert_eq!(n, 3 + 2 + 2);
    }
}

//! Questions controlled along hierarchical categories (seed 004 §2.1–2.2,
//! DataMorgana-style): three dimensions — Question Complexity (QC), Answer
//! Type (AT), Linguistic Variation (LV) — each with 2 coarse, 4 medium and 8
//! fine categories, every fine category inside one medium and every medium
//! inside one coarse. The default hierarchy (`engine/data/hierarchy.json`)
//! uses the seed's category names where it gives them and completes the
//! tree; a project may bring its own in the same layout.
//!
//! Each question: a chunk drawn at random (seeded), a category at one
//! granularity level, a user expertise (novice or expert, balanced 50/50
//! over the set); the LLM writes the question **and a reference answer**.
//! An optional adherence check asks the LLM whether the pair fits its
//! category and drops misfits. Also seed 004's RQ3 factorial design: LV
//! (similar/distant) × QC (simple/complex), the same count per cell.
//!
//! Offline: templates per coarse category, filled from the chunk's best
//! sentence and its most connected entity, with that sentence (or two) as
//! the reference answer; the offline adherence check is a transparent
//! lexical rule for LV (a "similar" question shares at least half its
//! content words with the passage, a "distant" one less than half) and
//! accepts the other dimensions.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::graph::summarise::extractive;
use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::{delimited, prompt_hash};
use crate::llm::{CallContext, ChatRequest, Gateway, Message};
use crate::text::words;

pub const PURPOSE: &str = "question_hierarchical";
pub const CHECK_PURPOSE: &str = "adherence_check";
pub const PROMPT: &str = include_str!("../../prompts/question_hierarchical.txt");
pub const CHECK_PROMPT: &str = include_str!("../../prompts/adherence_check.txt");
const DEFAULT: &str = include_str!("../../data/hierarchy.json");

/// Categories per level: coarse, medium, fine.
pub const LEVELS: [usize; 3] = types::defaults::LEVELS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    pub name: String,
    pub definition: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Category>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dimension {
    pub name: String,
    pub description: String,
    pub categories: Vec<Category>,
}

/// Dimension code (`QC`, `AT`, `LV`) → dimension.
pub type Hierarchy = BTreeMap<String, Dimension>;

/// The shipped hierarchy (a copy to change).
pub fn default_hierarchy() -> Hierarchy {
    shipped().clone()
}

/// The shipped hierarchy, parsed once.
pub fn shipped() -> &'static Hierarchy {
    static SHIPPED: std::sync::OnceLock<Hierarchy> = std::sync::OnceLock::new();
    SHIPPED.get_or_init(|| serde_json::from_str(DEFAULT).expect("the shipped hierarchy parses"))
}

/// Whether a dimension has coarse categories only (seed 004's Question
/// Phrasing: 4 categories, no finer levels).
pub fn is_flat(d: &Dimension) -> bool {
    d.categories.iter().all(|c| c.children.is_empty())
}

/// Checks the shape: every dimension has 2 coarse categories, each with 2
/// children, each with 2 children (2, 4, 8) — or, a flat dimension, 2 to 8
/// coarse categories and no finer levels; names are unique within a
/// dimension and no definition is empty.
pub fn validate(h: &Hierarchy) -> Result<(), crate::Invalid> {
    if h.is_empty() {
        return Err(crate::Invalid::from("the hierarchy has no dimensions"));
    }
    for (code, d) in h {
        let mut names = HashSet::new();
        if is_flat(d) {
            if !(2..=8).contains(&d.categories.len()) {
                return Err(crate::Invalid::from(format!(
                    "{code}: a dimension without sub-categories has 2 to 8 categories, not {}",
                    d.categories.len()
                )));
            }
            for c in &d.categories {
                if c.definition.trim().is_empty() {
                    return Err(crate::Invalid::from(format!("{code}/{}: the definition is empty", c.name)));
                }
                if !names.insert(c.name.clone()) {
                    return Err(crate::Invalid::from(format!(
                        "{code}: the category name \"{}\" is used twice",
                        c.name
                    )));
                }
            }
            continue;
        }
        for (level, want) in LEVELS.iter().enumerate() {
            let cats = at_level(d, level);
            if cats.len() != *want {
                return Err(crate::Invalid::from(format!(
                    "{code}: level {} has {} categories, not {want}",
                    level + 1,
                    cats.len()
                )));
            }
            for (path, c) in cats {
                if c.definition.trim().is_empty() {
                    return Err(crate::Invalid::from(format!("{code}/{path}: the definition is empty")));
                }
                if !names.insert(c.name.clone()) {
                    return Err(crate::Invalid::from(format!(
                        "{code}: the category name \"{}\" is used twice",
                        c.name
                    )));
                }
                if level < 2 && c.children.len() != 2 {
                    return Err(crate::Invalid::from(format!(
                        "{code}/{path} has {} child categories, not 2",
                        c.children.len()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The categories at depth `level` (0 coarse, 1 medium, 2 fine) with their
/// paths below the dimension (`simple/factual_lookup`).
pub fn at_level(d: &Dimension, level: usize) -> Vec<(String, &Category)> {
    let mut out: Vec<(String, &Category)> = d.categories.iter().map(|c| (c.name.clone(), c)).collect();
    for _ in 0..level {
        out = out
            .into_iter()
            .flat_map(|(path, c)| c.children.iter().map(move |k| (format!("{path}/{}", k.name), k)))
            .collect();
    }
    out
}

/// A category path's definitions, from the coarsest down.
fn lineage(d: &Dimension, path: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut level: &[Category] = &d.categories;
    for name in path.split('/') {
        let Some(c) = level.iter().find(|c| c.name == name) else { break };
        out.push((c.name.clone(), c.definition.clone()));
        level = &c.children;
    }
    out
}

/// The hierarchical questions' settings: the request, as the form, the
/// CLI and a manifest's `[[questions]]` give it.
pub type HierarchicalSettings = types::requests::HierarchicalQuestionsRequest;

/// One planned question: its categories (one, or two for a factorial cell,
/// as `DIM/path`), the expertise, and the chunk it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub categories: Vec<String>,
    pub expertise: String,
    pub chunk_id: i64,
}

/// The set's questions, seeded: per dimension, level and category
/// `per_category` questions (a flat dimension at the coarse level only,
/// when level 2 is asked for), then the factorial cells; chunks drawn
/// uniformly; expertise novice for a random half, expert for the rest.
pub fn plan(h: &Hierarchy, s: &HierarchicalSettings, chunk_ids: &[i64]) -> Result<Vec<Planned>, crate::Invalid> {
    validate(h)?;
    if chunk_ids.is_empty() {
        return Err(crate::Invalid::from("the project has no chunks yet: add documents to its corpus first"));
    }
    let mut cells: Vec<Vec<String>> = Vec::new();
    for code in &s.dimensions {
        let d = h.get(code).ok_or_else(|| {
            format!(
                "unknown dimension \"{code}\" (the hierarchy has {})",
                h.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })?;
        if is_flat(d) && !s.levels.contains(&LEVELS[0]) {
            return Err(crate::Invalid::from(format!(
                "{code} ({}) has a coarse level only: ask for level 2 to include it",
                d.name
            )));
        }
        for &n in &s.levels {
            let level = LEVELS
                .iter()
                .position(|l| *l == n)
                .ok_or_else(|| format!("a level is 2, 4 or 8 categories, not {n}"))?;
            // A flat dimension has its coarse level only (asked for as 2).
            if is_flat(d) && level > 0 {
                continue;
            }
            for (path, _) in at_level(d, level) {
                cells.extend(std::iter::repeat_n(vec![format!("{code}/{path}")], s.questions_per_category()));
            }
        }
    }
    if s.factorial > 0 {
        let (lv, qc) = (
            h.get("LV").ok_or("the factorial design needs an LV dimension")?,
            h.get("QC").ok_or("the factorial design needs a QC dimension")?,
        );
        for (l, _) in at_level(lv, 0) {
            for (q, _) in at_level(qc, 0) {
                cells.extend(std::iter::repeat_n(vec![format!("LV/{l}"), format!("QC/{q}")], s.factorial));
            }
        }
    }
    let mut rng = fastrand::Rng::with_seed(s.seed);
    let mut expertise: Vec<&str> = (0..cells.len()).map(|i| if i % 2 == 0 { "novice" } else { "expert" }).collect();
    rng.shuffle(&mut expertise);
    Ok(cells
        .into_iter()
        .zip(expertise)
        .map(|(categories, e)| Planned {
            categories,
            expertise: e.into(),
            chunk_id: chunk_ids[rng.usize(..chunk_ids.len())],
        })
        .collect())
}

/// The category block of a prompt: each category with its lineage.
fn category_text(h: &Hierarchy, categories: &[String]) -> String {
    categories
        .iter()
        .map(|c| {
            let (code, path) = c.split_once('/').unwrap_or((c, ""));
            let Some(d) = h.get(code) else { return format!("Category: {c}") };
            let lines: Vec<String> = lineage(d, path).iter().map(|(n, def)| format!("  - {n}: {def}")).collect();
            format!("Category: {c} ({})\n{}", d.name, lines.join("\n"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A hierarchical question's item: its plan, its categories as the prompt
/// states them (with their lineage) and its chunk's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub planned: Planned,
    pub categories: String,
    pub text: String,
}

/// What an item wrote: the question and its reference answer with the
/// plan; with the adherence check, the checker's verdict and whether it
/// dropped the pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Written {
    pub question: String,
    pub answer: String,
    pub planned: Planned,
    /// The checker's reply as it gave it (`null`: not checked).
    #[serde(default)]
    pub adherence: Value,
    #[serde(default)]
    pub dropped: bool,
    pub prompt_hash: Option<String>,
}

pub fn item(h: &Hierarchy, p: &Planned, text: &str) -> Item {
    Item { planned: p.clone(), categories: category_text(h, &p.categories), text: text.to_string() }
}

pub fn request(item: &Item) -> ChatRequest {
    let user = format!("User: {}\n{}\nPassage:\n<<<\n{}\n>>>", item.planned.expertise, item.categories, item.text);
    let mut req = ChatRequest::new(PURPOSE, vec![Message::system(PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(400);
    req
}

pub fn check_request(item: &Item, question: &str, answer: &str) -> ChatRequest {
    let user = format!(
        "{}\nQuestion: {question}\nReference answer: {answer}\nPassage:\n<<<\n{}\n>>>",
        item.categories, item.text
    );
    let mut req = ChatRequest::new(CHECK_PURPOSE, vec![Message::system(CHECK_PROMPT.trim()), Message::user(user)]);
    req.json = true;
    req.max_tokens = Some(120);
    req
}

/// The JSON object in a reply, if it has one.
fn json_object(reply: &str) -> Option<Value> {
    crate::llm::prompt::json_object(reply, "reply").ok()
}

pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem, adherence: bool) -> ItemOutcome {
    let p: Item = match item.read() {
        Ok(p) => p,
        Err(error) => return ItemOutcome::failed(error),
    };
    let ctx =
        |t: &str| CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: Some(prompt_hash(t)) };
    let reply = match gateway.chat(&request(&p), &ctx(PROMPT)).await {
        Ok(r) => r,
        Err(e) => return ItemOutcome::failed(e.to_string()),
    };
    let (mut tokens, mut cost) = (reply.prompt_tokens + reply.completion_tokens, reply.cost_usd);
    let parsed = json_object(&reply.text);
    let field = |k: &str| {
        parsed.as_ref().and_then(|v| v[k].as_str()).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
    };
    let (Some(question), Some(answer)) = (field("question"), field("answer")) else {
        return ItemOutcome::Failed {
            error: "the reply has no JSON object with a question and an answer".into(),
            tokens,
            cost_usd: cost,
        };
    };
    let mut verdict = Value::Null;
    if adherence {
        match gateway.chat(&check_request(&p, &question, &answer), &ctx(CHECK_PROMPT)).await {
            Ok(r) => {
                tokens += r.prompt_tokens + r.completion_tokens;
                cost += r.cost_usd;
                verdict = json_object(&r.text).unwrap_or(json!({ "fits": null, "reason": "unreadable verdict" }));
            }
            Err(e) => return ItemOutcome::Failed { error: format!("adherence check: {e}"), tokens, cost_usd: cost },
        }
    }
    let dropped = verdict["fits"] == json!(false);
    let written = Written {
        question,
        answer,
        planned: p.planned,
        adherence: verdict,
        dropped,
        prompt_hash: Some(prompt_hash(PROMPT)),
    };
    ItemOutcome::done::<Item>(&written, tokens, cost)
}

fn header<'a>(message: &'a str, label: &str) -> Vec<&'a str> {
    message.lines().filter_map(|l| l.strip_prefix(label)).map(str::trim).collect()
}

/// The passage's most frequent capitalised name (not at a sentence start), if any.
fn main_name(text: &str) -> Option<String> {
    let x = crate::graph::offline::extract(text);
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for r in &x.relations {
        *count.entry(r.source.clone()).or_default() += 1;
        *count.entry(r.target.clone()).or_default() += 1;
    }
    count
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(n, _)| n)
        .or_else(|| x.entities.first().map(|e| e.name.clone()))
}

/// The offline question and answer (see the module docs).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let text = delimited(message).ok_or("the request has no <<< >>> delimited passage")?;
    let categories = header(message, "Category:");
    let expert = header(message, "User:").first() == Some(&"expert");
    let name = main_name(text).unwrap_or_else(|| "this subject".into());
    let answer = extractive(text);
    let has = |needle: &str| categories.iter().any(|c| c.contains(needle));
    // Question Phrasing: the form its definition asks for, checked by
    // [`offline_check`]'s word counts.
    let keywords = || -> Vec<String> {
        let mut seen = HashSet::new();
        words(&name).chain(words(&answer)).filter(|w| seen.insert(w.clone())).collect::<Vec<String>>()
    };
    let phrased = if has("QP/concise_and_natural") {
        Some(format!("What about {}?", name.split_whitespace().take(6).collect::<Vec<_>>().join(" ")))
    } else if has("QP/verbose_and_natural") {
        Some(format!("Could you explain what the passage tells us about {name}, and why it matters here?"))
    } else if has("QP/short_search_query") {
        Some(keywords().join(" ").split_whitespace().take(4).collect::<Vec<_>>().join(" "))
    } else if has("QP/long_search_query") {
        Some(keywords().join(" ").split_whitespace().take(9).collect::<Vec<_>>().join(" "))
    } else {
        None
    };
    if let Some(question) = phrased {
        return Ok(json!({ "question": question, "answer": answer }).to_string());
    }
    let question = if has("LV/distant") {
        format!("In plain terms, what is going on with {name}, and why would anyone care?")
    } else if has("QC/complex") || has("AT/abstractive") {
        format!("How and why does {name} come to matter in what is described, taking all of it together?")
    } else {
        let lead: String = answer.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
        format!("What is said about {name} where it reads \"{lead} …\"?")
    };
    let question = if expert { format!("{question} Give the specifics.") } else { question };
    Ok(json!({ "question": question, "answer": answer }).to_string())
}

/// Question Phrasing's definitions as a rule: natural questions end with
/// "?" and are under 10 words (concise) or over 9 (verbose); search
/// queries have no punctuation and are under 7 words (short) or over 6
/// (long).
fn phrasing_verdict(category: &str, question: &str) -> (bool, String) {
    let n = question.split_whitespace().count();
    let punctuated = question.chars().any(|c| c.is_ascii_punctuation());
    let (fits, want) = match category {
        "concise_and_natural" => (question.trim_end().ends_with('?') && n < 10, "a question of under 10 words"),
        "verbose_and_natural" => (question.trim_end().ends_with('?') && n > 9, "a question of over 9 words"),
        "short_search_query" => (!punctuated && n < 7, "keywords without punctuation, under 7 words"),
        "long_search_query" => (!punctuated && n > 6, "keywords without punctuation, over 6 words"),
        other => return (true, format!("no offline rule for QP/{other}")),
    };
    (fits, format!("{n} words{} ({category} needs {want})", if punctuated { ", punctuated" } else { "" }))
}

/// The offline adherence rule (see the module docs).
pub fn offline_check(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let text = delimited(message).ok_or("the request has no <<< >>> delimited passage")?;
    let question = header(message, "Question:").first().copied().unwrap_or("");
    let categories = header(message, "Category:");
    let passage: HashSet<String> = words(text).collect();
    let qwords: Vec<String> = words(question).collect();
    let shared = qwords.iter().filter(|w| passage.contains(*w)).count() as f64 / qwords.len().max(1) as f64;
    let verdict = if categories.iter().any(|c| c.starts_with("LV/similar")) {
        (
            shared >= 0.5,
            format!(
                "{:.0}% of the question's content words are in the passage (similar needs 50% or more)",
                shared * 100.0
            ),
        )
    } else if categories.iter().any(|c| c.starts_with("LV/distant")) {
        (
            shared < 0.5,
            format!(
                "{:.0}% of the question's content words are in the passage (distant needs under 50%)",
                shared * 100.0
            ),
        )
    } else if let Some(qp) = categories.iter().find_map(|c| c.split_whitespace().next()?.strip_prefix("QP/")) {
        phrasing_verdict(qp, question)
    } else {
        (true, "the offline check covers lexical overlap (LV) and phrasing (QP) only".to_string())
    };
    Ok(json!({ "fits": verdict.0, "reason": verdict.1 }).to_string())
}

crate::job_items!(Item => Written);

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 004's RQ1 dimension: Question Phrasing, 4 coarse categories
    /// and no finer levels; planned at the coarse level only, and the
    /// offline generator's questions pass the offline check of each form.
    #[test]
    fn question_phrasing_is_a_flat_dimension_of_four_forms() {
        let h = default_hierarchy();
        let qp = &h["QP"];
        assert!(is_flat(qp) && !is_flat(&h["QC"]));
        let names: Vec<&str> = qp.categories.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["concise_and_natural", "verbose_and_natural", "short_search_query", "long_search_query"]);
        let s = HierarchicalSettings {
            dimensions: vec!["QC".into(), "QP".into()],
            levels: vec![2, 4, 8],
            per_category: Some(3),
            ..Default::default()
        };
        let planned = plan(&h, &s, &[1, 2, 3]).unwrap();
        let qp_cells: Vec<&String> =
            planned.iter().flat_map(|p| &p.categories).filter(|c| c.starts_with("QP/")).collect();
        assert_eq!(qp_cells.len(), 4 * 3, "the coarse level only");
        assert_eq!(planned.len(), (2 + 4 + 8) * 3 + 4 * 3);
        let coarse_less = HierarchicalSettings { levels: vec![4, 8], ..s.clone() };
        assert!(plan(&h, &coarse_less, &[1]).unwrap_err().0.contains("QP (Question Phrasing) has a coarse level only"));
        // A flat dimension of one category is refused.
        let mut bad = h.clone();
        bad.get_mut("QP").unwrap().categories.truncate(1);
        assert!(validate(&bad).unwrap_err().0.contains("2 to 8 categories, not 1"));
        let text = "Mr. Holmes examined the letter from Irene Adler. Holmes said the photograph was hidden behind a sliding panel in the sitting room.";
        for c in &qp.categories {
            let planned =
                Planned { categories: vec![format!("QP/{}", c.name)], expertise: "expert".into(), chunk_id: 1 };
            let reply: Value = serde_json::from_str(&offline(&request(&item(&h, &planned, text))).unwrap()).unwrap();
            let question = reply["question"].as_str().unwrap();
            let check: Value = serde_json::from_str(
                &offline_check(&check_request(&item(&h, &planned, text), question, reply["answer"].as_str().unwrap()))
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(check["fits"], true, "{}: {question:?} — {}", c.name, check["reason"]);
        }
        // The rule refuses the wrong form.
        assert!(!phrasing_verdict("short_search_query", "Where did Holmes find the photograph hidden?").0);
        assert!(!phrasing_verdict("concise_and_natural", "holmes photograph panel").0);
    }

    #[test]
    fn the_default_hierarchy_nests_2_4_8_and_uses_the_seeds_names() {
        let h = default_hierarchy();
        validate(&h).unwrap();
        for (code, d) in h.iter().filter(|(_, d)| !is_flat(d)) {
            let coarse: Vec<String> = at_level(d, 0).into_iter().map(|(p, _)| p).collect();
            let medium: Vec<String> = at_level(d, 1).into_iter().map(|(p, _)| p).collect();
            let fine: Vec<String> = at_level(d, 2).into_iter().map(|(p, _)| p).collect();
            assert_eq!((coarse.len(), medium.len(), fine.len()), (2, 4, 8), "{code}");
            // fine ⊂ medium ⊂ coarse: every path extends exactly one parent path.
            assert!(fine.iter().all(|f| medium.iter().filter(|m| f.starts_with(&format!("{m}/"))).count() == 1));
            assert!(medium.iter().all(|m| coarse.iter().filter(|c| m.starts_with(&format!("{c}/"))).count() == 1));
        }
        let fine_names =
            |code: &str| -> Vec<String> { at_level(&h[code], 2).into_iter().map(|(_, c)| c.name.clone()).collect() };
        for (code, named) in [
            (
                "QC",
                &["extractive_span", "entity_extraction", "single_hop_inference", "comparative_synthesis_concepts"][..],
            ),
            (
                "AT",
                &[
                    "phrase_extraction",
                    "sentence_extraction",
                    "condensed_summary",
                    "explanatory_synthesis",
                    "ordered_sequence",
                ][..],
            ),
            (
                "LV",
                &[
                    "low_lexical_overlap",
                    "synonym_based_rephrase",
                    "domain_shift_terminology",
                    "abstraction_level_shift",
                ][..],
            ),
        ] {
            assert!(named.iter().all(|n| fine_names(code).contains(&n.to_string())), "{code}");
        }
        let medium = at_level(&h["AT"], 1);
        let soe = medium.iter().find(|(_, c)| c.name == "summary_or_explanation").unwrap().1;
        assert_eq!(
            soe.children.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["condensed_summary", "sentence_extraction"]
        );
        assert!(at_level(&h["LV"], 1).iter().any(|(_, c)| c.name == "conceptual_rephrase"));
    }

    #[test]
    fn malformed_hierarchies_are_refused_with_the_reason() {
        let mut h = default_hierarchy();
        h.get_mut("QC").unwrap().categories[0].children.pop();
        assert_eq!(validate(&h).unwrap_err(), "QC/simple has 1 child categories, not 2");
        let mut h = default_hierarchy();
        h.get_mut("AT").unwrap().categories[1].name = "extractive".into();
        assert_eq!(validate(&h).unwrap_err(), "AT: the category name \"extractive\" is used twice");
    }

    #[test]
    fn plans_count_every_category_balance_expertise_and_are_seeded() {
        let h = default_hierarchy();
        let s = HierarchicalSettings { per_category: Some(3), factorial: 5, ..Default::default() };
        let chunks = [11, 12, 13];
        let p = plan(&h, &s, &chunks).unwrap();
        assert_eq!(p.len(), 3 * 3 * (2 + 4 + 8) + 4 * 5);
        let mut per: BTreeMap<&str, usize> = BTreeMap::new();
        for q in p.iter().filter(|q| q.categories.len() == 1) {
            *per.entry(q.categories[0].as_str()).or_default() += 1;
        }
        assert_eq!(per.len(), 3 * 14);
        assert!(per.values().all(|n| *n == 3));
        assert_eq!(p.iter().filter(|q| q.categories == ["LV/distant", "QC/complex"]).count(), 5);
        let novices = p.iter().filter(|q| q.expertise == "novice").count();
        assert_eq!(novices, p.len().div_ceil(2), "50/50");
        assert!(p.iter().all(|q| chunks.contains(&q.chunk_id)));
        assert_eq!(plan(&h, &s, &chunks).unwrap(), p);
        assert!(plan(&h, &HierarchicalSettings { levels: vec![3], ..s.clone() }, &chunks)
            .unwrap_err()
            .contains("not 3"));
        assert!(plan(&h, &s, &[]).is_err());
    }

    #[test]
    fn offline_questions_have_reference_answers_and_the_lexical_check_drops_misfits() {
        let h = default_hierarchy();
        let text =
            "The Salt Guild fixed the price of salt in Saltmere. Isobel Pell of the Salt Guild was its first warden.";
        let planned = Planned { categories: vec!["LV/similar".into()], expertise: "expert".into(), chunk_id: 1 };
        let p = item(&h, &planned, text);
        let reply: Value = serde_json::from_str(&offline(&request(&p)).unwrap()).unwrap();
        let (q, a) = (reply["question"].as_str().unwrap(), reply["answer"].as_str().unwrap());
        assert!(q.contains("Salt Guild") && q.ends_with("Give the specifics."), "{q}");
        assert!(text.contains(a.trim_end_matches(" …")), "{a}");
        let fits = |cats: &[&str], question: &str| {
            let planned = Planned {
                categories: cats.iter().map(|c| c.to_string()).collect(),
                expertise: "novice".into(),
                chunk_id: 1,
            };
            let v: Value =
                serde_json::from_str(&offline_check(&check_request(&item(&h, &planned, text), question, "x")).unwrap())
                    .unwrap();
            v["fits"].as_bool().unwrap()
        };
        assert!(fits(&["LV/similar"], "Who was the first warden of the Salt Guild?"));
        assert!(!fits(&["LV/distant"], "Who was the first warden of the Salt Guild?"));
        assert!(fits(&["LV/distant"], "Which lady ran the merchants' club?"));
        assert!(fits(&["QC/simple"], "Anything at all?"));
    }
}

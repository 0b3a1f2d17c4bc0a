//! Diagnostics of a question set (seed 000 §V-A, Fig. 9): which entities of
//! the knowledge graph the questions mention, how many distinct ones, and
//! how concentrated they are — the paper found 64 distinct entities in its
//! graph-grounded questions against 11 in the summary-based ones, half of
//! those on one minor character. Mentions are whole-word, case-insensitive
//! matches of the graph's entity names (longer names first, so "Mock
//! Turtle" is not also counted as "Turtle"). [`super::mentions`] has the
//! other way: entities the LLM extracts from each question.

use std::collections::{BTreeMap, HashMap};

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::graph::normalise_name;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityDistribution {
    pub questions: usize,
    /// Questions mentioning at least one entity.
    pub with_entity: usize,
    /// Distinct entities mentioned.
    pub distinct: usize,
    /// Of those, how many are entities of the graph (all of them when
    /// mentions are matched against the graph's names).
    pub in_graph: usize,
    /// Mentions per entity (each counted once per question), most first.
    pub counts: Vec<(String, usize)>,
}

impl EntityDistribution {
    /// Share of mentions that go to the most mentioned entity (0 when none).
    pub fn top_share(&self) -> f64 {
        let total: usize = self.counts.iter().map(|c| c.1).sum();
        self.counts.first().map_or(0.0, |c| c.1 as f64 / total.max(1) as f64)
    }

    /// The `n` most mentioned entities and the rest as "other".
    pub fn top(&self, n: usize) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = self.counts.iter().take(n).cloned().collect();
        let rest: usize = self.counts.iter().skip(n).map(|c| c.1).sum();
        if rest > 0 {
            out.push(("other".into(), rest));
        }
        out
    }
}

/// The entities (`names`: the graph's entity names) that `questions` mention.
pub fn entity_distribution(questions: &[&str], names: &[&str]) -> EntityDistribution {
    let by_key: HashMap<String, &str> = names.iter().map(|n| (normalise_name(n), *n)).collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut with_entity = 0;
    let names = crate::text::Highlighter::new(names);
    for q in questions {
        let mut seen: Vec<&str> = names
            .highlight(q)
            .into_iter()
            .filter(|(_, marked)| *marked)
            .filter_map(|(text, _)| by_key.get(&normalise_name(&text)).copied())
            .collect();
        seen.sort_unstable();
        seen.dedup();
        with_entity += usize::from(!seen.is_empty());
        for name in seen {
            *counts.entry(name).or_default() += 1;
        }
    }
    let mut counts: Vec<(String, usize)> = counts.into_iter().map(|(n, c)| (n.to_string(), c)).collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    EntityDistribution {
        questions: questions.len(),
        with_entity,
        distinct: counts.len(),
        in_graph: counts.len(),
        counts,
    }
}

const COLOURS: [RGBColor; 11] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xba, 0xb0, 0xac),
];

/// A pie chart of `slices` (label, count) as SVG, with a title (one line
/// per line of `title`) and a legend giving each slice's count and share
/// (Fig. 9's layout).
pub fn pie_svg(title: &str, slices: &[(String, usize)]) -> String {
    let total: usize = slices.iter().map(|s| s.1).sum();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 400)).into_drawing_area();
        let _ = root.fill(&WHITE);
        for (i, line) in title.lines().enumerate() {
            let size = if i == 0 { 17 } else { 14 };
            let _ = root.draw(&Text::new(
                line.to_string(),
                (20, 12 + 22 * i as i32),
                ("sans-serif", size).into_font().color(&BLACK),
            ));
        }
        if total == 0 {
            let _ = root.draw(&Text::new(
                "No entity of the graph is mentioned.".to_string(),
                (20, 60),
                ("sans-serif", 14).into_font().color(&BLACK),
            ));
        } else {
            let sizes: Vec<f64> = slices.iter().map(|s| s.1 as f64).collect();
            let colours: Vec<RGBColor> =
                (0..slices.len()).map(|i| if slices[i].0 == "other" { COLOURS[10] } else { COLOURS[i % 10] }).collect();
            let labels: Vec<String> = vec![String::new(); slices.len()];
            let (center, radius) = ((200, 215), 150.0);
            let pie = Pie::new(&center, &radius, &sizes, &colours, &labels);
            let _ = root.draw(&pie);
            for (i, (label, n)) in slices.iter().enumerate() {
                let y = 70 + i as i32 * 26;
                let _ = root.draw(&Rectangle::new([(390, y - 8), (404, y + 6)], colours[i].filled()));
                let text = format!("{label} — {n} ({:.1}%)", *n as f64 / total as f64 * 100.0);
                let _ = root.draw(&Text::new(text, (412, y - 7), ("sans-serif", 13).into_font().color(&BLACK)));
            }
        }
        let _ = root.present();
    }
    svg
}

/// The distribution of the entities an LLM found in each question
/// ([`crate::graph::mentions`]) over a set: `per_question` holds
/// each question's list. Names are grouped by their normalised key (case,
/// articles, plurals as [`normalise_name`] folds them), each counted once
/// per question; a group is labelled with the graph's name for that key
/// when `graph_names` has one, else with its most frequent spelling.
pub fn mention_distribution(per_question: &[Vec<String>], graph_names: &[&str]) -> EntityDistribution {
    let graph: HashMap<String, &str> = graph_names.iter().map(|n| (normalise_name(n), *n)).collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut spellings: HashMap<String, BTreeMap<String, usize>> = HashMap::new();
    let mut with_entity = 0;
    for names in per_question {
        let mut keys: Vec<String> = Vec::new();
        for name in names {
            let key = normalise_name(name);
            if !key.is_empty() {
                *spellings.entry(key.clone()).or_default().entry(name.trim().to_string()).or_default() += 1;
                keys.push(key);
            }
        }
        keys.sort_unstable();
        keys.dedup();
        with_entity += usize::from(!keys.is_empty());
        for key in keys {
            *counts.entry(key).or_default() += 1;
        }
    }
    let label = |key: &str| -> String {
        if let Some(name) = graph.get(key) {
            return name.to_string();
        }
        // Most frequent spelling; ties to the alphabetically first.
        let forms = &spellings[key];
        let top = forms.values().max().copied().unwrap_or(0);
        forms.iter().find(|(_, n)| **n == top).map(|(f, _)| f.clone()).unwrap_or_else(|| key.to_string())
    };
    let in_graph = counts.keys().filter(|k| graph.contains_key(*k)).count();
    let mut counts: Vec<(String, usize)> = counts.iter().map(|(k, c)| (label(k), *c)).collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    EntityDistribution { questions: per_question.len(), with_entity, distinct: counts.len(), in_graph, counts }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_grouped_by_key_labelled_by_the_graph_else_the_usual_spelling() {
        let per_question = vec![
            vec!["the Queen".to_string(), "Alice".into(), "alice".into()],
            vec!["Queen".into(), "Cheshire cat".into()],
            vec!["Cheshire Cat".into(), "Cheshire Cat".into()],
            vec![],
        ];
        let d = mention_distribution(&per_question, &["Alice", "Queen", "Hatter"]);
        assert_eq!((d.questions, d.with_entity, d.distinct, d.in_graph), (4, 3, 3, 2));
        assert_eq!(
            d.counts,
            [("Cheshire Cat".to_string(), 2), ("Queen".into(), 2), ("Alice".into(), 1)],
            "Alice once though named twice; the cat under its usual spelling; the Queen under the graph's"
        );
    }

    #[test]
    fn mentions_are_whole_words_counted_once_per_question_longest_name_first() {
        let names = ["Alice", "Mock Turtle", "Turtle", "Queen", "Hatter"];
        let qs = [
            "Why does the Mock Turtle weep, and what does Alice say?",
            "What did the Queen order? What did the QUEEN shout?",
            "Who is the Mad Hatter's friend?",
            "Where do turtles live?",
            "What is a lobster quadrille?",
        ];
        let d = entity_distribution(&qs, &names);
        assert_eq!((d.questions, d.with_entity, d.distinct), (5, 3, 4));
        assert_eq!(
            d.counts,
            [("Alice".to_string(), 1), ("Hatter".into(), 1), ("Mock Turtle".into(), 1), ("Queen".into(), 1)],
            "no Turtle inside Mock Turtle or turtles; the Queen once"
        );
        assert_eq!(d.top(2), [("Alice".to_string(), 1), ("Hatter".into(), 1), ("other".into(), 2)]);
        assert!((d.top_share() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn the_pie_chart_is_svg_with_a_legend_of_counts_and_shares() {
        let svg = pie_svg("Graph questions", &[("Alice".into(), 3), ("Queen".into(), 1)]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("Graph questions"));
        assert!(svg.contains("Alice — 3 (75.0%)"), "{}", &svg[..svg.len().min(2000)]);
        assert!(svg.contains("<polygon"), "slices are drawn");
        assert!(pie_svg("Empty", &[]).contains("No entity of the graph is mentioned."));
    }
}

//! Summaries of merged descriptions (seed 000 §III-A; LightRAG's
//! "description summary on merge"). When one entity or relation was
//! described in many chunks, its combined descriptions can run to thousands
//! of tokens; once they exceed a token budget, the LLM rewrites them as one
//! description within the budget. Under the budget they are kept as they are.
//!
//! Offline implementation: extractive. Each description is scored by how
//! frequent its content words are across all the descriptions (divided by
//! the square root of its length); the best ones are kept, in their original
//! order, while they fit the budget.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::chunk::{Bpe, Tokenizer};
use crate::graph::KnowledgeGraph;
use crate::jobs::one_call;
use crate::jobs::{ItemKey, ItemOutcome, WorkItem};
use crate::llm::prompt::delimited;
use crate::llm::{ChatRequest, Gateway, Message};
use crate::text::words;

pub const PURPOSE: &str = "summarise_descriptions";
pub const PROMPT: &str = include_str!("../../prompts/summarise_descriptions.txt");
/// The default budget in cl100k tokens (LightRAG's `summary_max_tokens`).
pub const DEFAULT_BUDGET: usize = types::defaults::SUMMARY_BUDGET;

/// What a description summary describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Described {
    Entity,
    Relation,
}

impl Described {
    /// Its word in the prompt.
    pub fn as_str(self) -> &'static str {
        match self {
            Described::Entity => "entity",
            Described::Relation => "relation",
        }
    }
}

/// A description summary's job item: the entity or relation, its name (a
/// relation's is "SOURCE — TARGET"), its merged descriptions and the budget
/// in tokens. The result is the summary's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub what: Described,
    pub name: String,
    pub descriptions: Vec<String>,
    pub budget: usize,
}

/// One work item per node and per edge whose joined descriptions exceed
/// `budget` tokens. Keys: `node:KEY` and `edge:SOURCE|TARGET` (node keys
/// never contain `|`).
pub fn items(graph: &KnowledgeGraph, budget: usize) -> Vec<WorkItem> {
    let over = |d: &[String]| d.len() > 1 && Tokenizer::Cl100kBase.count(&d.join("\n")) > budget;
    let nodes = graph.nodes.values().filter(|n| over(&n.descriptions)).map(|n| {
        let item = Item { what: Described::Entity, name: n.name.clone(), descriptions: n.descriptions.clone(), budget };
        WorkItem::new(ItemKey::Node(n.key.clone()), &item)
    });
    let edges = graph.edges.values().filter(|e| over(&e.descriptions)).map(|e| {
        let name = |k: &str| graph.nodes.get(k).map(|n| n.name.clone()).unwrap_or_else(|| k.to_string());
        let item = Item {
            what: Described::Relation,
            name: format!("{} — {}", name(&e.source), name(&e.target)),
            descriptions: e.descriptions.clone(),
            budget,
        };
        WorkItem::new(ItemKey::Edge(e.source.clone(), e.target.clone()), &item)
    });
    nodes.chain(edges).collect()
}

/// Replaces the descriptions of the node or edge an item key names with `summary`.
pub fn apply(graph: &mut KnowledgeGraph, key: &ItemKey, summary: &str) -> bool {
    let summary = summary.trim();
    let descriptions = match key {
        ItemKey::Node(k) => graph.nodes.get_mut(k).map(|n| &mut n.descriptions),
        ItemKey::Edge(a, b) => graph.edges.get_mut(&(a.clone(), b.clone())).map(|e| &mut e.descriptions),
        _ => None,
    };
    match descriptions {
        Some(d) if !summary.is_empty() => {
            *d = vec![summary.to_string()];
            true
        }
        _ => false,
    }
}

pub fn request(what: &str, name: &str, descriptions: &[String], budget: usize) -> ChatRequest {
    let system = PROMPT.trim().replace("{what}", what).replace("{budget}", &budget.to_string());
    let list: Vec<String> = descriptions.iter().map(|d| format!("- {}", d.replace('\n', " "))).collect();
    let mut req = ChatRequest::new(
        PURPOSE,
        vec![
            Message::system(system),
            Message::user(format!("{what}: {name}\nDescriptions:\n<<<\n{}\n>>>", list.join("\n"))),
        ],
    );
    // Room for the budget plus a margin: the budget is asked for in the prompt.
    req.max_tokens = Some(budget as u32 + budget as u32 / 4);
    req
}

/// Summarises one item (see [`items`]) through the gateway.
pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let Item { what, name, descriptions, budget } = match item.read() {
        Ok(it) => it,
        Err(e) => return ItemOutcome::failed(e),
    };
    let (what, name) = (what.as_str(), name.as_str());
    let mut req = request(what, name, &descriptions, budget);
    // A much-mentioned entity's descriptions may not fit a small model's
    // context: the earliest ones are kept, as many as fit.
    if let Some(room) = gateway.prompt_room(PURPOSE, req.max_tokens.unwrap_or(0)).await {
        let fits = |n: usize| {
            crate::llm::count_prompt_tokens(&request(what, name, &descriptions[..n], budget).messages) as usize <= room
        };
        if !fits(descriptions.len()) {
            let lo = crate::llm::most_that_fit(descriptions.len(), fits);
            if lo == 0 {
                return ItemOutcome::failed(format!(
                    "not one description fits the model's context ({room} tokens for the prompt)"
                ));
            }
            req = request(what, name, &descriptions[..lo], budget);
        }
    }
    one_call::<Item>(gateway, job_id, &item, PROMPT, &req, |reply| match reply.trim() {
        "" => Err("the model returned an empty description".into()),
        text => Ok(text.to_string()),
    })
    .await
}

/// The extractive summary of `descriptions` within `budget` tokens (see the module docs).
pub fn extractive(descriptions: &[&str], budget: usize) -> String {
    let mut freq: HashMap<String, f64> = HashMap::new();
    for d in descriptions {
        for w in words(d) {
            *freq.entry(w).or_default() += 1.0;
        }
    }
    let mut ranked: Vec<(f64, usize)> = descriptions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let ws: Vec<String> = words(d).collect();
            (ws.iter().map(|w| freq[w]).sum::<f64>() / (ws.len().max(1) as f64).sqrt(), i)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut kept: Vec<usize> = Vec::new();
    let mut used = 0;
    for (_, i) in ranked {
        // +1 for the joining space.
        let cost = Tokenizer::Cl100kBase.count(descriptions[i]) + 1;
        if used + cost <= budget {
            kept.push(i);
            used += cost;
        }
    }
    if kept.is_empty() {
        // Even the best description alone is over the budget: cut it by words.
        let best = descriptions.first().copied().unwrap_or("");
        let mut out = String::new();
        for w in best.split_whitespace() {
            let next = if out.is_empty() { w.to_string() } else { format!("{out} {w}") };
            if Tokenizer::Cl100kBase.count(&next) > budget {
                break;
            }
            out = next;
        }
        return out;
    }
    kept.sort_unstable();
    kept.iter().map(|&i| descriptions[i].trim()).collect::<Vec<_>>().join(" ")
}

/// The offline provider's implementation: [`extractive`] over the listed descriptions.
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let list = delimited(message).ok_or("the request has no <<< >>> delimited descriptions")?;
    let descriptions: Vec<&str> =
        list.lines().map(|l| l.trim_start_matches("- ").trim()).filter(|l| !l.is_empty()).collect();
    // The budget as the prompt states it ("… of at most {budget} tokens").
    let budget = req
        .messages
        .first()
        .and_then(|m| m.content.split("at most ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_BUDGET);
    Ok(extractive(&descriptions, budget))
}

crate::text_job_items!(Item);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Entity, Extraction};

    fn graph_with(descriptions: &[&str]) -> KnowledgeGraph {
        let mut g = KnowledgeGraph::default();
        for (i, d) in descriptions.iter().enumerate() {
            g.merge(
                i as i64,
                &Extraction {
                    entities: vec![Entity { name: "Ada".into(), kind: "person".into(), description: d.to_string() }],
                    relations: vec![],
                },
            );
        }
        g
    }

    #[test]
    fn only_descriptions_over_the_budget_become_items_and_summaries_replace_them() {
        let long: Vec<String> =
            (0..40).map(|i| format!("Ada kept the lighthouse ledger in year {i} and mended its lamp.")).collect();
        let mut g = graph_with(&long.iter().map(String::as_str).collect::<Vec<_>>());
        g.merge(
            99,
            &Extraction {
                entities: vec![Entity { name: "Bo".into(), kind: "person".into(), description: "A cook.".into() }],
                relations: vec![],
            },
        );
        let found = items(&g, 100);
        assert_eq!(found.iter().map(|i| i.key.as_str()).collect::<Vec<_>>(), ["node:ada"], "Bo is under budget");
        assert_eq!(found[0].read::<Item>().unwrap().descriptions.len(), 40);
        assert!(items(&g, 100_000).is_empty());
        assert!(apply(&mut g, &found[0].item_key().unwrap(), " Ada kept the ledger. "));
        assert_eq!(g.nodes["ada"].descriptions, ["Ada kept the ledger."]);
        assert!(!apply(&mut g, &ItemKey::Node("nobody".into()), "x"));
        assert!(!apply(&mut g, &ItemKey::Node("ada".into()), "  "), "an empty summary replaces nothing");
    }

    #[test]
    fn the_offline_summary_fits_the_budget_and_keeps_original_order() {
        let descriptions = [
            "Ada mended the lamp of the lighthouse.",
            "The weather was cold.",
            "Ada kept the lighthouse ledger.",
            "Ada rowed to the lighthouse with oil for the lamp.",
        ];
        let req = request("entity", "Ada", &descriptions.map(String::from), 20);
        let out = offline(&req).unwrap();
        assert!(Tokenizer::Cl100kBase.count(&out) <= 20, "{out}");
        // The lighthouse/lamp descriptions share the most words; the weather one is dropped.
        assert!(!out.contains("weather"), "{out}");
        let first = out.find("mended").unwrap();
        let second = out.find("rowed").or_else(|| out.find("ledger")).unwrap();
        assert!(first < second, "original order kept: {out}");
        assert_eq!(extractive(&["one two three four five six seven eight nine ten"], 3), "one two three");
    }
}

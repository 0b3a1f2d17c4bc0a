//! Building a method from its name and parameters (a JSON object; missing
//! parameters take the defaults, unknown ones are refused by name), and the
//! list of methods with their defaults for the pages and the CLI.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::bm25::Bm25Method;
use super::fastgraphrag::{FastGraphRag, FastGraphRagSettings};
use super::graphrag::{GraphRag, GraphRagSettings};
use super::http::{ChunkMap, HttpMethod, HttpSettings};
use super::lightrag::{LightRag, LightRagSettings};
use super::naive::{NaiveRag, NaiveSettings};
use super::{Corpus, Method};

/// The built-in methods: `(name, what it is)`.
pub const METHODS: &[(&str, &str)] = &[
    ("naive", "NaiveRAG: the top k chunks by embedding similarity (all-MiniLM-L6-v2 in process, or the endpoint's)"),
    ("bm25", "BM25 over the chunks, top k (the HieraRAG paper: k = 10)"),
    ("lightrag", "LightRAG-style dual-level keywords over entities and relations"),
    ("fastgraphrag", "FastGraphRAG-style personalized PageRank from the question's entities"),
    ("graphrag-local", "GraphRAG-style local search: entities, their community reports, chunks"),
    ("graphrag-global", "GraphRAG-style global search: map over community reports, reduce"),
    ("http", "Your own RAG service: each question POSTed to its URL, the answer read from its JSON reply"),
    (super::presets::PRESETS[0].0, super::presets::PRESETS[0].1),
    (super::presets::PRESETS[1].0, super::presets::PRESETS[1].1),
    (super::presets::PRESETS[2].0, super::presets::PRESETS[2].1),
];

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bm25Settings {
    pub k: usize,
}

impl Default for Bm25Settings {
    fn default() -> Self {
        Bm25Settings { k: 10 }
    }
}

/// Whether a method needs the community reports (GraphRAG indexing).
pub fn needs_reports(name: &str) -> bool {
    name.starts_with("graphrag")
}

/// Whether a method needs the knowledge graph.
pub fn needs_graph(name: &str) -> bool {
    !matches!(name, "bm25" | "naive") && !super::presets::is_remote(name)
}

/// Whether a method needs chunk vectors ([`DenseIndex`]).
pub fn needs_vectors(name: &str) -> bool {
    name == "naive"
}

/// Chunk vectors and the embedder for questions (NaiveRAG).
pub struct DenseIndex {
    pub vectors: Vec<(i64, Vec<f32>)>,
    pub embedder: crate::embed::Embedder,
}

/// What some methods need besides the corpus.
#[derive(Default)]
pub struct Extras {
    /// NaiveRAG's chunk vectors.
    pub dense: Option<DenseIndex>,
    /// The HTTP method's concurrency, timeout and retries (default: the
    /// defaults of model calls).
    pub transport: Option<crate::llm::openai::OpenAiConfig>,
    /// The chunks' ids in the system the corpus was imported from → their
    /// ids (the HTTP method's contexts are found by them).
    pub external_chunks: std::collections::HashMap<String, i64>,
}

/// A method's default parameters.
pub fn defaults(name: &str) -> Result<Value, crate::Invalid> {
    Ok(match name {
        "naive" => json!(NaiveSettings::default()),
        "bm25" => json!(Bm25Settings::default()),
        "lightrag" => json!(LightRagSettings::default()),
        "fastgraphrag" => json!(FastGraphRagSettings::default()),
        "graphrag-local" => json!(GraphRagSettings::default()),
        "graphrag-global" => json!(GraphRagSettings { mode: "global".into(), ..Default::default() }),
        "http" => json!(HttpSettings::default()),
        other => match super::presets::defaults(other) {
            Some(d) => d,
            None => return Err(crate::Invalid::from(unknown(other))),
        },
    })
}

fn unknown(name: &str) -> String {
    let names: Vec<&str> = METHODS.iter().map(|m| m.0).collect();
    format!("unknown method \"{name}\": use one of {}", names.join(", "))
}

/// `params` over the method's defaults: the full parameters, or the first
/// unknown or mistyped one named.
pub fn resolve(name: &str, params: &Value) -> Result<Value, crate::Invalid> {
    let mut full = defaults(name)?;
    let given = match params {
        Value::Null => return Ok(full),
        Value::Object(m) => m,
        other => return Err(crate::Invalid::from(format!("parameters must be a JSON object, not {other}"))),
    };
    // Every method takes `temperature`: the answers' sampling temperature.
    if let Some(t) = given.get("temperature") {
        answer_temperature(params)?;
        full["temperature"] = t.clone();
    }
    for (k, v) in given.iter().filter(|(k, _)| *k != "temperature") {
        match full.get_mut(k) {
            Some(slot) => *slot = v.clone(),
            None => {
                let known: Vec<&String> = full.as_object().map(|m| m.keys().collect()).unwrap_or_default();
                return Err(crate::Invalid::from(format!(
                    "{name} has no parameter \"{k}\" (it has {})",
                    known.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                )));
            }
        }
    }
    if name.starts_with("graphrag") {
        // The mode is the method's name.
        full["mode"] = json!(name.trim_start_matches("graphrag-"));
    }
    Ok(full)
}

fn settings<T: DeserializeOwned>(name: &str, params: &Value) -> Result<T, String> {
    serde_json::from_value(params.clone()).map_err(|e| format!("{name}: {e}"))
}

/// A method from its name and (resolved or partial) parameters.
/// The answers' temperature a method's parameters set (`temperature`, 0 to
/// 2); `None` when they set none: the model's default (OpenAI's is 1).
pub fn answer_temperature(params: &Value) -> Result<Option<f32>, crate::Invalid> {
    match params.get("temperature") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(t) if (0.0..=2.0).contains(&t) => Ok(Some(t as f32)),
            _ => Err(crate::Invalid::from(format!("temperature must be a number from 0 to 2, not {v}"))),
        },
    }
}

pub fn build(
    name: &str,
    params: &Value,
    corpus: Arc<Corpus>,
    extras: Extras,
) -> Result<Box<dyn Method>, crate::Invalid> {
    let mut params = resolve(name, params)?;
    let temperature = answer_temperature(&params)?;
    if let Some(m) = params.as_object_mut() {
        m.remove("temperature");
    }
    if needs_graph(name) && corpus.graph.nodes.is_empty() {
        return Err(crate::Invalid::from(format!("{name} needs the knowledge graph: build it first")));
    }
    Ok(match name {
        "naive" => {
            let s: NaiveSettings = settings(name, &params)?;
            if s.k == 0 {
                return Err(crate::Invalid::from("naive: k must be at least 1"));
            }
            let dense = extras.dense.ok_or("naive needs the chunks' vectors")?;
            Box::new(NaiveRag::new(corpus, dense.vectors, dense.embedder, s.k))
        }
        "bm25" => {
            let s: Bm25Settings = settings(name, &params)?;
            if s.k == 0 {
                return Err(crate::Invalid::from("bm25: k must be at least 1"));
            }
            Box::new(Bm25Method::new(corpus, s.k))
        }
        name if super::presets::is_remote(name) => {
            let transport = extras.transport.unwrap_or_else(|| crate::llm::openai::OpenAiConfig::new("", ""));
            let http: HttpSettings = if name == "http" {
                settings(name, &params)?
            } else {
                super::presets::expand(name, &params, temperature)?
            };
            // Found among the chunks only when the service tells its contexts.
            let chunks = if http.contexts.is_empty() {
                ChunkMap::default()
            } else {
                ChunkMap::new(extras.external_chunks, &corpus.chunks)
            };
            Box::new(HttpMethod::new(http, &transport, chunks)?)
        }
        "lightrag" => Box::new(LightRag::new(corpus, settings(name, &params)?)?),
        "fastgraphrag" => Box::new(FastGraphRag::new(corpus, settings(name, &params)?)?),
        _ => Box::new(GraphRag::new(corpus, settings(name, &params)?)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_default_and_unknown_or_mistyped_ones_are_named() {
        assert_eq!(resolve("bm25", &json!({"k": 5})).unwrap(), json!({"k": 5}));
        assert_eq!(resolve("bm25", &Value::Null).unwrap(), json!({"k": 10}));
        assert_eq!(resolve("lightrag", &json!({"top_k": 5})).unwrap()["mode"], "hybrid");
        assert_eq!(resolve("graphrag-global", &json!({})).unwrap()["mode"], "global");
        assert_eq!(resolve("bm25", &json!({"kk": 5})).unwrap_err(), "bm25 has no parameter \"kk\" (it has k)");
        assert!(resolve("naive2", &json!({})).unwrap_err().starts_with("unknown method \"naive2\""));
        let corpus = Arc::new(Corpus::new(vec![(1, "text".into())], Default::default(), Default::default()));
        let err = build("bm25", &json!({"k": "ten"}), corpus.clone(), Extras::default()).err().unwrap();
        assert!(err.starts_with("bm25: invalid type"), "{err}");
        assert_eq!(
            build("lightrag", &json!({}), corpus.clone(), Extras::default()).err().unwrap(),
            "lightrag needs the knowledge graph: build it first"
        );
        assert_eq!(
            build("naive", &json!({}), corpus.clone(), Extras::default()).err().unwrap(),
            "naive needs the chunks' vectors"
        );
        // Every method takes the answers' temperature; it is kept with the
        // parameters and checked.
        let warm = resolve("bm25", &json!({"k": 5, "temperature": 0.7})).unwrap();
        assert_eq!(warm, json!({"k": 5, "temperature": 0.7}));
        assert_eq!(answer_temperature(&warm), Ok(Some(0.7)));
        assert_eq!(answer_temperature(&json!({"k": 5})), Ok(None), "the model's default");
        assert!(resolve("bm25", &json!({"temperature": 3})).unwrap_err().contains("from 0 to 2"));
        assert!(build("bm25", &warm, corpus, Extras::default()).is_ok());
    }
}

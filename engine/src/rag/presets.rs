//! Named presets of the HTTP method ([`super::http`]): the field's own
//! systems, each one choice with a few fields, filled into the generic
//! template by [`expand`] — so what is sent is the template's, and a system
//! a preset does not cover is one edit away in `http`.
//!
//! - `lightrag-server`: LightRAG's API server (`lightrag-server`, package
//!   `lightrag-hku`). The question goes to `/query` in one of its modes; what
//!   it retrieved comes from `/query/data` (the same request, no answer
//!   written; its keywords come from the server's own cache of the first
//!   call), whose chunks carry LightRAG's chunk ids — a project imported
//!   from the server's working folder has them, so MAP, nDCG and Recall
//!   score LightRAG's retrieval.
//! - `ms-graphrag`: Microsoft GraphRAG's query API (local, global, drift
//!   and basic search) behind `scripts/graphrag-serve`, a small HTTP server
//!   run in GraphRAG's own Python environment beside its output folder; the
//!   contexts are the text units its search put in the prompt.
//! - `chat-baseline`: any OpenAI-compatible chat endpoint answering from
//!   its own knowledge — the no-retrieval baseline.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::http::HttpSettings;

/// The presets: `(name, what it is)`.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "lightrag-server",
        "A running LightRAG server: each question to its /query in the mode you choose, what it retrieved from /query/data (scored by MAP/nDCG/Recall when the project was imported from its working folder)",
    ),
    (
        "ms-graphrag",
        "Microsoft GraphRAG's local, global, drift or basic search, served from its output folder by scripts/graphrag-serve",
    ),
    ("chat-baseline", "Any OpenAI-compatible chat endpoint answering without retrieval: the no-retrieval baseline"),
];

/// Whether `name` is a preset.
pub fn is_preset(name: &str) -> bool {
    PRESETS.iter().any(|(n, _)| *n == name)
}

/// Whether a method's answers say what they were given to read: every
/// built-in method does (an empty context is a retrieval that found
/// nothing), and so does the no-retrieval baseline (none, by design); a
/// service's answers only when it reported contexts.
pub fn reports_context(name: &str) -> bool {
    !is_remote(name) || !retrieves(name)
}

/// Whether a method retrieves anything at all (all but the no-retrieval
/// baseline).
pub fn retrieves(name: &str) -> bool {
    name != "chat-baseline"
}

/// Whether a method is answered by a service outside Assay (no LLM call
/// of Assay's, no graph or vectors needed): `http` and its presets.
pub fn is_remote(name: &str) -> bool {
    name == "http" || is_preset(name)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LightRagServer {
    pub url: String,
    pub mode: String,
    pub top_k: Option<u32>,
    pub chunk_top_k: Option<u32>,
    pub response_type: String,
    pub contexts: bool,
    pub api_key: String,
}

impl Default for LightRagServer {
    fn default() -> Self {
        LightRagServer {
            url: "http://127.0.0.1:9621".into(),
            mode: "mix".into(),
            top_k: None,
            chunk_top_k: None,
            response_type: "Multiple Paragraphs".into(),
            contexts: true,
            api_key: String::new(),
        }
    }
}

const LIGHTRAG_MODES: [&str; 6] = ["local", "global", "hybrid", "naive", "mix", "bypass"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MsGraphRag {
    pub url: String,
    pub method: String,
    pub community_level: u32,
    pub response_type: String,
    pub api_key: String,
}

impl Default for MsGraphRag {
    fn default() -> Self {
        MsGraphRag {
            url: "http://127.0.0.1:9622".into(),
            method: "local".into(),
            community_level: 2,
            response_type: "Multiple Paragraphs".into(),
            api_key: String::new(),
        }
    }
}

const GRAPHRAG_METHODS: [&str; 4] = ["local", "global", "drift", "basic"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChatBaseline {
    pub url: String,
    pub model: String,
    pub system: String,
    pub max_tokens: Option<u32>,
    pub api_key: String,
}

impl Default for ChatBaseline {
    fn default() -> Self {
        ChatBaseline {
            url: "http://127.0.0.1:8080/v1".into(),
            model: String::new(),
            system: "Answer the question from what you know. {{length_hint}}".into(),
            max_tokens: None,
            api_key: String::new(),
        }
    }
}

/// A preset's default parameters.
pub fn defaults(name: &str) -> Option<Value> {
    Some(match name {
        "lightrag-server" => json!(LightRagServer::default()),
        "ms-graphrag" => json!(MsGraphRag::default()),
        "chat-baseline" => json!(ChatBaseline::default()),
        _ => return None,
    })
}

/// What each field of a preset (and of `http`) means, for the method form.
pub fn fields(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        "lightrag-server" => &[
            ("url", "The server's address, without /query (lightrag-server listens on port 9621)."),
            ("mode", "LightRAG's query mode: local, global, hybrid, naive, mix (its default) or bypass."),
            ("top_k", "Entities (local) or relations (global) retrieved; null: the server's setting."),
            ("chunk_top_k", "Text chunks kept; null: the server's setting."),
            ("response_type", "LightRAG's answer format, e.g. Multiple Paragraphs, Single Paragraph, Bullet Points. A target length is sent as the user prompt."),
            ("contexts", "Ask /query/data for what was retrieved (one more request per question, no answer written): needed for MAP, nDCG and Recall."),
            ("api_key", "The server's LIGHTRAG_API_KEY, sent as X-API-Key; kept as a secret, never shown."),
        ],
        "ms-graphrag" => &[
            ("url", "scripts/graphrag-serve's address, without /query (it listens on port 9622)."),
            ("method", "GraphRAG's search: local, global, drift or basic."),
            ("community_level", "The community level local, global and drift search read (GraphRAG's default is 2)."),
            ("response_type", "GraphRAG's answer format, e.g. Multiple Paragraphs. A target length is added to it."),
            ("api_key", "A bearer token if the server is behind one; kept as a secret."),
        ],
        "chat-baseline" => &[
            ("url", "The endpoint up to /v1 (OpenAI, vLLM, Ollama's /v1, llama.cpp's server)."),
            ("model", "The model's name at that endpoint."),
            ("system", "The system message; {{length_hint}} becomes \"Answer in about N words.\" under a target length."),
            ("max_tokens", "A cap on the reply's tokens; null: the endpoint's."),
            ("api_key", "The endpoint's key, sent as a bearer token; kept as a secret."),
        ],
        "http" => &[
            ("url", "Where each question is POSTed."),
            ("body", "The JSON sent; {{question}}, {{question_id}}, {{target_words}} and {{length_hint}} are filled in."),
            ("answer", "JSON pointer to the answer in the reply, e.g. /data/answer."),
            ("contexts", "JSON pointer to the retrieved contexts (strings or objects); empty: none."),
            ("contexts_url", "Where the same body is POSTed for the contexts, when the answer's reply lacks them."),
            ("context_id", "The field of a context naming the service's chunk; a project imported from the service's index maps it to its chunk."),
            ("context_text", "The field of a context holding its text (empty: text, else content)."),
            ("prompt_tokens", "JSON pointer to the tokens the service's prompt took; empty: unknown."),
            ("completion_tokens", "JSON pointer to the tokens its answer took; empty: unknown."),
            ("headers", "More request headers; one named like a key or token is kept as a secret."),
            ("bearer_token", "Sent as Authorization: Bearer; kept as a secret."),
        ],
        _ => &[],
    }
}

fn settings<T: serde::de::DeserializeOwned>(name: &str, params: &Value) -> Result<T, String> {
    serde_json::from_value(params.clone()).map_err(|e| format!("{name}: {e}"))
}

fn base(name: &str, url: &str) -> Result<String, String> {
    let url = url.trim().trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("{name}: url must start with http:// or https://, not \"{url}\""));
    }
    Ok(url.to_string())
}

/// A preset's parameters as the HTTP method's settings. `temperature`: the
/// answers' temperature, where the service takes one (the chat baseline).
pub fn expand(name: &str, params: &Value, temperature: Option<f32>) -> Result<HttpSettings, String> {
    match name {
        "lightrag-server" => {
            let s: LightRagServer = settings(name, params)?;
            if !LIGHTRAG_MODES.contains(&s.mode.as_str()) {
                return Err(format!("{name}: mode must be one of {}, not \"{}\"", LIGHTRAG_MODES.join(", "), s.mode));
            }
            let url = base(name, &s.url)?;
            let mut body = json!({
                "query": "{{question}}",
                "mode": s.mode,
                "response_type": s.response_type,
                "user_prompt": "{{length_hint}}",
                "include_references": false,
            });
            if let Some(k) = s.top_k {
                body["top_k"] = json!(k);
            }
            if let Some(k) = s.chunk_top_k {
                body["chunk_top_k"] = json!(k);
            }
            let contexts = s.contexts && s.mode != "bypass";
            Ok(HttpSettings {
                url: format!("{url}/query"),
                body,
                answer: "/response".into(),
                contexts: if contexts { "/data/chunks".into() } else { String::new() },
                contexts_url: if contexts { format!("{url}/query/data") } else { String::new() },
                context_id: "chunk_id".into(),
                context_text: "content".into(),
                headers: if s.api_key.is_empty() {
                    Default::default()
                } else {
                    [("X-API-Key".to_string(), s.api_key)].into()
                },
                ..HttpSettings::default()
            })
        }
        "ms-graphrag" => {
            let s: MsGraphRag = settings(name, params)?;
            if !GRAPHRAG_METHODS.contains(&s.method.as_str()) {
                return Err(format!(
                    "{name}: method must be one of {}, not \"{}\"",
                    GRAPHRAG_METHODS.join(", "),
                    s.method
                ));
            }
            Ok(HttpSettings {
                url: format!("{}/query", base(name, &s.url)?),
                body: json!({
                    "query": "{{question}}",
                    "method": s.method,
                    "community_level": s.community_level,
                    "response_type": format!("{} {{{{length_hint}}}}", s.response_type).trim().to_string(),
                }),
                answer: "/response".into(),
                contexts: "/contexts".into(),
                context_id: "id".into(),
                context_text: "text".into(),
                bearer_token: s.api_key,
                ..HttpSettings::default()
            })
        }
        "chat-baseline" => {
            let s: ChatBaseline = settings(name, params)?;
            if s.model.trim().is_empty() {
                return Err(format!("{name}: name the model (\"model\": the endpoint's name for it)"));
            }
            let mut body = json!({
                "model": s.model,
                "messages": [
                    {"role": "system", "content": s.system},
                    {"role": "user", "content": "{{question}}"},
                ],
            });
            if let Some(t) = temperature {
                body["temperature"] = json!(t);
            }
            if let Some(m) = s.max_tokens {
                body["max_tokens"] = json!(m);
            }
            Ok(HttpSettings {
                url: format!("{}/chat/completions", base(name, &s.url)?),
                body,
                answer: "/choices/0/message/content".into(),
                prompt_tokens: "/usage/prompt_tokens".into(),
                completion_tokens: "/usage/completion_tokens".into(),
                bearer_token: s.api_key,
                ..HttpSettings::default()
            })
        }
        other => Err(format!("\"{other}\" is no preset of the http method")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rag::http::fill;

    #[test]
    fn presets_fill_the_generic_template() {
        let lr = expand(
            "lightrag-server",
            &json!({"url": "http://h:9621/", "mode": "hybrid", "top_k": 20, "api_key": "k-1"}),
            None,
        )
        .unwrap();
        assert_eq!(lr.url, "http://h:9621/query");
        assert_eq!(lr.contexts_url, "http://h:9621/query/data");
        assert_eq!((lr.contexts.as_str(), lr.context_id.as_str()), ("/data/chunks", "chunk_id"));
        assert_eq!(lr.headers.get("X-API-Key").map(String::as_str), Some("k-1"));
        let body = fill(&lr.body, "Who?", &json!(3), Some(50));
        assert_eq!(
            body,
            json!({"query": "Who?", "mode": "hybrid", "top_k": 20, "response_type": "Multiple Paragraphs",
                   "user_prompt": "Answer in about 50 words.", "include_references": false})
        );
        // bypass retrieves nothing: no second request.
        let bypass = expand("lightrag-server", &json!({"mode": "bypass"}), None).unwrap();
        assert!(bypass.contexts_url.is_empty() && bypass.contexts.is_empty());
        assert!(expand("lightrag-server", &json!({"mode": "deep"}), None)
            .unwrap_err()
            .contains("one of local, global"));
        assert!(expand("lightrag-server", &json!({"url": "h:9621"}), None).unwrap_err().contains("http://"));

        let g = expand("ms-graphrag", &json!({"method": "drift"}), None).unwrap();
        assert_eq!(g.url, "http://127.0.0.1:9622/query");
        let body = fill(&g.body, "Why?", &json!(1), Some(80));
        assert_eq!(body["response_type"], "Multiple Paragraphs Answer in about 80 words.");
        assert_eq!(fill(&g.body, "Why?", &json!(1), None)["response_type"], "Multiple Paragraphs");
        assert!(expand("ms-graphrag", &json!({"method": "dirft"}), None)
            .unwrap_err()
            .contains("local, global, drift, basic"));

        let c = expand("chat-baseline", &json!({"model": "m", "url": "https://api.example/v1"}), Some(0.0)).unwrap();
        assert_eq!(c.url, "https://api.example/v1/chat/completions");
        assert_eq!(c.answer, "/choices/0/message/content");
        assert_eq!(fill(&c.body, "Q", &json!(1), None)["messages"][1]["content"], "Q");
        assert_eq!(c.body["temperature"], 0.0);
        assert!(expand("chat-baseline", &json!({}), None).unwrap_err().contains("name the model"));
        // Unknown fields are named.
        assert!(expand("chat-baseline", &json!({"modle": "m"}), None).unwrap_err().contains("unknown field `modle`"));
    }

    #[test]
    fn every_preset_field_is_explained() {
        for (name, _) in PRESETS {
            let d = defaults(name).unwrap();
            let explained: Vec<&str> = fields(name).iter().map(|f| f.0).collect();
            let mut keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            let mut sorted = explained.clone();
            sorted.sort_unstable();
            assert_eq!(keys, sorted, "{name}");
        }
        let http: Vec<String> = json!(HttpSettings::default()).as_object().unwrap().keys().cloned().collect();
        let mut explained: Vec<String> = fields("http").iter().map(|f| f.0.to_string()).collect();
        explained.sort_unstable();
        let mut http = http;
        http.sort_unstable();
        assert_eq!(http, explained);
    }
}

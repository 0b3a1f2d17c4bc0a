//! The "HTTP endpoint" method: a user's own RAG service answers. Assay POSTs
//! each question to `url` as the JSON `body` template with `{{question}}`,
//! `{{question_id}}`, `{{target_words}}` and `{{length_hint}}` ("Answer in
//! about N words.", or nothing without a target length) filled in (in any
//! string of the template; a string that is exactly one placeholder becomes
//! the value itself, so `"{{target_words}}"` is a number or null), with
//! the `headers` given, and reads the answer at the JSON pointer `answer`
//! (RFC 6901, e.g. `/data/answer`) of the reply; optionally the contexts (a
//! list of strings or objects) and token counts at their own pointers. The
//! contexts may come from a second request (`contexts_url`, the same body):
//! LightRAG's server answers at `/query` and tells what it retrieved at
//! `/query/data`. A context that names the service's chunk (`context_id`)
//! or whose text is found in the project's chunks ([`ChunkMap`]) becomes
//! that chunk, so MAP, nDCG and Recall score the service's retrieval.
//!
//! Requests go through the same client as model calls: the configured
//! concurrency, timeout, retries with back-off (429, 5xx, timeouts, broken
//! connections, replies that are not JSON). A pointer that finds nothing
//! fails the item at once. The named presets ([`super::presets`]) are
//! filled-in settings of this method.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Answer, Method, Section};
use crate::llm::openai::{OpenAiConfig, OpenAiProvider};
use crate::llm::Meter;
use crate::llm::{ApiKey, BoxFuture, CallContext, Gateway, LlmError};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    pub url: String,
    pub body: Value,
    /// JSON pointer to the answer text in the reply.
    pub answer: String,
    /// JSON pointer to the retrieved contexts (empty: none).
    pub contexts: String,
    /// JSON pointers to token counts the service reports (empty: unknown).
    pub prompt_tokens: String,
    pub completion_tokens: String,
    /// Sent as `Authorization: Bearer …` when set (kept apart from the
    /// parameters as a secret, like the Settings page's key).
    pub bearer_token: String,
    /// More request headers (a header whose name says it is a key or token
    /// is a secret too).
    pub headers: BTreeMap<String, String>,
    /// Where the contexts come from when the answer's reply lacks them: the
    /// same body POSTed here, the contexts read from its reply (empty: from
    /// the answer's reply).
    pub contexts_url: String,
    /// The field of a context object naming the service's chunk (LightRAG:
    /// `chunk_id`); empty: none.
    pub context_id: String,
    /// The field of a context object holding its text (empty: `text`, else
    /// `content`; a context that is a string is its text).
    pub context_text: String,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            url: "http://127.0.0.1:8000/query".into(),
            body: json!({ "query": "{{question}}" }),
            answer: "/answer".into(),
            contexts: String::new(),
            prompt_tokens: String::new(),
            completion_tokens: String::new(),
            bearer_token: String::new(),
            headers: BTreeMap::new(),
            contexts_url: String::new(),
            context_id: String::new(),
            context_text: String::new(),
        }
    }
}

/// What `{{length_hint}}` becomes for a target length.
pub fn length_hint(target_words: Option<usize>) -> Option<String> {
    target_words.map(|t| format!("Answer in about {t} words."))
}

/// The template with its placeholders filled in.
pub fn fill(template: &Value, question: &str, question_id: &Value, target_words: Option<usize>) -> Value {
    let target = target_words.map_or(Value::Null, |t| json!(t));
    match template {
        Value::String(s) => match s.as_str() {
            "{{question}}" => json!(question),
            "{{question_id}}" => question_id.clone(),
            "{{target_words}}" => target,
            "{{length_hint}}" => length_hint(target_words).map_or(Value::Null, Value::String),
            _ => json!(s
                .replace("{{question}}", question)
                .replace("{{question_id}}", &question_id.to_string())
                .replace("{{target_words}}", &target_words.map_or(String::new(), |t| t.to_string()))
                .replace(" {{length_hint}}", &length_hint(target_words).map_or(String::new(), |h| format!(" {h}")))
                .replace("{{length_hint}}", &length_hint(target_words).unwrap_or_default())),
        },
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| fill(v, question, question_id, target_words)).collect())
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), fill(v, question, question_id, target_words))).collect())
        }
        other => other.clone(),
    }
}

/// One context as the service gave it: its own id for the chunk, if it
/// names one, and the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub id: Option<String>,
    pub text: String,
}

/// What a reply holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub answer: String,
    pub contexts: Vec<Context>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

fn parse(text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text).map_err(|e| LlmError::Parse(format!("the service's reply is not JSON: {e}")))
}

/// The start of a reply, for an error that says what came instead.
fn gist(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Reads a reply by the settings' pointers (the contexts too unless they
/// come from `contexts_url`).
pub fn read_reply(s: &HttpSettings, text: &str) -> Result<Reply, LlmError> {
    let v = parse(text)?;
    let answer = match v.pointer(&s.answer) {
        Some(Value::String(a)) if !a.trim().is_empty() => a.trim().to_string(),
        Some(other) if !other.is_null() && !other.is_string() => other.to_string(),
        _ => return Err(LlmError::Config(format!("the reply has no answer at \"{}\": {}", s.answer, gist(&v)))),
    };
    let contexts = if s.contexts.is_empty() || !s.contexts_url.is_empty() { Vec::new() } else { contexts_in(s, &v)? };
    let count = |pointer: &str| if pointer.is_empty() { None } else { v.pointer(pointer).and_then(Value::as_u64) };
    Ok(Reply {
        answer,
        contexts,
        prompt_tokens: count(&s.prompt_tokens),
        completion_tokens: count(&s.completion_tokens),
    })
}

/// Reads the contexts of a `contexts_url` reply.
pub fn read_contexts(s: &HttpSettings, text: &str) -> Result<Vec<Context>, LlmError> {
    contexts_in(s, &parse(text)?)
}

fn contexts_in(s: &HttpSettings, v: &Value) -> Result<Vec<Context>, LlmError> {
    let list = v.pointer(&s.contexts).and_then(Value::as_array).ok_or_else(|| {
        LlmError::Config(format!("the reply has no list of contexts at \"{}\": {}", s.contexts, gist(v)))
    })?;
    Ok(list
        .iter()
        .map(|c| {
            let field = |name: &str| c.get(name).and_then(Value::as_str).map(str::to_string);
            let text = c.as_str().map(str::to_string).or_else(|| {
                if s.context_text.is_empty() {
                    field("text").or_else(|| field("content"))
                } else {
                    field(&s.context_text)
                }
            });
            let id = (!s.context_id.is_empty())
                .then(|| c.get(&s.context_id))
                .flatten()
                .and_then(|id| id.as_str().map(str::to_string).or_else(|| id.as_i64().map(|i| i.to_string())));
            Context { id, text: text.unwrap_or_else(|| c.to_string()) }
        })
        .collect())
}

/// Finds a service's context among the project's chunks: by the chunk id
/// the service gave it when the corpus was imported from that service's
/// folder (`chunks.external_id`), else by its text — the chunk sharing the
/// most runs of 8 words with it, if they are at least a fifth of the
/// context's runs (a service that cut the same documents otherwise: its
/// chunk lies over one or more of Assay's).
#[derive(Debug, Default)]
pub struct ChunkMap {
    external: HashMap<String, i64>,
    /// A run of words' hash → the first chunk holding it.
    runs: HashMap<u64, i64>,
}

const RUN: usize = 8;

fn runs(text: &str) -> Vec<u64> {
    crate::text::word_runs(text, RUN)
}

impl ChunkMap {
    /// `external`: a chunk's id in the system it was imported from → its id.
    pub fn new(external: HashMap<String, i64>, chunks: &[(i64, String)]) -> ChunkMap {
        let mut map = HashMap::new();
        for (id, text) in chunks {
            for r in runs(text) {
                map.entry(r).or_insert(*id);
            }
        }
        ChunkMap { external, runs: map }
    }

    /// The project's chunk a context is, if it is found.
    pub fn locate(&self, context: &Context) -> Option<i64> {
        if let Some(id) = context.id.as_deref().and_then(|id| self.external.get(id)) {
            return Some(*id);
        }
        let runs = runs(&context.text);
        let mut votes: HashMap<i64, usize> = HashMap::new();
        for r in &runs {
            if let Some(id) = self.runs.get(r) {
                *votes.entry(*id).or_default() += 1;
            }
        }
        let (id, n) = votes.into_iter().max_by_key(|&(id, n)| (n, std::cmp::Reverse(id)))?;
        (n * 5 >= runs.len() && n >= 1).then_some(id)
    }

    /// The contexts as sections: a context found among the chunks is that
    /// chunk (`chunk`, its id); another is a `context` under the service's
    /// id, or its rank.
    pub fn sections(&self, contexts: Vec<Context>) -> Vec<Section> {
        contexts
            .into_iter()
            .enumerate()
            .map(|(i, c)| match self.locate(&c) {
                Some(chunk) => Section::new("chunk", chunk, 0.0, c.text),
                None => Section::new("context", c.id.clone().unwrap_or_else(|| i.to_string()), 0.0, c.text),
            })
            .collect()
    }
}

pub struct HttpMethod {
    settings: HttpSettings,
    client: OpenAiProvider,
    /// For `contexts_url`.
    contexts_client: Option<OpenAiProvider>,
    chunks: ChunkMap,
}

impl HttpMethod {
    /// `transport`: concurrency, timeout and attempts as for model calls;
    /// `chunks`: where contexts are found among the project's chunks.
    pub fn new(settings: HttpSettings, transport: &OpenAiConfig, chunks: ChunkMap) -> Result<HttpMethod, String> {
        if settings.answer.is_empty() || !settings.answer.starts_with('/') {
            return Err(format!("http: the answer pointer must start with /, not \"{}\"", settings.answer));
        }
        if !settings.contexts.is_empty() && !settings.contexts.starts_with('/') {
            return Err(format!("http: the contexts pointer must start with /, not \"{}\"", settings.contexts));
        }
        if !settings.contexts_url.is_empty() && settings.contexts.is_empty() {
            return Err("http: contexts_url needs the contexts pointer (where its reply lists them)".into());
        }
        let mut headers = Vec::new();
        for (name, value) in &settings.headers {
            reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("http: \"{name}\" is not a header name"))?;
            reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| format!("http: the value of header \"{name}\" is not a header value"))?;
            if let Some(v) = ApiKey::new(value.clone()) {
                headers.push((name.clone(), v));
            }
        }
        let client = |url: &str| {
            let mut config = OpenAiConfig::new(url, "");
            config.api_key = ApiKey::new(settings.bearer_token.clone());
            config.headers = headers.clone();
            config.concurrency = transport.concurrency;
            config.timeout = transport.timeout;
            config.max_attempts = transport.max_attempts;
            config.base_backoff = transport.base_backoff;
            config.max_backoff = transport.max_backoff;
            config.public_only = transport.public_only;
            OpenAiProvider::new(config).map_err(|e| format!("http: {e}"))
        };
        let contexts_client =
            if settings.contexts_url.is_empty() { None } else { Some(client(&settings.contexts_url)?) };
        Ok(HttpMethod { client: client(&settings.url)?, contexts_client, settings, chunks })
    }
}

impl Method for HttpMethod {
    fn name(&self) -> &'static str {
        "http"
    }

    /// Not used: the service retrieves and answers in one request.
    fn retrieve<'a>(
        &'a self,
        _gateway: &'a Gateway,
        _ctx: &'a CallContext,
        _meter: &'a mut Meter,
        _question: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Section>, String>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    fn answer<'a>(
        &'a self,
        _gateway: &'a Gateway,
        ctx: &'a CallContext,
        question: &'a str,
        target_words: Option<usize>,
    ) -> BoxFuture<'a, Result<Answer, String>> {
        Box::pin(async move {
            let started = Instant::now();
            let id = match ctx.item.as_deref().and_then(crate::jobs::ItemKey::parse) {
                Some(crate::jobs::ItemKey::Answer(id)) => Some(id),
                _ => None,
            };
            let body = fill(&self.settings.body, question, &id.map_or(Value::Null, |i| json!(i)), target_words);
            let failed = |f: crate::llm::Failure| format!("{} (after {} attempts)", f.error, f.attempts);
            // What the service retrieved first (LightRAG answers the second
            // request from its cache of the first's keywords).
            let from_second = match &self.contexts_client {
                Some(c) => Some(
                    c.post_json("http_contexts", &body, |text| read_contexts(&self.settings, text))
                        .await
                        .map_err(failed)?
                        .0,
                ),
                None => None,
            };
            let (mut reply, _attempts) = self
                .client
                .post_json("http_method", &body, |text| read_reply(&self.settings, text))
                .await
                .map_err(failed)?;
            if let Some(c) = from_second {
                reply.contexts = c;
            }
            let meter = Meter {
                prompt_tokens: reply.prompt_tokens.unwrap_or(0),
                completion_tokens: reply.completion_tokens.unwrap_or(0),
                ..Meter::default()
            };
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            Ok(Answer::new(reply.answer, self.chunks.sections(reply.contexts), meter, elapsed, started))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_strings_and_whole_values() {
        let t = json!({"q": "{{question}}", "prompt": "Q{{question_id}}: {{question}} ({{target_words}} words)",
                       "n": "{{target_words}}", "id": "{{question_id}}", "keep": [1, true, null]});
        let v = fill(&t, "Why \"salt\"?", &json!(7), Some(40));
        assert_eq!(
            v,
            json!({"q": "Why \"salt\"?", "prompt": "Q7: Why \"salt\"? (40 words)", "n": 40, "id": 7, "keep": [1, true, null]})
        );
        assert_eq!(fill(&json!("{{target_words}}"), "q", &json!(1), None), Value::Null);
    }

    #[tokio::test]
    async fn a_member_chosen_url_reaches_no_private_address_unless_the_owner_allows_it() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        // A service on loopback that counts the connections it gets.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let seen = connections.clone();
        tokio::spawn(async move {
            while let Ok((_socket, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
            }
        });
        let settings = |host: &str| HttpSettings { url: format!("http://{host}:{port}/query"), ..Default::default() };
        // The web server's transport: members' URLs may not be private.
        let transport = crate::llm::settings::LlmSettings::default().transport();
        let literal = HttpMethod::new(settings("127.0.0.1"), &transport, ChunkMap::default()).err().unwrap();
        assert!(literal.contains("loopback") && literal.contains("--allow-private-urls"), "{literal}");
        let hex = HttpMethod::new(settings("0x7f.0.0.1"), &transport, ChunkMap::default()).err().unwrap();
        assert!(hex.contains("127.0.0.1 is a loopback address"), "{hex}");
        // A name is checked where it resolves, and the refusal is not retried.
        let named = HttpMethod::new(settings("localhost"), &transport, ChunkMap::default()).unwrap();
        let gateway = Gateway::new(
            Arc::new(crate::offline::provider()),
            Arc::new(crate::llm::MemoryStore::default()),
            Default::default(),
        );
        let err = named.answer(&gateway, &CallContext::default(), "Why?", None).await.err().unwrap();
        assert!(err.contains("localhost (") && err.contains("loopback") && err.contains("(after 1 attempts)"), "{err}");
        assert_eq!(connections.load(Ordering::SeqCst), 0, "nothing reached the private service");
        // Allowed by the owner: the same URL is used.
        let allowed = crate::llm::settings::LlmSettings { allow_private_urls: true, ..Default::default() }.transport();
        assert!(HttpMethod::new(settings("127.0.0.1"), &allowed, ChunkMap::default()).is_ok());
    }

    #[test]
    fn replies_are_read_by_pointer_and_a_missing_answer_is_not_retried() {
        let s = HttpSettings {
            answer: "/data/answer".into(),
            contexts: "/data/docs".into(),
            prompt_tokens: "/usage/in".into(),
            ..Default::default()
        };
        let r =
            read_reply(&s, r#"{"data": {"answer": " Ada. ", "docs": ["one", {"text": "two"}]}, "usage": {"in": 90}}"#)
                .unwrap();
        assert_eq!(r.answer, "Ada.");
        assert_eq!(r.contexts.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["one", "two"]);
        assert!(r.contexts.iter().all(|c| c.id.is_none()));
        assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(90), None));
        let e = read_reply(&s, r#"{"data": {}}"#).unwrap_err();
        assert!(!e.is_retryable() && e.to_string().contains("no answer at \"/data/answer\": {\"data\":{}}"), "{e}");
        assert!(read_reply(&s, "<html>").unwrap_err().is_retryable());
    }

    #[test]
    fn contexts_become_the_projects_chunks_by_the_services_id_or_by_their_text() {
        let s = HttpSettings {
            contexts: "/data/chunks".into(),
            contexts_url: "http://h/query/data".into(),
            context_id: "chunk_id".into(),
            ..Default::default()
        };
        // Read from the second reply; the answer's reply is not asked for them.
        assert!(read_reply(&s, r#"{"answer": "A"}"#).unwrap().contexts.is_empty());
        let reply = r#"{"data": {"chunks": [
            {"chunk_id": "chunk-aa", "content": "whatever the service keeps"},
            {"chunk_id": "chunk-zz", "content": "The salt ships sailed from the harbour of Liverpool every Monday at dawn, laden with barrels."},
            {"chunk_id": "chunk-yy", "content": "Nothing of this is in the corpus at all, not one run of eight words in a row here."}]}}"#;
        let contexts = read_contexts(&s, reply).unwrap();
        assert_eq!(contexts[0], Context { id: Some("chunk-aa".into()), text: "whatever the service keeps".into() });
        let chunks = vec![
            (7, "Chapter one. Elsewhere entirely, a long way from any sea, the story begins.".to_string()),
            (
                8,
                "the salt ships sailed from the harbour of Liverpool every Monday at dawn laden with barrels of".into(),
            ),
        ];
        let map = ChunkMap::new(HashMap::from([("chunk-aa".to_string(), 7)]), &chunks);
        let sections = map.sections(contexts);
        let got: Vec<(&str, &str)> = sections.iter().map(|x| (x.kind.as_str(), x.id.as_str())).collect();
        assert_eq!(got, [("chunk", "7"), ("chunk", "8"), ("context", "chunk-yy")]);
        // Too little in common is no match.
        let stray = Context { id: None, text: format!("{} {}", chunks[1].1, "word ".repeat(400)) };
        assert_eq!(map.locate(&stray), None);
        let e = read_contexts(&s, r#"{"status": "failure", "message": "no index"}"#).unwrap_err();
        assert!(
            e.to_string().contains("no list of contexts at \"/data/chunks\"") && e.to_string().contains("no index")
        );
    }

    #[test]
    fn the_length_hint_is_a_sentence_or_nothing() {
        let t = json!({"user_prompt": "{{length_hint}}", "q": "{{question}} {{length_hint}}"});
        assert_eq!(
            fill(&t, "Why?", &json!(1), Some(60)),
            json!({"user_prompt": "Answer in about 60 words.", "q": "Why? Answer in about 60 words."})
        );
        assert_eq!(fill(&t, "Why?", &json!(1), None), json!({"user_prompt": null, "q": "Why?"}));
        let bad =
            HttpSettings { headers: BTreeMap::from([("X Key".to_string(), "v".to_string())]), ..Default::default() };
        let transport = OpenAiConfig::new("", "");
        assert_eq!(
            HttpMethod::new(bad, &transport, ChunkMap::default()).err().unwrap(),
            "http: \"X Key\" is not a header name"
        );
    }
}

//! The "HTTP endpoint" method: a user's own RAG service answers. Assay POSTs
//! each question to `url` as the JSON `body` template with `{{question}}`,
//! `{{question_id}}` and `{{target_words}}` filled in (in any string of the
//! template; a string that is exactly one placeholder becomes the value
//! itself, so `"{{target_words}}"` is a number or null), and reads the
//! answer at the JSON pointer `answer` (RFC 6901, e.g. `/data/answer`) of
//! the reply; optionally the contexts (a list of strings or objects with
//! `text`) and token counts at their own pointers. Requests go through the
//! same client as model calls: the configured concurrency, timeout, retries
//! with back-off (429, 5xx, timeouts, broken connections, replies that are
//! not JSON). A pointer that finds nothing fails the item at once.

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
    /// Sent as `Authorization: Bearer …` when set (stored with the answer
    /// set's parameters in the database file, like the Settings page's key).
    pub bearer_token: String,
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
        }
    }
}

/// The template with its placeholders filled in.
pub fn fill(template: &Value, question: &str, question_id: &Value, target_words: Option<usize>) -> Value {
    let target = target_words.map_or(Value::Null, |t| json!(t));
    match template {
        Value::String(s) => match s.as_str() {
            "{{question}}" => json!(question),
            "{{question_id}}" => question_id.clone(),
            "{{target_words}}" => target,
            _ => json!(s
                .replace("{{question}}", question)
                .replace("{{question_id}}", &question_id.to_string())
                .replace("{{target_words}}", &target_words.map_or(String::new(), |t| t.to_string()))),
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

/// What a reply holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub answer: String,
    pub contexts: Vec<Section>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// Reads a reply by the settings' pointers.
pub fn read_reply(s: &HttpSettings, text: &str) -> Result<Reply, LlmError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| LlmError::Parse(format!("the service's reply is not JSON: {e}")))?;
    let answer = match v.pointer(&s.answer) {
        Some(Value::String(a)) if !a.trim().is_empty() => a.trim().to_string(),
        Some(other) if !other.is_null() && !other.is_string() => other.to_string(),
        _ => return Err(LlmError::Config(format!("the reply has no answer at \"{}\"", s.answer))),
    };
    let contexts = if s.contexts.is_empty() {
        Vec::new()
    } else {
        let list = v
            .pointer(&s.contexts)
            .and_then(Value::as_array)
            .ok_or_else(|| LlmError::Config(format!("the reply has no list of contexts at \"{}\"", s.contexts)))?;
        list.iter()
            .enumerate()
            .map(|(i, c)| {
                let text = c.as_str().map(str::to_string).or_else(|| c["text"].as_str().map(str::to_string));
                Section::new("context", i, 0.0, text.unwrap_or_else(|| c.to_string()))
            })
            .collect()
    };
    let count = |pointer: &str| if pointer.is_empty() { None } else { v.pointer(pointer).and_then(Value::as_u64) };
    Ok(Reply {
        answer,
        contexts,
        prompt_tokens: count(&s.prompt_tokens),
        completion_tokens: count(&s.completion_tokens),
    })
}

pub struct HttpMethod {
    settings: HttpSettings,
    client: OpenAiProvider,
}

impl HttpMethod {
    /// `transport`: concurrency, timeout and attempts as for model calls.
    pub fn new(settings: HttpSettings, transport: &OpenAiConfig) -> Result<HttpMethod, String> {
        if settings.answer.is_empty() || !settings.answer.starts_with('/') {
            return Err(format!("http: the answer pointer must start with /, not \"{}\"", settings.answer));
        }
        let mut config = OpenAiConfig::new(settings.url.clone(), "");
        config.api_key = ApiKey::new(settings.bearer_token.clone());
        config.concurrency = transport.concurrency;
        config.timeout = transport.timeout;
        config.max_attempts = transport.max_attempts;
        config.base_backoff = transport.base_backoff;
        config.max_backoff = transport.max_backoff;
        config.public_only = transport.public_only;
        let client = OpenAiProvider::new(config).map_err(|e| format!("http: {e}"))?;
        Ok(HttpMethod { settings, client })
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
            let id = ctx.item.as_deref().and_then(|k| k.strip_prefix("a-")).and_then(|i| i.parse::<i64>().ok());
            let body = fill(&self.settings.body, question, &id.map_or(Value::Null, |i| json!(i)), target_words);
            let (reply, _attempts) = self
                .client
                .post_json("http_method", &body, |text| read_reply(&self.settings, text))
                .await
                .map_err(|f| format!("{} (after {} attempts)", f.error, f.attempts))?;
            let meter = Meter {
                prompt_tokens: reply.prompt_tokens.unwrap_or(0),
                completion_tokens: reply.completion_tokens.unwrap_or(0),
                ..Meter::default()
            };
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            Ok(Answer::new(reply.answer, reply.contexts, meter, elapsed, started))
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
        let literal = HttpMethod::new(settings("127.0.0.1"), &transport).err().unwrap();
        assert!(literal.contains("loopback") && literal.contains("--allow-private-urls"), "{literal}");
        let hex = HttpMethod::new(settings("0x7f.0.0.1"), &transport).err().unwrap();
        assert!(hex.contains("127.0.0.1 is a loopback address"), "{hex}");
        // A name is checked where it resolves, and the refusal is not retried.
        let named = HttpMethod::new(settings("localhost"), &transport).unwrap();
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
        assert!(HttpMethod::new(settings("127.0.0.1"), &allowed).is_ok());
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
        assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(90), None));
        let e = read_reply(&s, r#"{"data": {}}"#).unwrap_err();
        assert!(!e.is_retryable() && e.to_string().contains("no answer at \"/data/answer\""), "{e}");
        assert!(read_reply(&s, "<html>").unwrap_err().is_retryable());
    }
}

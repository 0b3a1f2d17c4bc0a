//! Secrets among a method's parameters: a bearer token, an API key, a
//! password, an `Authorization` value — any parameter (at any depth, the
//! body template's fields included) whose name says it is one.
//!
//! A secret is data of its own kind: [`split`] takes the secrets out of a
//! parameter object and leaves in their place a redaction (`••••1234`)
//! that is safe to show anyone who may read the object; the secrets
//! themselves ([`Secrets`]) are stored apart and put back ([`Secrets::apply`])
//! only where the method is built to run. Nothing that is shown — a
//! generated name, a job's settings, a report — is made from them.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a parameter named `name` holds a secret: a name with the word
/// token, key, secret, password, credential, cookie, authorization, auth
/// or bearer in it (`bearer_token`, `api_key`, `X-API-Key`, `apiKey`,
/// `client_secret`, `Authorization`), words split at `-`, `_`, spaces and
/// camelCase. Counts are not secrets: `prompt_tokens`, `max_tokens`,
/// `keywords` are not.
pub fn is_secret_name(name: &str) -> bool {
    const WORDS: [&str; 13] = [
        "token",
        "key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "credential",
        "credentials",
        "cookie",
        "authorization",
        "auth",
        "bearer",
        "pwd",
    ];
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() || (c.is_uppercase() && prev_lower) {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase() || c.is_numeric();
    }
    words.push(word);
    words.iter().any(|w| WORDS.contains(&w.as_str()))
}

/// What is shown in a secret's place: dots, and its last four characters
/// when it is long enough (16 or more) for them to give nothing away.
pub fn redact(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() >= 16 {
        format!("••••{}", chars[chars.len() - 4..].iter().collect::<String>())
    } else {
        "••••".to_string()
    }
}

/// Whether `value` is a redaction (a secret kept from an earlier request).
pub fn is_redacted(value: &str) -> bool {
    value.starts_with("••••")
}

/// The secrets taken out of a parameter object, by the JSON pointer
/// (RFC 6901) of their place in it. Its `Debug` shows the places alone.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Secrets(BTreeMap<String, String>);

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl Secrets {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Where the secrets go, as JSON pointers.
    pub fn places(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Puts the secrets back in their places of `shown`.
    pub fn apply(&self, shown: &mut Value) {
        for (pointer, secret) in &self.0 {
            if let Some(slot) = shown.pointer_mut(pointer) {
                *slot = Value::String(secret.clone());
            }
        }
    }

    /// The secrets as stored (a JSON object of pointer to secret), `None`
    /// when there are none.
    pub fn to_stored(&self) -> Option<String> {
        (!self.is_empty()).then(|| serde_json::to_string(&self.0).unwrap_or_default())
    }

    /// Secrets as [`Secrets::to_stored`] wrote them.
    pub fn from_stored(stored: Option<&str>) -> Result<Secrets, String> {
        match stored.map(str::trim).filter(|s| !s.is_empty()) {
            None => Ok(Secrets::default()),
            Some(s) => serde_json::from_str(s).map(Secrets).map_err(|e| format!("unreadable secrets: {e}")),
        }
    }
}

/// `params` with every secret replaced by its redaction, and the secrets.
/// A value that already is a redaction is left as it is (and no secret is
/// taken for it).
pub fn split(params: &Value) -> (Value, Secrets) {
    let mut shown = params.clone();
    let mut secrets = BTreeMap::new();
    walk(&mut shown, &mut String::new(), false, &mut secrets);
    (shown, Secrets(secrets))
}

fn walk(v: &mut Value, at: &mut String, secret: bool, out: &mut BTreeMap<String, String>) {
    match v {
        Value::String(s) if secret && !s.is_empty() && !is_redacted(s) => {
            out.insert(at.clone(), std::mem::replace(s, redact(s)));
        }
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                walk(child, at, secret || is_secret_name(k), out);
                at.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                walk(child, at, secret, out);
                at.truncate(len);
            }
        }
        // A number or a boolean under a secret's name is kept: it is no
        // credential, and hiding it would change what the method is sent.
        _ => {}
    }
}

/// `params` without any secret-named field at any depth: what a name or a
/// summary made from parameters may show.
pub fn without_secrets(params: &Value) -> Value {
    match params {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(k, _)| !is_secret_name(k)).map(|(k, v)| (k.clone(), without_secrets(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_secrets).collect()),
        other => other.clone(),
    }
}

/// A TOML document (an experiment's manifest) as it may be shown: the
/// same text when it holds no secret, else the document with every secret
/// redacted (rewritten, so its comments and layout are not kept); a text
/// that is not TOML is returned as it is (it never ran).
pub fn redact_toml(text: &str) -> String {
    let Ok(mut doc) = text.parse::<toml::Table>() else { return text.to_string() };
    fn walk(v: &mut toml::Value, secret: bool) -> bool {
        match v {
            toml::Value::String(s) if secret && !s.is_empty() && !is_redacted(s) => {
                *s = redact(s);
                true
            }
            toml::Value::Table(t) => t.iter_mut().fold(false, |any, (k, c)| walk(c, secret || is_secret_name(k)) | any),
            toml::Value::Array(a) => a.iter_mut().fold(false, |any, c| walk(c, secret) | any),
            _ => false,
        }
    }
    let found = doc.iter_mut().fold(false, |any, (k, c)| walk(c, is_secret_name(k)) | any);
    if found {
        toml::to_string(&doc).unwrap_or_default()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_names_are_recognised_in_any_spelling() {
        for n in [
            "bearer_token",
            "api_key",
            "API-Key",
            "x-api-key",
            "apiKey",
            "key",
            "access_token",
            "Authorization",
            "client_secret",
            "password",
            "Cookie",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in [
            "url",
            "body",
            "answer",
            "contexts",
            "prompt_tokens",
            "completion_tokens",
            "max_tokens",
            "k",
            "mode",
            "keywords",
            "top_k",
            "query",
            "monkey",
        ] {
            assert!(!is_secret_name(n), "{n}");
        }
    }

    #[test]
    fn secrets_are_split_out_redacted_and_put_back() {
        let params = json!({
            "url": "https://rag.example.org/q",
            "bearer_token": "CANARY-0123456789abcdef",
            "body": {"query": "{{question}}", "api_key": "short", "headers": [{"Authorization": "Bearer xyz"}]},
            "prompt_tokens": "/usage/in",
        });
        let (shown, secrets) = split(&params);
        let text = shown.to_string();
        assert!(!text.contains("CANARY") && !text.contains("short") && !text.contains("xyz"), "{text}");
        assert_eq!(shown["bearer_token"], "••••cdef");
        assert_eq!(shown["body"]["api_key"], "••••");
        assert_eq!(shown["prompt_tokens"], "/usage/in");
        assert_eq!(
            secrets.places().collect::<Vec<_>>(),
            ["/bearer_token", "/body/api_key", "/body/headers/0/Authorization"]
        );
        assert!(!format!("{secrets:?}").contains("CANARY"));
        let mut back = shown.clone();
        secrets.apply(&mut back);
        assert_eq!(back, params);
        // Stored and read back; a redaction given again takes no secret.
        let again = Secrets::from_stored(secrets.to_stored().as_deref()).unwrap();
        assert_eq!(again, secrets);
        assert!(split(&shown).1.is_empty());
        let bare = without_secrets(&params).to_string();
        assert!(
            !bare.contains("bearer_token")
                && !bare.contains("api_key")
                && !bare.contains("Authorization")
                && bare.contains("{{question}}"),
            "{bare}"
        );
        assert_eq!(Secrets::from_stored(None).unwrap(), Secrets::default());
    }

    #[test]
    fn a_manifest_with_a_secret_is_shown_redacted_and_one_without_as_written() {
        let plain = "# my run\nname = \"x\"\n[[methods]]\nname = \"bm25\"\n";
        assert_eq!(redact_toml(plain), plain);
        let secret = "name = \"x\"\n[[methods]]\nname = \"http\"\nparams = { url = \"https://r.example/q\", bearer_token = \"CANARY-0123456789abcdef\" }\n";
        let shown = redact_toml(secret);
        assert!(
            !shown.contains("CANARY") && shown.contains("••••cdef") && shown.contains("https://r.example/q"),
            "{shown}"
        );
    }
}

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

/// The place (a JSON pointer) of the first redaction in `params` — a
/// secret's value or an address as a reader was shown them (`••••1234`,
/// `https://host/?key=••••`) — which is no secret: settings copied from
/// what a reader sees would send the dots. `None` when there is none.
pub fn redaction_in(params: &Value) -> Option<String> {
    fn find(v: &Value, at: &mut String, secret: bool) -> bool {
        match v {
            Value::String(s) => (secret && is_redacted(s)) || (is_address(s) && s.contains("••••")),
            Value::Object(map) => map.iter().any(|(k, child)| {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                let found = find(child, at, secret || is_secret_name(k));
                if !found {
                    at.truncate(len);
                }
                found
            }),
            Value::Array(items) => items.iter().enumerate().any(|(i, child)| {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                let found = find(child, at, secret);
                if !found {
                    at.truncate(len);
                }
                found
            }),
            _ => false,
        }
    }
    let mut at = String::new();
    find(params, &mut at, false).then_some(at)
}

fn is_address(text: &str) -> bool {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
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

    /// What to replace in free text written before secrets were kept apart
    /// (an old answer set's name, an error naming an address), longest
    /// first: each secret and what is shown in its place — an address
    /// whole with its redacted form, then each of its credentials alone; a
    /// plain secret with its redaction. Texts under 4 characters are left
    /// out: replacing them in free text would mangle ordinary words.
    pub fn scrubs(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for secret in self.0.values() {
            let mut parts = Vec::new();
            match rewrite_url(secret, true, &mut parts) {
                Some(shown) => {
                    out.push((secret.clone(), shown));
                    out.extend(parts.into_iter().map(|p| {
                        let shown = redact(&p);
                        (p, shown)
                    }));
                }
                None => out.push((secret.clone(), redact(secret))),
            }
        }
        out.retain(|(s, _)| s.chars().count() >= 4);
        out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        out.dedup();
        out
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
        // An address that carries a credential (`?key=…`, `user:pass@`):
        // the whole address is the secret, shown with those parts redacted.
        Value::String(s) if !secret => {
            if let Some(shown) = redact_url(s) {
                out.insert(at.clone(), std::mem::replace(s, shown));
            }
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

/// An http(s) address with its credentials redacted — the password of
/// `user:password@`, and the value of every query parameter with a secret's
/// name (`?key=…`, `&access_token=…`) — or `None` when it carries none (or
/// is no address, or already shows a redaction).
pub fn redact_url(text: &str) -> Option<String> {
    rewrite_url(text, true, &mut Vec::new())
}

/// [`redact_url`], or with `redacted` false the address with those parts
/// left out (`user@host`, no `key=`): what a name made from it may show.
/// The credentials themselves are added to `found`.
fn rewrite_url(text: &str, redacted: bool, found: &mut Vec<String>) -> Option<String> {
    if !is_address(text) || text.contains("••••") {
        return None;
    }
    let scheme_end = text.find("://")? + 3;
    let (before_fragment, fragment) = match text.find('#') {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let (before_query, query) = match before_fragment.find('?') {
        Some(i) => (&before_fragment[..i], Some(&before_fragment[i + 1..])),
        None => (before_fragment, None),
    };
    let authority_end = before_query[scheme_end..].find('/').map_or(before_query.len(), |i| scheme_end + i);
    let mut changed = false;
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..scheme_end]);
    let authority = &before_query[scheme_end..authority_end];
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, password)) if !password.is_empty() => {
                changed = true;
                found.push(password.to_string());
                if redacted {
                    out.push_str(&format!("{user}:••••@{host}"));
                } else {
                    out.push_str(&format!("{user}@{host}"));
                }
            }
            _ => out.push_str(authority),
        },
        None => out.push_str(authority),
    }
    out.push_str(&before_query[authority_end..]);
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .filter_map(|pair| match pair.split_once('=') {
                Some((name, value)) if !value.is_empty() && is_secret_name(&percent_decoded(name)) => {
                    changed = true;
                    found.push(value.to_string());
                    redacted.then(|| format!("{name}={}", redact(value)))
                }
                _ => Some(pair.to_string()),
            })
            .collect();
        if !pairs.is_empty() {
            out.push('?');
            out.push_str(&pairs.join("&"));
        }
    }
    out.push_str(fragment);
    changed.then_some(out)
}

/// A query parameter's name, `%XX` and `+` decoded (as far as it is UTF-8).
fn percent_decoded(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `params` without any secret-named field at any depth: what a name or a
/// summary made from parameters may show.
pub fn without_secrets(params: &Value) -> Value {
    match params {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(k, _)| !is_secret_name(k)).map(|(k, v)| (k.clone(), without_secrets(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_secrets).collect()),
        Value::String(s) => Value::String(rewrite_url(s, false, &mut Vec::new()).unwrap_or_else(|| s.clone())),
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

/// The secrets a TOML document (an experiment's manifest) holds, found as
/// [`split`] finds them in JSON; none when the text is not TOML.
pub fn toml_secrets(text: &str) -> Secrets {
    match text.parse::<toml::Table>().ok().and_then(|doc| serde_json::to_value(doc).ok()) {
        Some(value) => split(&value).1,
        None => Secrets::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scrubs_name_each_secret_and_an_addresss_credentials_longest_first() {
        let (_, secrets) = split(&json!({
            "url": "https://u:hunter2hunter2@host/rag?api_key=KEY-1234567890abcdef&q=1",
            "bearer_token": "tok-0123456789abcdef",
            "password": "abc",
        }));
        let scrubs = secrets.scrubs();
        assert_eq!(
            scrubs,
            vec![
                (
                    "https://u:hunter2hunter2@host/rag?api_key=KEY-1234567890abcdef&q=1".to_string(),
                    "https://u:••••@host/rag?api_key=••••cdef&q=1".to_string()
                ),
                ("KEY-1234567890abcdef".to_string(), "••••cdef".to_string()),
                ("tok-0123456789abcdef".to_string(), "••••cdef".to_string()),
                ("hunter2hunter2".to_string(), "••••".to_string()),
            ],
            "a three-character secret is left out of free text"
        );
        let manifest = "[answers.http]\nurl = \"http://h/rag\"\nbearer_token = \"tok-0123456789abcdef\"\n";
        assert_eq!(toml_secrets(manifest).scrubs(), vec![("tok-0123456789abcdef".to_string(), "••••cdef".to_string())]);
        assert!(toml_secrets("not = [toml").is_empty());
    }

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
    fn settings_copied_from_a_readers_view_are_found_by_their_redaction() {
        assert_eq!(
            redaction_in(&json!({"url": "http://h/", "bearer_token": "••••cdef"})).as_deref(),
            Some("/bearer_token")
        );
        assert_eq!(
            redaction_in(&json!({"body": {"a": [1, {"api_key": "••••"}]}})).as_deref(),
            Some("/body/a/1/api_key")
        );
        assert_eq!(redaction_in(&json!({"url": "https://h/v1?api_key=••••"})).as_deref(), Some("/url"));
        // What split shows is found; what it was given is not.
        let given = json!({"url": "https://u:pw@h/", "headers": {"Authorization": "Bearer abcdefghijklmnop"}});
        assert_eq!(redaction_in(&given), None);
        assert!(redaction_in(&split(&given).0).is_some());
        // Dots in a text that is neither a secret nor an address are text.
        assert_eq!(redaction_in(&json!({"prompt": "••••", "top_k": 5})), None);
    }

    #[test]
    fn an_address_carrying_a_credential_is_a_secret_shown_redacted() {
        let key = "AIzaSyD-CANARYQUERYKEY-0042";
        let params = json!({
            "url": format!("https://api.example.org/v1/answer?model=m&key={key}#top"),
            "mirror": "http://alice:hunter2hunter2@10.0.0.5:8080/rag?q=1",
            "docs": "https://example.org/api?keywords=graph&max_tokens=5",
            "note": "key=not-a-url",
        });
        let (shown, secrets) = split(&params);
        assert_eq!(shown["url"], "https://api.example.org/v1/answer?model=m&key=••••0042#top");
        assert_eq!(shown["mirror"], "http://alice:••••@10.0.0.5:8080/rag?q=1");
        assert_eq!(shown["docs"], params["docs"], "no credential: kept");
        assert_eq!(shown["note"], params["note"]);
        assert!(!shown.to_string().contains(key) && !shown.to_string().contains("hunter2"));
        assert_eq!(secrets.places().collect::<Vec<_>>(), ["/mirror", "/url"]);
        let mut back = shown.clone();
        secrets.apply(&mut back);
        assert_eq!(back, params);
        // A name made from the parameters shows no credential either.
        // A name made from the parameters shows no credential, not even
        // its redaction: the parts are left out.
        let bare = without_secrets(&params);
        assert_eq!(bare["url"], "https://api.example.org/v1/answer?model=m#top");
        assert_eq!(bare["mirror"], "http://alice@10.0.0.5:8080/rag?q=1");
        assert_eq!(without_secrets(&json!("https://h/x?api_key=abc")), json!("https://h/x"));
        assert!(!bare.to_string().contains(key) && !bare.to_string().contains("••••"));
        // Encoded names are recognised; an address already redacted is left.
        assert_eq!(redact_url("https://h/x?api%5Fkey=abc"), Some("https://h/x?api%5Fkey=••••".into()));
        assert_eq!(redact_url("https://h/x?key=••••0042"), None);
        assert_eq!(redact_url("ftp://u:p@h/"), None);
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

//! What every task's prompt shares: the `<<<`/`>>>` markers around its
//! input, the hash of its template logged with each call, and reading the
//! JSON object out of a reply.

use sha2::{Digest, Sha256};

/// The JSON object in a reply (code fences and prose around it tolerated;
/// a reply cut mid-object keeps its complete elements, see
/// [`super::json`]); `what` names it in the errors ("no JSON object in
/// the verdict", "unreadable verdict: …").
pub fn json_object(reply: &str, what: &str) -> Result<serde_json::Value, String> {
    super::json::object(reply, what).map(|(v, _)| v)
}

/// Hex SHA-256 of a prompt template, stored with each call made from it.
pub fn prompt_hash(template: &str) -> String {
    Sha256::digest(template.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The text between the `<<<` and `>>>` markers that prompts put around
/// their input, so offline implementations can find it.
pub fn delimited(message: &str) -> Option<&str> {
    let start = message.find("<<<\n")? + 4;
    let end = message.rfind("\n>>>")?;
    (start <= end).then(|| &message[start..end])
}

//! Corpus import: uploaded files to documents.
//!
//! Accepted layouts:
//! - `.txt` and `.md`: one document per file, titled by the file name.
//! - `.jsonl` in the UltraDomain layout (the one LightRAG's experiments read):
//!   one JSON object per line with a `context` string; every other field is
//!   kept as metadata. Identical contexts are deduplicated, as LightRAG's
//!   preprocessing does.
//! - `.json`: a list of strings, or a list of objects in the `.jsonl` layout.
//! - `.zip`: an archive of any of the above (nested archives are refused).
//!
//! A file is taken whole or refused whole, with a [`Rejection`] naming the
//! file and the reason; one bad file never spoils the others. Text is
//! normalised on the way in: a UTF-8 byte-order mark is dropped and CRLF/CR
//! line endings become `\n`, so offsets are stable whatever the source OS.

use std::collections::HashMap;
use std::io::Read;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
pub use types::corpus::Rejection;

/// Limits applied while importing. The web server and the CLI read these
/// from configuration; the defaults suit a laptop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportLimits {
    /// Largest single file (or zip member, uncompressed) in bytes.
    pub max_file_bytes: u64,
    /// Most documents one project may hold.
    pub max_documents: usize,
    /// Most bytes one archive may unpack to, all members together.
    pub max_archive_bytes: u64,
    /// Most members one archive may hold.
    pub max_members: usize,
    /// Largest ratio of a member's unpacked to its packed size, once it has
    /// unpacked [`RATIO_GRACE`] bytes: text compresses 3–10×, a zip bomb
    /// a thousandfold.
    pub max_ratio: u64,
}

/// Bytes a member may unpack to before its compression ratio is checked.
pub const RATIO_GRACE: u64 = 1 << 20;

impl ImportLimits {
    /// The limits of an upload of at most `max_file_bytes`: no file or
    /// archive may unpack to more than that either.
    pub fn new(max_file_bytes: u64, max_documents: usize) -> ImportLimits {
        ImportLimits {
            max_file_bytes,
            max_documents,
            max_archive_bytes: max_file_bytes,
            max_members: 10_000,
            max_ratio: 100,
        }
    }
}

impl Default for ImportLimits {
    fn default() -> Self {
        ImportLimits::new(200 * 1024 * 1024, 100_000)
    }
}

/// A document ready to be stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewDocument {
    pub title: String,
    /// Where it came from: the file name, `archive.zip/member.txt`, or
    /// `file.jsonl line 7`.
    pub source: String,
    pub text: String,
    /// Fields of a JSON record other than `context`; empty for plain text.
    pub metadata: Map<String, Value>,
    /// Hex SHA-256 of `text`: the identity used for deduplication.
    pub content_hash: String,
}

/// A document with its token count and its chunks, ready to be stored.
#[derive(Debug, Clone)]
pub struct ChunkedDocument {
    pub doc: NewDocument,
    pub tokens: usize,
    pub chunks: Vec<crate::chunk::Chunk>,
}

/// Counts and chunks `docs` with `settings` (CPU work: call it off the
/// async workers).
pub fn chunk_documents(
    docs: Vec<NewDocument>,
    settings: &crate::chunk::ChunkSettings,
) -> Result<Vec<ChunkedDocument>, crate::chunk::ChunkSettingsError> {
    docs.into_iter()
        .map(|doc| {
            let tokens = crate::chunk::Bpe::count(settings.tokenizer, &doc.text);
            let chunks = crate::chunk::chunk_text(&doc.text, settings)?;
            Ok(ChunkedDocument { doc, tokens, chunks })
        })
        .collect()
}

/// What importing a batch of files produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportOutcome {
    pub documents: Vec<NewDocument>,
    pub rejected: Vec<Rejection>,
}

impl ImportOutcome {
    fn reject(&mut self, file: impl Into<String>, reason: impl Into<String>) {
        self.rejected.push(Rejection { file: file.into(), reason: reason.into() });
    }
}

/// The file types Assay reads, by extension.
pub const ACCEPTED_EXTENSIONS: &[&str] = &["txt", "md", "jsonl", "json", "zip"];

/// Imports a batch of uploaded files. Documents whose text repeats one
/// already in the batch are skipped with a rejection naming the first.
/// Deduplication against documents already stored is the caller's (it owns
/// the store), using [`NewDocument::content_hash`].
pub fn import_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>, limits: &ImportLimits) -> ImportOutcome {
    let mut out = ImportOutcome::default();
    for (name, bytes) in files {
        import_one(&mut out, &display_name(name), bytes, limits, true);
    }
    dedup(&mut out);
    out
}

/// Only the last path component of an uploaded or archived name is kept:
/// names never decide where anything is written.
fn display_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or("");
    let cleaned: String = last.chars().filter(|c| !c.is_control()).collect();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "unnamed".to_string()
    } else {
        cleaned
    }
}

fn extension(name: &str) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then(|| ext.to_ascii_lowercase())
}

fn import_one(out: &mut ImportOutcome, name: &str, bytes: &[u8], limits: &ImportLimits, allow_zip: bool) {
    if bytes.len() as u64 > limits.max_file_bytes {
        return out.reject(name, too_large(bytes.len() as u64, limits.max_file_bytes));
    }
    let ext = extension(name);
    match ext.as_deref() {
        Some("zip") if allow_zip => import_zip(out, name, bytes, limits),
        Some("zip") => out.reject(name, "nested archives are not supported"),
        Some("txt" | "md" | "jsonl" | "json") => {
            let text = match decode(bytes) {
                Ok(t) => t,
                Err(reason) => return out.reject(name, reason),
            };
            let result = match ext.as_deref() {
                Some("jsonl") => parse_jsonl(name, &text),
                Some("json") => parse_json(name, &text),
                _ => plain_document(name, &text),
            };
            match result {
                Ok(docs) => out.documents.extend(docs),
                Err(reason) => out.reject(name, reason),
            }
        }
        _ => out.reject(
            name,
            format!(
                "unsupported file type{}: Assay reads .txt, .md, .jsonl, .json and .zip",
                ext.map(|e| format!(" .{e}")).unwrap_or_default()
            ),
        ),
    }
}

/// UTF-8 only; a BOM is dropped and line endings normalised.
fn decode(bytes: &[u8]) -> Result<String, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!("not UTF-8 text (invalid byte at offset {}); save it as UTF-8 and upload again", e.valid_up_to())
    })?;
    Ok(normalize_newlines(text))
}

/// Newlines as `\n`, and no U+0000 (which PostgreSQL cannot store in
/// text, and which no document means): a document reads the same on
/// both databases.
fn normalize_newlines(text: &str) -> String {
    let text = if text.contains('\0') { text.replace('\0', "") } else { text.to_string() };
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text
    }
}

fn plain_document(name: &str, text: &str) -> Result<Vec<NewDocument>, String> {
    if text.trim().is_empty() {
        return Err("empty: the file has no text".into());
    }
    let heading = (extension(name).as_deref() == Some("md"))
        .then(|| text.lines().find_map(|l| l.strip_prefix("# ").map(str::trim).filter(|h| !h.is_empty())))
        .flatten();
    let title = heading.map(str::to_string).unwrap_or_else(|| title_from_file(name));
    Ok(vec![NewDocument::new(title, name.to_string(), text.to_string(), Map::new())])
}

fn title_from_file(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.replace(['_', '-'], " "),
        _ => name.to_string(),
    }
}

/// One record of the UltraDomain layout to a document.
fn record_document(file: &str, label: &str, value: Value) -> Result<Option<NewDocument>, String> {
    let mut obj = match value {
        Value::Object(obj) => obj,
        Value::String(s) => {
            return Ok((!s.trim().is_empty()).then(|| {
                NewDocument::new(
                    format!("{} {label}", title_from_file(file)),
                    format!("{file} {label}"),
                    normalize_newlines(&s),
                    Map::new(),
                )
            }))
        }
        other => {
            return Err(format!("{label}: expected an object with a \"context\" field, found {}", json_kind(&other)))
        }
    };
    let context = match obj.remove("context") {
        Some(Value::String(s)) => s,
        Some(other) => return Err(format!("{label}: \"context\" must be a string, found {}", json_kind(&other))),
        None => return Err(format!("{label}: no \"context\" field")),
    };
    if context.trim().is_empty() {
        return Ok(None);
    }
    let title = ["title", "name", "id"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(scalar_text))
        .unwrap_or_else(|| format!("{} {label}", title_from_file(file)));
    Ok(Some(NewDocument::new(title, format!("{file} {label}"), normalize_newlines(&context), obj)))
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn parse_jsonl(name: &str, text: &str) -> Result<Vec<NewDocument>, String> {
    let mut docs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let label = format!("line {}", i + 1);
        let value: Value = serde_json::from_str(line).map_err(|e| format!("malformed {label}: {e}"))?;
        docs.extend(record_document(name, &label, value).map_err(|e| format!("malformed {e}"))?);
    }
    if docs.is_empty() {
        return Err("empty: no record with a non-empty \"context\"".into());
    }
    Ok(docs)
}

fn parse_json(name: &str, text: &str) -> Result<Vec<NewDocument>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("malformed JSON: {e}"))?;
    let Value::Array(items) = value else {
        return Err(format!("expected a list of strings or objects, found {}", json_kind(&value)));
    };
    let mut docs = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        docs.extend(record_document(name, &format!("item {}", i + 1), item).map_err(|e| format!("malformed {e}"))?);
    }
    if docs.is_empty() {
        return Err("empty: the list has no non-empty text".into());
    }
    Ok(docs)
}

/// Unpacks an archive's members and imports each. Nothing in the archive is
/// trusted: members whose stored bytes overlap (the trick of the
/// non-recursive zip bomb, one member's data read again and again) refuse
/// the whole archive before anything is unpacked; the member count, each
/// member's size, its compression ratio and the archive's total are counted
/// on the bytes actually unpacked, as they are unpacked, never taken from
/// the headers.
fn import_zip(out: &mut ImportOutcome, name: &str, bytes: &[u8], limits: &ImportLimits) {
    let mut archive = match zip::ZipArchive::new(std::io::Cursor::new(bytes)) {
        Ok(a) => a,
        Err(e) => return out.reject(name, format!("not a readable zip archive: {e}")),
    };
    if archive.len() > limits.max_members {
        return out.reject(
            name,
            format!("refused: {} members, more than the limit of {} per archive", archive.len(), limits.max_members),
        );
    }
    if let Some(reason) = overlapping_members(&mut archive) {
        return out.reject(name, reason);
    }
    let mut members = 0;
    let mut unpacked = 0u64;
    for i in 0..archive.len() {
        let mut entry = match archive.by_index(i) {
            Ok(e) => e,
            Err(e) => {
                out.reject(format!("{name} member {}", i + 1), format!("unreadable: {e}"));
                continue;
            }
        };
        if entry.is_dir() {
            continue;
        }
        let member = display_name(entry.name());
        // Archive tools' metadata, not documents.
        if entry.name().starts_with("__MACOSX/") || member.starts_with("._") || member == ".DS_Store" {
            continue;
        }
        members += 1;
        let label = format!("{name}/{member}");
        if entry.size() > limits.max_file_bytes {
            out.reject(&label, too_large(entry.size(), limits.max_file_bytes));
            continue;
        }
        let packed = entry.compressed_size();
        let whole = Whole { len: bytes.len() as u64, unpacked };
        let data = match unpack(&mut entry, packed, limits, whole) {
            Ok(d) => d,
            Err(Unpack::Archive(reason)) => {
                out.reject(&label, reason.clone());
                return out.reject(name, format!("{reason}; the members after {member} were not read"));
            }
            Err(Unpack::Member(reason)) => {
                out.reject(&label, reason);
                continue;
            }
        };
        unpacked += data.len() as u64;
        drop(entry);
        import_one(out, &label, &data, limits, false);
    }
    if members == 0 {
        out.reject(name, "empty: the archive holds no files");
    }
}

/// Why unpacking a member stopped: the member alone, or the whole archive.
enum Unpack {
    Member(String),
    Archive(String),
}

/// The archive a member is read from: its size, and what its members
/// before this one unpacked to.
struct Whole {
    len: u64,
    unpacked: u64,
}

/// A member's bytes, read in slices and counted as they come: at most the
/// per-file limit; with the members before it, at most the archive's
/// total limit; past [`RATIO_GRACE`] no more than `max_ratio` times its
/// packed size; and, however small each member, the archive's members
/// together past [`RATIO_GRACE`] no more than `max_ratio` times the
/// archive's size (many small members of extreme ratio are a bomb too).
fn unpack(entry: &mut impl Read, packed: u64, limits: &ImportLimits, whole: Whole) -> Result<Vec<u8>, Unpack> {
    let room = limits.max_archive_bytes.saturating_sub(whole.unpacked);
    let mut data = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = match entry.read(&mut buf) {
            Ok(0) => return Ok(data),
            Ok(n) => n,
            Err(e) => return Err(Unpack::Member(format!("unreadable: {e}"))),
        };
        data.extend_from_slice(&buf[..n]);
        let read = data.len() as u64;
        if read > limits.max_file_bytes {
            return Err(Unpack::Member(too_large(read, limits.max_file_bytes)));
        }
        if read > room {
            return Err(Unpack::Archive(format!(
                "refused: the archive unpacks to more than the limit of {}",
                human_bytes(limits.max_archive_bytes)
            )));
        }
        if read > RATIO_GRACE && read > packed.saturating_mul(limits.max_ratio) {
            return Err(Unpack::Archive(format!(
                "refused: a member unpacks to more than {}× its packed size of {} (a zip bomb?)",
                limits.max_ratio,
                human_bytes(packed)
            )));
        }
        let total = whole.unpacked + read;
        if total > RATIO_GRACE && total > whole.len.saturating_mul(limits.max_ratio) {
            return Err(Unpack::Archive(format!(
                "refused: the archive's members unpack to more than {}× the archive's size of {} (a zip bomb?)",
                limits.max_ratio,
                human_bytes(whole.len)
            )));
        }
    }
}

/// Whether two members' stored bytes overlap, which no archiver writes.
fn overlapping_members<R: Read + std::io::Seek>(archive: &mut zip::ZipArchive<R>) -> Option<String> {
    let mut spans = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let Ok(e) = archive.by_index_raw(i) else { continue };
        spans.push((e.header_start(), e.data_start().saturating_add(e.compressed_size()), i));
    }
    spans.sort_unstable();
    spans.windows(2).find(|w| w[1].0 < w[0].1).map(|w| {
        format!(
            "refused: members {} and {} share their stored bytes (a zip bomb); no archiver writes that",
            w[0].2 + 1,
            w[1].2 + 1
        )
    })
}

fn dedup(out: &mut ImportOutcome) {
    let mut first: HashMap<String, String> = HashMap::new();
    let mut kept = Vec::with_capacity(out.documents.len());
    for doc in std::mem::take(&mut out.documents) {
        match first.get(&doc.content_hash) {
            Some(original) => out
                .rejected
                .push(Rejection { file: doc.source.clone(), reason: format!("duplicate: same text as {original}") }),
            None => {
                first.insert(doc.content_hash.clone(), doc.source.clone());
                kept.push(doc);
            }
        }
    }
    out.documents = kept;
}

impl NewDocument {
    pub fn new(title: String, source: String, text: String, metadata: Map<String, Value>) -> Self {
        let content_hash = content_hash(&text);
        NewDocument { title, source, text, metadata, content_hash }
    }
}

/// Hex SHA-256 of a text.
pub fn content_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn too_large(size: u64, limit: u64) -> String {
    let (a, b) = (human_bytes(size), human_bytes(limit));
    if a == b {
        // Rounding would hide the difference: say it exactly.
        format!("too large: {size} bytes exceeds the limit of {limit} bytes")
    } else {
        format!("too large: {a} exceeds the limit of {b}")
    }
}

/// `1.5 MB`-style sizes for messages.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KB", "MB", "GB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Hostile archives, for the tests and the zip-bomb benchmark.
#[doc(hidden)]
pub mod fixtures {
    use std::io::Write;

    /// The archive of issue 20: one deflated member of `size` zero bytes,
    /// and a central directory of `copies` (at most 1,000) entries that
    /// all point at it — 42 KB packed for 220 × 10 MB.
    pub fn overlapping_bomb(size: usize, copies: usize) -> Vec<u8> {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            w.start_file("bomb.txt", zip::write::SimpleFileOptions::default()).expect("in memory");
            w.write_all(&vec![b'0'; size]).expect("in memory");
            w.finish().expect("in memory");
        }
        let single = buf.into_inner();
        let cd = single.windows(4).position(|w| w == [0x50, 0x4b, 0x01, 0x02]).expect("a central directory");
        let name_len = u16::from_le_bytes([single[cd + 28], single[cd + 29]]) as usize;
        let extra_len = u16::from_le_bytes([single[cd + 30], single[cd + 31]]) as usize;
        let entry = &single[cd..cd + 46 + name_len + extra_len];
        let mut out = single[..cd].to_vec();
        let mut dir = Vec::new();
        for i in 0..copies {
            let mut e = entry.to_vec();
            e[46..46 + 8].copy_from_slice(format!("b{i:03}.txt").as_bytes());
            dir.extend_from_slice(&e);
        }
        out.extend_from_slice(&dir);
        out.extend_from_slice(&[0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0]);
        out.extend_from_slice(&(copies as u16).to_le_bytes());
        out.extend_from_slice(&(copies as u16).to_le_bytes());
        out.extend_from_slice(&(dir.len() as u32).to_le_bytes());
        out.extend_from_slice(&(cd as u32).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn import(files: &[(&str, &[u8])]) -> ImportOutcome {
        import_files(files.iter().copied(), &ImportLimits::default())
    }

    fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            for (name, data) in members {
                w.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
                w.write_all(data).unwrap();
            }
            w.finish().unwrap();
        }
        buf.into_inner()
    }

    #[test]
    fn nul_characters_are_dropped_from_documents() {
        let out = import(&[("nul.txt", b"one\0 two\r\nthree")]);
        assert_eq!(out.documents[0].text, "one two\nthree");
    }

    #[test]
    fn plain_text_is_normalised_and_titled_by_file_name() {
        let out = import(&[("my_notes.txt", b"\xEF\xBB\xBFline one\r\nline two\r")]);
        assert_eq!(out.rejected, vec![]);
        assert_eq!(out.documents[0].title, "my notes");
        assert_eq!(out.documents[0].text, "line one\nline two\n");
    }

    #[test]
    fn ultradomain_jsonl_keeps_metadata_and_dedups_contexts() {
        let data = b"{\"id\": \"a\", \"context\": \"Alpha text\", \"label\": 3}\n\n{\"id\": \"b\", \"context\": \"Beta\"}\n{\"id\": \"c\", \"context\": \"Alpha text\"}\n";
        let out = import(&[("mix.jsonl", data)]);
        assert_eq!(out.documents.len(), 2);
        assert_eq!(out.documents[0].title, "a");
        assert_eq!(out.documents[0].metadata.get("label"), Some(&Value::from(3)));
        assert!(!out.documents[0].metadata.contains_key("context"));
        assert_eq!(
            out.rejected,
            vec![Rejection {
                file: "mix.jsonl line 4".into(),
                reason: "duplicate: same text as mix.jsonl line 1".into()
            }]
        );
    }

    #[test]
    fn malformed_jsonl_names_the_line_and_refuses_the_file() {
        let out = import(&[
            ("bad.jsonl", b"{\"context\": \"ok\"}\n{\"context\": \"x\"\n"),
            ("good.md", b"intro\n# Hi there\n"),
        ]);
        assert_eq!(out.documents.len(), 1);
        assert_eq!(out.documents[0].title, "Hi there");
        assert_eq!(out.rejected.len(), 1);
        assert_eq!(out.rejected[0].file, "bad.jsonl");
        assert!(out.rejected[0].reason.starts_with("malformed line 2:"), "{}", out.rejected[0].reason);
        let missing = import(&[("m.jsonl", b"{\"text\": \"no context\"}\n")]);
        assert_eq!(missing.rejected[0].reason, "malformed line 1: no \"context\" field");
    }

    #[test]
    fn json_lists_of_strings_and_objects() {
        let out =
            import(&[("a.json", b"[\"one\", \"two\"]"), ("b.json", b"[{\"context\": \"three\", \"title\": \"T\"}]")]);
        assert_eq!(out.rejected, vec![]);
        let titles: Vec<_> = out.documents.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(titles, ["a item 1", "a item 2", "T"]);
        let obj = import(&[("c.json", b"{\"context\": \"x\"}")]);
        assert_eq!(obj.rejected[0].reason, "expected a list of strings or objects, found an object");
    }

    #[test]
    fn every_rejection_names_file_and_reason() {
        let limits = ImportLimits::new(10, 10);
        let out = import_files(
            [
                ("latin1.txt", &b"caf\xe9"[..]),
                ("blank.txt", &b"  \n\t"[..]),
                ("image.png", &b"\x89PNG"[..]),
                ("noext", &b"text"[..]),
                ("big.txt", &b"0123456789ABC"[..]),
            ],
            &limits,
        );
        let reasons: Vec<_> = out.rejected.iter().map(|r| (r.file.as_str(), r.reason.as_str())).collect();
        assert_eq!(
            reasons[0],
            ("latin1.txt", "not UTF-8 text (invalid byte at offset 3); save it as UTF-8 and upload again")
        );
        assert_eq!(reasons[1], ("blank.txt", "empty: the file has no text"));
        assert_eq!(
            reasons[2],
            ("image.png", "unsupported file type .png: Assay reads .txt, .md, .jsonl, .json and .zip")
        );
        assert_eq!(reasons[3], ("noext", "unsupported file type: Assay reads .txt, .md, .jsonl, .json and .zip"));
        assert_eq!(reasons[4], ("big.txt", "too large: 13 bytes exceeds the limit of 10 bytes"));
        assert!(out.documents.is_empty());
    }

    #[test]
    fn zip_members_are_imported_with_paths_stripped() {
        let z = zip_of(&[
            ("../../etc/passwd.txt", b"escape attempt"),
            ("dir/inner.md", b"inner"),
            ("nested.zip", b"PK"),
            ("__MACOSX/._inner.md", b"junk"),
        ]);
        let out = import(&[("bundle.zip", &z)]);
        let sources: Vec<_> = out.documents.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(sources, ["bundle.zip/passwd.txt", "bundle.zip/inner.md"]);
        assert_eq!(
            out.rejected,
            vec![Rejection {
                file: "bundle.zip/nested.zip".into(),
                reason: "nested archives are not supported".into()
            }]
        );
        let broken = import(&[("broken.zip", b"not a zip")]);
        assert!(broken.rejected[0].reason.starts_with("not a readable zip archive"));
    }

    #[test]
    fn overlapping_zip_bomb_is_refused_before_unpacking() {
        let bomb = fixtures::overlapping_bomb(10 << 20, 220);
        assert!(bomb.len() < 60_000, "the bomb is {} bytes", bomb.len());
        let out = import(&[("bomb.zip", &bomb)]);
        assert!(out.documents.is_empty());
        assert_eq!(out.rejected.len(), 1, "{:?}", out.rejected);
        assert_eq!(out.rejected[0].file, "bomb.zip");
        assert!(out.rejected[0].reason.contains("share their stored bytes"), "{}", out.rejected[0].reason);
    }

    #[test]
    fn highly_compressed_member_is_refused_by_ratio() {
        let z = zip_of(&[("ok.txt", b"fine text"), ("zeros.txt", &vec![b'0'; 3 << 20]), ("late.txt", b"never read")]);
        let out = import(&[("r.zip", &z)]);
        let files: Vec<_> = out.documents.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(files, ["r.zip/ok.txt"]);
        assert_eq!(out.rejected[0].file, "r.zip/zeros.txt");
        // The member's own ratio or the archive's, whichever is passed first.
        assert!(out.rejected[0].reason.contains("more than 100×"), "{}", out.rejected[0].reason);
        assert!(out.rejected[1].reason.contains("members after zeros.txt were not read"), "{}", out.rejected[1].reason);
    }

    /// Members each under the grace, each of extreme ratio: the archive's
    /// total is held to the ratio of the archive's size.
    #[test]
    fn small_members_of_extreme_ratio_count_toward_the_archive_ratio() {
        // 256 KiB each, each its own text (duplicates would be set aside).
        let texts: Vec<Vec<u8>> = (0..8).map(|i| format!("{i}{}", "ab".repeat(128 << 10)).into_bytes()).collect();
        let names: Vec<String> = (0..8).map(|i| format!("m{i}.txt")).collect();
        let members: Vec<(&str, &[u8])> = names.iter().zip(&texts).map(|(n, t)| (n.as_str(), &t[..])).collect();
        let z = zip_of(&members);
        assert!(z.len() < 12_000, "the archive is {} bytes", z.len());
        let out = import(&[("small.zip", &z)]);
        // The grace is 1 MiB of the whole: the fourth member passes it.
        assert_eq!(out.documents.len(), 3, "{:?}", out.rejected);
        assert_eq!(out.rejected[0].file, "small.zip/m3.txt");
        assert!(out.rejected[0].reason.contains("the archive's size"), "{}", out.rejected[0].reason);
        assert!(out.rejected[1].reason.contains("members after m3.txt were not read"), "{}", out.rejected[1].reason);
    }

    #[test]
    fn archive_total_and_member_count_are_bounded() {
        // Incompressible-ish text, so the ratio limit stays out of the way.
        let member = |seed: u64| -> Vec<u8> {
            let mut x = seed;
            (0..400_000)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    b'a' + ((x >> 59) % 26) as u8
                })
                .collect()
        };
        let (a, b, c) = (member(1), member(2), member(3));
        let z = zip_of(&[("a.txt", &a), ("b.txt", &b), ("c.txt", &c)]);
        let mut limits = ImportLimits::new(1 << 20, 10);
        let out = import_files([("t.zip", &z[..])], &limits);
        assert_eq!(out.documents.len(), 2, "{:?}", out.rejected);
        assert_eq!(out.rejected[0].file, "t.zip/c.txt");
        assert_eq!(out.rejected[0].reason, "refused: the archive unpacks to more than the limit of 1.0 MB");
        limits.max_archive_bytes = 10 << 20;
        limits.max_members = 2;
        let out = import_files([("t.zip", &z[..])], &limits);
        assert!(out.documents.is_empty());
        assert_eq!(out.rejected[0].reason, "refused: 3 members, more than the limit of 2 per archive");
    }

    #[test]
    fn uploaded_names_lose_their_directories() {
        assert_eq!(display_name("../../x.txt"), "x.txt");
        assert_eq!(display_name("C:\\Users\\me\\y.md"), "y.md");
        assert_eq!(display_name(".."), "unnamed");
    }

    #[test]
    fn real_ultradomain_slice_imports_five_documents() {
        let bytes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/ultradomain_mix_slice5.jsonl"))
                .unwrap();
        let out = import(&[("ultradomain_mix_slice5.jsonl", &bytes)]);
        assert_eq!(out.rejected, vec![]);
        assert_eq!(out.documents.len(), 5);
        assert_eq!(out.documents[0].title, "mix_ctx_22");
        assert!(out.documents[0].text.starts_with("Weep Not, Child is a 1964 novel"));
    }
}

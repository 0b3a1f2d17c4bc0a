//! The architecture's import rules, checked on the source: within each
//! crate, no module imports (through `use` or a `crate::`/`super::` path)
//! a module that imports it back, directly or through others. Edges into a
//! module's own ancestors (a child using its parent's types) do not count:
//! the parent owns the child. Test modules (`#[cfg(test)] mod tests`) are
//! left out: they may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `a/b/mod.rs` and `a/b.rs` are module `a::b`; `lib.rs` and `main.rs` the root.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The source without comments, string literals' contents and test modules.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if text[i..].starts_with("//") {
            i += text[i..].find('\n').unwrap_or(text.len() - i);
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(text.len() - i, |e| e + 2);
        } else if text[i..].starts_with("r#\"") || text[i..].starts_with("r\"") {
            // A raw string: to its closing quote and hashes.
            let hashes = text[i + 1..].find('"').unwrap();
            let close = format!("\"{}", "#".repeat(hashes));
            i += 2 + hashes;
            i += text[i..].find(close.as_str()).map_or(text.len() - i, |e| e + close.len());
            out.push_str("\"\"");
        } else if bytes[i] == b'\'' {
            // A char literal ('x', '\n', '\'') is skipped; a lifetime ('a) kept.
            let rest = &text[i + 1..];
            let len = if rest.starts_with('\\') {
                rest[2..].find('\'').map(|e| e + 3)
            } else {
                rest.chars().next().filter(|c| rest[c.len_utf8()..].starts_with('\'')).map(|c| c.len_utf8() + 1)
            };
            match len {
                Some(n) => {
                    i += 1 + n;
                    out.push_str("' '");
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else if bytes[i] == b'"' {
            // Skip a string literal (escapes included).
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    // Drop `#[cfg(test)] mod NAME { … }` blocks by brace matching.
    while let Some(start) = out.find("#[cfg(test)]") {
        let rest = &out[start..];
        let Some(open) = rest.find('{') else { break };
        let header = &rest[..open];
        if !header.contains("mod ") {
            out.replace_range(start..start + "#[cfg(test)]".len(), "");
            continue;
        }
        let mut depth = 0;
        let mut end = start + open;
        for (k, c) in out[start + open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(start..end, "");
    }
    out
}

/// Every path a file names that starts at `crate` or `super`, `use` trees expanded.
fn paths_in(code: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head = tree[..open].trim_end_matches("::");
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let base = if prefix.is_empty() { head.to_string() } else { format!("{prefix}::{head}") };
            let (mut depth, mut last) = (0, 0);
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&base, &inner[last..k], out);
                        last = k + 1;
                    }
                    _ => {}
                }
            }
            expand(&base, &inner[last..], out);
        } else if !tree.is_empty() {
            let leaf = tree.split(" as ").next().unwrap().trim();
            out.push(match (prefix.is_empty(), leaf) {
                (true, _) => leaf.to_string(),
                (false, "self") => prefix.to_string(),
                (false, _) => format!("{prefix}::{leaf}"),
            });
        }
    }
    let mut out = Vec::new();
    let compact: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    for stmt in compact.split(';') {
        if let Some(at) = stmt.find("use ") {
            let tree = stmt[at + 4..].trim();
            if tree.starts_with("crate::") || tree.starts_with("super::") || tree.starts_with("self::") {
                expand("", &tree.replace(' ', ""), &mut out);
            }
        }
    }
    // Paths used in place (`crate::ssr::store::jobs::get_job(…)`).
    let chars: Vec<char> = code.chars().collect();
    let text: String = chars.iter().collect();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(pos) = text[from..].find(start) {
            let at = from + pos;
            let before = text[..at].chars().last();
            from = at + start.len();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let end = text[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(text.len(), |e| at + e);
            out.push(text[at..end].trim_end_matches(':').to_string());
        }
    }
    out
}

/// The module a path names, resolved against `me`, cut to a known module.
fn target(me: &Module, path: &str, known: &BTreeSet<Module>) -> Option<Module> {
    let mut segs = path.split("::").filter(|s| !s.is_empty());
    let mut base: Module = match segs.next()? {
        "crate" => Vec::new(),
        "super" => me[..me.len().saturating_sub(1)].to_vec(),
        "self" => me.clone(),
        _ => return None,
    };
    for s in segs {
        if s == "super" {
            base.pop();
        } else {
            base.push(s.to_string());
        }
    }
    while !base.is_empty() && !known.contains(&base) {
        base.pop();
    }
    (!base.is_empty()).then_some(base)
}

/// The import cycles of the crate under `src`, as "a -> b -> a".
fn cycles(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let known: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for file in &files {
        let me = module_of(src, file);
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for path in paths_in(&code) {
            let Some(to) = target(&me, &path, &known) else { continue };
            // Not into itself, a descendant of itself (it owns those), or an ancestor.
            if to == me || to.starts_with(&me) || me.starts_with(&to) {
                continue;
            }
            edges.entry(me.clone()).or_default().insert(to);
        }
    }
    // Checked at every depth: modules cut to their first `depth` segments
    // (so `a -> b -> a::inner` is a cycle between `a` and `b`).
    let deepest = known.iter().map(Vec::len).max().unwrap_or(1);
    let mut found = BTreeSet::new();
    for depth in 1..=deepest {
        let cut = |m: &Module| m[..m.len().min(depth)].to_vec();
        let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (from, tos) in &edges {
            for to in tos {
                let (a, b) = (cut(from), cut(to));
                if !(a.starts_with(&b) || b.starts_with(&a)) {
                    graph.entry(a).or_default().insert(b);
                }
            }
        }
        found.extend(cycles_of(&graph));
    }
    found.into_iter().collect()
}

/// Each cycle of `graph` once, from its smallest module: "a -> b -> a".
fn cycles_of(graph: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for start in graph.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, trail)) = stack.pop() {
            for next in graph.get(&at).into_iter().flatten() {
                if next == start {
                    if trail.iter().all(|m| m >= start) {
                        let names: Vec<String> = trail.iter().chain([start]).map(|m| m.join("::")).collect();
                        found.insert(names.join(" -> "));
                    }
                } else if next > start && seen.insert(next.clone()) {
                    let mut t = trail.clone();
                    t.push(next.clone());
                    stack.push((next.clone(), t));
                }
            }
        }
    }
    found
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

#[test]
fn no_crate_has_an_import_cycle_between_its_modules() {
    for name in ["engine", "app", "server"] {
        let found = cycles(&crate_src(name));
        assert!(found.is_empty(), "{name} has import cycles:\n{}", found.join("\n"));
    }
}

#[test]
fn the_checker_finds_a_cycle_when_there_is_one() {
    let dir = std::env::temp_dir().join(format!("assay-layout-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(dir.join("a/mod.rs"), "pub mod inner;\nuse crate::b::thing;\n").unwrap();
    // The child's use of its parent does not count; the use of `b` does.
    std::fs::write(dir.join("a/inner.rs"), "use super::Thing;\n/* crate::b */\n").unwrap();
    std::fs::write(
        dir.join("b.rs"),
        "pub fn f() { crate::a::inner::g(); }\n#[cfg(test)]\nmod tests { use crate::a; }\n",
    )
    .unwrap();
    let found = cycles(&dir);
    assert_eq!(found, ["a -> b -> a"]);
    std::fs::write(dir.join("b.rs"), "pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::a; }\n").unwrap();
    assert!(cycles(&dir).is_empty(), "a test module's use is not an edge");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The statics below the server that may hold anything: memos of pure
/// functions, each keyed by its whole input (a prompt's hash, a text, a
/// folder, a file's path). Anything else a process keeps is passed down:
/// configuration in `Config`/`LlmSettings`, what it keeps per database in
/// the `Db` handle.
const MEMOS: &[(&str, &str)] = &[
    ("engine/src/llm/mod.rs", "SEEN"),
    ("engine/src/judge/scoring.rs", "SCORED"),
    ("engine/src/questions/hierarchy.rs", "SHIPPED"),
    ("engine/src/embed/minilm.rs", "LOADED"),
    ("engine/src/metrics/text.rs", "RULES"),
    ("app/src/ssr/preload.rs", "MANIFESTS"),
];

/// `(file, name)` of every `static` item (not `&'static`) in `code`.
fn statics_in(file: &str, code: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("static ") {
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c == '\'' || c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[at + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && name != "mut" {
            found.push((file.to_string(), name));
        }
    }
    found
}

/// Per-thread scratch below the server: working memory reused between
/// calls that no result depends on (a zstd context is reset for each text).
const SCRATCH: &[(&str, &str)] =
    &[("app/src/ssr/store/packed.rs", "PACKER"), ("app/src/ssr/store/packed.rs", "UNPACKER")];

/// Nothing below the server reads the environment or finds its own
/// executable, and no module there keeps process-wide state in a static
/// but the memos above (the browser's thread-local canvas aside: a page's
/// own state, in the page's thread).
#[test]
fn nothing_below_the_server_reads_the_environment_or_keeps_hidden_state() {
    let mut reads = Vec::new();
    let mut statics = Vec::new();
    for name in ["engine", "app"] {
        let src = crate_src(name);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let code = code_of(&std::fs::read_to_string(&file).unwrap());
            let shown = format!("{name}/src/{}", file.strip_prefix(&src).unwrap().display());
            for read in ["env::var", "env::vars", "env::args", "current_exe", "set_var"] {
                if code.contains(read) {
                    reads.push(format!("{shown}: {read}"));
                }
            }
            statics.extend(statics_in(&shown, &code));
        }
    }
    assert!(reads.is_empty(), "the environment read below the server:\n{}", reads.join("\n"));
    let hidden: Vec<String> = statics
        .iter()
        .filter(|(file, name)| !MEMOS.iter().chain(SCRATCH).any(|(f, n)| f == file && n == name))
        .filter(|(file, _)| !file.starts_with("app/src/components/explorer/canvas.rs"))
        .map(|(file, name)| format!("{file}: static {name}"))
        .collect();
    assert!(hidden.is_empty(), "process-wide statics that are not memos:\n{}", hidden.join("\n"));
    for (file, name) in MEMOS.iter().chain(SCRATCH) {
        assert!(
            statics.iter().any(|(f, n)| f == file && n == name),
            "{file} no longer has the static {name}: update MEMOS or SCRATCH"
        );
    }
}

#[test]
fn the_static_finder_finds_statics_and_not_lifetimes() {
    let code = "fn f() -> &'static str { static CACHE: X = 1; let a: &'static str = \"\"; }\nstatic mut N: u8 = 0;";
    assert_eq!(statics_in("f.rs", code), [("f.rs".to_string(), "CACHE".to_string())]);
}

/// The engine runs from the CLI, tests and benchmarks alone: no web
/// framework, no SQL, no server-side rendering among its dependencies.
#[test]
fn the_engine_depends_on_no_web_or_sql_crate() {
    let manifest = std::fs::read_to_string(crate_src("engine").join("../Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    for forbidden in ["leptos", "axum", "sqlx", "tower", "hyper", "rusqlite", "postgres"] {
        let named = deps.lines().any(|l| l.trim_start().starts_with(forbidden));
        assert!(!named, "engine depends on {forbidden}");
    }
}

/// Every `pub struct` of the files under `dir`: (file, name, field names, field types).
fn structs_in(dir: &Path) -> Vec<(String, String, Vec<(String, String)>)> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut out = Vec::new();
    for file in files {
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        let code = code.split("#[cfg(test)]\nmod tests").next().unwrap();
        let mut rest = code;
        while let Some(at) = rest.find("pub struct ") {
            rest = &rest[at + "pub struct ".len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let Some(open) = rest.find(['{', ';', '(']) else { break };
            if rest.as_bytes()[open] != b'{' {
                continue;
            }
            let body = &rest[open + 1..];
            let mut depth = 1;
            let end = body
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(body.len(), |(i, _)| i);
            let fields = body[..end]
                .split(",\n")
                .filter_map(|f| {
                    let f = f.trim();
                    let f = f.rsplit(']').next().unwrap().trim();
                    let (name, ty) = f.strip_prefix("pub ")?.split_once(':')?;
                    Some((name.trim().to_string(), ty.trim().trim_end_matches(',').to_string()))
                })
                .collect();
            out.push((file.display().to_string(), name, fields));
        }
    }
    out
}

/// A record the engine computes and a page shows is declared once, in
/// `types`: no struct of `app/src/model` has the same fields as one of the
/// engine's or of `types` (a view that differs — drops, adds or reshapes a
/// field — is not a copy), and no name is declared in both `types` and the
/// engine.
#[test]
fn no_record_is_declared_twice() {
    let model = structs_in(&crate_src("app").join("model"));
    let below: Vec<_> = structs_in(&crate_src("engine")).into_iter().chain(structs_in(&crate_src("types"))).collect();
    let names = |f: &[(String, String)]| f.iter().map(|(n, _)| n.clone()).collect::<BTreeSet<_>>();
    let mut copies = Vec::new();
    for (file, name, fields) in &model {
        if fields.len() < 2 {
            continue;
        }
        for (other_file, other, other_fields) in &below {
            if names(fields) == names(other_fields) {
                copies.push(format!("{file}: {name} has the fields of {other} ({other_file})"));
            }
        }
    }
    assert!(copies.is_empty(), "declared twice:\n{}", copies.join("\n"));
    let types = structs_in(&crate_src("types"));
    let mut engine_twice = Vec::new();
    for (file, name, fields) in structs_in(&crate_src("engine")) {
        if let Some(t) = types.iter().find(|t| fields.len() >= 2 && names(&t.2) == names(&fields)) {
            engine_twice.push(format!("{file}: {name} has the fields of types' {}", t.1));
        }
    }
    assert!(engine_twice.is_empty(), "declared in types and again in the engine: {engine_twice:?}");
    let types: BTreeSet<String> = types.into_iter().map(|s| s.1).collect();
    // The finder finds: a struct's fields, past attributes and nested braces.
    let tmp = tempfile::tempdir().unwrap();
    let sample = "/// A.\n#[derive(Debug)]\npub struct A {\n    #[serde(default)]\n    pub x: Vec<(i64, String)>,\n    pub y: Option<B>,\n}\npub struct U;\n";
    std::fs::write(tmp.path().join("a.rs"), sample).unwrap();
    let found = structs_in(tmp.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].2, [("x".into(), "Vec<(i64, String)>".into()), ("y".into(), "Option<B>".into())]);
    // And on the code: the model has structs, and a known record is in types.
    assert!(model.len() > 50 && types.contains("Ranking") && types.contains("Section"), "{}", model.len());
}

/// The fields that name a value from a fixed list: a wire type holds them
/// as a `types` closed set, never as text. The few that stay text are open
/// sets, each with its reason.
#[test]
fn no_wire_field_holds_a_closed_set_as_text() {
    const OPEN: &[(&str, &str)] = &[
        // Imported answers bring their own context kinds.
        ("Section", "kind"),
        // Where a document came from (its file name or address), and where
        // an authors' figure is cited from: text.
        ("DocumentSummary", "source"),
        ("FigureRow", "source"),
        // An entity's type is whatever the extractor or the imported index says.
        ("NodeBrief", "kind"),
        ("NodeDetail", "kind"),
        // A method's name: a built-in's, a preset's, or `imported`.
        ("AnswerSetView", "method"),
        ("SetMetricsView", "method"),
        ("CostRow", "method"),
        ("MethodCostView", "method"),
        ("AnswersRequest", "method"),
        // Who judged, in words ("llm (gpt-4o-mini)").
        ("EvaluationView", "judge"),
        // The legacy aspects in words ("LightRAG's 3 aspects (Comprehensiveness, …)").
        ("EvaluationView", "legacy_aspects"),
    ];
    let closed = [
        "kind",
        "status",
        "state",
        "stage",
        "provider",
        "protocol",
        "judge",
        "judge_prompt",
        "legacy_aspects",
        "unit",
        "relevance_unit",
        "definitions",
        "role",
        "access",
        "method",
        "tokenizer",
        "source",
        "generator",
    ];
    let mut text = Vec::new();
    let model: Vec<_> =
        structs_in(&crate_src("app").join("model")).into_iter().chain(structs_in(&crate_src("types"))).collect();
    for (file, name, fields) in &model {
        for (field, ty) in fields {
            let stringly = matches!(ty.as_str(), "String" | "Option<String>");
            if stringly && closed.contains(&field.as_str()) && !OPEN.contains(&(name.as_str(), field.as_str())) {
                text.push(format!("{file}: {name}.{field}: {ty}"));
            }
        }
    }
    assert!(text.is_empty(), "closed sets held as text:\n{}", text.join("\n"));
    for (name, field) in OPEN {
        let found = model.iter().any(|(_, n, fields)| {
            n == name && fields.iter().any(|(f, ty)| f == field && matches!(ty.as_str(), "String" | "Option<String>"))
        });
        assert!(found, "{name}.{field} is listed as open text but is not a text field of a wire type any more");
    }
}

/// `types` compiles to WebAssembly: serde (and serde_json) its only dependencies.
#[test]
fn the_types_crate_depends_on_serde_only_and_clap_for_the_cli() {
    // serde_json: a RAG method's parameters are an open table of JSON values.
    let manifest = std::fs::read_to_string(crate_src("types").join("../Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    let named: Vec<&str> = deps
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| l.split(['=', '.']).next().unwrap().trim())
        .collect();
    assert_eq!(named, ["serde", "serde_json", "clap"], "{deps}");
    // clap only as the CLI's option, which the WASM build (app's hydrate) never turns on.
    let clap = deps.lines().find(|l| l.starts_with("clap")).unwrap();
    assert!(clap.contains("optional = true"), "{clap}");
    assert!(manifest.contains("cli = [\"dep:clap\"]"), "{manifest}");
    let app = std::fs::read_to_string(crate_src("app").join("../Cargo.toml")).unwrap();
    let app_types = app.lines().find(|l| l.starts_with("types")).unwrap();
    assert!(!app_types.contains("cli"), "{app_types}");
}

//! The `assay` CLI, run as a user runs it: the real binary, a real SQLite
//! file in a temporary directory, `--json` output parsed and checked.

use crate::common::corpora;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap() }
    }

    fn db(&self) -> PathBuf {
        // A directory that does not exist yet: assay creates it.
        self.dir.path().join("nested").join("assay.db")
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(args)
            .env("ASSAY_DB", self.db())
            .env_remove("ASSAY_MAX_UPLOAD_MB")
            .output()
            .unwrap()
    }

    /// Runs with `--json`, expects success, parses stdout.
    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert!(out.status.success(), "assay {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("stdout of {args:?} is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
        })
    }

    /// Runs expecting failure; returns (exit code, stderr).
    fn fails(&self, args: &[&str]) -> (i32, String) {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "assay {args:?} should have failed; stdout: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        (out.status.code().unwrap(), String::from_utf8(out.stderr).unwrap())
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut buf);
    for (name, data) in members {
        w.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap();
    buf.into_inner()
}

#[test]
fn project_create_list_rename_delete_with_global_options_anywhere() {
    let env = Env::new();
    let created = env.json(&["project", "create", "Agriculture"]);
    assert_eq!(created["name"], "Agriculture");
    assert_eq!(created["documents"], 0);
    assert_eq!(created["chunk_tokens"], 1200);
    assert_eq!(created["chunk_overlap"], 100);
    assert_eq!(created["tokenizer"], "cl100k_base");
    assert!(env.db().is_file(), "the SQLite file exists where --db/ASSAY_DB says");

    let hiera = env.json(&["project", "create", "HieraRAG", "--chunk-tokens", "512", "--chunk-overlap", "50"]);
    assert_eq!(hiera["chunk_tokens"], 512);

    // --db and --json after the subcommand work as well as before it.
    let db = env.db();
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["project", "list", "--db", path(&db), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<_> = list.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["HieraRAG", "Agriculture"]);

    let renamed = env.json(&["project", "rename", "agriculture", "Agri"]);
    assert_eq!(renamed["name"], "Agri");
    let id = renamed["id"].as_i64().unwrap().to_string();
    let deleted = env.json(&["project", "delete", &id]);
    assert_eq!(deleted["name"], "Agri");
    assert_eq!(env.json(&["project", "list"]).as_array().unwrap().len(), 1);

    // Human output without --json.
    let out = env.run(&["project", "list"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("HieraRAG") && text.contains("documents"), "{text}");
}

#[test]
fn project_errors_are_one_line_and_non_zero() {
    let env = Env::new();
    env.json(&["project", "create", "Mix"]);
    let (code, err) = env.fails(&["project", "create", "mix"]);
    assert_eq!(code, 1);
    assert_eq!(err, "error: a project named \"mix\" already exists\n");
    let (_, err) = env.fails(&["project", "create", "   "]);
    assert_eq!(err, "error: a project needs a name\n");
    let (_, err) = env.fails(&["project", "create", "X", "--chunk-tokens", "100", "--chunk-overlap", "60"]);
    assert_eq!(err, "error: chunk_overlap: must be smaller than half the chunk size (49 tokens at most), not 60\n");
    // A value of a closed set is the command line's to refuse (a usage error, 2).
    let (code, err) = env.fails(&["project", "create", "Y", "--tokenizer", "gpt2"]);
    assert_eq!(code, 2);
    let first = err.lines().next().unwrap();
    assert_eq!(
        first,
        "error: invalid value 'gpt2' for '--tokenizer <TOKENIZER>': the tokenizer must be cl100k_base or o200k_base, not \"gpt2\""
    );
    let (_, err) = env.fails(&["corpus", "stats", "Nope"]);
    assert_eq!(err, "error: no project named \"Nope\"\n");
    let (_, err) = env.fails(&["corpus", "stats", "42"]);
    assert_eq!(err, "error: no project with id 42\n");
    let (_, err) = env.fails(&["corpus", "add", "Mix"]);
    assert_eq!(err, "error: name the files to add, or --sample for the sample corpus\n");
}

#[test]
fn corpus_add_real_corpora_and_stats_agree() {
    let env = Env::new();
    let id = env.json(&["project", "create", "Novels"])["id"].as_i64().unwrap();
    let alice = corpora().join("alice_in_wonderland.txt");
    let mix = corpora().join("ultradomain_mix_slice5.jsonl");
    let added = env.json(&["corpus", "add", "Novels", path(&alice), path(&mix)]);
    assert_eq!(added["added"], 6);
    assert_eq!(added["skipped"], serde_json::json!([]));
    // Alice is 36,780 cl100k_base tokens (engine's unit test); the five
    // UltraDomain contexts bring the corpus to 51,393.
    assert_eq!(added["tokens"], 51_393);
    assert_eq!(added["chunks"], 55);

    let stats = env.json(&["corpus", "stats", &id.to_string()]);
    assert_eq!(stats["documents"], 6);
    assert_eq!(stats["tokens"], added["tokens"]);
    assert_eq!(stats["chunks"], added["chunks"]);

    // Adding the same files again adds nothing; the CLI exits 2 so a script notices.
    let out = env.run(&["--json", "corpus", "add", "Novels", path(&alice)]);
    assert_eq!(out.status.code(), Some(2));
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(again["added"], 0);
    assert_eq!(again["skipped"][0]["file"], "alice_in_wonderland.txt");
    assert_eq!(
        again["skipped"][0]["reason"],
        "duplicate: the project already has this text as \"alice in wonderland\""
    );
    assert_eq!(again["tokens"], 51_393);
}

#[test]
fn every_rejection_names_the_file_and_keeps_what_is_stored() {
    let env = Env::new();
    env.json(&["project", "create", "P"]);
    let good = env.file("good.md", b"# Good\n\nThe Gryphon and the Mock Turtle danced the Lobster Quadrille.\n");
    let first = env.json(&["corpus", "add", "P", path(&good)]);
    assert_eq!(first["added"], 1);
    let before = env.json(&["corpus", "stats", "P"]);

    let latin1 = env.file("latin1.txt", b"caf\xe9 au lait\n");
    let empty = env.file("empty.txt", b"  \n\n");
    let pdf = env.file("paper.pdf", b"%PDF-1.7");
    let bad_line = env.file("bad.jsonl", b"{\"context\": \"one\"}\n{\"context\": \"two\"}\nnot json\n");
    let no_context = env.file("nocontext.jsonl", b"{\"text\": \"wrong field\"}\n");
    let bad_json = env.file("bad.json", b"[\"a\", ");
    let obj_json = env.file("obj.json", b"{\"context\": \"not a list\"}");
    let big = env.file("big.txt", &vec![b'a'; 1024 * 1024 + 1]);
    let missing = env.dir.path().join("missing.txt");
    let out = env.run(&[
        "--json",
        "corpus",
        "add",
        "P",
        "--max-upload-mb",
        "1",
        path(&latin1),
        path(&empty),
        path(&pdf),
        path(&bad_line),
        path(&no_context),
        path(&bad_json),
        path(&obj_json),
        path(&big),
        path(&missing),
    ]);
    assert_eq!(out.status.code(), Some(2), "nothing added: exit 2");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["added"], 0);
    let skipped: Vec<(String, String)> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["file"].as_str().unwrap().to_string(), s["reason"].as_str().unwrap().to_string()))
        .collect();
    let reason = |file: &str| {
        skipped
            .iter()
            .find(|(f, _)| f.ends_with(file))
            .map(|(_, r)| r.as_str())
            .unwrap_or_else(|| panic!("no rejection for {file}: {skipped:?}"))
    };
    assert_eq!(skipped.len(), 9, "{skipped:?}");
    assert_eq!(reason("latin1.txt"), "not UTF-8 text (invalid byte at offset 3); save it as UTF-8 and upload again");
    assert_eq!(reason("empty.txt"), "empty: the file has no text");
    assert_eq!(reason("paper.pdf"), "unsupported file type .pdf: Assay reads .txt, .md, .jsonl, .json and .zip");
    assert!(reason("bad.jsonl").starts_with("malformed line 3: expected ident"), "{}", reason("bad.jsonl"));
    assert_eq!(reason("nocontext.jsonl"), "malformed line 1: no \"context\" field");
    assert!(reason("bad.json").starts_with("malformed JSON: EOF while parsing"), "{}", reason("bad.json"));
    assert_eq!(reason("obj.json"), "expected a list of strings or objects, found an object");
    assert_eq!(reason("big.txt"), "too large: 1048577 bytes exceeds the limit of 1048576 bytes");
    assert!(reason("missing.txt").starts_with("cannot read: No such file or directory"), "{}", reason("missing.txt"));

    // Nothing stored was touched.
    let after = env.json(&["corpus", "stats", "P"]);
    assert_eq!(after, before);
}

#[test]
fn zip_archives_import_members_and_never_write_outside() {
    let env = Env::new();
    env.json(&["project", "create", "Z"]);
    let archive = env.file(
        "bundle.zip",
        &zip_of(&[
            ("../../../../tmp/escape.txt", b"An escape attempt is only a name."),
            ("docs/chapter.md", b"# Chapter One\n\nDown the rabbit hole.\n"),
            (
                "docs/records.jsonl",
                b"{\"id\": \"r1\", \"context\": \"First record.\"}\n{\"id\": \"r2\", \"context\": \"First record.\"}\n",
            ),
            ("inner.zip", b"PK\x03\x04"),
            ("notes.docx", b"binary"),
        ]),
    );
    let broken = env.file("broken.zip", b"PK but not really");
    let out = env.run(&["--json", "corpus", "add", "Z", path(&archive), path(&broken)]);
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["added"], 3, "{report}");
    let skipped = report["skipped"].to_string();
    assert!(skipped.contains("\"bundle.zip/inner.zip\",\"reason\":\"nested archives are not supported\""), "{skipped}");
    assert!(skipped.contains("\"bundle.zip/notes.docx\",\"reason\":\"unsupported file type .docx"), "{skipped}");
    assert!(skipped.contains("\"bundle.zip/records.jsonl line 2\",\"reason\":\"duplicate: same text as bundle.zip/records.jsonl line 1\""), "{skipped}");
    assert!(skipped.contains("\"file\":\"broken.zip\",\"reason\":\"not a readable zip archive"), "{skipped}");
    assert!(!Path::new("/tmp/escape.txt").exists(), "zip member names never decide a path");
}

#[test]
fn sample_corpus_loads_with_a_flag() {
    let env = Env::new();
    env.json(&["project", "create", "Demo"]);
    let report = env.json(&["corpus", "add", "Demo", "--sample"]);
    assert_eq!(report["added"], 5);
    assert!(report["tokens"].as_i64().unwrap() > 2500);
    assert_eq!(report["chunks"], 5, "each sample document fits one 1200-token chunk");
    let human = env.run(&["corpus", "stats", "Demo"]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(text.starts_with("Demo: 5 documents, "), "{text}");
}

#[test]
fn document_limit_is_enforced_per_project() {
    let env = Env::new();
    env.json(&["project", "create", "Small"]);
    let mix = corpora().join("ultradomain_mix_slice5.jsonl");
    let report = env.json(&["corpus", "add", "Small", "--max-documents", "3", path(&mix)]);
    assert_eq!(report["added"], 3);
    assert_eq!(report["skipped"].as_array().unwrap().len(), 2);
    assert_eq!(report["skipped"][0]["reason"], "over the limit of 3 documents per project");
}

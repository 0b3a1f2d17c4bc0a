//! Benchmark files in and out: small files written to each
//! format's published schema — GraphRAG-Bench's question list and corpus,
//! MultiHop-RAG's `MultiHopRAG.json` and `corpus.json`, UltraDomain's JSONL,
//! a table with its own column names — imported by the real `assay` binary
//! into a real database, their documents chunked, their evidence found in
//! the chunks; the set answered and exported as LightRAG's `reproduce/`
//! and GraphRAG-Bench's evaluators read it; the browser's form the same.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{self, assay, json};

/// A passage of a real novel (Sherlock Holmes), `words` words from word `from`.
fn passage(from: usize, words: usize) -> String {
    let text = std::fs::read_to_string(common::corpora().join("sherlock_holmes.txt")).unwrap();
    text.split_whitespace().skip(from).take(words).collect::<Vec<_>>().join(" ")
}

/// A sentence-sized quote of `text`: 14 words from word `at`.
fn quote(text: &str, at: usize) -> String {
    text.split_whitespace().skip(at).take(14).collect::<Vec<_>>().join(" ")
}

fn write(dir: &Path, name: &str, value: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value).unwrap();
    path.to_string_lossy().into_owned()
}

/// GraphRAG-Bench's layout: `Datasets/Corpus/novel.json` and
/// `Datasets/Questions/novel_questions.json`, two novels, six questions of
/// three of its four types, evidence quoted from the novels (one quote
/// from nowhere, one question without evidence).
fn graphrag_bench(dir: &Path) -> (String, String, Vec<String>) {
    let novels = [passage(2_000, 4_000), passage(30_000, 4_000)];
    let corpus = json!([
        {"corpus_name": "Novel-1661", "context": novels[0]},
        {"corpus_name": "Novel-1662", "context": novels[1]},
    ]);
    let evidence = vec![quote(&novels[0], 100), quote(&novels[0], 3_100), quote(&novels[1], 1_700)];
    let questions = json!([
        {"id": "Novel-1661-a", "source": "Novel-1661", "question": "Who spoke first?", "answer": "Holmes",
         "question_type": "Fact Retrieval", "evidence": [evidence[0]]},
        {"id": "Novel-1661-b", "source": "Novel-1661", "question": "What happened later?", "answer": "A visit",
         "question_type": "Fact Retrieval", "evidence": [evidence[1]]},
        {"id": "Novel-1662-a", "source": "Novel-1662", "question": "Why did they go?", "answer": "To see",
         "question_type": "Complex Reasoning", "evidence": [evidence[2]]},
        {"id": "Novel-1662-b", "source": "Novel-1662", "question": "Summarise the scene.", "answer": "They talk.",
         "question_type": "Contextual Summarize", "evidence": ["Pirates boarded the airship above the frozen lake at dawn"]},
        {"id": "Novel-1662-c", "source": "Novel-1662", "question": "Retell it as a poem.", "answer": "…",
         "question_type": "Contextual Summarize", "evidence": null},
        {"id": "Novel-9-a", "source": "Novel-9", "question": "From a novel not given?", "answer": "No",
         "question_type": "Fact Retrieval"},
    ]);
    (
        write(dir, "novel_questions.json", &questions.to_string()),
        write(dir, "novel.json", &corpus.to_string()),
        evidence,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn benchmark_files_import_with_references_categories_evidence_and_gold_documents() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "datasets").await;
    json(&assay(&db, &["--json", "project", "create", "B"], &[]).await);
    let (questions, corpus, evidence) = graphrag_bench(dir.path());

    // Without its corpus: refused with the reason, nothing stored.
    let out = assay(&db, &["questions", "import", "B", &questions, "--format", "graphrag-bench"], &[]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("give the corpus file too"), "{out:?}");
    let import = ["--json", "questions", "import", "B", &questions, "--format", "graphrag-bench", "--corpus", &corpus];
    // Over the project's document limit: refused whole.
    let mut limited = import.to_vec();
    limited.extend(["--max-documents", "1"]);
    let out = assay(&db, &limited, &[]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was imported"), "{out:?}");
    let pool = db.open().await;
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM documents", &[]).await, 0);

    let report = json(&assay(&db, &import, &[]).await);
    assert_eq!(report["documents_added"], 2, "{report}");
    assert_eq!(report["questions"], 6);
    assert_eq!(report["with_reference"], 6);
    assert_eq!(
        report["categories"],
        json!([["Fact Retrieval", 3], ["Complex Reasoning", 1], ["Contextual Summarize", 2]])
    );
    assert_eq!((report["evidence_located"].as_i64(), report["evidence_unlocated"].as_i64()), (Some(3), Some(1)));
    assert_eq!(report["without_sources"], 1, "the question of the novel not given");
    assert_eq!(report["unknown_documents"], json!(["Novel-9"]));
    let set = report["set_id"].as_i64().unwrap();

    // Each located question's sources are the chunks quoting its evidence,
    // in its own novel; the others' are all chunks of their novel.
    let rows: Vec<String> =
        common::texts(&pool, "SELECT source_chunk_ids FROM questions WHERE set_id = $1 ORDER BY idx", &[set]).await;
    let sources: Vec<Vec<i64>> = rows.iter().map(|r| serde_json::from_str(r).unwrap()).collect();
    for (q, quote) in evidence.iter().enumerate() {
        assert!(!sources[q].is_empty() && sources[q].len() <= 2, "question {q}: {:?}", sources[q]);
        let bodies = common::texts(
            &pool,
            &format!(
                "SELECT body FROM chunks WHERE id IN ({})",
                sources[q].iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            ),
            &[],
        )
        .await;
        let joined = bodies.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
        let head: String = quote.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
        assert!(joined.contains(&head), "question {q}: \"{head}\" not in its source chunks");
    }
    let second_novel = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.title = 'Novel-1662'",
        &[],
    )
    .await;
    assert!(second_novel > 2, "the novel is cut into {second_novel} chunks");
    assert_eq!(sources[3].len() as i64, second_novel, "evidence found nowhere: the whole gold document");
    assert_eq!(sources[4].len() as i64, second_novel);
    assert!(sources[5].is_empty());
    let stored: Vec<String> =
        common::texts(&pool, "SELECT COALESCE(evidence, '') FROM questions WHERE set_id = $1 ORDER BY idx", &[set])
            .await;
    assert_eq!(serde_json::from_str::<Vec<String>>(&stored[0]).unwrap(), [evidence[0].clone()]);
    assert_eq!(stored[4], "", "no evidence, none stored");

    // The same files again: the documents are there already; a second set.
    let again = json(&assay(&db, &import, &[]).await);
    assert_eq!((again["documents_added"].as_i64(), again["documents_present"].as_i64()), (Some(0), Some(2)));
    assert_ne!(again["set_id"], report["set_id"]);

    // Answered, and exported as the field's tools read it.
    let set = set.to_string();
    let answers =
        json(&assay(&db, &["--json", "answers", "generate", "B", "--set", &set, "--method", "bm25"], &[]).await);
    let answer_set = answers["answers_id"].to_string();
    let out =
        assay(&db, &["answers", "export", "B", "--answers", &answer_set, "--format", "graphrag-bench"], &[]).await;
    let predictions: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let list = predictions.as_array().unwrap();
    assert_eq!(list.len(), 6);
    for key in ["id", "question", "source", "context", "evidence", "question_type", "generated_answer", "ground_truth"]
    {
        assert!(list.iter().all(|p| p.get(key).is_some()), "{key} missing");
    }
    assert_eq!(list[0]["question_type"], "Fact Retrieval");
    assert_eq!(list[0]["ground_truth"], "Holmes");
    assert_eq!(list[0]["source"], "Novel-1661");
    assert_eq!(list[2]["source"], "Novel-1662");
    assert_eq!(list[0]["evidence"], json!([evidence[0]]));
    assert!(list[0]["context"].as_array().is_some_and(|c| !c.is_empty()), "bm25's retrieved chunks");
    assert!(list[0]["generated_answer"].as_str().is_some_and(|a| !a.is_empty()));

    // Seed 004's metrics score the retrieval against the benchmark's evidence,
    // per question type.
    let run = json(&assay(&db, &["--json", "metrics", "run", "B", "--set", &set, "--answers", &answer_set], &[]).await);
    let page = app::ssr::metrics::page(&pool, run["run_id"].as_i64().unwrap()).await.unwrap();
    let scored = &page.view.as_ref().unwrap().sets[0];
    let groups: Vec<(&str, usize)> = scored.per_category.iter().map(|m| (m.group.as_str(), m.n)).collect();
    assert_eq!(groups, [("Complex Reasoning", 1), ("Contextual Summarize", 2), ("Fact Retrieval", 3)], "{groups:?}");
    assert!(scored.overall.map.is_some_and(|m| (0.0..=1.0).contains(&m)) && scored.overall.recall.is_some());

    let out = assay(&db, &["questions", "export", "B", "--set", &set, "--format", "lightrag"], &[]).await;
    let queries = String::from_utf8(out.stdout).unwrap();
    assert!(queries.starts_with("- Question 1: Who spoke first?\n- Question 2: What happened later?\n"), "{queries}");
    let out = assay(&db, &["answers", "export", "B", "--answers", &answer_set, "--format", "lightrag"], &[]).await;
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results[5]["query"], "From a novel not given?");
    assert_eq!(results.as_array().unwrap().len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multihop_ultradomain_and_tables_import_by_their_own_fields() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "datasets-more").await;
    json(&assay(&db, &["--json", "project", "create", "M"], &[]).await);
    let articles = [passage(5_000, 400), passage(9_000, 400), passage(13_000, 400)];
    let corpus = json!([
        {"title": "A", "author": "x", "source": "Strand", "published_at": "1891-07-01T00:00:00+00:00",
         "category": "fiction", "url": "https://example.org/a", "body": articles[0]},
        {"title": "B", "author": "y", "source": "Strand", "published_at": "1891-08-01T00:00:00+00:00",
         "category": "fiction", "url": "https://example.org/b", "body": articles[1]},
        {"title": "C", "author": "z", "source": "Strand", "published_at": "1891-09-01T00:00:00+00:00",
         "category": "fiction", "url": "https://example.org/c", "body": articles[2]},
    ]);
    let queries = json!([
        {"query": "Does A agree with C?", "answer": "Yes", "question_type": "comparison_query",
         "evidence_list": [
            {"title": "A", "author": "x", "url": "https://example.org/a", "source": "Strand", "category": "fiction",
             "published_at": "1891-07-01T00:00:00+00:00", "fact": quote(&articles[0], 50)},
            {"title": "C", "author": "z", "url": "https://example.org/c", "source": "Strand", "category": "fiction",
             "published_at": "1891-09-01T00:00:00+00:00", "fact": quote(&articles[2], 300)}]},
        {"query": "Who won in 1999?", "answer": "Insufficient information.", "question_type": "null_query", "evidence_list": []},
    ]);
    let q = write(dir.path(), "MultiHopRAG.json", &queries.to_string());
    let c = write(dir.path(), "corpus.json", &corpus.to_string());
    let r = json(
        &assay(&db, &["--json", "questions", "import", "M", &q, "--format", "multihop-rag", "--corpus", &c], &[]).await,
    );
    assert_eq!((r["documents_added"].as_i64(), r["questions"].as_i64()), (Some(3), Some(2)), "{r}");
    assert_eq!(r["categories"], json!([["comparison_query", 1], ["null_query", 1]]));
    assert_eq!((r["evidence_located"].as_i64(), r["without_sources"].as_i64()), (Some(1), Some(1)));
    let pool = db.open().await;
    let set = r["set_id"].as_i64().unwrap();
    let first: Vec<i64> = serde_json::from_str(
        &common::texts(&pool, "SELECT source_chunk_ids FROM questions WHERE set_id = $1 AND idx = 0", &[set]).await[0],
    )
    .unwrap();
    let titles = common::texts(
        &pool,
        &format!(
            "SELECT DISTINCT d.title FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({}) ORDER BY 1",
            first.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        ),
        &[],
    )
    .await;
    assert_eq!(titles, ["A", "C"], "the two articles its facts quote, not B");

    // UltraDomain: LightRAG's evaluation lines; and the shared slice, whose
    // lines are contexts only (documents, no questions, no set).
    let lines = [
        json!({"input": "What is the case about?", "context": articles[0], "answers": ["A theft."], "length": 400,
               "context_id": "mix-1", "_id": "q1", "label": "mix"}),
        json!({"input": "Who solved it?", "context": passage(20_000, 300), "answers": ["Holmes"], "length": 300,
               "context_id": "mix-2", "_id": "q2", "label": "mix"}),
    ];
    let u = write(dir.path(), "mix.jsonl", &lines.iter().map(|l| format!("{l}\n")).collect::<String>());
    let r = json(&assay(&db, &["--json", "questions", "import", "M", &u, "--format", "ultradomain"], &[]).await);
    assert_eq!((r["documents_added"].as_i64(), r["documents_present"].as_i64()), (Some(1), Some(1)), "{r}");
    assert_eq!(r["categories"], json!([["mix", 2]]));
    assert_eq!(r["without_sources"], 0);
    let slice = common::corpora().join("ultradomain_mix_slice5.jsonl");
    let r = json(
        &assay(&db, &["--json", "questions", "import", "M", slice.to_str().unwrap(), "--format", "ultradomain"], &[])
            .await,
    );
    assert_eq!(
        (r["documents_added"].as_i64(), r["questions"].as_i64(), r["set_id"].clone()),
        (Some(5), Some(0), Value::Null),
        "{r}"
    );

    // A table under its own column names; a bad override is refused.
    let t = write(
        dir.path(),
        "qa.csv",
        &format!(
            "Query,Gold,Kind,Passage\nWhat is named?,{},fact,\"{}\"\n",
            "Holmes",
            articles[1].replace('"', "\"\"")
        ),
    );
    let out = assay(&db, &["questions", "import", "M", &t, "--format", "table", "--columns", "colour=Kind"], &[]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown role \"colour\""), "{out:?}");
    let args = [
        "--json",
        "questions",
        "import",
        "M",
        &t,
        "--format",
        "table",
        "--columns",
        "question=Query,reference=Gold,category=Kind,context=Passage",
    ];
    let r = json(&assay(&db, &args, &[]).await);
    assert_eq!(
        (r["documents_present"].as_i64(), r["questions"].as_i64(), r["without_sources"].as_i64()),
        (Some(1), Some(1), Some(0)),
        "{r}"
    );
}

/// The Questions page's form: the benchmark's two files in one upload,
/// and its refusal, both back on the page with what happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_form_imports_a_benchmark_and_says_what_it_did() {
    use axum::body::Body;
    use axum::http::{header, Request, StatusCode};
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "datasets-web").await;
    json(&assay(&db, &["--json", "project", "create", "W"], &[]).await);
    json(&assay(&db, &["--json", "user", "create", "owner"], &[("ASSAY_PASSWORD", "correct horse battery")]).await);
    let owner =
        json(&assay(&db, &["--json", "user", "session", "owner"], &[]).await)["token"].as_str().unwrap().to_string();
    let (questions, corpus, _) = graphrag_bench(dir.path());
    let part = |name: &str, file: Option<&str>, body: &[u8]| {
        let disposition = match file {
            Some(f) => format!("form-data; name=\"{name}\"; filename=\"{f}\""),
            None => format!("form-data; name=\"{name}\""),
        };
        let mut out = format!("--b9\r\nContent-Disposition: {disposition}\r\n\r\n").into_bytes();
        out.extend_from_slice(body);
        out.extend_from_slice(b"\r\n");
        out
    };
    let form = |with_corpus: bool| {
        let mut body = part("format", None, b"graphrag-bench");
        body.extend(part("file", Some("novel_questions.json"), &std::fs::read(&questions).unwrap()));
        if with_corpus {
            body.extend(part("corpus", Some("novel.json"), &std::fs::read(&corpus).unwrap()));
        }
        body.extend(part("name", None, b"GraphRAG-Bench novel"));
        body.extend_from_slice(b"--b9--\r\n");
        Request::post("/api/projects/1/questions/import")
            .header(header::CONTENT_TYPE, "multipart/form-data; boundary=b9")
            .header(header::COOKIE, format!("assay_session={owner}"))
            .body(Body::from(body))
            .unwrap()
    };
    let pool = db.open().await;
    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);

    let (status, headers, _) = common::send_to(&router, form(false)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let location = headers[header::LOCATION].to_str().unwrap().to_string();
    let decoded = location.replace('+', " ").replace("%20", " ").replace("%3A", ":");
    assert!(decoded.contains("import_error=graphrag-bench: give the corpus file too"), "{location}");
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM documents", &[]).await, 0);

    let (status, headers, _) = common::send_to(&router, form(true)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let location = headers[header::LOCATION].to_str().unwrap().to_string();
    assert!(location.starts_with("/projects/1/questions?set="), "{location}");
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM documents", &[]).await, 2);
    assert_eq!(common::texts(&pool, "SELECT name FROM question_sets", &[]).await, ["GraphRAG-Bench novel"]);
    // The page it lands on says what was imported.
    let page = common::get_as(&location, &owner);
    let (status, _, html) = common::send_to(&router, page).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("2 documents added") && html.contains("6 questions (3 Fact Retrieval"),
        "{}",
        &html[..html.len().min(400)]
    );
}

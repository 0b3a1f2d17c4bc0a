//! The HieraRAG authors' human judging imported as a study
//! ("imported into Assay"): their own folder (engine/tests/fixtures/
//! hierarag_human, unchanged), uploaded as a zip through the Studies page's
//! form, becomes a closed answer-validation study — a question per `qa_id`,
//! an annotator per workbook — whose page and `judging.csv` give every
//! figure of their `human_annotation_results_summary.json` and
//! `complete_analysis_results.json` as their scripts compute it (to 1e-12),
//! beside Assay's standard reading. The CLI imports the same folder to the
//! same study. Each caller in turn; a bad upload stores nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common;
use common::get_as as get;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::{assay, json};

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/fixtures/hierarag_human")
}

/// Every file under the folder, by path relative to it.
fn files_of(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let name = format!("{prefix}{}", p.file_name().unwrap().to_str().unwrap());
        if p.is_dir() {
            files_of(&p, &format!("{name}/"), out);
        } else {
            out.push((name, std::fs::read(&p).unwrap()));
        }
    }
}

fn zip_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut buf);
    for (name, data) in members {
        w.start_file(format!("human_judging/{name}"), zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap();
    buf.into_inner()
}

/// The import form: `files` (each a file part) and a name.
fn upload(project: i64, cookie: &str, files: &[(&str, &[u8])]) -> Request<Body> {
    let mut body = Vec::new();
    for (name, data) in files {
        write!(
            body,
            "--b3\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .unwrap();
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--b3\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nTheir judging\r\n--b3--\r\n");
    Request::post(format!("/api/projects/{project}/studies/import"))
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=b3")
        .header(header::COOKIE, format!("assay_session={cookie}"))
        .body(Body::from(body))
        .unwrap()
}

fn location(h: &axum::http::HeaderMap) -> String {
    h.get(header::LOCATION).map(|l| l.to_str().unwrap().to_string()).unwrap_or_default()
}

fn decoded(url: &str) -> String {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authors_human_judging_imports_as_a_study_that_gives_their_figures() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "judging").await;
    json(&assay(&db, &["--json", "project", "create", "A"], &[]).await);
    json(&assay(&db, &["--json", "project", "create", "B"], &[]).await);
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let ed = common::member(&db, &router, &owner, "ed", Some("edit")).await;
    let ana = common::member(&db, &router, &owner, "ana", Some("read")).await;
    let cy = common::member(&db, &router, &owner, "cy", None).await;
    let mut files = Vec::new();
    files_of(&folder(), "", &mut files);
    let zip = zip_of(&files);
    let pool = db.open().await;
    let studies = || async { common::scalar(&pool, "SELECT COUNT(*) FROM studies", &[]).await };

    // Bad uploads come back with the reason and store nothing.
    let one_book: Vec<(String, Vec<u8>)> = files.iter().filter(|(n, _)| !n.contains("annotator_3")).cloned().collect();
    for (what, body, reason) in [
        ("one workbook", zip_of(&one_book), "1 COMPLETED_*.xlsx workbook(s); agreement needs two annotators"),
        ("not a zip", b"PK but not a zip".to_vec(), "not a readable zip archive"),
    ] {
        let (status, h, _) = common::send_to(&router, upload(1, &owner, &[("judging.zip", &body)])).await;
        assert_eq!(status, StatusCode::SEE_OTHER, "{what}");
        let to = location(&h);
        assert!(to.starts_with("/projects/1/studies?"), "{what}: {to}");
        assert!(decoded(&to).contains(reason), "{what}: {}", decoded(&to));
    }
    let no_shared: Vec<(&str, &[u8])> = files
        .iter()
        .filter(|(n, _)| n.ends_with(".xlsx"))
        .map(|(n, b)| (n.rsplit('/').next().unwrap(), b.as_slice()))
        .collect();
    let (_, h, _) = common::send_to(&router, upload(1, &owner, &no_shared)).await;
    assert!(decoded(&location(&h)).contains("shared_questions_list.csv is missing"), "{}", location(&h));
    assert_eq!(studies().await, 0, "nothing stored from a refused upload");
    let (_, _, page) = common::send_to(&router, get("/projects/1/studies?import_error=the+reason", &owner)).await;
    assert!(page.contains("id=\"import-judging-error\"") && page.contains("the reason"), "the reason shown");

    // Each caller: the edit right on the project the path names.
    for (caller, cookie, status) in [
        ("reader", ana.as_str(), StatusCode::FORBIDDEN),
        ("no rights", cy.as_str(), StatusCode::FORBIDDEN),
        ("anonymous", "", StatusCode::UNAUTHORIZED),
    ] {
        let (s, _, body) = common::send_to(&router, upload(1, cookie, &[("judging.zip", &zip)])).await;
        assert_eq!(s, status, "{caller}: {body}");
    }
    assert_eq!(common::send_to(&router, upload(2, &ed, &[("judging.zip", &zip)])).await.0, StatusCode::FORBIDDEN);
    assert_eq!(studies().await, 0);

    // The editor imports the zip: to the new study's page, with its report.
    let (status, h, _) = common::send_to(&router, upload(1, &ed, &[("judging.zip", &zip)])).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let to = location(&h);
    let study: i64 = to
        .strip_prefix("/projects/1/studies/")
        .and_then(|r| r.split('?').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{to}"));
    assert!(
        decoded(&to).contains("imported 110 questions rated by 2 annotators (")
            && decoded(&to).contains("30 questions shared"),
        "{}",
        decoded(&to)
    );
    // Stored as a closed study: an annotator per workbook (no usable link), their ratings.
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM study_items WHERE study_id = $1", &[study]).await, 110);
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM raters WHERE study_id = $1", &[study]).await, 2);
    let links =
        common::texts(&pool, "SELECT kind || ':' || label FROM study_links WHERE study_id = $1 ORDER BY id", &[study])
            .await;
    assert_eq!(
        links,
        [
            "imported:COMPLETED_annotation_batch_annotator_1_HYBRID.xlsx",
            "imported:COMPLETED_annotation_batch_annotator_3_HYBRID.xlsx"
        ]
    );
    assert_eq!(
        common::scalar(&pool, "SELECT COUNT(*) FROM study_links WHERE study_id = $1 AND revoked = FALSE", &[study])
            .await,
        0
    );
    // Every annotator row's scores, once per question: 70 + 70 rows, one
    // without scores; the category picks the rows asked for.
    let a = engine::study::hierarag_judging::analyse(&folder()).unwrap();
    let scored = |f: fn(&engine::study::hierarag_judging::Annotation) -> bool| {
        a.annotations.iter().flatten().filter(|r| f(r)).count() as i64
    };
    let n_ratings = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM ratings r JOIN raters ra ON ra.id = r.rater_id WHERE ra.study_id = $1 AND r.dimension = 0",
        &[study],
    )
    .await;
    assert_eq!(n_ratings, scored(|r| r.answer_correctness.is_some()));
    let picks = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM ratings r JOIN raters ra ON ra.id = r.rater_id WHERE ra.study_id = $1 AND r.dimension = 3",
        &[study],
    )
    .await;
    assert_eq!(
        picks,
        scored(|r| r.needs_category_validation
            && r.category_validation
                .as_deref()
                .is_some_and(|p| !p.trim().is_empty() && p != "Please leave cell blank"))
    );
    assert_eq!(
        common::scalar(&pool, "SELECT COUNT(*) FROM studies WHERE id = $1 AND is_open = FALSE", &[study]).await,
        1
    );

    // The page: the standard tables and the authors' figures beside them.
    let page_path = format!("/projects/1/studies/{study}");
    let (status, _, page) = common::send_to(&router, get(&page_path, &owner)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    for part in [
        "id=\"imported-figures\"",
        "id=\"judging-figures\"",
        "id=\"study-agreement\"",
        "id=\"category-agreement\"",
        "iaa_correctness",
        "coherence_vs_agreement r (per split)",
    ] {
        assert!(page.contains(part), "{part} on the page");
    }
    let (_, _, list) = common::send_to(&router, get("/projects/1/studies", &owner)).await;
    assert!(list.contains("imported annotator") && list.contains("Their judging"), "the Studies page lists it");
    let csv_path = format!("/api/studies/{study}/judging.csv");
    let (status, _, csv) = common::send_to(&router, get(&csv_path, &owner)).await;
    assert_eq!(status, StatusCode::OK, "{csv}");
    let rows: Vec<Vec<String>> = {
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect()
    };
    let value = |figure: &str, col: usize| -> f64 {
        rows.iter().find(|r| r[0] == figure).unwrap_or_else(|| panic!("{figure}"))[col].parse().unwrap()
    };
    // Every figure of their summary file, as their script computes it.
    assert_eq!(a.published.summary.len(), 9);
    for (key, theirs) in &a.published.summary {
        assert!((value(key, 1) - theirs).abs() < 1e-12, "{key}: {} vs {theirs}", value(key, 1));
        assert!((value(key, 2) - theirs).abs() < 1e-12, "{key}: the authors' file's value");
    }
    let (r8, p8) = a.published.metric_validation.unwrap();
    assert!((value("coherence_vs_agreement r (per split)", 1) - r8).abs() < 1e-12);
    assert!((value("coherence_vs_agreement p (per split)", 1) - p8).abs() < 1e-12);
    let (r9, _) = a.published.correlation_stat.unwrap();
    assert_eq!(format!("{:.3}", value("coherence_vs_agreement r (per question)", 1)), format!("{r9:.3}"));
    // The standard reading is Assay's own: κ over the 30 questions both scored.
    assert!((value("iaa_correctness", 3) - a.standard.iaa_correctness.unwrap()).abs() < 1e-12);

    // The CLI's import of the folder gives the same study's figures.
    let cli = json(&assay(&db, &["--json", "study", "import-hierarag", "A", folder().to_str().unwrap()], &[]).await);
    assert_eq!((cli["questions"].as_i64(), cli["annotators"].as_i64()), (Some(110), Some(2)), "{cli}");
    let results = json(&assay(&db, &["--json", "study", "results", &cli["study_id"].to_string()], &[]).await);
    let ours = json(&assay(&db, &["--json", "study", "results", &study.to_string()], &[]).await);
    assert_eq!(results["as_published"], ours["as_published"]);
    assert_eq!(results["results"], ours["results"], "the same ratings, the same standard results");
    assert_eq!(ours["results"]["raters"], 2);
    // Assay's own study results of the imported ratings agree with the
    // module's standard reading (κ over the questions both scored) and with
    // the authors' exact category agreement (a pick equal to the label).
    let kappa = ours["results"]["dimensions"][0]["agreement"]["fleiss_kappa"].as_f64().unwrap();
    assert!((kappa - a.standard.iaa_correctness.unwrap()).abs() < 1e-12, "{kappa}");
    let all = &ours["results"]["category"][1][0];
    assert_eq!((all["group"].as_str(), all["picks"].as_u64()), (Some("all"), Some(56)), "{all}");
    assert!((all["exact"].as_f64().unwrap() * 100.0 - a.summary.category_exact_agreement).abs() < 1e-9);

    // Readers: the owner and a reader see it; no rights, no session, no.
    common::readers(
        &router,
        &page_path,
        "id=\"judging-figures\"",
        &csv_path,
        &[
            ("owner", &owner, StatusCode::OK, StatusCode::OK),
            ("editor", &ed, StatusCode::OK, StatusCode::OK),
            ("reader", &ana, StatusCode::OK, StatusCode::OK),
            ("no rights", &cy, StatusCode::FORBIDDEN, StatusCode::FORBIDDEN),
            ("anonymous", "", StatusCode::SEE_OTHER, StatusCode::UNAUTHORIZED),
        ],
    )
    .await;
    // A share link's holder reads the figures through the link; its token is no session.
    let share = json(&assay(&db, &["--json", "share", "create", "A", "--page", &format!("study:{study}")], &[]).await);
    let token = share["token"].as_str().unwrap();
    let (status, _, shared) = common::send_to(&router, get(&format!("/share/{token}"), "")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(shared.contains("id=\"judging-figures\"") && shared.contains(&format!("/api/share/{token}/judging.csv")));
    let (status, _, via_link) = common::send_to(&router, get(&format!("/api/share/{token}/judging.csv"), "")).await;
    assert_eq!((status, via_link.as_str()), (StatusCode::OK, csv.as_str()));
    assert_eq!(common::send_to(&router, get(&page_path, token)).await.0, StatusCode::SEE_OTHER);
    assert_eq!(common::send_to(&router, upload(1, token, &[("judging.zip", &zip)])).await.0, StatusCode::UNAUTHORIZED);
    // A study that does not exist: nothing.
    assert_eq!(common::send_to(&router, get("/api/studies/999/judging.csv", &owner)).await.0, StatusCode::NOT_FOUND);
}

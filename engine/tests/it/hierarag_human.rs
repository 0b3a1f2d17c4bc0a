//! The HieraRAG authors' human-judging data (engine/tests/fixtures/
//! hierarag_human, their files unchanged) gives, as published, the figures
//! their scripts wrote: `human_annotation_results_summary.json` and
//! `complete_analysis_results.json`'s `human_metric_validation` to 1e-12,
//! `correlation_stat.txt` to its 3 decimals and, run with full precision by
//! scripts/refs/hierarag_human_refs.py, to 1e-12.

use std::path::Path;

use engine::study::hierarag_judging::analyse;

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
}

#[test]
fn the_authors_human_judging_files_give_their_published_figures() {
    let a = analyse(&fixtures().join("hierarag_human")).expect("the authors' folder reads");
    assert_eq!(a.workbooks.len(), 2);
    assert_eq!(a.annotations.iter().map(|v| v.len()).collect::<Vec<_>>(), vec![70, 70]);
    assert_eq!(a.shared.len(), 30);
    assert_eq!(a.ratios.len(), 18, "six splits in each of three dimensions");
    // Every figure of human_annotation_results_summary.json.
    assert_eq!(a.published.summary.len(), 9);
    let rows = a.rows();
    for (key, theirs) in &a.published.summary {
        let row = rows.iter().find(|r| &r.figure == key).unwrap_or_else(|| panic!("{key} not computed"));
        let ours = row.as_published.unwrap_or_else(|| panic!("{key} has no value"));
        assert!((ours - theirs).abs() < 1e-12, "{key}: Assay {ours} vs the authors' {theirs}");
    }
    assert_eq!(a.summary.shared, 30);
    assert_eq!(a.summary.questions, 110, "70 + 70 rows, 30 of them shared");
    assert_eq!(a.summary.picks, 56);
    // The per-dimension lines script 7 prints: QC 27.3% (n=22), AT 55.6% (n=9), LV 20.0% (n=25).
    let dims: Vec<(String, String, usize)> =
        a.summary.by_dimension.iter().map(|(d, v, n)| (d.clone(), format!("{v:.1}"), *n)).collect();
    assert_eq!(
        dims,
        vec![("QC".into(), "27.3".into(), 22), ("AT".into(), "55.6".into(), 9), ("LV".into(), "20.0".into(), 25)]
    );
    // Script 9: correlation_stat.txt to its 3 decimals, the full-precision run to 1e-12.
    let pq = a.coherence.per_question.expect("script 9's correlation");
    let (r3, p3) = a.published.correlation_stat.expect("correlation_stat.txt read");
    assert_eq!((format!("{:.3}", pq.r), format!("{:.3}", pq.p)), (format!("{r3:.3}"), format!("{p3:.3}")));
    let refs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("hierarag_human_refs.json")).unwrap()).unwrap();
    assert!((pq.r - refs["script9"]["r"].as_f64().unwrap()).abs() < 1e-12);
    assert!((pq.p - refs["script9"]["p"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(pq.n as u64, refs["script9"]["n"].as_u64().unwrap());
    // Script 8: r, p and its table of 14 splits.
    let ps = a.coherence.per_split.expect("script 8's correlation");
    let (r8, p8) = a.published.metric_validation.expect("human_metric_validation read");
    assert!((ps.r - r8).abs() < 1e-12, "{} vs {r8}", ps.r);
    assert!((ps.p - p8).abs() < 1e-12, "{} vs {p8}", ps.p);
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("hierarag_human/complete_analysis_results.json")).unwrap(),
    )
    .unwrap();
    let data = results["human_metric_validation"]["data"].as_object().unwrap();
    assert_eq!(a.coherence.splits.len(), data.len());
    for s in &a.coherence.splits {
        let d = &data[&s.split];
        assert!((s.coherence_ratio - d["Coherence_Ratio"].as_f64().unwrap()).abs() < 1e-12, "{}", s.split);
        assert!((s.agreed - d["Is_Agreed"].as_f64().unwrap()).abs() < 1e-12, "{}", s.split);
        assert_eq!(s.n as u64, d["N_Samples"].as_u64().unwrap(), "{}", s.split);
    }
    assert_eq!(ps.n, a.coherence.splits.iter().map(|s| s.n).sum::<usize>());
}

#[test]
fn a_folder_without_two_workbooks_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("completed_human")).unwrap();
    std::fs::copy(
        fixtures().join("hierarag_human/completed_human/COMPLETED_annotation_batch_annotator_1_HYBRID.xlsx"),
        dir.path().join("completed_human/COMPLETED_annotation_batch_annotator_1_HYBRID.xlsx"),
    )
    .unwrap();
    let err = analyse(dir.path()).unwrap_err().0;
    assert!(err.contains("1 COMPLETED_*.xlsx workbook(s); agreement needs two annotators"), "{err}");
    // A workbook that is not one.
    std::fs::write(dir.path().join("completed_human/COMPLETED_2.xlsx"), b"not a workbook").unwrap();
    std::fs::create_dir_all(dir.path().join("annotate_files")).unwrap();
    let err = analyse(dir.path()).unwrap_err().0;
    assert!(err.contains("COMPLETED_2.xlsx"), "{err}");
}

#[test]
fn the_folder_zipped_reads_as_the_folder_and_maps_to_a_study_row_for_row() {
    use engine::study::hierarag_judging::{files_of_zip, Inputs};
    use std::io::Write;
    let dir = fixtures().join("hierarag_human");
    let from_folder = Inputs::from_folder(&dir).unwrap();
    // The folder zipped as GitHub's download lays it out (one folder deep), plus a file Assay skips.
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default();
    for rel in [
        "completed_human/COMPLETED_annotation_batch_annotator_1_HYBRID.xlsx",
        "completed_human/COMPLETED_annotation_batch_annotator_3_HYBRID.xlsx",
        "annotate_files/shared_questions_list.csv",
        "complete_analysis_results.json",
        "human_annotation_results_summary.json",
        "correlation_stat.txt",
        "README.md",
    ] {
        w.start_file(format!("human_judging/{rel}"), opts).unwrap();
        w.write_all(&std::fs::read(dir.join(rel)).unwrap()).unwrap();
    }
    w.finish().unwrap();
    let files = files_of_zip(&buf.into_inner()).unwrap();
    assert_eq!(files.len(), 6, "README.md skipped");
    let from_zip = Inputs::from_files(&files, "the zip").unwrap();
    assert_eq!(from_zip, from_folder);

    // As a study: a question per qa_id, an annotator's row once per question.
    let s = from_folder.as_study().unwrap();
    assert_eq!(s.items.len(), 110);
    assert_eq!(s.repeated_rows, 0);
    assert_eq!(s.ratings.len(), 140);
    for (annotator, rows) in from_folder.annotations.iter().enumerate() {
        for row in rows {
            let item = s.items.iter().position(|i| i.qa_id == row.qa_id).unwrap();
            let r = s.ratings.iter().find(|r| r.annotator == annotator && r.item == item).unwrap();
            assert_eq!(r.scores[0].map(f64::from), row.answer_correctness, "{}", row.qa_id);
            assert_eq!(r.scores[1].map(f64::from), row.hallucination_score);
            assert_eq!(r.scores[2].map(f64::from), row.question_answerability);
            // A pick names its category; the item's category is the row's.
            let picked = r.scores[3].map(|i| s.items[item].choices[i as usize].rsplit('/').next().unwrap().to_string());
            let asked = row.needs_category_validation
                && row.category_validation.as_deref().is_some_and(|p| p != "Please leave cell blank");
            assert_eq!(picked, row.category_validation.clone().filter(|_| asked), "{}", row.qa_id);
            let category = s.items[item].category.as_deref().unwrap();
            assert!(category.starts_with(&format!("{}/", row.dimension)), "{category}");
            assert!(category.ends_with(&format!("/{}", row.category_name)), "{category}");
        }
    }
    assert!(s.ratings.iter().all(|r| r.scores[3].is_none_or(|i| i < 21)), "a pick fits a study's 0–20 scores");
    // A score off its scale refuses the import, naming where.
    let mut bad = from_folder.clone();
    bad.annotations[1][4].answer_correctness = Some(7.0);
    let err = bad.as_study().unwrap_err().0;
    assert!(
        err.contains("COMPLETED_annotation_batch_annotator_3_HYBRID.xlsx") && err.contains("answer_correctness is 7"),
        "{err}"
    );
}

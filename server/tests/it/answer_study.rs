//! Answer-validation studies (seed 004 §2.5) on a real SQLite file:
//! `assay study create --kind answers` over a hierarchical set's reference
//! answers; raters at the running server (127.0.0.1:0) see each question
//! with its answer, source passage and category choices, rate correctness
//! 0–3, hallucination 0–2, answerability 0–3 and pick a category; scores
//! off a scale are refused by name; `assay study rate` runs the offline LLM
//! rater on the same items; the results hold the distributions, κ, the
//! category agreement (exact and parent) and the LLM's agreement with the
//! humans; the CSV names the picked categories.

use crate::common;

use common::{assay, call, json, start_server as start};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raters_validate_answers_and_categories_and_the_llm_rater_is_compared_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "a").await;
    let set = common::sample_hierarchical(&db, "QC", 0).await;

    // Wrong combinations are refused before anything is made.
    let refused =
        assay(&db, &["study", "create", "A", "--questions", &format!("{set}:4"), "--answers", "1"], &[]).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("answer-validation study"));
    let refused = assay(
        &db,
        &["study", "create", "A", "--kind", "answers", "--questions", &format!("{set}:4"), "--attention", "1"],
        &[],
    )
    .await;
    assert!(String::from_utf8_lossy(&refused.stderr).contains("attention checks are for question-rating studies"));

    // 6 questions: 2 coarse (QC 2) and 4 medium (QC 4).
    let created = json(
        &assay(
            &db,
            &[
                "--json",
                "study",
                "create",
                "A",
                "--kind",
                "answers",
                "--questions",
                &format!("{set}:6"),
                "--raters",
                "3",
            ],
            &[],
        )
        .await,
    );
    let study = created["study_id"].as_i64().unwrap();
    let links: Vec<String> = created["rater_urls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect();
    let pool = db.open().await;
    // The generator's labels and the choices offered, by item.
    let rows: Vec<(i64, String, String)> = app::on_db!(&pool, |db| sqlx::query_as(
        "SELECT id, category, choices FROM study_items WHERE study_id = $1 ORDER BY idx"
    )
    .bind(study)
    .fetch_all(db)
    .await)
    .unwrap();
    assert_eq!(rows.len(), 6);
    let base = start(&db, dir.path()).await;
    let client = reqwest::Client::new();

    let (status, session) =
        call(&client, &base, "study/session", &[("link", links[0].clone()), ("rater", String::new())]).await;
    assert_eq!(status, 200, "{session}");
    let dims: Vec<&str> =
        session["dimensions"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(dims, ["Correctness", "Hallucination", "Answerability", "Category"]);
    assert_eq!(session["dimensions"][1]["labels"].as_array().unwrap().len(), 3, "hallucination 0–2");
    assert_eq!(session["dimensions"][0]["min"], 0);
    let first = &session["items"][0];
    assert!(first["answer"].as_str().is_some_and(|a| !a.is_empty()), "{first}");
    assert!(first["context"].as_str().is_some_and(|c| c.len() > 100), "the source passage");
    let n_choices = first["choices"].as_array().unwrap().len();
    assert!(n_choices == 2 || n_choices == 4, "{first}");
    assert!(!session.to_string().contains("reference answers"), "the answer's source is hidden");

    // Scores off a dimension's scale are refused, naming it.
    let item = first["id"].as_i64().unwrap();
    let rate = |link: &str, item: i64, scores: String| {
        let (client, base) = (client.clone(), base.clone());
        let form =
            vec![("link", link.to_string()), ("rater", String::new()), ("item", item.to_string()), ("scores", scores)];
        async move { call(&client, &base, "study/rate", &form).await }
    };
    let (status, body) = rate(&links[0], item, "3,3,3,0".into()).await;
    assert_ne!(status, 200, "{body}");
    assert!(body.to_string().contains("Hallucination: 3 is not a score from 0 to 2"), "{body}");
    let (status, body) = rate(&links[0], item, format!("3,0,3,{n_choices}")).await;
    assert!(status != 200 && body.to_string().contains(&format!("not one of the {n_choices} choices")), "{body}");

    // Rater 1 picks the generator's category, rater 2 a sibling under the
    // same parent (a medium item) or the other coarse one, rater 3 a
    // category under the other parent.
    let mut expected_parent = 0usize;
    for (r, link) in links.iter().enumerate() {
        let (status, _) =
            call(&client, &base, "study/session", &[("link", link.clone()), ("rater", String::new())]).await;
        assert_eq!(status, 200);
        for (n, (id, category, choices)) in rows.iter().enumerate() {
            let choices: Vec<Value> = serde_json::from_str(choices).unwrap();
            let paths: Vec<&str> = choices.iter().map(|c| c["path"].as_str().unwrap()).collect();
            let label = paths.iter().position(|p| p == category).unwrap();
            let parent = |p: &str| p.rsplit_once('/').unwrap().0.to_string();
            let medium = category.matches('/').count() == 2;
            let pick = match r {
                0 => label,
                1 if medium => paths.iter().position(|p| *p != category && parent(p) == parent(category)).unwrap(),
                _ => paths.iter().position(|p| parent(p) != parent(category) || (!medium && p != category)).unwrap(),
            };
            expected_parent += usize::from(r == 0 || (r == 1 && medium));
            let scores = format!("{},{},{},{pick}", (n + r) % 4, r % 3, 3 - (n % 2));
            let (status, body) = rate(link, *id, scores).await;
            assert_eq!(status, 200, "{body}");
        }
        let (status, body) =
            call(&client, &base, "study/finish", &[("link", link.clone()), ("rater", String::new())]).await;
        assert_eq!(status, 200, "{body}");
    }

    // The offline LLM rater reads the same items.
    let rated = json(&assay(&db, &["--json", "study", "rate", &study.to_string()], &[]).await);
    assert_eq!(rated["job"]["status"], "done", "{rated}");
    assert_eq!(rated["job"]["done"], 6);
    let llm = &rated["llm"];
    assert!(llm["rater"].as_str().unwrap().starts_with("offline"), "{llm}");
    let correctness = &llm["rows"][0];
    assert_eq!((correctness["items"].as_i64(), correctness["humans"].as_i64()), (Some(6), Some(3)), "{llm}");
    // The reference answers are the passage's own sentences: the offline
    // rater finds every word and says "fully correct" each time — a
    // constant has no rank correlation, and κ is 0 against varied humans.
    assert!(correctness["spearman"].is_null() && correctness["kappa"] == 0.0, "{llm}");
    let answerability = &llm["rows"][2];
    assert!(answerability["kappa"].is_number() && answerability["spearman"].is_number(), "{llm}");
    assert_eq!(llm["rows"][3]["dimension"], "Category");
    assert!(llm["rows"][3]["spearman"].is_null(), "no rank correlation of categories");

    let results = json(&assay(&db, &["study", "results", &study.to_string()], &[]).await);
    let r = &results["results"];
    assert_eq!(r["raters"], 3);
    assert_eq!(r["dimensions"].as_array().unwrap().len(), 3, "the scales; the category apart");
    let hallucination = &r["dimensions"][1]["by_source"][0];
    assert_eq!(hallucination["group"], "reference answers");
    // Rater r gave r % 3 on all 6 items: 6 zeros, 6 ones, 6 twos.
    assert_eq!(hallucination["distribution"], serde_json::json!([6, 6, 6]));
    assert!(r["dimensions"][0]["agreement"]["fleiss_kappa"].is_number());
    let all = &r["category"][1][0];
    assert_eq!((all["group"].as_str(), all["picks"].as_i64()), (Some("all"), Some(18)), "{all}");
    assert!((all["exact"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12, "{all}");
    assert!((all["parent"].as_f64().unwrap() - expected_parent as f64 / 18.0).abs() < 1e-12, "{all}");
    let levels: Vec<&str> = r["category"][1].as_array().unwrap().iter().map(|c| c["group"].as_str().unwrap()).collect();
    assert_eq!(levels, ["all", "QC 2 categories", "QC 4 categories"]);
    assert!(results["llm"]["rows"].is_array());

    let csv = assay(&db, &["study", "results", &study.to_string(), "--format", "csv"], &[]).await;
    let csv = String::from_utf8_lossy(&csv.stdout).to_string();
    assert_eq!(csv.lines().count(), 1 + 3 * 6 * 4);
    assert!(csv.lines().any(|l| l.contains(",Category,QC/")), "picks are written as category paths");

    // Seed 004 §4: ρ against human category agreement on the metrics page.
    // Each pick of a medium category (4 items × 3 raters) is paired with
    // the ρ of the split that made it; coarse picks have no split.
    json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "bm25"], &[]).await);
    let answers: i64 = common::scalar(&pool, "SELECT MAX(id) FROM answer_sets", &[]).await;
    let run = json(
        &assay(&db, &["--json", "metrics", "run", "A", "--set", &set, "--answers", &answers.to_string()], &[]).await,
    );
    let run_id = run["run_id"].as_i64().unwrap();
    let page = app::ssr::metrics::page(&pool, run_id).await.unwrap();
    let (from, r, p, n) =
        page.view.as_ref().unwrap().sets[0].rho_agreement.expect("a validation study was drawn from the set");
    assert_eq!((from, n), (study, 12));
    let report = app::ssr::metrics::report(&pool, run_id).await.unwrap();
    let splits = &report.sets[0].granularity[0].splits;
    let (mut flags, mut rhos) = (Vec::new(), Vec::new());
    for (_, category, choices) in rows.iter().filter(|(_, c, _)| c.matches('/').count() == 2) {
        let choices: Vec<Value> = serde_json::from_str(choices).unwrap();
        let rho = splits.iter().find(|s| s.children.contains(category)).unwrap().rho;
        let picked: Vec<i64> = app::on_db!(&pool, |db| sqlx::query_scalar(
            "SELECT r.score FROM ratings r JOIN study_items i ON i.id = r.item_id WHERE i.study_id = $1 AND i.category = $2 AND r.dimension = 3",
        )
        .bind(study)
        .bind(category)
        .fetch_all(db)
        .await)
        .unwrap();
        for pick in picked {
            flags.push(choices[pick as usize]["path"] == category.as_str());
            rhos.push(rho);
        }
    }
    let want = engine::metrics::granularity::point_biserial(&flags, &rhos).unwrap();
    assert_eq!(n, want.n);
    assert!((r - want.r).abs() < 1e-12 && (p - want.p).abs() < 1e-12, "{r} {p} vs {want:?}");
    // Each medium category was picked by 1 rater of 3: agreement does not
    // follow ρ here, and the page says r = 0 rather than inventing one.
    assert!(r.abs() < 1e-12, "{r}");
}

//! The paper view of an evaluation (`?view=paper`): seed 000's Figs. 14–17
//! with captions naming their statistics, Fig. 17's per-level panels drawn
//! and served, their numbers in `paper.csv` equal to what the report's own
//! tables give (each pair's level rates, their unweighted mean), and each
//! caller in turn: the owner and a reader see it, a member without rights is
//! refused, a share-link holder reads it through the link, no session is
//! sent to log in.

use crate::common;
use common::get_as as get;

use axum::http::{header, StatusCode};
use common::{assay, json, sample_with_answers};

/// A CSV's rows as maps by header.
fn rows(csv: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = csv.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
    lines.map(|l| head.iter().cloned().zip(l.split(',').map(str::to_string)).collect()).collect()
}

fn number(row: &std::collections::HashMap<String, String>, key: &str) -> f64 {
    row[key].parse().unwrap_or_else(|_| panic!("{key} in {row:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_paper_view_lays_out_figs_14_to_17_for_those_who_may_read_the_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "paper").await;
    let set = sample_with_answers(&db, [4, 4, 2]).await;
    json(&assay(&db, &["--json", "answers", "generate", "A", "--set", &set, "--method", "fastgraphrag"], &[]).await);
    let run = [
        "--json",
        "eval",
        "run",
        "A",
        "--set",
        &set,
        "--methods",
        "bm25,lightrag,fastgraphrag",
        "--judge",
        "simulated",
        "--noise",
        "1.5",
        "--trials",
        "5",
    ];
    let out = json(&assay(&db, &run, &[]).await);
    assert_eq!(out["status"], "done", "{out}");
    let id = out["evaluation_id"].as_i64().unwrap();
    let share =
        json(&assay(&db, &["--json", "share", "create", "A", "--page", &format!("evaluation:{id}")], &[]).await);
    let token = share["token"].as_str().unwrap().to_string();
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let ana = common::member(&db, &router, &owner, "ana", Some("read")).await;
    let cy = common::member(&db, &router, &owner, "cy", None).await;

    // The owner's paper view: the four figures, each caption naming its statistic.
    let page_path = format!("/projects/1/evaluations/{id}?view=paper");
    let (status, _, page) = common::send_to(&router, get(&page_path, &owner)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    for part in [
        "id=\"fig14\"",
        "id=\"fig15\"",
        "id=\"fig16\"",
        "id=\"fig17\"",
        "Each box is one rate over the 5 trials",
        "each rate's own",
        "of the median trial",
        "with an odd number of trials (5 here) it is also the median",
        "unweighted mean over the pairs",
        "id=\"to-report\"",
    ] {
        assert!(page.contains(part), "{part} in the paper view");
    }
    // The headline table is the full report's, and says whose it is.
    assert!(page.contains("headline table is the ") && !page.contains("id=\"pair-table\""));
    let (_, _, full) = common::send_to(&router, get(&format!("/projects/1/evaluations/{id}"), &owner)).await;
    assert!(full.contains("id=\"pair-table\"") && full.contains("id=\"to-paper\"") && !full.contains("id=\"fig14\""));

    // Fig. 17: a panel per level, node first, each with its pairs and their mean.
    let levels_csv = String::from_utf8(
        common::send_to(&router, get(&format!("/api/evaluations/{id}/tables/levels.csv"), &owner)).await.2.into_bytes(),
    )
    .unwrap();
    let paper_csv = common::send_to(&router, get(&format!("/api/evaluations/{id}/tables/paper.csv"), &owner)).await;
    assert_eq!(paper_csv.0, StatusCode::OK, "{}", paper_csv.2);
    let (levels, paper) = (rows(&levels_csv), rows(&paper_csv.2));
    let level_names: Vec<String> =
        paper.iter().filter(|r| r["figure"] == "17" && r["a_name"].is_empty()).map(|r| r["label"].clone()).collect();
    assert_eq!(level_names, ["node", "edge", "subgraph"], "one mean per level, in the paper's order");
    for (k, level) in level_names.iter().enumerate() {
        let of_level: Vec<_> = levels.iter().filter(|r| &r["level"] == level).collect();
        assert_eq!(of_level.len(), 3, "three pairs judged on {level} questions");
        let mean =
            paper.iter().find(|r| r["figure"] == "17" && &r["label"] == level && r["a_name"].is_empty()).unwrap();
        assert_eq!(mean["n"], "3");
        for key in ["a_win", "tie", "b_win"] {
            let expected = of_level.iter().map(|r| number(r, key)).sum::<f64>() / 3.0;
            // The CSV writes 6 decimals.
            assert!((number(mean, key) - expected).abs() < 1e-6, "{level} {key}: {mean:?} {of_level:?}");
        }
        assert!(page.contains(&format!("/api/evaluations/{id}/plots/paper-level-{k}.svg")), "panel {k} linked");
        let (status, kind, svg) =
            common::send_to(&router, get(&format!("/api/evaluations/{id}/plots/paper-level-{k}.svg"), &owner)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(kind.get(header::CONTENT_TYPE).unwrap().to_str().unwrap().starts_with("image/svg+xml"));
        assert!(svg.contains(&format!("Per question level: {level}")) && svg.contains("mean of the pairs"));
    }
    // Fig. 14's medians are the report's boxes; its median trial the headline.
    let pairs_csv = common::send_to(&router, get(&format!("/api/evaluations/{id}/tables/pairs.csv"), &owner)).await.2;
    for pair in rows(&pairs_csv) {
        let median = paper
            .iter()
            .find(|r| {
                r["figure"] == "14"
                    && r["a_name"] == pair["a_name"]
                    && r["b_name"] == pair["b_name"]
                    && r["statistic"] == "each rate's median over trials"
            })
            .unwrap();
        for key in ["a_win", "tie", "b_win"] {
            assert!((number(median, key) - number(&pair, &format!("{key}_median"))).abs() < 1e-12, "{key}");
        }
        let headline = paper
            .iter()
            .find(|r| {
                r["figure"] == "14"
                    && (&r["a_name"], &r["b_name"]) == (&pair["a_name"], &pair["b_name"])
                    && r["statistic"].starts_with("median trial")
            })
            .unwrap();
        assert_eq!(headline["statistic"], format!("median trial (#{})", pair["median_trial"]));
        assert!((number(headline, "a_win") - number(&pair, "a_win")).abs() < 1e-12);
    }
    // Fig. 16: both directions of every pair, opposite signs.
    let cells: Vec<_> = paper.iter().filter(|r| r["figure"] == "16").collect();
    assert_eq!(cells.len(), 6);
    for c in &cells {
        let back = cells.iter().find(|d| d["a_name"] == c["b_name"] && d["b_name"] == c["a_name"]).unwrap();
        assert!((number(c, "relative") + number(back, "relative")).abs() < 1e-12);
    }

    // All three methods ranked at once (Bradley–Terry): on the full report,
    // in ranking.csv and in the run's JSON, one order everywhere; a method
    // ranked above another has the larger score and the interval holds it.
    assert!(full.contains("id=\"ranking-table\"") && full.contains("All methods ranked (Bradley–Terry)"));
    let ranking =
        rows(&common::send_to(&router, get(&format!("/api/evaluations/{id}/tables/ranking.csv"), &owner)).await.2);
    assert_eq!(ranking.len(), 3);
    let json_rows = out["ranking"]["rows"].as_array().unwrap();
    for (k, (row, j)) in ranking.iter().zip(json_rows).enumerate() {
        assert_eq!(row["rank"], (k + 1).to_string());
        assert_eq!(row["name"], j["name"].as_str().unwrap());
        assert!((number(row, "score") - j["score"].as_f64().unwrap()).abs() < 1e-6);
        assert!(number(row, "score_low") <= number(row, "score") && number(row, "score") <= number(row, "score_high"));
        assert!(full.contains(&format!("{:.0}", number(row, "score"))), "the page shows {}'s score", row["name"]);
    }
    assert!(number(&ranking[0], "score") >= number(&ranking[1], "score"));
    assert!(number(&ranking[1], "score") >= number(&ranking[2], "score"));
    // Every verdict counted once per pair and trial: 3 pairs × 10 questions × 5 trials at most.
    let battles: usize = ranking.iter().map(|r| r["battles"].parse::<usize>().unwrap()).sum();
    assert_eq!(battles, 2 * out["ranking"]["battles"].as_u64().unwrap() as usize);
    assert!(out["ranking"]["battles"].as_u64().unwrap() <= 150);

    // The one-file export carries the paper view, its plots inline.
    let (status, _, html) = common::send_to(&router, get(&format!("/api/evaluations/{id}/report.html"), &owner)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("id=\"paper-view\"") && html.contains("id=\"fig17\""));
    assert!(html.contains("Per question level: node") && html.contains("mean of the pairs"), "Fig. 17 inline");

    // Each caller in turn.
    let plot = format!("/api/evaluations/{id}/plots/paper-level-0.svg");
    common::readers(
        &router,
        &page_path,
        "id=\"fig17\"",
        &plot,
        &[
            ("owner", &owner, StatusCode::OK, StatusCode::OK),
            ("reader", &ana, StatusCode::OK, StatusCode::OK),
            ("no rights", &cy, StatusCode::FORBIDDEN, StatusCode::FORBIDDEN),
            ("share token as a session", &token, StatusCode::SEE_OTHER, StatusCode::UNAUTHORIZED),
            ("anonymous", "", StatusCode::SEE_OTHER, StatusCode::UNAUTHORIZED),
        ],
    )
    .await;
    // The share link's holder, with no session: the paper view through the link.
    let (status, _, shared) = common::send_to(&router, get(&format!("/share/{token}?view=paper"), "")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(shared.contains("id=\"fig17\"") && shared.contains(&format!("/api/share/{token}/plots/paper-level-0.svg")));
    assert!(!shared.contains(&format!("/projects/1/")), "no link into the project");
    let (status, _, svg) =
        common::send_to(&router, get(&format!("/api/share/{token}/plots/paper-level-0.svg"), "")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(svg.contains("mean of the pairs"));
    let (status, _, csv) = common::send_to(&router, get(&format!("/api/share/{token}/tables/paper.csv"), "")).await;
    assert_eq!((status, csv), (StatusCode::OK, paper_csv.2.clone()));
    // The ranking through the link: the full report shows it, its CSV is the owner's.
    let (_, _, shared_full) = common::send_to(&router, get(&format!("/share/{token}"), "")).await;
    assert!(
        shared_full.contains("id=\"ranking-table\"")
            && shared_full.contains(&format!("/api/share/{token}/tables/ranking.csv"))
    );
    let (status, _, csv) = common::send_to(&router, get(&format!("/api/share/{token}/tables/ranking.csv"), "")).await;
    let owners = common::send_to(&router, get(&format!("/api/evaluations/{id}/tables/ranking.csv"), &owner)).await.2;
    assert_eq!((status, csv), (StatusCode::OK, owners));
    assert!(html.contains("id=\"ranking-table\""), "the one-file export ranks the methods too");
    // A wrong token reads nothing.
    let (status, _, _) = common::send_to(&router, get("/api/share/not-a-token/plots/paper-level-0.svg", "")).await;
    assert!(status == StatusCode::NOT_FOUND || status == StatusCode::FORBIDDEN, "{status}");
}

//! The Answers, Studies and Corpus pages' forms each post one request
//! (`types::requests`): who may send each, what it then does, and a bad
//! request refused naming its field.

use axum::http::StatusCode;
use leptos::server_fn::ServerFn;
use serde_json::Value;

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answers_study_and_chunking_forms_are_checked_by_caller_and_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "forms").await;
    let set = common::sample_with_answers(&db, [2, 1, 0]).await;
    let (router, owner) = common::owner_router(&db, dir.path()).await;
    let ana = common::member(&db, &router, &owner, "ana", Some("read")).await;
    let ed = common::member(&db, &router, &owner, "ed", Some("edit")).await;
    let cy = common::member(&db, &router, &owner, "cy", None).await;
    let (ok, forbidden, unauthorized) = (StatusCode::OK, StatusCode::FORBIDDEN, StatusCode::UNAUTHORIZED);
    let callers = [("reader", ana.as_str()), ("no rights", cy.as_str()), ("anonymous", ""), ("editor", ed.as_str())];
    let send = |path: &'static str, form: String, cookie: String| {
        let router = router.clone();
        async move { common::send_to(&router, common::post_as(path, &form, &cookie)).await }
    };

    // Answers: a reader may price them, only an editor start them.
    let answers =
        format!("question_set_id={set}&name=&req[name]=bm25&req[params]=%7B%22k%22%3A+3%7D&req[target_words]=40");
    for ((caller, cookie), want) in callers.iter().zip([ok, forbidden, unauthorized, ok]) {
        let (got, _, body) = send(app::api::PlanAnswers::PATH, answers.clone(), cookie.to_string()).await;
        assert_eq!(got, want, "plan_answers as {caller}: {body}");
        if got == ok {
            let plan: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(plan["questions"], 3, "{body}");
        }
    }
    for ((caller, cookie), want) in callers.iter().zip([forbidden, forbidden, unauthorized, ok]) {
        let (got, _, body) = send(app::api::StartAnswers::PATH, answers.clone(), cookie.to_string()).await;
        assert_eq!(got, want, "start_answers as {caller}: {body}");
        if got == ok {
            let job: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(job["kind"], "answers", "{body}");
            // The job keeps the request's parameters and length, defaults filled in.
            let pool = db.open().await;
            let stored =
                common::texts(&pool, "SELECT parameters FROM jobs WHERE id = $1", &[job["id"].as_i64().unwrap()]).await;
            let stored: Value = serde_json::from_str(&stored[0]).unwrap();
            assert_eq!(
                (stored["params"]["k"].as_u64(), stored["target_words"].as_u64()),
                (Some(3), Some(40)),
                "{stored}"
            );
        }
    }

    // A study: only an editor makes one.
    let study = format!(
        "project_id=1&name=S&dimensions=&req[kind]=questions&req[questions]={set}:2&req[answers]=reference\
         &req[attention_checks]=1&req[rater_links]=1&req[seed]=3&req[target_raters]=&req[expires_days]="
    );
    for ((caller, cookie), want) in callers.iter().zip([forbidden, forbidden, unauthorized, ok]) {
        let (got, _, body) = send(app::api::CreateStudy::PATH, study.clone(), cookie.to_string()).await;
        assert_eq!(got, want, "create_study as {caller}: {body}");
        if got == ok {
            let made: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(made["rater_urls"].as_array().map(Vec::len), Some(1), "{body}");
            assert!(made["open_url"].as_str().is_some_and(|u| u.contains("/s/")), "{body}");
            let pool = db.open().await;
            let items = common::scalar(
                &pool,
                "SELECT COUNT(*) FROM study_items WHERE study_id = $1",
                &[made["study_id"].as_i64().unwrap()],
            )
            .await;
            assert_eq!(items, 3, "two drawn questions and one attention check");
        }
    }

    // Bad requests, refused by field and nothing made.
    common::refused_by_field(
        &router,
        &ed,
        &[
            (
                app::api::StartAnswers::PATH,
                answers.replace("req[target_words]=40", "req[target_words]=0"),
                "target_words: must be from 1 to 10000 words, not 0",
            ),
            (
                app::api::StartAnswers::PATH,
                answers.replace("req[target_words]=40", "req[target_words]=many"),
                "target_words: not a whole number in range",
            ),
            (
                app::api::StartAnswers::PATH,
                answers.replace("%7B%22k%22%3A+3%7D", "%5B1%5D"),
                "params: must be a JSON object, not [1]",
            ),
            (
                app::api::StartAnswers::PATH,
                answers.replace("req[name]=bm25", "req[name]=bm26"),
                "unknown method \\\"bm26\\\"",
            ),
            (app::api::CreateStudy::PATH, study.replace(&format!("{set}:2"), &format!("{set}-2")), "is not SET:N"),
            (
                app::api::CreateStudy::PATH,
                study.replace("req[rater_links]=1", "req[rater_links]=0&req[no_open_link]=true"),
                "rater_links: a study without an open link needs at least one per-rater link",
            ),
            (
                app::api::CreateStudy::PATH,
                study.replace("req[attention_checks]=1", "req[attention_checks]=6"),
                "attention_checks: at most 5, not 6",
            ),
        ],
    )
    .await;
    let pool = db.open().await;
    assert_eq!(common::scalar(&pool, "SELECT COUNT(*) FROM studies", &[]).await, 1);
    assert_eq!(
        common::scalar(&pool, "SELECT COUNT(*) FROM jobs WHERE kind = 'answers'", &[]).await,
        3,
        "two from the CLI, one from the form"
    );

    // Chunking: only an editor re-chunks; the project shows what was asked.
    let chunking = "project_id=1&req[chunk_tokens]=512&req[chunk_overlap]=50&req[tokenizer]=o200k_base";
    common::refused_by_field(
        &router,
        &ed,
        &[
            (
                app::api::SetChunking::PATH,
                chunking.replace("req[chunk_overlap]=50", "req[chunk_overlap]=300"),
                "chunk_overlap: must be smaller than half the chunk size (255 tokens at most), not 300",
            ),
            (
                app::api::SetChunking::PATH,
                chunking.replace("o200k_base", "gpt2"),
                "the tokenizer must be cl100k_base or o200k_base, not \\\"gpt2\\\"",
            ),
            (
                app::api::SetChunking::PATH,
                chunking.replace("req[chunk_tokens]=512", "req[chunk_tokens]=8"),
                "chunk_tokens: must be from 16 to 32768 tokens, not 8",
            ),
        ],
    )
    .await;
    for ((caller, cookie), want) in callers.iter().zip([forbidden, forbidden, unauthorized, ok]) {
        let (got, _, body) = send(app::api::SetChunking::PATH, chunking.to_string(), cookie.to_string()).await;
        assert_eq!(got, want, "set_chunking as {caller}: {body}");
        if got == ok {
            let p: Value = serde_json::from_str(&body).unwrap();
            let c = &p["chunking"];
            assert_eq!(
                (c["chunk_tokens"].as_u64(), c["chunk_overlap"].as_u64(), c["tokenizer"].as_str()),
                (Some(512), Some(50), Some("o200k_base")),
                "{body}"
            );
        }
    }
    let stored = common::texts(&pool, "SELECT tokenizer FROM projects WHERE id = $1", &[1]).await;
    assert_eq!(stored, ["o200k_base"]);
}

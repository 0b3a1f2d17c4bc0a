//! Raters at study links through the real router over a real SQLite file:
//! a browser keeps its rater in an HttpOnly cookie (clearing the page's
//! storage does not make a second rater); one address cannot start more
//! than `NEW_RATERS_PER_ADDRESS` raters at an open link within the hour;
//! 200 raters at once all have every rating stored; the results count the
//! raters who came through the open link; a study can have per-rater
//! links only; and a finish is final, even against ratings sent with it.

use crate::common;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

struct Reply {
    status: StatusCode,
    cookies: Vec<String>,
    json: Value,
}

async fn call(router: &axum::Router, path: &str, form: &str, addr: &str, cookie: Option<&str>) -> Reply {
    let mut req = Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::HOST, "127.0.0.1:3000")
        .body(Body::from(form.to_string()))
        .unwrap();
    if let Some(c) = cookie {
        req.headers_mut().insert(header::COOKIE, c.parse().unwrap());
    }
    let addr: std::net::SocketAddr = format!("{addr}:50000").parse().unwrap();
    req.extensions_mut().insert(axum::extract::ConnectInfo(addr));
    let resp = router.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let cookies = resp.headers().get_all(header::SET_COOKIE).iter().map(|v| v.to_str().unwrap().to_string()).collect();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    Reply { status, cookies, json: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

fn request(project: i64, set: i64, open_link: bool, rater_links: usize) -> app::ssr::studies::StudySpec {
    app::ssr::studies::StudySpec {
        project_id: project,
        name: "S".into(),
        request: types::requests::StudyRequest {
            questions: vec![types::requests::Draw { set, count: 3 }],
            rater_links,
            no_open_link: !open_link,
            seed: 1,
            ..Default::default()
        },
        dimensions: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_link_raters_are_one_per_browser_limited_per_address_and_all_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "raters").await;
    let pool = db.open().await;
    let (project, set) = common::project_with_questions(
        &pool,
        &["What is the Salt Guild?", "Who built the lighthouse?", "Where does the Oll run?"],
    )
    .await;
    let study = app::ssr::studies::create(&pool, &request(project, set, true, 0)).await.unwrap();
    let link = study.open_token.clone();
    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);
    let session = |addr: &'static str, cookie: Option<String>| {
        let router = router.clone();
        let link = link.clone();
        async move { call(&router, "/api/study/session", &format!("link={link}&rater="), addr, cookie.as_deref()).await }
    };

    // The same browser without its page storage: the cookie brings its rater back.
    let first = session("198.51.100.1", None).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.json);
    let rater = first.json["rater"].as_str().unwrap().to_string();
    let set_cookie = first.cookies.iter().find(|c| c.starts_with("assay_rater_")).expect("a rater cookie");
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains(&rater), "{set_cookie}");
    let cookie = set_cookie.split(';').next().unwrap().to_string();
    let again = session("198.51.100.1", Some(cookie)).await;
    assert_eq!(again.json["rater"].as_str(), Some(rater.as_str()));

    // One address starts at most NEW_RATERS_PER_ADDRESS raters per hour.
    for _ in 1..app::ssr::studies::NEW_RATERS_PER_ADDRESS {
        assert_eq!(session("198.51.100.1", None).await.status, StatusCode::OK);
    }
    let refused = session("198.51.100.1", None).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{}", refused.json);
    assert!(refused.json.to_string().contains("per-rater link"), "{}", refused.json);

    // 200 raters at once, each from its own address, rate every item.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200u32 {
        let router = router.clone();
        let link = link.clone();
        tasks.spawn(async move {
            let addr = format!("10.{}.{}.1", i / 250, i % 250);
            let addr: &'static str = Box::leak(addr.into_boxed_str());
            let s = call(&router, "/api/study/session", &format!("link={link}&rater="), addr, None).await;
            assert_eq!(s.status, StatusCode::OK, "{}", s.json);
            let rater = s.json["rater"].as_str().unwrap().to_string();
            let dims = s.json["dimensions"].as_array().unwrap().len();
            for item in s.json["items"].as_array().unwrap() {
                let scores = vec!["4"; dims].join(",");
                let form = format!("link={link}&rater={rater}&item={}&scores={scores}", item["id"]);
                let r = call(&router, "/api/study/rate", &form, addr, None).await;
                assert_eq!(r.status, StatusCode::OK, "{}", r.json);
            }
            let r = call(&router, "/api/study/finish", &format!("link={link}&rater={rater}"), addr, None).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.json);
            dims
        });
    }
    let mut dims = 0;
    while let Some(d) = tasks.join_next().await {
        dims = d.unwrap();
    }
    let stored: i64 = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM ratings WHERE rater_id IN (SELECT id FROM raters WHERE study_id = $1)",
        &[study.study_id],
    )
    .await;
    assert_eq!(stored as usize, 200 * 3 * dims, "every rating of 200 concurrent raters");
    let results = app::ssr::studies::results_view(&pool, study.study_id).await.unwrap();
    assert_eq!(results.open_link_raters, 200);
    println!("200 concurrent raters: {stored} ratings stored ({dims} dimensions × 3 items each)");

    // Per-rater links only: no open link, and none without a rater link.
    let only = app::ssr::studies::create(&pool, &request(project, set, false, 2)).await.unwrap();
    assert!(only.open_token.is_empty());
    assert_eq!(only.rater_tokens.len(), 2);
    let links: i64 = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM study_links WHERE study_id = $1 AND kind = 'open'",
        &[only.study_id],
    )
    .await;
    assert_eq!(links, 0);
    let e = app::ssr::studies::create(&pool, &request(project, set, false, 0)).await.unwrap_err();
    assert_eq!(e.status(), 400, "{e}");
}

/// 30 ratings and the finish sent at once (the rater had rated every item
/// before): each rating lands before the finish or is refused with 409, and
/// no rating row is stamped after the rater's `finished_at`; afterwards
/// every rating is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finish_is_final_even_against_ratings_sent_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "finish").await;
    let pool = db.open().await;
    let (project, set) = common::project_with_questions(
        &pool,
        &["What is the Salt Guild?", "Who built the lighthouse?", "Where does the Oll run?"],
    )
    .await;
    let study = app::ssr::studies::create(&pool, &request(project, set, false, 1)).await.unwrap();
    let link = study.rater_tokens[0].clone();
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), Default::default(), Default::default(), options);
    let s = call(&router, "/api/study/session", &format!("link={link}&rater="), "198.51.100.9", None).await;
    assert_eq!(s.status, StatusCode::OK, "{}", s.json);
    let dims = s.json["dimensions"].as_array().unwrap().len();
    let items: Vec<i64> = s.json["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect();
    let rate = |item: i64, score: u8| {
        let router = router.clone();
        let form = format!("link={link}&rater=&item={item}&scores={}", vec![score.to_string(); dims].join(","));
        async move { call(&router, "/api/study/rate", &form, "198.51.100.9", None).await.status }
    };
    for &item in &items {
        assert_eq!(rate(item, 4).await, StatusCode::OK);
    }

    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..30usize {
        let fut = rate(items[i % items.len()], (i % 5) as u8 + 1);
        tasks.spawn(async move { (false, fut.await) });
        if i == 15 {
            let router = router.clone();
            let form = format!("link={link}&rater=");
            tasks.spawn(
                async move { (true, call(&router, "/api/study/finish", &form, "198.51.100.9", None).await.status) },
            );
        }
    }
    let (mut landed, mut refused) = (0, 0);
    while let Some(r) = tasks.join_next().await {
        match r.unwrap() {
            (true, status) => assert_eq!(status, StatusCode::OK, "the finish"),
            (false, StatusCode::OK) => landed += 1,
            (false, StatusCode::CONFLICT) => refused += 1,
            (false, other) => panic!("a rating answered {other}"),
        }
    }
    assert_eq!(landed + refused, 30);
    let after: i64 = common::scalar(
        &pool,
        "SELECT COUNT(*) FROM ratings x JOIN raters r ON r.id = x.rater_id
          WHERE r.study_id = $1 AND (r.finished_at IS NULL OR x.rated_at > r.finished_at)",
        &[study.study_id],
    )
    .await;
    assert_eq!(after, 0, "ratings stamped after the finish ({landed} landed, {refused} refused)");
    assert_eq!(rate(items[0], 2).await, StatusCode::CONFLICT, "a rating after the finish");
    println!("30 ratings with a finish: {landed} landed before it, {refused} refused after it");
}

//! No spelling of a URL reaches another project's data.
//!
//! Two projects over one real SQLite file: A (the sample corpus) and B
//! (A Christmas Carol, so "Scrooge" in a reply is B's data). Every plain
//! route — taken from the router's own table, so a new route is covered
//! by construction — is requested for B's objects by every kind of caller
//! (anonymous, a share token or rater token where a session belongs, a
//! member without rights, a member reading A, a member editing A, the
//! owner) in every spelling of the ids (`%32`, `%2532`, `02`, `+2`, `%2B2`,
//! `%2b2`, a trailing slash, a `./` segment), and with A's project id and
//! B's children. Only the owner gets B's bytes. Then every server function
//! is called by a member who edits A only, with A's project id next to B's
//! child ids: none returns B's text or changes B.

use crate::common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::{assay, json, sample_with_answers};
use http_body_util::BodyExt;
use tower::ServiceExt;

const MARKER: &str = "Scrooge";

async fn send(router: &axum::Router, req: Request<Body>) -> (StatusCode, String) {
    let resp = router.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let body = String::from_utf8_lossy(&resp.into_body().collect().await.unwrap().to_bytes()).to_string();
    (status, body)
}

fn request(method: &Method, path: &str, cookie: Option<&str>) -> Request<Body> {
    let mut r = Request::builder().method(method.clone()).uri(path);
    if let Some(c) = cookie {
        r = r.header(header::COOKIE, format!("assay_session={c}"));
    }
    if *method == Method::POST {
        r = r.header(header::CONTENT_TYPE, "multipart/form-data; boundary=x");
        return r.body(Body::from("--x--\r\n")).unwrap();
    }
    r.body(Body::empty()).unwrap()
}

/// B's objects, by path parameter name.
struct Ids {
    project: i64,
    question_set: i64,
    answer_set: i64,
    evaluation: i64,
    study: i64,
    metrics_run: i64,
    experiment: i64,
}

impl Ids {
    fn get(&self, param: &str) -> i64 {
        match param {
            "project" => self.project,
            "question_set" => self.question_set,
            "answer_set" => self.answer_set,
            "evaluation" => self.evaluation,
            "study" => self.study,
            "metrics_run" => self.metrics_run,
            "experiment" => self.experiment,
            other => panic!("a route names \"{other}\", which this test does not know"),
        }
    }
}

/// A file each `{file}` route serves.
fn file_for(template: &str) -> &'static str {
    if template.starts_with("/api/metrics/") {
        "report.json"
    } else if template.starts_with("/api/experiments/") {
        "experiment.json"
    } else if template.contains("/plots/") {
        "box.png"
    } else if template.contains("/tables/") {
        "pairs.csv"
    } else if template.starts_with("/api/evaluations/") {
        "report.json"
    } else if template.ends_with("/graph/{file}") {
        "graph.json"
    } else {
        "ratings.csv"
    }
}

/// The path with every parameter filled: ids spelled by `spell`, the
/// project by `project` (A's or B's, spelled the same way).
fn fill(template: &str, ids: &Ids, project: i64, spell: &dyn Fn(i64) -> String) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let end = rest[start..].find('}').unwrap() + start;
        out.push_str(&rest[..start]);
        let name = &rest[start + 1..end];
        match name {
            "file" => out.push_str(file_for(template)),
            "project" => out.push_str(&spell(project)),
            other => out.push_str(&spell(ids.get(other))),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_spelling_of_a_path_reaches_another_project() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "spelling").await;
    sample_with_answers(&db, [2, 1, 1]).await;
    let carol = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/christmas_carol_stave1.txt");
    for args in [
        vec!["--json", "project", "create", "B"],
        vec!["--json", "corpus", "add", "B", carol],
        vec!["--json", "graph", "build", "B"],
    ] {
        json(&assay(&db, &args, &[]).await);
    }
    let set = json(
        &assay(
            &db,
            &[
                "--json",
                "questions",
                "generate",
                "graph",
                "B",
                "--node",
                "20",
                "--edge",
                "1",
                "--subgraph",
                "0",
                "--degree-weighted",
            ],
            &[],
        )
        .await,
    )["set_id"]
        .to_string();
    let mut answer_sets = Vec::new();
    for method in ["bm25", "lightrag"] {
        let out =
            json(&assay(&db, &["--json", "answers", "generate", "B", "--set", &set, "--method", method], &[]).await);
        answer_sets.push(out["answers_id"].as_i64().unwrap());
    }
    let methods = "bm25,lightrag";
    let eval = json(
        &assay(
            &db,
            &["--json", "eval", "run", "B", "--set", &set, "--methods", methods, "--judge", "offline", "--trials", "1"],
            &[],
        )
        .await,
    );
    let study = json(
        &assay(&db, &["--json", "study", "create", "B", "--questions", &format!("{set}:2"), "--raters", "1"], &[])
            .await,
    );
    let page = format!("study:{}", study["study_id"]);
    let share = json(&assay(&db, &["--json", "share", "create", "B", "--page", &page], &[]).await);
    let rater_token = study["rater_urls"][0].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let share_token = share["token"].as_str().unwrap().to_string();
    let env = [("ASSAY_PASSWORD", "correct horse battery")];
    json(&assay(&db, &["--json", "user", "create", "owner"], &env).await);
    for (name, project, access) in [("ana", "A", "read"), ("ben", "A", "edit"), ("cy", "", "")] {
        json(&assay(&db, &["--json", "user", "create", name, "--role", "member"], &env).await);
        if !project.is_empty() {
            json(&assay(&db, &["--json", "user", "grant", name, project, "--access", access], &[]).await);
        }
    }
    let mut sessions = std::collections::HashMap::new();
    for name in ["owner", "ana", "ben", "cy"] {
        let t =
            json(&assay(&db, &["--json", "user", "session", name], &[]).await)["token"].as_str().unwrap().to_string();
        sessions.insert(name, t);
    }

    let pool = db.open().await;
    for (project, answers) in [(1, 1), (2, answer_sets[0])] {
        app::on_db!(&pool, |db| sqlx::query(
            "INSERT INTO metrics_runs (project_id, question_set_id, answer_sets, k, bins) VALUES ($1, $2, $3, 10, 4)",
        )
        .bind(project)
        .bind(project)
        .bind(format!("[{answers}]"))
        .execute(db)
        .await
        .map(|_| ()))
        .unwrap();
        app::on_db!(&pool, |db| sqlx::query(
            "INSERT INTO experiments (project_id, name, manifest, plan, llm, offline, status) VALUES ($1, 'x', '', '[]', 'offline (no LLM)', TRUE, 'done')",
        )
        .bind(project)
        .execute(db).await.map(|_| ()))
        .unwrap();
    }
    let one = |sql: &'static str| {
        let pool = pool.clone();
        async move { app::on_db!(&pool, |db| sqlx::query_scalar::<_, i64>(sql).fetch_one(db).await).unwrap() }
    };
    let ids = Ids {
        project: 2,
        question_set: set.parse().unwrap(),
        answer_set: answer_sets[0],
        evaluation: eval["evaluation_id"].as_i64().unwrap(),
        study: study["study_id"].as_i64().unwrap(),
        metrics_run: one("SELECT MAX(id) FROM metrics_runs").await,
        experiment: one("SELECT MAX(id) FROM experiments").await,
    };
    let b_rows = "SELECT (SELECT COUNT(*) FROM documents WHERE project_id = 2) * 1000000 \
                  + (SELECT COUNT(*) FROM questions WHERE set_id IN (SELECT id FROM question_sets WHERE project_id = 2)) * 1000 \
                  + (SELECT COUNT(*) FROM answer_sets WHERE project_id = 2)";
    let b_before = one(b_rows).await;

    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);

    let spellings: Vec<(&str, Box<dyn Fn(i64) -> String>)> = vec![
        ("plain", Box::new(|n| n.to_string())),
        ("%3N", Box::new(|n| n.to_string().bytes().map(|b| format!("%{b:02X}")).collect())),
        ("%253N", Box::new(|n| n.to_string().bytes().map(|b| format!("%25{b:02X}")).collect())),
        ("0N", Box::new(|n| format!("0{n}"))),
        ("+N", Box::new(|n| format!("+{n}"))),
        ("%2BN", Box::new(|n| format!("%2B{n}"))),
        ("%2bN", Box::new(|n| format!("%2b{n}"))),
        ("N/", Box::new(|n| format!("{n}/"))),
        ("./N", Box::new(|n| format!("./{n}"))),
    ];
    // Spellings that decode to the same number: the owner is served as with
    // the plain one (the check and the handler read the same id).
    let same_number = ["plain", "%3N", "0N", "+N", "%2BN", "%2bN"];
    let callers: Vec<(&str, Option<String>)> = vec![
        ("anonymous", None),
        ("share token", Some(share_token.clone())),
        ("rater token", Some(rater_token.clone())),
        ("member-none", Some(sessions["cy"].clone())),
        ("member-read A", Some(sessions["ana"].clone())),
        ("member-edit A", Some(sessions["ben"].clone())),
        ("owner", Some(sessions["owner"].clone())),
    ];

    let routes = server::web::plain_paths();
    assert!(routes.len() >= 14, "{} plain routes", routes.len());
    let mut combinations = 0;
    let mut owner_saw_marker = 0;
    for (method, template) in &routes {
        let canonical = fill(template, &ids, 2, &|n| n.to_string());
        let (owner_status, owner_body) = send(&router, request(method, &canonical, Some(&sessions["owner"]))).await;
        if *method == Method::GET {
            // Served, or missing only because that step was not run for B.
            let not_run = matches!(owner_status, StatusCode::NOT_FOUND | StatusCode::CONFLICT)
                && (owner_body.contains("has not been") || owner_body.contains("no report yet"));
            assert!(owner_status == StatusCode::OK || not_run, "owner GET {canonical}: {owner_status} {owner_body}");
        }
        let marked = owner_body.contains(MARKER);
        owner_saw_marker += marked as usize;
        for project in [2, 1] {
            for (spelling, spell) in &spellings {
                // A's project with B's children: only where a route names both.
                let children = template.matches('{').count()
                    - template.contains("{project}") as usize
                    - template.contains("{file}") as usize;
                let mixed = project == 1;
                if mixed && (!template.contains("{project}") || children == 0) {
                    continue;
                }
                let path = fill(template, &ids, project, spell.as_ref());
                for (caller, cookie) in &callers {
                    combinations += 1;
                    let (status, body) = send(&router, request(method, &path, cookie.as_deref())).await;
                    let what = format!("{caller} {method} {path} ({spelling})");
                    assert!(!status.is_server_error(), "{what}: {status} {body}");
                    if *caller == "owner" && project == 2 {
                        if same_number.contains(spelling) {
                            assert_eq!(status, owner_status, "{what}: {body}");
                        } else {
                            assert!(status.is_client_error(), "{what}: {status}");
                        }
                        continue;
                    }
                    if *caller == "owner" && mixed {
                        // A's project with B's children: not found, whoever asks.
                        assert!(status.is_client_error(), "{what}: {status} {body}");
                    }
                    if *caller != "owner" && (project == 2 || mixed) {
                        assert!(
                            matches!(
                                status,
                                StatusCode::UNAUTHORIZED
                                    | StatusCode::FORBIDDEN
                                    | StatusCode::NOT_FOUND
                                    | StatusCode::BAD_REQUEST
                            ),
                            "{what}: {status} {}",
                            &body[..body.len().min(300)]
                        );
                    }
                    if *caller != "owner" || mixed {
                        assert!(!body.contains(MARKER), "{what} returned B's text: {}", &body[..body.len().min(300)]);
                    }
                }
            }
        }
    }
    assert!(owner_saw_marker >= 3, "only {owner_saw_marker} routes showed the owner B's text");
    println!("plain routes: {} routes, {combinations} route × caller × spelling combinations", routes.len());

    // Server functions: ben edits A only; A's project id next to B's children.
    let bq = one("SELECT MIN(id) FROM questions WHERE set_id = 2").await;
    let (a, b) = (answer_sets[0], answer_sets[1]);
    let form = format!(
        "id=2&project_id=1&set_id=2&question_id={bq}&job_id=2&answer_set_id={a}&question_set_id=2&link_id=2\
&user_id=1&page_id=2&node_id=1&source=1&target=2&a={a}&b={b}&question={bq}&item=1&limit=10&k=3&open=true\
&retry_failed=false&kind=questions&name=x&text=x&json=x&params=x&method=bm25&judge=offline&draws=2:1&intro=x\
&corpus_summary=x&attention_checks=0&target_raters=1&rater_links=0&seed=1&expires_days=1&chunk_tokens=512\
&chunk_overlap=0&tokenizer=x&gleaning=0&entity_types=x&summary_budget=100&level=x\
&reference_answer=x&answer_sets={a}&pairs=x&protocol=x&trials=1&repeats=1&tolerance=1&adjustments=1\
&target_words=1&access=read&answers={a}&bins=4&position_bias=0&length_bias=0&noise=0&run_id={}&fields=x\
&manifest=x&experiment_id={}&req[protocol]=both&req[trials]=1&req[repeats]=1&req[judge]=offline\
&req[gleaning]=0&req[entity_types]=x&req[summary_budget]=100&req[node]=1&req[edge]=1&req[subgraph]=1\
&req[min_hops]=1&req[users]=1&req[tasks]=1&req[per_task]=1&req[head]=1&req[tail]=1&req[per_category]=1\
&req[levels]=2&req[dimensions]=QC&req[factorial]=0&req[name]=bm25&req[params]=&req[target_words]=1",
        ids.metrics_run, ids.experiment
    );
    let mut functions = 0;
    for (path, _) in leptos::server_fn::axum::server_fn_paths() {
        if path.starts_with("/api/auth/") {
            continue;
        }
        for (caller, cookie) in &callers {
            if *caller == "owner" {
                continue;
            }
            let mut req = Request::post(path).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
            if let Some(c) = cookie {
                req = req.header(header::COOKIE, format!("assay_session={c}"));
            }
            let (status, body) = send(&router, req.body(Body::from(form.clone())).unwrap()).await;
            functions += 1;
            assert!(
                !body.contains(MARKER),
                "{caller} {path} returned B's text ({status}): {}",
                &body[..body.len().min(300)]
            );
        }
    }
    assert_eq!(one(b_rows).await, b_before, "B changed");
    println!("server functions: {functions} function × caller calls with B's child ids");
}

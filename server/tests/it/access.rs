//! Collaborators through the real router over a real SQLite file: the owner
//! makes accounts and grants read or edit rights per project (through the
//! server functions); a collaborator without rights is refused by every
//! server function that touches a project's data, and by its pages and
//! routes; read rights read but change nothing; edit rights change their
//! project only; accounts, projects and the LLM settings stay the owner's.

use crate::common;
use common::get_as as get;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::{assay, json, sample_with_answers};

struct Reply {
    status: StatusCode,
    body: String,
}

async fn send(router: &axum::Router, req: Request<Body>) -> Reply {
    let (status, _, body) = common::send_to(router, req).await;
    Reply { status, body }
}

fn post(path: &str, form: &str, cookie: &str) -> Request<Body> {
    Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, format!("assay_session={cookie}"))
        .body(Body::from(form.to_string()))
        .unwrap()
}

/// The Graph page's import form without a file (a real multipart body).
fn graph_import(project: i64, cookie: &str) -> Request<Body> {
    let body = "--b0\r\nContent-Disposition: form-data; name=\"format\"\r\n\r\nlightrag\r\n--b0--\r\n";
    Request::post(format!("/api/projects/{project}/graph-import"))
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=b0")
        .header(header::COOKIE, format!("assay_session={cookie}"))
        .body(Body::from(body))
        .unwrap()
}

/// The Studies page's import form (the authors' human judging) without its
/// files.
fn study_import(project: i64, cookie: &str) -> Request<Body> {
    let body = "--b2\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--b2--\r\n";
    Request::post(format!("/api/projects/{project}/studies/import"))
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=b2")
        .header(header::COOKIE, format!("assay_session={cookie}"))
        .body(Body::from(body))
        .unwrap()
}

/// The Questions page's import form naming a benchmark format, without its
/// file.
fn benchmark_import(project: i64, cookie: &str) -> Request<Body> {
    let body = "--b1\r\nContent-Disposition: form-data; name=\"format\"\r\n\r\ngraphrag-bench\r\n--b1--\r\n";
    Request::post(format!("/api/projects/{project}/questions/import"))
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=b1")
        .header(header::COOKIE, format!("assay_session={cookie}"))
        .body(Body::from(body))
        .unwrap()
}

fn path_of<T: leptos::server_fn::ServerFn>() -> &'static str {
    T::PATH
}

/// One form every server function can read: each argument any of them
/// takes, naming object 1 (which exists, in project 1) where it is an id.
const EVERY_ARGUMENT: &str = "id=1&project_id=1&set_id=1&question_id=1&job_id=1&answer_set_id=1&question_set_id=1\
&link_id=1&user_id=1&page_id=1&node_id=1&source=1&entity_source=graph&target=1&a=1&b=1&question=1&item=1&limit=10&k=3\
&open=true&retry_failed=false&kind=questions&name=x&text=x&password=x&confirm=x&json=x&params=x&method=bm25\
&judge=offline&draws=1:1&intro=x&corpus_summary=x&attention_checks=0&target_raters=1&rater_links=0&seed=1\
&expires_days=1&chunk_tokens=512&chunk_overlap=0&tokenizer=x&gleaning=0&entity_types=x&summary_budget=100\
&level=x&reference_answer=x&answer_sets=1&pairs=x&protocol=x&trials=1&repeats=1\
&tolerance=1&adjustments=1&target_words=1&provider=offline&base_url=x&model=x&api_key=x&concurrency=1\
&timeout_secs=1&price=x&access=read&answers=&bins=4&position_bias=0&length_bias=0&noise=0&run_id=1\
&fields=x&manifest=x&experiment_id=1&page=1&part=1&topic=project&pilot=1&half_width=0.1\
&req[protocol]=both&req[trials]=1&req[repeats]=1&req[judge]=offline\
&req[gleaning]=0&req[entity_types]=x&req[summary_budget]=100&req[node]=1&req[edge]=1&req[subgraph]=1\
&req[min_hops]=1&req[users]=1&req[tasks]=1&req[per_task]=1&req[head]=1&req[tail]=1&req[per_category]=1\
&req[levels]=2&req[dimensions]=QC&req[factorial]=0&req[name]=bm25&req[params]=&req[target_words]=1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collaborators_reach_only_what_the_owner_granted() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "access").await;
    // Project 1 with one of everything (id 1 each), and project 2.
    let set = sample_with_answers(&db, [2, 1, 1]).await;
    assert_eq!(set, "1");
    let run = [
        "--json",
        "eval",
        "run",
        "A",
        "--set",
        "1",
        "--methods",
        "bm25,lightrag",
        "--judge",
        "offline",
        "--trials",
        "1",
    ];
    json(&assay(&db, &run, &[]).await);
    let study = json(&assay(&db, &["--json", "study", "create", "A", "--questions", "1:2"], &[]).await);
    let rater_token = study["rater_url"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let share = json(&assay(&db, &["--json", "share", "create", "A", "--page", "study:1"], &[]).await);
    let share_token = share["token"].as_str().unwrap().to_string();
    json(&assay(&db, &["--json", "project", "create", "B"], &[]).await);
    let env = [("ASSAY_PASSWORD", "correct horse battery")];
    json(&assay(&db, &["--json", "user", "create", "owner"], &env).await);
    let session = |name: &'static str| {
        let db = db.clone();
        async move {
            json(&assay(&db, &["--json", "user", "session", name], &[]).await)["token"].as_str().unwrap().to_string()
        }
    };
    let owner = session("owner").await;

    let pool = db.open().await;
    // A metrics run (id 1; graph questions have no references to score, so
    // the row alone: the checks need only its project).
    common::execute(
        &pool,
        "INSERT INTO metrics_runs (project_id, question_set_id, answer_sets, k, bins) VALUES (1, 1, '[1]', 10, 4)",
        &[],
    )
    .await;
    // An experiment (id 1) of project 1, the row alone likewise.
    common::execute(
        &pool,
        "INSERT INTO experiments (project_id, name, manifest, plan, llm, offline, status) VALUES (1, 'x', '', '[]', 'offline (no LLM)', TRUE, 'done')",
        &[],
    )
    .await;
    let config = app::ssr::state::Config { require_login: true, ..Default::default() };
    let options = server::web::leptos_options(dir.path(), "127.0.0.1:0".parse().unwrap());
    let router = server::web::router(pool.clone(), config, Default::default(), options);

    // The owner makes three collaborators and grants rights, in the browser's way.
    let create = path_of::<app::api::CreateMember>();
    let grant = path_of::<app::api::SetMemberAccess>();
    let mut ids = Vec::new();
    for name in ["ana", "ben", "cy"] {
        let r = send(&router, post(create, &format!("name={name}&password=correct+horse+battery"), &owner)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        ids.push(r.body.parse::<i64>().unwrap());
    }
    for (user, project, access) in [(ids[0], 1, "read"), (ids[1], 1, "edit"), (ids[1], 2, "read")] {
        let r =
            send(&router, post(grant, &format!("user_id={user}&project_id={project}&access={access}"), &owner)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let r = send(&router, post(path_of::<app::api::ListUsers>(), "", &owner)).await;
    assert!(r.body.contains("\"ben\"") && r.body.contains(r#"{"project_id":1,"access":"edit"}"#), "{}", r.body);
    let (ana, ben, cy) = (session("ana").await, session("ben").await, session("cy").await);

    // cy has no rights: every server function touching a project refuses.
    let no_project = [
        path_of::<app::api::ListProjects>(),
        path_of::<app::api::GetUploadLimits>(),
        path_of::<app::api::GetLlmInfo>(),
        path_of::<app::api::AnswerMethods>(),
        path_of::<app::api::DefaultStudyDimensions>(),
    ];
    let mut refused = 0;
    for (path, _) in leptos::server_fn::axum::server_fn_paths() {
        if path.starts_with("/api/study/") || path.starts_with("/api/auth/") || path.starts_with("/api/share/") {
            continue;
        }
        let r = send(&router, post(path, EVERY_ARGUMENT, &cy)).await;
        if no_project.contains(&path) {
            assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
            continue;
        }
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
        assert!(
            r.body.contains("no access to project 1") || r.body.contains("only the owner can"),
            "{path}: {}",
            r.body
        );
        refused += 1;
    }
    assert!(refused > 60, "{refused} server functions checked");
    let r = send(&router, post(path_of::<app::api::ListProjects>(), "", &cy)).await;
    assert_eq!(r.body, "[]", "cy sees no project");
    // Where the server sends its LLM requests is the owner's to read.
    let info = path_of::<app::api::GetLlmInfo>();
    let r = send(&router, post(info, "", &cy)).await;
    assert!(r.body.contains("\"provider\":\"offline\"") && !r.body.contains("api.openai.com"), "{}", r.body);
    assert!(send(&router, post(info, "", &owner)).await.body.contains("api.openai.com"));
    for path in [
        "/projects/1/corpus",
        "/api/projects/1/questions/1/export?format=jsonl",
        "/api/evaluations/1/report.json",
        "/api/studies/1/ratings.csv",
        "/api/metrics/1/report.json",
        "/projects/1/metrics/1",
        "/users",
    ] {
        assert_eq!(send(&router, get(path, &cy)).await.status, StatusCode::FORBIDDEN, "{path}");
    }

    // ana reads project 1 and changes nothing.
    let r = send(&router, post(path_of::<app::api::ListProjects>(), "", &ana)).await;
    assert!(r.body.contains("\"A\"") && !r.body.contains("\"B\""), "{}", r.body);
    for (fun, form) in [
        (path_of::<app::api::GetProject>(), "id=1"),
        (path_of::<app::api::ListSetQuestions>(), "set_id=1&page=1"),
        (path_of::<app::api::GetEvaluationReport>(), "id=1"),
        (path_of::<app::api::GetStudyResults>(), "id=1"),
        (path_of::<app::api::GetGraphView>(), "project_id=1&limit=10"),
    ] {
        assert_eq!(send(&router, post(fun, form, &ana)).await.status, StatusCode::OK, "{fun}");
    }
    for (fun, form) in [
        (path_of::<app::api::RenameProject>(), "id=1&name=Mine"),
        (path_of::<app::api::DeleteQuestion>(), "question_id=1"),
        (path_of::<app::api::StartSummaries>(), "project_id=1"),
        (path_of::<app::api::RevokeShare>(), "id=1"),
        (path_of::<app::api::DeleteStudy>(), "id=1"),
    ] {
        let r = send(&router, post(fun, form, &ana)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{fun}");
        assert!(r.body.contains("may read project 1 but not change it"), "{fun}: {}", r.body);
    }
    // Cancelling a job (on PostgreSQL it also marks the job's row, so
    // other processes running it stop): each caller in turn. Job 1 has
    // ended, so those who may cancel are told it is not running (409).
    let cancel = path_of::<app::api::CancelJob>();
    for (caller, cookie, status) in [
        ("owner", owner.as_str(), StatusCode::CONFLICT),
        ("editor", ben.as_str(), StatusCode::CONFLICT),
        ("reader", ana.as_str(), StatusCode::FORBIDDEN),
        ("no rights", cy.as_str(), StatusCode::FORBIDDEN),
        ("rater token", rater_token.as_str(), StatusCode::UNAUTHORIZED),
        ("share token", share_token.as_str(), StatusCode::UNAUTHORIZED),
        ("anonymous", "", StatusCode::UNAUTHORIZED),
    ] {
        let r = send(&router, post(cancel, "id=1", cookie)).await;
        assert_eq!(r.status, status, "{caller}: {}", r.body);
        if status == StatusCode::CONFLICT {
            assert!(r.body.contains("job 1 is not running"), "{caller}: {}", r.body);
        }
    }
    let job = app::ssr::store::jobs::get_job(&pool, 1).await.unwrap();
    assert_eq!(job.status, app::model::JobStatus::Done, "no caller changed the ended job");

    // What the paged views read — a job's items page by page and one item
    // whole, a document's chunks, a study's results version, the graph as
    // a file — each caller in turn: the reader and the owner read, the
    // member without rights is refused (403), and no session at all, a
    // rater's link token or a share token in the cookie is no login (401).
    let items = path_of::<app::api::GetJobItems>();
    let r = send(&router, post(items, "id=1&page=1", &ana)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    let key = page["items"][0]["key"].as_str().expect("job 1 has finished items").to_string();
    // And the lists: every list a page at a time, an answer whole when opened,
    // and the live views' long-poll on each thing it watches.
    let new_reads = [
        (items, "id=1&page=1".to_string(), "\"pages\""),
        (path_of::<app::api::GetJobItem>(), format!("job_id=1&item={key}"), "\"result\""),
        (path_of::<app::api::GetDocumentChunks>(), "id=1&page=1".to_string(), "\"text\""),
        (path_of::<app::api::GetDocument>(), "id=1&part=1".to_string(), "\"parts\":1"),
        (path_of::<app::api::ListDocuments>(), "project_id=1&page=1".to_string(), "\"documents\""),
        (path_of::<app::api::ListJobs>(), "project_id=1&page=1".to_string(), "\"jobs\""),
        (path_of::<app::api::LatestJobs>(), "project_id=1".to_string(), "\"kind\""),
        (path_of::<app::api::ListSetQuestions>(), "set_id=1&page=1".to_string(), "\"questions\""),
        (path_of::<app::api::GetAnswerPage>(), "answer_set_id=1&compare=2&page=1".to_string(), "\"preview\""),
        (path_of::<app::api::GetAnswer>(), "answer_set_id=1&question_id=1".to_string(), "\"contexts\""),
        (path_of::<app::api::Watch>(), "topic=project&id=1".to_string(), "\"active\":false"),
        (path_of::<app::api::Watch>(), "topic=job&id=1".to_string(), "\"active\":false"),
        (path_of::<app::api::Watch>(), "topic=experiment&id=1".to_string(), "\"active\":false"),
        (path_of::<app::api::Watch>(), "topic=study&id=1".to_string(), "\"active\":true"),
        (
            path_of::<app::api::PlanEvaluation>(),
            "question_set_id=1&answer_sets=1,2&pairs=&name=&req[protocol]=both&req[trials]=1&req[repeats]=1\
             &req[tolerance]=10&req[adjustments]=3&req[judge]=offline&req[position_bias]=0&req[length_bias]=0&req[noise]=0"
                .to_string(),
            "\"stages\"",
        ),
        (
            path_of::<app::api::DecideEvaluation>(),
            "pilot=1&question_set_id=1&req[trials]=5&half_width=0.1&difference=0.2".to_string(),
            "\"curve_svg\"",
        ),
        (
            path_of::<app::api::PlanAnswers>(),
            "question_set_id=1&req[name]=bm25&req[params]=&name=&req[target_words]=".to_string(),
            "\"answers: bm25 on ",
        ),
        (
            path_of::<app::api::PlanGraphBuild>(),
            "project_id=1&req[gleaning]=1&req[entity_types]=person&req[summary_budget]=500".to_string(),
            "\"graph\"",
        ),
        (
            path_of::<app::api::PlanGraphQuestions>(),
            "project_id=1&req[node]=2&req[edge]=2&req[subgraph]=1&req[min_hops]=3&req[seed]=42".to_string(),
            "\"questions: graph\"",
        ),
        (
            path_of::<app::api::PlanSummaryQuestions>(),
            "project_id=1&req[users]=2&req[tasks]=2&req[per_task]=2&req[head]=100&req[tail]=100".to_string(),
            "\"questions: summary\"",
        ),
        (
            path_of::<app::api::PlanHierarchicalQuestions>(),
            "project_id=1&req[per_category]=1&req[levels]=2&req[dimensions]=QC&req[factorial]=0&req[seed]=42".to_string(),
            "\"questions: hierarchical\"",
        ),
    ];
    let callers = [
        ("owner", owner.as_str(), StatusCode::OK),
        ("reader", ana.as_str(), StatusCode::OK),
        ("no rights", cy.as_str(), StatusCode::FORBIDDEN),
        ("rater token", rater_token.as_str(), StatusCode::UNAUTHORIZED),
        ("share token", share_token.as_str(), StatusCode::UNAUTHORIZED),
        ("anonymous", "", StatusCode::UNAUTHORIZED),
    ];
    // Who runs a job now (the processes holding its items, on the
    // job's detail), each caller in turn: two items held by one process.
    let beat = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
    let held = format!(
        "INSERT INTO job_queue (job_id, phase, key, seq, worker, heartbeat)
         VALUES (1, 'p', 'k1', 1, 'host-a:4242:17', {beat}), (1, 'p', 'k2', 2, 'host-a:4242:17', {beat})"
    );
    common::execute(&pool, &held, &[]).await;
    let detail = path_of::<app::api::GetJobDetail>();
    for &(caller, cookie, status) in &callers {
        let r = send(&router, post(detail, "id=1", cookie)).await;
        assert_eq!(r.status, status, "{caller} {detail}: {}", r.body);
        if status == StatusCode::OK {
            assert!(r.body.contains(r#""claimants":[{"host":"host-a","pid":4242,"items":2,"#), "{caller}: {}", r.body);
        } else {
            assert!(!r.body.contains("host-a"), "{caller}: {}", r.body);
        }
    }
    common::execute(&pool, "DELETE FROM job_queue", &[]).await;
    for (fun, form, expect) in &new_reads {
        for &(caller, cookie, status) in &callers {
            let r = send(&router, post(fun, form, cookie)).await;
            assert_eq!(r.status, status, "{caller} {fun}: {}", r.body);
            if status == StatusCode::OK {
                assert!(r.body.contains(expect), "{caller} {fun}: {}", r.body);
            }
        }
    }
    for file in ["graph.json", "graph.graphml"] {
        let path = format!("/api/projects/1/graph/{file}");
        for &(caller, cookie, status) in &callers {
            let r = send(&router, get(&path, cookie)).await;
            assert_eq!(r.status, status, "{caller} {path}: {}", &r.body[..r.body.len().min(200)]);
            if status == StatusCode::OK {
                assert!(r.body.contains("Salt Guild"), "{caller} {path}: the sample graph's entities");
            }
        }
    }
    assert_eq!(send(&router, get("/projects/1/corpus", &ana)).await.status, StatusCode::OK);
    assert_eq!(send(&router, get("/projects/2/corpus", &ana)).await.status, StatusCode::FORBIDDEN);
    assert_eq!(
        send(&router, get("/api/projects/1/questions/1/export?format=jsonl", &ana)).await.status,
        StatusCode::OK
    );
    assert_eq!(send(&router, get("/api/evaluations/1/report.json", &ana)).await.status, StatusCode::OK);
    assert_eq!(send(&router, post("/api/projects/1/upload", "", &ana)).await.status, StatusCode::FORBIDDEN);
    // The import forms — another system's index on the Graph page, a
    // benchmark's questions and corpus on the Questions page, annotations as
    // a study (the HieraRAG authors' human judging) on the Studies page —
    // need the edit right on the project the path names: each caller in turn
    // (an editor's form without its file passes the check and comes back to
    // its page with the reason).
    let imports: [(&str, fn(i64, &str) -> Request<Body>); 3] =
        [("graph", graph_import), ("benchmark", benchmark_import), ("study", study_import)];
    for (form, request) in imports {
        for (caller, cookie, status) in [
            ("owner", owner.as_str(), StatusCode::SEE_OTHER),
            ("editor", ben.as_str(), StatusCode::SEE_OTHER),
            ("reader", ana.as_str(), StatusCode::FORBIDDEN),
            ("no rights", cy.as_str(), StatusCode::FORBIDDEN),
            ("rater token", rater_token.as_str(), StatusCode::UNAUTHORIZED),
            ("share token", share_token.as_str(), StatusCode::UNAUTHORIZED),
            ("anonymous", "", StatusCode::UNAUTHORIZED),
        ] {
            let r = send(&router, request(1, cookie)).await;
            assert_eq!(r.status, status, "{form} import, {caller}: {}", &r.body[..r.body.len().min(200)]);
        }
        assert_eq!(send(&router, request(2, &ben)).await.status, StatusCode::FORBIDDEN, "{form} import in project 2");
    }
    // The files other tools read are the sets' exports: the read right, on
    // the project the path names.
    for (caller, cookie, status) in [
        ("owner", owner.as_str(), StatusCode::OK),
        ("editor", ben.as_str(), StatusCode::OK),
        ("reader", ana.as_str(), StatusCode::OK),
        ("no rights", cy.as_str(), StatusCode::FORBIDDEN),
        ("rater token", rater_token.as_str(), StatusCode::UNAUTHORIZED),
        ("share token", share_token.as_str(), StatusCode::UNAUTHORIZED),
        ("anonymous", "", StatusCode::UNAUTHORIZED),
    ] {
        for path in [
            "/api/projects/1/questions/1/export?format=lightrag",
            "/api/projects/1/answers/1/export?format=lightrag",
            "/api/projects/1/answers/1/export?format=graphrag-bench",
        ] {
            let r = send(&router, get(path, cookie)).await;
            assert_eq!(r.status, status, "{caller} {path}: {}", &r.body[..r.body.len().min(200)]);
            if status == StatusCode::OK {
                assert!(r.body.starts_with("- Question 1: ") || r.body.starts_with('['), "{path}: {}", r.body);
            }
        }
    }
    let r = send(&router, get("/api/projects/2/answers/1/export?format=graphrag-bench", &owner)).await;
    assert!(r.status.is_client_error(), "another project's set under project 2's path: {}", r.status);

    // ben edits project 1, only reads project 2, and is no owner.
    let r = send(&router, post(path_of::<app::api::RenameProject>(), "id=1&name=Renamed+by+ben", &ben)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = send(&router, post(path_of::<app::api::RenameProject>(), "id=2&name=Nope", &ben)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    for (fun, form) in [
        (path_of::<app::api::CreateProject>(), "name=Another"),
        (path_of::<app::api::DeleteProject>(), "id=1"),
        (path_of::<app::api::SaveLlmSettings>(), EVERY_ARGUMENT),
        (path_of::<app::api::CreateMember>(), "name=dee&password=correct+horse+battery"),
        (path_of::<app::api::SetMemberAccess>(), &format!("user_id={}&project_id=2&access=edit", ids[1])),
    ] {
        let r = send(&router, post(fun, form, &ben)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{fun}: {}", r.body);
        assert!(r.body.contains("only the owner can"), "{fun}: {}", r.body);
    }
    let name = common::texts(&pool, "SELECT name FROM projects WHERE id = 2", &[]).await.remove(0);
    assert_eq!(name, "B");

    // Taking rights away works at once; a deleted collaborator's session ends.
    send(&router, post(grant, &format!("user_id={}&project_id=1&access=none", ids[0]), &owner)).await;
    assert_eq!(send(&router, get("/projects/1/corpus", &ana)).await.status, StatusCode::FORBIDDEN);
    let r = send(&router, post(path_of::<app::api::DeleteMember>(), &format!("user_id={}", ids[1]), &owner)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        send(&router, post(path_of::<app::api::ListProjects>(), "", &ben)).await.status,
        StatusCode::UNAUTHORIZED
    );
    // The CLI grants too.
    let out = json(&assay(&db, &["--json", "user", "grant", "cy", "B", "--access", "edit"], &[]).await);
    assert_eq!(out["access"], "edit");
    assert_eq!(send(&router, get("/projects/2/corpus", &cy)).await.status, StatusCode::OK);
}

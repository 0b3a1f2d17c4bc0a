//! PostgreSQL as the shared database: `assay db copy` both
//! ways, and the copy's table list against both schemas. (The experiment
//! manifest's run on PostgreSQL is in `experiment.rs`.)

use crate::common;

use app::ssr::store::copy::{self, TABLES};
use common::{assay, json, sample_with_answers};

/// Project A with one of everything the CLI makes: corpus, graph, graph
/// questions, two answer sets, an evaluation, a question study, a share
/// link and the owner account.
async fn one_of_everything(db: &std::path::Path) {
    let set = sample_with_answers(db, [2, 1, 1]).await;
    let run = ["--json", "eval", "run", "A", "--set", &set, "--methods", "bm25,lightrag", "--judge", "offline"];
    json(&assay(db, &run, &[]).await);
    json(&assay(db, &["--json", "study", "create", "A", "--questions", &format!("{set}:2")], &[]).await);
    json(&assay(db, &["--json", "share", "create", "A", "--page", "evaluation:1", "--expires-days", "7"], &[]).await);
    json(&assay(db, &["--json", "user", "create", "owner"], &[("ASSAY_PASSWORD", "correct horse battery")]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn db_copy_sqlite_to_postgresql_and_back_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.db");
    one_of_everything(&first).await;
    let pg = common::pg_database().await;
    let back = dir.path().join("back.db");
    for (from, to) in [(first.to_str().unwrap(), pg.url.as_str()), (pg.url.as_str(), back.to_str().unwrap())] {
        let out = json(&assay(&first, &["--json", "db", "copy", "--from", from, "--to", to], &[]).await);
        assert!(out["rows"].as_i64().unwrap() > 100, "{out}");
        assert_eq!(out["tables"].as_array().unwrap().len(), TABLES.len());
    }
    let (a, b, p) = (
        app::ssr::store::open(&first).await.unwrap(),
        app::ssr::store::open(&back).await.unwrap(),
        app::ssr::store::open_target(&pg.url).await.unwrap(),
    );
    let mut rows = 0;
    for table in TABLES {
        let original = copy::rows(&a, table).await.unwrap();
        assert_eq!(copy::rows(&b, table).await.unwrap(), original, "{} after the round trip", table.name);
        assert_eq!(copy::rows(&p, table).await.unwrap(), original, "{} in PostgreSQL", table.name);
        rows += original.len();
    }
    assert!(rows > 100);
    // The evaluation's report, written from each: the same files.
    for (db, out) in [(&first, "r1"), (&back, "r2")] {
        let out = dir.path().join(out);
        json(&assay(db, &["--json", "eval", "report", "1", "--out", out.to_str().unwrap()], &[]).await);
    }
    for f in ["report.json", "pairs.csv", "judgments.csv"] {
        let read = |d: &str| std::fs::read(dir.path().join(d).join(f)).unwrap();
        assert_eq!(read("r1"), read("r2"), "{f}");
    }
    // New rows in PostgreSQL after the copy take fresh ids (its sequences
    // moved past the copied ones).
    let made = json(&assay(&pg.url, &["--json", "project", "create", "After the copy"], &[]).await);
    assert_eq!(made["id"].as_i64(), Some(2), "{made}");
    // A copy never merges: a target with rows is refused, and left as it was.
    let refused = assay(&first, &["db", "copy", "--from", first.to_str().unwrap(), "--to", &pg.url], &[]).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("the target database is not empty: projects (2)"), "{stderr}");
    let missing = assay(&first, &["db", "copy", "--from", "/no/such.db", "--to", &pg.url], &[]).await;
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--from /no/such.db: no such SQLite file"));
}

/// `copy::TABLES` names every table and column of both schemas, with the
/// types each stores: a migration that adds a column must add it there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_copy_covers_every_column_of_both_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = app::ssr::store::open(&dir.path().join("s.db")).await.unwrap();
    let pg = common::pg_database().await;
    let postgres = app::ssr::store::open_target(&pg.url).await.unwrap();
    let mut listed: Vec<(String, String)> =
        TABLES.iter().flat_map(|t| t.columns.iter().map(|(c, _)| (t.name.to_string(), c.to_string()))).collect();
    listed.sort();
    let lite: Vec<(String, String)> = sqlx::query_as(
        "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
          WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '_sqlx_migrations' ORDER BY 1, 2",
    )
    .fetch_all(sqlite.sqlite().unwrap())
    .await
    .unwrap();
    let pg_columns: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations' ORDER BY 1, 2",
    )
    .fetch_all(postgres.postgres().unwrap())
    .await
    .unwrap();
    let pg_names: Vec<(String, String)> = pg_columns.iter().map(|(t, c, _)| (t.clone(), c.clone())).collect();
    assert_eq!(lite, listed, "SQLite's schema and copy::TABLES");
    assert_eq!(pg_names, listed, "PostgreSQL's schema and copy::TABLES");
    for (table, column, ty) in &pg_columns {
        let kind =
            TABLES.iter().find(|t| t.name == table).unwrap().columns.iter().find(|(c, _)| c == column).unwrap().1;
        let want = match kind {
            copy::Kind::Int => "bigint",
            copy::Kind::Real => "double precision",
            copy::Kind::Text => "text",
            copy::Kind::Bool => "boolean",
            copy::Kind::Bytes => "bytea",
        };
        assert_eq!(ty, want, "{table}.{column}");
    }
}

/// A fresh database of each kind with one job: (label, database, its
/// PostgreSQL guard, job id).
async fn each_database_with_a_job(
    dir: &std::path::Path,
) -> Vec<(&'static str, app::ssr::store::Db, Option<common::PgDatabase>, i64)> {
    let mut out = Vec::new();
    for kind in ["SQLite", "PostgreSQL"] {
        let (db, guard) = if kind == "SQLite" {
            (app::ssr::store::open(&dir.join("q.db")).await.unwrap(), None)
        } else {
            let pg = common::pg_database().await;
            (app::ssr::store::open_target(&pg.url).await.unwrap(), Some(pg))
        };
        let project =
            app::ssr::store::projects::create_project(&db, "Q", &Default::default()).await.unwrap().summary.id;
        let job = app::ssr::store::jobs::create_job(
            &db,
            project,
            app::model::JobKind::Evaluation,
            &serde_json::json!({}),
            None,
            0,
        )
        .await
        .unwrap();
        out.push((kind, db, guard, job));
    }
    out
}

/// Three claimants on one job's 5,000 queued items, in batches of 50, each
/// completing what it claimed: every item is claimed and completed exactly
/// once, and the queue ends empty — on SQLite and on PostgreSQL (where the
/// claims are `FOR UPDATE SKIP LOCKED`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_claimants_take_every_queued_item_exactly_once() {
    use app::ssr::store::queue;
    let dir = tempfile::tempdir().unwrap();
    for (kind, db, _guard, job) in each_database_with_a_job(dir.path()).await {
        let keys: Vec<String> = (0..5000).map(|i| format!("item-{i:05}")).collect();
        assert!(queue::enqueue(&db, job, "p1", "llm", &keys).await.unwrap());
        assert!(!queue::enqueue(&db, job, "p1", "llm", &keys[..10]).await.unwrap(), "{kind}: queued once");
        assert_eq!(queue::remaining(&db, job, "p1").await.unwrap(), 5000);
        // A phase queued with one LLM is not run with another.
        let refused = queue::enqueue(&db, job, "p1", "other llm", &keys).await.unwrap_err().to_string();
        assert!(refused.contains("runs with llm; this process has other llm"), "{kind}: {refused}");
        // Another phase's items are claimed by their phase's name only.
        assert!(queue::enqueue(&db, job, "p2", "llm", &["later".to_string()]).await.unwrap());
        let mut tasks = tokio::task::JoinSet::new();
        for w in 0..3 {
            let db = db.clone();
            tasks.spawn(async move {
                let worker = format!("worker-{w}");
                let mut mine = Vec::new();
                loop {
                    let claimed = queue::claim(&db, job, "p1", &worker, 50, 30).await.unwrap();
                    if claimed.is_empty() {
                        return mine;
                    }
                    let done = queue::complete(&db, job, &worker, &claimed).await.unwrap();
                    assert_eq!(done.len(), claimed.len(), "a live claim is never taken");
                    mine.extend(done);
                }
            });
        }
        let mut all = Vec::new();
        let mut per_worker = Vec::new();
        while let Some(mine) = tasks.join_next().await {
            let mine = mine.unwrap();
            per_worker.push(mine.len());
            all.extend(mine);
        }
        let claimed = all.len();
        all.sort();
        all.dedup();
        assert_eq!((claimed, all.len()), (5000, 5000), "{kind}: each item once ({per_worker:?} per claimant)");
        assert_eq!(all, keys);
        assert_eq!(queue::remaining(&db, job, "p1").await.unwrap(), 0, "{kind}");
        assert_eq!(queue::claim(&db, job, "p2", "worker-0", 50, 30).await.unwrap(), ["later"], "{kind}");
        // A job started anew forgets its phases.
        queue::reset(&db, job).await.unwrap();
        assert!(queue::enqueue(&db, job, "p1", "other llm", &keys[..1]).await.unwrap(), "{kind}");
    }
}

/// A claimant that dies (stops heartbeating) loses its items to another
/// after the timeout, and cannot complete them afterwards; a claimant that
/// heartbeats keeps them; a released claim is free at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_claimants_items_go_to_another_after_the_timeout() {
    use app::ssr::store::queue;
    let dir = tempfile::tempdir().unwrap();
    for (kind, db, _guard, job) in each_database_with_a_job(dir.path()).await {
        let keys: Vec<String> = (0..30).map(|i| format!("k{i:02}")).collect();
        queue::enqueue(&db, job, "p", "llm", &keys).await.unwrap();
        let dead = queue::claim(&db, job, "p", "dead", 10, 2).await.unwrap();
        let live = queue::claim(&db, job, "p", "live", 10, 2).await.unwrap();
        assert_eq!((dead[0].as_str(), live[0].as_str()), ("k00", "k10"), "{kind}: in the job's order, none shared");
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
        assert_eq!(queue::heartbeat(&db, "live").await.unwrap(), 10);
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
        // 2.4 s after the claims: "dead" never beat, "live" did 1.2 s ago.
        let who = |c: Vec<(String, i64, f64)>| c.into_iter().map(|(w, n, _)| (w, n)).collect::<Vec<_>>();
        let standing = queue::claimants(&db, job, 2).await.unwrap();
        assert_eq!(who(standing.clone()), [("live".to_string(), 10)], "{kind}: the dead claimant is not shown");
        assert!((1.0..2.0).contains(&standing[0].2), "{kind}: live's heartbeat {} s ago", standing[0].2);
        let taken = queue::claim(&db, job, "p", "other", 30, 2).await.unwrap();
        let expected: Vec<String> = keys[..10].iter().chain(&keys[20..]).cloned().collect();
        assert_eq!(taken, expected, "{kind}: the dead claimant's items and the free ones; not the live one's");
        assert_eq!(
            who(queue::claimants(&db, job, 2).await.unwrap()),
            [("other".to_string(), 20), ("live".to_string(), 10)],
            "{kind}: busiest first"
        );
        assert!(queue::complete(&db, job, "dead", &dead).await.unwrap().is_empty(), "{kind}: too late");
        assert_eq!(queue::release(&db, job, "live").await.unwrap(), 10);
        assert_eq!(
            queue::claim(&db, job, "p", "third", 30, 2).await.unwrap(),
            keys[10..20].to_vec(),
            "{kind}: released"
        );
        assert_eq!(queue::complete(&db, job, "other", &taken).await.unwrap().len(), 20);
        assert_eq!(queue::remaining(&db, job, "p").await.unwrap(), 10);
    }
}

/// On a shared server a running job's process may be another machine's:
/// its process id means nothing here, and only a stale heartbeat shows it
/// interrupted (SQLite, one machine, also asks whether the process lives).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_another_machine_runs_is_not_taken_for_interrupted() {
    use app::model::JobStatus;
    use app::ssr::store::jobs;
    let dir = tempfile::tempdir().unwrap();
    for (kind, db, _guard, job) in each_database_with_a_job(dir.path()).await {
        jobs::mark_running(&db, job, false).await.unwrap();
        // A process id no process here has (above Linux's pid_max).
        common::execute(&db, "UPDATE jobs SET runner_pid = 99999999 WHERE id = $1", &[job]).await;
        let expected = if db.is_postgres() { JobStatus::Running } else { JobStatus::Interrupted };
        assert_eq!(jobs::get_job(&db, job).await.unwrap().status, expected, "{kind}");
        // Our own process id on another machine's live job: left running.
        common::execute(&db, "UPDATE jobs SET runner_pid = $1 WHERE id = $2", &[std::process::id() as i64, job]).await;
        let interrupted = jobs::interrupt_orphans(&db).await.unwrap();
        assert_eq!(interrupted, u64::from(!db.is_postgres()), "{kind}");
        if db.is_postgres() {
            // Its heartbeat 31 s old: now it is interrupted.
            common::execute(
                &db,
                "UPDATE jobs SET heartbeat = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-31 seconds') WHERE id = $1",
                &[job],
            )
            .await;
            assert_eq!(jobs::get_job(&db, job).await.unwrap().status, JobStatus::Interrupted);
            assert_eq!(jobs::interrupt_orphans(&db).await.unwrap(), 1);
        }
    }
}

/// The deployment's LLM budget: three processes (three pools) leasing and
/// giving back slots as fast as they can never hold more than the limit
/// between them; a dead holder's leases come free at their expiry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_never_hold_more_llm_slots_than_the_limit() {
    use app::ssr::store::slots;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    for (kind, db, guard, _) in each_database_with_a_job(dir.path()).await {
        const LIMIT: usize = 8;
        slots::ensure(&db, LIMIT).await.unwrap();
        let held = std::sync::Arc::new(AtomicUsize::new(0));
        let most = std::sync::Arc::new(AtomicUsize::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for p in 0..3 {
            // Each process its own pool, as separate processes have.
            let pool = match &guard {
                Some(pg) => app::ssr::store::open_target(&pg.url).await.unwrap(),
                None => db.clone(),
            };
            let (held, most) = (held.clone(), most.clone());
            tasks.spawn(async move {
                let holder = format!("process-{p}");
                let mut leased_total = 0;
                for round in 0..60 {
                    let got = slots::lease(pool.pool(), &holder, 1 + round % 4, LIMIT, 30).await.unwrap();
                    let now = held.fetch_add(got.len(), Ordering::SeqCst) + got.len();
                    most.fetch_max(now, Ordering::SeqCst);
                    leased_total += got.len();
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    held.fetch_sub(got.len(), Ordering::SeqCst);
                    assert_eq!(slots::give_back(pool.pool(), &holder, &got).await.unwrap(), got.len() as u64);
                }
                leased_total
            });
        }
        let mut leased = 0;
        while let Some(n) = tasks.join_next().await {
            leased += n.unwrap();
        }
        let most = most.load(Ordering::SeqCst);
        assert!(most <= LIMIT, "{kind}: {most} slots held at once, limit {LIMIT}");
        assert!(leased > 100, "{kind}: the budget was used ({leased} leases)");
        // A holder that dies keeps its slots until the lease expires.
        assert_eq!(slots::lease(db.pool(), "dead", LIMIT, LIMIT, 1).await.unwrap().len(), LIMIT);
        assert!(slots::lease(db.pool(), "live", 1, LIMIT, 30).await.unwrap().is_empty(), "{kind}: spent");
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
        assert_eq!(slots::lease(db.pool(), "live", LIMIT, LIMIT, 30).await.unwrap().len(), LIMIT, "{kind}: expired");
        assert_eq!(slots::renew(db.pool(), "live", 30).await.unwrap(), LIMIT as u64);
        assert_eq!(
            slots::give_back(db.pool(), "dead", &[0, 1]).await.unwrap(),
            0,
            "{kind}: not the dead one's any more"
        );
    }
}

/// `db copy` of a database in use: while one task logs people
/// in and another adds raters who rate, 20 copies in a row each succeed,
/// each target is whole (every foreign key holds, every table's count is
/// the snapshot's) and holds no more than the source by then. Before,
/// copying while raters rated failed on a foreign key, and while people
/// logged in the counts differed after the commit, leaving the target full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_of_a_database_in_use_is_a_snapshot() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let db = common::test_db(dir.path(), "live").await;
    let set = sample_with_answers(&db, [2, 1, 1]).await;
    json(&assay(&db, &["--json", "study", "create", "A", "--questions", &format!("{set}:2")], &[]).await);
    json(&assay(&db, &["--json", "user", "create", "owner"], &[("ASSAY_PASSWORD", "correct horse battery")]).await);
    let pool = db.open().await;
    let link: i64 = common::scalar(&pool, "SELECT MIN(id) FROM study_links WHERE study_id = $1", &[1]).await;
    let items: i64 = common::scalar(&pool, "SELECT COUNT(*) FROM study_items WHERE study_id = $1", &[1]).await;
    let item: i64 = common::scalar(&pool, "SELECT MIN(id) FROM study_items WHERE study_id = $1", &[1]).await;
    assert!(items > 0);
    let dims = app::ssr::studies::results_view(&pool, 1).await.unwrap().study.dimensions.len();

    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let logins = {
        let (pool, stop) = (pool.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                app::ssr::auth::new_session(&pool, 1).await.unwrap();
                n += 1;
            }
            n
        })
    };
    let raters = {
        let (pool, stop) = (pool.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let hash = format!("live-rater-{n}");
                app::ssr::store::studies::insert_rater(&pool, 1, link, &hash, 7).await.unwrap();
                let (rater, _, _) = app::ssr::store::studies::rater(&pool, &hash, 1, link).await.unwrap().unwrap();
                app::ssr::store::studies::upsert_scores(&pool, rater, item, &vec![3; dims]).await.unwrap();
                n += 1;
            }
            n
        })
    };
    for i in 0..20 {
        let target_path = dir.path().join(format!("copy-{i}.db"));
        let target = app::ssr::store::open(&target_path).await.unwrap();
        let copied =
            copy::copy(&pool, &target, false, &|_, _| {}).await.unwrap_or_else(|e| panic!("copy {i}: {e}")).tables;
        // Whole: the counts the copy checked are the target's, every
        // foreign key holds, and the source has at least as much by now.
        assert_eq!(copy::counts(&target).await.unwrap(), copied, "copy {i}");
        let broken: i64 = common::scalar(&target, "SELECT COUNT(*) FROM pragma_foreign_key_check", &[]).await;
        assert_eq!(broken, 0, "copy {i}: foreign keys");
        for ((t, n), (_, now)) in copied.iter().zip(copy::counts(&pool).await.unwrap()) {
            assert!(*n <= now, "copy {i}: {t} holds {n}, the source {now}");
        }
        let ratings = copied.iter().find(|(t, _)| *t == "ratings").unwrap().1;
        let raters = copied.iter().find(|(t, _)| *t == "raters").unwrap().1;
        assert!(ratings >= raters, "copy {i}: every copied rater's rating came with it");
    }
    stop.store(true, Ordering::SeqCst);
    let (logins, raters) = (logins.await.unwrap(), raters.await.unwrap());
    assert!(logins > 20 && raters > 20, "the source was written throughout: {logins} logins, {raters} raters");
    println!("20 copies of a database in use: all whole ({logins} logins and {raters} raters written meanwhile)");
}

/// An SQLite database written before U+0000 was refused may hold
/// it; PostgreSQL cannot. The copy names the rows and writes nothing, or
/// with `--strip-nul` removes those characters and lists the rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_of_rows_holding_nul_names_them_or_strips_them_by_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    json(&assay(&old, &["--json", "project", "create", "A"], &[]).await);
    json(&assay(&old, &["--json", "corpus", "add", "A", "--sample"], &[]).await);
    {
        // As a database before the refusal was written: NUL in a
        // document's title and body and in the project's name.
        let pool = app::ssr::store::open(&old).await.unwrap();
        common::execute(
            &pool,
            "UPDATE documents SET title = title || char(0) || 'x', body = char(0) || body WHERE id = $1",
            &[1],
        )
        .await;
        common::execute(&pool, "UPDATE projects SET name = 'A' || char(0) WHERE id = $1", &[1]).await;
        pool.close().await;
    }
    let pg = common::pg_database().await;
    let copy = |strip: bool| {
        let mut args = vec!["--json", "db", "copy", "--from", old.to_str().unwrap(), "--to", pg.url.as_str()];
        if strip {
            args.push("--strip-nul");
        }
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let refused = assay(&old, &copy(false).iter().map(String::as_str).collect::<Vec<_>>(), &[]).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("2 rows hold U+0000"), "{stderr}");
    assert!(stderr.contains("projects id=1 (name)") && stderr.contains("documents id=1 (title, body)"), "{stderr}");
    assert!(stderr.contains("--strip-nul"), "{stderr}");
    let target = app::ssr::store::open_target(&pg.url).await.unwrap();
    assert!(copy::counts(&target).await.unwrap().iter().all(|(_, n)| *n == 0), "the refused copy wrote nothing");

    let out = json(&assay(&old, &copy(true).iter().map(String::as_str).collect::<Vec<_>>(), &[]).await);
    let stripped: Vec<&str> = out["nul_stripped"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(stripped, ["projects id=1 (name)", "documents id=1 (title, body)"], "{out}");
    let source = app::ssr::store::open(&old).await.unwrap();
    let (was, now) = (
        common::texts(&source, "SELECT body FROM documents WHERE id = $1", &[1]).await,
        common::texts(&target, "SELECT body FROM documents WHERE id = $1", &[1]).await,
    );
    assert_eq!(now[0], was[0].replace('\0', ""));
    assert!(!now[0].is_empty());
    assert_eq!(common::texts(&target, "SELECT name FROM projects WHERE id = $1", &[1]).await, ["A"]);
    // Every other row as it was.
    let table = TABLES.iter().find(|t| t.name == "chunks").unwrap();
    assert_eq!(copy::rows(&target, table).await.unwrap(), copy::rows(&source, table).await.unwrap());
}

//! `assay study …`: studies made headless (question ratings, answer
//! validation), the LLM rater run on one, and their results.

use std::process::ExitCode;

use app::ssr::store::Db;
use clap::Subcommand;
use serde_json::json;

use engine::llm::settings::LlmSettings;

use super::{execute_job, job_line, write_stdout, Output};

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Create a study: draw questions from sets, make an open link (a rater
    /// per browser) and per-rater links. Prints the owner's results URL and
    /// the rater links (tokens shown only now).
    Create {
        project: String,
        #[command(flatten)]
        req: types::requests::StudyRequest,
        /// A JSON file of dimensions (default: the kind's own).
        #[arg(long)]
        dimensions: Option<std::path::PathBuf>,
        #[arg(long)]
        name: Option<String>,
        /// The address the URLs use.
        #[arg(long, env = "ASSAY_BASE_URL", default_value = "http://127.0.0.1:3000")]
        base_url: String,
    },
    /// Have the configured LLM rate a study's items with the rubric the
    /// humans read (a job), for the human-vs-LLM agreement in the results.
    Rate { id: i64 },
    /// A study's results: means and 95% intervals per dimension and source,
    /// per level, agreement, category agreement, the LLM rater's agreement
    /// with the humans; or every rating as CSV.
    Results {
        id: i64,
        #[arg(long, value_parser = ["json", "csv"], default_value = "json")]
        format: String,
    },
    /// The HieraRAG authors' human judging (HieraRAG §2.5, §4), computed
    /// from their own folder — `rag_system/human_judging/` of their
    /// repository: `completed_human/COMPLETED_*.xlsx`,
    /// `annotate_files/shared_questions_list.csv`,
    /// `complete_analysis_results.json`. Each figure as their scripts
    /// compute it (as-published), the value their files hold, and the
    /// standard reading; no project needed.
    HieraragJudging {
        /// The `human_judging` folder.
        dir: std::path::PathBuf,
    },
    /// Import the HieraRAG authors' human judging (the folder
    /// `hierarag-judging` reads) into a project as a closed
    /// answer-validation study: a question per `qa_id`, an annotator per
    /// workbook. Its results (page, `study results`) show Assay's standard
    /// reading and every figure as the authors' scripts compute it.
    ImportHierarag {
        project: String,
        /// The `human_judging` folder.
        dir: std::path::PathBuf,
        #[arg(long, default_value = "")]
        name: String,
    },
}

pub async fn run(pool: &Db, out: Output, llm: &LlmSettings, cmd: StudyCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        StudyCommand::Create { project, req, dimensions, name, base_url } => {
            let dimensions = dimensions.map(|path| super::json_file(&path, "--dimensions")).transpose()?;
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let name = name.unwrap_or_else(|| {
                if req.kind == engine::study::Kind::Answers { "Answer validation" } else { "Question rating" }.into()
            });
            let spec = app::ssr::studies::StudySpec { project_id: p.summary.id, name, request: req, dimensions };
            let created = app::ssr::studies::create(pool, &spec).await?;
            let base = base_url.trim_end_matches('/');
            let owner_url = format!("{base}/projects/{}/studies/{}", p.summary.id, created.study_id);
            let rater_url =
                if created.open_token.is_empty() { String::new() } else { format!("{base}/s/{}", created.open_token) };
            let rater_urls: Vec<String> = created.rater_tokens.iter().map(|t| format!("{base}/s/{t}")).collect();
            out.print(
                json!({"study_id": created.study_id, "owner_url": owner_url, "rater_url": rater_url, "rater_urls": rater_urls}),
                || {
                    let mut lines = vec![
                        format!("study {} created", created.study_id),
                        format!("results (owner): {owner_url}"),
                        if rater_url.is_empty() {
                            "no open link: per-rater links only".to_string()
                        } else {
                            format!("open rater link: {rater_url}")
                        },
                    ];
                    lines.extend(rater_urls.iter().enumerate().map(|(i, u)| format!("rater {}: {u}", i + 1)));
                    lines.push("(links are shown only now: Assay keeps their hashes)".into());
                    lines.join("\n")
                },
            );
            Ok(ExitCode::SUCCESS)
        }
        StudyCommand::Rate { id } => {
            let job = app::ssr::studies::create_llm_rating(pool, id, false).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
            let results = app::ssr::studies::results(pool, id).await?;
            out.print(json!({"job": after, "llm": results.llm}), || {
                let mut lines = vec![job_line(&after)];
                for a in results.llm.iter().flat_map(|l| &l.rows) {
                    lines.push(format!(
                        "{}: {} items, κ {} over {} humans, ρ {}",
                        a.dimension,
                        a.items,
                        a.kappa.map_or("—".into(), |k| format!("{k:.3}")),
                        a.humans,
                        a.spearman.map_or("—".into(), |r| format!("{r:.3}"))
                    ));
                }
                lines.join("\n")
            });
            Ok(code)
        }
        StudyCommand::HieraragJudging { dir } => {
            let a = engine::study::hierarag_judging::analyse(&dir).map_err(anyhow::Error::msg)?;
            let rows = a.rows();
            out.print(
                json!({"folder": a.folder, "workbooks": a.workbooks, "figures": rows, "summary": a.summary,
                       "standard": a.standard, "coherence": a.coherence}),
                || judging_lines(&a, &rows),
            );
            Ok(ExitCode::SUCCESS)
        }
        StudyCommand::ImportHierarag { project, dir, name } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let inputs = engine::study::hierarag_judging::Inputs::from_folder(&dir).map_err(anyhow::Error::msg)?;
            let made = app::ssr::studies::import_hierarag(pool, p.summary.id, &name, inputs).await?;
            out.print(
                json!({"study_id": made.study_id, "questions": made.questions, "annotators": made.annotators,
                       "ratings": made.ratings, "report": made.line}),
                || format!("study {}: {}", made.study_id, made.line),
            );
            Ok(ExitCode::SUCCESS)
        }
        StudyCommand::Results { id, format } => {
            if format == "csv" {
                return write_stdout(&app::ssr::studies::ratings_csv(pool, id).await?);
            }
            let c = app::ssr::studies::results(pool, id).await?;
            let imported = app::ssr::studies::imported_analysis(pool, id).await?.map(|a| a.rows());
            let value = json!({"study": c.view, "results": c.results, "llm": c.llm, "as_published": imported});
            println!("{}", serde_json::to_string_pretty(&value)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The human-judging figures as a table: as published, the authors' file,
/// the standard reading, where the figure comes from.
fn judging_lines(
    a: &engine::study::hierarag_judging::Analysis,
    rows: &[engine::study::hierarag_judging::FigureRow],
) -> String {
    let f = |v: Option<f64>| v.map_or("—".to_string(), |x| format!("{x:.6}"));
    let mut lines = vec![
        format!(
            "{} annotators ({}), {} questions, {} shared, {} category picks",
            a.workbooks.len(),
            a.workbooks.join(", "),
            a.summary.questions,
            a.summary.shared,
            a.summary.picks
        ),
        format!("{:<42} {:>12} {:>12} {:>12}  source", "figure", "as-published", "authors", "standard"),
    ];
    for r in rows {
        lines.push(format!(
            "{:<42} {:>12} {:>12} {:>12}  {}",
            r.figure,
            f(r.as_published),
            f(r.authors),
            f(r.standard),
            r.source
        ));
    }
    lines.push("category agreement (exact + hierarchical) by dimension:".into());
    for (d, v, n) in &a.summary.by_dimension {
        lines.push(format!("  {d}: {v:.1}% of {n} picks"));
    }
    lines.push("Coherence Ratio per split (script 8), highest first: ratio, annotators agreeing, questions".into());
    for s in &a.coherence.splits {
        lines.push(format!("  {:<26} {:>8.3} {:>6.3} {:>4}", s.split, s.coherence_ratio, s.agreed, s.n));
    }
    lines.push(
        "standard: κ over questions every annotator scored, shares over scored rows; the correlation's \
         standard is each pick's agreement with the generator against its parent split's ratio"
            .into(),
    );
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use types::requests::{Draw, StudyRequest};
    use types::StudyKind;

    use super::*;
    use crate::cli::{Cli, Command};

    fn from_command_line(options: &[&str]) -> Result<StudyRequest, String> {
        let head = ["assay", "study", "create", "p"];
        match Cli::try_parse_from(head.iter().chain(options)).map_err(|e| e.to_string())?.command {
            Command::Study(StudyCommand::Create { req, .. }) => Ok(req),
            other => panic!("{other:?}"),
        }
    }

    fn from_form(body: &str) -> Result<app::api::CreateStudy, String> {
        serde_qs::Config::new(5, false).deserialize_str(body).map_err(|e| e.to_string())
    }

    /// A study's request reads the same from the Studies page's form (as
    /// posted, and as the hydrated page encodes it again) and from `assay
    /// study create`, defaults alike; a bad value is refused naming its field.
    #[test]
    fn a_study_request_reads_the_same_from_the_form_and_the_command_line() {
        let want = StudyRequest {
            kind: StudyKind::Answers,
            questions: vec![Draw { set: 3, count: 15 }, Draw { set: 4, count: 5 }],
            answers: Some(7),
            intro: "Thanks".into(),
            corpus_summary: "A novel.".into(),
            attention_checks: 0,
            target_raters: Some(12),
            rater_links: 2,
            no_open_link: true,
            seed: 9,
            expires_days: Some(30),
        };
        let cli = [
            "--kind",
            "answers",
            "--questions",
            "3:15,4:5",
            "--answers",
            "7",
            "--intro",
            "Thanks",
            "--corpus-summary",
            "A novel.",
            "--target-raters",
            "12",
            "--raters",
            "2",
            "--no-open-link",
            "--seed",
            "9",
            "--expires-days",
            "30",
        ];
        assert_eq!(from_command_line(&cli).unwrap(), want);
        let posted = from_form(
            "project_id=1&name=S&dimensions=&req%5Bkind%5D=answers&req[questions]=3:15,4:5&req[answers]=7\
             &req[intro]=Thanks&req[corpus_summary]=A+novel.&req[attention_checks]=0&req[target_raters]=12\
             &req[rater_links]=2&req[no_open_link]=true&req[seed]=9&req[expires_days]=30",
        )
        .unwrap();
        assert_eq!((posted.project_id, posted.name.as_str(), &posted.req), (1, "S", &want));
        let again = from_form(&serde_qs::to_string(&posted).unwrap()).unwrap();
        assert_eq!(again.req, want);
        want.validate().unwrap();

        // The defaults, and the form's blanks and "reference" answers as none.
        let bare = StudyRequest { questions: vec![Draw { set: 3, count: 15 }], ..Default::default() };
        assert_eq!(from_command_line(&["--questions", "3:15"]).unwrap(), bare);
        let posted = from_form(
            "project_id=1&name=S&req[kind]=questions&req[questions]=3:15&req[answers]=reference&req[intro]=\
             &req[corpus_summary]=&req[attention_checks]=0&req[target_raters]=&req[rater_links]=0&req[seed]=42\
             &req[expires_days]=",
        )
        .unwrap();
        assert_eq!(posted.req, bare);
        assert!(from_command_line(&[]).is_err(), "--questions is required");

        // Refused by field, from either side.
        let e = from_form("project_id=1&name=S&req[questions]=3-15").unwrap_err();
        assert!(e.contains("questions: \"3-15\" is not SET:N"), "{e}");
        let e = from_form("project_id=1&name=S&req[questions]=3:1&req[seed]=x").unwrap_err();
        assert!(e.contains("seed: not a whole number in range"), "{e}");
        assert!(from_command_line(&["--questions", "x:1"]).unwrap_err().contains("\"x\" is not a set id"));
        let check = |r: StudyRequest| r.validate().unwrap_err().to_string();
        assert_eq!(check(StudyRequest::default()), "questions: draw questions from at least one set (SET:N)");
        assert_eq!(check(StudyRequest { attention_checks: 6, ..bare.clone() }), "attention_checks: at most 5, not 6");
        assert_eq!(
            check(StudyRequest { no_open_link: true, ..bare.clone() }),
            "rater_links: a study without an open link needs at least one per-rater link"
        );
        assert_eq!(
            check(from_command_line(&["--questions", "3:15", "--answers", "2"]).unwrap()),
            "answers: answers are rated in an answer-validation study (kind answers)"
        );
        assert_eq!(
            check(StudyRequest { questions: vec![Draw { set: 3, count: 0 }], ..bare }),
            "questions: draw 1 to 10000 questions from a set, not 0 from set 3"
        );
    }
}

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
        /// `questions`: raters score questions on Likert dimensions (seed
        /// 000 §V-C); `answers`: raters validate answers — correctness 0–3,
        /// hallucination 0–2, answerability 0–3, category (HieraRAG §2.5).
        #[arg(long, value_parser = ["questions", "answers"], default_value = "questions")]
        kind: String,
        /// With `--kind answers`: an answer set over the drawn question set
        /// (default: the questions' reference answers).
        #[arg(long)]
        answers: Option<i64>,
        /// A JSON file of dimensions (default: the kind's own).
        #[arg(long)]
        dimensions: Option<std::path::PathBuf>,
        /// `SET:N[,SET:N...]`: draw N questions from each question set.
        #[arg(long, value_delimiter = ',', required = true)]
        questions: Vec<String>,
        /// Per-rater links to make (besides the open link).
        #[arg(long, default_value_t = 0)]
        raters: usize,
        /// Make no open link: only the per-rater links rate (needs --raters).
        #[arg(long)]
        no_open_link: bool,
        #[arg(long)]
        name: Option<String>,
        /// Attention-check items (0–5).
        #[arg(long, default_value_t = 0)]
        attention: usize,
        /// Shown to raters first.
        #[arg(long, default_value = "")]
        intro: String,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// The links stop working this many days from now.
        #[arg(long)]
        expires_days: Option<u32>,
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
        StudyCommand::Create {
            project,
            kind,
            answers,
            dimensions,
            questions,
            raters,
            no_open_link,
            name,
            attention,
            intro,
            seed,
            expires_days,
            base_url,
        } => {
            let kind = engine::study::Kind::parse(&kind).map_err(anyhow::Error::msg)?;
            let dimensions = dimensions.map(|path| super::json_file(&path, "--dimensions")).transpose()?;
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let mut draws = Vec::new();
            for q in &questions {
                let (set, n) = q.split_once(':').ok_or_else(|| anyhow::anyhow!("--questions {q}: expected SET:N"))?;
                let set: i64 =
                    set.trim().parse().map_err(|_| anyhow::anyhow!("--questions {q}: \"{set}\" is not a set id"))?;
                let n: usize =
                    n.trim().parse().map_err(|_| anyhow::anyhow!("--questions {q}: \"{n}\" is not a count"))?;
                draws.push((set, n));
            }
            let req = app::ssr::studies::StudyRequest {
                project_id: p.summary.id,
                name: name.unwrap_or_else(|| {
                    if kind == engine::study::Kind::Answers { "Answer validation" } else { "Question rating" }.into()
                }),
                draws,
                dimensions,
                kind,
                answers,
                intro,
                corpus_summary: String::new(),
                attention_checks: attention,
                target_raters: (raters > 0).then_some(raters as i64),
                rater_links: raters,
                open_link: !no_open_link,
                seed,
                expires_days,
            };
            let created = app::ssr::studies::create(pool, &req).await?;
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

//! `assay answers …`: built-in methods' answers as jobs, imports, exports
//! and the cost table.

use std::process::ExitCode;

use app::ssr::store::Db;
use clap::Subcommand;
use engine::llm::settings::LlmSettings;
use serde_json::json;

use super::{execute_job, job_line, write_stdout, Output};

#[derive(Subcommand, Debug)]
pub enum AnswersCommand {
    /// Answer every question of a set with a built-in method (a job;
    /// resumable). Methods: bm25, lightrag, fastgraphrag, graphrag-local,
    /// graphrag-global. GraphRAG-style methods first write the community
    /// reports they read, once per graph.
    Generate {
        project: String,
        /// The question set.
        #[arg(long)]
        set: i64,
        #[command(flatten)]
        req: types::requests::AnswersRequest,
        /// The answer set's name (default: the method and its changed parameters).
        #[arg(long)]
        name: Option<String>,
        /// Send every call to the provider, even where a cached reply exists.
        #[arg(long)]
        no_cache: bool,
    },
    /// The built-in methods and their default parameters.
    Methods,
    /// A project's answer sets with the cost table (Zeng et al. Table II).
    List { project: String },
    /// Add answers from another system for a question set: a .jsonl or .csv
    /// file with `question_id` or `question`, `answer`, and optionally
    /// `contexts`, `prompt_tokens`, `completion_tokens`, `latency_ms`.
    Import {
        project: String,
        #[arg(long)]
        set: i64,
        /// What the answers are (the system that wrote them).
        #[arg(long)]
        name: String,
        file: std::path::PathBuf,
    },
    /// Print an answer set (to stdout).
    Export {
        project: String,
        #[arg(long)]
        answers: i64,
        /// jsonl, csv, lightrag (the result list LightRAG's reproduce/ and
        /// batch_eval.py read) or graphrag-bench (the predictions its
        /// evaluators read).
        #[arg(long, value_parser = ["jsonl", "csv", "lightrag", "graphrag-bench"], default_value = "jsonl")]
        format: String,
    },
}

fn ms(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{:.1}", v / 1000.0))
}

pub async fn run(pool: &Db, out: Output, llm: &LlmSettings, cmd: AnswersCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        AnswersCommand::Generate { project, set, req, name, no_cache } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let questions = app::ssr::store::questions::get_set(pool, set).await?;
            if questions.project_id != p.summary.id {
                anyhow::bail!("question set {set} belongs to another project");
            }
            let job = app::ssr::answers::AnswersJob { question_set_id: set, request: req, name, no_cache };
            let (job, answers) = app::ssr::answers::create(pool, &job, &llm.minilm_dir).await?;
            let (code, after) = execute_job(pool, out, llm, job.id, false).await?;
            let view = app::ssr::store::answers::get_set(pool, answers).await?;
            let cost = app::ssr::store::answers::cost_of(pool, answers).await?;
            out.print(
                json!({"answers_id": answers, "job": after.id, "status": after.status, "count": view.answers,
                       "failed": after.failed, "avg_tokens": cost.avg_tokens,
                       "avg_query_ms": cost.avg_query_ms, "avg_llm_calls": cost.avg_llm_calls,
                       "avg_cost_usd": cost.avg_cost_usd, "cached_input_share": cost.cached_input_share,
                       "made_by": view.made_by, "context": cost.context, "context_flag": cost.context.flag()}),
                || {
                    let mut text = format!(
                        "{}\nanswer set {answers} ({}): {} answers · {:.0} tokens and {} s per question",
                        job_line(&after),
                        view.name,
                        view.answers,
                        cost.avg_tokens.unwrap_or(0.0),
                        ms(cost.avg_query_ms),
                    );
                    if let Some(m) = cost.context.avg_chars {
                        text += &format!(" · {:.0} characters of retrieved text", m);
                    }
                    if let Some(f) = cost.context.flag() {
                        text += &format!("\nlittle retrieved text: {f}");
                    }
                    text
                },
            );
            Ok(code)
        }
        AnswersCommand::Methods => {
            let methods: Vec<serde_json::Value> = engine::rag::method::METHODS
                .iter()
                .map(|(name, about)| {
                    let fields: serde_json::Map<String, serde_json::Value> =
                        engine::rag::presets::fields(name).iter().map(|(f, m)| (f.to_string(), json!(m))).collect();
                    json!({"method": name, "about": about, "defaults": engine::rag::method::defaults(name).unwrap_or_default(), "fields": fields})
                })
                .collect();
            out.print(json!(methods), || {
                methods
                    .iter()
                    .map(|m| {
                        let mut text = format!(
                            "{:<16} {}\n{:<16} {}",
                            m["method"].as_str().unwrap_or(""),
                            m["about"].as_str().unwrap_or(""),
                            "",
                            m["defaults"]
                        );
                        for (field, meaning) in m["fields"].as_object().into_iter().flatten() {
                            text.push_str(&format!("\n{:<16}   {field}: {}", "", meaning.as_str().unwrap_or("")));
                        }
                        text
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            Ok(ExitCode::SUCCESS)
        }
        AnswersCommand::List { project } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let rows = app::ssr::store::answers::cost_table(pool, p.summary.id).await?;
            out.print(json!(rows), || {
                let mut lines = vec![format!(
                    "{:>5}  {:<32} {:>7} {:>12} {:>10} {:>9} {:>11}  {}",
                    "id", "answer set", "answers", "tokens/q", "query (s)", "calls/q", "context/q", "answered by"
                )];
                let mut flags = Vec::new();
                for r in &rows {
                    let flag = r.context.flag();
                    lines.push(format!(
                        "{:>5}  {:<32} {:>7} {:>12} {:>10} {:>9} {:>11}  {}",
                        r.answer_set_id,
                        r.name.chars().take(32).collect::<String>(),
                        r.answers,
                        r.avg_tokens.map_or("—".into(), |t| format!("{t:.0}")),
                        ms(r.avg_query_ms),
                        r.avg_llm_calls.map_or("—".into(), |c| format!("{c:.1}")),
                        format!(
                            "{}{}",
                            r.context.avg_chars.map_or("—".into(), |c| format!("{c:.0}")),
                            if flag.is_some() { "*" } else { "" }
                        ),
                        r.made_by.clone().unwrap_or_else(|| "imported".into())
                    ));
                    if let Some(f) = flag {
                        flags.push(format!("* #{}: {f}", r.answer_set_id));
                    }
                }
                if !flags.is_empty() {
                    lines.push(format!(
                        "context/q: mean characters of retrieved text per answer; under {} is little",
                        engine::rag::THIN_CONTEXT_CHARS
                    ));
                    lines.extend(flags);
                }
                lines.join("\n")
            });
            Ok(ExitCode::SUCCESS)
        }
        AnswersCommand::Import { project, set, name, file } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let questions = app::ssr::store::questions::get_set(pool, set).await?;
            if questions.project_id != p.summary.id {
                anyhow::bail!("question set {set} belongs to another project");
            }
            let bytes = std::fs::read(&file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
            let file_name = file.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            let id = app::ssr::answers::import(pool, set, &name, &file_name, &bytes).await?;
            let view = app::ssr::store::answers::get_set(pool, id).await?;
            out.print(json!({"answers_id": id, "count": view.answers}), || {
                format!("answer set {id} ({}): {} answers imported", view.name, view.answers)
            });
            Ok(ExitCode::SUCCESS)
        }
        AnswersCommand::Export { project, answers, format } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let view = app::ssr::store::answers::get_set(pool, answers).await?;
            if view.project_id != p.summary.id {
                anyhow::bail!("answer set {answers} belongs to another project");
            }
            if format == "lightrag" || format == "graphrag-bench" {
                return write_stdout(&app::ssr::answers::io::benchmark_file(pool, answers, &format).await?);
            }
            let list = app::ssr::store::answers::list_answers(pool, answers, None).await?;
            let text = if format == "csv" {
                app::ssr::answers::io::to_csv(&list)
            } else {
                app::ssr::answers::io::to_jsonl(&list)
            };
            write_stdout(&text)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use engine::experiment::Manifest;
    use types::requests::{AnswersRequest, Param};

    use super::*;
    use crate::cli::{Cli, Command};

    fn from_command_line(options: &[&str]) -> Result<(AnswersRequest, Option<String>), String> {
        let head = ["assay", "answers", "generate", "p", "--set", "3"];
        match Cli::try_parse_from(head.iter().chain(options)).map_err(|e| e.to_string())?.command {
            Command::Answers(AnswersCommand::Generate { req, name, set: 3, .. }) => Ok((req, name)),
            other => panic!("{other:?}"),
        }
    }

    /// As the server function reads a posted form (non-strict: brackets may
    /// arrive percent-encoded).
    fn from_form(body: &str) -> Result<app::api::StartAnswers, String> {
        serde_qs::Config::new(5, false).deserialize_str(body).map_err(|e| e.to_string())
    }

    fn from_manifest(table: &str) -> Result<AnswersRequest, String> {
        let text = format!(
            "name = \"x\"\n[corpus]\nfiles = [\"sample\"]\n[[questions]]\nkind = \"graph\"\n[[methods]]\n{table}"
        );
        let m = Manifest::parse_uploaded(&text).map_err(|e| e.0)?;
        // And as `Manifest::to_toml` (the wizard's export) writes it.
        assert_eq!(Manifest::parse_uploaded(&m.to_toml()).map_err(|e| e.0)?, m, "{}", m.to_toml());
        Ok(m.methods[0].clone())
    }

    /// The answers request reads the same from the Answers page's form (as
    /// posted, and as the hydrated page encodes it again), `assay answers
    /// generate` and a manifest's [[methods]] entry: the method, parameters
    /// (a number stays a number through the form's text, a word a word),
    /// the length; the defaults alike; bad values refused by field.
    #[test]
    fn an_answers_request_reads_the_same_from_the_form_the_command_line_and_a_manifest() {
        let param = |name: &str, value: serde_json::Value| Param { name: name.into(), value };
        let want = AnswersRequest {
            method: "naive".into(),
            params: vec![param("k", json!(5)), param("embedder", json!("minilm")), param("temperature", json!(0.5))],
            target_words: Some(80),
        };
        let cli = [
            "--method",
            "naive",
            "--param",
            "k=5",
            "--param",
            "embedder=minilm",
            "--param",
            "temperature=0.5",
            "--target-words",
            "80",
            "--name",
            "mine",
        ];
        assert_eq!(from_command_line(&cli).unwrap(), (want.clone(), Some("mine".into())));

        let params = r#"{"k": 5, "embedder": "minilm", "temperature": 0.5}"#;
        let body = format!(
            "question_set_id=3&name=mine&req%5Bname%5D=naive&req[params]={}&req[target_words]=80",
            percent_encoding::utf8_percent_encode(params, percent_encoding::NON_ALPHANUMERIC)
        );
        let posted = from_form(&body).unwrap();
        assert_eq!((posted.question_set_id, posted.name.as_str(), &posted.req), (3, "mine", &want));
        let again = from_form(&serde_qs::to_string(&posted).unwrap()).unwrap();
        assert_eq!(again.req, want, "the hydrated page's encoding keeps the values' types");

        let table = "name = \"naive\"\nparams = { k = 5, embedder = \"minilm\", temperature = 0.5 }\n\
                     target_words = 80\n";
        assert_eq!(from_manifest(table).unwrap(), want);

        // The defaults: no parameters, no length, from all three.
        let bare = AnswersRequest::new("bm25");
        assert_eq!(from_command_line(&["--method", "bm25"]).unwrap(), (bare.clone(), None));
        let posted = from_form("question_set_id=3&name=&req[name]=bm25&req[params]=&req[target_words]=").unwrap();
        assert_eq!(posted.req, bare);
        assert_eq!(from_manifest("name = \"bm25\"\n").unwrap(), bare);

        // Out of range and not numbers, named by field from each.
        let zero = AnswersRequest { target_words: Some(0), ..bare.clone() };
        assert_eq!(zero.validate().unwrap_err().to_string(), "target_words: must be from 1 to 10000 words, not 0");
        assert_eq!(from_command_line(&["--method", "bm25", "--target-words", "0"]).unwrap().0, zero);
        let e = from_manifest("name = \"bm25\"\ntarget_words = 0\n").unwrap_err();
        assert_eq!(e, "methods[0].target_words: must be from 1 to 10000 words, not 0");
        let e = from_form("question_set_id=3&name=&req[name]=bm25&req[target_words]=many").unwrap_err();
        assert!(e.contains("target_words: not a whole number in range"), "{e}");
        let e = from_form("question_set_id=3&name=&req[name]=bm25&req[params]=%5B1%5D").unwrap_err();
        assert!(e.contains("params: must be a JSON object, not [1]"), "{e}");
        let e = from_form("question_set_id=3&name=&req[name]=bm25&req[params]=%7Bk").unwrap_err();
        assert!(e.contains("params: not JSON"), "{e}");
        assert!(from_command_line(&["--method", "bm25", "--param", "k"]).unwrap_err().contains("expected NAME=VALUE"));
    }
}

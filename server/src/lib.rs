//! The `assay` binary's library: the axum web server ([`web`]) and the
//! command-line interface ([`cli`]) that runs the same operations headless.
//! Both call `app::ssr::store` and `engine`; neither holds domain logic.
//! [`png`] and [`report_html`] turn reports into files (PNG charts, one
//! self-contained HTML file per report).

pub mod cli;
pub mod png;
pub mod report_html;
pub mod web;

use std::path::PathBuf;

/// Where the database lives when neither `--db` nor `ASSAY_DB` says.
pub fn default_db_path() -> PathBuf {
    PathBuf::from("data").join("assay.db")
}

/// Where the in-process MiniLM is when neither `--minilm-dir` nor
/// `ASSAY_MINILM_DIR` says: `data/models/all-MiniLM-L6-v2` under the
/// working directory, or under the checkout the running binary was built
/// in (`target/<profile>/assay` → `../../data/…`), whichever has it.
pub fn default_minilm_dir() -> PathBuf {
    let relative = PathBuf::from(engine::llm::settings::DEFAULT_MINILM_DIR);
    let beside_build =
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join(&relative)));
    match beside_build {
        Some(dir) if !relative.is_dir() && dir.is_dir() => dir,
        _ => relative,
    }
}

/// The database as messages show it: a PostgreSQL URL without its
/// password, a path as given.
pub fn shown_db(target: &str) -> String {
    if !app::ssr::store::is_postgres_url(target) {
        return target.to_string();
    }
    match url::Url::parse(target.trim()) {
        Ok(mut url) => {
            if url.password().is_some() {
                let _ = url.set_password(Some("***"));
            }
            url.to_string()
        }
        Err(_) => "a PostgreSQL URL that does not parse".to_string(),
    }
}

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

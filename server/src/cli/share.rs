//! `assay share …`: read-only share links to report pages.

use std::process::ExitCode;

use app::ssr::store::Db;
use clap::Subcommand;
use serde_json::json;

use super::Output;

#[derive(Subcommand, Debug)]
pub enum ShareCommand {
    /// Make a read-only link to a page: `evaluation:ID`, `study:ID`,
    /// `questions:SET` (a question set with its diagnostics), `metrics:RUN`
    /// (a finished metrics run) or `graph:PROJECT` (the graph explorer).
    Create {
        project: String,
        #[arg(long)]
        page: String,
        /// The link stops working this many days from now.
        #[arg(long)]
        expires_days: Option<u32>,
        /// The address the URL uses.
        #[arg(long, env = "ASSAY_BASE_URL", default_value = "http://127.0.0.1:3000")]
        base_url: String,
    },
    /// Withdraw a share link (by its token, the end of its URL): it answers 404 at once.
    Revoke { token: String },
}

pub async fn run(pool: &Db, out: Output, cmd: ShareCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ShareCommand::Create { project, page, expires_days, base_url } => {
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            let (kind, id) = page.split_once(':').ok_or_else(|| anyhow::anyhow!("--page {page}: expected KIND:ID"))?;
            let id: i64 = id.trim().parse().map_err(|_| anyhow::anyhow!("--page {page}: \"{id}\" is not an id"))?;
            let kind = types::ShareKind::parse(kind.trim())?;
            let owner = app::ssr::shares::project_of(pool, kind, id).await?;
            if owner != p.summary.id {
                anyhow::bail!("{kind} {id} belongs to another project");
            }
            if expires_days == Some(0) {
                anyhow::bail!("--expires-days: a link that expires lasts at least one day");
            }
            let (share_id, token) = app::ssr::shares::create(pool, kind, id, expires_days).await?;
            let url = format!("{}/share/{token}", base_url.trim_end_matches('/'));
            out.print(json!({"share_id": share_id, "url": url, "token": token}), || {
                format!("{url}\n(shown only now: Assay keeps its hash; `assay share revoke {token}` withdraws it)")
            });
            Ok(ExitCode::SUCCESS)
        }
        ShareCommand::Revoke { token } => {
            app::ssr::store::shares::revoke_by_hash(pool, &app::ssr::tokens::hash(token.trim())).await?;
            out.print(json!({"revoked": true}), || "withdrawn".to_string());
            Ok(ExitCode::SUCCESS)
        }
    }
}

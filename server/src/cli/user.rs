//! `assay user …`: the owner account from the command line.

use std::io::BufRead;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;
use sqlx::SqlitePool;

use super::Output;

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create the owner account (or a collaborator). The password comes from
    /// the first line of standard input with --password-stdin, else from
    /// ASSAY_PASSWORD; at least 10 characters.
    Create {
        name: String,
        #[arg(long)]
        password_stdin: bool,
        #[arg(long, value_parser = ["owner", "collaborator"], default_value = "owner")]
        role: String,
    },
    /// Start a login session for a user and print its token, for scripts
    /// that call the API (send it as the `assay_session` cookie).
    Session { name: String },
}

pub async fn run(pool: &SqlitePool, out: Output, cmd: UserCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        UserCommand::Create { name, password_stdin, role } => {
            let password = if password_stdin {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                line.trim_end_matches(['\r', '\n']).to_string()
            } else {
                std::env::var("ASSAY_PASSWORD").map_err(|_| {
                    anyhow::anyhow!("give the password on standard input (--password-stdin) or in ASSAY_PASSWORD")
                })?
            };
            let id = app::auth::create_user(pool, &name, &password, &role).await?;
            out.print(json!({"user_id": id, "name": name.trim(), "role": role}), || {
                format!("{role} \"{}\" created", name.trim())
            });
            Ok(ExitCode::SUCCESS)
        }
        UserCommand::Session { name } => {
            let id: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE name = ?")
                .bind(name.trim())
                .fetch_optional(pool)
                .await?;
            let id = id.ok_or_else(|| anyhow::anyhow!("no user \"{}\"", name.trim()))?;
            let token = app::auth::new_session(pool, id).await?;
            out.print(json!({"cookie": app::auth::COOKIE, "token": token}), || token.clone());
            Ok(ExitCode::SUCCESS)
        }
    }
}

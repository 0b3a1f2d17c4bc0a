//! `assay user …`: the owner's and collaborators' accounts from the command
//! line, and collaborators' rights per project.

use std::io::BufRead;
use std::process::ExitCode;

use app::ssr::store::Db;
use clap::Subcommand;
use serde_json::json;

use super::Output;

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create the owner account (or a collaborator: `--role member`, who
    /// sees only the projects granted with `assay user grant`). The password
    /// comes from the first line of standard input with --password-stdin,
    /// else from ASSAY_PASSWORD; at least 10 characters.
    Create {
        name: String,
        #[arg(long)]
        password_stdin: bool,
        #[arg(long, value_parser = ["owner", "member", "collaborator"], default_value = "owner")]
        role: String,
    },
    /// Give a collaborator `read` or `edit` rights on a project, or take
    /// them away (`none`).
    Grant {
        name: String,
        project: String,
        #[arg(long, value_parser = ["read", "edit", "none"])]
        access: String,
    },
    /// Every account and its rights.
    List,
    /// Start a login session for a user and print its token, for scripts
    /// that call the API (send it as the `assay_session` cookie).
    Session { name: String },
}

pub async fn run(pool: &Db, out: Output, cmd: UserCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        UserCommand::Create { name, password_stdin, role } => {
            let role = if role == "collaborator" { types::Role::Member } else { types::Role::parse(&role)? };
            let password = if password_stdin {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                line.trim_end_matches(['\r', '\n']).to_string()
            } else {
                std::env::var("ASSAY_PASSWORD").map_err(|_| {
                    anyhow::anyhow!("give the password on standard input (--password-stdin) or in ASSAY_PASSWORD")
                })?
            };
            let id = app::ssr::auth::create_user(pool, &name, &password, role).await?;
            out.print(json!({"user_id": id, "name": name.trim(), "role": role}), || {
                format!("{role} \"{}\" created", name.trim())
            });
            Ok(ExitCode::SUCCESS)
        }
        UserCommand::Grant { name, project, access } => {
            let (user, _) = app::ssr::store::access::user_by_name(pool, name.trim()).await?;
            let p = app::ssr::store::projects::find_project(pool, &project).await?;
            app::ssr::access::set_access(pool, user, p.summary.id, &access).await?;
            out.print(json!({"user_id": user, "project_id": p.summary.id, "access": access}), || {
                format!("\"{}\" now has {access} access to project {}", name.trim(), p.summary.id)
            });
            Ok(ExitCode::SUCCESS)
        }
        UserCommand::List => {
            let users = app::ssr::store::access::users(pool).await?;
            out.print(json!(users), || {
                users
                    .iter()
                    .map(|u| {
                        let rights: Vec<String> =
                            u.projects.iter().map(|m| format!("{}:{}", m.project_id, m.access)).collect();
                        format!("{}\t{}\t{}\t{}", u.id, u.name, u.role, rights.join(" "))
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            Ok(ExitCode::SUCCESS)
        }
        UserCommand::Session { name } => {
            let id = app::ssr::store::users::by_name(pool, name.trim()).await?.map(|(id, _)| id);
            let id = id.ok_or_else(|| anyhow::anyhow!("no user \"{}\"", name.trim()))?;
            let token = app::ssr::auth::new_session(pool, id).await?;
            out.print(json!({"cookie": app::ssr::auth::COOKIE, "token": token}), || token.clone());
            Ok(ExitCode::SUCCESS)
        }
    }
}

//! Who may reach what: project memberships of collaborators, the accounts,
//! and the project each kind of object belongs to.

use super::{on_db, stored, Db};
use crate::model::{Membership, UserView};
use types::Role;

use crate::error::{AppError, AppResult};

/// Something a request names, to find its project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Obj {
    Project(i64),
    Document(i64),
    Job(i64),
    QuestionSet(i64),
    Question(i64),
    AnswerSet(i64),
    Evaluation(i64),
    MetricsRun(i64),
    Experiment(i64),
    Study(i64),
    StudyLink(i64),
    Share(i64),
}

impl Obj {
    /// What it is, in words, and its id.
    fn parts(self) -> (&'static str, i64) {
        match self {
            Obj::Project(id) => ("project", id),
            Obj::Document(id) => ("document", id),
            Obj::Job(id) => ("job", id),
            Obj::QuestionSet(id) => ("question set", id),
            Obj::Question(id) => ("question", id),
            Obj::AnswerSet(id) => ("answer set", id),
            Obj::Evaluation(id) => ("evaluation", id),
            Obj::MetricsRun(id) => ("metrics run", id),
            Obj::Experiment(id) => ("experiment", id),
            Obj::Study(id) => ("study", id),
            Obj::StudyLink(id) => ("study link", id),
            Obj::Share(id) => ("share link", id),
        }
    }
}

impl std::fmt::Display for Obj {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, id) = self.parts();
        write!(f, "{what} {id}")
    }
}

/// The project an object belongs to; a missing object is "not found".
pub async fn project_of(pool: &Db, obj: Obj) -> AppResult<i64> {
    on_db!(pool, |db| {
        let sql = match obj {
            Obj::Project(_) => "SELECT id FROM projects WHERE id = $1",
            Obj::Document(_) => "SELECT project_id FROM documents WHERE id = $1",
            Obj::Job(_) => "SELECT project_id FROM jobs WHERE id = $1",
            Obj::QuestionSet(_) => "SELECT project_id FROM question_sets WHERE id = $1",
            Obj::Question(_) => {
                "SELECT s.project_id FROM questions q JOIN question_sets s ON s.id = q.set_id WHERE q.id = $1"
            }
            Obj::AnswerSet(_) => "SELECT project_id FROM answer_sets WHERE id = $1",
            Obj::Evaluation(_) => "SELECT project_id FROM evaluations WHERE id = $1",
            Obj::MetricsRun(_) => "SELECT project_id FROM metrics_runs WHERE id = $1",
            Obj::Experiment(_) => "SELECT project_id FROM experiments WHERE id = $1",
            Obj::Study(_) => "SELECT project_id FROM studies WHERE id = $1",
            Obj::StudyLink(_) => {
                "SELECT s.project_id FROM study_links l JOIN studies s ON s.id = l.study_id WHERE l.id = $1"
            }
            Obj::Share(_) => "SELECT project_id FROM shares WHERE id = $1",
        };
        let (what, id) = obj.parts();
        let project: Option<Option<i64>> = sqlx::query_scalar(sql).bind(id).fetch_optional(db).await?;
        project.flatten().ok_or_else(|| {
            // The same words as the store's own lookups.
            AppError::NotFound(if what == "project" {
                format!("no project with id {id}")
            } else {
                format!("{what} {id} does not exist")
            })
        })
    })
}

/// Refused as "not found" unless `child` belongs to `project`: a function
/// that takes a child's id beside its parent's checks the parent's rights,
/// then that the child is the parent's (else it could read any project's
/// child through a parent it may read).
pub async fn require_in(pool: &Db, project: i64, child: Obj) -> AppResult<()> {
    if project_of(pool, child).await? == project {
        Ok(())
    } else {
        Err(AppError::NotFound(format!("{child} is not in project {project}")))
    }
}

/// A collaborator's rights on a project: `Some("read" | "edit")`, or none.
pub async fn membership(pool: &Db, user: i64, project: i64) -> AppResult<Option<String>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT access FROM project_members WHERE user_id = $1 AND project_id = $2")
            .bind(user)
            .bind(project)
            .fetch_optional(db)
            .await?)
    })
}

/// The projects a collaborator may see.
pub async fn member_projects(pool: &Db, user: i64) -> AppResult<Vec<i64>> {
    on_db!(pool, |db| {
        Ok(sqlx::query_scalar("SELECT project_id FROM project_members WHERE user_id = $1")
            .bind(user)
            .fetch_all(db)
            .await?)
    })
}

/// Gives a collaborator `access` ("read" or "edit") to a project, or takes
/// it away (`None`).
pub async fn set_membership(pool: &Db, user: i64, project: i64, access: Option<types::Access>) -> AppResult<()> {
    on_db!(pool, |db| {
        match access {
            Some(a) => {
                sqlx::query(
                    "INSERT INTO project_members (user_id, project_id, access) VALUES ($1, $2, $3)
                 ON CONFLICT(user_id, project_id) DO UPDATE SET access = excluded.access",
                )
                .bind(user)
                .bind(project)
                .bind(a.as_str())
                .execute(db)
                .await?;
            }
            None => {
                sqlx::query("DELETE FROM project_members WHERE user_id = $1 AND project_id = $2")
                    .bind(user)
                    .bind(project)
                    .execute(db)
                    .await?;
            }
        }
        Ok(())
    })
}

/// Every account: (id, name, role, created), and each one's memberships
/// `(project id, access)`.
pub type UserRow = (i64, String, String, String);

pub async fn users(pool: &Db) -> AppResult<Vec<UserView>> {
    on_db!(pool, |db| {
        let rows: Vec<UserRow> =
            sqlx::query_as("SELECT id, name, role, created_at FROM users ORDER BY id").fetch_all(db).await?;
        let mut out = Vec::new();
        for (id, name, role, created_at) in rows {
            let m: Vec<(i64, String)> =
                sqlx::query_as("SELECT project_id, access FROM project_members WHERE user_id = $1 ORDER BY project_id")
                    .bind(id)
                    .fetch_all(db)
                    .await?;
            let mut projects = Vec::new();
            for (project_id, access) in m {
                projects.push(Membership { project_id, access: stored("project_members", id, &access)? });
            }
            out.push(UserView { id, name, role: stored("users", id, &role)?, created_at, projects });
        }
        Ok(out)
    })
}

/// Deletes a collaborator's account (its sessions and memberships go with it).
pub async fn delete_member(pool: &Db, user: i64) -> AppResult<()> {
    on_db!(pool, |db| {
        let done = sqlx::query("DELETE FROM users WHERE id = $1 AND role = 'member'").bind(user).execute(db).await?;
        if done.rows_affected() == 0 {
            return Err(AppError::NotFound(format!("no collaborator {user} (the owner's account stays)")));
        }
        Ok(())
    })
}

/// An account's id and role by name.
pub async fn user_by_name(pool: &Db, name: &str) -> AppResult<(i64, String)> {
    on_db!(pool, |db| {
        let row: Option<(i64, String)> =
            sqlx::query_as("SELECT id, role FROM users WHERE name = $1").bind(name).fetch_optional(db).await?;
        row.ok_or_else(|| AppError::NotFound(format!("there is no user \"{name}\"")))
    })
}

/// An account's role by id (`None`: no such account).
pub async fn user_role(pool: &Db, user: i64) -> AppResult<Option<Role>> {
    let role: Option<String> = on_db!(pool, |db| {
        Ok::<_, AppError>(
            sqlx::query_scalar("SELECT role FROM users WHERE id = $1").bind(user).fetch_optional(db).await?,
        )
    })?;
    role.map(|r| stored("users", user, &r)).transpose()
}

//! Accounts and their project rights.

use serde::{Deserialize, Serialize};

/// An account as the owner's Users page shows it: role `owner` or
/// `member`, and a member's rights `(project id, "read" | "edit")`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserView {
    pub id: i64,
    pub name: String,
    pub role: String,
    pub created_at: String,
    pub projects: Vec<(i64, String)>,
}

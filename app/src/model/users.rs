//! Accounts and their project rights.

use serde::{Deserialize, Serialize};
use types::{Access, Role};

/// An account as the owner's Users page shows it, with a member's rights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserView {
    pub id: i64,
    pub name: String,
    pub role: Role,
    pub created_at: String,
    pub projects: Vec<Membership>,
}

/// A member's right to one project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Membership {
    pub project_id: i64,
    pub access: Access,
}

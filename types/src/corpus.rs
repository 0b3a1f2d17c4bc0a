//! What importing files reports.

use serde::{Deserialize, Serialize};

/// A file (or record) that was not imported, and why, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    pub file: String,
    pub reason: String,
}

//! Server functions: the browser's way into Assay, one module per feature.
//! Each one checks its input, calls the store or the engine, and maps
//! errors; none holds logic of its own. Re-exported here, so a page names
//! `crate::api::get_project`.

pub mod answers;
pub mod auth;
pub mod corpus;
pub mod evaluations;
pub mod experiments;
pub mod form;
pub mod graph;
pub mod jobs;
pub mod metrics;
pub mod projects;
pub mod questions;
pub mod settings;
pub mod shares;
pub mod studies;
pub mod users;

pub use answers::*;
pub use auth::*;
pub use corpus::*;
pub use evaluations::*;
pub use experiments::*;
pub use graph::*;
pub use jobs::*;
pub use metrics::*;
pub use projects::*;
pub use questions::*;
pub use settings::*;
pub use shares::*;
pub use studies::*;
pub use users::*;

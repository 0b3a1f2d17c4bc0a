//! Data the browser sees: the DTOs server functions return, one module per
//! feature, re-exported here (`crate::model::JobView`). Row types of the
//! store are separate (`ssr::store`), so the schema can change without
//! changing what crosses the wire. What the engine also uses — the closed
//! sets, the defaults, the records it computes — is declared once in the
//! `types` crate and re-exported here; this module keeps what only the
//! pages need.

mod answers;
mod corpus;
pub use types::defaults;
mod evaluation;
mod experiments;
mod graph;
mod jobs;
mod metrics;
mod questions;
mod settings;
mod share;
mod study;
mod users;

pub use answers::*;
pub use corpus::*;
pub use evaluation::*;
pub use experiments::*;
pub use graph::*;
pub use jobs::*;
pub use metrics::*;
pub use questions::*;
pub use settings::*;
pub use share::*;
pub use study::*;
pub use users::*;

/// A list's page `page` (from 1) of `per_page`, clamped to the pages a
/// list of `total` has (at least one): `(page, pages)`.
pub fn paging(total: i64, per_page: i64, page: i64) -> (i64, i64) {
    let pages = ((total + per_page - 1) / per_page.max(1)).max(1);
    (page.clamp(1, pages), pages)
}

//! Human studies over the store: question ratings (seed 000 §V-C) and
//! answer validation (seed 004 §2.5), shared by the server functions and
//! the CLI. [`run`]: creating one (a seeded draw from question sets,
//! attention checks, links), the rater's side at a link (a session,
//! ratings, finishing) and the LLM rater (a job rating the same items with
//! the same rubric); [`report`]: the results; [`export`]: every rating as
//! CSV. Rater links need no account: their tokens are random (192 bits),
//! stored only as SHA-256 hashes, revocable.

mod export;
mod import;
mod report;
mod run;

pub use export::*;
pub use import::*;
pub use report::*;
pub use run::*;

//! Experiments: a manifest run from corpus to report as one job chain
//! ([`run`]), and the web wizard that writes the manifest and estimates
//! its calls ([`wizard`]).

pub mod run;
pub mod wizard;

//! Question sets on the server: generating them and scoring them as jobs
//! ([`run`]), their import and export ([`io`]), and their diagnostics
//! (entity distributions, the word cloud, mention counts; [`diagnostics`]).

pub mod diagnostics;
pub mod io;
pub mod run;

//! Question sets on the server: their import and export, and their
//! diagnostics (entity distributions, the word cloud, mention counts).

pub mod diagnostics;
pub mod io;

//! The one error type that crosses the server-function boundary.
//!
//! Expected failures (bad input, missing things, conflicts) carry a message
//! meant for the user. Unexpected ones are logged on the server with their
//! detail and reach the browser only as `Internal`, with nothing internal in
//! it.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// The caller may not do this (a collaborator without the rights).
    #[error("{0}")]
    Forbidden(String),
    #[error("something went wrong on the server; the details are in its log")]
    Internal,
    /// Transport or encoding trouble between browser and server.
    #[error("the server could not be reached: {0}")]
    Transport(String),
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::Transport(value.to_string())
    }
}

#[cfg(feature = "ssr")]
impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        tracing::error!(error = %e, "database error");
        AppError::Internal
    }
}

pub type AppResult<T> = Result<T, AppError>;

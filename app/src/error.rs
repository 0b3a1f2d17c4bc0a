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
    /// The request is larger than a limit allows.
    #[error("{0}")]
    TooLarge(String),
    /// Too many requests or attempts: wait, then try again.
    #[error("{0}")]
    TooMany(String),
    /// The server cannot store anything now (its disk is full): nothing
    /// was saved, and trying again later may work.
    #[error("{0}")]
    Unavailable(String),
    /// A job, or the LLM endpoint behind it, failed: not the caller's
    /// mistake, and not a bug either; the reasons are the job's.
    #[error("{0}")]
    Failed(String),
    #[error("something went wrong on the server; the details are in its log")]
    Internal,
    /// Transport or encoding trouble between browser and server.
    #[error("the server could not be reached: {0}")]
    Transport(String),
}

impl AppError {
    /// The HTTP status that carries this error: the user's mistakes are
    /// 4xx, never 500.
    pub fn status(&self) -> u16 {
        match self {
            AppError::Invalid(_) => 400,
            AppError::Forbidden(_) => 403,
            AppError::NotFound(_) => 404,
            AppError::Conflict(_) => 409,
            AppError::TooLarge(_) => 413,
            AppError::TooMany(_) => 429,
            AppError::Failed(_) => 502,
            AppError::Unavailable(_) => 503,
            AppError::Internal | AppError::Transport(_) => 500,
        }
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        match value {
            // The caller sent arguments the function cannot read (a word
            // where a number belongs, a missing field): their mistake, 400.
            ServerFnErrorErr::Args(e) => AppError::Invalid(format!("the request's arguments could not be read: {e}")),
            ServerFnErrorErr::MissingArg(a) => AppError::Invalid(format!("the request lacks the argument \"{a}\"")),
            // The body could not be read on the server: over the body limit
            // (413), or not text (invalid UTF-8 in a form: 400).
            ServerFnErrorErr::Deserialization(e) if e.contains("length limit exceeded") => {
                AppError::TooLarge("the request is larger than the server functions' limit of 8 MiB".into())
            }
            ServerFnErrorErr::Deserialization(e) => AppError::Invalid(format!("the request could not be read: {e}")),
            other => AppError::Transport(other.to_string()),
        }
    }
}

/// A closed set's unknown name, as a request gave it.
impl From<types::requests::OutOfRange> for AppError {
    fn from(e: types::requests::OutOfRange) -> Self {
        AppError::Invalid(e.to_string())
    }
}

impl From<types::Unknown> for AppError {
    fn from(e: types::Unknown) -> Self {
        AppError::Invalid(e.to_string())
    }
}

/// The engine refused the request: the caller's mistake, with its reason.
#[cfg(feature = "ssr")]
impl From<engine::Invalid> for AppError {
    fn from(e: engine::Invalid) -> Self {
        AppError::Invalid(e.0)
    }
}

#[cfg(feature = "ssr")]
impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        tracing::error!(error = %e, "database error");
        // SQLITE_FULL (13), also with its extended codes.
        let full = matches!(&e, sqlx::Error::Database(d)
            if d.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| c & 0xff == 13));
        if full {
            return AppError::Unavailable(
                "the server's disk is full: nothing was saved; free some space, then try again".into(),
            );
        }
        AppError::Internal
    }
}

pub type AppResult<T> = Result<T, AppError>;

/// An unexpected failure while `doing` something: logged with its detail,
/// [`AppError::Internal`] to the caller.
#[cfg(feature = "ssr")]
pub fn internal(doing: &str, e: impl std::fmt::Display) -> AppError {
    tracing::error!(error = %e, "{doing}");
    AppError::Internal
}

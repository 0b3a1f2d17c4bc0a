//! Secrets handed to browsers (session cookies, study links): random
//! tokens from the OS, kept only as SHA-256 hashes.

use sha2::{Digest, Sha256};

use crate::error::{AppError, AppResult};

/// A random token: 24 bytes (192 bits) from the OS, hex.
pub fn new_token() -> AppResult<String> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|_| AppError::Internal)?;
    Ok(engine::llm::hex(&bytes))
}

/// How a token is stored.
pub fn hash(token: &str) -> String {
    engine::llm::hex(&Sha256::digest(token.as_bytes()))
}

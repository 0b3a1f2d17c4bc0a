//! The Content-Security-Policy of pages. A page's only inline scripts are
//! Leptos's own (the hydration loader and the resources streamed with the
//! page), each carrying the request's nonce; everything else comes from
//! this origin, and the WASM bundle needs `'wasm-unsafe-eval'`. Plots are
//! inline SVG with style attributes, hence `'unsafe-inline'` for styles
//! only. The server's header layer writes it on each page Leptos rendered,
//! with the nonce that page's render left in its request (`server::web`:
//! `page_nonce`, `security_headers`); responses that are not pages get
//! [`OTHER`].

/// The policy of a page whose inline scripts carry `nonce`.
pub fn page(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'nonce-{nonce}'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// The policy of everything else (downloads, JSON, SVG, the exported
/// report when viewed from the server): nothing runs, nothing frames it.
pub const OTHER: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; sandbox";

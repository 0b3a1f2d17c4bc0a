//! The browser entry point: the WASM module's `hydrate` export, which the
//! server-rendered page calls once the module has loaded. It takes over the
//! HTML the server rendered rather than drawing it again.

#![recursion_limit = "256"]

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}

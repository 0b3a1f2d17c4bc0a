//! The browser entry point: the WASM module's `hydrate` export, which the
//! server-rendered page calls once the module has loaded. It takes over the
//! HTML the server rendered rather than drawing it again.
//!
//! Pages are lazy routes (their group's code is a WASM module of its own,
//! see app/src/lib.rs and scripts/build), so hydration is asynchronous: the
//! page's modules are fetched, then the page is hydrated. Only then is
//! `<body>` marked `data-hydrated="true"` — tests (and curious users) can
//! tell a page that answers clicks by this attribute.

#![recursion_limit = "256"]

use any_spawner::Executor;
use leptos::prelude::document;
use leptos::task::spawn_local;

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // An Err only means the executor is already running.
    let _ = Executor::init_wasm_bindgen();
    spawn_local(async {
        let Some(body) = document().body() else { return };
        let owner = leptos::mount::hydrate_from_async(body.clone(), app::App).await;
        owner.forget();
        let _ = body.set_attribute("data-hydrated", "true");
        // On a project's section page (a tab, not a report someone opened
        // to read), the other sections' code is fetched while the user
        // reads this one: their first click then only waits for data.
        let path = leptos::prelude::window().location().pathname().unwrap_or_default();
        let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        let section = parts.len() <= 4 && parts.get(1) == Some(&"projects");
        if section {
            leptos::prelude::set_timeout(
                || spawn_local(app::prefetch_project_pages()),
                std::time::Duration::from_millis(600),
            );
        }
    });
}

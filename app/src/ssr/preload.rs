//! Preload links for a page's WASM modules (server only).
//!
//! A page's code is in its group's module and the chunks it shares with
//! other groups (`page_group!` in lib.rs). Left to itself, the browser
//! learns of those only once the main module has run and the router asks
//! for them. The server knows the page's group as it renders the route, so
//! it names the group's files in the page's `<head>`
//! (`<link rel="preload" as="fetch">`, matching the loader's `fetch`) and the
//! browser downloads them alongside the main module.
//!
//! The files of each group are listed in `pkg/wasm-groups.json`, which
//! scripts/build writes (`scripts/wasm-size --manifest`). Without it (a
//! server run without a built site) there are no links and nothing else
//! changes. The `<head>` is not hydrated, so these links need no
//! counterpart in the browser's rendering.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use leptos::prelude::*;
use leptos_meta::Link;

type Groups = HashMap<String, Vec<String>>;

/// group → the files it fetches besides the main module: the site's
/// `wasm-groups.json`, read once per site (a build's file, remembered by
/// its path).
fn manifest(options: &LeptosOptions) -> &'static Groups {
    static MANIFESTS: OnceLock<Mutex<Vec<(PathBuf, &'static Groups)>>> = OnceLock::new();
    let path = Path::new(options.site_root.as_ref()).join(options.site_pkg_dir.as_ref()).join("wasm-groups.json");
    let mut read = MANIFESTS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, groups)) = read.iter().find(|(p, _)| *p == path) {
        return groups;
    }
    let groups: Groups =
        std::fs::read(&path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
    // One per site a process serves (one, but for tests): leaked on purpose.
    let groups: &'static Groups = Box::leak(Box::new(groups));
    read.push((path, groups));
    groups
}

/// Adds to the page's `<head>` a preload link for each file of `group`
/// that `except`'s files do not hold (those are named already).
pub fn hint(group: &str, except: Option<&str>) {
    let Some(options) = use_context::<LeptosOptions>() else { return };
    let manifest = manifest(&options);
    let Some(files) = manifest.get(group) else { return };
    let named = except.and_then(|g| manifest.get(g));
    for file in files.iter().filter(|f| !named.is_some_and(|n| n.contains(f))) {
        let href = format!("/{}/{file}", options.site_pkg_dir);
        // Rendered for its effect: a leptos_meta tag on the server sends
        // its HTML to the page's <head> and writes nothing where it stands.
        let _ =
            view! { <Link rel="preload" href as_="fetch" type_="application/wasm" crossorigin="anonymous"/> }.to_html();
    }
}

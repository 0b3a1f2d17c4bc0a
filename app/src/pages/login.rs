//! `/login` and `/setup`: the owner's login, and the first run's account.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::{Login, SetupOwner};
use crate::components::{ActionError, Brand};

/// Where to go after logging in: `next` when it is a path of this site.
fn next_path(next: Option<String>) -> String {
    next.filter(|n| n.starts_with('/') && !n.starts_with("//")).unwrap_or_else(|| "/".into())
}

/// Goes to `to` with a full load (the new cookie comes along).
fn go(to: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(w) = web_sys::window() {
        let _ = w.location().assign(to);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = to;
}

#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let action = ServerAction::<Login>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = action.value().get() {
            go(&next_path(query.read_untracked().get("next")));
        }
    });
    view! {
        <Title text="Log in"/>
        <Brand/>
        <main class="page narrow-page">
            <h1>"Log in"</h1>
            <p class="muted">"Setting up and changing experiments needs the owner's login. People rating questions use their study link and need no account."</p>
            <ActionForm action attr:class="stack-form" attr:id="login-form">
                <label>"Name " <input type="text" name="name" autocomplete="username" required/></label>
                <label>"Password " <input type="password" name="password" autocomplete="current-password" required/></label>
                <div><button type="submit" id="log-in" disabled=move || action.pending().get()>"Log in"</button></div>
            </ActionForm>
            <ActionError action/>
        </main>
    }
}

#[component]
pub fn SetupPage() -> impl IntoView {
    let action = ServerAction::<SetupOwner>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = action.value().get() {
            go("/");
        }
    });
    view! {
        <Title text="Set up Assay"/>
        <Brand/>
        <main class="page narrow-page">
            <h1>"Welcome to Assay"</h1>
            <p>"Create the owner account. The owner sets up projects and experiments; others read reports through share links and rate questions through study links, without an account."</p>
            <ActionForm action attr:class="stack-form" attr:id="setup-form">
                <label>"Name " <input type="text" name="name" autocomplete="username" required/></label>
                <label>"Password (at least 10 characters) " <input type="password" name="password" autocomplete="new-password" minlength="10" required/></label>
                <label>"Password again " <input type="password" name="confirm" autocomplete="new-password" minlength="10" required/></label>
                <div><button type="submit" id="create-owner" disabled=move || action.pending().get()>"Create the owner"</button></div>
            </ActionForm>
            <ActionError action/>
        </main>
    }
}

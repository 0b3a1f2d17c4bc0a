//! One module per page, named like its route.

pub mod answers;
pub mod corpus;
pub mod decide;
pub mod document;
pub mod evaluations;
pub mod experiments;
pub mod graph;
pub mod home;
pub mod jobs;
pub mod jury;
pub mod login;
pub mod metrics;
pub mod paper;
pub mod questions;
pub mod rater;
pub mod settings;
pub mod share;
pub mod studies;
pub mod users;

use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found"/>
        <crate::components::Brand/>
        <main class="page">
            <h1>"Page not found"</h1>
            <p>"There is nothing at this address. " <a href="/">"Back to the projects"</a></p>
        </main>
    }
}

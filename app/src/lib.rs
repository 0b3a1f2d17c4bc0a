//! Assay's web interface: Leptos pages and components, rendered on the
//! server and hydrated in the browser, and the `#[server]` functions they
//! call.
//!
//! # Layout
//! - [`api`]: the server functions. Thin: check input, call [`store`] or
//!   `engine`, map errors to [`error::AppError`].
//! - [`model`]: the types that cross the wire.
//! - [`pages`] and [`components`]: the UI, laid out like the page tree.
//! - [`store`] (server only): all SQL.
//! - [`state`] (server only): configuration and the state server functions reach.
//!
//! Server-only crates (sqlx, axum, engine, tokio) are optional dependencies
//! switched on by the `ssr` feature; the `hydrate` build never sees them.

#![recursion_limit = "256"]

#[cfg(feature = "ssr")]
pub mod access;
#[cfg(feature = "ssr")]
pub mod answers;
#[cfg(feature = "ssr")]
pub mod answers_io;
pub mod api;
#[cfg(feature = "ssr")]
pub mod auth;
pub mod components;
#[cfg(feature = "ssr")]
pub mod diagnostics;
pub mod error;
#[cfg(feature = "ssr")]
pub mod evaluation;
#[cfg(feature = "ssr")]
pub mod experiment;
#[cfg(feature = "ssr")]
pub mod experiments;
pub mod format;
#[cfg(feature = "ssr")]
pub mod jobs;
#[cfg(feature = "ssr")]
pub mod metrics;
pub mod model;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod questions_io;
#[cfg(feature = "ssr")]
pub mod share;
#[cfg(feature = "ssr")]
pub mod state;
#[cfg(feature = "ssr")]
pub mod store;
#[cfg(feature = "ssr")]
pub mod study;
#[cfg(feature = "ssr")]
pub mod tokens;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

use pages::answers::AnswersPage;
use pages::evaluations::{EvaluationPage, EvaluationsPage};
use pages::experiments::{ExperimentPage, NewExperimentPage};
use pages::graph::GraphPage;
use pages::jobs::{JobPage, JobsPage};
use pages::login::{LoginPage, SetupPage};
use pages::metrics::{MetricsPage, MetricsRunPage};
use pages::questions::QuestionsPage;
use pages::rater::RaterPage;
use pages::settings::SettingsPage;
use pages::share::SharePage;
use pages::studies::{StudiesPage, StudyResultsPage};
use pages::users::UsersPage;
use pages::{corpus::CorpusPage, document::DocumentPage, home::HomePage, NotFound};

/// The HTML document around every page.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Only runs in the browser, once the WASM has taken over the page:
    // tests (and curious users) can tell a hydrated page by this attribute.
    Effect::new(move |_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
    view! {
        <Stylesheet id="assay-css" href="/pkg/assay.css"/>
        <Title formatter=|page: String| if page.is_empty() { "Assay".to_string() } else { format!("{page} · Assay") }/>
        <Router>
            <Routes fallback=NotFound>
                <Route path=path!("/") view=HomePage/>
                <Route path=path!("/projects/:id") view=CorpusPage/>
                <Route path=path!("/projects/:id/corpus") view=CorpusPage/>
                <Route path=path!("/projects/:id/documents/:doc") view=DocumentPage/>
                <Route path=path!("/projects/:id/graph") view=GraphPage/>
                <Route path=path!("/projects/:id/questions") view=QuestionsPage/>
                <Route path=path!("/projects/:id/answers") view=AnswersPage/>
                <Route path=path!("/projects/:id/evaluations") view=EvaluationsPage/>
                <Route path=path!("/projects/:id/evaluations/:eval") view=EvaluationPage/>
                <Route path=path!("/projects/:id/metrics") view=MetricsPage/>
                <Route path=path!("/projects/:id/metrics/:run") view=MetricsRunPage/>
                <Route path=path!("/projects/:id/studies") view=StudiesPage/>
                <Route path=path!("/projects/:id/experiments/:exp") view=ExperimentPage/>
                <Route path=path!("/experiments/new") view=NewExperimentPage/>
                <Route path=path!("/projects/:id/studies/:study") view=StudyResultsPage/>
                <Route path=path!("/s/:token") view=RaterPage/>
                <Route path=path!("/login") view=LoginPage/>
                // Rendered whole before the response starts, so a withdrawn
                // link's 404 status is the response's (not a streamed 200).
                <Route path=path!("/share/:token") view=SharePage ssr=leptos_router::SsrMode::Async/>
                <Route path=path!("/setup") view=SetupPage/>
                <Route path=path!("/users") view=UsersPage/>
                <Route path=path!("/projects/:id/jobs") view=JobsPage/>
                <Route path=path!("/projects/:id/jobs/:job") view=JobPage/>
                <Route path=path!("/projects/:id/settings") view=SettingsPage/>
            </Routes>
        </Router>
    }
}

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
use leptos_router::Lazy;
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

/// A route whose page is loaded when it is first shown: the browser's build
/// is split (scripts/build, wasm-split-cli) so each page's code is its own
/// WASM chunk, fetched when the page is opened (and preloaded with the
/// server-rendered HTML of that page), instead of every page in one bundle.
macro_rules! lazy_page {
    ($route:ident, $page:ident) => {
        #[derive(Debug)]
        pub struct $route;

        #[leptos_router::lazy_route]
        impl leptos_router::LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            fn view(_this: Self) -> AnyView {
                view! { <$page/> }.into_any()
            }
        }
    };
}

lazy_page!(HomePageRoute, HomePage);
lazy_page!(CorpusPageRoute, CorpusPage);
lazy_page!(DocumentPageRoute, DocumentPage);
lazy_page!(GraphPageRoute, GraphPage);
lazy_page!(QuestionsPageRoute, QuestionsPage);
lazy_page!(AnswersPageRoute, AnswersPage);
lazy_page!(EvaluationsPageRoute, EvaluationsPage);
lazy_page!(EvaluationPageRoute, EvaluationPage);
lazy_page!(MetricsPageRoute, MetricsPage);
lazy_page!(MetricsRunPageRoute, MetricsRunPage);
lazy_page!(StudiesPageRoute, StudiesPage);
lazy_page!(ExperimentPageRoute, ExperimentPage);
lazy_page!(NewExperimentPageRoute, NewExperimentPage);
lazy_page!(StudyResultsPageRoute, StudyResultsPage);
lazy_page!(RaterPageRoute, RaterPage);
lazy_page!(LoginPageRoute, LoginPage);
lazy_page!(SharePageRoute, SharePage);
lazy_page!(SetupPageRoute, SetupPage);
lazy_page!(UsersPageRoute, UsersPage);
lazy_page!(JobsPageRoute, JobsPage);
lazy_page!(JobPageRoute, JobPage);
lazy_page!(SettingsPageRoute, SettingsPage);

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
    view! {
        <Stylesheet id="assay-css" href="/pkg/assay.css"/>
        <Title formatter=|page: String| if page.is_empty() { "Assay".to_string() } else { format!("{page} · Assay") }/>
        <Router>
            <Routes fallback=NotFound>
                <Route path=path!("/") view={Lazy::<HomePageRoute>::new()}/>
                <Route path=path!("/projects/:id") view={Lazy::<CorpusPageRoute>::new()}/>
                <Route path=path!("/projects/:id/corpus") view={Lazy::<CorpusPageRoute>::new()}/>
                <Route path=path!("/projects/:id/documents/:doc") view={Lazy::<DocumentPageRoute>::new()}/>
                <Route path=path!("/projects/:id/graph") view={Lazy::<GraphPageRoute>::new()}/>
                <Route path=path!("/projects/:id/questions") view={Lazy::<QuestionsPageRoute>::new()}/>
                <Route path=path!("/projects/:id/answers") view={Lazy::<AnswersPageRoute>::new()}/>
                <Route path=path!("/projects/:id/evaluations") view={Lazy::<EvaluationsPageRoute>::new()}/>
                <Route path=path!("/projects/:id/evaluations/:eval") view={Lazy::<EvaluationPageRoute>::new()}/>
                <Route path=path!("/projects/:id/metrics") view={Lazy::<MetricsPageRoute>::new()}/>
                <Route path=path!("/projects/:id/metrics/:run") view={Lazy::<MetricsRunPageRoute>::new()}/>
                <Route path=path!("/projects/:id/studies") view={Lazy::<StudiesPageRoute>::new()}/>
                <Route path=path!("/projects/:id/experiments/:exp") view={Lazy::<ExperimentPageRoute>::new()}/>
                <Route path=path!("/experiments/new") view={Lazy::<NewExperimentPageRoute>::new()}/>
                <Route path=path!("/projects/:id/studies/:study") view={Lazy::<StudyResultsPageRoute>::new()}/>
                <Route path=path!("/s/:token") view={Lazy::<RaterPageRoute>::new()}/>
                <Route path=path!("/login") view={Lazy::<LoginPageRoute>::new()}/>
                // Rendered whole before the response starts, so a withdrawn
                // link's 404 status is the response's (not a streamed 200).
                <Route path=path!("/share/:token") view={Lazy::<SharePageRoute>::new()} ssr=leptos_router::SsrMode::Async/>
                <Route path=path!("/setup") view={Lazy::<SetupPageRoute>::new()}/>
                <Route path=path!("/users") view={Lazy::<UsersPageRoute>::new()}/>
                <Route path=path!("/projects/:id/jobs") view={Lazy::<JobsPageRoute>::new()}/>
                <Route path=path!("/projects/:id/jobs/:job") view={Lazy::<JobPageRoute>::new()}/>
                <Route path=path!("/projects/:id/settings") view={Lazy::<SettingsPageRoute>::new()}/>
            </Routes>
        </Router>
    }
}

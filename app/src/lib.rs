//! Assay's web interface: Leptos pages and components, rendered on the
//! server and hydrated in the browser, and the `#[server]` functions they
//! call.
//!
//! # Layout
//! - [`api`]: the server functions, one module per feature. Thin: check the
//!   caller and the input, call [`ssr`] or `engine`, map errors to
//!   [`error::AppError`].
//! - [`model`]: the types that cross the wire, one module per feature.
//! - [`pages`] and [`components`]: the UI, laid out like the page tree.
//! - [`error`], [`codec`], [`format`]: the error type, the reply codec,
//!   number and date formatting.
//! - `ssr` (server only): state, access, the store (all SQL), the job
//!   runner and each stage's server code.
//!
//! Server-only crates (sqlx, axum, engine, tokio) are optional dependencies
//! switched on by the `ssr` feature; the `hydrate` build never sees them.

#![recursion_limit = "256"]

pub mod api;
pub mod codec;
pub mod components;
pub mod error;
pub mod format;
pub mod model;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod ssr;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;
use leptos_router::Lazy;

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
use pages::share::{SharePage, SharedExperiment, SharedGraph, SharedReport};
use pages::studies::{StudiesPage, StudyResultsPage};
use pages::users::UsersPage;
use pages::{corpus::CorpusPage, document::DocumentPage, home::HomePage, NotFound};

/// The pages are loaded in groups rather than all in one WASM module:
/// scripts/build splits the browser's build (wasm-split-cli) at each group's
/// `#[lazy]` function, so a page fetches the main module (router, reactive
/// runtime) and its group's module, plus the chunks of code its group shares
/// with other groups. wasm-split makes a chunk for every set of split points
/// that share code, so each group costs files on every page (one split per
/// page made ~600 modules and a report page fetched ~250 of them); the
/// groups are cut so that each page stays under 600 KB gzipped
/// (`scripts/wasm-size`) and the reports collaborators open from links are
/// apart from the workbench. A page may be in a group without a route of
/// its own: the shared-link page draws what it shares with one.
macro_rules! page_group {
    ($group:ident, $preload:ident, $kind:ident { $($page:ident $(=> $route:ident)?),* $(,)? }) => {
        #[derive(Clone, Copy, Debug)]
        pub enum $kind { $($page),* }

        #[leptos::lazy]
        fn $group(page: $kind) -> AnyView {
            match page {
                $($kind::$page => view! { <$page/> }.into_any(),)*
            }
        }

        // Each page's route (a page without one is drawn inside another:
        // the shared-link page draws its body with one). The router
        // preloads the route (the group's module is fetched and linked)
        // before it renders or hydrates the page, so the page's view is
        // ready when hydration reaches it.
        $($(
            #[derive(Debug)]
            pub struct $route;

            impl leptos_router::LazyRoute for $route {
                fn data() -> Self {
                    $route
                }

                async fn view(_this: Self) -> AnyView {
                    #[cfg(feature = "ssr")]
                    crate::ssr::preload::hint(stringify!($group), None);
                    $group($kind::$page).await
                }

                async fn preload() {
                    #[cfg(target_arch = "wasm32")]
                    $preload().await;
                }
            }
        )?)*
    };
}

// `__preload_<group>` is made by `#[lazy]` on the group's function.
page_group!(experiment_pages, __preload_experiment_pages, ExperimentPages { ExperimentPage => ExperimentPageRoute, SharedExperiment });
page_group!(report_pages, __preload_report_pages, ReportPages { EvaluationPage => EvaluationPageRoute, MetricsRunPage => MetricsRunPageRoute, StudyResultsPage => StudyResultsPageRoute, SharedReport });
page_group!(graph_pages, __preload_graph_pages, GraphPages { GraphPage => GraphPageRoute, SharedGraph });
page_group!(corpus_pages, __preload_corpus_pages, CorpusPages { HomePage => HomePageRoute, CorpusPage => CorpusPageRoute, DocumentPage => DocumentPageRoute, JobsPage => JobsPageRoute, JobPage => JobPageRoute, SettingsPage => SettingsPageRoute, UsersPage => UsersPageRoute });
page_group!(question_pages, __preload_question_pages, QuestionPages { QuestionsPage => QuestionsPageRoute });
page_group!(answer_pages, __preload_answer_pages, AnswerPages { AnswersPage => AnswersPageRoute, NewExperimentPage => NewExperimentPageRoute });
page_group!(evaluation_pages, __preload_evaluation_pages, EvaluationPages { EvaluationsPage => EvaluationsPageRoute, MetricsPage => MetricsPageRoute, StudiesPage => StudiesPageRoute });
page_group!(rater_pages, __preload_rater_pages, RaterPages { RaterPage => RaterPageRoute, LoginPage => LoginPageRoute, SetupPage => SetupPageRoute });
page_group!(share_pages, __preload_share_pages, SharePages { SharePage });

/// The shared-link page: its frame is a group of its own, its body in the
/// group of the page it shares (`SharePage`). Hydrating it, the router first
/// loads both, the body's group by the kind the server wrote into the page.
#[derive(Debug)]
pub struct SharePageRoute;

impl leptos_router::LazyRoute for SharePageRoute {
    fn data() -> Self {
        SharePageRoute
    }

    async fn view(_this: Self) -> AnyView {
        #[cfg(feature = "ssr")]
        crate::ssr::preload::hint("share_pages", None);
        share_pages(SharePages::SharePage).await
    }

    async fn preload() {
        #[cfg(target_arch = "wasm32")]
        {
            let body = async {
                if let Some(kind) = pages::share::kind_in_page() {
                    pages::share::SharedBody::of(kind).preload().await;
                }
            };
            futures_util::future::join(__preload_share_pages(), body).await;
        }
    }
}

impl pages::share::SharedBody {
    /// The name of its group (as in pkg/wasm-groups.json).
    #[cfg(feature = "ssr")]
    fn group(self) -> &'static str {
        match self {
            Self::Report => "report_pages",
            Self::Experiment => "experiment_pages",
            Self::Graph => "graph_pages",
        }
    }

    async fn view(self) -> AnyView {
        match self {
            Self::Report => report_pages(ReportPages::SharedReport).await,
            Self::Experiment => experiment_pages(ExperimentPages::SharedExperiment).await,
            Self::Graph => graph_pages(GraphPages::SharedGraph).await,
        }
    }

    #[cfg(target_arch = "wasm32")]
    async fn preload(self) {
        match self {
            Self::Report => __preload_report_pages().await,
            Self::Experiment => __preload_experiment_pages().await,
            Self::Graph => __preload_graph_pages().await,
        }
    }
}

/// Fetches and links, one after another, the WASM modules of a project's
/// pages, so that a tab's first click does not wait for its code (the
/// browser entry point calls this a moment after a project page has
/// hydrated). Modules already loaded cost nothing.
#[cfg(target_arch = "wasm32")]
pub async fn prefetch_project_pages() {
    __preload_graph_pages().await;
    __preload_question_pages().await;
    __preload_answer_pages().await;
    __preload_evaluation_pages().await;
    __preload_report_pages().await;
    __preload_corpus_pages().await;
}

/// The HTML document around every page.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    // The routes read the site's layout from it (ssr::preload::hint).
    provide_context(options.clone());
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
                <Route path=path!("/settings") view={Lazy::<SettingsPageRoute>::new()}/>
                <Route path=path!("/projects/:id/settings") view={Lazy::<SettingsPageRoute>::new()}/>
            </Routes>
        </Router>
    }
}

//! Pieces shared by several pages.

pub mod upload;

use leptos::prelude::*;
use leptos_router::components::A;

use crate::error::AppError;

/// The top bar outside a project: just the brand.
#[component]
pub fn Brand() -> impl IntoView {
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Assay"</a>
        </header>
    }
}

/// The sections of a project. Sections later releases fill are shown as
/// coming, not as links that lead nowhere.
const SECTIONS: &[(&str, Option<&str>)] = &[
    ("Corpus", Some("corpus")),
    ("Graph", None),
    ("Questions", None),
    ("Answers", None),
    ("Evaluations", None),
    ("Studies", None),
    ("Settings", None),
];

/// The top bar inside a project, with its sections.
#[component]
pub fn ProjectBar(project_id: i64, #[prop(into)] name: Signal<String>, active: &'static str) -> impl IntoView {
    let items = SECTIONS
        .iter()
        .map(|(label, slug)| match slug {
            Some(slug) => {
                let class = if *slug == active { "tab active" } else { "tab" };
                view! { <A href=format!("/projects/{project_id}/{slug}") attr:class=class>{*label}</A> }.into_any()
            }
            None => view! {
                <span class="tab soon" title="Coming in a later release">{*label}<small>"soon"</small></span>
            }
            .into_any(),
        })
        .collect_view();
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Assay"</a>
            <span class="crumb">"/"</span>
            <span class="project-name">{name}</span>
            <nav class="tabs" aria-label="Project sections">{items}</nav>
        </header>
    }
}

/// An error message for the user.
#[component]
pub fn ErrorNote(error: AppError) -> impl IntoView {
    view! { <p class="error" role="alert">{error.to_string()}</p> }
}

/// Shows the error of the last run of a server action, if it failed.
#[component]
pub fn ActionError<I, O>(action: ServerAction<I>) -> impl IntoView
where
    I: leptos::server_fn::ServerFn<Output = O, Error = AppError> + Clone + Send + Sync + 'static,
    O: Clone + Send + Sync + 'static,
{
    move || match action.value().get() {
        Some(Err(e)) => Some(view! { <ErrorNote error=e/> }),
        _ => None,
    }
}

//! Pieces shared by several pages.

pub mod explorer;
pub mod help;
pub mod jobs;
pub mod upload;

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use crate::error::AppError;
use crate::model::{ProjectView, SourceChunk};

/// The route parameter `key` (`:id`, `:job`, …) as a number (0 when absent
/// or not a number).
pub fn route_id(key: &'static str) -> Memo<i64> {
    let params = use_params_map();
    Memo::new(move |_| params.read().get(key).and_then(|s| s.parse().ok()).unwrap_or(0))
}

/// The top bar outside a project: the brand (and, with `account`, the
/// server-wide links and the logout button).
#[component]
pub fn Brand(#[prop(optional)] account: bool) -> impl IntoView {
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Assay"</a>
            {account.then(|| view! { <AccountLinks project_id=None/> })}
        </header>
    }
}

/// What is server-wide, on every page's top bar (never inside a project's
/// tabs, so a phone never scrolls it out of sight): a new experiment (from
/// inside a project, with its documents chosen), the LLM settings, the
/// accounts, and logging out.
#[component]
pub fn AccountLinks(project_id: Option<i64>) -> impl IntoView {
    let new_experiment = project_id.map_or("/experiments/new".to_string(), |p| format!("/experiments/new?project={p}"));
    view! {
        <nav class="account" aria-label="Assay">
            <a href=new_experiment id="new-experiment-link">"New experiment"</a>
            <a href="/settings" id="settings-link">"Settings"</a>
            <a href="/users" id="accounts-link">"Accounts"</a>
            <LogOut/>
        </nav>
    }
}

/// Ends the owner's session and goes to the login page.
#[component]
pub fn LogOut() -> impl IntoView {
    let action = ServerAction::<crate::api::Logout>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = action.value().get() {
            #[cfg(feature = "hydrate")]
            if let Some(w) = web_sys::window() {
                let _ = w.location().assign("/login");
            }
        }
    });
    view! {
        <ActionForm action attr:class="logout-form">
            <button type="submit" class="link" id="log-out">"Log out"</button>
        </ActionForm>
    }
}

/// The sections of a project. Sections later releases fill are shown as
/// coming, not as links that lead nowhere.
const SECTIONS: &[(&str, Option<&str>)] = &[
    ("Corpus", Some("corpus")),
    ("Graph", Some("graph")),
    ("Questions", Some("questions")),
    ("Answers", Some("answers")),
    ("Evaluations", Some("evaluations")),
    ("Metrics", Some("metrics")),
    ("Studies", Some("studies")),
    ("Jobs", Some("jobs")),
];

/// The top bar inside a project, with its sections and the project's name
/// (rendered on the server, kept while the project refreshes).
#[component]
pub fn ProjectBar(
    project_id: i64,
    project: Resource<Result<ProjectView, AppError>>,
    active: &'static str,
) -> impl IntoView {
    // The name, and the whole of it as the title (shown on hover and long
    // press where the bar cuts it).
    let name = move || {
        Suspend::new(async move {
            let name = project.await.map(|p| p.summary.name).unwrap_or_default();
            let title = name.clone();
            view! { <span class="project-name" title=title>{name}</span> }
        })
    };
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
    // On a phone the tabs scroll in their own row: bring the active one into it.
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        use wasm_bindgen::JsCast;
        let doc = document();
        let (Some(row), Some(tab)) = (
            doc.query_selector("nav.tabs").ok().flatten().and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()),
            doc.query_selector("nav.tabs .tab.active")
                .ok()
                .flatten()
                .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()),
        ) else {
            return;
        };
        if row.scroll_width() > row.client_width() {
            // Both offsets are from the same positioned ancestor.
            row.set_scroll_left(tab.offset_left() - row.offset_left() - 16);
        }
    });
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Assay"</a>
            <span class="crumb">"/"</span>
            <Transition fallback=|| ()>{name}</Transition>
            <AccountLinks project_id=Some(project_id)/>
            <nav class="tabs" aria-label="Project sections">{items}</nav>
        </header>
    }
}

/// An error message for the user.
#[component]
pub fn ErrorNote(error: AppError) -> impl IntoView {
    view! { <p class="error" role="alert">{error.to_string()}</p> }
}

/// The "bypass the cache" checkbox of every form that starts an LLM job
/// (the server functions read `no_cache` as present or absent).
#[component]
pub fn NoCacheBox() -> impl IntoView {
    view! {
        <label class="muted"><input type="checkbox" name="no_cache" value="on"/>" bypass the cache (new calls even where replies are cached)"
            <help::Help text=help::text::NO_CACHE/></label>
    }
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

/// A "Delete…" button that asks before it acts: the first click shows what
/// will be lost, with Delete and Cancel.
#[component]
pub fn ConfirmDelete(#[prop(into)] prompt: String, #[prop(into)] on_confirm: Callback<()>) -> impl IntoView {
    let asking = RwSignal::new(false);
    let prompt = StoredValue::new(prompt);
    view! {
        <Show
            when=move || asking.get()
            fallback=move || view! { <button type="button" class="link danger" on:click=move |_| asking.set(true)>"Delete…"</button> }
        >
            <span class="confirm" role="alertdialog">
                {prompt.get_value()} " "
                <button type="button" class="danger" on:click=move |_| { asking.set(false); on_confirm.run(()); }>"Delete"</button>
                <button type="button" class="link" on:click=move |_| asking.set(false)>"Cancel"</button>
            </span>
        </Show>
    }
}

/// Source chunks as evidence: each with its document (linked) and the
/// mentions marked.
#[component]
pub fn SourceText(project_id: i64, sources: Vec<SourceChunk>) -> impl IntoView {
    sources
        .into_iter()
        .map(|c| {
            view! {
                <figure class="source-chunk" data-chunk=c.chunk_id>
                    <figcaption>{if project_id > 0 {
                            view! { <a href=format!("/projects/{project_id}/documents/{}", c.document_id)>{c.document_title}</a>
                                " · " <a class="chunk-link" href=format!("/projects/{project_id}/documents/{}?view=chunks&chunk={}#chunk-{}", c.document_id, c.chunk_id, c.chunk_id)>{format!("chunk {}", c.chunk_id)}</a> }.into_any()
                        } else {
                            view! { <span class="doc-title">{c.document_title}</span> <span class="muted">{format!(" · chunk {}", c.chunk_id)}</span> }.into_any()
                        }}</figcaption>
                    <p>{crate::format::soft_wrap(c.segments).into_iter().map(|(text, mark)| if mark {
                        view! { <mark>{text}</mark> }.into_any()
                    } else {
                        text.into_any()
                    }).collect_view()}</p>
                </figure>
            }
        })
        .collect_view()
}

/// A link shown once (a share or study link): the absolute URL, a Copy
/// button that puts it on the clipboard, and the reminder that it will
/// not be shown again.
#[component]
pub fn CopyLink(url: String, #[prop(optional, into)] id: Option<String>) -> impl IntoView {
    let copied = RwSignal::new(None::<bool>);
    let text = url.clone();
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let text = text.clone();
            leptos::task::spawn_local(async move {
                let ok = match web_sys::window() {
                    Some(w) => {
                        let promise = w.navigator().clipboard().write_text(&text);
                        wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
                    }
                    None => false,
                };
                copied.set(Some(ok));
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &text;
    };
    view! {
        <span class="copy-link" id=id>
            <a class="mono" href=url.clone() target="_blank">{url.clone()}</a>
            " "
            <button type="button" class="copy" on:click=copy>{move || match copied.get() {
                Some(true) => "Copied",
                _ => "Copy",
            }}</button>
            {move || (copied.get() == Some(false)).then(|| view! {
                <span class="error small">" The browser refused the clipboard (it allows it on HTTPS and localhost): select the link and copy it by hand."</span>
            })}
        </span>
    }
}

/// The owner's share links of a report page: make one (its address is
/// shown once), see them, withdraw any (it answers 404 at once).
#[component]
pub fn SharePanel(kind: types::ShareKind, page_id: i64) -> impl IntoView {
    let create = ServerAction::<crate::api::CreateShare>::new();
    let expires = RwSignal::new(None::<u32>);
    let revoke = ServerAction::<crate::api::RevokeShare>::new();
    let shares = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        move |_| crate::api::list_shares(kind, page_id),
    );
    view! {
        <section class="panel share-panel" id="share-panel">
            <h2>"Share read-only"</h2>
            <p class="muted small">"A share link shows this page as it is — plots, tables, downloads — to anyone who has it, with no account, no edit controls and nothing else of the project. Withdraw it and it stops working at once."</p>
            <button type="button" id="create-share" disabled=move || create.pending().get()
                on:click=move |_| { create.dispatch(crate::api::CreateShare { kind, page_id, expires_days: expires.get_untracked() }); }>"Make a share link"</button>
            " "
            <label class="small">"that expires "
                <select on:change=move |ev| expires.set(event_target_value(&ev).parse().ok())>
                    <option value="" selected>"never"</option>
                    <option value="1">"in a day"</option>
                    <option value="7">"in a week"</option>
                    <option value="30">"in 30 days"</option>
                </select>
            </label>
            {move || create.value().get().map(|r| match r {
                Ok(url) => view! { <p id="share-link">"Copy it now: it is shown only once. " <CopyLink url/></p> }.into_any(),
                Err(e) => view! { <ErrorNote error=e/> }.into_any(),
            })}
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let list = shares.await.unwrap_or_default();
                    (!list.is_empty()).then(|| view! {
                        <table class="grid small shares"><tbody>
                            {list.into_iter().map(|crate::model::ShareLink { id, created, revoked }| view! {
                                <tr data-share=id><td>{format!("link #{id}")}</td><td>{format!("made {}", crate::format::timestamp(&created))}</td>
                                    <td>{if revoked { view! { <span class="muted">"withdrawn"</span> }.into_any() } else {
                                        view! { <button type="button" class="link danger" on:click=move |_| { revoke.dispatch(crate::api::RevokeShare { id }); }>"Withdraw"</button> }.into_any()
                                    }}</td></tr>
                            }).collect_view()}
                        </tbody></table>
                    })
                })}
            </Transition>
        </section>
    }
}

/// Where a list is in its pages, with links to the previous and next
/// (`href(n)`: page n's address, the list's other state kept).
#[component]
pub fn Pager(
    page: i64,
    pages: i64,
    total: i64,
    per_page: i64,
    /// Items on this page.
    count: usize,
    href: impl Fn(i64) -> String + 'static,
    id: &'static str,
    /// What the pages are of, for screen readers ("Pages of items").
    label: &'static str,
) -> impl IntoView {
    let first = (page - 1) * per_page + 1;
    let last = first + count as i64 - 1;
    let text = if total == 0 {
        "none".to_string()
    } else if per_page == 1 {
        format!("{} of {}", crate::format::int(page), crate::format::int(pages))
    } else {
        format!(
            "{}–{} of {} · page {} of {}",
            crate::format::int(first),
            crate::format::int(last),
            crate::format::int(total),
            crate::format::int(page),
            crate::format::int(pages)
        )
    };
    view! {
        <nav class="pager inline-form" id=id aria-label=label>
            {(page > 1).then(|| view! { <a href=href(page - 1) rel="prev">"← Previous"</a> })}
            <span class="muted">{text}</span>
            {(page < pages).then(|| view! { <a href=href(page + 1) rel="next">"Next →"</a> })}
        </nav>
    }
}

/// A plot drawn on the server — inline, or linked by name (fetched by the
/// browser on its own, its text at the size it was drawn: the figure
/// scrolls sideways on a narrow screen rather than shrink it) — with its
/// downloads (none in a standalone file: `base` is empty).
#[component]
pub fn Plot(base: String, name: String, figure: crate::model::Figure, #[prop(into)] alt: String) -> impl IntoView {
    let downloads = (!base.is_empty()).then(|| {
        view! {
            <figcaption class="small">
                <a href=format!("{base}/plots/{name}.svg") download="">"SVG"</a> " · "
                <a href=format!("{base}/plots/{name}.png") download="">"PNG"</a>
            </figcaption>
        }
    });
    let drawn = match figure {
        crate::model::Figure::Inline(svg) => {
            view! { <div class="svg" role="img" aria-label=alt inner_html=svg></div> }.into_any()
        }
        crate::model::Figure::Linked => {
            view! { <div class="svg"><img src=format!("{base}/plots/{name}.svg") alt=alt/></div> }.into_any()
        }
    };
    view! {
        <figure class="plot" data-plot=name.clone()>
            {drawn}
            {downloads}
        </figure>
    }
}

//! `/projects/:id/documents/:doc`: one document, as plain text a part at a
//! time (`?part=N`), or (`?view=chunks`) as its chunks with the ids
//! provenance links name, a page at a time (`&page=N`; `&chunk=ID` opens
//! the page holding that chunk and `#chunk-ID` scrolls to it).

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_navigate, use_query_map};

use crate::api::corpus::{get_document, get_document_chunks, DeleteDocument};
use crate::api::projects::get_project;
use crate::components::route_id;
use crate::components::{ActionError, ConfirmDelete, ErrorNote, Pager, ProjectBar};
use crate::format;

#[component]
pub fn DocumentPage() -> impl IntoView {
    let project_id = route_id("id");
    let doc_id = route_id("doc");
    let project = Resource::new(move || project_id.get(), get_project);
    let query = use_query_map();
    let number = move |key: &str| query.read().get(key).and_then(|p| p.parse::<i64>().ok());
    let part = Memo::new(move |_| number("part").unwrap_or(1));
    let page = Memo::new(move |_| number("page").unwrap_or(1));
    let chunk = Memo::new(move |_| number("chunk"));
    let document = Resource::new(move || (doc_id.get(), part.get()), |(d, part)| get_document(d, part));
    let delete = ServerAction::<DeleteDocument>::new();
    let chunked = Memo::new(move |_| query.read().get("view").as_deref() == Some("chunks"));
    // Fetched only when the chunks are shown.
    let chunks = Resource::new(
        move || (doc_id.get(), chunked.get(), page.get(), chunk.get()),
        |(d, on, page, chunk)| async move {
            if on {
                get_document_chunks(d, page, chunk).await.map(Some)
            } else {
                Ok(None)
            }
        },
    );

    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(())) = delete.value().get() {
            navigate(&format!("/projects/{}/corpus", project_id.get_untracked()), Default::default());
        }
    });

    view! {
        <ProjectBar project_id=project_id.get_untracked() project active="corpus"/>
        <main class="page">
            <p><a href=move || format!("/projects/{}/corpus", project_id.get())>"← Corpus"</a></p>
            <Suspense fallback=|| view! { <p class="muted">"Loading document…"</p> }>
                {move || Suspend::new(async move {
                    match document.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(d) if d.project_id != project_id.get_untracked() => {
                            view! { <p class="error">"This document belongs to another project."</p> }.into_any()
                        }
                        Ok(d) => {
                            let id = d.summary.id;
                            view! {
                                <Title text=d.summary.title.clone()/>
                                <h1>{d.summary.title.clone()}</h1>
                                <p class="meta">
                                    {d.summary.source.clone()} " · " {format::int(d.summary.chars)} " characters · "
                                    {format::int(d.summary.tokens)} " tokens · " {format::int(d.summary.chunks)} " chunks · added "
                                    {format::timestamp(&d.created_at)}
                                </p>
                                {d.metadata.clone().map(|m| view! {
                                    <details class="metadata"><summary>"Metadata"</summary><pre>{m}</pre></details>
                                })}
                                <nav class="view-switch" aria-label="Show the document as">
                                    <a href="?view=text" class:active=move || !chunked.get()>"Text"</a>
                                    <a href="?view=chunks" id="show-chunks" class:active=move || chunked.get()>{format!("Chunks ({})", format::int(d.summary.chunks))}</a>
                                </nav>
                                {let (text, part, parts) = (d.text.clone(), d.part, d.parts); move || (!chunked.get()).then(|| view! {
                                    {(parts > 1).then(|| view! { <p class="muted small">{format!("Part {part} of {parts}")}</p> })}
                                    // Text is rendered as text: Leptos escapes it, so markup in a document shows as written.
                                    <pre class="document-text">{text.clone()}</pre>
                                    {(parts > 1).then(|| view! {
                                        <Pager page=part pages=parts total=parts per_page=1 count=1
                                            href=|n| format!("?view=text&part={n}") id="part-pager" label="Parts of the text"/>
                                    })}
                                })}
                                <Transition fallback=|| view! { <p class="muted">"Loading chunks…"</p> }>
                                    {move || Suspend::new(async move {
                                        match chunks.await {
                                            Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                                            Ok(None) => ().into_any(),
                                            Ok(Some(p)) => {
                                                let count = p.chunks.len();
                                                view! {
                                                    <Chunks list=p.chunks/>
                                                    <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::CHUNKS_PER_PAGE count
                                                        href=|n| format!("?view=chunks&page={n}") id="chunk-pager" label="Pages of chunks"/>
                                                }.into_any()
                                            }
                                        }
                                    })}
                                </Transition>
                                <p>
                                    <ConfirmDelete
                                        prompt="Delete this document and its chunks?"
                                        on_confirm=move |_| { delete.dispatch(DeleteDocument { id }); }
                                    />
                                </p>
                                <ActionError action=delete/>
                            }.into_any()
                        }
                    }
                })}
            </Suspense>
        </main>
    }
}

/// The chunks, each headed by the id provenance links name; the one the
/// address's `#chunk-ID` names is scrolled to and marked.
#[component]
fn Chunks(list: Vec<crate::model::ChunkView>) -> impl IntoView {
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let Some(w) = web_sys::window() else { return };
        let hash = w.location().hash().unwrap_or_default();
        if let Some(el) = hash.strip_prefix('#').and_then(|id| w.document()?.get_element_by_id(id)) {
            el.scroll_into_view();
        }
    });
    view! {
        <ol class="chunks" id="chunks">
            {list.into_iter().map(|c| view! {
                <li id=format!("chunk-{}", c.id) data-chunk=c.id>
                    <p class="chunk-head small"><strong>{format!("chunk {}", c.id)}</strong>
                        <span class="muted">{format!(" · #{} in this document · {} tokens", c.idx + 1, format::int(c.tokens))}</span></p>
                    <pre class="document-text chunk-text">{c.text}</pre>
                </li>
            }).collect_view()}
        </ol>
    }
}

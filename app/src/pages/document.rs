//! `/projects/:id/documents/:doc`: one document, as plain text.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_navigate;

use crate::api::corpus::{get_document, DeleteDocument};
use crate::api::projects::get_project;
use crate::components::route_id;
use crate::components::{ActionError, ConfirmDelete, ErrorNote, ProjectBar};
use crate::format;

#[component]
pub fn DocumentPage() -> impl IntoView {
    let project_id = route_id("id");
    let doc_id = route_id("doc");
    let project = Resource::new(move || project_id.get(), get_project);
    let document = Resource::new(move || doc_id.get(), get_document);
    let delete = ServerAction::<DeleteDocument>::new();

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
                                // Text is rendered as text: Leptos escapes it, so markup in a document shows as written.
                                <pre class="document-text">{d.text.clone()}</pre>
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

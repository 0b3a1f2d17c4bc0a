//! `/projects/:id/corpus`: the documents of a project, upload, chunking.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::corpus::{get_upload_limits, list_documents, DeleteDocument, SetChunking};
use crate::api::projects::{get_project, LoadSample};
use crate::components::upload::UploadZone;
use crate::components::{route_id, ActionError, ConfirmDelete, ErrorNote, Pager, ProjectBar};
use crate::format;
use crate::model::{DocumentSummary, ProjectView};

#[component]
pub fn CorpusPage() -> impl IntoView {
    let id = route_id("id");
    let uploads = RwSignal::new(0u32);
    let delete_doc = ServerAction::<DeleteDocument>::new();
    let chunking = ServerAction::<SetChunking>::new();
    let sample = ServerAction::<LoadSample>::new();
    let changed = move || (uploads.get(), delete_doc.version().get(), chunking.version().get(), sample.version().get());
    let project = Resource::new(move || (id.get(), changed()), |(id, _)| get_project(id));
    let query = use_query_map();
    let page = Memo::new(move |_| query.read().get("page").and_then(|p| p.parse::<i64>().ok()).unwrap_or(1));
    let documents = Resource::new(move || (id.get(), page.get(), changed()), |(id, page, _)| list_documents(id, page));
    let limits = Resource::new(|| (), |_| get_upload_limits());

    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                project.await.ok().map(|p| view! { <Title text=format!("Corpus of {}", p.summary.name)/> })
            })}
        </Transition>
        <ProjectBar project_id=id.get_untracked() project active="corpus"/>
        <main class="page">
            <h1>"Corpus"</h1>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match project.await {
                        Ok(p) => view! { <Totals p/> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e/> <p><a href="/">"Back to the projects"</a></p> }.into_any(),
                    }
                })}
            </Suspense>
            // Its own Suspense, on the limits alone: refreshing the totals
            // after an upload must not reset the upload's report.
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match limits.await {
                        Ok(limits) => view! {
                            <UploadZone project_id=id.get_untracked() limits on_done=move |_| uploads.update(|n| *n += 1)/>
                        }.into_any(),
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    }
                })}
            </Suspense>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    project.await.ok().map(|p| view! {
                        {(p.summary.documents == 0).then(|| view! {
                            <ActionForm action=sample attr:class="sample-form">
                                <input type="hidden" name="project_id" value=p.summary.id/>
                                "No corpus at hand? "
                                <button type="submit" class="link" disabled=move || sample.pending().get()>"Load the sample corpus"</button>
                                " (five short documents, about 2,300 words)."
                            </ActionForm>
                        })}
                        <ChunkingForm p=p.clone() action=chunking/>
                    })
                })}
            </Suspense>
            <ActionError action=sample/>
            <h2>"Documents"</h2>
            <Suspense fallback=|| view! { <p class="muted">"Loading documents…"</p> }>
                {move || Suspend::new(async move {
                    match documents.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(p) if p.total == 0 => view! { <p class="muted">"No documents yet."</p> }.into_any(),
                        Ok(p) => {
                            let count = p.documents.len();
                            view! {
                                <DocumentTable docs=p.documents project_id=id.get_untracked() delete=delete_doc/>
                                <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::DOCUMENTS_PER_PAGE count
                                    href=|n| format!("?page={n}") id="document-pager" label="Pages of documents"/>
                            }.into_any()
                        }
                    }
                })}
            </Suspense>
            <ActionError action=delete_doc/>
        </main>
    }
}

#[component]
fn Totals(p: ProjectView) -> impl IntoView {
    let s = &p.summary;
    view! {
        <dl class="totals">
            <div><dt>"Documents"</dt><dd id="total-documents">{format::int(s.documents)}</dd></div>
            <div><dt>"Tokens"</dt><dd id="total-tokens">{format::int(s.tokens)}</dd></div>
            <div><dt>"Chunks"</dt><dd id="total-chunks">{format::int(s.chunks)}</dd></div>
            <div>
                <dt>"Chunking"</dt>
                <dd class="small">{format!("{} tokens, {} overlap", p.chunking.chunk_tokens, p.chunking.chunk_overlap)}<br/><span class="muted">{p.chunking.tokenizer.as_str()}</span></dd>
            </div>
        </dl>
    }
}

#[component]
fn ChunkingForm(p: ProjectView, action: ServerAction<SetChunking>) -> impl IntoView {
    let current = p.chunking.tokenizer;
    view! {
        <details class="chunking">
            <summary>"Chunking settings"</summary>
            <p class="muted">
                "Documents are cut into chunks of at most this many tokens, overlapping their neighbours, at paragraph, "
                "sentence or word boundaries. LightRAG uses 1200/100, HieraRAG 512. Changing this re-chunks every document."
            </p>
            <ActionForm action attr:class="inline-form">
                <input type="hidden" name="project_id" value=p.summary.id/>
                <label>"Chunk size " <input name="req[chunk_tokens]" type="number" min="16" max="32768" required value=p.chunking.chunk_tokens/></label>
                <label>"Overlap " <input name="req[chunk_overlap]" type="number" min="0" required value=p.chunking.chunk_overlap/></label>
                <label>"Tokenizer "
                    <select name="req[tokenizer]">
                        {types::Tokenizer::ALL.iter().map(|t| view! { <option value=t.as_str() selected=*t == current>{t.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <button type="submit" disabled=move || action.pending().get()>
                    {move || if action.pending().get() { "Re-chunking…" } else { "Apply and re-chunk" }}
                </button>
            </ActionForm>
            <ActionError action/>
        </details>
    }
}

#[component]
fn DocumentTable(docs: Vec<DocumentSummary>, project_id: i64, delete: ServerAction<DeleteDocument>) -> impl IntoView {
    view! {
        <table class="grid documents">
            <thead><tr>
                <th>"Title"</th><th>"Source"</th><th class="num">"Characters"</th><th class="num">"Tokens"</th>
                <th class="num">"Chunks"</th><th class="actions"><span class="visually-hidden">"Actions"</span></th>
            </tr></thead>
            <tbody>
                {docs.into_iter().map(|d| {
                    let id = d.id;
                    view! {
                        <tr data-document=d.title.clone()>
                            <td><a href=format!("/projects/{project_id}/documents/{id}")>{d.title.clone()}</a></td>
                            <td class="muted">{d.source.clone()}</td>
                            <td class="num">{format::int(d.chars)}</td>
                            <td class="num">{format::int(d.tokens)}</td>
                            <td class="num">{format::int(d.chunks)}</td>
                            <td class="actions">
                                <ConfirmDelete
                                    prompt=format!("Delete \"{}\" and its chunks?", d.title)
                                    on_confirm=move |_| { delete.dispatch(DeleteDocument { id }); }
                                />
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

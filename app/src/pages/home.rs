//! `/`: the projects.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_navigate;

use crate::api::projects::{list_projects, CreateProject, CreateSampleProject, DeleteProject, RenameProject};
use crate::components::{ActionError, Brand, ConfirmDelete, ErrorNote};
use crate::format;
use crate::model::ProjectSummary;

#[component]
pub fn HomePage() -> impl IntoView {
    let create = ServerAction::<CreateProject>::new();
    let sample = ServerAction::<CreateSampleProject>::new();
    let rename = ServerAction::<RenameProject>::new();
    let delete = ServerAction::<DeleteProject>::new();
    let projects = Resource::new(
        move || (create.version().get(), sample.version().get(), rename.version().get(), delete.version().get()),
        |_| list_projects(),
    );

    // A new project opens at once.
    let navigate = use_navigate();
    Effect::new(move |_| {
        let made = create.value().get().or_else(|| sample.value().get());
        if let Some(Ok(p)) = made {
            navigate(&format!("/projects/{}/corpus", p.id), Default::default());
        }
    });

    view! {
        <Title text=""/>
        <Brand account=true/>
        <main class="page">
            <section class="intro">
                <h1>"Projects"</h1>
                <p class="lede">
                    "A project holds one corpus and everything Assay derives from it: its knowledge graph, "
                    "questions, answers and evaluations."
                </p>
            </section>
            <ActionForm action=create attr:class="inline-form" attr:id="new-project">
                <label for="new-project-name">"New project"</label>
                <input id="new-project-name" name="name" type="text" required maxlength="100" placeholder="e.g. Agriculture, Mix, Harry Potter"/>
                <button type="submit">"Create"</button>
            </ActionForm>
            <ActionError action=create/>
            <ActionError action=sample/>
            <Suspense fallback=|| view! { <p class="muted">"Loading projects…"</p> }>
                {move || Suspend::new(async move {
                    match projects.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(list) if list.is_empty() => view! {
                            <div class="empty">
                                <h2>"No projects yet"</h2>
                                <p>"Create a project above and upload a corpus, or start with the sample: five short documents about the history of an estuary village (about 2,300 words)."</p>
                                <ActionForm action=sample>
                                    <button type="submit" class="primary" disabled=move || sample.pending().get()>
                                        {move || if sample.pending().get() { "Loading the sample…" } else { "Load the sample corpus" }}
                                    </button>
                                </ActionForm>
                            </div>
                        }.into_any(),
                        Ok(list) => view! {
                            <table class="grid projects">
                                <thead><tr>
                                    <th>"Name"</th><th class="num">"Documents"</th><th class="num">"Tokens"</th>
                                    <th>"Created"</th><th class="actions"><span class="visually-hidden">"Actions"</span></th>
                                </tr></thead>
                                <tbody>
                                    {list.into_iter().map(|p| view! { <ProjectRow p rename delete/> }).collect_view()}
                                </tbody>
                            </table>
                            <ActionError action=rename/>
                            <ActionError action=delete/>
                        }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
}

#[component]
fn ProjectRow(
    p: ProjectSummary,
    rename: ServerAction<RenameProject>,
    delete: ServerAction<DeleteProject>,
) -> impl IntoView {
    let editing = RwSignal::new(false);
    let id = p.id;
    let name = p.name.clone();
    let edit_value = StoredValue::new(p.name.clone());
    let row_label = p.name.clone();
    let what = match p.documents {
        0 => "no documents".to_string(),
        1 => "its 1 document".to_string(),
        n => format!("its {} documents", format::int(n)),
    };
    view! {
        <tr data-project=row_label>
            <td>
                <Show
                    when=move || editing.get()
                    fallback={
                        let name = name.clone();
                        move || view! { <a class="project-link" href=format!("/projects/{id}/corpus")>{name.clone()}</a> }
                    }
                >
                    <ActionForm action=rename attr:class="rename-form">
                        <input type="hidden" name="id" value=id/>
                        <input name="name" type="text" required maxlength="100" value=edit_value.get_value() aria-label="New name"/>
                        <button type="submit">"Save"</button>
                        <button type="button" class="link" on:click=move |_| editing.set(false)>"Cancel"</button>
                    </ActionForm>
                </Show>
            </td>
            <td class="num">{format::int(p.documents)}</td>
            <td class="num">{format::int(p.tokens)}</td>
            <td class="muted">{format::timestamp(&p.created_at)}</td>
            <td class="actions">
                <button type="button" class="link" on:click=move |_| editing.set(true)>"Rename"</button>
                <ConfirmDelete
                    prompt=format!("Delete this project and {}? This cannot be undone.", what)
                    on_confirm=move |_| { delete.dispatch(DeleteProject { id }); }
                />
            </td>
        </tr>
    }
}

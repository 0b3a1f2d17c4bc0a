//! `/users`: the owner's accounts page — collaborators (accounts that see
//! only the projects they are given, with read or edit rights), their
//! rights per project, and deleting them. Only the owner reaches it.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::projects::list_projects;
use crate::api::users::{list_users, CreateMember, DeleteMember, SetMemberAccess};
use crate::components::{ActionError, Brand, ConfirmDelete, ErrorNote};
use crate::model::ProjectSummary;

#[component]
pub fn UsersPage() -> impl IntoView {
    let create = ServerAction::<CreateMember>::new();
    let grant = ServerAction::<SetMemberAccess>::new();
    let delete = ServerAction::<DeleteMember>::new();
    let users = Resource::new(
        move || (create.version().get(), grant.version().get(), delete.version().get()),
        |_| list_users(),
    );
    let projects = Resource::new(|| (), |_| list_projects());
    view! {
        <Title text="Accounts"/>
        <Brand account=true/>
        <main class="page">
            <p class="small"><a href="/">"← Projects"</a></p>
            <h1>"Accounts"</h1>
            <p class="muted">"Collaborators log in with their own name and password and see only the projects you give them: read (every page, plot and download) or edit (also start jobs, change questions, run evaluations and studies). Projects, accounts and the LLM settings stay yours."</p>
            <section class="panel">
                <h2>"New collaborator"</h2>
                <ActionForm action=create attr:class="inline-form" attr:id="member-form">
                    <label>"Name " <input type="text" name="name" required/></label>
                    <label>"Password " <input type="password" name="password" minlength="10" required autocomplete="new-password"/></label>
                    <button type="submit" id="create-member" disabled=move || create.pending().get()>"Create"</button>
                    <span class="muted small">"At least 10 characters; give it to them yourself."</span>
                </ActionForm>
                <ActionError action=create/>
            </section>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let list = match users.await {
                        Ok(l) => l,
                        Err(e) => return view! { <ErrorNote error=e/> }.into_any(),
                    };
                    let projects: Vec<ProjectSummary> = projects.await.unwrap_or_default();
                    view! {
                        <table class="grid" id="users">
                            <thead><tr><th>"Account"</th><th>"Role"</th>
                                {projects.iter().map(|p| view! { <th>{format!("#{} {}", p.id, p.name)}</th> }).collect_view()}
                                <th></th></tr></thead>
                            <tbody>
                                {list.into_iter().map(|u| {
                                    let uid = u.id;
                                    let member = u.role == types::Role::Member;
                                    view! {
                                        <tr data-user=u.name.clone()>
                                            <td>{u.name.clone()}</td>
                                            <td>{if member { "collaborator" } else { "owner" }}</td>
                                            {projects.iter().map(|p| {
                                                let pid = p.id;
                                                let current = u.projects.iter().find(|m| m.project_id == pid).map_or("none", |m| m.access.as_str());
                                                if !member {
                                                    return view! { <td class="muted small">"everything"</td> }.into_any();
                                                }
                                                view! {
                                                    <td><select data-project=pid aria-label=format!("{}'s access to project {pid}", u.name)
                                                        on:change=move |ev| { grant.dispatch(SetMemberAccess { user_id: uid, project_id: pid, access: event_target_value(&ev) }); }>
                                                        {["none", "read", "edit"].into_iter().map(|a| view! { <option value=a selected=a == current>{a}</option> }).collect_view()}
                                                    </select></td>
                                                }.into_any()
                                            }).collect_view()}
                                            <td>{member.then(|| view! {
                                                <ConfirmDelete prompt=format!("Delete {}'s account?", u.name) on_confirm=move |_| { delete.dispatch(DeleteMember { user_id: uid }); }/>
                                            })}</td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                })}
            </Suspense>
            <ActionError action=grant/>
            <ActionError action=delete/>
        </main>
    }
}

//! `/projects/:id/studies`: design a question-rating study (seed 000 §V-C:
//! how many questions from which sets, the dimensions, intro and corpus
//! summary, attention checks, rater links), the studies with their links,
//! open/closed, and `/projects/:id/studies/:study`: the results — means with
//! 95% intervals per dimension and question source (Fig. 11), per level,
//! distributions, Fleiss' κ and Krippendorff's α, raw ratings as CSV.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::*;
use crate::components::{ActionError, ConfirmDelete, ErrorNote, ProjectBar};
use crate::model::{QuestionSetView, StudyResultsView, StudySummaryRow, StudyView};
use crate::pages::corpus::route_id;

#[component]
pub fn StudiesPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let create = ServerAction::<CreateStudy>::new();
    let toggle = ServerAction::<SetStudyOpen>::new();
    let add_link = ServerAction::<AddStudyLink>::new();
    let revoke = ServerAction::<RevokeStudyLink>::new();
    let delete = ServerAction::<DeleteStudy>::new();
    let question_sets = Resource::new(move || id.get(), list_question_sets);
    let studies = Resource::new(
        move || {
            (
                id.get(),
                create.version().get(),
                toggle.version().get(),
                add_link.version().get(),
                revoke.version().get(),
                delete.version().get(),
            )
        },
        |(id, ..)| list_studies(id),
    );
    view! {
        <Title text="Studies"/>
        <ProjectBar project_id=id.get_untracked() project active="studies"/>
        <main class="page wide">
            <h1>"Studies"</h1>
            <p class="muted">"People rate generated questions on a 5-point scale per dimension, at a link, with no account (seed 000 §V-C). Which set a question came from is never shown to raters; each rater sees the questions in an order of their own."</p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let sets = question_sets.await.unwrap_or_default();
                    view! { <Designer project_id=id.get_untracked() action=create sets/> }
                })}
            </Suspense>
            <ActionError action=create/>
            {move || create.value().get().and_then(Result::ok).map(|c| view! {
                <div class="panel created-links" id="created-links">
                    <p><strong>{format!("Study #{} created.", c.study_id)}</strong>
                        " Copy its links now: Assay keeps only their fingerprints, so they cannot be shown again (you can make new ones below)."</p>
                    <p>"Open link (one rater per browser): " <a class="mono" href=c.open_path.clone() target="_blank">{c.open_path.clone()}</a></p>
                    {(!c.rater_paths.is_empty()).then(|| view! {
                        <details><summary>{format!("{} per-rater links", c.rater_paths.len())}</summary>
                            <ol>{c.rater_paths.iter().map(|p| view! { <li><a class="mono" href=p.clone() target="_blank">{p.clone()}</a></li> }).collect_view()}</ol>
                        </details>
                    })}
                </div>
            })}
            {move || add_link.value().get().and_then(Result::ok).map(|p| view! {
                <p class="panel" id="new-link">"New link (copy it now): " <a class="mono" href=p.clone() target="_blank">{p.clone()}</a></p>
            })}
            <ActionError action=add_link/>
            <h2>"All studies"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match studies.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(list) if list.is_empty() => view! { <p class="muted" id="no-studies">"No studies yet."</p> }.into_any(),
                        Ok(list) => list.into_iter().map(|s| view! {
                            <StudyCard project_id=id.get_untracked() s toggle add_link revoke delete/>
                        }).collect_view().into_any(),
                    }
                })}
            </Transition>
        </main>
    }
}

#[component]
fn Designer(project_id: i64, action: ServerAction<CreateStudy>, sets: Vec<QuestionSetView>) -> impl IntoView {
    // The paper's draw: 15 from each set (draws are spread evenly over a
    // set's levels: 5 node, 5 edge, 5 subgraph from a graph set).
    let counts = RwSignal::new(sets.iter().map(|s| (s.id, 15.min(s.questions))).collect::<Vec<(i64, i64)>>());
    let draws = move || {
        counts.get().iter().filter(|(_, n)| *n > 0).map(|(s, n)| format!("{s}:{n}")).collect::<Vec<_>>().join(",")
    };
    view! {
        <details class="panel build-panel" open=true>
            <summary>"New question-rating study"</summary>
            {if sets.is_empty() {
                view! { <p class="muted">"Make or import a question set first (Questions)."</p> }.into_any()
            } else {
                view! {
                    <ActionForm action attr:class="stack-form" attr:id="study-form">
                        <input type="hidden" name="project_id" value=project_id.to_string()/>
                        <label>"Name " <input type="text" name="name" value="Question quality" required/></label>
                        <fieldset class="choices">
                            <legend>"Questions to draw from each set (0: none)"</legend>
                            {sets.iter().rev().map(|s| {
                                let sid = s.id;
                                let max = s.questions;
                                view! {
                                    <label class="choice">{format!("#{} {} ", s.id, s.name)}
                                        <input type="number" min="0" max=max.to_string() class="narrow" data-set=sid
                                            prop:value=move || counts.get().iter().find(|(i, _)| *i == sid).map_or(0, |c| c.1).to_string()
                                            on:input=move |ev| {
                                                let n = event_target_value(&ev).parse::<i64>().unwrap_or(0).clamp(0, max);
                                                counts.update(|c| if let Some(e) = c.iter_mut().find(|(i, _)| *i == sid) { e.1 = n });
                                            }/>
                                        <span class="muted small">{format!(" of {max}")}</span>
                                    </label>
                                }
                            }).collect_view()}
                        </fieldset>
                        <input type="hidden" name="draws" prop:value=draws/>
                        <label>"Introduction for raters "
                            <textarea name="intro" rows="3">"Thank you for helping. You will read questions generated about a text and rate how good each question is."</textarea>
                        </label>
                        <label>"Summary of the source text (raters read it first) "
                            <textarea name="corpus_summary" rows="3" placeholder="A few sentences about the corpus, so raters can judge answerability."></textarea>
                        </label>
                        <div class="row-fields">
                            <label>"Attention checks " <input type="number" name="attention_checks" value="1" min="0" max="5"/></label>
                            <label>"Target raters " <input type="number" name="target_raters" min="1" placeholder="none"/></label>
                            <label>"Per-rater links " <input type="number" name="rater_links" value="0" min="0" max="1000"/></label>
                            <label>"Seed " <input type="number" name="seed" value="42" min="0"/></label>
                            <label>"Links expire after (days) " <input type="number" name="expires_days" min="1" placeholder="never"/></label>
                        </div>
                        <p class="muted small">"Dimensions (seed 000): Comprehensibility, Specificity and Answerability, each on a 5-point scale with a label on each end. Raters who give an attention check another score than it asks for are left out of the results (and counted)."</p>
                        <div><button type="submit" id="create-study" disabled=move || action.pending().get() || draws().is_empty()>"Create study"</button></div>
                    </ActionForm>
                }.into_any()
            }}
        </details>
    }
}

#[component]
fn StudyCard(
    project_id: i64,
    s: StudyView,
    toggle: ServerAction<SetStudyOpen>,
    add_link: ServerAction<AddStudyLink>,
    revoke: ServerAction<RevokeStudyLink>,
    delete: ServerAction<DeleteStudy>,
) -> impl IntoView {
    let sid = s.id;
    let open = s.is_open;
    view! {
        <section class="panel study" data-study=sid>
            <h3><a href=format!("/projects/{project_id}/studies/{sid}")>{format!("#{sid} {}", s.name)}</a> " "
                <span class=if open { "badge status-running" } else { "badge status-cancelled" }>{if open { "open" } else { "closed" }}</span></h3>
            <p class="small">{format!("{} questions{} · {} raters, {} completed{}", s.items,
                if s.attention_checks > 0 { format!(" + {} attention checks", s.attention_checks) } else { String::new() },
                s.raters, s.completed, s.target_raters.map_or(String::new(), |t| format!(" of {t} wanted")))}</p>
            <div class="actions-row">
                <a href=format!("/projects/{project_id}/studies/{sid}")>"Results"</a>
                <button type="button" class="link" on:click=move |_| { toggle.dispatch(SetStudyOpen { id: sid, open: !open }); }>
                    {if open { "Close the study" } else { "Reopen" }}</button>
                <button type="button" class="link" on:click=move |_| { add_link.dispatch(AddStudyLink { id: sid, kind: "rater".into() }); }>"New rater link"</button>
                <button type="button" class="link" on:click=move |_| { add_link.dispatch(AddStudyLink { id: sid, kind: "open".into() }); }>"New open link"</button>
                <ConfirmDelete prompt=format!("Delete study #{sid} and all its ratings?") on_confirm=move |_| { delete.dispatch(DeleteStudy { id: sid }); }/>
            </div>
            <details><summary class="small">{format!("Links ({})", s.links.len())}</summary>
                <table class="grid small"><tbody>
                    {s.links.into_iter().map(|(lid, kind, label, revoked)| view! {
                        <tr><td>{label.unwrap_or_default()}</td><td>{kind}</td>
                            <td>{if revoked { view! { <span class="muted">"withdrawn"</span> }.into_any() } else {
                                view! { <button type="button" class="link danger" on:click=move |_| { revoke.dispatch(RevokeStudyLink { link_id: lid }); }>"Withdraw"</button> }.into_any()
                            }}</td></tr>
                    }).collect_view()}
                </tbody></table>
            </details>
        </section>
    }
}

#[component]
pub fn StudyResultsPage() -> impl IntoView {
    let id = route_id("id");
    let study = route_id("study");
    let project = Resource::new(move || id.get(), get_project);
    let results = Resource::new(move || study.get(), get_study_results);
    view! {
        <Title text="Study results"/>
        <ProjectBar project_id=id.get_untracked() project active="studies"/>
        <main class="page wide">
            <p class="small"><a href=format!("/projects/{}/studies", id.get_untracked())>"← Studies"</a></p>
            <Suspense fallback=|| view! { <p class="muted">"Loading the results…"</p> }>
                {move || Suspend::new(async move {
                    match results.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(r) => view! { <Results r/> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
}

fn rows_table(rows: Vec<StudySummaryRow>, group: &'static str) -> impl IntoView {
    view! {
        <table class="grid study-table">
            <thead><tr><th>"Dimension"</th><th>{group}</th><th class="num">"Ratings"</th><th class="num">"Mean"</th><th>"95% interval"</th><th>"1 · 2 · 3 · 4 · 5"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|r| view! {
                    <tr><td>{r.dimension}</td><td>{r.group}</td><td class="num">{r.n}</td><td class="num mean">{format!("{:.2}", r.mean)}</td>
                        <td>{r.ci.map_or("—".into(), |(l, h)| format!("{l:.2}–{h:.2}"))}</td>
                        <td class="mono small">{r.distribution.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" · ")}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The results; with `share` (a share token) read-only, downloads through it.
#[component]
pub(crate) fn Results(r: StudyResultsView, #[prop(optional)] share: Option<String>) -> impl IntoView {
    let s = r.study.clone();
    let sid = s.id;
    let shared = share.is_some();
    let base = share.as_ref().map_or(format!("/api/studies/{sid}"), |t| format!("/api/share/{t}"));
    view! {
        <h1>{format!("Study #{sid} · {}", s.name)}</h1>
        <dl class="totals">
            <div><dt>"Raters"</dt><dd id="study-raters">{r.raters}</dd></div>
            <div><dt>"Completed"</dt><dd>{r.completed}</dd></div>
            <div><dt>"Left out (attention)"</dt><dd>{r.failed_attention}</dd></div>
            <div><dt>"Questions"</dt><dd>{s.items}</dd></div>
        </dl>
        <figure class="plot" data-plot="study">
            <div class="svg" role="img" aria-label="Mean score per dimension and question source" inner_html=r.chart_svg.clone()></div>
            <figcaption class="small"><a href=format!("{base}/chart.svg") download="">"SVG"</a> " · "
                <a href=format!("{base}/chart.png") download="">"PNG"</a> " · "
                <a href=format!("{base}/ratings.csv") download="">"All ratings (CSV)"</a> " · "
                <a href=format!("{base}/report.html") download="">"One HTML file"</a></figcaption>
        </figure>
        <h2>"Per question source"</h2>
        {rows_table(r.by_source.clone(), "Source")}
        <p class="muted small">"The interval is mean ± t(0.975, n − 1) · s / √n over the ratings (each rater's rating of each question counts once; raters who missed an attention check are left out)."</p>
        <h2>"Per level"</h2>
        {rows_table(r.by_level.clone(), "Level")}
        <h2>"Agreement between raters"</h2>
        <table class="grid" id="study-agreement">
            <thead><tr><th>"Dimension"</th><th class="num">"Fleiss' κ"</th><th class="num">"Items (κ)"</th><th class="num">"Krippendorff's α (ordinal)"</th></tr></thead>
            <tbody>
                {r.agreement.iter().map(|(d, k, n, a)| view! {
                    <tr><td>{d.clone()}</td><td class="num">{k.map_or("—".into(), |k| format!("{k:.3}"))}</td><td class="num">{*n}</td>
                        <td class="num">{a.map_or("—".into(), |a| format!("{a:.3}"))}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
        <p class="muted small">"Fleiss' κ needs every item rated by the same number of raters: it is computed over the items with the most common number. Krippendorff's α takes any number per item (two or more)."</p>
        {(!shared).then(|| view! { <crate::components::SharePanel kind="study" page_id=sid/> })}
    }
}

//! `/projects/:id/studies`: design a study — question ratings (seed 000
//! §V-C: how many questions from which sets, the dimensions, intro and
//! corpus summary, attention checks, rater links) or answer validation
//! (seed 004 §2.5: questions with reference or generated answers, rated for
//! correctness, hallucination and answerability, and their category picked)
//! — the studies with their links, open/closed, and
//! `/projects/:id/studies/:study`: the results — means with 95% intervals
//! per dimension and source (Fig. 11), per level, distributions, Fleiss' κ
//! and Krippendorff's α, category agreement with the generator, the LLM
//! rater's agreement with the humans, raw ratings as CSV.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::answers::list_answer_sets;
use crate::api::projects::get_project;
use crate::api::questions::list_question_sets;
use crate::api::studies::{
    default_study_dimensions, get_study_results, list_studies, AddStudyLink, CreateStudy, DeleteStudy, RevokeStudyLink,
    SetStudyOpen, StartStudyRating,
};
use crate::components::help::{text as help, Cite, Help, Paper};
use crate::components::route_id;
use crate::components::{ActionError, ConfirmDelete, CopyLink, ErrorNote, ProjectBar};
use crate::format;
use crate::model::{AnswerSetView, JudgingImportView, QuestionSetView, StudyResultsView, StudySummaryRow, StudyView};
use types::LinkKind;

#[component]
pub fn StudiesPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let create = ServerAction::<CreateStudy>::new();
    let toggle = ServerAction::<SetStudyOpen>::new();
    let add_link = ServerAction::<AddStudyLink>::new();
    let revoke = ServerAction::<RevokeStudyLink>::new();
    let delete = ServerAction::<DeleteStudy>::new();
    let query = leptos_router::hooks::use_query_map();
    let import_error = Memo::new(move |_| query.read().get("import_error"));
    let question_sets = Resource::new(move || id.get(), list_question_sets);
    let answer_sets = Resource::new(move || id.get(), list_answer_sets);
    let defaults = Resource::new(|| (), |_| default_study_dimensions());
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
            <p class="muted">"People rate generated questions on a 5-point scale per dimension (" <Cite paper=Paper::Unbiased at="§V-C, User Study"/> "), or validate answers — correctness, hallucination, answerability and the question's category (" <Cite paper=Paper::HieraRag at="§2.5, Human Validation"/> ") — at a link, with no account. Where a question or answer came from is never shown to raters; each rater sees the items in an order of their own."</p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let sets = question_sets.await.unwrap_or_default();
                    let answers = answer_sets.await.unwrap_or_default();
                    let defaults = defaults.await.unwrap_or_default();
                    view! { <Designer project_id=id.get_untracked() action=create sets answers defaults/> }
                })}
            </Suspense>
            <ActionError action=create/>
            <details class="panel" id="import-judging" open=move || import_error.get().is_some()>
                <summary>"Import annotations: the HieraRAG authors' human judging"</summary>
                <form method="post" enctype="multipart/form-data" class="inline-form import-form" id="import-judging-form"
                    action=move || format!("/api/projects/{}/studies/import", id.get())>
                    <label>"Files " <input type="file" name="files" multiple=true accept=".zip,.xlsx,.csv,.json,.txt" required/></label>
                    <label>"Name " <input type="text" name="name" placeholder="HieraRAG human judging"/></label>
                    <button type="submit">"Import"</button>
                </form>
                <p class="muted small break-anywhere">"A zip of the " <code>"rag_system/human_judging/"</code> " folder of the authors' repository (fensorechase/rag-diverse-benchmarks-synthetic-qa), or its files: the annotators' "
                    <code>"completed_human/COMPLETED_*.xlsx"</code> " workbooks and " <code>"annotate_files/shared_questions_list.csv"</code>
                    " (required), " <code>"complete_analysis_results.json"</code> " (the splits' Coherence Ratios) and their outputs "
                    <code>"human_annotation_results_summary.json"</code> ", " <code>"correlation_stat.txt"</code> " (to compare with). It becomes a closed answer-validation study: a question per "
                    <code>"qa_id"</code> ", an annotator per workbook, the same scales. Its results show Assay's standard reading and, beside it, every figure as the authors' scripts compute it."</p>
                {move || import_error.get().map(|e| view! { <p class="error" role="alert" id="import-judging-error">{e}</p> })}
            </details>
            {move || create.value().get().and_then(Result::ok).map(|c| view! {
                <div class="panel created-links" id="created-links">
                    <p><strong>{format!("Study #{} created.", c.study_id)}</strong>
                        " Copy its links now: Assay keeps only their fingerprints, so they cannot be shown again (you can make new ones below)."</p>
                    {if c.open_url.is_empty() {
                        view! { <p>"No open link: only the per-rater links below rate."</p> }.into_any()
                    } else {
                        view! { <p>"Open link (one rater per browser): " <CopyLink url=c.open_url.clone() id="open-link"/></p> }.into_any()
                    }}
                    {(!c.rater_urls.is_empty()).then(|| view! {
                        <details><summary>{format!("{} per-rater links", c.rater_urls.len())}</summary>
                            <ol>{c.rater_urls.iter().map(|p| view! { <li><CopyLink url=p.clone()/></li> }).collect_view()}</ol>
                        </details>
                    })}
                </div>
            })}
            {move || add_link.value().get().and_then(Result::ok).map(|p| view! {
                <p class="panel" id="new-link">"New link (copy it now: it is shown only once): " <CopyLink url=p/></p>
            })}
            <ActionError action=add_link/>
            <h2>"All studies"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match studies.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(list) if list.is_empty() => view! { <p class="muted" id="no-studies">"No studies yet. Create one above: it draws questions (or question–answer pairs) and gives you links to send to raters, who need no account."</p> }.into_any(),
                        Ok(list) => list.into_iter().map(|s| view! {
                            <StudyCard project_id=id.get_untracked() s toggle add_link revoke delete/>
                        }).collect_view().into_any(),
                    }
                })}
            </Transition>
        </main>
    }
}

/// The designer. `defaults`: the question study's and the answer study's
/// default dimensions as JSON, which the dimensions box starts from.
#[component]
fn Designer(
    project_id: i64,
    action: ServerAction<CreateStudy>,
    sets: Vec<QuestionSetView>,
    answers: Vec<AnswerSetView>,
    defaults: (String, String),
) -> impl IntoView {
    // The paper's draw: 15 from each set (draws are spread evenly over a
    // set's levels: 5 node, 5 edge, 5 subgraph from a graph set).
    let counts = RwSignal::new(sets.iter().map(|s| (s.id, 15.min(s.questions))).collect::<Vec<(i64, i64)>>());
    let draws = move || {
        counts.get().iter().filter(|(_, n)| *n > 0).map(|(s, n)| format!("{s}:{n}")).collect::<Vec<_>>().join(",")
    };
    let kind = RwSignal::new("questions".to_string());
    let validating = move || kind.get() == "answers";
    let dims = RwSignal::new(defaults.0.clone());
    let name = RwSignal::new("Question quality".to_string());
    let answer_options: Vec<(i64, String)> = answers
        .iter()
        .map(|a| (a.id, format!("#{} {} (answers question set #{})", a.id, a.name, a.question_set_id)))
        .collect();
    view! {
        <details class="panel build-panel" open=true>
            <summary>"New study"</summary>
            {if sets.is_empty() {
                view! { <p class="muted">"Make or import a question set first (Questions)."</p> }.into_any()
            } else {
                view! {
                    <ActionForm action attr:class="stack-form" attr:id="study-form">
                        <input type="hidden" name="project_id" value=project_id.to_string()/>
                        <label>"What raters do "
                            <select name="req[kind]" id="study-kind" on:change=move |ev| {
                                let k = event_target_value(&ev);
                                dims.set(if k == "answers" { defaults.1.clone() } else { defaults.0.clone() });
                                name.set(if k == "answers" { "Answer validation" } else { "Question quality" }.into());
                                kind.set(k);
                            }>
                                <option value="questions" selected=true>"Rate questions (Likert, as the Unbiased GraphRAG Evaluation paper's user study)"</option>
                                <option value="answers">"Validate answers and categories (as the HieraRAG paper's human validation)"</option>
                            </select>
                        </label>
                        <label>"Name " <input type="text" name="name" prop:value=move || name.get()
                            on:input=move |ev| name.set(event_target_value(&ev)) required/></label>
                        <label class:hidden=move || !validating()>"Answers to validate "
                            <select name="req[answers]" id="study-answers">
                                <option value="reference">"The questions' reference answers (hierarchical sets)"</option>
                                {answer_options.into_iter().map(|(id, label)| view! { <option value=id.to_string()>{label}</option> }).collect_view()}
                            </select>
                        </label>
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
                        <input type="hidden" name="req[questions]" prop:value=draws/>
                        <label>"Introduction for raters "
                            <textarea name="req[intro]" rows="3">"Thank you for helping. You will read questions generated about a text and rate how good each question is."</textarea>
                        </label>
                        <label>"Summary of the source text (raters read it first) "
                            <textarea name="req[corpus_summary]" rows="3" placeholder="A few sentences about the corpus, so raters can judge answerability."></textarea>
                        </label>
                        <label>"Dimensions (JSON: name, definition, the label of each point, the first point's score as min; a category pick has \"choice\": true) "
                            <textarea name="dimensions" id="study-dimensions" rows="8" class="mono small" prop:value=move || dims.get()
                                on:input=move |ev| dims.set(event_target_value(&ev))></textarea>
                        </label>
                        <div class="row-fields">
                            <label>"Attention checks " <input type="number" name="req[attention_checks]" min="0" max="5"
                                prop:value=move || if validating() { "0" } else { "1" } disabled=validating/></label>
                            {move || validating().then(|| view! { <input type="hidden" name="req[attention_checks]" value="0"/> })}
                            <label>"Target raters " <input type="number" name="req[target_raters]" min="1" max="100000" placeholder="none"/></label>
                            <label>"Per-rater links " <input type="number" name="req[rater_links]" value="0" min="0" max="1000"/></label>
                            <label class="check"><input type="checkbox" name="req[no_open_link]" value="true"/>" Per-rater links only (no open link)"</label>
                            <label>"Seed " <input type="number" name="req[seed]" value=types::defaults::STUDY_SEED.to_string() min="0"/></label>
                            <label>"Links expire after (days) " <input type="number" name="req[expires_days]" min="1" max="3650" placeholder="never"/></label>
                        </div>
                        <p class="muted small">{move || if validating() {
                            "The HieraRAG paper's annotation: correctness 0–3, hallucination 0–2, answerability 0–3, and the category the rater thinks the question belongs to, among its level's categories (kept only when every drawn question has one hierarchical category). Raters see the source passage of each question."
                        } else {
                            "The Unbiased GraphRAG Evaluation paper's dimensions: Comprehensibility, Specificity and Answerability, each on a 5-point scale with a label on each point. Raters who give an attention check another score than it asks for are left out of the results (and counted)."
                        }}</p>
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
            <p class="small">{format!("{} · {} {}{} · {} raters, {} completed{}",
                if s.kind == types::StudyKind::Answers { "answer validation" } else { "question ratings" },
                s.items, if s.kind == types::StudyKind::Answers { "question–answer pairs" } else { "questions" },
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
                    {s.links.into_iter().map(|l| { let (lid, kind, revoked) = (l.id, l.kind, l.revoked); view! {
                        <tr><td>{l.label.unwrap_or_default()}</td><td>{if kind == LinkKind::Imported { "imported annotator" } else { kind.as_str() }}</td>
                            <td>{if kind == LinkKind::Imported { view! { <span class="muted">"no link"</span> }.into_any() } else if revoked { view! { <span class="muted">"withdrawn"</span> }.into_any() } else {
                                view! { <button type="button" class="link danger" on:click=move |_| { revoke.dispatch(RevokeStudyLink { link_id: lid }); }>"Withdraw"</button> }.into_any()
                            }}</td></tr>
                    }}).collect_view()}
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
    let rate = ServerAction::<StartStudyRating>::new();
    // While the study is open (raters may be at work) or its LLM rater
    // runs, the page waits for a rating to change (a long-poll the server
    // answers when one did) and refetches the results then.
    let live = RwSignal::new(false);
    let tick = crate::components::jobs::live_ticks(live, move || crate::components::jobs::Watch::Study(study.get()));
    let results =
        Resource::new(move || (study.get(), rate.version().get(), tick.get()), |(s, _, _)| get_study_results(s));
    view! {
        <Title text="Study results"/>
        <ProjectBar project_id=id.get_untracked() project active="studies"/>
        <main class="page wide">
            <p class="small"><a href=format!("/projects/{}/studies", id.get_untracked())>"← Studies"</a></p>
            {imported_notice()}
            <Transition fallback=|| view! { <p class="muted">"Loading the results…"</p> }>
                {move || Suspend::new(async move {
                    match results.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(r) => {
                            live.set(r.study.is_open || r.llm.as_ref().is_some_and(|l| l.status.is_active()));
                            view! { <Results r rate/> }.into_any()
                        }
                    }
                })}
            </Transition>
            <ActionError action=rate/>
        </main>
    }
}

fn rows_table(rows: Vec<StudySummaryRow>, group: &'static str) -> impl IntoView {
    if rows.is_empty() {
        return view! {
            <p class="muted empty-hint">"No ratings yet. Send raters the study's links (made when it was created, or new ones on the Studies page): results appear here as they rate, without a reload."</p>
        }
        .into_any();
    }
    view! {
        <table class="grid study-table">
            <thead><tr><th>"Dimension"</th><th>{group}</th><th class="num">"Ratings (raters)"</th><th class="num">"Mean"</th><th>"95% interval"</th><th>"Ratings per point, lowest first"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|r| view! {
                    <tr><td>{r.dimension}</td><td>{r.group}</td>
                        <td class="num">{format!("{} ({} {})", format::int(r.n as i64), r.raters, if r.raters == 1 { "rater" } else { "raters" })}</td>
                        <td class="num mean">{format!("{:.2}", r.mean)}</td>
                        <td class="ci">{match r.ci {
                            Some((l, h)) => format!("{l:.2}–{h:.2}{}", if r.clipped { " (clipped to the scale)" } else { "" }),
                            None => format!("— (needs {} raters)", crate::model::MIN_RATERS_FOR_INTERVAL),
                        }}</td>
                        <td class="mono small">{r.distribution.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" · ")}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// A share to one decimal: chance rates like 12.5% need it.
fn pct1(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn opt3(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{x:.3}"))
}

/// The results; with `share` (a share token) read-only, downloads through
/// it; with `rate`, a button that starts the LLM rater.
#[component]
pub fn Results(
    r: StudyResultsView,
    #[prop(optional)] share: Option<String>,
    #[prop(optional)] rate: Option<ServerAction<StartStudyRating>>,
    #[prop(optional)] standalone: bool,
) -> impl IntoView {
    let s = r.study.clone();
    let sid = s.id;
    let shared = share.is_some() || standalone;
    let answers = s.kind == types::StudyKind::Answers;
    let base = share.as_ref().map_or(format!("/api/studies/{sid}"), |t| format!("/api/share/{t}"));
    view! {
        <h1>{format!("Study #{sid} · {}", s.name)}</h1>
        <dl class="totals">
            <div><dt>"Raters"</dt><dd id="study-raters">{r.raters}</dd></div>
            <div><dt>"Through the open link"</dt><dd id="study-open-raters">{r.open_link_raters}</dd></div>
            <div><dt>"Completed"</dt><dd>{r.completed}</dd></div>
            <div><dt>"Left out (attention)"</dt><dd>{r.failed_attention}</dd></div>
            <div><dt>{if answers { "Question–answer pairs" } else { "Questions" }}</dt><dd>{s.items}</dd></div>
        </dl>
        {answers.then(|| view! { <p class="small" id="answer-source">{format!("Answers: {}", match s.answer_source.as_deref() {
            Some("reference") | None => "the questions' reference answers".to_string(),
            Some(a) if a.starts_with("answers:") => format!("answer set #{}", a.trim_start_matches("answers:")),
            Some(a) => match a.strip_prefix("imported: ") {
                Some(what) => format!("{what} (imported)"),
                None => a.to_string(),
            },
        })}</p> })}
        {r.imported.clone().map(|j| view! { <ImportedFigures j base=base.clone() standalone/> })}
        <figure class="plot" data-plot="study">
            <div class="svg" role="img" aria-label="Mean score per dimension and question source" inner_html=r.chart_svg.clone()></div>
            {(!standalone).then(|| view! {
                <figcaption class="small"><a href=format!("{base}/chart.svg") download="">"SVG"</a> " · "
                    <a href=format!("{base}/chart.png") download="">"PNG"</a> " · "
                    <a href=format!("{base}/ratings.csv") download="">"All ratings (CSV)"</a> " · "
                    <a href=format!("{base}/report.html") download="">"One HTML file"</a></figcaption>
            })}
        </figure>
        <h2>{if answers { "Per answer source" } else { "Per question source" }}</h2>
        {rows_table(r.by_source.clone(), "Source")}
        <p class="muted small">"The interval is mean ± t(0.975, n − 1) · s / √n over the ratings (each rater's rating of each question counts once; raters who missed an attention check are left out), shown from 3 raters on and clipped to the scale: with fewer raters the spread is one or two people's habits, and a t interval over a handful of ratings runs off the scale."</p>
        <h2>"Per level"</h2>
        {rows_table(r.by_level.clone(), "Level")}
        <h2>"Agreement between raters"</h2>
        <table class="grid" id="study-agreement">
            <thead><tr><th>"Dimension"</th><th class="num symbol">"Fleiss' κ"<Help text=help::KAPPA/></th><th class="num symbol">"Items (κ)"</th><th class="num symbol">"Krippendorff's α (ordinal)"<Help text=help::ALPHA/></th></tr></thead>
            <tbody>
                {r.agreement.iter().map(|(d, k, n, a)| view! {
                    <tr><td>{d.clone()}</td><td class="num">{k.map_or("—".into(), |k| format!("{k:.3}"))}</td><td class="num">{*n}</td>
                        <td class="num">{a.map_or("—".into(), |a| format!("{a:.3}"))}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
        <p class="muted small">"Fleiss' κ needs every item rated by the same number of raters: it is computed over the items with the most common number. Krippendorff's α takes any number per item (two or more)."</p>
        {(!r.category.is_empty()).then(|| view! {
            <h2>"Category agreement with the generator"</h2>
            <table class="grid" id="category-agreement">
                <thead><tr><th>"Questions"</th><th class="num">"Picks"</th><th class="num">"Exact"</th><th class="num">"Chance (exact)"</th>
                    <th class="num">"Exact or parent"</th><th class="num">"Chance (exact or parent)"</th></tr></thead>
                <tbody>
                    {r.category.iter().map(|c| view! {
                        <tr><td>{c.group.clone()}</td><td class="num">{c.picks}</td><td class="num">{pct1(c.exact)}</td>
                            <td class="num muted">{pct1(c.exact_chance)}</td><td class="num">{pct1(c.parent)}</td>
                            <td class="num muted">{pct1(c.parent_chance)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            {r.category_agreement.map(|(k, n, a)| view! {
                <p class="small">{format!("Between raters: Fleiss' κ {} over {n} items, Krippendorff's α (nominal) {}.", opt3(k), opt3(a))}</p>
            })}
            <p class="muted small">"As " <Cite paper=Paper::HieraRag at="§2.5"/> ": a pick agrees exactly when it is the generator's category, and by parent when it shares the generator's parent category (at the coarse level only the exact category counts). Chance is what picking uniformly among the offered categories would give."</p>
        })}
        <h2>"Humans and the LLM"</h2>
        {match r.llm.clone() {
            None => view! { <p class="muted" id="no-llm-rating">"No LLM has rated these items yet."</p> }.into_any(),
            Some(l) => {
                let offline = l.rater.starts_with("offline");
                view! {
                    <p class="small" id="llm-rating">{format!("LLM rater: job #{} ({}, {}/{}) — {}", l.job_id, l.status, l.done, l.total, l.rater)}</p>
                    {offline.then(|| view! { <p class="banner offline small">"These scores come from the offline provider's transparent rules, not from a language model."</p> })}
                    <table class="grid" id="llm-agreement">
                        <thead><tr><th>"Dimension"</th><th class="num">"Items"</th><th class="num symbol">"Cohen's κ (mean over humans)"</th><th class="num">"Humans"</th>
                            <th class="num symbol">"Spearman's ρ (vs. human mean)"</th><th class="num">"Same as the humans' most common"</th></tr></thead>
                        <tbody>
                            {l.rows.iter().map(|a| view! {
                                <tr><td>{a.dimension.clone()}</td><td class="num">{a.items}</td><td class="num">{opt3(a.kappa)}</td>
                                    <td class="num">{a.humans}</td><td class="num">{opt3(a.spearman)}</td><td class="num">{pct1(a.exact)}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    <p class="muted small">"κ is quadratic-weighted on a scale and unweighted on a category pick, between the LLM and each human over the items both rated; ρ compares the LLM's score with the humans' mean score per item."</p>
                }.into_any()
            }
        }}
        {rate.filter(|_| !shared).map(|rate| view! {
            <p><button type="button" id="rate-with-llm" disabled=move || rate.pending().get()
                on:click=move |_| { rate.dispatch(StartStudyRating { id: sid }); }>"Rate these items with the LLM"</button>
                <span class="muted small">" The configured LLM reads each item with the rubric the humans read (a job; its calls are logged)."</span></p>
        })}
        {(!shared).then(|| view! { <crate::components::SharePanel kind=types::ShareKind::Study page_id=sid/> })}
    }
}

/// The import's report line, on the page the import redirected to.
fn imported_notice() -> impl IntoView {
    let query = leptos_router::hooks::use_query_map();
    move || query.read().get("imported").map(|m| view! { <p class="notice" role="status" id="imported-report">{m}</p> })
}

/// An imported study's figures as the authors' scripts compute them,
/// beside the values their output files hold and the standard reading.
#[component]
fn ImportedFigures(j: JudgingImportView, base: String, standalone: bool) -> impl IntoView {
    let full = |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{x:.4}"));
    let diff = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a == b => "0".into(),
        (Some(a), Some(b)) => format!("{:.1e}", (a - b).abs()),
        _ => "—".into(),
    };
    let books = j
        .workbooks
        .iter()
        .zip(&j.rows_per_workbook)
        .map(|(w, n)| format!("{w} ({n} rows)"))
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <section class="panel" id="imported-figures">
            <h2>"The authors' analysis, as published"</h2>
            <p class="small break-anywhere">{format!(
                "From {books}: {} questions both annotators rated (the κ's), {} questions in all (the shares'), {} category picks (category agreement).",
                j.shared, j.questions, j.picks
            )}</p>
            <div class="table-scroll">
            <table class="grid" id="judging-figures">
                <thead><tr><th>"Figure"</th><th class="num">"Assay, as published"</th><th class="num">"The authors' file"</th><th class="num">"Difference"</th>
                    <th class="num">"Standard reading"</th><th>"Computed as"</th></tr></thead>
                <tbody>
                    {j.rows.into_iter().map(|r| view! {
                        <tr data-figure=r.figure.clone()><td class="mono small figure-name">{r.figure.replace('_', "_\u{200b}")}</td><td class="num as-published">{full(r.as_published)}</td>
                            <td class="num authors">{full(r.authors)}</td><td class="num muted">{diff(r.as_published, r.authors)}</td>
                            <td class="num standard">{full(r.standard)}</td><td class="small muted">{r.source}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
            <p class="muted small">"As published: the authors' scripts' own choices (κ pairs the annotators' rows by position after sorting by id and counts an empty score as category 0; the shares are over unique questions; category agreement counts a child of the generator's category as \"hierarchical\"; the Coherence Ratio correlation uses the annotators' agreement with each other). The standard reading: κ over questions every annotator scored, shares over scored rows, the correlation with agreement with the generator. The Coherence Ratios come from "
                <code>"complete_analysis_results.json"</code> " (they need the generated questions' similarities, which the folder lacks). The tables above are Assay's own reading of the same ratings. Why each differs: docs/fidelity.md."</p>
            {(!standalone).then(|| view! { <p class="small"><a href=format!("{base}/judging.csv") download="" id="judging-csv">"These figures (CSV, full precision)"</a></p> })}
        </section>
    }
}

//! `/projects/:id/questions`: generate graph-grounded question sets (a job),
//! import and export sets, browse a set with filters, open a question's
//! provenance (its sampled structure in the graph explorer and its source
//! texts), and edit, delete or add questions by hand.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_navigate, use_query_map};
use types::EntitySource;

use crate::api::jobs::latest_jobs;
use crate::api::projects::get_project;
use crate::api::questions::{
    get_question_hierarchy, get_question_provenance, list_question_sets, list_set_questions, question_set_entities,
    question_set_relevance, AddQuestion, DeleteQuestion, DeleteQuestionSet, EditQuestion, PlanGraphQuestions,
    PlanHierarchicalQuestions, PlanSummaryQuestions, SaveQuestionHierarchy, StartGraphQuestions,
    StartHierarchicalQuestions, StartMentions, StartRelevance, StartSummaryQuestions,
};
use crate::api::settings::get_llm_info;
use crate::components::help::{Cite, Paper};
use crate::components::jobs::{live_ticks, LatestJob, Watch};
use crate::components::route_id;
use crate::components::{ActionError, ConfirmDelete, ErrorNote, NoCacheBox, Pager, ProjectBar, SourceText};
use crate::format;
use crate::model::{QuestionSetView, QuestionView};
use types::{defaults, CallProvider, QuestionSetKind};

fn counts_text(s: &QuestionSetView) -> String {
    s.counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(" · ")
}

fn made_by(s: &QuestionSetView) -> String {
    match (s.kind, s.provider) {
        (QuestionSetKind::Imported, _) => "imported from a file".into(),
        (_, Some(CallProvider::Offline)) => {
            "offline provider: template questions, not written by a language model".into()
        }
        (_, Some(p)) => p.label(&s.model.clone().unwrap_or_default()),
        (_, None) => "not written yet: no call logged".into(),
    }
}

#[component]
pub fn QuestionsPage() -> impl IntoView {
    let id = route_id("id");
    let query = use_query_map();
    let project = Resource::new(move || id.get(), get_project);
    let llm = Resource::new(|| (), |_| get_llm_info());
    let generate = ServerAction::<StartGraphQuestions>::new();
    let baseline = ServerAction::<StartSummaryQuestions>::new();
    let hierarchical = ServerAction::<StartHierarchicalQuestions>::new();
    let delete_set = ServerAction::<DeleteQuestionSet>::new();
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(id.get()));
    let jobs = Resource::new(
        move || {
            (id.get(), tick.get(), generate.version().get(), baseline.version().get(), hierarchical.version().get())
        },
        |(id, ..)| latest_jobs(id),
    );
    let finished = RwSignal::new(0u64);
    let sets = Resource::new(
        move || (id.get(), finished.get(), delete_set.version().get()),
        |(id, _, _)| list_question_sets(id),
    );
    let chosen = Memo::new(move |_| query.read().get("set").and_then(|s| s.parse::<i64>().ok()));
    let import_error = Memo::new(move |_| query.read().get("import_error"));
    let imported = Memo::new(move |_| query.read().get("imported"));

    view! {
        <Title text="Questions"/>
        <ProjectBar project_id=id.get_untracked() project active="questions"/>
        <main class="page wide">
            <h1>"Questions"</h1>
            <LatestJob project_id=id.get_untracked() kind=crate::model::JobKind::Questions label="Questions" dom_id="questions-job" jobs live finished/>
            <h2>"Question sets"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let list = match sets.await {
                        Ok(l) => l,
                        Err(e) => return view! { <ErrorNote error=e/> }.into_any(),
                    };
                    if list.is_empty() {
                        return view! { <p class="muted" id="no-sets">"No question sets yet. Generate one from the graph, or import one."</p> }.into_any();
                    }
                    let project_id = id.get_untracked();
                    // Tracked: choosing another set (the URL's `?set=`) redraws the list.
                    let selected = chosen.get().or(list.last().map(|s| s.id));
                    view! {
                        <table class="grid sets">
                            <thead><tr><th>"Set"</th><th class="num">"Questions"</th><th>"By level or category"</th><th>"Made by"</th><th>"Created"</th><th></th></tr></thead>
                            <tbody>
                                {list.into_iter().map(|s| {
                                    let set_id = s.id;
                                    let class = if Some(s.id) == selected { "selected" } else { "" };
                                    view! {
                                        <tr data-set=s.id class=class>
                                            <td><a href=format!("/projects/{project_id}/questions?set={}", s.id)>{s.name.clone()}</a>
                                                <span class="badge">{s.kind.as_str()}</span></td>
                                            <td class="num">{format::int(s.questions)}</td>
                                            <td>{counts_text(&s)}</td>
                                            <td class="small">{made_by(&s)}
                                                {s.job_id.map(|j| view! { " · " <a href=format!("/projects/{project_id}/jobs/{j}")>{format!("job #{j}")}</a> })}</td>
                                            <td class="muted">{format::timestamp(&s.created_at)}</td>
                                            <td class="actions">
                                                <a href=format!("/api/projects/{project_id}/questions/{}/export?format=jsonl", s.id) download="">"JSONL"</a> " "
                                                <a href=format!("/api/projects/{project_id}/questions/{}/export?format=csv", s.id) download="">"CSV"</a> " "
                                                <a href=format!("/api/projects/{project_id}/questions/{}/export?format=lightrag", s.id) download=""
                                                    title="The \"- Question N: …\" lines LightRAG's reproduce/ scripts read">"LightRAG"</a> " "
                                                <ConfirmDelete prompt=format!("Delete the set and its {} questions?", s.questions)
                                                    on_confirm=move |_| { delete_set.dispatch(DeleteQuestionSet { set_id }); }/>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                })}
            </Transition>
            <ActionError action=delete_set/>
            <h2 class="section-head">"New question set"</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let info = llm.await.ok();
                    let none_yet = sets.await.map(|s| s.is_empty()).unwrap_or(false);
                    view! { <GenerateForm project_id=id.get_untracked() action=generate open=none_yet llm=info.map(|l| (l.provider, l.label))/> }
                })}
            </Transition>
            <ActionError action=generate/>
            <BaselineForm project_id=id.get_untracked() action=baseline/>
            <ActionError action=baseline/>
            <HierarchicalForm project_id=id.get_untracked() action=hierarchical/>
            <ActionError action=hierarchical/>
            <details class="panel" open=move || import_error.get().is_some() || imported.get().is_some()>
                <summary>"Import a set or a benchmark (.jsonl, .json or .csv)"</summary>
                <form method="post" enctype="multipart/form-data" class="inline-form import-form" id="import-form"
                    action=move || format!("/api/projects/{}/questions/import", id.get())>
                    <label>"Format "
                        <select name="format" id="import-format">
                            <option value="assay">"Assay's own export"</option>
                            {engine_formats().into_iter().map(|(value, label)| view! { <option value=value>{label}</option> }).collect_view()}
                        </select>
                    </label>
                    <label>"Questions " <input type="file" name="file" accept=".jsonl,.ndjson,.json,.csv,.tsv" required/></label>
                    <label>"Corpus " <input type="file" name="corpus" accept=".jsonl,.ndjson,.json,.csv,.tsv"/></label>
                    <label>"Columns " <input type="text" name="columns" placeholder="question=Query,reference=Gold"/></label>
                    <label>"Name " <input type="text" name="name" placeholder="(the file's name)"/></label>
                    <button type="submit">"Import"</button>
                    <p class="muted small">"Assay's export: only " <code>"question"</code> " is required. A benchmark brings its corpus: "
                        "UltraDomain's JSONL holds both; GraphRAG-Bench and MultiHop-RAG need their corpus file; a table names its columns "
                        "(question, answer, category, evidence, context or document). Documents the project lacks are added; "
                        "each question's evidence, or its gold documents, become its source chunks for MAP, nDCG and Recall. "
                        "The formats: docs/bring-your-own-system.md, \"Benchmark files\"."</p>
                </form>
                {move || imported.get().map(|m| view! { <p class="notice" role="status" id="import-report">{m}</p> })}
                {move || import_error.get().map(|e| view! { <p class="error" role="alert" id="import-error">{e}</p> })}
            </details>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let list = sets.await.unwrap_or_default();
                    let project_id = id.get_untracked();
                    let selected = chosen.get().or(list.last().map(|s| s.id));
                    let current = list.iter().find(|s| Some(s.id) == selected).cloned();
                    let list_for_compare: Vec<(i64, String, QuestionSetKind)> =
                        list.iter().map(|s| (s.id, s.name.clone(), s.kind)).collect();
                    view! {
                        <Compare project_id sets=list_for_compare/>
                        {current.map(|s| view! { <SetView project_id set=s/> })}
                    }
                })}
            </Transition>
        </main>
    }
}

/// The benchmark formats an import reads (`engine::datasets::Format`; the
/// page is compiled for the browser too, where the engine is absent).
fn engine_formats() -> Vec<(&'static str, &'static str)> {
    vec![
        ("ultradomain", "UltraDomain JSONL (LightRAG's evaluation data)"),
        ("graphrag-bench", "GraphRAG-Bench questions + corpus"),
        ("multihop-rag", "MultiHop-RAG queries + corpus"),
        ("table", "CSV or JSONL with named columns"),
    ]
}

/// Two sets side by side: the entities their questions mention (seed 000
/// Fig. 9) — the graph's names matched, or listed by the LLM — and the
/// relevance of retrieved context (Fig. 10).
#[component]
fn Compare(project_id: i64, sets: Vec<(i64, String, QuestionSetKind)>) -> impl IntoView {
    if sets.is_empty() {
        return ().into_any();
    }
    // By default a graph set against a summary-based one, when there are both.
    let first = sets.iter().find(|s| s.2 == QuestionSetKind::Graph).or(sets.first()).map(|s| s.0).unwrap_or(0);
    let second = sets
        .iter()
        .find(|s| s.2 == QuestionSetKind::Summary)
        .or(sets.iter().find(|s| s.0 != first))
        .map_or(first, |s| s.0);
    let a = RwSignal::new(first);
    let b = RwSignal::new(second);
    let source = RwSignal::new(EntitySource::Graph);
    let options = move |chosen: RwSignal<i64>| {
        sets.iter()
            .map(|(id, name, _)| {
                let id = *id;
                view! { <option value=id.to_string() selected=move || chosen.get() == id>{name.clone()}</option> }
            })
            .collect_view()
    };
    let (oa, ob) = (options(a), options(b));
    // Counted and drawn when the panel is opened, not with every page.
    let opened = RwSignal::new(false);
    let pick = move |value: EntitySource, label: &'static str| {
        view! {
            <label><input type="radio" name="entity-source" value=value.as_str() prop:checked=move || source.get() == value
                on:change=move |_| source.set(value)/>" "{label}</label>
        }
    };
    view! {
        <details class="panel compare" id="compare-sets">
            <summary on:click=move |_| opened.set(true)>"Compare two sets: entities mentioned, retrieval relevance"</summary>
            <div class="inline-form">
                <label>"Set A " <select id="compare-a" on:change=move |ev| a.set(event_target_value(&ev).parse().unwrap_or(0))>{oa}</select></label>
                <label>"Set B " <select id="compare-b" on:change=move |ev| b.set(event_target_value(&ev).parse().unwrap_or(0))>{ob}</select></label>
            </div>
            <fieldset class="inline-form entity-source">
                <legend>"Entities"</legend>
                {pick(EntitySource::Graph, "the graph's entity names, matched in the questions")}
                {pick(EntitySource::Llm, "listed per question by the LLM (a job)")}
            </fieldset>
            <Show when=move || opened.get()>
                <div class="compare-grid">
                    {move || view! { <EntityPanel project_id set_id=a.get() source=source.get()/> }}
                    {move || view! { <EntityPanel project_id set_id=b.get() source=source.get()/> }}
                </div>
            </Show>
        </details>
    }
    .into_any()
}

#[component]
fn EntityPanel(project_id: i64, set_id: i64, source: EntitySource) -> impl IntoView {
    let start = ServerAction::<StartMentions>::new();
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(project_id));
    let stats =
        Resource::new(move || (tick.get(), start.version().get()), move |_| question_set_entities(set_id, source));
    let svg = format!("/api/projects/{project_id}/questions/{set_id}/entities.svg?source={source}");
    view! {
        <div class="entity-panel" data-set=set_id data-source=source.as_str()>
            <Transition fallback=|| view! { <p class="muted">"Counting entities…"</p> }>
                {move || {
                    let svg = svg.clone();
                    Suspend::new(async move {
                        match stats.await {
                            Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                            Ok(None) => {
                                live.set(start.pending().get_untracked() || start.value().get_untracked().is_some_and(|r| r.is_ok()));
                                view! {
                                    <button type="button" class="list-entities" disabled=move || start.pending().get()
                                        on:click=move |_| { start.dispatch(StartMentions { set_id }); }>
                                        "List each question's entities with the LLM"</button>
                                }.into_any()
                            }
                            Ok(Some(s)) => {
                                live.set(s.covered < s.questions && s.job_id.is_some());
                                let svg = format!("{svg}&n={}", s.covered);
                                let by = match (s.job_id, s.made_by.clone()) {
                                    (Some(job), who) => view! {
                                        " · listed by "{who.unwrap_or_else(|| "—".into())}" in "
                                        <a href=format!("/projects/{project_id}/jobs/{job}")>{format!("job #{job}")}</a>
                                        {format!(" ({} of {} questions)", s.covered, s.questions)}
                                    }.into_any(),
                                    (None, _) => ().into_any(),
                                };
                                view! {
                                    <p class="entity-stats"><strong class="distinct">{s.distinct}</strong>" distinct entities"
                                        {(s.source == EntitySource::Llm).then(|| format!(" ({} in the graph)", s.in_graph))}" · "
                                        {format!("{} of {} questions name one · the most named takes {:.0}%",
                                            s.with_entity, s.covered, s.top_share * 100.0)}{by}</p>
                                    <img src=svg.clone() alt=format!("Entities mentioned by {}", s.set_name) width="100%"/>
                                    <p class="small"><a href=svg download=format!("entities-set-{set_id}-{}.svg", s.source)>"Download SVG"</a></p>
                                }.into_any()
                            }
                        }
                    })
                }}
            </Transition>
            <ActionError action=start/>
            // Not inside the Transition above: a resource made while another
            // resolves does not hydrate.
            <Relevance project_id set_id/>
        </div>
    }
}

/// A set's question–retrieval relevance (Fig. 10): scored on demand (a
/// job), then its histogram.
#[component]
fn Relevance(project_id: i64, set_id: i64) -> impl IntoView {
    let start = ServerAction::<StartRelevance>::new();
    let retriever = RwSignal::new("fastgraphrag".to_string());
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(project_id));
    let stats = Resource::new(move || (tick.get(), start.version().get()), move |_| question_set_relevance(set_id));
    view! {
        <div class="relevance" data-set=set_id>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match stats.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(None) => {
                            live.set(start.pending().get_untracked() || start.value().get_untracked().is_some_and(|r| r.is_ok()));
                            view! {
                                <label class="small">"Retrieval by "
                                    <select class="relevance-retriever" on:change=move |ev| retriever.set(event_target_value(&ev))>
                                        <option value="fastgraphrag" selected>"FastGraphRAG (the paper's)"</option>
                                        <option value="lightrag">"LightRAG"</option>
                                        <option value="graphrag-local">"GraphRAG local"</option>
                                        <option value="bm25">"BM25, 5 chunks"</option>
                                    </select>
                                </label>
                                " "
                                <button type="button" class="score-relevance" disabled=move || start.pending().get()
                                    on:click=move |_| { start.dispatch(StartRelevance { set_id, k: 5, retriever: Some(retriever.get_untracked()) }); }>
                                    "Score question–retrieval relevance"</button>
                            }.into_any()
                        }
                        Ok(Some(r)) => {
                            live.set(r.scored < r.questions);
                            let svg = format!("/api/projects/{project_id}/questions/{set_id}/relevance.svg?n={}", r.scored);
                            view! {
                                <p class="relevance-stats">{format!("Relevance of the {} context: mean {:.2} of 5 over {} of {} questions",
                                    r.retriever, r.mean, r.scored, r.questions)}
                                    {r.made_by.clone().map(|w| format!(" · scored by {w}"))}" · "
                                    <a href=format!("/projects/{project_id}/jobs/{}", r.job_id)>{format!("job #{}", r.job_id)}</a></p>
                                <img src=svg.clone() alt="Relevance scores" width="100%"/>
                                <p class="small"><a href=svg download=format!("relevance-set-{set_id}.svg")>"Download SVG"</a></p>
                            }.into_any()
                        }
                    }
                })}
            </Transition>
            <ActionError action=start/>
        </div>
    }
}

/// What the question forms' prices rest on.
const QUESTIONS_PRICE_NOTE: &str = "Calls: one per question (the summary baseline: one in all); a subgraph's chunks are each summarised once, for every later question to read. Prompts: the project's chunks and each prompt template; replies of a question's length. Nothing has been sent.";

/// A default list as a form's comma-separated text.
fn list<T: ToString>(items: &[T]) -> String {
    items.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

#[component]
fn GenerateForm(
    project_id: i64,
    action: ServerAction<StartGraphQuestions>,
    open: bool,
    llm: Option<(types::ProviderKind, String)>,
) -> impl IntoView {
    let (plan, form, replan) = crate::pages::evaluations::priced::<PlanGraphQuestions>();
    view! {
        <details class="panel build-panel" open=open>
            <summary>"Generate graph-grounded questions"</summary>
            <p class="muted small">"Node level: an entity with its description and source text. Edge level: a relation, for an inferential question. Subgraph level: a random walk covering at least the minimum number of distinct hops; the chunks behind it are summarised first (" <Cite paper=Paper::Unbiased at="§III-A, Question Generation"/> ")."</p>
            {llm.map(|(provider, label)| view! {
                <p class="llm-line">"LLM: " <strong class=format!("provider-{provider}")>{label}</strong>
                    {(provider == types::ProviderKind::Offline).then(|| view! { <span class="muted">" — template questions from the sampled structures; set a model in Settings for LLM-written ones"</span> })}
                </p>
            })}
            <div on:input=move |_| replan() on:change=move |_| replan()>
            <ActionForm action node_ref=form attr:class="stack-form" attr:id="generate-form">
                <input type="hidden" name="project_id" value=project_id/>
                <div class="row-fields">
                    <label>"Node " <input type="number" name="req[node]" required value=defaults::QUESTIONS_PER_LEVEL.to_string() min="0" max="10000"/></label>
                    <label>"Edge " <input type="number" name="req[edge]" required value=defaults::QUESTIONS_PER_LEVEL.to_string() min="0" max="10000"/></label>
                    <label>"Subgraph " <input type="number" name="req[subgraph]" required value=defaults::QUESTIONS_PER_LEVEL.to_string() min="0" max="10000"/></label>
                    <label>"Minimum hops " <input type="number" name="req[min_hops]" required value=defaults::MIN_HOPS.to_string() min="1" max="100000"/></label>
                    <label>"Seed " <input type="number" name="req[seed]" required value=defaults::QUESTION_SEED.to_string() min="0"/></label>
                </div>
                <label class="muted"><input type="checkbox" name="req[degree_weighted]" value="true"/>" sample entities by degree (default: uniformly)"</label>
                <NoCacheBox/>
                {crate::pages::evaluations::price_view(plan, "graph-questions-price", QUESTIONS_PRICE_NOTE)}
                <div><button type="submit" id="generate-questions" disabled=move || action.pending().get()>"Generate"</button></div>
            </ActionForm>
            </div>
        </details>
    }
}

#[component]
fn BaselineForm(project_id: i64, action: ServerAction<StartSummaryQuestions>) -> impl IntoView {
    let (plan, form, replan) = crate::pages::evaluations::priced::<PlanSummaryQuestions>();
    view! {
        <details class="panel build-panel">
            <summary>"Generate the summary-based baseline"</summary>
            <p class="muted small">"What LightRAG and MGRAG evaluated with: the first and last GPT-2 tokens of every document make a dataset description; one call proposes users × tasks × questions (LightRAG's reproduce/Step_2 prompt). For comparison with the graph-grounded sets."</p>
            <div on:input=move |_| replan() on:change=move |_| replan()>
            <ActionForm action node_ref=form attr:class="stack-form" attr:id="baseline-form">
                <input type="hidden" name="project_id" value=project_id/>
                <div class="row-fields">
                    <label>"Users " <input type="number" name="req[users]" required value=defaults::SUMMARY_USERS.to_string() min="1" max="20"/></label>
                    <label>"Tasks per user " <input type="number" name="req[tasks]" required value=defaults::SUMMARY_TASKS.to_string() min="1" max="20"/></label>
                    <label>"Questions per task " <input type="number" name="req[per_task]" required value=defaults::SUMMARY_PER_TASK.to_string() min="1" max="20"/></label>
                    <label>"Head tokens " <input type="number" name="req[head]" required value=defaults::SUMMARY_HEAD.to_string() min="0" max="100000"/></label>
                    <label>"Tail tokens " <input type="number" name="req[tail]" required value=defaults::SUMMARY_TAIL.to_string() min="0" max="100000"/></label>
                    <label>"Exactly " <input type="number" name="req[count]" value="" min="1" max="2000" placeholder="users × tasks × questions" id="baseline-count"/>" questions"</label>
                </div>
                <p class="muted small">"With an exact count (the paper compared 150 with 150), enough are asked per task to reach it and the count is kept, taken in turn from every user's tasks."</p>
                <label class="muted"><input type="checkbox" name="req[replicate_lightrag]" value="true"/>
                    " replicate LightRAG exactly, including its slicing bug (issue #1203: documents of 3,000+ tokens lose their tail)"</label>
                <NoCacheBox/>
                {crate::pages::evaluations::price_view(plan, "baseline-price", QUESTIONS_PRICE_NOTE)}
                <div><button type="submit" id="generate-baseline" disabled=move || action.pending().get()>"Generate"</button></div>
            </ActionForm>
            </div>
        </details>
    }
}

#[component]
fn HierarchicalForm(project_id: i64, action: ServerAction<StartHierarchicalQuestions>) -> impl IntoView {
    let (plan, form, replan) = crate::pages::evaluations::priced::<PlanHierarchicalQuestions>();
    view! {
        <details class="panel build-panel">
            <summary>"Generate questions with reference answers in hierarchical categories"</summary>
            <p class="muted small">"As " <Cite paper=Paper::HieraRag at="§2.2, Synthetic Question Generation"/> ": Question Complexity, Answer Type and Linguistic Variation, each at 2, 4 and 8 categories (fine inside medium inside coarse). Each question comes from a chunk drawn at random, for a novice or an expert (50/50), with a reference answer. The optional adherence check asks whether each pair fits its category and drops misfits."</p>
            <div on:input=move |_| replan() on:change=move |_| replan()>
            <ActionForm action node_ref=form attr:class="stack-form" attr:id="hierarchical-form">
                <input type="hidden" name="project_id" value=project_id/>
                <div class="row-fields">
                    <label>"Per category " <input type="number" name="req[per_category]" value=defaults::MIN_PER_CATEGORY.to_string() min="0" max="1000" title="38: the HieraRAG paper's scale, needed to compare levels; fewer for a pilot"/></label>
                    <label>"Levels " <input type="text" name="req[levels]" required value=list(&defaults::LEVELS) size="8"/></label>
                    <label>"Dimensions " <input type="text" name="req[dimensions]" required value=list(&defaults::DIMENSIONS) size="10"/></label>
                    <label>"LV × QC factorial, per cell " <input type="number" name="req[factorial]" required value="0" min="0" max="10000"/></label>
                    <label>"Seed " <input type="number" name="req[seed]" required value=defaults::QUESTION_SEED.to_string() min="0"/></label>
                </div>
                <label class="muted"><input type="checkbox" name="req[adherence_check]" value="true"/>" adherence check (one more call per question)"</label>
                <NoCacheBox/>
                {crate::pages::evaluations::price_view(plan, "hierarchical-price", QUESTIONS_PRICE_NOTE)}
                <div><button type="submit" id="generate-hierarchical" disabled=move || action.pending().get()>"Generate"</button></div>
            </ActionForm>
            </div>
            <HierarchyEditor project_id/>
        </details>
    }
}

/// The project's category hierarchy as JSON, editable; checked on save
/// (2 coarse, 4 medium, 8 fine per dimension, names unique, definitions set).
#[component]
fn HierarchyEditor(project_id: i64) -> impl IntoView {
    let save = ServerAction::<SaveQuestionHierarchy>::new();
    // Read again after a save that landed, not after a refused one: that
    // would put the stored hierarchy back in the box over the text the
    // user is mending (and over anything typed while it loaded).
    let saved = RwSignal::new(0u32);
    Effect::new(move |_| {
        if matches!(save.value().get(), Some(Ok(()))) {
            saved.update(|n| *n += 1);
        }
    });
    let current = Resource::new(move || saved.get(), move |_| get_question_hierarchy(project_id));
    view! {
        <details class="hierarchy-editor">
            <summary>"Edit the category hierarchy (JSON)"</summary>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match current.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok((json, own)) => view! {
                            <p class="muted small" id="hierarchy-status">{if own { "This project's own hierarchy." } else { "The shipped default (the HieraRAG paper's names where it gives them)." }}</p>
                            <ActionForm action=save attr:class="stack-form" attr:id="hierarchy-form">
                                <input type="hidden" name="project_id" value=project_id/>
                                <textarea name="json" rows="16" spellcheck="false" class="mono" prop:value=json.clone()>{json.clone()}</textarea>
                                <div class="actions-row">
                                    <button type="submit">"Save"</button>
                                    <button type="submit" name="reset" value="on" class="link">"Reset to the default"</button>
                                </div>
                            </ActionForm>
                        }.into_any(),
                    }
                })}
            </Transition>
            {move || match save.value().get() {
                Some(Ok(())) => Some(view! { <p class="ok-note" role="status">"Saved."</p> }.into_any()),
                Some(Err(e)) => Some(view! { <ErrorNote error=e/> }.into_any()),
                None => None,
            }}
        </details>
    }
}

/// One set: filters, a page of its questions (the set, page, level and
/// search in the address: `?set=N&page=P&level=L&q=…`), and a form to add
/// one.
#[component]
fn SetView(project_id: i64, set: QuestionSetView) -> impl IntoView {
    let set_id = set.id;
    let query = use_query_map();
    let navigate = use_navigate();
    let edit = ServerAction::<EditQuestion>::new();
    let delete = ServerAction::<DeleteQuestion>::new();
    let add = ServerAction::<AddQuestion>::new();
    let page = Memo::new(move |_| query.read().get("page").and_then(|p| p.parse::<i64>().ok()).unwrap_or(1));
    let level = Memo::new(move |_| query.read().get("level").unwrap_or_default());
    let search = Memo::new(move |_| query.read().get("q").unwrap_or_default());
    let questions = Resource::new(
        move || {
            (page.get(), level.get(), search.get(), edit.version().get(), delete.version().get(), add.version().get())
        },
        move |(page, level, search, ..)| {
            list_set_questions(
                set_id,
                page,
                (!level.is_empty()).then_some(level),
                (!search.is_empty()).then_some(search),
            )
        },
    );
    let address = move |page: i64, level: &str, search: &str| {
        let mut q = vec![format!("set={set_id}")];
        if !level.is_empty() {
            q.push(format!("level={}", format::query_value(level)));
        }
        if !search.is_empty() {
            q.push(format!("q={}", format::query_value(search)));
        }
        if page > 1 {
            q.push(format!("page={page}"));
        }
        format!("/projects/{project_id}/questions?{}", q.join("&"))
    };
    // A filter changed: its first page, the address replaced (not a new
    // history entry per keystroke).
    let refilter = move |level: String, search: String| {
        let options = leptos_router::NavigateOptions { replace: true, scroll: false, ..Default::default() };
        navigate(&address(1, &level, &search), options);
    };
    let on_level = refilter.clone();
    let open = RwSignal::new(None::<i64>);
    let levels: Vec<String> = set.counts.iter().map(|(k, _)| k.clone()).collect();
    // Who wrote the questions from their passages, as the provenance says it.
    let writer = match set.provider {
        Some(CallProvider::Offline) => "the offline templates",
        Some(_) => "the LLM",
        None => "the question writer",
    };
    view! {
        <section class="set-view" id="set-view" data-set=set.id>
            <h2>{set.name.clone()}</h2>
            <div class="inline-form filters">
                <label>"Level " <select id="level-filter" on:change=move |ev| on_level(event_target_value(&ev), search.get_untracked())>
                    <option value="">"all"</option>
                    {levels.into_iter().map(|l| {
                        let value = l.clone();
                        view! { <option value=l.clone() selected=move || level.get() == value>{l.clone()}</option> }
                    }).collect_view()}
                </select></label>
                <input type="search" id="question-search" placeholder="Search the questions…" aria-label="Search the questions"
                    prop:value=move || search.get()
                    on:input=move |ev| refilter(level.get_untracked(), event_target_value(&ev))/>
            </div>
            <Transition fallback=|| view! { <p class="muted">"Loading questions…"</p> }>
                {move || Suspend::new(async move {
                    let p = match questions.await {
                        Ok(q) => q,
                        Err(e) => return view! { <ErrorNote error=e/> }.into_any(),
                    };
                    let (lv, q) = (level.get_untracked(), search.get_untracked());
                    let count = p.questions.len();
                    view! {
                        {if p.questions.is_empty() {
                            view! { <p class="muted" id="no-questions">"No question matches."</p> }.into_any()
                        } else {
                            view! {
                                <table class="grid questions">
                                    <thead><tr><th class="num">"ID"</th><th>"Level"</th><th>"Question"</th><th>"Generator"</th><th></th></tr></thead>
                                    <tbody>
                                        {p.questions.into_iter().map(|q| view! { <QuestionRow project_id q open edit delete writer/> }).collect_view()}
                                    </tbody>
                                </table>
                            }.into_any()
                        }}
                        <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::QUESTIONS_PER_PAGE count
                            href=move |n| address(n, &lv, &q) id="question-pager" label="Pages of questions"/>
                    }.into_any()
                })}
            </Transition>
            <ActionError action=edit/>
            <ActionError action=delete/>
            <details class="panel">
                <summary>"Add a question by hand"</summary>
                <ActionForm action=add attr:class="stack-form" attr:id="add-question-form">
                    <input type="hidden" name="set_id" value=set_id/>
                    <label>"Question " <input type="text" name="question" size="80" required/></label>
                    <label>"Level or category " <input type="text" name="level" size="20" placeholder="optional"/></label>
                    <label>"Reference answer " <input type="text" name="reference_answer" size="80" placeholder="optional"/></label>
                    <div><button type="submit">"Add"</button></div>
                </ActionForm>
                <ActionError action=add/>
            </details>
            <crate::components::SharePanel kind=types::ShareKind::Questions page_id=set_id/>
        </section>
    }
}

#[component]
fn QuestionRow(
    project_id: i64,
    q: QuestionView,
    open: RwSignal<Option<i64>>,
    edit: ServerAction<EditQuestion>,
    delete: ServerAction<DeleteQuestion>,
    writer: &'static str,
) -> impl IntoView {
    let qid = q.id;
    let editing = RwSignal::new(false);
    let draft = RwSignal::new(q.question.clone());
    let is_open = move || open.get() == Some(qid);
    let text = q.question.clone();
    view! {
        <tr data-question=qid class:open=is_open>
            <td class="num">{qid}</td>
            <td><span class="badge">{q.level.clone().or(q.category.clone()).unwrap_or_else(|| "–".into())}</span></td>
            <td class="question-text">
                <Show when=move || editing.get() fallback=move || text.clone()>
                    <input type="text" class="edit-question" size="80" prop:value=move || draft.get()
                        on:input=move |ev| draft.set(event_target_value(&ev))/>
                    <button type="button" on:click=move |_| { edit.dispatch(EditQuestion { question_id: qid, text: draft.get_untracked() }); editing.set(false); }>"Save"</button>
                    <button type="button" class="link" on:click=move |_| editing.set(false)>"Cancel"</button>
                </Show>
            </td>
            <td class="small muted">{q.generator.to_string()}</td>
            <td class="actions">
                <button type="button" class="link provenance-toggle" on:click=move |_| open.set(if is_open() { None } else { Some(qid) })>
                    {move || if is_open() { "Hide" } else { "Provenance" }}
                </button>
                <button type="button" class="link" on:click=move |_| editing.set(true)>"Edit"</button>
                <ConfirmDelete prompt="Delete this question?" on_confirm=move |_| { delete.dispatch(DeleteQuestion { question_id: qid }); }/>
            </td>
        </tr>
        <Show when=is_open>
            <tr class="provenance-row"><td colspan="5"><Provenance project_id question_id=qid writer/></td></tr>
        </Show>
    }
}

#[component]
fn Provenance(project_id: i64, question_id: i64, writer: &'static str) -> impl IntoView {
    let p = Resource::new(move || question_id, get_question_provenance);
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading provenance…"</p> }>
            {move || Suspend::new(async move {
                let p = match p.await {
                    Ok(p) => p,
                    Err(e) => return view! { <ErrorNote error=e/> }.into_any(),
                };
                let ids: Vec<String> = p.nodes.iter().map(|n| n.id.to_string()).collect();
                // Selected in the graph: the question's anchor — where its
                // walk starts, its relation's source, or its entity.
                let q0 = &p.question;
                let anchor_key = q0.walk.first().or(q0.edges.first().map(|e| &e.0)).or(q0.nodes.first());
                let present: Vec<&String> = q0.nodes.iter().filter(|k| !p.missing.contains(k)).collect();
                let anchor = anchor_key
                    .and_then(|k| present.iter().position(|x| *x == k))
                    .and_then(|i| p.nodes.get(i))
                    .or(p.nodes.first())
                    .map(|n| (n.id, n.name.clone()));
                let graph_link = format!(
                    "/projects/{project_id}/graph?highlight={}{}",
                    ids.join(","),
                    anchor.as_ref().map(|(f, _)| format!("&node={f}")).unwrap_or_default()
                );
                let anchor_name = anchor.map(|(_, name)| name);
                let q = p.question.clone();
                view! {
                    <div class="provenance" data-question=question_id>
                        <p class="small">
                            {format!("{} entit{}", p.nodes.len(), if p.nodes.len() == 1 { "y" } else { "ies" })}
                            {(!q.edges.is_empty()).then(|| format!(", {} relation{}", q.edges.len(), if q.edges.len() == 1 { "" } else { "s" }))}
                            {(!q.walk.is_empty()).then(|| format!(", a walk of {} steps", q.walk.len().saturating_sub(1)))}
                            {q.seed.map(|s| format!(" · seed {s}"))}
                            {q.prompt_hash.clone().map(|h| view! { " · prompt " <code>{h[..12.min(h.len())].to_string()}</code> })}
                            " · "
                            {(!ids.is_empty()).then(|| view! { <a class="graph-link" href=graph_link>"Show in the graph"</a>
                                {anchor_name.map(|n| view! { <span class="muted small">{format!(" (selected: {n}, where the question starts)")}</span> })} })}
                        </p>
                        <p class="chips">{p.nodes.iter().map(|n| view! {
                            <a class="chip" href=format!("/projects/{project_id}/graph?node={}", n.id)>{n.name.clone()}</a>
                        }).collect_view()}</p>
                        {(!p.missing.is_empty()).then(|| view! {
                            <p class="muted small">{format!("Not in the current graph (rebuilt since?): {}", p.missing.join(", "))}</p>
                        })}
                        {q.category.clone().map(|c| view! {
                            <p class="small">"Category: " <code>{c}</code>
                                {q.expertise.clone().map(|e| format!(" · for a {e} user"))}</p>
                        })}
                        {q.reference_answer.clone().map(|a| view! { <p class="reference-answer"><strong>"Reference answer: "</strong>{a}</p> })}
                        <p class="small muted context-note">{match &q.context_chunk_ids {
                            Some(c) => format!(
                                "Passages given to {writer}: {} of the {} source chunk{} (chunks {}), drawn across all of them.",
                                c.len(),
                                q.source_chunk_ids.len(),
                                if q.source_chunk_ids.len() == 1 { "" } else { "s" },
                                c.iter().take(20).map(i64::to_string).collect::<Vec<_>>().join(", ")
                                    + if c.len() > 20 { ", …" } else { "" }
                            ),
                            None => format!("Source chunks: {} (which were given to {writer} was not recorded).", q.source_chunk_ids.len()),
                        }}</p>
                        <SourceText project_id sources=p.sources/>
                    </div>
                }.into_any()
            })}
        </Transition>
    }
}

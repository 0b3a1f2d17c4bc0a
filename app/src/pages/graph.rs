//! `/projects/:id/graph`: the knowledge graph — build it (a job), its
//! statistics, and the explorer.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::graph::{get_graph_overview, PlanGraphBuild, StartGraphBuild};
use crate::api::jobs::latest_jobs;
use crate::api::projects::get_project;
use crate::api::settings::get_llm_info;
use crate::components::explorer::{GraphExplorer, GraphSource};
use crate::components::help::{text as help, Help};
use crate::components::jobs::{live_ticks, LatestJob, Watch};
use crate::components::route_id;
use crate::components::{ActionError, ErrorNote, NoCacheBox, ProjectBar};
use crate::format;
use crate::model::GraphOverview;

#[component]
pub fn GraphPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let llm = Resource::new(|| (), |_| get_llm_info());
    let build = ServerAction::<StartGraphBuild>::new();
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(id.get()));
    let jobs = Resource::new(move || (id.get(), tick.get(), build.version().get()), |(id, _, _)| latest_jobs(id));
    // The graph is reloaded when a graph job finishes.
    let finished = RwSignal::new(0u64);
    let overview = Resource::new(move || (id.get(), finished.get()), |(id, _)| get_graph_overview(id));
    let query = leptos_router::hooks::use_query_map();
    let import_error = Memo::new(move |_| query.read().get("import_error"));

    view! {
        <Title text="Graph"/>
        <ProjectBar project_id=id.get_untracked() project active="graph"/>
        <main class="page wide">
            <h1>"Knowledge graph"</h1>
            <LatestJob project_id=id.get_untracked() kind=crate::model::JobKind::Graph label="Graph" dom_id="graph-job" jobs live finished/>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let info = llm.await.ok();
                    match overview.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(None) => view! {
                            <div class="empty" id="no-graph">
                                <p><strong>"No graph yet."</strong></p>
                                {if project.await.is_ok_and(|p| p.summary.documents == 0) {
                                    view! { <p class="muted">"The corpus is empty: add documents on the " <a href=format!("/projects/{}/corpus", id.get_untracked())>"Corpus"</a> " page (or load the sample corpus), then build the graph here."</p> }.into_any()
                                } else {
                                    view! { <p class="muted">"Build one from the corpus: entities and relations are extracted from every chunk and merged."</p> }.into_any()
                                }}
                            </div>
                            <BuildForm project_id=id.get_untracked() action=build open=true llm=info.map(|l| (l.provider, l.label))/>
                            {project.await.is_ok_and(|p| p.summary.documents == 0).then(|| view! {
                                <ImportIndexForm project_id=id.get_untracked() import_error/>
                            })}
                        }.into_any(),
                        Ok(Some(o)) => view! {
                            <Stats o=o.clone()/>
                            <p class="downloads small" id="graph-downloads">"Download the graph: "
                                <a href=format!("/api/projects/{}/graph/graph.json", id.get_untracked()) download="">"JSON"</a> " · "
                                <a href=format!("/api/projects/{}/graph/graph.graphml", id.get_untracked()) download="">"GraphML"</a>
                                <span class="muted">" (nodes with their types, descriptions, source chunks and communities; edges with their weights; the JSON re-imports with "<code>"assay graph import"</code>")"</span></p>
                            <BuildForm project_id=id.get_untracked() action=build open=false llm=info.map(|l| (l.provider, l.label))/>
                            <GraphExplorer source=GraphSource::Project(id.get_untracked()) reload=finished/>
                            <div class="graph-facts">
                                <DegreeChart histogram=o.degree_histogram.clone()/>
                                <TopEntities o=o.clone() base=format!("/projects/{}/graph", id.get_untracked())/>
                            </div>
                            <crate::components::SharePanel kind=types::ShareKind::Graph page_id=id.get_untracked()/>
                        }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=build/>
        </main>
    }
}

/// Another system's index folder (a zip of it) as this empty project's
/// corpus and graph.
#[component]
fn ImportIndexForm(project_id: i64, import_error: Memo<Option<String>>) -> impl IntoView {
    view! {
        <details class="panel" id="import-index" open=move || import_error.get().is_some()>
            <summary>"Or import a graph another system built (LightRAG, Microsoft GraphRAG, nano-graphrag)"</summary>
            <form method="post" enctype="multipart/form-data" class="inline-form" id="import-index-form"
                action=format!("/api/projects/{project_id}/graph-import")>
                <label>"Written by "
                    <select name="format">
                        <option value="lightrag">"LightRAG (its working folder)"</option>
                        <option value="graphrag">"Microsoft GraphRAG (its output folder)"</option>
                        <option value="nano-graphrag">"nano-graphrag (its working folder)"</option>
                    </select>
                </label>
                <label>"Community level " <input type="number" name="community_level" min="0" placeholder="0" class="narrow"
                    title="Which of the index's community levels become the project's communities (0, the coarsest, when empty)"/></label>
                <input type="file" name="file" accept=".zip" required/>
                <button type="submit">"Import"</button>
            </form>
            <p class="muted small">"A zip of the folder. Its documents and chunks become this project's corpus (under their own ids), its entities and relations the graph, each leading back to the chunks it came from; Microsoft GraphRAG's and nano-graphrag's communities and reports become the project's. Nothing is extracted again and no LLM is called. The page then says how every entity, relation and chunk was mapped. See docs/bring-your-own-system.md."</p>
            {move || import_error.get().map(|e| view! { <p class="error" role="alert" id="import-error">{e}</p> })}
        </details>
    }
}

#[component]
pub(crate) fn Stats(o: GraphOverview) -> impl IntoView {
    let by = match (o.job_id, o.provider) {
        (_, Some(types::CallProvider::Offline)) => view! {
            <span class="provider-offline">"the offline provider"</span>
            <span class="muted">" — entities found by classical NLP (capitalised phrases, co-occurrence), not by a language model"</span>
        }
        .into_any(),
        (None, _) => view! { <span>"an imported file"</span> }.into_any(),
        (Some(_), Some(p)) => view! { <span>{p.label(&o.model)}</span> }.into_any(),
        (Some(job), None) => view! { <span>{format!("job #{job} (no call logged)")}</span> }.into_any(),
    };
    let provenance = match o.imported_from.clone() {
        Some(from) => view! {
            <p class="llm-line" id="graph-provenance">"Imported from " {from}
                <span class="muted">" — how: docs/bring-your-own-system.md"</span></p>
        }
        .into_any(),
        None => view! {
            <p class="llm-line" id="graph-provenance">"Built by "
                {o.job_id.map(|j| format!("job #{j} with "))} {by}</p>
        }
        .into_any(),
    };
    view! {
        {provenance}
        {o.extraction_note.clone().map(|n| view! { <p class="notice" id="graph-extraction-note">{n}</p> })}
        <dl class="totals" id="graph-stats">
            <div><dt>"Nodes"</dt><dd>{format::int(o.nodes)}</dd></div>
            <div><dt>"Edges"</dt><dd>{format::int(o.edges)}</dd></div>
            <div><dt>"Components"</dt><dd>{format::int(o.components)}</dd></div>
            <div><dt>"Largest component"</dt><dd>{format!("{} ({:.0}%)", format::int(o.largest_component),
                if o.nodes > 0 { o.largest_component as f64 / o.nodes as f64 * 100.0 } else { 0.0 })}</dd></div>
            <div><dt>"Communities"</dt><dd>{format::int(o.communities)}</dd></div>
        </dl>
    }
}

/// What the graph form's price rests on.
const GRAPH_PRICE_NOTE: &str = "Calls: one per chunk and extraction pass, exactly; descriptions long enough to summarise add calls, known once the entities are merged. Prompts: the project's chunks and the extraction prompt (a gleaning pass sends the conversation again); replies about a third of a chunk. Nothing has been sent.";

#[component]
fn BuildForm(
    project_id: i64,
    action: ServerAction<StartGraphBuild>,
    open: bool,
    llm: Option<(types::ProviderKind, String)>,
) -> impl IntoView {
    let (plan, form, replan) = crate::pages::evaluations::priced::<PlanGraphBuild>();
    view! {
        <details class="panel build-panel" open=open>
            <summary>{if open { "Build the graph" } else { "Rebuild the graph" }}</summary>
            {llm.map(|(provider, label)| view! {
                <p class="llm-line">"LLM: " <strong class=format!("provider-{provider}")>{label}</strong>
                    {(provider == types::ProviderKind::Offline).then(|| view! { <span class="muted">" — the offline extractor; set a model in Settings for LLM extraction"</span> })}
                </p>
            })}
            <div on:input=move |_| replan() on:change=move |_| replan()>
            <ActionForm action node_ref=form attr:class="stack-form" attr:id="graph-build-form">
                <input type="hidden" name="project_id" value=project_id/>
                <label>"Gleaning turns " <input type="number" name="req[gleaning]" required value=types::defaults::GLEANING.to_string() min="0" max="5"/>
                    <span class="muted small">"follow-ups asking for missed entities (the paper's deeper mining)"</span><Help text=help::GLEANING/></label>
                <label>"Entity types " <input type="text" name="req[entity_types]" size="48"
                    value=types::defaults::ENTITY_TYPES.join(", ")/></label>
                <label>"Summary budget " <input type="number" name="req[summary_budget]" required value=types::defaults::SUMMARY_BUDGET.to_string() min="50"/>
                    <span class="muted small">"tokens; merged descriptions longer than this are summarised"</span><Help text=help::SUMMARY_BUDGET/></label>
                <NoCacheBox/>
                {crate::pages::evaluations::price_view(plan, "graph-price", GRAPH_PRICE_NOTE)}
                <div><button type="submit" id="build-graph" disabled=move || action.pending().get()>"Build graph"</button></div>
            </ActionForm>
            </div>
        </details>
    }
}

/// Degrees in bins (1, 2, 3–4, 5–8, …) as horizontal bars: a few hubs and
/// many leaves is the usual shape of an extracted graph.
#[component]
pub(crate) fn DegreeChart(histogram: Vec<(i64, i64)>) -> impl IntoView {
    let mut bins: Vec<(String, i64)> = Vec::new();
    let zero = histogram.iter().find(|(d, _)| *d == 0).map_or(0, |(_, n)| *n);
    if zero > 0 {
        bins.push(("0".into(), zero));
    }
    let max_degree = histogram.last().map_or(0, |(d, _)| *d);
    let (mut lo, mut hi) = (1i64, 1i64);
    while lo <= max_degree {
        let n: i64 = histogram.iter().filter(|(d, _)| (lo..=hi).contains(d)).map(|(_, n)| n).sum();
        bins.push((if lo == hi { lo.to_string() } else { format!("{lo}–{hi}") }, n));
        lo = hi + 1;
        hi = hi * 2 + 1;
    }
    let most = bins.iter().map(|(_, n)| *n).max().unwrap_or(1).max(1) as f64;
    let row = 22.0;
    let height = bins.len() as f64 * row + 24.0;
    view! {
        <figure class="chart" id="degree-chart">
            <figcaption>"Degree distribution (nodes per degree range)"</figcaption>
            <svg viewBox=format!("0 0 420 {height}") width="100%" role="img" aria-label="Degree distribution">
                {bins.into_iter().enumerate().map(|(k, (label, n))| {
                    let y = k as f64 * row + 4.0;
                    let w = n as f64 / most * 300.0;
                    view! {
                        <g>
                            <text x="52" y=y + 14.0 text-anchor="end" class="axis">{label}</text>
                            <rect x="58" y=y width=w.max(0.5) height=row - 6.0 class="bar"/>
                            <text x=62.0 + w y=y + 14.0 class="value">{format::int(n)}</text>
                        </g>
                    }
                }).collect_view()}
            </svg>
        </figure>
    }
}

/// The most connected entities (each opens the explorer on it: `base` is
/// the explorer's page) and the entity types.
#[component]
pub(crate) fn TopEntities(o: GraphOverview, base: String) -> impl IntoView {
    view! {
        <div class="top-entities">
            <h2>"Top entities by degree"</h2>
            <ol id="top-entities">
                {o.top.into_iter().map(|n| view! {
                    <li><a href=format!("{base}?node={}", n.id)>{n.name}</a>
                        <span class="muted small">{format!(" {} · {}", n.kind, n.degree)}</span></li>
                }).collect_view()}
            </ol>
            <h2>"Types"</h2>
            <ul class="types">
                {o.types.into_iter().map(|(t, n)| view! { <li>{t} <span class="muted">{format::int(n)}</span></li> }).collect_view()}
            </ul>
        </div>
    }
}

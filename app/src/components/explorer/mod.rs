//! The graph explorer: a canvas with the graph (pan, zoom, drag, click),
//! search with suggestions, filters, k-hop focus, and a side panel with the
//! selected node's or edge's description, neighbours and source text.
//!
//! The layout comes from the server (computed once when the graph was
//! stored); the browser only draws. `?highlight=ID,ID,…` emphasises nodes
//! and fits the view to them; `?node=ID` selects one.

#[cfg(feature = "hydrate")]
mod canvas;
pub mod scene;

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use serde::{Deserialize, Serialize};

use crate::api::graph::{
    get_graph_edge, get_graph_node, get_graph_view, get_shared_graph_edge, get_shared_graph_node, get_shared_graph_view,
};
use crate::components::{ErrorNote, SourceText};
use crate::error::AppError;
use crate::format;
use crate::model::{EdgeDetail, GraphView, NodeBrief, NodeDetail, SourceChunk};
use scene::PALETTE;

/// Nodes drawn at most by default (`?limit=N` changes it, up to
/// [`MAX_NODE_LIMIT`]); larger graphs show their highest-degree nodes.
pub const NODE_LIMIT: u32 = 5_000;
pub const MAX_NODE_LIMIT: u32 = 20_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    Node(i64),
    Edge(i64, i64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Detail {
    Node(NodeDetail),
    Edge(EdgeDetail),
}

#[cfg(feature = "hydrate")]
fn parse_ids(s: &str) -> Vec<i64> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

/// Where the explorer reads the graph: a project (the owner), or a share
/// token (a read-only link: the server finds the project from the token,
/// and the source texts link to nothing else of the project).
#[derive(Debug, Clone, PartialEq)]
pub enum GraphSource {
    Project(i64),
    Share(std::sync::Arc<str>),
}

impl GraphSource {
    async fn view(self, limit: u32) -> Result<GraphView, AppError> {
        match self {
            GraphSource::Project(id) => get_graph_view(id, limit).await,
            GraphSource::Share(t) => get_shared_graph_view(t.to_string(), limit).await,
        }
    }

    async fn node(self, id: i64) -> Result<NodeDetail, AppError> {
        match self {
            GraphSource::Project(p) => get_graph_node(p, id).await,
            GraphSource::Share(t) => get_shared_graph_node(t.to_string(), id).await,
        }
    }

    async fn edge(self, a: i64, b: i64) -> Result<EdgeDetail, AppError> {
        match self {
            GraphSource::Project(p) => get_graph_edge(p, a, b).await,
            GraphSource::Share(t) => get_shared_graph_edge(t.to_string(), a, b).await,
        }
    }

    /// The project whose pages the source texts may link to (none when shared).
    fn project(&self) -> i64 {
        match self {
            GraphSource::Project(p) => *p,
            GraphSource::Share(_) => 0,
        }
    }
}

/// Selects a node and brings it to the middle of the view.
fn go_to(selection: RwSignal<Option<Selection>>, id: i64) {
    selection.set(Some(Selection::Node(id)));
    #[cfg(feature = "hydrate")]
    canvas::with(|s| {
        if let Some(i) = s.index_of(id) {
            s.selected = Some(i);
            s.selected_edge = None;
            if s.visible[i] {
                s.center_on(i);
            }
        }
    });
}

#[component]
pub fn GraphExplorer(source: GraphSource, #[prop(into)] reload: Signal<u64>) -> impl IntoView {
    let query = use_query_map();
    #[cfg(feature = "hydrate")]
    let highlight = Memo::new(move |_| query.read().get("highlight").map(|s| parse_ids(&s)).unwrap_or_default());
    let selection = RwSignal::new(None::<Selection>);
    let colour_by_community = RwSignal::new(false);
    let hidden_types = RwSignal::new(Vec::<u16>::new());
    let community = RwSignal::new(None::<i64>);
    let min_degree = RwSignal::new(0u32);
    let focus = RwSignal::new(None::<(i64, u32)>);
    let hops = RwSignal::new(1u32);
    let search = RwSignal::new(String::new());
    let limit = Memo::new(move |_| {
        query.read().get("limit").and_then(|l| l.parse().ok()).unwrap_or(NODE_LIMIT).clamp(1, MAX_NODE_LIMIT)
    });
    let from = source.clone();
    let data = LocalResource::new(move || {
        reload.get();
        from.clone().view(limit.get())
    });
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    // What the controls need of the data, kept apart from the scene.
    let names = RwSignal::new(Vec::<(i64, String, u32)>::new());
    let types = RwSignal::new(Vec::<String>::new());
    let communities = RwSignal::new(Vec::<(i64, usize)>::new());
    let shown = RwSignal::new(None::<(usize, usize, i64, i64)>);
    // Set by the effect below once the data is in (never on the server).
    let load = RwSignal::new(None::<Result<(), crate::error::AppError>>);
    #[cfg(feature = "hydrate")]
    let filters = move || scene::Filters {
        colour_by_community: colour_by_community.get(),
        hidden_types: hidden_types.get(),
        community: community.get(),
        min_degree: min_degree.get(),
        focus: focus.get(),
        highlight: highlight.get(),
    };

    Effect::new(move |_| {
        let view = match data.get() {
            None => return load.set(None),
            Some(Err(e)) => return load.set(Some(Err(e))),
            Some(Ok(view)) => view,
        };
        load.set(Some(Ok(())));
        names.set(view.nodes.iter().map(|n| (n.id, n.name.clone(), n.degree)).collect());
        types.set(view.types.clone());
        let mut counts = std::collections::BTreeMap::<i64, usize>::new();
        for n in &view.nodes {
            *counts.entry(n.community).or_default() += 1;
        }
        communities.set(counts.into_iter().collect());
        shown.set(Some((view.nodes.len(), view.edges.len(), view.total_nodes, view.total_edges)));
        if let Some(id) = query.read_untracked().get("node").and_then(|s| s.parse().ok()) {
            selection.set(Some(Selection::Node(id)));
        }
        #[cfg(feature = "hydrate")]
        if let Some(el) = canvas_ref.get() {
            // A reloaded graph keeps the filters the controls show.
            let _ = canvas::mount(el, view, &untrack(filters), move |sel| selection.set(sel));
            if let Some(Selection::Node(id)) = selection.get_untracked() {
                go_to(selection, id);
            }
        }
    });
    // `?node=ID` changed while the explorer is open (a link to another
    // entity, back and forward): select and centre it, no reload.
    let node_in_url = Memo::new(move |_| query.read().get("node").and_then(|s| s.parse::<i64>().ok()));
    Effect::new(move |prev: Option<Option<i64>>| {
        let now = node_in_url.get();
        if prev.is_some() && load.get_untracked().is_some_and(|l| l.is_ok()) {
            if let Some(id) = now {
                go_to(selection, id);
            }
        }
        now
    });
    #[cfg(feature = "hydrate")]
    {
        Effect::new(move |_| {
            let f = filters();
            canvas::with(|s| s.apply(&f));
        });
        Effect::new(move |_| {
            let sel = selection.get();
            canvas::with(|s| match sel {
                Some(Selection::Node(id)) => {
                    s.selected = s.index_of(id);
                    s.selected_edge = None;
                }
                Some(Selection::Edge(..)) => s.selected = None,
                None => {
                    s.selected = None;
                    s.selected_edge = None;
                }
            });
        });
        // The selected node in the address (`?node=ID`), replaced in place
        // (no history entry per click, no reload): a link copied from the
        // address bar opens the explorer on it.
        Effect::new(move |_| {
            let node = match selection.get() {
                Some(Selection::Node(id)) => Some(id),
                _ => None,
            };
            let Some(w) = web_sys::window() else { return };
            let Ok(href) = w.location().href() else { return };
            let Ok(url) = web_sys::Url::new(&href) else { return };
            let params = url.search_params();
            match node {
                Some(id) => params.set("node", &id.to_string()),
                None => params.delete("node"),
            }
            let next = url.href();
            if next != href {
                if let Ok(history) = w.history() {
                    let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&next));
                }
            }
        });
        let resize = window_event_listener_untyped("resize", |_| canvas::redraw());
        on_cleanup(move || {
            resize.remove();
            canvas::unmount();
        });
    }

    let suggestions = Memo::new(move |_| {
        let q = search.get().trim().to_lowercase();
        if q.is_empty() {
            return Vec::new();
        }
        names.with(|all| {
            let mut hits: Vec<(i64, String, u32)> =
                all.iter().filter(|(_, n, _)| n.to_lowercase().contains(&q)).take(200).cloned().collect();
            // Names that start with the query first; then by degree.
            hits.sort_by_key(|(_, n, d)| (!n.to_lowercase().starts_with(&q), std::cmp::Reverse(*d)));
            hits.truncate(8);
            hits
        })
    });
    let choose = move |id: i64| {
        search.set(String::new());
        go_to(selection, id);
    };

    view! {
        <section class="explorer" aria-label="Graph explorer">
            <div class="explorer-toolbar">
                <div class="search-box">
                    <input type="search" id="graph-search" placeholder="Find an entity…" autocomplete="off"
                        aria-label="Find an entity"
                        prop:value=move || search.get()
                        on:input=move |ev| search.set(event_target_value(&ev))
                        on:keydown=move |ev| {
                            if ev.key() == "Enter" {
                                if let Some((id, _, _)) = suggestions.get_untracked().first() {
                                    choose(*id);
                                }
                            }
                        }/>
                    <Show when=move || !suggestions.get().is_empty()>
                        <ul class="suggestions" role="listbox">
                            {move || suggestions.get().into_iter().map(|(id, name, degree)| view! {
                                <li><button type="button" class="suggestion" data-node=id on:click=move |_| choose(id)>
                                    {name} <span class="muted">{format!(" · degree {degree}")}</span>
                                </button></li>
                            }).collect_view()}
                        </ul>
                    </Show>
                </div>
                <label>"Colour by "
                    <select id="colour-by" on:change=move |ev| colour_by_community.set(event_target_value(&ev) == "community")>
                        <option value="type">"type"</option>
                        <option value="community">"community"</option>
                    </select>
                </label>
                <label>"Community "
                    <select id="community-filter" on:change=move |ev| community.set(event_target_value(&ev).parse().ok())>
                        <option value="">"all"</option>
                        {move || communities.get().into_iter().map(|(c, size)| view! {
                            <option value=c.to_string()>{format!("#{c} ({size} nodes)")}</option>
                        }).collect_view()}
                    </select>
                </label>
                <label>"Min degree "
                    <input type="number" id="min-degree" min="0" value="0"
                        on:input=move |ev| min_degree.set(event_target_value(&ev).parse().unwrap_or(0))/>
                </label>
                <button type="button" class="link" on:click=move |_| {
                    #[cfg(feature = "hydrate")]
                    canvas::with(|s| s.fit(None));
                }>"Fit to view"</button>
            </div>
            <div class="legend" id="graph-legend">
                <Show when=move || !colour_by_community.get() fallback=|| view! {
                    <span class="muted">"Colours show Leiden communities (seeded); the palette repeats every 12."</span>
                }>
                    {move || types.get().into_iter().enumerate().map(|(k, t)| {
                        let k = k as u16;
                        let colour = PALETTE[k as usize % PALETTE.len()];
                        view! {
                            <label class="legend-item">
                                <input type="checkbox" checked=true data-type=t.clone()
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        hidden_types.update(|h| { h.retain(|x| *x != k); if !on { h.push(k); } });
                                    }/>
                                <span class="swatch" style=format!("background:{colour}")></span>{t}
                            </label>
                        }
                    }).collect_view()}
                </Show>
            </div>
            <div class="explorer-body">
                <div class="canvas-wrap">
                    <canvas node_ref=canvas_ref id="graph-canvas" aria-label="The knowledge graph; drag to pan, scroll to zoom, click a node"></canvas>
                    // Not a Suspense: the data is fetched by the browser only
                    // (a LocalResource), so the server renders "Loading".
                    {move || match load.get() {
                        None => Some(view! { <p class="canvas-note muted">"Loading the graph…"</p> }.into_any()),
                        Some(Err(e)) => Some(view! { <div class="canvas-note"><ErrorNote error=e/></div> }.into_any()),
                        Some(Ok(())) => None,
                    }}
                    {move || shown.get().map(|(n, e, total_n, total_e)| {
                        let text = if (n as i64) < total_n {
                            format!("Showing the {} highest-degree nodes of {} and the {} edges among them (of {}).",
                                format::int(n as i64), format::int(total_n), format::int(e as i64), format::int(total_e))
                        } else {
                            format!("{} nodes, {} edges.", format::int(n as i64), format::int(e as i64))
                        };
                        view! { <p class="canvas-caption muted" id="graph-shown">{text}</p> }
                    })}
                </div>
                <DetailPanel source=source.clone() selection focus hops/>
            </div>
        </section>
    }
}

#[component]
fn DetailPanel(
    source: GraphSource,
    selection: RwSignal<Option<Selection>>,
    focus: RwSignal<Option<(i64, u32)>>,
    hops: RwSignal<u32>,
) -> impl IntoView {
    let project_id = source.project();
    let detail = Resource::new(
        move || selection.get(),
        move |sel| {
            let source = source.clone();
            async move {
                match sel {
                    None => Ok(None),
                    Some(Selection::Node(id)) => source.node(id).await.map(|d| Some(Detail::Node(d))),
                    Some(Selection::Edge(a, b)) => source.edge(a, b).await.map(|d| Some(Detail::Edge(d))),
                }
            }
        },
    );
    let neighbour = move |n: NodeBrief| {
        let id = n.id;
        view! {
            <li><button type="button" class="link neighbour" on:click=move |_| go_to(selection, id)>{n.name}</button>
                <span class="muted small">{format!(" {} · {}", n.kind, n.degree)}</span></li>
        }
    };
    view! {
        <aside class="detail-panel" id="graph-detail" aria-live="polite">
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match detail.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(None) => view! {
                            <p class="muted">"Click a node or an edge to see its description, neighbours and the text it came from. Drag to pan, scroll to zoom, drag a node to move it."</p>
                        }.into_any(),
                        Ok(Some(Detail::Node(d))) => {
                            let id = d.id;
                            let focused = move || focus.get().is_some_and(|(f, _)| f == id);
                            view! {
                                <h2 class="detail-title">{d.name.clone()}</h2>
                                <p class="detail-meta"><span class="badge">{d.kind.clone()}</span>
                                    {format!(" community #{} · degree {}", d.community, d.neighbours.len())}</p>
                                <div class="focus-row">
                                    <label>"Focus on "
                                        <select on:change=move |ev| hops.set(event_target_value(&ev).parse().unwrap_or(1))>
                                            <option value="1">"1 hop"</option>
                                            <option value="2">"2 hops"</option>
                                            <option value="3">"3 hops"</option>
                                        </select>
                                    </label>
                                    <button type="button" id="focus-node" on:click=move |_| focus.set(Some((id, hops.get_untracked())))>"Focus"</button>
                                    <Show when=focused>
                                        <button type="button" class="link" id="clear-focus" on:click=move |_| focus.set(None)>"Show all"</button>
                                    </Show>
                                </div>
                                <h3>"Description"</h3>
                                <p class="detail-description">{d.description.clone()}</p>
                                <h3>{format!("Neighbours ({})", d.neighbours.len())}</h3>
                                <ul class="neighbours">{d.neighbours.into_iter().take(60).map(neighbour).collect_view()}</ul>
                                <Sources project_id sources=d.sources/>
                            }.into_any()
                        }
                        Ok(Some(Detail::Edge(d))) => view! {
                            <h2 class="detail-title">{format!("{} — {}", d.source.name, d.target.name)}</h2>
                            <p class="detail-meta">{format!("weight {} ", d.weight)}
                                {(!d.keywords.is_empty()).then(|| format!("· keywords: {}", d.keywords.join(", ")))}</p>
                            <ul class="neighbours">{neighbour(d.source.clone())}{neighbour(d.target.clone())}</ul>
                            <h3>"Description"</h3>
                            <p class="detail-description">{d.description.clone()}</p>
                            <Sources project_id sources=d.sources/>
                        }.into_any(),
                    }
                })}
            </Transition>
        </aside>
    }
}

/// Source chunks with the mentions marked.
#[component]
fn Sources(project_id: i64, sources: Vec<SourceChunk>) -> impl IntoView {
    view! {
        <h3>{format!("Source text ({} chunk{})", sources.len(), if sources.len() == 1 { "" } else { "s" })}</h3>
        <SourceText project_id sources/>
    }
}

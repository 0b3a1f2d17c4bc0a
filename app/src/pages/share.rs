//! `/share/:token`: a page shared read-only by link — an evaluation's
//! report, a study's results, a question set with its diagnostics, a metrics run, or a
//! project's graph explorer — with no account, no edit controls and nothing
//! else of the project. A withdrawn link is a 404.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};
use serde::{de::DeserializeOwned, Serialize};

use crate::api::{get_shared, get_shared_experiment, get_shared_graph, get_shared_kind, get_shared_questions};
use crate::components::explorer::{GraphExplorer, GraphSource};
use crate::components::{ErrorNote, Pager};
use crate::error::AppError;
use crate::format;
use crate::model::{GraphOverview, QuestionView, QuestionsPage, SharedQuestions};

/// The shared page's frame. What the link opens is drawn by a page of the
/// group that draws it elsewhere (the report group, the experiment's, the
/// graph's), so a shared report does not load the graph explorer's code and
/// the other way round. Its kind is written into the page
/// (`data-share-kind`): hydration reads it to load that group's module first.
#[component]
pub fn SharePage() -> impl IntoView {
    let token = token();
    let kind = Resource::new(move || token.get(), get_shared_kind);
    view! {
        <Title text="Shared report"/>
        <header class="topbar"><span class="brand">"Assay"</span><span class="muted small">"a report shared read-only"</span></header>
        <main class="page wide evaluation-report" id="shared">
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match kind.await {
                        Err(e) => {
                            #[cfg(feature = "ssr")]
                            if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
                                resp.set_status(axum::http::StatusCode::NOT_FOUND);
                            }
                            view! { <h1>"Not found"</h1><ErrorNote error=e/> }.into_any()
                        }
                        Ok(kind) => {
                            let body = SharedBody::of(kind);
                            #[cfg(feature = "ssr")]
                            crate::ssr::preload::hint(body.group(), Some("share_pages"));
                            let body = body.view().await;
                            view! { <div class="shared-body" data-share-kind=kind.as_str()>{body}</div> }.into_any()
                        }
                    }
                })}
            </Suspense>
        </main>
    }
}

/// Which page draws a shared page, by its kind: each is in the group of
/// pages that draws that kind elsewhere (its group's name, view and preload
/// are in app/src/lib.rs, next to the groups).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SharedBody {
    /// An evaluation's report, a study's results, a question set, a metrics run.
    Report,
    Experiment,
    Graph,
}

impl SharedBody {
    pub fn of(kind: types::ShareKind) -> Self {
        use types::ShareKind;
        match kind {
            ShareKind::Experiment => SharedBody::Experiment,
            ShareKind::Graph => SharedBody::Graph,
            ShareKind::Evaluation | ShareKind::Study | ShareKind::Questions | ShareKind::Metrics => SharedBody::Report,
        }
    }
}

/// The kind of shared page the server rendered (`data-share-kind`), when
/// this page was rendered by the server and is being hydrated.
#[cfg(target_arch = "wasm32")]
pub fn kind_in_page() -> Option<types::ShareKind> {
    let name =
        leptos::prelude::document().query_selector("[data-share-kind]").ok()??.get_attribute("data-share-kind")?;
    types::ShareKind::parse(&name).ok()
}

fn token() -> Memo<String> {
    let params = use_params_map();
    Memo::new(move |_| params.read().get("token").unwrap_or_default())
}

/// A shared page's body: `fetch` reads it through the link's token, `draw`
/// draws it (with the token, for its downloads).
fn shared_body<T, F>(fetch: fn(String) -> F, draw: fn(T, String) -> AnyView) -> AnyView
where
    T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
    F: std::future::Future<Output = Result<T, AppError>> + Send + 'static,
{
    let token = token();
    let shared = Resource::new(move || token.get(), fetch);
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match shared.await {
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    Ok(v) => draw(v, token.get_untracked()),
                }
            })}
        </Suspense>
    }
    .into_any()
}

/// A shared report: an evaluation's, a study's results, a question set or
/// a metrics run.
#[component]
pub fn SharedReport() -> impl IntoView {
    shared_body(get_shared, |v, t| {
        if let Some(r) = v.evaluation {
            // The drill-down too, read through the link.
            let pairs = r.pairs.clone();
            let source = crate::pages::evaluations::DrillSource::Share(t.clone());
            if crate::pages::evaluations::paper_query() {
                view! { <crate::pages::evaluations::Report project_id=0 r share=t paper=true/> }.into_any()
            } else {
                view! {
                    <crate::pages::evaluations::Report project_id=0 r share=t/>
                    <crate::pages::evaluations::Drill source pairs/>
                }
                .into_any()
            }
        } else if let Some(r) = v.study {
            view! { <crate::pages::studies::Results r share=t/> }.into_any()
        } else if let Some(q) = v.questions {
            view! { <SharedSet q token=t/> }.into_any()
        } else if let Some(v) = v.metrics {
            view! { <h1>{format!("Metrics run #{}", v.run_id)}</h1><crate::pages::metrics::Results v share=t/> }
                .into_any()
        } else {
            ().into_any()
        }
    })
}

/// A shared experiment's report.
#[component]
pub fn SharedExperiment() -> impl IntoView {
    shared_body(get_shared_experiment, |r, t| {
        view! { <crate::pages::experiments::ExperimentReport r share=t/> }.into_any()
    })
}

/// A project's graph, read-only: its statistics and the explorer (which
/// reads the graph through the token).
#[component]
pub fn SharedGraph() -> impl IntoView {
    shared_body(get_shared_graph, |o, t| match o {
        None => view! { <h1>"Knowledge graph"</h1><p class="muted">"This project has no graph."</p> }.into_any(),
        Some(o) => view! { <GraphBody o token=t/> }.into_any(),
    })
}

/// A question set, read-only: its diagnostics and questions, and downloads
/// (none in the one-file export: `standalone`).
#[component]
pub fn SharedSet(q: SharedQuestions, token: String, #[prop(optional)] standalone: bool) -> impl IntoView {
    let base = format!("/api/share/{token}");
    let counts = q.set.counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(" · ");
    view! {
        <h1>{format!("Question set · {}", q.set.name)}</h1>
        <dl class="totals">
            <div><dt>"Questions"</dt><dd id="shared-questions">{format::int(q.set.questions)}</dd></div>
            <div><dt>"Kind"</dt><dd>{q.set.kind.as_str()}</dd></div>
            <div><dt>"Made by"</dt><dd class="small">{q.set.provider.map_or("imported".into(), |p| {
                if p == types::CallProvider::Offline { "the offline provider (templates, not a language model)".to_string() } else { p.label(&q.set.model.clone().unwrap_or_default()) }
            })}</dd></div>
        </dl>
        <p class="small">{counts}</p>
        {(!standalone).then(|| view! {
            <p class="small"><a href=format!("{base}/questions.jsonl") download="">"JSONL"</a> " · "
                <a href=format!("{base}/questions.csv") download="">"CSV"</a> " · "
                <a href=format!("{base}/report.html") download="">"One HTML file"</a></p>
        })}
        {q.entities.map(|(e, svg)| view! {
            <h2>"Entities the questions mention"</h2>
            <p class="small" id="shared-entities">{format!("{} distinct entities in {} questions; {} questions name one; the most mentioned takes {} of all mentions (the graph's names matched).",
                e.distinct, e.covered, e.with_entity, format::pct(e.top_share))}</p>
            <crate::components::Plot base=if standalone { String::new() } else { base.clone() } name="entities".into() figure=svg alt="Top entities"/>
        })}
        {q.relevance.map(|(r, svg)| view! {
            <h2>"Relevance of retrieved context"</h2>
            <p class="small">{format!("{} of {} questions scored 0–5, mean {:.2}{}.", r.scored, r.questions, r.mean,
                r.made_by.map_or(String::new(), |m| format!(", by {m}")))}</p>
            <crate::components::Plot base=if standalone { String::new() } else { base.clone() } name="relevance".into() figure=svg alt="Relevance histogram"/>
        })}
        <h2>"Questions"</h2>
        {if standalone {
            view! { <SharedQuestionTable questions=q.questions.questions.clone() first=1/> }.into_any()
        } else {
            view! { <SharedQuestionPages first=q.questions token/> }.into_any()
        }}
    }
}

/// The shared set's questions a page at a time (`?page=N`): the first
/// came with the set, the others are read through the link.
#[component]
fn SharedQuestionPages(first: QuestionsPage, token: String) -> impl IntoView {
    let query = use_query_map();
    let page = Memo::new(move |_| query.read().get("page").and_then(|p| p.parse::<i64>().ok()).unwrap_or(1));
    let shown = Resource::new(
        move || page.get(),
        move |n| {
            let (first, token) = (first.clone(), token.clone());
            async move {
                if n <= 1 {
                    Ok(first)
                } else {
                    get_shared_questions(token, n).await
                }
            }
        },
    );
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading questions…"</p> }>
            {move || Suspend::new(async move {
                match shown.await {
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    Ok(p) => {
                        let count = p.questions.len();
                        let from = (p.page - 1) * crate::model::QUESTIONS_PER_PAGE + 1;
                        view! {
                            <SharedQuestionTable questions=p.questions first=from/>
                            <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::QUESTIONS_PER_PAGE count
                                href=|n| format!("?page={n}") id="shared-question-pager" label="Pages of questions"/>
                        }.into_any()
                    }
                }
            })}
        </Transition>
    }
}

#[component]
fn SharedQuestionTable(questions: Vec<QuestionView>, first: i64) -> impl IntoView {
    view! {
        <table class="grid questions" id="shared-question-table">
            <thead><tr><th class="num">"#"</th><th>"Level or category"</th><th>"Question"</th><th>"Reference answer"</th></tr></thead>
            <tbody>
                {questions.into_iter().enumerate().map(|(i, x)| view! {
                    <tr><td class="num">{format::int(first + i as i64)}</td><td class="small">{x.level.clone().or(x.category.clone()).unwrap_or_default()}</td>
                        <td>{x.question}</td><td class="small">{x.reference_answer.unwrap_or_default()}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The shared graph's statistics and explorer.
#[component]
fn GraphBody(o: GraphOverview, token: String) -> impl IntoView {
    let source = GraphSource::Share(token.as_str().into());
    view! {
        <h1>"Knowledge graph"</h1>
        <crate::pages::graph::Stats o=o.clone()/>
        <GraphExplorer source reload=Signal::derive(|| 0u64)/>
        <div class="graph-facts">
            <crate::pages::graph::DegreeChart histogram=o.degree_histogram.clone()/>
            <crate::pages::graph::TopEntities o=o.clone() base=format!("/share/{token}")/>
        </div>
    }
}

//! `/experiments/new`: the "New experiment" wizard — every choice of an
//! experiment manifest with the papers' defaults, the estimate of LLM calls,
//! tokens and cost before anything runs, the manifest itself (export,
//! import, edit) — and `/projects/:id/experiments/:exp`: one progress view
//! for all stages while it runs, then the report gathering every stage's
//! (corpus and graph, question sets, cost per stage and per method, the
//! evaluations' box plots and heatmaps, the sanity checks, metrics), with a
//! share link.

use crate::pages::evaluations::{TimeLine, EVALUATION_TIME_ADVICE};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_navigate;
use types::requests::AnswersRequest;
use types::{ExperimentStatus, StageState};

use crate::api::experiments::{
    draft_experiment, draft_manifest, experiment_wizard, get_experiment, import_manifest, list_experiments,
    StartExperiment,
};
use crate::components::help::{text as help, Cite, Help, Paper};
use crate::components::jobs::{live_ticks, ProgressBar, StatusBadge, Watch};
use crate::components::route_id;
use crate::components::{Brand, ErrorNote, SharePanel};
use crate::format;
use crate::model::{
    ExperimentDraft, ExperimentReportView, ExperimentStageView, ImportedManifest, WizardCorpus, WizardFields,
    WizardStart,
};

/// The form's state: its fields, and whether the manifest to run is the
/// text as imported or edited (until a field changes) rather than the fields'.
#[derive(Clone, Copy)]
struct Wiz {
    fields: RwSignal<WizardFields>,
    from_text: RwSignal<bool>,
}

impl Wiz {
    fn edit(&self, f: impl FnOnce(&mut WizardFields)) {
        self.fields.update(|x| {
            x.unread = None;
            f(x)
        });
        self.from_text.set(false);
    }
}

fn number(
    w: Wiz,
    id: &'static str,
    label: &'static str,
    get: fn(&WizardFields) -> u32,
    set: fn(&mut WizardFields, u32),
) -> impl IntoView {
    view! {
        <label class="field" for=id><span>{label}</span>
            <input id=id type="number" min="0" prop:value=move || w.fields.with(|f| get(f).to_string())
                on:change=move |ev| if let Ok(v) = event_target_value(&ev).trim().parse() { w.edit(|f| set(f, v)) }/>
        </label>
    }
}

fn text(
    w: Wiz,
    id: &'static str,
    label: &'static str,
    get: fn(&WizardFields) -> String,
    set: fn(&mut WizardFields, String),
) -> impl IntoView {
    view! {
        <label class="field" for=id><span>{label}</span>
            <input id=id type="text" prop:value=move || w.fields.with(get)
                on:change=move |ev| { let v = event_target_value(&ev); w.edit(|f| set(f, v)) }/>
        </label>
    }
}

fn check(
    w: Wiz,
    id: &'static str,
    label: &'static str,
    get: fn(&WizardFields) -> bool,
    set: fn(&mut WizardFields, bool),
) -> impl IntoView {
    view! {
        <label class="check" for=id>
            <input id=id type="checkbox" prop:checked=move || w.fields.with(get)
                on:change=move |ev| { let v = event_target_checked(&ev); w.edit(|f| set(f, v)) }/>
            " " {label}
        </label>
    }
}

fn choice(
    w: Wiz,
    id: &'static str,
    label: &'static str,
    options: Vec<(String, String)>,
    get: fn(&WizardFields) -> String,
    set: fn(&mut WizardFields, String),
) -> impl IntoView {
    view! {
        <label class="field" for=id><span>{label}</span>
            <select id=id on:change=move |ev| { let v = event_target_value(&ev); w.edit(|f| set(f, v)) }>
                {options.into_iter().map(|(value, shown)| {
                    let v = value.clone();
                    view! { <option value=value selected=move || w.fields.with(get) == v>{shown}</option> }
                }).collect_view()}
            </select>
        </label>
    }
}

/// The levels as typed, each a number of categories; else the levels in
/// effect are kept and the draft names what could not be read.
fn set_levels(f: &mut WizardFields, text: String) {
    let mut levels = Vec::new();
    for l in text.split(',').map(str::trim).filter(|l| !l.is_empty()) {
        match l.parse() {
            Ok(n) => levels.push(n),
            Err(_) => {
                let kept = f.hierarchical_questions.levels.iter().map(usize::to_string).collect::<Vec<_>>();
                f.unread = Some(format!("levels: \"{l}\" is not a number of categories (kept {})", kept.join(", ")));
                return;
            }
        }
    }
    f.hierarchical_questions.levels = levels;
}

fn options(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// A manifest's text as a `data:` address (for the export link).
fn data_url(text: &str) -> String {
    format!("data:application/toml;charset=utf-8,{}", format::query_value(text))
}

/// Reads the file chosen in a file input as text.
#[cfg(feature = "hydrate")]
fn read_file(ev: &leptos::ev::Event, done: impl FnOnce(String) + 'static) {
    use wasm_bindgen::{closure::Closure, JsCast};
    let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
    let Some(file) = input.files().and_then(|l| l.get(0)) else { return };
    let Ok(reader) = web_sys::FileReader::new() else { return };
    let r = reader.clone();
    let onload = Closure::once(move |_: web_sys::ProgressEvent| {
        if let Some(s) = r.result().ok().and_then(|v| v.as_string()) {
            done(s);
        }
    });
    reader.set_onload(Some(onload.as_ref().unchecked_ref()));
    onload.forget();
    let _ = reader.read_as_text(&file);
}

#[cfg(not(feature = "hydrate"))]
fn read_file(_: &leptos::ev::Event, _: impl FnOnce(String) + 'static) {}

#[component]
pub fn NewExperimentPage() -> impl IntoView {
    // `?project=ID`: opened from inside a project, its documents pre-chosen.
    let query = leptos_router::hooks::use_query_map();
    let project = Memo::new(move |_| query.read().get("project").and_then(|p| p.parse::<i64>().ok()));
    let start = Resource::new(move || project.get(), experiment_wizard);
    let recent = Resource::new(|| (), |_| list_experiments());
    view! {
        <Title text="New experiment"/>
        <Brand account=true/>
        <main class="page wide" id="wizard">
            <p class="small"><a href="/">"← Projects"</a></p>
            <h1>"New experiment"</h1>
            <p class="lede">"One experiment, end to end: a corpus, its knowledge graph, questions grounded in it, answers from RAG methods, and their comparison under the unbiased protocol — every stage a job, reused when its settings are unchanged. The defaults are those of " <Cite paper=Paper::Unbiased at="§VI, Evaluation on Current GraphRAG Methods"/> "."</p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match start.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(s) => view! { <Wizard s/> }.into_any(),
                    }
                })}
            </Suspense>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let list = recent.await.unwrap_or_default();
                    (!list.is_empty()).then(|| view! {
                        <h2>"Experiments"</h2>
                        <table class="grid" id="experiments"><tbody>
                            {list.into_iter().map(|e| view! {
                                <tr><td><a href=format!("/projects/{}/experiments/{}", e.project_id, e.id)>{format!("#{} {}", e.id, e.name)}</a></td>
                                    <td><StatusBadge status=e.status.to_string()/></td><td class="small muted">{format::timestamp(&e.created_at)}</td></tr>
                            }).collect_view()}
                        </tbody></table>
                    })
                })}
            </Suspense>
        </main>
    }
}

#[component]
fn Wizard(s: WizardStart) -> impl IntoView {
    let w = Wiz { fields: RwSignal::new(s.fields.clone()), from_text: RwSignal::new(false) };
    let manifest = RwSignal::new(String::new());
    let checked = RwSignal::new(0u32);
    let not_shown = RwSignal::new(Vec::<String>::new());
    let not_held = RwSignal::new(Vec::<String>::new());
    let import_error = RwSignal::new(None::<String>);
    let draft: Resource<Result<ExperimentDraft, crate::error::AppError>> = Resource::new(
        move || (w.fields.get(), w.from_text.get(), checked.get()),
        move |(f, from_text, _)| async move {
            if from_text {
                draft_manifest(manifest.get_untracked()).await
            } else {
                draft_experiment(serde_json::to_string(&f).unwrap_or_default()).await
            }
        },
    );
    // The fields' manifest replaces the text (an imported one stays until a field changes).
    // Fields that make no manifest (levels "2, x") keep the last text,
    // and nothing starts until they do.
    let refused = RwSignal::new(false);
    Effect::new(move |_| {
        if let Some(Ok(d)) = draft.get() {
            refused.set(d.error.is_some());
            if !w.from_text.get_untracked() && !(d.error.is_some() && d.manifest.is_empty()) {
                manifest.set(d.manifest);
                // What the form holds stays named; what it could not hold is gone.
                not_held.set(Vec::new());
            }
        }
    });
    let import = Action::new(move |text: &String| {
        let text = text.clone();
        async move {
            match import_manifest(text.clone()).await {
                Ok(ImportedManifest { fields, not_shown: hidden, not_held: dropped }) => {
                    manifest.set(text);
                    w.fields.set(fields);
                    w.from_text.set(true);
                    not_shown.set(hidden);
                    not_held.set(dropped);
                    import_error.set(None);
                    checked.update(|c| *c += 1);
                }
                Err(e) => import_error.set(Some(e.to_string())),
            }
        }
    });
    let run = ServerAction::<StartExperiment>::new();
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok((project, id))) = run.value().get() {
            navigate(&format!("/projects/{project}/experiments/{id}"), Default::default());
        }
    });
    let project_options: Vec<(String, String)> = std::iter::once((String::new(), "— choose —".to_string()))
        .chain(
            s.projects.iter().map(|(n, d, t)| (n.clone(), format!("{n} ({d} documents, {} tokens)", format::int(*t)))),
        )
        .collect();
    let llm_options = vec![
        ("offline".to_string(), "Offline provider (no LLM: classical-NLP stand-ins)".to_string()),
        ("settings".to_string(), format!("The configured LLM: {}", s.configured_llm)),
    ];
    let methods = s.methods.clone();
    view! {
        <form class="wizard" on:submit=|ev| ev.prevent_default()>
            <fieldset><legend>"1 · Experiment"</legend>
                {text(w, "x-name", "Name (also its project's)", |f| f.name.clone(), |f, v| f.name = v)}
                {choice(w, "x-llm", "Who answers the LLM calls", llm_options, |f| f.llm.to_string(), |f, v| if let Ok(l) = v.parse() { f.llm = l })}
                {s.configured_is_offline.then(|| view! { <p class="small muted">"No LLM is configured (Settings): the experiment runs offline — its verdicts come from a transparent rubric, not a language model."</p> })}
            </fieldset>
            <fieldset><legend>"2 · Corpus and graph"</legend>
                {choice(w, "x-corpus", "Corpus", options(&[("sample", "The sample corpus (5 documents, ~2,300 words)"), ("project", "A project's uploaded documents")]), |f| f.corpus.to_string(), |f, v| if let Ok(c) = v.parse() { f.corpus = c })}
                {move || (w.fields.with(|f| f.corpus == WizardCorpus::Project)).then(|| choice(w, "x-corpus-project", "Project", project_options.clone(), |f| f.corpus_project.clone(), |f, v| f.corpus_project = v))}
                {number(w, "x-chunk", "Chunk tokens", |f| f.chunking.chunk_tokens as u32, |f, v| f.chunking.chunk_tokens = v as usize)}
                {number(w, "x-overlap", "Overlap tokens", |f| f.chunking.chunk_overlap as u32, |f, v| f.chunking.chunk_overlap = v as usize)}
                {number(w, "x-gleaning", "Gleaning passes", |f| f.graph.gleaning, |f, v| f.graph.gleaning = v)}
            </fieldset>
            <fieldset><legend>"3 · Questions"</legend>
                <div class="row">
                    {check(w, "x-graph-q", "Graph-grounded (Unbiased GraphRAG Evaluation paper)", |f| f.ask_graph, |f, v| f.ask_graph = v)}
                    {number(w, "x-node", "Node", |f| f.graph_questions.node as u32, |f, v| f.graph_questions.node = v as usize)}
                    {number(w, "x-edge", "Edge", |f| f.graph_questions.edge as u32, |f, v| f.graph_questions.edge = v as usize)}
                    {number(w, "x-subgraph", "Subgraph", |f| f.graph_questions.subgraph as u32, |f, v| f.graph_questions.subgraph = v as usize)}
                </div>
                <div class="row">
                    {check(w, "x-summary-q", "Summary (LightRAG)", |f| f.ask_summary, |f, v| f.ask_summary = v)}
                    {number(w, "x-users", "Users", |f| f.summary_questions.users as u32, |f, v| f.summary_questions.users = v as usize)}
                    {number(w, "x-tasks", "Tasks each", |f| f.summary_questions.tasks as u32, |f, v| f.summary_questions.tasks = v as usize)}
                    {number(w, "x-per-task", "Questions each", |f| f.summary_questions.per_task as u32, |f, v| f.summary_questions.per_task = v as usize)}
                </div>
                <div class="row">
                    {check(w, "x-hier-q", "Hierarchical (HieraRAG paper)", |f| f.ask_hierarchical, |f, v| f.ask_hierarchical = v)}
                    {text(w, "x-dims", "Dimensions", |f| f.hierarchical_questions.dimensions.join(", "), |f, v| f.hierarchical_questions.dimensions = v.split(',').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect())}
                    {text(w, "x-levels", "Levels", |f| f.hierarchical_questions.levels.iter().map(usize::to_string).collect::<Vec<_>>().join(", "), set_levels)}
                    {number(w, "x-per-cat", "Per category", |f| f.hierarchical_questions.questions_per_category() as u32, |f, v| f.hierarchical_questions.per_category = Some(v as usize))}
                </div>
            </fieldset>
            <fieldset><legend>"4 · Methods"</legend>
                <div class="methods">
                    {methods.into_iter().map(|(name, about)| {
                        let (n1, n2) = (name.clone(), name.clone());
                        let (id, for_id) = (format!("x-method-{name}"), format!("x-method-{name}"));
                        view! {
                            <label class="check" for=for_id title=about>
                                <input id=id type="checkbox" prop:checked=move || w.fields.with(|f| f.methods.iter().any(|m| m.method == n1))
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        let n = n2.clone();
                                        w.edit(|f| { f.methods.retain(|m| m.method != n); if on { f.methods.push(AnswersRequest::new(n)) } })
                                    }/>
                                " " {name}
                            </label>
                        }
                    }).collect_view()}
                </div>
            </fieldset>
            <fieldset><legend>"5 · Evaluation"</legend>
                <div class="row">
                    {check(w, "x-evaluate", "Compare every pair", |f| f.evaluate, |f, v| f.evaluate = v)}
                    {choice(w, "x-protocol", "Protocol", options(&[("unbiased", "unbiased"), ("both", "unbiased and legacy"), ("legacy", "legacy only")]), |f| f.evaluation.protocol.to_string(), |f, v| if let Ok(p) = v.parse() { f.evaluation.protocol = p })}
                    {choice(w, "x-judge", "Judge", options(&[("llm", "the experiment's LLM"), ("offline", "offline rubric"), ("simulated", "simulated (biased)")]), |f| f.evaluation.judge.to_string(), |f, v| if let Ok(j) = v.parse() { f.evaluation.judge = j })}
                </div>
                <div class="row">
                    {number(w, "x-trials", "Trials M", |f| f.evaluation.trials, |f, v| f.evaluation.trials = v)}<Help text=help::TRIALS/>
                    {number(w, "x-repeats", "Repeats N per order", |f| f.evaluation.repeats, |f, v| f.evaluation.repeats = v)}<Help text=help::REPEATS/>
                    {check(w, "x-align", "Length alignment", |f| f.evaluation.align, |f, v| f.evaluation.align = v)}<Help text=help::ALIGN/>
                    {check(w, "x-exchange", "Position exchange", |f| f.evaluation.exchange, |f, v| f.evaluation.exchange = v)}<Help text=help::EXCHANGE/>
                    {check(w, "x-sanity", "Sanity check (each method against itself)", |f| f.sanity, |f, v| f.sanity = v)}
                </div>
                {check(w, "x-metrics", "Reference-based metrics (HieraRAG paper; needs hierarchical questions)", |f| f.metrics, |f, v| f.metrics = v)}
            </fieldset>
        </form>
        <section class="panel" id="estimate">
            <h2>"Before it runs: the estimate"</h2>
            <Transition fallback=|| view! { <p class="muted">"Estimating…"</p> }>
                {move || Suspend::new(async move {
                    match draft.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(d) => view! { <Estimate d/> }.into_any(),
                    }
                })}
            </Transition>
            <crate::pages::decide::WizardDecide pilots=s.pilots.clone() manifest/>
            {move || (!not_shown.get().is_empty()).then(|| view! {
                <p class="small" id="not-shown">"From the imported manifest, not shown in the form (kept when a field changes): " {not_shown.get().join("; ")}</p>
            })}
            {move || (!not_held.get().is_empty()).then(|| view! {
                <p class="small" id="not-held">"From the imported manifest, run as imported but dropped when a field changes: " {not_held.get().join("; ")}</p>
            })}
            <p>
                <button type="button" class="primary" id="start-experiment" disabled=move || run.pending().get() || refused.get()
                    on:click=move |_| { run.dispatch(StartExperiment { manifest: manifest.get_untracked() }); }>
                    {move || if run.pending().get() { "Starting…" } else { "Start the experiment" }}</button>
            </p>
            {move || run.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e/> })}
        </section>
        <details class="panel" id="manifest-panel">
            <summary>"The manifest (TOML): export, import, edit"</summary>
            <p class="small muted">"What runs: " <code>"assay run experiment.toml --out report/"</code> " runs the same headless. Edit it here and check it, or import one (its corpus must be the sample or a project's documents)."</p>
            <textarea id="manifest-text" rows="18" spellcheck="false" prop:value=move || manifest.get()
                on:input=move |ev| manifest.set(event_target_value(&ev))></textarea>
            <p class="small">
                <a id="export-manifest" download="experiment.toml" href=move || data_url(&manifest.get())>"Export the manifest"</a> " · "
                <button type="button" class="link" id="check-manifest" on:click=move |_| { w.from_text.set(true); checked.update(|c| *c += 1); }>"Estimate this text"</button> " · "
                <button type="button" class="link" id="import-text" on:click=move |_| { import.dispatch(manifest.get_untracked()); }>"Fill the form from this text"</button> " · "
                <label class="small" for="import-file">"Import a file: "</label>
                <input id="import-file" type="file" accept=".toml,text/plain"
                    on:change=move |ev| read_file(&ev, move |t| { import.dispatch(t); })/>
            </p>
            {move || import_error.get().map(|e| view! { <p class="error" id="import-error">{e}</p> })}
        </details>
    }
}

#[component]
fn Estimate(d: ExperimentDraft) -> impl IntoView {
    if let Some(e) = d.error.clone() {
        return view! { <p class="error" id="manifest-error">{e}</p> }.into_any();
    }
    let cost = move |c: f64| {
        if d.offline {
            "free: offline".to_string()
        } else if !d.priced {
            "unpriced".to_string()
        } else {
            format::usd(c)
        }
    };
    view! {
        <p id="estimate-total"><strong>{format!("{} LLM calls", format::int(d.calls as i64))}</strong>
            {format!(" · {} tokens · {}", format::int(d.tokens as i64), cost(d.cost_usd))}
            <span class="muted">{format!(" — answered by {}", d.llm)}</span></p>
        <div id="estimate-time"><TimeLine time=d.time.clone() calls=(d.calls, d.calls) advice=EVALUATION_TIME_ADVICE/></div>
        {d.offline.then(|| view! { <p class="small muted">"Offline: no language model is called — extraction, questions, answers and verdicts come from Assay's deterministic stand-ins, and the report says so."</p> })}
        {(!d.offline && !d.priced).then(|| view! { <p class="small muted">"No price is set for this model (Settings): cost shows as unpriced."</p> })}
        <table class="grid small" id="estimate-stages">
            <thead><tr><th>"Stage"</th><th class="num">"Calls"</th><th class="num">"Prompt tokens"</th><th class="num">"Completion tokens"</th><th class="num">"Cost"</th><th>"How it is counted"</th></tr></thead>
            <tbody>
                {d.stages.iter().map(|s| view! {
                    <tr><td>{s.label.clone()}</td><td class="num">{format::int(s.calls as i64)}</td>
                        <td class="num">{format::int(s.prompt_tokens as i64)}</td><td class="num">{format::int(s.completion_tokens as i64)}</td>
                        <td class="num">{cost(s.cost_usd)}</td><td class="small muted">{s.how.clone()}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
        <p class="small muted">"An estimate before anything runs and before anything is sent: the corpus is chunked as the run will chunk it; calls per stage by the papers' formulas, exact where the run decides nothing as it goes; prompts from the chunks' tokens, each method's context and each prompt template; answers' and verdicts' lengths typical, since none exists yet. What a run decides as it goes is not in the count: long descriptions summarised, GraphRAG's community reports, length alignment's regenerations. The experiment's page shows the calls each stage actually made."</p>
    }
    .into_any()
}

/// `/projects/:id/experiments/:exp`: the stages while they run, then the report.
#[component]
pub fn ExperimentPage() -> impl IntoView {
    let exp = route_id("exp");
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Experiment(exp.get()));
    let page = Resource::new(move || (exp.get(), tick.get()), |(x, _)| get_experiment(x));
    view! {
        <Title text="Experiment"/>
        <Brand account=true/>
        <main class="page wide evaluation-report" id="experiment">
            <Transition fallback=|| view! { <p class="muted">"Loading the experiment…"</p> }>
                {move || Suspend::new(async move {
                    match page.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(r) => {
                            live.set(r.experiment.status == ExperimentStatus::Running);
                            view! { <ExperimentReport r/> }.into_any()
                        }
                    }
                })}
            </Transition>
        </main>
    }
}

fn stage_row(s: &ExperimentStageView, project: i64, shared: bool) -> impl IntoView {
    let state = s.state;
    let job = s.job.clone();
    view! {
        <tr class=format!("stage stage-{state}") data-kind=s.kind.as_str()>
            <td>{s.label.clone()}</td>
            <td><StatusBadge status=state.to_string()/></td>
            <td>{job.clone().map(|j| {
                let link = (!shared).then(|| view! { <a href=format!("/projects/{project}/jobs/{}", j.id)>{format!("job #{}", j.id)}</a> " " });
                view! { {link} {(state == StageState::Running).then(|| view! { <ProgressBar j=j.clone()/> })} }
            })}</td>
            <td class="num">{format::int(s.planned_calls as i64)}</td>
            <td class="num">{format::int(s.new_calls)}</td>
            <td class="num">{format::int(s.cached_calls)}</td>
            <td class="num">{format::int(s.tokens)}</td>
            <td class="num">{format::usd(s.cost_usd)}</td>
            <td class="num">{format!("{:.1}", s.seconds)}</td>
        </tr>
    }
}

/// The experiment's page body; with `share` read-only (no links into the project).
#[component]
pub(crate) fn ExperimentReport(r: ExperimentReportView, #[prop(optional)] share: Option<String>) -> impl IntoView {
    let e = r.experiment.clone();
    let shared = share.is_some();
    let project = e.project_id;
    let base = share.as_ref().map_or(format!("/api/experiments/{}", e.id), |t| format!("/api/share/{t}"));
    let done = e.status == ExperimentStatus::Done;
    view! {
        <h1>{format!("Experiment #{} · {}", e.id, e.name)}</h1>
        <p class=if e.offline { "judge-offline" } else { "" } id="experiment-llm">"LLM calls answered by " <strong>{e.llm.clone()}</strong>
            {e.offline.then(|| view! { <span class="muted">". Nothing here is a language model's output: offline stand-ins made the graph, questions, answers and verdicts."</span> })}</p>
        <p class="small">
            <StatusBadge status=e.status.to_string()/>
            {format!(" started {}", format::timestamp(&e.created_at))}
            {e.finished_at.clone().map(|f| format!(", finished {}", format::timestamp(&f)))}
            {(!shared).then(|| view! { " · " <a href=format!("/projects/{project}/corpus")>"its project"</a> })}
        </p>
        {e.error.clone().map(|err| view! { <p class="error" id="experiment-error">{err}</p> })}
        <h2>"Stages"</h2>
        <table class="grid small" id="stages">
            <thead><tr><th>"Stage"</th><th>"State"</th><th>"Job"</th><th class="num">"Estimated calls"</th><th class="num">"New calls"</th><th class="num">"From cache"</th><th class="num">"Tokens"</th><th class="num">"Cost"</th><th class="num">"Seconds"</th></tr></thead>
            <tbody>
                {e.stages.iter().map(|s| stage_row(s, project, shared)).collect_view()}
                <tr class="total"><td>"Total"</td><td></td><td></td><td></td>
                    <td class="num" id="total-new">{format::int(e.new_calls)}</td><td class="num" id="total-cached">{format::int(e.cached_calls)}</td>
                    <td class="num">{format::int(e.tokens)}</td><td class="num">{format::usd(e.cost_usd)}</td><td></td></tr>
            </tbody>
        </table>
        {done.then(|| view! { <Gathered r=r.clone() project shared/> })}
        <h2>"Downloads"</h2>
        <p class="downloads"><a href=format!("{base}/experiment.json") download="">"Every stage, its job, calls and cost (JSON)"</a> " · "
            <a href=format!("{base}/manifest.toml") download="">"The manifest it ran (TOML)"</a></p>
        {(!shared && done).then(|| view! { <SharePanel kind=types::ShareKind::Experiment page_id=e.id/> })}
    }
}

#[component]
fn Gathered(r: ExperimentReportView, project: i64, shared: bool) -> impl IntoView {
    let c = r.corpus.clone();
    view! {
        <h2>"Corpus and graph"</h2>
        <dl class="totals" id="corpus-stats">
            <div><dt>"Documents"</dt><dd>{format::int(c.documents)}</dd></div>
            <div><dt>"Tokens"</dt><dd>{format::int(c.tokens)}</dd></div>
            <div><dt>"Chunks"</dt><dd>{format::int(c.chunks)}</dd></div>
            {r.graph.clone().map(|g| view! {
                <div><dt>"Entities"</dt><dd id="graph-nodes">{format::int(g.nodes)}</dd></div>
                <div><dt>"Relations"</dt><dd>{format::int(g.edges)}</dd></div>
                <div><dt>"Communities"</dt><dd>{format::int(g.communities)}</dd></div>
                <div><dt>"Largest component"</dt><dd>{format::int(g.largest_component)}</dd></div>
            })}
        </dl>
        <h2>"Question sets"</h2>
        <table class="grid small" id="question-sets">
            <thead><tr><th>"Set"</th><th>"Kind"</th><th class="num">"Questions"</th><th>"By level or category"</th></tr></thead>
            <tbody>
                {r.question_sets.iter().map(|q| {
                    let name = format!("#{} {}", q.id, q.name);
                    view! {
                        <tr><td>{if shared { view! { <span>{name}</span> }.into_any() } else {
                                view! { <a href=format!("/projects/{project}/questions?set={}", q.id)>{name}</a> }.into_any() }}</td>
                            <td>{q.kind.as_str()}</td><td class="num">{format::int(q.questions)}</td>
                            <td class="small">{q.counts.iter().map(|(l, n)| format!("{l} {n}")).collect::<Vec<_>>().join(" · ")}</td></tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        <h2>"Cost per method"</h2>
        <p class="small muted">"Each method's answer sets: their jobs' calls, tokens, cost and time when the answers were made (a reused stage's too); judging is in the stages above."</p>
        <table class="grid small" id="method-costs">
            <thead><tr><th>"Method"</th><th class="num">"Answers"</th><th class="num">"Calls"</th><th class="num">"Tokens"</th><th class="num">"Cost"</th><th class="num">"Seconds"</th></tr></thead>
            <tbody>
                {r.methods.iter().map(|m| view! {
                    <tr><td>{m.method.clone()}</td><td class="num">{format::int(m.answers)}</td><td class="num">{format::int(m.calls)}</td>
                        <td class="num">{format::int(m.tokens)}</td><td class="num">{format::usd(m.cost_usd)}</td><td class="num">{format!("{:.1}", m.seconds)}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
        {(!r.sanity.is_empty()).then(|| view! {
            <h2>"Sanity checks"</h2>
            <ul id="sanity-checks">
                {r.sanity.iter().map(|(name, text, even)| {
                    let class = match even { Some(true) => "verdict even", Some(false) => "verdict uneven", None => "verdict" };
                    view! { <li class=class><strong>{name.clone()}</strong>": " {text.clone()}</li> }
                }).collect_view()}
            </ul>
        })}
        {r.evaluations.iter().map(|ev| {
            let id = ev.evaluation.id;
            view! {
                <section class="experiment-evaluation" data-evaluation=id>
                    <h2>{format!("Evaluation #{id} · {}", ev.evaluation.name)}</h2>
                    <p class="small muted">{format!("Judged by {} · {} · {} calls ({} from cache)",
                        ev.evaluation.judge, ev.evaluation.settings_text(), format::int(ev.calls), format::int(ev.cached_calls))}
                        {(!shared).then(|| view! { " · " <a href=format!("/projects/{project}/evaluations/{id}")>"its full report"</a> })}</p>
                    {ev.box_plot.clone().map(|figure| view! {
                        <crate::components::Plot base=String::new() name="box".into() figure alt="Box plots of win and tie rates over trials"/>
                    })}
                    <crate::pages::evaluations::PairTable rows=ev.pairs.clone() unbiased=ev.evaluation.unbiased() legacy=ev.evaluation.legacy()/>
                    <div class="plots-row">
                        {ev.heatmap.clone().map(|figure| view! {
                            <crate::components::Plot base=String::new() name="heatmap".into() figure alt="Relative win rate heatmap"/>
                        })}
                        {ev.legacy_heatmap.clone().map(|figure| view! {
                            <crate::components::Plot base=String::new() name="legacy-heatmap".into() figure alt="Relative win rate heatmap, legacy"/>
                        })}
                    </div>
                </section>
            }
        }).collect_view()}
        {(!r.metrics.is_empty()).then(|| view! {
            <h2>"Reference-based metrics"</h2>
            {r.metrics.iter().map(|m| view! {
                <table class="grid small metrics-table1" data-run=m.run_id>
                    <thead><tr><th>"Answer set"</th><th class="num">"MAP"</th><th class="num">{format!("nDCG@{}", m.k)}</th><th class="num">{format!("Recall@{}", m.k)}</th>
                        <th class="num">"CS"</th><th class="num">"ROUGE-1"</th><th class="num">"BLEU"</th></tr></thead>
                    <tbody>
                        {m.sets.iter().map(|s| {
                            let o = &s.overall;
                            let f = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.3}"));
                            view! { <tr><td>{s.name.clone()}</td><td class="num">{f(o.map)}</td><td class="num">{f(o.ndcg)}</td><td class="num">{f(o.recall)}</td>
                                <td class="num">{format!("{:.3}", o.cs)}</td><td class="num">{format!("{:.3}", o.rouge1)}</td><td class="num">{format!("{:.2}", o.bleu)}</td></tr> }
                        }).collect_view()}
                    </tbody>
                </table>
                {(!shared).then(|| view! { <p class="small"><a href=format!("/projects/{project}/metrics/{}", m.run_id)>"The full metrics report (granularity, splits, Table 4)"</a></p> })}
            }).collect_view()}
        })}
    }
}

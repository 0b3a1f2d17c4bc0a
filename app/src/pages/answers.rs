//! `/projects/:id/answers`: answer a question set with a built-in RAG method
//! (a job), import answers from any other system, the cost table (seed 000
//! Table II) with its chart, and two answer sets side by side, each answer
//! with the context it was given.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::answers::{
    answer_methods, get_answer, get_answer_page, get_cost_table, list_answer_sets, DeleteAnswerSet, MethodInfo,
    PlanAnswers, StartAnswers,
};
use crate::api::jobs::latest_jobs;
use crate::api::projects::get_project;
use crate::api::questions::list_question_sets;
use crate::api::settings::get_llm_info;
use crate::components::help::{Cite, Paper};
use crate::components::jobs::{live_ticks, LatestJob, Toggle, Watch};
use crate::components::route_id;
use crate::components::{ActionError, ConfirmDelete, ErrorNote, NoCacheBox, Pager, ProjectBar};
use crate::format;
use crate::model::{AnswerBrief, AnswerPairRow, AnswerSetView, CostRow, QuestionSetView};

fn seconds(ms: Option<f64>) -> String {
    ms.map_or("—".into(), |ms| format!("{:.2}", ms / 1000.0))
}

/// A set's parameters as one line of JSON (the method's settings and the
/// target length; an import's file).
fn parameters_text(json: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let mut shown = v.get("params").cloned().unwrap_or_else(|| v.clone());
    if let (Some(t), Some(o)) = (v.get("target_words").filter(|t| !t.is_null()), shown.as_object_mut()) {
        o.insert("target_words".into(), t.clone());
    }
    shown.to_string()
}

fn avg(v: Option<f64>, digits: usize) -> String {
    match v {
        None => "—".into(),
        Some(v) if digits == 0 => format::int(v.round() as i64),
        Some(v) => format!("{v:.digits$}"),
    }
}

#[component]
pub fn AnswersPage() -> impl IntoView {
    let id = route_id("id");
    let query = use_query_map();
    let project = Resource::new(move || id.get(), get_project);
    let llm = Resource::new(|| (), |_| get_llm_info());
    let methods = Resource::new(|| (), |_| answer_methods());
    let start = ServerAction::<StartAnswers>::new();
    let delete_set = ServerAction::<DeleteAnswerSet>::new();
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(id.get()));
    let jobs = Resource::new(move || (id.get(), tick.get(), start.version().get()), |(id, ..)| latest_jobs(id));
    let finished = RwSignal::new(0u64);
    let question_sets = Resource::new(move || id.get(), list_question_sets);
    let sets = Resource::new(
        move || (id.get(), finished.get(), delete_set.version().get()),
        |(id, _, _)| list_answer_sets(id),
    );
    let costs =
        Resource::new(move || (id.get(), finished.get(), delete_set.version().get()), |(id, _, _)| get_cost_table(id));
    // Whether the page opened with no answers (the form starts open then);
    // not refreshed, so finishing a job does not re-render the form.
    let initially = Resource::new(move || id.get(), list_answer_sets);
    let chosen = Memo::new(move |_| query.read().get("answers").and_then(|s| s.parse::<i64>().ok()));
    let compare = Memo::new(move |_| query.read().get("compare").and_then(|s| s.parse::<i64>().ok()));
    let import_error = Memo::new(move |_| query.read().get("import_error"));

    view! {
        <Title text="Answers"/>
        <ProjectBar project_id=id.get_untracked() project active="answers"/>
        <main class="page wide">
            <h1>"Answers"</h1>
            <LatestJob project_id=id.get_untracked() kind=crate::model::JobKind::Answers label="Answers" dom_id="answers-job" jobs live finished/>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let info = llm.await.ok();
                    let qs = question_sets.await.unwrap_or_default();
                    let ms = methods.await.unwrap_or_default();
                    let none_yet = initially.await.map(|s| s.is_empty()).unwrap_or(false);
                    view! {
                        <GenerateForm action=start question_sets=qs.clone() methods=ms open=none_yet
                            llm=info.map(|l| (l.provider, l.label))/>
                        <ImportForm project_id=id.get_untracked() question_sets=qs import_error/>
                    }
                })}
            </Transition>
            <ActionError action=start/>
            <h2>"Cost per question"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match costs.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(rows) if rows.is_empty() => view! {
                            <p class="muted" id="no-answers">"No answers yet. Answer a question set with a method, or import answers from your own system."</p>
                        }.into_any(),
                        Ok(rows) => {
                            let qs = question_sets.await.unwrap_or_default();
                            view! { <CostTable project_id=id.get_untracked() rows question_sets=qs delete_set/> }.into_any()
                        }
                    }
                })}
            </Transition>
            <ActionError action=delete_set/>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let list = sets.await.unwrap_or_default();
                    let qs = question_sets.await.unwrap_or_default();
                    let sizes = costs.await.unwrap_or_default();
                    // By default the newest set a user made (a sanity check's
                    // second run belongs to its check: never a default).
                    let a = chosen.get().or(list.iter().rev().find(|s| s.sanity_of.is_none()).map(|s| s.id));
                    let current = list.iter().find(|s| Some(s.id) == a).cloned();
                    current.map(|a| {
                        // By default the other set over the same questions most recently made.
                        let b = compare.get().or_else(|| {
                            list.iter()
                                .rev()
                                .find(|s| s.id != a.id && s.question_set_id == a.question_set_id && s.sanity_of.is_none())
                                .map(|s| s.id)
                        });
                        let context = sizes.iter().find(|r| r.answer_set_id == a.id).map(|r| r.context.clone());
                        view! { <SideBySide project_id=id.get_untracked() sets=list.clone() question_sets=qs a=a.id b context/> }
                    })
                })}
            </Transition>
        </main>
    }
}

/// What the Answers form's price rests on.
const ANSWERS_PRICE_NOTE: &str = "Calls are the method's per question (GraphRAG's community reports, made once a project, come on top the first time); prompts are counted from this project's chunks, the method's context (its k or token budgets) and its prompt template; replies at the target length, or about 150 words. Nothing has been sent.";

#[component]
fn GenerateForm(
    action: ServerAction<StartAnswers>,
    question_sets: Vec<QuestionSetView>,
    methods: Vec<MethodInfo>,
    open: bool,
    llm: Option<(types::ProviderKind, String)>,
) -> impl IntoView {
    let first = methods.first().map(|m| m.defaults.clone()).unwrap_or_default();
    let params = RwSignal::new(first);
    let about = RwSignal::new(methods.first().map(|m| m.about.clone()).unwrap_or_default());
    let fields = RwSignal::new(methods.first().map(|m| m.fields.clone()).unwrap_or_default());
    let remote = |m: &&MethodInfo| !m.fields.is_empty();
    let built_in: Vec<MethodInfo> = methods.iter().filter(|m| !remote(m)).cloned().collect();
    let services: Vec<MethodInfo> = methods.iter().filter(remote).cloned().collect();
    let by_name = methods.clone();
    // The price of what the form would start, asked again whenever a field
    // changes, and once with the form's defaults.
    let (plan, form, replan) = crate::pages::evaluations::priced::<PlanAnswers>();
    view! {
        <details class="panel build-panel" open=open>
            <summary>"Answer a question set with a built-in method or your running system"</summary>
            <p class="muted small">"Each built-in method retrieves context for every question and has the LLM answer from it; the retrieved context, every call's tokens and the query time are kept. Several configurations of one method can be compared: edit the parameters. A running LightRAG server, Microsoft GraphRAG or a chat endpoint answers through its preset; anything else through http: docs/bring-your-own-system.md."</p>
            {llm.map(|(provider, label)| view! {
                <p class="llm-line">"LLM: " <strong class=format!("provider-{provider}")>{label}</strong>
                    {(provider == types::ProviderKind::Offline).then(|| view! { <span class="muted">" — extractive answers (the context's best-matching sentences), not written by a language model"</span> })}
                </p>
            })}
            {if question_sets.is_empty() {
                view! { <p class="muted">"Make or import a question set first (Questions)."</p> }.into_any()
            } else {
                view! {
                    <div on:input=move |_| replan() on:change=move |_| replan()>
                    <ActionForm action node_ref=form attr:class="stack-form" attr:id="answers-form">
                        <div class="row-fields">
                            <label>"Question set "
                                <select name="question_set_id">
                                    {question_sets.iter().rev().map(|s| view! {
                                        <option value=s.id.to_string()>{format!("#{} {} ({} questions)", s.id, s.name, s.questions)}</option>
                                    }).collect_view()}
                                </select>
                            </label>
                            <label>"Method "
                                <select name="req[name]" on:change=move |ev| {
                                    let name = event_target_value(&ev);
                                    if let Some(m) = by_name.iter().find(|m| m.name == name) {
                                        params.set(m.defaults.clone());
                                        about.set(m.about.clone());
                                        fields.set(m.fields.clone());
                                    }
                                }>
                                    <optgroup label="Built in">
                                        {built_in.iter().map(|m| view! { <option value=m.name.clone()>{m.name.clone()}</option> }).collect_view()}
                                    </optgroup>
                                    <optgroup label="Your running system">
                                        {services.iter().map(|m| view! { <option value=m.name.clone()>{m.name.clone()}</option> }).collect_view()}
                                    </optgroup>
                                </select>
                            </label>
                            <label>"Target length (words) " <input type="number" name="req[target_words]" min="1" max="10000" placeholder="none"/></label>
                            <label>"Name " <input type="text" name="name" placeholder="(method and changed parameters)"/></label>
                        </div>
                        <p class="muted small method-about">{move || about.get()}</p>
                        <label>"Parameters (JSON) "
                            <textarea name="req[params]" rows="6" class="code" prop:value=move || params.get()
                                on:input=move |ev| params.set(event_target_value(&ev))></textarea>
                        </label>
                        <Show when=move || !fields.get().is_empty()>
                            <dl class="method-fields small" id="method-fields">
                                {move || fields.get().into_iter().map(|(f, m)| view! { <dt><code>{f}</code></dt><dd>{m}</dd> }).collect_view()}
                            </dl>
                        </Show>
                        <p class="muted small">"Answers are sampled at the model's default temperature (OpenAI's is 1). Add \"temperature\": 0 to 2 to the parameters to set another; it is kept with the set. A sanity check's second run samples too: at the set's temperature when above 0, else at the model's default."</p>
                        <NoCacheBox/>
                        {crate::pages::evaluations::price_view(plan, "answers-price", ANSWERS_PRICE_NOTE)}
                        <div><button type="submit" id="generate-answers" disabled=move || action.pending().get()>"Generate answers"</button></div>
                    </ActionForm>
                    </div>
                }.into_any()
            }}
        </details>
    }
}

#[component]
fn ImportForm(
    project_id: i64,
    question_sets: Vec<QuestionSetView>,
    import_error: Memo<Option<String>>,
) -> impl IntoView {
    view! {
        <details class="panel" open=move || import_error.get().is_some()>
            <summary>"Import answers from your own system (.jsonl or .csv)"</summary>
            <form method="post" enctype="multipart/form-data" class="inline-form" id="import-answers-form"
                action=format!("/api/projects/{project_id}/answers/import")>
                <label>"For question set "
                    <select name="set">
                        {question_sets.iter().rev().map(|s| view! { <option value=s.id.to_string()>{format!("#{} {}", s.id, s.name)}</option> }).collect_view()}
                    </select>
                </label>
                <label>"Name " <input type="text" name="name" placeholder="My RAG system" required/></label>
                <input type="file" name="file" accept=".jsonl,.ndjson,.csv" required/>
                <button type="submit">"Import"</button>
            </form>
            <p class="muted small">"One answer per line: " <code>"question_id"</code> " (as exported from Questions) or the exact " <code>"question"</code> ", " <code>"answer"</code>
                ", and optionally " <code>"contexts"</code> " (a list of strings), " <code>"prompt_tokens"</code> ", " <code>"completion_tokens"</code> ", " <code>"latency_ms"</code>
                ". Every unmatched or malformed line is listed, and then nothing is imported. Worked examples for LightRAG, Microsoft GraphRAG and nano-graphrag: docs/bring-your-own-system.md."</p>
            {move || import_error.get().map(|e| view! { <p class="error" role="alert" id="import-error">{e}</p> })}
        </details>
    }
}

/// Seed 000 Table II: average tokens and query time per question, per
/// answer set, with the chart.
#[component]
fn CostTable(
    project_id: i64,
    rows: Vec<CostRow>,
    question_sets: Vec<QuestionSetView>,
    delete_set: ServerAction<DeleteAnswerSet>,
) -> impl IntoView {
    // Each row names the question set it answered (two BM25 sets of
    // two question sets are not one method's two runs).
    let answered = move |id: i64| {
        question_sets.iter().find(|q| q.id == id).map_or(format!("#{id}"), |q| format!("#{} {}", q.id, q.name))
    };
    // The chart's URL changes with the table, so a new set shows at once.
    let version: i64 = rows.iter().map(|r| r.answer_set_id * 31 + r.answers).sum();
    // A sanity check's second runs are listed apart, under their checks.
    let (checks, rows): (Vec<CostRow>, Vec<CostRow>) = rows.into_iter().partition(|r| r.sanity_of.is_some());
    let flagged: Vec<(String, crate::model::ContextSize)> =
        rows.iter().map(|r| (format!("#{} {}", r.answer_set_id, r.name), r.context.clone())).collect();
    view! {
        <div class="table-scroll">
        <table class="grid cost-table">
            <thead><tr>
                <th>"Answer set"</th><th>"Method"</th><th>"Questions"</th><th class="num">"Answers"</th><th class="num">"Tokens / question"</th>
                <th class="num">"Query time (s)"</th><th class="num">"Retrieval (s)"</th><th class="num">"LLM calls / question"</th>
                <th class="num">"Cost / question"</th><th class="num" title="Mean characters of retrieved text each answer was given">"Retrieved text / question (characters)"</th><th>"Answered by"</th><th></th>
            </tr></thead>
            <tbody>
                {rows.into_iter().map(|r| {
                    let set_id = r.answer_set_id;
                    let partial = (r.measured > 0 && r.measured < r.answers).then(|| format!(" (of {} answers)", r.measured));
                    view! {
                        <tr data-answers=set_id>
                            <td><a href=format!("/projects/{project_id}/answers?answers={set_id}")>{format!("#{set_id} {}", r.name)}</a></td>
                            <td><span class="badge" title=parameters_text(&r.parameters)>{r.method.clone()}</span></td>
                            <td class="small">{answered(r.question_set_id)}</td>
                            <td class="num">{format::int(r.answers)}</td>
                            <td class="num tokens">{avg(r.avg_tokens, 0)}{partial}</td>
                            <td class="num">{seconds(r.avg_query_ms)}</td>
                            <td class="num">{seconds(r.avg_retrieval_ms)}</td>
                            <td class="num">{avg(r.avg_llm_calls, 1)}</td>
                            <td class="num cost">{r.avg_cost_usd.map_or("—".into(), format::usd)}
                                {r.cached_input_share.filter(|s| *s > 0.0).map(|s| view! {
                                    <br/><span class="small muted cached-input" title="Prompt tokens the provider read from its prefix cache, billed at its cached-input rate">
                                        {format!("{:.0}% of input cached", s * 100.0)}</span>
                                })}</td>
                            <td class="num context-size">{context_cell(&r.context)}</td>
                            <td class="small">{r.made_by.clone().unwrap_or_else(|| "imported".into())}</td>
                            <td class="actions">
                                <a href=format!("/api/projects/{project_id}/answers/{set_id}/export?format=jsonl") download="">"JSONL"</a> " "
                                <a href=format!("/api/projects/{project_id}/answers/{set_id}/export?format=csv") download="">"CSV"</a> " "
                                <a href=format!("/api/projects/{project_id}/answers/{set_id}/export?format=lightrag") download=""
                                    title="The result list LightRAG's reproduce/ and batch_eval.py read">"LightRAG"</a> " "
                                <a href=format!("/api/projects/{project_id}/answers/{set_id}/export?format=graphrag-bench") download=""
                                    title="The predictions GraphRAG-Bench's evaluators read">"GraphRAG-Bench"</a> " "
                                <ConfirmDelete prompt=format!("Delete answer set #{set_id} and its {} answers?", r.answers)
                                    on_confirm=move |_| { delete_set.dispatch(DeleteAnswerSet { answer_set_id: set_id }); }/>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
        {(!checks.is_empty()).then(|| view! {
            <details class="panel" id="sanity-sets">
                <summary>{format!("Sanity checks' second runs ({})", checks.len())}</summary>
                <p class="muted small">"A sanity check answers the questions again with a set's own method and judges the two runs against each other; its second run belongs to the check, so the table above, the chart and the default choices leave it out."</p>
                <ul>
                    {checks.into_iter().map(|r| {
                        let set_id = r.answer_set_id;
                        let check = r.sanity_of.unwrap_or_default();
                        view! {
                            <li data-answers=set_id>
                                <a href=format!("/projects/{project_id}/answers?answers={set_id}")>{format!("#{set_id} {}", r.name)}</a>
                                {format!(" · {} answers · ", format::int(r.answers))}
                                <a href=format!("/projects/{project_id}/evaluations/{check}")>{format!("its sanity check, evaluation #{check}")}</a>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </details>
        })}
        <ThinContext rows=flagged/>
        <p class="muted small">"Averages per answered question, as " <Cite paper=Paper::Unbiased at="Table II"/> " reports them: tokens of every LLM call an answer made (keywords, map steps, the answer), and the time from question to answer including the calls. Imported answers count only where their file gave the figure. Writing community reports (GraphRAG-style indexing) is not included."</p>
        <div class="cost-chart-box">
            <img class="cost-chart" src=format!("/api/projects/{project_id}/answers/cost.svg?v={version}") alt="Tokens and query time per question, per answer set" width="100%"/>
        </div>
        <p class="small"><a href=format!("/api/projects/{project_id}/answers/cost.svg") download="cost.svg">"Download SVG"</a></p>
    }
}

/// A cost-table cell: mean characters of retrieved text, marked when some
/// answers rest on little.
fn context_cell(c: &crate::model::ContextSize) -> impl IntoView {
    let mean = c.avg_chars.map_or("—".into(), |m| format::int(m.round() as i64));
    let mark = c.flag().map(|f| {
        let class = if c.warns() { "warn thin-mark" } else { "muted thin-mark" };
        view! { " " <span class=class title=f>"⚑"</span> }
    });
    view! { {mean}{mark} }
}

/// The sets some of whose answers rest on little or no retrieved text, in
/// words, under the cost table.
#[component]
fn ThinContext(rows: Vec<(String, crate::model::ContextSize)>) -> impl IntoView {
    let flagged: Vec<_> = rows.into_iter().filter_map(|(name, c)| Some((name, c.flag()?, c.warns()))).collect();
    (!flagged.is_empty()).then(|| {
        view! {
            <div class="thin-context" id="thin-context">
                <p class="small"><strong>"Answers written from little retrieved text, or without it reported"</strong>
                    <span class="muted">{format!(" — under {} characters (about a short paragraph): such an answer is close to the model answering from the question alone, and its verdicts say little about the method's retrieval.", crate::model::THIN_CONTEXT_CHARS)}</span></p>
                <ul class="small">
                    {flagged.into_iter().map(|(name, f, warns)| view! {
                        <li class=if warns { "warn" } else { "" }>{format!("{name}: {f}")}</li>
                    }).collect_view()}
                </ul>
            </div>
        }
    })
}

/// Two answer sets over the same questions, a page of answers at a time
/// (`?page=N&q=…` in the address), each answer's beginning with its size;
/// the whole answer and its context load when it is opened.
#[component]
fn SideBySide(
    project_id: i64,
    sets: Vec<AnswerSetView>,
    question_sets: Vec<QuestionSetView>,
    a: i64,
    b: Option<i64>,
    /// How much retrieved text the shown set's answers rest on.
    context: Option<crate::model::ContextSize>,
) -> impl IntoView {
    let query = use_query_map();
    let current = sets.iter().find(|s| s.id == a).cloned();
    let Some(current) = current else { return ().into_any() };
    let questions_name = question_sets
        .iter()
        .find(|q| q.id == current.question_set_id)
        .map_or(format!("question set #{}", current.question_set_id), |q| format!("#{} {}", q.id, q.name));
    let peers: Vec<AnswerSetView> =
        sets.iter().filter(|s| s.question_set_id == current.question_set_id && s.id != a).cloned().collect();
    let b = b.filter(|b| peers.iter().any(|p| p.id == *b));
    let page = Memo::new(move |_| query.read().get("page").and_then(|p| p.parse::<i64>().ok()).unwrap_or(1));
    let search = Memo::new(move |_| query.read().get("q").unwrap_or_default());
    let rows = Resource::new(
        move || (page.get(), search.get()),
        move |(page, search)| get_answer_page(a, b, page, (!search.is_empty()).then_some(search)),
    );
    let b_name = b.and_then(|b| peers.iter().find(|p| p.id == b)).map(|p| format!("#{} {}", p.id, p.name));
    let a_name = format!("#{} {}", current.id, current.name);
    let address = move |page: i64, search: &str| {
        let mut q = vec![format!("answers={a}")];
        if let Some(b) = b {
            q.push(format!("compare={b}"));
        }
        if !search.is_empty() {
            q.push(format!("q={}", crate::format::query_value(search)));
        }
        if page > 1 {
            q.push(format!("page={page}"));
        }
        format!("/projects/{project_id}/answers?{}", q.join("&"))
    };
    view! {
        <section class="side-by-side" id="side-by-side">
            <h2>"Answers of " {a_name.clone()}</h2>
            <p class="muted">{format!("To {questions_name}")}
                {current.made_by.clone().map(|w| format!(" · answered by {w}"))}
                {current.job_id.map(|j| view! { " · " <a href=format!("/projects/{project_id}/jobs/{j}")>{format!("job #{j}")}</a> })}</p>
            <p class="small parameters">"Method " <span class="badge">{current.method.clone()}</span> " · parameters "
                <code>{parameters_text(&current.parameters)}</code></p>
            {context.and_then(|c| {
                let class = if c.warns() { "warn small" } else { "muted small" };
                c.flag().map(|f| view! { <p class=class id="set-thin-context">{f}"."</p> })
            })}
            <p class="inline-form">"Beside it: "
                {if peers.is_empty() {
                    view! { <span class="muted">"no other answer set for these questions yet"</span> }.into_any()
                } else {
                    peers.iter().map(|p| {
                        let class = if Some(p.id) == b { "chip selected" } else { "chip" };
                        view! { <a class=class href=format!("/projects/{project_id}/answers?answers={a}&compare={}", p.id)>{format!("#{} {}", p.id, p.name)}</a> " " }
                    }).collect_view().into_any()
                }}
            </p>
            <form method="get" action=format!("/projects/{project_id}/answers") class="inline-form" id="answer-search" role="search">
                <input type="hidden" name="answers" value=a/>
                {b.map(|b| view! { <input type="hidden" name="compare" value=b/> })}
                <label>"Questions containing " <input type="search" name="q" prop:value=move || search.get()/></label>
                <button type="submit">"Search"</button>
            </form>
            <Transition fallback=|| view! { <p class="muted">"Loading answers…"</p> }>
                {move || {
                    let b_name = b_name.clone();
                    let a_name = a_name.clone();
                    Suspend::new(async move {
                        match rows.await {
                            Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                            Ok(p) => {
                                let searched = search.get_untracked();
                                let href = move |n: i64| address(n, &searched);
                                view! {
                                    <AnswerRows rows=p.rows.clone() a left_name=a_name b right_name=b_name/>
                                    <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::ANSWERS_PER_PAGE
                                        count=p.rows.len() href id="answer-pager" label="Pages of answers"/>
                                }.into_any()
                            }
                        }
                    })
                }}
            </Transition>
        </section>
    }
    .into_any()
}

#[component]
fn AnswerRows(
    rows: Vec<AnswerPairRow>,
    a: i64,
    left_name: String,
    b: Option<i64>,
    right_name: Option<String>,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" id="no-matching-answers">"No answer to a question containing that."</p> }
            .into_any();
    }
    view! {
        <table class="grid answers">
            <thead><tr><th>"Question"</th><th>{left_name}</th>{right_name.map(|n| view! { <th>{n}</th> })}</tr></thead>
            <tbody>
                {rows.into_iter().map(|r| {
                    let question_id = r.question_id;
                    view! {
                        <tr data-question=question_id>
                            <td class="question">{r.question}</td>
                            <td><AnswerCell set=a question_id brief=Some(r.a)/></td>
                            {b.map(|b| view! { <td><AnswerCell set=b question_id brief=r.b/></td> })}
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// An answer's beginning and size; opened, the whole answer and its
/// context, fetched then.
#[component]
fn AnswerCell(set: i64, question_id: i64, brief: Option<AnswerBrief>) -> impl IntoView {
    let Some(a) = brief else { return view! { <span class="muted">"no answer"</span> }.into_any() };
    let open = RwSignal::new(false);
    let meta = format!(
        "{} words · {} tokens · {} s",
        format::int(a.words),
        a.tokens.map_or("—".into(), format::int),
        seconds(a.query_ms)
    );
    let what = if a.whole { "its context" } else { "the whole answer and its context" };
    let pieces = format!(
        " {what} ({} piece{}{})",
        format::int(a.contexts),
        if a.contexts == 1 { "" } else { "s" },
        a.context_chars.map_or(String::new(), |c| format!(", {} characters", format::int(c)))
    );
    let thin = a.context_chars.filter(|c| *c < crate::model::THIN_CONTEXT_CHARS);
    view! {
        <div class="answer">
            <Show when=move || !open.get()>
                <p class="answer-text">{a.preview.clone()}</p>
            </Show>
            <Show when=move || open.get()>
                <WholeAnswer set question_id/>
            </Show>
            <p class="muted small">{meta}
                {a.truncated.then(|| view! { " · " <span class="warn cut" title="The model's reply reached its max_tokens budget and was cut there">"cut at max_tokens"</span> })}
                {thin.map(|c| view! { " · " <span class="warn thin-context" title=format!("Written from {c} characters of retrieved text (under {}): close to answering from the question alone", crate::model::THIN_CONTEXT_CHARS)>
                    {if c == 0 { "no retrieved text".to_string() } else { "little retrieved text".to_string() }}</span> })}</p>
            <div class="answer-actions small"><Toggle open show="Open" hide="Close" class="open-answer"/>{pieces}</div>
        </div>
    }
    .into_any()
}

#[component]
fn WholeAnswer(set: i64, question_id: i64) -> impl IntoView {
    let answer = Resource::new(|| (), move |_| get_answer(set, question_id));
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading the answer…"</p> }>
            {move || Suspend::new(async move {
                match answer.await {
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    Ok(a) => view! {
                        <p class="answer-text whole">{a.answer}</p>
                        <div class="contexts">
                            <p class="small"><strong>{format!("Context ({})", a.contexts.len())}</strong></p>
                            <ol>
                                {a.contexts.into_iter().map(|c| view! {
                                    <li><span class="badge">{format!("{} {}", c.kind, c.id)}</span> " " {c.text}</li>
                                }).collect_view()}
                            </ol>
                        </div>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

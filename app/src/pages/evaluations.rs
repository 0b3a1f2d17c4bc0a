//! `/projects/:id/evaluations`: start an evaluation (answer sets of one
//! question set judged in pairs under the unbiased protocol, the legacy one,
//! or both), one-click sanity checks, and the list of evaluations.
//! `/projects/:id/evaluations/:eval`: the report — box plots over trials,
//! the relative-win-rate heatmaps, per-aspect and per-level bars, legacy
//! beside unbiased, statistics, the bias audit, downloads — and the
//! drill-down to every judgment of a question.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::api::answers::list_answer_sets;
use crate::api::evaluations::{
    get_drill, get_drill_questions, get_evaluation_report, list_evaluations, DeleteEvaluation, PlanEvaluation,
    StartEvaluation, StartSanity,
};
use crate::api::jobs::latest_jobs;
use crate::api::projects::get_project;
use crate::api::questions::list_question_sets;
use crate::api::settings::get_llm_info;
use crate::components::help::{text as help, Cite, Help, Paper};
use crate::components::jobs::{live_ticks, throttle, ItemCalls, LatestJob, ProgressBar, StatusBadge, Watch};
use crate::components::route_id;
use crate::components::{ActionError, ConfirmDelete, ErrorNote, NoCacheBox, Pager, Plot, ProjectBar, SharePanel};
use crate::format;
use crate::format::pct;
use crate::model::{
    defaults, AnswerSetView, DrillView, EvaluationReportView, EvaluationView, PairRowView, QuestionSetView, RunPlan,
};

fn judge_class(judge: &str) -> &'static str {
    if judge.contains("no LLM") {
        "judge-note not-llm"
    } else {
        "judge-note"
    }
}

#[component]
pub fn EvaluationsPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let llm = Resource::new(|| (), |_| get_llm_info());
    let start = ServerAction::<StartEvaluation>::new();
    let sanity = ServerAction::<StartSanity>::new();
    let delete = ServerAction::<DeleteEvaluation>::new();
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(id.get()));
    let jobs = Resource::new(
        move || (id.get(), tick.get(), start.version().get(), sanity.version().get()),
        |(id, ..)| latest_jobs(id),
    );
    let finished = RwSignal::new(0u64);
    let question_sets = Resource::new(move || id.get(), list_question_sets);
    let answer_sets = Resource::new(move || (id.get(), finished.get()), |(id, _)| list_answer_sets(id));
    let evaluations = Resource::new(
        move || (id.get(), tick.get(), start.version().get(), sanity.version().get(), delete.version().get()),
        |(id, ..)| list_evaluations(id),
    );
    // The pilots a plan can start from: read once, so the form is not
    // drawn again while a job's progress ticks.
    let pilots = Resource::new(move || id.get(), list_evaluations);
    view! {
        <Title text="Evaluations"/>
        <ProjectBar project_id=id.get_untracked() project active="evaluations"/>
        <main class="page wide">
            <h1>"Evaluations"</h1>
            <p class="muted">"Answer sets of one question set judged in pairs. The unbiased protocol (" <Cite paper=Paper::Unbiased at="§IV, Unbiased Evaluation Procedure"/> ") aligns the answers' lengths, judges each pair in both orders, scores four aspects 0–5 with ties, and repeats the whole judgment over trials; the legacy protocol (LightRAG, GraphRAG) shows A first and forces a winner. Both run on the same answers so their verdicts can be compared."</p>
            <LatestJob project_id=id.get_untracked() kind=crate::model::JobKind::Evaluation label="Evaluation" dom_id="evaluation-job" jobs live finished/>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let info = llm.await.ok();
                    let qs = question_sets.await.unwrap_or_default();
                    let sets = answer_sets.await.unwrap_or_default();
                    let pilots = pilots.await.unwrap_or_default().into_iter()
                        .filter(|e| !e.sanity && e.unbiased() && matches!(e.status, Some(crate::model::JobStatus::Done)))
                        .collect();
                    view! {
                        <NewEvaluation action=start question_sets=qs sets=sets.clone() pilots
                            llm=info.map(|l| (l.provider, l.label))/>
                        <SanityChecks action=sanity sets/>
                    }
                })}
            </Suspense>
            <ActionError action=start/>
            <ActionError action=sanity/>
            <h2>"All evaluations"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match evaluations.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(list) if list.is_empty() => view! {
                            <p class="muted" id="no-evaluations">"No evaluations yet. Answer a question set with two or more methods (Answers), then compare them here."</p>
                        }.into_any(),
                        Ok(list) => {
                            // Sanity checks apart, under their own heading:
                            // each judged a method against its second run.
                            let (checks, list): (Vec<_>, Vec<_>) = list.into_iter().partition(|e| e.sanity);
                            view! {
                                {if list.is_empty() {
                                    view! { <p class="muted" id="no-evaluations">"No evaluations yet: only sanity checks (below). Compare two or more methods with the form above."</p> }.into_any()
                                } else {
                                    view! { <EvaluationList project_id=id.get_untracked() list delete/> }.into_any()
                                }}
                                {(!checks.is_empty()).then(|| view! {
                                    <h2 id="sanity-checks">"Sanity checks"</h2>
                                    <p class="muted small">"Each judged a method against a second run of itself (the “(second run)” answer set it made, which belongs to the check: answer lists, default choices and “every method” leave it out)."</p>
                                    <EvaluationList project_id=id.get_untracked() list=checks delete/>
                                })}
                            }.into_any()
                        }
                    }
                })}
            </Transition>
            <ActionError action=delete/>
        </main>
    }
}

#[component]
fn EvaluationList(project_id: i64, list: Vec<EvaluationView>, delete: ServerAction<DeleteEvaluation>) -> impl IntoView {
    view! {
        <table class="grid evaluations">
            <thead><tr><th>"Evaluation"</th><th>"Question set"</th><th>"Protocol"</th><th>"Judge"</th><th>"Status"</th><th class="num">"Tokens"</th><th></th></tr></thead>
            <tbody>
                {list.into_iter().map(|e| {
                    let eid = e.id;
                    view! {
                        <tr data-evaluation=eid>
                            <td><a href=format!("/projects/{project_id}/evaluations/{eid}")>{format!("#{eid} {}", e.name)}</a>
                                {e.sanity.then(|| view! { " " <span class="badge">"sanity check"</span> })}</td>
                            <td class="small">{format!("#{} {}", e.question_set_id, e.question_set)}</td>
                            <td class="small">{e.settings_short()}</td>
                            <td class="small">{e.judge.clone()}</td>
                            <td><StatusBadge status=e.status.map_or("unknown".to_string(), |s| s.to_string())/> <span class="small muted">{format!(" {}/{}", format::int(e.done), format::int(e.total))}</span></td>
                            <td class="num">{if e.judge.contains("no LLM") && e.cost_usd == 0.0 { "— (no model)".to_string() } else { format::int(e.tokens) }}</td>
                            <td class="actions">
                                <ConfirmDelete prompt=format!("Delete evaluation #{eid}? Its judgments stay in the job's log.")
                                    on_confirm=move |_| { delete.dispatch(DeleteEvaluation { id: eid }); }/>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
fn NewEvaluation(
    action: ServerAction<StartEvaluation>,
    question_sets: Vec<QuestionSetView>,
    sets: Vec<AnswerSetView>,
    /// Finished evaluations under the unbiased protocol: a plan's pilots.
    pilots: Vec<EvaluationView>,
    llm: Option<(types::ProviderKind, String)>,
) -> impl IntoView {
    // A sanity check's second run is the same method again: it belongs to
    // its check, and is neither offered nor ticked here.
    let sets: Vec<AnswerSetView> = sets.into_iter().filter(|s| s.sanity_of.is_none()).collect();
    let usable: Vec<QuestionSetView> = question_sets
        .into_iter()
        .filter(|q| sets.iter().filter(|s| s.question_set_id == q.id && s.answers > 0).count() >= 2)
        .collect();
    let first_set = usable.last().map(|q| q.id).unwrap_or_default();
    let question_set = RwSignal::new(first_set);
    let chosen = RwSignal::new(Vec::<i64>::new());
    let judge = RwSignal::new("llm".to_string());
    let all_sets = StoredValue::new(sets);
    // Every set of the chosen question set ticked by default.
    Effect::new(move |_| {
        let q = question_set.get();
        chosen.set(
            all_sets
                .with_value(|s| s.iter().filter(|s| s.question_set_id == q && s.answers > 0).map(|s| s.id).collect()),
        );
    });
    let joined = move || chosen.get().iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    // The price of what the form would start, asked again (at most every
    // 400 ms) whenever a field changes.
    let plan = ServerAction::<PlanEvaluation>::new();
    let form = NodeRef::<leptos::html::Form>::new();
    let (align, exchange) = (RwSignal::new(true), RwSignal::new(true));
    let replan = replanner(form, plan);
    // And once the form is drawn with its defaults, and when the chosen
    // sets change (the hidden field follows them).
    Effect::new(move |_| {
        chosen.track();
        replan();
    });
    let offline = llm.as_ref().is_some_and(|(p, _)| *p == types::ProviderKind::Offline);
    view! {
        <details class="panel build-panel" open=true>
            <summary>"New evaluation"</summary>
            {llm.map(|(provider, label)| view! {
                <p class="llm-line">"Configured LLM: " <strong class=format!("provider-{provider}")>{label}</strong>
                    {offline.then(|| view! { <span class="muted">" — the “LLM” judge is then the offline rubric judge (stated rules, no language model); reports say so"</span> })}
                </p>
            })}
            {if usable.is_empty() {
                view! { <p class="muted" id="need-answers">"An evaluation needs a question set with at least two answer sets (Answers)."</p> }.into_any()
            } else {
                view! {
                    <div on:input=move |_| replan() on:change=move |_| replan()>
                    <ActionForm action node_ref=form attr:class="stack-form" attr:id="evaluation-form">
                        <div class="row-fields">
                            <label>"Question set "
                                <select name="question_set_id" on:change=move |ev| {
                                    if let Ok(v) = event_target_value(&ev).parse() { question_set.set(v) }
                                }>
                                    {usable.iter().rev().map(|s| view! {
                                        <option value=s.id.to_string()>{format!("#{} {} ({} questions)", s.id, s.name, s.questions)}</option>
                                    }).collect_view()}
                                </select>
                            </label>
                            <label>"Name " <input type="text" name="name" placeholder="(the answer sets' names)"/></label>
                        </div>
                        <fieldset class="choices" id="answer-set-choices">
                            <legend>"Answer sets compared (every pair is judged)"</legend>
                            {move || all_sets.with_value(|sets| sets.iter().filter(|s| s.question_set_id == question_set.get() && s.answers > 0).map(|s| {
                                let sid = s.id;
                                view! {
                                    <label class="choice">
                                        <input type="checkbox" value=sid.to_string() prop:checked=move || chosen.get().contains(&sid)
                                            on:change=move |ev| {
                                                let on = event_target_checked(&ev);
                                                chosen.update(|c| { c.retain(|x| *x != sid); if on { c.push(sid); c.sort(); } });
                                            }/>
                                        {format!(" #{} {} ", s.id, s.name)} <span class="badge">{s.method.clone()}</span>
                                    </label>
                                }
                            }).collect_view())}
                        </fieldset>
                        <input type="hidden" name="answer_sets" prop:value=joined/>
                        <input type="hidden" name="pairs" value=""/>
                        <div class="row-fields">
                            <label>"Protocol "
                                <select name="req[protocol]">
                                    <option value="both" selected>"unbiased and legacy"</option>
                                    <option value="unbiased">"unbiased only"</option>
                                    <option value="legacy">"legacy only"</option>
                                </select>
                            </label>
                            <label>"Trials (M) " <input type="number" name="req[trials]" required value=defaults::TRIALS.to_string() min="1" max="1000"/><Help text=help::TRIALS/></label>
                            <label>"Repeats per order (N) " <input type="number" name="req[repeats]" required value=defaults::REPEATS.to_string() min="1" max="20"/><Help text=help::REPEATS/></label>
                            <label>"Tolerance (words) " <input type="number" name="req[tolerance]" required value=defaults::TOLERANCE.to_string() min="0"/><Help text=help::TOLERANCE/></label>
                            <label>"Adjustments " <input type="number" name="req[adjustments]" required value=defaults::ADJUSTMENTS.to_string() min="0" max="10"/><Help text=help::ADJUSTMENTS/></label>
                        </div>
                        <div class="row-fields">
                            // On by default: an unchecked box sends nothing, so each
                            // sends its state through a field of its own.
                            <input type="hidden" name="req[align]" value=move || align.get().to_string()/>
                            <input type="hidden" name="req[exchange]" value=move || exchange.get().to_string()/>
                            <label class="check"><input type="checkbox" id="align" checked=true prop:checked=align on:change=move |ev| align.set(event_target_checked(&ev))/>" Length alignment"<Help text=help::ALIGN/></label>
                            <label class="check"><input type="checkbox" id="exchange" checked=true prop:checked=exchange on:change=move |ev| exchange.set(event_target_checked(&ev))/>" Position exchange (AB and BA)"<Help text=help::EXCHANGE/></label>
                            <label class="check"><input type="checkbox" name="req[sequential]" value="true"/>" Sequential trials (stop a pair once settled)"<Help text=help::SEQUENTIAL/></label>
                            <label class="check"><input type="checkbox" name="sanity_first" value="on"/>" Also sanity-check each method never checked (a job per method; its price is below)"<Help text=help::SANITY_FIRST/></label>
                        </div>
                        <div class="row-fields">
                            <label>"Judge "
                                <select name="req[judge]" id="judge-select" on:change=move |ev| judge.set(event_target_value(&ev))>
                                    <option value="llm" selected>"the configured LLM"</option>
                                    <option value="offline">"offline rubric judge (no LLM)"</option>
                                    <option value="simulated">"simulated judge — bias lab (no LLM)"</option>
                                </select>
                            </label>
                            <label>"Scoring prompt "
                                <select name="req[judge_prompt]" id="judge-prompt-select">
                                    <option value="paper" selected>"the paper's rubric"</option>
                                    <option value="content-only">"rubric + \"order and length are not merits\""</option>
                                </select>
                            </label>
                            <label>"Legacy aspects "
                                <select name="req[legacy_aspects]" id="legacy-aspects-select">
                                    <option value="lightrag" selected>"LightRAG's 3 (Comprehensiveness, Diversity, Empowerment)"</option>
                                    <option value="graphrag">"GraphRAG's 4 (… and Directness)"</option>
                                </select>
                                <Help text=help::LEGACY_ASPECTS/>
                            </label>
                            <label>"Judge temperature "
                                <input type="number" name="req[judge_temperature]" id="judge-temperature" min="0" max="2" step="0.1" placeholder="default" inputmode="decimal"/>
                                <Help text=help::JUDGE_TEMPERATURE/>
                            </label>
                            <span class="bias-fields" class:hidden=move || judge.get() != "simulated">
                                <label>"Position bias " <input type="number" name="req[position_bias]" required value=defaults::POSITION_BIAS.to_string() step="0.1"/><Help text=help::POSITION_BIAS/></label>
                                <label>"Length bias / 10 words " <input type="number" name="req[length_bias]" required value=defaults::LENGTH_BIAS.to_string() step="0.05"/><Help text=help::LENGTH_BIAS/></label>
                                <label>"Noise (sd) " <input type="number" name="req[noise]" required value=defaults::NOISE.to_string() step="0.1" min="0"/><Help text=help::NOISE/></label>
                            </span>
                        </div>
                        <div class="row-fields">
                            <label class="wide">"Jury (more judges, optional) "
                                <textarea name="req[jury]" id="jury" rows="2" placeholder="simulated:position=0.8; simulated:length=0.5; offline"></textarea>
                                <Help text=help::JURY/>
                            </label>
                        </div>
                        <p class="muted small">"The defaults are those of " <Cite paper=Paper::Unbiased at="§IV-B"/> {format!(": N = {} judgments per order, M = {} trials, tolerance {} words, and its scoring rubric alone as the prompt; {} adjustments is ours (the paper says “several”). ", defaults::REPEATS, defaults::TRIALS, defaults::TOLERANCE, defaults::ADJUSTMENTS)}"The content-only prompt adds a sentence the paper does not have; it can make a judge look less biased than the paper's procedure is. The simulated judge scores with the offline rubric as its hidden true quality, plus the biases you set: with it you can watch what each correction removes."</p>
                        <NoCacheBox/>
                        <Price plan chosen=Signal::derive(move || chosen.get().len())/>
                        <crate::pages::decide::DecideFields form pilots/>
                        <div><button type="submit" id="start-evaluation" disabled=move || action.pending().get() || chosen.get().len() < 2>"Start evaluation"</button></div>
                    </ActionForm>
                    </div>
                }.into_any()
            }}
        </details>
    }
}

/// Asks `plan` for the price of what `form` would start, 400 ms after the
/// last call (a field changed), with the form's fields as they are then.
pub(crate) fn replanner<S>(form: NodeRef<leptos::html::Form>, plan: ServerAction<S>) -> impl Fn() + Copy + 'static
where
    S: leptos::server_fn::ServerFn + leptos::form::FromFormData + Clone + Send + Sync + 'static,
    S::Output: Send + Sync + 'static,
    S::Error: Send + Sync + 'static,
{
    let asked = StoredValue::new(0u64);
    move || {
        let me = asked.get_value() + 1;
        asked.set_value(me);
        set_timeout(
            move || {
                if asked.try_get_value() != Some(me) {
                    return;
                }
                #[cfg(feature = "hydrate")]
                if let Some(f) = form.get_untracked() {
                    if let Ok(data) = web_sys::FormData::new_with_form(&f) {
                        if let Ok(input) = S::from_form_data(&data) {
                            plan.dispatch(input);
                        }
                    }
                }
                #[cfg(not(feature = "hydrate"))]
                let _ = (form, plan);
            },
            std::time::Duration::from_millis(400),
        );
    }
}

/// A form's price: the action asking it, the form's node to read the
/// fields from, and the call that asks again (debounced); asked once when
/// the form is drawn with its defaults.
pub(crate) fn priced<S>() -> (ServerAction<S>, NodeRef<leptos::html::Form>, impl Fn() + Copy + 'static)
where
    S: leptos::server_fn::ServerFn + leptos::form::FromFormData + Clone + Send + Sync + 'static,
    S::Output: Send + Sync + 'static,
    S::Error: Send + Sync + 'static,
{
    let plan = ServerAction::<S>::new();
    let form = NodeRef::<leptos::html::Form>::new();
    let replan = replanner(form, plan);
    Effect::new(move |_| replan());
    (plan, form, replan)
}

/// A form's price section: what `plan` last answered for the form's
/// fields, under `id`, with `note` saying what the counts rest on.
pub(crate) fn price_view<S>(plan: ServerAction<S>, id: &'static str, note: &'static str) -> impl IntoView
where
    S: leptos::server_fn::ServerFn<Output = RunPlan, Error = crate::error::AppError> + Clone + Send + Sync + 'static,
{
    view! {
        <section class="price" id=id aria-live="polite">
            {move || match plan.value().get() {
                None => view! { <p class="muted small">"Counting what this run would send…"</p> }.into_any(),
                Some(Err(e)) => view! { <ErrorNote error=e/> }.into_any(),
                Some(Ok(p)) => view! { <PlanTable plan=p note=note/> }.into_any(),
            }}
        </section>
    }
}

/// The price of the run the form would start: calls, tokens and cost per
/// stage, and who answers (never a surprise bill).
#[component]
fn Price(plan: ServerAction<PlanEvaluation>, chosen: Signal<usize>) -> impl IntoView {
    view! {
        <section class="price" id="evaluation-price" aria-live="polite">
            {move || match (chosen.get() >= 2, plan.value().get()) {
                (false, _) => view! { <p class="muted small">"Tick two answer sets or more: the price of the run shows here."</p> }.into_any(),
                (true, None) => view! { <p class="muted small">"Counting what this run would send…"</p> }.into_any(),
                (true, Some(Err(e))) => view! { <ErrorNote error=e/> }.into_any(),
                (true, Some(Ok(p))) => view! { <PlanTable plan=p/> }.into_any(),
            }}
        </section>
    }
}

/// How long a run's calls would take on the configured endpoint, from its
/// measured latency, and what shortens a long one (`advice`).
#[component]
pub(crate) fn TimeLine(
    time: Option<crate::model::TimeEstimate>,
    /// The run's calls, at least and at most.
    calls: (u64, u64),
    #[prop(optional)] advice: Option<&'static str>,
) -> impl IntoView {
    let Some(t) = time else {
        return view! {
            <p class="small muted time-estimate">"No time estimate yet: no call to this model has been measured (Settings → Test connection measures one)."</p>
        }
        .into_any();
    };
    let (headline, how, long) = t.describe(calls);
    view! {
        <p class=if long { "time-estimate warn" } else { "small time-estimate" }>
            <strong>{headline}</strong>{format!(" {how}.")}
            {long.then(|| advice.map(|a| format!(" {a}"))).flatten()}
        </p>
    }
    .into_any()
}

/// What shortens a long evaluation, said where its duration is.
pub(crate) const EVALUATION_TIME_ADVICE: &str = "Fewer trials (M) or repeats (N), one protocol instead of both, alignment off, or no sanity checks shorten it; the paper's M = 25, N = 2 is sized for a fast hosted model.";

/// A run's plan: its totals in a sentence, then stage by stage.
#[component]
pub(crate) fn PlanTable(
    plan: RunPlan,
    /// What the counts rest on, under the table (an evaluation's, unless given).
    #[prop(optional)]
    note: Option<&'static str>,
) -> impl IntoView {
    let judged = if plan.judgments > 0 {
        format!(", {} judging calls", format::int(plan.judgments as i64))
    } else {
        String::new()
    };
    let note = note.unwrap_or("Prompt tokens are counted on the prompts the judging sends (≈ where the model's replies decide: answers length alignment rewrites, a sanity check's second answers); replies are expected as long as this model's recent replies to the task. Nothing has been sent.");
    let (calls, calls_max) = plan.calls();
    let calls_text = if calls == calls_max {
        format::int(calls as i64)
    } else {
        format!("{}–{}", format::int(calls as i64), format::int(calls_max as i64))
    };
    let cost = match (plan.paid, plan.cost_usd()) {
        (false, _) => "free".to_string(),
        (true, Some(c)) => format::usd(c),
        (true, None) => "price unknown".to_string(),
    };
    let advice = plan.judgments.gt(&0).then_some(EVALUATION_TIME_ADVICE);
    let time = plan.time.clone();
    let cache = plan.cache_note();
    let plan_cacheable = plan.cacheable_tokens();
    view! {
        <p class="price-total"><strong>{format!("{calls_text} calls")}</strong>
            {format!(" · {} tokens · {cost}", format::int(plan.tokens() as i64))}
            <span class="muted">{(plan.questions > 0).then(|| format!(" — {} questions{judged}", format::int(plan.questions)))}</span></p>
        <p class="small muted price-who">{plan.paid_by.clone()}</p>
        {match advice {
            Some(a) => view! { <TimeLine time calls=(calls, calls_max) advice=a/> }.into_any(),
            None => view! { <TimeLine time calls=(calls, calls_max)/> }.into_any(),
        }}
        <div class="table-scroll">
        <table class="grid small plan-stages">
            <thead><tr><th>"Stage"</th><th class="num">"Calls"</th><th class="num">"Prompt tokens"</th><th class="num">"Reply tokens (expected)"</th><th class="num">"Cost"</th><th>"How it is counted"</th></tr></thead>
            <tbody>
                {plan.stages.into_iter().map(|s| {
                    let calls = if s.calls == s.calls_max { format::int(s.calls as i64) } else { format!("{}–{}", format::int(s.calls as i64), format::int(s.calls_max as i64)) };
                    let prompt = format!("{}{}", if s.prompt_exact { "" } else { "≈ " }, format::int(s.prompt_tokens as i64));
                    let cost = match (plan.paid, s.cost_usd) { (false, _) => "free".to_string(), (true, Some(c)) => format::usd(c), (true, None) => "—".to_string() };
                    view! {
                        <tr><td>{s.label}</td><td class="num">{calls}</td><td class="num">{prompt}</td>
                            <td class="num">{format!("≈ {}", format::int(s.completion_tokens as i64))}</td><td class="num">{cost}</td>
                            <td class="small muted">{s.how}</td></tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
        <p class="small muted">{note}</p>
        {cache.map(|c| view! { <p class="small muted" id="plan-cache" data-cacheable=plan_cacheable.to_string()>{c}</p> })}
    }
}

#[component]
fn SanityChecks(action: ServerAction<StartSanity>, sets: Vec<AnswerSetView>) -> impl IntoView {
    let checkable: Vec<AnswerSetView> =
        sets.into_iter().filter(|s| s.method != "imported" && s.answers > 0 && s.sanity_of.is_none()).collect();
    let judge = RwSignal::new("llm".to_string());
    view! {
        <details class="panel" id="sanity-panel">
            <summary>"Sanity check a method against itself"</summary>
            <p class="muted small">"The method answers its questions a second time, and the two answer sets are judged under both protocols. An unbiased protocol should call them even (|median relative win rate| ≤ 0.05); the paper saw the legacy protocol give 90% / 10% to the same method."</p>
            <label>"Judge "
                <select on:change=move |ev| judge.set(event_target_value(&ev))>
                    <option value="llm" selected>"the configured LLM"</option>
                    <option value="offline">"offline rubric judge"</option>
                    <option value="simulated">"simulated judge (default biases)"</option>
                </select>
            </label>
            <ul class="sanity-list">
                {checkable.into_iter().map(|s| {
                    let sid = s.id;
                    view! {
                        <li>{format!("#{} {} ", s.id, s.name)}<span class="badge">{s.method.clone()}</span> " "
                            <button type="button" class="link" data-sanity=sid disabled=move || action.pending().get()
                                on:click=move |_| { action.dispatch(StartSanity { answer_set_id: sid, judge: judge.get_untracked() }); }>
                                "Run sanity check"
                            </button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </details>
    }
}

#[component]
pub fn EvaluationPage() -> impl IntoView {
    let id = route_id("id");
    let eval_id = route_id("eval");
    let project = Resource::new(move || id.get(), get_project);
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(id.get()));
    // While the evaluation runs, the report is recomputed from its judgments
    // as they arrive, at most every 5 s (0.4 s for 9,720 judged items in a
    // release build).
    let every = throttle(Memo::new(move |_| tick.get()), std::time::Duration::from_secs(5), |_, _| false);
    let report = Resource::new(move || (eval_id.get(), every.get()), |(e, _)| get_evaluation_report(e));
    view! {
        <Title text="Evaluation"/>
        <ProjectBar project_id=id.get_untracked() project active="evaluations"/>
        <main class="page wide evaluation-report">
            <p class="small"><a href=format!("/projects/{}/evaluations", id.get_untracked())>"← Evaluations"</a></p>
            <Transition fallback=|| view! { <p class="muted">"Loading the report…"</p> }>
                {move || Suspend::new(async move {
                    match report.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(r) => {
                            live.set(r.evaluation.status.is_some_and(|s| s.is_active()));
                            let pairs = r.pairs.clone();
                            let source = DrillSource::Project { project_id: id.get_untracked(), eval_id: eval_id.get_untracked() };
                            if paper_query() {
                                view! { <Report project_id=id.get_untracked() r paper=true/> }.into_any()
                            } else {
                                view! { <Report project_id=id.get_untracked() r/> <Drill source pairs/> }.into_any()
                            }
                        }
                    }
                })}
            </Transition>
        </main>
    }
}

/// Whether the page's address asks for the paper view (`?view=paper`).
pub(crate) fn paper_query() -> bool {
    use_query_map().with_untracked(|q| q.get("view").as_deref() == Some("paper"))
}

/// The report; with `share` (a share token) read-only: no links into the
/// project, downloads through the share link; `standalone`: the one-file
/// export (`server::report_html`), read-only with no link at all.
#[component]
pub fn Report(
    project_id: i64,
    r: EvaluationReportView,
    #[prop(optional)] share: Option<String>,
    #[prop(optional)] standalone: bool,
    /// The paper view (`?view=paper`) instead of the full report's body.
    #[prop(optional)]
    paper: bool,
) -> impl IntoView {
    let e = r.evaluation.clone();
    let eid = e.id;
    let shared = share.is_some() || standalone;
    let base = match (&share, standalone) {
        (_, true) => String::new(),
        (Some(t), false) => format!("/api/share/{t}"),
        (None, false) => format!("/api/evaluations/{eid}"),
    };
    let running = e.status.is_some_and(|s| s.is_active());
    // The offline rubric or the simulated judge, and nothing paid (an
    // alignment's regenerations by a model would have cost something).
    // (A jury names each judge: one at a model names it, "openai · MODEL".)
    let no_model = e.judge.contains("no LLM") && !e.judge.contains("openai · ") && e.cost_usd == 0.0;
    let settings = e.settings_text();
    let (unbiased, legacy) = (e.unbiased(), e.legacy());
    let job_progress = crate::model::JobView {
        id: e.job_id.unwrap_or_default(),
        project_id: Some(project_id),
        kind: crate::model::JobKind::Evaluation,
        parameters: String::new(),
        status: e.status.unwrap_or(crate::model::JobStatus::Interrupted),
        total: e.total,
        done: e.done,
        // As the job page counts: failed items are finished too.
        failed: e.failed,
        tokens: e.tokens,
        cost_usd: e.cost_usd,
        error: None,
        created_at: String::new(),
        started_at: None,
        finished_at: None,
        elapsed_secs: 0.0,
    };
    let body = if paper {
        view! {
            <crate::pages::paper::PaperFigures p=r.paper.clone() base=base.clone() box_plot=r.box_plot.clone() heatmap=r.heatmap.clone()/>
        }
        .into_any()
    } else {
        view! {
        {r.box_plot.clone().map(|figure| view! {
                <h2>"Win and tie rates over trials"</h2>
                <Plot base=base.clone() name="box".into() figure alt="Box plots of win and tie rates over trials, one panel per pair"/>
            })}
            {(!unbiased).then(|| view! { <h2>"Win rates"</h2> })}
            <PairTable rows=r.pairs.clone() unbiased legacy/>
            <h2>"Relative win rate"</h2>
            <div class="plots-row">
                {r.heatmap.clone().map(|figure| view! {
                    <Plot base=base.clone() name="heatmap".into() figure alt="Relative win rate heatmap, unbiased protocol"/>
                })}
                {r.legacy_heatmap.clone().map(|figure| view! {
                    <Plot base=base.clone() name="legacy-heatmap".into() figure alt="Relative win rate heatmap, legacy protocol"/>
                })}
            </div>
            {r.ranking.clone().map(|k| view! { <RankingTable k base=base.clone()/> })}
            {(!r.length_control.is_empty()).then(|| view! { <LengthControlTable rows=r.length_control.clone() base=base.clone()/> })}
            {(!r.sequential.is_empty()).then(|| view! { <SequentialTable rows=r.sequential.clone() base=base.clone()/> })}
            {r.jury.clone().map(|j| view! { <crate::pages::jury::JuryTables j base=base.clone() shared project_id/> })}
            // Planning is the project's own (it starts nothing, but the
            // form is for whoever runs the next evaluation): not on a share.
            {(!shared && unbiased && matches!(e.status, Some(crate::model::JobStatus::Done))).then(|| {
                let questions = r.pairs.iter().map(|p| p.questions).max().unwrap_or_default();
                view! { <crate::pages::decide::PlanFromPilot pilot=eid questions trials=e.trials/> }
            })}
            <h2>{match (unbiased, legacy) {
                (true, true) => "Per pair: legacy beside unbiased, per aspect, per question level",
                (true, false) => "Per pair: per aspect, per question level",
                _ => "Per pair: per aspect",
            }}</h2>
            {r.pairs.iter().map(|p| {
                let tag = format!("{}-{}", p.a, p.b);
                view! {
                    <section class="pair-detail" data-pair=tag.clone()>
                        <h3>{format!("{} vs {}", p.a_name, p.b_name)}</h3>
                        {p.legacy_plot.clone().filter(|_| unbiased && legacy).map(|figure| view! {
                            <Plot base=base.clone() name=format!("legacy-{tag}") figure alt="Legacy and unbiased verdicts"/>
                        })}
                        <div class="plots-row">
                            {p.aspects_plot.clone().map(|figure| view! {
                                <Plot base=base.clone() name=format!("aspects-{tag}") figure alt="Win, tie and loss per aspect"/>
                            })}
                            {p.levels_plot.clone().map(|figure| view! {
                                <Plot base=base.clone() name=format!("levels-{tag}") figure alt="Win, tie and loss per question level"/>
                            })}
                        </div>
                    </section>
                }
            }).collect_view()}
            <h2>"Bias audit of the judge"</h2>
            <p class="muted small">"From the judgments made. With position exchange each draw is judged in both orders: a judge without position bias flips its verdict only when the answers are close, and the first-shown answer wins about half the time; a judge without length bias lets the longer answer win about half the time."</p>
            {(!r.bias_verdicts.is_empty()).then(|| view! {
                <div class="verdict" id="bias-verdict">
                    {r.bias_verdicts.iter().map(|v| view! { <p>{v.clone()}</p> }).collect_view()}
                </div>
            })}
            <table class="grid bias-audit" id="bias-audit">
                <tbody>
                    {r.bias.iter().map(|(what, value, n)| view! {
                        <tr><td>{what.clone()}</td><td class="num">{value.clone()}</td><td class="small muted">{n.clone()}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <h1>{format!("Evaluation #{eid} · {}", e.name)}</h1>
        <p class=judge_class(&e.judge) id="judge-line">"Judged by " <strong>{e.judge.clone()}</strong>
            {e.biases.clone().map(|b| format!(" — biases: {b}"))}
            {e.judge.contains("no LLM").then(|| view! { <span class="muted">". These verdicts are not an LLM's."</span> })}
        </p>
        {r.judge_reading.clone().map(|(said, poor)| view! { <p id="judge-reading" class=if poor { "notice" } else { "small muted" }>{said}</p> })}
        {r.no_verdict.clone().map(|said| view! { <p id="no-verdict" class="notice">{said}</p> })}
        {(!r.thin_context.is_empty()).then(|| view! {
            <div id="report-thin-context" class="small">
                <p>{format!("Some answers judged here were written from little retrieved text (under {} characters), or came without it: their verdicts say little, or nothing known, about the method's retrieval.", crate::model::THIN_CONTEXT_CHARS)}</p>
                <ul>{r.thin_context.iter().map(|(said, warns)| view! { <li class=if *warns { "warn" } else { "muted" }>{said.clone()}</li> }).collect_view()}</ul>
            </div>
        })}
        <p class="small muted" id="eval-settings">{format!("Question set #{} {} · ", e.question_set_id, e.question_set)}{settings}</p>
        {(!shared).then(|| view! {
            <p class="small">"Job " {e.job_id.map(|j| view! { <a href=format!("/projects/{project_id}/jobs/{j}")>{format!("#{j}")}</a> })} " "
                <StatusBadge status=e.status.map_or("unknown".to_string(), |s| s.to_string())/> " " <ProgressBar j=job_progress/>
                {running.then(|| view! { <span class="muted">" — the report fills in as judgments arrive"</span> })}</p>
        })}
        {if no_model {
            // Nothing went to a model: no tokens or calls to show as if paid.
            view! {
                <dl class="totals">
                    <div><dt>"Model calls"</dt><dd id="eval-tokens">"none"</dd></div>
                    <div><dt>"Cost"</dt><dd>"free"</dd></div>
                    <div><dt>"Judgments made in process"</dt><dd>{format::int(r.calls)}</dd></div>
                    <div><dt>"Pairs"</dt><dd>{e.pairs}</dd></div>
                </dl>
            }.into_any()
        } else {
            view! {
                <dl class="totals">
                    <div><dt>"Evaluation tokens"</dt><dd id="eval-tokens">{format::int(e.tokens)}</dd></div>
                    <div><dt>"Cost"</dt><dd>{format::usd(e.cost_usd)}</dd></div>
                    <div><dt>"Calls"</dt><dd>{format!("{} ({} from cache)", format::int(r.calls), format::int(r.cached_calls))}</dd></div>
                    <div><dt>"Pairs"</dt><dd>{e.pairs}</dd></div>
                </dl>
            }.into_any()
        }}
        {r.sanity.clone().map(|(text, even)| {
            let class = match even { Some(true) => "verdict even", Some(false) => "verdict uneven", None => "verdict" };
            view! { <p class=class id="sanity-verdict">{text}</p> }
        })}
        {(!standalone).then(|| {
            // The same path, with or without `?view=paper`.
            let (href, text, id) = if paper {
                ("?", "← The full report: headline table, statistics, per pair, bias audit", "to-report")
            } else {
                ("?view=paper", "Paper view: Figs. 14–17 as Zeng et al. lay them out, each statistic named →", "to-paper")
            };
            // A whole page load: the page reads the query once, as it is drawn.
            view! { <p class="small view-switch"><a href=href id=id rel="external">{text}</a></p> }
        })}
        {body}
        {(!standalone).then(|| view! {
            <h2>"Downloads"</h2>
            <p class="downloads">
                <a href=format!("{base}/report.html") download="">"One HTML file (plots and data inside)"</a> " · "
                <a href=format!("{base}/report.json") download="">"Whole report (JSON)"</a>
                {crate::model::EVAL_TABLES.iter().map(|t| view! {
                    " · " <a href=format!("{base}/tables/{t}.csv") download="">{format!("{t}.csv")}</a>
                }).collect_view()}
            </p>
        })}
        {(!shared).then(|| view! { <SharePanel kind=types::ShareKind::Evaluation page_id=eid/> })}
    }
}

/// A rate with its interval; one on its interval's edge is marked (†,
/// explained under the table).
fn rate(v: Option<(f64, (f64, f64))>) -> String {
    v.map_or("—".into(), |(m, ci)| format!("{}{}", format::pct_ci(m, ci), if on_edge(m, ci) { " †" } else { "" }))
}

/// Whether `v` is (to rounding) one end of its interval.
fn on_edge(v: f64, (lo, hi): (f64, f64)) -> bool {
    (v - lo).abs() < 5e-4 || (hi - v).abs() < 5e-4
}

fn p_value(v: Option<(f64, f64)>) -> String {
    let f = |p: f64| if p < 0.001 { format!("{p:.1e}") } else { format!("{p:.3}") };
    v.map_or("—".into(), |(p, holm)| format!("{} (Holm {})", f(p), f(holm)))
}

/// The pairs' rates: the columns of the protocols that ran.
#[component]
pub(crate) fn PairTable(rows: Vec<PairRowView>, unbiased: bool, legacy: bool) -> impl IntoView {
    view! {
        <div class="table-scroll">
        <table class="grid pair-table" id="pair-table">
            <thead><tr>
                <th>"A vs B"</th><th class="num">"Questions"</th>
                {unbiased.then(|| view! {
                    <th>"A wins, median trial [95% CI]"</th><th>"Tie, median trial"</th><th>"B wins, median trial"</th>
                    <th>"Each rate's own median (the box plots')"</th>
                    <th class="num">"Relative [95% CI]"<Help text=help::RELATIVE/></th><th>"Wilcoxon p"</th><th>"Sign test p"</th>
                })}
                {legacy.then(|| view! { <th>"Legacy A / B (relative)"</th> })}
                {unbiased.then(|| view! { <th>"Length alignment"</th> })}
            </tr></thead>
            <tbody>
                {rows.into_iter().map(|p| {
                    let (as_is, regen, forced, discarded) = p.aligned;
                    let alignment = p.alignment_success.map_or("off".to_string(), |s| format!(
                        "{} aligned ({as_is} as is, {regen} regenerated, {forced} forced, {discarded} discarded)", pct(s)));
                    view! {
                        <tr data-pair=format!("{}-{}", p.a, p.b)>
                            <td>{format!("{} vs {}", p.a_name, p.b_name)}</td>
                            <td class="num">{format::int(p.questions as i64)}</td>
                            {unbiased.then(|| view! {
                                <td>{rate(p.a_win)}</td>
                                <td>{rate(p.tie)}</td>
                                <td>{rate(p.b_win)}</td>
                                <td class="small medians">{p.medians.map_or("—".into(), |(a, t, b)| format!("A {} · tie {} · B {}", pct(a), pct(t), pct(b)))}</td>
                                <td class="num relative">{p.relative.map_or("—".into(), |(r, ci)| format::signed_ci(r, ci))}</td>
                                <td class="small">{p_value(p.wilcoxon)}</td>
                                <td class="small">{p_value(p.sign)}</td>
                            })}
                            {legacy.then(|| view! {
                                <td>{p.legacy.map_or("—".into(), |(a, b, r)| format!("{} / {} ({})", pct(a), pct(b), format::signed(r, 2)))}</td>
                            })}
                            {unbiased.then(|| view! { <td class="small">{alignment}</td> })}
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
        {if unbiased {
            view! { <p class="muted small">"Two statistics, named: the median trial's rates (the trials ordered by relative win rate, the middle one; the lower middle for an even number) — its A wins, ties and B wins add up to 100% and its relative win rate is A wins − B wins — and, beside them, each rate's own median over the trials, the middle line of each box in the box plots (these need not add up to 100% nor come from one trial). Intervals: 95% percentile bootstrap over questions (2,000 resamples, the median trial taken again in each). † The estimate is an end of its interval: with few questions, or with rates that few questions move, the resamples rarely go beyond the observed trial on that side — the interval is the percentile method's, not symmetric around the estimate. Wilcoxon signed-rank and exact sign tests over questions on A's total score minus B's, Holm-corrected across the pairs. Relative win rate = (A wins − B wins) / (A wins + B wins + ties)."</p> }.into_any()
        } else {
            view! { <p class="muted small">"The legacy protocol's verdicts: one per question, A shown first, a winner forced (as the LightRAG and GraphRAG papers judge). Relative win rate = (A wins − B wins) / all verdicts. No trials, intervals or tests: one verdict per question is all it makes."</p> }.into_any()
        }}
    }
}

/// Where a drill-down reads from: an evaluation of a project, or the one a
/// share link opens (read through the link; no call logs).
#[derive(Debug, Clone, PartialEq)]
pub enum DrillSource {
    Project { project_id: i64, eval_id: i64 },
    Share(String),
}

impl DrillSource {
    fn base(&self) -> String {
        match self {
            DrillSource::Project { project_id, eval_id } => format!("/projects/{project_id}/evaluations/{eval_id}"),
            DrillSource::Share(token) => format!("/share/{token}"),
        }
    }
}

/// The drill-down: a pair, its questions, and one question's judgments
/// (state in the address: `?pair=A-B&q=ID`) among the report's `pairs`.
#[component]
pub fn Drill(source: DrillSource, pairs: Vec<PairRowView>) -> impl IntoView {
    let shared = matches!(source, DrillSource::Share(_));
    let query = use_query_map();
    let pair = Memo::new(move |_| {
        query.read().get("pair").and_then(|p| {
            let (a, b) = p.split_once('-')?;
            Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?))
        })
    });
    let question = Memo::new(move |_| query.read().get("q").and_then(|q| q.parse::<i64>().ok()));
    let page = Memo::new(move |_| query.read().get("page").and_then(|p| p.parse::<i64>().ok()).unwrap_or(1));
    let from = source.clone();
    let questions = Resource::new(
        move || (pair.get(), page.get()),
        move |(p, page)| {
            let from = from.clone();
            async move {
                match (p, from) {
                    (Some((a, b)), DrillSource::Project { eval_id, .. }) => {
                        get_drill_questions(eval_id, a, b, page).await.map(Some)
                    }
                    (Some((a, b)), DrillSource::Share(token)) => {
                        crate::api::get_shared_drill_questions(token, a, b, page).await.map(Some)
                    }
                    (None, _) => Ok(None),
                }
            }
        },
    );
    let from = source.clone();
    let detail = Resource::new(
        move || (pair.get(), question.get()),
        move |(p, q)| {
            let from = from.clone();
            async move {
                match (p, q, from) {
                    (Some((a, b)), Some(q), DrillSource::Project { eval_id, .. }) => {
                        get_drill(eval_id, a, b, q).await.map(Some)
                    }
                    (Some((a, b)), Some(q), DrillSource::Share(token)) => {
                        crate::api::get_shared_drill(token, a, b, q).await.map(Some)
                    }
                    _ => Ok(None),
                }
            }
        },
    );
    let base = source.base();
    let base2 = base.clone();
    view! {
        <section class="drill" id="drill">
            <h2>"Drill-down: every judgment of a question"</h2>
            <p class="inline-form">"Pair: "
                {pairs.into_iter().map(|p| {
                    let (a, b) = (p.a, p.b);
                    view! {
                        <a class=move || if pair.get() == Some((a, b)) { "chip selected" } else { "chip" }
                            href=format!("{base}?pair={a}-{b}#drill")>{format!("{} vs {}", p.a_name, p.b_name)}</a> " "
                    }
                }).collect_view()}
            </p>
            <Suspense fallback=|| view! { <p class="muted">"Loading questions…"</p> }>
                {move || {
                    let base = base2.clone();
                    Suspend::new(async move {
                        match questions.await {
                            Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                            Ok(None) => view! { <p class="muted">"Choose a pair to see its questions."</p> }.into_any(),
                            Ok(Some(p)) => {
                                let (a, b) = pair.get_untracked().unwrap_or_default();
                                let (count, at) = (p.questions.len(), p.page);
                                let pages_base = base.clone();
                                view! {
                                    <table class="grid drill-questions">
                                        <thead><tr><th>"Question"</th><th>"Level"</th><th class="num">"A wins"</th><th class="num">"Ties"</th><th class="num">"B wins"</th><th>"Alignment"</th><th>"Legacy winner"</th></tr></thead>
                                        <tbody>
                                            {p.questions.into_iter().map(|q| view! {
                                                <tr data-question=q.id class:selected=move || question.get() == Some(q.id)>
                                                    <td><a href=format!("{base}?pair={a}-{b}&page={at}&q={}#drill-question", q.id)>{q.question.clone()}</a></td>
                                                    <td class="small">{q.level.clone().unwrap_or_default()}</td>
                                                    <td class="num">{q.a_wins}</td><td class="num">{q.ties}</td><td class="num">{q.b_wins}</td>
                                                    <td class="small">{q.alignment.clone()}</td>
                                                    <td class="small">{q.legacy.clone().unwrap_or_else(|| "—".into())}</td>
                                                </tr>
                                            }).collect_view()}
                                        </tbody>
                                    </table>
                                    <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::DRILL_PER_PAGE count
                                        href=move |n| format!("{pages_base}?pair={a}-{b}&page={n}#drill") id="drill-pager" label="Pages of questions"/>
                                }.into_any()
                            }
                        }
                    })
                }}
            </Suspense>
            <Suspense fallback=|| view! { <p class="muted">"Loading the judgments…"</p> }>
                {move || Suspend::new(async move {
                    match detail.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(None) => ().into_any(),
                        Ok(Some(d)) => view! { <DrillDetail d shared/> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn DrillDetail(d: DrillView, shared: bool) -> impl IntoView {
    let words = |t: &str| t.split_whitespace().count();
    let changed = d.a_raw != d.a_judged || d.b_raw != d.b_judged;
    let job = d.job_id.unwrap_or_default();
    let answers = [
        (d.a_name.clone(), d.a_raw.clone(), d.a_judged.clone()),
        (d.b_name.clone(), d.b_raw.clone(), d.b_judged.clone()),
    ];
    view! {
        <article class="drill-question" id="drill-question">
            <h3>{d.question.clone()}</h3>
            <p class="small muted">{d.level.clone().map(|l| format!("{l} · ")).unwrap_or_default()}{format!("length alignment: {}", d.alignment)}</p>
            <div class="two-answers">
                {answers.into_iter().enumerate().map(|(i, (name, raw, judged))| view! {
                    <div class="answer" data-side=if i == 0 { "a" } else { "b" }>
                        <h4>{format!("{} {}", if i == 0 { "A:" } else { "B:" }, name)}</h4>
                        <p class="answer-text">{judged.clone()}</p>
                        <p class="muted small">{format!("{} words as judged", words(&judged))}
                            {(raw != judged).then(|| format!(" · {} words as generated", words(&raw)))}</p>
                        {(changed && raw != judged).then(|| view! {
                            <details><summary class="small">"As generated"</summary><p class="answer-text">{raw.clone()}</p></details>
                        })}
                    </div>
                }).collect_view()}
            </div>
            {d.legacy.clone().map(|(overall, aspects)| view! {
                <p class="legacy-verdict">"Legacy verdict (A shown first): " <strong>{overall}</strong> " — "
                    {aspects.into_iter().map(|(a, w)| format!("{a}: {w}")).collect::<Vec<_>>().join(" · ")}</p>
            })}
            <h4>"Verdict per trial"</h4>
            <p class="small muted">"Each answer's score in a trial: its four aspects' 0–5 scores added (out of 20), averaged over the trial's draws in both orders."</p>
            <p class="small verdicts">{d.verdicts.iter().map(|(t, a, b, o)| format!("trial {}: {a:.2} vs {b:.2} of 20 → {o}", t + 1)).collect::<Vec<_>>().join(" · ")}</p>
            <h4>{format!("Every judgment ({})", d.judgments.len())}</h4>
            <table class="grid judgments">
                <thead><tr><th>"Trial"</th><th>"Repeat"</th><th>"Order"</th>
                    {crate::model::ASPECT_NAMES.iter().map(|a| view! { <th class="num" title=*a>{a.chars().take(5).collect::<String>()}" A · B"</th> }).collect_view()}
                    <th>"Reasoning"</th><th></th></tr></thead>
                <tbody>
                    {d.judgments.into_iter().map(|j| view! {
                        <tr data-order=j.order.clone()>
                            <td class="num">{j.trial + 1}</td><td class="num">{j.repeat + 1}</td><td>{j.order.clone()}</td>
                            {(0..4).map(|k| view! { <td class="num">{format!("{} · {}", j.a[k], j.b[k])}</td> }).collect_view()}
                            <td class="small reasoning">{j.reasoning.clone()}</td>
                            <td>{(!shared).then(|| view! { <ItemCalls job_id=job item=j.item.clone()/> })}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </article>
    }
}

/// Each pair's length-controlled win rate beside the raw one and length
/// alignment by regeneration.
#[component]
fn LengthControlTable(rows: Vec<crate::model::LengthControlRow>, base: String) -> impl IntoView {
    let aligned_here = rows.first().is_some_and(|r| r.aligned_here);
    let signed = |x: f64| crate::format::signed(x, 2);
    view! {
        <section id="length-control">
            <h2>"Length-controlled win rate"</h2>
            <p class="muted small">"AlpacaEval 2's correction (Dubois et al., 2024): a logistic regression of each judgment on the answers' length difference and the order they were shown in; the win rate it predicts at equal length and balanced order. It costs no model calls — use it when regenerating answers to equal length is too expensive, and compare it with length alignment: where the two agree, the judge's taste for length is not what decides the pair."</p>
            {aligned_here.then(|| view! { <p class="small" id="length-control-aligned">"This evaluation judged length-aligned answers: the regression corrects only the differences alignment left, so it should sit close to the raw rate. An evaluation of the same answers with alignment off shows the regression on the answers as generated."</p> })}
            <table class="grid" id="length-control-table">
                <thead><tr><th>"Pair (A vs B)"</th><th class="num">"Judgments"</th><th class="num">"A's win rate, ties half"</th>
                    <th class="num">"Length-controlled (paper's fit)"</th><th>"95% interval"</th>
                    <th class="num">"AlpacaEval's code"</th><th class="num">"Length weight"</th><th class="num">"Position weight"</th>
                    <th class="num">"Relative win rate: controlled · aligned by regeneration"</th></tr></thead>
                <tbody>
                    {rows.iter().map(|x| {
                        let controlled = x.paper.or(x.code).map(|w| 2.0 * w - 1.0);
                        view! {
                            <tr>
                                <td>{format!("{} vs {}", x.a_name, x.b_name)}</td>
                                <td class="num">{crate::format::int(x.judgments as i64)}</td>
                                <td class="num">{crate::format::pct1(x.raw)}</td>
                                <td class="num lc-paper">{x.paper.map_or_else(|| "—".to_string(), crate::format::pct1)}</td>
                                <td class="ci">{x.paper_ci.map_or_else(String::new, |(lo, hi)| format!("{}–{}", crate::format::pct1(lo), crate::format::pct1(hi)))}</td>
                                <td class="num lc-code" title=x.code_c.map(|c| format!("L1 penalty, C = {c:.4} chosen by 5-fold cross-validation"))>{x.code.map_or_else(|| "—".to_string(), crate::format::pct1)}</td>
                                <td class="num">{x.length_weight.map_or_else(|| "—".to_string(), |w| crate::format::signed(w, 2))}</td>
                                <td class="num">{x.position_weight.map_or_else(|| "—".to_string(), |w| crate::format::signed(w, 2))}</td>
                                <td class="num lc-compare">{controlled.map_or_else(|| "—".to_string(), signed)}" · "
                                    {x.alignment.clone().map_or_else(|| "no aligned evaluation".to_string(), |(w, rel)| format!("{} ({w})", signed(rel)))}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            {rows.iter().filter_map(|x| x.why.clone().map(|w| format!("{} vs {}: {w}.", x.a_name, x.b_name))).map(|w| view! { <p class="notice small">{w}</p> }).collect_view()}
            <p class="muted small">"A positive length weight: the judge prefers the longer answer; a positive position weight: the answer shown first. The paper's fit is the model by maximum likelihood, its interval from resampling the questions; AlpacaEval's code fits it with an L1 penalty whose strength 5-fold cross-validation chooses, which pulls the rate towards 50% when judgments are few. The last column puts the regression's rate on Zeng et al.'s scale (2 · rate − 1) beside the rate length alignment gave the same pair. "
                {(!base.is_empty()).then(|| view! { <a href=format!("{base}/tables/length-control.csv") download="">"CSV"</a> })}</p>
        </section>
    }
}

/// Sequential trials: where each pair stopped, and the calls saved.
#[component]
fn SequentialTable(rows: Vec<crate::model::SequentialRow>, base: String) -> impl IntoView {
    let (calls, fixed): (u64, u64) = rows.iter().fold((0, 0), |(c, f), r| (c + r.calls, f + r.calls_fixed));
    let saved = fixed.saturating_sub(calls);
    let signed = |x: f64| crate::format::signed(x, 2);
    view! {
        <section id="sequential">
            <h2>"Sequential trials"</h2>
            <p class="muted small">"Each pair was judged look by look — its M trials split into up to 5 looks — and stopped once its verdict was settled: the trial-mean relative win rate's interval inside ±0.05 (even) or entirely outside it (differs). Each look's interval spends a fifth of the 5% error rate (Bonferroni α-spending), so looking five times does not inflate false verdicts. Use it to stop paying for trials once a pair is decided; the headline table above reads whatever trials were judged."</p>
            <p id="sequential-saved"><strong>{format!(
                "{} judging calls of the {} all M trials would make: {} saved ({}).",
                crate::format::int(calls as i64),
                crate::format::int(fixed as i64),
                crate::format::int(saved as i64),
                crate::format::pct(if fixed > 0 { saved as f64 / fixed as f64 } else { 0.0 })
            )}</strong></p>
            <div class="table-scroll">
            <table class="grid" id="sequential-table">
                <thead><tr><th>"Pair (A vs B)"</th><th class="num">"Stopped after"</th><th>"Verdict"</th>
                    <th class="num">"Relative win rate (trial mean)"</th><th>"Interval at that look"</th>
                    <th class="num">"Calls made / with all M"</th></tr></thead>
                <tbody>
                    {rows.iter().map(|x| view! {
                        <tr>
                            <td>{format!("{} vs {}", x.a_name, x.b_name)}</td>
                            <td class="num seq-trials">{format!("{} of {} trials (look {} of {})", x.trials, x.m, x.looks, x.of_looks)}</td>
                            <td class=format!("seq-standing standing-{}", x.standing)>{x.standing.as_str()}</td>
                            <td class="num">{signed(x.estimate)}</td>
                            <td class="ci">{format!("{} to {}", signed(x.interval.0), signed(x.interval.1))}</td>
                            <td class="num seq-calls">{format!("{} / {}", crate::format::int(x.calls as i64), crate::format::int(x.calls_fixed as i64))}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
            <p class="muted small">"Open: still across the band's edge after all M trials — more questions, not more trials, would settle it. "
                {(!base.is_empty()).then(|| view! { <a href=format!("{base}/tables/sequential.csv") download="">"CSV (every look)"</a> })}</p>
        </section>
    }
}

/// Every method ranked at once: Bradley–Terry scores with their intervals.
#[component]
fn RankingTable(k: crate::model::Ranking, base: String) -> impl IntoView {
    view! {
        <section id="ranking">
            <h2>"All methods ranked (Bradley–Terry)"</h2>
            <p class="muted small">"One score per method from every verdict of every pair (a tie counts half a win for each side), on the arenas' scale: 1000 + 400 · log₁₀ of its odds, so a 400-point lead is 10:1 odds of winning. Use it to rank more than two methods at once; the heatmap says by how much each pair differs. Intervals resample the questions; \"rank (UB)\" is 1 + the methods whose interval lies wholly above this one's."</p>
            {match k.note.clone() {
                Some(note) => view! { <p class="notice" id="ranking-note">{note}</p> }.into_any(),
                None => view! {
                    <table class="grid" id="ranking-table">
                        <thead><tr><th class="num">"Rank"</th><th class="num">"Rank (UB)"</th><th>"Method"</th><th class="num">"Score"</th>
                            <th>"95% interval"</th><th class="num">"Wins / verdicts"</th></tr></thead>
                        <tbody>
                            {k.rows.iter().map(|x| view! {
                                <tr><td class="num">{x.rank}</td><td class="num">{x.rank_ub}</td><td>{x.name.clone()}</td>
                                    <td class="num score">{format!("{:.0}", x.score)}</td>
                                    <td class="ci">{format!("{:.0}–{:.0}", x.ci.0, x.ci.1)}</td>
                                    <td class="num">{format!("{} / {}", crate::format::int(x.wins.round() as i64), crate::format::int(x.battles as i64))}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    <p class="muted small">{format!("{} verdicts over {} questions; intervals from {} resamples of the questions. ", crate::format::int(k.battles as i64), crate::format::int(k.questions as i64), k.resamples)}
                        {(!base.is_empty()).then(|| view! { <a href=format!("{base}/tables/ranking.csv") download="">"CSV"</a> })}</p>
                }.into_any(),
            }}
        </section>
    }
}

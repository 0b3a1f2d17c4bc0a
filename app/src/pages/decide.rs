//! What a run can decide, planned from a pilot: on the Evaluations
//! form (beside the run's price) and under a finished report ("plan the
//! next run from this one"). Both ask `decide_evaluation`; nothing is sent
//! to a model.

use leptos::form::ActionForm;
use leptos::prelude::*;

use crate::api::evaluations::DecideEvaluation;
use crate::components::ErrorNote;
use crate::format;
use crate::model::{DecideView, EvaluationView, PairDecideView};

/// What the plan is and when to use it, said above its fields.
const EXPLAIN: &str = "Before paying for a run: from a pilot's verdicts (a small first evaluation, or an earlier one of the same kind), thousands of runs of each size are simulated — questions drawn from the pilot's, each trial's verdict drawn from that question's own verdicts. The half-width is how far the headline relative win rate may fall from the truth (95%); the power, how often a run of that size would find a true difference as large as the one you name (a size, taken in the direction the pilot leans). Use it to choose the questions and trials (M) that can decide what you want to know.";

/// The plan's fields inside the Evaluations form (`form`: that form, whose
/// question set and trials are the run's). `pilots`: the project's finished
/// evaluations under the unbiased protocol, newest first.
#[component]
pub fn DecideFields(form: NodeRef<leptos::html::Form>, pilots: Vec<EvaluationView>) -> impl IntoView {
    let decide = ServerAction::<DecideEvaluation>::new();
    let ask = move || {
        #[cfg(feature = "hydrate")]
        if let Some(f) = form.get_untracked() {
            use leptos::form::FromFormData;
            if let Ok(data) = web_sys::FormData::new_with_form(&f) {
                match DecideEvaluation::from_form_data(&data) {
                    Ok(input) => {
                        decide.dispatch(input);
                    }
                    Err(e) => leptos::logging::warn!("the plan's fields: {e}"),
                }
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = form;
    };
    let pilots: Vec<(i64, String)> =
        pilots.into_iter().map(|e| (e.id, format!("#{} {} (M = {})", e.id, e.name, e.trials))).collect();
    view! {
        <DecidePanel id="decide" summary="What can this run decide? (planned from a pilot; nothing is sent)"
            empty="No finished evaluation under the unbiased protocol yet: run a small one first (say 50 questions, M = 5) and plan the full run from it."
            pilots select_id="decide-pilot" pick=Callback::new(|_| ()) button_id="decide-run"
            pending=Signal::derive(move || decide.pending().get()) ask=Callback::new(move |_| ask())
            fields=ViewFn::from(|| view! { <HalfWidthFields/> })
            result=ViewFn::from(move || view! { <DecideResult decide/> })/>
    }
}

/// The shell both pilot planners share (the Evaluations form's, the
/// wizard's): what it is, the pilot to simulate from (`pick` hears a
/// change; the select is the form field `pilot`), the target's `fields`,
/// Simulate (Enter in a field too — never the form's submit), the `result`.
#[component]
fn DecidePanel(
    id: &'static str,
    summary: &'static str,
    empty: &'static str,
    pilots: Vec<(i64, String)>,
    select_id: &'static str,
    pick: Callback<i64>,
    button_id: &'static str,
    pending: Signal<bool>,
    ask: Callback<()>,
    fields: ViewFn,
    result: ViewFn,
) -> impl IntoView {
    view! {
        <details class="decide" id=id on:keydown=move |ev: leptos::ev::KeyboardEvent| {
            if ev.key() == "Enter" {
                ev.prevent_default();
                ask.run(());
            }
        }>
            <summary>{summary}</summary>
            <p class="muted small">{EXPLAIN}</p>
            {if pilots.is_empty() {
                view! { <p class="muted small" id="decide-no-pilot">{empty}</p> }.into_any()
            } else {
                view! {
                    <div class="row-fields">
                        <label>"Pilot "
                            <select name="pilot" id=select_id on:change=move |ev| {
                                if let Ok(v) = event_target_value(&ev).parse() { pick.run(v) }
                            }>
                                {pilots.into_iter().map(|(id, label)| view! { <option value=id.to_string()>{label}</option> }).collect_view()}
                            </select>
                        </label>
                        {fields.run()}
                        <button type="button" id=button_id on:click=move |_| ask.run(()) disabled=move || pending.get()>
                            {move || if pending.get() { "Simulating…" } else { "Simulate" }}
                        </button>
                    </div>
                    {result.run()}
                }.into_any()
            }}
        </details>
    }
}

/// Under a finished report: plan a run of any size from this evaluation.
#[component]
pub fn PlanFromPilot(pilot: i64, questions: usize, trials: u32) -> impl IntoView {
    let decide = ServerAction::<DecideEvaluation>::new();
    view! {
        <section id="plan-from-pilot">
            <h2>"Plan the next run from this one"</h2>
            <p class="muted small">{EXPLAIN}</p>
            <ActionForm action=decide attr:class="stack-form" attr:id="plan-from-pilot-form">
                <input type="hidden" name="pilot" value=pilot.to_string()/>
                <div class="row-fields">
                    <label>"Questions " <input type="number" name="questions" value=(questions * 4).max(50).to_string() min="1"/></label>
                    <label>"Trials (M) " <input type="number" name="req[trials]" value=trials.to_string() min="1" max="1000"/></label>
                    <HalfWidthFields/>
                    <button type="submit" id="plan-from-pilot-run" disabled=move || decide.pending().get()>
                        {move || if decide.pending().get() { "Simulating…" } else { "Simulate" }}
                    </button>
                </div>
            </ActionForm>
            <DecideResult decide/>
        </section>
    }
}

/// The target half-width and the smallest difference to detect.
#[component]
fn HalfWidthFields() -> impl IntoView {
    view! {
        <label>"Interval half-width ± " <input type="number" name="half_width" value="0.05" min="0.005" max="0.5" step="0.005" inputmode="decimal"/></label>
        <label>"Smallest difference to detect " <input type="number" name="difference" placeholder="(none)" min="0.01" max="1.99" step="0.01" inputmode="decimal"/></label>
    }
}

#[component]
fn DecideResult(decide: ServerAction<DecideEvaluation>) -> impl IntoView {
    view! {
        <div class="decide-result" aria-live="polite">
            {move || match decide.value().get() {
                None => ().into_any(),
                Some(Err(e)) => view! { <ErrorNote error=e/> }.into_any(),
                Some(Ok(d)) => view! { <DecideTables d/> }.into_any(),
            }}
        </div>
    }
}

/// A plan, pair by pair: what the run asked for can decide, how many
/// questions each M needs, the table of sizes, and the curve.
#[component]
pub fn DecideTables(d: DecideView) -> impl IntoView {
    let (questions, trials) = d.run;
    let with_power = d.difference.is_some();
    view! {
        <div class="decide-plan" data-pilot=d.pilot>
            <p class="small">{format!(
                "Simulated from evaluation #{} {}'s verdicts, {} runs per size. The run asked for: {} questions × M = {trials}.",
                d.pilot, d.pilot_name, d.experiments, format::int(questions as i64)
            )}</p>
            {d.pairs.iter().map(|p| view! { <PairDecide p=p.clone() half_width=d.half_width power=d.power with_power/> }).collect_view()}
            <p class="muted small">"±: the half-width of the headline's 95% interval in the pilot's world; %: the power to detect the difference named. A pilot's few questions make a rough world: plan with a margin, and plan again from the first real run."</p>
        </div>
    }
}

#[component]
fn PairDecide(p: PairDecideView, half_width: f64, power: f64, with_power: bool) -> impl IntoView {
    let ms: Vec<usize> = p.questions_for_half_width.iter().map(|(m, _)| *m).collect();
    let mut sizes: Vec<usize> = p.cells.iter().map(|c| c.questions).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let cell = |q: usize, m: usize| {
        p.cells.iter().find(|c| c.questions == q && c.trials == m).map_or(String::new(), |c| match c.power {
            Some(pw) => format!("±{:.3} ({:.0}%)", c.half_width, pw * 100.0),
            None => format!("±{:.3}", c.half_width),
        })
    };
    let run_line = p.run.as_ref().map(|r| {
        let power_text = match (r.power, p.difference_reached) {
            (Some(pw), Some(diff)) => format!("; power {:.0}% to detect a difference of {diff:.2}", pw * 100.0),
            _ => String::new(),
        };
        let verdict = if r.half_width <= half_width { "reaches" } else { "misses" };
        format!("This run: the headline's interval ±{:.3} ({verdict} ±{half_width}){power_text}.", r.half_width)
    });
    view! {
        <section class="decide-pair" data-pair=format!("{} vs {}", p.a_name, p.b_name)>
            <h3>{format!("{} vs {}", p.a_name, p.b_name)}</h3>
            <p class="small">{format!(
                "Pilot: {} questions, relative win rate {}.",
                format::int(p.pilot_questions as i64),
                format::signed(p.pilot_effect, 2)
            )}</p>
            {run_line.map(|l| view! { <p class="decide-run-line"><strong>{l}</strong></p> })}
            <p class="small decide-needs">{format!("For ±{half_width}: {}.", DecideView::needs(&p.questions_for_half_width))}
                {p.difference_reached.map(|diff| format!(
                    " For power {:.0}% at a difference of {diff:.2}: {}.",
                    power * 100.0,
                    DecideView::needs(&p.questions_for_power)
                ))}</p>
            <div class="plots-row">
                <div class="table-scroll">
                    <table class="grid decide-table">
                        <thead><tr><th class="num">"Questions"</th>{ms.iter().map(|m| view! { <th class="num">{format!("M = {m}")}</th> }).collect_view()}</tr></thead>
                        <tbody>
                            {sizes.iter().map(|&q| view! {
                                <tr data-questions=q>
                                    <td class="num">{format::int(q as i64)}</td>
                                    {ms.iter().map(|&m| view! { <td class="num">{cell(q, m)}</td> }).collect_view()}
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    {with_power.then(|| view! { <p class="muted small">"(%: power)"</p> })}
                </div>
                <figure class="plot"><div class="svg" role="img" aria-label="Interval half-width against questions, a line per M" inner_html=p.curve_svg.clone()></div></figure>
            </div>
        </section>
    }
}

/// In the experiment wizard: what each of its evaluations can decide,
/// planned from a pilot of any project (the wizard is the owner's).
#[component]
pub fn WizardDecide(pilots: Vec<(i64, String)>, manifest: RwSignal<String>) -> impl IntoView {
    let decide = ServerAction::<crate::api::experiments::DecideExperiment>::new();
    let pilot = RwSignal::new(pilots.first().map(|p| p.0).unwrap_or_default());
    let half_width = RwSignal::new("0.05".to_string());
    let difference = RwSignal::new(String::new());
    let ask = move || {
        decide.dispatch(crate::api::experiments::DecideExperiment {
            manifest: manifest.get_untracked(),
            pilot: pilot.get_untracked(),
            half_width: half_width.get_untracked(),
            difference: Some(difference.get_untracked()),
        });
    };
    view! {
        <DecidePanel id="wizard-decide" summary="What can its evaluations decide? (planned from a pilot; nothing is sent)"
            empty="No finished evaluation under the unbiased protocol yet: run a small one first and plan the experiment from it."
            pilots select_id="wizard-pilot" pick=Callback::new(move |v| pilot.set(v)) button_id="wizard-decide-run"
            pending=Signal::derive(move || decide.pending().get()) ask=Callback::new(move |_| ask())
            fields=ViewFn::from(move || view! {
                <label>"Interval half-width ± " <input type="number" min="0.005" max="0.5" step="0.005" inputmode="decimal"
                    prop:value=move || half_width.get() on:input=move |ev| half_width.set(event_target_value(&ev))/></label>
                <label>"Smallest difference to detect " <input type="number" min="0.01" max="1.99" step="0.01" inputmode="decimal" placeholder="(none)"
                    prop:value=move || difference.get() on:input=move |ev| difference.set(event_target_value(&ev))/></label>
            })
            result=ViewFn::from(move || view! {
                <div class="decide-result" aria-live="polite">
                    {move || match decide.value().get() {
                        None => ().into_any(),
                        Some(Err(e)) => view! { <ErrorNote error=e/> }.into_any(),
                        Some(Ok(sets)) if sets.is_empty() => view! { <p class="muted small">"The manifest evaluates no question set."</p> }.into_any(),
                        Some(Ok(sets)) => sets.into_iter().map(|(i, d)| view! {
                            <h3 class="decide-set">{format!("The evaluation of question set {i}")}</h3>
                            <DecideTables d/>
                        }).collect_view().into_any(),
                    }}
                </div>
            })/>
    }
}

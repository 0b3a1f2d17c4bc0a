//! `/projects/:id/jobs`: a project's jobs, with live progress, and
//! `/projects/:id/jobs/:job`: one job, its items and their call logs.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_navigate;

use crate::api::jobs::{get_job_detail, list_jobs, CancelJob, ResumeJob, StartSummaries};
use crate::api::projects::get_project;
use crate::api::settings::get_llm_info;
use crate::components::jobs::{ticker, CallsToggle, ItemCallLog, ProgressBar, StatusBadge};
use crate::components::route_id;
use crate::components::{ActionError, ErrorNote, NoCacheBox, ProjectBar};
use crate::format;
use crate::model::{JobItemView, JobView};

fn rate_and_eta(j: &JobView) -> (String, String) {
    let finished = (j.done + j.failed) as f64;
    if j.elapsed_secs <= 0.0 || finished == 0.0 {
        return ("–".into(), "–".into());
    }
    let rate = finished / j.elapsed_secs;
    let eta = if j.status.is_active() && rate > 0.0 {
        let secs = ((j.total as f64 - finished) / rate).max(0.0);
        if secs < 90.0 {
            format!("{secs:.0} s")
        } else {
            format!("{:.0} min", secs / 60.0)
        }
    } else {
        "–".into()
    };
    (format!("{rate:.1}/s"), eta)
}

#[component]
pub fn JobsPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let llm = Resource::new(|| (), |_| get_llm_info());
    let start = ServerAction::<StartSummaries>::new();
    let live = RwSignal::new(false);
    let tick = ticker(live);
    let jobs = Resource::new(move || (id.get(), tick.get(), start.version().get()), |(id, _, _)| list_jobs(id));
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(job)) = start.value().get() {
            navigate(&format!("/projects/{}/jobs/{}", id.get_untracked(), job.id), Default::default());
        }
    });

    view! {
        <Title text="Jobs"/>
        <ProjectBar project_id=id.get_untracked() project active="jobs"/>
        <main class="page">
            <h1>"Jobs"</h1>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    llm.await.ok().map(|l| view! {
                        <p class="llm-line">"LLM: " <strong class=format!("provider-{}", l.provider)>{l.label}</strong>
                            {(l.provider == "offline").then(|| view! { <span class="muted">" — results are made by classical NLP, not by a language model"</span> })}
                        </p>
                    })
                })}
            </Suspense>
            <section class="panel">
                <h2>"Start a job"</h2>
                <ActionForm action=start attr:class="inline-form">
                    <input type="hidden" name="project_id" value=move || id.get()/>
                    <button type="submit" disabled=move || start.pending().get()>"Summarise every chunk"</button>
                    <span class="muted">"One sentence per chunk; later stages use the summaries."</span>
                    <NoCacheBox/>
                </ActionForm>
                <ActionError action=start/>
            </section>
            <Transition fallback=|| view! { <p class="muted">"Loading jobs…"</p> }>
                {move || Suspend::new(async move {
                    match jobs.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(list) => {
                            live.set(list.iter().any(|j| j.status.is_active()));
                            if list.is_empty() {
                                return view! { <p class="muted">"No jobs yet."</p> }.into_any();
                            }
                            let project_id = id.get_untracked();
                            view! {
                                <table class="grid jobs">
                                    <thead><tr>
                                        <th>"Job"</th><th>"Status"</th><th>"Progress"</th><th class="num">"Rate"</th><th class="num">"ETA"</th>
                                        <th class="num">"Failed"</th><th class="num">"Tokens"</th><th class="num">"Cost"</th><th>"Started"</th>
                                    </tr></thead>
                                    <tbody>
                                        {list.into_iter().map(|j| {
                                            let (rate, eta) = rate_and_eta(&j);
                                            view! {
                                                <tr data-job=j.id>
                                                    <td><a href=format!("/projects/{project_id}/jobs/{}", j.id)>{format!("#{} {}", j.id, j.kind)}</a></td>
                                                    <td><StatusBadge status=j.status.to_string()/></td>
                                                    <td><ProgressBar j=j.clone()/></td>
                                                    <td class="num">{rate}</td>
                                                    <td class="num">{eta}</td>
                                                    <td class="num">{format::int(j.failed)}</td>
                                                    <td class="num">{format::int(j.tokens)}</td>
                                                    <td class="num">{format!("${:.4}", j.cost_usd)}</td>
                                                    <td class="muted">{j.started_at.as_deref().map(format::timestamp).unwrap_or_default()}</td>
                                                </tr>
                                            }
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            }.into_any()
                        }
                    }
                })}
            </Transition>
        </main>
    }
}

#[component]
pub fn JobPage() -> impl IntoView {
    let project_id = route_id("id");
    let job_id = route_id("job");
    let project = Resource::new(move || project_id.get(), get_project);
    let resume = ServerAction::<ResumeJob>::new();
    let cancel = ServerAction::<CancelJob>::new();
    let live = RwSignal::new(true);
    let tick = ticker(live);
    let detail = Resource::new(
        move || (job_id.get(), tick.get(), resume.version().get(), cancel.version().get()),
        |(id, _, _, _)| get_job_detail(id),
    );
    // After resume or cancel, follow the job again.
    Effect::new(move |_| {
        resume.version().get();
        cancel.version().get();
        live.set(true);
    });

    view! {
        <Title text=move || format!("Job {}", job_id.get())/>
        <ProjectBar project_id=project_id.get_untracked() project active="jobs"/>
        <main class="page">
            <p><a href=move || format!("/projects/{}/jobs", project_id.get())>"← Jobs"</a></p>
            <Transition fallback=|| view! { <p class="muted">"Loading job…"</p> }>
                {move || Suspend::new(async move {
                    let d = match detail.await {
                        Ok(d) => d,
                        Err(e) => return view! { <ErrorNote error=e/> }.into_any(),
                    };
                    let j = d.job.clone();
                    live.set(j.status.is_active());
                    let (rate, eta) = rate_and_eta(&j);
                    let id = j.id;
                    let can_resume = j.status.can_resume();
                    let can_retry = !j.status.is_active() && j.failed > 0;
                    let failures: Vec<JobItemView> = d.items.iter().filter(|i| i.status == crate::model::ItemStatus::Failed).cloned().collect();
                    // What the model did, in words: failed, cut and repaired items with their reasons.
                    let outcome = d.outcome.clone();
                    let said = (outcome.items > 0).then(|| {
                        let who = outcome.model.clone().map(|m| format!("Answered by {m}. ")).unwrap_or_default();
                        let what = outcome.sentence().unwrap_or_else(|| "No item failed, no reply was cut at max_tokens and none needed a repair turn.".into());
                        let class = if outcome.failed + outcome.truncated > 0 { "notice" } else { "muted" };
                        view! { <p id="job-outcome" class=class>{who}{what}</p> }
                    });
                    view! {
                        <h1>{format!("Job #{} · {}", j.id, j.kind)} " " <StatusBadge status=j.status.to_string()/></h1>
                        <dl class="totals job-totals">
                            <div><dt>"Progress"</dt><dd id="job-progress"><ProgressBar j=j.clone()/></dd></div>
                            <div><dt>"Failed"</dt><dd id="job-failed">{format::int(j.failed)}</dd></div>
                            <div><dt>"Tokens"</dt><dd>{format::int(j.tokens)}</dd></div>
                            <div><dt>"Cost"</dt><dd>{format!("${:.4}", j.cost_usd)}</dd></div>
                            <div><dt>"Rate · ETA"</dt><dd class="small">{format!("{rate} · {eta}")}<br/><span class="muted">{format!("{:.1} s elapsed", j.elapsed_secs)}</span></dd></div>
                        </dl>
                        {j.error.clone().map(|e| view! { <p class="error">{e}</p> })}
                        {said}
                        <div class="actions-row">
                            {j.status.is_active().then(|| view! {
                                <button type="button" class="danger" on:click=move |_| { cancel.dispatch(CancelJob { id }); }>"Cancel"</button>
                            })}
                            {can_resume.then(|| view! {
                                <button type="button" on:click=move |_| { resume.dispatch(ResumeJob { id, retry_failed: false }); }>"Resume"</button>
                            })}
                            {can_retry.then(|| view! {
                                <button type="button" on:click=move |_| { resume.dispatch(ResumeJob { id, retry_failed: true }); }>"Retry failed items"</button>
                            })}
                        </div>
                        <ActionError action=resume/>
                        <ActionError action=cancel/>
                        {(!failures.is_empty()).then(|| view! {
                            <h2>"Failures"</h2>
                            <ul class="skipped failures">
                                {failures.into_iter().map(|f| view! { <li><strong>{f.key}</strong>": "{f.error.unwrap_or_default()}</li> }).collect_view()}
                            </ul>
                        })}
                        <h2>{format!("Items ({} finished)", d.items.len())}</h2>
                        <table class="grid items">
                            <thead><tr><th>"Item"</th><th>"Status"</th><th>"Result"</th><th class="num">"Tokens"</th><th></th></tr></thead>
                            <tbody>
                                {d.items.into_iter().map(|item| view! { <ItemRow job_id=id item/> }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                })}
            </Transition>
        </main>
    }
}

#[component]
fn ItemRow(job_id: i64, item: JobItemView) -> impl IntoView {
    let open = RwSignal::new(false);
    let text = item.result.clone().or(item.error.clone()).unwrap_or_default();
    view! {
        <tr data-item=item.key.clone()>
            <td class="mono">{item.key.clone()}</td>
            <td><StatusBadge status=item.status.to_string()/></td>
            <td class="result">{text}</td>
            <td class="num">{format::int(item.tokens)}</td>
            <td class="actions"><CallsToggle open/></td>
        </tr>
        <Show when=move || open.get()>
            <tr class="calls-row"><td colspan="5"><ItemCallLog job_id item=item.key.clone() open/></td></tr>
        </Show>
    }
}

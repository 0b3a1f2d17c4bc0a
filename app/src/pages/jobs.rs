//! `/projects/:id/jobs`: a project's jobs, with live progress, and
//! `/projects/:id/jobs/:job`: one job, its items and their call logs.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_navigate;

use crate::api::*;
use crate::components::{ActionError, ErrorNote, NoCacheBox, ProjectBar};
use crate::error::AppError;
use crate::format;
use crate::model::{CallView, JobItemView, JobView};
use crate::pages::corpus::route_id;

pub(crate) fn active(status: &str) -> bool {
    matches!(status, "running" | "queued")
}

/// A signal that ticks every second while `live` is true: resources keyed
/// on it refresh without a reload. (The interval only runs in the browser.)
pub(crate) fn ticker(live: RwSignal<bool>) -> RwSignal<u64> {
    let tick = RwSignal::new(0u64);
    Effect::new(move |_| {
        let handle = set_interval_with_handle(
            move || {
                if live.get_untracked() {
                    tick.update(|t| *t += 1);
                }
            },
            std::time::Duration::from_millis(1000),
        )
        .ok();
        on_cleanup(move || {
            if let Some(h) = handle {
                h.clear();
            }
        });
    });
    tick
}

fn rate_and_eta(j: &JobView) -> (String, String) {
    let finished = (j.done + j.failed) as f64;
    if j.elapsed_secs <= 0.0 || finished == 0.0 {
        return ("–".into(), "–".into());
    }
    let rate = finished / j.elapsed_secs;
    let eta = if active(&j.status) && rate > 0.0 {
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
pub(crate) fn StatusBadge(status: String) -> impl IntoView {
    let class = format!("badge status-{status}");
    view! { <span class=class>{status}</span> }
}

#[component]
pub(crate) fn ProgressBar(j: JobView) -> impl IntoView {
    let finished = j.done + j.failed;
    let pct = if j.total > 0 { (finished as f64 / j.total as f64 * 100.0).round() } else { 0.0 };
    view! {
        <span class="job-progress">
            <progress max="100" value=pct></progress>
            <span class="progress-text">{format!("{}/{} · {pct:.0}%", format::int(finished), format::int(j.total))}</span>
        </span>
    }
}

/// A stage page's line for its latest job of `kind`, shown while it runs or
/// when it did not end well. `live` keeps `jobs` refreshing while a job
/// runs; `finished` ticks when a watched job stops — or when a new job is
/// first seen already stopped (a small offline job can end before the
/// first poll) — so the page reloads what the job made.
#[component]
pub(crate) fn LatestJob(
    project_id: i64,
    kind: &'static str,
    label: &'static str,
    dom_id: &'static str,
    jobs: Resource<Result<Vec<JobView>, AppError>>,
    live: RwSignal<bool>,
    finished: RwSignal<u64>,
) -> impl IntoView {
    // The latest job at the previous load (and whether it was running);
    // `None` before the first load. Followed in an effect, not in the view's
    // future: ticking `finished` reloads what the page shows, which must not
    // happen while this view is being rebuilt.
    let seen = StoredValue::new(None::<Option<(i64, bool)>>);
    let latest_of = move |list: Vec<JobView>| list.into_iter().find(|j| j.kind == kind);
    Effect::new(move |_| {
        let Some(Ok(list)) = jobs.get() else { return };
        let latest = latest_of(list);
        let running = latest.as_ref().is_some_and(|j| active(&j.status));
        let now = latest.as_ref().map(|j| (j.id, running));
        let stopped = match (seen.get_value(), now) {
            // A job that ran at the last load stopped, or a new
            // job appeared already stopped.
            (Some(Some((old, was_running))), Some((new, false))) => was_running || old != new,
            (Some(None), Some((_, false))) => true,
            _ => false,
        };
        if stopped || (live.get_untracked() && !running) {
            finished.update(|n| *n += 1);
        }
        seen.set_value(Some(now));
        live.set(running);
    });
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                let latest = latest_of(jobs.await.unwrap_or_default());
                let running = latest.as_ref().is_some_and(|j| active(&j.status));
                latest.filter(|j| running || j.status != "done").map(|j| view! {
                    <p class="job-line" id=dom_id>
                        <a href=format!("/projects/{project_id}/jobs/{}", j.id)>{format!("{label} job #{}", j.id)}</a> " "
                        <StatusBadge status=j.status.clone()/> " " <ProgressBar j=j.clone()/>
                        {j.error.clone().map(|e| view! { <span class="error">{e}</span> })}
                    </p>
                })
            })}
        </Transition>
    }
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
                            live.set(list.iter().any(|j| active(&j.status)));
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
                                                    <td><StatusBadge status=j.status.clone()/></td>
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
                    live.set(active(&j.status));
                    let (rate, eta) = rate_and_eta(&j);
                    let id = j.id;
                    let can_resume = matches!(j.status.as_str(), "interrupted" | "cancelled" | "failed");
                    let can_retry = !active(&j.status) && j.failed > 0;
                    let failures: Vec<JobItemView> = d.items.iter().filter(|i| i.status == "failed").cloned().collect();
                    // What the model did, in words: failed, cut and repaired items with their reasons.
                    let outcome = d.outcome.clone();
                    let said = (outcome.items > 0).then(|| {
                        let who = outcome.model.clone().map(|m| format!("Answered by {m}. ")).unwrap_or_default();
                        let what = outcome.sentence().unwrap_or_else(|| "No item failed, no reply was cut at max_tokens and none needed a repair turn.".into());
                        let class = if outcome.failed + outcome.truncated > 0 { "notice" } else { "muted" };
                        view! { <p id="job-outcome" class=class>{who}{what}</p> }
                    });
                    view! {
                        <h1>{format!("Job #{} · {}", j.id, j.kind)} " " <StatusBadge status=j.status.clone()/></h1>
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
                            {active(&j.status).then(|| view! {
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
            <td><StatusBadge status=item.status.clone()/></td>
            <td class="result">{text}</td>
            <td class="num">{format::int(item.tokens)}</td>
            <td class="actions"><CallsToggle open/></td>
        </tr>
        <Show when=move || open.get()>
            <tr class="calls-row"><td colspan="5"><ItemCallLog job_id item=item.key.clone() open/></td></tr>
        </Show>
    }
}

#[component]
fn CallsToggle(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <button type="button" class="link" on:click=move |_| open.update(|o| *o = !*o)>
            {move || if open.get() { "Hide calls" } else { "Calls" }}
        </button>
    }
}

/// One job item's call log, loaded when `open`.
#[component]
fn ItemCallLog(job_id: i64, item: String, open: RwSignal<bool>) -> impl IntoView {
    let calls = Resource::new(
        move || open.get(),
        move |open| {
            let item = item.clone();
            async move {
                if open {
                    get_item_calls(job_id, item).await.map(Some)
                } else {
                    Ok(None)
                }
            }
        },
    );
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading calls…"</p> }>
            {move || Suspend::new(async move {
                match calls.await {
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    Ok(None) => ().into_any(),
                    Ok(Some(list)) => view! { <CallLog calls=list/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// A toggle that shows one job item's call log in place.
#[component]
pub(crate) fn ItemCalls(job_id: i64, item: String) -> impl IntoView {
    let open = RwSignal::new(false);
    view! {
        <CallsToggle open/>
        <Show when=move || open.get()>
            <ItemCallLog job_id item=item.clone() open/>
        </Show>
    }
}

#[component]
fn CallLog(calls: Vec<CallView>) -> impl IntoView {
    view! {
        <div class="call-log">
            {calls.into_iter().map(|c| {
                let who = crate::model::provider_label(&c.provider, &c.model);
                view! {
                    <article class="call">
                        <p class="meta">
                            {format!("#{} · {} · {} · sample {} · {} + {} tokens · {} ms · {} attempt{} · ${:.6}{}",
                                c.id, who, c.purpose, c.sample, c.prompt_tokens, c.completion_tokens, c.latency_ms, c.attempts,
                                if c.attempts == 1 { "" } else { "s" }, c.cost_usd, if c.cached { " · from cache" } else { "" })}
                        </p>
                        <h4>"Prompt"</h4>
                        <pre class="prompt">{c.prompt}</pre>
                        <h4>{if c.error.is_some() { "Error" } else { "Reply" }}</h4>
                        <pre class="reply">{c.reply.or(c.error).unwrap_or_default()}</pre>
                    </article>
                }
            }).collect_view()}
        </div>
    }
}

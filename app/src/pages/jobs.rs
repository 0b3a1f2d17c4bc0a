//! `/projects/:id/jobs`: a project's jobs, with live progress, and
//! `/projects/:id/jobs/:job`: one job — its progress, its results summed
//! up in words and numbers, its items a page at a time (`?page=N`,
//! `?status=failed`; each result summarised in a line, whole on demand)
//! and each item's call log when asked for.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_navigate, use_query_map};

use crate::api::jobs::{get_job_detail, get_job_item, get_job_items, list_jobs, CancelJob, ResumeJob, StartSummaries};
use crate::api::projects::get_project;
use crate::api::settings::get_llm_info;
use crate::components::help::{text as help, Help};
use crate::components::jobs::{
    live_ticks, throttle, CallsToggle, ItemCallLog, ProgressBar, StatusBadge, Toggle, Watch,
};
use crate::components::route_id;
use crate::components::{ActionError, ErrorNote, NoCacheBox, Pager, ProjectBar};
use crate::format;
use crate::model::{JobItemView, JobView};

fn rate_and_eta(j: &JobView) -> (String, String) {
    let finished = (j.done + j.failed) as f64;
    if j.elapsed_secs <= 0.0 || finished == 0.0 {
        return ("–".into(), "–".into());
    }
    let rate = finished / j.elapsed_secs;
    let eta = if j.status.is_active() && rate > 0.0 {
        format::duration(((j.total as f64 - finished) / rate).max(0.0))
    } else {
        "–".into()
    };
    // A slow model's pace in seconds per item, not "0.0/s".
    (format::pace(finished as u64, j.elapsed_secs), eta)
}

#[component]
pub fn JobsPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let llm = Resource::new(|| (), |_| get_llm_info());
    let start = ServerAction::<StartSummaries>::new();
    let query = use_query_map();
    let page = Memo::new(move |_| query.read().get("page").and_then(|p| p.parse::<i64>().ok()).unwrap_or(1));
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(id.get()));
    let jobs = Resource::new(
        move || (id.get(), page.get(), tick.get(), start.version().get()),
        |(id, page, _, _)| list_jobs(id, page),
    );
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
                            {(l.provider == types::ProviderKind::Offline).then(|| view! { <span class="muted">" — results are made by classical NLP, not by a language model"</span> })}
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
                        Ok(p) => {
                            live.set(p.jobs.iter().any(|j| j.status.is_active()));
                            if p.jobs.is_empty() {
                                return view! { <p class="muted">"No jobs yet. Every stage that calls the LLM runs as a job — building the graph, generating questions, answering, judging — and shows here with its progress; or start one above."</p> }.into_any();
                            }
                            let project_id = id.get_untracked();
                            view! {
                                <table class="grid jobs">
                                    <thead><tr>
                                        <th>"Job"</th><th>"Status"</th><th>"Progress"</th><th class="num">"Rate"</th><th class="num">"ETA"</th>
                                        <th class="num">"Failed"</th><th class="num">"Tokens"</th><th class="num">"Cost"</th><th>"Started"</th>
                                    </tr></thead>
                                    <tbody>
                                        {p.jobs.iter().cloned().map(|j| {
                                            let (rate, eta) = rate_and_eta(&j);
                                            view! {
                                                <tr data-job=j.id>
                                                    <td><a href=format!("/projects/{project_id}/jobs/{}", j.id)>{format!("#{} {}", j.id, j.kind.label())}</a>
                                                        {match j.kind {
                                                            crate::model::JobKind::Mentions => Some(view! { <Help text=help::MENTIONS/> }),
                                                            crate::model::JobKind::StudyRating => Some(view! { <Help text=help::STUDY_RATING/> }),
                                                            _ => None,
                                                        }}</td>
                                                    <td><StatusBadge status=j.status.to_string()/></td>
                                                    <td><ProgressBar j=j.clone()/></td>
                                                    <td class="num">{rate}</td>
                                                    <td class="num">{eta}</td>
                                                    <td class="num">{format::int(j.failed)}</td>
                                                    <td class="num">{format::int(j.tokens)}</td>
                                                    <td class="num">{format::usd(j.cost_usd)}</td>
                                                    <td class="muted">{j.started_at.as_deref().map(format::timestamp).unwrap_or_default()}</td>
                                                </tr>
                                            }
                                        }).collect_view()}
                                    </tbody>
                                </table>
                                <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::JOBS_PER_PAGE count=p.jobs.len()
                                    href=|n| format!("?page={n}") id="job-pager" label="Pages of jobs"/>
                            }.into_any()
                        }
                    }
                })}
            </Transition>
        </main>
    }
}

/// The processes running a job's items now (a team deployment's database),
/// each with the items it holds and how long ago it last said it lives.
#[component]
fn Claimants(claimants: Vec<crate::model::Claimant>) -> impl IntoView {
    (!claimants.is_empty()).then(|| {
        let held: i64 = claimants.iter().map(|c| c.items).sum();
        view! {
            <section id="job-claimants">
                <h2>"Processes running it"</h2>
                <p class="muted small">{format!(
                    "{} on {} process{} of this deployment; a process that stops heartbeating gives its items to the others after the claim timeout.",
                    format::int(held) + if held == 1 { " item" } else { " items" },
                    claimants.len(),
                    if claimants.len() == 1 { "" } else { "es" },
                )}</p>
                <table class="grid">
                    <thead><tr><th>"Host"</th><th>"Process"</th><th class="num">"Items held"</th><th class="num">"Last heartbeat"</th></tr></thead>
                    <tbody>
                        {claimants.into_iter().map(|c| view! {
                            <tr>
                                <td>{c.host}</td>
                                <td>{c.pid}</td>
                                <td class="num">{format::int(c.items)}</td>
                                <td class="num">{format!("{:.0} s ago", c.heartbeat_secs)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </section>
        }
    })
}

/// The batches a job sent through the Batch API and how far the provider
/// has got with each.
#[component]
fn Batches(batches: Vec<crate::model::BatchView>) -> impl IntoView {
    (!batches.is_empty()).then(|| {
        let total: i64 = batches.iter().map(|b| b.total).sum();
        let done: i64 = batches.iter().map(|b| b.completed + b.failed).sum();
        let read = batches.iter().filter(|b| b.read).count();
        view! {
            <section id="job-batches">
                <h2>"Batch API"</h2>
                <p class="muted small">{format!(
                    "{} batch{} sent ({} requests, at half the price); the provider has answered {}; {} read into the job. \
                     A job stopped meanwhile follows its batches when resumed: nothing is sent or paid twice.",
                    batches.len(),
                    if batches.len() == 1 { "" } else { "es" },
                    format::int(total),
                    format::int(done),
                    read,
                )}</p>
                <div class="table-scroll">
                <table class="grid">
                    <thead><tr><th>"Batch"</th><th>"Provider's status"</th><th class="num">"Answered"</th><th class="num">"Failed"</th><th class="num">"Requests"</th><th>"Read"</th></tr></thead>
                    <tbody>
                        {batches.into_iter().map(|b| view! {
                            <tr data-batch=b.id.clone()>
                                <td class="small">{b.id.clone()}</td>
                                <td>{b.provider_status}</td>
                                <td class="num">{format::int(b.completed)}</td>
                                <td class="num">{format::int(b.failed)}</td>
                                <td class="num">{format::int(b.total)}</td>
                                <td>{if b.read { "yes" } else { "not yet" }}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
            </section>
        }
    })
}

#[component]
pub fn JobPage() -> impl IntoView {
    let project_id = route_id("id");
    let job_id = route_id("job");
    let project = Resource::new(move || project_id.get(), get_project);
    let resume = ServerAction::<ResumeJob>::new();
    let cancel = ServerAction::<CancelJob>::new();
    let live = RwSignal::new(true);
    let tick = live_ticks(live, move || Watch::Job(job_id.get()));
    // Items finished so far and the status: the page of items follows them.
    let finished = RwSignal::new((0i64, crate::model::JobStatus::Queued));
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
                    finished.set((j.done + j.failed, j.status));
                    let (rate, eta) = rate_and_eta(&j);
                    let id = j.id;
                    let can_resume = j.status.can_resume();
                    let can_retry = !j.status.is_active() && j.failed > 0;
                    // What the model did, in words: failed, cut and repaired items with their reasons.
                    let outcome = d.outcome.clone();
                    let said = (outcome.items > 0).then(|| {
                        let who = outcome.model.clone().map(|m| format!("Answered by {m}. ")).unwrap_or_default();
                        let what = outcome.sentence().unwrap_or_else(|| "No item failed, no reply was cut at max_tokens and none needed a repair turn.".into());
                        let class = if outcome.failed + outcome.truncated > 0 { "notice" } else { "muted" };
                        view! { <p id="job-outcome" class=class>{who}{what}</p> }
                    });
                    view! {
                        <h1>{format!("Job #{} · {}", j.id, j.kind.label())} " " <StatusBadge status=j.status.to_string()/></h1>
                        <dl class="totals job-totals">
                            <div><dt>"Progress"</dt><dd id="job-progress"><ProgressBar j=j.clone()/></dd></div>
                            <div><dt>"Failed"</dt><dd id="job-failed">{format::int(j.failed)}</dd></div>
                            <div><dt>"Tokens"</dt><dd>{format::int(j.tokens)}</dd></div>
                            <div><dt>"Cost"</dt><dd>{format::usd(j.cost_usd)}</dd></div>
                            <div><dt>"Rate · ETA"</dt><dd class="small">{format!("{rate} · {eta}")}<br/><span class="muted">{format!("{} of work", format::duration(j.elapsed_secs))}</span></dd></div>
                        </dl>
                        {j.error.clone().map(|e| view! { <p class="error">{e}</p> })}
                        {said}
                        <Claimants claimants=d.claimants.clone()/>
                        <Batches batches=d.batches.clone()/>
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
                        <h2>"Results"</h2>
                        <table class="grid summary-table" id="job-summary">
                            <tbody>
                                {d.summary.into_iter().map(|(what, value)| view! { <tr><th>{what}</th><td>{value}</td></tr> }).collect_view()}
                            </tbody>
                        </table>
                        {(!d.failure_reasons.is_empty()).then(|| view! {
                            <h3>"Why items failed"</h3>
                            <ul class="skipped failures" id="failure-reasons">
                                {d.failure_reasons.into_iter().map(|(reason, n)| view! {
                                    <li><strong>{format!("{} ×", format::int(n))}</strong>" "{reason}</li>
                                }).collect_view()}
                            </ul>
                        })}
                    }.into_any()
                })}
            </Transition>
            <Items job_id finished/>
        </main>
    }
}

/// The job's finished items, a page at a time (state in the address:
/// `?page=N&status=failed`); refreshed while the job runs.
#[component]
fn Items(job_id: Memo<i64>, finished: RwSignal<(i64, crate::model::JobStatus)>) -> impl IntoView {
    let query = use_query_map();
    let page = Memo::new(move |_| query.read().get("page").and_then(|p| p.parse::<i64>().ok()).unwrap_or(1));
    let status = Memo::new(move |_| query.read().get("status").filter(|s| s == "done" || s == "failed"));
    // Refetched as the job finishes more items (the job's line follows it
    // live) but at most every 3 s, and at once when its
    // status changes (it finished, failed, was cancelled); never otherwise.
    let refresh = throttle(Memo::new(move |_| finished.get()), std::time::Duration::from_secs(3), |a, b| a.1 != b.1);
    let items = Resource::new(
        move || (job_id.get(), page.get(), status.get(), refresh.get()),
        |(id, page, status, _)| get_job_items(id, page, status),
    );
    let link = move |page: i64, status: Option<String>| {
        let mut q = vec![format!("page={page}")];
        if let Some(s) = status {
            q.push(format!("status={s}"));
        }
        format!("?{}", q.join("&"))
    };
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading items…"</p> }>
            {move || Suspend::new(async move {
                let p = match items.await {
                    Ok(p) => p,
                    Err(e) => return view! { <ErrorNote error=e/> }.into_any(),
                };
                let id = job_id.get_untracked();
                let shown = status.get_untracked();
                let filter = |label: &'static str, s: Option<&'static str>| {
                    let on = shown.as_deref() == s;
                    view! { <a class=if on { "chip selected" } else { "chip" } href=link(1, s.map(str::to_string))>{label}</a> }
                };
                view! {
                    <h2 id="items">{format!("Items ({} finished{})", format::int(p.total), shown.as_deref().map(|s| format!(", {s}")).unwrap_or_default())}</h2>
                    <p class="inline-form">"Show: " {filter("all", None)} {filter("done", Some("done"))} {filter("failed", Some("failed"))}</p>
                    {if p.items.is_empty() {
                        view! { <p class="muted" id="no-items">"No finished item yet: they appear here as the job finishes them."</p> }.into_any()
                    } else {
                        view! {
                            <table class="grid items" id="job-items">
                                <thead><tr><th>"Item"</th><th>"Status"</th><th>"Result"</th><th class="num">"Tokens"</th><th></th></tr></thead>
                                <tbody>
                                    {p.items.iter().cloned().map(|item| view! { <ItemRow job_id=id item/> }).collect_view()}
                                </tbody>
                            </table>
                            <Pager page=p.page pages=p.pages total=p.total per_page=crate::model::ITEMS_PER_PAGE count=p.items.len()
                                href={ let shown = shown.clone(); move |n| link(n, shown.clone()) } id="item-pager" label="Pages of items"/>
                        }.into_any()
                    }}
                }.into_any()
            })}
        </Transition>
    }
}

#[component]
fn ItemRow(job_id: i64, item: JobItemView) -> impl IntoView {
    let open = RwSignal::new(false);
    let whole = RwSignal::new(false);
    let key = item.key.clone();
    // The whole result loads only when asked for.
    let result = Resource::new(
        move || whole.get(),
        move |on| {
            let key = key.clone();
            async move {
                if on {
                    get_job_item(job_id, key).await.map(|i| i.result)
                } else {
                    Ok(None)
                }
            }
        },
    );
    let line = if item.summary.is_empty() { item.error.clone().unwrap_or_default() } else { item.summary.clone() };
    let failed_reason = (!item.summary.is_empty()).then(|| item.error.clone()).flatten();
    view! {
        <tr data-item=item.key.clone()>
            <td class="mono">{item.key.clone()}</td>
            <td><StatusBadge status=item.status.to_string()/></td>
            <td class="result">{line}
                {failed_reason.map(|e| view! { <br/><span class="error-text small">{e}</span> })}
                {(!item.summary.is_empty()).then(|| view! {
                    " " <Toggle open=whole show="Whole result" hide="Hide the result" class="small whole-result"/>
                })}
                <Show when=move || whole.get()>
                    <Suspense fallback=|| view! { <p class="muted small">"Loading…"</p> }>
                        {move || Suspend::new(async move {
                            match result.await {
                                Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                                Ok(r) => view! { <pre class="whole-result">{r.unwrap_or_default()}</pre> }.into_any(),
                            }
                        })}
                    </Suspense>
                </Show>
            </td>
            <td class="num">{format::int(item.tokens)}</td>
            <td class="actions"><CallsToggle open/></td>
        </tr>
        <Show when=move || open.get()>
            <tr class="calls-row"><td colspan="5"><ItemCallLog job_id item=item.key.clone() open/></td></tr>
        </Show>
    }
}

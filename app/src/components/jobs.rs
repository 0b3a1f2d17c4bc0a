//! The widgets of background jobs that stage pages share: live progress,
//! the latest job's line, status badges and an item's call log.

use leptos::prelude::*;

use crate::api::jobs::get_item_calls;
use crate::components::ErrorNote;
use crate::error::AppError;
use crate::format;
use crate::model::{CallView, JobKind, JobStatus, JobView};

/// A signal that ticks every second while `live` is true: resources keyed
/// on it refresh without a reload. (The interval only runs in the browser.)
pub fn ticker(live: RwSignal<bool>) -> RwSignal<u64> {
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

#[component]
pub fn StatusBadge(status: String) -> impl IntoView {
    let class = format!("badge status-{status}");
    view! { <span class=class>{status}</span> }
}

#[component]
pub fn ProgressBar(j: JobView) -> impl IntoView {
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
pub fn LatestJob(
    project_id: i64,
    kind: JobKind,
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
        let running = latest.as_ref().is_some_and(|j| j.status.is_active());
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
                let running = latest.as_ref().is_some_and(|j| j.status.is_active());
                latest.filter(|j| running || j.status != JobStatus::Done).map(|j| view! {
                    <p class="job-line" id=dom_id>
                        <a href=format!("/projects/{project_id}/jobs/{}", j.id)>{format!("{label} job #{}", j.id)}</a> " "
                        <StatusBadge status=j.status.to_string()/> " " <ProgressBar j=j.clone()/>
                        {j.error.clone().map(|e| view! { <span class="error">{e}</span> })}
                    </p>
                })
            })}
        </Transition>
    }
}

/// `source`, changing at most once per `every`: a change passes at once,
/// further ones wait out the rest of the interval and then pass as the
/// latest value; a change `urgent` says is one (a job that finished) passes
/// at once whatever the wait. For lists refetched as a job progresses: one
/// fetch per interval, however fast its items finish.
pub fn throttle<T>(source: Memo<T>, every: std::time::Duration, urgent: fn(&T, &T) -> bool) -> RwSignal<T>
where
    T: Clone + PartialEq + Send + Sync + 'static,
{
    let out = RwSignal::new(source.get_untracked());
    let cooling = StoredValue::new(false);
    // After each pass, the interval's wait; its end passes what changed meanwhile.
    fn wait<T: Clone + PartialEq + Send + Sync + 'static>(
        source: Memo<T>,
        out: RwSignal<T>,
        cooling: StoredValue<bool>,
        every: std::time::Duration,
    ) {
        cooling.set_value(true);
        set_timeout(
            move || {
                let latest = source.get_untracked();
                if latest != out.get_untracked() {
                    out.set(latest);
                    wait(source, out, cooling, every);
                } else {
                    cooling.set_value(false);
                }
            },
            every,
        );
    }
    Effect::new(move |_| {
        let latest = source.get();
        let shown = out.get_untracked();
        if latest == shown {
            return;
        }
        if !cooling.get_value() {
            out.set(latest);
            wait(source, out, cooling, every);
        } else if urgent(&shown, &latest) {
            out.set(latest);
        }
    });
    out
}

/// A link-styled button that opens and closes something: `show` while
/// closed, `hide` while open.
#[component]
pub fn Toggle(
    open: RwSignal<bool>,
    show: &'static str,
    hide: &'static str,
    #[prop(optional, into)] class: Option<String>,
) -> impl IntoView {
    let class = class.map_or("link".to_string(), |c| format!("link {c}"));
    view! {
        <button type="button" class=class on:click=move |_| open.update(|o| *o = !*o)>
            {move || if open.get() { hide } else { show }}
        </button>
    }
}

/// Opens and closes an item's call log.
#[component]
pub fn CallsToggle(open: RwSignal<bool>) -> impl IntoView {
    view! { <Toggle open show="Calls" hide="Hide calls"/> }
}

/// One job item's call log, loaded when `open`.
#[component]
pub fn ItemCallLog(job_id: i64, item: String, open: RwSignal<bool>) -> impl IntoView {
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
pub fn ItemCalls(job_id: i64, item: String) -> impl IntoView {
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
                            {format!("#{} · {} · {} · sample {} · {} + {} tokens · {} ms · {} attempt{} · {}{}",
                                c.id, who, c.purpose, c.sample, format::int(c.prompt_tokens), format::int(c.completion_tokens),
                                format::int(c.latency_ms), c.attempts, if c.attempts == 1 { "" } else { "s" },
                                format::usd(c.cost_usd), if c.cached { " · from cache" } else { "" })}
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

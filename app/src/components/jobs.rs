//! The widgets of background jobs that stage pages share: live progress,
//! the latest job's line, status badges and an item's call log.

use leptos::prelude::*;

use crate::api::jobs::get_item_calls;
use crate::components::ErrorNote;
use crate::error::AppError;
use crate::format;
use crate::model::{CallView, JobKind, JobStatus, JobView};

/// What a live view watches (see `ssr::live`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// A project's jobs.
    Project(i64),
    Job(i64),
    Experiment(i64),
    /// A study's ratings and its LLM rater.
    Study(i64),
}

impl Watch {
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    fn wire(self) -> (&'static str, i64) {
        match self {
            Watch::Project(id) => ("project", id),
            Watch::Job(id) => ("job", id),
            Watch::Experiment(id) => ("experiment", id),
            Watch::Study(id) => ("study", id),
        }
    }
}

/// The one mechanism behind every live view: a signal that ticks each time
/// what `watch` names changes, while `live` is true (the page sets it from
/// what it shows: something runs). Resources keyed on it refetch then, and
/// only then. Underneath, one long-poll at a time (`api::jobs::watch`:
/// the server answers on a change, or after 25 s with none); at most one
/// refresh a second (the first answer of a loop refreshes once, so a change
/// between the page's read and the loop's start is not missed); after an error, waits of 1, 2, 4 … 30 s. When the
/// server says the topic is no longer active the signal ticks once more
/// (the page shows the end) and the requests stop: an open tab on
/// something finished sends nothing.
pub fn live_ticks(live: RwSignal<bool>, watch: impl Fn() -> Watch + Send + Sync + 'static) -> RwSignal<u64> {
    let tick = RwSignal::new(0u64);
    #[cfg(not(feature = "hydrate"))]
    let _ = (live, watch);
    #[cfg(feature = "hydrate")]
    {
        // Each start is a generation; a loop of an older one stops.
        let generation = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let current = generation.clone();
        // Pages set `live` after every refetch; only a change of its value
        // starts or stops the loop (a restart would forget `seen`).
        let on = Memo::new(move |_| live.get());
        Effect::new(move |_| {
            let on = on.get();
            let (topic, id) = watch().wire();
            let me = current.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if !on {
                return;
            }
            let current = current.clone();
            let still = move || current.load(std::sync::atomic::Ordering::SeqCst) == me;
            leptos::task::spawn_local(async move {
                let mut seen: Option<String> = None;
                let mut backoff = 1_000;
                while still() {
                    match crate::api::jobs::watch(topic.to_string(), id, seen.clone()).await {
                        Ok(state) => {
                            backoff = 1_000;
                            if !still() {
                                break;
                            }
                            // The first answer ticks too: what the page shows
                            // was read before it, and may be older.
                            let changed = seen.as_ref().is_none_or(|v| *v != state.version);
                            if changed || !state.active {
                                tick.try_update(|t| *t += 1);
                            }
                            if !state.active {
                                break;
                            }
                            seen = Some(state.version);
                            if changed {
                                sleep_ms(1_000).await;
                            }
                        }
                        Err(_) => {
                            sleep_ms(backoff).await;
                            backoff = (backoff * 2).min(30_000);
                        }
                    }
                }
            });
        });
        on_cleanup(move || {
            generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
    }
    tick
}

/// Resolves after `ms` milliseconds (the browser's timer).
#[cfg(feature = "hydrate")]
async fn sleep_ms(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
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
                let who = c.provider.label(&c.model);
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

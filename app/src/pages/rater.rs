//! `/s/:token`: a rater's side of a study, with no account. The intro and
//! the corpus summary, then one item per screen — a question (and, when
//! validating answers, the answer and its source passage) — with a scale per
//! dimension (mouse, touch, or number keys; ← and → or Enter to move) and,
//! when validating answers, the categories to pick from; a progress bar,
//! back and next, and a thank-you page. Each item's scores are saved when
//! the rater moves on, so a reload resumes at the first unrated item; at an
//! open link the browser keeps its rater token in local storage. Where the
//! questions or answers came from is never shown.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

#[cfg(feature = "hydrate")]
use crate::api::studies::study_session;
use crate::api::studies::{study_finish, study_rate};
use crate::error::AppError;
use crate::model::{Dimension, RaterItem, RaterSession};

#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Intro,
    Item(usize),
    Thanks,
}

#[cfg(feature = "hydrate")]
fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn storage_key(link: &str) -> String {
    format!("assay-rater-{}", link.chars().take(12).collect::<String>())
}

#[component]
pub fn RaterPage() -> impl IntoView {
    let params = use_params_map();
    let link = Memo::new(move |_| params.read().get("token").unwrap_or_default());
    let session = RwSignal::new(None::<Result<RaterSession, AppError>>);
    let stage = RwSignal::new(Stage::Intro);
    // Item id → scores per dimension (None: not chosen yet).
    let scores = RwSignal::new(std::collections::HashMap::<i64, Vec<Option<u8>>>::new());
    let focus = RwSignal::new(0usize);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);

    // In the browser only: open (or resume) the session.
    Effect::new(move |_| {
        let link = link.get();
        #[cfg(feature = "hydrate")]
        {
            let stored = storage().and_then(|s| s.get_item(&storage_key(&link)).ok().flatten()).unwrap_or_default();
            leptos::task::spawn_local(async move {
                let r = study_session(link.clone(), stored).await;
                if let Ok(s) = &r {
                    if let Some(st) = storage() {
                        let _ = st.set_item(&storage_key(&link), &s.rater);
                    }
                    scores.set(s.ratings.iter().cloned().collect());
                    if s.finished {
                        stage.set(Stage::Thanks);
                    } else if !s.ratings.is_empty() {
                        let first_open = s
                            .items
                            .iter()
                            .position(|it| !s.ratings.iter().any(|(r, v)| *r == it.id && v.iter().all(Option::is_some)))
                            .unwrap_or(s.items.len().saturating_sub(1));
                        stage.set(Stage::Item(first_open));
                    }
                }
                session.set(Some(r));
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (link, storage_key(""));
    });

    #[cfg(feature = "hydrate")]
    let dimensions = move || {
        session.with(|s| s.as_ref().and_then(|r| r.as_ref().ok()).map(|s| s.dimensions.clone()).unwrap_or_default())
    };
    let dims = move || session.with(|s| s.as_ref().and_then(|r| r.as_ref().ok()).map_or(0, |s| s.dimensions.len()));
    let items =
        move || session.with(|s| s.as_ref().and_then(|r| r.as_ref().ok()).map(|s| s.items.clone()).unwrap_or_default());
    let item_at = move |i: usize| items().get(i).cloned();
    let complete =
        move |id: i64| scores.with(|m| m.get(&id).is_some_and(|v| v.len() == dims() && v.iter().all(Option::is_some)));
    let set_score = move |id: i64, d: usize, v: u8| {
        let n = dims();
        scores.update(|m| {
            let e = m.entry(id).or_insert_with(|| vec![None; n]);
            if e.len() < n {
                e.resize(n, None);
            }
            e[d] = Some(v);
        });
    };
    let chosen = move |id: i64, d: usize| scores.with(|m| m.get(&id).and_then(|x| x.get(d)).copied().flatten());
    // Saves the current item, then moves to `to` (or submits at the end).
    let go = move |to: Option<usize>| {
        let Stage::Item(i) = stage.get_untracked() else { return };
        let Some(RaterItem { id, .. }) = item_at(i) else { return };
        if to.is_some_and(|t| t < i) && !complete(id) {
            stage.set(Stage::Item(to.unwrap_or(0)));
            focus.set(0);
            return;
        }
        if !complete(id) {
            error.set(Some("Choose a score for every dimension first.".into()));
            return;
        }
        let (link, rater) = (
            link.get_untracked(),
            session.with_untracked(|s| {
                s.as_ref().and_then(|r| r.as_ref().ok()).map(|s| s.rater.clone()).unwrap_or_default()
            }),
        );
        let values = scores.with_untracked(|m| m.get(&id).cloned().unwrap_or_default());
        busy.set(true);
        leptos::task::spawn_local(async move {
            let csv = values.iter().map(|v| v.map_or(String::new(), |v| v.to_string())).collect::<Vec<_>>().join(",");
            let saved = study_rate(link.clone(), rater.clone(), id, csv).await;
            let result = match (saved, to) {
                (Err(e), _) => Err(e),
                (Ok(_), Some(t)) => {
                    stage.set(Stage::Item(t));
                    Ok(())
                }
                (Ok(_), None) => study_finish(link, rater).await.map(|_| stage.set(Stage::Thanks)),
            };
            busy.set(false);
            focus.set(0);
            error.set(result.err().map(|e| e.to_string()));
        });
    };

    // Keys: a number scores the focused dimension (a scale's point with that
    // value; a category by its position, from 1) and moves focus on; ←
    // back; → or Enter next.
    #[cfg(feature = "hydrate")]
    {
        let handle = window_event_listener(leptos::ev::keydown, move |ev: web_sys::KeyboardEvent| {
            let Stage::Item(i) = stage.get_untracked() else { return };
            let Some(item) = item_at(i) else { return };
            let id = item.id;
            let key = ev.key();
            let n = items().len();
            match key.as_str() {
                k if k.len() == 1 && k.as_bytes()[0].is_ascii_digit() => {
                    let d = focus.get_untracked().min(dims().saturating_sub(1));
                    let Some(dim) = dimensions().get(d).cloned() else { return };
                    let digit: u8 = k.parse().unwrap_or(0);
                    let value = if dim.choice {
                        digit.checked_sub(1).filter(|v| (*v as usize) < item.choices.len())
                    } else {
                        Some(digit).filter(|v| *v >= dim.min && (*v as usize) < dim.min as usize + dim.labels.len())
                    };
                    if let Some(v) = value {
                        set_score(id, d, v);
                        focus.set((d + 1).min(dims().saturating_sub(1)));
                    }
                }
                "ArrowLeft" if i > 0 => go(Some(i - 1)),
                "ArrowRight" | "Enter" => go(if i + 1 < n { Some(i + 1) } else { None }),
                "ArrowUp" => focus.update(|f| *f = f.saturating_sub(1)),
                "ArrowDown" => focus.update(|f| *f = (*f + 1).min(dims().saturating_sub(1))),
                _ => {}
            }
        });
        on_cleanup(move || handle.remove());
    }

    view! {
        <Title text="Rate"/>
        <main class="page rater" id="rater">
            {move || match session.get() {
                None => view! { <p class="muted" id="rater-loading">"Loading the study…"</p> }.into_any(),
                Some(Err(e)) => view! { <h1>"Study"</h1><p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                Some(Ok(s)) if !s.is_open && stage.get() != Stage::Thanks => view! {
                    <h1>{s.study.clone()}</h1>
                    <p id="study-closed">"This study is closed and takes no more ratings. Thank you for your interest."</p>
                }.into_any(),
                Some(Ok(s)) => {
                    let total = s.items.len();
                    let answers = s.items.iter().any(|i| i.answer.is_some());
                    match stage.get() {
                        Stage::Intro => view! {
                            <h1>{s.study.clone()}</h1>
                            {(!s.intro.is_empty()).then(|| view! { <p class="intro">{s.intro.clone()}</p> })}
                            {(!s.corpus_summary.is_empty()).then(|| view! {
                                <h2>"About the source text"</h2><p class="corpus-summary">{s.corpus_summary.clone()}</p>
                            })}
                            <p>{if answers {
                                format!("You will read {total} questions, each with an answer and the passage it should rest on, one at a time, and rate each on {} dimensions:", s.dimensions.len())
                            } else {
                                format!("You will read {total} questions, one at a time, and score each on {} dimensions:", s.dimensions.len())
                            }}</p>
                            <dl class="dimensions">
                                {s.dimensions.iter().map(|d| view! {
                                    <dt>{d.name.clone()} " " <span class="muted small">{scale_text(d)}</span></dt><dd>{d.definition.clone()}</dd>
                                }).collect_view()}
                            </dl>
                            <p class="muted small">"Click or tap a score, or press its number on the keyboard (it fills the dimensions in turn; a category by its position); → or Enter goes on, ← goes back. Your answers are saved as you go: you can close the page and come back."</p>
                            <button type="button" id="start-rating" on:click=move |_| stage.set(Stage::Item(0))>"Start"</button>
                        }.into_any(),
                        Stage::Thanks => view! {
                            <h1>"Thank you!"</h1>
                            <p id="thanks">"Your ratings are submitted. You can close this page."</p>
                        }.into_any(),
                        Stage::Item(i) => {
                            let item = s.items.get(i).cloned().unwrap_or_default();
                            let id = item.id;
                            let dims = s.dimensions.clone();
                            let last = i + 1 == total;
                            view! {
                                <div class="rater-progress">
                                    <progress max=total.to_string() value=(i + 1).to_string()></progress>
                                    <span class="small" id="rater-position">{format!("{} of {total}", i + 1)}</span>
                                </div>
                                <article class="rate-item" data-item=id>
                                    <p class="question" id="rated-question">{item.text.clone()}</p>
                                    {item.answer.clone().map(|a| view! {
                                        <div class="rated-answer"><h3 class="small">"Answer"</h3><p id="rated-answer">{a}</p></div>
                                    })}
                                    {item.context.clone().map(|c| view! {
                                        <details class="rated-passage" open=true><summary class="small">"Source passage"</summary>
                                            <p class="passage small" id="rated-passage">{c}</p></details>
                                    })}
                                    {dims.into_iter().enumerate().map(|(d, dim)| {
                                        let points: Vec<(u8, String, Option<String>)> = if dim.choice {
                                            item.choices.iter().enumerate().map(|(k, (path, definition))| {
                                                let name = path.rsplit('/').next().unwrap_or(path).replace('_', " ");
                                                (k as u8, format!("{} · {name}", k + 1), Some(definition.clone()))
                                            }).collect()
                                        } else {
                                            dim.labels.iter().enumerate().map(|(k, l)| (dim.min + k as u8, l.clone(), None)).collect()
                                        };
                                        let choice = dim.choice;
                                        // On a phone the five points stay in one row with
                                        // their numbers only; the labels are spelled out
                                        // whole underneath (none breaks mid-word).
                                        let legend = (!choice).then(|| points.iter().map(|(v, l, _)| format!("{v} {l}")).collect::<Vec<_>>().join(" · "));
                                        view! {
                                            <fieldset class="scale" class:choices-scale=choice class:focused=move || focus.get() == d data-dimension=d>
                                                <legend><strong>{dim.name.clone()}</strong></legend>
                                                <p class="muted small definition">{dim.definition.clone()}</p>
                                                <div class="points">
                                                    {points.into_iter().map(|(v, label, about)| view! {
                                                        <button type="button" class="point"
                                                            class:chosen=move || chosen(id, d) == Some(v)
                                                            aria-pressed=move || (chosen(id, d) == Some(v)).to_string()
                                                            data-value=v
                                                            on:click=move |_| { set_score(id, d, v); focus.set(d + 1); }>
                                                            {(!choice).then(|| view! { <span class="value">{v}</span> })}
                                                            <span class="label">{label}</span>
                                                            {about.map(|a| view! { <span class="about small muted">{a}</span> })}
                                                        </button>
                                                    }).collect_view()}
                                                </div>
                                                {legend.map(|l| view! { <p class="scale-legend small muted">{l}</p> })}
                                            </fieldset>
                                        }
                                    }).collect_view()}
                                </article>
                                {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                                <div class="rater-nav">
                                    <button type="button" id="rate-back" disabled=i == 0 on:click=move |_| go(Some(i.saturating_sub(1)))>"← Back"</button>
                                    <button type="button" id="rate-next" disabled=move || busy.get() || !complete(id)
                                        on:click=move |_| go(if last { None } else { Some(i + 1) })>
                                        {if last { "Submit" } else { "Next →" }}
                                    </button>
                                </div>
                            }.into_any()
                        }
                    }
                }
            }}
        </main>
    }
}

/// "(1–5)", "(0–3)", or "(pick one)" after a dimension's name.
fn scale_text(d: &Dimension) -> String {
    if d.choice {
        "(pick one)".into()
    } else {
        format!("({}–{})", d.min, d.min as usize + d.labels.len().saturating_sub(1))
    }
}

//! `/projects/:id/metrics`: reference-based metrics (seed 004) — choose a
//! question set with reference answers and answer sets over it; the
//! metrics per answer set in the seed's layout (Table 1: MAP, nDCG@k,
//! Recall@k, CS, ROUGE-1, BLEU), per category, the granularity analysis
//! (Table 2: discriminative power and NMI by level, with its chart), each
//! split's Coherence Ratio and the hierarchy drawn with it, and the LV × QC
//! table (Table 4) with its gaps and main effects. A run is a job: the
//! page lists the runs, and `/projects/:id/metrics/:run` follows one to its
//! report — every question's scores as CSV, the report as JSON or one HTML
//! file, each chart as SVG or PNG, and a share link.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::answers::list_answer_sets;
use crate::api::metrics::{get_metrics_run, list_metrics_runs, DeleteMetricsRun, StartMetrics};
use crate::api::projects::get_project;
use crate::api::questions::list_question_sets;
use crate::components::help::{text as help, Cite, Help, Paper};
use crate::components::jobs::{live_ticks, ProgressBar, StatusBadge, Watch};
use crate::components::route_id;
use crate::components::{ConfirmDelete, ErrorNote, ProjectBar, SharePanel};
use crate::model::{defaults, Group, MetricsMeansView, MetricsRunView, MetricsView, SetMetricsView};

fn f3(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.3}"))
}

#[component]
pub fn MetricsPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let question_sets = Resource::new(move || id.get(), list_question_sets);
    let answer_sets = Resource::new(move || id.get(), list_answer_sets);
    let compute = ServerAction::<StartMetrics>::new();
    let delete = ServerAction::<DeleteMetricsRun>::new();
    let runs = Resource::new(
        move || (id.get(), compute.version().get(), delete.version().get()),
        |(p, ..)| list_metrics_runs(p),
    );
    Effect::new(move |_| {
        if let Some(Ok(run)) = compute.value().get() {
            leptos_router::hooks::use_navigate()(
                &format!("/projects/{}/metrics/{run}", id.get_untracked()),
                Default::default(),
            );
        }
    });
    let chosen = RwSignal::new(None::<i64>);
    let picked = RwSignal::new(Vec::<i64>::new());
    let k = RwSignal::new(defaults::METRICS_K as u32);
    let bins = RwSignal::new(defaults::METRICS_BINS as u32);
    let unit = RwSignal::new(types::RelevanceUnit::Document);
    let definitions = RwSignal::new(types::Definitions::Standard);
    view! {
        <Title text="Metrics"/>
        <ProjectBar project_id=id.get_untracked() project active="metrics"/>
        <main class="page wide">
            <h1>"Metrics"</h1>
            <p class="muted">"Answers against reference answers and retrieval against each question's source chunks (" <Cite paper=Paper::HieraRag at="§2.4, Evaluation Metrics"/> "): MAP, nDCG@k and Recall@k for methods that record the chunks they retrieved; cosine similarity of all-MiniLM-L6-v2 embeddings (in process, not an LLM), ROUGE-1 F1 (as rouge-score), BLEU (as sacrebleu: 13a tokens, exp smoothing). Then how informative the category hierarchy is: discriminative power and normalised mutual information by level, and the Coherence Ratio of each split."</p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let sets = question_sets.await.unwrap_or_default();
                    let answers = answer_sets.await.unwrap_or_default();
                    if sets.is_empty() {
                        return view! { <p class="muted" id="no-sets">"Make a question set with reference answers first (Questions: hierarchical questions)."</p> }.into_any();
                    }
                    let first = sets.iter().rev().find(|s| s.kind == types::QuestionSetKind::Hierarchical).or(sets.last()).map(|s| s.id);
                    if chosen.get_untracked().is_none() {
                        chosen.set(first);
                        picked.set(answers.iter().filter(|a| Some(a.question_set_id) == first && a.sanity_of.is_none()).map(|a| a.id).collect());
                    }
                    let all = answers.clone();
                    view! {
                        <section class="panel build-panel" id="metrics-form">
                            <div class="inline-form">
                                <label>"Question set "
                                    <select id="metrics-set" on:change=move |ev| {
                                        let s = event_target_value(&ev).parse::<i64>().ok();
                                        chosen.set(s);
                                        picked.set(all.iter().filter(|a| Some(a.question_set_id) == s && a.sanity_of.is_none()).map(|a| a.id).collect());
                                    }>
                                        {sets.iter().rev().map(|s| view! {
                                            <option value=s.id.to_string() selected=Some(s.id) == first>{format!("#{} {} ({} questions)", s.id, s.name, s.questions)}</option>
                                        }).collect_view()}
                                    </select>
                                </label>
                                <label>"k " <input type="number" class="narrow" min="1" max="100" id="metrics-k" value=k.get_untracked().to_string() prop:value=move || k.get().to_string()
                                    on:input=move |ev| k.set(event_target_value(&ev).parse().unwrap_or(defaults::METRICS_K as u32))/><Help text=help::K/></label>
                                <label>"bins " <input type="number" class="narrow" min="2" max="20" id="metrics-bins" value=bins.get_untracked().to_string() prop:value=move || bins.get().to_string()
                                    on:input=move |ev| bins.set(event_target_value(&ev).parse().unwrap_or(defaults::METRICS_BINS as u32))/><Help text=help::BINS/></label>
                                <label>"relevant when it matches the question's "
                                    <select id="metrics-unit" on:change=move |ev| if let Ok(u) = event_target_value(&ev).parse() { unit.set(u) }>
                                        <option value="document" selected>"source document (as the HieraRAG paper)"</option>
                                        <option value="passage">"source passage (overlapping chunk)"</option>
                                        <option value="chunk">"source chunk only"</option>
                                    </select>
                                </label>
                                <label>"definitions "
                                    <select id="metrics-definitions" on:change=move |ev| if let Ok(d) = event_target_value(&ev).parse() { definitions.set(d) }>
                                        <option value="standard" selected>"standard (trec_eval, rouge-score, sacrebleu, scikit-learn)"</option>
                                        <option value="as-published">"as published (the HieraRAG authors' code)"</option>
                                    </select>
                                </label>
                            </div>
                            <fieldset class="choices" id="metrics-answers">
                                <legend>"Answer sets"</legend>
                                {move || {
                                    let of_set: Vec<_> = answers.iter().filter(|a| Some(a.question_set_id) == chosen.get()).cloned().collect();
                                    if of_set.is_empty() {
                                        return view! { <p class="muted small">"No answer sets over this question set yet (Answers)."</p> }.into_any();
                                    }
                                    of_set.into_iter().map(|a| {
                                        let aid = a.id;
                                        view! {
                                            <label class="choice"><input type="checkbox" data-answers=aid
                                                checked=picked.get_untracked().contains(&aid)
                                                prop:checked=move || picked.get().contains(&aid)
                                                on:change=move |ev| {
                                                    let on = event_target_checked(&ev);
                                                    picked.update(|p| { p.retain(|x| *x != aid); if on { p.push(aid); } });
                                                }/>
                                                {format!(" #{} {} ({})", a.id, a.name, a.method)}</label>
                                        }
                                    }).collect_view().into_any()
                                }}
                            </fieldset>
                            <button type="button" id="compute-metrics" disabled=move || compute.pending().get() || picked.get().is_empty()
                                on:click=move |_| {
                                    let mut ids = picked.get_untracked();
                                    ids.sort_unstable();
                                    compute.dispatch(StartMetrics {
                                        set_id: chosen.get_untracked().unwrap_or_default(),
                                        answer_sets: ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(","),
                                        req: types::requests::MetricsRequest {
                                            k: k.get_untracked() as usize,
                                            bins: bins.get_untracked() as usize,
                                            unit: unit.get_untracked(),
                                            definitions: definitions.get_untracked(),
                                        },
                                    });
                                }>"Compute"</button>
                            <p class="muted small">"Each answer and reference is embedded once and kept: a later run over the same texts embeds nothing."</p>
                        </section>
                    }.into_any()
                })}
            </Suspense>
            {move || compute.value().get().and_then(|r| r.err()).map(|e| view! { <ErrorNote error=e/> })}
            <h2>"Runs"</h2>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let list = runs.await.unwrap_or_default();
                    if list.is_empty() {
                        return view! { <p class="muted" id="no-runs">"No metrics runs yet. Choose a question set with reference answers and the answer sets to score above, then Compute."</p> }.into_any();
                    }
                    view! {
                        <table class="grid" id="metrics-runs">
                            <thead><tr><th>"Run"</th><th>"Question set"</th><th>"Answer sets"</th><th class="num">"k"</th><th class="num">"bins"</th><th>"Status"</th><th>"Created"</th><th></th></tr></thead>
                            <tbody>{list.into_iter().map(|r| run_row(id.get_untracked(), r, delete)).collect_view()}</tbody>
                        </table>
                    }.into_any()
                })}
            </Suspense>
        </main>
    }
}

fn run_row(project_id: i64, r: MetricsRunView, delete: ServerAction<DeleteMetricsRun>) -> impl IntoView {
    let run_id = r.id;
    let status =
        if r.finished { "done".to_string() } else { r.job.as_ref().map_or("no job".into(), |j| j.status.to_string()) };
    view! {
        <tr data-run=r.id>
            <td><a href=format!("/projects/{project_id}/metrics/{}", r.id)>{format!("#{}", r.id)}</a></td>
            <td>{format!("#{} {}", r.question_set_id, r.question_set)}</td>
            <td class="small">{r.answer_sets.iter().map(|(a, l)| format!("#{a} {l}")).collect::<Vec<_>>().join(", ")}</td>
            <td class="num">{r.k}</td><td class="num">{r.bins}</td>
            <td><StatusBadge status/></td><td class="small">{r.created_at.clone()}</td>
            <td class="actions"><ConfirmDelete prompt=format!("Delete metrics run #{run_id}? Its share links stop working; the embeddings stay for the next run.")
                on_confirm=move |_| { delete.dispatch(DeleteMetricsRun { run_id }); }/></td>
        </tr>
    }
}

/// `/projects/:id/metrics/:run`: the run's job while it runs, then its report.
#[component]
pub fn MetricsRunPage() -> impl IntoView {
    let id = route_id("id");
    let run_id = route_id("run");
    let project = Resource::new(move || id.get(), get_project);
    let live = RwSignal::new(false);
    let tick = live_ticks(live, move || Watch::Project(id.get()));
    let page = Resource::new(move || (run_id.get(), tick.get()), |(r, _)| get_metrics_run(r));
    view! {
        <Title text="Metrics run"/>
        <ProjectBar project_id=id.get_untracked() project active="metrics"/>
        <main class="page wide">
            <p class="small"><a href=format!("/projects/{}/metrics", id.get_untracked())>"← Metrics"</a></p>
            <Transition fallback=|| view! { <p class="muted">"Loading the run…"</p> }>
                {move || Suspend::new(async move {
                    match page.await {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(p) => {
                            let running = p.run.job.as_ref().is_some_and(|j| j.status.is_active());
                            live.set(!p.run.finished && running);
                            let r = p.run.clone();
                            view! {
                                <h1>{format!("Metrics run #{}", r.id)}</h1>
                                <p class="small muted">{format!("Question set #{} {} · answer sets {} · k = {} · {} bins · relevance at the {} unit", r.question_set_id, r.question_set,
                                    r.answer_sets.iter().map(|(a, l)| format!("#{a} {l}")).collect::<Vec<_>>().join(", "), r.k, r.bins, r.relevance_unit)}</p>
                                {r.job.clone().map(|j| view! {
                                    <p class="small" id="run-job">"Job " <a href=format!("/projects/{}/jobs/{}", r.project_id, j.id)>{format!("#{}", j.id)}</a> " "
                                        <StatusBadge status=j.status.to_string()/> " " <ProgressBar j=j.clone()/>
                                        {j.error.clone().map(|e| view! { <span class="error">{format!(" {e}")}</span> })}</p>
                                })}
                                {match p.view {
                                    Some(v) => view! {
                                        <SharePanel kind=types::ShareKind::Metrics page_id=r.id/>
                                        <Results v/>
                                    }.into_any(),
                                    None => view! { <p class="muted" id="run-pending">"The report appears when every batch is scored."</p> }.into_any(),
                                }}
                            }.into_any()
                        }
                    }
                })}
            </Transition>
        </main>
    }
}

/// The BLEU column's header: NLTK's 0–1 scale under the as-published
/// definitions, sacrebleu's 0–100 under the standard ones.
fn bleu_header(published: bool) -> &'static str {
    if published {
        "BLEU (0–1, NLTK)"
    } else {
        "BLEU (0–100)"
    }
}

/// A group's means; BLEU on NLTK's 0–1 scale when `published`.
fn means_cells(m: &MetricsMeansView, published: bool) -> impl IntoView {
    let bleu = if published { format!("{:.4}", m.bleu) } else { format!("{:.2}", m.bleu) };
    view! {
        <td class="num">{m.n}</td><td class="num">{f3(m.map)}</td><td class="num">{f3(m.ndcg)}</td><td class="num">{f3(m.recall)}</td>
        <td class="num">{format!("{:.3}", m.cs)}</td><td class="num">{format!("{:.3}", m.rouge1)}</td><td class="num">{bleu}</td>
    }
}

/// A chart drawn on the server, inline or linked, with its SVG and PNG
/// downloads (none in a standalone file: `base` is empty).
fn chart(base: &str, name: String, figure: crate::model::Figure, alt: String) -> impl IntoView {
    let downloads = (!base.is_empty()).then(|| {
        view! {
            <figcaption class="small"><a href=format!("{base}/{name}.svg") download="">"SVG"</a> " · "
                <a href=format!("{base}/{name}.png") download="">"PNG"</a></figcaption>
        }
    });
    let drawn = match figure {
        crate::model::Figure::Inline(svg) => {
            view! { <div class="svg" role="img" aria-label=alt inner_html=svg></div> }.into_any()
        }
        crate::model::Figure::Linked => {
            view! { <div class="svg"><img src=format!("{base}/{name}.svg") alt=alt/></div> }.into_any()
        }
    };
    view! {
        <figure class="plot" data-chart=name.clone()>{drawn}{downloads}</figure>
    }
}

/// A run's report; with `share` (a share token) its downloads go through
/// the share link; `standalone`: the one-file export, with no link.
#[component]
pub fn Results(
    v: MetricsView,
    #[prop(optional)] share: Option<String>,
    #[prop(optional)] standalone: bool,
) -> impl IntoView {
    let base = match (share, standalone) {
        (_, true) => String::new(),
        (Some(t), false) => format!("/api/share/{t}"),
        (None, false) => format!("/api/metrics/{}", v.run_id),
    };
    let k = v.k;
    let published = v.definitions == types::Definitions::AsPublished;
    let bleu_header = bleu_header(published);
    view! {
        <section id="metrics-results">
            <h2>"Overall " <span class="small muted">"(" <Cite paper=Paper::HieraRag at="§2.4"/> ")"</span></h2>
            <p class="small muted" id="relevance-unit">{format!("A retrieved chunk counts as relevant when it matches the question's source {}.", match v.relevance_unit {
                types::RelevanceUnit::Document => "document (the HieraRAG paper's unit)",
                types::RelevanceUnit::Passage => "passage (the chunk overlaps the source chunk's span)",
                types::RelevanceUnit::Chunk => "chunk (only the source chunk itself; stricter than the HieraRAG paper)",
            })}</p>
            {v.unit_warning().map(|w| view! { <p class="notice" id="unit-warning">{w}</p> })}
            {(!v.definitions_note.is_empty()).then(|| view! {
                <p class=if published { "notice" } else { "small muted" } id="definitions"
                    data-definitions=v.definitions.as_str()>{format!("Definitions: {}.", v.definitions_note)}</p>
            })}
            <table class="grid" id="metrics-overall">
                <thead><tr><th>"Answer set"</th><th class="num">"n"</th><th class="num">"MAP"</th><th class="num symbol">{format!("nDCG@{k}")}</th>
                    <th class="num">{format!("Recall@{k}")}</th><th class="num">"CS"</th><th class="num">"ROUGE-1"</th><th class="num">{bleu_header}</th><th class="num">"corpus BLEU (0–100)"</th></tr></thead>
                <tbody>
                    {v.sets.iter().map(|s| view! {
                        <tr data-answers=s.answer_set_id><td>{format!("#{} {} ({})", s.answer_set_id, s.name, s.method)}</td>
                            {means_cells(&s.overall, published)}<td class="num">{format!("{:.2}", s.corpus_bleu)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <p class="small" id="metrics-downloads">
                {(!standalone).then(|| view! {
                    <a href=format!("{base}/questions.csv") download="">"Every question's metrics (CSV)"</a> " · "
                    <a href=format!("{base}/report.json") download="">"Report (JSON)"</a> " · "
                    <a href=format!("{base}/report.html") download="">"One HTML file"</a>
                })}
                <span class="muted">{format!(" · embeddings: {} · NMI over {} · retrieval — where a method recorded no chunks", v.embedding_model,
                    if published { "5 equal-width bins of the set's CS (as published)".to_string() } else { format!("{} quantile bins of CS", v.bins) })}</span></p>
            {v.sets.into_iter().map(|s| view! { <SetDetail s k base=base.clone() published/> }).collect_view()}
        </section>
    }
}

fn factorial_row(r: &Group) -> impl IntoView {
    view! {
        <tr><td>{r.lv.clone().unwrap_or_else(|| "(pooled)".into())}</td><td>{r.qc.clone().unwrap_or_else(|| "(pooled)".into())}</td>
            <td class="num">{r.n}</td><td class="num">{f3(r.map)}</td><td class="num">{format!("{:.3}", r.cs)}</td>
            <td class="num">{r.gap.map_or("—".into(), |g| crate::format::signed(g, 3))}</td></tr>
    }
}

#[component]
fn SetDetail(s: SetMetricsView, k: usize, base: String, published: bool) -> impl IntoView {
    let bleu_header = bleu_header(published);
    let sid = s.answer_set_id;
    let extremes = crate::model::fine_extremes(&s.per_category);
    view! {
        <section class="panel metrics-set" data-answers=sid>
            <h2>{format!("#{} {}", sid, s.name)}</h2>
            {(!s.coarse.is_empty()).then(|| view! {
                <h3>"Dimensions at the coarse level " <span class="small muted">"(as " <Cite paper=Paper::HieraRag at="Table 1"/> ")"</span></h3>
                <table class="grid coarse">
                    <thead><tr><th>"Dimension"</th><th class="num">"Categories"</th><th class="num">"Questions"</th><th class="num">"MAP"</th><th class="num">"CS"</th><th class="num">"Range"<Help text=help::RANGE/></th><th>"Category means (CS)"</th></tr></thead>
                    <tbody>
                        {s.coarse.iter().map(|c| view! {
                            <tr data-dimension=c.dimension.clone()><td>{c.dimension.clone()}</td><td class="num">{c.categories}</td><td class="num">{c.questions}</td>
                                <td class="num">{f3(c.map)}</td><td class="num">{format!("{:.3}", c.cs)}</td><td class="num range">{format!("{:.3}", c.range)}</td>
                                <td class="small means">{c.means.iter().map(|m| format!("{} {:.3} (n {})", m.category.split_once('/').map_or(m.category.as_str(), |x| x.1), m.mean, m.n)).collect::<Vec<_>>().join(" · ")}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
                <p class="muted small">"Each dimension's questions at its coarsest level (a flat dimension such as Question Phrasing has only that one). Range = max − min of its categories' mean CS, as the HieraRAG paper's Table 1 and its authors' code compute it; it is not the discriminative power below (a standard deviation)."</p>
            })}
            {(!extremes.is_empty()).then(|| view! {
                <h3>"Easiest and hardest fine categories " <span class="small muted">"(as " <Cite paper=Paper::HieraRag at="Table 3"/> ")"</span></h3>
                <table class="grid extremes">
                    <thead><tr><th>"Dimension"</th><th>"Category"</th><th class="num">"n"</th><th class="num">"MAP"</th><th class="num">"CS"</th></tr></thead>
                    <tbody>
                        {extremes.into_iter().flat_map(|(d, rows)| rows.into_iter().map(move |c| view! {
                            <tr data-dimension=d.clone()><td>{d.clone()}</td><td class="small">{c.group.rsplit('/').next().unwrap_or("").to_string()}</td>
                                <td class="num">{c.n}</td><td class="num">{f3(c.map)}</td><td class="num">{format!("{:.3}", c.cs)}</td></tr>
                        })).collect_view()}
                    </tbody>
                </table>
                <p class="muted small">"Per dimension, its fine categories by mean CS: the two highest and the two lowest, as the paper's Table 3 (every category is in the per-category table below)."</p>
            })}
            <h3>"Granularity " <span class="small muted">"(as " <Cite paper=Paper::HieraRag at="Table 2"/> ")"</span></h3>
            <table class="grid granularity">
                <thead><tr><th>"Dimension"</th><th class="num">"Categories"</th><th class="num">"Questions"</th><th class="num">"Discriminative power [95% CI]"<Help text=help::DISCPOW/></th>
                    <th class="num">"noise floor"</th><th class="num">"Change"</th><th class="num">"NMI [95% CI]"<Help text=help::NMI/></th><th class="num">"noise floor"</th><th></th><th class="symbol">"Splits into it: ρ"<Help text=help::RHO/></th></tr></thead>
                <tbody>
                    {s.granularity.iter().map(|g| view! {
                        <tr class:below-floor=g.power_floor.is_some_and(|f| g.power <= f)><td>{g.dimension.clone()}
                                {g.mean_rho.map(|r| view! { <span class="small muted">{format!(" (mean ρ {r:.2})")}</span> })}</td>
                            <td class="num">{g.categories}</td>
                            <td class="num">{g.questions}{g.warning.clone().map(|w| view! { <span class="warn" title=w.clone()>" ⚠"</span> })}</td>
                            <td class="num">{format!("{:.4}", g.power)}{g.power_ci.map(|(l, h)| format!(" [{l:.4}, {h:.4}]"))}</td>
                            <td class="num">{g.power_floor.map_or("—".into(), |f| format!("{f:.4}"))}</td>
                            <td class="num">{g.change.map_or("—".into(), |c| crate::format::signed(c, 4))}</td>
                            <td class="num">{format!("{:.4}", g.nmi)}{g.nmi_ci.map(|(l, h)| format!(" [{l:.4}, {h:.4}]"))}</td>
                            <td class="num">{g.nmi_floor.map_or("—".into(), |f| format!("{f:.4}"))}</td>
                            <td>{g.optimal_label.clone()}</td>
                            <td class="small">{g.splits_in.iter().map(|(rho, verdict)| view! {
                                <span class=format!("rho rho-{}", verdict.replace(' ', "-"))>{format!("{rho:.2}")}</span>
                            }).collect_view()}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            {chart(&base, format!("power-{sid}"), s.power.clone(), "Discriminative power by level".into())}
            <h3>"Splits: Coherence Ratio"</h3>
            <table class="grid splits">
                <thead><tr><th>"Parent"</th><th>"Children"</th><th class="num symbol">"σ_sib"<Help text=help::SIGMA_SIB/></th><th class="num symbol">"δ_vert"<Help text=help::DELTA_VERT/></th><th class="num symbol">"ρ"<Help text=help::RHO/></th><th></th></tr></thead>
                <tbody>
                    {s.splits.iter().map(|x| view! {
                        <tr class=format!("rho-{}", x.verdict.replace(' ', "-"))><td>{x.parent.clone()}</td><td class="small">{x.children.join(", ")}</td>
                            <td class="num">{format!("{:.4}", x.sigma_sib)}</td><td class="num">{format!("{:.4}", x.delta_vert)}</td>
                            <td class="num">{format!("{:.2}", x.rho)}{x.rho_ci.map(|(l, h)| format!(" [{l:.2}, {h:.2}]"))}</td><td>{x.verdict.clone()}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <p class="muted small">"The optimal level has the highest discriminative power; beside each level, the Coherence Ratio of the splits that make it (green above 2, red below 1). Intervals: 95% bootstrap, questions resampled within their category (500 resamples). Noise floor: the 95th percentile of the same number with the category labels shuffled among the level's questions — a level at or below it (greyed) is not distinguishable from categories that make no difference; the floor grows with the number of categories, so the finest level can look best on noise alone."</p>
            {s.granularity.iter().find_map(|g| g.warning.clone()).map(|w| view! { <p class="note small granularity-warning">{format!("⚠ {w}. The HieraRAG paper used at least 38 per category; generate more questions per category to compare levels (its preset does).")}</p> })}
            <p class="muted small">"ρ = σ of the children's mean CS / (|parent's mean CS − mean of the children's| + 0.001); above 2 the children discriminate and stay aligned with their parent, below 1 the split is poor."</p>
            <p class="small rho-agreement">{match s.rho_agreement {
                Some((study, r, p, n)) => format!(
                    "ρ against human category agreement (study #{study}): point-biserial r = {r:.2}, p = {p:.3}, over n = {n} category picks (the HieraRAG paper reports r = 0.24, p = 0.21, n = 60)."
                ),
                None => "ρ against human category agreement: no validation study asking raters for the category has been drawn from this question set yet (Studies: validate answers).".to_string(),
            }}</p>
            {s.trees.iter().map(|(d, svg)| view! {
                <div class="tree" data-dimension=d.clone()>{chart(&base, format!("tree-{sid}-{d}"), svg.clone(), format!("The {d} hierarchy"))}</div>
            }).collect_view()}
            {s.factorial.clone().map(|f| view! {
                <h3>"LV × QC " <span class="small muted">"(as " <Cite paper=Paper::HieraRag at="Table 4"/> ")"</span></h3>
                <table class="grid factorial">
                    <thead><tr><th>"LV"</th><th>"QC"</th><th class="num">"n"</th><th class="num">"MAP"</th><th class="num">"CS"</th><th class="num">"Gap"</th></tr></thead>
                    <tbody>
                        {f.cells.iter().map(factorial_row).collect_view()}
                        <tr class="section"><td colspan="6">"Main effects"</td></tr>
                        {f.pooled.iter().map(factorial_row).collect_view()}
                    </tbody>
                </table>
                <p class="small" id="main-effects">{format!("Main effects on CS: LV Δ = {} · QC Δ = {} (largest minus smallest pooled mean). A cell's gap is its CS minus the first QC level's in its LV level; a pooled level's, minus the first level's.", f3(f.lv_effect), f3(f.qc_effect))}</p>
            })}
            <h3>"Per category"</h3>
            <table class="grid per-category">
                <thead><tr><th>"Category"</th><th class="num">"n"</th><th class="num">"MAP"</th><th class="num symbol">{format!("nDCG@{k}")}</th>
                    <th class="num">{format!("Recall@{k}")}</th><th class="num">"CS"</th><th class="num">"ROUGE-1"</th><th class="num">{bleu_header}</th></tr></thead>
                <tbody>
                    {s.per_category.iter().map(|c| view! { <tr><td class="small">{c.group.clone()}</td>{means_cells(c, published)}</tr> }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

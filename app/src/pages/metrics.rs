//! `/projects/:id/metrics`: reference-based metrics (seed 004) — choose a
//! question set with reference answers and answer sets over it; the
//! metrics per answer set in the seed's layout (Table 1: MAP, nDCG@k,
//! Recall@k, CS, ROUGE-1, BLEU), per category, the granularity analysis
//! (Table 2: discriminative power and NMI by level, with its chart), each
//! split's Coherence Ratio and the hierarchy drawn with it, and the LV × QC
//! table (Table 4); per-question metrics as CSV, charts as SVG.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::*;
use crate::components::{ErrorNote, ProjectBar};
use crate::model::{MetricsMeansView, MetricsView, SetMetricsView};
use crate::pages::corpus::route_id;

fn f3(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.3}"))
}

/// An SVG as a download link (a data URI: nothing to fetch again).
fn svg_link(svg: &str, file: String) -> impl IntoView {
    let href = format!("data:image/svg+xml;charset=utf-8,{}", js_escape(svg));
    view! { <a href=href download=file>"SVG"</a> }
}

fn js_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b' ' | b'=' | b':' | b'/' | b',' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[component]
pub fn MetricsPage() -> impl IntoView {
    let id = route_id("id");
    let project = Resource::new(move || id.get(), get_project);
    let question_sets = Resource::new(move || id.get(), list_question_sets);
    let answer_sets = Resource::new(move || id.get(), list_answer_sets);
    let compute = ServerAction::<ComputeMetrics>::new();
    let chosen = RwSignal::new(None::<i64>);
    let picked = RwSignal::new(Vec::<i64>::new());
    let k = RwSignal::new(10u32);
    let bins = RwSignal::new(4u32);
    view! {
        <Title text="Metrics"/>
        <ProjectBar project_id=id.get_untracked() project active="metrics"/>
        <main class="page wide">
            <h1>"Metrics"</h1>
            <p class="muted">"Answers against reference answers and retrieval against each question's source chunks (seed 004): MAP, nDCG@k and Recall@k for methods that record the chunks they retrieved; cosine similarity of all-MiniLM-L6-v2 embeddings (in process, not an LLM), ROUGE-1 F1 (as rouge-score), BLEU (as sacrebleu: 13a tokens, exp smoothing). Then how informative the category hierarchy is: discriminative power and normalised mutual information by level, and the Coherence Ratio of each split."</p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let sets = question_sets.await.unwrap_or_default();
                    let answers = answer_sets.await.unwrap_or_default();
                    if sets.is_empty() {
                        return view! { <p class="muted" id="no-sets">"Make a question set with reference answers first (Questions: hierarchical questions)."</p> }.into_any();
                    }
                    let first = sets.iter().rev().find(|s| s.kind == "hierarchical").or(sets.last()).map(|s| s.id);
                    if chosen.get_untracked().is_none() {
                        chosen.set(first);
                        picked.set(answers.iter().filter(|a| Some(a.question_set_id) == first).map(|a| a.id).collect());
                    }
                    let all = answers.clone();
                    view! {
                        <section class="panel build-panel" id="metrics-form">
                            <div class="inline-form">
                                <label>"Question set "
                                    <select id="metrics-set" on:change=move |ev| {
                                        let s = event_target_value(&ev).parse::<i64>().ok();
                                        chosen.set(s);
                                        picked.set(all.iter().filter(|a| Some(a.question_set_id) == s).map(|a| a.id).collect());
                                    }>
                                        {sets.iter().rev().map(|s| view! {
                                            <option value=s.id.to_string() selected=Some(s.id) == first>{format!("#{} {} ({} questions)", s.id, s.name, s.questions)}</option>
                                        }).collect_view()}
                                    </select>
                                </label>
                                <label>"k " <input type="number" class="narrow" min="1" max="100" prop:value=move || k.get().to_string()
                                    on:input=move |ev| k.set(event_target_value(&ev).parse().unwrap_or(10))/></label>
                                <label>"bins " <input type="number" class="narrow" min="2" max="20" prop:value=move || bins.get().to_string()
                                    on:input=move |ev| bins.set(event_target_value(&ev).parse().unwrap_or(4))/></label>
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
                                    compute.dispatch(ComputeMetrics {
                                        set_id: chosen.get_untracked().unwrap_or_default(),
                                        answer_sets: ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(","),
                                        k: k.get_untracked(),
                                        bins: bins.get_untracked(),
                                    });
                                }>"Compute"</button>
                            {move || compute.pending().get().then(|| view! { <span class="muted small">" Embedding the answers and references…"</span> })}
                        </section>
                    }.into_any()
                })}
            </Suspense>
            {move || compute.value().get().map(|r| match r {
                Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                Ok(v) => view! { <Results project_id=id.get_untracked() v/> }.into_any(),
            })}
        </main>
    }
}

fn means_cells(m: &MetricsMeansView) -> impl IntoView {
    view! {
        <td class="num">{m.n}</td><td class="num">{f3(m.map)}</td><td class="num">{f3(m.ndcg)}</td><td class="num">{f3(m.recall)}</td>
        <td class="num">{format!("{:.3}", m.cs)}</td><td class="num">{format!("{:.3}", m.rouge1)}</td><td class="num">{format!("{:.2}", m.bleu)}</td>
    }
}

#[component]
fn Results(project_id: i64, v: MetricsView) -> impl IntoView {
    let ids = v.sets.iter().map(|s| s.answer_set_id.to_string()).collect::<Vec<_>>().join(",");
    let csv = format!(
        "/api/projects/{project_id}/metrics/{}/questions.csv?answers={ids}&k={}&bins={}",
        v.question_set_id, v.k, v.bins
    );
    let k = v.k;
    view! {
        <section id="metrics-results">
            <h2>"Overall (seed 004 Table 1)"</h2>
            <table class="grid" id="metrics-overall">
                <thead><tr><th>"Answer set"</th><th class="num">"n"</th><th class="num">"MAP"</th><th class="num">{format!("nDCG@{k}")}</th>
                    <th class="num">{format!("Recall@{k}")}</th><th class="num">"CS"</th><th class="num">"ROUGE-1"</th><th class="num">"BLEU"</th><th class="num">"corpus BLEU"</th></tr></thead>
                <tbody>
                    {v.sets.iter().map(|s| view! {
                        <tr data-answers=s.answer_set_id><td>{format!("#{} {} ({})", s.answer_set_id, s.name, s.method)}</td>
                            {means_cells(&s.overall)}<td class="num">{format!("{:.2}", s.corpus_bleu)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <p class="small"><a href=csv download="">"Every question's metrics (CSV)"</a>
                <span class="muted">{format!(" · embeddings: {} · NMI over {} quantile bins of CS · retrieval — where a method recorded no chunks", v.embedding_model, v.bins)}</span></p>
            {v.sets.into_iter().map(|s| view! { <SetDetail s k/> }).collect_view()}
        </section>
    }
}

#[component]
fn SetDetail(s: SetMetricsView, k: usize) -> impl IntoView {
    let sid = s.answer_set_id;
    view! {
        <section class="panel metrics-set" data-answers=sid>
            <h2>{format!("#{} {}", sid, s.name)}</h2>
            <h3>"Granularity (seed 004 Table 2)"</h3>
            <table class="grid granularity">
                <thead><tr><th>"Dimension"</th><th class="num">"Categories"</th><th class="num">"Questions"</th><th class="num">"Discriminative power"</th>
                    <th class="num">"Change"</th><th class="num">"NMI"</th><th></th></tr></thead>
                <tbody>
                    {s.granularity.iter().map(|g| view! {
                        <tr><td>{g.dimension.clone()}</td><td class="num">{g.categories}</td><td class="num">{g.questions}</td>
                            <td class="num">{format!("{:.4}", g.power)}</td><td class="num">{g.change.map_or("—".into(), |c| format!("{c:+.4}"))}</td>
                            <td class="num">{format!("{:.4}", g.nmi)}</td><td>{g.optimal.then_some("optimal")}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <figure class="plot"><div class="svg" role="img" aria-label="Discriminative power by level" inner_html=s.power_svg.clone()></div>
                <figcaption class="small">{svg_link(&s.power_svg, format!("metrics-{sid}-power.svg"))}</figcaption></figure>
            <h3>"Splits: Coherence Ratio"</h3>
            <table class="grid splits">
                <thead><tr><th>"Parent"</th><th>"Children"</th><th class="num">"σ sib"</th><th class="num">"δ vert"</th><th class="num">"ρ"</th><th></th></tr></thead>
                <tbody>
                    {s.splits.iter().map(|x| view! {
                        <tr class=format!("rho-{}", x.verdict.replace(' ', "-"))><td>{x.parent.clone()}</td><td class="small">{x.children.join(", ")}</td>
                            <td class="num">{format!("{:.4}", x.sigma_sib)}</td><td class="num">{format!("{:.4}", x.delta_vert)}</td>
                            <td class="num">{format!("{:.2}", x.rho)}</td><td>{x.verdict.clone()}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <p class="muted small">"ρ = σ of the children's mean CS / (|parent's mean CS − mean of the children's| + 0.001); above 2 the children discriminate and stay aligned with their parent, below 1 the split is poor."</p>
            {s.trees.iter().map(|(d, svg)| view! {
                <figure class="plot tree" data-dimension=d.clone()><div class="svg" role="img" aria-label=format!("The {d} hierarchy") inner_html=svg.clone()></div>
                    <figcaption class="small">{svg_link(svg, format!("metrics-{sid}-{d}-tree.svg"))}</figcaption></figure>
            }).collect_view()}
            {(!s.factorial.is_empty()).then(|| view! {
                <h3>"LV × QC (seed 004 Table 4)"</h3>
                <table class="grid factorial">
                    <thead><tr><th>"LV"</th><th>"QC"</th><th class="num">"n"</th><th class="num">"MAP"</th><th class="num">"CS"</th></tr></thead>
                    <tbody>
                        {s.factorial.iter().map(|(lv, qc, m)| view! {
                            <tr><td>{lv.clone()}</td><td>{qc.clone()}</td><td class="num">{m.n}</td><td class="num">{f3(m.map)}</td><td class="num">{format!("{:.3}", m.cs)}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
            })}
            <h3>"Per category"</h3>
            <table class="grid per-category">
                <thead><tr><th>"Category"</th><th class="num">"n"</th><th class="num">"MAP"</th><th class="num">{format!("nDCG@{k}")}</th>
                    <th class="num">{format!("Recall@{k}")}</th><th class="num">"CS"</th><th class="num">"ROUGE-1"</th><th class="num">"BLEU"</th></tr></thead>
                <tbody>
                    {s.per_category.iter().map(|c| view! { <tr><td class="small">{c.group.clone()}</td>{means_cells(c)}</tr> }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

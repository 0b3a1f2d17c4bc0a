//! A jury's report: each judge's verdicts beside the jury's, their
//! agreement, and their agreement with the people.

use leptos::prelude::*;

use crate::model::{JuryCell, JuryView};

/// A judge's spec with a break allowed after each comma (a phone's width).
fn breakable(label: &str) -> String {
    label.replace(',', ",\u{200b}")
}

/// Each judge's and the jury's verdicts per pair, inter-judge agreement and
/// agreement with the people. `shared`: on a share page (studies are named, not linked).
#[component]
pub fn JuryTables(j: JuryView, base: String, shared: bool, project_id: i64) -> impl IntoView {
    let fixed = |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{x:.3}"));
    let judges = j.rows.iter().filter(|r| !r.jury).count();
    let cell = |c: &Option<JuryCell>| {
        match c {
        Some(c) => view! {
            <td class="num jury-cell" title=format!("{} items judged; median trial's A wins / ties / B wins", c.items)>
                <span class="rel">{crate::format::signed(c.relative, 2)}</span>
                <span class="muted small">{format!(" {} / {} / {}", crate::format::pct(c.a_win), crate::format::pct(c.tie), crate::format::pct(c.b_win))}</span>
            </td>
        }
        .into_any(),
        None => view! { <td class="num muted">"—"</td> }.into_any(),
    }
    };
    let csv = |t: &str| {
        (!base.is_empty())
            .then(|| view! { <a href=format!("{base}/tables/{t}.csv") download="">{format!("CSV ({t})")}</a> })
    };
    view! {
        <section id="jury">
            <h2>{format!("A jury of {judges} judges")}</h2>
            <p class="muted small">{format!(
                "Several judges judged every item; the headline above is the jury's {} (every judge's aspect scores averaged); the majority row takes each judge's own verdict and keeps the one more than half gave (else a tie). Use a jury when one judge's taste or bias would decide the result: if the judges agree, one is enough; if not, no single judge's verdict should be trusted alone.",
                j.rule
            )}</p>
            <div class="table-scroll">
            <table class="grid" id="jury-table">
                <thead><tr><th>"Judge"</th>
                    {j.pairs.iter().map(|p| view! { <th class="num">{format!("{p}: relative (A / tie / B)")}</th> }).collect_view()}
                </tr></thead>
                <tbody>
                    {j.rows.iter().map(|r| view! {
                        <tr class:jury-rule=r.jury data-judge=r.label.clone()>
                            <td class="jury-judge">{if r.jury { view! { <strong>{r.label.clone()}</strong> }.into_any() } else { view! { <span>{breakable(&r.label)}</span> }.into_any() }}</td>
                            {r.cells.iter().map(cell).collect_view()}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
            <p id="jury-agreement"><strong>{format!(
                "Agreement between the judges over {} items all of them judged: Fleiss' κ {} on the winners, Krippendorff's α {} on the score differences.",
                crate::format::int(j.items as i64),
                fixed(j.fleiss_kappa),
                fixed(j.krippendorff_alpha)
            )}</strong></p>
            <p class="muted small">"Fleiss' κ: agreement on each item's winner beyond chance (1 full, 0 no better than chance). Krippendorff's α (interval): the same for by how much A's total beat B's. Low values say the verdict depends on who judges. "
                {csv("jury")}" "{csv("jury-agreement")}</p>
            {match j.people.clone() {
                Some(p) => view! {
                    <h3>"Agreement with the people"</h3>
                    <p class="muted small">{format!(
                        "Against the raters of answer-validation stud{} {} ({} per answer, the raters' mean): Cohen's κ on which answer wins a question, Spearman's ρ on by how much, over the questions whose two answers were both rated. The judge that agrees best with people is the one to trust.",
                        if p.studies.len() == 1 { "y" } else { "ies" },
                        p.studies.iter().map(|s| format!("#{s}")).collect::<Vec<_>>().join(", "),
                        p.dimension
                    )}
                    {(!shared).then(|| p.studies.iter().map(|s| view! { " " <a href=format!("/projects/{project_id}/studies/{s}")>{format!("Study #{s}")}</a> }).collect_view())}</p>
                    <table class="grid" id="jury-people">
                        <thead><tr><th>"Judge"</th><th class="num">"Questions"</th><th class="num">"Cohen's κ"</th><th class="num">"Spearman's ρ"</th><th class="num">"p"</th></tr></thead>
                        <tbody>
                            {p.rows.iter().map(|r| view! {
                                <tr data-judge=r.label.clone()><td class="jury-judge">{breakable(&r.label)}</td><td class="num">{r.n}</td>
                                    <td class="num jury-kappa">{fixed(r.cohen_kappa)}</td><td class="num jury-rho">{fixed(r.spearman.map(|s| s.0))}</td>
                                    <td class="num">{r.spearman.map(|s| s.1).map_or("—".to_string(), |p| if p < 0.001 { format!("{p:.1e}") } else { format!("{p:.3}") })}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any(),
                None => view! { <p class="muted small" id="jury-no-people">"No answer-validation study rated both answer sets of a pair, so the judges cannot be compared with people here (Studies makes one)."</p> }.into_any(),
            }}
        </section>
    }
}

//! Seed 004's RQ3 factorial table (Table 4): questions drawn in every cell
//! of LV (e.g. similar/distant) × QC (e.g. simple/complex); per cell n,
//! MAP and mean CS, and the **gap** — a cell's CS minus the CS of the first
//! QC level's cell in the same LV level (simple → complex); then the
//! **main effects**: each level of each factor pooled over the other, with
//! its CS minus the first level's (the seed's "Distant (pooled) … −.077"),
//! and the effect size Δ of each factor (largest minus smallest pooled CS).
//!
//! A pooled level is the **unweighted mean of its cell means** (n is the
//! cells' sum). That is how Table 4's own numbers come out: "Distant
//! (pooled) – 483 .201 .578" is (.237 + .164) / 2 = .2005 (weighted by n it
//! would be .204), and "complexity shows a weak effect (Δ=0.018)" is
//! (.672 + .578) / 2 − (.637 + .578) / 2 = .0175 (weighted: .023). The test
//! `table_4_of_seed_004_from_its_cells` pins this.

use serde::{Deserialize, Serialize};
pub use types::metrics::Group;

/// One factorial question: its LV and QC levels, its AP (when its method
/// recorded retrieval) and its CS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub lv: String,
    pub qc: String,
    pub ap: Option<f64>,
    pub cs: f64,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Factorial {
    /// Cells in LV order, then QC order.
    pub cells: Vec<Group>,
    /// LV levels pooled over QC (`qc` is `None`).
    pub lv_pooled: Vec<Group>,
    /// QC levels pooled over LV (`lv` is `None`).
    pub qc_pooled: Vec<Group>,
    /// Largest minus smallest pooled CS of each factor (`None` with one level).
    pub lv_effect: Option<f64>,
    pub qc_effect: Option<f64>,
}

fn group(lv: Option<&str>, qc: Option<&str>, obs: &[&Observation]) -> Option<Group> {
    let aps: Vec<f64> = obs.iter().filter_map(|o| o.ap).collect();
    let cs: Vec<f64> = obs.iter().map(|o| o.cs).collect();
    summary(lv, qc, obs.len(), &aps, &cs)
}

/// A group of `n` questions from its MAP values (the mean of those given)
/// and CS values (their mean); `None` without any CS.
fn summary(lv: Option<&str>, qc: Option<&str>, n: usize, maps: &[f64], cs: &[f64]) -> Option<Group> {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (!cs.is_empty()).then(|| Group {
        lv: lv.map(str::to_string),
        qc: qc.map(str::to_string),
        n,
        map: (!maps.is_empty()).then(|| mean(maps)),
        cs: mean(cs),
        gap: None,
    })
}

/// A level pooled over the other factor: the unweighted mean of its cells'
/// MAP (over the cells that have one) and CS, n summed (see the module).
fn pooled<'a>(lv: Option<&str>, qc: Option<&str>, cells: impl Iterator<Item = &'a Group>) -> Option<Group> {
    let cells: Vec<&Group> = cells.collect();
    let maps: Vec<f64> = cells.iter().filter_map(|c| c.map).collect();
    let cs: Vec<f64> = cells.iter().map(|c| c.cs).collect();
    summary(lv, qc, cells.iter().map(|c| c.n).sum(), &maps, &cs)
}

/// Levels in the order given (the hierarchy's), then any others by name.
fn levels<'a>(seen: impl Iterator<Item = &'a str>, order: &[String]) -> Vec<String> {
    let mut rest: Vec<String> = seen.map(str::to_string).collect();
    rest.sort();
    rest.dedup();
    let mut out: Vec<String> = order.iter().filter(|o| rest.contains(o)).cloned().collect();
    rest.retain(|r| !out.contains(r));
    out.extend(rest);
    out
}

/// Gaps against the first group with a value, in order.
fn with_gaps(mut groups: Vec<Group>) -> Vec<Group> {
    if let Some(first) = groups.first().map(|g| g.cs) {
        for g in groups.iter_mut().skip(1) {
            g.gap = Some(g.cs - first);
        }
    }
    groups
}

fn effect(groups: &[Group]) -> Option<f64> {
    (groups.len() > 1).then(|| {
        let (lo, hi) =
            groups.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), g| (lo.min(g.cs), hi.max(g.cs)));
        hi - lo
    })
}

/// The table of `obs`, levels ordered as in `lv_order` and `qc_order`
/// (the hierarchy's order; levels not named there follow by name).
pub fn table(obs: &[Observation], lv_order: &[String], qc_order: &[String]) -> Factorial {
    let lvs = levels(obs.iter().map(|o| o.lv.as_str()), lv_order);
    let qcs = levels(obs.iter().map(|o| o.qc.as_str()), qc_order);
    let select = |lv: Option<&str>, qc: Option<&str>| -> Vec<&Observation> {
        obs.iter().filter(|o| lv.is_none_or(|l| o.lv == l) && qc.is_none_or(|q| o.qc == q)).collect()
    };
    let mut cells = Vec::new();
    for lv in &lvs {
        let row: Vec<Group> =
            qcs.iter().filter_map(|qc| group(Some(lv), Some(qc), &select(Some(lv), Some(qc)))).collect();
        cells.extend(with_gaps(row));
    }
    let cell = |lv: &str, qc: &str| cells.iter().find(|c| c.lv.as_deref() == Some(lv) && c.qc.as_deref() == Some(qc));
    let lv_pooled = with_gaps(
        lvs.iter().filter_map(|lv| pooled(Some(lv), None, qcs.iter().filter_map(|qc| cell(lv, qc)))).collect(),
    );
    let qc_pooled = with_gaps(
        qcs.iter().filter_map(|qc| pooled(None, Some(qc), lvs.iter().filter_map(|lv| cell(lv, qc)))).collect(),
    );
    Factorial { lv_effect: effect(&lv_pooled), qc_effect: effect(&qc_pooled), cells, lv_pooled, qc_pooled }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(lv: &str, qc: &str, ap: Option<f64>, cs: f64) -> Observation {
        Observation { lv: lv.into(), qc: qc.into(), ap, cs }
    }

    /// A hand-made 2×2 with known means: similar/simple CS 0.6, 0.7 (0.65);
    /// similar/complex 0.7 (0.7); distant/simple 0.5 (0.5); distant/complex
    /// 0.5, 0.5 (0.5).
    #[test]
    fn cells_gaps_and_main_effects() {
        let data = vec![
            obs("distant", "complex", Some(0.1), 0.5),
            obs("similar", "simple", Some(0.5), 0.6),
            obs("similar", "simple", Some(0.7), 0.7),
            obs("similar", "complex", None, 0.7),
            obs("distant", "simple", Some(0.3), 0.5),
            obs("distant", "complex", Some(0.3), 0.5),
        ];
        let order = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let t = table(&data, &order(&["similar", "distant"]), &order(&["simple", "complex"]));
        let names: Vec<(String, String)> =
            t.cells.iter().map(|c| (c.lv.clone().unwrap(), c.qc.clone().unwrap())).collect();
        assert_eq!(
            names,
            [("similar", "simple"), ("similar", "complex"), ("distant", "simple"), ("distant", "complex")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(t.cells[0].cs, 0.65) && t.cells[0].gap.is_none());
        assert!(close(t.cells[1].gap.unwrap(), 0.05), "similar: complex − simple");
        assert_eq!(t.cells[1].map, None, "no AP in that cell");
        assert!(close(t.cells[3].gap.unwrap(), 0.0));
        assert!(close(t.cells[3].map.unwrap(), 0.2));
        // Pooled = mean of cell means: similar (0.65 + 0.7) / 2, distant 0.5.
        assert_eq!(t.lv_pooled[0].n, 3);
        assert!(close(t.lv_pooled[0].cs, 0.675));
        assert!(close(t.lv_pooled[1].gap.unwrap(), 0.5 - 0.675));
        assert!(close(t.lv_pooled[0].map.unwrap(), 0.6), "only the simple cell has a MAP");
        // QC pooled: simple (0.65 + 0.5) / 2, complex (0.7 + 0.5) / 2.
        assert!(close(t.qc_pooled[0].cs, 0.575));
        assert!(close(t.qc_effect.unwrap(), 0.025));
        assert!(close(t.lv_effect.unwrap(), 0.175));
        // An order naming no level falls back to names.
        let t = table(&data, &[], &[]);
        assert_eq!(t.lv_pooled[0].lv.as_deref(), Some("distant"));
        assert!(table(&[], &[], &[]).lv_effect.is_none());
    }

    /// Seed 004, Table 4 ("RQ3: LV×QC interaction"), rebuilt from its four
    /// cells (n, MAP, CS): the pooled rows and both Δ must come out as the
    /// paper prints them, to its three decimals (tolerance 5e-4 + 1e-9: the
    /// paper's cells are themselves rounded).
    #[test]
    fn table_4_of_seed_004_from_its_cells() {
        let cells = [
            ("Similar", "Simple", 252, 0.547, 0.637),
            ("Similar", "Complex", 265, 0.566, 0.672),
            ("Distant", "Simple", 265, 0.237, 0.578),
            ("Distant", "Complex", 218, 0.164, 0.578),
        ];
        let data: Vec<Observation> =
            cells.iter().flat_map(|(lv, qc, n, map, cs)| (0..*n).map(move |_| obs(lv, qc, Some(*map), *cs))).collect();
        let order = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let t = table(&data, &order(&["Similar", "Distant"]), &order(&["Simple", "Complex"]));
        let near = |a: f64, paper: f64| (a - paper).abs() <= 5e-4 + 1e-9;
        // Gaps: "+.035" and "+.000".
        assert!(near(t.cells[1].gap.unwrap(), 0.035) && near(t.cells[3].gap.unwrap(), 0.0));
        // "Similar (pooled) – 517 .557 .655" and "Distant (pooled) – 483 .201 .578 –.077".
        let (sim, dis) = (&t.lv_pooled[0], &t.lv_pooled[1]);
        assert_eq!((sim.n, dis.n), (517, 483));
        assert!(near(sim.map.unwrap(), 0.557) && near(sim.cs, 0.655), "{sim:?}");
        assert!(near(dis.map.unwrap(), 0.201) && near(dis.cs, 0.578), "{dis:?}");
        assert!(near(dis.gap.unwrap(), -0.077));
        // "LV shows a strong main effect (Δ=0.076 …), while complexity shows
        // a weak effect (Δ=0.018)" — .0765 and .0175 before rounding.
        assert!(near(t.lv_effect.unwrap(), 0.076) && near(t.lv_effect.unwrap(), 0.077));
        assert!(near(t.qc_effect.unwrap(), 0.018), "{:?}", t.qc_effect);
        // Weighted by n the distant MAP would be .204 and QC Δ .023: not the paper's.
        let weighted = (265.0 * 0.237 + 218.0 * 0.164) / 483.0;
        assert!(!near(weighted, 0.201));
    }
}

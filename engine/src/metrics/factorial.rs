//! Seed 004's RQ3 factorial table (Table 4): questions drawn in every cell
//! of LV (e.g. similar/distant) × QC (e.g. simple/complex); per cell n,
//! MAP and mean CS, and the **gap** — a cell's CS minus the CS of the first
//! QC level's cell in the same LV level (simple → complex); then the
//! **main effects**: each level of each factor pooled over the other, with
//! its CS minus the first level's (the seed's "Distant (pooled) … −.077"),
//! and the effect size Δ of each factor (largest minus smallest pooled CS).

use serde::{Deserialize, Serialize};

/// One factorial question: its LV and QC levels, its AP (when its method
/// recorded retrieval) and its CS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub lv: String,
    pub qc: String,
    pub ap: Option<f64>,
    pub cs: f64,
}

/// A cell, or a pooled level: n, MAP (mean AP over the questions that have
/// one) and mean CS; `gap` as the module says (`None` for the first level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub lv: Option<String>,
    pub qc: Option<String>,
    pub n: usize,
    pub map: Option<f64>,
    pub cs: f64,
    pub gap: Option<f64>,
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
    if obs.is_empty() {
        return None;
    }
    let aps: Vec<f64> = obs.iter().filter_map(|o| o.ap).collect();
    Some(Group {
        lv: lv.map(str::to_string),
        qc: qc.map(str::to_string),
        n: obs.len(),
        map: (!aps.is_empty()).then(|| aps.iter().sum::<f64>() / aps.len() as f64),
        cs: obs.iter().map(|o| o.cs).sum::<f64>() / obs.len() as f64,
        gap: None,
    })
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
    let lv_pooled = with_gaps(lvs.iter().filter_map(|lv| group(Some(lv), None, &select(Some(lv), None))).collect());
    let qc_pooled = with_gaps(qcs.iter().filter_map(|qc| group(None, Some(qc), &select(None, Some(qc)))).collect());
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
        // Pooled: similar (0.6+0.7+0.7)/3, distant 0.5.
        assert_eq!(t.lv_pooled[0].n, 3);
        assert!(close(t.lv_pooled[0].cs, 2.0 / 3.0));
        assert!(close(t.lv_pooled[1].gap.unwrap(), 0.5 - 2.0 / 3.0));
        assert!(close(t.lv_pooled[0].map.unwrap(), 0.6));
        // QC pooled: simple (0.6+0.7+0.5)/3 = 0.6, complex (0.7+0.5+0.5)/3.
        assert!(close(t.qc_pooled[0].cs, 0.6));
        assert!(close(t.qc_effect.unwrap(), (0.6f64 - 1.7 / 3.0).abs()));
        assert!(close(t.lv_effect.unwrap(), 2.0 / 3.0 - 0.5));
        // An order naming no level falls back to names.
        let t = table(&data, &[], &[]);
        assert_eq!(t.lv_pooled[0].lv.as_deref(), Some("distant"));
        assert!(table(&[], &[], &[]).lv_effect.is_none());
    }
}

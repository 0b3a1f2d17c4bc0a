//! An evaluation report's plots, drawn with plotters to SVG: box plots of
//! win and tie rates over trials, one panel per pair (seed 000 Fig. 3
//! right); the relative-win-rate heatmap with values in the cells (Fig. 16);
//! stacked win/tie/loss bars (per aspect, Fig. 15; per level, Fig. 17;
//! legacy beside unbiased, Fig. 3 left).

use plotters::prelude::*;

use super::eval::{Contender, PairReport};
use super::Rates;
use crate::stats::BoxStats;

const BLUE: RGBColor = RGBColor(0x4e, 0x79, 0xa7);
const GREY: RGBColor = RGBColor(0xba, 0xb0, 0xac);
const ORANGE: RGBColor = RGBColor(0xf2, 0x8e, 0x2b);
const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size.max(crate::CHART_MIN_FONT)).into_font().color(&BLACK)
}

fn cut(label: &str, n: usize) -> String {
    if label.chars().count() <= n {
        label.to_string()
    } else {
        format!("{}…", label.chars().take(n - 1).collect::<String>())
    }
}

/// Box plots: per pair a panel with three boxes — A's win rate, the tie
/// rate, B's win rate — over the trials (median, quartiles, whiskers at
/// 1.5 IQR, outliers as circles), on a 0–1 axis.
pub fn box_plots_svg(title: &str, subtitle: &str, pairs: &[PairReport]) -> String {
    let panels: Vec<&PairReport> = pairs.iter().filter(|p| p.unbiased.is_some()).collect();
    let (panel_w, panel_h, top) = (340i32, 250i32, 56i32);
    let columns = panels.len().clamp(1, 3) as i32;
    let rows = panels.len().div_ceil(3).max(1) as i32;
    let (width, height) = ((columns * panel_w + 20).max(620), top + rows * (panel_h + 30));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let _ = root.draw(&Text::new(title.to_string(), (12, 10), font(16)));
        let _ = root.draw(&Text::new(subtitle.to_string(), (12, 32), font(11)));
        if panels.is_empty() {
            let _ = root.draw(&Text::new("no unbiased judgments".to_string(), (12, 50), font(13)));
        }
        for (i, p) in panels.iter().enumerate() {
            let u = p.unbiased.as_ref().expect("filtered");
            let (x0, y0) = (10 + (i as i32 % 3) * panel_w, top + (i as i32 / 3) * (panel_h + 30));
            let (plot_x, plot_y, plot_w, plot_h) = (x0 + 40, y0 + 36, panel_w - 60, panel_h - 80);
            let _ =
                root.draw(&Text::new(format!("{} vs {}", cut(&p.a_name, 20), cut(&p.b_name, 20)), (x0, y0), font(13)));
            let _ = root.draw(&Text::new(
                format!(
                    "{} trial{}, median relative {}",
                    u.trials.len(),
                    if u.trials.len() == 1 { "" } else { "s" },
                    super::eval::signed_to(u.relative.median, 2)
                ),
                (x0, y0 + 17),
                font(11),
            ));
            let y_of = |v: f64| plot_y + plot_h - (v.clamp(0.0, 1.0) * plot_h as f64).round() as i32;
            for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
                let y = y_of(tick);
                let _ = root.draw(&PathElement::new(vec![(plot_x, y), (plot_x + plot_w, y)], GREY.mix(0.4)));
                let _ = root.draw(&Text::new(format!("{tick:.2}"), (x0, y - 6), font(10)));
            }
            let boxes: [(&str, &BoxStats, RGBColor); 3] =
                [(&p.a_name, &u.a_win, BLUE), ("tie", &u.tie, GREY), (&p.b_name, &u.b_win, ORANGE)];
            let slot = plot_w / 3;
            for (k, (label, b, colour)) in boxes.iter().enumerate() {
                let cx = plot_x + slot * k as i32 + slot / 2;
                let half = slot / 4;
                // Whiskers (and their caps) where they have length: a
                // rasteriser refuses empty paths.
                for (cap, quartile) in [(b.whisker_low, b.q1), (b.whisker_high, b.q3)] {
                    if y_of(cap) != y_of(quartile) {
                        let _ = root.draw(&PathElement::new(vec![(cx, y_of(cap)), (cx, y_of(quartile))], INK));
                        let _ = root
                            .draw(&PathElement::new(vec![(cx - half / 2, y_of(cap)), (cx + half / 2, y_of(cap))], INK));
                    }
                }
                // The box: at least a pixel high when the quartiles meet.
                let corners = [(cx - half, y_of(b.q3)), (cx + half, y_of(b.q1).max(y_of(b.q3) + 1))];
                let _ = root.draw(&Rectangle::new(corners, colour.mix(0.75).filled()));
                let _ = root.draw(&Rectangle::new(corners, INK));
                let _ = root.draw(&PathElement::new(
                    vec![(cx - half, y_of(b.median)), (cx + half, y_of(b.median))],
                    INK.stroke_width(2),
                ));
                for o in &b.outliers {
                    let _ = root.draw(&Circle::new((cx, y_of(*o)), 3, INK));
                }
                let _ =
                    root.draw(&Text::new(format!("{:.2}", b.median), (cx + half + 2, y_of(b.median) - 6), font(10)));
                let _ = root.draw(&Text::new(cut(label, 15), (cx - half - 14, plot_y + plot_h + 8), font(11)));
            }
        }
        let _ = root.present();
    }
    svg
}

/// The colour of a relative win rate in [-1, 1]: orange below 0, blue above.
fn diverging(v: f64) -> RGBColor {
    let t = v.clamp(-1.0, 1.0).abs();
    let (r, g, b) = if v >= 0.0 { (BLUE.0, BLUE.1, BLUE.2) } else { (ORANGE.0, ORANGE.1, ORANGE.2) };
    let mix = |c: u8| (255.0 - (255.0 - c as f64) * t).round() as u8;
    RGBColor(mix(r), mix(g), mix(b))
}

/// The relative-win-rate matrix as a heatmap: row's rate over column's,
/// the value in each cell, blank where the pair was not judged.
pub fn heatmap_svg(title: &str, subtitle: &str, contenders: &[Contender], matrix: &[Vec<Option<f64>>]) -> String {
    let n = contenders.len().max(1) as i32;
    let (label_w, cell, top) = (170i32, 76i32, 70i32);
    let (width, height) = ((label_w + n * cell + 20).max(560), top + 14 + n * cell + 40);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let _ = root.draw(&Text::new(title.to_string(), (12, 10), font(16)));
        let _ = root.draw(&Text::new(
            "relative win rate of the row over the column: (win − loss) / (win + loss + tie)".to_string(),
            (12, 32),
            font(11),
        ));
        let _ = root.draw(&Text::new(subtitle.to_string(), (12, 47), font(11)));
        let top = top + 14;
        for (j, c) in contenders.iter().enumerate() {
            let _ = root.draw(&Text::new(cut(&c.name, 10), (label_w + j as i32 * cell + 4, top - 16), font(11)));
        }
        for (i, c) in contenders.iter().enumerate() {
            let y = top + i as i32 * cell;
            let _ = root.draw(&Text::new(cut(&c.name, 22), (12, y + cell / 2 - 6), font(12)));
            for j in 0..contenders.len() {
                let x = label_w + j as i32 * cell;
                let value = matrix.get(i).and_then(|r| r.get(j)).copied().flatten();
                let fill = value.map_or(RGBColor(0xf4, 0xf4, 0xf4), diverging);
                let _ = root.draw(&Rectangle::new([(x, y), (x + cell - 2, y + cell - 2)], fill.filled()));
                let text = match value {
                    Some(v) => super::eval::signed_to(v, 2),
                    None if i == j => "—".to_string(),
                    None => String::new(),
                };
                let colour = if value.is_some_and(|v| v.abs() > 0.6) { WHITE } else { BLACK };
                let _ = root.draw(&Text::new(text, (x + cell / 2 - 16, y + cell / 2 - 7), font(13).color(&colour)));
            }
        }
        let _ = root.present();
    }
    svg
}

/// One stacked bar: its label, the rates, and a note (e.g. the count).
pub type StackedRow = (String, Rates, String);

/// Stacked win/tie/loss bars, one row each (A's wins blue, ties grey, B's
/// wins orange), with the percentages written in.
pub fn stacked_svg(title: &str, legend: (&str, &str), rows: &[StackedRow]) -> String {
    let (label_w, bar_w, row) = (200i32, 460i32, 30i32);
    let (width, height) = (label_w + bar_w + 110, 70 + row * rows.len().max(1) as i32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let _ = root.draw(&Text::new(title.to_string(), (12, 8), font(16)));
        let mut x = label_w;
        for (name, colour) in [(legend.0, BLUE), ("tie", GREY), (legend.1, ORANGE)] {
            let _ = root.draw(&Rectangle::new([(x, 34), (x + 12, 46)], colour.filled()));
            let label = format!("{} wins", cut(name, 20));
            let label = if name == "tie" { "tie".to_string() } else { label };
            let w = 24 + 7 * label.chars().count() as i32;
            let _ = root.draw(&Text::new(label, (x + 16, 34), font(11)));
            x += w;
        }
        for (i, (label, rates, note)) in rows.iter().enumerate() {
            let y = 56 + i as i32 * row;
            let _ = root.draw(&Text::new(cut(label, 28), (12, y + 5), font(12)));
            let mut x = label_w;
            for (v, colour) in [(rates.a_win, BLUE), (rates.tie, GREY), (rates.b_win, ORANGE)] {
                let w = (v * bar_w as f64).round() as i32;
                if w > 0 {
                    let _ = root.draw(&Rectangle::new([(x, y), (x + w, y + row - 8)], colour.filled()));
                    if w >= 34 {
                        let _ = root.draw(&Text::new(format!("{:.0}%", v * 100.0), (x + 4, y + 5), font(11)));
                    }
                }
                x += w;
            }
            let _ = root.draw(&Text::new(note.clone(), (label_w + bar_w + 8, y + 5), font(11)));
        }
        let _ = root.present();
    }
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::eval::{AlignmentSummary, UnbiasedSummary};

    fn pair() -> PairReport {
        let b = |m: f64| BoxStats::of(&[m - 0.1, m, m, m + 0.1, 0.0]).unwrap();
        PairReport {
            a: 1,
            b: 2,
            a_name: "bm25".into(),
            b_name: "lightrag".into(),
            questions: 10,
            alignment: AlignmentSummary::default(),
            unbiased: Some(UnbiasedSummary {
                trials: vec![],
                a_win: b(0.6),
                tie: b(0.1),
                b_win: b(0.3),
                relative: b(0.3),
                median_trial: 0,
                headline: crate::judge::Rates { a_win: 0.6, tie: 0.1, b_win: 0.3 },
                headline_relative: 0.3,
                relative_ci: (0.2, 0.4),
                a_win_ci: (0.5, 0.7),
                tie_ci: (0.0, 0.2),
                b_win_ci: (0.2, 0.4),
                mean_difference: 0.5,
                wilcoxon: None,
                sign: None,
                aspects: vec![],
                levels: vec![],
                trial_std: 0.05,
            }),
            legacy: None,
            length_control: None,
            sequential: None,
        }
    }

    #[test]
    fn box_plots_draw_three_boxes_per_pair_with_their_medians() {
        let svg = box_plots_svg("Win rates over trials", "judged by nobody", &[pair()]);
        assert!(svg.starts_with("<svg") && svg.contains("bm25 vs lightrag"));
        for text in ["0.60", "0.10", "0.30", "median relative +0.30"] {
            assert!(svg.contains(text), "{text}");
        }
        // The 0.0 draw lies beyond 1.5 IQR of the win rates (an outlier
        // circle each), not of the tie rate (its quartiles are 0 and 0.1).
        assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
        assert!(box_plots_svg("t", "", &[]).contains("no unbiased judgments"));
    }

    #[test]
    fn the_heatmap_writes_each_value_and_leaves_unjudged_cells_blank() {
        let c = |id, name: &str| Contender { set_id: id, name: name.into(), method: name.into() };
        let svg = heatmap_svg(
            "Relative win rate",
            "judged by nobody",
            &[c(1, "bm25"), c(2, "lightrag"), c(3, "naive")],
            &[vec![None, Some(0.25), None], vec![Some(-0.25), None, Some(-1.0)], vec![None, Some(1.0), None]],
        );
        for text in ["+0.25", "-0.25", "+1.00", "-1.00", "—"] {
            assert!(svg.contains(text), "{text}");
        }
        assert_eq!(diverging(0.0), RGBColor(255, 255, 255));
        assert_eq!(diverging(1.0), BLUE);
        assert_eq!(diverging(-1.0), ORANGE);
    }

    #[test]
    fn stacked_bars_split_the_width_by_the_rates() {
        let rows = vec![("Directness".to_string(), Rates { a_win: 0.5, tie: 0.25, b_win: 0.25 }, "n = 40".to_string())];
        let svg = stacked_svg("Per aspect", ("bm25", "lightrag"), &rows);
        for text in ["Directness", "50%", "25%", "n = 40", "bm25 wins", "lightrag wins"] {
            assert!(svg.contains(text), "{text}");
        }
        assert!(svg.contains("width=\"230\"") && svg.contains("width=\"115\""), "{svg}");
    }
}

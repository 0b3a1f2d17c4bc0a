//! The cost chart of seed 000 Table II: average tokens and query time per
//! question, one bar pair per method instance (SVG by plotters).

use plotters::prelude::*;

/// One bar pair: the answer set's label, tokens per question, seconds per
/// question (`None` where unknown, e.g. imported answers that gave none).
pub type CostBar = (String, Option<f64>, Option<f64>);

/// Two bar panels side by side, tokens left and query time right, each
/// scaled to its own maximum and labelled with its value.
pub fn chart_svg(title: &str, bars: &[CostBar]) -> String {
    let (width, row) = (760i32, 30i32);
    let height = 70 + row * bars.len().max(1) as i32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let font = |size: u32| ("sans-serif", size.max(crate::CHART_MIN_FONT)).into_font().color(&BLACK);
        let _ = root.draw(&Text::new(title.to_string(), (12, 8), font(16)));
        let (label_w, panel_w, gap) = (190, 250, 40);
        let panels = [
            ("tokens per question", 1usize, RGBColor(0x4e, 0x79, 0xa7)),
            ("query time per question (s)", 2usize, RGBColor(0xf2, 0x8e, 0x2b)),
        ];
        for (p, (heading, column, colour)) in panels.iter().enumerate() {
            let x0 = label_w + p as i32 * (panel_w + gap);
            let _ = root.draw(&Text::new(heading.to_string(), (x0, 36), font(13)));
            let value = |b: &CostBar| if *column == 1 { b.1 } else { b.2 };
            let top = bars.iter().filter_map(value).fold(0.0f64, f64::max);
            for (i, b) in bars.iter().enumerate() {
                let y = 58 + i as i32 * row;
                if p == 0 {
                    let label: String = b.0.chars().take(26).collect();
                    let _ = root.draw(&Text::new(label, (12, y + 4), font(12)));
                }
                match value(b) {
                    Some(v) => {
                        let w = if top > 0.0 { ((v / top) * (panel_w - 60) as f64).round() as i32 } else { 0 };
                        let _ = root.draw(&Rectangle::new([(x0, y), (x0 + w.max(1), y + row - 10)], colour.filled()));
                        let text = if *column == 1 { format!("{v:.0}") } else { format!("{v:.2}") };
                        let _ = root.draw(&Text::new(text, (x0 + w + 6, y + 4), font(12)));
                    }
                    None => {
                        let _ = root.draw(&Text::new("not given".to_string(), (x0, y + 4), font(12)));
                    }
                }
            }
        }
        let _ = root.present();
    }
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_scaled_to_their_panel_and_labelled() {
        let svg = chart_svg(
            "Cost per question",
            &[
                ("bm25".into(), Some(2000.0), Some(0.5)),
                ("lightrag".into(), Some(8000.0), Some(2.0)),
                ("mine".into(), None, Some(1.0)),
            ],
        );
        assert!(svg.starts_with("<svg") && svg.contains("Cost per question"));
        for text in ["bm25", "lightrag", "2000", "8000", "0.50", "2.00", "not given", "tokens per question"] {
            assert!(svg.contains(text), "{text}");
        }
        // The largest bar of each panel is full width (190 px of 250 − 60).
        assert!(svg.contains("width=\"190\""), "{}", &svg[..svg.len().min(3000)]);
    }
}

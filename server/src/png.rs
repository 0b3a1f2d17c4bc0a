//! PNG versions of the SVG plots (resvg; text in the system's sans-serif
//! font, DejaVu Sans or Liberation Sans on Debian — `scripts/lib.sh`
//! installs fonts-dejavu-core on a fresh machine).

use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_system_fonts();
            for family in ["DejaVu Sans", "Liberation Sans"] {
                if db.faces().any(|f| f.families.iter().any(|(name, _)| name == family)) {
                    db.set_sans_serif_family(family);
                    break;
                }
            }
            Arc::new(db)
        })
        .clone()
}

/// Rasterises an SVG at `scale` (2.0: twice the SVG's pixel size, for
/// print) on a white background.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, String> {
    let options = usvg::Options { fontdb: fonts(), ..Default::default() };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| format!("the plot's SVG does not parse: {e}"))?;
    let size = tree.size();
    let (w, h) = ((size.width() * scale).ceil() as u32, (size.height() * scale).ceil() as u32);
    let mut pixmap = tiny_skia::Pixmap::new(w.max(1), h.max(1)).ok_or("the plot is too large to rasterise")?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_becomes_a_png_of_twice_its_size_with_its_text_drawn() {
        let svg = engine::rag::cost::chart_svg("Cost per question", &[("bm25".into(), Some(100.0), Some(0.5))]);
        let png = svg_to_png(&svg, 2.0).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let pixmap = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (1520, 2 * (70 + 30)));
        // The title's glyphs: dark pixels in the band where only text is drawn.
        let dark = (0..60 * 2)
            .flat_map(|y| (0..300).map(move |x| (x, y)))
            .filter(|(x, y)| pixmap.pixel(*x, *y).is_some_and(|p| p.red() < 100))
            .count();
        assert!(dark > 200, "the title's text was not drawn ({dark} dark pixels): no system font?");
        assert!(svg_to_png("<svg", 1.0).unwrap_err().contains("does not parse"));
    }
}

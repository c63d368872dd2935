//! PNG figures: the SVG of a figure rasterised by resvg, so a PNG shows exactly what the
//! SVG does (one drawing path, not two backends that drift apart). Text is set in the
//! font embedded from `assets/fonts` (a subset of DejaVu Sans; its licence is beside
//! it), never in whatever fonts a machine has, so a figure has its labels on a machine
//! without fonts and looks the same on every machine.
//!
//! Not here: drawing (the parent module), writing files (`cli::output`).

use crate::foundation::error::{Error, Result};
use crate::presentation::plot::{Figure, HEIGHT, WIDTH};
use resvg::{tiny_skia, usvg};

/// Pixels per SVG pixel: 2 gives 2200 × 1200, sharp in print at a column's width.
pub const SCALE: u32 = 2;

/// The embedded font (DejaVu Sans, cut to the characters labels use).
const FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-subset.ttf");
/// Its family name, which every generic family (`sans-serif`, …) is mapped to.
const FAMILY: &str = "DejaVu Sans";

/// How a figure is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// SVG text.
    Svg,
    /// PNG image, [`SCALE`] times the SVG's pixel size.
    Png,
}

impl Format {
    /// The format a file name asks for: `.png` (any case) is PNG, anything else SVG.
    pub fn of(path: &str) -> Format {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".png") {
            Format::Png
        } else {
            Format::Svg
        }
    }
}

/// Rasterises an SVG document to PNG bytes at [`SCALE`] times its size.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>> {
    let err = |e: String| Error::Arg(format!("cannot draw the PNG: {e}"));
    let mut opt = usvg::Options {
        font_family: FAMILY.to_string(),
        ..usvg::Options::default()
    };
    let db = opt.fontdb_mut();
    db.load_font_data(FONT.to_vec());
    db.set_sans_serif_family(FAMILY);
    db.set_serif_family(FAMILY);
    db.set_monospace_family(FAMILY);
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| err(e.to_string()))?;
    let size = tree.size().to_int_size();
    let (w, h) = (size.width() * SCALE, size.height() * SCALE);
    let mut pixmap =
        tiny_skia::Pixmap::new(w, h).ok_or_else(|| err(format!("a {w} × {h} image")))?;
    // An opaque white page: a transparent background prints as black in some viewers.
    pixmap.fill(tiny_skia::Color::WHITE);
    let scale = SCALE as f32;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| err(e.to_string()))
}

/// A figure as the bytes of a file in `format`.
pub fn encode(fig: &Figure, format: Format) -> Result<Vec<u8>> {
    let svg = crate::presentation::plot::svg(fig)?;
    match format {
        Format::Svg => Ok(svg.into_bytes()),
        Format::Png => svg_to_png(&svg),
    }
}

/// The pixel size of a PNG figure.
pub fn png_size() -> (u32, u32) {
    (WIDTH * SCALE, HEIGHT * SCALE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_follows_the_extension() {
        assert_eq!(Format::of("a/b.PNG"), Format::Png);
        assert_eq!(Format::of("b.svg"), Format::Svg);
        assert_eq!(Format::of("-"), Format::Svg);
    }

    #[test]
    fn text_is_drawn_with_the_embedded_font() {
        let blank = r#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"></svg>"#;
        let text = r#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><text x="2" y="15" font-family="sans-serif" font-size="14">Ag</text></svg>"#;
        let (a, b) = (svg_to_png(blank).unwrap(), svg_to_png(text).unwrap());
        assert!(a.starts_with(b"\x89PNG\r\n\x1a\n"));
        // Glyphs make the image differ from a blank page (and compress worse).
        assert_ne!(a, b);
        assert!(b.len() > a.len());
    }
}

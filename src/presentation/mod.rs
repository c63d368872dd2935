//! Presentation: figures a paper can take as they are — sweeps and CSV tables drawn as
//! SVG or PNG ([`plot`]), link heat maps ([`heatmap`]). It draws what the measurement and
//! experiment layers computed and computes nothing of its own.

pub mod heatmap;
pub mod plot;

//! Reading hardware descriptions from RON files. Errors name the file, line and column.

use crate::config::HwConfig;
use crate::foundation::error::{Error, Result};
use std::path::Path;

/// Parses a hardware description from RON text; `origin` names the source in errors.
/// Optional fields take plain values (`dma: 2`, not `dma: Some(2)`). A UTF-8 byte-order
/// mark at the start (some Windows editors write one) is skipped.
pub fn parse_hw(text: &str, origin: &str) -> Result<HwConfig> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let cfg = ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<HwConfig>(text)
        .map_err(|e| Error::Parse(format!("{origin}:{}: {}", e.span.start, e.code)))?;
    check_finite(&cfg).map_err(|e| Error::Parse(format!("{origin}: {e}")))?;
    Ok(cfg)
}

/// Refuses infinite or NaN numbers (RON reads `inf` and `NaN`): no field means them, and
/// JSON — the `--set` overrides and the reports — has no spelling for them.
fn check_finite(cfg: &HwConfig) -> std::result::Result<(), String> {
    use crate::config::{LengthConfig, PatternConfig, SwitchingConfig};
    let mut fields = vec![
        ("workload.rate", cfg.workload.rate),
        (
            "experiment.saturation_backlog",
            cfg.experiment.saturation_backlog,
        ),
    ];
    if let Some(l) = cfg.experiment.latency_threshold {
        fields.push(("experiment.latency_threshold", l));
    }
    if let LengthConfig::Exponential { mean } = cfg.workload.length {
        fields.push(("workload.length.mean", mean));
    }
    match cfg.workload.pattern {
        PatternConfig::SphereOfLocality { probability, .. } => {
            fields.push(("workload.pattern.probability", probability))
        }
        PatternConfig::DecreasingProbability { decay } => {
            fields.push(("workload.pattern.decay", decay))
        }
        PatternConfig::Hotspot { fraction, .. } => {
            fields.push(("workload.pattern.fraction", fraction))
        }
        _ => {}
    }
    if let SwitchingConfig::Deflection {
        hop_limit: Some(h), ..
    } = cfg.switching
    {
        fields.push(("switching.hop_limit", h));
    }
    match fields.iter().find(|(_, v)| !v.is_finite()) {
        Some((name, v)) => Err(format!(
            "{name} = {}: must be a finite number",
            crate::foundation::limits::show(*v)
        )),
        None => Ok(()),
    }
}

/// Reads and parses a hardware description file.
pub fn load_hw(path: &Path) -> Result<HwConfig> {
    let text = crate::foundation::inputs::read_to_string(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut cfg = parse_hw(&text, &path.display().to_string())?;
    // A graph file is named relative to the hardware file that uses it.
    if let crate::config::TopologyConfig::HostGraph { file } = &mut cfg.topology {
        if Path::new(file.as_str()).is_relative() {
            if let Some(dir) = path.parent() {
                *file = dir.join(file.as_str()).display().to_string();
            }
        }
    }
    Ok(cfg)
}

/// The preset `hw/NAME` of this repository, for unit tests.
#[cfg(test)]
pub(crate) fn preset(name: &str) -> HwConfig {
    load_hw(&Path::new(env!("CARGO_MANIFEST_DIR")).join("hw").join(name)).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_field_is_reported_with_line_and_column() {
        let text = "(\n topology: Hypercube(dim: 3),\n switching: Wormhole(routing: DimensionOrder),\n bogus: 1,\n)";
        let err = parse_hw(text, "x.ron").unwrap_err().to_string();
        assert!(err.starts_with("x.ron:4:"), "{err}");
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn defaults_fill_missing_sections() {
        let cfg = parse_hw(
            "(topology: Mesh(k: 4, n: 2), switching: Wormhole(routing: DimensionOrder))",
            "x.ron",
        )
        .unwrap();
        assert_eq!(cfg.router.vcs, 4);
        assert_eq!(cfg.links.latency, 1);
    }

    #[test]
    fn infinite_numbers_are_refused_naming_the_field() {
        let err = parse_hw(
            "(topology: Mesh(k: 4, n: 2), switching: Wormhole(routing: DimensionOrder), \
             experiment: (saturation_backlog: inf))",
            "x.ron",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("x.ron: experiment.saturation_backlog = inf"),
            "{err}"
        );
        assert!(parse_hw(
            "(topology: Mesh(k: 4, n: 2), switching: Wormhole(routing: DimensionOrder), \
             workload: (rate: NaN))",
            "x.ron",
        )
        .is_err());
    }

    #[test]
    fn a_utf8_byte_order_mark_before_the_description_is_ignored() {
        let cfg = parse_hw(
            "\u{feff}(topology: Mesh(k: 4, n: 2), switching: Wormhole(routing: DimensionOrder))",
            "x.ron",
        )
        .unwrap();
        assert_eq!(cfg.router.vcs, 4);
    }
}

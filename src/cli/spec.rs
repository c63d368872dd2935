//! Short command-line forms of workload settings:
//! lengths `12`, `const:12`, `exp:12`, `uniform:8:16`; patterns `uniform`, `bitcomp`,
//! `transpose`, `hotspot:NODE:FRACTION`, `sphere:RADIUS:PROBABILITY`, `decreasing:DECAY`.

use crate::config::{LengthConfig, PatternConfig};
use crate::foundation::error::{Error, Result};

fn num<T: std::str::FromStr>(s: &str, what: &str, flag: &str, spec: &str) -> Result<T> {
    s.parse()
        .map_err(|_| Error::Arg(format!("{flag} `{spec}`: `{s}` is not a valid {what}")))
}

/// Parses `--length`.
pub fn parse_length(spec: &str) -> Result<LengthConfig> {
    let parts: Vec<&str> = spec.split(':').collect();
    Ok(match parts.as_slice() {
        [n] => LengthConfig::Constant {
            flits: num(n, "flit count", "--length", spec)?,
        },
        ["const" | "constant", n] => LengthConfig::Constant {
            flits: num(n, "flit count", "--length", spec)?,
        },
        ["exp" | "exponential", m] => LengthConfig::Exponential {
            mean: num(m, "mean", "--length", spec)?,
        },
        ["uniform", a, b] => LengthConfig::Uniform {
            min: num(a, "flit count", "--length", spec)?,
            max: num(b, "flit count", "--length", spec)?,
        },
        _ => {
            return Err(Error::Arg(format!(
                "--length `{spec}`: expected N, const:N, exp:MEAN or uniform:MIN:MAX"
            )))
        }
    })
}

/// Parses `--pattern`.
pub fn parse_pattern(spec: &str) -> Result<PatternConfig> {
    let parts: Vec<&str> = spec.split(':').collect();
    Ok(match parts.as_slice() {
        ["uniform"] => PatternConfig::Uniform,
        ["uniform", "self"] => PatternConfig::UniformWithSelf,
        ["bitcomp" | "bit-complement"] => PatternConfig::BitComplement,
        ["transpose"] => PatternConfig::Transpose,
        ["hotspot", n, f] => PatternConfig::Hotspot {
            node: num(n, "node", "--pattern", spec)?,
            fraction: num(f, "fraction", "--pattern", spec)?,
        },
        ["sphere", r, p] => PatternConfig::SphereOfLocality {
            radius: num(r, "radius", "--pattern", spec)?,
            probability: num(p, "probability", "--pattern", spec)?,
        },
        ["decreasing", d] => PatternConfig::DecreasingProbability {
            decay: num(d, "decay", "--pattern", spec)?,
        },
        _ => {
            return Err(Error::Arg(format!(
                "--pattern `{spec}`: expected uniform, uniform:self, bitcomp, transpose, hotspot:NODE:FRACTION, \
                 sphere:RADIUS:PROBABILITY or decreasing:DECAY"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse() {
        assert_eq!(
            parse_length("12").unwrap(),
            LengthConfig::Constant { flits: 12 }
        );
        assert_eq!(
            parse_length("exp:8.5").unwrap(),
            LengthConfig::Exponential { mean: 8.5 }
        );
        assert_eq!(
            parse_length("uniform:2:9").unwrap(),
            LengthConfig::Uniform { min: 2, max: 9 }
        );
        assert!(parse_length("uniform:2").is_err());
        assert_eq!(
            parse_pattern("hotspot:3:0.2").unwrap(),
            PatternConfig::Hotspot {
                node: 3,
                fraction: 0.2
            }
        );
        assert!(parse_pattern("ring").is_err());
    }
}

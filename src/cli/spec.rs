//! Short command-line forms of workload settings:
//! lengths `12`, `const:12`, `exp:12`, `uniform:8:16`, `mixed:1@0.5,5@0.5` (length@weight
//! pairs); patterns `uniform`, `uniform:self`, `bitcomp`, `transpose`,
//! `hotspot:NODE:FRACTION`, `sphere:RADIUS:PROBABILITY`, `decreasing:DECAY` and BookSim's
//! `bitrev`, `shuffle`, `tornado`, `neighbor`, `randperm`, `hotnodes:N,N,…` (all traffic
//! to the listed hot nodes), and the dragonfly's `groupshift`.

use crate::config::{FixedPoints, LengthConfig, PatternConfig};
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
        ["mixed", list] => {
            let (mut lengths, mut weights) = (Vec::new(), Vec::new());
            for pair in list.split(',') {
                let Some((l, w)) = pair.split_once('@') else {
                    return Err(Error::Arg(format!(
                        "--length `{spec}`: `{pair}` is not LENGTH@WEIGHT"
                    )));
                };
                lengths.push(num(l, "flit count", "--length", spec)?);
                weights.push(num(w, "weight", "--length", spec)?);
            }
            LengthConfig::Mixed { lengths, weights }
        }
        _ => {
            return Err(Error::Arg(format!(
                "--length `{spec}`: expected N, const:N, exp:MEAN, uniform:MIN:MAX or \
                 mixed:LENGTH@WEIGHT,LENGTH@WEIGHT,…"
            )))
        }
    })
}

/// Parses `--pattern`: the pattern, and what its fixed points do (`PATTERN:self` for a
/// permutation pattern: they send to themselves, as BookSim's do).
pub fn parse_pattern(spec: &str) -> Result<(PatternConfig, FixedPoints)> {
    let (base, fixed) = match spec.strip_suffix(":self") {
        Some(b) if b != "uniform" => (b, FixedPoints::ToSelf),
        _ => (spec, FixedPoints::Silent),
    };
    let pattern = parse_pattern_only(base, spec)?;
    if fixed == FixedPoints::ToSelf
        && !matches!(
            pattern,
            PatternConfig::BitComplement
                | PatternConfig::Transpose
                | PatternConfig::BitReverse
                | PatternConfig::Shuffle
                | PatternConfig::Tornado
                | PatternConfig::Neighbor
                | PatternConfig::RandomPermutation
                | PatternConfig::HotspotNodes { .. }
        )
    {
        return Err(Error::Arg(format!(
            "--pattern `{spec}`: `:self` (fixed points send to themselves) applies to the \
             permutation patterns (bitcomp, transpose, bitrev, shuffle, tornado, neighbor, \
             randperm) and hotnodes; uniform:self is uniform over all nodes"
        )));
    }
    Ok((pattern, fixed))
}

fn parse_pattern_only(base: &str, spec: &str) -> Result<PatternConfig> {
    let parts: Vec<&str> = base.split(':').collect();
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
        ["bitrev" | "bit-reverse"] => PatternConfig::BitReverse,
        ["shuffle"] => PatternConfig::Shuffle,
        ["tornado"] => PatternConfig::Tornado,
        ["neighbor" | "neighbour"] => PatternConfig::Neighbor,
        ["randperm"] => PatternConfig::RandomPermutation,
        ["groupshift" | "group-shift"] => PatternConfig::GroupShift,
        ["hotnodes", list] => PatternConfig::HotspotNodes {
            nodes: list
                .split(',')
                .map(|n| num(n, "node", "--pattern", spec))
                .collect::<Result<_>>()?,
        },
        _ => {
            return Err(Error::Arg(format!(
                "--pattern `{spec}`: expected uniform, uniform:self, bitcomp, transpose, hotspot:NODE:FRACTION, \
                 sphere:RADIUS:PROBABILITY, decreasing:DECAY, bitrev, shuffle, tornado, neighbor, \
                 randperm, groupshift or hotnodes:NODE,NODE,… (a permutation pattern with `:self`: its fixed \
                 points send to themselves)"
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
            parse_pattern("hotspot:3:0.2").unwrap().0,
            PatternConfig::Hotspot {
                node: 3,
                fraction: 0.2
            }
        );
        assert!(parse_pattern("ring").is_err());
    }

    #[test]
    fn booksim_forms_parse() {
        for (spec, want) in [
            ("tornado", PatternConfig::Tornado),
            ("bitrev", PatternConfig::BitReverse),
            ("shuffle", PatternConfig::Shuffle),
            ("neighbor", PatternConfig::Neighbor),
            ("randperm", PatternConfig::RandomPermutation),
            (
                "hotnodes:3,12",
                PatternConfig::HotspotNodes { nodes: vec![3, 12] },
            ),
        ] {
            assert_eq!(
                parse_pattern(spec).unwrap(),
                (want.clone(), FixedPoints::Silent),
                "{spec}"
            );
            let with_self = format!("{spec}:self");
            assert_eq!(
                parse_pattern(&with_self).unwrap(),
                (want, FixedPoints::ToSelf),
                "{with_self}"
            );
        }
        assert!(parse_pattern("hotnodes:3,x").is_err());
        assert_eq!(
            parse_pattern("uniform:self").unwrap(),
            (PatternConfig::UniformWithSelf, FixedPoints::Silent)
        );
        let err = parse_pattern("hotspot:3:0.2:self").unwrap_err().to_string();
        assert!(err.contains("permutation patterns"), "{err}");
        assert_eq!(
            parse_length("mixed:1@0.5,5@0.5").unwrap(),
            LengthConfig::Mixed {
                lengths: vec![1, 5],
                weights: vec![0.5, 0.5]
            }
        );
        assert!(parse_length("mixed:1,5").is_err());
    }
}

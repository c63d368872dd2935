//! Dimension-order (deterministic) wormhole routing on a k×k bidirectional torus with
//! uniform destinations: the standard M/G/1 channel model (Dally 1990; Draper & Ghosh
//! 1994), built from the same channel structure as paper 004's adaptive model
//! ([`crate::model::wormhole_torus`]) so that the two can be compared as the paper's Figs. 3–4
//! do. Paper 004 takes its deterministic numbers from Ciciani, Colajanni & Paolucci
//! (IPPS'97, its ref. \[7\]), which we do not have; this is the textbook model, not theirs.
//!
//! - A message to offset (a, b) (a X hops, then b Y hops, each 0..k/2, weighted by how
//!   many destinations have it) crosses a + b channels and waits at each: the zero-load
//!   latency (the emulator's closed form, as in the adaptive model) plus a·W_X + b·W_Y.
//! - Every channel of a dimension is one M/G/1 queue fed by all the flows that cross it
//!   (Poisson, rate λ·E\[a\]/2 per X channel: E\[a\] X hops per message over the two X
//!   channels leaving a node; likewise Y).
//! - A channel is held from the header's grant until the tail leaves it: the data
//!   transfer plus every wait the header still meets downstream (the holding time includes
//!   the waits of the later hops, which is what makes the waits grow with the path and
//!   with k). Its variance is the data transfer's plus the square of that waiting part
//!   (Draper & Ghosh's approximation, the one paper 004 §4.2.2 makes).
//! - The X → Y turn waits for a Y channel like any Y hop; ejection does not wait.
//! - Solved by fixed-point iteration from zero waits; a channel load reaching 1 is
//!   saturation. Both path forms give the same distance-weighted sum (a deterministic
//!   route has no "average message" to pick).

use crate::config::{HwConfig, Routing, SwitchingConfig};
use crate::model::circuit::{MAX_ITERATIONS, TOLERANCE};
use crate::model::wormhole_torus::{WormholeParams, WormholePrediction};
use crate::model::{rel_change, ModelError};

/// The parameters of a wormhole k×k torus with dimension-order routing (even k).
pub fn params(cfg: &HwConfig) -> Result<WormholeParams, ModelError> {
    match cfg.switching {
        SwitchingConfig::Wormhole {
            routing: Routing::DimensionOrder,
            ..
        } => WormholeParams::torus(cfg, 2),
        _ => Err(ModelError::BadInput(
            "the dimension-order torus model is for dimension-order wormhole routing".into(),
        )),
    }
}

/// (weight, X hops, Y hops) of every destination offset other than the source's own.
fn offsets(k: usize) -> Vec<(f64, usize, usize)> {
    let count = |d: usize| if d == 0 || d == k / 2 { 1.0 } else { 2.0 };
    let others = (k * k - 1) as f64;
    let mut v = Vec::new();
    for a in 0..=k / 2 {
        for b in 0..=k / 2 {
            if a + b > 0 {
                v.push((count(a) * count(b) / others, a, b));
            }
        }
    }
    v
}

/// Predicts the dimension-order model. `waits` in the prediction are
/// \[W_X, W_X, W_Y, W_Y\] (one wait per dimension), `p_x`/`p_y` the channel loads.
pub fn predict(p: &WormholeParams) -> Result<WormholePrediction, ModelError> {
    let k = p.k as usize;
    let cases = offsets(k);
    let ex: f64 = cases.iter().map(|&(w, a, _)| w * a as f64).sum();
    let ey: f64 = cases.iter().map(|&(w, _, b)| w * b as f64).sum();
    debug_assert!((ex - ey).abs() < 1e-12, "a square torus is symmetric");
    let l = p.data_mean;
    let (mut wx, mut wy) = (0.0f64, 0.0f64);
    for it in 1..=MAX_ITERATIONS {
        // Moments of the holding times over every hop of every path, per dimension.
        let (mut sx, mut sx2, mut sy, mut sy2) = (0.0, 0.0, 0.0, 0.0);
        let s2 = |s: f64| s * s + p.data_var + (s - l).powi(2);
        for &(w, a, b) in &cases {
            for i in 1..=a {
                let s = l + (a - i) as f64 * wx + b as f64 * wy;
                sx += w * s;
                sx2 += w * s2(s);
            }
            for j in 1..=b {
                let s = l + (b - j) as f64 * wy;
                sy += w * s;
                sy2 += w * s2(s);
            }
        }
        let (rx, ry) = (p.rate / 2.0 * sx, p.rate / 2.0 * sy);
        if rx >= 1.0 || ry >= 1.0 || !(rx + ry).is_finite() {
            return Err(ModelError::Saturated {
                what: "torus channels (dimension order)".into(),
                utilization: rx.max(ry),
            });
        }
        // P–K: W = λ E[S²] / (2(1 − ρ)), with λ E[S²] = rate/2 · Σ w S².
        let nx = p.rate / 2.0 * sx2 / (2.0 * (1.0 - rx));
        let ny = p.rate / 2.0 * sy2 / (2.0 * (1.0 - ry));
        let change = rel_change(nx, wx).max(rel_change(ny, wy));
        wx = nx;
        wy = ny;
        if change < TOLERANCE {
            let (mut latency, mut hops) = (0.0, 0.0);
            for &(w, a, b) in &cases {
                let h = (a + b) as f64;
                latency += w * (p.zero_load(h) + a as f64 * wx + b as f64 * wy);
                hops += w * h;
            }
            let zero_load = p.zero_load(hops);
            return Ok(WormholePrediction {
                latency,
                zero_load,
                hops,
                blocking_per_hop: (latency - zero_load) / hops,
                p_x: rx,
                p_y: ry,
                waits: [wx, wx, wy, wy],
                iterations: it,
            });
        }
    }
    Err(ModelError::NotConverged {
        iterations: MAX_ITERATIONS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    fn preset(name: &str, k: u32) -> HwConfig {
        let mut cfg = crate::config::load::preset(name);
        cfg.topology = TopologyConfig::Torus {
            k,
            n: 2,
            bidirectional: true,
        };
        cfg
    }

    #[test]
    fn at_vanishing_load_it_is_the_emulators_zero_load_latency() {
        for k in [4, 6, 8, 16] {
            let mut cfg = preset("wormhole-torus-dor.ron", k);
            cfg.workload.rate = 1e-15;
            let pred = predict(&params(&cfg).unwrap()).unwrap();
            let expect = crate::model::wormhole_torus::emulator_zero_load_mean(&cfg, 12);
            assert!((pred.latency - expect).abs() < 1e-9, "k={k}");
        }
    }

    #[test]
    fn its_channel_load_is_the_flit_load_and_its_wait_the_pk_wait_at_light_load() {
        // At light load the holding time is the data transfer: ρ = λ·E[a]/2·L and
        // W = ρ·L/(2(1 − ρ)) (M/D/1) for constant lengths.
        let mut cfg = preset("wormhole-torus-dor.ron", 8);
        cfg.workload.rate = 1e-6;
        let p = params(&cfg).unwrap();
        let pred = predict(&p).unwrap();
        let ex = offsets(8)
            .iter()
            .map(|&(w, a, _)| w * a as f64)
            .sum::<f64>();
        let rho = 1e-6 * ex / 2.0 * 12.0;
        assert!((pred.p_x - rho).abs() < 1e-9 * rho.max(1.0) + 1e-12);
        let md1 = rho * 12.0 / (2.0 * (1.0 - rho));
        assert!(
            (pred.waits[0] - md1).abs() < 1e-3 * md1,
            "{} vs {md1}",
            pred.waits[0]
        );
    }

    #[test]
    fn deterministic_routing_waits_more_than_adaptive_and_saturates_first() {
        for k in [8, 16] {
            let mut dor = preset("wormhole-torus-dor.ron", k);
            let mut ada = preset("wormhole-torus-adaptive.ron", k);
            for rate in [0.001, 0.002] {
                dor.workload.rate = rate;
                ada.workload.rate = rate;
                let d = predict(&params(&dor).unwrap())
                    .unwrap_or_else(|e| panic!("k={k} rate={rate}: {e}"));
                let a = super::super::wormhole_torus::predict(
                    &WormholeParams::from_config(&ada).unwrap(),
                    super::super::circuit::PathForm::Weighted,
                )
                .unwrap();
                assert!(d.latency > a.latency, "k={k} rate={rate}");
            }
        }
        let mut cfg = preset("wormhole-torus-dor.ron", 16);
        cfg.workload.rate = 0.05;
        assert!(matches!(
            predict(&params(&cfg).unwrap()),
            Err(ModelError::Saturated { .. })
        ));
    }

    #[test]
    fn adaptive_machines_and_odd_tori_are_refused() {
        assert!(params(&preset("wormhole-torus-adaptive.ron", 8)).is_err());
        assert!(params(&preset("wormhole-torus-dor.ron", 5)).is_err());
    }
}

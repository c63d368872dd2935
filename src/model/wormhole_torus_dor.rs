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
//! - The node's DMA engines (`router.dma`, c of them, default one per dimension): a
//!   created message waits in the source's memory for an injection engine, and a header
//!   at its destination waits for an ejection engine. Both are M/G/c queues with Poisson
//!   arrivals at the message rate, their waits by the Allen–Cunneen approximation
//!   ([`mgc_wait`], exact P–K for c = 1). An injection engine is held for the header's
//!   routing, its wait for the first channel and the data transfer: the tail leaves the
//!   local input VC once its flits have streamed onto the first link, the VC buffers
//!   downstream taking the later waits (measured: with one engine on the 8×8 preset the
//!   source queue waits 0.44 and 1.08 cycles at 0.005 and 0.01 messages/node/cycle, as
//!   M/G/1 with this holding time gives, where holding it for every downstream wait
//!   as the channels are would give 0.57 and 2.67). An ejection engine is held for the
//!   data transfer; its wait adds to the latency, not to the channels' holding times
//!   (the worm waits in the last router's buffers).
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
    let c = p.dma.max(1);
    // A header waits for one of the destination's c ejection engines, each held for the
    // data transfer (it writes to memory at link rate and never blocks); the wait adds
    // to the latency only.
    let we = mgc_wait(p.rate, l, l * l + p.data_var, c, "DMA ejection engines")?;
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
            // The injection engine is held for the routing, the wait for the first
            // channel and the data transfer.
            let (mut s1, mut s2m) = (0.0, 0.0);
            for &(w, a, _) in &cases {
                let first = if a > 0 { wx } else { wy };
                let s = p.route + l + first;
                s1 += w * s;
                s2m += w * (s * s + p.data_var + first * first);
            }
            let ws = mgc_wait(p.rate, s1, s2m, c, "DMA injection engines")?;
            let (mut latency, mut hops) = (0.0, 0.0);
            for &(w, a, b) in &cases {
                let h = (a + b) as f64;
                latency += w * (p.zero_load(h) + a as f64 * wx + b as f64 * wy + we + ws);
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
                source_wait: ws,
                ejection_wait: we,
                iterations: it,
            });
        }
    }
    Err(ModelError::NotConverged {
        iterations: MAX_ITERATIONS,
    })
}

/// Mean wait of an M/G/c queue (Poisson arrivals at `lambda`, service time of mean `mean`
/// and second moment `second`, `c` servers) by the Allen–Cunneen approximation: the
/// M/M/c wait (Erlang C) scaled by (1 + C²)/2, C² the squared coefficient of variation
/// of the service time. Exact (Pollaczek–Khinchine) for c = 1. `what` names the servers
/// in the saturation error.
pub fn mgc_wait(
    lambda: f64,
    mean: f64,
    second: f64,
    c: u32,
    what: &str,
) -> Result<f64, ModelError> {
    if lambda <= 0.0 || mean <= 0.0 {
        return Ok(0.0);
    }
    let a = lambda * mean;
    let rho = a / c as f64;
    if rho >= 1.0 || !rho.is_finite() {
        return Err(ModelError::Saturated {
            what: what.into(),
            utilization: rho,
        });
    }
    // Erlang B by its recursion, then Erlang C.
    let mut b = 1.0;
    for n in 1..=c {
        b = a * b / (n as f64 + a * b);
    }
    let erlang_c = b / (1.0 - rho * (1.0 - b));
    let scv = ((second - mean * mean) / (mean * mean)).max(0.0);
    Ok(erlang_c * mean / (c as f64 * (1.0 - rho)) * (1.0 + scv) / 2.0)
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
            c: 1,
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
    fn one_servers_mgc_wait_is_pollaczek_khinchine_and_more_servers_wait_less() {
        let (lambda, mean, second) = (0.02, 12.0, 150.0);
        let pk = lambda * second / (2.0 * (1.0 - lambda * mean));
        let one = mgc_wait(lambda, mean, second, 1, "x").unwrap();
        assert!((one - pk).abs() < 1e-12, "{one} vs {pk}");
        let two = mgc_wait(lambda, mean, second, 2, "x").unwrap();
        assert!(two > 0.0 && two < 0.2 * one, "{two} vs {one}");
        assert!(mgc_wait(0.1, 12.0, 144.0, 1, "engines").is_err());
        assert!(mgc_wait(0.1, 12.0, 144.0, 2, "engines").is_ok());
    }

    #[test]
    fn fewer_dma_engines_add_a_source_queue_and_an_ejection_wait() {
        let mut cfg = preset("wormhole-torus-dor.ron", 8);
        cfg.workload.rate = 0.01;
        let at = |dma: u32, cfg: &mut HwConfig| {
            cfg.router.dma = Some(dma);
            predict(&params(cfg).unwrap()).unwrap()
        };
        let (one, two, four) = (at(1, &mut cfg), at(2, &mut cfg), at(4, &mut cfg));
        assert!(one.source_wait > 10.0 * two.source_wait && one.ejection_wait > 0.5);
        assert!(one.latency > two.latency && two.latency > four.latency);
        // The channels do not change: the engines' waits are not downstream waits.
        assert_eq!(one.waits, two.waits);
        let sum = |p: &WormholePrediction| p.latency - p.source_wait - p.ejection_wait;
        assert!((sum(&one) - sum(&two)).abs() < 1e-9);
    }

    #[test]
    fn adaptive_machines_and_odd_tori_are_refused() {
        assert!(params(&preset("wormhole-torus-adaptive.ron", 8)).is_err());
        assert!(params(&preset("wormhole-torus-dor.ron", 5)).is_err());
    }
}

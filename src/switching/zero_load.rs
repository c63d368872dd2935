//! The zero-load latency of a lone message in each switching mode, in closed form: the
//! one place the modes' documentation and tests, the models (their vanishing-load limit),
//! `routemu check` and the saturation search's latency criterion take it from. Each
//! formula is derived in its mode's module documentation.

use crate::config::{AckDelay, HwConfig, SwitchingConfig};
use crate::foundation::types::Cycle;

/// Closed-form zero-load latency of an L-flit message over `hops` hops on the machine
/// `cfg`, in the latency definition `cfg.experiment.latency` (by default creation to tail
/// absorbed); see `switching::wormhole`'s documentation. From `HeadInjected` the source router's
/// R−1+a+s cycles before its crossbar grant are not counted; to `TailArrived` the
/// ejection channel's `router.ni.ejection_latency` is not.
pub fn wormhole(cfg: &HwConfig, hops: u64, len: u64) -> Cycle {
    use crate::config::{LatencyFrom, LatencyTo};
    let r = cfg.router.controller.route.max(1);
    let p = &cfg.router.pipeline;
    let per_router = wormhole_router(cfg);
    let w = cfg.links.width.max(1) as u64;
    let ni = &cfg.router.ni;
    let def = cfg.experiment.latency;
    // The head's time in the injection channel comes before its crossbar grant, so a
    // latency from the grant leaves it out with the source router's stages.
    let source = match def.from {
        LatencyFrom::Creation => 0,
        LatencyFrom::HeadInjected => ni.injection_latency + r - 1 + p.vc_alloc + p.switch_alloc,
    };
    let eject = match def.to {
        LatencyTo::TailDelivered => ni.ejection_latency,
        LatencyTo::TailArrived => 0,
    };
    (hops + 1) * per_router
        + hops * cfg.links.latency
        + ni.injection_latency
        + eject
        + len.div_ceil(w)
        - 1
        - source
}

/// The cycles a lone wormhole head spends in each router on its path: R−1+a+s+x (the
/// route service time and the pipeline's stages, the last cycle of routing overlapping
/// VC allocation).
pub fn wormhole_router(cfg: &HwConfig) -> Cycle {
    router_delay(cfg) - 1
}

/// [`wormhole`] at a distance that need not be whole (a mean distance): the latency at
/// its whole hops plus the fraction's share of one more link and router.
pub fn wormhole_at(cfg: &HwConfig, hops: f64, len: u64) -> f64 {
    let frac = hops - hops.floor();
    wormhole(cfg, hops.floor() as u64, len) as f64
        + frac * cfg.links.latency as f64
        + frac * wormhole_router(cfg) as f64
}

/// The buffer depth, in flits, at which credits never stall a lone wormhole message's
/// body (the condition of [`wormhole`]): x + ℓ + credit latency + (R−1+a+s), the cycles
/// from a flit's crossing to its credit being usable again upstream.
pub fn wormhole_streaming_depth(cfg: &HwConfig) -> u64 {
    let l = &cfg.links;
    let p = &cfg.router.pipeline;
    p.switch_traversal
        + l.latency
        + l.credit_latency.unwrap_or(l.latency)
        + (cfg.router.controller.route - 1 + p.vc_alloc + p.switch_alloc)
}

/// The wormhole zero-load latency of an L-flit message as a line in the hops it travels:
/// (latency at no hop, cost of one more hop), cycles.
pub fn wormhole_line(cfg: &HwConfig, len: u64) -> (f64, f64) {
    let z0 = wormhole(cfg, 0, len) as f64;
    (z0, wormhole(cfg, 1, len) as f64 - z0)
}

/// Closed-form zero-load latency (creation to completion) of an L-flit message over
/// `hops` hops on the circuit-switched machine `cfg`; see `switching::circuit`'s documentation.
pub fn circuit(cfg: &HwConfig, hops: u64, len: u64) -> Cycle {
    let c = &cfg.router.controller;
    let l = cfg.links.latency;
    let ack = match cfg.switching {
        SwitchingConfig::Circuit { ack, .. } => ack_cycles(ack, hops),
        _ => 0,
    };
    let data = len.div_ceil(cfg.links.width.max(1) as u64);
    let setup = hops * (c.verify + c.link_conn - 1 + l) + ack;
    if hops == 0 {
        return setup + data;
    }
    // The release of link i starts i·(D_rel − 1 + ℓ) after the data is sent.
    let release_end = (hops - 1) * (c.release - 1 + l) + c.release;
    let tail = data - 1 + hops * l;
    setup + (data + release_end).max(tail)
}

pub(crate) fn ack_cycles(ack: AckDelay, hops: u64) -> Cycle {
    match ack {
        AckDelay::Total(a) => a,
        AckDelay::PerHop(a) => (a * hops).max(1),
    }
}

/// Closed-form latency (creation to last flit delivered) of a lone L-flit worm over
/// `hops` hops on the deflection machine `cfg`: (h + 1)(R − 1) + h·ℓ + L.
pub fn deflection(cfg: &HwConfig, hops: u64, len: u64) -> Cycle {
    let r = router_delay(cfg);
    (hops + 1) * (r - 1) + hops * cfg.links.latency + len
}

/// The router's delay R per hop: the routing controller's time plus any extra pipeline
/// stages (at least 1 cycle).
pub fn router_delay(cfg: &HwConfig) -> Cycle {
    let p = &cfg.router.pipeline;
    cfg.router.controller.route.max(1) + p.vc_alloc + p.switch_alloc + p.switch_traversal
}

/// Closed-form latency (creation to delivery) of a lone worm of `len` flits over `links`
/// links of propagation `latency` each: links·ℓ + L.
pub fn timeout(links: u64, len: u64, latency: u64) -> Cycle {
    links * latency + len
}

/// [`timeout`] over a mean route of `links` links and a mean length of `len` flits.
pub fn timeout_mean(links: f64, len: f64, latency: u64) -> f64 {
    links * latency as f64 + len
}

//! The routing controller's queue on a wormhole network: why Pollaczek–Khinchine is about
//! 16–20% above the measured wait, and the correction `routemu compare` holds against it.
//!
//! Mechanism (measured, docs/validation.md "The routing controller on the wormhole
//! torus"): a header that arrives over a link can never find the controller busy with a
//! header from the same link. While a header is routed its worm's body stacks up behind it
//! in the input buffer and occupies the link, and consecutive headers on one link are a
//! whole worm apart, so each network input delivers at most one header at a time.
//! Poisson arrivals (P–K) let every arrival meet the work of every input, its own
//! included. If input j brings the share s_j of the headers, an arrival from j meets the
//! work of the others only, about (1 − s_j) of it, and on average the wait and the
//! fraction of arrivals finding the server busy shrink by
//!
//! F = 1 − Σ_j s_j² over the exclusive inputs.
//!
//! On a torus or hypercube with uniform traffic every network input carries the same share
//! h̄/(P(1 + h̄)) of the headers (P network ports, h̄ hops per message; the injection port
//! brings the remaining 1/(1 + h̄)). The injection port is exclusive too when the node has
//! one DMA engine (the next message cannot start before the tail of the last has left);
//! with several engines injected headers can queue together, and it is left out.
//!
//! The controller is a discrete-time queue: a server that starts a request in cycle t is
//! not "busy" for an arrival of cycle t, so with Poisson arrivals the fraction that find it
//! busy is ρ − λ (one server), not ρ; the corrected fraction is (ρ − λ)·F. The wait with
//! Poisson arrivals per cycle is exactly P–K (the same-cycle arrivals ahead make up the
//! difference), so the corrected wait is W_PK·F.
//!
//! This module owns F; it does not measure (the report's `controller` block does) and does
//! not apply to circuit switching (whose chained set-ups `foundation::mg1::chained_wait`
//! corrects for).

use crate::config::{HwConfig, SwitchingConfig, TopologyConfig};

/// F = 1 − Σ s_j² over a node's exclusive inputs for `cfg` (a wormhole torus or
/// hypercube) at `hops` mean hops per message; None for other machines (meshes, whose
/// inputs carry unequal shares, and other switching modes).
pub fn same_input_factor(cfg: &HwConfig, hops: f64) -> Option<f64> {
    if !matches!(cfg.switching, SwitchingConfig::Wormhole { .. }) || hops.is_nan() || hops <= 0.0 {
        return None;
    }
    let ports = match cfg.topology {
        TopologyConfig::Torus {
            n, bidirectional, ..
        } => n * if bidirectional { 2 } else { 1 },
        TopologyConfig::Hypercube { dim } => dim,
        _ => return None,
    } as f64;
    let dma = crate::engine::machine::validate(cfg).ok()?.dma;
    let per_link = hops / (ports * (1.0 + hops));
    let injection = 1.0 / (1.0 + hops);
    let mut f = 1.0 - ports * per_link * per_link;
    if dma == 1 {
        f -= injection * injection;
    }
    Some(f)
}

/// The corrected mean wait W_PK·F.
pub fn corrected_wait(wait_pk: f64, factor: f64) -> f64 {
    wait_pk * factor
}

/// The corrected fraction of arrivals that find a single-server controller busy:
/// (ρ − λ)·F, with λ the requests per node per cycle.
pub fn corrected_busy(rho: f64, lambda: f64, factor: f64) -> f64 {
    (rho - lambda).max(0.0) * factor
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_factor_counts_the_link_inputs_and_the_injection_port_only_with_one_engine() {
        let mut cfg = crate::config::load::preset("wormhole-torus-dor.ron");
        // 4 network inputs, h̄ = 4: each input 4/20 of the headers, injection 1/5.
        let two = same_input_factor(&cfg, 4.0).unwrap();
        assert!((two - (1.0 - 4.0 * 0.04)).abs() < 1e-12, "{two}");
        cfg.router.dma = Some(1);
        let one = same_input_factor(&cfg, 4.0).unwrap();
        assert!((one - (two - 0.04)).abs() < 1e-12, "{one}");
        let mesh = crate::config::load::preset("wormhole-mesh-dor.ron");
        assert_eq!(same_input_factor(&mesh, 4.0), None);
        let circuit = crate::config::load::preset("circuit-hold.ron");
        assert_eq!(same_input_factor(&circuit, 4.0), None);
    }

    #[test]
    fn a_server_that_starts_in_the_arrivals_cycle_is_not_busy_for_it() {
        // One-cycle service: nothing is busy from an earlier cycle.
        assert_eq!(corrected_busy(0.02, 0.02, 0.8), 0.0);
        assert!((corrected_busy(0.1, 0.025, 0.8) - 0.06).abs() < 1e-12);
    }
}

//! The numbers paper 002's model reports: per host and per link class, from a converged
//! fixed point (the averaging rules are in the parent module's notes).

use crate::model::wormhole_timeout::link::{Denominator, Matching};
use crate::model::wormhole_timeout::paths::PathSet;
use crate::model::wormhole_timeout::{Solution, TimeoutParams};
use crate::switching::report::ClassSplit;
use crate::topology::hosts::LinkClass;
use serde::Serialize;

/// What paper 002's model predicts. Times in cycles, throughputs in flits per host per
/// cycle, rates per link per cycle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeoutPrediction {
    /// Mean latency, creation to delivery (eq. 20).
    pub latency: f64,
    /// Largest offered load with a finite answer.
    pub max_throughput: f64,
    /// Mean transmissions per worm, 1/P_S.
    pub tries: f64,
    /// Timeout probability of a head asking for a link, by class (hs: 0).
    pub p_timeout_by_class: ClassSplit<f64>,
    /// Offered (= accepted) load: γ·E\[L\].
    pub throughput: f64,
    /// Worms per host per cycle.
    pub rate: f64,
    /// Mean host-queue wait, all visits together (eq. 19).
    pub host_wait: f64,
    /// Mean total service of a worm on its host link, E\[b_N\] (eq. 18).
    pub host_service: f64,
    /// Host queue utilisation ρ_N = γE\[b_N\] (mean over hosts).
    pub host_utilization: f64,
    /// Largest ρ_N of a host.
    pub host_utilization_max: f64,
    /// Mean hs-link holding time of one try.
    pub try_service: f64,
    /// Probability that a try succeeds.
    pub p_try_success: f64,
    /// Mean propagation Σπ of a worm's path.
    pub propagation: f64,
    /// Mean links per path.
    pub mean_links: f64,
    /// Zero-load latency E\[L\] + mean Σπ.
    pub zero_load: f64,
    /// Constant delay before a retry (cycles): (tries − 1) of them are in the latency.
    pub retry_delay: f64,
    /// Heads asking per link per cycle (hs: tries).
    pub arrival_rate: ClassSplit<f64>,
    /// Offered load λ·b̄ of a link (may exceed 1).
    pub utilization: ClassSplit<f64>,
    /// Fraction of time a link is held, 1 − φ0 = λ b̄ φ(τ).
    pub busy: ClassSplit<f64>,
    /// Mean holding time of the worms that get a link.
    pub holding_mean: ClassSplit<f64>,
    /// Mean wait of the heads that get a link (no timeout).
    pub wait_mean: ClassSplit<f64>,
    /// Probability that a head finds its link free, φ0.
    pub p_free: ClassSplit<f64>,
    /// Fixed-point steps.
    pub iterations: usize,
    /// Links whose variant-B P_T fell below 0 and was taken as 0.
    pub clamped_links: usize,
    /// Two-moment matching variant (A or B).
    pub variant: Matching,
    /// Denominator of P_T.
    pub denominator: Denominator,
}

fn class_index(c: LinkClass) -> usize {
    match c {
        LinkClass::HostSwitch => 0,
        LinkClass::SwitchSwitch => 1,
        LinkClass::SwitchHost => 2,
    }
}

fn split(v: [f64; 3]) -> ClassSplit<f64> {
    ClassSplit {
        hs: v[0],
        ss: v[1],
        sh: v[2],
    }
}

/// The prediction at a converged fixed point.
pub(super) fn prediction(
    ps: &PathSet,
    p: &TimeoutParams,
    sol: &Solution,
    max_throughput: f64,
) -> TimeoutPrediction {
    let hn = sol.hosts.len() as f64;
    let mean = |f: &dyn Fn(usize) -> f64| (0..sol.hosts.len()).map(f).sum::<f64>() / hn;
    let latency = mean(&|a| {
        let q = &sol.hosts[a];
        q.wait + q.service + sol.propagation[a] + (q.tries - 1.0) * p.retry_delay
    });
    let propagation = mean(&|a| sol.propagation[a]);
    let total_tries: f64 = sol.unit_tries.iter().sum();
    // Class sums: counts, λ, ρ, busy; λ-weighted P_T, φ0; served-weighted b̄, ω̄.
    let mut count = [0.0; 3];
    let mut lam = [0.0; 3];
    let mut rho = [0.0; 3];
    let mut busy = [0.0; 3];
    let mut w_ask = [0.0; 3];
    let mut pt = [0.0; 3];
    let mut free = [0.0; 3];
    let mut w_served = [0.0; 3];
    let mut hold = [0.0; 3];
    let mut wait = [0.0; 3];
    for (l, x) in sol.links.iter().enumerate() {
        let c = class_index(ps.links[l].class);
        count[c] += 1.0;
        let u = x.unit_rate;
        let lambda = p.rate * u;
        let b = x.holding[0];
        lam[c] += lambda;
        rho[c] += lambda * b;
        let (t, f, w, bz) = match x.state {
            Some(s) => (s.p_timeout, s.p_free, s.wait[0], 1.0 - s.p_free),
            None => (0.0, 1.0, 0.0, lambda * b),
        };
        busy[c] += bz;
        w_ask[c] += u;
        pt[c] += u * t;
        free[c] += u * f;
        let served = u * (1.0 - t);
        w_served[c] += served;
        hold[c] += served * b;
        wait[c] += served * w;
    }
    let per = |s: [f64; 3], d: [f64; 3], empty: f64| {
        split([0, 1, 2].map(|c| if d[c] > 0.0 { s[c] / d[c] } else { empty }))
    };
    let l1 = p.length[0];
    TimeoutPrediction {
        latency,
        max_throughput,
        tries: mean(&|a| sol.hosts[a].tries),
        p_timeout_by_class: per(pt, w_ask, 0.0),
        throughput: p.throughput(),
        rate: p.rate,
        host_wait: mean(&|a| sol.hosts[a].wait),
        host_service: mean(&|a| sol.hosts[a].service),
        host_utilization: mean(&|a| sol.hosts[a].utilization),
        host_utilization_max: sol.hosts.iter().map(|q| q.utilization).fold(0.0, f64::max),
        try_service: sol
            .try_service
            .iter()
            .zip(&sol.unit_tries)
            .map(|(b, t)| b[0] * t)
            .sum::<f64>()
            / total_tries,
        p_try_success: hn / total_tries,
        propagation,
        mean_links: ps.mean_links(),
        zero_load: l1 + propagation,
        retry_delay: p.retry_delay,
        arrival_rate: per(lam, count, 0.0),
        utilization: per(rho, count, 0.0),
        busy: per(busy, count, 0.0),
        holding_mean: per(hold, w_served, 0.0),
        wait_mean: per(wait, w_served, 0.0),
        p_free: per(free, w_ask, 1.0),
        iterations: sol.iterations,
        clamped_links: sol.clamped,
        variant: p.matching,
        denominator: p.denominator,
    }
}

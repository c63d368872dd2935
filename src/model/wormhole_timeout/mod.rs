//! Paper 002's model (Hu & Kleinrock, "A Queuing Model for Wormhole Routing with
//! Timeout", ICCCN'95) of wormhole switching with the backward timeout reset on a LAN of
//! hosts and switches: the traffic of every path with timeout feedback (eqs. 1–4), the
//! link holding times from the waits and timeouts further along the path (eqs. 5–8,
//! [`paths`]), every switch output an M/G/1 queue with deterministic reneging and a
//! one-stage fit of its waiting-time measure (eqs. 9–15, [`link`]), iterated to a fixed
//! point, then each host queue an M/G/1 with Bernoulli feedback reduced to Pollaczek–
//! Khinchine (eqs. 16–20, [`host`]), and the largest load with a finite answer.
//!
//! The model has no buffers: a link is held from the moment a worm grabs it until its
//! tail is sent (or the reset frees it), which is the emulator's `release: TailSent` with
//! the smallest buffers. `router.buffer_flits` and `release: TailCredit` are not in it
//! (the paper's §7 "buffer effect" is exactly what it leaves out); the model still answers
//! for such machines.
//!
//! **routemu:** choices the paper leaves open (besides those of [`link`], [`paths`] and
//! [`host`]):
//! - Destinations uniform over the other hosts (spec A3): δ_p = 1/(H − 1) per source; the
//!   path of a pair is the emulator's source route (`HostNetwork::route_port`), retries
//!   keep it (A4). Every host creates worms at `workload.rate` (only hosts create worms).
//! - Worm length: the three raw moments of the emulator's length law (for the exponential,
//!   the rounded law max(1, round(E)), [`LengthDist::raw_moment`]); the paper's continuous
//!   exponential is `exponential_length(mean)`.
//! - Fixed point: unknowns P_T and E\[ω\], E\[ω²\], E\[ω³\] of every switch output, from 0,
//!   each step half way to the map's value (damping 0.5), until no relative change
//!   exceeds 1e-9; at most 20 000 steps. A path whose tries would succeed with probability
//!   below 1e-12 means retries without bound: saturated.
//! - Variant B may give a slightly negative P_T on a link whose holding times are less
//!   variable than exponential (see [`link`]); with the corrected denominator such a P_T
//!   is taken as 0 and counted (`clamped_links`). The printed denominator's values outside
//!   [0, 1] are reported as errors: that is the defect it exists to show.
//! - Class averages: λ, ρ = λb̄ and "busy" (1 − φ0, the fraction of time held) are means
//!   over the class's directed links, as the emulator divides by its links; P_T and φ0 are
//!   weighted by the heads asking (λ), holding times and waits by the heads served
//!   (λ(1 − P_T)), as the emulator counts them. The hs class is the host link: its
//!   arrivals are tries, it never times out and is always found free. (The spec's
//!   reference tables average P_T over the ss links unweighted: where X links carry more
//!   than Y links the two means part, e.g. 0.5351 unweighted against 0.5454 by arrivals
//!   on the 3×3 torus with 4 hosts per switch at 0.4 flits/host/cycle.)
//! - Latency (eq. 20) is averaged over hosts (all create worms at the same rate), the
//!   propagation over each host's paths weighted by δ_p; `retry_delay` D adds
//!   (E\[tries\] − 1)·D (see [`host`]).
//! - Maximum throughput: bisection on the offered load (flits per host per cycle) between
//!   0 and 1 (a host cannot send more than its link carries) for the largest load whose
//!   fixed point converges with every ρ_N < 1, to 1e-4 relative; a fixed point that does
//!   not converge (or, with the printed denominator, leaves [0, 1]) counts as past the
//!   maximum.
//! - The creation process is taken as Poisson whatever `workload.process` says (Bernoulli
//!   creation at these rates is nearly Poisson).

pub mod host;
pub mod link;
pub mod paths;
mod prediction;

use crate::config::{HwConfig, OnReset, PatternConfig, SwitchingConfig};
use crate::model::{rel_change, ModelError};
use crate::topology::hosts::{HostNetwork, LinkClass};
use crate::topology::Topology;
use crate::traffic::length::LengthDist;
use host::{host_queue, HostQueue};
use link::{reneging_link, Denominator, LinkState, Matching};
use paths::{holding_times, PathSet, Raw3};
use prediction::prediction;
pub use prediction::TimeoutPrediction;

/// Largest number of fixed-point steps.
pub const MAX_ITERATIONS: usize = 20_000;
/// Relative change below which the fixed point has converged.
pub const TOLERANCE: f64 = 1e-9;
/// Each step moves this fraction of the way to the map's value.
const DAMPING: f64 = 0.5;
/// A path whose tries succeed less often than this retries without bound.
const MIN_SUCCESS: f64 = 1e-12;

/// Raw moments of a continuous exponential length of mean `mean` (the paper's law):
/// 1!·L, 2!·L², 3!·L³.
pub fn exponential_length(mean: f64) -> Raw3 {
    [mean, 2.0 * mean * mean, 6.0 * mean * mean * mean]
}

/// What paper 002's model needs to know about the machine and its workload.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeoutParams {
    /// The hosts, switches, links and source routes.
    pub net: HostNetwork,
    /// Propagation delay of links the network gives none (`links.latency`), cycles.
    pub default_latency: u64,
    /// γ per host: worms created per host per cycle.
    pub rate: f64,
    /// Raw moments of the worm length (flits).
    pub length: Raw3,
    /// The timeout τ_t (cycles).
    pub timeout: f64,
    /// Constant delay before a timed-out worm rejoins its queue (cycles).
    pub retry_delay: f64,
    /// The two-moment matching of the link waits.
    pub matching: Matching,
    /// The denominator of P_T.
    pub denominator: Denominator,
    /// **routemu** refinement, off in the paper's model: a switch output that every path
    /// reaches over the same input port is never waited for (P_T = 0, no wait). That
    /// input's FIFO hands the output one worm at a time, and the link is free again when
    /// the worm's tail has crossed it, before the next header reaches the FIFO's front.
    /// The paper's Poisson link gives such a link the waits and timeouts of any other
    /// (on the 3×3 torus with one host per switch: every X link).
    pub single_input_links: bool,
}

impl TimeoutParams {
    /// The parameters of a timeout-switched host/switch machine: its network, the
    /// workload's rate and exact length moments, the timeout, the retry delay, and
    /// `links.latency` for links without their own delay; variant B, corrected
    /// denominator. Refused: no timeout, `on_reset: Discard`, destinations other than
    /// uniform.
    pub fn from_config(cfg: &HwConfig) -> Result<Self, ModelError> {
        let bad = |s: &str| Err(ModelError::BadInput(s.into()));
        let SwitchingConfig::Timeout {
            timeout,
            retry_delay,
            on_reset,
            ..
        } = cfg.switching
        else {
            return bad("paper 002's model is for timeout switching");
        };
        let Some(timeout) = timeout else {
            return bad(
                "paper 002's model needs a timeout (switching.timeout is None: plain \
                 wormhole, which the model does not cover)",
            );
        };
        if on_reset == OnReset::Discard {
            return bad(
                "paper 002's model retransmits every timed-out worm (switching.on_reset = \
                 Discard drops them)",
            );
        }
        if cfg.workload.pattern != PatternConfig::Uniform {
            return bad(
                "paper 002's model is written here for destinations uniform over the other hosts",
            );
        }
        let machine = crate::engine::machine::validate(cfg)
            .map_err(|e| ModelError::BadInput(e.to_string()))?;
        let Topology::Hosts(net) = machine.topology else {
            return bad("paper 002's model is for host/switch networks");
        };
        let len = &machine.workload.length;
        Ok(TimeoutParams {
            net,
            default_latency: cfg.links.latency,
            rate: cfg.workload.rate,
            length: length_moments(len),
            timeout: timeout as f64,
            retry_delay: retry_delay as f64,
            matching: Matching::B,
            denominator: Denominator::Corrected,
            single_input_links: false,
        })
    }

    /// Offered load, flits per host per cycle: γ·E\[L\].
    pub fn throughput(&self) -> f64 {
        self.rate * self.length[0]
    }

    /// The same machine at offered load `throughput` (flits per host per cycle).
    pub fn at_throughput(&self, throughput: f64) -> Self {
        TimeoutParams {
            rate: throughput / self.length[0],
            ..self.clone()
        }
    }

    fn check(&self) -> Result<(), ModelError> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !(ok(self.rate) && ok(self.timeout) && ok(self.retry_delay)) {
            return Err(ModelError::BadInput(format!(
                "rate {}, timeout {}, retry delay {}: must be finite and ≥ 0",
                crate::foundation::limits::show(self.rate),
                crate::foundation::limits::show(self.timeout),
                crate::foundation::limits::show(self.retry_delay)
            )));
        }
        let [l1, l2, l3] = self.length;
        if !(l1.is_finite() && l2.is_finite() && l3.is_finite() && l1 > 0.0 && l2 > 0.0 && l3 > 0.0)
        {
            return Err(ModelError::BadInput(format!(
                "worm length moments {:?}: must be finite and > 0",
                self.length
            )));
        }
        Ok(())
    }
}

/// E\[L\], E\[L²\], E\[L³\] of the emulator's length law.
pub fn length_moments(len: &LengthDist) -> Raw3 {
    [1, 2, 3].map(|k| len.raw_moment(k))
}

/// A short name of the model for `p`.
pub fn model_name(p: &TimeoutParams) -> String {
    format!(
        "paper 002 wormhole with timeout {} (no buffers: holding ends when the tail is sent) on \
         the {}, variant {:?}{}",
        p.timeout,
        p.net.describe(),
        p.matching,
        match (p.denominator, p.single_input_links) {
            (Denominator::Corrected, false) => "",
            (Denominator::Corrected, true) => ", single-input links never waited for",
            (Denominator::Printed, _) => ", PRINTED denominator",
        }
    )
}

/// One link at the fixed point.
#[derive(Clone, Copy, Debug, Default)]
struct LinkAt {
    /// Heads asking per unit γ.
    unit_rate: f64,
    /// Raw holding moments of the heads served.
    holding: Raw3,
    /// The M/G/1+D state (None: a host link or an unused link).
    state: Option<LinkState>,
}

/// The converged model.
struct Solution {
    links: Vec<LinkAt>,
    hosts: Vec<HostQueue>,
    try_service: Vec<Raw3>,
    unit_tries: Vec<f64>,
    propagation: Vec<f64>,
    iterations: usize,
    clamped: usize,
}

fn link_name(net: &HostNetwork, ps: &PathSet, l: usize) -> String {
    let x = &ps.links[l];
    format!(
        "{} link of node {} ({})",
        x.class.name(),
        x.node,
        net.port_name(x.node, x.port)
    )
}

/// Eqs. (1)–(8) for given P_T and wait moments: per link the arrival rate per unit γ and
/// the λ-weighted holding moments; per path its tries per unit γ.
fn traffic(
    ps: &PathSet,
    p: &TimeoutParams,
    pt: &[f64],
    wait: &[Raw3],
) -> Result<(Vec<LinkAt>, Vec<f64>), ModelError> {
    let mut links = vec![LinkAt::default(); ps.links.len()];
    let mut path_rate = Vec::with_capacity(ps.paths.len());
    let mut lp = Vec::new();
    let mut lw = Vec::new();
    let mut ld = Vec::new();
    for path in &ps.paths {
        lp.clear();
        lw.clear();
        ld.clear();
        for (i, &l) in path.links.iter().enumerate() {
            lp.push(if i == 0 { 0.0 } else { pt[l] });
            lw.push(if i == 0 { [0.0; 3] } else { wait[l] });
            ld.push(ps.links[l].delay);
        }
        let success: f64 = lp.iter().map(|x| 1.0 - x).product();
        if success.is_nan() || success < MIN_SUCCESS {
            return Err(ModelError::Saturated {
                what: format!(
                    "links on the path from node {} to node {} (a try succeeds with probability {success:.2e}: retries without bound)",
                    ps.hosts[path.source].node, path.destination
                ),
                utilization: f64::INFINITY,
            });
        }
        // λ_p per unit γ (eq. 4's numerator over its denominator).
        let rate = path.share / success;
        path_rate.push(rate);
        let held = holding_times(&lp, &lw, &ld, p.length, p.timeout);
        let mut reach = rate;
        for (i, &l) in path.links.iter().enumerate() {
            if i > 0 {
                reach *= 1.0 - lp[i - 1];
            }
            let (s, f) = held[i];
            let m = s.union(f).moments();
            let x = &mut links[l];
            x.unit_rate += reach;
            for (h, mk) in x.holding.iter_mut().zip(m) {
                *h += reach * mk;
            }
        }
    }
    for x in &mut links {
        if x.unit_rate > 0.0 {
            x.holding = x.holding.map(|h| h / x.unit_rate);
        }
    }
    Ok((links, path_rate))
}

/// The switch outputs' M/G/1+D states for the traffic `links` at rate γ.
fn link_states(
    net: &HostNetwork,
    ps: &PathSet,
    p: &TimeoutParams,
    links: &mut [LinkAt],
) -> Result<usize, ModelError> {
    let mut clamped = 0;
    for (l, x) in links.iter_mut().enumerate() {
        if ps.links[l].class == LinkClass::HostSwitch || x.unit_rate == 0.0 {
            x.state = None;
            continue;
        }
        if p.single_input_links && ps.single_input[l] {
            x.state = Some(LinkState {
                rho: p.rate * x.unit_rate * x.holding[0],
                alpha: 0.0,
                beta: 0.0,
                kappa: 0.0,
                p_free: 1.0,
                p_no_timeout: 1.0,
                p_timeout: 0.0,
                wait: [0.0; 3],
            });
            continue;
        }
        let name = || link_name(net, ps, l);
        let mut st = reneging_link(
            p.rate * x.unit_rate,
            x.holding,
            p.timeout,
            p.matching,
            p.denominator,
        )
        .map_err(|e| match e {
            ModelError::Saturated { what, utilization } => ModelError::Saturated {
                what: format!("{}: {what}", name()),
                utilization,
            },
            e => e,
        })?;
        let pt = st.p_timeout;
        let inside = (0.0..=1.0).contains(&pt);
        match p.denominator {
            Denominator::Corrected if pt < 0.0 => {
                st.p_timeout = 0.0;
                clamped += 1;
            }
            _ if !inside => {
                return Err(ModelError::BadInput(format!(
                    "P_T = {pt:.4} on the {} is outside [0, 1] ({:?} denominator, variant {:?}, \
                     ρ = {:.4})",
                    name(),
                    p.denominator,
                    p.matching,
                    st.rho
                )))
            }
            _ => {}
        }
        x.state = Some(st);
    }
    Ok(clamped)
}

/// The fixed point of eqs. (1)–(15) and the host queues (16)–(19).
fn solve(ps: &PathSet, p: &TimeoutParams) -> Result<Solution, ModelError> {
    p.check()?;
    let n = ps.links.len();
    let mut pt = vec![0.0; n];
    let mut wait = vec![[0.0; 3]; n];
    let mut converged = None;
    for it in 1..=MAX_ITERATIONS {
        let (mut links, _) = traffic(ps, p, &pt, &wait)?;
        link_states(&p.net, ps, p, &mut links)?;
        let mut change: f64 = 0.0;
        for (l, x) in links.iter().enumerate() {
            let (new_pt, new_w) = x.state.map_or((0.0, [0.0; 3]), |s| (s.p_timeout, s.wait));
            let step_pt = pt[l] + DAMPING * (new_pt - pt[l]);
            change = change.max(rel_change(new_pt, pt[l]));
            pt[l] = step_pt;
            for k in 0..3 {
                change = change.max(rel_change(new_w[k], wait[l][k]));
                wait[l][k] += DAMPING * (new_w[k] - wait[l][k]);
            }
        }
        if !change.is_finite() {
            return Err(ModelError::NotConverged { iterations: it });
        }
        if change < TOLERANCE {
            converged = Some(it);
            break;
        }
    }
    let Some(iterations) = converged else {
        return Err(ModelError::NotConverged {
            iterations: MAX_ITERATIONS,
        });
    };
    // The reported state is the map at the converged point.
    let (mut links, path_rate) = traffic(ps, p, &pt, &wait)?;
    let clamped = link_states(&p.net, ps, p, &mut links)?;
    let mut hosts = Vec::with_capacity(ps.hosts.len());
    let mut try_service = Vec::with_capacity(ps.hosts.len());
    let mut unit_tries = Vec::with_capacity(ps.hosts.len());
    let mut propagation = Vec::with_capacity(ps.hosts.len());
    for (a, h) in ps.hosts.iter().enumerate() {
        // Eq. (16): P_S = Σ λ_p P_S,p / Σ λ_p = Σ δ_p / Σ (δ_p / P_S,p).
        let tries: f64 = path_rate[h.paths.clone()].iter().sum();
        let shares: f64 = ps.paths[h.paths.clone()].iter().map(|x| x.share).sum();
        let b = links[h.hs_link].holding;
        let q = host_queue(
            p.rate,
            (b[0], b[1]),
            shares / tries,
            &format!("the host queue of host {} (node {})", a, h.node),
        )?;
        hosts.push(q);
        try_service.push(b);
        unit_tries.push(tries);
        propagation.push(
            ps.paths[h.paths.clone()]
                .iter()
                .map(|x| x.share * x.propagation)
                .sum::<f64>()
                / shares,
        );
    }
    Ok(Solution {
        links,
        hosts,
        try_service,
        unit_tries,
        propagation,
        iterations,
        clamped,
    })
}

/// Whether the model has a finite answer at `p`'s load. The parameters are checked
/// before the search, so any error here is the model's: saturated, not converging, or
/// (printed denominator) a P_T outside [0, 1] — all past the maximum.
fn feasible(ps: &PathSet, p: &TimeoutParams) -> bool {
    solve(ps, p).is_ok()
}

fn max_throughput_on(ps: &PathSet, p: &TimeoutParams) -> Result<f64, ModelError> {
    p.check()?;
    // A host cannot offer more than its link carries: ρ_N ≥ γ·E[L] = the load.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while hi - lo > 1e-4 * lo.max(1e-6) {
        let mid = 0.5 * (lo + hi);
        if feasible(ps, &p.at_throughput(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The largest offered load (flits per host per cycle) at which the fixed point converges
/// with every host queue's ρ_N < 1, by bisection to 1e-4 relative.
pub fn max_throughput(p: &TimeoutParams) -> Result<f64, ModelError> {
    let ps = PathSet::new(&p.net, p.default_latency)?;
    max_throughput_on(&ps, p)
}

/// Paper 002's model of `p`: the fixed point, the host queues and the latency, and the
/// maximum throughput. Past the maximum the answer is `Saturated` (what saturated, and
/// the maximum throughput in its description), never NaN.
pub fn predict(p: &TimeoutParams) -> Result<TimeoutPrediction, ModelError> {
    let ps = PathSet::new(&p.net, p.default_latency)?;
    let sol = match solve(&ps, p) {
        Ok(s) => s,
        Err(ModelError::Saturated { what, utilization }) => {
            let max = max_throughput_on(&ps, p)?;
            return Err(ModelError::Saturated {
                what: format!(
                    "{what} at {:.4} flits/host/cycle (the model's maximum throughput is {max:.4})",
                    p.throughput()
                ),
                utilization,
            });
        }
        Err(e) => return Err(e),
    };
    let max_throughput = max_throughput_on(&ps, p)?;
    Ok(prediction(&ps, p, &sol, max_throughput))
}

#[cfg(test)]
mod tests;

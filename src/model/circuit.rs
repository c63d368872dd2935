//! Paper 000's model of circuit switching on the hypercube, restated in MODELS.md: the
//! routing controller as an M/G/1 queue (Appendix A), link-conflict probabilities from
//! the links held in each phase (Appendix B, Little's law), and the hold strategy's
//! set-up time (§4.1) with the residual holding times of the phase the blocking
//! communication is in; the adaptive strategy's flow analysis (paper 001) and its latency
//! (§4.3). Drop, the torus and the other path form of each strategy are the next steps
//! of the models issue.
//!
//! The parameters come from the same hardware file and workload as the emulator
//! ([`CircuitParams::from_config`]), so the two describe the same machine. Times are in
//! cycles. Where the emulator's links take ℓ > 1 cycles, each hop of the set-up and of
//! the release costs ℓ − 1 cycles more than the papers count (they ignore propagation),
//! and the message is complete when the tail is in as well as the last link released,
//! so that at vanishing load the model's latency is the emulator's zero-load latency
//! exactly: M(D_verify + D_link_conn + ℓ − 1) + D_ack + T_data
//! + max(M(D_rel + ℓ − 1) − (ℓ − 1), Mℓ − 1), which is paper 000's eq. 2 for ℓ = 1.
//!
//! **routemu:** the residual time of a communication found in its ack state is taken
//! from the start of that state (D_ack + T_data + T_rel(M+1)/2), like the set-up
//! sub-states (MODELS.md says "a request is taken to be at the start of its sub-state").

use super::mg1::{pk_wait, Moments};
use super::ModelError;
use crate::config::validate::validate;
use crate::config::{AckDelay, ConflictStrategy, Duplex, HwConfig, SwitchingConfig};
use crate::topology::Topology;
use crate::traffic::length::LengthDist;

/// Relative change of every unknown below which a fixed point has converged.
pub const TOLERANCE: f64 = 1e-9;

/// Iterations after which a fixed point that has not converged is reported as such.
pub const MAX_ITERATIONS: usize = 100_000;

/// What the circuit models need to know about a machine and its workload.
#[derive(Clone, Debug, PartialEq)]
pub struct CircuitParams {
    /// Hypercube dimension d.
    pub dim: u32,
    /// Messages per node per cycle (λ).
    pub rate: f64,
    /// Mean links per path M (uniform destinations: d·2^(d−1)/(2^d − 1)).
    pub mean_path: f64,
    /// Links that carry one circuit each (half duplex d·2^(d−1), full duplex d·2^d).
    pub links: f64,
    /// Verify a link.
    pub d_verify: f64,
    /// Connect a link.
    pub d_conn: f64,
    /// Release a link.
    pub d_rel: f64,
    /// Ack back to the source (PerHop acks: per hop × M).
    pub d_ack: f64,
    /// Extra cycles per hop of a link beyond the first (ℓ − 1).
    pub wire: f64,
    /// Moments of the data-transfer time ⌈L/W⌉.
    pub data: Moments,
    /// The conflict strategy.
    pub strategy: ConflictStrategy,
    /// Back-off of drop and adaptive.
    pub backoff: f64,
}

/// Moments of ⌈L/W⌉ for a length distribution and a link width, exactly as the emulator
/// samples lengths (exponential: rounded, at least one flit).
pub fn data_moments(len: &LengthDist, width: u32) -> Moments {
    let w = width.max(1) as f64;
    let t = |k: f64| (k / w).ceil();
    match *len {
        LengthDist::Constant(l) => Moments::deterministic(t(l as f64)),
        LengthDist::Uniform(a, b) => {
            let n = (b - a) as f64 + 1.0;
            let (mut m, mut s) = (0.0, 0.0);
            for k in a..=b {
                let x = t(k as f64);
                m += x / n;
                s += x * x / n;
            }
            Moments { mean: m, second: s }
        }
        LengthDist::Exponential(mean) => {
            // P(len = 1) = P(X < 1.5); P(len = k) = P(k − ½ ≤ X < k + ½) for k ≥ 2.
            let mu = 1.0 / mean;
            let cdf = |x: f64| 1.0 - (-mu * x).exp();
            let (mut m, mut s) = (t(1.0) * cdf(1.5), t(1.0) * t(1.0) * cdf(1.5));
            let mut k = 2.0;
            loop {
                let p = cdf(k + 0.5) - cdf(k - 0.5);
                let x = t(k);
                m += p * x;
                s += p * x * x;
                if p * x * x < 1e-16 * s && k > mean {
                    break;
                }
                k += 1.0;
            }
            Moments { mean: m, second: s }
        }
    }
}

impl CircuitParams {
    /// The parameters of a circuit-switched hypercube machine and its workload.
    pub fn from_config(cfg: &HwConfig) -> Result<Self, ModelError> {
        let machine = validate(cfg).map_err(|e| ModelError::BadInput(e.to_string()))?;
        let SwitchingConfig::Circuit {
            strategy,
            backoff,
            ack,
            ..
        } = cfg.switching
        else {
            return Err(ModelError::BadInput(
                "the circuit models need a circuit-switched machine".into(),
            ));
        };
        let Topology::Hypercube(h) = &machine.topology else {
            return Err(ModelError::BadInput(
                "this circuit model is for hypercubes (paper 000 §4)".into(),
            ));
        };
        let d = h.dim;
        let p = (1u64 << d) as f64;
        let mean_path = d as f64 * p / 2.0 / (p - 1.0);
        let c = &cfg.router.controller;
        Ok(CircuitParams {
            dim: d,
            rate: cfg.workload.rate,
            mean_path,
            links: match cfg.links.duplex {
                Duplex::Half => d as f64 * p / 2.0,
                Duplex::Full => d as f64 * p,
            },
            d_verify: c.verify as f64,
            d_conn: c.link_conn as f64,
            d_rel: c.release as f64,
            d_ack: match ack {
                AckDelay::Total(a) => a as f64,
                AckDelay::PerHop(a) => a as f64 * mean_path,
            },
            wire: cfg.links.latency as f64 - 1.0,
            data: data_moments(&machine.workload.length, cfg.links.width),
            strategy,
            backoff: backoff as f64,
        })
    }
}

/// What a circuit model predicts (times in cycles).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CircuitPrediction {
    /// Mean message latency: set-up + data + release.
    pub latency: f64,
    /// Mean set-up time, ack included (the papers' T_path-set-up).
    pub setup: f64,
    /// Mean release time M·T_rel.
    pub release: f64,
    /// Probability that a link request finds the link held.
    pub p_conflict: f64,
    /// `p_conflict` split by the holder's phase: [set-up with ack, data, release].
    pub p_conflict_by_phase: [f64; 3],
    /// Mean wait for a held link per request (hold).
    pub link_wait: f64,
    /// Routing-controller arrival rate per node per cycle.
    pub controller_rate: f64,
    /// Its utilisation.
    pub controller_utilization: f64,
    /// Its mean wait (Pollaczek–Khinchine).
    pub controller_wait: f64,
    /// Aborted attempts per message (0 for hold).
    pub aborts: f64,
    /// Iterations the fixed point took.
    pub iterations: usize,
}

/// Predicts the hold strategy of `p` (paper 000 §4.1 with Appendices A and B).
pub fn hold(p: &CircuitParams) -> Result<CircuitPrediction, ModelError> {
    let m = p.mean_path;
    // The sums over the states i = 1..M use the average path rounded (MODELS.md).
    let mi = m.round().max(1.0);
    let tri = mi * (mi + 1.0) / 2.0;
    let nodes = (1u64 << p.dim) as f64;
    let flow = nodes * p.rate;
    let lambda_rc = 2.0 * p.rate * m;
    let hop_setup = p.d_conn + p.wire;
    let (t_data, data2) = (p.data.mean, p.data.second);
    let (mut pc, mut t_lw) = (0.0f64, 0.0f64);
    for it in 1..=MAX_ITERATIONS {
        // Appendix A: the controller serves verify+connect, verify, release and
        // release+connect with probabilities (1−P)/2, P/2, (1−P)/2, P/2.
        let service = Moments::mix(&[
            ((1.0 - pc) / 2.0, p.d_verify + p.d_conn),
            (pc / 2.0, p.d_verify),
            ((1.0 - pc) / 2.0, p.d_rel),
            (pc / 2.0, p.d_rel + p.d_conn),
        ])?;
        let w = pk_wait(lambda_rc, service).map_err(|_| ModelError::Saturated {
            what: "routing controller".into(),
            utilization: lambda_rc * service.mean,
        })?;
        let t_verify = w + p.d_verify;
        let t_rel = w + p.d_rel;
        let hop = t_verify + hop_setup + t_lw;
        let setup = m * hop + p.d_ack;
        // Appendix B: links held per phase (Little's law).
        let held_setup = flow * tri * hop;
        let held_ack = flow * m * p.d_ack;
        let held_data = flow * m * t_data;
        let held_rel = flow * (t_rel + p.wire) * tri;
        let frac = |x: f64| x / p.links;
        let (p_setup, p_data, p_rel) =
            (frac(held_setup + held_ack), frac(held_data), frac(held_rel));
        let new_pc = p_setup + p_data + p_rel;
        if new_pc >= 1.0 || !new_pc.is_finite() {
            return Err(ModelError::Saturated {
                what: "links".into(),
                utilization: new_pc,
            });
        }
        // §4.1.1: residual holding time by the phase of the holder.
        let tail = t_data + t_rel * (m + 1.0) / 2.0;
        let w_rel = {
            let (mut num, mut den) = (0.0, 0.0);
            for k in 1..=mi as u64 {
                let k = k as f64;
                num += k * t_rel * (k + 1.0) / 2.0;
                den += k;
            }
            num / den
        };
        let w_data = data2 / (2.0 * t_data) + t_rel * (m + 1.0) / 2.0;
        let w_setup = {
            let pk = (setup - p.d_ack) / (mi * setup);
            let (mut num, mut den) = (0.0, 0.0);
            for k in 1..=mi as u64 {
                let k = k as f64;
                num += pk * k * ((mi - k) * hop + p.d_ack + tail);
                den += pk * k;
            }
            let pa = p.d_ack / setup;
            num += pa * mi * (p.d_ack + tail);
            den += pa * mi;
            if den > 0.0 {
                num / den
            } else {
                0.0
            }
        };
        let new_lw = p_setup * w_setup + p_data * w_data + p_rel * w_rel;
        let done = rel_change(new_pc, pc) < TOLERANCE && rel_change(new_lw, t_lw) < TOLERANCE;
        pc = new_pc;
        t_lw = new_lw;
        if done || it == MAX_ITERATIONS {
            if !done {
                return Err(ModelError::NotConverged { iterations: it });
            }
            // The end-of-transmission releases link i (D_rel, queued) and crosses it
            // (ℓ − 1 more than the papers count); the tail needs M·ℓ − 1 more cycles
            // after the last flit is sent; the message is complete when both are done.
            let release = (m * (t_rel + p.wire) - p.wire).max(m * (1.0 + p.wire) - 1.0);
            return Ok(CircuitPrediction {
                latency: setup + t_data + release,
                setup,
                release,
                p_conflict: pc,
                p_conflict_by_phase: [p_setup, p_data, p_rel],
                link_wait: t_lw,
                controller_rate: lambda_rc,
                controller_utilization: lambda_rc * service.mean,
                controller_wait: w,
                aborts: 0.0,
                iterations: it,
            });
        }
    }
    Err(ModelError::NotConverged {
        iterations: MAX_ITERATIONS,
    })
}

/// Predicts the adaptive strategy of `p` (paper 000 §4.3, paper 001 §3; MODELS.md
/// "Adaptive") in the distance-weighted form: the flow analysis is solved for every path
/// length h = 1..d with the same P and weighted by C(d,h)/(2^d − 1), so that at vanishing
/// load the set-up is exactly M(D_verify + D_link_conn) + D_ack. The controller serves,
/// per level of a path, one activity of k·D_verify (+ D_link_conn when the k-th candidate
/// is free; only the first check queues) and the releases; the links held in each phase
/// give P again. Back-off holds no link.
pub fn adaptive(p: &CircuitParams) -> Result<CircuitPrediction, ModelError> {
    let d = p.dim as usize;
    let m = p.mean_path;
    let nodes = (1u64 << p.dim) as f64;
    let flow = nodes * p.rate;
    let (t_data, wire) = (p.data.mean, p.wire);
    // Weights of the path lengths under uniform destinations.
    let mut binom = vec![1.0f64; d + 1];
    for h in 1..=d {
        binom[h] = binom[h - 1] * (d + 1 - h) as f64 / h as f64;
    }
    let weight = |h: usize| binom[h] / (nodes - 1.0);
    let mut pc = 0.0f64;
    for it in 1..=MAX_ITERATIONS {
        // Controller activities per message (count, service time) at the current P,
        // walking each path length's levels: level i of an h-hop path has J = h + 1 − i
        // candidates, is entered by CON(i−1) per message, succeeds at the k-th check
        // with probability P^(k−1)(1−P) and fails after J checks with probability P^J.
        let mut acts: Vec<(f64, f64)> = Vec::with_capacity(d * d + 1);
        let (mut first, mut more, mut conn, mut rel, mut aborts) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for h in 1..=d {
            let f = adaptive_flows(pc, h)?;
            let wt = weight(h);
            first += wt * f.n_verify_first;
            more += wt * f.n_verify_more;
            conn += wt * f.n_link_conn;
            rel += wt * f.n_rel;
            aborts += wt * f.n_abort;
            let mut con = 1.0 + f.n_abort;
            for i in 1..=h {
                let mut reach = con;
                let mut next = 0.0;
                for k in 1..=h + 1 - i {
                    let ok = reach * (1.0 - pc);
                    acts.push((wt * ok, k as f64 * p.d_verify + p.d_conn));
                    next += ok;
                    reach *= pc;
                }
                acts.push((wt * reach, (h + 1 - i) as f64 * p.d_verify));
                con = next;
            }
        }
        acts.push((m + rel, p.d_rel));
        let per_message: f64 = acts.iter().map(|&(n, _)| n).sum();
        let lambda_rc = p.rate * per_message;
        let service = Moments::mix(&acts)?;
        let w = pk_wait(lambda_rc, service).map_err(|_| ModelError::Saturated {
            what: "routing controller".into(),
            utilization: lambda_rc * service.mean,
        })?;
        let t_rel = w + p.d_rel;
        let setup = first * (w + p.d_verify)
            + more * p.d_verify
            + conn * (p.d_conn + wire)
            + rel * (t_rel + wire)
            + aborts * p.backoff
            + p.d_ack;
        // Links held during set-up: at level i a flow holds i − 1 links while checked
        // (the first check W + D_verify, further ones D_verify) and connected; an abort at
        // level i releases its i − 1 links one after another.
        let mut held_setup = 0.0;
        for h in 1..=d {
            let f = adaptive_flows(pc, h)?;
            let wt = weight(h);
            let mut con = 1.0 + f.n_abort;
            for i in 1..=h {
                let links = (i - 1) as f64;
                let mut reach = con;
                let mut next = 0.0;
                for k in 1..=h + 1 - i {
                    let check = if k == 1 { w + p.d_verify } else { p.d_verify };
                    held_setup += wt * reach * links * check;
                    let ok = reach * (1.0 - pc);
                    held_setup += wt * ok * links * (p.d_conn + wire);
                    next += ok;
                    reach *= pc;
                }
                held_setup += wt * reach * (t_rel + wire) * links * (links + 1.0) / 2.0;
                con = next;
            }
        }
        let held_setup = flow * held_setup;
        let held_ack = flow * m * p.d_ack;
        let held_data = flow * m * t_data;
        let held_rel = flow * (t_rel + wire) * m * (m + 1.0) / 2.0;
        let frac = |x: f64| x / p.links;
        let parts = [frac(held_setup + held_ack), frac(held_data), frac(held_rel)];
        let new_pc: f64 = parts.iter().sum();
        if new_pc >= 1.0 || !new_pc.is_finite() {
            return Err(ModelError::Saturated {
                what: "links".into(),
                utilization: new_pc,
            });
        }
        let done = rel_change(new_pc, pc) < TOLERANCE;
        pc = new_pc;
        if done {
            let release = (m * (t_rel + wire) - wire).max(m * (1.0 + wire) - 1.0);
            return Ok(CircuitPrediction {
                latency: setup + t_data + release,
                setup,
                release,
                p_conflict: pc,
                p_conflict_by_phase: parts,
                link_wait: 0.0,
                controller_rate: lambda_rc,
                controller_utilization: lambda_rc * service.mean,
                controller_wait: w,
                aborts,
                iterations: it,
            });
        }
    }
    Err(ModelError::NotConverged {
        iterations: MAX_ITERATIONS,
    })
}

/// Visits per message to the states of the adaptive strategy's set-up (paper 001 §3,
/// MODELS.md "Adaptive"), from the flow analysis of its state diagram.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveFlows {
    /// Aborted attempts per message.
    pub n_abort: f64,
    /// First verifies at a node (the ones that queue at the controller).
    pub n_verify_first: f64,
    /// Further verifies at a node (a busy candidate skipped, no re-queueing).
    pub n_verify_more: f64,
    /// Links connected.
    pub n_link_conn: f64,
    /// Links released by aborts.
    pub n_rel: f64,
}

/// N_abort of the adaptive strategy in closed form: 1/Π_{j=1..M}(1 − P^j) − 1
/// (paper 001 eq. 26), for an integer path length `m` and conflict probability `p`.
pub fn adaptive_n_abort(p: f64, m: usize) -> Result<f64, ModelError> {
    if !(0.0..1.0).contains(&p) {
        return Err(ModelError::Saturated {
            what: "links".into(),
            utilization: p,
        });
    }
    let success: f64 = (1..=m).map(|j| 1.0 - p.powi(j as i32)).product();
    Ok(1.0 / success - 1.0)
}

/// The flow analysis of the adaptive set-up for path length `m` and conflict
/// probability `p`: the input flow λ_in = λ(1 + N_abort) is found by iterating
/// "λ_in = λ + the flow that aborts" from λ_in = λ (flows per unit message rate), and
/// the visits follow. At the i-th link there are J_i = M + 1 − i candidates; A(i,j) is
/// the flow that found its j-th candidate busy, C(i,j) the flow that found it free,
/// CON(i) the flow that holds i links.
pub fn adaptive_flows(p: f64, m: usize) -> Result<AdaptiveFlows, ModelError> {
    adaptive_n_abort(p, m)?;
    let mut lambda_in = 1.0;
    for it in 1..=MAX_ITERATIONS {
        let (mut con, mut aborted) = (lambda_in, 0.0);
        let (mut first, mut more, mut conn, mut rel) = (0.0, 0.0, 0.0, 0.0);
        for i in 1..=m {
            let j_max = m + 1 - i;
            // Level i starts with the flow holding i − 1 links.
            first += con;
            let mut busy = con * p; // A(i,1)
            let mut ok = con * (1.0 - p); // C(i,1)
            for _ in 2..=j_max {
                more += busy;
                ok += busy * (1.0 - p); // C(i,j) = A(i,j−1)(1−P)
                busy *= p; // A(i,j) = A(i,j−1)·P
            }
            // A(i, J_i): every candidate busy, abort; releases the i − 1 links held.
            aborted += busy;
            rel += busy * (i - 1) as f64;
            conn += ok;
            con = ok;
        }
        let next = 1.0 + aborted;
        if rel_change(next, lambda_in) < TOLERANCE {
            return Ok(AdaptiveFlows {
                n_abort: next - 1.0,
                n_verify_first: first,
                n_verify_more: more,
                n_link_conn: conn,
                n_rel: rel,
            });
        }
        lambda_in = next;
        if it == MAX_ITERATIONS {
            break;
        }
    }
    Err(ModelError::NotConverged {
        iterations: MAX_ITERATIONS,
    })
}

/// The circuit model of `cfg`'s strategy, with its name.
pub fn predict(cfg: &HwConfig) -> Result<(&'static str, CircuitPrediction), ModelError> {
    let p = CircuitParams::from_config(cfg)?;
    match p.strategy {
        ConflictStrategy::Hold => Ok(("paper 000 §4.1 hold, average path", hold(&p)?)),
        ConflictStrategy::Adaptive => Ok((
            "paper 000 §4.3 / paper 001 adaptive, distance-weighted",
            adaptive(&p)?,
        )),
        ConflictStrategy::Drop => Err(ModelError::BadInput(
            "routemu has no drop model yet (paper 000 §4.2 is the next step of the models \
             issue); hold and adaptive are predicted"
                .into(),
        )),
    }
}

fn rel_change(new: f64, old: f64) -> f64 {
    if new == old {
        0.0
    } else {
        (new - old).abs() / new.abs().max(old.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load::parse_hw;
    use crate::switching::circuit::zero_load_latency;

    fn preset() -> HwConfig {
        parse_hw(
            include_str!("../../hw/circuit-hold.ron"),
            "hw/circuit-hold.ron",
        )
        .unwrap()
    }

    #[test]
    fn at_vanishing_load_hold_predicts_the_emulators_zero_load_latency() {
        for (latency, verify, ack) in [(1, 1, 1), (3, 4, 7)] {
            let mut cfg = preset();
            cfg.workload.rate = 1e-15;
            cfg.links.latency = latency;
            cfg.router.controller.verify = verify;
            if let SwitchingConfig::Circuit { ack: a, .. } = &mut cfg.switching {
                *a = AckDelay::Total(ack);
            }
            let p = CircuitParams::from_config(&cfg).unwrap();
            let pred = hold(&p).unwrap();
            // The emulator's zero-load latency is linear in the hops here, so its mean
            // over uniform destinations is its value at the mean distance M.
            let m = p.mean_path;
            let (a, b) = (
                zero_load_latency(&cfg, 4, 1000) as f64,
                zero_load_latency(&cfg, 5, 1000) as f64,
            );
            let at_m = a + (m - 4.0) * (b - a);
            assert!(
                (pred.latency - at_m).abs() < 1e-6,
                "{} vs {at_m}",
                pred.latency
            );
        }
    }

    #[test]
    fn hold_grows_with_the_rate_below_saturation_and_then_says_saturated() {
        let mut cfg = preset();
        let mut last = 0.0;
        for rate in [0.00002, 0.00005, 0.0001, 0.00013, 0.00016] {
            cfg.workload.rate = rate;
            let pred = hold(&CircuitParams::from_config(&cfg).unwrap())
                .unwrap_or_else(|e| panic!("{rate}: {e}"));
            assert!(pred.latency > last, "{rate}: {} ≤ {last}", pred.latency);
            assert!(pred.p_conflict > 0.0 && pred.p_conflict < 1.0);
            last = pred.latency;
        }
        cfg.workload.rate = 0.01;
        assert!(matches!(
            hold(&CircuitParams::from_config(&cfg).unwrap()),
            Err(ModelError::Saturated { .. })
        ));
    }

    #[test]
    fn hold_at_the_papers_medium_load_is_near_the_emulated_preset() {
        // Emulated (`routemu run hw/circuit-hold.ron`, 5 replications): latency 1341 ± 8
        // cycles. The model is the papers' approximation; issue 5 validates it in full.
        let pred = hold(&CircuitParams::from_config(&preset()).unwrap()).unwrap();
        assert!(
            (pred.latency / 1341.0 - 1.0).abs() < 0.05,
            "{}",
            pred.latency
        );
        assert!(pred.controller_utilization < 0.01);
    }

    #[test]
    fn the_adaptive_n_abort_closed_form_equals_the_flow_analysis() {
        for m in [1usize, 4, 5, 8, 12] {
            for p in [0.0, 0.01, 0.1, 0.3, 0.6] {
                let closed = adaptive_n_abort(p, m).unwrap();
                let f = adaptive_flows(p, m).unwrap();
                assert!(
                    (f.n_abort - closed).abs() <= 1e-7 * closed.max(1e-12),
                    "M={m} P={p}: flow {} closed {closed}",
                    f.n_abort
                );
                // Every message connects M links once, plus the links of its aborted
                // attempts, which it releases again.
                assert!((f.n_link_conn - (m as f64 + f.n_rel)).abs() < 1e-6 * f.n_link_conn);
                if p == 0.0 {
                    assert_eq!((f.n_abort, f.n_verify_more), (0.0, 0.0));
                    assert_eq!(f.n_verify_first, m as f64);
                }
            }
        }
        assert!(adaptive_n_abort(1.0, 4).is_err());
    }

    #[test]
    fn adaptive_at_vanishing_load_is_the_emulators_zero_load_and_grows_with_the_rate() {
        let mut cfg = parse_hw(
            include_str!("../../hw/circuit-adaptive.ron"),
            "hw/circuit-adaptive.ron",
        )
        .unwrap();
        cfg.workload.rate = 1e-15;
        let p = CircuitParams::from_config(&cfg).unwrap();
        let pred = adaptive(&p).unwrap();
        let m = p.mean_path;
        let (a, b) = (
            zero_load_latency(&cfg, 5, 1) as f64,
            zero_load_latency(&cfg, 6, 1) as f64,
        );
        let at_m = a + (m - 5.0) * (b - a) - 1.0 + p.data.mean;
        assert!(
            (pred.latency - at_m).abs() < 1e-6,
            "{} vs {at_m}",
            pred.latency
        );
        let mut last = 0.0;
        for rate in [0.00002, 0.00005, 0.0001, 0.00015] {
            cfg.workload.rate = rate;
            let pred = adaptive(&CircuitParams::from_config(&cfg).unwrap()).unwrap();
            assert!(pred.latency > last && pred.aborts > 0.0);
            last = pred.latency;
        }
    }

    #[test]
    fn adaptive_at_the_papers_medium_load_is_near_the_emulated_preset() {
        // Emulated (`routemu run hw/circuit-adaptive.ron`, 5 replications): latency
        // 1215 ± 5 cycles, 0.13 aborts per message, P_conflict 0.103.
        let cfg = parse_hw(
            include_str!("../../hw/circuit-adaptive.ron"),
            "hw/circuit-adaptive.ron",
        )
        .unwrap();
        let pred = adaptive(&CircuitParams::from_config(&cfg).unwrap()).unwrap();
        assert!(
            (pred.latency / 1215.0 - 1.0).abs() < 0.03,
            "{}",
            pred.latency
        );
        assert!((pred.aborts / 0.13 - 1.0).abs() < 0.15, "{}", pred.aborts);
        assert!(
            (pred.p_conflict / 0.103 - 1.0).abs() < 0.1,
            "{}",
            pred.p_conflict
        );
    }

    #[test]
    fn data_moments_match_the_sampled_lengths() {
        let u = data_moments(&LengthDist::Uniform(100, 1900), 1);
        assert!((u.mean - 1000.0).abs() < 1e-9);
        // Discrete uniform: variance ((n² − 1)/12) with n = 1801.
        assert!((u.variance() - (1801.0f64 * 1801.0 - 1.0) / 12.0).abs() < 1e-3);
        let c = data_moments(&LengthDist::Constant(1000), 3);
        assert_eq!(c, Moments::deterministic(334.0));
        let e = data_moments(&LengthDist::Exponential(1000.0), 1);
        assert!((e.mean - LengthDist::Exponential(1000.0).mean()).abs() < 1e-6);
        // Nearly exponential: E[L²] ≈ 2·mean² (+1/12 from rounding).
        assert!((e.second / (2.0 * 1000.0 * 1000.0) - 1.0).abs() < 1e-3);
    }
}

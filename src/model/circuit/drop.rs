//! The drop strategy (paper 000 §4.2; MODELS.md "Drop"): a request that meets a held
//! link aborts the attempt, the partial path is released hop by hop, the source backs
//! off and retries the same path.
//!
//! Per path of h hops, with P the probability of a first conflict and x = 1 − P, an
//! attempt reaches its i-th link with probability x^(i−1), so A = x^(−h) attempts are
//! needed to get past every first conflict, and N_verify = A Σ x^(i−1),
//! N_link_conn = A Σ x^i, N_rel = A P Σ (i−1) x^(i−1). The links held while setting up
//! are counted exactly: i − 1 while the i-th link is verified, i while it is connected,
//! and an abort at the i-th link releases its i − 1 links one after another.
//!
//! Further conflicts (paper 000 eqs. 10–13; the paper defers their terms to a report we
//! do not have) — **routemu:** the retry of an aborted attempt comes back to the link that
//! aborted it Δ later (the releases of the partial path, the back-off, the set-up back
//! to that link, its verify), and meets the same communication again if that one still
//! holds the link. With R the blocker's residual holding time at the first conflict, the
//! expected number of further aborts is F = Σ_{k≥1} P(R > kΔ) (eq. 12 summed to its
//! "max"). R depends on the blocker's phase (shares of the links held per phase): in the
//! data phase, the residual of a transfer seen at a random moment (length-biased, from
//! the configured length distribution) plus the releases before that link; in set-up
//! and ack, what is left of them plus a whole transfer (not length-biased) plus the
//! releases; in release, uniform over the deterministic release time. Each first abort
//! at the i-th link brings F further attempts that reach the i-th link again and abort
//! there (new first conflicts on the way are neglected). The predicted P_conflict is
//! aborts per verify, as the emulator counts it; `p_further` is its part from further
//! conflicts.

use crate::foundation::mg1::Moments;
use crate::model::circuit::{
    conflict, rel_change, CircuitParams, CircuitPrediction, MAX_ITERATIONS, TOLERANCE,
};
use crate::model::ModelError;

/// The set-up of an h-hop path.
#[derive(Default)]
struct Attempts {
    aborts: f64,
    verify: f64,
    conn: f64,
    rel: f64,
    /// Link-cycles held while setting up, per message.
    held: f64,
    /// Σ over first aborts of the time from the abort to the retry's verify of that link.
    back: f64,
    /// First aborts.
    first: f64,
}

/// The set-up of an h-hop path whose first link conflicts with probability `pcs.0` and
/// later ones with `pcs.1` (first conflicts), with `further` further aborts per first
/// abort.
fn attempts(
    h: usize,
    pcs: (f64, f64),
    further: f64,
    t_verify: f64,
    t_rel: f64,
    p: &CircuitParams,
) -> Attempts {
    let (x1, x2) = (1.0 - pcs.0, 1.0 - pcs.1);
    let a = 1.0 / (x1 * x2.powi(h as i32 - 1));
    let (hop, step) = (p.d_conn + p.wire, t_rel + p.wire);
    let mut r = Attempts::default();
    let mut reach = a;
    // Link-cycles held by an attempt that gets to verify the i-th link.
    let mut climb = 0.0;
    for i in 1..=h {
        let (pc, x) = if i == 1 { (pcs.0, x1) } else { (pcs.1, x2) };
        let before = (i - 1) as f64;
        r.verify += reach;
        r.held += reach * before * t_verify;
        let ok = reach * x;
        r.conn += ok;
        r.held += ok * i as f64 * hop;
        // First aborts at the i-th link, and the further attempts each brings: they
        // climb back to the i-th link (i − 1 verifies and connects), abort there again
        // and release the i − 1 links.
        let ab = reach * pc;
        let fa = ab * further;
        let release = step * before * (before + 1.0) / 2.0;
        r.first += ab;
        r.aborts += ab + fa;
        r.rel += (ab + fa) * before;
        r.verify += fa * i as f64;
        r.conn += fa * before;
        r.held += ab * release + fa * (climb + before * t_verify + release);
        r.back += ab * (before * step + p.backoff + before * (t_verify + hop) + t_verify);
        climb += before * t_verify + i as f64 * hop;
        reach = ok;
    }
    r
}

/// Expected further aborts per first abort (module documentation).
fn further_aborts(
    p: &CircuitParams,
    parts: [f64; 3],
    delta: f64,
    in_setup: f64,
    to_release: f64,
) -> f64 {
    let total: f64 = parts.iter().sum();
    if total <= 0.0 || delta <= 0.0 {
        return 0.0;
    }
    // #{k ≥ 1 : kΔ < u}.
    let count = |u: f64| {
        if u <= 0.0 {
            0.0
        } else {
            (u / delta).ceil() - 1.0
        }
    };
    // Σ_{k≥1} (u − kΔ)⁺.
    let excess = |u: f64| {
        let n = count(u);
        n * u - delta * n * (n + 1.0) / 2.0
    };
    let t_data = p.data.mean;
    let setup = p.data_dist.expect(|t| count(t + in_setup + to_release));
    // P(R > y) = E[(T − y)⁺]/E[T] for y > 0 and 1 for y ≤ 0 (y = kΔ − s).
    let sure = (to_release / delta).floor();
    let data = sure
        + p.data_dist
            .expect(|t| excess(t + to_release - sure * delta))
            / t_data;
    let span = 2.0 * to_release;
    let rel = if span > 0.0 {
        let n = count(span);
        n - delta * n * (n + 1.0) / (2.0 * span)
    } else {
        0.0
    };
    (parts[0] * setup + parts[1] * data + parts[2] * rel) / total
}

/// P(R > y) for the residual holding time R of the communication a request conflicted
/// with, mixed over its phase (shares `parts`; module documentation): paper 000 eq. 13's
/// "communication still in progress after" y.
fn still_holding(
    p: &CircuitParams,
    parts: [f64; 3],
    y: f64,
    in_setup: f64,
    to_release: f64,
) -> f64 {
    let total: f64 = parts.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let setup = p.data_dist.expect(|t| {
        if t + in_setup + to_release > y {
            1.0
        } else {
            0.0
        }
    });
    let data = if y <= to_release {
        1.0
    } else {
        p.data_dist.residual_tail(y - to_release, p.data.mean)
    };
    let span = 2.0 * to_release;
    let rel = if span > 0.0 {
        (1.0 - y / span).max(0.0)
    } else {
        0.0
    };
    (parts[0] * setup + parts[1] * data + parts[2] * rel) / total
}

/// How the drop model counts conflicts with the communication that caused an abort
/// (paper 000 eqs. 10–13).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Further {
    /// routemu's reading (module documentation): only the link that aborted can meet its
    /// blocker again, each first abort brings Σ_k P(R > kΔ) further aborts there.
    #[default]
    Blocker,
    /// Paper 000 eq. 10 as printed: P_conflict = P_first + P_further for every link
    /// request of every attempt (eq. 17 raises it to the M-th power), with
    /// P_further = P(the blocker still holds the link after D_back-off), evaluated for
    /// max = 1 back-off period as the paper does. P_further is a probability *given* a
    /// conflict, so this reading keeps it even where first conflicts vanish: at light
    /// load it alone sets N_abort = (1 − P_further)^(−M) − 1.
    Eq10,
}

/// Predicts the drop strategy of `p` with routemu's reading of further conflicts.
pub fn drop(p: &CircuitParams) -> Result<CircuitPrediction, ModelError> {
    drop_with(p, Further::Blocker)
}

/// Predicts the drop strategy of `p` with the further-conflict reading `reading`.
pub fn drop_with(p: &CircuitParams, reading: Further) -> Result<CircuitPrediction, ModelError> {
    let ws = p.weights();
    let m = p.mean_path;
    let t_data = p.data.mean;
    let d_ack = p.mean_ack();
    let (mut pc, mut further) = (0.0f64, 0.0f64);
    for it in 1..=MAX_ITERATIONS {
        // Per-hop first-conflict probabilities (Blocking), plus eq. 10's P_further on
        // every request in that reading (then `further` is that probability, not a
        // count of aborts at the blocked link).
        let pcs = |h: usize| {
            let (a, b) = p.hop_conflict(h, pc);
            match reading {
                Further::Blocker => (a, b),
                Further::Eq10 => ((a + further).min(1.0), (b + further).min(1.0)),
            }
        };
        let per_abort = match reading {
            Further::Blocker => further,
            Further::Eq10 => 0.0,
        };
        if ws.iter().any(|&(h, _)| pcs(h).0 >= 1.0 || pcs(h).1 >= 1.0) {
            return Err(ModelError::Saturated {
                what: "links (every retry meets its blocker again)".into(),
                utilization: pc + further,
            });
        }
        // The controller's activities per message: verify + connect, a verify that finds
        // the link busy, and releases (aborts' and the path's). Their counts do not
        // depend on the controller's wait.
        let sum = |t_verify: f64, t_rel: f64| {
            let mut s = Attempts::default();
            for &(h, wt) in &ws {
                let a = attempts(h, pcs(h), per_abort, t_verify, t_rel, p);
                s.aborts += wt * a.aborts;
                s.verify += wt * a.verify;
                s.conn += wt * a.conn;
                s.rel += wt * a.rel;
                s.held += wt * a.held;
                s.back += wt * a.back;
                s.first += wt * a.first;
            }
            s
        };
        let c = sum(0.0, 0.0);
        let acts = [
            (c.conn, p.d_verify + p.d_conn),
            (c.aborts, p.d_verify),
            (c.rel + m, p.d_rel),
        ];
        let lambda_rc = p.rate * (c.conn + c.aborts + c.rel + m);
        let service = Moments::mix(&acts)?;
        let w = p.controller_wait(lambda_rc, service)?;
        let (t_verify, t_rel) = (w + p.d_verify, w + p.d_rel);
        let s = sum(t_verify, t_rel);
        let setup = s.verify * t_verify
            + s.conn * (p.d_conn + p.wire)
            + s.rel * (t_rel + p.wire)
            + s.aborts * p.backoff
            + d_ack;
        let (parts, new_pc) = conflict(p, s.held, t_rel)?;
        let to_release = (t_rel + p.wire) * (m + 1.0) / 2.0;
        let in_setup = (setup - d_ack) / 2.0 + d_ack;
        let new_further = match reading {
            Further::Blocker if s.first > 0.0 => {
                let delta = s.back / s.first;
                further_aborts(p, parts, delta, in_setup, to_release)
            }
            Further::Blocker => 0.0,
            // Before any conflict the blocker's phase mix is the links held's; at zero
            // load that is the data phase alone.
            Further::Eq10 if parts.iter().sum::<f64>() > 0.0 => {
                still_holding(p, parts, p.backoff, in_setup, to_release)
            }
            Further::Eq10 => still_holding(p, [0.0, 1.0, 0.0], p.backoff, in_setup, to_release),
        };
        if !new_further.is_finite() {
            return Err(ModelError::Saturated {
                what: "links (retries never get past their blocker)".into(),
                utilization: new_pc,
            });
        }
        let done =
            rel_change(new_pc, pc) < TOLERANCE && rel_change(new_further, further) < TOLERANCE;
        pc = new_pc;
        further = new_further;
        if done {
            let release = p.mean_release(t_rel);
            let p_conflict = s.aborts / s.verify;
            let f = p.mean_factor(pc);
            return Ok(CircuitPrediction {
                latency: setup + t_data + release,
                setup,
                release,
                p_conflict,
                occupancy: pc,
                p_conflict_by_phase: parts.map(|x| x * f),
                p_further: match reading {
                    Further::Blocker => (p_conflict - s.first / s.verify).max(0.0),
                    Further::Eq10 => further,
                },
                link_wait: 0.0,
                controller_rate: lambda_rc,
                controller_utilization: lambda_rc * service.mean,
                controller_wait: w,
                aborts: s.aborts,
                iterations: it,
            });
        }
    }
    Err(ModelError::NotConverged {
        iterations: MAX_ITERATIONS,
    })
}

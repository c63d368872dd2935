//! The adaptive strategy (paper 000 §4.3, paper 001 §3; MODELS.md "Adaptive"): at each
//! node the minimal links still to take are verified one after another (only the first
//! check queues at the controller); when all are busy the partial path is released and
//! the source backs off. The flow analysis of the set-up's state diagram gives the visits
//! per message to every state.

use crate::foundation::mg1::Moments;
use crate::model::circuit::{
    conflict, rel_change, CircuitParams, CircuitPrediction, MAX_ITERATIONS, TOLERANCE,
};
use crate::model::ModelError;

/// Predicts the adaptive strategy of `p`: the flow analysis is solved for every path
/// length h of the path form with the same P and weighted, so that at vanishing load the
/// set-up is exactly M(D_verify + D_link_conn) + D_ack. The controller serves,
/// per level of a path, one activity of k·D_verify (+ D_link_conn when the k-th candidate
/// is free; only the first check queues) and the releases; the links held in each phase
/// give P again. Back-off holds no link.
pub fn adaptive(p: &CircuitParams) -> Result<CircuitPrediction, ModelError> {
    let ws = p.weights();
    let d = ws.iter().map(|&(h, _)| h).max().unwrap_or(1);
    let m = p.mean_path;
    let (t_data, wire) = (p.data.mean, p.wire);
    let d_ack = p.mean_ack();
    let mut pc = 0.0f64;
    for it in 1..=MAX_ITERATIONS {
        // Controller activities per message (count, service time) at the current P,
        // walking each path length's levels: level i of an h-hop path has J = h + 1 − i
        // candidates, is entered by CON(i−1) per message, succeeds at the k-th check
        // with probability P^(k−1)(1−P) and fails after J checks with probability P^J.
        let mut acts: Vec<(f64, f64)> = Vec::with_capacity(d * d * ws.len() + 1);
        let (mut first, mut more, mut conn, mut rel, mut aborts) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(h, wt) in &ws {
            let f = adaptive_flows(pc, h)?;
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
        let w = p.controller_wait(lambda_rc, service)?;
        let t_rel = w + p.d_rel;
        let setup = first * (w + p.d_verify)
            + more * p.d_verify
            + conn * (p.d_conn + wire)
            + rel * (t_rel + wire)
            + aborts * p.backoff
            + d_ack;
        // Links held during set-up: at level i a flow holds i − 1 links while checked
        // (the first check W + D_verify, further ones D_verify) and connected; an abort at
        // level i releases its i − 1 links one after another.
        let mut held_setup = 0.0;
        for &(h, wt) in &ws {
            let f = adaptive_flows(pc, h)?;
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
        let (parts, new_pc) = conflict(p, held_setup, t_rel)?;
        let done = rel_change(new_pc, pc) < TOLERANCE;
        pc = new_pc;
        if done {
            let release = p.mean_release(t_rel);
            return Ok(CircuitPrediction {
                latency: setup + t_data + release,
                setup,
                release,
                p_conflict: pc,
                occupancy: pc,
                p_conflict_by_phase: parts,
                p_further: 0.0,
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

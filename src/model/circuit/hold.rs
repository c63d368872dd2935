//! The hold strategy (paper 000 §4.1 with Appendices A and B; MODELS.md "Hold"): a
//! request that meets a held link waits for it, and the wait is the residual holding
//! time of the phase the holder is in.
//!
//! A request meets a held link with the probability of its hop (`Blocking`, module
//! documentation of [`super`]): U for the first link of a path, less for the later ones
//! with the path-conditioned reading. The residual time of the holder does not depend on
//! which hop asks, so the wait of an h-hop path is (Σ over its hops of P_i/U)·Σ_x U^x W_x.

use crate::foundation::mg1::Moments;
use crate::model::circuit::{
    conflict, rel_change, CircuitParams, CircuitPrediction, MAX_ITERATIONS, TOLERANCE,
};
use crate::model::ModelError;

/// Predicts the hold strategy of `p`.
pub fn hold(p: &CircuitParams) -> Result<CircuitPrediction, ModelError> {
    let ws = p.weights();
    let m = p.mean_path;
    let lambda_rc = 2.0 * p.rate * m;
    let hop_setup = p.d_conn + p.wire;
    let (t_data, data2) = (p.data.mean, p.data.second);
    let d_ack = p.mean_ack();
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
        let w = p.controller_wait(lambda_rc, service)?;
        let t_verify = w + p.d_verify;
        let t_rel = w + p.d_rel;
        // The mean hop of an h-hop path: its requests' conflict probabilities over U
        // (h of them in the papers' reading) times the wait per conflict-weighted hop.
        let hop_of =
            |h: usize| t_verify + hop_setup + t_lw * p.hop_factor_sum(h, pc) / h.max(1) as f64;
        let setup = ws
            .iter()
            .map(|&(h, w)| w * h as f64 * hop_of(h))
            .sum::<f64>()
            + d_ack;
        // Appendix B: links held per phase (Little's law); a path of h hops holds i links
        // in its i-th set-up state and while releasing.
        let held_setup: f64 = ws
            .iter()
            .map(|&(h, w)| w * (h * (h + 1)) as f64 / 2.0 * hop_of(h))
            .sum();
        let (parts, new_pc) = conflict(p, held_setup, t_rel)?;
        // §4.1.1: residual holding time by the phase of the holder, each holder weighted
        // by the links it holds (a request meets a link, not a communication).
        let tail = |h: f64| t_data + t_rel * (h + 1.0) / 2.0;
        let (mut rel_num, mut rel_den) = (0.0, 0.0);
        let (mut data_num, mut set_num, mut set_den) = (0.0, 0.0, 0.0);
        for &(h, wt) in &ws {
            let hf = h as f64;
            for k in 1..=h {
                let k = k as f64;
                rel_num += wt * k * t_rel * (k + 1.0) / 2.0;
                rel_den += wt * k;
            }
            data_num += wt * hf * t_rel * (hf + 1.0) / 2.0;
            // Set-up sub-states k = 1..h (k links held) and the ack state (h links),
            // with the time share the holder spends in each.
            let ack = p.d_ack(h);
            let hop = hop_of(h);
            let s_h = hf * hop + ack;
            let pk = (s_h - ack) / (hf * s_h);
            for k in 1..=h {
                let k = k as f64;
                set_num += wt * s_h * pk * k * ((hf - k) * hop + ack + tail(hf));
                set_den += wt * s_h * pk * k;
            }
            let pa = ack / s_h;
            set_num += wt * s_h * pa * hf * (ack + tail(hf));
            set_den += wt * s_h * pa * hf;
        }
        let w_rel = rel_num / rel_den;
        let w_data = data2 / (2.0 * t_data) + data_num / m;
        let w_setup = if set_den > 0.0 {
            set_num / set_den
        } else {
            0.0
        };
        // The wait per request at U (a request that sees the time-average occupancy);
        // `hop_of` scales it by each path's hops.
        let new_lw = parts[0] * w_setup + parts[1] * w_data + parts[2] * w_rel;
        let done = rel_change(new_pc, pc) < TOLERANCE && rel_change(new_lw, t_lw) < TOLERANCE;
        pc = new_pc;
        t_lw = new_lw;
        if done {
            let release = p.mean_release(t_rel);
            // Per request, as the emulator counts them.
            let f = p.mean_factor(pc);
            return Ok(CircuitPrediction {
                latency: setup + t_data + release,
                setup,
                release,
                p_conflict: pc * f,
                occupancy: pc,
                p_conflict_by_phase: parts.map(|x| x * f),
                p_further: 0.0,
                link_wait: t_lw * f,
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

//! Matrix-free successive over-relaxation (SOR; Gauss–Seidel for ω = 1) on the global
//! balance equations of Q̂.
//!
//! Nothing is stored but the state list, π and a table of the transit tuples (their
//! first ranks, radices and neighbouring tuples): the flow into a state is computed on
//! the fly. In rank order the states of one transit tuple (X_ab, X_ad, X_cb, X_cd) form a
//! dense 4-d box over (X_a, X_c, X_b, X_d), so every predecessor's rank is its tuple's
//! first rank plus a mixed-radix offset that moves in step with the state's own — the
//! sweep ([`Sor::solve`]) walks the boxes with running offsets and never calls the
//! ranking. At m = 10 (2 774 200 states) memory is about 8 bytes a state for the list and
//! 8 for π, 45 MB.
//!
//! **routemu:** Q̂ is invariant under the top↔bottom swap ([`mirror`](crate::model::deflection_ms::chain::mirror)) and so is its
//! stationary distribution; a sweep visits one state of each mirror pair and writes the
//! new value to both, which is SOR on the lumped chain and halves the work.
//!
//! **routemu:** plain Gauss–Seidel contracts the error by only about 0.8 to 0.9 a sweep
//! here (customers leave at rate μ while a state's total rate q is several μ, so a sweep
//! moves each balance equation only a fraction of the way through the chain's slowest
//! relaxation, that of the class populations). SOR with ω = 2/(1 + √(1 − ρ)), the optimum
//! of the classical theory for a Gauss–Seidel rate ρ, brings it to about 0.5. ρ is
//! measured once, by the first [`TUNING_SWEEPS`] sweeps of the first solve, run at ω = 1
//! whatever the tolerance; ω is moved half-way back to 1 whenever the residual grows for
//! three sweeps running (above rounding level).

use crate::model::deflection_ms::chain::{for_each_predecessor, Rates, State, StateSpace};

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepReport {
    /// Sweeps done.
    pub sweeps: usize,
    /// The residual estimate of the last sweep (see [`Sor::solve`]).
    pub residual: f64,
    /// The relaxation factor used last.
    pub omega: f64,
}

/// The flow into `x` by the generic [`for_each_predecessor`]: the reference the fast
/// sweep is tested against.
pub fn inflow_generic(space: &StateSpace, pi: &[f64], x: &State, r: &Rates) -> f64 {
    let mut s = 0.0;
    for_each_predecessor(x, space.m(), r, |y, rate| s += pi[space.rank(&y)] * rate);
    s
}

/// One transit tuple's box of states.
#[derive(Clone, Debug)]
struct Block {
    /// First rank.
    off: usize,
    /// \[X_ab, X_ad, X_cb, X_cd\].
    t: [usize; 4],
    /// Radices of X_a, X_c, X_b, X_d (m + 1 − the transit customers of the group).
    ra: usize,
    rc: usize,
    rb: usize,
    rd: usize,
    /// First rank of the tuple with one transit customer less (index as `t`), if any.
    minus: [Option<usize>; 4],
    /// First rank of the tuple with one transit customer more, if any.
    plus: [Option<usize>; 4],
    /// Index (in the block list) of the mirror tuple (X_cd, X_cb, X_ad, X_ab).
    mirror: usize,
}

/// Sweeps done at ω = 1 to measure the Gauss–Seidel rate before choosing ω.
pub const TUNING_SWEEPS: usize = 16;

/// Largest relaxation factor the tuning chooses.
const MAX_OMEGA: f64 = 1.8;

/// Residuals below this are rounding noise: they neither trigger the back-off of ω nor
/// serve for the tuning.
const NOISE: f64 = 1e-14;

/// A SOR solver for one state space: its table of transit tuples and its relaxation
/// factor, kept from solve to solve.
#[derive(Clone, Debug)]
pub struct Sor {
    blocks: Vec<Block>,
    omega: f64,
    tuned: bool,
}

impl Sor {
    /// A solver for `space`, at ω = 1 until tuned.
    pub fn new(space: &StateSpace) -> Self {
        let m = space.m() as usize;
        let mut tuples: Vec<([usize; 4], usize)> = Vec::new();
        let mut seen = 0;
        while seen < space.len() {
            let x = space.states()[seen];
            let t = [x[4], x[5], x[6], x[7]].map(|v| v as usize);
            tuples.push((t, seen));
            let [ab, ad, cb, cd] = t;
            seen += (m + 1 - ab - ad) * (m + 1 - cb - cd) * (m + 1 - ab - cb) * (m + 1 - ad - cd);
        }
        let index_of = |t: [usize; 4]| tuples.iter().position(|&(u, _)| u == t);
        let offset = |t: [usize; 4], i: usize, delta: isize| {
            let mut u = t;
            let v = u[i] as isize + delta;
            if v < 0 {
                return None;
            }
            u[i] = v as usize;
            space.tuple_offset(u.map(|v| v as u32))
        };
        let blocks = tuples
            .iter()
            .map(|&(t, off)| {
                let [ab, ad, cb, cd] = t;
                Block {
                    off,
                    t,
                    ra: m + 1 - ab - ad,
                    rc: m + 1 - cb - cd,
                    rb: m + 1 - ab - cb,
                    rd: m + 1 - ad - cd,
                    minus: [0, 1, 2, 3].map(|i| offset(t, i, -1)),
                    plus: [0, 1, 2, 3].map(|i| offset(t, i, 1)),
                    mirror: index_of([cd, cb, ad, ab]).expect("the mirror of a tuple is a tuple"),
                }
            })
            .collect();
        Sor {
            blocks,
            omega: 1.0,
            tuned: false,
        }
    }

    /// The relaxation factor in use.
    pub fn omega(&self) -> f64 {
        self.omega
    }

    /// Fixes ω (and skips the automatic tuning).
    pub fn set_omega(&mut self, omega: f64) {
        self.omega = omega;
        self.tuned = true;
    }

    /// Sweeps from `pi` (a positive, mirror-symmetric vector; a previous solution is the
    /// best start) until the residual estimate is below `tol` or `max_sweeps` sweeps are
    /// done; π is renormalised after every sweep.
    ///
    /// The residual estimate of a sweep is Σ_x |π_x^GS − π_x^old| q(x) / Σ_x π_x q(x),
    /// π_x^GS the Gauss–Seidel value: the imbalance of each equation just before it is
    /// visited, in the units of [`crate::model::deflection_ms::chain::residual`].
    pub fn solve(
        &mut self,
        space: &StateSpace,
        pi: &mut [f64],
        r: &Rates,
        tol: f64,
        max_sweeps: usize,
    ) -> SweepReport {
        let mut residual = f64::INFINITY;
        let mut history: Vec<f64> = Vec::new();
        let mut grew = 0;
        let mut sweeps = 0;
        while sweeps < max_sweeps {
            sweeps += 1;
            let omega = if self.tuned { self.omega } else { 1.0 };
            let (change, flow, sum) = self.sweep(space.m() as usize, pi, r, omega);
            let scale = 1.0 / sum;
            for v in pi.iter_mut() {
                *v *= scale;
            }
            let last = residual;
            residual = if flow > 0.0 { change / flow } else { 0.0 };
            if !self.tuned {
                history.push(residual);
                if history.len() == TUNING_SWEEPS {
                    // Past the start-up transient, the mean ratio over the second half.
                    let h = TUNING_SWEEPS / 2;
                    let (a, b) = (history[h - 1], history[TUNING_SWEEPS - 1]);
                    let rho = if a > NOISE && b > NOISE {
                        (b / a).powf(1.0 / h as f64)
                    } else {
                        0.0
                    };
                    let rho = rho.clamp(0.0, 0.99);
                    self.omega = (2.0 / (1.0 + (1.0 - rho).sqrt())).min(MAX_OMEGA);
                    self.tuned = true;
                }
                continue;
            }
            if residual < tol {
                break;
            }
            if residual > last && residual > NOISE {
                grew += 1;
                if grew >= 3 && self.omega > 1.0 {
                    self.omega = 1.0 + (self.omega - 1.0) / 2.0;
                    grew = 0;
                }
            } else {
                grew = 0;
            }
        }
        SweepReport {
            sweeps,
            residual,
            omega: self.omega,
        }
    }

    /// One SOR sweep over the mirror representatives in rank order; returns (Σ |Gauss–
    /// Seidel change|·q, Σ π q, Σ π) over all states.
    fn sweep(&self, m: usize, pi: &mut [f64], r: &Rates, omega: f64) -> (f64, f64, f64) {
        let (l1, l2, l3, mu) = (r.originating, r.transit, r.terminating, r.mu);
        let fast = mu + r.epsilon;
        let th = r.theta;
        let (mut change, mut flow, mut sum) = (0.0, 0.0, 0.0);
        for (bi, blk) in self.blocks.iter().enumerate() {
            if blk.mirror < bi {
                continue;
            }
            let self_mirror = blk.mirror == bi;
            let moff = self.blocks[blk.mirror].off;
            let [ab, ad, cb, cd] = blk.t;
            let (ra, rc, rb, rd) = (blk.ra, blk.rc, blk.rb, blk.rd);
            let (sb, sc) = (rd, rb * rd);
            let sa = rc * sc;
            // Transit arrivals: a customer reaches output b from a (prefers b, or prefers d
            // and finds d full of transit customers) … as in `for_each_predecessor`.
            let b_full_transit = ab + cb == m;
            let d_full_transit = ad + cd == m;
            let w_ab = l2 * (th + if d_full_transit { 1.0 - th } else { 0.0 });
            let w_ad = l2 * ((1.0 - th) + if b_full_transit { th } else { 0.0 });
            let w_cb = l2 * ((1.0 - th) + if d_full_transit { th } else { 0.0 });
            let w_cd = l2 * (th + if b_full_transit { 1.0 - th } else { 0.0 });
            let transit_out = fast * (ab + ad + cb + cd) as f64;
            let dep = [ab, ad, cb, cd].map(|v| (v + 1) as f64 * fast);
            for a in 0..ra {
                let a_room = a + 1 < ra;
                for c in 0..rc {
                    let c_room = c + 1 < rc;
                    for b in 0..rb {
                        let b_room = b + 1 < rb;
                        let b_full = !b_room;
                        let row = blk.off + ((a * rc + c) * rb + b) * rd;
                        // Row starts (d = 0) of the predecessors in the neighbouring tuples.
                        let dep_ab = blk.plus[0]
                            .filter(|_| a_room && b_room)
                            .map(|o| o + ((a * rc + c) * (rb - 1) + b) * rd);
                        let dep_ad = blk.plus[1]
                            .filter(|_| a_room)
                            .map(|o| o + ((a * rc + c) * rb + b) * (rd - 1));
                        let dep_cb = blk.plus[2]
                            .filter(|_| c_room && b_room)
                            .map(|o| o + ((a * (rc - 1) + c) * (rb - 1) + b) * rd);
                        let dep_cd = blk.plus[3]
                            .filter(|_| c_room)
                            .map(|o| o + ((a * (rc - 1) + c) * rb + b) * (rd - 1));
                        let arr_ab = blk.minus[0].map(|o| o + ((a * rc + c) * (rb + 1) + b) * rd);
                        let arr_ad = blk.minus[1].map(|o| o + ((a * rc + c) * rb + b) * (rd + 1));
                        let arr_cb =
                            blk.minus[2].map(|o| o + ((a * (rc + 1) + c) * (rb + 1) + b) * rd);
                        let arr_cd =
                            blk.minus[3].map(|o| o + ((a * (rc + 1) + c) * rb + b) * (rd + 1));
                        let fixed_out = (if b_room { l1 } else { 0.0 })
                            + (if a_room { l2 + l3 } else { 0.0 })
                            + (if c_room { l2 + l3 } else { 0.0 })
                            + mu * b as f64
                            + fast * (a + c) as f64
                            + transit_out;
                        for d in 0..rd {
                            let j = row + d;
                            let k = if self_mirror {
                                let k = moff + ((c * ra + a) * rd + d) * rb + b;
                                if k < j {
                                    continue;
                                }
                                k
                            } else {
                                moff + ((c * ra + a) * rd + d) * rb + b
                            };
                            let d_room = d + 1 < rd;
                            let q = fixed_out + (if d_room { l1 } else { 0.0 }) + mu * d as f64;
                            let mut s = 0.0;
                            if b > 0 {
                                s += pi[j - sb] * l1;
                            }
                            if d > 0 {
                                s += pi[j - 1] * l1;
                            }
                            if a > 0 {
                                s += pi[j - sa] * l3;
                            }
                            if c > 0 {
                                s += pi[j - sc] * l3;
                            }
                            if a_room {
                                s += pi[j + sa] * (a + 1) as f64 * fast;
                            }
                            if c_room {
                                s += pi[j + sc] * (c + 1) as f64 * fast;
                            }
                            if b_room {
                                s += pi[j + sb] * (b + 1) as f64 * mu;
                            }
                            if d_room {
                                s += pi[j + 1] * (d + 1) as f64 * mu;
                            }
                            if let Some(o) = dep_ab {
                                s += pi[o + d] * dep[0];
                            }
                            if let Some(o) = dep_ad.filter(|_| d_room) {
                                s += pi[o + d] * dep[1];
                            }
                            if let Some(o) = dep_cb {
                                s += pi[o + d] * dep[2];
                            }
                            if let Some(o) = dep_cd.filter(|_| d_room) {
                                s += pi[o + d] * dep[3];
                            }
                            // Transit arrivals, from a free server or by preemption (the
                            // source then held one more originating customer on a full
                            // output).
                            if let Some(o) = arr_ab {
                                s += transit(pi, o + d, b_full.then_some(rd)) * w_ab;
                            }
                            if let Some(o) = arr_ad {
                                s += transit(pi, o + d, (!d_room).then_some(1)) * w_ad;
                            }
                            if let Some(o) = arr_cb {
                                s += transit(pi, o + d, b_full.then_some(rd)) * w_cb;
                            }
                            if let Some(o) = arr_cd {
                                s += transit(pi, o + d, (!d_room).then_some(1)) * w_cd;
                            }
                            let old = pi[j];
                            let gs = if q > 0.0 { s / q } else { old };
                            let new = old + omega * (gs - old);
                            let w = if j == k { 1.0 } else { 2.0 };
                            change += w * (gs - old).abs() * q;
                            flow += w * new * q;
                            sum += w * new;
                            pi[j] = new;
                            pi[k] = new;
                        }
                    }
                }
            }
        }
        (change, flow, sum)
    }
}

/// The probability weight of a transit arrival from the state at `at`: the state itself
/// (a free server), plus, when the output is full, the state `preempt` further on (the
/// source then held one more originating customer, which the arrival preempts).
#[inline]
fn transit(pi: &[f64], at: usize, preempt: Option<usize>) -> f64 {
    let mut f = pi[at];
    if let Some(k) = preempt {
        f += pi[at + k];
    }
    f
}

#[cfg(test)]
mod tests {
    use super::super::chain::{mirror, outflow};
    use super::*;

    fn rates() -> Rates {
        Rates {
            originating: 0.7,
            transit: 1.9,
            terminating: 0.45,
            epsilon: 0.3,
            mu: 1.0,
            theta: 0.55,
        }
    }

    #[test]
    fn a_sweep_is_gauss_seidel_over_the_generic_predecessors() {
        // One Gauss–Seidel sweep by the block walk and by the generic predecessor list,
        // visiting the same states in the same order, must agree state by state.
        let r = rates();
        for m in 1..=4 {
            let space = StateSpace::new(m).unwrap();
            let n = space.len();
            // Mirror-symmetric but otherwise irregular, so that a wrong rank shows.
            let mut start = vec![0.0; n];
            for (j, x) in space.states().iter().enumerate() {
                let k = space.rank(&mirror(x));
                let v = 1.0 + ((j.min(k) as f64) * 0.618).fract();
                start[j] = v;
            }
            let mut fast = start.clone();
            let sor = Sor::new(&space);
            sor.sweep(m as usize, &mut fast, &r, 1.0);
            let mut slow = start;
            for (j, x) in space.states().iter().enumerate() {
                let k = space.rank(&mirror(x));
                if k < j {
                    continue;
                }
                let v = inflow_generic(&space, &slow, x, &r) / outflow(x, m, &r);
                slow[j] = v;
                slow[k] = v;
            }
            for j in 0..n {
                assert!(
                    (fast[j] - slow[j]).abs() <= 1e-13 * slow[j],
                    "m={m} state {:?}: {} vs {}",
                    space.states()[j],
                    fast[j],
                    slow[j]
                );
            }
        }
    }
}

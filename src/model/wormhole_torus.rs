//! Paper 004's model of minimal fully adaptive wormhole routing on a k×k bidirectional
//! torus (equations 1–46): the flows of the "average message" (K = k/4 hops in each
//! dimension, one quadrant carrying a quarter of every node's messages: rate 1/τ = λ/4)
//! split at every node by the bifurcation rule (Theorem 1), each channel an M/G/1 queue
//! with several classes (eq. 18) giving the waits W_WE, W_NE, W_NS, W_WS, the residual
//! transmission times by a backward analysis (eqs. 32–42), the contention probabilities
//! p_X, p_Y (eqs. 43–44), and the latency (eqs. 45–46), iterated to a fixed point.
//!
//! Choices the printed text leaves open or garbles (**routemu:**):
//! - Time units: the paper's "+1" per hop is the emulator's zero-load cost of a hop,
//!   t_hop, and its data trail T_DT = L/B is the zero-load latency of a message that
//!   travels no hop (⌈L/W⌉ plus the ejection and router overheads), so that at vanishing
//!   load the model equals the emulator's closed form (`switching::zero_load::
//!   wormhole`). A link's utilisation time is T − (remaining hops)·t_hop − the
//!   overheads, ⌈L/W⌉ at zero load, as the paper's T − (2K − i − j + 2).
//! - Its variance (eq. 18 needs σ²): the data transfer's variance plus the square of the
//!   waiting part T̄ − ⌈L/W⌉ (exponential, independent, as §4.2.2 assumes).
//! - The length law is an input: the data transfer's mean and variance come from the
//!   workload's [`LengthDist`] ([`data_moments`]: constant 12 flits has variance 0,
//!   exponential mean 12 about 144). The paper's own model numbers behave as if lengths
//!   were exponential: with them and the blocked wait below, the average form gives 23.6
//!   and 28.0 cycles at k = 16, 0.005 and 0.007 messages/node/cycle, where issue 14 quotes
//!   the paper's model at about 23.5 and 29 (Tables 1–2 are withheld from our copy).
//! - The blocked wait (eqs. 35, 39, 46, the open point that decides the growth with load
//!   and the knee): a header that finds both channels busy waits W/ρ, the M/G/1 wait of an
//!   arrival that finds the channel busy ([`BlockedWait::Conditional`], default); the
//!   printed p_X·p_Y·W with W the mean over all arrivals counts the busy probability twice
//!   and grows far too slowly ([`BlockedWait::Unconditional`], kept for comparison).
//!   The holding time of a channel includes every wait its header meets downstream
//!   (T̄ = T − remaining hops, eqs. 28–31), so its mean and variance, and the knee, grow
//!   with k.
//! - Eq. 27's second sum is printed as f^Y F^Y (S^X)²; routemu uses the mirror image of
//!   eq. 25, f^Y F^X_{i,j} (S^Y_{i+1,j})². Eq. 24's β term uses T̄_K like eq. 23.
//! - Eqs. 35 and 39, both channels busy: the message waits for the one with the smaller
//!   mean wait (the paper's r and s), each wait paired with its own channel's residual
//!   time (eq. 39 prints the pairs crossed).
//! - Path forms: `Average` is the paper's latency, α T^α(K, K) + β^X(…) + β^Y(…) with
//!   α = (k−1)/(k+1); `Weighted` keeps the paper's waits and contention probabilities but
//!   takes the latency over every destination offset (a, b) of the torus, running the
//!   backward analysis on an a×b diagram for each, which makes the zero-load latency exact.
//!   The `Average` form is not exact at zero load: the paper's average message travels
//!   k/4 hops per dimension, 2K·k/(k+1) hops in all, where uniform destinations other
//!   than the source travel (k/2)·k/(k − 1) on average (even k).
//! - The emulator's virtual channels (paper 004 §3: the model has none) and controllers
//!   are not modelled; the paper expects the model to anticipate saturation.

// The loops follow the paper's 1-based channel indices, which is what makes them checkable
// against the printed equations.
#![allow(clippy::needless_range_loop)]

use crate::config::{HwConfig, PatternConfig, Routing, SwitchingConfig, TopologyConfig};
use crate::engine::machine::validate;
use crate::model::circuit::{PathForm, MAX_ITERATIONS, TOLERANCE};
use crate::model::{rel_change, ModelError};
use crate::traffic::length::LengthDist;
use serde::Serialize;

/// What paper 004's model needs to know about the machine and its workload.
#[derive(Clone, Debug, PartialEq)]
pub struct WormholeParams {
    /// Nodes per dimension k (a multiple of 4).
    pub k: u32,
    /// Messages per node per cycle.
    pub rate: f64,
    /// Zero-load cost of one hop (cycles).
    pub t_hop: f64,
    /// Zero-load latency of a message that travels no hop: the data trail T_DT.
    pub trail: f64,
    /// Mean and variance of the data transfer ⌈L/W⌉.
    pub data_mean: f64,
    /// Its variance.
    pub data_var: f64,
    /// The message length law the two moments come from (the workload's).
    pub length: LengthDist,
    /// DMA engines per node (`router.dma`, one per dimension by default): how many
    /// messages a node injects, and ejects, at once. Paper 004's model has no source queue
    /// and ignores it; the dimension-order model queues for them (M/G/c).
    pub dma: u32,
    /// The routing controller's time per header (`router.controller.route`, cycles).
    pub route: f64,
}

/// Mean and variance of the data transfer ⌈L/W⌉ (cycles) for lengths drawn from `length`
/// over links `width` flits wide. Constant and uniform laws are summed exactly; the
/// exponential takes the exact moments of the emulator's rounded law
/// ([`LengthDist::raw_moment`]) divided by W, exact for W = 1 and ignoring the rounding up
/// of the last partial flit group otherwise.
pub fn data_moments(length: &LengthDist, width: u32) -> (f64, f64) {
    let w = width.max(1) as f64;
    let t = |l: f64| (l / w).ceil();
    match *length {
        LengthDist::Constant(l) => (t(l as f64), 0.0),
        LengthDist::Uniform(a, b) => {
            let n = (b - a) as f64 + 1.0;
            let (mut m, mut s) = (0.0, 0.0);
            for l in a..=b {
                m += t(l as f64) / n;
                s += t(l as f64).powi(2) / n;
            }
            (m, (s - m * m).max(0.0))
        }
        LengthDist::Mixed(ref pairs) => {
            let m: f64 = pairs.iter().map(|&(l, p)| p * t(l as f64)).sum();
            let s: f64 = pairs.iter().map(|&(l, p)| p * t(l as f64).powi(2)).sum();
            (m, (s - m * m).max(0.0))
        }
        LengthDist::Exponential(_) => {
            let m = length.raw_moment(1) / w;
            (m, (length.raw_moment(2) / (w * w) - m * m).max(0.0))
        }
    }
}

impl WormholeParams {
    /// The parameters of a wormhole k×k torus with minimal adaptive routing.
    pub fn from_config(cfg: &HwConfig) -> Result<Self, ModelError> {
        match cfg.switching {
            SwitchingConfig::Wormhole {
                routing: Routing::Adaptive,
                ..
            } => Self::torus(cfg, 4),
            _ => Err(ModelError::BadInput(
                "paper 004's model is for minimal fully adaptive wormhole routing".into(),
            )),
        }
    }

    /// The parameters of any wormhole k×k bidirectional torus with uniform traffic, k a
    /// multiple of `multiple` (the routing is the caller's business).
    pub(crate) fn torus(cfg: &HwConfig, multiple: u32) -> Result<Self, ModelError> {
        let machine = validate(cfg).map_err(|e| ModelError::BadInput(e.to_string()))?;
        // Name the model that refuses: the adaptive one (k a multiple of 4) or the
        // dimension-order one.
        let who = if multiple == 4 {
            "paper 004's adaptive wormhole model (model::wormhole_torus)"
        } else {
            "the dimension-order wormhole torus model (model::wormhole_torus_dor)"
        };
        let bad = |s: String| Err(ModelError::BadInput(s));
        let k = match cfg.topology {
            TopologyConfig::Torus {
                k,
                n: 2,
                bidirectional: true,
                c: 1,
            } => k,
            _ => {
                return bad(format!(
                    "{who} is for a bidirectional k×k torus (Torus(k: K, n: 2, \
                     bidirectional: true)), and no model covers wormhole switching on {}: \
                     `routemu run` emulates it",
                    machine.topology.describe()
                ))
            }
        };
        if multiple == 4 && k % 4 != 0 {
            return bad(format!(
                "{who}: its average message travels k/4 hops per dimension, so k must be a \
                 multiple of 4 (k = {k}); the dimension-order model takes any even k"
            ));
        }
        if k % multiple != 0 {
            return bad(format!(
                "{who} needs an even k (offsets 0..k/2 in each dimension; k = {k})"
            ));
        }
        if !matches!(cfg.switching, SwitchingConfig::Wormhole { .. }) {
            return bad(format!("{who} needs wormhole switching"));
        }
        if cfg.workload.pattern != PatternConfig::Uniform {
            return bad(format!(
                "{who} assumes uniformly random destinations over the other nodes \
                 (workload.pattern = Uniform): its channel loads come from the uniform \
                 distance law, and {:?} is not modelled (`routemu run` emulates it)",
                cfg.workload.pattern
            ));
        }
        let length = machine.workload.length.clone();
        let (data_mean, data_var) = data_moments(&length, cfg.links.width.max(1));
        let len = data_mean.round().max(1.0) as u64 * cfg.links.width.max(1) as u64;
        let (z0, t_hop) = crate::switching::zero_load::wormhole_line(cfg, len);
        let w = cfg.links.width.max(1) as u64;
        Ok(WormholeParams {
            k,
            rate: cfg.workload.rate,
            t_hop,
            trail: z0 - len.div_ceil(w) as f64 + data_mean,
            data_mean,
            data_var,
            length,
            dma: machine.dma,
            route: cfg.router.controller.route.max(1) as f64,
        })
    }

    /// Zero-load latency of a message travelling `hops` hops.
    pub fn zero_load(&self, hops: f64) -> f64 {
        self.trail + hops * self.t_hop
    }
}

/// What paper 004's model predicts (times in cycles).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WormholePrediction {
    /// Mean message latency.
    pub latency: f64,
    /// Its zero-load part.
    pub zero_load: f64,
    /// Mean hops.
    pub hops: f64,
    /// Mean blocking per hop: (latency − zero-load latency) / hops (paper 004 Fig. 3).
    pub blocking_per_hop: f64,
    /// Probability that a horizontal channel is busy.
    pub p_x: f64,
    /// Probability that a vertical channel is busy.
    pub p_y: f64,
    /// Mean waits for a channel: [west→east, north→east, north→south, west→south].
    pub waits: [f64; 4],
    /// Mean wait in the source's memory for a DMA injection engine (the dimension-order
    /// model's M/G/c queue of `router.dma` engines; 0 in paper 004's model, which has no
    /// source queue).
    pub source_wait: f64,
    /// Mean wait of a header at its destination for an ejection engine (M/D/c, same
    /// models).
    pub ejection_wait: f64,
    /// Iterations the fixed point took.
    pub iterations: usize,
}

/// The waits of the four channel kinds.
#[derive(Clone, Copy, Debug, Default)]
struct Waits {
    we: f64,
    ne: f64,
    ns: f64,
    ws: f64,
}

/// Residual transmission times on an a×b diagram (a hops in X, b in Y), 1-based grids
/// with a spare row and column: `x[i][j]` for X_{i,j}, `y[i][j]` for Y_{i,j}.
struct Residuals {
    x: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
}

/// Eqs. 32–39 on an a×b diagram (a, b ≥ 1).
fn residuals(
    a: usize,
    b: usize,
    px: f64,
    py: f64,
    w: Waits,
    wb: Waits,
    p: &WormholeParams,
) -> Residuals {
    let h = p.t_hop;
    let end = p.trail + h;
    let mut x = vec![vec![0.0; a + 2]; b + 2];
    let mut y = vec![vec![0.0; a + 2]; b + 2];
    // Both channels busy: wait for the one with the smaller mean wait.
    let both = |wx: f64, tx: f64, wy: f64, ty: f64| if wy < wx { wy + ty } else { wx + tx };
    for i in (1..=b + 1).rev() {
        for j in (1..=a + 1).rev() {
            if j <= a {
                x[i][j] = if i == b + 1 {
                    if j == a {
                        end
                    } else {
                        w.we + x[i][j + 1] + h
                    }
                } else if j == a {
                    w.ws + y[i][a + 1] + h
                } else {
                    // At N_{i,j+1}, arrived from the west.
                    let (tx, ty) = (x[i][j + 1], y[i][j + 1]);
                    (1.0 - px) * tx
                        + px * (1.0 - py) * ty
                        + px * py * both(wb.we, tx, wb.ws, ty)
                        + h
                };
            }
            if i <= b {
                y[i][j] = if j == a + 1 {
                    if i == b {
                        end
                    } else {
                        w.ns + y[i + 1][a + 1] + h
                    }
                } else if i == b {
                    w.ne + x[b + 1][j] + h
                } else {
                    // At N_{i+1,j}, arrived from the north.
                    let (tx, ty) = (x[i + 1][j], y[i + 1][j]);
                    (1.0 - px) * tx
                        + px * (1.0 - py) * ty
                        + px * py * both(wb.ne, tx, wb.ns, ty)
                        + h
                };
            }
        }
    }
    Residuals { x, y }
}

/// Eq. 46: the α stream's latency from the source of an a×b diagram.
fn alpha_latency(r: &Residuals, px: f64, py: f64, w: Waits) -> f64 {
    let (tx, ty) = (r.x[1][1], r.y[1][1]);
    let (hx, hy) = (w.we + w.ne, w.ns + w.ws);
    let both = if hx < hy { hx + tx } else { hy + ty };
    (1.0 - px) * tx + px * (1.0 - py) * ty + px * py * both
}

/// Eqs. 40–42: the β stream's residual times after j = 1..n hops still to go.
fn beta(n: usize, wait: f64, p: &WormholeParams) -> Vec<f64> {
    let mut t = vec![0.0; n + 1];
    for j in 1..=n {
        t[j] = if j == 1 {
            p.trail + p.t_hop
        } else {
            wait + t[j - 1] + p.t_hop
        };
    }
    t
}

/// What a header that finds both of its channels busy waits (eqs. 35, 39 and 46), the
/// open point that decides how fast the model grows with load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockedWait {
    /// The wait of a header that finds the channel busy, W / ρ (ρ the utilisation by the
    /// flows that contend for it, eq. 24): eq. 18's W is a mean over *all* arrivals, of
    /// which only the fraction ρ wait at all, and eqs. 35/39/46 already weight the term by
    /// the probability p_X·p_Y of finding both channels busy. This reading reproduces the
    /// paper's own model numbers (see the module documentation).
    #[default]
    Conditional,
    /// The printed product p_X·p_Y·W with W the mean over all arrivals, which counts the
    /// probability of finding a channel busy twice; routemu's reading before issue 14.
    Unconditional,
}

/// Predicts paper 004's model for `p` in path form `form`, in the default reading of
/// the blocked wait ([`BlockedWait::Conditional`]).
pub fn predict(p: &WormholeParams, form: PathForm) -> Result<WormholePrediction, ModelError> {
    predict_with(p, form, BlockedWait::default())
}

/// Predicts paper 004's model for `p` in path form `form` with the blocked wait read as
/// `blocked`.
pub fn predict_with(
    p: &WormholeParams,
    form: PathForm,
    blocked: BlockedWait,
) -> Result<WormholePrediction, ModelError> {
    let kk = p.k as usize / 4;
    let kf = p.k as f64;
    let alpha = (kf - 1.0) / (kf + 1.0);
    let beta_x = 1.0 / (kf + 1.0);
    let a_rate = alpha * p.rate / 4.0;
    let b_rate = beta_x * p.rate / 4.0;
    let over = p.trail - p.data_mean;
    let (mut px, mut py) = (0.0f64, 0.0f64);
    let mut w = Waits::default();
    let mut wb = Waits::default();
    // Near saturation the binary choices of eqs. 35, 39 and 46 can make plain iteration
    // oscillate: past a few hundred steps, each step moves part of the way.
    let mut damp = 1.0;
    for it in 1..=MAX_ITERATIONS {
        if it % 300 == 0 {
            damp *= 0.5;
        }
        let d = 1.0 - px * py;
        let (fx, fy) = ((1.0 - px) / d, px * (1.0 - py) / d);
        // Eqs. 6–17: flows of the α stream on the K×K diagram.
        let mut fxs = vec![vec![0.0; kk + 2]; kk + 2];
        let mut fys = vec![vec![0.0; kk + 2]; kk + 2];
        for i in 1..=kk + 1 {
            for j in 1..=kk + 1 {
                let inflow = if (i, j) == (1, 1) {
                    a_rate
                } else {
                    fxs[i][j - 1] + fys[i - 1][j]
                };
                match (i <= kk, j <= kk) {
                    (true, true) => {
                        fxs[i][j] = inflow * fx;
                        fys[i][j] = inflow * fy;
                    }
                    (false, true) => fxs[i][j] = inflow,
                    (true, false) => fys[i][j] = inflow,
                    (false, false) => {}
                }
            }
        }
        // Link utilisation times (eqs. 28–31) and their second moments.
        let r = residuals(kk, kk, px, py, w, wb, p);
        let bx = beta(kk, w.we, p);
        let by = beta(kk, w.ns, p);
        let util = |t: f64, remaining: f64| (t - remaining * p.t_hop - over).max(p.data_mean);
        let tx = |i: usize, j: usize| util(r.x[i][j], (2 * kk + 2 - i - j) as f64);
        let ty = |i: usize, j: usize| util(r.y[i][j], (2 * kk + 2 - i - j) as f64);
        let s2 = |t: f64| t * t + p.data_var + (t - p.data_mean).powi(2);
        let tbx = |j: usize| util(bx[j], j as f64);
        let tby = |j: usize| util(by[j], j as f64);
        // Eqs. 23–27: each wait from its classes (Σ λ S², Σ λ T̄).
        // Returns (W, ρ).
        let queue = |classes: &[(f64, f64)]| -> Result<(f64, f64), ModelError> {
            let rho: f64 = 2.0 * classes.iter().map(|&(l, t)| l * t).sum::<f64>();
            if rho >= 1.0 || !rho.is_finite() {
                return Err(ModelError::Saturated {
                    what: "a torus channel".into(),
                    utilization: rho,
                });
            }
            Ok((
                classes.iter().map(|&(l, t)| l * s2(t)).sum::<f64>() / (1.0 - rho),
                rho,
            ))
        };
        let mut we = Vec::new();
        for j in 1..=kk {
            we.push((fys[kk][j], tx(kk + 1, j)));
        }
        for i in 2..=kk {
            for j in 1..=kk {
                we.push((fx * fys[i - 1][j], tx(i, j)));
            }
        }
        we.push((b_rate, tbx(kk)));
        we.push((a_rate * fx, tx(1, 1)));
        let mut ne = Vec::new();
        for j in 1..kk {
            ne.push((fxs[kk + 1][j], tx(kk + 1, j + 1)));
        }
        for i in 1..=kk {
            for j in 1..kk {
                ne.push((fx * fys[i][j], tx(i, j + 1)));
            }
        }
        for j in 1..kk {
            ne.push((b_rate, tbx(j)));
        }
        ne.push((a_rate * fx, tx(1, 1)));
        let mut ns = Vec::new();
        for i in 1..=kk {
            ns.push((fxs[i][kk], ty(i, kk + 1)));
        }
        for i in 1..=kk {
            for j in 1..kk {
                ns.push((fy * fxs[i][j], ty(i, j + 1)));
            }
        }
        ns.push((b_rate, tby(kk)));
        ns.push((a_rate * fy, ty(1, 1)));
        let mut ws = Vec::new();
        for i in 1..kk {
            ws.push((fys[i][kk + 1], ty(i + 1, kk + 1)));
        }
        for i in 1..kk {
            for j in 1..=kk {
                ws.push((fy * fxs[i][j], ty(i + 1, j)));
            }
        }
        for i in 1..=kk {
            ws.push((b_rate, tby(i)));
        }
        ws.push((a_rate * fy, ty(1, 1)));
        let step = |new: f64, old: f64| old + damp * (new - old);
        let (qwe, qne, qns, qws) = (queue(&we)?, queue(&ne)?, queue(&ns)?, queue(&ws)?);
        let new_w = Waits {
            we: step(qwe.0, w.we),
            ne: step(qne.0, w.ne),
            ns: step(qns.0, w.ns),
            ws: step(qws.0, w.ws),
        };
        // The waits of a header that finds both channels busy (eqs. 35, 39, 46).
        let cond = |q: (f64, f64), old: f64| match blocked {
            BlockedWait::Unconditional => step(q.0, old),
            BlockedWait::Conditional => step(if q.1 > 0.0 { q.0 / q.1 } else { 0.0 }, old),
        };
        let new_wb = Waits {
            we: cond(qwe, wb.we),
            ne: cond(qne, wb.ne),
            ns: cond(qns, wb.ns),
            ws: cond(qws, wb.ws),
        };
        // Eqs. 43–44.
        let mut new_px: f64 = 0.0;
        let mut new_py: f64 = 0.0;
        for i in 1..=kk + 1 {
            for j in 1..=kk {
                new_px += 2.0 * fxs[i][j] * tx(i, j);
                new_py += 2.0 * fys[j][i] * ty(j, i);
            }
        }
        for j in 1..=kk {
            new_px += 2.0 * b_rate * tbx(j);
            new_py += 2.0 * b_rate * tby(j);
        }
        if new_px >= 1.0 || new_py >= 1.0 || !(new_px + new_py).is_finite() {
            return Err(ModelError::Saturated {
                what: "torus channels".into(),
                utilization: new_px.max(new_py),
            });
        }
        let (new_px, new_py) = (step(new_px, px), step(new_py, py));
        let change = [
            (new_px, px),
            (new_py, py),
            (new_w.we, w.we),
            (new_w.ne, w.ne),
            (new_w.ns, w.ns),
            (new_w.ws, w.ws),
        ]
        .iter()
        .map(|&(a, b)| rel_change(a, b))
        .fold(0.0, f64::max);
        px = new_px;
        py = new_py;
        w = new_w;
        wb = new_wb;
        if change < TOLERANCE {
            return Ok(finish(p, form, px, py, w, wb, it));
        }
    }
    Err(ModelError::NotConverged {
        iterations: MAX_ITERATIONS,
    })
}

/// Eqs. 45–46 in the chosen path form, at the fixed point.
fn finish(
    p: &WormholeParams,
    form: PathForm,
    px: f64,
    py: f64,
    w: Waits,
    wb: Waits,
    iterations: usize,
) -> WormholePrediction {
    let k = p.k as usize;
    let kk = k / 4;
    let kf = p.k as f64;
    // (weight, X hops, Y hops) of the destinations.
    let cases: Vec<(f64, usize, usize)> = match form {
        PathForm::Average => {
            let (alpha, beta) = ((kf - 1.0) / (kf + 1.0), 1.0 / (kf + 1.0));
            vec![(alpha, kk, kk), (beta, kk, 0), (beta, 0, kk)]
        }
        PathForm::Weighted => {
            // Offsets per dimension: 0 once, 1..k/2−1 twice, k/2 once.
            let count = |d: usize| if d == 0 || d == k / 2 { 1.0 } else { 2.0 };
            let others = kf * kf - 1.0;
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
    };
    let (mut latency, mut hops) = (0.0, 0.0);
    for (wt, a, b) in cases {
        let t = match (a, b) {
            (a, 0) => beta(a, w.we, p)[a] + w.we + w.ne,
            (0, b) => beta(b, w.ns, p)[b] + w.ns + w.ws,
            (a, b) => alpha_latency(&residuals(a, b, px, py, w, wb, p), px, py, wb),
        };
        latency += wt * t;
        hops += wt * (a + b) as f64;
    }
    let zero_load = p.zero_load(hops);
    WormholePrediction {
        latency,
        zero_load,
        hops,
        blocking_per_hop: (latency - zero_load) / hops,
        p_x: px,
        p_y: py,
        waits: [w.we, w.ne, w.ns, w.ws],
        source_wait: 0.0,
        ejection_wait: 0.0,
        iterations,
    }
}

/// The emulator's closed-form zero-load latency of `len`-flit messages from node 0,
/// averaged over the other nodes of the configured torus (uniform traffic; every node
/// of a torus sees the same distances): what both torus models give at vanishing load.
#[cfg(test)]
pub(crate) fn emulator_zero_load_mean(cfg: &HwConfig, len: u64) -> f64 {
    use crate::foundation::types::NodeId;
    let topo = crate::topology::Topology::from_config(&cfg.topology).unwrap();
    let n = topo.nodes() as u32;
    (1..n)
        .map(|v| {
            let h = topo.distance(NodeId(0), NodeId(v));
            crate::switching::zero_load::wormhole(cfg, h as u64, len) as f64
        })
        .sum::<f64>()
        / (n - 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset() -> HwConfig {
        crate::config::load::preset("wormhole-torus-adaptive.ron")
    }

    #[test]
    fn at_vanishing_load_the_weighted_form_is_the_emulators_zero_load_latency() {
        for k in [4, 8, 12, 16] {
            let mut cfg = preset();
            cfg.topology = TopologyConfig::Torus {
                k,
                n: 2,
                bidirectional: true,
                c: 1,
            };
            cfg.workload.rate = 1e-15;
            let p = WormholeParams::from_config(&cfg).unwrap();
            let pred = predict(&p, PathForm::Weighted).unwrap();
            let expect = emulator_zero_load_mean(&cfg, 12);
            assert!(
                (pred.latency - expect).abs() < 1e-9,
                "k={k}: {} vs {expect}",
                pred.latency
            );
            assert!(pred.blocking_per_hop.abs() < 1e-9);
        }
    }

    #[test]
    fn the_model_grows_with_the_rate_and_then_says_saturated() {
        for k in [4, 8, 12, 16] {
            let mut cfg = preset();
            cfg.topology = TopologyConfig::Torus {
                k,
                n: 2,
                bidirectional: true,
                c: 1,
            };
            for form in [PathForm::Average, PathForm::Weighted] {
                let mut last = 0.0;
                for rate in [0.001, 0.003, 0.005, 0.008] {
                    cfg.workload.rate = rate * 8.0 / k as f64;
                    let pred = predict(&WormholeParams::from_config(&cfg).unwrap(), form)
                        .unwrap_or_else(|e| panic!("k={k} {rate}: {e}"));
                    assert!(pred.latency > last, "k={k} {form:?} {rate}");
                    last = pred.latency;
                }
                cfg.workload.rate = 0.5;
                assert!(matches!(
                    predict(&WormholeParams::from_config(&cfg).unwrap(), form),
                    Err(ModelError::Saturated { .. })
                ));
            }
        }
    }

    /// (k, rate, latency): the paper's own model as issue 14 quotes it ("about").
    const PAPER_MODEL: [(u32, f64, f64); 2] = [(16, 0.005, 23.5), (16, 0.007, 29.0)];

    fn at(k: u32, rate: f64, length: crate::config::LengthConfig) -> WormholeParams {
        let mut cfg = preset();
        cfg.topology = TopologyConfig::Torus {
            k,
            n: 2,
            bidirectional: true,
            c: 1,
        };
        cfg.workload.rate = rate;
        cfg.workload.length = length;
        WormholeParams::from_config(&cfg).unwrap()
    }

    #[test]
    fn with_exponential_lengths_it_reproduces_the_papers_own_model_numbers() {
        let exp = crate::config::LengthConfig::Exponential { mean: 12.0 };
        for (k, rate, paper) in PAPER_MODEL {
            let got = predict(&at(k, rate, exp.clone()), PathForm::Average)
                .unwrap()
                .latency;
            // The quoted values are "about": 5%.
            assert!(
                (got - paper).abs() < 0.05 * paper,
                "k={k} {rate}: {got} vs {paper}"
            );
            // The printed reading stays far below (issue 14: 24.3 at 0.007).
            let old = predict_with(
                &at(k, rate, exp.clone()),
                PathForm::Average,
                BlockedWait::Unconditional,
            )
            .unwrap()
            .latency;
            assert!(old < got, "k={k} {rate}");
        }
        // At k = 8 the reading changes little (issue 14: within 1–3% of the old form).
        let c = crate::config::LengthConfig::Constant { flits: 12 };
        for rate in [0.001, 0.003, 0.005] {
            let new = predict(&at(8, rate, c.clone()), PathForm::Average)
                .unwrap()
                .latency;
            let old = predict_with(
                &at(8, rate, c.clone()),
                PathForm::Average,
                BlockedWait::Unconditional,
            )
            .unwrap()
            .latency;
            assert!((new - old).abs() < 0.03 * old, "{rate}: {new} vs {old}");
        }
    }

    #[test]
    fn the_papers_about_29_at_k16_is_a_rounding_wide_enough_to_hold_the_average_form() {
        // Issue 34 item 8: at k = 16, 0.007 the average form (exponential lengths) is
        // 3.5% below the paper's model as issue 14 quotes it, "about 29" — Table 2, which
        // holds the number, is withheld from our copy. "About 29" covers 28.5..29.5: the
        // form lies within 3% of that interval, and its own slope there (latency about
        // proportional to the rate, elasticity near 1) means no single rate or distance
        // convention of a few percent separates the two readings.
        let exp = crate::config::LengthConfig::Exponential { mean: 12.0 };
        let lat = |rate: f64| {
            predict(&at(16, rate, exp.clone()), PathForm::Average)
                .unwrap()
                .latency
        };
        let (lo, mid, hi) = (lat(0.0069), lat(0.007), lat(0.0071));
        let elasticity = (hi.ln() - lo.ln()) / (0.0071f64.ln() - 0.0069f64.ln());
        eprintln!(
            "k = 16 average form: 0.0069 {lo:.2}  0.007 {mid:.2}  0.0071 {hi:.2}  (elasticity {elasticity:.2})"
        );
        assert!((0.5..2.0).contains(&elasticity), "{elasticity}");
        assert!(mid < 29.5 && (28.5 - mid) / 28.5 < 0.03, "{mid}");
    }

    #[test]
    fn the_length_law_enters_through_its_second_moment() {
        let c = at(
            8,
            0.004,
            crate::config::LengthConfig::Constant { flits: 12 },
        );
        let e = at(
            8,
            0.004,
            crate::config::LengthConfig::Exponential { mean: 12.0 },
        );
        assert_eq!(c.data_var, 0.0);
        // The rounded exponential law's variance, from its exact moments.
        let l = LengthDist::Exponential(12.0);
        assert!((e.data_var - (l.raw_moment(2) - l.mean().powi(2))).abs() < 1e-9);
        assert!((e.data_var - 144.0).abs() < 1.0);
        // At light load the waits scale with E[S²]/E[S]: about twice for the exponential.
        let (pc, pe) = (
            predict(&c, PathForm::Weighted).unwrap(),
            predict(&e, PathForm::Weighted).unwrap(),
        );
        let ratio = pe.waits[0] / pc.waits[0];
        assert!((ratio - 2.0).abs() < 0.2, "{ratio}");
    }

    #[test]
    fn the_bifurcation_rule_conserves_the_flow() {
        // Theorem 1: f^X + f^Y = 1 for any contention probabilities.
        for (px, py) in [(0.0, 0.0), (0.3, 0.1), (0.9, 0.8)] {
            let d: f64 = 1.0 - px * py;
            assert!(((1.0 - px) / d + px * (1.0 - py) / d - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn machines_outside_the_model_are_refused() {
        let mut cfg = preset();
        cfg.topology = TopologyConfig::Torus {
            k: 6,
            n: 2,
            bidirectional: true,
            c: 1,
        };
        assert!(WormholeParams::from_config(&cfg).is_err());
        let dor = crate::config::load::preset("wormhole-torus-dor.ron");
        assert!(WormholeParams::from_config(&dor).is_err());
    }
}

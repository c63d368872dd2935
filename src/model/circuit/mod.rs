//! Paper 000's models of circuit switching, restated in MODELS.md: the routing
//! controller as an M/G/1 queue (Appendix A), link-conflict probabilities from the links
//! held in each phase (Appendix B, Little's law), and the set-up time of each conflict
//! strategy — [`hold`] (§4.1), `drop` (§4.2) and [`adaptive`] (§4.3 and
//! paper 001's flow analysis). Hold and drop take any path-length distribution, so they
//! cover paper 000 §5's torus with XY routing (M becomes the torus's mean path); adaptive
//! needs the hypercube's candidate structure.
//!
//! The parameters come from the same hardware file and workload as the emulator
//! ([`CircuitParams::from_config`]), so the two describe the same machine. Times are in
//! cycles. Where the emulator's links take ℓ > 1 cycles, each hop of the set-up and of
//! the release costs ℓ − 1 cycles more than the papers count (they ignore propagation),
//! and the message is complete when the tail is in as well as the last link released,
//! so that at vanishing load a model's latency is the emulator's zero-load latency
//! exactly: per path of h hops, h(D_verify + D_link_conn + ℓ − 1) + D_ack + T_data
//! + max(h(D_rel + ℓ − 1) − (ℓ − 1), hℓ − 1), which is paper 000's eq. 2 for ℓ = 1.
//!
//! **Path length** ([`PathForm`], MODELS.md "Path length M is not an integer"): the
//! per-message quantities that are sums over the hops of a path are evaluated for path
//! lengths h and averaged with weights: `Weighted` uses the machine's distance
//! distribution (C(d,h)/(2^d − 1) on the hypercube); `Average` is the papers' single
//! path of M hops — **routemu:** with M not an integer it is read as ⌊M⌋ and ⌈M⌉ mixed
//! so that the mean is M (the papers round; mixing keeps the zero-load latency exact,
//! and equals the papers' form whenever M is an integer).
//!
//! **Controller** — **routemu:** a controller with one server is the papers' M/G/1 queue;
//! with several servers the model takes the controller times as pure delays (paper 001's
//! case, W = 0), which the emulator matches when servers are never all busy.
//!
//! **Blocking** ([`Blocking`]; issue 14 items 6 and 8) — the papers take the probability
//! that a link request finds its link held to be the time-average fraction of links held,
//! U = N_link_held / N_links (Appendix B). That is right for a path's first link, but a
//! request for a later link already holds the link it came in on, and every circuit that
//! would hold both that link and the wanted one (it came in over the same link and goes
//! on over the wanted one) is excluded by construction. With e the share of the wanted
//! link's holders that would also hold the incoming link,
//!
//!   P(held | the incoming link is mine) = (U − U·e) / (1 − U·e) = U(1 − e)/(1 − U·e).
//!
//! e follows from the routing alone, for any vertex-transitive topology with
//! translation-invariant dimension-order routing: over the paths from node 0 to every
//! other node, let n_p count the hops over output port p and n_{p→q} the hops over port
//! p immediately followed by port q. By translation every channel of port q carries
//! n_q paths, n_{p→q} of them arriving over the port-p channel into its node; a
//! half-duplex physical link also carries the n_{q'} paths of its reverse channel (port
//! q' at the neighbour, `Topology::peer_port`), which never share the incoming link (they
//! would have to use it in the opposite direction as well). So
//! e(p → q) = n_{p→q} / (n_q + n_{q'}) (half duplex) or n_{p→q} / n_q (full duplex or a
//! unidirectional link). **routemu:** each path is weighted equally, i.e. the holders'
//! shares are taken from the data phase, where every link of a circuit is held equally
//! long (set-up and release hold the first links a little longer; they are a few per
//! cent of the links held at the papers' loads).
//!
//! - *Torus with XY routing* (paper 000 §5): going on along a ring (same port again) the
//!   wanted link can only be held by a circuit that entered the ring at this node (there
//!   it started, or turned from X to Y), so e = 1 − 2/m on an m-ring: P ≈ U·(2/m)/(1 −
//!   U(1 − 2/m)), a quarter of U on the 8 × 8 preset. At the X→Y turn the excluded
//!   circuits are those that turned at the same node (e = (2/m)(m − 1)/m), and the first
//!   link sees U. Weighted over the hops of the paths a request sees about 0.4·U.
//! - *Hypercube with e-cube routing*: a request for dimension b arriving over dimension a
//!   excludes the circuits that correct a and then b, e = ½·(½)^(b−a) on half-duplex links
//!   (the reverse direction is half the holders and is never excluded), a few per cent to
//!   a quarter of U.
//!
//! `Blocking::Path` (the default) applies this to the hold and drop models: the first
//! link of a path conflicts with probability U, the i-th with U(1 − e_i)/(1 − U e_i)
//! (drop: averaged over the later links of a path of that length); the predicted
//! P_conflict is then per request, as the emulator counts it. `Blocking::Occupancy` is the
//! papers' reading (every request sees U). The adaptive model keeps the papers' reading:
//! its candidates are all the minimal links at a node, most of them not in line with the
//! incoming link, and it matches the emulator within 2% as it is.
//!
//! **routemu:** the residual time of a communication found in its ack state is taken
//! from the start of that state (D_ack + T_data + T_rel(h+1)/2), like the set-up
//! sub-states (MODELS.md says "a request is taken to be at the start of its sub-state").

mod adaptive;
mod drop;
mod hold;

pub use adaptive::{adaptive, adaptive_flows, adaptive_n_abort, AdaptiveFlows};
pub use drop::{drop, drop_with, Further};
pub use hold::hold;

use crate::config::{AckDelay, ConflictStrategy, Duplex, HwConfig, SwitchingConfig};
use crate::engine::machine::validate;
use crate::foundation::mg1::{pk_wait, Moments};
use crate::foundation::types::NodeId;
use crate::model::{rel_change, ModelError};
use crate::topology::Topology;
use crate::traffic::length::LengthDist;
use serde::Serialize;

/// Relative change of every unknown below which a fixed point has converged.
pub const TOLERANCE: f64 = 1e-9;

/// Iterations after which a fixed point that has not converged is reported as such.
pub const MAX_ITERATIONS: usize = 100_000;

/// How the models treat the length of a path (module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PathForm {
    /// The papers' single average path of M hops.
    Average,
    /// Every path length, weighted by the distance distribution.
    #[default]
    Weighted,
}

/// How a link request's conflict probability follows from the links held (module
/// documentation, "Blocking").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Blocking {
    /// The papers' reading: every request sees the time-average fraction of links held.
    Occupancy,
    /// A request for a later link of its path excludes the holders that would share its
    /// incoming link.
    #[default]
    Path,
}

/// What the circuit models need to know about a machine and its workload.
#[derive(Clone, Debug, PartialEq)]
pub struct CircuitParams {
    /// Nodes p.
    pub nodes: f64,
    /// Hypercube dimension d (None: another topology).
    pub dim: Option<u32>,
    /// Probability that a message travels h hops, indexed by h (uniform destinations
    /// other than the source).
    pub paths: Vec<f64>,
    /// Mean links per path M.
    pub mean_path: f64,
    /// Messages per node per cycle (λ).
    pub rate: f64,
    /// Links that carry one circuit each (half duplex: pairs of channels count once).
    pub links: f64,
    /// Verify a link.
    pub d_verify: f64,
    /// Connect a link.
    pub d_conn: f64,
    /// Release a link.
    pub d_rel: f64,
    /// Ack back to the source, per path length (PerHop acks grow with the hops).
    pub ack: AckDelay,
    /// Extra cycles per hop of a link beyond the first (ℓ − 1).
    pub wire: f64,
    /// The data-transfer time ⌈L/W⌉: its distribution.
    pub data_dist: DataTime,
    /// Its moments.
    pub data: Moments,
    /// The conflict strategy.
    pub strategy: ConflictStrategy,
    /// Back-off of drop and adaptive (its mean).
    pub backoff: f64,
    /// Whether requests queue at the controller (one server) or see pure delays.
    pub queueing: bool,
    /// The path-length form.
    pub form: PathForm,
    /// How requests see held links.
    pub blocking: Blocking,
    /// Per path length h: the exclusion shares e of the hops after the first of the
    /// h-hop paths, as (e, mean number of such hops per h-hop path).
    pub exclusion: Vec<Vec<(f64, f64)>>,
}

/// The data-transfer time ⌈L/W⌉ in cycles, as the emulator samples it.
#[derive(Clone, Debug, PartialEq)]
pub struct DataTime {
    len: LengthDist,
    width: u32,
}

impl DataTime {
    fn time(&self, l: f64) -> f64 {
        (l / self.width.max(1) as f64).ceil()
    }

    /// E[f(T)] over the distribution of the data-transfer time.
    pub fn expect(&self, f: impl Fn(f64) -> f64) -> f64 {
        let mut sum = 0.0;
        match self.len {
            LengthDist::Constant(l) => sum += f(self.time(l as f64)),
            LengthDist::Mixed(ref pairs) => {
                for &(l, p) in pairs {
                    sum += p * f(self.time(l as f64));
                }
            }
            LengthDist::Uniform(a, b) => {
                let n = (b - a) as f64 + 1.0;
                for k in a..=b {
                    sum += f(self.time(k as f64)) / n;
                }
            }
            LengthDist::Exponential(mean) => {
                let mu = 1.0 / mean;
                let cdf = |x: f64| 1.0 - (-mu * x).exp();
                sum += cdf(1.5) * f(self.time(1.0));
                let mut k = 2.0;
                loop {
                    let p = cdf(k + 0.5) - cdf(k - 0.5);
                    sum += p * f(self.time(k));
                    if p < 1e-14 && k > mean {
                        break;
                    }
                    k += 1.0;
                }
            }
        }
        sum
    }

    /// P(T > y) for a data transfer that has not started.
    pub fn tail(&self, y: f64) -> f64 {
        self.expect(|t| if t > y { 1.0 } else { 0.0 })
    }

    /// P(R > y) for the residual R of a data transfer seen at a random moment of it
    /// (length-biased): E\[(T − y)⁺\] / E\[T\].
    pub fn residual_tail(&self, y: f64, mean: f64) -> f64 {
        let y = y.max(0.0);
        (self.expect(|t| (t - y).max(0.0)) / mean).min(1.0)
    }
}

/// Moments of ⌈L/W⌉ for a length distribution and a link width, exactly as the emulator
/// samples lengths (exponential: rounded, at least one flit).
pub fn data_moments(len: &LengthDist, width: u32) -> Moments {
    let d = DataTime {
        len: len.clone(),
        width,
    };
    Moments {
        mean: d.expect(|t| t),
        second: d.expect(|t| t * t),
    }
}

impl CircuitParams {
    /// The parameters of a circuit-switched hypercube or torus and its workload, with
    /// the weighted path form.
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
        let t = &machine.topology;
        let dim = match t {
            Topology::Hypercube(h) => Some(h.dim),
            Topology::Torus(_) => None,
            _ => {
                return Err(ModelError::BadInput(
                    "the circuit models cover hypercubes (paper 000 §4) and tori (§5)".into(),
                ))
            }
        };
        if strategy == ConflictStrategy::Adaptive && dim.is_none() {
            return Err(ModelError::BadInput(
                "the adaptive model counts the candidate links of a hypercube (paper 000 \
                 §4.3); on a torus routemu models hold and drop"
                    .into(),
            ));
        }
        if cfg.workload.pattern != crate::config::PatternConfig::Uniform {
            return Err(ModelError::BadInput(
                "the circuit models assume uniformly random destinations".into(),
            ));
        }
        // Hypercubes and tori look the same from every node: distances from node 0.
        let n = t.nodes();
        let mut paths = vec![0.0; t.diameter() as usize + 1];
        for v in 1..n {
            paths[t.distance(NodeId(0), NodeId(v as u32)) as usize] += 1.0 / (n - 1) as f64;
        }
        let mean_path = paths.iter().enumerate().map(|(h, w)| h as f64 * w).sum();
        let exclusion = exclusion_shares(t, cfg.links.duplex);
        let c = &cfg.router.controller;
        Ok(CircuitParams {
            nodes: n as f64,
            dim,
            paths,
            mean_path,
            rate: cfg.workload.rate,
            links: match cfg.links.duplex {
                Duplex::Half => t.links() as f64,
                Duplex::Full => t.channels() as f64,
            },
            d_verify: c.verify as f64,
            d_conn: c.link_conn as f64,
            d_rel: c.release as f64,
            ack,
            wire: cfg.links.latency as f64 - 1.0,
            data_dist: DataTime {
                len: machine.workload.length.clone(),
                width: cfg.links.width,
            },
            data: data_moments(&machine.workload.length, cfg.links.width),
            strategy,
            backoff: backoff as f64,
            queueing: c.servers == 1,
            form: PathForm::Weighted,
            blocking: Blocking::Path,
            exclusion,
        })
    }

    /// The same with another blocking reading.
    pub fn with_blocking(mut self, blocking: Blocking) -> Self {
        self.blocking = blocking;
        self
    }

    /// Σ over the hops of an h-hop path of each hop's conflict probability divided by U
    /// = `u`, the time-average fraction of links held: h in the papers' reading, 1 +
    /// Σ (1 − e)/(1 − U·e) over the later hops otherwise (module documentation,
    /// "Blocking").
    pub fn hop_factor_sum(&self, h: usize, u: f64) -> f64 {
        if self.blocking == Blocking::Occupancy || h < 2 {
            return h as f64;
        }
        1.0 + self.exclusion.get(h).map_or(0.0, |v| {
            v.iter()
                .map(|&(e, n)| n * (1.0 - e) / (1.0 - u * e))
                .sum::<f64>()
        })
    }

    /// For an h-hop path: the conflict probability of its first link (U = `u`) and the
    /// mean over its later links.
    pub fn hop_conflict(&self, h: usize, u: f64) -> (f64, f64) {
        if h < 2 {
            return (u, u);
        }
        (u, u * (self.hop_factor_sum(h, u) - 1.0) / (h - 1) as f64)
    }

    /// The requests' mean conflict probability over U: Σ_h w_h · factor sum / M.
    pub fn mean_factor(&self, u: f64) -> f64 {
        self.weights()
            .iter()
            .map(|&(h, w)| w * self.hop_factor_sum(h, u))
            .sum::<f64>()
            / self.mean_path
    }

    /// The same with another path form.
    pub fn with_form(mut self, form: PathForm) -> Self {
        self.form = form;
        self
    }

    /// The path lengths h ≥ 1 the per-message sums run over, with their weights (mean M).
    pub fn weights(&self) -> Vec<(usize, f64)> {
        match self.form {
            PathForm::Weighted => self
                .paths
                .iter()
                .enumerate()
                .filter(|&(h, &w)| h > 0 && w > 0.0)
                .map(|(h, &w)| (h, w))
                .collect(),
            PathForm::Average => {
                let lo = self.mean_path.floor().max(1.0);
                let f = self.mean_path - lo;
                let mut v = vec![(lo as usize, 1.0 - f)];
                if f > 0.0 {
                    v.push((lo as usize + 1, f));
                }
                v
            }
        }
    }

    /// The ack delay of an h-hop path.
    pub fn d_ack(&self, h: usize) -> f64 {
        match self.ack {
            AckDelay::Total(a) => a as f64,
            AckDelay::PerHop(a) => (a as f64 * h as f64).max(1.0),
        }
    }

    /// The mean ack delay.
    pub fn mean_ack(&self) -> f64 {
        self.weights().iter().map(|&(h, w)| w * self.d_ack(h)).sum()
    }

    /// The controller's mean wait for arrivals `lambda` per cycle with `service`
    /// (Pollaczek–Khinchine; zero when the controller times are pure delays).
    fn controller_wait(&self, lambda: f64, service: Moments) -> Result<f64, ModelError> {
        if !self.queueing {
            return Ok(0.0);
        }
        pk_wait(lambda, service).map_err(|_| ModelError::Saturated {
            what: "routing controller".into(),
            utilization: lambda * service.mean,
        })
    }

    /// The release phase of an h-hop path: the end-of-transmission releases link i
    /// (T_rel, queued) and crosses it (ℓ − 1 more than the papers count); the tail needs
    /// hℓ − 1 more cycles after the last flit is sent; the message is complete when both
    /// are done.
    fn release(&self, h: usize, t_rel: f64) -> f64 {
        let h = h as f64;
        (h * (t_rel + self.wire) - self.wire).max(h * (1.0 + self.wire) - 1.0)
    }

    /// The mean release phase.
    fn mean_release(&self, t_rel: f64) -> f64 {
        self.weights()
            .iter()
            .map(|&(h, w)| w * self.release(h, t_rel))
            .sum()
    }

    /// Σ_h w_h · h(h+1)/2: link-steps of a path released (or built) hop by hop.
    fn triangle(&self) -> f64 {
        self.weights()
            .iter()
            .map(|&(h, w)| w * (h * (h + 1)) as f64 / 2.0)
            .sum()
    }

    /// Σ_h w_h · h · D_ack(h): link-cycles a message holds in its ack state.
    fn ack_links(&self) -> f64 {
        self.weights()
            .iter()
            .map(|&(h, w)| w * h as f64 * self.d_ack(h))
            .sum()
    }

    /// Messages per cycle in the whole network.
    fn flow(&self) -> f64 {
        self.nodes * self.rate
    }
}

/// The exclusion shares of every hop after the first, per path length (module
/// documentation, "Blocking"): the dimension-order paths from node 0 to every other node
/// stand for all pairs by translation.
fn exclusion_shares(t: &Topology, duplex: Duplex) -> Vec<Vec<(f64, f64)>> {
    let deg = t.degree();
    let n = t.nodes();
    let mut uses = vec![0.0f64; deg];
    let mut pairs = vec![0.0f64; deg * deg];
    let mut paths: Vec<Vec<u8>> = Vec::with_capacity(n.saturating_sub(1));
    for v in 1..n {
        let (src, dst) = (NodeId(0), NodeId(v as u32));
        let mut cur = src;
        let mut ports = Vec::new();
        while cur != dst && ports.len() <= t.diameter() as usize {
            let p = crate::routing::dor::dor_step(t, cur, dst, src).0;
            ports.push(p.0);
            uses[p.idx()] += 1.0;
            match t.neighbor(cur, p) {
                Some(next) => cur = next,
                None => break,
            }
        }
        for w in ports.windows(2) {
            pairs[w[0] as usize * deg + w[1] as usize] += 1.0;
        }
        paths.push(ports);
    }
    let holders = |q: usize| match (
        duplex,
        t.peer_port(crate::foundation::types::PortId(q as u8)),
    ) {
        (Duplex::Half, Some(r)) => uses[q] + uses[r.idx()],
        _ => uses[q],
    };
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new(); t.diameter() as usize + 1];
    let mut count = vec![0.0f64; out.len()];
    for ports in &paths {
        let h = ports.len();
        if h >= out.len() {
            continue;
        }
        count[h] += 1.0;
        for w in ports.windows(2) {
            let (p, q) = (w[0] as usize, w[1] as usize);
            let den = holders(q);
            let e = if den > 0.0 {
                pairs[p * deg + q] / den
            } else {
                0.0
            };
            match out[h].iter_mut().find(|(x, _)| (*x - e).abs() < 1e-12) {
                Some(slot) => slot.1 += 1.0,
                None => out[h].push((e, 1.0)),
            }
        }
    }
    for (h, v) in out.iter_mut().enumerate() {
        for slot in v.iter_mut() {
            slot.1 /= count[h].max(1.0);
        }
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// What a circuit model predicts (times in cycles).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CircuitPrediction {
    /// Mean message latency: set-up + data + release.
    pub latency: f64,
    /// Mean set-up time, ack included (the papers' T_path-set-up).
    pub setup: f64,
    /// Mean release phase (last flit sent → last link released and tail in).
    pub release: f64,
    /// Probability that a link request finds the link held.
    pub p_conflict: f64,
    /// Time-average fraction of the links held (the papers' P_conflict, U).
    pub occupancy: f64,
    /// The first-conflict part of `p_conflict` split by the holder's phase: [set-up
    /// with ack, data, release].
    pub p_conflict_by_phase: [f64; 3],
    /// Drop: the part of `p_conflict` from retries meeting the communication that
    /// caused their abort (paper 000 eq. 10's P_further_conflicts).
    pub p_further: f64,
    /// Mean wait for a held link per request (hold).
    pub link_wait: f64,
    /// Routing-controller arrival rate per node per cycle.
    pub controller_rate: f64,
    /// Its utilisation.
    pub controller_utilization: f64,
    /// Its mean wait (Pollaczek–Khinchine; 0 with pure delays).
    pub controller_wait: f64,
    /// Aborted attempts per message (0 for hold).
    pub aborts: f64,
    /// Iterations the fixed point took.
    pub iterations: usize,
}

/// Which model predicts `cfg`, in words.
pub fn model_name(cfg: &HwConfig, form: PathForm) -> String {
    let (strategy, timeout) = match cfg.switching {
        SwitchingConfig::Circuit {
            strategy,
            hold_timeout,
            ..
        } => (strategy, hold_timeout.is_some()),
        _ => return "none".into(),
    };
    let base = match strategy {
        ConflictStrategy::Hold => "paper 000 §4.1 hold",
        ConflictStrategy::Drop => "paper 000 §4.2 drop",
        ConflictStrategy::Adaptive => "paper 000 §4.3 / paper 001 adaptive",
    };
    let torus = matches!(cfg.topology, crate::config::TopologyConfig::Torus { .. });
    let delays = cfg.router.controller.servers > 1;
    format!(
        "{base}{}, {} path{}{}",
        if torus { " (§5 torus)" } else { "" },
        match form {
            PathForm::Average => "average",
            PathForm::Weighted => "distance-weighted",
        },
        if delays {
            ", controller times as pure delays"
        } else {
            ""
        },
        if timeout {
            " (the hold timeout is not modelled)"
        } else {
            ""
        }
    )
}

/// The circuit model of `cfg`'s strategy in path form `form`.
pub fn predict(cfg: &HwConfig, form: PathForm) -> Result<CircuitPrediction, ModelError> {
    let p = CircuitParams::from_config(cfg)?.with_form(form);
    match p.strategy {
        ConflictStrategy::Hold => hold(&p),
        ConflictStrategy::Drop => drop(&p),
        ConflictStrategy::Adaptive => adaptive(&p),
    }
}

/// P_conflict from the links held (Appendix B, Little's law), split by the holder's
/// phase [set-up with ack, data, release], or saturation. `setup` is the link-cycles a
/// message holds while setting up (its strategy's part); the ack, data and release parts
/// are the same for every strategy.
fn conflict(p: &CircuitParams, setup: f64, t_rel: f64) -> Result<([f64; 3], f64), ModelError> {
    let flow = p.flow();
    let held = [
        flow * (setup + p.ack_links()),
        flow * p.mean_path * p.data.mean,
        flow * (t_rel + p.wire) * p.triangle(),
    ];
    let parts = held.map(|x| x / p.links);
    let pc: f64 = parts.iter().sum();
    if pc >= 1.0 || !pc.is_finite() {
        return Err(ModelError::Saturated {
            what: "links".into(),
            utilization: pc,
        });
    }
    Ok((parts, pc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load::{parse_hw, preset};
    use crate::config::LengthConfig;

    const PRESETS: [&str; 4] = [
        "circuit-hold.ron",
        "circuit-drop.ron",
        "circuit-adaptive.ron",
        "circuit-torus-hold.ron",
    ];

    #[test]
    fn at_vanishing_load_every_model_predicts_the_emulators_zero_load_latency() {
        for name in PRESETS {
            for (latency, verify, ack) in [(1, 1, AckDelay::Total(1)), (3, 4, AckDelay::PerHop(2))]
            {
                let mut cfg = preset(name);
                cfg.workload.rate = 1e-15;
                cfg.workload.length = LengthConfig::Constant { flits: 700 };
                cfg.links.latency = latency;
                cfg.router.controller.verify = verify;
                if let SwitchingConfig::Circuit { ack: a, .. } = &mut cfg.switching {
                    *a = ack;
                }
                for form in [PathForm::Average, PathForm::Weighted] {
                    let p = CircuitParams::from_config(&cfg).unwrap().with_form(form);
                    let pred = predict(&cfg, form).unwrap();
                    let expect: f64 = p
                        .weights()
                        .iter()
                        .map(|&(h, w)| {
                            w * crate::switching::zero_load::circuit(&cfg, h as u64, 700) as f64
                        })
                        .sum();
                    assert!(
                        (pred.latency - expect).abs() < 1e-6 * expect,
                        "{name} {form:?} ℓ={latency}: {} vs {expect}",
                        pred.latency
                    );
                }
            }
        }
    }

    #[test]
    fn both_path_forms_have_the_mean_path_and_the_weighted_one_the_distance_law() {
        let p = CircuitParams::from_config(&preset("circuit-hold.ron")).unwrap();
        // d = 8: C(8,h)/255.
        assert!((p.paths[3] - 56.0 / 255.0).abs() < 1e-12);
        for form in [PathForm::Average, PathForm::Weighted] {
            let ws = p.clone().with_form(form).weights();
            let mean: f64 = ws.iter().map(|&(h, w)| h as f64 * w).sum();
            let total: f64 = ws.iter().map(|&(_, w)| w).sum();
            assert!((mean - 8.0 * 128.0 / 255.0).abs() < 1e-12 && (total - 1.0).abs() < 1e-12);
        }
        // An 8×8 unidirectional torus: m²/(m + 1) = 64/9 hops on average.
        let t = CircuitParams::from_config(&preset("circuit-torus-hold.ron")).unwrap();
        assert!((t.mean_path - 64.0 / 9.0).abs() < 1e-12, "{}", t.mean_path);
        assert_eq!(t.links, 128.0);
    }

    #[test]
    fn every_model_grows_with_the_rate_below_saturation_and_then_says_saturated() {
        for name in PRESETS {
            let mut cfg = preset(name);
            let base = cfg.workload.rate;
            for form in [PathForm::Average, PathForm::Weighted] {
                let mut last = 0.0;
                for f in [0.1, 0.3, 0.6, 1.0, 1.3] {
                    cfg.workload.rate = base * f;
                    let pred = predict(&cfg, form).unwrap_or_else(|e| panic!("{name} ×{f}: {e}"));
                    assert!(
                        pred.latency > last,
                        "{name} {form:?} ×{f}: {} ≤ {last}",
                        pred.latency
                    );
                    assert!(pred.p_conflict > 0.0 && pred.p_conflict < 1.0);
                    last = pred.latency;
                }
                cfg.workload.rate = base * 100.0;
                assert!(
                    matches!(predict(&cfg, form), Err(ModelError::Saturated { .. })),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn hold_at_the_papers_medium_load_is_near_the_emulated_preset() {
        // Emulated (`routemu run hw/circuit-hold.ron`, 5 replications): latency 1342 ± 8
        // cycles, P_conflict 0.097.
        for form in [PathForm::Average, PathForm::Weighted] {
            let pred = predict(&preset("circuit-hold.ron"), form).unwrap();
            assert!(
                (pred.latency / 1342.0 - 1.0).abs() < 0.05,
                "{form:?} {}",
                pred.latency
            );
            assert!(pred.controller_utilization < 0.01);
        }
    }

    #[test]
    fn drop_at_the_papers_medium_load_is_near_the_emulated_preset() {
        // Emulated (`routemu run hw/circuit-drop.ron`, 5 replications): latency 1718 ± 9
        // cycles, 0.47 aborts per message, P_conflict 0.090.
        let pred = predict(&preset("circuit-drop.ron"), PathForm::Weighted).unwrap();
        assert!(
            (pred.latency / 1718.0 - 1.0).abs() < 0.1,
            "{}",
            pred.latency
        );
        assert!((pred.aborts / 0.47 - 1.0).abs() < 0.25, "{}", pred.aborts);
    }

    #[test]
    fn drop_with_a_back_off_far_below_the_holding_time_meets_its_blocker_again() {
        let mut cfg = preset("circuit-drop.ron");
        let long = predict(&cfg, PathForm::Weighted).unwrap();
        assert!(
            long.p_further < 1e-3 * long.p_conflict,
            "{}",
            long.p_further
        );
        if let SwitchingConfig::Circuit { backoff, .. } = &mut cfg.switching {
            *backoff = 100;
        }
        let short = predict(&cfg, PathForm::Weighted).unwrap();
        assert!(short.p_further > 0.2 * short.p_conflict, "{short:?}");
        assert!(short.aborts > 2.0 * long.aborts);
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
    fn adaptive_at_the_papers_medium_load_is_near_the_emulated_preset() {
        // Emulated (`routemu run hw/circuit-adaptive.ron`, 5 replications): latency
        // 1215 ± 5 cycles, 0.13 aborts per message, P_conflict 0.103.
        let pred = predict(&preset("circuit-adaptive.ron"), PathForm::Weighted).unwrap();
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
    fn exclusion_shares_have_the_closed_forms_of_the_torus_and_the_hypercube() {
        // 8 × 8 unidirectional torus: on along a ring e = 1 − 2/m; at the X→Y turn the
        // circuits that turned at the same node, e = (2/m)(m − 1)/m.
        let t = CircuitParams::from_config(&preset("circuit-torus-hold.ron")).unwrap();
        let es: Vec<f64> = t.exclusion[14].iter().map(|&(e, _)| e).collect();
        assert_eq!(es.len(), 2, "{es:?}");
        assert!((es[0] - 0.21875).abs() < 1e-12 && (es[1] - 0.75).abs() < 1e-12);
        // A 14-hop path: one turn and 12 hops straight on.
        let n: f64 = t.exclusion[14].iter().map(|&(_, n)| n).sum();
        assert!((n - 13.0).abs() < 1e-12);
        // d = 8 hypercube, half duplex: dimension a then b excludes ½·(½)^(b−a) of the
        // holders, up to the 2^d − 1 normalisation of the destinations.
        let h = CircuitParams::from_config(&preset("circuit-hold.ron")).unwrap();
        let max = h.exclusion[2].iter().map(|&(e, _)| e).fold(0.0, f64::max);
        assert!((max - 0.25).abs() < 0.01, "{:?}", h.exclusion[2]);
        // The papers' reading: every hop sees U.
        let paper = h.clone().with_blocking(Blocking::Occupancy);
        assert_eq!(paper.hop_factor_sum(5, 0.1), 5.0);
        let f = h.hop_factor_sum(5, 0.1);
        assert!(f < 5.0 && f > 4.0, "{f}");
    }

    #[test]
    fn machines_outside_the_models_are_refused() {
        let mut cfg = preset("circuit-torus-hold.ron");
        if let SwitchingConfig::Circuit { strategy, .. } = &mut cfg.switching {
            *strategy = ConflictStrategy::Adaptive;
        }
        assert!(matches!(
            CircuitParams::from_config(&cfg),
            Err(ModelError::BadInput(_))
        ));
        let w = parse_hw(
            include_str!("../../../hw/wormhole-torus-dor.ron"),
            "hw/wormhole-torus-dor.ron",
        )
        .unwrap();
        assert!(CircuitParams::from_config(&w).is_err());
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

    #[test]
    fn residual_tails_of_the_data_time() {
        let c = DataTime {
            len: LengthDist::Constant(1000),
            width: 1,
        };
        // Seen at a random moment, a 1000-cycle transfer has a uniform residual.
        assert!((c.residual_tail(250.0, 1000.0) - 0.75).abs() < 1e-12);
        assert_eq!(c.tail(999.0), 1.0);
        assert_eq!(c.tail(1000.0), 0.0);
        let e = DataTime {
            len: LengthDist::Exponential(1000.0),
            width: 1,
        };
        // Memoryless (up to the rounding to whole flits).
        assert!((e.residual_tail(1000.0, 1000.0) - (-1.0f64).exp()).abs() < 2e-3);
    }
}

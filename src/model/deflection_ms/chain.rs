//! The auxiliary system Q̂ of paper 003 §3 as a finite continuous-time Markov chain: its
//! state space (with an O(1) ranking, so that solvers can work matrix-free), its
//! transitions written out forwards (for the direct solver's assembly) and backwards
//! (the flows *into* a state, which a balance equation sums: for residuals, and as the
//! reference for the iterative solver's sweep), and the outputs of eqs. (6)–(8).
//!
//! It owns nothing about the network: the rates λ₁*, λ₂*, λ₃*, ε and θ come in as
//! [`Rates`], worked out by the outer iteration in the parent module.

use crate::model::ModelError;

/// Position of X_a (terminating worms on the horizontal input) in a [`State`].
pub const XA: usize = 0;
/// Position of X_b (originating worms on the horizontal output).
pub const XB: usize = 1;
/// Position of X_c (terminating worms on the vertical input).
pub const XC: usize = 2;
/// Position of X_d (originating worms on the vertical output).
pub const XD: usize = 3;
/// Position of X_ab (transit, horizontal in, horizontal out).
pub const XAB: usize = 4;
/// Position of X_ad (transit, horizontal in, vertical out).
pub const XAD: usize = 5;
/// Position of X_cb (transit, vertical in, horizontal out).
pub const XCB: usize = 6;
/// Position of X_cd (transit, vertical in, vertical out).
pub const XCD: usize = 7;

/// A node state X̄ = (X_a, X_b, X_c, X_d, X_ab, X_ad, X_cb, X_cd) (indices [`XA`] …
/// [`XCD`]).
pub type State = [u8; 8];

/// Largest number of virtual channels per link the chain accepts: m = 12 has about 11
/// million states (about 180 MB of state and probability vectors); beyond, memory and
/// time grow as m⁸.
pub const MAX_M: u32 = 12;

/// The top (horizontal: groups Q_a, Q_b) or the bottom (vertical: Q_c, Q_d) level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Horizontal links: input a, output b.
    Top,
    /// Vertical links: input c, output d.
    Bottom,
}

impl Level {
    /// The other level.
    pub fn other(self) -> Level {
        match self {
            Level::Top => Level::Bottom,
            Level::Bottom => Level::Top,
        }
    }
}

/// Group occupancies \[n_a, n_b, n_c, n_d\] of a state.
#[inline]
pub fn occupancy(x: &State) -> [u32; 4] {
    let v = |i: usize| x[i] as u32;
    [
        v(XA) + v(XAB) + v(XAD),
        v(XB) + v(XAB) + v(XCB),
        v(XC) + v(XCB) + v(XCD),
        v(XD) + v(XAD) + v(XCD),
    ]
}

/// The state with the two levels swapped (a↔c, b↔d, ab↔cd, ad↔cb). Q̂ is invariant
/// under this map, so its stationary distribution is too.
pub fn mirror(x: &State) -> State {
    [x[XC], x[XD], x[XA], x[XB], x[XCD], x[XCB], x[XAD], x[XAB]]
}

/// Index of the originating-worm count and of the transit count for a worm entering on
/// `input` and leaving on `output`.
#[inline]
fn orig_index(output: Level) -> usize {
    match output {
        Level::Top => XB,
        Level::Bottom => XD,
    }
}

#[inline]
fn transit_index(input: Level, output: Level) -> usize {
    match (input, output) {
        (Level::Top, Level::Top) => XAB,
        (Level::Top, Level::Bottom) => XAD,
        (Level::Bottom, Level::Top) => XCB,
        (Level::Bottom, Level::Bottom) => XCD,
    }
}

/// Where Q̂ puts an admitted transit customer whose preferred outgoing group is
/// `preferred`: `Some((output, preempts))`, the group it gets a server in and whether it
/// preempted an originating customer there; `None` is the printed rule's last "else",
/// both outgoing groups full of transit customers — which the transit guarantee makes
/// impossible for a customer admitted by its incoming group (n_in < m leaves at most
/// 2m − 1 transit customers on the outputs).
pub fn transit_route(x: &State, m: u32, preferred: Level) -> Option<(Level, bool)> {
    let n = occupancy(x);
    let try_group = |g: Level| {
        let (occ, orig) = match g {
            Level::Top => (n[1], x[XB]),
            Level::Bottom => (n[3], x[XD]),
        };
        if occ < m {
            Some((g, false))
        } else if orig > 0 {
            Some((g, true))
        } else {
            None
        }
    };
    try_group(preferred).or_else(|| try_group(preferred.other()))
}

/// The rates that drive Q̂ (per node; time in units of the mean worm length when μ = 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// λ₁*: originating customers offered to each outgoing group.
    pub originating: f64,
    /// λ₂*: transit customers offered to each incoming group.
    pub transit: f64,
    /// λ₃*: terminating customers offered to each incoming group.
    pub terminating: f64,
    /// ε: extra departure rate of terminating and transit customers (preemption at their
    /// source).
    pub epsilon: f64,
    /// μ: service rate (1 / mean worm length).
    pub mu: f64,
    /// θ: probability that a transit customer prefers the outgoing group of its own level.
    pub theta: f64,
}

impl Rates {
    /// Whether every rate is finite and non-negative and θ is a probability.
    pub fn is_valid(&self) -> bool {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        ok(self.originating)
            && ok(self.transit)
            && ok(self.terminating)
            && ok(self.epsilon)
            && self.mu.is_finite()
            && self.mu > 0.0
            && (0.0..=1.0).contains(&self.theta)
    }
}

/// Total rate out of state `x` (the negated diagonal of the generator).
#[inline]
pub fn outflow(x: &State, m: u32, r: &Rates) -> f64 {
    let n = occupancy(x);
    let mut q = 0.0;
    if n[1] < m {
        q += r.originating;
    }
    if n[3] < m {
        q += r.originating;
    }
    if n[0] < m {
        q += r.transit + r.terminating;
    }
    if n[2] < m {
        q += r.transit + r.terminating;
    }
    let v = |i: usize| x[i] as f64;
    let slow = v(XB) + v(XD);
    let fast = v(XA) + v(XC) + v(XAB) + v(XAD) + v(XCB) + v(XCD);
    q + r.mu * slow + (r.mu + r.epsilon) * fast
}

/// Calls `f(target, rate)` for every transition out of `x` (rates of transitions that
/// reach the same target are reported separately). Transitions that would leave the
/// state unchanged (customers lost at a full group) are not reported.
///
/// # Panics
/// If an admitted transit customer finds no server (the transit guarantee, see
/// [`transit_route`]); it cannot happen for a state of the chain.
pub fn for_each_transition(x: &State, m: u32, r: &Rates, mut f: impl FnMut(State, f64)) {
    let n = occupancy(x);
    let plus = |i: usize| {
        let mut y = *x;
        y[i] += 1;
        y
    };
    let minus = |i: usize| {
        let mut y = *x;
        y[i] -= 1;
        y
    };
    // Originating arrivals at the outgoing groups.
    if n[1] < m {
        f(plus(XB), r.originating);
    }
    if n[3] < m {
        f(plus(XD), r.originating);
    }
    // Terminating and transit arrivals at the incoming groups.
    for (input, n_in, term) in [(Level::Top, n[0], XA), (Level::Bottom, n[2], XC)] {
        if n_in >= m {
            continue;
        }
        f(plus(term), r.terminating);
        for (preferred, w) in [(input, r.theta), (input.other(), 1.0 - r.theta)] {
            if w == 0.0 {
                continue;
            }
            let (out, preempts) = transit_route(x, m, preferred)
                .expect("transit guarantee violated: an admitted transit customer found no server");
            let mut y = plus(transit_index(input, out));
            if preempts {
                y[orig_index(out)] -= 1;
            }
            f(y, r.transit * w);
        }
    }
    // Departures.
    let fast = r.mu + r.epsilon;
    for (i, rate) in [
        (XA, fast),
        (XB, r.mu),
        (XC, fast),
        (XD, r.mu),
        (XAB, fast),
        (XAD, fast),
        (XCB, fast),
        (XCD, fast),
    ] {
        if x[i] > 0 {
            f(minus(i), rate * x[i] as f64);
        }
    }
}

/// Calls `f(source, rate)` for every transition *into* `x` (the transposed view of
/// [`for_each_transition`], derived by hand: a balance equation sums the flows into its
/// state). Rates of transitions from the same source are reported summed. It serves the
/// residual and is the reference the fast sweep of [`crate::model::deflection_ms::iterative`] is tested
/// against.
#[inline]
pub fn for_each_predecessor(x: &State, m: u32, r: &Rates, mut f: impl FnMut(State, f64)) {
    let n = occupancy(x);
    let v = |i: usize| x[i] as f64;
    let with = |changes: &[(usize, i8)]| {
        let mut y = *x;
        for &(i, d) in changes {
            y[i] = (y[i] as i16 + d as i16) as u8;
        }
        y
    };
    // Arrivals of originating and terminating customers.
    if x[XB] > 0 {
        f(with(&[(XB, -1)]), r.originating);
    }
    if x[XD] > 0 {
        f(with(&[(XD, -1)]), r.originating);
    }
    if x[XA] > 0 {
        f(with(&[(XA, -1)]), r.terminating);
    }
    if x[XC] > 0 {
        f(with(&[(XC, -1)]), r.terminating);
    }
    // Departures: the source holds one more customer, so its groups must have had room.
    let fast = r.mu + r.epsilon;
    let room = [n[0] < m, n[1] < m, n[2] < m, n[3] < m];
    if room[0] {
        f(with(&[(XA, 1)]), (v(XA) + 1.0) * fast);
    }
    if room[2] {
        f(with(&[(XC, 1)]), (v(XC) + 1.0) * fast);
    }
    if room[1] {
        f(with(&[(XB, 1)]), (v(XB) + 1.0) * r.mu);
    }
    if room[3] {
        f(with(&[(XD, 1)]), (v(XD) + 1.0) * r.mu);
    }
    if room[0] && room[1] {
        f(with(&[(XAB, 1)]), (v(XAB) + 1.0) * fast);
    }
    if room[0] && room[3] {
        f(with(&[(XAD, 1)]), (v(XAD) + 1.0) * fast);
    }
    if room[2] && room[1] {
        f(with(&[(XCB, 1)]), (v(XCB) + 1.0) * fast);
    }
    if room[2] && room[3] {
        f(with(&[(XCD, 1)]), (v(XCD) + 1.0) * fast);
    }
    // Transit arrivals. A customer ends in output g either because it preferred g, or
    // because it preferred the other output and found it full of transit customers; the
    // transit counts of that other output are the same before and after, so the test
    // can be made on `x`. It took a free server (source: one transit customer fewer) or
    // preempted (source: also one more originating customer, possible only if g is full
    // in `x`).
    let b_transit_full = (x[XAB] + x[XCB]) as u32 == m;
    let d_transit_full = (x[XAD] + x[XCD]) as u32 == m;
    let th = r.theta;
    for (idx, out_orig, out_full, w) in [
        // a → b: prefers b (θ), or prefers d (1 − θ) and d is full of transit.
        (
            XAB,
            XB,
            n[1] == m,
            th + if d_transit_full { 1.0 - th } else { 0.0 },
        ),
        // a → d: prefers d (1 − θ), or prefers b (θ) and b is full of transit.
        (
            XAD,
            XD,
            n[3] == m,
            (1.0 - th) + if b_transit_full { th } else { 0.0 },
        ),
        // c → b: prefers b (1 − θ), or prefers d (θ) and d is full of transit.
        (
            XCB,
            XB,
            n[1] == m,
            (1.0 - th) + if d_transit_full { th } else { 0.0 },
        ),
        // c → d: prefers d (θ), or prefers b (1 − θ) and b is full of transit.
        (
            XCD,
            XD,
            n[3] == m,
            th + if b_transit_full { 1.0 - th } else { 0.0 },
        ),
    ] {
        if x[idx] == 0 || w == 0.0 {
            continue;
        }
        let rate = r.transit * w;
        f(with(&[(idx, -1)]), rate);
        if out_full {
            f(with(&[(idx, -1), (out_orig, 1)]), rate);
        }
    }
}

/// The states of Q̂ for m virtual channels per link, in rank order, and the ranking.
///
/// Rank order: by transit tuple (X_ab, X_ad, X_cb, X_cd) lexicographically, then by
/// (X_a, X_c, X_b, X_d) in mixed radix; the four non-transit counts range independently
/// once the transit tuple is fixed, so a rank is a table look-up and three
/// multiply-adds.
#[derive(Clone, Debug)]
pub struct StateSpace {
    m: u32,
    states: Vec<State>,
    /// First rank of each transit tuple (index ((ab·(m+1) + ad)·(m+1) + cb)·(m+1) + cd);
    /// `u32::MAX` for infeasible tuples.
    offsets: Vec<u32>,
}

impl StateSpace {
    /// Enumerates the states for `m` virtual channels (1 ≤ m ≤ [`MAX_M`]).
    pub fn new(m: u32) -> Result<Self, ModelError> {
        if m == 0 || m > MAX_M {
            return Err(ModelError::BadInput(format!(
                "the node chain needs 1 ≤ m ≤ {MAX_M} virtual channels per link, got {m}"
            )));
        }
        let m1 = m + 1;
        let mut offsets = vec![u32::MAX; (m1 as usize).pow(4)];
        let mut states = Vec::with_capacity(state_count(m) as usize);
        for ab in 0..=m {
            for ad in 0..=m - ab {
                for cb in 0..=m - ab {
                    for cd in 0..=(m - cb).min(m - ad) {
                        let t = (((ab * m1 + ad) * m1 + cb) * m1 + cd) as usize;
                        offsets[t] = states.len() as u32;
                        for a in 0..=m - ab - ad {
                            for c in 0..=m - cb - cd {
                                for b in 0..=m - ab - cb {
                                    for d in 0..=m - ad - cd {
                                        states.push([a, b, c, d, ab, ad, cb, cd].map(|v| v as u8));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(StateSpace { m, states, offsets })
    }

    /// Virtual channels per link.
    pub fn m(&self) -> u32 {
        self.m
    }

    /// Number of states.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Never: every m ≥ 1 has states.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// The states in rank order.
    pub fn states(&self) -> &[State] {
        &self.states
    }

    /// Rank of a state of the chain (unchecked: `x` must satisfy the group limits; use
    /// [`StateSpace::index`] otherwise).
    #[inline]
    pub fn rank(&self, x: &State) -> usize {
        let m = self.m as usize;
        let m1 = m + 1;
        let [a, b, c, d, ab, ad, cb, cd] = x.map(|v| v as usize);
        let t = ((ab * m1 + ad) * m1 + cb) * m1 + cd;
        let off = self.offsets[t] as usize;
        let rc = m1 - cb - cd;
        let rb = m1 - ab - cb;
        let rd = m1 - ad - cd;
        off + ((a * rc + c) * rb + b) * rd + d
    }

    /// First rank of the states with transit tuple \[X_ab, X_ad, X_cb, X_cd\] = `t`, or
    /// `None` if no state has it.
    pub fn tuple_offset(&self, t: [u32; 4]) -> Option<usize> {
        let m1 = self.m + 1;
        if t.iter().any(|&v| v > self.m) {
            return None;
        }
        let i = (((t[0] * m1 + t[1]) * m1 + t[2]) * m1 + t[3]) as usize;
        match self.offsets[i] {
            u32::MAX => None,
            o => Some(o as usize),
        }
    }

    /// Rank of `x`, or `None` if `x` breaks a group limit.
    pub fn index(&self, x: &State) -> Option<usize> {
        occupancy(x)
            .iter()
            .all(|&n| n <= self.m)
            .then(|| self.rank(x))
    }
}

/// Number of states of Q̂ for m virtual channels per link, by the same enumeration as
/// [`StateSpace::new`] without storing it.
pub fn state_count(m: u32) -> u64 {
    let mut total = 0u64;
    for ab in 0..=m {
        for ad in 0..=m - ab {
            for cb in 0..=m - ab {
                for cd in 0..=(m - cb).min(m - ad) {
                    total += ((m - ab - ad + 1)
                        * (m - cb - cd + 1)
                        * (m - ab - cb + 1)
                        * (m - ad - cd + 1)) as u64;
                }
            }
        }
    }
    total
}

/// Which form of eq. (8) conditions on the tagged originating worm (spec A7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum EpsilonForm {
    /// As printed: states with X_b ≠ 0 weighted by π(X̄) / Σ_{X_b≠0} π.
    #[default]
    AsPrinted,
    /// Palm (size-biased): weighted by X_b π(X̄) / Σ X_b π, the chance that a tagged
    /// originating worm sees state X̄.
    SizeBiased,
}

/// What the outer iteration reads off a stationary distribution of Q̂.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainOutputs {
    /// b = P(n_a = m): an incoming group is full.
    pub b: f64,
    /// B, eq. (6): P(n_b = m), an originating worm is blocked.
    pub block: f64,
    /// p, eq. (7): an admitted transit worm fails on its preferred outgoing group.
    pub deflect: f64,
    /// ε, eq. (8) as printed.
    pub epsilon_as_printed: f64,
    /// ε, eq. (8) size-biased (spec A7).
    pub epsilon_size_biased: f64,
}

impl ChainOutputs {
    /// ε in the chosen form.
    pub fn epsilon(&self, form: EpsilonForm) -> f64 {
        match form {
            EpsilonForm::AsPrinted => self.epsilon_as_printed,
            EpsilonForm::SizeBiased => self.epsilon_size_biased,
        }
    }
}

/// Eqs. (6), (7), (8) on the distribution `pi` (rank order of `space`). The sums run over
/// the printed conditions exactly; θ and λ₂* come from `r`.
pub fn outputs(space: &StateSpace, pi: &[f64], r: &Rates) -> ChainOutputs {
    let m = space.m();
    let th = r.theta;
    let (mut b, mut block, mut z, mut p_num) = (0.0, 0.0, 0.0, 0.0);
    let (mut zb, mut zb_size, mut eps_num, mut eps_num_size) = (0.0, 0.0, 0.0, 0.0);
    for (x, &w) in space.states().iter().zip(pi) {
        let n = occupancy(x);
        let d_transit_full = (x[XAD] + x[XCD]) as u32 == m;
        if n[0] == m {
            b += w;
        }
        if n[1] == m {
            block += w;
        }
        if n[0] != m {
            z += w;
            if (x[XAB] + x[XCB]) as u32 == m {
                p_num += th * w;
            }
            if d_transit_full {
                p_num += (1.0 - th) * w;
            }
        }
        if x[XB] != 0 {
            let xb = x[XB] as f64;
            zb += w;
            zb_size += xb * w;
            if n[1] == m {
                // Routing weight of a transit arrival landing on a full b that holds
                // originating worms: the four terms of eq. (8).
                let mut route = 0.0;
                if n[0] != m {
                    route += th;
                    if d_transit_full {
                        route += 1.0 - th;
                    }
                }
                if n[2] != m {
                    route += 1.0 - th;
                    if d_transit_full {
                        route += th;
                    }
                }
                eps_num += route * w / xb;
                eps_num_size += route * w;
            }
        }
    }
    let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
    ChainOutputs {
        b,
        block,
        deflect: ratio(p_num, z),
        epsilon_as_printed: r.transit * ratio(eps_num, zb),
        epsilon_size_biased: r.transit * ratio(eps_num_size, zb_size),
    }
}

/// Relative global-balance residual of `pi`: ‖πQ‖₁ / Σ_x π(x) q(x), the share of the
/// probability flow that does not balance (0 for the exact stationary distribution;
/// independent of the time unit).
pub fn residual(space: &StateSpace, pi: &[f64], r: &Rates) -> f64 {
    let m = space.m();
    let (mut res, mut flow) = (0.0, 0.0);
    for (x, &w) in space.states().iter().zip(pi) {
        let mut inflow = 0.0;
        for_each_predecessor(x, m, r, |y, rate| inflow += pi[space.rank(&y)] * rate);
        let out = w * outflow(x, m, r);
        res += (inflow - out).abs();
        flow += out;
    }
    if flow > 0.0 {
        res / flow
    } else {
        res
    }
}

//! The matching of one router's allocator in one cycle, for the allocators BookSim2
//! names: separable input first and output first (with round-robin, fixed-priority or
//! matrix arbiters), iSLIP and wavefront. Requesters ("inputs": input VCs, or crossbar
//! inputs) ask for resources ("outputs": output VCs, or crossbar outputs); the matcher
//! returns at most one output per input and one input per output, each a requested
//! pair, and keeps the arbiters' state of every router of a partition.
//!
//! It does not know what its inputs and outputs are: the VC allocator
//! ([`crate::router::vc_alloc`]) and the switch allocator ([`crate::router::crossbar`])
//! build the requests and apply the matches. routemu's own allocator (`PortLevel`, the
//! default) lives in those two modules.
//!
//! Each request carries a priority class at its input and at its output (BookSim's
//! `in_pri` and `out_pri`, reduced to high and low: a header's preferred VCs against its
//! fallback ones, a flit whose VC is allocated against a speculative one). The
//! separable allocators and wavefront serve the high class first; iSLIP, as BookSim's,
//! ignores priorities. Every pass is a few linear scans of the request list (no
//! allocation per cycle; the scratch arrays are sized for the largest router).

use crate::config::{Allocator, Arbiter};
use crate::foundation::error::Result;
use crate::router::alloc::arbiter::{Arbiters, FIXED, MATRIX, RR};

/// No match (and no request).
const NONE: u16 = u16::MAX;
/// No best request yet: (key, request index).
const NO_BEST: (u64, u32) = (u64::MAX, u32::MAX);

/// One request of one cycle: requester `input` asks for resource `output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The requester.
    pub input: u16,
    /// The resource.
    pub output: u16,
    /// Of the high priority class at the requester's arbiter (BookSim's `in_pri`).
    pub in_high: bool,
    /// Of the high priority class at the resource's arbiter (BookSim's `out_pri`).
    pub out_high: bool,
}

/// The matchers of the routers of a partition: one allocator's state per router, and
/// the scratch of the router being allocated.
#[derive(Clone, Debug)]
pub struct Matcher {
    kind: Allocator,
    inputs: usize,
    outputs: usize,
    /// `[router][input]`: each requester's arbiter over the outputs (iSLIP: its accept
    /// pointer).
    in_arb: Arbiters,
    /// `[router][output]`: each resource's arbiter over the inputs (iSLIP: its grant
    /// pointer).
    out_arb: Arbiters,
    /// `[router]`: the wavefront's first diagonal.
    diag: Vec<u16>,
    /// This cycle's requests.
    reqs: Vec<Request>,
    /// `[input]`: its output this cycle (NONE: unmatched).
    in_match: Vec<u16>,
    /// `[output]`: its input this cycle (NONE: unmatched).
    out_match: Vec<u16>,
    /// `[input]`: the best request seen by the input's arbiter in a pass.
    in_best: Vec<(u64, u32)>,
    /// `[output]`: the best request seen by the output's arbiter in a pass.
    out_best: Vec<(u64, u32)>,
    /// The wavefront's order of the requests: (key, request index).
    order: Vec<(u64, u32)>,
    /// This cycle's matches: (input, output).
    matches: Vec<(u16, u16)>,
    /// `[output]`: scratch of [`Matcher::separable_masks`], the inputs whose request
    /// of high / low class reached the output's arbiter.
    at_out: Vec<(u64, u64)>,
    /// `[input]`: the same at the inputs' arbiters (output first).
    at_in: Vec<(u64, u64)>,
}

/// Adds `bit` to a (high, low) pair of masks, to the high one if `high`.
#[inline(always)]
fn add(masks: &mut (u64, u64), high: bool, bit: usize) {
    if high {
        masks.0 |= 1 << bit;
    } else {
        masks.1 |= 1 << bit;
    }
}

/// A request's sort key at an arbiter: its class first (high before low), then the
/// arbiter's rank.
#[inline]
fn ranked(high: bool, rank: u32) -> u64 {
    ((!high as u64) << 32) | rank as u64
}

impl Matcher {
    /// The arbiters a matcher of `kind` keeps per requester and per resource, and
    /// whether it keeps any.
    fn arbiters_of(kind: Allocator, arbiter: Arbiter) -> (Arbiter, bool) {
        match kind {
            Allocator::PortLevel
            | Allocator::SeparableInputFirst
            | Allocator::SeparableOutputFirst => (arbiter, true),
            Allocator::ISlip { .. } => (Arbiter::RoundRobin, true),
            Allocator::Wavefront => (Arbiter::RoundRobin, false),
        }
    }

    /// Bytes per router of the tables [`Matcher::new`] allocates for `routers` routers
    /// (its arbiters, the wavefront's diagonal); the scratch shared by all routers is
    /// not counted.
    pub fn table_bytes(kind: Allocator, arbiter: Arbiter, inputs: usize, outputs: usize) -> u64 {
        let (arb, with_arbiters) = Self::arbiters_of(kind, arbiter);
        let arbiters = if with_arbiters {
            inputs as u64 * Arbiters::table_bytes(arb, outputs)
                + outputs as u64 * Arbiters::table_bytes(arb, inputs)
        } else {
            0
        };
        let diag = if kind == Allocator::Wavefront {
            std::mem::size_of::<u16>() as u64
        } else {
            0
        };
        arbiters + diag
    }

    /// Matchers of `kind` for `routers` routers of `inputs` requesters and `outputs`
    /// resources each; `arbiter` for the separable allocators (iSLIP's pointers are
    /// round-robin whatever it says, the wavefront has none). An error when the tables
    /// cannot be had.
    pub fn new(
        kind: Allocator,
        arbiter: Arbiter,
        routers: usize,
        inputs: usize,
        outputs: usize,
    ) -> Result<Self> {
        use crate::foundation::limits::zeroed_table;
        if inputs >= NONE as usize || outputs >= NONE as usize {
            return Err(crate::foundation::error::Error::config(format!(
                "an allocator of {inputs} requesters and {outputs} resources: at most {} each",
                NONE - 1
            )));
        }
        let (arb, with_arbiters) = Self::arbiters_of(kind, arbiter);
        let count = |per: usize| {
            if with_arbiters {
                routers.checked_mul(per).ok_or_else(|| {
                    crate::foundation::error::Error::config("allocator tables: too many routers")
                })
            } else {
                Ok(0)
            }
        };
        Ok(Matcher {
            kind,
            inputs,
            outputs,
            in_arb: Arbiters::new(arb, count(inputs)?, outputs)?,
            out_arb: Arbiters::new(arb, count(outputs)?, inputs)?,
            diag: zeroed_table(
                Some(if kind == Allocator::Wavefront {
                    routers
                } else {
                    0
                }),
                "wavefront diagonal",
            )?,
            reqs: Vec::with_capacity(inputs.max(outputs)),
            in_match: vec![NONE; inputs],
            out_match: vec![NONE; outputs],
            in_best: vec![NO_BEST; inputs],
            out_best: vec![NO_BEST; outputs],
            order: Vec::new(),
            matches: Vec::with_capacity(inputs.min(outputs)),
            at_out: vec![(0, 0); outputs],
            at_in: vec![(0, 0); inputs],
        })
    }

    /// Forgets the last cycle's requests and matches.
    #[inline]
    pub fn clear(&mut self) {
        self.matches.clear();
        self.reqs.clear();
    }

    /// Adds a request of this cycle (at most one per input and output pair).
    #[inline]
    pub fn push(&mut self, r: Request) {
        debug_assert!((r.input as usize) < self.inputs && (r.output as usize) < self.outputs);
        self.reqs.push(r);
    }

    /// Sets the priority classes of request `r` of this cycle.
    #[inline]
    pub fn set_class(&mut self, r: usize, in_high: bool, out_high: bool) {
        self.reqs[r].in_high = in_high;
        self.reqs[r].out_high = out_high;
    }

    /// This cycle's requests.
    #[inline]
    pub fn requests(&self) -> &[Request] {
        &self.reqs
    }

    /// Matches this cycle's requests at router `router` and updates its arbiters;
    /// returns the matches, (input, output).
    pub fn allocate(&mut self, router: usize) -> &[(u16, u16)] {
        if !self.reqs.is_empty() {
            match self.kind {
                // routemu's own allocator does not come here (vc_alloc, crossbar); its
                // nearest matching is input first.
                Allocator::PortLevel | Allocator::SeparableInputFirst => {
                    self.separable(router, true)
                }
                Allocator::SeparableOutputFirst => self.separable(router, false),
                Allocator::ISlip { iterations } => self.islip(router, iterations),
                Allocator::Wavefront => self.wavefront(router),
            }
            // `in_match` and `out_match` are all NONE between calls (the passes read
            // them for this call's matches only).
            for &(i, o) in &self.matches {
                self.in_match[i as usize] = NONE;
                self.out_match[o as usize] = NONE;
            }
        }
        &self.matches
    }

    /// Matches router `router`'s only request of this cycle, `input` asking for
    /// `output`: every allocator grants a lone request, and its arbiters move as
    /// [`Matcher::allocate`] would move them for it (iSLIP's pointers on its first
    /// iteration, the wavefront's first diagonal by one). Forgets the last matches.
    pub fn single(&mut self, router: usize, input: usize, output: usize) {
        match self.in_arb.code() {
            RR => self.single_as::<RR>(router, input, output),
            FIXED => self.single_as::<FIXED>(router, input, output),
            _ => self.single_as::<MATRIX>(router, input, output),
        }
    }

    /// [`Matcher::single`] for a matcher whose [`Matcher::arbiter_code`] is `K`.
    #[inline(always)]
    pub fn single_as<const K: u8>(&mut self, router: usize, input: usize, output: usize) {
        debug_assert!(input < self.inputs && output < self.outputs);
        self.matches.clear();
        if self.kind == Allocator::Wavefront {
            let n = self.inputs.max(self.outputs);
            let first = self.diag[router] as usize;
            self.diag[router] = if first + 1 == n { 0 } else { first as u16 + 1 };
        } else {
            self.in_arb
                .serve_as::<K>(router * self.inputs + input, output);
            self.out_arb
                .serve_as::<K>(router * self.outputs + output, input);
        }
    }

    /// The [`crate::router::alloc::arbiter::Arbiters::code`] of this matcher's arbiters
    /// (iSLIP's and the wavefront's are round-robin): the `K` of
    /// [`Matcher::single_as`] and [`Matcher::separable_masks`].
    #[inline]
    pub fn arbiter_code(&self) -> u8 {
        self.in_arb.code()
    }

    /// Whether [`Matcher::separable_masks`] serves this matcher: a separable allocator
    /// of at most 64 requesters and 64 resources.
    pub fn takes_masks(&self) -> bool {
        matches!(
            self.kind,
            Allocator::SeparableInputFirst | Allocator::SeparableOutputFirst
        ) && self.inputs <= 64
            && self.outputs <= 64
    }

    /// The separable matching of router `router` (only when [`Matcher::takes_masks`])
    /// from requests given as masks rather than pushed: `reqs[i]` = (high, low), the
    /// resources requester i asks for with a request of high and of low class, for the
    /// requesters of `active`. `OUT_CLASSES`: the class holds at both arbiters (the
    /// switch allocator's requests, `in_high == out_high`); else only at the
    /// requester's, every request being of high class at the resource's (the VC
    /// allocator's, `out_high` always). The matches and the arbiters' moves are those
    /// [`Matcher::allocate`] makes from the same requests pushed one by one — a
    /// request's key at an arbiter is unique, so no order among the requests matters —
    /// but without a request list the pass costs a few bit operations per requester and
    /// resource; the matches come in resource order (input first) or requester order
    /// (output first). Forgets the last matches.
    pub fn separable_masks<const OUT_CLASSES: bool>(
        &mut self,
        router: usize,
        active: u64,
        reqs: &[(u64, u64)],
    ) -> &[(u16, u16)] {
        match self.arbiter_code() {
            RR => self.separable_masks_as::<OUT_CLASSES, RR>(router, active, reqs),
            FIXED => self.separable_masks_as::<OUT_CLASSES, FIXED>(router, active, reqs),
            _ => self.separable_masks_as::<OUT_CLASSES, MATRIX>(router, active, reqs),
        }
    }

    /// [`Matcher::separable_masks`] for a matcher whose [`Matcher::arbiter_code`] is
    /// `K`, a constant so that no arbiter operation dispatches on the kind.
    #[inline(always)]
    pub fn separable_masks_as<const OUT_CLASSES: bool, const K: u8>(
        &mut self,
        router: usize,
        active: u64,
        reqs: &[(u64, u64)],
    ) -> &[(u16, u16)] {
        debug_assert!(self.takes_masks());
        debug_assert_eq!(K, self.arbiter_code());
        self.matches.clear();
        let (ia, oa) = (router * self.inputs, router * self.outputs);
        // The class of a pick: high requests first, the arbiter's order within a class.
        let choose = |(high, low): (u64, u64)| {
            if high != 0 {
                (high, true)
            } else {
                (low, false)
            }
        };
        if self.kind == Allocator::SeparableInputFirst {
            let mut reached = 0u64;
            for i in crate::routing::selection::BitIter(active) {
                let (m, high) = choose(reqs[i]);
                if m == 0 {
                    continue;
                }
                let o = self.in_arb.pick_as::<K>(ia + i, m);
                add(&mut self.at_out[o], high || !OUT_CLASSES, i);
                reached |= 1 << o;
            }
            for o in crate::routing::selection::BitIter(reached) {
                let (m, _) = choose(std::mem::take(&mut self.at_out[o]));
                let i = self.out_arb.pick_as::<K>(oa + o, m);
                self.matches.push((i as u16, o as u16));
                self.in_arb.serve_as::<K>(ia + i, o);
                self.out_arb.serve_as::<K>(oa + o, i);
            }
        } else {
            let mut wanted = 0u64;
            for i in crate::routing::selection::BitIter(active) {
                let (high, low) = reqs[i];
                for o in crate::routing::selection::BitIter(high | low) {
                    add(&mut self.at_out[o], high >> o & 1 == 1 || !OUT_CLASSES, i);
                }
                wanted |= high | low;
            }
            let mut reached = 0u64;
            for o in crate::routing::selection::BitIter(wanted) {
                let (m, high) = choose(std::mem::take(&mut self.at_out[o]));
                let i = self.out_arb.pick_as::<K>(oa + o, m);
                // The input's choice among its grants ranks them by its own class.
                let in_high = if OUT_CLASSES {
                    high
                } else {
                    reqs[i].0 >> o & 1 == 1
                };
                add(&mut self.at_in[i], in_high, o);
                reached |= 1 << i;
            }
            for i in crate::routing::selection::BitIter(reached) {
                let (m, _) = choose(std::mem::take(&mut self.at_in[i]));
                let o = self.in_arb.pick_as::<K>(ia + i, m);
                self.matches.push((i as u16, o as u16));
                self.in_arb.serve_as::<K>(ia + i, o);
                self.out_arb.serve_as::<K>(oa + o, i);
            }
        }
        &self.matches
    }

    /// Resets the best-request slots the requests use.
    #[inline]
    fn reset_best(&mut self) {
        for r in &self.reqs {
            self.in_best[r.input as usize] = NO_BEST;
            self.out_best[r.output as usize] = NO_BEST;
        }
    }

    #[inline]
    fn matched(&mut self, i: u16, o: u16) {
        self.in_match[i as usize] = o;
        self.out_match[o as usize] = i;
        self.matches.push((i, o));
    }

    /// One separable pass: every input's arbiter picks one of its requests and every
    /// output's arbiter grants one of the inputs that picked it (input first), or every
    /// output's arbiter picks one requester and every input accepts one of the outputs
    /// that picked it (output first). Both arbiters move only on a match.
    fn separable(&mut self, router: usize, input_first: bool) {
        self.reset_best();
        let (ia, oa) = (router * self.inputs, router * self.outputs);
        for (k, r) in self.reqs.iter().enumerate() {
            let (i, o) = (r.input as usize, r.output as usize);
            if input_first {
                let key = ranked(r.in_high, self.in_arb.key(ia + i, o));
                if key < self.in_best[i].0 {
                    self.in_best[i] = (key, k as u32);
                }
            } else {
                let key = ranked(r.out_high, self.out_arb.key(oa + o, i));
                if key < self.out_best[o].0 {
                    self.out_best[o] = (key, k as u32);
                }
            }
        }
        for (k, r) in self.reqs.iter().enumerate() {
            let (i, o) = (r.input as usize, r.output as usize);
            if input_first && self.in_best[i].1 == k as u32 {
                let key = ranked(r.out_high, self.out_arb.key(oa + o, i));
                if key < self.out_best[o].0 {
                    self.out_best[o] = (key, k as u32);
                }
            } else if !input_first && self.out_best[o].1 == k as u32 {
                let key = ranked(r.in_high, self.in_arb.key(ia + i, o));
                if key < self.in_best[i].0 {
                    self.in_best[i] = (key, k as u32);
                }
            }
        }
        for k in 0..self.reqs.len() {
            let r = self.reqs[k];
            let (i, o) = (r.input as usize, r.output as usize);
            if self.in_best[i].1 == k as u32 && self.out_best[o].1 == k as u32 {
                self.matched(r.input, r.output);
                self.in_arb.serve(ia + i, o);
                self.out_arb.serve(oa + o, i);
            }
        }
    }

    /// iSLIP: per iteration, every unmatched output grants the unmatched requester
    /// nearest at or after its grant pointer, every input accepts the granting output
    /// nearest at or after its accept pointer; the pointers move just past an accepted
    /// grant of the first iteration only.
    fn islip(&mut self, router: usize, iterations: u32) {
        let (ia, oa) = (router * self.inputs, router * self.outputs);
        for iter in 0..iterations {
            self.reset_best();
            for (k, r) in self.reqs.iter().enumerate() {
                let (i, o) = (r.input as usize, r.output as usize);
                if self.in_match[i] == NONE && self.out_match[o] == NONE {
                    let key = self.out_arb.key(oa + o, i) as u64;
                    if key < self.out_best[o].0 {
                        self.out_best[o] = (key, k as u32);
                    }
                }
            }
            for (k, r) in self.reqs.iter().enumerate() {
                let (i, o) = (r.input as usize, r.output as usize);
                if self.out_best[o].1 == k as u32 {
                    let key = self.in_arb.key(ia + i, o) as u64;
                    if key < self.in_best[i].0 {
                        self.in_best[i] = (key, k as u32);
                    }
                }
            }
            let before = self.matches.len();
            for k in 0..self.reqs.len() {
                let r = self.reqs[k];
                let (i, o) = (r.input as usize, r.output as usize);
                if self.in_best[i].1 == k as u32 {
                    self.matched(r.input, r.output);
                    if iter == 0 {
                        self.out_arb.serve(oa + o, i);
                        self.in_arb.serve(ia + i, o);
                    }
                }
            }
            if self.matches.len() == before {
                break;
            }
        }
    }

    /// Wavefront: the cells of the square request matrix (side the larger of inputs
    /// and outputs) visited diagonal by diagonal from this router's first diagonal
    /// (input + output ≡ first + p), outputs in order within a diagonal, each priority
    /// class in turn (high output class first, then high input class); a request is
    /// granted when its input and output are both still free. The first diagonal moves
    /// by one in every cycle with requests.
    fn wavefront(&mut self, router: usize) {
        let n = self.inputs.max(self.outputs);
        let first = self.diag[router] as usize;
        self.order.clear();
        for (k, r) in self.reqs.iter().enumerate() {
            let (i, o) = (r.input as usize, r.output as usize);
            let p = (i + o + n - first) % n;
            let class = ((!r.out_high as u64) << 1) | !r.in_high as u64;
            self.order
                .push(((class << 40) | ((p as u64) << 20) | o as u64, k as u32));
        }
        self.order.sort_unstable();
        for j in 0..self.order.len() {
            let r = self.reqs[self.order[j].1 as usize];
            if self.in_match[r.input as usize] == NONE && self.out_match[r.output as usize] == NONE
            {
                self.matched(r.input, r.output);
            }
        }
        self.diag[router] = ((first + 1) % n) as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Allocator; 5] = [
        Allocator::SeparableInputFirst,
        Allocator::SeparableOutputFirst,
        Allocator::ISlip { iterations: 1 },
        Allocator::ISlip { iterations: 3 },
        Allocator::Wavefront,
    ];

    /// Matches of `kind` (round-robin arbiters) on one router for `reqs` (input,
    /// output), all of one class.
    fn run(m: &mut Matcher, reqs: &[(u16, u16)]) -> Vec<(u16, u16)> {
        m.clear();
        for &(input, output) in reqs {
            m.push(Request {
                input,
                output,
                in_high: true,
                out_high: true,
            });
        }
        let mut got = m.allocate(0).to_vec();
        got.sort_unstable();
        got
    }

    /// A small random request matrix of `n_in` × `n_out` (xorshift from `seed`).
    fn random_matrix(seed: u64, n_in: u16, n_out: u16) -> Vec<(u16, u16)> {
        let mut x = seed | 1;
        let mut out = Vec::new();
        for i in 0..n_in {
            for o in 0..n_out {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x.is_multiple_of(3) {
                    out.push((i, o));
                }
            }
        }
        out
    }

    fn is_maximal(reqs: &[(u16, u16)], got: &[(u16, u16)]) -> bool {
        reqs.iter()
            .all(|&(i, o)| got.iter().any(|&(gi, go)| gi == i || go == o))
    }

    #[test]
    fn every_allocator_grants_only_requests_and_one_per_input_and_output() {
        for kind in ALL {
            for arbiter in [Arbiter::RoundRobin, Arbiter::Matrix, Arbiter::FixedPriority] {
                let mut m = Matcher::new(kind, arbiter, 1, 5, 4).unwrap();
                for seed in 1..200 {
                    let reqs = random_matrix(seed, 5, 4);
                    let got = run(&mut m, &reqs);
                    for &(i, o) in &got {
                        assert!(
                            reqs.contains(&(i, o)),
                            "{kind:?}: granted unrequested {i}→{o}"
                        );
                        assert_eq!(got.iter().filter(|g| g.0 == i).count(), 1, "{kind:?}");
                        assert_eq!(got.iter().filter(|g| g.1 == o).count(), 1, "{kind:?}");
                    }
                    if !reqs.is_empty() {
                        assert!(!got.is_empty(), "{kind:?}: a request and no grant");
                    }
                }
            }
        }
    }

    #[test]
    fn a_lone_request_is_granted_and_moves_the_arbiters_as_a_pushed_one_does() {
        for kind in ALL {
            for arbiter in [Arbiter::RoundRobin, Arbiter::Matrix, Arbiter::FixedPriority] {
                let mut listed = Matcher::new(kind, arbiter, 2, 4, 3).unwrap();
                let mut lone = listed.clone();
                for seed in 1..300u64 {
                    let router = (seed % 2) as usize;
                    let (i, o) = ((seed * 7 % 4) as u16, (seed * 5 % 3) as u16);
                    assert_eq!(run_at(&mut listed, router, &[(i, o)]), [(i, o)]);
                    lone.single(router, i as usize, o as usize);
                    // Same state: the next mixed request matrix matches alike.
                    let reqs = random_matrix(seed, 4, 3);
                    assert_eq!(
                        run_at(&mut listed, router, &reqs),
                        run_at(&mut lone, router, &reqs),
                        "{kind:?} {arbiter:?}, seed {seed}"
                    );
                }
            }
        }
    }

    /// As [`run`], at router `router`.
    fn run_at(m: &mut Matcher, router: usize, reqs: &[(u16, u16)]) -> Vec<(u16, u16)> {
        m.clear();
        for &(input, output) in reqs {
            m.push(Request {
                input,
                output,
                in_high: true,
                out_high: true,
            });
        }
        let mut got = m.allocate(router).to_vec();
        got.sort_unstable();
        got
    }

    #[test]
    fn masks_match_as_the_request_list_does_round_after_round() {
        for kind in [
            Allocator::SeparableInputFirst,
            Allocator::SeparableOutputFirst,
        ] {
            for arbiter in [Arbiter::RoundRobin, Arbiter::Matrix, Arbiter::FixedPriority] {
                for out_classes in [true, false] {
                    let (n_in, n_out) = (6, 5);
                    let mut listed = Matcher::new(kind, arbiter, 2, n_in, n_out).unwrap();
                    let mut masked = listed.clone();
                    assert!(masked.takes_masks());
                    for seed in 1..400u64 {
                        let router = (seed % 2) as usize;
                        let reqs = random_matrix(seed, n_in as u16, n_out as u16);
                        let mut by_mask = vec![(0u64, 0u64); n_in];
                        let mut active = 0u64;
                        listed.clear();
                        for (k, &(i, o)) in reqs.iter().enumerate() {
                            // Classes from another draw of the seed: some requests low.
                            let high = !(seed.wrapping_mul(31) + k as u64).is_multiple_of(3);
                            listed.push(Request {
                                input: i,
                                output: o,
                                in_high: high,
                                out_high: high || !out_classes,
                            });
                            let m = &mut by_mask[i as usize];
                            if high {
                                m.0 |= 1 << o;
                            } else {
                                m.1 |= 1 << o;
                            }
                            active |= 1 << i;
                        }
                        let mut want = listed.allocate(router).to_vec();
                        let mut got = if out_classes {
                            masked
                                .separable_masks::<true>(router, active, &by_mask)
                                .to_vec()
                        } else {
                            masked
                                .separable_masks::<false>(router, active, &by_mask)
                                .to_vec()
                        };
                        want.sort_unstable();
                        got.sort_unstable();
                        assert_eq!(got, want, "{kind:?} {arbiter:?} {out_classes}, seed {seed}");
                    }
                }
            }
        }
    }

    #[test]
    fn islip_with_two_iterations_reaches_a_maximal_matching_one_iteration_misses() {
        // Both inputs want both outputs; both grant pointers at input 0, so both outputs
        // grant input 0, which accepts output 0: output 1 and input 1 stay idle after
        // one iteration, and the second iteration matches them.
        let reqs = [(0, 0), (0, 1), (1, 0), (1, 1)];
        let one = run(
            &mut Matcher::new(
                Allocator::ISlip { iterations: 1 },
                Arbiter::RoundRobin,
                1,
                2,
                2,
            )
            .unwrap(),
            &reqs,
        );
        assert_eq!(one, [(0, 0)]);
        assert!(!is_maximal(&reqs, &one));
        let two = run(
            &mut Matcher::new(
                Allocator::ISlip { iterations: 2 },
                Arbiter::RoundRobin,
                1,
                2,
                2,
            )
            .unwrap(),
            &reqs,
        );
        assert_eq!(two, [(0, 0), (1, 1)]);
        assert!(is_maximal(&reqs, &two));
    }

    #[test]
    fn islip_pointers_move_only_on_first_iteration_grants() {
        // Cycle 1: (0,0) in the first iteration, (1,1) in the second. Only output 0's
        // and input 0's pointers move: in cycle 2 output 1 still prefers input 0.
        let mut m = Matcher::new(
            Allocator::ISlip { iterations: 2 },
            Arbiter::RoundRobin,
            1,
            2,
            2,
        )
        .unwrap();
        let reqs = [(0, 0), (0, 1), (1, 0), (1, 1)];
        assert_eq!(run(&mut m, &reqs), [(0, 0), (1, 1)]);
        // Output 0 now prefers input 1, output 1 still input 0; input 0 prefers output 1.
        assert_eq!(run(&mut m, &reqs), [(0, 1), (1, 0)]);
    }

    #[test]
    fn the_wavefront_always_reaches_a_maximal_matching() {
        let mut m = Matcher::new(Allocator::Wavefront, Arbiter::RoundRobin, 1, 6, 5).unwrap();
        for seed in 1..300 {
            let reqs = random_matrix(seed, 6, 5);
            let got = run(&mut m, &reqs);
            assert!(is_maximal(&reqs, &got), "seed {seed}: {reqs:?} → {got:?}");
        }
    }

    /// The longest run of cycles in `cycles` in which some input of `reqs` (inputs
    /// 0..4) went unserved.
    fn longest_wait(m: &mut Matcher, reqs: &[(u16, u16)], cycles: usize) -> usize {
        let mut last = [0usize; 4];
        let mut worst = 0;
        for cycle in 1..=cycles {
            for (i, _) in run(m, reqs) {
                last[i as usize] = cycle;
            }
            worst = worst.max(last.iter().map(|&l| cycle - l).max().unwrap());
        }
        worst
    }

    #[test]
    fn a_persistent_requester_is_served_within_two_rounds_of_its_rivals() {
        // Four inputs want output 0 every cycle, input 3 output 1 as well: every input is
        // served within 2 × 4 cycles. (Output first may waste a cycle: output 0's grant
        // to input 3 is declined for output 1 and its arbiter does not move.)
        let reqs = [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1)];
        for kind in ALL {
            for arbiter in [Arbiter::RoundRobin, Arbiter::Matrix] {
                let mut m = Matcher::new(kind, arbiter, 1, 4, 2).unwrap();
                let wait = longest_wait(&mut m, &reqs, 40);
                assert!(
                    wait < 8,
                    "{kind:?} {arbiter:?}: an input waited {wait} cycles"
                );
            }
        }
        // A fixed-priority arbiter starves them.
        let mut m = Matcher::new(
            Allocator::SeparableInputFirst,
            Arbiter::FixedPriority,
            1,
            4,
            2,
        )
        .unwrap();
        assert!(longest_wait(&mut m, &reqs, 40) >= 39);
    }

    #[test]
    fn separable_allocators_serve_the_high_class_first() {
        for kind in [
            Allocator::SeparableInputFirst,
            Allocator::SeparableOutputFirst,
            Allocator::Wavefront,
        ] {
            let mut m = Matcher::new(kind, Arbiter::RoundRobin, 1, 2, 1).unwrap();
            // Input 0 would win by arbiter order; input 1's request is of the high class.
            m.push(Request {
                input: 0,
                output: 0,
                in_high: false,
                out_high: false,
            });
            m.push(Request {
                input: 1,
                output: 0,
                in_high: true,
                out_high: true,
            });
            assert_eq!(m.allocate(0), [(1, 0)], "{kind:?}");
        }
    }

    #[test]
    fn input_first_and_output_first_differ_as_booksim_s() {
        // Input 0 wants outputs 0 and 1, input 1 output 1; every pointer at 0. Input
        // first: input 0 picks output 0, input 1 output 1, both granted. Output first:
        // both outputs pick input 0, which accepts output 0; output 1 stays idle.
        let reqs = [(0, 0), (0, 1), (1, 1)];
        let inf = run(
            &mut Matcher::new(Allocator::SeparableInputFirst, Arbiter::RoundRobin, 1, 2, 2)
                .unwrap(),
            &reqs,
        );
        let outf = run(
            &mut Matcher::new(
                Allocator::SeparableOutputFirst,
                Arbiter::RoundRobin,
                1,
                2,
                2,
            )
            .unwrap(),
            &reqs,
        );
        assert_eq!(inf, [(0, 0), (1, 1)]);
        assert_eq!(outf, [(0, 0)]);
    }
}

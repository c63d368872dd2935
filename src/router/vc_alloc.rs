//! Virtual-channel allocation, separable at port level: every header whose route is
//! ready asks for one output port (the selection function's choice among the VCs free
//! at the start of the cycle); every output port then serves its requesters in arbiter
//! order, giving each the lowest-numbered free VC of its preferred set, or else of its
//! fallback set. A header that gets nothing tries again next cycle.
//!
//! That is routemu's allocator, `PortLevel` (`router.allocator`, the
//! default): the input stage is the selection function (one output port per header), the
//! output stage one arbiter per output port, which may grant several VCs in a cycle.
//! Arbiters: round-robin over the router's input VCs (the pointer moves just past the
//! last requester served), fixed priority (lowest input port and VC first), or matrix
//! (the least recently served first).
//!
//! The other allocators (`SeparableOutputFirst`, `ISlip`, `Wavefront`) allocate as
//! BookSim2's VC allocator does, at VC level ([`crate::router::alloc::matching`]): every
//! header still asks the selection function for one output port, then requests each of
//! that port's free VCs in its preferred set (high priority at its own arbiter) and in
//! its fallback set (low priority), and the allocator matches input VCs to output VCs,
//! at most one each.
//!
//! With speculative switch allocation the allocator also tells the switch allocator
//! which requests of this cycle are speculative ([`SpecRequests`]): the VCs it granted,
//! and the headers it did not serve that would have bid for the switch all the same —
//! those whose chosen output had a free VC with a credit at the start of the cycle
//! (BookSim's `spec_check_elig` and `spec_check_cred`, on by default), bidding for the
//! VC they would have been given.

use crate::config::{Allocator, Arbiter, Selection};
use crate::foundation::rng::NodeRng;
use crate::foundation::types::Cycle;
use crate::router::alloc::arbiter::Arbiters;
use crate::router::alloc::matching::{Matcher, Request};
use crate::router::buffers::{InputBuffers, OutputVcs, VcState};
use crate::router::crossbar::SpecRequests;
use crate::router::Layout;
use crate::routing::selection::{requests, select, BitIter, VcRequest};

/// The VC allocators of a partition.
#[derive(Clone, Debug)]
pub struct VcAllocator {
    /// [node][output port]: the port's arbiter over input VC slots (`Layout::slot`).
    arb: Arbiters,
    /// The VC-level allocator (None: routemu's port-level one, `PortLevel`).
    general: Option<Matcher>,
    selection: Selection,
    /// Extra cycles from VC grant to the first switch allocation.
    switch_alloc_delay: Cycle,
    /// Requests of this cycle: (input slot, request, VC it would get at the start of
    /// the cycle).
    scratch: Vec<(u16, VcRequest, u8)>,
    /// The speculative switch requests of the router last allocated
    /// (`pipeline.speculative`; None without speculation).
    spec: Option<SpecRequests>,
    order: Vec<(u32, u16)>,
    /// `[input slot]`: this cycle's requests as (high, low) masks over output slots,
    /// for a general matcher that takes masks (`Matcher::separable_masks`).
    masks: Vec<(u64, u64)>,
}

impl VcAllocator {
    /// Bytes per router of the tables [`VcAllocator::new`] allocates (the port level's
    /// arbiters, or the general matcher's): the memory check's estimate,
    /// `experiments::memory`. Scratch shared by all routers is not counted.
    pub fn table_bytes(layout: &Layout, kind: Allocator, arbiter: Arbiter) -> u64 {
        if kind == Allocator::PortLevel {
            layout.all_ports() as u64 * Arbiters::table_bytes(arbiter, layout.per_node)
        } else {
            Matcher::table_bytes(kind, arbiter, layout.per_node, layout.per_node)
        }
    }

    /// Allocators of `kind` with arbiters `arbiter` for `nodes` routers.
    pub fn new(
        nodes: usize,
        layout: &Layout,
        kind: Allocator,
        arbiter: Arbiter,
        selection: Selection,
        switch_alloc_delay: Cycle,
        speculative: bool,
    ) -> crate::foundation::error::Result<Self> {
        let port_level = kind == Allocator::PortLevel;
        let ports = if port_level {
            nodes.checked_mul(layout.all_ports()).ok_or_else(|| {
                crate::foundation::error::Error::config("VC allocator: too many routers")
            })?
        } else {
            0
        };
        Ok(VcAllocator {
            arb: Arbiters::new(arbiter, ports, layout.per_node)?,
            general: if port_level {
                None
            } else {
                // Input VC slots to output VC slots (the local port's: ejection engines).
                Some(Matcher::new(
                    kind,
                    arbiter,
                    nodes,
                    layout.per_node,
                    layout.per_node,
                )?)
            },
            selection,
            switch_alloc_delay,
            scratch: Vec::with_capacity(layout.per_node),
            order: Vec::with_capacity(layout.per_node),
            masks: vec![(0, 0); layout.per_node],
            spec: speculative.then(|| SpecRequests::new(layout)),
        })
    }

    /// The speculative switch requests of the router last allocated (None without
    /// speculation), for its switch allocation in the same cycle.
    #[inline]
    pub fn spec(&self) -> Option<&SpecRequests> {
        self.spec.as_ref()
    }

    /// Forgets the speculative requests before router `n`'s cycle (its VC allocation
    /// may not run).
    #[inline]
    pub fn clear_spec(&mut self) {
        if let Some(s) = &mut self.spec {
            s.clear();
        }
    }

    /// Runs one cycle of VC allocation at router `n`; returns how many VCs were granted.
    /// With speculation, records this cycle's speculative switch requests ([`Self::spec`]).
    pub fn allocate(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &mut InputBuffers,
        outputs: &mut OutputVcs,
        rng: &mut NodeRng,
    ) -> usize {
        let np = layout.all_ports();
        self.scratch.clear();
        let mut wanted: u64 = 0;
        for ip in BitIter(inputs.wait_vc.ports(n)) {
            for iv in BitIter(inputs.wait_vc.vcs(n, ip)) {
                let i = layout.vc_idx(n, ip, iv);
                if inputs.vc[i].ready_at > t {
                    continue;
                }
                let free = |p: usize| outputs.free[n * np + p];
                let credits = |p: usize| outputs.credit_sum[n * np + p];
                let route = &inputs.msg.get(inputs.cur(i)).route;
                let who = layout.slot(ip, iv) as u16;
                let scratch = &mut self.scratch;
                let mut ask = |req: VcRequest| {
                    wanted |= 1 << req.port.idx();
                    let pick = req.pick(free(req.port.idx()));
                    scratch.push((who, req, pick.trailing_zeros() as u8));
                };
                if self.general.is_some()
                    && route.adaptive_ports & !(1 << route.escape_port.idx()) != 0
                {
                    // BookSim's allocators take the whole route set: every adaptive
                    // port's adaptive VCs and the escape port's escape VCs go to the
                    // matcher at once, where BookSim's VC allocator sees its routing
                    // function's output set; no selection function picks a port first.
                    requests(route, free).for_each(ask);
                } else if let Some(req) = select(self.selection, route, free, credits, rng) {
                    ask(req);
                }
            }
        }
        let granted = if self.general.is_some() {
            self.allocate_vc_level(n, t, layout, inputs, outputs)
        } else {
            self.allocate_port_level(n, t, layout, inputs, outputs, wanted)
        };
        if let Some(mut spec) = self.spec.take() {
            self.speculate(n, layout, inputs, outputs, &mut spec);
            self.spec = Some(spec);
        }
        granted
    }

    /// routemu's port-level allocation: every output port serves its requesters in
    /// arbiter order, each the lowest-numbered free VC of its preferred set, else of its
    /// fallback set.
    fn allocate_port_level(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &mut InputBuffers,
        outputs: &mut OutputVcs,
        wanted: u64,
    ) -> usize {
        let np = layout.all_ports();
        let mut granted = 0;
        for op in BitIter(wanted) {
            let a = n * np + op;
            // Serve this port's requesters in arbiter order.
            self.order.clear();
            for (i, (who, req, _)) in self.scratch.iter().enumerate() {
                if req.port.idx() == op {
                    self.order.push((self.arb.key(a, *who as usize), i as u16));
                }
            }
            self.order.sort_unstable();
            for &(_, i) in &self.order {
                let (who, req, _) = self.scratch[i as usize];
                let pick = req.pick(outputs.free[n * np + op]);
                if pick == 0 {
                    continue;
                }
                let ov = pick.trailing_zeros() as usize;
                Self::grant(
                    n,
                    t,
                    layout,
                    inputs,
                    outputs,
                    who,
                    op,
                    ov,
                    self.switch_alloc_delay,
                );
                self.arb.serve(a, who as usize);
                granted += 1;
            }
        }
        granted
    }

    /// BookSim's VC-level allocation by the matcher: each header requests every free
    /// VC of its port's preferred set (high priority) and fallback set (low).
    fn allocate_vc_level(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &mut InputBuffers,
        outputs: &mut OutputVcs,
    ) -> usize {
        let np = layout.all_ports();
        let Some(m) = self.general.as_mut() else {
            return 0;
        };
        // Each header requests every free VC of its port's preferred set (high class)
        // and of its fallback set (low), as masks when the matcher takes them: the class
        // holds at the header's own arbiter only, every request being of high class at
        // the output VC's.
        let masks = m.takes_masks();
        let mut active = 0u64;
        if !masks {
            m.clear();
        }
        for &(who, req, _) in &self.scratch {
            let op = req.port.idx();
            let free = outputs.free[n * np + op];
            let first = req.first & free;
            for (mask, high) in [(first, true), (req.second & free & !first, false)] {
                for ov in BitIter(mask) {
                    let out = layout.slot(op, ov);
                    if masks {
                        let r = &mut self.masks[who as usize];
                        if high {
                            r.0 |= 1 << out;
                        } else {
                            r.1 |= 1 << out;
                        }
                        active |= 1 << who;
                    } else {
                        m.push(Request {
                            input: who,
                            output: out as u16,
                            in_high: high,
                            out_high: true,
                        });
                    }
                }
            }
        }
        let matches = if masks {
            let matches = m.separable_masks::<false>(n, active, &self.masks);
            for a in BitIter(active) {
                self.masks[a] = (0, 0);
            }
            matches
        } else {
            m.allocate(n)
        };
        for &(who, out) in matches {
            let (op, ov) = layout.unslot(out as usize);
            Self::grant(
                n,
                t,
                layout,
                inputs,
                outputs,
                who,
                op,
                ov,
                self.switch_alloc_delay,
            );
        }
        matches.len()
    }

    /// Gives output VC `ov` of port `op` to input slot `who` of router `n`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn grant(
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &mut InputBuffers,
        outputs: &mut OutputVcs,
        who: u16,
        op: usize,
        ov: usize,
        switch_alloc_delay: Cycle,
    ) {
        let np = layout.all_ports();
        outputs.free[n * np + op] &= !(1 << ov);
        let (ip, iv) = layout.unslot(who as usize);
        let vc = &mut inputs.vc[layout.vc_idx(n, ip, iv)];
        vc.state = VcState::Active;
        vc.out_port = op as u8;
        vc.out_vc = ov as u8;
        vc.ready_at = t + switch_alloc_delay;
        inputs.wait_vc.clear(n, ip, iv);
        outputs.holder[layout.vc_idx(n, op, ov)] = who;
        // Under `TailCredit` a newly allocated VC is empty downstream, so it has
        // credits; under `TailSent` the previous message may still fill it, and a
        // returning credit wakes this one.
        if vc.buffered > 0
            && (op == layout.local() || outputs.credits[layout.vc_idx(n, op, ov)] > 0)
        {
            inputs.ready.set(n, ip, iv);
        }
    }

    /// Marks this cycle's requests as speculative switch requests: granted ones, and
    /// failed ones that would have bid (a head flit buffered, a VC with a credit free at
    /// the start of the cycle on the chosen output).
    fn speculate(
        &self,
        n: usize,
        layout: &Layout,
        inputs: &InputBuffers,
        outputs: &OutputVcs,
        spec: &mut SpecRequests,
    ) {
        let local = layout.local();
        for &(who, req, ov) in &self.scratch {
            let (ip, iv) = layout.unslot(who as usize);
            let vc = &inputs.vc[layout.vc_idx(n, ip, iv)];
            spec.any = true;
            if vc.state == VcState::Active {
                spec.vcs[ip] |= 1 << iv;
                continue;
            }
            let op = req.port.idx();
            let credit = op == local || outputs.credits[layout.vc_idx(n, op, ov as usize)] > 0;
            // A header requesting several ports (BookSim's allocators under an adaptive
            // routing) bids for the first one with a free VC and a credit; BookSim's bids
            // for every such port and its switch allocator picks one.
            if vc.buffered > 0 && credit && spec.failed[ip] >> iv & 1 == 0 {
                spec.vcs[ip] |= 1 << iv;
                spec.failed[ip] |= 1 << iv;
                spec.failed_ports |= 1 << ip;
                spec.target[who as usize] = if op == local {
                    (local + ov as usize) as u8
                } else {
                    op as u8
                };
            }
        }
    }
}

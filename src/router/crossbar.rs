//! The crossbar and its switch allocator: separable, input first.
//!
//! The crossbar connects the d network input ports and the injection DMA engines to the
//! d network output ports and the ejection DMA engines. Paper 000 draws it as
//! (d+1)×(d+1), the processor being one port; routemu gives each DMA engine its own
//! connection through that local port, so every engine streams at link rate — "one DMA
//! controller per dimension guarantees a maximum of d simultaneous communications"
//! (paper 000 §3) only holds if the engines do not share one flit per cycle.
//!
//! Input stage: each network input port picks, in arbiter order over its VCs, up to
//! `speedup` VCs that hold a flit, have passed their pipeline delay and have a credit for
//! their output VC (a VC without credit is kept out of the ready set until one returns),
//! each for a different output; each injection engine is an input of its
//! own. Output stage: each network output, and each ejection engine, grants one of the
//! inputs that picked it, in arbiter order over inputs. A connection moves up to `width`
//! flits of one message in the cycle.
//!
//! With `iterations` > 1 the two stages repeat over the inputs and outputs left unmatched
//! (as iSLIP does), recovering connections a single pass loses when two inputs pick the
//! same output while another output goes idle.
//!
//! A network interface of limited bandwidth (`router.ni.injection` / `.ejection`) makes
//! the engines share the local port: the injection engines then form one crossbar input
//! that, like a network input with speedup s, picks up to ⌊bandwidth/width⌋ of them per
//! cycle in round-robin order (each for a different output); and at most that many
//! ejection engines are granted per cycle, taken in round-robin order over the engines.
//! Without a limit every engine is a crossbar input and output of its own.
//!
//! Arbiters: round-robin (pointers move just past the winner, and only on a grant),
//! fixed priority (lowest index wins) or matrix (the least recently served wins; it
//! moves where a round-robin pointer would).
//!
//! That is routemu's switch allocator, `PortLevel` (`router.allocator`, the
//! default). The other allocators (`SeparableOutputFirst`, `ISlip`, `Wavefront`) see the
//! router as BookSim2's switch allocator does ([`crate::router::alloc::matching`]): its
//! inputs are the input ports times the speedup (VC v of a port on its input v mod s;
//! the injection engines behind a shared channel of c connections on c inputs, engine e
//! on e mod c, or each engine an input of its own), its outputs the output ports (the
//! ejection engines behind a shared channel of c connections on c outputs, engine e on
//! e mod c, or each its own); each input requests every output one of its VCs wants,
//! the VC being the first in round-robin order from the input's VC offset, which moves
//! to the VC after the one sent (BookSim's `_sw_rr_offset`), non-speculative VCs first;
//! a request is of the low class when its VC is speculative.
//!
//! Speculation (`router.pipeline.speculative`, BookSim2's `speculative = 1` with its
//! `prio` switch allocator): the requests of headers whose VC allocation ran in this
//! cycle are speculative ([`SpecRequests`]). Both stages serve non-speculative requests
//! first, in arbiter order, and speculative ones only where none is left; a header whose
//! VC allocation failed still bids, for the output it asked a VC of, and a grant it wins
//! is wasted (the input and the output stay idle this cycle). The output's pointer moves
//! past a wasted grant (the switch allocator cannot tell), the input's VC pointer does
//! not (BookSim moves its per-input VC offset only when a flit is sent).

use crate::config::{Allocator, Arbiter};
use crate::foundation::types::Cycle;
use crate::router::alloc::arbiter::{Arbiters, FIXED, MATRIX, RR};
use crate::router::alloc::matching::{Matcher, Request};
use crate::router::buffers::{InVc, InputBuffers, OutputVcs};
use crate::router::Layout;
use crate::routing::selection::BitIter;

/// A crossbar connection granted for this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(4))]
pub struct Grant {
    /// Input port.
    pub in_port: u8,
    /// Input VC.
    pub in_vc: u8,
    /// Output port.
    pub out_port: u8,
    /// Output VC.
    pub out_vc: u8,
}

impl Grant {
    /// The connection of input VC `(ip, iv)` to output VC `(op, ov)`, built as one word:
    /// the router reads a grant back as a word right after the allocator wrote it, and
    /// four byte stores read back as a word stall the load (docs/speed.md, "The
    /// per-flit path").
    #[inline(always)]
    pub fn new(ip: usize, iv: usize, op: usize, ov: usize) -> Self {
        bytemuck::cast(u32::from_ne_bytes([ip as u8, iv as u8, op as u8, ov as u8]))
    }
}

/// Most crossbar inputs (network ports plus injection engines) and outputs (network
/// ports plus ejection engines), so that a set of them fits one 64-bit mask.
pub const MAX_XPUTS: usize = 64;

/// The switch allocators of a partition.
#[derive(Clone, Debug)]
pub struct Crossbar {
    /// [node][input port]: round-robin pointer over the port's VCs.
    in_ptr: Vec<u8>,
    /// [node][crossbar output]: round-robin pointer over crossbar inputs.
    out_ptr: Vec<u8>,
    speedup: usize,
    iterations: usize,
    arbiter: Arbiter,
    /// Crossbar inputs and outputs: network ports, then one per DMA engine.
    xputs: usize,
    /// [crossbar output]: mask of crossbar inputs requesting it this iteration.
    out_req: Vec<u64>,
    /// [crossbar output]: the same, speculative requests (`SpecRequests`).
    out_spec: Vec<u64>,
    /// [crossbar input][crossbar output]: the VC behind a request.
    req_vc: Vec<u8>,
    grants: [Grant; MAX_XPUTS],
    granted: usize,
    /// Injection engines that may win the crossbar in one cycle (usize::MAX: all).
    inj_cap: usize,
    /// Ejection engines that may be granted in one cycle (usize::MAX: all).
    ej_cap: usize,
    /// [node]: round-robin pointer over the ejection engines (used with `ej_cap`).
    ej_ptr: Vec<u8>,
    /// Matrix arbiters: [node][input port] over the port's VCs (empty unless `arbiter`
    /// is `Matrix`).
    in_matrix: Arbiters,
    /// Matrix arbiters: [node][crossbar output] over crossbar inputs.
    out_matrix: Arbiters,
    /// BookSim's switch allocator (None: routemu's, `PortLevel`).
    general: Option<Box<General>>,
}

/// The switch allocator of `SeparableOutputFirst`, `ISlip` and `Wavefront`: BookSim's
/// view of the crossbar (module doc).
#[derive(Clone, Debug)]
struct General {
    matcher: Matcher,
    /// Network inputs per input port (`speedup`).
    speedup: usize,
    /// Allocator inputs of the injection engines (the shared channel's connections, or
    /// one per engine).
    inj: usize,
    /// Allocator inputs per router.
    inputs: usize,
    /// `[node][allocator input]`: the VC offset (BookSim's `_sw_rr_offset`).
    offset: Vec<u8>,
    /// `[slot]`: the allocator input of each input VC (VC v of network port p on input
    /// p·speedup + v mod speedup, injection engine e on input ports·speedup + e mod
    /// `inj`): the index arithmetic of a bid, done once.
    input_of: Vec<u16>,
    /// `[allocator input]`: its port.
    port_of: Vec<u8>,
    /// Whether a VC may bid before its switch-allocation stage is due
    /// (`pipeline.switch_alloc` > 0, [`Crossbar::with_switch_alloc_delay`]); without the
    /// stage, a bidding VC's `ready_at` is never in the future and is not read.
    delayed: bool,
    /// `[crossbar output]`: the allocator output of each network output (itself) and
    /// ejection engine (ports + e mod `ej`).
    output_of: Vec<u8>,
    /// `[allocator input]`: the VCs of its port that bid through it (VC v of a network
    /// port on input v mod speedup, engine e on injection input e mod `inj`).
    vc_class: Vec<u64>,
    /// Whether the matcher takes the requests as masks ([`Matcher::takes_masks`]).
    masks: bool,
    /// `[allocator input]`: this cycle's requests as masks of outputs, (high, low) class:
    /// high when one of the pair's VCs is not speculative.
    reqs: Vec<(u64, u64)>,
    /// `[port]`: this cycle's bidding VCs (valid for the ports that bid).
    bid_vcs: Vec<u64>,
    /// `[slot]`: the allocator output a bidding VC asks for (valid for bidding VCs).
    bid_out: Vec<u8>,
    /// This cycle's matches in request order: (order, input, VC), the order being the
    /// position of the pair's first VC in port-then-VC order (where the request list
    /// had it).
    matched: Vec<(u16, u16, u8)>,
}

/// The speculative switch requests of one router in one cycle
/// (`router.pipeline.speculative`), written by the VC allocator just before the switch
/// allocation of the same router.
#[derive(Clone, Debug, Default)]
pub struct SpecRequests {
    /// Whether any request of this cycle is speculative (else the rest is stale).
    pub any: bool,
    /// `[port]`: VCs whose switch request is speculative (VC allocation in this cycle,
    /// granted or failed).
    pub vcs: Vec<u64>,
    /// `[port]`: of those, the VCs whose VC allocation failed: a grant to them is wasted.
    pub failed: Vec<u64>,
    /// Ports with a failed VC.
    pub failed_ports: u64,
    /// `[slot]`: the crossbar output a failed header bids for.
    pub target: Vec<u8>,
}

impl SpecRequests {
    /// Empty requests for routers of `layout`.
    pub fn new(layout: &Layout) -> Self {
        SpecRequests {
            any: false,
            vcs: vec![0; layout.all_ports()],
            failed: vec![0; layout.all_ports()],
            failed_ports: 0,
            target: vec![0; layout.per_node],
        }
    }

    /// Forgets the last router's requests.
    #[inline]
    pub fn clear(&mut self) {
        if self.any {
            self.vcs.fill(0);
            self.failed.fill(0);
            self.failed_ports = 0;
            self.any = false;
        }
    }
}

/// The first set bit of `mask` at or after `from`, wrapping around: the round-robin
/// order over a mask as an iterator.
#[inline]
fn rr_order(mask: u64, from: u32) -> impl Iterator<Item = usize> {
    let high = mask & (u64::MAX.checked_shl(from).unwrap_or(0));
    BitIter(high).chain(BitIter(mask & !high))
}

/// Limits of the network interface, in crossbar connections per cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NiCaps {
    /// Injection engines that may send in one cycle (None: every engine).
    pub injection: Option<usize>,
    /// Ejection engines that may receive in one cycle (None: every engine).
    pub ejection: Option<usize>,
}

/// The first set bit of `mask` at or after `from`, wrapping around (mask ≠ 0).
#[inline]
fn first_from(mask: u64, from: usize) -> usize {
    let high = mask & (u64::MAX << from);
    if high != 0 {
        high.trailing_zeros() as usize
    } else {
        mask.trailing_zeros() as usize
    }
}

impl Crossbar {
    /// The general allocator's injection and ejection connections, and its requesters
    /// (crossbar inputs: `speedup` per network port, one per injection connection) and
    /// resources (network ports and ejection connections).
    fn general_shape(
        layout: &Layout,
        speedup: usize,
        caps: NiCaps,
    ) -> (usize, usize, usize, usize) {
        let inj = caps.injection.map_or(layout.dma, |c| c.min(layout.dma));
        let ej = caps.ejection.map_or(layout.dma, |c| c.min(layout.dma));
        (inj, ej, layout.ports * speedup + inj, layout.ports + ej)
    }

    /// Bytes per router of the tables [`Crossbar::new`] allocates (pointers, the
    /// matrix arbiters, the general allocator's offsets and arbiters): the memory
    /// check's estimate, `experiments::memory`. Scratch shared by all routers is not
    /// counted.
    pub fn table_bytes(
        layout: &Layout,
        speedup: usize,
        kind: Allocator,
        arbiter: Arbiter,
        caps: NiCaps,
    ) -> u64 {
        let xputs = layout.ports + layout.dma;
        let pointers = layout.all_ports() + xputs + usize::from(caps.ejection.is_some());
        let matrix = if kind == Allocator::PortLevel && arbiter == Arbiter::Matrix {
            layout.all_ports() as u64
                * Arbiters::table_bytes(Arbiter::Matrix, layout.vcs.max(layout.dma))
                + xputs as u64 * Arbiters::table_bytes(Arbiter::Matrix, xputs)
        } else {
            0
        };
        let general = if kind == Allocator::PortLevel {
            0
        } else {
            let (_, _, inputs, outputs) = Self::general_shape(layout, speedup, caps);
            inputs as u64 + Matcher::table_bytes(kind, arbiter, inputs, outputs)
        };
        pointers as u64 + matrix + general
    }

    /// Allocators for `nodes` routers.
    pub fn new(
        nodes: usize,
        layout: &Layout,
        speedup: usize,
        iterations: usize,
        kind: Allocator,
        arbiter: Arbiter,
        caps: NiCaps,
    ) -> crate::foundation::error::Result<Self> {
        use crate::foundation::limits::zeroed_table;
        let xputs = layout.ports + layout.dma;
        assert!(xputs <= MAX_XPUTS, "crossbar of {xputs} ports");
        let matrix = kind == Allocator::PortLevel && arbiter == Arbiter::Matrix;
        let count = |per: usize| {
            if matrix {
                nodes.checked_mul(per).ok_or_else(|| {
                    crate::foundation::error::Error::config("switch allocator: too many routers")
                })
            } else {
                Ok(0)
            }
        };
        let general = if kind == Allocator::PortLevel {
            None
        } else {
            let (inj, ej, inputs, outputs) = Self::general_shape(layout, speedup, caps);
            let mut offset: Vec<u8> =
                zeroed_table(nodes.checked_mul(inputs), "switch allocator VC offset")?;
            // BookSim starts input i's offset at i mod speedup: each input on its own VCs.
            for (i, o) in offset.iter_mut().enumerate() {
                let a = i % inputs;
                *o = if a < layout.ports * speedup {
                    (a % speedup) as u8
                } else {
                    (a - layout.ports * speedup) as u8
                };
            }
            let matcher = Matcher::new(kind, arbiter, nodes, inputs, outputs)?;
            let net_inputs = layout.ports * speedup;
            let vc_class = (0..inputs)
                .map(|a| {
                    let (nv, step, first) = if a < net_inputs {
                        (layout.vcs, speedup, a % speedup)
                    } else {
                        (layout.dma, inj, a - net_inputs)
                    };
                    (first..nv).step_by(step).fold(0u64, |m, v| m | 1 << v)
                })
                .collect();
            let local = layout.local();
            let input_of = (0..layout.per_node)
                .map(|slot| {
                    let (ip, iv) = layout.unslot(slot);
                    let a = if ip != local {
                        ip * speedup + iv % speedup
                    } else {
                        net_inputs + iv % inj
                    };
                    a as u16
                })
                .collect();
            let output_of = (0..layout.ports + layout.dma)
                .map(|x| {
                    if x < local {
                        x as u8
                    } else {
                        (layout.ports + (x - local) % ej) as u8
                    }
                })
                .collect();
            let port_of = (0..inputs)
                .map(|a| {
                    if a < net_inputs {
                        (a / speedup) as u8
                    } else {
                        local as u8
                    }
                })
                .collect();
            Some(Box::new(General {
                delayed: true,
                port_of,
                input_of,
                output_of,
                masks: matcher.takes_masks(),
                reqs: vec![(0, 0); inputs],
                matched: Vec::with_capacity(inputs.min(outputs)),
                matcher,
                speedup,
                inj,
                inputs,
                offset,
                vc_class,
                bid_vcs: vec![0; layout.all_ports()],
                bid_out: vec![0; layout.per_node],
            }))
        };
        Ok(Crossbar {
            in_matrix: Arbiters::new(
                Arbiter::Matrix,
                count(layout.all_ports())?,
                layout.vcs.max(layout.dma),
            )?,
            out_matrix: Arbiters::new(Arbiter::Matrix, count(xputs)?, xputs)?,
            general,
            in_ptr: zeroed_table(nodes.checked_mul(layout.all_ports()), "crossbar input")?,
            out_ptr: zeroed_table(nodes.checked_mul(xputs), "crossbar output")?,
            speedup,
            iterations,
            arbiter,
            xputs,
            out_req: vec![0; xputs],
            out_spec: vec![0; xputs],
            req_vc: vec![0; xputs * xputs],
            grants: [Grant {
                in_port: 0,
                in_vc: 0,
                out_port: 0,
                out_vc: 0,
            }; MAX_XPUTS],
            granted: 0,
            inj_cap: caps.injection.unwrap_or(usize::MAX),
            ej_cap: caps.ejection.unwrap_or(usize::MAX),
            ej_ptr: zeroed_table(
                Some(if caps.ejection.is_some() { nodes } else { 0 }),
                "ejection pointer",
            )?,
        })
    }

    /// The allocators of a router whose VCs bid for the switch `delay` cycles after
    /// their VC allocation (`pipeline.switch_alloc`); `new` assumes a delay.
    pub fn with_switch_alloc_delay(mut self, delay: Cycle) -> Self {
        if let Some(g) = self.general.as_deref_mut() {
            g.delayed = delay > 0;
        }
        self
    }

    /// Grants of the last call to `allocate`, in crossbar-output order.
    #[inline]
    pub fn grants(&self) -> &[Grant] {
        &self.grants[..self.granted]
    }

    /// Runs the switch allocation of router `n` in cycle `t`; the result is in `grants()`.
    /// `spec`: this router's speculative requests of this cycle, if any.
    pub fn allocate(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &InputBuffers,
        outputs: &OutputVcs,
        spec: Option<&SpecRequests>,
    ) {
        let spec = spec.filter(|s| s.any);
        if self.general.is_some() {
            self.allocate_general(n, t, layout, inputs, spec);
        } else if self.arbiter == Arbiter::Matrix {
            self.allocate_port_level::<true>(n, t, layout, inputs, outputs, spec);
        } else {
            self.allocate_port_level::<false>(n, t, layout, inputs, outputs, spec);
        }
    }

    /// routemu's own switch allocation (`PortLevel`); `MATRIX`: with matrix arbiters,
    /// a constant so that the round-robin and fixed-priority code carries none of the
    /// matrix arbiters' work.
    #[inline(always)]
    fn allocate_port_level<const MATRIX: bool>(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &InputBuffers,
        outputs: &OutputVcs,
        spec: Option<&SpecRequests>,
    ) {
        let np = layout.all_ports();
        let local = layout.local();
        let xputs = self.xputs;
        let rr = self.arbiter == Arbiter::RoundRobin;
        let matrix = MATRIX;
        let stride = layout.vcs;
        let base = layout.vc_idx(n, 0, 0);
        let vcs = &inputs.vc[base..base + layout.per_node];
        self.granted = 0;
        // One VC of one input wants the switch (the usual case below saturation): it gets
        // its output, exactly as the general allocator would grant it, only sooner.
        // (Not when a failed speculative header bids as well.)
        let ports = inputs.ready.ports(n);
        let single = inputs.ready.vcs(n, ports.trailing_zeros() as usize);
        let phantoms = spec.map_or(0, |s| s.failed_ports);
        if phantoms == 0 && ports & (ports - 1) == 0 && single & (single - 1) == 0 {
            let (ip, iv) = (
                ports.trailing_zeros() as usize,
                single.trailing_zeros() as usize,
            );
            let vc = &vcs[ip * stride + iv];
            if vc.ready_at <= t {
                let (op, ov) = (vc.out_port as usize, vc.out_vc as usize);
                let x = if op == local { local + ov } else { op };
                let xin = if ip == local { local + iv } else { ip };
                self.grants[0] = Grant::new(ip, iv, op, ov);
                self.granted = 1;
                if rr {
                    self.in_ptr[n * np + ip] = if iv + 1 == layout.vcs_of(ip) {
                        0
                    } else {
                        iv as u8 + 1
                    };
                    self.out_ptr[n * xputs + x] = if xin + 1 == xputs { 0 } else { xin as u8 + 1 };
                } else if matrix {
                    self.in_matrix.serve(n * np + ip, iv);
                    self.out_matrix.serve(n * xputs + x, xin);
                }
                if x >= local && self.ej_cap != usize::MAX {
                    self.ej_ptr[n] = ((x - local + 1) % layout.dma) as u8;
                }
            }
            return;
        }
        // Crossbar inputs and outputs matched in an earlier iteration; grants per input.
        let (mut in_used, mut out_used): (u64, u64) = (0, 0);
        let mut wins = [0u8; 64];
        let inj_capped = self.inj_cap != usize::MAX;
        let mut ej_wins = 0;
        for _ in 0..self.iterations {
            let mut touched: u64 = 0;
            for ip in BitIter(inputs.ready.ports(n) | phantoms) {
                let network = ip != local;
                if network && in_used >> ip & 1 == 1 {
                    continue;
                }
                // A shared injection channel: a crossbar input with `inj_cap` connections.
                let shared = network || inj_capped;
                let limit = if network { self.speedup } else { self.inj_cap };
                if !network && wins[ip] as usize >= limit {
                    continue;
                }
                let (failed, speculative) = spec.map_or((0, 0), |s| (s.failed[ip], s.vcs[ip]));
                let mask = inputs.ready.vcs(n, ip) | failed;
                let ptr = if rr {
                    self.in_ptr[n * np + ip] as u32
                } else {
                    0
                };
                let mut taken = out_used;
                let mut picked = wins[ip] as usize;
                // Offers VC `$iv`'s request: `continue` to the next VC, `break` once the
                // input has picked all it may (a macro, so that the round-robin loop below
                // stays the tight loop it was).
                macro_rules! offer {
                    ($iv:expr) => {{
                        let iv: usize = $iv;
                        let vc = &vcs[ip * stride + iv];
                        let phantom = failed >> iv & 1 == 1;
                        let x = bid_output(layout, vc, spec, (ip, iv), phantom);
                        let xin = if network { ip } else { local + iv };
                        if vc.ready_at > t || taken >> x & 1 == 1 || in_used >> xin & 1 == 1 {
                            continue;
                        }
                        // The buffers keep a VC out of `ready` while its output has no credit.
                        debug_assert!(
                            phantom
                                || vc.out_port as usize == local
                                || outputs.credits
                                    [base + vc.out_port as usize * stride + vc.out_vc as usize]
                                    > 0
                        );
                        if speculative >> iv & 1 == 1 {
                            self.out_spec[x] |= 1 << xin;
                        } else {
                            self.out_req[x] |= 1 << xin;
                        }
                        self.req_vc[xin * xputs + x] = iv as u8;
                        touched |= 1 << x;
                        // Each injection engine is a crossbar input of its own, unless the
                        // network interface's bandwidth makes them share one.
                        if shared {
                            taken |= 1 << x;
                            picked += 1;
                            if picked == limit {
                                break;
                            }
                        }
                    }};
                }
                if matrix {
                    // The matrix arbiter's order, non-speculative requests first.
                    let mut listed = [0u8; 64];
                    let mut len = 0;
                    for iv in BitIter(mask) {
                        listed[len] = iv as u8;
                        len += 1;
                    }
                    let a = n * np + ip;
                    let m = &self.in_matrix;
                    listed[..len]
                        .sort_unstable_by_key(|&iv| (speculative >> iv & 1, m.key(a, iv as usize)));
                    for &iv in &listed[..len] {
                        offer!(iv as usize);
                    }
                } else {
                    // Round-robin order (VCs at or after the pointer first), non-speculative
                    // requests before speculative ones.
                    for iv in
                        rr_order(mask & !speculative, ptr).chain(rr_order(mask & speculative, ptr))
                    {
                        offer!(iv);
                    }
                }
            }
            if touched == 0 {
                break;
            }
            // Output stage: per crossbar output, the requesting input nearest after the pointer.
            // Ejection engines behind a shared channel come last, in round-robin order, and
            // only `ej_cap` of them are granted per cycle.
            let ej_bits = if self.ej_cap != usize::MAX {
                touched & (u64::MAX << local)
            } else {
                0
            };
            let ej_from = if ej_bits != 0 {
                ej_bits & (u64::MAX << (local + self.ej_ptr[n] as usize))
            } else {
                0
            };
            let order = BitIter(touched & !ej_bits)
                .chain(BitIter(ej_from))
                .chain(BitIter(ej_bits & !ej_from));
            for x in order {
                let m = std::mem::take(&mut self.out_req[x]);
                let m_spec = std::mem::take(&mut self.out_spec[x]);
                // Speculative requests only where no other is left.
                let m = if m != 0 { m } else { m_spec };
                if ej_bits >> x & 1 == 1 {
                    if ej_wins == self.ej_cap {
                        continue;
                    }
                    ej_wins += 1;
                    self.ej_ptr[n] = ((x - local + 1) % layout.dma) as u8;
                }
                let ptr = if rr {
                    self.out_ptr[n * xputs + x] as usize
                } else {
                    0
                };
                let xin = if matrix {
                    let a = n * xputs + x;
                    BitIter(m)
                        .min_by_key(|&i| self.out_matrix.key(a, i))
                        .unwrap_or(0)
                } else {
                    first_from(m, ptr)
                };
                let (ip, iv) = if xin < local {
                    (xin, self.req_vc[xin * xputs + x] as usize)
                } else {
                    (local, xin - local)
                };
                let (op, ov) = if x < local {
                    (x, vcs[ip * stride + iv].out_vc as usize)
                } else {
                    (local, x - local)
                };
                let wasted = spec.is_some_and(|s| s.failed[ip] >> iv & 1 == 1);
                if !wasted {
                    // At most one grant per crossbar output, so the array cannot overflow.
                    self.grants[self.granted] = Grant::new(ip, iv, op, ov);
                    self.granted += 1;
                }
                out_used |= 1 << x;
                wins[ip] += 1;
                // A network input with speedup s may win up to s outputs in all.
                if ip == local || wins[ip] as usize == self.speedup {
                    in_used |= 1 << xin;
                }
                if matrix {
                    self.out_matrix.serve(n * xputs + x, xin);
                    if !wasted {
                        self.in_matrix.serve(n * np + ip, iv);
                    }
                } else if rr && wasted {
                    let next_in = xin + 1;
                    self.out_ptr[n * xputs + x] = if next_in == xputs { 0 } else { next_in as u8 };
                } else if rr {
                    let next_vc = iv + 1;
                    self.in_ptr[n * np + ip] = if next_vc == layout.vcs_of(ip) {
                        0
                    } else {
                        next_vc as u8
                    };
                    let next_in = xin + 1;
                    self.out_ptr[n * xputs + x] = if next_in == xputs { 0 } else { next_in as u8 };
                }
            }
        }
    }

    /// The switch allocation of BookSim's allocators (module doc): requests per
    /// (allocator input, output), one VC each, matched by the allocator. The separable
    /// allocators take the requests as masks ([`Matcher::separable_masks`]), the others
    /// as a list; both give the grants in the order the list would hold the requests.
    fn allocate_general(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &InputBuffers,
        spec: Option<&SpecRequests>,
    ) {
        let Crossbar {
            grants,
            granted,
            general,
            ..
        } = self;
        *granted = 0;
        let Some(g) = general.as_deref_mut() else {
            return;
        };
        // One dispatch on the arbiters' kind per router-cycle.
        match g.matcher.arbiter_code() {
            RR => g.allocate::<RR>(n, t, layout, inputs, spec, grants, granted),
            FIXED => g.allocate::<FIXED>(n, t, layout, inputs, spec, grants, granted),
            _ => g.allocate::<MATRIX>(n, t, layout, inputs, spec, grants, granted),
        }
    }
}

impl General {
    /// [`Crossbar::allocate_general`] with arbiters of code `K`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn allocate<const K: u8>(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &InputBuffers,
        spec: Option<&SpecRequests>,
        grants: &mut [Grant; MAX_XPUTS],
        granted: &mut usize,
    ) {
        let stride = layout.vcs;
        let base = layout.vc_idx(n, 0, 0);
        let vcs = &inputs.vc[base..base + layout.per_node];
        let phantoms = spec.map_or(0, |s| s.failed_ports);
        let ports = inputs.ready.ports(n) | phantoms;
        // Light load: one VC bidding is matched whatever the allocator; only the
        // arbiters' moves are its own (`Matcher::single`).
        if ports.is_power_of_two() {
            let ip = ports.trailing_zeros() as usize;
            let failed = spec.map_or(0, |s| s.failed[ip]);
            let bids = inputs.ready.vcs(n, ip) | failed;
            if bids.is_power_of_two() {
                let iv = bids.trailing_zeros() as usize;
                if !self.delayed || vcs[ip * stride + iv].ready_at <= t {
                    let (a, b) = self.pair(layout, (ip, iv), vcs, spec, failed >> iv & 1 == 1);
                    self.matcher.single_as::<K>(n, a, b);
                    self.grant(n, layout, (ip, a, iv), vcs, spec, grants, granted);
                }
                return;
            }
        }
        // The bids: each VC's pair (allocator input, output), the pairs' classes.
        let mut active = 0u64;
        for ip in BitIter(ports) {
            let (failed, speculative) = spec.map_or((0, 0), |s| (s.failed[ip], s.vcs[ip]));
            let mut bid = 0u64;
            for iv in BitIter(inputs.ready.vcs(n, ip) | failed) {
                if self.delayed && vcs[ip * stride + iv].ready_at > t {
                    continue;
                }
                let (a, b) = self.pair(layout, (ip, iv), vcs, spec, failed >> iv & 1 == 1);
                let r = &mut self.reqs[a];
                if speculative >> iv & 1 == 0 {
                    r.0 |= 1 << b;
                } else {
                    r.1 |= 1 << b;
                }
                // Inputs past 64 (a speedup that large) are found from the ports below.
                if a < 64 {
                    active |= 1 << a;
                }
                bid |= 1 << iv;
                self.bid_out[ip * stride + iv] = b as u8;
            }
            self.bid_vcs[ip] = bid;
        }
        self.matched.clear();
        let matches = if self.masks {
            for a in BitIter(active) {
                let r = &mut self.reqs[a];
                r.1 &= !r.0;
            }
            self.matcher
                .separable_masks_as::<true, K>(n, active, &self.reqs)
        } else {
            // The request list, pair by pair, of the class the masks give.
            self.matcher.clear();
            for a in 0..self.inputs {
                let (high, low) = std::mem::take(&mut self.reqs[a]);
                for b in BitIter(high | low) {
                    let high = high >> b & 1 == 1;
                    self.matcher.push(Request {
                        input: a as u16,
                        output: b as u16,
                        in_high: high,
                        out_high: high,
                    });
                }
            }
            self.matcher.allocate(n)
        };
        for &(a, b) in matches {
            let pick = Self::pick(
                &self.vc_class,
                &self.bid_vcs,
                &self.bid_out,
                &self.offset,
                n * self.inputs,
                layout,
                &self.port_of,
                spec,
                (a as usize, b as usize),
            );
            self.matched.push(pick);
        }
        // The request list took its masks; the mask path's are cleared here.
        for a in BitIter(active) {
            self.reqs[a] = (0, 0);
        }
        // Few matches: an insertion sort by request order.
        let matched = &mut self.matched;
        for k in 1..matched.len() {
            let mut j = k;
            while j > 0 && matched[j - 1].0 > matched[j].0 {
                matched.swap(j - 1, j);
                j -= 1;
            }
        }
        for k in 0..self.matched.len() {
            // `order` is the port times 64 plus the pair's first VC (`pick`).
            let (order, a, iv) = self.matched[k];
            self.grant(
                n,
                layout,
                (order as usize >> 6, a as usize, iv as usize),
                vcs,
                spec,
                grants,
                granted,
            );
        }
    }

    /// The VC a matched pair `(a, b)` sends, and the pair's place in request order:
    /// of input `a`'s VCs that bid for output `b`, the non-speculative ones if any, the
    /// first at or after the input's VC offset (BookSim's `_sw_rr_offset`); the order
    /// is the pair's first VC in port-then-VC order. `ia`: router's first input.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn pick(
        vc_class: &[u64],
        bid_vcs: &[u64],
        bid_out: &[u8],
        offset: &[u8],
        ia: usize,
        layout: &Layout,
        port_of: &[u8],
        spec: Option<&SpecRequests>,
        (a, b): (usize, usize),
    ) -> (u16, u16, u8) {
        let ip = port_of[a] as usize;
        let stride = layout.vcs;
        let mut m = 0u64;
        for iv in BitIter(bid_vcs[ip] & vc_class[a]) {
            if bid_out[ip * stride + iv] as usize == b {
                m |= 1 << iv;
            }
        }
        debug_assert!(m != 0, "a match ({a}, {b}) without a bid");
        let speculative = spec.map_or(0, |s| s.vcs[ip]);
        let firm = m & !speculative;
        let pool = if firm != 0 { firm } else { m };
        let iv = first_from(pool, offset[ia + a] as usize);
        let order = (ip * 64 + m.trailing_zeros() as usize) as u16;
        (order, a as u16, iv as u8)
    }

    /// The allocator input and output of input VC `(ip, iv)`'s bid (module doc); a
    /// `phantom` — a failed speculative header — bids for the output it asked a VC of.
    #[inline(always)]
    fn pair(
        &self,
        layout: &Layout,
        (ip, iv): (usize, usize),
        vcs: &[InVc],
        spec: Option<&SpecRequests>,
        phantom: bool,
    ) -> (usize, usize) {
        let slot = layout.slot(ip, iv);
        let x = bid_output(layout, &vcs[slot], spec, (ip, iv), phantom);
        (self.input_of[slot] as usize, self.output_of[x] as usize)
    }

    /// Applies the match of allocator input `a`'s VC `iv` (of port `ip`) at router `n`: a grant,
    /// unless the VC is a failed speculation (then the connection is wasted), and the
    /// input's VC offset moves past the VC sent (BookSim's `_sw_rr_offset`).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn grant(
        &mut self,
        n: usize,
        layout: &Layout,
        (ip, a, iv): (usize, usize, usize),
        vcs: &[InVc],
        spec: Option<&SpecRequests>,
        grants: &mut [Grant; MAX_XPUTS],
        granted: &mut usize,
    ) {
        let local = layout.local();
        if spec.is_some_and(|s| s.failed[ip] >> iv & 1 == 1) {
            return;
        }
        let vc = &vcs[layout.slot(ip, iv)];
        grants[*granted] = Grant::new(ip, iv, vc.out_port as usize, vc.out_vc as usize);
        *granted += 1;
        let step = if ip == local { self.inj } else { self.speedup };
        let nv = layout.vcs_of(ip);
        let mut next = iv + step;
        while next >= nv {
            next -= nv;
        }
        self.offset[n * self.inputs + a] = next as u8;
    }
}

/// The crossbar output input VC `(ip, iv)` (state `vc`) bids for: its allocated output
/// (an ejection engine counts as the local port plus its number), or, for a `phantom`
/// — a header whose speculative VC allocation failed — the output it asked a VC of.
#[inline(always)]
fn bid_output(
    layout: &Layout,
    vc: &InVc,
    spec: Option<&SpecRequests>,
    (ip, iv): (usize, usize),
    phantom: bool,
) -> usize {
    let local = layout.local();
    if phantom {
        spec.map_or(0, |s| s.target[layout.slot(ip, iv)] as usize)
    } else {
        // Without a branch: transit and ejecting VCs mix in no predictable order.
        let eject = (vc.out_port as usize == local) as usize;
        vc.out_port as usize + eject * vc.out_vc as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::buffers::VcState;

    /// One router with 2 network ports of 2 VCs and one DMA engine; VC `(ip, iv)` holds
    /// flits for network output `op`.
    pub(super) fn router(active: &[(usize, usize, usize)]) -> (Layout, InputBuffers, OutputVcs) {
        let lay = Layout::new(2, 2, 1);
        let mut inputs = InputBuffers::new(1, &lay, 1, |_, _| true, 1).unwrap();
        let outputs = OutputVcs::new(1, &lay, 8, false, |_, _| true).unwrap();
        for &(ip, iv, op) in active {
            let vc = &mut inputs.vc[lay.vc_idx(0, ip, iv)];
            vc.state = VcState::Active;
            vc.buffered = 4;
            vc.out_port = op as u8;
            vc.out_vc = 0;
            inputs.ready.set(0, ip, iv);
        }
        (lay, inputs, outputs)
    }

    /// Speculative requests: input 0's VC 0 was allocated its output VC in this cycle.
    fn vc0_speculative(lay: &Layout) -> SpecRequests {
        let mut spec = SpecRequests::new(lay);
        spec.any = true;
        spec.vcs[0] = 1;
        spec
    }

    fn xbar(lay: &Layout) -> Crossbar {
        let caps = NiCaps {
            injection: None,
            ejection: None,
        };
        Crossbar::new(
            1,
            lay,
            1,
            1,
            Allocator::PortLevel,
            Arbiter::RoundRobin,
            caps,
        )
        .unwrap()
    }

    #[test]
    fn a_speculative_request_loses_the_output_to_an_older_one() {
        // Input 0 (first in arbiter order) and input 1 both want output 0.
        let (lay, inputs, outputs) = router(&[(0, 0, 0), (1, 0, 0)]);
        let mut x = xbar(&lay);
        x.allocate(0, 0, &lay, &inputs, &outputs, None);
        assert_eq!(x.grants()[0].in_port, 0, "equal priority: arbiter order");
        // The same with input 0's VC allocated in this cycle.
        let spec = vc0_speculative(&lay);
        let mut x = xbar(&lay);
        x.allocate(0, 0, &lay, &inputs, &outputs, Some(&spec));
        assert_eq!(x.grants().len(), 1);
        assert_eq!(
            x.grants()[0].in_port,
            1,
            "the non-speculative flit goes first"
        );
    }

    #[test]
    fn an_input_prefers_its_non_speculative_vc() {
        // Input 0: VC 0 (speculative) wants output 0, VC 1 wants output 1.
        let (lay, inputs, outputs) = router(&[(0, 0, 0), (0, 1, 1)]);
        let spec = vc0_speculative(&lay);
        let mut x = xbar(&lay);
        x.allocate(0, 0, &lay, &inputs, &outputs, Some(&spec));
        assert_eq!(x.grants().len(), 1);
        assert_eq!((x.grants()[0].in_vc, x.grants()[0].out_port), (1, 1));
    }

    #[test]
    fn a_grant_to_a_failed_speculation_is_wasted() {
        // Input 0's VC 0 waits for a VC (holding `buffered` flits) and input 1 wants
        // output `out` non-speculatively; the (input, output) grants under `spec`.
        let grants = |out: usize, buffered: u32, spec: &SpecRequests| -> Vec<(u8, u8)> {
            let (lay, mut inputs, outputs) = router(&[(1, 0, out)]);
            let vc = &mut inputs.vc[lay.vc_idx(0, 0, 0)];
            vc.state = VcState::WaitVc;
            vc.buffered = buffered;
            let mut x = xbar(&lay);
            x.allocate(0, 0, &lay, &inputs, &outputs, Some(spec));
            x.grants().iter().map(|g| (g.in_port, g.out_port)).collect()
        };
        // Input 0's VC 0 failed its VC allocation for output 1 but bids.
        let lay = router(&[]).0;
        let mut spec = vc0_speculative(&lay);
        spec.failed[0] = 1;
        spec.failed_ports = 1;
        spec.target[lay.slot(0, 0)] = 1;
        // Only the real request is granted; output 1 was taken by nothing.
        assert_eq!(grants(0, 1, &spec), [(1, 0)]);
        // And a failed speculation for an output a real flit wants loses it.
        assert_eq!(grants(1, 0, &spec), [(1, 1)]);
        // Two speculative bids for output 1: the failed one comes first in arbiter
        // order, wins, and the output carries nothing this cycle.
        spec.vcs[1] = 1;
        assert!(grants(1, 0, &spec).is_empty());
    }
}

#[cfg(test)]
mod booksim_allocator_tests {
    use super::tests::router;
    use super::*;

    fn xbar(lay: &Layout, kind: Allocator) -> Crossbar {
        let caps = NiCaps {
            injection: None,
            ejection: None,
        };
        Crossbar::new(1, lay, 1, 1, kind, Arbiter::RoundRobin, caps).unwrap()
    }

    const BOOKSIM: [Allocator; 3] = [
        Allocator::SeparableOutputFirst,
        Allocator::ISlip { iterations: 1 },
        Allocator::Wavefront,
    ];

    #[test]
    fn an_input_offers_its_vcs_for_one_output_in_turn() {
        // Input 0's VCs 0 and 1 both want output 0: VC 0 sends first, then the offset
        // moves past it and VC 1 sends, then VC 0 again.
        for kind in BOOKSIM {
            let (lay, inputs, outputs) = router(&[(0, 0, 0), (0, 1, 0)]);
            let mut x = xbar(&lay, kind);
            let mut sent = Vec::new();
            for t in 0..3 {
                x.allocate(0, t, &lay, &inputs, &outputs, None);
                assert_eq!(x.grants().len(), 1, "{kind:?}");
                sent.push(x.grants()[0].in_vc);
            }
            assert_eq!(sent, [0, 1, 0], "{kind:?}");
        }
    }

    #[test]
    fn inputs_wanting_distinct_outputs_all_get_them() {
        for kind in BOOKSIM {
            let (lay, inputs, outputs) = router(&[(0, 0, 1), (1, 0, 0)]);
            let mut x = xbar(&lay, kind);
            x.allocate(0, 0, &lay, &inputs, &outputs, None);
            let mut g: Vec<(u8, u8)> = x.grants().iter().map(|g| (g.in_port, g.out_port)).collect();
            g.sort_unstable();
            assert_eq!(g, [(0, 1), (1, 0)], "{kind:?}");
        }
    }

    #[test]
    fn a_speculative_request_loses_to_an_older_one_except_under_islip() {
        // Inputs 0 (first in every order) and 1 want output 0; input 0's VC was allocated
        // in this cycle. The separable and wavefront allocators serve the older flit
        // first; BookSim's iSLIP ignores priorities, and its grant pointer picks input 0.
        let (lay, inputs, outputs) = router(&[(0, 0, 0), (1, 0, 0)]);
        let mut spec = SpecRequests::new(&lay);
        spec.any = true;
        spec.vcs[0] = 1;
        for (kind, winner) in [
            (Allocator::SeparableOutputFirst, 1),
            (Allocator::Wavefront, 1),
            (Allocator::ISlip { iterations: 1 }, 0),
        ] {
            let mut x = xbar(&lay, kind);
            x.allocate(0, 0, &lay, &inputs, &outputs, Some(&spec));
            assert_eq!(x.grants().len(), 1, "{kind:?}");
            assert_eq!(x.grants()[0].in_port, winner, "{kind:?}");
        }
    }
}

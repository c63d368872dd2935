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
//! their output VC, each for a different output; each injection engine is an input of its
//! own. Output stage: each network output, and each ejection engine, grants one of the
//! inputs that picked it, in arbiter order over inputs. A connection moves up to `width`
//! flits of one message in the cycle.
//!
//! With `iterations` > 1 the two stages repeat over the inputs and outputs left unmatched
//! (as iSLIP does), recovering connections a single pass loses when two inputs pick the
//! same output while another output goes idle.
//!
//! Arbiters: round-robin (pointers move just past the winner, and only on a grant) or
//! fixed priority (lowest index wins).

use super::buffers::{InputBuffers, OutputVcs};
use super::Layout;
use crate::config::Arbiter;
use crate::routing::selection::BitIter;
use crate::types::Cycle;

/// A crossbar connection granted for this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    requests: Vec<Grant>,
    best: Vec<Option<(usize, usize)>>,
    /// Grants of the last call to `allocate`.
    pub grants: Vec<Grant>,
}

impl Crossbar {
    /// Allocators for `nodes` routers.
    pub fn new(
        nodes: usize,
        layout: &Layout,
        speedup: usize,
        iterations: usize,
        arbiter: Arbiter,
    ) -> Self {
        let xputs = layout.ports + layout.dma;
        Crossbar {
            in_ptr: vec![0; nodes * layout.all_ports()],
            out_ptr: vec![0; nodes * xputs],
            speedup,
            iterations,
            arbiter,
            requests: Vec::with_capacity(xputs * speedup),
            best: vec![None; xputs],
            grants: Vec::with_capacity(xputs),
        }
    }

    /// Runs the switch allocation of router `n` in cycle `t`; the result is in `grants`.
    pub fn allocate(
        &mut self,
        n: usize,
        t: Cycle,
        layout: &Layout,
        inputs: &InputBuffers,
        outputs: &OutputVcs,
    ) {
        let np = layout.all_ports();
        let local = layout.local();
        // Crossbar inputs and outputs: network ports 0..d, then one per DMA engine.
        let xputs = layout.ports + layout.dma;
        let xout = |op: usize, ov: usize| if op == local { local + ov } else { op };
        self.grants.clear();
        let rr = self.arbiter == Arbiter::RoundRobin;
        // Crossbar inputs and outputs already matched in an earlier iteration.
        let (mut in_used, mut out_used): (u128, u128) = (0, 0);
        let xin_of = |ip: usize, iv: usize| if ip == local { local + iv } else { ip };
        for _ in 0..self.iterations {
            self.requests.clear();
            for ip in BitIter(inputs.ready.ports(n)) {
                if ip != local && in_used >> ip & 1 == 1 {
                    continue;
                }
                let mask = inputs.ready.vcs(n, ip);
                let ptr = if rr {
                    self.in_ptr[n * np + ip] as u32
                } else {
                    0
                };
                // Round-robin order: VCs at or after the pointer first.
                let high = mask & (u64::MAX << ptr);
                let low = mask & !(u64::MAX << ptr);
                let mut taken: u128 = out_used;
                let mut picked = 0;
                for iv in BitIter(high).chain(BitIter(low)) {
                    let vc = &inputs.vc[layout.vc_idx(n, ip, iv)];
                    let (op, ov) = (vc.out_port as usize, vc.out_vc as usize);
                    let x = xout(op, ov);
                    if vc.ready_at > t || taken >> x & 1 == 1 || in_used >> xin_of(ip, iv) & 1 == 1
                    {
                        continue;
                    }
                    if op != local && outputs.credits[layout.vc_idx(n, op, ov)] == 0 {
                        continue;
                    }
                    self.requests.push(Grant {
                        in_port: ip as u8,
                        in_vc: iv as u8,
                        out_port: op as u8,
                        out_vc: ov as u8,
                    });
                    // Each injection engine is a crossbar input of its own.
                    if ip != local {
                        taken |= 1 << x;
                        picked += 1;
                        if picked == self.speedup {
                            break;
                        }
                    }
                }
            }
            if self.requests.is_empty() {
                break;
            }
            // Output stage: per crossbar output, the requesting input nearest after the pointer.
            self.best.iter_mut().for_each(|b| *b = None);
            for (i, r) in self.requests.iter().enumerate() {
                let x = xout(r.out_port as usize, r.out_vc as usize);
                let xin = xin_of(r.in_port as usize, r.in_vc as usize);
                let ptr = if rr {
                    self.out_ptr[n * xputs + x] as usize
                } else {
                    0
                };
                let key = (xin + xputs - ptr) % xputs;
                if self.best[x].is_none_or(|(k, _)| key < k) {
                    self.best[x] = Some((key, i));
                }
            }
            for x in 0..xputs {
                if let Some((_, i)) = self.best[x] {
                    let g = self.requests[i];
                    self.grants.push(g);
                    let ip = g.in_port as usize;
                    let xin = xin_of(ip, g.in_vc as usize);
                    out_used |= 1 << x;
                    // A network input with speedup s may win up to s outputs in all.
                    if ip == local
                        || self
                            .grants
                            .iter()
                            .filter(|h| h.in_port as usize == ip)
                            .count()
                            == self.speedup
                    {
                        in_used |= 1 << xin;
                    }
                    if rr {
                        self.in_ptr[n * np + ip] = ((g.in_vc as usize + 1) % layout.slots) as u8;
                        self.out_ptr[n * xputs + x] = ((xin + 1) % xputs) as u8;
                    }
                }
            }
        }
    }
}

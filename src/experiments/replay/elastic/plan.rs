//! What crosses the network in an elastic replay, decided before it starts: each MPI
//! message's protocol (eager, or rendezvous with its control messages), the flits of
//! every network message, and how each source node numbers the network messages it
//! will send. The numbering is what lets a partition that receives a message know
//! which one it is from its id alone (`Simulation::inject_numbered`): every partition
//! holds this plan, so nothing about a message has to travel with it.
//!
//! Not here: running the programs (`ranks`), stepping (`step`).

use crate::experiments::replay::elastic::ElasticOptions;
use crate::foundation::error::{Error, Result};
use crate::foundation::types::{Cycle, NodeId, PortId};
use crate::topology::Topology;
use crate::trace::program::{Op, Program, SendMode};
use std::collections::{HashMap, HashSet};

/// A network message's part in its MPI message's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    /// The data.
    Data,
    /// Rendezvous: request to send, sender → receiver.
    Rts,
    /// Rendezvous: clear to send, receiver → sender, once the receive is posted.
    Cts,
    /// Rendezvous: the data's delivery acknowledged, receiver → sender (the send's
    /// completion).
    Fin,
    /// Synchronous eager send: the match acknowledged, receiver → sender.
    Ack,
}

impl Kind {
    /// Whether it carries the data (else it is a one-flit control message).
    pub(super) fn is_data(self) -> bool {
        self == Kind::Data
    }
}

/// How an MPI message crosses the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Proto {
    /// The data at once; `ack`: a synchronous send, acknowledged at the match.
    Eager {
        /// Whether the receiver acknowledges the match.
        ack: bool,
    },
    /// RTS, then CTS once the receive is posted, then the data, then FIN.
    Rendezvous,
}

impl Proto {
    /// The kinds the sender sends, in the order of their numbers.
    pub(super) fn src_kinds(self) -> &'static [Kind] {
        match self {
            Proto::Eager { .. } => &[Kind::Data],
            Proto::Rendezvous => &[Kind::Rts, Kind::Data],
        }
    }

    /// The kinds the receiver sends, in the order of their numbers.
    pub(super) fn dst_kinds(self) -> &'static [Kind] {
        match self {
            Proto::Eager { ack: false } => &[],
            Proto::Eager { ack: true } => &[Kind::Ack],
            Proto::Rendezvous => &[Kind::Cts, Kind::Fin],
        }
    }

    /// Whether `kind` is sent by the message's receiver.
    fn from_dst(kind: Kind) -> bool {
        matches!(kind, Kind::Cts | Kind::Fin | Kind::Ack)
    }
}

/// Over several processes: which network messages may cross from one process's nodes to
/// another's, and how soon each rank could make one — what lets processes exchange less
/// often than every cycle (`step`).
pub(super) struct Crossing {
    /// Per MPI message: whether its sender's network messages (data, RTS) may cross, and
    /// its receiver's (CTS, FIN, acknowledgement).
    src: Vec<bool>,
    dst: Vec<bool>,
    /// Per world rank, per call: its last operation that may make a crossing message
    /// (u32::MAX: none).
    pub(super) last_op: Vec<Vec<u32>>,
    /// Per world rank, per call: cycles the rank spends at least between leaving the call
    /// and entering the next call that may make a crossing message (Cycle::MAX: none
    /// comes) — compute and kept call durations; calls that communicate count 0.
    pub(super) gap: Vec<Vec<Cycle>>,
}

impl Crossing {
    /// Whether network message `kind` of message `m` may cross between processes.
    pub(super) fn crosses(&self, m: u32, kind: Kind) -> bool {
        if Proto::from_dst(kind) {
            self.dst[m as usize]
        } else {
            self.src[m as usize]
        }
    }
}

/// The plan every partition holds.
pub(super) struct NetPlan {
    /// Per MPI message.
    pub(super) proto: Vec<Proto>,
    /// Per MPI message: the data's flits.
    pub(super) flits: Vec<u32>,
    /// Per MPI message: the number of its first network message at its sender's node
    /// and at its receiver's node.
    first: Vec<(u64, u64)>,
    /// Per world rank: its node.
    pub(super) node_of: Vec<u32>,
    /// Per node, the first index into `entries` of its network messages (one more
    /// entry at the end).
    base: Vec<u64>,
    /// Every network message, by (node, number): its MPI message and kind.
    entries: Vec<(u32, Kind)>,
    /// Over several processes: what may cross between them (None in one process).
    pub(super) crossing: Option<Crossing>,
}

impl NetPlan {
    /// The plan of `prog` with endpoints on `node_of` (world rank → node) on a network
    /// of `nodes` nodes, data messages of `flits(bytes)` flits.
    pub(super) fn new(
        prog: &Program,
        node_of: Vec<u32>,
        nodes: usize,
        opts: &ElasticOptions,
        flits: impl Fn(u64) -> Option<u32>,
    ) -> Result<NetPlan> {
        let n = prog.msgs.len();
        let mut proto = Vec::with_capacity(n);
        let mut fl = Vec::with_capacity(n);
        let mut count = vec![0u64; nodes + 1];
        for (i, m) in prog.msgs.iter().enumerate() {
            let p = if m.recv.is_some() && m.bytes > opts.eager_limit {
                Proto::Rendezvous
            } else {
                // Nobody receives an unmatched message: it goes eagerly, whatever its size.
                Proto::Eager {
                    ack: m.mode == SendMode::Sync && m.recv.is_some(),
                }
            };
            proto.push(p);
            fl.push(flits(m.bytes).ok_or_else(|| {
                Error::Trace(format!(
                    "{}: message {i} of {} bytes has more than {} flits, the most a message \
                     can have",
                    prog.name,
                    m.bytes,
                    u32::MAX
                ))
            })?);
            let (s, d) = (node_of[m.src as usize], node_of[m.dst as usize]);
            count[s as usize + 1] += p.src_kinds().len() as u64;
            count[d as usize + 1] += p.dst_kinds().len() as u64;
        }
        for k in 0..nodes {
            count[k + 1] += count[k];
        }
        let base = count.clone();
        let mut next = count;
        let mut entries = vec![(0u32, Kind::Data); base[nodes] as usize];
        let mut first = Vec::with_capacity(n);
        // In message order, the sender's kinds then the receiver's: each side's kinds
        // get consecutive numbers at their node (even when both are the same node).
        for (i, m) in prog.msgs.iter().enumerate() {
            let p = proto[i];
            let mut side = |node: u32, kinds: &[Kind]| -> u64 {
                let at = &mut next[node as usize];
                let number = *at - base[node as usize];
                for &k in kinds {
                    entries[*at as usize] = (i as u32, k);
                    *at += 1;
                }
                number
            };
            let s = side(node_of[m.src as usize], p.src_kinds());
            let d = side(node_of[m.dst as usize], p.dst_kinds());
            first.push((s, d));
        }
        Ok(NetPlan {
            proto,
            flits: fl,
            first,
            node_of,
            base,
            entries,
            crossing: None,
        })
    }

    /// Marks what may cross between processes when node `n` belongs to process
    /// `process[n]`: a network message stays inside one process only when routes are
    /// minimal (`minimal`) and every node of every minimal path between its ends is that
    /// process's. `(per_ns, compute_scale)` turn the program's times into cycles as the
    /// replay does.
    pub(super) fn mark_crossing(
        &mut self,
        prog: &Program,
        topo: &Topology,
        process: &[u32],
        minimal: bool,
        (per_ns, compute_scale): (f64, f64),
    ) {
        let mut memo: HashMap<(u32, u32), bool> = HashMap::new();
        let mut crosses = |a: u32, b: u32| -> bool {
            if !minimal {
                return true;
            }
            *memo
                .entry((a, b))
                .or_insert_with(|| !inside(topo, process, a, b))
        };
        let mut src = Vec::with_capacity(prog.msgs.len());
        let mut dst = Vec::with_capacity(prog.msgs.len());
        for (i, m) in prog.msgs.iter().enumerate() {
            let (a, b) = (self.node_of[m.src as usize], self.node_of[m.dst as usize]);
            let p = self.proto[i];
            src.push(!p.src_kinds().is_empty() && crosses(a, b));
            dst.push(!p.dst_kinds().is_empty() && crosses(b, a));
        }
        let mut last_op = Vec::with_capacity(prog.ranks.len());
        let mut gap = Vec::with_capacity(prog.ranks.len());
        for rp in &prog.ranks {
            let last: Vec<u32> = rp
                .calls
                .iter()
                .map(|c| {
                    (c.ops.0..c.ops.1)
                        .rev()
                        .find(|&k| match rp.ops[k as usize] {
                            Op::Send(m) => src[m as usize],
                            Op::Recv(r) => {
                                prog.recvs[r as usize].msg.is_some_and(|m| dst[m as usize])
                            }
                            Op::Probe(_) | Op::Wait { .. } => false,
                        })
                        .unwrap_or(u32::MAX)
                })
                .collect();
            // Backwards: from leaving call k to entering the next call that may cross.
            let n = rp.calls.len();
            let mut g = vec![Cycle::MAX; n];
            for k in (0..n.saturating_sub(1)).rev() {
                let next = &rp.calls[k + 1];
                let compute = scale_ns(
                    next.enter.saturating_sub(rp.calls[k].exit),
                    per_ns * compute_scale,
                );
                g[k] = if last[k + 1] != u32::MAX {
                    compute
                } else {
                    let kept = if next.communicates() {
                        0
                    } else {
                        scale_ns(next.exit - next.enter, per_ns)
                    };
                    compute.saturating_add(kept).saturating_add(g[k + 1])
                };
            }
            last_op.push(last);
            gap.push(g);
        }
        self.crossing = Some(Crossing {
            src,
            dst,
            last_op,
            gap,
        });
    }

    /// The number, at the node that sends it, of message `m`'s network message `kind`.
    pub(super) fn number(&self, m: u32, kind: Kind) -> u64 {
        let p = self.proto[m as usize];
        let (s, d) = self.first[m as usize];
        let (first, kinds) = if Proto::from_dst(kind) {
            (d, p.dst_kinds())
        } else {
            (s, p.src_kinds())
        };
        let at = kinds
            .iter()
            .position(|&k| k == kind)
            .expect("a kind of the message's protocol");
        first + at as u64
    }

    /// The MPI message and kind of network message `number` of `node`.
    pub(super) fn decode(&self, node: u32, number: u64) -> (u32, Kind) {
        self.entries[(self.base[node as usize] + number) as usize]
    }
}

/// `ns` in cycles at `per_ns` cycles a nanosecond, at most the replay's horizon (2^62
/// cycles), so that adding a few of them to a cycle cannot overflow.
pub(super) fn scale_ns(ns: u64, per_ns: f64) -> Cycle {
    ((ns as f64 * per_ns).round() as Cycle).min(crate::experiments::replay::HORIZON)
}

/// Whether every node of every minimal path from `a` to `b` is in `a`'s process.
fn inside(topo: &Topology, process: &[u32], a: u32, b: u32) -> bool {
    let home = process[a as usize];
    let mut seen = HashSet::from([a]);
    let mut todo = vec![a];
    while let Some(n) = todo.pop() {
        if process[n as usize] != home {
            return false;
        }
        if n == b {
            continue;
        }
        let ports = topo.minimal_ports(NodeId(n), NodeId(b));
        for p in ports.iter_ones() {
            if let Some(next) = topo.neighbor(NodeId(n), PortId(p as u8)) {
                if seen.insert(next.0) {
                    todo.push(next.0);
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::program::{ProgMsg, Program};

    fn msg(src: u32, dst: u32, bytes: u64, mode: SendMode, recv: Option<u32>) -> ProgMsg {
        ProgMsg {
            src,
            dst,
            bytes,
            mode,
            recv,
            collective: false,
            recorded: 0,
        }
    }

    #[test]
    fn every_network_message_decodes_to_the_message_and_kind_it_was_numbered_for() {
        // Two ranks on one node among others, a rendezvous, a synchronous eager send
        // and an unmatched large send (eager: nobody would clear it to send).
        let prog = Program {
            msgs: vec![
                msg(0, 1, 100, SendMode::Standard, Some(0)),
                msg(1, 2, 10, SendMode::Sync, Some(1)),
                msg(2, 0, 1000, SendMode::Standard, None),
                msg(0, 0, 1000, SendMode::Sync, Some(2)),
            ],
            ..Program::default()
        };
        let opts = ElasticOptions {
            eager_limit: 64,
            ..ElasticOptions::default()
        };
        let plan = NetPlan::new(&prog, vec![0, 0, 3], 4, &opts, |b| Some(b as u32)).unwrap();
        assert_eq!(
            plan.proto,
            vec![
                Proto::Rendezvous,
                Proto::Eager { ack: true },
                Proto::Eager { ack: false },
                Proto::Rendezvous
            ]
        );
        // 4 + 2 + 1 + 4.
        assert_eq!(plan.entries.len(), 11);
        let mut seen = std::collections::HashSet::new();
        for (m, p) in plan.proto.iter().enumerate() {
            let mm = &prog.msgs[m];
            for (&k, from) in p
                .src_kinds()
                .iter()
                .map(|k| (k, mm.src))
                .chain(p.dst_kinds().iter().map(|k| (k, mm.dst)))
            {
                let node = plan.node_of[from as usize];
                let n = plan.number(m as u32, k);
                assert_eq!(plan.decode(node, n), (m as u32, k));
                assert!(seen.insert((node, n)), "numbers are unique per node");
            }
        }
        // Dense from 0 at every node.
        for node in 0..4u32 {
            let mut ns: Vec<u64> = seen
                .iter()
                .filter(|(x, _)| *x == node)
                .map(|&(_, n)| n)
                .collect();
            ns.sort_unstable();
            assert_eq!(ns, (0..ns.len() as u64).collect::<Vec<_>>());
        }
    }
}

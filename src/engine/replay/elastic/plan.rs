//! What crosses the network in an elastic replay, decided before it starts: each MPI
//! message's protocol (eager, or rendezvous with its control messages), the flits of
//! every network message, and how each source node numbers the network messages it
//! will send. The numbering is what lets a partition that receives a message know
//! which one it is from its id alone (`Simulation::inject_numbered`): every partition
//! holds this plan, so nothing about a message has to travel with it.
//!
//! Not here: running the programs (`ranks`), stepping (`step`).

use super::ElasticOptions;
use crate::error::{Error, Result};
use crate::trace::program::{Program, SendMode};

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
        })
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

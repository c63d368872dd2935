//! What one rank writes for another at an exchange, and the exchange itself: the
//! summaries (and, at a check point, the wait-for edges) of the rank's partitions, and
//! the events and side data its partitions sent to the other rank's partitions during
//! the stretch. One `postcard` buffer per destination rank, reused from exchange to
//! exchange; the outbox vectors are swapped, not copied, so a stretch allocates nothing
//! per event.

use crate::engine::distributed::{stalled, Shared};
use crate::engine::network::Network;
use crate::engine::parallel::{lock, CycleBarrier};
use crate::engine::partition::PartOut;
use crate::engine::sim::Summary;
use crate::engine::transport::Transport;
use crate::engine::waits::WaitEdge;
use crate::foundation::error::Error;
use crate::foundation::types::Cycle;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// A failure to write or read what crosses ranks.
pub(crate) fn error(what: &str, e: postcard::Error) -> Error {
    Error::Distributed(format!("{what}: {e}"))
}

/// One partition's outbox vectors for partitions of other ranks, by global partition.
pub(crate) struct Outgoing<N: Network> {
    /// Events, by destination partition.
    pub(crate) events: Vec<Vec<(Cycle, N::Event)>>,
    /// Side data, by destination partition.
    pub(crate) extras: Vec<Vec<N::Remote>>,
}

impl<N: Network> Outgoing<N> {
    pub(crate) fn new(parts: usize) -> Self {
        Outgoing {
            events: (0..parts).map(|_| Vec::new()).collect(),
            extras: (0..parts).map(|_| Vec::new()).collect(),
        }
    }

    /// Takes what `out` holds for partitions outside `mine` (leaving it the emptied
    /// vectors of the last exchange).
    pub(crate) fn take_from(
        &mut self,
        out: &mut PartOut<N::Event, N::Remote>,
        mine: &Range<usize>,
    ) {
        for q in (0..self.events.len()).filter(|q| !mine.contains(q)) {
            std::mem::swap(&mut self.events[q], &mut out.events[q]);
            std::mem::swap(&mut self.extras[q], &mut out.extras[q]);
        }
    }
}

/// Mail from one partition to another: (from, to, events, side data).
pub(crate) type MailRef<'a, E, R> = (u32, u32, &'a [(Cycle, E)], &'a [R]);

/// [`MailRef`], owned.
pub(crate) type MailOwned<E, R> = (u32, u32, Vec<(Cycle, E)>, Vec<R>);

/// What a rank sends another at an exchange (borrowed for writing).
#[derive(Serialize)]
struct PacketRef<'a, E: Serialize, R: Serialize> {
    sums: &'a [(u32, Summary)],
    edges: &'a [WaitEdge],
    mail: Vec<MailRef<'a, E, R>>,
}

/// What a rank receives from another at an exchange.
#[derive(Deserialize)]
struct Packet<E, R> {
    sums: Vec<(u32, Summary)>,
    edges: Vec<WaitEdge>,
    mail: Vec<MailOwned<E, R>>,
}

/// The exchanging thread's buffers: the ranks, which rank steps each partition, and one
/// reused byte buffer to and from every rank. A synthetic run exchanges with [`Exchanger::run`]
/// at the end of a stretch, a replay with its own packet after every cycle
/// (`experiments::replay::exchange`).
pub(crate) struct Exchanger<'a> {
    pub(crate) t: &'a dyn Transport,
    /// The partitions this rank steps.
    pub(crate) mine: Range<usize>,
    /// The rank of each partition.
    pub(crate) owner: Vec<usize>,
    pub(crate) send: Vec<Vec<u8>>,
    pub(crate) recv: Vec<Vec<u8>>,
}

impl<'a> Exchanger<'a> {
    /// What this rank's partitions (their outgoing vectors `out`, in partition order)
    /// send rank `r`'s partitions, leaving out empty pairs.
    pub(crate) fn mail_for<'o, N: Network>(
        &self,
        out: &'o [std::sync::MutexGuard<'_, Outgoing<N>>],
        r: usize,
    ) -> Vec<MailRef<'o, N::Event, N::Remote>> {
        let mut mail = Vec::new();
        for (i, o) in out.iter().enumerate() {
            let from = (self.mine.start + i) as u32;
            for q in (0..self.owner.len()).filter(|&q| self.owner[q] == r) {
                if !o.events[q].is_empty() || !o.extras[q].is_empty() {
                    mail.push((from, q as u32, &o.events[q][..], &o.extras[q][..]));
                }
            }
        }
        mail
    }

    pub(crate) fn new(t: &'a dyn Transport, mine: &Range<usize>, owned: &[Range<usize>]) -> Self {
        let parts = owned.last().map_or(0, |r| r.end);
        let mut owner = vec![0; parts];
        for (r, range) in owned.iter().enumerate() {
            for p in range.clone() {
                owner[p] = r;
            }
        }
        Exchanger {
            t,
            mine: mine.clone(),
            owner,
            send: vec![Vec::new(); t.ranks()],
            recv: vec![Vec::new(); t.ranks()],
        }
    }

    /// The exchange at the end of a stretch, after every local partition stepped its
    /// last cycle (`parity`: that cycle's half of the shared slots; `check`: it ends at a
    /// check point, so wait-for edges travel too). Leaves every partition's summary in
    /// `sh.global` and what other ranks sent each local partition in `sh.incoming`.
    pub(super) fn run<N: Network, B: CycleBarrier>(
        &mut self,
        sh: Shared<'_, N, B>,
        parity: usize,
        check: bool,
    ) {
        let parts = sh.parts;
        let me = self.t.rank();
        let sums: Vec<(u32, Summary)> = self
            .mine
            .clone()
            .map(|q| (q as u32, *lock(&sh.sums[parity * parts + q])))
            .collect();
        let mut edges: Vec<WaitEdge> = Vec::new();
        if check {
            for q in self.mine.clone() {
                edges.extend_from_slice(&lock(&sh.edges[parity * parts + q]));
            }
        }
        {
            let mut out: Vec<_> = sh.outgoing.iter().map(lock).collect();
            for r in (0..self.send.len()).filter(|&r| r != me) {
                let mail = self.mail_for(&out, r);
                let packet = PacketRef {
                    sums: &sums,
                    edges: &edges,
                    mail,
                };
                let mut buf = std::mem::take(&mut self.send[r]);
                buf.clear();
                self.send[r] = postcard::to_extend(&packet, buf)
                    .expect("events and summaries always serialise");
            }
            for o in out.iter_mut() {
                o.events.iter_mut().for_each(Vec::clear);
                o.extras.iter_mut().for_each(Vec::clear);
            }
        }
        self.t.exchange(&self.send, &mut self.recv);
        let mut global = lock(sh.global);
        for &(q, s) in &sums {
            global[q as usize] = s;
        }
        for r in (0..self.recv.len()).filter(|&r| r != me) {
            let packet: Packet<N::Event, N::Remote> = postcard::from_bytes(&self.recv[r])
                .unwrap_or_else(|e| panic!("{}", error(&format!("what rank {r} sent"), e)));
            for (q, s) in packet.sums {
                global[q as usize] = s;
            }
            edges.extend(packet.edges);
            for (_, to, events, extras) in packet.mail {
                let mut inc = lock(&sh.incoming[to as usize - self.mine.start]);
                inc.0.extend(events);
                inc.1.extend(extras);
            }
        }
        if check {
            // A deadlock's waits may span ranks: look at the union of every partition's
            // edges, as one process does.
            global[0].proven_stall = stalled(&edges);
        }
    }
}

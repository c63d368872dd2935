//! One partition's share of an elastic replay: the programs of the ranks placed on its
//! nodes, run call by call against the emulated network, and the protocol messages of
//! the MPI messages those ranks send and receive.
//!
//! A rank is at one place of its program at a time: computing (until a cycle), inside
//! a call whose recorded duration is kept (until a cycle), paying a send's host
//! overhead (until a cycle), or at an operation of a call — posting a send or a
//! receive (instantaneous), or waiting for requests or a probed message (until what it
//! waits for has completed). Every effect of a delivery is on the node that received
//! it: a receive completes, a rendezvous is cleared to send, a send is acknowledged. So
//! a partition needs only its own nodes' deliveries, and nothing but the network's own
//! messages passes between partitions.
//!
//! Time: a message posted in cycle t is created (enters its source's memory) in cycle
//! t; a delivered message is seen by the program in the cycle its tail is absorbed
//! (`Delivery::absorbed`, the end of the latency the network reports), and never in the
//! cycle whose step delivered it (that cycle's programs have already run). So a
//! message of zero-load latency L posted in cycle t completes its receive in t + L.
//!
//! Not here: the protocols' numbering (`plan`), stepping (`step`).

use crate::engine::network::Network;
use crate::engine::probe::hist_serde;
use crate::engine::probe::{histogram, Delivery};
use crate::engine::sim::Simulation;
use crate::experiments::replay::elastic::plan::{scale_ns, Kind, NetPlan, Proto};
use crate::experiments::replay::elastic::{Critical, ElasticOptions, RankOut};
use crate::experiments::replay::ReplayRecord;
use crate::foundation::types::{Cycle, NodeId};
use crate::trace::dumpi::call_name;
use crate::trace::program::{Op, Program, Req, SendMode};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// Not known yet.
const UNKNOWN: Cycle = Cycle::MAX;

/// Where a rank is in its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// About to enter its call (at its pending run).
    Enter,
    /// Inside a call whose recorded duration is kept, until its pending run.
    Local,
    /// At an operation of its call.
    Ops,
    /// Past its last call.
    Done,
}

/// One rank's progress.
#[derive(Clone, Debug)]
struct RankState {
    phase: Phase,
    /// Current call.
    call: usize,
    /// Next operation (index into the rank's ops).
    op: u32,
    /// In a wait: the first request not known to be complete.
    wait_pos: u32,
    /// The send overhead of the operation at `op` has been paid.
    paid: bool,
    /// The cycle its one pending run is due (UNKNOWN: none).
    pending: Cycle,
    /// Waiting for a completion not yet known: a delivery wakes it.
    blocked: bool,
    /// When the current call was entered, and when the current wait or probe began.
    enter: Cycle,
    since: Cycle,
    out: RankOut,
}

/// What a partition knows of an MPI message (the side it owns).
#[derive(Clone, Copy, Debug)]
struct MsgState {
    /// Receiver: the cycle the program sees the data (eager) or the RTS (rendezvous).
    arrived: Cycle,
    /// Receiver: the cycle its receive was posted.
    posted: Cycle,
    /// Receiver: the cycle its receive completes.
    recv_done: Cycle,
    /// Sender: the cycle its send completes.
    send_done: Cycle,
}

impl Default for MsgState {
    fn default() -> Self {
        MsgState {
            arrived: UNKNOWN,
            posted: UNKNOWN,
            recv_done: UNKNOWN,
            send_done: UNKNOWN,
        }
    }
}

/// Per source rank, its data messages delivered here.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub(super) struct SrcAcc {
    pub(super) messages: u64,
    pub(super) size: u64,
    pub(super) flits: u64,
    pub(super) latency_sum: u64,
    pub(super) latency_max: u64,
    pub(super) first_created: Cycle,
    pub(super) last_delivery: Cycle,
}

/// What a partition measured, to be merged with the others' (in partition order).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct PartAcc {
    /// Its ranks, in rank order.
    pub(super) ranks: Vec<RankOut>,
    pub(super) data_delivered: u64,
    pub(super) control_delivered: u64,
    pub(super) control_flits: u64,
    pub(super) flits: u64,
    #[serde(with = "hist_serde")]
    pub(super) latency: Histogram<u64>,
    /// (source rank, its data messages delivered here), by source rank.
    pub(super) by_src: Vec<(u32, SrcAcc)>,
    pub(super) last_delivery: Cycle,
    pub(super) first_created: Option<Cycle>,
    /// The data messages' records (when asked for).
    pub(super) records: Vec<ReplayRecord>,
    /// Every delivery, data and control (the per-message log, when asked for).
    pub(super) log: Vec<Delivery>,
}

/// Where a stuck rank is, for the message that tells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Stuck {
    pub(super) rank: u32,
    pub(super) call: u32,
    pub(super) op: u32,
    pub(super) wait_pos: u32,
}

/// One partition's ranks and messages.
pub(super) struct Ranks {
    prog: Arc<Program>,
    plan: Arc<NetPlan>,
    opts: ElasticOptions,
    time_scale: f64,
    /// The ranks this partition runs, in rank order.
    mine: Vec<u32>,
    rank: Vec<Option<RankState>>,
    msg: Vec<MsgState>,
    /// (cycle, event): a rank's run (key = rank) sorts before a message's creation
    /// (key = INJECT | node << 38 | number) in the same cycle.
    events: BinaryHeap<Reverse<(Cycle, u64)>>,
    /// Network messages created here, and delivered here.
    pub(super) created: u64,
    pub(super) delivered: u64,
    /// Of those, the ones that may cross between processes (see `plan::Crossing`).
    pub(super) crossing_created: u64,
    pub(super) crossing_delivered: u64,
    /// Ranks not finished.
    pub(super) unfinished: u64,
    /// Last cycle a message was delivered here.
    pub(super) last_delivery: Cycle,
    keep_records: bool,
    keep_log: bool,
    acc: PartAcc,
    by_src: Vec<SrcAcc>,
}

const INJECT: u64 = 1 << 62;
const NUMBER_BITS: u32 = 38;

impl Ranks {
    /// The ranks placed on nodes `owns` says this partition owns.
    pub(super) fn new(
        prog: Arc<Program>,
        plan: Arc<NetPlan>,
        opts: &ElasticOptions,
        time_scale: f64,
        owns: impl Fn(u32) -> bool,
        (keep_records, keep_log): (bool, bool),
    ) -> Ranks {
        let ranks = prog.ranks.len();
        let mut rank = vec![None; ranks];
        let mut mine = Vec::new();
        let mut events = BinaryHeap::new();
        for (r, p) in prog.ranks.iter().enumerate() {
            let node = plan.node_of[r];
            if !owns(node) {
                continue;
            }
            mine.push(r as u32);
            let out = RankOut::recorded(r as u32, node, p, time_scale);
            let (phase, pending) = if p.calls.is_empty() {
                (Phase::Done, UNKNOWN)
            } else {
                // Every rank starts its first call in cycle 0.
                events.push(Reverse((0, r as u64)));
                (Phase::Enter, 0)
            };
            rank[r] = Some(RankState {
                phase,
                call: 0,
                op: 0,
                wait_pos: 0,
                paid: false,
                pending,
                blocked: false,
                enter: 0,
                since: 0,
                out,
            });
        }
        let unfinished = rank
            .iter()
            .flatten()
            .filter(|s| s.phase != Phase::Done)
            .count() as u64;
        let sources = ranks;
        Ranks {
            msg: vec![MsgState::default(); prog.msgs.len()],
            prog,
            plan,
            opts: opts.clone(),
            time_scale,
            mine,
            rank,
            events,
            created: 0,
            delivered: 0,
            crossing_created: 0,
            crossing_delivered: 0,
            unfinished,
            last_delivery: 0,
            keep_records,
            keep_log,
            acc: PartAcc {
                ranks: Vec::new(),
                data_delivered: 0,
                control_delivered: 0,
                control_flits: 0,
                flits: 0,
                latency: histogram(),
                by_src: Vec::new(),
                last_delivery: 0,
                first_created: None,
                records: Vec::new(),
                log: Vec::new(),
            },
            by_src: vec![SrcAcc::default(); sources],
        }
    }

    /// The programs it runs.
    pub(super) fn program(&self) -> Arc<Program> {
        Arc::clone(&self.prog)
    }

    /// The next cycle this partition's programs have something to do in (Cycle::MAX:
    /// nothing until a delivery).
    pub(super) fn next_event(&self) -> Cycle {
        self.events.peek().map_or(Cycle::MAX, |r| r.0 .0)
    }

    /// Runs what is due in cycle `sim.t`: ranks whose compute, kept call or overhead
    /// ends, or that a completion woke; then creates the network messages due, in
    /// (node, number) order.
    pub(super) fn create<N: Network>(&mut self, sim: &mut Simulation<N>) {
        let t = sim.t;
        while let Some(&Reverse((at, key))) = self.events.peek() {
            if at > t {
                break;
            }
            debug_assert_eq!(at, t, "an event was left behind");
            self.events.pop();
            if key & INJECT == 0 {
                let r = key as usize;
                if self.rank[r].as_ref().is_some_and(|s| s.pending == at) {
                    self.run(r, t);
                }
            } else {
                let node = ((key & !INJECT) >> NUMBER_BITS) as u32;
                let number = key & ((1 << NUMBER_BITS) - 1);
                let (m, kind) = self.plan.decode(node, number);
                let msg = &self.prog.msgs[m as usize];
                let to = if matches!(kind, Kind::Data | Kind::Rts) {
                    msg.dst
                } else {
                    msg.src
                };
                let dst = self.plan.node_of[to as usize];
                let flits = if kind.is_data() {
                    self.plan.flits[m as usize]
                } else {
                    1
                };
                sim.inject_numbered(NodeId(node), number, NodeId(dst), flits);
                self.created += 1;
                if self.crosses(m, kind) {
                    self.crossing_created += 1;
                }
                self.acc.first_created.get_or_insert(t);
            }
        }
    }

    /// Schedules network message `kind` of message `m` to be created in cycle `at`.
    fn send_net(&mut self, m: u32, kind: Kind, at: Cycle) {
        let msg = &self.prog.msgs[m as usize];
        let from = if matches!(kind, Kind::Data | Kind::Rts) {
            msg.src
        } else {
            msg.dst
        };
        let node = self.plan.node_of[from as usize] as u64;
        let number = self.plan.number(m, kind);
        self.events
            .push(Reverse((at, INJECT | node << NUMBER_BITS | number)));
    }

    /// Rank `r` runs from cycle `at` (no earlier than any run it has pending).
    fn wake(&mut self, r: u32, at: Cycle) {
        let s = self.rank[r as usize]
            .as_mut()
            .expect("a rank of this partition");
        if at < s.pending {
            s.pending = at;
            s.blocked = false;
            self.events.push(Reverse((at, r as u64)));
        }
    }

    /// Wakes rank `r` at `at` if it waits for a completion it does not know yet.
    fn wake_blocked(&mut self, r: u32, at: Cycle) {
        if self.rank[r as usize].as_ref().is_some_and(|s| s.blocked) {
            self.wake(r, at);
        }
    }

    /// Cycles of the host overhead `(fixed, per byte)` for `bytes`.
    fn overhead(cost: (f64, f64), bytes: u64) -> Cycle {
        let c = cost.0 + cost.1 * bytes as f64;
        if c > 0.0 {
            (c.round() as Cycle).min(crate::experiments::replay::HORIZON)
        } else {
            0
        }
    }

    fn recv_overhead(&self, m: u32) -> Cycle {
        let o = self.opts.overhead.recv;
        Self::overhead((o.fixed, o.per_byte), self.prog.msgs[m as usize].bytes)
    }

    /// When request `q` completes (UNKNOWN: not known yet).
    fn completion(&self, q: Req) -> Cycle {
        match q {
            Req::Send(m) => self.msg[m as usize].send_done,
            Req::Recv(r) => match self.prog.recvs[r as usize].msg {
                Some(m) => self.msg[m as usize].recv_done,
                // Nothing in the trace matches it: it completes as it is posted.
                None => 0,
            },
        }
    }

    /// The cycle a probed message is there to see.
    fn probed(&self, recv: u32) -> Cycle {
        match self.prog.recvs[recv as usize].msg {
            Some(m) => self.msg[m as usize].arrived,
            None => 0,
        }
    }

    /// Posts the send of `m` in cycle `t`.
    fn post_send(&mut self, m: u32, t: Cycle) {
        let proto = self.plan.proto[m as usize];
        let buffered = self.prog.msgs[m as usize].mode == SendMode::Buffered;
        let kind = match proto {
            Proto::Eager { .. } => Kind::Data,
            Proto::Rendezvous => Kind::Rts,
        };
        self.send_net(m, kind, t);
        let local = buffered || proto == (Proto::Eager { ack: false });
        if local {
            // The buffer is reusable at once: copied to MPI's buffer or sent eagerly.
            self.msg[m as usize].send_done = t;
        }
    }

    /// Posts a receive in cycle `t`.
    fn post_recv(&mut self, recv: u32, t: Cycle) {
        let Some(m) = self.prog.recvs[recv as usize].msg else {
            return;
        };
        let s = &mut self.msg[m as usize];
        s.posted = t;
        if s.arrived == UNKNOWN {
            return;
        }
        self.matched(m, t);
    }

    /// Message `m`'s receive is posted and its data (eager) or RTS (rendezvous) has
    /// arrived; in cycle `t`, the later of the two.
    fn matched(&mut self, m: u32, t: Cycle) {
        match self.plan.proto[m as usize] {
            Proto::Eager { ack } => {
                self.msg[m as usize].recv_done = t.saturating_add(self.recv_overhead(m));
                if ack {
                    self.send_net(m, Kind::Ack, t);
                }
            }
            Proto::Rendezvous => self.send_net(m, Kind::Cts, t),
        }
    }

    /// Takes this partition's deliveries of cycle `t` (every one is at a node it owns).
    pub(super) fn deliver(&mut self, t: Cycle, done: &[Delivery]) {
        for d in done {
            // The program sees the message once its tail is in memory, and never in the
            // cycle whose step delivered it (that cycle's programs have run).
            let seen = d.absorbed.max(t + 1);
            self.delivered += 1;
            self.last_delivery = self.last_delivery.max(d.absorbed);
            if self.keep_log {
                self.acc.log.push(*d);
            }
            let (node, number) = (d.header.id.src().0, d.header.id.seq());
            let (m, kind) = self.plan.decode(node, number);
            if self.crosses(m, kind) {
                self.crossing_delivered += 1;
            }
            let msg = &self.prog.msgs[m as usize];
            let (src, dst) = (msg.src, msg.dst);
            if !kind.is_data() {
                self.acc.control_delivered += 1;
                self.acc.control_flits += u64::from(d.header.len);
            }
            match kind {
                Kind::Data => {
                    self.data_delivered(m, d);
                    let o_r = self.recv_overhead(m);
                    let s = &mut self.msg[m as usize];
                    match self.plan.proto[m as usize] {
                        Proto::Eager { .. } => {
                            s.arrived = seen;
                            if s.posted != UNKNOWN {
                                let at = s.posted.max(seen);
                                self.matched(m, at);
                            }
                        }
                        Proto::Rendezvous => {
                            s.recv_done = seen.saturating_add(o_r);
                            self.send_net(m, Kind::Fin, seen);
                        }
                    }
                    let done = self.msg[m as usize].recv_done;
                    if done != UNKNOWN {
                        self.wake_blocked(dst, done);
                    }
                    // A probe may wait for the arrival.
                    self.wake_blocked(dst, seen);
                }
                Kind::Rts => {
                    let s = &mut self.msg[m as usize];
                    s.arrived = seen;
                    if s.posted != UNKNOWN {
                        let at = s.posted.max(seen);
                        self.matched(m, at);
                    }
                    self.wake_blocked(dst, seen);
                }
                Kind::Cts => self.send_net(m, Kind::Data, seen),
                Kind::Fin | Kind::Ack => {
                    self.msg[m as usize].send_done = seen;
                    self.wake_blocked(src, seen);
                }
            }
        }
    }

    /// Counts a data message's delivery.
    fn data_delivered(&mut self, m: u32, d: &Delivery) {
        let msg = &self.prog.msgs[m as usize];
        let h = &d.header;
        let latency = d.absorbed - h.created;
        self.acc.data_delivered += 1;
        self.acc.flits += u64::from(h.len);
        let _ = self.acc.latency.record(latency);
        self.acc.last_delivery = self.acc.last_delivery.max(d.absorbed);
        let a = &mut self.by_src[msg.src as usize];
        if a.messages == 0 {
            a.first_created = h.created;
        }
        a.messages += 1;
        a.size += msg.bytes;
        a.flits += u64::from(h.len);
        a.latency_sum += latency;
        a.latency_max = a.latency_max.max(latency);
        a.first_created = a.first_created.min(h.created);
        a.last_delivery = a.last_delivery.max(d.absorbed);
        if self.keep_records {
            let origin = self.prog.ranks[msg.src as usize]
                .calls
                .first()
                .map_or(0, |c| c.enter);
            self.acc.records.push(ReplayRecord {
                id: u64::from(m),
                src: self.plan.node_of[msg.src as usize],
                dst: self.plan.node_of[msg.dst as usize],
                size: msg.bytes,
                flits: h.len,
                recorded: scale_ns(msg.recorded.saturating_sub(origin), self.time_scale),
                created: h.created,
                injected: h.injected,
                delivered: d.absorbed,
                latency,
                hops: u32::from(h.hops),
            });
        }
    }

    /// Runs rank `r` in cycle `t` until it waits (for a cycle or a completion) or ends.
    fn run(&mut self, r: usize, t: Cycle) {
        let prog = Arc::clone(&self.prog);
        let p = &prog.ranks[r];
        {
            let s = self.rank[r].as_mut().expect("a rank of this partition");
            s.pending = UNKNOWN;
            s.blocked = false;
        }
        loop {
            let s = self.rank[r].as_mut().expect("a rank of this partition");
            let call = &p.calls[s.call];
            match s.phase {
                Phase::Done => return,
                Phase::Enter => {
                    s.enter = t;
                    s.out.calls += 1;
                    if call.communicates() {
                        s.phase = Phase::Ops;
                        s.op = call.ops.0;
                        s.wait_pos = u32::MAX;
                        continue;
                    }
                    s.phase = Phase::Local;
                    let kept = scale_ns(call.exit - call.enter, self.time_scale);
                    if kept > 0 {
                        self.wake(r as u32, t.saturating_add(kept));
                        return;
                    }
                }
                Phase::Local => {
                    s.out.local += t - s.enter;
                    if self.leave(r, t) {
                        return;
                    }
                }
                Phase::Ops => {
                    if s.op == call.ops.1 {
                        s.out.communication += t - s.enter;
                        if self.leave(r, t) {
                            return;
                        }
                        continue;
                    }
                    match p.ops[s.op as usize] {
                        Op::Send(m) => {
                            if !s.paid {
                                let o = self.opts.overhead.send;
                                let cost = Self::overhead(
                                    (o.fixed, o.per_byte),
                                    prog.msgs[m as usize].bytes,
                                );
                                if cost > 0 {
                                    s.paid = true;
                                    self.wake(r as u32, t.saturating_add(cost));
                                    return;
                                }
                            }
                            s.paid = false;
                            s.op += 1;
                            self.post_send(m, t);
                        }
                        Op::Recv(q) => {
                            s.op += 1;
                            self.post_recv(q, t);
                        }
                        Op::Probe(q) => {
                            if s.wait_pos == u32::MAX {
                                s.wait_pos = 0;
                                s.since = t;
                            }
                            let at = self.probed(q);
                            if !self.held(r, at, t) {
                                return;
                            }
                            let s = self.rank[r].as_mut().expect("mine");
                            if at > s.since {
                                let m = prog.recvs[q as usize].msg;
                                s.out.critical = Some(critical(&prog, r, s.call, m, at, s.since));
                            }
                            s.op += 1;
                            s.wait_pos = u32::MAX;
                        }
                        Op::Wait { from, to } => {
                            if s.wait_pos == u32::MAX {
                                s.wait_pos = from;
                                s.since = t;
                            }
                            while self.rank[r].as_ref().expect("mine").wait_pos < to {
                                let pos = self.rank[r].as_ref().expect("mine").wait_pos;
                                let at = self.completion(p.reqs[pos as usize]);
                                if !self.held(r, at, t) {
                                    return;
                                }
                                self.rank[r].as_mut().expect("mine").wait_pos += 1;
                            }
                            // What the wait waited for longest bounded it.
                            let s = self.rank[r].as_mut().expect("mine");
                            let last = p.reqs[from as usize..to as usize]
                                .iter()
                                .map(|&q| (completion_of(&self.msg, &prog, q), q))
                                .max_by_key(|&(c, _)| c);
                            if let Some((at, q)) = last.filter(|&(c, _)| c > s.since) {
                                let m = match q {
                                    Req::Send(m) => Some(m),
                                    Req::Recv(x) => prog.recvs[x as usize].msg,
                                };
                                s.out.critical = Some(critical(&prog, r, s.call, m, at, s.since));
                            }
                            s.op += 1;
                            s.wait_pos = u32::MAX;
                        }
                    }
                }
            }
        }
    }

    /// Whether what rank `r` waits for, complete at `at`, is complete in cycle `t`;
    /// if not, the rank waits for it: until `at`, or for a delivery when unknown.
    fn held(&mut self, r: usize, at: Cycle, t: Cycle) -> bool {
        if at <= t {
            return true;
        }
        if at == UNKNOWN {
            self.rank[r].as_mut().expect("mine").blocked = true;
        } else {
            self.wake(r as u32, at);
        }
        false
    }

    /// Rank `r` leaves its call in cycle `t`; returns whether it has to wait (for the
    /// compute before its next call) or is done.
    fn leave(&mut self, r: usize, t: Cycle) -> bool {
        let p = &self.prog.ranks[r];
        let s = self.rank[r].as_mut().expect("mine");
        s.out.finish = t;
        s.call += 1;
        if s.call == p.calls.len() {
            s.phase = Phase::Done;
            self.unfinished -= 1;
            return true;
        }
        s.phase = Phase::Enter;
        let gap = p.calls[s.call]
            .enter
            .saturating_sub(p.calls[s.call - 1].exit);
        let compute = scale_ns(gap, self.time_scale * self.opts.compute_scale);
        s.out.compute = s.out.compute.saturating_add(compute);
        if compute > 0 {
            self.wake(r as u32, t.saturating_add(compute));
            return true;
        }
        false
    }

    /// Whether network message `kind` of `m` may cross between processes.
    fn crosses(&self, m: u32, kind: Kind) -> bool {
        self.plan
            .crossing
            .as_ref()
            .is_some_and(|c| c.crosses(m, kind))
    }

    /// The earliest cycle after `now` in which this partition could create a network
    /// message that may cross to another process, were nothing to arrive from other
    /// processes meanwhile (Cycle::MAX: never; always in one process). A scheduled
    /// creation counts at its cycle; a rank at the earliest it could run (its pending
    /// run, or the next cycle if a delivery may wake it) plus the compute and kept calls
    /// it must go through before an operation that may make one.
    pub(super) fn earliest_crossing(&self, now: Cycle) -> Cycle {
        let Some(c) = &self.plan.crossing else {
            return Cycle::MAX;
        };
        let mut e = self
            .events
            .iter()
            .filter(|r| r.0 .1 & INJECT != 0)
            .filter_map(|r| {
                let (at, key) = r.0;
                let node = ((key & !INJECT) >> NUMBER_BITS) as u32;
                let (m, kind) = self.plan.decode(node, key & ((1 << NUMBER_BITS) - 1));
                c.crosses(m, kind).then_some(at)
            })
            .min()
            .unwrap_or(Cycle::MAX);
        for &r in &self.mine {
            let Some(s) = self.rank[r as usize].as_ref() else {
                continue;
            };
            let (r, k) = (r as usize, s.call);
            let base = if s.pending != UNKNOWN {
                s.pending
            } else {
                now + 1
            };
            let last = c.last_op.get(r).and_then(|l| l.get(k)).copied();
            let gap = c.gap[r].get(k).copied().unwrap_or(Cycle::MAX);
            let bound = match s.phase {
                Phase::Done => Cycle::MAX,
                Phase::Enter if last.is_some_and(|l| l != u32::MAX) => base,
                Phase::Enter => {
                    let call = &self.prog.ranks[r].calls[k];
                    let kept = if call.communicates() {
                        0
                    } else {
                        scale_ns(call.exit - call.enter, self.time_scale)
                    };
                    base.saturating_add(kept).saturating_add(gap)
                }
                Phase::Local => base.saturating_add(gap),
                Phase::Ops if last.is_some_and(|l| l != u32::MAX && l >= s.op) => base,
                Phase::Ops => base.saturating_add(gap),
            };
            e = e.min(bound);
        }
        e
    }

    /// A rank of this partition that is stuck (not done, nothing pending), if any.
    pub(super) fn stuck(&self) -> Option<Stuck> {
        self.mine.iter().find_map(|&r| {
            let s = self.rank[r as usize].as_ref()?;
            (s.phase != Phase::Done && s.pending == UNKNOWN).then_some(Stuck {
                rank: r,
                call: s.call as u32,
                op: s.op,
                wait_pos: s.wait_pos,
            })
        })
    }

    /// What this partition measured (its ranks' results moved out).
    pub(super) fn finish(mut self) -> PartAcc {
        for &r in &self.mine {
            if let Some(s) = self.rank[r as usize].take() {
                self.acc.ranks.push(s.out);
            }
        }
        self.acc.by_src = self
            .by_src
            .iter()
            .enumerate()
            .filter(|(_, a)| a.messages > 0)
            .map(|(r, a)| (r as u32, *a))
            .collect();
        self.acc
    }
}

/// When request `q` completes, from the messages' state.
fn completion_of(msg: &[MsgState], prog: &Program, q: Req) -> Cycle {
    match q {
        Req::Send(m) => msg[m as usize].send_done,
        Req::Recv(r) => prog.recvs[r as usize]
            .msg
            .map_or(0, |m| msg[m as usize].recv_done),
    }
}

/// The edge that released rank `r` in call `call` at `at` after waiting since `since`.
fn critical(
    prog: &Program,
    r: usize,
    call: usize,
    m: Option<u32>,
    at: Cycle,
    since: Cycle,
) -> Critical {
    let label = prog.ranks[r].calls[call].label;
    let peer = m.map(|m| {
        let msg = &prog.msgs[m as usize];
        if msg.src as usize == r {
            msg.dst
        } else {
            msg.src
        }
    });
    Critical {
        call: call_name(label).unwrap_or("unknown").to_string(),
        call_index: call as u64,
        message: m.map(u64::from),
        peer,
        waited: at - since,
        released: at,
    }
}

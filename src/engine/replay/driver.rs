//! The replay's bookkeeping: which trace messages are known, which wait for parents,
//! which are due, which are in flight, and what was measured. Every partition keeps an
//! identical copy, fed the same inputs in the same order (the messages read, every
//! partition's deliveries sorted by cycle and id), the way every partition keeps an
//! identical `Coordinator`: each then injects only the messages whose source it owns,
//! and all reach the same decisions without talking. Message ids are predicted, not
//! looked up: a source numbers its messages in creation order, and every copy creates
//! in the same order.
//!
//! The trace's ids are checked here as far as memory allows: an id read again while
//! its first message is still pending (read, not delivered), and a parent naming a
//! dependant that was already read and is still pending, are refused. Readers whose ids
//! increase ([`crate::trace::TraceSource::ids_increase`]: text, Netrace) refuse both
//! outright, and then a dependency on an id the reader has gone past without seeing is
//! dangling: an error for a whole trace, dropped and counted for part of one (a Netrace
//! region) and for ids beyond the end of the trace, so that nothing is kept for it for
//! ever.
//!
//! The watchdog counts progress as the network reports it (a flit moved) as well as
//! deliveries; when messages are in flight and nothing has moved for the window, the
//! network is deadlocked ([`Step::Deadlock`]), which is not the trace's fault.
//!
//! Not here: reading the trace (the leader partition does, `lockstep`), stepping the
//! routers (`engine::sim`).

use super::{flits_of, scale, RankRow, ReplayMode, ReplayOptions, ReplayRecord, ReplaySummary};
use crate::engine::network::Network;
use crate::engine::sim::Simulation;
use crate::error::{Error, Result};
use crate::stats::{histogram, Delivery};
use crate::trace::{SizeUnit, TraceMsg};
use crate::types::{Cycle, MsgId, NodeId};
use hdrhistogram::Histogram;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// What the driver decided after a cycle.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Step this cycle next.
    Next(Cycle),
    /// Everything was delivered.
    Done,
    /// Messages are in flight and the network has not moved for the watchdog's window
    /// (or has nothing left to do): a deadlock; the text says what was stuck.
    Deadlock(String),
}

/// The network's progress as the partitions report it after a cycle.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct NetProgress {
    /// The next cycle any partition has work in (Cycle::MAX: none).
    pub next: Cycle,
    /// The last cycle work moved in any partition (0 for modes that do not say).
    pub last_move: Cycle,
    /// Work that must keep moving, over every partition (0 for modes that do not say).
    pub live: i64,
}

/// Most dependants a trace may name ahead of the messages read (ids not yet seen that
/// a read message lists as its dependants): about 60 bytes each, so the replay's memory
/// stays bounded (60 MB) whatever the trace; real traces name their dependants a few
/// hundred ahead (the shipped Netrace traces: at most 103 at once; tested).
pub(crate) const MAX_AHEAD: usize = 1 << 20;

/// A message read and mapped onto the network, not yet created.
struct Pending {
    id: u64,
    /// The trace's source endpoint (its rank).
    rank: u32,
    src: u32,
    dst: u32,
    size: u64,
    flits: u32,
    recorded: Cycle,
    /// The recorded cycle its successor's lag is measured from (`TraceMsg::lag_from`;
    /// its own recorded cycle by default).
    lag_from: Cycle,
    children: Vec<u64>,
    successor: Option<u64>,
}

/// What a message's cleared parents allow: not before `at`, and not before its
/// recorded time plus `delay` (how late its program-order predecessor was created).
#[derive(Clone, Copy, Default)]
struct Allowed {
    at: Cycle,
    delay: Cycle,
}

/// A message created and not yet delivered.
struct InFlight {
    msg: Pending,
    created: Cycle,
}

/// One rank's (source endpoint's) communication so far.
#[derive(Clone, Copy, Default)]
struct RankAcc {
    node: u32,
    messages: u64,
    size: u64,
    flits: u64,
    latency_sum: u64,
    latency_max: u64,
    lag_sum: u64,
    first_created: Cycle,
    last_delivery: Cycle,
}

/// One partition's copy of the replay state.
pub(super) struct Driver {
    opts: ReplayOptions,
    deps: bool,
    /// The first endpoint's node.
    first: u32,
    nodes: u32,
    unit: SizeUnit,
    name: String,
    /// Next message number of each source node (its `MsgId` sequence).
    seq: Vec<u64>,
    /// Uncleared parents of children not yet created.
    parents: HashMap<u64, u32>,
    /// Earliest creation the cleared parents allow.
    allowed: HashMap<u64, Allowed>,
    /// Read, waiting for parents.
    blocked: HashMap<u64, Pending>,
    /// Ready, by creation cycle then trace id.
    due: BinaryHeap<Reverse<(Cycle, u64)>>,
    ready: HashMap<u64, Pending>,
    flying: HashMap<MsgId, InFlight>,
    read: u64,
    delivered: u64,
    flits: u64,
    lat: Histogram<u64>,
    behind_sum: u128,
    behind_max: u64,
    last_delivery: Cycle,
    last_progress: Cycle,
    first_recorded: Option<Cycle>,
    last_recorded: Cycle,
    /// Dependency edges read (children and program-order successors), in either mode:
    /// none means `--mode deps` replays exactly as open loop.
    dependencies: u64,
    first_created: Option<Cycle>,
    /// created − recorded, per message: how late the dependencies (or a full source)
    /// made its creation.
    created_lag: Histogram<u64>,
    created_lag_sum: u128,
    created_late: u64,
    /// delivered − recorded, per message.
    delivered_lag: Histogram<u64>,
    delivered_lag_sum: u128,
    /// Per rank; sorted only for the summary.
    ranks: HashMap<u32, RankAcc>,
    /// Whether the source's ids increase (then `live` is not needed and dangling
    /// dependencies can be found).
    ids_increase: bool,
    /// Whether only part of the trace is read: dangling dependencies are dropped.
    partial: bool,
    /// Ids read and not yet delivered (sources whose ids need not increase).
    live: HashSet<u64>,
    /// Children named by a dependency, smallest first, to find the dangling ones.
    awaited: BinaryHeap<Reverse<u64>>,
    /// Dependencies dropped because their dependant is not in the part read.
    dangling: u64,
    /// Every delivery, for the per-message log (`experiment.observe.message_log`; the
    /// leader's copy only).
    pub(super) log: Option<Vec<Delivery>>,
}

impl Driver {
    /// A driver for a network whose `nodes` endpoints (the nodes that send and receive:
    /// every node, or a host/switch network's hosts) are nodes `first..first + nodes`,
    /// replaying a trace sized in `unit`.
    pub(super) fn new(
        opts: &ReplayOptions,
        (first, nodes): (u32, u32),
        unit: SizeUnit,
        name: &str,
    ) -> Self {
        Driver {
            opts: opts.clone(),
            deps: opts.mode == ReplayMode::Deps,
            first,
            nodes,
            unit,
            name: name.to_string(),
            seq: vec![0; (first + nodes) as usize],
            parents: HashMap::new(),
            allowed: HashMap::new(),
            blocked: HashMap::new(),
            due: BinaryHeap::new(),
            ready: HashMap::new(),
            flying: HashMap::new(),
            read: 0,
            delivered: 0,
            flits: 0,
            lat: histogram(),
            behind_sum: 0,
            behind_max: 0,
            last_delivery: 0,
            last_progress: 0,
            first_recorded: None,
            last_recorded: 0,
            dependencies: 0,
            first_created: None,
            created_lag: histogram(),
            created_lag_sum: 0,
            created_late: 0,
            delivered_lag: histogram(),
            delivered_lag_sum: 0,
            ranks: HashMap::new(),
            log: None,
            ids_increase: false,
            partial: false,
            live: HashSet::new(),
            awaited: BinaryHeap::new(),
            dangling: 0,
        }
    }

    /// Says what the source guarantees (see [`crate::trace::TraceSource::ids_increase`]
    /// and [`crate::trace::TraceSource::partial`]).
    pub(super) fn source_traits(&mut self, ids_increase: bool, partial: bool) {
        self.ids_increase = ids_increase;
        self.partial = partial;
    }

    /// Entries kept for dependencies (uncleared parents and what cleared ones
    /// allow): bounded by the messages pending, never by the trace's length.
    #[cfg(test)]
    pub(super) fn dependency_entries(&self) -> usize {
        self.parents.len() + self.allowed.len()
    }

    /// The node of endpoint `e` of message `m`.
    fn node_of(&self, m: &TraceMsg, e: u32) -> Result<u32> {
        let at = || format!("{}: message {} (recorded at {})", self.name, m.id, m.time);
        let n = self.opts.map.node(e).ok_or_else(|| {
            Error::Trace(format!("{}: endpoint {e} is not in the node map", at()))
        })?;
        if n >= self.nodes {
            return Err(Error::Trace(format!(
                "{}: endpoint {e} maps to node {n}, outside the network's {} nodes \
                 (give a node map or placement that folds the trace's endpoints onto the network)",
                at(),
                self.nodes
            )));
        }
        // Maps and placements number the endpoints' nodes from 0 (a host network's hosts).
        Ok(self.first + n)
    }

    /// Takes the messages read after cycle `t` (recorded no later than `t + 1`); they
    /// are created from cycle `t + 1` on (cycle 0 for those read before the start,
    /// `t = None`).
    pub(super) fn ingest(&mut self, msgs: &[TraceMsg], t: Option<Cycle>) -> Result<()> {
        let earliest = t.map_or(0, |t| t + 1);
        for m in msgs {
            if self.ids_increase {
                self.drop_dangling(Some(m.id))?;
            } else {
                self.check_ids(m)?;
            }
            let recorded = scale(m.time, self.opts.time_scale);
            self.read += 1;
            // Dependency-driven traces need not be in time order.
            let first = self.first_recorded.get_or_insert(recorded);
            *first = (*first).min(recorded);
            self.last_recorded = self.last_recorded.max(recorded);
            self.dependencies += m.children.len() as u64 + u64::from(m.successor.is_some());
            // The reader refused larger messages.
            let flits = flits_of(m.size, self.unit, self.opts.flit_bytes).unwrap_or(u32::MAX);
            let p = Pending {
                id: m.id,
                rank: m.src,
                src: self.node_of(m, m.src)?,
                dst: self.node_of(m, m.dst)?,
                size: m.size,
                flits,
                recorded,
                lag_from: m
                    .lag_from
                    .map_or(recorded, |l| scale(l, self.opts.time_scale)),
                children: if self.deps {
                    m.children.clone()
                } else {
                    Vec::new()
                },
                successor: m.successor.filter(|_| self.deps),
            };
            for &c in p.children.iter().chain(&p.successor) {
                let n = self.parents.entry(c).or_insert(0);
                if *n == 0 && self.ids_increase {
                    self.awaited.push(Reverse(c));
                }
                *n += 1;
            }
            if self.awaited.len() > MAX_AHEAD {
                return Err(Error::Trace(format!(
                    "{}: more than {MAX_AHEAD} dependants are named ahead of the messages \
                     read so far (the nearest is id {}, the last read id {}): dependencies \
                     reaching that far ahead would hold memory without bound, so they are \
                     refused (a dependant must come within {MAX_AHEAD} named dependants of \
                     its parent)",
                    self.name,
                    self.awaited.peek().map_or(0, |r| r.0),
                    m.id
                )));
            }
            if self.deps && self.parents.contains_key(&m.id) {
                self.blocked.insert(m.id, p);
            } else {
                self.make_due(p, earliest);
            }
        }
        Ok(())
    }

    /// Refuses `m` when its id is that of a message still pending, or when it names a
    /// dependant already read (and still pending): for sources whose ids need not
    /// increase, as far as the messages kept tell.
    fn check_ids(&mut self, m: &TraceMsg) -> Result<()> {
        let at = || format!("{}: message {} (recorded at {})", self.name, m.id, m.time);
        if !self.live.insert(m.id) {
            return Err(Error::Trace(format!(
                "{}: the id {} is used twice (ids are unique)",
                at(),
                m.id
            )));
        }
        // Only dependency-driven replay follows the dependencies (and has the stream
        // parents first: open loop reads it in time order).
        if let Some(c) = m
            .children
            .iter()
            .chain(&m.successor)
            .filter(|_| self.deps)
            .find(|c| self.live.contains(c))
        {
            return Err(Error::Trace(format!(
                "{}: lists {c} as a dependant, but {c} came before it (a dependant comes \
                 after its parent)",
                at()
            )));
        }
        Ok(())
    }

    /// Handles the dependencies on ids the reader has gone past without seeing them
    /// (below `next`, the id about to be ingested; every id at the end, None): their
    /// dependant is not in the trace. An error for a whole trace; dropped and counted
    /// for a part of one, and for dependants beyond the trace's last id (a recording
    /// that ended before them).
    fn drop_dangling(&mut self, next: Option<u64>) -> Result<()> {
        while let Some(&Reverse(c)) = self.awaited.peek() {
            if next.is_some_and(|n| c >= n) {
                break;
            }
            self.awaited.pop();
            let named = self.parents.contains_key(&c) || self.allowed.contains_key(&c);
            if !named || self.blocked.contains_key(&c) {
                // Read: created already, or waiting for its parents.
                continue;
            }
            if let Some(n) = next.filter(|_| !self.partial) {
                return Err(Error::Trace(format!(
                    "{}: a message lists {c} as a dependant, but there is no message {c} \
                     (message {n} came without it; ids increase)",
                    self.name
                )));
            }
            self.parents.remove(&c);
            self.allowed.remove(&c);
            self.dangling += 1;
        }
        Ok(())
    }

    /// Queues `p` for creation at the earliest cycle from `earliest` on that its
    /// recorded time and its cleared parents allow.
    fn make_due(&mut self, p: Pending, earliest: Cycle) {
        let a = self.allowed.remove(&p.id).unwrap_or_default();
        let at = a.at.max(p.recorded.saturating_add(a.delay)).max(earliest);
        self.due.push(Reverse((at, p.id)));
        self.ready.insert(p.id, p);
    }

    /// One of `c`'s parents is cleared, allowing `a`; queues `c` (from `earliest` on)
    /// once it was read and all are.
    fn clear_parent(&mut self, c: u64, a: Allowed, earliest: Cycle) {
        let Some(left) = self.parents.get_mut(&c) else {
            // A dangling dependant, dropped (not in the part of the trace read).
            return;
        };
        *left -= 1;
        let e = self.allowed.entry(c).or_default();
        e.at = e.at.max(a.at);
        e.delay = e.delay.max(a.delay);
        if self.parents.get(&c) == Some(&0) {
            self.parents.remove(&c);
            if let Some(p) = self.blocked.remove(&c) {
                self.make_due(p, earliest);
            }
        }
    }

    /// Creates the messages due in cycle `sim.t`; the partition injects those whose
    /// source it owns.
    pub(super) fn create<N: Network>(&mut self, sim: &mut Simulation<N>) -> Result<()> {
        let t = sim.t;
        while let Some(&Reverse((at, id))) = self.due.peek() {
            if at > t {
                break;
            }
            self.due.pop();
            // The ids were checked when read; a trace that still gets here is refused
            // rather than trusted.
            let p = self.ready.remove(&id).ok_or_else(|| {
                Error::Trace(format!(
                    "{}: message {id} came due twice (its id is used twice?)",
                    self.name
                ))
            })?;
            let s = p.src as usize;
            let mid = MsgId::new(NodeId(p.src), self.seq[s]);
            self.seq[s] += 1;
            if sim.out.is_local(p.src) {
                let got = sim.inject(NodeId(p.src), NodeId(p.dst), p.flits);
                debug_assert_eq!(got, mid, "every copy numbers the messages alike");
            }
            if let Some(s) = p.successor {
                // Program order: the successor may come due in this very cycle.
                let delay = t.saturating_sub(p.lag_from);
                self.clear_parent(s, Allowed { at: 0, delay }, t);
            }
            self.first_created.get_or_insert(t);
            self.flying.insert(mid, InFlight { msg: p, created: t });
        }
        Ok(())
    }

    /// Takes the deliveries of cycle `t` (every partition's, in a canonical order);
    /// `each` sees their records (the leader's writes them, the others' do nothing).
    pub(super) fn deliver(
        &mut self,
        t: Cycle,
        done: &[Delivery],
        each: &mut dyn FnMut(&ReplayRecord) -> Result<()>,
    ) -> Result<()> {
        if let Some(l) = &mut self.log {
            l.extend_from_slice(done);
        }
        for dv in done {
            let f = self
                .flying
                .remove(&dv.header.id)
                .expect("every delivered message was created by the replay");
            let rec = ReplayRecord {
                id: f.msg.id,
                src: f.msg.src,
                dst: f.msg.dst,
                size: f.msg.size,
                flits: f.msg.flits,
                recorded: f.msg.recorded,
                created: f.created,
                injected: dv.header.injected,
                delivered: dv.absorbed,
                latency: dv.absorbed - f.created,
                hops: dv.header.hops as u32,
            };
            let behind = rec.injected.saturating_sub(rec.recorded);
            self.behind_sum += behind as u128;
            self.behind_max = self.behind_max.max(behind);
            let _ = self.lat.record(rec.latency);
            let lag = rec.created - rec.recorded;
            let _ = self.created_lag.record(lag);
            self.created_lag_sum += lag as u128;
            self.created_late += u64::from(lag > 0);
            let dlag = rec.delivered - rec.recorded;
            let _ = self.delivered_lag.record(dlag);
            self.delivered_lag_sum += dlag as u128;
            let r = self.ranks.entry(f.msg.rank).or_insert(RankAcc {
                node: f.msg.src,
                first_created: f.created,
                ..RankAcc::default()
            });
            r.messages += 1;
            r.size += f.msg.size;
            r.flits += f.msg.flits as u64;
            r.latency_sum += rec.latency;
            r.latency_max = r.latency_max.max(rec.latency);
            r.lag_sum += lag;
            r.first_created = r.first_created.min(f.created);
            r.last_delivery = r.last_delivery.max(rec.delivered);
            self.delivered += 1;
            self.flits += f.msg.flits as u64;
            self.last_delivery = self.last_delivery.max(dv.absorbed);
            self.last_progress = t;
            if !self.ids_increase {
                self.live.remove(&f.msg.id);
            }
            each(&rec)?;
            let a = Allowed {
                at: dv.absorbed.saturating_add(self.opts.gap),
                delay: 0,
            };
            for c in f.msg.children {
                self.clear_parent(c, a, t + 1);
            }
        }
        Ok(())
    }

    /// The cycle after `t` to step next, from the network's progress `net` and the
    /// first unread message's recorded time (None: all read). The cycle before an
    /// unread message is stepped (idle if nothing else happens) so that the leader reads
    /// it in time for every copy to know it.
    pub(super) fn next(
        &mut self,
        t: Cycle,
        net: NetProgress,
        unread: Option<Cycle>,
    ) -> Result<Step> {
        if unread.is_none() && self.ids_increase {
            self.drop_dangling(None)?;
        }
        if self.flying.is_empty() {
            // A stall is counted only while something is in flight.
            self.last_progress = t;
        }
        let before_unread = unread.map_or(Cycle::MAX, |u| u.saturating_sub(1));
        let due = self.due.peek().map_or(Cycle::MAX, |r| r.0 .0);
        let upcoming = net.next.min(due).min(before_unread);
        if upcoming == Cycle::MAX {
            if self.flying.is_empty() && self.blocked.is_empty() {
                return Ok(Step::Done);
            }
            if self.flying.is_empty() {
                let mut ids: Vec<u64> = self.blocked.keys().copied().collect();
                ids.sort_unstable();
                ids.truncate(5);
                return Err(Error::Trace(format!(
                    "{}: {} messages wait for parents that never come (ids {ids:?}…): \
                     their parents are not in the trace (or in a region not replayed)",
                    self.name,
                    self.blocked.len()
                )));
            }
        }
        if self.flying.is_empty() {
            return Ok(Step::Next(upcoming.max(t + 1)));
        }
        // Progress: a delivery, or (where the network says) a flit that moved.
        let progress = self.last_progress.max(net.last_move.min(t));
        let idle = t.saturating_sub(progress);
        let stalled = upcoming == Cycle::MAX
            || idle > self.opts.stall_cycles && {
                // A network that does not report movement (circuits, deflection) is
                // given the time its longest message takes to stream.
                let longest = if net.live > 0 || net.last_move > 0 {
                    0
                } else {
                    self.flying.values().map(|f| f.msg.flits).max().unwrap_or(0)
                };
                idle > self.opts.stall_cycles.saturating_add(Cycle::from(longest))
            };
        if stalled {
            let oldest = self
                .flying
                .values()
                .min_by_key(|f| (f.created, f.msg.id))
                .expect("in flight");
            return Ok(Step::Deadlock(format!(
                "{}: replay deadlocked at cycle {t}: {} messages in flight and {} (the \
                 oldest, trace id {}, {} → {}, created at cycle {})",
                self.name,
                self.flying.len(),
                if upcoming == Cycle::MAX {
                    "nothing left for the network to do".to_string()
                } else {
                    format!("nothing moved for {idle} cycles")
                },
                oldest.msg.id,
                oldest.msg.src,
                oldest.msg.dst,
                oldest.created
            )));
        }
        Ok(Step::Next(upcoming.max(t + 1)))
    }

    /// What the replay measured.
    pub(super) fn summary(&self, partitions: u32) -> ReplaySummary {
        let n = self.delivered.max(1) as f64;
        let some = !self.lat.is_empty();
        let first = self.first_recorded.unwrap_or(0);
        let recorded_span = self.last_recorded - first;
        // From the same origin as the recorded span: a message is never created before
        // its recorded time, but the first one recorded may be created late (it waits
        // for a parent), and measuring from that creation would hide the wait.
        let replayed_span = if self.first_created.is_some() {
            self.last_delivery.saturating_sub(first)
        } else {
            0
        };
        let mean = |sum: u128| some.then(|| sum as f64 / n);
        let q = |h: &Histogram<u64>, q: f64| some.then(|| h.value_at_quantile(q));
        let mut all: Vec<(u32, RankAcc)> = self.ranks.iter().map(|(&k, &v)| (k, v)).collect();
        all.sort_unstable_by_key(|r| r.0);
        let row = |&(rank, r): &(u32, RankAcc)| RankRow {
            rank,
            node: r.node,
            messages: r.messages,
            size: r.size,
            flits: r.flits,
            latency_total: r.latency_sum,
            latency_mean: r.latency_sum as f64 / r.messages.max(1) as f64,
            latency_max: r.latency_max,
            created_lag_mean: r.lag_sum as f64 / r.messages.max(1) as f64,
            first_created: r.first_created,
            last_delivery: r.last_delivery,
        };
        // The slowest rank: latest last delivery (ties: the lower rank).
        let slowest = all
            .iter()
            .max_by(|a, b| {
                a.1.last_delivery
                    .cmp(&b.1.last_delivery)
                    .then(b.0.cmp(&a.0))
            })
            .map(row);
        let keep: Vec<usize> = match self.opts.max_ranks {
            Some(m) if (m as usize) < all.len() => {
                // The latest to finish, listed in rank order.
                let mut idx: Vec<usize> = (0..all.len()).collect();
                idx.sort_by(|&a, &b| {
                    all[b]
                        .1
                        .last_delivery
                        .cmp(&all[a].1.last_delivery)
                        .then(a.cmp(&b))
                });
                idx.truncate(m as usize);
                idx.sort_unstable();
                idx
            }
            _ => (0..all.len()).collect(),
        };
        ReplaySummary {
            mode: self.opts.mode,
            partitions,
            messages: self.read,
            delivered: self.delivered,
            flits: self.flits,
            cycles: self.last_delivery,
            latency_mean: some.then(|| self.lat.mean()),
            latency_p50: some.then(|| self.lat.value_at_quantile(0.5)),
            latency_p99: some.then(|| self.lat.value_at_quantile(0.99)),
            latency_max: some.then(|| self.lat.max()),
            behind_mean: some.then(|| self.behind_sum as f64 / n),
            behind_max: some.then_some(self.behind_max),
            recorded_span,
            dependencies: self.dependencies,
            dangling_dependencies: self.dangling,
            first_created: self.first_created,
            replayed_span,
            slowdown: (recorded_span > 0).then(|| replayed_span as f64 / recorded_span as f64),
            created_lag_mean: mean(self.created_lag_sum),
            created_lag_p99: q(&self.created_lag, 0.99),
            created_lag_max: some.then(|| self.created_lag.max()),
            created_lag_total: self.created_lag_sum.min(u64::MAX as u128) as u64,
            created_late: self.created_late,
            delivered_lag_mean: mean(self.delivered_lag_sum),
            delivered_lag_p50: q(&self.delivered_lag, 0.5),
            delivered_lag_p99: q(&self.delivered_lag, 0.99),
            delivered_lag_max: some.then(|| self.delivered_lag.max()),
            rank_count: all.len(),
            slowest_rank: slowest,
            ranks: keep.iter().map(|&i| row(&all[i])).collect(),
            // Added from the partitions' networks by `replay` when asked for.
            ..ReplaySummary::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-flit message from endpoint 0 to 1 at time 0 with dependants `children`.
    fn msg(id: u64, children: Vec<u64>) -> TraceMsg {
        TraceMsg {
            id,
            time: 0,
            src: 0,
            dst: 1,
            size: 1,
            children,
            successor: None,
            lag_from: None,
        }
    }

    #[test]
    fn dangling_dependencies_of_a_partial_trace_keep_no_memory() {
        // A region's worth of messages, each naming a dependant that is not there (the
        // odd ids): what is kept for them stays flat however long the trace is.
        let opts = ReplayOptions {
            mode: ReplayMode::Deps,
            ..ReplayOptions::default()
        };
        let mut d = Driver::new(&opts, (0, 64), SizeUnit::Flits, "t");
        d.source_traits(true, true);
        let mut most = 0;
        for i in 0..100_000u64 {
            let m = TraceMsg {
                id: 2 * i,
                time: i,
                src: (i % 64) as u32,
                dst: ((i + 1) % 64) as u32,
                size: 1,
                children: vec![2 * i + 1],
                successor: None,
                lag_from: None,
            };
            d.ingest(&[m], Some(i)).unwrap();
            most = most.max(d.dependency_entries());
        }
        d.drop_dangling(None).unwrap();
        assert_eq!(most, 1);
        assert_eq!((d.dependency_entries(), d.dangling), (0, 100_000));
        // A whole trace refuses the first one.
        let mut d = Driver::new(&opts, (0, 64), SizeUnit::Flits, "t");
        d.source_traits(true, false);
        d.ingest(&[msg(0, vec![1])], None).unwrap();
        let e = d.ingest(&[msg(2, vec![])], None).unwrap_err().to_string();
        assert!(e.contains("no message 1"), "{e}");
    }

    #[test]
    fn sources_without_increasing_ids_are_checked_against_the_pending_ids() {
        let opts = ReplayOptions {
            mode: ReplayMode::Deps,
            ..ReplayOptions::default()
        };
        let mut d = Driver::new(&opts, (0, 64), SizeUnit::Flits, "t");
        let e = d
            .ingest(&[msg(5, vec![]), msg(5, vec![])], None)
            .unwrap_err();
        assert!(e.to_string().contains("the id 5 is used twice"), "{e}");
        let mut d = Driver::new(&opts, (0, 64), SizeUnit::Flits, "t");
        let e = d
            .ingest(&[msg(10, vec![]), msg(3, vec![10])], None)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("lists 10 as a dependant, but 10 came before"),
            "{e}"
        );
    }
}

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
//! Elastic replay of a message trace ([`ReplayMode::Elastic`] without programs) follows
//! the dependencies like the deps mode but keeps the *recorded distances* instead of the
//! recorded times: a child comes `max(0, recorded_child − recorded_arrival_p)` cycles
//! after the cycle after its parent p's delivery (the latest over its parents), where
//! the recorded arrival is the parent's recorded time plus the recording network's
//! latency ([`RecordedLatency`]); a message without parents comes at its recorded time.
//! A child may thus come before its recorded time, so the leader reads
//! [`READ_AHEAD`] cycles ahead of the clock; one read later than its parents allowed is
//! created when read and counted (`read_late`).
//!
//! The watchdog counts progress as the network reports it (a flit moved) as well as
//! deliveries; when messages are in flight and nothing has moved for the window, the
//! network is deadlocked ([`Step::Deadlock`]), which is not the trace's fault.
//!
//! Not here: reading the trace (the leader partition does, `lockstep`), stepping the
//! routers (`engine::sim`).

use crate::engine::network::Network;
use crate::engine::probe::{histogram, Delivery};
use crate::engine::sim::Simulation;
use crate::experiments::replay::{
    flits_of, scale, RankRow, ReplayMode, ReplayOptions, ReplayRecord, ReplaySummary, MAX_GAP,
};
use crate::foundation::error::{Error, Result};
use crate::foundation::types::{Cycle, MsgId, NodeId};
use crate::trace::{SizeUnit, TraceMsg};
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

/// How far ahead of the clock the trace is read in elastic replay of a message trace,
/// cycles (2^20, as Netrace's self-throttling reader reads up to 1,000,000 cycles
/// ahead): a child may come due before its recorded time, by as much as its parents'
/// deliveries ran ahead of their recorded arrivals, and it is known only once read. A
/// child read after the cycle its parents allowed (one that comes more than this before
/// its recorded time) is created when read and counted in
/// [`ReplaySummary::read_late`]. The other modes read no further than the clock.
pub const READ_AHEAD: Cycle = 1 << 20;

/// The latency of the network a message trace was recorded on, which traces do not
/// record: elastic replay keeps the recorded distance between a parent's recorded
/// *arrival* (its recorded time plus this) and its child's recorded time. In the trace's
/// time units (cycles of the recording for Netrace and `cycle` text traces), scaled by
/// `--time-scale` like the recorded times. Written and parsed as `--recorded-latency`
/// takes it: `N` or `hops:C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordedLatency {
    /// The same for every message.
    Constant(u64),
    /// So many per hop of the Manhattan distance between the message's endpoints laid
    /// out as Netrace's reference reader lays them out: endpoint n at (n mod x, n div x),
    /// x = ⌊√E⌋ for a trace of E endpoints (the trace must say E).
    PerHop(u64),
}

impl RecordedLatency {
    /// The default for a trace that says it has endpoints (Netrace): its reference
    /// reader's toy model of the recording CMP, 3 cycles per hop of its 8×8 mesh (an
    /// estimate: the traces do not record the network's latency).
    pub const NETRACE: RecordedLatency = RecordedLatency::PerHop(3);
    /// The default for a trace that does not (text): none.
    pub const NONE: RecordedLatency = RecordedLatency::Constant(0);

    /// The default for a trace that gives its endpoint count or not.
    pub fn default_for(endpoints: Option<u32>) -> Self {
        if endpoints.is_some() {
            Self::NETRACE
        } else {
            Self::NONE
        }
    }
}

impl std::fmt::Display for RecordedLatency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordedLatency::Constant(n) => write!(f, "{n}"),
            RecordedLatency::PerHop(c) => write!(f, "hops:{c}"),
        }
    }
}

impl std::str::FromStr for RecordedLatency {
    type Err = String;
    /// `N` or `hops:C`, whole numbers from 0 to 2^40.
    fn from_str(spec: &str) -> std::result::Result<Self, String> {
        let num =
            |x: &str| -> Option<u64> { x.trim().parse::<u64>().ok().filter(|&v| v <= MAX_GAP) };
        let bad = || {
            format!(
                "`{spec}`: give N (cycles of the recording) or hops:C (cycles per hop), whole \
                 numbers from 0 to 2^40"
            )
        };
        match spec.trim().strip_prefix("hops:") {
            Some(c) => num(c).map(RecordedLatency::PerHop).ok_or_else(bad),
            None => num(spec).map(RecordedLatency::Constant).ok_or_else(bad),
        }
    }
}

/// A recorded latency resolved for a trace: per hop, with the layout's row length.
#[derive(Clone, Copy, Debug)]
enum Model {
    Constant(u64),
    PerHop { per_hop: u64, x: u64 },
}

impl Model {
    /// The recorded latency of a message from endpoint `s` to `d`, in trace units.
    fn latency(self, s: u32, d: u32) -> u64 {
        match self {
            Model::Constant(n) => n,
            Model::PerHop { per_hop, x } => {
                let (s, d) = (u64::from(s), u64::from(d));
                let hops = (s % x).abs_diff(d % x) + (s / x).abs_diff(d / x);
                per_hop.saturating_mul(hops)
            }
        }
    }
}

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
    /// Its recorded arrival: the recorded time plus the recorded latency (elastic
    /// replay; its recorded time elsewhere).
    arrival: Cycle,
    /// The recorded cycle its successor's lag is measured from (`TraceMsg::lag_from`;
    /// its own recorded cycle by default).
    lag_from: Cycle,
    children: Vec<u64>,
    successor: Option<u64>,
}

/// What a message's cleared parents allow: not before `at`, and not before its
/// recorded time plus `delay` (how late its program-order predecessor was created) —
/// in elastic replay, when a parent was cleared, not before its recorded time plus
/// `shift` instead (the latest over its parents of delivered + 1 − recorded arrival,
/// which may be negative), with `delay` on top only if a predecessor was cleared.
#[derive(Clone, Copy, Default)]
struct Allowed {
    at: Cycle,
    delay: Option<Cycle>,
    shift: Option<i64>,
}

impl Allowed {
    /// Both allowances: the later of each.
    fn merge(&mut self, a: Allowed) {
        self.at = self.at.max(a.at);
        self.delay = self.delay.max(a.delay);
        self.shift = self.shift.max(a.shift);
    }

    /// The cycle they allow a message recorded at `recorded`.
    fn cycle(&self, recorded: Cycle) -> Cycle {
        let from = match (self.shift, self.delay) {
            (None, d) => recorded.saturating_add(d.unwrap_or(0)),
            (Some(s), None) => recorded.saturating_add_signed(s),
            (Some(s), Some(d)) => recorded
                .saturating_add_signed(s)
                .max(recorded.saturating_add(d)),
        };
        self.at.max(from)
    }
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
    /// Dependencies are followed (deps and elastic modes).
    follow: bool,
    /// Elastic replay: recorded distances after the parents, not recorded times.
    elastic: bool,
    /// Cycles the trace is read ahead of the clock ([`READ_AHEAD`] in elastic replay).
    ahead: Cycle,
    /// The recorded latency (elastic replay; 0 elsewhere), as given or defaulted, and
    /// as resolved for the trace's endpoints.
    latency: Option<RecordedLatency>,
    model: Model,
    /// Messages created when read, after the cycle their parents allowed.
    read_late: u64,
    /// The latest recorded arrival.
    last_arrival: Cycle,
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
            follow: matches!(opts.mode, ReplayMode::Deps | ReplayMode::Elastic),
            elastic: opts.mode == ReplayMode::Elastic,
            ahead: if opts.mode == ReplayMode::Elastic {
                READ_AHEAD
            } else {
                0
            },
            latency: None,
            model: Model::Constant(0),
            read_late: 0,
            last_arrival: 0,
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
    /// and [`crate::trace::TraceSource::partial`]) and its endpoint count, which the
    /// recorded latency is resolved with (elastic replay; [`ReplayOptions::recorded_latency`]
    /// is refused in the other modes, and `hops:` without an endpoint count).
    pub(super) fn source_traits(
        &mut self,
        ids_increase: bool,
        partial: bool,
        endpoints: Option<u32>,
    ) -> Result<()> {
        self.ids_increase = ids_increase;
        self.partial = partial;
        let given = self.opts.recorded_latency;
        if !self.elastic {
            if let Some(l) = given {
                return Err(Error::Arg(format!(
                    "--recorded-latency {l}: applies to elastic replay (--mode elastic)"
                )));
            }
            return Ok(());
        }
        let l = given.unwrap_or(RecordedLatency::default_for(endpoints));
        self.model = match l {
            RecordedLatency::Constant(n) => Model::Constant(n),
            RecordedLatency::PerHop(per_hop) => match endpoints.filter(|&e| e > 0) {
                Some(e) => Model::PerHop {
                    per_hop,
                    x: u64::from(e.isqrt()),
                },
                None => {
                    return Err(Error::Arg(format!(
                        "--recorded-latency {l}: {} does not say how many endpoints it has, \
                         so they cannot be laid out as a mesh to count hops: give a constant \
                         (--recorded-latency N)",
                        self.name
                    )))
                }
            },
        };
        self.latency = Some(l);
        Ok(())
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

    /// Takes the messages read after cycle `t` (recorded no later than `t + 1`, plus
    /// [`READ_AHEAD`] in elastic replay); they are created from cycle `t + 1` on (cycle 0
    /// for those read before the start, `t = None`).
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
            let arrival = match self.model {
                Model::Constant(0) => recorded,
                model => scale(
                    m.time.saturating_add(model.latency(m.src, m.dst)),
                    self.opts.time_scale,
                ),
            };
            self.last_arrival = self.last_arrival.max(arrival);
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
                arrival,
                lag_from: m
                    .lag_from
                    .map_or(recorded, |l| scale(l, self.opts.time_scale)),
                children: if self.follow {
                    m.children.clone()
                } else {
                    Vec::new()
                },
                successor: m.successor.filter(|_| self.follow),
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
            if self.follow && self.parents.contains_key(&m.id) {
                self.blocked.insert(m.id, p);
            } else if self.make_due(p, earliest) && self.elastic {
                // Its parents allowed it before it was read (more than the read-ahead
                // before its recorded time).
                self.read_late += 1;
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
            .filter(|_| self.follow)
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
    /// recorded time and its cleared parents allow; true when they allowed it before
    /// `earliest`.
    fn make_due(&mut self, p: Pending, earliest: Cycle) -> bool {
        let a = self.allowed.remove(&p.id).unwrap_or_default();
        let allowed = a.cycle(p.recorded);
        self.due.push(Reverse((allowed.max(earliest), p.id)));
        self.ready.insert(p.id, p);
        allowed < earliest
    }

    /// One of `c`'s parents is cleared, allowing `a`; queues `c` (from `earliest` on)
    /// once it was read and all are.
    fn clear_parent(&mut self, c: u64, a: Allowed, earliest: Cycle) {
        let Some(left) = self.parents.get_mut(&c) else {
            // A dangling dependant, dropped (not in the part of the trace read).
            return;
        };
        *left -= 1;
        self.allowed.entry(c).or_default().merge(a);
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
                let a = Allowed {
                    delay: Some(delay),
                    ..Allowed::default()
                };
                self.clear_parent(s, a, t);
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
            // Elastic replay may create and deliver a message before its recorded time:
            // no lag then.
            let lag = rec.created.saturating_sub(rec.recorded);
            let _ = self.created_lag.record(lag);
            self.created_lag_sum += lag as u128;
            self.created_late += u64::from(lag > 0);
            let dlag = rec.delivered.saturating_sub(rec.recorded);
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
            let a = if self.elastic {
                // The recorded distance from the parent's recorded arrival is kept: the
                // child's recorded time plus this shift, and never before the cycle after
                // the delivery (HORIZON and the latencies' bound keep both in range).
                let at = dv.absorbed.saturating_add(1);
                let shift = i128::from(at) - i128::from(f.msg.arrival);
                Allowed {
                    at,
                    delay: None,
                    shift: Some(shift.clamp(i64::MIN.into(), i64::MAX.into()) as i64),
                }
            } else {
                Allowed {
                    at: dv.absorbed.saturating_add(self.opts.gap),
                    ..Allowed::default()
                }
            };
            for c in f.msg.children {
                self.clear_parent(c, a, t + 1);
            }
        }
        Ok(())
    }

    /// The cycle after `t` to step next, from the network's progress `net` and the
    /// first unread message's recorded time (None: all read). The cycle before an
    /// unread message (elastic replay: [`READ_AHEAD`] cycles before that) is stepped
    /// (idle if nothing else happens) so that the leader reads it in time for every copy
    /// to know it.
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
        let before_unread = unread.map_or(Cycle::MAX, |u| u.saturating_sub(1 + self.ahead));
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
        // The run time, replayed and recorded: from the first recorded time to the last
        // delivery, and to the last recorded arrival (the recorded time where no recorded
        // latency is assumed: the recorded span).
        let runtime = self.first_created.is_some().then_some(replayed_span);
        let recorded_runtime = self.first_recorded.map(|f| self.last_arrival - f);
        let speedup = match (recorded_runtime, runtime) {
            (Some(r), Some(t)) if t > 0 => Some(r as f64 / t as f64),
            _ => None,
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
        let ends: Vec<Cycle> = all.iter().map(|r| r.1.last_delivery).collect();
        let keep = crate::experiments::replay::latest(&ends, self.opts.max_ranks);
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
            runtime,
            speedup,
            recorded_runtime,
            recorded_latency: self.latency.map(|l| l.to_string()),
            read_late: self.read_late,
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
        d.source_traits(true, true, None).unwrap();
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
        d.source_traits(true, false, None).unwrap();
        d.ingest(&[msg(0, vec![1])], None).unwrap();
        let e = d.ingest(&[msg(2, vec![])], None).unwrap_err().to_string();
        assert!(e.contains("no message 1"), "{e}");
    }

    #[test]
    fn recorded_latencies_parse_as_written_and_count_hops_on_netraces_mesh() {
        for spec in ["0", "12", "hops:3", "hops:0"] {
            let l: RecordedLatency = spec.parse().unwrap();
            assert_eq!(l.to_string(), spec);
        }
        for bad in [
            "",
            "-1",
            "hops:",
            "hops:-2",
            "hop:3",
            "3.5",
            "1099511627777",
        ] {
            assert!(bad.parse::<RecordedLatency>().is_err(), "{bad}");
        }
        // 64 endpoints: an 8×8 mesh, endpoint n at (n mod 8, n div 8).
        let m = Model::PerHop { per_hop: 3, x: 8 };
        assert_eq!(
            [
                m.latency(0, 63),
                m.latency(9, 9),
                m.latency(7, 8),
                m.latency(2, 61)
            ],
            [3 * 14, 0, 3 * 8, 3 * (3 + 7)]
        );
        // Resolved against the trace's endpoints; hops: refused without them, and any
        // recorded latency outside elastic replay.
        let opts = |mode, recorded_latency| ReplayOptions {
            mode,
            recorded_latency,
            ..ReplayOptions::default()
        };
        let mut d = Driver::new(
            &opts(ReplayMode::Elastic, None),
            (0, 64),
            SizeUnit::Flits,
            "t",
        );
        d.source_traits(true, false, Some(64)).unwrap();
        assert_eq!(d.latency, Some(RecordedLatency::NETRACE));
        let mut d = Driver::new(
            &opts(ReplayMode::Elastic, None),
            (0, 64),
            SizeUnit::Flits,
            "t",
        );
        d.source_traits(true, false, None).unwrap();
        assert_eq!(d.latency, Some(RecordedLatency::Constant(0)));
        let hops = Some(RecordedLatency::PerHop(2));
        let mut d = Driver::new(
            &opts(ReplayMode::Elastic, hops),
            (0, 64),
            SizeUnit::Flits,
            "t",
        );
        let e = d.source_traits(true, false, None).unwrap_err().to_string();
        assert!(e.contains("does not say how many endpoints"), "{e}");
        let mut d = Driver::new(&opts(ReplayMode::Deps, hops), (0, 64), SizeUnit::Flits, "t");
        let e = d
            .source_traits(true, false, Some(64))
            .unwrap_err()
            .to_string();
        assert!(e.contains("applies to elastic replay"), "{e}");
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

//! One replication, stepped cycle by cycle, on one partition of the network (all of it
//! unless `engine::parallel` splits it).
//!
//! Each cycle: (1) nodes whose next message creation falls in this cycle create their
//! messages; (2) events due this cycle are delivered (in a canonical order when the
//! switching mode needs one); (3) every router with something to do runs one cycle.
//! Routers only read what was delivered to them and only schedule events for later
//! cycles, so the order in which they are visited does not matter, and the statistics
//! are integer sums and histograms. Events for another partition's nodes leave through
//! the partition's outbox and are handed over at the end of the cycle.
//!
//! What is decided for the whole network — where the clock goes next, whether the
//! window closes, whether the run is drained, saturated or deadlocked — is decided by a
//! [`Coordinator`] from the partitions' [`Summary`]s, the same way for one partition as
//! for many, so the thread count never changes a result.
//!
//! Idle skipping: a router is visited only in cycles where it received something or had
//! work left over; when no router anywhere is busy, the clock jumps to the next
//! scheduled event or message creation. `experiment.idle_skip = false` visits every
//! router every cycle and must give identical results (a test checks it).
//!
//! The engine is generic over the switching mode ([`Network`]).

use crate::config::{ArrivalProcess, ExperimentConfig, HwConfig, Measure};
use crate::engine::active::in_index_order;
use crate::engine::machine::validate;
use crate::engine::network::Network;
use crate::engine::partition::PartOut;
use crate::engine::partitioner::PartNodes;
use crate::engine::probe::observe::{Intervals, SeriesAcc};
use crate::engine::probe::MsgStats;
use crate::engine::waits::has_cycle;
use crate::engine::window::{MeasureWindow, Window};
use crate::foundation::error::Result;
use crate::foundation::limits::{collected_table, empty_table, filled_table, zeroed_table};
use crate::foundation::rng::{stream, NodeRng};
use crate::foundation::types::Located;
use crate::foundation::types::{Cycle, MsgId, NodeId};
use crate::router::dma::PendingMsg;
use crate::traffic::Workload;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles of measurement window observed before a growing backlog stops a run.
pub const SATURATION_OBSERVE: Cycle = 5_000;

/// Cycles between checks for saturation and deadlock (and progress reports).
pub const CHECK_EVERY: Cycle = 1024;

/// Why a replication stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every measured message was delivered.
    Drained,
    /// Source queues grew past the saturation threshold, or the drain took too long.
    Saturated,
    /// Work present and none of it moved for `deadlock_cycles` (or a proven cycle of
    /// waits); the text describes the waits.
    Deadlock(String),
    /// The clock reached the cycle the caller asked to stop at (benchmarks).
    CycleLimit,
    /// A stop was requested from outside (`engine::interrupt`: SIGINT, SIGTERM); the
    /// window ends at the check point where it was seen, so what was measured so far is
    /// reported.
    Interrupted,
}

/// What a partition tells the others at the end of a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// The next cycle this partition has anything to do in (its own busy routers, its
    /// calendar, its message creations, and what it sent to other partitions).
    pub next: Cycle,
    /// Measured messages the workload created so far (the window's count of messages).
    pub measured_created: u64,
    /// Measured replies the network created so far (request/reply traffic): the drain
    /// waits for them as for the workload's measured messages.
    pub measured_replies: u64,
    /// Measured messages delivered (or lost: refused by a full source) so far.
    pub measured_delivered: u64,
    /// Messages waiting in source memory.
    pub backlog: u64,
    /// Messages created and not yet delivered or lost: waiting in memory, held by an
    /// engine, or in the network. A partition counts the messages its sources created
    /// less those its destinations absorbed, so a part may be negative; the sum is not.
    pub outstanding: i64,
    /// Work that must keep moving (see `Network::live_work`; partial counts may be
    /// negative, their sum is not).
    pub live: i64,
    /// Last cycle that work moved.
    pub last_progress: Cycle,
    /// A deadlock proven inside the partition.
    pub proven_stall: bool,
    /// A stop requested from outside, as this partition saw it at a check point: passed
    /// through the summaries so that every partition's copy of the coordinator decides
    /// alike, whenever each thread happens to read the flag.
    pub interrupted: bool,
}

/// What the coordinator decided after a cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Go on with cycle `next`; the window ends at `window_end` if known.
    Continue {
        /// The next cycle to step.
        next: Cycle,
        /// The window's end, once known.
        window_end: Option<Cycle>,
    },
    /// The replication is over (the window's end as finally known).
    Stop(Stop, Option<Cycle>),
}

/// Global decisions from the partitions' summaries. Every thread keeps an identical copy
/// and feeds it identical summaries, so all reach the same decision without talking.
#[derive(Clone, Debug)]
pub struct Coordinator {
    exp: ExperimentConfig,
    window: MeasureWindow,
    next_check: Cycle,
    /// `experiment.saturation_backlog` × the sources; `None` for saturated sources,
    /// whose backlog is bounded by construction (`depth` per source) and which the
    /// backlog guard must never cut short.
    backlog_limit: Option<u64>,
    /// A saturation guard fired at the last check point in a cycle where nothing moved:
    /// judged at this one (see [`Coordinator::decide`]).
    deferred: bool,
    observe: Cycle,
    /// (cycle, messages waiting in source memory over all partitions) at every check
    /// point inside the measurement window: the saturation search tests their trend.
    backlog_samples: Vec<(Cycle, u64)>,
    /// (cycle, messages created and not delivered over all partitions) at the same
    /// check points: the overload test of a drained run (`experiment::overloaded`).
    outstanding_samples: Vec<(Cycle, u64)>,
}

impl Coordinator {
    /// A coordinator for a network with `sources` message sources (the topology's
    /// endpoints: a host/switch network's switches and a concentrated network's routers
    /// create nothing, so they do not count towards the backlog guard), whose sources
    /// are saturated (`workload.process = Saturated`) when `saturated_sources`.
    pub fn new(
        exp: &ExperimentConfig,
        window: MeasureWindow,
        sources: usize,
        saturated_sources: bool,
    ) -> Self {
        crate::engine::interrupt::started();
        Coordinator {
            exp: exp.clone(),
            window,
            next_check: CHECK_EVERY,
            backlog_limit: (!saturated_sources)
                .then(|| (exp.saturation_backlog * sources as f64).max(1.0) as u64),
            deferred: false,
            // Saturation is judged on the measurement window, so that a saturated run
            // still reports the throughput it accepted there; before that only a far
            // larger backlog (which would exhaust memory) stops the run.
            observe: match window.measure {
                Measure::Cycles(c) => c.min(SATURATION_OBSERVE),
                Measure::Messages(_) => SATURATION_OBSERVE,
            },
            backlog_samples: Vec::new(),
            outstanding_samples: Vec::new(),
        }
    }

    /// The decision after cycle `t`; `check` is called at every check point (progress).
    pub fn decide(
        &mut self,
        t: Cycle,
        parts: &[Summary],
        check: &mut dyn FnMut(Cycle),
    ) -> Decision {
        self.decide_with(t, parts, check, true)
    }

    /// As [`Coordinator::decide`]; without `stops`, only the window and the clock.
    fn decide_with(
        &mut self,
        t: Cycle,
        parts: &[Summary],
        check: &mut dyn FnMut(Cycle),
        stops: bool,
    ) -> Decision {
        let sum = |f: fn(&Summary) -> u64| parts.iter().map(f).sum::<u64>();
        let created = sum(|s| s.measured_created);
        let replies = sum(|s| s.measured_replies);
        if let Measure::Messages(m) = self.window.measure {
            // The window closes at the end of the cycle in which the m-th message after
            // warm-up was created: every message of that cycle is measured, so the set
            // does not depend on the order in which nodes (or partitions) create.
            if self.window.end.is_none() && created >= m {
                self.window.end = Some(t + 1);
            }
        }
        let now = t + 1;
        if !stops {
            // Scripted stepping: the window and the clock only.
            if now >= self.next_check {
                self.next_check = now + CHECK_EVERY;
            }
        } else if self.window.end.is_some_and(|e| now >= e)
            && sum(|s| s.measured_delivered) == created + replies
        {
            return Decision::Stop(Stop::Drained, self.window.end);
        } else if now >= self.next_check {
            self.next_check = now + CHECK_EVERY;
            check(now);
            if self.window.contains(now) || self.window.end == Some(now) {
                self.backlog_samples.push((now, sum(|s| s.backlog)));
                let outstanding: i64 = parts.iter().map(|s| s.outstanding).sum();
                self.outstanding_samples
                    .push((now, outstanding.max(0) as u64));
            }
            let last = parts.iter().map(|s| s.last_progress).max().unwrap_or(0);
            let live: i64 = parts.iter().map(|s| s.live).sum();
            // A deadlock is told before saturation: a deadlocked network's sources fill
            // up too.
            let stuck = live > 0 && now - last > self.exp.deadlock_cycles;
            if stuck || parts.iter().any(|s| s.proven_stall) {
                return Decision::Stop(Stop::Deadlock(String::new()), Some(self.close(now)));
            }
            // A network where nothing moved for a whole check interval may be deadlocked:
            // it is left to the watchdog above (it moves again, or is reported as a
            // deadlock, never as saturated). One where nothing moved in the cycle just
            // stepped may have begun to deadlock however shortly before this check: a
            // guard that fires then waits for the next check point, by when a deadlocked
            // network is frozen and a saturated one is judged (a slow network, quiet in
            // many cycles, is judged then whatever its last cycle did).
            let frozen = live > 0 && now - last >= CHECK_EVERY;
            let quiet = live > 0 && now - last > 1;
            let judged = now >= self.window.start + self.observe;
            let over_backlog = self.backlog_limit.is_some_and(|l| {
                sum(|s| s.backlog) > l.saturating_mul(if judged { 1 } else { 20 })
            });
            let over_drain = self
                .window
                .end
                .is_some_and(|e| now > e.saturating_add(self.exp.drain_limit));
            if (over_backlog || over_drain) && !frozen {
                if quiet && !self.deferred {
                    self.deferred = true;
                } else if over_backlog {
                    return Decision::Stop(Stop::Saturated, Some(self.close(now)));
                } else {
                    return Decision::Stop(Stop::Saturated, self.window.end);
                }
            } else {
                self.deferred = false;
            }
            if parts.iter().any(|s| s.interrupted) {
                return Decision::Stop(Stop::Interrupted, Some(self.close(now)));
            }
        }
        let mut next = match parts.iter().map(|s| s.next).min() {
            // Nothing scheduled anywhere (the workload stopped and the network is stuck
            // or empty): step on rather than jump to the end of time.
            Some(Cycle::MAX) | None => now,
            Some(n) if self.exp.idle_skip => n.max(now),
            Some(_) => now,
        };
        // A jump never passes a cycle after which a decision is taken (the window's end,
        // a check point): stepping it idle changes nothing, and the run then stops at the
        // same cycle as when every cycle is stepped.
        next = next.min(self.next_check - 1);
        if let Some(e) = self.window.end.filter(|&e| now < e) {
            next = next.min(e - 1);
        }
        let next = next.max(now);
        Decision::Continue {
            next,
            window_end: self.window.end,
        }
    }

    /// The end (exclusive) of the stretch of cycles from `next` that partitions can step
    /// without a decision of the coordinator, when events between partitions are due
    /// `lookahead` cycles or more after they are sent: the decision after the stretch's
    /// last cycle is the first that can do anything but step on (stop, end or grow the
    /// window, sample at a check point), and every event sent inside the stretch is due
    /// after it. Partitions in other processes exchange once per stretch
    /// (`engine::distributed`). One cycle when the window's end is not known in advance
    /// (a window counted in messages, which closes in the cycle its last message is
    /// created) and after the window's end (the run stops in the cycle the last measured
    /// message is delivered).
    pub fn horizon_end(&self, next: Cycle, lookahead: Cycle) -> Cycle {
        let one = next + 1;
        match self.window.end {
            None => one,
            Some(e) if next >= e => one,
            Some(e) => next
                .saturating_add(lookahead)
                .min(self.next_check)
                .min(e)
                .max(one),
        }
    }

    /// Ends the window at `t` if it is still open (a run stopped early measures what it
    /// saw); returns the end.
    fn close(&mut self, t: Cycle) -> Cycle {
        let end = match self.window.end {
            Some(e) if e <= t => e,
            _ => t.max(self.window.start),
        };
        self.window.end = Some(end);
        end
    }
}

/// The per-message accumulators a partition starts with: with the collectors that
/// `experiment.observe` asks for (time series; deliveries and header paths for the
/// per-message log).
fn observing_stats(
    exp: &ExperimentConfig,
    rate: f64,
    nodes: usize,
    hops_per_message: usize,
) -> MsgStats {
    let window = match exp.measure {
        Measure::Cycles(c) => c,
        Measure::Messages(m) => (m as f64 / (rate * nodes as f64).max(1e-9)) as Cycle,
    };
    let mut stats = MsgStats {
        window: (
            exp.warmup,
            match exp.measure {
                Measure::Cycles(c) => exp.warmup.checked_add(c),
                Measure::Messages(_) => None,
            },
        ),
        ..MsgStats::default()
    };
    if let Some(width) = exp.observe.interval {
        stats.series = Some(Box::new(SeriesAcc::new(Intervals {
            width: width.max(1),
            anchor: exp.warmup,
        })));
    }
    if exp.observe.message_log {
        // Room for the messages the partition expects to deliver (the workload's rate
        // over the run), so the log's vectors are not copied as they grow.
        let expect = (rate * nodes as f64 * exp.warmup.saturating_add(window) as f64 * 1.05)
            .clamp(0.0, (1u64 << 20) as f64) as usize;
        stats.deliveries = Some(Vec::with_capacity(expect));
        stats.hops = Some(Vec::with_capacity(expect.saturating_mul(hops_per_message)));
    }
    stats
}

/// One replication of one machine under one workload, on the routers of a switching
/// mode (`N`; wormhole unless said otherwise), for one partition of the nodes.
pub struct Simulation<N: Network> {
    /// The routers.
    pub net: N,
    /// The outbox: this partition's calendar, and what goes to other partitions.
    pub out: PartOut<N::Event, N::Remote>,
    due: Vec<N::Event>,
    /// The canonical delivery order of `due`: (node, event key) and index.
    order: Vec<(u128, u32)>,
    now: Vec<u32>,
    next: Vec<u32>,
    stamp: Vec<Cycle>,
    /// All zeros between cycles: `engine::active`'s bitset over the nodes.
    order_bits: Vec<u64>,
    workload: Workload,
    traffic_rng: Vec<NodeRng>,
    next_arrival: Vec<f64>,
    /// Saturated sources: the local nodes that send, topped up to `depth` messages every
    /// cycle (empty for the other processes).
    saturated: Vec<u32>,
    depth: usize,
    seq: Vec<u64>,
    creations: BinaryHeap<Reverse<(Cycle, u32)>>,
    /// Current cycle.
    pub t: Cycle,
    /// The measurement window.
    pub window: MeasureWindow,
    /// Per-message measurements.
    pub stats: MsgStats,
    /// Messages created (all).
    pub generated: u64,
    /// Flits created (all, warm-up included).
    pub generated_flits: u64,
    /// Measured messages created.
    pub measured_created: u64,
    /// Messages created inside the window.
    pub window_messages: u64,
    /// Flits created inside the window.
    pub window_flits: u64,
    /// Nodes of the whole network that create and receive messages (throughputs are per
    /// such node: every node, or a host/switch network's hosts).
    pub endpoints: usize,
    exp: ExperimentConfig,
    coord: Coordinator,
}

impl<N: Network> Simulation<N> {
    /// Builds replication `rep` of `cfg` on the routers of switching mode `N`, all nodes
    /// in one partition.
    pub fn build(cfg: &HwConfig, rep: u32) -> Result<Self> {
        let nodes = validate(cfg)?.topology.nodes();
        Self::build_part(cfg, rep, PartNodes::whole(nodes))
    }

    /// Builds the partition `part` of replication `rep`.
    pub fn build_part(cfg: &HwConfig, rep: u32, part: PartNodes) -> Result<Self> {
        let machine = validate(cfg)?;
        let exp = cfg.experiment.clone();
        let net = N::build(cfg, &machine, exp.seed, rep, &part)?;
        let workload = machine.workload;
        let n = part.len();
        // Per-node tables are allocated fallibly, as the network's are: a run let through
        // with --force that does not fit ends in a message, not an abort.
        let mut traffic_rng: Vec<NodeRng> = collected_table(
            n,
            part.iter().map(|i| stream(exp.seed, rep, i, 0)),
            "traffic random stream",
        )?;
        let mut next_arrival = filled_table(Some(n), f64::INFINITY, "next arrival")?;
        let mut creations = BinaryHeap::from(empty_table(Some(n), "message creation calendar")?);
        let (mut saturated, depth) = match workload.arrivals.process {
            ArrivalProcess::Saturated { depth } => {
                (empty_table(Some(n), "saturated source")?, depth as usize)
            }
            _ => (Vec::new(), 0),
        };
        for (i, node) in part.iter().enumerate() {
            if !workload.pattern.sends(NodeId(node)) {
                continue;
            }
            if matches!(workload.arrivals.process, ArrivalProcess::Saturated { .. }) {
                saturated.push(i as u32);
            } else {
                let a = workload
                    .arrivals
                    .next_after(workload.arrivals.origin(), &mut traffic_rng[i]);
                next_arrival[i] = a;
                creations.push(Reverse((a as Cycle, node)));
            }
        }
        let window = MeasureWindow {
            start: exp.warmup,
            end: match exp.measure {
                // Validation bounds warm-up plus window (limits::MAX_RUN_CYCLES); checked
                // all the same, as the library may be handed an unvalidated config.
                Measure::Cycles(c) => Some(exp.warmup.checked_add(c).ok_or_else(|| {
                    crate::foundation::error::Error::config(
                        "experiment.warmup + measured cycles overflow a cycle count",
                    )
                })?),
                Measure::Messages(_) => None,
            },
            measure: exp.measure,
        };
        let mut stats = observing_stats(
            &exp,
            cfg.workload.rate,
            n,
            machine.topology.mean_distance().ceil() as usize + 2,
        );
        if workload.reply.is_some() {
            stats.classes = Some(Box::default());
        }
        Ok(Simulation {
            stats,
            out: PartOut::new(net.horizon(), part).with_lookahead(net.lookahead()),
            due: Vec::new(),
            order: Vec::new(),
            now: empty_table(Some(n), "active node")?,
            next: empty_table(Some(n), "next active node")?,
            stamp: filled_table(Some(n), Cycle::MAX, "node activity stamp")?,
            order_bits: zeroed_table(Some(n.div_ceil(64)), "node order")?,
            net,
            workload,
            traffic_rng,
            next_arrival,
            saturated,
            depth,
            seq: zeroed_table(Some(n), "message sequence")?,
            creations,
            t: 0,
            window,
            generated: 0,
            generated_flits: 0,
            measured_created: 0,
            window_messages: 0,
            window_flits: 0,
            endpoints: machine.topology.endpoints().len(),
            coord: Coordinator::new(
                &exp,
                window,
                machine.topology.endpoints().len(),
                // From the configuration, never from this partition's sources: every
                // partition's coordinator must take the same decisions.
                depth > 0,
            ),
            exp,
        })
    }

    /// Whether this partition keeps the per-message log's records
    /// (`experiment.observe.message_log`).
    pub fn exp_logs(&self) -> bool {
        self.exp.observe.message_log
    }

    /// The experiment settings this partition runs with.
    pub fn experiment(&self) -> &ExperimentConfig {
        &self.exp
    }

    /// Records every delivery in `stats.deliveries` (for invariant checks).
    pub fn record_deliveries(&mut self) {
        self.stats.deliveries = Some(Vec::new());
    }

    #[inline]
    fn wake(now: &mut Vec<u32>, stamp: &mut [Cycle], n: u32, t: Cycle) {
        // Without a branch on whether `n` is already listed: which it is depends on
        // the traffic, and a mispredicted branch per event cost more than the store
        // (docs/speed.md, "The per-flit path").
        let s = &mut stamp[n as usize];
        let listed = (*s == t) as usize;
        *s = t;
        now.push(n);
        let len = now.len() - listed;
        now.truncate(len);
    }

    /// Node `n` (global) creates one message in this cycle.
    fn create_one(&mut self, n: usize) {
        let t = self.t;
        let i = self.out.nodes.local(n as u32);
        let rng = &mut self.traffic_rng[i];
        let dst = self.workload.pattern.sample(NodeId(n as u32), rng);
        let (len, reply_len) = self.workload.draw_length(rng);
        let measured = self.window.contains(t);
        if let Some(s) = &mut self.stats.series {
            s.created(t, len);
        }
        if measured {
            self.measured_created += 1;
            self.window_messages += 1;
            self.window_flits += len as u64;
        }
        let id = MsgId::new(NodeId(n as u32), self.seq[i]);
        self.seq[i] += 1;
        self.generated += 1;
        self.generated_flits += len as u64;
        self.net.enqueue(
            i,
            PendingMsg {
                id,
                dst,
                len,
                created: t,
                measured,
                class: 0,
                reply_len,
                request_latency: 0,
            },
        );
    }

    /// Node `n` (global) creates the messages whose instants fall in this cycle.
    fn create(&mut self, n: usize) {
        let t = self.t;
        let i = self.out.nodes.local(n as u32);
        while self.next_arrival[i] < (t + 1) as f64 {
            self.create_one(n);
            let rng = &mut self.traffic_rng[i];
            self.next_arrival[i] = self.workload.arrivals.next_after(self.next_arrival[i], rng);
        }
        let next = self.next_arrival[i];
        if next < u64::MAX as f64 {
            self.creations.push(Reverse((next as Cycle, n as u32)));
        }
    }

    /// Runs cycle `self.t` of this partition: creations, deliveries, routers. The clock
    /// does not move (see [`Simulation::advance`]).
    pub fn step_local(&mut self) {
        let t = self.t;
        self.out.now = t;
        self.sample_boundary();
        while let Some(&Reverse((c, n))) = self.creations.peek() {
            if c > t {
                break;
            }
            self.creations.pop();
            self.create(n as usize);
            let i = self.out.nodes.local(n);
            Self::wake(&mut self.now, &mut self.stamp, i as u32, t);
        }
        // Saturated sources: queues are topped up at the start of a cycle, so a source
        // always has `depth` messages waiting while it sends another.
        for j in 0..self.saturated.len() {
            let i = self.saturated[j];
            let mut woke = false;
            while self.net.queued(i as usize).is_some_and(|q| q < self.depth) {
                self.create_one(self.out.nodes.node(i as usize) as usize);
                woke = true;
            }
            if woke {
                Self::wake(&mut self.now, &mut self.stamp, i, t);
            }
        }
        self.out.wheel.take(t, &mut self.due);
        if N::SORT_EVENTS && self.due.len() > 1 {
            // Sort small keys, not the events themselves (which can be large).
            let net = &self.net;
            self.order.clear();
            self.order.extend(self.due.iter().enumerate().map(|(i, e)| {
                (
                    ((e.node() as u128) << 64) | net.event_key(e) as u128,
                    i as u32,
                )
            }));
            self.order.sort_unstable();
            for j in 0..self.order.len() {
                let e = self.due[self.order[j].1 as usize];
                self.deliver_one(e, t);
            }
        } else {
            for i in 0..self.due.len() {
                let e = self.due[i];
                self.deliver_one(e, t);
            }
        }
        if self.exp.idle_skip {
            in_index_order(&mut self.now, &mut self.order_bits);
            for i in 0..self.now.len() {
                let n = self.now[i] as usize;
                self.net
                    .step_node(n, t, &self.window, &mut self.out, &mut self.stats);
                if self.net.busy(n) {
                    Self::wake(&mut self.next, &mut self.stamp, n as u32, t + 1);
                }
            }
        } else {
            for n in 0..self.net.nodes() {
                self.net
                    .step_node(n, t, &self.window, &mut self.out, &mut self.stats);
            }
        }
        self.now.clear();
        std::mem::swap(&mut self.now, &mut self.next);
    }

    /// Samples the time series' backlog at the interval boundaries up to the current
    /// cycle, if any is due: before anything of the cycle happens, so a driver that
    /// creates messages outside the workload (a replay) calls it before it does.
    pub fn sample_boundary(&mut self) {
        if let Some(s) = &mut self.stats.series {
            if s.sample_due(self.t) {
                s.sample(self.t, self.net.backlog() as u64);
            }
        }
    }

    /// Delivers event `e` of cycle `t` and wakes its node.
    #[inline]
    fn deliver_one(&mut self, e: N::Event, t: Cycle) {
        self.net
            .deliver(e, t, &self.window, &mut self.out, &mut self.stats);
        let local = self.out.nodes.local(e.node());
        Self::wake(&mut self.now, &mut self.stamp, local as u32, t);
    }

    /// This partition's report for the coordinator, after [`Simulation::step_local`].
    pub fn summary(&self) -> Summary {
        let replies = self.stats.replies_created();
        Summary {
            next: self.next_busy(),
            measured_created: self.measured_created,
            measured_replies: replies.measured,
            measured_delivered: self.net.measured_delivered() + self.net.measured_lost(),
            backlog: self.net.backlog() as u64,
            outstanding: (self.generated + replies.messages) as i64
                - (self.net.delivered() + self.net.lost()) as i64,
            live: self.net.live_work(),
            last_progress: self.net.last_progress(),
            // Searching for a cycle of waits is only worth it at a check point; split
            // networks search the union of their partitions' edges (`engine::parallel`).
            proven_stall: self.out.events.len() == 1 && self.check_due() && {
                let mut edges = Vec::new();
                self.net.wait_edges(&mut edges);
                has_cycle(&edges)
            },
            interrupted: self.check_due() && crate::engine::interrupt::requested(),
        }
    }

    /// The next cycle this partition has anything to do in, after
    /// [`Simulation::step_local`]: its busy routers, its calendar, its message creations
    /// and what it sent to other partitions (Cycle::MAX: nothing).
    pub fn next_busy(&self) -> Cycle {
        let after = self.t + 1;
        // Saturated sources look at their queues every cycle.
        if !self.now.is_empty() || !self.saturated.is_empty() {
            return after;
        }
        let event = self.out.wheel.next_due(after).unwrap_or(Cycle::MAX);
        let creation = self
            .creations
            .peek()
            .map_or(Cycle::MAX, |&Reverse((c, _))| c);
        event.min(creation).min(self.out.earliest_remote)
    }

    /// Whether the cycle just stepped ends at a check point (saturation, deadlock).
    pub fn check_due(&self) -> bool {
        self.t + 1 >= self.coord.next_check
    }

    /// Messages waiting in the sources' memory (every partition's) at each check point
    /// (every [`CHECK_EVERY`] cycles) inside the measurement window, window end included:
    /// (cycle, messages). For the saturation search's backlog-growth test.
    pub fn backlog_samples(&self) -> &[(Cycle, u64)] {
        &self.coord.backlog_samples
    }

    /// (cycle, messages created and not yet delivered, every partition together) at
    /// every check point inside the measurement window.
    pub fn outstanding_samples(&self) -> &[(Cycle, u64)] {
        &self.coord.outstanding_samples
    }

    /// Takes events (and their side data) that other partitions sent to this one.
    pub fn absorb(&mut self, events: &mut Vec<(Cycle, N::Event)>, extras: &mut Vec<N::Remote>) {
        for (at, e) in events.drain(..) {
            self.out.wheel.schedule(at, e);
        }
        for r in extras.drain(..) {
            self.net.accept_remote(r);
        }
    }

    /// Moves the clock to `next` with the window end the coordinator decided.
    pub fn advance(&mut self, next: Cycle, window_end: Option<Cycle>) {
        self.window.end = window_end;
        self.stats.window.1 = window_end;
        self.out.earliest_remote = Cycle::MAX;
        self.t = next;
    }

    /// The coordinator's decision after this cycle, from every partition's summary.
    pub fn coordinate(&mut self, parts: &[Summary], check: &mut dyn FnMut(Cycle)) -> Decision {
        self.coord.decide(self.t, parts, check)
    }

    /// See [`Coordinator::horizon_end`]: from the current cycle, with this network's
    /// lookahead.
    pub fn horizon_end(&self) -> Cycle {
        self.coord.horizon_end(self.t, self.out.lookahead)
    }

    /// Ends the replication after the current cycle with the window's final end.
    pub fn finish(&mut self, window_end: Option<Cycle>) {
        self.window.end = window_end;
        self.stats.window.1 = window_end;
        self.t += 1;
    }

    /// Runs cycle `self.t` and advances the clock (possibly jumping over idle cycles);
    /// one partition only. Returns how the run ended, if it did.
    pub fn step_checked(&mut self, check: &mut dyn FnMut(Cycle)) -> Option<Stop> {
        self.step_local();
        let s = [self.summary()];
        match self.coordinate(&s, check) {
            Decision::Continue { next, window_end } => {
                self.advance(next, window_end);
                None
            }
            Decision::Stop(stop, window_end) => {
                self.finish(window_end);
                Some(stop)
            }
        }
    }

    /// Runs cycle `self.t` and advances the clock (possibly jumping over idle cycles);
    /// one partition only, stop conditions ignored (see [`Simulation::run`]).
    pub fn step(&mut self) {
        self.step_local();
        let s = [self.summary()];
        if let Decision::Continue { next, window_end } =
            self.coord.decide_with(self.t, &s, &mut |_| {}, false)
        {
            self.advance(next, window_end);
        }
    }

    /// Creates a message from `src` to `dst` of `len` flits in the current cycle, outside
    /// the synthetic workload (measured, like every scripted message). For scripted
    /// experiments and tests; returns its id.
    pub fn inject(&mut self, src: NodeId, dst: NodeId, len: u32) -> MsgId {
        let i = self.out.nodes.local(src.0);
        let id = MsgId::new(src, self.seq[i]);
        self.seq[i] += 1;
        self.enqueue_scripted(i, id, dst, len, 0);
        id
    }

    /// As [`Simulation::inject`], a request whose delivery creates a reply of
    /// `reply_len` flits back to `src` (request/reply traffic: the machine must have
    /// `workload.reply` set, which gives the classes their VCs). For scripted tests.
    pub fn inject_request(&mut self, src: NodeId, dst: NodeId, len: u32, reply_len: u32) -> MsgId {
        let i = self.out.nodes.local(src.0);
        let id = MsgId::new(src, self.seq[i]);
        self.seq[i] += 1;
        self.enqueue_scripted(i, id, dst, len, reply_len);
        id
    }

    /// As [`Simulation::inject`], with the message's sequence number at its source given
    /// by the caller instead of counted: for a replay whose partitions number each
    /// source's messages in advance, so that the partition that receives a message
    /// knows which one it is without being told. The caller keeps the numbers unique
    /// per source (and does not mix this with `inject` at one source).
    pub fn inject_numbered(&mut self, src: NodeId, seq: u64, dst: NodeId, len: u32) -> MsgId {
        let i = self.out.nodes.local(src.0);
        let id = MsgId::new(src, seq);
        self.enqueue_scripted(i, id, dst, len, 0);
        id
    }

    /// Puts a scripted message into local source `i`'s memory in the current cycle.
    fn enqueue_scripted(&mut self, i: usize, id: MsgId, dst: NodeId, len: u32, reply_len: u32) {
        self.generated += 1;
        self.generated_flits += len as u64;
        self.measured_created += 1;
        if let Some(s) = &mut self.stats.series {
            s.created(self.t, len);
        }
        self.net.enqueue(
            i,
            PendingMsg {
                id,
                dst,
                len,
                created: self.t,
                measured: true,
                class: 0,
                reply_len,
                request_latency: 0,
            },
        );
        Self::wake(&mut self.now, &mut self.stamp, i as u32, self.t);
    }

    /// Stops the synthetic workload: no node creates another message.
    pub fn stop_workload(&mut self) {
        self.creations.clear();
        self.saturated.clear();
    }

    /// Steps until nothing is left in the network or in the sources' memory (ignoring
    /// future workload creations), at most `limit` cycles; returns whether it emptied.
    pub fn run_until_empty(&mut self, limit: Cycle) -> bool {
        let end = self.t + limit;
        loop {
            if self.now.is_empty()
                && self.out.wheel.pending() == 0
                && self.backlog() == 0
                && !self.net.in_network()
            {
                return true;
            }
            if self.t >= end {
                return false;
            }
            self.step();
        }
    }

    /// Messages created at `node` so far (their ids have sequence numbers 0..count).
    pub fn created_at(&self, node: NodeId) -> u64 {
        self.seq[self.out.nodes.local(node.0)]
    }

    /// Messages waiting in the sources' memory.
    pub fn backlog(&self) -> usize {
        self.net.backlog()
    }

    /// Events in flight on the links.
    pub fn in_flight(&self) -> impl Iterator<Item = &N::Event> {
        self.out.wheel.iter()
    }

    /// Runs until drained, saturated or deadlocked (one partition); `progress` is called
    /// now and then with the current cycle.
    pub fn run(&mut self, progress: &mut dyn FnMut(Cycle)) -> Stop {
        loop {
            if let Some(stop) = self.step_checked(progress) {
                return match stop {
                    Stop::Deadlock(_) => Stop::Deadlock(self.net.explain_deadlock(self.t)),
                    s => s,
                };
            }
        }
    }
}

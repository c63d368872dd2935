//! One replication, stepped cycle by cycle.
//!
//! Each cycle: (1) nodes whose next message creation falls in this cycle create their
//! messages, in node order; (2) flits and credits due this cycle are delivered; (3) every
//! router with something to do runs one cycle. Routers only read what was delivered to
//! them and only schedule events for later cycles, so the order in which they are visited
//! does not matter, and the statistics are integer sums and histograms.
//!
//! Idle skipping: a router is visited only in cycles where it received something or had
//! work left over; when no router is busy, the clock jumps to the next scheduled event or
//! message creation. `experiment.idle_skip = false` visits every router every cycle and
//! must give identical results (a test checks it).
//!
//! The engine is generic over the switching mode ([`Network`]); `Simulation` alone means
//! wormhole switching.

use super::network::{Network, Window};
use super::wheel::Wheel;
use crate::config::validate::validate;
use crate::config::{ExperimentConfig, HwConfig, Measure};
use crate::error::Result;
use crate::rng::{stream, NodeRng};
use crate::router::dma::PendingMsg;
use crate::stats::MsgStats;
use crate::switching::wormhole::WormholeNet;
use crate::traffic::Workload;
use crate::types::{Cycle, MsgId, NodeId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles of measurement window observed before a growing backlog stops a run.
pub const SATURATION_OBSERVE: Cycle = 5_000;

/// The measurement window: messages created inside it are measured; throughput and
/// utilisations count what happens inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureWindow {
    /// First measured cycle (end of warm-up).
    pub start: Cycle,
    /// First cycle after the window, once known.
    pub end: Option<Cycle>,
    /// How the window is closed.
    pub measure: Measure,
}

impl Window for MeasureWindow {
    #[inline]
    fn contains(&self, t: Cycle) -> bool {
        t >= self.start && self.end.is_none_or(|e| t < e)
    }
}

/// Why a replication stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every measured message was delivered.
    Drained,
    /// Source queues grew past the saturation threshold, or the drain took too long.
    Saturated,
    /// Flits present and none moved for `deadlock_cycles`; the text describes the waits.
    Deadlock(String),
}

/// One replication of one machine under one workload, on the routers of a switching
/// mode (`N`; wormhole unless said otherwise).
pub struct Simulation<N: Network = WormholeNet> {
    /// The routers.
    pub net: N,
    wheel: Wheel<N::Event>,
    due: Vec<N::Event>,
    now: Vec<u32>,
    next: Vec<u32>,
    stamp: Vec<Cycle>,
    workload: Workload,
    traffic_rng: Vec<NodeRng>,
    next_arrival: Vec<f64>,
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
    /// Measured messages created.
    pub measured_created: u64,
    /// Messages created inside the window.
    pub window_messages: u64,
    /// Flits created inside the window.
    pub window_flits: u64,
    exp: ExperimentConfig,
}

impl Simulation<WormholeNet> {
    /// Builds replication `rep` of a wormhole machine `cfg` (its `workload` and
    /// `experiment` sections).
    pub fn new(cfg: &HwConfig, rep: u32) -> Result<Self> {
        Self::build(cfg, rep)
    }
}

impl<N: Network> Simulation<N> {
    /// Builds replication `rep` of `cfg` on the routers of switching mode `N`.
    pub fn build(cfg: &HwConfig, rep: u32) -> Result<Self> {
        let machine = validate(cfg)?;
        let topology = &machine.topology;
        let exp = cfg.experiment.clone();
        let net = N::build(cfg, &machine, exp.seed, rep)?;
        let workload = machine.workload;
        let n = topology.nodes();
        let mut traffic_rng: Vec<NodeRng> =
            (0..n as u32).map(|i| stream(exp.seed, rep, i, 0)).collect();
        let mut next_arrival = vec![f64::INFINITY; n];
        let mut creations = BinaryHeap::with_capacity(n);
        for i in 0..n {
            if workload.pattern.sends(NodeId(i as u32)) {
                let a = workload
                    .arrivals
                    .next_after(workload.arrivals.origin(), &mut traffic_rng[i]);
                next_arrival[i] = a;
                creations.push(Reverse((a as Cycle, i as u32)));
            }
        }
        Ok(Simulation {
            wheel: Wheel::new(net.horizon()),
            due: Vec::new(),
            now: Vec::with_capacity(n),
            next: Vec::with_capacity(n),
            stamp: vec![Cycle::MAX; n],
            net,
            workload,
            traffic_rng,
            next_arrival,
            seq: vec![0; n],
            creations,
            t: 0,
            window: MeasureWindow {
                start: exp.warmup,
                end: match exp.measure {
                    Measure::Cycles(c) => Some(exp.warmup + c),
                    Measure::Messages(_) => None,
                },
                measure: exp.measure,
            },
            stats: MsgStats::default(),
            generated: 0,
            measured_created: 0,
            window_messages: 0,
            window_flits: 0,
            exp,
        })
    }

    /// Records every delivery in `stats.deliveries` (for invariant checks).
    pub fn record_deliveries(&mut self) {
        self.stats.deliveries = Some(Vec::new());
    }

    #[inline]
    fn wake(now: &mut Vec<u32>, stamp: &mut [Cycle], n: u32, t: Cycle) {
        if stamp[n as usize] != t {
            stamp[n as usize] = t;
            now.push(n);
        }
    }

    fn create(&mut self, n: usize) {
        let t = self.t;
        while self.next_arrival[n] < (t + 1) as f64 {
            let rng = &mut self.traffic_rng[n];
            let dst = self.workload.pattern.sample(NodeId(n as u32), rng);
            let len = self.workload.length.sample(rng);
            let measured = match self.window.measure {
                Measure::Cycles(_) => self.window.contains(t),
                Measure::Messages(m) => t >= self.window.start && self.measured_created < m,
            };
            if measured {
                self.measured_created += 1;
                if let Measure::Messages(m) = self.window.measure {
                    if self.measured_created == m {
                        self.window.end = Some(t + 1);
                    }
                }
            }
            if self.window.contains(t) {
                self.window_messages += 1;
                self.window_flits += len as u64;
            }
            let id = MsgId::new(NodeId(n as u32), self.seq[n]);
            self.seq[n] += 1;
            self.generated += 1;
            self.net.enqueue(
                n,
                PendingMsg {
                    id,
                    dst,
                    len,
                    created: t,
                    measured,
                },
            );
            self.next_arrival[n] = self.workload.arrivals.next_after(self.next_arrival[n], rng);
        }
        let next = self.next_arrival[n];
        if next < u64::MAX as f64 {
            self.creations.push(Reverse((next as Cycle, n as u32)));
        }
    }

    /// Runs cycle `self.t` and advances the clock (possibly jumping over idle cycles).
    pub fn step(&mut self) {
        let t = self.t;
        while let Some(&Reverse((c, n))) = self.creations.peek() {
            if c > t {
                break;
            }
            self.creations.pop();
            self.create(n as usize);
            Self::wake(&mut self.now, &mut self.stamp, n, t);
        }
        self.wheel.take(t, &mut self.due);
        if N::SORT_EVENTS && self.due.len() > 1 {
            let net = &self.net;
            self.due
                .sort_unstable_by_key(|e| (N::event_node(e), net.event_key(e)));
        }
        for i in 0..self.due.len() {
            let e = self.due[i];
            self.net
                .deliver(e, t, &self.window, &mut self.wheel, &mut self.stats);
            Self::wake(&mut self.now, &mut self.stamp, N::event_node(&e), t);
        }
        if self.exp.idle_skip {
            for i in 0..self.now.len() {
                let n = self.now[i] as usize;
                self.net
                    .step_node(n, t, &self.window, &mut self.wheel, &mut self.stats);
                if self.net.busy(n) {
                    Self::wake(&mut self.next, &mut self.stamp, n as u32, t + 1);
                }
            }
        } else {
            for n in 0..self.net.nodes() {
                self.net
                    .step_node(n, t, &self.window, &mut self.wheel, &mut self.stats);
            }
        }
        self.now.clear();
        std::mem::swap(&mut self.now, &mut self.next);
        self.t = t + 1;
        if self.exp.idle_skip && self.now.is_empty() {
            // Nothing to do until the next scheduled event or message creation.
            let event = self.wheel.next_due(self.t);
            let creation = self.creations.peek().map(|&Reverse((c, _))| c);
            let next = match (event, creation) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if let Some(c) = next {
                self.t = self.t.max(c);
            }
        }
    }

    /// Creates a message from `src` to `dst` of `len` flits in the current cycle, outside
    /// the synthetic workload (measured, like every scripted message). For scripted
    /// experiments and tests; returns its id.
    pub fn inject(&mut self, src: NodeId, dst: NodeId, len: u32) -> MsgId {
        let n = src.idx();
        let id = MsgId::new(src, self.seq[n]);
        self.seq[n] += 1;
        self.generated += 1;
        self.measured_created += 1;
        self.net.enqueue(
            n,
            PendingMsg {
                id,
                dst,
                len,
                created: self.t,
                measured: true,
            },
        );
        Self::wake(&mut self.now, &mut self.stamp, src.0, self.t);
        id
    }

    /// Stops the synthetic workload: no node creates another message.
    pub fn stop_workload(&mut self) {
        self.creations.clear();
    }

    /// Steps until nothing is left in the network or in the sources' memory (ignoring
    /// future workload creations), at most `limit` cycles; returns whether it emptied.
    pub fn run_until_empty(&mut self, limit: Cycle) -> bool {
        let end = self.t + limit;
        loop {
            if self.now.is_empty()
                && self.wheel.pending() == 0
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
        self.seq[node.idx()]
    }

    /// Messages waiting in the sources' memory.
    pub fn backlog(&self) -> usize {
        self.net.backlog()
    }

    /// True once the window is closed and every measured message was delivered.
    pub fn drained(&self) -> bool {
        self.window.end.is_some_and(|e| self.t >= e)
            && self.net.measured_delivered() == self.measured_created
    }

    /// Events in flight on the links.
    pub fn in_flight(&self) -> impl Iterator<Item = &N::Event> {
        self.wheel.iter()
    }

    /// Runs until drained, saturated or deadlocked; `progress` is called now and then
    /// with the current cycle.
    pub fn run(&mut self, progress: &mut dyn FnMut(Cycle)) -> Stop {
        let nodes = self.net.nodes() as f64;
        let backlog_limit = (self.exp.saturation_backlog * nodes).max(1.0) as usize;
        // Saturation is judged on the measurement window, so that a saturated run still
        // reports the throughput it accepted there; before that only a far larger backlog
        // (which would exhaust memory) stops the run.
        let observe = match self.window.measure {
            Measure::Cycles(c) => c.min(SATURATION_OBSERVE),
            Measure::Messages(_) => SATURATION_OBSERVE,
        };
        let mut next_check = self.t + 1024;
        loop {
            self.step();
            if self.drained() {
                return Stop::Drained;
            }
            if self.t >= next_check {
                next_check = self.t + 1024;
                progress(self.t);
                let judged = self.t >= self.window.start + observe;
                if self.backlog() > backlog_limit * if judged { 1 } else { 20 } {
                    self.close_window();
                    return Stop::Saturated;
                }
                if self
                    .window
                    .end
                    .is_some_and(|e| self.t > e + self.exp.drain_limit)
                {
                    return Stop::Saturated;
                }
                if self.net.stalled(self.t, self.exp.deadlock_cycles) {
                    self.close_window();
                    return Stop::Deadlock(N::explain_deadlock(self));
                }
            }
        }
    }

    /// Ends the window now (a run stopped early measures what it saw).
    fn close_window(&mut self) {
        if self.window.end.is_none_or(|e| e > self.t) {
            self.window.end = Some(self.t.max(self.window.start));
        }
    }
}

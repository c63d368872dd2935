//! What the cycle loop needs from a switching mode: the [`Network`] trait. The engine
//! (`sim`) owns time, message creation, the calendar of events and the measurement
//! window; a network owns its nodes' hardware and decides what happens in a cycle. Both
//! wormhole and circuit switching implement it, so warm-up, drain, saturation, deadlock
//! detection and replications are written once.

use super::sim::{MeasureWindow, Simulation};
use super::wheel::Wheel;
use crate::config::validate::Machine;
use crate::config::HwConfig;
use crate::error::Result;
use crate::router::controller::CtrlStats;
use crate::router::dma::PendingMsg;
use crate::stats::MsgStats;
use crate::switching::circuit::CircuitMeasures;
use crate::types::Cycle;

/// The measurement window as the hardware sees it.
pub trait Window {
    /// Whether something happening in cycle `t` is measured.
    fn contains(&self, t: Cycle) -> bool;
}

/// Where a router puts what it sends: events for later cycles.
pub trait Outbox<E> {
    /// Schedules `e` for cycle `at` (later than the current cycle).
    fn send(&mut self, at: Cycle, e: E);
}

impl<E> Outbox<E> for Wheel<E> {
    #[inline]
    fn send(&mut self, at: Cycle, e: E) {
        self.schedule(at, e);
    }
}

/// Mode-independent measurements a network reports at the end of a replication.
#[derive(Clone, Debug, Default)]
pub struct NetMeasures {
    /// Flits absorbed at destinations inside the window.
    pub flits_accepted: u64,
    /// Mean and largest utilisation of the network's channels over the window.
    pub links: (f64, f64),
}

/// A switching mode's network of routers.
pub trait Network: Sized {
    /// Something delivered to a node in a given cycle (a flit, a credit, a signal).
    type Event: Copy + std::fmt::Debug;

    /// Whether the events due in one cycle must be delivered in the canonical order of
    /// [`Network::event_key`] (per node) for the result not to depend on the order in which
    /// nodes were stepped.
    const SORT_EVENTS: bool;

    /// Builds the routers of every node of a validated machine for replication `rep`.
    fn build(cfg: &HwConfig, machine: &Machine, seed: u64, rep: u32) -> Result<Self>;

    /// Number of nodes.
    fn nodes(&self) -> usize;

    /// Cycles ahead the calendar's wheel should cover (further events use its heap).
    fn horizon(&self) -> Cycle;

    /// The node an event is delivered to.
    fn event_node(e: &Self::Event) -> u32;

    /// Canonical order of the events one node receives in one cycle.
    fn event_key(&self, e: &Self::Event) -> u64;

    /// A message created at `node` enters its memory.
    fn enqueue(&mut self, node: usize, m: PendingMsg);

    /// Applies an event due in cycle `t`.
    fn deliver(
        &mut self,
        e: Self::Event,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Wheel<Self::Event>,
        stats: &mut MsgStats,
    );

    /// One cycle of node `n`.
    fn step_node(
        &mut self,
        n: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Wheel<Self::Event>,
        stats: &mut MsgStats,
    );

    /// Whether node `n` has work left for the next cycle even if nothing arrives.
    fn busy(&self, n: usize) -> bool;

    /// Messages waiting in the sources' memory.
    fn backlog(&self) -> usize;

    /// Whether anything besides the memory queues is still in the network.
    fn in_network(&self) -> bool;

    /// Messages delivered (all).
    fn delivered(&self) -> u64;

    /// Measured messages delivered.
    fn measured_delivered(&self) -> u64;

    /// Whether the network looks deadlocked in cycle `t` (no progress for `limit`
    /// cycles with work present, or a proven cycle of waits).
    fn stalled(&self, t: Cycle, limit: Cycle) -> bool;

    /// Explains a deadlock: which resources wait on which.
    fn explain_deadlock(sim: &Simulation<Self>) -> String;

    /// Per-node routing-controller measurements.
    fn ctrl_stats(&self) -> &[CtrlStats];

    /// Servers per routing controller.
    fn ctrl_servers(&self) -> usize;

    /// Measurements over the window `[start, end)`.
    fn measures(&self, start: Cycle, end: Cycle) -> NetMeasures;

    /// Circuit-switching measurements over the window, for circuit networks.
    fn circuit_measures(&self, _start: Cycle, _end: Cycle) -> Option<CircuitMeasures> {
        None
    }
}

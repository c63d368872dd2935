//! What the cycle loop needs from a switching mode: the [`Network`] trait. The engine
//! (`sim`) owns time, message creation, the calendar of events and the measurement
//! window; a network owns its nodes' hardware and decides what happens in a cycle. Every
//! switching mode implements it, so warm-up, drain, saturation, deadlock detection and
//! replications are written once.
//!
//! A mode's own measurements ([`ModeMeasures`]) are opaque to the engine: it collects
//! them from each partition and merges them; the mode builds its block of the report
//! from every replication's (`switching::Mode`). Adding a mode touches `switching` (the
//! mode, its block and its entry in `switching::with_mode`), never the engine.

use crate::config::HwConfig;
use crate::engine::machine::Machine;
use crate::engine::partition::PartOut;
use crate::engine::partitioner::PartNodes;
use crate::engine::probe::observe::{LinkObs, LinkUnits, PortObs};
use crate::engine::probe::MsgStats;
use crate::engine::waits::WaitEdge;
use crate::engine::window::MeasureWindow;
use crate::foundation::error::Result;
use crate::foundation::types::Cycle;
use crate::foundation::types::Located;
use crate::router::controller::CtrlStats;
use crate::router::dma::PendingMsg;
use crate::topology::Topology;

/// Mode-independent measurements a network (partition) reports at the end of a
/// replication; partitions' measures add up.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct NetMeasures {
    /// Flits absorbed at destinations inside the window.
    pub flits_accepted: u64,
    /// Sum over the network's links of their busy units in the window (flits carried,
    /// or cycles held by a circuit): integers, so partitions add up exactly.
    pub link_busy: u64,
    /// The busiest link's units.
    pub link_busy_max: u64,
    /// Links counted in `link_busy`.
    pub link_count: usize,
    /// Units a link can take in the window (window × width, or window).
    pub link_capacity: f64,
}

impl NetMeasures {
    /// Adds another partition's measures.
    pub fn add(&mut self, o: &NetMeasures) {
        self.flits_accepted += o.flits_accepted;
        self.link_busy += o.link_busy;
        self.link_busy_max = self.link_busy_max.max(o.link_busy_max);
        self.link_count += o.link_count;
        self.link_capacity = o.link_capacity;
    }

    /// Mean and largest link utilisation.
    pub fn utilization(&self) -> (f64, f64) {
        let c = self.link_capacity.max(1.0);
        if self.link_count == 0 {
            return (0.0, 0.0);
        }
        (
            self.link_busy as f64 / (self.link_count as f64 * c),
            self.link_busy_max as f64 / c,
        )
    }
}

/// What a report's mode block is built from besides the replications' measurements.
#[derive(Clone, Copy, Debug)]
pub struct ModeContext<'a> {
    /// The effective configuration.
    pub cfg: &'a HwConfig,
    /// Its topology.
    pub topology: &'a Topology,
}

/// A switching mode's own measurements of one replication: gathered from each partition
/// at the end of the replication, merged, and turned into the mode's block of the report
/// from every replication's (so confidence intervals over replications are the mode's to
/// compute).
pub trait ModeMeasures:
    Clone + std::fmt::Debug + Send + Sized + serde::Serialize + serde::de::DeserializeOwned
{
    /// Adds another partition's measurements of the same replication (exact: integer
    /// counts and histograms, so the partition count never shows).
    fn merge(&mut self, other: &Self);
}

/// A switching mode's network of routers.
pub trait Network: Sized {
    /// Something delivered to a node in a given cycle (a flit, a credit, a signal).
    type Event: Copy
        + std::fmt::Debug
        + Send
        + Located
        + serde::Serialize
        + serde::de::DeserializeOwned;

    /// Side data that crosses to another partition with an event (see
    /// `engine::partition`).
    type Remote: Clone + std::fmt::Debug + Send + serde::Serialize + serde::de::DeserializeOwned;

    /// Whether the events due in one cycle must be delivered in the canonical order of
    /// [`Network::event_key`] (per node) for the result not to depend on the order in which
    /// nodes were stepped.
    const SORT_EVENTS: bool;

    /// Whether the mode can be split into partitions stepped by separate threads.
    const PARTITIONABLE: bool;

    /// Whether everything a message sends — its flits, and the signals and credits that
    /// answer them — crosses only links of minimal paths between its source and its
    /// destination (deterministic or minimal adaptive routing). A replay split over
    /// processes then knows which messages stay inside one process's nodes.
    const MINIMAL_ROUTES: bool = false;

    /// What one unit of [`Network::work`] is, for benchmarks ("flit move", …).
    const WORK_UNIT: &'static str;

    /// Units of work done so far (benchmarks report the time per unit).
    fn work(&self) -> u64;

    /// Smallest partition, in nodes, whose cycles carry enough work to pay for a
    /// barrier per cycle (the default of `experiment.partition_min_nodes`).
    const MIN_PARTITION_NODES: usize;

    /// Builds the routers of the partition `part` of a validated machine for replication
    /// `rep`. Its per-node arrays are indexed by local index ([`PartNodes::local`]);
    /// events, hops and records name nodes by number.
    fn build(
        cfg: &HwConfig,
        machine: &Machine,
        seed: u64,
        rep: u32,
        part: &PartNodes,
    ) -> Result<Self>;

    /// Number of nodes this network steps (its partition).
    fn nodes(&self) -> usize;

    /// Applies side data that another partition sent with its events.
    fn accept_remote(&mut self, r: Self::Remote);

    /// Cycles ahead the calendar's wheel should cover (further events use its heap).
    fn horizon(&self) -> Cycle;

    /// The fewest cycles from a cycle in which an event (or side data) is sent to another
    /// partition to the cycle it is due there: partitions in other processes then need to
    /// exchange only this often (conservative synchronisation, `engine::distributed`).
    /// 1, the default, is always safe; a mode that declares more is checked on every
    /// event it sends across ([`PartOut`]).
    fn lookahead(&self) -> Cycle {
        1
    }

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
        out: &mut PartOut<Self::Event, Self::Remote>,
        stats: &mut MsgStats,
    );

    /// One cycle of node `n` (numbered within the partition).
    fn step_node(
        &mut self,
        n: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut PartOut<Self::Event, Self::Remote>,
        stats: &mut MsgStats,
    );

    /// Whether node `n` (numbered within the partition) has work left for the next cycle even if nothing arrives.
    fn busy(&self, n: usize) -> bool;

    /// Messages waiting in the sources' memory.
    fn backlog(&self) -> usize;

    /// Messages waiting in node `n`'s memory queue (numbered within the partition), for
    /// saturated sources (`ArrivalProcess::Saturated`); None: the mode does not keep a
    /// per-node count (validation refuses saturated sources for it).
    fn queued(&self, _n: usize) -> Option<usize> {
        None
    }

    /// Whether anything besides the memory queues is still in the network.
    fn in_network(&self) -> bool;

    /// Messages delivered (all).
    fn delivered(&self) -> u64;

    /// Measured messages delivered.
    fn measured_delivered(&self) -> u64;

    /// Messages that will never be delivered (refused by a full source memory): all of
    /// them, and the measured ones (which count as finished for the drain).
    fn lost(&self) -> u64 {
        0
    }

    /// See [`Network::lost`].
    fn measured_lost(&self) -> u64 {
        0
    }

    /// Work in the network that must keep moving (wormhole: flits); the watchdog fires
    /// when the whole network has some and none moved for `deadlock_cycles`.
    fn live_work(&self) -> i64;

    /// Last cycle the work moved.
    fn last_progress(&self) -> Cycle;

    /// This partition's edges of the wait-for graph (`engine::waits`): a cycle in the
    /// union of every partition's edges proves a deadlock (circuit switching's hold).
    fn wait_edges(&self, _out: &mut Vec<WaitEdge>) {}

    /// Explains a deadlock found after cycle `t`: which resources wait on which.
    fn explain_deadlock(&self, t: Cycle) -> String;

    /// Per-node routing-controller measurements.
    fn ctrl_stats(&self) -> &[CtrlStats];

    /// Servers per routing controller.
    fn ctrl_servers(&self) -> usize;

    /// The mode's own measurements (see [`ModeMeasures`]).
    type Measures: ModeMeasures;

    /// Measurements over the window `[start, end)`.
    fn measures(&self, start: Cycle, end: Cycle) -> NetMeasures;

    /// The mode's own measurements over the window `[start, end)` (this partition's).
    fn mode_measures(&self, start: Cycle, end: Cycle) -> Self::Measures;

    /// What a link's `busy` and `blocking` count in [`Network::link_obs`].
    const LINK_UNITS: LinkUnits = LinkUnits {
        busy: "flits",
        blocking: "cycles",
    };

    /// Per-link observations over the window `[start, end)`
    /// (`experiment.observe.per_link`): one row for each link this partition counts in
    /// [`Network::measures`], with the same busy units, so the rows add up to its totals.
    /// A mode that does not observe per link leaves it empty.
    fn link_obs(&self, _start: Cycle, _end: Cycle, _out: &mut Vec<LinkObs>) {}

    /// Per-input-port occupancy over the window `[start, end)` (buffers and VCs, or
    /// lanes), one row per network input port of this partition's nodes; empty where
    /// the mode has no buffers.
    fn port_obs(&self, _start: Cycle, _end: Cycle, _out: &mut Vec<PortObs>) {}
}

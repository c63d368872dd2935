//! What a replication's probes collect per link, per router input port, per interval and
//! per message hop while it runs (`experiment.observe`, docs/measurements.md): the
//! collectors' data types and the arithmetic on them. It does not decide *when*
//! something is counted: each switching mode counts its own links and buffers (it knows
//! what a header waiting means in that mode; see
//! [`crate::engine::network::Network::link_obs`]), and the kernel (`engine::sim`) counts
//! creations and samples the backlog. Turning them into the report's arrays is
//! `stats::observe`'s.
//!
//! Everything here is integer counts and time integrals, so partitions add up exactly
//! and the result does not depend on the thread count.

use crate::foundation::types::{Cycle, MsgId};
use crate::router::controller::CtrlStats;
use serde::Serialize;

/// One directed network link's counts over a replication's window, as a switching mode
/// reports it. The links and `busy` units are exactly those of the mode's
/// `Network::measures`, so the per-link sums equal the report's link totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkObs {
    /// The node the link leaves.
    pub from: u32,
    /// Its output port there.
    pub port: u8,
    /// The node it leads to.
    pub to: u32,
    /// Busy units in the window (flits under wormhole, cycles held by a circuit or a
    /// worm, lane-cycles under deflection; both directions of a half-duplex circuit link).
    pub busy: u64,
    /// Flits carried in the window.
    pub flits: u64,
    /// Headers (or set-up requests) that asked for the link in the window.
    pub headers: u64,
    /// Header blocking at the link in the window, in the mode's blocking unit.
    pub blocking: u64,
}

/// One router input port's occupancy over a replication's window: time integrals, so
/// their ratio to the window is a time average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PortObs {
    /// Node.
    pub node: u32,
    /// Input port (network ports only).
    pub port: u8,
    /// Σ over window cycles of the flits buffered at the port (all its VCs); None where
    /// the port has no buffers (deflection's lanes).
    pub flit_cycles: Option<u64>,
    /// Σ over window cycles of the port's VCs (deflection: input lanes) holding a
    /// message.
    pub vc_cycles: u64,
}

/// A level that changes at discrete cycles, integrated over the measurement window
/// (the time average of a buffer's occupancy, of VCs busy). Updated only when the level
/// changes, never per cycle, and cheaply: with L(t) = Σ Δᵢ over the changes up to t,
/// ∫ₛᵉ L dt = Σ Δᵢ·(e − clip(τᵢ)) with clip(τ) = max(τ, s) for the changes before e,
/// so a change adds Δ to the level and Δ·clip(τ) to a sum, and the integral is
/// L(e)·e − that sum. The arithmetic wraps: the terms can exceed 64 bits, the integral
/// does not, and wrapping sums are exact modulo 2⁶⁴.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Level {
    /// The level just before the window's end (now, while it is open).
    level: u64,
    /// Σ Δ·max(τ, start) over the changes before the window's end (wrapping).
    sum: u64,
}

impl Level {
    /// The level changes by `delta` in cycle `t` (the new level holds from `t`); the
    /// window is `[start, end)` (`end` None: still open).
    #[inline]
    pub fn change(&mut self, t: Cycle, delta: i64, start: Cycle, end: Option<Cycle>) {
        if end.is_none_or(|e| t < e) {
            let d = delta as u64;
            self.level = self.level.wrapping_add(d);
            self.sum = self.sum.wrapping_add(d.wrapping_mul(t.max(start)));
        }
    }

    /// The integral over `[start, end)` (the changes were made with this window).
    pub fn area_until(&self, _start: Cycle, end: Cycle) -> u64 {
        self.level.wrapping_mul(end).wrapping_sub(self.sum)
    }
}

/// No hop: the end of a [`HopRec::prev`] list, or a hop or delivery not linked.
pub const NO_HOP: u32 = u32::MAX;

/// [`NO_HOP`], for serde's defaults.
pub fn no_hop() -> u32 {
    NO_HOP
}

/// A node a message's header visited, recorded for the per-message log's path.
///
/// Packed to 4-byte alignment: 28 bytes where `#[repr(Rust)]` pads to 32 (a long log
/// holds millions of hops, and the pages they touch cost the log more than its
/// instructions: docs/speed.md). Fields are read by value (no references into it).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[repr(C, packed(4))]
pub struct HopRec {
    /// The message.
    pub id: MsgId,
    /// Its attempt or segment (deflection: segment number; 0 elsewhere).
    pub attempt: u32,
    /// Order within the attempt (the cycle, or the position on a circuit's path).
    pub at: Cycle,
    /// The node.
    pub node: u32,
    /// The index of the message's hop before this one (in the vector it was recorded
    /// in): the engine's link when it links hops ([`crate::engine::probe::MsgStats::hop_after`]),
    /// else the log's own, made when it groups hops; [`NO_HOP`] ends the list. Not part
    /// of the hop's value (equality ignores it; not sent between ranks).
    #[serde(skip, default = "no_hop")]
    pub prev: u32,
}

impl PartialEq for HopRec {
    fn eq(&self, o: &Self) -> bool {
        (self.id, self.attempt, self.at, self.node) == (o.id, o.attempt, o.at, o.node)
    }
}

impl Eq for HopRec {}

const _: () = assert!(std::mem::size_of::<HopRec>() == 28);

/// Counts of one interval of the time series (one replication, one partition).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IntervalCounts {
    /// Messages created.
    pub created: u64,
    /// Flits of the messages created.
    pub created_flits: u64,
    /// Flits absorbed at destinations.
    pub accepted_flits: u64,
    /// Messages delivered (tail absorbed), measured or not.
    pub delivered: u64,
    /// Σ creation → tail absorbed of those messages.
    pub latency_sum: u64,
    /// Σ head injected → tail absorbed of those messages.
    pub network_sum: u64,
    /// Messages waiting in the sources' memory at the interval's end.
    pub backlog: u64,
}

impl IntervalCounts {
    /// Adds another partition's (or replication's) counts of the same interval.
    pub fn add(&mut self, o: &IntervalCounts) {
        self.created += o.created;
        self.created_flits += o.created_flits;
        self.accepted_flits += o.accepted_flits;
        self.delivered += o.delivered;
        self.latency_sum += o.latency_sum;
        self.network_sum += o.network_sum;
        self.backlog += o.backlog;
    }
}

/// Interval boundaries: every `width` cycles, anchored at `anchor` (the end of the
/// warm-up), so the measurement window starts on a boundary; the first interval,
/// `[0, anchor mod width)`, is shorter when the warm-up is not a multiple of the width.
/// There are at most [`MAX_INTERVALS`]: the last one runs to the end of time, which
/// bounds the series' memory whatever the width and the run's length (the report divides
/// each interval by the part of it the run covered).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Intervals {
    /// Length of an interval (cycles, ≥ 1).
    pub width: Cycle,
    /// A cycle that is a boundary.
    pub anchor: Cycle,
}

/// The most intervals a series has (about 56 bytes each per partition and replication).
pub const MAX_INTERVALS: usize = 1 << 20;

impl Intervals {
    #[inline]
    fn first(&self) -> Cycle {
        self.anchor % self.width
    }

    /// The interval cycle `t` falls in.
    #[inline]
    pub fn index(&self, t: Cycle) -> usize {
        let r = self.first();
        let i = if r == 0 {
            t / self.width
        } else if t < r {
            0
        } else {
            1 + (t - r) / self.width
        };
        i.min(MAX_INTERVALS as Cycle - 1) as usize
    }

    /// First cycle of interval `i` (`Cycle::MAX`: the end of the last interval, or a
    /// boundary beyond the clock's range).
    pub fn start(&self, i: usize) -> Cycle {
        let r = self.first();
        if i >= MAX_INTERVALS {
            Cycle::MAX
        } else if r == 0 {
            (i as Cycle).saturating_mul(self.width)
        } else if i == 0 {
            0
        } else {
            (i as Cycle - 1)
                .saturating_mul(self.width)
                .saturating_add(r)
        }
    }
}

/// The time series one partition of one replication collects (`experiment.observe.
/// interval`): counts by interval, and the backlog sampled at every boundary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeriesAcc {
    /// The boundaries.
    pub intervals: Intervals,
    /// Counts by interval.
    pub rows: Vec<IntervalCounts>,
    /// Intervals whose end backlog has been sampled.
    sampled: usize,
    /// The cycle from which the next boundary sample is due.
    next_sample: Cycle,
}

impl SeriesAcc {
    /// An empty series with these boundaries.
    pub fn new(intervals: Intervals) -> Self {
        SeriesAcc {
            intervals,
            rows: Vec::new(),
            sampled: 0,
            next_sample: intervals.start(1),
        }
    }

    #[inline]
    fn row(&mut self, t: Cycle) -> &mut IntervalCounts {
        let i = self.intervals.index(t);
        if i >= self.rows.len() {
            self.rows.resize(i + 1, IntervalCounts::default());
        }
        &mut self.rows[i]
    }

    /// A message of `flits` flits is created in cycle `t`.
    #[inline]
    pub fn created(&mut self, t: Cycle, flits: u32) {
        let r = self.row(t);
        r.created += 1;
        r.created_flits += flits as u64;
    }

    /// `flits` flits are absorbed at a destination in cycle `t`.
    #[inline]
    pub fn accepted(&mut self, t: Cycle, flits: u64) {
        self.row(t).accepted_flits += flits;
    }

    /// A message created at `created`, injected at `injected`, is delivered at
    /// `absorbed`.
    #[inline]
    pub fn delivered(&mut self, created: Cycle, injected: Cycle, absorbed: Cycle) {
        let r = self.row(absorbed);
        r.delivered += 1;
        r.latency_sum += absorbed - created;
        r.network_sum += absorbed - injected;
    }

    /// Whether the clock has reached a boundary whose backlog is not sampled yet.
    #[inline]
    pub fn sample_due(&self, t: Cycle) -> bool {
        t >= self.next_sample
    }

    /// The clock is at `t` (before anything of cycle `t` happened) and `backlog`
    /// messages wait in the sources: that is the backlog at every boundary up to `t`
    /// not sampled yet (cycles the clock jumped over changed nothing).
    pub fn sample(&mut self, t: Cycle, backlog: u64) {
        while self.intervals.start(self.sampled + 1) <= t {
            let i = self.sampled;
            if i >= self.rows.len() {
                self.rows.resize(i + 1, IntervalCounts::default());
            }
            self.rows[i].backlog = backlog;
            self.sampled += 1;
        }
        self.next_sample = self.intervals.start(self.sampled + 1);
    }

    /// The run ended at `t` (the first cycle not simulated) with `backlog` messages
    /// waiting: the boundaries up to `t` and every later interval (holding flits
    /// absorbed after the last cycle, in an ejection channel) take it.
    pub fn close(&mut self, t: Cycle, backlog: u64) {
        self.sample(t, backlog);
        let last = self.intervals.index(t.saturating_sub(1));
        if self.rows.len() <= last {
            self.rows.resize(last + 1, IntervalCounts::default());
        }
        for i in self.sampled..self.rows.len() {
            self.rows[i].backlog = backlog;
        }
        self.sampled = self.rows.len();
    }

    /// Adds another partition's series of the same replication.
    pub fn merge(&mut self, o: &SeriesAcc) {
        if self.rows.len() < o.rows.len() {
            self.rows.resize(o.rows.len(), IntervalCounts::default());
        }
        for (a, b) in self.rows.iter_mut().zip(&o.rows) {
            a.add(b);
        }
    }
}

/// What one replication observed in space (built by `experiments::experiment` from every
/// partition, in node order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RepObs {
    /// Every link, ordered by (from, port).
    pub links: Vec<LinkObs>,
    /// Units one link can take in the window (`NetMeasures::link_capacity`).
    pub capacity: f64,
    /// Every network input port with buffers or lanes, ordered by (node, port).
    pub ports: Vec<PortObs>,
    /// Every node's routing controller (empty where the mode has none).
    pub ctrl: Vec<CtrlStats>,
    /// Servers per controller.
    pub servers: usize,
    /// The window's length, cycles.
    pub window: Cycle,
    /// The totals of the mode's `Network::measures` (computed on their own, so the
    /// per-link rows can be checked against them).
    pub busy_total: u64,
    /// See `busy_total`.
    pub busy_max: u64,
    /// See `busy_total`.
    pub link_count: usize,
    /// What the link counts mean in this mode.
    pub units: LinkUnits,
}

/// What a mode's link counts mean (its `Network` constants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkUnits {
    /// Unit of `busy` and of the capacity.
    pub busy: &'static str,
    /// Unit of `blocking`.
    pub blocking: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_anchored_at_the_warmup_end() {
        let iv = Intervals {
            width: 100,
            anchor: 250,
        };
        assert_eq!(iv.index(0), 0);
        assert_eq!(iv.index(49), 0);
        assert_eq!(iv.index(50), 1);
        assert_eq!(iv.index(249), 2);
        assert_eq!(iv.index(250), 3);
        assert_eq!(iv.start(3), 250);
        assert_eq!(iv.start(0), 0);
        assert_eq!(iv.start(1), 50);
        let even = Intervals {
            width: 100,
            anchor: 300,
        };
        assert_eq!(even.index(299), 2);
        assert_eq!(even.start(3), 300);
    }

    #[test]
    fn an_interval_as_wide_as_the_clock_never_wraps_and_the_count_is_bounded() {
        let huge = Intervals {
            width: Cycle::MAX,
            anchor: 200,
        };
        assert_eq!(huge.start(1), 200);
        assert_eq!(huge.start(2), Cycle::MAX);
        assert_eq!(huge.index(199), 0);
        assert_eq!(huge.index(Cycle::MAX - 1), 1);
        let one = Intervals {
            width: 1,
            anchor: 0,
        };
        assert_eq!(one.index(5), 5);
        assert_eq!(one.index(u64::MAX / 2), MAX_INTERVALS - 1);
        assert_eq!(one.start(MAX_INTERVALS - 1), MAX_INTERVALS as Cycle - 1);
        // The last interval runs to the end of time.
        assert_eq!(one.start(MAX_INTERVALS), Cycle::MAX);
        let mut s = SeriesAcc::new(one);
        s.created(u64::MAX / 2, 3);
        s.close(u64::MAX / 2 + 1, 0);
        assert_eq!(s.rows.len(), MAX_INTERVALS);
    }

    #[test]
    fn backlog_is_sampled_at_every_boundary_the_clock_passes() {
        let mut s = SeriesAcc::new(Intervals {
            width: 10,
            anchor: 0,
        });
        assert!(!s.sample_due(9));
        assert!(s.sample_due(10));
        // The clock jumped from cycle 3 to 35: boundaries 10, 20 and 30 saw backlog 7.
        s.sample(35, 7);
        assert_eq!(s.rows.len(), 3);
        assert!(s.rows.iter().all(|r| r.backlog == 7));
        assert!(!s.sample_due(39));
        s.accepted(41, 5);
        s.close(42, 2);
        assert_eq!(s.rows[3].backlog, 2);
        assert_eq!(s.rows[4].backlog, 2);
        assert_eq!(s.rows[4].accepted_flits, 5);
    }

    #[test]
    fn a_level_integrates_only_inside_the_window() {
        let mut l = Level::default();
        l.change(5, 2, 10, Some(20)); // 0 until 5, then 2
        l.change(15, -1, 10, Some(20)); // 2 over 10..15, then 1 over 15..20
        l.change(25, 3, 10, Some(20)); // after the window
        assert_eq!(l.area_until(10, 20), 15);
        let mut big = Level::default();
        big.change(u64::MAX / 4, 5, 0, None);
        big.change(u64::MAX / 4 + 10, -5, 0, None);
        assert_eq!(
            big.area_until(0, u64::MAX / 2),
            50,
            "exact although the terms overflow"
        );
    }
}

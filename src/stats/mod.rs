//! Measurement: what one replication accumulates while it runs ([`MsgStats`]), means and
//! confidence intervals across replications ([`ci`]), and the JSON report and human
//! summary ([`report`]). Accumulators hold integers and histograms only, so merging
//! partitions in any order gives bit-identical results.

pub mod ci;
pub mod plot;
pub mod report;

use crate::router::buffers::MsgHeader;
use crate::types::Cycle;
use hdrhistogram::Histogram;

/// Cycles of `[from, to)` inside the window `[start, end)` (end None: still open).
#[inline]
pub fn overlap(from: Cycle, to: Cycle, start: Cycle, end: Option<Cycle>) -> u64 {
    let lo = from.max(start);
    let hi = end.map_or(to, |e| to.min(e));
    hi.saturating_sub(lo)
}

/// A latency histogram (cycles, 3 significant digits, grows as needed).
pub fn histogram() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

/// A delivered message, as recorded for invariant checks and per-message output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Its header as it arrived (source in the id, destination, length, times, hops).
    pub header: MsgHeader,
    /// Cycle the tail was absorbed.
    pub absorbed: Cycle,
}

/// Per-message measurements of one replication (measured messages only).
#[derive(Clone, Debug)]
pub struct MsgStats {
    /// Creation to tail absorbed.
    pub latency: Histogram<u64>,
    /// Head leaving the source router to tail absorbed.
    pub network: Histogram<u64>,
    /// Creation to head leaving the source router.
    pub source_queue: Histogram<u64>,
    /// Measured messages delivered.
    pub count: u64,
    /// Sum of latencies.
    pub latency_sum: u64,
    /// Sum of network latencies.
    pub network_sum: u64,
    /// Sum of source-queueing times.
    pub source_sum: u64,
    /// Sum of network hops.
    pub hops_sum: u64,
    /// Sum of blocking on network hops.
    pub blocking_sum: u64,
    /// Sum of waits for an ejection engine or the local crossbar output.
    pub eject_wait_sum: u64,
    /// Sum of routing-controller queueing over all hops.
    pub ctrl_wait_sum: u64,
    /// When set, every delivery (measured or not) is recorded here, for invariant checks.
    pub deliveries: Option<Vec<Delivery>>,
}

impl Default for MsgStats {
    fn default() -> Self {
        MsgStats {
            latency: histogram(),
            network: histogram(),
            source_queue: histogram(),
            count: 0,
            latency_sum: 0,
            network_sum: 0,
            source_sum: 0,
            hops_sum: 0,
            blocking_sum: 0,
            eject_wait_sum: 0,
            ctrl_wait_sum: 0,
            deliveries: None,
        }
    }
}

impl MsgStats {
    /// Adds another partition's measurements (exact: counts, sums and histograms).
    pub fn merge(&mut self, o: &MsgStats) {
        let _ = self.latency.add(&o.latency);
        let _ = self.network.add(&o.network);
        let _ = self.source_queue.add(&o.source_queue);
        self.count += o.count;
        self.latency_sum += o.latency_sum;
        self.network_sum += o.network_sum;
        self.source_sum += o.source_sum;
        self.hops_sum += o.hops_sum;
        self.blocking_sum += o.blocking_sum;
        self.eject_wait_sum += o.eject_wait_sum;
        self.ctrl_wait_sum += o.ctrl_wait_sum;
        if let (Some(a), Some(b)) = (&mut self.deliveries, &o.deliveries) {
            a.extend_from_slice(b);
        }
    }

    /// Records a message whose tail is absorbed in cycle `absorbed`.
    #[inline]
    pub fn record(&mut self, h: &MsgHeader, absorbed: Cycle) {
        if let Some(d) = &mut self.deliveries {
            d.push(Delivery {
                header: *h,
                absorbed,
            });
        }
        if !h.measured {
            return;
        }
        let lat = absorbed - h.created;
        let net = absorbed - h.injected;
        let src = h.injected - h.created;
        // Auto-resizing histograms only fail on values beyond u64 range.
        let _ = self.latency.record(lat);
        let _ = self.network.record(net);
        let _ = self.source_queue.record(src);
        self.count += 1;
        self.latency_sum += lat;
        self.network_sum += net;
        self.source_sum += src;
        self.hops_sum += h.hops as u64;
        self.blocking_sum += h.blocking as u64;
        self.eject_wait_sum += h.eject_wait as u64;
        self.ctrl_wait_sum += h.ctrl_wait as u64;
    }
}

//! The kernel's probes: what one replication accumulates while it runs — per message
//! ([`MsgStats`]: latency histograms by phase, deliveries, the per-message log's hops)
//! and in space and time ([`observe`]). The switching modes write into them as things
//! happen; the measurement layer (`stats`) turns them into statistics and reports.
//! Accumulators hold integers and histograms only, so merging partitions in any order
//! gives bit-identical results.

pub mod classes;
pub mod hist_serde;
pub mod observe;

use crate::foundation::types::Cycle;
use crate::router::buffers::MsgHeader;
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
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Delivery {
    /// Its header as it arrived (source in the id, destination, length, times, hops).
    pub header: MsgHeader,
    /// Cycle the tail was absorbed.
    pub absorbed: Cycle,
    /// For the per-message log: the index, in the recording partition's hops, of the
    /// message's last hop on its path, whose [`observe::HopRec::prev`] list holds every
    /// hop of the message; [`observe::NO_HOP`] when the engine did not link them (the
    /// log then groups the hops itself). Only an index into the vector it was recorded
    /// in (not part of the delivery's value: equality ignores it, and it is not sent
    /// between ranks).
    #[serde(skip, default = "observe::no_hop")]
    pub last_hop: u32,
}

impl PartialEq for Delivery {
    fn eq(&self, o: &Self) -> bool {
        self.header == o.header && self.absorbed == o.absorbed
    }
}

impl Eq for Delivery {}

/// Per-message measurements of one replication (measured messages only).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MsgStats {
    /// Creation to tail absorbed.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub latency: Histogram<u64>,
    /// Head leaving the source router to tail absorbed.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub network: Histogram<u64>,
    /// Creation to head leaving the source router.
    #[serde(with = "crate::engine::probe::hist_serde")]
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
    /// Messages, measured or not, whose tail was absorbed inside the measurement window
    /// (`throughput.accepted_messages`, like the flits of `throughput.accepted`).
    pub window_absorbed: u64,
    /// Flits absorbed at their destinations over the whole run, warm-up included: the
    /// accepted throughput of a run stopped before its window opened.
    pub flits_absorbed: u64,
    /// Messages absorbed over the whole run, warm-up included.
    pub run_absorbed: u64,
    /// The measurement window as far as it is known: its first cycle and, once decided,
    /// its end (exclusive). The engine keeps it current.
    pub window: (Cycle, Option<Cycle>),
    /// When set, every delivery (measured or not) is recorded here, for invariant checks
    /// and the per-message log.
    pub deliveries: Option<Vec<Delivery>>,
    /// When set, the time series (`experiment.observe.interval`).
    pub series: Option<Box<observe::SeriesAcc>>,
    /// When set, the nodes every header visited (`experiment.observe.message_log`).
    pub hops: Option<Vec<observe::HopRec>>,
    /// Under request/reply traffic (`workload.reply`), the latency per message class
    /// and of the round trip, and the replies created; None otherwise.
    pub classes: Option<Box<classes::ClassStats>>,
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
            window_absorbed: 0,
            flits_absorbed: 0,
            run_absorbed: 0,
            window: (0, None),
            deliveries: None,
            series: None,
            hops: None,
            classes: None,
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
        self.window_absorbed += o.window_absorbed;
        self.flits_absorbed += o.flits_absorbed;
        self.run_absorbed += o.run_absorbed;
        if let (Some(a), Some(b)) = (&mut self.deliveries, &o.deliveries) {
            a.extend_from_slice(b);
        }
        if let (Some(a), Some(b)) = (&mut self.series, &o.series) {
            a.merge(b);
        }
        if let (Some(a), Some(b)) = (&mut self.hops, &o.hops) {
            a.extend_from_slice(b);
        }
        if let Some(b) = &o.classes {
            self.classes.get_or_insert_with(Default::default).merge(b);
        }
    }

    /// A reply of `flits` flits is created at cycle `at` (`measured`: its request was):
    /// counted with the created messages (and in the time series).
    #[inline]
    pub fn reply_created(&mut self, at: Cycle, flits: u32, measured: bool) {
        let (start, end) = self.window;
        let in_window = at >= start && end.is_none_or(|e| at < e);
        self.classes
            .get_or_insert_with(Default::default)
            .reply_created(flits, measured, in_window);
        if let Some(s) = &mut self.series {
            s.created(at, flits);
        }
    }

    /// Replies created so far (none without request/reply traffic).
    #[inline]
    pub fn replies_created(&self) -> classes::RepliesCreated {
        self.classes.as_ref().map(|c| c.created).unwrap_or_default()
    }

    /// `flits` flits are absorbed at a destination in cycle `t` (for the time series;
    /// nothing when it is off).
    #[inline]
    pub fn accepted(&mut self, t: Cycle, flits: u64) {
        self.flits_absorbed += flits;
        if let Some(s) = &mut self.series {
            s.accepted(t, flits);
        }
    }

    /// Whether the nodes headers visit are recorded (`experiment.observe.message_log`).
    #[inline]
    pub fn logs_hops(&self) -> bool {
        self.hops.is_some()
    }

    /// The header of message `id` (attempt or segment `attempt`) is at `node`; `at`
    /// orders the nodes of one attempt (the cycle, or the position on the path).
    #[inline]
    pub fn hop(&mut self, id: crate::foundation::types::MsgId, attempt: u32, at: Cycle, node: u32) {
        self.hop_after(id, attempt, at, node, observe::NO_HOP, false);
    }

    /// [`hop`](Self::hop), linked (when `linked`) to `prev`, the index of the hop
    /// before it on the message's path ([`observe::NO_HOP`]: none, the first of a
    /// segment); returns the new hop's index for the next one to link to, or
    /// [`observe::NO_HOP`] when hops are not recorded or not linked. An engine links
    /// hops only when one partition records them all (an index names a hop of its own
    /// vector), saving the log its grouping pass.
    #[inline]
    pub fn hop_after(
        &mut self,
        id: crate::foundation::types::MsgId,
        attempt: u32,
        at: Cycle,
        node: u32,
        prev: u32,
        linked: bool,
    ) -> u32 {
        let Some(h) = &mut self.hops else {
            return observe::NO_HOP;
        };
        let k = h.len() as u32;
        h.push(observe::HopRec {
            id,
            attempt,
            at,
            node,
            prev: if linked { prev } else { observe::NO_HOP },
        });
        if linked {
            k
        } else {
            observe::NO_HOP
        }
    }

    /// Records a message whose tail is absorbed in cycle `absorbed`.
    #[inline]
    pub fn record(&mut self, h: &MsgHeader, absorbed: Cycle) {
        self.record_linked(h, absorbed, observe::NO_HOP);
    }

    /// [`record`](Self::record) of a message whose hops the engine linked, the last on
    /// its path being `last_hop` (see [`Delivery::last_hop`]).
    #[inline]
    pub fn record_linked(&mut self, h: &MsgHeader, absorbed: Cycle, last_hop: u32) {
        if let Some(d) = &mut self.deliveries {
            d.push(Delivery {
                header: *h,
                absorbed,
                last_hop,
            });
        }
        if let Some(s) = &mut self.series {
            s.delivered(h.created, h.injected, absorbed);
        }
        self.run_absorbed += 1;
        let (start, end) = self.window;
        if absorbed >= start && end.is_none_or(|e| absorbed < e) {
            self.window_absorbed += 1;
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
        if let Some(c) = &mut self.classes {
            c.delivered(h.class, lat, h.request_latency);
        }
    }
}

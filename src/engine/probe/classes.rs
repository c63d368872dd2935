//! What request/reply traffic (`workload.reply`) adds to a replication's per-message
//! measurements: the latency of each message class (requests, replies) and of the round
//! trip (request created → reply delivered), and the replies the network created, which
//! the engine counts with the messages its workload created (offered load, drain,
//! outstanding messages). Integers and histograms only, so partitions merge exactly.
//! The replies themselves are created by the switching mode (`switching::wormhole`).

use crate::engine::probe::histogram;
use crate::foundation::types::Cycle;
use hdrhistogram::Histogram;

/// A latency's histogram, count and sum (cycles).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Latency {
    /// The latencies.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub hist: Histogram<u64>,
    /// How many.
    pub count: u64,
    /// Their sum.
    pub sum: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            hist: histogram(),
            count: 0,
            sum: 0,
        }
    }
}

impl Latency {
    /// Adds one latency.
    #[inline]
    pub fn record(&mut self, cycles: u64) {
        // Auto-resizing histograms only fail on values beyond u64 range.
        let _ = self.hist.record(cycles);
        self.count += 1;
        self.sum += cycles;
    }

    /// Adds another partition's.
    pub fn merge(&mut self, o: &Latency) {
        let _ = self.hist.add(&o.hist);
        self.count += o.count;
        self.sum += o.sum;
    }

    /// The mean (None: none recorded).
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
}

/// Replies the network created: all of them, and those the engine's counts of the
/// workload's messages treat apart (measured; created inside the window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RepliesCreated {
    /// Replies created.
    pub messages: u64,
    /// Their flits.
    pub flits: u64,
    /// Replies of measured requests (measured themselves).
    pub measured: u64,
    /// Replies created inside the measurement window.
    pub window_messages: u64,
    /// Their flits.
    pub window_flits: u64,
}

/// Per-class measurements of request/reply traffic (measured messages only).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ClassStats {
    /// Requests: creation to tail absorbed.
    pub requests: Latency,
    /// Replies: creation (the request's tail absorbed) to tail absorbed.
    pub replies: Latency,
    /// Round trip: the request's creation to its reply's tail absorbed.
    pub round_trip: Latency,
    /// Replies created.
    pub created: RepliesCreated,
}

impl ClassStats {
    /// Adds another partition's.
    pub fn merge(&mut self, o: &ClassStats) {
        self.requests.merge(&o.requests);
        self.replies.merge(&o.replies);
        self.round_trip.merge(&o.round_trip);
        let (a, b) = (&mut self.created, &o.created);
        a.messages += b.messages;
        a.flits += b.flits;
        a.measured += b.measured;
        a.window_messages += b.window_messages;
        a.window_flits += b.window_flits;
    }

    /// A measured message of `class` (0 request, 1 reply) whose latency was `latency`;
    /// a reply's round trip adds its request's latency.
    #[inline]
    pub fn delivered(&mut self, class: u8, latency: Cycle, request_latency: u32) {
        if class == 0 {
            self.requests.record(latency);
        } else {
            self.replies.record(latency);
            self.round_trip.record(latency + request_latency as u64);
        }
    }

    /// A reply of `flits` flits was created (`measured`: its request was; `in_window`:
    /// created inside the measurement window).
    #[inline]
    pub fn reply_created(&mut self, flits: u32, measured: bool, in_window: bool) {
        let c = &mut self.created;
        c.messages += 1;
        c.flits += flits as u64;
        if measured {
            c.measured += 1;
        }
        if in_window {
            c.window_messages += 1;
            c.window_flits += flits as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_adds_its_request_latency_to_the_round_trip() {
        let mut c = ClassStats::default();
        c.delivered(0, 20, 0);
        c.delivered(1, 15, 20);
        assert_eq!(c.requests.mean(), Some(20.0));
        assert_eq!(c.replies.mean(), Some(15.0));
        assert_eq!(c.round_trip.mean(), Some(35.0));
    }

    #[test]
    fn partitions_merge_to_the_whole() {
        let (mut a, mut b, mut whole) = (
            ClassStats::default(),
            ClassStats::default(),
            ClassStats::default(),
        );
        for (i, s) in [(3u64, &mut a), (7, &mut b)] {
            s.delivered(1, i, 1);
            s.reply_created(4, true, i > 5);
            whole.delivered(1, i, 1);
            whole.reply_created(4, true, i > 5);
        }
        a.merge(&b);
        assert_eq!(a.created, whole.created);
        assert_eq!(a.round_trip.sum, whole.round_trip.sum);
        assert_eq!(a.round_trip.hist, whole.round_trip.hist);
        assert_eq!(a.created.window_flits, 4);
    }
}

//! What circuit switching measures while it runs: per-message phase times and aborts,
//! link requests and conflicts split by the phase of the communication holding the
//! link, link-cycles held per phase (for time averages), and the routing controllers'
//! waits. Integers and histograms only, so merging is exact and order-free.

use crate::engine::probe::histogram;
use crate::foundation::types::Cycle;
use hdrhistogram::Histogram;

/// Phase of a communication (paper 000's states, grouped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum Phase {
    /// Path set-up, including aborted attempts, their releases and back-offs.
    Setup = 0,
    /// The destination's ack travelling back.
    Ack = 1,
    /// Data streaming over the circuit.
    Data = 2,
    /// End-of-transmission releasing the path hop by hop.
    Release = 3,
}

/// Names of the phases, in index order.
pub const PHASES: [&str; 4] = ["setup", "ack", "data", "release"];

/// Hop indices counted one by one; requests for later hops share the last slot. A
/// fixed array keeps the counts allocation-free and merging exact.
pub const HOP_SLOTS: usize = 16;

/// Where a link request is on its path (item 6 of issue 14: requests do not meet busy
/// links with the time-average occupancy): its first link, a link of another port than
/// the one it came in on (a new dimension: every later hop of a hypercube's e-cube path,
/// the X→Y turn of a torus path), or the same port again (going on along a torus ring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HopKind {
    /// The path's first link.
    First = 0,
    /// Another port than the incoming link's.
    Turn = 1,
    /// The same port as the incoming link's (along a ring).
    Straight = 2,
}

/// Accumulated measurements of one replication.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CircuitStats {
    /// Set-up time per measured message (DMA engine taken → destination DMA taken).
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub setup: Histogram<u64>,
    /// Ack time.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub ack: Histogram<u64>,
    /// Data time.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub data: Histogram<u64>,
    /// Release time (data sent → last link released and tail absorbed).
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub release: Histogram<u64>,
    /// Waits of measured controller requests.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub ctrl_wait: Histogram<u64>,
    /// Measured messages completed.
    pub count: u64,
    /// Sums of the phase times, in [`Phase`] order.
    pub phase_sum: [u64; 4],
    /// Sum of aborts per measured message.
    pub aborts_sum: u64,
    /// Most aborts of one message.
    pub aborts_max: u64,
    /// Sum over measured messages of the cycles waited for busy links (hold).
    pub link_wait_sum: u64,
    /// Sum over measured messages of their controller queueing.
    pub ctrl_wait_msg_sum: u64,
    /// Link verifications inside the window.
    pub requests: u64,
    /// Of those, the ones that found the link held, by the holder's phase.
    pub conflicts: [u64; 4],
    /// Destination-DMA requests inside the window.
    pub dma_requests: u64,
    /// Of those, the ones that found every receiving engine busy.
    pub dma_conflicts: u64,
    /// Link-cycles held inside the window, by the holder's phase.
    pub held: [u64; 4],
    /// Hold requests that gave up waiting inside the window (`hold_timeout`).
    pub timeouts: u64,
    /// Link verifications inside the window by the hop index (0 = the path's first
    /// link; the last slot takes every later hop).
    pub hop_requests: [u64; HOP_SLOTS],
    /// Of those, the ones that found the link held.
    pub hop_conflicts: [u64; HOP_SLOTS],
    /// Link verifications by [`HopKind`].
    pub kind_requests: [u64; 3],
    /// Of those, the ones that found the link held.
    pub kind_conflicts: [u64; 3],
    /// Link verifications by attempts after at least one abort (drop, adaptive).
    pub retry_requests: u64,
    /// Of those, the ones that found the link held.
    pub retry_conflicts: u64,
}

impl Default for CircuitStats {
    fn default() -> Self {
        CircuitStats {
            setup: histogram(),
            ack: histogram(),
            data: histogram(),
            release: histogram(),
            ctrl_wait: histogram(),
            count: 0,
            phase_sum: [0; 4],
            aborts_sum: 0,
            aborts_max: 0,
            link_wait_sum: 0,
            ctrl_wait_msg_sum: 0,
            requests: 0,
            conflicts: [0; 4],
            dma_requests: 0,
            dma_conflicts: 0,
            held: [0; 4],
            timeouts: 0,
            hop_requests: [0; HOP_SLOTS],
            hop_conflicts: [0; HOP_SLOTS],
            kind_requests: [0; 3],
            kind_conflicts: [0; 3],
            retry_requests: 0,
            retry_conflicts: 0,
        }
    }
}

pub use crate::engine::probe::overlap;

impl CircuitStats {
    /// Adds another partition's measurements.
    pub fn merge(&mut self, o: &CircuitStats) {
        for (h, x) in [
            (&mut self.setup, &o.setup),
            (&mut self.ack, &o.ack),
            (&mut self.data, &o.data),
            (&mut self.release, &o.release),
            (&mut self.ctrl_wait, &o.ctrl_wait),
        ] {
            // Auto-resizing histograms only fail beyond u64 range.
            let _ = h.add(x);
        }
        self.count += o.count;
        for i in 0..4 {
            self.phase_sum[i] += o.phase_sum[i];
            self.conflicts[i] += o.conflicts[i];
            self.held[i] += o.held[i];
        }
        self.aborts_sum += o.aborts_sum;
        self.aborts_max = self.aborts_max.max(o.aborts_max);
        self.link_wait_sum += o.link_wait_sum;
        self.ctrl_wait_msg_sum += o.ctrl_wait_msg_sum;
        self.requests += o.requests;
        self.dma_requests += o.dma_requests;
        self.dma_conflicts += o.dma_conflicts;
        self.timeouts += o.timeouts;
        for i in 0..HOP_SLOTS {
            self.hop_requests[i] += o.hop_requests[i];
            self.hop_conflicts[i] += o.hop_conflicts[i];
        }
        for i in 0..3 {
            self.kind_requests[i] += o.kind_requests[i];
            self.kind_conflicts[i] += o.kind_conflicts[i];
        }
        self.retry_requests += o.retry_requests;
        self.retry_conflicts += o.retry_conflicts;
    }

    /// Counts a measured link verification: hop index `hop` (0-based), its kind, whether
    /// its attempt is a retry, and whether it found the link held.
    pub fn request(&mut self, hop: usize, kind: HopKind, retry: bool, conflict: bool) {
        let h = hop.min(HOP_SLOTS - 1);
        let c = conflict as u64;
        self.requests += 1;
        self.hop_requests[h] += 1;
        self.hop_conflicts[h] += c;
        self.kind_requests[kind as usize] += 1;
        self.kind_conflicts[kind as usize] += c;
        if retry {
            self.retry_requests += 1;
            self.retry_conflicts += c;
        }
    }

    /// Records a measured message's phase times (in [`Phase`] order), aborts and waits.
    pub fn record(&mut self, phases: [Cycle; 4], aborts: u32, link_wait: u64, ctrl_wait: u64) {
        for (h, &v) in [
            &mut self.setup,
            &mut self.ack,
            &mut self.data,
            &mut self.release,
        ]
        .into_iter()
        .zip(&phases)
        {
            // Auto-resizing histograms only fail beyond u64 range.
            let _ = h.record(v);
        }
        for (s, v) in self.phase_sum.iter_mut().zip(phases) {
            *s += v;
        }
        self.count += 1;
        self.aborts_sum += aborts as u64;
        self.aborts_max = self.aborts_max.max(aborts as u64);
        self.link_wait_sum += link_wait;
        self.ctrl_wait_msg_sum += ctrl_wait;
    }
}

//! What deflection switching counts while it runs: originating attempts and blocks,
//! segments accepted, preempted and dropped, transit decisions at preference and
//! don't-care nodes, path lengths, completed messages, and time-weighted occupancies of
//! the links' lanes (for the model's node-state probabilities). Integers only, so merging
//! partitions is exact and order-free. Most counts are taken inside the measurement
//! window (by the cycle of the decision); the `*_total` identities cover the whole run.

use crate::foundation::types::Cycle;

/// Longest path length kept in its own bucket of the histogram; longer ones share the last.
pub const MAX_PATH_BUCKET: usize = 255;

/// Accumulated measurements of one replication (one partition's share).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct DeflectionStats {
    /// Originating attempts (new messages and retries) decided in the window.
    pub attempts: u64,
    /// Of those, the ones blocked (no free lane on the preferred link).
    pub blocked: u64,
    /// Attempts that were a message's very first (a new worm, in the paper's words).
    pub new_attempts: u64,
    /// Of those, the ones blocked.
    pub new_blocked: u64,
    /// Segments (accepted attempts) started in the window.
    pub accepted: u64,
    /// Segments preempted by a transit worm in the window.
    pub preempted: u64,
    /// Of those, preempted by their own header coming back through their source.
    pub self_preempted: u64,
    /// Transit headers routed at preference nodes in the window.
    pub pref_arrivals: u64,
    /// Of those, the ones that did not get their preferred (shortest-path) link.
    pub pref_failed: u64,
    /// Of those, the ones whose preferred link was held (among others) by their own
    /// segment: a header that came back to a link its own body still holds.
    pub pref_self_blocked: u64,
    /// Of the deflections at preference nodes, those at the node where the same header
    /// was deflected last: it came back and found its preferred link still full.
    pub pref_repeat: u64,
    /// Transit headers routed at don't-care nodes in the window.
    pub dc_arrivals: u64,
    /// Of those, the ones that did not get the output they drew (they leave on the
    /// other output, which is also on a shortest path).
    pub dc_failed: u64,
    /// Segments whose header reached the destination in the window.
    pub arrived: u64,
    /// Sum of their hops.
    pub arrived_hops: u64,
    /// Their hops as a histogram (index = hops, the last bucket holds longer paths).
    pub path_hist: Vec<u64>,
    /// Segments dropped by the hop limit in the window.
    pub dropped: u64,
    /// Flits of segments dropped in the window (counted when their end passes the drop node).
    pub dropped_flits: u64,
    /// Lane-cycles those dropped segments held (flits × links up to the drop).
    pub dropped_lane_cycles: u64,
    /// Messages completed in the window (every flit in).
    pub completed: u64,
    /// Measured messages delivered: sum of their segments and of their hops.
    pub msg_segments: u64,
    /// See `msg_segments`.
    pub msg_hops: u64,
    /// Measured messages delivered (the denominator of the two above).
    pub msg_count: u64,
    /// Messages created at a node whose memory was full (`max_pending`) in the window.
    pub rejected: u64,
    /// Lane-cycles busy inside the window (every output lane).
    pub lane_busy: u64,
    /// Cycles, inside the window, that an output link spent with j busy lanes (index j),
    /// summed over the links.
    pub out_occupancy: Vec<u64>,
    /// The same for the input links' lanes (a lane is busy from the header's arrival to
    /// its segment's end).
    pub in_occupancy: Vec<u64>,
    /// Whole run: lane-cycles held by every segment that ended (Little's law check).
    pub lane_cycles_total: u64,
    /// Whole run: Σ over segments that ended of flits × links taken.
    pub flit_hops_total: u64,
}

impl DeflectionStats {
    /// Empty counters for links with `lanes` lanes.
    pub fn new(lanes: usize) -> Self {
        DeflectionStats {
            path_hist: vec![0; MAX_PATH_BUCKET + 1],
            out_occupancy: vec![0; lanes + 1],
            in_occupancy: vec![0; lanes + 1],
            ..DeflectionStats::default()
        }
    }

    /// Adds another partition's counts.
    pub fn merge(&mut self, o: &DeflectionStats) {
        let add = |a: &mut Vec<u64>, b: &Vec<u64>| {
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        };
        add(&mut self.path_hist, &o.path_hist);
        add(&mut self.out_occupancy, &o.out_occupancy);
        add(&mut self.in_occupancy, &o.in_occupancy);
        self.attempts += o.attempts;
        self.blocked += o.blocked;
        self.new_attempts += o.new_attempts;
        self.new_blocked += o.new_blocked;
        self.accepted += o.accepted;
        self.preempted += o.preempted;
        self.self_preempted += o.self_preempted;
        self.pref_arrivals += o.pref_arrivals;
        self.pref_failed += o.pref_failed;
        self.pref_self_blocked += o.pref_self_blocked;
        self.pref_repeat += o.pref_repeat;
        self.dc_arrivals += o.dc_arrivals;
        self.dc_failed += o.dc_failed;
        self.arrived += o.arrived;
        self.arrived_hops += o.arrived_hops;
        self.dropped += o.dropped;
        self.dropped_flits += o.dropped_flits;
        self.dropped_lane_cycles += o.dropped_lane_cycles;
        self.completed += o.completed;
        self.msg_segments += o.msg_segments;
        self.msg_hops += o.msg_hops;
        self.msg_count += o.msg_count;
        self.rejected += o.rejected;
        self.lane_busy += o.lane_busy;
        self.lane_cycles_total += o.lane_cycles_total;
        self.flit_hops_total += o.flit_hops_total;
    }
}

/// A link's count of busy lanes and the time-weighted histogram it feeds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Level {
    /// Busy lanes now.
    pub busy: u32,
    /// Since when (the last change).
    pub since: Cycle,
}

//! What timeout wormhole switching counts while it runs: per link class (hs, ss, sh) the
//! headers that asked for a link, those that found it free, waited for it or timed out,
//! their waits and the links' holding times (three moments each, for the model's
//! M/G/1-with-reneging comparison); per host the tries, their service times on the host
//! link and the worms' waits in the host queue; the inter-arrival and waiting-time
//! histograms of one switch-to-switch link (paper 002 Figs. 2–3). Integers only, so
//! partitions merge exactly. Counts are taken inside the measurement window by the cycle
//! of the event.

use crate::stats::histogram;
use hdrhistogram::Histogram;

/// Sums of x, x², x³ and the count: three raw moments, exactly mergeable.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments3 {
    /// Observations.
    pub n: u64,
    /// Σ x.
    pub s1: u128,
    /// Σ x².
    pub s2: u128,
    /// Σ x³.
    pub s3: u128,
}

impl Moments3 {
    /// Adds an observation.
    #[inline]
    pub fn add(&mut self, x: u64) {
        let x = x as u128;
        self.n += 1;
        self.s1 += x;
        self.s2 += x * x;
        self.s3 += x * x * x;
    }

    /// Adds another set.
    pub fn merge(&mut self, o: &Moments3) {
        self.n += o.n;
        self.s1 += o.s1;
        self.s2 += o.s2;
        self.s3 += o.s3;
    }

    /// The k-th raw moment (k = 1, 2, 3), if there is an observation.
    pub fn raw(&self, k: u32) -> Option<f64> {
        (self.n > 0).then(|| {
            let s = match k {
                1 => self.s1,
                2 => self.s2,
                _ => self.s3,
            };
            s as f64 / self.n as f64
        })
    }
}

/// Counts of one class of links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassStats {
    /// Headers that asked for a link of the class (became ready for it).
    pub requests: u64,
    /// Of those, the ones granted in the cycle they asked (the link was free).
    pub found_free: u64,
    /// Of those, the ones that timed out waiting.
    pub timeouts: u64,
    /// Waits of the headers granted (no timeout), cycles.
    pub wait: Moments3,
    /// Holding times of the links (grab → tail sent, or → reset), cycles.
    pub holding: Moments3,
    /// Cycles the links of the class were held inside the window.
    pub busy: u64,
    /// Links of the class (directed).
    pub links: u64,
}

impl ClassStats {
    fn merge(&mut self, o: &ClassStats) {
        self.requests += o.requests;
        self.found_free += o.found_free;
        self.timeouts += o.timeouts;
        self.wait.merge(&o.wait);
        self.holding.merge(&o.holding);
        self.busy += o.busy;
        self.links += o.links;
    }
}

/// Accumulated measurements of one replication (one partition's share).
#[derive(Clone, Debug)]
pub struct TimeoutStats {
    /// By link class: hs, ss, sh.
    pub class: [ClassStats; 3],
    /// Worms created at hosts inside the window (first entry into the host queue).
    pub arrivals: u64,
    /// Tries started inside the window.
    pub tries: u64,
    /// Of those, the ones reset (counted when the reset reaches the source).
    pub tries_failed: u64,
    /// Service of a try: cycles the host link was held (grab → tail sent or reset).
    pub try_service: Moments3,
    /// Delivered measured worms: tries each.
    pub worm_tries: Moments3,
    /// Delivered measured worms: cycles waited in the host queue, all visits together.
    pub worm_host_wait: Moments3,
    /// Delivered measured worms: Σ of their tries' service.
    pub worm_service: Moments3,
    /// Flits sent by hosts in the window.
    pub flits_sent: u64,
    /// Flits sent by hosts in tries that were later reset.
    pub wasted_flits: u64,
    /// Flits discarded at switches (timed out, reset, or arriving for a reset worm).
    pub discarded_flits: u64,
    /// Resets started (timeouts at switches), whole run.
    pub resets: u64,
    /// Head inter-arrival times at the watched switch-to-switch link (paper 002 Fig. 2).
    pub watch_interarrival: Histogram<u64>,
    /// Waits (no timeout) at the watched link (Fig. 3).
    pub watch_wait: Histogram<u64>,
    /// Timeouts at the watched link, and requests there.
    pub watch_timeouts: u64,
    /// See `watch_timeouts`.
    pub watch_requests: u64,
}

impl Default for TimeoutStats {
    fn default() -> Self {
        TimeoutStats {
            class: Default::default(),
            arrivals: 0,
            tries: 0,
            tries_failed: 0,
            try_service: Moments3::default(),
            worm_tries: Moments3::default(),
            worm_host_wait: Moments3::default(),
            worm_service: Moments3::default(),
            flits_sent: 0,
            wasted_flits: 0,
            discarded_flits: 0,
            resets: 0,
            watch_interarrival: histogram(),
            watch_wait: histogram(),
            watch_timeouts: 0,
            watch_requests: 0,
        }
    }
}

impl TimeoutStats {
    /// Adds another partition's counts.
    pub fn merge(&mut self, o: &TimeoutStats) {
        for (a, b) in self.class.iter_mut().zip(&o.class) {
            a.merge(b);
        }
        self.arrivals += o.arrivals;
        self.tries += o.tries;
        self.tries_failed += o.tries_failed;
        self.try_service.merge(&o.try_service);
        self.worm_tries.merge(&o.worm_tries);
        self.worm_host_wait.merge(&o.worm_host_wait);
        self.worm_service.merge(&o.worm_service);
        self.flits_sent += o.flits_sent;
        self.wasted_flits += o.wasted_flits;
        self.discarded_flits += o.discarded_flits;
        self.resets += o.resets;
        let _ = self.watch_interarrival.add(&o.watch_interarrival);
        let _ = self.watch_wait.add(&o.watch_wait);
        self.watch_timeouts += o.watch_timeouts;
        self.watch_requests += o.watch_requests;
    }
}

//! What timeout wormhole switching counts while it runs: per directed link the headers
//! that asked for it, found it free or timed out waiting, their waits and the link's
//! holding times (three moments each, for the model's M/G/1-with-reneging comparison);
//! pooled by link class (hs, ss, sh) the head inter-arrival and waiting-time
//! distributions, and the same for one watched link (paper 002 Figs. 2–3); per host the
//! tries, their service on the host link, and the delivered worms' tries, host-queue
//! waits and network times. Integers and histograms only, so partitions merge exactly.
//! Counts are taken inside the measurement window, by the cycle of the event.

use crate::engine::probe::histogram;
use crate::topology::hosts::LinkClass;
use hdrhistogram::Histogram;

/// Sums of x, x², x³ and the count: three raw moments, exactly mergeable.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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
        // Saturates only past 2^42 cycles, far beyond any run's window.
        self.s3 = self.s3.saturating_add(x.saturating_mul(x * x));
    }

    /// Adds another set.
    pub fn merge(&mut self, o: &Moments3) {
        self.n += o.n;
        self.s1 += o.s1;
        self.s2 += o.s2;
        self.s3 = self.s3.saturating_add(o.s3);
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

    /// The first three raw moments.
    pub fn raws(&self) -> [Option<f64>; 3] {
        [1, 2, 3].map(|k| self.raw(k))
    }
}

/// States of a link's occupancy told apart: 0 to OCCUPANCY − 2 worms holding or waiting
/// for it, and OCCUPANCY − 1 or more.
pub const OCCUPANCY: usize = 8;

/// Counts of one directed link (the output of a node's port).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkCounters {
    /// Headers that asked for the link (a host: tries it started).
    pub requests: u64,
    /// Of those, the ones granted in the cycle they asked (the link was free).
    pub found_free: u64,
    /// Of those, the ones that timed out waiting.
    pub timeouts: u64,
    /// Waits of the headers granted (no timeout), cycles.
    pub wait: Moments3,
    /// Holding times (grab → free again: tail sent, tail's credit back, or reset).
    pub holding: Moments3,
    /// Cycles the link was held inside the window.
    pub busy: u64,
    /// Cycles spent with n worms holding or waiting for the link (n = 0, 1, …, the last
    /// entry for OCCUPANCY − 1 or more).
    pub time_in: [u64; OCCUPANCY],
    /// Headers that asked for it when it had n worms.
    pub arrivals_in: [u64; OCCUPANCY],
}

impl LinkCounters {
    /// Adds another link's (or partition's) counts.
    pub fn merge(&mut self, o: &LinkCounters) {
        self.requests += o.requests;
        self.found_free += o.found_free;
        self.timeouts += o.timeouts;
        self.wait.merge(&o.wait);
        self.holding.merge(&o.holding);
        self.busy += o.busy;
        for n in 0..OCCUPANCY {
            self.time_in[n] += o.time_in[n];
            self.arrivals_in[n] += o.arrivals_in[n];
        }
    }
}

/// Head inter-arrival times and waits (no timeout), cycles.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Distributions {
    /// Cycles between two headers asking for the same link.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub interarrival: Histogram<u64>,
    /// Waits of the headers granted the link.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub wait: Histogram<u64>,
}

impl Default for Distributions {
    fn default() -> Self {
        Distributions {
            interarrival: histogram(),
            wait: histogram(),
        }
    }
}

impl Distributions {
    fn merge(&mut self, o: &Distributions) {
        // Histograms of the same bounds never fail to add.
        let _ = self.interarrival.add(&o.interarrival);
        let _ = self.wait.add(&o.wait);
    }
}

/// Accumulated measurements of one replication (one partition's share).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TimeoutStats {
    /// Per directed link this partition owns: (global port index, class, counts).
    pub links: Vec<(u32, LinkClass, LinkCounters)>,
    /// Distributions pooled over the links of each class: hs, ss, sh.
    pub class_dist: [Distributions; 3],
    /// The watched link's distributions (only in the partition that owns it).
    pub watch: Option<(u32, Distributions)>,
    /// Worms created at hosts inside the window.
    pub arrivals: u64,
    /// Tries started inside the window: first tries, retries.
    pub tries: [u64; 2],
    /// Of those, the ones reset (counted when the reset reaches the source; by the try's
    /// own number, so a retry reset after the window's end still pairs with its start
    /// most of the time).
    pub tries_failed: [u64; 2],
    /// Service of a try: cycles the host link was held (grab → tail sent or reset).
    pub try_service: Moments3,
    /// Delivered measured worms: tries each.
    pub worm_tries: Moments3,
    /// Their distribution.
    #[serde(with = "crate::engine::probe::hist_serde")]
    pub worm_tries_hist: Histogram<u64>,
    /// Delivered measured worms: cycles waited in the host queue, all visits together.
    pub worm_host_wait: Moments3,
    /// Delivered measured worms: latency minus host-queue wait (tries on the network,
    /// resets coming back, retry delays, the last try's propagation).
    pub worm_network: Moments3,
    /// Flits sent by hosts in the window.
    pub flits_sent: u64,
    /// Flits sent by hosts in tries that were later reset.
    pub wasted_flits: u64,
    /// Flits discarded at switches (timed out, reset, or arriving for a reset worm).
    pub discarded_flits: u64,
    /// Resets started (timeouts at switches), whole run.
    pub resets: u64,
}

impl Default for TimeoutStats {
    fn default() -> Self {
        TimeoutStats {
            links: Vec::new(),
            class_dist: Default::default(),
            watch: None,
            arrivals: 0,
            tries: [0; 2],
            tries_failed: [0; 2],
            try_service: Moments3::default(),
            worm_tries: Moments3::default(),
            worm_tries_hist: histogram(),
            worm_host_wait: Moments3::default(),
            worm_network: Moments3::default(),
            flits_sent: 0,
            wasted_flits: 0,
            discarded_flits: 0,
            resets: 0,
        }
    }
}

impl TimeoutStats {
    /// Adds another partition's counts (its links are appended: every link is owned by
    /// one partition).
    pub fn merge(&mut self, o: &TimeoutStats) {
        self.links.extend_from_slice(&o.links);
        self.links.sort_unstable_by_key(|l| l.0);
        for (a, b) in self.class_dist.iter_mut().zip(&o.class_dist) {
            a.merge(b);
        }
        match (&mut self.watch, &o.watch) {
            (Some((_, a)), Some((_, b))) => a.merge(b),
            (None, Some(w)) => self.watch = Some(w.clone()),
            _ => {}
        }
        self.arrivals += o.arrivals;
        for k in 0..2 {
            self.tries[k] += o.tries[k];
            self.tries_failed[k] += o.tries_failed[k];
        }
        self.try_service.merge(&o.try_service);
        self.worm_tries.merge(&o.worm_tries);
        let _ = self.worm_tries_hist.add(&o.worm_tries_hist);
        self.worm_host_wait.merge(&o.worm_host_wait);
        self.worm_network.merge(&o.worm_network);
        self.flits_sent += o.flits_sent;
        self.wasted_flits += o.wasted_flits;
        self.discarded_flits += o.discarded_flits;
        self.resets += o.resets;
    }

    /// The links' counts summed by class: hs, ss, sh.
    pub fn by_class(&self) -> [(u64, LinkCounters); 3] {
        let mut c = [(0, LinkCounters::default()); 3];
        for (_, class, l) in &self.links {
            let x = &mut c[*class as usize];
            x.0 += 1;
            x.1.merge(l);
        }
        c
    }
}

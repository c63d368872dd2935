//! The routing controller of every node: `servers` identical servers fed by one FIFO
//! queue of requests (paper 000 Appendix A models it as an M/G/1 queue). Each request has
//! a deterministic service time chosen by the caller (route a header, verify a link, …).
//! A request that starts service in cycle s with service time S occupies its server in
//! cycles s..s+S−1 and its result is usable in cycle s+S−1 (so a 1-cycle controller and
//! zero-cycle allocation stages make a one-cycle-per-hop router).
//!
//! The controller measures itself: arrivals, waits and the first two moments of service
//! time per node, for requests that arrived inside the measurement window, so its mean
//! wait can be held against the Pollaczek–Khinchine prediction. Because P-K rests on
//! Poisson arrivals seeing time averages (PASTA), it also records, for every arrival,
//! whether it found every server busy and with which class of request (the switching
//! mode names the classes, see [`ClassStats`]): the fraction of arrivals that find the
//! server busy is ρ when PASTA holds, and more when arrivals follow departures.
//! Per node only what the corrected prediction needs is kept ([`CtrlStats`]); the
//! class-by-class breakdown is summed over the partition's nodes ([`ClassStats`]), so
//! memory does not grow with classes × nodes.

use crate::foundation::types::Cycle;

/// A request waiting for the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Zeroable)]
pub struct CtrlRequest {
    /// Input port of the VC that asks.
    pub port: u8,
    /// Its VC.
    pub vc: u8,
    /// Which activity (switching-mode specific; 0 = route a wormhole header).
    pub kind: u8,
    /// Switching-mode specific handle (circuit switching: the circuit).
    pub tag: u32,
    /// Cycle the request joined the queue.
    pub arrived: Cycle,
}

/// Arrival classes a switching mode may give its requests (class numbers below this).
pub const CLASSES: usize = 9;

/// Flag or-ed into a class number by [`Controllers::push_class`]: the request is
/// *chained*, i.e. it follows another request to this controller by a fixed lag (circuit
/// hold: a set-up that inherited its link arrives one D_link_conn behind the release of
/// the link's previous holder). The corrected wait prediction treats these apart.
pub const CHAINED: u8 = 0x80;

/// What an arrival found, kept with the request until it is counted: 0 a free server and
/// an empty queue; 1 + k every server busy, the lowest-indexed one with class k;
/// `FOUND_QUEUE` a free server but a request ahead (arrived earlier in the same cycle).
const FOUND_FREE: u8 = 0;
const FOUND_QUEUE: u8 = CLASSES as u8 + 1;

/// Measurements of one node's controller (requests that arrived in the window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CtrlStats {
    /// Requests.
    pub arrivals: u64,
    /// Sum of waits (queueing only, not service).
    pub wait_sum: u64,
    /// Sum of service times.
    pub service_sum: u64,
    /// Sum of squared service times.
    pub service_sq_sum: u64,
    /// Requests that found every server busy on arrival (ρ of them under PASTA).
    pub busy_arrivals: u64,
    /// Chained requests (see [`CHAINED`]).
    pub chained_arrivals: u64,
    /// Sum of the chained requests' service times.
    pub chained_service_sum: u64,
}

/// Arrivals by class, summed over a partition's nodes (the switching mode names the
/// classes; wormhole headers are all class 0). Counts of requests that arrived in the
/// window, like [`CtrlStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClassStats {
    /// Requests of each class.
    pub arrivals: [u64; CLASSES],
    /// Of those, the ones that found every server busy.
    pub busy: [u64; CLASSES],
    /// Of those, the ones that found a free server but a request ahead of them (arrived
    /// earlier in the same cycle).
    pub queued: [u64; CLASSES],
    /// Sum of their waits.
    pub wait_sum: [u64; CLASSES],
    /// Sum of their service times.
    pub service_sum: [u64; CLASSES],
    /// `busy_with[a][k]`: arrivals of class a that found the server (the lowest-indexed
    /// one when there are several) serving a request of class k.
    pub busy_with: [[u64; CLASSES]; CLASSES],
}

impl ClassStats {
    /// Adds another partition's (or replication's) counts.
    pub fn add(&mut self, o: &ClassStats) {
        for a in 0..CLASSES {
            self.arrivals[a] += o.arrivals[a];
            self.busy[a] += o.busy[a];
            self.queued[a] += o.queued[a];
            self.wait_sum[a] += o.wait_sum[a];
            self.service_sum[a] += o.service_sum[a];
            for k in 0..CLASSES {
                self.busy_with[a][k] += o.busy_with[a][k];
            }
        }
    }
}

/// The routing controllers of a partition.
#[derive(Clone, Debug)]
pub struct Controllers {
    cap: usize,
    queue: Vec<CtrlRequest>,
    /// Per queue slot: the request's class byte (class | [`CHAINED`]) and what it found.
    slot_class: Vec<u8>,
    slot_found: Vec<u8>,
    head: Vec<u32>,
    len: Vec<u32>,
    servers: usize,
    free_at: Vec<Cycle>,
    /// Per server: the class byte and the arrival finding of the request it serves.
    srv_class: Vec<u8>,
    srv_found: Vec<u8>,
    /// Per-node measurements.
    pub stats: Vec<CtrlStats>,
    /// Arrivals by class, over the partition's nodes.
    pub classes: ClassStats,
}

impl Controllers {
    /// Controllers for `nodes` nodes, each with `servers` servers and room for `cap`
    /// queued requests (every requester has at most one request outstanding); an error
    /// when the memory cannot be had.
    pub fn new(nodes: usize, servers: usize, cap: usize) -> crate::foundation::error::Result<Self> {
        use crate::foundation::limits::{filled_table, zeroed_table};
        Ok(Controllers {
            cap,
            // Zeroed, so that queue space nobody uses is never mapped.
            queue: zeroed_table(nodes.checked_mul(cap), "controller queue")?,
            slot_class: zeroed_table(nodes.checked_mul(cap), "controller queue class")?,
            slot_found: zeroed_table(nodes.checked_mul(cap), "controller queue lookup")?,
            head: zeroed_table(Some(nodes), "controller queue head")?,
            len: zeroed_table(Some(nodes), "controller queue length")?,
            servers,
            free_at: zeroed_table(nodes.checked_mul(servers), "controller server")?,
            srv_class: zeroed_table(nodes.checked_mul(servers), "controller server class")?,
            srv_found: zeroed_table(nodes.checked_mul(servers), "controller server lookup")?,
            stats: filled_table(Some(nodes), CtrlStats::default(), "controller statistics")?,
            classes: ClassStats::default(),
        })
    }

    /// Servers per node.
    pub fn servers(&self) -> usize {
        self.servers
    }

    /// Appends a request (class 0) to `node`'s queue.
    #[inline]
    pub fn push(&mut self, node: usize, req: CtrlRequest) {
        self.push_class(node, req, 0);
    }

    /// Appends a request of arrival class `class` (below [`CLASSES`], or-ed with
    /// [`CHAINED`] when it is chained) to `node`'s queue; `req.arrived` is the cycle.
    /// Notes what the request found, to be counted when its service is recorded.
    #[inline]
    pub fn push_class(&mut self, node: usize, req: CtrlRequest, class: u8) {
        debug_assert!(((class & !CHAINED) as usize) < CLASSES);
        let len = self.len[node] as usize;
        assert!(
            len < self.cap,
            "controller queue overflow: more requesters than sized for"
        );
        let servers = node * self.servers..(node + 1) * self.servers;
        // A server whose activity ends in this cycle is free only from the next one.
        let found = if self.free_at[servers.clone()]
            .iter()
            .all(|&f| f > req.arrived)
        {
            1 + (self.srv_class[servers.start] & !CHAINED)
        } else if len > 0 {
            FOUND_QUEUE
        } else {
            FOUND_FREE
        };
        let slot = node * self.cap + (self.head[node] as usize + len) % self.cap;
        self.queue[slot] = req;
        self.slot_class[slot] = class;
        self.slot_found[slot] = found;
        self.len[node] += 1;
    }

    /// Pops the head of `node`'s queue onto server `server` (global server index).
    #[inline]
    fn pop_to(&mut self, node: usize, server: usize) -> CtrlRequest {
        let slot = node * self.cap + self.head[node] as usize;
        self.head[node] = ((self.head[node] as usize + 1) % self.cap) as u32;
        self.len[node] -= 1;
        self.srv_class[server] = self.slot_class[slot];
        self.srv_found[server] = self.slot_found[slot];
        self.queue[slot]
    }

    /// Counts a measured request of `node` served by global server `server`.
    #[inline]
    fn record(&mut self, node: usize, server: usize, wait: Cycle, s: Cycle) {
        let (class, found) = (self.srv_class[server], self.srv_found[server]);
        let a = (class & !CHAINED) as usize;
        let st = &mut self.stats[node];
        st.arrivals += 1;
        st.wait_sum += wait;
        st.service_sum += s;
        st.service_sq_sum += s * s;
        let busy = found != FOUND_FREE && found != FOUND_QUEUE;
        st.busy_arrivals += busy as u64;
        if class & CHAINED != 0 {
            st.chained_arrivals += 1;
            st.chained_service_sum += s;
        }
        let c = &mut self.classes;
        c.arrivals[a] += 1;
        c.wait_sum[a] += wait;
        c.service_sum[a] += s;
        if busy {
            c.busy[a] += 1;
            c.busy_with[a][found as usize - 1] += 1;
        } else if found == FOUND_QUEUE {
            c.queued[a] += 1;
        }
    }

    /// Requests waiting at `node`.
    #[inline]
    pub fn queued(&self, node: usize) -> usize {
        self.len[node] as usize
    }

    /// The request at the head of `node`'s queue.
    #[inline]
    pub fn front(&self, node: usize) -> Option<CtrlRequest> {
        (self.len[node] > 0).then(|| self.queue[node * self.cap + self.head[node] as usize])
    }

    /// If a server of `node` is free in cycle `t` and a request waits, starts serving it
    /// for `service` cycles and returns it with the cycle its result is ready.
    /// `measured` says whether the request's arrival counts for the statistics.
    #[inline]
    pub fn start(
        &mut self,
        node: usize,
        t: Cycle,
        service: impl Fn(&CtrlRequest) -> Cycle,
        measured: impl Fn(Cycle) -> bool,
    ) -> Option<(CtrlRequest, Cycle)> {
        if self.len[node] == 0 {
            return None;
        }
        let servers = &self.free_at[node * self.servers..(node + 1) * self.servers];
        let server = node * self.servers + servers.iter().position(|&f| f <= t)?;
        let req = self.pop_to(node, server);
        let s = service(&req).max(1);
        self.free_at[server] = t + s;
        if measured(req.arrived) {
            self.record(node, server, t - req.arrived, s);
        }
        Some((req, t + s - 1))
    }
}

/// Circuit switching's use of the controller: an activity's length is only known as it
/// unfolds (verify, then connect if the link is free; adaptive verifies candidate after
/// candidate), so a server is taken with [`Controllers::take`] and handed back with
/// [`Controllers::finish`], which records the whole activity as one service.
impl Controllers {
    /// If a server of `node` is free in cycle `t` and a request waits, gives the request
    /// the server (busy until [`Controllers::finish`]) and returns it with the server's
    /// index.
    #[inline]
    pub fn take(&mut self, node: usize, t: Cycle) -> Option<(CtrlRequest, usize)> {
        if self.len[node] == 0 {
            return None;
        }
        let servers = &self.free_at[node * self.servers..(node + 1) * self.servers];
        let server = servers.iter().position(|&f| f <= t)?;
        let g = node * self.servers + server;
        self.free_at[g] = Cycle::MAX;
        let req = self.pop_to(node, g);
        Some((req, server))
    }

    /// Ends the activity on `server` of `node`: the server is free again from cycle
    /// `free_from`. The request arrived in `arrived` and started in `started`; when
    /// `measured`, its wait and service (`free_from − started`) enter the statistics.
    /// Returns (wait, service).
    #[inline]
    pub fn finish(
        &mut self,
        node: usize,
        server: usize,
        free_from: Cycle,
        arrived: Cycle,
        started: Cycle,
        measured: bool,
    ) -> (Cycle, Cycle) {
        let g = node * self.servers + server;
        self.free_at[g] = free_from;
        let (wait, s) = (started - arrived, free_from - started);
        if measured {
            self.record(node, g, wait, s);
        }
        (wait, s)
    }

    /// Whether a server of `node` is free in cycle `t`.
    #[inline]
    pub fn has_free_server(&self, node: usize, t: Cycle) -> bool {
        self.free_at[node * self.servers..(node + 1) * self.servers]
            .iter()
            .any(|&f| f <= t)
    }
}

/// Pollaczek–Khinchine mean wait of a single-server queue from its arrival rate,
/// utilisation and measured second moment of service (None when saturated).
pub fn pk_wait(lambda: f64, rho: f64, m2: f64) -> Option<f64> {
    if lambda <= 0.0 {
        return Some(0.0);
    }
    let s = crate::foundation::mg1::Moments {
        mean: rho / lambda,
        second: m2,
    };
    crate::foundation::mg1::pk_wait(lambda, s).ok()
}

/// The coefficient K of [`crate::foundation::mg1::chained_wait`] for one node's controller
/// measured over a window of `w` cycles: the node's corrected wait is its P-K wait + δ·K
/// (0 when nothing arrived or the node saturated, where P-K has no value either).
pub fn chained_coef(st: &CtrlStats, w: f64) -> f64 {
    if st.arrivals == 0 || st.chained_arrivals == 0 {
        return 0.0;
    }
    let f = st.chained_arrivals as f64 / st.arrivals as f64;
    let lambda = st.arrivals as f64 / w;
    let rho = st.service_sum as f64 / w;
    let s_chained = st.chained_service_sum as f64 / st.chained_arrivals as f64;
    crate::foundation::mg1::chained_coefficient(lambda, rho, f, s_chained).unwrap_or(0.0)
}

/// The extra wait δ of a chained controller request behind its leader (see
/// [`crate::foundation::mg1::chained_wait`]): under circuit switching the set-up that inherits
/// a link arrives D_link_conn after the release it follows and waits for its D_release,
/// so δ = D_release − D_link_conn (at least 0); no other mode chains requests.
pub fn chain_delta(cfg: &crate::config::HwConfig) -> f64 {
    match cfg.switching {
        crate::config::SwitchingConfig::Circuit { .. } => {
            let c = &cfg.router.controller;
            c.release.saturating_sub(c.link_conn) as f64
        }
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_serves_in_fifo_order_and_measures_waits() {
        let mut c = Controllers::new(1, 1, 4).unwrap();
        for (port, t) in [(0, 0), (1, 0), (2, 1)] {
            c.push(
                0,
                CtrlRequest {
                    port,
                    vc: 0,
                    kind: 0,
                    tag: 0,
                    arrived: t,
                },
            );
        }
        let mut order = Vec::new();
        for t in 0..10 {
            while let Some((r, done)) = c.start(0, t, |_| 2, |_| true) {
                order.push((r.port, t, done));
            }
        }
        assert_eq!(order, vec![(0, 0, 1), (1, 2, 3), (2, 4, 5)]);
        assert_eq!(c.stats[0].arrivals, 3);
        assert_eq!(c.stats[0].wait_sum, 2 + 3);
        assert_eq!(c.stats[0].service_sq_sum, 12);
    }

    #[test]
    fn two_servers_start_two_requests_in_one_cycle() {
        let mut c = Controllers::new(1, 2, 4).unwrap();
        c.push(
            0,
            CtrlRequest {
                port: 0,
                vc: 0,
                kind: 0,
                tag: 0,
                arrived: 0,
            },
        );
        c.push(
            0,
            CtrlRequest {
                port: 1,
                vc: 0,
                kind: 0,
                tag: 0,
                arrived: 0,
            },
        );
        assert!(c.start(0, 0, |_| 3, |_| true).is_some());
        assert!(c.start(0, 0, |_| 3, |_| true).is_some());
        assert_eq!(c.queued(0), 0);
    }
}

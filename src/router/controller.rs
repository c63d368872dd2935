//! The routing controller of every node: `servers` identical servers fed by one FIFO
//! queue of requests (paper 000 Appendix A models it as an M/G/1 queue). Each request has
//! a deterministic service time chosen by the caller (route a header, verify a link, …).
//! A request that starts service in cycle s with service time S occupies its server in
//! cycles s..s+S−1 and its result is usable in cycle s+S−1 (so a 1-cycle controller and
//! zero-cycle allocation stages make a one-cycle-per-hop router).
//!
//! The controller measures itself: arrivals, waits and the first two moments of service
//! time per node, for requests that arrived inside the measurement window, so its mean
//! wait can be held against the Pollaczek–Khinchine prediction.

use crate::types::Cycle;

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

/// Measurements of one node's controller (requests that arrived in the window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtrlStats {
    /// Requests.
    pub arrivals: u64,
    /// Sum of waits (queueing only, not service).
    pub wait_sum: u64,
    /// Sum of service times.
    pub service_sum: u64,
    /// Sum of squared service times.
    pub service_sq_sum: u64,
}

/// The routing controllers of a partition.
#[derive(Clone, Debug)]
pub struct Controllers {
    cap: usize,
    queue: Vec<CtrlRequest>,
    head: Vec<u32>,
    len: Vec<u32>,
    servers: usize,
    free_at: Vec<Cycle>,
    /// Per-node measurements.
    pub stats: Vec<CtrlStats>,
}

impl Controllers {
    /// Controllers for `nodes` nodes, each with `servers` servers and room for `cap`
    /// queued requests (every requester has at most one request outstanding).
    pub fn new(nodes: usize, servers: usize, cap: usize) -> Self {
        Controllers {
            cap,
            // Zeroed, so that queue space nobody uses is never mapped.
            queue: bytemuck::zeroed_vec(nodes * cap),
            head: vec![0; nodes],
            len: vec![0; nodes],
            servers,
            free_at: vec![0; nodes * servers],
            stats: vec![CtrlStats::default(); nodes],
        }
    }

    /// Servers per node.
    pub fn servers(&self) -> usize {
        self.servers
    }

    /// Appends a request to `node`'s queue.
    #[inline]
    pub fn push(&mut self, node: usize, req: CtrlRequest) {
        let len = self.len[node] as usize;
        assert!(
            len < self.cap,
            "controller queue overflow: more requesters than sized for"
        );
        let slot = (self.head[node] as usize + len) % self.cap;
        self.queue[node * self.cap + slot] = req;
        self.len[node] += 1;
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
        let servers = &mut self.free_at[node * self.servers..(node + 1) * self.servers];
        let server = servers.iter().position(|&f| f <= t)?;
        let req = self.queue[node * self.cap + self.head[node] as usize];
        self.head[node] = ((self.head[node] as usize + 1) % self.cap) as u32;
        self.len[node] -= 1;
        let s = service(&req).max(1);
        servers[server] = t + s;
        if measured(req.arrived) {
            let st = &mut self.stats[node];
            st.arrivals += 1;
            st.wait_sum += t - req.arrived;
            st.service_sum += s;
            st.service_sq_sum += s * s;
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
        let servers = &mut self.free_at[node * self.servers..(node + 1) * self.servers];
        let server = servers.iter().position(|&f| f <= t)?;
        servers[server] = Cycle::MAX;
        let req = self.queue[node * self.cap + self.head[node] as usize];
        self.head[node] = ((self.head[node] as usize + 1) % self.cap) as u32;
        self.len[node] -= 1;
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
        self.free_at[node * self.servers + server] = free_from;
        let (wait, s) = (started - arrived, free_from - started);
        if measured {
            let st = &mut self.stats[node];
            st.arrivals += 1;
            st.wait_sum += wait;
            st.service_sum += s;
            st.service_sq_sum += s * s;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_serves_in_fifo_order_and_measures_waits() {
        let mut c = Controllers::new(1, 1, 4);
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
        let mut c = Controllers::new(1, 2, 4);
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

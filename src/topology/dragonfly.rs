//! The dragonfly's routers (Kim, Dally, Scott and Abts, ISCA 2008) in its balanced
//! canonical form: groups of `a` routers fully connected by local links, `h` global links
//! per router, `g = a·h + 1` groups and exactly one global link between every pair of
//! groups. Owns the numbering, the global-link arrangement and the minimal
//! (local–global–local) route; the terminals (`p` per router) are added by
//! [`crate::topology::concentration`], the VC classes by `routing::dragonfly`.
//!
//! Numbering: router r = group·a + i, i its index in its group (BookSim's router ids).
//!
//! Ports of a router (BookSim2 `dragonflynew`'s order without its `p` terminal ports,
//! which routemu numbers after these, `topology::concentration`):
//!
//! | ports | lead to |
//! |---|---|
//! | `0 .. a−1` (local) | local port l: router l of the group if l < i, router l + 1 otherwise |
//! | `a−1 .. a−1+h` (global) | global port a−1+c: the group's global link number j = i·h + c |
//!
//! Global-link arrangement (BookSim2's `dragonflynew`): group s numbers its a·h = g − 1
//! global links j = 0 .. g−1, link j held by router j / h on its global port j mod h; link
//! j leads to group t = j if j < s, t = j + 1 otherwise, where it is that group's link
//! s if s < t, s − 1 otherwise. So the one link between groups s < t is link t − 1 of s
//! and link s of t. (BookSim port q of a router is routemu's q − p for q ≥ p; BookSim's
//! terminal ports 0..p are routemu's `a−1+h ..`.)
//!
//! The two ends of a link are named by their own routers' ports: a flit that leaves
//! router u on port q arrives at v = neighbor(u, q) on v's port towards u,
//! [`Dragonfly::arrival_port`] (unlike the torus, where both ends have the same number).
//!
//! Distances are those of the minimal route (BookSim's `dragonflynew_hopcnt`): 0, 1
//! within a group, and local (unless at the group's gateway router) + global + local
//! (unless the gateway is the destination) between groups, at most 3. A few pairs of
//! routers are also joined by a path of two global links through a third group, shorter
//! than their minimal route; minimal routing, as in BookSim, does not take it, and
//! [`Dragonfly::distance`] is the minimal route's length.

use crate::topology::PortSet;

/// A dragonfly's routers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dragonfly {
    /// Terminals per router (P): for the bounds and the description only.
    pub p: u32,
    /// Routers per group (A).
    pub a: u32,
    /// Global links per router (H).
    pub h: u32,
}

/// Which kind of link a port is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DragonflyPort {
    /// A local link to router `index` of the same group.
    Local(u32),
    /// Global port `c` (0..h).
    Global(u32),
}

impl Dragonfly {
    /// Number of groups, a·h + 1.
    pub fn groups(&self) -> u32 {
        self.a * self.h + 1
    }

    /// Number of routers.
    pub fn routers(&self) -> usize {
        self.a as usize * self.groups() as usize
    }

    /// Network ports per router: a − 1 local plus h global.
    pub fn degree(&self) -> usize {
        (self.a - 1 + self.h) as usize
    }

    /// The group of `router` (the hook Valiant and UGAL routing choose intermediate
    /// groups with).
    #[inline]
    pub fn group_of(&self, router: u32) -> u32 {
        router / self.a
    }

    /// The index of `router` in its group.
    #[inline]
    pub fn index_of(&self, router: u32) -> u32 {
        router % self.a
    }

    /// What port `port` (a network port) is.
    #[inline]
    pub fn port_kind(&self, router: u32, port: u32) -> DragonflyPort {
        if port < self.a - 1 {
            let i = self.index_of(router);
            DragonflyPort::Local(if port < i { port } else { port + 1 })
        } else {
            DragonflyPort::Global(port - (self.a - 1))
        }
    }

    /// Whether `port` is a global port (on every router).
    #[inline]
    pub fn is_global(&self, port: u32) -> bool {
        port >= self.a - 1 && port < self.a - 1 + self.h
    }

    /// The local port of a router of index `from` towards index `to` (≠ `from`).
    #[inline]
    fn local_port(from: u32, to: u32) -> u32 {
        if to < from {
            to
        } else {
            to - 1
        }
    }

    /// The group reached by global link `j` of group `s`.
    #[inline]
    fn link_target(s: u32, j: u32) -> u32 {
        if j < s {
            j
        } else {
            j + 1
        }
    }

    /// The number, in group `s`, of its global link to group `t` (≠ `s`).
    #[inline]
    pub fn link_to(s: u32, t: u32) -> u32 {
        if t < s {
            t
        } else {
            t - 1
        }
    }

    /// The router of group `s` holding its global link to group `t` (≠ `s`), and that
    /// router's global port.
    #[inline]
    pub fn gateway(&self, s: u32, t: u32) -> (u32, u32) {
        let j = Self::link_to(s, t);
        (s * self.a + j / self.h, self.a - 1 + j % self.h)
    }

    /// The router reached through output `port` of `router`, if that port exists.
    #[inline]
    pub fn neighbor(&self, router: u32, port: u32) -> Option<u32> {
        let s = self.group_of(router);
        match self.port_kind(router, port) {
            DragonflyPort::Local(i) => Some(s * self.a + i),
            DragonflyPort::Global(c) if c < self.h => {
                let j = self.index_of(router) * self.h + c;
                let t = Self::link_target(s, j);
                Some(self.gateway(t, s).0)
            }
            DragonflyPort::Global(_) => None,
        }
    }

    /// The port of `neighbor(router, port)` on the same link: the input port a flit sent
    /// on `port` arrives on.
    #[inline]
    pub fn arrival_port(&self, router: u32, port: u32) -> u32 {
        let s = self.group_of(router);
        match self.port_kind(router, port) {
            DragonflyPort::Local(i) => Self::local_port(i, self.index_of(router)),
            DragonflyPort::Global(c) => {
                let j = self.index_of(router) * self.h + c;
                self.gateway(Self::link_target(s, j), s).1
            }
        }
    }

    /// The minimal route's next port from `cur` to `dst` (≠ `cur`), and whether it is
    /// the global hop.
    #[inline]
    pub fn min_port(&self, cur: u32, dst: u32) -> u32 {
        let (s, t) = (self.group_of(cur), self.group_of(dst));
        let target = if s == t {
            dst
        } else {
            let (gw, port) = self.gateway(s, t);
            if gw == cur {
                return port;
            }
            gw
        };
        Self::local_port(self.index_of(cur), self.index_of(target))
    }

    /// Length of the minimal route from `a` to `b` (the module's distance).
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        if a == b {
            return 0;
        }
        let (s, t) = (self.group_of(a), self.group_of(b));
        if s == t {
            return 1;
        }
        1 + u32::from(self.gateway(s, t).0 != a) + u32::from(self.gateway(t, s).0 != b)
    }

    /// The minimal route's port as a set (empty when `cur == dst`).
    pub fn minimal_ports(&self, cur: u32, dst: u32) -> PortSet {
        let mut s = PortSet::ZERO;
        if cur != dst {
            s.set(self.min_port(cur, dst) as usize, true);
        }
        s
    }

    /// Largest minimal-route distance: 3 with two or more routers per group (1 with one).
    pub fn diameter(&self) -> u32 {
        if self.a == 1 {
            1
        } else {
            3
        }
    }

    /// Mean minimal-route distance over ordered pairs of distinct routers: within a
    /// group 1; between two groups a² pairs, of which a(a−1) leave from a router other
    /// than the gateway and a(a−1) arrive at one other than the far gateway.
    pub fn mean_distance(&self) -> f64 {
        let (a, g) = (self.a as f64, self.groups() as f64);
        let r = a * g;
        let total = r * (a - 1.0) + g * (g - 1.0) * (a * a + 2.0 * a * (a - 1.0));
        total / (r * (r - 1.0))
    }

    /// Uniform-traffic throughput bound per terminal (flits per cycle, links of one flit
    /// per cycle) under minimal routing, traffic over the N − 1 other terminals: the
    /// most loaded channel's load per unit injection is (a·p)²/(N−1) on a global
    /// channel and p·(p + 2·h·a·p)/(N−1) on a local one (terminals of the sending router
    /// to those of the receiving one, to the h groups the receiver is gateway to, and
    /// from the h groups the sender is gateway from). The terminal link's 1 is
    /// `Topology::capacity`'s to apply, under concentration.
    pub fn uniform_bound(&self) -> f64 {
        let (p, a, h) = (self.p as f64, self.a as f64, self.h as f64);
        let n = p * a * self.groups() as f64;
        let global = (a * p) * (a * p) / (n - 1.0);
        let local = if self.a > 1 {
            p * (p + 2.0 * h * a * p) / (n - 1.0)
        } else {
            0.0
        };
        1.0 / global.max(local)
    }

    /// `GroupShift` bound per terminal under minimal routing: the a·p terminals of a
    /// group share its one global link to the next group, 1/(a·p).
    pub fn group_shift_bound(&self) -> f64 {
        1.0 / (self.a as f64 * self.p as f64)
    }

    /// Channels cut by the bisection (directed, both directions counted): the global
    /// links between the two halves of the groups, ⌊g/2⌋·⌈g/2⌉ of them each way.
    pub fn bisection_channels(&self) -> usize {
        let g = self.groups() as usize;
        2 * (g / 2) * g.div_ceil(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Dragonfly {
        Dragonfly { p: 2, a: 4, h: 2 }
    }

    #[test]
    fn every_port_leads_to_a_router_whose_arrival_port_leads_back() {
        for d in [
            small(),
            Dragonfly { p: 1, a: 3, h: 1 },
            Dragonfly { p: 4, a: 8, h: 4 },
        ] {
            for u in 0..d.routers() as u32 {
                let mut seen = std::collections::HashSet::new();
                for q in 0..d.degree() as u32 {
                    let v = d.neighbor(u, q).unwrap();
                    assert_ne!(v, u);
                    assert!(seen.insert(v), "router {u} reaches {v} twice");
                    let back = d.arrival_port(u, q);
                    assert_eq!(d.neighbor(v, back), Some(u), "{d:?} {u} port {q}");
                    assert_eq!(d.arrival_port(v, back), q);
                    assert_eq!(d.is_global(q), d.is_global(back));
                    assert_eq!(d.group_of(u) == d.group_of(v), !d.is_global(q));
                }
            }
        }
    }

    #[test]
    fn exactly_one_global_link_joins_every_pair_of_groups() {
        let d = small();
        let g = d.groups() as usize;
        assert_eq!(g, 9);
        let mut links = vec![vec![0u32; g]; g];
        for u in 0..d.routers() as u32 {
            for c in 0..d.h {
                let v = d.neighbor(u, d.a - 1 + c).unwrap();
                links[d.group_of(u) as usize][d.group_of(v) as usize] += 1;
            }
        }
        for (s, row) in links.iter().enumerate() {
            for (t, &n) in row.iter().enumerate() {
                assert_eq!(n, u32::from(s != t), "groups {s} and {t}");
            }
        }
    }

    #[test]
    fn the_arrangement_is_booksims_link_t_minus_1_of_s_to_link_s_of_t() {
        let d = small();
        // Groups 0 and 5: link 4 of group 0 (router 2, global port 0), link 0 of group 5
        // (router 20, global port 0).
        assert_eq!(d.gateway(0, 5), (2, 3));
        assert_eq!(d.gateway(5, 0), (20, 3));
        assert_eq!(d.neighbor(2, 3), Some(20));
        // BookSim's local ports skip the router itself.
        assert_eq!(d.neighbor(2, 0), Some(0));
        assert_eq!(d.neighbor(2, 2), Some(3));
    }

    #[test]
    fn the_minimal_route_reaches_its_destination_in_distance_hops_at_most_3() {
        for d in [small(), Dragonfly { p: 1, a: 3, h: 2 }] {
            let r = d.routers() as u32;
            let mut total = 0u64;
            for s in 0..r {
                for t in 0..r {
                    let mut cur = s;
                    let mut hops = 0;
                    let mut globals = 0;
                    while cur != t {
                        let q = d.min_port(cur, t);
                        globals += u32::from(d.is_global(q));
                        cur = d.neighbor(cur, q).unwrap();
                        hops += 1;
                        assert!(hops <= 3);
                    }
                    assert_eq!(hops, d.distance(s, t));
                    assert!(globals <= 1);
                    total += hops as u64;
                }
            }
            let mean = total as f64 / (r as f64 * (r as f64 - 1.0));
            assert!((mean - d.mean_distance()).abs() < 1e-12);
            assert_eq!(d.diameter(), 3);
        }
    }
}

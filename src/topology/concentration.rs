//! Concentration: `c` ≥ 2 terminals per router. Owns the numbering of terminals, the
//! terminal links, and the distances and minimal ports between terminals; the router
//! network underneath (torus, mesh, dragonfly, flattened butterfly) is any other
//! [`Topology`], and how messages move is the wormhole router's.
//!
//! # How routemu models a terminal
//!
//! A terminal is a node of its own, linked to its router by a bidirectional terminal link
//! (`links.latency_terminal`, default `links.latency`), as BookSim, Garnet and SST/Merlin
//! give each terminal its own injection and ejection port of the router. Only terminals
//! create and receive messages (`Topology::endpoints`); routers only forward. With
//! `c = 1` there are no terminal nodes: the router's own processing element (its local
//! port, DMA engines) is the terminal, exactly as before concentration existed, so every
//! existing machine is unchanged.
//!
//! The other way — c local ports per router in the wormhole router — would touch the
//! engine's local port numbering, the DMA engines, the network interface and message
//! addressing everywhere; a terminal node reuses all of that unchanged (the terminal's
//! DMA engines, network-interface limits and ejection are the ones every routemu node
//! has), at a cost in fidelity: a terminal is a router with one network port, so a
//! message crosses one more router stage at each end (route, allocation, crossbar) and a
//! terminal link each way, where BookSim's injection channel goes straight into the
//! router's input buffer. Zero-load latency over h router-to-router hops is therefore
//! that of h + 2 hops with the two terminal links' latency in place of two network
//! links' (`docs/dragonfly.md` gives the formula and how a BookSim-equivalent preset
//! compensates with the terminal link's latency and the network interface's).
//!
//! Numbering: routers are nodes 0..R (the router network's own numbers), terminal j of
//! router r is node R + r·c + j. A router's ports are the network's `0..d`, then
//! `d + j` to its terminal j; terminal j of a router has one port, also numbered `d + j`
//! (its other port numbers do not exist), so a flit arrives on the port number it left
//! on in both directions.

use crate::topology::{PortSet, Topology};

/// A router network with `c` terminals on every router.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concentrated {
    /// The routers and the links between them.
    pub net: Box<Topology>,
    /// Terminals per router, at least 2.
    pub c: u32,
    /// Number of routers (`net.nodes()`).
    pub routers: u32,
    /// Network ports per router (`net.degree()`).
    pub net_degree: u32,
}

/// A node seen by concentration: a router, or terminal `j` of router `router`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A router.
    Router(u32),
    /// A terminal.
    Terminal {
        /// Its router.
        router: u32,
        /// Its index on the router (0..c).
        j: u32,
    },
}

// The methods that call back into `Topology`'s (neighbor, upstream, arrival_port,
// distance, minimal_ports) are out of line: `Topology`'s methods call them, and a call
// breaks the cycle so that the papers' networks' methods still inline into the routing.
impl Concentrated {
    /// `c` terminals on every router of `net`.
    pub fn new(net: Topology, c: u32) -> Self {
        let routers = net.nodes() as u32;
        let net_degree = net.degree() as u32;
        Concentrated {
            net: Box::new(net),
            c,
            routers,
            net_degree,
        }
    }

    /// Number of nodes: routers and terminals.
    pub fn nodes(&self) -> usize {
        self.routers as usize * (1 + self.c as usize)
    }

    /// The terminals' node numbers.
    pub fn terminals(&self) -> std::ops::Range<u32> {
        self.routers..self.routers + self.routers * self.c
    }

    /// Ports per node: the network's and one per terminal.
    pub fn degree(&self) -> usize {
        (self.net_degree + self.c) as usize
    }

    /// What node `node` is.
    #[inline]
    pub fn place(&self, node: u32) -> Place {
        if node < self.routers {
            Place::Router(node)
        } else {
            let t = node - self.routers;
            Place::Terminal {
                router: t / self.c,
                j: t % self.c,
            }
        }
    }

    /// The router of a node (a router is its own).
    #[inline]
    pub fn router_of(&self, node: u32) -> u32 {
        match self.place(node) {
            Place::Router(r) => r,
            Place::Terminal { router, .. } => router,
        }
    }

    /// Node number of terminal `j` of `router`.
    #[inline]
    pub fn terminal(&self, router: u32, j: u32) -> u32 {
        self.routers + router * self.c + j
    }

    /// Whether `port` is a terminal link's (on a router or a terminal).
    #[inline]
    pub fn is_terminal_port(&self, port: u32) -> bool {
        port >= self.net_degree && port < self.net_degree + self.c
    }

    /// The node through output `port`, if that port exists.
    #[inline(never)]
    pub fn neighbor(&self, node: u32, port: u32) -> Option<u32> {
        match self.place(node) {
            Place::Router(r) if port < self.net_degree => self
                .net
                .neighbor(
                    crate::foundation::types::NodeId(r),
                    crate::foundation::types::PortId(port as u8),
                )
                .map(|n| n.0),
            Place::Router(r) if self.is_terminal_port(port) => {
                Some(self.terminal(r, port - self.net_degree))
            }
            Place::Terminal { router, j } if port == self.net_degree + j => Some(router),
            _ => None,
        }
    }

    /// The node feeding input `port` of `node`, if any.
    #[inline(never)]
    pub fn upstream(&self, node: u32, port: u32) -> Option<u32> {
        match self.place(node) {
            Place::Router(r) if port < self.net_degree => self
                .net
                .upstream(
                    crate::foundation::types::NodeId(r),
                    crate::foundation::types::PortId(port as u8),
                )
                .map(|n| n.0),
            _ => self.neighbor(node, port),
        }
    }

    /// The input port at `neighbor(node, port)` a flit sent on `port` arrives on.
    #[inline(never)]
    pub fn arrival_port(&self, node: u32, port: u32) -> u32 {
        if node < self.routers && port < self.net_degree {
            self.net
                .arrival_port(
                    crate::foundation::types::NodeId(node),
                    crate::foundation::types::PortId(port as u8),
                )
                .0 as u32
        } else {
            port
        }
    }

    /// Links between `a` and `b`: the routers' distance plus the terminal links at
    /// either end.
    #[inline(never)]
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        if a == b {
            return 0;
        }
        let ends = u32::from(a >= self.routers) + u32::from(b >= self.routers);
        let (ra, rb) = (self.router_of(a), self.router_of(b));
        ends + self.net.distance(
            crate::foundation::types::NodeId(ra),
            crate::foundation::types::NodeId(rb),
        )
    }

    /// The terminal-link port `cur` must take towards `dst`, when the next hop is on a
    /// terminal link: from a terminal, or from the destination terminal's router.
    #[inline]
    pub fn terminal_step(&self, cur: u32, dst: u32) -> Option<u32> {
        match self.place(cur) {
            Place::Terminal { j, .. } => Some(self.net_degree + j),
            Place::Router(r) => match self.place(dst) {
                Place::Terminal { router, j } if router == r => Some(self.net_degree + j),
                _ => None,
            },
        }
    }

    /// The output ports of `cur` on a minimal path to `dst`.
    #[inline(never)]
    pub fn minimal_ports(&self, cur: u32, dst: u32) -> PortSet {
        let mut s = PortSet::ZERO;
        if cur == dst {
            return s;
        }
        if let Some(p) = self.terminal_step(cur, dst) {
            s.set(p as usize, true);
            return s;
        }
        self.net.minimal_ports(
            crate::foundation::types::NodeId(cur),
            crate::foundation::types::NodeId(self.router_of(dst)),
        )
    }

    /// Mean distance over ordered pairs of distinct terminals (the traffic's pairs): 2
    /// between two terminals of one router, the routers' mean distance plus 2 otherwise.
    pub fn mean_distance(&self) -> f64 {
        let (r, c) = (self.routers as f64, self.c as f64);
        let t = r * c;
        let same = r * c * (c - 1.0) * 2.0;
        let other = c * c * r * (r - 1.0) * (self.net.mean_distance() + 2.0);
        (same + other) / (t * (t - 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::foundation::types::{NodeId, PortId};

    #[test]
    fn a_terminal_hangs_on_one_port_of_its_router_with_the_same_number_at_both_ends() {
        let t = Topology::from_config(&TopologyConfig::Mesh { k: 3, n: 2, c: 3 }).unwrap();
        let Topology::Concentrated(c) = &t else {
            panic!("c = 3 concentrates")
        };
        assert_eq!((c.routers, t.nodes(), t.endpoints()), (9, 36, 9..36));
        assert_eq!(t.degree(), 4 + 3);
        for r in 0..9u32 {
            for j in 0..3u32 {
                let term = c.terminal(r, j);
                let port = PortId((4 + j) as u8);
                assert_eq!(t.neighbor(NodeId(r), port), Some(NodeId(term)));
                assert_eq!(t.neighbor(NodeId(term), port), Some(NodeId(r)));
                assert_eq!(t.upstream(NodeId(r), port), Some(NodeId(term)));
                assert_eq!(t.arrival_port(NodeId(term), port), port);
                assert_eq!(t.router_of(NodeId(term)), NodeId(r));
                // The terminal's other ports do not exist.
                let others = (0..7u8).filter(|&q| t.neighbor(NodeId(term), PortId(q)).is_some());
                assert_eq!(others.count(), 1);
            }
        }
    }

    #[test]
    fn distances_between_terminals_add_the_two_terminal_links_to_the_routers() {
        let t = Topology::from_config(&TopologyConfig::Torus {
            k: 4,
            n: 2,
            bidirectional: true,
            c: 2,
        })
        .unwrap();
        let net = t.router_net().clone();
        let ends = t.endpoints();
        let (mut total, mut pairs) = (0u64, 0u64);
        for a in ends.clone() {
            for b in ends.clone().filter(|&b| b != a) {
                let (ra, rb) = (t.router_of(NodeId(a)), t.router_of(NodeId(b)));
                let d = t.distance(NodeId(a), NodeId(b));
                assert_eq!(d, net.distance(ra, rb) + 2);
                // The one minimal port of a terminal is its link; a router's lead on.
                let first = t.minimal_ports(NodeId(a), NodeId(b));
                assert_eq!(first.count_ones(), 1);
                let next = t.neighbor(NodeId(a), PortId(first.first_one().unwrap() as u8));
                assert_eq!(next, Some(ra));
                total += d as u64;
                pairs += 1;
            }
        }
        assert!((total as f64 / pairs as f64 - t.mean_distance()).abs() < 1e-12);
        assert_eq!(t.diameter(), net.diameter() + 2);
    }
}

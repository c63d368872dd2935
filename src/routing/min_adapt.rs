//! BookSim's minimal adaptive routing, `min_adapt_torus` and `min_adapt_mesh`
//! (`Routing::MinAdapt`), beside routemu's Duato `Adaptive`. Both offer the minimal ports
//! on adaptive VCs and the dimension-order port on escape VCs; they differ in three ways:
//!
//! - a message that has taken an escape VC stays on escape VCs to its destination
//!   ([`crate::routing::RouteState::escaped`], set by [`RoutingFn::after_hop`] when the head leaves a
//!   router on a VC outside the adaptive ones); `Adaptive` lets it return to the adaptive
//!   VCs at the next router;
//! - on a torus the adaptive class is one VC, VC 3 (VC 2 and VCs above 3 are never used,
//!   as in BookSim), and one minimal port per dimension is offered (an offset of exactly
//!   k/2 goes down, as BookSim's `dist2 > 0` test sends it); `Adaptive` offers VCs 2..V
//!   and both ports of a k/2 offset;
//! - on a torus the two escape VCs are split by BookSim's ring rule (upwards: VC 1 for a
//!   path whose way round the ring crosses the wrap-around link, VC 0 otherwise;
//!   downwards the reverse), where `Adaptive` uses dateline classes.
//!
//! On a mesh the escape VC is VC 0 and the adaptive VCs 1..V, as `min_adapt_mesh`.
//!
//! Whether a path crosses the wrap-around is judged over the message's whole way round
//! the ring, from its source (a minimal route moves one way per ring); BookSim judges it
//! from the router at which the message dropped into the escape VCs. Every escape hop is
//! then part of a minimal path in one class (crossing or not), which never uses the
//! link opposite the wrap-around (crossing) or the wrap-around (not crossing), so neither
//! escape VC's dependencies close a ring; and escaped messages never wait for adaptive
//! VCs, so the escape network alone drains them.
//!
//! Owns: MinAdapt's candidates. Not here: the selection among them (`selection`), where
//! the escape state is updated (`switching::wormhole`).

use crate::foundation::types::NodeId;
use crate::routing::dor::{self, Dateline};
use crate::routing::{Route, RoutingFn};
use crate::topology::Topology;

impl RoutingFn {
    /// MinAdapt's candidates for a message from `src` at `cur` bound for `dst`
    /// (`cur != dst`); only the escape port and VCs once it has `escaped`.
    #[inline]
    pub(super) fn route_min_adapt(
        &self,
        topology: &Topology,
        cur: NodeId,
        dst: NodeId,
        src: NodeId,
        escaped: bool,
    ) -> Route {
        let (port, class) = dor::dor_step(topology, cur, dst, src);
        let (ports, escape_vcs) = match topology {
            Topology::Torus(t) => {
                let mut ports = 0u64;
                for dim in 0..t.grid.n {
                    let st = t.dim_step(cur.0, dst.0, dim);
                    if st.hops > 0 {
                        ports |= 1 << t.port(dim, st.up && !st.down);
                    }
                }
                let up = t.port_dim(port.0 as u32).1;
                let esc = match (self.escape, (class != Dateline::Never) == up) {
                    (false, _) => 0,
                    (true, true) => 0b10,
                    (true, false) => 0b01,
                };
                (ports, esc)
            }
            _ => (
                topology.minimal_ports(cur, dst).data[0],
                u64::from(self.escape),
            ),
        };
        if escaped {
            return Route {
                adaptive_ports: 0,
                adaptive_vcs: 0,
                escape_port: port,
                escape_vcs,
            };
        }
        Route {
            adaptive_ports: ports,
            adaptive_vcs: self.adaptive_vcs(),
            escape_port: port,
            escape_vcs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Routing, TopologyConfig};
    use crate::foundation::types::{MsgId, PortId};
    use crate::routing::RouteState;

    fn topo(cfg: TopologyConfig) -> Topology {
        Topology::from_config(&cfg).unwrap()
    }

    #[test]
    fn on_a_torus_one_adaptive_vc_one_port_per_dimension_and_a_split_escape_pair() {
        let t = topo(TopologyConfig::Torus {
            k: 8,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        let r = RoutingFn::new(&t, Routing::MinAdapt, false, 8).unwrap();
        // (0,0) → (4,2): x offset k/2 goes down only (port 1), y up (port 2); adaptive VC 3.
        let id = MsgId::new(NodeId(0), 0);
        let route = r.route(&t, NodeId(0), NodeId(4 + 2 * 8), id);
        assert_eq!(route.adaptive_ports, 0b0110);
        assert_eq!(route.adaptive_vcs, 0b1000);
        // Escape: dimension order breaks the tie upwards at an even x; 0 → 4 up never
        // wraps: VC 0.
        assert_eq!(route.escape_port, PortId(0));
        assert_eq!(route.escape_vcs, 0b01);
        // (6,0) → (1,0) upwards crosses the wrap-around: VC 1.
        let route = r.route(&t, NodeId(6), NodeId(1), MsgId::new(NodeId(6), 0));
        assert_eq!((route.escape_port, route.escape_vcs), (PortId(0), 0b10));
        // Too few VCs for VC 3.
        let err = RoutingFn::new(&t, Routing::MinAdapt, false, 3)
            .unwrap_err()
            .to_string();
        assert!(err.contains("VC 3"), "{err}");
    }

    #[test]
    fn a_message_that_took_an_escape_vc_keeps_to_escape_vcs() {
        for (cfg, adaptive_vc, escape_vc) in [
            (
                TopologyConfig::Torus {
                    k: 4,
                    n: 2,
                    bidirectional: true,
                    c: 1,
                },
                3,
                0,
            ),
            (TopologyConfig::Mesh { k: 4, n: 2, c: 1 }, 1, 0),
        ] {
            let t = topo(cfg);
            let r = RoutingFn::new(&t, Routing::MinAdapt, false, 4).unwrap();
            let (src, dst) = (NodeId(0), NodeId(1 + 4));
            let id = MsgId::new(src, 0);
            let mut state = RouteState::default();
            let first = r.route_msg(&t, src, dst, id, &mut state);
            assert_ne!(first.adaptive_ports, 0);
            // Leaving on the adaptive VC changes nothing.
            r.after_hop(&first, adaptive_vc, &mut state);
            assert!(!state.escaped());
            // Leaving on an escape VC: from then on only the escape port and VCs.
            r.after_hop(&first, escape_vc, &mut state);
            assert!(state.escaped());
            let next = r.route_msg(&t, NodeId(1), dst, id, &mut state);
            assert_eq!((next.adaptive_ports, next.adaptive_vcs), (0, 0));
            assert_ne!(next.escape_vcs, 0);
            // Routemu's Adaptive never marks it.
            let a = RoutingFn::new(&t, Routing::Adaptive, false, 4).unwrap();
            let mut s2 = RouteState::default();
            a.after_hop(&a.route(&t, src, dst, id), 0, &mut s2);
            assert!(!s2.escaped());
        }
    }

    #[test]
    fn min_adapt_is_refused_off_meshes_and_tori() {
        let cube = topo(TopologyConfig::Hypercube { dim: 3 });
        assert!(RoutingFn::new(&cube, Routing::MinAdapt, false, 4).is_err());
        let mesh = topo(TopologyConfig::Mesh { k: 4, n: 2, c: 1 });
        assert!(RoutingFn::new(&mesh, Routing::MinAdapt, false, 1).is_err());
        assert!(RoutingFn::new(&mesh, Routing::MinAdapt, false, 2).is_ok());
    }
}

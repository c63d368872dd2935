//! Two-phase oblivious routing on meshes and tori: Valiant's (an intermediate node drawn
//! over the whole network) and ROMM (one drawn in the minimal rectangle between source
//! and destination). A message goes in dimension order to its intermediate node (phase
//! 1), then in dimension order to its destination (phase 2).
//!
//! The intermediate node is a pure function of the message id and the run's salt (seed
//! and replication), as XY-YX's order is: every router recomputes it, and the header
//! carries only the phase ([`crate::routing::RouteState::phase2`]), set by the router at which the
//! message reaches its intermediate node. As in BookSim, an intermediate node equal to
//! the source puts the message in phase 2 at its source router (plain dimension order on
//! the phase-2 VCs), and one equal to the destination leaves it in phase 1 all the way
//! (plain dimension order on the phase-1 VCs). A Valiant message whose phase-1 route
//! passes its destination is not delivered there: it goes on to its intermediate node
//! and comes back in phase 2, as in BookSim ([`RoutingFn::delivers`]).
//!
//! VC classes (V = `router.vcs`): phase 1 uses `0..V/2`, phase 2 `V/2..V`, so a phase-2
//! channel never waits for a phase-1 one and the two phases' dimension orders, each
//! acyclic, cannot close a cycle between them. On a torus each phase's half is split
//! again by the ring rule `torus_vcs` chooses, relative to the phase's own start (the
//! source, or the intermediate node): dateline (even VCs of the half before the
//! wrap-around, odd VCs after, the whole half for a path that never crosses it) or
//! BookSim's wrap split (the half's lower or upper part for the whole ring). BookSim's
//! `valiant_torus` numbers them the other way round (ring half first, phase within it);
//! the sets are the same size.
//!
//! ROMM on a torus (BookSim has only `romm_mesh`): each coordinate of the intermediate
//! node is drawn on the minimal arc from the source's coordinate to the destination's in
//! that ring, going the way dimension order goes (an offset of k/2 breaks its tie by the
//! parity of the source's coordinate, as `dor` does), so both phases follow the minimal
//! route and the whole route is minimal.
//!
//! Owns: the intermediate node and the two-phase candidates. Not here: dimension order
//! itself (`dor`), the header (`router::buffers`), the loads (`channel_load`).

use crate::config::Routing;
use crate::foundation::types::{MsgId, NodeId, PortId};
use crate::routing::dor::{self, Dateline};
use crate::routing::{mask, mix, Route, RouteState, RoutingFn, VcMask};
use crate::topology::{Grid, Topology};

/// Uniform draw in `0..m` from the 64 bits of `h` (multiply-shift: no modulo bias worth
/// the name for m ≪ 2⁶⁴).
#[inline]
fn draw(h: u64, m: u32) -> u32 {
    ((h as u128 * m as u128) >> 64) as u32
}

/// The grid of a mesh or torus (None elsewhere).
#[inline]
fn grid_of(topology: &Topology) -> Option<Grid> {
    match topology {
        Topology::Torus(t) => Some(t.grid),
        Topology::Mesh(m) => Some(m.grid),
        _ => None,
    }
}

/// The minimal way from `src`'s coordinate to `dst`'s in dimension `dim` of a mesh or
/// torus: (upwards, hops). On a torus ring an offset of k/2 goes the way dimension order
/// takes it from the source (even coordinate: up).
#[inline]
pub fn minimal_arc(topology: &Topology, src: NodeId, dst: NodeId, dim: u32) -> (bool, u32) {
    match topology {
        Topology::Torus(t) => {
            let st = t.dim_step(src.0, dst.0, dim);
            let up = if st.up && st.down {
                t.grid.coord(src.0, dim) % 2 == 0
            } else {
                st.up
            };
            (up, st.hops)
        }
        Topology::Mesh(m) => {
            let (a, b) = (m.grid.coord(src.0, dim), m.grid.coord(dst.0, dim));
            (b >= a, a.abs_diff(b))
        }
        _ => (true, 0),
    }
}

/// The coordinate `off` hops from `a` along the arc of [`minimal_arc`] (ring of `k`
/// positions on a torus; a mesh's arc never leaves the mesh).
#[inline]
pub fn along(topology: &Topology, a: u32, up: bool, off: u32) -> u32 {
    match topology {
        Topology::Torus(t) => {
            let k = t.grid.k;
            if up {
                (a + off) % k
            } else {
                (a + k - off % k) % k
            }
        }
        _ => {
            if up {
                a + off
            } else {
                a - off
            }
        }
    }
}

/// The intermediate node of message `id` bound for `dst` under `kind` (Valiant: uniform
/// over the network; ROMM: uniform in the minimal rectangle, each coordinate independent;
/// `dst` for the other routings) for a routing salted with `salt`.
#[inline]
pub fn intermediate(
    topology: &Topology,
    kind: Routing,
    salt: u64,
    id: MsgId,
    dst: NodeId,
) -> NodeId {
    let mut h = mix(id.0 ^ salt ^ 0x5641_4c49_414e_5421);
    match kind {
        Routing::Valiant => NodeId(draw(h, topology.nodes() as u32)),
        Routing::Romm => {
            let Some(grid) = grid_of(topology) else {
                return dst;
            };
            let src = id.src();
            let mut node = src.0;
            for dim in 0..grid.n {
                let (up, hops) = minimal_arc(topology, src, dst, dim);
                h = mix(h);
                let c = along(topology, grid.coord(src.0, dim), up, draw(h, hops + 1));
                node = grid.with_coord(node, dim, c);
            }
            NodeId(node)
        }
        _ => dst,
    }
}

impl RoutingFn {
    /// The intermediate node of message `id` bound for `dst` (Valiant and ROMM; `dst`
    /// for the other routings).
    #[inline]
    pub fn intermediate(&self, topology: &Topology, id: MsgId, dst: NodeId) -> NodeId {
        intermediate(topology, self.kind, self.salt, id, dst)
    }

    /// Valiant's and ROMM's candidates: the dimension-order port towards the
    /// intermediate node (phase 1) or the destination (phase 2), on the phase's VCs.
    #[inline]
    pub(super) fn route_two_phase(
        &self,
        topology: &Topology,
        cur: NodeId,
        dst: NodeId,
        id: MsgId,
        state: &mut RouteState,
    ) -> Route {
        let mid = self.intermediate(topology, id, dst);
        if !state.phase2() && cur == mid {
            state.set_phase2();
        }
        let (target, start) = if state.phase2() {
            (dst, mid)
        } else {
            (mid, id.src())
        };
        let (port, class) = dor::dor_step_tie(topology, cur, target, start, self.tie(id));
        let escape_vcs = if self.halves {
            let half = self.vcs / 2;
            if state.phase2() {
                self.ring_vcs(topology, port, class, half, self.vcs - half)
            } else {
                self.ring_vcs(topology, port, class, 0, half)
            }
        } else {
            mask(0..self.vcs)
        };
        Route {
            adaptive_ports: 0,
            adaptive_vcs: 0,
            escape_port: port,
            escape_vcs,
        }
    }

    /// The VCs of the `width` starting at `base` that a hop on `port` of dateline class
    /// `class` may use: all of them off the torus, else those the ring rule allows.
    #[inline]
    fn ring_vcs(
        &self,
        topology: &Topology,
        port: PortId,
        class: Dateline,
        base: u32,
        width: u32,
    ) -> VcMask {
        let all = mask(base..base + width);
        let Topology::Torus(t) = topology else {
            return all;
        };
        if !self.dateline {
            return all;
        }
        if self.split {
            let up = t.port_dim(port.0 as u32).1;
            let lower = width / 2;
            if (class != Dateline::Never) == up {
                mask(base + lower..base + width)
            } else {
                mask(base..base + lower)
            }
        } else {
            match class {
                Dateline::Before => all & (0x5555_5555_5555_5555 << base),
                Dateline::After => all & (0xaaaa_aaaa_aaaa_aaaa << base),
                Dateline::Never => all,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{TopologyConfig, TorusVcs};

    fn topo(cfg: TopologyConfig) -> Topology {
        Topology::from_config(&cfg).unwrap()
    }

    fn torus(k: u32, bidirectional: bool) -> Topology {
        topo(TopologyConfig::Torus {
            k,
            n: 2,
            bidirectional,
            c: 1,
        })
    }

    /// Whether the hop from `cur` on `port` of a torus is the wrap-around link of its
    /// ring.
    fn wraps(t: &crate::topology::torus::Torus, cur: u32, port: u32) -> bool {
        let (dim, up) = t.port_dim(port);
        let c = t.grid.coord(cur, dim);
        if up {
            c == t.grid.k - 1
        } else {
            c == 0
        }
    }

    /// Walks message `id` from its source to `dst` hop by hop as the routers would,
    /// checking every hop's VCs against the phase's class; returns the nodes visited.
    fn walk(t: &Topology, r: &RoutingFn, id: MsgId, dst: NodeId, rule: TorusVcs) -> Vec<u32> {
        let v = r.vcs;
        let half = v / 2;
        let mut state = RouteState::default();
        let mut cur = id.src();
        let mut path = vec![cur.0];
        // Per phase and ring: crossed the wrap-around; the mask of the ring's first hop.
        let mut crossed = [[false; 8]; 2];
        let mut first: [[Option<VcMask>; 8]; 2] = [[None; 8]; 2];
        while !r.delivers(t, cur, dst, id, &state) {
            let route = r.route_msg(t, cur, dst, id, &mut state);
            assert_eq!(route.adaptive_ports, 0);
            let vcs = route.escape_vcs;
            assert_ne!(vcs, 0, "no VC at {cur:?}");
            let (phase, lo, hi) = if state.phase2() {
                (1, half, v)
            } else {
                (0, 0, half)
            };
            // Phase 1 and phase 2 never share a VC.
            assert_eq!(
                vcs & !mask(lo..hi),
                0,
                "phase {phase} off its half: {vcs:b}"
            );
            if let Topology::Torus(tt) = t {
                let p = route.escape_port.0 as u32;
                let dim = tt.port_dim(p).0 as usize;
                match rule {
                    TorusVcs::Dateline => {
                        let even = mask(lo..hi) & (0x5555_5555_5555_5555 << lo);
                        if wraps(tt, cur.0, p) {
                            assert_eq!(vcs & !even, 0, "class 1 on the wrap-around");
                            crossed[phase][dim] = true;
                        } else if crossed[phase][dim] {
                            assert_eq!(vcs & even, 0, "class 0 after the wrap-around");
                        }
                    }
                    TorusVcs::WrapSplit => {
                        let m = *first[phase][dim].get_or_insert(vcs);
                        assert_eq!(vcs, m, "one half of the phase's VCs per ring");
                        assert_eq!(vcs.count_ones(), (hi - lo) / 2);
                    }
                }
            }
            cur = t.neighbor(cur, route.escape_port).unwrap();
            path.push(cur.0);
            assert!(path.len() <= 4 * t.diameter() as usize + 1, "lost");
        }
        path
    }

    #[test]
    fn every_message_reaches_its_destination_through_its_intermediate_node() {
        for (t, rule) in [
            (
                topo(TopologyConfig::Mesh { k: 4, n: 2, c: 1 }),
                TorusVcs::Dateline,
            ),
            (torus(4, true), TorusVcs::Dateline),
            (torus(5, true), TorusVcs::Dateline),
            (torus(4, true), TorusVcs::WrapSplit),
            (torus(4, false), TorusVcs::Dateline),
        ] {
            for kind in [Routing::Valiant, Routing::Romm] {
                let r = RoutingFn::new(&t, kind, false, 4)
                    .unwrap()
                    .with_torus_vcs(rule)
                    .with_salt(3, 0);
                let n = t.nodes() as u32;
                for s in 0..n {
                    for d in (0..n).filter(|&d| d != s) {
                        for seq in 0..4 {
                            let id = MsgId::new(NodeId(s), seq);
                            let mid = r.intermediate(&t, id, NodeId(d));
                            let path = walk(&t, &r, id, NodeId(d), rule);
                            assert!(
                                path.contains(&mid.0),
                                "{kind:?} {s}->{d} missed {mid:?}: {path:?}"
                            );
                            let hops = path.len() as u32 - 1;
                            let via = t.distance(NodeId(s), mid) + t.distance(mid, NodeId(d));
                            assert_eq!(hops, via, "{kind:?} {s}->{d} via {mid:?}");
                            if kind == Routing::Romm {
                                assert_eq!(hops, t.distance(NodeId(s), NodeId(d)), "not minimal");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn valiant_draws_its_intermediate_nodes_evenly_over_the_network() {
        let t = torus(4, true);
        let r = RoutingFn::new(&t, Routing::Valiant, false, 4)
            .unwrap()
            .with_salt(1, 0);
        let (src, dst) = (NodeId(5), NodeId(6));
        let mut count = [0u32; 16];
        for seq in 0..16_000 {
            count[r.intermediate(&t, MsgId::new(src, seq), dst).idx()] += 1;
        }
        // 1000 expected per node (source and destination included); σ ≈ 31.
        assert!(count.iter().all(|&c| (850..1150).contains(&c)), "{count:?}");
        // Another replication draws other nodes.
        let r2 = r.clone().with_salt(1, 1);
        let same = (0..1000)
            .filter(|&q| {
                let id = MsgId::new(src, q);
                r.intermediate(&t, id, dst) == r2.intermediate(&t, id, dst)
            })
            .count();
        assert!(same < 150, "{same}");
    }

    #[test]
    fn romm_draws_its_intermediate_nodes_over_the_minimal_rectangle() {
        // Mesh (0,0) → (2,1): the 3 × 2 rectangle; torus 8-ring (1,0) → (6,7): the
        // minimal way is down in both rings, x in {1,0,7,6}, y in {0,7}.
        let mesh = topo(TopologyConfig::Mesh { k: 4, n: 2, c: 1 });
        let t8 = torus(8, true);
        for (t, s, d, want) in [
            (&mesh, 0u32, 2 + 4, vec![0u32, 1, 2, 4, 5, 6]),
            (&t8, 1, 6 + 7 * 8, vec![1, 0, 7, 6, 57, 56, 63, 62]),
        ] {
            let r = RoutingFn::new(t, Routing::Romm, false, 4).unwrap();
            let mut seen = std::collections::BTreeMap::new();
            for seq in 0..4000 {
                let m = r.intermediate(t, MsgId::new(NodeId(s), seq), NodeId(d));
                *seen.entry(m.0).or_insert(0u32) += 1;
            }
            let mut want = want;
            want.sort();
            assert_eq!(seen.keys().copied().collect::<Vec<_>>(), want);
            let each = 4000 / want.len() as u32;
            assert!(
                seen.values()
                    .all(|&c| c > each * 8 / 10 && c < each * 12 / 10),
                "{seen:?}"
            );
        }
    }

    #[test]
    fn an_intermediate_node_at_the_source_starts_in_phase_two_and_at_the_destination_never_leaves_phase_one(
    ) {
        let t = topo(TopologyConfig::Mesh { k: 4, n: 2, c: 1 });
        let r = RoutingFn::new(&t, Routing::Valiant, false, 4).unwrap();
        let (src, dst) = (NodeId(0), NodeId(3));
        let find = |want: NodeId| {
            (0..)
                .map(|q| MsgId::new(src, q))
                .find(|&id| r.intermediate(&t, id, dst) == want)
                .unwrap()
        };
        let mut state = RouteState::default();
        let route = r.route_msg(&t, src, dst, find(src), &mut state);
        assert!(state.phase2());
        assert_eq!(route.escape_vcs, 0b1100);
        let mut state = RouteState::default();
        let route = r.route_msg(&t, NodeId(2), dst, find(dst), &mut state);
        assert!(!state.phase2());
        assert_eq!(route.escape_vcs, 0b0011);
    }

    #[test]
    fn valiant_and_romm_need_two_vcs_on_a_mesh_and_four_on_a_torus() {
        let mesh = topo(TopologyConfig::Mesh { k: 4, n: 2, c: 1 });
        let t = torus(4, true);
        for kind in [Routing::Valiant, Routing::Romm] {
            assert!(RoutingFn::new(&mesh, kind, false, 1).is_err());
            assert!(RoutingFn::new(&mesh, kind, false, 2).is_ok());
            let err = RoutingFn::new(&t, kind, false, 3).unwrap_err().to_string();
            assert!(err.contains("at least 4") && err.contains("phase"), "{err}");
            assert!(RoutingFn::new(&t, kind, false, 4).is_ok());
            assert!(RoutingFn::new(&t, kind, true, 1).is_ok());
            let cube = topo(TopologyConfig::Hypercube { dim: 4 });
            let err = RoutingFn::new(&cube, kind, false, 4)
                .unwrap_err()
                .to_string();
            assert!(err.contains("meshes and tori"), "{err}");
        }
    }
}

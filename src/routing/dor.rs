//! Deterministic routing: e-cube on hypercubes (lowest differing dimension first) and
//! dimension order on tori and meshes (lowest dimension with a non-zero offset first);
//! on meshes also the reverse order (highest dimension first), YX of `XyYx` routing.
//!
//! On a bidirectional ring of even k an offset of exactly k/2 is minimal both ways. Always
//! going up would load the upward channels 25% more than the downward ones under uniform
//! traffic (k = 8: offsets 1–4 up, 5–7 down) and cost a fifth of the capacity, so the tie
//! is broken by the parity of the current coordinate: even goes up, odd goes down. The tie
//! only exists at the first hop in a dimension (one step later the offset is k/2 − 1), so
//! the route is still a fixed function of source and destination. `TorusTie::Random`
//! breaks it by a coin per message and ring instead ([`Tie::Coin`]), as BookSim does: the
//! same split in the mean, but a permutation's tied flows then go half each way instead of
//! all one way (an 8×8 torus under transpose: docs/booksim.md).

use crate::foundation::types::{NodeId, PortId};
use crate::topology::Topology;

/// Dateline class of a message in the ring it is travelling: it still has to cross the
/// wrap-around link, it has crossed it, or its path never crosses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dateline {
    /// The wrap-around link is ahead: class 0 only.
    Before,
    /// The wrap-around link is behind: class 1 only.
    After,
    /// The path in this ring never uses the wrap-around link: either class (and the
    /// only case off the torus).
    Never,
}

/// How a tie of offset k/2 on an even ring is broken (`config::TorusTie`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tie {
    /// By the parity of the current coordinate: even up, odd down.
    Parity,
    /// By the message's coin: bit `dim` set goes up in dimension `dim`.
    Coin(u64),
}

/// The dimension-order output port from `cur` towards `dst` (`cur != dst`) of a message
/// that started at `src`, and its dateline class on that port; ties broken by parity.
#[inline(always)]
pub fn dor_step(topology: &Topology, cur: NodeId, dst: NodeId, src: NodeId) -> (PortId, Dateline) {
    dor_step_tie(topology, cur, dst, src, Tie::Parity)
}

/// [`dor_step`] with the tie of an even ring broken by `tie`.
#[inline(always)]
pub fn dor_step_tie(
    topology: &Topology,
    cur: NodeId,
    dst: NodeId,
    src: NodeId,
    tie: Tie,
) -> (PortId, Dateline) {
    if let Topology::Concentrated(c) = topology {
        return concentrated_step(c, cur, dst, src, tie);
    }
    net_step(topology, cur, dst, src, tie)
}

/// Under concentration: a terminal link, or the router network's route between the
/// terminals' routers (out of line: the step of the papers' networks stays one
/// non-recursive function, inlined into the routing).
#[inline(never)]
fn concentrated_step(
    c: &crate::topology::Concentrated,
    cur: NodeId,
    dst: NodeId,
    src: NodeId,
    tie: Tie,
) -> (PortId, Dateline) {
    match c.terminal_step(cur.0, dst.0) {
        Some(p) => (PortId(p as u8), Dateline::Never),
        None => net_step(
            &c.net,
            cur,
            NodeId(c.router_of(dst.0)),
            NodeId(c.router_of(src.0)),
            tie,
        ),
    }
}

/// [`dor_step_tie`] on a network whose nodes are its routers.
#[inline(always)]
fn net_step(
    topology: &Topology,
    cur: NodeId,
    dst: NodeId,
    src: NodeId,
    tie: Tie,
) -> (PortId, Dateline) {
    match topology {
        Topology::Hypercube(_) => {
            let diff = cur.0 ^ dst.0;
            (PortId(diff.trailing_zeros() as u8), Dateline::Never)
        }
        Topology::Torus(t) => {
            for dim in 0..t.grid.n {
                let st = t.dim_step(cur.0, dst.0, dim);
                if st.hops > 0 {
                    let up = if st.up && st.down {
                        match tie {
                            Tie::Parity => t.grid.coord(cur.0, dim) % 2 == 0,
                            Tie::Coin(bits) => bits >> dim & 1 == 1,
                        }
                    } else {
                        st.up
                    };
                    let class = if t.crosses_wrap(cur.0, dst.0, dim, up) {
                        Dateline::Before
                    } else if t.crosses_wrap(src.0, cur.0, dim, up) {
                        Dateline::After
                    } else {
                        Dateline::Never
                    };
                    return (PortId(t.port(dim, up) as u8), class);
                }
            }
            (PortId(0), Dateline::Never)
        }
        Topology::Mesh(m) => {
            for dim in 0..m.grid.n {
                let a = m.grid.coord(cur.0, dim);
                let b = m.grid.coord(dst.0, dim);
                if a != b {
                    return (PortId((2 * dim + u32::from(b < a)) as u8), Dateline::Never);
                }
            }
            (PortId(0), Dateline::Never)
        }
        // The source route (dimension order over the torus of switches).
        Topology::Hosts(h) => (PortId(h.route_port(src.0, dst.0, cur.0)), Dateline::Never),
        Topology::Dragonfly(d) => (PortId(d.min_port(cur.0, dst.0) as u8), Dateline::Never),
        Topology::FlatFly(f) => (PortId(f.dor_port(cur.0, dst.0) as u8), Dateline::Never),
        // Shortest-path port (`dor_step_tie` takes concentration first, so never here);
        // the Manhattan Street network has no dimension order and
        // wormhole routing there is refused before any header is routed.
        Topology::ManhattanStreet(_) | Topology::Concentrated(_) => {
            let p = topology.minimal_ports(cur, dst).first_one().unwrap_or(0);
            (PortId(p as u8), Dateline::Never)
        }
    }
}

/// The mesh port from `cur` towards `dst` (`cur != dst`) in reverse dimension order
/// (highest dimension with a non-zero offset first: YX on a 2-D mesh), the second order
/// of `XyYx` routing.
#[inline]
pub fn mesh_step_descending(grid: &crate::topology::Grid, cur: NodeId, dst: NodeId) -> PortId {
    for dim in (0..grid.n).rev() {
        let a = grid.coord(cur.0, dim);
        let b = grid.coord(dst.0, dim);
        if a != b {
            return PortId((2 * dim + u32::from(b < a)) as u8);
        }
    }
    PortId(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    #[test]
    fn ecube_corrects_the_lowest_dimension_first() {
        let t = Topology::from_config(&TopologyConfig::Hypercube { dim: 4 }).unwrap();
        assert_eq!(
            dor_step(&t, NodeId(0b0000), NodeId(0b1010), NodeId(0)).0,
            PortId(1)
        );
        assert_eq!(
            dor_step(&t, NodeId(0b0010), NodeId(0b1010), NodeId(0)).0,
            PortId(3)
        );
    }

    #[test]
    fn dor_follows_every_dimension_in_order_to_the_destination() {
        for cfg in [
            TopologyConfig::Torus {
                k: 5,
                n: 3,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Torus {
                k: 4,
                n: 2,
                bidirectional: false,
                c: 1,
            },
            TopologyConfig::Mesh { k: 4, n: 3, c: 1 },
            TopologyConfig::Hypercube { dim: 5 },
        ] {
            let t = Topology::from_config(&cfg).unwrap();
            for s in 0..t.nodes() as u32 {
                for d in 0..t.nodes() as u32 {
                    let (mut cur, mut hops, mut last_dim) = (NodeId(s), 0, 0);
                    while cur != NodeId(d) {
                        let (p, _) = dor_step(&t, cur, NodeId(d), NodeId(s));
                        assert!(t.minimal_ports(cur, NodeId(d))[p.idx()], "{cfg:?} {s}->{d}");
                        let dim = match &t {
                            Topology::Hypercube(_) => p.0 as u32,
                            Topology::Torus(tt) => tt.port_dim(p.0 as u32).0,
                            _ => p.0 as u32 / 2,
                        };
                        assert!(dim >= last_dim, "dimension order violated");
                        last_dim = dim;
                        cur = t.neighbor(cur, p).unwrap();
                        hops += 1;
                    }
                    assert_eq!(hops, t.distance(NodeId(s), NodeId(d)));
                }
            }
        }
    }

    #[test]
    fn the_descending_order_corrects_y_before_x() {
        let t = Topology::from_config(&TopologyConfig::Mesh { k: 4, n: 2, c: 1 }).unwrap();
        let Topology::Mesh(m) = &t else {
            unreachable!()
        };
        // (0,0) → (2,3): +Y first, then +X once the row is right.
        assert_eq!(
            mesh_step_descending(&m.grid, NodeId(0), NodeId(2 + 3 * 4)),
            PortId(2)
        );
        assert_eq!(
            mesh_step_descending(&m.grid, NodeId(3 * 4), NodeId(2 + 3 * 4)),
            PortId(0)
        );
        // (2,3) → (0,0): −Y, then −X.
        assert_eq!(
            mesh_step_descending(&m.grid, NodeId(2 + 3 * 4), NodeId(0)),
            PortId(3)
        );
        assert_eq!(
            mesh_step_descending(&m.grid, NodeId(2), NodeId(0)),
            PortId(1)
        );
    }
}

//! Deterministic routing: e-cube on hypercubes (lowest differing dimension first) and
//! dimension order on tori and meshes (lowest dimension with a non-zero offset first;
//! on a bidirectional ring whose offset is exactly k/2 the upward direction is taken).

use crate::topology::Topology;
use crate::types::{NodeId, PortId};

/// The dimension-order output port from `cur` towards `dst` (`cur != dst`), and the
/// dateline class the message needs on it (always 0 off the torus).
#[inline]
pub fn dor_step(topology: &Topology, cur: NodeId, dst: NodeId) -> (PortId, u8) {
    match topology {
        Topology::Hypercube(_) => {
            let diff = cur.0 ^ dst.0;
            (PortId(diff.trailing_zeros() as u8), 0)
        }
        Topology::Torus(t) => {
            for dim in 0..t.grid.n {
                let st = t.dim_step(cur.0, dst.0, dim);
                if st.hops > 0 {
                    let up = st.up;
                    let class = u8::from(!t.crosses_wrap(cur.0, dst.0, dim, up));
                    return (PortId(t.port(dim, up) as u8), class);
                }
            }
            (PortId(0), 0)
        }
        Topology::Mesh(m) => {
            for dim in 0..m.grid.n {
                let a = m.grid.coord(cur.0, dim);
                let b = m.grid.coord(dst.0, dim);
                if a != b {
                    return (PortId((2 * dim + u32::from(b < a)) as u8), 0);
                }
            }
            (PortId(0), 0)
        }
        // Shortest-path port; the Manhattan Street network has no dimension order and
        // wormhole routing there is refused before any header is routed.
        Topology::ManhattanStreet(_) => {
            let p = topology.minimal_ports(cur, dst).first_one().unwrap_or(0);
            (PortId(p as u8), 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    #[test]
    fn ecube_corrects_the_lowest_dimension_first() {
        let t = Topology::from_config(&TopologyConfig::Hypercube { dim: 4 }).unwrap();
        assert_eq!(dor_step(&t, NodeId(0b0000), NodeId(0b1010)).0, PortId(1));
        assert_eq!(dor_step(&t, NodeId(0b0010), NodeId(0b1010)).0, PortId(3));
    }

    #[test]
    fn dor_follows_every_dimension_in_order_to_the_destination() {
        for cfg in [
            TopologyConfig::Torus { k: 5, n: 3, bidirectional: true },
            TopologyConfig::Torus { k: 4, n: 2, bidirectional: false },
            TopologyConfig::Mesh { k: 4, n: 3 },
            TopologyConfig::Hypercube { dim: 5 },
        ] {
            let t = Topology::from_config(&cfg).unwrap();
            for s in 0..t.nodes() as u32 {
                for d in 0..t.nodes() as u32 {
                    let (mut cur, mut hops, mut last_dim) = (NodeId(s), 0, 0);
                    while cur != NodeId(d) {
                        let (p, _) = dor_step(&t, cur, NodeId(d));
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
}

//! The persistent deflection rule of paper 003 (§3), for networks whose nodes have two
//! outputs (the Manhattan Street network). It is evaluated afresh at every node from the
//! current node and the destination (spec A17): where both outputs lie on a shortest
//! path (a "don't care" node for that destination) the preferred one is drawn with
//! probability ½ from the node's random stream; at a "preference" node it is the output
//! on the shortest path. What happens when the preferred output is full — preemption,
//! deflection, blocking — is the switching mode's business (`switching::deflection`).

use crate::foundation::rng::{below, NodeRng};
use crate::foundation::types::{NodeId, PortId};
use crate::topology::Topology;

/// The preferred output of a worm at `cur` bound for `dst` ≠ `cur`, and whether `cur` is
/// a preference node for `dst` (false: a don't-care node, where the choice was random).
#[inline]
pub fn preferred(
    topology: &Topology,
    cur: NodeId,
    dst: NodeId,
    rng: &mut NodeRng,
) -> (PortId, bool) {
    let set = topology.minimal_ports(cur, dst);
    let bits = set.as_raw_slice()[0] & 0b11;
    match bits {
        0b01 => (PortId(0), true),
        0b10 => (PortId(1), true),
        _ => (PortId(below(rng, 2) as u8), false),
    }
}

/// The other output of a two-output node.
#[inline]
pub fn other(port: PortId) -> PortId {
    PortId(1 - port.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::foundation::rng::stream;

    #[test]
    fn the_preferred_output_is_always_on_a_shortest_path_and_dont_care_splits_evenly() {
        let t = Topology::from_config(&TopologyConfig::ManhattanStreet { k: 6 }).unwrap();
        let mut rng = stream(1, 0, 0, 3);
        let (mut dc, mut zero) = (0u32, 0u32);
        for a in 0..36 {
            for b in 0..36 {
                if a == b {
                    continue;
                }
                let (cur, dst) = (NodeId(a), NodeId(b));
                let (p, pref) = preferred(&t, cur, dst, &mut rng);
                let next = t.neighbor(cur, p).unwrap();
                assert_eq!(t.distance(next, dst) + 1, t.distance(cur, dst));
                if !pref {
                    dc += 1;
                    zero += (p.0 == 0) as u32;
                    let q = t.neighbor(cur, other(p)).unwrap();
                    assert_eq!(t.distance(q, dst) + 1, t.distance(cur, dst));
                }
            }
        }
        // 6×6: 25.71% of the ordered pairs are don't-care (spec 1.1).
        assert_eq!(dc, 324);
        assert!((130..=194).contains(&zero), "{zero} of {dc}");
    }
}

//! Minimal routing on the dragonfly (BookSim2's `min_dragonflynew`): local–global–local —
//! a local hop to the router of the source group that holds the global link to the
//! destination's group (none when the source router holds it), that global link, and a
//! local hop to the destination router (none when the global link lands on it); within a
//! group, one local hop. The route itself is `topology::dragonfly`'s; this module owns its
//! virtual-channel classes.
//!
//! VC classes: class 0 before the global hop, class 1 on the global link and after it
//! (BookSim's VC 0 and VC 1: a message's phase turns 1 at the global output, its
//! "optical dateline"). With V VCs per port class 0 is VCs `0..V/2` and class 1
//! `V/2..V`, so V = 2 is BookSim's exactly. Class-0 channels (local links of the source
//! group) lead only to class-1 channels or to terminals, and class-1 channels (global
//! links and the destination group's local links) only to class-1 local links of the next
//! group — one local hop at most — or to terminals, so no cycle of channel dependencies
//! exists and minimal routing is deadlock-free with 2 VCs (`RoutingFn::min_vcs`). The
//! terminal links (concentration) are the first and last channels of every path and take
//! every VC.
//!
//! On the flattened butterfly minimal routing is dimension order ([`crate::routing::dor`]):
//! one hop per differing dimension, lowest first; dimension-d channels lead only to
//! higher dimensions' channels or to terminals, so one class (every VC) is deadlock-free.

use crate::foundation::types::{NodeId, PortId};
use crate::topology::Dragonfly;

/// The minimal route's port at router `cur` towards router `dst` (≠ `cur`) of a message
/// that entered the network at router `src`, and whether it is in class 1 (on or after
/// its global hop).
#[inline]
pub fn min_step(d: &Dragonfly, cur: NodeId, dst: NodeId, src: NodeId) -> (PortId, bool) {
    let port = d.min_port(cur.0, dst.0);
    let after = d.group_of(cur.0) != d.group_of(src.0) || d.is_global(port);
    (PortId(port as u8), after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_1_starts_at_the_global_hop_and_never_returns_to_class_0() {
        let d = Dragonfly { p: 2, a: 4, h: 2 };
        let r = d.routers() as u32;
        for s in 0..r {
            for t in 0..r {
                let (mut cur, mut was_after) = (s, false);
                while cur != t {
                    let (q, after) = min_step(&d, NodeId(cur), NodeId(t), NodeId(s));
                    assert!(after || !was_after, "{s}->{t} back to class 0 at {cur}");
                    assert_eq!(d.is_global(q.0 as u32), after && !was_after);
                    was_after = after;
                    cur = d.neighbor(cur, q.0 as u32).unwrap();
                }
                // Within a group: class 0 throughout.
                if d.group_of(s) == d.group_of(t) {
                    assert!(!was_after);
                }
            }
        }
    }
}

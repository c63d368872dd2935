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
//!
//! `Valiant` on the dragonfly (Kim et al.'s, as BookSim's `ugal_dragonflynew` routes
//! its non-minimal packets): a minimal route to a random intermediate *group*, then a
//! minimal route to the destination. The intermediate group is drawn uniformly over the
//! G groups from the message id and the run's salt (seed and replication), as Valiant on
//! meshes draws its node, so every router recomputes it and the header carries only the
//! phase ([`crate::routing::RouteState::phase2`]). Phase 1 aims at the router where the
//! source group's global link to the intermediate group lands; the message enters phase
//! 2 as soon as it is in the intermediate group. A draw of the source's or the
//! destination's group, and a destination in the source's group, make the route the
//! minimal one (phase 2 from the source router). Why a group and not BookSim's random
//! intermediate router: the global links are what Valiant spreads the load over, a
//! router adds a local hop in the intermediate group that balances nothing, and
//! switching phase at the group keeps three VC classes acyclic (below), where BookSim's
//! switch at the intermediate router puts that extra local hop on VC 0 together with the
//! source group's local hops, whose dependencies on the same VC 0 global links can close
//! a cycle.
//!
//! Valiant's VC classes (V VCs per port in three thirds: class c is VCs
//! `c·V/3 .. (c+1)·V/3`, so V = 3 is BookSim's VC = phase of `ugal_dragonflynew`):
//! class 0 for phase 1 (the source group's local hop and the global link to the
//! intermediate group); class 1 for phase 2 before its global hop (the intermediate
//! group's local hop, or the source group's local hop of a minimal route); class 2 on
//! phase 2's global link and after it (the destination group's local hop, and the one
//! local hop of a message within its group). Class-0 local channels lead only to class-0
//! global channels, class-0 global channels to class-1 local or class-2 global channels,
//! class-1 channels to class-2 global channels, class-2 global channels to class-2 local
//! channels or terminals, class-2 local channels to terminals: every dependency goes up a
//! class or from a local to a global channel within class 0 and 2, never back, so the
//! graph is acyclic and Valiant needs 3 VCs (`RoutingFn::min_vcs`).
//!
//! `Valiant` on the flattened butterfly: dimension order to an intermediate router drawn
//! uniformly over the routers, then dimension order to the destination's router; phase 1
//! on VCs `0..V/2`, phase 2 on `V/2..V` (each phase's dimension order is acyclic, and
//! phase 2 never waits for phase 1): 2 VCs. A phase-1 message passing its destination's
//! router goes on to its intermediate router, as on meshes.
//!
//! `UgalLocal` (UGAL-L): at the source router the minimal first hop is offered as the
//! adaptive candidate on the VCs of the minimal path's class (dragonfly: class 1, or 2
//! when the hop is global; flattened butterfly: phase 2's half) and Valiant's first hop
//! as the escape candidate on class 0 (phase 1's half); the router's VC allocation
//! picks one from its output VCs' state, and [`RoutingFn::after_hop`] records a minimal
//! pick as phase 2. The routing function cannot see the router's credits, so BookSim's
//! `ugal` rule (used credits × hops + threshold) is not what decides (docs/dragonfly.md).

use crate::foundation::types::{MsgId, NodeId, PortId};
use crate::routing::{mask, mix, Route, RouteState, RoutingFn, VcMask};
use crate::topology::concentration::Place;
use crate::topology::{Dragonfly, Topology};

/// The minimal route's port at router `cur` towards router `dst` (≠ `cur`) of a message
/// that entered the network at router `src`, and whether it is in class 1 (on or after
/// its global hop).
#[inline]
pub fn min_step(d: &Dragonfly, cur: NodeId, dst: NodeId, src: NodeId) -> (PortId, bool) {
    let port = d.min_port(cur.0, dst.0);
    let after = d.group_of(cur.0) != d.group_of(src.0) || d.is_global(port);
    (PortId(port as u8), after)
}

/// Uniform draw in `0..m` from the 64 bits of `h` (multiply-shift).
#[inline]
fn draw(h: u64, m: u32) -> u32 {
    ((h as u128 * m as u128) >> 64) as u32
}

/// Valiant's intermediate on the dragonfly (a group, uniform over the G groups) or the
/// flattened butterfly (a router, uniform over the routers) of message `id` under a
/// routing salted with `salt`: a pure function of both.
#[inline]
pub fn valiant_intermediate(topology: &Topology, salt: u64, id: MsgId) -> u32 {
    let h = mix(id.0 ^ salt ^ 0x4446_4c59_5641_4c21);
    match topology.dragonfly() {
        Some(d) => draw(h, d.groups()),
        None => draw(h, topology.routers() as u32),
    }
}

/// One Valiant step on the dragonfly at router `cur` towards router `dst` of a message
/// from router `src` whose intermediate group is `mid`: enters phase 2 in `state` where
/// this router starts it, and returns the port and the VC class (0, 1 or 2, module doc).
#[inline]
pub fn valiant_step(
    d: &Dragonfly,
    cur: u32,
    dst: u32,
    src: u32,
    mid: u32,
    state: &mut RouteState,
) -> (PortId, u32) {
    let (gc, gd) = (d.group_of(cur), d.group_of(dst));
    if !state.phase2() && (gc == mid || gd == mid || gc == gd) {
        state.set_phase2();
    }
    if state.phase2() {
        let port = d.min_port(cur, dst);
        let class = if d.is_global(port) || gc == gd { 2 } else { 1 };
        (PortId(port as u8), class)
    } else {
        // Where the source group's link to the intermediate group lands.
        let landing = d.gateway(mid, d.group_of(src)).0;
        (PortId(d.min_port(cur, landing) as u8), 0)
    }
}

/// The VCs of class `class` (0, 1, 2) of `vcs` VCs split in thirds.
#[inline]
pub fn third(class: u32, vcs: u32) -> VcMask {
    mask(class * vcs / 3..(class + 1) * vcs / 3)
}

impl RoutingFn {
    /// Valiant's candidates on the dragonfly and the flattened butterfly (any
    /// concentration): the terminal link from a terminal or, in phase 2, to the
    /// destination terminal (every VC); else the phase's step on its class's VCs.
    pub(super) fn route_valiant_today(
        &self,
        topology: &Topology,
        cur: NodeId,
        dst: NodeId,
        id: MsgId,
        state: &mut RouteState,
    ) -> Route {
        let one = |port: u32, vcs: VcMask| Route {
            adaptive_ports: 0,
            adaptive_vcs: 0,
            escape_port: PortId(port as u8),
            escape_vcs: vcs,
        };
        let all = mask(0..self.vcs);
        let conc = match topology {
            Topology::Concentrated(c) => Some(c),
            _ => None,
        };
        if let Some(c) = conc {
            if matches!(c.place(cur.0), Place::Terminal { .. }) {
                // From a terminal: its one link to its router.
                return one(c.terminal_step(cur.0, dst.0).unwrap_or(0), all);
            }
        }
        let (s, t) = (topology.router_of(id.src()).0, topology.router_of(dst).0);
        let mid = valiant_intermediate(topology, self.salt, id);
        if let Some(d) = topology.dragonfly() {
            if let Some(c) = conc {
                if let Some(p) = c.terminal_step(cur.0, dst.0) {
                    // Phase 1 never reaches the destination's router (module doc).
                    return one(p, all);
                }
            }
            if self.kind == crate::config::Routing::UgalLocal && cur.0 == s && !state.phase2() {
                let mut minimal = RouteState::default();
                minimal.set_phase2();
                let (pm, cm) = valiant_step(d, cur.0, t, s, mid, &mut minimal);
                let (pv, cv) = valiant_step(d, cur.0, t, s, mid, state);
                if !state.phase2() && self.dragonfly {
                    // The choice: minimal hop as the adaptive candidate (asked first),
                    // Valiant's as the escape one; `after_hop` records which was taken.
                    return Route {
                        adaptive_ports: 1 << pm.0,
                        adaptive_vcs: third(cm, self.vcs),
                        escape_port: pv,
                        escape_vcs: third(cv, self.vcs),
                    };
                }
                if !state.phase2() {
                    // Unsafe routing: one class, the choice cannot be told by the VC.
                    state.set_phase2();
                    return one(pm.0 as u32, all);
                }
            }
            let (port, class) = valiant_step(d, cur.0, t, s, mid, state);
            let vcs = if self.dragonfly {
                third(class, self.vcs)
            } else {
                all
            };
            return one(port.0 as u32, vcs);
        }
        let f = topology
            .flatfly()
            .expect("Valiant today: a dragonfly or a flattened butterfly");
        let half = self.vcs / 2;
        if self.kind == crate::config::Routing::UgalLocal && cur.0 == s && !state.phase2() {
            if cur.0 == mid || s == t || !self.halves {
                // Nothing to choose (or, unsafe, no VC to tell the choice by): minimal.
                state.set_phase2();
            } else {
                // The minimal hop on phase 2's VCs (asked first), Valiant's on phase 1's.
                return Route {
                    adaptive_ports: 1 << f.dor_port(cur.0, t),
                    adaptive_vcs: mask(half..self.vcs),
                    escape_port: PortId(f.dor_port(cur.0, mid) as u8),
                    escape_vcs: mask(0..half),
                };
            }
        }
        if !state.phase2() && cur.0 == mid {
            state.set_phase2();
        }
        if state.phase2() {
            if let Some(p) = conc.and_then(|c| c.terminal_step(cur.0, dst.0)) {
                return one(p, all);
            }
        }
        let (target, vcs) = match (state.phase2(), self.halves) {
            (_, false) => (if state.phase2() { t } else { mid }, all),
            (false, true) => (mid, mask(0..half)),
            (true, true) => (t, mask(half..self.vcs)),
        };
        one(f.dor_port(cur.0, target), vcs)
    }
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
    #[test]
    fn valiant_goes_through_its_intermediate_group_and_its_classes_only_rise() {
        let d = Dragonfly { p: 2, a: 4, h: 2 };
        let r = d.routers() as u32;
        let mut through = vec![0u32; d.groups() as usize];
        for s in 0..r {
            for t in 0..r {
                for mid in 0..d.groups() {
                    let mut state = RouteState::default();
                    let (mut cur, mut last) = (s, (0u32, false));
                    let (mut hops, mut globals, mut visited_mid) = (0, 0, false);
                    while cur != t {
                        let (q, class) = valiant_step(&d, cur, t, s, mid, &mut state);
                        let global = d.is_global(q.0 as u32);
                        // Within class 0 only local → global, within class 2 only
                        // global → local; else the class rises.
                        let same = match class {
                            0 => global && !last.1,
                            2 => !global && last.1,
                            _ => false,
                        };
                        assert!(
                            hops == 0 || class > last.0 || (class == last.0 && same),
                            "{s}->{t} via {mid}: class {class} after {last:?}"
                        );
                        last = (class, global);
                        globals += u32::from(global);
                        cur = d.neighbor(cur, q.0 as u32).unwrap();
                        visited_mid |= d.group_of(cur) == mid;
                        hops += 1;
                        assert!(hops <= 5, "{s}->{t} via {mid} loops");
                    }
                    let (gs, gt) = (d.group_of(s), d.group_of(t));
                    if gs == gt || mid == gs || mid == gt {
                        // The minimal route, on classes 1 and 2.
                        assert_eq!(hops, d.distance(s, t), "{s}->{t} via {mid}");
                    } else {
                        assert!(visited_mid && globals == 2, "{s}->{t} via {mid}");
                        through[mid as usize] += 1;
                    }
                }
            }
        }
        // Every group serves as an intermediate for the others' traffic alike.
        assert!(through.iter().all(|&n| n == through[0]), "{through:?}");
    }

    #[test]
    fn valiant_draws_every_intermediate_group_about_equally_and_per_salt() {
        use crate::config::TopologyConfig;
        let t = Topology::from_config(&TopologyConfig::Dragonfly { p: 2, a: 4, h: 2 }).unwrap();
        let mut count = [0u32; 9];
        let mut differ = 0;
        for seq in 0..9000 {
            let id = MsgId::new(NodeId(40), seq);
            let g = valiant_intermediate(&t, 5, id);
            count[g as usize] += 1;
            differ += u32::from(g != valiant_intermediate(&t, 6, id));
        }
        assert!(count.iter().all(|&c| (850..1150).contains(&c)), "{count:?}");
        assert!(differ > 7000, "{differ}");
    }

    #[test]
    fn third_splits_the_vcs_into_three_classes() {
        assert_eq!(
            (third(0, 3), third(1, 3), third(2, 3)),
            (0b001, 0b010, 0b100)
        );
        assert_eq!(
            (third(0, 4), third(1, 4), third(2, 4)),
            (0b0001, 0b0010, 0b1100)
        );
        assert_eq!(third(0, 6) | third(1, 6) | third(2, 6), 0b111111);
    }
    #[test]
    fn ugal_offers_both_first_hops_at_the_source_and_follows_the_one_taken() {
        use crate::config::{Routing, TopologyConfig};
        let t = Topology::from_config(&TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 }).unwrap();
        let d = t.dragonfly().unwrap();
        let r = RoutingFn::new(&t, Routing::UgalLocal, false, 3)
            .unwrap()
            .with_salt(1, 0);
        // Router 0 (group 0) to router 9 (group 2), a message whose intermediate group
        // is neither.
        let (src, dst) = (NodeId(0), NodeId(9));
        let id = (0..)
            .map(|s| MsgId::new(src, s))
            .find(|&id| !matches!(valiant_intermediate(&t, r.salt, id), 0 | 2))
            .unwrap();
        let route = r.route(&t, src, dst, id);
        assert_eq!(
            route.adaptive_ports,
            1 << d.min_port(0, 9),
            "the minimal hop"
        );
        assert_eq!(route.adaptive_vcs & route.escape_vcs, 0, "told apart by VC");
        assert_eq!(route.escape_vcs, third(0, 3), "Valiant's hop on class 0");
        for (vc, minimal) in [(route.adaptive_vcs.trailing_zeros(), true), (0, false)] {
            let mut state = RouteState::default();
            let first = r.route_msg(&t, src, dst, id, &mut state);
            r.after_hop(&first, vc as usize, &mut state);
            assert_eq!(state.phase2(), minimal);
            let port = if minimal {
                first.adaptive_ports.trailing_zeros() as u8
            } else {
                first.escape_port.0
            };
            let next = d.neighbor(0, port as u32).unwrap();
            let again = r.route_msg(&t, NodeId(next), dst, id, &mut state);
            // Past the source no choice: one port.
            assert_eq!(again.adaptive_ports, 0);
            if minimal {
                assert_eq!(again.escape_port.0 as u32, d.min_port(next, 9));
            }
        }
    }
}

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
//! `valiant_intermediate: Router` (BookSim's draw): the intermediate is a router, uniform
//! over all routers, and phase 1 ends at it ([`valiant_step_router`]). Four VC classes in
//! quarters of the V VCs: class 0 for the source group's local hop and the global link to
//! the intermediate group; class 1 for the local hop in that group to the intermediate
//! router; class 2 for the local hop from it to the global hop towards the destination,
//! and for the source group's local hop of a minimal route; class 3 for that global hop
//! and after it (and the one hop within a group). Class 0 goes local → global, classes 1
//! and 2 are one local hop each leading to a higher class, class 3 goes global → local:
//! acyclic with 4 VCs. BookSim's 3 (VC = phase) put the hop to the intermediate router
//! on VC 0 with the source group's hops that wait for VC-0 global links, a cycle
//! global → local → global between groups; no 3-class arrangement was found (the two
//! local hops around the intermediate router close local cycles in one class).
//!
//! `UgalLocal` (UGAL-L) is BookSim's `ugal_dragonflynew` rule: at the source router the
//! message draws its Valiant intermediate; a destination in the source's group or an
//! intermediate in either end's group gives the minimal route, else it goes minimal iff
//! [`ugal_takes_minimal`]`(q_min, q_nonmin)`, q the used credits (flits sent and not
//! credited back, over all VCs) of the two first hops' output ports, which the wormhole
//! routing controller supplies ([`RoutingFn::route_msg_with`]). The decision is kept in
//! the header's phase bit: minimal = phase 2 from the source, on Valiant's later classes.
//! On the flattened butterfly the same rule between the dimension-order hops to the
//! destination's router and to Valiant's intermediate router.
//!
//! `UgalGlobal` (UGAL-G, Kim, Dally, Scott & Abts 2008) makes the same choice at the same
//! place from the same draw, but q is the used credits of the *global channel* each
//! route would leave the source group by: the global output port of the source group's
//! gateway router towards the destination's group ([`Dragonfly::gateway`]; q_min) and
//! towards the intermediate's group (q_nonmin). Both gateways are in the source group,
//! which the partitioner keeps in one partition (a run that would split one is refused).
//! The paper treats UGAL-G as the ideal, global information no real router has, and
//! gives no threshold; BookSim has no UGAL-G. So the rule is [`ugal_takes_minimal`]
//! with BookSim's constants, and UGAL-L and UGAL-G differ only in the channels they
//! read. Which instant they read is the caller's ([`RoutingFn::route_msg_with`]): the
//! wormhole network gives both the credits as they stood when the cycle's routing began
//! (after the cycle's arrivals, before any flit of it left), so a gateway's credits do
//! not depend on whether it was stepped before the source router in that cycle, nor on
//! the thread count. The dragonfly's only: on the flattened butterfly both routes'
//! first channels leave the source router, which `UgalLocal` reads already.

use crate::config::Routing;
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

/// BookSim's UGAL threshold (`adaptive_threshold` of `ugal_dragonflynew`): the flits
/// by which the minimal port's queue may exceed twice the non-minimal one's.
pub const UGAL_THRESHOLD: u64 = 30;

/// BookSim's UGAL-L decision: the minimal route when `used_min ≤ 2 · used_nonmin + 30`,
/// the used credits (flits sent, not yet credited back) of the minimal and the
/// non-minimal first hop's output ports summed over their VCs; 2 is BookSim's
/// hard-coded non-minimal hop weight (1 the minimal one's).
#[inline]
pub fn ugal_takes_minimal(used_min: u32, used_nonmin: u32) -> bool {
    used_min as u64 <= 2 * used_nonmin as u64 + UGAL_THRESHOLD
}

/// Valiant's intermediate *router* on the dragonfly (`valiant_intermediate: Router`),
/// uniform over all routers, as BookSim's `ugal_dragonflynew` draws a terminal (its
/// router is then uniform): a pure function of the message id and the salt.
#[inline]
pub fn valiant_router(d: &Dragonfly, salt: u64, id: MsgId) -> u32 {
    draw(mix(id.0 ^ salt ^ 0x4446_4c59_5641_4c21), d.routers() as u32)
}

/// One Valiant step on the dragonfly through intermediate router `mid`
/// (`valiant_intermediate: Router`) at router `cur` towards router `dst` of a message
/// from router `src`: enters phase 2 in `state` at `mid` (or at once where the draw or
/// the destination is in the source's group, or the draw in the destination's), and
/// returns the port and the VC class (0 to 3, module doc).
#[inline]
pub fn valiant_step_router(
    d: &Dragonfly,
    cur: u32,
    dst: u32,
    src: u32,
    mid: u32,
    state: &mut RouteState,
) -> (PortId, u32) {
    let (gc, gd, gs, gm) = (
        d.group_of(cur),
        d.group_of(dst),
        d.group_of(src),
        d.group_of(mid),
    );
    if !state.phase2() && (cur == mid || gs == gm || gd == gm || gs == gd) {
        state.set_phase2();
    }
    if state.phase2() {
        let port = d.min_port(cur, dst);
        let class = if d.is_global(port) || gc == gd { 3 } else { 2 };
        (PortId(port as u8), class)
    } else if gc == gm {
        // Arrived in the intermediate group: the local hop to the intermediate router.
        (PortId(d.min_port(cur, mid) as u8), 1)
    } else {
        let landing = d.gateway(gm, gs).0;
        (PortId(d.min_port(cur, landing) as u8), 0)
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
    class_vcs(class, 3, vcs)
}

/// The VCs of class `class` of `vcs` VCs split into `classes` equal parts (the last
/// takes the remainder).
#[inline]
pub fn class_vcs(class: u32, classes: u32, vcs: u32) -> VcMask {
    mask(class * vcs / classes..(class + 1) * vcs / classes)
}

impl RoutingFn {
    /// Valiant's, UGAL-L's and UGAL-G's candidates on the dragonfly and the flattened
    /// butterfly (any concentration): the terminal link from a terminal or, in phase 2,
    /// to the destination terminal (every VC); else the phase's step on its class's VCs.
    /// `used(r, p)`: the flits sent on output port p of router r not yet returned as
    /// credits (read at the source router only: `UgalLocal` its own ports, `UgalGlobal`
    /// the source group's gateways' global ports).
    pub(super) fn route_valiant_today(
        &self,
        topology: &Topology,
        cur: NodeId,
        dst: NodeId,
        id: MsgId,
        state: &mut RouteState,
        used: impl Fn(NodeId, u32) -> u32,
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
        let ugal_here = self.kind.is_ugal() && cur.0 == s && !state.phase2();
        if let Some(d) = topology.dragonfly() {
            if let Some(c) = conc {
                if let Some(p) = c.terminal_step(cur.0, dst.0) {
                    // Phase 1 never reaches the destination's router (module doc).
                    return one(p, all);
                }
            }
            let (gs, gd) = (d.group_of(s), d.group_of(t));
            // The intermediate router (`by_router`) or group, and its group.
            let (mid, mid_group) = if self.by_router {
                let r = valiant_router(d, self.salt, id);
                (r, d.group_of(r))
            } else {
                let g = valiant_intermediate(topology, self.salt, id);
                (g, g)
            };
            if ugal_here {
                // BookSim's rule; a draw of either end's group is the minimal route
                // (BookSim compares the same port twice there and goes minimal too).
                let minimal = gs == gd || mid_group == gs || mid_group == gd || {
                    let (q_min, q_nonmin) = if self.kind == Routing::UgalGlobal {
                        // The two global channels out of the source group (module doc).
                        let (rm, pm) = d.gateway(gs, gd);
                        let (rv, pv) = d.gateway(gs, mid_group);
                        (used(NodeId(rm), pm), used(NodeId(rv), pv))
                    } else {
                        let landing = d.gateway(mid_group, gs).0;
                        (
                            used(cur, d.min_port(s, t)),
                            used(cur, d.min_port(s, landing)),
                        )
                    };
                    ugal_takes_minimal(q_min, q_nonmin)
                };
                if minimal {
                    state.set_phase2();
                }
            }
            let (port, class, classes) = if self.by_router {
                let (p, c) = valiant_step_router(d, cur.0, t, s, mid, state);
                (p, c, 4)
            } else {
                let (p, c) = valiant_step(d, cur.0, t, s, mid, state);
                (p, c, 3)
            };
            let vcs = if self.dragonfly {
                class_vcs(class, classes, self.vcs)
            } else {
                all
            };
            return one(port.0 as u32, vcs);
        }
        let f = topology
            .flatfly()
            .expect("Valiant today: a dragonfly or a flattened butterfly");
        let mid = valiant_intermediate(topology, self.salt, id);
        if ugal_here
            && (cur.0 == mid
                || s == t
                || ugal_takes_minimal(
                    used(cur, f.dor_port(cur.0, t)),
                    used(cur, f.dor_port(cur.0, mid)),
                ))
        {
            state.set_phase2();
        }
        if !state.phase2() && cur.0 == mid {
            state.set_phase2();
        }
        if state.phase2() {
            if let Some(p) = conc.and_then(|c| c.terminal_step(cur.0, dst.0)) {
                return one(p, all);
            }
        }
        let target = if state.phase2() { t } else { mid };
        one(
            f.dor_port(cur.0, target),
            self.half(self.halves, state.phase2()),
        )
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
    /// A Valiant route from router `s` to `t` through `mid`, stepped by `step` until it
    /// arrives: the routers it leaves (the source first) and the (class, global) of each
    /// hop, checking that the classes only rise — within class 0 only local → global,
    /// within the last class `top` only global → local.
    fn walk(
        d: &Dragonfly,
        (s, t, mid): (u32, u32, u32),
        top: u32,
        step: impl Fn(u32, &mut RouteState) -> (PortId, u32),
    ) -> (Vec<u32>, Vec<(u32, bool)>) {
        let mut state = RouteState::default();
        let (mut cur, mut path, mut hops) = (s, vec![], Vec::<(u32, bool)>::new());
        while cur != t {
            let (q, class) = step(cur, &mut state);
            let global = d.is_global(q.0 as u32);
            if let Some(&last) = hops.last() {
                let same = (class == 0 && global && !last.1) || (class == top && !global && last.1);
                assert!(
                    class > last.0 || (class == last.0 && same),
                    "{s}->{t} via {mid}: class {class} after {last:?}"
                );
            }
            path.push(cur);
            hops.push((class, global));
            cur = d.neighbor(cur, q.0 as u32).unwrap();
            assert!(hops.len() <= 6, "{s}->{t} via {mid} loops");
        }
        path.push(t);
        (path, hops)
    }

    #[test]
    fn valiant_goes_through_its_intermediate_group_and_its_classes_only_rise() {
        let d = Dragonfly { p: 2, a: 4, h: 2 };
        let r = d.routers() as u32;
        let mut through = vec![0u32; d.groups() as usize];
        for s in 0..r {
            for t in 0..r {
                for mid in 0..d.groups() {
                    let (path, hops) = walk(&d, (s, t, mid), 2, |cur, state| {
                        valiant_step(&d, cur, t, s, mid, state)
                    });
                    assert!(hops.len() <= 5, "{s}->{t} via {mid}");
                    let globals = hops.iter().filter(|h| h.1).count();
                    let (gs, gt) = (d.group_of(s), d.group_of(t));
                    if gs == gt || mid == gs || mid == gt {
                        // The minimal route, on classes 1 and 2.
                        assert_eq!(hops.len() as u32, d.distance(s, t), "{s}->{t} via {mid}");
                    } else {
                        let visited = path.iter().any(|&x| d.group_of(x) == mid);
                        assert!(visited && globals == 2, "{s}->{t} via {mid}");
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
    fn ugal_goes_minimal_up_to_twice_the_non_minimal_queue_plus_30() {
        assert!(ugal_takes_minimal(0, 0));
        assert!(ugal_takes_minimal(30, 0));
        assert!(!ugal_takes_minimal(31, 0));
        assert!(ugal_takes_minimal(50, 10));
        assert!(!ugal_takes_minimal(51, 10));
        assert!(ugal_takes_minimal(u32::MAX, u32::MAX), "no overflow");
    }

    /// A message from router 0 (group 0) to router 9 (group 2) of the p = 1, a = 4,
    /// h = 2 dragonfly whose intermediate group is `want`'s, under `r`.
    fn message_via(t: &Topology, r: &RoutingFn, want: impl Fn(u32) -> bool) -> MsgId {
        (0..)
            .map(|s| MsgId::new(NodeId(0), s))
            .find(|&id| want(valiant_intermediate(t, r.salt, id)))
            .unwrap()
    }

    #[test]
    fn ugal_at_the_source_router_decides_by_the_two_ports_used_credits_once() {
        use crate::config::TopologyConfig;
        let t = Topology::from_config(&TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 }).unwrap();
        let d = t.dragonfly().unwrap();
        let r = RoutingFn::new(&t, Routing::UgalLocal, false, 3)
            .unwrap()
            .with_salt(1, 0)
            .with_port_flits(3 * 64);
        let (src, dst) = (NodeId(0), NodeId(9));
        let id = message_via(&t, &r, |g| !matches!(g, 0 | 2));
        let mid = valiant_intermediate(&t, r.salt, id);
        let min_port = d.min_port(0, 9);
        let val_port = d.min_port(0, d.gateway(mid, 0).0);
        assert_ne!(min_port, val_port, "a message whose two first hops differ");
        // Free credits (of 192) such that the minimal port has `qm` flits in use and
        // Valiant's `qv`.
        let route = |qm: u32, qv: u32| {
            let mut state = RouteState::default();
            let free = |_: NodeId, p: u32| {
                192 - if p == min_port {
                    qm
                } else if p == val_port {
                    qv
                } else {
                    0
                }
            };
            let route = r.route_msg_with(&t, src, dst, id, &mut state, free);
            (route, state)
        };
        for (qm, qv, minimal) in [
            (0, 0, true),
            (30, 0, true),
            (31, 0, false),
            (70, 20, true),
            (71, 20, false),
        ] {
            let (route, state) = route(qm, qv);
            assert_eq!(state.phase2(), minimal, "q_min {qm}, q_nonmin {qv}");
            assert_eq!(route.adaptive_ports, 0, "one candidate port");
            if minimal {
                assert_eq!(route.escape_port.0 as u32, min_port);
                assert_ne!(route.escape_vcs & (third(1, 3) | third(2, 3)), 0);
            } else {
                assert_eq!(route.escape_port.0 as u32, val_port);
                assert_eq!(route.escape_vcs, third(0, 3), "Valiant's class 0");
                // Past the source the decision stands, whatever the credits.
                let mut state = state;
                let next = NodeId(d.neighbor(0, val_port).unwrap());
                let again = r.route_msg_with(&t, next, dst, id, &mut state, |_, _| 0);
                assert!(!state.phase2());
                assert_eq!(again.escape_vcs, third(0, 3));
            }
        }
        // An intermediate in the destination's (or the source's) group: minimal, however
        // loaded the minimal port.
        for g in [0, 2] {
            let id = message_via(&t, &r, |x| x == g);
            let mut state = RouteState::default();
            let route = r.route_msg_with(&t, src, dst, id, &mut state, |_, p| {
                if p == min_port {
                    0
                } else {
                    192
                }
            });
            assert!(state.phase2(), "intermediate group {g}");
            assert_eq!(route.escape_port.0 as u32, min_port);
        }
    }

    #[test]
    fn ugal_global_reads_the_gateways_global_channels_where_ugal_local_reads_its_own_ports() {
        use crate::config::TopologyConfig;
        let t = Topology::from_config(&TopologyConfig::Dragonfly { p: 1, a: 4, h: 2 }).unwrap();
        let d = t.dragonfly().unwrap();
        let build = |kind| {
            RoutingFn::new(&t, kind, false, 3)
                .unwrap()
                .with_salt(1, 0)
                .with_port_flits(192)
        };
        let (global, local) = (build(Routing::UgalGlobal), build(Routing::UgalLocal));
        // Router 0 to router 13 (group 3): the global link to group 3 is router 1's.
        let (src, dst) = (NodeId(0), NodeId(13));
        let (gw, gw_port) = d.gateway(0, 3);
        assert_eq!(
            gw, 1,
            "the minimal route's gateway is not the source router"
        );
        let to_gw = d.min_port(0, gw);
        let id = message_via(&t, &global, |g| !matches!(g, 0 | 3));
        let (gv, pv) = d.gateway(0, valiant_intermediate(&t, global.salt, id));
        // Free credits (of 192) with `busy` flits in use on (router, port) `at`.
        let decide = |r: &RoutingFn, at: (u32, u32), busy: u32| {
            let mut state = RouteState::default();
            let seen = std::cell::RefCell::new(vec![]);
            r.route_msg_with(&t, src, dst, id, &mut state, |n, p| {
                seen.borrow_mut().push((n.0, p));
                192 - if (n.0, p) == at { busy } else { 0 }
            });
            (state.phase2(), seen.into_inner())
        };
        // A congested global channel behind the gateway: UGAL-G detours, UGAL-L, whose
        // port to the gateway is idle, stays minimal.
        let (minimal, seen) = decide(&global, (gw, gw_port), 31);
        assert!(!minimal, "UgalGlobal detours");
        assert_eq!(
            seen,
            vec![(gw, gw_port), (gv, pv)],
            "the two global channels"
        );
        let (minimal, seen) = decide(&local, (gw, gw_port), 192);
        assert!(minimal, "UgalLocal does not see it");
        assert!(seen.iter().all(|&(n, _)| n == 0), "{seen:?}");
        // The threshold is BookSim's: 30 used flits are still minimal.
        assert!(decide(&global, (gw, gw_port), 30).0);
        // A busy local port to an idle gateway: the other way round.
        assert!(!decide(&local, (0, to_gw), 31).0, "UgalLocal detours");
        assert!(
            decide(&global, (0, to_gw), 192).0,
            "UgalGlobal stays minimal"
        );
        // Valiant's channel congested instead: UGAL-G stays minimal.
        assert!(decide(&global, (gv, pv), 192).0);
    }

    #[test]
    fn valiant_through_a_router_visits_it_and_its_four_classes_only_rise() {
        let d = Dragonfly { p: 2, a: 4, h: 2 };
        let r = d.routers() as u32;
        let mut through = vec![0u32; r as usize];
        let mut local_to_mid = 0;
        for s in 0..r {
            for t in 0..r {
                for mid in 0..r {
                    let (path, hops) = walk(&d, (s, t, mid), 3, |cur, state| {
                        valiant_step_router(&d, cur, t, s, mid, state)
                    });
                    // Classes 1 and 2 are one local hop each.
                    for &(class, global) in &hops {
                        assert!(!(class == 1 || class == 2) || !global);
                        local_to_mid += u32::from(class == 1);
                    }
                    let globals = hops.iter().filter(|h| h.1).count();
                    let (gs, gt, gm) = (d.group_of(s), d.group_of(t), d.group_of(mid));
                    if gs == gt || gm == gs || gm == gt {
                        assert_eq!(hops.len() as u32, d.distance(s, t), "{s}->{t} via {mid}");
                    } else {
                        assert!(path.contains(&mid) && globals == 2, "{s}->{t} via {mid}");
                        through[mid as usize] += 1;
                    }
                }
            }
        }
        assert!(through.iter().all(|&n| n == through[0]), "{through:?}");
        assert!(local_to_mid > 0, "class 1 is used");
    }

    #[test]
    fn the_intermediate_router_is_drawn_uniformly() {
        let d = Dragonfly { p: 2, a: 4, h: 2 };
        let mut count = [0u32; 36];
        for seq in 0..36_000 {
            count[valiant_router(&d, 5, MsgId::new(NodeId(40), seq)) as usize] += 1;
        }
        assert!(count.iter().all(|&c| (850..1150).contains(&c)), "{count:?}");
    }
}

//! Selection functions: which of the routing function's candidate ports a header asks
//! for, given the virtual channels free at the start of the cycle. Within the chosen port
//! the adaptive VCs are asked for first and the escape VC second, so the escape channels
//! stay the last resort that Duato's theory needs them to be.
//!
//! - `XFirst` (paper 004): the lowest-numbered port with a usable free VC; ports are
//!   numbered by dimension (+X, −X, +Y, …), so X is tried before Y. When every candidate
//!   is busy the header asks for nothing and tries again next cycle, which takes
//!   whichever channel frees first.
//! - `Random`: uniformly among the ports with a usable free VC (router's own stream).
//! - `MostCredits`: the port with the most free credits summed over all its VCs (the
//!   least congested downstream buffers); ties go to the lowest port.

use crate::config::Selection;
use crate::foundation::rng::{below, NodeRng};
use crate::foundation::types::PortId;
use crate::routing::{Route, VcMask};

/// A header's request to one output port: the allocator grants the lowest free VC of
/// `first`, or failing that of `second`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcRequest {
    /// The output port.
    pub port: PortId,
    /// Preferred VCs (the adaptive ones on an adaptive port).
    pub first: VcMask,
    /// Fallback VCs (the escape class on the escape port).
    pub second: VcMask,
}

impl VcRequest {
    /// The VCs the allocator grants from, of those `free` on the port: the preferred
    /// ones, or failing them the fallback ones.
    #[inline]
    pub fn pick(&self, free: VcMask) -> VcMask {
        if self.first & free != 0 {
            self.first & free
        } else {
            self.second & free
        }
    }
}

/// Every port of `route` with a free VC in its sets, in port order, as the request
/// that port would get: its adaptive VCs first (on an adaptive port), the escape VCs
/// second (on the escape port). The candidates of the selection functions, and the
/// route set BookSim's VC allocators see whole.
#[inline]
pub fn requests<'a>(
    route: &'a Route,
    free: impl Fn(usize) -> VcMask + 'a,
) -> impl Iterator<Item = VcRequest> + 'a {
    let esc = route.escape_port.idx();
    BitIter(route.adaptive_ports | (1u64 << esc)).filter_map(move |p| {
        let first = if route.adaptive_ports >> p & 1 == 1 {
            route.adaptive_vcs
        } else {
            0
        };
        let second = if p == esc { route.escape_vcs } else { 0 };
        ((first | second) & free(p) != 0).then_some(VcRequest {
            port: PortId(p as u8),
            first,
            second,
        })
    })
}

/// Chooses the port to request. `free(p)` is the mask of unallocated VCs of output `p`,
/// `credits(p)` the free buffer slots summed over its VCs. Returns None when no candidate
/// VC is free.
#[inline]
pub fn select(
    sel: Selection,
    route: &Route,
    free: impl Fn(usize) -> VcMask,
    credits: impl Fn(usize) -> u32,
    rng: &mut NodeRng,
) -> Option<VcRequest> {
    let mut ports = requests(route, free);
    match sel {
        Selection::XFirst => ports.next(),
        Selection::Random => {
            let mut options = [None; 64];
            let mut n = 0;
            for r in ports {
                options[n] = Some(r);
                n += 1;
            }
            match n {
                0 => None,
                1 => options[0],
                _ => options[below(rng, n as u64) as usize],
            }
        }
        Selection::MostCredits => {
            let mut best: Option<(u32, VcRequest)> = None;
            for r in ports {
                let c = credits(r.port.idx());
                if best.is_none_or(|(bc, _)| c > bc) {
                    best = Some((c, r));
                }
            }
            best.map(|(_, r)| r)
        }
    }
}

/// Iterator over the set bits of a mask, lowest first.
#[derive(Clone, Copy)]
pub struct BitIter(pub u64);

impl Iterator for BitIter {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::rng::stream;

    fn route() -> Route {
        // Adaptive candidates +X (port 0) and +Y (port 2); escape +X on VC 1.
        Route {
            adaptive_ports: 0b101,
            adaptive_vcs: 0b1100,
            escape_port: PortId(0),
            escape_vcs: 0b0010,
        }
    }

    #[test]
    fn x_first_takes_x_while_it_has_a_free_vc_then_y() {
        let mut rng = stream(1, 0, 0, 1);
        let all_free = |_| 0b1111;
        let r = select(Selection::XFirst, &route(), all_free, |_| 0, &mut rng).unwrap();
        assert_eq!((r.port, r.first, r.second), (PortId(0), 0b1100, 0b0010));
        // X's adaptive and escape VCs busy: Y.
        let x_busy = |p| if p == 0 { 0b0001 } else { 0b1111 };
        let r = select(Selection::XFirst, &route(), x_busy, |_| 0, &mut rng).unwrap();
        assert_eq!(r.port, PortId(2));
        // X has only its escape VC free: still X (a VC of X is free).
        let x_escape = |p| if p == 0 { 0b0010 } else { 0b1111 };
        let r = select(Selection::XFirst, &route(), x_escape, |_| 0, &mut rng).unwrap();
        assert_eq!(r.port, PortId(0));
        // Everything busy: wait.
        assert!(select(Selection::XFirst, &route(), |_| 0, |_| 0, &mut rng).is_none());
    }

    #[test]
    fn most_credits_prefers_the_emptier_port() {
        let mut rng = stream(1, 0, 0, 1);
        let credits = |p| if p == 2 { 30 } else { 10 };
        let r = select(
            Selection::MostCredits,
            &route(),
            |_| 0b1111,
            credits,
            &mut rng,
        )
        .unwrap();
        assert_eq!(r.port, PortId(2));
    }

    #[test]
    fn random_uses_both_candidates() {
        let mut rng = stream(1, 0, 0, 1);
        let mut seen = [0; 3];
        for _ in 0..1000 {
            let r = select(Selection::Random, &route(), |_| 0b1111, |_| 0, &mut rng).unwrap();
            seen[r.port.idx()] += 1;
        }
        assert!(seen[0] > 400 && seen[2] > 400, "{seen:?}");
    }

    #[test]
    fn the_route_set_lists_every_port_with_a_free_vc_adaptive_vcs_first() {
        let r = route();
        let all: Vec<_> = requests(&r, |_| 0b1111).collect();
        assert_eq!(
            all,
            [
                VcRequest {
                    port: PortId(0),
                    first: 0b1100,
                    second: 0b0010
                },
                VcRequest {
                    port: PortId(2),
                    first: 0b1100,
                    second: 0
                },
            ]
        );
        // Port 0 keeps its escape VC when its adaptive ones are taken; port 2 has none.
        let some: Vec<_> = requests(&r, |p| if p == 0 { 0b0010 } else { 0b0011 }).collect();
        assert_eq!(some.len(), 1);
        assert_eq!(some[0].port, PortId(0));
    }
}

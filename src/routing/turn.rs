//! Turn-model routing on 2-D meshes: which minimal output ports a header may take at each
//! node under west-first, north-last, negative-first (Glass & Ni) and odd-even (Chiu).
//! Each model forbids enough 90° turns that no cycle of channel dependencies can close,
//! so every virtual channel is usable by every message and no escape channel is needed.
//!
//! Directions: east = +X (port 0), west = −X (port 1), north = +Y (port 2), south = −Y
//! (port 3) — the mesh's port numbering (`2 × dimension + (negative ? 1 : 0)`).
//!
//! | model | forbidden turns | permitted minimal ports |
//! |---|---|---|
//! | west-first | north→west, south→west | west only while west is needed, else any minimal |
//! | north-last | north→east, north→west | any minimal but north while east/west is needed |
//! | negative-first | east→south, north→west | the minimal negative ones while any, then the positive |
//! | odd-even | east→north/south at an even column, north/south→west at an odd column | Chiu's minimal ROUTE (below) |
//!
//! Odd-even (Chiu 2000, the minimal version), with c, s, d the current, source and
//! destination columns and Δx, Δy the offsets to the destination: Δx = 0 → the Y port;
//! Δx > 0 → east when Δy = 0, otherwise the Y port if c is odd or c = s (no turn out of
//! east has been made there), and east if d is odd or Δx ≠ 1 (a message reaching an even
//! destination column while going east could not turn there); Δx < 0 → west, plus the Y
//! port at an even column.
//!
//! Owns: the permitted-port masks. Not here: which of them a header asks for
//! (`selection`), the VCs (`routing::RoutingFn`), the validation that the topology is a
//! 2-D mesh (`RoutingFn::new`).

use crate::config::Routing;
use crate::topology::grid::Grid;

/// +X.
pub const EAST: u64 = 1 << 0;
/// −X.
pub const WEST: u64 = 1 << 1;
/// +Y.
pub const NORTH: u64 = 1 << 2;
/// −Y.
pub const SOUTH: u64 = 1 << 3;

/// Whether `kind` is one of the turn models of this module.
pub fn is_turn_model(kind: Routing) -> bool {
    matches!(
        kind,
        Routing::WestFirst | Routing::NorthLast | Routing::NegativeFirst | Routing::OddEven
    )
}

/// The minimal output ports (mask, bit = port) that turn model `kind` permits a message
/// from `src` at `cur` bound for `dst` (`cur != dst`) on the 2-D mesh `grid`. Never empty
/// for `cur != dst`; the minimal ports themselves for a routing that is not a turn model.
#[inline]
pub fn permitted(kind: Routing, grid: &Grid, cur: u32, dst: u32, src: u32) -> u64 {
    let at_source_column = grid.coord(cur, 0) == grid.coord(src, 0);
    permitted_at(kind, grid, cur, dst, at_source_column)
}

/// [`permitted`] with the one thing it needs of the source: whether the message is still
/// in its source's column (only odd-even asks; a minimal route never comes back to a
/// column it left).
#[inline]
pub fn permitted_at(kind: Routing, grid: &Grid, cur: u32, dst: u32, at_source_column: bool) -> u64 {
    let (cx, cy) = (grid.coord(cur, 0), grid.coord(cur, 1));
    let (dx, dy) = (grid.coord(dst, 0), grid.coord(dst, 1));
    let x = match dx.cmp(&cx) {
        std::cmp::Ordering::Greater => EAST,
        std::cmp::Ordering::Less => WEST,
        std::cmp::Ordering::Equal => 0,
    };
    let y = match dy.cmp(&cy) {
        std::cmp::Ordering::Greater => NORTH,
        std::cmp::Ordering::Less => SOUTH,
        std::cmp::Ordering::Equal => 0,
    };
    let minimal = x | y;
    match kind {
        Routing::WestFirst if x == WEST => WEST,
        Routing::NorthLast if y == NORTH && x != 0 => x,
        Routing::NegativeFirst if minimal & (WEST | SOUTH) != 0 => minimal & (WEST | SOUTH),
        Routing::OddEven => {
            let odd = |c: u32| c % 2 == 1;
            if x == 0 || y == 0 {
                minimal
            } else if x == EAST {
                let mut p = 0;
                if odd(cx) || at_source_column {
                    p |= y;
                }
                if odd(dx) || dx - cx != 1 {
                    p |= EAST;
                }
                p
            } else if odd(cx) {
                WEST
            } else {
                WEST | y
            }
        }
        _ => minimal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::foundation::types::{NodeId, PortId};
    use crate::topology::Topology;

    const MODELS: [Routing; 4] = [
        Routing::WestFirst,
        Routing::NorthLast,
        Routing::NegativeFirst,
        Routing::OddEven,
    ];

    /// Whether turning from travelling `from` into `to` at a node of column `col` is
    /// forbidden by `kind` (straight on is always allowed; 180° turns are never minimal).
    fn forbidden(kind: Routing, from: u64, to: u64, col: u32) -> bool {
        let y = NORTH | SOUTH;
        match kind {
            Routing::WestFirst => from & y != 0 && to == WEST,
            Routing::NorthLast => from == NORTH && to & (EAST | WEST) != 0,
            Routing::NegativeFirst => {
                (from == EAST && to == SOUTH) || (from == NORTH && to == WEST)
            }
            Routing::OddEven => {
                (col.is_multiple_of(2) && from == EAST && to & y != 0)
                    || (col % 2 == 1 && from & y != 0 && to == WEST)
            }
            _ => false,
        }
    }

    fn mesh(k: u32) -> (Topology, Grid) {
        let t = Topology::from_config(&TopologyConfig::Mesh { k, n: 2, c: 1 }).unwrap();
        let Topology::Mesh(m) = &t else {
            unreachable!()
        };
        let g = m.grid;
        (t, g)
    }

    #[test]
    fn every_reachable_hop_is_minimal_never_empty_and_takes_no_forbidden_turn() {
        for k in [4, 5, 8] {
            let (t, g) = mesh(k);
            for kind in MODELS {
                for s in 0..t.nodes() as u32 {
                    for d in 0..t.nodes() as u32 {
                        if s == d {
                            continue;
                        }
                        // Every (node, direction of arrival) a message from s to d can
                        // reach, explored depth first (0: just injected).
                        let mut stack = vec![(s, 0u64)];
                        let mut seen = std::collections::HashSet::new();
                        while let Some((cur, from)) = stack.pop() {
                            if cur == d || !seen.insert((cur, from)) {
                                continue;
                            }
                            let p = permitted(kind, &g, cur, d, s);
                            assert_ne!(p, 0, "{kind:?} k={k} {s}->{d} stuck at {cur}");
                            let minimal = t.minimal_ports(NodeId(cur), NodeId(d)).data[0];
                            assert_eq!(p & !minimal, 0, "{kind:?} {s}->{d} at {cur}: not minimal");
                            for port in crate::routing::selection::BitIter(p) {
                                let to = 1u64 << port;
                                assert!(
                                    from == 0 || !forbidden(kind, from, to, g.coord(cur, 0)),
                                    "{kind:?} k={k} {s}->{d}: forbidden turn at {cur}"
                                );
                                let next = t.neighbor(NodeId(cur), PortId(port as u8)).unwrap();
                                stack.push((next.0, to));
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn each_model_keeps_some_adaptivity() {
        // The corner (0,0) → (3,3) of a 4×4 mesh: north-east, both minimal directions
        // permitted by west-first, negative-first (both positive) and odd-even (at the
        // source column); north-last only east.
        let (_, g) = mesh(4);
        let dst = 3 + 3 * 4;
        assert_eq!(permitted(Routing::WestFirst, &g, 0, dst, 0), EAST | NORTH);
        assert_eq!(
            permitted(Routing::NegativeFirst, &g, 0, dst, 0),
            EAST | NORTH
        );
        assert_eq!(permitted(Routing::OddEven, &g, 0, dst, 0), EAST | NORTH);
        assert_eq!(permitted(Routing::NorthLast, &g, 0, dst, 0), EAST);
        // South-west: west-first only west, negative-first both, north-last both.
        assert_eq!(permitted(Routing::WestFirst, &g, dst, 0, dst), WEST);
        assert_eq!(
            permitted(Routing::NegativeFirst, &g, dst, 0, dst),
            WEST | SOUTH
        );
        assert_eq!(permitted(Routing::NorthLast, &g, dst, 0, dst), WEST | SOUTH);
        // Odd-even going west from the odd column 3: west only.
        assert_eq!(permitted(Routing::OddEven, &g, dst, 0, dst), WEST);
    }
}

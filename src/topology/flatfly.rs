//! The flattened butterfly's routers (Kim, Dally and Abts, ISCA 2007; HyperX with one
//! link between every pair of routers of a dimension): routers in an n-dimensional array
//! of k per dimension, each linked to the k − 1 others along every dimension. Owns the
//! numbering, distances and minimal ports; the terminals (`c` per router) are added by
//! [`crate::topology::concentration`].
//!
//! Numbering: routers as the k-ary n-dimensional grid (`Grid`, dimension 0 fastest).
//! Ports: port d·(k−1) + (o − 1), for dimension d and offset o = 1..k, leads to the router
//! whose coordinate d is (x_d + o) mod k. The input port a flit arrives on has the same
//! number as the output it left on (as on the torus): input (d, o) of a router is fed by
//! the router of coordinate (x_d − o) mod k, and the reverse channel of (d, o) is
//! (d, k − o).
//!
//! Minimal routes correct each differing coordinate in one hop: the distance is the
//! number of differing coordinates, at most n.

use crate::topology::grid::Grid;
use crate::topology::PortSet;

/// A flattened butterfly's routers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatFly {
    /// Coordinates.
    pub grid: Grid,
    /// Terminals per router (C): for the bounds and the description only.
    pub c: u32,
}

impl FlatFly {
    /// Network ports per router, n·(k − 1).
    pub fn degree(&self) -> usize {
        (self.grid.n * (self.grid.k - 1)) as usize
    }

    /// The port of dimension `dim` and offset `o` (1..k).
    #[inline]
    pub fn port(&self, dim: u32, o: u32) -> u32 {
        dim * (self.grid.k - 1) + o - 1
    }

    /// The dimension and offset of a port.
    #[inline]
    pub fn port_dim(&self, port: u32) -> (u32, u32) {
        (port / (self.grid.k - 1), port % (self.grid.k - 1) + 1)
    }

    /// The router reached through output `port`.
    #[inline]
    pub fn neighbor(&self, node: u32, port: u32) -> u32 {
        let (d, o) = self.port_dim(port);
        let k = self.grid.k;
        self.grid
            .with_coord(node, d, (self.grid.coord(node, d) + o) % k)
    }

    /// The router whose output `port` feeds input `port` of `node`.
    #[inline]
    pub fn upstream(&self, node: u32, port: u32) -> u32 {
        let (d, o) = self.port_dim(port);
        let k = self.grid.k;
        self.grid
            .with_coord(node, d, (self.grid.coord(node, d) + k - o) % k)
    }

    /// The dimension-order port from `cur` to `dst` (≠ `cur`): the lowest differing
    /// dimension, straight to the destination's coordinate.
    #[inline]
    pub fn dor_port(&self, cur: u32, dst: u32) -> u32 {
        let k = self.grid.k;
        for d in 0..self.grid.n {
            let (a, b) = (self.grid.coord(cur, d), self.grid.coord(dst, d));
            if a != b {
                return self.port(d, (b + k - a) % k);
            }
        }
        0
    }

    /// Number of differing coordinates.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        (0..self.grid.n)
            .filter(|&d| self.grid.coord(a, d) != self.grid.coord(b, d))
            .count() as u32
    }

    /// One port per differing dimension, straight to the destination's coordinate.
    pub fn minimal_ports(&self, cur: u32, dst: u32) -> PortSet {
        let k = self.grid.k;
        let mut s = PortSet::ZERO;
        for d in 0..self.grid.n {
            let (a, b) = (self.grid.coord(cur, d), self.grid.coord(dst, d));
            if a != b {
                s.set(self.port(d, (b + k - a) % k) as usize, true);
            }
        }
        s
    }

    /// n·(k−1)/k · N/(N−1) over ordered pairs of distinct routers.
    pub fn mean_distance(&self) -> f64 {
        let k = self.grid.k as f64;
        let n = self.grid.nodes() as f64;
        self.grid.n as f64 * (k - 1.0) / k * n / (n - 1.0)
    }

    /// Uniform-traffic bound per terminal under dimension order (traffic over the other
    /// terminals, the source's router's included): every channel of dimension d carries
    /// the dimension-d traffic of one offset, 1/k of what a router's c terminals inject
    /// (times N/(N−1) terminals), so k/c·(N−1)/N (the terminal link's 1 is
    /// `Topology::capacity`'s to apply, under concentration).
    pub fn uniform_bound(&self) -> f64 {
        let n = (self.grid.nodes() * self.c as usize) as f64;
        self.grid.k as f64 / self.c as f64 * (n - 1.0) / n
    }

    /// `GroupShift` bound per terminal (router x to the routers of first coordinate
    /// x₀ + 1): all of a router's traffic leaves on its one dimension-0 channel of offset
    /// 1, so 1/c.
    pub fn group_shift_bound(&self) -> f64 {
        1.0 / self.c as f64
    }

    /// Directed channels cut by halving dimension 0 (even k: (k/2)² per row of the
    /// dimension each way; odd k: ⌊k/2⌋·⌈k/2⌉).
    pub fn bisection_channels(&self) -> usize {
        let k = self.grid.k as usize;
        let rows = self.grid.nodes() / k;
        2 * rows * (k / 2) * k.div_ceil(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_router_reaches_the_k_minus_1_others_of_each_dimension_once() {
        let f = FlatFly {
            grid: Grid { k: 4, n: 2 },
            c: 4,
        };
        for u in 0..16 {
            let mut seen = std::collections::HashSet::new();
            for q in 0..f.degree() as u32 {
                let v = f.neighbor(u, q);
                assert!(seen.insert(v));
                assert_eq!(f.distance(u, v), 1);
                assert_eq!(f.upstream(v, q), u);
            }
            assert_eq!(seen.len(), 6);
        }
    }

    #[test]
    fn dimension_order_corrects_one_coordinate_per_hop() {
        let f = FlatFly {
            grid: Grid { k: 3, n: 3 },
            c: 1,
        };
        for s in 0..27 {
            for t in 0..27 {
                let (mut cur, mut hops) = (s, 0);
                while cur != t {
                    let q = f.dor_port(cur, t);
                    assert!(f.minimal_ports(cur, t)[q as usize]);
                    cur = f.neighbor(cur, q);
                    hops += 1;
                }
                assert_eq!(hops, f.distance(s, t));
            }
        }
    }
}

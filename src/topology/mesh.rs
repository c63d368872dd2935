//! k-ary n-dimensional mesh: a torus without wrap-around links. Port 2i goes towards
//! increasing coordinate i, port 2i+1 towards decreasing; ports that would leave the
//! mesh do not exist (boundary nodes have fewer neighbours).

use crate::topology::grid::Grid;
use crate::topology::PortSet;

/// A k-ary n-mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mesh {
    /// Coordinates.
    pub grid: Grid,
}

impl Mesh {
    /// Network ports per node (interior nodes use all of them).
    pub fn degree(&self) -> usize {
        2 * self.grid.n as usize
    }

    /// Neighbour through output `port`, if it exists.
    #[inline]
    pub fn neighbor(&self, node: u32, port: u32) -> Option<u32> {
        let dim = port / 2;
        let c = self.grid.coord(node, dim);
        if port.is_multiple_of(2) {
            (c + 1 < self.grid.k).then(|| self.grid.with_coord(node, dim, c + 1))
        } else {
            (c > 0).then(|| self.grid.with_coord(node, dim, c - 1))
        }
    }

    /// The node whose output `port` feeds input `port` of `node`, if it exists.
    #[inline]
    pub fn upstream(&self, node: u32, port: u32) -> Option<u32> {
        self.neighbor(node, port ^ 1)
    }

    /// Manhattan distance.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        (0..self.grid.n)
            .map(|d| self.grid.coord(a, d).abs_diff(self.grid.coord(b, d)))
            .sum()
    }

    /// Output ports that reduce the distance.
    pub fn minimal_ports(&self, cur: u32, dst: u32) -> PortSet {
        let mut s = PortSet::ZERO;
        for dim in 0..self.grid.n {
            let a = self.grid.coord(cur, dim);
            let b = self.grid.coord(dst, dim);
            if b > a {
                s.set(2 * dim as usize, true);
            } else if b < a {
                s.set(2 * dim as usize + 1, true);
            }
        }
        s
    }

    /// Closed form n·(k²−1)/(3k)·N/(N−1) over ordered pairs of distinct nodes.
    pub fn mean_distance(&self) -> f64 {
        let k = self.grid.k as f64;
        let n = self.grid.nodes() as f64;
        self.grid.n as f64 * (k * k - 1.0) / (3.0 * k) * n / (n - 1.0)
    }
}

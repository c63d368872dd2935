//! k-ary n-cube with wrap-around links. Bidirectional: port 2i goes towards increasing
//! coordinate i ("+i"), port 2i+1 towards decreasing ("−i"). Unidirectional: port i goes
//! towards increasing coordinate i only. Every coordinate step is modulo k, so the link
//! from coordinate k−1 to 0 (and 0 to k−1 going down) is the wrap-around ("dateline") link.

use crate::topology::grid::Grid;
use crate::topology::PortSet;

/// A k-ary n-cube.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Torus {
    /// Coordinates.
    pub grid: Grid,
    /// Links in both directions.
    pub bidirectional: bool,
}

/// How a message must move in one dimension to reach its destination minimally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimStep {
    /// Hops still to go in this dimension.
    pub hops: u32,
    /// True when moving towards increasing coordinates is minimal.
    pub up: bool,
    /// True when moving towards decreasing coordinates is minimal (both can be, when the
    /// offset is exactly k/2 on a bidirectional ring).
    pub down: bool,
}

impl Torus {
    /// Network ports per node.
    pub fn degree(&self) -> usize {
        self.grid.n as usize * if self.bidirectional { 2 } else { 1 }
    }

    /// Output port that moves along `dim`, upwards or downwards.
    #[inline]
    pub fn port(&self, dim: u32, up: bool) -> u32 {
        if self.bidirectional {
            2 * dim + u32::from(!up)
        } else {
            debug_assert!(up);
            dim
        }
    }

    /// (dimension, upwards) of an output port.
    #[inline]
    pub fn port_dim(&self, port: u32) -> (u32, bool) {
        if self.bidirectional {
            (port / 2, port.is_multiple_of(2))
        } else {
            (port, true)
        }
    }

    /// Neighbour through output port `port`.
    #[inline]
    pub fn neighbor(&self, node: u32, port: u32) -> u32 {
        let (dim, up) = self.port_dim(port);
        let k = self.grid.k;
        let c = self.grid.coord(node, dim);
        let nc = if up { (c + 1) % k } else { (c + k - 1) % k };
        self.grid.with_coord(node, dim, nc)
    }

    /// The node whose output `port` feeds input `port` of `node`.
    #[inline]
    pub fn upstream(&self, node: u32, port: u32) -> u32 {
        let (dim, up) = self.port_dim(port);
        let k = self.grid.k;
        let c = self.grid.coord(node, dim);
        let pc = if up { (c + k - 1) % k } else { (c + 1) % k };
        self.grid.with_coord(node, dim, pc)
    }

    /// Minimal movement from `cur` to `dst` in dimension `dim`.
    #[inline]
    pub fn dim_step(&self, cur: u32, dst: u32, dim: u32) -> DimStep {
        let k = self.grid.k;
        let a = self.grid.coord(cur, dim);
        let b = self.grid.coord(dst, dim);
        // b + k − a is below 2k: one subtraction instead of a division by k.
        let up_hops = if b >= a { b - a } else { b + k - a };
        if up_hops == 0 {
            return DimStep {
                hops: 0,
                up: false,
                down: false,
            };
        }
        if !self.bidirectional {
            return DimStep {
                hops: up_hops,
                up: true,
                down: false,
            };
        }
        let down_hops = k - up_hops;
        DimStep {
            hops: up_hops.min(down_hops),
            up: up_hops <= down_hops,
            down: down_hops <= up_hops,
        }
    }

    /// True when moving from `cur` towards `dst` along `dim` in the given direction still
    /// has to cross the wrap-around link of that ring.
    #[inline]
    pub fn crosses_wrap(&self, cur: u32, dst: u32, dim: u32, up: bool) -> bool {
        let a = self.grid.coord(cur, dim);
        let b = self.grid.coord(dst, dim);
        if up {
            b < a
        } else {
            b > a
        }
    }

    /// Shortest-path distance.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        (0..self.grid.n).map(|d| self.dim_step(a, b, d).hops).sum()
    }

    /// All output ports on some minimal path.
    pub fn minimal_ports(&self, cur: u32, dst: u32) -> PortSet {
        let mut s = PortSet::ZERO;
        for dim in 0..self.grid.n {
            let st = self.dim_step(cur, dst, dim);
            if st.up {
                s.set(self.port(dim, true) as usize, true);
            }
            if st.down {
                s.set(self.port(dim, false) as usize, true);
            }
        }
        s
    }

    /// Mean ring distance over the k positions of one dimension (including distance 0).
    pub fn ring_mean(&self) -> f64 {
        let k = self.grid.k as f64;
        if !self.bidirectional {
            (k - 1.0) / 2.0
        } else if self.grid.k.is_multiple_of(2) {
            k / 4.0
        } else {
            (k * k - 1.0) / (4.0 * k)
        }
    }

    /// Closed form n·ring_mean·N/(N−1) over ordered pairs of distinct nodes.
    pub fn mean_distance(&self) -> f64 {
        let n = self.grid.nodes() as f64;
        self.grid.n as f64 * self.ring_mean() * n / (n - 1.0)
    }

    /// n·⌊k/2⌋ (bidirectional) or n·(k−1) (unidirectional).
    pub fn diameter(&self) -> u32 {
        let per = if self.bidirectional {
            self.grid.k / 2
        } else {
            self.grid.k - 1
        };
        self.grid.n * per
    }
}

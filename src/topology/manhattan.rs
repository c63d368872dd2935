//! Manhattan Street network (Maxemchuk; paper 003): a k×k grid with wrap-around whose
//! links are unidirectional. Rows alternate direction (even rows point east, towards
//! increasing column; odd rows west) and so do columns (even columns point south,
//! towards increasing row; odd columns north). Node (r, c) is numbered r·k + c. Port 0
//! is the row (horizontal) link, port 1 the column (vertical) link; every node has two
//! outgoing and two incoming links.
//!
//! A translation by an even number of rows and columns maps the network onto itself,
//! so distances are kept as four breadth-first-search tables, one per (row parity,
//! column parity) of the source.

use crate::topology::PortSet;
use std::collections::VecDeque;

/// A k×k Manhattan Street network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManhattanStreet {
    /// Nodes per row and per column (even).
    pub k: u32,
    /// dist[class][node]: distance from the node (class>>1, class&1) to `node`.
    dist: Vec<Vec<u16>>,
    /// minimal[class][node]: the minimal output ports (bit p) from that node to `node`.
    minimal: Vec<Vec<u8>>,
}

impl ManhattanStreet {
    /// Builds the network and its distance tables; `k` must be even and ≥ 2.
    pub fn new(k: u32) -> Self {
        let mut ms = ManhattanStreet {
            k,
            dist: Vec::new(),
            minimal: Vec::new(),
        };
        ms.dist = (0..4)
            .map(|class| ms.bfs((class >> 1) * k + (class & 1)))
            .collect();
        ms.minimal = (0..4u32)
            .map(|class| {
                let src = (class >> 1) * k + (class & 1);
                (0..k * k)
                    .map(|dst| {
                        let d = ms.distance(src, dst);
                        (0..2)
                            .filter(|&p| d > 0 && ms.distance(ms.neighbor(src, p), dst) + 1 == d)
                            .fold(0u8, |bits, p| bits | 1 << p)
                    })
                    .collect()
            })
            .collect();
        ms
    }

    /// k².
    pub fn nodes(&self) -> usize {
        (self.k * self.k) as usize
    }

    /// Neighbour through output `port` (0 = row link, 1 = column link).
    #[inline]
    pub fn neighbor(&self, node: u32, port: u32) -> u32 {
        self.along(node, port, true)
    }

    /// The node whose output `port` feeds input `port` of `node`.
    #[inline]
    pub fn upstream(&self, node: u32, port: u32) -> u32 {
        self.along(node, port, false)
    }

    /// One step from `node` along the ring of `port` (0: its row, 1: its column), in the
    /// ring's direction (`forward`) or against it. Even rows run towards higher columns
    /// and even columns towards higher rows; odd ones the other way.
    #[inline]
    fn along(&self, node: u32, port: u32, forward: bool) -> u32 {
        let k = self.k;
        let (r, c) = (node / k, node % k);
        // The position along the ring, and whether the ring runs upwards.
        let (at, up) = if port == 0 {
            (c, r % 2 == 0)
        } else {
            (r, c % 2 == 0)
        };
        let next = if up == forward {
            (at + 1) % k
        } else {
            (at + k - 1) % k
        };
        if port == 0 {
            r * k + next
        } else {
            next * k + c
        }
    }

    fn bfs(&self, src: u32) -> Vec<u16> {
        let mut dist = vec![u16::MAX; self.nodes()];
        dist[src as usize] = 0;
        let mut q = VecDeque::from([src]);
        while let Some(u) = q.pop_front() {
            for p in 0..2 {
                let v = self.neighbor(u, p);
                if dist[v as usize] == u16::MAX {
                    dist[v as usize] = dist[u as usize] + 1;
                    q.push_back(v);
                }
            }
        }
        dist
    }

    /// The parity class of `a` and the position of `b` relative to the even-aligned
    /// translate of `a`'s class representative: the tables' indices for the pair.
    #[inline]
    fn class_and_offset(&self, a: u32, b: u32) -> (usize, usize) {
        let k = self.k;
        let (ra, ca) = (a / k, a % k);
        let (sr, sc) = (ra - ra % 2, ca - ca % 2);
        let (rb, cb) = (b / k, b % k);
        let t = ((rb + k - sr) % k) * k + (cb + k - sc) % k;
        (((ra % 2) * 2 + ca % 2) as usize, t as usize)
    }

    /// Shortest-path distance (links are one-way, so it is not symmetric).
    #[inline]
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        let (class, t) = self.class_and_offset(a, b);
        self.dist[class][t] as u32
    }

    /// Output ports whose neighbour is one hop closer to `dst`, as bits (port p = bit p).
    #[inline]
    pub fn minimal_bits(&self, cur: u32, dst: u32) -> u8 {
        let (class, t) = self.class_and_offset(cur, dst);
        self.minimal[class][t]
    }

    /// Output ports whose neighbour is one hop closer to `dst`.
    pub fn minimal_ports(&self, cur: u32, dst: u32) -> PortSet {
        let mut s = PortSet::ZERO;
        s.as_raw_mut_slice()[0] = self.minimal_bits(cur, dst) as u64;
        s
    }

    /// Exact mean over ordered pairs of distinct nodes (from the tables: every parity
    /// class holds a quarter of the nodes).
    pub fn mean_distance(&self) -> f64 {
        let total: u64 = self.dist.iter().flatten().map(|&d| d as u64).sum();
        let n = self.nodes() as f64;
        (total as f64 / 4.0) / (n - 1.0)
    }

    /// Largest distance.
    pub fn diameter(&self) -> u32 {
        self.dist.iter().flatten().copied().max().unwrap_or(0) as u32
    }
}

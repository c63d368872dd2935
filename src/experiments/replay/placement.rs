//! Where a trace's endpoints (cores, MPI ranks) sit on the network: the identity, an
//! explicit table (a map file), or a named placement built for the topology.
//!
//! Named placements (`--place`):
//! - `identity`: endpoint e on node e;
//! - `fold`: e on node e mod N — more endpoints than nodes, spread round-robin;
//! - `block:R`: R consecutive endpoints per node (e on node ⌊e/R⌋), the way MPI
//!   launchers fill multi-core nodes;
//! - `grid:AxB[xC…]`: the endpoints are an A×B×… grid numbered row-major with the first
//!   extent fastest (Netrace's 8×8 CMP is `grid:8x8`), placed so that grid neighbours
//!   are network neighbours: the same coordinates on a torus or mesh with at least as
//!   many dimensions and nodes per dimension (the remaining coordinates 0), or on a
//!   hypercube each extent a power of two, coordinate c in its own bit field as the
//!   Gray code of c (adjacent coordinates differ in one bit: one hop);
//! - `random:SEED`: a random permutation of the nodes (Xoshiro256++ seeded with SEED),
//!   the scattered baseline of placement studies; endpoints beyond N are outside.
//!
//! Not here: reading map files (`cli::replay`), applying the map (`driver`).

use crate::foundation::error::{Error, Result};
use crate::topology::Topology;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::str::FromStr;

/// A named placement, as the command line gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Endpoint e on node e.
    Identity,
    /// Endpoint e on node e mod N.
    Fold,
    /// R consecutive endpoints per node.
    Block(u32),
    /// A row-major grid of endpoints on the network's coordinates.
    Grid(Vec<u32>),
    /// A seeded random permutation of the nodes.
    Random(u64),
}

impl FromStr for Placement {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = |w: &str| {
            Error::Arg(format!(
                "--place {s}: {w} (identity, fold, block:R, grid:AxB[xC…], random:SEED)"
            ))
        };
        let (name, arg) = s.split_once(':').unwrap_or((s, ""));
        let num = |a: &str| a.parse::<u64>().map_err(|_| bad("expected a whole number"));
        Ok(match (name, arg) {
            ("identity", "") => Placement::Identity,
            ("fold", "") => Placement::Fold,
            ("block", a) => match num(a)? {
                0 => return Err(bad("at least one endpoint per node")),
                r => Placement::Block(u32::try_from(r).map_err(|_| bad("too many"))?),
            },
            ("grid", a) => {
                let shape = a
                    .split('x')
                    .map(|e| match num(e)? {
                        0 => Err(bad("an extent of 0")),
                        e if e > 1 << 24 => Err(bad("an extent too large")),
                        e => Ok(e as u32),
                    })
                    .collect::<Result<Vec<u32>>>()?;
                Placement::Grid(shape)
            }
            ("random", a) => Placement::Random(num(a)?),
            _ => return Err(bad("unknown placement")),
        })
    }
}

/// Trace endpoint → node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum NodeMap {
    /// Endpoint e on node e.
    #[default]
    Identity,
    /// Endpoint e on node `table[e]` (u32::MAX, or beyond the table: not mapped).
    Table(Vec<u32>),
    /// Endpoint e on node e mod `nodes`.
    Fold {
        /// N.
        nodes: u32,
    },
    /// Endpoint e on node e / `per_node`.
    Block {
        /// R.
        per_node: u32,
    },
}

impl NodeMap {
    /// The node of endpoint `e`, None when the map leaves it out.
    pub fn node(&self, e: u32) -> Option<u32> {
        match self {
            NodeMap::Identity => Some(e),
            NodeMap::Table(t) => t.get(e as usize).copied().filter(|&n| n != u32::MAX),
            NodeMap::Fold { nodes } => Some(e % nodes),
            NodeMap::Block { per_node } => Some(e / per_node),
        }
    }

    /// Whether this is the identity, which cannot place more endpoints than nodes.
    pub fn is_identity(&self) -> bool {
        matches!(self, NodeMap::Identity)
    }
}

impl Placement {
    /// The map this placement gives on `topo`, or why it cannot be placed there.
    pub fn build(&self, topo: &Topology) -> Result<NodeMap> {
        // The nodes that send and receive: every node, or a host network's hosts (0..H).
        let nodes = topo.endpoints().len() as u32;
        Ok(match self {
            Placement::Identity => NodeMap::Identity,
            Placement::Fold => NodeMap::Fold { nodes },
            Placement::Block(r) => NodeMap::Block { per_node: *r },
            Placement::Random(seed) => {
                let mut perm: Vec<u32> = (0..nodes).collect();
                perm.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(*seed));
                NodeMap::Table(perm)
            }
            Placement::Grid(shape) => NodeMap::Table(grid_table(shape, topo)?),
        })
    }
}

/// Coordinates (of a grid of endpoints) → node.
type CoordToNode = Box<dyn Fn(&[u32]) -> u32>;

/// The nodes of a row-major grid of endpoints (see the module doc).
fn grid_table(shape: &[u32], topo: &Topology) -> Result<Vec<u32>> {
    let no = |w: String| Error::Arg(format!("--place grid:{}: {w}", join(shape)));
    let total = shape
        .iter()
        .try_fold(1u64, |a, &e| {
            a.checked_mul(e as u64).filter(|&p| p <= 1 << 24)
        })
        .ok_or_else(|| no("too many endpoints".into()))?;
    // Node of a coordinate vector, per topology.
    let node: CoordToNode = match topo {
        Topology::Torus(t) => grid_node(shape, t.grid.k, t.grid.n, "torus").map_err(no)?,
        Topology::Mesh(m) => grid_node(shape, m.grid.k, m.grid.n, "mesh").map_err(no)?,
        Topology::Hypercube(h) => {
            let mut bits = Vec::with_capacity(shape.len());
            for &e in shape {
                if !e.is_power_of_two() {
                    return Err(no(format!(
                        "extent {e} is not a power of two, as a hypercube needs"
                    )));
                }
                bits.push(e.trailing_zeros());
            }
            let need: u32 = bits.iter().sum();
            if need > h.dim {
                return Err(no(format!(
                    "needs {need} hypercube dimensions, the network has {}",
                    h.dim
                )));
            }
            Box::new(move |c: &[u32]| {
                let mut node = 0;
                let mut shift = 0;
                for (&x, &b) in c.iter().zip(&bits) {
                    node |= (x ^ (x >> 1)) << shift;
                    shift += b;
                }
                node
            })
        }
        Topology::ManhattanStreet(_) => {
            return Err(no(
                "grid placement is for tori, meshes and hypercubes (on a Manhattan Street \
                 network row-major is the identity)"
                    .into(),
            ))
        }
        Topology::Hosts(_)
        | Topology::Dragonfly(_)
        | Topology::FlatFly(_)
        | Topology::Concentrated(_) => {
            return Err(no(format!(
                "grid placement is for tori, meshes and hypercubes of one terminal per \
                 router; this machine is {}",
                topo.describe()
            )))
        }
    };
    let mut c = vec![0u32; shape.len()];
    let mut table = Vec::with_capacity(total as usize);
    for _ in 0..total {
        table.push(node(&c));
        for (x, &e) in c.iter_mut().zip(shape) {
            *x += 1;
            if *x < e {
                break;
            }
            *x = 0;
        }
    }
    Ok(table)
}

/// The coordinate → node function of a k-ary n-dimensional grid holding `shape`.
fn grid_node(
    shape: &[u32],
    k: u32,
    n: u32,
    what: &str,
) -> std::result::Result<CoordToNode, String> {
    if shape.len() > n as usize {
        return Err(format!("{} dimensions, the {what} has {n}", shape.len()));
    }
    if let Some(&e) = shape.iter().find(|&&e| e > k) {
        return Err(format!(
            "extent {e} exceeds the {what}'s {k} nodes per dimension"
        ));
    }
    Ok(Box::new(move |c: &[u32]| {
        c.iter().rev().fold(0, |node, &x| node * k + x)
    }))
}

fn join(shape: &[u32]) -> String {
    shape
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::foundation::types::NodeId;

    fn topo(cfg: TopologyConfig) -> Topology {
        Topology::from_config(&cfg).unwrap()
    }

    #[test]
    fn a_grid_on_a_larger_torus_keeps_neighbours_adjacent() {
        let t = topo(TopologyConfig::Torus {
            k: 16,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        let NodeMap::Table(m) = Placement::Grid(vec![8, 8]).build(&t).unwrap() else {
            panic!("a table")
        };
        assert_eq!(m.len(), 64);
        // Endpoint 9 = (1, 1) sits at node 1 + 16.
        assert_eq!(m[9], 17);
        for e in 0..64u32 {
            let (x, y) = (e % 8, e / 8);
            if x + 1 < 8 {
                assert_eq!(
                    t.distance(NodeId(m[e as usize]), NodeId(m[e as usize + 1])),
                    1
                );
            }
            if y + 1 < 8 {
                assert_eq!(
                    t.distance(NodeId(m[e as usize]), NodeId(m[e as usize + 8])),
                    1
                );
            }
        }
    }

    #[test]
    fn a_grid_on_a_hypercube_uses_gray_codes() {
        let h = topo(TopologyConfig::Hypercube { dim: 6 });
        let NodeMap::Table(m) = Placement::Grid(vec![8, 8]).build(&h).unwrap() else {
            panic!("a table")
        };
        let mut seen = m.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 64, "a permutation");
        for e in 0..64usize {
            if e % 8 != 7 {
                assert_eq!(h.distance(NodeId(m[e]), NodeId(m[e + 1])), 1, "{e}");
            }
            if e + 8 < 64 {
                assert_eq!(h.distance(NodeId(m[e]), NodeId(m[e + 8])), 1, "{e}");
            }
        }
        let e = Placement::Grid(vec![6, 8])
            .build(&h)
            .unwrap_err()
            .to_string();
        assert!(e.contains("power of two"), "{e}");
    }

    #[test]
    fn placements_parse_and_refuse_what_does_not_fit() {
        assert_eq!("block:4".parse::<Placement>().unwrap(), Placement::Block(4));
        assert_eq!(
            "grid:4x2x2".parse::<Placement>().unwrap(),
            Placement::Grid(vec![4, 2, 2])
        );
        for bad in ["block:0", "grid:8x", "row-major", "random:x", "fold:3"] {
            assert!(bad.parse::<Placement>().is_err(), "{bad}");
        }
        let t = topo(TopologyConfig::Torus {
            k: 4,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        let e = Placement::Grid(vec![8, 2])
            .build(&t)
            .unwrap_err()
            .to_string();
        assert!(e.contains("extent 8 exceeds"), "{e}");
        let e = Placement::Grid(vec![2, 2, 2])
            .build(&t)
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 dimensions, the torus has 2"), "{e}");
        let NodeMap::Table(p) = Placement::Random(7).build(&t).unwrap() else {
            panic!("a table")
        };
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, (0..16).collect::<Vec<u32>>());
        assert_ne!(p, s, "scattered");
        assert_eq!(NodeMap::Block { per_node: 4 }.node(9), Some(2));
        assert_eq!(NodeMap::Fold { nodes: 16 }.node(17), Some(1));
    }
}

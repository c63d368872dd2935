//! Which partition steps which node: the partitioners (`experiment.partitioner`) and
//! one partition's view of the split ([`PartNodes`]). A partition's per-node arrays are
//! indexed by the node's *local index*, its rank among the partition's nodes in node
//! order; everything that leaves a partition (events, hops, link rows, records) names
//! nodes by their global number, so what a run computes does not depend on the split.
//!
//! Two partitioners, and the split of networks with groups:
//! - contiguous ranges of ⌈nodes/parts⌉ node numbers (the default): slabs of rows of a
//!   torus or mesh, subcubes along a hypercube's highest dimensions; no table, a local
//!   index is the node number minus the partition's first;
//! - blocks: orthogonal recursive bisection of the node grid. The box of the whole grid
//!   is cut in two across its longest side (the highest dimension among equals), the
//!   two halves get partitions in proportion to their nodes, and so on down to one
//!   partition per box; the first cuts separate MPI ranks (`distributed::owners`: a
//!   rank's partitions are consecutive), the later ones a rank's threads. Two tables of
//!   a word per node map a node to its partition and local index.
//!
//! - by group, whatever the partitioner, on a dragonfly, a flattened butterfly and a
//!   concentrated network: consecutive groups (slabs of a flattened butterfly along its
//!   highest dimension; routers of other concentrated networks) per partition, each
//!   terminal with its router, so only the links between groups cross partitions
//!   (`group_members`); reported as a block split. When there are fewer groups than
//!   partitions, or they do not share out evenly (9 groups in chunks of 3 make 3
//!   partitions, not 4), single routers are split instead; a routing that needs whole
//!   groups (`UgalGlobal`) refuses such a run ([`require_whole_groups`]).
//!
//! This module does not own what crosses between partitions (`engine::partition`), nor
//! how many partitions a run uses (`parallel::partitions_for`, `distributed::plan`).

use crate::config::Partitioner;
use crate::foundation::error::{Error, Result};
use crate::foundation::types::{NodeId, PortId};
use crate::topology::Topology;
use std::ops::Range;
use std::sync::Arc;

/// The contiguous node ranges of `parts` partitions of `nodes` nodes (empty ones left
/// out: 9 nodes in 4 chunks of 3 make 3 partitions).
pub fn ranges(nodes: usize, parts: usize) -> Vec<(usize, usize)> {
    let chunk = nodes.div_ceil(parts.max(1));
    (0..parts)
        .map(|p| (p * chunk, ((p + 1) * chunk).min(nodes)))
        .filter(|(lo, hi)| lo < hi)
        .collect()
}

/// The ownership of `parts` partitions by one process (no MPI): one rank owning them all.
pub fn one_process(parts: usize) -> Vec<Range<usize>> {
    std::iter::once(0..parts).collect()
}

/// The node → partition and node → local index tables of a block split.
#[derive(Debug)]
struct Blocks {
    /// Partition of each node.
    part: Vec<u32>,
    /// Local index of each node in its partition.
    slot: Vec<u32>,
    /// Each partition's nodes, in node order.
    members: Vec<Vec<u32>>,
}

/// One partition's nodes and where every other node lives.
#[derive(Clone, Debug)]
pub struct PartNodes {
    /// This partition's index.
    index: u32,
    /// Partitions in all.
    parts: u32,
    /// Contiguous split: the first node and ⌈nodes/parts⌉; unused with `blocks`.
    lo: u32,
    chunk: u32,
    /// Nodes of this partition.
    len: u32,
    blocks: Option<Arc<Blocks>>,
}

impl PartNodes {
    /// The whole network of `nodes` nodes as one partition.
    pub fn whole(nodes: usize) -> Self {
        PartNodes::range((0, nodes), nodes.max(1), 0, 1)
    }

    /// Partition `index` of `parts`: the contiguous nodes `lo..hi`, partitions being
    /// `chunk` nodes long.
    pub fn range((lo, hi): (usize, usize), chunk: usize, index: usize, parts: usize) -> Self {
        PartNodes {
            index: index as u32,
            parts: parts as u32,
            lo: lo as u32,
            chunk: chunk.max(1) as u32,
            len: (hi - lo) as u32,
            blocks: None,
        }
    }

    /// This partition's index.
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// Partitions in all.
    pub fn parts(&self) -> usize {
        self.parts as usize
    }

    /// Nodes in this partition.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the partition has no node.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The local index of `node`, one of this partition's nodes.
    #[inline(always)]
    pub fn local(&self, node: u32) -> usize {
        match &self.blocks {
            None => (node - self.lo) as usize,
            Some(b) => b.slot[node as usize] as usize,
        }
    }

    /// The node of local index `i`.
    #[inline(always)]
    pub fn node(&self, i: usize) -> u32 {
        match &self.blocks {
            None => self.lo + i as u32,
            Some(b) => b.members[self.index as usize][i],
        }
    }

    /// Whether `node` belongs to this partition.
    #[inline(always)]
    pub fn is_local(&self, node: u32) -> bool {
        match &self.blocks {
            None => node.wrapping_sub(self.lo) < self.len,
            Some(b) => b.part[node as usize] == self.index,
        }
    }

    /// The partition `node` belongs to.
    #[inline]
    pub fn part_of(&self, node: u32) -> usize {
        match &self.blocks {
            None => (node / self.chunk) as usize,
            Some(b) => b.part[node as usize] as usize,
        }
    }

    /// This partition's nodes in local-index (= node) order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.node(i))
    }

    /// The node range `lo..hi` when the partition is one (contiguous split).
    pub fn range_of(&self) -> Option<(usize, usize)> {
        self.blocks
            .is_none()
            .then(|| (self.lo as usize, (self.lo + self.len) as usize))
    }

    /// This partition's nodes when they are not a range (block split), to put its
    /// per-node results back in node order.
    pub fn ids(&self) -> Option<Vec<u32>> {
        self.blocks
            .as_ref()
            .map(|b| b.members[self.index as usize].clone())
    }
}

/// The partitions of `topology`'s nodes over ranks that own the partitions `owned`
/// (consecutive, `distributed::owners`; one range without MPI), as many as
/// [`ranges`] makes of them, cut by `how`. Returns the partitions and the partitioner
/// that cut them: the block partitioner gives way to contiguous ranges where it would
/// reproduce them exactly (a hypercube split a power-of-two number of ways) or where no
/// block cut gives every partition a node (a network barely larger than its partition
/// count).
pub fn place(
    topology: &Topology,
    owned: &[Range<usize>],
    how: Partitioner,
) -> Result<(Vec<PartNodes>, Partitioner)> {
    let nodes = topology.nodes();
    let parts = owned.last().map_or(1, |r| r.end);
    let rs = ranges(nodes, parts.max(1));
    if rs.len() != parts.max(1) {
        return Err(Error::config(format!(
            "internal: {parts} partitions asked of {nodes} nodes, {} ranges made",
            rs.len()
        )));
    }
    let contiguous = || {
        let chunk = rs[0].1 - rs[0].0;
        rs.iter()
            .enumerate()
            .map(|(i, &r)| PartNodes::range(r, chunk, i, rs.len()))
            .collect::<Vec<_>>()
    };
    if matches!(
        topology,
        Topology::Dragonfly(_) | Topology::FlatFly(_) | Topology::Concentrated(_)
    ) {
        return match group_members(topology, rs.len()).filter(|_| rs.len() > 1) {
            Some(members) => tables(nodes, members, &rs, contiguous),
            None => Ok((contiguous(), Partitioner::Contiguous)),
        };
    }
    let extents = match how {
        Partitioner::Blocks => Some(grid_extents(topology)?),
        Partitioner::Contiguous => None,
    };
    let Some(extents) = extents.filter(|_| rs.len() > 1) else {
        return Ok((contiguous(), Partitioner::Contiguous));
    };
    let groups: Vec<usize> = owned.iter().map(|r| r.len()).collect();
    let mut boxes = Vec::with_capacity(rs.len());
    let whole = Cuboid {
        lo: vec![0; extents.len()],
        len: extents.clone(),
    };
    if bisect(whole, &groups, &mut boxes).is_none() {
        return Ok((contiguous(), Partitioner::Contiguous));
    }
    let members: Vec<Vec<u32>> = boxes.iter().map(|b| b.nodes(&extents)).collect();
    tables(nodes, members, &rs, contiguous)
}

/// The views of a split into `members` (each partition's nodes in node order), or the
/// contiguous ranges `rs` when the members are exactly those.
fn tables(
    nodes: usize,
    members: Vec<Vec<u32>>,
    rs: &[(usize, usize)],
    contiguous: impl Fn() -> Vec<PartNodes>,
) -> Result<(Vec<PartNodes>, Partitioner)> {
    let same_as_ranges = members
        .iter()
        .zip(rs)
        .all(|(m, &(lo, hi))| m.len() == hi - lo && m.first() == Some(&(lo as u32)));
    if same_as_ranges {
        return Ok((contiguous(), Partitioner::Contiguous));
    }
    let mut part: Vec<u32> =
        crate::foundation::limits::zeroed_table(Some(nodes), "node partition")?;
    let mut slot: Vec<u32> =
        crate::foundation::limits::zeroed_table(Some(nodes), "node local index")?;
    for (p, m) in members.iter().enumerate() {
        for (i, &n) in m.iter().enumerate() {
            part[n as usize] = p as u32;
            slot[n as usize] = i as u32;
        }
    }
    let blocks = Arc::new(Blocks {
        part,
        slot,
        members,
    });
    let views = (0..rs.len())
        .map(|i| PartNodes {
            index: i as u32,
            parts: rs.len() as u32,
            lo: 0,
            chunk: 1,
            len: blocks.members[i].len() as u32,
            blocks: Some(blocks.clone()),
        })
        .collect();
    Ok((views, Partitioner::Blocks))
}

/// The split of a dragonfly, a flattened butterfly or a concentrated network into
/// `parts` partitions along its structure, whatever the partitioner: each partition gets
/// consecutive units — a dragonfly's groups, a flattened butterfly's slabs along its
/// highest dimension (routers with the same last coordinate), otherwise single routers —
/// with every terminal in its router's partition, so only links between units (a
/// dragonfly's global links) cross partitions and no terminal link does. Units are
/// shared as [`ranges`] shares nodes; when there are fewer units than partitions, single
/// routers are. None for other networks, or fewer routers than partitions.
fn group_members(topology: &Topology, parts: usize) -> Option<Vec<Vec<u32>>> {
    let (net, c) = match topology {
        Topology::Concentrated(cn) => (&*cn.net, cn.c as usize),
        Topology::Dragonfly(_) | Topology::FlatFly(_) => (topology, 0),
        _ => return None,
    };
    let routers = net.nodes();
    let unit = match net {
        Topology::Dragonfly(d) => d.a as usize,
        Topology::FlatFly(f) => (f.grid.k as usize).pow(f.grid.n.saturating_sub(1)),
        _ => 1,
    }
    .max(1);
    let split = |unit: usize| {
        let units = ranges(routers / unit, parts);
        (units.len() == parts).then(|| {
            units
                .iter()
                .map(|&(lo, hi)| {
                    let rs = (lo * unit) as u32..(hi * unit) as u32;
                    let terms = (lo * unit * c + routers) as u32..(hi * unit * c + routers) as u32;
                    rs.chain(terms).collect::<Vec<u32>>()
                })
                .collect::<Vec<_>>()
        })
    };
    split(unit).or_else(|| split(1))
}

/// The dragonfly of `topology`, bare or concentrated (whose routers are nodes
/// `0..routers`); None for other networks.
fn dragonfly_of(topology: &Topology) -> Option<&crate::topology::Dragonfly> {
    match topology {
        Topology::Concentrated(cn) => cn.net.dragonfly(),
        t => t.dragonfly(),
    }
}

/// Whether the split `part` belongs to puts every router of each dragonfly group in one
/// partition (always for other networks): what a routing that reads the credits of
/// other routers of the source's group needs (`UgalGlobal`). `part` knows every node's
/// partition, so every partition of a run, on any rank, answers alike.
pub fn groups_whole_in(topology: &Topology, part: &PartNodes) -> bool {
    dragonfly_of(topology).is_none_or(|d| {
        (0..d.routers() as u32).all(|r| part.part_of(r) == part.part_of(r / d.a * d.a))
    })
}

/// Whether [`place`] splitting `topology` into `parts` partitions keeps every dragonfly
/// group's routers in one partition ([`groups_whole_in`]); false for a count `place`
/// cannot make.
pub fn keeps_groups_whole(topology: &Topology, parts: usize) -> bool {
    parts <= 1
        || place(topology, &one_process(parts), Partitioner::Contiguous)
            .is_ok_and(|(ps, _)| ps.len() == parts && groups_whole_in(topology, &ps[0]))
}

/// Refuses a run whose split (the one `part` belongs to) cuts a dragonfly group, for a
/// routing that reads state across a group (`why`), naming the largest partition
/// count up to the run's that keeps the groups whole (dragonflies are split by group
/// whatever the partitioner, `group_members`).
pub fn require_whole_groups(topology: &Topology, part: &PartNodes, why: &str) -> Result<()> {
    if groups_whole_in(topology, part) {
        return Ok(());
    }
    let parts = part.parts();
    let groups = dragonfly_of(topology).map_or(1, |d| d.groups());
    let best = (1..parts)
        .rev()
        .find(|&n| keeps_groups_whole(topology, n))
        .unwrap_or(1);
    Err(Error::config(format!(
        "{why}, so each dragonfly group must be stepped by one partition; this run's {parts} \
         partitions (experiment.threads × MPI ranks) would split its {groups} groups — \
         {best} is the largest count below that keeps them whole: run on {best} threads \
         (over all ranks)"
    )))
}

/// The extent of each dimension of the node grid, dimension 0 varying fastest in the
/// node number (what makes a box of nodes a block).
fn grid_extents(topology: &Topology) -> Result<Vec<u32>> {
    Ok(match topology {
        Topology::Hypercube(h) => vec![2; h.dim as usize],
        Topology::Torus(t) => vec![t.grid.k; t.grid.n as usize],
        Topology::Mesh(m) => vec![m.grid.k; m.grid.n as usize],
        Topology::ManhattanStreet(m) => vec![m.k, m.k],
        Topology::Dragonfly(_) | Topology::FlatFly(_) | Topology::Concentrated(_) => {
            return Err(Error::config(format!(
                "internal: {} is split by group, not into grid blocks",
                topology.describe()
            )))
        }
        Topology::Hosts(_) => {
            return Err(Error::config(
                "experiment.partitioner = Blocks cuts a torus, mesh, hypercube or Manhattan \
                 Street network into blocks; a network of hosts and switches is split into \
                 contiguous ranges only (leave experiment.partitioner at Contiguous)",
            ))
        }
    })
}

/// A box of the node grid: `lo[d]..lo[d] + len[d]` in every dimension `d`.
#[derive(Clone, Debug)]
struct Cuboid {
    lo: Vec<u32>,
    len: Vec<u32>,
}

impl Cuboid {
    fn volume(&self) -> usize {
        self.len.iter().map(|&l| l as usize).product()
    }

    /// The box's nodes in increasing node order (dimension 0 innermost).
    fn nodes(&self, extents: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.volume());
        let mut c = vec![0u32; self.len.len()];
        loop {
            let mut id = 0u32;
            for d in (0..c.len()).rev() {
                id = id * extents[d] + self.lo[d] + c[d];
            }
            out.push(id);
            // Next coordinate, dimension 0 fastest.
            let mut d = 0;
            loop {
                if d == c.len() {
                    return out;
                }
                c[d] += 1;
                if c[d] < self.len[d] {
                    break;
                }
                c[d] = 0;
                d += 1;
            }
        }
    }

    /// The two boxes of a cut across dimension `d`, the first `at` layers in the first.
    fn split(&self, d: usize, at: u32) -> (Cuboid, Cuboid) {
        let (mut a, mut b) = (self.clone(), self.clone());
        a.len[d] = at;
        b.lo[d] += at;
        b.len[d] -= at;
        (a, b)
    }
}

/// Cuts `b` into boxes for `groups` (the partition counts of consecutive ranks; a single
/// group is cut into its partitions), appending them to `out` in partition order. None
/// when some box cannot hold its partitions.
fn bisect(b: Cuboid, groups: &[usize], out: &mut Vec<Cuboid>) -> Option<()> {
    match groups {
        [] => Some(()),
        [1] => {
            out.push(b);
            Some(())
        }
        [g] => bisect(b, &vec![1; *g], out),
        _ => {
            let (h, d, at) = best_cut(&b, groups)?;
            let (x, y) = b.split(d, at);
            bisect(x, &groups[..h], out)?;
            bisect(y, &groups[h..], out)
        }
    }
}

/// Where to cut `b` between `groups[..h]` and `groups[h..]`: the split of the list
/// nearest its middle, across the longest side (the highest dimension among equals),
/// at the layer that shares the nodes in proportion to the partitions, such that each
/// side has at least a node per partition.
fn best_cut(b: &Cuboid, groups: &[usize]) -> Option<(usize, usize, u32)> {
    let n = groups.len();
    let mut splits: Vec<usize> = (1..n).collect();
    splits.sort_by_key(|&h| (h.abs_diff(n / 2), h));
    let mut dims: Vec<usize> = (0..b.len.len()).filter(|&d| b.len[d] >= 2).collect();
    dims.sort_by_key(|&d| (std::cmp::Reverse(b.len[d]), std::cmp::Reverse(d)));
    let vol = b.volume();
    for h in splits {
        let w1: usize = groups[..h].iter().sum();
        let w2: usize = groups[h..].iter().sum();
        for &d in &dims {
            let l = b.len[d] as usize;
            let layer = vol / l;
            let (min, max) = (w1.div_ceil(layer), l.saturating_sub(w2.div_ceil(layer)));
            if min > max || max == 0 {
                continue;
            }
            // Nearest layer to l·w1/(w1 + w2), halves rounded up.
            let ideal = (2 * l * w1 + (w1 + w2)) / (2 * (w1 + w2));
            let at = ideal.clamp(min.max(1), max.min(l - 1));
            return Some((h, d, at as u32));
        }
    }
    None
}

/// What a split cuts: the links (an output port and the node it leads to) whose ends
/// lie in different partitions, and those whose ends lie on different ranks (`owned`:
/// the partitions each rank steps). Every cycle's exchange between partitions carries
/// what crosses the first, between processes what crosses the second.
pub fn cut(topology: &Topology, parts: &[PartNodes], owned: &[Range<usize>]) -> (u64, u64) {
    let Some(first) = parts.first().filter(|_| parts.len() > 1) else {
        return (0, 0);
    };
    let mut rank_of = vec![0usize; parts.len()];
    for (r, own) in owned.iter().enumerate() {
        for q in own.clone() {
            rank_of[q] = r;
        }
    }
    let (mut cut, mut rank_cut) = (0u64, 0u64);
    for u in 0..topology.nodes() as u32 {
        for port in 0..topology.degree() {
            let Some(v) = topology.neighbor(NodeId(u), PortId(port as u8)) else {
                continue;
            };
            let (a, b) = (first.part_of(u), first.part_of(v.0));
            if a != b {
                cut += 1;
                rank_cut += u64::from(rank_of[a] != rank_of[b]);
            }
        }
    }
    (cut, rank_cut)
}

/// How a run's network was split: into partitions stepped by threads, over MPI ranks
/// (`engine::distributed`), and the links each split cuts (see `engine::partitioner::cut`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Partitioning {
    /// Partitions (R ranks × T threads, or T threads).
    pub partitions: u32,
    /// MPI ranks (1 without MPI).
    pub ranks: u32,
    /// The partitioner that cut the network (`experiment.partitioner`, or Contiguous
    /// where blocks would be the same ranges or cannot be cut; see `engine::partitioner`).
    pub partitioner: crate::config::Partitioner,
    /// Links whose two ends lie in different partitions.
    pub cut_links: u64,
    /// Links whose two ends lie on different ranks.
    pub rank_cut_links: u64,
}

/// The report's `partitioning` block of a split: the partitions `parts` over the ranks
/// that own `owned`, cut by `how` (what [`place`] returned).
pub fn describe(
    topology: &Topology,
    parts: &[PartNodes],
    owned: &[Range<usize>],
    how: Partitioner,
) -> Partitioning {
    let (cut_links, rank_cut_links) = cut(topology, parts, owned);
    crate::engine::partitioner::Partitioning {
        partitions: parts.len() as u32,
        ranks: owned.len().max(1) as u32,
        partitioner: how,
        cut_links,
        rank_cut_links,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    fn torus(k: u32, n: u32) -> Topology {
        Topology::from_config(&TopologyConfig::Torus {
            k,
            n,
            bidirectional: true,
            c: 1,
        })
        .unwrap()
    }

    fn blocks(t: &Topology, owned: &[Range<usize>]) -> (Vec<PartNodes>, Partitioner) {
        place(t, owned, Partitioner::Blocks).unwrap()
    }

    fn slabs(t: &Topology, owned: &[Range<usize>]) -> Vec<PartNodes> {
        place(t, owned, Partitioner::Contiguous).unwrap().0
    }

    #[test]
    fn ranges_cover_every_node_once_in_order() {
        assert_eq!(ranges(10, 3), vec![(0, 4), (4, 8), (8, 10)]);
        assert_eq!(ranges(4, 4), vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(ranges(64, 1), vec![(0, 64)]);
    }

    #[test]
    fn halving_a_torus_cuts_two_rings_of_links_each_way() {
        let t = torus(8, 2);
        let ps = slabs(&t, &[0..1, 1..2]);
        // Rows 0-3 and 4-7: each of the 8 columns crosses twice (middle and wrap), in
        // both directions.
        assert_eq!(cut(&t, &ps, &[0..1, 1..2]), (32, 32));
        let ps = slabs(&t, &one_process(1));
        assert_eq!(cut(&t, &ps, &one_process(1)), (0, 0));
        // Four partitions on two ranks: ranks hold rows 0-3 and 4-7 as before.
        let ps = slabs(&t, &[0..2, 2..4]);
        assert_eq!(cut(&t, &ps, &[0..2, 2..4]), (64, 32));
    }

    #[test]
    fn sixteen_blocks_of_a_torus_cut_half_the_links_sixteen_slabs_cut() {
        let t = torus(16, 2);
        let one = one_process(16);
        let sl = slabs(&t, &one);
        let (bl, how) = blocks(&t, &one);
        assert_eq!(how, Partitioner::Blocks);
        // Slabs: 16 row boundaries × 16 columns × 2 directions; blocks of 4×4: 4
        // boundaries in each dimension.
        assert_eq!(cut(&t, &sl, &one).0, 512);
        assert_eq!(cut(&t, &bl, &one).0, 256);
        assert!(bl.iter().all(|p| p.len() == 16));
    }

    #[test]
    fn a_mesh_in_four_blocks_cuts_fewer_links_than_in_four_slabs() {
        let t = Topology::from_config(&TopologyConfig::Mesh { k: 8, n: 2, c: 1 }).unwrap();
        let owned = [0..2, 2..4];
        let sl = slabs(&t, &owned);
        let (bl, _) = blocks(&t, &owned);
        // Three row boundaries of 8 links each way against one row and one column
        // boundary.
        assert_eq!(cut(&t, &sl, &owned), (48, 16));
        assert_eq!(cut(&t, &bl, &owned), (32, 16));
    }

    #[test]
    fn a_rank_s_partitions_form_one_block() {
        // Two ranks of two threads on an 8×8 torus: the first cut (between ranks) is
        // across rows, then each rank's half is cut across columns.
        let t = torus(8, 2);
        let (bl, _) = blocks(&t, &[0..2, 2..4]);
        let rows = |p: &PartNodes| {
            p.iter()
                .map(|n| n / 8)
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(rows(&bl[0]), rows(&bl[1]));
        assert!(rows(&bl[0]).iter().all(|&r| r < 4));
        assert!(rows(&bl[2]).iter().all(|&r| r >= 4));
    }

    #[test]
    fn a_hypercube_in_a_power_of_two_of_blocks_is_its_contiguous_split() {
        let t = Topology::from_config(&TopologyConfig::Hypercube { dim: 6 }).unwrap();
        let (ps, how) = blocks(&t, &[0..4, 4..8]);
        assert_eq!(how, Partitioner::Contiguous);
        assert_eq!(ps[3].range_of(), Some((24, 32)));
        // Three partitions: subcubes of 32, 16 and 16 nodes.
        let (ps, how) = blocks(&t, &one_process(3));
        assert_eq!(how, Partitioner::Blocks);
        assert_eq!(ps.iter().map(|p| p.len()).collect::<Vec<_>>(), [32, 16, 16]);
    }

    #[test]
    fn every_node_has_one_partition_and_its_local_index_for_any_count() {
        for (t, max) in [
            (torus(3, 2), 9),
            (torus(5, 3), 40),
            (torus(8, 2), 64),
            (
                Topology::from_config(&TopologyConfig::Hypercube { dim: 4 }).unwrap(),
                16,
            ),
            (
                Topology::from_config(&TopologyConfig::ManhattanStreet { k: 6 }).unwrap(),
                36,
            ),
        ] {
            for parts in 1..=max {
                let n = ranges(t.nodes(), parts).len();
                for ranks in [1, 2, 3].into_iter().filter(|&r| r <= n) {
                    let owned = crate::engine::distributed::owners(n, ranks);
                    let (ps, _) = blocks(&t, &owned);
                    assert_eq!(ps.len(), n);
                    let mut seen = vec![false; t.nodes()];
                    for (i, p) in ps.iter().enumerate() {
                        assert!(!p.is_empty(), "{parts} parts: partition {i} empty");
                        for (li, node) in p.iter().enumerate() {
                            assert!(!seen[node as usize]);
                            seen[node as usize] = true;
                            assert_eq!(p.local(node), li);
                            assert!(p.is_local(node));
                            assert_eq!(ps[0].part_of(node), i);
                        }
                    }
                    assert!(seen.iter().all(|&s| s), "{parts} parts: a node left out");
                }
            }
        }
    }

    #[test]
    fn whole_groups_are_promised_exactly_where_the_split_keeps_them_and_refused_elsewhere() {
        // 9 groups of 4 routers with 2 terminals each (108 nodes).
        let t = Topology::from_config(&TopologyConfig::Dragonfly { p: 2, a: 4, h: 2 }).unwrap();
        let split = |parts: usize| {
            place(&t, &one_process(parts), Partitioner::Blocks)
                .unwrap()
                .0
        };
        for parts in 1..=12 {
            let ps = split(parts);
            let whole = (0..36u32).all(|r| ps[0].part_of(r) == ps[0].part_of(r / 4 * 4));
            assert_eq!(keeps_groups_whole(&t, parts), whole, "{parts} parts");
            assert_eq!(groups_whole_in(&t, &ps[parts - 1]), whole, "{parts} parts");
        }
        // 9 groups in chunks of 3 make 3 partitions, not 4, and in chunks of 2, 5; past
        // that single routers are split, or (7) nodes in ranges that happen to fall on
        // group boundaries.
        let kept: Vec<usize> = (1..=12).filter(|&n| keeps_groups_whole(&t, n)).collect();
        assert_eq!(kept, [1, 2, 3, 5, 7, 9]);
        assert!(require_whole_groups(&t, &split(3)[1], "why").is_ok());
        let err = require_whole_groups(&t, &split(4)[0], "UgalGlobal reads")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("UgalGlobal reads") && err.contains("run on 3 threads"),
            "{err}"
        );
        let err = require_whole_groups(&t, &split(12)[5], "x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("run on 9 threads"), "{err}");
        // Other networks have no groups to keep.
        let torus = torus(4, 2);
        assert!(keeps_groups_whole(&torus, 8));
    }

    #[test]
    fn a_dragonfly_is_split_by_group_and_only_its_global_links_are_cut() {
        // p = h = 2, a = 4: 9 groups of 4 routers, each with 2 terminals.
        let t = Topology::from_config(&TopologyConfig::Dragonfly { p: 2, a: 4, h: 2 }).unwrap();
        let d = t.dragonfly().unwrap().clone();
        let routers = 36u32;
        let group = |n: u32| {
            if n < routers {
                n / 4
            } else {
                (n - routers) / 2 / 4
            }
        };
        for how in [Partitioner::Contiguous, Partitioner::Blocks] {
            for parts in [2, 3] {
                let (ps, _) = place(&t, &one_process(parts), how).unwrap();
                assert_eq!(ps.len(), parts);
                for n in 0..t.nodes() as u32 {
                    let same: Vec<u32> = (0..t.nodes() as u32)
                        .filter(|&m| group(m) == group(n))
                        .collect();
                    assert!(same.iter().all(|&m| ps[0].part_of(m) == ps[0].part_of(n)));
                }
                // Every cut link is a global one.
                let mut global_cut = 0;
                for u in 0..t.nodes() as u32 {
                    for port in 0..t.degree() {
                        let Some(v) = t.neighbor(NodeId(u), PortId(port as u8)) else {
                            continue;
                        };
                        if ps[0].part_of(u) != ps[0].part_of(v.0) {
                            assert!(u < routers && d.is_global(port as u32), "{u}:{port}");
                            global_cut += 1;
                        }
                    }
                }
                let (cut_links, _) = cut(&t, &ps, &one_process(parts));
                assert!(cut_links > 0);
                assert_eq!(cut_links, global_cut);
            }
        }
    }

    #[test]
    fn a_flattened_butterfly_is_split_into_slabs_along_its_last_dimension() {
        let t = Topology::from_config(&TopologyConfig::FlattenedButterfly { k: 4, n: 2, c: 2 })
            .unwrap();
        let (ps, how) = place(&t, &one_process(2), Partitioner::Contiguous).unwrap();
        assert_eq!(how, Partitioner::Blocks);
        // Routers 0..8 (rows 0 and 1) and their terminals in the first partition.
        for r in 0..16u32 {
            let expect = (r / 8) as usize;
            assert_eq!(ps[0].part_of(r), expect);
            for j in 0..2 {
                assert_eq!(ps[0].part_of(16 + 2 * r + j), expect);
            }
        }
    }

    #[test]
    fn a_network_of_hosts_is_not_cut_into_blocks() {
        let t = Topology::Hosts(crate::topology::hosts::HostNetwork::torus(3, 2, 1).unwrap());
        let e = place(&t, &one_process(1), Partitioner::Blocks).unwrap_err();
        assert!(e.to_string().contains("contiguous ranges only"), "{e}");
    }
}

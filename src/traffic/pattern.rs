//! Destination patterns. Sources whose permutation maps them onto themselves (the
//! centre of an odd bit-complement, the diagonal of a transpose, a bit-reverse
//! palindrome, a random permutation's fixed points, every node of a tornado on k ≤ 2)
//! create no messages: a message to oneself never enters the network. The one exception is
//! `UniformWithSelf` (BookSim's uniform traffic), which draws the destination among all
//! nodes, the source included; wormhole switching sends such a message through the
//! source's own router, from an injection engine to an ejection engine.
//!
//! Sphere of locality and decreasing probability depend on distances. On the hypercube
//! and the torus, translations are automorphisms, so the destinations at each distance
//! from node 0 are tabulated once and translated to the source; on the mesh and the
//! Manhattan Street network (not translation-invariant) they are drawn exactly by
//! rejection: a uniform candidate is accepted with the pattern's weight.
//!
//! `FixedPoints::ToSelf` makes those sources send to themselves instead, as BookSim's
//! do ([`DestPattern::with_fixed_points`]).
//!
//! `GroupShift` is the dragonfly's adversarial pattern (BookSim's `bad_dragon`): every
//! terminal of group i sends to a terminal of group (i + 1) mod g drawn uniformly per
//! message ([`Groups`]); on the
//! flattened butterfly the groups are the slices of equal first coordinate.
//!
//! BookSim2's patterns (`bitrev`, `shuffle`, `tornado`, `neighbor`, `randperm`,
//! `hotspot`) follow the definitions of its `src/traffic.cpp`: bit patterns act on the
//! node address (node count a power of two), digit patterns on the base-k coordinates of
//! a torus or mesh, and the random permutation is drawn once from the experiment's seed.

use crate::config::PatternConfig;
use crate::foundation::error::{Error, Result};
use crate::foundation::rng::{below, unit, NodeRng};
use crate::foundation::types::NodeId;
use crate::topology::Topology;
use std::sync::Arc;

/// Offsets grouped by their distance from node 0, for translation-invariant topologies.
#[derive(Debug)]
struct DistanceClasses {
    /// by_dist[h] = offsets at distance h.
    by_dist: Vec<Vec<u32>>,
}

/// A checked destination pattern bound to a topology.
#[derive(Clone, Debug)]
pub struct DestPattern {
    kind: Kind,
    topology: Topology,
    /// The nodes that send and receive (all, or a host/switch network's hosts).
    endpoints: std::ops::Range<u32>,
    classes: Option<Arc<DistanceClasses>>,
    /// Sphere of locality drawn by rejection: [node] whether any destination lies
    /// outside the radius (on a mesh the central nodes' farthest node can be inside it).
    has_outside: Option<Arc<Vec<bool>>>,
    /// Fixed points send to themselves (`FixedPoints::ToSelf`).
    to_self: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Uniform,
    UniformWithSelf,
    Sphere {
        radius: u32,
        p: f64,
    },
    Decreasing {
        decay: f64,
    },
    BitComplement,
    Transpose,
    Hotspot {
        node: u32,
        fraction: f64,
    },
    /// Sorted, distinct hot nodes.
    HotspotNodes {
        nodes: Arc<Vec<u32>>,
    },
    BitReverse {
        bits: u32,
    },
    Shuffle {
        bits: u32,
    },
    Tornado,
    Neighbor,
    /// perm[src − first endpoint] = destination.
    RandomPermutation {
        perm: Arc<Vec<u32>>,
    },
    GroupShift(Groups),
}

/// The groups of `GroupShift`: on a dragonfly its groups of `a` routers (router
/// g·a + i), on a flattened butterfly the slices of equal first coordinate (router
/// g + k·i); each router's terminals (its own node when there is one terminal per router,
/// terminal nodes `routers + r·c + j` otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    /// Number of groups.
    pub groups: u32,
    /// Routers per group.
    pub routers_per_group: u32,
    /// Router numbers: member i of group g is g·`group_stride` + i·`member_stride`.
    pub group_stride: u32,
    /// See `group_stride`.
    pub member_stride: u32,
    /// Number of routers (terminal nodes start there under concentration).
    pub routers: u32,
    /// Terminals per router (1: the router node itself).
    pub c: u32,
}

impl Groups {
    /// The groups of a dragonfly or flattened butterfly, None elsewhere.
    pub fn of(topology: &Topology) -> Option<Groups> {
        let (routers, c) = (topology.routers() as u32, topology.concentration());
        if let Some(d) = topology.dragonfly() {
            return Some(Groups {
                groups: d.groups(),
                routers_per_group: d.a,
                group_stride: d.a,
                member_stride: 1,
                routers,
                c,
            });
        }
        topology.flatfly().map(|f| Groups {
            groups: f.grid.k,
            routers_per_group: (f.grid.nodes() / f.grid.k as usize) as u32,
            group_stride: 1,
            member_stride: f.grid.k,
            routers,
            c,
        })
    }

    /// The group of a terminal (or router) node.
    pub fn group_of(&self, node: u32) -> u32 {
        let r = if self.c > 1 {
            (node - self.routers) / self.c
        } else {
            node
        };
        (r / self.group_stride) % self.groups
    }

    /// Terminals per group.
    pub fn terminals_per_group(&self) -> u32 {
        self.routers_per_group * self.c
    }

    /// Terminal `m` (0..terminals_per_group) of group `g`.
    pub fn terminal(&self, g: u32, m: u32) -> u32 {
        let r = g * self.group_stride + (m / self.c) * self.member_stride;
        if self.c > 1 {
            self.routers + r * self.c + m % self.c
        } else {
            r
        }
    }
}

/// The `purpose` of the random stream a random permutation is drawn from (distinct from
/// the nodes' traffic and router streams), in replication `u32::MAX`: one permutation per
/// seed, shared by all replications.
const PERMUTATION_STREAM: u32 = 0xF0;

impl DestPattern {
    /// Checks a pattern against the topology; `seed` (the experiment's) draws the
    /// permutation of `RandomPermutation` and is unused by the other patterns.
    pub fn new(cfg: &PatternConfig, topology: &Topology, seed: u64) -> Result<Self> {
        let n = topology.nodes();
        let prob = |name: &str, p: f64| -> Result<()> {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(Error::config(format!(
                    "workload.pattern.{name} = {p}: must be in [0, 1]"
                )))
            }
        };
        let kind = match cfg {
            PatternConfig::Uniform => Kind::Uniform,
            PatternConfig::UniformWithSelf => Kind::UniformWithSelf,
            PatternConfig::SphereOfLocality {
                radius,
                probability,
            } => {
                let (radius, probability) = (*radius, *probability);
                prob("probability", probability)?;
                if radius == 0 {
                    return Err(Error::config(
                        "workload.pattern.radius = 0: the sphere must hold at least the neighbours",
                    ));
                }
                Kind::Sphere {
                    radius,
                    p: probability,
                }
            }
            PatternConfig::DecreasingProbability { decay } => {
                let decay = *decay;
                if !(decay > 0.0 && decay <= 1.0) {
                    return Err(Error::config(format!(
                        "workload.pattern.decay = {decay}: must be in (0, 1]"
                    )));
                }
                Kind::Decreasing { decay }
            }
            PatternConfig::BitComplement => Kind::BitComplement,
            PatternConfig::Transpose => {
                let ok = match topology {
                    Topology::Hypercube(h) => h.dim % 2 == 0,
                    Topology::Torus(t) => t.grid.n == 2,
                    Topology::Mesh(m) => m.grid.n == 2,
                    Topology::ManhattanStreet(_) => true,
                    Topology::Hosts(_)
                    | Topology::Dragonfly(_)
                    | Topology::FlatFly(_)
                    | Topology::Concentrated(_) => false,
                };
                if !ok {
                    return Err(Error::config(
                        "transpose needs a 2-D torus or mesh, a Manhattan Street network, or a \
                         hypercube of even dimension",
                    ));
                }
                Kind::Transpose
            }
            PatternConfig::Hotspot { node, fraction } => {
                let (node, fraction) = (*node, *fraction);
                prob("fraction", fraction)?;
                let ends = topology.endpoints();
                if !ends.contains(&node) {
                    return Err(Error::config(format!(
                        "workload.pattern.node = {node}: messages go to nodes {}..{}",
                        ends.start,
                        ends.end - 1
                    )));
                }
                Kind::Hotspot { node, fraction }
            }
            PatternConfig::HotspotNodes { nodes } => {
                let ends = topology.endpoints();
                if nodes.is_empty() {
                    return Err(Error::config(
                        "workload.pattern = HotspotNodes(nodes: []): name at least one hot node",
                    ));
                }
                if let Some(bad) = nodes.iter().find(|n| !ends.contains(n)) {
                    return Err(Error::config(format!(
                        "workload.pattern.nodes: node {bad}: messages go to nodes {}..{}",
                        ends.start,
                        ends.end - 1
                    )));
                }
                let mut sorted = nodes.clone();
                sorted.sort_unstable();
                sorted.dedup();
                if sorted.len() != nodes.len() {
                    return Err(Error::config(
                        "workload.pattern.nodes: a hot node is listed twice",
                    ));
                }
                Kind::HotspotNodes {
                    nodes: Arc::new(sorted),
                }
            }
            PatternConfig::BitReverse | PatternConfig::Shuffle => {
                let name = if *cfg == PatternConfig::Shuffle {
                    "Shuffle"
                } else {
                    "BitReverse"
                };
                if !matches!(
                    topology,
                    Topology::Hypercube(_)
                        | Topology::Torus(_)
                        | Topology::Mesh(_)
                        | Topology::ManhattanStreet(_)
                ) || !n.is_power_of_two()
                    || n < 2
                {
                    return Err(Error::config(format!(
                        "workload.pattern = {name} permutes the bits of node addresses: it \
                         needs a torus, mesh, hypercube or Manhattan Street network with a \
                         power-of-two number of nodes (this one has {n})"
                    )));
                }
                let bits = n.trailing_zeros();
                if *cfg == PatternConfig::Shuffle {
                    Kind::Shuffle { bits }
                } else {
                    Kind::BitReverse { bits }
                }
            }
            PatternConfig::Tornado | PatternConfig::Neighbor => {
                let name = if *cfg == PatternConfig::Tornado {
                    "Tornado"
                } else {
                    "Neighbor"
                };
                if !matches!(topology, Topology::Torus(_) | Topology::Mesh(_)) {
                    return Err(Error::config(format!(
                        "workload.pattern = {name} moves every coordinate of a k-ary n-cube: \
                         it needs a torus or a mesh"
                    )));
                }
                if *cfg == PatternConfig::Tornado {
                    Kind::Tornado
                } else {
                    Kind::Neighbor
                }
            }
            PatternConfig::GroupShift => {
                Kind::GroupShift(Groups::of(topology).ok_or_else(|| {
                    Error::config(format!(
                    "workload.pattern = GroupShift sends every terminal of a group to the next \
                     group: it needs a dragonfly or a flattened butterfly (whose groups are its \
                     slices of equal first coordinate); this machine is {}",
                    topology.describe()
                ))
                })?)
            }
            PatternConfig::RandomPermutation => {
                let ends = topology.endpoints();
                let mut perm: Vec<u32> = ends.clone().collect();
                let mut rng = crate::foundation::rng::stream(seed, u32::MAX, 0, PERMUTATION_STREAM);
                // Fisher–Yates: every permutation equally likely.
                for i in (1..perm.len()).rev() {
                    let j = below(&mut rng, i as u64 + 1) as usize;
                    perm.swap(i, j);
                }
                Kind::RandomPermutation {
                    perm: Arc::new(perm),
                }
            }
        };
        // Hosts have no coordinates to complement or transpose, and lie at least two
        // links apart, so a sphere of locality could hold none of them; paper 002 and
        // its model use uniform destinations.
        if matches!(topology, Topology::Hosts(_))
            && !matches!(
                kind,
                Kind::Uniform
                    | Kind::Hotspot { .. }
                    | Kind::HotspotNodes { .. }
                    | Kind::RandomPermutation { .. }
            )
        {
            return Err(Error::config(
                "a host/switch network takes workload.pattern Uniform (paper 002's), Hotspot, \
                 HotspotNodes or RandomPermutation",
            ));
        }
        // Terminals of the networks of today have no coordinates to complement and no
        // distance classes routemu tabulates: the patterns their studies use.
        if matches!(
            topology,
            Topology::Dragonfly(_) | Topology::FlatFly(_) | Topology::Concentrated(_)
        ) && !matches!(
            kind,
            Kind::Uniform
                | Kind::UniformWithSelf
                | Kind::Hotspot { .. }
                | Kind::HotspotNodes { .. }
                | Kind::RandomPermutation { .. }
                | Kind::GroupShift(_)
        ) {
            return Err(Error::config(format!(
                "{} takes workload.pattern Uniform, UniformWithSelf, GroupShift, Hotspot, \
                 HotspotNodes or RandomPermutation",
                topology.describe()
            )));
        }
        if topology.endpoints().len() < 2 {
            return Err(Error::config(
                "the network has fewer than two nodes that create and receive messages",
            ));
        }
        let needs_classes = matches!(kind, Kind::Sphere { .. } | Kind::Decreasing { .. });
        let translatable = matches!(topology, Topology::Hypercube(_) | Topology::Torus(_));
        let classes = (needs_classes && translatable).then(|| {
            let mut by_dist = vec![Vec::new(); topology.diameter() as usize + 1];
            for o in 0..n as u32 {
                by_dist[topology.distance(NodeId(0), NodeId(o)) as usize].push(o);
            }
            Arc::new(DistanceClasses { by_dist })
        });
        let has_outside = match kind {
            Kind::Sphere { radius, .. } if classes.is_none() => Some(Arc::new(
                (0..n as u32)
                    .map(|s| eccentricity(topology, s) > radius)
                    .collect(),
            )),
            _ => None,
        };
        Ok(DestPattern {
            kind,
            endpoints: topology.endpoints(),
            topology: topology.clone(),
            classes,
            has_outside,
            to_self: false,
        })
    }

    /// Node reached from `src` by the translation that takes 0 to `offset`.
    fn translate(&self, src: u32, offset: u32) -> u32 {
        match &self.topology {
            Topology::Hypercube(_) => src ^ offset,
            Topology::Torus(t) => {
                let g = t.grid;
                (0..g.n).fold(0, |acc, d| {
                    acc + ((g.coord(src, d) + g.coord(offset, d)) % g.k) * g.stride(d)
                })
            }
            _ => unreachable!("translation used only on hypercube and torus"),
        }
    }

    fn uniform_other(&self, src: u32, rng: &mut NodeRng) -> u32 {
        let e = &self.endpoints;
        let j = e.start + below(rng, e.len() as u64 - 1) as u32;
        if j >= src {
            j + 1
        } else {
            j
        }
    }

    /// The nodes that create and receive messages.
    pub fn endpoints(&self) -> std::ops::Range<u32> {
        self.endpoints.clone()
    }

    /// The sources that create no message: those a permutation maps onto themselves
    /// (a transpose's diagonal, the centre of an odd bit-complement, a bit-reverse
    /// palindrome, a random permutation's fixed points), which would send to themselves,
    /// and under `HotspotNodes` a hot node that is the only one. Their share of the load is not offered: a run offers
    /// `workload.rate` × mean length × (1 − silent / endpoints) flits per node per cycle.
    pub fn silent_sources(&self) -> usize {
        self.endpoints
            .clone()
            .filter(|&s| !self.sends(NodeId(s)))
            .count()
    }

    /// Makes the fixed points send to themselves, or keeps them silent.
    pub fn with_fixed_points(mut self, rule: crate::config::FixedPoints) -> Self {
        self.to_self = rule == crate::config::FixedPoints::ToSelf;
        self
    }

    /// Whether `src` creates messages at all under this pattern.
    pub fn sends(&self, src: NodeId) -> bool {
        if self.to_self {
            return self.endpoints.contains(&src.0);
        }
        if let Kind::HotspotNodes { nodes } = &self.kind {
            return self.endpoints.contains(&src.0) && nodes.iter().any(|&n| n != src.0);
        }
        self.endpoints.contains(&src.0) && self.fixed_destination(src.0).is_none_or(|d| d != src.0)
    }

    /// The destination of permutation patterns.
    fn fixed_destination(&self, src: u32) -> Option<u32> {
        match &self.kind {
            Kind::BitReverse { bits } => Some(src.reverse_bits() >> (32 - bits)),
            Kind::Shuffle { bits } => {
                let mask = (1u32 << bits) - 1;
                Some(((src << 1) & mask) | (src >> (bits - 1)))
            }
            Kind::Tornado | Kind::Neighbor => {
                let g = match &self.topology {
                    Topology::Torus(t) => t.grid,
                    Topology::Mesh(m) => m.grid,
                    _ => unreachable!("refused by DestPattern::new"),
                };
                let shift = if self.kind == Kind::Tornado {
                    g.k.div_ceil(2) - 1
                } else {
                    1
                };
                Some((0..g.n).fold(0, |acc, d| {
                    acc + ((g.coord(src, d) + shift) % g.k) * g.stride(d)
                }))
            }
            Kind::RandomPermutation { perm } => Some(perm[(src - self.endpoints.start) as usize]),
            Kind::BitComplement => Some(match &self.topology {
                Topology::Hypercube(h) => !src & ((1 << h.dim) - 1),
                Topology::Torus(t) => complement(t.grid, src),
                Topology::Mesh(m) => complement(m.grid, src),
                Topology::ManhattanStreet(m) => {
                    complement(crate::topology::Grid { k: m.k, n: 2 }, src)
                }
                _ => unreachable!("refused by DestPattern::new"),
            }),
            Kind::Transpose => Some(match &self.topology {
                Topology::Hypercube(h) => {
                    let half = h.dim / 2;
                    let lo = src & ((1 << half) - 1);
                    (lo << half) | (src >> half)
                }
                Topology::Torus(t) => transpose(t.grid.k, src),
                Topology::Mesh(m) => transpose(m.grid.k, src),
                Topology::ManhattanStreet(m) => transpose(m.k, src),
                _ => unreachable!("refused by DestPattern::new"),
            }),
            _ => None,
        }
    }

    /// Draws the destination of a message created at `src` (never `src` itself, except
    /// under `UniformWithSelf`; call only when [`DestPattern::sends`] is true).
    pub fn sample(&self, src: NodeId, rng: &mut NodeRng) -> NodeId {
        let s = src.0;
        if let Some(d) = self.fixed_destination(s) {
            return NodeId(d);
        }
        NodeId(match self.kind {
            Kind::Uniform => self.uniform_other(s, rng),
            Kind::HotspotNodes { ref nodes } if self.to_self && nodes.len() == 1 => nodes[0],
            Kind::HotspotNodes { ref nodes } => {
                // The hot nodes other than the source, uniformly (sorted: skip past it).
                let own = nodes.binary_search(&s).ok();
                let i = below(rng, (nodes.len() - own.is_some() as usize) as u64) as usize;
                nodes[if own.is_some_and(|o| i >= o) {
                    i + 1
                } else {
                    i
                }]
            }
            Kind::UniformWithSelf => {
                let e = &self.endpoints;
                e.start + below(rng, e.len() as u64) as u32
            }
            Kind::Hotspot { node, fraction } => {
                if node != s && unit(rng) < fraction {
                    node
                } else {
                    self.uniform_other(s, rng)
                }
            }
            Kind::Sphere { radius, p } => {
                let inside = unit(rng) < p;
                self.sphere(s, radius, inside, rng)
            }
            Kind::Decreasing { decay } => self.decreasing(s, decay, rng),
            Kind::GroupShift(g) => {
                let next = (g.group_of(s) + 1) % g.groups;
                g.terminal(next, below(rng, g.terminals_per_group() as u64) as u32)
            }
            Kind::BitComplement
            | Kind::Transpose
            | Kind::BitReverse { .. }
            | Kind::Shuffle { .. }
            | Kind::Tornado
            | Kind::Neighbor
            | Kind::RandomPermutation { .. } => unreachable!("fixed destinations"),
        })
    }

    fn sphere(&self, s: u32, radius: u32, mut inside: bool, rng: &mut NodeRng) -> u32 {
        let diameter = self.topology.diameter();
        // Nothing lies outside the sphere (of any node, or of this one): the message
        // goes inside it, rather than a draw that could never succeed.
        if radius >= diameter || self.has_outside.as_ref().is_some_and(|h| !h[s as usize]) {
            inside = true;
        }
        if let Some(c) = &self.classes {
            let range = if inside {
                1..=radius.min(diameter) as usize
            } else {
                radius as usize + 1..=diameter as usize
            };
            let total: usize = c.by_dist[range.clone()].iter().map(Vec::len).sum();
            let mut pick = below(rng, total as u64) as usize;
            for h in range {
                let class = &c.by_dist[h];
                if pick < class.len() {
                    return self.translate(s, class[pick]);
                }
                pick -= class.len();
            }
            unreachable!("pick within total");
        }
        loop {
            let j = self.uniform_other(s, rng);
            let d = self.topology.distance(NodeId(s), NodeId(j));
            if (d <= radius) == inside {
                return j;
            }
        }
    }

    fn decreasing(&self, s: u32, decay: f64, rng: &mut NodeRng) -> u32 {
        if let Some(c) = &self.classes {
            let weight = |h: usize| c.by_dist[h].len() as f64 * decay.powi(h as i32 - 1);
            let total: f64 = (1..c.by_dist.len()).map(weight).sum();
            let mut u = unit(rng) * total;
            for h in 1..c.by_dist.len() {
                let w = weight(h);
                if u < w || h + 1 == c.by_dist.len() {
                    let class = &c.by_dist[h];
                    return self.translate(s, class[below(rng, class.len() as u64) as usize]);
                }
                u -= w;
            }
        }
        loop {
            let j = self.uniform_other(s, rng);
            let d = self.topology.distance(NodeId(s), NodeId(j));
            if unit(rng) < decay.powi(d as i32 - 1) {
                return j;
            }
        }
    }
}

/// The exact probability that a message created at one node goes to another, for every
/// pair: what [`DestPattern::sample`] draws, in closed form (the channel-load bound of
/// `routing::channel_load` routes these). Built once per pattern: sphere of locality and
/// decreasing probability need, per source, the count or weight of the nodes around it.
#[derive(Clone, Debug)]
pub struct PairProbabilities {
    pattern: DestPattern,
    /// Per source (one entry for every source on translation-invariant topologies):
    /// sphere — (others within the radius, others beyond it); decreasing — (the sum of
    /// decay^(h−1) over the other nodes, 0).
    per_source: Vec<(f64, f64)>,
}

impl PairProbabilities {
    /// The probabilities of `pattern`.
    pub fn new(pattern: &DestPattern) -> Self {
        let t = &pattern.topology;
        let translatable = pattern.classes.is_some();
        let sources: Vec<u32> = match pattern.kind {
            Kind::Sphere { .. } | Kind::Decreasing { .. } if translatable => vec![0],
            Kind::Sphere { .. } | Kind::Decreasing { .. } => pattern.endpoints.clone().collect(),
            _ => Vec::new(),
        };
        let per_source = sources
            .iter()
            .map(|&s| {
                let others = pattern
                    .endpoints
                    .clone()
                    .filter(|&o| o != s)
                    .map(|o| t.distance(NodeId(s), NodeId(o)));
                match pattern.kind {
                    Kind::Sphere { radius, .. } => others.fold((0.0, 0.0), |(i, o), d| {
                        if d <= radius {
                            (i + 1.0, o)
                        } else {
                            (i, o + 1.0)
                        }
                    }),
                    Kind::Decreasing { decay } => {
                        (others.map(|d| decay.powi(d as i32 - 1)).sum(), 0.0)
                    }
                    _ => (0.0, 0.0),
                }
            })
            .collect();
        PairProbabilities {
            pattern: pattern.clone(),
            per_source,
        }
    }

    /// The probability that a message created at `src` goes to `dst` (0 when `src`
    /// creates none, [`DestPattern::sends`]).
    pub fn p(&self, src: NodeId, dst: NodeId) -> f64 {
        let pat = &self.pattern;
        let e = &pat.endpoints;
        let (s, d) = (src.0, dst.0);
        if !e.contains(&s) || !e.contains(&d) || !pat.sends(src) {
            return 0.0;
        }
        if let Some(f) = pat.fixed_destination(s) {
            return if f == d { 1.0 } else { 0.0 };
        }
        if let Kind::HotspotNodes { nodes } = &pat.kind {
            if pat.to_self && nodes.len() == 1 {
                return if d == nodes[0] { 1.0 } else { 0.0 };
            }
        }
        let others = (e.len() - 1) as f64;
        if s == d && pat.kind != Kind::UniformWithSelf {
            return 0.0;
        }
        let row = || {
            self.per_source[if self.per_source.len() == 1 {
                0
            } else {
                (s - e.start) as usize
            }]
        };
        match pat.kind {
            Kind::Uniform => 1.0 / others,
            Kind::HotspotNodes { ref nodes } => {
                let targets = nodes.len() - nodes.contains(&s) as usize;
                if nodes.contains(&d) {
                    1.0 / targets as f64
                } else {
                    0.0
                }
            }
            Kind::UniformWithSelf => 1.0 / e.len() as f64,
            Kind::Hotspot { node, fraction } => {
                let rest = if node == s { 1.0 } else { 1.0 - fraction };
                rest / others
                    + if d == node && node != s {
                        fraction
                    } else {
                        0.0
                    }
            }
            Kind::Sphere { radius, p } => {
                let (inside, outside) = row();
                let near = pat.topology.distance(src, dst) <= radius;
                match (outside == 0.0, near) {
                    (true, true) => 1.0 / inside,
                    (true, false) => 0.0,
                    (false, true) => p / inside,
                    (false, false) => (1.0 - p) / outside,
                }
            }
            Kind::Decreasing { decay } => {
                let h = pat.topology.distance(src, dst);
                decay.powi(h as i32 - 1) / row().0
            }
            Kind::GroupShift(g) => {
                if g.group_of(d) == (g.group_of(s) + 1) % g.groups {
                    1.0 / g.terminals_per_group() as f64
                } else {
                    0.0
                }
            }
            Kind::BitComplement
            | Kind::Transpose
            | Kind::BitReverse { .. }
            | Kind::Shuffle { .. }
            | Kind::Tornado
            | Kind::Neighbor
            | Kind::RandomPermutation { .. } => unreachable!("fixed destinations"),
        }
    }
}

fn complement(g: crate::topology::Grid, src: u32) -> u32 {
    (0..g.n).fold(0, |acc, d| acc + (g.k - 1 - g.coord(src, d)) * g.stride(d))
}

fn transpose(k: u32, src: u32) -> u32 {
    (src % k) * k + src / k
}

/// The largest distance from `s` to any node: per dimension the farther edge on a mesh;
/// the diameter on the Manhattan Street network, whose nodes all look alike (a test
/// checks it by enumeration); by enumeration elsewhere.
fn eccentricity(topology: &Topology, s: u32) -> u32 {
    match topology {
        Topology::ManhattanStreet(_) | Topology::Hypercube(_) | Topology::Torus(_) => {
            topology.diameter()
        }
        Topology::Mesh(m) => {
            let g = &m.grid;
            (0..g.n)
                .map(|d| {
                    let c = g.coord(s, d);
                    c.max(g.k - 1 - c)
                })
                .sum()
        }
        _ => (0..topology.nodes() as u32)
            .map(|o| topology.distance(NodeId(s), NodeId(o)))
            .max()
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::foundation::rng::stream;

    fn topo(cfg: TopologyConfig) -> Topology {
        Topology::from_config(&cfg).unwrap()
    }

    #[test]
    fn uniform_with_self_sends_a_fraction_one_over_n_to_the_source() {
        let t = topo(TopologyConfig::Torus {
            k: 4,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        let (with, without) = (
            DestPattern::new(&PatternConfig::UniformWithSelf, &t, 1).unwrap(),
            DestPattern::new(&PatternConfig::Uniform, &t, 1).unwrap(),
        );
        let mut rng = stream(7, 0, 3, 0);
        let draws = 160_000;
        let mut counts = [0u32; 16];
        for _ in 0..draws {
            assert!(with.sends(NodeId(3)));
            counts[with.sample(NodeId(3), &mut rng).0 as usize] += 1;
            assert_ne!(without.sample(NodeId(3), &mut rng), NodeId(3));
        }
        // Every node, the source included, about 1/16 of the draws (±5 standard deviations).
        let (p, sd) = (1.0 / 16.0, (draws as f64 / 16.0 * 15.0 / 16.0).sqrt());
        for (d, &c) in counts.iter().enumerate() {
            assert!((c as f64 - p * draws as f64).abs() < 5.0 * sd, "{d}: {c}");
        }
    }

    #[test]
    fn permutations_map_as_documented() {
        let t = topo(TopologyConfig::Torus {
            k: 4,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        let mut rng = stream(1, 0, 0, 0);
        let bc = DestPattern::new(&PatternConfig::BitComplement, &t, 1).unwrap();
        assert_eq!(bc.sample(NodeId(1), &mut rng), NodeId(2 + 3 * 4)); // (1,0) → (2,3)
        let tr = DestPattern::new(&PatternConfig::Transpose, &t, 1).unwrap();
        assert_eq!(tr.sample(NodeId(1), &mut rng), NodeId(4)); // (1,0) → (0,1)
        assert!(!tr.sends(NodeId(5))); // (1,1) is on the diagonal
        let h = topo(TopologyConfig::Hypercube { dim: 4 });
        let tr = DestPattern::new(&PatternConfig::Transpose, &h, 1).unwrap();
        assert_eq!(tr.sample(NodeId(0b0111), &mut rng), NodeId(0b1101));
    }

    /// The destination of every source (None for a silent one) of a permutation pattern.
    fn map(cfg: PatternConfig, t: &Topology, seed: u64) -> Vec<Option<u32>> {
        let p = DestPattern::new(&cfg, t, seed).unwrap();
        let mut rng = stream(1, 0, 0, 0);
        (0..t.nodes() as u32)
            .map(|s| p.sends(NodeId(s)).then(|| p.sample(NodeId(s), &mut rng).0))
            .collect()
    }

    /// BookSim's definitions, written from its description rather than its code: the
    /// address as a string of `bits` binary digits, or as base-k digits.
    fn bits_of(s: u32, bits: u32) -> String {
        format!("{s:0w$b}", w = bits as usize)
    }

    fn expect(f: impl Fn(u32) -> u32, n: u32) -> Vec<Option<u32>> {
        (0..n).map(|s| Some(f(s)).filter(|&d| d != s)).collect()
    }

    #[test]
    fn bit_reverse_and_shuffle_permute_address_bits_as_booksim_does() {
        for t in [
            topo(TopologyConfig::Torus {
                k: 4,
                n: 2,
                bidirectional: true,
                c: 1,
            }),
            topo(TopologyConfig::Hypercube { dim: 5 }),
            topo(TopologyConfig::Mesh { k: 8, n: 1, c: 1 }),
        ] {
            let n = t.nodes() as u32;
            let bits = n.trailing_zeros();
            let rev = |s| {
                u32::from_str_radix(&bits_of(s, bits).chars().rev().collect::<String>(), 2).unwrap()
            };
            let shuf = |s| {
                let b = bits_of(s, bits);
                u32::from_str_radix(&format!("{}{}", &b[1..], &b[..1]), 2).unwrap()
            };
            assert_eq!(map(PatternConfig::BitReverse, &t, 1), expect(rev, n));
            assert_eq!(map(PatternConfig::Shuffle, &t, 1), expect(shuf, n));
            // Fixed points: the palindromes, and under shuffle all-zeros and all-ones.
            let palindromes = (0..n).filter(|&s| rev(s) == s).count();
            let pat = DestPattern::new(&PatternConfig::BitReverse, &t, 1).unwrap();
            assert_eq!(pat.silent_sources(), palindromes);
            assert_eq!(palindromes, 1 << bits.div_ceil(2));
            let pat = DestPattern::new(&PatternConfig::Shuffle, &t, 1).unwrap();
            assert_eq!(pat.silent_sources(), 2);
        }
    }

    #[test]
    fn tornado_and_neighbor_shift_every_coordinate_as_booksim_does() {
        for (k, n) in [(8u32, 1u32), (5, 2), (4, 3)] {
            let digits = |s: u32| (0..n).map(move |d| s / k.pow(d) % k);
            let shifted = |shift: u32| {
                move |s: u32| {
                    digits(s)
                        .enumerate()
                        .map(|(d, c)| (c + shift) % k * k.pow(d as u32))
                        .sum::<u32>()
                }
            };
            // BookSim2's tornado: half way round, rounded up, minus one: 3 on k = 8, 2 on k = 5.
            // (Odd k: (k − 1)/2, which is k/2 in integer division.)
            let half = if k % 2 == 0 { k / 2 - 1 } else { k / 2 };
            for t in [
                topo(TopologyConfig::Torus {
                    k,
                    n,
                    bidirectional: true,
                    c: 1,
                }),
                topo(TopologyConfig::Mesh { k, n, c: 1 }),
            ] {
                let nodes = t.nodes() as u32;
                assert_eq!(
                    map(PatternConfig::Tornado, &t, 1),
                    expect(shifted(half), nodes)
                );
                assert_eq!(
                    map(PatternConfig::Neighbor, &t, 1),
                    expect(shifted(1), nodes)
                );
                let p = DestPattern::new(&PatternConfig::Tornado, &t, 1).unwrap();
                assert_eq!(p.silent_sources(), 0, "no fixed points for k > 2");
            }
        }
    }

    #[test]
    fn a_random_permutation_is_a_permutation_drawn_from_the_seed() {
        let t = topo(TopologyConfig::Torus {
            k: 8,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        let full = |seed| {
            let p = DestPattern::new(&PatternConfig::RandomPermutation, &t, seed).unwrap();
            let Kind::RandomPermutation { perm } = &p.kind else {
                unreachable!()
            };
            (perm.to_vec(), p.silent_sources())
        };
        let (a, silent) = full(5);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..64).collect::<Vec<_>>(), "a permutation");
        assert_eq!(full(5).0, a, "the same seed, the same permutation");
        assert_ne!(full(6).0, a, "another seed, another permutation");
        let fixed = a
            .iter()
            .enumerate()
            .filter(|&(s, &d)| s as u32 == d)
            .count();
        assert_eq!(silent, fixed, "fixed points are the silent sources");
        let m = map(PatternConfig::RandomPermutation, &t, 5);
        for (s, d) in m.iter().enumerate() {
            assert_eq!(*d, Some(a[s]).filter(|&d| d != s as u32));
        }
        // Over many seeds about one fixed point on average (1 for any n).
        let mean = (0..200).map(|seed| full(seed).1).sum::<usize>() as f64 / 200.0;
        assert!((mean - 1.0).abs() < 0.3, "{mean}");
    }

    #[test]
    fn hotspot_nodes_send_everything_to_the_other_hot_nodes() {
        let t = topo(TopologyConfig::Mesh { k: 4, n: 2, c: 1 });
        let p = DestPattern::new(
            &PatternConfig::HotspotNodes {
                nodes: vec![9, 2, 5],
            },
            &t,
            1,
        )
        .unwrap();
        let mut rng = stream(8, 0, 0, 0);
        let mut counts = [0u32; 16];
        for _ in 0..30_000 {
            counts[p.sample(NodeId(0), &mut rng).0 as usize] += 1;
        }
        for (d, &c) in counts.iter().enumerate() {
            if [2, 5, 9].contains(&d) {
                assert!((c as f64 - 10_000.0).abs() < 500.0, "{d}: {c}");
            } else {
                assert_eq!(c, 0, "{d}");
            }
        }
        for _ in 0..1000 {
            let d = p.sample(NodeId(5), &mut rng);
            assert!(d == NodeId(2) || d == NodeId(9));
        }
        assert_eq!(p.silent_sources(), 0);
        let lone =
            DestPattern::new(&PatternConfig::HotspotNodes { nodes: vec![7] }, &t, 1).unwrap();
        assert!(!lone.sends(NodeId(7)));
        assert_eq!(
            lone.silent_sources(),
            1,
            "the only hot node has nowhere to send"
        );
    }

    #[test]
    fn booksim_patterns_refuse_networks_they_are_not_defined_on() {
        let odd = topo(TopologyConfig::Torus {
            k: 3,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        for p in [PatternConfig::BitReverse, PatternConfig::Shuffle] {
            let e = DestPattern::new(&p, &odd, 1).unwrap_err().to_string();
            assert!(e.contains("power-of-two"), "{e}");
        }
        let cube = topo(TopologyConfig::Hypercube { dim: 4 });
        for p in [PatternConfig::Tornado, PatternConfig::Neighbor] {
            let e = DestPattern::new(&p, &cube, 1).unwrap_err().to_string();
            assert!(e.contains("torus or a mesh"), "{e}");
        }
        for nodes in [vec![], vec![1, 1], vec![99]] {
            assert!(DestPattern::new(&PatternConfig::HotspotNodes { nodes }, &odd, 1).is_err());
        }
    }

    #[test]
    fn sphere_of_locality_respects_the_radius_and_probability() {
        for cfg in [
            TopologyConfig::Torus {
                k: 8,
                n: 2,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Mesh { k: 8, n: 2, c: 1 },
        ] {
            let t = topo(cfg.clone());
            let p = DestPattern::new(
                &PatternConfig::SphereOfLocality {
                    radius: 2,
                    probability: 0.75,
                },
                &t,
                1,
            )
            .unwrap();
            let mut rng = stream(2, 0, 0, 0);
            let n = 20_000;
            let mut inside = 0;
            for i in 0..n {
                let s = NodeId(i % 64);
                let d = p.sample(s, &mut rng);
                assert_ne!(d, s);
                if t.distance(s, d) <= 2 {
                    inside += 1;
                }
            }
            let frac = inside as f64 / n as f64;
            assert!((frac - 0.75).abs() < 0.02, "{cfg:?}: {frac}");
        }
    }

    #[test]
    fn decreasing_probability_halves_per_hop_on_the_hypercube() {
        let t = topo(TopologyConfig::Hypercube { dim: 6 });
        let p =
            DestPattern::new(&PatternConfig::DecreasingProbability { decay: 0.5 }, &t, 1).unwrap();
        let mut rng = stream(4, 0, 0, 0);
        let mut by_dist = [0u32; 7];
        for _ in 0..60_000 {
            by_dist[t.distance(NodeId(9), p.sample(NodeId(9), &mut rng)) as usize] += 1;
        }
        // Per destination, distance 2 has half the weight of distance 1; C(6,2)=15 nodes
        // against C(6,1)=6: expected ratio 15·0.5/6 = 1.25.
        let ratio = by_dist[2] as f64 / by_dist[1] as f64;
        assert!((ratio - 1.25).abs() < 0.06, "{ratio}");
    }

    #[test]
    fn bad_patterns_are_rejected() {
        let t = topo(TopologyConfig::Torus {
            k: 4,
            n: 3,
            bidirectional: true,
            c: 1,
        });
        assert!(DestPattern::new(&PatternConfig::Transpose, &t, 1).is_err());
        assert!(DestPattern::new(
            &PatternConfig::Hotspot {
                node: 64,
                fraction: 0.1
            },
            &t,
            1
        )
        .is_err());
        assert!(DestPattern::new(
            &PatternConfig::Hotspot {
                node: 1,
                fraction: 1.5
            },
            &t,
            1
        )
        .is_err());
        assert!(
            DestPattern::new(&PatternConfig::DecreasingProbability { decay: 0.0 }, &t, 1).is_err()
        );
    }

    #[test]
    fn a_sphere_on_a_mesh_whose_centre_sees_nothing_outside_sends_inside_instead_of_looping() {
        // 8×8 mesh, radius 8: the central nodes are at most 8 hops from anything, the
        // corners 14 (hardening D05: the outside draw never ended).
        let topo = Topology::from_config(&crate::config::TopologyConfig::Mesh { k: 8, n: 2, c: 1 })
            .unwrap();
        let pat = DestPattern::new(
            &PatternConfig::SphereOfLocality {
                radius: 8,
                probability: 0.0,
            },
            &topo,
            1,
        )
        .unwrap();
        let mut rng = stream(3, 0, 0, 0);
        let centre = NodeId(3 * 8 + 3);
        assert_eq!(eccentricity(&topo, centre.0), 8);
        for _ in 0..200 {
            let d = pat.sample(centre, &mut rng);
            assert!(topo.distance(centre, d) <= 8);
            let d = pat.sample(NodeId(0), &mut rng);
            assert!(
                topo.distance(NodeId(0), d) > 8,
                "a corner still goes outside"
            );
        }
    }

    #[test]
    fn every_manhattan_street_node_is_a_diameter_away_from_some_node() {
        for k in [4, 6, 8] {
            let topo = Topology::from_config(&crate::config::TopologyConfig::ManhattanStreet { k })
                .unwrap();
            for s in 0..topo.nodes() as u32 {
                let far = (0..topo.nodes() as u32)
                    .map(|o| topo.distance(NodeId(s), NodeId(o)))
                    .max();
                assert_eq!(far, Some(topo.diameter()), "k = {k}, node {s}");
            }
        }
    }
}

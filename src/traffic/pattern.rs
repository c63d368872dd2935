//! Destination patterns. Sources whose permutation maps them onto themselves (the
//! centre of an odd bit-complement, the diagonal of a transpose) create no messages:
//! a message to oneself never enters the network. The one exception is
//! `UniformWithSelf` (BookSim's uniform traffic), which draws the destination among all
//! nodes, the source included; wormhole switching sends such a message through the
//! source's own router, from an injection engine to an ejection engine.
//!
//! Sphere of locality and decreasing probability depend on distances. On the hypercube
//! and the torus, translations are automorphisms, so the destinations at each distance
//! from node 0 are tabulated once and translated to the source; on the mesh and the
//! Manhattan Street network (not translation-invariant) they are drawn exactly by
//! rejection: a uniform candidate is accepted with the pattern's weight.

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
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Uniform,
    UniformWithSelf,
    Sphere { radius: u32, p: f64 },
    Decreasing { decay: f64 },
    BitComplement,
    Transpose,
    Hotspot { node: u32, fraction: f64 },
}

impl DestPattern {
    /// Checks a pattern against the topology.
    pub fn new(cfg: &PatternConfig, topology: &Topology) -> Result<Self> {
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
        let kind = match *cfg {
            PatternConfig::Uniform => Kind::Uniform,
            PatternConfig::UniformWithSelf => Kind::UniformWithSelf,
            PatternConfig::SphereOfLocality {
                radius,
                probability,
            } => {
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
                    Topology::Hosts(_) => false,
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
        };
        // Hosts have no coordinates to complement or transpose, and lie at least two
        // links apart, so a sphere of locality could hold none of them; paper 002 and
        // its model use uniform destinations.
        if matches!(topology, Topology::Hosts(_))
            && !matches!(kind, Kind::Uniform | Kind::Hotspot { .. })
        {
            return Err(Error::config(
                "a host/switch network takes workload.pattern Uniform (paper 002's) or Hotspot",
            ));
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
    /// (a transpose's diagonal, the centre of an odd bit-complement), which would send to
    /// themselves. Their share of the load is not offered: a run offers
    /// `workload.rate` × mean length × (1 − silent / endpoints) flits per node per cycle.
    pub fn silent_sources(&self) -> usize {
        self.endpoints
            .clone()
            .filter(|&s| !self.sends(NodeId(s)))
            .count()
    }

    /// Whether `src` creates messages at all under this pattern.
    pub fn sends(&self, src: NodeId) -> bool {
        self.endpoints.contains(&src.0) && self.fixed_destination(src.0).is_none_or(|d| d != src.0)
    }

    /// The destination of permutation patterns.
    fn fixed_destination(&self, src: u32) -> Option<u32> {
        match self.kind {
            Kind::BitComplement => Some(match &self.topology {
                Topology::Hypercube(h) => !src & ((1 << h.dim) - 1),
                Topology::Torus(t) => complement(t.grid, src),
                Topology::Mesh(m) => complement(m.grid, src),
                Topology::ManhattanStreet(m) => {
                    complement(crate::topology::Grid { k: m.k, n: 2 }, src)
                }
                Topology::Hosts(_) => unreachable!("refused by DestPattern::new"),
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
                Topology::Hosts(_) => unreachable!("refused by DestPattern::new"),
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
            Kind::BitComplement | Kind::Transpose => unreachable!(),
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
            Kind::BitComplement | Kind::Transpose => unreachable!("fixed destinations"),
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
        });
        let (with, without) = (
            DestPattern::new(&PatternConfig::UniformWithSelf, &t).unwrap(),
            DestPattern::new(&PatternConfig::Uniform, &t).unwrap(),
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
        });
        let mut rng = stream(1, 0, 0, 0);
        let bc = DestPattern::new(&PatternConfig::BitComplement, &t).unwrap();
        assert_eq!(bc.sample(NodeId(1), &mut rng), NodeId(2 + 3 * 4)); // (1,0) → (2,3)
        let tr = DestPattern::new(&PatternConfig::Transpose, &t).unwrap();
        assert_eq!(tr.sample(NodeId(1), &mut rng), NodeId(4)); // (1,0) → (0,1)
        assert!(!tr.sends(NodeId(5))); // (1,1) is on the diagonal
        let h = topo(TopologyConfig::Hypercube { dim: 4 });
        let tr = DestPattern::new(&PatternConfig::Transpose, &h).unwrap();
        assert_eq!(tr.sample(NodeId(0b0111), &mut rng), NodeId(0b1101));
    }

    #[test]
    fn sphere_of_locality_respects_the_radius_and_probability() {
        for cfg in [
            TopologyConfig::Torus {
                k: 8,
                n: 2,
                bidirectional: true,
            },
            TopologyConfig::Mesh { k: 8, n: 2 },
        ] {
            let t = topo(cfg.clone());
            let p = DestPattern::new(
                &PatternConfig::SphereOfLocality {
                    radius: 2,
                    probability: 0.75,
                },
                &t,
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
        let p = DestPattern::new(&PatternConfig::DecreasingProbability { decay: 0.5 }, &t).unwrap();
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
        });
        assert!(DestPattern::new(&PatternConfig::Transpose, &t).is_err());
        assert!(DestPattern::new(
            &PatternConfig::Hotspot {
                node: 64,
                fraction: 0.1
            },
            &t
        )
        .is_err());
        assert!(DestPattern::new(
            &PatternConfig::Hotspot {
                node: 1,
                fraction: 1.5
            },
            &t
        )
        .is_err());
        assert!(
            DestPattern::new(&PatternConfig::DecreasingProbability { decay: 0.0 }, &t).is_err()
        );
    }

    #[test]
    fn a_sphere_on_a_mesh_whose_centre_sees_nothing_outside_sends_inside_instead_of_looping() {
        // 8×8 mesh, radius 8: the central nodes are at most 8 hops from anything, the
        // corners 14 (hardening D05: the outside draw never ended).
        let topo =
            Topology::from_config(&crate::config::TopologyConfig::Mesh { k: 8, n: 2 }).unwrap();
        let pat = DestPattern::new(
            &PatternConfig::SphereOfLocality {
                radius: 8,
                probability: 0.0,
            },
            &topo,
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

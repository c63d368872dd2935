//! Channel loads of a destination pattern under a routing function, and the throughput
//! bound they give: every source→destination pair routed with the pattern's exact
//! probabilities (`traffic::pattern::PairProbabilities`), each sending node injecting one
//! flit per cycle; the busiest channel then carries `max` flits per cycle, and no load
//! above capacity / `max` per sending node can be sustained (Dally & Towles, ch. 3).
//!
//! Dimension order is exact: one path per pair, as [`crate::routing::dor::dor_step`]
//! takes it (ties of a ring of even k broken by parity, as the routers do), or with
//! `TorusTie::Random` the tied flows split half and half over the two directions, as the
//! routers' coins split them in the mean. Adaptive
//! routing is a bound of an assumption: at each hop the load is split evenly over the
//! minimal output ports (the routers choose by their selection function and by what is
//! free, which neither this nor any static count knows); its bound is the one of that
//! even split. The turn models (2-D meshes) are treated like adaptive routing, the load
//! split evenly over the ports each model permits (odd-even's depend on whether the
//! message is still in its source's column, so those flows are kept apart); XY-YX is the
//! average of the XY and YX loads (half the messages take each order). `MinAdapt` is
//! treated as `Adaptive` (the even split over the minimal ports). Valiant and ROMM are
//! exact: the sum of their two phases' dimension-order loads, each pair's flow spread
//! over its intermediate nodes as the routers draw them — for Valiant uniformly over
//! the network (phase 1 then carries each sender's flow to every node alike, phase 2
//! every destination's inflow from every node alike), for ROMM over the pair's minimal
//! rectangle (enumerated pair by pair, so only up to [`MAX_ROMM_NODES`] nodes).
//!
//! Owns: the loads and the bound. Not here: the patterns and their probabilities
//! (`traffic::pattern`), the uniform-traffic closed forms (`topology::Topology::capacity`),
//! where the bound is printed (`cli::check`, the report's `throughput.pattern_bound`).
//!
//! Cost: for each destination the flows towards it are pushed down the minimal paths in
//! order of decreasing distance, O(nodes² × degree) in all; above [`MAX_NODES`] nodes it
//! is not computed.

use crate::config::{Routing, TorusTie};
use crate::foundation::types::{NodeId, PortId};
use crate::topology::Topology;
use crate::traffic::pattern::PairProbabilities;
use crate::traffic::DestPattern;

/// Largest network whose channel loads are computed (nodes² × degree operations: a
/// 64×64 torus takes about 10⁸).
pub const MAX_NODES: usize = 4096;

/// Largest network whose ROMM loads are computed (every pair's minimal rectangle is
/// enumerated: up to nodes³ operations).
pub const MAX_ROMM_NODES: usize = 256;

/// The channel loads of a pattern, per sending node injecting one flit per cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelLoad {
    /// Flits per cycle on the busiest channel.
    pub max: f64,
    /// The busiest channel: its node and output port (the first in node order of the
    /// channels within 1e-9 of `max`).
    pub busiest: (NodeId, PortId),
    /// Nodes that create messages.
    pub senders: usize,
    /// Nodes that create and receive messages.
    pub endpoints: usize,
    /// The routing the loads are of.
    pub routing: Routing,
}

impl ChannelLoad {
    /// The largest load per sending node, flits per cycle, that channels of
    /// `per_channel` flits per cycle carry (None: the pattern loads no channel).
    pub fn sender_bound(&self, per_channel: f64) -> Option<f64> {
        (self.max > 0.0).then(|| per_channel / self.max)
    }

    /// The same bound per node that creates and receives messages — the unit of a run
    /// report's `throughput.offered` —: the senders' bound × senders / endpoints.
    pub fn bound(&self, per_channel: f64) -> Option<f64> {
        self.sender_bound(per_channel)
            .map(|b| b * self.senders as f64 / self.endpoints.max(1) as f64)
    }
}

/// The channel loads of `pattern` on `topology` under `routing` (dimension order, or
/// adaptive with the load split evenly over the minimal ports, or Valiant's and ROMM's
/// two phases). None for host/switch and Manhattan Street networks (source routes and
/// deflection, not these routing functions), for networks over [`MAX_NODES`] nodes,
/// and for ROMM over [`MAX_ROMM_NODES`].
pub fn channel_load(
    topology: &Topology,
    pattern: &DestPattern,
    routing: Routing,
    tie: TorusTie,
) -> Option<ChannelLoad> {
    if matches!(topology, Topology::Hosts(_) | Topology::ManhattanStreet(_))
        || topology.nodes() > MAX_NODES
    {
        return None;
    }
    let probs = PairProbabilities::new(pattern);
    let mesh2 = matches!(topology, Topology::Mesh(m) if m.grid.n == 2);
    let load = match routing {
        // Refused off the meshes (`RoutingFn::new`); no bound there.
        Routing::XyYx if !matches!(topology, Topology::Mesh(_)) => return None,
        r if crate::routing::turn::is_turn_model(r) && !mesh2 => return None,
        // Half the messages in each order, each order on its own path.
        Routing::XyYx => {
            let p = |s: u32, d: u32| probs.p(NodeId(s), NodeId(d));
            let xy = loads(topology, &p, Routing::DimensionOrder, tie, false);
            let yx = loads(topology, &p, Routing::XyYx, tie, true);
            xy.iter().zip(&yx).map(|(a, b)| (a + b) / 2.0).collect()
        }
        Routing::Valiant | Routing::Romm
            if !matches!(topology, Topology::Mesh(_) | Topology::Torus(_)) =>
        {
            return None
        }
        // Its choice depends on the routers' state: no static load.
        Routing::UgalLocal | Routing::UgalGlobal => return None,
        Routing::Valiant => {
            // Every sender's flow, and every destination's inflow, spread evenly over the
            // N intermediate nodes.
            let n = topology.nodes();
            let (mut out, mut inflow) = (vec![0.0; n], vec![0.0; n]);
            for s in 0..n as u32 {
                for d in 0..n as u32 {
                    let f = probs.p(NodeId(s), NodeId(d));
                    out[s as usize] += f;
                    inflow[d as usize] += f;
                }
            }
            let nf = n as f64;
            two_phases(
                topology,
                &|s, _| out[s as usize] / nf,
                &|_, d| inflow[d as usize] / nf,
                tie,
            )
        }
        Routing::Romm => {
            let n = topology.nodes();
            if n > MAX_ROMM_NODES {
                return None;
            }
            let (one, two) = romm_phases(topology, &probs);
            two_phases(
                topology,
                &|s, i| one[s as usize * n + i as usize],
                &|i, d| two[i as usize * n + d as usize],
                tie,
            )
        }
        r => loads(
            topology,
            &|s: u32, d: u32| probs.p(NodeId(s), NodeId(d)),
            r,
            tie,
            false,
        ),
    };
    let deg = topology.degree();
    let max = load.iter().copied().fold(0.0, f64::max);
    let at = load.iter().position(|&l| l >= max - 1e-9).unwrap_or(0);
    let senders = pattern
        .endpoints()
        .filter(|&s| pattern.sends(NodeId(s)))
        .count();
    Some(ChannelLoad {
        max,
        busiest: (NodeId((at / deg) as u32), PortId((at % deg) as u8)),
        senders,
        endpoints: pattern.endpoints().len(),
        routing,
    })
}

/// ROMM's two phases as pair flows (row-major nodes × nodes): every pair's flow split
/// evenly over the intermediate nodes of its minimal rectangle, the source → intermediate
/// part in the first, the intermediate → destination part in the second.
fn romm_phases(topology: &Topology, probs: &PairProbabilities) -> (Vec<f64>, Vec<f64>) {
    use crate::routing::oblivious::{along, minimal_arc};
    let n = topology.nodes();
    let grid = match topology {
        Topology::Torus(t) => t.grid,
        Topology::Mesh(m) => m.grid,
        _ => return (vec![0.0; n * n], vec![0.0; n * n]),
    };
    let (mut one, mut two) = (vec![0.0; n * n], vec![0.0; n * n]);
    let dims = grid.n as usize;
    let mut arcs = vec![(true, 0u32); dims];
    let mut at = vec![0u32; dims];
    for s in 0..n as u32 {
        for d in 0..n as u32 {
            let f = probs.p(NodeId(s), NodeId(d));
            if f == 0.0 || s == d {
                continue;
            }
            let mut count = 1u32;
            for (dim, arc) in arcs.iter_mut().enumerate() {
                *arc = minimal_arc(topology, NodeId(s), NodeId(d), dim as u32);
                count *= arc.1 + 1;
            }
            let w = f / count as f64;
            at.iter_mut().for_each(|a| *a = 0);
            // Every offset vector of the rectangle, as a mixed-radix counter.
            loop {
                let mut i = s;
                for dim in 0..dims {
                    let (up, _) = arcs[dim];
                    let c = along(topology, grid.coord(s, dim as u32), up, at[dim]);
                    i = grid.with_coord(i, dim as u32, c);
                }
                one[s as usize * n + i as usize] += w;
                two[i as usize * n + d as usize] += w;
                let mut dim = 0;
                while dim < dims {
                    at[dim] += 1;
                    if at[dim] <= arcs[dim].1 {
                        break;
                    }
                    at[dim] = 0;
                    dim += 1;
                }
                if dim == dims {
                    break;
                }
            }
        }
    }
    (one, two)
}

/// Every channel's load, per sending node injecting one flit per cycle, under `routing`:
/// dimension order (or, `descending`, the reverse order of a mesh), or the even split over
/// the ports the adaptive routing or turn model permits. Flows are kept apart by whether
/// they are still in their source's column, the one thing of the source odd-even asks.
fn loads(
    topology: &Topology,
    p: &dyn Fn(u32, u32) -> f64,
    routing: Routing,
    tie: TorusTie,
    descending: bool,
) -> Vec<f64> {
    let n = topology.nodes();
    let deg = topology.degree();
    let mut load = vec![0.0f64; n * deg];
    // [0]: flows still in their source's column; [1]: the others.
    let mut flow = [vec![0.0f64; n], vec![0.0f64; n]];
    // Nodes by distance to the destination, farthest first.
    let mut by_dist: Vec<Vec<u32>> = vec![Vec::new(); topology.diameter() as usize + 1];
    let grid = match topology {
        Topology::Mesh(m) => Some(m.grid),
        _ => None,
    };
    // `[node][port]`: the neighbour (u32::MAX: none), looked up once, not once a flow.
    let next: Vec<u32> = (0..n * deg)
        .map(|i| {
            topology
                .neighbor(NodeId((i / deg) as u32), PortId((i % deg) as u8))
                .map_or(u32::MAX, |m| m.0)
        })
        .collect();
    for d in 0..n as u32 {
        let dst = NodeId(d);
        for b in by_dist.iter_mut() {
            b.clear();
        }
        for v in 0..n as u32 {
            flow[0][v as usize] = if v == d { 0.0 } else { p(v, d) };
            flow[1][v as usize] = 0.0;
            by_dist[topology.distance(NodeId(v), dst) as usize].push(v);
        }
        for ring in by_dist.iter().skip(1).rev() {
            for &v in ring {
                let cur = NodeId(v);
                for col in 0..2 {
                    let f = flow[col][v as usize];
                    // Most flows are empty (a column's off the meshes, the destination's
                    // own): their ports are never looked up.
                    if f == 0.0 {
                        continue;
                    }
                    let ports = match (routing, grid) {
                        // Minimal routing on the dragonfly and the flattened butterfly is
                        // deterministic: its one port.
                        (Routing::DimensionOrder | Routing::Minimal, _) => {
                            dor_ports(topology, cur, dst, tie)
                        }
                        (Routing::XyYx, Some(g)) if descending => {
                            1 << crate::routing::dor::mesh_step_descending(&g, cur, dst).0
                        }
                        (r, Some(g)) if crate::routing::turn::is_turn_model(r) => {
                            crate::routing::turn::permitted_at(r, &g, v, d, col == 0)
                        }
                        _ => topology.minimal_ports(cur, dst).data[0],
                    };
                    let share = f / ports.count_ones() as f64;
                    for p in crate::routing::selection::BitIter(ports) {
                        load[v as usize * deg + p] += share;
                        let to = next[v as usize * deg + p];
                        if to != u32::MAX {
                            // Leaving by X leaves the source's column for good.
                            let same = col == 0 && (grid.is_none() || p >= 2);
                            flow[usize::from(!same)][to as usize] += share;
                        }
                    }
                }
            }
        }
    }
    load
}

/// The loads of a two-phase routing (Valiant, ROMM): dimension order from each source to
/// its intermediate nodes (flows `to_mid(source, intermediate)`) plus dimension order on
/// from them (flows `from_mid(intermediate, destination)`).
fn two_phases(
    topology: &Topology,
    to_mid: &dyn Fn(u32, u32) -> f64,
    from_mid: &dyn Fn(u32, u32) -> f64,
    tie: TorusTie,
) -> Vec<f64> {
    let dor = Routing::DimensionOrder;
    let one = loads(topology, to_mid, dor, tie, false);
    let two = loads(topology, from_mid, dor, tie, false);
    one.iter().zip(&two).map(|(a, b)| a + b).collect()
}

/// The dimension-order port(s) from `cur` towards `dst`: one, or under
/// `TorusTie::Random` both directions of a ring whose offset is exactly k/2 (the coins
/// split the flow evenly).
fn dor_ports(topology: &Topology, cur: NodeId, dst: NodeId, tie: TorusTie) -> u64 {
    let port = crate::routing::dor::dor_step(topology, cur, dst, cur).0;
    if let (Topology::Torus(t), TorusTie::Random) = (topology, tie) {
        let dim = t.port_dim(port.0 as u32).0;
        let st = t.dim_step(cur.0, dst.0, dim);
        if st.up && st.down {
            return 1 << t.port(dim, true) | 1 << t.port(dim, false);
        }
    }
    1 << port.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{PatternConfig, TopologyConfig};

    fn topo(cfg: TopologyConfig) -> Topology {
        Topology::from_config(&cfg).unwrap()
    }

    fn load(t: &Topology, p: PatternConfig, r: Routing) -> ChannelLoad {
        channel_load(t, &DestPattern::new(&p, t, 1).unwrap(), r, TorusTie::Parity).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn uniform_traffic_meets_the_closed_form_bound() {
        // Today's bound (`Topology::capacity`) assumes destinations drawn among all N
        // nodes; Uniform excludes the source, so each sender's flits spread over N − 1
        // and the channels carry N/(N − 1) times as much.
        for cfg in [
            TopologyConfig::Torus {
                k: 8,
                n: 2,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Torus {
                k: 4,
                n: 3,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Mesh { k: 6, n: 2, c: 1 },
            TopologyConfig::Hypercube { dim: 5 },
        ] {
            let t = topo(cfg.clone());
            let n = t.nodes() as f64;
            // An even split over a mesh's minimal ports crowds its centre (below).
            let mesh = matches!(t, Topology::Mesh(_));
            let routings = if mesh {
                vec![Routing::DimensionOrder]
            } else {
                vec![Routing::DimensionOrder, Routing::Adaptive]
            };
            for r in routings {
                let u = load(&t, PatternConfig::Uniform, r);
                assert_eq!((u.senders, u.endpoints), (t.nodes(), t.nodes()));
                let b = u.bound(1.0).unwrap();
                assert!(close(b, t.capacity() * (n - 1.0) / n), "{cfg:?} {r:?}: {b}");
                let w = load(&t, PatternConfig::UniformWithSelf, r);
                let b = w.bound(1.0).unwrap();
                assert!(close(b, t.capacity()), "{cfg:?} {r:?} with self: {b}");
            }
        }
    }

    #[test]
    fn a_unidirectional_torus_carries_half_its_closed_form_bound() {
        // Every x-offset 1..k−1 is travelled one way: the busiest channel carries the
        // mean offset, (k − 1)/2 flits per flit injected (× N/(N − 1)); the closed form
        // 4/k of `Topology::capacity` is about twice that bound.
        let k = 8;
        let t = topo(TopologyConfig::Torus {
            k,
            n: 2,
            bidirectional: false,
            c: 1,
        });
        let n = t.nodes() as f64;
        let b = load(&t, PatternConfig::Uniform, Routing::DimensionOrder)
            .bound(1.0)
            .unwrap();
        assert!(close(b, 2.0 / (k - 1) as f64 * (n - 1.0) / n), "{b}");
        assert!(b < 0.6 * t.capacity());
    }

    #[test]
    fn an_even_split_over_minimal_paths_crowds_the_centre_of_a_mesh() {
        // Each hop taking either minimal direction with equal chance sends more paths
        // through the middle of a mesh than dimension order does: its bound is lower.
        let t = topo(TopologyConfig::Mesh { k: 6, n: 2, c: 1 });
        let dor = load(&t, PatternConfig::Uniform, Routing::DimensionOrder);
        let ad = load(&t, PatternConfig::Uniform, Routing::Adaptive);
        assert!(ad.max > 1.1 * dor.max, "{} vs {}", ad.max, dor.max);
    }

    #[test]
    fn transpose_on_a_mesh_with_xy_loads_one_channel_k_minus_1_times() {
        // (x, y) → (y, x) by X then Y: the channel into column k − 1 of row k − 1
        // carries the k − 1 sources (0..k−1, k−1) bound for column k − 1; the diagonal's
        // k sources are silent.
        for k in [4u32, 5, 8] {
            let t = topo(TopologyConfig::Mesh { k, n: 2, c: 1 });
            let l = load(&t, PatternConfig::Transpose, Routing::DimensionOrder);
            assert!(close(l.max, (k - 1) as f64), "k = {k}: {}", l.max);
            let n = (k * k) as usize;
            assert_eq!((l.senders, l.endpoints), (n - k as usize, n));
            let b = l.bound(1.0).unwrap();
            assert!(close(
                b,
                (n - k as usize) as f64 / n as f64 / (k - 1) as f64
            ));
        }
    }

    #[test]
    fn a_permutation_loads_only_its_paths() {
        // Bit-complement on a 4-cube: every source crosses all four dimensions, one
        // channel per dimension each, e-cube or adaptive alike over the cube's channels.
        let t = topo(TopologyConfig::Hypercube { dim: 4 });
        let dor = load(&t, PatternConfig::BitComplement, Routing::DimensionOrder);
        assert!(close(dor.max, 1.0));
        // Adaptive splits each message over the 4! minimal paths: the load per channel is
        // then the average, 16 × 4 hops over 64 channels.
        let ad = load(&t, PatternConfig::BitComplement, Routing::Adaptive);
        assert!(close(ad.max, 1.0), "{}", ad.max);
        // Hotspot: the hotspot's incoming channels carry the fraction of every source.
        let hot = load(
            &t,
            PatternConfig::Hotspot {
                node: 0,
                fraction: 0.5,
            },
            Routing::DimensionOrder,
        );
        let u = load(&t, PatternConfig::Uniform, Routing::DimensionOrder);
        assert!(hot.max > 3.0 * u.max, "{} vs {}", hot.max, u.max);
        // The busiest channel ends at the hotspot.
        let (node, port) = hot.busiest;
        assert_eq!(t.neighbor(node, port), Some(NodeId(0)));
    }

    #[test]
    fn the_probabilities_of_every_pattern_sum_to_one_per_sender() {
        let t = topo(TopologyConfig::Mesh { k: 5, n: 2, c: 1 });
        for p in [
            PatternConfig::Uniform,
            PatternConfig::UniformWithSelf,
            PatternConfig::SphereOfLocality {
                radius: 2,
                probability: 0.7,
            },
            PatternConfig::DecreasingProbability { decay: 0.5 },
            PatternConfig::BitComplement,
            PatternConfig::Transpose,
            PatternConfig::Hotspot {
                node: 3,
                fraction: 0.2,
            },
        ] {
            let pat = DestPattern::new(&p, &t, 1).unwrap();
            let probs = PairProbabilities::new(&pat);
            for s in 0..25 {
                let total: f64 = (0..25).map(|d| probs.p(NodeId(s), NodeId(d))).sum();
                let want = if pat.sends(NodeId(s)) { 1.0 } else { 0.0 };
                assert!(close(total, want), "{p:?} from {s}: {total}");
            }
        }
    }

    #[test]
    fn the_booksim_patterns_sum_to_one_per_sender_too() {
        let t = topo(TopologyConfig::Torus {
            k: 4,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        for p in [
            PatternConfig::BitReverse,
            PatternConfig::Shuffle,
            PatternConfig::Tornado,
            PatternConfig::Neighbor,
            PatternConfig::RandomPermutation,
            PatternConfig::HotspotNodes { nodes: vec![3, 10] },
            PatternConfig::HotspotNodes { nodes: vec![6] },
        ] {
            let pat = DestPattern::new(&p, &t, 3).unwrap();
            let probs = PairProbabilities::new(&pat);
            for s in 0..16 {
                let total: f64 = (0..16).map(|d| probs.p(NodeId(s), NodeId(d))).sum();
                let want = if pat.sends(NodeId(s)) { 1.0 } else { 0.0 };
                assert!(close(total, want), "{p:?} from {s}: {total}");
            }
            assert!(channel_load(&t, &pat, Routing::DimensionOrder, TorusTie::Parity).is_some());
        }
    }

    #[test]
    fn tornado_on_a_ring_loads_each_channel_with_its_shift() {
        // Every node sends ⌈k/2⌉ − 1 hops the same way round: each of the k channels of
        // that direction carries that many flows.
        for k in [5u32, 8, 9] {
            let t = topo(TopologyConfig::Torus {
                k,
                n: 1,
                bidirectional: true,
                c: 1,
            });
            let l = load(&t, PatternConfig::Tornado, Routing::DimensionOrder);
            assert!(
                close(l.max, (k.div_ceil(2) - 1) as f64),
                "k = {k}: {}",
                l.max
            );
        }
    }

    #[test]
    fn networks_without_these_routing_functions_have_no_bound() {
        let t = topo(TopologyConfig::ManhattanStreet { k: 4 });
        let p = DestPattern::new(&PatternConfig::Uniform, &t, 1).unwrap();
        assert!(channel_load(&t, &p, Routing::DimensionOrder, TorusTie::Parity).is_none());
    }

    #[test]
    fn the_new_routings_have_a_bound_on_meshes_only() {
        let t = topo(TopologyConfig::Mesh { k: 8, n: 2, c: 1 });
        let dor = load(&t, PatternConfig::Transpose, Routing::DimensionOrder);
        // Transpose is symmetric under swapping X and Y: YX loads the mirror channels
        // as much, so the average of the two orders halves XY's busiest channel.
        let xy_yx = load(&t, PatternConfig::Transpose, Routing::XyYx);
        assert!(
            close(xy_yx.max, dor.max / 2.0),
            "{} vs {}",
            xy_yx.max,
            dor.max
        );
        for r in [
            Routing::WestFirst,
            Routing::NorthLast,
            Routing::NegativeFirst,
            Routing::OddEven,
        ] {
            let l = load(&t, PatternConfig::Transpose, r);
            assert!(l.max > 0.0 && l.max <= dor.max + 1e-9, "{r:?}: {}", l.max);
            let torus = topo(TopologyConfig::Torus {
                k: 4,
                n: 2,
                bidirectional: true,
                c: 1,
            });
            let p = DestPattern::new(&PatternConfig::Uniform, &torus, 1).unwrap();
            assert!(channel_load(&torus, &p, r, TorusTie::Parity).is_none());
        }
    }

    #[test]
    fn coin_ties_split_a_permutations_half_ring_flows_over_both_directions() {
        // 8×8 torus, transpose: the flows with |y − x| = 4 are tied in both rings. By
        // parity each goes one way and piles onto the channels of that way; by coin
        // each goes half each way, so the busiest channel carries less.
        let t = topo(TopologyConfig::Torus {
            k: 8,
            n: 2,
            bidirectional: true,
            c: 1,
        });
        let pat = DestPattern::new(&PatternConfig::Transpose, &t, 1).unwrap();
        let parity = channel_load(&t, &pat, Routing::DimensionOrder, TorusTie::Parity).unwrap();
        let coin = channel_load(&t, &pat, Routing::DimensionOrder, TorusTie::Random).unwrap();
        assert!(
            coin.max < parity.max - 0.25,
            "{} vs {}",
            coin.max,
            parity.max
        );
        // Uniform traffic splits the same in the mean either way.
        let u = DestPattern::new(&PatternConfig::Uniform, &t, 1).unwrap();
        let a = channel_load(&t, &u, Routing::DimensionOrder, TorusTie::Parity).unwrap();
        let b = channel_load(&t, &u, Routing::DimensionOrder, TorusTie::Random).unwrap();
        assert!(close(a.max, b.max), "{} vs {}", a.max, b.max);
    }

    #[test]
    fn valiant_loads_a_permutation_as_two_phases_of_uniform_traffic() {
        // Phase 1 spreads each sender's flit over all N nodes, phase 2 gathers each
        // destination's from all N: when every node sends and receives one flit per
        // cycle, either phase is dimension-order UniformWithSelf, whatever the pattern.
        for k in [4, 8] {
            let t = topo(TopologyConfig::Torus {
                k,
                n: 2,
                bidirectional: true,
                c: 1,
            });
            let uws = load(&t, PatternConfig::UniformWithSelf, Routing::DimensionOrder);
            for p in [PatternConfig::Uniform, PatternConfig::Tornado] {
                let v = load(&t, p.clone(), Routing::Valiant);
                assert!(close(v.max, 2.0 * uws.max), "k={k} {p:?}: {}", v.max);
            }
        }
    }

    #[test]
    fn romm_routes_minimally_so_its_loads_sum_to_the_mean_distance() {
        for cfg in [
            TopologyConfig::Mesh { k: 5, n: 2, c: 1 },
            TopologyConfig::Torus {
                k: 4,
                n: 2,
                bidirectional: true,
                c: 1,
            },
        ] {
            let t = topo(cfg.clone());
            for p in [PatternConfig::Uniform, PatternConfig::Transpose] {
                let pat = DestPattern::new(&p, &t, 1).unwrap();
                let probs = PairProbabilities::new(&pat);
                let n = t.nodes() as u32;
                let hops: f64 = (0..n)
                    .flat_map(|s| (0..n).map(move |d| (s, d)))
                    .map(|(s, d)| {
                        probs.p(NodeId(s), NodeId(d)) * t.distance(NodeId(s), NodeId(d)) as f64
                    })
                    .sum();
                let (one, two) = romm_phases(&t, &probs);
                let dor = Routing::DimensionOrder;
                let nn = n as usize;
                let total: f64 = loads(
                    &t,
                    &|s, i| one[s as usize * nn + i as usize],
                    dor,
                    TorusTie::Parity,
                    false,
                )
                .iter()
                .chain(
                    loads(
                        &t,
                        &|i, d| two[i as usize * nn + d as usize],
                        dor,
                        TorusTie::Parity,
                        false,
                    )
                    .iter(),
                )
                .sum();
                assert!(close(total, hops), "{cfg:?} {p:?}: {total} vs {hops}");
                assert!(channel_load(&t, &pat, Routing::Romm, TorusTie::Parity).is_some());
            }
        }
    }
}

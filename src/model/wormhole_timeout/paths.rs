//! The paths of paper 002's model (§3–4): every ordered pair of distinct hosts of a
//! [`HostNetwork`] and its source route as a list of directed links, and the link holding
//! times of eqs. (5)–(8) by moment arithmetic on raw moments.
//!
//! **routemu:** a directed link is a (node, port) pair, the end a worm leaves by; its
//! propagation delay is the port's `latency`, or the machine's `links.latency` when the
//! graph gives none. Eq. (7) is used with the spec's correction: every link the worm
//! crosses before the link that times it out counts twice (head forward, reset back),
//! e^(−2sτ) inside the product, as eq. (6) and Fig. 5 say.

use crate::model::ModelError;
use crate::topology::hosts::{HostNetwork, LinkClass};

/// Raw moments E\[X\], E\[X²\], E\[X³\] of a non-negative random variable.
pub type Raw3 = [f64; 3];

/// Partial moments (P(A), E\[X; A\], E\[X²; A\], E\[X³; A\]) of a random variable on an event
/// A: mixtures add them, independent sums convolve them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Partial(pub [f64; 4]);

impl Partial {
    /// X = `x` (a fixed delay) with probability `w`.
    pub fn point(w: f64, x: f64) -> Self {
        Partial([w, w * x, w * x * x, w * x * x * x])
    }

    /// X distributed with raw moments `m`, with probability `w`.
    pub fn dist(w: f64, m: Raw3) -> Self {
        Partial([w, w * m[0], w * m[1], w * m[2]])
    }

    /// X + Y on the same event, Y independent with raw moments `y`.
    pub fn plus(self, y: Raw3) -> Self {
        let [w, a, b, c] = self.0;
        Partial([
            w,
            a + w * y[0],
            b + 2.0 * a * y[0] + w * y[1],
            c + 3.0 * b * y[0] + 3.0 * a * y[1] + w * y[2],
        ])
    }

    /// X + d for a fixed delay d.
    pub fn shift(self, d: f64) -> Self {
        self.plus([d, d * d, d * d * d])
    }

    /// The event's probability scaled by `q` (the same X on a sub-event).
    pub fn scale(self, q: f64) -> Self {
        Partial(self.0.map(|x| x * q))
    }

    /// The union of two disjoint events.
    pub fn union(self, o: Self) -> Self {
        let mut r = self.0;
        for (x, y) in r.iter_mut().zip(o.0) {
            *x += y;
        }
        Partial(r)
    }

    /// Probability of the event.
    pub fn weight(&self) -> f64 {
        self.0[0]
    }

    /// Raw moments of X given the event.
    pub fn moments(&self) -> Raw3 {
        let w = self.0[0];
        if w > 0.0 {
            [self.0[1] / w, self.0[2] / w, self.0[3] / w]
        } else {
            [0.0; 3]
        }
    }
}

/// The holding time of each link of one path, eqs. (5)–(7) with 2τ per crossed link in
/// the failure terms. `pt[i]`, `wait[i]` and `delay[i]` are the timeout probability, the
/// wait moments given no timeout and the propagation delay of the path's i-th link
/// (0-based; `pt[0]` is the host link's and is not used); `length` the worm length's raw
/// moments, `timeout` τ_t. Returns, per position, (success, failure) partial moments:
/// their weights are P_S,pk and 1 − P_S,pk.
pub fn holding_times(
    pt: &[f64],
    wait: &[Raw3],
    delay: &[f64],
    length: Raw3,
    timeout: f64,
) -> Vec<(Partial, Partial)> {
    let h = pt.len();
    let mut out = vec![(Partial::default(), Partial::default()); h];
    if h == 0 {
        return out;
    }
    // The last link (sh) is released when the tail is sent: held for the worm's length.
    let mut succ = Partial::dist(1.0, length);
    let mut fail = Partial::default();
    out[h - 1] = (succ, fail);
    for i in (0..h - 1).rev() {
        let next = i + 1;
        let q = 1.0 - pt[next];
        // Success: the head waits ω at every later link, then the worm streams (eq. 5).
        succ = succ.plus(wait[next]).scale(q);
        // Failure: times out at the next link after τ_t, or waits there and fails
        // further on; either way the head crossed link i and the reset crosses it back.
        fail = Partial::point(pt[next], timeout)
            .union(fail.plus(wait[next]).scale(q))
            .shift(2.0 * delay[i]);
        out[i] = (succ, fail);
    }
    out
}

/// One directed link: a node's port.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The node the worm leaves.
    pub node: u32,
    /// Its port.
    pub port: u8,
    /// hs, ss or sh.
    pub class: LinkClass,
    /// Propagation delay (cycles).
    pub delay: f64,
}

/// One path: a source host, a destination host and the links between them.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// Index of the source in [`PathSet::hosts`].
    pub source: usize,
    /// Destination node.
    pub destination: u32,
    /// The links, hs first, sh last (indices into [`PathSet::links`]).
    pub links: Vec<usize>,
    /// δ_p: the share of the source's worms that take this path.
    pub share: f64,
    /// Σ π_j over the path (cycles).
    pub propagation: f64,
}

/// One host: its node, host link and paths.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    /// The node.
    pub node: u32,
    /// Index of its host-to-switch link.
    pub hs_link: usize,
    /// Its paths (indices into [`PathSet::paths`]).
    pub paths: std::ops::Range<usize>,
}

/// Most ordered host pairs the model enumerates: its fixed point visits every pair's
/// route at each step, and the maximum-throughput search solves it a dozen times.
pub const MAX_PAIRS: u64 = 100_000;

/// Every path of a host/switch network under uniform destinations.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSet {
    /// Directed links, indexed by (node, port) in node order.
    pub links: Vec<Link>,
    /// Hosts in node order.
    pub hosts: Vec<Host>,
    /// Paths, grouped by source host.
    pub paths: Vec<Path>,
    /// Per link: whether every path that crosses it reaches it over the same link (one
    /// input port of the switch feeds it; hs links: false).
    pub single_input: Vec<bool>,
}

impl PathSet {
    /// Enumerates the paths of `net`: every ordered pair of distinct hosts, δ_p = 1/(H − 1)
    /// per source, links from the source routes, delays from the ports or
    /// `default_latency`.
    pub fn new(net: &HostNetwork, default_latency: u64) -> Result<Self, ModelError> {
        if net.hosts < 2 {
            return Err(ModelError::BadInput(
                "paper 002's model needs at least two hosts".into(),
            ));
        }
        let pairs = net.hosts as u64 * (net.hosts as u64 - 1);
        if pairs > MAX_PAIRS {
            return Err(ModelError::BadInput(format!(
                "paper 002's model follows every host pair's route: {} hosts make {pairs} \
                 pairs, more than {MAX_PAIRS} (a 16×16 torus of switches with one host each \
                 has 65280 and takes minutes)",
                net.hosts
            )));
        }
        let nodes = net.nodes() as u32;
        let mut first = Vec::with_capacity(nodes as usize + 1);
        let mut links = Vec::new();
        for u in 0..nodes {
            first.push(links.len());
            for (p, end) in net.ports(u).iter().enumerate() {
                links.push(Link {
                    node: u,
                    port: p as u8,
                    class: net.class(u, p as u8),
                    delay: end.latency.unwrap_or(default_latency) as f64,
                });
            }
        }
        let share = 1.0 / (net.hosts - 1) as f64;
        let mut hosts = Vec::new();
        let mut paths = Vec::new();
        for a in net.switches..nodes {
            let start = paths.len();
            for b in net.switches..nodes {
                if a == b {
                    continue;
                }
                let mut cur = a;
                let mut path = Vec::new();
                let mut propagation = 0.0;
                while cur != b {
                    if path.len() > nodes as usize {
                        return Err(ModelError::BadInput(format!(
                            "the route from node {a} to node {b} does not arrive"
                        )));
                    }
                    let p = net.route_port(a, b, cur);
                    let idx = first[cur as usize] + p as usize;
                    propagation += links[idx].delay;
                    path.push(idx);
                    cur = net.ports(cur)[p as usize].peer;
                }
                paths.push(Path {
                    source: hosts.len(),
                    destination: b,
                    links: path,
                    share,
                    propagation,
                });
            }
            hosts.push(Host {
                node: a,
                hs_link: first[a as usize],
                paths: start..paths.len(),
            });
        }
        // The link before each link on every path: one and the same for all of them?
        let mut before: Vec<Option<Option<usize>>> = vec![None; links.len()];
        for p in &paths {
            for w in p.links.windows(2) {
                let b = &mut before[w[1]];
                *b = match *b {
                    None => Some(Some(w[0])),
                    Some(Some(x)) if x == w[0] => Some(Some(x)),
                    _ => Some(None),
                };
            }
        }
        let single_input = before.iter().map(|b| matches!(b, Some(Some(_)))).collect();
        Ok(PathSet {
            links,
            hosts,
            paths,
            single_input,
        })
    }

    /// Mean links per path, all paths weighted alike.
    pub fn mean_links(&self) -> f64 {
        self.paths.iter().map(|p| p.links.len() as f64).sum::<f64>() / self.paths.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::rng::{exponential, stream, unit};

    #[test]
    fn on_the_3x3_torus_with_one_host_a_switch_only_its_host_feeds_the_x_links() {
        // Dimension order takes at most one X hop, from the source's switch.
        let net = HostNetwork::torus(3, 2, 1).unwrap();
        let ps = PathSet::new(&net, 1).unwrap();
        for (l, x) in ps.links.iter().enumerate() {
            let expect = x.class == LinkClass::SwitchSwitch && x.port < 2;
            assert_eq!(ps.single_input[l], expect, "{x:?}");
        }
        // With two hosts a switch, two inputs feed every X link.
        let two = PathSet::new(&HostNetwork::torus(3, 2, 2).unwrap(), 1).unwrap();
        assert!(two.single_input.iter().all(|&s| !s));
    }

    #[test]
    fn spread_routes_feed_every_link_of_the_3x3_torus_from_several_inputs() {
        use crate::topology::hosts::TorusRoutes;
        let net = HostNetwork::torus_routed(3, 2, 1, TorusRoutes::Spread).unwrap();
        let ps = PathSet::new(&net, 1).unwrap();
        for (l, x) in ps.links.iter().enumerate() {
            assert!(!ps.single_input[l], "{x:?} has one input");
        }
    }

    #[test]
    fn a_network_with_too_many_host_pairs_is_refused_with_the_count() {
        let big = HostNetwork::torus(17, 2, 2).unwrap();
        match PathSet::new(&big, 1) {
            Err(ModelError::BadInput(why)) => assert!(why.contains("578 hosts"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_3x3_torus_has_72_paths_of_mean_length_3_5() {
        let net = HostNetwork::torus(3, 2, 1).unwrap();
        let ps = PathSet::new(&net, 1).unwrap();
        assert_eq!(ps.paths.len(), 72);
        assert_eq!(ps.hosts.len(), 9);
        assert!((ps.mean_links() - 3.5).abs() < 1e-12);
        for p in &ps.paths {
            let n = p.links.len();
            assert_eq!(ps.links[p.links[0]].class, LinkClass::HostSwitch);
            assert_eq!(ps.links[p.links[n - 1]].class, LinkClass::SwitchHost);
            assert!(p.links[1..n - 1]
                .iter()
                .all(|&l| ps.links[l].class == LinkClass::SwitchSwitch));
            assert_eq!(p.propagation, n as f64);
        }
        // 54 directed links carry traffic: 9 hs, 9 sh, 36 ss.
        let mut used: Vec<usize> = ps.paths.iter().flat_map(|p| p.links.clone()).collect();
        used.sort();
        used.dedup();
        assert_eq!(used.len(), 54);
    }

    /// Moments of the holding times against a Monte-Carlo of the sum eq. (7) describes:
    /// draw the worm length, the waits and the timeout events along the path, and add up
    /// the time link i is held.
    #[test]
    fn the_moment_arithmetic_of_eq_7_equals_a_monte_carlo_of_its_sum() {
        let pt = [0.0, 0.2, 0.35, 0.1, 0.25];
        let delay = [1.0, 3.0, 2.0, 5.0, 1.0];
        let timeout = 20.0;
        let len_mean: f64 = 40.0;
        let length = [len_mean, 2.0 * len_mean.powi(2), 6.0 * len_mean.powi(3)];
        // Waits: exponential with these means (moments n!·mᵏ), drawn as such.
        let wmean = [0.0, 4.0, 7.0, 2.0, 9.0];
        let wait: Vec<Raw3> = wmean
            .iter()
            .map(|&m| [m, 2.0 * m * m, 6.0 * m * m * m])
            .collect();
        let h = pt.len();
        let got = holding_times(&pt, &wait, &delay, length, timeout);
        let mut rng = stream(11, 0, 0, 7);
        let n = 1_000_000;
        let mut sums = vec![[0.0f64; 4]; h];
        let draw = |m: f64, rng: &mut crate::foundation::rng::NodeRng| {
            if m > 0.0 {
                exponential(rng, 1.0 / m)
            } else {
                0.0
            }
        };
        for _ in 0..n {
            let len = draw(len_mean, &mut rng);
            let w: Vec<f64> = wmean.iter().map(|&m| draw(m, &mut rng)).collect();
            // Where (if anywhere) the try times out.
            let mut fail_at = None;
            for (j, &p) in pt.iter().enumerate().skip(1) {
                if unit(&mut rng) < p {
                    fail_at = Some(j);
                    break;
                }
            }
            let last = fail_at.unwrap_or(h);
            // Link i is held only if the head got it: i < last.
            for i in 0..last.min(h) {
                let x = match fail_at {
                    None => len + w[i + 1..].iter().sum::<f64>(),
                    Some(f) => {
                        timeout
                            + 2.0 * delay[i]
                            + (i + 1..f).map(|j| w[j] + 2.0 * delay[j]).sum::<f64>()
                    }
                };
                sums[i][0] += 1.0;
                sums[i][1] += x;
                sums[i][2] += x * x;
                sums[i][3] += x * x * x;
            }
        }
        for i in 0..h {
            let (s, f) = got[i];
            let all = s.union(f);
            // Given that the head got link i: normalise by the arrivals that got it.
            let m = all.moments();
            assert!((all.weight() - 1.0).abs() < 1e-12);
            for k in 0..3 {
                let mc = sums[i][k + 1] / sums[i][0];
                assert!(
                    (m[k] - mc).abs() / m[k] < 0.01 * (k + 1) as f64,
                    "link {i}, moment {}: {} vs Monte-Carlo {mc}",
                    k + 1,
                    m[k]
                );
            }
            // P_S,pk = Π_{j>i}(1 − P_T,j).
            let ps: f64 = pt[i + 1..].iter().map(|p| 1.0 - p).product();
            assert!((s.weight() - ps).abs() < 1e-12);
        }
    }
}

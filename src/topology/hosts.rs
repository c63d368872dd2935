//! Host/switch networks (paper 002): hosts that create and absorb worms, non-intelligent
//! switches that only forward them, and bidirectional links between them, each with its
//! own propagation delay. Built either as a k-ary n-cube of switches with `hosts` hosts on
//! every switch, or from a graph file. Owns the numbering, the links and the source
//! routes; how worms move over them is `switching::timeout`'s.
//!
//! Numbering: switches are nodes 0..S, hosts S..S+H. A port is bidirectional: port p of
//! node u and port q of node v are the two ends of one link, and a worm that leaves u on
//! port p arrives at v on port q (so, unlike the other topologies, an input port is named
//! by the node's own end of the link). On the torus of switches, switch ports 0..2n are
//! the torus's (2i: +i, 2i+1: −i) and ports 2n..2n+hosts lead to the switch's hosts; a host
//! has one port, 0, to its switch.
//!
//! Source routes: the host decides the whole path, one fixed minimal route per ordered
//! pair of hosts (the model of `model::wormhole_timeout` reads the same routes). On the
//! torus the configuration's [`TorusRoutes`] chooses them:
//!
//! - `DimensionOrder` (the default, as the spec recommends, A2): lowest dimension first; at
//!   offset k/2 on an even ring, towards +. On the 3×3 torus with one host per switch a
//!   route has at most one X hop, from its source's switch, so a switch's X outputs are
//!   asked for by its own host alone.
//! - `Spread`: the dimension order and the direction of ties spread over the pairs by the
//!   parity of s = Σ d_i + j_a + j_b (d_i the ring offset 0..k from the source's switch to
//!   the destination's in dimension i, j_a and j_b the hosts' positions on their
//!   switches): lowest dimension first when s is even, highest first when odd; a tie
//!   (d_i = k/2) towards + when s − k/2 is even. The choice depends on the offsets and
//!   positions, not on where the pair sits, so translating a route over the torus gives
//!   another pair's route: every link of one direction carries the same number of pair
//!   routes, whatever the order, and with n ≥ 2 the ties split evenly between + and −, so
//!   every switch-to-switch link carries the same number. With n = 1 there is no order to
//!   spread, and ties split only by the hosts' positions.
//!
//! A graph file may give a route per host pair, and otherwise a shortest path (lowest port
//! first) is used.
//!
//! # Graph file
//!
//! Plain text, one statement per line, `#` starts a comment:
//!
//! ```text
//! switches 4                 # switch names s0 … s3
//! hosts 4                    # host names h0 … h3
//! link h0 s0 20              # a bidirectional link and its propagation delay (cycles)
//! link s0 s1                 # without a delay: links.latency
//! route h0 h3 s0 s1 s3       # optional: the switches a worm from h0 to h3 crosses
//! ```
//!
//! Every host must have exactly one link, to a switch; hosts are never linked to each
//! other. A route names a chain of linked switches from the source's switch to the
//! destination's.

pub use crate::config::TorusRoutes;
use crate::foundation::error::{Error, Result};
use crate::topology::torus::Torus;
use crate::topology::Grid;
use std::collections::{HashMap, VecDeque};

/// The three kinds of link paper 002 names (by the direction a worm crosses them).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum LinkClass {
    /// Host to switch.
    HostSwitch,
    /// Switch to switch.
    SwitchSwitch,
    /// Switch to host.
    SwitchHost,
}

impl LinkClass {
    /// Short name: hs, ss, sh.
    pub fn name(self) -> &'static str {
        match self {
            LinkClass::HostSwitch => "hs",
            LinkClass::SwitchSwitch => "ss",
            LinkClass::SwitchHost => "sh",
        }
    }
}

/// One end of a link: a node's port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPort {
    /// The node at the other end.
    pub peer: u32,
    /// Its port.
    pub peer_port: u8,
    /// Propagation delay in cycles; None: `links.latency`.
    pub latency: Option<u64>,
}

/// How routes are found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Shape {
    /// k-ary n-cube of switches, `per` hosts each, and how routes are chosen.
    Torus {
        torus: Torus,
        per: u32,
        routes: TorusRoutes,
    },
    /// Any graph: all-pairs hop distances between switches (row-major S×S), and routes
    /// given by the file (switch chains, by (source host, destination host)).
    Graph {
        dist: Vec<u16>,
        routes: HashMap<(u32, u32), Vec<u32>>,
    },
}

/// A network of hosts and switches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostNetwork {
    /// Number of switches (nodes 0..switches).
    pub switches: u32,
    /// Number of hosts (nodes switches..switches+hosts).
    pub hosts: u32,
    /// First port of each node in `ports` (one more entry at the end).
    start: Vec<u32>,
    ports: Vec<HostPort>,
    shape: Shape,
    description: String,
}

/// Largest host/switch network routemu builds (the graph's all-pairs table is S²).
pub const MAX_GRAPH_SWITCHES: u32 = 4096;

impl HostNetwork {
    /// A k-ary n-cube of switches with `per` hosts on each, dimension-order routes.
    pub fn torus(k: u32, n: u32, per: u32) -> Result<Self> {
        Self::torus_routed(k, n, per, TorusRoutes::DimensionOrder)
    }

    /// A k-ary n-cube of switches with `per` hosts on each and the routes `routes`.
    pub fn torus_routed(k: u32, n: u32, per: u32, routes: TorusRoutes) -> Result<Self> {
        if k < 2 || n < 1 {
            return Err(Error::config(format!(
                "topology: a torus of switches needs k ≥ 2 and n ≥ 1 (got k = {k}, n = {n})"
            )));
        }
        if per == 0 {
            return Err(Error::config(
                "topology.hosts = 0: every switch of the torus needs at least one host",
            ));
        }
        let torus = Torus {
            grid: Grid { k, n },
            bidirectional: true,
        };
        let s = torus.grid.nodes() as u64;
        let total = s * (1 + per as u64);
        if total > crate::foundation::types::MAX_NODES as u64 || 2 * n + per > 63 {
            return Err(Error::config(format!(
                "topology: {s} switches with {per} hosts each is more than routemu builds \
                 (at most {} nodes and 63 ports per switch)",
                crate::foundation::types::MAX_NODES
            )));
        }
        let (s, deg) = (s as u32, 2 * n);
        let mut start = Vec::with_capacity((s * (1 + per) + 1) as usize);
        let mut ports = Vec::new();
        for u in 0..s {
            start.push(ports.len() as u32);
            for p in 0..deg {
                ports.push(HostPort {
                    peer: torus.neighbor(u, p),
                    peer_port: (p ^ 1) as u8,
                    latency: None,
                });
            }
            for j in 0..per {
                ports.push(HostPort {
                    peer: s + u * per + j,
                    peer_port: 0,
                    latency: None,
                });
            }
        }
        for h in 0..s * per {
            start.push(ports.len() as u32);
            ports.push(HostPort {
                peer: h / per,
                peer_port: (deg + h % per) as u8,
                latency: None,
            });
        }
        start.push(ports.len() as u32);
        Ok(HostNetwork {
            switches: s,
            hosts: s * per,
            start,
            ports,
            shape: Shape::Torus { torus, per, routes },
            description: format!(
                "{}-ary {}-cube torus of {s} switches with {per} host(s) each ({} hosts){}",
                k,
                n,
                s * per,
                match routes {
                    TorusRoutes::DimensionOrder => "",
                    TorusRoutes::Spread => ", spread routes",
                }
            ),
        })
    }

    /// Reads a graph file (see the module documentation); `default_latency` stands for
    /// links given without a delay in the error messages only.
    pub fn from_file(path: &str) -> Result<Self> {
        let text = crate::foundation::inputs::read_to_string(std::path::Path::new(path)).map_err(
            |source| Error::Io {
                path: path.to_string(),
                source,
            },
        )?;
        Self::parse(&text, path)
    }

    /// Parses a graph (see the module documentation); `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let mut switches: Option<u32> = None;
        let mut hosts: Option<u32> = None;
        let mut links: Vec<(u32, u32, Option<u64>, usize)> = Vec::new();
        let mut routes_raw: Vec<(u32, u32, Vec<u32>, usize)> = Vec::new();
        let bad = |line: usize, why: String| Error::Parse(format!("{origin}:{line}: {why}"));
        let node = |name: &str, line: usize, sw: Option<u32>, ho: Option<u32>| -> Result<u32> {
            let (sw, ho) = match (sw, ho) {
                (Some(s), Some(h)) => (s, h),
                _ => {
                    return Err(bad(
                        line,
                        "`switches N` and `hosts N` must come before links and routes".into(),
                    ))
                }
            };
            let num = |s: &str| s.parse::<u32>().ok();
            if let Some(i) = name.strip_prefix('s').and_then(num) {
                if i < sw {
                    return Ok(i);
                }
            }
            if let Some(i) = name.strip_prefix('h').and_then(num) {
                if i < ho {
                    return Ok(sw + i);
                }
            }
            Err(bad(
                line,
                format!(
                    "`{name}` is not a node: switches are s0..s{}, hosts h0..h{}",
                    sw.saturating_sub(1),
                    ho.saturating_sub(1)
                ),
            ))
        };
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let words: Vec<&str> = raw
                .split('#')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            match words.as_slice() {
                [] => {}
                ["switches", n] | ["hosts", n] => {
                    let v = n
                        .parse::<u32>()
                        .ok()
                        .filter(|v| (1..=MAX_GRAPH_SWITCHES).contains(v))
                        .ok_or_else(|| {
                            bad(line, format!("`{n}`: a count from 1 to {MAX_GRAPH_SWITCHES}"))
                        })?;
                    let slot = if words[0] == "switches" {
                        &mut switches
                    } else {
                        &mut hosts
                    };
                    if slot.replace(v).is_some() {
                        return Err(bad(line, format!("`{}` given twice", words[0])));
                    }
                }
                ["link", a, b, rest @ ..] => {
                    let a = node(a, line, switches, hosts)?;
                    let b = node(b, line, switches, hosts)?;
                    let latency = match rest {
                        [] => None,
                        [d] => Some(
                            d.parse::<u64>()
                                .ok()
                                .filter(|&d| (1..=crate::config::MAX_DELAY).contains(&d))
                                .ok_or_else(|| {
                                    bad(
                                        line,
                                        format!(
                                            "`{d}`: a link's delay is 1 to {} cycles",
                                            crate::config::MAX_DELAY
                                        ),
                                    )
                                })?,
                        ),
                        _ => return Err(bad(line, "link A B [DELAY]".into())),
                    };
                    if a == b {
                        return Err(bad(line, "a link joins two different nodes".into()));
                    }
                    links.push((a, b, latency, line));
                }
                ["route", a, b, chain @ ..] => {
                    let a = node(a, line, switches, hosts)?;
                    let b = node(b, line, switches, hosts)?;
                    let sw = switches.unwrap_or(0);
                    if a < sw || b < sw || a == b {
                        return Err(bad(line, "a route joins two different hosts".into()));
                    }
                    let chain = chain
                        .iter()
                        .map(|n| node(n, line, switches, hosts))
                        .collect::<Result<Vec<u32>>>()?;
                    if chain.is_empty() || chain.iter().any(|&s| s >= sw) {
                        return Err(bad(line, "a route lists the switches it crosses".into()));
                    }
                    routes_raw.push((a, b, chain, line));
                }
                _ => {
                    return Err(bad(
                        line,
                        format!("cannot read `{}` (switches N, hosts N, link A B [DELAY], route HA HB S...)", raw.trim()),
                    ))
                }
            }
        }
        let (Some(s), Some(h)) = (switches, hosts) else {
            return Err(Error::Parse(format!(
                "{origin}: a graph needs `switches N` and `hosts N`"
            )));
        };
        let total = (s + h) as usize;
        let mut adj: Vec<Vec<HostPort>> = vec![Vec::new(); total];
        for &(a, b, latency, line) in &links {
            let (ha, hb) = (a >= s, b >= s);
            if ha && hb {
                return Err(bad(line, "hosts are linked to switches only".into()));
            }
            if adj[a as usize].iter().any(|p| p.peer == b) {
                return Err(bad(line, "these two nodes are already linked".into()));
            }
            for (x, y) in [(a, b), (b, a)] {
                if adj[x as usize].len() >= 63 {
                    return Err(bad(line, "a node has at most 63 links".into()));
                }
                adj[x as usize].push(HostPort {
                    peer: y,
                    peer_port: 0,
                    latency,
                });
            }
        }
        // Each link's two ends name each other's port.
        for u in 0..total {
            for p in 0..adj[u].len() {
                let v = adj[u][p].peer as usize;
                let q = adj[v]
                    .iter()
                    .position(|x| x.peer == u as u32)
                    .expect("links are added in both directions");
                adj[u][p].peer_port = q as u8;
            }
        }
        for host in s..s + h {
            if adj[host as usize].len() != 1 {
                return Err(Error::Parse(format!(
                    "{origin}: host h{} has {} links; a host has exactly one, to a switch",
                    host - s,
                    adj[host as usize].len()
                )));
            }
        }
        // All-pairs switch distances over switch-to-switch links.
        let mut dist = vec![u16::MAX; (s * s) as usize];
        for a in 0..s {
            let row = &mut dist[(a * s) as usize..((a + 1) * s) as usize];
            row[a as usize] = 0;
            let mut q = VecDeque::from([a]);
            while let Some(u) = q.pop_front() {
                for p in &adj[u as usize] {
                    if p.peer < s && row[p.peer as usize] == u16::MAX {
                        row[p.peer as usize] = row[u as usize] + 1;
                        q.push_back(p.peer);
                    }
                }
            }
        }
        let sw_of = |host: u32| adj[host as usize][0].peer;
        for a in s..s + h {
            for b in s..s + h {
                if a != b && dist[(sw_of(a) * s + sw_of(b)) as usize] == u16::MAX {
                    return Err(Error::Parse(format!(
                        "{origin}: host h{} cannot reach host h{}: the switches are not connected",
                        a - s,
                        b - s
                    )));
                }
            }
        }
        let mut routes = HashMap::new();
        for (a, b, chain, line) in routes_raw {
            if chain[0] != sw_of(a) || *chain.last().expect("non-empty") != sw_of(b) {
                return Err(bad(
                    line,
                    "a route starts at the source host's switch and ends at the destination's"
                        .into(),
                ));
            }
            for w in chain.windows(2) {
                if !adj[w[0] as usize].iter().any(|p| p.peer == w[1]) {
                    return Err(bad(
                        line,
                        format!("switches s{} and s{} are not linked", w[0], w[1]),
                    ));
                }
            }
            let mut seen = std::collections::HashSet::new();
            if !chain.iter().all(|x| seen.insert(*x)) {
                return Err(bad(line, "a route crosses a switch once".into()));
            }
            if routes.insert((a, b), chain).is_some() {
                return Err(bad(
                    line,
                    "a second route for the same pair of hosts".into(),
                ));
            }
        }
        let mut start = Vec::with_capacity(total + 1);
        let mut ports = Vec::new();
        for a in adj {
            start.push(ports.len() as u32);
            ports.extend(a);
        }
        start.push(ports.len() as u32);
        Ok(HostNetwork {
            switches: s,
            hosts: h,
            start,
            ports,
            shape: Shape::Graph { dist, routes },
            description: format!("graph {origin}: {s} switches, {h} hosts"),
        })
    }

    /// Nodes (switches and hosts).
    pub fn nodes(&self) -> usize {
        (self.switches + self.hosts) as usize
    }

    /// Whether `node` is a host.
    #[inline]
    pub fn is_host(&self, node: u32) -> bool {
        node >= self.switches
    }

    /// The index of port `p` of `node` among every port of the network (node by node,
    /// port by port): a directed link's number, the same in every partition.
    #[inline]
    pub fn port_index(&self, node: u32, p: u8) -> usize {
        self.start[node as usize] as usize + p as usize
    }

    /// Ports of the whole network (directed links).
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    /// The (node, port) of a port index (see [`HostNetwork::port_index`]).
    pub fn port_of_index(&self, g: usize) -> (u32, u8) {
        let node = self.start.partition_point(|&s| s as usize <= g) - 1;
        (node as u32, (g - self.start[node] as usize) as u8)
    }

    /// The first switch-to-switch output of the lowest switch that has one (the watched
    /// link of paper 002 Figs. 2–3 unless the configuration names another).
    pub fn first_switch_output(&self) -> Option<(u32, u8)> {
        (0..self.switches).find_map(|s| {
            self.ports(s)
                .iter()
                .position(|p| !self.is_host(p.peer))
                .map(|p| (s, p as u8))
        })
    }

    /// Ports of `node`.
    #[inline]
    pub fn ports(&self, node: u32) -> &[HostPort] {
        &self.ports[self.start[node as usize] as usize..self.start[node as usize + 1] as usize]
    }

    /// The link with the longest propagation delay given in the graph file, as (node,
    /// port, delay); None when every link takes `links.latency`.
    pub fn slowest_link(&self) -> Option<(u32, u8, u64)> {
        (0..self.nodes() as u32)
            .flat_map(|u| {
                self.ports(u)
                    .iter()
                    .enumerate()
                    .filter_map(move |(p, x)| Some((u, p as u8, x.latency?)))
            })
            .max_by_key(|&(u, p, d)| (d, std::cmp::Reverse((u, p))))
    }

    /// Most ports of a node.
    pub fn degree(&self) -> usize {
        (0..self.nodes() as u32)
            .map(|u| self.ports(u).len())
            .max()
            .unwrap_or(0)
    }

    /// Number of bidirectional links.
    pub fn links(&self) -> usize {
        self.ports.len() / 2
    }

    /// The class of the link a worm crosses leaving `node` on `port`.
    pub fn class(&self, node: u32, port: u8) -> LinkClass {
        let to = self.ports(node)[port as usize].peer;
        match (self.is_host(node), self.is_host(to)) {
            (true, _) => LinkClass::HostSwitch,
            (false, true) => LinkClass::SwitchHost,
            (false, false) => LinkClass::SwitchSwitch,
        }
    }

    /// The switch a host hangs on.
    #[inline]
    pub fn switch_of(&self, host: u32) -> u32 {
        self.ports(host)[0].peer
    }

    /// Switch-to-switch hops between two switches.
    fn switch_distance(&self, a: u32, b: u32) -> u32 {
        match &self.shape {
            Shape::Torus { torus, .. } => torus.distance(a, b),
            Shape::Graph { dist, .. } => dist[(a * self.switches + b) as usize] as u32,
        }
    }

    /// Links on a shortest path between two nodes.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        if a == b {
            return 0;
        }
        let (sa, ea) = if self.is_host(a) {
            (self.switch_of(a), 1)
        } else {
            (a, 0)
        };
        let (sb, eb) = if self.is_host(b) {
            (self.switch_of(b), 1)
        } else {
            (b, 0)
        };
        ea + eb + self.switch_distance(sa, sb)
    }

    /// The port a worm from host `src` to host `dst` leaves node `cur` on (its source
    /// route). `cur` is on the route: the source host or a switch it crosses.
    pub fn route_port(&self, src: u32, dst: u32, cur: u32) -> u8 {
        if self.is_host(cur) {
            return 0;
        }
        let target = self.switch_of(dst);
        if cur == target {
            return self.ports(dst)[0].peer_port;
        }
        match &self.shape {
            Shape::Torus {
                torus,
                routes: TorusRoutes::DimensionOrder,
                ..
            } => {
                for dim in 0..torus.grid.n {
                    let st = torus.dim_step(cur, target, dim);
                    if st.hops > 0 {
                        return torus.port(dim, st.up) as u8;
                    }
                }
                unreachable!("cur is not the target switch")
            }
            Shape::Torus {
                torus,
                per,
                routes: TorusRoutes::Spread,
            } => {
                let (k, n) = (torus.grid.k, torus.grid.n);
                let from = self.switch_of(src);
                let s = self.spread_parity(torus, *per, src, dst);
                for i in 0..n {
                    let dim = if s.is_multiple_of(2) { i } else { n - 1 - i };
                    let st = torus.dim_step(cur, target, dim);
                    if st.hops == 0 {
                        continue;
                    }
                    // A tie is decided once, from the pair; after one step the rest of
                    // the ring is shorter that way.
                    let up = if st.up && st.down {
                        debug_assert_eq!(torus.dim_step(from, target, dim).hops, k / 2);
                        (s + k / 2).is_multiple_of(2)
                    } else {
                        st.up
                    };
                    return torus.port(dim, up) as u8;
                }
                unreachable!("cur is not the target switch")
            }
            Shape::Graph { routes, .. } => {
                if let Some(chain) = routes.get(&(src, dst)) {
                    let i = chain
                        .iter()
                        .position(|&x| x == cur)
                        .expect("the node is on the route");
                    let next = chain[i + 1];
                    return self
                        .ports(cur)
                        .iter()
                        .position(|p| p.peer == next)
                        .expect("checked when the file was read") as u8;
                }
                // A shortest path: the lowest port one switch closer.
                let d = self.switch_distance(cur, target);
                self.ports(cur)
                    .iter()
                    .position(|p| {
                        p.peer < self.switches && self.switch_distance(p.peer, target) + 1 == d
                    })
                    .expect("the switches are connected") as u8
            }
        }
    }

    /// `Spread`'s s = Σ d_i + j_a + j_b for the pair (`src`, `dst`) (module documentation).
    fn spread_parity(&self, torus: &Torus, per: u32, src: u32, dst: u32) -> u32 {
        let (k, n) = (torus.grid.k, torus.grid.n);
        let (a, b) = (self.switch_of(src), self.switch_of(dst));
        let offsets: u32 = (0..n)
            .map(|d| (torus.grid.coord(b, d) + k - torus.grid.coord(a, d)) % k)
            .sum();
        let pos = |h: u32| (h - self.switches) % per;
        offsets + pos(src) + pos(dst)
    }

    /// Links of the route from host `src` to host `dst`.
    pub fn route_len(&self, src: u32, dst: u32) -> u32 {
        let mut cur = src;
        let mut n = 0;
        while cur != dst {
            let p = self.route_port(src, dst, cur);
            cur = self.ports(cur)[p as usize].peer;
            n += 1;
        }
        n
    }

    /// Mean route length in links over ordered pairs of distinct hosts (the traffic's
    /// pairs).
    pub fn mean_route(&self) -> f64 {
        if self.hosts < 2 {
            return 0.0;
        }
        let s = self.switches;
        match &self.shape {
            // Both kinds of route are shortest: hosts on the same switch take 2 links,
            // others 2 + the switch distance.
            Shape::Torus { torus, per, .. } => {
                let sn = s as f64;
                let per = *per as f64;
                let pairs = self.hosts as f64 * (self.hosts as f64 - 1.0);
                let mean_sw: f64 = torus.grid.n as f64 * torus.ring_mean();
                // Σ over ordered host pairs of the switch distance: per² · S² · mean.
                (2.0 * pairs + per * per * sn * sn * mean_sw) / pairs
            }
            Shape::Graph { .. } => {
                let mut total = 0u64;
                for a in s..s + self.hosts {
                    for b in s..s + self.hosts {
                        if a != b {
                            total += self.route_len(a, b) as u64;
                        }
                    }
                }
                total as f64 / (self.hosts as f64 * (self.hosts as f64 - 1.0))
            }
        }
    }

    /// Longest route between two hosts.
    pub fn diameter(&self) -> u32 {
        let s = self.switches;
        (0..s)
            .flat_map(|a| (0..s).map(move |b| (a, b)))
            .map(|(a, b)| self.switch_distance(a, b))
            .max()
            .unwrap_or(0)
            + 2
    }

    /// Human-readable name of a port.
    pub fn port_name(&self, node: u32, port: u8) -> String {
        let to = self.ports(node).get(port as usize).map(|p| p.peer);
        match to {
            None => format!("port{port}"),
            Some(_) if self.is_host(node) => "hs".into(),
            Some(t) if self.is_host(t) => format!("host h{}", t - self.switches),
            Some(t) => match &self.shape {
                Shape::Torus { .. } => {
                    const DIM: [&str; 3] = ["X", "Y", "Z"];
                    let d = port / 2;
                    format!(
                        "{}{}",
                        if port.is_multiple_of(2) { "+" } else { "-" },
                        DIM.get(d as usize)
                            .map(|s| s.to_string())
                            .unwrap_or_else(|| format!("D{d}"))
                    )
                }
                Shape::Graph { .. } => format!("to s{t}"),
            },
        }
    }

    /// One-line description.
    pub fn describe(&self) -> String {
        self.description.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_torus_of_switches_numbers_switches_then_hosts_and_pairs_every_link_end() {
        let t = HostNetwork::torus(3, 2, 2).unwrap();
        assert_eq!((t.switches, t.hosts, t.nodes()), (9, 18, 27));
        assert_eq!(t.degree(), 6);
        assert_eq!(t.links(), 9 * 4 / 2 + 18);
        for u in 0..t.nodes() as u32 {
            for (p, end) in t.ports(u).iter().enumerate() {
                let back = t.ports(end.peer)[end.peer_port as usize];
                assert_eq!((back.peer, back.peer_port as usize), (u, p));
            }
        }
        assert_eq!(t.switch_of(9), 0);
        assert_eq!(t.switch_of(10), 0);
        assert_eq!(t.switch_of(11), 1);
        assert_eq!(t.class(9, 0), LinkClass::HostSwitch);
        assert_eq!(t.class(0, 4), LinkClass::SwitchHost);
        assert_eq!(t.class(0, 0), LinkClass::SwitchSwitch);
    }

    #[test]
    fn dimension_order_routes_are_shortest_and_the_mean_is_paper_002s() {
        let t = HostNetwork::torus(3, 2, 1).unwrap();
        for a in 9..18 {
            for b in 9..18 {
                if a != b {
                    assert_eq!(t.route_len(a, b), t.distance(a, b), "{a} → {b}");
                }
            }
        }
        // hs + 1.5 ss + sh (spec paper002 §3.5).
        assert!((t.mean_route() - 3.5).abs() < 1e-12);
        let t4 = HostNetwork::torus(3, 2, 4).unwrap();
        let brute: u32 = (9..45)
            .flat_map(|a| (9..45).map(move |b| (a, b)))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| t4.route_len(a, b))
            .sum();
        assert!((t4.mean_route() - brute as f64 / (36.0 * 35.0)).abs() < 1e-12);
    }

    /// The (node, port) of every link the route from `a` to `b` crosses.
    fn route(t: &HostNetwork, a: u32, b: u32) -> Vec<(u32, u8)> {
        let mut cur = a;
        let mut links = Vec::new();
        while cur != b {
            let p = t.route_port(a, b, cur);
            links.push((cur, p));
            cur = t.ports(cur)[p as usize].peer;
            assert!(links.len() <= t.nodes(), "{a} → {b} loops");
        }
        links
    }

    fn host_pairs(t: &HostNetwork) -> impl Iterator<Item = (u32, u32)> + '_ {
        let hosts = t.switches..t.switches + t.hosts;
        hosts
            .clone()
            .flat_map(move |a| hosts.clone().map(move |b| (a, b)))
            .filter(|(a, b)| a != b)
    }

    /// Pair routes crossing each switch-to-switch link.
    fn ss_loads(t: &HostNetwork) -> Vec<usize> {
        let mut load = HashMap::new();
        for s in 0..t.switches {
            for (p, end) in t.ports(s).iter().enumerate() {
                if !t.is_host(end.peer) {
                    load.insert((s, p as u8), 0);
                }
            }
        }
        for (a, b) in host_pairs(t) {
            for l in route(t, a, b) {
                if let Some(n) = load.get_mut(&l) {
                    *n += 1;
                }
            }
        }
        load.into_values().collect()
    }

    #[test]
    fn both_kinds_of_torus_route_are_minimal() {
        for (k, n, per) in [(3, 2, 1), (4, 2, 2), (2, 2, 1), (4, 3, 1), (6, 1, 2)] {
            for routes in [TorusRoutes::DimensionOrder, TorusRoutes::Spread] {
                let t = HostNetwork::torus_routed(k, n, per, routes).unwrap();
                for (a, b) in host_pairs(&t) {
                    let r = route(&t, a, b);
                    assert_eq!(r.len() as u32, t.distance(a, b), "{routes:?} {a} → {b}");
                    assert_eq!(r.len() as u32, t.route_len(a, b));
                }
            }
        }
    }

    #[test]
    fn spread_routes_take_the_dimensions_in_both_orders() {
        // The first switch-to-switch hop of the pairs whose switches differ in X and Y.
        let first_dims = |routes| {
            let t = HostNetwork::torus_routed(3, 2, 1, routes).unwrap();
            let mut seen = std::collections::BTreeSet::new();
            for (a, b) in host_pairs(&t) {
                let r = route(&t, a, b);
                if r.len() == 4 {
                    seen.insert(r[1].1 / 2);
                }
            }
            seen
        };
        assert_eq!(first_dims(TorusRoutes::DimensionOrder), [0].into());
        assert_eq!(first_dims(TorusRoutes::Spread), [0, 1].into());
    }

    #[test]
    fn spread_routes_load_every_switch_to_switch_link_alike() {
        for (k, per) in [(3, 1), (3, 2), (4, 1), (4, 2)] {
            let t = HostNetwork::torus_routed(k, 2, per, TorusRoutes::Spread).unwrap();
            let loads = ss_loads(&t);
            assert_eq!(loads.len() as u32, 4 * k * k);
            assert!(loads.iter().all(|&l| l == loads[0]), "{k}×{k}: {loads:?}");
            // The total is the pairs' switch hops: nothing lost.
            let hops: u32 = host_pairs(&t).map(|(a, b)| t.distance(a, b) - 2).sum();
            assert_eq!(loads.iter().sum::<usize>(), hops as usize);
        }
        // Dimension order sends every tie of the 4×4 torus towards +: not balanced.
        let dor = ss_loads(&HostNetwork::torus(4, 2, 1).unwrap());
        assert!(dor.iter().any(|&l| l != dor[0]));
    }

    #[test]
    fn the_route_kind_is_named_in_the_description() {
        assert!(!HostNetwork::torus(3, 2, 1)
            .unwrap()
            .describe()
            .contains("spread"));
        assert!(HostNetwork::torus_routed(3, 2, 1, TorusRoutes::Spread)
            .unwrap()
            .describe()
            .contains("spread routes"));
    }

    #[test]
    fn a_graph_file_gives_links_delays_and_routes_or_shortest_paths() {
        let text = "switches 3\nhosts 3\nlink h0 s0 20\nlink h1 s1\nlink h2 s2\n\
                    link s0 s1\nlink s1 s2\nlink s0 s2 5\nroute h0 h2 s0 s1 s2\n";
        let g = HostNetwork::parse(text, "g").unwrap();
        assert_eq!(g.ports(3)[0].latency, Some(20));
        assert_eq!(g.ports(3)[0].peer, 0);
        assert_eq!(g.route_len(3, 5), 4, "the given route goes round by s1");
        assert_eq!(g.route_len(5, 3), 3, "the other way a shortest path");
        assert_eq!(g.route_len(3, 4), 3);
        for (bad, why) in [
            ("hosts 1\nswitches 1\nlink h0 h0", "two different"),
            (
                "switches 1\nhosts 2\nlink h0 s0\nlink h1 h0",
                "hosts are linked to switches",
            ),
            (
                "switches 2\nhosts 2\nlink h0 s0\nlink h1 s1",
                "cannot reach",
            ),
            ("switches 1\nhosts 1", "exactly one"),
            (
                "switches 1\nhosts 1\nlink h0 s0\nlink h0 s0",
                "already linked",
            ),
            ("switches 1\nhosts 1\nlink h0 s9", "not a node"),
            ("switches 1\nhosts 1\nfoo", "cannot read"),
            ("link h0 s0", "must come before"),
            (
                "switches 2\nhosts 2\nlink h0 s0\nlink h1 s1\nlink s0 s1\nroute h0 h1 s1 s0",
                "starts at",
            ),
        ] {
            let e = HostNetwork::parse(bad, "g").unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}

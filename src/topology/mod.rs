//! Network topologies: node and port numbering, neighbours, distances and the sets of
//! output ports that lie on minimal routes. Routing functions (which of those ports and
//! virtual channels a message may use) live in `routing/`, not here.
//!
//! | topology | ports | numbering |
//! |---|---|---|
//! | hypercube | d | port i crosses dimension i |
//! | torus, bidirectional | 2n | port 2i: +i, port 2i+1: −i |
//! | torus, unidirectional | n | port i: +i |
//! | mesh | 2n | as the bidirectional torus; boundary ports absent |
//! | Manhattan Street | 2 | port 0: row link, port 1: column link |
//! | dragonfly router | a−1+h | ports 0..a−1: local links (port l: router l of the group, l+1 from the router's own index on); a−1..a−1+h: global links (`dragonfly`) |
//! | flattened butterfly router | n(k−1) | port d(k−1)+o−1: dimension d, offset o = 1..k (`flatfly`) |
//! | concentration (c ≥ 2) | d+c | router: the network's d ports, then d+j to terminal j; terminal j: port d+j only (`concentration`) |
//!
//! The local port (processing element, DMA engines) is numbered `degree()`.
//!
//! A flit sent on output port q arrives at the neighbour on input port
//! [`Topology::arrival_port`]: q itself on every network but the dragonfly, whose links'
//! two ends have each their own router's port number.

pub mod concentration;
pub mod dragonfly;
pub mod flatfly;
pub mod grid;
pub mod hosts;
pub mod hypercube;
pub mod link_kind;
pub mod manhattan;
pub mod mesh;
pub mod torus;

use crate::config::TopologyConfig;
use crate::foundation::error::{Error, Result};
use crate::foundation::types::{NodeId, PortId, MAX_NODES};
pub use concentration::Concentrated;
pub use dragonfly::Dragonfly;
pub use flatfly::FlatFly;
pub use grid::Grid;
pub use hosts::HostNetwork;
pub use hypercube::Hypercube;
pub use link_kind::LinkKind;
pub use manhattan::ManhattanStreet;
pub use mesh::Mesh;
pub use torus::Torus;

/// A set of ports (at most 64), as a bit array.
pub type PortSet = bitvec::BitArr!(for 64, in u64, bitvec::order::Lsb0);

/// Largest hypercube dimension routemu accepts: as many nodes as a message id can name
/// ([`MAX_NODES`]). Whether a machine that large fits is the memory check's call
/// (`limits`): a d = 24 hypercube needs about 130 GiB, so MPI ranks on several machines.
pub const MAX_HYPERCUBE_DIM: u32 = crate::foundation::types::MsgId::NODE_BITS;

/// A network topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// Binary hypercube.
    Hypercube(Hypercube),
    /// k-ary n-cube (uni- or bidirectional).
    Torus(Torus),
    /// k-ary n-mesh.
    Mesh(Mesh),
    /// Manhattan Street network.
    ManhattanStreet(ManhattanStreet),
    /// Hosts and switches (paper 002).
    Hosts(HostNetwork),
    /// A dragonfly's routers (one terminal each: the router's own processing element).
    Dragonfly(Dragonfly),
    /// A flattened butterfly's routers (one terminal each).
    FlatFly(FlatFly),
    /// A router network with two or more terminal nodes per router.
    Concentrated(Concentrated),
}

impl Topology {
    /// Builds a topology, rejecting impossible ones with a message that says why.
    pub fn from_config(cfg: &TopologyConfig) -> Result<Self> {
        let grid = |k: u32, n: u32, what: &str| -> Result<Grid> {
            if k < 2 {
                return Err(Error::config(format!(
                    "topology.k = {k}: a {what} needs at least 2 nodes per dimension"
                )));
            }
            if n < 1 {
                return Err(Error::config(format!(
                    "topology.n = {n}: a {what} needs at least one dimension"
                )));
            }
            let nodes = (k as u128).checked_pow(n).unwrap_or(u128::MAX);
            if nodes > MAX_NODES as u128 {
                return Err(Error::config(format!(
                    "topology: {k}^{n} nodes is more than routemu's limit of {MAX_NODES}"
                )));
            }
            Ok(Grid { k, n })
        };
        let concentrate = |net: Topology, c: u32| -> Result<Topology> {
            if c == 0 {
                return Err(Error::config(
                    "topology.c = 0: every router needs at least one terminal",
                ));
            }
            if c == 1 {
                return Ok(net);
            }
            let nodes = net.nodes() as u64 * (1 + c as u64);
            if nodes > MAX_NODES as u64 || net.degree() + c as usize > 63 {
                return Err(Error::config(format!(
                    "topology.c = {c}: {} routers with {c} terminals each is more than \
                     routemu builds (at most {MAX_NODES} nodes, routers and terminals, and \
                     63 ports per router)",
                    net.nodes()
                )));
            }
            Ok(Topology::Concentrated(Concentrated::new(net, c)))
        };
        Ok(match *cfg {
            TopologyConfig::Dragonfly { p, a, h } => {
                if p == 0 || a == 0 || h == 0 {
                    return Err(Error::config(format!(
                        "topology: Dragonfly(p: {p}, a: {a}, h: {h}) needs at least one \
                         terminal per router (p), one router per group (a) and one global \
                         link per router (h)"
                    )));
                }
                let routers = a as u64 * (a as u64 * h as u64 + 1);
                if (a as u64 - 1 + h as u64 + p as u64) > 63
                    || routers * (1 + p as u64) > MAX_NODES as u64
                {
                    return Err(Error::config(format!(
                        "topology: Dragonfly(p: {p}, a: {a}, h: {h}) is more than routemu \
                         builds: {routers} routers of radix {} (at most 63 ports per router \
                         and {MAX_NODES} nodes, routers and terminals)",
                        a as u64 - 1 + h as u64 + p as u64
                    )));
                }
                concentrate(Topology::Dragonfly(Dragonfly { p, a, h }), p)?
            }
            TopologyConfig::FlattenedButterfly { k, n, c } => {
                let g = grid(k, n, "flattened butterfly")?;
                if n as u64 * (k as u64 - 1) > 63 {
                    return Err(Error::config(format!(
                        "topology: FlattenedButterfly(k: {k}, n: {n}) has {} network ports per \
                         router; routemu's routers have at most 63",
                        n as u64 * (k as u64 - 1)
                    )));
                }
                concentrate(
                    Topology::FlatFly(FlatFly {
                        grid: g,
                        c: c.max(1),
                    }),
                    c,
                )?
            }
            TopologyConfig::Hypercube { dim } => {
                if !(1..=MAX_HYPERCUBE_DIM).contains(&dim) {
                    return Err(Error::config(format!(
                        "topology.dim = {dim}: a hypercube needs 1 to {MAX_HYPERCUBE_DIM} dimensions"
                    )));
                }
                Topology::Hypercube(Hypercube { dim })
            }
            TopologyConfig::Torus {
                k,
                n,
                bidirectional,
                c,
            } => concentrate(
                Topology::Torus(Torus {
                    grid: grid(k, n, "torus")?,
                    bidirectional,
                }),
                c,
            )?,
            TopologyConfig::Mesh { k, n, c } => concentrate(
                Topology::Mesh(Mesh {
                    grid: grid(k, n, "mesh")?,
                }),
                c,
            )?,
            TopologyConfig::ManhattanStreet { k } => {
                if k < 2 || k % 2 != 0 {
                    return Err(Error::config(format!(
                        "topology.k = {k}: a Manhattan Street network needs an even k ≥ 2 \
                         (row and column directions alternate)"
                    )));
                }
                grid(k, 2, "Manhattan Street network")?;
                Topology::ManhattanStreet(ManhattanStreet::new(k))
            }
            TopologyConfig::SwitchedTorus {
                k,
                n,
                hosts,
                routes,
            } => {
                grid(k, n, "torus of switches")?;
                Topology::Hosts(HostNetwork::torus_routed(k, n, hosts, routes)?)
            }
            TopologyConfig::HostGraph { ref file } => {
                Topology::Hosts(HostNetwork::from_file(file)?)
            }
        })
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        match self {
            Topology::Hypercube(h) => h.nodes(),
            Topology::Torus(t) => t.grid.nodes(),
            Topology::Mesh(m) => m.grid.nodes(),
            Topology::ManhattanStreet(m) => m.nodes(),
            Topology::Hosts(h) => h.nodes(),
            Topology::Dragonfly(d) => d.routers(),
            Topology::FlatFly(f) => f.grid.nodes(),
            Topology::Concentrated(c) => c.nodes(),
        }
    }

    /// Number of routers: the nodes that are not terminal nodes (every node but under
    /// concentration, where terminals are nodes of their own; a host/switch network's
    /// switches).
    pub fn routers(&self) -> usize {
        match self {
            Topology::Concentrated(c) => c.routers as usize,
            Topology::Hosts(h) => h.switches as usize,
            _ => self.nodes(),
        }
    }

    /// The router network under concentration's terminals (the topology itself
    /// otherwise).
    pub fn router_net(&self) -> &Topology {
        match self {
            Topology::Concentrated(c) => &c.net,
            _ => self,
        }
    }

    /// The router a node's messages enter the router network at: its own number for a
    /// router, its router's for a terminal of a concentrated network.
    #[inline]
    pub fn router_of(&self, node: NodeId) -> NodeId {
        match self {
            Topology::Concentrated(c) => NodeId(c.router_of(node.0)),
            _ => node,
        }
    }

    /// The dragonfly under the terminals, if this is one.
    pub fn dragonfly(&self) -> Option<&Dragonfly> {
        match self.router_net() {
            Topology::Dragonfly(d) => Some(d),
            _ => None,
        }
    }

    /// The flattened butterfly under the terminals, if this is one.
    pub fn flatfly(&self) -> Option<&FlatFly> {
        match self.router_net() {
            Topology::FlatFly(f) => Some(f),
            _ => None,
        }
    }

    /// Terminals per router (concentration; 1 where the router's processing element is
    /// the terminal).
    pub fn concentration(&self) -> u32 {
        match self {
            Topology::Concentrated(c) => c.c,
            _ => 1,
        }
    }

    /// The nodes that create and receive messages: every node, or the hosts of a
    /// host/switch network.
    pub fn endpoints(&self) -> std::ops::Range<u32> {
        match self {
            Topology::Hosts(h) => h.switches..h.switches + h.hosts,
            Topology::Concentrated(c) => c.terminals(),
            _ => 0..self.nodes() as u32,
        }
    }

    /// What an endpoint is called in a per-endpoint unit ("flits/terminal/cycle"): a
    /// host of a host/switch network, a terminal of a concentrated one, else a node.
    pub fn endpoint_noun(&self) -> &'static str {
        match self {
            Topology::Hosts(_) => "host",
            Topology::Concentrated(_) => "terminal",
            _ => "node",
        }
    }

    /// Network ports per node (the crossbar is (degree+1)×(degree+1)).
    pub fn degree(&self) -> usize {
        match self {
            Topology::Hypercube(h) => h.dim as usize,
            Topology::Torus(t) => t.degree(),
            Topology::Mesh(m) => m.degree(),
            Topology::ManhattanStreet(_) => 2,
            Topology::Hosts(h) => h.degree(),
            Topology::Dragonfly(d) => d.degree(),
            Topology::FlatFly(f) => f.degree(),
            Topology::Concentrated(c) => c.degree(),
        }
    }

    /// Number of dimensions (the default number of DMA engines per node).
    pub fn dimensions(&self) -> usize {
        match self {
            Topology::Hypercube(h) => h.dim as usize,
            Topology::Torus(t) => t.grid.n as usize,
            Topology::Mesh(m) => m.grid.n as usize,
            Topology::ManhattanStreet(_) => 2,
            Topology::Hosts(_) => 1,
            Topology::Dragonfly(_) => 1,
            Topology::FlatFly(f) => f.grid.n as usize,
            Topology::Concentrated(c) => c.net.dimensions(),
        }
    }

    /// The node reached through output `port`, if that port exists.
    #[inline]
    pub fn neighbor(&self, node: NodeId, port: PortId) -> Option<NodeId> {
        let (u, p) = (node.0, port.0 as u32);
        match self {
            Topology::Hypercube(h) => Some(h.neighbor(u, p)),
            Topology::Torus(t) => Some(t.neighbor(u, p)),
            Topology::Mesh(m) => m.neighbor(u, p),
            Topology::ManhattanStreet(m) => Some(m.neighbor(u, p)),
            Topology::Hosts(h) => h.ports(u).get(p as usize).map(|x| x.peer),
            Topology::Dragonfly(d) => d.neighbor(u, p),
            Topology::FlatFly(f) => (p < f.degree() as u32).then(|| f.neighbor(u, p)),
            Topology::Concentrated(c) => c.neighbor(u, p),
        }
        .map(NodeId)
    }

    /// The input port of `neighbor(node, port)` that a flit sent on output `port` of
    /// `node` arrives on: `port` itself except on the dragonfly (see the module table).
    #[inline]
    pub fn arrival_port(&self, node: NodeId, port: PortId) -> PortId {
        match self {
            Topology::Dragonfly(d) => PortId(d.arrival_port(node.0, port.0 as u32) as u8),
            Topology::Concentrated(c) => PortId(c.arrival_port(node.0, port.0 as u32) as u8),
            _ => port,
        }
    }

    /// The node whose output feeds input `port` of `node`, if any (on a host/switch
    /// network and a dragonfly, whose ports are bidirectional, the node at the other end
    /// of the port's link; the output is [`Topology::upstream_port`]).
    #[inline]
    pub fn upstream(&self, node: NodeId, port: PortId) -> Option<NodeId> {
        let (u, p) = (node.0, port.0 as u32);
        match self {
            Topology::Hypercube(h) => Some(h.neighbor(u, p)),
            Topology::Torus(t) => Some(t.upstream(u, p)),
            Topology::Mesh(m) => m.upstream(u, p),
            Topology::ManhattanStreet(m) => Some(m.upstream(u, p)),
            Topology::Hosts(h) => h.ports(u).get(p as usize).map(|x| x.peer),
            Topology::Dragonfly(d) => d.neighbor(u, p),
            Topology::FlatFly(f) => (p < f.degree() as u32).then(|| f.upstream(u, p)),
            Topology::Concentrated(c) => c.upstream(u, p),
        }
        .map(NodeId)
    }

    /// The output port of [`Topology::upstream`]`(node, port)` that feeds input `port`
    /// of `node` (`port` itself except on the dragonfly).
    #[inline]
    pub fn upstream_port(&self, node: NodeId, port: PortId) -> PortId {
        match self {
            // A dragonfly link's two ends name each other: the arrival port is symmetric.
            Topology::Dragonfly(_) | Topology::Concentrated(_) => self.arrival_port(node, port),
            _ => port,
        }
    }

    /// Length of a shortest path from `a` to `b` in links.
    #[inline]
    pub fn distance(&self, a: NodeId, b: NodeId) -> u32 {
        match self {
            Topology::Hypercube(h) => h.distance(a.0, b.0),
            Topology::Torus(t) => t.distance(a.0, b.0),
            Topology::Mesh(m) => m.distance(a.0, b.0),
            Topology::ManhattanStreet(m) => m.distance(a.0, b.0),
            Topology::Hosts(h) => h.distance(a.0, b.0),
            Topology::Dragonfly(d) => d.distance(a.0, b.0),
            Topology::FlatFly(f) => f.distance(a.0, b.0),
            Topology::Concentrated(c) => c.distance(a.0, b.0),
        }
    }

    /// The output ports of `cur` that lie on some minimal path to `dst` (empty when
    /// `cur == dst`).
    #[inline]
    pub fn minimal_ports(&self, cur: NodeId, dst: NodeId) -> PortSet {
        match self {
            Topology::Hypercube(h) => h.minimal_ports(cur.0, dst.0),
            Topology::Torus(t) => t.minimal_ports(cur.0, dst.0),
            Topology::Mesh(m) => m.minimal_ports(cur.0, dst.0),
            Topology::ManhattanStreet(m) => m.minimal_ports(cur.0, dst.0),
            Topology::Hosts(h) => {
                let mut s = PortSet::ZERO;
                let d = h.distance(cur.0, dst.0);
                for (p, end) in h.ports(cur.0).iter().enumerate() {
                    if d > 0 && h.distance(end.peer, dst.0) + 1 == d {
                        s.set(p, true);
                    }
                }
                s
            }
            Topology::Dragonfly(d) => d.minimal_ports(cur.0, dst.0),
            Topology::FlatFly(f) => f.minimal_ports(cur.0, dst.0),
            Topology::Concentrated(c) => c.minimal_ports(cur.0, dst.0),
        }
    }

    /// Number of unidirectional channels (one per existing output port).
    pub fn channels(&self) -> usize {
        match self {
            Topology::Mesh(m) => {
                let g = m.grid;
                2 * g.n as usize * (g.k as usize - 1) * g.nodes() / g.k as usize
            }
            Topology::Hosts(h) => 2 * h.links(),
            Topology::Concentrated(c) => c.net.channels() + 2 * c.routers as usize * c.c as usize,
            _ => self.nodes() * self.degree(),
        }
    }

    /// Number of physical links: a bidirectional pair of channels counts once, a
    /// unidirectional channel counts once.
    pub fn links(&self) -> usize {
        match self {
            Topology::Hypercube(_)
            | Topology::Mesh(_)
            | Topology::Hosts(_)
            | Topology::Dragonfly(_)
            | Topology::FlatFly(_) => self.channels() / 2,
            Topology::Concentrated(c) => c.net.links() + c.routers as usize * c.c as usize,
            Topology::Torus(t) if t.bidirectional => self.channels() / 2,
            _ => self.channels(),
        }
    }

    /// Largest distance between two nodes.
    pub fn diameter(&self) -> u32 {
        match self {
            Topology::Hypercube(h) => h.dim,
            Topology::Torus(t) => t.diameter(),
            Topology::Mesh(m) => m.grid.n * (m.grid.k - 1),
            Topology::ManhattanStreet(m) => m.diameter(),
            Topology::Hosts(h) => h.diameter(),
            Topology::Dragonfly(d) => d.diameter(),
            Topology::FlatFly(f) => f.grid.n,
            Topology::Concentrated(c) => c.net.diameter() + 2,
        }
    }

    /// Mean distance over ordered pairs of distinct nodes (closed forms; exact table sum
    /// for the Manhattan Street network; on host/switch networks, the mean route length
    /// over ordered pairs of distinct hosts, the traffic's pairs; under concentration,
    /// over ordered pairs of distinct terminals; on the dragonfly, of the minimal route).
    pub fn mean_distance(&self) -> f64 {
        match self {
            Topology::Hypercube(h) => h.mean_distance(),
            Topology::Torus(t) => t.mean_distance(),
            Topology::Mesh(m) => m.mean_distance(),
            Topology::ManhattanStreet(m) => m.mean_distance(),
            Topology::Hosts(h) => h.mean_route(),
            Topology::Dragonfly(d) => d.mean_distance(),
            Topology::FlatFly(f) => f.mean_distance(),
            Topology::Concentrated(c) => c.mean_distance(),
        }
    }

    /// Uniform-traffic throughput bound in flits per node per cycle for links carrying
    /// one flit per cycle: the bisection bound where one exists in closed form
    /// (8/k for the bidirectional k-ary n-cube, 4/k unidirectional, 4/k for the mesh,
    /// 2 for the hypercube), otherwise the channel-load bound degree/mean distance; on the
    /// dragonfly and the flattened butterfly the most loaded channel's bound under
    /// minimal routing (per terminal: `Dragonfly::uniform_bound`, `FlatFly::uniform_bound`);
    /// under concentration per terminal, at most 1 (the terminal's link).
    pub fn capacity(&self) -> f64 {
        match self {
            Topology::Torus(t) if t.bidirectional => 8.0 / t.grid.k as f64,
            Topology::Torus(t) => 4.0 / t.grid.k as f64,
            Topology::Mesh(m) => 4.0 / m.grid.k as f64,
            Topology::Hypercube(_) => 2.0,
            Topology::ManhattanStreet(_) => self.degree() as f64 / self.mean_distance(),
            // A host sends and receives at most one flit per cycle on its one link.
            Topology::Hosts(_) => 1.0,
            Topology::Dragonfly(d) => d.uniform_bound(),
            Topology::FlatFly(f) => f.uniform_bound(),
            Topology::Concentrated(c) => match &*c.net {
                Topology::Dragonfly(d) => d.uniform_bound(),
                Topology::FlatFly(f) => f.uniform_bound(),
                net => net.capacity() / c.c as f64,
            }
            .min(1.0),
        }
    }

    /// The worst-case (`GroupShift`) throughput bound per terminal under minimal routing
    /// on a dragonfly (1/(a·p): a group's terminals share one global link to the next
    /// group) or a flattened butterfly (1/c), None elsewhere.
    pub fn group_shift_bound(&self) -> Option<f64> {
        let cap = |b: f64| {
            if self.concentration() > 1 {
                b.min(1.0)
            } else {
                b
            }
        };
        match self.router_net() {
            Topology::Dragonfly(d) => Some(cap(d.group_shift_bound())),
            Topology::FlatFly(f) => Some(cap(f.group_shift_bound())),
            _ => None,
        }
    }

    /// Directed channels a bisection of the router network cuts, where routemu knows it
    /// (dragonfly: the global links between two halves of the groups; flattened
    /// butterfly: halving dimension 0).
    pub fn bisection_channels(&self) -> Option<usize> {
        match self.router_net() {
            Topology::Dragonfly(d) => Some(d.bisection_channels()),
            Topology::FlatFly(f) => Some(f.bisection_channels()),
            _ => None,
        }
    }

    /// [`Topology::capacity`] for links of `width` flits per cycle, halved on half-duplex
    /// links where one physical link carries both directions (one transfer at a time:
    /// the bisection's links carry half as much); a unidirectional network's links are
    /// single channels already.
    pub fn capacity_of_links(&self, width: u32, half_duplex: bool) -> f64 {
        let shared = half_duplex && self.peer_port(PortId(0)).is_some();
        self.capacity() * width as f64 * if shared { 0.5 } else { 1.0 }
    }

    /// The port at the neighbour behind output `port` that uses the same physical link in
    /// the other direction, when links are bidirectional pairs of channels (hypercube:
    /// the same dimension; bidirectional torus and mesh: the opposite direction). None
    /// for unidirectional links (unidirectional torus, Manhattan Street), whose physical
    /// link is a single channel.
    #[inline]
    pub fn peer_port(&self, port: PortId) -> Option<PortId> {
        match self {
            Topology::Hypercube(_) => Some(port),
            Topology::Torus(t) if t.bidirectional => Some(PortId(port.0 ^ 1)),
            Topology::Mesh(_) => Some(PortId(port.0 ^ 1)),
            Topology::FlatFly(f) => {
                let (d, o) = f.port_dim(port.0 as u32);
                Some(PortId(f.port(d, f.grid.k - o) as u8))
            }
            // Per-router (the dragonfly: `arrival_port`) or without a reverse link.
            Topology::Torus(_)
            | Topology::ManhattanStreet(_)
            | Topology::Hosts(_)
            | Topology::Dragonfly(_)
            | Topology::Concentrated(_) => None,
        }
    }

    /// Human-readable name of a network port.
    pub fn port_name(&self, port: PortId) -> String {
        let p = port.0 as u32;
        if p as usize == self.degree() {
            return "local".into();
        }
        const DIM: [&str; 3] = ["X", "Y", "Z"];
        let dim_name = |d: u32| {
            DIM.get(d as usize)
                .map(|s| s.to_string())
                .unwrap_or_else(|| format!("D{d}"))
        };
        match self {
            Topology::Hypercube(_) => format!("dim{p}"),
            Topology::Torus(t) => {
                let (d, up) = t.port_dim(p);
                format!("{}{}", if up { "+" } else { "-" }, dim_name(d))
            }
            Topology::Mesh(_) => format!(
                "{}{}",
                if p.is_multiple_of(2) { "+" } else { "-" },
                dim_name(p / 2)
            ),
            Topology::ManhattanStreet(_) => if p == 0 { "row" } else { "col" }.into(),
            // Without the node the port's end is unknown; see `HostNetwork::port_name`.
            Topology::Hosts(_) => format!("port{p}"),
            Topology::Dragonfly(d) => {
                if d.is_global(p) {
                    format!("global{}", p - (d.a - 1))
                } else {
                    format!("local{p}")
                }
            }
            Topology::FlatFly(f) => {
                let (d, o) = f.port_dim(p);
                format!("{}+{o}", dim_name(d))
            }
            Topology::Concentrated(c) => {
                if c.is_terminal_port(p) {
                    format!("term{}", p - c.net_degree)
                } else {
                    c.net.port_name(port)
                }
            }
        }
    }

    /// One-line description.
    pub fn describe(&self) -> String {
        match self {
            Topology::Hypercube(h) => format!("{}-dimensional binary hypercube", h.dim),
            Topology::Torus(t) => format!(
                "{}-ary {}-cube torus, {} links",
                t.grid.k,
                t.grid.n,
                if t.bidirectional {
                    "bidirectional"
                } else {
                    "unidirectional"
                }
            ),
            Topology::Mesh(m) => format!("{}-ary {}-dimensional mesh", m.grid.k, m.grid.n),
            Topology::ManhattanStreet(m) => format!("{}×{} Manhattan Street network", m.k, m.k),
            Topology::Hosts(h) => h.describe(),
            Topology::Dragonfly(d) => format!(
                "dragonfly of {} groups of {} routers, {} global link(s) per router ({} routers)",
                d.groups(),
                d.a,
                d.h,
                d.routers()
            ),
            Topology::FlatFly(f) => format!(
                "{}-ary {}-dimensional flattened butterfly ({} routers)",
                f.grid.k,
                f.grid.n,
                f.grid.nodes()
            ),
            Topology::Concentrated(c) => format!(
                "{}, {} terminals per router ({} terminals)",
                c.net.describe(),
                c.c,
                c.routers * c.c
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_port_leads_back_over_the_same_link() {
        for cfg in [
            TopologyConfig::Hypercube { dim: 4 },
            TopologyConfig::Torus {
                k: 2,
                n: 2,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Torus {
                k: 5,
                n: 2,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Mesh { k: 3, n: 2, c: 1 },
        ] {
            let t = Topology::from_config(&cfg).unwrap();
            for u in 0..t.nodes() as u32 {
                for p in 0..t.degree() as u8 {
                    if let Some(v) = t.neighbor(NodeId(u), PortId(p)) {
                        let q = t.peer_port(PortId(p)).unwrap();
                        assert_eq!(t.neighbor(v, q), Some(NodeId(u)), "{cfg:?} {u} {p}");
                        assert_eq!(t.peer_port(q), Some(PortId(p)));
                    }
                }
            }
        }
    }
    use std::collections::VecDeque;

    fn topo(cfg: TopologyConfig) -> Topology {
        Topology::from_config(&cfg).unwrap()
    }

    /// Breadth-first distances over the neighbour function alone: an independent check
    /// of `distance`.
    fn bfs(t: &Topology, src: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; t.nodes()];
        dist[src as usize] = 0;
        let mut q = VecDeque::from([src]);
        while let Some(u) = q.pop_front() {
            for p in 0..t.degree() {
                if let Some(v) = t.neighbor(NodeId(u), PortId(p as u8)) {
                    if dist[v.idx()] == u32::MAX {
                        dist[v.idx()] = dist[u as usize] + 1;
                        q.push_back(v.0);
                    }
                }
            }
        }
        dist
    }

    /// Checks distance, mean distance, diameter, minimal ports and upstream against the
    /// graph itself.
    fn check_against_graph(t: &Topology) {
        let n = t.nodes();
        let mut total = 0u64;
        let mut diam = 0;
        for s in 0..n as u32 {
            let d = bfs(t, s);
            for v in 0..n as u32 {
                assert_eq!(t.distance(NodeId(s), NodeId(v)), d[v as usize], "{s}->{v}");
                total += d[v as usize] as u64;
                diam = diam.max(d[v as usize]);
                let min = t.minimal_ports(NodeId(s), NodeId(v));
                for p in 0..t.degree() {
                    let on_min = t
                        .neighbor(NodeId(s), PortId(p as u8))
                        .is_some_and(|w| t.distance(w, NodeId(v)) + 1 == d[v as usize]);
                    assert_eq!(min[p], on_min, "port {p} of {s} towards {v}");
                }
            }
            for p in 0..t.degree() {
                if let Some(w) = t.neighbor(NodeId(s), PortId(p as u8)) {
                    assert_eq!(t.upstream(w, PortId(p as u8)), Some(NodeId(s)));
                }
            }
        }
        let mean = total as f64 / (n as f64 * (n as f64 - 1.0));
        assert!(
            (mean - t.mean_distance()).abs() < 1e-9,
            "{mean} vs {}",
            t.mean_distance()
        );
        assert_eq!(diam, t.diameter());
        let channels: usize = (0..n as u32)
            .map(|s| {
                (0..t.degree())
                    .filter(|&p| t.neighbor(NodeId(s), PortId(p as u8)).is_some())
                    .count()
            })
            .sum();
        assert_eq!(channels, t.channels());
    }

    #[test]
    fn hypercube_counts_and_mean_distance_match_closed_forms() {
        for dim in 1..=8 {
            let t = topo(TopologyConfig::Hypercube { dim });
            let p = 1usize << dim;
            assert_eq!(t.nodes(), p);
            assert_eq!(t.degree(), dim as usize);
            assert_eq!(t.links(), dim as usize * p / 2);
            let closed = dim as f64 * (1u64 << (dim - 1)) as f64 / (p as f64 - 1.0);
            assert!((t.mean_distance() - closed).abs() < 1e-12);
            check_against_graph(&t);
        }
    }

    #[test]
    fn hypercube_of_twenty_dimensions_is_accepted() {
        let t = topo(TopologyConfig::Hypercube { dim: 20 });
        assert_eq!(t.nodes(), 1 << 20);
        assert_eq!(t.diameter(), 20);
        assert_eq!(t.distance(NodeId(0), NodeId((1 << 20) - 1)), 20);
    }

    #[test]
    fn torus_counts_and_mean_distance_match_closed_forms() {
        for (k, n) in [(2, 2), (3, 2), (4, 2), (5, 1), (8, 2), (3, 3), (4, 3)] {
            for bidirectional in [true, false] {
                let t = topo(TopologyConfig::Torus {
                    k,
                    n,
                    bidirectional,
                    c: 1,
                });
                let nodes = (k as usize).pow(n);
                assert_eq!(t.nodes(), nodes);
                let degree = if bidirectional { 2 * n } else { n } as usize;
                assert_eq!(t.degree(), degree);
                assert_eq!(t.links(), n as usize * nodes);
                // Per dimension: k/4 (even k) or (k²−1)/(4k) bidirectional, (k−1)/2
                // unidirectional, averaged over all k positions.
                let kf = k as f64;
                let ring = match (bidirectional, k % 2) {
                    (false, _) => (kf - 1.0) / 2.0,
                    (true, 0) => kf / 4.0,
                    (true, _) => (kf * kf - 1.0) / (4.0 * kf),
                };
                let closed = n as f64 * ring * nodes as f64 / (nodes as f64 - 1.0);
                assert!((t.mean_distance() - closed).abs() < 1e-12);
                check_against_graph(&t);
            }
        }
    }

    #[test]
    fn mesh_counts_and_mean_distance_match_closed_forms() {
        for (k, n) in [(2, 1), (4, 2), (5, 2), (3, 3)] {
            let t = topo(TopologyConfig::Mesh { k, n, c: 1 });
            let nodes = (k as usize).pow(n);
            assert_eq!(
                t.links(),
                n as usize * (k as usize - 1) * nodes / k as usize
            );
            let kf = k as f64;
            let closed =
                n as f64 * (kf * kf - 1.0) / (3.0 * kf) * nodes as f64 / (nodes as f64 - 1.0);
            assert!((t.mean_distance() - closed).abs() < 1e-12);
            assert_eq!(t.diameter(), n * (k - 1));
            check_against_graph(&t);
        }
    }

    #[test]
    fn manhattan_street_is_two_regular_and_tables_match_search() {
        for k in [2, 4, 6, 8] {
            let t = topo(TopologyConfig::ManhattanStreet { k });
            assert_eq!(t.nodes(), (k * k) as usize);
            assert_eq!(t.degree(), 2);
            assert_eq!(t.links(), 2 * (k * k) as usize);
            // Every node has exactly two incoming links.
            let mut indeg = vec![0; t.nodes()];
            for u in 0..t.nodes() as u32 {
                for p in 0..2 {
                    indeg[t.neighbor(NodeId(u), PortId(p)).unwrap().idx()] += 1;
                }
            }
            assert!(indeg.iter().all(|&d| d == 2));
            check_against_graph(&t);
        }
    }

    #[test]
    fn manhattan_street_distances_are_paper_003s_and_the_same_from_every_node() {
        // D(0) over ordered distinct pairs (spec paper003 §1.1) and the 6×6 distance
        // histogram seen from every source (the network is vertex-transitive in its
        // distance multiset, which the model's "fix the destination" relies on).
        for (k, num, den) in [(4u32, 44.0, 15.0), (6, 130.0, 35.0), (8, 316.0, 63.0)] {
            let t = topo(TopologyConfig::ManhattanStreet { k });
            assert!((t.mean_distance() - num / den).abs() < 1e-12, "{k}");
        }
        let t = topo(TopologyConfig::ManhattanStreet { k: 6 });
        for a in 0..36 {
            let mut h = [0u32; 7];
            for b in 0..36 {
                if a != b {
                    h[t.distance(NodeId(a), NodeId(b)) as usize] += 1;
                }
            }
            assert_eq!(h, [0, 2, 4, 8, 11, 8, 2], "from node {a}");
        }
        let dont_care = (0..36u32)
            .flat_map(|a| (0..36u32).map(move |b| (a, b)))
            .filter(|&(a, b)| a != b && t.minimal_ports(NodeId(a), NodeId(b)).count_ones() == 2)
            .count();
        assert_eq!(dont_care, 324, "25.71% of the ordered pairs are don't-care");
    }

    #[test]
    fn manhattan_street_rows_and_columns_alternate() {
        let t = topo(TopologyConfig::ManhattanStreet { k: 4 });
        let at = |r: u32, c: u32| NodeId(r * 4 + c);
        assert_eq!(t.neighbor(at(0, 1), PortId(0)), Some(at(0, 2))); // row 0 east
        assert_eq!(t.neighbor(at(1, 1), PortId(0)), Some(at(1, 0))); // row 1 west
        assert_eq!(t.neighbor(at(1, 0), PortId(1)), Some(at(2, 0))); // column 0 south
        assert_eq!(t.neighbor(at(1, 1), PortId(1)), Some(at(0, 1))); // column 1 north
    }

    #[test]
    fn the_largest_hypercube_has_as_many_nodes_as_message_ids_can_name() {
        let t = topo(TopologyConfig::Hypercube {
            dim: MAX_HYPERCUBE_DIM,
        });
        assert_eq!(t.nodes(), MAX_NODES);
        assert_eq!(MAX_HYPERCUBE_DIM, 24);
    }

    #[test]
    fn impossible_topologies_are_rejected() {
        for cfg in [
            TopologyConfig::Hypercube { dim: 0 },
            TopologyConfig::Hypercube { dim: 25 },
            TopologyConfig::Torus {
                k: 1,
                n: 2,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Torus {
                k: 4,
                n: 0,
                bidirectional: true,
                c: 1,
            },
            TopologyConfig::Mesh { k: 1, n: 2, c: 1 },
            TopologyConfig::ManhattanStreet { k: 5 },
        ] {
            assert!(Topology::from_config(&cfg).is_err(), "{cfg:?}");
        }
    }
}

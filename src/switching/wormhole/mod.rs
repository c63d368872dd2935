//! Wormhole switching with virtual channels and credit flow control (paper 004).
//!
//! One router cycle, in this order:
//! 1. flits and credits due this cycle arrive (applied by the engine through
//!    [`WormholeNet::deliver`]); a head flit puts its header in the routing controller's
//!    FIFO, in input-port order;
//! 2. idle injection DMA engines take messages waiting in memory (replies of
//!    request/reply traffic first, [`replies`]); their headers join the FIFO after the
//!    network's (transit before new traffic);
//! 3. the routing controller starts serving queued headers (service `router.controller.route`
//!    cycles; result usable in the last cycle of service);
//! 4. virtual-channel allocation for headers whose route (plus `pipeline.vc_alloc`) is ready;
//! 5. switch allocation and crossbar traversal: each granted connection moves up to
//!    `links.width` flits; credits go back upstream; the output VC is released when the
//!    tail's credit comes back (`router.vc_release: TailCredit`) or when the tail is sent
//!    (`TailSent`, BookSim's default); under `TailSent` a message queued in a VC buffer
//!    behind one whose tail just left joins the routing controller's queue next cycle, as
//!    if its head had arrived then.
//!
//! Zero-load latency of a message of L flits over h hops, with R the route service time,
//! a/s/x the VC-allocation, switch-allocation and traversal stages, ℓ the link latency,
//! W the link width and i/e the network interface's injection and ejection latencies
//! (`router.ni`, default 0 and 1), is (h+1)(R−1+a+s+x) + h·ℓ + i + e + ⌈L/W⌉ − 1: every
//! router on the path (source, h−1 transit, destination) adds R−1+a+s+x, every link ℓ, the
//! injection channel i, the ejection into memory e, and the body follows the head at W
//! flits per cycle. It holds when no credit stalls the
//! body: buffer depth ≥ x + ℓ + credit latency + (R−1+a+s). See [`crate::switching::zero_load::wormhole`].
//!
//! Links whose latency differs from `links.latency` — a dragonfly's global links
//! (`links.latency_global`), the terminal links of a concentrated network
//! (`links.latency_terminal`) — put their own ℓ in that sum for each link on the path
//! (docs/dragonfly.md). A flit sent on output port q arrives on the downstream node's
//! input [`Topology::arrival_port`] (q itself except on the dragonfly, whose links' two
//! ends have each their own router's port number), and its credit goes back to the
//! upstream output [`Topology::upstream_port`].
//!
//! Blocking of a header at a router = cycles from "route ready + a + s" to its switch
//! grant, i.e. the time lost to VC and switch contention (zero at zero load).
//!
//! [`invariants`] checks flits, credits and VC ownership on demand; [`watchdog`] explains
//! a deadlock.

pub mod invariants;
pub mod replies;
pub mod watchdog;

use crate::config::{HwConfig, SwitchingConfig, VcRelease};
use crate::engine::machine::Machine;
use crate::engine::network::{ModeContext, ModeMeasures, NetMeasures, Network};
use crate::engine::partition::Outbox;
use crate::engine::partition::PartOut;
use crate::engine::partitioner::PartNodes;
use crate::engine::probe::observe::{Level, LinkObs, PortObs};
use crate::engine::probe::MsgStats;
use crate::engine::replication::{avg, per_message, RepResult};
use crate::engine::window::MeasureWindow;
use crate::engine::window::Window;
use crate::foundation::ci::mean_ci;
use crate::foundation::error::Result;
use crate::foundation::rng::{stream, NodeRng};
use crate::foundation::types::{Cycle, NodeId, PortId};
use crate::router::buffers::{InputBuffers, MsgHeader, OutputVcs, VcState};
use crate::router::controller::CtrlStats;
use crate::router::controller::{Controllers, CtrlRequest};
use crate::router::crossbar::{Crossbar, NiCaps};
use crate::router::dma::{Dma, PendingMsg};
use crate::router::link::{LinkEvent, LinkTiming};
use crate::router::source::{SequentialSource, SourceView};
use crate::router::vc_alloc::VcAllocator;
use crate::router::Layout;
use crate::routing::{Route, RoutingFn};
use crate::switching::report::{ModeReport, Wormhole};
use crate::switching::Mode;
use crate::topology::Topology;

/// `n` zeroed counters when per-link observation is on, none otherwise; an error naming
/// `what` when the memory cannot be had.
fn obs_vec<T: Clone + Default>(cfg: &HwConfig, n: Option<usize>, what: &str) -> Result<Vec<T>> {
    let n = if cfg.experiment.observe.per_link {
        n
    } else {
        Some(0)
    };
    crate::foundation::limits::filled_table(n, T::default(), what)
}

/// The network interface's connections per cycle: its flit rates over the link width.
fn ni_caps(cfg: &HwConfig) -> NiCaps {
    let connections = |w: Option<u32>| w.map(|w| (w / cfg.links.width.max(1)).max(1) as usize);
    NiCaps {
        injection: connections(cfg.router.ni.injection),
        ejection: connections(cfg.router.ni.ejection),
    }
}

/// Bytes per router of the VC and switch allocators' tables of `cfg` (validated as `m`):
/// the memory check's share for them, from the allocators' own accounts.
pub fn allocator_bytes(cfg: &HwConfig, m: &Machine) -> u64 {
    let r = &cfg.router;
    let layout = Layout::new(m.topology.degree(), r.vcs as usize, m.dma as usize);
    VcAllocator::table_bytes(&layout, r.vc_allocator.unwrap_or(r.allocator), r.arbiter)
        + Crossbar::table_bytes(
            &layout,
            r.speedup as usize,
            r.sw_allocator.unwrap_or(r.allocator),
            r.arbiter,
            ni_caps(cfg),
        )
}

/// The links' and the network interface's delays of `cfg`.
fn link_timing(cfg: &HwConfig) -> LinkTiming {
    let mut timing = LinkTiming::new(&cfg.links, cfg.router.pipeline.switch_traversal);
    timing.eject = cfg.router.ni.ejection_latency;
    timing
}

/// The longest delay an event is scheduled ahead: the links' and the ports' own.
fn horizon_of(timing: &LinkTiming, port_delay: &[(Cycle, Cycle)]) -> Cycle {
    port_delay
        .iter()
        .fold(timing.horizon(), |h, &(f, c)| h.max(f).max(c))
}

/// Bytes per node the calendar (`engine::wheel::Wheel`) holds at the run's offered load:
/// every bucket of the wheel (a power of two over the horizon, the longest link or credit
/// delay) keeps the capacity of the most events one cycle has had, about a flit and a
/// credit event per link a flit crosses in a cycle, `2 · flits · (D + 1)` per node (D
/// the mean distance, one more for the injection link). Small on a torus (8 buckets);
/// on a dragonfly whose global links take 100 cycles, 256 buckets make it kilobytes a
/// node.
pub fn calendar_bytes(cfg: &HwConfig, m: &Machine) -> u64 {
    let timing = link_timing(cfg);
    let delays = WormholeNet::port_delays(&m.topology, &cfg.links, &timing);
    let buckets = (horizon_of(&timing, &delays) as usize + 1).next_power_of_two();
    let flits = cfg.workload.rate.max(0.0) * m.workload.flits_per_creation();
    let events = 2.0 * flits * (m.topology.mean_distance() + 1.0);
    (events * buckets as f64 * std::mem::size_of::<LinkEvent>() as f64).ceil() as u64
}

/// The fewest flits a message of `w` can have (requests, writes and replies): what
/// bounds the message slots of a VC buffer under `TailSent` (`router::buffers::ring_slots`).
pub fn min_length(w: &crate::traffic::Workload) -> u32 {
    use crate::traffic::length::LengthDist;
    let least = |d: &LengthDist| match d {
        LengthDist::Constant(l) => *l,
        LengthDist::Uniform(a, _) => *a,
        LengthDist::Mixed(pairs) => pairs.iter().map(|&(l, _)| l).min().unwrap_or(1),
        LengthDist::Exponential(_) => 1,
    };
    let mut l = least(&w.length);
    if let Some(r) = &w.reply {
        l = l.min(least(&r.read_reply));
        if let Some((_, req, rep)) = &r.writes {
            l = l.min(least(req)).min(least(rep));
        }
    }
    l.max(1)
}

/// Messages a node's input VCs are expected to hold at once at the run's offered load,
/// by Little's law: a message holds each of the D + 1 input VCs of its path (its DMA
/// engine's and one per hop, D the mean distance) for about its length plus a hop's head
/// latency; twice that for the blocking that lengthens the holding times towards
/// saturation, at least one and at most one per VC (a saturated network, every VC
/// holding a message; a `TailSent` ring holds more only while a tail drains). The room
/// the message pool starts with (`router::buffers::MsgSlots`) and what the memory check
/// counts for it.
pub fn messages_present(cfg: &HwConfig, m: &Machine) -> f64 {
    let len = m.workload.mean_message_flits().max(1.0);
    let messages = cfg.workload.rate.max(0.0) * m.workload.flits_per_creation() / len;
    let hop = (crate::switching::zero_load::wormhole_router(cfg) + cfg.links.latency) as f64;
    let d = m.topology.mean_distance();
    let vcs = m.topology.degree() * cfg.router.vcs as usize + m.dma as usize;
    let present = 2.0 * messages * (d + 1.0) * (len + hop);
    present.clamp(1.0, vcs as f64)
}

/// A message header that travels to another partition with its head flit: the sender
/// writes it into the downstream VC's message slot, which belongs to the receiver.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct RemoteHeader {
    /// Downstream node (global number).
    pub node: u32,
    /// Its input port.
    pub port: u8,
    /// Its VC.
    pub vc: u8,
    /// Position in the VC's ring of message slots (0 unless `TailSent`).
    pub q: u16,
    /// The header.
    pub hdr: MsgHeader,
}

/// The wormhole routers of a partition's nodes (or the whole network's). Per-node
/// arrays are indexed by the node's local index (`engine::partitioner`); events and tables
/// carry global node numbers.
#[derive(Clone, Debug)]
pub struct WormholeNet {
    /// The network graph.
    pub topology: Topology,
    /// Array shapes.
    pub layout: Layout,
    routing: RoutingFn,
    /// Input VC buffers.
    pub inputs: InputBuffers,
    /// Output VCs: credits and allocation.
    pub outputs: OutputVcs,
    /// Routing controllers.
    pub ctrl: Controllers,
    vca: VcAllocator,
    xbar: Crossbar,
    /// DMA engines and memory queues.
    pub dma: Dma,
    /// Link timing.
    pub timing: LinkTiming,
    route_service: Cycle,
    /// Injection channel latency (`router.ni.injection_latency`).
    inj_latency: Cycle,
    /// Output VCs are free when the tail is sent (`VcRelease::TailSent`).
    tail_sent: bool,
    /// Sequential injection (`router.ni.sequential_injection`): when each node's source
    /// may start its next message; None: every idle engine takes one at once.
    source: Option<SequentialSource>,
    vc_alloc_delay: Cycle,
    switch_alloc_delay: Cycle,
    router_rng: Vec<NodeRng>,
    /// [node][port]: the node each network output leads to (u32::MAX: none).
    down: Vec<u32>,
    /// [node][port]: the node feeding each network input (u32::MAX: none).
    up: Vec<u32>,
    /// [node][port]: the downstream input port each network output arrives on, and the
    /// upstream output port feeding each input; empty where they are the port itself
    /// (every network but the dragonfly, `Topology::arrival_port`).
    down_port: Vec<u8>,
    up_port: Vec<u8>,
    /// [port]: cycles from switch grant to a flit's arrival, and a credit's latency, on
    /// each network output; empty where every link has `links.latency` (the dragonfly's
    /// global links, `links.latency_global`, and terminal links, `links.latency_terminal`,
    /// have their own).
    port_delay: Vec<(Cycle, Cycle)>,
    /// Every link arrives on its own port number with the links' one latency (the three
    /// tables above empty): the per-flit path skips them.
    plain_links: bool,
    /// `[node][port]`: flits sent on each network output inside the window.
    pub link_flits: Vec<u64>,
    /// Flits held by injection engines, buffers and links.
    /// (Signed: a partition ejects flits another one injected, so only the sum over the
    /// partitions is a count.)
    pub flits_live: i64,
    /// Last cycle any flit crossed a crossbar.
    pub last_move: Cycle,
    /// Flits moved through crossbars (every cycle, window or not): the unit of work.
    pub flit_moves: u64,
    /// Flits absorbed at destinations inside the window.
    pub flits_accepted: u64,
    /// Messages whose tail was absorbed (all, measured or not).
    pub delivered: u64,
    /// Measured messages whose tail was absorbed.
    pub measured_delivered: u64,
    /// The partition's nodes.
    pub part: PartNodes,
    local: usize,
    /// Per-link and per-port observation (`experiment.observe.per_link`); the arrays
    /// below are empty when it is off.
    obs: bool,
    /// `[node][port]`: heads granted each network output inside the window, and their
    /// blocking (cycles from "route ready + a + s" to the grant, the module's
    /// definition) summed.
    link_heads: Vec<[u64; 2]>,
    /// `[node][port]`: each input port's occupancy, integrated over the window.
    occ: Vec<PortLevels>,
    /// VCs of each message class per port under request/reply traffic (the routing
    /// function is built for that many; a reply's route is shifted past the requests'
    /// half, `Route::in_class`); 0 without replies.
    class_vcs: u32,
    /// Per node: replies created there so far (their ids' sequence numbers,
    /// [`replies::REPLY_SEQ`] set); empty without replies.
    reply_seq: Vec<u64>,
}

/// An input port's buffered flits and VCs holding a message, side by side (they change
/// together).
#[derive(Clone, Copy, Debug, Default)]
struct PortLevels {
    flits: Level,
    vcs: Level,
}

impl WormholeNet {
    /// Builds the routers of every node of a validated machine.
    pub fn new(cfg: &HwConfig, machine: &Machine, seed: u64, rep: u32) -> Result<Self> {
        let all = PartNodes::whole(machine.topology.nodes());
        Self::new_part(cfg, machine, seed, rep, &all)
    }

    /// Builds the routers of the partition `part`.
    pub fn new_part(
        cfg: &HwConfig,
        machine: &Machine,
        seed: u64,
        rep: u32,
        part: &PartNodes,
    ) -> Result<Self> {
        let SwitchingConfig::Wormhole { selection, .. } = cfg.switching else {
            return Err(crate::foundation::error::Error::config(
                "internal: a wormhole network was asked to run a non-wormhole machine",
            ));
        };
        let (r, l, topology) = (&cfg.router, &cfg.links, &machine.topology);
        let dma = machine.dma;
        let replies = machine.workload.reply.is_some();
        let routing = machine
            .routing
            .clone()
            .ok_or_else(|| {
                crate::foundation::error::Error::config(
                    "internal: wormhole machine without a routing function",
                )
            })?
            // XY-YX draws each message's order from its id and this run's seed.
            .with_salt(seed, rep);
        // UgalGlobal reads the source group's gateways' credits: every group in one
        // partition, and their credits as each cycle began (`OutputVcs::snapshot`).
        let global_view = routing.kind() == crate::config::Routing::UgalGlobal;
        if global_view {
            crate::engine::partitioner::require_whole_groups(
                topology,
                part,
                "UgalGlobal routing reads the global channels of the source's group",
            )?;
        }
        let nodes = part.len();
        let layout = Layout::new(topology.degree(), r.vcs as usize, dma as usize);
        let exists = |n: usize, p: usize| {
            topology
                .neighbor(NodeId(part.node(n)), PortId(p as u8))
                .is_some()
        };
        // An input port has a ring when a link feeds it (on the Manhattan Street network
        // the inputs are not the outputs).
        let fed = |n: usize, p: usize| {
            topology
                .upstream(NodeId(part.node(n)), PortId(p as u8))
                .is_some()
        };
        let p = &r.pipeline;
        let tail_sent = r.vc_release == VcRelease::TailSent;
        let ring = if tail_sent {
            crate::router::buffers::ring_slots(r.buffer_flits, min_length(&machine.workload))
        } else {
            1
        };
        let timing = link_timing(cfg);
        let mut net = WormholeNet {
            topology: topology.clone(),
            layout,
            routing,
            inputs: InputBuffers::new(
                nodes,
                &layout,
                ring,
                fed,
                (messages_present(cfg, machine) * nodes as f64).ceil() as usize,
            )?,
            outputs: {
                let o = OutputVcs::new(nodes, &layout, r.buffer_flits, tail_sent, exists)?;
                if global_view {
                    o.with_snapshots()?
                } else {
                    o
                }
            },
            ctrl: Controllers::new(nodes, r.controller.servers as usize, layout.per_node)?,
            vca: VcAllocator::new(
                nodes,
                &layout,
                r.vc_allocator.unwrap_or(r.allocator),
                r.arbiter,
                selection,
                p.switch_alloc,
                p.speculative,
            )?,
            xbar: Crossbar::new(
                nodes,
                &layout,
                r.speedup as usize,
                r.switch_iterations as usize,
                r.sw_allocator.unwrap_or(r.allocator),
                r.arbiter,
                ni_caps(cfg),
            )?
            .with_switch_alloc_delay(p.switch_alloc),
            dma: if replies {
                Dma::new(nodes, dma as usize)?.with_replies()?
            } else {
                Dma::new(nodes, dma as usize)?
            },
            timing,
            route_service: r.controller.route,
            inj_latency: r.ni.injection_latency,
            tail_sent,
            source: if r.ni.sequential_injection {
                let view = if topology.concentration() > 1 {
                    // Only terminals create messages on a concentrated network.
                    let lead =
                        r.controller.route + r.ni.injection_latency + p.vc_alloc + p.switch_alloc;
                    SourceView::Terminal {
                        lead: lead.min(u32::MAX as u64) as u32,
                    }
                } else {
                    SourceView::Router {
                        buffer: r.buffer_flits,
                        credit_latency: r.ni.credit_latency.unwrap_or(r.ni.injection_latency),
                    }
                };
                Some(SequentialSource::new(
                    nodes,
                    view,
                    r.ni.injection.unwrap_or(0),
                )?)
            } else {
                None
            },
            vc_alloc_delay: p.vc_alloc,
            switch_alloc_delay: p.switch_alloc,
            router_rng: crate::foundation::limits::collected_table(
                nodes,
                part.iter().map(|n| stream(seed, rep, n, 1)),
                "router random stream",
            )?,
            down: Self::table(topology, part, "downstream node", |n, p| {
                topology.neighbor(n, p)
            })?,
            up: Self::table(topology, part, "upstream node", |n, p| {
                topology.upstream(n, p)
            })?,
            down_port: Self::port_table(topology, part, "arrival port", |n, p| {
                topology.arrival_port(n, p)
            })?,
            up_port: Self::port_table(topology, part, "upstream port", |n, p| {
                topology.upstream_port(n, p)
            })?,
            port_delay: Self::port_delays(topology, l, &timing),
            link_flits: crate::foundation::limits::zeroed_table(
                nodes.checked_mul(layout.all_ports()),
                "link flits",
            )?,
            flits_live: 0,
            last_move: 0,
            flit_moves: 0,
            flits_accepted: 0,
            delivered: 0,
            measured_delivered: 0,
            part: part.clone(),
            local: nodes,
            obs: cfg.experiment.observe.per_link,
            link_heads: obs_vec(cfg, nodes.checked_mul(layout.all_ports()), "per-link heads")?,
            occ: obs_vec(
                cfg,
                nodes.checked_mul(layout.all_ports()),
                "per-port occupancy",
            )?,
            class_vcs: if replies { r.vcs / 2 } else { 0 },
            reply_seq: crate::foundation::limits::zeroed_table(
                Some(if replies { nodes } else { 0 }),
                "reply sequence",
            )?,
            plain_links: true,
        };
        // Snapshots of the credits are written on the per-port path.
        net.plain_links = net.down_port.is_empty()
            && net.up_port.is_empty()
            && net.port_delay.is_empty()
            && !global_view;
        Ok(net)
    }

    /// Neighbour table [node][port] of the nodes in `range`, so the per-flit path does no
    /// coordinate arithmetic; an error naming `what` when the memory cannot be had.
    fn table(
        topology: &Topology,
        part: &PartNodes,
        what: &str,
        f: impl Fn(NodeId, PortId) -> Option<NodeId>,
    ) -> Result<Vec<u32>> {
        let d = topology.degree();
        crate::foundation::limits::collected_table(
            part.len() * d,
            part.iter()
                .flat_map(|n| (0..d).map(move |p| (n, p)))
                .map(|(n, p)| f(NodeId(n), PortId(p as u8)).map_or(u32::MAX, |x| x.0)),
            what,
        )
    }

    /// [node][port] table of the port numbers `f` gives for the nodes in `part`, or an
    /// empty one when the topology names both ends of a link alike.
    fn port_table(
        topology: &Topology,
        part: &PartNodes,
        what: &str,
        f: impl Fn(NodeId, PortId) -> PortId,
    ) -> Result<Vec<u8>> {
        if !matches!(topology.router_net(), Topology::Dragonfly(_)) {
            return Ok(Vec::new());
        }
        let d = topology.degree();
        crate::foundation::limits::collected_table(
            part.len() * d,
            part.iter()
                .flat_map(|n| (0..d).map(move |p| (n, p)))
                .map(|(n, p)| f(NodeId(n), PortId(p as u8)).0),
            what,
        )
    }

    /// Per output port (flit delay, credit latency), or empty when every link has
    /// `links.latency`: a dragonfly's global ports take `links.latency_global`, the
    /// terminal ports of a concentrated network `links.latency_terminal`, their credits
    /// the credit latency plus the same difference.
    fn port_delays(
        topology: &Topology,
        l: &crate::config::LinkConfig,
        timing: &LinkTiming,
    ) -> Vec<(Cycle, Cycle)> {
        let latency = |port: u32| -> Cycle {
            if let Topology::Concentrated(c) = topology {
                if c.is_terminal_port(port) {
                    return l.latency_terminal.unwrap_or(l.latency);
                }
            }
            match topology.dragonfly() {
                Some(d) if d.is_global(port) => l.latency_global.unwrap_or(l.latency),
                _ => l.latency,
            }
        };
        let d = topology.degree() as u32;
        if (0..d).all(|p| latency(p) == l.latency) {
            return Vec::new();
        }
        (0..d)
            .map(|p| {
                let lat = latency(p);
                (
                    timing.traversal + lat,
                    (timing.credit_latency + lat)
                        .saturating_sub(l.latency)
                        .max(1),
                )
            })
            .collect()
    }

    /// Output `op` of local node `n` where links are not all alike (`plain_links`
    /// false): the downstream input port its flits arrive on, and the cycles from switch
    /// grant to their arrival.
    #[inline(never)]
    fn output_link(&self, n: usize, op: usize) -> (usize, Cycle) {
        let delay = match self.port_delay.get(op) {
            Some(&(f, _)) => f,
            None => self.timing.flit_delay(),
        };
        (self.arrival_port(n, op), delay)
    }

    /// Input `ip` of local node `n` where links are not all alike: the upstream output
    /// feeding it, and the latency of a credit sent back to it.
    #[inline(never)]
    fn input_link(&self, n: usize, ip: usize) -> (usize, Cycle) {
        let up = self.upstream_port(n, ip);
        let credit = match self.port_delay.get(up) {
            Some(&(_, c)) => c,
            None => self.timing.credit_latency,
        };
        (up, credit)
    }

    /// The input port of the downstream node output `op` of local node `n` arrives on.
    #[inline]
    fn arrival_port(&self, n: usize, op: usize) -> usize {
        if self.down_port.is_empty() {
            op
        } else {
            self.down_port[n * self.layout.ports + op] as usize
        }
    }

    /// The output port of the upstream node that feeds input `ip` of local node `n`.
    #[inline]
    fn upstream_port(&self, n: usize, ip: usize) -> usize {
        if self.up_port.is_empty() {
            ip
        } else {
            self.up_port[n * self.layout.ports + ip] as usize
        }
    }

    /// The input VCs (port, vc) of router `n` that hold output VC `ov` of output `op`
    /// (an ejection engine when `op` is the local port). More than one is a bug.
    pub fn holders(
        &self,
        n: usize,
        op: usize,
        ov: usize,
    ) -> impl Iterator<Item = (usize, usize)> + '_ {
        let lay = self.layout;
        (0..lay.all_ports())
            .flat_map(move |q| (0..lay.vcs_of(q)).map(move |x| (q, x)))
            .filter(move |&(q, x)| {
                let h = &self.inputs.vc[lay.vc_idx(n, q, x)];
                h.state == VcState::Active && h.out_port as usize == op && h.out_vc as usize == ov
            })
    }

    /// Whether output VCs are freed when the tail is sent (`VcRelease::TailSent`).
    pub fn tail_sent(&self) -> bool {
        self.tail_sent
    }

    /// Servers per routing controller.
    pub fn ctrl_servers(&self) -> usize {
        self.ctrl.servers()
    }

    /// Number of nodes in the range.
    pub fn nodes(&self) -> usize {
        self.local
    }

    /// Writes a header that arrived from another partition into its VC's message slot.
    pub fn accept_header(&mut self, r: RemoteHeader) {
        let i = self
            .layout
            .vc_idx(self.part.local(r.node), r.port as usize, r.vc as usize);
        let m = self.inputs.at(i, r.q as usize);
        self.inputs.msg.occupy(m, r.hdr);
    }

    /// Applies a flit or credit arriving this cycle.
    #[inline]
    pub fn deliver(&mut self, e: LinkEvent) {
        let lay = self.layout;
        let (node, port, vc) = (self.part.local(e.node()), e.port(), e.vc());
        let n = e.n();
        if !e.is_credit() {
            let i = lay.vc_idx(node, port, vc);
            if e.flag() {
                if self.inputs.vc[i].state != VcState::Idle {
                    // `TailSent`: the message ahead still has flits here; this one
                    // waits behind it in the ring.
                    debug_assert!(self.tail_sent, "VC reallocated while occupied");
                    self.inputs.vc[i].queued += 1;
                } else {
                    // Only a head looks its message up (as in `traverse`): a body
                    // flit's arrival leaves the slot tables alone.
                    let len = self.inputs.msg.get(self.inputs.cur(i)).hdr.len;
                    let slot = &mut self.inputs.vc[i];
                    slot.left = len;
                    slot.head = true;
                    slot.state = VcState::Routing;
                    self.inputs.new_head[node] |= 1 << port;
                    self.inputs.new_head_vc[lay.port_idx(node, port)] = vc as u8;
                }
            }
            let slot = &mut self.inputs.vc[i];
            slot.buffered += n;
            if slot.state == VcState::Active {
                let (op, ov) = (slot.out_port as usize, slot.out_vc as usize);
                if op == lay.local() || self.outputs.credits[lay.vc_idx(node, op, ov)] > 0 {
                    self.inputs.ready.set(node, port, vc);
                }
            }
        } else {
            let free = e.flag();
            let o = lay.vc_idx(node, port, vc);
            let was = self.outputs.credits[o];
            self.outputs.credits[o] += n;
            self.outputs.credit_sum[lay.port_idx(node, port)] += n;
            // Under `TailSent` the VC was freed when the tail was sent, and may already
            // hold the next message, which this credit may wake.
            if free && !self.tail_sent {
                self.outputs.free[lay.port_idx(node, port)] |= 1 << vc;
                return;
            }
            if free {
                // A message left the downstream ring; an output VC held for want of
                // a slot there is free now.
                self.outputs.in_ring[o] -= 1;
                let pi = lay.port_idx(node, port);
                if self.outputs.held[pi] >> vc & 1 != 0 {
                    self.outputs.held[pi] &= !(1 << vc);
                    self.outputs.free[pi] |= 1 << vc;
                }
            }
            if was == 0 {
                // Wake the VC that stalled on this output for want of credits.
                let h = self.outputs.holder[o] as usize;
                let (hp, hv) = lay.unslot(h);
                let s = &self.inputs.vc[lay.vc_idx(node, hp, hv)];
                if s.state == VcState::Active
                    && s.out_port as usize == port
                    && s.out_vc as usize == vc
                    && s.buffered > 0
                {
                    self.inputs.ready.set(node, hp, hv);
                }
            }
        }
    }

    /// Per-port occupancy (`experiment.observe.per_link`): a flit arriving in cycle `t`
    /// is buffered from `t`; a head arriving at an idle VC occupies it.
    #[inline]
    fn observe_arrival(&mut self, e: &LinkEvent, t: Cycle, win: &MeasureWindow) {
        if !e.is_credit() {
            let (node, port, vc, n, head) = (e.node(), e.port(), e.vc(), e.n(), e.flag());
            let lay = self.layout;
            let node = self.part.local(node);
            let pi = lay.port_idx(node, port);
            let (start, end) = win.span();
            let idle = head && self.inputs.vc[lay.vc_idx(node, port, vc)].state == VcState::Idle;
            let occ = &mut self.occ[pi];
            occ.flits.change(t, n as i64, start, end);
            if idle {
                occ.vcs.change(t, 1, start, end);
            }
        }
    }

    /// A message created at `node` enters its memory queue.
    #[inline]
    pub fn enqueue(&mut self, node: usize, m: PendingMsg) {
        self.dma.enqueue(node, m);
    }

    /// Whether `node` has anything to do next cycle even if nothing arrives.
    #[inline]
    pub fn busy(&self, n: usize) -> bool {
        self.ctrl.queued(n) > 0
            || self.inputs.wait_vc.ports(n) != 0
            || self.inputs.ready.ports(n) != 0
            || self.dma.can_inject(n)
    }

    /// Whether `n`'s injection channel may start a message at `t`: always, unless it
    /// feeds one message at a time (`router.ni.sequential_injection`), when its
    /// [`SequentialSource`] decides.
    #[inline]
    fn feed_open(&self, n: usize, t: Cycle) -> bool {
        self.source
            .as_ref()
            .is_none_or(|s| s.open(n, t, &self.layout, &self.inputs, &self.outputs))
    }

    /// One cycle of router `n` (steps 1–5 of the module documentation).
    #[inline(never)]
    pub fn step_node(
        &mut self,
        n: usize,
        t: Cycle,
        win: &impl Window,
        out: &mut PartOut<LinkEvent, RemoteHeader>,
        stats: &mut MsgStats,
    ) {
        let lay = self.layout;
        let local = lay.local();

        // 1–2. Headers into the controller's FIFO: network ports in order, then injection.
        let heads = std::mem::take(&mut self.inputs.new_head[n]);
        for port in crate::routing::selection::BitIter(heads) {
            let vc = self.inputs.new_head_vc[lay.port_idx(n, port)];
            self.ctrl.push(
                n,
                CtrlRequest {
                    port: port as u8,
                    vc,
                    kind: 0,
                    tag: 0,
                    arrived: t,
                },
            );
        }
        if self.dma.can_inject(n) && self.feed_open(n, t) {
            let (inputs, ctrl, live) = (&mut self.inputs, &mut self.ctrl, &mut self.flits_live);
            let mut source = self.source.as_mut();
            let one = source.is_some();
            let started = self.dma.start(n, t, one, |e, m| {
                let i = lay.vc_idx(n, local, e);
                let mi = inputs.cur(i);
                let slot = &mut inputs.vc[i];
                inputs.msg.occupy(
                    mi,
                    MsgHeader {
                        id: m.id,
                        dst: m.dst,
                        len: m.len,
                        created: m.created,
                        measured: m.measured,
                        class: m.class,
                        reply_len: m.reply_len,
                        request_latency: m.request_latency,
                        ..MsgHeader::default()
                    },
                );
                slot.left = m.len;
                slot.head = true;
                slot.buffered = m.len;
                if let Some(s) = source.as_deref_mut() {
                    s.started(n, t, m.len);
                }
                slot.state = VcState::Routing;
                *live += m.len as i64;
                ctrl.push(
                    n,
                    CtrlRequest {
                        port: local as u8,
                        vc: e as u8,
                        kind: 0,
                        tag: 0,
                        arrived: t,
                    },
                );
            });
            // Starting a message is progress for the deadlock watchdog.
            if started {
                self.last_move = t;
            }
        }

        // 3. Routing controller.
        if self.ctrl.queued(n) > 0 {
            let service = self.route_service;
            while let Some((req, done)) = self.ctrl.start(n, t, |_| service, |a| win.contains(a)) {
                let (ip, iv) = (req.port as usize, req.vc as usize);
                let i = lay.vc_idx(n, ip, iv);
                let mi = self.inputs.cur(i);
                let (slot, msg) = (&mut self.inputs.vc[i], self.inputs.msg.get_mut(mi));
                msg.hdr.ctrl_wait = msg.hdr.ctrl_wait.saturating_add((t - req.arrived) as u32);
                let here = NodeId(self.part.node(n));
                let (id, dst) = (msg.hdr.id, msg.hdr.dst);
                msg.route = if dst == here
                    && self
                        .routing
                        .delivers(&self.topology, here, dst, id, &msg.hdr.routing)
                {
                    Route {
                        adaptive_ports: 0,
                        adaptive_vcs: 0,
                        escape_port: PortId(local as u8),
                        escape_vcs: u64::MAX >> (64 - lay.dma),
                    }
                } else {
                    // Valiant/ROMM switch phase at the intermediate node (header state);
                    // UgalLocal reads this router's output credits at the source router,
                    // UgalGlobal its group's gateways' as the cycle began.
                    let (outputs, part) = (&self.outputs, &self.part);
                    self.routing
                        .route_msg_with(
                            &self.topology,
                            here,
                            dst,
                            id,
                            &mut msg.hdr.routing,
                            |r, p| {
                                // Groups are whole in a partition (checked in `new_part`).
                                debug_assert!(part.is_local(r.0), "router {} elsewhere", r.0);
                                let pi = lay.port_idx(part.local(r.0), p as usize);
                                outputs.credits_at_start(pi, t)
                            },
                        )
                        .in_class(msg.hdr.class, self.class_vcs)
                };
                slot.state = VcState::WaitVc;
                // A new message's head reaches the router over the injection channel.
                let done = if ip == local {
                    done + self.inj_latency
                } else {
                    done
                };
                msg.routed_at = done;
                slot.ready_at = done + self.vc_alloc_delay;
                self.inputs.wait_vc.set(n, ip, iv);
            }
        }

        // 4. Virtual-channel allocation.
        self.vca.clear_spec();
        if self.inputs.wait_vc.ports(n) != 0 {
            self.vca.allocate(
                n,
                t,
                &lay,
                &mut self.inputs,
                &mut self.outputs,
                &mut self.router_rng[n],
            );
        }

        // 5. Switch allocation and traversal.
        let phantoms = self.vca.spec().map_or(0, |s| s.failed_ports);
        if self.inputs.ready.ports(n) | phantoms != 0 {
            self.xbar
                .allocate(n, t, &lay, &self.inputs, &self.outputs, self.vca.spec());
            for i in 0..self.xbar.grants().len() {
                let g = self.xbar.grants()[i];
                if self.plain_links {
                    self.traverse::<true>(n, t, g, win, out, stats);
                } else {
                    self.traverse::<false>(n, t, g, win, out, stats);
                }
            }
        }
    }

    /// Moves the flits of one crossbar connection; `PLAIN`: `plain_links`, a constant
    /// so that the papers' networks carry none of the per-port link tables' work.
    #[inline(never)]
    fn traverse<const PLAIN: bool>(
        &mut self,
        n: usize,
        t: Cycle,
        g: crate::router::crossbar::Grant,
        win: &impl Window,
        out: &mut PartOut<LinkEvent, RemoteHeader>,
        stats: &mut MsgStats,
    ) {
        let lay = self.layout;
        let local = lay.local();
        let (ip, iv, op, ov) = (
            g.in_port as usize,
            g.in_vc as usize,
            g.out_port as usize,
            g.out_vc as usize,
        );
        let oidx = lay.vc_idx(n, op, ov);
        // The downstream input port the flits arrive on, and when.
        let (at, delay) = if PLAIN || op == local {
            (op, self.timing.flit_delay())
        } else {
            self.output_link(n, op)
        };
        let i = lay.vc_idx(n, ip, iv);
        let slot = &mut self.inputs.vc[i];
        // Flits of messages queued behind this one (`TailSent`) stay.
        let mut k = slot.buffered.min(slot.left).min(self.timing.width);
        if op != local {
            k = k.min(self.outputs.credits[oidx]);
        }
        debug_assert!(k > 0);
        let head = slot.head;
        slot.head = false;
        let slot_left_before = slot.left;
        slot.buffered -= k;
        slot.left -= k;
        let tail = slot.left == 0;
        // The message's ring position, before a tail moves the front on: only a head and
        // a tail look the message up (`InputBuffers::at`), so a body flit's hop touches
        // neither the slot tables nor the pool — on a small network, cache lines of every
        // router's state.
        let front = slot.front as usize;
        let buffered = slot.buffered;
        let mut promote = false;
        if tail {
            slot.state = VcState::Idle;
            if self.tail_sent && ip != local {
                slot.front = ((front + 1) % self.inputs.ring) as u16;
                if slot.queued > 0 {
                    slot.queued -= 1;
                    promote = true;
                }
            }
        }
        self.last_move = t;
        self.flit_moves += k as u64;
        if head {
            let mi = self.inputs.at(i, front);
            let msg = self.inputs.msg.get_mut(mi);
            let lost =
                t.saturating_sub(msg.routed_at + self.vc_alloc_delay + self.switch_alloc_delay);
            let lost = lost.min(u32::MAX as u64) as u32;
            if op == local {
                msg.hdr.eject_wait = msg.hdr.eject_wait.saturating_add(lost);
            } else {
                msg.hdr.blocking = msg.hdr.blocking.saturating_add(lost);
                msg.hdr.hops += 1;
                // MinAdapt: a head leaving on an escape VC keeps to escape VCs.
                self.routing.after_hop(&msg.route, ov, &mut msg.hdr.routing);
                if self.obs && win.contains(t) {
                    let pi = lay.port_idx(n, op);
                    let c = &mut self.link_heads[pi];
                    c[0] += 1;
                    c[1] += lost as u64;
                }
            }
            if ip == local {
                msg.hdr.injected = t;
            }
            // Source, transit routers and destination: every router the head leaves.
            stats.hop(msg.hdr.id, 0, t, self.part.node(n));
        }

        if self.obs && ip != local {
            // The input port's occupancy: k flits leave; a tail frees the VC, unless the
            // next message queued in it (`TailSent`) takes it over at once.
            let (start, end) = win.span();
            let pi = lay.port_idx(n, ip);
            let occ = &mut self.occ[pi];
            occ.flits.change(t, -(k as i64), start, end);
            if tail && !promote {
                occ.vcs.change(t, -1, start, end);
            }
        }
        // Out of flits, or out of credits (a returning credit wakes it again).
        if tail || buffered == 0 || (op != local && self.outputs.credits[oidx] == k) {
            self.inputs.ready.clear(n, ip, iv);
        }

        if op == local {
            let absorbed = t + self.timing.traversal + self.timing.eject;
            self.flits_live -= k as i64;
            if win.contains(absorbed) {
                self.flits_accepted += k as u64;
            }
            stats.accepted(absorbed, k as u64);
            if tail {
                let hdr = self.inputs.msg.get(self.inputs.at(i, front)).hdr;
                self.outputs.free[lay.port_idx(n, local)] |= 1 << ov;
                self.delivered += 1;
                if hdr.measured {
                    self.measured_delivered += 1;
                }
                stats.record(&hdr, absorbed);
                if hdr.reply_len > 0 {
                    self.create_reply(n, &hdr, absorbed, stats);
                }
            }
        } else {
            if !PLAIN {
                // UgalGlobal's view of this port as the cycle began.
                self.outputs.snapshot(lay.port_idx(n, op), t);
            }
            self.outputs.credits[oidx] -= k;
            self.outputs.credit_sum[lay.port_idx(n, op)] -= k;
            if win.contains(t) {
                self.link_flits[lay.port_idx(n, op)] += k as u64;
            }
            let to = self.down[n * lay.ports + op];
            debug_assert_ne!(to, u32::MAX, "output VCs exist only on existing ports");
            if head {
                let hdr = self.inputs.msg.get(self.inputs.at(i, front)).hdr;
                // The downstream VC's ring position for this message (`TailSent`).
                let q = if self.tail_sent {
                    self.outputs.in_ring[oidx] += 1;
                    let q = self.outputs.ring_pos[oidx];
                    self.outputs.ring_pos[oidx] = ((q as usize + 1) % self.inputs.ring) as u16;
                    q
                } else {
                    0
                };
                if out.is_local(to) {
                    let m = self
                        .inputs
                        .at(lay.vc_idx(self.part.local(to), at, ov), q as usize);
                    self.inputs.msg.occupy(m, hdr);
                } else {
                    out.remote(
                        to,
                        RemoteHeader {
                            node: to,
                            port: at as u8,
                            vc: ov as u8,
                            q,
                            hdr,
                        },
                    );
                }
            }
            if tail && self.tail_sent {
                // The next message's head needs a slot of the downstream ring: always
                // there for messages of the workload's lengths (`ring_slots`).
                if (self.outputs.in_ring[oidx] as usize) < self.inputs.ring {
                    self.outputs.free[lay.port_idx(n, op)] |= 1 << ov;
                } else {
                    self.outputs.held[lay.port_idx(n, op)] |= 1 << ov;
                }
            }
            out.send(
                t + delay,
                LinkEvent::flit(to, at as u8, ov as u8, k as u16, head),
            );
        }

        if tail {
            // The message has left this VC: its header went on with its head.
            self.inputs.msg.vacate(self.inputs.at(i, front));
        }
        if ip == local {
            if let Some(s) = &mut self.source {
                s.sent(n, t, slot_left_before, slot_left_before - k);
            }
            if tail {
                self.dma.release(n, iv);
            }
        } else {
            let from = self.up[n * lay.ports + ip];
            debug_assert_ne!(from, u32::MAX, "flits arrive only on existing ports");
            let (up_port, credit) = if PLAIN {
                (ip, self.timing.credit_latency)
            } else {
                self.input_link(n, ip)
            };
            out.send(
                t + credit,
                LinkEvent::credit(from, up_port as u8, iv as u8, k as u16, tail),
            );
        }

        if promote {
            // The next message in this VC reaches the front of the buffer: it joins the
            // routing controller's queue as a head arriving next cycle would.
            let mi = self.inputs.cur(i);
            let slot = &mut self.inputs.vc[i];
            slot.left = self.inputs.msg.get(mi).hdr.len;
            slot.head = true;
            slot.state = VcState::Routing;
            self.ctrl.push(
                n,
                CtrlRequest {
                    port: ip as u8,
                    vc: iv as u8,
                    kind: 0,
                    tag: 0,
                    arrived: t + 1,
                },
            );
        }
    }
}

/// Wormhole switching's own measurements: none beyond the per-message statistics and
/// link counts every mode keeps, from which its report block is computed.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct WormholeMeasures;

impl ModeMeasures for WormholeMeasures {
    fn merge(&mut self, _: &Self) {}
}

impl Mode for WormholeNet {
    fn report(_: ModeContext<'_>, reps: &[RepResult<WormholeMeasures>]) -> ModeReport {
        let count = |m: &MsgStats| m.count;
        let hops = |m: &MsgStats| m.hops_sum;
        let (blocking, blocking_ci) = mean_ci(&per_message(reps, &|m| m.blocking_sum, &hops));
        let mean =
            |f: &dyn Fn(&MsgStats) -> u64| avg(per_message(reps, f, &count).into_iter().map(Some));
        let k = reps.len().max(1) as f64;
        ModeReport::Wormhole(Wormhole {
            blocking_per_hop: blocking.is_finite().then_some(blocking),
            blocking_per_hop_ci95: blocking_ci,
            hops_mean: mean(&hops),
            ejection_wait: mean(&|m| m.eject_wait_sum),
            controller_wait_per_message: mean(&|m| m.ctrl_wait_sum),
            link_utilization_mean: reps.iter().map(|r| r.links.0).sum::<f64>() / k,
            link_utilization_max: reps.iter().map(|r| r.links.1).fold(0.0, f64::max),
        })
    }
}

impl Network for WormholeNet {
    type Event = LinkEvent;
    type Remote = RemoteHeader;
    type Measures = WormholeMeasures;
    const WORK_UNIT: &'static str = "flit move";
    fn work(&self) -> u64 {
        self.flit_moves
    }
    // Arrivals set per-port bits and counters; their order within a cycle is irrelevant.
    const SORT_EVENTS: bool = false;
    const PARTITIONABLE: bool = true;
    // Dimension order, ROMM and minimal adaptive routing (escape channels included);
    // Valiant's detours are not minimal: the elastic replay asks `Routing::is_minimal`.
    const MINIMAL_ROUTES: bool = true;
    // `routemu bench`: a 16×16 torus (two partitions of 128) gains 1.6× at 0.1
    // flits/node/cycle, an 8×8 one (two of 32) loses.
    const MIN_PARTITION_NODES: usize = 128;

    fn build(
        cfg: &HwConfig,
        machine: &Machine,
        seed: u64,
        rep: u32,
        part: &PartNodes,
    ) -> Result<Self> {
        WormholeNet::new_part(cfg, machine, seed, rep, part)
    }
    fn nodes(&self) -> usize {
        self.local
    }
    fn accept_remote(&mut self, r: RemoteHeader) {
        self.accept_header(r);
    }
    fn horizon(&self) -> Cycle {
        horizon_of(&self.timing, &self.port_delay)
    }
    // A flit is due downstream `traversal + latency` cycles after its grant, a credit
    // `credit_latency` after it is sent; a head's header is written into the downstream
    // slot with it, and nothing reads that slot before the head arrives.
    fn lookahead(&self) -> Cycle {
        self.port_delay
            .iter()
            .fold(
                self.timing.flit_delay().min(self.timing.credit_latency),
                |m, &(f, c)| m.min(f).min(c),
            )
            .max(1)
    }
    fn event_key(&self, _e: &LinkEvent) -> u64 {
        0
    }
    fn enqueue(&mut self, node: usize, m: PendingMsg) {
        WormholeNet::enqueue(self, node, m)
    }
    #[inline]
    fn deliver(
        &mut self,
        e: LinkEvent,
        t: Cycle,
        win: &MeasureWindow,
        _out: &mut PartOut<LinkEvent, RemoteHeader>,
        _stats: &mut MsgStats,
    ) {
        if self.obs {
            self.observe_arrival(&e, t, win);
        }
        WormholeNet::deliver(self, e)
    }
    #[inline]
    fn step_node(
        &mut self,
        n: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut PartOut<LinkEvent, RemoteHeader>,
        stats: &mut MsgStats,
    ) {
        WormholeNet::step_node(self, n, t, win, out, stats)
    }
    #[inline]
    fn busy(&self, n: usize) -> bool {
        WormholeNet::busy(self, n)
    }
    fn backlog(&self) -> usize {
        self.dma.backlog()
    }
    fn in_network(&self) -> bool {
        self.flits_live > 0
    }
    fn delivered(&self) -> u64 {
        self.delivered
    }
    fn measured_delivered(&self) -> u64 {
        self.measured_delivered
    }
    fn live_work(&self) -> i64 {
        self.flits_live
    }
    fn last_progress(&self) -> Cycle {
        self.last_move
    }
    fn explain_deadlock(&self, t: Cycle) -> String {
        watchdog::describe(self, t)
    }
    fn ctrl_stats(&self) -> &[CtrlStats] {
        &self.ctrl.stats
    }
    fn ctrl_servers(&self) -> usize {
        self.ctrl.servers()
    }
    fn mode_measures(&self, _start: Cycle, _end: Cycle) -> WormholeMeasures {
        WormholeMeasures
    }
    fn link_obs(&self, _start: Cycle, _end: Cycle, out: &mut Vec<LinkObs>) {
        if !self.obs {
            return;
        }
        let lay = self.layout;
        for node in 0..self.nodes() {
            for p in 0..lay.ports {
                let to = self.down[node * lay.ports + p];
                if to != u32::MAX {
                    let pi = lay.port_idx(node, p);
                    out.push(LinkObs {
                        from: self.part.node(node),
                        port: p as u8,
                        to,
                        busy: self.link_flits[pi],
                        flits: self.link_flits[pi],
                        headers: self.link_heads[pi][0],
                        blocking: self.link_heads[pi][1],
                    });
                }
            }
        }
    }
    fn port_obs(&self, start: Cycle, end: Cycle, out: &mut Vec<PortObs>) {
        if !self.obs {
            return;
        }
        let lay = self.layout;
        for node in 0..self.nodes() {
            for p in 0..lay.ports {
                if self.up[node * lay.ports + p] != u32::MAX {
                    let pi = lay.port_idx(node, p);
                    out.push(PortObs {
                        node: self.part.node(node),
                        port: p as u8,
                        flit_cycles: Some(self.occ[pi].flits.area_until(start, end)),
                        vc_cycles: self.occ[pi].vcs.area_until(start, end),
                    });
                }
            }
        }
    }
    fn measures(&self, start: Cycle, end: Cycle) -> NetMeasures {
        let lay = self.layout;
        let (mut sum, mut max, mut count) = (0u64, 0u64, 0usize);
        for node in 0..self.nodes() {
            for p in 0..lay.ports {
                if self.down[node * lay.ports + p] != u32::MAX {
                    let f = self.link_flits[lay.port_idx(node, p)];
                    sum += f;
                    max = max.max(f);
                    count += 1;
                }
            }
        }
        NetMeasures {
            flits_accepted: self.flits_accepted,
            link_busy: sum,
            link_busy_max: max,
            link_count: count,
            link_capacity: (end - start).max(1) as f64 * self.timing.width as f64,
        }
    }
}

#[cfg(test)]
mod ring_tests {
    use crate::config::HwConfig;
    use crate::engine::sim::Simulation;
    use crate::foundation::types::NodeId;
    use crate::switching::wormhole::{invariants, WormholeNet};

    /// hw/booksim-min-torus8.ron (`TailSent`, 8-flit buffers, 12-flit messages: rings of
    /// ⌈8/12⌉ + 1 = 2 message slots) with no traffic of its own.
    fn machine() -> HwConfig {
        let mut cfg = crate::config::load::parse_hw(
            include_str!("../../../hw/booksim-min-torus8.ron"),
            "hw/booksim-min-torus8.ron",
        )
        .unwrap();
        cfg.workload.rate = 1e-12;
        cfg
    }

    #[test]
    fn rings_hold_as_many_messages_as_the_shortest_fill_a_buffer_plus_one() {
        use crate::router::buffers::ring_slots;
        assert_eq!(ring_slots(8, 12), 2);
        assert_eq!(ring_slots(256, 12), 23);
        assert_eq!(ring_slots(256, 1), 257);
        assert_eq!(ring_slots(24, 12), 3);
        let sim = Simulation::<WormholeNet>::build(&machine(), 0).unwrap();
        assert_eq!(sim.net.inputs.ring, 2);
        // Network VCs of the 4 ports (4 VCs each) have rings, the 64 nodes' DMA engines
        // one slot each.
        let dma = sim.net.layout.dma;
        assert_eq!(sim.net.inputs.msg.len(), 64 * (4 * 4 * 2 + dma));
    }

    #[test]
    fn one_flit_messages_wait_for_a_ring_slot_and_arrive_intact() {
        let cfg = machine();
        let mut sim = Simulation::<WormholeNet>::build(&cfg, 0).unwrap();
        sim.record_deliveries();
        let mut sent = std::collections::BTreeSet::new();
        for i in 0..40u32 {
            for src in [0u32, 1] {
                sent.insert(sim.inject(NodeId(src), NodeId(3), 1 + i % 2 * 2));
            }
        }
        let mut held = false;
        for _ in 0..2_000 {
            sim.step();
            held |= sim.net.outputs.held.iter().any(|&h| h != 0);
            invariants::check(&sim, cfg.router.buffer_flits).unwrap();
        }
        assert!(held, "some output VC waited for a slot of a full ring");
        assert!(sim.run_until_empty(100_000), "messages never delivered");
        // Every message left every VC it crossed: no header stays behind in the pool.
        assert_eq!(sim.net.inputs.msg.present(), 0);
        let d = sim.stats.deliveries.take().unwrap();
        let got: std::collections::BTreeSet<_> = d.iter().map(|d| d.header.id).collect();
        assert_eq!(got, sent);
        for x in &d {
            assert_eq!(x.header.dst, NodeId(3));
            let i = x.header.id.seq() as u32;
            assert_eq!(x.header.len, 1 + i % 2 * 2, "{:?}", x.header);
        }
    }
}

//! Circuit switching (papers 000 and 001): the routing controllers, DMA engines and link
//! ends of every node, sequenced cycle by cycle. Where the hold, drop and adaptive
//! strategies differ is in `CircuitNet::busy_link` and in how the path is chosen
//! (`CircuitNet::first_candidate`); the link ends and their waiting FIFOs are in
//! [`links`], the measurements in [`measure`].
//!
//! # Timing (all in cycles; D = the controller's service times, ℓ = link latency)
//!
//! A controller activity that starts in cycle s and lasts D occupies its server in
//! cycles s..s+D−1 and acts at the end of cycle s+D−1; a signal it sends over a link is
//! at the next node in cycle s+D−1+ℓ. With ℓ = 1 a hop therefore costs exactly what the
//! papers count (D_verify + D_link_conn), and ℓ > 1 adds the wire.
//!
//! 1. **Set-up.** A message waits in memory for a free sending DMA engine (`router.dma`,
//!    default one per dimension). The engine hands its set-up request to the source's
//!    controller in the same cycle. At each node the request joins the controller's FIFO;
//!    when served, the controller verifies the wanted outgoing link (D_verify; the link is
//!    read in the last cycle of the verify). Free: it is claimed and connected (D_link_conn
//!    more on the same server, so the service is D_verify + D_link_conn) and the request
//!    crosses to the next node. Busy: see the strategies below. At the destination the
//!    request takes a free receiving DMA engine in the cycle it arrives (the DMA, not the
//!    controller, answers: the papers' controllers see M link requests per message); a
//!    busy receiver is a conflict like a busy link.
//! 2. **Ack.** The destination's DMA sends the ack back along the path: it reaches the
//!    source `ack` cycles later (`AckDelay::Total`) or `ack` cycles per hop
//!    (`AckDelay::PerHop`). It is a signal, not a controller activity.
//! 3. **Data.** The source DMA streams the L flits at `links.width` flits per cycle:
//!    ⌈L/W⌉ cycles from the ack's arrival; the tail reaches the destination
//!    ⌈L/W⌉ − 1 + h·ℓ cycles after the ack. A circuit is a fixed pipeline, so this phase is
//!    computed, not stepped flit by flit: two events (data sent, tail absorbed) stand for
//!    every flit, with the same observable times.
//! 4. **Release.** When the DMA has sent the last flit (and is free for the next
//!    message), the end-of-transmission signal joins the source controller's FIFO; each
//!    node releases its link (D_release, queued like any request) and forwards the signal
//!    over the link it just released. The message is complete when the last link is
//!    released and the tail absorbed; its latency runs from creation to that cycle + 1,
//!    so at zero load it is M(D_verify + D_link_conn) + D_ack + ⌈L/W⌉ + M·D_release
//!    with ℓ = 1 (paper 000 eq. 2); see [`crate::switching::zero_load::circuit`].
//!
//! # Strategies (`switching.strategy`)
//!
//! - **Hold**: e-cube (dimension-order) path; a request that finds its link busy waits in
//!   the FIFO of that link end and the verify's service ends. The release of the link
//!   connects the first waiter on the releasing controller (D_release + D_link_conn, paper
//!   000 Appendix A activity 4). A busy receiving DMA is waited for likewise.
//! - **Drop**: e-cube path; a busy link or receiver aborts the attempt: an abort signal
//!   travels back hop by hop, each node's controller releasing its link (D_release,
//!   queued), and when the source has released the first link the source backs off and
//!   then retries the same path from its controller's FIFO.
//! - **Adaptive**: at each node the candidates are the minimal links still to take. The
//!   controller verifies them one at a time in random order (each D_verify, on the same
//!   server without queueing again) and connects the first free one; if all are busy, or
//!   the receiver is, the attempt aborts as in drop.
//!
//! Back-off (`backoff`, `backoff_dist`) starts when the abort has released the source's
//! link (or at once when the first link was the busy one) and is drawn from the source's
//! random stream.
//!
//! # Determinism
//!
//! Events of one node in one cycle are applied in a fixed order (kind, then message id),
//! a node reads other nodes' state only as it was at the end of the previous cycle (the
//! peer end of a half-duplex link, the phase of the circuit holding it), and circuit
//! slots are not reused in the cycle they are freed, so the result does not depend on the
//! order in which nodes are stepped.
//!
//! # Partitions
//!
//! A partition owns its nodes' controllers, DMA engines, link ends and random streams,
//! and the records of the circuits whose signal is at one of its nodes; a record crosses
//! to another partition with the signal ([`record`]). What else crosses is explicit and
//! takes effect in the next cycle, as the previous-cycle reads above require: events,
//! the state of a half-duplex link end for its peer in the other partition, and the
//! announcement of a circuit's phase timeline (for classifying conflicts). A hold
//! deadlock is found on the union of the partitions' wait-for edges (`waits`).

pub mod links;
pub mod measure;
pub mod record;
mod report;
mod waits;

use crate::config::{AckDelay, BackoffDist, ConflictStrategy, Duplex, HwConfig, SwitchingConfig};
use crate::engine::machine::Machine;
use crate::engine::network::{NetMeasures, Network};
use crate::engine::partition::Outbox;
use crate::engine::partition::PartOut;
use crate::engine::partitioner::PartNodes;
use crate::engine::probe::observe::{LinkObs, LinkUnits};
use crate::engine::probe::MsgStats;
use crate::engine::waits::WaitEdge;
use crate::engine::window::MeasureWindow;
use crate::engine::window::Window;
use crate::foundation::error::{Error, Result};
use crate::foundation::limits::{collected_table, filled_table, zeroed_table};
use crate::foundation::rng::{below, stream, NodeRng};
use crate::foundation::types::{Cycle, NodeId, PortId};
use crate::router::buffers::MsgHeader;
use crate::router::controller::{ClassStats, Controllers, CtrlRequest, CtrlStats, CHAINED};
use crate::router::dma::{Dma, PendingMsg};
use crate::routing::dor::dor_step;
use crate::routing::selection::BitIter;
use crate::switching::delay;
use crate::topology::Topology;
use links::{Fifos, LinkEnds, FREE, NONE};
use measure::{overlap, CircuitStats, HopKind, Phase};
use record::{Circuit, CircuitRemote, Timeline};
use std::collections::HashMap;

/// What happens to a node in a cycle.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum EventKind {
    /// A controller activity reaches the last cycle of a stage (`aux`: the server).
    CtrlDone = 0,
    /// The peer end of a half-duplex link was freed (`aux`: this node's port).
    LinkFreed = 1,
    /// The tail of a circuit's data reaches its destination (`len`: its flits).
    TailArrive = 2,
    /// The source DMA has sent a circuit's last flit.
    DataDone = 3,
    /// The ack reaches the source.
    AckArrive = 4,
    /// The back-off of an aborted attempt is over.
    BackoffDone = 5,
    /// The end-of-transmission signal reaches a node on the path.
    ReleaseArrive = 6,
    /// An abort signal, travelling back, reaches a node on the path.
    AbortArrive = 7,
    /// A set-up request reaches the next node.
    SetupArrive = 8,
    /// A hold request's waiting time is up (`hold_timeout`).
    HoldTimeout = 9,
    /// The path is released and the tail is in: the message is complete.
    Complete = 10,
}

impl EventKind {
    /// Whether the signal carries its circuit's record to a node of another partition.
    #[inline]
    fn carries_record(self) -> bool {
        matches!(
            self,
            EventKind::SetupArrive
                | EventKind::AbortArrive
                | EventKind::ReleaseArrive
                | EventKind::AckArrive
        )
    }
}

/// A signal or timer delivered to a node.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct CircuitEvent {
    /// The circuit it concerns (message id; 0 for `CtrlDone` and `LinkFreed`).
    pub id: u64,
    /// Receiving node.
    pub node: u32,
    /// The circuit's record in the receiving partition; NONE when the record travels
    /// with the event from another partition (or there is none).
    pub circuit: u32,
    /// Message length (`TailArrive`).
    pub len: u32,
    /// What it is.
    pub kind: EventKind,
    /// Server or port, by kind.
    pub aux: u8,
}

impl crate::foundation::types::Located for CircuitEvent {
    #[inline]
    fn node(&self) -> u32 {
        self.node
    }
}

/// Where a partition's circuit routers send.
type Out = PartOut<CircuitEvent, CircuitRemote>;

/// Controller request kinds.
const REQ_SETUP: u8 = 1;
const REQ_RELEASE: u8 = 2;
const REQ_PEER_CONNECT: u8 = 3;

/// Why a request arrives at a controller: the arrival classes the controller counts
/// (what each found on arrival, its wait and service), to tell which arrivals do not see
/// time averages. Index = class number.
pub const ARRIVAL_CLASSES: [&str; crate::router::controller::CLASSES] = [
    "setup_new",
    "setup_retry",
    "setup_forwarded",
    "setup_inherited",
    "setup_chained",
    "release_source",
    "release_forwarded",
    "abort_release",
    "peer_connect",
];
/// A sending DMA engine starts a message.
const ARR_NEW: u8 = 0;
/// A set-up retried after a back-off.
const ARR_RETRY: u8 = 1;
/// A set-up forwarded after its verify and connect (or a peer connect).
const ARR_FWD: u8 = 2;
/// A set-up forwarded after inheriting its link in a hold hand-off, when the previous
/// holder's release does not follow to the same node (its path ended there).
const ARR_INHERITED: u8 = 3;
/// A set-up forwarded after a hand-off whose previous holder's release goes to the same
/// next node, D_link_conn cycles ahead of it: it finds that release queued or in
/// service (chained; the corrected wait prediction's special class).
const ARR_CHAINED: u8 = 4;
/// The end-of-transmission signal at the source.
const ARR_REL_SRC: u8 = 5;
/// The end-of-transmission signal forwarded along the path.
const ARR_REL_FWD: u8 = 6;
/// An abort signal releasing a link on its way back.
const ARR_ABORT: u8 = 7;
/// A waiter connecting a link freed by its half-duplex peer end.
const ARR_PEER: u8 = 8;

/// What a controller server is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    Idle,
    /// Verifying output `port` for the circuit.
    Verify,
    /// Connecting output `port` (claimed) for the circuit.
    Connect,
    /// Releasing the circuit's output `port`.
    Release,
    /// Connecting the released `port` to the waiter that inherits it.
    HandOff,
    /// Connecting `port` to a waiter after the peer end freed the link.
    PeerConnect,
}

#[derive(Clone, Copy, Debug)]
struct Server {
    act: Act,
    circuit: u32,
    /// The circuit that inherits the link in a hand-off.
    waiter: u32,
    /// Hand-off: the releasing circuit's release signal goes on to the node the waiter
    /// goes to next, so the waiter's set-up arrives right behind it.
    chained: bool,
    port: u8,
    arrived: Cycle,
    started: Cycle,
}

const IDLE_SERVER: Server = Server {
    act: Act::Idle,
    circuit: NONE,
    waiter: NONE,
    chained: false,
    port: 0,
    arrived: 0,
    started: 0,
};

/// The circuit-switched routers of a partition's nodes (all of the network on one
/// partition); per-node arrays by local index (`engine::partitioner`).
#[derive(Clone, Debug)]
pub struct CircuitNet {
    /// The network graph (whole).
    pub topology: Topology,
    strategy: ConflictStrategy,
    deg: usize,
    d_verify: Cycle,
    d_conn: Cycle,
    d_rel: Cycle,
    ack: AckDelay,
    backoff: Cycle,
    backoff_dist: BackoffDist,
    hold_timeout: Option<Cycle>,
    latency: Cycle,
    width: u64,
    /// The partition's nodes.
    part: PartNodes,
    /// [local node][port]: neighbour behind each output (u32::MAX: none).
    down: Vec<u32>,
    /// Link ends and their waiters.
    pub ends: LinkEnds,
    /// Physical links this partition accounts for (half duplex: a pair of ends counts
    /// once, at the end with the lower global index).
    pub n_links: usize,
    /// Routing controllers.
    pub ctrl: Controllers,
    servers: Vec<Server>,
    /// Sending DMA engines and the memory queues.
    pub dma: Dma,
    rx_idle: Vec<u64>,
    rx_all: u64,
    rx_waiters: Fifos,
    circuits: Vec<Circuit>,
    next: Vec<u32>,
    free: Vec<u32>,
    free_later: Vec<u32>,
    /// Records that came from another partition, by message id, until their event is
    /// delivered.
    arrivals: HashMap<u64, u32>,
    /// Timelines of circuits that reached their destination and are not complete.
    timelines: HashMap<u64, Timeline>,
    /// This partition's own announcements of the current cycle (applied from the next).
    announced: Vec<CircuitRemote>,
    last_t: Cycle,
    rng: Vec<NodeRng>,
    /// Circuits started here minus circuits completed here (partitions' counts add up
    /// to the circuits in progress).
    pub live: i64,
    /// Circuits waiting at link ends (hold), counted like `live`.
    pub link_waiting: i64,
    /// Hold requests that gave up waiting (whole run).
    pub timeouts_total: u64,
    /// Measurements.
    pub stats: CircuitStats,
    /// Flits absorbed at destinations inside the window.
    pub flits_accepted: u64,
    /// Messages completed (all).
    pub delivered: u64,
    /// Measured messages completed.
    pub measured_delivered: u64,
    /// Whether the network is half duplex.
    pub half_duplex: bool,
    last_step: Cycle,
    /// Per-link observation (`experiment.observe.per_link`); the arrays below are
    /// empty when it is off.
    obs: bool,
    /// Per local end: set-up requests that verified it inside the window.
    obs_requests: Vec<u64>,
    /// Per local end: of those, the ones that found it held (conflicts).
    obs_conflicts: Vec<u64>,
    /// Per local end: flits of the circuits that released it inside the window (a
    /// circuit's data crosses every link of its path once).
    obs_flits: Vec<u64>,
}

impl CircuitNet {
    /// Builds the routers of every node of a validated circuit-switched machine.
    pub fn new(cfg: &HwConfig, machine: &Machine, seed: u64, rep: u32) -> Result<Self> {
        let all = PartNodes::whole(machine.topology.nodes());
        Self::new_part(cfg, machine, seed, rep, &all)
    }

    /// Builds the routers of the partition `part` of a validated circuit-switched
    /// machine.
    pub fn new_part(
        cfg: &HwConfig,
        machine: &Machine,
        seed: u64,
        rep: u32,
        part: &PartNodes,
    ) -> Result<Self> {
        let SwitchingConfig::Circuit {
            strategy,
            backoff,
            backoff_dist,
            ack,
            hold_timeout,
        } = cfg.switching
        else {
            return Err(Error::config(
                "internal: a circuit network was asked to run a non-circuit machine",
            ));
        };
        let topology = machine.topology.clone();
        let deg = topology.degree();
        let nodes = part.len();
        let half = cfg.links.duplex == Duplex::Half;
        // Every table whose size grows with the network is allocated fallibly: a run let
        // through with --force that does not fit ends in a message, not an abort.
        let n_ends = nodes.checked_mul(deg);
        let mut down = filled_table(n_ends, u32::MAX, "circuit downstream node")?;
        let mut peer = filled_table(n_ends, NONE, "circuit link peer")?;
        let mut n_links = 0;
        for (li, u) in part.iter().enumerate() {
            let u = u as usize;
            for p in 0..deg {
                let Some(v) = topology.neighbor(NodeId(u as u32), PortId(p as u8)) else {
                    continue;
                };
                let e = li * deg + p;
                down[e] = v.0;
                let g = u * deg + p;
                let q = topology
                    .peer_port(PortId(p as u8))
                    .filter(|_| half)
                    .map(|q| (v.idx() * deg + q.idx()) as u32);
                if let Some(q) = q {
                    peer[e] = q;
                }
                if q.is_none_or(|q| g < q as usize) {
                    n_links += 1;
                }
            }
        }
        let dma = machine.dma as usize;
        let servers = cfg.router.controller.servers as usize;
        let c = &cfg.router.controller;
        let obs_len = if cfg.experiment.observe.per_link {
            n_ends
        } else {
            Some(0)
        };
        Ok(CircuitNet {
            strategy,
            deg,
            d_verify: c.verify,
            d_conn: c.link_conn,
            d_rel: c.release,
            ack,
            backoff,
            backoff_dist,
            hold_timeout,
            latency: cfg.links.latency,
            width: cfg.links.width as u64,
            part: part.clone(),
            down,
            ends: LinkEnds::new(peer, part, deg)?,
            n_links,
            // A circuit has at most one request queued anywhere. At a node, a set-up
            // request holds the link it came in on (or is a local engine's), and a release
            // or connect request concerns an output the circuit holds; links, outputs and
            // engines are each held by one circuit, so 2·degree + engines bound the queue.
            ctrl: Controllers::new(nodes, servers, 2 * deg + dma + 2)?,
            servers: filled_table(
                nodes.checked_mul(servers),
                IDLE_SERVER,
                "circuit controller server",
            )?,
            dma: Dma::new(nodes, dma)?,
            rx_idle: filled_table(Some(nodes), u64::MAX >> (64 - dma), "receiving engine")?,
            rx_all: u64::MAX >> (64 - dma),
            rx_waiters: Fifos::new(nodes)?,
            circuits: Vec::new(),
            next: Vec::new(),
            free: Vec::new(),
            free_later: Vec::new(),
            arrivals: HashMap::new(),
            timelines: HashMap::new(),
            announced: Vec::new(),
            last_t: 0,
            rng: collected_table(
                nodes,
                part.iter().map(|n| stream(seed, rep, n, 2)),
                "circuit random stream",
            )?,
            live: 0,
            link_waiting: 0,
            timeouts_total: 0,
            stats: CircuitStats::default(),
            flits_accepted: 0,
            delivered: 0,
            measured_delivered: 0,
            half_duplex: half,
            last_step: 0,
            obs: cfg.experiment.observe.per_link,
            obs_requests: zeroed_table(obs_len, "per-link set-up requests")?,
            obs_conflicts: zeroed_table(obs_len, "per-link conflicts")?,
            obs_flits: zeroed_table(obs_len, "per-link flits")?,
            topology,
        })
    }

    /// A new cycle: slots freed in an earlier cycle become reusable (never in the cycle
    /// they were freed, so that a node reading "the holder as of last cycle" never sees
    /// a new circuit in an old slot), and the last cycle's announcements take effect.
    #[inline]
    fn tick(&mut self, t: Cycle) {
        if t != self.last_t {
            self.last_t = t;
            self.free.append(&mut self.free_later);
            for r in std::mem::take(&mut self.announced) {
                self.learn(r);
            }
        }
    }

    /// Applies an announcement (a timeline or its withdrawal).
    fn learn(&mut self, r: CircuitRemote) {
        match r {
            CircuitRemote::Reached(tl) => {
                self.timelines.insert(tl.id, tl);
            }
            CircuitRemote::Completed(id) => {
                self.timelines.remove(&id);
            }
            CircuitRemote::Record(_) | CircuitRemote::End { .. } => {}
        }
    }

    /// Announces `r` to every partition, this one included (from the next cycle).
    fn announce(&mut self, r: CircuitRemote, out: &mut Out) {
        out.broadcast(&r);
        self.announced.push(r);
    }

    /// The phase of circuit `id` at the end of cycle t − 1, as a node sees it in cycle t.
    fn phase_before(&self, id: u64, t: Cycle) -> Phase {
        match self.timelines.get(&id) {
            Some(tl) => tl.phase_at(t - 1),
            None => Phase::Setup,
        }
    }

    fn place(&mut self, rec: Circuit) -> u32 {
        if let Some(c) = self.free.pop() {
            self.circuits[c as usize] = rec;
            c
        } else {
            self.circuits.push(rec);
            self.next.push(NONE);
            (self.circuits.len() - 1) as u32
        }
    }

    fn alloc(&mut self, msg: PendingMsg) -> u32 {
        match self.free.pop() {
            Some(c) => {
                // Reuse the slot's path vectors.
                let old = &mut self.circuits[c as usize];
                let (mut nodes, mut ports) = (
                    std::mem::take(&mut old.nodes),
                    std::mem::take(&mut old.ports),
                );
                nodes.clear();
                ports.clear();
                *old = Circuit::new(msg);
                old.nodes = nodes;
                old.ports = ports;
                c
            }
            None => self.place(Circuit::new(msg)),
        }
    }

    /// Number of nodes of the partition.
    pub fn nodes(&self) -> usize {
        self.rng.len()
    }

    /// Local index of node `node`.
    #[inline]
    fn li(&self, node: usize) -> usize {
        self.part.local(node as u32)
    }

    /// Index in `servers` of the controller's server `s` at the node of local index `li`.
    #[inline]
    fn server_idx(&self, li: usize, s: usize) -> usize {
        li * self.ctrl.servers() + s
    }

    /// Local index of the end at output `port` of node `node`.
    #[inline]
    fn end_of(&self, node: usize, port: usize) -> usize {
        self.part.local(node as u32) * self.deg + port
    }

    /// Sends `kind` about circuit `c` to `node` for cycle `at`; when `node` is in
    /// another partition the record goes along.
    fn pass(&mut self, out: &mut Out, at: Cycle, node: u32, c: u32, kind: EventKind) {
        let id = self.circuits[c as usize].id();
        let circuit = if out.is_local(node) {
            c
        } else {
            let left = Circuit::new(self.circuits[c as usize].msg);
            let rec = std::mem::replace(&mut self.circuits[c as usize], left);
            self.free_later.push(c);
            out.remote(node, CircuitRemote::Record(Box::new(rec)));
            NONE
        };
        out.send(
            at,
            CircuitEvent {
                id,
                node,
                circuit,
                len: 0,
                kind,
                aux: 0,
            },
        );
    }

    /// A timer of circuit `c` at its own node.
    fn timer(&self, out: &mut Out, at: Cycle, node: usize, c: u32, kind: EventKind) {
        out.send(
            at,
            CircuitEvent {
                id: self.circuits[c as usize].id(),
                node: node as u32,
                circuit: c,
                len: 0,
                kind,
                aux: 0,
            },
        );
    }

    fn set_phase(&mut self, c: u32, p: Phase, t: Cycle, win: &MeasureWindow) {
        self.account(c, t, win);
        self.circuits[c as usize].phase = p;
    }

    /// Adds the link-cycles circuit `c` held since its last accounting.
    #[inline]
    fn account(&mut self, c: u32, t: Cycle, win: &MeasureWindow) {
        let k = &mut self.circuits[c as usize];
        if k.held > 0 {
            self.stats.held[k.phase as usize] +=
                k.held as u64 * overlap(k.acct_t, t, win.start, win.end);
        }
        k.acct_t = t;
    }

    /// Sets the holder of local end `e` in cycle `t`, telling a peer end in another
    /// partition.
    fn set_end(&mut self, e: usize, t: Cycle, holder: u64, out: &mut Out) {
        self.ends.set(e, t, holder);
        if let Some(p) = self.ends.remote_peer(e) {
            let end = self.ends.global(e);
            let view = self.ends.view(e);
            out.remote(p / self.deg as u32, CircuitRemote::End { end, view });
        }
    }

    /// Circuit `c` takes output `port` of `node` in cycle `t`.
    fn claim(
        &mut self,
        c: u32,
        node: usize,
        port: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
    ) {
        let e = self.end_of(node, port);
        self.set_end(e, t, self.circuits[c as usize].id(), out);
        self.take_link(c, node, port, t, win);
    }

    /// Circuit `c` holds output `port` of `node` from cycle `t` on (its path and
    /// accounting; the end itself is set by the caller).
    fn take_link(&mut self, c: u32, node: usize, port: usize, t: Cycle, win: &MeasureWindow) {
        self.account(c, t, win);
        let k = &mut self.circuits[c as usize];
        k.held += 1;
        k.nodes.push(node as u32);
        k.ports.push(port as u8);
    }

    /// Undoes the claim circuit `c` made last (a lost race), in cycle `t`.
    fn unclaim(&mut self, c: u32, t: Cycle, win: &MeasureWindow, out: &mut Out) {
        self.account(c, t, win);
        let k = &mut self.circuits[c as usize];
        let (n, p) = (
            k.nodes.pop().expect("claimed"),
            k.ports.pop().expect("claimed"),
        );
        k.held -= 1;
        let e = self.end_of(n as usize, p as usize);
        self.free_end(e, t, t, win, out);
    }

    /// Frees local end `e` in cycle `t`; it counts as busy until cycle `busy_to`
    /// (exclusive).
    fn free_end(&mut self, e: usize, t: Cycle, busy_to: Cycle, win: &MeasureWindow, out: &mut Out) {
        self.ends.busy_cycles[e] += overlap(self.ends.since[e], busy_to, win.start, win.end);
        self.set_end(e, t, FREE, out);
    }

    fn sample_backoff(&mut self, node: usize) -> Cycle {
        let li = self.li(node);
        delay(&mut self.rng[li], self.backoff_dist, self.backoff)
    }

    /// The first link a set-up request verifies at `node`: the e-cube / dimension-order
    /// port (hold, drop), or a random minimal port (adaptive, which keeps the others as
    /// candidates).
    fn first_candidate(&mut self, c: u32, node: usize) -> usize {
        let k = &self.circuits[c as usize];
        let (here, dst) = (NodeId(node as u32), k.msg.dst);
        match self.strategy {
            ConflictStrategy::Hold | ConflictStrategy::Drop => {
                dor_step(&self.topology, here, dst, k.msg.id.src()).0.idx()
            }
            ConflictStrategy::Adaptive => {
                let set = self.topology.minimal_ports(here, dst);
                let cand = set.as_raw_slice()[0];
                self.circuits[c as usize].cand = cand;
                self.pick_candidate(c, node)
            }
        }
    }

    /// Adaptive: takes a random port among the circuit's remaining candidates.
    fn pick_candidate(&mut self, c: u32, node: usize) -> usize {
        let cand = self.circuits[c as usize].cand;
        let li = self.li(node);
        let i = below(&mut self.rng[li], cand.count_ones() as u64) as usize;
        let p = BitIter(cand).nth(i).expect("a candidate is left");
        self.circuits[c as usize].cand &= !(1u64 << p);
        p
    }

    /// The global node of local server index `si`.
    #[inline]
    fn server_node(&self, si: usize) -> (usize, usize) {
        let per = self.ctrl.servers();
        (self.part.node(si / per) as usize, si % per)
    }

    /// Runs stage completions of server `si` (local node × servers + server) due in
    /// cycle `t` (`end` is the last cycle of the stage just begun).
    #[inline]
    fn stage(
        &mut self,
        si: usize,
        end: Cycle,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let (node, s) = self.server_node(si);
        if end == t {
            self.stage_done(node, s, t, win, out, stats);
        } else {
            out.send(
                end,
                CircuitEvent {
                    id: 0,
                    node: node as u32,
                    circuit: NONE,
                    len: 0,
                    kind: EventKind::CtrlDone,
                    aux: s as u8,
                },
            );
        }
    }

    /// Server `si` (local node × servers + server) starts serving `req` in cycle `t`.
    fn begin(
        &mut self,
        si: usize,
        req: CtrlRequest,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let c = req.tag;
        let (node, _) = self.server_node(si);
        // The request's queueing is the circuit's now: its record may move on before
        // the activity ends (a release handing its link off).
        self.circuits[c as usize].ctrl_wait += t - req.arrived;
        let (act, port, dur) = match req.kind {
            REQ_SETUP => (Act::Verify, self.first_candidate(c, node), self.d_verify),
            REQ_RELEASE => {
                let k = &self.circuits[c as usize];
                let i = if k.aborting {
                    k.ports.len() - 1
                } else {
                    k.rel_next as usize
                };
                (Act::Release, k.ports[i] as usize, self.d_rel)
            }
            _ => {
                let k = &self.circuits[c as usize];
                let port = *k.ports.last().expect("claimed") as usize;
                // The claim was made when the peer's release was seen; whether the peer
                // end claimed in that same cycle too is known one cycle later, so the
                // connect cannot end in the cycle of its claim (with D_link_conn = 1 it
                // then takes a cycle more).
                let claimed = self.ends.since[self.end_of(node, port)];
                (
                    Act::PeerConnect,
                    port,
                    self.d_conn.max(claimed + 2 - t.min(claimed + 1)),
                )
            }
        };
        self.servers[si] = Server {
            act,
            circuit: c,
            waiter: NONE,
            chained: false,
            port: port as u8,
            arrived: req.arrived,
            started: t,
        };
        self.stage(si, t + dur - 1, t, win, out, stats);
    }

    /// Ends the activity of server `s` of `node` in cycle `t` (free from t + 1).
    fn end_activity(&mut self, node: usize, s: usize, t: Cycle, win: &MeasureWindow) {
        let li = self.li(node);
        let si = self.server_idx(li, s);
        let sv = self.servers[si];
        let measured = win.contains(sv.arrived);
        let (wait, _) = self
            .ctrl
            .finish(li, s, t + 1, sv.arrived, sv.started, measured);
        if measured {
            let _ = self.stats.ctrl_wait.record(wait);
        }
        self.servers[si] = IDLE_SERVER;
    }

    /// The stage of server `s` of `node` ends in this cycle `t`.
    fn stage_done(
        &mut self,
        node: usize,
        s: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let si = self.server_idx(self.li(node), s);
        let sv = self.servers[si];
        let (c, port) = (sv.circuit, sv.port as usize);
        let e = self.end_of(node, port);
        match sv.act {
            Act::Idle => {}
            Act::Verify => {
                let measured = win.contains(t);
                let free = self.ends.free_for_new(e, t);
                if measured {
                    let k = &self.circuits[c as usize];
                    let kind = match k.ports.last() {
                        None => HopKind::First,
                        Some(&p) if p as usize == port => HopKind::Straight,
                        Some(_) => HopKind::Turn,
                    };
                    let (hop, retry) = (k.ports.len(), k.aborts > 0);
                    self.stats.request(hop, kind, retry, !free);
                    if self.obs {
                        self.obs_requests[e] += 1;
                        self.obs_conflicts[e] += u64::from(!free);
                    }
                }
                if free {
                    self.claim(c, node, port, t, win, out);
                    self.servers[si].act = Act::Connect;
                    self.stage(si, t + self.d_conn, t, win, out, stats);
                } else {
                    if measured {
                        let b = self.ends.blocker(e, t);
                        // A free end with a queue means the queue's head is about to take it.
                        let phase = if b == FREE {
                            Phase::Setup
                        } else {
                            self.phase_before(b, t)
                        };
                        self.stats.conflicts[phase as usize] += 1;
                    }
                    self.busy_link(node, s, t, win, out, stats);
                }
            }
            Act::Connect => {
                if self.lost_race(e, node, t) {
                    self.unclaim(c, t, win, out);
                    self.busy_link(node, s, t, win, out, stats);
                } else {
                    self.end_activity(node, s, t, win);
                    self.forward(c, node, port, t, out, ARR_FWD);
                }
            }
            Act::Release => {
                self.release_link(c, t, win);
                if self.ends.waiters.len(e) > 0 {
                    // Hand the link to the first waiter: release + connect (activity 4).
                    // The link never becomes free, so the peer end sees no change but
                    // the holder's.
                    let w = self
                        .ends
                        .waiters
                        .pop_front(e, &self.next)
                        .expect("a waiter");
                    self.stop_waiting(w, t);
                    self.set_end(e, t, self.circuits[w as usize].id(), out);
                    self.take_link(w, node, port, t + 1, win);
                    let k = &self.circuits[c as usize];
                    self.servers[si].chained = !k.aborting && (k.rel_next as usize) < k.nodes.len();
                    self.servers[si].act = Act::HandOff;
                    self.servers[si].waiter = w;
                    self.stage(si, t + self.d_conn, t, win, out, stats);
                } else {
                    self.free_end(e, t, t + 1, win, out);
                    let peer = self.ends.peer[e];
                    if peer != NONE {
                        let p = peer as usize;
                        out.send(
                            t + 1,
                            CircuitEvent {
                                id: 0,
                                node: (p / self.deg) as u32,
                                circuit: NONE,
                                len: 0,
                                kind: EventKind::LinkFreed,
                                aux: (p % self.deg) as u8,
                            },
                        );
                    }
                    self.end_activity(node, s, t, win);
                }
                self.after_release(c, node, t, out, stats);
            }
            Act::HandOff => {
                let w = sv.waiter;
                self.end_activity(node, s, t, win);
                let class = if sv.chained {
                    ARR_CHAINED
                } else {
                    ARR_INHERITED
                };
                self.forward(w, node, port, t, out, class);
            }
            Act::PeerConnect => {
                if self.lost_race(e, node, t) {
                    self.unclaim(c, t, win, out);
                    self.end_activity(node, s, t, win);
                    self.ends.waiters.push_front(e, c, &mut self.next);
                    self.start_waiting(c, e, node, t, out);
                } else {
                    self.end_activity(node, s, t, win);
                    self.forward(c, node, port, t, out, ARR_FWD);
                }
            }
        }
    }

    fn lost_race(&self, e: usize, node: usize, t: Cycle) -> bool {
        match self.ends.peer[e] {
            NONE => false,
            p => self.ends.lost_race(e, node as u32, p / self.deg as u32, t),
        }
    }

    fn start_waiting(&mut self, c: u32, e: usize, node: usize, t: Cycle, out: &mut Out) {
        let k = &mut self.circuits[c as usize];
        k.waiting_at = e as u32;
        k.wait_since = t;
        self.link_waiting += 1;
        if let Some(h) = self.hold_timeout {
            self.timer(out, t + h, node, c, EventKind::HoldTimeout);
        }
    }

    fn stop_waiting(&mut self, c: u32, t: Cycle) {
        let k = &mut self.circuits[c as usize];
        k.waiting_at = NONE;
        k.link_wait += t - k.wait_since;
        self.link_waiting -= 1;
    }

    /// The link (or receiver) the request on server `s` wanted is busy: the strategy
    /// decides.
    fn busy_link(
        &mut self,
        node: usize,
        s: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let si = self.server_idx(self.li(node), s);
        let sv = self.servers[si];
        let c = sv.circuit;
        match self.strategy {
            ConflictStrategy::Hold => {
                let e = self.end_of(node, sv.port as usize);
                self.ends.waiters.push_back(e, c, &mut self.next);
                self.start_waiting(c, e, node, t, out);
                self.end_activity(node, s, t, win);
            }
            ConflictStrategy::Drop => {
                self.end_activity(node, s, t, win);
                self.abort(c, node, t, out);
            }
            ConflictStrategy::Adaptive => {
                if self.circuits[c as usize].cand != 0 {
                    // Next candidate: one more verify on the same server, no re-queueing.
                    let p = self.pick_candidate(c, node);
                    self.servers[si].act = Act::Verify;
                    self.servers[si].port = p as u8;
                    self.stage(si, t + self.d_verify, t, win, out, stats);
                } else {
                    self.end_activity(node, s, t, win);
                    self.abort(c, node, t, out);
                }
            }
        }
    }

    /// Circuit `c` connected output `port` of `node` (end of cycle `t`): the set-up
    /// request crosses the link.
    /// `class` is the request's arrival class at the next node's controller.
    fn forward(&mut self, c: u32, node: usize, port: usize, t: Cycle, out: &mut Out, class: u8) {
        let to = self.down[self.end_of(node, port)];
        self.circuits[c as usize].arrive_class = class;
        self.pass(out, t + self.latency, to, c, EventKind::SetupArrive);
    }

    /// The attempt of circuit `c`, now at `node`, aborts at the end of cycle `t`.
    fn abort(&mut self, c: u32, node: usize, t: Cycle, out: &mut Out) {
        let k = &mut self.circuits[c as usize];
        k.aborts += 1;
        k.aborting = true;
        self.abort_moves_back(c, node, t, out);
    }

    /// An aborting circuit at `node` (end of cycle `t`): the abort signal goes back to
    /// the node holding its last link, or, with no link left, the source backs off.
    fn abort_moves_back(&mut self, c: u32, node: usize, t: Cycle, out: &mut Out) {
        match self.circuits[c as usize].nodes.last() {
            Some(&back) => self.pass(out, t + self.latency, back, c, EventKind::AbortArrive),
            None => {
                let b = self.sample_backoff(node);
                self.timer(out, t + 1 + b, node, c, EventKind::BackoffDone);
            }
        }
    }

    /// Circuit `c` gives up the link it is releasing at the end of cycle `t` (the caller
    /// frees or hands off the end).
    fn release_link(&mut self, c: u32, t: Cycle, win: &MeasureWindow) {
        self.account(c, t + 1, win);
        let k = &mut self.circuits[c as usize];
        k.held -= 1;
        if k.aborting {
            k.nodes.pop();
            k.ports.pop();
        } else {
            if self.obs && win.contains(t) {
                let i = k.rel_next as usize;
                let e = self.part.local(k.nodes[i]) * self.deg + k.ports[i] as usize;
                self.obs_flits[e] += k.msg.len as u64;
            }
            k.rel_next += 1;
        }
    }

    /// The release signal moves on after `node` released its link.
    fn after_release(
        &mut self,
        c: u32,
        node: usize,
        t: Cycle,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let k = &self.circuits[c as usize];
        if k.aborting {
            self.abort_moves_back(c, node, t, out);
        } else if (k.rel_next as usize) < k.nodes.len() {
            let to = k.nodes[k.rel_next as usize];
            self.pass(out, t + self.latency, to, c, EventKind::ReleaseArrive);
        } else {
            self.released(c, node, t + 1, t, out, stats);
        }
    }

    /// Circuit `c`'s last link is free from cycle `rel` on (decided in cycle `t` at
    /// `node`): it completes now, or when its tail arrives if that is later.
    fn released(
        &mut self,
        c: u32,
        node: usize,
        rel: Cycle,
        t: Cycle,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let tail = self.circuits[c as usize].tail_at;
        if tail <= t {
            self.complete(c, rel.max(tail), out, stats);
        } else {
            self.timer(out, tail, node, c, EventKind::Complete);
        }
    }

    /// Circuit `c`'s set-up request reached its destination `node` in cycle `t`.
    fn at_destination(
        &mut self,
        c: u32,
        node: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        waited: bool,
    ) {
        if !waited && win.contains(t) {
            self.stats.dma_requests += 1;
        }
        let li = self.li(node);
        if self.rx_idle[li] != 0 {
            let e = self.rx_idle[li].trailing_zeros();
            self.rx_idle[li] &= !(1 << e);
            self.set_phase(c, Phase::Ack, t, win);
            let k = &mut self.circuits[c as usize];
            k.reached_at = t;
            k.hops = k.nodes.len() as u32;
            let delay = crate::switching::zero_load::ack_cycles(self.ack, k.hops as u64);
            let data = (k.msg.len as u64).div_ceil(self.width);
            let tl = Timeline {
                id: k.id(),
                reached: t,
                ack: t + delay,
                sent: t + delay + data,
            };
            let src = k.msg.id.src().0;
            self.announce(CircuitRemote::Reached(tl), out);
            self.pass(out, t + delay, src, c, EventKind::AckArrive);
            return;
        }
        if win.contains(t) {
            self.stats.dma_conflicts += 1;
        }
        match self.strategy {
            ConflictStrategy::Hold => {
                self.rx_waiters.push_back(li, c, &mut self.next);
                self.circuits[c as usize].wait_since = t;
            }
            ConflictStrategy::Drop | ConflictStrategy::Adaptive => self.abort(c, node, t, out),
        }
    }

    /// Circuit `c` is complete; its latency runs to `done`.
    fn complete(&mut self, c: u32, done: Cycle, out: &mut Out, stats: &mut MsgStats) {
        let k = &self.circuits[c as usize];
        let hdr = MsgHeader {
            id: k.msg.id,
            dst: k.msg.dst,
            len: k.msg.len,
            hops: k.hops.min(u16::MAX as u32) as u16,
            created: k.msg.created,
            injected: k.engine_at,
            measured: k.msg.measured,
            ctrl_wait: k.ctrl_wait.min(u32::MAX as u64) as u32,
            ..MsgHeader::default()
        };
        stats.record(&hdr, done);
        if stats.logs_hops() {
            for (i, &n) in k.nodes.iter().enumerate() {
                stats.hop(k.msg.id, 0, i as Cycle, n);
            }
            stats.hop(k.msg.id, 0, k.nodes.len() as Cycle, k.msg.dst.0);
        }
        if k.msg.measured {
            self.measured_delivered += 1;
            self.stats.record(
                [
                    k.reached_at - k.engine_at,
                    k.ack_at - k.reached_at,
                    k.sent_at - k.ack_at,
                    done - k.sent_at,
                ],
                k.aborts,
                k.link_wait,
                k.ctrl_wait,
            );
        }
        let id = k.id();
        self.announce(CircuitRemote::Completed(id), out);
        self.delivered += 1;
        self.live -= 1;
        self.free_later.push(c);
    }

    /// Queues a `kind` request of circuit `c` at `node`'s controller in cycle `t`,
    /// counted as arrival class `class`.
    fn push_request(&mut self, node: usize, c: u32, kind: u8, t: Cycle, class: u8) {
        let li = self.li(node);
        let class = if class == ARR_CHAINED {
            class | CHAINED
        } else {
            class
        };
        self.ctrl.push_class(
            li,
            CtrlRequest {
                port: 0,
                vc: 0,
                kind,
                tag: c,
                arrived: t,
            },
            class,
        );
    }

    /// Applies one event in cycle `t`.
    pub fn apply(
        &mut self,
        ev: CircuitEvent,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        self.tick(t);
        let node = ev.node as usize;
        let c = if ev.circuit == NONE && ev.kind.carries_record() {
            self.arrivals
                .remove(&ev.id)
                .expect("a record travels with its signal")
        } else {
            ev.circuit
        };
        match ev.kind {
            EventKind::CtrlDone => self.stage_done(node, ev.aux as usize, t, win, out, stats),
            EventKind::LinkFreed => {
                let e = self.end_of(node, ev.aux as usize);
                if self.ends.waiters.len(e) > 0 && self.ends.blocker(e, t) == FREE {
                    let w = self
                        .ends
                        .waiters
                        .pop_front(e, &self.next)
                        .expect("a waiter");
                    self.stop_waiting(w, t);
                    self.claim(w, node, ev.aux as usize, t, win, out);
                    self.push_request(node, w, REQ_PEER_CONNECT, t, ARR_PEER);
                }
            }
            EventKind::SetupArrive => {
                if self.circuits[c as usize].msg.dst.idx() == node {
                    self.at_destination(c, node, t, win, out, false);
                } else {
                    let class = self.circuits[c as usize].arrive_class;
                    self.push_request(node, c, REQ_SETUP, t, class);
                }
            }
            EventKind::AckArrive => {
                self.set_phase(c, Phase::Data, t, win);
                let k = &mut self.circuits[c as usize];
                k.ack_at = t;
                let data = (k.msg.len as u64).div_ceil(self.width);
                let (dst, len, id) = (k.msg.dst.0, k.msg.len, k.id());
                k.tail_at = t + (data - 1 + k.hops as u64 * self.latency).max(1);
                let tail = k.tail_at;
                self.timer(out, t + data, node, c, EventKind::DataDone);
                out.send(
                    tail,
                    CircuitEvent {
                        id,
                        node: dst,
                        circuit: NONE,
                        len,
                        kind: EventKind::TailArrive,
                        aux: 0,
                    },
                );
            }
            EventKind::DataDone => {
                self.set_phase(c, Phase::Release, t, win);
                let k = &mut self.circuits[c as usize];
                k.sent_at = t;
                let engine = k.engine as usize;
                let empty = k.nodes.is_empty();
                let li = self.li(node);
                self.dma.release(li, engine);
                if empty {
                    self.released(c, node, t, t, out, stats);
                } else {
                    self.push_request(node, c, REQ_RELEASE, t, ARR_REL_SRC);
                }
            }
            EventKind::TailArrive => {
                if win.contains(t) {
                    self.flits_accepted += ev.len as u64;
                }
                stats.accepted(t, ev.len as u64);
                // Which engine does not matter: engines are identical.
                let li = self.li(node);
                let free = !self.rx_idle[li] & self.rx_all;
                self.rx_idle[li] |= 1 << free.trailing_zeros();
                if let Some(w) = self.rx_waiters.pop_front(li, &self.next) {
                    let since = self.circuits[w as usize].wait_since;
                    self.circuits[w as usize].link_wait += t - since;
                    self.at_destination(w, node, t, win, out, true);
                }
            }
            EventKind::BackoffDone => {
                self.circuits[c as usize].aborting = false;
                self.push_request(node, c, REQ_SETUP, t, ARR_RETRY);
            }
            EventKind::ReleaseArrive => self.push_request(node, c, REQ_RELEASE, t, ARR_REL_FWD),
            EventKind::AbortArrive => self.push_request(node, c, REQ_RELEASE, t, ARR_ABORT),
            EventKind::HoldTimeout => {
                let k = &self.circuits[c as usize];
                // Stale unless the circuit still waits in the wait this timer was set for.
                let h = self.hold_timeout.unwrap_or(0);
                if k.id() == ev.id && k.waiting_at != NONE && k.wait_since + h == t {
                    let e = k.waiting_at as usize;
                    self.ends.waiters.remove(e, c, &mut self.next);
                    self.stop_waiting(c, t);
                    self.timeouts_total += 1;
                    if win.contains(t) {
                        self.stats.timeouts += 1;
                    }
                    // Given up at the end of this cycle, like a conflict found by a verify.
                    self.abort(c, node, t, out);
                }
            }
            EventKind::Complete => {
                let k = &self.circuits[c as usize];
                let done = k.tail_at;
                self.complete(c, done, out, stats);
            }
        }
    }

    /// One cycle of local node `n`: idle sending engines take waiting messages, and free
    /// controller servers start queued requests.
    pub fn step(
        &mut self,
        n: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        self.tick(t);
        let node = self.part.node(n) as usize;
        while let Some((e, m)) = self.dma.start_one(n) {
            let c = self.alloc(m);
            self.live += 1;
            let circ = &mut self.circuits[c as usize];
            circ.engine = e as u8;
            circ.engine_at = t;
            circ.acct_t = t;
            if m.dst.idx() == node {
                self.at_destination(c, node, t, win, out, false);
            } else {
                self.push_request(node, c, REQ_SETUP, t, ARR_NEW);
            }
        }
        while let Some((req, s)) = self.ctrl.take(n, t) {
            let si = self.server_idx(n, s);
            self.begin(si, req, t, win, out, stats);
        }
        self.last_step = t;
    }

    /// Takes what another partition sent.
    pub fn accept(&mut self, r: CircuitRemote) {
        match r {
            CircuitRemote::Record(rec) => {
                let id = rec.id();
                let c = self.place(*rec);
                self.arrivals.insert(id, c);
            }
            CircuitRemote::End { end, view } => self.ends.accept(end, view),
            r => self.learn(r),
        }
    }

    /// Circuits in progress (taken by a sending DMA engine, not yet complete); on a
    /// partition, those started here minus those completed here.
    pub fn in_progress(&self) -> i64 {
        self.live
    }
}

/// What a circuit-switched replication measured, for the report.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CircuitMeasures {
    /// The accumulated statistics (link-cycles held completed to the window's end).
    pub stats: CircuitStats,
    /// Physical links.
    pub links: usize,
    /// Window length in cycles.
    pub window: Cycle,
    /// Every node's routing controller with its node, in node order (partitions add
    /// theirs, which are kept in node order whatever nodes each partition holds).
    pub ctrl_nodes: Vec<(u32, CtrlStats)>,
    /// The controllers' arrivals by class ([`ARRIVAL_CLASSES`]), summed over nodes.
    pub ctrl_classes: ClassStats,
}

impl CircuitMeasures {
    /// Adds another partition's measurements.
    pub fn add(&mut self, o: &CircuitMeasures) {
        self.stats.merge(&o.stats);
        self.links += o.links;
        let sorted = match (self.ctrl_nodes.last(), o.ctrl_nodes.first()) {
            (Some(a), Some(b)) => a.0 < b.0,
            _ => true,
        };
        self.ctrl_nodes.extend_from_slice(&o.ctrl_nodes);
        if !sorted {
            // Block partitions: the next partition's nodes are not all after these.
            self.ctrl_nodes.sort_unstable_by_key(|c| c.0);
        }
        self.ctrl_classes.add(&o.ctrl_classes);
    }
}

impl CircuitNet {
    /// The partition's circuit measurements over the window `[start, end)`.
    pub fn circuit_measures(&self, start: Cycle, end: Cycle) -> CircuitMeasures {
        let mut stats = self.stats.clone();
        for k in &self.circuits {
            // Completed circuits and records that moved on hold no link here.
            if k.held > 0 {
                stats.held[k.phase as usize] +=
                    k.held as u64 * overlap(k.acct_t, end, start, Some(end));
            }
        }
        CircuitMeasures {
            stats,
            links: self.n_links,
            window: end - start,
            ctrl_nodes: (0..self.ctrl.stats.len())
                .map(|i| (self.part.node(i), self.ctrl.stats[i]))
                .collect(),
            ctrl_classes: self.ctrl.classes,
        }
    }
}

impl Network for CircuitNet {
    type Event = CircuitEvent;
    type Remote = CircuitRemote;
    type Measures = CircuitMeasures;
    const WORK_UNIT: &'static str = "message";
    fn work(&self) -> u64 {
        self.delivered
    }
    // Arrivals join controller FIFOs, so their order within a cycle matters.
    const SORT_EVENTS: bool = true;
    const PARTITIONABLE: bool = true;
    // Dimension order and minimal adaptive routing (escape channels included).
    const MINIMAL_ROUTES: bool = true;
    // A cycle of a circuit network moves a few signals, not flits at every node: at the
    // d = 10 adaptive preset's load two partitions of 512 run at 0.38× one thread, two
    // of 2048 (d = 12) at 0.9×, two of 4096 (d = 13) at 1.27×, d = 16 at 1.9×.
    const MIN_PARTITION_NODES: usize = 4096;

    fn build(
        cfg: &HwConfig,
        machine: &Machine,
        seed: u64,
        rep: u32,
        part: &PartNodes,
    ) -> Result<Self> {
        CircuitNet::new_part(cfg, machine, seed, rep, part)
    }
    fn accept_remote(&mut self, r: CircuitRemote) {
        self.accept(r);
    }
    fn nodes(&self) -> usize {
        CircuitNet::nodes(self)
    }
    fn horizon(&self) -> Cycle {
        // Hops, controller stages and acks are near; data and back-off go to the heap.
        64
    }
    fn event_key(&self, e: &CircuitEvent) -> u64 {
        let x = match e.kind {
            EventKind::CtrlDone | EventKind::LinkFreed => e.aux as u64,
            _ => e.id,
        };
        ((e.kind as u64) << 59) | (x & ((1 << 59) - 1))
    }
    fn enqueue(&mut self, node: usize, m: PendingMsg) {
        self.dma.enqueue(node, m);
    }
    fn deliver(
        &mut self,
        e: CircuitEvent,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        self.apply(e, t, win, out, stats);
    }
    fn step_node(
        &mut self,
        n: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        self.step(n, t, win, out, stats);
    }
    fn busy(&self, n: usize) -> bool {
        self.dma.can_inject(n)
            || (self.ctrl.queued(n) > 0 && self.ctrl.has_free_server(n, self.last_step + 1))
    }
    fn backlog(&self) -> usize {
        self.dma.backlog()
    }
    fn in_network(&self) -> bool {
        self.live != 0
    }
    fn delivered(&self) -> u64 {
        self.delivered
    }
    fn measured_delivered(&self) -> u64 {
        self.measured_delivered
    }
    fn live_work(&self) -> i64 {
        // Circuits are watched by their waits, not by a no-progress timer: a long data
        // phase is progress nobody sees.
        0
    }
    fn last_progress(&self) -> Cycle {
        0
    }
    fn wait_edges(&self, out: &mut Vec<WaitEdge>) {
        CircuitNet::wait_edges(self, out);
    }
    fn explain_deadlock(&self, _t: Cycle) -> String {
        match self.wait_cycle() {
            Some(c) => self.describe_wait_cycle(&c),
            None => "no cycle of waiting circuits".into(),
        }
    }
    fn ctrl_stats(&self) -> &[CtrlStats] {
        &self.ctrl.stats
    }
    fn ctrl_servers(&self) -> usize {
        self.ctrl.servers()
    }
    fn mode_measures(&self, start: Cycle, end: Cycle) -> CircuitMeasures {
        CircuitNet::circuit_measures(self, start, end)
    }
    const LINK_UNITS: LinkUnits = LinkUnits {
        busy: "cycles",
        blocking: "conflicts",
    };
    fn link_obs(&self, start: Cycle, end: Cycle, out: &mut Vec<LinkObs>) {
        if !self.obs {
            return;
        }
        let busy = |e: usize| {
            let mut b = self.ends.busy_cycles[e];
            if self.ends.holder[e] != FREE {
                b += overlap(self.ends.since[e], end, start, Some(end));
            }
            b
        };
        let deg = self.deg as u32;
        for e in 0..self.ends.holder.len() {
            if self.down[e] == u32::MAX {
                continue;
            }
            let (g, p) = (self.ends.global(e), self.ends.peer[e]);
            let mut row = LinkObs {
                from: g / deg,
                port: (g % deg) as u8,
                to: self.down[e],
                busy: busy(e),
                flits: self.obs_flits[e],
                headers: self.obs_requests[e],
                blocking: self.obs_conflicts[e],
            };
            if p != NONE {
                if p < g {
                    // The half-duplex link's row is its lower end's (as in `measures`):
                    // this end adds its own counts to it, its busy cycles are counted
                    // there (rows of one link add up in `experiments::experiment`).
                    row.from = p / deg;
                    row.port = (p % deg) as u8;
                    row.to = g / deg;
                    row.busy = 0;
                } else {
                    row.busy += match self.ends.local(p) {
                        Some(q) => busy(q),
                        None => self.ends.remote_busy(p, start, end),
                    };
                }
            }
            out.push(row);
        }
    }
    fn measures(&self, start: Cycle, end: Cycle) -> NetMeasures {
        let w = (end - start).max(1) as f64;
        let busy = |e: usize| {
            let mut b = self.ends.busy_cycles[e];
            if self.ends.holder[e] != FREE {
                b += overlap(self.ends.since[e], end, start, Some(end));
            }
            b
        };
        let (mut sum, mut max) = (0u64, 0u64);
        for e in 0..self.ends.holder.len() {
            if self.down[e] == u32::MAX {
                continue;
            }
            let (g, p) = (self.ends.global(e), self.ends.peer[e]);
            // A half-duplex link is counted at its end with the lower global index.
            if p != NONE && p < g {
                continue;
            }
            let b = busy(e)
                + match p {
                    NONE => 0,
                    p => match self.ends.local(p) {
                        Some(q) => busy(q),
                        None => self.ends.remote_busy(p, start, end),
                    },
                };
            sum += b;
            max = max.max(b);
        }
        NetMeasures {
            flits_accepted: self.flits_accepted,
            link_busy: sum,
            link_busy_max: max,
            link_count: self.n_links,
            link_capacity: w,
        }
    }
}

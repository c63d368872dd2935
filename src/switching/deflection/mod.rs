//! Deflection wormhole switching with virtual channels (WDVC, paper 003, Varvarigos &
//! Lang) on the Manhattan Street network: the lanes of every link, the forwarding state
//! of every input lane, the sources' message memories and their retries, sequenced cycle
//! by cycle. The routing rule (persistent deflection) is in `routing::deflection`, the
//! counters in [`measure`], the report block in `report`; the paper's analytical model is
//! `model::deflection_ms`.
//!
//! # The scheme
//!
//! Each link has m = `router.vcs` virtual channels, which are *lanes*: each carries one
//! flit per cycle whatever the others do (spec A1: the only reading consistent with the
//! paper's capacity 2Nm, its bounds and its model's holding times; so `links.width` must
//! be 1). A worm is never buffered at an intermediate node: a header arriving at a
//! transit node takes a free lane on its preferred output (persistent rule: random at a
//! don't-care node), else *preempts* a worm originating at this node on that output (the
//! victim chosen by `switching.victim`, at random by default, spec A8), else is
//! *deflected* to the other output, taking a free lane or preempting there. A transit
//! header always finds a lane (a node has 2m input lanes; each transit worm on an output
//! holds one of them and the arriving header one more), which the code asserts. An
//! originating worm is accepted only on a free lane of its preferred output (a fresh
//! random draw at a don't-care source); otherwise it is *blocked* and retries after a
//! random delay (`switching.retry`, `retry_dist`; exponential with the mean worm length
//! in the presets, spec A3). A node may have any number of worms originating at once
//! (spec A12); `switching.max_pending` bounds the messages its memory holds.
//!
//! # Segments and timing (cycles; R = router delay, ℓ = link latency, δ = R − 1 + ℓ)
//!
//! A message is sent as one or more *segments* (attempts that were accepted). A segment
//! decided at its source in cycle s sends its first flit (the header, which is also the
//! message's first data flit) in cycle s and one flit per cycle after it on its lane; a
//! header decided at a node in cycle c is decided at the next node in cycle c + δ, and a
//! segment keeps the lanes it took for exactly as many cycles as it has flits, so a
//! segment is a rigid pipeline and is simulated by its two ends instead of flit by flit:
//! the header (`Kind::Head`) and the end-of-segment mark (`Kind::EndMark`), which follows
//! the header's lanes δ per hop behind the segment's last flit (spec A9: a side bit with
//! the next flit on the lane, so a preemptor's header can use the lane in the cycle after
//! the victim's last flit, and a node handles end marks before headers in a cycle, spec
//! A10). Every input lane remembers where its segment went (forwarded on an output lane,
//! absorbed, dropped), which is all the end mark needs to find its way. A lone worm of L
//! flits over h hops is delivered (h + 1)(R − 1) + h·ℓ + L cycles after its creation,
//! the wormhole closed form ([`crate::switching::zero_load::deflection`]).
//!
//! Preemption at the victim's source in cycle t ends the victim's segment with the flits
//! sent in cycles s..t−1; the rest of the message waits for a retry (`resume:
//! AfterDelay`, the model's assumption) or for the preemptor's end to free the lane
//! (`OnPreemptorTail`, §2), and continues from where it was cut (spec A4); the destination
//! reassembles by flit count and delivers the message when its last flit is in. A header
//! that comes back to its own source while that source is still sending it may preempt
//! itself; the segment is then cut to the loop's length and counted as a self-preemption.
//!
//! # Hop limit (`switching.hop_limit = Some(h)`, spec A11)
//!
//! H = ⌊h · distance(source, destination)⌋. A header that has travelled H hops and is not
//! at its destination is dropped at that node: the segment is absorbed and discarded
//! there (its lanes are freed by its end mark as usual) and an abort travels back to the
//! source, one link latency per hop (`abort: Signal`; `Instant`: next cycle). The source
//! ends the segment if it is still sending it, and the segment's flits rejoin the
//! message's unsent remainder, sent again after a retry delay. The dropped flits are
//! counted as wasted lane time. The source keeps the message until no abort can reach
//! it any more.
//!
//! `abort: Free` is the paper's idealised drop (its simulation has no per-hop delay, so a
//! header's fate is known before its body streams). The node dropping the header in cycle
//! t walks the segment's lanes back towards its source (input lane → the upstream output
//! lane feeding it → that lane's input lane …, while they are still the segment's) and
//! sends each node a `Purge` for t + 1, and its source the abort for t + 1: at the start
//! of t + 1, before any other decision, every lane the segment still holds is freed (no
//! end mark), the source stops, and the flits rejoin the remainder as above. Freeing the
//! lanes of other nodes inside cycle t would depend on the order nodes are decided in;
//! the walk reads them in the middle of cycle t, but a purge frees only a lane the segment
//! still holds at t + 1, so the outcome does not. An end mark of a purged segment finds
//! its input lane free and is dropped. The waste — lane i of the path held from i·δ after
//! the segment's start until its end mark passed or t + 1 — is counted as dropped lane
//! time and stands for the segment's flits × links in the lanes' identity. The walk
//! reads other nodes' lanes, so the network must be one partition (refused otherwise).
//!
//! # Order of decisions in a node-cycle (spec A10) and determinism
//!
//! Events of one node in one cycle are applied in a fixed order: segment ends at sources,
//! aborts, end marks (each frees a lane), headers by input port then lane, retries and
//! forgets by message; then the node's originating attempts in message-id order. Every
//! random draw comes from the node's own stream, so results do not depend on the order
//! nodes are stepped in, nor on the partitions. What crosses partitions is events only:
//! a header carries its segment's description ([`Seg`]).

pub mod measure;
mod report;

pub use report::{collapsed, delivered_lane_share};

use crate::config::{AbortSignal, BackoffDist, HwConfig, Resume, SwitchingConfig, Victim};
use crate::engine::machine::Machine;
use crate::engine::network::{NetMeasures, Network};
use crate::engine::partition::Outbox;
use crate::engine::partition::PartOut;
use crate::engine::partitioner::PartNodes;
use crate::engine::probe::observe::{Level as ObsLevel, LinkObs, LinkUnits, PortObs, NO_HOP};
use crate::engine::probe::{overlap, MsgStats};
use crate::engine::window::MeasureWindow;
use crate::engine::window::Window;
use crate::foundation::error::{Error, Result};
use crate::foundation::limits::{collected_table, filled_table, zeroed_table};
use crate::foundation::rng::{below, stream, NodeRng};
use crate::foundation::types::Located;
use crate::foundation::types::{Cycle, MsgId, NodeId, PortId};
use crate::router::buffers::MsgHeader;
use crate::router::controller::CtrlStats;
use crate::router::dma::PendingMsg;
use crate::routing::deflection::{other, preferred};
use crate::switching::delay;
use crate::topology::Topology;
use measure::{DeflectionStats, Level, MAX_PATH_BUCKET};
use std::collections::HashMap;

const NONE: u32 = u32::MAX;

/// Ports of a Manhattan Street node (row link 0, column link 1).
const PORTS: usize = 2;

/// What a segment's header carries, and its end mark and abort name: the message and
/// the segment's place in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Seg {
    /// The message.
    pub id: MsgId,
    /// Cycle the message was created.
    pub created: Cycle,
    /// Cycle the message's first segment left its source.
    pub first: Cycle,
    /// Destination node.
    pub dst: u32,
    /// Message length in flits.
    pub len: u32,
    /// The message's slot in its source's memory (opaque to other nodes).
    pub slot: u32,
    /// Segment number within the message (0, 1, …).
    pub no: u32,
    /// Links taken by the header so far (at a node: the hops that brought it there).
    pub hops: u32,
    /// Hop limit H (u32::MAX: none).
    pub limit: u32,
    /// The node where the header was last deflected (u32::MAX: never).
    pub deflected_at: u32,
    /// Whether the message is measured.
    pub measured: bool,
}

/// What happens at a node; the discriminant orders one node's events within a cycle.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum Kind {
    /// The source has sent a segment's last flit (`port`, `lane`: its output lane).
    SourceDone = 0,
    /// A hop-limit drop reaches the segment's source.
    Abort = 1,
    /// `abort: Free`: the segment dropped in the previous cycle leaves output lane
    /// (`port`, `lane`) of this node and the input lane feeding it (`flits` 0), or, at the
    /// drop node, the input lane (`port`, `lane`) its header arrived on (`flits` 1).
    /// Before end marks and headers, so a stale end mark finds its lane free and a header
    /// can take the lane in this cycle.
    Purge = 2,
    /// A segment's end reaches the node on input lane (`port`, `lane`), `flits` long.
    EndMark = 3,
    /// A header is decided at the node, having arrived on input lane (`port`, `lane`).
    Head = 4,
    /// A message's retry delay (or the router's delay before a first attempt) is over.
    Retry = 5,
    /// A fully sent message can no longer be dropped: its source forgets it.
    Forget = 6,
}

/// An event for a node.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct DeflEvent {
    /// Receiving node (global).
    pub node: u32,
    /// What it is.
    pub kind: Kind,
    /// Input port (`Head`, `EndMark`) or output port (`SourceDone`).
    pub port: u8,
    /// Lane of that port.
    pub lane: u8,
    /// `EndMark`: flits of the segment.
    pub flits: u32,
    /// `Head`, when the per-message log's hops are linked: the index of the segment's
    /// hop recorded before this one ([`NO_HOP`] otherwise). It sits in what was the
    /// event's padding, so it costs the run nothing with the log off; only meaningful
    /// in the partition that recorded the hop, so never sent between ranks.
    #[serde(skip, default = "crate::engine::probe::observe::no_hop")]
    pub prev: u32,
    /// The segment concerned.
    pub seg: Seg,
}

impl Located for DeflEvent {
    #[inline]
    fn node(&self) -> u32 {
        self.node
    }
}

type Out = PartOut<DeflEvent, ()>;

/// Who holds an output lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holder {
    Free,
    /// A segment originating at this node: the message's memory slot.
    Orig(u32),
    /// A transit segment that arrived on this input lane.
    Transit {
        port: u8,
        lane: u8,
    },
}

#[derive(Clone, Copy, Debug)]
struct OutLane {
    holder: Holder,
    /// The holding segment (message, segment number).
    owner: (MsgId, u32),
    /// Cycle the holder took it.
    since: Cycle,
    /// `resume: OnPreemptorTail`: the message preempted from this lane, waiting for it.
    waiter: u32,
}

const FREE_LANE: OutLane = OutLane {
    holder: Holder::Free,
    owner: (MsgId(u64::MAX), 0),
    since: 0,
    waiter: NONE,
};

/// Where the segment arriving on an input lane goes (and, when it ends here, the links
/// its header took; the rest of its description comes back with its end mark).
#[derive(Clone, Copy, Debug)]
enum InLane {
    Free,
    Forward {
        port: u8,
        lane: u8,
    },
    /// `hop`: the index of the header's hop here when hops are linked, else
    /// [`NO_HOP`] (see [`DeflEvent::prev`]).
    Absorb {
        hops: u32,
        hop: u32,
    },
    Drop {
        hops: u32,
    },
}

/// A message's state in its source's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Created this cycle.
    New,
    /// A retry (or first-attempt) timer is pending.
    Waiting,
    /// Attempts in this cycle.
    Due,
    /// A segment is being sent.
    Sending,
    /// Preempted; waits for its preemptor's end to free the lane.
    OnTail,
    /// Every flit sent; kept until no hop-limit abort can come back.
    Sent,
}

#[derive(Clone, Debug)]
struct SrcMsg {
    msg: PendingMsg,
    first: Cycle,
    limit: u32,
    unsent: u32,
    next_seg: u32,
    /// Originating attempts made so far.
    tries: u32,
    state: State,
    /// While sending: the output lane, the start cycle and the flits planned.
    port: u8,
    lane: u8,
    start: Cycle,
    planned: u32,
    forget_at: Cycle,
    /// Hop limit: (segment, flits) of ended segments an abort may still name.
    ended: Vec<(u32, u32)>,
}

/// A message partly reassembled at its destination.
#[derive(Clone, Copy, Debug)]
struct Partial {
    received: u32,
    hops: u64,
    segments: u32,
    /// The per-message log's linked hops: the last hop (at this node) of the segment
    /// that arrived last, whose list holds the hops of every segment that arrived
    /// ([`NO_HOP`]: none, or one was not linked, see [`DeflectionNet::join`]).
    last_hop: u32,
    /// Whether every segment that arrived had its hops linked.
    linked: bool,
    /// The highest segment number that arrived.
    max_no: u32,
}

impl Default for Partial {
    fn default() -> Self {
        Partial {
            received: 0,
            hops: 0,
            segments: 0,
            last_hop: NO_HOP,
            linked: true,
            max_no: 0,
        }
    }
}

/// The deflection routers of a partition's nodes (per-node arrays by local index,
/// `engine::partitioner`).
#[derive(Clone, Debug)]
pub struct DeflectionNet {
    topology: Topology,
    m: usize,
    router: Cycle,
    latency: Cycle,
    hop: Cycle,
    hop_limit: Option<f64>,
    retry: Cycle,
    retry_dist: BackoffDist,
    resume: Resume,
    abort: AbortSignal,
    victim: Victim,
    max_pending: Option<u32>,
    part: PartNodes,
    /// `abort: Free`: per local input link, the node whose output link feeds it (the
    /// drop walks the dropped segment's lanes back through it); empty otherwise.
    up: Vec<u32>,
    /// Whether this partition holds every node: only then does it link the
    /// per-message log's hops (an index names a hop of its own vector).
    whole: bool,
    down: Vec<u32>,
    out: Vec<OutLane>,
    inp: Vec<InLane>,
    out_level: Vec<Level>,
    in_level: Vec<Level>,
    /// Lane-cycles each output link was busy inside the window (ended holdings).
    link_busy: Vec<u64>,
    msgs: Vec<SrcMsg>,
    free: Vec<u32>,
    held: Vec<u32>,
    due: Vec<Vec<u32>>,
    partial: HashMap<u64, Partial>,
    rng: Vec<NodeRng>,
    /// Measurements.
    pub stats: DeflectionStats,
    flits_accepted: u64,
    delivered: u64,
    measured_delivered: u64,
    lost: u64,
    measured_lost: u64,
    held_total: u64,
    sent_idle: u64,
    /// Headers decided (the benchmarks' unit of work).
    head_moves: u64,
    /// Segments started here minus segments ended here (partitions' counts add up to
    /// the segments in flight).
    segs_live: i64,
    /// Per-link observation (`experiment.observe.per_link`); the arrays below are
    /// empty when it is off.
    obs: bool,
    /// Per output link: headers (transit and originating) that preferred it, inside
    /// the window.
    obs_headers: Vec<u64>,
    /// Per output link: of those, the ones that found no lane (deflected or blocked).
    obs_refused: Vec<u64>,
    /// Per input link: its lanes holding a segment, integrated over the window.
    obs_lanes_in: Vec<ObsLevel>,
}

impl DeflectionNet {
    /// Builds the routers of the partition `part` of a validated deflection machine.
    pub fn new_part(
        cfg: &HwConfig,
        machine: &Machine,
        seed: u64,
        rep: u32,
        part: &PartNodes,
    ) -> Result<Self> {
        let SwitchingConfig::Deflection {
            hop_limit,
            retry,
            retry_dist,
            resume,
            abort,
            victim,
            max_pending,
        } = cfg.switching
        else {
            return Err(Error::config(
                "internal: a deflection network was asked to run another switching mode",
            ));
        };
        let topology = machine.topology.clone();
        if topology.degree() != PORTS {
            return Err(Error::config(
                "internal: deflection switching needs two outputs per node",
            ));
        }
        let m = cfg.router.vcs as usize;
        let n = part.len();
        // Every table whose size grows with the network is allocated fallibly: a run let
        // through with --force that does not fit ends in a message, not an abort.
        let links = n.checked_mul(PORTS);
        let lanes = links.and_then(|l| l.checked_mul(m));
        let obs_len = if cfg.experiment.observe.per_link {
            links
        } else {
            Some(0)
        };
        let mut down = filled_table(links, u32::MAX, "deflection downstream node")?;
        for (li, u) in part.iter().enumerate() {
            for p in 0..PORTS {
                if let Some(v) = topology.neighbor(NodeId(u), PortId(p as u8)) {
                    down[li * PORTS + p] = v.0;
                }
            }
        }
        let whole = n == topology.nodes();
        let mut up = Vec::new();
        if abort == AbortSignal::Free {
            if !whole {
                return Err(Error::config(format!(
                    "switching.abort = Free frees a dropped worm's lanes on every node of its \
                     path at once, so the network must run as one partition; this run splits \
                     its {} nodes (threads × MPI ranks): run it on one thread and one rank, or \
                     raise experiment.partition_min_nodes",
                    topology.nodes()
                )));
            }
            up = filled_table(links, u32::MAX, "deflection upstream node")?;
            for (li, u) in part.iter().enumerate() {
                for p in 0..PORTS {
                    let v = down[li * PORTS + p];
                    if v != u32::MAX {
                        up[part.local(v) * PORTS + p] = u;
                    }
                }
            }
        }
        let router = crate::switching::zero_load::router_delay(cfg);
        Ok(DeflectionNet {
            up,
            m,
            router,
            latency: cfg.links.latency,
            hop: router - 1 + cfg.links.latency,
            hop_limit,
            retry,
            retry_dist,
            resume,
            abort,
            victim,
            max_pending,
            part: part.clone(),
            whole,
            down,
            out: filled_table(lanes, FREE_LANE, "deflection output lane")?,
            inp: filled_table(lanes, InLane::Free, "deflection input lane")?,
            out_level: filled_table(links, Level::default(), "deflection output level")?,
            in_level: filled_table(links, Level::default(), "deflection input level")?,
            link_busy: zeroed_table(links, "deflection link busy")?,
            msgs: Vec::new(),
            free: Vec::new(),
            held: zeroed_table(Some(n), "deflection held messages")?,
            due: collected_table(n, (0..n).map(|_| Vec::new()), "deflection due")?,
            partial: HashMap::new(),
            rng: collected_table(
                n,
                part.iter().map(|u| stream(seed, rep, u, 2)),
                "deflection random stream",
            )?,
            stats: DeflectionStats::new(m),
            flits_accepted: 0,
            delivered: 0,
            measured_delivered: 0,
            lost: 0,
            measured_lost: 0,
            held_total: 0,
            sent_idle: 0,
            segs_live: 0,
            head_moves: 0,
            obs: cfg.experiment.observe.per_link,
            obs_headers: zeroed_table(obs_len, "per-link headers")?,
            obs_refused: zeroed_table(obs_len, "per-link refusals")?,
            obs_lanes_in: filled_table(obs_len, ObsLevel::default(), "per-link lanes")?,
            topology,
        })
    }

    /// Local index of output/input link `port` of the node of local index `li` (callers
    /// look the node's local index up once: with block partitions it is a table read).
    #[inline]
    fn link(li: usize, port: usize) -> usize {
        li * PORTS + port
    }

    /// Index of lane `lane` of local link `l`.
    #[inline]
    fn lane(&self, l: usize, lane: usize) -> usize {
        l * self.m + lane
    }

    /// Whole run: lane-cycles of ended holdings, and Σ flits × links of ended segments
    /// (equal once the network is empty: Little's law on the lanes).
    pub fn lane_identity(&self) -> (u64, u64) {
        (self.stats.lane_cycles_total, self.stats.flit_hops_total)
    }

    /// Output lanes held now, by any segment (tests follow a drop with it).
    pub fn lanes_held(&self) -> usize {
        self.out.iter().filter(|o| o.holder != Holder::Free).count()
    }

    /// Counts a change of the busy lanes of a link.
    #[inline]
    fn level(level: &mut Level, hist: &mut [u64], t: Cycle, up: bool, win: &MeasureWindow) {
        hist[level.busy as usize] += overlap(level.since, t, win.start, win.end);
        if up {
            level.busy += 1;
        } else {
            level.busy -= 1;
        }
        level.since = t;
    }

    /// Counts a lane of input link `l_in` taken (`up`) or freed in cycle `t`, in the
    /// occupancy histogram and, when links are observed, the link's lanes over time.
    #[inline]
    fn input_level(&mut self, l_in: usize, t: Cycle, up: bool, win: &MeasureWindow) {
        Self::level(
            &mut self.in_level[l_in],
            &mut self.stats.in_occupancy,
            t,
            up,
            win,
        );
        if self.obs {
            let (start, end) = win.span();
            self.obs_lanes_in[l_in].change(t, if up { 1 } else { -1 }, start, end);
        }
    }

    /// Output lane `(l, lane)` gets holder `h`, segment `by`, in cycle t (it was free).
    fn occupy(
        &mut self,
        l: usize,
        lane: usize,
        h: Holder,
        by: &Seg,
        t: Cycle,
        win: &MeasureWindow,
    ) {
        let i = self.lane(l, lane);
        debug_assert_eq!(self.out[i].holder, Holder::Free, "a lane held by two worms");
        self.out[i].holder = h;
        self.out[i].owner = (by.id, by.no);
        self.out[i].since = t;
        Self::level(
            &mut self.out_level[l],
            &mut self.stats.out_occupancy,
            t,
            true,
            win,
        );
    }

    /// The holding of output lane `(l, lane)` ends in cycle t (free from t).
    fn account_end(&mut self, l: usize, lane: usize, t: Cycle, win: &MeasureWindow) {
        let since = self.out[self.lane(l, lane)].since;
        self.stats.lane_cycles_total += t - since;
        let w = overlap(since, t, win.start, win.end);
        self.link_busy[l] += w;
        self.stats.lane_busy += w;
    }

    /// Frees output lane `(l, lane)` in cycle t, waking a message waiting for it.
    fn release_lane(&mut self, l: usize, lane: usize, t: Cycle, win: &MeasureWindow) {
        self.account_end(l, lane, t, win);
        self.vacate(l, lane, t, win);
    }

    /// Output lane `(l, lane)`, whose holding is accounted, is free from cycle t.
    fn vacate(&mut self, l: usize, lane: usize, t: Cycle, win: &MeasureWindow) {
        let i = self.lane(l, lane);
        let waiter = self.out[i].waiter;
        self.out[i] = FREE_LANE;
        Self::level(
            &mut self.out_level[l],
            &mut self.stats.out_occupancy,
            t,
            false,
            win,
        );
        if waiter != NONE {
            let li = l / PORTS;
            if self.msgs[waiter as usize].state == State::OnTail {
                self.msgs[waiter as usize].state = State::Due;
                self.due[li].push(waiter);
            }
        }
    }

    /// A free lane of local output link `l`, lowest first (any lane will do, §2).
    #[inline]
    fn free_lane(&self, l: usize) -> Option<usize> {
        let base = l * self.m;
        (0..self.m).find(|&y| self.out[base + y].holder == Holder::Free)
    }

    fn retry_at(&mut self, li: usize, t: Cycle) -> Cycle {
        t + delay(&mut self.rng[li], self.retry_dist, self.retry) + self.router - 1
    }

    /// Message `slot` of local node `li` waits for a retry from cycle `t`.
    fn schedule_retry(&mut self, li: usize, slot: u32, t: Cycle, out: &mut Out) {
        let at = self.retry_at(li, t);
        let k = &mut self.msgs[slot as usize];
        k.state = State::Waiting;
        let seg = self.seg_of(slot);
        out.send(
            at,
            self.event(self.part.node(li) as usize, Kind::Retry, 0, 0, 0, seg),
        );
    }

    fn event(
        &self,
        node: usize,
        kind: Kind,
        port: usize,
        lane: usize,
        flits: u32,
        seg: Seg,
    ) -> DeflEvent {
        DeflEvent {
            node: node as u32,
            kind,
            port: port as u8,
            lane: lane as u8,
            flits,
            prev: NO_HOP,
            seg,
        }
    }

    /// The description of message `slot`'s next (or current) segment.
    fn seg_of(&self, slot: u32) -> Seg {
        let k = &self.msgs[slot as usize];
        Seg {
            id: k.msg.id,
            created: k.msg.created,
            first: k.first,
            dst: k.msg.dst.0,
            len: k.msg.len,
            slot,
            no: k.next_seg.saturating_sub(1),
            hops: 0,
            limit: k.limit,
            deflected_at: u32::MAX,
            measured: k.msg.measured,
        }
    }

    /// A new message enters the memory of local node `li`.
    fn admit(&mut self, li: usize, m: PendingMsg) {
        if self.max_pending.is_some_and(|cap| self.held[li] >= cap) {
            self.lost += 1;
            if m.measured {
                // Measured means created inside the window.
                self.measured_lost += 1;
                self.stats.rejected += 1;
            }
            return;
        }
        let src = NodeId(self.part.node(li));
        let limit = match self.hop_limit {
            None => u32::MAX,
            Some(h) => {
                let d = self.topology.distance(src, m.dst) as f64;
                (h * d + 1e-9).floor().min(u32::MAX as f64 - 1.0) as u32
            }
        };
        let rec = SrcMsg {
            msg: m,
            first: Cycle::MAX,
            limit,
            unsent: m.len,
            next_seg: 0,
            tries: 0,
            state: State::New,
            port: 0,
            lane: 0,
            start: 0,
            planned: 0,
            forget_at: 0,
            ended: Vec::new(),
        };
        let slot = match self.free.pop() {
            Some(s) => {
                let mut ended = std::mem::take(&mut self.msgs[s as usize].ended);
                ended.clear();
                self.msgs[s as usize] = SrcMsg { ended, ..rec };
                s
            }
            None => {
                self.msgs.push(rec);
                (self.msgs.len() - 1) as u32
            }
        };
        self.held[li] += 1;
        self.held_total += 1;
        self.due[li].push(slot);
    }

    /// Message `slot` leaves its source's memory.
    fn forget(&mut self, li: usize, slot: u32) {
        self.held[li] -= 1;
        self.held_total -= 1;
        self.msgs[slot as usize].msg.id = MsgId(u64::MAX);
        self.free.push(slot);
    }

    /// Originating attempt of message `slot` at local node `li` in cycle t.
    fn attempt(
        &mut self,
        li: usize,
        slot: u32,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let node = self.part.node(li) as usize;
        let dst = self.msgs[slot as usize].msg.dst;
        let measured = win.contains(t);
        let new = self.msgs[slot as usize].tries == 0;
        self.msgs[slot as usize].tries += 1;
        if measured {
            self.stats.attempts += 1;
            self.stats.new_attempts += new as u64;
        }
        let (q, _) = preferred(&self.topology, NodeId(node as u32), dst, &mut self.rng[li]);
        let l = Self::link(li, q.idx());
        let free = self.free_lane(l);
        if self.obs && measured {
            self.obs_headers[l] += 1;
            self.obs_refused[l] += u64::from(free.is_none());
        }
        let Some(y) = free else {
            if measured {
                self.stats.blocked += 1;
                self.stats.new_blocked += new as u64;
            }
            self.schedule_retry(li, slot, t, out);
            return;
        };
        if measured {
            self.stats.accepted += 1;
        }
        let hop = self.hop;
        let (latency, abort) = (self.latency, self.abort);
        let k = &mut self.msgs[slot as usize];
        if k.first == Cycle::MAX {
            k.first = t;
        }
        let planned = k.unsent;
        k.unsent = 0;
        k.state = State::Sending;
        k.port = q.0;
        k.lane = y as u8;
        k.start = t;
        k.planned = planned;
        k.next_seg += 1;
        if k.limit != u32::MAX {
            // The latest an abort of this segment can arrive: its header is dropped at
            // most H hops out, and the abort comes back one link latency per hop.
            let h = k.limit as u64;
            let back = match abort {
                AbortSignal::Signal => h * latency,
                AbortSignal::Instant | AbortSignal::Free => 1,
            };
            k.forget_at = k.forget_at.max(t + h * hop + back + 1);
        }
        self.segs_live += 1;
        let mut seg = self.seg_of(slot);
        seg.hops = 1;
        let at = stats.hop_after(seg.id, seg.no, t, node as u32, NO_HOP, self.whole);
        self.occupy(l, y, Holder::Orig(slot), &seg, t, win);
        let to = self.down[l] as usize;
        out.send(
            t + hop,
            DeflEvent {
                prev: at,
                ..self.event(to, Kind::Head, q.idx(), y, 0, seg)
            },
        );
        out.send(
            t + planned as Cycle,
            self.event(node, Kind::SourceDone, q.idx(), y, 0, seg),
        );
    }

    /// The segment message `slot` is sending ends in cycle t with `flits` flits: its end
    /// mark leaves on its lane (which the caller frees or hands over).
    fn end_source_segment(
        &mut self,
        li: usize,
        slot: u32,
        t: Cycle,
        flits: u32,
        win: &MeasureWindow,
        out: &mut Out,
    ) {
        let k = &self.msgs[slot as usize];
        let (q, y) = (k.port as usize, k.lane as usize);
        let seg = self.seg_of(slot);
        let l = Self::link(li, q);
        self.account_end(l, y, t, win);
        let to = self.down[l] as usize;
        out.send(
            t + self.hop,
            self.event(to, Kind::EndMark, q, y, flits, seg),
        );
    }

    /// The source has sent every planned flit of its current segment, or has nothing
    /// left: what the message does next.
    fn after_sending(&mut self, li: usize, slot: u32, t: Cycle, out: &mut Out) {
        let k = &mut self.msgs[slot as usize];
        if k.unsent > 0 {
            // Flits returned by a drop while this segment was being sent.
            self.schedule_retry(li, slot, t, out);
        } else if k.limit != u32::MAX {
            k.state = State::Sent;
            self.sent_idle += 1;
            let at = k.forget_at.max(t + 1);
            let seg = self.seg_of(slot);
            out.send(
                at,
                self.event(self.part.node(li) as usize, Kind::Forget, 0, 0, 0, seg),
            );
        } else {
            self.forget(li, slot);
        }
    }

    /// A transit header at local output link `l` in cycle t: a free lane, else a lane
    /// taken from a worm originating here.
    fn take_lane(
        &mut self,
        l: usize,
        from: Holder,
        by: &Seg,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
    ) -> Option<usize> {
        if let Some(y) = self.free_lane(l) {
            self.occupy(l, y, from, by, t, win);
            return Some(y);
        }
        let base = l * self.m;
        let li = l / PORTS;
        let orig = (0..self.m).filter(|&y| matches!(self.out[base + y].holder, Holder::Orig(_)));
        let y = match self.victim {
            Victim::Random => {
                let n = orig.clone().count();
                if n == 0 {
                    return None;
                }
                let i = below(&mut self.rng[li], n as u64) as usize;
                orig.clone().nth(i)?
            }
            // Ties (same start cycle) go to the higher lane for the youngest, the lower
            // for the oldest: any fixed rule keeps runs reproducible.
            Victim::Youngest => orig.max_by_key(|&y| (self.out[base + y].since, y))?,
            Victim::Oldest => orig.min_by_key(|&y| (self.out[base + y].since, y))?,
        };
        self.preempt(l, y, by, t, win, out);
        let i = base + y;
        self.out[i].holder = from;
        self.out[i].owner = (by.id, by.no);
        self.out[i].since = t;
        Some(y)
    }

    /// A transit header (`by`) preempts the worm originating on lane `(l, y)` in cycle t.
    fn preempt(
        &mut self,
        l: usize,
        y: usize,
        by: &Seg,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
    ) {
        let li = l / PORTS;
        let Holder::Orig(slot) = self.out[l * self.m + y].holder else {
            unreachable!("only originating worms are preempted");
        };
        let k = &self.msgs[slot as usize];
        debug_assert_eq!(k.state, State::Sending);
        let flits = (t - k.start) as u32;
        let own = k.msg.id == by.id && k.next_seg - 1 == by.no;
        if win.contains(t) {
            self.stats.preempted += 1;
            if own {
                self.stats.self_preempted += 1;
            }
        }
        self.end_source_segment(li, slot, t, flits, win, out);
        let hop_limited = self.hop_limit.is_some();
        let k = &mut self.msgs[slot as usize];
        k.unsent += k.planned - flits;
        if hop_limited {
            let no = k.next_seg - 1;
            k.ended.push((no, flits));
        }
        match self.resume {
            Resume::AfterDelay => self.schedule_retry(li, slot, t, out),
            Resume::OnPreemptorTail => {
                k.state = State::OnTail;
                let i = self.lane(l, y);
                self.out[i].waiter = slot;
            }
        }
    }

    /// A header is decided at `node` in cycle t.
    fn head(
        &mut self,
        ev: &DeflEvent,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let node = ev.node as usize;
        let li = self.part.local(node as u32);
        let s = ev.seg;
        self.head_moves += 1;
        let l_in = Self::link(li, ev.port as usize);
        let i_in = self.lane(l_in, ev.lane as usize);
        debug_assert!(
            matches!(self.inp[i_in], InLane::Free),
            "an input lane taken twice"
        );
        self.input_level(l_in, t, true, win);
        // Every node a segment's header is decided at: transit, destination or drop.
        let here = stats.hop_after(s.id, s.no, t, node as u32, ev.prev, self.whole);
        let measured = win.contains(t);
        if s.dst as usize == node {
            self.inp[i_in] = InLane::Absorb {
                hops: s.hops,
                hop: here,
            };
            if measured {
                self.stats.arrived += 1;
                self.stats.arrived_hops += s.hops as u64;
                self.stats.path_hist[(s.hops as usize).min(MAX_PATH_BUCKET)] += 1;
            }
            return;
        }
        if s.hops >= s.limit {
            self.inp[i_in] = InLane::Drop { hops: s.hops };
            if measured {
                self.stats.dropped += 1;
            }
            let back = match self.abort {
                AbortSignal::Signal => s.hops as Cycle * self.latency,
                AbortSignal::Instant => 1,
                AbortSignal::Free => {
                    self.free_drop(ev, t, out);
                    1
                }
            };
            let src = s.id.src().idx();
            out.send(t + back, self.event(src, Kind::Abort, 0, 0, 0, s));
            return;
        }
        let from = Holder::Transit {
            port: ev.port,
            lane: ev.lane,
        };
        // The premise of the transit guarantee: every transit worm on an output holds an
        // input lane, and this header holds one more, so at most 2m − 1 output lanes are
        // held by transit worms.
        debug_assert!(
            {
                let base = Self::link(li, 0) * self.m;
                (0..PORTS * self.m)
                    .filter(|&i| matches!(self.out[base + i].holder, Holder::Transit { .. }))
                    .count()
                    < PORTS * self.m
            },
            "node {node}: every output lane held by a transit worm"
        );
        let (q, pref) = preferred(
            &self.topology,
            NodeId(node as u32),
            NodeId(s.dst),
            &mut self.rng[li],
        );
        let l = Self::link(li, q.idx());
        let preferred_port = q;
        let taken = self.take_lane(l, from, &s, t, win, out);
        if self.obs && measured {
            self.obs_headers[l] += 1;
            self.obs_refused[l] += u64::from(taken.is_none());
        }
        let (q, y) = match taken {
            Some(y) => {
                if measured {
                    if pref {
                        self.stats.pref_arrivals += 1;
                    } else {
                        self.stats.dc_arrivals += 1;
                    }
                }
                (q, y)
            }
            None => {
                if measured {
                    let base = l * self.m;
                    let own = (0..self.m).any(|y| self.out[base + y].owner == (s.id, s.no));
                    if pref {
                        self.stats.pref_arrivals += 1;
                        self.stats.pref_failed += 1;
                        self.stats.pref_self_blocked += own as u64;
                        self.stats.pref_repeat += (s.deflected_at == node as u32) as u64;
                    } else {
                        self.stats.dc_arrivals += 1;
                        self.stats.dc_failed += 1;
                    }
                }
                let q2 = other(q);
                let l2 = Self::link(li, q2.idx());
                let y = self
                    .take_lane(l2, from, &s, t, win, out)
                    .unwrap_or_else(|| {
                        panic!(
                            "transit guarantee violated at node {node} in cycle {t}: both outputs \
                         are full of transit worms (a node has as many input as output lanes, \
                         so this cannot happen)"
                        )
                    });
                (q2, y)
            }
        };
        self.inp[i_in] = InLane::Forward {
            port: q.0,
            lane: y as u8,
        };
        let mut next = s;
        next.hops += 1;
        if pref && q != preferred_port {
            next.deflected_at = node as u32;
        }
        let to = self.down[Self::link(li, q.idx())] as usize;
        out.send(
            t + self.hop,
            DeflEvent {
                prev: here,
                ..self.event(to, Kind::Head, q.idx(), y, 0, next)
            },
        );
    }

    /// `abort: Free`: the header `ev` is dropped at its node in cycle t. Walks the
    /// segment's lanes back from the drop (input lane → the output lane feeding it → that
    /// lane's input lane …) while they are still the segment's, and sends each node a
    /// [`Kind::Purge`] for cycle t + 1; the source's own lane is its abort's to free. The
    /// walk reads other nodes' lanes as they stand in the middle of cycle t, but the
    /// purges only free what the segment still holds at t + 1 (a lane its end mark freed
    /// in cycle t is skipped), so what is freed does not depend on the order nodes are
    /// decided in.
    fn free_drop(&mut self, ev: &DeflEvent, t: Cycle, out: &mut Out) {
        let s = ev.seg;
        // The segment ends here: nothing of it reaches a destination or a drop node.
        self.segs_live -= 1;
        out.send(
            t + 1,
            self.event(
                ev.node as usize,
                Kind::Purge,
                ev.port as usize,
                ev.lane as usize,
                1,
                s,
            ),
        );
        let (mut v, mut p, mut y) = (ev.node, ev.port, ev.lane);
        // At most one step per link the header took (a looping segment can hold two
        // lanes of one link; the walk follows lanes, and the bound ends it regardless).
        for _ in 0..s.hops {
            let u = self.up[Self::link(self.part.local(v), p as usize)];
            let l = Self::link(self.part.local(u), p as usize);
            let o = self.out[self.lane(l, y as usize)];
            if o.owner != (s.id, s.no) {
                break; // its end mark has passed
            }
            let Holder::Transit { port, lane } = o.holder else {
                break; // the source's lane
            };
            out.send(
                t + 1,
                self.event(u as usize, Kind::Purge, p as usize, y as usize, 0, s),
            );
            (v, p, y) = (u, port, lane);
        }
    }

    /// `abort: Free`, cycle t (the cycle after the drop): node `ev.node` lets go of what
    /// the dropped segment still holds there (see [`Kind::Purge`]).
    fn purge(&mut self, ev: &DeflEvent, t: Cycle, win: &MeasureWindow) {
        let li = self.part.local(ev.node);
        if ev.flits == 1 {
            // The drop node's input lane: nothing else can have taken it.
            let l_in = Self::link(li, ev.port as usize);
            let i_in = self.lane(l_in, ev.lane as usize);
            debug_assert!(matches!(self.inp[i_in], InLane::Drop { .. }));
            self.inp[i_in] = InLane::Free;
            self.input_level(l_in, t, false, win);
            return;
        }
        let l = Self::link(li, ev.port as usize);
        let o = self.out[self.lane(l, ev.lane as usize)];
        if o.owner != (ev.seg.id, ev.seg.no) {
            return; // freed by the segment's end mark in the drop cycle
        }
        let Holder::Transit { port, lane } = o.holder else {
            unreachable!("a purge names a transit lane");
        };
        let l_in = Self::link(li, port as usize);
        let i_in = self.lane(l_in, lane as usize);
        self.inp[i_in] = InLane::Free;
        self.input_level(l_in, t, false, win);
        self.release_lane(l, ev.lane as usize, t, win);
    }

    /// `abort: Free`: the dropped segment that started at its source in cycle `start`
    /// with its header `hops` links out held lane i (taken at start + i·δ) for its `flits`
    /// cycles, or until it was purged in cycle t: its lane-cycles, counted as wasted and
    /// standing in the lanes' identity for its flits × links (its lanes are freed before
    /// its flits have crossed them).
    fn free_waste(&mut self, start: Cycle, hops: u32, flits: u32, t: Cycle, measured: bool) {
        let held: u64 = (0..hops as u64)
            .map(|i| (flits as u64).min(t - (start + i * self.hop)))
            .sum();
        self.stats.flit_hops_total += held;
        if measured {
            self.stats.dropped_flits += flits as u64;
            self.stats.dropped_lane_cycles += held;
        }
    }

    /// A segment's end reaches `node` in cycle t.
    fn end_mark(
        &mut self,
        ev: &DeflEvent,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let li = self.part.local(ev.node);
        let l_in = Self::link(li, ev.port as usize);
        let i_in = self.lane(l_in, ev.lane as usize);
        if self.abort == AbortSignal::Free && matches!(self.inp[i_in], InLane::Free) {
            // The end of a segment dropped and purged before its end came by.
            return;
        }
        let entry = std::mem::replace(&mut self.inp[i_in], InLane::Free);
        self.input_level(l_in, t, false, win);
        let flits = ev.flits;
        match entry {
            InLane::Forward { port, lane } => {
                let l = Self::link(li, port as usize);
                self.release_lane(l, lane as usize, t, win);
                let to = self.down[l] as usize;
                out.send(
                    t + self.hop,
                    self.event(
                        to,
                        Kind::EndMark,
                        port as usize,
                        lane as usize,
                        flits,
                        ev.seg,
                    ),
                );
            }
            InLane::Absorb { hops, hop } => {
                let s = Seg { hops, ..ev.seg };
                self.segs_live -= 1;
                self.stats.flit_hops_total += flits as u64 * s.hops as u64;
                if win.contains(t) {
                    self.flits_accepted += flits as u64;
                }
                stats.accepted(t, flits as u64);
                self.reassemble(&s, flits, hop, t, win, stats);
            }
            InLane::Drop { hops } => {
                let s = Seg { hops, ..ev.seg };
                self.segs_live -= 1;
                self.stats.flit_hops_total += flits as u64 * s.hops as u64;
                if win.contains(t) {
                    self.stats.dropped_flits += flits as u64;
                    self.stats.dropped_lane_cycles += flits as u64 * s.hops as u64;
                }
            }
            InLane::Free => unreachable!("an end mark on an idle input lane"),
        }
    }

    /// `flits` flits of message `s` are in at its destination in cycle t.
    /// `hop` is the index of the segment's header's hop here (see [`InLane::Absorb`]).
    fn reassemble(
        &mut self,
        s: &Seg,
        flits: u32,
        hop: u32,
        t: Cycle,
        win: &MeasureWindow,
        stats: &mut MsgStats,
    ) {
        let (hops, segments, last_hop) = if flits == s.len {
            // The message's only segment when it is its first (no drop, no preemption
            // before it); otherwise the hops of the others are not on its list.
            (s.hops as u64, 1, if s.no == 0 { hop } else { NO_HOP })
        } else {
            let p = self.partial.entry(s.id.0).or_default();
            p.received += flits;
            p.hops += s.hops as u64;
            p.segments += 1;
            p.max_no = p.max_no.max(s.no);
            if p.linked && hop != NO_HOP {
                p.last_hop = Self::join(stats, hop, p.last_hop);
            } else {
                p.linked = false;
            }
            assert!(
                p.received <= s.len,
                "message {} received more flits than it has",
                s.id
            );
            if p.received < s.len {
                return;
            }
            let p = self.partial.remove(&s.id.0).expect("present");
            // Every segment up to the last arrived (none was dropped): their lists,
            // joined, hold every hop of the message.
            let whole = p.linked && p.segments == p.max_no + 1;
            (p.hops, p.segments, if whole { p.last_hop } else { NO_HOP })
        };
        let hdr = MsgHeader {
            id: s.id,
            dst: NodeId(s.dst),
            len: s.len,
            hops: hops.min(u16::MAX as u64) as u16,
            created: s.created,
            injected: s.first,
            measured: s.measured,
            ..MsgHeader::default()
        };
        stats.record_linked(&hdr, t, last_hop);
        self.delivered += 1;
        if win.contains(t) {
            self.stats.completed += 1;
        }
        if s.measured {
            self.measured_delivered += 1;
            self.stats.msg_count += 1;
            self.stats.msg_segments += segments as u64;
            self.stats.msg_hops += hops;
        }
    }

    /// The per-message log's linked hops of a message whose segments arrive one by one:
    /// the list of the segment that arrived, from its last hop `hop`, is continued by
    /// `before` (the segments that arrived before it; [`NO_HOP`]: none), by linking its
    /// first hop to it. Returns the joined list's last hop (`hop`). Only called with the
    /// log on, once per segment of a message that has several (a walk of its hops).
    #[cold]
    fn join(stats: &mut MsgStats, hop: u32, before: u32) -> u32 {
        if let Some(hs) = &mut stats.hops {
            let mut k = hop as usize;
            while hs[k].prev != NO_HOP {
                k = hs[k].prev as usize;
            }
            hs[k].prev = before;
        }
        hop
    }

    /// Applies one event in cycle t.
    fn apply(
        &mut self,
        ev: DeflEvent,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let li = self.part.local(ev.node);
        let slot = ev.seg.slot;
        // Timers and aborts name their message; one that left the memory is stale.
        let mine = |net: &Self| {
            net.msgs
                .get(slot as usize)
                .is_some_and(|k| k.msg.id == ev.seg.id)
        };
        match ev.kind {
            Kind::Head => self.head(&ev, t, win, out, stats),
            Kind::Purge => self.purge(&ev, t, win),
            Kind::EndMark => self.end_mark(&ev, t, win, out, stats),
            Kind::SourceDone => {
                if !mine(self) {
                    return;
                }
                let k = &self.msgs[slot as usize];
                if k.state != State::Sending || k.next_seg - 1 != ev.seg.no {
                    return; // the segment was cut earlier
                }
                let flits = k.planned;
                self.end_source_segment(li, slot, t, flits, win, out);
                let l = Self::link(li, ev.port as usize);
                self.vacate(l, ev.lane as usize, t, win);
                if self.hop_limit.is_some() {
                    let k = &mut self.msgs[slot as usize];
                    let no = k.next_seg - 1;
                    k.ended.push((no, flits));
                }
                self.after_sending(li, slot, t, out);
            }
            Kind::Abort => {
                if !mine(self) {
                    debug_assert!(false, "an abort for a message its source forgot");
                    return;
                }
                let free = self.abort == AbortSignal::Free;
                // Free: the drop was decided in the previous cycle, its header `hops` links
                // out of a segment that started hops·δ before it.
                let dropped_at = t - 1;
                let start = dropped_at.saturating_sub(ev.seg.hops as Cycle * self.hop);
                let measured = win.contains(dropped_at);
                let k = &self.msgs[slot as usize];
                if k.state == State::Sending && k.next_seg - 1 == ev.seg.no {
                    // Still sending the dropped segment: stop, and send it all again.
                    let flits = (t - k.start) as u32;
                    let (q, y) = (k.port as usize, k.lane as usize);
                    let l = Self::link(li, q);
                    if free {
                        // No end mark: every other lane it held is purged this cycle.
                        self.account_end(l, y, t, win);
                        self.free_waste(start, ev.seg.hops, flits, t, measured);
                    } else {
                        self.end_source_segment(li, slot, t, flits, win, out);
                    }
                    self.vacate(l, y, t, win);
                    let k = &mut self.msgs[slot as usize];
                    k.unsent += k.planned;
                    self.schedule_retry(li, slot, t, out);
                    return;
                }
                let k = &mut self.msgs[slot as usize];
                let Some(pos) = k.ended.iter().position(|&(no, _)| no == ev.seg.no) else {
                    debug_assert!(false, "an abort for a segment that never ended");
                    return;
                };
                let (_, flits) = k.ended.swap_remove(pos);
                k.unsent += flits;
                if free {
                    self.free_waste(start, ev.seg.hops, flits, t, measured);
                }
                let k = &mut self.msgs[slot as usize];
                if k.state == State::Sent {
                    self.sent_idle -= 1;
                    self.schedule_retry(li, slot, t, out);
                }
            }
            Kind::Retry => {
                if mine(self) && self.msgs[slot as usize].state == State::Waiting {
                    self.msgs[slot as usize].state = State::Due;
                    self.due[li].push(slot);
                }
            }
            Kind::Forget => {
                if mine(self) {
                    let k = &self.msgs[slot as usize];
                    if k.state == State::Sent && t >= k.forget_at {
                        self.sent_idle -= 1;
                        self.forget(li, slot);
                    }
                }
            }
        }
    }

    /// One cycle of local node `li`: its originating attempts, in message-id order.
    fn step(
        &mut self,
        li: usize,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        if self.due[li].is_empty() {
            return;
        }
        let mut due = std::mem::take(&mut self.due[li]);
        let msgs = &self.msgs;
        due.sort_unstable_by_key(|&s| msgs[s as usize].msg.id);
        for &slot in &due {
            match self.msgs[slot as usize].state {
                State::New if self.router > 1 => {
                    // The router takes R − 1 cycles before the first decision.
                    let k = &mut self.msgs[slot as usize];
                    k.state = State::Waiting;
                    let at = t + self.router - 1;
                    let seg = self.seg_of(slot);
                    out.send(
                        at,
                        self.event(self.part.node(li) as usize, Kind::Retry, 0, 0, 0, seg),
                    );
                }
                State::New | State::Due => self.attempt(li, slot, t, win, out, stats),
                _ => {}
            }
        }
        due.clear();
        self.due[li] = due;
    }

    /// Messages held in the sources' memory with something left to send.
    fn waiting(&self) -> u64 {
        self.held_total - self.sent_idle
    }
}

/// What a deflection replication measured, for the report.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DeflectionMeasures {
    /// The counters (occupancies completed to the window's end).
    pub stats: DeflectionStats,
    /// Nodes measured.
    pub nodes: usize,
    /// Window length in cycles.
    pub window: Cycle,
}

impl Network for DeflectionNet {
    type Event = DeflEvent;
    type Remote = ();
    type Measures = DeflectionMeasures;
    const WORK_UNIT: &'static str = "header hop";
    fn work(&self) -> u64 {
        self.head_moves
    }
    // Lanes are taken in the order headers are decided.
    const SORT_EVENTS: bool = true;
    const PARTITIONABLE: bool = true;
    const MIN_PARTITION_NODES: usize = 1024;

    fn build(
        cfg: &HwConfig,
        machine: &Machine,
        seed: u64,
        rep: u32,
        part: &PartNodes,
    ) -> Result<Self> {
        DeflectionNet::new_part(cfg, machine, seed, rep, part)
    }
    fn nodes(&self) -> usize {
        self.held.len()
    }
    fn accept_remote(&mut self, _: ()) {}
    // Headers and end marks go one hop ahead (δ = router − 1 + link latency); an abort
    // travels back to the source at a link latency per hop, or in one cycle when the
    // abort signal is instantaneous; retries and releases stay on the node.
    fn lookahead(&self) -> Cycle {
        match self.abort {
            AbortSignal::Instant | AbortSignal::Free => 1,
            AbortSignal::Signal => self.hop.min(self.latency).max(1),
        }
    }
    fn horizon(&self) -> Cycle {
        // Headers and end marks are δ ahead; segment ends and retries (about a worm
        // length) mostly fit too, the rare long ones wait on the heap.
        (4 * self.retry + 4 * self.hop).clamp(64, 4096)
    }
    fn event_key(&self, e: &DeflEvent) -> u64 {
        let low = match e.kind {
            Kind::SourceDone | Kind::EndMark | Kind::Head => ((e.port as u64) << 8) | e.lane as u64,
            Kind::Purge => ((e.flits as u64 & 1) << 16) | ((e.port as u64) << 8) | e.lane as u64,
            Kind::Abort | Kind::Retry | Kind::Forget => {
                (e.seg.id.seq() << 20) | (e.seg.no as u64 & 0xF_FFFF)
            }
        };
        ((e.kind as u64) << 60) | (low & ((1 << 60) - 1))
    }
    fn enqueue(&mut self, node: usize, m: PendingMsg) {
        self.admit(node, m);
    }
    fn deliver(
        &mut self,
        e: DeflEvent,
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
    fn busy(&self, _n: usize) -> bool {
        // Everything a node does later is on the calendar.
        false
    }
    fn backlog(&self) -> usize {
        self.waiting() as usize
    }
    fn in_network(&self) -> bool {
        self.held_total > 0 || self.segs_live != 0 || !self.partial.is_empty()
    }
    fn delivered(&self) -> u64 {
        self.delivered
    }
    fn measured_delivered(&self) -> u64 {
        self.measured_delivered
    }
    fn lost(&self) -> u64 {
        self.lost
    }
    fn measured_lost(&self) -> u64 {
        self.measured_lost
    }
    fn live_work(&self) -> i64 {
        // Worms are never blocked inside the network: deflection cannot deadlock.
        0
    }
    fn last_progress(&self) -> Cycle {
        0
    }
    fn explain_deadlock(&self, _t: Cycle) -> String {
        "deflection switching never holds a worm waiting inside the network".into()
    }
    fn ctrl_stats(&self) -> &[CtrlStats] {
        &[]
    }
    fn ctrl_servers(&self) -> usize {
        1
    }
    const LINK_UNITS: LinkUnits = LinkUnits {
        busy: "lane-cycles",
        blocking: "refusals",
    };
    fn link_obs(&self, start: Cycle, end: Cycle, out: &mut Vec<LinkObs>) {
        if !self.obs {
            return;
        }
        for l in 0..self.link_busy.len() {
            let mut b = self.link_busy[l];
            for y in 0..self.m {
                let o = &self.out[self.lane(l, y)];
                if o.holder != Holder::Free {
                    b += overlap(o.since, end, start, Some(end));
                }
            }
            out.push(LinkObs {
                from: self.part.node(l / PORTS),
                port: (l % PORTS) as u8,
                to: self.down[l],
                busy: b,
                // A segment holds a lane for exactly as many cycles as it has flits
                // (`lane_identity`), so the flits a link carried are its lane-cycles.
                flits: b,
                headers: self.obs_headers[l],
                blocking: self.obs_refused[l],
            });
        }
    }
    fn port_obs(&self, start: Cycle, end: Cycle, out: &mut Vec<PortObs>) {
        for (l, lv) in self.obs_lanes_in.iter().enumerate() {
            out.push(PortObs {
                node: self.part.node(l / PORTS),
                port: (l % PORTS) as u8,
                flit_cycles: None,
                vc_cycles: lv.area_until(start, end),
            });
        }
    }
    fn measures(&self, start: Cycle, end: Cycle) -> NetMeasures {
        let (mut sum, mut max) = (0u64, 0u64);
        for l in 0..self.link_busy.len() {
            let mut b = self.link_busy[l];
            for y in 0..self.m {
                let o = &self.out[self.lane(l, y)];
                if o.holder != Holder::Free {
                    b += overlap(o.since, end, start, Some(end));
                }
            }
            sum += b;
            max = max.max(b);
        }
        NetMeasures {
            flits_accepted: self.flits_accepted,
            link_busy: sum,
            link_busy_max: max,
            link_count: self.link_busy.len(),
            link_capacity: ((end - start).max(1) * self.m as u64) as f64,
        }
    }
    fn mode_measures(&self, start: Cycle, end: Cycle) -> DeflectionMeasures {
        let mut stats = self.stats.clone();
        let close = |levels: &[Level], hist: &mut [u64]| {
            for lv in levels {
                hist[lv.busy as usize] += overlap(lv.since, end, start, Some(end));
            }
        };
        close(&self.out_level, &mut stats.out_occupancy);
        close(&self.in_level, &mut stats.in_occupancy);
        for o in &self.out {
            if o.holder != Holder::Free {
                stats.lane_busy += overlap(o.since, end, start, Some(end));
            }
        }
        DeflectionMeasures {
            stats,
            nodes: self.held.len(),
            window: end - start,
        }
    }
}

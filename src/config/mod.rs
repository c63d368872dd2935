//! Configuration: plain serde data describing a machine (`topology`, `router`, `links`,
//! `switching`) and optionally its default `workload` and `experiment`. This module owns
//! the types and their defaults only; loading with file:line:column errors is in
//! [`load`], `--set` overrides in [`overrides`], and the checks that reject impossible
//! machines in `engine::machine`. Behaviour lives in the engine and hardware modules.

pub mod load;
pub mod overrides;

/// Largest link latency or pipeline stage, in cycles (2^20): every delay a
/// configuration names is checked against it before anything is built.
pub const MAX_DELAY: u64 = 1 << 20;

use serde::{Deserialize, Serialize};

/// A complete hardware description, as read from a RON file in `hw/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HwConfig {
    /// A short name shown in summaries.
    #[serde(default)]
    pub name: String,
    /// Free text: where the set-up comes from.
    #[serde(default)]
    pub description: String,
    /// The network graph.
    pub topology: TopologyConfig,
    /// The node's hardware.
    #[serde(default)]
    pub router: RouterConfig,
    /// The links between nodes.
    #[serde(default)]
    pub links: LinkConfig,
    /// Switching technique and routing.
    pub switching: SwitchingConfig,
    /// Default synthetic workload (command-line flags override its fields).
    #[serde(default)]
    pub workload: WorkloadConfig,
    /// Default experiment control (command-line flags override its fields).
    #[serde(default)]
    pub experiment: ExperimentConfig,
}

/// The network topology.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum TopologyConfig {
    /// Binary hypercube of `2^dim` nodes, `dim` from 1 to 24.
    Hypercube {
        /// Number of dimensions d.
        dim: u32,
    },
    /// k-ary n-cube with wrap-around links.
    Torus {
        /// Nodes per dimension (radix), at least 2.
        k: u32,
        /// Number of dimensions, at least 1.
        n: u32,
        /// Links in both directions (true) or only towards increasing coordinates.
        #[serde(default = "default_true")]
        bidirectional: bool,
        /// Concentration: terminals per router (default 1: the router's own processing
        /// element is the terminal; more: `topology::concentration`).
        #[serde(default = "default_one", skip_serializing_if = "is_one")]
        c: u32,
    },
    /// k-ary n-dimensional mesh (no wrap-around), bidirectional links.
    Mesh {
        /// Nodes per dimension, at least 2.
        k: u32,
        /// Number of dimensions, at least 1.
        n: u32,
        /// Concentration: terminals per router (default 1: the router's own processing
        /// element is the terminal; more: `topology::concentration`).
        #[serde(default = "default_one", skip_serializing_if = "is_one")]
        c: u32,
    },
    /// Dragonfly (Kim, Dally, Scott and Abts, ISCA 2008) in its balanced canonical form:
    /// `a` routers per group fully connected by local links, `h` global links per router,
    /// `g = a·h + 1` groups with exactly one global link between every pair of groups
    /// (BookSim2's `dragonflynew` arrangement, `topology::dragonfly`), `p` terminals per
    /// router. Wormhole switching only.
    Dragonfly {
        /// Terminals per router (P).
        p: u32,
        /// Routers per group (A).
        a: u32,
        /// Global links per router (H).
        h: u32,
    },
    /// Flattened butterfly (Kim, Dally and Abts, ISCA 2007; HyperX with one link per
    /// router pair per dimension): routers in an n-dimensional array of k per dimension,
    /// each linked to the k−1 others along every dimension, `c` terminals each. Wormhole
    /// switching only.
    FlattenedButterfly {
        /// Routers per dimension, at least 2.
        k: u32,
        /// Number of dimensions, at least 1.
        n: u32,
        /// Terminals per router (default 1).
        #[serde(default = "default_one")]
        c: u32,
    },
    /// Manhattan Street network (paper 003): a k×k grid of unidirectional links whose
    /// directions alternate from row to row and from column to column; k even.
    ManhattanStreet {
        /// Nodes per row and per column (√N), even.
        k: u32,
    },
    /// Hosts and switches (paper 002): a k-ary n-cube of switches with `hosts` hosts on
    /// every switch; only hosts create and receive messages, switches only forward.
    SwitchedTorus {
        /// Switches per dimension.
        k: u32,
        /// Dimensions of the torus of switches.
        #[serde(default = "default_two")]
        n: u32,
        /// Hosts per switch.
        #[serde(default = "default_one")]
        hosts: u32,
        /// The source routes over the switches (default `DimensionOrder`).
        #[serde(default)]
        routes: TorusRoutes,
    },
    /// Hosts and switches read from a graph file (links with their own propagation
    /// delays, optional source routes; format in `topology::hosts`). A relative path is
    /// taken from the directory of the hardware file.
    HostGraph {
        /// The graph file.
        file: String,
    },
}

/// The source routes of a `SwitchedTorus`: the minimal route over the switches that each
/// ordered pair of hosts uses, fixed per pair (the host attaches it to every try of a
/// worm, and paper 002's model follows the same routes). Spec paper 002, A2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TorusRoutes {
    /// Every pair in dimension order, lowest dimension first; an offset of exactly k/2 on
    /// an even ring goes towards +. On the 3×3 torus with one host per switch a switch's
    /// X outputs are then asked for by its own host alone.
    #[default]
    DimensionOrder,
    /// The dimension order spread over the pairs: with d_i the ring offset (0..k) from the
    /// source's switch to the destination's in dimension i and j_a, j_b the two hosts'
    /// positions on their switches, a pair takes the dimensions lowest first when
    /// s = Σ d_i + j_a + j_b is even and highest first when it is odd; an offset of exactly
    /// k/2 in dimension i goes towards + when s − k/2 is even, towards − when it is odd.
    /// The rule depends on the offsets, not on where the pair sits, so every link of one
    /// direction carries the same number of pair routes; with n ≥ 2 the ties split evenly
    /// too, and every switch-to-switch link carries the same number.
    Spread,
}

fn default_two() -> u32 {
    2
}

fn default_one() -> u32 {
    1
}

fn default_true() -> bool {
    true
}

fn is_one(c: &u32) -> bool {
    *c == 1
}

/// The node's hardware: buffers, virtual channels, DMA engines, crossbar, controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterConfig {
    /// Virtual channels per network input port.
    pub vcs: u32,
    /// Flit buffer depth of each virtual channel.
    pub buffer_flits: u32,
    /// DMA engines per node, for injection and for ejection each. Default (None): one per
    /// dimension, as in paper 000 Fig. 1.
    pub dma: Option<u32>,
    /// Crossbar input speedup: how many crossbar inputs each router input port has, i.e.
    /// how many of its virtual channels may send in the same cycle (to distinct outputs).
    /// Each output still takes one connection per cycle.
    pub speedup: u32,
    /// Iterations of the switch allocator per cycle when it is `SeparableInputFirst`
    /// (routemu's own passes over the inputs and outputs left unmatched; 1 = a single
    /// separable pass). `ISlip` takes its iterations in its own field.
    pub switch_iterations: u32,
    /// The routing controller.
    pub controller: ControllerConfig,
    /// Extra pipeline stages of the router.
    pub pipeline: PipelineConfig,
    /// Arbiter used inside the separable virtual-channel and switch allocators
    /// (BookSim's `arb_type`).
    pub arbiter: Arbiter,
    /// The allocator of both the virtual-channel and the switch allocation (BookSim's
    /// `vc_allocator` and `sw_allocator` set alike); `vc_allocator` and `sw_allocator`
    /// override it for one of them.
    pub allocator: Allocator,
    /// The virtual-channel allocator when it differs from `allocator` (BookSim's
    /// `vc_allocator`); None: `allocator`.
    pub vc_allocator: Option<Allocator>,
    /// The switch allocator when it differs from `allocator` (BookSim's `sw_allocator`);
    /// None: `allocator`.
    pub sw_allocator: Option<Allocator>,
    /// The network interface between the DMA engines and the router's local port
    /// (wormhole switching): the bandwidth its injection and ejection channels share among
    /// the engines, and their latencies.
    pub ni: NetworkInterface,
    /// When an output virtual channel may be allocated to the next message (wormhole
    /// switching).
    pub vc_release: VcRelease,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            vcs: 4,
            buffer_flits: 8,
            dma: None,
            speedup: 1,
            switch_iterations: 1,
            controller: ControllerConfig::default(),
            pipeline: PipelineConfig::default(),
            arbiter: Arbiter::RoundRobin,
            allocator: Allocator::PortLevel,
            vc_allocator: None,
            sw_allocator: None,
            ni: NetworkInterface::default(),
            vc_release: VcRelease::default(),
        }
    }
}

/// The network interface of a wormhole node: the channels between its DMA engines and the
/// router's local port. By default (routemu's, and the papers' reading) every DMA engine
/// has its own connection through the crossbar's local port and streams at link rate, so
/// a node with E engines injects and ejects up to E·`links.width` flits per cycle. A
/// bandwidth makes the interface one channel each way, shared by the engines, as in
/// BookSim's terminal (one injection and one ejection channel of one flit per cycle).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkInterface {
    /// Flits per cycle the injection channel carries into the router, shared by the
    /// injection engines (a multiple of `links.width`: that many engines over the width
    /// may send in one cycle). None: each engine its own connection.
    pub injection: Option<u32>,
    /// Flits per cycle the ejection channel carries from the router into memory, shared
    /// by the ejection engines (a multiple of `links.width`). None: each engine its own
    /// connection.
    pub ejection: Option<u32>,
    /// Cycles the injection channel adds between an engine taking a message and its
    /// header being ready for the router's allocators (0: the router sees it at once).
    pub injection_latency: u64,
    /// Cycles from the crossbar's local output to the flit being in memory (at least 1).
    pub ejection_latency: u64,
    /// The injection channel feeds one message at a time, as BookSim's terminal does
    /// (its source writes a packet flit by flit into the router's injection buffer and
    /// starts the next one when the tail is in): an idle engine takes the next message
    /// only when the source has had the cycles to write the last one into the channel
    /// (its length over `injection` flits per cycle, counted from its start) and could
    /// write the tail of every message being injected: the rest fits in the router's
    /// buffer and the credit saying so is back (`credit_latency`), or, on a terminal node
    /// of a concentrated network, the rest goes out on its terminal link's credits
    /// (`router::source`); at most one message starts per cycle, in the first idle
    /// engine after the one taken last (BookSim's choice of injection VC). False: every
    /// idle engine takes a message at once, the lowest first.
    pub sequential_injection: bool,
    /// Cycles a credit of the router's injection buffer takes back to a sequential
    /// source (`sequential_injection`): the source writes a message's tail, and starts
    /// the next one the cycle after, only once the credit saying the rest fits is back.
    /// None: `injection_latency`, the channel's latency both ways (as `links.credit_latency`
    /// defaults to `links.latency`). Terminal nodes of a concentrated network read their
    /// terminal link's credits instead.
    pub credit_latency: Option<u64>,
}

impl Default for NetworkInterface {
    fn default() -> Self {
        NetworkInterface {
            injection: None,
            ejection: None,
            injection_latency: 0,
            ejection_latency: 1,
            sequential_injection: false,
            credit_latency: None,
        }
    }
}

/// When an output virtual channel of wormhole switching is free for the next message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum VcRelease {
    /// When the previous message's tail has left the downstream buffer and its credit is
    /// back (routemu's rule: a VC buffer never holds flits of two messages).
    #[default]
    TailCredit,
    /// As soon as the previous message's tail is sent (BookSim's default,
    /// `wait_for_tail_credit = 0`): the next message's flits queue in the downstream
    /// buffer behind the previous one's.
    TailSent,
}

/// The routing controller: `servers` identical servers fed by one FIFO request queue.
/// Every activity has a deterministic service time in cycles (at least 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    /// Number of servers sharing the FIFO queue.
    pub servers: u32,
    /// Route a wormhole header (compute its candidate outputs).
    pub route: u64,
    /// Circuit switching: verify that an outgoing link is free.
    pub verify: u64,
    /// Circuit switching: connect a verified free link.
    pub link_conn: u64,
    /// Circuit switching: release a link.
    pub release: u64,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            servers: 1,
            route: 1,
            verify: 1,
            link_conn: 1,
            release: 1,
        }
    }
}

/// Pipeline stages after routing, in extra cycles (0 = same cycle as the previous stage).
/// A header that leaves the routing controller in cycle t may win a virtual channel in
/// cycle t + vc_alloc, the switch in cycle t + vc_alloc + switch_alloc, and its flit
/// enters the link switch_traversal cycles after the switch grant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// Extra cycles between route computation and virtual-channel allocation.
    pub vc_alloc: u64,
    /// Extra cycles between virtual-channel allocation and the first switch allocation.
    pub switch_alloc: u64,
    /// Cycles from switch grant to the flit entering the link (crossbar traversal).
    pub switch_traversal: u64,
    /// Speculative switch allocation as BookSim2's (`speculative = 1` with its default
    /// `spec_sw_allocator = prio`): a header bids for the switch in the cycle it bids for
    /// a VC, at a lower priority than flits whose VC was allocated in an earlier cycle
    /// (at the input's and at the output's arbiter), and a switch grant won by a header
    /// whose VC allocation failed is wasted. Off (the default), a header that wins a VC
    /// bids for the switch in the same cycle (with `switch_alloc` = 0) at the same
    /// priority as every other flit, and a header without a VC does not bid. Needs
    /// `switch_alloc` = 0 (wormhole switching).
    pub speculative: bool,
}

/// Arbiter of the separable allocators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arbiter {
    /// Round-robin: the pointer moves just past the last winner (BookSim's
    /// `round_robin`).
    RoundRobin,
    /// Fixed priority: the lowest-numbered requester always wins.
    FixedPriority,
    /// Matrix arbiter: the least recently served requester wins (BookSim's `matrix`;
    /// before any grant the highest-numbered one, as BookSim's initial matrix).
    Matrix,
}

/// A virtual-channel or switch allocator: how a router matches requesters (input VCs,
/// or crossbar inputs) to resources (output VCs, or crossbar outputs) in one cycle.
/// Every allocator grants only what was requested, at most one resource per requester
/// and one requester per resource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Allocator {
    /// routemu's own allocator (the default, the papers' presets): separable and input
    /// first, with the VC allocator at port level (the selection function picks a
    /// header's output port, the port's arbiter hands out free VCs to its requesters in
    /// arbiter order, one round-robin pointer per output port), the switch allocator's
    /// input arbiters over VCs and `router.switch_iterations` passes
    /// (docs/configuration.md).
    #[default]
    PortLevel,
    /// Separable, input first, BookSim's `separable_input_first`: each requester (an
    /// input VC, a crossbar input) picks one request with its arbiter, each resource (an
    /// output VC, a crossbar output) grants one of those that picked it, with an arbiter
    /// per output VC.
    SeparableInputFirst,
    /// Separable, output first, BookSim's `separable_output_first`: each resource's
    /// arbiter grants one of its requesters, each requester accepts one of its grants.
    SeparableOutputFirst,
    /// iSLIP, BookSim's `islip` with `alloc_iters`: round-robin grant and accept
    /// pointers that move only on grants accepted in the first iteration; `iterations`
    /// rounds over the requesters and resources left unmatched.
    ISlip {
        /// Grant-accept rounds per cycle (1 to 16).
        iterations: u32,
    },
    /// Wavefront, BookSim's `wavefront`: requests taken greedily along the diagonals of
    /// the request matrix, starting from a diagonal that moves by one every cycle with
    /// requests; a maximal matching.
    Wavefront,
}

/// The links.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    /// Cycles a flit spends on the link (a register pipeline), at least 1.
    pub latency: u64,
    /// Flits a link carries per cycle.
    pub width: u32,
    /// Cycles a credit takes back to the upstream router. Default (None): `latency`.
    pub credit_latency: Option<u64>,
    /// Flit latency of a dragonfly's global links (None: `latency`); their credits take
    /// `credit_latency` plus the difference. Ignored on other networks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_global: Option<u64>,
    /// Flit latency of the links between a router and its terminals under concentration
    /// (more than one terminal per router; None: `latency`); their credits take
    /// `credit_latency` plus the difference. Ignored without concentration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_terminal: Option<u64>,
    /// Full duplex (both directions at once) or half duplex (one circuit per physical
    /// link, as the circuit-switching papers count links).
    pub duplex: Duplex,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            latency: 1,
            width: 1,
            credit_latency: None,
            latency_global: None,
            latency_terminal: None,
            duplex: Duplex::Full,
        }
    }
}

/// Link duplex mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Duplex {
    /// Each direction has its own channel.
    Full,
    /// One channel per physical link, shared by both directions.
    Half,
}

/// The switching technique.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum SwitchingConfig {
    /// Wormhole switching with virtual channels and credit flow control (paper 004).
    Wormhole {
        /// The routing function.
        routing: Routing,
        /// The selection function of adaptive routing (ignored by deterministic routing).
        #[serde(default)]
        selection: Selection,
        /// Skip the virtual-channel classes that make the routing deadlock-free (the
        /// dateline classes of dimension-order routing on a torus, the escape channels of
        /// adaptive routing). Such networks can deadlock; meant for deadlock studies.
        #[serde(default)]
        unsafe_routing: bool,
        /// How dimension-order routing splits a torus's virtual channels to stay
        /// deadlock-free (ignored elsewhere and by adaptive routing).
        #[serde(default)]
        torus_vcs: TorusVcs,
        /// How dimension order breaks the tie of an offset of exactly k/2 on a ring of
        /// even k (both directions minimal).
        #[serde(default)]
        torus_tie: TorusTie,
        /// What `Valiant`, `UgalLocal` and `UgalGlobal` on a dragonfly draw as the intermediate: a
        /// group (routemu's default, 3 VCs) or a router (BookSim's `ugal_dragonflynew`,
        /// 4 VCs here). Ignored elsewhere (the flattened butterfly always draws a router).
        #[serde(default)]
        valiant_intermediate: ValiantIntermediate,
    },
    /// Circuit switching (papers 000 and 001): path set-up hop by hop through each node's
    /// routing controller, an ack back to the source, data streamed by the source DMA
    /// over the circuit, and release hop by hop through the controllers.
    Circuit {
        /// What a set-up request does when the link it wants is busy.
        strategy: ConflictStrategy,
        /// Back-off of the drop and adaptive strategies before a new attempt, in cycles
        /// (the mean when `backoff_dist` is random). Unused by hold.
        #[serde(default = "default_backoff")]
        backoff: u64,
        /// Distribution of the back-off.
        #[serde(default)]
        backoff_dist: BackoffDist,
        /// How long the destination's ack takes back to the source.
        #[serde(default)]
        ack: AckDelay,
        /// Hold only: a request that has waited this many cycles for a busy link gives
        /// up, releases its partial path as drop does, backs off and retries (deadlock
        /// recovery for rings, where hold with dimension-order paths can deadlock).
        /// None: wait for ever (the papers' hold).
        #[serde(default)]
        hold_timeout: Option<u64>,
    },
    /// Deflection wormhole with virtual channels (WDVC, paper 003) on the Manhattan
    /// Street network: worms are never buffered at intermediate nodes; a transit worm
    /// takes a free virtual channel (`router.vcs` lanes per link, each carrying one flit
    /// per cycle) on its preferred link, else preempts a worm originating there, else is
    /// deflected to the other link; an originating worm that finds its preferred link
    /// full is blocked and retries later. `router.controller.route` is the router's
    /// delay per hop.
    Deflection {
        /// Hop limit factor h: a worm whose header has travelled h × (shortest distance
        /// from its source to its destination) hops, rounded down, without arriving is
        /// dropped and its source sends it again. None: no limit (the paper's Figs. 1–3a).
        #[serde(default)]
        hop_limit: Option<f64>,
        /// Mean delay, in cycles, before a blocked, preempted or dropped worm tries
        /// again (the paper's "random delay"; the presets use the mean worm length).
        #[serde(default = "default_retry")]
        retry: u64,
        /// Distribution of the retry delay (exponential by default, which lets retries
        /// mix into the Poisson stream the paper's model assumes).
        #[serde(default = "default_retry_dist")]
        retry_dist: BackoffDist,
        /// When a preempted worm sends the rest of its data again.
        #[serde(default)]
        resume: Resume,
        /// How the source of a worm dropped by the hop limit learns of it.
        #[serde(default)]
        abort: AbortSignal,
        /// Which originating worm a transit worm preempts when several hold the link.
        #[serde(default)]
        victim: Victim,
        /// Most messages a node holds waiting to be sent (created, blocked or preempted);
        /// a message created at a full node is rejected and counted. None: unbounded.
        #[serde(default = "default_max_pending")]
        max_pending: Option<u32>,
    },
    /// Wormhole switching of a LAN of hosts and switches with the backward timeout reset
    /// (paper 002): source routes, no virtual channels, back-pressure flow control over
    /// buffers of `router.buffer_flits` flits per input port; a header that waits
    /// `timeout` cycles for its outgoing link makes the switch drop the worm and send a
    /// reset back to its source, every switch on the way freeing the worm's link and
    /// buffers, and the source sends the worm again from the tail of its queue.
    Timeout {
        /// Cycles a header may wait for its outgoing link; None: wait for ever (plain
        /// wormhole, which can deadlock).
        timeout: Option<u64>,
        /// Cycles a reset worm waits before it rejoins its host's queue (paper 002
        /// Fig. 10's constant retransmission delay); 0: at once.
        #[serde(default)]
        retry_delay: u64,
        /// Which of the headers waiting for one link gets it.
        #[serde(default)]
        arbiter: LinkArbiter,
        /// When a link a worm held is free for the next one.
        #[serde(default)]
        release: LinkRelease,
        /// What a source does with a reset worm (`Discard` is for studying one link
        /// alone: the worm is lost and counted).
        #[serde(default)]
        on_reset: OnReset,
        /// The switch output whose head inter-arrival and waiting-time distributions
        /// are reported on their own (paper 002 Figs. 2–3), as (switch, port); None:
        /// the first switch-to-switch output of switch 0.
        #[serde(default)]
        watch: Option<(u32, u8)>,
    },
}

/// Arbitration among headers waiting for one outgoing link (paper 002 leaves it open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkArbiter {
    /// First come, first served (by the cycle a header became ready; ties: lower input
    /// port). The model's M/G/1 queue assumes it.
    #[default]
    Fifo,
    /// Round-robin over the input ports, starting after the last winner.
    RoundRobin,
}

/// When a link a worm held is free again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkRelease {
    /// The cycle after the tail crossed it (paper 002: the holding time ends when the
    /// tail is sent).
    #[default]
    TailSent,
    /// When the tail has left the downstream buffer and its credit is back (routemu's
    /// wormhole rule: a buffer never holds flits of two worms).
    TailCredit,
}

/// What the source host does with a worm whose try was reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OnReset {
    /// Put it back at the tail of its queue (after `retry_delay`).
    #[default]
    Requeue,
    /// Drop it (counted as lost): only for measuring a link without retries.
    Discard,
}

fn default_backoff() -> u64 {
    1500
}

fn default_retry() -> u64 {
    100
}

fn default_retry_dist() -> BackoffDist {
    BackoffDist::Exponential
}

fn default_max_pending() -> Option<u32> {
    Some(1000)
}

/// When a preempted worm of deflection switching sends the rest of its data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Resume {
    /// After a random retry delay (paper 003 §3, the model's assumption).
    #[default]
    AfterDelay,
    /// When the tail of the worm that preempted it leaves the link (paper 003 §2).
    OnPreemptorTail,
}

/// How the source of a worm dropped by the hop limit learns of the drop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum AbortSignal {
    /// A signal travels back over the worm's path, one link latency per hop.
    #[default]
    Signal,
    /// The source knows in the next cycle (an oracle, for what-if studies); the dropped
    /// segment's lanes are still freed by its end mark.
    Instant,
    /// Paper 003's idealised drop, where a dropped worm costs nothing but its retry (the
    /// paper's simulation has no per-hop delay, so a header's fate is known before its
    /// body streams). The drop decided in cycle t removes the segment from every lane it
    /// holds at the start of cycle t + 1, before any decision of that cycle (no end mark
    /// to wait for; deciding it inside cycle t would depend on the order nodes are
    /// stepped in), and its source stops sending in t + 1; the segment's flits rejoin the
    /// message's remainder for the retry as with `Signal` and `Instant`. What is still
    /// wasted — the lane-cycles the segment held up to t + 1 — is counted in
    /// `dropped_lane_fraction`. The network must run as one partition (the drop frees
    /// lanes of every node on the path at once): a split over threads or ranks is refused.
    Free,
}

/// Which originating worm a transit worm preempts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Victim {
    /// Uniformly at random among the worms originating on the link.
    #[default]
    Random,
    /// The one that started transmitting last.
    Youngest,
    /// The one that started transmitting first.
    Oldest,
}

/// Link-conflict resolution of circuit switching (paper 000 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConflictStrategy {
    /// E-cube / dimension-order path; a blocked request waits in a FIFO at the busy link
    /// and is connected by the release of that link.
    Hold,
    /// E-cube / dimension-order path; a blocked request releases every link it holds,
    /// hop by hop back to the source, backs off and retries the same path.
    Drop,
    /// Any minimal link: busy candidates are skipped (one more verify each, without
    /// queueing again) and a free one is taken at random; none free → abort as in drop.
    Adaptive,
}

/// Distribution of the back-off time of the drop and adaptive strategies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BackoffDist {
    /// Exactly `backoff` cycles (the papers' D_back-off).
    #[default]
    Constant,
    /// Exponentially distributed with mean `backoff`, rounded, at least 1 cycle.
    Exponential,
    /// Uniform on the integers 1 ..= 2·backoff − 1 (mean `backoff`).
    Uniform,
}

/// Delay of the ack from the destination's DMA to the source's (paper 000's D_ack).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AckDelay {
    /// The same number of cycles whatever the path length.
    Total(u64),
    /// This many cycles per hop of the circuit.
    PerHop(u64),
}

impl Default for AckDelay {
    fn default() -> Self {
        AckDelay::Total(1)
    }
}

/// Routing functions of wormhole switching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Routing {
    /// Deterministic: e-cube on hypercubes, dimension order (lowest dimension first) on
    /// tori (with dateline virtual-channel classes) and meshes.
    DimensionOrder,
    /// Minimal fully adaptive: any minimal output on the adaptive virtual channels, plus
    /// deadlock-free escape channels that follow dimension order (Duato).
    Adaptive,
    /// Glass & Ni's west-first turn model (2-D meshes): a message that has to go west
    /// goes west first; the others choose among their minimal east, north and south
    /// ports. Every VC usable by every message (no escape channels).
    WestFirst,
    /// Glass & Ni's north-last turn model (2-D meshes): north only once no other minimal
    /// direction is left; until then any minimal east, west or south port. Every VC
    /// usable by every message.
    NorthLast,
    /// Glass & Ni's negative-first turn model (2-D meshes): the minimal negative ports
    /// (west, south) first, adaptively; then the minimal positive ones (east, north).
    /// Every VC usable by every message.
    NegativeFirst,
    /// Chiu's odd-even turn model (2-D meshes): no east→north/south turn at a node of an
    /// even column, no north/south→west turn at a node of an odd column; minimal
    /// adaptive within those rules. Every VC usable by every message.
    OddEven,
    /// BookSim's `xy_yx_mesh` (meshes): each message is given XY (dimension order) or YX
    /// (highest dimension first) at random when it is injected, and keeps it; XY messages
    /// use the lower half of the VCs (`0..V/2`), YX messages the upper half (`V/2..V`),
    /// so neither order's channel dependencies meet the other's. Needs 2 VCs.
    XyYx,
    /// Valiant's randomised routing (BookSim's `valiant_mesh` / `valiant_torus`; meshes
    /// and tori): each message goes in dimension order to an intermediate node drawn
    /// uniformly over the whole network (its source and destination included), then in
    /// dimension order to its destination. Phase 1 uses the lower half of the VCs
    /// (`0..V/2`), phase 2 the upper half (`V/2..V`); on a torus each half is split again
    /// by the ring rule of `torus_vcs`. Not minimal. Needs 2 VCs on a mesh, 4 on a torus.
    /// On a dragonfly: a minimal route to an intermediate group drawn uniformly over the
    /// groups, then a minimal route to the destination, in three VC classes (thirds of
    /// the VCs: to the intermediate group, from it to the global hop towards the
    /// destination, from that hop on); needs 3 VCs. On a flattened butterfly: dimension
    /// order to an intermediate router, then to the destination, a half of the VCs per
    /// phase; needs 2 (docs/dragonfly.md).
    Valiant,
    /// ROMM (BookSim's `romm_mesh`; meshes and, by the same rule, tori): as `Valiant`,
    /// but the intermediate node is drawn in the minimal rectangle between source and
    /// destination (each coordinate uniformly on the minimal way from the source's to the
    /// destination's, both included), so every route is minimal. The same VC classes as
    /// `Valiant`: 2 VCs on a mesh, 4 on a torus.
    Romm,
    /// BookSim's `min_adapt_torus` (tori) and `min_adapt_mesh` (meshes): minimal adaptive
    /// with escape channels, where a message that has taken an escape VC stays on escape
    /// VCs to its destination (routemu's `Adaptive` lets it return). On a torus one
    /// adaptive VC (VC 3, as BookSim; VC 2 and VCs above 3 unused), one minimal port per
    /// dimension (an offset of k/2 goes down, as BookSim), and escape VCs 0 and 1 split
    /// by BookSim's ring rule; needs 4 VCs. On a mesh escape VC 0 and adaptive VCs 1..V;
    /// needs 2.
    MinAdapt,
    /// Minimal routing on the dragonfly and the flattened butterfly (BookSim's
    /// `min` routing of `dragonflynew`): on a dragonfly local–global–local (a local hop
    /// to the router holding the global link to the destination's group, the global
    /// link, a local hop to the destination's router), VC 0 before the global hop and
    /// VC 1 from it on (needs 2 VCs); on a flattened butterfly dimension order, one hop
    /// per dimension, on every VC (needs 1). Elsewhere `DimensionOrder` is the minimal
    /// deterministic routing.
    Minimal,
    /// UGAL-L on the dragonfly and the flattened butterfly (issue 33's contract name),
    /// BookSim's `ugal` rule: at the source router the message draws its `Valiant`
    /// intermediate, and goes minimal when the intermediate is in the source's or the
    /// destination's group (dragonfly), or when `q_min ≤ 2 · q_nonmin + 30`, where q is
    /// the flits the router has sent on the minimal and on `Valiant`'s first hop's output
    /// port, summed over the port's VCs, that the downstream buffer has not yet returned
    /// as credits (BookSim's `GetUsedCredit`); else it takes `Valiant`'s route. The
    /// decision is taken once and kept in the header's phase. `Valiant`'s VC classes:
    /// 3 VCs on a dragonfly (4 with `valiant_intermediate: Router`), 2 on a flattened
    /// butterfly.
    UgalLocal,
    /// UGAL-G on the dragonfly (Kim, Dally, Scott, Abts 2008; the paper's idealised
    /// upper bound of UGAL, since a real router cannot see it): the choice of
    /// `UgalLocal`, made at the source router from the same draw and by the same rule
    /// `q_min ≤ 2 · q_nonmin + 30`, but q is the used credits (flits sent and not yet
    /// credited back, over the port's VCs) of the *global channel* each route would
    /// take out of the source group — the global output port of the source group's
    /// gateway router towards the destination's group (minimal) and towards the
    /// intermediate's group (non-minimal) — read as they stood when the cycle's routing
    /// began (after its arrivals, before any of its flits left), so that the result
    /// does not depend on the order routers are stepped in nor on the thread count.
    /// BookSim has no UGAL-G and the paper gives no threshold: BookSim's UGAL-L
    /// constants, so the two differ only in what they read. `UgalLocal`'s VC classes
    /// (3 VCs, 4 with `valiant_intermediate: Router`). The dragonfly's only (on the
    /// flattened butterfly both routes' first channels leave the source router, which
    /// `UgalLocal` reads already). Each dragonfly group must be stepped by one
    /// partition: a split of threads × MPI ranks that cuts a group is refused, naming
    /// the largest count that keeps them whole (docs/dragonfly.md, "UGAL-G").
    UgalGlobal,
}

impl Routing {
    /// Whether every route is minimal (all but `Valiant`, whose detour through its
    /// intermediate node is not, and `UgalLocal` and `UgalGlobal`, which may take
    /// Valiant's).
    pub fn is_minimal(self) -> bool {
        !matches!(
            self,
            Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal
        )
    }

    /// Whether the routing chooses between the minimal route and Valiant's at the
    /// source router from channel occupancy (`UgalLocal`, `UgalGlobal`).
    pub fn is_ugal(self) -> bool {
        matches!(self, Routing::UgalLocal | Routing::UgalGlobal)
    }
}

/// Which way dimension-order routing goes round a ring of even k when the offset is
/// exactly k/2, so that both directions are minimal. The tie only arises at a message's
/// first hop in that ring (one hop later the offset is k/2 − 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TorusTie {
    /// By the parity of the current coordinate (even up, odd down): a fixed function of
    /// source and destination, so a permutation's flows each take one direction.
    #[default]
    Parity,
    /// A fair coin per message and ring, as BookSim's `dor_next_torus`
    /// (`RandomInt(1)` when turning into the dimension): a permutation's tied flows are
    /// split half and half over the two directions.
    Random,
}

/// Virtual-channel classes of dimension-order routing on a torus, per ring travelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TorusVcs {
    /// routemu's dateline classes: a message whose remaining path crosses the wrap-around
    /// link uses the even VCs, one that has crossed it the odd VCs, and one whose path in
    /// the ring never touches it any VC.
    #[default]
    Dateline,
    /// BookSim's `dim_order_torus`: the VCs split into two halves, and a message keeps
    /// one half for its whole way round the ring — one half for messages whose path
    /// crosses the wrap-around link, the other for those whose path does not (upwards
    /// the crossing ones take the upper half, downwards the lower, as BookSim numbers
    /// them). Every message uses half the VCs.
    WrapSplit,
}

/// The intermediate of `Valiant`, `UgalLocal` and `UgalGlobal` on a dragonfly (docs/dragonfly.md,
/// "Valiant and UGAL routing").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValiantIntermediate {
    /// A group drawn uniformly; phase 1 ends on arriving in it (no local hop there to an
    /// intermediate router). VC classes in thirds; needs 3 VCs.
    #[default]
    Group,
    /// A router drawn uniformly over all routers, as BookSim's `ugal_dragonflynew` draws
    /// a terminal; phase 1 ends at that router, so a message may take a local hop to it
    /// in the intermediate group. VC classes in quarters (BookSim's 3 VCs have a
    /// dependency cycle); needs 4 VCs.
    Router,
}

/// Selection functions of adaptive routing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    /// Paper 004: take the lowest dimension that has a free virtual channel; if every
    /// candidate is busy, wait and take whichever frees first.
    #[default]
    XFirst,
    /// Uniformly at random among the candidate outputs that have a free virtual channel.
    Random,
    /// The candidate output with the most free credits summed over its virtual channels.
    MostCredits,
}

/// A synthetic workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    /// Messages created per node per cycle (the papers' unit).
    pub rate: f64,
    /// Message length distribution, in flits.
    pub length: LengthConfig,
    /// Destination pattern.
    pub pattern: PatternConfig,
    /// Arrival process of message creations at each node.
    pub process: ArrivalProcess,
    /// What a source does whose permutation pattern maps it onto itself.
    #[serde(default)]
    pub fixed_points: FixedPoints,
    /// Request/reply traffic (BookSim's `use_read_write`): every message the workload
    /// creates is a request, and its delivery creates a reply back to its source, in a
    /// message class of its own (the upper half of every port's VCs). None (the
    /// default): one-way messages.
    pub reply: Option<ReplyConfig>,
}

/// Request/reply traffic: what a request's delivery sends back. Requests are the
/// workload's messages (`workload.length`: BookSim's `read_request_size`); a fraction
/// of them may be writes with lengths of their own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyConfig {
    /// Length of the reply to a request (to a read, when `writes` is set): BookSim's
    /// `read_reply_size`.
    pub length: LengthConfig,
    /// Write requests (BookSim's `write_fraction`, `write_request_size`,
    /// `write_reply_size`); None: every request is a read.
    #[serde(default)]
    pub writes: Option<WritesConfig>,
}

/// The write requests of request/reply traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WritesConfig {
    /// Probability that a request is a write (BookSim's `write_fraction`), in [0, 1].
    pub fraction: f64,
    /// Length of a write request (BookSim's `write_request_size`).
    pub request: LengthConfig,
    /// Length of the reply to a write (BookSim's `write_reply_size`).
    pub reply: LengthConfig,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            rate: 0.001,
            length: LengthConfig::Constant { flits: 12 },
            pattern: PatternConfig::Uniform,
            process: ArrivalProcess::Poisson,
            fixed_points: FixedPoints::Silent,
            reply: None,
        }
    }
}

/// The sources a permutation pattern (transpose, bit-complement, bit-reverse, shuffle,
/// random permutation, …) maps onto themselves, and a lone hot node of `HotspotNodes`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FixedPoints {
    /// They create no messages (a message to oneself crosses no channel); their share of
    /// the load is not offered and `check` counts them.
    #[default]
    Silent,
    /// They send to themselves at the configured rate, through their own router from an
    /// injection to an ejection engine, as BookSim does: their messages count in the
    /// offered and accepted load and in the latency (0 hops).
    ToSelf,
}

/// Message length distributions (flits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum LengthConfig {
    /// Every message has `flits` flits.
    Constant {
        /// Length in flits.
        flits: u32,
    },
    /// Exponential with the given mean, rounded to the nearest integer, at least 1.
    Exponential {
        /// Mean of the exponential before rounding.
        mean: f64,
    },
    /// Uniform on the integers min..=max.
    Uniform {
        /// Smallest length.
        min: u32,
        /// Largest length.
        max: u32,
    },
    /// A length drawn from a list, `lengths[i]` with probability `weights[i]` / Σ weights
    /// (BookSim's `packet_size` list with its `packet_size_rate`s; bimodal traffic is two
    /// entries, e.g. `Mixed(lengths: [1, 5], weights: [0.5, 0.5])`). Its mean Σ wᵢlᵢ / Σ wᵢ
    /// is the mean length everywhere one is used (`--load`, the offered load, the models).
    Mixed {
        /// The lengths in flits (1 to `traffic::length::MAX_FLITS` each).
        lengths: Vec<u32>,
        /// Their relative weights (finite, non-negative, not all zero), one per length.
        weights: Vec<f64>,
    },
}

/// Destination patterns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum PatternConfig {
    /// Uniform over the other nodes.
    Uniform,
    /// The Uniform pattern with the source itself among the destinations (BookSim's
    /// `uniform`): uniform over all N nodes, so a fraction 1/N of the messages are
    /// addressed to their source; such a message goes through the source's router from
    /// an injection engine to an ejection engine (0 hops). Wormhole switching only.
    UniformWithSelf,
    /// With probability `probability` a destination uniform among the other nodes within
    /// `radius` hops, otherwise uniform among the nodes farther away.
    SphereOfLocality {
        /// Radius of the sphere in hops.
        radius: u32,
        /// Probability of a destination inside the sphere.
        probability: f64,
    },
    /// Destination j ≠ source chosen with probability proportional to decay^(distance−1).
    DecreasingProbability {
        /// Ratio of the weights of successive distances, in (0, 1].
        decay: f64,
    },
    /// Destination is the bitwise complement of the source (every coordinate c → k−1−c
    /// on tori and meshes).
    BitComplement,
    /// Destination is the transpose: (x, y) → (y, x) on 2-D tori and meshes, the two
    /// halves of the address swapped on hypercubes of even dimension.
    Transpose,
    /// With probability `fraction` the destination is `node`, otherwise uniform.
    Hotspot {
        /// The hot node.
        node: u32,
        /// Fraction of messages sent to it.
        fraction: f64,
    },
    /// BookSim's `hotspot`: every message goes to one of the hot `nodes`, uniformly among
    /// those other than its source (a hot node that is the only one in the list creates
    /// nothing). Unlike `Hotspot`, no traffic is uniform.
    HotspotNodes {
        /// The hot nodes (distinct, at least one).
        nodes: Vec<u32>,
    },
    /// BookSim's `bitrev`: the destination's address bits are the source's reversed.
    /// Needs a power-of-two number of nodes.
    BitReverse,
    /// BookSim's `shuffle`: the source's address bits rotated left by one. Needs a
    /// power-of-two number of nodes.
    Shuffle,
    /// BookSim's `tornado` on a k-ary n-cube (torus or mesh): every coordinate c →
    /// (c + ⌈k/2⌉ − 1) mod k.
    Tornado,
    /// BookSim's `neighbor` on a k-ary n-cube (torus or mesh): every coordinate c →
    /// (c + 1) mod k.
    Neighbor,
    /// BookSim's `randperm`: a random permutation of the nodes drawn from
    /// `experiment.seed`, the same for every replication (as BookSim's `perm_seed`).
    RandomPermutation,
    /// The dragonfly's adversarial pattern (BookSim's `bad_dragon`): every terminal of
    /// group i sends to a terminal of group (i + 1) mod g drawn uniformly for each
    /// message. On a flattened butterfly the groups are the slices of equal first
    /// coordinate: router x sends to the routers of first coordinate (x₀ + 1) mod k.
    GroupShift,
}

/// Arrival processes of message creation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ArrivalProcess {
    /// Poisson process: exponential inter-creation times (continuous time, each message
    /// created in the cycle its arrival instant falls in).
    Poisson,
    /// Bernoulli: in each cycle a message is created with probability `rate` (≤ 1).
    Bernoulli,
    /// Saturated sources: at the start of every cycle a node tops its memory queue up to
    /// `depth` messages, so its link never idles for want of work; `rate` is not used.
    /// The accepted throughput of such a run is the network's maximum throughput. With
    /// timeout switching the depth matters: a reset worm rejoins the tail of its host's
    /// queue, so behind `depth` others it retries long after the link that blocked it
    /// was freed (paper 002's saturation, where the host queues grow without bound: use
    /// a deep queue, e.g. 64), while with depth 1 it comes back at once into the same
    /// busy link. Supported by timeout switching.
    Saturated {
        /// Messages each source keeps waiting (1 to 65536).
        depth: u32,
    },
    /// BookSim's `on_off` injection: a two-state Markov source stepped once per cycle.
    /// An idle source turns on with probability α = 1/`idle_mean`, an active one turns
    /// off with probability β = 1/`burst_mean`; while on it creates a message with
    /// probability `rate` · (α + β)/α, so the long-run rate is `rate`. Each source starts
    /// in the stationary state (on with probability α/(α + β)). Needs `rate` ≤
    /// `burst_mean` / (`burst_mean` + `idle_mean`).
    OnOff {
        /// Mean length of an on period, in cycles (≥ 1; BookSim's 1/`burst_beta`).
        burst_mean: f64,
        /// Mean length of an off period, in cycles (≥ 1; BookSim's 1/`burst_alpha`).
        idle_mean: f64,
    },
}

/// Experiment control.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExperimentConfig {
    /// Seed of all random streams.
    pub seed: u64,
    /// Independent replications (a 95% confidence interval needs at least 2).
    pub replications: u32,
    /// Cycles simulated before measurement starts.
    pub warmup: u64,
    /// How long the measurement window lasts.
    pub measure: Measure,
    /// Give up draining the measured messages after this many cycles past the window
    /// (the run is then reported as saturated).
    pub drain_limit: u64,
    /// The run is declared saturated when the messages waiting in source queues exceed
    /// this many per source (per endpoint: switches and routers that create nothing do
    /// not count) on average. Never applied to saturated sources
    /// (`workload.process = Saturated`), whose queues the depth bounds.
    pub saturation_backlog: f64,
    /// BookSim's `latency_thres`: a run (or a saturation probe) whose mean latency, in
    /// the definition `latency` asks for, exceeds this many cycles is saturated. None
    /// (the default): no latency bound, the backlog test alone (docs/saturation.md).
    pub latency_threshold: Option<f64>,
    /// Deadlock watchdog: stop when flits exist and none has moved for this many cycles.
    pub deadlock_cycles: u64,
    /// Worker threads per replication: the network is split into this many partitions
    /// (fewer when partitions would be too small to pay for the per-cycle barrier), cut
    /// as `partitioner` says. Results do not depend on it.
    pub threads: u32,
    /// Replications run side by side. Results do not depend on it.
    pub jobs: u32,
    /// Smallest partition worth a thread, in nodes: with fewer nodes per partition the
    /// run uses fewer partitions than `threads` (1 forces the split). None: the
    /// switching mode's own (`Network::MIN_PARTITION_NODES`: 128 for wormhole, 4096 for
    /// circuit switching, whose cycles carry far less work per node).
    pub partition_min_nodes: Option<u32>,
    /// How the network is cut into partitions (threads and MPI ranks). Results do not
    /// depend on it; the links the cut crosses, which every cycle's exchange carries, do.
    pub partitioner: Partitioner,
    /// Skip idle nodes and jump over cycles where nothing is scheduled (the results are
    /// identical either way; off is for checking that claim).
    pub idle_skip: bool,
    /// Where a message's latency starts and ends (wormhole switching; other modes accept
    /// only the default).
    pub latency: LatencyDef,
    /// Measurements in space and time (per link, per router, per interval, per message);
    /// all off by default. See docs/measurements.md.
    pub observe: ObserveConfig,
}

/// Measurements in space and time that a run takes besides the report's scalars: plain
/// data, read by the engine and the switching modes (`stats::observe` says what each
/// one measures). Everything is off by default, and off costs a predictable branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ObserveConfig {
    /// Per-link (`links`) and per-router (`routers`) arrays in the report.
    pub per_link: bool,
    /// Most rows the report's `links` and `routers` arrays list (the busiest ones, in
    /// node order); None lists every one. Totals always cover every link.
    pub max_links: Option<u32>,
    /// A time series (`series`) with intervals of this many cycles, anchored at the end
    /// of the warm-up.
    pub interval: Option<u64>,
    /// Record every delivered message, with its path, for the per-message log.
    pub message_log: bool,
}

/// Default bound of the report's per-link and per-router arrays: a 64×64 torus's links
/// fit, a large hypercube's do not.
pub const DEFAULT_MAX_LINKS: u32 = 16_384;

impl Default for ObserveConfig {
    fn default() -> Self {
        ObserveConfig {
            per_link: false,
            max_links: Some(DEFAULT_MAX_LINKS),
            interval: None,
            message_log: false,
        }
    }
}

/// The definition of a message's latency: from `from` to `to`. The default, creation to
/// tail delivered into memory, is what every mode measures; paper 004's simulator counts
/// one cycle less (see docs/models.md, paper 004).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LatencyDef {
    /// Origin.
    pub from: LatencyFrom,
    /// End.
    pub to: LatencyTo,
}

/// Origin of the latency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LatencyFrom {
    /// The message is created at its source (includes source queueing).
    #[default]
    Creation,
    /// Its head flit leaves the source router (wins the source's crossbar).
    HeadInjected,
}

/// End of the latency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LatencyTo {
    /// The tail flit is written into the destination's memory.
    #[default]
    TailDelivered,
    /// The tail flit leaves the destination router's crossbar, the ejection channel's
    /// latency (`router.ni.ejection_latency`, 1 cycle by default) before it is in memory.
    TailArrived,
}

impl Default for ExperimentConfig {
    fn default() -> Self {
        ExperimentConfig {
            seed: 1,
            replications: 1,
            warmup: 10_000,
            measure: Measure::Cycles(50_000),
            drain_limit: 200_000,
            saturation_backlog: 50.0,
            latency_threshold: None,
            deadlock_cycles: 20_000,
            threads: 1,
            jobs: 1,
            partition_min_nodes: None,
            partitioner: Partitioner::Contiguous,
            idle_skip: true,
            latency: LatencyDef::default(),
            observe: ObserveConfig::default(),
        }
    }
}

/// How a network is cut into partitions (`engine::partitioner`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Partitioner {
    /// Contiguous ranges of node numbers: slabs of consecutive rows of a torus or mesh,
    /// subcubes along a hypercube's highest dimensions.
    #[default]
    Contiguous,
    /// Blocks: recursive bisection of the node grid (torus, mesh, Manhattan Street,
    /// hypercube as a 2×…×2 grid), each cut across the box's longest side, first between
    /// MPI ranks, then between a rank's threads; fewer links cross partitions than with
    /// slabs once a torus has more than a few partitions, or a mesh more than two.
    Blocks,
}

/// Length of the measurement window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Measure {
    /// Measure the messages created during this many cycles after warm-up.
    Cycles(u64),
    /// Measure the first this-many messages created after warm-up, completed to the end
    /// of the cycle in which the last of them was created (every message of that cycle
    /// is measured, so the set does not depend on the order nodes are stepped in).
    Messages(u64),
}

//! Routing functions of wormhole switching: which output ports and which virtual
//! channels a header may request at each node. Deterministic routing is in [`dor`], the
//! choice among adaptive candidates in [`selection`]. Port numbering and distances come
//! from `topology/`; the allocation of the chosen channels is the router's job.
//!
//! Virtual-channel classes (V = `router.vcs` channels per network port):
//!
//! | routing | torus | mesh, hypercube |
//! |---|---|---|
//! | dimension order | class 0 = even VCs, class 1 = odd VCs (dateline) | all VCs |
//! | adaptive | escape VC 0 (class 0) and VC 1 (class 1); adaptive VCs 2..V | escape VC 0; adaptive VCs 1..V |
//! | turn models (2-D mesh only) | — | all VCs, any permitted port |
//! | XY-YX (mesh only) | — | XY messages VCs 0..V/2, YX messages V/2..V |
//! | Valiant, ROMM | phase 1 VCs 0..V/2, phase 2 V/2..V, each half in dateline classes (or split, `WrapSplit`) | phase 1 VCs 0..V/2, phase 2 V/2..V |
//! | MinAdapt (BookSim's min_adapt) | escape VC 0 or 1 (split per ring), adaptive VC 3 | escape VC 0; adaptive VCs 1..V |
//!
//! | routing | dragonfly | flattened butterfly |
//! |---|---|---|
//! | Minimal | VCs 0..V/2 before the global hop, V/2..V on and after it ([`dragonfly`]) | all VCs, dimension order |
//! | DimensionOrder | — (use Minimal) | as Minimal |
//! | Adaptive | — | escape VC 0 (dimension order); adaptive VCs 1..V |
//! | Valiant | VCs 0..V/3 to the intermediate group, V/3..2V/3 from it to the global hop towards the destination, 2V/3..V from that hop on ([`dragonfly`]) | phase 1 VCs 0..V/2, phase 2 V/2..V |
//! | Valiant, `valiant_intermediate: Router` | VCs in quarters: to the intermediate group, to the intermediate router, from it to the global hop, from that hop on ([`dragonfly`]) | as Valiant |
//! | UgalLocal | as Valiant; at the source router BookSim's rule (used credits of the two first hops' ports) picks the minimal route (classes 1–2) or Valiant's (class 0) | as Valiant; the minimal route on phase 2's VCs |
//! | UgalGlobal | as UgalLocal, the rule reading the used credits of the two routes' global channels out of the source group | — (use UgalLocal) |
//!
//! Under concentration (`topology::concentration`) the terminal links take every VC and
//! the router network's rows above hold between the routers; ROMM, MinAdapt, XY-YX and
//! the turn models are not defined there, nor Valiant on concentrated meshes and tori.
//!
//! Under request/reply traffic (`workload.reply`) every row above holds inside each
//! message class's half of the VCs: the function is built for V/2 VCs and a reply's
//! masks are shifted into `V/2..V` ([`Route::in_class`]).
//!
//! Dateline rule: in each ring, a message whose remaining path still crosses the
//! wrap-around link uses class 0; one that has crossed it (known from its source, since
//! minimal routes move one way per ring) uses class 1; one whose path in that ring never
//! touches the wrap-around link may use either class. Class 0 is then never used on the
//! hop after the wrap-around link and class 1 never on the wrap-around link itself, so
//! neither class's dependencies close a ring and the channel dependency graph is acyclic
//! (Dally & Seitz). Letting the never-crossing messages — most of them — use both
//! classes spreads the load over all VCs instead of pinning each message to half of them.
//! `TorusVcs::WrapSplit` replaces the dateline classes with BookSim's `dim_order_torus`
//! rule: the VCs of a port are split into a lower half `0..V/2` and an upper half
//! `V/2..V`, and a message keeps one half for its whole way round a ring, chosen by
//! whether its path in that ring crosses the wrap-around link (upwards: crossing → upper,
//! otherwise lower; downwards the reverse, as BookSim numbers them). Minimal paths that
//! cross the wrap-around link never use the link opposite it, and those that do not never
//! use the wrap-around link, so neither half closes a ring. Every message then uses half
//! the VCs, where the dateline rule lets the never-crossing messages use all of them.
//! Adaptive routing follows Duato:
//! any minimal port on an adaptive VC, or the dimension-order port on its escape VC.
//! A message on an escape VC may return to adaptive VCs at the next router, which
//! Duato's theory allows. `unsafe_routing` drops the classes: every VC is usable by any
//! message (dimension order without dateline, adaptive without escape channels, XY-YX
//! with both orders on every VC).
//!
//! The turn models ([`turn`]: west-first, north-last, negative-first, odd-even) are
//! deadlock-free by the turns they forbid, so they need no classes: a header's candidates
//! are the permitted minimal ports, each on every VC, chosen among by the selection
//! function as adaptive candidates are. XY-YX gives each message XY or YX order by a hash
//! of its id and the run's seed and replication (a fair coin per message, fixed when it
//! is injected and the same at every router, with no state in the header), and each
//! order its own half of the VCs, so the two orders' dependencies never meet.
//!
//! Valiant and ROMM ([`oblivious`]) route in dimension order to an intermediate node
//! drawn from the message's id the same way, then to the destination; the header carries
//! the phase ([`RouteState`]), and each phase has its own half of the VCs, split again
//! on a torus as dimension order splits all of them. BookSim's `min_adapt`
//! ([`min_adapt`]) is `Adaptive` with one adaptive VC on a torus and escape for good:
//! the header records that the message took an escape VC.

pub mod channel_load;
pub mod deflection;
pub mod dor;
pub mod dragonfly;
pub mod min_adapt;
pub mod oblivious;
pub mod selection;
pub mod turn;

use crate::config::{Routing, TorusTie, TorusVcs, ValiantIntermediate};
use crate::foundation::error::{Error, Result};
use crate::foundation::types::{MsgId, NodeId, PortId};
use crate::topology::Topology;
use dor::Dateline;

/// Bit mask of virtual channels of one port (at most 64 per port).
pub type VcMask = u64;

/// Largest number of virtual channels (or DMA engines) per port.
pub const MAX_VCS: u32 = 64;

/// The channels a header may request at one router.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Zeroable)]
pub struct Route {
    /// Ports on a minimal path usable on the adaptive VCs (empty for deterministic routing).
    pub adaptive_ports: u64,
    /// Mask of the adaptive VCs (the same on every port).
    pub adaptive_vcs: VcMask,
    /// The deterministic (dimension-order) port: the only one for deterministic routing,
    /// the escape port for adaptive routing.
    pub escape_port: PortId,
    /// VCs usable on `escape_port` (the class the dateline rule allows).
    pub escape_vcs: VcMask,
}

/// What a header carries from router to router for the routings that need it, as bits
/// of one byte; empty when the message is injected.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    bytemuck::Zeroable,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct RouteState(u8);

impl RouteState {
    const PHASE2: u8 = 1;
    const ESCAPED: u8 = 2;

    /// Valiant/ROMM: the message has reached its intermediate node and is in phase 2.
    #[inline]
    pub fn phase2(self) -> bool {
        self.0 & Self::PHASE2 != 0
    }

    /// Marks the message as in phase 2.
    #[inline]
    pub fn set_phase2(&mut self) {
        self.0 |= Self::PHASE2;
    }

    /// MinAdapt: the message has taken an escape VC and keeps to escape VCs.
    #[inline]
    pub fn escaped(self) -> bool {
        self.0 & Self::ESCAPED != 0
    }

    /// Marks the message as escaped.
    #[inline]
    pub fn set_escaped(&mut self) {
        self.0 |= Self::ESCAPED;
    }
}

impl Route {
    /// This route moved into message class `class`'s VCs (request/reply traffic,
    /// `workload.reply`), for a routing function built for `per_class` VCs per port:
    /// class c uses VCs c·per_class .. (c+1)·per_class of every network port, so the
    /// classes never share a VC and each keeps the routing's own classes (dateline,
    /// escape) inside its range. Class 0 (and any class with `per_class` 0) is the route
    /// as it was. The ejection route (the local port's DMA engines) is not shifted.
    #[inline]
    pub fn in_class(self, class: u8, per_class: u32) -> Route {
        let shift = class as u32 * per_class;
        Route {
            adaptive_vcs: self.adaptive_vcs << shift,
            escape_vcs: self.escape_vcs << shift,
            ..self
        }
    }
}

/// A routing function bound to a topology and a VC count.
#[derive(Clone, Debug)]
pub struct RoutingFn {
    kind: Routing,
    /// Dateline classes in use (torus, safe routing).
    dateline: bool,
    /// Escape channels in use (adaptive, safe routing).
    escape: bool,
    /// BookSim's halves instead of dateline classes (dimension order on a torus).
    split: bool,
    /// Two halves of the VCs in use (safe routing): XY-YX's two orders, Valiant's and
    /// ROMM's two phases.
    halves: bool,
    /// Mixed into a message's id to choose its XY-YX order, its Valiant/ROMM
    /// intermediate node and its torus ties (seed and replication).
    salt: u64,
    /// Ties of offset k/2 on an even ring broken by a coin per message (BookSim's rule).
    coin_ties: bool,
    /// The dragonfly's two VC classes (minimal routing, safe).
    dragonfly: bool,
    /// A concentrated network or a dragonfly: routes of their own ([`RoutingFn::route_today`]).
    today: bool,
    /// A dragonfly or a flattened butterfly (any concentration): Valiant of their own
    /// ([`dragonfly`]).
    today_net: bool,
    /// Dragonfly `Valiant`/`UgalLocal`/`UgalGlobal`: the intermediate is a router (VC classes in
    /// quarters), not a group (thirds).
    by_router: bool,
    /// `UgalLocal`, `UgalGlobal`: flits of downstream buffer behind one output port (its
    /// VCs' buffers summed), so that free credits give the used ones.
    port_flits: u32,
    vcs: u32,
}

fn mask(range: std::ops::Range<u32>) -> VcMask {
    range.fold(0, |m, v| m | (1 << v))
}

impl RoutingFn {
    /// Fewest VCs per port the routing needs to be deadlock-free on this topology, with
    /// `intermediate` as what dragonfly `Valiant` and `UgalLocal` draw.
    pub fn min_vcs(
        topology: &Topology,
        kind: Routing,
        unsafe_routing: bool,
        intermediate: ValiantIntermediate,
    ) -> u32 {
        let torus = matches!(topology.router_net(), Topology::Torus(_));
        let by_router = intermediate == ValiantIntermediate::Router;
        match (kind, unsafe_routing, torus) {
            (_, true, _) => 1,
            // Four classes with a local hop to the intermediate router (module `dragonfly`).
            (Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal, false, _)
                if topology.dragonfly().is_some() && by_router =>
            {
                4
            }
            // Dragonfly: VC classes 0 and 1 (before and from the global hop); flattened
            // butterfly: dimension order in one class.
            (Routing::Minimal, false, _) => {
                if topology.dragonfly().is_some() {
                    2
                } else {
                    1
                }
            }
            // Dragonfly: three classes (module `dragonfly`); flattened butterfly: a half
            // of the VCs per phase.
            (Routing::Valiant, false, _) if topology.dragonfly().is_some() => 3,
            (Routing::UgalLocal | Routing::UgalGlobal, false, _)
                if topology.dragonfly().is_some() =>
            {
                3
            }
            (Routing::UgalLocal | Routing::UgalGlobal, false, _) => 2,
            (Routing::XyYx, false, _) => 2,
            (
                Routing::WestFirst | Routing::NorthLast | Routing::NegativeFirst | Routing::OddEven,
                false,
                _,
            ) => 1,
            (Routing::DimensionOrder, false, true) => 2,
            (Routing::DimensionOrder, false, false) => 1,
            (Routing::Adaptive, false, true) => 3,
            (Routing::Adaptive, false, false) => 2,
            (Routing::Valiant | Routing::Romm, false, true) => 4,
            (Routing::Valiant | Routing::Romm, false, false) => 2,
            // BookSim's min_adapt_torus: escape VCs 0 and 1, adaptive VC 3.
            (Routing::MinAdapt, false, true) => 4,
            (Routing::MinAdapt, false, false) => 2,
        }
    }

    /// Binds a routing function, checking that the topology supports it and that there
    /// are enough virtual channels; dragonfly `Valiant` and `UgalLocal` draw an
    /// intermediate group ([`RoutingFn::build`] for the other choice).
    pub fn new(topology: &Topology, kind: Routing, unsafe_routing: bool, vcs: u32) -> Result<Self> {
        Self::build(
            topology,
            kind,
            unsafe_routing,
            vcs,
            ValiantIntermediate::Group,
        )
    }

    /// [`RoutingFn::new`] with `intermediate` as what dragonfly `Valiant` and `UgalLocal`
    /// draw (`switching.valiant_intermediate`).
    pub fn build(
        topology: &Topology,
        kind: Routing,
        unsafe_routing: bool,
        vcs: u32,
        intermediate: ValiantIntermediate,
    ) -> Result<Self> {
        let new_net = topology.dragonfly().is_some() || topology.flatfly().is_some();
        if kind == Routing::Minimal && !new_net {
            return Err(Error::config(format!(
                "Minimal routing is the dragonfly's and the flattened butterfly's; this machine \
                 is {} — use DimensionOrder (minimal) or Adaptive routing there",
                topology.describe()
            )));
        }
        if kind == Routing::UgalLocal && !new_net {
            return Err(Error::config(format!(
                "UgalLocal routing is the dragonfly's and the flattened butterfly's; this \
                 machine is {} — use Adaptive or Valiant there",
                topology.describe()
            )));
        }
        if kind == Routing::UgalGlobal && topology.dragonfly().is_none() {
            return Err(Error::config(if topology.flatfly().is_some() {
                "UgalGlobal routing is the dragonfly's: on the flattened butterfly the \
                 minimal route's and Valiant's first channels both leave the source router, \
                 whose used credits UgalLocal reads already — use UgalLocal there"
                    .to_string()
            } else {
                format!(
                    "UgalGlobal routing is the dragonfly's (it reads the global channels of \
                     the source's group); this machine is {} — use Adaptive or Valiant there",
                    topology.describe()
                )
            }));
        }
        if topology.dragonfly().is_some()
            && !matches!(
                kind,
                Routing::Minimal | Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal
            )
        {
            return Err(Error::config(format!(
                "{kind:?} routing is not defined on the dragonfly; use Minimal \
                 (local–global–local, BookSim's min_dragonflynew), Valiant, UgalLocal or \
                 UgalGlobal"
            )));
        }
        let concentrated = matches!(topology, Topology::Concentrated(_));
        if (concentrated || new_net)
            && !matches!(
                kind,
                Routing::Minimal | Routing::DimensionOrder | Routing::Adaptive
            )
            && !(new_net && (kind == Routing::Valiant || kind.is_ugal()))
        {
            return Err(Error::config(format!(
                "{kind:?} routing is not defined on {} yet; use DimensionOrder, Adaptive or \
                 (dragonfly, flattened butterfly) Minimal or Valiant",
                topology.describe()
            )));
        }
        if let Topology::ManhattanStreet(_) = topology {
            return Err(Error::config(
                "wormhole routing with blocking (dimension order or adaptive) is not defined on \
                 the Manhattan Street network: its one-way links form cycles that no dimension \
                 order breaks; paper 003 uses deflection switching there",
            ));
        }
        let mesh_dims = match topology {
            Topology::Mesh(m) => Some(m.grid.n),
            _ => None,
        };
        if turn::is_turn_model(kind) && mesh_dims != Some(2) {
            return Err(Error::config(format!(
                "{kind:?} routing is a turn model of 2-D meshes (its forbidden turns are \
                 named by the four compass directions); this machine is {} — use \
                 DimensionOrder or Adaptive routing there",
                topology.describe()
            )));
        }
        if kind == Routing::XyYx && mesh_dims.is_none() {
            return Err(Error::config(format!(
                "XyYx routing (BookSim's xy_yx_mesh) is defined on meshes; this machine is \
                 {} — use DimensionOrder or Adaptive routing there",
                topology.describe()
            )));
        }
        let grid_net = matches!(topology, Topology::Mesh(_) | Topology::Torus(_));
        if matches!(kind, Routing::Valiant | Routing::Romm | Routing::MinAdapt)
            && !grid_net
            && !(new_net && kind == Routing::Valiant)
        {
            return Err(Error::config(format!(
                "{kind:?} routing is defined on meshes and tori (as BookSim's {}); this \
                 machine is {} — use DimensionOrder or Adaptive routing there",
                match kind {
                    Routing::Valiant => "valiant_mesh and valiant_torus",
                    Routing::Romm => "romm_mesh",
                    _ => "min_adapt_mesh and min_adapt_torus",
                },
                topology.describe()
            )));
        }
        let need = Self::min_vcs(topology, kind, unsafe_routing, intermediate);
        let by_router = intermediate == ValiantIntermediate::Router;
        if vcs < need {
            let why = match (kind, matches!(topology.router_net(), Topology::Torus(_))) {
                (Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal, _)
                    if topology.dragonfly().is_some() && by_router =>
                {
                    "valiant_intermediate: Router: VC class 0 to the intermediate group, \
                     class 1 to the intermediate router, class 2 from it to the global hop \
                     towards the destination, class 3 from that hop on; BookSim's 3 VCs of \
                     ugal_dragonflynew, one per phase, have a dependency cycle"
                }
                (Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal, _)
                    if topology.dragonfly().is_some() =>
                {
                    "VC class 0 to the intermediate group, class 1 from it to the global hop \
                     towards the destination, class 2 from that hop on: BookSim's VCs 0, 1 \
                     and 2 of ugal_dragonflynew"
                }
                (Routing::Minimal, _) => {
                    "VC class 0 before the global hop and class 1 from it on, BookSim's VCs \
                     0 and 1 of min_dragonflynew"
                }
                (Routing::DimensionOrder, true) => "two dateline classes on a torus",
                (Routing::DimensionOrder, false) => "one channel",
                (Routing::Adaptive, true) => {
                    "two escape channels (dateline classes) plus one adaptive channel on a torus"
                }
                (Routing::Adaptive, false) => "one escape channel plus one adaptive channel",
                (Routing::XyYx, _) => "one channel for XY messages and one for YX messages",
                (Routing::Valiant | Routing::Romm, true) => {
                    "two VCs per phase, each pair split by the torus's ring rule (dateline \
                     or wrap split)"
                }
                (Routing::Valiant | Routing::Romm | Routing::UgalLocal, false) => {
                    "one VC per phase"
                }
                (Routing::MinAdapt, true) => {
                    "escape VCs 0 and 1 and BookSim's adaptive VC 3 (VC 2 unused)"
                }
                (Routing::MinAdapt, false) => "one escape channel plus one adaptive channel",
                _ => "one channel",
            };
            return Err(Error::config(format!(
                "router.vcs = {vcs}: {kind:?} routing on this topology needs at least {need} \
                 virtual channels per port ({why})"
            )));
        }
        if vcs > MAX_VCS {
            return Err(Error::config(format!(
                "router.vcs = {vcs}: at most {MAX_VCS} virtual channels per port"
            )));
        }
        Ok(RoutingFn {
            kind,
            dateline: !unsafe_routing && matches!(topology.router_net(), Topology::Torus(_)),
            dragonfly: !unsafe_routing && topology.dragonfly().is_some(),
            today: concentrated || topology.dragonfly().is_some(),
            today_net: new_net,
            escape: !unsafe_routing && matches!(kind, Routing::Adaptive | Routing::MinAdapt),
            split: false,
            halves: !unsafe_routing
                && matches!(
                    kind,
                    Routing::XyYx
                        | Routing::Valiant
                        | Routing::Romm
                        | Routing::UgalLocal
                        | Routing::UgalGlobal
                ),
            salt: 0,
            coin_ties: false,
            by_router: by_router && topology.dragonfly().is_some(),
            port_flits: 0,
            vcs,
        })
    }

    /// Gives `UgalLocal` and `UgalGlobal` the flits of downstream buffer behind each
    /// output port (VCs per port × `router.buffer_flits`): their rule reads used credits
    /// as this minus the port's free credits.
    pub fn with_port_flits(mut self, flits: u32) -> Self {
        self.port_flits = flits;
        self
    }

    /// Chooses how dimension-order routing, and each phase of Valiant and ROMM, splits a
    /// torus's VCs (no effect on other topologies, on adaptive routing or with unsafe
    /// routing).
    pub fn with_torus_vcs(mut self, rule: TorusVcs) -> Self {
        self.split = rule == TorusVcs::WrapSplit
            && self.dateline
            && matches!(
                self.kind,
                Routing::DimensionOrder | Routing::Valiant | Routing::Romm
            );
        self
    }

    /// Chooses how dimension order breaks the tie of an offset of k/2 on an even ring
    /// (tori only; the escape port of adaptive routing follows the same rule).
    pub fn with_torus_tie(mut self, rule: TorusTie) -> Self {
        self.coin_ties = rule == TorusTie::Random;
        self
    }

    /// The tie rule of message `id`: its coin (one bit per dimension), a pure function of
    /// its id and the salt, or the parity rule.
    #[inline]
    fn tie(&self, id: MsgId) -> dor::Tie {
        if self.coin_ties {
            dor::Tie::Coin(mix(id.0 ^ self.salt ^ 0x7469_6573))
        } else {
            dor::Tie::Parity
        }
    }

    /// Salts XY-YX's per-message choice of order and Valiant's and ROMM's choice of
    /// intermediate node with the run's seed and replication, so replications draw
    /// independent ones (no effect on other routings).
    pub fn with_salt(mut self, seed: u64, rep: u32) -> Self {
        self.salt = mix(seed ^ mix(rep as u64 ^ 0x5859_5958));
        self
    }

    /// Whether message `id` goes in XY order (else YX) under `XyYx`: a fair coin per
    /// message, a pure function of its id and the salt.
    #[inline]
    pub fn xy_order(&self, id: MsgId) -> bool {
        mix(id.0 ^ self.salt) & 1 == 0
    }

    /// The half of the VCs BookSim's `dim_order_torus` gives a message going `up` (or
    /// down) whose path in the ring crosses the wrap-around link or not.
    fn split_vcs(&self, crosses: bool, up: bool) -> VcMask {
        self.half(true, crosses == up)
    }

    /// Every VC unless `split`; split, the upper half of the VCs when `upper`, else the
    /// lower: the two classes of the routings that keep two (XY-YX's orders, the
    /// dragonfly's minimal classes, a two-phase route's phases).
    pub(crate) fn half(&self, split: bool, upper: bool) -> VcMask {
        let half = self.vcs / 2;
        match (split, upper) {
            (false, _) => mask(0..self.vcs),
            (true, false) => mask(0..half),
            (true, true) => mask(half..self.vcs),
        }
    }

    /// The routing function's kind.
    pub fn kind(&self) -> Routing {
        self.kind
    }

    /// VCs of the deterministic/escape channels for a message of dateline class `class`.
    fn class_vcs(&self, class: Dateline) -> VcMask {
        let allowed = |v: u32| match class {
            Dateline::Before => v.is_multiple_of(2),
            Dateline::After => v % 2 == 1,
            Dateline::Never => true,
        };
        match (self.kind, self.dateline, self.escape) {
            (Routing::DimensionOrder, true, _) => (0..self.vcs)
                .filter(|&v| allowed(v))
                .fold(0, |m, v| m | 1 << v),
            (Routing::DimensionOrder | Routing::Minimal, false, _) => mask(0..self.vcs),
            (Routing::Adaptive, true, true) => {
                (0..2).filter(|&v| allowed(v)).fold(0, |m, v| m | 1 << v)
            }
            (Routing::Adaptive, false, true) => 1,
            (Routing::Adaptive, _, false) => 0,
            // Their own VC rules are in `route`.
            _ => mask(0..self.vcs),
        }
    }

    /// Mask of the adaptive VCs.
    fn adaptive_vcs(&self) -> VcMask {
        match (self.kind, self.escape, self.dateline) {
            (Routing::DimensionOrder | Routing::XyYx | Routing::Minimal, _, _) => 0,
            (Routing::UgalLocal | Routing::UgalGlobal, _, _) => 0,
            (Routing::Adaptive, false, _) => mask(0..self.vcs),
            (
                Routing::WestFirst | Routing::NorthLast | Routing::NegativeFirst | Routing::OddEven,
                _,
                _,
            ) => mask(0..self.vcs),
            (Routing::Adaptive, true, true) => mask(2..self.vcs),
            (Routing::Adaptive, true, false) => mask(1..self.vcs),
            (Routing::Valiant | Routing::Romm, _, _) => 0,
            (Routing::MinAdapt, false, _) => mask(0..self.vcs),
            // BookSim's min_adapt_torus offers VC 3 alone (VC 2 is never used).
            (Routing::MinAdapt, true, true) => 1 << 3,
            (Routing::MinAdapt, true, false) => mask(1..self.vcs),
        }
    }

    /// The candidates of a header of message `id` at `cur` bound for `dst` (`cur != dst`)
    /// for a message in its initial [`RouteState`] (Valiant/ROMM in phase 1, MinAdapt not
    /// escaped): [`RoutingFn::route_msg`] without the state.
    #[inline]
    pub fn route(&self, topology: &Topology, cur: NodeId, dst: NodeId, id: MsgId) -> Route {
        self.route_msg(topology, cur, dst, id, &mut RouteState::default())
    }

    /// The candidates of a header of message `id` at `cur` bound for `dst` whose header
    /// carries `state` and is not delivered at `cur` ([`RoutingFn::delivers`]); updates `state` where this router changes it (a
    /// Valiant/ROMM message at its intermediate node enters phase 2). A network whose
    /// output ports hold no flits (`UgalLocal` and `UgalGlobal` then go minimal):
    /// [`RoutingFn::route_msg_with`] with every port's credits free.
    #[inline]
    pub fn route_msg(
        &self,
        topology: &Topology,
        cur: NodeId,
        dst: NodeId,
        id: MsgId,
        state: &mut RouteState,
    ) -> Route {
        let free = self.port_flits;
        self.route_msg_with(topology, cur, dst, id, state, |_, _| free)
    }

    /// [`RoutingFn::route_msg`] where output port p of router r has
    /// `free_credits(r, p)` credits free, summed over its VCs — what `UgalLocal` decides
    /// by at the source router, reading that router's ports (BookSim's `GetUsedCredit`
    /// is [`RoutingFn::with_port_flits`] minus it), and `UgalGlobal`, reading the global
    /// ports of gateway routers of the source's group (module [`dragonfly`]); the other
    /// routings never call it. The caller gives every router the same view of another
    /// router's credits in a cycle, whatever order it steps them in.
    #[inline]
    pub fn route_msg_with(
        &self,
        topology: &Topology,
        cur: NodeId,
        dst: NodeId,
        id: MsgId,
        state: &mut RouteState,
        free_credits: impl Fn(NodeId, u32) -> u32,
    ) -> Route {
        match self.kind {
            Routing::Valiant | Routing::UgalLocal | Routing::UgalGlobal if self.today_net => {
                let used = |r: NodeId, p: u32| self.port_flits.saturating_sub(free_credits(r, p));
                return self.route_valiant_today(topology, cur, dst, id, state, used);
            }
            Routing::Valiant | Routing::Romm => {
                return self.route_two_phase(topology, cur, dst, id, state)
            }
            Routing::MinAdapt => {
                return self.route_min_adapt(topology, cur, dst, id.src(), state.escaped())
            }
            _ => {}
        }
        let src = id.src();
        if self.today {
            if let Some(r) = self.route_today(topology, cur, dst, src) {
                return r;
            }
        }
        if let Topology::Mesh(m) = topology {
            if turn::is_turn_model(self.kind) {
                let ports = turn::permitted(self.kind, &m.grid, cur.0, dst.0, src.0);
                return Route {
                    adaptive_ports: ports,
                    adaptive_vcs: self.adaptive_vcs(),
                    escape_port: PortId(ports.trailing_zeros() as u8),
                    escape_vcs: 0,
                };
            }
            if self.kind == Routing::XyYx {
                let xy = self.xy_order(id);
                let port = if xy {
                    dor::dor_step(topology, cur, dst, src).0
                } else {
                    dor::mesh_step_descending(&m.grid, cur, dst)
                };
                return Route {
                    adaptive_ports: 0,
                    adaptive_vcs: 0,
                    escape_port: port,
                    escape_vcs: self.half(self.halves, !xy),
                };
            }
        }
        let (port, class) = dor::dor_step_tie(topology, cur, dst, src, self.tie(id));
        if self.split {
            if let Topology::Torus(t) = topology.router_net() {
                let up = t.port_dim(port.0 as u32).1;
                return Route {
                    adaptive_ports: 0,
                    adaptive_vcs: 0,
                    escape_port: port,
                    escape_vcs: self.split_vcs(class != Dateline::Never, up),
                };
            }
        }
        let adaptive_ports = match self.kind {
            Routing::Adaptive => topology.minimal_ports(cur, dst).data[0],
            _ => 0,
        };
        Route {
            adaptive_ports,
            adaptive_vcs: self.adaptive_vcs(),
            escape_port: port,
            escape_vcs: self.class_vcs(class),
        }
    }

    /// The route of the networks of today where it is their own: a terminal link under
    /// concentration (every VC), the dragonfly's minimal route in its two classes; None
    /// where the router network's routing applies (kept out of `route_msg`, which the
    /// papers' networks take on every header).
    #[inline(never)]
    fn route_today(
        &self,
        topology: &Topology,
        cur: NodeId,
        dst: NodeId,
        src: NodeId,
    ) -> Option<Route> {
        if let Topology::Concentrated(c) = topology {
            // Terminal links are the first and last channels of every path: every VC.
            if let Some(p) = c.terminal_step(cur.0, dst.0) {
                return Some(Route {
                    adaptive_ports: 0,
                    adaptive_vcs: 0,
                    escape_port: PortId(p as u8),
                    escape_vcs: mask(0..self.vcs),
                });
            }
        }
        let d = topology.dragonfly()?;
        let (s, t) = (topology.router_of(src), topology.router_of(dst));
        let (port, after) = dragonfly::min_step(d, cur, t, s);
        Some(Route {
            adaptive_ports: 0,
            adaptive_vcs: 0,
            escape_port: port,
            escape_vcs: self.half(self.dragonfly, after),
        })
    }

    /// Whether a header at `here` is delivered there: at its destination, unless a
    /// Valiant/ROMM message in phase 1 passes its destination on the way to its
    /// intermediate node (it goes on, and comes back in phase 2, as in BookSim).
    #[inline]
    pub fn delivers(
        &self,
        topology: &Topology,
        here: NodeId,
        dst: NodeId,
        id: MsgId,
        state: &RouteState,
    ) -> bool {
        if self.today_net && here == dst && (self.kind == Routing::Valiant || self.kind.is_ugal()) {
            // A terminal is reached in phase 2 only; a dragonfly's phase 1 never reaches
            // the destination's router; a flattened butterfly's may pass it.
            return state.phase2()
                || self.today
                || dragonfly::valiant_intermediate(topology, self.salt, id) == here.0
                || (self.kind.is_ugal() && id.src() == here);
        }
        here == dst
            && (state.phase2()
                || !matches!(self.kind, Routing::Valiant | Routing::Romm)
                || self.intermediate(topology, id, dst) == dst)
    }

    /// Records in `state` what the message's taking VC `vc` on leaving a router whose
    /// candidates were `route` means for its later hops: a MinAdapt message that takes a
    /// VC outside the adaptive ones is on an escape VC and stays on escape VCs; nothing
    /// for the other routings.
    #[inline]
    pub fn after_hop(&self, route: &Route, vc: usize, state: &mut RouteState) {
        if self.kind == Routing::MinAdapt && route.adaptive_vcs >> vc & 1 == 0 {
            state.set_escaped();
        }
    }
}

/// SplitMix64's finaliser: spreads every input bit over the output.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    fn torus(k: u32) -> Topology {
        Topology::from_config(&TopologyConfig::Torus {
            k,
            n: 2,
            bidirectional: true,
            c: 1,
        })
        .unwrap()
    }

    #[test]
    fn too_few_vcs_are_rejected_with_the_reason() {
        let t = torus(4);
        let err = RoutingFn::new(&t, Routing::DimensionOrder, false, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("dateline"), "{err}");
        let err = RoutingFn::new(&t, Routing::Adaptive, false, 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("escape"), "{err}");
        assert!(RoutingFn::new(&t, Routing::Adaptive, true, 1).is_ok());
        assert!(RoutingFn::new(&t, Routing::Adaptive, false, 65).is_err());
    }

    #[test]
    fn a_reply_route_keeps_the_routing_classes_inside_the_upper_half_of_the_vcs() {
        let t = torus(8);
        // Each message class has 2 of the port's 4 VCs: the dateline classes inside them.
        let r = RoutingFn::new(&t, Routing::DimensionOrder, false, 2).unwrap();
        let id = MsgId::new(NodeId(6), 0);
        let before = r.route(&t, NodeId(6), NodeId(1), id);
        let after = r.route(&t, NodeId(0), NodeId(1), id);
        assert_eq!((before.escape_vcs, after.escape_vcs), (0b01, 0b10));
        assert_eq!(before.in_class(0, 2), before, "requests keep VCs 0..2");
        let reply = before.in_class(1, 2);
        assert_eq!(reply.escape_port, before.escape_port);
        assert_eq!(reply.escape_vcs, 0b0100);
        assert_eq!(after.in_class(1, 2).escape_vcs, 0b1000);
        // Adaptive: escape VCs and adaptive VCs shift alike.
        let a = RoutingFn::new(&t, Routing::Adaptive, false, 3).unwrap();
        let route = a.route(&t, NodeId(0), NodeId(9), id);
        let shifted = route.in_class(1, 3);
        assert_eq!(shifted.adaptive_vcs, route.adaptive_vcs << 3);
        assert_eq!(shifted.adaptive_ports, route.adaptive_ports);
        assert_eq!(shifted.escape_vcs & 0b111, 0);
    }

    #[test]
    fn dor_on_torus_uses_class_zero_before_the_wrap_and_class_one_after() {
        let t = torus(8);
        let r = RoutingFn::new(&t, Routing::DimensionOrder, false, 4).unwrap();
        // From x=6 to x=1 going up crosses the wrap (6→7→0→1): class 0 = VCs {0, 2}.
        let route = r.route(&t, NodeId(6), NodeId(1), MsgId::new(NodeId(6), 0));
        assert_eq!(route.escape_port, PortId(0));
        assert_eq!(route.escape_vcs, 0b0101);
        // The same message at x=0 has crossed: class 1 = VCs {1, 3}.
        let route = r.route(&t, NodeId(0), NodeId(1), MsgId::new(NodeId(6), 0));
        assert_eq!(route.escape_vcs, 0b1010);
        // A message from x=0 to x=1 never meets the wrap: any VC.
        let route = r.route(&t, NodeId(0), NodeId(1), MsgId::new(NodeId(0), 0));
        assert_eq!(route.escape_vcs, 0b1111);
    }

    #[test]
    fn wrap_split_gives_each_message_one_half_for_its_whole_ring() {
        let t = torus(8);
        let r = RoutingFn::new(&t, Routing::DimensionOrder, false, 4)
            .unwrap()
            .with_torus_vcs(TorusVcs::WrapSplit);
        // 6 → 1 upwards crosses the wrap: the upper half, before and after crossing.
        assert_eq!(
            r.route(&t, NodeId(6), NodeId(1), MsgId::new(NodeId(6), 0))
                .escape_vcs,
            0b1100
        );
        assert_eq!(
            r.route(&t, NodeId(0), NodeId(1), MsgId::new(NodeId(6), 0))
                .escape_vcs,
            0b1100
        );
        // 0 → 1 upwards never meets it: the lower half (not all four, as with datelines).
        assert_eq!(
            r.route(&t, NodeId(0), NodeId(1), MsgId::new(NodeId(0), 0))
                .escape_vcs,
            0b0011
        );
        // Downwards BookSim swaps the halves: 1 → 7 crosses (lower), 3 → 1 does not.
        assert_eq!(
            r.route(&t, NodeId(1), NodeId(7), MsgId::new(NodeId(1), 0))
                .escape_vcs,
            0b0011
        );
        assert_eq!(
            r.route(&t, NodeId(3), NodeId(1), MsgId::new(NodeId(3), 0))
                .escape_vcs,
            0b1100
        );
        // Adaptive routing keeps its escape channels.
        let a = RoutingFn::new(&t, Routing::Adaptive, false, 4)
            .unwrap()
            .with_torus_vcs(TorusVcs::WrapSplit);
        assert_eq!(
            a.route(&t, NodeId(6), NodeId(1), MsgId::new(NodeId(6), 0))
                .escape_vcs,
            0b0001
        );
    }

    #[test]
    fn adaptive_on_torus_offers_every_minimal_port_and_one_escape_vc() {
        let t = torus(8);
        let r = RoutingFn::new(&t, Routing::Adaptive, false, 4).unwrap();
        // (0,0) → (2,2): +X and +Y minimal; escape is +X (dimension order); the path
        // never wraps, so both escape VCs are usable.
        let route = r.route(&t, NodeId(0), NodeId(2 + 2 * 8), MsgId::new(NodeId(0), 0));
        assert_eq!(route.adaptive_ports, 0b0101);
        assert_eq!(route.adaptive_vcs, 0b1100);
        assert_eq!(route.escape_port, PortId(0));
        assert_eq!(route.escape_vcs, 0b0011);
        // (6,0) → (1,0) must wrap: escape VC 0 only.
        assert_eq!(
            r.route(&t, NodeId(6), NodeId(1), MsgId::new(NodeId(6), 0))
                .escape_vcs,
            0b0001
        );
    }

    fn mesh(k: u32, n: u32) -> Topology {
        Topology::from_config(&TopologyConfig::Mesh { k, n, c: 1 }).unwrap()
    }

    #[test]
    fn turn_models_are_refused_off_the_2d_mesh_and_xy_yx_off_the_mesh() {
        for kind in [
            Routing::WestFirst,
            Routing::NorthLast,
            Routing::NegativeFirst,
            Routing::OddEven,
        ] {
            let err = RoutingFn::new(&torus(4), kind, false, 4)
                .unwrap_err()
                .to_string();
            assert!(err.contains("2-D meshes"), "{err}");
            assert!(RoutingFn::new(&mesh(4, 3), kind, false, 4).is_err());
            assert!(RoutingFn::new(&mesh(4, 2), kind, false, 1).is_ok());
        }
        let err = RoutingFn::new(&torus(4), Routing::XyYx, false, 4)
            .unwrap_err()
            .to_string();
        assert!(err.contains("meshes"), "{err}");
        let err = RoutingFn::new(&mesh(4, 2), Routing::XyYx, false, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("XY messages and one for YX"), "{err}");
        assert!(RoutingFn::new(&mesh(4, 2), Routing::XyYx, false, 2).is_ok());
    }

    #[test]
    fn a_turn_model_offers_its_permitted_ports_on_every_vc() {
        let t = mesh(4, 2);
        let r = RoutingFn::new(&t, Routing::WestFirst, false, 3).unwrap();
        // (0,0) → (2,2): east and north, all three VCs, no escape channel.
        let route = r.route(&t, NodeId(0), NodeId(2 + 2 * 4), MsgId::new(NodeId(0), 0));
        assert_eq!(route.adaptive_ports, 0b0101);
        assert_eq!(route.adaptive_vcs, 0b111);
        assert_eq!(route.escape_vcs, 0);
        assert!(route.adaptive_ports >> route.escape_port.idx() & 1 == 1);
    }

    #[test]
    fn xy_yx_keeps_each_message_in_one_order_and_one_half_and_splits_them_evenly() {
        let t = mesh(4, 2);
        let r = RoutingFn::new(&t, Routing::XyYx, false, 4)
            .unwrap()
            .with_salt(7, 0);
        let (src, dst) = (NodeId(0), NodeId(2 + 2 * 4));
        let mut xy = 0;
        for seq in 0..1000 {
            let id = MsgId::new(src, seq);
            let route = r.route(&t, src, dst, id);
            let order_xy = r.xy_order(id);
            // XY goes +X first on VCs {0, 1}; YX goes +Y first on VCs {2, 3}.
            let expect = if order_xy {
                (PortId(0), 0b0011)
            } else {
                (PortId(2), 0b1100)
            };
            assert_eq!((route.escape_port, route.escape_vcs), expect);
            assert_eq!(route.adaptive_ports, 0);
            // At the corner (2,0) or (0,2) the same order turns, in the same half.
            let turn_at = if order_xy { NodeId(2) } else { NodeId(2 * 4) };
            let later = r.route(&t, turn_at, dst, id);
            assert_eq!(later.escape_vcs, expect.1);
            assert_eq!(
                later.escape_port,
                if order_xy { PortId(2) } else { PortId(0) }
            );
            xy += usize::from(order_xy);
        }
        assert!((430..570).contains(&xy), "{xy} of 1000 in XY order");
        // Another replication draws other orders.
        let r2 = r.clone().with_salt(7, 1);
        let differ = (0..1000)
            .filter(|&s| r.xy_order(MsgId::new(src, s)) != r2.xy_order(MsgId::new(src, s)))
            .count();
        assert!(differ > 400, "{differ}");
    }

    #[test]
    fn coin_ties_send_each_message_one_way_and_half_of_them_each_way() {
        let t = torus(8);
        let r = RoutingFn::new(&t, Routing::DimensionOrder, false, 4)
            .unwrap()
            .with_torus_tie(TorusTie::Random)
            .with_salt(3, 0);
        // 0 → 4 in a ring of 8: both ways minimal.
        let (src, dst) = (NodeId(0), NodeId(4));
        let mut up = 0;
        for seq in 0..1000 {
            let id = MsgId::new(src, seq);
            let first = r.route(&t, src, dst, id).escape_port;
            // One hop later the way is no longer tied: the message keeps its direction.
            let next = t.neighbor(src, first).unwrap();
            assert_eq!(r.route(&t, next, dst, id).escape_port, first);
            up += usize::from(first == PortId(0));
        }
        assert!((430..570).contains(&up), "{up} of 1000 went up");
        // By parity, every message from an even coordinate goes up.
        let p = RoutingFn::new(&t, Routing::DimensionOrder, false, 4).unwrap();
        assert!(
            (0..100).all(|s| p.route(&t, src, dst, MsgId::new(src, s)).escape_port == PortId(0))
        );
    }
}

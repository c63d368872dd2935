//! Wormhole switching with the backward timeout reset (paper 002, Hu & Kleinrock): a LAN
//! of hosts and non-intelligent switches (`topology::hosts`), source routes, one worm per
//! link at a time (no virtual channels), back-pressure flow control, and the timeout
//! reset, cycle by cycle and flit by flit. The counters are in [`measure`], the report
//! block in `report`; the paper's model is `model::wormhole_timeout`.
//!
//! # Hardware
//!
//! - **Links** carry one flit per cycle each way; a flit sent in cycle t is at the other
//!   end in cycle t + ℓ (ℓ = the link's propagation delay: `links.latency`, or the graph
//!   file's per-link value), and so is a credit or a reset sent back.
//! - **Switches** have a FIFO of `router.buffer_flits` flits at every input port, which may
//!   hold the end of one worm and the start of the next (spec A7; Myrinet's switches). The
//!   header at the front of a FIFO is routed in the cycle it gets there (a one-cycle router:
//!   its outgoing port comes from the worm's source route) and asks for its outgoing link;
//!   a free link is granted at once (`switching.arbiter`: first come first served by the
//!   cycle the header asked, ties to the lower input port; or round-robin); a granted worm
//!   moves one flit per cycle through the switch while the downstream buffer has room
//!   (credits). A link is free again the cycle after the worm's tail crossed it
//!   (`release: TailSent`, the paper's holding time) or when the tail's credit is back
//!   (`TailCredit`).
//! - **The timeout**: a header that has asked for its link for `switching.timeout` cycles
//!   without getting it (asked in cycle r, not granted in r … r + τ − 1) is timed out in
//!   cycle r + τ: the switch discards the worm's flits in that FIFO and sends a reset back
//!   over the link the worm came in on. A switch the reset reaches frees the worm's
//!   outgoing link (it is free from the next cycle), discards the worm's flits it holds and
//!   passes the reset on upstream in the same cycle (spec A9: no processing time), even when
//!   the tail has already left (§2). Flits of the worm that arrive later are discarded on
//!   arrival. Every flit that arrives at a buffer returns exactly one credit, whether it is
//!   forwarded, discarded by a reset or discarded on arrival, so credits stay exact (A10).
//! - **Hosts** keep a FIFO of worms in memory and send one worm at a time over their link
//!   (A12), one flit per cycle while credits allow. A reset reaching the source stops the
//!   try if it is still being sent (the host link is free in that cycle) and puts the worm
//!   back at the tail of the queue, at once or after `switching.retry_delay` cycles (A11,
//!   Fig. 10); the worm keeps its path (A4). A host absorbs a flit in the cycle it arrives;
//!   a worm is delivered one cycle after its tail arrives. A lone worm of L flits over h
//!   links is delivered h·ℓ + L cycles after its creation (`switching::zero_load::timeout`).
//!
//! # Determinism and partitions
//!
//! A cycle's decisions read only the node's own state, and everything that crosses
//! nodes is an event (flits carry their worm's description, resets too), so a partition
//! needs nothing from another but its events. What one node receives in a cycle
//! commutes, so deliveries are not sorted: flits arrive on distinct inputs, credits add
//! up, a reset and a flit of the same worm leave the same state in either order. The one
//! exception, two resets of one host's worms in the same cycle, whose order would decide
//! their places in the host queue, is buffered and applied in worm order at the host's
//! step; delayed retries wait in a per-host FIFO (the delay is constant).

pub mod measure;
mod report;

use crate::config::{HwConfig, LinkArbiter, LinkRelease, OnReset, SwitchingConfig};
use crate::engine::machine::Machine;
use crate::engine::network::{NetMeasures, Network};
use crate::engine::partition::Outbox;
use crate::engine::partition::PartOut;
use crate::engine::partitioner::PartNodes;
use crate::engine::probe::observe::{LinkObs, LinkUnits};
use crate::engine::probe::{overlap, MsgStats};
use crate::engine::window::MeasureWindow;
use crate::engine::window::Window;
use crate::foundation::error::{Error, Result};
use crate::foundation::limits::{collected_table, empty_table, filled_table, zeroed_table};
use crate::foundation::types::Located;
use crate::foundation::types::{Cycle, MsgId, NodeId};
use crate::router::buffers::MsgHeader;
use crate::router::controller::CtrlStats;
use crate::router::dma::PendingMsg;
use crate::topology::hosts::{HostNetwork, LinkClass};
use crate::topology::Topology;
use measure::{Distributions, LinkCounters, TimeoutStats, OCCUPANCY};
use std::collections::VecDeque;

/// The set bits of a port mask, lowest first.
#[inline]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let p = m.trailing_zeros() as usize;
            m &= m - 1;
            p
        })
    })
}

/// What a worm's flits, resets and retries carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Worm {
    /// The message.
    pub id: MsgId,
    /// Destination host (node).
    pub dst: u32,
    /// Length in flits.
    pub len: u32,
    /// Cycle it was created.
    pub created: Cycle,
    /// Cycle its first try started.
    pub first: Cycle,
    /// Try number (0 for the first).
    pub try_no: u32,
    /// Cycles waited in the host queue so far (all visits).
    pub waited: u32,
    /// Whether it is measured.
    pub measured: bool,
}

impl Worm {
    #[inline]
    fn key(&self) -> (MsgId, u32) {
        (self.id, self.try_no)
    }
}

const HEAD: u8 = 1;
const TAIL: u8 = 2;
const NONE: u8 = u8::MAX;

/// What happens at a node; the discriminant orders one node's events within a cycle.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum Kind {
    /// `n` credits for output `port` (`flags` TAIL: the last is the tail's).
    Credit = 0,
    /// A reset for the worm arrives on `port` (the node's end of the link it travels back
    /// over).
    Reset = 1,
    /// A flit of the worm arrives on `port` (`flags`: HEAD, TAIL).
    Flit = 2,
    /// A reset worm's retry delay is over: it rejoins its host's queue.
    Retry = 3,
}

/// An event for a node.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct TimeoutEvent {
    /// Receiving node.
    pub node: u32,
    /// What it is.
    pub kind: Kind,
    /// The receiving node's port.
    pub port: u8,
    /// HEAD / TAIL bits.
    pub flags: u8,
    /// Credits carried.
    pub n: u32,
    /// The worm concerned.
    pub worm: Worm,
}

impl Located for TimeoutEvent {
    #[inline]
    fn node(&self) -> u32 {
        self.node
    }
}

type Out = PartOut<TimeoutEvent, ()>;

/// A flit in a switch's input FIFO.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    worm: Worm,
    flags: u8,
}

/// The input end of a port.
#[derive(Clone, Copy, Debug)]
struct InPort {
    /// Ring buffer in `fifo`: first slot, flits held.
    head: u32,
    len: u32,
    /// The try whose flits arrive on this port now, and whether it was reset here.
    arriving: (MsgId, u32),
    purged: bool,
    /// The front header's request: the cycle it asked (MAX: none) and for which port.
    ready: Cycle,
    want: u8,
    /// The output the front worm is connected to (NONE: not connected).
    conn: u8,
}

const IDLE_IN: InPort = InPort {
    head: 0,
    len: 0,
    arriving: (MsgId(u64::MAX), 0),
    purged: false,
    ready: Cycle::MAX,
    want: NONE,
    conn: NONE,
};

/// The output end of a port.
#[derive(Clone, Copy, Debug)]
struct OutPort {
    /// The try holding the link, and the input port feeding it (hosts: 0).
    holder: Option<(MsgId, u32)>,
    from: u8,
    /// Free flit slots in the downstream buffer.
    credits: u32,
    /// The link may be granted from this cycle on.
    free_from: Cycle,
    /// Cycle the holder took it.
    since: Cycle,
    /// `TailCredit`: the tail has crossed; the link frees when its credit is back.
    tail_out: bool,
    /// Round-robin pointer (the last winning input port).
    rr: u8,
}

/// A host's queue and sending engine.
#[derive(Clone, Debug, Default)]
struct Host {
    /// Worms waiting to be sent, with the cycle each (re)joined the queue.
    queue: VecDeque<(Worm, Cycle)>,
    /// The try being sent, the flits sent so far and the cycle it started.
    sending: Option<(Worm, u32, Cycle)>,
    /// Resets that arrived this cycle, applied at the host's step in worm order (two of
    /// the host's worms can be reset in one cycle, and the order in which their resets
    /// were delivered may depend on the partitioning).
    resets: Vec<Worm>,
    /// Reset worms waiting out `retry_delay`, with the cycle they rejoin the queue (in
    /// that order: the delay is constant).
    delayed: VecDeque<(Cycle, Worm)>,
}

/// The routers and hosts of a partition: nodes `lo..lo + n`.
#[derive(Clone, Debug)]
pub struct TimeoutNet {
    net: HostNetwork,
    timeout: Option<Cycle>,
    retry_delay: Cycle,
    arbiter: LinkArbiter,
    release: LinkRelease,
    on_reset: OnReset,
    depth: u32,
    lo: usize,
    /// Local node → first local port.
    base: Vec<u32>,
    /// Per local port: the propagation delay of its link, the peer node and port, class.
    latency: Vec<Cycle>,
    /// The shortest propagation delay of any link of the whole network: every event
    /// crosses a link, so it is the mode's lookahead.
    shortest_link: Cycle,
    peer: Vec<(u32, u8)>,
    class: Vec<LinkClass>,
    inp: Vec<InPort>,
    out: Vec<OutPort>,
    fifo: Vec<Slot>,
    hosts: Vec<Host>,
    /// Per local node: the inputs holding flits (bit p: port p).
    active: Vec<u64>,
    /// Per local port: its local node and port number.
    port_of: Vec<(u32, u8)>,
    /// Per local port: what its output link saw in the window, and the last cycle a
    /// header asked for it (for inter-arrival times).
    link: Vec<LinkCounters>,
    last_request: Vec<Cycle>,
    /// Per local port: the worms holding or waiting for its output, since when.
    in_sys: Vec<u16>,
    sys_since: Vec<Cycle>,
    /// Counters not tied to one link.
    pub stats: TimeoutStats,
    /// Local port of the watched link (paper 002 Figs. 2–3), when this partition has it.
    watch: Option<usize>,
    watch_dist: Distributions,
    flits_accepted: u64,
    delivered: u64,
    measured_delivered: u64,
    lost: u64,
    measured_lost: u64,
    backlog: usize,
    /// Flits injected minus flits absorbed or discarded (partitions add up).
    flits_live: i64,
    last_move: Cycle,
    moves: u64,
    /// Resets that reached their source host, whole run (each timeout starts one).
    resets_home: u64,
    /// Per-link observation (`experiment.observe.per_link`).
    obs: bool,
    /// Per local port: flits sent on its output link inside the window (empty when
    /// `obs` is off).
    obs_flits: Vec<u64>,
}

impl TimeoutNet {
    /// Builds nodes `lo..hi` of a validated timeout machine.
    pub fn new_range(cfg: &HwConfig, machine: &Machine, (lo, hi): (usize, usize)) -> Result<Self> {
        let SwitchingConfig::Timeout {
            timeout,
            retry_delay,
            arbiter,
            release,
            on_reset,
            watch,
        } = cfg.switching
        else {
            return Err(Error::config(
                "internal: a timeout network was asked to run another switching mode",
            ));
        };
        let Topology::Hosts(net) = &machine.topology else {
            return Err(Error::config(
                "internal: timeout switching runs on host/switch networks",
            ));
        };
        let depth = cfg.router.buffer_flits;
        let default_latency = cfg.links.latency;
        // Every table whose size grows with the network is allocated fallibly: a run let
        // through with --force that does not fit ends in a message, not an abort.
        let ports: usize = (lo..hi).map(|u| net.ports(u as u32).len()).sum();
        let mut base = empty_table(Some(hi - lo + 1), "timeout port index")?;
        let mut latency = empty_table(Some(ports), "timeout link latency")?;
        let mut peer = empty_table(Some(ports), "timeout link peer")?;
        let mut class = empty_table(Some(ports), "timeout port class")?;
        for u in lo..hi {
            base.push(latency.len() as u32);
            for (p, end) in net.ports(u as u32).iter().enumerate() {
                latency.push(end.latency.unwrap_or(default_latency));
                peer.push((end.peer, end.peer_port));
                class.push(net.class(u as u32, p as u8));
            }
        }
        base.push(latency.len() as u32);
        let first_host = net.switches as usize;
        let hosts = hi.max(first_host) - lo.max(first_host);
        // Paper 002's Figs. 2–3 watch one switch output (validation checked it exists).
        let watch = watch
            .or_else(|| net.first_switch_output())
            .filter(|&(u, _)| (lo..hi).contains(&(u as usize)))
            .map(|(u, p)| base[u as usize - lo] as usize + p as usize);
        let port_of = collected_table(
            ports,
            (0..hi - lo).flat_map(|n| (0..base[n + 1] - base[n]).map(move |p| (n as u32, p as u8))),
            "timeout port owner",
        )?;
        let obs_len = if cfg.experiment.observe.per_link {
            ports
        } else {
            0
        };
        Ok(TimeoutNet {
            timeout,
            retry_delay,
            arbiter,
            release,
            on_reset,
            depth,
            lo,
            base,
            latency,
            shortest_link: (0..net.nodes() as u32)
                .flat_map(|u| net.ports(u).iter())
                .map(|end| end.latency.unwrap_or(default_latency))
                .min()
                .unwrap_or(1)
                .max(1),
            peer,
            class,
            inp: filled_table(Some(ports), IDLE_IN, "timeout input port")?,
            out: filled_table(
                Some(ports),
                OutPort {
                    holder: None,
                    from: NONE,
                    credits: depth,
                    free_from: 0,
                    since: 0,
                    tail_out: false,
                    rr: 0,
                },
                "timeout output port",
            )?,
            fifo: filled_table(
                ports.checked_mul(depth as usize),
                Slot::default(),
                "timeout flit buffer",
            )?,
            hosts: filled_table(Some(hosts), Host::default(), "timeout host")?,
            active: zeroed_table(Some(hi - lo), "timeout active ports")?,
            port_of,
            link: filled_table(
                Some(ports),
                LinkCounters::default(),
                "timeout link counters",
            )?,
            last_request: filled_table(Some(ports), Cycle::MAX, "timeout last request")?,
            in_sys: zeroed_table(Some(ports), "timeout messages in system")?,
            sys_since: zeroed_table(Some(ports), "timeout system time")?,
            stats: TimeoutStats::default(),
            watch,
            watch_dist: Distributions::default(),
            flits_accepted: 0,
            delivered: 0,
            measured_delivered: 0,
            lost: 0,
            measured_lost: 0,
            backlog: 0,
            flits_live: 0,
            last_move: 0,
            moves: 0,
            resets_home: 0,
            obs: cfg.experiment.observe.per_link,
            obs_flits: zeroed_table(Some(obs_len), "per-link flits")?,
            net: net.clone(),
        })
    }

    #[inline]
    fn port(&self, node: u32, p: u8) -> usize {
        self.base[node as usize - self.lo] as usize + p as usize
    }

    #[inline]
    fn degree(&self, node: u32) -> usize {
        let li = node as usize - self.lo;
        (self.base[li + 1] - self.base[li]) as usize
    }

    #[inline]
    fn host(&mut self, node: u32) -> &mut Host {
        let first = (self.net.switches as usize).max(self.lo);
        &mut self.hosts[node as usize - first]
    }

    fn send(&self, out: &mut Out, at: Cycle, ev: TimeoutEvent) {
        out.send(at, ev);
    }

    /// Sends `n` credits back over the link of local port `i` (to the node feeding it).
    fn credit(&self, out: &mut Out, i: usize, n: u32, tail: bool, t: Cycle) {
        let (node, port) = self.peer[i];
        self.send(
            out,
            t + self.latency[i],
            TimeoutEvent {
                node,
                kind: Kind::Credit,
                port,
                flags: if tail { TAIL } else { 0 },
                n,
                worm: Worm::default(),
            },
        );
    }

    /// Sends a flit out of local port `o` of `node`.
    fn flit(&mut self, out: &mut Out, o: usize, worm: Worm, flags: u8, t: Cycle) {
        let (node, port) = self.peer[o];
        self.out[o].credits -= 1;
        self.moves += 1;
        self.last_move = t;
        self.send(
            out,
            t + self.latency[o],
            TimeoutEvent {
                node,
                kind: Kind::Flit,
                port,
                flags,
                n: 0,
                worm,
            },
        );
    }

    /// The input port of switch `node` a worm from `src` to `dst` comes in on.
    fn in_port_of(&self, node: u32, src: u32, dst: u32) -> u8 {
        let mut cur = src;
        loop {
            let p = self.net.route_port(src, dst, cur);
            let end = self.net.ports(cur)[p as usize];
            if end.peer == node {
                return end.peer_port;
            }
            cur = end.peer;
            assert!(
                cur != dst,
                "switch {node} is not on the route {src} → {dst}"
            );
        }
    }

    /// A header asks for output `o` in cycle `t`.
    fn request(&mut self, o: usize, t: Cycle, win: &MeasureWindow) {
        let last = std::mem::replace(&mut self.last_request[o], t);
        let n = self.occupy(o, t, 1, win);
        if !win.contains(t) {
            return;
        }
        self.link[o].requests += 1;
        self.link[o].arrivals_in[n.min(OCCUPANCY - 1)] += 1;
        if last != Cycle::MAX {
            let c = self.class[o] as usize;
            let _ = self.stats.class_dist[c].interarrival.record(t - last);
            if Some(o) == self.watch {
                let _ = self.watch_dist.interarrival.record(t - last);
            }
        }
    }

    /// Output `o`'s worms (its holder and the headers waiting for it) change by `delta`
    /// from cycle `at` on; returns how many there were. The time spent with each number
    /// gives, with the heads that arrived meanwhile, the arrival rate seen in each state
    /// (paper 002 Figs. 12–13: constant for the model's Poisson arrivals, falling for a
    /// finite population of inputs).
    fn occupy(&mut self, o: usize, at: Cycle, delta: i32, win: &MeasureWindow) -> usize {
        // A reset frees a link from the next cycle before that cycle's requests, so an
        // instant may come before the last one: clamp (the difference is one cycle).
        let at = at.max(self.sys_since[o]);
        let n = self.in_sys[o] as usize;
        self.link[o].time_in[n.min(OCCUPANCY - 1)] +=
            overlap(self.sys_since[o], at, win.start, win.end);
        self.sys_since[o] = at;
        self.in_sys[o] = (self.in_sys[o] as i32 + delta).max(0) as u16;
        n
    }

    /// A header that asked for output `o` got it after `wait` cycles (measured).
    fn granted(&mut self, o: usize, wait: Cycle) {
        let l = &mut self.link[o];
        l.found_free += (wait == 0) as u64;
        l.wait.add(wait);
        let c = self.class[o] as usize;
        let _ = self.stats.class_dist[c].wait.record(wait);
        if Some(o) == self.watch {
            let _ = self.watch_dist.wait.record(wait);
        }
    }

    /// Ends the holding of output `o` in cycle `t`: it is free from `free_from` (t + 1
    /// when the tail or a reset leaves it busy for the rest of the cycle, t when the
    /// cycle's event frees it before anyone asks), so it was held `free_from − since`.
    fn free_output(&mut self, o: usize, t: Cycle, free_from: Cycle, win: &MeasureWindow) {
        let since = self.out[o].since;
        if win.contains(t) {
            self.link[o].holding.add(free_from - since);
        }
        self.occupy(o, free_from, -1, win);
        self.link[o].busy += overlap(since, free_from, win.start, win.end);
        let x = &mut self.out[o];
        x.holder = None;
        x.from = NONE;
        x.tail_out = false;
        x.free_from = free_from;
    }

    /// Removes the flits of try `key` from the front of input FIFO `i`; returns how many.
    fn purge(&mut self, i: usize, key: (MsgId, u32)) -> u32 {
        let d = self.depth as usize;
        let mut n = 0;
        let x = &mut self.inp[i];
        while x.len > 0 && self.fifo[i * d + x.head as usize].worm.key() == key {
            x.head = (x.head + 1) % self.depth;
            x.len -= 1;
            n += 1;
        }
        if x.len == 0 {
            let (node, p) = self.port_of[i];
            self.active[node as usize] &= !(1 << p);
        }
        let x = &mut self.inp[i];
        if x.arriving == key {
            x.purged = true;
        }
        // Only the worm's own request or connection ends: when its flits were not at the
        // front (its tail had left, or the rest is still on the wire), the front may be
        // the next worm's, already asking or connected.
        if n > 0 {
            x.ready = Cycle::MAX;
            x.want = NONE;
            x.conn = NONE;
        }
        n
    }

    fn discard(&mut self, n: u32) {
        self.stats.discarded_flits += n as u64;
        self.flits_live -= n as i64;
    }

    /// A reset for `worm` reaches `node` over its local port `p` in cycle `t`.
    fn reset(
        &mut self,
        node: u32,
        p: u8,
        worm: Worm,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
    ) {
        let key = worm.key();
        let o = self.port(node, p);
        let held = self.out[o].holder == Some(key);
        let i_port = if held {
            self.out[o].from
        } else {
            self.in_port_of(node, worm.id.src().0, worm.dst)
        };
        let i = self.port(node, i_port);
        if held {
            self.free_output(o, t, t + 1, win);
            // The worm may hold the connection with none of its flits here (the rest
            // still on the wire); with `TailCredit` the tail has gone and the input may
            // already serve the next worm.
            if self.inp[i].conn == p {
                self.inp[i].conn = NONE;
            }
        }
        let n = self.purge(i, key);
        if n > 0 {
            self.discard(n);
            self.credit(out, i, n, false, t);
        }
        self.reset_upstream(out, i, worm, t);
    }

    /// Sends the reset of `worm` back over the link of local input `i` (to the node the
    /// worm came from), arriving in the link's propagation delay.
    fn reset_upstream(&self, out: &mut Out, i: usize, worm: Worm, t: Cycle) {
        let (up, up_port) = self.peer[i];
        self.send(
            out,
            t + self.latency[i],
            TimeoutEvent {
                node: up,
                kind: Kind::Reset,
                port: up_port,
                flags: 0,
                n: 0,
                worm,
            },
        );
    }

    /// The source host hears that `worm`'s try was reset.
    fn host_reset(&mut self, node: u32, worm: Worm, t: Cycle, win: &MeasureWindow, out: &mut Out) {
        let o = self.port(node, 0);
        let key = worm.key();
        let mut w = worm;
        self.resets_home += 1;
        let sending = self
            .host(node)
            .sending
            .is_some_and(|(s, _, _)| s.key() == key);
        if sending {
            // Still sending: stop; the link is free in this cycle.
            let (_, sent, start) = self.host(node).sending.take().expect("sending");
            if win.contains(t) {
                self.stats.wasted_flits += sent as u64;
                self.stats.try_service.add(t - start);
            }
            self.free_output(o, t, t, win);
        } else {
            if self.out[o].holder == Some(key) {
                // `TailCredit`: the tail has gone, its credit is not back; the worm is
                // dropped, so the link needs it no longer (the credit still counts).
                self.free_output(o, t, t, win);
            }
            if win.contains(t) {
                // Its tail had left: every flit of the try was sent for nothing.
                self.stats.wasted_flits += w.len as u64;
            }
        }
        if win.contains(t) {
            self.stats.tries_failed[(w.try_no > 0) as usize] += 1;
        }
        w.try_no += 1;
        // The backlog counts worms with flits still to send: a try whose tail had left
        // comes back into it.
        match self.on_reset {
            OnReset::Discard => {
                self.lost += 1;
                if sending {
                    self.backlog -= 1;
                }
                if w.measured {
                    self.measured_lost += 1;
                }
            }
            OnReset::Requeue if !sending => {
                self.backlog += 1;
                self.requeue(node, w, t, out);
            }
            OnReset::Requeue => self.requeue(node, w, t, out),
        }
    }

    /// A reset worm rejoins its host's queue, now or after the retry delay.
    fn requeue(&mut self, node: u32, w: Worm, t: Cycle, out: &mut Out) {
        match self.on_reset {
            OnReset::Discard => unreachable!("discarded worms do not come back"),
            OnReset::Requeue if self.retry_delay == 0 => {
                self.host(node).queue.push_back((w, t));
            }
            OnReset::Requeue => {
                let due = t + self.retry_delay;
                self.host(node).delayed.push_back((due, w));
                // Only to wake the host when the delay is over.
                self.send(
                    out,
                    due,
                    TimeoutEvent {
                        node,
                        kind: Kind::Retry,
                        port: 0,
                        flags: 0,
                        n: 0,
                        worm: Worm::default(),
                    },
                );
            }
        }
    }

    /// A flit arrives at `node` on port `p`.
    fn arrive(
        &mut self,
        ev: &TimeoutEvent,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        let node = ev.node;
        let i = self.port(node, ev.port);
        let worm = ev.worm;
        if self.net.is_host(node) {
            // The destination absorbs at once and hands the slot back.
            self.flits_live -= 1;
            self.credit(out, i, 1, ev.flags & TAIL != 0, t);
            if win.contains(t) {
                self.flits_accepted += 1;
            }
            stats.accepted(t, 1);
            if ev.flags & TAIL != 0 {
                self.deliver_worm(&worm, t + 1, stats);
            }
            return;
        }
        let x = &mut self.inp[i];
        if ev.flags & HEAD != 0 {
            x.arriving = worm.key();
            x.purged = false;
        } else if x.arriving != worm.key() || x.purged {
            // The rest of a worm reset at or beyond this switch.
            self.discard(1);
            self.credit(out, i, 1, false, t);
            return;
        }
        debug_assert!(x.len < self.depth, "a flit arrived at a full buffer");
        let d = self.depth as usize;
        let at = (x.head + x.len) % self.depth;
        x.len += 1;
        self.active[node as usize - self.lo] |= 1 << ev.port;
        self.fifo[i * d + at as usize] = Slot {
            worm,
            flags: ev.flags,
        };
    }

    fn deliver_worm(&mut self, w: &Worm, done: Cycle, stats: &mut MsgStats) {
        let hdr = MsgHeader {
            id: w.id,
            dst: NodeId(w.dst),
            len: w.len,
            hops: self.net.route_len(w.id.src().0, w.dst).min(u16::MAX as u32) as u16,
            created: w.created,
            injected: w.first,
            measured: w.measured,
            ..MsgHeader::default()
        };
        stats.record(&hdr, done);
        if stats.logs_hops() {
            // A worm keeps its source route on every try (A4): its path.
            let (src, mut cur) = (w.id.src().0, w.id.src().0);
            for i in 0.. {
                stats.hop(w.id, 0, i, cur);
                if cur == w.dst {
                    break;
                }
                let p = self.net.route_port(src, w.dst, cur);
                cur = self.net.ports(cur)[p as usize].peer;
            }
        }
        self.delivered += 1;
        if w.measured {
            self.measured_delivered += 1;
            self.stats.worm_tries.add(w.try_no as u64 + 1);
            let _ = self.stats.worm_tries_hist.record(w.try_no as u64 + 1);
            self.stats.worm_host_wait.add(w.waited as u64);
            self.stats
                .worm_network
                .add((done - w.created).saturating_sub(w.waited as u64));
        }
    }

    /// One cycle of switch `node`.
    fn step_switch(&mut self, node: u32, t: Cycle, win: &MeasureWindow, out: &mut Out) {
        let n = node as usize - self.lo;
        let first = self.port(node, 0);
        let d = self.depth as usize;
        let measured = win.contains(t);
        // Front headers ask for their links; overdue ones time out. Only inputs holding
        // flits are visited (a switch may have up to 63 ports, few of them busy).
        let mut waiting = [(0 as Cycle, 0u8); 64];
        let mut waiters = 0;
        for p in bits(self.active[n]) {
            let i = first + p;
            let x = self.inp[i];
            if x.conn != NONE {
                continue;
            }
            let front = self.fifo[i * d + x.head as usize];
            debug_assert!(
                front.flags & HEAD != 0,
                "a body flit at the front of an unconnected FIFO"
            );
            if x.ready == Cycle::MAX {
                let w = front.worm;
                let want = self.net.route_port(w.id.src().0, w.dst, node);
                self.inp[i].ready = t;
                self.inp[i].want = want;
                self.request(first + want as usize, t, win);
            } else if self.timeout.is_some_and(|tau| t >= x.ready + tau) {
                self.time_out(node, i, front.worm, t, win, out);
                continue;
            }
            waiting[waiters] = (self.inp[i].ready, p as u8);
            waiters += 1;
        }
        // Free links go to waiting headers: first come first served (ties to the lower
        // input port), or round-robin after the link's last winner.
        let waiting = &mut waiting[..waiters];
        if self.arbiter == LinkArbiter::Fifo {
            waiting.sort_unstable();
        }
        let mut taken = 0u64;
        for j in 0..waiting.len() {
            let p = waiting[j].1 as usize;
            let q = self.inp[first + p].want as usize;
            let o = first + q;
            if taken & (1 << q) != 0 || self.out[o].holder.is_some() || self.out[o].free_from > t {
                continue;
            }
            let p = match self.arbiter {
                LinkArbiter::Fifo => p,
                LinkArbiter::RoundRobin => {
                    let deg = self.degree(node);
                    let after = |p: usize| (p + deg - self.out[o].rr as usize - 1) % deg;
                    waiting
                        .iter()
                        .map(|w| w.1 as usize)
                        .filter(|&p| self.inp[first + p].want as usize == q)
                        .min_by_key(|&p| after(p))
                        .unwrap_or(p)
                }
            };
            taken |= 1 << q;
            let i = first + p;
            let x = self.inp[i];
            let w = self.fifo[i * d + x.head as usize].worm;
            if measured {
                self.granted(o, t - x.ready);
            }
            self.inp[i].conn = q as u8;
            self.inp[i].ready = Cycle::MAX;
            let y = &mut self.out[o];
            y.holder = Some(w.key());
            y.from = p as u8;
            y.since = t;
            y.rr = p as u8;
        }
        // Connected worms move a flit each while the next buffer has room.
        for p in bits(self.active[n]) {
            let i = first + p;
            let x = self.inp[i];
            if x.conn == NONE {
                continue;
            }
            let o = first + x.conn as usize;
            if self.out[o].credits == 0 {
                continue;
            }
            let slot = self.fifo[i * d + x.head as usize];
            debug_assert_eq!(self.out[o].holder, Some(slot.worm.key()));
            self.inp[i].head = (x.head + 1) % self.depth;
            self.inp[i].len -= 1;
            if self.inp[i].len == 0 {
                self.active[n] &= !(1 << p);
            }
            if self.obs && measured {
                self.obs_flits[o] += 1;
            }
            self.flit(out, o, slot.worm, slot.flags, t);
            self.credit(out, i, 1, slot.flags & TAIL != 0, t);
            if slot.flags & TAIL != 0 {
                self.inp[i].conn = NONE;
                match self.release {
                    LinkRelease::TailSent => self.free_output(o, t, t + 1, win),
                    LinkRelease::TailCredit => self.out[o].tail_out = true,
                }
            }
        }
    }

    /// The header at the front of input `i` of switch `node` waited `switching.timeout`
    /// cycles: its flits here are dropped (their credits go back) and a reset starts
    /// upstream over the link the worm came in on.
    fn time_out(
        &mut self,
        node: u32,
        i: usize,
        w: Worm,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
    ) {
        let o = self.port(node, self.inp[i].want);
        if win.contains(t) {
            self.link[o].timeouts += 1;
        }
        self.occupy(o, t, -1, win);
        self.stats.resets += 1;
        let n = self.purge(i, w.key());
        self.discard(n);
        self.credit(out, i, n, false, t);
        self.last_move = t;
        self.reset_upstream(out, i, w, t);
    }

    /// One cycle of host `node`: start the next try, send a flit.
    fn step_host(&mut self, node: u32, t: Cycle, win: &MeasureWindow, out: &mut Out) {
        let o = self.port(node, 0);
        let measured = win.contains(t);
        // Worms whose retry delay is over rejoin the queue, then this cycle's resets are
        // applied in worm order.
        let h = self.host(node);
        while h.delayed.front().is_some_and(|&(due, _)| due <= t) {
            let (_, w) = h.delayed.pop_front().expect("checked");
            h.queue.push_back((w, t));
        }
        if !h.resets.is_empty() {
            let mut resets = std::mem::take(&mut h.resets);
            resets.sort_unstable_by_key(|w| w.key());
            for w in resets.drain(..) {
                self.host_reset(node, w, t, win, out);
            }
            // Keep the buffer's allocation.
            self.host(node).resets = resets;
        }
        if self.host(node).sending.is_none()
            && self.out[o].holder.is_none()
            && self.out[o].free_from <= t
        {
            if let Some((mut w, since)) = self.host(node).queue.pop_front() {
                w.waited = w
                    .waited
                    .saturating_add((t - since).min(u32::MAX as u64) as u32);
                if w.try_no == 0 {
                    w.first = t;
                }
                self.host(node).sending = Some((w, 0, t));
                let y = &mut self.out[o];
                y.holder = Some(w.key());
                y.from = 0;
                y.since = t;
                // The host link is the try's server: asked for and granted at once.
                self.request(o, t, win);
                if measured {
                    self.stats.tries[(w.try_no > 0) as usize] += 1;
                    self.granted(o, 0);
                }
            }
        }
        let Some((w, sent, start)) = self.host(node).sending else {
            return;
        };
        if self.out[o].credits == 0 {
            return;
        }
        let mut flags = 0;
        if sent == 0 {
            flags |= HEAD;
        }
        if sent + 1 == w.len {
            flags |= TAIL;
        }
        self.flits_live += 1;
        if measured {
            self.stats.flits_sent += 1;
        }
        if self.obs && measured {
            self.obs_flits[o] += 1;
        }
        self.flit(out, o, w, flags, t);
        if flags & TAIL != 0 {
            self.host(node).sending = None;
            self.backlog -= 1;
            if measured {
                self.stats.try_service.add(t + 1 - start);
            }
            match self.release {
                LinkRelease::TailSent => self.free_output(o, t, t + 1, win),
                LinkRelease::TailCredit => self.out[o].tail_out = true,
            }
        } else {
            self.host(node).sending = Some((w, sent + 1, start));
        }
    }

    /// Applies one event in cycle `t`.
    fn apply(
        &mut self,
        ev: TimeoutEvent,
        t: Cycle,
        win: &MeasureWindow,
        out: &mut Out,
        stats: &mut MsgStats,
    ) {
        match ev.kind {
            Kind::Credit => {
                let o = self.port(ev.node, ev.port);
                self.out[o].credits += ev.n;
                debug_assert!(
                    self.out[o].credits <= self.depth,
                    "more credits than buffer"
                );
                if ev.flags & TAIL != 0 && self.out[o].tail_out {
                    self.free_output(o, t, t, win);
                }
            }
            Kind::Reset if self.net.is_host(ev.node) => self.host(ev.node).resets.push(ev.worm),
            Kind::Reset => self.reset(ev.node, ev.port, ev.worm, t, win, out),
            Kind::Flit => self.arrive(&ev, t, win, out, stats),
            // The host's step moves the worms whose delay is over.
            Kind::Retry => {}
        }
    }

    /// Checks the flow-control invariants of a network held in one partition, given the
    /// events still in flight: on every link, the sender's credits, the flits on the
    /// wire, the flits in the receiver's buffer and the credits on their way back add up
    /// to the buffer's depth (so no flit or credit is lost or made up, whatever resets
    /// did); no buffer holds more than its depth; and, once nothing is in flight, every
    /// link is free and every reset started has reached its source host.
    pub fn audit(&self, in_flight: &[TimeoutEvent]) -> std::result::Result<(), String> {
        if self.lo != 0 || self.nodes() != self.net.nodes() {
            return Err("audit needs the whole network in one partition".into());
        }
        let mut wire = vec![0u64; self.out.len()];
        let mut back = vec![0u64; self.out.len()];
        let mut resets = 0;
        for e in in_flight {
            match e.kind {
                Kind::Flit => wire[self.port(e.node, e.port)] += 1,
                Kind::Credit => back[self.port(e.node, e.port)] += e.n as u64,
                Kind::Reset => resets += 1,
                Kind::Retry => {}
            }
        }
        for u in 0..self.net.nodes() as u32 {
            for p in 0..self.degree(u) {
                let o = self.port(u, p as u8);
                let (v, q) = self.peer[o];
                let i = self.port(v, q);
                let held = self.inp[i].len as u64;
                let sum = self.out[o].credits as u64 + wire[i] + held + back[o];
                if sum != self.depth as u64 || held > self.depth as u64 {
                    return Err(format!(
                        "link {} of node {u} → node {v}: {} credits + {} flits on the wire + \
                         {held} buffered + {} credits coming back ≠ depth {}",
                        self.net.port_name(u, p as u8),
                        self.out[o].credits,
                        wire[i],
                        back[o],
                        self.depth
                    ));
                }
            }
        }
        if in_flight.is_empty() && !self.in_network() {
            if let Some(o) = (0..self.out.len()).find(|&o| self.out[o].holder.is_some()) {
                return Err(format!(
                    "output {o} is still held with nothing in the network"
                ));
            }
            if self.stats.resets != self.resets_home {
                return Err(format!(
                    "{} resets started, {} reached their source",
                    self.stats.resets, self.resets_home
                ));
            }
        } else if self.resets_home + resets > self.stats.resets {
            return Err("more resets arrived than were started".into());
        }
        Ok(())
    }

    /// Cycles output `o` was held inside `[start, end)`, a holding still going on
    /// included.
    fn busy_cycles(&self, o: usize, start: Cycle, end: Cycle) -> u64 {
        let mut b = self.link[o].busy;
        if self.out[o].holder.is_some() {
            b += overlap(self.out[o].since, end, start, Some(end));
        }
        b
    }

    fn node_busy(&self, n: usize) -> bool {
        let node = (self.lo + n) as u32;
        if self.net.is_host(node) {
            let first = (self.net.switches as usize).max(self.lo);
            let h = &self.hosts[node as usize - first];
            return h.sending.is_some() || !h.queue.is_empty();
        }
        self.active[n] != 0
    }
}

/// What a timeout replication measured, for the report.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TimeoutMeasures {
    /// The counters (holding of links still held completed to the window's end).
    pub stats: TimeoutStats,
    /// Hosts measured.
    pub hosts: usize,
    /// Window length in cycles.
    pub window: Cycle,
}

impl Network for TimeoutNet {
    type Event = TimeoutEvent;
    type Remote = ();
    type Measures = TimeoutMeasures;
    const WORK_UNIT: &'static str = "flit hop";
    fn work(&self) -> u64 {
        self.moves
    }
    // What a node receives in one cycle commutes: flits arrive on distinct inputs, credits
    // add up, a reset and a flit of the same worm leave the same state in either order,
    // and resets at a host (where the order would change the queue) are buffered and
    // applied in worm order at its step. So deliveries need no sorting.
    const SORT_EVENTS: bool = false;
    const PARTITIONABLE: bool = true;
    const MIN_PARTITION_NODES: usize = 128;

    fn build(
        cfg: &HwConfig,
        machine: &Machine,
        _seed: u64,
        _rep: u32,
        part: &PartNodes,
    ) -> Result<Self> {
        // A network of hosts and switches is only ever split into node ranges
        // (`engine::partitioner::place` refuses blocks for it).
        let range = part.range_of().ok_or_else(|| {
            Error::config(
                "internal: a timeout network was given a partition that is not a node range",
            )
        })?;
        TimeoutNet::new_range(cfg, machine, range)
    }
    fn nodes(&self) -> usize {
        self.base.len() - 1
    }
    fn accept_remote(&mut self, _: ()) {}
    // Flits, credits and resets all travel over a link (`send` callers): none is due
    // sooner than the shortest link's delay.
    fn lookahead(&self) -> Cycle {
        self.shortest_link
    }
    fn horizon(&self) -> Cycle {
        let most = self.latency.iter().copied().max().unwrap_or(1);
        (2 * most + 8)
            .max(self.retry_delay.min(4096))
            .clamp(16, 4096)
    }
    fn event_key(&self, e: &TimeoutEvent) -> u64 {
        // Unused (see SORT_EVENTS); a canonical order all the same, for debugging.
        ((e.kind as u64) << 60) | ((e.port as u64) << 52) | (e.worm.id.0 & ((1 << 52) - 1))
    }
    fn enqueue(&mut self, node: usize, m: PendingMsg) {
        let w = Worm {
            id: m.id,
            dst: m.dst.0,
            len: m.len,
            created: m.created,
            first: m.created,
            try_no: 0,
            waited: 0,
            measured: m.measured,
        };
        if m.measured {
            self.stats.arrivals += 1;
        }
        self.backlog += 1;
        let node = (self.lo + node) as u32;
        self.host(node).queue.push_back((w, m.created));
    }
    fn deliver(
        &mut self,
        e: TimeoutEvent,
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
        _stats: &mut MsgStats,
    ) {
        let node = (self.lo + n) as u32;
        if self.net.is_host(node) {
            self.step_host(node, t, win, out);
        } else {
            self.step_switch(node, t, win, out);
        }
    }
    fn busy(&self, n: usize) -> bool {
        self.node_busy(n)
    }
    fn backlog(&self) -> usize {
        self.backlog
    }
    fn queued(&self, n: usize) -> Option<usize> {
        let node = self.lo + n;
        let first = (self.net.switches as usize).max(self.lo);
        // Switches never create worms: they count as full.
        Some(if node < first {
            1
        } else {
            self.hosts[node - first].queue.len()
        })
    }
    fn in_network(&self) -> bool {
        self.flits_live != 0 || self.backlog > 0
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
        self.flits_live
    }
    fn last_progress(&self) -> Cycle {
        self.last_move
    }
    fn explain_deadlock(&self, _t: Cycle) -> String {
        let net = self;
        let mut s = String::from("worms waiting for links held by others, no timeout to end it:\n");
        for n in 0..net.nodes() {
            let node = (net.lo + n) as u32;
            if net.net.is_host(node) {
                continue;
            }
            let first = net.base[n] as usize;
            for p in 0..net.degree(node) {
                let x = net.inp[first + p];
                if x.len > 0 && x.conn == NONE && x.want != NONE {
                    let o = first + x.want as usize;
                    s.push_str(&format!(
                        "  switch {node}: a worm on {} waits since cycle {} for {} (held by {})\n",
                        net.net.port_name(node, p as u8),
                        x.ready,
                        net.net.port_name(node, x.want),
                        net.out[o]
                            .holder
                            .map_or("nobody".into(), |(id, _)| id.to_string())
                    ));
                }
            }
        }
        s
    }
    fn ctrl_stats(&self) -> &[CtrlStats] {
        &[]
    }
    fn ctrl_servers(&self) -> usize {
        1
    }
    const LINK_UNITS: LinkUnits = LinkUnits {
        busy: "cycles",
        blocking: "cycles",
    };
    fn link_obs(&self, start: Cycle, end: Cycle, out: &mut Vec<LinkObs>) {
        if !self.obs {
            return;
        }
        for n in 0..self.nodes() {
            let node = (self.lo + n) as u32;
            for p in 0..self.degree(node) {
                let o = self.base[n] as usize + p;
                let l = &self.link[o];
                // Header blocking: the waits of the headers granted the link, and the
                // timeout of those that gave up on it.
                let gave_up = l.timeouts * self.timeout.unwrap_or(0);
                out.push(LinkObs {
                    from: node,
                    port: p as u8,
                    to: self.peer[o].0,
                    busy: self.busy_cycles(o, start, end),
                    flits: self.obs_flits[o],
                    headers: l.requests,
                    blocking: l.wait.s1 as u64 + gave_up,
                });
            }
        }
    }
    fn measures(&self, start: Cycle, end: Cycle) -> NetMeasures {
        let (mut sum, mut max) = (0u64, 0u64);
        for o in 0..self.out.len() {
            let b = self.busy_cycles(o, start, end);
            sum += b;
            max = max.max(b);
        }
        NetMeasures {
            flits_accepted: self.flits_accepted,
            link_busy: sum,
            link_busy_max: max,
            link_count: self.out.len(),
            link_capacity: (end - start).max(1) as f64,
        }
    }
    fn mode_measures(&self, start: Cycle, end: Cycle) -> TimeoutMeasures {
        let mut stats = self.stats.clone();
        for n in 0..self.nodes() {
            let node = (self.lo + n) as u32;
            for p in 0..self.degree(node) {
                let o = self.base[n] as usize + p;
                let mut l = self.link[o];
                l.busy = self.busy_cycles(o, start, end);
                let n = (self.in_sys[o] as usize).min(OCCUPANCY - 1);
                l.time_in[n] += overlap(self.sys_since[o], end, start, Some(end));
                stats
                    .links
                    .push((self.net.port_index(node, p as u8) as u32, self.class[o], l));
            }
        }
        stats.watch = self.watch.map(|o| {
            let node = self.base.partition_point(|&b| b as usize <= o) - 1;
            let p = o - self.base[node] as usize;
            let g = self.net.port_index((self.lo + node) as u32, p as u8) as u32;
            (g, self.watch_dist.clone())
        });
        TimeoutMeasures {
            stats,
            hosts: self.hosts.len(),
            window: end - start,
        }
    }
}

//! Input virtual-channel buffers and the output side's view of the downstream buffers
//! (credits and which output VCs are allocated).
//!
//! Under `VcRelease::TailCredit` (the default) a VC buffer holds flits of one message at
//! a time: an output VC is handed to a new message only after the previous message's
//! tail has left the downstream buffer (its credit comes back marked "free"), so buffers
//! are counts, not flit queues. Under `TailSent` (BookSim's `wait_for_tail_credit = 0`)
//! the output VC is free once the tail is sent, so the next message's flits queue in the
//! downstream buffer behind the previous one's: the buffer is still a count, because the
//! messages in it are in FIFO order and the one at the front has all its remaining flits
//! there once the next head has arrived; each VC keeps a ring of message slots, the
//! upstream router writing a head's header at its own position in the ring and the VC
//! reading them in order. The ring has `⌈B/L⌉ + 1` slots for a buffer of B flits
//! and messages of at least L flits ([`ring_slots`]), and only the network ports that
//! exist have rings ([`InputBuffers::new`]): a terminal node of a concentrated network
//! (one network port) keeps the rings of that port, not of its router's radix. The
//! local input port's VCs are the injection DMA engines; their "buffer" is the message
//! in memory, so it holds all flits of the message at once (one slot each).
//!
//! Message slots hold a 4-byte handle, not the message: the headers and routing
//! decisions live in a pool ([`MsgSlots::occupy`], [`MsgSlots::vacate`]) with
//! one entry per message present in a VC, so the memory for them follows the messages
//! in flight, not nodes × VCs × ring slots (most slots are empty below saturation, and a
//! TailSent ring's extra slots cost 4 bytes each, not a header's 100).

use crate::foundation::types::{Cycle, MsgId, NodeId};
use crate::router::Layout;
use crate::routing::{Route, RouteState};

/// What travels with a message's head flit: its identity and the measurements gathered
/// hop by hop.
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
pub struct MsgHeader {
    /// Message id.
    pub id: MsgId,
    /// Destination node.
    pub dst: NodeId,
    /// Length in flits.
    pub len: u32,
    /// Network hops taken so far.
    pub hops: u16,
    /// Cycle the message was created at the source.
    pub created: Cycle,
    /// Cycle the head flit left the source router (won its crossbar).
    pub injected: Cycle,
    /// Blocking accumulated on network hops (cycles beyond the pipeline's own).
    pub blocking: u32,
    /// Blocking at the destination waiting for an ejection DMA engine or the crossbar.
    pub eject_wait: u32,
    /// Cycles spent waiting in routing-controller queues.
    pub ctrl_wait: u32,
    /// Whether the message belongs to the measurement window.
    pub measured: bool,
    /// Per-message routing state (Valiant/ROMM phase, min_adapt's escape), updated by
    /// the routers on the way (one byte).
    pub routing: RouteState,
    /// Its message class under request/reply traffic (`workload.reply`): 0 a request
    /// (or a one-way message), 1 a reply; each class has its own half of every port's
    /// VCs (see `routing::Route::in_class`).
    pub class: u8,
    /// A request: the flits of the reply its delivery creates (0: none, one-way).
    pub reply_len: u32,
    /// A reply: its request's latency (creation to delivery), so that the round trip
    /// is measured where the reply is delivered.
    pub request_latency: u32,
}

/// Stage of the message occupying an input VC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Zeroable)]
#[repr(u8)]
pub enum VcState {
    /// No message.
    #[default]
    Idle,
    /// Header waiting for (or in) the routing controller.
    Routing,
    /// Header routed, waiting for an output VC.
    WaitVc,
    /// Output VC allocated: flits compete for the crossbar.
    Active,
}

/// One input virtual channel: the state the allocators read every cycle. What is only
/// needed once per message per router is in [`VcMsg`], so the per-cycle scans touch
/// 24 bytes per VC.
#[derive(Clone, Copy, Debug, Default, bytemuck::Zeroable)]
pub struct InVc {
    /// Flits in the buffer.
    pub buffered: u32,
    /// Flits of the message that have still to leave this VC (buffered or not yet arrived).
    pub left: u32,
    /// Earliest cycle of the next stage (VC allocation when WaitVc, switch when Active).
    pub ready_at: Cycle,
    /// Stage.
    pub state: VcState,
    /// Allocated output port (Active).
    pub out_port: u8,
    /// Allocated output VC (Active).
    pub out_vc: u8,
    /// The head flit has not yet left this VC.
    pub head: bool,
    /// Ring position of the message at the front (`TailSent`; always 0 otherwise).
    pub front: u16,
    /// Messages whose heads arrived behind the front one (`TailSent`; always 0 otherwise).
    pub queued: u16,
}

/// The message occupying an input VC: its header and routing decision, an entry of
/// [`InputBuffers`]'s pool from the cycle its header reaches the VC to the cycle its
/// tail leaves it.
#[derive(Clone, Copy, Debug, Default, bytemuck::Zeroable)]
pub struct VcMsg {
    /// The occupying message's header (valid unless the VC is Idle).
    pub hdr: MsgHeader,
    /// The header's candidates, computed by the routing controller.
    pub route: Route,
    /// Cycle the routing controller finished the header.
    pub routed_at: Cycle,
}

/// Per-port bit masks of VCs in a given condition, with a per-node summary of the ports
/// that have any, so a router visits only what can act.
#[derive(Clone, Debug)]
pub struct VcMasks {
    per_port: Vec<u64>,
    per_node: Vec<u64>,
    all_ports: usize,
}

impl VcMasks {
    /// Empty masks for `nodes` nodes; an error when the memory cannot be had.
    pub fn new(nodes: usize, layout: &Layout) -> crate::foundation::error::Result<Self> {
        use crate::foundation::limits::zeroed_table;
        Ok(VcMasks {
            per_port: zeroed_table(nodes.checked_mul(layout.all_ports()), "VC mask")?,
            per_node: zeroed_table(Some(nodes), "node VC mask")?,
            all_ports: layout.all_ports(),
        })
    }

    /// Marks (node, port, vc).
    #[inline]
    pub fn set(&mut self, node: usize, port: usize, vc: usize) {
        self.per_port[node * self.all_ports + port] |= 1 << vc;
        self.per_node[node] |= 1 << port;
    }

    /// Unmarks (node, port, vc).
    #[inline]
    pub fn clear(&mut self, node: usize, port: usize, vc: usize) {
        let m = &mut self.per_port[node * self.all_ports + port];
        *m &= !(1 << vc);
        if *m == 0 {
            self.per_node[node] &= !(1 << port);
        }
    }

    /// Ports of `node` with a marked VC.
    #[inline]
    pub fn ports(&self, node: usize) -> u64 {
        self.per_node[node]
    }

    /// Marked VCs of (node, port).
    #[inline]
    pub fn vcs(&self, node: usize, port: usize) -> u64 {
        self.per_port[node * self.all_ports + port]
    }
}

/// The input side of every router of a partition.
#[derive(Clone, Debug)]
pub struct InputBuffers {
    /// `[node][port][slot]`
    pub vc: Vec<InVc>,
    /// The message slots of every VC (the occupying message and, under `TailSent`, the
    /// ones queued behind it): one slot per VC indexed as `vc`; with rings, `ring` slots
    /// from `msg_base[i]` for each VC `i` of an existing network port and one for each
    /// DMA engine. See [`InputBuffers::cur`].
    pub msg: MsgSlots,
    /// Message slots per network VC: 1, or [`ring_slots`] under `TailSent`.
    pub ring: usize,
    /// `[node][port][slot]`: where VC `i`'s slots start in `msg` (empty when `ring` is
    /// 1); VCs of ports that do not exist have none and point at slot 0, which they never
    /// read.
    pub msg_base: Vec<u32>,
    /// VCs waiting for virtual-channel allocation.
    pub wait_vc: VcMasks,
    /// Active VCs holding at least one flit: candidates for the switch.
    pub ready: VcMasks,
    /// Per node: input ports that received a head flit this cycle.
    pub new_head: Vec<u64>,
    /// `[node][port]`: the VC of that head flit.
    pub new_head_vc: Vec<u8>,
}

impl InputBuffers {
    /// Empty buffers with `ring` message slots per VC of each network port `(n, p)` for
    /// which `exists(n, p)` (local node numbers), one per DMA engine, and room for
    /// `messages` messages present at once before the pool grows; an error when the
    /// memory cannot be had.
    pub fn new(
        nodes: usize,
        layout: &Layout,
        ring: usize,
        exists: impl Fn(usize, usize) -> bool,
        messages: usize,
    ) -> crate::foundation::error::Result<Self> {
        use crate::foundation::limits::zeroed_table;
        let slots = nodes.checked_mul(layout.per_node);
        let (msg_base, msgs) = if ring == 1 {
            (Vec::new(), slots)
        } else {
            let mut base: Vec<u32> = zeroed_table(slots, "message slot offset")?;
            let mut next = 0u64;
            for n in 0..nodes {
                for p in 0..layout.all_ports() {
                    let k = if p == layout.local() {
                        1
                    } else if exists(n, p) {
                        ring as u64
                    } else {
                        continue;
                    };
                    for v in 0..layout.vcs_of(p) {
                        base[layout.vc_idx(n, p, v)] = u32::try_from(next).map_err(|_| {
                            crate::foundation::error::Error::Limit(format!(
                                "more than 2^32 message slots ({nodes} nodes, {ring} per VC)"
                            ))
                        })?;
                        next += k;
                    }
                }
            }
            (base, usize::try_from(next).ok())
        };
        Ok(InputBuffers {
            vc: zeroed_table(slots, "input virtual-channel")?,
            msg: MsgSlots::new(msgs, Some(messages))?,
            ring,
            msg_base,
            wait_vc: VcMasks::new(nodes, layout)?,
            ready: VcMasks::new(nodes, layout)?,
            new_head: crate::foundation::limits::zeroed_table(Some(nodes), "new head")?,
            new_head_vc: crate::foundation::limits::zeroed_table(
                nodes.checked_mul(layout.all_ports()),
                "new head VC",
            )?,
        })
    }

    /// Index in `msg` of the message at the front of VC `i` (a `Layout::vc_idx`).
    #[inline]
    pub fn cur(&self, i: usize) -> usize {
        if self.ring == 1 {
            i
        } else {
            self.msg_base[i] as usize + self.vc[i].front as usize
        }
    }

    /// Index in `msg` of ring position `q` of VC `i`.
    #[inline]
    pub fn at(&self, i: usize, q: usize) -> usize {
        if self.ring == 1 {
            i
        } else {
            self.msg_base[i] as usize + q
        }
    }
}

/// Message slots and the pool of the messages in them (see the module doc): a slot holds
/// its message's index in the pool, 0 when empty. All zeros is the empty table, allocated
/// zeroed, so the operating system maps its pages only when a message first reaches one
/// of their VCs (a d = 20 hypercube at low load never pays for most of them).
#[derive(Clone, Debug)]
pub struct MsgSlots {
    slot: Vec<u32>,
    /// The messages present; entry 0 is what an empty slot reads (a default message,
    /// never written), the others are reused through `spare`, so the pool grows to the
    /// largest number of messages present at once.
    pool: Vec<VcMsg>,
    /// Entries of `pool` free for the next message.
    spare: Vec<u32>,
}

impl MsgSlots {
    /// `slots` empty slots, with room reserved for `room` messages (those expected at
    /// once, `switching::wormhole::messages_present`: beyond it the pool doubles as the
    /// messages present reach a new peak, a handful of times in a run at most, mostly in
    /// the warm-up); an error when there is no memory for them.
    pub fn new(
        slots: Option<usize>,
        room: Option<usize>,
    ) -> crate::foundation::error::Result<Self> {
        let no_memory = || {
            crate::foundation::error::Error::Limit(
                "no memory for the message pool of the input buffers".into(),
            )
        };
        let room = room.and_then(|v| v.checked_add(1)).ok_or_else(no_memory)?;
        let mut pool = Vec::new();
        pool.try_reserve_exact(room).map_err(|_| no_memory())?;
        pool.push(VcMsg::default());
        let mut spare = Vec::new();
        spare.try_reserve_exact(room).map_err(|_| no_memory())?;
        Ok(MsgSlots {
            slot: crate::foundation::limits::zeroed_table(slots, "input message slot")?,
            pool,
            spare,
        })
    }

    /// Number of message slots (ring positions and DMA engines included).
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    /// Whether there are no slots at all.
    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// The message in slot `s` (a [`InputBuffers::cur`] or [`InputBuffers::at`]); an
    /// empty slot reads as a default message.
    #[inline]
    pub fn get(&self, s: usize) -> &VcMsg {
        &self.pool[self.slot[s] as usize]
    }

    /// The message in slot `s`, which holds one.
    #[inline]
    pub fn get_mut(&mut self, s: usize) -> &mut VcMsg {
        let h = self.slot[s] as usize;
        debug_assert_ne!(h, 0, "message slot {s} is empty");
        &mut self.pool[h]
    }

    /// Puts the message with header `hdr` in the empty slot `s` (its head is on its way
    /// to the VC); its route is computed when the head reaches the front.
    #[inline]
    pub fn occupy(&mut self, s: usize, hdr: MsgHeader) {
        debug_assert_eq!(self.slot[s], 0, "message slot {s} is taken");
        let m = VcMsg {
            hdr,
            ..VcMsg::default()
        };
        let h = match self.spare.pop() {
            Some(h) => {
                self.pool[h as usize] = m;
                h
            }
            None => {
                self.pool.push(m);
                (self.pool.len() - 1) as u32
            }
        };
        self.slot[s] = h;
    }

    /// Empties slot `s`: its message's tail has left the VC.
    #[inline]
    pub fn vacate(&mut self, s: usize) {
        let h = std::mem::take(&mut self.slot[s]);
        debug_assert_ne!(h, 0, "message slot {s} is already empty");
        self.spare.push(h);
    }

    /// Messages present in the partition's VCs.
    pub fn present(&self) -> usize {
        self.pool.len() - 1 - self.spare.len()
    }
}

/// Message slots a VC buffer of `buffer` flits needs under `TailSent` when every message
/// has at least `min_len` flits: `⌈buffer/min_len⌉ + 1`.
///
/// Why that many: a message keeps its slot from the cycle its head is sent upstream to
/// the cycle the upstream router gets its tail's credit back. Credits come back in the
/// order flits leave, and flits leave in message order, so when a tail is sent, of the
/// k messages holding slots (that one included) all but the oldest have every flit's
/// credit outstanding (≥ L each) and the oldest at least its tail's: (k − 1)·L + 1 ≤ B,
/// so k ≤ ⌈B/L⌉, one fewer than the slots, and the next message allocated the output VC
/// finds a slot when its head is sent. The upstream router counts its messages in the
/// ring (`OutputVcs::in_ring`) and frees an output VC at its tail only while the ring has
/// room, which under that bound is always: a message shorter than `min_len` (a trace's,
/// replayed on a machine configured for longer ones) waits for a slot, its output VC
/// held until a tail's credit comes back, rather than overwriting one.
pub fn ring_slots(buffer: u32, min_len: u32) -> usize {
    (buffer.max(1) as usize).div_ceil(min_len.max(1) as usize) + 1
}

/// The output side of every router of a partition: credits for the downstream VC
/// buffers and which output VCs (or ejection DMA engines) are allocated.
#[derive(Clone, Debug)]
pub struct OutputVcs {
    /// `[node][port][slot]`: free slots in the downstream buffer.
    pub credits: Vec<u32>,
    /// `[node][port]`: mask of unallocated VCs.
    pub free: Vec<u64>,
    /// `[node][port]`: credits summed over the port's VCs.
    pub credit_sum: Vec<u32>,
    /// `[node][port]`: `credit_sum` as it stood before the port's first flit of cycle
    /// `.1` left, written by [`OutputVcs::snapshot`] (routings that read other routers'
    /// credits, `UgalGlobal`; empty otherwise, [`OutputVcs::with_snapshots`]).
    pub credit_snap: Vec<(u32, Cycle)>,
    /// `[node][port][slot]`: the input VC slot (`Layout::slot`) the output VC is allocated to,
    /// so a returning credit can wake the VC that stalled waiting for it.
    pub holder: Vec<u16>,
    /// `[node][port][slot]`: ring position of the downstream VC the next head sent on it
    /// writes its header to (`TailSent` only; empty otherwise).
    pub ring_pos: Vec<u16>,
    /// `[node][port][slot]`: messages sent on the output VC whose tail's credit has not
    /// come back, i.e. holding a slot of the downstream ring (`TailSent` only).
    pub in_ring: Vec<u32>,
    /// `[node][port]`: output VCs whose tail was sent while the downstream ring was full,
    /// freed when a tail's credit comes back (`TailSent` only; see [`ring_slots`]).
    pub held: Vec<u64>,
}

impl OutputVcs {
    /// All VCs free with full credits; absent ports (mesh boundary) have no free VC.
    /// An error when the memory cannot be had.
    pub fn new(
        nodes: usize,
        layout: &Layout,
        buffer: u32,
        ring: bool,
        exists: impl Fn(usize, usize) -> bool,
    ) -> crate::foundation::error::Result<Self> {
        use crate::foundation::limits::zeroed_table;
        let np = layout.all_ports();
        let (slots, ports) = (nodes.checked_mul(layout.per_node), nodes.checked_mul(np));
        let mut o = OutputVcs {
            credits: zeroed_table(slots, "output VC credit")?,
            free: zeroed_table(ports, "free output VC")?,
            credit_sum: zeroed_table(ports, "output port credit")?,
            credit_snap: Vec::new(),
            holder: zeroed_table(slots, "output VC holder")?,
            ring_pos: zeroed_table(if ring { slots } else { Some(0) }, "output VC ring")?,
            in_ring: zeroed_table(if ring { slots } else { Some(0) }, "output VC ring count")?,
            held: zeroed_table(if ring { ports } else { Some(0) }, "held output VC")?,
        };
        for n in 0..nodes {
            for p in 0..np {
                if p < layout.ports && !exists(n, p) {
                    continue;
                }
                let k = layout.vcs_of(p);
                o.free[n * np + p] = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
                if p < layout.ports {
                    for v in 0..k {
                        o.credits[layout.vc_idx(n, p, v)] = buffer;
                    }
                    o.credit_sum[n * np + p] = buffer * k as u32;
                }
            }
        }
        Ok(o)
    }

    /// Keeps, per port, the credits it had when the cycle began ([`OutputVcs::snapshot`],
    /// [`OutputVcs::credits_at_start`]); an error when the memory cannot be had.
    pub fn with_snapshots(mut self) -> crate::foundation::error::Result<Self> {
        self.credit_snap = crate::foundation::limits::collected_table(
            self.credit_sum.len(),
            std::iter::repeat_n((0, Cycle::MAX), self.credit_sum.len()),
            "output port credit snapshot",
        )?;
        Ok(self)
    }

    /// Records port `pi`'s summed credits as they stand, once per cycle `t`: called
    /// before the port's first flit of the cycle leaves. Credits only arrive before any
    /// router's step of a cycle (the engine delivers first), so this is their value when
    /// the cycle's routing began. Nothing without snapshots.
    #[inline]
    pub fn snapshot(&mut self, pi: usize, t: Cycle) {
        if let Some(s) = self.credit_snap.get_mut(pi) {
            if s.1 != t {
                *s = (self.credit_sum[pi], t);
            }
        }
    }

    /// Port `pi`'s summed credits when cycle `t`'s routing began, whether its router
    /// has sent flits in cycle `t` already or not: the same for any order routers are
    /// stepped in (the current value without snapshots).
    #[inline]
    pub fn credits_at_start(&self, pi: usize, t: Cycle) -> u32 {
        match self.credit_snap.get(pi) {
            Some(&(v, at)) if at == t => v,
            _ => self.credit_sum[pi],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(len: u32) -> MsgHeader {
        MsgHeader {
            len,
            ..MsgHeader::default()
        }
    }

    #[test]
    fn the_message_pool_holds_only_the_messages_present_and_reuses_what_leaves() {
        let mut m = MsgSlots::new(Some(8), Some(4)).unwrap();
        assert_eq!(m.len(), 8);
        // An empty slot reads as a default message.
        assert_eq!(m.get(5).hdr, MsgHeader::default());
        m.occupy(5, header(12));
        m.occupy(6, header(3));
        assert_eq!(
            (m.present(), m.get(5).hdr.len, m.get(6).hdr.len),
            (2, 12, 3)
        );
        m.get_mut(6).hdr.hops = 7;
        assert_eq!(m.get(6).hdr.hops, 7);
        m.vacate(5);
        assert_eq!(m.present(), 1);
        assert_eq!(m.get(5).hdr, MsgHeader::default());
        // The entry that left is the next one taken, with nothing of its old message.
        m.occupy(0, header(1));
        assert_eq!((m.present(), m.pool.len()), (2, 3));
        assert_eq!(m.get(0).hdr.len, 1);
        assert_eq!(m.get(0).routed_at, 0);
        assert_eq!(m.get(6).hdr.hops, 7);
    }
}

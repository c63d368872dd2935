//! Hardware invariants, checked on demand (tests, and runs that ask for it). For every
//! channel (output VC of node u, input VC of its downstream node w):
//! - credits at u + flits buffered at w + flits in flight u→w + credits in flight w→u
//!   equals the buffer depth (flits and credits are conserved);
//! - at most one input VC of u holds the output VC, and it is held exactly while a
//!   message occupies w's input VC or its head or its release is in flight (no VC is held
//!   by two messages, none is leaked; under `TailSent`, exactly while an input VC of u
//!   holds it);
//! - every live flit is somewhere: injection engines + buffers + links;
//! - under request/reply traffic, every message in a network VC, and every output VC a
//!   message holds, is in its class's half of the VCs (requests never share a VC with
//!   replies).

use crate::engine::sim::Simulation;
use crate::foundation::types::{NodeId, PortId};
use crate::router::buffers::VcState;
use crate::router::link::Signal;
use crate::switching::wormhole::WormholeNet;
use std::collections::HashMap;

/// Checks every invariant; the error names the first broken one.
pub fn check(sim: &Simulation<WormholeNet>, buffer: u32) -> Result<(), String> {
    let net = &sim.net;
    let lay = net.layout;
    let topo = &net.topology;
    let mut flits_in_flight: HashMap<(u32, u8, u8), u32> = HashMap::new();
    let mut credits_in_flight: HashMap<(u32, u8, u8), u32> = HashMap::new();
    let mut heads_in_flight: HashMap<(u32, u8, u8), u32> = HashMap::new();
    let mut frees_in_flight: HashMap<(u32, u8, u8), u32> = HashMap::new();
    let mut live = 0i64;
    for e in sim.in_flight() {
        match e.signal() {
            Signal::Flit {
                node,
                port,
                vc,
                n,
                head,
            } => {
                *flits_in_flight.entry((node, port, vc)).or_default() += n as u32;
                live += n as i64;
                if head {
                    *heads_in_flight.entry((node, port, vc)).or_default() += 1;
                }
            }
            Signal::Credit {
                node,
                port,
                vc,
                n,
                free,
            } => {
                *credits_in_flight.entry((node, port, vc)).or_default() += n as u32;
                if free {
                    *frees_in_flight.entry((node, port, vc)).or_default() += 1;
                }
            }
        }
    }
    for u in 0..net.nodes() {
        for p in 0..lay.all_ports() {
            for v in 0..lay.vcs_of(p) {
                let s = &net.inputs.vc[lay.vc_idx(u, p, v)];
                live += s.buffered as i64;
                if s.state == VcState::Idle && s.buffered != 0 {
                    return Err(format!("idle VC ({u},{p},{v}) holds {} flits", s.buffered));
                }
                // Under `TailSent` the flits of queued messages sit behind the front one's.
                if s.queued == 0 && s.buffered > s.left {
                    return Err(format!(
                        "VC ({u},{p},{v}) buffers more flits than its message has left"
                    ));
                }
                if p < lay.ports && s.buffered > buffer {
                    return Err(format!(
                        "VC ({u},{p},{v}) overflows: {} > {buffer}",
                        s.buffered
                    ));
                }
                if net.class_vcs > 0 && s.state != VcState::Idle {
                    let i = lay.vc_idx(u, p, v);
                    let class = net.inputs.msg.get(net.inputs.cur(i)).hdr.class as usize;
                    let per = net.class_vcs as usize;
                    if p < lay.ports && v / per != class {
                        return Err(format!(
                            "VC ({u},{p},{v}) holds a message of class {class}, outside \
                             VCs {}..{}",
                            class * per,
                            (class + 1) * per
                        ));
                    }
                    let (op, ov) = (s.out_port as usize, s.out_vc as usize);
                    if s.state == VcState::Active && op < lay.ports && ov / per != class {
                        return Err(format!(
                            "VC ({u},{p},{v}) holds output VC ({op},{ov}) for a message of \
                             class {class}, outside VCs {}..{}",
                            class * per,
                            (class + 1) * per
                        ));
                    }
                }
            }
        }
        // Ejection engines: each held by at most one message, and allocated exactly then.
        let local = lay.local();
        for e in 0..lay.dma {
            let holders = net.holders(u, local, e).count();
            let allocated = net.outputs.free[lay.port_idx(u, local)] >> e & 1 == 0;
            if holders > 1 || allocated != (holders == 1) {
                return Err(format!(
                    "ejection engine {e} of node {u}: {holders} holders, allocated = {allocated}"
                ));
            }
        }
        for p in 0..lay.ports {
            let Some(w) = topo.neighbor(NodeId(u as u32), PortId(p as u8)) else {
                continue;
            };
            // The input port the channel arrives on (the dragonfly's links name their two
            // ends by their own routers' ports).
            let q = topo.arrival_port(NodeId(u as u32), PortId(p as u8)).idx();
            for v in 0..lay.vcs {
                let key_down = (w.0, q as u8, v as u8);
                let key_up = (u as u32, p as u8, v as u8);
                let credits = net.outputs.credits[lay.vc_idx(u, p, v)];
                let down = &net.inputs.vc[lay.vc_idx(w.idx(), q, v)];
                let total = credits
                    + down.buffered
                    + flits_in_flight.get(&key_down).copied().unwrap_or(0)
                    + credits_in_flight.get(&key_up).copied().unwrap_or(0);
                if total != buffer {
                    return Err(format!(
                        "channel {u}→{w} port {p} vc {v}: credits {credits} + buffered {} + in flight = {total}, not {buffer}",
                        down.buffered
                    ));
                }
                let holders = net.holders(u, p, v).count();
                if holders > 1 {
                    return Err(format!(
                        "output VC ({u},{p},{v}) is held by {holders} messages"
                    ));
                }
                let allocated = net.outputs.free[lay.port_idx(u, p)] >> v & 1 == 0;
                // Under `TailSent` an output VC is free from the cycle its tail is sent,
                // whatever the downstream buffer still holds.
                let tail_sent = net.tail_sent();
                // Or, under `TailSent`, held for want of a slot in the downstream ring.
                let held = tail_sent && net.outputs.held[lay.port_idx(u, p)] >> v & 1 != 0;
                let occupied = holders == 1
                    || held
                    || (!tail_sent
                        && (down.state != VcState::Idle
                            || heads_in_flight.contains_key(&key_down)
                            || frees_in_flight.contains_key(&key_up)));
                if allocated != occupied {
                    return Err(format!(
                        "output VC ({u},{p},{v}) allocated = {allocated} but downstream occupied = {occupied}"
                    ));
                }
            }
        }
    }
    if live != net.flits_live {
        return Err(format!(
            "{live} flits found, {} accounted live",
            net.flits_live
        ));
    }
    Ok(())
}

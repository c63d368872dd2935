//! Hold-strategy deadlock: circuits that each wait for a link held by another waiting
//! circuit, around a cycle. Each partition lists the edges it knows for the engine's
//! wait-for graph (`engine::waits`): its waiting circuits → the link they wait for, its
//! held link ends → their holders. The description of a cycle and the invariant check
//! work on a whole network stepped as one partition.

use crate::config::ConflictStrategy;
use crate::engine::waits::WaitEdge;
use crate::foundation::types::PortId;
use crate::switching::circuit::links::{FREE, NONE};
use crate::switching::circuit::measure::Phase;
use crate::switching::circuit::CircuitNet;
use std::collections::HashMap;

const CIRCUIT: u8 = 0;
const LINK: u8 = 1;

impl CircuitNet {
    /// The physical link of local end `e`: the lower global index of its ends.
    fn link_of(&self, e: usize) -> u64 {
        let g = self.ends.global(e);
        match self.ends.peer[e] {
            NONE => g as u64,
            p => g.min(p) as u64,
        }
    }

    /// This partition's edges of the wait-for graph; none when waits cannot deadlock
    /// (drop and adaptive never wait holding a link; a hold timeout ends every wait).
    pub fn wait_edges(&self, out: &mut Vec<WaitEdge>) {
        if self.strategy != ConflictStrategy::Hold || self.hold_timeout.is_some() {
            return;
        }
        for k in &self.circuits {
            if k.waiting_at != NONE {
                let link = self.link_of(k.waiting_at as usize);
                out.push(((CIRCUIT, k.id()), (LINK, link)));
            }
        }
        for (e, &h) in self.ends.holder.iter().enumerate() {
            if h != FREE {
                out.push(((LINK, self.link_of(e)), (CIRCUIT, h)));
            }
        }
    }

    /// Records by message id (circuits in progress in this partition).
    fn by_id(&self) -> HashMap<u64, u32> {
        let gone: Vec<u32> = self.free.iter().chain(&self.free_later).copied().collect();
        (0..self.circuits.len() as u32)
            .filter(|c| !gone.contains(c))
            .map(|c| (self.circuits[c as usize].id(), c))
            .collect()
    }

    /// The circuit whose link circuit `c` waits for, if `c` waits for a link.
    fn waits_for(&self, c: u32, ids: &HashMap<u64, u32>) -> Option<u32> {
        let e = self.circuits[c as usize].waiting_at;
        if e == NONE {
            return None;
        }
        let e = e as usize;
        let h = self.ends.holder[e];
        let b = if h != FREE {
            h
        } else {
            match self.ends.peer[e] {
                NONE => FREE,
                p => self.ends.local(p).map_or(FREE, |q| self.ends.holder[q]),
            }
        };
        ids.get(&b).copied()
    }

    /// A cycle of waiting circuits, if there is one (each waits for a link held by the
    /// next, which waits in turn: none can ever move). Whole network on one partition.
    pub fn wait_cycle(&self) -> Option<Vec<u32>> {
        if self.link_waiting == 0 {
            return None;
        }
        let ids = self.by_id();
        // Colour: 0 unvisited, 1 on the current walk, 2 done.
        let mut colour = vec![0u8; self.circuits.len()];
        for start in 0..self.circuits.len() as u32 {
            if colour[start as usize] != 0 || self.circuits[start as usize].waiting_at == NONE {
                continue;
            }
            let mut walk = Vec::new();
            let mut c = start;
            loop {
                match colour[c as usize] {
                    1 => {
                        let i = walk.iter().position(|&x| x == c).expect("on the walk");
                        return Some(walk[i..].to_vec());
                    }
                    2 => break,
                    _ => {}
                }
                colour[c as usize] = 1;
                walk.push(c);
                match self.waits_for(c, &ids) {
                    Some(b) => c = b,
                    None => break,
                }
            }
            for x in walk {
                colour[x as usize] = 2;
            }
        }
        None
    }

    /// Describes a wait cycle for the deadlock report.
    pub fn describe_wait_cycle(&self, cycle: &[u32]) -> String {
        let ids = self.by_id();
        let mut s = format!(
            "{} circuits wait for each other's links (hold strategy):\n",
            cycle.len()
        );
        for &c in cycle {
            let k = &self.circuits[c as usize];
            let e = k.waiting_at as usize;
            let (n, p) = (self.part.node(e / self.deg), e % self.deg);
            let holder = self.waits_for(c, &ids).expect("in the cycle");
            let _ = std::fmt::Write::write_fmt(
                &mut s,
                format_args!(
                    "  message {} ({} → {}) holds {} links and waits at node {n} for output {} \
                     held by message {}\n",
                    k.msg.id,
                    k.msg.id.src(),
                    k.msg.dst,
                    k.held,
                    self.topology.port_name(PortId(p as u8)),
                    self.circuits[holder as usize].msg.id
                ),
            );
        }
        s
    }

    /// Checks the circuit invariants of a whole network on one partition: no link end
    /// held by two circuits, no half-duplex link held at both ends (outside a same-cycle
    /// race being settled), every held link in its holder's path, and the counts of held
    /// links agree.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        let ids = self.by_id();
        let mut held = vec![0u32; self.circuits.len()];
        for (e, &h) in self.ends.holder.iter().enumerate() {
            if h == FREE {
                continue;
            }
            let (n, p) = (self.part.node(e / self.deg), (e % self.deg) as u8);
            let Some(&c) = ids.get(&h) else {
                return Err(format!(
                    "node {n} port {p} is held by a circuit not in progress"
                ));
            };
            let k = &self.circuits[c as usize];
            let on_path = k
                .nodes
                .iter()
                .zip(&k.ports)
                .any(|(&a, &b)| a == n && b == p);
            if !on_path {
                return Err(format!(
                    "node {n} port {p} is held by message {} but is not on its path",
                    k.msg.id
                ));
            }
            held[c as usize] += 1;
            let peer = self.ends.peer[e];
            if let Some(q) = (peer != NONE).then(|| self.ends.local(peer)).flatten() {
                if self.ends.holder[q] != FREE && self.ends.since[q] != self.ends.since[e] {
                    return Err(format!(
                        "the half-duplex link at node {n} port {p} is held by two circuits"
                    ));
                }
            }
        }
        for &c in ids.values() {
            let k = &self.circuits[c as usize];
            let expect = if k.aborting || k.phase != Phase::Release {
                k.nodes.len() as u32
            } else {
                k.nodes.len() as u32 - k.rel_next
            };
            // A hand-off in progress counts the link for the waiter already.
            if k.held != expect || held[c as usize] > k.held {
                return Err(format!(
                    "message {} counts {} links held, its path says {expect}, the ends {}",
                    k.msg.id, k.held, held[c as usize]
                ));
            }
        }
        Ok(())
    }
}

//! Request/reply traffic in wormhole switching (`workload.reply`): when a request's tail
//! is absorbed at its destination, that node creates the reply, addressed to the
//! request's source, in message class 1. It waits in the node's memory from the cycle
//! the tail is absorbed and goes before the requests waiting there (BookSim's pending
//! replies before new requests); its route uses the upper half of every port's VCs
//! (`routing::Route::in_class`), so a reply never waits for a VC behind a request. Its
//! lengths were drawn when its request was created (`traffic::reply`), and the engine
//! counts it with the messages the workload created (`engine::probe::classes`).

use crate::engine::probe::MsgStats;
use crate::foundation::types::{Cycle, MsgId, NodeId};
use crate::router::buffers::MsgHeader;
use crate::router::dma::PendingMsg;
use crate::switching::wormhole::WormholeNet;

/// Set in the sequence number of a reply's id: replies are numbered at their node
/// apart from the messages it creates itself, in an id space of their own.
pub const REPLY_SEQ: u64 = 1 << 39;

impl WormholeNet {
    /// Node `n` (local) absorbs the tail of request `req` in cycle `absorbed`: it creates
    /// the reply, which may start from that cycle on.
    pub(super) fn create_reply(
        &mut self,
        n: usize,
        req: &MsgHeader,
        absorbed: Cycle,
        stats: &mut MsgStats,
    ) {
        let here = NodeId(self.part.node(n));
        let seq = self.reply_seq[n];
        self.reply_seq[n] += 1;
        let reply = PendingMsg {
            id: MsgId::new(here, REPLY_SEQ | seq),
            dst: req.id.src(),
            len: req.reply_len,
            created: absorbed,
            measured: req.measured,
            class: 1,
            reply_len: 0,
            request_latency: (absorbed - req.created).min(u32::MAX as u64) as u32,
        };
        stats.reply_created(absorbed, reply.len, reply.measured);
        self.dma.enqueue_reply(n, reply);
    }
}

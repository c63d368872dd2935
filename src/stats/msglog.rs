//! The per-message log of a run (`routemu run --message-log FILE`; a replay's is one
//! replication): one CSV line per delivered message of every replication, warm-up and
//! drain included, with its times, hops, blocking and path. The columns `id, src, dst, flits, created,
//! injected, delivered, latency` mean what `routemu replay --trace-log` means by them.
//!
//! This module only joins and formats what the run recorded (`MsgStats::deliveries`
//! and `MsgStats::hops`, on when `experiment.observe.message_log` is) and passes the
//! text on a block of lines at a time ([`write()`]: the CLI streams it into the output
//! file); the switching modes decide what a hop is (see docs/measurements.md). Its cost
//! per message is bounded by issue 15 (docs/speed.md, "The per-message log's cost").

use crate::config::{LatencyDef, LatencyFrom, LatencyTo};
use crate::engine::probe::observe::{HopRec, NO_HOP};
use crate::engine::probe::Delivery;
use crate::foundation::types::{Cycle, NodeId};
use crate::topology::Topology;

/// The CSV header line (without its newline).
pub const HEADER: &str = "replication,id,seq,src,dst,flits,created,injected,delivered,latency,\
source_queue,network,hops,distance,blocking,eject_wait,ctrl_wait,measured,path";

/// What one replication recorded for the log.
#[derive(Clone, Debug, Default)]
pub struct RepLog {
    /// Every delivery, in any order.
    pub deliveries: Vec<Delivery>,
    /// Every node a header visited, in any order.
    pub hops: Vec<HopRec>,
}

/// How the log computes a message's latency: the report's definition.
#[derive(Clone, Copy, Debug)]
pub struct LatencyRule {
    /// The definition.
    pub def: LatencyDef,
    /// `router.ni.ejection_latency` (subtracted under `to: TailArrived`).
    pub ejection: u64,
}

impl LatencyRule {
    /// The latency of a message created at `created`, injected at `injected` and
    /// absorbed at `delivered`.
    pub fn latency(&self, created: u64, injected: u64, delivered: u64) -> u64 {
        let from = match self.def.from {
            LatencyFrom::Creation => created,
            LatencyFrom::HeadInjected => injected,
        };
        let to = match self.def.to {
            LatencyTo::TailDelivered => delivered,
            LatencyTo::TailArrived => delivered.saturating_sub(self.ejection),
        };
        to.saturating_sub(from)
    }
}

/// For every value below 10 000, its decimal digits followed by a comma as the last
/// bytes of a little-endian u64: bytes 3 to 6 hold four digits (leading zeros
/// included), byte 7 the comma, byte 0 minus one more than the number of digits the
/// value has without leading zeros, as an i8: the offset of its first digit from the
/// end of the 8 bytes, one addition ([`start`]); bytes 0 to 2 are overwritten by
/// whatever precedes the number on its line.
static DIGITS: [u64; 10_000] = digit_table();

const fn digit_table() -> [u64; 10_000] {
    let mut t = [0u64; 10_000];
    let mut v = 0;
    while v < 10_000 {
        let mut e = (b',' as u64) << 56;
        let mut k = 0;
        let mut w = v;
        while k < 4 {
            e |= (b'0' as u64 + (w % 10) as u64) << (8 * (6 - k));
            w /= 10;
            k += 1;
        }
        let digits: i8 = if v >= 1000 {
            4
        } else if v >= 100 {
            3
        } else if v >= 10 {
            2
        } else {
            1
        };
        e |= (-1 - digits) as u8 as u64;
        t[v] = e;
        v += 1;
    }
    t
}

/// Where the digits of a [`DIGITS`] entry start when its comma is at `end - 1`.
#[inline(always)]
fn start(end: usize, e: u64) -> usize {
    end.wrapping_add(e as u8 as i8 as isize as usize)
}

/// The four digits (leading zeros included) of a [`DIGITS`] entry, as they are stored.
#[inline(always)]
fn four(e: u64) -> u32 {
    (e >> 24) as u32
}

/// The buffer a line is assembled in, from its end at [`LINE_BUF`]: the bytes after
/// it let a line of up to [`COPY`] bytes be appended with one copy of a fixed size
/// (a few vector moves instead of a call to `memcpy`).
struct LineBuf([u8; LINE_BUF + COPY]);

impl LineBuf {
    fn new() -> Self {
        LineBuf([0; LINE_BUF + COPY])
    }

    /// Writes `v`'s bytes (little-endian) at `at`. The offset is taken modulo
    /// [`LINE_BUF`], which the callers' room checks make a no-op, so that the compiler
    /// sees the store in bounds: a line has about 30 stores, and their bounds checks
    /// cost a tenth of its formatting.
    #[inline(always)]
    fn put8(&mut self, at: usize, v: u64) {
        let at = at & (LINE_BUF - 1);
        self.0[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// [`put8`](Self::put8) of 4 bytes.
    #[inline(always)]
    fn put4(&mut self, at: usize, v: u32) {
        let at = at & (LINE_BUF - 1);
        self.0[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// [`put8`](Self::put8) of one byte.
    #[inline(always)]
    fn put1(&mut self, at: usize, v: u8) {
        self.0[at & (LINE_BUF - 1)] = v;
    }

    /// Appends the line assembled from `pos` to its newline (at `LINE_BUF - 1`) to
    /// `out`.
    #[inline(always)]
    fn append_line(&self, out: &mut Vec<u8>, pos: usize) {
        let len = LINE_BUF - pos;
        if len <= COPY {
            // The line and the bytes after it, then the length cut back.
            let at = pos & (LINE_BUF - 1);
            let n = out.len();
            out.extend_from_slice(&self.0[at..at + COPY]);
            out.truncate(n + len);
        } else {
            out.extend_from_slice(&self.0[pos.min(LINE_BUF)..LINE_BUF]);
        }
    }
}

/// Bytes copied at once when a line is appended ([`LineBuf::append_line`]).
const COPY: usize = 128;

/// Writes six one-digit values (each below 8), each followed by a comma, to end just
/// before `end`, and returns where they start (two stores instead of six).
#[inline(always)]
fn put_digits6(buf: &mut LineBuf, end: usize, v: [u64; 6]) -> usize {
    // "0,0,0,0," and "0,0," in little-endian order, each digit added in its byte.
    let lo = 0x2c30_2c30_2c30_2c30u64 + (v[0] | v[1] << 16 | v[2] << 32 | v[3] << 48);
    let hi = 0x2c30_2c30u32 + (v[4] | v[5] << 16) as u32;
    buf.put8(end - 12, lo);
    buf.put4(end - 4, hi);
    end - 12
}

/// Writes the decimal digits of `v` and a comma to end just before `end` and returns
/// where the digits start. Lines are assembled from their end, so the digits come out
/// in the order division yields them, four per division from a table, with no count
/// and no copy (the log has millions of numbers, most below 10 000: `write!` is several
/// times slower). Stores are 8 bytes wide: up to 7 bytes before the returned start may
/// be overwritten (lines being assembled from their end, they are not yet written), so
/// `end` must exceed the digits and comma by 7.
#[inline(always)]
fn put_field(buf: &mut LineBuf, end: usize, v: u64) -> usize {
    if v < 10_000 {
        let e = DIGITS[v as usize];
        buf.put8(end - 8, e);
        return start(end, e);
    }
    put_long(buf, end, v)
}

/// [`put_field`] for a value of 10 000 or more.
#[inline(always)]
fn put_long(buf: &mut LineBuf, end: usize, v: u64) -> usize {
    // The last four digits and the comma, then four digits at a time.
    let e = DIGITS[(v % 10_000) as usize];
    buf.put8(end - 8, e);
    let mut i = end - 5;
    let mut v = v / 10_000;
    while v >= 10_000 {
        buf.put4(i - 4, four(DIGITS[(v % 10_000) as usize]));
        i -= 4;
        v /= 10_000;
    }
    let e = DIGITS[v as usize];
    buf.put4(i - 4, four(e));
    // Its comma would be at i.
    start(i + 1, e)
}

/// Appends the decimal digits of `v` to `out`.
fn push_num(out: &mut Vec<u8>, v: u64) {
    // 20 digits at most, and a comma.
    let mut buf = LineBuf::new();
    let start = put_field(&mut buf, LINE_BUF, v);
    out.extend_from_slice(&buf.0[start..LINE_BUF - 1]);
}

/// Sorts a replication's deliveries by delivery cycle, then id. Each partition records
/// its deliveries in nondecreasing cycles, only the id order among one cycle's
/// deliveries is arbitrary: a stable sort by cycle alone finds the partitions' runs and
/// merges them (nothing to do for one partition), then each cycle's few deliveries are
/// put in id order. Sorting by (cycle, id) at once cost as much as formatting the
/// lines: the ties cut the runs short. One partition's deliveries take one pass, which
/// finds the ties as it checks the order (by hand: `chunk_by_mut` after
/// `is_sorted_by_key` cost twice as much).
#[inline(never)]
fn sort_deliveries(ds: &mut [Delivery]) {
    let n = ds.len();
    let mut i = 0;
    while i + 1 < n {
        let a = ds[i].absorbed;
        let b = ds[i + 1].absorbed;
        if a < b {
            i += 1;
            continue;
        }
        if a > b {
            // Several partitions' runs: merged, then the ties from the start.
            ds.sort_by_key(|d| d.absorbed);
            i = 0;
            continue;
        }
        let mut j = i + 2;
        while j < n && ds[j].absorbed == a {
            j += 1;
        }
        ds[i..j].sort_by_key(|d| d.header.id.0);
        // The tie's last against the delivery after it.
        i = j - 1;
    }
}

/// Passes replication `rep`'s lines to `emit`, ordered by delivery cycle, then id (so
/// the text does not depend on the thread count), a block of lines at a time formatted
/// in `buf` (emptied after each). A path lists the nodes its header visited, `>`
/// between nodes, `|` between attempts (deflection: segments; every segment starts at
/// the source). Sorts `log` in place.
fn write_rep<E>(
    buf: &mut Vec<u8>,
    emit: &mut impl FnMut(&[u8]) -> Result<(), E>,
    rep: u32,
    log: &mut RepLog,
    topo: &Topology,
    rule: LatencyRule,
) -> Result<(), E> {
    sort_deliveries(&mut log.deliveries);
    // The engine linked each delivery's hops as it recorded them (deflection, one
    // partition), or the log groups them here.
    let hops = &mut log.hops;
    if !log
        .deliveries
        .iter()
        .all(|d| (d.last_hop as usize) < hops.len())
    {
        link_hops(&mut log.deliveries, hops);
    }
    let ds = &log.deliveries;
    let distances = distance_table(topo, ds.len());
    let lines = Lines {
        rep,
        ds,
        nodes: topo.nodes(),
        distances: distances.as_deref(),
        hops,
        topo,
        rule,
    };
    let (cores, block) = blocks(ds.len());
    lines.emit_blocks(buf, block, cores, emit)
}

/// How a replication of `lines` lines is formatted: on how many cores at once, and how
/// many lines a block passed on holds. Formatting costs about as much as emulating a
/// cheap message, so a long log is formatted on the machine's other cores as well,
/// block by block, and passed on in order (the text is the same whatever the core
/// count). Blocks are small whatever the cores: their text stays in the cache until it
/// is passed on, and their buffers, reused, touch few fresh pages.
fn blocks(lines: usize) -> (usize, usize) {
    let cores = if lines > PARALLEL_LINES {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_CORES))
    } else {
        1
    };
    (cores, BLOCK_LINES)
}

/// Lines formatted before they are passed on: about 200 KB, within a core's cache
/// (docs/speed.md: 280 fewer page faults than blocks of 16 384 lines on the deflection
/// scenario). The text of a long log is never held whole (about 100 bytes a line).
const BLOCK_LINES: usize = 2_048;

/// Logs of a replication with no more lines than this are formatted on one core (a
/// helper thread costs about as much as formatting a few hundred lines).
const PARALLEL_LINES: usize = 8 * BLOCK_LINES;

/// Most cores formatting one log: the writer passes blocks on as fast as about this
/// many format them.
const MAX_CORES: usize = 4;

/// Blocks formatted ahead of the one being passed on, per core formatting them: enough
/// for a core never to wait for a buffer while another is slower for a block (the
/// memory they hold: 2 per core of about 200 KB).
const AHEAD_PER_CORE: usize = 2;

/// Bytes reserved per line of a block's buffer (a line is about 100).
const LINE_BYTES: usize = 128;

/// No hop (the end of a message's list, or a delivery with none).
const NONE: u32 = NO_HOP;

/// What formatting a replication's lines needs.
struct Lines<'a> {
    rep: u32,
    /// The deliveries, each with its list of hops from [`Delivery::last_hop`] along
    /// [`HopRec::prev`] (see [`link_hops`]).
    ds: &'a [Delivery],
    hops: &'a [HopRec],
    topo: &'a Topology,
    /// Nodes of `topo`.
    nodes: usize,
    /// Its distances, when a table of them costs less than looking each up.
    distances: Option<&'a [u32]>,
    rule: LatencyRule,
}

/// The order of a message's hops on its path: by attempt, then `at` (the node breaks
/// ties, so that the text does not depend on the order hops were recorded in).
#[inline(always)]
fn path_key(h: &HopRec) -> (u32, Cycle, u32) {
    (h.attempt, h.at, h.node)
}

/// The blocks of a log being formatted on several cores ([`Lines::emit_blocks`]).
struct BlockQueue {
    state: std::sync::Mutex<Blocks>,
    /// Signalled when a block is ready, passed on, or the work stops.
    changed: std::sync::Condvar,
}

/// What the cores formatting a log share.
struct Blocks {
    /// Blocks in all.
    count: usize,
    /// The next block no core has taken.
    next: usize,
    /// The blocks before this one have been passed on.
    passed: usize,
    /// Formatted blocks waiting to be passed on, block `b` at `b % ready.len()`.
    ready: Vec<Option<Vec<u8>>>,
    /// Buffers passed on, for reuse.
    spare: Vec<Vec<u8>>,
    /// Bytes a new buffer reserves (a block's lines, about).
    capacity: usize,
    /// Set when the writer stopped (done, an error, or a helper's panic).
    stop: bool,
}

impl BlockQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Blocks> {
        // A panicking helper holds no lock while it formats; the state stays whole.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next block to format and a buffer for it, if one is within `ready.len()`
    /// blocks of the one to pass on: at once for the writer (`now`: None when there is
    /// none), else waiting for one (None when the work is over).
    fn claim(&self, now: bool) -> Option<(usize, Vec<u8>)> {
        let mut s = self.lock();
        loop {
            if s.stop || s.next >= s.count {
                return None;
            }
            if s.next < s.passed + s.ready.len() {
                let b = s.next;
                s.next += 1;
                let cap = s.capacity;
                let out = s.spare.pop().unwrap_or_else(|| Vec::with_capacity(cap));
                return Some((b, out));
            }
            if now {
                return None;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Block `b` is formatted in `out`.
    fn done(&self, b: usize, out: Vec<u8>) {
        let mut s = self.lock();
        let n = s.ready.len();
        s.ready[b % n] = Some(out);
        drop(s);
        self.changed.notify_all();
    }

    /// Block `b`, if it is formatted.
    fn take_ready(&self, b: usize) -> Option<Vec<u8>> {
        let mut s = self.lock();
        let n = s.ready.len();
        s.ready[b % n].take()
    }

    /// Waits until block `b` is formatted (true) or the work stops (false).
    fn wait_ready(&self, b: usize) -> bool {
        let mut s = self.lock();
        let n = s.ready.len();
        loop {
            if s.ready[b % n].is_some() {
                return true;
            }
            if s.stop {
                return false;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// A block's buffer, passed on: emptied for reuse, and the block after it may be
    /// taken.
    fn give_back(&self, mut out: Vec<u8>) {
        out.clear();
        let mut s = self.lock();
        s.passed += 1;
        s.spare.push(out);
        drop(s);
        self.changed.notify_all();
    }

    /// Ends the work: every helper stops after its block.
    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// Stops a [`BlockQueue`] when the helper holding it panics.
struct StopOnPanic<'a>(&'a BlockQueue);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

impl Lines<'_> {
    /// Passes every line to `emit` in order, `block` lines at a time, formatted on
    /// `cores` cores: this thread and `cores - 1` helpers take the next block to format
    /// whenever they are free (a core slowed by other work takes fewer), at most
    /// [`AHEAD_PER_CORE`] blocks a core ahead of the block to pass on, and this thread
    /// passes the blocks on in order as they are ready. The first error `emit` returns
    /// ends it (the helpers stop after their block).
    fn emit_blocks<E>(
        &self,
        buf: &mut Vec<u8>,
        block: usize,
        cores: usize,
        emit: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let n = self.ds.len();
        let count = n.div_ceil(block);
        let lines_of = move |b: usize| b * block..((b + 1) * block).min(n);
        let cores = cores.clamp(1, count.max(1));
        if cores == 1 {
            for b in 0..count {
                self.write(buf, lines_of(b));
                let r = emit(buf);
                buf.clear();
                r?;
            }
            return Ok(());
        }

        let shared = BlockQueue {
            state: std::sync::Mutex::new(Blocks {
                count,
                next: 0,
                passed: 0,
                ready: (0..cores * AHEAD_PER_CORE).map(|_| None).collect(),
                spare: Vec::new(),
                capacity: block * LINE_BYTES,
                stop: false,
            }),
            changed: std::sync::Condvar::new(),
        };
        let (shared, lines) = (&shared, self);
        std::thread::scope(|sc| {
            for _ in 1..cores {
                sc.spawn(move || {
                    // A helper that panics stops the writer too (the scope passes the
                    // panic on once every thread has ended).
                    let _stop = StopOnPanic(shared);
                    while let Some((b, mut out)) = shared.claim(false) {
                        lines.write(&mut out, lines_of(b));
                        shared.done(b, out);
                    }
                });
            }
            let r = (|| {
                let mut b = 0;
                while b < count {
                    if let Some(out) = shared.take_ready(b) {
                        let r = emit(&out);
                        shared.give_back(out);
                        r?;
                        b += 1;
                        continue;
                    }
                    match shared.claim(true) {
                        Some((k, mut out)) if k == b => {
                            // The block to pass on next: passed on as soon as formatted.
                            self.write(&mut out, lines_of(k));
                            let r = emit(&out);
                            shared.give_back(out);
                            r?;
                            b += 1;
                        }
                        Some((k, mut out)) => {
                            self.write(&mut out, lines_of(k));
                            shared.done(k, out);
                        }
                        // Nothing to take: a helper formats block `b`.
                        None => {
                            if !shared.wait_ready(b) {
                                // A helper panicked (the scope passes it on).
                                break;
                            }
                        }
                    }
                }
                Ok(())
            })();
            shared.stop();
            r
        })
    }

    /// Appends the lines of deliveries `range` to `out`. A line is assembled from its
    /// end in a buffer on the stack and appended whole. Its path is written first, from
    /// the last hop recorded back along the list, as long as each hop is in path order
    /// after the one recorded before it (always, when one thread recorded them, but for
    /// deflection segments that overlap) and the line fits the buffer; a path that is
    /// not is sorted, and a path too long is appended after the line's fields.
    fn write(&self, out: &mut Vec<u8>, range: std::ops::Range<usize>) {
        let (hops, rule) = (self.hops, self.rule);
        let mut buf = LineBuf::new();
        // The paths that take the slow way, one at a time.
        let mut path: Vec<u32> = Vec::new();
        // Reading the hops costs more than formatting them when they are not in the
        // cache: each line's walk is a chain of dependent loads, hops of other messages
        // between (about 1 KB back from its last hop), so the hops of the deliveries a
        // few lines ahead are requested now (see `prefetch_hops`), every
        // PREFETCH_EVERY lines (a test and a branch on the others).
        let (mut ahead, mut next) = (0usize, range.start);
        for i in range {
            if i >= next {
                next = i + PREFETCH_EVERY;
                if let Some(n) = self.ds.get(i + PREFETCH_LINES) {
                    ahead = prefetch_hops(hops, n.last_hop, ahead);
                }
            }
            let d = &self.ds[i];
            let h = &d.header;
            let src = h.id.src();
            let mut pos = LINE_BUF - 1;
            let mut k = d.last_hop;
            if k != NONE {
                // A node's comma is the separator after it (the newline after the last).
                let mut at = &hops[k as usize];
                pos = put_field(&mut buf, LINE_BUF, at.node as u64);
                k = at.prev;
                while k != NONE {
                    let prev = &hops[k as usize];
                    if pos < FIELDS_ROOM + NODE_ROOM || !precedes(prev, at) {
                        break;
                    }
                    let end = pos;
                    pos = put_field(&mut buf, end, prev.node as u64);
                    buf.put1(
                        end - 1,
                        if prev.attempt == at.attempt {
                            b'>'
                        } else {
                            b'|'
                        },
                    );
                    at = prev;
                    k = prev.prev;
                }
            }
            // Out of order (or too long for the walk's checks): the whole path,
            // sorted, written from its end as well when it fits, else after the fields.
            let mut long = false;
            if k != NONE {
                path.clear();
                let mut k = d.last_hop;
                while k != NONE {
                    path.push(k);
                    k = hops[k as usize].prev;
                }
                path.reverse();
                let key = |&k: &u32| path_key(&hops[k as usize]);
                if !path.is_sorted_by_key(key) {
                    path.sort_unstable_by_key(key);
                }
                long = path.len() > (LINE_BUF - FIELDS_ROOM) / NODE_ROOM - 1;
                pos = LINE_BUF - 1;
                if !long {
                    let mut end = LINE_BUF;
                    for (n, &j) in path.iter().enumerate().rev() {
                        pos = put_field(&mut buf, end, hops[j as usize].node as u64);
                        if n + 1 < path.len() {
                            let next = hops[path[n + 1] as usize].attempt;
                            let same = next == hops[j as usize].attempt;
                            buf.put1(end - 1, if same { b'>' } else { b'|' });
                        }
                        end = pos;
                    }
                }
            }
            buf.put1(LINE_BUF - 1, b'\n');
            // The fields, last first, each followed by its comma.
            let (hop_count, distance) = (h.hops as u64, self.distance(src.0, h.dst.0) as u64);
            let (blocking, eject_wait) = (h.blocking as u64, h.eject_wait as u64);
            let (ctrl_wait, measured) = (h.ctrl_wait as u64, h.measured as u64);
            if (hop_count | distance | blocking | eject_wait | ctrl_wait | measured) < 8 {
                // Usually one digit each: the six at once.
                let small = [
                    hop_count, distance, blocking, eject_wait, ctrl_wait, measured,
                ];
                pos = put_digits6(&mut buf, pos, small);
            } else {
                for v in [
                    measured, ctrl_wait, eject_wait, blocking, distance, hop_count,
                ] {
                    pos = put_field(&mut buf, pos, v);
                }
            }
            pos = put_field(&mut buf, pos, d.absorbed - h.injected);
            pos = put_field(&mut buf, pos, h.injected - h.created);
            let latency = rule.latency(h.created, h.injected, d.absorbed);
            pos = put_field(&mut buf, pos, latency);
            pos = put_field(&mut buf, pos, d.absorbed);
            pos = put_field(&mut buf, pos, h.injected);
            pos = put_field(&mut buf, pos, h.created);
            pos = put_field(&mut buf, pos, h.len as u64);
            pos = put_field(&mut buf, pos, h.dst.0 as u64);
            pos = put_field(&mut buf, pos, src.0 as u64);
            pos = put_field(&mut buf, pos, h.id.seq());
            pos = put_field(&mut buf, pos, h.id.0);
            pos = put_field(&mut buf, pos, self.rep as u64);
            if !long {
                buf.append_line(out, pos);
                continue;
            }
            out.extend_from_slice(&buf.0[pos..LINE_BUF - 1]);
            for (n, &j) in path.iter().enumerate() {
                let h = &hops[j as usize];
                if n > 0 {
                    let before = hops[path[n - 1] as usize].attempt;
                    out.push(if before == h.attempt { b'>' } else { b'|' });
                }
                push_num(out, h.node as u64);
            }
            out.push(b'\n');
        }
    }

    /// The distance from node `a` to node `b`.
    #[inline(always)]
    fn distance(&self, a: u32, b: u32) -> u32 {
        let n = self.nodes;
        if (a as usize) < n && (b as usize) < n {
            if let Some(t) = self.distances {
                return t[a as usize * n + b as usize];
            }
        }
        self.topo.distance(NodeId(a), NodeId(b))
    }
}

/// Whether hop `a` comes before hop `b` on a path (a tie takes the slow way, which
/// orders by node).
#[inline(always)]
fn precedes(a: &HopRec, b: &HopRec) -> bool {
    a.attempt < b.attempt || (a.attempt == b.attempt && a.at < b.at)
}

/// Every distance of `topo` (`d[a · nodes + b]`) when there are no more pairs of nodes
/// than `lines`: the topologies' own look-ups cost more than the table then (a
/// Manhattan Street's is a third of a short line's formatting).
fn distance_table(topo: &Topology, lines: usize) -> Option<Vec<u32>> {
    let n = topo.nodes();
    if n.checked_mul(n)? > lines {
        return None;
    }
    let mut t = Vec::with_capacity(n * n);
    for a in 0..n as u32 {
        t.extend((0..n as u32).map(|b| topo.distance(NodeId(a), NodeId(b))));
    }
    Some(t)
}

/// Deliveries ahead of the line being formatted whose hops are requested
/// ([`prefetch_hops`]); measured: 8 to 32 ahead do the same, none costs the write half
/// again.
const PREFETCH_LINES: usize = 16;

/// Lines formatted between two requests of hops: each request covers the hops of
/// these lines' deliveries at once (8 lines: about 1.2 KB, 20 cache lines).
const PREFETCH_EVERY: usize = 8;

/// Requests the cache lines of `hops` from byte `ahead` (those before were requested
/// already) up to and including hop `last`, at most 4 KB of them (a jump, e.g. into
/// another partition's hops, is not streamed whole), and returns how far that reached.
/// Deliveries come in cycle order and hops were recorded in cycle order, so the last
/// hops of consecutive lines move forward through `hops` and these requests stream it
/// into the cache just ahead of the walks (an index out of range or [`NONE`] requests
/// nothing).
#[inline(always)]
fn prefetch_hops(hops: &[HopRec], last: u32, ahead: usize) -> usize {
    let size = std::mem::size_of::<HopRec>();
    if last as usize >= hops.len() {
        return ahead;
    }
    let end = (last as usize + 1) * size;
    let base = hops.as_ptr() as *const u8;
    let mut b = ahead.max(end.saturating_sub(4096));
    while b < end {
        prefetch(base.wrapping_add(b));
        b += 64;
    }
    ahead.max(b)
}

/// Asks the processor to bring the cache line at `p` into its caches (nothing on
/// other architectures).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing the program sees and never
    // faults, whatever the address (`p` may be past the end of the hops).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Bytes of the buffer a line is assembled in: a power of two, since stores take their
/// offset modulo it ([`LineBuf::put8`]).
const LINE_BUF: usize = 1024;
const _: () = assert!(LINE_BUF.is_power_of_two());
/// Bytes the 18 numbers (at most 20 digits and a comma each) take before a line's
/// path, and the 7 a number's first store may touch before its digits.
const FIELDS_ROOM: usize = 18 * 21 + 7;
/// Bytes one more node of a path may take or touch (at most 10 digits and a
/// separator, and 7 before).
const NODE_ROOM: usize = 18;

/// The hops of each delivery as a list, from the last recorded back to the first, for
/// deliveries whose engine did not link them: sets every delivery's
/// [`Delivery::last_hop`] to its last recorded hop and every hop's [`HopRec::prev`] to
/// the hop of the same message recorded before it ([`NONE`] ends a list; a hop of a
/// message still in flight at the end belongs to none). One pass over the hops, in
/// linear time: a message id is (sequence number, source), and each source's sequence
/// numbers are dense, so a table indexed by (source, sequence) links a hop to its
/// message's hop before without hashing or sorting the hops. Indices rather than copies
/// of the hops: 4 bytes a hop (the pages a long log touches cost as much as formatting
/// it).
#[inline(never)]
fn link_hops(ds: &mut [Delivery], hops: &mut [HopRec]) {
    let sources = ds
        .iter()
        .map(|d| d.header.id.src().0 + 1)
        .max()
        .unwrap_or(0) as usize;
    let mut base = vec![0u64; sources + 1];
    for d in ds.iter() {
        let (s, q) = (d.header.id.src().idx(), d.header.id.seq());
        base[s + 1] = base[s + 1].max(q + 1);
    }
    for s in 0..sources {
        base[s + 1] += base[s];
    }
    // Per message, (source, sequence) flattened, the last hop recorded so far: the
    // hops are linked per message, whether it was delivered or not, without looking
    // up its delivery.
    let mut tail = vec![NONE; base[sources] as usize];
    {
        // Plain slices: the loop keeps their bounds in registers.
        let (base, tail) = (&base[..], &mut tail[..]);
        for (k, h) in hops.iter_mut().enumerate() {
            let (s, q) = (h.id.src().idx(), h.id.seq());
            h.prev = match (base.get(s), base.get(s + 1)) {
                (Some(&lo), Some(&hi)) if lo + q < hi => tail
                    .get_mut((lo + q) as usize)
                    .map_or(NONE, |t| std::mem::replace(t, k as u32)),
                _ => NONE,
            };
        }
    }
    for d in ds {
        d.last_hop = tail[(base[d.header.id.src().idx()] + d.header.id.seq()) as usize];
    }
}

/// Passes the whole log to `emit`, a block of lines at a time: the header and every
/// replication's lines (sorts `reps` in place). The first error `emit` returns ends it.
pub fn write<E>(
    reps: &mut [RepLog],
    topo: &Topology,
    rule: LatencyRule,
    emit: &mut impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    // About 100 bytes a line, room for the largest block: reserved once, never copied
    // as it grows (no larger: memory reserved and not used can still cost, e.g. when
    // the allocator gives it back to the system at the end and takes it again for
    // the next run, faulting its pages in again).
    let most = reps.iter().map(|r| r.deliveries.len()).max().unwrap_or(0);
    let mut buf = Vec::with_capacity(64 + most.min(BLOCK_LINES) * LINE_BYTES);
    buf.extend_from_slice(HEADER.as_bytes());
    buf.push(b'\n');
    emit(&buf)?;
    buf.clear();
    for (i, r) in reps.iter_mut().enumerate() {
        write_rep(&mut buf, emit, i as u32, r, topo, rule)?;
    }
    Ok(())
}

/// The whole log as one text (see [`write()`]).
pub fn render(reps: &mut [RepLog], topo: &Topology, rule: LatencyRule) -> String {
    let n: usize = reps.iter().map(|r| r.deliveries.len()).sum();
    let mut s = Vec::with_capacity(64 + n * 128);
    let _ = write(reps, topo, rule, &mut |b: &[u8]| {
        s.extend_from_slice(b);
        Ok::<(), std::convert::Infallible>(())
    });
    String::from_utf8(s).expect("digits and punctuation are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::types::MsgId;
    use crate::router::buffers::MsgHeader;

    /// The `dim`-cube the tests log on.
    fn cube(dim: u32) -> Topology {
        Topology::from_config(&crate::config::TopologyConfig::Hypercube { dim }).unwrap()
    }

    /// The report's default latency, one cycle of ejection.
    fn rule() -> LatencyRule {
        LatencyRule {
            def: LatencyDef::default(),
            ejection: 1,
        }
    }

    /// A hop record not linked to the hop before it (as a partition that does not link
    /// them records it).
    fn hop(id: MsgId, attempt: u32, at: Cycle, node: u32) -> HopRec {
        HopRec {
            id,
            attempt,
            at,
            node,
            prev: NONE,
        }
    }

    /// The message the line tests log: node 0 to 3, 4 flits over 2 hops, created at 10,
    /// injected at 12.
    fn logged_header(id: MsgId) -> MsgHeader {
        MsgHeader {
            id,
            dst: NodeId(3),
            len: 4,
            hops: 2,
            created: 10,
            injected: 12,
            ..MsgHeader::default()
        }
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        for v in [
            0u64,
            7,
            10,
            99,
            100,
            101,
            9999,
            10_000,
            12345,
            99_999_999,
            100_000_000,
            1_000_000,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
            10_000_000_000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            push_num(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
        }
    }

    #[test]
    fn every_field_is_written_in_decimal_whatever_its_size() {
        let topo = cube(3);
        let rule = rule();
        // The six small fields below 8 (written at once), one of them 8, 9 or more.
        for (hops, blocking, eject_wait, ctrl_wait) in [
            (0, 0, 0, 0),
            (7, 7, 7, 7),
            (8, 0, 0, 0),
            (3, 9, 1, 0),
            (2, 0, 12_345, 70_000),
        ] {
            let header = MsgHeader {
                id: MsgId::new(NodeId(5), 123_456),
                dst: NodeId(2),
                len: 4096,
                hops,
                created: 99_999,
                injected: 100_000,
                blocking,
                eject_wait,
                ctrl_wait,
                measured: true,
                ..MsgHeader::default()
            };
            let log = RepLog {
                deliveries: vec![Delivery {
                    header,
                    absorbed: 10_000_000_001,
                    last_hop: NONE,
                }],
                hops: vec![],
            };
            let text = render(&mut [log], &topo, rule);
            let d = 10_000_000_001u64;
            let want = format!(
                "0,{},123456,5,2,4096,99999,100000,{d},{},1,{},{hops},{},{blocking},{eject_wait},{ctrl_wait},1,",
                header.id.0,
                d - 99_999,
                d - 100_000,
                topo.distance(NodeId(5), NodeId(2)),
            );
            assert_eq!(text.lines().nth(1).unwrap(), want);
        }
    }

    #[test]
    fn lines_formatted_in_chunks_are_the_lines_formatted_at_once() {
        let topo = cube(3);
        let ds: Vec<Delivery> = (0..11u64)
            .map(|i| Delivery {
                header: MsgHeader {
                    id: MsgId::new(NodeId(i as u32 % 8), i),
                    dst: NodeId((i as u32 + 3) % 8),
                    len: 1 + i as u32,
                    created: i,
                    injected: i + 1,
                    ..MsgHeader::default()
                },
                absorbed: 10 + i,
                // Each delivery's one hop, linked as an engine links them.
                last_hop: i as u32,
            })
            .collect();
        let hops: Vec<HopRec> = (0..11)
            .map(|i| hop(ds[i].header.id, 0, 0, i as u32 % 8))
            .collect();
        let lines = Lines {
            rep: 2,
            ds: &ds,
            hops: &hops,
            topo: &topo,
            nodes: 8,
            distances: None,
            rule: rule(),
        };
        let mut one = Vec::new();
        lines.write(&mut one, 0..11);
        assert_eq!(one.iter().filter(|&&b| b == b'\n').count(), 11);
        let want: Vec<Vec<u8>> = one
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        for block in [1, 2, 3, 11, 12] {
            for cores in [1, 2, 3, 4, 12] {
                let (mut buf, mut blocks) = (Vec::new(), Vec::<Vec<u8>>::new());
                lines
                    .emit_blocks(&mut buf, block, cores, &mut |b: &[u8]| {
                        blocks.push(b.to_vec());
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                // Blocks of `block` lines each, in order, the last one shorter.
                let expect: Vec<Vec<u8>> = want.chunks(block).map(|c| c.concat()).collect();
                assert_eq!(blocks, expect, "blocks of {block} lines on {cores} cores");
                // An error from the writer ends it at that block, helpers or not.
                let mut calls = 0;
                let r = lines.emit_blocks(&mut buf, block, cores, &mut |_: &[u8]| {
                    calls += 1;
                    if calls == 2 {
                        Err(calls)
                    } else {
                        Ok(())
                    }
                });
                let failed = if 11 > block { Err(2) } else { Ok(()) };
                assert_eq!(r, failed, "blocks of {block} lines on {cores} cores");
            }
        }
    }

    /// A deflection-like message: `segments` attempts of `per` nodes each, every one
    /// from node 0, with node numbers of 8 digits, its hops recorded in path order or
    /// in reverse; and its path as the log must write it.
    fn long_path_log(segments: u32, per: u32, in_order: bool) -> (RepLog, String) {
        let id = MsgId::new(NodeId(0), 1);
        let header = MsgHeader {
            id,
            dst: NodeId(3),
            len: 1,
            created: 1,
            injected: 2,
            ..MsgHeader::default()
        };
        let mut hops = Vec::new();
        let mut expect = Vec::new();
        for a in 0..segments {
            let nodes: Vec<String> = (0..per)
                .map(|k| {
                    let node = if k == 0 { 0 } else { (1 << 24) - 1 - k };
                    hops.push(hop(id, a, 100 + k as Cycle, node));
                    node.to_string()
                })
                .collect();
            expect.push(nodes.join(">"));
        }
        if !in_order {
            hops.reverse();
        }
        let log = RepLog {
            deliveries: vec![Delivery {
                header,
                absorbed: 500,
                last_hop: NONE,
            }],
            hops,
        };
        (log, expect.join("|"))
    }

    #[test]
    fn a_path_longer_than_the_line_buffer_is_written_whole_in_path_order() {
        let topo = cube(2);
        let rule = rule();
        // Around 70 nodes of 9 characters, a path stops fitting the line's buffer.
        let shapes =
            (55..85)
                .map(|per| (1, per))
                .chain([(1, 3), (2, 10), (4, 8), (3, 40), (50, 30)]);
        for (segments, per) in shapes {
            for in_order in [true, false] {
                let (log, path) = long_path_log(segments, per, in_order);
                let text = render(&mut [log], &topo, rule);
                let line = text.lines().nth(1).unwrap();
                let fields: Vec<&str> = line.split(',').collect();
                let case = format!("{segments}×{per}, recorded in order: {in_order}");
                assert_eq!(fields.len(), 19, "{case}");
                assert_eq!(fields[18], path, "{case}");
                assert_eq!(fields[8], "500", "{case}");
            }
        }
    }

    #[test]
    fn a_log_linked_in_any_hop_order_is_the_log_the_grouping_gives() {
        // Many deliveries (several prefetch steps), each with three hops; the vector
        // holds the hops of later deliveries first (as partitions' vectors joined
        // give), so the last hops named move backwards, not forwards, through it.
        let topo = cube(3);
        let rule = rule();
        let n = 3 * PREFETCH_EVERY + PREFETCH_LINES + 5;
        let ds: Vec<Delivery> = (0..n as u64)
            .map(|i| Delivery {
                header: MsgHeader {
                    id: MsgId::new(NodeId(i as u32 % 8), i / 8),
                    dst: NodeId((i as u32 + 1) % 8),
                    created: i,
                    injected: i,
                    ..MsgHeader::default()
                },
                absorbed: 10 + i,
                last_hop: NONE,
            })
            .collect();
        let mut hops = Vec::new();
        for d in ds.iter().rev() {
            for k in 0..3u32 {
                hops.push(hop(
                    d.header.id,
                    0,
                    k as Cycle,
                    (d.header.id.src().0 + k) % 8,
                ));
            }
        }
        let grouped = render(
            &mut [RepLog {
                deliveries: ds.clone(),
                hops: hops.clone(),
            }],
            &topo,
            rule,
        );
        // Linked as an engine links them: each hop to the one before, each delivery
        // to its last.
        let mut linked_ds = ds;
        for (j, d) in linked_ds.iter_mut().enumerate() {
            let first = 3 * (n - 1 - j);
            d.last_hop = (first + 2) as u32;
            hops[first + 1].prev = first as u32;
            hops[first + 2].prev = (first + 1) as u32;
        }
        let linked = render(
            &mut [RepLog {
                deliveries: linked_ds,
                hops,
            }],
            &topo,
            rule,
        );
        assert_eq!(linked, grouped);
        assert_eq!(linked.lines().count(), n + 1);
        assert!(linked.lines().nth(1).unwrap().ends_with(",0>1>2"));
    }

    #[test]
    fn interleaved_hops_are_grouped_per_message_in_path_order() {
        let topo = cube(3);
        let id = |src: u32, seq: u64| MsgId::new(NodeId(src), seq);
        let (a, b, c, lost, none) = (id(0, 0), id(1, 0), id(0, 1), id(2, 0), id(3, 4));
        // Recorded as one thread records them, in time order, the messages' hops
        // interleaved; b's second segment starts before its first one ends; `lost` is
        // still in flight at the end; `none` has no hop.
        let hops = vec![
            hop(a, 0, 1, 0),
            hop(b, 0, 1, 1),
            hop(a, 0, 2, 2),
            hop(b, 1, 2, 1),
            hop(lost, 0, 2, 2),
            hop(c, 0, 3, 0),
            hop(b, 0, 3, 5),
            hop(a, 0, 3, 6),
            hop(b, 1, 3, 3),
            hop(c, 0, 4, 4),
            hop(b, 1, 4, 7),
        ];
        let delivery = |id: MsgId, absorbed: Cycle| Delivery {
            header: MsgHeader {
                id,
                ..MsgHeader::default()
            },
            absorbed,
            last_hop: NONE,
        };
        let deliveries = vec![
            delivery(a, 10),
            delivery(b, 11),
            delivery(c, 12),
            delivery(none, 13),
        ];
        let rule = rule();
        let text = render(&mut [RepLog { deliveries, hops }], &topo, rule);
        let paths: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.rsplit(',').next().unwrap())
            .collect();
        assert_eq!(paths, ["0>2>6", "1>5|1>3>7", "0>4", ""]);
    }

    #[test]
    fn a_long_log_is_passed_on_in_blocks_that_join_into_the_whole_text() {
        let topo = cube(3);
        let rule = rule();
        // Few enough lines for one core: blocks of BLOCK_LINES.
        let n = BLOCK_LINES + 3;
        let log = || RepLog {
            deliveries: (0..n as u64)
                .map(|i| Delivery {
                    header: MsgHeader {
                        id: MsgId::new(NodeId(i as u32 % 8), i / 8),
                        created: i,
                        injected: i,
                        ..MsgHeader::default()
                    },
                    absorbed: i + 1,
                    last_hop: NONE,
                })
                .collect(),
            hops: vec![],
        };
        let whole = render(&mut [log()], &topo, rule);
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        write(&mut [log()], &topo, rule, &mut |b: &[u8]| {
            blocks.push(b.to_vec());
            Ok::<(), ()>(())
        })
        .unwrap();
        // The header, a full block of lines, the 3 lines left.
        let lines: Vec<usize> = blocks
            .iter()
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .collect();
        assert_eq!(lines, [1, BLOCK_LINES, 3]);
        assert_eq!(blocks.concat(), whole.as_bytes());
        // An error ends the writing.
        let mut calls = 0;
        let r = write(&mut [log()], &topo, rule, &mut |_: &[u8]| {
            calls += 1;
            Err(calls)
        });
        assert_eq!((r, calls), (Err(1), 1));
    }

    #[test]
    fn deliveries_of_one_cycle_are_ordered_by_id_whatever_order_they_came_in() {
        let d = |src: u32, seq: u64, absorbed: Cycle| Delivery {
            header: MsgHeader {
                id: MsgId::new(NodeId(src), seq),
                ..MsgHeader::default()
            },
            absorbed,
            last_hop: NONE,
        };
        // Sorts `ds` as the log does; returns it, checked against a plain sort.
        let sorted_like_the_log = |ds: &mut Vec<Delivery>| {
            let mut want = ds.clone();
            want.sort_by_key(|d| (d.absorbed, d.header.id.0));
            sort_deliveries(ds);
            assert_eq!(*ds, want);
            want
        };
        // Two partitions' runs, each in cycle order with ties in any id order.
        let mut ds = vec![
            d(3, 0, 5),
            d(1, 0, 5),
            d(2, 1, 9),
            d(0, 2, 4),
            d(2, 0, 5),
            d(0, 0, 9),
        ];
        sorted_like_the_log(&mut ds);
        // One partition's run: ties at the start, in the middle and at the end.
        let mut ds = vec![
            d(2, 0, 1),
            d(1, 0, 1),
            d(0, 1, 2),
            d(3, 1, 4),
            d(0, 0, 4),
            d(1, 1, 4),
            d(2, 1, 6),
            d(3, 2, 7),
            d(3, 0, 7),
        ];
        let want = sorted_like_the_log(&mut ds);
        for n in 0..2 {
            let mut few = want[..n].to_vec();
            sort_deliveries(&mut few);
            assert_eq!(few, want[..n]);
        }
        // Out of order right after a tie (the second partition's run starts earlier).
        let mut ds = vec![d(3, 0, 5), d(1, 0, 5), d(0, 0, 3), d(2, 0, 5)];
        sorted_like_the_log(&mut ds);
    }

    #[test]
    fn lines_shorter_and_longer_than_one_fixed_copy_are_appended_whole() {
        let topo = cube(2);
        let rule = rule();
        let id = MsgId::new(NodeId(0), 5);
        let header = logged_header(id);
        let prefix = format!("0,{},5,0,3,4,10,12,20,10,2,8,2,2,0,0,0,0,", id.0);
        // Paths of n one-digit nodes: lines from well under to well over COPY bytes,
        // two lines per log so that each is appended after another.
        for n in 1..COPY {
            let path: Vec<u32> = (0..n as u32).map(|k| k % 4).collect();
            let hops: Vec<HopRec> = path
                .iter()
                .enumerate()
                .map(|(k, &node)| hop(id, 0, k as Cycle, node))
                .collect();
            let d = Delivery {
                header,
                absorbed: 20,
                last_hop: NONE,
            };
            let log = RepLog {
                deliveries: vec![d, d],
                hops,
            };
            let text = render(&mut [log], &topo, rule);
            let nodes: Vec<String> = path.iter().map(u32::to_string).collect();
            let line = format!("{prefix}{}\n", nodes.join(">"));
            assert_eq!(text, format!("{HEADER}\n{line}{line}"), "{n} nodes");
        }
    }

    #[test]
    fn a_line_per_delivery_with_its_path_in_order() {
        let topo = cube(2);
        let id = MsgId::new(NodeId(0), 5);
        let header = logged_header(id);
        let log = RepLog {
            deliveries: vec![Delivery {
                header,
                absorbed: 20,
                last_hop: NONE,
            }],
            hops: [(3, 15, 3), (0, 12, 0), (1, 14, 1)]
                .map(|(n, at, _)| hop(id, 0, at, n))
                .to_vec(),
        };
        let rule = rule();
        let text = render(&mut [log], &topo, rule);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1],
            format!("0,{},5,0,3,4,10,12,20,10,2,8,2,2,0,0,0,0,0>1>3", id.0)
        );
    }
}

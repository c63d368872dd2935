//! The per-message log of a run (`routemu run --message-log FILE`; a replay's is one
//! replication): one CSV line per delivered message of every replication, warm-up and
//! drain included, with its times, hops, blocking and path. The columns `id, src, dst, flits, created,
//! injected, delivered, latency` mean what `routemu replay --messages` means by them.
//!
//! This module only joins and formats what the run recorded (`MsgStats::deliveries`
//! and `MsgStats::hops`, on when `experiment.observe.message_log` is); the switching
//! modes decide what a hop is (see docs/measurements.md).

use super::observe::HopRec;
use super::Delivery;
use crate::config::{LatencyDef, LatencyFrom, LatencyTo};
use crate::topology::Topology;
use crate::types::NodeId;

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

/// Two decimal digits for every value below 100.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes the decimal digits of `v` to end just before `buf[end]` and returns where
/// they start. Lines are assembled from their end, so the digits come out in the order
/// division yields them, two per division, with no count and no copy (the log has
/// millions of numbers: `write!` is several times slower, and copying each number out
/// of a scratch buffer cost a third of the formatting).
#[inline(always)]
fn put_num(buf: &mut [u8], end: usize, v: u64) -> usize {
    let mut i = end;
    // Most values fit 32 bits, whose divisions are cheaper.
    let mut v = if v > u32::MAX as u64 {
        let mut w = v;
        while w > u32::MAX as u64 {
            let p = (w % 100) as usize * 2;
            w /= 100;
            i -= 2;
            buf[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
        }
        w as u32
    } else {
        v as u32
    };
    while v >= 100 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    }
    if v >= 10 {
        let p = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    i
}

/// Appends the decimal digits of `v` to `out`.
fn push_num(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 20];
    let start = put_num(&mut buf, 20, v);
    out.extend_from_slice(&buf[start..]);
}

/// Sorts a replication's deliveries by delivery cycle, then id. Each partition records
/// its deliveries in nondecreasing cycles, only the id order among one cycle's
/// deliveries is arbitrary: a stable sort by cycle alone finds the partitions' runs and
/// merges them (nothing to do for one partition), then each cycle's few deliveries are
/// put in id order. Sorting by (cycle, id) at once cost as much as formatting the
/// lines: the ties cut the runs short.
#[inline(never)]
fn sort_deliveries(ds: &mut [Delivery]) {
    if !ds.is_sorted_by_key(|d| d.absorbed) {
        ds.sort_by_key(|d| d.absorbed);
    }
    for same in ds.chunk_by_mut(|a, b| a.absorbed == b.absorbed) {
        if same.len() > 1 {
            same.sort_by_key(|d| d.header.id.0);
        }
    }
}

/// Appends replication `rep`'s lines to `out`, ordered by delivery cycle, then id (so
/// the text does not depend on the thread count). A path lists the nodes its header
/// visited, `>` between nodes, `|` between attempts (deflection: segments; every
/// segment starts at the source). Sorts `log` in place.
pub fn write_rep(
    out: &mut Vec<u8>,
    rep: u32,
    log: &mut RepLog,
    topo: &Topology,
    rule: LatencyRule,
) {
    sort_deliveries(&mut log.deliveries);
    let ds = &log.deliveries;
    let (start, order) = group_hops(ds, &log.hops);
    let lines = Lines {
        rep,
        ds,
        start: &start,
        order: &order,
        hops: &log.hops,
        topo,
        rule,
    };
    // Formatting costs about as much as emulating a cheap message: a long log is
    // formatted in chunks on the machine's other cores and joined in order, so the text
    // is the same whatever the core count.
    let chunks = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
        .min(ds.len() / PARALLEL_LINES + 1);
    lines.write_in(out, chunks);
}

/// Lines below this many are formatted on one core.
const PARALLEL_LINES: usize = 50_000;

/// What formatting a replication's lines needs.
struct Lines<'a> {
    rep: u32,
    ds: &'a [Delivery],
    start: &'a [u32],
    order: &'a [u32],
    hops: &'a [HopRec],
    topo: &'a Topology,
    rule: LatencyRule,
}

impl Lines<'_> {
    /// Appends every line to `out`, formatted in `chunks` pieces on as many threads.
    fn write_in(&self, out: &mut Vec<u8>, chunks: usize) {
        let ds = self.ds;
        if chunks <= 1 {
            self.write(out, 0..ds.len());
            return;
        }
        let per = ds.len().div_ceil(chunks);
        let parts: Vec<Vec<u8>> = std::thread::scope(|sc| {
            let handles: Vec<_> = (1..chunks)
                .map(|c| {
                    sc.spawn(move || {
                        let range = (c * per).min(ds.len())..((c + 1) * per).min(ds.len());
                        let mut buf = Vec::with_capacity(range.len() * 128);
                        self.write(&mut buf, range);
                        buf
                    })
                })
                .collect();
            self.write(out, 0..per.min(ds.len()));
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        for p in parts {
            out.extend_from_slice(&p);
        }
    }

    /// Appends the lines of deliveries `range` to `out`. A line is assembled from its
    /// end in a buffer on the stack and appended whole (the path of a line too long for
    /// the buffer is appended after it).
    fn write(&self, out: &mut Vec<u8>, range: std::ops::Range<usize>) {
        let (start, order, hops, rule) = (self.start, self.order, self.hops, self.rule);
        let mut buf = [0u8; LINE_BUF];
        for i in range {
            let d = &self.ds[i];
            let h = &d.header;
            let src = h.id.src();
            let path = &order[start[i] as usize..start[i + 1] as usize];
            let short = path.len() <= SHORT_PATH;
            let mut pos = LINE_BUF - 1;
            buf[pos] = b'\n';
            if short {
                // Last node first; a node follows the one before it with `>` within an
                // attempt, `|` where the next attempt starts.
                for k in (0..path.len()).rev() {
                    let h = &hops[path[k] as usize];
                    pos = put_num(&mut buf, pos, h.node as u64);
                    if k > 0 {
                        pos -= 1;
                        buf[pos] = if hops[path[k - 1] as usize].attempt == h.attempt {
                            b'>'
                        } else {
                            b'|'
                        };
                    }
                }
            }
            let fields = [
                self.rep as u64,
                h.id.0,
                h.id.seq(),
                src.0 as u64,
                h.dst.0 as u64,
                h.len as u64,
                h.created,
                h.injected,
                d.absorbed,
                rule.latency(h.created, h.injected, d.absorbed),
                h.injected - h.created,
                d.absorbed - h.injected,
                h.hops as u64,
                self.topo.distance(src, NodeId(h.dst.0)) as u64,
                h.blocking as u64,
                h.eject_wait as u64,
                h.ctrl_wait as u64,
                h.measured as u64,
            ];
            for &v in fields.iter().rev() {
                pos -= 1;
                buf[pos] = b',';
                pos = put_num(&mut buf, pos, v);
            }
            if short {
                out.extend_from_slice(&buf[pos..]);
                continue;
            }
            out.extend_from_slice(&buf[pos..LINE_BUF - 1]);
            for (k, &j) in path.iter().enumerate() {
                let h = &hops[j as usize];
                if k > 0 {
                    let before = hops[path[k - 1] as usize].attempt;
                    out.push(if before == h.attempt { b'>' } else { b'|' });
                }
                push_num(out, h.node as u64);
            }
            out.push(b'\n');
        }
    }
}

/// Bytes of the buffer a line is assembled in.
const LINE_BUF: usize = 1024;
/// The longest path formatted in the line's buffer: with the 18 numbers (at most 20
/// digits and a comma each), each node (at most 10 digits and a separator) and the
/// newline, it fits `LINE_BUF`.
const SHORT_PATH: usize = (LINE_BUF - 18 * 21 - 1) / 11;

/// The hops of each delivery, in path order: `order[start[i]..start[i + 1]]` holds the
/// indices in `hops` of delivery i's hops, ordered by (attempt, `at`). Linear time: a
/// message id is (sequence number, source), and each source's sequence numbers are
/// dense, so a table indexed by (source, sequence) finds a hop's delivery without
/// hashing or sorting the hops. Indices rather than copies of the hops: 4 bytes a hop
/// (the pages a long log touches cost as much as formatting it).
#[inline(never)]
fn group_hops(ds: &[Delivery], hops: &[HopRec]) -> (Vec<u32>, Vec<u32>) {
    const NONE: u32 = u32::MAX;
    let n = ds.len();
    let sources = ds
        .iter()
        .map(|d| d.header.id.src().0 + 1)
        .max()
        .unwrap_or(0) as usize;
    let mut base = vec![0u64; sources + 1];
    for d in ds {
        let (s, q) = (d.header.id.src().idx(), d.header.id.seq());
        base[s + 1] = base[s + 1].max(q + 1);
    }
    for s in 0..sources {
        base[s + 1] += base[s];
    }
    let mut table = vec![NONE; base[sources] as usize];
    for (i, d) in ds.iter().enumerate() {
        let (s, q) = (d.header.id.src().idx(), d.header.id.seq());
        table[(base[s] + q) as usize] = i as u32;
    }
    let which = |h: &HopRec| -> u32 {
        let (s, q) = (h.id.src().idx(), h.id.seq());
        if s >= sources || base[s] + q >= base[s + 1] {
            return NONE;
        }
        table[(base[s] + q) as usize]
    };
    // Each hop's delivery, looked up once; a hop of a message still in flight at the
    // end has none (and counts in the last, unused, bucket).
    let slot: Vec<u32> = hops.iter().map(which).collect();
    let mut start = vec![0u32; n + 2];
    for &i in &slot {
        start[(i as usize).min(n) + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    start.truncate(n + 1);
    let mut fill = start.clone();
    let mut order = vec![0u32; start[n] as usize];
    for (k, &i) in slot.iter().enumerate() {
        if i != NONE {
            let f = &mut fill[i as usize];
            order[*f as usize] = k as u32;
            *f += 1;
        }
    }
    // A message's hops come in path order unless partitions recorded them (or a
    // deflection message's segments overlapped): sort the few that are not.
    let key = |&k: &u32| {
        let h = &hops[k as usize];
        (h.attempt, h.at, h.node)
    };
    for i in 0..n {
        let path = &mut order[start[i] as usize..start[i + 1] as usize];
        if !path.is_sorted_by_key(key) {
            path.sort_unstable_by_key(key);
        }
    }
    (start, order)
}

/// The whole log: the header and every replication's lines (sorts `reps` in place).
pub fn render(reps: &mut [RepLog], topo: &Topology, rule: LatencyRule) -> String {
    let n: usize = reps.iter().map(|r| r.deliveries.len()).sum();
    // About 100 bytes a line: reserved once, never copied as it grows.
    let mut s = Vec::with_capacity(64 + n * 128);
    s.extend_from_slice(HEADER.as_bytes());
    s.push(b'\n');
    for (i, r) in reps.iter_mut().enumerate() {
        write_rep(&mut s, i as u32, r, topo, rule);
    }
    String::from_utf8(s).expect("digits and punctuation are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::buffers::MsgHeader;
    use crate::types::{Cycle, MsgId};

    #[test]
    fn numbers_are_written_in_decimal() {
        for v in [
            0u64,
            7,
            10,
            99,
            100,
            101,
            12345,
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
    fn lines_formatted_in_chunks_are_the_lines_formatted_at_once() {
        let topo =
            Topology::from_config(&crate::config::TopologyConfig::Hypercube { dim: 3 }).unwrap();
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
            })
            .collect();
        let start: Vec<u32> = (0..=11).collect();
        let order: Vec<u32> = (0..11).collect();
        let hops: Vec<HopRec> = (0..11)
            .map(|i| HopRec {
                id: ds[i].header.id,
                attempt: 0,
                at: 0,
                node: i as u32 % 8,
            })
            .collect();
        let lines = Lines {
            rep: 2,
            ds: &ds,
            start: &start,
            order: &order,
            hops: &hops,
            topo: &topo,
            rule: LatencyRule {
                def: LatencyDef::default(),
                ejection: 1,
            },
        };
        let mut one = Vec::new();
        lines.write_in(&mut one, 1);
        assert_eq!(one.iter().filter(|&&b| b == b'\n').count(), 11);
        for chunks in [2, 3, 4, 11, 12] {
            let mut many = Vec::new();
            lines.write_in(&mut many, chunks);
            assert_eq!(one, many, "{chunks} chunks");
        }
    }

    /// A deflection-like message: `segments` attempts of `per` nodes each, every one
    /// from node 0, with node numbers as large as a node id gets.
    fn long_path_log(segments: u32, per: u32) -> (RepLog, String) {
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
                    // Recorded out of order: the log orders them.
                    hops.push(HopRec {
                        id,
                        attempt: segments - 1 - a,
                        at: 100 + k as Cycle,
                        node,
                    });
                    node.to_string()
                })
                .collect();
            expect.push(nodes.join(">"));
        }
        expect.reverse();
        hops.reverse();
        let log = RepLog {
            deliveries: vec![Delivery {
                header,
                absorbed: 500,
            }],
            hops,
        };
        (log, expect.join("|"))
    }

    #[test]
    fn a_path_longer_than_the_line_buffer_is_written_whole() {
        let topo =
            Topology::from_config(&crate::config::TopologyConfig::Hypercube { dim: 2 }).unwrap();
        let rule = LatencyRule {
            def: LatencyDef::default(),
            ejection: 1,
        };
        for (segments, per) in [(1, 3), (2, SHORT_PATH as u32 / 2), (3, 40), (50, 30)] {
            let (log, path) = long_path_log(segments, per);
            let text = render(&mut [log], &topo, rule);
            let line = text.lines().nth(1).unwrap();
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), 19, "{segments}×{per}");
            assert_eq!(fields[18], path, "{segments}×{per}");
            assert_eq!(fields[8], "500");
        }
    }

    #[test]
    fn deliveries_of_one_cycle_are_ordered_by_id_whatever_order_they_came_in() {
        let d = |src: u32, seq: u64, absorbed: Cycle| Delivery {
            header: MsgHeader {
                id: MsgId::new(NodeId(src), seq),
                ..MsgHeader::default()
            },
            absorbed,
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
        let mut want = ds.clone();
        want.sort_by_key(|d| (d.absorbed, d.header.id.0));
        sort_deliveries(&mut ds);
        assert_eq!(ds, want);
    }

    #[test]
    fn a_line_per_delivery_with_its_path_in_order() {
        let topo =
            Topology::from_config(&crate::config::TopologyConfig::Hypercube { dim: 2 }).unwrap();
        let id = MsgId::new(NodeId(0), 5);
        let header = MsgHeader {
            id,
            dst: NodeId(3),
            len: 4,
            hops: 2,
            created: 10,
            injected: 12,
            ..MsgHeader::default()
        };
        let log = RepLog {
            deliveries: vec![Delivery {
                header,
                absorbed: 20,
            }],
            hops: [(3, 15, 3), (0, 12, 0), (1, 14, 1)]
                .map(|(n, at, _)| HopRec {
                    id,
                    attempt: 0,
                    at,
                    node: n,
                })
                .to_vec(),
        };
        let rule = LatencyRule {
            def: LatencyDef::default(),
            ejection: 1,
        };
        let text = render(&mut [log], &topo, rule);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1],
            format!("0,{},5,0,3,4,10,12,20,10,2,8,2,2,0,0,0,0,0>1>3", id.0)
        );
    }
}

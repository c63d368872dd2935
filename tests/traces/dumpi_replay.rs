//! DUMPI traces replay as MPI would run them: receives matched to sends in MPI order, a
//! rank's sends after a Wait/Waitall (or blocking Recv) held back until the awaited
//! messages were delivered, and a rank held up stays held up; collectives expanded (or
//! skipped or refused on request), unknown communicators refused with the call and its
//! byte offset. The rank files are written here, big-endian, as sst-dumpi writes them.

use crate::common;
use crate::dumpi_frame;

use routemu::experiments::replay::elastic::ElasticOptions;
use routemu::experiments::replay::{
    replay, ReplayMode, ReplayOptions, ReplayRecord, ReplaySummary,
};
use routemu::experiments::traces::{open, open_with, OpenOptions};
use routemu::mpi_semantics::matching::Collectives;
use routemu::switching::wormhole::WormholeNet;

use routemu::trace::dumpi::DumpiFile;
use routemu::trace::TraceMsg;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const WORLD: i16 = 2;
const DOUBLE: i16 = 14;

/// One rank's calls, as a DUMPI file.
struct Rank {
    /// The records (the file's body but for its clock biases and end label).
    body: Vec<u8>,
    /// Byte offset of each call written, in the finished file.
    offsets: Vec<usize>,
}

impl Rank {
    fn new() -> Self {
        Rank {
            body: Vec::new(),
            offsets: Vec::new(),
        }
    }
    /// A call record with wall time `ns` (entering = returning).
    fn call(&mut self, label: u16, ns: u64) -> &mut Self {
        // After the body's 8 bytes of clock biases.
        self.offsets
            .push(dumpi_frame::body_start() + 8 + self.body.len());
        self.body.extend(label.to_be_bytes());
        self.body.push(0x08);
        let (s, n) = ((ns / 1_000_000_000) as u16, (ns % 1_000_000_000) as u32);
        for _ in 0..2 {
            self.body.extend(s.to_be_bytes());
            self.body.extend(n.to_be_bytes());
        }
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.body.extend(v.to_be_bytes());
        self
    }
    fn i16(&mut self, v: i16) -> &mut Self {
        self.body.extend(v.to_be_bytes());
        self
    }
    /// Elements (doubles), peer rank and tag: how every point-to-point record begins.
    fn part(&mut self, doubles: i32, peer: i32, tag: i32) -> &mut Self {
        self.i32(doubles).i16(DOUBLE).i32(peer).i32(tag)
    }
    fn isend(&mut self, ns: u64, doubles: i32, dest: i32, tag: i32, req: i32) -> &mut Self {
        self.call(8, ns)
            .part(doubles, dest, tag)
            .i16(WORLD)
            .i32(req)
    }
    fn send(&mut self, ns: u64, doubles: i32, dest: i32, tag: i32, comm: i16) -> &mut Self {
        self.call(0, ns).part(doubles, dest, tag).i16(comm)
    }
    fn recv(&mut self, ns: u64, source: i32, tag: i32) -> &mut Self {
        self.call(1, ns).part(1 << 20, source, tag).i16(WORLD)
    }
    fn irecv(&mut self, ns: u64, source: i32, tag: i32, req: i32) -> &mut Self {
        self.call(12, ns)
            .part(1 << 20, source, tag)
            .i16(WORLD)
            .i32(req)
    }
    /// A count argument, then the array of that many values, which DUMPI stores with
    /// its length.
    fn counted(&mut self, v: &[i32]) -> &mut Self {
        self.i32(v.len() as i32);
        self.body.extend((v.len() as u32).to_be_bytes());
        for &x in v {
            self.i32(x);
        }
        self
    }
    fn waitall(&mut self, ns: u64, reqs: &[i32]) -> &mut Self {
        self.call(18, ns).counted(reqs)
    }
    fn wait(&mut self, ns: u64, req: i32) -> &mut Self {
        self.call(13, ns).i32(req)
    }
    fn sendrecv(
        &mut self,
        ns: u64,
        doubles: i32,
        dest: i32,
        sendtag: i32,
        source: i32,
        recvtag: i32,
    ) -> &mut Self {
        self.call(33, ns)
            .part(doubles, dest, sendtag)
            .part(1 << 20, source, recvtag)
            .i16(WORLD)
    }
    /// One buffer: the receive's count and type are the send's, so not written.
    fn sendrecv_replace(
        &mut self,
        ns: u64,
        doubles: i32,
        dest: i32,
        sendtag: i32,
        source: i32,
        recvtag: i32,
    ) -> &mut Self {
        self.call(34, ns)
            .part(doubles, dest, sendtag)
            .i32(source)
            .i32(recvtag)
            .i16(WORLD)
    }
    fn barrier(&mut self, ns: u64) -> &mut Self {
        self.call(52, ns).i16(WORLD)
    }
    fn bcast(&mut self, ns: u64) -> &mut Self {
        self.bcast_on(ns, 1, 0, WORLD)
    }
    fn bcast_on(&mut self, ns: u64, doubles: i32, root: i32, comm: i16) -> &mut Self {
        self.call(53, ns)
            .i32(doubles)
            .i16(DOUBLE)
            .i32(root)
            .i16(comm)
    }
    fn allreduce(&mut self, ns: u64, doubles: i32, comm: i16) -> &mut Self {
        self.call(65, ns).i32(doubles).i16(DOUBLE);
        self.body.push(1); // the operation
        self.i16(comm)
    }
    fn comm_split(&mut self, ns: u64, color: i32, key: i32, newcomm: i16) -> &mut Self {
        self.call(86, ns)
            .i16(WORLD)
            .i32(color)
            .i32(key)
            .i16(newcomm)
    }
    fn test(&mut self, ns: u64, req: i32, flag: i32) -> &mut Self {
        self.call(14, ns).i32(req).i32(flag)
    }
    fn send_init(&mut self, ns: u64, doubles: i32, dest: i32, req: i32) -> &mut Self {
        self.call(26, ns).part(doubles, dest, 0).i16(WORLD).i32(req)
    }
    fn recv_init(&mut self, ns: u64, source: i32, req: i32) -> &mut Self {
        self.call(30, ns)
            .part(1 << 20, source, 0)
            .i16(WORLD)
            .i32(req)
    }
    fn start(&mut self, ns: u64, req: i32) -> &mut Self {
        self.call(31, ns).i32(req)
    }
    /// Waitany (label 16) or Waitsome (20, with the completed indices).
    fn waitsome(&mut self, ns: u64, reqs: &[i32], done: &[i32]) -> &mut Self {
        self.call(if done.len() == 1 { 16 } else { 20 }, ns)
            .counted(reqs);
        if done.len() == 1 {
            return self.i32(done[0]);
        }
        self.counted(done)
    }
    fn probe(&mut self, ns: u64, source: i32, tag: i32) -> &mut Self {
        self.call(23, ns).i32(source).i32(tag).i16(WORLD)
    }

    /// The whole file.
    fn bytes(&self) -> Vec<u8> {
        let size_of = |t: usize| if t == DOUBLE as usize { 8 } else { 4 };
        dumpi_frame::rank_file([1, 1, 0], size_of, &self.body)
    }
}

/// Writes the ranks as `DIR/t-NNNN.bin` plus `t.meta`; returns the meta file.
fn write_trace(dir: &Path, ranks: &[&Rank]) -> PathBuf {
    for (r, rank) in ranks.iter().enumerate() {
        std::fs::write(dir.join(format!("t-{r:04}.bin")), rank.bytes()).unwrap();
    }
    let meta = dir.join("t.meta");
    std::fs::write(
        &meta,
        format!("hostname=test\nnumprocs={}\nfileprefix=t\n", ranks.len()),
    )
    .unwrap();
    meta
}

fn all(path: &Path) -> Vec<TraceMsg> {
    let mut s = open(path).unwrap();
    let mut v = Vec::new();
    while let Some(m) = s.next_msg().unwrap() {
        v.push(m);
    }
    v
}

fn run(path: &Path, mode: ReplayMode) -> HashMap<u64, ReplayRecord> {
    let cfg = common::preset("wormhole-torus-dor.ron");
    let mut src = open(path).unwrap();
    let mut recs = HashMap::new();
    let opts = ReplayOptions {
        mode,
        time_scale: 0.001, // 1 cycle per µs
        ..ReplayOptions::default()
    };
    let s = replay::<WormholeNet>(&cfg, src.as_mut(), &opts, &mut |r| {
        recs.insert(r.id, r.clone());
        Ok(())
    })
    .unwrap();
    assert_eq!(
        (s.messages, s.delivered),
        (recs.len() as u64, recs.len() as u64)
    );
    recs
}

/// Rank 0 sends to 1, waits for 2's message, then sends to 1 twice more; rank 2 sends
/// to 0; rank 1 receives from anyone, then from 0 twice.
fn three_ranks() -> (Rank, Rank, Rank) {
    let us = 1000;
    let mut r0 = Rank::new();
    r0.send(0, 100, 1, 5, WORLD)
        .irecv(us, 2, -1, 7)
        .waitall(2 * us, &[7])
        .send(10 * us, 10, 1, 5, WORLD)
        .send(12 * us, 10, 1, 5, WORLD);
    let mut r1 = Rank::new();
    r1.recv(0, -1, -1).recv(us, 0, 5).recv(2 * us, 0, 5);
    let mut r2 = Rank::new();
    r2.isend(5 * us, 100, 0, 3, 9).wait(6 * us, 9);
    (r0, r1, r2)
}

#[test]
fn receives_are_matched_and_a_ranks_sends_wait_for_what_it_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let (r0, r1, r2) = three_ranks();
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    let msgs = all(&meta);
    // Ids number the sends rank by rank: 0–2 are rank 0's, 3 is rank 2's.
    let by_id: HashMap<u64, &TraceMsg> = msgs.iter().map(|m| (m.id, m)).collect();
    assert_eq!(msgs.len(), 4);
    assert_eq!(
        (by_id[&0].size, by_id[&1].size, by_id[&3].size),
        (800, 80, 800)
    );
    assert_eq!((by_id[&3].src, by_id[&3].dst, by_id[&3].time), (2, 0, 5000));
    assert_eq!(by_id[&3].children, [1], "rank 0's send after its Waitall");
    assert!(by_id[&0].children.is_empty() && by_id[&1].children.is_empty());
    assert_eq!(
        (
            by_id[&0].successor,
            by_id[&1].successor,
            by_id[&2].successor
        ),
        (Some(1), Some(2), None)
    );
    // The same trace opened through a rank file.
    assert_eq!(all(&dir.path().join("t-0001.bin")), msgs);

    let open_loop = run(&meta, ReplayMode::Open);
    assert_eq!(
        (open_loop[&1].created, open_loop[&2].created),
        (10, 12),
        "open loop creates at the recorded times"
    );
    let deps = run(&meta, ReplayMode::Deps);
    let (m3, m1, m2) = (&deps[&3], &deps[&1], &deps[&2]);
    assert!(
        m3.delivered > 10,
        "the 100-flit message arrives after 10 µs"
    );
    assert_eq!(m1.created, m3.delivered + 8, "held until delivery + gap");
    assert_eq!(
        m2.created,
        12 + (m1.created - 10),
        "the next send keeps its distance from the held one"
    );
}

#[test]
fn a_sendrecv_sends_at_once_and_holds_the_ranks_next_send() {
    // Ranks 0 and 1 swap 100 doubles (Sendrecv, Sendrecv_replace); then rank 0 sends
    // one more, which waits for what its Sendrecv received.
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = Rank::new();
    r0.sendrecv(0, 100, 1, 1, 1, 2).send(1000, 1, 1, 3, WORLD);
    let mut r1 = Rank::new();
    r1.sendrecv_replace(0, 100, 0, 2, 0, 1).recv(500, 0, 3);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    let m: HashMap<u64, TraceMsg> = all(&meta).into_iter().map(|m| (m.id, m)).collect();
    assert_eq!(
        (m[&0].dst, m[&0].size, m[&2].dst, m[&2].size),
        (1, 800, 0, 800)
    );
    assert_eq!(m[&2].children, [1], "rank 0's next send waits for rank 1's");
    assert!(m[&0].children.is_empty(), "rank 1 sends nothing later");
    let deps = run(&meta, ReplayMode::Deps);
    assert_eq!(deps[&0].created, 0, "the swap's sends go at once");
    assert_eq!(deps[&2].created, 0);
    assert_eq!(deps[&1].created, deps[&2].delivered + 8);
}

#[test]
fn any_source_receives_take_the_earliest_send() {
    // Rank 2 receives twice from anyone: rank 1 sent first, then rank 0.
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = Rank::new();
    r0.send(3000, 1, 2, 0, WORLD);
    let mut r1 = Rank::new();
    r1.send(1000, 1, 2, 0, WORLD);
    let mut r2 = Rank::new();
    r2.recv(0, -1, -1)
        .send(4000, 1, 0, 0, WORLD)
        .recv(5000, -1, -1)
        .send(6000, 1, 1, 0, WORLD);
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    let m: HashMap<u64, TraceMsg> = all(&meta).into_iter().map(|m| (m.id, m)).collect();
    assert_eq!(
        m[&1].children,
        [2],
        "rank 1's send matches the first receive"
    );
    assert_eq!(m[&0].children, [3], "rank 0's the second");
}

#[test]
fn collectives_are_refused_or_skipped_on_request_and_unknown_communicators_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = |ranks: &[&Rank], o: &OpenOptions| {
        let meta = write_trace(dir.path(), ranks);
        open_with(&meta, o).err().expect("refused").to_string()
    };
    let refuse = OpenOptions {
        collectives: Collectives::Refuse,
        ..OpenOptions::default()
    };
    let skip = OpenOptions {
        collectives: Collectives::Skip,
        ..OpenOptions::default()
    };
    let (mut r0, mut r1, mut r2) = three_ranks();
    let at = r0.offsets.len();
    for r in [&mut r0, &mut r1, &mut r2] {
        r.barrier(20_000).bcast(21_000);
    }
    let barrier = format!(
        "t-0000.bin: byte {}: unsupported MPI call MPI_Barrier",
        r0.offsets[at]
    );
    let e = err(&[&r0, &r1, &r2], &refuse);
    assert!(e.contains(&barrier), "{e}");
    // Skipped on request, every kind, and said so.
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    let d = open_with(&meta, &skip).unwrap().describe();
    assert!(d.contains("6 collective calls skipped"), "{d}");
    // Expanded by default: a dissemination barrier (2 rounds of 3) and a binomial bcast.
    assert_eq!(all(&meta).len(), 4 + 2 * 3 + 2, "expanded by default");
    // A communicator the rank never made.
    let (mut r0, r1, r2) = three_ranks();
    r0.send(20_000, 1, 1, 0, 5);
    let e = err(&[&r0, &r1, &r2], &skip);
    assert!(
        e.contains(&format!(
            "t-0000.bin: byte {}: MPI_Send on communicator handle 5",
            r0.offsets.last().unwrap()
        )),
        "{e}"
    );
}

#[test]
fn broken_dumpi_traces_are_refused_with_the_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let (r0, r1, r2) = three_ranks();
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    // A rank file missing.
    std::fs::remove_file(dir.path().join("t-0002.bin")).unwrap();
    let e = open(&meta).err().unwrap().to_string();
    assert!(e.contains("t-0002.bin"), "{e}");
    // A rank file cut short, inside its records (the index is gone too).
    let b = r2.bytes();
    std::fs::write(dir.path().join("t-0002.bin"), &b[..b.len() - 70]).unwrap();
    let e = open(&meta).err().unwrap().to_string();
    assert!(
        e.contains("t-0002.bin: byte") && e.contains("truncated"),
        "{e}"
    );
    // A send to a rank the trace does not have.
    let mut r2 = Rank::new();
    r2.send(0, 1, 9, 0, WORLD);
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    let e = open(&meta).err().unwrap().to_string();
    assert!(e.contains("to rank 9, but the trace has 3 ranks"), "{e}");
    // A meta file without its rank count.
    std::fs::write(&meta, "fileprefix=t\n").unwrap();
    let e = open(&meta).err().unwrap().to_string();
    assert!(e.contains("no numprocs"), "{e}");
}

#[test]
fn a_receive_from_a_negative_rank_other_than_proc_null_is_refused_with_its_place() {
    // Issue 18 (D33): -5 is no rank; it used to be taken silently as MPI_PROC_NULL.
    let dir = tempfile::tempdir().unwrap();
    let (r0, _, r2) = three_ranks();
    let mut r1 = Rank::new();
    r1.recv(0, -1, -1)
        .recv(1000, 0, 5)
        .recv(2000, 0, 5)
        .recv(3000, -5, 5);
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    let e = open(&meta).err().unwrap().to_string();
    let at = r1.offsets[3];
    assert!(
        e.contains(&format!("t-0001.bin: byte {at}"))
            && e.contains("from rank -5, which is no rank"),
        "{e}"
    );
    // MPI_PROC_NULL (-2) stays legal: nothing arrives from it.
    let mut r1 = Rank::new();
    r1.recv(0, -1, -1)
        .recv(1000, 0, 5)
        .recv(2000, 0, 5)
        .recv(3000, -2, 5);
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    assert_eq!(all(&meta).len(), 4);
}

#[test]
fn a_meta_file_naming_more_ranks_than_there_are_files_is_refused_before_building_them() {
    // Issue 18 (D32): numprocs = 2^24 used to build 16M paths (over 1 GB) before failing.
    let dir = tempfile::tempdir().unwrap();
    let (r0, r1, r2) = three_ranks();
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    std::fs::write(&meta, "numprocs=16777216\nfileprefix=t\n").unwrap();
    let e = open(&meta).err().unwrap().to_string();
    assert!(
        e.contains("numprocs is 16777216, but there is no rank file") && e.contains("t-0003.bin"),
        "{e}"
    );
    // Above the limit: refused outright.
    std::fs::write(&meta, "numprocs=16777217\nfileprefix=t\n").unwrap();
    let e = open(&meta).err().unwrap().to_string();
    assert!(e.contains("numprocs 16777217 is out of range"), "{e}");
}

#[test]
fn a_meta_file_starting_with_a_byte_order_mark_is_read() {
    // Issue 18 (D33): the mark used to hide the first key ("no numprocs line").
    let dir = tempfile::tempdir().unwrap();
    let (r0, r1, r2) = three_ranks();
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    std::fs::write(&meta, "\u{feff}numprocs=3\nfileprefix=t\n").unwrap();
    assert_eq!(all(&meta).len(), 4);
}

#[test]
fn the_shipped_ring_replays_with_its_collectives_skipped_or_refused_on_request() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dumpi-sst/testtrace.meta");
    let refuse = OpenOptions {
        collectives: Collectives::Refuse,
        ..OpenOptions::default()
    };
    let e = open_with(&p, &refuse).err().unwrap().to_string();
    assert!(e.contains("MPI_Barrier") && e.contains("byte 128"), "{e}");
    let o = OpenOptions {
        collectives: Collectives::Skip,
        ..OpenOptions::default()
    };
    let mut s = open_with(&p, &o).unwrap();
    let mut ring = Vec::new();
    while let Some(m) = s.next_msg().unwrap() {
        ring.push((m.src, m.dst, m.size));
    }
    ring.sort_unstable();
    assert_eq!(ring, [(0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)]);
}

#[test]
fn damaged_rank_files_never_panic_the_reader() {
    // Every byte of rank 0's file set to 0x00 and to 0xff in turn, and the file cut at
    // every length: each either reads or is refused with the file's name.
    let dir = tempfile::tempdir().unwrap();
    let (r0, r1, r2) = three_ranks();
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    let good = r0.bytes();
    let rank0 = dir.path().join("t-0000.bin");
    let check = |bytes: &[u8], what: &str| {
        std::fs::write(&rank0, bytes).unwrap();
        if let Err(e) = open(&meta) {
            let e = e.to_string();
            assert!(
                e.contains("t-0000.bin") || e.contains("DUMPI trace t"),
                "{what}: {e}"
            );
        }
    };
    for i in 0..good.len() {
        for v in [0x00, 0xff] {
            let mut b = good.clone();
            b[i] = v;
            check(&b, &format!("byte {i} = {v:#x}"));
        }
        check(&good[..i], &format!("cut at {i}"));
    }
}

/// The calls of each rank of a shipped trace, by name: how many.
fn shipped_calls(prefix: &str) -> Vec<HashMap<&'static str, u64>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dumpi-sst");
    (0..)
        .map(|r| dir.join(format!("{prefix}-{r:04}.bin")))
        .take_while(|f| f.exists())
        .map(|f| {
            let mut file = DumpiFile::open(&f).unwrap();
            let mut n = HashMap::new();
            while let Some(c) = file.next_call().unwrap() {
                *n.entry(c.name()).or_insert(0) += 1;
            }
            n
        })
        .collect()
}

/// Messages of a dissemination barrier on p ranks: each rank sends once per round,
/// ⌈log₂ p⌉ rounds.
fn barrier_msgs(p: u64) -> u64 {
    p * u64::from(p.next_power_of_two().trailing_zeros())
}

#[test]
fn testbgp_replays_every_message_once_with_its_communicator_and_collectives() {
    let calls = shipped_calls("testbgp");
    let p = calls.len() as u64;
    assert_eq!(p, 7);
    let count = |name: &str| {
        calls
            .iter()
            .map(|c| c.get(name).copied().unwrap_or(0))
            .sum::<u64>()
    };
    let per_rank = |name: &str| {
        let n = calls[0].get(name).copied().unwrap_or(0);
        assert!(calls.iter().all(|c| c.get(name).copied().unwrap_or(0) == n));
        n
    };
    assert_eq!((count("MPI_Isend"), count("MPI_Irecv")), (588, 588));
    // Barriers on 7 ranks (dissemination), Alltoalls of 712-byte blocks on the 7-rank
    // communicator: MPICH's scattered algorithm (Bruck needs 8 ranks), p·(p−1) messages.
    let expected = count("MPI_Isend")
        + per_rank("MPI_Barrier") * barrier_msgs(p)
        + per_rank("MPI_Alltoall") * p * (p - 1);
    assert_eq!(expected, 588 + 3 * 21 + 7 * 42);
    let meta = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dumpi-sst/testbgp.meta");
    let msgs = all(&meta);
    assert_eq!(msgs.len() as u64, expected);
    let d = open(&meta).unwrap().describe();
    assert!(
        d.contains(&format!(
            "{expected} receives matched, 0 receives without a send"
        )),
        "every receive (the 588 Irecvs, the collectives' own) takes one send: {d}"
    );
    for mode in [ReplayMode::Open, ReplayMode::Deps] {
        // `run` checks that every message read was delivered, once (ids are unique).
        let recs = run(&meta, mode);
        assert_eq!(recs.len() as u64, expected, "{mode:?}");
    }
}

#[test]
fn testtrace_replays_its_barrier_and_allreduce_expanded() {
    let calls = shipped_calls("testtrace");
    let p = calls.len() as u64;
    let count = |name: &str| {
        calls
            .iter()
            .map(|c| c.get(name).copied().unwrap_or(0))
            .sum::<u64>()
    };
    assert_eq!((p, count("MPI_Barrier"), count("MPI_Allreduce")), (4, 4, 4));
    // A dissemination barrier, and a recursive-doubling allreduce (4-byte buffer, a
    // power of two of ranks: log₂ 4 exchanges per rank).
    let expected = count("MPI_Isend") + barrier_msgs(p) + p * 2;
    assert_eq!(expected, 20);
    let meta = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dumpi-sst/testtrace.meta");
    assert_eq!(all(&meta).len() as u64, expected);
    assert_eq!(run(&meta, ReplayMode::Deps).len() as u64, expected);
}

/// Four ranks split the world by parity, keys reversing the order (so rank 2 leads the
/// even communicator, rank 3 the odd one), broadcast 10 doubles from communicator rank 0
/// on it, then world rank 0 sends to 1.
fn split_bcast(root_of: impl Fn(usize) -> i32) -> Vec<Rank> {
    (0..4)
        .map(|r| {
            let mut k = Rank::new();
            k.comm_split(0, r as i32 % 2, -(r as i32), 4)
                .bcast_on(1000, 10, root_of(r), 4);
            if r == 0 {
                k.send(2000, 1, 1, 0, WORLD);
            }
            if r == 1 {
                k.recv(2000, 0, 0);
            }
            k
        })
        .collect()
}

#[test]
fn a_bcast_on_a_split_communicator_runs_between_its_world_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let ranks = split_bcast(|_| 0);
    let meta = write_trace(dir.path(), &ranks.iter().collect::<Vec<_>>());
    let msgs = all(&meta);
    let mut pairs: Vec<(u32, u32, u64)> = msgs.iter().map(|m| (m.src, m.dst, m.size)).collect();
    pairs.sort_unstable();
    assert_eq!(pairs, [(0, 1, 8), (2, 0, 80), (3, 1, 80)]);
}

#[test]
fn a_ranks_send_after_a_collective_waits_for_the_collectives_receives_there() {
    let dir = tempfile::tempdir().unwrap();
    let ranks = split_bcast(|_| 0);
    let meta = write_trace(dir.path(), &ranks.iter().collect::<Vec<_>>());
    let msgs = all(&meta);
    let id = |src, dst| {
        msgs.iter()
            .find(|m| (m.src, m.dst) == (src, dst))
            .unwrap()
            .id
    };
    let (bcast, after) = (id(2, 0), id(0, 1));
    let m = msgs.iter().find(|m| m.id == bcast).unwrap();
    assert_eq!(
        m.children,
        [after],
        "rank 0's send waits for its bcast receive"
    );
    let deps = run(&meta, ReplayMode::Deps);
    assert!(deps[&after].created >= deps[&bcast].delivered + 8);
    // Within a collective: recursive doubling on 4 ranks exchanges with r^1, then r^2;
    // the second exchange's send waits for the first's receive.
    let dir = tempfile::tempdir().unwrap();
    let ranks: Vec<Rank> = (0..4)
        .map(|_| {
            let mut k = Rank::new();
            k.allreduce(0, 1, WORLD);
            k
        })
        .collect();
    let meta = write_trace(dir.path(), &ranks.iter().collect::<Vec<_>>());
    let msgs = all(&meta);
    assert_eq!(msgs.len(), 8);
    let by = |src: u32, dst: u32| msgs.iter().find(|m| (m.src, m.dst) == (src, dst)).unwrap();
    for r in 0..4u32 {
        let second = by(r, r ^ 2).id;
        assert_eq!(by(r ^ 1, r).children, [second], "rank {r}");
    }
    let deps = run(&meta, ReplayMode::Deps);
    for r in 0..4u32 {
        let (first_in, second) = (&deps[&by(r ^ 1, r).id], &deps[&by(r, r ^ 2).id]);
        assert!(second.created >= first_in.delivered + 8, "rank {r}");
    }
}

#[test]
fn collectives_whose_members_disagree_or_name_unknown_communicators_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // World rank 1 names another root than its peer 3 on the odd communicator.
    let ranks = split_bcast(|r| i32::from(r == 1));
    let at1 = ranks[1].offsets[1];
    let at3 = ranks[3].offsets[1];
    let meta = write_trace(dir.path(), &ranks.iter().collect::<Vec<_>>());
    let e = open(&meta).err().unwrap().to_string();
    assert!(
        e.contains(&format!(
            "t-0003.bin: byte {at3}: MPI_Bcast (bcast with root 0)"
        )) && e.contains(&format!(
            "t-0001.bin: byte {at1}: MPI_Bcast there is bcast with root 1"
        )),
        "{e}"
    );
    // A Barrier on a communicator rank 2 never made.
    let mut ranks = split_bcast(|_| 0);
    ranks[2].call(52, 3000).i16(6);
    let at = *ranks[2].offsets.last().unwrap();
    let meta = write_trace(dir.path(), &ranks.iter().collect::<Vec<_>>());
    let e = open(&meta).err().unwrap().to_string();
    assert!(
        e.contains(&format!(
            "t-0002.bin: byte {at}: MPI_Barrier on communicator handle 6"
        )),
        "{e}"
    );
}

#[test]
fn requests_complete_where_the_trace_says_and_probes_wait_without_taking() {
    // Rank 1 posts a receive from 0; a Test that fails leaves its next send free, one
    // that succeeds holds the send after it. Rank 2 probes for 0's message, then sends
    // (held by it) and receives it.
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = Rank::new();
    r0.send(0, 100, 1, 0, WORLD).send(0, 100, 2, 0, WORLD);
    let mut r1 = Rank::new();
    r1.irecv(0, 0, 0, 5)
        .test(100, 5, 0)
        .send(200, 1, 2, 1, WORLD)
        .test(300, 5, 1)
        .send(400, 1, 2, 1, WORLD);
    let mut r2 = Rank::new();
    r2.probe(0, 0, 0)
        .send(100, 1, 1, 2, WORLD)
        .recv(200, 0, 0)
        .recv(300, 1, 1)
        .recv(400, 1, 1);
    let mut r1_recv = Rank::new();
    r1_recv.body = r1.body.clone();
    r1_recv.offsets = r1.offsets.clone();
    r1_recv.recv(500, 2, 2);
    let meta = write_trace(dir.path(), &[&r0, &r1_recv, &r2]);
    let msgs = all(&meta);
    let id = |src: u32, dst: u32, n: usize| {
        msgs.iter()
            .filter(|m| (m.src, m.dst) == (src, dst))
            .map(|m| m.id)
            .min()
            .unwrap()
            + n as u64
    };
    let by_id: HashMap<u64, &TraceMsg> = msgs.iter().map(|m| (m.id, m)).collect();
    assert_eq!(
        by_id[&id(0, 1, 0)].children,
        [id(1, 2, 1)],
        "the Test that succeeded"
    );
    assert_eq!(by_id[&id(0, 2, 0)].children, [id(2, 1, 0)], "the probe");
    let d = open(&meta).unwrap().describe();
    assert!(
        d.contains("5 receives matched, 0 receives without a send"),
        "{d}"
    );
}

#[test]
fn persistent_requests_start_new_messages_and_waitany_completes_only_its_index() {
    // Rank 0 starts one persistent send twice. Rank 1 starts a persistent receive, waits
    // for it, sends; starts it again, and with an Irecv from 2 pending, Waitany reports
    // only the Irecv (index 1): its next send waits for 2's message alone; a Waitsome
    // then reports the persistent one, and the last send waits for it.
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = Rank::new();
    r0.send_init(0, 10, 1, 3).start(100, 3).start(200, 3);
    let mut r1 = Rank::new();
    r1.recv_init(0, 0, 4)
        .start(0, 4)
        .wait(100, 4)
        .send(150, 1, 2, 0, WORLD)
        .start(200, 4)
        .irecv(200, 2, 0, 6)
        .waitsome(300, &[4, 6], &[1])
        .send(350, 1, 2, 0, WORLD)
        .waitsome(400, &[4, 6], &[0, 1])
        .send(450, 1, 2, 0, WORLD);
    let mut r2 = Rank::new();
    r2.send(0, 1, 1, 0, WORLD)
        .recv(100, 1, 0)
        .recv(100, 1, 0)
        .recv(100, 1, 0);
    let meta = write_trace(dir.path(), &[&r0, &r1, &r2]);
    let msgs = all(&meta);
    assert_eq!(msgs.len(), 6);
    let d = open(&meta).unwrap().describe();
    assert!(
        d.contains("6 receives matched, 0 receives without a send"),
        "{d}"
    );
    // Ids number the sends rank by rank: 0, 1 rank 0's starts; 2–4 rank 1's; 5 rank 2's.
    let by_id: HashMap<u64, &TraceMsg> = msgs.iter().map(|m| (m.id, m)).collect();
    assert_eq!(
        (by_id[&0].dst, by_id[&0].size, by_id[&1].time),
        (1, 80, 200)
    );
    assert_eq!(
        by_id[&0].children,
        [2],
        "the Wait on the persistent receive"
    );
    assert_eq!(by_id[&5].children, [3], "Waitany: only the Irecv");
    assert_eq!(
        by_id[&1].children,
        [4],
        "Waitsome: the second start's receive"
    );
}

// ---------------------------------------------------------------------------------------
// Elastic replay (issue 28): what each call costs on the emulated network.

impl Rank {
    fn ssend(&mut self, ns: u64, doubles: i32, dest: i32, tag: i32) -> &mut Self {
        self.call(4, ns).part(doubles, dest, tag).i16(WORLD)
    }
    /// A Test that found nothing (a call that does not communicate).
    fn idle(&mut self, ns: u64) -> &mut Self {
        self.test(ns, 99, 0)
    }
    /// A Test that found nothing, recorded without time stamps.
    fn untimed(&mut self) -> &mut Self {
        self.offsets
            .push(dumpi_frame::body_start() + 8 + self.body.len());
        self.body.extend(14u16.to_be_bytes());
        self.body.push(0x00);
        self.i32(99).i32(0)
    }
}

/// Replays `meta` elastically, 1 cycle a ns, with eager limit `eager`.
fn elastic(meta: &Path, eager: u64) -> routemu::foundation::error::Result<ReplaySummary> {
    let cfg = common::preset("wormhole-torus-dor.ron");
    let mut src = open(meta).unwrap();
    let opts = ReplayOptions {
        mode: ReplayMode::Elastic,
        elastic: ElasticOptions {
            eager_limit: eager,
            ..ElasticOptions::default()
        },
        ..ReplayOptions::default()
    };
    replay::<WormholeNet>(&cfg, src.as_mut(), &opts, &mut |_| Ok(()))
}

/// Each rank's finish, in rank order.
fn finishes(s: &ReplaySummary) -> Vec<u64> {
    let a = s.application.as_ref().expect("an MPI trace's application");
    a.ranks.iter().map(|r| r.finish).collect()
}

#[test]
fn a_synchronous_send_completes_when_its_receive_is_posted_plus_the_acknowledgements_trip() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    let (one, data) = (
        routemu::switching::zero_load::wormhole(&cfg, 1, 1),
        routemu::switching::zero_load::wormhole(&cfg, 1, 100),
    );
    let dir = tempfile::tempdir().unwrap();
    // Rank 1 posts its receive 50 µs in; rank 0 sends at once.
    let mut r1 = Rank::new();
    r1.idle(0).recv(50_000, 0, 0);
    let mut r0 = Rank::new();
    r0.ssend(0, 1, 1, 0);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    let s = elastic(&meta, 64).unwrap();
    assert_eq!(finishes(&s), vec![50_000 + one, 50_000]);
    assert_eq!(s.application.as_ref().unwrap().control_messages, 1);
    // A standard send of the same size completes as it is posted.
    let mut r0 = Rank::new();
    r0.send(0, 1, 1, 0, WORLD);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    assert_eq!(finishes(&elastic(&meta, 64).unwrap()), vec![0, 50_000]);
    // Above the eager limit the data moves only once the receive is posted: CTS, the
    // data, then the FIN that completes the send.
    let mut r0 = Rank::new();
    r0.send(0, 100, 1, 0, WORLD);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    let s = elastic(&meta, 64).unwrap();
    assert_eq!(
        finishes(&s),
        vec![50_000 + one + data + one, 50_000 + one + data]
    );
    assert_eq!(s.application.as_ref().unwrap().rendezvous, 1);
}

#[test]
fn a_probe_waits_for_the_message_and_the_receive_then_takes_it_at_once() {
    let cfg = common::preset("wormhole-torus-dor.ron");
    let one = routemu::switching::zero_load::wormhole(&cfg, 1, 1);
    let dir = tempfile::tempdir().unwrap();
    // Rank 1 probes 1 µs in and receives 1 µs of compute after the probe returns; rank
    // 0 sends 30 µs in.
    let mut r1 = Rank::new();
    r1.idle(0).probe(1_000, 0, 0).recv(2_000, 0, 0);
    let mut r0 = Rank::new();
    r0.idle(0).send(30_000, 1, 1, 0, WORLD);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    let s = elastic(&meta, 64).unwrap();
    assert_eq!(finishes(&s), vec![30_000, 30_000 + one + 1_000]);
    let a = s.application.as_ref().unwrap();
    let c = a.critical.as_ref().expect("rank 1 waited in its probe");
    assert_eq!(
        (c.call.as_str(), c.peer, c.released),
        ("MPI_Probe", Some(0), 30_000 + one)
    );
}

#[test]
fn a_receive_nothing_matches_completes_as_it_is_posted_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = Rank::new();
    r0.idle(0).recv(5_000, 1, 7).idle(6_000);
    let mut r1 = Rank::new();
    r1.idle(0);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    let s = elastic(&meta, 64).unwrap();
    assert_eq!(finishes(&s), vec![6_000, 0]);
    assert_eq!(s.application.as_ref().unwrap().unmatched_receives, 1);
}

#[test]
fn sends_that_only_an_eager_protocol_lets_through_are_stuck_by_rendezvous_and_said_so() {
    // Both ranks send first and receive after: fine while the messages go eagerly, a
    // deadlock in MPI (and here) when both wait for the other's receive.
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = Rank::new();
    r0.send(0, 100, 1, 0, WORLD).recv(1_000, 1, 0);
    let mut r1 = Rank::new();
    r1.send(0, 100, 0, 0, WORLD).recv(1_000, 0, 0);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    assert!(elastic(&meta, 1 << 16).is_ok());
    let e = elastic(&meta, 64).unwrap_err().to_string();
    assert!(
        e.contains("stuck") && e.contains("rendezvous") && e.contains("raise --eager-limit"),
        "{e}"
    );
}

#[test]
fn a_trace_without_wall_clock_times_is_refused_elastic_replay_and_replays_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = Rank::new();
    r0.untimed().send(0, 1, 1, 0, WORLD);
    let mut r1 = Rank::new();
    r1.recv(0, 0, 0);
    let meta = write_trace(dir.path(), &[&r0, &r1]);
    let e = elastic(&meta, 64).unwrap_err().to_string();
    assert!(e.contains("has no wall-clock time"), "{e}");
    assert_eq!(run(&meta, ReplayMode::Deps).len(), 1);
}

#[test]
fn open_loop_creates_an_mpi_traces_collective_messages_at_their_recorded_times() {
    // The stream is ordered parents first for dependency-driven replay; open loop reads
    // it in recorded-time order, so nothing is created late (testbgp's Barrier messages
    // came up to 289,791 cycles late before).
    let meta = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dumpi-sst/testbgp.meta");
    let cfg = common::preset("wormhole-torus-dor.ron");
    let mut src = open(&meta).unwrap();
    let opts = ReplayOptions::default();
    let s = replay::<WormholeNet>(&cfg, src.as_mut(), &opts, &mut |r| {
        assert_eq!(r.created, r.recorded, "message {}", r.id);
        Ok(())
    })
    .unwrap();
    assert_eq!((s.created_late, s.created_lag_max), (0, Some(0)));
    assert_eq!(s.delivered, 945);
}

#[test]
fn the_command_line_replays_dumpi_elastically_by_default_and_keeps_its_flags_to_that_mode() {
    let trace = "traces/generated/halo2d-16.meta";
    let o = common::routemu(&[
        "replay",
        "hw/wormhole-torus-dor.ron",
        "--trace",
        trace,
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mode"], "elastic");
    let app = &v["application"];
    for k in ["runtime", "runtime_recorded", "speedup"] {
        assert!(app[k].is_number(), "{k}: {app}");
    }
    assert_eq!(app["ranks"].as_array().unwrap().len(), 16);
    assert_eq!(v["runtime"], app["runtime"]);
    assert_eq!(v["speedup"], app["speedup"]);
    let o = common::routemu(&[
        "replay",
        "hw/wormhole-torus-dor.ron",
        "--trace",
        trace,
        "--mode",
        "open",
        "--eager-limit",
        "100",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--eager-limit applies to elastic replay"));
    let o = common::routemu(&[
        "replay",
        "hw/wormhole-torus-dor.ron",
        "--trace",
        trace,
        "--overhead",
        "send=1,x=2",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a bad flag value is clap's usage error"
    );
}

//! DUMPI decoding and communicator resolution: the shipped traces decode to the end and
//! their communicators resolve; every record kind, written here byte by byte as
//! sst-dumpi lays it out (its writer, dumpi/common/dumpiio.c), decodes back field by
//! field; damaged and absurd files give errors with the file and byte offset, never
//! panics; and communicators built by Comm_split, Comm_dup, Comm_create, the group
//! calls and the Cartesian constructors resolve to the world ranks MPI would give,
//! across handle reuse, with unknown handles and partial traces reported.

use crate::dumpi_frame;
use routemu::mpi_semantics::comm::{CommTable, COMM_NULL, COMM_SELF, COMM_WORLD, GROUP_EMPTY};
use routemu::trace::dumpi::{
    call_name, label_of, Args, Call, CallClass, DumpiFile, Field, SetOp, Status,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DOUBLE: i16 = 14;
const INT: i16 = 9;
/// MPI_UNDEFINED as MPICH and Open MPI define it (any negative colour means it).
const UNDEFINED: i32 = -32766;

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/dumpi-sst")
}

fn decode_all(path: &Path) -> Vec<Call> {
    let mut f = DumpiFile::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(c) = f.next_call().unwrap() {
        v.push(c);
    }
    v
}

fn counts(calls: &[Call]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for c in calls {
        *m.entry(c.name()).or_default() += 1;
    }
    m
}

// ---------------------------------------------------------------------------------------
// The shipped traces

#[test]
fn testbgp_decodes_to_the_end_on_every_rank_with_the_calls_sources_md_lists() {
    // traces/SOURCES.md: "588 MPI_Isend of 712 B plus 7 MPI_Alltoall calls per rank".
    // The files say: 588 Isends in all (84 per rank, 12 rounds to each of the 6 other
    // ranks, 89 doubles = 712 B each) and 7 Alltoalls per rank (49 in all).
    let want: BTreeMap<&str, usize> = [
        ("MPI_Init", 1),
        ("MPI_Comm_size", 1),
        ("MPI_Comm_rank", 29),
        ("MPI_Comm_group", 1),
        ("MPI_Group_incl", 1),
        ("MPI_Comm_create", 1),
        ("MPI_Barrier", 3),
        ("MPI_Isend", 84),
        ("MPI_Irecv", 84),
        ("MPI_Waitall", 14),
        ("MPI_Alltoall", 7),
        ("MPI_Finalize", 1),
    ]
    .into();
    let mut isends = 0;
    let mut alltoalls = 0;
    for r in 0..7 {
        let f = DumpiFile::open(&traces().join(format!("testbgp-{r:04}.bin"))).unwrap();
        let sizes = f.type_sizes.clone();
        let calls = decode_all(&traces().join(format!("testbgp-{r:04}.bin")));
        assert_eq!(counts(&calls), want, "rank {r}");
        for c in &calls {
            match c.args {
                Args::Send {
                    count,
                    datatype,
                    dest,
                    ..
                } => {
                    assert_eq!(count as u32 * sizes[datatype as usize], 712, "rank {r}");
                    assert!(dest != r && (0..7).contains(&dest));
                    isends += 1;
                }
                Args::Alltoall {
                    sendcount,
                    sendtype,
                    ..
                } => {
                    assert_eq!((sendcount, sendtype), (89, DOUBLE));
                    alltoalls += 1;
                }
                _ => {}
            }
        }
        assert!(
            matches!(calls.last().unwrap().args, Args::None),
            "ends at Finalize"
        );
    }
    assert_eq!((isends, alltoalls), (588, 49));
}

#[test]
fn testbgp_communicators_resolve_to_the_world_in_world_order() {
    let t = CommTable::load(&traces().join("testbgp.meta")).unwrap();
    assert_eq!(t.ranks(), 7);
    // Its point-to-point calls and Alltoalls run on a communicator made by
    // MPI_Comm_create from MPI_Group_incl of all 7 world ranks in order.
    let mut ids = Vec::new();
    for r in 0..7u32 {
        let calls = decode_all(&traces().join(format!("testbgp-{r:04}.bin")));
        let mut used = 0;
        for (i, c) in calls.iter().enumerate() {
            let Some(comm) = c.args.comm() else { continue };
            let members = t.world_ranks(r, comm, i).unwrap();
            assert_eq!(members, [0, 1, 2, 3, 4, 5, 6], "rank {r} call {i}");
            assert_eq!(t.comm_rank(r, comm, i).unwrap(), r);
            if comm != COMM_WORLD && !matches!(c.args, Args::CommCreate { .. }) {
                ids.push(t.comm_id(r, comm, i).unwrap());
                used += 1;
            }
        }
        assert!(
            used > 100,
            "rank {r}: the created communicator carries the traffic"
        );
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one communicator on every rank");
    assert_ne!(
        ids[0],
        t.comm_id(0, COMM_WORLD, 0).unwrap(),
        "not the world itself"
    );
}

#[test]
fn testtrace_still_decodes_and_agrees_with_sandias_dump_call_by_call() {
    // The calls Sandia's dumpi2ascii printed for rank 0, in order.
    let ascii = std::fs::read_to_string(traces().join("testtrace-0000.dumpi2ascii.txt")).unwrap();
    let theirs: Vec<&str> = ascii
        .lines()
        .filter_map(|l| l.split_once(" entering at "))
        .map(|(name, _)| name)
        .collect();
    let mine: Vec<&str> = decode_all(&traces().join("testtrace-0000.bin"))
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(mine, theirs);
    for r in 0..4 {
        let calls = decode_all(&traces().join(format!("testtrace-{r:04}.bin")));
        let c = counts(&calls);
        assert_eq!(c["MPI_Isend"], 1, "rank {r}");
        assert_eq!(c["MPI_Barrier"] + c["MPI_Allreduce"], 2, "rank {r}");
    }
    let t = CommTable::load(&traces().join("testtrace.meta")).unwrap();
    assert_eq!(t.world_ranks(3, COMM_WORLD, 0).unwrap(), [0, 1, 2, 3]);
    assert_eq!(t.world_ranks(3, COMM_SELF, 0).unwrap(), [3]);
}

// ---------------------------------------------------------------------------------------
// A DUMPI writer for the tests

/// A rank file being written as sst-dumpi lays it out: magic, header, datatype sizes,
/// body (biases, records, end label), and the 64-byte section index.
struct Writer {
    version: [u8; 3],
    records: Vec<u8>,
    offsets: Vec<u64>,
    mask: u8,
}

impl Writer {
    fn new(version: [u8; 3]) -> Self {
        Writer {
            version,
            records: Vec::new(),
            offsets: Vec::new(),
            mask: 0,
        }
    }
    fn body_start() -> usize {
        dumpi_frame::body_start()
    }
    /// Starts a record: label, mask, then what the mask announces.
    fn rec(&mut self, name: &str, mask: u8) -> &mut Self {
        let label = label_of(name).unwrap_or_else(|| panic!("{name}"));
        self.raw_rec(label, mask)
    }
    fn raw_rec(&mut self, label: u16, mask: u8) -> &mut Self {
        self.offsets
            .push((Self::body_start() + 8 + self.records.len()) as u64);
        self.mask = mask;
        self.u16(label).u8(mask);
        if mask & 0x40 != 0 {
            self.u16(3);
        }
        for bit in [0x04, 0x08] {
            if mask & bit != 0 {
                self.u16(1).i(500).u16(1).i(900);
            }
        }
        if mask & 0x80 != 0 {
            self.u8(2).l(10).l(11).l(20).l(21);
        }
        self
    }
    fn u8(&mut self, v: u8) -> &mut Self {
        self.records.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.records.extend(v.to_be_bytes());
        self
    }
    fn h(&mut self, v: i16) -> &mut Self {
        self.records.extend(v.to_be_bytes());
        self
    }
    fn i(&mut self, v: i32) -> &mut Self {
        self.records.extend(v.to_be_bytes());
        self
    }
    fn l(&mut self, v: i64) -> &mut Self {
        self.records.extend(v.to_be_bytes());
        self
    }
    fn ints(&mut self, v: &[i32]) -> &mut Self {
        self.i(v.len() as i32);
        for &x in v {
            self.i(x);
        }
        self
    }
    fn hs(&mut self, v: &[i16]) -> &mut Self {
        self.i(v.len() as i32);
        for &x in v {
            self.h(x);
        }
        self
    }
    fn text(&mut self, s: &str) -> &mut Self {
        self.i(s.len() as i32);
        self.records.extend(s.as_bytes());
        self
    }
    fn texts(&mut self, v: &[&str]) -> &mut Self {
        self.i(v.len() as i32);
        for s in v {
            self.text(s);
        }
        self
    }
    /// Statuses, when the record's mask says they are stored.
    fn st(&mut self, v: &[Status]) -> &mut Self {
        if self.mask & 0x03 != 0 {
            self.i(v.len() as i32);
            let tagged = self.version >= [0, 6, 3];
            for &(bytes, source, cancelled, error, tag) in v {
                self.i(bytes).i(source).u8(cancelled).u8(error);
                if tagged {
                    self.i(tag);
                }
            }
        }
        self
    }
    fn bytes(&self) -> Vec<u8> {
        let size_of = |t: usize| match t as i16 {
            INT => 4,
            DOUBLE => 8,
            _ => 1,
        };
        dumpi_frame::rank_file(self.version, size_of, &self.records)
    }
    fn decode(&self) -> Vec<Call> {
        let mut f = DumpiFile::from_bytes(self.bytes(), "w.bin").unwrap();
        let mut v = Vec::new();
        while let Some(c) = f.next_call().unwrap() {
            v.push(c);
        }
        v
    }
}

fn nt(name: &'static str, fields: Vec<Field>) -> Args {
    Args::NoTraffic { name, fields }
}

// ---------------------------------------------------------------------------------------
// Every record kind, field by field

/// One record of every kind the tests write, and what it must decode to.
fn every_kind(version: [u8; 3]) -> (Writer, Vec<(Args, Vec<Status>)>) {
    use Field::*;
    let mut w = Writer::new(version);
    let mut want: Vec<(Args, Vec<Status>)> = Vec::new();
    let s1: Vec<Status> = vec![(712, 3, 0, 0, 200)];
    let s2: Vec<Status> = vec![(8, 1, 0, 0, 7), (16, 2, 1, 0, 8)];
    let tagless = |s: &[Status]| -> Vec<Status> {
        s.iter()
            .map(|&(b, src, c, e, t)| (b, src, c, e, if version >= [0, 6, 3] { t } else { 0 }))
            .collect()
    };
    // Point-to-point and completion.
    for (k, name) in [
        "MPI_Send_init",
        "MPI_Bsend_init",
        "MPI_Ssend_init",
        "MPI_Rsend_init",
    ]
    .into_iter()
    .enumerate()
    {
        w.rec(name, 0x4f)
            .i(89)
            .h(DOUBLE)
            .i(5)
            .i(200)
            .h(4)
            .i(10 + k as i32);
        want.push((
            Args::SendInit {
                count: 89,
                datatype: DOUBLE,
                dest: 5,
                tag: 200,
                comm: 4,
                request: 10 + k as i32,
            },
            vec![],
        ));
    }
    w.rec("MPI_Recv_init", 0).i(3).h(INT).i(-1).i(42).h(2).i(20);
    want.push((
        Args::RecvInit {
            count: 3,
            datatype: INT,
            source: -1,
            tag: 42,
            comm: 2,
            request: 20,
        },
        vec![],
    ));
    w.rec("MPI_Start", 0).i(10);
    want.push((Args::Start { requests: vec![10] }, vec![]));
    w.rec("MPI_Startall", 0).i(2).ints(&[10, 20]);
    want.push((
        Args::Start {
            requests: vec![10, 20],
        },
        vec![],
    ));
    w.rec("MPI_Recv", 0x4b)
        .i(89)
        .h(DOUBLE)
        .i(3)
        .i(200)
        .h(2)
        .st(&s1);
    want.push((
        Args::Recv {
            count: 89,
            datatype: DOUBLE,
            source: 3,
            tag: 200,
            comm: 2,
            request: None,
        },
        tagless(&s1),
    ));
    w.rec("MPI_Waitany", 0x03)
        .i(3)
        .ints(&[4, 5, 6])
        .i(1)
        .st(&s1);
    want.push((
        Args::WaitAny {
            requests: vec![4, 5, 6],
            index: 1,
        },
        tagless(&s1),
    ));
    w.rec("MPI_Waitsome", 0x03)
        .i(3)
        .ints(&[4, 5, 6])
        .i(2)
        .ints(&[0, 2])
        .st(&s2);
    want.push((
        Args::WaitSome {
            requests: vec![4, 5, 6],
            outcount: 2,
            indices: vec![0, 2],
        },
        tagless(&s2),
    ));
    w.rec("MPI_Waitsome", 0x03)
        .i(1)
        .ints(&[1])
        .i(UNDEFINED)
        .ints(&[])
        .st(&[]);
    want.push((
        Args::WaitSome {
            requests: vec![1],
            outcount: UNDEFINED,
            indices: vec![],
        },
        vec![],
    ));
    w.rec("MPI_Test", 0x03).i(7).i(1).st(&s1);
    want.push((
        Args::Test {
            request: 7,
            flag: 1,
        },
        tagless(&s1),
    ));
    w.rec("MPI_Testany", 0x03)
        .i(2)
        .ints(&[7, 8])
        .i(0)
        .i(1)
        .st(&s1);
    want.push((
        Args::TestAny {
            requests: vec![7, 8],
            index: 0,
            flag: 1,
        },
        tagless(&s1),
    ));
    w.rec("MPI_Testall", 0x03).i(2).ints(&[7, 8]).i(0).st(&s2);
    want.push((
        Args::TestAll {
            requests: vec![7, 8],
            flag: 0,
        },
        tagless(&s2),
    ));
    w.rec("MPI_Testsome", 0).i(2).ints(&[7, 8]).i(1).ints(&[1]);
    want.push((
        Args::TestSome {
            requests: vec![7, 8],
            outcount: 1,
            indices: vec![1],
        },
        vec![],
    ));
    w.rec("MPI_Iprobe", 0x03).i(-1).i(5).h(2).i(1).st(&s1);
    want.push((
        Args::Probe {
            source: -1,
            tag: 5,
            comm: 2,
            flag: Some(1),
        },
        tagless(&s1),
    ));
    w.rec("MPI_Probe", 0x03).i(3).i(-1).h(4).st(&s1);
    want.push((
        Args::Probe {
            source: 3,
            tag: -1,
            comm: 4,
            flag: None,
        },
        tagless(&s1),
    ));
    w.rec("MPI_Cancel", 0).i(9);
    want.push((Args::Cancel { request: 9 }, vec![]));
    w.rec("MPI_Request_free", 0).i(9);
    want.push((Args::RequestFree { request: 9 }, vec![]));
    // Collectives.
    w.rec("MPI_Bcast", 0x40).i(4).h(INT).i(0).h(2);
    want.push((
        Args::Bcast {
            count: 4,
            datatype: INT,
            root: 0,
            comm: 2,
        },
        vec![],
    ));
    w.rec("MPI_Reduce", 0).i(4).h(DOUBLE).u8(3).i(1).h(2);
    want.push((
        Args::Reduce {
            count: 4,
            datatype: DOUBLE,
            op: 3,
            root: 1,
            comm: 2,
        },
        vec![],
    ));
    for name in ["MPI_Allreduce", "MPI_Scan", "MPI_Exscan"] {
        w.rec(name, 0).i(2).h(DOUBLE).u8(1).h(5);
        let (count, datatype, op, comm) = (2, DOUBLE, 1, 5);
        want.push((
            match name {
                "MPI_Allreduce" => Args::Allreduce {
                    count,
                    datatype,
                    op,
                    comm,
                },
                "MPI_Scan" => Args::Scan {
                    count,
                    datatype,
                    op,
                    comm,
                },
                _ => Args::Exscan {
                    count,
                    datatype,
                    op,
                    comm,
                },
            },
            vec![],
        ));
    }
    w.rec("MPI_Reduce_scatter", 0)
        .i(3)
        .ints(&[1, 2, 3])
        .h(INT)
        .u8(3)
        .h(2);
    want.push((
        Args::ReduceScatter {
            commsize: 3,
            recvcounts: vec![1, 2, 3],
            datatype: INT,
            op: 3,
            comm: 2,
        },
        vec![],
    ));
    // Gather and Scatter: the root side only at the root.
    w.rec("MPI_Gather", 0).i(1).i(5).h(INT).i(0).h(2);
    want.push((
        Args::Gather {
            commrank: 1,
            sendcount: 5,
            sendtype: INT,
            root: 0,
            comm: 2,
            recvcount: None,
            recvtype: None,
        },
        vec![],
    ));
    w.rec("MPI_Gather", 0)
        .i(0)
        .i(5)
        .h(INT)
        .i(0)
        .h(2)
        .i(6)
        .h(DOUBLE);
    want.push((
        Args::Gather {
            commrank: 0,
            sendcount: 5,
            sendtype: INT,
            root: 0,
            comm: 2,
            recvcount: Some(6),
            recvtype: Some(DOUBLE),
        },
        vec![],
    ));
    w.rec("MPI_Gatherv", 0)
        .i(2)
        .i(3)
        .i(5)
        .h(INT)
        .i(0)
        .h(2)
        .h(DOUBLE);
    want.push((
        Args::Gatherv {
            commrank: 2,
            commsize: 3,
            sendcount: 5,
            sendtype: INT,
            root: 0,
            comm: 2,
            recvcounts: None,
            displs: None,
            recvtype: DOUBLE,
        },
        vec![],
    ));
    w.rec("MPI_Gatherv", 0)
        .i(0)
        .i(3)
        .i(5)
        .h(INT)
        .i(0)
        .h(2)
        .ints(&[5, 6, 7])
        .ints(&[0, 5, 11])
        .h(DOUBLE);
    want.push((
        Args::Gatherv {
            commrank: 0,
            commsize: 3,
            sendcount: 5,
            sendtype: INT,
            root: 0,
            comm: 2,
            recvcounts: Some(vec![5, 6, 7]),
            displs: Some(vec![0, 5, 11]),
            recvtype: DOUBLE,
        },
        vec![],
    ));
    w.rec("MPI_Scatter", 0)
        .i(2)
        .i(4)
        .h(DOUBLE)
        .i(2)
        .h(2)
        .i(12)
        .h(INT);
    want.push((
        Args::Scatter {
            commrank: 2,
            recvcount: 4,
            recvtype: DOUBLE,
            root: 2,
            comm: 2,
            sendcount: Some(12),
            sendtype: Some(INT),
        },
        vec![],
    ));
    w.rec("MPI_Scatter", 0).i(0).i(4).h(DOUBLE).i(2).h(2);
    want.push((
        Args::Scatter {
            commrank: 0,
            recvcount: 4,
            recvtype: DOUBLE,
            root: 2,
            comm: 2,
            sendcount: None,
            sendtype: None,
        },
        vec![],
    ));
    w.rec("MPI_Scatterv", 0)
        .i(1)
        .i(2)
        .h(DOUBLE)
        .i(3)
        .h(INT)
        .i(1)
        .h(2)
        .ints(&[3, 4])
        .ints(&[0, 3]);
    want.push((
        Args::Scatterv {
            commrank: 1,
            commsize: 2,
            sendtype: DOUBLE,
            recvcount: 3,
            recvtype: INT,
            root: 1,
            comm: 2,
            sendcounts: Some(vec![3, 4]),
            displs: Some(vec![0, 3]),
        },
        vec![],
    ));
    w.rec("MPI_Scatterv", 0)
        .i(0)
        .i(2)
        .h(DOUBLE)
        .i(3)
        .h(INT)
        .i(1)
        .h(2);
    want.push((
        Args::Scatterv {
            commrank: 0,
            commsize: 2,
            sendtype: DOUBLE,
            recvcount: 3,
            recvtype: INT,
            root: 1,
            comm: 2,
            sendcounts: None,
            displs: None,
        },
        vec![],
    ));
    w.rec("MPI_Allgather", 0).i(1).h(INT).i(3).h(DOUBLE).h(2);
    want.push((
        Args::Allgather {
            sendcount: 1,
            sendtype: INT,
            recvcount: 3,
            recvtype: DOUBLE,
            comm: 2,
        },
        vec![],
    ));
    w.rec("MPI_Allgatherv", 0)
        .i(2)
        .i(1)
        .h(INT)
        .ints(&[1, 2])
        .ints(&[0, 1])
        .h(INT)
        .h(2);
    want.push((
        Args::Allgatherv {
            commsize: 2,
            sendcount: 1,
            sendtype: INT,
            recvcounts: vec![1, 2],
            displs: vec![0, 1],
            recvtype: INT,
            comm: 2,
        },
        vec![],
    ));
    w.rec("MPI_Alltoallv", 0)
        .i(2)
        .ints(&[1, 2])
        .ints(&[0, 1])
        .h(DOUBLE)
        .ints(&[3, 4])
        .ints(&[0, 3])
        .h(DOUBLE)
        .h(2);
    want.push((
        Args::Alltoallv {
            commsize: 2,
            sendcounts: vec![1, 2],
            senddispls: vec![0, 1],
            sendtype: DOUBLE,
            recvcounts: vec![3, 4],
            recvdispls: vec![0, 3],
            recvtype: DOUBLE,
            comm: 2,
        },
        vec![],
    ));
    w.rec("MPI_Alltoallw", 0)
        .i(2)
        .ints(&[1, 2])
        .ints(&[0, 8])
        .hs(&[DOUBLE, INT])
        .ints(&[3, 4])
        .ints(&[0, 24])
        .hs(&[INT, DOUBLE])
        .h(2);
    want.push((
        Args::Alltoallw {
            commsize: 2,
            sendcounts: vec![1, 2],
            senddispls: vec![0, 8],
            sendtypes: vec![DOUBLE, INT],
            recvcounts: vec![3, 4],
            recvdispls: vec![0, 24],
            recvtypes: vec![INT, DOUBLE],
            comm: 2,
        },
        vec![],
    ));
    // Communicators and groups.
    w.rec("MPI_Comm_group", 0).h(2).h(3);
    want.push((Args::CommGroup { comm: 2, group: 3 }, vec![]));
    w.rec("MPI_Comm_dup", 0).h(2).h(4);
    want.push((
        Args::CommDup {
            comm: 2,
            newcomm: 4,
        },
        vec![],
    ));
    w.rec("MPI_Comm_create", 0).h(2).h(3).h(5);
    want.push((
        Args::CommCreate {
            comm: 2,
            group: 3,
            newcomm: 5,
        },
        vec![],
    ));
    w.rec("MPI_Comm_split", 0)
        .h(4)
        .i(UNDEFINED)
        .i(7)
        .h(COMM_NULL);
    want.push((
        Args::CommSplit {
            comm: 4,
            color: UNDEFINED,
            key: 7,
            newcomm: COMM_NULL,
        },
        vec![],
    ));
    w.rec("MPI_Comm_free", 0).h(4);
    want.push((Args::CommFree { comm: 4 }, vec![]));
    w.rec("MPI_Comm_compare", 0).h(2).h(5).u8(2);
    want.push((
        Args::CommCompare {
            comm1: 2,
            comm2: 5,
            result: 2,
        },
        vec![],
    ));
    w.rec("MPI_Comm_size", 0).h(5).i(4);
    want.push((Args::CommQuery { comm: 5, value: 4 }, vec![]));
    for (name, op) in [
        ("MPI_Group_union", SetOp::Union),
        ("MPI_Group_intersection", SetOp::Intersection),
        ("MPI_Group_difference", SetOp::Difference),
    ] {
        w.rec(name, 0).h(3).h(4).h(5);
        want.push((
            Args::GroupAlgebra {
                op,
                group1: 3,
                group2: 4,
                newgroup: 5,
            },
            vec![],
        ));
    }
    w.rec("MPI_Group_incl", 0).h(3).i(2).ints(&[3, 1]).h(6);
    want.push((
        Args::GroupIncl {
            group: 3,
            ranks: vec![3, 1],
            newgroup: 6,
        },
        vec![],
    ));
    w.rec("MPI_Group_excl", 0).h(3).i(1).ints(&[0]).h(7);
    want.push((
        Args::GroupExcl {
            group: 3,
            ranks: vec![0],
            newgroup: 7,
        },
        vec![],
    ));
    for name in ["MPI_Group_range_incl", "MPI_Group_range_excl"] {
        w.rec(name, 0)
            .h(3)
            .i(2)
            .i(2)
            .ints(&[0, 6, 2])
            .ints(&[7, 5, -1])
            .h(8);
        let (group, ranges, newgroup) = (3, vec![[0, 6, 2], [7, 5, -1]], 8);
        want.push((
            if name == "MPI_Group_range_incl" {
                Args::GroupRangeIncl {
                    group,
                    ranges,
                    newgroup,
                }
            } else {
                Args::GroupRangeExcl {
                    group,
                    ranges,
                    newgroup,
                }
            },
            vec![],
        ));
    }
    w.rec("MPI_Group_size", 0).h(8).i(6);
    want.push((Args::GroupQuery { group: 8, value: 6 }, vec![]));
    w.rec("MPI_Group_rank", 0).h(8).i(UNDEFINED);
    want.push((
        Args::GroupQuery {
            group: 8,
            value: UNDEFINED,
        },
        vec![],
    ));
    w.rec("MPI_Group_translate_ranks", 0)
        .h(3)
        .i(2)
        .ints(&[0, 1])
        .h(6)
        .ints(&[UNDEFINED, 1]);
    want.push((
        Args::GroupTranslateRanks {
            group1: 3,
            ranks1: vec![0, 1],
            group2: 6,
            ranks2: vec![UNDEFINED, 1],
        },
        vec![],
    ));
    w.rec("MPI_Group_compare", 0).h(3).h(6).u8(4);
    want.push((
        Args::GroupCompare {
            group1: 3,
            group2: 6,
            result: 4,
        },
        vec![],
    ));
    w.rec("MPI_Group_free", 0).h(6);
    want.push((Args::GroupFree { group: 6 }, vec![]));
    w.rec("MPI_Cart_create", 0)
        .h(2)
        .i(2)
        .ints(&[2, 3])
        .ints(&[1, 0])
        .i(0)
        .h(9);
    want.push((
        Args::CartCreate {
            comm: 2,
            dims: vec![2, 3],
            periods: vec![1, 0],
            reorder: 0,
            newcomm: 9,
        },
        vec![],
    ));
    w.rec("MPI_Cart_sub", 0).i(2).h(9).ints(&[0, 1]).h(10);
    want.push((
        Args::CartSub {
            comm: 9,
            remain_dims: vec![0, 1],
            newcomm: 10,
        },
        vec![],
    ));
    w.rec("MPI_Graph_create", 0)
        .i(3)
        .h(2)
        .i(3)
        .ints(&[1, 2, 3])
        .ints(&[1, 2, 0])
        .i(0)
        .h(11);
    want.push((
        Args::GraphCreate {
            comm: 2,
            nodes: 3,
            index: vec![1, 2, 3],
            edges: vec![1, 2, 0],
            reorder: 0,
            newcomm: 11,
        },
        vec![],
    ));
    w.rec("MPI_Intercomm_create", 0)
        .h(5)
        .i(0)
        .h(2)
        .i(3)
        .i(99)
        .h(12);
    want.push((
        Args::Intercomm {
            comm: Some(5),
            newcomm: 12,
        },
        vec![],
    ));
    w.rec("MPI_Intercomm_merge", 0).h(12).i(1).h(13);
    want.push((
        Args::Intercomm {
            comm: Some(12),
            newcomm: 13,
        },
        vec![],
    ));
    w.rec("MPI_Comm_remote_group", 0).h(12).h(9);
    want.push((
        Args::ForeignGroup {
            owner: 12,
            group: 9,
        },
        vec![],
    ));
    // Comm_spawn: the command and its arguments only at the root.
    w.rec("MPI_Comm_spawn", 0)
        .i(0)
        .i(0)
        .h(2)
        .h(14)
        .text("worker")
        .texts(&["-n", "3"])
        .i(2)
        .h(0)
        .ints(&[0, 0]);
    want.push((
        Args::Intercomm {
            comm: Some(2),
            newcomm: 14,
        },
        vec![],
    ));
    w.rec("MPI_Comm_spawn", 0).i(1).i(0).h(2).h(14);
    want.push((
        Args::Intercomm {
            comm: Some(2),
            newcomm: 14,
        },
        vec![],
    ));
    w.rec("MPI_Init_thread", 0)
        .i(2)
        .text("./a.out")
        .text("-v")
        .u8(3)
        .u8(2);
    want.push((
        Args::InitThread {
            argv: vec!["./a.out".into(), "-v".into()],
            required: 3,
            provided: 2,
        },
        vec![],
    ));
    // Bookkeeping, passed with its values.
    w.rec("MPI_Type_contiguous", 0).i(4).h(DOUBLE).h(28);
    want.push((
        nt(
            "MPI_Type_contiguous",
            vec![Int(4), Handle(DOUBLE), Handle(28)],
        ),
        vec![],
    ));
    w.rec("MPI_Type_vector", 0).i(3).i(2).i(5).h(DOUBLE).h(29);
    want.push((
        nt(
            "MPI_Type_vector",
            vec![Int(3), Int(2), Int(5), Handle(DOUBLE), Handle(29)],
        ),
        vec![],
    ));
    w.rec("MPI_Type_indexed", 0)
        .i(2)
        .ints(&[1, 2])
        .ints(&[0, 4])
        .h(INT)
        .h(30);
    want.push((
        nt(
            "MPI_Type_indexed",
            vec![
                Int(2),
                Ints(vec![1, 2]),
                Ints(vec![0, 4]),
                Handle(INT),
                Handle(30),
            ],
        ),
        vec![],
    ));
    // Type_struct's displacements were one int before 0.6.9.
    w.rec("MPI_Type_struct", 0).i(2).ints(&[1, 1]);
    let disp = if version >= [0, 6, 9] {
        w.ints(&[0, 8]);
        Ints(vec![0, 8])
    } else {
        w.i(0);
        Int(0)
    };
    w.hs(&[INT, DOUBLE]).h(31);
    want.push((
        nt(
            "MPI_Type_struct",
            vec![
                Int(2),
                Ints(vec![1, 1]),
                disp,
                Handles(vec![INT, DOUBLE]),
                Handle(31),
            ],
        ),
        vec![],
    ));
    w.rec("MPI_Type_commit", 0).h(31);
    want.push((nt("MPI_Type_commit", vec![Handle(31)]), vec![]));
    w.rec("MPI_Type_free", 0).h(31);
    want.push((nt("MPI_Type_free", vec![Handle(31)]), vec![]));
    w.rec("MPI_Op_create", 0).i(1).u8(15);
    want.push((nt("MPI_Op_create", vec![Int(1), Byte(15)]), vec![]));
    w.rec("MPI_Op_free", 0).u8(15);
    want.push((nt("MPI_Op_free", vec![Byte(15)]), vec![]));
    // Get_count holds its status first.
    w.rec("MPI_Get_count", 0x03).st(&s1).h(DOUBLE).i(89);
    want.push((
        nt("MPI_Get_count", vec![Handle(DOUBLE), Int(89)]),
        tagless(&s1),
    ));
    w.rec("MPI_Wtime", 0x0c);
    want.push((nt("MPI_Wtime", vec![]), vec![]));
    w.rec("MPI_Get_processor_name", 0).text("node07").i(6);
    want.push((
        nt(
            "MPI_Get_processor_name",
            vec![Text("node07".into()), Int(6)],
        ),
        vec![],
    ));
    w.rec("MPI_Errhandler_set", 0).h(2).h(1);
    want.push((nt("MPI_Errhandler_set", vec![Handle(2), Handle(1)]), vec![]));
    w.rec("MPI_Initialized", 0).i(1);
    want.push((nt("MPI_Initialized", vec![Int(1)]), vec![]));
    w.rec("MPI_Attr_get", 0).h(2).i(0).i(1);
    want.push((nt("MPI_Attr_get", vec![Handle(2), Int(0), Int(1)]), vec![]));
    // Cart_get's coordinates were one int before 0.6.8.
    w.rec("MPI_Cart_get", 0)
        .i(2)
        .h(9)
        .i(2)
        .ints(&[2, 3])
        .ints(&[1, 0]);
    let coords = if version >= [0, 6, 8] {
        w.ints(&[1, 2]);
        Ints(vec![1, 2])
    } else {
        w.i(1);
        Int(1)
    };
    want.push((
        nt(
            "MPI_Cart_get",
            vec![
                Int(2),
                Handle(9),
                Int(2),
                Ints(vec![2, 3]),
                Ints(vec![1, 0]),
                coords,
            ],
        ),
        vec![],
    ));
    w.rec("MPI_Type_create_darray", 0)
        .i(4)
        .i(1)
        .i(2)
        .ints(&[8, 8])
        .i(2)
        .u8(1)
        .u8(2)
        .ints(&[0, 0])
        .ints(&[2, 2])
        .u8(1)
        .h(DOUBLE)
        .h(32);
    want.push((
        nt(
            "MPI_Type_create_darray",
            vec![
                Int(4),
                Int(1),
                Int(2),
                Ints(vec![8, 8]),
                Bytes(vec![1, 2]),
                Ints(vec![0, 0]),
                Ints(vec![2, 2]),
                Byte(1),
                Handle(DOUBLE),
                Handle(32),
            ],
        ),
        vec![],
    ));
    w.rec("MPI_Function_enter", 0x08).l(0x4000_1234);
    want.push((nt("MPI_Function_enter", vec![Long(0x4000_1234)]), vec![]));
    w.rec("MPI_Abort", 0).h(2).i(3);
    want.push((nt("MPI_Abort", vec![Handle(2), Int(3)]), vec![]));
    // One-sided and MPI-IO: decoded, marked unmodelled.
    w.rec("MPI_Put", 0)
        .i(4)
        .h(DOUBLE)
        .i(1)
        .i(0)
        .i(4)
        .h(DOUBLE)
        .h(1);
    want.push((
        Args::Unmodelled {
            name: "MPI_Put",
            fields: vec![
                Int(4),
                Handle(DOUBLE),
                Int(1),
                Int(0),
                Int(4),
                Handle(DOUBLE),
                Handle(1),
            ],
        },
        vec![],
    ));
    w.rec("MPI_File_write_at", 0x03)
        .h(1)
        .l(1 << 40)
        .i(10)
        .h(INT)
        .st(&s1);
    want.push((
        Args::Unmodelled {
            name: "MPI_File_write_at",
            fields: vec![Handle(1), Long(1 << 40), Int(10), Handle(INT)],
        },
        tagless(&s1),
    ));
    w.rec("MPIO_Testany", 0).i(2).ints(&[3, 4]).i(1).i(0);
    want.push((
        Args::Unmodelled {
            name: "MPIO_Testany",
            fields: vec![Int(2), Ints(vec![3, 4]), Int(1), Int(0)],
        },
        vec![],
    ));
    // Init (argc twice before 0.6.2) and Finalize.
    w.rec("MPI_Init", 0).i(2);
    if version < [0, 6, 2] {
        w.i(2);
    }
    w.text("./mpi").text("-x");
    want.push((
        Args::Init {
            argv: vec!["./mpi".into(), "-x".into()],
        },
        vec![],
    ));
    w.rec("MPI_Finalize", 0x4c);
    want.push((Args::None, vec![]));
    (w, want)
}

#[test]
fn every_record_kind_decodes_back_field_by_field() {
    for version in [[1, 1, 0], [0, 6, 9], [0, 6, 8], [0, 6, 2], [0, 6, 1]] {
        let (w, want) = every_kind(version);
        let got = w.decode();
        assert_eq!(got.len(), want.len(), "version {version:?}");
        for ((c, (args, statuses)), offset) in got.iter().zip(&want).zip(&w.offsets) {
            assert_eq!(&c.args, args, "version {version:?}, {}", c.name());
            assert_eq!(&c.statuses, statuses, "version {version:?}, {}", c.name());
            assert_eq!(c.offset, *offset, "{}", c.name());
        }
    }
}

#[test]
fn the_record_prefix_gives_thread_times_and_counters_as_the_mask_says() {
    let (w, _) = every_kind([1, 1, 0]);
    let got = w.decode();
    // The first record was written with mask 0x4f: thread, CPU and wall times, statuses.
    let c = &got[0];
    assert_eq!(c.thread, Some(3));
    let (a, b) = c.wall.unwrap();
    assert_eq!((a.sec, a.nsec, b.sec, b.nsec), (1, 500, 1, 900));
    assert!(c.cpu.is_some() && c.counters.is_empty());
    // PAPI counters are read past, values kept.
    let mut w = Writer::new([1, 1, 0]);
    w.rec("MPI_Barrier", 0x88).h(2);
    w.rec("MPI_Barrier", 0).h(2);
    let got = w.decode();
    assert_eq!(got[0].counters, [(10, 11), (20, 21)]);
    assert_eq!(got[1].args, Args::Barrier { comm: 2 });
    assert_eq!((got[1].thread, got[1].wall), (None, None));
}

#[test]
fn every_dumpi_label_is_named_and_every_call_label_decodes() {
    // A record of each label, arguments all zero (empty arrays, root at rank 0): each
    // call label decodes as itself; the two that are not call records are refused.
    for label in 0..=295u16 {
        let mut w = Writer::new([1, 1, 0]);
        w.raw_rec(label, 0);
        w.records.extend([0u8; 64]);
        let mut f = DumpiFile::from_bytes(w.bytes(), "z.bin").unwrap();
        let r = f.next_call();
        match label {
            128 | 290 | 294.. => {
                let e = r.unwrap_err().to_string();
                let offset = Writer::body_start() + 8;
                assert!(
                    e.contains(&format!("z.bin: byte {offset}: DUMPI label {label}")),
                    "{e}"
                );
                assert!(e.contains("not a call record"), "{e}");
            }
            293 => assert!(r.unwrap().is_none(), "the end of the stream"),
            _ => {
                let c = r.unwrap().unwrap();
                assert_eq!(c.label, label);
                let name = call_name(label).unwrap();
                assert_eq!(c.name(), name);
                assert_eq!(label_of(name), Some(label));
                if let Args::NoTraffic { name: n, .. } | Args::Unmodelled { name: n, .. } = c.args {
                    assert_eq!(n, name);
                }
            }
        }
    }
    assert_eq!(call_name(294), None);
}

#[test]
fn the_classes_tell_what_a_replay_must_model() {
    let (w, _) = every_kind([1, 1, 0]);
    let class = |name: &str| {
        w.decode()
            .into_iter()
            .find(|c| c.name() == name)
            .map(|c| c.args.class())
            .unwrap()
    };
    assert_eq!(class("MPI_Send_init"), CallClass::PointToPoint);
    assert_eq!(class("MPI_Waitsome"), CallClass::Completion);
    assert_eq!(class("MPI_Alltoallw"), CallClass::Collective);
    assert_eq!(class("MPI_Comm_split"), CallClass::Communicator);
    assert_eq!(class("MPI_Type_vector"), CallClass::NoTraffic);
    assert_eq!(class("MPI_Finalize"), CallClass::NoTraffic);
    assert_eq!(class("MPI_Put"), CallClass::Unmodelled);
}

// ---------------------------------------------------------------------------------------
// Damaged files

#[test]
fn absurd_lengths_are_refused_at_their_offset_without_allocating() {
    let body = Writer::body_start() as u64 + 8;
    // A request array of 2^32 - 16 elements.
    let mut w = Writer::new([1, 1, 0]);
    w.rec("MPI_Waitall", 0).i(3).i(-16);
    let e = DumpiFile::from_bytes(w.bytes(), "a.bin")
        .unwrap()
        .next_call()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "a.bin: byte {}: implausible array length 4294967280",
            body + 7
        )),
        "{e}"
    );
    // As many statuses as the rest of the file has bytes.
    let mut w = Writer::new([1, 1, 0]);
    w.rec("MPI_Wait", 0x03).i(2).i(100);
    let e = DumpiFile::from_bytes(w.bytes(), "a.bin")
        .unwrap()
        .next_call()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("byte {}: implausible array length 100", body + 7)),
        "{e}"
    );
    // A billion program arguments.
    let mut w = Writer::new([1, 1, 0]);
    w.rec("MPI_Init", 0).i(1_000_000_000);
    let e = DumpiFile::from_bytes(w.bytes(), "a.bin")
        .unwrap()
        .next_call()
        .unwrap_err()
        .to_string();
    assert!(e.contains("implausible argc 1000000000"), "{e}");
    // A rank range that is not a triple.
    let mut w = Writer::new([1, 1, 0]);
    w.rec("MPI_Group_range_incl", 0)
        .h(3)
        .i(1)
        .i(1)
        .ints(&[0, 1])
        .h(4);
    let e = DumpiFile::from_bytes(w.bytes(), "a.bin")
        .unwrap()
        .next_call()
        .unwrap_err()
        .to_string();
    assert!(e.contains("a rank range of 2 values (3 expected)"), "{e}");
}

#[test]
fn a_record_running_past_the_end_of_the_file_is_a_truncated_record() {
    // Alltoallv's first array (16 ints: 64 of the 66 bytes left) swallows the end label
    // and 62 bytes of the index, leaving 2 bytes where its next length must be.
    let mut w = Writer::new([1, 1, 0]);
    w.rec("MPI_Alltoallv", 0).i(2).i(16);
    let bytes = w.bytes();
    let e = DumpiFile::from_bytes(bytes.clone(), "t.bin")
        .unwrap()
        .next_call()
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!("t.bin: byte {}: truncated record", bytes.len() - 2)
    );
}

#[test]
fn damaged_records_give_errors_with_the_file_and_offset_never_panics() {
    let (w, _) = every_kind([1, 1, 0]);
    let good = w.bytes();
    let first = Writer::body_start() + 8;
    let last = good.len() - 64;
    let run = |bytes: Vec<u8>| {
        if let Ok(mut f) = DumpiFile::from_bytes(bytes, "d.bin") {
            loop {
                match f.next_call() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        let e = e.to_string();
                        assert!(e.starts_with("d.bin: byte "), "{e}");
                        break;
                    }
                }
            }
        }
    };
    for at in first..last {
        for v in [0x00, 0xff, 0x7f] {
            let mut b = good.clone();
            b[at] = v;
            run(b);
        }
        // The records cut at `at`, the index kept.
        let mut b = good[..at].to_vec();
        b.extend(&good[last..]);
        run(b);
    }
}

// ---------------------------------------------------------------------------------------
// Communicators on synthetic calls

/// Every rank's calls, with their byte offsets 100 + 10 × their index.
struct Trace(Vec<Vec<Call>>);

impl Trace {
    fn new(ranks: usize) -> Self {
        Trace((0..ranks).map(|_| Vec::new()).collect())
    }
    /// Appends a call to rank r; returns its index.
    fn on(&mut self, r: usize, name: &str, args: Args) -> usize {
        let v = &mut self.0[r];
        v.push(Call {
            label: label_of(name).unwrap(),
            offset: 100 + 10 * v.len() as u64,
            thread: None,
            cpu: None,
            wall: None,
            counters: Vec::new(),
            statuses: Vec::new(),
            args,
        });
        v.len() - 1
    }
    /// Replaces rank r's call number i (keeping its offset).
    fn set(&mut self, r: usize, i: usize, name: &str, args: Args) {
        let c = &mut self.0[r][i];
        c.label = label_of(name).unwrap();
        c.args = args;
    }
    fn split(&mut self, r: usize, comm: i16, color: i32, key: i32, newcomm: i16) -> usize {
        let args = Args::CommSplit {
            comm,
            color,
            key,
            newcomm,
        };
        self.on(r, "MPI_Comm_split", args)
    }
    fn rank(&mut self, r: usize, comm: i16, value: i32) -> usize {
        self.on(r, "MPI_Comm_rank", Args::CommQuery { comm, value })
    }
    fn size(&mut self, r: usize, comm: i16, value: i32) -> usize {
        self.on(r, "MPI_Comm_size", Args::CommQuery { comm, value })
    }
    fn barrier(&mut self, r: usize, comm: i16) -> usize {
        self.on(r, "MPI_Barrier", Args::Barrier { comm })
    }
    fn group(&mut self, r: usize, comm: i16, group: i16) -> usize {
        self.on(r, "MPI_Comm_group", Args::CommGroup { comm, group })
    }
    fn build(&self) -> routemu::Result<CommTable> {
        CommTable::build(&self.0)
    }
    fn err(&self) -> String {
        self.build().unwrap_err().to_string()
    }
}

#[test]
fn comm_split_orders_by_key_then_old_rank_and_undefined_colours_get_no_communicator() {
    // 6 ranks: colour r % 2, rank 5 undefined; colour 0 keys reverse the order, colour 1
    // keys tie (old rank decides). Handles differ between ranks.
    let mut t = Trace::new(6);
    let handle = |r: usize| 4 + r as i16;
    let mut after = Vec::new();
    for r in 0..6 {
        let (color, key) = match r {
            5 => (UNDEFINED, 0),
            _ if r % 2 == 0 => (0, 10 - r as i32),
            _ => (1, 3),
        };
        let new = if r == 5 { COMM_NULL } else { handle(r) };
        t.split(r, COMM_WORLD, color, key, new);
        if r != 5 {
            let (size, rank) = match r {
                0 => (3, 2),
                2 => (3, 1),
                4 => (3, 0),
                1 => (2, 0),
                _ => (2, 1),
            };
            t.size(r, new, size);
            after.push(t.rank(r, new, rank));
        }
    }
    let tab = t.build().unwrap();
    for r in [0, 2, 4] {
        assert_eq!(
            tab.world_ranks(r as u32, handle(r), after[r]).unwrap(),
            [4, 2, 0]
        );
    }
    for r in [1, 3] {
        assert_eq!(
            tab.world_ranks(r as u32, handle(r), after[r]).unwrap(),
            [1, 3]
        );
    }
    assert_eq!(tab.comm_rank(4, handle(4), after[4]).unwrap(), 0);
    assert_eq!(
        tab.comm_id(0, handle(0), 1).unwrap(),
        tab.comm_id(2, handle(2), 1).unwrap(),
        "one communicator, whatever the handles"
    );
    // Before the split returns its handle names nothing.
    let e = tab.world_ranks(0, handle(0), 0).unwrap_err().to_string();
    assert!(
        e.contains("rank 0: byte 100: communicator handle 4 does not name"),
        "{e}"
    );
    // A recorded result the resolution contradicts is an error at that call.
    let mut bad = Trace(t.0.clone());
    bad.0[1][2].args = Args::CommQuery {
        comm: handle(1),
        value: 1,
    };
    let e = bad.err();
    assert!(
        e.contains("rank 1: byte 120: MPI_Comm_rank recorded rank 1, but the communicator holds world ranks [1, 3]"),
        "{e}"
    );
}

#[test]
fn splits_of_splits_and_duplicates_resolve_over_their_parents() {
    // 4 ranks: split into halves {0,1} {2,3}, then each half split by parity of its
    // rank into singletons; and a dup of world.
    let mut t = Trace::new(4);
    let mut at = Vec::new();
    for r in 0..4 {
        t.split(r, COMM_WORLD, r as i32 / 2, 0, 7);
        t.split(r, 7, 0, -(r as i32), 8); // reverse order within the half
        t.on(
            r,
            "MPI_Comm_dup",
            Args::CommDup {
                comm: 2,
                newcomm: 9,
            },
        );
        t.on(
            r,
            "MPI_Comm_compare",
            Args::CommCompare {
                comm1: 9,
                comm2: 2,
                result: 2, // congruent
            },
        );
        at.push(t.barrier(r, 8));
    }
    let tab = t.build().unwrap();
    assert_eq!(tab.world_ranks(0, 8, at[0]).unwrap(), [1, 0]);
    assert_eq!(tab.world_ranks(3, 8, at[3]).unwrap(), [3, 2]);
    assert_eq!(tab.world_ranks(2, 7, at[2]).unwrap(), [2, 3]);
    assert_eq!(tab.world_ranks(2, 9, at[2]).unwrap(), [0, 1, 2, 3]);
    assert_ne!(
        tab.comm_id(2, 9, at[2]).unwrap(),
        tab.comm_id(2, COMM_WORLD, at[2]).unwrap()
    );
    // Comparing the dup with the world as identical contradicts it.
    let mut bad = Trace(t.0.clone());
    bad.0[0][3].args = Args::CommCompare {
        comm1: 9,
        comm2: 2,
        result: 1,
    };
    assert!(bad.err().contains("MPI_Comm_compare recorded result 1"));
}

#[test]
fn comm_create_takes_its_group_from_incl_excl_and_ranges() {
    // 6 ranks. Group_incl [3, 1] → {3, 1}; Group_excl [0] → 1..6; Group_range_incl
    // (0, 4, 2) and (5, 5, 1) → {0, 2, 4, 5}. Non-members get MPI_COMM_NULL.
    let cases: [(&str, &[u32]); 3] = [
        ("MPI_Group_incl", &[3, 1]),
        ("MPI_Group_excl", &[1, 2, 3, 4, 5]),
        ("MPI_Group_range_incl", &[0, 2, 4, 5]),
    ];
    for (how, members) in cases {
        let mut t = Trace::new(6);
        let mut at = Vec::new();
        for r in 0..6 {
            t.group(r, COMM_WORLD, 3);
            let args = match how {
                "MPI_Group_incl" => Args::GroupIncl {
                    group: 3,
                    ranks: vec![3, 1],
                    newgroup: 4,
                },
                "MPI_Group_excl" => Args::GroupExcl {
                    group: 3,
                    ranks: vec![0],
                    newgroup: 4,
                },
                _ => Args::GroupRangeIncl {
                    group: 3,
                    ranges: vec![[0, 4, 2], [5, 5, 1]],
                    newgroup: 4,
                },
            };
            t.on(r, how, args);
            t.on(
                r,
                "MPI_Group_size",
                Args::GroupQuery {
                    group: 4,
                    value: members.len() as i32,
                },
            );
            let inside = members.contains(&(r as u32));
            t.on(
                r,
                "MPI_Comm_create",
                Args::CommCreate {
                    comm: COMM_WORLD,
                    group: 4,
                    newcomm: if inside { 5 } else { COMM_NULL },
                },
            );
            at.push(t.barrier(r, COMM_WORLD));
        }
        let tab = t.build().unwrap_or_else(|e| panic!("{how}: {e}"));
        for r in 0..6u32 {
            let got = tab.world_ranks(r, 5, at[r as usize]);
            if members.contains(&r) {
                assert_eq!(got.unwrap(), members, "{how}, rank {r}");
            } else {
                assert!(got.is_err(), "{how}: rank {r} is outside");
            }
        }
        // A member that records MPI_COMM_NULL contradicts the other ranks' calls.
        let mut bad = Trace(t.0.clone());
        let m = members[0] as usize;
        if let Args::CommCreate { newcomm, .. } = &mut bad.0[m][3].args {
            *newcomm = COMM_NULL;
        }
        assert!(bad.err().contains("returned MPI_COMM_NULL"), "{how}");
    }
}

#[test]
fn comm_create_with_disjoint_groups_makes_one_communicator_per_group() {
    // MPI 2.2: ranks {0, 1} give group {0, 1}, ranks {2, 3} give {3, 2}.
    let mut t = Trace::new(4);
    let mut at = Vec::new();
    for r in 0..4 {
        t.group(r, COMM_WORLD, 3);
        let ranks = if r < 2 { vec![0, 1] } else { vec![3, 2] };
        t.on(
            r,
            "MPI_Group_incl",
            Args::GroupIncl {
                group: 3,
                ranks,
                newgroup: 4,
            },
        );
        t.on(
            r,
            "MPI_Comm_create",
            Args::CommCreate {
                comm: COMM_WORLD,
                group: 4,
                newcomm: 5,
            },
        );
        at.push(t.rank(r, 5, [0, 1, 1, 0][r]));
    }
    let tab = t.build().unwrap();
    assert_eq!(tab.world_ranks(1, 5, at[1]).unwrap(), [0, 1]);
    assert_eq!(tab.world_ranks(2, 5, at[2]).unwrap(), [3, 2]);
}

#[test]
fn group_set_operations_follow_mpi_order_and_recorded_results_are_checked() {
    // One rank (world of 6): a = {4, 0, 2} (incl), b = {2, 3, 4} (range incl).
    let mut t = Trace::new(6);
    for r in 1..6 {
        t.barrier(r, COMM_WORLD);
    }
    t.group(0, COMM_WORLD, 3);
    t.on(
        0,
        "MPI_Group_incl",
        Args::GroupIncl {
            group: 3,
            ranks: vec![4, 0, 2],
            newgroup: 4,
        },
    );
    t.on(
        0,
        "MPI_Group_range_incl",
        Args::GroupRangeIncl {
            group: 3,
            ranges: vec![[2, 4, 1]],
            newgroup: 5,
        },
    );
    let ops = [
        ("MPI_Group_union", SetOp::Union, 6, vec![4, 0, 2, 3]),
        ("MPI_Group_intersection", SetOp::Intersection, 7, vec![4, 2]),
        ("MPI_Group_difference", SetOp::Difference, 8, vec![0]),
    ];
    for (name, op, newgroup, members) in &ops {
        t.on(
            0,
            name,
            Args::GroupAlgebra {
                op: *op,
                group1: 4,
                group2: 5,
                newgroup: *newgroup,
            },
        );
        t.on(
            0,
            "MPI_Group_size",
            Args::GroupQuery {
                group: *newgroup,
                value: members.len() as i32,
            },
        );
        let me = members
            .iter()
            .position(|&m| m == 0)
            .map_or(UNDEFINED, |p| p as i32);
        t.on(
            0,
            "MPI_Group_rank",
            Args::GroupQuery {
                group: *newgroup,
                value: me,
            },
        );
    }
    // Ranks 0, 1 of the union {4, 0, 2, 3} are ranks 4, 0 of the world group; rank 3
    // (world 3) is not in the difference {0}.
    t.on(
        0,
        "MPI_Group_translate_ranks",
        Args::GroupTranslateRanks {
            group1: 6,
            ranks1: vec![0, 1, 3],
            group2: 3,
            ranks2: vec![4, 0, 3],
        },
    );
    t.on(
        0,
        "MPI_Group_translate_ranks",
        Args::GroupTranslateRanks {
            group1: 6,
            ranks1: vec![3, 1],
            group2: 8,
            ranks2: vec![UNDEFINED, 0],
        },
    );
    t.on(
        0,
        "MPI_Group_compare",
        Args::GroupCompare {
            group1: 6,
            group2: 7,
            result: 4, // unequal
        },
    );
    // The empty group is predefined.
    t.on(
        0,
        "MPI_Group_compare",
        Args::GroupCompare {
            group1: GROUP_EMPTY,
            group2: GROUP_EMPTY,
            result: 1,
        },
    );
    t.build().unwrap();
    for (at, wrong) in [
        (4, Args::GroupQuery { group: 6, value: 3 }),
        (
            t.0[0].len() - 4,
            Args::GroupTranslateRanks {
                group1: 6,
                ranks1: vec![0],
                group2: 3,
                ranks2: vec![0],
            },
        ),
        (
            t.0[0].len() - 2,
            Args::GroupCompare {
                group1: 6,
                group2: 7,
                result: 3,
            },
        ),
    ] {
        let mut bad = Trace(t.0.clone());
        bad.0[0][at].args = wrong;
        let e = bad.err();
        assert!(
            e.contains(&format!("rank 0: byte {}: MPI_Group_", 100 + 10 * at)),
            "{e}"
        );
    }
    // Ranks out of range or named twice are errors.
    for ranks in [vec![6], vec![1, 1], vec![-1]] {
        let mut bad = Trace(t.0.clone());
        bad.0[0][1].args = Args::GroupIncl {
            group: 3,
            ranks,
            newgroup: 4,
        };
        assert!(bad
            .err()
            .contains("rank 0: byte 110: MPI_Group_incl names rank"));
    }
}

#[test]
fn handles_reused_after_a_free_name_the_new_communicator_from_then_on() {
    // Every rank: dup world into handle 4, free it, split by parity into handle 4 again.
    let mut t = Trace::new(4);
    let mut at = Vec::new();
    for r in 0..4 {
        // Calls at bytes 100 (dup), 110, 120 (free), 130 (split), 140.
        t.on(
            r,
            "MPI_Comm_dup",
            Args::CommDup {
                comm: 2,
                newcomm: 4,
            },
        );
        at.push([
            t.barrier(r, 4),
            t.on(r, "MPI_Comm_free", Args::CommFree { comm: 4 }),
            t.split(r, COMM_WORLD, r as i32 % 2, 0, 4),
            t.barrier(r, 4),
        ]);
    }
    let tab = t.build().unwrap();
    assert_eq!(tab.world_ranks(3, 4, at[3][0]).unwrap(), [0, 1, 2, 3]);
    assert_eq!(
        tab.world_ranks(3, 4, at[3][1]).unwrap(),
        [0, 1, 2, 3],
        "still valid at the free"
    );
    let e = tab.world_ranks(3, 4, at[3][2]).unwrap_err().to_string();
    assert!(
        e.contains("byte 130: communicator handle 4 does not name"),
        "{e}"
    );
    assert_eq!(tab.world_ranks(3, 4, at[3][3]).unwrap(), [1, 3]);
    // Using it between the free and the new split is an error naming both places.
    let mut bad = Trace(t.0.clone());
    bad.set(2, at[2][2], "MPI_Barrier", Args::Barrier { comm: 4 });
    assert_eq!(
        bad.err(),
        "rank 2: byte 130: MPI_Barrier on communicator handle 4, freed at byte 120"
    );
}

#[test]
fn a_group_handle_returned_twice_needs_two_frees() {
    // MPI libraries give the same handle for MPI_Comm_group on the same communicator.
    let mut t = Trace::new(2);
    for r in 0..2 {
        t.group(r, COMM_WORLD, 3);
        t.group(r, COMM_WORLD, 3);
        t.on(r, "MPI_Group_free", Args::GroupFree { group: 3 });
        t.on(r, "MPI_Group_size", Args::GroupQuery { group: 3, value: 2 });
        t.on(r, "MPI_Group_free", Args::GroupFree { group: 3 });
    }
    t.build().unwrap();
    t.on(0, "MPI_Group_size", Args::GroupQuery { group: 3, value: 2 });
    let e = t.err();
    assert!(
        e.contains("rank 0: byte 150: MPI_Group_size on group handle 3, freed at byte 140"),
        "{e}"
    );
}

#[test]
fn an_unknown_communicator_is_an_error_naming_the_file_and_offset_of_its_use() {
    let mut t = Trace::new(2);
    t.barrier(0, COMM_WORLD);
    t.on(
        0,
        "MPI_Send",
        Args::Send {
            count: 1,
            datatype: INT,
            dest: 1,
            tag: 0,
            comm: 9,
            request: None,
        },
    );
    let e = t.err();
    assert_eq!(
        e,
        "rank 0: byte 110: MPI_Send on communicator handle 9, which this rank never created"
    );
    // Through files, the file's name.
    let dir = tempfile::tempdir().unwrap();
    for r in 0..2 {
        let mut w = Writer::new([1, 1, 0]);
        w.rec("MPI_Barrier", 0).h(2);
        if r == 1 {
            w.rec("MPI_Alltoall", 0).i(1).h(INT).i(1).h(INT).h(6);
        }
        std::fs::write(dir.path().join(format!("u-{r:04}.bin")), w.bytes()).unwrap();
    }
    std::fs::write(dir.path().join("u.meta"), "numprocs=2\nfileprefix=u\n").unwrap();
    let e = CommTable::load(&dir.path().join("u.meta"))
        .unwrap_err()
        .to_string();
    let offset = Writer::body_start() + 8 + 5;
    assert!(
        e.ends_with(&format!(
            "u-0001.bin: byte {offset}: MPI_Alltoall on communicator handle 6, which this \
             rank never created"
        )),
        "{e}"
    );
    // MPI_COMM_NULL is no communicator either.
    let mut t = Trace::new(1);
    t.barrier(0, COMM_NULL);
    assert!(t.err().contains("MPI_Barrier on MPI_COMM_NULL"));
}

#[test]
fn a_constructor_some_member_never_calls_leaves_its_communicator_unresolved() {
    // Rank 2's trace stops before the split: ranks 0 and 1 still build, and asking for
    // their new communicator says why it is unknown.
    let mut t = Trace::new(3);
    let mut at = Vec::new();
    for r in 0..2 {
        t.split(r, COMM_WORLD, 0, 0, 4);
        at.push(t.barrier(r, 4));
    }
    t.barrier(2, COMM_WORLD);
    let tab = t.build().unwrap();
    let e = tab.world_ranks(1, 4, at[1]).unwrap_err().to_string();
    assert!(
        e.contains("rank 1: byte 110: communicator handle 4: made by MPI_Comm_split at byte 100 of rank 0, which world rank(s) 2 of its parent never call"),
        "{e}"
    );
    assert_eq!(tab.world_ranks(1, COMM_WORLD, 0).unwrap(), [0, 1, 2]);
}

#[test]
fn mismatched_constructors_across_ranks_are_errors() {
    let mut t = Trace::new(2);
    t.split(0, COMM_WORLD, 0, 0, 4);
    t.on(
        1,
        "MPI_Comm_dup",
        Args::CommDup {
            comm: 2,
            newcomm: 4,
        },
    );
    let e = t.err();
    assert!(
        e.contains("MPI_Comm_dup is this rank's call") && e.contains("calls MPI_Comm_split"),
        "{e}"
    );
}

#[test]
fn cartesian_grids_and_their_subgrids_resolve_in_row_major_order() {
    // 7 ranks, a 2 × 3 grid: rank 6 is outside it. Rows keep dimension 1, columns 0.
    let mut t = Trace::new(7);
    let mut at = Vec::new();
    for r in 0..7 {
        let inside = r < 6;
        t.on(
            r,
            "MPI_Cart_create",
            Args::CartCreate {
                comm: COMM_WORLD,
                dims: vec![2, 3],
                periods: vec![0, 0],
                reorder: 0,
                newcomm: if inside { 4 } else { COMM_NULL },
            },
        );
        if !inside {
            continue;
        }
        t.on(
            r,
            "MPI_Cart_sub",
            Args::CartSub {
                comm: 4,
                remain_dims: vec![0, 1],
                newcomm: 5,
            },
        );
        t.on(
            r,
            "MPI_Cart_sub",
            Args::CartSub {
                comm: 4,
                remain_dims: vec![1, 0],
                newcomm: 6,
            },
        );
        t.on(
            r,
            "MPI_Comm_dup",
            Args::CommDup {
                comm: 4,
                newcomm: 7,
            },
        );
        t.on(
            r,
            "MPI_Cart_sub",
            Args::CartSub {
                comm: 7,
                remain_dims: vec![0, 0],
                newcomm: 8,
            },
        );
        at.push(t.barrier(r, 5));
    }
    let tab = t.build().unwrap();
    assert_eq!(tab.world_ranks(4, 4, at[4]).unwrap(), [0, 1, 2, 3, 4, 5]);
    assert_eq!(tab.world_ranks(4, 5, at[4]).unwrap(), [3, 4, 5]);
    assert_eq!(tab.world_ranks(4, 6, at[4]).unwrap(), [1, 4]);
    assert_eq!(
        tab.world_ranks(4, 8, at[4]).unwrap(),
        [4],
        "a 0-d grid: itself"
    );
    // A graph of 2 nodes over the world: ranks 0 and 1.
    let mut g = Trace::new(3);
    for r in 0..3 {
        g.on(
            r,
            "MPI_Graph_create",
            Args::GraphCreate {
                comm: COMM_WORLD,
                nodes: 2,
                index: vec![1, 2],
                edges: vec![1, 0],
                reorder: 0,
                newcomm: if r < 2 { 4 } else { COMM_NULL },
            },
        );
        g.barrier(r, COMM_WORLD);
    }
    assert_eq!(g.build().unwrap().world_ranks(1, 4, 1).unwrap(), [0, 1]);
}

#[test]
fn intercommunicators_are_named_as_unresolved_when_asked_for() {
    let mut t = Trace::new(2);
    for r in 0..2 {
        t.on(
            r,
            "MPI_Intercomm_create",
            Args::Intercomm {
                comm: Some(COMM_SELF),
                newcomm: 4,
            },
        );
        t.on(
            r,
            "MPI_Comm_dup",
            Args::CommDup {
                comm: 4,
                newcomm: 5,
            },
        );
        t.barrier(r, 5);
    }
    let tab = t.build().unwrap();
    let e = tab.world_ranks(0, 4, 1).unwrap_err().to_string();
    assert!(
        e.contains(
            "rank 0: byte 110: communicator handle 4: an intercommunicator or made from one \
             (MPI_Intercomm_create at byte 100 of rank 0), which routemu does not resolve"
        ),
        "{e}"
    );
    let e = tab.world_ranks(0, 5, 2).unwrap_err().to_string();
    assert!(
        e.contains(
            "communicator handle 5: made by MPI_Comm_dup (byte 110 of rank 0) from an \
             unresolved communicator: an intercommunicator"
        ),
        "{e}"
    );
}

#[test]
fn the_replay_passes_testbgps_communicator_calls_and_refuses_its_collectives_on_request() {
    // mpi_semantics::matching passes Comm_group, Group_incl and Comm_create; asked to refuse
    // collectives, it stops at the first Barrier.
    use routemu::experiments::traces::{open_with, OpenOptions};
    use routemu::mpi_semantics::matching::Collectives;
    let meta = traces().join("testbgp.meta");
    let calls = decode_all(&traces().join("testbgp-0000.bin"));
    let at = |name: &str| calls.iter().find(|c| c.name() == name).unwrap().offset;
    let refuse = OpenOptions {
        collectives: Collectives::Refuse,
        ..OpenOptions::default()
    };
    let e = open_with(&meta, &refuse).err().unwrap().to_string();
    assert!(
        e.contains(&format!(
            "testbgp-0000.bin: byte {}: unsupported MPI call MPI_Barrier",
            at("MPI_Barrier")
        )),
        "{e}"
    );
    assert!(open_with(&meta, &OpenOptions::default()).is_ok());
}

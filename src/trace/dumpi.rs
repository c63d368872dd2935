//! SST DUMPI rank files (`PREFIX-NNNN.bin`; ../shared/traces/FORMATS.md §3 and
//! docs/dumpi.md): the call records of one MPI rank, big-endian, with an index of
//! sections in the last 64 bytes.
//!
//! Records carry no length, so a record can only be passed by decoding its arguments.
//! This module therefore knows the layout of every record sst-dumpi writes (labels 0–289
//! and the function entry/exit records 291–292; layouts as its writer lays them out,
//! including the fields written only at a collective's root and the layouts of files
//! older than 0.6.9), and returns each call as [`Args`]:
//!
//! - typed variants for what a network replay and the communicator resolver
//!   ([`crate::mpi_semantics::comm`]) need: point-to-point calls, persistent requests and every way of
//!   completing a request, all collectives DUMPI records, communicator, group and
//!   topology constructors;
//! - [`Args::NoTraffic`] with the decoded values for bookkeeping calls (datatypes, ops,
//!   attributes, error handlers, Wtime, Get_processor_name, …);
//! - [`Args::Unmodelled`] with the decoded values for calls that do move data but that
//!   routemu does not model: one-sided communication (MPI_Put, MPI_Win_fence, …) and
//!   MPI-IO (MPI_File_*, MPIO_*).
//!
//! A label that is not a record (290, the end-of-functions sentinel; 128, MPI_Pcontrol,
//! which DUMPI records as function entry/exit records instead) or not a DUMPI label at
//! all is an error naming it and its byte offset. DUMPI has no label for the
//! non-blocking collectives of MPI-3 (MPI_Ibarrier, …), MPI_Reduce_scatter_block,
//! MPI_Comm_split_type or neighbourhood collectives: sst-dumpi does not record them.
//!
//! Not here: which world ranks a communicator holds ([`crate::mpi_semantics::comm`]); turning the calls
//! of all ranks into messages ([`crate::mpi_semantics::matching`]).

use crate::foundation::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A time as DUMPI stores it, bias added: seconds and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    /// Seconds.
    pub sec: u64,
    /// Nanoseconds.
    pub nsec: u32,
}

/// One recorded MPI_Status: (bytes, source, cancelled, error, tag). The tag is 0 in files
/// older than DUMPI 0.6.3, which did not store it.
pub type Status = (i32, i32, u8, u8, i32);

/// A value of a record decoded only to be passed ([`Args::NoTraffic`],
/// [`Args::Unmodelled`]), in the order the record holds them. Statuses are not fields:
/// they go to [`Call::statuses`] wherever the record holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// A 32-bit integer (int, count, rank, tag, request, address).
    Int(i32),
    /// A 16-bit handle (communicator, datatype, group, info, file, window, error handler,
    /// attribute key).
    Handle(i16),
    /// An 8-bit code (operation, comparison, combiner, thread level, file mode, …).
    Byte(u8),
    /// A 64-bit integer (file offsets and sizes, function addresses).
    Long(i64),
    /// An array of 32-bit integers.
    Ints(Vec<i32>),
    /// An array of 16-bit handles.
    Handles(Vec<i16>),
    /// An array of 8-bit codes.
    Bytes(Vec<u8>),
    /// A character array (trailing NULs removed).
    Text(String),
    /// An array of character arrays.
    Texts(Vec<String>),
    /// An array of arrays of character arrays (MPI_Comm_spawn_multiple's argvs).
    TextLists(Vec<Vec<String>>),
    /// An array of integer arrays.
    IntRows(Vec<Vec<i32>>),
}

/// The set operation of MPI_Group_union, _intersection and _difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    /// The first group's members, then the second's that are not in the first.
    Union,
    /// The first group's members that are in the second, in the first's order.
    Intersection,
    /// The first group's members that are not in the second, in the first's order.
    Difference,
}

/// What a call is, for a replay deciding what to do with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallClass {
    /// Starts a point-to-point transfer or looks for one (sends, receives, persistent
    /// requests and MPI_Start, probes).
    PointToPoint,
    /// Completes, tests, cancels or frees requests.
    Completion,
    /// A collective operation with data or synchronisation (not communicator creation).
    Collective,
    /// Creates, queries, compares or frees communicators and groups.
    Communicator,
    /// Moves no data between ranks: Init, Finalize and the bookkeeping calls.
    NoTraffic,
    /// Moves data routemu does not model (one-sided communication, MPI-IO).
    Unmodelled,
}

/// The arguments of a decoded call. Handles (communicators, datatypes, groups, requests)
/// are DUMPI's per-rank indices: MPI_COMM_NULL 1, MPI_COMM_WORLD 2, MPI_COMM_SELF 3,
/// MPI_GROUP_NULL 1, MPI_GROUP_EMPTY 2, MPI_REQUEST_NULL 1; datatypes index the file's
/// size table ([`DumpiFile::type_sizes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Args {
    /// Send, Bsend, Ssend, Rsend; Isend, Ibsend, Issend, Irsend (with a request).
    Send {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Destination rank.
        dest: i32,
        /// Tag.
        tag: i32,
        /// Communicator.
        comm: i16,
        /// Request (non-blocking sends).
        request: Option<i32>,
    },
    /// Recv (statuses follow) and Irecv (with a request).
    Recv {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Source rank (−1: any).
        source: i32,
        /// Tag (−1: any).
        tag: i32,
        /// Communicator.
        comm: i16,
        /// Request (Irecv).
        request: Option<i32>,
    },
    /// Sendrecv (separate buffers and types) and Sendrecv_replace (one buffer: the
    /// receive's count and type are the send's): a send and a receive, both complete
    /// when the call returns (statuses follow).
    SendRecv {
        /// Elements sent.
        sendcount: i32,
        /// Their datatype index.
        sendtype: i16,
        /// Destination rank.
        dest: i32,
        /// Send tag.
        sendtag: i32,
        /// Elements received.
        recvcount: i32,
        /// Their datatype index.
        recvtype: i16,
        /// Source rank (−1: any).
        source: i32,
        /// Receive tag (−1: any).
        recvtag: i32,
        /// Communicator.
        comm: i16,
    },
    /// Send_init, Bsend_init, Ssend_init, Rsend_init: a persistent send request; nothing
    /// moves until MPI_Start names the request.
    SendInit {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Destination rank.
        dest: i32,
        /// Tag.
        tag: i32,
        /// Communicator.
        comm: i16,
        /// The persistent request.
        request: i32,
    },
    /// Recv_init: a persistent receive request, started by MPI_Start.
    RecvInit {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Source rank (−1: any).
        source: i32,
        /// Tag (−1: any).
        tag: i32,
        /// Communicator.
        comm: i16,
        /// The persistent request.
        request: i32,
    },
    /// Start (one request) and Startall: persistent requests started.
    Start {
        /// Requests.
        requests: Vec<i32>,
    },
    /// Probe (blocking, flag None) and Iprobe (flag: 1 if a message was there); a status
    /// follows.
    Probe {
        /// Source rank (−1: any).
        source: i32,
        /// Tag (−1: any).
        tag: i32,
        /// Communicator.
        comm: i16,
        /// Iprobe's flag.
        flag: Option<i32>,
    },
    /// Wait and Waitall: the requests waited for.
    Wait {
        /// Requests.
        requests: Vec<i32>,
    },
    /// Waitany: one of the requests completed (a status follows).
    WaitAny {
        /// Requests.
        requests: Vec<i32>,
        /// Index of the request that completed (negative: MPI_UNDEFINED, none active).
        index: i32,
    },
    /// Waitsome: some of the requests completed (their statuses follow).
    WaitSome {
        /// Requests.
        requests: Vec<i32>,
        /// How many completed (negative: MPI_UNDEFINED, none active).
        outcount: i32,
        /// Indices of those that completed.
        indices: Vec<i32>,
    },
    /// Test: whether the request completed (a status follows).
    Test {
        /// The request.
        request: i32,
        /// 1 if it completed.
        flag: i32,
    },
    /// Testany (a status follows).
    TestAny {
        /// Requests.
        requests: Vec<i32>,
        /// Index of the request that completed, if `flag`.
        index: i32,
        /// 1 if one completed.
        flag: i32,
    },
    /// Testall (statuses follow).
    TestAll {
        /// Requests.
        requests: Vec<i32>,
        /// 1 if all completed.
        flag: i32,
    },
    /// Testsome (statuses follow).
    TestSome {
        /// Requests.
        requests: Vec<i32>,
        /// How many completed (negative: MPI_UNDEFINED).
        outcount: i32,
        /// Indices of those that completed.
        indices: Vec<i32>,
    },
    /// Cancel.
    Cancel {
        /// The request.
        request: i32,
    },
    /// Request_free.
    RequestFree {
        /// The request.
        request: i32,
    },
    /// Barrier.
    Barrier {
        /// Communicator.
        comm: i16,
    },
    /// Bcast.
    Bcast {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Root (rank in `comm`).
        root: i32,
        /// Communicator.
        comm: i16,
    },
    /// Reduce.
    Reduce {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Operation.
        op: u8,
        /// Root (rank in `comm`).
        root: i32,
        /// Communicator.
        comm: i16,
    },
    /// Allreduce.
    Allreduce {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Operation.
        op: u8,
        /// Communicator.
        comm: i16,
    },
    /// Scan (inclusive prefix reduction).
    Scan {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Operation.
        op: u8,
        /// Communicator.
        comm: i16,
    },
    /// Exscan (exclusive prefix reduction).
    Exscan {
        /// Elements.
        count: i32,
        /// Datatype index.
        datatype: i16,
        /// Operation.
        op: u8,
        /// Communicator.
        comm: i16,
    },
    /// Reduce_scatter.
    ReduceScatter {
        /// Size of `comm` as the rank saw it.
        commsize: i32,
        /// Elements each rank receives.
        recvcounts: Vec<i32>,
        /// Datatype index.
        datatype: i16,
        /// Operation.
        op: u8,
        /// Communicator.
        comm: i16,
    },
    /// Gather. DUMPI records the receive side only at the root.
    Gather {
        /// This rank's rank in `comm`.
        commrank: i32,
        /// Elements sent.
        sendcount: i32,
        /// Their datatype index.
        sendtype: i16,
        /// Root (rank in `comm`).
        root: i32,
        /// Communicator.
        comm: i16,
        /// Elements received from each rank (root only).
        recvcount: Option<i32>,
        /// Their datatype index (root only).
        recvtype: Option<i16>,
    },
    /// Gatherv. DUMPI records the counts and displacements only at the root, the receive
    /// type everywhere.
    Gatherv {
        /// This rank's rank in `comm`.
        commrank: i32,
        /// Size of `comm`.
        commsize: i32,
        /// Elements sent.
        sendcount: i32,
        /// Their datatype index.
        sendtype: i16,
        /// Root (rank in `comm`).
        root: i32,
        /// Communicator.
        comm: i16,
        /// Elements received from each rank (root only).
        recvcounts: Option<Vec<i32>>,
        /// Their displacements (root only).
        displs: Option<Vec<i32>>,
        /// Receive datatype index.
        recvtype: i16,
    },
    /// Scatter. DUMPI records the send side only at the root.
    Scatter {
        /// This rank's rank in `comm`.
        commrank: i32,
        /// Elements received.
        recvcount: i32,
        /// Their datatype index.
        recvtype: i16,
        /// Root (rank in `comm`).
        root: i32,
        /// Communicator.
        comm: i16,
        /// Elements sent to each rank (root only).
        sendcount: Option<i32>,
        /// Their datatype index (root only).
        sendtype: Option<i16>,
    },
    /// Scatterv. DUMPI records the counts and displacements only at the root.
    Scatterv {
        /// This rank's rank in `comm`.
        commrank: i32,
        /// Size of `comm`.
        commsize: i32,
        /// Send datatype index.
        sendtype: i16,
        /// Elements received.
        recvcount: i32,
        /// Their datatype index.
        recvtype: i16,
        /// Root (rank in `comm`).
        root: i32,
        /// Communicator.
        comm: i16,
        /// Elements sent to each rank (root only).
        sendcounts: Option<Vec<i32>>,
        /// Their displacements (root only).
        displs: Option<Vec<i32>>,
    },
    /// Allgather.
    Allgather {
        /// Elements sent.
        sendcount: i32,
        /// Their datatype index.
        sendtype: i16,
        /// Elements received from each rank.
        recvcount: i32,
        /// Their datatype index.
        recvtype: i16,
        /// Communicator.
        comm: i16,
    },
    /// Allgatherv.
    Allgatherv {
        /// Size of `comm`.
        commsize: i32,
        /// Elements sent.
        sendcount: i32,
        /// Their datatype index.
        sendtype: i16,
        /// Elements received from each rank.
        recvcounts: Vec<i32>,
        /// Their displacements.
        displs: Vec<i32>,
        /// Receive datatype index.
        recvtype: i16,
        /// Communicator.
        comm: i16,
    },
    /// Alltoall.
    Alltoall {
        /// Elements sent to each rank.
        sendcount: i32,
        /// Their datatype index.
        sendtype: i16,
        /// Elements received from each rank.
        recvcount: i32,
        /// Their datatype index.
        recvtype: i16,
        /// Communicator.
        comm: i16,
    },
    /// Alltoallv.
    Alltoallv {
        /// Size of `comm`.
        commsize: i32,
        /// Elements sent to each rank.
        sendcounts: Vec<i32>,
        /// Their displacements.
        senddispls: Vec<i32>,
        /// Send datatype index.
        sendtype: i16,
        /// Elements received from each rank.
        recvcounts: Vec<i32>,
        /// Their displacements.
        recvdispls: Vec<i32>,
        /// Receive datatype index.
        recvtype: i16,
        /// Communicator.
        comm: i16,
    },
    /// Alltoallw: a datatype per peer.
    Alltoallw {
        /// Size of `comm`.
        commsize: i32,
        /// Elements sent to each rank.
        sendcounts: Vec<i32>,
        /// Their displacements (bytes).
        senddispls: Vec<i32>,
        /// Their datatype indices.
        sendtypes: Vec<i16>,
        /// Elements received from each rank.
        recvcounts: Vec<i32>,
        /// Their displacements (bytes).
        recvdispls: Vec<i32>,
        /// Their datatype indices.
        recvtypes: Vec<i16>,
        /// Communicator.
        comm: i16,
    },
    /// Init: the program's arguments.
    Init {
        /// argv.
        argv: Vec<String>,
    },
    /// Init_thread.
    InitThread {
        /// argv.
        argv: Vec<String>,
        /// Thread level asked for (DUMPI code: 1 single … 4 multiple).
        required: u8,
        /// Thread level granted.
        provided: u8,
    },
    /// Comm_rank and Comm_size.
    CommQuery {
        /// Communicator.
        comm: i16,
        /// The rank or size returned.
        value: i32,
    },
    /// Comm_group: the group of a communicator.
    CommGroup {
        /// Communicator.
        comm: i16,
        /// The group handle returned.
        group: i16,
    },
    /// Comm_dup (collective over `comm`).
    CommDup {
        /// The communicator duplicated.
        comm: i16,
        /// The new communicator.
        newcomm: i16,
    },
    /// Comm_create (collective over `comm`): a communicator of `group`'s members.
    CommCreate {
        /// The parent communicator.
        comm: i16,
        /// The group of the new communicator.
        group: i16,
        /// The new communicator (MPI_COMM_NULL, 1, on ranks outside `group`).
        newcomm: i16,
    },
    /// Comm_split (collective over `comm`).
    CommSplit {
        /// The parent communicator.
        comm: i16,
        /// Colour (negative: MPI_UNDEFINED, no new communicator).
        color: i32,
        /// Key ordering the ranks of one colour (ties: rank in `comm`).
        key: i32,
        /// The new communicator (MPI_COMM_NULL, 1, for MPI_UNDEFINED).
        newcomm: i16,
    },
    /// Comm_free.
    CommFree {
        /// The communicator freed.
        comm: i16,
    },
    /// Comm_compare.
    CommCompare {
        /// First communicator.
        comm1: i16,
        /// Second communicator.
        comm2: i16,
        /// DUMPI comparison: 1 ident, 2 congruent, 3 similar, 4 unequal.
        result: u8,
    },
    /// Cart_create (collective over `comm`).
    CartCreate {
        /// The parent communicator.
        comm: i16,
        /// Extent of each dimension.
        dims: Vec<i32>,
        /// Whether each dimension wraps around.
        periods: Vec<i32>,
        /// Whether MPI may renumber the ranks.
        reorder: i32,
        /// The new communicator (MPI_COMM_NULL on ranks beyond the grid).
        newcomm: i16,
    },
    /// Cart_sub (collective over the Cartesian `comm`).
    CartSub {
        /// The Cartesian communicator.
        comm: i16,
        /// Per dimension, 1 if it is kept in the new communicator.
        remain_dims: Vec<i32>,
        /// The new communicator.
        newcomm: i16,
    },
    /// Graph_create (collective over `comm`).
    GraphCreate {
        /// The parent communicator.
        comm: i16,
        /// Nodes of the graph.
        nodes: i32,
        /// Cumulative neighbour counts.
        index: Vec<i32>,
        /// Neighbours.
        edges: Vec<i32>,
        /// Whether MPI may renumber the ranks.
        reorder: i32,
        /// The new communicator (MPI_COMM_NULL on ranks beyond the graph).
        newcomm: i16,
    },
    /// A call that makes an intercommunicator, or an intracommunicator from one:
    /// Intercomm_create, Intercomm_merge, Comm_accept, Comm_connect, Comm_spawn,
    /// Comm_spawn_multiple, Comm_join, Comm_get_parent.
    Intercomm {
        /// The communicator it is made over, when there is one.
        comm: Option<i16>,
        /// The communicator returned.
        newcomm: i16,
    },
    /// Group_size and Group_rank.
    GroupQuery {
        /// Group.
        group: i16,
        /// The size or rank returned (rank: negative for MPI_UNDEFINED).
        value: i32,
    },
    /// Group_compare.
    GroupCompare {
        /// First group.
        group1: i16,
        /// Second group.
        group2: i16,
        /// DUMPI comparison: 1 ident, 3 similar, 4 unequal.
        result: u8,
    },
    /// Group_translate_ranks.
    GroupTranslateRanks {
        /// The group the ranks are in.
        group1: i16,
        /// Ranks in `group1`.
        ranks1: Vec<i32>,
        /// The group they are translated to.
        group2: i16,
        /// The same processes' ranks in `group2` (negative: not there).
        ranks2: Vec<i32>,
    },
    /// Group_union, Group_intersection, Group_difference.
    GroupAlgebra {
        /// Which.
        op: SetOp,
        /// First group.
        group1: i16,
        /// Second group.
        group2: i16,
        /// The group made.
        newgroup: i16,
    },
    /// Group_incl: the members of `group` at `ranks`, in that order.
    GroupIncl {
        /// Group.
        group: i16,
        /// Ranks in `group`.
        ranks: Vec<i32>,
        /// The group made.
        newgroup: i16,
    },
    /// Group_excl: the members of `group` not at `ranks`, in `group`'s order.
    GroupExcl {
        /// Group.
        group: i16,
        /// Ranks in `group`.
        ranks: Vec<i32>,
        /// The group made.
        newgroup: i16,
    },
    /// Group_range_incl: ranges (first, last, stride) of `group`'s ranks, in order.
    GroupRangeIncl {
        /// Group.
        group: i16,
        /// (first, last, stride) triples.
        ranges: Vec<[i32; 3]>,
        /// The group made.
        newgroup: i16,
    },
    /// Group_range_excl: `group` without the ranks of the ranges.
    GroupRangeExcl {
        /// Group.
        group: i16,
        /// (first, last, stride) triples.
        ranges: Vec<[i32; 3]>,
        /// The group made.
        newgroup: i16,
    },
    /// Group_free.
    GroupFree {
        /// Group.
        group: i16,
    },
    /// A group whose members the trace cannot tell: Comm_remote_group (of an
    /// intercommunicator), Win_get_group, File_get_group.
    ForeignGroup {
        /// The communicator, window or file it belongs to.
        owner: i16,
        /// The group handle returned.
        group: i16,
    },
    /// A bookkeeping call (no data between ranks), decoded only to be passed.
    NoTraffic {
        /// MPI name.
        name: &'static str,
        /// Its recorded values in record order.
        fields: Vec<Field>,
    },
    /// One-sided communication or MPI-IO: data moves, but routemu does not model it.
    Unmodelled {
        /// MPI name.
        name: &'static str,
        /// Its recorded values in record order.
        fields: Vec<Field>,
    },
    /// Finalize.
    None,
}

impl Args {
    /// What kind of call this is.
    pub fn class(&self) -> CallClass {
        use Args::*;
        match self {
            Send { .. }
            | Recv { .. }
            | SendRecv { .. }
            | SendInit { .. }
            | RecvInit { .. }
            | Start { .. }
            | Probe { .. } => CallClass::PointToPoint,
            Wait { .. }
            | WaitAny { .. }
            | WaitSome { .. }
            | Test { .. }
            | TestAny { .. }
            | TestAll { .. }
            | TestSome { .. }
            | Cancel { .. }
            | RequestFree { .. } => CallClass::Completion,
            Barrier { .. }
            | Bcast { .. }
            | Reduce { .. }
            | Allreduce { .. }
            | Scan { .. }
            | Exscan { .. }
            | ReduceScatter { .. }
            | Gather { .. }
            | Gatherv { .. }
            | Scatter { .. }
            | Scatterv { .. }
            | Allgather { .. }
            | Allgatherv { .. }
            | Alltoall { .. }
            | Alltoallv { .. }
            | Alltoallw { .. } => CallClass::Collective,
            CommQuery { .. }
            | CommGroup { .. }
            | CommDup { .. }
            | CommCreate { .. }
            | CommSplit { .. }
            | CommFree { .. }
            | CommCompare { .. }
            | CartCreate { .. }
            | CartSub { .. }
            | GraphCreate { .. }
            | Intercomm { .. }
            | GroupQuery { .. }
            | GroupCompare { .. }
            | GroupTranslateRanks { .. }
            | GroupAlgebra { .. }
            | GroupIncl { .. }
            | GroupExcl { .. }
            | GroupRangeIncl { .. }
            | GroupRangeExcl { .. }
            | GroupFree { .. }
            | ForeignGroup { .. } => CallClass::Communicator,
            Init { .. } | InitThread { .. } | NoTraffic { .. } | None => CallClass::NoTraffic,
            Unmodelled { .. } => CallClass::Unmodelled,
        }
    }

    /// The communicator the call acts on (the parent, for constructors), when it names
    /// one as a typed argument. Comm_compare names two: see its variant.
    pub fn comm(&self) -> Option<i16> {
        use Args::*;
        match *self {
            Send { comm, .. }
            | Recv { comm, .. }
            | SendRecv { comm, .. }
            | SendInit { comm, .. }
            | RecvInit { comm, .. }
            | Probe { comm, .. }
            | Barrier { comm }
            | Bcast { comm, .. }
            | Reduce { comm, .. }
            | Allreduce { comm, .. }
            | Scan { comm, .. }
            | Exscan { comm, .. }
            | ReduceScatter { comm, .. }
            | Gather { comm, .. }
            | Gatherv { comm, .. }
            | Scatter { comm, .. }
            | Scatterv { comm, .. }
            | Allgather { comm, .. }
            | Allgatherv { comm, .. }
            | Alltoall { comm, .. }
            | Alltoallv { comm, .. }
            | Alltoallw { comm, .. }
            | CommQuery { comm, .. }
            | CommGroup { comm, .. }
            | CommDup { comm, .. }
            | CommCreate { comm, .. }
            | CommSplit { comm, .. }
            | CommFree { comm }
            | CartCreate { comm, .. }
            | CartSub { comm, .. }
            | GraphCreate { comm, .. } => Some(comm),
            Intercomm { comm, .. } => comm,
            _ => Option::None,
        }
    }
}

/// One decoded call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// DUMPI function label.
    pub label: u16,
    /// Byte offset of the record in the file.
    pub offset: u64,
    /// Thread id, when recorded.
    pub thread: Option<u16>,
    /// CPU time entering and returning.
    pub cpu: Option<(Stamp, Stamp)>,
    /// Wall time entering and returning.
    pub wall: Option<(Stamp, Stamp)>,
    /// PAPI counter values (entering, returning), when recorded; their names are in the
    /// file's perflbl section, which routemu does not read.
    pub counters: Vec<(u64, u64)>,
    /// Statuses recorded: (bytes, source, cancelled, error, tag).
    pub statuses: Vec<Status>,
    /// The arguments.
    pub args: Args,
}

impl Call {
    /// The call's MPI name ("MPI_Send"; "unknown" for a label DUMPI does not define,
    /// which a decoded call never has).
    pub fn name(&self) -> &'static str {
        call_name(self.label).unwrap_or("unknown")
    }
}

/// How a record's arguments are decoded.
#[derive(Clone, Copy)]
enum Layout {
    /// Decoded into a typed [`Args`] variant by `DumpiFile::typed`.
    T,
    /// Bookkeeping: [`Args::NoTraffic`] with the fields the layout string gives.
    N(&'static str),
    /// One-sided or MPI-IO: [`Args::Unmodelled`], likewise.
    U(&'static str),
    /// Not a call record.
    X,
}
use Layout::{N, T, U, X};

/// Every DUMPI label (sst-dumpi `common/funclabels.h`): its MPI name and layout.
///
/// Layout strings, one letter per value in record order: `i` i32, `h` i16 handle, `b` u8
/// code, `l` i64; `I` i32 array, `H` i16 array, `B` u8 array (each a u32 length, then the
/// elements); `s` character array (u32 length, bytes), `S` array of those (u32 count
/// first), `T` array of `S`; `R` array of i32 arrays; `t` statuses (present only when the
/// record's mask says so).
const LABELS: [(&str, Layout); 294] = [
    ("MPI_Send", T),                               // 0
    ("MPI_Recv", T),                               // 1
    ("MPI_Get_count", N("thi")),                   // 2
    ("MPI_Bsend", T),                              // 3
    ("MPI_Ssend", T),                              // 4
    ("MPI_Rsend", T),                              // 5
    ("MPI_Buffer_attach", N("i")),                 // 6
    ("MPI_Buffer_detach", N("i")),                 // 7
    ("MPI_Isend", T),                              // 8
    ("MPI_Ibsend", T),                             // 9
    ("MPI_Issend", T),                             // 10
    ("MPI_Irsend", T),                             // 11
    ("MPI_Irecv", T),                              // 12
    ("MPI_Wait", T),                               // 13
    ("MPI_Test", T),                               // 14
    ("MPI_Request_free", T),                       // 15
    ("MPI_Waitany", T),                            // 16
    ("MPI_Testany", T),                            // 17
    ("MPI_Waitall", T),                            // 18
    ("MPI_Testall", T),                            // 19
    ("MPI_Waitsome", T),                           // 20
    ("MPI_Testsome", T),                           // 21
    ("MPI_Iprobe", T),                             // 22
    ("MPI_Probe", T),                              // 23
    ("MPI_Cancel", T),                             // 24
    ("MPI_Test_cancelled", N("ti")),               // 25
    ("MPI_Send_init", T),                          // 26
    ("MPI_Bsend_init", T),                         // 27
    ("MPI_Ssend_init", T),                         // 28
    ("MPI_Rsend_init", T),                         // 29
    ("MPI_Recv_init", T),                          // 30
    ("MPI_Start", T),                              // 31
    ("MPI_Startall", T),                           // 32
    ("MPI_Sendrecv", T),                           // 33
    ("MPI_Sendrecv_replace", T),                   // 34
    ("MPI_Type_contiguous", N("ihh")),             // 35
    ("MPI_Type_vector", N("iiihh")),               // 36
    ("MPI_Type_hvector", N("iiihh")),              // 37
    ("MPI_Type_indexed", N("iIIhh")),              // 38
    ("MPI_Type_hindexed", N("iIIhh")),             // 39
    ("MPI_Type_struct", N("iIIHh")),               // 40 (before 0.6.9: "iIiHh")
    ("MPI_Address", N("i")),                       // 41
    ("MPI_Type_extent", N("hi")),                  // 42
    ("MPI_Type_size", N("hi")),                    // 43
    ("MPI_Type_lb", N("hi")),                      // 44
    ("MPI_Type_ub", N("hi")),                      // 45
    ("MPI_Type_commit", N("h")),                   // 46
    ("MPI_Type_free", N("h")),                     // 47
    ("MPI_Get_elements", N("thi")),                // 48
    ("MPI_Pack", N("ihiiih")),                     // 49
    ("MPI_Unpack", N("iiiihh")),                   // 50
    ("MPI_Pack_size", N("ihhi")),                  // 51
    ("MPI_Barrier", T),                            // 52
    ("MPI_Bcast", T),                              // 53
    ("MPI_Gather", T),                             // 54
    ("MPI_Gatherv", T),                            // 55
    ("MPI_Scatter", T),                            // 56
    ("MPI_Scatterv", T),                           // 57
    ("MPI_Allgather", T),                          // 58
    ("MPI_Allgatherv", T),                         // 59
    ("MPI_Alltoall", T),                           // 60
    ("MPI_Alltoallv", T),                          // 61
    ("MPI_Reduce", T),                             // 62
    ("MPI_Op_create", N("ib")),                    // 63
    ("MPI_Op_free", N("b")),                       // 64
    ("MPI_Allreduce", T),                          // 65
    ("MPI_Reduce_scatter", T),                     // 66
    ("MPI_Scan", T),                               // 67
    ("MPI_Group_size", T),                         // 68
    ("MPI_Group_rank", T),                         // 69
    ("MPI_Group_translate_ranks", T),              // 70
    ("MPI_Group_compare", T),                      // 71
    ("MPI_Comm_group", T),                         // 72
    ("MPI_Group_union", T),                        // 73
    ("MPI_Group_intersection", T),                 // 74
    ("MPI_Group_difference", T),                   // 75
    ("MPI_Group_incl", T),                         // 76
    ("MPI_Group_excl", T),                         // 77
    ("MPI_Group_range_incl", T),                   // 78
    ("MPI_Group_range_excl", T),                   // 79
    ("MPI_Group_free", T),                         // 80
    ("MPI_Comm_size", T),                          // 81
    ("MPI_Comm_rank", T),                          // 82
    ("MPI_Comm_compare", T),                       // 83
    ("MPI_Comm_dup", T),                           // 84
    ("MPI_Comm_create", T),                        // 85
    ("MPI_Comm_split", T),                         // 86
    ("MPI_Comm_free", T),                          // 87
    ("MPI_Comm_test_inter", N("hi")),              // 88
    ("MPI_Comm_remote_size", N("hi")),             // 89
    ("MPI_Comm_remote_group", T),                  // 90
    ("MPI_Intercomm_create", T),                   // 91
    ("MPI_Intercomm_merge", T),                    // 92
    ("MPI_Keyval_create", N("h")),                 // 93
    ("MPI_Keyval_free", N("h")),                   // 94
    ("MPI_Attr_put", N("hi")),                     // 95
    ("MPI_Attr_get", N("hii")),                    // 96
    ("MPI_Attr_delete", N("hi")),                  // 97
    ("MPI_Topo_test", N("hb")),                    // 98
    ("MPI_Cart_create", T),                        // 99
    ("MPI_Dims_create", N("iiII")),                // 100
    ("MPI_Graph_create", T),                       // 101
    ("MPI_Graphdims_get", N("hii")),               // 102
    ("MPI_Graph_get", N("iihiiII")),               // 103
    ("MPI_Cartdim_get", N("hi")),                  // 104
    ("MPI_Cart_get", N("ihiIII")),                 // 105 (before 0.6.8: "ihiIIi")
    ("MPI_Cart_rank", N("ihIi")),                  // 106
    ("MPI_Cart_coords", N("ihiiI")),               // 107
    ("MPI_Graph_neighbors_count", N("hii")),       // 108
    ("MPI_Graph_neighbors", N("ihiiI")),           // 109
    ("MPI_Cart_shift", N("hiiii")),                // 110
    ("MPI_Cart_sub", T),                           // 111
    ("MPI_Cart_map", N("hiIIi")),                  // 112
    ("MPI_Graph_map", N("ihiIIi")),                // 113
    ("MPI_Get_processor_name", N("si")),           // 114
    ("MPI_Get_version", N("ii")),                  // 115
    ("MPI_Errhandler_create", N("h")),             // 116
    ("MPI_Errhandler_set", N("hh")),               // 117
    ("MPI_Errhandler_get", N("hh")),               // 118
    ("MPI_Errhandler_free", N("h")),               // 119
    ("MPI_Error_string", N("isi")),                // 120
    ("MPI_Error_class", N("ii")),                  // 121
    ("MPI_Wtime", N("")),                          // 122
    ("MPI_Wtick", N("")),                          // 123
    ("MPI_Init", T),                               // 124
    ("MPI_Finalize", T),                           // 125
    ("MPI_Initialized", N("i")),                   // 126
    ("MPI_Abort", N("hi")),                        // 127
    ("MPI_Pcontrol", X),                           // 128 (recorded as labels 291/292)
    ("MPI_Close_port", N("s")),                    // 129
    ("MPI_Comm_accept", T),                        // 130
    ("MPI_Comm_connect", T),                       // 131
    ("MPI_Comm_disconnect", N("h")),               // 132
    ("MPI_Comm_get_parent", T),                    // 133
    ("MPI_Comm_join", T),                          // 134
    ("MPI_Comm_spawn", T),                         // 135
    ("MPI_Comm_spawn_multiple", T),                // 136
    ("MPI_Lookup_name", N("shs")),                 // 137
    ("MPI_Open_port", N("hs")),                    // 138
    ("MPI_Publish_name", N("shs")),                // 139
    ("MPI_Unpublish_name", N("shs")),              // 140
    ("MPI_Accumulate", U("ihiiihbh")),             // 141
    ("MPI_Get", U("ihiiihh")),                     // 142
    ("MPI_Put", U("ihiiihh")),                     // 143
    ("MPI_Win_complete", U("h")),                  // 144
    ("MPI_Win_create", U("iihhh")),                // 145
    ("MPI_Win_fence", U("bh")),                    // 146
    ("MPI_Win_free", U("h")),                      // 147
    ("MPI_Win_get_group", T),                      // 148
    ("MPI_Win_lock", U("bibh")),                   // 149
    ("MPI_Win_post", U("hbh")),                    // 150
    ("MPI_Win_start", U("hbh")),                   // 151
    ("MPI_Win_test", U("hi")),                     // 152
    ("MPI_Win_unlock", U("ih")),                   // 153
    ("MPI_Win_wait", U("h")),                      // 154
    ("MPI_Alltoallw", T),                          // 155
    ("MPI_Exscan", T),                             // 156
    ("MPI_Add_error_class", N("i")),               // 157
    ("MPI_Add_error_code", N("ii")),               // 158
    ("MPI_Add_error_string", N("is")),             // 159
    ("MPI_Comm_call_errhandler", N("hi")),         // 160
    ("MPI_Comm_create_keyval", N("h")),            // 161
    ("MPI_Comm_delete_attr", N("hh")),             // 162
    ("MPI_Comm_free_keyval", N("h")),              // 163
    ("MPI_Comm_get_attr", N("hhi")),               // 164
    ("MPI_Comm_get_name", N("hsi")),               // 165
    ("MPI_Comm_set_attr", N("hh")),                // 166
    ("MPI_Comm_set_name", N("hs")),                // 167
    ("MPI_File_call_errhandler", N("hi")),         // 168
    ("MPI_Grequest_complete", N("i")),             // 169
    ("MPI_Grequest_start", N("i")),                // 170
    ("MPI_Init_thread", T),                        // 171
    ("MPI_Is_thread_main", N("i")),                // 172
    ("MPI_Query_thread", N("b")),                  // 173
    ("MPI_Status_set_cancelled", N("ti")),         // 174
    ("MPI_Status_set_elements", N("thi")),         // 175
    ("MPI_Type_create_keyval", N("h")),            // 176
    ("MPI_Type_delete_attr", N("hh")),             // 177
    ("MPI_Type_dup", N("hh")),                     // 178
    ("MPI_Type_free_keyval", N("h")),              // 179
    ("MPI_Type_get_attr", N("hhi")),               // 180
    ("MPI_Type_get_contents", N("iiihiiiIIH")),    // 181
    ("MPI_Type_get_envelope", N("hiiib")),         // 182
    ("MPI_Type_get_name", N("hsi")),               // 183
    ("MPI_Type_set_attr", N("hh")),                // 184
    ("MPI_Type_set_name", N("hs")),                // 185
    ("MPI_Type_match_size", N("bih")),             // 186
    ("MPI_Win_call_errhandler", N("hi")),          // 187
    ("MPI_Win_create_keyval", N("h")),             // 188
    ("MPI_Win_delete_attr", N("hh")),              // 189
    ("MPI_Win_free_keyval", N("h")),               // 190
    ("MPI_Win_get_attr", N("hhi")),                // 191
    ("MPI_Win_get_name", N("hsi")),                // 192
    ("MPI_Win_set_attr", N("hh")),                 // 193
    ("MPI_Win_set_name", N("hs")),                 // 194
    ("MPI_Alloc_mem", N("ih")),                    // 195
    ("MPI_Comm_create_errhandler", N("h")),        // 196
    ("MPI_Comm_get_errhandler", N("hh")),          // 197
    ("MPI_Comm_set_errhandler", N("hh")),          // 198
    ("MPI_File_create_errhandler", N("h")),        // 199
    ("MPI_File_get_errhandler", N("hh")),          // 200
    ("MPI_File_set_errhandler", N("hh")),          // 201
    ("MPI_Finalized", N("i")),                     // 202
    ("MPI_Free_mem", N("")),                       // 203
    ("MPI_Get_address", N("i")),                   // 204
    ("MPI_Info_create", N("h")),                   // 205
    ("MPI_Info_delete", N("hs")),                  // 206
    ("MPI_Info_dup", N("hh")),                     // 207
    ("MPI_Info_free", N("h")),                     // 208
    ("MPI_Info_get", N("hsisi")),                  // 209
    ("MPI_Info_get_nkeys", N("hi")),               // 210
    ("MPI_Info_get_nthkey", N("his")),             // 211
    ("MPI_Info_get_valuelen", N("hsii")),          // 212
    ("MPI_Info_set", N("hss")),                    // 213
    ("MPI_Pack_external", N("sihiii")),            // 214
    ("MPI_Pack_external_size", N("sihi")),         // 215
    ("MPI_Request_get_status", N("iit")),          // 216
    ("MPI_Type_create_darray", N("iiiIBIIbhh")),   // 217
    ("MPI_Type_create_hindexed", N("iIIhh")),      // 218
    ("MPI_Type_create_hvector", N("iiihh")),       // 219
    ("MPI_Type_create_indexed_block", N("iiIhh")), // 220
    ("MPI_Type_create_resized", N("hiih")),        // 221
    ("MPI_Type_create_struct", N("iIIHh")),        // 222
    ("MPI_Type_create_subarray", N("iIIIbhh")),    // 223
    ("MPI_Type_get_extent", N("hii")),             // 224
    ("MPI_Type_get_true_extent", N("hii")),        // 225
    ("MPI_Unpack_external", N("siiiih")),          // 226
    ("MPI_Win_create_errhandler", N("h")),         // 227
    ("MPI_Win_get_errhandler", N("hh")),           // 228
    ("MPI_Win_set_errhandler", N("hh")),           // 229
    ("MPI_File_open", U("hsbhh")),                 // 230
    ("MPI_File_close", U("h")),                    // 231
    ("MPI_File_delete", U("sh")),                  // 232
    ("MPI_File_set_size", U("hl")),                // 233
    ("MPI_File_preallocate", U("hl")),             // 234
    ("MPI_File_get_size", U("hl")),                // 235
    ("MPI_File_get_group", T),                     // 236
    ("MPI_File_get_amode", U("hb")),               // 237
    ("MPI_File_set_info", U("hh")),                // 238
    ("MPI_File_get_info", U("hh")),                // 239
    ("MPI_File_set_view", U("hlhhsh")),            // 240
    ("MPI_File_get_view", U("hlhhs")),             // 241
    ("MPI_File_read_at", U("hliht")),              // 242
    ("MPI_File_read_at_all", U("hliht")),          // 243
    ("MPI_File_write_at", U("hliht")),             // 244
    ("MPI_File_write_at_all", U("hliht")),         // 245
    ("MPI_File_iread_at", U("hlihi")),             // 246
    ("MPI_File_iwrite_at", U("hlihi")),            // 247
    ("MPI_File_read", U("hiht")),                  // 248
    ("MPI_File_read_all", U("hiht")),              // 249
    ("MPI_File_write", U("hiht")),                 // 250
    ("MPI_File_write_all", U("hiht")),             // 251
    ("MPI_File_iread", U("hihi")),                 // 252
    ("MPI_File_iwrite", U("hihi")),                // 253
    ("MPI_File_seek", U("hlb")),                   // 254
    ("MPI_File_get_position", U("hl")),            // 255
    ("MPI_File_get_byte_offset", U("hll")),        // 256
    ("MPI_File_read_shared", U("hiht")),           // 257
    ("MPI_File_write_shared", U("hiht")),          // 258
    ("MPI_File_iread_shared", U("hihi")),          // 259
    ("MPI_File_iwrite_shared", U("hihi")),         // 260
    ("MPI_File_read_ordered", U("hiht")),          // 261
    ("MPI_File_write_ordered", U("hiht")),         // 262
    ("MPI_File_seek_shared", U("hlb")),            // 263
    ("MPI_File_get_position_shared", U("hl")),     // 264
    ("MPI_File_read_at_all_begin", U("hlih")),     // 265
    ("MPI_File_read_at_all_end", U("ht")),         // 266
    ("MPI_File_write_at_all_begin", U("hlih")),    // 267
    ("MPI_File_write_at_all_end", U("ht")),        // 268
    ("MPI_File_read_all_begin", U("hih")),         // 269
    ("MPI_File_read_all_end", U("ht")),            // 270
    ("MPI_File_write_all_begin", U("hih")),        // 271
    ("MPI_File_write_all_end", U("ht")),           // 272
    ("MPI_File_read_ordered_begin", U("hih")),     // 273
    ("MPI_File_read_ordered_end", U("ht")),        // 274
    ("MPI_File_write_ordered_begin", U("hih")),    // 275
    ("MPI_File_write_ordered_end", U("ht")),       // 276
    ("MPI_File_get_type_extent", U("hhi")),        // 277
    ("MPI_Register_datarep", U("s")),              // 278
    ("MPI_File_set_atomicity", U("hi")),           // 279
    ("MPI_File_get_atomicity", U("hi")),           // 280
    ("MPI_File_sync", U("h")),                     // 281
    ("MPIO_Test", U("iit")),                       // 282
    ("MPIO_Wait", U("it")),                        // 283
    ("MPIO_Testall", U("iIit")),                   // 284
    ("MPIO_Waitall", U("iIt")),                    // 285
    ("MPIO_Testany", U("iIiit")),                  // 286 (flag before index)
    ("MPIO_Waitany", U("iIit")),                   // 287
    ("MPIO_Waitsome", U("iIiIt")),                 // 288
    ("MPIO_Testsome", U("iIiIt")),                 // 289
    ("MPI_ALL_FUNCTIONS", X),                      // 290
    ("MPI_Function_enter", N("l")),                // 291
    ("MPI_Function_exit", N("l")),                 // 292
    ("MPI_END_OF_STREAM", X),                      // 293
];

/// The MPI name of a DUMPI function label (every label sst-dumpi defines).
pub fn call_name(label: u16) -> Option<&'static str> {
    LABELS.get(label as usize).map(|l| l.0)
}

/// The DUMPI label of an MPI name ("MPI_Send" → 0), the inverse of [`call_name`].
pub fn label_of(name: &str) -> Option<u16> {
    LABELS.iter().position(|l| l.0 == name).map(|i| i as u16)
}

/// The first (and index) bytes of a DUMPI file.
pub const MAGIC: [u8; 8] = [0xff, 0xaa, 0xdd, b'D', b'U', b'M', b'P', b'I'];
const END_OF_STREAM: u16 = 293;

/// A DUMPI rank file, read whole (rank files are small: one rank's calls).
#[derive(Debug)]
pub struct DumpiFile {
    bytes: Vec<u8>,
    path: String,
    at: usize,
    /// Byte size of each datatype index (from the file).
    pub type_sizes: Vec<u32>,
    /// Format version (major, minor, sub).
    pub version: (u8, u8, u8),
    cpu_bias: u64,
    wall_bias: u64,
    done: bool,
}

impl DumpiFile {
    /// Opens `path` and reads its index, header and datatype sizes.
    pub fn open(path: &Path) -> Result<Self> {
        let bytes = crate::foundation::inputs::read(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_bytes(bytes, &path.display().to_string())
    }

    /// Reads a rank file already in memory; `name` stands for the file in errors.
    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> Result<Self> {
        let mut f = DumpiFile {
            bytes,
            path: name.to_string(),
            at: 0,
            type_sizes: Vec::new(),
            version: (0, 0, 0),
            cpu_bias: 0,
            wall_bias: 0,
            done: false,
        };
        if f.bytes.len() < 72 || f.bytes[..8] != MAGIC {
            return Err(f.err(0, "not a DUMPI file (bad magic number)"));
        }
        let idx = f.bytes.len() - 64;
        if f.bytes[idx..idx + 8] != MAGIC {
            return Err(f.err(
                idx as u64,
                "no section index at the end (truncated, or older than DUMPI 0.6.6)",
            ));
        }
        let field = |i: usize| {
            u64::from_be_bytes(
                f.bytes[idx + 8 * i..idx + 8 * i + 8]
                    .try_into()
                    .expect("8 bytes"),
            ) as usize
        };
        let (sizelbl, header, body) = (field(1), field(4), field(5));
        for s in [sizelbl, header, body] {
            if s == 0 || s >= idx {
                return Err(f.err(
                    idx as u64,
                    "a section offset in the index lies outside the file",
                ));
            }
        }
        f.at = header;
        f.version = (f.u8()?, f.u8()?, f.u8()?);
        f.at = sizelbl;
        let n = f.u32()? as usize;
        if n > 4096 {
            return Err(f.err(sizelbl as u64, "implausible number of datatypes"));
        }
        f.type_sizes = (0..n).map(|_| f.u32()).collect::<Result<_>>()?;
        f.at = body;
        f.cpu_bias = f.u32()? as u64;
        f.wall_bias = f.u32()? as u64;
        Ok(f)
    }

    /// The file's name, as errors give it.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn err(&self, offset: u64, what: &str) -> Error {
        Error::Trace(format!("{}: byte {offset}: {what}", self.path))
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if n > self.bytes.len() - self.at {
            return Err(self.err(self.at as u64, "truncated record"));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn i16(&mut self) -> Result<i16> {
        Ok(self.u16()? as i16)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(self.u32()? as i32)
    }
    fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn stamps(&mut self, bias: u64) -> Result<(Stamp, Stamp)> {
        let one = |f: &mut Self| -> Result<Stamp> {
            let sec = f.u16()? as u64 + bias;
            Ok(Stamp {
                sec,
                nsec: f.u32()?,
            })
        };
        Ok((one(self)?, one(self)?))
    }

    /// A u32 element count, refused when `count × least` bytes (the least its elements
    /// can take) would run past the end of the file: a corrupted length must not make
    /// the reader allocate or loop without bound.
    fn count(&mut self, least: usize) -> Result<usize> {
        let at = self.at as u64;
        let n = self.u32()? as usize;
        if n.saturating_mul(least) > self.bytes.len() - self.at {
            return Err(self.err(at, &format!("implausible array length {n}")));
        }
        Ok(n)
    }
    fn array(&mut self) -> Result<Vec<i32>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.i32()).collect()
    }
    fn handles(&mut self) -> Result<Vec<i16>> {
        let n = self.count(2)?;
        (0..n).map(|_| self.i16()).collect()
    }
    fn codes(&mut self) -> Result<Vec<u8>> {
        let n = self.count(1)?;
        Ok(self.take(n)?.to_vec())
    }
    fn text(&mut self) -> Result<String> {
        let n = self.count(1)?;
        let s = self.take(n)?;
        Ok(String::from_utf8_lossy(s)
            .trim_end_matches('\0')
            .to_string())
    }
    fn texts(&mut self) -> Result<Vec<String>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.text()).collect()
    }
    fn text_lists(&mut self) -> Result<Vec<Vec<String>>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.texts()).collect()
    }
    fn rows(&mut self) -> Result<Vec<Vec<i32>>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.array()).collect()
    }
    /// Group_range_incl/excl's (first, last, stride) triples.
    fn ranges(&mut self) -> Result<Vec<[i32; 3]>> {
        let at = self.at as u64;
        self.rows()?
            .into_iter()
            .map(|r| {
                <[i32; 3]>::try_from(r.as_slice()).map_err(|_| {
                    self.err(
                        at,
                        &format!("a rank range of {} values (3 expected)", r.len()),
                    )
                })
            })
            .collect()
    }
    /// A request array after its count argument (Waitall and kin record both).
    fn requests(&mut self) -> Result<Vec<i32>> {
        let _count = self.i32()?;
        self.array()
    }
    /// Statuses, where the record holds them; present only when the mask says so.
    fn statuses(&mut self, mask: u8, out: &mut Vec<Status>) -> Result<()> {
        if mask & 0x03 == 0 {
            return Ok(());
        }
        let tagged = self.version >= (0, 6, 3);
        let n = self.count(if tagged { 14 } else { 10 })?;
        for _ in 0..n {
            let bytes = self.i32()?;
            let source = self.i32()?;
            let cancelled = self.u8()?;
            let error = self.u8()?;
            let tag = if tagged { self.i32()? } else { 0 };
            out.push((bytes, source, cancelled, error, tag));
        }
        Ok(())
    }
    /// argc, then argc character arrays (MPI_Init, MPI_Init_thread).
    fn argv(&mut self, label: u16) -> Result<Vec<String>> {
        let argc = self.i32()?.max(0) as usize;
        // Before 0.6.2 MPI_Init wrote the argument count twice.
        if label == 124 && self.version < (0, 6, 2) {
            self.i32()?;
        }
        if argc.saturating_mul(4) > self.bytes.len() - self.at {
            return Err(self.err(self.at as u64, &format!("implausible argc {argc}")));
        }
        (0..argc).map(|_| self.text()).collect()
    }

    /// The values of a record decoded by layout string (see [`LABELS`]).
    fn fields(&mut self, layout: &str, mask: u8, st: &mut Vec<Status>) -> Result<Vec<Field>> {
        let mut v = Vec::with_capacity(layout.len());
        for c in layout.bytes() {
            v.push(match c {
                b'i' => Field::Int(self.i32()?),
                b'h' => Field::Handle(self.i16()?),
                b'b' => Field::Byte(self.u8()?),
                b'l' => Field::Long(self.i64()?),
                b'I' => Field::Ints(self.array()?),
                b'H' => Field::Handles(self.handles()?),
                b'B' => Field::Bytes(self.codes()?),
                b's' => Field::Text(self.text()?),
                b'S' => Field::Texts(self.texts()?),
                b'T' => Field::TextLists(self.text_lists()?),
                b'R' => Field::IntRows(self.rows()?),
                b't' => {
                    self.statuses(mask, st)?;
                    continue;
                }
                _ => unreachable!("layout strings use the letters above"),
            });
        }
        Ok(v)
    }

    /// The next call, None at the end of the stream.
    pub fn next_call(&mut self) -> Result<Option<Call>> {
        if self.done {
            return Ok(None);
        }
        let offset = self.at as u64;
        let label = self.u16()?;
        if label == END_OF_STREAM {
            self.done = true;
            return Ok(None);
        }
        let layout = match LABELS.get(label as usize) {
            Some((_, X)) | None => {
                return Err(self.err(
                    offset,
                    &format!(
                        "DUMPI label {label}{} is not a call record (corrupt file, or a \
                         DUMPI version routemu does not know)",
                        call_name(label)
                            .map(|n| format!(" ({n})"))
                            .unwrap_or_default()
                    ),
                ))
            }
            Some((_, l)) => *l,
        };
        let mask = self.u8()?;
        let thread = if mask & 0x40 != 0 {
            Some(self.u16()?)
        } else {
            None
        };
        let cpu = if mask & 0x04 != 0 {
            Some(self.stamps(self.cpu_bias)?)
        } else {
            None
        };
        let wall = if mask & 0x08 != 0 {
            Some(self.stamps(self.wall_bias)?)
        } else {
            None
        };
        let mut counters = Vec::new();
        if mask & 0x80 != 0 {
            // The writer puts the counter count and then that many (in, out) pairs; the
            // counters' names are in the perflbl section.
            let n = self.u8()?;
            for _ in 0..n {
                counters.push((self.i64()? as u64, self.i64()? as u64));
            }
        }
        let mut statuses = Vec::new();
        let name = call_name(label).unwrap_or("unknown");
        let args = match layout {
            T => self.typed(label, mask, &mut statuses)?,
            N(l) => {
                let l = match label {
                    // Before 0.6.9 Type_struct's displacements were one int, and before
                    // 0.6.8 Cart_get's coordinates.
                    40 if self.version < (0, 6, 9) => "iIiHh",
                    105 if self.version < (0, 6, 8) => "ihiIIi",
                    _ => l,
                };
                Args::NoTraffic {
                    name,
                    fields: self.fields(l, mask, &mut statuses)?,
                }
            }
            U(l) => Args::Unmodelled {
                name,
                fields: self.fields(l, mask, &mut statuses)?,
            },
            X => unreachable!("refused above"),
        };
        Ok(Some(Call {
            label,
            offset,
            thread,
            cpu,
            wall,
            counters,
            statuses,
            args,
        }))
    }

    /// The arguments of a record with a typed layout.
    fn typed(&mut self, label: u16, mask: u8, st: &mut Vec<Status>) -> Result<Args> {
        use Args::*;
        Ok(match label {
            0 | 3 | 4 | 5 | 8..=11 => Send {
                count: self.i32()?,
                datatype: self.i16()?,
                dest: self.i32()?,
                tag: self.i32()?,
                comm: self.i16()?,
                request: if label >= 8 {
                    Some(self.i32()?)
                } else {
                    Option::None
                },
            },
            1 | 12 => {
                let a = Recv {
                    count: self.i32()?,
                    datatype: self.i16()?,
                    source: self.i32()?,
                    tag: self.i32()?,
                    comm: self.i16()?,
                    request: if label == 12 {
                        Some(self.i32()?)
                    } else {
                        Option::None
                    },
                };
                if label == 1 {
                    self.statuses(mask, st)?;
                }
                a
            }
            26..=29 => SendInit {
                count: self.i32()?,
                datatype: self.i16()?,
                dest: self.i32()?,
                tag: self.i32()?,
                comm: self.i16()?,
                request: self.i32()?,
            },
            30 => RecvInit {
                count: self.i32()?,
                datatype: self.i16()?,
                source: self.i32()?,
                tag: self.i32()?,
                comm: self.i16()?,
                request: self.i32()?,
            },
            31 => Start {
                requests: vec![self.i32()?],
            },
            32 => Start {
                requests: self.requests()?,
            },
            33 => {
                let a = SendRecv {
                    sendcount: self.i32()?,
                    sendtype: self.i16()?,
                    dest: self.i32()?,
                    sendtag: self.i32()?,
                    recvcount: self.i32()?,
                    recvtype: self.i16()?,
                    source: self.i32()?,
                    recvtag: self.i32()?,
                    comm: self.i16()?,
                };
                self.statuses(mask, st)?;
                a
            }
            34 => {
                let (count, datatype, dest, sendtag) =
                    (self.i32()?, self.i16()?, self.i32()?, self.i32()?);
                let a = SendRecv {
                    sendcount: count,
                    sendtype: datatype,
                    dest,
                    sendtag,
                    recvcount: count,
                    recvtype: datatype,
                    source: self.i32()?,
                    recvtag: self.i32()?,
                    comm: self.i16()?,
                };
                self.statuses(mask, st)?;
                a
            }
            22 | 23 => {
                let a = Probe {
                    source: self.i32()?,
                    tag: self.i32()?,
                    comm: self.i16()?,
                    flag: if label == 22 {
                        Some(self.i32()?)
                    } else {
                        Option::None
                    },
                };
                self.statuses(mask, st)?;
                a
            }
            13 => {
                let a = Wait {
                    requests: vec![self.i32()?],
                };
                self.statuses(mask, st)?;
                a
            }
            18 => {
                let a = Wait {
                    requests: self.requests()?,
                };
                self.statuses(mask, st)?;
                a
            }
            16 => {
                let a = WaitAny {
                    requests: self.requests()?,
                    index: self.i32()?,
                };
                self.statuses(mask, st)?;
                a
            }
            20 | 21 => {
                let requests = self.requests()?;
                let outcount = self.i32()?;
                let indices = self.array()?;
                self.statuses(mask, st)?;
                if label == 20 {
                    WaitSome {
                        requests,
                        outcount,
                        indices,
                    }
                } else {
                    TestSome {
                        requests,
                        outcount,
                        indices,
                    }
                }
            }
            14 => {
                let a = Test {
                    request: self.i32()?,
                    flag: self.i32()?,
                };
                self.statuses(mask, st)?;
                a
            }
            17 => {
                let a = TestAny {
                    requests: self.requests()?,
                    index: self.i32()?,
                    flag: self.i32()?,
                };
                self.statuses(mask, st)?;
                a
            }
            19 => {
                let a = TestAll {
                    requests: self.requests()?,
                    flag: self.i32()?,
                };
                self.statuses(mask, st)?;
                a
            }
            24 => Cancel {
                request: self.i32()?,
            },
            15 => RequestFree {
                request: self.i32()?,
            },
            52 => Barrier { comm: self.i16()? },
            53 => Bcast {
                count: self.i32()?,
                datatype: self.i16()?,
                root: self.i32()?,
                comm: self.i16()?,
            },
            62 => Reduce {
                count: self.i32()?,
                datatype: self.i16()?,
                op: self.u8()?,
                root: self.i32()?,
                comm: self.i16()?,
            },
            65 | 67 | 156 => {
                let (count, datatype, op, comm) =
                    (self.i32()?, self.i16()?, self.u8()?, self.i16()?);
                match label {
                    65 => Allreduce {
                        count,
                        datatype,
                        op,
                        comm,
                    },
                    67 => Scan {
                        count,
                        datatype,
                        op,
                        comm,
                    },
                    _ => Exscan {
                        count,
                        datatype,
                        op,
                        comm,
                    },
                }
            }
            66 => ReduceScatter {
                commsize: self.i32()?,
                recvcounts: self.array()?,
                datatype: self.i16()?,
                op: self.u8()?,
                comm: self.i16()?,
            },
            54 => {
                let (commrank, sendcount, sendtype, root, comm) = (
                    self.i32()?,
                    self.i32()?,
                    self.i16()?,
                    self.i32()?,
                    self.i16()?,
                );
                let at_root = commrank == root;
                Gather {
                    commrank,
                    sendcount,
                    sendtype,
                    root,
                    comm,
                    recvcount: at_root.then(|| self.i32()).transpose()?,
                    recvtype: at_root.then(|| self.i16()).transpose()?,
                }
            }
            55 => {
                let (commrank, commsize, sendcount, sendtype, root, comm) = (
                    self.i32()?,
                    self.i32()?,
                    self.i32()?,
                    self.i16()?,
                    self.i32()?,
                    self.i16()?,
                );
                let at_root = commrank == root;
                Gatherv {
                    commrank,
                    commsize,
                    sendcount,
                    sendtype,
                    root,
                    comm,
                    recvcounts: at_root.then(|| self.array()).transpose()?,
                    displs: at_root.then(|| self.array()).transpose()?,
                    recvtype: self.i16()?,
                }
            }
            56 => {
                let (commrank, recvcount, recvtype, root, comm) = (
                    self.i32()?,
                    self.i32()?,
                    self.i16()?,
                    self.i32()?,
                    self.i16()?,
                );
                let at_root = commrank == root;
                Scatter {
                    commrank,
                    recvcount,
                    recvtype,
                    root,
                    comm,
                    sendcount: at_root.then(|| self.i32()).transpose()?,
                    sendtype: at_root.then(|| self.i16()).transpose()?,
                }
            }
            57 => {
                let (commrank, commsize, sendtype, recvcount, recvtype, root, comm) = (
                    self.i32()?,
                    self.i32()?,
                    self.i16()?,
                    self.i32()?,
                    self.i16()?,
                    self.i32()?,
                    self.i16()?,
                );
                let at_root = commrank == root;
                Scatterv {
                    commrank,
                    commsize,
                    sendtype,
                    recvcount,
                    recvtype,
                    root,
                    comm,
                    sendcounts: at_root.then(|| self.array()).transpose()?,
                    displs: at_root.then(|| self.array()).transpose()?,
                }
            }
            58 => Allgather {
                sendcount: self.i32()?,
                sendtype: self.i16()?,
                recvcount: self.i32()?,
                recvtype: self.i16()?,
                comm: self.i16()?,
            },
            59 => Allgatherv {
                commsize: self.i32()?,
                sendcount: self.i32()?,
                sendtype: self.i16()?,
                recvcounts: self.array()?,
                displs: self.array()?,
                recvtype: self.i16()?,
                comm: self.i16()?,
            },
            60 => Alltoall {
                sendcount: self.i32()?,
                sendtype: self.i16()?,
                recvcount: self.i32()?,
                recvtype: self.i16()?,
                comm: self.i16()?,
            },
            61 => Alltoallv {
                commsize: self.i32()?,
                sendcounts: self.array()?,
                senddispls: self.array()?,
                sendtype: self.i16()?,
                recvcounts: self.array()?,
                recvdispls: self.array()?,
                recvtype: self.i16()?,
                comm: self.i16()?,
            },
            155 => Alltoallw {
                commsize: self.i32()?,
                sendcounts: self.array()?,
                senddispls: self.array()?,
                sendtypes: self.handles()?,
                recvcounts: self.array()?,
                recvdispls: self.array()?,
                recvtypes: self.handles()?,
                comm: self.i16()?,
            },
            124 => Init {
                argv: self.argv(label)?,
            },
            171 => InitThread {
                argv: self.argv(label)?,
                required: self.u8()?,
                provided: self.u8()?,
            },
            125 => None,
            81 | 82 => CommQuery {
                comm: self.i16()?,
                value: self.i32()?,
            },
            72 => CommGroup {
                comm: self.i16()?,
                group: self.i16()?,
            },
            84 => CommDup {
                comm: self.i16()?,
                newcomm: self.i16()?,
            },
            85 => CommCreate {
                comm: self.i16()?,
                group: self.i16()?,
                newcomm: self.i16()?,
            },
            86 => CommSplit {
                comm: self.i16()?,
                color: self.i32()?,
                key: self.i32()?,
                newcomm: self.i16()?,
            },
            87 => CommFree { comm: self.i16()? },
            83 => CommCompare {
                comm1: self.i16()?,
                comm2: self.i16()?,
                result: self.u8()?,
            },
            99 => CartCreate {
                comm: self.i16()?,
                dims: {
                    let _ndim = self.i32()?;
                    self.array()?
                },
                periods: self.array()?,
                reorder: self.i32()?,
                newcomm: self.i16()?,
            },
            111 => {
                let _ndim = self.i32()?;
                CartSub {
                    comm: self.i16()?,
                    remain_dims: self.array()?,
                    newcomm: self.i16()?,
                }
            }
            101 => {
                let _numedges = self.i32()?;
                GraphCreate {
                    comm: self.i16()?,
                    nodes: self.i32()?,
                    index: self.array()?,
                    edges: self.array()?,
                    reorder: self.i32()?,
                    newcomm: self.i16()?,
                }
            }
            91 => {
                // local comm, local leader, peer comm, remote leader, tag, new comm
                let comm = self.i16()?;
                let (_, _, _, _) = (self.i32()?, self.i16()?, self.i32()?, self.i32()?);
                Intercomm {
                    comm: Some(comm),
                    newcomm: self.i16()?,
                }
            }
            92 => {
                let comm = self.i16()?;
                let _high = self.i32()?;
                Intercomm {
                    comm: Some(comm),
                    newcomm: self.i16()?,
                }
            }
            130 | 131 => {
                // port name, info, root, old comm, new comm
                let (_, _, _) = (self.text()?, self.i16()?, self.i32()?);
                Intercomm {
                    comm: Some(self.i16()?),
                    newcomm: self.i16()?,
                }
            }
            133 => Intercomm {
                comm: Option::None,
                newcomm: self.i16()?,
            },
            134 => {
                let _fd = self.i32()?;
                Intercomm {
                    comm: Option::None,
                    newcomm: self.i16()?,
                }
            }
            135 => {
                let (rank, root) = (self.i32()?, self.i32()?);
                let (comm, newcomm) = (self.i16()?, self.i16()?);
                if rank == root {
                    // command, argv, maxprocs, info, error codes
                    self.fields("sSihI", mask, st)?;
                }
                Intercomm {
                    comm: Some(comm),
                    newcomm,
                }
            }
            136 => {
                let (_total, rank, root) = (self.i32()?, self.i32()?, self.i32()?);
                let (comm, newcomm) = (self.i16()?, self.i16()?);
                if rank == root {
                    // count, commands, argvs, maxprocs, infos, error codes
                    self.fields("iSTIHI", mask, st)?;
                }
                Intercomm {
                    comm: Some(comm),
                    newcomm,
                }
            }
            68 | 69 => GroupQuery {
                group: self.i16()?,
                value: self.i32()?,
            },
            71 => GroupCompare {
                group1: self.i16()?,
                group2: self.i16()?,
                result: self.u8()?,
            },
            70 => {
                let group1 = self.i16()?;
                let _count = self.i32()?;
                GroupTranslateRanks {
                    group1,
                    ranks1: self.array()?,
                    group2: self.i16()?,
                    ranks2: self.array()?,
                }
            }
            73..=75 => GroupAlgebra {
                op: match label {
                    73 => SetOp::Union,
                    74 => SetOp::Intersection,
                    _ => SetOp::Difference,
                },
                group1: self.i16()?,
                group2: self.i16()?,
                newgroup: self.i16()?,
            },
            76 | 77 => {
                let group = self.i16()?;
                let _count = self.i32()?;
                let (ranks, newgroup) = (self.array()?, self.i16()?);
                if label == 76 {
                    GroupIncl {
                        group,
                        ranks,
                        newgroup,
                    }
                } else {
                    GroupExcl {
                        group,
                        ranks,
                        newgroup,
                    }
                }
            }
            78 | 79 => {
                let group = self.i16()?;
                let _count = self.i32()?;
                let (ranges, newgroup) = (self.ranges()?, self.i16()?);
                if label == 78 {
                    GroupRangeIncl {
                        group,
                        ranges,
                        newgroup,
                    }
                } else {
                    GroupRangeExcl {
                        group,
                        ranges,
                        newgroup,
                    }
                }
            }
            80 => GroupFree { group: self.i16()? },
            90 | 148 | 236 => ForeignGroup {
                owner: self.i16()?,
                group: self.i16()?,
            },
            _ => unreachable!("every label with layout T is decoded above"),
        })
    }
}

/// The rank files of the trace `path` names: its `PREFIX.meta`, or any of its
/// `PREFIX-NNNN.bin` files (then the meta file if present, else every consecutive rank
/// file from 0000).
pub fn rank_files(path: &Path) -> Result<(String, Vec<PathBuf>)> {
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let bad = |w: String| Error::Trace(format!("{}: {w}", path.display()));
    let (prefix, meta) = if let Some(p) = name.strip_suffix(".meta") {
        (p.to_string(), Some(path.to_path_buf()))
    } else {
        let p = name
            .strip_suffix(".bin")
            .and_then(|s| s.rsplit_once('-'))
            .filter(|(_, n)| n.len() == 4 && n.bytes().all(|b| b.is_ascii_digit()))
            .map(|(p, _)| p.to_string())
            .ok_or_else(|| {
                bad("a DUMPI trace is named by its PREFIX.meta or a PREFIX-NNNN.bin file".into())
            })?;
        let m = dir.join(format!("{p}.meta"));
        (p, m.exists().then_some(m))
    };
    let file = |r: usize| dir.join(format!("{prefix}-{r:04}.bin"));
    let files = match meta {
        Some(m) => {
            let text =
                crate::foundation::inputs::read_to_string(&m).map_err(|source| Error::Io {
                    path: m.display().to_string(),
                    source,
                })?;
            let mut ranks = None;
            let mut prefix_in = None;
            // A byte-order mark (an editor's) is not part of the first key.
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            for (i, line) in text.lines().enumerate() {
                match line.split_once('=') {
                    Some(("numprocs", v)) => {
                        ranks = Some(v.trim().parse::<usize>().map_err(|_| {
                            Error::Trace(format!(
                                "{}:{}: numprocs is not a whole number",
                                m.display(),
                                i + 1
                            ))
                        })?)
                    }
                    Some(("fileprefix", v)) => prefix_in = Some(v.trim().to_string()),
                    _ => {}
                }
            }
            let ranks = ranks.ok_or_else(|| {
                Error::Trace(format!(
                    "{}: no numprocs line (not a DUMPI meta file)",
                    m.display()
                ))
            })?;
            if let Some(p) = prefix_in.filter(|p| *p != prefix) {
                return Err(Error::Trace(format!(
                    "{}: fileprefix {p} does not match the file name",
                    m.display()
                )));
            }
            if ranks == 0 || ranks > 1 << 24 {
                return Err(Error::Trace(format!(
                    "{}: numprocs {ranks} is out of range",
                    m.display()
                )));
            }
            // Every rank file must be there: found one by one, so that a huge
            // numprocs costs nothing before the first missing file is reported.
            let mut files = Vec::new();
            for r in 0..ranks {
                let f = file(r);
                if !f.is_file() {
                    return Err(Error::Trace(format!(
                        "{}: numprocs is {ranks}, but there is no rank file {}",
                        m.display(),
                        f.display()
                    )));
                }
                files.push(f);
            }
            files
        }
        None => (0..)
            .map(file)
            .take_while(|f| f.exists())
            .collect::<Vec<_>>(),
    };
    if files.is_empty() {
        return Err(bad(format!("no rank file {}", file(0).display())));
    }
    // The rank files are read later, some only when the replay reaches them: noted now
    // so that no output of the command can be one of them.
    for f in &files {
        crate::foundation::inputs::note(f);
    }
    Ok((prefix, files))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_table_covers_every_dumpi_label_with_valid_layouts() {
        assert_eq!(LABELS.len(), END_OF_STREAM as usize + 1);
        assert_eq!(call_name(END_OF_STREAM), Some("MPI_END_OF_STREAM"));
        for (label, (name, layout)) in LABELS.iter().enumerate() {
            assert!(
                name.starts_with("MPI_") || name.starts_with("MPIO_"),
                "{label}"
            );
            if let N(l) | U(l) = layout {
                assert!(
                    l.bytes().all(|c| b"ihblIHBsSTRt".contains(&c)),
                    "{name}: {l}"
                );
            }
            assert_eq!(label_of(name), Some(label as u16), "names are unique");
        }
    }

    #[test]
    fn typed_labels_are_the_communicator_collective_and_point_to_point_calls() {
        let typed: Vec<&str> = LABELS
            .iter()
            .filter(|(_, l)| matches!(l, T))
            .map(|(n, _)| *n)
            .collect();
        for name in [
            "MPI_Waitsome",
            "MPI_Startall",
            "MPI_Alltoallw",
            "MPI_Exscan",
            "MPI_Comm_split",
            "MPI_Group_range_excl",
            "MPI_Cart_sub",
            "MPI_Init_thread",
        ] {
            assert!(typed.contains(&name), "{name}");
        }
        // MPI-IO moves data (to files); its error handlers and group do not.
        for (name, layout) in LABELS {
            if name.starts_with("MPI_File_") || name.starts_with("MPIO_") {
                let passed = name.contains("errhandler") || name == "MPI_File_get_group";
                assert_eq!(matches!(layout, U(_)), !passed, "{name}");
            }
        }
    }
}

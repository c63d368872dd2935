//! An MPI trace as network messages: the rank files of a DUMPI trace ([`crate::trace::dumpi`])
//! merged into one message stream with dependencies (../shared/traces/FORMATS.md §3.4;
//! docs/dumpi.md, "Messages" and "Dependencies").
//!
//! - One message per send (Send, Bsend, Ssend, Rsend, the Isend variants, the send half
//!   of Sendrecv and Sendrecv_replace, and each MPI_Start of a persistent send) of
//!   count × size(datatype) bytes (sizes from the rank's file) from the rank to `dest`, at
//!   the wall-clock time the call was entered, in nanoseconds after the earliest such
//!   time of any rank. Peers are ranks of the call's communicator, mapped to world ranks
//!   by [`crate::mpi_semantics::comm`]. Sends to and receives from MPI_PROC_NULL (-2) carry nothing and
//!   are dropped; any other negative peer (but a receive's MPI_ANY_SOURCE, -1) is refused.
//! - Receives are matched to sends the way MPI does, per communicator: a rank's receives
//!   in the order it posted them, each taking the first not yet matched send from its
//!   source on that communicator (in the sender's program order) whose tag it accepts. A
//!   receive from MPI_ANY_SOURCE takes the source its recorded status names, else the
//!   earliest such send of any rank. Sends nobody receives (a partial trace) are still
//!   messages.
//! - A receive completes at the call that reports it complete: a blocking Recv or
//!   Sendrecv (after the Sendrecv's own send, which does not wait for it); Wait and
//!   Waitall for the requests they name; Waitany, Waitsome, Testany and Testsome for the
//!   indices the record says completed; Test and Testall when their recorded flag is
//!   true. A blocking Probe (or an Iprobe whose flag is true) waits for the first
//!   unmatched send it matches without taking it. The rank's first send after that
//!   completion depends on the received (or probed) message, and every send is the
//!   program-order successor of the rank's previous one (a rank held up stays held up:
//!   see [`crate::trace::TraceMsg::successor`]).
//! - Collectives ([`Collectives::Expand`], the default) become point-to-point transfers
//!   by [`crate::mpi_semantics::collectives`]' MPICH algorithms: the n-th collective call of each member
//!   on one communicator is one instance (members must agree on the kind and the root);
//!   its transfers match only each other (a context of their own, as MPI's collective
//!   context). A rank's send of step k waits for its receives of steps < k, the first
//!   send after the collective for all its receives, and its first sends for what the
//!   rank completed before the call. [`Collectives::Skip`] drops every collective (their
//!   traffic and synchronisation are lost); [`Collectives::Refuse`] refuses the first.
//! - One-sided communication and MPI-IO are refused with the call's name and byte offset;
//!   communicator and bookkeeping calls move no messages.
//!
//! Unlike Netrace and text traces, a DUMPI trace is read whole: matching needs every
//! rank. Each rank file is decoded twice: once to resolve the communicators and gather
//! every collective call's arguments (the instances' sizes depend on all members, e.g. a
//! Gatherv's counts are recorded at its root only), once to make the messages, rank by
//! rank. What is held at once: every message (the trace's output), every receive, each
//! collective instance's sizes (O(1) for uniform collectives, O(p) for the v-variants,
//! O(p²) for an Alltoallv or Alltoallw on p ranks: their recorded counts) and one rank's
//! schedule step of one instance at a time — the other members' schedules are never
//! materialised. The stream is sorted by time, except that a message never comes before
//! the messages it depends on (ranks' clocks are not synchronised, so a receiver's send
//! may carry an earlier time than the message it waited for).
//!
//! Not here: decoding the records (`dumpi`), resolving communicators (`comm`), the
//! collectives' algorithms (`collectives`), replaying (`experiments::replay`).

use crate::foundation::error::{Error, Result};
use crate::mpi_semantics::collectives::{Choices, Collective, Op, Plan, Sizes, Step, Tuning};
use crate::mpi_semantics::comm::{CommBuilder, CommId, CommTable, COMM_WORLD};
use crate::trace::dumpi::{call_name, rank_files, Args, Call, CallClass, DumpiFile};
use crate::trace::program::{ProgMsg, ProgRecv, Program, RankBuilder, RankProgram, Req, SendMode};
use crate::trace::{SizeUnit, TraceMsg, TraceSource};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

/// DUMPI's MPI_ANY_SOURCE and MPI_ANY_TAG.
const ANY: i32 = -1;
/// DUMPI's MPI_PROC_NULL: a peer that sends or receives nothing.
const PROC_NULL: i32 = -2;

/// What to do with collective calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Collectives {
    /// Expand every collective into point-to-point messages by MPICH's algorithms.
    #[default]
    Expand,
    /// Drop every collective (its traffic and synchronisation are lost).
    Skip,
    /// Refuse the trace, naming the first collective and its offset.
    Refuse,
}

/// How [`MpiTrace::load`] reads a trace.
#[derive(Clone, Copy, Debug, Default)]
pub struct MpiOptions {
    /// What to do with collectives.
    pub collectives: Collectives,
    /// The algorithm of each kind of collective (`Auto`: MPICH's choice).
    pub algorithms: Choices,
    /// The thresholds `Auto` chooses by (MPICH 3 or 4).
    pub tuning: Tuning,
}

/// A matching context: `(communicator, 0)` for point-to-point traffic, `(communicator,
/// n + 1)` for the transfers of the n-th collective on it, so that the two never match
/// each other (MPI gives collectives a context of their own).
type Ctx = (CommId, u32);

struct SendRec {
    rank: u32,
    dest: u32,
    ctx: Ctx,
    tag: i32,
    time_ns: u64,
    bytes: u64,
    /// The sends that wait for this message's delivery.
    children: Vec<usize>,
    /// A collective's send: the rank's recorded exit from the call, which its next
    /// send's lag is measured from (see `TraceMsg::lag_from`).
    exit_ns: Option<u64>,
    /// Its MPI send mode (elastic replay).
    mode: SendMode,
}

struct RecvRec {
    rank: u32,
    ctx: Ctx,
    /// World rank of the source, or ANY.
    source: i32,
    tag: i32,
    /// The source its status recorded (ANY_SOURCE receives), a communicator rank.
    status_source: Option<i32>,
    /// The rank's first send after this receive completed.
    gate: Option<usize>,
    /// A probe: it waits for the message but does not take it.
    probe: bool,
    /// The send it took (a probe: found), once matched.
    msg: Option<usize>,
}

/// A DUMPI trace, matched and ordered, ready to replay.
pub struct MpiTrace {
    msgs: std::vec::IntoIter<TraceMsg>,
    /// The ranks' programs, for elastic replay (taken once).
    program: Option<Program>,
    /// Messages matched in all.
    total: u64,
    ranks: u32,
    desc: String,
}

impl MpiTrace {
    /// Reads, matches and orders the DUMPI trace `path` names (see [`rank_files`]).
    pub fn load(path: &Path, o: &MpiOptions) -> Result<Self> {
        let (prefix, files) = rank_files(path)?;
        let ranks = files.len() as u32;
        // Pass 1: communicators, and every collective call's arguments.
        let mut builder = CommBuilder::new(files.iter().map(|f| f.display().to_string()).collect());
        let mut parts: Vec<Vec<Part>> = Vec::with_capacity(files.len());
        for (rank, f) in files.iter().enumerate() {
            let mut file = DumpiFile::open(f)?;
            let mut mine = Vec::new();
            let mut at = 0;
            while let Some(c) = file.next_call()? {
                builder.push(rank as u32, &c)?;
                if c.args.class() == CallClass::Collective {
                    match o.collectives {
                        Collectives::Refuse => {
                            return Err(Error::Trace(format!(
                                "{}: byte {}: unsupported MPI call {} (--collectives refuse)",
                                f.display(),
                                c.offset,
                                c.name()
                            )))
                        }
                        Collectives::Skip => {}
                        Collectives::Expand => mine.push(part(&c, at, &file.type_sizes, f)?),
                    }
                }
                at += 1;
            }
            parts.push(mine);
        }
        let table = builder.finish()?;
        let (expansions, mine) = instances(&table, parts, &files)?;
        let plans = expansions
            .iter()
            .map(|e| e.plan(o, &table, &files))
            .collect::<Result<Vec<_>>>()?;
        // Pass 2: the messages, rank by rank.
        let mut st = State::default();
        for (rank, f) in files.iter().enumerate() {
            let colls: Vec<Coll> = mine[rank]
                .iter()
                .map(|&(i, me)| Coll {
                    plan: &plans[i],
                    members: table.members(expansions[i].comm).unwrap_or(&[]),
                    me,
                    ctx: (expansions[i].comm, expansions[i].n + 1),
                })
                .collect();
            read_rank(f, rank as u32, &table, o.collectives, &colls, &mut st)?;
        }
        let (matched, unmatched) = match_receives(&mut st.sends, &mut st.recvs, ranks, &table);
        let program = program(&mut st, &prefix);
        let msgs = order(&mut st.sends, &prefix)?;
        let colls = match o.collectives {
            Collectives::Skip if st.skipped > 0 => {
                format!(", {} collective calls skipped", st.skipped)
            }
            Collectives::Expand if !expansions.is_empty() => format!(
                ", {} collectives expanded into {} messages",
                expansions.len(),
                st.collective_msgs
            ),
            _ => String::new(),
        };
        let desc = format!(
            "DUMPI trace {} ({ranks} ranks, {} messages, times in ns, {matched} receives \
             matched, {unmatched} receives without a send{colls})",
            prefix,
            msgs.len(),
        );
        Ok(MpiTrace {
            total: msgs.len() as u64,
            msgs: msgs.into_iter(),
            program: Some(program),
            ranks,
            desc,
        })
    }
}

/// One member's collective call, as the first pass reads it.
struct Part {
    /// Its index among the rank's calls (the communicator table's clock).
    at: usize,
    offset: u64,
    name: &'static str,
    comm: i16,
    kind: Collective,
    /// The call's size when it is one number (see `part`).
    bytes: u64,
    /// Per-rank sizes, or this rank's row of an alltoallv, when the call records them.
    vec: Option<Vec<u64>>,
    /// Bytes of one element (reductions split buffers between elements).
    elem: u64,
}

/// Reads a collective call's kind and sizes (count × datatype size, from the rank's
/// own type table). `bytes` is what every member's schedule is built from for the
/// collectives of one size: the buffer (Bcast, reductions), one rank's block at the root
/// (Gather's receive side, Scatter's send side; elsewhere the member's own block), the
/// receive block (Allgather, Alltoall: their send side may be MPI_IN_PLACE).
fn part(c: &Call, at: usize, sizes: &[u32], file: &Path) -> Result<Part> {
    let name = c.name();
    let err =
        |w: String| Error::Trace(format!("{}: byte {}: {name} {w}", file.display(), c.offset));
    let ty = |t: i16| -> Result<u64> {
        usize::try_from(t)
            .ok()
            .and_then(|t| sizes.get(t))
            .map(|&s| u64::from(s))
            .ok_or_else(|| err(format!("with unknown datatype index {t}")))
    };
    let b = |count: i32, t: i16| -> Result<u64> { Ok(count.max(0) as u64 * ty(t)?) };
    let v = |counts: &[i32], t: i16| -> Result<Vec<u64>> {
        let s = ty(t)?;
        Ok(counts.iter().map(|&c| c.max(0) as u64 * s).collect())
    };
    let root =
        |r: i32| -> Result<u32> { u32::try_from(r).map_err(|_| err(format!("with root {r}"))) };
    // Gather and Scatter: one rank's block at the root (the count and type only the root
    // records), elsewhere the member's own block.
    let block = |at_root: (Option<i32>, Option<i16>), own: (i32, i16)| -> Result<u64> {
        match at_root {
            (Some(n), Some(t)) => b(n, t),
            _ => b(own.0, own.1),
        }
    };
    use Args as A;
    use Collective as K;
    let (kind, comm, bytes, vec, elem) = match &c.args {
        A::Barrier { comm } => (K::Barrier, *comm, 0, None, 1),
        &A::Bcast {
            count,
            datatype,
            root: r,
            comm,
        } => (
            K::Bcast { root: root(r)? },
            comm,
            b(count, datatype)?,
            None,
            1,
        ),
        &A::Reduce {
            count,
            datatype,
            root: r,
            comm,
            ..
        } => (
            K::Reduce { root: root(r)? },
            comm,
            b(count, datatype)?,
            None,
            ty(datatype)?,
        ),
        &A::Allreduce {
            count,
            datatype,
            comm,
            ..
        } => (K::Allreduce, comm, b(count, datatype)?, None, ty(datatype)?),
        &A::Scan {
            count,
            datatype,
            comm,
            ..
        } => (K::Scan, comm, b(count, datatype)?, None, ty(datatype)?),
        &A::Exscan {
            count,
            datatype,
            comm,
            ..
        } => (K::Exscan, comm, b(count, datatype)?, None, ty(datatype)?),
        A::ReduceScatter {
            recvcounts,
            datatype,
            comm,
            ..
        } => (
            K::ReduceScatter,
            *comm,
            0,
            Some(v(recvcounts, *datatype)?),
            ty(*datatype)?,
        ),
        &A::Gather {
            sendcount,
            sendtype,
            root: r,
            comm,
            recvcount,
            recvtype,
            ..
        } => (
            K::Gather { root: root(r)? },
            comm,
            block((recvcount, recvtype), (sendcount, sendtype))?,
            None,
            1,
        ),
        A::Gatherv {
            sendcount,
            sendtype,
            root: r,
            comm,
            recvcounts,
            recvtype,
            ..
        } => (
            K::Gatherv { root: root(*r)? },
            *comm,
            b(*sendcount, *sendtype)?,
            recvcounts.as_ref().map(|c| v(c, *recvtype)).transpose()?,
            1,
        ),
        &A::Scatter {
            recvcount,
            recvtype,
            root: r,
            comm,
            sendcount,
            sendtype,
            ..
        } => (
            K::Scatter { root: root(r)? },
            comm,
            block((sendcount, sendtype), (recvcount, recvtype))?,
            None,
            1,
        ),
        A::Scatterv {
            sendtype,
            recvcount,
            recvtype,
            root: r,
            comm,
            sendcounts,
            ..
        } => (
            K::Scatterv { root: root(*r)? },
            *comm,
            b(*recvcount, *recvtype)?,
            sendcounts.as_ref().map(|c| v(c, *sendtype)).transpose()?,
            1,
        ),
        &A::Allgather {
            recvcount,
            recvtype,
            comm,
            ..
        } => (K::Allgather, comm, b(recvcount, recvtype)?, None, 1),
        A::Allgatherv {
            recvcounts,
            recvtype,
            comm,
            ..
        } => (K::Allgatherv, *comm, 0, Some(v(recvcounts, *recvtype)?), 1),
        &A::Alltoall {
            recvcount,
            recvtype,
            comm,
            ..
        } => (K::Alltoall, comm, b(recvcount, recvtype)?, None, 1),
        A::Alltoallv {
            sendcounts,
            sendtype,
            comm,
            ..
        } => (K::Alltoallv, *comm, 0, Some(v(sendcounts, *sendtype)?), 1),
        A::Alltoallw {
            sendcounts,
            sendtypes,
            comm,
            ..
        } => {
            if sendtypes.len() != sendcounts.len() {
                return Err(err(format!(
                    "with {} send counts but {} send types",
                    sendcounts.len(),
                    sendtypes.len()
                )));
            }
            let row = sendcounts
                .iter()
                .zip(sendtypes)
                .map(|(&n, &t)| b(n, t))
                .collect::<Result<Vec<_>>>()?;
            (K::Alltoallv, *comm, 0, Some(row), 1)
        }
        _ => return Err(err("is not a collective".into())),
    };
    Ok(Part {
        at,
        offset: c.offset,
        name,
        comm,
        kind,
        bytes,
        vec,
        elem: elem.max(1),
    })
}

/// The sizes of an instance, owned (a [`Plan`] borrows them).
enum OwnedSizes {
    Uniform(u64),
    PerRank(Vec<u64>),
    /// Rows: what each member sends to each.
    Matrix(Box<dyn Fn(u32, u32) -> u64 + Sync>),
}

/// One collective instance: the n-th collective call on a communicator.
struct Expansion {
    kind: Collective,
    comm: CommId,
    n: u32,
    sizes: OwnedSizes,
    op: Op,
    /// Its first member's call, for errors: (world rank, byte offset, name).
    first: (u32, u64, &'static str),
}

impl Expansion {
    fn plan(&self, o: &MpiOptions, table: &CommTable, files: &[PathBuf]) -> Result<Plan<'_>> {
        let p = table.members(self.comm).map_or(0, |m| m.len()) as u32;
        let sizes = match &self.sizes {
            OwnedSizes::Uniform(b) => Sizes::Uniform(*b),
            OwnedSizes::PerRank(v) => Sizes::PerRank(v),
            OwnedSizes::Matrix(f) => Sizes::Matrix(f.as_ref()),
        };
        let alg = o.algorithms.get(&self.kind);
        Plan::with_tuning(&o.tuning, &self.kind, alg, p, sizes, self.op).map_err(|e| {
            let (r, off, name) = self.first;
            Error::Trace(format!(
                "{}: byte {off}: {name} on {p} ranks: {e}",
                files[r as usize].display()
            ))
        })
    }
}

/// Gathers the members' collective calls into instances (the n-th call of each member
/// on one communicator), checks that they agree, and works out each instance's sizes.
/// Returns the instances and, per rank, its calls' (instance, rank in the communicator)
/// in call order.
#[allow(clippy::type_complexity)]
fn instances(
    table: &CommTable,
    parts: Vec<Vec<Part>>,
    files: &[PathBuf],
) -> Result<(Vec<Expansion>, Vec<Vec<(usize, u32)>>)> {
    let at = |r: u32, off: u64| format!("{}: byte {off}", files[r as usize].display());
    let mut index: HashMap<(CommId, u32), usize> = HashMap::new();
    let mut made: HashMap<(u32, CommId), u32> = HashMap::new();
    let mut gathered: Vec<(CommId, u32, Vec<Option<(u32, Part)>>)> = Vec::new();
    let mut mine = Vec::with_capacity(parts.len());
    for (rank, list) in parts.into_iter().enumerate() {
        let rank = rank as u32;
        let mut calls = Vec::with_capacity(list.len());
        for part in list {
            let id = table.comm_id(rank, part.comm, part.at)?;
            let me = table.comm_rank(rank, part.comm, part.at)?;
            let p = table.members(id).map_or(0, |m| m.len());
            let n = made.entry((rank, id)).or_insert(0);
            let key = (id, *n);
            *n += 1;
            let i = *index.entry(key).or_insert_with(|| {
                gathered.push((id, key.1, (0..p).map(|_| None).collect()));
                gathered.len() - 1
            });
            let slots = &mut gathered[i].2;
            if let Some((r0, first)) = slots.iter().flatten().next() {
                if first.kind != part.kind {
                    return Err(Error::Trace(format!(
                        "{}: {} ({}) is collective call #{} on its communicator, but \
                         {}: {} there is {} (members must make the same collective calls \
                         in the same order)",
                        at(rank, part.offset),
                        part.name,
                        describe(&part.kind),
                        key.1,
                        at(*r0, first.offset),
                        first.name,
                        describe(&first.kind)
                    )));
                }
            }
            if let Some(root) = part.kind.root() {
                if root as usize >= p {
                    return Err(Error::Trace(format!(
                        "{}: {} with root {root} on a communicator of {p} ranks",
                        at(rank, part.offset),
                        part.name
                    )));
                }
            }
            slots[me as usize] = Some((rank, part));
            calls.push((i, me));
        }
        mine.push(calls);
    }
    let mut out = Vec::with_capacity(gathered.len());
    for (comm, n, slots) in gathered {
        let p = slots.len();
        let Some((r0, p0)) = slots.iter().flatten().next() else {
            continue;
        };
        let first = (*r0, p0.offset, p0.name);
        let kind = p0.kind;
        let here = format!("{}: {}", at(first.0, first.1), first.2);
        let absent: Vec<u32> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .filter_map(|(i, _)| table.members(comm).and_then(|m| m.get(i)).copied())
            .collect();
        if !absent.is_empty() {
            return Err(Error::Trace(format!(
                "{here}: world ranks {absent:?} of its communicator never make this \
                 collective call (a partial trace?)"
            )));
        }
        let parts: Vec<Part> = slots.into_iter().flatten().map(|(_, p)| p).collect();
        // The root's view, else the first member's.
        let lead = &parts[kind.root().unwrap_or(0) as usize];
        let len_ok = |v: &Vec<u64>, whose: &str| -> Result<()> {
            if v.len() == p {
                Ok(())
            } else {
                Err(Error::Trace(format!(
                    "{here}: {whose} records {} counts for a communicator of {p} ranks",
                    v.len()
                )))
            }
        };
        let sizes = match kind {
            Collective::Gatherv { .. }
            | Collective::Scatterv { .. }
            | Collective::Allgatherv
            | Collective::ReduceScatter => match &lead.vec {
                Some(v) => {
                    len_ok(v, "the root (or first member)")?;
                    OwnedSizes::PerRank(v.clone())
                }
                None => OwnedSizes::Uniform(lead.bytes),
            },
            Collective::Alltoallv => {
                let mut rows = Vec::with_capacity(p);
                for part in &parts {
                    let row = part.vec.clone().unwrap_or_default();
                    len_ok(&row, "a member")?;
                    rows.push(row);
                }
                OwnedSizes::Matrix(Box::new(move |s, d| rows[s as usize][d as usize]))
            }
            _ => OwnedSizes::Uniform(lead.bytes),
        };
        out.push(Expansion {
            kind,
            comm,
            n,
            sizes,
            op: Op::builtin(lead.elem),
            first,
        });
    }
    // Instances without members were skipped: renumber the ranks' references.
    let kept: HashMap<(CommId, u32), usize> = out
        .iter()
        .enumerate()
        .map(|(i, e)| ((e.comm, e.n), i))
        .collect();
    let keys: Vec<(CommId, u32)> = {
        let mut k = vec![(0, 0); index.len()];
        for (key, i) in index {
            k[i] = key;
        }
        k
    };
    for calls in &mut mine {
        for c in calls.iter_mut() {
            c.0 = kept[&keys[c.0]];
        }
    }
    Ok((out, mine))
}

/// A collective's kind and root, for errors.
fn describe(k: &Collective) -> String {
    match k.root() {
        Some(r) => format!("{} with root {r}", k.name()),
        None => k.name().to_string(),
    }
}

/// What the messages are being built into.
#[derive(Default)]
struct State {
    sends: Vec<SendRec>,
    recvs: Vec<RecvRec>,
    skipped: u64,
    collective_msgs: u64,
    /// Every rank's program so far, in rank order.
    programs: Vec<RankProgram>,
    /// Why the programs cannot be timed, if so (see `Program::untimed`).
    untimed: Option<String>,
}

/// One of a rank's collective calls, ready to expand.
struct Coll<'a> {
    plan: &'a Plan<'a>,
    members: &'a [u32],
    me: u32,
    ctx: Ctx,
}

/// A persistent request: what each MPI_Start of it posts.
enum Persistent {
    Send {
        dest: Option<u32>,
        ctx: Ctx,
        tag: i32,
        bytes: u64,
        mode: SendMode,
    },
    Recv {
        ctx: Ctx,
        source: Option<i32>,
        tag: i32,
    },
}

/// Decodes one rank's file into its sends and receives, and its program (see
/// [`crate::trace::program`]).
fn read_rank(
    path: &Path,
    rank: u32,
    table: &CommTable,
    collectives: Collectives,
    colls: &[Coll],
    st: &mut State,
) -> Result<()> {
    let mut f = DumpiFile::open(path)?;
    // Receive requests in flight: the receive each names.
    let mut active: HashMap<i32, usize> = HashMap::new();
    // Every request in flight, for the program's waits: the send or receive it names.
    let mut reqs: HashMap<i32, Req> = HashMap::new();
    let mut persistent: HashMap<i32, Persistent> = HashMap::new();
    let mut completed: Vec<usize> = Vec::new();
    let mut next_coll = colls.iter();
    let mut prog = RankBuilder::default();
    let mut at = 0;
    let mut last_exit = 0;
    while let Some(c) = f.next_call()? {
        let here = Here {
            call: &c,
            name: call_name(c.label).unwrap_or("unknown"),
            rank,
            at,
            type_sizes: &f.type_sizes,
            path,
            table,
        };
        at += 1;
        match c.wall {
            Some(_) => {
                let (enter, exit) = (here.time()?, here.exit_time()?);
                prog.call(c.label, enter, exit);
                last_exit = exit.max(enter);
            }
            None => {
                st.untimed.get_or_insert_with(|| {
                    format!(
                        "{}: byte {}: {} has no wall-clock time, so the compute between \
                         calls is not known (record wall times to replay elastically)",
                        path.display(),
                        c.offset,
                        here.name
                    )
                });
                prog.call(c.label, last_exit, last_exit);
            }
        }
        let State {
            sends,
            recvs,
            skipped,
            collective_msgs,
            ..
        } = &mut *st;
        // A request reported complete; `k` is its status's index.
        let mut complete = |q: i32, k: usize, recvs: &mut Vec<RecvRec>| {
            if let Some(i) = active.remove(&q) {
                if let Some(s) = c.statuses.get(k) {
                    recvs[i].status_source.get_or_insert(s.1);
                }
                completed.push(i);
            }
        };
        // The requests a Wait or Test names that it completes (a persistent one stays
        // known for its next MPI_Start).
        let mut done = |qs: &mut dyn Iterator<Item = i32>| -> Vec<Req> {
            qs.filter_map(|q| {
                if persistent.contains_key(&q) {
                    reqs.get(&q).copied()
                } else {
                    reqs.remove(&q)
                }
            })
            .collect()
        };
        let mode = SendMode::of_call(here.name);
        match c.args {
            Args::Send {
                count,
                datatype,
                dest,
                tag,
                comm,
                request,
            } => {
                if let Some(mut s) = here.send(count, datatype, dest, tag, comm)? {
                    s.mode = mode;
                    let i = gate(sends, recvs, &mut completed, s);
                    prog.send(i);
                    match request {
                        Some(q) => {
                            reqs.insert(q, Req::Send(i as u32));
                        }
                        None => prog.wait([Req::Send(i as u32)]),
                    }
                }
            }
            Args::Recv {
                source,
                tag,
                comm,
                request,
                ..
            } => {
                if let Some(r) = here.recv(source, tag, comm, false, recvs)? {
                    prog.recv(r);
                    match request {
                        Some(q) => {
                            active.insert(q, r);
                            reqs.insert(q, Req::Recv(r as u32));
                        }
                        None => {
                            completed.push(r);
                            prog.wait([Req::Recv(r as u32)]);
                        }
                    }
                }
            }
            Args::SendRecv {
                sendcount,
                sendtype,
                dest,
                sendtag,
                source,
                recvtag,
                comm,
                ..
            } => {
                // The send goes out while the receive is pending: only the rank's
                // later sends wait for what it receives.
                let mut both = Vec::with_capacity(2);
                if let Some(s) = here.send(sendcount, sendtype, dest, sendtag, comm)? {
                    let i = gate(sends, recvs, &mut completed, s);
                    prog.send(i);
                    both.push(Req::Send(i as u32));
                }
                if let Some(r) = here.recv(source, recvtag, comm, false, recvs)? {
                    completed.push(r);
                    prog.recv(r);
                    both.push(Req::Recv(r as u32));
                }
                prog.wait(both);
            }
            Args::SendInit {
                count,
                datatype,
                dest,
                tag,
                comm,
                request,
            } => {
                let s = here.send(count, datatype, dest, tag, comm)?;
                let (id, _) = here.comm(comm)?;
                persistent.insert(
                    request,
                    Persistent::Send {
                        dest: s.as_ref().map(|s| s.dest),
                        ctx: (id, 0),
                        tag,
                        bytes: s.map_or(0, |s| s.bytes),
                        mode,
                    },
                );
                reqs.remove(&request);
            }
            Args::RecvInit {
                source,
                tag,
                comm,
                request,
                ..
            } => {
                let (id, members) = here.comm(comm)?;
                let source = match source {
                    ANY => Some(ANY),
                    s => here.peer(members, comm, s, "from")?.map(|w| w as i32),
                };
                persistent.insert(
                    request,
                    Persistent::Recv {
                        ctx: (id, 0),
                        source,
                        tag,
                    },
                );
                reqs.remove(&request);
            }
            Args::Start { ref requests } => {
                let time = here.time()?;
                for q in requests {
                    match persistent.get(q) {
                        Some(&Persistent::Send {
                            dest: Some(dest),
                            ctx,
                            tag,
                            bytes,
                            mode,
                        }) => {
                            let s = SendRec {
                                rank,
                                dest,
                                ctx,
                                tag,
                                time_ns: time,
                                bytes,
                                children: Vec::new(),
                                exit_ns: None,
                                mode,
                            };
                            let i = gate(sends, recvs, &mut completed, s);
                            prog.send(i);
                            reqs.insert(*q, Req::Send(i as u32));
                        }
                        Some(&Persistent::Recv {
                            ctx,
                            source: Some(source),
                            tag,
                        }) => {
                            recvs.push(RecvRec {
                                rank,
                                ctx,
                                source,
                                tag,
                                status_source: None,
                                gate: None,
                                probe: false,
                                msg: None,
                            });
                            let r = recvs.len() - 1;
                            active.insert(*q, r);
                            prog.recv(r);
                            reqs.insert(*q, Req::Recv(r as u32));
                        }
                        // MPI_PROC_NULL, or a request made before the trace began.
                        _ => {}
                    }
                }
            }
            Args::Probe {
                source,
                tag,
                comm,
                flag,
            } => {
                // Iprobe finding nothing has no effect; Probe, and Iprobe finding a
                // message, wait for that message without taking it.
                if flag.unwrap_or(1) != 0 {
                    if let Some(r) = here.recv(source, tag, comm, true, recvs)? {
                        completed.push(r);
                        prog.probe(r);
                    }
                }
            }
            Args::Wait { ref requests } => {
                for (k, &q) in requests.iter().enumerate() {
                    complete(q, k, recvs);
                }
                prog.wait(done(&mut requests.iter().copied()));
            }
            Args::WaitAny {
                ref requests,
                index,
            }
            | Args::TestAny {
                ref requests,
                index,
                flag: 1..,
            } => {
                if let Some(&q) = usize::try_from(index).ok().and_then(|i| requests.get(i)) {
                    complete(q, 0, recvs);
                    prog.wait(done(&mut std::iter::once(q)));
                }
            }
            Args::WaitSome {
                ref requests,
                ref indices,
                ..
            }
            | Args::TestSome {
                ref requests,
                ref indices,
                ..
            } => {
                let named: Vec<i32> = indices
                    .iter()
                    .filter_map(|&i| usize::try_from(i).ok().and_then(|i| requests.get(i)))
                    .copied()
                    .collect();
                for (k, &q) in named.iter().enumerate() {
                    complete(q, k, recvs);
                }
                prog.wait(done(&mut named.into_iter()));
            }
            Args::Test { request, flag } => {
                if flag != 0 {
                    complete(request, 0, recvs);
                    prog.wait(done(&mut std::iter::once(request)));
                }
            }
            Args::TestAll { ref requests, flag } => {
                if flag != 0 {
                    for (k, &q) in requests.iter().enumerate() {
                        complete(q, k, recvs);
                    }
                    prog.wait(done(&mut requests.iter().copied()));
                }
            }
            // A Test* that found nothing complete.
            Args::TestAny { .. } => {}
            Args::Cancel { request } => {
                // A cancelled receive never completes: nothing waits for it.
                active.remove(&request);
                reqs.remove(&request);
            }
            Args::RequestFree { request } => {
                // Freed while active, it completes unobserved: nothing waits for it.
                active.remove(&request);
                persistent.remove(&request);
                reqs.remove(&request);
            }
            ref a if a.class() == CallClass::Collective => match collectives {
                Collectives::Expand => {
                    let coll = next_coll.next().ok_or_else(|| {
                        here.err("a collective the first pass did not see".into())
                    })?;
                    let made = here.expand(coll, sends, recvs, &mut completed, &mut prog)?;
                    *collective_msgs += made;
                }
                _ => *skipped += 1,
            },
            // Communicator and group calls move no messages, nor do bookkeeping calls.
            ref a if matches!(a.class(), CallClass::Communicator | CallClass::NoTraffic) => {}
            _ => {
                return Err(here.err(format!(
                    "unsupported MPI call {}: routemu replays point-to-point messages and \
                     collectives, not one-sided communication or MPI-IO",
                    here.name
                )))
            }
        }
    }
    st.programs.push(prog.finish());
    Ok(())
}

/// A call being read, with what turning it into records needs.
struct Here<'a> {
    call: &'a Call,
    name: &'static str,
    rank: u32,
    /// The call's index in the rank's file.
    at: usize,
    type_sizes: &'a [u32],
    path: &'a Path,
    table: &'a CommTable,
}

impl<'a> Here<'a> {
    fn err(&self, what: String) -> Error {
        Error::Trace(format!(
            "{}: byte {}: {what}",
            self.path.display(),
            self.call.offset
        ))
    }

    /// The communicator a handle names here, and its world ranks.
    fn comm(&self, comm: i16) -> Result<(CommId, &'a [u32])> {
        let id = self.table.comm_id(self.rank, comm, self.at)?;
        let members = self.table.members(id).ok_or_else(|| {
            self.err(format!(
                "{} on communicator {comm}, whose ranks are not known",
                self.name
            ))
        })?;
        Ok((id, members))
    }

    /// The world rank of communicator rank `r` (None for MPI_PROC_NULL; any other
    /// negative rank is no rank, and refused).
    fn peer(&self, members: &[u32], comm: i16, r: i32, dir: &str) -> Result<Option<u32>> {
        if r == PROC_NULL {
            return Ok(None);
        }
        if r < 0 {
            return Err(self.err(format!(
                "{} {dir} rank {r}, which is no rank (MPI_PROC_NULL is {PROC_NULL})",
                self.name
            )));
        }
        match members.get(r as usize) {
            Some(&w) => Ok(Some(w)),
            None if comm == COMM_WORLD => Err(self.err(format!(
                "{} {dir} rank {r}, but the trace has {} ranks",
                self.name,
                members.len()
            ))),
            None => Err(self.err(format!(
                "{} {dir} rank {r}, but communicator {comm} has {} ranks",
                self.name,
                members.len()
            ))),
        }
    }

    /// The wall-clock time the call was entered, in ns.
    fn time(&self) -> Result<u64> {
        let Some((enter, _)) = self.call.wall else {
            return Err(self.err(format!("{} without a wall-clock time", self.name)));
        };
        Ok(enter.sec * 1_000_000_000 + u64::from(enter.nsec))
    }

    /// The call's recorded exit, in ns (its entry when the record has no exit stamp).
    fn exit_time(&self) -> Result<u64> {
        match self.call.wall {
            Some((_, exit)) => Ok(exit.sec * 1_000_000_000 + u64::from(exit.nsec)),
            None => self.time(),
        }
    }

    /// The message a send makes (None for MPI_PROC_NULL).
    fn send(
        &self,
        count: i32,
        datatype: i16,
        dest: i32,
        tag: i32,
        comm: i16,
    ) -> Result<Option<SendRec>> {
        let (id, members) = self.comm(comm)?;
        let Some(dest) = self.peer(members, comm, dest, "to")? else {
            return Ok(None);
        };
        let size = *usize::try_from(datatype)
            .ok()
            .and_then(|t| self.type_sizes.get(t))
            .ok_or_else(|| {
                self.err(format!(
                    "{} with unknown datatype index {datatype}",
                    self.name
                ))
            })?;
        Ok(Some(SendRec {
            rank: self.rank,
            dest,
            ctx: (id, 0),
            tag,
            time_ns: self.time()?,
            bytes: count.max(0) as u64 * u64::from(size),
            children: Vec::new(),
            exit_ns: None,
            mode: SendMode::Standard,
        }))
    }

    /// Posts a receive or a probe; returns its index (None for MPI_PROC_NULL: nothing
    /// arrives).
    fn recv(
        &self,
        source: i32,
        tag: i32,
        comm: i16,
        probe: bool,
        recvs: &mut Vec<RecvRec>,
    ) -> Result<Option<usize>> {
        let (id, members) = self.comm(comm)?;
        let source = match source {
            ANY => ANY,
            s => match self.peer(members, comm, s, "from")? {
                Some(w) => w as i32,
                None => return Ok(None),
            },
        };
        recvs.push(RecvRec {
            rank: self.rank,
            ctx: (id, 0),
            source,
            tag,
            status_source: self.call.statuses.first().map(|s| s.1),
            gate: None,
            probe,
            msg: None,
        });
        Ok(Some(recvs.len() - 1))
    }

    /// Expands the rank's part of a collective: its schedule's steps in order, each
    /// send gated by the receives completed before it (the rank's earlier steps', and
    /// for its first sends what the rank completed before the call); the last steps'
    /// receives are left to gate the rank's next send. Returns the messages made.
    fn expand(
        &self,
        coll: &Coll,
        sends: &mut Vec<SendRec>,
        recvs: &mut Vec<RecvRec>,
        completed: &mut Vec<usize>,
        prog: &mut RankBuilder,
    ) -> Result<u64> {
        let time = self.time()?;
        let exit = self.exit_time()?;
        let mut sched = coll
            .plan
            .rank(coll.me)
            .map_err(|e| self.err(format!("{}: {e}", self.name)))?;
        let world = |peer: u32| -> Result<u32> {
            coll.members.get(peer as usize).copied().ok_or_else(|| {
                self.err(format!(
                    "{}: peer {peer} outside a communicator of {} ranks",
                    self.name,
                    coll.members.len()
                ))
            })
        };
        let mut step = Step::default();
        let mut made = 0;
        // A step's sends and receives are posted together and all waited for before
        // the next step (MPICH's blocking algorithms).
        let mut posted = Vec::new();
        while sched.next_into(&mut step) {
            posted.clear();
            for t in &step.sends {
                let s = SendRec {
                    rank: self.rank,
                    dest: world(t.peer)?,
                    ctx: coll.ctx,
                    tag: 0,
                    time_ns: time,
                    bytes: t.bytes,
                    children: Vec::new(),
                    exit_ns: Some(exit),
                    mode: SendMode::Standard,
                };
                let i = gate(sends, recvs, completed, s);
                prog.send(i);
                posted.push(Req::Send(i as u32));
                made += 1;
            }
            for t in &step.recvs {
                recvs.push(RecvRec {
                    rank: self.rank,
                    ctx: coll.ctx,
                    source: world(t.peer)? as i32,
                    tag: 0,
                    status_source: None,
                    gate: None,
                    probe: false,
                    msg: None,
                });
                completed.push(recvs.len() - 1);
                prog.recv(recvs.len() - 1);
                posted.push(Req::Recv((recvs.len() - 1) as u32));
            }
            prog.wait(posted.iter().copied());
        }
        Ok(made)
    }
}

/// The ranks' programs (moved out of `st`), with the messages and receives they name.
fn program(st: &mut State, prefix: &str) -> Program {
    let msgs = st
        .sends
        .iter()
        .map(|s| ProgMsg {
            src: s.rank,
            dst: s.dest,
            bytes: s.bytes,
            mode: s.mode,
            recv: None,
            collective: s.ctx.1 > 0,
            recorded: s.time_ns,
        })
        .collect::<Vec<_>>();
    let mut p = Program {
        msgs,
        recvs: Vec::with_capacity(st.recvs.len()),
        ranks: std::mem::take(&mut st.programs),
        name: format!("DUMPI trace {prefix}"),
        untimed: st.untimed.take(),
    };
    for (i, r) in st.recvs.iter().enumerate() {
        if let (Some(m), false) = (r.msg, r.probe) {
            p.msgs[m].recv = Some(i as u32);
        }
        p.recvs.push(ProgRecv {
            rank: r.rank,
            msg: r.msg.map(|m| m as u32),
        });
    }
    p
}

/// Adds a rank's send; the receives completed since its previous send gate it.
/// Returns its index.
fn gate(
    sends: &mut Vec<SendRec>,
    recvs: &mut [RecvRec],
    completed: &mut Vec<usize>,
    s: SendRec,
) -> usize {
    for r in completed.drain(..) {
        recvs[r].gate = Some(sends.len());
    }
    sends.push(s);
    sends.len() - 1
}

/// Matches every receive to a send (MPI order per communicator, see the module doc) and
/// records each matched send's dependants; a probe finds its send without taking it.
/// Returns (matched, unmatched) receive counts, probes not counted.
fn match_receives(
    sends: &mut [SendRec],
    recvs: &mut [RecvRec],
    ranks: u32,
    table: &CommTable,
) -> (u64, u64) {
    // Per (context, source, destination): the sends in the sender's program order, and
    // how many at the front are already matched.
    let mut queues: HashMap<(Ctx, u32, u32), (usize, Vec<usize>)> = HashMap::new();
    for (i, s) in sends.iter().enumerate() {
        queues.entry((s.ctx, s.rank, s.dest)).or_default().1.push(i);
    }
    let mut taken = vec![false; sends.len()];
    let (mut matched, mut unmatched) = (0, 0);
    for r in recvs.iter_mut() {
        let mut first = |src: u32, taken: &[bool]| -> Option<usize> {
            let (head, q) = queues.get_mut(&(r.ctx, src, r.rank))?;
            while *head < q.len() && taken[q[*head]] {
                *head += 1;
            }
            q[*head..]
                .iter()
                .copied()
                .find(|&i| !taken[i] && (r.tag == ANY || sends[i].tag == r.tag))
        };
        let source = match r.source {
            // The status names a rank of the receive's communicator.
            ANY => r.status_source.and_then(|s| {
                let m = table.members(r.ctx.0)?;
                m.get(usize::try_from(s).ok()?).copied()
            }),
            s => Some(s as u32),
        };
        let pick = match source {
            Some(s) => first(s, &taken),
            None => (0..ranks)
                .filter_map(|s| first(s, &taken))
                .min_by_key(|&i| (sends[i].time_ns, sends[i].rank)),
        };
        match pick {
            Some(i) => {
                if !r.probe {
                    taken[i] = true;
                    matched += 1;
                }
                r.msg = Some(i);
                sends[i].children.extend(r.gate);
            }
            None if !r.probe => unmatched += 1,
            None => {}
        }
    }
    (matched, unmatched)
}

/// The messages in time order, parents first; times relative to the earliest send.
fn order(sends: &mut [SendRec], prefix: &str) -> Result<Vec<TraceMsg>> {
    for s in sends.iter_mut() {
        s.children.sort_unstable();
        s.children.dedup();
    }
    let t0 = sends.iter().map(|s| s.time_ns).min().unwrap_or(0);
    // Each send's successor is the rank's next send.
    let successor: Vec<Option<usize>> = (0..sends.len())
        .map(|i| (i + 1 < sends.len() && sends[i + 1].rank == sends[i].rank).then_some(i + 1))
        .collect();
    let mut parents = vec![0u32; sends.len()];
    for (i, s) in sends.iter().enumerate() {
        for c in s.children.iter().chain(&successor[i]) {
            parents[*c] += 1;
        }
    }
    let mut ready: BinaryHeap<Reverse<(u64, usize)>> = parents
        .iter()
        .enumerate()
        .filter(|(_, &p)| p == 0)
        .map(|(i, _)| Reverse((sends[i].time_ns, i)))
        .collect();
    let mut out = Vec::with_capacity(sends.len());
    while let Some(Reverse((_, i))) = ready.pop() {
        let s = &sends[i];
        for &c in s.children.iter().chain(&successor[i]) {
            parents[c] -= 1;
            if parents[c] == 0 {
                ready.push(Reverse((sends[c].time_ns, c)));
            }
        }
        out.push(TraceMsg {
            id: i as u64,
            time: s.time_ns - t0,
            src: s.rank,
            dst: s.dest,
            size: s.bytes,
            children: s.children.iter().map(|&c| c as u64).collect(),
            successor: successor[i].map(|c| c as u64),
            lag_from: s.exit_ns.map(|e| e.saturating_sub(t0)),
        });
    }
    if out.len() < sends.len() {
        return Err(Error::Trace(format!(
            "DUMPI trace {prefix}: {} sends wait, through their ranks' receives, for one \
             another (the trace's sends and receives do not match up)",
            sends.len() - out.len()
        )));
    }
    Ok(out)
}

impl TraceSource for MpiTrace {
    fn next_msg(&mut self) -> Result<Option<TraceMsg>> {
        Ok(self.msgs.next())
    }
    fn take_program(&mut self) -> Option<Program> {
        self.program.take()
    }
    fn has_program(&self) -> bool {
        self.program.is_some()
    }
    fn order_by_time(&mut self) {
        // Parents first is for dependency-driven replay; open loop creates every message
        // at its recorded time, so it reads them in that order.
        let mut rest: Vec<TraceMsg> = std::mem::take(&mut self.msgs).collect();
        rest.sort_by_key(|m| (m.time, m.id));
        self.msgs = rest.into_iter();
    }
    fn declared_messages(&self) -> Option<u64> {
        Some(self.total)
    }
    fn unit(&self) -> SizeUnit {
        SizeUnit::Bytes
    }
    fn endpoints(&self) -> Option<u32> {
        Some(self.ranks)
    }
    fn describe(&self) -> String {
        self.desc.clone()
    }
}

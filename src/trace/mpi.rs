//! An MPI trace as network messages: the rank files of a DUMPI trace ([`super::dumpi`])
//! merged into one message stream with dependencies (../shared/traces/FORMATS.md §3.4).
//!
//! - One message per send (Send, Bsend, Ssend, Rsend, the Isend variants, and the send
//!   half of Sendrecv and Sendrecv_replace) of
//!   count × size(datatype) bytes (sizes from the file) from the rank to `dest`, at the
//!   wall-clock time the send was entered, in nanoseconds after the earliest such time of
//!   any rank. Sends to a negative rank (MPI_PROC_NULL) carry nothing and are dropped.
//! - Receives are matched to sends the way MPI does for one communicator: a rank's
//!   receives in the order it posted them, each taking the first not yet matched send
//!   from its source (in the sender's program order) whose tag it accepts. A receive
//!   from MPI_ANY_SOURCE takes the source its recorded status names, else the earliest
//!   such send of any rank. Sends nobody receives (a partial trace) are still messages.
//! - A receive completes at a blocking Recv or Sendrecv (after the Sendrecv's own send,
//!   which does not wait for it), or at the Wait or Waitall that names its Irecv's
//!   request. The rank's first send after that completion depends on the received
//!   message (created no earlier than its delivery plus the replay's gap), and every
//!   send is the program-order successor of the rank's previous one (a rank held up
//!   stays held up: see [`super::TraceMsg::successor`]).
//! - Only MPI_COMM_WORLD is read (`comm` resolves the others, but this replay does not
//!   use it yet). Collectives are refused with the call's name and byte offset — their
//!   traffic depends on an algorithm the trace does not record — unless the caller asks
//!   to skip Barrier and Allreduce; their synchronisation and traffic are then missing
//!   from the replay, and the trace's description says how many were skipped. Other
//!   calls that complete requests or move data (Waitany, Test, persistent requests,
//!   one-sided, MPI-IO) are refused likewise; communicator and bookkeeping calls are
//!   passed.
//!
//! Unlike Netrace and text traces, a DUMPI trace is read whole: matching needs every
//! rank's calls. The stream is sorted by time, except that a message never comes before
//! the messages it depends on (ranks' clocks are not synchronised, so a receiver's
//! send may carry an earlier time than the message it waited for).
//!
//! Not here: decoding the records (`dumpi`), replaying (`engine::replay`).

use super::dumpi::{call_name, Args, CallClass, DumpiFile};
use super::{SizeUnit, TraceMsg, TraceSource};
use crate::error::{Error, Result};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

/// DUMPI's MPI_COMM_WORLD.
const COMM_WORLD: i16 = 2;
/// DUMPI's MPI_ANY_SOURCE and MPI_ANY_TAG.
const ANY: i32 = -1;

/// What to do with the collectives whose records can be skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Collectives {
    /// Refuse the trace, naming the first collective and its offset.
    #[default]
    Refuse,
    /// Skip Barrier and Allreduce (their traffic and synchronisation are lost).
    Skip,
}

struct SendRec {
    rank: u32,
    dest: u32,
    tag: i32,
    time_ns: u64,
    bytes: u64,
    /// The send that waits for this message's delivery.
    child: Option<usize>,
}

struct RecvRec {
    rank: u32,
    source: i32,
    tag: i32,
    /// The source its status recorded (ANY_SOURCE receives).
    status_source: Option<i32>,
    /// The rank's first send after this receive completed.
    gate: Option<usize>,
}

/// A DUMPI trace, matched and ordered, ready to replay.
pub struct MpiTrace {
    msgs: std::vec::IntoIter<TraceMsg>,
    /// Messages matched in all.
    total: u64,
    ranks: u32,
    desc: String,
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
            let text = std::fs::read_to_string(&m).map_err(|source| Error::Io {
                path: m.display().to_string(),
                source,
            })?;
            let mut ranks = None;
            let mut prefix_in = None;
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
            (0..ranks).map(file).collect()
        }
        None => (0..)
            .map(file)
            .take_while(|f| f.exists())
            .collect::<Vec<_>>(),
    };
    if files.is_empty() {
        return Err(bad(format!("no rank file {}", file(0).display())));
    }
    Ok((prefix, files))
}

impl MpiTrace {
    /// Reads, matches and orders the DUMPI trace `path` names (see [`rank_files`]).
    pub fn load(path: &Path, collectives: Collectives) -> Result<Self> {
        let (prefix, files) = rank_files(path)?;
        let ranks = files.len() as u32;
        let mut sends: Vec<SendRec> = Vec::new();
        let mut recvs: Vec<RecvRec> = Vec::new();
        let mut skipped = 0u64;
        for (rank, f) in files.iter().enumerate() {
            skipped += read_rank(f, rank as u32, ranks, collectives, &mut sends, &mut recvs)?;
        }
        let (matched, unmatched) = match_receives(&mut sends, &recvs, ranks);
        let msgs = order(&sends, &prefix)?;
        let desc = format!(
            "DUMPI trace {} ({ranks} ranks, {} messages, times in ns, {matched} receives \
             matched, {unmatched} receives without a send{})",
            prefix,
            msgs.len(),
            if skipped > 0 {
                format!(", {skipped} collective calls skipped")
            } else {
                String::new()
            }
        );
        Ok(MpiTrace {
            total: msgs.len() as u64,
            msgs: msgs.into_iter(),
            ranks,
            desc,
        })
    }
}

/// Decodes one rank's file into its sends and receives; returns the collectives skipped.
fn read_rank(
    path: &Path,
    rank: u32,
    ranks: u32,
    collectives: Collectives,
    sends: &mut Vec<SendRec>,
    recvs: &mut Vec<RecvRec>,
) -> Result<u64> {
    let mut f = DumpiFile::open(path)?;
    let mut requests: HashMap<i32, usize> = HashMap::new();
    let mut completed: Vec<usize> = Vec::new();
    let mut skipped = 0;
    while let Some(c) = f.next_call()? {
        let name = call_name(c.label).unwrap_or("unknown");
        let here = Here {
            call: &c,
            name,
            rank,
            ranks,
            type_sizes: &f.type_sizes,
            path,
        };
        match c.args {
            Args::Send {
                count,
                datatype,
                dest,
                tag,
                comm,
                ..
            } => {
                here.world(comm)?;
                if let Some(s) = here.send(count, datatype, dest, tag)? {
                    gate(sends, recvs, &mut completed, s);
                }
            }
            Args::Recv {
                source,
                tag,
                comm,
                request,
                ..
            } => {
                here.world(comm)?;
                if let Some(r) = here.recv(source, tag, recvs) {
                    match request {
                        Some(q) => {
                            requests.insert(q, r);
                        }
                        None => completed.push(r),
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
                here.world(comm)?;
                if let Some(s) = here.send(sendcount, sendtype, dest, sendtag)? {
                    gate(sends, recvs, &mut completed, s);
                }
                if let Some(r) = here.recv(source, recvtag, recvs) {
                    completed.push(r);
                }
            }
            Args::Wait { requests: ref qs } => {
                for (k, q) in qs.iter().enumerate() {
                    if let Some(i) = requests.remove(q) {
                        if let Some(s) = c.statuses.get(k) {
                            recvs[i].status_source.get_or_insert(s.1);
                        }
                        completed.push(i);
                    }
                }
            }
            Args::Barrier { .. } | Args::Allreduce { .. } => match collectives {
                Collectives::Skip => skipped += 1,
                Collectives::Refuse => {
                    return Err(here.err(format!(
                        "unsupported MPI call {name}: routemu replays point-to-point \
                         messages only (collectives need an algorithm the trace does not \
                         record; --collectives skip drops Barrier and Allreduce)"
                    )))
                }
            },
            // Communicator and group calls move no messages (sends on communicators
            // other than MPI_COMM_WORLD are refused above), nor do bookkeeping calls.
            ref a if matches!(a.class(), CallClass::Communicator | CallClass::NoTraffic) => {}
            _ => {
                return Err(here.err(format!(
                    "unsupported MPI call {name}: routemu replays point-to-point messages \
                     only (Send and Isend variants, Recv, Irecv, Sendrecv, Wait, Waitall)"
                )))
            }
        }
    }
    Ok(skipped)
}

/// A call being read, with what turning it into records needs.
struct Here<'a> {
    call: &'a super::dumpi::Call,
    name: &'static str,
    rank: u32,
    ranks: u32,
    type_sizes: &'a [u32],
    path: &'a Path,
}

impl Here<'_> {
    fn err(&self, what: String) -> Error {
        Error::Trace(format!(
            "{}: byte {}: {what}",
            self.path.display(),
            self.call.offset
        ))
    }

    /// Only MPI_COMM_WORLD is read.
    fn world(&self, comm: i16) -> Result<()> {
        if comm == COMM_WORLD {
            Ok(())
        } else {
            Err(self.err(format!(
                "{} on communicator {comm}: only MPI_COMM_WORLD is supported",
                self.name
            )))
        }
    }

    /// The message a send makes (None for MPI_PROC_NULL).
    fn send(&self, count: i32, datatype: i16, dest: i32, tag: i32) -> Result<Option<SendRec>> {
        let name = self.name;
        if dest < 0 {
            return Ok(None);
        }
        if dest as u32 >= self.ranks {
            return Err(self.err(format!(
                "{name} to rank {dest}, but the trace has {} ranks",
                self.ranks
            )));
        }
        let size = *self
            .type_sizes
            .get(datatype as usize)
            .ok_or_else(|| self.err(format!("{name} with unknown datatype index {datatype}")))?;
        let Some((enter, _)) = self.call.wall else {
            return Err(self.err(format!("{name} without a wall-clock time")));
        };
        Ok(Some(SendRec {
            rank: self.rank,
            dest: dest as u32,
            tag,
            time_ns: enter.sec * 1_000_000_000 + enter.nsec as u64,
            bytes: count.max(0) as u64 * size as u64,
            child: None,
        }))
    }

    /// Posts a receive; returns its index (None for MPI_PROC_NULL: nothing arrives).
    fn recv(&self, source: i32, tag: i32, recvs: &mut Vec<RecvRec>) -> Option<usize> {
        if source < ANY || source >= self.ranks as i32 {
            return None;
        }
        recvs.push(RecvRec {
            rank: self.rank,
            source,
            tag,
            status_source: self.call.statuses.first().map(|s| s.1),
            gate: None,
        });
        Some(recvs.len() - 1)
    }
}

/// Adds a rank's send; the receives completed since its previous send gate it.
fn gate(sends: &mut Vec<SendRec>, recvs: &mut [RecvRec], completed: &mut Vec<usize>, s: SendRec) {
    for r in completed.drain(..) {
        recvs[r].gate = Some(sends.len());
    }
    sends.push(s);
}

/// Matches every receive to a send (MPI order, see the module doc) and records each
/// matched send's dependant; returns (matched, unmatched) receive counts.
fn match_receives(sends: &mut [SendRec], recvs: &[RecvRec], ranks: u32) -> (u64, u64) {
    // Per (source, destination): the sends in the sender's program order, and how many
    // at the front are already matched.
    let mut queues: HashMap<(u32, u32), (usize, Vec<usize>)> = HashMap::new();
    for (i, s) in sends.iter().enumerate() {
        queues.entry((s.rank, s.dest)).or_default().1.push(i);
    }
    let mut taken = vec![false; sends.len()];
    let (mut matched, mut unmatched) = (0, 0);
    for r in recvs {
        let mut first = |src: u32, taken: &[bool]| -> Option<usize> {
            let (head, q) = queues.get_mut(&(src, r.rank))?;
            while *head < q.len() && taken[q[*head]] {
                *head += 1;
            }
            q[*head..]
                .iter()
                .copied()
                .find(|&i| !taken[i] && (r.tag == ANY || sends[i].tag == r.tag))
        };
        let source = match r.source {
            ANY => r.status_source.filter(|&s| s >= 0 && (s as u32) < ranks),
            s => Some(s),
        };
        let pick = match source {
            Some(s) => first(s as u32, &taken),
            None => (0..ranks)
                .filter_map(|s| first(s, &taken))
                .min_by_key(|&i| (sends[i].time_ns, sends[i].rank)),
        };
        match pick {
            Some(i) => {
                taken[i] = true;
                sends[i].child = r.gate;
                matched += 1;
            }
            None => unmatched += 1,
        }
    }
    (matched, unmatched)
}

/// The messages in time order, parents first; times relative to the earliest send.
fn order(sends: &[SendRec], prefix: &str) -> Result<Vec<TraceMsg>> {
    let t0 = sends.iter().map(|s| s.time_ns).min().unwrap_or(0);
    // Each send's successor is the rank's next send.
    let successor: Vec<Option<usize>> = (0..sends.len())
        .map(|i| (i + 1 < sends.len() && sends[i + 1].rank == sends[i].rank).then_some(i + 1))
        .collect();
    let mut parents = vec![0u32; sends.len()];
    for (i, s) in sends.iter().enumerate() {
        for c in s.child.iter().chain(&successor[i]) {
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
        for &c in s.child.iter().chain(&successor[i]) {
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
            children: s.child.iter().map(|&c| c as u64).collect(),
            successor: successor[i].map(|c| c as u64),
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

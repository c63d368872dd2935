//! An MPI trace as programs, one per rank: every recorded call in order, with its
//! recorded entry and exit, and what it does on the network — post a send, post a
//! receive, wait for requests, probe — in the order an MPI library does it. This is
//! what elastic replay runs (`experiments::replay::elastic`): the time between a rank's
//! calls is its compute, the time inside them is replaced by the emulated network.
//!
//! Built by [`crate::mpi_semantics::matching`] in the same pass, with the same matching, as the message
//! stream of open and dependency-driven replay: a program's message `i` is the stream's
//! message id `i`, a receive is matched to the send the stream's dependencies use.
//!
//! What each call becomes (docs/dumpi.md, "Elastic replay"):
//! - a blocking send: [`Op::Send`] then [`Op::Wait`] on it; a non-blocking one: the
//!   send, its request kept for the Wait/Test that names it; likewise receives;
//! - Sendrecv: the send, the receive, one wait on both;
//! - Wait, Waitall, Test/Testall with a true flag, and the indices that
//!   Waitany/Waitsome/Testany/Testsome report complete: a wait on those requests (a
//!   rank that polled until a request completed waits for it);
//! - a probe (Probe, Iprobe with a true flag): [`Op::Probe`], waiting for the message
//!   to arrive without taking it;
//! - a collective: its expanded algorithm's steps ([`crate::mpi_semantics::collectives`]), each posting
//!   its sends and receives and waiting for all of them before the next step, as
//!   MPICH's blocking algorithms do;
//! - every other call (Init, Finalize, communicator and bookkeeping calls, a Test that
//!   found nothing, Cancel, Request_free): no operation — the network has nothing to
//!   replace, so its recorded duration is kept.
//!
//! Not here: decoding, matching (`mpi`), running the programs (`experiments::replay`).

/// How a send completes (MPI's send modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendMode {
    /// Send, Isend: by the protocol its size chooses (eager or rendezvous).
    #[default]
    Standard,
    /// Ssend, Issend: when the receiver has matched it.
    Sync,
    /// Bsend, Ibsend: at once (the data is copied to the attached buffer).
    Buffered,
    /// Rsend, Irsend: as a standard send (the receive is known to be posted).
    Ready,
}

impl SendMode {
    /// The mode of a send call by its MPI name (Standard for any other name).
    pub fn of_call(name: &str) -> SendMode {
        match name {
            "MPI_Ssend" | "MPI_Issend" | "MPI_Ssend_init" => SendMode::Sync,
            "MPI_Bsend" | "MPI_Ibsend" | "MPI_Bsend_init" => SendMode::Buffered,
            "MPI_Rsend" | "MPI_Irsend" | "MPI_Rsend_init" => SendMode::Ready,
            _ => SendMode::Standard,
        }
    }
}

/// One message of the programs (a send).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgMsg {
    /// Sending rank (world).
    pub src: u32,
    /// Receiving rank (world).
    pub dst: u32,
    /// Bytes.
    pub bytes: u64,
    /// Its send mode.
    pub mode: SendMode,
    /// The receive that takes it (None: nobody receives it in the trace).
    pub recv: Option<u32>,
    /// Whether it is a collective's transfer.
    pub collective: bool,
    /// Recorded entry of the call that sent it, ns on the sender's clock.
    pub recorded: u64,
}

/// One posted receive or probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgRecv {
    /// The receiving rank.
    pub rank: u32,
    /// The message it takes (a probe: finds); None: no send in the trace matches it.
    pub msg: Option<u32>,
}

/// A request a wait names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Req {
    /// A send's completion (its message).
    Send(u32),
    /// A receive's completion (its index).
    Recv(u32),
}

/// What a call does, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Post the send of a message.
    Send(u32),
    /// Post a receive.
    Recv(u32),
    /// Wait until the message of a probe (a receive index) has arrived.
    Probe(u32),
    /// Wait until every request of `reqs[from..to]` has completed.
    Wait {
        /// First request.
        from: u32,
        /// One past the last.
        to: u32,
    },
}

/// One recorded call of a rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgCall {
    /// DUMPI label (its name: `trace::dumpi::call_name`).
    pub label: u16,
    /// Recorded entry and exit, ns on the rank's clock.
    pub enter: u64,
    /// Recorded exit.
    pub exit: u64,
    /// Its operations: `ops[from..to]` of the rank; none for a call whose recorded
    /// duration is kept.
    pub ops: (u32, u32),
}

impl ProgCall {
    /// Whether the call does anything on the network (else its recorded time is kept).
    pub fn communicates(&self) -> bool {
        self.ops.1 > self.ops.0
    }
}

/// One rank's program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankProgram {
    /// Its calls, in program order.
    pub calls: Vec<ProgCall>,
    /// The calls' operations, flat.
    pub ops: Vec<Op>,
    /// The requests the waits name, flat.
    pub reqs: Vec<Req>,
}

/// Every rank's program of an MPI trace, and the messages and receives they name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// The messages, by id (the message stream's ids).
    pub msgs: Vec<ProgMsg>,
    /// The receives and probes, by index.
    pub recvs: Vec<ProgRecv>,
    /// Per world rank.
    pub ranks: Vec<RankProgram>,
    /// What the trace is (for errors and the summary).
    pub name: String,
    /// Why the programs cannot be timed (a call without a wall-clock stamp), if so.
    pub untimed: Option<String>,
}

/// Builds a rank's program call by call (see the module doc for what each call adds).
#[derive(Default)]
pub(crate) struct RankBuilder {
    prog: RankProgram,
    open: bool,
}

impl RankBuilder {
    /// Starts a call entered at `enter` and left at `exit` (ns).
    pub(crate) fn call(&mut self, label: u16, enter: u64, exit: u64) {
        let at = self.prog.ops.len() as u32;
        self.prog.calls.push(ProgCall {
            label,
            enter,
            exit: exit.max(enter),
            ops: (at, at),
        });
        self.open = true;
    }

    fn push(&mut self, op: Op) {
        debug_assert!(self.open, "an operation belongs to a call");
        self.prog.ops.push(op);
        if let Some(c) = self.prog.calls.last_mut() {
            c.ops.1 = self.prog.ops.len() as u32;
        }
    }

    /// The call posts the send of message `msg`.
    pub(crate) fn send(&mut self, msg: usize) {
        self.push(Op::Send(msg as u32));
    }

    /// The call posts receive `recv`.
    pub(crate) fn recv(&mut self, recv: usize) {
        self.push(Op::Recv(recv as u32));
    }

    /// The call probes for the message of `recv`.
    pub(crate) fn probe(&mut self, recv: usize) {
        self.push(Op::Probe(recv as u32));
    }

    /// The call waits for `reqs` (nothing when empty).
    pub(crate) fn wait(&mut self, reqs: impl IntoIterator<Item = Req>) {
        let from = self.prog.reqs.len() as u32;
        self.prog.reqs.extend(reqs);
        let to = self.prog.reqs.len() as u32;
        if to > from {
            self.push(Op::Wait { from, to });
        }
    }

    /// The finished program.
    pub(crate) fn finish(self) -> RankProgram {
        self.prog
    }
}

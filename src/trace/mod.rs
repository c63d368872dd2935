//! Message traces: what a recorded message is ([`TraceMsg`]), and readers that stream
//! them from files in time order — routemu's own text format ([`text`]) and Netrace
//! ([`netrace`]); these never hold a whole trace: memory does not grow with its length.
//! DUMPI MPI traces ([`dumpi`] decodes the records) are read whole, since matching needs
//! every rank; resolving communicators, matching receives to sends and expanding
//! collectives is `mpi_semantics`' job, replaying is `experiments::replay`'s.
//!
//! Dependencies are given the way Netrace gives them: a message lists its *children*,
//! the later messages that may not be injected before it has been delivered. Parents
//! come before their children in a trace, so a replay that reads in order always knows a
//! message's parents when it reads it.

pub mod dumpi;
pub mod dumpi_write;
pub mod netrace;
pub mod program;
pub mod text;

use crate::foundation::error::{Error, Result};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The unit of a trace's message sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeUnit {
    /// Bytes (turned into flits by the replay's flit size).
    Bytes,
    /// Flits.
    Flits,
}

/// One recorded message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceMsg {
    /// Its id in the trace (unique; line or packet order when the trace gives none).
    pub id: u64,
    /// Recorded time, in the trace's units.
    pub time: u64,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Size, in the trace's unit.
    pub size: u64,
    /// Ids of later messages that wait for this one to be delivered.
    pub children: Vec<u64>,
    /// The same source's next message in program order, when the trace knows it
    /// (DUMPI): in dependency-driven replay it is created no earlier than its recorded
    /// time plus however late this one was created, so a rank held up by a receive
    /// stays held up for the rest of its sends.
    pub successor: Option<u64>,
    /// The recorded time, in the trace's units, that the successor's lag is measured
    /// from when it is not this message's own `time`: a collective's sends are stamped
    /// with the rank's entry into the call, but the rank's next call starts from its
    /// recorded exit, so a rank that waited inside the collective is late only by what
    /// the replay adds to that exit (DUMPI; None elsewhere).
    pub lag_from: Option<u64>,
}

/// A stream of messages in time order.
pub trait TraceSource {
    /// The next message, None at the end; an error names the file and the place.
    fn next_msg(&mut self) -> Result<Option<TraceMsg>>;
    /// The unit of the sizes.
    fn unit(&self) -> SizeUnit;
    /// Number of endpoints when the format says (Netrace's header), else None.
    fn endpoints(&self) -> Option<u32>;
    /// What the trace is, for the summary.
    fn describe(&self) -> String;
    /// Where the last message read came from (`file:line`, `file: byte N`), for errors
    /// about it found after reading; the file by default.
    fn place(&self) -> String {
        self.describe()
    }
    /// Whether the ids strictly increase in reading order (text and Netrace traces:
    /// their readers refuse anything else). Then an id smaller than the last one read
    /// will never come, and a dependency on it can be judged dangling at once.
    fn ids_increase(&self) -> bool {
        false
    }
    /// Whether only part of the trace is read (a Netrace `--region`): dependants
    /// outside it are expected, not an error.
    fn partial(&self) -> bool {
        false
    }
    /// Messages the source yields in all, as known when it was opened (Netrace's header
    /// or region, an MPI trace matched in memory), for progress bars; None when only
    /// reading to the end tells.
    fn declared_messages(&self) -> Option<u64> {
        None
    }
    /// The ranks' programs, for elastic replay, when the trace records calls (DUMPI);
    /// None for traces of messages only (text, Netrace) and once taken.
    fn take_program(&mut self) -> Option<program::Program> {
        None
    }
    /// Whether [`TraceSource::take_program`] has programs to give.
    fn has_program(&self) -> bool {
        false
    }
    /// Yields the messages not yet read in recorded-time order (ties by id) instead of
    /// parents first: for open-loop replay, where dependencies are not followed. Text
    /// and Netrace traces are in time order already.
    fn order_by_time(&mut self) {}
}

/// Opens `path` for reading, decompressing gzip or bzip2 (recognised by their magic
/// bytes) on the fly.
pub fn open_maybe_compressed(path: &Path) -> Result<Box<dyn BufRead>> {
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let file = crate::foundation::inputs::open_reader(path).map_err(io)?;
    let mut r = BufReader::new(file);
    let magic = r.fill_buf().map_err(io)?.to_vec();
    Ok(if magic.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(r)))
    } else if magic.starts_with(b"BZh") {
        Box::new(BufReader::new(bzip2::read::MultiBzDecoder::new(r)))
    } else {
        Box::new(r)
    })
}

/// Reads exactly `buf.len()` bytes; Ok(false) at a clean end (no byte read).
pub(crate) fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<bool> {
    if buf.is_empty() {
        return Ok(true);
    }
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if got == 0 {
        Ok(false)
    } else if got < buf.len() {
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("truncated: {got} of {} bytes", buf.len()),
        ))
    } else {
        Ok(true)
    }
}

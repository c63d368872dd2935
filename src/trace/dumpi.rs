//! SST DUMPI rank files (`PREFIX-NNNN.bin`; ../shared/traces/FORMATS.md §3): the call
//! records of one MPI rank, big-endian, with an index of sections in the last 64 bytes.
//! This module decodes the records a network replay needs — the point-to-point calls
//! (Send, Bsend, Ssend, Rsend, Isend and its variants, Recv, Irecv, Sendrecv,
//! Sendrecv_replace, Wait, Waitall) and the bookkeeping around them (Init, Finalize,
//! Comm_rank, Comm_size) — plus Barrier and Allreduce, so that Sandia's own test dump
//! can be checked record by record. Records
//! carry no length, so any other call cannot be skipped: it is an error naming the call
//! and its byte offset.
//!
//! Not here: turning the calls of all ranks into messages (`mpi`).

use crate::error::{Error, Result};
use std::path::Path;

/// A time as DUMPI stores it, bias added: seconds and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    /// Seconds.
    pub sec: u64,
    /// Nanoseconds.
    pub nsec: u32,
}

/// The arguments of a decoded call.
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
    /// Wait and Waitall: the requests waited for.
    Wait {
        /// Requests.
        requests: Vec<i32>,
    },
    /// Init: the program's arguments.
    Init {
        /// argv.
        argv: Vec<String>,
    },
    /// Comm_rank and Comm_size.
    CommQuery {
        /// Communicator.
        comm: i16,
        /// The rank or size returned.
        value: i32,
    },
    /// Barrier.
    Barrier {
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
    /// Finalize.
    None,
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
    /// Statuses recorded: (bytes, source, cancelled, error, tag).
    pub statuses: Vec<(i32, i32, u8, u8, i32)>,
    /// The arguments.
    pub args: Args,
}

/// The MPI name of a DUMPI function label, for the labels routemu knows.
pub fn call_name(label: u16) -> Option<&'static str> {
    Some(match label {
        0 => "MPI_Send",
        1 => "MPI_Recv",
        3 => "MPI_Bsend",
        4 => "MPI_Ssend",
        5 => "MPI_Rsend",
        8 => "MPI_Isend",
        9 => "MPI_Ibsend",
        10 => "MPI_Issend",
        11 => "MPI_Irsend",
        12 => "MPI_Irecv",
        13 => "MPI_Wait",
        16 => "MPI_Waitany",
        18 => "MPI_Waitall",
        20 => "MPI_Waitsome",
        33 => "MPI_Sendrecv",
        34 => "MPI_Sendrecv_replace",
        52 => "MPI_Barrier",
        53 => "MPI_Bcast",
        58 => "MPI_Allgather",
        60 => "MPI_Alltoall",
        62 => "MPI_Reduce",
        65 => "MPI_Allreduce",
        72 => "MPI_Comm_group",
        81 => "MPI_Comm_size",
        82 => "MPI_Comm_rank",
        124 => "MPI_Init",
        125 => "MPI_Finalize",
        _ => return None,
    })
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
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        let mut f = DumpiFile {
            bytes,
            path: path.display().to_string(),
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

    fn err(&self, offset: u64, what: &str) -> Error {
        Error::Trace(format!("{}: byte {offset}: {what}", self.path))
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.at + n > self.bytes.len() {
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

    fn array(&mut self) -> Result<Vec<i32>> {
        let n = self.u32()? as usize;
        if n > self.bytes.len() / 4 {
            return Err(self.err(self.at as u64, "implausible array length"));
        }
        (0..n).map(|_| self.i32()).collect()
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
        let known = matches!(
            label,
            0 | 1 | 3 | 4 | 5 | 8..=13 | 18 | 33 | 34 | 52 | 65 | 81 | 82 | 124 | 125
        );
        if !known {
            return Err(self.err(
                offset,
                &format!(
                    "unsupported MPI call {} (DUMPI label {label}): routemu reads the \
                     point-to-point calls (Send and Isend variants, Recv, Irecv, Sendrecv, \
                     Wait, Waitall)",
                    call_name(label).unwrap_or("unknown")
                ),
            ));
        }
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
        if mask & 0x80 != 0 {
            return Err(self.err(offset, "PAPI counters in a record are not supported"));
        }
        let mut statuses = Vec::new();
        let args = match label {
            0 | 3 | 4 | 5 | 8..=11 => Args::Send {
                count: self.i32()?,
                datatype: self.i16()?,
                dest: self.i32()?,
                tag: self.i32()?,
                comm: self.i16()?,
                request: if label >= 8 { Some(self.i32()?) } else { None },
            },
            1 | 12 => Args::Recv {
                count: self.i32()?,
                datatype: self.i16()?,
                source: self.i32()?,
                tag: self.i32()?,
                comm: self.i16()?,
                request: if label == 12 { Some(self.i32()?) } else { None },
            },
            33 => Args::SendRecv {
                sendcount: self.i32()?,
                sendtype: self.i16()?,
                dest: self.i32()?,
                sendtag: self.i32()?,
                recvcount: self.i32()?,
                recvtype: self.i16()?,
                source: self.i32()?,
                recvtag: self.i32()?,
                comm: self.i16()?,
            },
            34 => {
                let (count, datatype, dest, sendtag) =
                    (self.i32()?, self.i16()?, self.i32()?, self.i32()?);
                Args::SendRecv {
                    sendcount: count,
                    sendtype: datatype,
                    dest,
                    sendtag,
                    recvcount: count,
                    recvtype: datatype,
                    source: self.i32()?,
                    recvtag: self.i32()?,
                    comm: self.i16()?,
                }
            }
            13 => Args::Wait {
                requests: vec![self.i32()?],
            },
            18 => {
                let _count = self.i32()?;
                Args::Wait {
                    requests: self.array()?,
                }
            }
            52 => Args::Barrier { comm: self.i16()? },
            65 => Args::Allreduce {
                count: self.i32()?,
                datatype: self.i16()?,
                op: self.u8()?,
                comm: self.i16()?,
            },
            81 | 82 => Args::CommQuery {
                comm: self.i16()?,
                value: self.i32()?,
            },
            124 => {
                let argc = self.i32()?.max(0) as usize;
                let mut argv = Vec::with_capacity(argc.min(64));
                for _ in 0..argc {
                    let n = self.u32()? as usize;
                    let s = self.take(n)?;
                    argv.push(
                        String::from_utf8_lossy(s)
                            .trim_end_matches('\0')
                            .to_string(),
                    );
                }
                Args::Init { argv }
            }
            _ => Args::None,
        };
        if matches!(label, 1 | 13 | 18 | 33 | 34) && mask & 0x03 != 0 {
            let n = self.u32()? as usize;
            if n > self.bytes.len() {
                return Err(self.err(self.at as u64, "implausible status count"));
            }
            let tagged = self.version >= (0, 6, 3);
            for _ in 0..n {
                let bytes = self.i32()?;
                let source = self.i32()?;
                let cancelled = self.u8()?;
                let error = self.u8()?;
                let tag = if tagged { self.i32()? } else { 0 };
                statuses.push((bytes, source, cancelled, error, tag));
            }
        }
        Ok(Some(Call {
            label,
            offset,
            thread,
            cpu,
            wall,
            statuses,
            args,
        }))
    }
}

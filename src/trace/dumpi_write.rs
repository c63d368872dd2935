//! Writing SST DUMPI traces: rank files (`PREFIX-NNNN.bin`) laid out byte for byte as
//! sst-dumpi's own writer lays them out, and the `PREFIX.meta` file. It exists so that
//! MPI application skeletons can be turned into traces that routemu's reader
//! ([`crate::trace::dumpi`]) and Sandia's tools (`dumpi2ascii`) read alike
//! (examples/dumpi_gen.rs, docs/dumpi-gen.md).
//!
//! A rank file, in the order sst-dumpi writes it:
//!
//! 1. the magic `FF AA DD 'D' 'U' 'M' 'P' 'I'`;
//! 2. the body: the CPU and wall-clock bias seconds (u32 each), then one record per call
//!    (u16 label, u8 mask, u16 thread, CPU and wall stamps as u16 seconds after the bias
//!    and u32 nanoseconds, entering then returning, then the arguments);
//! 3. the END_OF_STREAM label (293), written just before the header;
//! 4. the header: version (3 × u8), start time (u64), hostname and username (u16 length
//!    and bytes), mesh coordinates and mesh size (u32 count and i32 values each);
//! 5. the footer: a u64 magic `0xf007fee7`, then per label 0..=290 the number of calls
//!    recorded (290 is the total) and the number ignored (u32 each);
//! 6. the keyval record (u32 count, here 0; sst-dumpi does not put it in the index);
//! 7. the PAPI counter names (u32 count, here 0);
//! 8. the datatype sizes (u32 count, u32 bytes per DUMPI datatype index);
//! 9. the function addresses (u32 count, here 0);
//! 10. the index: the magic as u64, then the offsets of sizes, addresses, counter names,
//!     header, body, footer and keyval (0: not indexed), u64 each.
//!
//! Everything is big-endian. The mask is what sst-dumpi's default configuration writes:
//! statuses on (bits 0–1), CPU and wall stamps (0x04, 0x08) and the thread id (0x40),
//! where the [`Call`] has them; PAPI counters are not written.
//!
//! Only the records the skeletons need are encoded: MPI_Init, Comm_rank, Comm_size,
//! Send (and Bsend, Ssend, Rsend), Isend (and Ibsend, Issend, Irsend), Recv, Irecv, Wait,
//! Waitall, Barrier, Bcast, Reduce, Allreduce, Alltoall, Allgather, Comm_split and
//! Finalize. Any other call, a call whose arguments do not fit its label, statuses on a
//! call that has no place for them, or a stamp the format cannot hold is an error naming
//! the call; nothing is written for it.
//!
//! Reference (read for the byte layout only; nothing of its code is used): the sst-dumpi
//! sources at commit a4c8bf5bb22e231e3eabe65619d62c239cee8ef1, `dumpi/common/io.c`
//! (header, footer, keyval, counter names, datatype sizes, addresses, index, body start),
//! `dumpi/common/iodefs.h` (field encodings, record prefix, statuses),
//! `dumpi/common/dumpiio.c` (each call's arguments in order), `dumpi/libdumpi/init.c`
//! (the order of the sections at finalize, the meta file's keys),
//! `dumpi/common/types.c` (what the header holds) and `dumpi/common/funclabels.h`,
//! `constants.h` (labels, handles, datatypes).

use crate::foundation::error::{Error, Result};
use crate::trace::dumpi::{Args, Call, Stamp, Status, MAGIC};

/// DUMPI_ALL_FUNCTIONS: the last label the footer counts (its slot holds the total).
pub const ALL_FUNCTIONS: usize = 290;
/// DUMPI_END_OF_STREAM: the label that ends the body.
pub const END_OF_STREAM: u16 = 293;
/// The footer's magic number.
pub const FOOTER_MAGIC: u64 = 0xf007_fee7;

/// Byte size of each DUMPI datatype index (sst-dumpi `constants.h` order, 28 entries)
/// as MPI reports them on x86-64 Linux: CHAR, BYTE 1, SHORT 2, INT, FLOAT 4, LONG,
/// DOUBLE 8, LONG_DOUBLE 16, the pair types 8 to 20, the error, null, LB and UB
/// entries 0. The testtrace laptop trace in traces/dumpi-sst holds the same table
/// (except LONG_LONG_INT, which its MPI left at 0).
pub const X86_64_TYPE_SIZES: [u32; 28] = [
    0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 8, 8, 8, 1, 0, 0, 8, 12, 12, 6, 8, 20,
];

/// The header of a rank file (and the values of the `.meta` file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// DUMPI version (major, minor, sub); 0.6.9 or later (earlier files had other
    /// layouts, which this writer does not produce).
    pub version: (u8, u8, u8),
    /// Start time, Unix seconds.
    pub start_time: u64,
    /// Host name (at most 65,535 bytes).
    pub hostname: String,
    /// User name (sst-dumpi writes `<none>` when LOGNAME is unset).
    pub username: String,
    /// The node's coordinates in the machine's mesh (empty: no mesh information).
    pub mesh_coords: Vec<i32>,
    /// The mesh's extents, as many as the coordinates.
    pub mesh_size: Vec<i32>,
}

/// One rank's file, built in memory: [`RankWriter::write`] each call in order, then
/// [`RankWriter::finish`].
#[derive(Debug)]
pub struct RankWriter {
    out: Vec<u8>,
    header: Header,
    type_sizes: Vec<u32>,
    cpu_bias: u32,
    wall_bias: u32,
    body: u64,
    calls: Vec<u32>,
}

fn bad(what: String) -> Error {
    Error::Trace(format!("DUMPI writer: {what}"))
}

impl RankWriter {
    /// A rank file with this header and datatype size table. Stamps are stored as seconds
    /// after `cpu_bias` and `wall_bias` (sst-dumpi takes the seconds of the clocks when
    /// it starts), so every stamp must lie within 65,535 s after its bias.
    pub fn new(header: Header, type_sizes: &[u32], cpu_bias: u32, wall_bias: u32) -> Result<Self> {
        if header.version < (0, 6, 9) {
            return Err(bad(format!(
                "version {:?}: only the layout of DUMPI 0.6.9 and later is written",
                header.version
            )));
        }
        if header.mesh_coords.len() != header.mesh_size.len() {
            return Err(bad(format!(
                "{} mesh coordinates but {} mesh extents",
                header.mesh_coords.len(),
                header.mesh_size.len()
            )));
        }
        for (what, s) in [
            ("hostname", &header.hostname),
            ("username", &header.username),
        ] {
            if s.len() > u16::MAX as usize {
                return Err(bad(format!("{what} longer than 65,535 bytes")));
            }
        }
        let mut w = RankWriter {
            out: MAGIC.to_vec(),
            header,
            type_sizes: type_sizes.to_vec(),
            cpu_bias,
            wall_bias,
            body: 0,
            calls: vec![0; ALL_FUNCTIONS + 1],
        };
        w.body = w.out.len() as u64;
        w.u32(cpu_bias);
        w.u32(wall_bias);
        Ok(w)
    }

    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.out.extend(v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.out.extend(v.to_be_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend(v.to_be_bytes());
    }
    /// An int, count, rank, tag or request.
    fn int(&mut self, v: i32) {
        self.u32(v as u32);
    }
    /// A communicator, datatype or group handle.
    fn handle(&mut self, v: i16) {
        self.u16(v as u16);
    }
    /// An array of ints (u32 length first).
    fn ints(&mut self, v: &[i32]) {
        self.u32(v.len() as u32);
        for &x in v {
            self.int(x);
        }
    }
    /// A character array in a record (u32 length, the bytes, no NUL).
    fn chars(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.out.extend(s.as_bytes());
    }
    /// A string of the header (u16 length, the bytes).
    fn string(&mut self, s: &str) {
        self.u16(s.len() as u16);
        self.out.extend(s.as_bytes());
    }
    /// Statuses: a u32 count, then bytes, source, cancelled, error and tag of each.
    fn statuses(&mut self, v: &[Status]) {
        self.u32(v.len() as u32);
        for &(bytes, source, cancelled, error, tag) in v {
            self.int(bytes);
            self.int(source);
            self.u8(cancelled);
            self.u8(error);
            self.int(tag);
        }
    }
    /// Entering and returning stamps, seconds after `bias`.
    fn stamps(&mut self, (a, b): (Stamp, Stamp), bias: u32) {
        for s in [a, b] {
            self.u16((s.sec - u64::from(bias)) as u16);
            self.u32(s.nsec);
        }
    }

    /// Appends one call record. The call's `offset` is ignored; `thread`, `cpu` and
    /// `wall` are written when present, and the mask says which.
    pub fn write(&mut self, call: &Call) -> Result<()> {
        let name = call.name();
        let fail = |why: &str| Err(bad(format!("{name} (label {}): {why}", call.label)));
        if !call.counters.is_empty() {
            return fail("PAPI counters are not written");
        }
        for (what, stamps, bias) in [
            ("CPU", call.cpu, self.cpu_bias),
            ("wall", call.wall, self.wall_bias),
        ] {
            if let Some((a, b)) = stamps {
                for s in [a, b] {
                    let after = s.sec.checked_sub(u64::from(bias));
                    if after.is_none_or(|d| d > u64::from(u16::MAX)) || s.nsec >= 1_000_000_000 {
                        return fail(&format!(
                            "{what} stamp {}.{:09} s is not within 65,535 s after the bias \
                             {bias} s",
                            s.sec, s.nsec
                        ));
                    }
                }
            }
        }
        let has_status = matches!(call.label, 1 | 13 | 18);
        if !has_status && !call.statuses.is_empty() {
            return fail("this call has no place for statuses");
        }
        let start = self.out.len();
        let mut mask = 0x03;
        mask |= if call.thread.is_some() { 0x40 } else { 0 };
        mask |= if call.cpu.is_some() { 0x04 } else { 0 };
        mask |= if call.wall.is_some() { 0x08 } else { 0 };
        self.u16(call.label);
        self.u8(mask);
        if let Some(t) = call.thread {
            self.u16(t);
        }
        if let Some(s) = call.cpu {
            self.stamps(s, self.cpu_bias);
        }
        if let Some(s) = call.wall {
            self.stamps(s, self.wall_bias);
        }
        if !self.args(call.label, &call.args, &call.statuses) {
            self.out.truncate(start);
            return fail(&format!(
                "not written by this encoder with these arguments ({:?})",
                call.args
            ));
        }
        self.calls[call.label as usize] += 1;
        self.calls[ALL_FUNCTIONS] += 1;
        Ok(())
    }

    /// The arguments, in the order sst-dumpi's writer puts them; false when the label is
    /// not one this encoder writes or the arguments are not that call's.
    fn args(&mut self, label: u16, args: &Args, st: &[Status]) -> bool {
        use Args::*;
        match (label, args) {
            (
                0 | 3 | 4 | 5,
                Send {
                    request: Option::None,
                    ..
                },
            )
            | (
                8..=11,
                Send {
                    request: Some(_), ..
                },
            ) => {
                let Send {
                    count,
                    datatype,
                    dest,
                    tag,
                    comm,
                    request,
                } = *args
                else {
                    unreachable!("matched above")
                };
                self.int(count);
                self.handle(datatype);
                self.int(dest);
                self.int(tag);
                self.handle(comm);
                if let Some(r) = request {
                    self.int(r);
                }
            }
            (
                1,
                Recv {
                    request: Option::None,
                    ..
                },
            )
            | (
                12,
                Recv {
                    request: Some(_), ..
                },
            ) => {
                let Recv {
                    count,
                    datatype,
                    source,
                    tag,
                    comm,
                    request,
                } = *args
                else {
                    unreachable!("matched above")
                };
                self.int(count);
                self.handle(datatype);
                self.int(source);
                self.int(tag);
                self.handle(comm);
                match request {
                    Some(r) => self.int(r),
                    Option::None => self.statuses(st),
                }
            }
            (13, Wait { requests }) if requests.len() == 1 => {
                self.int(requests[0]);
                self.statuses(st);
            }
            (18, Wait { requests }) => {
                self.int(requests.len() as i32);
                self.ints(requests);
                self.statuses(st);
            }
            (52, Barrier { comm }) => self.handle(*comm),
            (
                53,
                Bcast {
                    count,
                    datatype,
                    root,
                    comm,
                },
            ) => {
                self.int(*count);
                self.handle(*datatype);
                self.int(*root);
                self.handle(*comm);
            }
            (
                62,
                Reduce {
                    count,
                    datatype,
                    op,
                    root,
                    comm,
                },
            ) => {
                self.int(*count);
                self.handle(*datatype);
                self.u8(*op);
                self.int(*root);
                self.handle(*comm);
            }
            (
                65,
                Allreduce {
                    count,
                    datatype,
                    op,
                    comm,
                },
            ) => {
                self.int(*count);
                self.handle(*datatype);
                self.u8(*op);
                self.handle(*comm);
            }
            (
                58,
                Allgather {
                    sendcount,
                    sendtype,
                    recvcount,
                    recvtype,
                    comm,
                },
            )
            | (
                60,
                Alltoall {
                    sendcount,
                    sendtype,
                    recvcount,
                    recvtype,
                    comm,
                },
            ) => {
                self.int(*sendcount);
                self.handle(*sendtype);
                self.int(*recvcount);
                self.handle(*recvtype);
                self.handle(*comm);
            }
            (81 | 82, CommQuery { comm, value }) => {
                self.handle(*comm);
                self.int(*value);
            }
            (
                86,
                CommSplit {
                    comm,
                    color,
                    key,
                    newcomm,
                },
            ) => {
                self.handle(*comm);
                self.int(*color);
                self.int(*key);
                self.handle(*newcomm);
            }
            (124, Init { argv }) => {
                self.int(argv.len() as i32);
                for a in argv {
                    self.chars(a);
                }
            }
            (125, None) => {}
            _ => return false,
        }
        true
    }

    /// The finished file: the END_OF_STREAM label, header, footer, keyval record,
    /// counter names, datatype sizes, function addresses and index after the body.
    pub fn finish(mut self) -> Vec<u8> {
        self.u16(END_OF_STREAM);
        let header = self.out.len() as u64;
        let h = self.header.clone();
        for v in [h.version.0, h.version.1, h.version.2] {
            self.u8(v);
        }
        self.u64(h.start_time);
        self.string(&h.hostname);
        self.string(&h.username);
        self.ints(&h.mesh_coords);
        self.ints(&h.mesh_size);
        let footer = self.out.len() as u64;
        self.u64(FOOTER_MAGIC);
        for i in 0..=ALL_FUNCTIONS {
            self.u32(self.calls[i]);
        }
        for _ in 0..=ALL_FUNCTIONS {
            self.u32(0); // calls ignored (profiling switched off for them): none
        }
        self.u32(0); // keyval record: no entries (and no index entry, as in sst-dumpi)
        let perflbl = self.out.len() as u64;
        self.u32(0);
        let sizelbl = self.out.len() as u64;
        self.u32(self.type_sizes.len() as u32);
        for i in 0..self.type_sizes.len() {
            self.u32(self.type_sizes[i]);
        }
        let addrlbl = self.out.len() as u64;
        self.u32(0);
        self.u64(u64::from_be_bytes(MAGIC));
        for o in [sizelbl, addrlbl, perflbl, header, self.body, footer, 0] {
            self.u64(o);
        }
        self.out
    }
}

/// The `PREFIX.meta` file sst-dumpi writes beside the rank files (rank 0's header).
pub fn meta(header: &Header, numprocs: u32, fileprefix: &str) -> String {
    format!(
        "hostname={}\nnumprocs={numprocs}\nusername={}\nstartime={}\nfileprefix={fileprefix}\n\
         version={}\nsubversion={}\nsubsubversion={}\n",
        header.hostname,
        header.username,
        header.start_time,
        header.version.0,
        header.version.1,
        header.version.2
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::dumpi::DumpiFile;

    fn header() -> Header {
        Header {
            version: (1, 1, 0),
            start_time: 1_700_000_000,
            hostname: "node0".into(),
            username: "me".into(),
            mesh_coords: vec![1, 0, 0],
            mesh_size: vec![4, 2, 2],
        }
    }

    fn call(label: u16, args: Args) -> Call {
        let s = Stamp {
            sec: 1_700_000_001,
            nsec: 5,
        };
        Call {
            label,
            offset: 0,
            thread: Some(0),
            cpu: Some((Stamp { sec: 0, nsec: 1 }, Stamp { sec: 0, nsec: 2 })),
            wall: Some((s, s)),
            counters: Vec::new(),
            statuses: Vec::new(),
            args,
        }
    }

    #[test]
    fn an_empty_rank_file_has_every_section_where_its_index_says() {
        let w = RankWriter::new(header(), &X86_64_TYPE_SIZES, 0, 1_700_000_000).unwrap();
        let f = w.finish();
        let idx: Vec<u64> = f[f.len() - 64..]
            .chunks(8)
            .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(idx[0], u64::from_be_bytes(MAGIC));
        let (sizelbl, addrlbl, perflbl, hdr, body, footer, keyval) =
            (idx[1], idx[2], idx[3], idx[4], idx[5], idx[6], idx[7]);
        assert_eq!((body, keyval), (8, 0));
        // Body: two biases, then END_OF_STREAM just before the header.
        assert_eq!(hdr, 8 + 8 + 2);
        assert_eq!(&f[16..18], &293u16.to_be_bytes());
        // Header: version, start, two strings, two arrays of 3.
        assert_eq!(footer, hdr + 3 + 8 + (2 + 5) + (2 + 2) + 2 * (4 + 12));
        // Footer: magic and 2 × 291 counts; keyval count; then the labels.
        assert_eq!(perflbl, footer + 8 + 2 * 291 * 4 + 4);
        assert_eq!(sizelbl, perflbl + 4);
        assert_eq!(addrlbl, sizelbl + 4 + 28 * 4);
        assert_eq!(f.len() as u64, addrlbl + 4 + 64);
        let mut r = DumpiFile::from_bytes(f, "t").unwrap();
        assert_eq!(r.version, (1, 1, 0));
        assert_eq!(r.type_sizes, X86_64_TYPE_SIZES);
        assert_eq!(r.next_call().unwrap(), Option::None);
    }

    #[test]
    fn calls_the_encoder_does_not_know_or_that_cannot_be_stored_are_refused_unwritten() {
        let mut w = RankWriter::new(header(), &X86_64_TYPE_SIZES, 0, 1_700_000_000).unwrap();
        let before = w.out.len();
        // MPI_Scan is not encoded; a Wait with two requests is not a Wait; a blocking
        // send with a request is not a Send; statuses on a Barrier have no place.
        let scan = Args::Scan {
            count: 1,
            datatype: 14,
            op: 3,
            comm: 2,
        };
        let two = Args::Wait {
            requests: vec![2, 3],
        };
        let send = Args::Send {
            count: 1,
            datatype: 14,
            dest: 0,
            tag: 0,
            comm: 2,
            request: Some(2),
        };
        let mut barrier = call(52, Args::Barrier { comm: 2 });
        barrier.statuses.push((0, 0, 0, 0, 0));
        for c in [call(67, scan), call(13, two), call(0, send), barrier] {
            let e = w.write(&c).unwrap_err().to_string();
            assert!(e.contains(c.name()), "{e}");
        }
        // A stamp before the bias, or 65,536 s after it.
        for sec in [1_699_999_999, 1_700_065_536] {
            let mut c = call(125, Args::None);
            c.wall = Some((Stamp { sec, nsec: 0 }, Stamp { sec, nsec: 0 }));
            let e = w.write(&c).unwrap_err().to_string();
            assert!(e.contains("65,535 s after the bias"), "{e}");
        }
        assert_eq!(w.out.len(), before, "nothing of a refused call is written");
        let mut h = header();
        h.mesh_size.pop();
        assert!(RankWriter::new(h, &X86_64_TYPE_SIZES, 0, 0).is_err());
        h = header();
        h.version = (0, 6, 8);
        assert!(RankWriter::new(h, &X86_64_TYPE_SIZES, 0, 0).is_err());
    }

    #[test]
    fn the_meta_file_has_sst_dumpis_keys_in_its_order() {
        assert_eq!(
            meta(&header(), 4, "app"),
            "hostname=node0\nnumprocs=4\nusername=me\nstartime=1700000000\nfileprefix=app\n\
             version=1\nsubversion=1\nsubsubversion=0\n"
        );
    }
}

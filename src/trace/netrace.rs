//! Netrace packet traces (`.tra.bz2`; ../shared/traces/FORMATS.md §2): one bzip2 stream
//! holding a 72-byte header, the notes, the region table and then packet records up to
//! the end. Packets are streamed; a region is reached by reading and discarding bytes,
//! as the reference reader does. Sizes are Netrace's fixed bytes per packet type; an
//! unknown type is an error naming its byte offset. Packet times must not decrease and
//! packet ids must increase, as Netrace's own traces have them: a streamed replay then
//! needs no memory of the ids read to know every id unique and every dependant later
//! than its parent.

use crate::foundation::error::{Error, Result};
use crate::trace::{read_full, SizeUnit, TraceMsg, TraceSource};
use std::io::Read;
use std::path::Path;

/// The header's magic number ("UTJH" on disk).
pub const MAGIC: u32 = 0x484A_5455;

/// Bytes of a packet of type `t` (the reference reader's table), None for InvalidCmd.
pub fn packet_bytes(t: u8) -> Option<u64> {
    match t {
        1 | 5 | 13 | 14 | 15 | 25 | 27 | 28 | 29 => Some(8),
        2 | 3 | 4 | 6 | 16 | 30 => Some(72),
        _ => None,
    }
}

/// A region of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Offset of its first packet from the end of the header block.
    pub offset: u64,
    /// Cycles it covers.
    pub cycles: u64,
    /// Packets it holds.
    pub packets: u64,
}

/// The header of a Netrace file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Benchmark name.
    pub name: String,
    /// Nodes.
    pub nodes: u8,
    /// Cycles of the whole trace.
    pub cycles: u64,
    /// Packets of the whole trace.
    pub packets: u64,
    /// The notes.
    pub notes: String,
    /// The regions.
    pub regions: Vec<Region>,
}

/// Streams the packets of a Netrace file.
pub struct NetraceReader {
    r: Box<dyn Read>,
    path: String,
    /// Offset in the decompressed stream.
    at: u64,
    /// The header.
    pub header: Header,
    /// Packets left to read when a region was selected.
    left: Option<u64>,
    /// Packets of the selected region (None: the whole trace).
    region_packets: Option<u64>,
    /// Time and id of the last packet read.
    last: Option<(u64, u64)>,
    /// Offset of the last packet read.
    last_at: u64,
}

impl NetraceReader {
    /// Reads the header of `r` (the decompressed stream of `path`) and, with `region`,
    /// skips to that region's first packet and stops after its last.
    pub fn new(r: impl Read + 'static, path: &Path, region: Option<usize>) -> Result<Self> {
        let mut n = NetraceReader {
            r: Box::new(r),
            path: path.display().to_string(),
            at: 0,
            header: Header {
                name: String::new(),
                nodes: 0,
                cycles: 0,
                packets: 0,
                notes: String::new(),
                regions: Vec::new(),
            },
            left: None,
            region_packets: None,
            last: None,
            last_at: 0,
        };
        let mut h = [0u8; 72];
        n.exact(&mut h, "header")?;
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        if u32_at(0) != MAGIC {
            return Err(n.err(0, "not a Netrace trace (bad magic number)"));
        }
        if f32::from_le_bytes(h[4..8].try_into().expect("4 bytes")) != 1.0 {
            return Err(n.err(4, "unsupported Netrace version (routemu reads 1.0)"));
        }
        let name_end = h[8..38].iter().position(|&b| b == 0).unwrap_or(30);
        let notes_len = u32_at(56) as usize;
        let nregions = u32_at(60) as usize;
        if nregions > 100 || notes_len > 1 << 20 {
            return Err(n.err(56, "implausible notes length or region count"));
        }
        let mut notes = vec![0u8; notes_len];
        n.exact(&mut notes, "notes")?;
        let mut regions = Vec::with_capacity(nregions);
        for _ in 0..nregions {
            let mut b = [0u8; 24];
            n.exact(&mut b, "region table")?;
            let g = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
            regions.push(Region {
                offset: g(0),
                cycles: g(8),
                packets: g(16),
            });
        }
        n.header = Header {
            name: String::from_utf8_lossy(&h[8..8 + name_end]).into_owned(),
            nodes: h[38],
            cycles: u64_at(40),
            packets: u64_at(48),
            notes: String::from_utf8_lossy(&notes)
                .trim_end_matches('\0')
                .to_string(),
            regions,
        };
        if let Some(k) = region {
            let reg = *n.header.regions.get(k).ok_or_else(|| {
                Error::Trace(format!(
                    "{}: region {k} does not exist (the trace has {})",
                    n.path,
                    n.header.regions.len()
                ))
            })?;
            let start = n.at;
            let skipped = std::io::copy(&mut (&mut n.r).take(reg.offset), &mut std::io::sink())
                .map_err(|e| n.err(start, &e.to_string()))?;
            n.at += skipped;
            if skipped < reg.offset {
                return Err(n.err(n.at, "truncated before the selected region"));
            }
            n.left = Some(reg.packets);
            n.region_packets = Some(reg.packets);
        }
        Ok(n)
    }

    fn err(&self, offset: u64, what: &str) -> Error {
        Error::Trace(format!(
            "{}: byte {offset} (decompressed): {what}",
            self.path
        ))
    }

    fn exact(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        let at = self.at;
        match read_full(&mut self.r, buf) {
            Ok(true) => {
                self.at += buf.len() as u64;
                Ok(())
            }
            Ok(false) => Err(self.err(at, &format!("the file ends before its {what}"))),
            Err(e) => Err(self.err(at, &format!("{what}: {e}"))),
        }
    }
}

impl TraceSource for NetraceReader {
    fn declared_messages(&self) -> Option<u64> {
        // A header written without its packet count says 0.
        self.region_packets
            .or((self.header.packets > 0).then_some(self.header.packets))
    }
    fn next_msg(&mut self) -> Result<Option<TraceMsg>> {
        if self.left == Some(0) {
            return Ok(None);
        }
        let at = self.at;
        let mut p = [0u8; 21];
        match read_full(&mut self.r, &mut p) {
            Ok(false) => return Ok(None),
            Ok(true) => self.at += 21,
            Err(e) => return Err(self.err(at, &format!("packet record: {e}"))),
        }
        let kind = p[16];
        let size = packet_bytes(kind)
            .ok_or_else(|| self.err(at + 16, &format!("unknown packet type {kind}")))?;
        let mut deps = vec![0u8; 4 * p[20] as usize];
        self.exact(&mut deps, "dependency list")?;
        let id = u32::from_le_bytes(p[8..12].try_into().expect("4 bytes")) as u64;
        let children: Vec<u64> = deps
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")) as u64)
            .collect();
        if let Some(&d) = children.iter().find(|&&d| d <= id) {
            return Err(self.err(
                at,
                &format!("packet {id} lists {d} as a dependant; dependants come later"),
            ));
        }
        let time = u64::from_le_bytes(p[0..8].try_into().expect("8 bytes"));
        if let Some((t, i)) = self.last {
            if time < t {
                return Err(self.err(
                    at,
                    &format!("packet {id}: time goes backwards ({time} after {t})"),
                ));
            }
            if id <= i {
                return Err(self.err(
                    at + 8,
                    &format!(
                        "packet id {id} after {i}: ids must increase from packet to packet \
                         (each is unique, and a dependant comes after its parent)"
                    ),
                ));
            }
        }
        self.last = Some((time, id));
        self.last_at = at;
        if let Some(l) = &mut self.left {
            *l -= 1;
        }
        Ok(Some(TraceMsg {
            id,
            time,
            src: p[17] as u32,
            dst: p[18] as u32,
            size,
            children,
            lag_from: None,
            successor: None,
        }))
    }

    fn unit(&self) -> SizeUnit {
        SizeUnit::Bytes
    }

    fn place(&self) -> String {
        format!("{}: byte {} (decompressed)", self.path, self.last_at)
    }

    fn ids_increase(&self) -> bool {
        true
    }

    fn partial(&self) -> bool {
        self.region_packets.is_some()
    }

    fn endpoints(&self) -> Option<u32> {
        Some(self.header.nodes as u32)
    }

    fn describe(&self) -> String {
        format!(
            "{} (Netrace \"{}\", {} nodes, {} packets, {} cycles)",
            self.path, self.header.name, self.header.nodes, self.header.packets, self.header.cycles
        )
    }
}

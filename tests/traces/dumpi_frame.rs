//! The frame of an SST-DUMPI rank file as sst-dumpi lays it out, for the tests that
//! write their own records (dumpi.rs, dumpi_replay.rs): magic, header, the datatype size
//! table, the body (clock biases, the records, the end label) and the section index.
//! The records are each test's own; the frame is one, so the two writers cannot drift.

/// The magic number, at the start of the file and again before the index.
const MAGIC: &[u8; 8] = b"\xff\xaa\xddDUMPI";

/// Datatypes in the size table.
pub const TYPES: usize = 28;

/// Where the body starts: magic, header (version, start time, empty hostname, username
/// and mesh coordinates), size table.
pub fn body_start() -> usize {
    8 + (3 + 8 + 2 + 2 + 4) + (4 + 4 * TYPES)
}

/// A rank file of format `version` whose datatype `t` is `size_of(t)` bytes, holding
/// `records` (each a label, a mask and its fields) after zero clock biases.
pub fn rank_file(version: [u8; 3], size_of: impl Fn(usize) -> u32, records: &[u8]) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    let header = b.len();
    b.extend(version);
    b.extend(0u64.to_be_bytes()); // start time
    b.extend([0, 0, 0, 0, 0, 0, 0, 0]); // hostname, username, meshcrd
    let sizes = b.len();
    b.extend((TYPES as u32).to_be_bytes());
    for t in 0..TYPES {
        b.extend(size_of(t).to_be_bytes());
    }
    let body = b.len();
    assert_eq!(body, body_start());
    b.extend([0u8; 8]); // cpu and wall biases
    b.extend(records);
    b.extend(293u16.to_be_bytes()); // the end label
    b.extend(MAGIC);
    for s in [sizes, 0, 0, header, body, 0, 0] {
        b.extend((s as u64).to_be_bytes());
    }
    b
}

//! The trace readers reproduce their oracles exactly and refuse damaged input with the
//! file and the place.

use routemu::trace::netrace::NetraceReader;
use routemu::trace::{open, SizeUnit, TraceMsg, TraceSource};
use std::path::{Path, PathBuf};

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

fn all(src: &mut dyn TraceSource) -> Vec<TraceMsg> {
    let mut v = Vec::new();
    while let Some(m) = src.next_msg().unwrap() {
        v.push(m);
    }
    v
}

#[test]
fn netrace_packets_equal_the_independent_decodes() {
    for name in ["shrtex", "example"] {
        let mut src = open(&traces().join(format!("netrace/{name}.tra.bz2"))).unwrap();
        assert_eq!((src.unit(), src.endpoints()), (SizeUnit::Bytes, Some(64)));
        let got = all(src.as_mut());
        let oracle = std::fs::read_to_string(
            traces().join(format!("netrace/decoded/netrace_{name}_decoded.tsv")),
        )
        .unwrap();
        let rows: Vec<Vec<&str>> = oracle
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("id"))
            .map(|l| l.split('\t').collect())
            .collect();
        assert_eq!(got.len(), rows.len(), "{name}");
        for (m, r) in got.iter().zip(&rows) {
            let deps: Vec<u64> = match r.get(10).copied().unwrap_or("") {
                "" | "-" => vec![],
                d => d.split(',').map(|x| x.parse().unwrap()).collect(),
            };
            assert_eq!(
                (m.id, m.time, m.src, m.dst, m.size, &m.children),
                (
                    r[0].parse().unwrap(),
                    r[1].parse().unwrap(),
                    r[2].parse().unwrap(),
                    r[3].parse().unwrap(),
                    r[6].parse().unwrap(),
                    &deps
                ),
                "{name} packet {}",
                r[0]
            );
        }
    }
}

#[test]
fn netrace_header_and_regions_are_read() {
    let path = traces().join("netrace/multiregion.tra.bz2");
    let r = routemu::trace::open_maybe_compressed(&path).unwrap();
    let n = NetraceReader::new(r, &path, Some(1)).unwrap();
    assert_eq!(n.header.name, "multiregion-test");
    assert_eq!(n.header.regions.len(), 5);
    let mut n = n;
    let first = n.next_msg().unwrap().unwrap();
    assert_eq!(first.id, 9173, "region 1 starts at packet 9173");
    let mut count = 1;
    while n.next_msg().unwrap().is_some() {
        count += 1;
    }
    assert_eq!(count, 14329 - 9173);
}

#[test]
fn the_stencil_tables_are_valid_text_traces() {
    let mut src = open(&traces().join("stencil4d/stencil4d_32ranks_p2p.tsv")).unwrap();
    let v = all(src.as_mut());
    assert_eq!(v.len(), 512);
    assert!(v
        .iter()
        .all(|m| m.size == 131072 && m.src < 32 && m.dst < 32));
    assert!(v.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn compressed_text_traces_read_like_plain_ones() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let text = "time src dst flits\n0 0 1 4\n3 1 0 2\n";
    let gz = dir.path().join("t.gz");
    let mut e =
        flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), Default::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap();
    let bz = dir.path().join("t.bz2");
    let mut e =
        bzip2::write::BzEncoder::new(std::fs::File::create(&bz).unwrap(), Default::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap();
    for p in [gz, bz] {
        let v = all(open(&p).unwrap().as_mut());
        assert_eq!(v.len(), 2);
        assert_eq!((v[1].time, v[1].src, v[1].size), (3, 1, 2));
    }
}

#[test]
fn damaged_netrace_files_are_errors_with_the_byte_offset() {
    use std::io::Read;
    let mut raw = Vec::new();
    bzip2::read::BzDecoder::new(
        std::fs::File::open(traces().join("netrace/shrtex.tra.bz2")).unwrap(),
    )
    .read_to_end(&mut raw)
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let read = |bytes: Vec<u8>| -> String {
        let p = dir.path().join("x.tra");
        std::fs::write(&p, bytes).unwrap();
        let mut out = String::new();
        match open(&p) {
            Err(e) => out = e.to_string(),
            Ok(mut s) => loop {
                match s.next_msg() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        out = e.to_string();
                        break;
                    }
                }
            },
        }
        out
    };
    // Truncated in the middle of the last packet.
    let e = read(raw[..raw.len() - 3].to_vec());
    assert!(e.contains("x.tra: byte") && e.contains("truncated"), "{e}");
    // An unknown packet type in the first packet (header block is 127 bytes).
    let mut bad = raw.clone();
    bad[127 + 16] = 7;
    let e = read(bad);
    assert!(
        e.contains("byte 143") && e.contains("unknown packet type 7"),
        "{e}"
    );
}

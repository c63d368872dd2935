//! The trace readers reproduce their oracles exactly and refuse damaged input with the
//! file and the place.

use routemu::experiments::traces::open;
use routemu::trace::netrace::NetraceReader;
use routemu::trace::{SizeUnit, TraceMsg, TraceSource};
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
fn traces_that_declare_their_size_declare_what_they_yield() {
    // Whole Netrace files: the header's count.
    for name in ["shrtex", "example"] {
        let mut src = open(&traces().join(format!("netrace/{name}.tra.bz2"))).unwrap();
        let declared = src.declared_messages();
        assert_eq!(declared, Some(all(src.as_mut()).len() as u64), "{name}");
    }
    // A region: its own count, not the file's.
    let path = traces().join("netrace/multiregion.tra.bz2");
    let r = routemu::trace::open_maybe_compressed(&path).unwrap();
    let mut n = NetraceReader::new(r, &path, Some(1)).unwrap();
    assert_eq!(n.declared_messages(), Some(14329 - 9173));
    assert_eq!(all(&mut n).len() as u64, 14329 - 9173);
    // A text trace is only known once read.
    let mut t = open(&traces().join("stencil4d/stencil4d_32ranks_p2p.tsv")).unwrap();
    assert_eq!(t.declared_messages(), None);
    assert!(!all(t.as_mut()).is_empty());
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

mod dumpi {
    use super::traces;
    use routemu::trace::dumpi::{call_name, Args, DumpiFile};

    /// The lines Sandia's dumpi2ascii prints for a call (type and op names left out:
    /// each expected line is a prefix of the printed one).
    fn render(c: &routemu::trace::dumpi::Call) -> Vec<String> {
        let name = call_name(c.label).unwrap();
        let (cin, cout) = c.cpu.unwrap();
        let (win, wout) = c.wall.unwrap();
        let t = c.thread.unwrap();
        let stamp = |w: routemu::trace::dumpi::Stamp| format!("{}.{:09}", w.sec, w.nsec);
        let mut v = vec![format!(
            "{name} entering at walltime {}, cputime {} seconds in thread {t}.",
            stamp(win),
            stamp(cin)
        )];
        let status = |v: &mut Vec<String>| {
            v.push(match c.statuses.first() {
                None => "MPI_Status status=<IGNORED>".into(),
                Some((b, s, ca, e, tg)) => format!(
                    "MPI_Status status=[{{bytes={b}, cancelled={ca}, source={s}, tag={tg}, error={e}}}]"
                ),
            })
        };
        match &c.args {
            Args::Init { argv } => {
                v.push(format!("int argc={}", argv.len()));
                v.push(format!(
                    "string argv[{}]=[\"{}\"]",
                    argv.len(),
                    argv.join("\", \"")
                ));
            }
            Args::CommQuery { comm, value } => {
                v.push(format!("MPI_Comm comm={comm}"));
                v.push(format!(
                    "int {}={value}",
                    if c.label == 82 { "rank" } else { "size" }
                ));
            }
            Args::Barrier { comm } => v.push(format!("MPI_Comm comm={comm}")),
            // A send and a receive print alike but for the peer's name; a blocking
            // receive prints its status too.
            Args::Send {
                count,
                datatype,
                dest: peer,
                tag,
                comm,
                request,
            }
            | Args::Recv {
                count,
                datatype,
                source: peer,
                tag,
                comm,
                request,
            } => {
                let recv = matches!(c.args, Args::Recv { .. });
                v.push(format!("int count={count}"));
                v.push(format!("MPI_Datatype datatype={datatype}"));
                v.push(format!(
                    "int {}={peer}",
                    if recv { "source" } else { "dest" }
                ));
                v.push(format!("int tag={tag}"));
                v.push(format!("MPI_Comm comm={comm}"));
                match request {
                    Some(r) => v.push(format!("MPI_Request request=[{r}]")),
                    None if recv => status(&mut v),
                    None => {}
                }
            }
            Args::Wait { requests } => {
                v.push(format!(
                    "MPI_Request request=[{}]",
                    requests
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                status(&mut v);
            }
            Args::Allreduce {
                count,
                datatype,
                op,
                comm,
            } => {
                v.push(format!("int count={count}"));
                v.push(format!("MPI_Datatype datatype={datatype}"));
                v.push(format!("MPI_Op op={op}"));
                v.push(format!("MPI_Comm comm={comm}"));
            }
            Args::None => {}
            a => panic!("the oracle's rank has no {a:?}"),
        }
        v.push(format!(
            "{name} returning at walltime {}, cputime {} seconds in thread {t}.",
            stamp(wout),
            stamp(cout)
        ));
        v
    }

    #[test]
    fn every_record_of_the_ring_trace_matches_sandias_ascii_dump() {
        let mut f = DumpiFile::open(&traces().join("dumpi-sst/testtrace-0000.bin")).unwrap();
        assert_eq!(f.version, (1, 0, 0));
        assert_eq!(f.type_sizes[9], 4, "MPI_INT");
        let mut mine = Vec::new();
        while let Some(c) = f.next_call().unwrap() {
            mine.extend(render(&c));
        }
        let ascii =
            std::fs::read_to_string(traces().join("dumpi-sst/testtrace-0000.dumpi2ascii.txt"))
                .unwrap();
        let theirs: Vec<&str> = ascii
            .lines()
            .skip_while(|l| !l.starts_with("MPI_Init entering"))
            .take_while(|l| !l.starts_with("Total keyvals"))
            .collect();
        assert_eq!(mine.len(), theirs.len(), "{mine:#?}");
        for (m, t) in mine.iter().zip(&theirs) {
            assert!(t.starts_with(m.as_str()), "ours `{m}` vs Sandia's `{t}`");
        }
    }

    #[test]
    fn the_other_ring_ranks_decode_and_a_file_that_is_not_dumpi_is_refused() {
        for r in 1..4 {
            let mut f =
                DumpiFile::open(&traces().join(format!("dumpi-sst/testtrace-000{r}.bin"))).unwrap();
            let mut sends = 0;
            while let Some(c) = f.next_call().unwrap() {
                sends += matches!(c.args, Args::Send { .. }) as u32;
            }
            assert_eq!(sends, 1, "rank {r}: one Isend in the ring");
        }
        // (testbgp, with its communicator calls, and undecodable labels: tests/traces/dumpi.rs.)
        let (_dir, p) = crate::common::temp_file("x.bin", b"not a dumpi file at all, no");
        assert!(DumpiFile::open(&p)
            .unwrap_err()
            .to_string()
            .contains("bad magic"));
    }
}

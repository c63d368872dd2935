//! Opening a trace of any format, chosen by content: Netrace (a bzip2 stream starting
//! with its magic), DUMPI (a `.meta` file or a rank file with DUMPI's magic: read through
//! MPI semantics, `mpi_semantics::matching`) or routemu's text format. The readers are
//! `trace`'s; what a replay does with the messages is `experiments::replay`'s.

use crate::foundation::error::{Error, Result};
use crate::mpi_semantics::collectives::{Choices, Tuning};
use crate::mpi_semantics::matching::{Collectives, MpiOptions, MpiTrace};
use crate::trace::netrace::NetraceReader;
use crate::trace::text::TextReader;
use crate::trace::{dumpi, netrace, open_maybe_compressed, TraceSource};
use std::io::BufRead;
use std::path::Path;

/// How [`open_with`] reads a trace.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenOptions {
    /// Netrace: only this region (0-based).
    pub region: Option<usize>,
    /// DUMPI: what to do with collectives (expand, skip, refuse).
    pub collectives: Collectives,
    /// DUMPI: the algorithm of each kind of collective (`Auto`: MPICH's choice).
    pub collective_algorithms: Choices,
    /// DUMPI: the thresholds MPICH's choice is made by.
    pub mpich_tuning: Tuning,
}

/// Opens a trace, choosing the reader by content: Netrace (bzip2 stream starting with
/// its magic), DUMPI (a `.meta` file or a rank file with DUMPI's magic) or routemu's
/// text format.
pub fn open(path: &Path) -> Result<Box<dyn TraceSource>> {
    open_with(path, &OpenOptions::default())
}

/// As [`open`], with options; an option that does not apply to the format found is
/// refused.
pub fn open_with(path: &Path, o: &OpenOptions) -> Result<Box<dyn TraceSource>> {
    let is_meta = path.extension().is_some_and(|e| e == "meta");
    let mut r = open_maybe_compressed(path)?;
    let head = r
        .fill_buf()
        .map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?
        .to_vec();
    let netrace = head.starts_with(&netrace::MAGIC.to_le_bytes());
    if o.region.is_some() && !netrace {
        return Err(Error::Arg(format!(
            "--region: {} is not a Netrace trace (regions are Netrace's)",
            path.display()
        )));
    }
    if is_meta || head.starts_with(&dumpi::MAGIC) {
        let m = MpiOptions {
            collectives: o.collectives,
            algorithms: o.collective_algorithms,
            tuning: o.mpich_tuning,
        };
        Ok(Box::new(MpiTrace::load(path, &m)?))
    } else if netrace {
        Ok(Box::new(NetraceReader::new(r, path, o.region)?))
    } else {
        Ok(Box::new(TextReader::new(r, path)?))
    }
}

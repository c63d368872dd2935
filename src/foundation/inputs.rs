//! The files this process reads as inputs (hardware descriptions, host graphs, traces, a
//! CSV to plot), remembered by identity — device and inode, after following links — as
//! they are opened, so that no output can be written over one of them
//! (`cli::output::check_outputs`, `cli::output::Output::create`). It owns the record
//! and the reading functions that keep it; what counts as an output, and the refusal,
//! are the command line's.
//!
//! A file is recorded when it is opened, not when its name is seen, so that the record
//! holds exactly the files that were read under whatever name (a link, `./a.ron`, a
//! hard link). [`note`] records a file that will be read later (a DUMPI trace's rank
//! files) so that the outputs can be checked before the run.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file that was (or will be) read as an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The name it was opened by.
    pub path: PathBuf,
    /// Its identity: (device, inode) on Unix.
    id: FileId,
}

/// What makes two names the same file: the device and inode on Unix, the canonical
/// path elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileId(#[cfg(unix)] (u64, u64), #[cfg(not(unix))] PathBuf);

impl FileId {
    /// The identity of an open or stat-ed file.
    #[cfg(unix)]
    pub fn of(m: &Metadata, _path: &Path) -> Self {
        use std::os::unix::fs::MetadataExt;
        FileId((m.dev(), m.ino()))
    }

    /// The identity of an open or stat-ed file.
    #[cfg(not(unix))]
    pub fn of(_m: &Metadata, path: &Path) -> Self {
        FileId(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
    }

    /// The identity of the file `path` names (links followed), if it exists.
    pub fn of_path(path: &Path) -> Option<Self> {
        std::fs::metadata(path).ok().map(|m| FileId::of(&m, path))
    }
}

static INPUTS: Mutex<Vec<Input>> = Mutex::new(Vec::new());

fn record(path: &Path, id: FileId) {
    let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    if !inputs.iter().any(|i| i.id == id) {
        inputs.push(Input {
            path: path.to_path_buf(),
            id,
        });
    }
}

/// Opens `path` for reading and records it as an input.
pub fn open(path: &Path) -> io::Result<File> {
    // A FIFO blocks here until a writer opens it.
    let f = crate::foundation::blocking::section(|| File::open(path))?;
    record(path, FileId::of(&f.metadata()?, path));
    Ok(f)
}

/// Opens `path` for reading as [`open`] does; reading a FIFO, a device or a socket,
/// which may wait for the other end for ever, is marked as a wait on the outside world
/// (`foundation::blocking`), so that a signal there ends the process at once.
pub fn open_reader(path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
    let f = open(path)?;
    Ok(if f.metadata()?.is_file() {
        Box::new(f)
    } else {
        Box::new(Waiting(f))
    })
}

/// A reader whose every read is a wait on the outside world.
struct Waiting<R>(R);

impl<R: io::Read> io::Read for Waiting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        crate::foundation::blocking::section(|| self.0.read(buf))
    }
}

/// Reads `path` whole as text, recording it as an input (see [`open_reader`]).
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let mut s = String::new();
    open_reader(path)?.read_to_string(&mut s)?;
    Ok(s)
}

/// Reads `path` whole, recording it as an input (see [`open_reader`]).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut v = Vec::new();
    open_reader(path)?.read_to_end(&mut v)?;
    Ok(v)
}

/// Records `path` as an input that will be read later, if it exists (one that does not
/// will fail when it is opened, which says so).
pub fn note(path: &Path) {
    if let Some(id) = FileId::of_path(path) {
        record(path, id);
    }
}

/// Every input recorded so far, in the order first opened.
pub fn all() -> Vec<PathBuf> {
    let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    inputs.iter().map(|i| i.path.clone()).collect()
}

/// The input that `id` is, if it is one.
pub fn find(id: &FileId) -> Option<PathBuf> {
    let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    inputs.iter().find(|i| i.id == *id).map(|i| i.path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_read_as_input_is_found_under_another_name() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        std::fs::write(&a, "x").unwrap();
        assert_eq!(read_to_string(&a).unwrap(), "x");
        let other = dir.path().join(".").join("a.txt");
        assert_eq!(find(&FileId::of_path(&other).unwrap()), Some(a.clone()));
        #[cfg(unix)]
        {
            let link = dir.path().join("l.txt");
            std::os::unix::fs::symlink(&a, &link).unwrap();
            assert_eq!(find(&FileId::of_path(&link).unwrap()), Some(a));
        }
        let b = dir.path().join("b.txt");
        std::fs::write(&b, "y").unwrap();
        assert_eq!(find(&FileId::of_path(&b).unwrap()), None);
    }
}

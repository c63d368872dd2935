//! Writing results: to a temporary file beside the target, then renamed, so a failed or
//! interrupted run never leaves a half-written file; `-` means standard output; devices
//! and FIFOs are written in place and symbolic links followed (docs/cli.md, "Output
//! files"). The checks of output flags before a run ([`check_outputs`]) and the printing
//! of summaries without panicking on a failing standard output ([`print()`]) are here too.
//! Every JSON document carries its provenance ([`Provenance`]): the routemu version and
//! commit that wrote it and the command line, and `partial` when a signal cut it short.

use crate::cli::interrupt::TempGuard;
use crate::foundation::error::{Error, Result};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The build that produced a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Build {
    /// The crate version.
    pub version: &'static str,
    /// The git commit of the sources it was built from (`-dirty` when tracked files
    /// differed from it; `unknown` outside a git checkout). Set by `build.rs`.
    pub commit: &'static str,
}

/// This binary's build.
pub fn build() -> Build {
    Build {
        version: env!("CARGO_PKG_VERSION"),
        commit: env!("ROUTEMU_COMMIT"),
    }
}

/// The command line of this process, each argument quoted for a POSIX shell when it
/// needs to be, so that it can be pasted back.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// A JSON document: who wrote it and how, then the body's own fields.
#[derive(Debug, Serialize)]
pub struct Provenance<'a, T: Serialize> {
    /// The build that wrote it.
    pub routemu: Build,
    /// The command line that produced it.
    pub command: String,
    /// Present, and true, when a signal stopped the command before it finished: the
    /// document holds what was measured until then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// The document itself (its fields follow at the top level).
    #[serde(flatten)]
    pub body: &'a T,
}

/// `body` as a pretty-printed JSON document with its provenance, ending in a newline.
pub fn json_document<T: Serialize>(body: &T) -> String {
    let doc = Provenance {
        routemu: build(),
        command: command_line(),
        partial: crate::engine::interrupt::requested(),
        body,
    };
    let mut text = serde_json::to_string_pretty(&doc).expect("documents serialise");
    text.push('\n');
    text
}

/// Writes `body` as a JSON document with its provenance to `dest` (see
/// [`write_output`]).
pub fn write_json<T: Serialize>(dest: &str, body: &T) -> Result<()> {
    write_output(dest, &json_document(body))
}

/// Writes `text` to `dest` (see [`write_bytes`]).
pub fn write_output(dest: &str, text: &str) -> Result<()> {
    write_bytes(dest, text.as_bytes())
}

/// Writes the CSV table `text` to `dest` (see [`write_bytes`]), ending with the line
/// [`partial_line`] when a signal cut the command short.
pub fn write_csv(dest: &str, text: &str) -> Result<()> {
    let mut out = Output::create(dest)?.csv();
    out.write_all(text.as_bytes())?;
    out.finish()
}

/// What a figure's title ends with when a signal cut the command short:
/// ` (partial: stopped by SIGINT)`; empty otherwise.
pub fn partial_title() -> String {
    crate::engine::interrupt::signal().map_or(String::new(), |sig| {
        format!(
            " (partial: stopped by {})",
            crate::cli::interrupt::name(sig)
        )
    })
}

/// The last line of a CSV written after a signal asked the command to stop:
/// `# partial: stopped by SIGINT; …` (a comment, which `routemu plot` and most CSV
/// readers skip). None when no signal came.
pub fn partial_line() -> Option<String> {
    crate::engine::interrupt::signal().map(|sig| {
        format!(
            "# partial: stopped by {}; the rows hold what was measured until then\n",
            crate::cli::interrupt::name(sig)
        )
    })
}

/// Writes `bytes` to `dest`: `-` is standard output; a regular file (or a new one) is
/// replaced atomically; a device, FIFO or socket is written in place; a symbolic link
/// is followed and the file it leads to written by these rules (the link stays).
pub fn write_bytes(dest: &str, bytes: &[u8]) -> Result<()> {
    let mut out = Output::create(dest)?;
    out.write_all(bytes)?;
    out.finish()
}

/// Whether a progress bar is drawn: standard error is a terminal, and this process
/// writes outputs (rank 0 of an MPI run, or a run on one process).
pub fn progress_wanted() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stderr())
        && crate::engine::transport::writes_outputs()
}

/// Writes `text` to standard output (a human summary): an error names `<stdout>`
/// instead of panicking as `print!` does. Nothing on the ranks of an MPI run but rank 0.
pub fn print(text: &str) -> Result<()> {
    if !crate::engine::transport::writes_outputs() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(stdout_error)
}

/// Writes `text` to standard error, ignoring failures (nowhere left to report them).
/// Nothing on the ranks of an MPI run but rank 0 (every rank would say the same).
pub fn eprint(text: &str) {
    if !crate::engine::transport::writes_outputs() {
        return;
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// `print!` for summaries that a failing standard output must not turn into a panic:
/// evaluates to a [`Result`] (see [`print()`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::cli::output::print("\n") };
    ($($arg:tt)*) => { $crate::cli::output::print(&format!("{}\n", format_args!($($arg)*))) };
}

fn stdout_error(source: std::io::Error) -> Error {
    Error::Io {
        path: STDOUT.into(),
        source,
    }
}

/// How errors name standard output.
pub const STDOUT: &str = "<stdout>";

/// Whether `e` is a write to standard output that found the pipe closed (`| head`):
/// the reader wanted no more, which is no error worth a message.
pub fn is_broken_stdout(e: &Error) -> bool {
    matches!(e, Error::Io { path, source }
        if path == STDOUT && source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// An output being written: to standard output, in place (devices, FIFOs), or to a
/// temporary file beside the target that [`Output::finish`] renames over it. Dropped
/// unfinished, the temporary file is removed and the target left as it was.
pub struct Output {
    dest: String,
    sink: Sink,
    /// A CSV: ends with a `# partial` comment line when a signal cut the command short.
    csv: bool,
}

enum Sink {
    /// The ranks of an MPI run but rank 0 write nothing.
    Discard,
    Stdout(std::io::BufWriter<std::io::Stdout>),
    InPlace(std::io::BufWriter<std::fs::File>),
    Temp {
        w: std::io::BufWriter<tempfile::NamedTempFile>,
        target: PathBuf,
        _guard: TempGuard,
    },
}

impl Output {
    /// Opens `dest` for writing by the rules of [`write_bytes`]. A temporary file is
    /// created securely (an unpredictable name, never an existing file or link) in the
    /// target's directory, with the mode a plain create would give: the target's own if
    /// it exists, else 0666 less the umask.
    /// On the ranks of an MPI run but rank 0, an output that discards what it is given.
    pub fn create(dest: &str) -> Result<Self> {
        let io = |source| Error::Io {
            path: dest.to_string(),
            source,
        };
        if !crate::engine::transport::writes_outputs() {
            return Ok(Output {
                dest: dest.into(),
                sink: Sink::Discard,
                csv: false,
            });
        }
        crate::cli::interrupt::asked(dest);
        if dest == "-" {
            return Ok(Output {
                dest: dest.into(),
                sink: Sink::Stdout(std::io::BufWriter::new(std::io::stdout())),
                csv: false,
            });
        }
        let target = resolve_links(Path::new(dest)).map_err(io)?;
        let existing = match std::fs::metadata(&target) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        if let Some(m) = &existing {
            let id = crate::foundation::inputs::FileId::of(m, &target);
            if let Some(input) = crate::foundation::inputs::find(&id) {
                // Checked before the run too (`check_outputs`); an input opened after
                // that check is caught here, before anything is written.
                return Err(Error::Arg(format!(
                    "{dest}: is the input {}: an output never replaces a file the command reads",
                    input.display()
                )));
            }
            if m.is_dir() {
                return Err(Error::Arg(format!("{dest}: is a directory, not a file")));
            }
            if !m.is_file() {
                // A device, FIFO or socket: renaming over it would destroy it; write to it.
                // A FIFO blocks here until a reader opens it.
                let f = crate::foundation::blocking::section(|| {
                    std::fs::OpenOptions::new().write(true).open(&target)
                })
                .map_err(io)?;
                return Ok(Output {
                    dest: dest.into(),
                    sink: Sink::InPlace(std::io::BufWriter::new(f)),
                    csv: false,
                });
            }
        }
        let name = target
            .file_name()
            .ok_or_else(|| Error::Arg(format!("{dest}: not a file name")))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let (tmp, guard) = TempGuard::create(|| {
            let mut b = tempfile::Builder::new();
            let prefix = format!(".{}.", name.to_string_lossy());
            b.prefix(&prefix).suffix(".tmp");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                // Created with 0666 less the umask, as a plain create would be.
                b.permissions(std::fs::Permissions::from_mode(0o666));
            }
            let t = b.tempfile_in(dir)?;
            let p = t.path().to_path_buf();
            Ok((t, p))
        })
        .map_err(io)?;
        if let Some(m) = existing {
            // Replacing a file keeps its mode, as truncating it would.
            std::fs::set_permissions(guard.path(), m.permissions()).map_err(io)?;
        }
        Ok(Output {
            dest: dest.into(),
            sink: Sink::Temp {
                w: std::io::BufWriter::new(tmp),
                target,
                _guard: guard,
            },
            csv: false,
        })
    }

    /// Marks the output as a CSV table: written after a signal cut the command short, it
    /// ends with the comment line [`partial_line`] (docs/cli.md, "Signals").
    pub fn csv(mut self) -> Self {
        self.csv = true;
        self
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let r = match &mut self.sink {
            Sink::Discard => Ok(()),
            Sink::Stdout(w) => w.write_all(bytes),
            Sink::InPlace(w) => w.write_all(bytes),
            Sink::Temp { w, .. } => w.write_all(bytes),
        };
        r.map_err(|e| self.error(e))
    }

    /// Completes the output: flushed, and a temporary file renamed over the target.
    pub fn finish(mut self) -> Result<()> {
        if self.csv {
            if let Some(line) = partial_line() {
                self.write_all(line.as_bytes())?;
            }
        }
        let Output { dest, sink, .. } = self;
        let io = |source| {
            if dest == "-" {
                stdout_error(source)
            } else {
                Error::Io {
                    path: dest.clone(),
                    source,
                }
            }
        };
        use crate::cli::interrupt::complete;
        match sink {
            Sink::Discard => Ok(()),
            Sink::Stdout(mut w) => complete(&dest, || w.flush()).map_err(io),
            Sink::InPlace(mut w) => complete(&dest, || w.flush()).map_err(io),
            Sink::Temp { w, target, _guard } => {
                let tmp = w.into_inner().map_err(|e| io(e.into_error()))?;
                complete(&dest, || tmp.persist(&target).map_err(|e| e.error)).map_err(io)?;
                Ok(())
            }
        }
    }

    fn error(&self, source: std::io::Error) -> Error {
        if self.dest == "-" {
            stdout_error(source)
        } else {
            Error::Io {
                path: self.dest.clone(),
                source,
            }
        }
    }
}

/// `path` with symbolic links in its last component followed (to the file the link
/// leads to, which need not exist yet), so that an output replaces what a link points
/// at, never the link.
pub fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    // As the kernel's limit on nested links.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// [`check_outputs`] for a command whose one output is `--json`.
pub fn check_json_output(json: Option<&str>) -> Result<()> {
    check_outputs(&json.map(|j| ("--json", j)).into_iter().collect::<Vec<_>>())
}

/// Checks, before any work, the output files a command was asked for, as (flag,
/// destination): each can be written (its directory exists and is writable, it is not
/// a directory), none is a file the command reads (`foundation::inputs`: compared by
/// device and inode, links followed), no two name the same file, and at most one goes
/// to standard output (`-`). A long run then never ends on an output it cannot write.
/// On the ranks of an MPI run rank 0 checks (the others write nothing) and a refusal
/// ends every rank (`engine::transport::agree`).
pub fn check_outputs(outputs: &[(&str, &str)]) -> Result<()> {
    // Rank 0 of an MPI run checks, and every rank ends alike when it refuses.
    let local = if crate::engine::transport::writes_outputs() {
        check_outputs_here(outputs)
    } else {
        Ok(())
    };
    crate::engine::transport::agree(local)
}

fn check_outputs_here(outputs: &[(&str, &str)]) -> Result<()> {
    let stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, d)| *d == "-")
        .map(|(f, _)| *f)
        .collect();
    if stdout.len() > 1 {
        return Err(Error::Arg(format!(
            "{} all write to standard output (`-`); give all but one a file",
            stdout.join(", ")
        )));
    }
    let mut seen: Vec<(
        &str,
        &str,
        PathBuf,
        Option<crate::foundation::inputs::FileId>,
    )> = Vec::new();
    for &(_, dest) in outputs {
        crate::cli::interrupt::asked(dest);
    }
    for &(flag, dest) in outputs {
        if dest == "-" {
            continue;
        }
        let bad = |why: String| Error::Arg(format!("{flag} {dest}: {why}"));
        let target = resolve_links(Path::new(dest)).map_err(|e| bad(e.to_string()))?;
        if target.is_dir() {
            return Err(bad("is a directory, not a file".into()));
        }
        let Some(name) = target.file_name() else {
            return Err(bad("not a file name".into()));
        };
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(bad(format!(
                "the directory {} does not exist",
                dir.display()
            )));
        }
        let id = crate::foundation::inputs::FileId::of_path(&target);
        if let Some(input) = id.as_ref().and_then(crate::foundation::inputs::find) {
            return Err(bad(format!(
                "is the input {}: an output never replaces a file the command reads",
                input.display()
            )));
        }
        let special = std::fs::metadata(&target).is_ok_and(|m| !m.is_file());
        if !special && !writable_dir(dir) {
            return Err(bad(format!(
                "the directory {} is not writable",
                dir.display()
            )));
        }
        // The same file under two names (`a.csv`, `./a.csv`, a link to it, a hard link).
        let key = std::fs::canonicalize(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .join(name);
        if let Some((other, _, _, _)) = seen
            .iter()
            .find(|(_, _, k, i)| *k == key || (id.is_some() && *i == id))
        {
            return Err(Error::Arg(format!(
                "{other} and {flag} both name the file {dest}: one would overwrite the other"
            )));
        }
        seen.push((flag, dest, key, id));
    }
    Ok(())
}

/// Whether files can be created in `dir`: tried by creating (and removing) one there,
/// the only test that also holds for read-only mounts and access control lists.
fn writable_dir(dir: &Path) -> bool {
    tempfile::Builder::new()
        .prefix(".routemu-check.")
        .tempfile_in(dir)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_that_a_shell_would_split_are_quoted() {
        assert_eq!(shell_quote("--set"), "--set");
        assert_eq!(shell_quote("topology.k=16"), "topology.k=16");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn a_document_starts_with_its_provenance_and_keeps_the_body_fields() {
        #[derive(Serialize)]
        struct Body {
            answer: u32,
        }
        let v: serde_json::Value =
            serde_json::from_str(&json_document(&Body { answer: 42 })).unwrap();
        assert_eq!(v["routemu"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(!v["routemu"]["commit"].as_str().unwrap().is_empty());
        assert!(v["command"].is_string());
        assert_eq!(v["answer"], 42);
    }
}

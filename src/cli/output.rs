//! Writing results: to a temporary file beside the target, then renamed, so a failed or
//! interrupted run never leaves a half-written file; `-` means standard output. Every
//! JSON document carries its provenance ([`Provenance`]): the routemu version and commit
//! that wrote it and the command line.

use crate::error::{Error, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

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
    /// The document itself (its fields follow at the top level).
    #[serde(flatten)]
    pub body: &'a T,
}

/// `body` as a pretty-printed JSON document with its provenance, ending in a newline.
pub fn json_document<T: Serialize>(body: &T) -> String {
    let doc = Provenance {
        routemu: build(),
        command: command_line(),
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

/// Writes `text` to `dest` atomically (or to stdout for `-`).
pub fn write_output(dest: &str, text: &str) -> Result<()> {
    write_bytes(dest, text.as_bytes())
}

/// Writes `bytes` to `dest` atomically (or to stdout for `-`).
pub fn write_bytes(dest: &str, bytes: &[u8]) -> Result<()> {
    if dest == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|_| out.flush())
            .map_err(|source| Error::Io {
                path: "<stdout>".into(),
                source,
            });
    }
    let path = Path::new(dest);
    let io = |source| Error::Io {
        path: dest.to_string(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::Arg(format!("`{dest}` is not a file name")))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
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

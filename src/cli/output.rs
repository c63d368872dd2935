//! Writing results: to a temporary file beside the target, then renamed, so a failed or
//! interrupted run never leaves a half-written file; `-` means standard output.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

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
